/*
 * The fields of the statistics section as data (include/hurray/schema.h,
 * hurray_statistics_fields; spec: descriptor.md, statistics section): each
 * claimed by its computed_mask bit. A binding builds its statistics class
 * from it; hurray_statistics_equal (stats_equal.c) compares by it.
 */
#include "hurray/descriptor.h"
#include "hurray/schema.h"

#include <stddef.h>

#define STAT(n, k, bit, text)                                                            \
  {.name = #n, .doc = text, .kind = k, .flags = HURRAY_FIELD_MASKED,                     \
   .offset = (uint32_t)offsetof(HurrayStatistics, n),                                   \
   .max = k == HURRAY_VALUE_U8 ? 255u : UINT64_MAX,                                       \
   .mask_offset = (uint32_t)offsetof(HurrayStatistics, computed_mask), .mask_bit = bit}

static const HurrayFieldInfo k_stats[] = {
    STAT(nnz, HURRAY_VALUE_U64, HURRAY_STAT_NNZ_VALID, "Stored non-zero count, or None."),
    STAT(sparsity_ratio, HURRAY_VALUE_F64, HURRAY_STAT_SPARSITY_VALID,
         "Fraction of zero elements in [0, 1], or None."),
    STAT(value_min, HURRAY_VALUE_F64, HURRAY_STAT_VALUE_RANGE_VALID,
         "Smallest value (dequantized), or None."),
    STAT(value_max, HURRAY_VALUE_F64, HURRAY_STAT_VALUE_RANGE_VALID, "Largest value, or None."),
    STAT(value_abs_max, HURRAY_VALUE_F64, HURRAY_STAT_VALUE_RANGE_VALID,
         "Largest magnitude, or None."),
    STAT(value_mean, HURRAY_VALUE_F64, HURRAY_STAT_VALUE_STATS_VALID, "Mean value, or None."),
    STAT(value_stddev, HURRAY_VALUE_F64, HURRAY_STAT_VALUE_STATS_VALID,
         "Standard deviation (>= 0), or None."),
    STAT(nm_n, HURRAY_VALUE_U8, HURRAY_STAT_NM_SPARSITY_VALID,
         "N of N:M structured sparsity, or None."),
    STAT(nm_m, HURRAY_VALUE_U8, HURRAY_STAT_NM_SPARSITY_VALID,
         "M of N:M structured sparsity, or None."),
    STAT(has_nan, HURRAY_VALUE_BOOL, HURRAY_STAT_NAN_INF_VALID,
         "Whether any value is NaN, or None."),
    STAT(has_inf, HURRAY_VALUE_BOOL, HURRAY_STAT_NAN_INF_VALID,
         "Whether any value is infinite, or None."),
};

const HurrayFieldInfo *hurray_statistics_fields(uint32_t *count) {
  *count = (uint32_t)(sizeof k_stats / sizeof k_stats[0]);
  return k_stats;
}
