/*
 * Building descriptors from fields, cloning and destroying them.
 *
 * from_fields normalises the caller's fields (version, derived flags, the
 * quantization payload parsed exactly as decode parses it), runs the same
 * validation as decode, and copies everything into one allocation.
 */
#include "descriptor/descriptor_impl.h"

#define PERMISSIVE(opt) (((opt) & HURRAY_DECODE_PERMISSIVE) != 0)

/* Fields ready for validation: owns the parsed quantization (and, when the
 * caller gave typed fields, the bytes they encode to). Must not move while
 * `g` is in use. */
typedef struct Prepared {
  HurrayDescriptorFields g;
  HurrayQuantization q;
  uint8_t qbuf[256];
} Prepared;

static uint32_t derived_flags(const HurrayDescriptorFields *f) {
  uint32_t fl = 0;
  if (f->quantization != NULL) fl |= HURRAY_FLAG_HAS_QUANTIZATION;
  if (f->shard != NULL) fl |= HURRAY_FLAG_HAS_SHARD;
  if (f->extension_type != NULL) fl |= HURRAY_FLAG_HAS_EXTENSION_TYPE;
  if (f->statistics != NULL) fl |= HURRAY_FLAG_HAS_STATISTICS;
  if (f->composite_member != NULL) fl |= HURRAY_FLAG_HAS_COMPOSITE_MEMBER;
  return fl;
}

static HurrayStatus prepare(const HurrayDescriptorFields *f, uint32_t options, Prepared *pr,
                            HurrayError *err) {
  if ((options & ~HURRAY_DECODE_PERMISSIVE) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options",
                        "unknown option bits 0x%08X",
                        (unsigned)(options & ~HURRAY_DECODE_PERMISSIVE));
  pr->g = *f;
  HurrayDescriptorFields *g = &pr->g;
  if (g->version_major == 0) g->version_major = HURRAY_DESCRIPTOR_VERSION_MAJOR;
  if (hurray__layout_is_opaque(g->layout.tag))
    g->flags = f->flags; /* the sections live inside the opaque bytes */
  else
    g->flags = derived_flags(f) | (f->flags & ~HURRAY_FLAGS_KNOWN);
  if (f->quantization == NULL) return HURRAY_OK;

  const HurrayQuantization *q = f->quantization;
  const uint8_t *bytes = q->raw;
  uint32_t n = q->raw_len;
  HurrayOffsets o;
  hurray__descriptor_offsets(g, &o);
  if (bytes == NULL) {
    n = hurray__quant_encoded_len(q);
    if (n > sizeof pr->qbuf)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, o.quantization + 4, "quantization",
                          "typed fields encode to %u bytes; give such a payload as raw bytes",
                          n);
    hurray__quant_encode(q, pr->qbuf);
    bytes = pr->qbuf;
  }
  HURRAY_TRY(hurray__quant_parse(bytes, n, options, o.quantization + 4, &pr->q, err));
  g->quantization = &pr->q;
  return HURRAY_OK;
}

/* ---- one-allocation copy ------------------------------------------------------ */

static bool layout_need(const HurrayLayout *l, uint32_t rank, size_t *need) {
  uint64_t arr8 = 8u * (uint64_t)rank, arr4 = 4u * (uint64_t)rank;
  if (hurray__layout_is_opaque(l->tag)) return hurray__arena_add(need, l->u.opaque.len);
  if (l->tag >= HURRAY_LAYOUT_PRIVATE_FIRST && l->tag <= HURRAY_LAYOUT_PRIVATE_LAST)
    return hurray__arena_add(need, l->u.private_ext.data_len);
  switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
      return hurray__arena_add(need, arr8);
    case HURRAY_LAYOUT_MORTON:
    case HURRAY_LAYOUT_CSF:
      return hurray__arena_add(need, arr4);
    case HURRAY_LAYOUT_TILED: {
      bool ok = hurray__arena_add(need, (uint64_t)l->u.tiled.depth * sizeof(HurrayTiledLevel));
      for (uint32_t i = 0; ok && i < l->u.tiled.depth; i++) {
        const HurrayTiledLevel *lv = &l->u.tiled.levels[i];
        ok = hurray__arena_add(need, arr8);
        if (ok && lv->outer_layout == HURRAY_LAYOUT_STRIDED) ok = hurray__arena_add(need, arr8);
        if (ok && lv->inner_layout == HURRAY_LAYOUT_STRIDED) ok = hurray__arena_add(need, arr8);
      }
      return ok;
    }
    default:
      return true;
  }
}

/* Copies n bytes into the arena; NULL when n is 0. */
static const void *dup_bytes(HurrayArena *a, const void *src, uint64_t n) {
  if (n == 0) return NULL;
  void *dst = hurray__arena_take(a, (size_t)n);
  memcpy(dst, src, (size_t)n);
  return dst;
}

static void copy_layout(HurrayArena *a, const HurrayLayout *src, uint32_t rank,
                        HurrayLayout *dst) {
  uint64_t arr8 = 8u * (uint64_t)rank, arr4 = 4u * (uint64_t)rank;
  *dst = *src;
  if (hurray__layout_is_opaque(src->tag)) {
    dst->u.opaque.bytes = dup_bytes(a, src->u.opaque.bytes, src->u.opaque.len);
    return;
  }
  if (src->tag >= HURRAY_LAYOUT_PRIVATE_FIRST && src->tag <= HURRAY_LAYOUT_PRIVATE_LAST) {
    dst->u.private_ext.data =
        dup_bytes(a, src->u.private_ext.data, src->u.private_ext.data_len);
    return;
  }
  switch (src->tag) {
    case HURRAY_LAYOUT_STRIDED:
      dst->u.strided.strides = dup_bytes(a, src->u.strided.strides, arr8);
      return;
    case HURRAY_LAYOUT_MORTON:
      dst->u.morton.bits = dup_bytes(a, src->u.morton.bits, arr4);
      return;
    case HURRAY_LAYOUT_CSF:
      dst->u.csf.mode_order = dup_bytes(a, src->u.csf.mode_order, arr4);
      return;
    case HURRAY_LAYOUT_TILED: {
      uint32_t depth = src->u.tiled.depth;
      HurrayTiledLevel *lv = hurray__arena_take(a, depth * sizeof(HurrayTiledLevel));
      for (uint32_t i = 0; i < depth; i++) {
        const HurrayTiledLevel *s = &src->u.tiled.levels[i];
        lv[i].outer_layout = s->outer_layout;
        lv[i].inner_layout = s->inner_layout;
        lv[i].tile_shape = dup_bytes(a, s->tile_shape, arr8);
        lv[i].outer_strides = s->outer_layout == HURRAY_LAYOUT_STRIDED
                                  ? dup_bytes(a, s->outer_strides, arr8)
                                  : NULL;
        lv[i].inner_strides = s->inner_layout == HURRAY_LAYOUT_STRIDED
                                  ? dup_bytes(a, s->inner_strides, arr8)
                                  : NULL;
      }
      dst->u.tiled.levels = lv;
      return;
    }
    default:
      return;
  }
}

HurrayStatus hurray__descriptor_materialize(const HurrayDescriptorFields *f,
                                            uint64_t encoded_len, HurrayDescriptor **out,
                                            HurrayError *err) {
  uint64_t arr8 = 8u * (uint64_t)f->rank;
  size_t need = 0;
  bool ok = hurray__arena_add(&need, arr8) && layout_need(&f->layout, f->rank, &need) &&
            hurray__arena_add(&need, (uint64_t)f->buffer_count * sizeof(HurrayBufferHandle)) &&
            hurray__arena_add(&need, f->quantization ? f->quantization->raw_len : 0) &&
            hurray__arena_add(&need, f->shard ? arr8 : 0) &&
            hurray__arena_add(&need, f->shard ? arr8 : 0) &&
            hurray__arena_add(&need, f->trailing_len);
  if (!ok || need > SIZE_MAX - sizeof(HurrayDescriptor))
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "descriptor",
                        "descriptor too large for memory");
  HurrayDescriptor *d = hurray__malloc(sizeof(HurrayDescriptor) + need);
  if (d == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "descriptor",
                        "cannot allocate %llu bytes",
                        (unsigned long long)(sizeof(HurrayDescriptor) + need));
  memset(d, 0, sizeof *d);
  d->magic = HURRAY__MAGIC_DESCRIPTOR;
  hurray__handle_born(d);
  d->encoded_len = encoded_len;
  HurrayArena a = {(uint8_t *)d->arena, 0, need};
  HurrayDescriptorFields *g = &d->f;
  *g = *f;
  g->shape = dup_bytes(&a, f->shape, arr8);
  copy_layout(&a, &f->layout, f->rank, &g->layout);
  g->buffers = dup_bytes(&a, f->buffers, (uint64_t)f->buffer_count * sizeof(HurrayBufferHandle));
  if (f->quantization != NULL) {
    d->quant = *f->quantization;
    d->quant.raw = dup_bytes(&a, f->quantization->raw, f->quantization->raw_len);
    g->quantization = &d->quant;
  }
  if (f->shard != NULL) {
    d->shard.parent_shape = dup_bytes(&a, f->shard->parent_shape, arr8);
    d->shard.offset = dup_bytes(&a, f->shard->offset, arr8);
    g->shard = &d->shard;
  }
  if (f->statistics != NULL) {
    d->stats = *f->statistics;
    g->statistics = &d->stats;
  }
  if (f->extension_type != NULL) {
    d->ext = *f->extension_type;
    g->extension_type = &d->ext;
  }
  if (f->composite_member != NULL) {
    d->member = *f->composite_member;
    g->composite_member = &d->member;
  }
  g->trailing = dup_bytes(&a, f->trailing, f->trailing_len);
  *out = d;
  return HURRAY_OK;
}

/* ---- public API ------------------------------------------------------------ */

HurrayStatus hurray_descriptor_from_fields(const HurrayDescriptorFields *f, uint32_t options,
                                           HurrayDescriptor **out, HurrayError *err) {
  if (out != NULL) *out = NULL;
  if (f == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, f == NULL ? "f" : "out",
                        "is NULL");
  Prepared pr;
  HURRAY_TRY(prepare(f, options, &pr, err));
  HurrayOffsets o;
  HURRAY_TRY(hurray__descriptor_check(&pr.g, options, &o, err));
  return hurray__descriptor_materialize(&pr.g, o.end, out, err);
}

HurrayStatus hurray_descriptor_validate(const HurrayDescriptorFields *f, uint32_t options,
                                        HurrayError *err) {
  if (f == NULL) return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "f", "is NULL");
  Prepared pr;
  HURRAY_TRY(prepare(f, options, &pr, err));
  return hurray__descriptor_check(&pr.g, options, NULL, err);
}

HurrayStatus hurray_descriptor_clone(const HurrayDescriptor *d, HurrayDescriptor **out) {
  if (out != NULL) *out = NULL;
  if (d == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  if (!hurray__desc_live(d)) return HURRAY_ERR_INTERNAL;
  return hurray__descriptor_materialize(&d->f, d->encoded_len, out, NULL);
}

void hurray__descriptor_drop(HurrayDescriptor *d) {
  /* An owned, live handle: destroy returns HURRAY_OK (see common.h). */
  HurrayStatus st = hurray_descriptor_destroy(d);
  (void)st;
}

HurrayStatus hurray_descriptor_destroy(HurrayDescriptor *d) {
  if (d == NULL) return HURRAY_OK;
  if (!hurray__desc_live(d)) return HURRAY_ERR_INTERNAL;
  hurray__handle_bury(d, &d->magic);
  hurray__free(d);
  return HURRAY_OK;
}
