/* Layout rules of a descriptor (src/internal/validate.h).
 * PLACEHOLDER until the layout rules land: accepts everything. */
#include "internal/validate.h"

bool hurray__layout_base_buffer_count(uint8_t tag, uint32_t rank, uint32_t *out) {
  switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
    case HURRAY_LAYOUT_STRIDED:
    case HURRAY_LAYOUT_TILED:
    case HURRAY_LAYOUT_MORTON:
    case HURRAY_LAYOUT_HILBERT:
      *out = 1;
      return true;
    case HURRAY_LAYOUT_COO:
      *out = 2;
      return true;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
    case HURRAY_LAYOUT_BLOCK_PAGED:
      *out = 3;
      return true;
    case HURRAY_LAYOUT_CSF:
      *out = 2 * rank + 1;
      return true;
    case HURRAY_LAYOUT_COMPOSITE:
      *out = 0;
      return true;
    default:
      return false;
  }
}

HurrayStatus hurray__layout_validate(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                     uint32_t options, HurrayError *err) {
  (void)f;
  (void)o;
  (void)options;
  (void)err;
  return HURRAY_OK;
}
