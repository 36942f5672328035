/* The statistics section's field table (include/hurray/schema.h,
 * hurray_statistics_fields): names, kinds, places and validity bits. */
#include <stddef.h>
#include <string.h>

#include "hurray/schema.h"
#include "testutil.h"

static void test_table(void **state) {
  (void)state;
  uint32_t n = 0;
  const HurrayFieldInfo *f = hurray_statistics_fields(&n);
  assert_int_equal(n, 11);
  static const struct {
    const char *name;
    HurrayValueKind kind;
    size_t offset;
    uint32_t bit;
  } want[] = {
      {"nnz", HURRAY_VALUE_U64, offsetof(HurrayStatistics, nnz), HURRAY_STAT_NNZ_VALID},
      {"sparsity_ratio", HURRAY_VALUE_F64, offsetof(HurrayStatistics, sparsity_ratio),
       HURRAY_STAT_SPARSITY_VALID},
      {"value_min", HURRAY_VALUE_F64, offsetof(HurrayStatistics, value_min),
       HURRAY_STAT_VALUE_RANGE_VALID},
      {"value_max", HURRAY_VALUE_F64, offsetof(HurrayStatistics, value_max),
       HURRAY_STAT_VALUE_RANGE_VALID},
      {"value_abs_max", HURRAY_VALUE_F64, offsetof(HurrayStatistics, value_abs_max),
       HURRAY_STAT_VALUE_RANGE_VALID},
      {"value_mean", HURRAY_VALUE_F64, offsetof(HurrayStatistics, value_mean),
       HURRAY_STAT_VALUE_STATS_VALID},
      {"value_stddev", HURRAY_VALUE_F64, offsetof(HurrayStatistics, value_stddev),
       HURRAY_STAT_VALUE_STATS_VALID},
      {"nm_n", HURRAY_VALUE_U8, offsetof(HurrayStatistics, nm_n), HURRAY_STAT_NM_SPARSITY_VALID},
      {"nm_m", HURRAY_VALUE_U8, offsetof(HurrayStatistics, nm_m), HURRAY_STAT_NM_SPARSITY_VALID},
      {"has_nan", HURRAY_VALUE_BOOL, offsetof(HurrayStatistics, has_nan),
       HURRAY_STAT_NAN_INF_VALID},
      {"has_inf", HURRAY_VALUE_BOOL, offsetof(HurrayStatistics, has_inf),
       HURRAY_STAT_NAN_INF_VALID},
  };
  uint32_t bits = 0;
  for (uint32_t i = 0; i < n; i++) {
    assert_string_equal(f[i].name, want[i].name);
    assert_non_null(f[i].doc);
    assert_int_equal(f[i].kind, want[i].kind);
    assert_int_equal(f[i].offset, want[i].offset);
    assert_int_equal(f[i].flags, HURRAY_FIELD_MASKED);
    assert_int_equal(f[i].mask_offset, offsetof(HurrayStatistics, computed_mask));
    assert_int_equal(f[i].mask_bit, want[i].bit);
    assert_int_equal(f[i].max, f[i].kind == HURRAY_VALUE_U8 ? 255u : UINT64_MAX);
    bits |= f[i].mask_bit;
  }
  assert_int_equal(bits, HURRAY_STAT_KNOWN); /* every bit claims a field */
}

/* The table is what equality compares: a claimed field that differs makes
 * two sections differ, an unclaimed one does not. */
static void test_equality_follows_the_table(void **state) {
  (void)state;
  uint32_t n = 0;
  const HurrayFieldInfo *f = hurray_statistics_fields(&n);
  for (uint32_t i = 0; i < n; i++) {
    HurrayStatistics a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    ((unsigned char *)&b)[f[i].offset] = 1;
    assert_true(hurray_statistics_equal(&a, &b));
    a.computed_mask = b.computed_mask = f[i].mask_bit;
    assert_false(hurray_statistics_equal(&a, &b));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_table),
                                     cmocka_unit_test(test_equality_follows_the_table)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
