/*
 * Inline helpers shared by the quantizer (quantize.c) and the dequantizer
 * (dequant.c): the walk over a row- or column-major quantized tensor in
 * logical order, packed code access by bit width, rounding helpers. The
 * element conversions (float16, bfloat16, the OCP MX float formats) are the
 * codec's, internal/convert.h. Never installed.
 *
 * Everything here is static inline so the kernels' inner loops make no
 * function call per element (no hurray_value_get_code / set_code).
 */
#ifndef HURRAY_QUANT_KERNELS_H
#define HURRAY_QUANT_KERNELS_H

#include <math.h>
#include <string.h>

#include "internal/convert.h"
#include "quant/quant_internal.h"

/* SSE2 (every x86-64) kernels for the int4 / int8 affine loops; elsewhere,
 * or built with -DHURRAY_NO_SIMD (how the C suite checks that both agree),
 * the scalar loops, which compute the same bits. */
#if (defined(__SSE2__) || defined(_M_X64)) && !defined(HURRAY_NO_SIMD)
#include <emmintrin.h>
#define HQ_SSE2 1
#endif

/* ---- rounding ------------------------------------------------------------------------ */

/* Round half away from zero of a float within [-2^62, 2^62] (C's roundf,
 * without the call): the integer part by truncation, then the fraction,
 * which y - trunc(y) gives exactly (a float of magnitude 2^23 or more is an
 * integer already). */
static inline int64_t hq_round_away(float y) {
  int64_t i = (int64_t)y;
  float fr = y - (float)i;
  return i + (int64_t)(fr >= 0.5f) - (int64_t)(fr <= -0.5f);
}

/* Round to nearest, ties to even, of 0 <= y < 2^52 (exact: the addition
 * rounds in the current mode, which is to nearest even). */
static inline double hq_rne_nonneg(double y) {
  double t = y + 0x1p52; /* ISO C arithmetic: never folded (no -ffast-math) */
  return t - 0x1p52;
}

/* ---- packed codes -------------------------------------------------------------------- */

/* Code of storage element i (bits 2, 4, 6, 8, 16 or 32; little-endian,
 * sub-byte LSB-first, 6-bit four per three bytes). */
static inline uint32_t hq_get(const uint8_t *d, uint64_t i, unsigned bits) {
  switch (bits) {
    case 2: return (uint32_t)(d[i >> 2] >> ((i & 3u) * 2u)) & 3u;
    case 4: return (uint32_t)(d[i >> 1] >> ((i & 1u) * 4u)) & 15u;
    case 6: {
      const uint8_t *g = d + (i >> 2) * 3u;
      uint32_t w = (uint32_t)g[0] | ((uint32_t)g[1] << 8) | ((uint32_t)g[2] << 16);
      return (w >> ((i & 3u) * 6u)) & 63u;
    }
    case 8: return d[i];
    case 16: return hurray__ld16(d + 2 * i);
    default: return hurray__ld32(d + 4 * i);
  }
}

/* Stores code c (already masked to `bits`) as storage element i of a buffer
 * whose sub-byte elements are zero before the first store (the quantizer
 * clears the storage first), so sub-byte stores OR into place. */
static inline void hq_put(uint8_t *d, uint64_t i, unsigned bits, uint32_t c) {
  switch (bits) {
    case 2: d[i >> 2] = (uint8_t)(d[i >> 2] | (c << ((i & 3u) * 2u))); break;
    case 4: d[i >> 1] = (uint8_t)(d[i >> 1] | (c << ((i & 1u) * 4u))); break;
    case 6: {
      uint8_t *g = d + (i >> 2) * 3u;
      uint32_t w = c << ((i & 3u) * 6u);
      g[0] = (uint8_t)(g[0] | (uint8_t)w);
      g[1] = (uint8_t)(g[1] | (uint8_t)(w >> 8));
      g[2] = (uint8_t)(g[2] | (uint8_t)(w >> 16));
      break;
    }
    case 8: d[i] = (uint8_t)c; break;
    case 16: hurray__st16(d + 2 * i, (uint16_t)c); break;
    default: hurray__st32(d + 4 * i, c); break;
  }
}

/* hq_round_away for codes of at most 16 bits: |y| < 2^30. */
static inline int32_t hq_round_away32(float y) {
  int32_t i = (int32_t)y;
  float fr = y - (float)i;
  return i + (int32_t)(fr >= 0.5f) - (int32_t)(fr <= -0.5f);
}

static inline int32_t hq_sext(uint32_t code, unsigned bits) {
  if (bits >= 32) return (int32_t)code;
  uint32_t m = 1u << (bits - 1u);
  return (int32_t)((code ^ m) - m);
}

/* ---- the walk in logical order ---------------------------------------------------------- */

/*
 * Visits a row- or column-major quantized tensor in logical row-major order
 * as chunks: `len` consecutive input (or output) elements from `in_off`,
 * stored at storage elements st_off, st_off + st_stride, ..., all sharing
 * one parameter entry (`entry`: the scale index of the scheme). A row is the
 * last dimension; chunks never cross a row, a block or a channel.
 */
typedef enum { HQ_TENSOR = 0, HQ_CHANNEL = 1, HQ_BLOCK = 2 } HqKind;

typedef struct HqWalk {
  uint32_t rank;       /* >= 1 (a scalar walks as shape [1]) */
  uint32_t axis;       /* channel / block kinds */
  HqKind kind;
  uint64_t shape[HURRAY_MAX_RANK];
  uint64_t st[HURRAY_MAX_RANK];  /* storage strides, elements (padded extents) */
  uint64_t ost[HURRAY_MAX_RANK]; /* row-major strides over the non-axis dimensions */
  uint64_t idx[HURRAY_MAX_RANK]; /* odometer over dimensions 0 .. rank-2 */
  uint64_t K, nbpa;    /* block size, blocks per axis (block kind) */
  uint64_t n_last;     /* shape[rank-1] */
  uint64_t row, nrows; /* current row, number of rows */
  uint64_t t;          /* position in the row */
  uint64_t st_base, outer_base;
} HqWalk;

typedef struct HqChunk {
  uint64_t in_off, st_off, st_stride, len, entry;
} HqChunk;

/* Sets up the walk of f (row- or column-major, static shape, count > 0) with
 * plan p. */
static inline void hq_walk_init(HqWalk *w, const HurrayDescriptorFields *f,
                                const HurrayQuantPlan *p) {
  memset(w, 0, sizeof *w);
  bool col = f->layout.tag == HURRAY_LAYOUT_COL_MAJOR;
  w->rank = f->rank == 0 ? 1 : f->rank;
  for (uint32_t j = 0; j < w->rank; j++) w->shape[j] = f->rank == 0 ? 1 : f->shape[j];
  w->kind = !p->has_axis ? HQ_TENSOR : p->block_size == 0 ? HQ_CHANNEL : HQ_BLOCK;
  w->axis = p->has_axis ? p->axis : 0;
  uint32_t r = w->rank;
  uint64_t padded_axis = 0;
  if (w->kind == HQ_BLOCK) {
    w->K = p->block_size;
    uint64_t s = w->shape[w->axis];
    w->nbpa = s / w->K + (s % w->K != 0);
    padded_axis = p->pads_blocks ? w->nbpa * w->K : s;
  }
  uint64_t acc = 1;
  for (uint32_t k = 0; k < r; k++) { /* fastest-varying storage dimension first */
    uint32_t j = col ? k : r - 1u - k;
    w->st[j] = acc;
    acc *= (w->kind == HQ_BLOCK && j == w->axis) ? padded_axis : w->shape[j];
  }
  acc = 1;
  for (uint32_t k = r; k-- > 0;) {
    w->ost[k] = acc;
    if (w->kind == HQ_TENSOR || k != w->axis) acc *= w->shape[k];
  }
  w->n_last = w->shape[r - 1];
  w->nrows = 1;
  for (uint32_t j = 0; j + 1 < r; j++) w->nrows *= w->shape[j];
}

static inline bool hq_walk_next(HqWalk *w, HqChunk *c) {
  uint32_t L = w->rank - 1u;
  if (w->t == w->n_last) {
    if (++w->row >= w->nrows) return false;
    w->t = 0;
    for (uint32_t j = L; j-- > 0;) { /* the odometer over dimensions 0 .. L-1 */
      bool off_axis = w->kind == HQ_TENSOR || j != w->axis;
      w->idx[j]++;
      w->st_base += w->st[j];
      if (off_axis) w->outer_base += w->ost[j];
      if (w->idx[j] < w->shape[j]) break;
      w->st_base -= w->shape[j] * w->st[j];
      if (off_axis) w->outer_base -= w->shape[j] * w->ost[j];
      w->idx[j] = 0;
    }
  }
  uint64_t t = w->t, left = w->n_last - t;
  c->in_off = w->row * w->n_last + t;
  c->st_off = w->st_base + t * w->st[L];
  c->st_stride = w->st[L];
  switch (w->kind) {
    case HQ_TENSOR:
      c->entry = 0;
      c->len = left;
      break;
    case HQ_CHANNEL:
      if (w->axis == L) {
        c->entry = t;
        c->len = 1;
      } else {
        c->entry = w->idx[w->axis];
        c->len = left;
      }
      break;
    default:
      if (w->axis == L) {
        uint64_t in_block = w->K - t % w->K;
        c->entry = w->outer_base * w->nbpa + t / w->K;
        c->len = in_block < left ? in_block : left;
      } else {
        c->entry = (w->outer_base + t) * w->nbpa + w->idx[w->axis] / w->K;
        c->len = 1;
      }
      break;
  }
  w->t = t + c->len;
  return true;
}

#endif /* HURRAY_QUANT_KERNELS_H */
