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

/* Name of a named layout tag ("csr"), else NULL. Static string (borrowed, never free). */
HURRAY_API const char *hurray_layout_name(uint8_t layout_tag);

/* Class of a layout tag (UNKNOWN unless named). */
HURRAY_API HurrayLayoutClass hurray_layout_class(uint8_t layout_tag);

/* Stored element count of a sparse layout (COO, CSR, CSC, CSF): true with
 * *out = nnz; false (and *out untouched) for every other layout. `l` borrowed. */
HURRAY_API bool hurray_layout_nnz(const HurrayLayout *l, uint64_t *out);

/* Buffers a layout itself needs for a tensor of `rank` dimensions (before any
 * quantization parameter buffer): dense layouts 1, COO 2, CSR, CSC and
 * block-paged 3, CSF 2 * rank + 1, a composite head 0. True with *out set;
 * false (*out untouched) for a private, reserved or invalid tag, whose count
 * only its definer knows. */
HURRAY_API bool hurray_layout_buffer_count(uint8_t layout_tag, uint32_t rank, uint32_t *out);

/* Bytes of one entry of a block-paged layout's block table and seq_ptr for its
 * block_table_index_type: 4 for HURRAY_BLOCK_INDEX_U32, 8 for
 * HURRAY_BLOCK_INDEX_U64, 0 for any other value (not a valid index type). */
HURRAY_API uint32_t hurray_block_index_width(uint8_t index_type);

/* The name of the per-dimension array a layout carries ("strides" for
 * strided, "tile_shape" for tiled, "morton_bits" for Morton, "mode_order" for
 * CSF): it has one entry per dimension of the tensor. NULL for every other
 * tag, whose payload has no such array. Static string. */
HURRAY_API const char *hurray_layout_rank_array(uint8_t layout_tag);

/* ==========================================================================
 * A layout as a value: deep copy, equality, hash (src/layout/value.c).
 *
 * What a tag carries: strided strides[rank]; morton bits[rank]; csf nnz and
 * mode_order[rank]; tiled depth and its levels (outer_layout, inner_layout,
 * tile_shape[rank], outer_strides[rank] and inner_strides[rank] when
 * non-NULL: NULL means absent, whatever outer_layout says); hilbert order and
 * its own rank field; coo nnz and is_sorted; csr/csc nnz; block_paged its
 * seven scalars; composite rule, combine_op and member_count; a private tag
 * (0xF0-0xFE) layout_id and data[data_len]; a reserved or unassigned tag the
 * opaque bytes[len]; row/col-major and the invalid tags nothing but the tag.
 * `rank` is the entry count of the per-dimension arrays (strided, tiled,
 * morton, csf) and is ignored for every other tag. An array of 0 entries is
 * empty whatever its pointer; a required array with entries and a NULL
 * pointer is "missing" (copying refuses it; equality and hashing treat it as
 * a value of its own). All pointers are borrowed.
 * ========================================================================== */

/*
 * Bytes of caller storage a deep copy of `src` needs (*out_bytes): every
 * array it carries (above), each rounded up to a multiple of 8, plus the
 * levels of a tiled layout. 0 for a tag without arrays. Checked arithmetic.
 * Errors: HURRAY_ERR_NULL_POINTER (src, out_bytes, or a missing array:
 * err->field names it, e.g. "layout.tiled[1].tile_shape"),
 * HURRAY_ERR_INVALID_ARGUMENT (the size does not fit in size_t).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_copy_size(
    const HurrayLayout *src, uint32_t rank, size_t *out_bytes, HurrayError *err);

/*
 * Deep copy of `src` into *dst, whose arrays point into `storage` (borrowed,
 * caller memory, storage_bytes long, 8-byte aligned, not overlapping src's
 * arrays; NULL allowed when the copy needs 0 bytes): pieces at multiples of 8
 * in the order copy_size counts them. Zero-length arrays become NULL. *dst
 * (caller storage, may be src) is written on success only; it is then equal
 * to src (hurray_layout_equal) and valid while `storage` is.
 * Errors: as hurray_layout_copy_size, plus HURRAY_ERR_BUFFER_TOO_SMALL
 * (storage_bytes below the size), HURRAY_ERR_NULL_POINTER (dst, or storage
 * when bytes are needed), HURRAY_ERR_MISALIGNED (storage not 8-byte aligned).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_copy(const HurrayLayout *src, uint32_t rank,
                                                            void *storage, size_t storage_bytes,
                                                            HurrayLayout *dst, HurrayError *err);

/*
 * Value equality of two layouts of tensors of rank `rank`: same tag and the
 * same value in every field the tag carries (above); pointers are never
 * compared, only what they point to. Layouts of tensors of different ranks
 * are not compared here: compare the ranks first. False when a or b is NULL.
 */
HURRAY_API bool hurray_layout_equal(const HurrayLayout *a, const HurrayLayout *b, uint32_t rank);

/*
 * A hash of the layout's value, consistent with hurray_layout_equal (equal
 * layouts of one rank hash alike). Allocates nothing and never fails (0 for
 * NULL). Not stable across library versions: do not store it.
 */
HURRAY_API uint64_t hurray_layout_hash(const HurrayLayout *l, uint32_t rank);

/* ==========================================================================
 * Addressing, bulk copy and index-buffer validation (docs/reference/layouts.md).
 *
 * These functions read a tensor through its descriptor fields (see
 * hurray/descriptor.h) and, where data is involved, its buffers, passed as
 * two parallel arrays with f->buffer_count entries each:
 *   buffers[i]  borrowed pointer to the first byte of buffer i (NULL allowed
 *               when sizes[i] is 0);
 *   sizes[i]    number of readable bytes at buffers[i]. Pass sizes == NULL to
 *               use the buffer handles' byte_size (f->buffers[i].byte_size).
 * Every read is bounds-checked against sizes[i]; a read that would leave a
 * buffer fails with HURRAY_ERR_BUFFER_SIZE (never an out-of-bounds access).
 * Buffer contents are little-endian, as on the wire.
 *
 * The descriptor fields themselves are checked (rank rules and layout payload
 * semantics) before use, so a hand-built HurrayDescriptorFields is safe too.
 * `err` is optional everywhere (NULL allowed).
 * ========================================================================== */

struct HurrayDescriptorFields; /* HurrayDescriptorFields, hurray/descriptor.h */

/* Maximum composite nesting depth (docs/spec/layouts/composite.md § Binding;
 * docs/internals/decisions.md § Limits). */
#define HURRAY_MAX_COMPOSITE_DEPTH 8u

/*
 * The shape tier of the layout rules alone (no buffer count, no sizes): rank
 * rules, layout payload semantics and composite head rules, as decoding
 * applies them (see docs/reference/layouts.md). Dynamic dimensions are accepted.
 * `options`: HURRAY_DECODE_*. Errors carry the field path, without a byte
 * offset. HURRAY_ERR_INVALID_LAYOUT, HURRAY_ERR_INVALID_COMPOSITE,
 * HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_validate_shape(
    const struct HurrayDescriptorFields *f, uint32_t options, HurrayError *err);

/*
 * Linear element offset of `index` (f->rank entries, each < shape[k]) in a
 * dense layout (row-major, column-major, strided, tiled incl. nesting, Morton,
 * Hilbert), in elements, relative to byte_offset. Strided and tiled layouts
 * with negative strides may give a negative offset. Morton follows the spec
 * formula literally (see docs/reference/layouts.md for its defect with unequal bit
 * counts); Hilbert is Skilling's CoordsToHilbert.
 * Errors: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_INVALID_ARGUMENT for a layout
 * that is not dense or a shape with a dynamic dimension;
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS when index[k] >= shape[k];
 * HURRAY_ERR_INVALID_LAYOUT for malformed layout fields or an offset that
 * does not fit in int64_t.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_element_offset(
    const struct HurrayDescriptorFields *f, const uint64_t *index, int64_t *out, HurrayError *err);

/*
 * Minimum byte size of layout buffer `buffer_index` implied by the descriptor
 * alone (what hurray_descriptor_validate requires; larger is fine): dense
 * buffer 0 includes byte_offset; content-dependent sizes (CSF inner levels,
 * block-paged block_table) give their lower bound. Quantization parameter
 * buffers are not layout buffers (HURRAY_ERR_INVALID_ARGUMENT).
 * Errors: HURRAY_ERR_INVALID_ARGUMENT (dynamic dimension, index not a layout
 * buffer), HURRAY_ERR_UNSUPPORTED (unknown type or layout), or the status the
 * descriptor check fails with.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_min_buffer_size(
    const struct HurrayDescriptorFields *f, uint32_t buffer_index, uint64_t *out, HurrayError *err);

/*
 * Morton code of `index` per morton.md, literally: bit b of index[d] goes to
 * bit b*rank + d, for b < bits[d]. index and bits have `rank` entries
 * (borrowed).
 * HURRAY_ERR_INVALID_ARGUMENT when a set bit would land at position >= 64.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_morton_encode(uint32_t rank, const uint32_t *bits,
                                                              const uint64_t *index, uint64_t *out);

/*
 * Skilling's CoordsToHilbert / HilbertToCoords (hilbert.md, normative).
 * `coords` has `rank` entries, each < 2^order (borrowed input of _encode,
 * caller storage filled by _decode); h < 2^(rank*order).
 * HURRAY_ERR_INVALID_ARGUMENT unless 1 <= rank <= 64, order >= 1 and
 * rank*order <= 64, or when a coordinate (or h) is out of range.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_hilbert_encode(uint32_t rank, uint32_t order,
                                                               const uint64_t *coords,
                                                               uint64_t *out);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_hilbert_decode(uint32_t rank, uint32_t order,
                                                               uint64_t h, uint64_t *coords);

/*
 * Copies the tensor's logical contents into `dst` (borrowed, dst_size bytes),
 * packed in row-major order with the tensor's own storage type: whole-byte
 * types element by element, 1/2/4-bit types packed LSB-first, 6-bit types
 * four elements per three-byte group; unused bits of the last byte/group are
 * zero. Needs dst_size >= hurray_buffer_size_bytes(type, element count).
 * Dense layouts are gathered through their addressing; COO, CSR, CSC and CSF
 * are zero-filled then scattered (all-zero bytes are the implicit zero).
 * Quantized tensors are copied as stored (not dequantized).
 * CSR/CSC/CSF index buffers are fully validated first
 * (hurray_layout_validate_index_buffers); COO coordinates are bounds-checked
 * one by one (duplicates: the later entry wins).
 * Errors: HURRAY_ERR_BUFFER_TOO_SMALL (dst), HURRAY_ERR_BUFFER_SIZE (a source
 * read would leave its buffer), HURRAY_ERR_INVALID_INDEX_DATA,
 * HURRAY_ERR_INVALID_ARGUMENT (dynamic dimension, too few buffers),
 * HURRAY_ERR_UNSUPPORTED (block-paged, composite, unknown type or layout).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_to_row_major(
    const struct HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    void *dst, uint64_t dst_size, HurrayError *err);

/* ==========================================================================
 * Transcoding: a dense tensor's elements in another layout
 * (src/layout/transcode.c; docs/reference/c-api/layout.md § Transcoding).
 * Element-preserving (interchange.md § On-the-Fly Transcoding): same rank,
 * shape, type and element at every index; only the memory layout changes.
 * ========================================================================== */

/*
 * Whether a tensor with fields `f` (borrowed) can be transcoded to
 * `target_tag`, and the bytes the result takes (*out_bytes, caller storage,
 * written on success only): one packed buffer, hurray_buffer_size_bytes of
 * the element count (sub-byte types packed as hurray_layout_to_row_major
 * packs them, in the target's element order). Targets: HURRAY_LAYOUT_ROW_MAJOR
 * and HURRAY_LAYOUT_COL_MAJOR (rank >= 1: a scalar is row-major only).
 * Sources: every dense layout (row-major, column-major, strided, tiled,
 * Morton, Hilbert), every element type with a known storage format (named,
 * or private with its extension section), unquantized, no dynamic dimension.
 * Allocates nothing.
 * Errors: HURRAY_ERR_UNSUPPORTED, err->field naming what refuses: "target"
 * (another target, or a scalar to column-major), "layout_tag" (sparse,
 * block-paged, composite, private or unknown layout), "quantization",
 * "type_tag" (no known storage format), "shape" (a dynamic dimension);
 * HURRAY_ERR_NULL_POINTER (f, out_bytes); HURRAY_ERR_INVALID_ARGUMENT
 * ("shape": a packed size beyond 63 bits); or the status the layout's shape
 * rules fail with (HURRAY_ERR_INVALID_LAYOUT).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_transcode_size(
    const struct HurrayDescriptorFields *f, uint8_t target_tag, uint64_t *out_bytes,
    HurrayError *err);

/*
 * Writes the tensor (fields `f`, its `buffers` / `sizes` as
 * hurray_layout_to_row_major takes them; all borrowed) into `dst`
 * (borrowed, dst_size bytes) packed in layout `target_tag`: the element at
 * index i goes where a row-major (column-major) tensor of f's shape and type
 * keeps index i, sub-byte types packed LSB-first (6-bit: four per
 * three-byte group), unused bits of the last byte or group zero. Only the
 * first hurray_layout_transcode_size bytes of dst are written; a source
 * already in the target layout gives a packed copy. Whole-byte row-major,
 * column-major, strided and tiled sources are copied in blocks (runs
 * contiguous on both sides at once, a transpose in squares staged on the
 * stack),
 * bounds-checked once per block (per tile); Morton and Hilbert sources and
 * sub-byte types element by element. Allocates nothing.
 * Errors: those of hurray_layout_transcode_size, plus
 * HURRAY_ERR_BUFFER_TOO_SMALL ("dst": dst_size below the size),
 * HURRAY_ERR_NULL_POINTER (dst with a non-zero size, a non-empty buffer),
 * HURRAY_ERR_BUFFER_SIZE ("buffers[0]": an element outside buffer 0),
 * HURRAY_ERR_INVALID_LAYOUT (an offset beyond 64 bits),
 * HURRAY_ERR_INVALID_ARGUMENT (no buffer). dst's contents are unspecified
 * after a failure.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_transcode(
    const struct HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    uint8_t target_tag, void *dst, uint64_t dst_size, HurrayError *err);

/* ==========================================================================
 * Partial reads: a hyper-rectangular selection of a dense tensor
 * (src/layout/slice.c; docs/reference/c-api/layout.md § Partial reads).
 * ========================================================================== */

/*
 * One dimension of a selection: the indices start, start + step, ... that are
 * below stop (none when stop <= start). step >= 1; start and stop at most the
 * dimension's size. An integer index i is the range {i, i + 1, 1} (the caller
 * drops the dimension from its own shape). With HURRAY_SLICE_REVERSE in
 * `flags` the same indices are taken in descending order (NumPy's negative
 * steps: a[7:2:-2] is {start 3, stop 8, step 2, REVERSE}).
 */
typedef struct HurraySliceRange {
  uint64_t start;
  uint64_t stop;
  uint64_t step;
  uint32_t flags; /* HURRAY_SLICE_*; other bits must be 0 */
} HurraySliceRange;

#define HURRAY_SLICE_REVERSE 0x1u

/*
 * The shape of a selection and its packed row-major size. `ranges` (borrowed)
 * has f->rank entries (NULL allowed for a scalar); `out_shape` (caller
 * storage, f->rank entries, or NULL) receives the count of each dimension;
 * `out_bytes` (or NULL) the bytes hurray_layout_slice_to_row_major writes
 * (hurray_buffer_size_bytes of the element count; 0 for an empty selection).
 * Checks the tensor (dense layout, known element type, no dynamic dimension)
 * and every range.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_UNSUPPORTED (layout not dense,
 * unknown element type; err->field "layout_tag" / "type_tag"),
 * HURRAY_ERR_INVALID_ARGUMENT (dynamic dimension; a step of 0 or unknown
 * flags: err->field "ranges[k].step" / "ranges[k].flags"),
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS (err->field "ranges[k].start" or
 * "ranges[k].stop", the message names the value and the dimension's size),
 * or the status the shape rules fail with.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_slice_shape(
    const struct HurrayDescriptorFields *f, const HurraySliceRange *ranges, uint64_t *out_shape,
    uint64_t *out_bytes, HurrayError *err);

/*
 * Copies the selection `ranges` (f->rank entries, borrowed) of a dense tensor
 * (row-major, column-major, strided, tiled, Morton, Hilbert) into `dst`
 * (borrowed, dst_size bytes), packed in row-major order with the tensor's
 * storage type, as hurray_layout_to_row_major packs a whole tensor (sub-byte
 * types repacked, unused bits of the last byte or group zero). Reads only the
 * bytes of the selected elements (a sub-byte element: its byte, or its
 * three-byte group): runs of elements contiguous in both the source and the
 * destination are copied with one memcpy, everything else element by element
 * through the layout's addressing. Only buffer 0 is read; quantized tensors
 * are copied as stored. `buffers` / `sizes` as for the other functions here.
 * Errors: those of hurray_layout_slice_shape, plus
 * HURRAY_ERR_BUFFER_TOO_SMALL (dst_size below the selection's size),
 * HURRAY_ERR_BUFFER_SIZE (a selected element lies outside buffer 0;
 * err->field "buffers[0]"), HURRAY_ERR_INVALID_LAYOUT (an offset beyond
 * 64 bits), HURRAY_ERR_INVALID_ARGUMENT (no buffer).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_slice_to_row_major(
    const struct HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    const HurraySliceRange *ranges, void *dst, uint64_t dst_size, HurrayError *err);

/*
 * Element lookup in a sparse tensor (COO: binary search when is_sorted, else
 * a linear scan; CSR/CSC: slice of the pointer array + binary search; CSF:
 * per-level descent with absolute positions). On success *found tells whether
 * `index` (f->rank entries) is stored, and *position is its position in the
 * values buffer (0 when not found: the element is implicitly zero).
 * The index buffers are assumed valid (see the validator below) but every
 * read is still bounds-checked.
 * Errors: HURRAY_ERR_INDEX_OUT_OF_BOUNDS (index outside shape),
 * HURRAY_ERR_INVALID_ARGUMENT (not a sparse layout), HURRAY_ERR_BUFFER_SIZE,
 * HURRAY_ERR_INVALID_INDEX_DATA (a pointer entry that cannot be right).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_sparse_lookup(
    const struct HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    const uint64_t *index, bool *found, uint64_t *position, HurrayError *err);

/*
 * Block-paged element address (block-paged.md § Element Lookup) of token
 * `token` of sequence `seq`, head `head`, dimension `dim`:
 *   phys  = block_table[seq_ptr[seq] + token / page_size]
 *   slot  = phys * page_size + token % page_size      (quantization scale index)
 *   flat  = (slot * num_heads + head) * head_dim + dim (element in page_pool)
 * *out_flat receives flat; out_slot (may be NULL) receives slot.
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS when seq >= num_seqs, head/dim outside the
 * shape, or token beyond the sequence's pages; HURRAY_ERR_INVALID_INDEX_DATA
 * when seq_ptr decreases there or phys >= num_pages; HURRAY_ERR_BUFFER_SIZE
 * when an index buffer is too short.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_block_paged_address(
    const struct HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    uint64_t seq, uint64_t token, uint64_t head, uint64_t dim, uint64_t *out_flat,
    uint64_t *out_slot, HurrayError *err);

/*
 * Checks the contents of the index buffers, which the descriptor alone cannot:
 *  COO:  every coordinate < shape[d]; no duplicate tuples; strictly
 *        increasing lexicographic order when is_sorted (an unsorted COO
 *        allocates nnz * 8 bytes to find duplicates).
 *  CSR/CSC: ptr[0] = 0, ptr non-decreasing, ptr[n] = nnz, indices strictly
 *        increasing inside each row/column and < the other dimension.
 *  CSF:  per level pos_L[0] = 0, non-decreasing, terminal entry = the level's
 *        count (nnz at the leaf), siblings strictly increasing,
 *        crd_L < shape[mode_order[L]]; an empty tensor has pos_0 = [0, 0].
 *  block-paged: see hurray_block_paged_validate_index_buffers.
 * Dense layouts and composite heads have no index buffers: HURRAY_OK.
 * Errors: HURRAY_ERR_INVALID_INDEX_DATA (message names the buffer and the
 * element position; err->field is "buffers[i]", err->offset the byte
 * position inside that buffer), HURRAY_ERR_BUFFER_SIZE (a buffer shorter
 * than what it must contain), HURRAY_ERR_OUT_OF_MEMORY,
 * HURRAY_ERR_INVALID_ARGUMENT (too few buffers, dynamic pointer dimension),
 * HURRAY_ERR_UNSUPPORTED (unknown layout).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_validate_index_buffers(
    const struct HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    HurrayError *err);

/* Flag of hurray_block_paged_validate_index_buffers: require seq_ptr to hold
 * exactly num_seqs + 1 entries and block_table exactly seq_ptr[num_seqs]
 * entries (as for typed arrays); otherwise longer buffers are accepted. */
#define HURRAY_INDEX_EXACT_LENGTHS 0x1u

/*
 * Block-paged index buffers on their own (for BlockPagedLayout-style checks
 * without a descriptor). index_type is HURRAY_BLOCK_INDEX_U32 or _U64 and sets
 * the entry width of both arrays; seq_ptr / block_table are borrowed, with
 * their sizes in bytes (NULL allowed when the size is 0). Checks
 * seq_ptr[0] = 0, non-decreasing, seq_ptr[num_seqs] = block_table length, and
 * every page id < num_pages (aliasing allowed).
 * Errors: HURRAY_ERR_INVALID_INDEX_DATA, HURRAY_ERR_BUFFER_SIZE (seq_ptr
 * shorter than num_seqs + 1 entries, block_table shorter than
 * seq_ptr[num_seqs]), HURRAY_ERR_INVALID_ARGUMENT (index_type, flags).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_block_paged_validate_index_buffers(
    uint8_t index_type, uint32_t num_seqs, uint64_t num_pages, const void *seq_ptr,
    uint64_t seq_ptr_size, const void *block_table, uint64_t block_table_size, uint32_t flags,
    HurrayError *err);

/*
 * Whether quantization `q` composes with the block-paged `layout` (both
 * borrowed): per-tensor freely; per-channel on axis 1 or 2; per-block on
 * axis 0 with block_size == page_size; parameter buffers from index 3. The
 * descriptor rules run on a probe tensor with this paging whose every
 * extent and buffer the scheme's own rules accept, so what can fail is the
 * composition: the status and detail a tensor carrying both would get
 * (HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_ERR_INVALID_LAYOUT, ...), with no
 * byte offset (it would point into the probe). HURRAY_ERR_NULL_POINTER,
 * HURRAY_ERR_INVALID_ARGUMENT (a layout that is not block-paged).
 */
struct HurrayQuantization;
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_block_paged_check_quantization(
    const HurrayLayout *layout, const struct HurrayQuantization *q, HurrayError *err);

/* ---- basic indexing ------------------------------------------------------------------ */

/* One item of a NumPy basic index (hurray_layout_basic_index). */
#define HURRAY_INDEX_INTEGER 0u  /* start: the index; negative counts from the end */
#define HURRAY_INDEX_SLICE 1u    /* start:stop:step, as Python's slice.indices clamps them */
#define HURRAY_INDEX_ELLIPSIS 2u /* the dimensions no other item takes, whole */
#define HURRAY_INDEX_NEWAXIS 3u  /* a new dimension of 1 */
typedef struct HurrayIndexItem {
  uint32_t kind;  /* HURRAY_INDEX_* */
  int64_t start;  /* a slice's absent start: 0, or INT64_MAX for a negative step */
  int64_t stop;   /* a slice's absent stop: INT64_MAX, or INT64_MIN for a negative step */
  int64_t step;   /* a slice's step, not 0; absent: 1 */
} HurrayIndexItem;

/*
 * NumPy's basic indexing of a tensor of `rank` dimensions `shape` (borrowed)
 * by `count` items (borrowed): fills ranges[0 .. rank) (for
 * hurray_layout_slice_shape and hurray_file_read_slice; an integer item
 * selects one element, its dimension left out of the result), out_shape
 * (HURRAY_MAX_RANK entries of caller storage) and *out_rank with the
 * result's shape. Dimensions no item takes (after an ellipsis, or at the
 * end) are taken whole; slices clamp to their dimension as Python's do.
 * Errors: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_INDEX_OUT_OF_BOUNDS (an integer
 * outside [-size, size), naming it, the axis and the size; two ellipses; more
 * integers and slices than dimensions; a result of more than HURRAY_MAX_RANK
 * dimensions); HURRAY_ERR_INVALID_ARGUMENT (a step of 0, an unknown kind);
 * HURRAY_ERR_UNSUPPORTED (a sliced dimension above INT64_MAX elements).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_layout_basic_index(
    uint32_t rank, const uint64_t *shape, const HurrayIndexItem *items, uint32_t count,
    HurraySliceRange *ranges, uint64_t *out_shape, uint32_t *out_rank, HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_LAYOUT_H */
