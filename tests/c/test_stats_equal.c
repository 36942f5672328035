/* Equality of statistics sections (include/hurray/descriptor.h,
 * hurray_statistics_equal). */
#include <math.h>
#include <string.h>

#include "testutil.h"

static void test_equal(void **state) {
  (void)state;
  HurrayStatistics a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  assert_true(hurray_statistics_equal(&a, &b));
  a.computed_mask = b.computed_mask = HURRAY_STAT_VALUE_RANGE_VALID;
  a.value_min = b.value_min = NAN; /* a NaN equals itself */
  a.value_max = b.value_max = 2.0;
  assert_true(hurray_statistics_equal(&a, &b));
  a.nnz = 5; /* not claimed: ignored */
  assert_true(hurray_statistics_equal(&a, &b));
  a.value_abs_max = 1.0; /* claimed */
  assert_false(hurray_statistics_equal(&a, &b));
  b.value_abs_max = 1.0;
  b.computed_mask |= HURRAY_STAT_NNZ_VALID;
  assert_false(hurray_statistics_equal(&a, &b)); /* the masks differ */
  a.computed_mask |= HURRAY_STAT_NNZ_VALID;
  assert_false(hurray_statistics_equal(&a, &b)); /* nnz claimed now: 5 vs 0 */
  b.nnz = 5;
  assert_true(hurray_statistics_equal(&a, &b));
  a.computed_mask = b.computed_mask = HURRAY_STAT_NAN_INF_VALID;
  a.has_inf = 1;
  assert_false(hurray_statistics_equal(&a, &b));
  assert_true(hurray_statistics_equal(NULL, NULL));
  assert_false(hurray_statistics_equal(&a, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_equal)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
