/* Equality of statistics sections (include/hurray/descriptor.h,
 * hurray_statistics_equal): the same validity bits and, for each claimed
 * field (hurray_statistics_fields), the same bits, as two descriptors
 * carrying them would encode. */
#include <string.h>

#include "descriptor_impl.h"
#include "hurray/schema.h"

bool hurray_statistics_equal(const HurrayStatistics *a, const HurrayStatistics *b) {
  if (a == NULL || b == NULL) return a == b;
  if (a->computed_mask != b->computed_mask) return false;
  uint32_t n;
  const HurrayFieldInfo *f = hurray_statistics_fields(&n);
  for (uint32_t i = 0; i < n; i++) {
    size_t size = f[i].kind == HURRAY_VALUE_U64 || f[i].kind == HURRAY_VALUE_F64 ? 8u : 1u;
    if ((a->computed_mask & f[i].mask_bit) &&
        memcmp((const char *)a + f[i].offset, (const char *)b + f[i].offset, size) != 0)
      return false;
  }
  return true;
}
