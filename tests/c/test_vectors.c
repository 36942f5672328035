/*
 * The project's own conformance corpus (tests/vectors/, made by
 * tests/vectors/generate.py from the spec text) against the descriptor codec.
 *
 * Valid vectors: strict decode succeeds, every decoded field matches the
 * manifest, re-encoding gives the same bytes, a permissive decode gives the
 * same bytes too, and rebuilding from the decoded fields encodes the same.
 * Invalid vectors: strict decode fails with exactly the manifest's status and,
 * when the manifest names one, at the manifest's byte offset; vectors marked
 * "permissive": "roundtrip" decode permissively and re-encode byte for byte,
 * those marked "reject" fail permissively with the same status. Every prefix
 * of every valid vector is rejected without reading past it.
 *
 * Each test walks the whole corpus and reports every mismatching vector
 * before failing, so one run gives the full triage list.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vjson.h"

typedef struct Corpus {
  char dir[1024];
  VjValue *manifest;
} Corpus;

typedef struct Run {
  const char *name; /* vector being checked */
  int bad;          /* mismatches in this vector */
} Run;

#if defined(__MINGW32__)
#define HURRAY_TEST_PRINTF_(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#define HURRAY_TEST_PRINTF_(f, a) __attribute__((format(printf, f, a)))
#else
#define HURRAY_TEST_PRINTF_(f, a)
#endif

static void mismatch(Run *r, const char *fmt, ...) HURRAY_TEST_PRINTF_(2, 3);

static void mismatch(Run *r, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "  [%s] ", r->name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  r->bad++;
}

/* ---- manifest access (a malformed manifest is a test bug: fail at once) ---- */

static const VjValue *req(const VjValue *obj, const char *key) {
  const VjValue *v = vj_get(obj, key);
  if (!v) fail_msg("manifest: missing key '%s'", key);
  return v;
}

static uint64_t ju(const VjValue *v) {
  uint64_t x = 0;
  if (!vj_u64(v, &x)) fail_msg("manifest: expected an unsigned integer");
  return x;
}

static int64_t ji(const VjValue *v) {
  int64_t x = 0;
  if (!vj_i64(v, &x)) fail_msg("manifest: expected a signed integer");
  return x;
}

static uint64_t ku(const VjValue *obj, const char *key) { return ju(req(obj, key)); }

static const char *ks(const VjValue *obj, const char *key) {
  const char *s = vj_str(req(obj, key));
  if (!s) fail_msg("manifest: '%s' is not a string", key);
  return s;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Decodes a lowercase hex string; returns a malloc'ed buffer (free()). */
static uint8_t *unhex(const char *s, size_t *n) {
  size_t len = strlen(s);
  if (len % 2) fail_msg("manifest: odd hex length");
  uint8_t *out = malloc(len / 2 + 1);
  assert_non_null(out);
  for (size_t i = 0; i < len / 2; i++) {
    int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
    if (hi < 0 || lo < 0) fail_msg("manifest: bad hex");
    out[i] = (uint8_t)(hi * 16 + lo);
  }
  *n = len / 2;
  return out;
}

static HurrayStatus status_from_name(const char *name) {
  for (int s = 0; s >= HURRAY_STATUS_MIN_; s--)
    if (strcmp(hurray_status_name(s), name) == 0) return s;
  fail_msg("manifest: unknown status name %s", name);
  return HURRAY_OK;
}

static bool load_corpus(Corpus *c) {
  const char *dir = tu_env_dir("HURRAY_VECTORS_DIR");
  if (!dir) return false;
  snprintf(c->dir, sizeof c->dir, "%s", dir);
  char path[1200];
  snprintf(path, sizeof path, "%s/manifest.json", c->dir);
  size_t len = 0;
  uint8_t *text = tu_read_file(path, &len);
  if (!text) fail_msg("cannot read %s", path);
  char err[160];
  c->manifest = vj_parse((const char *)text, len, err, sizeof err);
  free(text);
  if (!c->manifest) fail_msg("%s: %s", path, err);
  return true;
}

static uint8_t *read_vector(const Corpus *c, const VjValue *entry, size_t *len) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", c->dir, ks(entry, "file"));
  uint8_t *data = tu_read_file(path, len);
  if (!data) fail_msg("cannot read %s", path);
  return data;
}

#define EXPECT_EQ(run, what, exp, got)                                                       \
  do {                                                                                      \
    unsigned long long e_ = (unsigned long long)(exp), g_ = (unsigned long long)(got);      \
    if (e_ != g_) mismatch(run, "%s: expected %llu, got %llu", what, e_, g_);               \
  } while (0)

static uint64_t dbits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

static uint32_t fbits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static void cmp_u64s(Run *r, const char *what, const VjValue *exp, const uint64_t *got,
                     size_t n) {
  if (vj_len(exp) != n) {
    mismatch(r, "%s: expected %zu entries, got %zu", what, vj_len(exp), n);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t e = ju(vj_at(exp, i));
    if (!got || got[i] != e)
      mismatch(r, "%s[%zu]: expected %llu, got %llu", what, i, (unsigned long long)e,
               got ? (unsigned long long)got[i] : 0ull);
  }
}

static void cmp_u32s(Run *r, const char *what, const VjValue *exp, const uint32_t *got,
                     size_t n) {
  if (vj_len(exp) != n) {
    mismatch(r, "%s: expected %zu entries, got %zu", what, vj_len(exp), n);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t e = ju(vj_at(exp, i));
    if (!got || got[i] != e)
      mismatch(r, "%s[%zu]: expected %llu, got %lu", what, i, (unsigned long long)e,
               got ? (unsigned long)got[i] : 0ul);
  }
}

static void cmp_i64s(Run *r, const char *what, const VjValue *exp, const int64_t *got,
                     size_t n) {
  if (vj_is_null(exp)) {
    if (got) mismatch(r, "%s: expected none, got an array", what);
    return;
  }
  if (vj_len(exp) != n) {
    mismatch(r, "%s: expected %zu entries, got %zu", what, vj_len(exp), n);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t e = ji(vj_at(exp, i));
    if (!got || got[i] != e)
      mismatch(r, "%s[%zu]: expected %lld, got %lld", what, i, (long long)e,
               got ? (long long)got[i] : 0ll);
  }
}

static void cmp_hex(Run *r, const char *what, const char *hex, const uint8_t *got,
                    size_t got_len) {
  size_t n = 0;
  uint8_t *exp = unhex(hex, &n);
  if (n != got_len || (n && (!got || memcmp(exp, got, n) != 0)))
    mismatch(r, "%s: expected %zu bytes %s, got %zu bytes", what, n, hex, got_len);
  free(exp);
}

/* ---- field comparison of one valid vector ----------------------------------- */

static void cmp_layout(Run *r, const VjValue *e, const HurrayDescriptorFields *f) {
  const HurrayLayout *l = &f->layout;
  EXPECT_EQ(r, "layout.tag", ku(e, "tag"), l->tag);
  if (l->tag != ku(e, "tag")) return;
  size_t rank = f->rank;
  switch (l->tag) {
    case HURRAY_LAYOUT_STRIDED:
      cmp_i64s(r, "layout.strides", req(e, "strides"), l->u.strided.strides, rank);
      break;
    case HURRAY_LAYOUT_TILED: {
      const VjValue *lv = req(e, "levels");
      EXPECT_EQ(r, "layout.tiled.depth", vj_len(lv), l->u.tiled.depth);
      if (vj_len(lv) != l->u.tiled.depth || !l->u.tiled.levels) break;
      for (size_t i = 0; i < vj_len(lv); i++) {
        const VjValue *x = vj_at(lv, i);
        const HurrayTiledLevel *t = &l->u.tiled.levels[i];
        cmp_u64s(r, "layout.tiled.tile_shape", req(x, "tile_shape"), t->tile_shape, rank);
        EXPECT_EQ(r, "layout.tiled.outer_layout", ku(x, "outer_layout"), t->outer_layout);
        EXPECT_EQ(r, "layout.tiled.inner_layout", ku(x, "inner_layout"), t->inner_layout);
        cmp_i64s(r, "layout.tiled.outer_strides", req(x, "outer_strides"), t->outer_strides,
                 rank);
        cmp_i64s(r, "layout.tiled.inner_strides", req(x, "inner_strides"), t->inner_strides,
                 rank);
      }
      break;
    }
    case HURRAY_LAYOUT_MORTON:
      cmp_u32s(r, "layout.morton_bits", req(e, "bits"), l->u.morton.bits, rank);
      break;
    case HURRAY_LAYOUT_COO:
      EXPECT_EQ(r, "layout.coo.nnz", ku(e, "nnz"), l->u.coo.nnz);
      EXPECT_EQ(r, "layout.coo.is_sorted", ku(e, "is_sorted"), l->u.coo.is_sorted);
      break;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      EXPECT_EQ(r, "layout.nnz", ku(e, "nnz"), l->u.csr.nnz);
      break;
    case HURRAY_LAYOUT_CSF:
      EXPECT_EQ(r, "layout.csf.nnz", ku(e, "nnz"), l->u.csf.nnz);
      cmp_u32s(r, "layout.csf.mode_order", req(e, "mode_order"), l->u.csf.mode_order, rank);
      break;
    case HURRAY_LAYOUT_BLOCK_PAGED:
      EXPECT_EQ(r, "page_size", ku(e, "page_size"), l->u.block_paged.page_size);
      EXPECT_EQ(r, "num_pages", ku(e, "num_pages"), l->u.block_paged.num_pages);
      EXPECT_EQ(r, "paged_axis", ku(e, "paged_axis"), l->u.block_paged.paged_axis);
      EXPECT_EQ(r, "num_seqs", ku(e, "num_seqs"), l->u.block_paged.num_seqs);
      EXPECT_EQ(r, "kv_role", ku(e, "kv_role"), l->u.block_paged.kv_role);
      EXPECT_EQ(r, "layer_index", ku(e, "layer_index"), l->u.block_paged.layer_index);
      EXPECT_EQ(r, "block_table_index_type", ku(e, "block_table_index_type"),
                l->u.block_paged.block_table_index_type);
      break;
    case HURRAY_LAYOUT_COMPOSITE:
      EXPECT_EQ(r, "composition_rule", ku(e, "rule"), l->u.composite.rule);
      EXPECT_EQ(r, "combine_op", ku(e, "combine_op"), l->u.composite.combine_op);
      EXPECT_EQ(r, "member_count", ku(e, "member_count"), l->u.composite.member_count);
      break;
    case HURRAY_LAYOUT_HILBERT:
      EXPECT_EQ(r, "hilbert_order", ku(e, "order"), l->u.hilbert.order);
      EXPECT_EQ(r, "hilbert_rank", ku(e, "rank"), l->u.hilbert.rank);
      break;
    default:
      if (l->tag >= HURRAY_LAYOUT_PRIVATE_FIRST && l->tag <= HURRAY_LAYOUT_PRIVATE_LAST) {
        EXPECT_EQ(r, "extension_layout_id", ku(e, "layout_id"), l->u.private_ext.layout_id);
        cmp_hex(r, "extension_data", ks(e, "data_hex"), l->u.private_ext.data,
                l->u.private_ext.data_len);
      }
      break;
  }
}

static void cmp_quant(Run *r, const VjValue *e, const HurrayQuantization *q) {
  if (vj_is_null(e)) {
    if (q) mismatch(r, "quantization: expected none, got scheme 0x%02X", q->scheme);
    return;
  }
  if (!q) {
    mismatch(r, "quantization: expected a section, got none");
    return;
  }
  uint64_t scheme = ku(e, "scheme");
  EXPECT_EQ(r, "quant.scheme", scheme, q->scheme);
  EXPECT_EQ(r, "quant.version", ku(e, "version"), q->version);
  EXPECT_EQ(r, "quant.flags", ku(e, "flags"), q->flags);
  EXPECT_EQ(r, "quant.raw_len", ku(e, "length"), q->raw_len);
  cmp_hex(r, "quant.raw", ks(e, "raw_hex"), q->raw, q->raw_len);
  if (scheme != q->scheme) return;
  switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      EXPECT_EQ(r, "quant.scale bits", ku(e, "scale_bits"), fbits(q->u.per_tensor.scale));
      if (ji(req(e, "zero_point")) != q->u.per_tensor.zero_point)
        mismatch(r, "quant.zero_point: expected %lld, got %ld",
                 (long long)ji(req(e, "zero_point")), (long)q->u.per_tensor.zero_point);
      break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      EXPECT_EQ(r, "quant.axis", ku(e, "axis"), q->u.per_channel.axis);
      EXPECT_EQ(r, "quant.scale_buffer_index", ku(e, "scale_buffer_index"),
                q->u.per_channel.scale_buffer_index);
      EXPECT_EQ(r, "quant.zero_point_buffer_index", ku(e, "zero_point_buffer_index"),
                q->u.per_channel.zero_point_buffer_index);
      EXPECT_EQ(r, "quant.scale_type", ku(e, "scale_type"), q->u.per_channel.scale_type);
      break;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      EXPECT_EQ(r, "quant.axis", ku(e, "axis"), q->u.per_block.axis);
      EXPECT_EQ(r, "quant.block_size", ku(e, "block_size"), q->u.per_block.block_size);
      EXPECT_EQ(r, "quant.scale_buffer_index", ku(e, "scale_buffer_index"),
                q->u.per_block.scale_buffer_index);
      EXPECT_EQ(r, "quant.zero_point_buffer_index", ku(e, "zero_point_buffer_index"),
                q->u.per_block.zero_point_buffer_index);
      EXPECT_EQ(r, "quant.scale_type", ku(e, "scale_type"), q->u.per_block.scale_type);
      break;
    case HURRAY_QUANT_NF4:
      EXPECT_EQ(r, "quant.axis", ku(e, "axis"), q->u.nf4.axis);
      EXPECT_EQ(r, "quant.block_size", ku(e, "block_size"), q->u.nf4.block_size);
      EXPECT_EQ(r, "quant.scale_buffer_index", ku(e, "scale_buffer_index"),
                q->u.nf4.scale_buffer_index);
      break;
    case HURRAY_QUANT_MXFP:
      EXPECT_EQ(r, "quant.axis", ku(e, "axis"), q->u.mxfp.axis);
      EXPECT_EQ(r, "quant.block_size", ku(e, "block_size"), q->u.mxfp.block_size);
      EXPECT_EQ(r, "quant.scale_buffer_index", ku(e, "scale_buffer_index"),
                q->u.mxfp.scale_buffer_index);
      break;
    default:
      break; /* private: raw bytes only */
  }
}

static void cmp_sections(Run *r, const VjValue *e, const HurrayDescriptorFields *f) {
  const VjValue *sh = req(e, "shard");
  if (vj_is_null(sh) != (f->shard == NULL)) {
    mismatch(r, "shard: expected %s", vj_is_null(sh) ? "none" : "a section");
  } else if (f->shard) {
    cmp_u64s(r, "shard.parent_shape", req(sh, "parent_shape"), f->shard->parent_shape,
             f->rank);
    cmp_u64s(r, "shard.offset", req(sh, "offset"), f->shard->offset, f->rank);
  }
  const VjValue *st = req(e, "statistics");
  if (vj_is_null(st) != (f->statistics == NULL)) {
    mismatch(r, "statistics: expected %s", vj_is_null(st) ? "none" : "a section");
  } else if (f->statistics) {
    const HurrayStatistics *s = f->statistics;
    EXPECT_EQ(r, "stats.computed_mask", ku(st, "computed_mask"), s->computed_mask);
    EXPECT_EQ(r, "stats.nnz", ku(st, "nnz"), s->nnz);
    EXPECT_EQ(r, "stats.sparsity_ratio bits", ku(st, "sparsity_ratio_bits"),
              dbits(s->sparsity_ratio));
    EXPECT_EQ(r, "stats.value_min bits", ku(st, "value_min_bits"), dbits(s->value_min));
    EXPECT_EQ(r, "stats.value_max bits", ku(st, "value_max_bits"), dbits(s->value_max));
    EXPECT_EQ(r, "stats.value_abs_max bits", ku(st, "value_abs_max_bits"),
              dbits(s->value_abs_max));
    EXPECT_EQ(r, "stats.value_mean bits", ku(st, "value_mean_bits"), dbits(s->value_mean));
    EXPECT_EQ(r, "stats.value_stddev bits", ku(st, "value_stddev_bits"),
              dbits(s->value_stddev));
    EXPECT_EQ(r, "stats.nm_n", ku(st, "nm_n"), s->nm_n);
    EXPECT_EQ(r, "stats.nm_m", ku(st, "nm_m"), s->nm_m);
    EXPECT_EQ(r, "stats.has_nan", ku(st, "has_nan"), s->has_nan);
    EXPECT_EQ(r, "stats.has_inf", ku(st, "has_inf"), s->has_inf);
  }
  const VjValue *x = req(e, "extension_type");
  if (vj_is_null(x) != (f->extension_type == NULL)) {
    mismatch(r, "extension_type: expected %s", vj_is_null(x) ? "none" : "a section");
  } else if (f->extension_type) {
    const HurrayExtensionType *t = f->extension_type;
    EXPECT_EQ(r, "ext.bit_width", ku(x, "bit_width"), t->bit_width);
    EXPECT_EQ(r, "ext.packing_factor", ku(x, "packing_factor"), t->packing_factor);
    EXPECT_EQ(r, "ext.is_float", ku(x, "is_float"), t->is_float);
    EXPECT_EQ(r, "ext.is_signed", ku(x, "is_signed"), t->is_signed);
    EXPECT_EQ(r, "ext.sign_bits", ku(x, "sign_bits"), t->sign_bits);
    EXPECT_EQ(r, "ext.exponent_bits", ku(x, "exponent_bits"), t->exponent_bits);
    EXPECT_EQ(r, "ext.mantissa_bits", ku(x, "mantissa_bits"), t->mantissa_bits);
    EXPECT_EQ(r, "ext.exponent_bias", ku(x, "exponent_bias"), t->exponent_bias);
    EXPECT_EQ(r, "ext.has_nan", ku(x, "has_nan"), t->has_nan);
    EXPECT_EQ(r, "ext.has_inf", ku(x, "has_inf"), t->has_inf);
  }
  const VjValue *m = req(e, "composite_member");
  if (vj_is_null(m) != (f->composite_member == NULL)) {
    mismatch(r, "composite_member: expected %s", vj_is_null(m) ? "none" : "a section");
  } else if (f->composite_member) {
    EXPECT_EQ(r, "member.role", ku(m, "role"), f->composite_member->role);
  }
  cmp_hex(r, "trailing", ks(e, "trailing_hex"), f->trailing, f->trailing_len);
}

static void cmp_fields(Run *r, const VjValue *e, const HurrayDescriptor *d) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  if (hurray_descriptor_fields(d, &f) != HURRAY_OK) {
    mismatch(r, "hurray_descriptor_fields failed");
    return;
  }
  uint8_t maj = 0, min = 0;
  uint32_t flags = 0, count = 0, rank = 0;
  uint8_t type_tag = 0, layout_tag = 0;
  uint64_t off = 0, len = 0;
  assert_int_equal(hurray_descriptor_version(d, &maj, &min), HURRAY_OK);
  assert_int_equal(hurray_descriptor_flags(d, &flags), HURRAY_OK);
  assert_int_equal(hurray_descriptor_encoded_len(d, &len), HURRAY_OK);
  assert_int_equal(hurray_descriptor_element_type_tag(d, &type_tag), HURRAY_OK);
  assert_int_equal(hurray_descriptor_layout_tag(d, &layout_tag), HURRAY_OK);
  assert_int_equal(hurray_descriptor_rank(d, &rank), HURRAY_OK);
  assert_int_equal(hurray_descriptor_byte_offset(d, &off), HURRAY_OK);
  assert_int_equal(hurray_descriptor_buffer_count(d, &count), HURRAY_OK);
  EXPECT_EQ(r, "descriptor_length", ku(e, "descriptor_length"), len);
  EXPECT_EQ(r, "version_major", ku(e, "version_major"), maj);
  EXPECT_EQ(r, "version_minor", ku(e, "version_minor"), min);
  EXPECT_EQ(r, "fields.version_major", maj, f.version_major);
  EXPECT_EQ(r, "fields.version_minor", min, f.version_minor);
  EXPECT_EQ(r, "flags", ku(e, "flags"), flags);
  EXPECT_EQ(r, "type_tag", ku(e, "type_tag"), type_tag);
  EXPECT_EQ(r, "fields.type_tag", type_tag, f.type_tag);
  EXPECT_EQ(r, "layout_tag", ku(req(e, "layout"), "tag"), layout_tag);
  EXPECT_EQ(r, "rank", ku(e, "rank"), rank);
  EXPECT_EQ(r, "fields.rank", rank, f.rank);
  EXPECT_EQ(r, "byte_offset", ku(e, "byte_offset"), off);
  EXPECT_EQ(r, "fields.byte_offset", off, f.byte_offset);
  cmp_u64s(r, "shape", req(e, "shape"), f.shape, f.rank);
  if (f.rank > 0 && f.rank <= HURRAY_MAX_RANK) {
    uint64_t dims[HURRAY_MAX_RANK];
    uintptr_t cap = HURRAY_MAX_RANK;
    if (hurray_descriptor_shape(d, dims, &cap) != HURRAY_OK || cap != f.rank)
      mismatch(r, "hurray_descriptor_shape disagrees with the fields");
    else
      cmp_u64s(r, "getter shape", req(e, "shape"), dims, f.rank);
  }
  const VjValue *bufs = req(e, "buffers");
  EXPECT_EQ(r, "buffer_count", vj_len(bufs), count);
  EXPECT_EQ(r, "fields.buffer_count", count, f.buffer_count);
  for (size_t i = 0; i < vj_len(bufs) && i < f.buffer_count && f.buffers; i++) {
    const VjValue *b = vj_at(bufs, i);
    const HurrayBufferHandle *h = &f.buffers[i];
    char what[64];
    snprintf(what, sizeof what, "buffers[%zu].byte_size", i);
    EXPECT_EQ(r, what, ku(b, "byte_size"), h->byte_size);
    snprintf(what, sizeof what, "buffers[%zu].alignment", i);
    EXPECT_EQ(r, what, ku(b, "alignment"), h->alignment);
    snprintf(what, sizeof what, "buffers[%zu].device_tag", i);
    EXPECT_EQ(r, what, ku(b, "device"), h->device_tag);
    snprintf(what, sizeof what, "buffers[%zu].sync_mode", i);
    EXPECT_EQ(r, what, ku(b, "sync"), h->sync_mode);
    snprintf(what, sizeof what, "buffers[%zu].memory_class", i);
    EXPECT_EQ(r, what, ku(b, "memory_class"), h->memory_class);
    snprintf(what, sizeof what, "buffers[%zu].reserved", i);
    EXPECT_EQ(r, what, 0, h->reserved);
    const HurrayBufferHandle *g = NULL;
    if (hurray_descriptor_buffer(d, (uint32_t)i, &g) != HURRAY_OK || g == NULL ||
        g->byte_size != h->byte_size)
      mismatch(r, "hurray_descriptor_buffer(%zu) disagrees with the fields", i);
  }
  const HurrayBufferHandle *none = NULL;
  if (hurray_descriptor_buffer(d, count, &none) != HURRAY_ERR_INDEX_OUT_OF_BOUNDS)
    mismatch(r, "hurray_descriptor_buffer(buffer_count) is not out of bounds");
  cmp_layout(r, req(e, "layout"), &f);
  cmp_quant(r, req(e, "quantization"), f.quantization);
  cmp_sections(r, e, &f);
}

/* Encodes d and compares with want[0..n). */
static void check_encode(Run *r, const char *what, const HurrayDescriptor *d,
                         const uint8_t *want, size_t n) {
  uint64_t len = 0;
  if (hurray_descriptor_encoded_len(d, &len) != HURRAY_OK) {
    mismatch(r, "%s: encoded_len failed", what);
    return;
  }
  if (len != n) {
    mismatch(r, "%s: encoded length %llu, expected %zu", what, (unsigned long long)len, n);
    return;
  }
  uint8_t *out = malloc(n ? n : 1);
  assert_non_null(out);
  uint64_t got = 0;
  if (n > 0) {
    uint64_t short_len = 0;
    if (hurray_descriptor_encode(d, out, n - 1, &short_len) != HURRAY_ERR_BUFFER_TOO_SMALL ||
        short_len != n)
      mismatch(r, "%s: encode into %zu bytes did not report BUFFER_TOO_SMALL and %zu", what,
               n - 1, n);
  }
  HurrayStatus st = hurray_descriptor_encode(d, out, n, &got);
  if (st != HURRAY_OK || got != n) {
    mismatch(r, "%s: encode returned %s, %llu bytes", what, hurray_status_name(st),
             (unsigned long long)got);
  } else if (memcmp(out, want, n) != 0) {
    size_t i = 0;
    while (i < n && out[i] == want[i]) i++;
    mismatch(r, "%s: re-encoded bytes differ from byte %zu (got %02X, expected %02X)", what, i,
             out[i], want[i]);
  }
  free(out);
}

static const char *describe(const HurrayError *err) {
  static char buf[480];
  snprintf(buf, sizeof buf, "%s at offset %lld (%s): %s", hurray_status_name(err->status),
           err->offset == HURRAY_NO_OFFSET ? -1ll : (long long)err->offset, err->field,
           err->message);
  return buf;
}

static int report(const char *what, size_t failing, size_t total) {
  if (failing) fprintf(stderr, "%s: %zu of %zu vectors fail\n", what, failing, total);
  else fprintf(stderr, "%s: all %zu vectors pass\n", what, total);
  return failing ? 1 : 0;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_vjson(void **state) {
  (void)state;
  const char *doc = "{\"a\": [18446744073709551615, -9223372036854775808, 0, -0, 1.5e3],"
                    " \"s\": \"x\\u00e9\\n\\\"\", \"t\": true, \"n\": null, \"o\": {}}";
  char err[128];
  VjValue *v = vj_parse(doc, strlen(doc), err, sizeof err);
  assert_non_null(v);
  const VjValue *a = vj_get(v, "a");
  assert_int_equal(vj_len(a), 5);
  uint64_t u = 0;
  int64_t i = 0;
  assert_true(vj_u64(vj_at(a, 0), &u));
  assert_true(u == UINT64_MAX);
  assert_false(vj_i64(vj_at(a, 0), &i));
  assert_true(vj_i64(vj_at(a, 1), &i));
  assert_true(i == INT64_MIN);
  assert_false(vj_u64(vj_at(a, 1), &u));
  assert_true(vj_u64(vj_at(a, 3), &u) && u == 0);
  assert_int_equal(vj_at(a, 4)->kind, VJ_NUMBER);
  assert_false(vj_u64(vj_at(a, 4), &u));
  assert_null(vj_at(a, 5));
  assert_string_equal(vj_str(vj_get(v, "s")), "x\xc3\xa9\n\"");
  assert_true(vj_get(v, "t")->b);
  assert_true(vj_is_null(vj_get(v, "n")));
  assert_true(vj_is_null(vj_get(v, "missing")));
  assert_int_equal(vj_len(vj_get(v, "o")), 0);
  vj_free(v);
  static const char *bad[] = {"", "{", "[1,]", "{\"a\" 1}", "\"abc", "[1] 2", "01x", "-",
                              "{\"a\":tru}", "\"\\u12\"", "\"\\ud800\"", "[1.]", "1e"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    VjValue *b = vj_parse(bad[k], strlen(bad[k]), err, sizeof err);
    if (b) fail_msg("vjson accepted %s", bad[k]);
    assert_true(err[0] != '\0');
  }
  char deep[200];
  memset(deep, '[', sizeof deep);
  assert_null(vj_parse(deep, sizeof deep, NULL, 0));
  vj_free(NULL);
}

static void test_manifest(void **state) {
  (void)state;
  Corpus c;
  if (!load_corpus(&c)) skip();
  const VjValue *valid = req(c.manifest, "valid");
  const VjValue *invalid = req(c.manifest, "invalid");
  assert_string_equal(ks(c.manifest, "format_version"), "1.0");
  assert_true(vj_len(valid) >= 100);
  assert_true(vj_len(invalid) >= 100);
  for (size_t i = 0; i < vj_len(invalid); i++) {
    const VjValue *e = vj_at(invalid, i);
    assert_true(status_from_name(ks(e, "status")) < 0);
    size_t n = 0;
    uint8_t *data = read_vector(&c, e, &n);
    const VjValue *off = req(e, "offset");
    if (!vj_is_null(off) && ju(off) >= n)
      fail_msg("%s: offset %llu beyond the %zu-byte vector", ks(e, "name"),
               (unsigned long long)ju(off), n);
    free(data);
  }
  vj_free(c.manifest);
}

static void test_valid_vectors(void **state) {
  (void)state;
  Corpus c;
  if (!load_corpus(&c)) skip();
  const VjValue *valid = req(c.manifest, "valid");
  size_t failing = 0;
  for (size_t i = 0; i < vj_len(valid); i++) {
    const VjValue *e = vj_at(valid, i);
    const VjValue *exp = req(e, "expect");
    Run r = {ks(e, "name"), 0};
    size_t n = 0;
    uint8_t *data = read_vector(&c, e, &n);
    size_t dlen = (size_t)ku(exp, "descriptor_length");
    HurrayDescriptor *d = (HurrayDescriptor *)(void *)&r; /* reset to NULL on failure */
    HurrayError err;
    HurrayStatus st = hurray_descriptor_decode_ex(data, n, HURRAY_DECODE_STRICT, &d, &err);
    if (st != HURRAY_OK) {
      mismatch(&r, "strict decode failed: %s", describe(&err));
      if (d != NULL) mismatch(&r, "*out not NULL after a failure");
    } else {
      cmp_fields(&r, exp, d);
      check_encode(&r, "strict re-encode", d, data, dlen);
      HurrayDescriptorFields f;
      if (hurray_descriptor_fields(d, &f) == HURRAY_OK) {
        HurrayDescriptor *d2 = NULL;
        HurrayError e2;
        st = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d2, &e2);
        if (st != HURRAY_OK) {
          mismatch(&r, "from_fields of the decoded fields failed: %s", describe(&e2));
        } else {
          check_encode(&r, "from_fields encode", d2, data, dlen);
          if (!hurray_descriptor_equal(d, d2)) mismatch(&r, "from_fields copy is not equal");
        }
        assert_int_equal(hurray_descriptor_destroy(d2), HURRAY_OK);
      }
      HurrayDescriptor *d3 = NULL;
      if (hurray_descriptor_clone(d, &d3) != HURRAY_OK || !hurray_descriptor_equal(d, d3))
        mismatch(&r, "clone is not equal");
      assert_int_equal(hurray_descriptor_destroy(d3), HURRAY_OK);
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    }
    HurrayDescriptor *p = NULL;
    st = hurray_descriptor_decode_ex(data, n, HURRAY_DECODE_PERMISSIVE, &p, &err);
    if (st != HURRAY_OK) {
      mismatch(&r, "permissive decode failed: %s", describe(&err));
    } else {
      check_encode(&r, "permissive re-encode", p, data, dlen);
      assert_int_equal(hurray_descriptor_destroy(p), HURRAY_OK);
    }
    HurrayDescriptor *q = NULL;
    st = hurray_descriptor_decode(data, n, &q);
    if (st != HURRAY_OK) mismatch(&r, "hurray_descriptor_decode returned %s",
                                  hurray_status_name(st));
    assert_int_equal(hurray_descriptor_destroy(q), HURRAY_OK);
    if (r.bad) failing++;
    free(data);
  }
  int bad = report("valid vectors", failing, vj_len(valid));
  vj_free(c.manifest);
  if (bad) fail_msg("%zu valid vectors fail (details above)", failing);
}

static void test_invalid_vectors(void **state) {
  (void)state;
  Corpus c;
  if (!load_corpus(&c)) skip();
  const VjValue *invalid = req(c.manifest, "invalid");
  size_t failing = 0;
  for (size_t i = 0; i < vj_len(invalid); i++) {
    const VjValue *e = vj_at(invalid, i);
    Run r = {ks(e, "name"), 0};
    size_t n = 0;
    uint8_t *data = read_vector(&c, e, &n);
    HurrayStatus want = status_from_name(ks(e, "status"));
    HurrayDescriptor *d = (HurrayDescriptor *)(void *)&r; /* reset to NULL on failure */
    HurrayError err;
    HurrayStatus st = hurray_descriptor_decode_ex(data, n, HURRAY_DECODE_STRICT, &d, &err);
    if (st == HURRAY_OK) {
      mismatch(&r, "strict decode accepted it (expected %s)", hurray_status_name(want));
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    } else {
      if (d != NULL) mismatch(&r, "*out not NULL after a failure");
      if (st != want) mismatch(&r, "expected %s, got %s", hurray_status_name(want),
                               describe(&err));
      else if (err.status != st)
        mismatch(&r, "HurrayError.status %s differs from the returned status",
                 hurray_status_name(err.status));
      const VjValue *off = req(e, "offset");
      const VjValue *alt = vj_get(e, "field_offset");
      if (st == want && !vj_is_null(off) && err.offset != ju(off) &&
          (vj_is_null(alt) || err.offset != ju(alt)))
        mismatch(&r, "expected offset %llu (%s), got %s", (unsigned long long)ju(off),
                 ks(e, "field"), describe(&err));
    }
    HurrayDescriptor *q = NULL;
    st = hurray_descriptor_decode(data, n, &q);
    if (st != want) mismatch(&r, "hurray_descriptor_decode returned %s, expected %s",
                             hurray_status_name(st), hurray_status_name(want));
    assert_int_equal(hurray_descriptor_destroy(q), HURRAY_OK);
    if (r.bad) failing++;
    free(data);
  }
  int bad = report("invalid vectors", failing, vj_len(invalid));
  vj_free(c.manifest);
  if (bad) fail_msg("%zu invalid vectors fail (details above)", failing);
}

static void test_permissive_vectors(void **state) {
  (void)state;
  Corpus c;
  if (!load_corpus(&c)) skip();
  const VjValue *invalid = req(c.manifest, "invalid");
  size_t failing = 0, checked = 0;
  for (size_t i = 0; i < vj_len(invalid); i++) {
    const VjValue *e = vj_at(invalid, i);
    const char *mode = vj_str(req(e, "permissive"));
    if (!mode) continue;
    checked++;
    Run r = {ks(e, "name"), 0};
    size_t n = 0;
    uint8_t *data = read_vector(&c, e, &n);
    HurrayDescriptor *d = NULL;
    HurrayError err;
    HurrayStatus st = hurray_descriptor_decode_ex(data, n, HURRAY_DECODE_PERMISSIVE, &d, &err);
    if (strcmp(mode, "roundtrip") == 0) {
      if (st != HURRAY_OK) {
        mismatch(&r, "permissive decode failed: %s", describe(&err));
      } else {
        check_encode(&r, "permissive re-encode", d, data, n);
        assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
      }
    } else if (strcmp(mode, "reject") == 0) {
      HurrayStatus want = status_from_name(ks(e, "status"));
      if (st == HURRAY_OK) {
        mismatch(&r, "permissive decode accepted it");
        assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
      } else if (st != want) {
        mismatch(&r, "permissive: expected %s, got %s", hurray_status_name(want),
                 describe(&err));
      }
    } else {
      fail_msg("manifest: %s: unknown permissive mode %s", r.name, mode);
    }
    if (r.bad) failing++;
    free(data);
  }
  assert_true(checked >= 50);
  int bad = report("permissive vectors", failing, checked);
  vj_free(c.manifest);
  if (bad) fail_msg("%zu permissive vectors fail (details above)", failing);
}

/* Every proper prefix of a valid vector is rejected (and, under the
 * sanitizers, read without going past its end: each prefix is copied into an
 * allocation of exactly its length). */
static void test_valid_prefixes(void **state) {
  (void)state;
  Corpus c;
  if (!load_corpus(&c)) skip();
  const VjValue *valid = req(c.manifest, "valid");
  size_t failing = 0;
  for (size_t i = 0; i < vj_len(valid); i++) {
    const VjValue *e = vj_at(valid, i);
    Run r = {ks(e, "name"), 0};
    size_t n = 0;
    uint8_t *data = read_vector(&c, e, &n);
    size_t dlen = (size_t)ku(req(e, "expect"), "descriptor_length");
    for (size_t k = 0; k < dlen && k <= n; k++) {
      uint8_t *copy = malloc(k ? k : 1);
      assert_non_null(copy);
      memcpy(copy, data, k);
      HurrayDescriptor *d = NULL;
      HurrayError err;
      HurrayStatus st = hurray_descriptor_decode_ex(copy, k, HURRAY_DECODE_PERMISSIVE, &d, &err);
      if (st == HURRAY_OK) {
        mismatch(&r, "a %zu-byte prefix decoded", k);
        assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
      } else if (d != NULL) {
        mismatch(&r, "*out not NULL after a failure on a %zu-byte prefix", k);
      }
      free(copy);
    }
    if (r.bad) failing++;
    free(data);
  }
  int bad = report("valid vector prefixes", failing, vj_len(valid));
  vj_free(c.manifest);
  if (bad) fail_msg("%zu valid vectors have an accepted prefix (details above)", failing);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vjson),
      cmocka_unit_test(test_manifest),
      cmocka_unit_test(test_valid_vectors),
      cmocka_unit_test(test_invalid_vectors),
      cmocka_unit_test(test_permissive_vectors),
      cmocka_unit_test(test_valid_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
