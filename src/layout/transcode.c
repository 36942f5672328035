/*
 * Element-preserving transcoding of dense tensors (layout.h § Transcoding;
 * interchange.md § On-the-Fly Transcoding): the elements of a tensor, index
 * for index, packed in row-major or column-major order, and the descriptor
 * of the result.
 *
 * Whole-byte types go through boxes. A box is a block of elements whose
 * source offsets are affine (base + sum of i_k * s_k): the whole tensor for
 * row-major, column-major and strided sources, one tile (clipped to the
 * shape) for tiled ones, level by level down to an affine inner layout. A
 * box is bounds-checked once, by its two extreme elements, then copied into
 * the packed destination: dimensions that follow each other on both sides
 * are merged, and when the dimension that is fastest in the source is not
 * the one that is fastest in the destination (a transpose), the two are
 * walked in square blocks staged through a small buffer, so that both sides
 * are read and written a line at a time. Morton and Hilbert
 * sources and sub-byte types go element by element through the layout's
 * addressing (copy.c), in the target's order; a row-major target of those
 * is hurray_layout_to_row_major.
 */
#include "layout/layout_internal.h"

/* ---- checks shared by the three entry points ----------------------------------- */

typedef struct Plan {
  HurrayElemFormat fmt;
  uint64_t vol;   /* elements */
  uint64_t bytes; /* packed size of the result */
} Plan;

static HurrayStatus plan(const HurrayDescriptorFields *f, uint8_t target, Plan *p,
                         HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "the descriptor fields are required");
  if (target != HURRAY_LAYOUT_ROW_MAJOR && target != HURRAY_LAYOUT_COL_MAJOR) {
    const char *name = hurray_layout_name(target);
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "target",
                        "a tensor can be transcoded to row_major (0x01) or col_major (0x02), "
                        "not to %s (0x%02X)",
                        name != NULL ? name : "an unnamed layout", target);
  }
  uint8_t tag = f->layout.tag;
  if (hurray_layout_class(tag) != HURRAY_LAYOUT_CLASS_DENSE) {
    const char *name = hurray_layout_name(tag);
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout_tag",
                        "only dense tensors can be transcoded, not %s (0x%02X); send it in "
                        "its own layout",
                        name != NULL ? name : "a private or unknown layout", tag);
  }
  if (f->quantization != NULL)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "quantization",
                        "a quantized tensor cannot be transcoded (its parameters follow "
                        "the stored order); send it in its own layout");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  if (!hurray__elem_format(f, &p->fmt))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        "element type 0x%02X has no known storage format", f->type_tag);
  if (hurray__shape_has_dynamic(f->rank, f->shape))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "shape",
                        "a tensor with a dynamic dimension cannot be transcoded; resolve "
                        "the dimension first");
  if (f->rank == 0 && target == HURRAY_LAYOUT_COL_MAJOR)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "target",
                        "a scalar (rank 0) is row-major only; send it as row_major");
  if (!hurray__shape_volume(f->rank, f->shape, &p->vol) || p->vol > (uint64_t)INT64_MAX ||
      !hurray__elem_size(&p->fmt, p->vol, &p->bytes) || p->bytes > (uint64_t)INT64_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "the tensor's packed size does not fit in 63 bits");
  return HURRAY_OK;
}

HurrayStatus hurray_layout_transcode_size(const HurrayDescriptorFields *f, uint8_t target_tag,
                                          uint64_t *out_bytes, HurrayError *err) {
  if (out_bytes == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out_bytes", "NULL");
  Plan p;
  HURRAY_TRY(plan(f, target_tag, &p, err));
  *out_bytes = p.bytes;
  return HURRAY_OK;
}

/* ---- copying a box -------------------------------------------------------------- */

/* One element of W bytes (a constant, so memcpy becomes a load and a store). */
#define HT_LINE(NAME, W)                                                                     \
  static void NAME(uint8_t *q, int64_t dq, const uint8_t *p, int64_t dp, uint64_t n,         \
                   size_t w) {                                                               \
    (void)w;                                                                                 \
    for (uint64_t i = 0; i < n; i++) memcpy(q + (int64_t)i * dq, p + (int64_t)i * dp, (W));  \
  }

/* Bytes of the staging block of a transpose (on the stack). */
#define HT_STAGE 16384u

/* An na x nb plane: a is the source's fastest dimension, b the destination's.
 * It goes in blocks of at most TB x TB elements staged in a small buffer:
 * the block's source lines (along a) are read one after the other into it,
 * then its destination lines (along b) are written one after the other from
 * it, so each side is read or written a line at a time whatever its strides
 * (a power-of-two stride would otherwise keep evicting the lines a direct
 * element-by-element transpose is still using). TB * TB * W <= HT_STAGE. */
#define HT_PLANE(NAME, W, TB)                                                                \
  static void NAME(uint8_t *q, int64_t qa, int64_t qb, const uint8_t *p, int64_t pa,         \
                   int64_t pb, uint64_t na, uint64_t nb, size_t w) {                         \
    (void)w;                                                                                 \
    uint8_t stage[HT_STAGE];                                                                 \
    uint64_t tb = (TB);                                                                      \
    for (uint64_t i0 = 0; i0 < na; i0 += tb) {                                               \
      uint64_t ni = na - i0 < tb ? na - i0 : tb;                                             \
      for (uint64_t j0 = 0; j0 < nb; j0 += tb) {                                             \
        uint64_t nj = nb - j0 < tb ? nb - j0 : tb;                                           \
        for (uint64_t j = 0; j < nj; j++) {                                                  \
          const uint8_t *s = p + (int64_t)i0 * pa + (int64_t)(j0 + j) * pb;                  \
          uint8_t *t = stage + j * tb * (W);                                                 \
          if (pa == (int64_t)(W))                                                            \
            memcpy(t, s, (size_t)ni * (W));                                                  \
          else                                                                               \
            for (uint64_t i = 0; i < ni; i++) memcpy(t + i * (W), s + (int64_t)i * pa, (W)); \
        }                                                                                    \
        for (uint64_t i = 0; i < ni; i++) {                                                  \
          uint8_t *d = q + (int64_t)(i0 + i) * qa + (int64_t)j0 * qb;                        \
          const uint8_t *t = stage + i * (W);                                                \
          for (uint64_t j = 0; j < nj; j++) memcpy(d + (int64_t)j * qb, t + j * tb * (W), (W)); \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

/* The side of the staged block for elements of w bytes: the largest s <= 64
 * with s * s * w <= HT_STAGE (0 when not even 2 fit: no blocking then). */
static uint64_t ht_side(size_t w) {
  uint64_t s = 64;
  while (s >= 2 && s * s * w > HT_STAGE) s--;
  return s >= 2 ? s : 0;
}

HT_LINE(line1, 1)
HT_LINE(line2, 2)
HT_LINE(line4, 4)
HT_LINE(line8, 8)
HT_LINE(line16, 16)
HT_LINE(line_any, w)
HT_PLANE(plane1, 1, 64)
HT_PLANE(plane2, 2, 64)
HT_PLANE(plane4, 4, 64)
HT_PLANE(plane8, 8, 45)
HT_PLANE(plane16, 16, 32)
HT_PLANE(plane_any, w, ht_side(w))

typedef void (*LineFn)(uint8_t *, int64_t, const uint8_t *, int64_t, uint64_t, size_t);
typedef void (*PlaneFn)(uint8_t *, int64_t, int64_t, const uint8_t *, int64_t, int64_t, uint64_t,
                        uint64_t, size_t);

/* A box ready to copy: its dimensions of more than one element, outermost
 * first in the destination's order, byte strides on both sides. */
typedef struct Box {
  uint32_t m;
  uint64_t n[64];
  int64_t ss[64]; /* source */
  int64_t ds[64]; /* destination */
} Box;

static uint64_t abs_i64(int64_t v) { return v < 0 ? (uint64_t)(-(v + 1)) + 1u : (uint64_t)v; }

/* Copies box b from p (its element [0, ..., 0]) to q. Every element lies
 * inside both buffers (the caller checked). */
static void box_copy(uint8_t *q, const uint8_t *p, const Box *b, size_t w) {
  if (b->m == 0) {
    memcpy(q, p, w);
    return;
  }
  LineFn line = line_any;
  PlaneFn plane = plane_any;
  switch (w) {
    case 1:
      line = line1;
      plane = plane1;
      break;
    case 2:
      line = line2;
      plane = plane2;
      break;
    case 4:
      line = line4;
      plane = plane4;
      break;
    case 8:
      line = line8;
      plane = plane8;
      break;
    case 16:
      line = line16;
      plane = plane16;
      break;
    default: break;
  }
  uint32_t in = b->m - 1, a = in;
  for (uint32_t k = 0; k < in; k++)
    if (abs_i64(b->ss[k]) < abs_i64(b->ss[a])) a = k;
  bool blocked = a != in && ht_side(w) > 0;
  bool run = !blocked && b->ss[in] == (int64_t)w && b->ds[in] == (int64_t)w;
  uint64_t idx[64] = {0};
  for (;;) {
    if (blocked)
      plane(q, b->ds[a], b->ds[in], p, b->ss[a], b->ss[in], b->n[a], b->n[in], w);
    else if (run)
      memcpy(q, p, (size_t)(b->n[in] * w));
    else
      line(q, b->ds[in], p, b->ss[in], b->n[in], w);
    /* The next row (blocked: the next plane): a counter over the other
     * dimensions; a wrapping one steps back by (n - 1) strides. */
    uint32_t k = in;
    while (k-- > 0) {
      if (blocked && k == a) continue;
      if (idx[k] + 1 < b->n[k]) {
        idx[k]++;
        p += b->ss[k];
        q += b->ds[k];
        break;
      }
      p -= b->ss[k] * (int64_t)(b->n[k] - 1);
      q -= b->ds[k] * (int64_t)(b->n[k] - 1);
      idx[k] = 0;
    }
    if (k == UINT32_MAX) return;
  }
}

typedef struct Ctx {
  const HurrayDescriptorFields *f;
  HurrayElemFormat fmt;
  HurrayBufView v; /* buffer 0 */
  bool col;        /* target column-major */
  uint8_t *dst;
  int64_t dstride[64]; /* the target's byte stride of each dimension */
  HurrayError *err;
} Ctx;

static HurrayStatus outside(const Ctx *c, int64_t off) {
  return hurray__outside_buffer0(c->err, off, c->f->byte_offset, c->v.size);
}

static HurrayStatus too_far(const Ctx *c) {
  return hurray__fail(c->err, HURRAY_ERR_INVALID_LAYOUT, HURRAY_NO_OFFSET, "layout",
                      "element offset does not fit in 64 bits");
}

/* Copies the box of extent n at index org whose element at index org + i has
 * source offset base + sum(i[k] * s[k]) (in elements). */
static HurrayStatus emit(const Ctx *c, const uint64_t *org, const uint64_t *n, int64_t base,
                         const int64_t *s) {
  uint32_t r = c->f->rank;
  int64_t lo = base, hi = base, term;
  for (uint32_t k = 0; k < r; k++) {
    if (n[k] <= 1) continue;
    if (hurray__mul_overflow_i64(s[k], (int64_t)(n[k] - 1), &term) ||
        (term < 0 ? hurray__add_overflow_i64(lo, term, &lo)
                  : hurray__add_overflow_i64(hi, term, &hi)))
      return too_far(c);
  }
  /* The box's bytes run from its lowest element to the end of its highest. */
  uint64_t first, last;
  if (!hurray__elem_locate(&c->fmt, c->v.size, c->f->byte_offset, lo, &first))
    return outside(c, lo);
  if (!hurray__elem_locate(&c->fmt, c->v.size, c->f->byte_offset, hi, &last))
    return outside(c, hi);
  size_t w = c->fmt.bytes;
  /* (base - lo) * w <= last - first: no overflow */
  const uint8_t *p = c->v.p + first + (uint64_t)(base - lo) * w;
  uint8_t *q = c->dst;
  for (uint32_t k = 0; k < r; k++) q += org[k] * (uint64_t)c->dstride[k];
  /* The dimensions in the destination's order, merged where both sides
   * continue one another (innermost first, then put back in order). */
  Box b;
  uint32_t m = 0;
  uint64_t tn[64];
  int64_t tss[64], tds[64];
  for (uint32_t j = 0; j < r; j++) {
    uint32_t k = c->col ? j : r - 1 - j; /* innermost of the destination first */
    if (n[k] <= 1) continue;
    int64_t sb;
    if (hurray__mul_overflow_i64(s[k], (int64_t)w, &sb)) return too_far(c);
    int64_t db = c->dstride[k], span_s, span_d;
    if (m > 0 && !hurray__mul_overflow_i64(tss[m - 1], (int64_t)tn[m - 1], &span_s) &&
        !hurray__mul_overflow_i64(tds[m - 1], (int64_t)tn[m - 1], &span_d) && span_s == sb &&
        span_d == db) {
      tn[m - 1] *= n[k]; /* a product of extents: at most the element count */
      continue;
    }
    tn[m] = n[k];
    tss[m] = sb;
    tds[m] = db;
    m++;
  }
  b.m = m;
  for (uint32_t i = 0; i < m; i++) {
    b.n[i] = tn[m - 1 - i];
    b.ss[i] = tss[m - 1 - i];
    b.ds[i] = tds[m - 1 - i];
  }
  box_copy(q, p, &b, w);
  return HURRAY_OK;
}

/* Element strides of a packed row-major (col false) or column-major space. */
static void packed_strides(uint32_t r, const uint64_t *dims, bool col, int64_t *s) {
  int64_t st = 1;
  for (uint32_t j = 0; j < r; j++) {
    uint32_t k = col ? j : r - 1 - j;
    s[k] = st;
    st *= (int64_t)dims[k]; /* callers checked the volume */
  }
}

/* The tiles of level L over a space of shape dims whose first `clip`
 * elements per dimension are the tensor's (index org + i), element
 * [0, ..., 0] at offset base. */
static HurrayStatus tiles(const Ctx *c, uint32_t L, const uint64_t *dims, const uint64_t *org,
                          const uint64_t *clip, int64_t base) {
  const HurrayTiledLevel *t = &c->f->layout.u.tiled.levels[L];
  uint32_t r = c->f->rank;
  const uint64_t *ts = t->tile_shape;
  uint64_t grid[64], cnt[64], ti[64] = {0}, torg[64], tclip[64];
  int64_t gs[64], is[64], T = 1;
  for (uint32_t k = 0; k < r; k++) {
    grid[k] = dims[k] / ts[k] + (dims[k] % ts[k] != 0);
    cnt[k] = clip[k] / ts[k] + (clip[k] % ts[k] != 0);
    if (ts[k] > (uint64_t)INT64_MAX || hurray__mul_overflow_i64(T, (int64_t)ts[k], &T))
      return too_far(c);
  }
  /* Tile number strides of the grid. */
  if (t->outer_layout == 3) {
    for (uint32_t k = 0; k < r; k++) gs[k] = t->outer_strides[k];
  } else {
    int64_t st = 1;
    for (uint32_t j = 0; j < r; j++) {
      uint32_t k = t->outer_layout == 2 ? j : r - 1 - j;
      gs[k] = st;
      if (grid[k] > (uint64_t)INT64_MAX || hurray__mul_overflow_i64(st, (int64_t)grid[k], &st))
        return too_far(c);
    }
  }
  if (t->inner_layout == 1 || t->inner_layout == 2)
    packed_strides(r, ts, t->inner_layout == 2, is); /* T fits: so does every stride */
  else if (t->inner_layout == 3)
    for (uint32_t k = 0; k < r; k++) is[k] = t->inner_strides[k];
  for (;;) {
    int64_t tnum = 0, term, tb;
    for (uint32_t k = 0; k < r; k++) {
      if (hurray__mul_overflow_i64((int64_t)ti[k], gs[k], &term) ||
          hurray__add_overflow_i64(tnum, term, &tnum))
        return too_far(c);
      torg[k] = org[k] + ti[k] * ts[k];
      uint64_t left = clip[k] - ti[k] * ts[k];
      tclip[k] = left < ts[k] ? left : ts[k];
    }
    if (hurray__mul_overflow_i64(tnum, T, &tb) || hurray__add_overflow_i64(base, tb, &tb))
      return too_far(c);
    if (t->inner_layout == 4)
      HURRAY_TRY(tiles(c, L + 1, ts, torg, tclip, tb));
    else
      HURRAY_TRY(emit(c, torg, tclip, tb, is));
    /* Tiles in the destination's order. */
    uint32_t j = 0;
    for (; j < r; j++) {
      uint32_t k = c->col ? j : r - 1 - j;
      if (++ti[k] < cnt[k]) break;
      ti[k] = 0;
    }
    if (j == r) return HURRAY_OK;
  }
}

/* ---- transcoding ---------------------------------------------------------------- */

HurrayStatus hurray_layout_transcode(const HurrayDescriptorFields *f, const void *const *buffers,
                                     const uint64_t *sizes, uint8_t target_tag, void *dst,
                                     uint64_t dst_size, HurrayError *err) {
  Plan p;
  HURRAY_TRY(plan(f, target_tag, &p, err));
  if (dst == NULL && p.bytes > 0)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "dst",
                        "NULL destination for %llu bytes", (unsigned long long)p.bytes);
  if (dst_size < p.bytes || p.bytes > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "dst",
                        "destination holds %llu bytes, %llu needed",
                        (unsigned long long)dst_size, (unsigned long long)p.bytes);
  if (f->buffer_count < 1)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "%s needs 1 buffer, got 0", hurray_layout_name(f->layout.tag));
  HurrayBufView views[HURRAY_MAX_BUFFERS];
  HURRAY_TRY(hurray__buf_views(f, buffers, sizes, views, err));
  if (p.vol == 0) return HURRAY_OK;
  uint8_t tag = f->layout.tag;
  bool col = target_tag == HURRAY_LAYOUT_COL_MAJOR;
  bool boxes = p.fmt.bits >= 8 && tag != HURRAY_LAYOUT_MORTON && tag != HURRAY_LAYOUT_HILBERT;
  if (!boxes) {
    if (!col) return hurray_layout_to_row_major(f, buffers, sizes, dst, dst_size, err);
    if (p.fmt.bits < 8) memset(dst, 0, (size_t)p.bytes); /* elements replace their bits */
    return hurray__dense_copy(f, views, &p.fmt, p.vol, true, (uint8_t *)dst, err);
  }
  Ctx c;
  c.f = f;
  c.fmt = p.fmt;
  c.v = views[0];
  c.col = col;
  c.dst = (uint8_t *)dst;
  c.err = err;
  uint32_t r = f->rank;
  packed_strides(r, f->shape, col, c.dstride); /* volume <= INT64_MAX */
  for (uint32_t k = 0; k < r; k++) c.dstride[k] *= (int64_t)p.fmt.bytes; /* <= bytes */
  uint64_t zero[64] = {0};
  int64_t s[64];
  switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
      packed_strides(r, f->shape, tag == HURRAY_LAYOUT_COL_MAJOR, s);
      return emit(&c, zero, f->shape, 0, s);
    case HURRAY_LAYOUT_STRIDED:
      return emit(&c, zero, f->shape, 0, f->layout.u.strided.strides);
    default: /* tiled */
      return tiles(&c, 0, f->shape, zero, f->shape, 0);
  }
}

/* ---- the descriptor of the result ----------------------------------------------- */

HurrayStatus hurray_descriptor_transcoded(const HurrayDescriptor *d, uint8_t target_tag,
                                          HurrayDescriptor **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "NULL");
  *out = NULL;
  if (d == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "the descriptor is required");
  HurrayDescriptorFields f;
  HurrayStatus st = hurray_descriptor_fields(d, &f);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, NULL, "the descriptor cannot be read");
  Plan p;
  HURRAY_TRY(plan(&f, target_tag, &p, err));
  if (f.buffer_count < 1)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "a dense tensor has 1 buffer, got 0");
  HurrayBufferHandle h = f.buffers[0];
  h.byte_size = p.bytes;
  HurrayDescriptorFields n = f;
  memset(&n.layout, 0, sizeof n.layout);
  n.layout.tag = target_tag;
  n.byte_offset = 0;
  n.buffer_count = 1;
  n.buffers = &h;
  /* As strict as the source allows: a descriptor that only a permissive
   * decode accepts (an unknown device tag, reserved flags) stays one. */
  uint32_t opt = hurray_descriptor_validate(&f, HURRAY_DECODE_STRICT, NULL) == HURRAY_OK
                     ? HURRAY_DECODE_STRICT
                     : HURRAY_DECODE_PERMISSIVE;
  return hurray_descriptor_from_fields(&n, opt, out, err);
}
