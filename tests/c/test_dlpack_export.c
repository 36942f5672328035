/* What DLPack can carry (include/hurray/interop.h, hurray_dlpack_export_check). */
#include <string.h>

#include "testutil.h"

static HurrayDescriptorFields dense(uint8_t type_tag, uint64_t *shape, HurrayBufferHandle *h) {
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields_dense(type_tag, 2, shape, HURRAY_LAYOUT_ROW_MAJOR,
                                                  64, 64, h, &f, NULL),
                   HURRAY_OK);
  return f;
}

static void refused(const HurrayDescriptorFields *f, uint32_t minor, const char *field,
                    const char *words) {
  HurrayDLDataType dt;
  HurrayError err;
  hurray_error_clear(&err);
  assert_int_equal(hurray_dlpack_export_check(f, minor, &dt, &err), HURRAY_ERR_UNSUPPORTED);
  assert_string_equal(err.field, field);
  assert_non_null(strstr(err.reason, words));
}

static void test_export_check(void **state) {
  (void)state;
  uint64_t shape[2] = {2, 3};
  HurrayBufferHandle h;
  HurrayDescriptorFields f = dense(HURRAY_DTYPE_FLOAT32, shape, &h);
  HurrayDLDataType dt;
  assert_int_equal(hurray_dlpack_export_check(&f, 1, &dt, NULL), HURRAY_OK);
  assert_int_equal(dt.code, 2); /* kDLFloat */
  assert_int_equal(dt.bits, 32);
  assert_int_equal(dt.lanes, 1);

  f.layout.tag = HURRAY_LAYOUT_TILED;
  refused(&f, 1, "layout.tag", "a tiled tensor has no DLPack representation");
  f.layout.tag = 0xF3;
  refused(&f, 1, "layout.tag", "extension tensor has no DLPack representation");
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;

  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  f.quantization = &q;
  refused(&f, 1, "quantization", "quantized");
  f.quantization = NULL;

  h.sync_mode = HURRAY_SYNC_EVENT;
  refused(&f, 1, "sync_mode", "buffer 0 is in sync mode 'event'");
  h.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;

  shape[1] = HURRAY_DYNAMIC_DIM;
  refused(&f, 1, "shape", "shape[1] is dynamic");
  shape[1] = 3;

  HurrayDescriptorFields g = dense(HURRAY_DTYPE_FLOAT8_E4M3, shape, &h);
  refused(&g, 0, "", "needs DLPack 1.1");
  assert_int_equal(hurray_dlpack_export_check(&g, 1, &dt, NULL), HURRAY_OK);
  g = dense(HURRAY_DTYPE_INT4, shape, &h);
  refused(&g, 1, "", "not in the DLPack type enum");

  g = dense(HURRAY_DTYPE_BOOL, shape, &h);
  assert_int_equal(hurray_dlpack_export_check(&g, 1, &dt, NULL), HURRAY_OK);
  int64_t strides[2] = {3, 1};
  g.layout.tag = HURRAY_LAYOUT_STRIDED;
  g.layout.u.strided.strides = strides;
  refused(&g, 1, "type_tag", "a strided bool tensor cannot be exported");

  assert_int_equal(hurray_dlpack_export_check(NULL, 1, &dt, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_dlpack_export_check(&f, 1, NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_export_check)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
