/*
 * hurray/layout.h - memory layouts (spec: memory-layout.md, layouts/\*.md).
 *
 * HurrayLayout is a plain value: a tag plus the decoded layout payload. Its
 * array pointers are borrowed: into the descriptor that produced it, or into
 * memory the caller owns while building a descriptor.
 */
#ifndef HURRAY_LAYOUT_H
#define HURRAY_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/dtype.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(tag, NAME, "name") - every layout tag the spec assigns. */
#define HURRAY_LAYOUT_TABLE(X)             \
  X(0x01, ROW_MAJOR, "row_major")          \
  X(0x02, COL_MAJOR, "col_major")          \
  X(0x03, STRIDED, "strided")              \
  X(0x04, TILED, "tiled")                  \
  X(0x05, MORTON, "morton")                \
  X(0x06, COO, "coo")                      \
  X(0x07, CSR, "csr")                      \
  X(0x08, CSC, "csc")                      \
  X(0x09, CSF, "csf")                      \
  X(0x0A, BLOCK_PAGED, "block_paged")      \
  X(0x0B, COMPOSITE, "composite")          \
  X(0x40, HILBERT, "hilbert")

enum HurrayLayoutTag {
#define HURRAY_X_LT_(tag, NAME, name) HURRAY_LAYOUT_##NAME = (tag),
  HURRAY_LAYOUT_TABLE(HURRAY_X_LT_)
#undef HURRAY_X_LT_
  HURRAY_LAYOUT_PRIVATE_FIRST = 0xF0,
  HURRAY_LAYOUT_PRIVATE_LAST = 0xFE
};

/* Layout classes (memory-layout.md taxonomy). */
typedef enum HurrayLayoutClass {
  HURRAY_LAYOUT_CLASS_UNKNOWN = 0, /* not named: reserved, unassigned or private */
  HURRAY_LAYOUT_CLASS_DENSE = 1,   /* row/col-major, strided, tiled, morton, hilbert */
  HURRAY_LAYOUT_CLASS_SPARSE = 2,  /* coo, csr, csc, csf */
  HURRAY_LAYOUT_CLASS_INDIRECT = 3,/* block_paged */
  HURRAY_LAYOUT_CLASS_VIRTUAL = 4  /* composite head */
} HurrayLayoutClass;

/* Maximum nesting of tiled layouts (inner_layout = tiled) this library reads. */
#define HURRAY_MAX_TILED_DEPTH 8u

/* One level of a tiled layout. Arrays have `rank` entries. */
typedef struct HurrayTiledLevel {
  const uint64_t *tile_shape;    /* every entry > 0 */
  uint8_t outer_layout;          /* 0x01 row-major, 0x02 col-major, 0x03 strided */
  uint8_t inner_layout;          /* 0x01, 0x02, 0x03, or 0x04 = next level is nested */
  const int64_t *outer_strides;  /* iff outer_layout == 0x03 (units: tiles), else NULL */
  const int64_t *inner_strides;  /* iff inner_layout == 0x03 (units: elements), else NULL */
} HurrayTiledLevel;

/* Composition rules and combine ops of a composite head. */
#define HURRAY_COMPOSITE_PARTITION 0x01u
#define HURRAY_COMPOSITE_OVERLAY 0x02u
#define HURRAY_COMPOSITE_GROUP 0x03u
#define HURRAY_COMBINE_NONE 0x00u
#define HURRAY_COMBINE_REPLACE 0x01u
#define HURRAY_COMBINE_ADD 0x02u
#define HURRAY_COMPOSITE_OPEN_COUNT UINT32_MAX /* reserved, rejected */

/* Block-paged kv_role and index type values. */
#define HURRAY_KV_ROLE_KEY 0x00u
#define HURRAY_KV_ROLE_VALUE 0x01u
#define HURRAY_KV_ROLE_FUSED 0x02u
#define HURRAY_BLOCK_INDEX_U32 0x00u
#define HURRAY_BLOCK_INDEX_U64 0x01u
#define HURRAY_NO_LAYER_INDEX UINT32_MAX

/* A decoded layout: the tag and its payload. */
typedef struct HurrayLayout {
  uint8_t tag;
  union {
    struct { const int64_t *strides; } strided;              /* rank entries, in elements */
    struct { uint32_t depth; const HurrayTiledLevel *levels; } tiled; /* depth 1..8 */
    struct { const uint32_t *bits; } morton;                  /* rank entries, each > 0 */
    struct { uint64_t nnz; uint8_t is_sorted; } coo;          /* is_sorted 0 or 1 */
    struct { uint64_t nnz; } csr;                             /* also used for CSC */
    struct { uint64_t nnz; const uint32_t *mode_order; } csf; /* permutation of 0..rank-1 */
    struct {
      uint32_t page_size;
      uint64_t num_pages;
      uint32_t paged_axis; /* must be 0 */
      uint32_t num_seqs;
      uint8_t kv_role;
      uint32_t layer_index; /* HURRAY_NO_LAYER_INDEX = none */
      uint8_t block_table_index_type;
    } block_paged;
    struct { uint8_t rule; uint8_t combine_op; uint32_t member_count; } composite;
    struct { uint32_t order; uint32_t rank; } hilbert;
    struct { uint64_t layout_id; uint32_t data_len; const uint8_t *data; } private_ext;
    /* Permissive decode of a layout tag this library cannot parse: every byte of
     * the descriptor after byte_offset, kept verbatim (the buffer table and the
     * optional sections cannot be located without the payload's length). */
    struct { uint32_t len; const uint8_t *bytes; } opaque;
  } u;
} HurrayLayout;

/* Classifies a layout tag: invalid {0x00, 0xFF}; named {0x01-0x0B, 0x40};
 * reserved {0x0C-0x3F, 0x41-0xEF}; private {0xF0-0xFE}. */
HURRAY_API HurrayTagKind hurray_layout_tag_kind(uint8_t layout_tag);

/* Name of a named layout tag ("csr"), else NULL. Static string. */
HURRAY_API const char *hurray_layout_name(uint8_t layout_tag);

/* Class of a layout tag (UNKNOWN unless named). */
HURRAY_API HurrayLayoutClass hurray_layout_class(uint8_t layout_tag);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_LAYOUT_H */
