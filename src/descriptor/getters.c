/* Reading a descriptor: the reference C ABI getters, the fields view, value
 * equality and derived quantities. */
#include "descriptor/descriptor_impl.h"
#include "hurray/schema.h"

#include <stdio.h>

#define GETTER_GUARD(d, out)                         \
  do {                                               \
    if ((d) == NULL || (out) == NULL) return HURRAY_ERR_NULL_POINTER; \
    if (!hurray__desc_live(d)) return HURRAY_ERR_INTERNAL;            \
  } while (0)

HurrayStatus hurray_descriptor_fields(const HurrayDescriptor *d, HurrayDescriptorFields *out) {
  GETTER_GUARD(d, out);
  *out = d->f;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_element_type_tag(const HurrayDescriptor *d, uint8_t *out) {
  GETTER_GUARD(d, out);
  *out = d->f.type_tag;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_layout_tag(const HurrayDescriptor *d, uint8_t *out) {
  GETTER_GUARD(d, out);
  *out = d->f.layout.tag;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_rank(const HurrayDescriptor *d, uint32_t *out) {
  GETTER_GUARD(d, out);
  *out = d->f.rank;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_byte_offset(const HurrayDescriptor *d, uint64_t *out) {
  GETTER_GUARD(d, out);
  *out = d->f.byte_offset;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_buffer_count(const HurrayDescriptor *d, uint32_t *out) {
  GETTER_GUARD(d, out);
  *out = d->f.buffer_count;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_shape(const HurrayDescriptor *d, uint64_t *out_dims,
                                     uintptr_t *inout_rank) {
  GETTER_GUARD(d, inout_rank);
  uintptr_t capacity = *inout_rank;
  *inout_rank = d->f.rank;
  if (out_dims == NULL || capacity < d->f.rank) return HURRAY_ERR_BUFFER_TOO_SMALL;
  if (d->f.rank != 0) memcpy(out_dims, d->f.shape, (size_t)d->f.rank * sizeof(uint64_t));
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_version(const HurrayDescriptor *d, uint8_t *major,
                                       uint8_t *minor) {
  GETTER_GUARD(d, major);
  if (minor == NULL) return HURRAY_ERR_NULL_POINTER;
  *major = d->f.version_major;
  *minor = d->f.version_minor;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_flags(const HurrayDescriptor *d, uint32_t *out) {
  GETTER_GUARD(d, out);
  *out = d->f.flags;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_buffer(const HurrayDescriptor *d, uint32_t index,
                                      const HurrayBufferHandle **out) {
  GETTER_GUARD(d, out);
  if (index >= d->f.buffer_count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  *out = &d->f.buffers[index];
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_element_count(const HurrayDescriptor *d, uint64_t *out) {
  GETTER_GUARD(d, out);
  uint64_t n = 1;
  for (uint32_t k = 0; k < d->f.rank; k++) {
    if (d->f.shape[k] == HURRAY_DYNAMIC_DIM) return HURRAY_ERR_INVALID_ARGUMENT;
  }
  for (uint32_t k = 0; k < d->f.rank; k++) {
    if (hurray__mul_overflow_u64(n, d->f.shape[k], &n)) return HURRAY_ERR_INVALID_ARGUMENT;
  }
  *out = n;
  return HURRAY_OK;
}

HurrayStatus hurray_descriptor_data_bytes(const HurrayDescriptor *d, uint64_t *out) {
  GETTER_GUARD(d, out);
  uint64_t n = 0;
  for (uint32_t i = 0; i < d->f.buffer_count; i++) {
    if (hurray__add_overflow_u64(n, d->f.buffers[i].byte_size, &n))
      return HURRAY_ERR_INVALID_ARGUMENT;
  }
  *out = n;
  return HURRAY_OK;
}

/* ---- equality ---------------------------------------------------------------- */

static bool arr_eq(const void *a, const void *b, uint64_t n) {
  return n == 0 || memcmp(a, b, (size_t)n) == 0;
}

static bool layout_eq(const HurrayLayout *a, const HurrayLayout *b, uint32_t rank) {
  uint64_t arr8 = 8u * (uint64_t)rank, arr4 = 4u * (uint64_t)rank;
  if (a->tag != b->tag) return false;
  if (hurray__layout_is_opaque(a->tag))
    return a->u.opaque.len == b->u.opaque.len &&
           arr_eq(a->u.opaque.bytes, b->u.opaque.bytes, a->u.opaque.len);
  if (a->tag >= HURRAY_LAYOUT_PRIVATE_FIRST && a->tag <= HURRAY_LAYOUT_PRIVATE_LAST)
    return a->u.private_ext.layout_id == b->u.private_ext.layout_id &&
           a->u.private_ext.data_len == b->u.private_ext.data_len &&
           arr_eq(a->u.private_ext.data, b->u.private_ext.data, a->u.private_ext.data_len);
  switch (a->tag) {
    case HURRAY_LAYOUT_STRIDED:
      return arr_eq(a->u.strided.strides, b->u.strided.strides, arr8);
    case HURRAY_LAYOUT_TILED:
      if (a->u.tiled.depth != b->u.tiled.depth) return false;
      for (uint32_t i = 0; i < a->u.tiled.depth; i++) {
        const HurrayTiledLevel *x = &a->u.tiled.levels[i], *y = &b->u.tiled.levels[i];
        if (x->outer_layout != y->outer_layout || x->inner_layout != y->inner_layout ||
            !arr_eq(x->tile_shape, y->tile_shape, arr8))
          return false;
        if (x->outer_layout == HURRAY_LAYOUT_STRIDED &&
            !arr_eq(x->outer_strides, y->outer_strides, arr8))
          return false;
        if (x->inner_layout == HURRAY_LAYOUT_STRIDED &&
            !arr_eq(x->inner_strides, y->inner_strides, arr8))
          return false;
      }
      return true;
    case HURRAY_LAYOUT_MORTON:
      return arr_eq(a->u.morton.bits, b->u.morton.bits, arr4);
    case HURRAY_LAYOUT_COO:
      return a->u.coo.nnz == b->u.coo.nnz && a->u.coo.is_sorted == b->u.coo.is_sorted;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      return a->u.csr.nnz == b->u.csr.nnz;
    case HURRAY_LAYOUT_CSF:
      return a->u.csf.nnz == b->u.csf.nnz &&
             arr_eq(a->u.csf.mode_order, b->u.csf.mode_order, arr4);
    case HURRAY_LAYOUT_BLOCK_PAGED:
      return a->u.block_paged.page_size == b->u.block_paged.page_size &&
             a->u.block_paged.num_pages == b->u.block_paged.num_pages &&
             a->u.block_paged.paged_axis == b->u.block_paged.paged_axis &&
             a->u.block_paged.num_seqs == b->u.block_paged.num_seqs &&
             a->u.block_paged.kv_role == b->u.block_paged.kv_role &&
             a->u.block_paged.layer_index == b->u.block_paged.layer_index &&
             a->u.block_paged.block_table_index_type ==
                 b->u.block_paged.block_table_index_type;
    case HURRAY_LAYOUT_COMPOSITE:
      return a->u.composite.rule == b->u.composite.rule &&
             a->u.composite.combine_op == b->u.composite.combine_op &&
             a->u.composite.member_count == b->u.composite.member_count;
    case HURRAY_LAYOUT_HILBERT:
      return a->u.hilbert.order == b->u.hilbert.order && a->u.hilbert.rank == b->u.hilbert.rank;
    default:
      return true;
  }
}

static bool f64_eq(double a, double b) { return hurray__f64_bits(a) == hurray__f64_bits(b); }

static bool stats_eq(const HurrayStatistics *a, const HurrayStatistics *b) {
  return a->computed_mask == b->computed_mask && a->nnz == b->nnz &&
         f64_eq(a->sparsity_ratio, b->sparsity_ratio) && f64_eq(a->value_min, b->value_min) &&
         f64_eq(a->value_max, b->value_max) && f64_eq(a->value_abs_max, b->value_abs_max) &&
         f64_eq(a->value_mean, b->value_mean) && f64_eq(a->value_stddev, b->value_stddev) &&
         a->nm_n == b->nm_n && a->nm_m == b->nm_m && a->has_nan == b->has_nan &&
         a->has_inf == b->has_inf;
}

static bool ext_eq(const HurrayExtensionType *a, const HurrayExtensionType *b) {
  return a->bit_width == b->bit_width && a->packing_factor == b->packing_factor &&
         a->is_float == b->is_float && a->is_signed == b->is_signed &&
         a->sign_bits == b->sign_bits && a->exponent_bits == b->exponent_bits &&
         a->mantissa_bits == b->mantissa_bits && a->exponent_bias == b->exponent_bias &&
         a->has_nan == b->has_nan && a->has_inf == b->has_inf;
}

static bool buffers_eq(const HurrayBufferHandle *a, const HurrayBufferHandle *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (a[i].byte_size != b[i].byte_size || a[i].alignment != b[i].alignment ||
        a[i].device_tag != b[i].device_tag || a[i].sync_mode != b[i].sync_mode ||
        a[i].memory_class != b[i].memory_class || a[i].reserved != b[i].reserved)
      return false;
  }
  return true;
}

/* Presence of both or neither section, then `same` on the pair. */
#define SECTION_EQ(pa, pb, same) ((pa) == NULL ? (pb) == NULL : ((pb) != NULL && (same)))

bool hurray__fields_equal(const HurrayDescriptorFields *a, const HurrayDescriptorFields *b) {
  uint64_t arr8 = 8u * (uint64_t)a->rank;
  if (a->version_major != b->version_major || a->version_minor != b->version_minor ||
      a->flags != b->flags || a->type_tag != b->type_tag || a->rank != b->rank ||
      a->byte_offset != b->byte_offset || a->buffer_count != b->buffer_count ||
      a->trailing_len != b->trailing_len)
    return false;
  if (!arr_eq(a->shape, b->shape, arr8) || !layout_eq(&a->layout, &b->layout, a->rank) ||
      !buffers_eq(a->buffers, b->buffers, a->buffer_count) ||
      !arr_eq(a->trailing, b->trailing, a->trailing_len))
    return false;
  if (!SECTION_EQ(a->quantization, b->quantization,
                  a->quantization->raw_len == b->quantization->raw_len &&
                      arr_eq(a->quantization->raw, b->quantization->raw,
                             a->quantization->raw_len)))
    return false;
  if (!SECTION_EQ(a->shard, b->shard,
                  arr_eq(a->shard->parent_shape, b->shard->parent_shape, arr8) &&
                      arr_eq(a->shard->offset, b->shard->offset, arr8)))
    return false;
  if (!SECTION_EQ(a->statistics, b->statistics, stats_eq(a->statistics, b->statistics)))
    return false;
  if (!SECTION_EQ(a->extension_type, b->extension_type,
                  ext_eq(a->extension_type, b->extension_type)))
    return false;
  return SECTION_EQ(a->composite_member, b->composite_member,
                    a->composite_member->role == b->composite_member->role);
}

bool hurray_descriptor_equal(const HurrayDescriptor *a, const HurrayDescriptor *b) {
  if (!hurray__desc_live(a) || !hurray__desc_live(b)) return false;
  if (a == b) return true;
  return a->encoded_len == b->encoded_len && hurray__fields_equal(&a->f, &b->f);
}

const char *hurray_descriptor_buffer_role(const HurrayDescriptorFields *f, uint32_t index,
                                          char *buf, size_t buf_len) {
  if (f == NULL) return NULL;
  /* the roles come from the tables of what each scheme and layout carries
   * (src/quant/info.c, src/layout/info.c) */
  const HurrayQuantSchemeInfo *qi =
      f->quantization != NULL ? hurray_quant_scheme_info(f->quantization->scheme) : NULL;
  const char *qrole = NULL;
  for (uint32_t i = 0; qi != NULL && i < qi->field_count; i++) {
    const HurrayFieldInfo *fi = &qi->fields[i];
    uint32_t at;
    if (fi->kind != HURRAY_VALUE_BUFFER_INDEX) continue;
    memcpy(&at, (const char *)f->quantization + fi->offset, sizeof at);
    if (at != index) continue;
    if (qrole != NULL) return "quantization scales and zero points"; /* one buffer, both */
    qrole = fi->role;
  }
  if (qrole != NULL) return qrole;
  const HurrayLayoutInfo *li = hurray_layout_info(f->layout.tag);
  if (li == NULL || !li->buffers_known) return NULL;
  if (index < li->buffer_role_count) return li->buffer_roles[index];
  uint32_t k = index - li->buffer_role_count;
  if (li->dim_role_count == 0 || k / li->dim_role_count >= f->rank || buf == NULL || buf_len == 0)
    return NULL;
  /* a per-dimension buffer (CSF: buffer 2L + 1 holds pos_L, buffer 2L + 2 crd_L) */
  snprintf(buf, buf_len, "%s_%u", li->dim_roles[k % li->dim_role_count],
           (unsigned)(k / li->dim_role_count));
  return buf;
}
