/* The row-major index of an element from its position in the row-major
 * order (include/hurray/convert.h, hurray_shape_unravel): how a rule found at
 * element `i` of a flat walk names the element (the Python package's
 * quantize names x[i, j] for the quantizer's in[k]). */
#include "hurray/convert.h"
#include "hurray/device.h"

bool hurray_shape_unravel(uint32_t rank, const uint64_t *shape, uint64_t flat, uint64_t *index) {
  uint64_t count = 0;
  if (rank > HURRAY_MAX_RANK || (rank > 0 && (shape == NULL || index == NULL)) ||
      !hurray_shape_element_count(rank, shape, &count) || flat >= count)
    return false;
  for (uint32_t j = rank; j-- > 0;) {
    index[j] = flat % shape[j];
    flat /= shape[j];
  }
  return true;
}
