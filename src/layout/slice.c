/*
 * Partial reads of dense tensors (layout.h § Partial reads): the checks of a
 * selection, the runs it is made of, and their copy into a packed row-major
 * destination.
 *
 * The output is walked in row-major order. For the affine layouts
 * (row-major, column-major, strided) the source offset of each output index
 * is base + sum(j[k] * t[k]); the innermost dimensions whose steps make the
 * elements follow each other in the source form one run, copied at once. For
 * the other dense layouts (tiled, Morton, Hilbert) every element's offset
 * comes from the layout's addressing. Either way consecutive runs that touch
 * are merged before they are copied, so a tile row or a contiguous slab is
 * one copy whatever produced it.
 */
#include "internal/slice.h"
#include "layout/layout_internal.h"

#define MAXR 64

/* A checked selection. */
typedef struct Sel {
  HurrayElemFormat fmt;
  uint64_t n[MAXR];     /* elements selected per dimension */
  uint64_t first[MAXR]; /* source index of output index 0 */
  uint64_t vol;         /* elements selected */
  uint64_t bytes;       /* packed row-major size */
} Sel;

static HurrayStatus check(const HurrayDescriptorFields *f, const HurraySliceRange *ranges,
                          Sel *s, HurrayError *err) {
  char path[40];
  if (f == NULL || (f->rank > 0 && ranges == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "fields and ranges are required");
  uint8_t tag = f->layout.tag;
  if (hurray_layout_class(tag) != HURRAY_LAYOUT_CLASS_DENSE)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout_tag",
                        "cannot slice a %s tensor (dense layouts only)",
                        hurray_layout_name(tag) ? hurray_layout_name(tag) : "private or unknown");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  if (!hurray__elem_format(f, &s->fmt))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        "element type 0x%02X has no known storage format", f->type_tag);
  if (hurray__shape_has_dynamic(f->rank, f->shape))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "a dynamic dimension must be resolved before slicing");
  uint64_t vol = 1;
  bool over = false;
  for (uint32_t k = 0; k < f->rank; k++) {
    const HurraySliceRange *q = &ranges[k];
    uint64_t dim = f->shape[k];
    if ((q->flags & ~HURRAY_SLICE_REVERSE) != 0)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "ranges[%u].flags", k),
                          "unknown flags 0x%X", (unsigned)(q->flags & ~HURRAY_SLICE_REVERSE));
    if (q->step == 0)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "ranges[%u].step", k),
                          "the step of dimension %u must be at least 1", k);
    if (q->start > dim)
      return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "ranges[%u].start", k),
                          "start %llu is outside dimension %u of size %llu",
                          (unsigned long long)q->start, k, (unsigned long long)dim);
    if (q->stop > dim)
      return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "ranges[%u].stop", k),
                          "stop %llu is outside dimension %u of size %llu",
                          (unsigned long long)q->stop, k, (unsigned long long)dim);
    uint64_t n = q->stop > q->start ? (q->stop - q->start - 1) / q->step + 1 : 0;
    s->n[k] = n;
    /* (n - 1) * step <= stop - start - 1: no overflow */
    s->first[k] = n > 0 && (q->flags & HURRAY_SLICE_REVERSE) ? q->start + (n - 1) * q->step
                                                             : q->start;
    if (hurray__mul_overflow_u64(vol, n, &vol)) over = true;
  }
  if (over) {
    /* A product that overflowed is 0 when a later count is 0. */
    for (uint32_t k = 0; k < f->rank; k++)
      if (s->n[k] == 0) over = false;
    vol = 0;
  }
  if (over || vol > (uint64_t)INT64_MAX || !hurray__elem_size(&s->fmt, vol, &s->bytes))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "ranges",
                        "the selection's size does not fit in 64 bits");
  s->vol = vol;
  return HURRAY_OK;
}

HurrayStatus hurray_layout_slice_shape(const HurrayDescriptorFields *f,
                                       const HurraySliceRange *ranges, uint64_t *out_shape,
                                       uint64_t *out_bytes, HurrayError *err) {
  Sel s;
  HURRAY_TRY(check(f, ranges, &s, err));
  if (out_shape != NULL)
    for (uint32_t k = 0; k < f->rank; k++) out_shape[k] = s.n[k];
  if (out_bytes != NULL) *out_bytes = s.bytes;
  return HURRAY_OK;
}

/* ---- copying runs ------------------------------------------------------------------ */

/* A run: n elements at source offsets off, off + 1, ... going to destination
 * elements e, e + 1, ... */
typedef struct Run {
  int64_t off;
  uint64_t e;
  uint64_t n;
} Run;

typedef struct Gather {
  const HurrayDescriptorFields *f;
  const Sel *s;
  const HurraySliceSource *src;
  uint8_t *dst;
  HurrayError *err;
  uint64_t per;  /* sub-byte: elements per unit */
  uint64_t unit; /* sub-byte: bytes per unit (1, or 3 for 6-bit groups) */
  Run pend;
  bool has_pend;
} Gather;

static HurrayStatus outside(const Gather *g, int64_t off) {
  return hurray__outside_buffer0(g->err, off, g->f->byte_offset, g->src->size);
}

/* Byte position of element `off` (its unit for sub-byte types), with `len`
 * bytes from there inside buffer 0. */
static HurrayStatus locate(const Gather *g, int64_t off, uint64_t len, uint64_t *pos) {
  if (!hurray__elem_locate(&g->s->fmt, g->src->size, g->f->byte_offset, off, pos) ||
      g->src->size - *pos < len)
    return outside(g, off);
  return HURRAY_OK;
}

static HurrayStatus get(const Gather *g, uint64_t pos, uint64_t len, uint8_t *out) {
  if (g->src->base != NULL) {
    if (g->src->will_read != NULL && len >= HURRAY__SLICE_HINT_BYTES) {
      /* In chunks, each announced while the one before is copied: one hint
       * for a whole large piece makes the kernel read ahead past its end. */
      const uint64_t chunk = HURRAY__SLICE_HINT_CHUNK;
      const uint8_t *p = g->src->base + pos;
      g->src->will_read(p, (size_t)(len < chunk ? len : chunk));
      for (uint64_t done = 0; done < len; done += chunk) {
        uint64_t n = len - done < chunk ? len - done : chunk;
        uint64_t rest = len - done - n;
        if (rest > 0) g->src->will_read(p + done + n, (size_t)(rest < chunk ? rest : chunk));
        memcpy(out + done, p + done, (size_t)n);
      }
      return HURRAY_OK;
    }
    memcpy(out, g->src->base + pos, (size_t)len);
    return HURRAY_OK;
  }
  return g->src->read(g->src->ctx, pos, len, out, g->err);
}

/* One sub-byte element: read its unit, take its bits, write them at e. */
static HurrayStatus one(const Gather *g, int64_t off, uint64_t e) {
  uint64_t pos;
  uint8_t b[3] = {0, 0, 0};
  HURRAY_TRY(locate(g, off, g->unit, &pos));
  HURRAY_TRY(get(g, pos, g->unit, b));
  int64_t per = (int64_t)g->per;
  int64_t j = off - hurray__floor_div_i64(off, per) * per;
  uint32_t bits = g->s->fmt.bits;
  uint8_t v;
  if (bits == 6) {
    uint32_t w = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16);
    v = (uint8_t)((w >> (6 * j)) & 0x3Fu);
  } else {
    v = (uint8_t)(((unsigned)b[0] >> (j * (int64_t)bits)) & ((1u << bits) - 1u));
  }
  hurray__elem_write(&g->s->fmt, g->dst, e, &v);
  return HURRAY_OK;
}

static HurrayStatus copy_run(const Gather *g, const Run *r) {
  const HurrayElemFormat *fmt = &g->s->fmt;
  uint64_t pos;
  if (fmt->bits >= 8) {
    uint64_t len = r->n * fmt->bytes; /* <= the selection's size */
    HURRAY_TRY(locate(g, r->off, len, &pos));
    return get(g, pos, len, g->dst + r->e * fmt->bytes);
  }
  /* Sub-byte: whole units are copied as bytes when the element's place in
   * its unit is the same on both sides; the rest element by element. */
  uint64_t i = 0, per = g->per;
  int64_t phase = r->off - hurray__floor_div_i64(r->off, (int64_t)per) * (int64_t)per;
  if ((uint64_t)phase == r->e % per) {
    uint64_t head = (per - r->e % per) % per;
    if (head > r->n) head = r->n;
    for (; i < head; i++) HURRAY_TRY(one(g, r->off + (int64_t)i, r->e + i));
    uint64_t units = (r->n - i) / per;
    if (units > 0) {
      uint64_t len = units * g->unit;
      HURRAY_TRY(locate(g, r->off + (int64_t)i, len, &pos));
      HURRAY_TRY(get(g, pos, len, g->dst + (r->e + i) / per * g->unit));
      i += units * per;
    }
  }
  for (; i < r->n; i++) HURRAY_TRY(one(g, r->off + (int64_t)i, r->e + i));
  return HURRAY_OK;
}

/* Adds n elements at source offset off (destination: the next ones);
 * merged into the pending run when they follow it in the source. */
static HurrayStatus emit(Gather *g, int64_t off, uint64_t e, uint64_t n) {
  int64_t next;
  if (g->has_pend && !hurray__add_overflow_i64(g->pend.off, (int64_t)g->pend.n, &next) &&
      next == off) {
    g->pend.n += n;
    return HURRAY_OK;
  }
  if (g->has_pend) HURRAY_TRY(copy_run(g, &g->pend));
  g->pend.off = off;
  g->pend.e = e;
  g->pend.n = n;
  g->has_pend = true;
  return HURRAY_OK;
}

static HurrayStatus too_far(const Gather *g) {
  return hurray__fail(g->err, HURRAY_ERR_INVALID_LAYOUT, HURRAY_NO_OFFSET, "layout",
                      "an element offset does not fit in 64 bits");
}

/* Row-major, column-major and strided: offsets are affine in the index. */
static HurrayStatus walk_affine(Gather *g, const HurraySliceRange *ranges) {
  const HurrayDescriptorFields *f = g->f;
  const Sel *s = g->s;
  uint32_t r = f->rank;
  int64_t t[MAXR], span[MAXR], base = 0, stride = 1;
  /* The whole range of the layout fits in int64_t (checked by the caller), so
   * the contiguous strides do too. */
  if (f->layout.tag == HURRAY_LAYOUT_STRIDED) {
    for (uint32_t k = 0; k < r; k++) t[k] = f->layout.u.strided.strides[k];
  } else if (f->layout.tag == HURRAY_LAYOUT_ROW_MAJOR) {
    for (uint32_t k = r; k-- > 0;) {
      t[k] = stride;
      if (k > 0 && hurray__mul_overflow_i64(stride, (int64_t)f->shape[k], &stride))
        return too_far(g);
    }
  } else {
    for (uint32_t k = 0; k < r; k++) {
      t[k] = stride;
      if (k + 1 < r && hurray__mul_overflow_i64(stride, (int64_t)f->shape[k], &stride))
        return too_far(g);
    }
  }
  /* t[k]: element stride of dimension k; now the stride of the selection. */
  for (uint32_t k = 0; k < r; k++) {
    int64_t term = 0;
    if (t[k] != 0 &&
        (s->first[k] > (uint64_t)INT64_MAX ||
         hurray__mul_overflow_i64((int64_t)s->first[k], t[k], &term)))
      return too_far(g);
    if (hurray__add_overflow_i64(base, term, &base)) return too_far(g);
    if (s->n[k] <= 1 || t[k] == 0) {
      t[k] = 0;
    } else {
      if (ranges[k].step > (uint64_t)INT64_MAX) return too_far(g);
      int64_t step = (int64_t)ranges[k].step;
      if ((ranges[k].flags & HURRAY_SLICE_REVERSE) != 0) step = -step;
      if (hurray__mul_overflow_i64(step, t[k], &t[k])) return too_far(g);
    }
    if (hurray__mul_overflow_i64(t[k], (int64_t)(s->n[k] - 1), &span[k])) return too_far(g);
  }
  /* The innermost dimensions that make one contiguous run. */
  uint64_t run = 1;
  uint32_t kr = r;
  while (kr > 0 && (s->n[kr - 1] == 1 || t[kr - 1] == (int64_t)run)) {
    run *= s->n[kr - 1];
    kr--;
  }
  uint64_t j[MAXR] = {0};
  int64_t off = base; /* inside the layout's range (checked): every sum below fits */
  for (uint64_t e = 0; e < s->vol; e += run) {
    HURRAY_TRY(emit(g, off, e, run));
    for (uint32_t k = kr; k-- > 0;) {
      if (j[k] + 1 < s->n[k]) {
        j[k]++;
        off += t[k];
        break;
      }
      j[k] = 0;
      off -= span[k];
    }
  }
  return HURRAY_OK;
}

/* Tiled, Morton, Hilbert: each element through the layout's addressing. */
static HurrayStatus walk_addressed(Gather *g, const HurraySliceRange *ranges) {
  const HurrayDescriptorFields *f = g->f;
  const Sel *s = g->s;
  uint32_t r = f->rank;
  uint64_t j[MAXR] = {0}, x[MAXR] = {0};
  for (uint32_t k = 0; k < r; k++) x[k] = s->first[k];
  for (uint64_t e = 0; e < s->vol; e++) {
    int64_t off;
    if (hurray__dense_offset(f, x, &off) != HURRAY_OK) return too_far(g);
    HURRAY_TRY(emit(g, off, e, 1));
    for (uint32_t k = r; k-- > 0;) {
      if (j[k] + 1 < s->n[k]) {
        j[k]++;
        if ((ranges[k].flags & HURRAY_SLICE_REVERSE) != 0)
          x[k] -= ranges[k].step;
        else
          x[k] += ranges[k].step;
        break;
      }
      j[k] = 0;
      x[k] = s->first[k];
    }
  }
  return HURRAY_OK;
}

HurrayStatus hurray__slice_gather(const HurrayDescriptorFields *f, const HurraySliceRange *ranges,
                                  const HurraySliceSource *src, void *dst, uint64_t dst_size,
                                  HurrayError *err) {
  Sel s;
  HURRAY_TRY(check(f, ranges, &s, err));
  if (dst == NULL && s.bytes > 0)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "dst", "NULL");
  if (dst_size < s.bytes || s.bytes > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "dst",
                        "destination holds %llu bytes, the selection needs %llu",
                        (unsigned long long)dst_size, (unsigned long long)s.bytes);
  if (s.vol == 0) return HURRAY_OK;
  int64_t mn, mx;
  HURRAY_TRY(hurray__dense_offset_range(f, NULL, &mn, &mx, err));
  Gather g;
  memset(&g, 0, sizeof g);
  g.f = f;
  g.s = &s;
  g.src = src;
  g.dst = (uint8_t *)dst;
  g.err = err;
  if (s.fmt.bits < 8) {
    g.per = s.fmt.bits == 6 ? 4 : 8 / s.fmt.bits;
    g.unit = s.fmt.bits == 6 ? 3 : 1;
    /* The unused bits of a partial last unit are zero. */
    if (s.vol % g.per != 0) memset(g.dst + s.bytes - g.unit, 0, (size_t)g.unit);
  }
  uint8_t tag = f->layout.tag;
  bool affine = tag == HURRAY_LAYOUT_ROW_MAJOR || tag == HURRAY_LAYOUT_COL_MAJOR ||
                tag == HURRAY_LAYOUT_STRIDED;
  HURRAY_TRY(affine ? walk_affine(&g, ranges) : walk_addressed(&g, ranges));
  return g.has_pend ? copy_run(&g, &g.pend) : HURRAY_OK;
}

HurrayStatus hurray_layout_slice_to_row_major(const HurrayDescriptorFields *f,
                                              const void *const *buffers, const uint64_t *sizes,
                                              const HurraySliceRange *ranges, void *dst,
                                              uint64_t dst_size, HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "fields are required");
  Sel s;
  HURRAY_TRY(check(f, ranges, &s, err));
  if (f->buffer_count < 1)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "%s needs 1 buffer, got 0", hurray_layout_name(f->layout.tag));
  HurrayBufView views[HURRAY_MAX_BUFFERS];
  HURRAY_TRY(hurray__buf_views(f, buffers, sizes, views, err));
  HurraySliceSource src;
  memset(&src, 0, sizeof src);
  src.base = views[0].p;
  src.size = views[0].size;
  if (src.base == NULL) {
    /* An empty buffer 0: every selected element lies outside it. */
    static const uint8_t none[1] = {0};
    src.base = none;
  }
  return hurray__slice_gather(f, ranges, &src, dst, dst_size, err);
}
