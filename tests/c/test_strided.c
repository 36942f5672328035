/* Strided arrays (include/hurray/convert.h, "strided arrays"): element
 * counts, the span of a strided array, its gather into row-major order
 * (bytes, converted, packed bools), and bool packing. */
#include <string.h>

#include "testutil.h"

static void test_element_count(void **state) {
  (void)state;
  uint64_t n = 7;
  const uint64_t shape[3] = {2, 3, 4};
  assert_true(hurray_shape_element_count(3, shape, &n));
  assert_int_equal(n, 24);
  assert_true(hurray_shape_element_count(0, NULL, &n));
  assert_int_equal(n, 1);
  const uint64_t dynamic[2] = {2, HURRAY_DYNAMIC_DIM};
  assert_false(hurray_shape_element_count(2, dynamic, &n));
  const uint64_t big[2] = {UINT64_MAX / 2, 3};
  assert_false(hurray_shape_element_count(2, big, &n));
  assert_int_equal(n, 1); /* untouched on failure */
}

static void test_strided_span(void **state) {
  (void)state;
  static uint8_t mem[256];
  uintptr_t base = 0;
  uint64_t span = 0, off = 0;
  /* a 3 x 4 view of 4-byte elements read backwards along rows (strides -4, 1) */
  const uint64_t shape[2] = {3, 4};
  const int64_t strides[2] = {-4, 1};
  uintptr_t first = (uintptr_t)&mem[128];
  assert_true(hurray_strided_span(first, 4, 2, shape, strides, &base, &span, &off));
  assert_int_equal(off, 32);
  assert_int_equal(span, 48);
  assert_true(base == first - 32);
  const uint64_t empty[1] = {0};
  assert_false(hurray_strided_span(first, 4, 1, empty, strides, &base, &span, &off));
  const int64_t huge[2] = {INT64_MAX, 1};
  assert_false(hurray_strided_span(first, 4, 2, shape, huge, &base, &span, &off));
  const int64_t down[1] = {-1};
  const uint64_t two[1] = {2};
  assert_false(hurray_strided_span(0, 4, 1, two, down, &base, &span, &off)); /* below 0 */
}

static void test_gather(void **state) {
  (void)state;
  /* a 2 x 3 int16 matrix stored column-major: its transpose read row-major */
  const int16_t col[6] = {1, 4, 2, 5, 3, 6};
  const uint64_t shape[2] = {2, 3};
  const int64_t strides[2] = {2, 4};
  int16_t out[6];
  assert_int_equal(hurray_elements_gather(col, 2, shape, strides, 2, out), HURRAY_OK);
  const int16_t want[6] = {1, 2, 3, 4, 5, 6};
  assert_memory_equal(out, want, sizeof want);
  /* a negative stride, rank 0, no element */
  const int64_t back[1] = {-2};
  const uint64_t three[1] = {3};
  assert_int_equal(hurray_elements_gather(&col[2], 1, three, back, 2, out), HURRAY_OK);
  assert_true(out[0] == 2 && out[1] == 4 && out[2] == 1);
  assert_int_equal(hurray_elements_gather(&col[5], 0, NULL, NULL, 2, out), HURRAY_OK);
  assert_int_equal(out[0], 6);
  const uint64_t none[2] = {0, 3};
  assert_int_equal(hurray_elements_gather(NULL, 2, none, strides, 2, NULL), HURRAY_OK);
  /* errors */
  assert_int_equal(hurray_elements_gather(col, 2, NULL, strides, 2, out), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_elements_gather(NULL, 2, shape, strides, 2, out),
                   HURRAY_ERR_NULL_POINTER);
  const uint64_t dynamic[1] = {HURRAY_DYNAMIC_DIM};
  assert_int_equal(hurray_elements_gather(col, 1, dynamic, strides, 2, out),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_elements_gather(col, HURRAY_MAX_RANK + 1, shape, strides, 2, out),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

static void test_gather_convert(void **state) {
  (void)state;
  /* every other float64 of a row, as float32 */
  const double src[6] = {1.5, -1.0, 2.25, -1.0, 1e300, -1.0};
  const uint64_t shape[1] = {3};
  const int64_t strides[1] = {16};
  float out[3];
  assert_int_equal(hurray_elements_gather_convert(HURRAY_DTYPE_FLOAT64, src, 1, shape, strides,
                                                  HURRAY_DTYPE_FLOAT32, out),
                   HURRAY_OK);
  assert_true(out[0] == 1.5f && out[1] == 2.25f);
  assert_true(out[2] > 3e38f); /* beyond float32: an infinity */
  assert_int_equal(hurray_elements_gather_convert(HURRAY_DTYPE_INT32, src, 1, shape, strides,
                                                  HURRAY_DTYPE_FLOAT32, out),
                   HURRAY_ERR_UNSUPPORTED);
}

static void test_gather_bool(void **state) {
  (void)state;
  /* a 2 x 5 bool array stored column-major (nonzero is true) */
  const uint8_t col[10] = {1, 0, 0, 7, 1, 1, 0, 0, 1, 1};
  const uint64_t shape[2] = {2, 5};
  const int64_t strides[2] = {1, 2};
  uint8_t out[2] = {0xFF, 0xFF};
  assert_int_equal(hurray_elements_gather_bool(col, 2, shape, strides, out), HURRAY_OK);
  /* row 0: 1 0 1 0 1, row 1: 0 1 1 0 1 -> bits 0..9 LSB first */
  assert_int_equal(out[0], 0x15 | (0x16u << 5 & 0xFF));
  assert_int_equal(out[1], 0x16u >> 3);
}

static void test_bool_pack(void **state) {
  (void)state;
  uint8_t bytes[19], packed[3], back[19];
  for (unsigned i = 0; i < 19; i++) bytes[i] = (uint8_t)((i % 3 == 0) ? 0 : i);
  memset(packed, 0xFF, sizeof packed);
  hurray_bool_pack(bytes, packed, 19);
  for (unsigned i = 0; i < 19; i++)
    assert_int_equal((packed[i / 8] >> (i % 8)) & 1, bytes[i] != 0);
  assert_int_equal(packed[2] >> 3, 0); /* padding bits zero */
  hurray_bool_unpack(packed, back, 19);
  for (unsigned i = 0; i < 19; i++) assert_int_equal(back[i], bytes[i] != 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_element_count),  cmocka_unit_test(test_strided_span),
      cmocka_unit_test(test_gather),         cmocka_unit_test(test_gather_convert),
      cmocka_unit_test(test_gather_bool),    cmocka_unit_test(test_bool_pack),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
