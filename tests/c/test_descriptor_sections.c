/*
 * The optional sections of a descriptor, in the order of docs/internals/decisions.md
 * § Descriptor encoding:
 * quantization (framing only; the scheme rules belong to src/quant), shard,
 * statistics, extension type, composite member.
 */
#include <math.h>

#include "test_descriptor_wire.h"

/* int8 [3, 4] row-major with a per-tensor affine section of `qlen` bytes. */
static void w_int8_quant(W *w, uint32_t scale_bits, uint32_t qlen) {
  w_header(w, 0, HURRAY_FLAG_HAS_QUANTIZATION, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(w, 1);
  w_cpu_buffer(w, 12);
  w_u32(w, qlen);
  w_u8(w, HURRAY_QUANT_PER_TENSOR_AFFINE);
  w_u8(w, 1);
  w_u16(w, 0);
  w_u32(w, scale_bits);
  w_u32(w, (uint32_t)-3);
  w_zero(w, 4);
  if (qlen > 16) w_zero(w, qlen - 16);
}

static void test_quantization_framing(void **state) {
  (void)state;
  W w;
  w_int8_quant(&w, 0x3F000000u, 16); /* scale 0.5 */
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.quantization);
  assert_int_equal(f.flags, HURRAY_FLAG_HAS_QUANTIZATION);
  assert_int_equal(f.quantization->scheme, HURRAY_QUANT_PER_TENSOR_AFFINE);
  assert_int_equal(f.quantization->version, 1);
  assert_int_equal(f.quantization->raw_len, 16);
  assert_memory_equal(f.quantization->raw, w.b + 65, 16);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Writer padding after the scheme payload travels with the section. */
  w_int8_quant(&w, 0x3F000000u, 24);
  w_finish(&w);
  d = expect_roundtrip(w.b, w.n, 0);
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.quantization->raw_len, 24);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* A length running past descriptor_length. */
  w_int8_quant(&w, 0x3F000000u, 16);
  w.b[61] = 17;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "quantization");
  expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "quantization");
  w.b[61] = 0xFF;
  w.b[64] = 0xFF;
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "quantization");
  /* The length prefix itself cut short. */
  w.n = 63;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "quantization.length");
}

static void test_quantization_subnormal_scale_bits(void **state) {
  (void)state;
  /* The smallest subnormal float and a negative subnormal survive bit for bit. */
  static const uint32_t bits[] = {0x00000001u, 0x807FFFFFu, 0x00400000u};
  for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
    W w;
    w_int8_quant(&w, bits[i], 16);
    w_finish(&w);
    HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
    HurrayDescriptorFields f;
    assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
    assert_int_equal(hurray__ld32(f.quantization->raw + 4), bits[i]);
    /* When the scheme parser fills the typed fields, they keep the bits too. */
    uint32_t typed = hurray__f32_bits(f.quantization->u.per_tensor.scale);
    if (typed != 0) assert_int_equal(typed, bits[i]);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
}

static void test_quantization_from_typed_fields(void **state) {
  (void)state;
  static const uint64_t dims[2] = {3, 4};
  HurrayBufferHandle buf = {12, 64, 0, 0, 0, 0};
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  q.version = 1;
  q.u.per_tensor.scale = 0.25f;
  q.u.per_tensor.zero_point = 7;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_INT8;
  f.rank = 2;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &buf;
  f.quantization = &q;
  HurrayDescriptor *d = NULL;
  HurrayError err;
  HurrayStatus st = hurray_descriptor_from_fields(&f, 0, &d, &err);
  if (st != HURRAY_OK) fail_msg("%s", err.message);
  HurrayDescriptorFields g;
  assert_int_equal(hurray_descriptor_fields(d, &g), HURRAY_OK);
  assert_int_equal(g.flags, HURRAY_FLAG_HAS_QUANTIZATION);
  assert_non_null(g.quantization->raw);
  assert_int_equal(g.quantization->raw_len, hurray__quant_encoded_len(&q));
  assert_int_equal(g.quantization->raw[0], HURRAY_QUANT_PER_TENSOR_AFFINE);
  assert_int_equal(g.quantization->raw[1], 1);
  uint8_t out[256];
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, sizeof out, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(expect_roundtrip(out, n, 0)), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* Validation alone accepts the same typed fields (raw_len is ignored while
   * raw is NULL). */
  q.raw_len = 12345;
  assert_int_equal(hurray_descriptor_validate(&f, 0, &err), HURRAY_OK);
}

/* float32 [8, 4] shard of [8, 8] at [0, 4] (the golden vector). */
static void w_shard(W *w, uint64_t s0, uint64_t s1, uint64_t p0, uint64_t p1, uint64_t o0,
                    uint64_t o1) {
  w_header(w, 0, HURRAY_FLAG_HAS_SHARD, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(w, 2, (const uint64_t[]){s0, s1}, 0);
  w_u8(w, 1);
  w_cpu_buffer(w, 128);
  w_u64(w, p0);
  w_u64(w, p1);
  w_u64(w, o0);
  w_u64(w, o1);
  w_finish(w);
}

static void test_shard(void **state) {
  (void)state;
  W w;
  w_shard(&w, 8, 4, 8, 8, 0, 4);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.shard);
  assert_int_equal(f.shard->parent_shape[1], 8);
  assert_int_equal(f.shard->offset[1], 4);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* offset + shape == parent is the boundary. */
  w_shard(&w, 8, 4, 8, 4, 0, 0);
  expect_roundtrip_w(&w, 0);
  w_shard(&w, 8, 4, 8, 8, 0, 5);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "shard.offset[1]");
  expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "shard.offset[1]");
  w_shard(&w, 8, 4, 7, 8, 0, 4);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "shard.offset[0]");
  /* offset + shape overflowing u64 is out of bounds, not wrapped. */
  w_shard(&w, 8, 4, 8, 8, UINT64_MAX - 2, 4);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "shard.offset[0]");
  /* Dynamic dimensions are not allowed in a sharded tensor. */
  w_shard(&w, 8, 4, HURRAY_DYNAMIC_DIM, 8, 0, 4);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_SHARD, "shard.parent_shape[0]");
  w_shard(&w, HURRAY_DYNAMIC_DIM, 4, HURRAY_DYNAMIC_DIM, 8, 0, 4);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_SHARD, "shape[0]");
  /* Truncated. */
  w_shard(&w, 8, 4, 8, 8, 0, 4);
  w.n -= 4;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "shard.offset[1]");
}

static void test_shard_forbidden_layouts(void **state) {
  (void)state;
  /* CSF: empty [2, 3, 4] with a shard of itself. */
  W w;
  w_header(&w, 0, HURRAY_FLAG_HAS_SHARD, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_CSF, 3);
  w_shape(&w, 3, (const uint64_t[]){2, 3, 4}, 0);
  w_u64(&w, 0);
  w_u32(&w, 0);
  w_u32(&w, 1);
  w_u32(&w, 2);
  w_zero(&w, 8);
  w_u8(&w, 7);
  static const uint64_t sizes[7] = {0, 16, 0, 8, 0, 8, 0};
  for (int i = 0; i < 7; i++) w_cpu_buffer(&w, sizes[i]);
  for (int k = 0; k < 3; k++) w_u64(&w, (uint64_t[]){2, 3, 4}[k]);
  w_zero(&w, 24);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "shard");
  /* Block-paged. */
  w_header(&w, 0, HURRAY_FLAG_HAS_SHARD, HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, 3);
  w_shape(&w, 3, (const uint64_t[]){0, 2, 4}, 0);
  w_u32(&w, 16);
  w_u64(&w, 2);
  w_u32(&w, 0);
  w_u32(&w, 0);
  w_u8(&w, 0);
  w_u32(&w, HURRAY_NO_LAYER_INDEX);
  w_u8(&w, 0);
  w_zero(&w, 6);
  w_u8(&w, 3);
  w_cpu_buffer(&w, 512);
  w_buffer(&w, 0, 64, 0, 0, 0);
  w_cpu_buffer(&w, 4);
  for (int k = 0; k < 3; k++) w_u64(&w, (uint64_t[]){0, 2, 4}[k]);
  w_zero(&w, 24);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "shard");
}

/* ---- statistics ---------------------------------------------------------------- */

static void w_dense_stats(W *w, uint32_t mask, uint64_t nnz, double sparsity, double stddev,
                          uint8_t n, uint8_t m, uint8_t nan, uint8_t inf) {
  w_dense_f32_3x4(w, HURRAY_FLAG_HAS_STATISTICS);
  w_stats(w, mask, nnz, sparsity, stddev, n, m, nan, inf);
  w_finish(w);
}

static void test_statistics(void **state) {
  (void)state;
  W w;
  w_dense_stats(&w, HURRAY_STAT_KNOWN, 12, 0.0, 1.0, 2, 4, 0, 1);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.statistics);
  assert_int_equal(f.statistics->computed_mask, HURRAY_STAT_KNOWN);
  assert_int_equal(f.statistics->nnz, 12);
  assert_true(f.statistics->value_min == -1.5);
  assert_true(f.statistics->value_max == 2.5);
  assert_true(f.statistics->value_mean == 0.25);
  assert_true(f.statistics->value_stddev == 1.0);
  assert_int_equal(f.statistics->nm_n, 2);
  assert_int_equal(f.statistics->nm_m, 4);
  assert_int_equal(f.statistics->has_inf, 1);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Reserved mask bits. */
  for (unsigned bit = 6; bit < 32; bit += 5) {
    w_dense_stats(&w, 1u << bit, 0, 0, 0, 0, 0, 0, 0);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "statistics.computed_mask");
  }
  /* Reserved bytes at 4..7 and 68..71, each byte, both modes. */
  static const size_t at[] = {4, 5, 6, 7, 68, 69, 70, 71};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    w_dense_stats(&w, 0, 0, 0, 0, 0, 0, 0, 0);
    w.b[61 + at[i]] = 1;
    const char *field = at[i] < 8 ? "statistics.reserved" : "statistics.reserved2";
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, field);
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, field);
  }
  /* Truncated. */
  w_dense_stats(&w, 0, 0, 0, 0, 0, 0, 0, 0);
  w.n -= 1;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "statistics");
}

static void test_statistics_value_rules(void **state) {
  (void)state;
  static const struct {
    uint32_t mask;
    double sparsity, stddev;
    uint8_t n, m, nan, inf;
    HurrayStatus st;
    const char *field;
  } k[] = {
      {HURRAY_STAT_SPARSITY_VALID, 1.0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {HURRAY_STAT_SPARSITY_VALID, 0.0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {HURRAY_STAT_SPARSITY_VALID, 1.0000001, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.sparsity_ratio"},
      {HURRAY_STAT_SPARSITY_VALID, -0.5, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.sparsity_ratio"},
      {HURRAY_STAT_SPARSITY_VALID, NAN, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.sparsity_ratio"},
      {0, NAN, -1.0, 5, 1, 7, 9, HURRAY_OK, NULL}, /* nothing marked valid */
      {HURRAY_STAT_VALUE_STATS_VALID, 0, 0.0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {HURRAY_STAT_VALUE_STATS_VALID, 0, -0.0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {HURRAY_STAT_VALUE_STATS_VALID, 0, -1e-300, 0, 0, 0, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.value_stddev"},
      {HURRAY_STAT_VALUE_STATS_VALID, 0, NAN, 0, 0, 0, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.value_stddev"},
      {HURRAY_STAT_NM_SPARSITY_VALID, 0, 0, 4, 4, 0, 0, HURRAY_OK, NULL},
      {HURRAY_STAT_NM_SPARSITY_VALID, 0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {HURRAY_STAT_NM_SPARSITY_VALID, 0, 0, 3, 2, 0, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.nm_n"},
      {HURRAY_STAT_NAN_INF_VALID, 0, 0, 0, 0, 1, 1, HURRAY_OK, NULL},
      {HURRAY_STAT_NAN_INF_VALID, 0, 0, 0, 0, 2, 0, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.has_nan"},
      {HURRAY_STAT_NAN_INF_VALID, 0, 0, 0, 0, 0, 0xFF, HURRAY_ERR_INVALID_STATISTICS,
       "statistics.has_inf"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    W w;
    w_dense_stats(&w, k[i].mask, 0, k[i].sparsity, k[i].stddev, k[i].n, k[i].m, k[i].nan,
                  k[i].inf);
    if (k[i].st == HURRAY_OK)
      expect_roundtrip_w(&w, 0);
    else
      expect_reject(&w, 0, k[i].st, k[i].field);
  }
}

static void test_statistics_nnz_agreement(void **state) {
  (void)state;
  W w;
  /* COO with 3 entries. */
  for (uint64_t nnz = 2; nnz <= 4; nnz++) {
    w_coo_f32_4x4(&w, HURRAY_FLAG_HAS_STATISTICS, 3, 1);
    w_stats(&w, HURRAY_STAT_NNZ_VALID, nnz, 0, 0, 0, 0, 0, 0);
    w_finish(&w);
    if (nnz == 3)
      expect_roundtrip_w(&w, 0);
    else
      expect_reject(&w, 0, HURRAY_ERR_INVALID_STATISTICS, "statistics.nnz");
    /* Without NNZ_VALID the field is not compared. */
    w.b[93] = 0;
    expect_roundtrip_w(&w, 0);
  }
  /* CSR 2 entries vs 5. */
  w_header(&w, 0, HURRAY_FLAG_HAS_STATISTICS, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_CSR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 3}, 0);
  w_u64(&w, 2);
  w_zero(&w, 8);
  w_u8(&w, 3);
  w_cpu_buffer(&w, 8);
  w_cpu_buffer(&w, 16);
  w_cpu_buffer(&w, 32);
  w_stats(&w, HURRAY_STAT_NNZ_VALID, 5, 0, 0, 0, 0, 0, 0);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_STATISTICS, "statistics.nnz");
  /* Dense layouts have no layout nnz to agree with. */
  W d;
  w_dense_stats(&d, HURRAY_STAT_NNZ_VALID, 7, 0, 0, 0, 0, 0, 0);
  expect_roundtrip_w(&d, 0);
}

static void test_statistics_float_bits(void **state) {
  (void)state;
  /* Signalling NaN with a payload, negative quiet NaN, subnormals, -0.0. */
  static const uint64_t bits[6] = {0x7FF0000000000123ull, 0xFFF8000000000001ull,
                                   0x0000000000000001ull, 0x800FFFFFFFFFFFFFull,
                                   0x8000000000000000ull, 0x7FF0000000000000ull};
  W w;
  w_dense_f32_3x4(&w, HURRAY_FLAG_HAS_STATISTICS);
  w_u32(&w, HURRAY_STAT_VALUE_RANGE_VALID); /* the NaN-carrying fields are valid */
  w_u32(&w, 0);
  w_u64(&w, 0);
  for (int i = 0; i < 6; i++) w_u64(&w, bits[i]);
  w_zero(&w, 8);
  w_finish(&w);
  /* value_stddev (index 5 above = +inf) is only checked with VALUE_STATS_VALID. */
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  const double got[6] = {f.statistics->sparsity_ratio, f.statistics->value_min,
                         f.statistics->value_max,      f.statistics->value_abs_max,
                         f.statistics->value_mean,     f.statistics->value_stddev};
  for (int i = 0; i < 6; i++) assert_int_equal(hurray__f64_bits(got[i]), bits[i]);
  /* Built from fields: the same bits go back on the wire. */
  HurrayStatistics s = *f.statistics;
  HurrayDescriptorFields g = f;
  g.statistics = &s;
  HurrayDescriptor *r = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&g, 0, &r, NULL), HURRAY_OK);
  uint8_t out[256];
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(r, out, sizeof out, &n), HURRAY_OK);
  assert_int_equal(n, w.n);
  assert_memory_equal(out, w.b, w.n);
  /* Equality is bitwise: a different NaN payload is a different descriptor. */
  s.value_min = hurray__f64_from_bits(0x7FF0000000000124ull);
  HurrayDescriptor *r2 = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&g, 0, &r2, NULL), HURRAY_OK);
  assert_false(hurray_descriptor_equal(r, r2));
  assert_int_equal(hurray_descriptor_destroy(r2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(r), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* ---- extension type -------------------------------------------------------------- */

static void w_private(W *w, uint32_t bits, uint8_t pack, uint8_t is_float, uint8_t is_signed,
                      uint8_t sign, uint8_t expo, uint8_t mant, uint32_t bias, uint8_t nan,
                      uint8_t inf, uint64_t buffer) {
  w_header(w, 0, HURRAY_FLAG_HAS_EXTENSION_TYPE, 0xF1, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(w, 1);
  w_cpu_buffer(w, buffer);
  w_ext(w, bits, pack, is_float, is_signed, sign, expo, mant, bias, nan, inf);
  w_finish(w);
}

static void test_extension_type(void **state) {
  (void)state;
  static const struct {
    uint32_t bits;
    uint8_t pack, fl, sg, sb, eb, mb;
    uint32_t bias;
    uint8_t nan, inf;
    HurrayStatus st;
    const char *field;
  } k[] = {
      {16, 1, 1, 0, 1, 5, 10, 15, 1, 1, HURRAY_OK, NULL},  /* an fp16 look-alike */
      {8, 1, 1, 0, 0, 8, 0, 127, 0, 0, HURRAY_OK, NULL},   /* e8m0-like, no sign */
      {32, 1, 0, 1, 0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},    /* int32-like */
      {4, 2, 0, 1, 0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {2, 4, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {1, 8, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_OK, NULL},
      {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "extension_type.bit_width"},
      {3, 2, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "extension_type.bit_width"},
      {6, 1, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "extension_type.bit_width"},
      {4, 1, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT,
       "extension_type.packing_factor"},
      {1, 4, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT,
       "extension_type.packing_factor"},
      {8, 2, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT,
       "extension_type.packing_factor"},
      {12, 1, 0, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.bit_width"},
      {8, 1, 2, 0, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.is_float"},
      {8, 1, 0, 2, 0, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.is_signed"},
      {8, 1, 1, 1, 1, 4, 3, 7, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.is_signed"},
      {8, 1, 1, 0, 2, 4, 3, 7, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.sign_bits"},
      {8, 1, 0, 1, 1, 0, 0, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.sign_bits"},
      {8, 1, 0, 1, 0, 3, 0, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.exponent_bits"},
      {8, 1, 0, 1, 0, 0, 3, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.mantissa_bits"},
      {8, 1, 0, 1, 0, 0, 0, 7, 0, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.exponent_bias"},
      {16, 1, 1, 0, 1, 5, 10, 15, 2, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.has_nan"},
      {16, 1, 1, 0, 1, 5, 10, 15, 0, 3, HURRAY_ERR_INVALID_TYPE, "extension_type.has_inf"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    W w;
    w_private(&w, k[i].bits, k[i].pack, k[i].fl, k[i].sg, k[i].sb, k[i].eb, k[i].mb, k[i].bias,
              k[i].nan, k[i].inf, 64);
    if (k[i].st == HURRAY_OK)
      expect_roundtrip_w(&w, 0);
    else
      expect_reject(&w, 0, k[i].st, k[i].field);
  }
  /* Reserved bytes 10, 11, 18, 19, both modes. */
  static const size_t at[] = {10, 11, 18, 19};
  for (size_t i = 0; i < 4; i++) {
    W w;
    w_private(&w, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 12);
    w.b[61 + at[i]] = 0x40;
    const char *field = at[i] < 12 ? "extension_type.reserved" : "extension_type.reserved2";
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, field);
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, field);
  }
  /* Extension section missing or cut. */
  W w;
  w_private(&w, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 12);
  w.n -= 3;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "extension_type");
}

/* ---- composite member -------------------------------------------------------------- */

/* Writes the f32 [3,4] descriptor with a shard (parent, offset) and a member
 * section of the given role; returns the byte offset of the member section. */
static size_t w_member(W *w, uint8_t role, const uint64_t parent[2], const uint64_t offset[2]) {
  w_dense_f32_3x4(w, HURRAY_FLAG_HAS_SHARD | HURRAY_FLAG_HAS_COMPOSITE_MEMBER);
  for (int k = 0; k < 2; k++) w_u64(w, parent[k]);
  for (int k = 0; k < 2; k++) w_u64(w, offset[k]);
  size_t at = w->n;
  w_u8(w, role);
  w_zero(w, 15);
  w_finish(w);
  return at;
}

static void test_composite_member(void **state) {
  (void)state;
  static const uint64_t whole[2] = {3, 4}, zero[2] = {0, 0};
  for (unsigned role = 0; role < 256; role++) {
    W w;
    w_member(&w, (uint8_t)role, whole, zero);
    if (role <= 1) {
      HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
      HurrayDescriptorFields f;
      assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
      assert_int_equal(f.composite_member->role, role);
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    } else {
      expect_reject(&w, 0, HURRAY_ERR_INVALID_COMPOSITE, "composite_member.role");
    }
  }
  for (size_t k = 1; k < 16; k++) {
    W w;
    size_t at = w_member(&w, 1, whole, zero);
    w.b[at + k] = 2;
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "composite_member.reserved");
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT,
                  "composite_member.reserved");
  }
  /* Every overlay member carries a shard: a member section alone is invalid. */
  W bare;
  w_dense_f32_3x4(&bare, HURRAY_FLAG_HAS_COMPOSITE_MEMBER);
  w_u8(&bare, 0);
  w_zero(&bare, 15);
  w_finish(&bare);
  expect_reject(&bare, 0, HURRAY_ERR_INVALID_COMPOSITE, "composite_member");
  /* The base spans its whole parent; a correction may cover any box. */
  static const uint64_t bigger[2] = {6, 4}, down[2] = {3, 0};
  W w;
  w_member(&w, HURRAY_MEMBER_ROLE_BASE, bigger, zero);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_COMPOSITE, "shard.offset[0]");
  w_member(&w, HURRAY_MEMBER_ROLE_BASE, bigger, down);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_COMPOSITE, "shard.offset[0]");
  w_member(&w, HURRAY_MEMBER_ROLE_CORRECTION, bigger, down);
  assert_int_equal(hurray_descriptor_destroy(expect_roundtrip(w.b, w.n, 0)), HURRAY_OK);
}

/* ---- section order (docs/internals/decisions.md § Descriptor encoding) ----------------------- */

static void test_section_order(void **state) {
  (void)state;
  /* A private-type shard with statistics, extension type and member role: on
   * the wire statistics (bit 3) come before the extension type (bit 2). */
  W w;
  uint32_t flags = HURRAY_FLAG_HAS_SHARD | HURRAY_FLAG_HAS_STATISTICS |
                   HURRAY_FLAG_HAS_EXTENSION_TYPE | HURRAY_FLAG_HAS_COMPOSITE_MEMBER;
  w_header(&w, 0, flags, 0xF2, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 24);
  size_t shard_at = w.n;
  for (int k = 0; k < 2; k++) w_u64(&w, (uint64_t[]){6, 4}[k]);
  for (int k = 0; k < 2; k++) w_u64(&w, (uint64_t[]){3, 0}[k]);
  size_t stats_at = w.n;
  w_stats(&w, HURRAY_STAT_NM_SPARSITY_VALID, 0, 0, 0, 2, 4, 0, 0);
  size_t ext_at = w.n;
  w_ext(&w, 16, 1, 0, 1, 0, 0, 0, 0, 0, 0);
  size_t member_at = w.n;
  w_u8(&w, 0); /* a correction: the shard covers part of the parent */
  w_zero(&w, 15);
  w_finish(&w);
  assert_int_equal(w.n, 61 + 32 + 72 + 20 + 16);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  HurrayOffsets o;
  hurray__descriptor_offsets(&f, &o);
  assert_int_equal(o.shard, shard_at);
  assert_int_equal(o.statistics, stats_at);
  assert_int_equal(o.extension_type, ext_at);
  assert_int_equal(o.composite_member, member_at);
  assert_int_equal(o.trailing, w.n);
  assert_int_equal(o.end, w.n);
  assert_int_equal(o.quantization, shard_at);
  assert_int_equal(f.flags, flags);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* The same sections in flag-bit order (extension before statistics) is not
   * a valid encoding. */
  W x;
  memcpy(&x, &w, sizeof x);
  memcpy(x.b + stats_at, w.b + ext_at, 20);
  memcpy(x.b + stats_at + 20, w.b + stats_at, 72);
  HurrayDescriptor *bad = NULL;
  assert_int_not_equal(hurray_descriptor_decode(x.b, x.n, &bad), HURRAY_OK);
  assert_null(bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantization_framing),
      cmocka_unit_test(test_quantization_subnormal_scale_bits),
      cmocka_unit_test(test_quantization_from_typed_fields),
      cmocka_unit_test(test_shard),
      cmocka_unit_test(test_shard_forbidden_layouts),
      cmocka_unit_test(test_statistics),
      cmocka_unit_test(test_statistics_value_rules),
      cmocka_unit_test(test_statistics_nnz_agreement),
      cmocka_unit_test(test_statistics_float_bits),
      cmocka_unit_test(test_extension_type),
      cmocka_unit_test(test_composite_member),
      cmocka_unit_test(test_section_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
