/*
 * Strided runs of elements (include/hurray/convert.h, "strided arrays"): the
 * element count of a shape, the bytes a strided array spans, its gather into
 * row-major order (as bytes, converted, or packed as bools) and the
 * LSB-first packing of bool elements. The Python package's DLPack, NumPy and
 * quantize paths are these functions.
 */
#include "hurray/convert.h"

#include <string.h>

#include "hurray/device.h"
#include "hurray/dtype.h"
#include "internal/common.h"

bool hurray_shape_element_count(uint32_t rank, const uint64_t *shape, uint64_t *out) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) {
    if (shape[i] == HURRAY_DYNAMIC_DIM || hurray__mul_overflow_u64(n, shape[i], &n)) return false;
  }
  *out = n;
  return true;
}

bool hurray_strided_span(uintptr_t first, uint64_t item_size, uint32_t rank,
                         const uint64_t *shape, const int64_t *strides, uintptr_t *base,
                         uint64_t *span, uint64_t *byte_offset) {
  int64_t mn = 0, mx = 0;
  for (uint32_t k = 0; k < rank; k++) {
    if (shape[k] == 0 || shape[k] > (uint64_t)INT64_MAX) return false;
    int64_t reach;
    if (hurray__mul_overflow_i64(strides[k], (int64_t)(shape[k] - 1), &reach)) return false;
    if (reach > 0 ? hurray__add_overflow_i64(mx, reach, &mx)
                  : hurray__add_overflow_i64(mn, reach, &mn))
      return false;
  }
  uint64_t lo = mn == 0 ? 0 : (uint64_t)(-(mn + 1)) + 1u; /* -mn without overflow */
  uint64_t elems = lo + (uint64_t)mx + 1u, bytes_lo, bytes;
  if (elems < lo) return false;
  if (hurray__mul_overflow_u64(elems, item_size, &bytes) || bytes > (uint64_t)INT64_MAX)
    return false;
  if (hurray__mul_overflow_u64(lo, item_size, &bytes_lo)) return false;
  /* the span must lie inside the address space around `first` */
  if (first < bytes_lo || bytes - bytes_lo > UINTPTR_MAX - first) return false;
  *base = first - (uintptr_t)bytes_lo;
  *span = bytes;
  *byte_offset = bytes_lo;
  return true;
}

/* ---- the walk: one call per row (the last dimension) ---------------------------- */

typedef void (*RowFn)(void *ctx, const uint8_t *row, int64_t stride, uint64_t n, uint64_t index);

/* Checks the arguments of a gather; *count gets its element count. */
static HurrayStatus walk_check(const void *src, uint32_t rank, const uint64_t *shape,
                               const int64_t *strides, const void *dst, uint64_t *count) {
  if (rank > HURRAY_MAX_RANK) return HURRAY_ERR_INVALID_ARGUMENT;
  if (rank > 0 && (shape == NULL || strides == NULL)) return HURRAY_ERR_NULL_POINTER;
  if (!hurray_shape_element_count(rank, shape, count)) return HURRAY_ERR_INVALID_ARGUMENT;
  if (*count > 0 && (src == NULL || dst == NULL)) return HURRAY_ERR_NULL_POINTER;
  return HURRAY_OK;
}

/* Calls fn once per row of the row-major order. Each step stays inside the
 * extent: a dimension's counter wraps by (shape - 1) strides, never shape
 * strides (which could overflow at the edge of the address space). */
static void walk(const uint8_t *src, uint32_t rank, const uint64_t *shape, const int64_t *strides,
                 RowFn fn, void *ctx) {
  if (rank == 0) {
    fn(ctx, src, 0, 1, 0);
    return;
  }
  uint64_t idx[HURRAY_MAX_RANK] = {0}, inner = shape[rank - 1], at = 0;
  const uint8_t *row = src;
  for (;;) {
    fn(ctx, row, strides[rank - 1], inner, at);
    at += inner;
    uint32_t d = rank - 1;
    while (d-- > 0) {
      if (idx[d] + 1 < shape[d]) {
        idx[d]++;
        row += strides[d];
        break;
      }
      row -= (int64_t)(shape[d] - 1) * strides[d];
      idx[d] = 0;
    }
    if (d == UINT32_MAX) return;
  }
}

typedef struct {
  uint8_t *dst;
  uint64_t item_size;
  uint8_t src_type, dst_type;
} GatherCtx;

static void gather_row(void *c, const uint8_t *p, int64_t stride, uint64_t n, uint64_t at) {
  const GatherCtx *g = c;
  uint8_t *d = g->dst + at * g->item_size;
  if (n == 1 || stride == (int64_t)g->item_size) {
    memcpy(d, p, (size_t)(n * g->item_size));
    return;
  }
  for (uint64_t j = 0; j < n; j++, d += g->item_size) {
    memcpy(d, p, (size_t)g->item_size);
    if (j + 1 < n) p += stride;
  }
}

HurrayStatus hurray_elements_gather(const void *src, uint32_t rank, const uint64_t *shape,
                                    const int64_t *byte_strides, uint64_t item_size, void *dst) {
  uint64_t count;
  HURRAY_TRY(walk_check(src, rank, shape, byte_strides, dst, &count));
  if (count == 0) return HURRAY_OK;
  GatherCtx g = {dst, item_size, 0, 0};
  walk(src, rank, shape, byte_strides, gather_row, &g);
  return HURRAY_OK;
}

static void convert_row(void *c, const uint8_t *p, int64_t stride, uint64_t n, uint64_t at) {
  const GatherCtx *g = c;
  /* the types were checked by the caller: the conversion cannot fail */
  HurrayStatus rc = hurray_elements_convert(g->src_type, p, stride, g->dst_type,
                                            g->dst + at * g->item_size,
                                            (int64_t)g->item_size, n, 0);
  (void)rc;
}

HurrayStatus hurray_elements_gather_convert(uint8_t src_type, const void *src, uint32_t rank,
                                            const uint64_t *shape, const int64_t *byte_strides,
                                            uint8_t dst_type, void *dst) {
  uint64_t count;
  HURRAY_TRY(walk_check(src, rank, shape, byte_strides, dst, &count));
  /* the types: what hurray_elements_convert takes (asked with no element) */
  HURRAY_TRY(hurray_elements_convert(src_type, NULL, 0, dst_type, NULL, 0, 0, 0));
  if (count == 0) return HURRAY_OK;
  GatherCtx g = {dst, hurray_dtype_info(dst_type)->bit_width / 8u, src_type, dst_type};
  walk(src, rank, shape, byte_strides, convert_row, &g);
  return HURRAY_OK;
}

static void pack_row(void *c, const uint8_t *p, int64_t stride, uint64_t n, uint64_t e) {
  uint8_t *dst = ((const GatherCtx *)c)->dst;
  for (uint64_t j = 0; j < n; j++, e++) {
    if (*p) dst[e >> 3] |= (uint8_t)(1u << (e & 7u)); /* LSB first */
    if (j + 1 < n) p += stride;
  }
}

HurrayStatus hurray_elements_gather_bool(const void *src, uint32_t rank, const uint64_t *shape,
                                         const int64_t *byte_strides, void *dst) {
  uint64_t count;
  HURRAY_TRY(walk_check(src, rank, shape, byte_strides, dst, &count));
  if (count == 0) return HURRAY_OK;
  memset(dst, 0, (size_t)((count + 7u) / 8u));
  GatherCtx g = {dst, 1, 0, 0};
  walk(src, rank, shape, byte_strides, pack_row, &g);
  return HURRAY_OK;
}

/* ---- bool packing, eight elements at a time ------------------------------------- */

/* (SWAR) byte j of a little-endian 64-bit word is element j, and packed bit
 * j (LSB first) is element j. The loads and stores are byte-wise, so any
 * alignment and host byte order work; compilers fuse them into one 64-bit
 * access. */
void hurray_bool_unpack(const uint8_t *src, uint8_t *dst, uint64_t count) {
  uint64_t whole = count / 8u;
  for (uint64_t k = 0; k < whole; k++) {
    /* byte j keeps bit j of the packed byte, then becomes 0 or 1 (no carry:
     * each byte is at most 0x80 + 0x7F) */
    uint64_t y = ((uint64_t)src[k] * 0x0101010101010101u) & 0x8040201008040201u;
    y = ((y + 0x7F7F7F7F7F7F7F7Fu) >> 7) & 0x0101010101010101u;
    for (int i = 0; i < 8; i++, y >>= 8) dst[8u * k + (unsigned)i] = (uint8_t)y;
  }
  for (uint64_t i = 8u * whole; i < count; i++)
    dst[i] = (uint8_t)(((unsigned)src[i >> 3] >> (unsigned)(i & 7u)) & 1u);
}

void hurray_bool_pack(const uint8_t *src, uint8_t *dst, uint64_t count) {
  uint64_t whole = count / 8u;
  for (uint64_t k = 0; k < whole; k++) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = (x << 8) | src[8u * k + (unsigned)i];
    /* any nonzero byte is true: fold each byte's bits into its bit 0 (shifts
     * only move higher bytes' bits into this byte's upper bits, never bit 0) */
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    x &= 0x0101010101010101u;
    /* byte j's bit lands on bit 56 + j; nothing else reaches bits 56..63 */
    dst[k] = (uint8_t)((x * 0x0102040810204080u) >> 56);
  }
  if (8u * whole < count) {
    uint8_t last = 0;
    for (uint64_t i = 8u * whole; i < count; i++)
      if (src[i]) last = (uint8_t)(last | (1u << (i & 7u)));
    dst[whole] = last;
  }
}
