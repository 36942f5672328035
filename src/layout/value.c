/*
 * HurrayLayout as a value (include/hurray/layout.h): the size of a deep copy,
 * the deep copy into caller storage, equality and a hash consistent with it.
 *
 * One table of what each tag carries drives all four (the `Part` walk
 * below), so copy, equality and hash cannot disagree on which fields count:
 *   row/col-major, invalid tags   nothing but the tag
 *   strided                       strides[rank] (int64)
 *   morton                        bits[rank] (uint32)
 *   csf                           nnz, mode_order[rank] (uint32)
 *   tiled                         depth, levels[depth]: outer_layout,
 *                                 inner_layout, tile_shape[rank] (uint64),
 *                                 outer_strides[rank] / inner_strides[rank]
 *                                 (int64) when present (non-NULL)
 *   hilbert                       order, rank (its own field)
 *   coo                           nnz, is_sorted
 *   csr, csc                      nnz
 *   block_paged                   its seven scalars
 *   composite                     rule, combine_op, member_count
 *   private (0xF0-0xFE)           layout_id, data[data_len]
 *   reserved, unassigned          opaque bytes[len]
 * An array of zero entries is empty whatever its pointer; a required array
 * with entries but a NULL pointer is "missing": copying refuses it, equality
 * and hashing treat it as a value of its own (equal only to another missing
 * one).
 */
#include "layout/layout_internal.h"

#define ALIGN_ 8u

/* ---- the walk ------------------------------------------------------------------ */

/* One array of a layout: `count` entries of `width` bytes at `data`
 * (NULL: missing when count > 0, absent when optional). */
typedef struct Part {
  const void *data;
  uint64_t count;
  uint32_t width;
} Part;

static Part part(const void *data, uint64_t count, uint32_t width) {
  Part p = {data, count, width};
  return p;
}

/* Scalars of the tag, in a fixed order, as uint64 values; returns how many. */
static unsigned scalars(const HurrayLayout *l, uint64_t v[8]) {
  switch (l->tag) {
    case HURRAY_LAYOUT_CSF:
      v[0] = l->u.csf.nnz;
      return 1;
    case HURRAY_LAYOUT_TILED:
      v[0] = l->u.tiled.depth;
      return 1;
    case HURRAY_LAYOUT_HILBERT:
      v[0] = l->u.hilbert.order;
      v[1] = l->u.hilbert.rank;
      return 2;
    case HURRAY_LAYOUT_COO:
      v[0] = l->u.coo.nnz;
      v[1] = l->u.coo.is_sorted;
      return 2;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      v[0] = l->u.csr.nnz;
      return 1;
    case HURRAY_LAYOUT_BLOCK_PAGED:
      v[0] = l->u.block_paged.page_size;
      v[1] = l->u.block_paged.num_pages;
      v[2] = l->u.block_paged.paged_axis;
      v[3] = l->u.block_paged.num_seqs;
      v[4] = l->u.block_paged.kv_role;
      v[5] = l->u.block_paged.layer_index;
      v[6] = l->u.block_paged.block_table_index_type;
      return 7;
    case HURRAY_LAYOUT_COMPOSITE:
      v[0] = l->u.composite.rule;
      v[1] = l->u.composite.combine_op;
      v[2] = l->u.composite.member_count;
      return 3;
    default:
      break;
  }
  switch (hurray_layout_tag_kind(l->tag)) {
    case HURRAY_TAG_PRIVATE:
      v[0] = l->u.private_ext.layout_id;
      v[1] = l->u.private_ext.data_len;
      return 2;
    case HURRAY_TAG_RESERVED:
    case HURRAY_TAG_UNASSIGNED:
      v[0] = l->u.opaque.len;
      return 1;
    default:
      return 0;
  }
}

/* The one array of a non-tiled tag (count 0 when it has none). */
static Part flat_array(const HurrayLayout *l, uint32_t rank) {
  switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
      return part(l->u.strided.strides, rank, 8);
    case HURRAY_LAYOUT_MORTON:
      return part(l->u.morton.bits, rank, 4);
    case HURRAY_LAYOUT_CSF:
      return part(l->u.csf.mode_order, rank, 4);
    case HURRAY_LAYOUT_TILED:
      return part(NULL, 0, 1);
    default:
      break;
  }
  switch (hurray_layout_tag_kind(l->tag)) {
    case HURRAY_TAG_PRIVATE:
      return part(l->u.private_ext.data, l->u.private_ext.data_len, 1);
    case HURRAY_TAG_RESERVED:
    case HURRAY_TAG_UNASSIGNED:
      return part(l->u.opaque.bytes, l->u.opaque.len, 1);
    default:
      return part(NULL, 0, 1);
  }
}

static const char *flat_field(uint8_t tag) {
  switch (tag) {
    case HURRAY_LAYOUT_STRIDED: return "layout.strides";
    case HURRAY_LAYOUT_MORTON: return "layout.morton_bits";
    case HURRAY_LAYOUT_CSF: return "layout.mode_order";
    default:
      return hurray_layout_tag_kind(tag) == HURRAY_TAG_PRIVATE ? "layout.data" : "layout.opaque";
  }
}

/* An optional tiled stride array: present when it has entries and a pointer. */
static bool strides_present(const int64_t *s, uint32_t rank) { return s != NULL && rank > 0; }

/* ---- copy size ------------------------------------------------------------------- */

/* *total += count * width rounded up to ALIGN_; false on overflow. */
static bool add_piece(size_t *total, uint64_t count, uint32_t width) {
  uint64_t bytes;
  if (hurray__mul_overflow_u64(count, width, &bytes) || bytes > SIZE_MAX - (ALIGN_ - 1u))
    return false;
  size_t rounded = ((size_t)bytes + (ALIGN_ - 1u)) & ~(size_t)(ALIGN_ - 1u);
  if (rounded > SIZE_MAX - *total) return false;
  *total += rounded;
  return true;
}

static HurrayStatus too_big(HurrayError *err) {
  return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout",
                      "a copy of this layout needs more bytes than a size_t can count");
}

static HurrayStatus missing(HurrayError *err, const char *field, uint64_t count) {
  return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field,
                      "array is NULL but has %llu entries", (unsigned long long)count);
}

/* The bytes a deep copy of `l` needs, checking every array it would read. */
static HurrayStatus copy_bytes(const HurrayLayout *l, uint32_t rank, size_t *out,
                               HurrayError *err) {
  size_t total = 0;
  if (l->tag != HURRAY_LAYOUT_TILED) {
    Part a = flat_array(l, rank);
    if (a.count > 0 && a.data == NULL) return missing(err, flat_field(l->tag), a.count);
    if (!add_piece(&total, a.count, a.width)) return too_big(err);
    *out = total;
    return HURRAY_OK;
  }
  uint32_t depth = l->u.tiled.depth;
  if (depth > 0 && l->u.tiled.levels == NULL) return missing(err, "layout.tiled.levels", depth);
  if (!add_piece(&total, depth, (uint32_t)sizeof(HurrayTiledLevel))) return too_big(err);
  for (uint32_t d = 0; d < depth; d++) {
    const HurrayTiledLevel *v = &l->u.tiled.levels[d];
    if (rank > 0 && v->tile_shape == NULL) {
      char path[48];
      return missing(err, hurray__path(path, sizeof path, "layout.tiled[%u].tile_shape", d),
                     rank);
    }
    if (!add_piece(&total, rank, 8) ||
        (strides_present(v->outer_strides, rank) && !add_piece(&total, rank, 8)) ||
        (strides_present(v->inner_strides, rank) && !add_piece(&total, rank, 8)))
      return too_big(err);
  }
  *out = total;
  return HURRAY_OK;
}

HurrayStatus hurray_layout_copy_size(const HurrayLayout *src, uint32_t rank, size_t *out_bytes,
                                     HurrayError *err) {
  if (src == NULL || out_bytes == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        src == NULL ? "src" : "out_bytes", "is NULL");
  return copy_bytes(src, rank, out_bytes, err);
}

/* ---- copy --------------------------------------------------------------------------- */

/* A bump allocator over the caller's storage (every piece ALIGN_-aligned). */
typedef struct Bump {
  unsigned char *next;
} Bump;

/* Copies count * width bytes from src into the next piece; NULL for none. */
static void *take(Bump *b, const void *src, uint64_t count, uint32_t width) {
  size_t bytes = (size_t)count * width; /* fits: copy_bytes summed it */
  if (bytes == 0) return NULL;
  void *p = b->next;
  memcpy(p, src, bytes);
  b->next += (bytes + (ALIGN_ - 1u)) & ~(size_t)(ALIGN_ - 1u);
  return p;
}

HurrayStatus hurray_layout_copy(const HurrayLayout *src, uint32_t rank, void *storage,
                                size_t storage_bytes, HurrayLayout *dst, HurrayError *err) {
  if (src == NULL || dst == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        src == NULL ? "src" : "dst", "is NULL");
  size_t need = 0;
  HURRAY_TRY(copy_bytes(src, rank, &need, err));
  if (storage_bytes < need)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "storage_bytes",
                        "the copy needs %zu bytes, the storage has %zu", need, storage_bytes);
  if (need > 0 && storage == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "storage",
                        "is NULL but the copy needs %zu bytes", need);
  if (need > 0 && ((uintptr_t)storage & (ALIGN_ - 1u)) != 0)
    return hurray__fail(err, HURRAY_ERR_MISALIGNED, HURRAY_NO_OFFSET, "storage",
                        "address %p is not 8-byte aligned", storage);

  const HurrayLayout l = *src; /* dst may be src */
  HurrayLayout out = l;
  Bump b = {(unsigned char *)storage};
  if (l.tag == HURRAY_LAYOUT_TILED) {
    uint32_t depth = l.u.tiled.depth;
    HurrayTiledLevel *lv = NULL;
    if (depth > 0) {
      lv = (HurrayTiledLevel *)(void *)b.next;
      b.next += ((size_t)depth * sizeof *lv + (ALIGN_ - 1u)) & ~(size_t)(ALIGN_ - 1u);
    }
    for (uint32_t d = 0; d < depth; d++) {
      const HurrayTiledLevel *s = &l.u.tiled.levels[d];
      HurrayTiledLevel v = *s;
      v.tile_shape = take(&b, s->tile_shape, rank, 8);
      v.outer_strides =
          strides_present(s->outer_strides, rank) ? take(&b, s->outer_strides, rank, 8) : NULL;
      v.inner_strides =
          strides_present(s->inner_strides, rank) ? take(&b, s->inner_strides, rank, 8) : NULL;
      lv[d] = v;
    }
    out.u.tiled.levels = lv;
  } else {
    Part a = flat_array(&l, rank);
    void *p = take(&b, a.data, a.count, a.width);
    switch (l.tag) {
      case HURRAY_LAYOUT_STRIDED: out.u.strided.strides = p; break;
      case HURRAY_LAYOUT_MORTON: out.u.morton.bits = p; break;
      case HURRAY_LAYOUT_CSF: out.u.csf.mode_order = p; break;
      default:
        switch (hurray_layout_tag_kind(l.tag)) {
          case HURRAY_TAG_PRIVATE: out.u.private_ext.data = p; break;
          case HURRAY_TAG_RESERVED:
          case HURRAY_TAG_UNASSIGNED: out.u.opaque.bytes = p; break;
          default: break;
        }
        break;
    }
  }
  *dst = out;
  return HURRAY_OK;
}

/* ---- equality --------------------------------------------------------------------- */

static bool parts_equal(Part a, Part b) {
  if (a.count != b.count) return false;
  if (a.count == 0) return true;
  if (a.data == NULL || b.data == NULL) return a.data == b.data; /* missing */
  return memcmp(a.data, b.data, (size_t)a.count * a.width) == 0;
}

static bool optional_equal(const int64_t *a, const int64_t *b, uint32_t rank) {
  bool pa = strides_present(a, rank), pb = strides_present(b, rank);
  if (pa != pb) return false;
  return !pa || memcmp(a, b, (size_t)rank * 8u) == 0;
}

bool hurray_layout_equal(const HurrayLayout *a, const HurrayLayout *b, uint32_t rank) {
  if (a == NULL || b == NULL || a->tag != b->tag) return false;
  uint64_t va[8], vb[8];
  unsigned n = scalars(a, va);
  (void)scalars(b, vb);
  for (unsigned i = 0; i < n; i++)
    if (va[i] != vb[i]) return false;
  if (a->tag != HURRAY_LAYOUT_TILED) return parts_equal(flat_array(a, rank), flat_array(b, rank));
  uint32_t depth = a->u.tiled.depth; /* equal to b's: a scalar above */
  const HurrayTiledLevel *la = a->u.tiled.levels, *lb = b->u.tiled.levels;
  if (depth == 0) return true;
  if (la == NULL || lb == NULL) return la == lb;
  for (uint32_t d = 0; d < depth; d++) {
    const HurrayTiledLevel *x = &la[d], *y = &lb[d];
    if (x->outer_layout != y->outer_layout || x->inner_layout != y->inner_layout ||
        !parts_equal(part(x->tile_shape, rank, 8), part(y->tile_shape, rank, 8)) ||
        !optional_equal(x->outer_strides, y->outer_strides, rank) ||
        !optional_equal(x->inner_strides, y->inner_strides, rank))
      return false;
  }
  return true;
}

/* ---- hash ------------------------------------------------------------------------- */

/* A multiply-xor over 64-bit words, finished by splitmix64's mixer. */
static uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 0x100000001b3ull + 0x9E3779B97F4A7C15ull;
}

static uint64_t finish(uint64_t h) {
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

/* Mixes a part's bytes, eight at a time (the last word zero-padded), after its count. */
static uint64_t mix_part(uint64_t h, Part p) {
  h = mix(h, p.count);
  if (p.count == 0) return h;
  if (p.data == NULL) return mix(h, 0xA5A5A5A5u); /* missing */
  const unsigned char *q = p.data;
  size_t bytes = (size_t)p.count * p.width;
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t w = 0;
    size_t k = bytes - i < 8 ? bytes - i : 8;
    memcpy(&w, q + i, k);
    h = mix(h, w);
  }
  return h;
}

static uint64_t mix_optional(uint64_t h, const int64_t *s, uint32_t rank) {
  if (!strides_present(s, rank)) return mix(h, 0);
  return mix_part(mix(h, 1), part(s, rank, 8));
}

uint64_t hurray_layout_hash(const HurrayLayout *l, uint32_t rank) {
  if (l == NULL) return 0;
  uint64_t h = mix(0xcbf29ce484222325ull, l->tag), v[8];
  unsigned n = scalars(l, v);
  for (unsigned i = 0; i < n; i++) h = mix(h, v[i]);
  if (l->tag != HURRAY_LAYOUT_TILED) return finish(mix_part(h, flat_array(l, rank)));
  const HurrayTiledLevel *lv = l->u.tiled.levels;
  if (l->u.tiled.depth > 0 && lv == NULL) return finish(mix(h, 0xA5A5A5A5u));
  for (uint32_t d = 0; d < l->u.tiled.depth; d++) {
    h = mix(h, lv[d].outer_layout);
    h = mix(h, lv[d].inner_layout);
    h = mix_part(h, part(lv[d].tile_shape, rank, 8));
    h = mix_optional(h, lv[d].outer_strides, rank);
    h = mix_optional(h, lv[d].inner_strides, rank);
  }
  return finish(h);
}
