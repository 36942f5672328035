/* The element count of a range (include/hurray/convert.h,
 * hurray_arange_length), as NumPy counts. */
#include <math.h>

#include "testutil.h"

static void test_length(void **state) {
  (void)state;
  uint64_t n = 99;
  assert_true(hurray_arange_length(10.0, true, &n)); /* arange(10) */
  assert_int_equal(n, 10);
  assert_true(hurray_arange_length(2.5, true, &n)); /* arange(0, 5, 2) */
  assert_int_equal(n, 3);
  assert_true(hurray_arange_length(-3.0, true, &n)); /* arange(3, 0) */
  assert_int_equal(n, 0);
  assert_true(hurray_arange_length(0.0, false, &n)); /* arange(0) */
  assert_int_equal(n, 0);
  /* a nonzero span underflowing to zero: one element when positive */
  assert_true(hurray_arange_length(0.0, true, &n));
  assert_int_equal(n, 1);
  assert_true(hurray_arange_length(-0.0, true, &n));
  assert_int_equal(n, 0);
  n = 7;
  assert_false(hurray_arange_length(9223372036854775808.0, true, &n)); /* 2**63 */
  assert_false(hurray_arange_length(INFINITY, true, &n));
  assert_false(hurray_arange_length(NAN, true, &n));
  assert_int_equal(n, 7);
  assert_true(hurray_arange_length(9223372036854774784.0, true, &n)); /* below 2**63 */
  assert_int_equal(n, 9223372036854774784ull);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_length)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
