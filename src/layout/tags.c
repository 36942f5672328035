/* Layout tag classification (include/hurray/layout.h; spec: memory-layout.md): the
 * lowest file of src/layout/, calling none of the others. */
#include "hurray/layout.h"
#include "internal/common.h"
#include "internal/validate.h"

HurrayTagKind hurray_layout_tag_kind(uint8_t tag) {
  if (tag == 0x00 || tag == 0xFF) return HURRAY_TAG_INVALID;
  if ((tag >= 0x01 && tag <= 0x0B) || tag == 0x40) return HURRAY_TAG_NAMED;
  if (tag >= 0xF0) return HURRAY_TAG_PRIVATE;
  return HURRAY_TAG_RESERVED;
}

const char *hurray_layout_name(uint8_t tag) {
  switch (tag) {
#define HURRAY_X_(t, NAME, name) \
  case (t):                      \
    return name;
    HURRAY_LAYOUT_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      return NULL;
  }
}

HurrayLayoutClass hurray_layout_class(uint8_t tag) {
  switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
    case HURRAY_LAYOUT_STRIDED:
    case HURRAY_LAYOUT_TILED:
    case HURRAY_LAYOUT_MORTON:
    case HURRAY_LAYOUT_HILBERT:
      return HURRAY_LAYOUT_CLASS_DENSE;
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
    case HURRAY_LAYOUT_CSF:
      return HURRAY_LAYOUT_CLASS_SPARSE;
    case HURRAY_LAYOUT_BLOCK_PAGED:
      return HURRAY_LAYOUT_CLASS_INDIRECT;
    case HURRAY_LAYOUT_COMPOSITE:
      return HURRAY_LAYOUT_CLASS_VIRTUAL;
    default:
      return HURRAY_LAYOUT_CLASS_UNKNOWN;
  }
}

bool hurray_layout_nnz(const HurrayLayout *l, uint64_t *out) {
  if (l == NULL || out == NULL) return false;
  switch (l->tag) {
    case HURRAY_LAYOUT_COO: *out = l->u.coo.nnz; return true;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC: *out = l->u.csr.nnz; return true;
    case HURRAY_LAYOUT_CSF: *out = l->u.csf.nnz; return true;
    default: return false;
  }
}

/* Buffer-table slots of the layout itself (src/internal/validate.h). */
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

bool hurray_layout_buffer_count(uint8_t layout_tag, uint32_t rank, uint32_t *out) {
  if (out == NULL) return false;
  uint32_t n;
  if (!hurray__layout_base_buffer_count(layout_tag, rank, &n)) return false;
  *out = n;
  return true;
}

const char *hurray_layout_rank_array(uint8_t layout_tag) {
  switch (layout_tag) {
    case HURRAY_LAYOUT_STRIDED: return "strides";
    case HURRAY_LAYOUT_TILED: return "tile_shape";
    case HURRAY_LAYOUT_MORTON: return "morton_bits";
    case HURRAY_LAYOUT_CSF: return "mode_order";
    default: return NULL;
  }
}

uint32_t hurray_block_index_width(uint8_t index_type) {
  switch (index_type) {
    case HURRAY_BLOCK_INDEX_U32: return 4u;
    case HURRAY_BLOCK_INDEX_U64: return 8u;
    default: return 0u;
  }
}
