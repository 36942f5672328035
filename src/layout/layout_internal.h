/*
 * Helpers shared by the files of src/layout (rules, addressing, copies,
 * index checks) and src/composite. Never installed.
 */
#ifndef HURRAY_LAYOUT_INTERNAL_H
#define HURRAY_LAYOUT_INTERNAL_H

#include "hurray/descriptor.h"
#include "internal/common.h"
#include "internal/validate.h"

/* Signed checked arithmetic: hurray__mul_overflow_i64 / _add_overflow_i64 in
 * internal/common.h, beside the unsigned ones. */

/* floor(a / b) for b > 0. */
static inline int64_t hurray__floor_div_i64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b) != 0 && a < 0) q--;
  return q;
}

/* ---- storage format of one element ----------------------------------------- */

/* How elements of a type are packed. bits is 1, 2, 4 (packed LSB-first, P =
 * 8 / bits per byte), 6 (four per three-byte group) or a multiple of 8 (then
 * bytes = bits / 8). */
typedef struct HurrayElemFormat {
  uint32_t bits;
  uint32_t bytes;
} HurrayElemFormat;

/* Storage format of f's element type: named types from the type table,
 * private types from the extension section. False when unknown. */
HURRAY_INTERNAL bool hurray__elem_format(const HurrayDescriptorFields *f, HurrayElemFormat *out);

/* Bytes holding `count` packed elements; false on overflow. */
HURRAY_INTERNAL bool hurray__elem_size(const HurrayElemFormat *fmt, uint64_t count,
                                       uint64_t *out);

/* HURRAY_ERR_BUFFER_SIZE (field "buffers[0]") for an element at linear
 * offset `off` that lies outside buffer 0 of `size` bytes. */
HURRAY_INTERNAL HurrayStatus hurray__outside_buffer0(HurrayError *err, int64_t off,
                                                     uint64_t byte_offset, uint64_t size);

/* First and last byte (relative to byte_offset) touched by the element at
 * linear offset `off` (6-bit: the whole group). False on overflow. */
HURRAY_INTERNAL bool hurray__elem_span(const HurrayElemFormat *fmt, int64_t off, int64_t *first,
                                       int64_t *last);

/* Byte position in buf (size bytes, element [0...0] at byte_offset) of the
 * first byte of the element at linear offset `off`; false unless every byte
 * of the element (6-bit: of its group) lies inside buf. */
HURRAY_INTERNAL bool hurray__elem_locate(const HurrayElemFormat *fmt, uint64_t size,
                                         uint64_t byte_offset, int64_t off, uint64_t *start);

/* Reads the element at linear offset `off` from buf (size bytes) at
 * byte_offset into out: a sub-byte value in the low bits of out[0]. Only for
 * types narrower than 8 bits (whole-byte types: hurray__elem_locate and copy
 * the bytes). False if the read would leave buf. */
HURRAY_INTERNAL bool hurray__elem_read(const HurrayElemFormat *fmt, const uint8_t *buf,
                                       uint64_t size, uint64_t byte_offset, int64_t off,
                                       uint8_t *out);

/* Writes the sub-byte value val[0] as element number e of a packed row-major
 * destination (the element's bits are replaced). The caller sized dst. */
HURRAY_INTERNAL void hurray__elem_write(const HurrayElemFormat *fmt, uint8_t *dst, uint64_t e,
                                        const uint8_t *val);

/* ---- shapes ---------------------------------------------------------------- */

HURRAY_INTERNAL bool hurray__shape_has_dynamic(uint32_t rank, const uint64_t *shape);

/* Product of the shape (1 for a scalar); false on overflow or dynamic dims. */
HURRAY_INTERNAL bool hurray__shape_volume(uint32_t rank, const uint64_t *shape, uint64_t *out);

/* ---- rule tiers (src/layout/validate.c) ------------------------------------ */

/* Byte offset `base + delta`, or HURRAY_NO_OFFSET when o is NULL. */
static inline uint64_t hurray__at(const HurrayOffsets *o, uint64_t base, uint64_t delta) {
  return o == NULL ? HURRAY_NO_OFFSET : base + delta;
}

/* Shape tier: rank rules and layout payload semantics (o may be NULL). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__layout_check_shape(
    const HurrayDescriptorFields *f, const HurrayOffsets *o, uint32_t options, HurrayError *err);

/* Composite head rules that depend on nothing but the head's own fields. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__composite_head_check(
    const HurrayDescriptorFields *f, const HurrayOffsets *o, uint32_t options, HurrayError *err);

/* Minimum size of layout buffer i (see hurray_layout_min_buffer_size).
 * Returns HURRAY_ERR_UNSUPPORTED when the size cannot be known (unknown type
 * or layout, dynamic dimension); other failures are reported through err. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__layout_min_size(
    const HurrayDescriptorFields *f, const HurrayOffsets *o, uint32_t i, uint64_t *out,
    HurrayError *err);

/* ---- dense addressing (src/layout/address.c) ------------------------------- */

/* Offset of a dense element; f passed the shape tier, index is in range. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__dense_offset(
    const HurrayDescriptorFields *f, const uint64_t *index, int64_t *out);

/* Smallest and largest offsets a dense layout can address (tiles padded,
 * Morton / Hilbert over the whole curve). f passed the shape tier, has no
 * dynamic dimension and at least one element. HURRAY_ERR_INVALID_LAYOUT when
 * the range does not fit in int64_t. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__dense_offset_range(
    const HurrayDescriptorFields *f, const HurrayOffsets *o, int64_t *min, int64_t *max,
    HurrayError *err);

/* ---- index buffers (src/layout/index_check.c) ------------------------------ */

/* A buffer view: pointer and readable size. */
typedef struct HurrayBufView {
  const uint8_t *p;
  uint64_t size;
} HurrayBufView;

/* ---- dense copies (src/layout/copy.c) -------------------------------------- */

/* Copies the `vol` (>= 1) elements of a dense tensor (f passed the strict
 * shape tier, no dynamic dimension, fmt its storage format, v its buffer
 * views) into dst packed in row-major order, or column-major when `col`,
 * element by element through the layout's addressing (one bounded memcpy
 * when the source is already packed in that order). Every read is
 * bounds-checked (HURRAY_ERR_BUFFER_SIZE, "buffers[0]"). Sub-byte elements
 * replace their bits in dst: the caller zeroes dst first. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__dense_copy(
    const HurrayDescriptorFields *f, const HurrayBufView *v, const HurrayElemFormat *fmt,
    uint64_t vol, bool col, uint8_t *dst, HurrayError *err);

/* Fills views[0..f->buffer_count) from the public (buffers, sizes) pair.
 * HURRAY_ERR_NULL_POINTER when a non-empty buffer is NULL. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__buf_views(const HurrayDescriptorFields *f,
                                                                const void *const *buffers,
                                                                const uint64_t *sizes,
                                                                HurrayBufView *views,
                                                                HurrayError *err);

/* Reads u64 entry k of buffer `which`; BUFFER_SIZE when it is past the end. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__idx_read(const HurrayBufView *v,
                                                               uint32_t which, uint64_t k,
                                                               uint32_t width, const char *name,
                                                               uint64_t *out, HurrayError *err);

/* Checks the index buffers of a sparse or block-paged tensor whose fields
 * passed the strict shape tier and which has at least its base buffers. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__index_check(
    const HurrayDescriptorFields *f, const HurrayBufView *v, HurrayError *err);

/* ---- sorting ------------------------------------------------------------------ */

/* Three-way comparison of two keys (negative, 0, positive). */
typedef int (*HurraySortCmp)(uint64_t a, uint64_t b, const void *ctx);

/* In-place heapsort of a[0..n) (no recursion, no allocation). */
HURRAY_INTERNAL void hurray__heapsort(uint64_t *a, size_t n, HurraySortCmp cmp, const void *ctx);

#endif /* HURRAY_LAYOUT_INTERNAL_H */
