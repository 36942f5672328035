/*
 * Descriptor decoding (spec: docs/spec/metadata.md, docs/spec/layouts/\*.md,
 * docs/spec/buffer-protocol.md; docs/internals/decisions.md § Descriptor encoding,
 * § Strictness) and the field-by-field walk used by hurray-inspect.
 *
 * One parser serves decode, decode_ex and walk. It reads the fixed header,
 * sizes one allocation from descriptor_length, copies every array straight
 * from the wire into that allocation's arena, and then hands the resulting
 * field view to the validation shared with from_fields. It never reads past
 * descriptor_length; the walker's events are produced only when a visitor is
 * given, so the decode path does no formatting.
 */
#include <stdio.h>

#include "descriptor/descriptor_impl.h"

#define ST_LAYOUT HURRAY_ERR_INVALID_LAYOUT
#define PERMISSIVE(opt) (((opt) & HURRAY_DECODE_PERMISSIVE) != 0)

typedef struct Parser {
  const uint8_t *b;
  uint64_t pos;
  uint64_t end; /* descriptor_length */
  uint32_t options;
  uint32_t rank;
  HurrayError *err;
  HurrayArena arena;
  HurrayFieldVisitor visit;
  void *ctx;
  char path[96];
  char meaning[160];
} Parser;

#define WALKING(p) HURRAY_UNLIKELY((p)->visit != NULL)

/* ---- walk events --------------------------------------------------------------- */

static void emit(Parser *p, uint64_t off, uint64_t size, const char *path, HurrayFieldKind kind,
                 uint64_t u, int64_t i, double f, const char *meaning) {
  HurrayFieldEvent e;
  e.offset = off;
  e.size = size;
  e.path = path;
  e.kind = kind;
  e.u = u;
  e.i = i;
  e.f = f;
  e.bytes = p->b + off;
  e.meaning = meaning;
  p->visit(&e, p->ctx);
}

static void ev_u(Parser *p, uint64_t off, uint64_t size, const char *path, uint64_t v,
                 const char *meaning) {
  emit(p, off, size, path, HURRAY_FIELD_UINT, v, (int64_t)v, (double)v, meaning);
}
static void ev_i(Parser *p, uint64_t off, uint64_t size, const char *path, int64_t v) {
  emit(p, off, size, path, HURRAY_FIELD_INT, (uint64_t)v, v, (double)v, NULL);
}
static void ev_f(Parser *p, uint64_t off, uint64_t size, const char *path, double v) {
  emit(p, off, size, path, HURRAY_FIELD_FLOAT, 0, 0, v, NULL);
}
static void ev_bytes(Parser *p, uint64_t off, uint64_t size, const char *path,
                     const char *meaning) {
  emit(p, off, size, path, HURRAY_FIELD_BYTES, 0, 0, 0.0, meaning);
}
static void ev_section(Parser *p, uint64_t off, uint64_t size, const char *path) {
  emit(p, off, size, path, HURRAY_FIELD_SECTION, 0, 0, 0.0, NULL);
}

/* "layout.tiled[L].name[idx]", "name[idx]" or "name" (level < 0 / idx < 0 omit). */
static const char *fmt_path(char *buf, size_t n, const char *name, int level, long idx) {
  if (level >= 0 && idx >= 0)
    return hurray__path(buf, n, "layout.tiled[%d].%s[%ld]", level, name, idx);
  if (level >= 0) return hurray__path(buf, n, "layout.tiled[%d].%s", level, name);
  if (idx >= 0) return hurray__path(buf, n, "%s[%ld]", name, idx);
  return hurray__path(buf, n, "%s", name);
}

static const char *tag_meaning(const char *name, HurrayTagKind k) {
  return name != NULL ? name : hurray__tag_kind_word(k);
}

static const char *flags_meaning(Parser *p, uint32_t flags) {
  static const char *const names[] = {"HAS_QUANTIZATION", "HAS_SHARD", "HAS_EXTENSION_TYPE",
                                      "HAS_STATISTICS", "HAS_COMPOSITE_MEMBER"};
  size_t o = 0;
  p->meaning[0] = '\0';
  for (unsigned bit = 0; bit < 5; bit++) {
    if (flags & (1u << bit))
      o += (size_t)snprintf(p->meaning + o, sizeof p->meaning - o, "%s%s", o ? "|" : "",
                            names[bit]);
  }
  if (flags & ~HURRAY_FLAGS_KNOWN)
    snprintf(p->meaning + o, sizeof p->meaning - o, "%sreserved 0x%08X", o ? "|" : "",
             (unsigned)(flags & ~HURRAY_FLAGS_KNOWN));
  return p->meaning[0] ? p->meaning : "none";
}

/* ---- reading --------------------------------------------------------------- */

static HurrayStatus truncated(Parser *p, uint64_t at, const char *field, uint64_t need) {
  uint64_t left = at <= p->end ? p->end - at : 0;
  return hurray__fail(p->err, ST_LAYOUT, at, field,
                      "truncated: %llu bytes needed, %llu left before descriptor_length %llu",
                      (unsigned long long)need, (unsigned long long)left,
                      (unsigned long long)p->end);
}

#define NEED(p, n, field)                                                          \
  do {                                                                             \
    if (HURRAY_UNLIKELY((p)->end - (p)->pos < (uint64_t)(n)))                      \
      return truncated((p), (p)->pos, (field), (uint64_t)(n));                     \
  } while (0)

static HurrayStatus arena_exhausted(Parser *p, const char *field) {
  return hurray__fail(p->err, HURRAY_ERR_INTERNAL, p->pos, field,
                      "internal error: descriptor arena exhausted");
}

static HurrayStatus reserved_nonzero(Parser *p, uint64_t at, uint64_t n, const char *field) {
  for (uint64_t k = 0; k < n; k++) {
    if (p->b[at + k] != 0)
      return hurray__fail(p->err, ST_LAYOUT, at + k, field,
                          "reserved byte %llu of %llu must be 0, got 0x%02X",
                          (unsigned long long)k, (unsigned long long)n, p->b[at + k]);
  }
  return HURRAY_OK;
}

/* A reserved run: event, then the all-zero check (both modes). */
static HurrayStatus read_reserved(Parser *p, uint64_t n, const char *field) {
  if (WALKING(p)) ev_bytes(p, p->pos, n, field, NULL);
  HURRAY_TRY(reserved_nonzero(p, p->pos, n, field));
  p->pos += n;
  return HURRAY_OK;
}

enum { ARR_U64, ARR_I64, ARR_U32 };

/*
 * Reads `n` elements (8 bytes for U64/I64, 4 for U32) into the arena.
 * `name`/`level` build the path ("layout.tiled[level].name[i]" when level >= 0).
 */
static HurrayStatus read_array(Parser *p, uint32_t n, int kind, const char *name, int level,
                               const void **out) {
  uint64_t el = kind == ARR_U32 ? 4u : 8u;
  uint64_t bytes = el * n;
  *out = NULL;
  if (n == 0) return HURRAY_OK;
  if (WALKING(p)) {
    uint64_t avail = (p->end - p->pos) / el;
    for (uint64_t i = 0; i < n && i < avail; i++) {
      uint64_t at = p->pos + i * el;
      fmt_path(p->path, sizeof p->path, name, level, (long)i);
      if (kind == ARR_U32) {
        ev_u(p, at, 4, p->path, hurray__ld32(p->b + at), NULL);
      } else if (kind == ARR_I64) {
        ev_i(p, at, 8, p->path, (int64_t)hurray__ld64(p->b + at));
      } else {
        uint64_t v = hurray__ld64(p->b + at);
        ev_u(p, at, 8, p->path, v, v == HURRAY_DYNAMIC_DIM && level < 0 ? "dynamic" : NULL);
      }
    }
  }
  if (HURRAY_UNLIKELY(p->end - p->pos < bytes)) {
    uint64_t idx = (p->end - p->pos) / el;
    char path[96];
    return truncated(p, p->pos + idx * el, fmt_path(path, sizeof path, name, level, (long)idx),
                     el);
  }
  void *dst = hurray__arena_take(&p->arena, (size_t)bytes);
  if (dst == NULL) return arena_exhausted(p, name);
  const uint8_t *src = p->b + p->pos;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(dst, src, (size_t)bytes);
#else
  if (kind == ARR_U32) {
    uint32_t *d32 = dst;
    for (uint32_t i = 0; i < n; i++) d32[i] = hurray__ld32(src + 4u * i);
  } else {
    uint64_t *d64 = dst;
    for (uint32_t i = 0; i < n; i++) d64[i] = hurray__ld64(src + 8u * i);
  }
#endif
  p->pos += bytes;
  *out = dst;
  return HURRAY_OK;
}

/* Copies n raw bytes into the arena (NULL when n == 0). */
static HurrayStatus read_blob(Parser *p, uint64_t n, const char *field, const uint8_t **out) {
  *out = NULL;
  NEED(p, n, field);
  if (n == 0) return HURRAY_OK;
  uint8_t *dst = hurray__arena_take(&p->arena, (size_t)n);
  if (dst == NULL) return arena_exhausted(p, field);
  memcpy(dst, p->b + p->pos, (size_t)n);
  p->pos += n;
  *out = dst;
  return HURRAY_OK;
}

/* ---- layout payloads --------------------------------------------------------- */

/* Walk only: bytes the tiled payload spans (or what is left if truncated). */
static uint64_t tiled_extent(const Parser *p) {
  uint64_t at = p->pos, arr = 8u * (uint64_t)p->rank;
  for (uint32_t d = 0; d < HURRAY_MAX_TILED_DEPTH; d++) {
    if (p->end - at < arr + 4) return p->end - p->pos;
    uint8_t ol = p->b[at + arr], il = p->b[at + arr + 1];
    at += arr + 4 + (ol == HURRAY_LAYOUT_STRIDED ? arr : 0) +
          (il == HURRAY_LAYOUT_STRIDED ? arr : 0);
    if (at > p->end) return p->end - p->pos;
    if (il != HURRAY_LAYOUT_TILED) break;
  }
  return at - p->pos;
}

static HurrayStatus parse_tiled(Parser *p, HurrayLayout *l) {
  HurrayTiledLevel *levels = hurray__arena_take(
      &p->arena, HURRAY_MAX_TILED_DEPTH * sizeof(HurrayTiledLevel));
  if (levels == NULL) return arena_exhausted(p, "layout.tiled");
  uint64_t arr = 8u * (uint64_t)p->rank;
  uint32_t depth = 0;
  for (;;) {
    char path[64];
    if (depth == HURRAY_MAX_TILED_DEPTH)
      return hurray__fail(p->err, ST_LAYOUT, p->pos,
                          fmt_path(path, sizeof path, "tile_shape", (int)depth, -1),
                          "tiled layouts nest deeper than %u levels", HURRAY_MAX_TILED_DEPTH);
    HurrayTiledLevel *lv = &levels[depth];
    int lvl = (int)depth;
    if (WALKING(p)) {
      uint64_t size = arr + 4;
      if (p->end - p->pos >= arr + 4) {
        uint8_t ol = p->b[p->pos + arr], il = p->b[p->pos + arr + 1];
        size += (ol == HURRAY_LAYOUT_STRIDED ? arr : 0) + (il == HURRAY_LAYOUT_STRIDED ? arr : 0);
      }
      if (size > p->end - p->pos) size = p->end - p->pos;
      hurray__path(p->path, sizeof p->path, "layout.tiled[%u]", depth);
      ev_section(p, p->pos, size, p->path);
    }
    const void *a;
    HURRAY_TRY(read_array(p, p->rank, ARR_U64, "tile_shape", lvl, &a));
    lv->tile_shape = a;
    if (p->end - p->pos < 4)
      return truncated(p, p->pos, fmt_path(path, sizeof path, "outer_layout", lvl, -1), 4);
    uint8_t ol = p->b[p->pos], il = p->b[p->pos + 1];
    if (WALKING(p)) {
      ev_u(p, p->pos, 1, fmt_path(p->path, sizeof p->path, "outer_layout", lvl, -1), ol,
           hurray_layout_name(ol));
    }
    if (ol < HURRAY_LAYOUT_ROW_MAJOR || ol > HURRAY_LAYOUT_STRIDED)
      return hurray__fail(p->err, ST_LAYOUT, p->pos,
                          fmt_path(path, sizeof path, "outer_layout", lvl, -1),
                          "0x%02X is not row-major, column-major or strided (0x01-0x03)", ol);
    if (WALKING(p)) {
      ev_u(p, p->pos + 1, 1, fmt_path(p->path, sizeof p->path, "inner_layout", lvl, -1), il,
           hurray_layout_name(il));
    }
    if (il < HURRAY_LAYOUT_ROW_MAJOR || il > HURRAY_LAYOUT_TILED)
      return hurray__fail(p->err, ST_LAYOUT, p->pos + 1,
                          fmt_path(path, sizeof path, "inner_layout", lvl, -1),
                          "0x%02X is not row-major, column-major, strided or tiled (0x01-0x04)",
                          il);
    p->pos += 2;
    if (WALKING(p))
      ev_bytes(p, p->pos, 2, fmt_path(p->path, sizeof p->path, "reserved", lvl, -1), NULL);
    if (p->b[p->pos] != 0 || p->b[p->pos + 1] != 0)
      return reserved_nonzero(p, p->pos, 2, fmt_path(path, sizeof path, "reserved", lvl, -1));
    p->pos += 2;
    lv->outer_layout = ol;
    lv->inner_layout = il;
    lv->outer_strides = NULL;
    lv->inner_strides = NULL;
    if (ol == HURRAY_LAYOUT_STRIDED) {
      HURRAY_TRY(read_array(p, p->rank, ARR_I64, "outer_strides", lvl, &a));
      lv->outer_strides = a;
    }
    if (il == HURRAY_LAYOUT_STRIDED) {
      HURRAY_TRY(read_array(p, p->rank, ARR_I64, "inner_strides", lvl, &a));
      lv->inner_strides = a;
    }
    depth++;
    if (il != HURRAY_LAYOUT_TILED) break;
  }
  l->u.tiled.depth = depth;
  l->u.tiled.levels = levels;
  return HURRAY_OK;
}

static const char *kv_role_name(uint8_t v) {
  return v == 0 ? "key" : v == 1 ? "value" : v == 2 ? "fused" : NULL;
}
static const char *rule_name(uint8_t v) {
  if (v >= 0xF0 && v <= 0xFE) return "private";
  return v == 1 ? "partition" : v == 2 ? "overlay" : v == 3 ? "group" : NULL;
}
static const char *combine_name(uint8_t v) {
  return v == 0 ? "none" : v == 1 ? "replace" : v == 2 ? "add" : NULL;
}

static HurrayStatus parse_fixed_layout(Parser *p, HurrayLayout *l) {
  const uint8_t *b = p->b;
  uint64_t at = p->pos;
  const void *a;
  switch (l->tag) {
    case HURRAY_LAYOUT_COO:
      NEED(p, 16, "layout.nnz");
      l->u.coo.nnz = hurray__ld64(b + at);
      l->u.coo.is_sorted = b[at + 8];
      if (WALKING(p)) {
        ev_u(p, at, 8, "layout.nnz", l->u.coo.nnz, NULL);
        ev_u(p, at + 8, 1, "layout.is_sorted", b[at + 8],
             b[at + 8] == 0 ? "unsorted" : b[at + 8] == 1 ? "sorted" : NULL);
      }
      p->pos += 9;
      return read_reserved(p, 7, "layout.reserved");
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      NEED(p, 16, "layout.nnz");
      l->u.csr.nnz = hurray__ld64(b + at);
      if (WALKING(p)) ev_u(p, at, 8, "layout.nnz", l->u.csr.nnz, NULL);
      p->pos += 8;
      return read_reserved(p, 8, "layout.reserved");
    case HURRAY_LAYOUT_CSF:
      NEED(p, 8, "layout.nnz");
      l->u.csf.nnz = hurray__ld64(b + at);
      if (WALKING(p)) ev_u(p, at, 8, "layout.nnz", l->u.csf.nnz, NULL);
      p->pos += 8;
      HURRAY_TRY(read_array(p, p->rank, ARR_U32, "layout.mode_order", -1, &a));
      l->u.csf.mode_order = a;
      NEED(p, 8, "layout.reserved");
      return read_reserved(p, 8, "layout.reserved");
    case HURRAY_LAYOUT_BLOCK_PAGED:
      NEED(p, 32, "layout.page_size");
      l->u.block_paged.page_size = hurray__ld32(b + at);
      l->u.block_paged.num_pages = hurray__ld64(b + at + 4);
      l->u.block_paged.paged_axis = hurray__ld32(b + at + 12);
      l->u.block_paged.num_seqs = hurray__ld32(b + at + 16);
      l->u.block_paged.kv_role = b[at + 20];
      l->u.block_paged.layer_index = hurray__ld32(b + at + 21);
      l->u.block_paged.block_table_index_type = b[at + 25];
      if (WALKING(p)) {
        ev_u(p, at, 4, "layout.page_size", l->u.block_paged.page_size, NULL);
        ev_u(p, at + 4, 8, "layout.num_pages", l->u.block_paged.num_pages, NULL);
        ev_u(p, at + 12, 4, "layout.paged_axis", l->u.block_paged.paged_axis, NULL);
        ev_u(p, at + 16, 4, "layout.num_seqs", l->u.block_paged.num_seqs, NULL);
        ev_u(p, at + 20, 1, "layout.kv_role", b[at + 20], kv_role_name(b[at + 20]));
        ev_u(p, at + 21, 4, "layout.layer_index", l->u.block_paged.layer_index,
             l->u.block_paged.layer_index == HURRAY_NO_LAYER_INDEX ? "none" : NULL);
        ev_u(p, at + 25, 1, "layout.block_table_index_type", b[at + 25],
             b[at + 25] == 0 ? "uint32" : b[at + 25] == 1 ? "uint64" : NULL);
      }
      p->pos += 26;
      return read_reserved(p, 6, "layout.reserved");
    case HURRAY_LAYOUT_COMPOSITE:
      NEED(p, 8, "layout.rule");
      l->u.composite.rule = b[at];
      l->u.composite.combine_op = b[at + 1];
      l->u.composite.member_count = hurray__ld32(b + at + 4);
      if (WALKING(p)) {
        ev_u(p, at, 1, "layout.rule", b[at], rule_name(b[at]));
        ev_u(p, at + 1, 1, "layout.combine_op", b[at + 1], combine_name(b[at + 1]));
      }
      p->pos += 2;
      HURRAY_TRY(read_reserved(p, 2, "layout.reserved"));
      if (WALKING(p))
        ev_u(p, at + 4, 4, "layout.member_count", l->u.composite.member_count,
             l->u.composite.member_count == HURRAY_COMPOSITE_OPEN_COUNT ? "open (reserved)"
                                                                         : NULL);
      p->pos += 4;
      return HURRAY_OK;
    case HURRAY_LAYOUT_HILBERT:
      NEED(p, 8, "layout.order");
      l->u.hilbert.order = hurray__ld32(b + at);
      l->u.hilbert.rank = hurray__ld32(b + at + 4);
      if (WALKING(p)) {
        ev_u(p, at, 4, "layout.order", l->u.hilbert.order, NULL);
        ev_u(p, at + 4, 4, "layout.rank", l->u.hilbert.rank, NULL);
      }
      p->pos += 8;
      return HURRAY_OK;
    default:
      return HURRAY_OK;
  }
}

static HurrayStatus parse_layout(Parser *p, HurrayLayout *l, bool *opaque) {
  HurrayTagKind k = hurray_layout_tag_kind(l->tag);
  *opaque = false;
  if (k == HURRAY_TAG_INVALID || (k == HURRAY_TAG_RESERVED && !PERMISSIVE(p->options)))
    return hurray__fail(p->err, ST_LAYOUT, 15, "layout_tag", "layout tag 0x%02X is %s",
                        l->tag, hurray__tag_kind_word(k));
  if (k == HURRAY_TAG_RESERVED) {
    /* Permissive: the payload length is unknown, so keep every remaining byte. */
    uint64_t n = p->end - p->pos;
    if (WALKING(p)) ev_bytes(p, p->pos, n, "layout.opaque", "uninterpreted layout payload");
    *opaque = true;
    l->u.opaque.len = (uint32_t)n;
    return read_blob(p, n, "layout.opaque", &l->u.opaque.bytes);
  }
  if (k == HURRAY_TAG_PRIVATE) {
    NEED(p, 12, "layout.layout_id");
    l->u.private_ext.layout_id = hurray__ld64(p->b + p->pos);
    l->u.private_ext.data_len = hurray__ld32(p->b + p->pos + 8);
    if (WALKING(p)) {
      uint64_t n = l->u.private_ext.data_len, left = p->end - p->pos - 12;
      ev_section(p, p->pos, 12 + (n < left ? n : left), "layout");
      ev_u(p, p->pos, 8, "layout.layout_id", l->u.private_ext.layout_id, NULL);
      ev_u(p, p->pos + 8, 4, "layout.data_length", n, NULL);
      ev_bytes(p, p->pos + 12, n < left ? n : left, "layout.data", NULL);
    }
    p->pos += 12;
    return read_blob(p, l->u.private_ext.data_len, "layout.data", &l->u.private_ext.data);
  }
  const void *a;
  switch (l->tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
    case HURRAY_LAYOUT_COL_MAJOR:
      return HURRAY_OK;
    case HURRAY_LAYOUT_STRIDED:
      if (WALKING(p) && p->rank != 0) {
        uint64_t n = 8u * (uint64_t)p->rank, left = p->end - p->pos;
        ev_section(p, p->pos, n < left ? n : left, "layout");
      }
      HURRAY_TRY(read_array(p, p->rank, ARR_I64, "layout.strides", -1, &a));
      l->u.strided.strides = a;
      return HURRAY_OK;
    case HURRAY_LAYOUT_MORTON:
      if (WALKING(p) && p->rank != 0) {
        uint64_t n = 4u * (uint64_t)p->rank, left = p->end - p->pos;
        ev_section(p, p->pos, n < left ? n : left, "layout");
      }
      HURRAY_TRY(read_array(p, p->rank, ARR_U32, "layout.morton_bits", -1, &a));
      l->u.morton.bits = a;
      return HURRAY_OK;
    case HURRAY_LAYOUT_TILED:
      if (WALKING(p)) ev_section(p, p->pos, tiled_extent(p), "layout");
      return parse_tiled(p, l);
    default:
      if (WALKING(p)) {
        uint64_t n = hurray__layout_payload_len(l, p->rank), left = p->end - p->pos;
        ev_section(p, p->pos, n < left ? n : left, "layout");
      }
      return parse_fixed_layout(p, l);
  }
}

/* ---- buffer table ---------------------------------------------------------- */

static HurrayStatus parse_buffers(Parser *p, HurrayDescriptorFields *f) {
  NEED(p, 1, "buffer_count");
  uint32_t count = p->b[p->pos];
  if (WALKING(p)) {
    uint64_t n = 1u + (uint64_t)HURRAY_BUFFER_HANDLE_LEN * count, left = p->end - p->pos;
    ev_section(p, p->pos, n < left ? n : left, "buffers");
    ev_u(p, p->pos, 1, "buffer_count", count, NULL);
  }
  p->pos++;
  f->buffer_count = count;
  f->buffers = NULL;
  if (count == 0) return HURRAY_OK;
  /* Room only for the handles the wire can hold: a count larger than that is
   * reported as a truncated handle below, never as an exhausted arena. */
  uint64_t fit = (p->end - p->pos) / HURRAY_BUFFER_HANDLE_LEN;
  uint32_t take = count <= fit ? count : (uint32_t)fit;
  HurrayBufferHandle *h = NULL;
  if (take > 0) {
    h = hurray__arena_take(&p->arena, (size_t)take * sizeof(HurrayBufferHandle));
    if (h == NULL) return arena_exhausted(p, "buffers");
  }
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *b = p->b + p->pos;
    if (HURRAY_UNLIKELY(p->end - p->pos < HURRAY_BUFFER_HANDLE_LEN)) {
      char path[48];
      return truncated(p, p->pos, hurray__path(path, sizeof path, "buffers[%u]", i),
                       HURRAY_BUFFER_HANDLE_LEN);
    }
    h[i].byte_size = hurray__ld64(b);
    h[i].alignment = hurray__ld32(b + 8);
    h[i].device_tag = b[12];
    h[i].sync_mode = b[13];
    h[i].memory_class = b[14];
    h[i].reserved = b[15];
    if (WALKING(p)) {
      uint64_t at = p->pos;
      hurray__path(p->path, sizeof p->path, "buffers[%u]", i);
      ev_section(p, at, 16, p->path);
      hurray__path(p->path, sizeof p->path, "buffers[%u].byte_size", i);
      ev_u(p, at, 8, p->path, h[i].byte_size, h[i].byte_size == 0 ? "empty" : NULL);
      hurray__path(p->path, sizeof p->path, "buffers[%u].alignment", i);
      ev_u(p, at + 8, 4, p->path, h[i].alignment, NULL);
      hurray__path(p->path, sizeof p->path, "buffers[%u].device_tag", i);
      ev_u(p, at + 12, 1, p->path, b[12],
           tag_meaning(hurray_device_name(b[12]), hurray_device_tag_kind(b[12])));
      hurray__path(p->path, sizeof p->path, "buffers[%u].sync_mode", i);
      ev_u(p, at + 13, 1, p->path, b[13],
           tag_meaning(hurray_sync_mode_name(b[13]), hurray_sync_mode_kind(b[13])));
      hurray__path(p->path, sizeof p->path, "buffers[%u].memory_class", i);
      ev_u(p, at + 14, 1, p->path, b[14],
           tag_meaning(hurray_memory_class_name(b[14]), hurray_memory_class_kind(b[14])));
      hurray__path(p->path, sizeof p->path, "buffers[%u].reserved", i);
      ev_u(p, at + 15, 1, p->path, b[15], NULL);
    }
    p->pos += HURRAY_BUFFER_HANDLE_LEN;
  }
  f->buffers = h;
  return HURRAY_OK;
}

/* ---- optional sections ------------------------------------------------------- */

/* Walk only: the quantization payload's fields for the standard schemes. */
static void walk_quant(Parser *p, uint64_t at, uint32_t len) {
  const uint8_t *q = p->b + at;
  if (len < HURRAY_QUANT_HEADER_LEN) {
    ev_bytes(p, at, len, "quantization.payload", "shorter than the 4-byte header");
    return;
  }
  ev_u(p, at, 1, "quantization.scheme", q[0],
       tag_meaning(hurray_quant_scheme_name(q[0]), hurray_quant_scheme_kind(q[0])));
  ev_u(p, at + 1, 1, "quantization.version", q[1], NULL);
  uint16_t fl = hurray__ld16(q + 2);
  ev_u(p, at + 2, 2, "quantization.flags", fl,
       fl == HURRAY_QUANT_FLAG_SYMMETRIC ? "SYMMETRIC" : fl == 0 ? "none" : NULL);
  uint32_t need = 0;
  switch (q[0]) {
#define HURRAY_X_(t, NAME, name, n) \
  case (t):                         \
    need = (n);                     \
    break;
    HURRAY_QUANT_SCHEME_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      break;
  }
  if (need == 0 || len < need) {
    if (len > HURRAY_QUANT_HEADER_LEN)
      ev_bytes(p, at + 4, len - 4u, "quantization.payload", NULL);
    return;
  }
  switch (q[0]) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      ev_f(p, at + 4, 4, "quantization.scale", (double)hurray__f32_from_bits(hurray__ld32(q + 4)));
      ev_i(p, at + 8, 4, "quantization.zero_point", (int32_t)hurray__ld32(q + 8));
      ev_bytes(p, at + 12, 4, "quantization.reserved", NULL);
      break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
    case HURRAY_QUANT_PER_BLOCK_AFFINE: {
      uint64_t o = at + 4;
      ev_u(p, o, 4, "quantization.axis", hurray__ld32(q + 4), NULL);
      o += 4;
      if (q[0] == HURRAY_QUANT_PER_BLOCK_AFFINE) {
        ev_u(p, o, 4, "quantization.block_size", hurray__ld32(p->b + o), NULL);
        o += 4;
      }
      ev_u(p, o, 4, "quantization.scale_buffer_index", hurray__ld32(p->b + o), NULL);
      uint32_t zp = hurray__ld32(p->b + o + 4);
      ev_u(p, o + 4, 4, "quantization.zero_point_buffer_index", zp,
           zp == HURRAY_QUANT_NO_BUFFER ? "none" : NULL);
      ev_u(p, o + 8, 1, "quantization.scale_type", p->b[o + 8], hurray_dtype_name(p->b[o + 8]));
      ev_bytes(p, o + 9, 3, "quantization.reserved", NULL);
      break;
    }
    default: /* NF4, MXFP */
      ev_u(p, at + 4, 4, "quantization.axis", hurray__ld32(q + 4), NULL);
      ev_u(p, at + 8, 4, "quantization.block_size", hurray__ld32(q + 8), NULL);
      ev_u(p, at + 12, 4, "quantization.scale_buffer_index", hurray__ld32(q + 12), NULL);
      break;
  }
  if (len > need) ev_bytes(p, at + need, len - need, "quantization.padding", NULL);
}

static HurrayStatus parse_quantization(Parser *p, HurrayQuantization *q) {
  NEED(p, 4, "quantization.length");
  uint32_t len = hurray__ld32(p->b + p->pos);
  if (WALKING(p)) {
    uint64_t left = p->end - p->pos - 4;
    ev_section(p, p->pos, 4u + (len < left ? len : left), "quantization");
    ev_u(p, p->pos, 4, "quantization.length", len, NULL);
  }
  p->pos += 4;
  uint64_t at = p->pos;
  if (WALKING(p) && p->end - p->pos >= len) walk_quant(p, at, len);
  const uint8_t *raw;
  HURRAY_TRY(read_blob(p, len, "quantization", &raw));
  if (raw == NULL) raw = p->b + at; /* empty payload: never NULL for the scheme parser */
  return hurray__quant_parse(raw, len, p->options, at, q, p->err);
}

static HurrayStatus parse_statistics(Parser *p, HurrayStatistics *s) {
  if (WALKING(p)) {
    uint64_t left = p->end - p->pos;
    ev_section(p, p->pos, left < HURRAY__STATISTICS_LEN ? left : HURRAY__STATISTICS_LEN,
               "statistics");
  }
  NEED(p, HURRAY__STATISTICS_LEN, "statistics");
  const uint8_t *b = p->b + p->pos;
  uint64_t at = p->pos;
  s->computed_mask = hurray__ld32(b);
  s->nnz = hurray__ld64(b + 8);
  s->sparsity_ratio = hurray__f64_from_bits(hurray__ld64(b + 16));
  s->value_min = hurray__f64_from_bits(hurray__ld64(b + 24));
  s->value_max = hurray__f64_from_bits(hurray__ld64(b + 32));
  s->value_abs_max = hurray__f64_from_bits(hurray__ld64(b + 40));
  s->value_mean = hurray__f64_from_bits(hurray__ld64(b + 48));
  s->value_stddev = hurray__f64_from_bits(hurray__ld64(b + 56));
  s->nm_n = b[64];
  s->nm_m = b[65];
  s->has_nan = b[66];
  s->has_inf = b[67];
  if (WALKING(p)) ev_u(p, at, 4, "statistics.computed_mask", s->computed_mask, NULL);
  p->pos += 4;
  HURRAY_TRY(read_reserved(p, 4, "statistics.reserved"));
  if (WALKING(p)) {
    ev_u(p, at + 8, 8, "statistics.nnz", s->nnz, NULL);
    ev_f(p, at + 16, 8, "statistics.sparsity_ratio", s->sparsity_ratio);
    ev_f(p, at + 24, 8, "statistics.value_min", s->value_min);
    ev_f(p, at + 32, 8, "statistics.value_max", s->value_max);
    ev_f(p, at + 40, 8, "statistics.value_abs_max", s->value_abs_max);
    ev_f(p, at + 48, 8, "statistics.value_mean", s->value_mean);
    ev_f(p, at + 56, 8, "statistics.value_stddev", s->value_stddev);
    ev_u(p, at + 64, 1, "statistics.nm_n", s->nm_n, NULL);
    ev_u(p, at + 65, 1, "statistics.nm_m", s->nm_m, NULL);
    ev_u(p, at + 66, 1, "statistics.has_nan", s->has_nan, NULL);
    ev_u(p, at + 67, 1, "statistics.has_inf", s->has_inf, NULL);
  }
  p->pos = at + 68;
  return read_reserved(p, 4, "statistics.reserved2");
}

static HurrayStatus parse_extension_type(Parser *p, HurrayExtensionType *e) {
  if (WALKING(p)) {
    uint64_t left = p->end - p->pos;
    ev_section(p, p->pos, left < HURRAY__EXTENSION_TYPE_LEN ? left : HURRAY__EXTENSION_TYPE_LEN,
               "extension_type");
  }
  NEED(p, HURRAY__EXTENSION_TYPE_LEN, "extension_type");
  const uint8_t *b = p->b + p->pos;
  uint64_t at = p->pos;
  e->bit_width = hurray__ld32(b);
  e->packing_factor = b[4];
  e->is_float = b[5];
  e->is_signed = b[6];
  e->sign_bits = b[7];
  e->exponent_bits = b[8];
  e->mantissa_bits = b[9];
  e->exponent_bias = hurray__ld32(b + 12);
  e->has_nan = b[16];
  e->has_inf = b[17];
  if (WALKING(p)) {
    ev_u(p, at, 4, "extension_type.bit_width", e->bit_width, NULL);
    ev_u(p, at + 4, 1, "extension_type.packing_factor", e->packing_factor, NULL);
    ev_u(p, at + 5, 1, "extension_type.is_float", e->is_float, NULL);
    ev_u(p, at + 6, 1, "extension_type.is_signed", e->is_signed, NULL);
    ev_u(p, at + 7, 1, "extension_type.sign_bits", e->sign_bits, NULL);
    ev_u(p, at + 8, 1, "extension_type.exponent_bits", e->exponent_bits, NULL);
    ev_u(p, at + 9, 1, "extension_type.mantissa_bits", e->mantissa_bits, NULL);
  }
  p->pos = at + 10;
  HURRAY_TRY(read_reserved(p, 2, "extension_type.reserved"));
  if (WALKING(p)) {
    ev_u(p, at + 12, 4, "extension_type.exponent_bias", e->exponent_bias, NULL);
    ev_u(p, at + 16, 1, "extension_type.has_nan", e->has_nan, NULL);
    ev_u(p, at + 17, 1, "extension_type.has_inf", e->has_inf, NULL);
  }
  p->pos = at + 18;
  return read_reserved(p, 2, "extension_type.reserved2");
}

static HurrayStatus parse_member(Parser *p, HurrayCompositeMember *m) {
  if (WALKING(p)) {
    uint64_t left = p->end - p->pos;
    ev_section(p, p->pos,
               left < HURRAY__COMPOSITE_MEMBER_LEN ? left : HURRAY__COMPOSITE_MEMBER_LEN,
               "composite_member");
  }
  NEED(p, HURRAY__COMPOSITE_MEMBER_LEN, "composite_member");
  m->role = p->b[p->pos];
  if (WALKING(p))
    ev_u(p, p->pos, 1, "composite_member.role", m->role, hurray_member_role_name(m->role));
  p->pos++;
  return read_reserved(p, 15, "composite_member.reserved");
}

/* ---- the parser -------------------------------------------------------------- */

/* Arena bytes beyond the wire bytes: per-array alignment padding, and the
 * level structs of a tiled layout. */
static size_t arena_slack(uint8_t layout_tag) {
  size_t s = 16u * 8u;
  if (layout_tag == HURRAY_LAYOUT_TILED)
    s += HURRAY_MAX_TILED_DEPTH * (sizeof(HurrayTiledLevel) + 3u * 8u) + 8u;
  return s;
}

static HurrayStatus parse_body(Parser *p, HurrayDescriptor *d, uint32_t wire_flags,
                               uint8_t minor) {
  HurrayDescriptorFields *f = &d->f;
  const void *a;
  HURRAY_TRY(read_array(p, p->rank, ARR_U64, "shape", -1, &a));
  f->shape = a;
  NEED(p, 8, "byte_offset");
  f->byte_offset = hurray__ld64(p->b + p->pos);
  if (WALKING(p)) ev_u(p, p->pos, 8, "byte_offset", f->byte_offset, NULL);
  p->pos += 8;

  bool opaque;
  HURRAY_TRY(parse_layout(p, &f->layout, &opaque));
  if (opaque) return HURRAY_OK; /* everything was kept in layout.opaque */

  HURRAY_TRY(parse_buffers(p, f));
  if (wire_flags & HURRAY_FLAG_HAS_QUANTIZATION) {
    HURRAY_TRY(parse_quantization(p, &d->quant));
    f->quantization = &d->quant;
  }
  if (wire_flags & HURRAY_FLAG_HAS_SHARD) {
    if (WALKING(p) && p->rank != 0) {
      uint64_t n = 16u * (uint64_t)p->rank, left = p->end - p->pos;
      ev_section(p, p->pos, n < left ? n : left, "shard");
    }
    HURRAY_TRY(read_array(p, p->rank, ARR_U64, "shard.parent_shape", -1, &a));
    d->shard.parent_shape = a;
    HURRAY_TRY(read_array(p, p->rank, ARR_U64, "shard.offset", -1, &a));
    d->shard.offset = a;
    f->shard = &d->shard;
  }
  if (wire_flags & HURRAY_FLAG_HAS_STATISTICS) {
    HURRAY_TRY(parse_statistics(p, &d->stats));
    f->statistics = &d->stats;
  }
  if (wire_flags & HURRAY_FLAG_HAS_EXTENSION_TYPE) {
    HURRAY_TRY(parse_extension_type(p, &d->ext));
    f->extension_type = &d->ext;
  }
  if (wire_flags & HURRAY_FLAG_HAS_COMPOSITE_MEMBER) {
    HURRAY_TRY(parse_member(p, &d->member));
    f->composite_member = &d->member;
  }
  if (p->pos != p->end) {
    uint64_t n = p->end - p->pos;
    if (minor == 0 && !PERMISSIVE(p->options))
      return hurray__fail(p->err, ST_LAYOUT, p->pos, "descriptor_length",
                          "declares %llu bytes but the descriptor ends at byte %llu "
                          "(%llu extra bytes in a version 1.0 descriptor)",
                          (unsigned long long)p->end, (unsigned long long)p->pos,
                          (unsigned long long)n);
    if (WALKING(p)) ev_bytes(p, p->pos, n, "trailing", "content this library does not interpret");
    f->trailing_len = (uint32_t)n;
    HURRAY_TRY(read_blob(p, n, "trailing", &f->trailing));
  }
  return HURRAY_OK;
}

HurrayStatus hurray__descriptor_parse(const uint8_t *bytes, uintptr_t len, uint32_t options,
                                      HurrayFieldVisitor visit, void *ctx,
                                      HurrayDescriptor **out, HurrayError *err) {
  if (out != NULL) *out = NULL;
  if (bytes == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "bytes", "is NULL");
  if ((options & ~HURRAY_DECODE_PERMISSIVE) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options",
                        "unknown option bits 0x%08X",
                        (unsigned)(options & ~HURRAY_DECODE_PERMISSIVE));
  Parser p;
  p.b = bytes;
  p.pos = 0;
  p.end = len;
  p.options = options;
  p.rank = 0;
  p.err = err;
  p.visit = visit;
  p.ctx = ctx;

  if (WALKING(&p) && len >= 4) ev_bytes(&p, 0, 4, "magic", memcmp(bytes, "HRRY", 4) ? NULL : "HRRY");
  if (len < 10)
    return hurray__fail(err, ST_LAYOUT, 0, "descriptor_length",
                        "truncated: %llu bytes, the fixed header needs at least 10 bytes",
                        (unsigned long long)len);
  if (memcmp(bytes, HURRAY_DESCRIPTOR_MAGIC, 4) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_MAGIC, 0, "magic",
                        "expected \"HRRY\" (48 52 52 59), got %02X %02X %02X %02X", bytes[0],
                        bytes[1], bytes[2], bytes[3]);
  uint8_t major = bytes[4], minor = bytes[5];
  uint32_t dlen = hurray__ld32(bytes + 6);
  if (WALKING(&p)) {
    ev_u(&p, 4, 1, "version_major", major, NULL);
    ev_u(&p, 5, 1, "version_minor", minor, NULL);
    ev_u(&p, 6, 4, "descriptor_length", dlen, NULL);
  }
  if (major != HURRAY_DESCRIPTOR_VERSION_MAJOR)
    return hurray__fail(err, HURRAY_ERR_VERSION_MISMATCH, 4, "version_major",
                        "descriptor major version %u is not supported (this library reads 1)",
                        major);
  if (dlen < HURRAY_DESCRIPTOR_HEADER_LEN)
    return hurray__fail(err, ST_LAYOUT, 6, "descriptor_length",
                        "%u is below the 20-byte minimum", dlen);
  if (dlen > len)
    return hurray__fail(err, ST_LAYOUT, 6, "descriptor_length",
                        "declares %u bytes but only %llu are available", dlen,
                        (unsigned long long)len);
  p.end = dlen;
  uint32_t flags = hurray__ld32(bytes + 10);
  uint8_t type_tag = bytes[14], layout_tag = bytes[15];
  uint32_t rank = hurray__ld32(bytes + 16);
  if (WALKING(&p)) {
    ev_u(&p, 10, 4, "flags", flags, flags_meaning(&p, flags));
    ev_u(&p, 14, 1, "type_tag", type_tag,
         tag_meaning(hurray_dtype_name(type_tag), hurray_dtype_tag_kind(type_tag)));
    ev_u(&p, 15, 1, "layout_tag", layout_tag,
         tag_meaning(hurray_layout_name(layout_tag), hurray_layout_tag_kind(layout_tag)));
    ev_u(&p, 16, 4, "rank", rank, NULL);
  }
  HURRAY_TRY(hurray__check_flags_and_type(flags, type_tag, options, err));
  if (rank > HURRAY_MAX_RANK)
    return hurray__fail(err, ST_LAYOUT, 16, "rank", "rank %u exceeds the maximum of %u", rank,
                        HURRAY_MAX_RANK);
  p.rank = rank;
  p.pos = HURRAY_DESCRIPTOR_HEADER_LEN;

  /* One allocation: the wire bytes after the header bound every array. */
  size_t cap = (size_t)(dlen - HURRAY_DESCRIPTOR_HEADER_LEN);
  size_t slack = arena_slack(layout_tag);
  if (cap > SIZE_MAX - slack - sizeof(HurrayDescriptor))
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, 6, "descriptor_length",
                        "%u bytes do not fit in memory", dlen);
  cap += slack;
  HurrayDescriptor *d = hurray__malloc(sizeof(HurrayDescriptor) + cap);
  if (d == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "descriptor",
                        "cannot allocate %llu bytes",
                        (unsigned long long)(sizeof(HurrayDescriptor) + cap));
  /* Field by field rather than one memset: the sections stay unset until
   * present, and this is the hot path of every decode. */
  d->magic = HURRAY__MAGIC_DESCRIPTOR;
  hurray__handle_born(d);
  d->encoded_len = 0;
  p.arena.base = (uint8_t *)d->arena;
  p.arena.used = 0;
  p.arena.cap = cap;
  HurrayDescriptorFields *f = &d->f;
  f->version_major = major;
  f->version_minor = minor;
  f->flags = flags;
  f->type_tag = type_tag;
  f->rank = rank;
  f->shape = NULL;
  f->byte_offset = 0;
  memset(&f->layout, 0, sizeof f->layout);
  f->layout.tag = layout_tag;
  f->buffer_count = 0;
  f->buffers = NULL;
  f->quantization = NULL;
  f->shard = NULL;
  f->statistics = NULL;
  f->extension_type = NULL;
  f->composite_member = NULL;
  f->trailing = NULL;
  f->trailing_len = 0;

  HurrayStatus st = parse_body(&p, d, flags, minor);
  if (st == HURRAY_OK) {
    HurrayOffsets o;
    st = hurray__descriptor_check(f, options | HURRAY__HEADER_CHECKED, &o, err);
    if (st == HURRAY_OK && o.end != dlen)
      st = hurray__fail(err, HURRAY_ERR_INTERNAL, HURRAY_NO_OFFSET, "descriptor_length",
                        "internal error: re-encoding would give %llu bytes, not %u",
                        (unsigned long long)o.end, dlen);
    d->encoded_len = o.end;
  }
  if (st != HURRAY_OK) {
    d->magic = HURRAY__MAGIC_DEAD; /* never handed out */
    hurray__free(d);
    return st;
  }
  if (out != NULL) {
    *out = d;
  } else {
    d->magic = HURRAY__MAGIC_DEAD; /* never handed out */
    hurray__free(d);
  }
  return HURRAY_OK;
}

/* ---- public API ------------------------------------------------------------ */

HurrayStatus hurray_descriptor_decode(const uint8_t *bytes, uintptr_t len,
                                      HurrayDescriptor **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  return hurray__descriptor_parse(bytes, len, HURRAY_DECODE_STRICT, NULL, NULL, out, NULL);
}

HurrayStatus hurray_descriptor_decode_ex(const uint8_t *bytes, uintptr_t len, uint32_t options,
                                         HurrayDescriptor **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  return hurray__descriptor_parse(bytes, len, options, NULL, NULL, out, err);
}

HurrayStatus hurray_descriptor_walk(const uint8_t *bytes, uintptr_t len, uint32_t options,
                                    HurrayFieldVisitor visitor, void *ctx, HurrayError *err) {
  if (visitor == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "visitor", "is NULL");
  return hurray__descriptor_parse(bytes, len, options, visitor, ctx, NULL, err);
}

HurrayStatus hurray_descriptor_peek_length(const uint8_t *bytes, uintptr_t len,
                                           uint32_t *out_length, HurrayError *err) {
  if (bytes == NULL || out_length == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        bytes == NULL ? "bytes" : "out_length", "is NULL");
  if (len < 10)
    return hurray__fail(err, ST_LAYOUT, 0, "descriptor_length",
                        "truncated: %llu bytes, the fixed header needs at least 10 bytes",
                        (unsigned long long)len);
  if (memcmp(bytes, HURRAY_DESCRIPTOR_MAGIC, 4) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_MAGIC, 0, "magic",
                        "expected \"HRRY\" (48 52 52 59), got %02X %02X %02X %02X", bytes[0],
                        bytes[1], bytes[2], bytes[3]);
  if (bytes[4] != HURRAY_DESCRIPTOR_VERSION_MAJOR)
    return hurray__fail(err, HURRAY_ERR_VERSION_MISMATCH, 4, "version_major",
                        "descriptor major version %u is not supported (this library reads 1)",
                        bytes[4]);
  uint32_t dlen = hurray__ld32(bytes + 6);
  if (dlen < HURRAY_DESCRIPTOR_HEADER_LEN)
    return hurray__fail(err, ST_LAYOUT, 6, "descriptor_length",
                        "%u is below the 20-byte minimum", dlen);
  *out_length = dlen;
  return HURRAY_OK;
}
