/*
 * NumPy's basic indexing over a shape (layout.h § Partial reads,
 * hurray_layout_basic_index): integers (negative ones from the end), slices
 * with any step (clamped to the dimension, as Python's slice.indices), one
 * ellipsis, new axes, and fewer indices than dimensions, turned into one
 * HurraySliceRange per dimension and the result's shape. A binding parses
 * its own index syntax into HurrayIndexItems; the arithmetic and the rules
 * are here.
 */
#include "layout/layout_internal.h"

#define REFUSE(st, ...) hurray__fail(err, st, HURRAY_NO_OFFSET, NULL, __VA_ARGS__)

/* A slice bound clamped to [0, dim] (a negative step: [-1, dim - 1]), as
 * Python's PySlice_AdjustIndices. */
static int64_t clamp(int64_t v, int64_t dim, int64_t step) {
  if (v < 0) {
    v += dim;
    if (v < 0) v = step < 0 ? -1 : 0;
  } else if (v >= dim) {
    v = step < 0 ? dim - 1 : dim;
  }
  return v;
}

/* Item `it` (a slice) over dimension k of `dim` elements: the range and the count. */
static HurrayStatus take_slice(const HurrayIndexItem *it, uint32_t k, uint64_t dim,
                               HurraySliceRange *r, uint64_t *count, HurrayError *err) {
  if (dim > (uint64_t)INT64_MAX)
    return REFUSE(HURRAY_ERR_UNSUPPORTED,
                  "dimension %u has %llu elements, beyond what a slice can address", k,
                  (unsigned long long)dim);
  int64_t step = it->step, d = (int64_t)dim;
  if (step == 0) return REFUSE(HURRAY_ERR_INVALID_ARGUMENT, "slice step cannot be zero");
  if (step < -INT64_MAX) step = -INT64_MAX;
  int64_t start = clamp(it->start, d, step), stop = clamp(it->stop, d, step);
  uint64_t n = 0, s;
  *r = (HurraySliceRange){0, 0, 1, 0};
  if (step > 0) {
    s = (uint64_t)step;
    if (start < stop) n = ((uint64_t)stop - (uint64_t)start - 1u) / s + 1u;
    if (n > 0) *r = (HurraySliceRange){(uint64_t)start, (uint64_t)start + (n - 1u) * s + 1u, s, 0};
  } else {
    /* start, start + step, ... (descending): the same indices from the lowest */
    s = (uint64_t)(-(step + 1)) + 1u;
    if (stop < start) n = ((uint64_t)(start - stop) - 1u) / s + 1u;
    if (n > 0)
      *r = (HurraySliceRange){(uint64_t)start - (n - 1u) * s, (uint64_t)start + 1u, s,
                              HURRAY_SLICE_REVERSE};
  }
  *count = n;
  return HURRAY_OK;
}

HurrayStatus hurray_layout_basic_index(uint32_t rank, const uint64_t *shape,
                                       const HurrayIndexItem *items, uint32_t count,
                                       HurraySliceRange *ranges, uint64_t *out_shape,
                                       uint32_t *out_rank, HurrayError *err) {
  if ((rank > 0 && (shape == NULL || ranges == NULL)) || (count > 0 && items == NULL) ||
      out_shape == NULL || out_rank == NULL)
    return HURRAY_ERR_NULL_POINTER;
  *out_rank = 0;
  uint32_t consuming = 0, ellipses = 0;
  for (uint32_t i = 0; i < count; i++) {
    if (items[i].kind == HURRAY_INDEX_ELLIPSIS) ellipses++;
    else if (items[i].kind == HURRAY_INDEX_INTEGER || items[i].kind == HURRAY_INDEX_SLICE)
      consuming++;
    else if (items[i].kind != HURRAY_INDEX_NEWAXIS)
      return REFUSE(HURRAY_ERR_INVALID_ARGUMENT, "item %u: kind %u is no index kind", i,
                    items[i].kind);
  }
  if (ellipses > 1)
    return REFUSE(HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                  "an index can only have a single ellipsis ('...')");
  if (consuming > rank)
    return REFUSE(HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                  "too many indices: the tensor is %u-dimensional, but %u were indexed", rank,
                  consuming);
  uint32_t k = 0, out = 0;
  for (uint32_t i = 0; i <= count; i++) {
    const HurrayIndexItem *it = i < count ? &items[i] : NULL;
    /* an ellipsis, and the end of the index, take the dimensions left whole */
    uint32_t whole = it == NULL ? rank - k
                     : it->kind == HURRAY_INDEX_ELLIPSIS ? rank - consuming
                                                         : 0;
    for (uint32_t e = 0; e < whole; e++, k++) {
      if (out >= HURRAY_MAX_RANK) goto too_many;
      ranges[k] = (HurraySliceRange){0, shape[k], 1, 0};
      out_shape[out++] = shape[k];
    }
    if (it == NULL || it->kind == HURRAY_INDEX_ELLIPSIS) continue;
    if (it->kind == HURRAY_INDEX_NEWAXIS) {
      if (out >= HURRAY_MAX_RANK) goto too_many;
      out_shape[out++] = 1;
    } else if (it->kind == HURRAY_INDEX_SLICE) {
      uint64_t n = 0;
      HURRAY_TRY(take_slice(it, k, shape[k], &ranges[k], &n, err));
      if (out >= HURRAY_MAX_RANK) goto too_many;
      out_shape[out++] = n;
      k++;
    } else {
      /* -dim <= v < dim, negative values counted from the end */
      int64_t v = it->start;
      uint64_t back = v < 0 ? (uint64_t)(-(v + 1)) + 1u : 0;
      if (v >= 0 ? (uint64_t)v >= shape[k] : back > shape[k])
        return REFUSE(HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                      "index %lld is out of bounds for axis %u with size %llu", (long long)v, k,
                      (unsigned long long)shape[k]);
      uint64_t at = v >= 0 ? (uint64_t)v : shape[k] - back;
      ranges[k] = (HurraySliceRange){at, at + 1u, 1, 0};
      k++;
    }
  }
  *out_rank = out;
  return HURRAY_OK;
too_many:
  return REFUSE(HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                "the result would have more than %u dimensions", HURRAY_MAX_RANK);
}
