/* Whether a quantization scheme composes with a block-paged layout
 * (hurray_block_paged_check_quantization, include/hurray/layout.h). */
#include <string.h>

#include "testutil.h"

static HurrayLayout paged(void) {
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_BLOCK_PAGED;
  l.u.block_paged.page_size = 2;
  l.u.block_paged.num_pages = 4;
  l.u.block_paged.num_seqs = 2;
  l.u.block_paged.layer_index = HURRAY_NO_LAYER_INDEX;
  return l;
}

static HurrayQuantization channel(uint32_t axis, uint32_t scale_index) {
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  q.version = HURRAY_QUANT_SCHEME_VERSION;
  q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  q.u.per_channel.axis = axis;
  q.u.per_channel.scale_buffer_index = scale_index;
  q.u.per_channel.zero_point_buffer_index = HURRAY_QUANT_NO_BUFFER;
  q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  return q;
}

static HurrayQuantization block(uint32_t axis, uint32_t size) {
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  q.version = HURRAY_QUANT_SCHEME_VERSION;
  q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  q.u.per_block.axis = axis;
  q.u.per_block.block_size = size;
  q.u.per_block.scale_buffer_index = 3;
  q.u.per_block.zero_point_buffer_index = HURRAY_QUANT_NO_BUFFER;
  q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F16;
  return q;
}

static void test_composes(void **state) {
  (void)state;
  HurrayLayout l = paged();
  HurrayError e;
  HurrayQuantization t;
  memset(&t, 0, sizeof t);
  t.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  t.version = HURRAY_QUANT_SCHEME_VERSION;
  t.u.per_tensor.scale = 0.5f;
  assert_int_equal(hurray_block_paged_check_quantization(&l, &t, &e), HURRAY_OK);
  HurrayQuantization q = channel(1, 3);
  assert_int_equal(hurray_block_paged_check_quantization(&l, &q, &e), HURRAY_OK);
  q = channel(2, 3);
  assert_int_equal(hurray_block_paged_check_quantization(&l, &q, NULL), HURRAY_OK);
  q = block(0, 2);
  assert_int_equal(hurray_block_paged_check_quantization(&l, &q, &e), HURRAY_OK);
}

static void test_refuses(void **state) {
  (void)state;
  HurrayLayout l = paged();
  HurrayQuantization bad[5] = {channel(0, 3), block(0, 4), block(1, 2), channel(1, 1),
                               channel(1, 5)};
  for (int i = 0; i < 5; i++) {
    HurrayError e;
    hurray_error_clear(&e);
    HurrayStatus rc = hurray_block_paged_check_quantization(&l, &bad[i], &e);
    assert_true(rc != HURRAY_OK);
    assert_int_equal(e.status, rc);
    assert_true(e.offset == HURRAY_NO_OFFSET);
    assert_null(strstr(e.message, "at byte"));
  }
  HurrayQuantization q = channel(1, 3);
  HurrayLayout dense;
  memset(&dense, 0, sizeof dense);
  dense.tag = HURRAY_LAYOUT_ROW_MAJOR;
  assert_int_equal(hurray_block_paged_check_quantization(&dense, &q, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_block_paged_check_quantization(NULL, &q, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_block_paged_check_quantization(&l, NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_composes),
      cmocka_unit_test(test_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
