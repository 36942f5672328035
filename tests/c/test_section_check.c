/* The rules a statistics or shard section states about itself
 * (hurray_statistics_check, hurray_shard_check; include/hurray/descriptor.h). */
#include <string.h>

#include "testutil.h"

static void test_statistics(void **state) {
  (void)state;
  HurrayStatistics s;
  memset(&s, 0, sizeof s);
  HurrayError e;
  assert_int_equal(hurray_statistics_check(&s, &e), HURRAY_OK); /* nothing claimed */
  s.computed_mask = HURRAY_STAT_SPARSITY_VALID | HURRAY_STAT_NM_SPARSITY_VALID;
  s.sparsity_ratio = 0.25;
  s.nm_n = 2;
  s.nm_m = 4;
  assert_int_equal(hurray_statistics_check(&s, &e), HURRAY_OK);
  s.sparsity_ratio = 1.5;
  hurray_error_clear(&e);
  assert_int_equal(hurray_statistics_check(&s, &e), HURRAY_ERR_INVALID_STATISTICS);
  assert_true(e.offset == HURRAY_NO_OFFSET);
  assert_null(strstr(e.message, "at byte"));
  assert_non_null(strstr(e.message, "sparsity_ratio"));
  s.sparsity_ratio = 0.5;
  s.nm_n = 5;
  assert_int_equal(hurray_statistics_check(&s, NULL), HURRAY_ERR_INVALID_STATISTICS);
  assert_int_equal(hurray_statistics_check(NULL, &e), HURRAY_ERR_NULL_POINTER);
}

static void test_shard(void **state) {
  (void)state;
  uint64_t parent[2] = {8, 6}, offset[2] = {4, 0};
  HurrayShard sh = {parent, offset};
  HurrayError e;
  assert_int_equal(hurray_shard_check(2, &sh, &e), HURRAY_OK);
  offset[0] = 9; /* outside the parent */
  hurray_error_clear(&e);
  assert_int_equal(hurray_shard_check(2, &sh, &e), HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(e.field, "shard.offset[0]");
  assert_true(e.offset == HURRAY_NO_OFFSET);
  assert_null(strstr(e.message, "at byte"));
  offset[0] = 0;
  parent[1] = HURRAY_DYNAMIC_DIM;
  assert_int_equal(hurray_shard_check(2, &sh, &e), HURRAY_ERR_INVALID_SHARD);
  assert_int_equal(hurray_shard_check(2, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_shard_check(HURRAY_MAX_RANK + 1, &sh, &e), HURRAY_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_statistics),
      cmocka_unit_test(test_shard),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
