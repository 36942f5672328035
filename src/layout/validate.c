/*
 * Layout rules of a descriptor (src/internal/validate.h): rank rules, layout
 * payload semantics, composite head rules, buffer counts, byte_offset rules
 * and the minimum byte size of every layout buffer.
 *
 * Spec: data-model.md (scalars, dynamic dims), memory-layout.md (byte_offset,
 * buffer table), layouts/\*.md, quantization.md (placement, for counting).
 */
#include <stdio.h>

#include "layout/layout_internal.h"

#define LT_ HURRAY_ERR_INVALID_LAYOUT
#define CMP_ HURRAY_ERR_INVALID_COMPOSITE

/* ---- element formats and shapes -------------------------------------------- */

bool hurray__elem_format(const HurrayDescriptorFields *f, HurrayElemFormat *out) {
  uint32_t bits;
  const HurrayDtypeInfo *info = hurray_dtype_info(f->type_tag);
  if (info != NULL) {
    bits = info->bit_width;
  } else if (hurray_dtype_tag_kind(f->type_tag) == HURRAY_TAG_PRIVATE &&
             f->extension_type != NULL) {
    const HurrayExtensionType *x = f->extension_type;
    uint64_t probe;
    if (hurray_extension_buffer_size_bytes(x->bit_width, x->packing_factor, 1, &probe) !=
        HURRAY_OK)
      return false;
    bits = x->bit_width;
  } else {
    return false;
  }
  if (bits == 1 || bits == 2 || bits == 4 || bits == 6) {
    out->bits = bits;
    out->bytes = 0;
    return true;
  }
  if (bits == 0 || bits % 8 != 0) return false;
  out->bits = bits;
  out->bytes = bits / 8;
  return true;
}

bool hurray__elem_size(const HurrayElemFormat *fmt, uint64_t count, uint64_t *out) {
  if (fmt->bits == 6) return !hurray__mul_overflow_u64(count / 4 + (count % 4 != 0), 3, out);
  if (fmt->bits < 8) {
    uint64_t per = 8 / fmt->bits;
    *out = count / per + (count % per != 0);
    return true;
  }
  return !hurray__mul_overflow_u64(count, fmt->bytes, out);
}

HurrayStatus hurray__outside_buffer0(HurrayError *err, int64_t off, uint64_t byte_offset,
                                     uint64_t size) {
  return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET, "buffers[0]",
                      "element at offset %lld (byte_offset %llu) lies outside buffer 0 of %llu "
                      "bytes",
                      (long long)off, (unsigned long long)byte_offset, (unsigned long long)size);
}

bool hurray__elem_span(const HurrayElemFormat *fmt, int64_t off, int64_t *first, int64_t *last) {
  if (fmt->bits == 6) {
    int64_t g = hurray__floor_div_i64(off, 4);
    if (hurray__mul_overflow_i64(g, 3, first)) return false;
    return !hurray__add_overflow_i64(*first, 2, last);
  }
  if (fmt->bits < 8) {
    *first = hurray__floor_div_i64(off, (int64_t)(8 / fmt->bits));
    *last = *first;
    return true;
  }
  if (hurray__mul_overflow_i64(off, (int64_t)fmt->bytes, first)) return false;
  return !hurray__add_overflow_i64(*first, (int64_t)fmt->bytes - 1, last);
}

bool hurray__shape_has_dynamic(uint32_t rank, const uint64_t *shape) {
  for (uint32_t k = 0; k < rank; k++)
    if (shape[k] == HURRAY_DYNAMIC_DIM) return true;
  return false;
}

bool hurray__shape_volume(uint32_t rank, const uint64_t *shape, uint64_t *out) {
  uint64_t v = 1;
  bool zero = false;
  for (uint32_t k = 0; k < rank; k++) {
    if (shape[k] == HURRAY_DYNAMIC_DIM) return false;
    if (shape[k] == 0) zero = true;
  }
  if (zero) {
    *out = 0;
    return true;
  }
  for (uint32_t k = 0; k < rank; k++)
    if (hurray__mul_overflow_u64(v, shape[k], &v)) return false;
  *out = v;
  return true;
}

/* ---- composite head ---------------------------------------------------------- */

HurrayStatus hurray__composite_head_check(const HurrayDescriptorFields *f,
                                          const HurrayOffsets *o, uint32_t options,
                                          HurrayError *err) {
  char path[48];
  uint64_t lay = o ? o->layout : 0;
  if (f->layout.tag != HURRAY_LAYOUT_COMPOSITE)
    return hurray__fail(err, CMP_, hurray__at(o, 15, 0), "layout_tag",
                        "a composite head has layout 0x0B, not 0x%02X", f->layout.tag);
  uint8_t rule = f->layout.u.composite.rule;
  uint8_t op = f->layout.u.composite.combine_op;
  uint32_t n = f->layout.u.composite.member_count;
  bool private_rule = rule >= 0xF0 && rule <= 0xFE;
  if (private_rule) {
    if ((options & HURRAY_DECODE_PERMISSIVE) == 0)
      return hurray__fail(err, CMP_, hurray__at(o, lay, 0), "layout.composition_rule",
                          "private composition rule 0x%02X is only accepted in permissive "
                          "mode",
                          rule);
  } else if (rule < HURRAY_COMPOSITE_PARTITION || rule > HURRAY_COMPOSITE_GROUP) {
    return hurray__fail(err, CMP_, hurray__at(o, lay, 0), "layout.composition_rule",
                        "composition rule 0x%02X is %s (1 partition, 2 overlay, 3 group)", rule,
                        (rule == 0x00 || rule == 0xFF) ? "invalid" : "reserved");
  }
  if (rule == HURRAY_COMPOSITE_OVERLAY) {
    if (op != HURRAY_COMBINE_REPLACE && op != HURRAY_COMBINE_ADD)
      return hurray__fail(err, CMP_, hurray__at(o, lay, 1), "layout.combine_op",
                          "an overlay's combine_op must be 1 (replace) or 2 (add), got 0x%02X",
                          op);
  } else if (!private_rule && op != HURRAY_COMBINE_NONE) {
    return hurray__fail(err, CMP_, hurray__at(o, lay, 1), "layout.combine_op",
                        "combine_op must be 0 for a %s composite, got 0x%02X",
                        rule == HURRAY_COMPOSITE_PARTITION ? "partition" : "group", op);
  }
  if (n == HURRAY_COMPOSITE_OPEN_COUNT)
    return hurray__fail(err, CMP_, hurray__at(o, lay, 4), "layout.member_count",
                        "member_count 0xFFFFFFFF (open composite) is reserved");
  if (rule == HURRAY_COMPOSITE_OVERLAY && n == 0)
    return hurray__fail(err, CMP_, hurray__at(o, lay, 4), "layout.member_count",
                        "an overlay needs a base member, member_count is 0");
  if (rule == HURRAY_COMPOSITE_PARTITION || rule == HURRAY_COMPOSITE_OVERLAY) {
    for (uint32_t k = 0; k < f->rank; k++)
      if (f->shape[k] == HURRAY_DYNAMIC_DIM)
        return hurray__fail(err, CMP_, hurray__at(o, o ? o->shape : 0, 8u * k),
                            hurray__path(path, sizeof path, "shape[%u]", k),
                            "a %s head needs a static shape, dimension %u is dynamic",
                            rule == HURRAY_COMPOSITE_PARTITION ? "partition" : "overlay", k);
  }
  if (f->buffer_count != 0)
    return hurray__fail(err, CMP_, hurray__at(o, o ? o->buffer_table : 0, 0), "buffer_count",
                        "a composite head owns no buffers, buffer_count is %u",
                        f->buffer_count);
  if (f->byte_offset != 0)
    return hurray__fail(err, CMP_, hurray__at(o, o ? o->byte_offset : 0, 0), "byte_offset",
                        "a composite head's byte_offset must be 0, got %llu",
                        (unsigned long long)f->byte_offset);
  if (f->quantization != NULL)
    return hurray__fail(err, CMP_, hurray__at(o, o ? o->quantization : 0, 0), "quantization",
                        "a composite head holds no data and cannot be quantized");
  if (f->composite_member != NULL)
    return hurray__fail(err, CMP_, hurray__at(o, o ? o->composite_member : 0, 0),
                        "composite_member",
                        "HAS_COMPOSITE_MEMBER is for members, a head must not set it");
  return HURRAY_OK;
}

/* ---- shape tier ------------------------------------------------------------- */

static HurrayStatus check_tiled(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                HurrayError *err) {
  char path[64];
  uint32_t r = f->rank;
  uint32_t depth = f->layout.u.tiled.depth;
  const HurrayTiledLevel *lv = f->layout.u.tiled.levels;
  uint64_t at = o ? o->layout : 0; /* start of the current level's block */
  if (depth < 1 || depth > HURRAY_MAX_TILED_DEPTH || lv == NULL)
    return hurray__fail(err, LT_, hurray__at(o, at, 0), "layout.tiled",
                        "tiled depth must be 1..%u, got %u", HURRAY_MAX_TILED_DEPTH, depth);
  for (uint32_t L = 0; L < depth; L++) {
    const HurrayTiledLevel *t = &lv[L];
    if (t->tile_shape == NULL)
      return hurray__fail(err, LT_, hurray__at(o, at, 0),
                          hurray__path(path, sizeof path, "layout.tiled[%u].tile_shape", L),
                          "missing");
    for (uint32_t k = 0; k < r; k++)
      if (t->tile_shape[k] == 0)
        return hurray__fail(
            err, LT_, hurray__at(o, at, 8u * k),
            hurray__path(path, sizeof path, "layout.tiled[%u].tile_shape[%u]", L, k),
            "tile sizes must be > 0");
    if (t->outer_layout < 1 || t->outer_layout > 3)
      return hurray__fail(
          err, LT_, hurray__at(o, at, 8u * r),
          hurray__path(path, sizeof path, "layout.tiled[%u].outer_layout", L),
          "must be 1 (row-major), 2 (col-major) or 3 (strided), got 0x%02X", t->outer_layout);
    bool last = L + 1 == depth;
    if (t->inner_layout < 1 || t->inner_layout > 4 || (t->inner_layout == 4) == last)
      return hurray__fail(
          err, LT_, hurray__at(o, at, 8u * r + 1),
          hurray__path(path, sizeof path, "layout.tiled[%u].inner_layout", L),
          "0x%02X does not fit a level %u of %u (4 = nested, on every level but the last)",
          t->inner_layout, L, depth);
    /* Stride arrays are read only for a strided level; on other levels they
     * are ignored (and never encoded). */
    if (t->outer_layout == 3 && t->outer_strides == NULL)
      return hurray__fail(
          err, LT_, hurray__at(o, at, 8u * r + 4),
          hurray__path(path, sizeof path, "layout.tiled[%u].outer_strides", L),
          "required when outer_layout is 3 (strided)");
    if (t->inner_layout == 3 && t->inner_strides == NULL)
      return hurray__fail(
          err, LT_, hurray__at(o, at, 8u * r + 4),
          hurray__path(path, sizeof path, "layout.tiled[%u].inner_strides", L),
          "required when inner_layout is 3 (strided)");
    at += 8u * r + 4 + (t->outer_layout == 3 ? 8u * r : 0) + (t->inner_layout == 3 ? 8u * r : 0);
  }
  return HURRAY_OK;
}

static HurrayStatus check_block_paged(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                      HurrayError *err) {
  uint64_t lay = o ? o->layout : 0;
  if (f->rank != 3)
    return hurray__fail(err, LT_, hurray__at(o, 16, 0), "rank",
                        "block-paged needs rank 3 ([tokens, heads, head_dim]), got %u", f->rank);
  uint32_t page_size = f->layout.u.block_paged.page_size;
  uint32_t paged_axis = f->layout.u.block_paged.paged_axis;
  uint8_t kv_role = f->layout.u.block_paged.kv_role;
  uint8_t itype = f->layout.u.block_paged.block_table_index_type;
  uint64_t num_pages = f->layout.u.block_paged.num_pages;
  if (page_size < 1)
    return hurray__fail(err, LT_, hurray__at(o, lay, 0), "layout.page_size", "must be >= 1");
  if (paged_axis != 0)
    return hurray__fail(err, LT_, hurray__at(o, lay, 12), "layout.paged_axis",
                        "must be 0 in this version, got %u", paged_axis);
  if (kv_role > HURRAY_KV_ROLE_FUSED)
    return hurray__fail(err, LT_, hurray__at(o, lay, 20), "layout.kv_role",
                        "must be 0 (key), 1 (value) or 2 (fused), got 0x%02X", kv_role);
  if (itype > HURRAY_BLOCK_INDEX_U64)
    return hurray__fail(err, LT_, hurray__at(o, lay, 25), "layout.block_table_index_type",
                        "must be 0 (uint32) or 1 (uint64), got 0x%02X", itype);
  /* block-paged.md: a uint32 table addresses up to 0xFFFFFFFF pages. */
  if (itype == HURRAY_BLOCK_INDEX_U32 && num_pages > UINT32_MAX)
    return hurray__fail(err, LT_, hurray__at(o, lay, 4), "layout.num_pages",
                        "%llu pages need a uint64 block table (uint32 addresses up to "
                        "4294967295 pages)",
                        (unsigned long long)num_pages);
  return HURRAY_OK;
}

static HurrayStatus check_hilbert(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                  HurrayError *err) {
  char path[32];
  uint64_t lay = o ? o->layout : 0;
  uint32_t order = f->layout.u.hilbert.order;
  uint32_t hr = f->layout.u.hilbert.rank;
  if (order == 0)
    return hurray__fail(err, LT_, hurray__at(o, lay, 0), "layout.hilbert_order",
                        "must be > 0");
  if (order >= 64)
    return hurray__fail(err, LT_, hurray__at(o, lay, 0), "layout.hilbert_order",
                        "%u: dimensions of 2^%u elements cannot be represented", order, order);
  if (hr < 2)
    return hurray__fail(err, LT_, hurray__at(o, lay, 4), "layout.hilbert_rank",
                        "must be >= 2, got %u", hr);
  if (hr != f->rank)
    return hurray__fail(err, LT_, hurray__at(o, lay, 4), "layout.hilbert_rank",
                        "%u differs from the tensor rank %u", hr, f->rank);
  uint64_t side = 1ull << order;
  for (uint32_t k = 0; k < f->rank; k++) {
    if (f->shape[k] == HURRAY_DYNAMIC_DIM) continue; /* resolved later */
    if (f->shape[k] != side)
      return hurray__fail(err, LT_, hurray__at(o, o ? o->shape : 0, 8u * k),
                          hurray__path(path, sizeof path, "shape[%u]", k),
                          "a Hilbert layout of order %u needs every dimension = %llu, got %llu",
                          order, (unsigned long long)side, (unsigned long long)f->shape[k]);
  }
  return HURRAY_OK;
}

HurrayStatus hurray__layout_check_shape(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                        uint32_t options, HurrayError *err) {
  char path[40];
  uint8_t tag = f->layout.tag;
  uint64_t lay = o ? o->layout : 0;
  if (f->rank > 64)
    return hurray__fail(err, LT_, hurray__at(o, 16, 0), "rank", "rank %u exceeds 64", f->rank);
  if (f->rank > 0 && f->shape == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "shape", "NULL");
  if (tag == HURRAY_LAYOUT_COMPOSITE) return hurray__composite_head_check(f, o, options, err);
  if (hurray_layout_tag_kind(tag) != HURRAY_TAG_NAMED) {
    if ((options & HURRAY_DECODE_PERMISSIVE) && hurray_layout_tag_kind(tag) != HURRAY_TAG_INVALID)
      return HURRAY_OK;
    return hurray__fail(err, LT_, hurray__at(o, 15, 0), "layout_tag",
                        "layout tag 0x%02X is not one this library reads", tag);
  }
  if (f->rank == 0 && tag != HURRAY_LAYOUT_ROW_MAJOR)
    return hurray__fail(err, LT_, hurray__at(o, 16, 0), "rank",
                        "a scalar (rank 0) must be row-major, not %s", hurray_layout_name(tag));
  switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
      return HURRAY_OK;
    case HURRAY_LAYOUT_STRIDED:
      if (f->layout.u.strided.strides == NULL)
        return hurray__fail(err, LT_, hurray__at(o, lay, 0), "layout.strides", "missing");
      return HURRAY_OK;
    case HURRAY_LAYOUT_TILED:
      return check_tiled(f, o, err);
    case HURRAY_LAYOUT_MORTON: {
      const uint32_t *bits = f->layout.u.morton.bits;
      if (bits == NULL)
        return hurray__fail(err, LT_, hurray__at(o, lay, 0), "layout.morton_bits", "missing");
      for (uint32_t k = 0; k < f->rank; k++) {
        hurray__path(path, sizeof path, "layout.morton_bits[%u]", k);
        if (bits[k] == 0) return hurray__fail(err, LT_, hurray__at(o, lay, 4u * k), path,
                                              "must be > 0");
        if (f->shape[k] != HURRAY_DYNAMIC_DIM && bits[k] < 64 && f->shape[k] > (1ull << bits[k]))
          return hurray__fail(err, LT_, hurray__at(o, lay, 4u * k), path,
                              "shape[%u] = %llu exceeds 2^%u", k,
                              (unsigned long long)f->shape[k], bits[k]);
      }
      return HURRAY_OK;
    }
    case HURRAY_LAYOUT_COO:
      /* A permissive relay keeps an out-of-domain byte to write it back. */
      if (f->layout.u.coo.is_sorted > 1 && !(options & HURRAY_DECODE_PERMISSIVE))
        return hurray__fail(err, LT_, hurray__at(o, lay, 8), "layout.is_sorted",
                            "must be 0 or 1, got %u", f->layout.u.coo.is_sorted);
      return HURRAY_OK;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      if (f->rank != 2)
        return hurray__fail(err, LT_, hurray__at(o, 16, 0), "rank", "%s needs rank 2, got %u",
                            hurray_layout_name(tag), f->rank);
      return HURRAY_OK;
    case HURRAY_LAYOUT_CSF: {
      if (f->rank < 3)
        return hurray__fail(err, LT_, hurray__at(o, 16, 0), "rank",
                            "csf needs rank >= 3, got %u", f->rank);
      const uint32_t *mo = f->layout.u.csf.mode_order;
      if (mo == NULL)
        return hurray__fail(err, LT_, hurray__at(o, lay, 8), "layout.mode_order", "missing");
      if (options & HURRAY_DECODE_PERMISSIVE) return HURRAY_OK; /* spec: permissive may keep */
      uint64_t seen = 0;
      for (uint32_t L = 0; L < f->rank; L++) {
        hurray__path(path, sizeof path, "layout.mode_order[%u]", L);
        if (mo[L] >= f->rank)
          return hurray__fail(err, LT_, hurray__at(o, lay, 8u + 4u * L), path,
                              "%u is not a dimension of a rank-%u tensor", mo[L], f->rank);
        if (seen & (1ull << mo[L]))
          return hurray__fail(err, LT_, hurray__at(o, lay, 8u + 4u * L), path,
                              "dimension %u appears twice; mode_order must be a permutation",
                              mo[L]);
        seen |= 1ull << mo[L];
      }
      return HURRAY_OK;
    }
    case HURRAY_LAYOUT_BLOCK_PAGED:
      return check_block_paged(f, o, err);
    case HURRAY_LAYOUT_HILBERT:
      return check_hilbert(f, o, err);
    default:
      return HURRAY_OK;
  }
}

/* ---- minimum buffer sizes ------------------------------------------------------ */

static HurrayStatus size_overflow(const HurrayOffsets *o, uint32_t i, HurrayError *err) {
  char path[32];
  return hurray__fail(err, LT_, hurray__at(o, o ? o->layout : 0, 0),
                      hurray__path(path, sizeof path, "buffers[%u]", i),
                      "the layout implies a size beyond 2^64 bytes");
}

static HurrayStatus values_size(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                uint32_t i, uint64_t count, uint64_t *out, HurrayError *err) {
  HurrayElemFormat fmt;
  if (!hurray__elem_format(f, &fmt)) return HURRAY_ERR_UNSUPPORTED;
  if (!hurray__elem_size(&fmt, count, out)) return size_overflow(o, i, err);
  return HURRAY_OK;
}

static HurrayStatus dense_min_size(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                   uint64_t *out, HurrayError *err) {
  HurrayElemFormat fmt;
  uint64_t vol;
  if (!hurray__elem_format(f, &fmt)) return HURRAY_ERR_UNSUPPORTED;
  if (!hurray__shape_volume(f->rank, f->shape, &vol)) {
    /* No dynamic dims here, so the element count itself overflows. */
    return size_overflow(o, 0, err);
  }
  if (vol == 0) {
    *out = f->byte_offset;
    return HURRAY_OK;
  }
  int64_t mn, mx, first, last, unused;
  HURRAY_TRY(hurray__dense_offset_range(f, o, &mn, &mx, err));
  if (!hurray__elem_span(&fmt, mn, &first, &unused) || !hurray__elem_span(&fmt, mx, &unused, &last))
    return size_overflow(o, 0, err);
  if (first < 0 && (uint64_t)(-(first + 1)) + 1 > f->byte_offset)
    return hurray__fail(err, LT_, hurray__at(o, o ? o->byte_offset : 0, 0), "byte_offset",
                        "%llu does not reach the element at offset %lld (%lld bytes before "
                        "byte_offset)",
                        (unsigned long long)f->byte_offset, (long long)mn, (long long)first);
  /* Element [0, ..., 0] is at offset 0, so last >= 0. */
  if (last < 0 || hurray__add_overflow_u64(f->byte_offset, (uint64_t)last + 1, out))
    return size_overflow(o, 0, err);
  return HURRAY_OK;
}

HurrayStatus hurray__layout_min_size(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                     uint32_t i, uint64_t *out, HurrayError *err) {
  uint32_t r = f->rank;
  if (hurray__shape_has_dynamic(r, f->shape)) return HURRAY_ERR_UNSUPPORTED;
  uint64_t v;
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
    case HURRAY_LAYOUT_STRIDED:
    case HURRAY_LAYOUT_TILED:
    case HURRAY_LAYOUT_MORTON:
    case HURRAY_LAYOUT_HILBERT:
      if (i != 0) return HURRAY_ERR_INVALID_ARGUMENT;
      return dense_min_size(f, o, out, err);
    case HURRAY_LAYOUT_COO: {
      uint64_t nnz = f->layout.u.coo.nnz;
      if (i == 0) return values_size(f, o, i, nnz, out, err);
      if (i != 1) return HURRAY_ERR_INVALID_ARGUMENT;
      if (hurray__mul_overflow_u64(nnz, r, &v) || hurray__mul_overflow_u64(v, 8, out))
        return size_overflow(o, i, err);
      return HURRAY_OK;
    }
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC: {
      uint64_t nnz = f->layout.u.csr.nnz;
      uint64_t n = f->shape[f->layout.tag == HURRAY_LAYOUT_CSR ? 0 : 1];
      if (i == 0) return values_size(f, o, i, nnz, out, err);
      if (i == 1) {
        if (hurray__mul_overflow_u64(nnz, 8, out)) return size_overflow(o, i, err);
        return HURRAY_OK;
      }
      if (i != 2) return HURRAY_ERR_INVALID_ARGUMENT;
      if (hurray__add_overflow_u64(n, 1, &v) || hurray__mul_overflow_u64(v, 8, out))
        return size_overflow(o, i, err);
      return HURRAY_OK;
    }
    case HURRAY_LAYOUT_CSF: {
      uint64_t nnz = f->layout.u.csf.nnz;
      if (i == 0) return values_size(f, o, i, nnz, out, err);
      if (i > 2 * r) return HURRAY_ERR_INVALID_ARGUMENT;
      if (i == 1) {
        *out = 16; /* pos_0 = [0, n_0] */
      } else if (i == 2 * r) {
        if (hurray__mul_overflow_u64(nnz, 8, out)) return size_overflow(o, i, err);
      } else if (i % 2 == 1) {
        *out = nnz > 0 ? 16 : 8; /* pos_L: n_{L-1} + 1 entries, n_{L-1} >= 1 when nnz > 0 */
      } else {
        *out = nnz > 0 ? 8 : 0; /* crd_L: n_L >= 1 entries when nnz > 0 */
      }
      return HURRAY_OK;
    }
    case HURRAY_LAYOUT_BLOCK_PAGED: {
      uint64_t w = hurray_block_index_width(f->layout.u.block_paged.block_table_index_type);
      if (i == 0) {
        if (hurray__mul_overflow_u64(f->layout.u.block_paged.num_pages,
                                     f->layout.u.block_paged.page_size, &v) ||
            hurray__mul_overflow_u64(v, f->shape[1], &v) ||
            hurray__mul_overflow_u64(v, f->shape[2], &v))
          return size_overflow(o, i, err);
        return values_size(f, o, i, v, out, err);
      }
      if (i == 1) {
        *out = 0; /* seq_ptr[num_seqs] entries: content-dependent */
        return HURRAY_OK;
      }
      if (i != 2) return HURRAY_ERR_INVALID_ARGUMENT;
      *out = ((uint64_t)f->layout.u.block_paged.num_seqs + 1) * w;
      return HURRAY_OK;
    }
    default:
      return HURRAY_ERR_UNSUPPORTED;
  }
}

/* ---- the whole set of layout rules --------------------------------------------- */

HurrayStatus hurray__layout_validate(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                     uint32_t options, HurrayError *err) {
  char path[40];
  HURRAY_TRY(hurray__layout_check_shape(f, o, options, err));
  uint8_t tag = f->layout.tag;
  uint32_t base;
  if (tag == HURRAY_LAYOUT_COMPOSITE || !hurray__layout_base_buffer_count(tag, f->rank, &base))
    return HURRAY_OK; /* composite: checked above; unknown tag: permissive relay */

  /* Buffer count: the layout's own buffers plus the scheme's parameter buffers. */
  uint64_t bt = o ? o->buffer_table : 0;
  uint32_t params = 0;
  bool exact = true;
  if (f->quantization != NULL) exact = hurray__quant_param_buffer_count(f->quantization, &params);
  if (exact && f->buffer_count != base + params)
    return hurray__fail(err, HURRAY_ERR_INVALID_BUFFER_TABLE, hurray__at(o, bt, 0),
                        "buffer_count",
                        "%s needs exactly %u buffers (%u for the layout + %u quantization "
                        "parameter buffers), found %u",
                        hurray_layout_name(tag), base + params, base, params, f->buffer_count);
  if (!exact && f->buffer_count < base)
    return hurray__fail(err, HURRAY_ERR_INVALID_BUFFER_TABLE, hurray__at(o, bt, 0),
                        "buffer_count", "%s needs at least %u buffers, found %u",
                        hurray_layout_name(tag), base, f->buffer_count);
  if (f->buffer_count > 0 && f->buffers == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "buffers", "NULL");

  /* byte_offset. */
  HurrayLayoutClass cls = hurray_layout_class(tag);
  if (cls != HURRAY_LAYOUT_CLASS_DENSE) {
    if (f->byte_offset != 0)
      return hurray__fail(err, LT_, hurray__at(o, o ? o->byte_offset : 0, 0), "byte_offset",
                          "must be 0 for a %s layout (%s), got %llu",
                          cls == HURRAY_LAYOUT_CLASS_SPARSE ? "sparse" : "indirect",
                          hurray_layout_name(tag), (unsigned long long)f->byte_offset);
  } else if (f->byte_offset > f->buffers[0].byte_size) {
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, hurray__at(o, o ? o->byte_offset : 0, 0),
                        "byte_offset", "%llu is past the end of buffer 0 (%llu bytes)",
                        (unsigned long long)f->byte_offset,
                        (unsigned long long)f->buffers[0].byte_size);
  }

  /* Minimum sizes of the layout's buffers (skipped when not computable). */
  for (uint32_t i = 0; i < base; i++) {
    uint64_t need;
    HurrayStatus st = hurray__layout_min_size(f, o, i, &need, err);
    if (st == HURRAY_ERR_UNSUPPORTED) continue;
    if (st != HURRAY_OK) return st;
    if (f->buffers[i].byte_size < need)
      return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, hurray__at(o, bt, 1u + 16u * i),
                          hurray__path(path, sizeof path, "buffers[%u].byte_size", i),
                          "%s buffer %u needs at least %llu bytes, has %llu",
                          hurray_layout_name(tag), i, (unsigned long long)need,
                          (unsigned long long)f->buffers[i].byte_size);
  }
  return HURRAY_OK;
}

/* ---- public ------------------------------------------------------------------------ */

HurrayStatus hurray_layout_validate_shape(const HurrayDescriptorFields *f, uint32_t options,
                                          HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "descriptor fields are required");
  return hurray__layout_check_shape(f, NULL, options, err);
}

HurrayStatus hurray_layout_min_buffer_size(const HurrayDescriptorFields *f,
                                           uint32_t buffer_index, uint64_t *out,
                                           HurrayError *err) {
  if (f == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "descriptor fields and out are required");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  uint32_t base;
  if (f->layout.tag == HURRAY_LAYOUT_COMPOSITE ||
      !hurray__layout_base_buffer_count(f->layout.tag, f->rank, &base) || buffer_index >= base)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, NULL,
                        "buffer %u is not a buffer of the %s layout", buffer_index,
                        hurray_layout_name(f->layout.tag) ? hurray_layout_name(f->layout.tag)
                                                          : "unknown");
  if (hurray__shape_has_dynamic(f->rank, f->shape))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "a dynamic dimension must be resolved before sizing buffers");
  HurrayStatus st = hurray__layout_min_size(f, NULL, buffer_index, out, err);
  if (st == HURRAY_ERR_UNSUPPORTED)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "type_tag",
                        "element type 0x%02X has no known storage size", f->type_tag);
  return st;
}
