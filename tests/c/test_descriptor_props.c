/*
 * Property tests of the codec:
 *  - a seeded generator builds many random spec-valid descriptors through
 *    from_fields (every layout, every section, devices, minor versions with
 *    trailing bytes); each must encode, decode back equal, re-encode to the
 *    same bytes, clone equal and walk over every byte;
 *  - every prefix of those encodings (and the prefix with descriptor_length
 *    patched to match) fails cleanly: no crash, no read past the end (the
 *    prefixes live in exact-size heap blocks so ASan sees any overread).
 * HURRAY_PROP_ITERS overrides the iteration count; failures print the seed.
 */
#include <math.h>

#include "test_descriptor_wire.h"

typedef struct Gen {
  uint64_t s;
  HurrayDescriptorFields f;
  uint64_t dims[4];
  int64_t strides[4];
  uint32_t bits[4];
  uint32_t mode_order[4];
  HurrayTiledLevel levels[2];
  uint64_t tiles[2][4];
  int64_t tstrides[2][2][4]; /* [level][outer/inner][dim] */
  HurrayBufferHandle bufs[12];
  uint64_t parent[4], offset[4];
  HurrayShard shard;
  HurrayStatistics stats;
  HurrayExtensionType ext;
  HurrayCompositeMember member;
  uint8_t qraw[20];
  HurrayQuantization q;
  uint8_t trailing[16];
  uint8_t pdata[8];
  uint64_t layout_nnz;
} Gen;

static uint64_t next(Gen *g) {
  uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint32_t below(Gen *g, uint32_t n) { return (uint32_t)(next(g) % n); }
static double unit(Gen *g) { return (double)(next(g) >> 11) * (1.0 / 9007199254740992.0); }

static uint64_t element_count(const Gen *g) {
  uint64_t n = 1;
  for (uint32_t k = 0; k < g->f.rank; k++) n *= g->dims[k];
  return n;
}

static uint64_t storage(const Gen *g, uint64_t count) {
  uint64_t n = 0;
  if (g->f.type_tag >= HURRAY_DTYPE_PRIVATE_FIRST)
    assert_int_equal(hurray_extension_buffer_size_bytes(g->ext.bit_width, g->ext.packing_factor,
                                                        count, &n),
                     HURRAY_OK);
  else
    assert_int_equal(hurray_buffer_size_bytes(g->f.type_tag, count, &n), HURRAY_OK);
  return n;
}

static void pick_type(Gen *g) {
  if (below(g, 6) == 0) {
    static const uint32_t widths[6] = {1, 2, 4, 8, 16, 32};
    uint32_t w = widths[below(g, 6)];
    g->f.type_tag = (uint8_t)(HURRAY_DTYPE_PRIVATE_FIRST + below(g, 15));
    memset(&g->ext, 0, sizeof g->ext);
    g->ext.bit_width = w;
    g->ext.packing_factor = (uint8_t)(w < 8 ? 8 / w : 1);
    if (w >= 8 && below(g, 2)) { /* a float */
      g->ext.is_float = 1;
      g->ext.sign_bits = (uint8_t)below(g, 2);
      g->ext.exponent_bits = (uint8_t)(1 + below(g, 8));
      g->ext.mantissa_bits = (uint8_t)below(g, 20);
      g->ext.exponent_bias = below(g, 1024);
      g->ext.has_nan = (uint8_t)below(g, 2);
      g->ext.has_inf = (uint8_t)below(g, 2);
    } else {
      g->ext.is_signed = (uint8_t)below(g, 2);
    }
    g->f.extension_type = &g->ext;
    return;
  }
  uint8_t tags[64];
  unsigned n = 0;
  for (unsigned t = 0; t < 256; t++)
    if (hurray_dtype_tag_kind((uint8_t)t) == HURRAY_TAG_NAMED) tags[n++] = (uint8_t)t;
  g->f.type_tag = tags[below(g, n)];
}

static void pick_dims(Gen *g, uint32_t rank, uint32_t lo, uint32_t hi) {
  g->f.rank = rank;
  for (uint32_t k = 0; k < rank; k++) g->dims[k] = lo + below(g, hi - lo + 1);
  g->f.shape = rank ? g->dims : NULL;
}

static void row_major_strides(const uint64_t *dims, uint32_t rank, int64_t *out) {
  int64_t s = 1;
  for (uint32_t k = rank; k-- > 0;) {
    out[k] = s;
    s *= (int64_t)dims[k];
  }
}

/* Adds a buffer; device/class of the descriptor, a random sync mode. */
typedef struct Place { uint8_t dev, cls; } Place;

static void add_buffer(Gen *g, const Place *pl, uint64_t size) {
  HurrayBufferHandle *b = &g->bufs[g->f.buffer_count++];
  b->byte_size = size;
  b->alignment = size == 0 && below(g, 3) == 0 ? 1u << below(g, 7) : 64u << below(g, 7);
  b->device_tag = pl->dev;
  b->sync_mode = pl->dev == HURRAY_DEVICE_CPU ? 0 : (uint8_t)below(g, 3);
  b->memory_class = pl->cls;
  b->reserved = 0;
  g->f.buffers = g->bufs;
}

static void gen_layout(Gen *g, const Place *pl) {
  HurrayLayout *l = &g->f.layout;
  uint32_t which = below(g, 12);
  g->layout_nnz = UINT64_MAX;
  switch (which) {
    case 0:
    case 1: { /* row- / column-major, scalars included */
      l->tag = which == 0 ? HURRAY_LAYOUT_ROW_MAJOR : HURRAY_LAYOUT_COL_MAJOR;
      pick_dims(g, l->tag == HURRAY_LAYOUT_ROW_MAJOR ? below(g, 4) : 1 + below(g, 3), 0, 5);
      add_buffer(g, pl, storage(g, element_count(g)) + below(g, 3) * 16u);
      return;
    }
    case 2:
      l->tag = HURRAY_LAYOUT_STRIDED;
      pick_dims(g, 1 + below(g, 3), 1, 5);
      row_major_strides(g->dims, g->f.rank, g->strides);
      l->u.strided.strides = g->strides;
      add_buffer(g, pl, storage(g, element_count(g)));
      return;
    case 3: { /* tiled: one level, or a [2|4] tile split into [1|2] tiles */
      l->tag = HURRAY_LAYOUT_TILED;
      pick_dims(g, 1 + below(g, 2), 1, 6);
      uint32_t depth = 1 + below(g, 2);
      uint64_t grid = 1, per_tile = 1;
      for (uint32_t k = 0; k < g->f.rank; k++) {
        g->tiles[0][k] = depth == 1 ? 1 + below(g, 3) : 2u << below(g, 2);
        g->tiles[1][k] = g->tiles[0][k] / 2;
        grid *= (g->dims[k] + g->tiles[0][k] - 1) / g->tiles[0][k];
        per_tile *= g->tiles[0][k];
      }
      for (uint32_t i = 0; i < depth; i++) {
        HurrayTiledLevel *lv = &g->levels[i];
        lv->tile_shape = g->tiles[i];
        lv->outer_layout = (uint8_t)(1 + below(g, 3));
        lv->inner_layout = i + 1 < depth ? 0x04 : (uint8_t)(1 + below(g, 3));
        uint64_t cells[4], inner[4];
        for (uint32_t k = 0; k < g->f.rank; k++) {
          uint64_t span = i == 0 ? g->dims[k] : g->tiles[0][k];
          cells[k] = (span + g->tiles[i][k] - 1) / g->tiles[i][k];
          inner[k] = g->tiles[i][k];
        }
        row_major_strides(cells, g->f.rank, g->tstrides[i][0]);
        row_major_strides(inner, g->f.rank, g->tstrides[i][1]);
        lv->outer_strides = lv->outer_layout == 0x03 ? g->tstrides[i][0] : NULL;
        lv->inner_strides = lv->inner_layout == 0x03 ? g->tstrides[i][1] : NULL;
      }
      l->u.tiled.depth = depth;
      l->u.tiled.levels = g->levels;
      add_buffer(g, pl, storage(g, grid * per_tile));
      return;
    }
    case 4: { /* morton */
      l->tag = HURRAY_LAYOUT_MORTON;
      g->f.rank = 1 + below(g, 3);
      uint32_t total = 0;
      for (uint32_t k = 0; k < g->f.rank; k++) {
        g->bits[k] = 1 + below(g, 3);
        total += g->bits[k];
        g->dims[k] = 1 + below(g, 1u << g->bits[k]);
      }
      g->f.shape = g->dims;
      l->u.morton.bits = g->bits;
      add_buffer(g, pl, storage(g, 1ull << total));
      return;
    }
    case 5: { /* hilbert */
      l->tag = HURRAY_LAYOUT_HILBERT;
      g->f.rank = 2 + below(g, 2);
      uint32_t order = 1 + below(g, 2);
      for (uint32_t k = 0; k < g->f.rank; k++) g->dims[k] = 1ull << order;
      g->f.shape = g->dims;
      l->u.hilbert.order = order;
      l->u.hilbert.rank = g->f.rank;
      add_buffer(g, pl, storage(g, element_count(g)));
      return;
    }
    case 6: { /* COO */
      l->tag = HURRAY_LAYOUT_COO;
      pick_dims(g, 1 + below(g, 3), 1, 5);
      uint64_t nnz = below(g, (uint32_t)element_count(g) + 1);
      l->u.coo.nnz = g->layout_nnz = nnz;
      l->u.coo.is_sorted = (uint8_t)below(g, 2);
      add_buffer(g, pl, storage(g, nnz));
      add_buffer(g, pl, nnz * g->f.rank * 8u);
      return;
    }
    case 7:
    case 8: { /* CSR / CSC */
      l->tag = which == 7 ? HURRAY_LAYOUT_CSR : HURRAY_LAYOUT_CSC;
      pick_dims(g, 2, 1, 5);
      uint64_t nnz = below(g, (uint32_t)element_count(g) + 1);
      l->u.csr.nnz = g->layout_nnz = nnz;
      add_buffer(g, pl, storage(g, nnz));
      add_buffer(g, pl, nnz * 8u);
      add_buffer(g, pl, (g->dims[which == 7 ? 0 : 1] + 1) * 8u);
      return;
    }
    case 9: { /* CSF: sizes are upper bounds of the content-dependent ones */
      l->tag = HURRAY_LAYOUT_CSF;
      pick_dims(g, 3, 1, 4);
      uint64_t nnz = below(g, (uint32_t)element_count(g) + 1);
      l->u.csf.nnz = g->layout_nnz = nnz;
      uint32_t perm[3] = {0, 1, 2};
      for (uint32_t k = 2; k > 0; k--) {
        uint32_t j = below(g, k + 1), t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
      }
      memcpy(g->mode_order, perm, sizeof perm);
      l->u.csf.mode_order = g->mode_order;
      add_buffer(g, pl, storage(g, nnz));
      for (uint32_t lvl = 0; lvl < 3; lvl++) {
        add_buffer(g, pl, lvl == 0 ? 16u : (nnz + 1) * 8u);
        add_buffer(g, pl, nnz * 8u);
      }
      return;
    }
    case 10: { /* block-paged */
      l->tag = HURRAY_LAYOUT_BLOCK_PAGED;
      uint32_t page = 1 + below(g, 16), pages = below(g, 4), seqs = below(g, 3);
      uint8_t idx = (uint8_t)below(g, 2);
      g->f.rank = 3;
      g->dims[0] = below(g, pages * page + 1);
      g->dims[1] = 1 + below(g, 3);
      g->dims[2] = 1 + below(g, 4);
      g->f.shape = g->dims;
      l->u.block_paged.page_size = page;
      l->u.block_paged.num_pages = pages;
      l->u.block_paged.paged_axis = 0;
      l->u.block_paged.num_seqs = seqs;
      l->u.block_paged.kv_role = (uint8_t)below(g, 3);
      l->u.block_paged.layer_index = below(g, 2) ? below(g, 80) : HURRAY_NO_LAYER_INDEX;
      l->u.block_paged.block_table_index_type = idx;
      uint64_t w = idx ? 8u : 4u;
      add_buffer(g, pl, storage(g, (uint64_t)pages * page * g->dims[1] * g->dims[2]));
      add_buffer(g, pl, w * pages);
      add_buffer(g, pl, w * (seqs + 1u));
      return;
    }
    default: { /* composite head */
      l->tag = HURRAY_LAYOUT_COMPOSITE;
      pick_dims(g, 1 + below(g, 3), 0, 5);
      l->u.composite.rule = (uint8_t)(1 + below(g, 3));
      l->u.composite.combine_op =
          l->u.composite.rule == HURRAY_COMPOSITE_OVERLAY ? (uint8_t)(1 + below(g, 2)) : 0;
      l->u.composite.member_count =
          (l->u.composite.rule == HURRAY_COMPOSITE_OVERLAY ? 1 : 0) + below(g, 5);
      return;
    }
  }
}

static void gen_sections(Gen *g) {
  uint8_t tag = g->f.layout.tag;
  bool head = tag == HURRAY_LAYOUT_COMPOSITE;
  if (tag == HURRAY_LAYOUT_ROW_MAJOR && g->f.type_tag == HURRAY_DTYPE_INT8 && below(g, 2)) {
    /* per-tensor affine: finite non-zero scale (normal or subnormal) */
    uint32_t scale = below(g, 4) == 0 ? 1u + below(g, 0x7FFFFF)
                                      : ((100u + below(g, 60)) << 23) | below(g, 0x800000);
    if (below(g, 2)) scale |= 0x80000000u;
    uint8_t *r = g->qraw;
    memset(r, 0, sizeof g->qraw);
    r[0] = HURRAY_QUANT_PER_TENSOR_AFFINE;
    r[1] = 1;
    hurray__st32(r + 4, scale);
    hurray__st32(r + 8, (uint32_t)(int32_t)((int)below(g, 256) - 128));
    memset(&g->q, 0, sizeof g->q);
    g->q.raw = r;
    g->q.raw_len = 16;
    g->f.quantization = &g->q;
  }
  if (tag != HURRAY_LAYOUT_CSF && tag != HURRAY_LAYOUT_BLOCK_PAGED && below(g, 4) == 0) {
    for (uint32_t k = 0; k < g->f.rank; k++) {
      g->parent[k] = g->dims[k] + below(g, 4);
      g->offset[k] = below(g, (uint32_t)(g->parent[k] - g->dims[k] + 1));
    }
    g->shard.parent_shape = g->f.rank ? g->parent : NULL;
    g->shard.offset = g->f.rank ? g->offset : NULL;
    g->f.shard = &g->shard;
  }
  if (below(g, 3) == 0) {
    HurrayStatistics *s = &g->stats;
    s->computed_mask = (uint32_t)(next(g) & HURRAY_STAT_KNOWN);
    s->nnz = g->layout_nnz != UINT64_MAX ? g->layout_nnz : next(g) % 100;
    s->sparsity_ratio = unit(g);
    s->value_min = hurray__f64_from_bits(next(g)); /* any bits, NaN payloads included */
    s->value_max = hurray__f64_from_bits(next(g));
    s->value_abs_max = hurray__f64_from_bits(next(g));
    s->value_mean = hurray__f64_from_bits(next(g));
    s->value_stddev = unit(g) * 1e6;
    s->nm_m = (uint8_t)below(g, 9);
    s->nm_n = (uint8_t)below(g, s->nm_m + 1u);
    s->has_nan = (uint8_t)below(g, 2);
    s->has_inf = (uint8_t)below(g, 2);
    g->f.statistics = s;
  }
  /* Only overlay members carry a member section, and they carry a shard; the
   * base (role 1) spans its whole parent. */
  if (!head && g->f.shard != NULL && below(g, 5) == 0) {
    g->member.role = (uint8_t)below(g, 2);
    if (g->member.role == HURRAY_MEMBER_ROLE_BASE)
      for (uint32_t k = 0; k < g->f.rank; k++) {
        g->parent[k] = g->dims[k];
        g->offset[k] = 0;
      }
    g->f.composite_member = &g->member;
  }
  if (below(g, 5) == 0) {
    g->f.version_minor = (uint8_t)(1 + below(g, 3));
    g->f.trailing_len = below(g, 16);
    for (uint32_t i = 0; i < g->f.trailing_len; i++) g->trailing[i] = (uint8_t)next(g);
    g->f.trailing = g->f.trailing_len ? g->trailing : NULL;
  }
}

static void generate(Gen *g, uint64_t seed) {
  memset(g, 0, sizeof *g);
  g->s = seed;
  pick_type(g);
  static const Place places[] = {{0x00, 0x00}, {0x00, 0x01}, {0x00, 0x02}, {0x01, 0x00},
                                 {0x01, 0x03}, {0x02, 0x02}, {0x04, 0x01}, {0x05, 0x00},
                                 {0xF4, 0x00}, {0xF4, 0xF2}};
  const Place *pl = &places[below(g, sizeof places / sizeof places[0])];
  gen_layout(g, pl);
  gen_sections(g);
}

static unsigned iterations(void) {
  const char *e = getenv("HURRAY_PROP_ITERS");
  return e != NULL ? (unsigned)strtoul(e, NULL, 10) : 3000u;
}

/* Every strict prefix fails with INVALID_LAYOUT, also with descriptor_length
 * patched to the prefix (then only a 1.x descriptor cut at the end of its
 * known sections may decode, dropping its trailing bytes). */
static void check_truncations(const uint8_t *b, size_t n, uint64_t known_end, uint64_t seed) {
  for (size_t len = 0; len < n; len++) {
    uint8_t *p = malloc(len ? len : 1);
    memcpy(p, b, len);
    HurrayDescriptor *d = (HurrayDescriptor *)(uintptr_t)1;
    HurrayStatus st = hurray_descriptor_decode(p, len, &d);
    if (st != HURRAY_ERR_INVALID_LAYOUT)
      fail_msg("seed %llu: prefix %zu of %zu: status %d", (unsigned long long)seed, len, n, st);
    assert_null(d);
    if (len >= 10) {
      hurray__st32(p + 6, (uint32_t)len);
      for (int mode = 0; mode < 2; mode++) {
        uint32_t opt = mode ? HURRAY_DECODE_PERMISSIVE : 0;
        st = hurray_descriptor_decode_ex(p, len, opt, &d, NULL);
        bool may_pass = p[5] > 0 || mode == 1;
        if (st == HURRAY_OK && may_pass && len >= known_end) {
          assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
          continue;
        }
        if (st != HURRAY_ERR_INVALID_LAYOUT)
          fail_msg("seed %llu: patched prefix %zu of %zu (mode %d): status %d",
                   (unsigned long long)seed, len, n, mode, st);
        assert_null(d);
      }
    }
    free(p);
  }
}

static void test_random_roundtrips(void **state) {
  (void)state;
  unsigned iters = iterations();
  unsigned layouts[256] = {0};
  for (unsigned it = 0; it < iters; it++) {
    uint64_t seed = 0x5EED0000ull + it;
    Gen *g = malloc(sizeof *g);
    generate(g, seed);
    HurrayDescriptor *d = NULL;
    HurrayError err;
    HurrayStatus st = hurray_descriptor_from_fields(&g->f, 0, &d, &err);
    if (st != HURRAY_OK)
      fail_msg("seed %llu: from_fields (layout 0x%02X, type 0x%02X) failed: %s",
               (unsigned long long)seed, g->f.layout.tag, g->f.type_tag, err.message);
    layouts[g->f.layout.tag]++;
    uint64_t n = 0;
    assert_int_equal(hurray_descriptor_encoded_len(d, &n), HURRAY_OK);
    uint8_t *bytes = malloc(n);
    assert_int_equal(hurray_descriptor_encode(d, bytes, n, &n), HURRAY_OK);

    /* Decoded, it is the same descriptor with the generated values. */
    HurrayDescriptor *back = expect_roundtrip(bytes, n, 0);
    assert_true(hurray_descriptor_equal(d, back));
    HurrayDescriptorFields f;
    assert_int_equal(hurray_descriptor_fields(back, &f), HURRAY_OK);
    assert_int_equal(f.type_tag, g->f.type_tag);
    assert_int_equal(f.rank, g->f.rank);
    if (f.rank) assert_memory_equal(f.shape, g->f.shape, f.rank * 8u);
    assert_int_equal(f.layout.tag, g->f.layout.tag);
    assert_int_equal(f.buffer_count, g->f.buffer_count);
    for (uint32_t i = 0; i < f.buffer_count; i++) {
      assert_int_equal(f.buffers[i].byte_size, g->bufs[i].byte_size);
      assert_int_equal(f.buffers[i].alignment, g->bufs[i].alignment);
      assert_int_equal(f.buffers[i].sync_mode, g->bufs[i].sync_mode);
    }
    assert_int_equal(f.quantization != NULL, g->f.quantization != NULL);
    if (f.quantization) assert_memory_equal(f.quantization->raw, g->qraw, 16);
    assert_int_equal(f.shard != NULL, g->f.shard != NULL);
    assert_int_equal(f.statistics != NULL, g->f.statistics != NULL);
    if (f.statistics) {
      assert_int_equal(hurray__f64_bits(f.statistics->value_min),
                       hurray__f64_bits(g->stats.value_min));
      assert_int_equal(hurray__f64_bits(f.statistics->value_mean),
                       hurray__f64_bits(g->stats.value_mean));
    }
    assert_int_equal(f.extension_type != NULL, g->f.extension_type != NULL);
    assert_int_equal(f.composite_member != NULL, g->f.composite_member != NULL);
    assert_int_equal(f.version_minor, g->f.version_minor);
    assert_int_equal(f.trailing_len, g->f.trailing_len);
    /* A permissive reader sees the same descriptor. */
    HurrayDescriptor *perm = expect_decode(bytes, n, HURRAY_DECODE_PERMISSIVE, HURRAY_OK, NULL);
    assert_true(hurray_descriptor_equal(perm, back));
    assert_int_equal(hurray_descriptor_destroy(perm), HURRAY_OK);

    if (it % 10 == 0) {
      HurrayOffsets o;
      hurray__descriptor_offsets(&f, &o);
      check_truncations(bytes, n, o.trailing, seed);
    }
    assert_int_equal(hurray_descriptor_destroy(back), HURRAY_OK);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    free(bytes);
    free(g);
  }
  /* Every layout was exercised. */
  static const uint8_t all[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                0x08, 0x09, 0x0A, 0x0B, 0x40};
  if (iters >= 1000)
    for (size_t i = 0; i < sizeof all; i++) assert_true(layouts[all[i]] > 0);
}

/* Golden corpus prefixes too, when present. */
static void test_golden_truncations(void **state) {
  (void)state;
  const char *dir = tu_env_dir("HURRAY_GOLDEN_DIR");
  if (dir == NULL) {
    printf("golden corpus absent: skipped\n");
    skip();
  }
  static const char *const names[] = {"row_major_f32_3x4", "strided_f32_3x4", "morton_f32_4x4",
                                      "sharded_f32_8x4", "csr_f32_3x3",
                                      "composite_head_partition",
                                      "quant_per_block_int4_128x128"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/descriptors/%s.bin", dir, names[i]);
    size_t n = 0;
    uint8_t *b = tu_read_file(path, &n);
    assert_non_null(b);
    check_truncations(b, n, n, i);
    free(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_roundtrips),
      cmocka_unit_test(test_golden_truncations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
