/* Equality of statistics sections (include/hurray/descriptor.h,
 * hurray_statistics_equal): the same validity bits and, for each claimed
 * field, the same bits, as two descriptors carrying them would encode. */
#include <string.h>

#include "descriptor_impl.h"

#define SAME(f) (memcmp(&a->f, &b->f, sizeof a->f) == 0)

bool hurray_statistics_equal(const HurrayStatistics *a, const HurrayStatistics *b) {
  if (a == NULL || b == NULL) return a == b;
  uint32_t m = a->computed_mask;
  if (m != b->computed_mask) return false;
  if ((m & HURRAY_STAT_NNZ_VALID) && !SAME(nnz)) return false;
  if ((m & HURRAY_STAT_SPARSITY_VALID) && !SAME(sparsity_ratio)) return false;
  if ((m & HURRAY_STAT_VALUE_RANGE_VALID) &&
      !(SAME(value_min) && SAME(value_max) && SAME(value_abs_max)))
    return false;
  if ((m & HURRAY_STAT_VALUE_STATS_VALID) && !(SAME(value_mean) && SAME(value_stddev)))
    return false;
  if ((m & HURRAY_STAT_NM_SPARSITY_VALID) && !(SAME(nm_n) && SAME(nm_m))) return false;
  if ((m & HURRAY_STAT_NAN_INF_VALID) && !(SAME(has_nan) && SAME(has_inf))) return false;
  return true;
}
