/*
 * Element addressing of the dense layouts (row-major.md, column-major.md,
 * strided.md, tiled.md, morton.md, hilbert.md) and the offset ranges the
 * buffer-size rules use.
 */
#include "layout/layout_internal.h"

#define LT_ HURRAY_ERR_INVALID_LAYOUT

/* ---- Morton and Hilbert primitives ----------------------------------------- */

HurrayStatus hurray_morton_encode(uint32_t rank, const uint32_t *bits, const uint64_t *index,
                                  uint64_t *out) {
  if (out == NULL || (rank > 0 && (bits == NULL || index == NULL))) return HURRAY_ERR_NULL_POINTER;
  uint64_t code = 0;
  for (uint32_t d = 0; d < rank; d++) {
    if (bits[d] < 64 && (index[d] >> bits[d]) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
    uint32_t nb = bits[d] < 64 ? bits[d] : 64;
    for (uint32_t b = 0; b < nb; b++) {
      if (((index[d] >> b) & 1u) == 0) continue;
      uint64_t pos = (uint64_t)b * rank + d; /* literal spec formula */
      if (pos >= 64) return HURRAY_ERR_INVALID_ARGUMENT;
      code |= 1ull << pos;
    }
  }
  *out = code;
  return HURRAY_OK;
}

static bool hilbert_args_ok(uint32_t rank, uint32_t order) {
  return rank >= 1 && rank <= 64 && order >= 1 && (uint64_t)rank * order <= 64;
}

HurrayStatus hurray_hilbert_encode(uint32_t rank, uint32_t order, const uint64_t *coords,
                                   uint64_t *out) {
  if (coords == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  if (!hilbert_args_ok(rank, order)) return HURRAY_ERR_INVALID_ARGUMENT;
  uint64_t X[64];
  for (uint32_t d = 0; d < rank; d++) {
    if (order < 64 && (coords[d] >> order) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
    X[d] = coords[d];
  }
  /* Skilling (2004), CoordsToHilbert, as hilbert.md gives it. */
  uint64_t M = 1ull << (order - 1), Q, P, t;
  for (Q = M; Q > 1; Q >>= 1) {
    P = Q - 1;
    for (uint32_t i = 0; i < rank; i++) {
      if (X[i] & Q) {
        X[0] ^= P;
      } else {
        t = (X[0] ^ X[i]) & P;
        X[0] ^= t;
        X[i] ^= t;
      }
    }
  }
  for (uint32_t i = 1; i < rank; i++) X[i] ^= X[i - 1];
  t = 0;
  for (Q = M; Q > 1; Q >>= 1)
    if (X[rank - 1] & Q) t ^= Q - 1;
  for (uint32_t i = 0; i < rank; i++) X[i] ^= t;
  uint64_t h = 0;
  for (uint32_t b = 0; b < order; b++)
    for (uint32_t d = 0; d < rank; d++)
      h |= ((X[d] >> b) & 1u) << ((uint64_t)b * rank + (rank - 1 - d));
  *out = h;
  return HURRAY_OK;
}

HurrayStatus hurray_hilbert_decode(uint32_t rank, uint32_t order, uint64_t h, uint64_t *coords) {
  if (coords == NULL) return HURRAY_ERR_NULL_POINTER;
  if (!hilbert_args_ok(rank, order)) return HURRAY_ERR_INVALID_ARGUMENT;
  uint64_t total_bits = (uint64_t)rank * order;
  if (total_bits < 64 && (h >> total_bits) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
  uint64_t X[64];
  for (uint32_t d = 0; d < rank; d++) X[d] = 0;
  for (uint32_t b = 0; b < order; b++)
    for (uint32_t d = 0; d < rank; d++)
      X[d] |= ((h >> ((uint64_t)b * rank + (rank - 1 - d))) & 1u) << b;
  /* Skilling (2004), HilbertToCoords. */
  uint64_t t = X[rank - 1] >> 1;
  for (uint32_t i = rank - 1; i >= 1; i--) X[i] ^= X[i - 1];
  X[0] ^= t;
  /* The loop runs Q = 2, 4, ..., 2^(order-1); written so order = 64 cannot overflow. */
  for (uint32_t q = 1; q < order; q++) {
    uint64_t Q = 1ull << q, P = Q - 1;
    for (uint32_t i = rank; i-- > 0;) {
      if (X[i] & Q) {
        X[0] ^= P;
      } else {
        t = (X[0] ^ X[i]) & P;
        X[0] ^= t;
        X[i] ^= t;
      }
    }
  }
  for (uint32_t d = 0; d < rank; d++) coords[d] = X[d];
  return HURRAY_OK;
}

/* ---- offsets --------------------------------------------------------------------- */

/* Row-major (col == false) or column-major linear offset of idx in dims; false
 * when it does not fit in int64_t. */
static bool contiguous_offset(uint32_t r, const uint64_t *idx, const uint64_t *dims, bool col,
                              int64_t *out) {
  uint64_t off = 0;
  for (uint32_t j = 0; j < r; j++) {
    uint32_t k = col ? r - 1 - j : j;
    if (hurray__mul_overflow_u64(off, dims[k], &off) ||
        hurray__add_overflow_u64(off, idx[k], &off))
      return false;
  }
  if (off > (uint64_t)INT64_MAX) return false;
  *out = (int64_t)off;
  return true;
}

static bool strided_offset(uint32_t r, const uint64_t *idx, const int64_t *s, int64_t *out) {
  int64_t sum = 0, term;
  for (uint32_t k = 0; k < r; k++) {
    if (idx[k] > (uint64_t)INT64_MAX || hurray__mul_overflow_i64((int64_t)idx[k], s[k], &term) ||
        hurray__add_overflow_i64(sum, term, &sum))
      return false;
  }
  *out = sum;
  return true;
}

static bool tile_elems(uint32_t r, const uint64_t *ts, int64_t *out) {
  uint64_t n = 1;
  for (uint32_t k = 0; k < r; k++)
    if (hurray__mul_overflow_u64(n, ts[k], &n)) return false;
  if (n > (uint64_t)INT64_MAX) return false;
  *out = (int64_t)n;
  return true;
}

/* Offset of idx inside an index space of shape dims, levels[L..depth). */
static bool tiled_offset(const HurrayTiledLevel *lv, uint32_t L, uint32_t depth, uint32_t r,
                         const uint64_t *idx, const uint64_t *dims, int64_t *out) {
  const HurrayTiledLevel *t = &lv[L];
  uint64_t tile[64], intra[64], grid[64];
  for (uint32_t k = 0; k < r; k++) {
    tile[k] = idx[k] / t->tile_shape[k];
    intra[k] = idx[k] % t->tile_shape[k];
    grid[k] = dims[k] / t->tile_shape[k] + (dims[k] % t->tile_shape[k] != 0);
  }
  int64_t tnum, inner, T;
  bool ok = t->outer_layout == 3 ? strided_offset(r, tile, t->outer_strides, &tnum)
                                 : contiguous_offset(r, tile, grid, t->outer_layout == 2, &tnum);
  if (!ok || !tile_elems(r, t->tile_shape, &T)) return false;
  switch (t->inner_layout) {
    case 1:
    case 2:
      ok = contiguous_offset(r, intra, t->tile_shape, t->inner_layout == 2, &inner);
      break;
    case 3:
      ok = strided_offset(r, intra, t->inner_strides, &inner);
      break;
    default:
      ok = L + 1 < depth && tiled_offset(lv, L + 1, depth, r, intra, t->tile_shape, &inner);
      break;
  }
  return ok && !hurray__mul_overflow_i64(tnum, T, &tnum) &&
         !hurray__add_overflow_i64(tnum, inner, out);
}

HurrayStatus hurray__dense_offset(const HurrayDescriptorFields *f, const uint64_t *index,
                                  int64_t *out) {
  uint32_t r = f->rank;
  uint64_t u;
  bool ok;
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
      ok = contiguous_offset(r, index, f->shape, f->layout.tag == HURRAY_LAYOUT_COL_MAJOR, out);
      break;
    case HURRAY_LAYOUT_STRIDED:
      ok = strided_offset(r, index, f->layout.u.strided.strides, out);
      break;
    case HURRAY_LAYOUT_TILED:
      ok = tiled_offset(f->layout.u.tiled.levels, 0, f->layout.u.tiled.depth, r, index, f->shape,
                        out);
      break;
    case HURRAY_LAYOUT_MORTON:
      ok = hurray_morton_encode(r, f->layout.u.morton.bits, index, &u) == HURRAY_OK &&
           u <= (uint64_t)INT64_MAX;
      if (ok) *out = (int64_t)u;
      break;
    case HURRAY_LAYOUT_HILBERT:
      ok = hurray_hilbert_encode(r, f->layout.u.hilbert.order, index, &u) == HURRAY_OK &&
           u <= (uint64_t)INT64_MAX;
      if (ok) *out = (int64_t)u;
      break;
    default:
      return HURRAY_ERR_INVALID_ARGUMENT;
  }
  return ok ? HURRAY_OK : LT_;
}

/* ---- offset ranges ------------------------------------------------------------------ */

/* [min, max] of sum(i_k * s_k) over 0 <= i_k < n_k (every n_k >= 1). */
static bool strided_range(uint32_t r, const int64_t *s, const uint64_t *n, int64_t *mn,
                          int64_t *mx) {
  int64_t lo = 0, hi = 0, term;
  for (uint32_t k = 0; k < r; k++) {
    if (n[k] - 1 > (uint64_t)INT64_MAX ||
        hurray__mul_overflow_i64(s[k], (int64_t)(n[k] - 1), &term))
      return false;
    bool over = term < 0 ? hurray__add_overflow_i64(lo, term, &lo)
                         : hurray__add_overflow_i64(hi, term, &hi);
    if (over) return false;
  }
  *mn = lo;
  *mx = hi;
  return true;
}

static bool contiguous_count(uint32_t r, const uint64_t *n, int64_t *max) {
  uint64_t v = 1;
  for (uint32_t k = 0; k < r; k++)
    if (hurray__mul_overflow_u64(v, n[k], &v)) return false;
  if (v == 0 || v - 1 > (uint64_t)INT64_MAX) return false;
  *max = (int64_t)(v - 1);
  return true;
}

/* Range of a tiled level over an index space of shape dims (each >= 1), with
 * every tile counted whole (boundary tiles are padded). */
static bool tiled_range(const HurrayTiledLevel *lv, uint32_t L, uint32_t depth, uint32_t r,
                        const uint64_t *dims, int64_t *mn, int64_t *mx) {
  const HurrayTiledLevel *t = &lv[L];
  uint64_t grid[64] = {0}; /* zeroed: gcc -O2 + sanitizers cannot see r <= 64 */
  for (uint32_t k = 0; k < r; k++)
    grid[k] = dims[k] / t->tile_shape[k] + (dims[k] % t->tile_shape[k] != 0);
  int64_t tmin = 0, tmax, imin = 0, imax, T;
  bool ok = t->outer_layout == 3 ? strided_range(r, t->outer_strides, grid, &tmin, &tmax)
                                 : contiguous_count(r, grid, &tmax);
  if (!ok || !tile_elems(r, t->tile_shape, &T)) return false;
  switch (t->inner_layout) {
    case 1:
    case 2:
      imax = T - 1;
      break;
    case 3:
      ok = strided_range(r, t->inner_strides, t->tile_shape, &imin, &imax);
      break;
    default:
      ok = L + 1 < depth && tiled_range(lv, L + 1, depth, r, t->tile_shape, &imin, &imax);
      break;
  }
  return ok && !hurray__mul_overflow_i64(tmin, T, &tmin) &&
         !hurray__add_overflow_i64(tmin, imin, mn) && !hurray__mul_overflow_i64(tmax, T, &tmax) &&
         !hurray__add_overflow_i64(tmax, imax, mx);
}

HurrayStatus hurray__dense_offset_range(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                        int64_t *mn, int64_t *mx, HurrayError *err) {
  uint32_t r = f->rank;
  bool ok = true;
  uint64_t total_bits = 0;
  *mn = 0;
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
      ok = contiguous_count(r, f->shape, mx);
      break;
    case HURRAY_LAYOUT_STRIDED:
      ok = strided_range(r, f->layout.u.strided.strides, f->shape, mn, mx);
      break;
    case HURRAY_LAYOUT_TILED:
      ok = tiled_range(f->layout.u.tiled.levels, 0, f->layout.u.tiled.depth, r, f->shape, mn, mx);
      break;
    case HURRAY_LAYOUT_MORTON:
      for (uint32_t k = 0; k < r; k++) total_bits += f->layout.u.morton.bits[k];
      ok = total_bits <= 62;
      if (ok) *mx = (int64_t)((1ull << total_bits) - 1);
      break;
    case HURRAY_LAYOUT_HILBERT:
      total_bits = (uint64_t)f->layout.u.hilbert.order * r;
      ok = total_bits <= 62;
      if (ok) *mx = (int64_t)((1ull << total_bits) - 1);
      break;
    default:
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout_tag",
                          "not a dense layout");
  }
  if (!ok)
    return hurray__fail(err, LT_, hurray__at(o, o ? o->layout : 0, 0), "layout",
                        "the %s layout addresses offsets beyond 2^63 elements",
                        hurray_layout_name(f->layout.tag));
  return HURRAY_OK;
}
