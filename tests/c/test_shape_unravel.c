/* The index of a row-major position (include/hurray/convert.h,
 * hurray_shape_unravel). */
#include "testutil.h"

static void test_unravel(void **state) {
  (void)state;
  const uint64_t shape[3] = {2, 3, 4};
  uint64_t idx[3] = {9, 9, 9};
  assert_true(hurray_shape_unravel(3, shape, 0, idx));
  assert_int_equal(idx[0], 0);
  assert_int_equal(idx[1], 0);
  assert_int_equal(idx[2], 0);
  assert_true(hurray_shape_unravel(3, shape, 17, idx)); /* 1 * 12 + 1 * 4 + 1 */
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 1);
  assert_int_equal(idx[2], 1);
  assert_true(hurray_shape_unravel(3, shape, 23, idx));
  assert_int_equal(idx[0], 1);
  assert_int_equal(idx[1], 2);
  assert_int_equal(idx[2], 3);
  idx[0] = 7;
  assert_false(hurray_shape_unravel(3, shape, 24, idx)); /* past the count */
  assert_int_equal(idx[0], 7);                         /* nothing written */
  assert_true(hurray_shape_unravel(0, NULL, 0, NULL));  /* a scalar */
  assert_false(hurray_shape_unravel(0, NULL, 1, NULL));
  const uint64_t dynamic[2] = {2, HURRAY_DYNAMIC_DIM};
  assert_false(hurray_shape_unravel(2, dynamic, 0, idx));
  assert_false(hurray_shape_unravel(2, shape, 0, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_unravel)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
