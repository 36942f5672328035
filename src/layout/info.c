/* What each layout carries, as data (include/hurray/schema.h; spec:
 * memory-layout.md, layouts/\*.md): one static description per layout, for
 * bindings. Calls tags.c only. Adding a layout adds its entry here. */
#include "hurray/schema.h"
#include "hurray/device.h"
#include "internal/common.h"

#include <stddef.h>

#define OFF(member) ((uint32_t)offsetof(HurrayLayout, member))
#define LVL(member) ((uint32_t)offsetof(HurrayTiledLevel, member))

/* The orderings of a tiled level: outer_layout takes the first three. */
static const char *const k_order_names[] = {"row_major", "col_major", "strided", "tiled"};
static const uint8_t k_order_values[] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR,
                                         HURRAY_LAYOUT_STRIDED, HURRAY_LAYOUT_TILED};
static const char *const k_role_names[] = {"key", "value", "fused"};
static const uint8_t k_role_values[] = {HURRAY_KV_ROLE_KEY, HURRAY_KV_ROLE_VALUE,
                                        HURRAY_KV_ROLE_FUSED};
static const char *const k_index_names[] = {"uint32", "uint64"};
static const uint8_t k_index_values[] = {HURRAY_BLOCK_INDEX_U32, HURRAY_BLOCK_INDEX_U64};
static const char *const k_rule_names[] = {"partition", "overlay", "group"};
static const uint8_t k_rule_values[] = {HURRAY_COMPOSITE_PARTITION, HURRAY_COMPOSITE_OVERLAY,
                                        HURRAY_COMPOSITE_GROUP};
static const char *const k_combine_names[] = {"replace", "add"};
static const uint8_t k_combine_values[] = {HURRAY_COMBINE_REPLACE, HURRAY_COMBINE_ADD};

#define ENUM_OF(names, vals, n) .value_count = (n), .value_names = (names), .values = (vals)
#define U32_MAX_ .max = UINT32_MAX
#define U64_MAX_ .max = UINT64_MAX

static const HurrayFieldInfo k_strided[] = {
    {.name = "strides", .doc = "Per-dimension strides in logical elements (signed: negative or zero too).",
     .kind = HURRAY_VALUE_I64_ARRAY, .count = HURRAY_COUNT_RANK,
     .offset = OFF(u.strided.strides), .max = INT64_MAX},
};

/* Tiled: the fields of the outermost level, then the nested levels. */
enum { TILED_OUTER = 1, TILED_INNER = 2 };
static const HurrayFieldInfo k_tiled[] = {
    {.name = "tile_shape", .doc = "Tile extent along each dimension.",
     .kind = HURRAY_VALUE_U64_ARRAY, .count = HURRAY_COUNT_RANK, .flags = HURRAY_FIELD_IN_LEVEL,
     .offset = LVL(tile_shape), U64_MAX_},
    {.name = "outer_layout", .doc = "Order of the tiles: 'row_major', 'col_major' or 'strided'.",
     .kind = HURRAY_VALUE_ENUM, .flags = HURRAY_FIELD_IN_LEVEL | HURRAY_FIELD_OPTIONAL,
     .offset = LVL(outer_layout), .default_value = HURRAY_LAYOUT_ROW_MAJOR,
     ENUM_OF(k_order_names, k_order_values, 3)},
    {.name = "inner_layout",
     .doc = "Order inside a tile: 'row_major', 'col_major', 'strided' or 'tiled'.",
     .kind = HURRAY_VALUE_ENUM, .flags = HURRAY_FIELD_IN_LEVEL | HURRAY_FIELD_OPTIONAL,
     .offset = LVL(inner_layout), .default_value = HURRAY_LAYOUT_ROW_MAJOR,
     ENUM_OF(k_order_names, k_order_values, 4)},
    {.name = "outer_strides",
     .doc = "Tile-grid strides (in tiles), or None unless outer_layout is 'strided'.",
     .kind = HURRAY_VALUE_I64_ARRAY, .count = HURRAY_COUNT_RANK,
     .flags = HURRAY_FIELD_IN_LEVEL | HURRAY_FIELD_CONDITIONAL, .offset = LVL(outer_strides),
     .max = INT64_MAX, .when_field = TILED_OUTER, .when_value = HURRAY_LAYOUT_STRIDED},
    {.name = "inner_strides",
     .doc = "Within-tile strides (in elements), or None unless inner_layout is 'strided'.",
     .kind = HURRAY_VALUE_I64_ARRAY, .count = HURRAY_COUNT_RANK,
     .flags = HURRAY_FIELD_IN_LEVEL | HURRAY_FIELD_CONDITIONAL, .offset = LVL(inner_strides),
     .max = INT64_MAX, .when_field = TILED_INNER, .when_value = HURRAY_LAYOUT_STRIDED},
    {.name = "inner_tiled", .doc = "The nested TiledLayout, or None unless inner_layout is 'tiled'.",
     .kind = HURRAY_VALUE_NESTED, .flags = HURRAY_FIELD_CONDITIONAL,
     .when_field = TILED_INNER, .when_value = HURRAY_LAYOUT_TILED},
};

static const HurrayFieldInfo k_morton[] = {
    {.name = "morton_bits", .doc = "Interleaved index bits per dimension (not zero).",
     .kind = HURRAY_VALUE_U32_ARRAY, .count = HURRAY_COUNT_RANK, .offset = OFF(u.morton.bits),
     U32_MAX_},
};

static const HurrayFieldInfo k_hilbert[] = {
    {.name = "hilbert_order", .doc = "Curve order: every dimension is 2**order long.",
     .kind = HURRAY_VALUE_U32, .offset = OFF(u.hilbert.order), U32_MAX_},
    {.name = "hilbert_rank", .doc = "Curve rank: the tensor's rank, at least 2.", .kind = HURRAY_VALUE_U32,
     .flags = HURRAY_FIELD_GIVES_RANK, .offset = OFF(u.hilbert.rank), .max = HURRAY_MAX_RANK},
};

#define NNZ(member)                                                                        \
  {.name = "nnz", .doc = "Number of stored elements.", .kind = HURRAY_VALUE_U64,           \
   .offset = OFF(member), U64_MAX_}

static const HurrayFieldInfo k_coo[] = {
    NNZ(u.coo.nnz),
    {.name = "is_sorted",
     .doc = "True when the coordinates are in strictly increasing lexicographic order.",
     .kind = HURRAY_VALUE_BOOL, .flags = HURRAY_FIELD_OPTIONAL, .offset = OFF(u.coo.is_sorted),
     .max = 1},
};
static const HurrayFieldInfo k_csr[] = {NNZ(u.csr.nnz)};
static const HurrayFieldInfo k_csf[] = {
    NNZ(u.csf.nnz),
    {.name = "mode_order", .doc = "The dimension nesting order: a permutation of the rank (at least 3).", .kind = HURRAY_VALUE_U32_ARRAY,
     .count = HURRAY_COUNT_RANK, .offset = OFF(u.csf.mode_order), U32_MAX_},
};

static const HurrayFieldInfo k_paged[] = {
    {.name = "page_size", .doc = "Tokens per page (not 0).", .kind = HURRAY_VALUE_U32,
     .offset = OFF(u.block_paged.page_size), U32_MAX_},
    {.name = "num_pages", .doc = "Pages in the shared pool.", .kind = HURRAY_VALUE_U64,
     .offset = OFF(u.block_paged.num_pages), U64_MAX_},
    {.name = "paged_axis", .doc = "The paged axis: 0, the only one allowed.", .kind = HURRAY_VALUE_U32,
     .offset = OFF(u.block_paged.paged_axis), U32_MAX_},
    {.name = "num_seqs", .doc = "Sequences sharing the pool.", .kind = HURRAY_VALUE_U32,
     .offset = OFF(u.block_paged.num_seqs), U32_MAX_},
    {.name = "kv_role", .doc = "'key', 'value' or 'fused'.", .kind = HURRAY_VALUE_ENUM,
     .flags = HURRAY_FIELD_OPTIONAL, .offset = OFF(u.block_paged.kv_role),
     .default_value = HURRAY_KV_ROLE_KEY, ENUM_OF(k_role_names, k_role_values, 3)},
    {.name = "layer_index", .doc = "The transformer layer, or None (the wire's 0xFFFFFFFF, which cannot be "
            "given as a number).", .kind = HURRAY_VALUE_U32,
     .flags = HURRAY_FIELD_NULLABLE, .offset = OFF(u.block_paged.layer_index),
     .max = UINT32_MAX - 1u, .absent_value = HURRAY_NO_LAYER_INDEX},
    {.name = "block_table_index_type", .doc = "'uint32' or 'uint64'.", .kind = HURRAY_VALUE_ENUM,
     .flags = HURRAY_FIELD_OPTIONAL, .offset = OFF(u.block_paged.block_table_index_type),
     .default_value = HURRAY_BLOCK_INDEX_U32, ENUM_OF(k_index_names, k_index_values, 2)},
};

static const HurrayFieldInfo k_composite[] = {
    {.name = "composition_rule", .doc = "'partition', 'overlay' or 'group'.",
     .kind = HURRAY_VALUE_ENUM, .flags = HURRAY_FIELD_PRIVATE_VALUES,
     .offset = OFF(u.composite.rule), ENUM_OF(k_rule_names, k_rule_values, 3)},
    {.name = "member_count", .doc = "Number of members the head composes (an overlay has at least one).",
     .kind = HURRAY_VALUE_U32, .offset = OFF(u.composite.member_count), U32_MAX_},
    {.name = "combine_op", .doc = "'replace' or 'add': required for an overlay, refused (None) otherwise.",
     .kind = HURRAY_VALUE_ENUM, .flags = HURRAY_FIELD_CONDITIONAL,
     .offset = OFF(u.composite.combine_op), ENUM_OF(k_combine_names, k_combine_values, 2),
     .when_field = 0, .when_value = HURRAY_COMPOSITE_OVERLAY},
};

static const HurrayFieldInfo k_private[] = {
    {.name = "extension_layout_id", .doc = "The private extension identifier.",
     .kind = HURRAY_VALUE_U64, .offset = OFF(u.private_ext.layout_id), U64_MAX_},
    {.name = "extension_data", .doc = "The opaque payload (bytes).", .kind = HURRAY_VALUE_BYTES,
     .count = HURRAY_COUNT_FIELD, .flags = HURRAY_FIELD_OPTIONAL,
     .offset = OFF(u.private_ext.data), .count_offset = OFF(u.private_ext.data_len)},
};

static const HurrayFieldInfo k_reserved[] = {
    {.name = "raw_bytes",
     .doc = "Everything after byte_offset, kept verbatim (a permissive decode cannot find "
            "where an unknown layout's payload ends).",
     .kind = HURRAY_VALUE_BYTES, .count = HURRAY_COUNT_FIELD, .flags = HURRAY_FIELD_OPTIONAL,
     .offset = OFF(u.opaque.bytes), .count_offset = OFF(u.opaque.len)},
};

static const char *const k_dense_roles[] = {"element data"};
static const char *const k_coo_roles[] = {"values", "indices"};
static const char *const k_csr_roles[] = {"values", "col_indices", "row_ptr"};
static const char *const k_csc_roles[] = {"values", "row_indices", "col_ptr"};
static const char *const k_csf_roles[] = {"values"};
static const char *const k_csf_dim_roles[] = {"pos", "crd"};
static const char *const k_paged_roles[] = {"page_pool", "block_table", "seq_ptr"};

#define N_(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
#define FIELDS(a) N_(a), (a)
#define NO_FIELDS 0, NULL
#define ROLES(a) true, N_(a), (a), 0, NULL

static const HurrayLayoutInfo k_layouts[] = {
    {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_TAG_NAMED, "row_major", HURRAY_LAYOUT_CLASS_DENSE, 0,
     HURRAY_MAX_RANK, NO_FIELDS, ROLES(k_dense_roles)},
    {HURRAY_LAYOUT_COL_MAJOR, HURRAY_TAG_NAMED, "col_major", HURRAY_LAYOUT_CLASS_DENSE, 1,
     HURRAY_MAX_RANK, NO_FIELDS, ROLES(k_dense_roles)},
    {HURRAY_LAYOUT_STRIDED, HURRAY_TAG_NAMED, "strided", HURRAY_LAYOUT_CLASS_DENSE, 1,
     HURRAY_MAX_RANK, FIELDS(k_strided), ROLES(k_dense_roles)},
    {HURRAY_LAYOUT_TILED, HURRAY_TAG_NAMED, "tiled", HURRAY_LAYOUT_CLASS_DENSE, 1,
     HURRAY_MAX_RANK, FIELDS(k_tiled), ROLES(k_dense_roles)},
    {HURRAY_LAYOUT_MORTON, HURRAY_TAG_NAMED, "morton", HURRAY_LAYOUT_CLASS_DENSE, 1,
     HURRAY_MAX_RANK, FIELDS(k_morton), ROLES(k_dense_roles)},
    {HURRAY_LAYOUT_COO, HURRAY_TAG_NAMED, "coo", HURRAY_LAYOUT_CLASS_SPARSE, 1, HURRAY_MAX_RANK,
     FIELDS(k_coo), ROLES(k_coo_roles)},
    {HURRAY_LAYOUT_CSR, HURRAY_TAG_NAMED, "csr", HURRAY_LAYOUT_CLASS_SPARSE, 2, 2,
     FIELDS(k_csr), ROLES(k_csr_roles)},
    {HURRAY_LAYOUT_CSC, HURRAY_TAG_NAMED, "csc", HURRAY_LAYOUT_CLASS_SPARSE, 2, 2,
     FIELDS(k_csr), ROLES(k_csc_roles)},
    {HURRAY_LAYOUT_CSF, HURRAY_TAG_NAMED, "csf", HURRAY_LAYOUT_CLASS_SPARSE, 3, HURRAY_MAX_RANK,
     FIELDS(k_csf), true, N_(k_csf_roles), k_csf_roles, N_(k_csf_dim_roles), k_csf_dim_roles},
    {HURRAY_LAYOUT_BLOCK_PAGED, HURRAY_TAG_NAMED, "block_paged", HURRAY_LAYOUT_CLASS_INDIRECT, 3,
     3, FIELDS(k_paged), ROLES(k_paged_roles)},
    {HURRAY_LAYOUT_COMPOSITE, HURRAY_TAG_NAMED, "composite", HURRAY_LAYOUT_CLASS_VIRTUAL, 0,
     HURRAY_MAX_RANK, FIELDS(k_composite), true, 0, NULL, 0, NULL},
    {HURRAY_LAYOUT_HILBERT, HURRAY_TAG_NAMED, "hilbert", HURRAY_LAYOUT_CLASS_DENSE, 2,
     HURRAY_MAX_RANK, FIELDS(k_hilbert), ROLES(k_dense_roles)},
};

static const HurrayLayoutInfo k_private_info = {
    0, HURRAY_TAG_PRIVATE, "private", HURRAY_LAYOUT_CLASS_UNKNOWN, 0, HURRAY_MAX_RANK,
    FIELDS(k_private), false, 0, NULL, 0, NULL};
static const HurrayLayoutInfo k_reserved_info = {
    0, HURRAY_TAG_RESERVED, "reserved", HURRAY_LAYOUT_CLASS_UNKNOWN, 0, HURRAY_MAX_RANK,
    FIELDS(k_reserved), false, 0, NULL, 0, NULL};

const HurrayLayoutInfo *hurray_layout_info(uint8_t tag) {
  switch (hurray_layout_tag_kind(tag)) {
    case HURRAY_TAG_INVALID: return NULL;
    case HURRAY_TAG_PRIVATE: return &k_private_info;
    case HURRAY_TAG_NAMED:
      for (uint32_t i = 0; i < N_(k_layouts); i++)
        if (k_layouts[i].tag == tag) return &k_layouts[i];
      return NULL; /* unreachable: every named tag has its entry (tests/c/test_schema.c) */
    default: return &k_reserved_info;
  }
}

const char *hurray_field_value_name(const HurrayFieldInfo *f, uint8_t v) {
  if (f == NULL || (f->kind != HURRAY_VALUE_ENUM && f->kind != HURRAY_VALUE_TYPE_TAG))
    return NULL;
  for (uint32_t i = 0; i < f->value_count; i++)
    if (f->values[i] == v) return f->value_names[i];
  if ((f->flags & HURRAY_FIELD_PRIVATE_VALUES) && v >= 0xF0 && v <= 0xFE) return "private";
  return NULL;
}
