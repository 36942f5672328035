/*
 * hurray_layout_to_row_major: the logical contents of a dense or sparse
 * tensor, packed in row-major order (layout.h); and the element-by-element
 * walk of a dense tensor in row- or column-major order that transcoding
 * (transcode.c) shares.
 */
#include "layout/layout_internal.h"

typedef struct CopyCtx {
  const HurrayDescriptorFields *f;
  HurrayElemFormat fmt;
  const HurrayBufView *v;
  uint8_t *dst;
  HurrayError *err;
} CopyCtx;

static HurrayStatus read_fail(const CopyCtx *c, uint32_t which, int64_t off) {
  char path[24];
  return hurray__fail(c->err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET,
                      hurray__path(path, sizeof path, "buffers[%u]", which),
                      "element at offset %lld (byte_offset %llu) lies outside buffer %u of %llu "
                      "bytes",
                      (long long)off, (unsigned long long)(which == 0 ? c->f->byte_offset : 0),
                      which, (unsigned long long)c->v[which].size);
}

/* Copies source element `off` of buffer `which` to destination element e. */
static HurrayStatus move(const CopyCtx *c, uint32_t which, uint64_t byte_offset, int64_t off,
                         uint64_t e) {
  if (c->fmt.bits >= 8) {
    uint64_t start;
    if (!hurray__elem_locate(&c->fmt, c->v[which].size, byte_offset, off, &start))
      return read_fail(c, which, off);
    memcpy(c->dst + e * c->fmt.bytes, c->v[which].p + start, c->fmt.bytes);
    return HURRAY_OK;
  }
  uint8_t val;
  if (!hurray__elem_read(&c->fmt, c->v[which].p, c->v[which].size, byte_offset, off, &val))
    return read_fail(c, which, off);
  hurray__elem_write(&c->fmt, c->dst, e, &val);
  return HURRAY_OK;
}

/* ---- dense ---------------------------------------------------------------------- */

/* Destination element e is the e-th index of the row-major order, or of the
 * column-major order when `col` (the first dimension varies fastest). */
static HurrayStatus copy_dense(const CopyCtx *c, uint64_t vol, bool col) {
  const HurrayDescriptorFields *f = c->f;
  uint32_t r = f->rank;
  uint8_t tag = f->layout.tag;
  uint64_t bo = f->byte_offset;
  if (tag == (col ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR) || r == 0) {
    /* Same packing on both sides: one bounded copy. */
    uint64_t n;
    if (!hurray__elem_size(&c->fmt, vol, &n) || bo > c->v[0].size || c->v[0].size - bo < n)
      return read_fail(c, 0, (int64_t)(vol - 1));
    memcpy(c->dst, c->v[0].p + bo, (size_t)n);
    /* Unused bits after the last element must be zero. */
    uint8_t zero = 0;
    if (c->fmt.bits < 8) {
      uint64_t per = c->fmt.bits == 6 ? 4 : 8 / c->fmt.bits;
      for (uint64_t e = vol; e % per != 0; e++) hurray__elem_write(&c->fmt, c->dst, e, &zero);
    }
    return HURRAY_OK;
  }
  uint64_t idx[64] = {0};
  int64_t off = 0;
  int64_t s[64], span[64];
  bool affine = tag == HURRAY_LAYOUT_COL_MAJOR || tag == HURRAY_LAYOUT_STRIDED;
  if (affine) {
    /* The whole range fits in int64 (checked), so every partial sum below does. */
    int64_t mn, mx;
    HURRAY_TRY(hurray__dense_offset_range(f, NULL, &mn, &mx, c->err));
    int64_t st = 1;
    for (uint32_t k = 0; k < r; k++) {
      if (tag == HURRAY_LAYOUT_STRIDED) {
        s[k] = f->layout.u.strided.strides[k];
      } else {
        s[k] = st;
        st *= (int64_t)f->shape[k];
      }
      span[k] = s[k] * (int64_t)(f->shape[k] - 1);
    }
  }
  for (uint64_t e = 0; e < vol; e++) {
    if (!affine && hurray__dense_offset(f, idx, &off) != HURRAY_OK)
      return hurray__fail(c->err, HURRAY_ERR_INVALID_LAYOUT, HURRAY_NO_OFFSET, "layout",
                          "element offset does not fit in 64 bits");
    HURRAY_TRY(move(c, 0, bo, off, e));
    for (uint32_t j = 0; j < r; j++) {
      uint32_t k = col ? j : r - 1 - j;
      if (idx[k] + 1 < f->shape[k]) {
        idx[k]++;
        if (affine) off += s[k];
        break;
      }
      idx[k] = 0;
      if (affine) off -= span[k];
    }
  }
  return HURRAY_OK;
}

HurrayStatus hurray__dense_copy(const HurrayDescriptorFields *f, const HurrayBufView *v,
                                const HurrayElemFormat *fmt, uint64_t vol, bool col, uint8_t *dst,
                                HurrayError *err) {
  CopyCtx c;
  c.f = f;
  c.fmt = *fmt;
  c.v = v;
  c.dst = dst;
  c.err = err;
  return copy_dense(&c, vol, col);
}

/* ---- sparse ------------------------------------------------------------------------ */

static HurrayStatus copy_coo(const CopyCtx *c) {
  const HurrayDescriptorFields *f = c->f;
  char path[24];
  uint32_t r = f->rank;
  uint64_t nnz = f->layout.u.coo.nnz;
  for (uint64_t i = 0; i < nnz; i++) {
    uint64_t pos = 0;
    for (uint32_t d = 0; d < r; d++) {
      uint64_t x;
      HURRAY_TRY(hurray__idx_read(c->v, 1, i * r + d, 8, "indices", &x, c->err));
      if (x >= f->shape[d])
        return hurray__fail(c->err, HURRAY_ERR_INVALID_INDEX_DATA, (i * r + d) * 8,
                            hurray__path(path, sizeof path, "buffers[1]"),
                            "indices entry %llu, dimension %u: %llu is outside shape[%u] = %llu",
                            (unsigned long long)i, d, (unsigned long long)x, d,
                            (unsigned long long)f->shape[d]);
      pos = pos * f->shape[d] + x; /* < volume, which fits */
    }
    HURRAY_TRY(move(c, 0, 0, (int64_t)i, pos));
  }
  return HURRAY_OK;
}

static HurrayStatus copy_compressed(const CopyCtx *c) {
  const HurrayDescriptorFields *f = c->f;
  bool csr = f->layout.tag == HURRAY_LAYOUT_CSR;
  uint64_t n = f->shape[csr ? 0 : 1], ncols = f->shape[1];
  for (uint64_t outer = 0; outer < n; outer++) {
    uint64_t a = hurray__ld64(c->v[2].p + 8 * outer), b = hurray__ld64(c->v[2].p + 8 * outer + 8);
    for (uint64_t j = a; j < b; j++) {
      uint64_t inner = hurray__ld64(c->v[1].p + 8 * j);
      uint64_t pos = csr ? outer * ncols + inner : inner * ncols + outer;
      HURRAY_TRY(move(c, 0, 0, (int64_t)j, pos));
    }
  }
  return HURRAY_OK;
}

static HurrayStatus copy_csf(const CopyCtx *c) {
  const HurrayDescriptorFields *f = c->f;
  uint32_t r = f->rank;
  const uint32_t *mo = f->layout.u.csf.mode_order;
  uint64_t lo[64], hi[64], coord[64];
  /* The index buffers were validated: positions are consistent and in range. */
  lo[0] = hurray__ld64(c->v[1].p);
  hi[0] = hurray__ld64(c->v[1].p + 8);
  uint32_t L = 0;
  for (;;) {
    if (lo[L] == hi[L]) {
      if (L == 0) break;
      L--;
      lo[L]++;
      continue;
    }
    uint64_t i = lo[L];
    coord[mo[L]] = hurray__ld64(c->v[2 * L + 2].p + 8 * i);
    if (L + 1 == r) {
      uint64_t pos = 0;
      for (uint32_t d = 0; d < r; d++) pos = pos * f->shape[d] + coord[d];
      HURRAY_TRY(move(c, 0, 0, (int64_t)i, pos));
      lo[L]++;
      continue;
    }
    const uint8_t *pos_next = c->v[2 * L + 3].p;
    lo[L + 1] = hurray__ld64(pos_next + 8 * i);
    hi[L + 1] = hurray__ld64(pos_next + 8 * i + 8);
    L++;
  }
  return HURRAY_OK;
}

/* ---- entry ------------------------------------------------------------------------- */

HurrayStatus hurray_layout_to_row_major(const HurrayDescriptorFields *f,
                                        const void *const *buffers, const uint64_t *sizes,
                                        void *dst, uint64_t dst_size, HurrayError *err) {
  if (f == NULL || (dst == NULL && dst_size != 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "fields and dst are required");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  uint8_t tag = f->layout.tag;
  HurrayLayoutClass cls = hurray_layout_class(tag);
  if (cls != HURRAY_LAYOUT_CLASS_DENSE && cls != HURRAY_LAYOUT_CLASS_SPARSE)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout_tag",
                        "cannot copy a %s tensor to row-major",
                        hurray_layout_name(tag) ? hurray_layout_name(tag) : "unknown");
  CopyCtx c;
  c.f = f;
  c.err = err;
  c.dst = (uint8_t *)dst;
  if (!hurray__elem_format(f, &c.fmt))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        "element type 0x%02X has no known storage format", f->type_tag);
  uint64_t vol, need;
  if (hurray__shape_has_dynamic(f->rank, f->shape))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "a dynamic dimension must be resolved before copying");
  if (!hurray__shape_volume(f->rank, f->shape, &vol) || !hurray__elem_size(&c.fmt, vol, &need) ||
      vol > (uint64_t)INT64_MAX)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, NULL,
                        "the tensor's row-major size does not fit in 64 bits");
  if (dst_size < need || need > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, NULL,
                        "destination holds %llu bytes, %llu needed",
                        (unsigned long long)dst_size, (unsigned long long)need);
  uint32_t base;
  (void)hurray__layout_base_buffer_count(tag, f->rank, &base);
  if (f->buffer_count < base)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "%s needs %u buffers, got %u", hurray_layout_name(tag), base,
                        f->buffer_count);
  HurrayBufView views[HURRAY_MAX_BUFFERS];
  HURRAY_TRY(hurray__buf_views(f, buffers, sizes, views, err));
  c.v = views;
  if (need > 0) memset(dst, 0, (size_t)need);
  if (vol == 0) return HURRAY_OK;
  if (cls == HURRAY_LAYOUT_CLASS_DENSE) return copy_dense(&c, vol, false);
  if (tag == HURRAY_LAYOUT_COO) return copy_coo(&c);
  HURRAY_TRY(hurray__index_check(f, views, err));
  return tag == HURRAY_LAYOUT_CSF ? copy_csf(&c) : copy_compressed(&c);
}
