/*
 * The codec's share of descriptor validation (internal/validate.h), shared by
 * decode and from_fields, then the layout and quantization rules.
 *
 * Statuses follow the reference C ABI for what the reference checks (reserved
 * flag bits, reserved bytes, rank, alignment, extension packing, shard bounds:
 * HURRAY_ERR_INVALID_LAYOUT; type/device/class tags: HURRAY_ERR_INVALID_TYPE;
 * sync mode: HURRAY_ERR_INVALID_SYNC_MODE) and use the newer codes for the
 * checks it skips (colocation: INVALID_BUFFER_TABLE; statistics consistency:
 * INVALID_STATISTICS; dynamic shard dimensions: INVALID_SHARD).
 */
#include "descriptor/descriptor_impl.h"

#define ST_LAYOUT HURRAY_ERR_INVALID_LAYOUT
#define PERMISSIVE(opt) (((opt) & HURRAY_DECODE_PERMISSIVE) != 0)

const char *hurray__tag_kind_word(HurrayTagKind k) {
  switch (k) {
    case HURRAY_TAG_NAMED:
      return "named";
    case HURRAY_TAG_UNASSIGNED:
      return "unassigned";
    case HURRAY_TAG_RESERVED:
      return "reserved";
    case HURRAY_TAG_PRIVATE:
      return "private";
    default:
      return "invalid";
  }
}

/* ---- header, type tag ---------------------------------------------------------- */

HurrayStatus hurray__check_flags_and_type(uint32_t flags, uint8_t type_tag, uint32_t options,
                                          HurrayError *err) {
  if (!PERMISSIVE(options) && (flags & ~HURRAY_FLAGS_KNOWN) != 0)
    return hurray__fail(err, ST_LAYOUT, 10, "flags",
                        "reserved flag bits 0x%08X are set (known bits are 0x1F)",
                        (unsigned)(flags & ~HURRAY_FLAGS_KNOWN));
  HurrayTagKind tk = hurray_dtype_tag_kind(type_tag);
  if (tk == HURRAY_TAG_INVALID ||
      (!PERMISSIVE(options) && (tk == HURRAY_TAG_UNASSIGNED || tk == HURRAY_TAG_RESERVED)))
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, 14, "type_tag", "type tag 0x%02X is %s",
                        type_tag, hurray__tag_kind_word(tk));
  return HURRAY_OK;
}

static HurrayStatus check_header(const HurrayDescriptorFields *f, uint32_t options,
                                 HurrayError *err) {
  if (f->version_major != HURRAY_DESCRIPTOR_VERSION_MAJOR)
    return hurray__fail(err, HURRAY_ERR_VERSION_MISMATCH, 4, "version_major",
                        "descriptor major version %u is not supported (this library reads 1)",
                        f->version_major);
  if (!(options & HURRAY__HEADER_CHECKED))
    HURRAY_TRY(hurray__check_flags_and_type(f->flags, f->type_tag, options, err));
  bool is_private =
      f->type_tag >= HURRAY_DTYPE_PRIVATE_FIRST && f->type_tag <= HURRAY_DTYPE_PRIVATE_LAST;
  if (f->rank > HURRAY_MAX_RANK)
    return hurray__fail(err, ST_LAYOUT, 16, "rank", "rank %u exceeds the maximum of %u",
                        f->rank, HURRAY_MAX_RANK);
  if (f->rank != 0 && f->shape == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, 20, "shape",
                        "shape is NULL for rank %u", f->rank);
  bool has_ext = f->extension_type != NULL;
  if (hurray__layout_is_opaque(f->layout.tag)) has_ext = (f->flags & HURRAY_FLAG_HAS_EXTENSION_TYPE) != 0;
  if (is_private != has_ext)
    return hurray__fail(err, ST_LAYOUT, 10, "flags",
                        "HAS_EXTENSION_TYPE is %s but type tag 0x%02X is %s",
                        has_ext ? "set" : "clear", f->type_tag,
                        is_private ? "private (0xF0-0xFE)" : "not private");
  if (f->trailing_len != 0) {
    if (f->trailing == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "trailing",
                          "trailing is NULL but trailing_len is %u", f->trailing_len);
    if (f->version_minor == 0 && !PERMISSIVE(options))
      return hurray__fail(err, ST_LAYOUT, 6, "descriptor_length",
                          "%u bytes follow the last section of a version 1.0 descriptor",
                          f->trailing_len);
  }
  return HURRAY_OK;
}

/* ---- layout payload structure ------------------------------------------------- */

static HurrayStatus need_array(const void *p, uint32_t rank, uint64_t off, const char *name,
                               HurrayError *err) {
  if (rank != 0 && p == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, off, name, "array is NULL for rank %u",
                        rank);
  return HURRAY_OK;
}

static HurrayStatus check_tiled(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                HurrayError *err) {
  const HurrayLayout *l = &f->layout;
  uint32_t depth = l->u.tiled.depth;
  if (depth == 0 || depth > HURRAY_MAX_TILED_DEPTH)
    return hurray__fail(err, ST_LAYOUT, o->layout, "layout.tiled",
                        "nesting depth %u is outside 1..%u", depth, HURRAY_MAX_TILED_DEPTH);
  if (l->u.tiled.levels == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, o->layout, "layout.tiled.levels",
                        "levels is NULL");
  uint64_t off = o->layout;
  uint64_t arr = 8u * (uint64_t)f->rank;
  for (uint32_t i = 0; i < depth; i++) {
    const HurrayTiledLevel *lv = &l->u.tiled.levels[i];
    char path[64];
    if (f->rank != 0 && lv->tile_shape == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, off,
                          hurray__path(path, sizeof path, "layout.tiled[%u].tile_shape", i),
                          "array is NULL for rank %u", f->rank);
    uint8_t ol = lv->outer_layout, il = lv->inner_layout;
    if (ol < HURRAY_LAYOUT_ROW_MAJOR || ol > HURRAY_LAYOUT_STRIDED)
      return hurray__fail(err, ST_LAYOUT, off + arr,
                          hurray__path(path, sizeof path, "layout.tiled[%u].outer_layout", i),
                          "0x%02X is not row-major, column-major or strided (0x01-0x03)", ol);
    if (il < HURRAY_LAYOUT_ROW_MAJOR || il > HURRAY_LAYOUT_TILED)
      return hurray__fail(err, ST_LAYOUT, off + arr + 1,
                          hurray__path(path, sizeof path, "layout.tiled[%u].inner_layout", i),
                          "0x%02X is not row-major, column-major, strided or tiled (0x01-0x04)",
                          il);
    if ((il == HURRAY_LAYOUT_TILED) != (i + 1 < depth))
      return hurray__fail(err, ST_LAYOUT, off + arr + 1,
                          hurray__path(path, sizeof path, "layout.tiled[%u].inner_layout", i),
                          "inner_layout 0x04 (nested tiling) must be used on every level but "
                          "the last of %u", depth);
    if (f->rank != 0 && ol == HURRAY_LAYOUT_STRIDED && lv->outer_strides == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, off + arr + 4,
                          hurray__path(path, sizeof path, "layout.tiled[%u].outer_strides", i),
                          "outer_layout is strided but outer_strides is NULL");
    if (f->rank != 0 && il == HURRAY_LAYOUT_STRIDED && lv->inner_strides == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, off + arr + 4,
                          hurray__path(path, sizeof path, "layout.tiled[%u].inner_strides", i),
                          "inner_layout is strided but inner_strides is NULL");
    off += arr + 4 + (ol == HURRAY_LAYOUT_STRIDED ? arr : 0) +
           (il == HURRAY_LAYOUT_STRIDED ? arr : 0);
  }
  return HURRAY_OK;
}

static HurrayStatus check_layout_struct(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                        uint32_t options, HurrayError *err) {
  const HurrayLayout *l = &f->layout;
  HurrayTagKind k = hurray_layout_tag_kind(l->tag);
  if (k == HURRAY_TAG_INVALID || (k != HURRAY_TAG_NAMED && k != HURRAY_TAG_PRIVATE &&
                                  !PERMISSIVE(options)))
    return hurray__fail(err, ST_LAYOUT, 15, "layout_tag", "layout tag 0x%02X is %s", l->tag,
                        hurray__tag_kind_word(k));
  if (k == HURRAY_TAG_RESERVED) {
    /* Permissive opaque layout: everything after byte_offset is in the payload. */
    if (l->u.opaque.len != 0 && l->u.opaque.bytes == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, o->layout, "layout.opaque",
                          "bytes is NULL but len is %u", l->u.opaque.len);
    if (f->buffer_count != 0 || f->quantization != NULL || f->shard != NULL ||
        f->statistics != NULL || f->extension_type != NULL || f->composite_member != NULL ||
        f->trailing_len != 0)
      return hurray__fail(err, ST_LAYOUT, o->layout, "layout.opaque",
                          "an opaque layout (tag 0x%02X) carries the buffer table and every "
                          "section in its bytes; they cannot be given separately",
                          l->tag);
    return HURRAY_OK;
  }
  if (k == HURRAY_TAG_PRIVATE) {
    if (l->u.private_ext.data_len != 0 && l->u.private_ext.data == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, o->layout + 12, "layout.data",
                          "data is NULL but data_len is %u", l->u.private_ext.data_len);
    return HURRAY_OK;
  }
  switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
      return need_array(l->u.strided.strides, f->rank, o->layout, "layout.strides", err);
    case HURRAY_LAYOUT_TILED:
      return check_tiled(f, o, err);
    case HURRAY_LAYOUT_MORTON:
      return need_array(l->u.morton.bits, f->rank, o->layout, "layout.morton_bits", err);
    case HURRAY_LAYOUT_CSF:
      return need_array(l->u.csf.mode_order, f->rank, o->layout + 8, "layout.mode_order", err);
    case HURRAY_LAYOUT_COO:
      if (l->u.coo.is_sorted > 1 && !PERMISSIVE(options))
        return hurray__fail(err, ST_LAYOUT, o->layout + 8, "layout.is_sorted",
                            "must be 0 or 1, got %u", l->u.coo.is_sorted);
      return HURRAY_OK;
    default:
      return HURRAY_OK;
  }
}

/* ---- buffer table ------------------------------------------------------------- */

static HurrayStatus check_buffers(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                  uint32_t options, HurrayError *err) {
  bool perm = PERMISSIVE(options);
  if (f->buffer_count > HURRAY_MAX_BUFFERS)
    return hurray__fail(err, ST_LAYOUT, o->buffer_table, "buffer_count",
                        "%u buffers exceed the maximum of 255", f->buffer_count);
  if (f->buffer_count != 0 && f->buffers == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, o->buffer_table, "buffers",
                        "buffers is NULL for %u buffers", f->buffer_count);
  if (f->buffer_count == 0 && hurray_layout_tag_kind(f->layout.tag) != HURRAY_TAG_RESERVED &&
      f->layout.tag != HURRAY_LAYOUT_COMPOSITE)
    return hurray__fail(err, ST_LAYOUT, o->buffer_table, "buffer_count",
                        "the buffer table is empty; only a composite head has no buffers");
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const HurrayBufferHandle *b = &f->buffers[i];
    uint64_t off = o->buffer_table + 1u + (uint64_t)HURRAY_BUFFER_HANDLE_LEN * i;
    char path[48];
    if (HURRAY_LIKELY(b->device_tag == HURRAY_DEVICE_CPU && b->sync_mode == 0 &&
                      b->memory_class == HURRAY_MEMORY_STANDARD && b->reserved == 0 &&
                      hurray__is_pow2_u64(b->alignment) &&
                      (b->alignment >= HURRAY_MIN_BUFFER_ALIGNMENT || b->byte_size == 0) &&
                      (i == 0 || (f->buffers[0].device_tag == HURRAY_DEVICE_CPU &&
                                  f->buffers[0].memory_class == HURRAY_MEMORY_STANDARD))))
      continue; /* the common case: a valid standard CPU buffer */
    if (b->reserved != 0)
      return hurray__fail(err, ST_LAYOUT, off + 15,
                          hurray__path(path, sizeof path, "buffers[%u].reserved", i),
                          "reserved byte must be 0, got 0x%02X", b->reserved);
    if (!hurray__is_pow2_u64(b->alignment))
      return hurray__fail(err, ST_LAYOUT, off + 8,
                          hurray__path(path, sizeof path, "buffers[%u].alignment", i),
                          "%u is not a power of two", b->alignment);
    if (b->byte_size != 0 && b->alignment < HURRAY_MIN_BUFFER_ALIGNMENT)
      return hurray__fail(err, ST_LAYOUT, off + 8,
                          hurray__path(path, sizeof path, "buffers[%u].alignment", i),
                          "%u is below the minimum of 64 for a non-empty buffer",
                          b->alignment);
    HurrayTagKind dk = hurray_device_tag_kind(b->device_tag);
    if (dk == HURRAY_TAG_INVALID || (dk == HURRAY_TAG_RESERVED && !perm))
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, off + 12,
                          hurray__path(path, sizeof path, "buffers[%u].device_tag", i),
                          "device tag 0x%02X is %s", b->device_tag, hurray__tag_kind_word(dk));
    if (hurray_sync_mode_kind(b->sync_mode) != HURRAY_TAG_NAMED)
      return hurray__fail(err, HURRAY_ERR_INVALID_SYNC_MODE, off + 13,
                          hurray__path(path, sizeof path, "buffers[%u].sync_mode", i),
                          "sync mode 0x%02X is not producer_synced, event or consumer_stream",
                          b->sync_mode);
    HurrayTagKind ck = hurray_memory_class_kind(b->memory_class);
    if (ck == HURRAY_TAG_INVALID || (ck == HURRAY_TAG_RESERVED && !perm))
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, off + 14,
                          hurray__path(path, sizeof path, "buffers[%u].memory_class", i),
                          "memory class 0x%02X is %s", b->memory_class,
                          hurray__tag_kind_word(ck));
    if (b->device_tag == HURRAY_DEVICE_CPU && b->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED)
      return hurray__fail(err, HURRAY_ERR_INVALID_SYNC_MODE, off + 13,
                          hurray__path(path, sizeof path, "buffers[%u].sync_mode", i),
                          "a CPU buffer must be producer_synced, got %s",
                          hurray_sync_mode_name(b->sync_mode));
    if (dk != HURRAY_TAG_RESERVED && ck != HURRAY_TAG_RESERVED &&
        !hurray_device_memory_class_valid(b->device_tag, b->memory_class))
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, off + 14,
                          hurray__path(path, sizeof path, "buffers[%u].memory_class", i),
                          "memory class 0x%02X is not valid on device 0x%02X", b->memory_class,
                          b->device_tag);
    if (i != 0 && b->device_tag != f->buffers[0].device_tag)
      return hurray__fail(err, HURRAY_ERR_INVALID_BUFFER_TABLE, off + 12,
                          hurray__path(path, sizeof path, "buffers[%u].device_tag", i),
                          "device 0x%02X differs from buffer 0's 0x%02X; all buffers of a "
                          "descriptor share one device",
                          b->device_tag, f->buffers[0].device_tag);
    if (i != 0 && b->memory_class != f->buffers[0].memory_class)
      return hurray__fail(err, HURRAY_ERR_INVALID_BUFFER_TABLE, off + 14,
                          hurray__path(path, sizeof path, "buffers[%u].memory_class", i),
                          "memory class 0x%02X differs from buffer 0's 0x%02X; all buffers "
                          "of a descriptor share one memory class",
                          b->memory_class, f->buffers[0].memory_class);
  }
  return HURRAY_OK;
}

/* ---- optional sections -------------------------------------------------------- */

static HurrayStatus check_shard(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                HurrayError *err) {
  const HurrayShard *s = f->shard;
  if (f->rank != 0 && (s->parent_shape == NULL || s->offset == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, o->shard, "shard",
                        "parent_shape or offset is NULL for rank %u", f->rank);
  if (f->layout.tag == HURRAY_LAYOUT_CSF || f->layout.tag == HURRAY_LAYOUT_BLOCK_PAGED)
    return hurray__fail(err, ST_LAYOUT, o->shard, "shard",
                        "a %s tensor cannot carry a shard section",
                        hurray_layout_name(f->layout.tag));
  uint64_t r = f->rank;
  for (uint32_t k = 0; k < f->rank; k++) {
    uint64_t end;
    char path[48];
    uint64_t parent = s->parent_shape[k], off = s->offset[k], dim = f->shape[k];
    if (hurray__add_overflow_u64(off, dim, &end)) end = UINT64_MAX;
    if (end > parent)
      return hurray__fail(err, ST_LAYOUT, o->shard + 8u * (r + k),
                          hurray__path(path, sizeof path, "shard.offset[%u]", k),
                          "offset %llu + shape %llu exceeds parent_shape %llu",
                          (unsigned long long)off, (unsigned long long)dim,
                          (unsigned long long)parent);
    if (parent == HURRAY_DYNAMIC_DIM || dim == HURRAY_DYNAMIC_DIM)
      return hurray__fail(err, HURRAY_ERR_INVALID_SHARD,
                          parent == HURRAY_DYNAMIC_DIM ? o->shard + 8u * k : 20u + 8u * k,
                          hurray__path(path, sizeof path, parent == HURRAY_DYNAMIC_DIM
                                                              ? "shard.parent_shape[%u]"
                                                              : "shape[%u]",
                                       k),
                          "a sharded tensor cannot have dynamic dimensions");
  }
  return HURRAY_OK;
}

static bool layout_nnz(const HurrayLayout *l, uint64_t *nnz) {
  switch (l->tag) {
    case HURRAY_LAYOUT_COO:
      *nnz = l->u.coo.nnz;
      return true;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      *nnz = l->u.csr.nnz;
      return true;
    case HURRAY_LAYOUT_CSF:
      *nnz = l->u.csf.nnz;
      return true;
    default:
      return false;
  }
}

static HurrayStatus check_statistics(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                     uint32_t options, HurrayError *err) {
  const HurrayStatistics *s = f->statistics;
  uint64_t at = o->statistics;
  uint32_t m = s->computed_mask;
  if (!PERMISSIVE(options) && (m & ~HURRAY_STAT_KNOWN) != 0)
    return hurray__fail(err, ST_LAYOUT, at, "statistics.computed_mask",
                        "reserved mask bits 0x%08X are set (known bits are 0x3F)",
                        (unsigned)(m & ~HURRAY_STAT_KNOWN));
  uint64_t nnz;
  if ((m & HURRAY_STAT_NNZ_VALID) && layout_nnz(&f->layout, &nnz) && s->nnz != nnz)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATISTICS, at + 8, "statistics.nnz",
                        "%llu differs from the layout's nnz %llu", (unsigned long long)s->nnz,
                        (unsigned long long)nnz);
  if ((m & HURRAY_STAT_SPARSITY_VALID) && !(s->sparsity_ratio >= 0.0 && s->sparsity_ratio <= 1.0))
    return hurray__fail(err, HURRAY_ERR_INVALID_STATISTICS, at + 16, "statistics.sparsity_ratio",
                        "%g is outside [0, 1]", s->sparsity_ratio);
  if ((m & HURRAY_STAT_VALUE_STATS_VALID) && !(s->value_stddev >= 0.0))
    return hurray__fail(err, HURRAY_ERR_INVALID_STATISTICS, at + 56, "statistics.value_stddev",
                        "%g is not >= 0", s->value_stddev);
  if ((m & HURRAY_STAT_NM_SPARSITY_VALID) && s->nm_n > s->nm_m)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATISTICS, at + 64, "statistics.nm_n",
                        "N:M pattern %u:%u has N > M", s->nm_n, s->nm_m);
  if ((m & HURRAY_STAT_NAN_INF_VALID) && !PERMISSIVE(options) && (s->has_nan > 1 || s->has_inf > 1))
    return hurray__fail(err, HURRAY_ERR_INVALID_STATISTICS, at + (s->has_nan > 1 ? 66 : 67),
                        s->has_nan > 1 ? "statistics.has_nan" : "statistics.has_inf",
                        "must be 0 or 1, got %u", s->has_nan > 1 ? s->has_nan : s->has_inf);
  return HURRAY_OK;
}

/* Composite member section (metadata.md, layouts/composite.md): only overlay
 * members carry it, and every overlay member carries a shard; the base
 * (role 1) spans the whole head: offset 0 and shape == parent_shape. Both are
 * decidable from this one descriptor. */
static HurrayStatus check_composite_member(const HurrayDescriptorFields *f,
                                           const HurrayOffsets *o, uint32_t options,
                                           HurrayError *err) {
  uint8_t role = f->composite_member->role;
  if (role > HURRAY_MEMBER_ROLE_BASE) {
    if (PERMISSIVE(options)) return HURRAY_OK;
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, o->composite_member,
                        "composite_member.role",
                        "0x%02X is reserved (0x00 correction, 0x01 base)", role);
  }
  if (f->shard == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, o->composite_member,
                        "composite_member",
                        "only overlay members carry this section, and an overlay member "
                        "must also carry a shard section");
  if (role == HURRAY_MEMBER_ROLE_BASE) {
    for (uint32_t k = 0; k < f->rank; k++) {
      if (f->shard->offset[k] != 0 || f->shape[k] != f->shard->parent_shape[k]) {
        char path[48];
        return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, o->shard + 8u * f->rank + 8u * k,
                            hurray__path(path, sizeof path, "shard.offset[%u]", k),
                            "the overlay base (role 1) must span its whole parent: offset "
                            "%llu, shape %llu, parent_shape %llu",
                            (unsigned long long)f->shard->offset[k],
                            (unsigned long long)f->shape[k],
                            (unsigned long long)f->shard->parent_shape[k]);
      }
    }
  }
  return HURRAY_OK;
}

static HurrayStatus check_extension_type(const HurrayExtensionType *e, uint64_t at,
                                         uint32_t options, HurrayError *err) {
  bool perm = PERMISSIVE(options);
  if (e->bit_width == 0)
    return hurray__fail(err, ST_LAYOUT, at, "extension_type.bit_width", "must be > 0");
  if (e->bit_width < 8) {
    if (e->bit_width != 1 && e->bit_width != 2 && e->bit_width != 4)
      return hurray__fail(err, ST_LAYOUT, at, "extension_type.bit_width",
                          "a sub-byte width must be 1, 2 or 4 bits, got %u", e->bit_width);
    if (e->packing_factor != 8u / e->bit_width)
      return hurray__fail(err, ST_LAYOUT, at + 4, "extension_type.packing_factor",
                          "must be %u for %u-bit elements, got %u", 8u / e->bit_width,
                          e->bit_width, e->packing_factor);
  } else if (e->bit_width % 8u != 0) {
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, at, "extension_type.bit_width",
                        "a width of 8 bits or more must be whole bytes, got %u", e->bit_width);
  } else if (e->packing_factor != 1) {
    return hurray__fail(err, ST_LAYOUT, at + 4, "extension_type.packing_factor",
                        "must be 1 for %u-bit elements, got %u", e->bit_width,
                        e->packing_factor);
  }
  if (perm && (e->is_float > 1 || e->is_signed > 1)) return HURRAY_OK; /* meaning unknown */
  const char *bad = NULL;
  uint64_t boff = 0;
  unsigned got = 0;
  if (e->is_float > 1) {
    bad = "extension_type.is_float", boff = 5, got = e->is_float;
  } else if (e->is_signed > 1) {
    bad = "extension_type.is_signed", boff = 6, got = e->is_signed;
  } else if (!perm && e->has_nan > 1) {
    bad = "extension_type.has_nan", boff = 16, got = e->has_nan;
  } else if (!perm && e->has_inf > 1) {
    bad = "extension_type.has_inf", boff = 17, got = e->has_inf;
  }
  if (bad != NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, at + boff, bad, "must be 0 or 1, got %u",
                        got);
  if (e->is_float) {
    if (e->is_signed != 0)
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, at + 6, "extension_type.is_signed",
                          "must be 0 for a floating-point type");
    if (e->sign_bits > 1)
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, at + 7, "extension_type.sign_bits",
                          "must be 0 or 1, got %u", e->sign_bits);
  } else {
    if (e->sign_bits != 0 || e->exponent_bits != 0 || e->mantissa_bits != 0)
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE,
                          at + (e->sign_bits != 0 ? 7 : e->exponent_bits != 0 ? 8 : 9),
                          e->sign_bits != 0       ? "extension_type.sign_bits"
                          : e->exponent_bits != 0 ? "extension_type.exponent_bits"
                                                  : "extension_type.mantissa_bits",
                          "must be 0 for an integer type");
    if (e->exponent_bias != 0)
      return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, at + 12, "extension_type.exponent_bias",
                          "must be 0 for an integer type, got %u", e->exponent_bias);
  }
  return HURRAY_OK;
}

/* ---- entry point -------------------------------------------------------------- */

HurrayStatus hurray__descriptor_check(const HurrayDescriptorFields *f, uint32_t options,
                                      HurrayOffsets *o_out, HurrayError *err) {
  HurrayOffsets local;
  HurrayOffsets *o = o_out != NULL ? o_out : &local;
  HURRAY_TRY(check_header(f, options, err));
  options &= ~HURRAY__HEADER_CHECKED;
  hurray__descriptor_offsets(f, o);
  HURRAY_TRY(check_layout_struct(f, o, options, err));
  if (o->end > UINT32_MAX)
    return hurray__fail(err, ST_LAYOUT, 6, "descriptor_length",
                        "the encoding needs %llu bytes, more than a u32 length can declare",
                        (unsigned long long)o->end);
  HURRAY_TRY(check_buffers(f, o, options, err));
  if (f->quantization != NULL && f->quantization->raw == NULL && f->quantization->raw_len != 0)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, o->quantization + 4, "quantization",
                        "raw is NULL but raw_len is %u", f->quantization->raw_len);
  if (f->shard != NULL) HURRAY_TRY(check_shard(f, o, err));
  if (f->statistics != NULL) HURRAY_TRY(check_statistics(f, o, options, err));
  if (f->extension_type != NULL)
    HURRAY_TRY(check_extension_type(f->extension_type, o->extension_type, options, err));
  if (f->composite_member != NULL) HURRAY_TRY(check_composite_member(f, o, options, err));
  HURRAY_TRY(hurray__layout_validate(f, o, options, err));
  if (f->quantization != NULL) HURRAY_TRY(hurray__quant_validate(f, o, options, err));
  return HURRAY_OK;
}
