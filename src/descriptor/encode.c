/* Descriptor encoding and wire offsets (spec: docs/spec/metadata.md;
 * docs/internals/decisions.md § Descriptor encoding). */
#include "descriptor/descriptor_impl.h"

/* ---- lengths and offsets --------------------------------------------------- */

static uint64_t tiled_level_len(const HurrayTiledLevel *lv, uint32_t rank) {
  uint64_t arr = 8u * (uint64_t)rank;
  uint64_t n = arr + 4u;
  if (lv->outer_layout == HURRAY_LAYOUT_STRIDED) n += arr;
  if (lv->inner_layout == HURRAY_LAYOUT_STRIDED) n += arr;
  return n;
}

uint64_t hurray__layout_payload_len(const HurrayLayout *l, uint32_t rank) {
  uint64_t r = rank;
  if (hurray__layout_is_opaque(l->tag)) return l->u.opaque.len;
  if (l->tag >= HURRAY_LAYOUT_PRIVATE_FIRST && l->tag <= HURRAY_LAYOUT_PRIVATE_LAST)
    return 12u + (uint64_t)l->u.private_ext.data_len;
  switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
      return 8u * r;
    case HURRAY_LAYOUT_TILED: {
      uint64_t n = 0;
      uint32_t depth = l->u.tiled.depth;
      if (l->u.tiled.levels == NULL) return 0;
      if (depth > HURRAY_MAX_TILED_DEPTH) depth = HURRAY_MAX_TILED_DEPTH;
      for (uint32_t i = 0; i < depth; i++) n += tiled_level_len(&l->u.tiled.levels[i], rank);
      return n;
    }
    case HURRAY_LAYOUT_MORTON:
      return 4u * r;
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      return 16u;
    case HURRAY_LAYOUT_CSF:
      return 16u + 4u * r;
    case HURRAY_LAYOUT_BLOCK_PAGED:
      return 32u;
    case HURRAY_LAYOUT_COMPOSITE:
    case HURRAY_LAYOUT_HILBERT:
      return 8u;
    default: /* row-major, column-major, invalid tags */
      return 0;
  }
}

void hurray__descriptor_offsets(const HurrayDescriptorFields *f, HurrayOffsets *o) {
  uint64_t r = f->rank;
  uint64_t at = HURRAY_DESCRIPTOR_HEADER_LEN;
  o->shape = at;
  at += 8u * r;
  o->byte_offset = at;
  at += 8u;
  o->layout = at;
  at += hurray__layout_payload_len(&f->layout, f->rank);
  o->buffer_table = at;
  if (hurray__layout_is_opaque(f->layout.tag)) {
    /* Everything after byte_offset is inside the opaque payload. */
    o->quantization = o->shard = o->statistics = o->extension_type = o->composite_member =
        o->trailing = at;
    o->end = at + f->trailing_len;
    return;
  }
  at += 1u + (uint64_t)HURRAY_BUFFER_HANDLE_LEN * f->buffer_count;
  o->quantization = at;
  if (f->quantization != NULL) at += 4u + (uint64_t)hurray__quant_encoded_len(f->quantization);
  o->shard = at;
  if (f->shard != NULL) at += 16u * r;
  o->statistics = at;
  if (f->statistics != NULL) at += HURRAY__STATISTICS_LEN;
  o->extension_type = at;
  if (f->extension_type != NULL) at += HURRAY__EXTENSION_TYPE_LEN;
  o->composite_member = at;
  if (f->composite_member != NULL) at += HURRAY__COMPOSITE_MEMBER_LEN;
  o->trailing = at;
  o->end = at + f->trailing_len;
}

/* ---- writing --------------------------------------------------------------- */

static uint8_t *put_u64s(uint8_t *p, const uint64_t *v, uint32_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n != 0) memcpy(p, v, (size_t)n * 8u);
  return p + (size_t)n * 8u;
#else
  for (uint32_t i = 0; i < n; i++, p += 8) hurray__st64(p, v[i]);
  return p;
#endif
}

static uint8_t *put_i64s(uint8_t *p, const int64_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++, p += 8) hurray__st64(p, (uint64_t)v[i]);
  return p;
}

static uint8_t *put_u32s(uint8_t *p, const uint32_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++, p += 4) hurray__st32(p, v[i]);
  return p;
}

static uint8_t *put_zeros(uint8_t *p, size_t n) {
  memset(p, 0, n);
  return p + n;
}

static uint8_t *write_layout(const HurrayLayout *l, uint32_t rank, uint8_t *p) {
  if (hurray__layout_is_opaque(l->tag)) {
    if (l->u.opaque.len != 0) memcpy(p, l->u.opaque.bytes, l->u.opaque.len);
    return p + l->u.opaque.len;
  }
  if (l->tag >= HURRAY_LAYOUT_PRIVATE_FIRST && l->tag <= HURRAY_LAYOUT_PRIVATE_LAST) {
    hurray__st64(p, l->u.private_ext.layout_id);
    hurray__st32(p + 8, l->u.private_ext.data_len);
    if (l->u.private_ext.data_len != 0)
      memcpy(p + 12, l->u.private_ext.data, l->u.private_ext.data_len);
    return p + 12 + l->u.private_ext.data_len;
  }
  switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
      return put_i64s(p, l->u.strided.strides, rank);
    case HURRAY_LAYOUT_TILED:
      for (uint32_t i = 0; i < l->u.tiled.depth; i++) {
        const HurrayTiledLevel *lv = &l->u.tiled.levels[i];
        p = put_u64s(p, lv->tile_shape, rank);
        *p++ = lv->outer_layout;
        *p++ = lv->inner_layout;
        p = put_zeros(p, 2);
        if (lv->outer_layout == HURRAY_LAYOUT_STRIDED) p = put_i64s(p, lv->outer_strides, rank);
        if (lv->inner_layout == HURRAY_LAYOUT_STRIDED) p = put_i64s(p, lv->inner_strides, rank);
      }
      return p;
    case HURRAY_LAYOUT_MORTON:
      return put_u32s(p, l->u.morton.bits, rank);
    case HURRAY_LAYOUT_COO:
      hurray__st64(p, l->u.coo.nnz);
      p[8] = l->u.coo.is_sorted;
      return put_zeros(p + 9, 7);
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      hurray__st64(p, l->u.csr.nnz);
      return put_zeros(p + 8, 8);
    case HURRAY_LAYOUT_CSF:
      hurray__st64(p, l->u.csf.nnz);
      p = put_u32s(p + 8, l->u.csf.mode_order, rank);
      return put_zeros(p, 8);
    case HURRAY_LAYOUT_BLOCK_PAGED:
      hurray__st32(p, l->u.block_paged.page_size);
      hurray__st64(p + 4, l->u.block_paged.num_pages);
      hurray__st32(p + 12, l->u.block_paged.paged_axis);
      hurray__st32(p + 16, l->u.block_paged.num_seqs);
      p[20] = l->u.block_paged.kv_role;
      hurray__st32(p + 21, l->u.block_paged.layer_index);
      p[25] = l->u.block_paged.block_table_index_type;
      return put_zeros(p + 26, 6);
    case HURRAY_LAYOUT_COMPOSITE:
      p[0] = l->u.composite.rule;
      p[1] = l->u.composite.combine_op;
      p[2] = 0;
      p[3] = 0;
      hurray__st32(p + 4, l->u.composite.member_count);
      return p + 8;
    case HURRAY_LAYOUT_HILBERT:
      hurray__st32(p, l->u.hilbert.order);
      hurray__st32(p + 4, l->u.hilbert.rank);
      return p + 8;
    default:
      return p;
  }
}

static uint8_t *write_statistics(const HurrayStatistics *s, uint8_t *p) {
  hurray__st32(p, s->computed_mask);
  hurray__st32(p + 4, 0);
  hurray__st64(p + 8, s->nnz);
  hurray__st64(p + 16, hurray__f64_bits(s->sparsity_ratio));
  hurray__st64(p + 24, hurray__f64_bits(s->value_min));
  hurray__st64(p + 32, hurray__f64_bits(s->value_max));
  hurray__st64(p + 40, hurray__f64_bits(s->value_abs_max));
  hurray__st64(p + 48, hurray__f64_bits(s->value_mean));
  hurray__st64(p + 56, hurray__f64_bits(s->value_stddev));
  p[64] = s->nm_n;
  p[65] = s->nm_m;
  p[66] = s->has_nan;
  p[67] = s->has_inf;
  return put_zeros(p + 68, 4);
}

static uint8_t *write_extension_type(const HurrayExtensionType *e, uint8_t *p) {
  hurray__st32(p, e->bit_width);
  p[4] = e->packing_factor;
  p[5] = e->is_float;
  p[6] = e->is_signed;
  p[7] = e->sign_bits;
  p[8] = e->exponent_bits;
  p[9] = e->mantissa_bits;
  p[10] = 0;
  p[11] = 0;
  hurray__st32(p + 12, e->exponent_bias);
  p[16] = e->has_nan;
  p[17] = e->has_inf;
  return put_zeros(p + 18, 2);
}

void hurray__descriptor_write(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                              uint8_t *out) {
  uint8_t *p = out;
  memcpy(p, HURRAY_DESCRIPTOR_MAGIC, 4);
  p[4] = f->version_major;
  p[5] = f->version_minor;
  hurray__st32(p + 6, (uint32_t)o->end);
  hurray__st32(p + 10, f->flags);
  p[14] = f->type_tag;
  p[15] = f->layout.tag;
  hurray__st32(p + 16, f->rank);
  p = put_u64s(p + HURRAY_DESCRIPTOR_HEADER_LEN, f->shape, f->rank);
  hurray__st64(p, f->byte_offset);
  p = write_layout(&f->layout, f->rank, p + 8);
  if (!hurray__layout_is_opaque(f->layout.tag)) {
    *p++ = (uint8_t)f->buffer_count;
    for (uint32_t i = 0; i < f->buffer_count; i++, p += HURRAY_BUFFER_HANDLE_LEN) {
      const HurrayBufferHandle *b = &f->buffers[i];
      hurray__st64(p, b->byte_size);
      hurray__st32(p + 8, b->alignment);
      p[12] = b->device_tag;
      p[13] = b->sync_mode;
      p[14] = b->memory_class;
      p[15] = b->reserved;
    }
    if (f->quantization != NULL) {
      uint32_t qlen = hurray__quant_encoded_len(f->quantization);
      hurray__st32(p, qlen);
      hurray__quant_encode(f->quantization, p + 4);
      p += 4u + (size_t)qlen;
    }
    if (f->shard != NULL) {
      p = put_u64s(p, f->shard->parent_shape, f->rank);
      p = put_u64s(p, f->shard->offset, f->rank);
    }
    if (f->statistics != NULL) p = write_statistics(f->statistics, p);
    if (f->extension_type != NULL) p = write_extension_type(f->extension_type, p);
    if (f->composite_member != NULL) {
      p[0] = f->composite_member->role;
      p = put_zeros(p + 1, 15);
    }
  }
  if (f->trailing_len != 0) memcpy(p, f->trailing, f->trailing_len);
}

/* ---- public API ------------------------------------------------------------ */

HurrayStatus hurray_descriptor_encoded_len(const HurrayDescriptor *d, uint64_t *out_len) {
  if (d == NULL || out_len == NULL) return HURRAY_ERR_NULL_POINTER;
  if (!hurray__desc_live(d)) return HURRAY_ERR_INTERNAL;
  *out_len = d->encoded_len;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_encode(const HurrayDescriptor *d, uint8_t *out, uint64_t capacity,
                                      uint64_t *out_len) {
  if (d == NULL || out_len == NULL || (out == NULL && capacity != 0))
    return HURRAY_ERR_NULL_POINTER;
  if (!hurray__desc_live(d)) return HURRAY_ERR_INTERNAL;
  *out_len = d->encoded_len;
  if (capacity < d->encoded_len) return HURRAY_ERR_BUFFER_TOO_SMALL;
  HurrayOffsets o;
  hurray__descriptor_offsets(&d->f, &o);
  hurray__descriptor_write(&d->f, &o, out);
  return HURRAY_OK;
}
