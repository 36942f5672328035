/* Quantization (hurray_quant_quantize_f32, src/quant/quantize.c) and the
 * dequantizer's fast paths and output types (hurray_quant_dequantize,
 * src/quant/dequant.c); spec: quantization/\*.md. Expected codes come from
 * ggml's Q8_0 rule (values produced by the gguf package's quantizer), from
 * brute-force oracles written here (nearest NF4 level, nearest small-float
 * value with ties to even) and from hand computations in the comments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "hurray/values.h"

#define NB HURRAY_QUANT_NO_BUFFER

/* ---- a tensor under test ----------------------------------------------------------- */

typedef struct T {
  HurrayDescriptorFields f;
  uint64_t shape[4];
  HurrayBufferHandle b[3];
  HurrayQuantization q;
  void *buf[3];
  uint64_t size[3];
  uint64_t count;
} T;

static void t_init(T *t, uint8_t type, uint8_t layout, uint32_t rank, const uint64_t *shape) {
  memset(t, 0, sizeof *t);
  t->f.version_major = 1;
  t->f.type_tag = type;
  t->f.rank = rank;
  memcpy(t->shape, shape, rank * sizeof shape[0]);
  t->f.shape = t->shape;
  t->f.layout.tag = layout;
  t->f.buffers = t->b;
  t->f.quantization = &t->q;
  t->q.version = 1;
  t->count = 1;
  for (uint32_t j = 0; j < rank; j++) t->count *= shape[j];
}

static void s_tensor(T *t) {
  t->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  t->q.u.per_tensor.scale = 1.0f;
}
static void s_channel(T *t, uint32_t axis, bool sym) {
  t->q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  t->q.flags = sym ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
  t->q.u.per_channel.axis = axis;
  t->q.u.per_channel.scale_buffer_index = 1;
  t->q.u.per_channel.zero_point_buffer_index = sym ? NB : 2;
  t->q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
}
static void s_block(T *t, uint32_t axis, uint32_t k, bool sym, uint8_t scale_type) {
  t->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  t->q.flags = sym ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
  t->q.u.per_block.axis = axis;
  t->q.u.per_block.block_size = k;
  t->q.u.per_block.scale_buffer_index = 1;
  t->q.u.per_block.zero_point_buffer_index = sym ? NB : 2;
  t->q.u.per_block.scale_type = scale_type;
}
static void s_nf4(T *t, uint32_t axis, uint32_t k) {
  t->q.scheme = HURRAY_QUANT_NF4;
  t->q.u.nf4.axis = axis;
  t->q.u.nf4.block_size = k;
  t->q.u.nf4.scale_buffer_index = 1;
}
static void s_mxfp(T *t, uint32_t axis, uint32_t k) {
  t->q.scheme = HURRAY_QUANT_MXFP;
  t->q.u.mxfp.axis = axis;
  t->q.u.mxfp.block_size = k;
  t->q.u.mxfp.scale_buffer_index = 1;
}

/* Sizes the buffers from the library's own helpers and allocates them
 * (filled with 0xA5 so that what the quantizer must write is visible). */
static void t_alloc(T *t) {
  uint64_t sb = 0, zb = 0, n = 0, bytes = 0;
  if (t->q.scheme != HURRAY_QUANT_PER_TENSOR_AFFINE)
    assert_int_equal(hurray_quant_param_sizes(&t->f, &sb, &zb), HURRAY_OK);
  assert_int_equal(hurray_quant_storage_count(&t->f, &n), HURRAY_OK);
  assert_int_equal(hurray_buffer_size_bytes(t->f.type_tag, n, &bytes), HURRAY_OK);
  bytes += t->f.byte_offset;
  uint64_t want[3] = {bytes, sb, zb};
  t->f.buffer_count = t->q.scheme == HURRAY_QUANT_PER_TENSOR_AFFINE ? 1 : zb > 0 ? 3 : 2;
  bool asym = (t->q.flags & HURRAY_QUANT_FLAG_SYMMETRIC) == 0;
  if (asym && (t->q.scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE ||
               t->q.scheme == HURRAY_QUANT_PER_BLOCK_AFFINE))
    t->f.buffer_count = 3;
  for (uint32_t i = 0; i < t->f.buffer_count; i++) {
    t->size[i] = want[i];
    t->buf[i] = malloc(want[i] + 1);
    memset(t->buf[i], 0xA5, want[i] + 1);
    t->b[i].byte_size = want[i];
    t->b[i].alignment = 64;
  }
}

static void t_free(T *t) {
  for (int i = 0; i < 3; i++) free(t->buf[i]);
  memset(t->buf, 0, sizeof t->buf);
}

static HurrayStatus t_quant(T *t, const float *x, uint32_t options, HurrayError *e) {
  HurrayQuantization oq;
  hurray_error_clear(e);
  HurrayStatus st =
      hurray_quant_quantize_f32(&t->f, x, t->count, t->buf, t->size, options, &oq, e);
  if (st == HURRAY_OK) {
    assert_int_equal(oq.scheme, t->q.scheme);
    assert_null(oq.raw);
    t->q = oq; /* the per-tensor scale and zero point */
  }
  return st;
}

static void t_quant_ok(T *t, const float *x, uint32_t options) {
  HurrayError e;
  HurrayStatus st = t_quant(t, x, options, &e);
  if (st != HURRAY_OK) fail_msg("quantize: %d %s", st, e.message);
}

static void t_deq(T *t, float *out) {
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus st = hurray_quant_dequantize_f32(&t->f, (const void *const *)t->buf, t->size,
                                                out, t->count, &e);
  if (st != HURRAY_OK) fail_msg("dequantize: %d %s", st, e.message);
}

/* ---- an independent reading of a quantized tensor --------------------------------- */

typedef struct Loc {
  uint64_t storage, entry;
} Loc;

/* Storage element and parameter entry of logical element e (row-major
 * index), from the spec's formulas. */
static Loc t_locate(const T *t, uint64_t e) {
  uint32_t r = t->f.rank;
  uint64_t idx[4] = {0}, rest = e;
  for (uint32_t j = r; j-- > 0;) {
    idx[j] = rest % t->shape[j];
    rest /= t->shape[j];
  }
  bool has_axis = t->q.scheme != HURRAY_QUANT_PER_TENSOR_AFFINE;
  uint32_t axis = t->q.scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE ? t->q.u.per_channel.axis
                  : t->q.scheme == HURRAY_QUANT_PER_BLOCK_AFFINE ? t->q.u.per_block.axis
                                                                 : t->q.u.nf4.axis;
  uint64_t K = t->q.scheme == HURRAY_QUANT_PER_BLOCK_AFFINE ? t->q.u.per_block.block_size
               : t->q.scheme == HURRAY_QUANT_NF4 || t->q.scheme == HURRAY_QUANT_MXFP
                   ? t->q.u.nf4.block_size
                   : 0;
  uint64_t ext[4];
  for (uint32_t j = 0; j < r; j++) {
    ext[j] = t->shape[j];
    bool pads = t->q.scheme == HURRAY_QUANT_PER_BLOCK_AFFINE || t->q.scheme == HURRAY_QUANT_NF4;
    if (has_axis && K > 0 && pads && j == axis) ext[j] = (t->shape[j] + K - 1) / K * K;
  }
  Loc l = {0, 0};
  uint64_t stride = 1;
  for (uint32_t k = 0; k < r; k++) {
    uint32_t j = t->f.layout.tag == HURRAY_LAYOUT_COL_MAJOR ? k : r - 1u - k;
    l.storage += idx[j] * stride;
    stride *= ext[j];
  }
  if (has_axis) {
    if (K == 0) {
      l.entry = idx[axis];
    } else {
      uint64_t outer = 0;
      for (uint32_t j = 0; j < r; j++)
        if (j != axis) outer = outer * t->shape[j] + idx[j];
      l.entry = outer * ((t->shape[axis] + K - 1) / K) + idx[axis] / K;
    }
  }
  return l;
}

static uint64_t t_code(const T *t, uint64_t e) {
  uint64_t c = 0;
  Loc l = t_locate(t, e);
  const uint8_t *d = (const uint8_t *)t->buf[0] + t->f.byte_offset;
  assert_int_equal(
      hurray_value_get_code(t->f.type_tag, d, t->size[0] - t->f.byte_offset, l.storage, &c),
      HURRAY_OK);
  return c;
}

static double t_scale(const T *t, uint64_t entry) {
  const uint8_t *p = (const uint8_t *)t->buf[1];
  double d = 0;
  switch (t->q.scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE: return t->q.u.per_tensor.scale;
    case HURRAY_QUANT_MXFP: return ldexp(1.0, (int)p[entry] - 127);
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      if (t->q.u.per_block.scale_type != HURRAY_QUANT_SCALE_F32) {
        assert_int_equal(hurray_value_get(t->q.u.per_block.scale_type, p, t->size[1], entry, &d,
                                          NULL),
                         HURRAY_OK);
        return d;
      }
      break;
    default:
      break;
  }
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT32, p, t->size[1], entry, &d, NULL),
                   HURRAY_OK);
  return d;
}

static int64_t t_zp(const T *t, uint64_t entry) {
  if (t->q.scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) return t->q.u.per_tensor.zero_point;
  if (t->f.buffer_count < 3) return 0;
  double d = 0;
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_INT32, t->buf[2], t->size[2], entry, &d, NULL),
                   HURRAY_OK);
  return (int64_t)d;
}

/* The value of a code of a signed or unsigned integer type. */
static int64_t int_value(uint8_t type, uint64_t code) {
  double d = 0;
  assert_int_equal(hurray_value_code_to_double(type, code, &d), HURRAY_OK);
  return (int64_t)d;
}

/* The normative value of logical element e, read element by element. */
static float t_ref_value(const T *t, uint64_t e) {
  Loc l = t_locate(t, e);
  uint64_t c = t_code(t, e);
  float s = (float)t_scale(t, l.entry);
  switch (t->q.scheme) {
    case HURRAY_QUANT_NF4: return s * hurray_nf4_table()[c];
    case HURRAY_QUANT_MXFP: {
      double v = 0;
      if (t->f.type_tag == HURRAY_DTYPE_INT8 || t->f.type_tag == HURRAY_DTYPE_INT4)
        return s * (float)int_value(t->f.type_tag, c);
      assert_int_equal(hurray_value_code_to_double(t->f.type_tag, c, &v), HURRAY_OK);
      return s * (float)v;
    }
    default:
      return (float)(int_value(t->f.type_tag, c) - t_zp(t, l.entry)) * s;
  }
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}
static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() % 1000001u) / 1e6f; }

/* ---- ggml's Q8_0 ------------------------------------------------------------------- */

/* gguf.quants.quantize(x, GGMLQuantizationType.Q8_0) of these 64 values:
 * block scales (float16 bits) and codes. Block 1 has amax 2, so 1/d = 63.5
 * and +-1.0 land exactly on +-63.5: ties, rounded away from zero to +-64. */
static const uint32_t k_q80_in_bits[64] = {
    0xC0B7851Fu, 0xC04947AEu, 0xBF0E147Bu, 0x40023D71u, 0x40940000u, 0xC0940000u, 0xC0023D71u,
    0x3F0E147Bu, 0x404947AEu, 0x40B7851Fu, 0xC060F5C3u, 0xBF6CCCCDu, 0x3FD51EB8u, 0x408828F6u,
    0xC09FD70Au, 0xC019EB85u, 0x3E3D70A4u, 0x4031999Au, 0x40ABAE14u, 0xC078A3D7u, 0xBFA5C28Fu,
    0x3FA5C28Fu, 0x4078A3D7u, 0xC0ABAE14u, 0xC031999Au, 0xBE3D70A4u, 0x4019EB85u, 0x409FD70Au,
    0xC08828F6u, 0xBFD51EB8u, 0x3F6CCCCDu, 0x4060F5C3u, 0x00000000u, 0xBF000000u, 0x3F800000u,
    0xBFC00000u, 0x40000000u, 0x80000000u, 0x3F000000u, 0xBF800000u, 0x3B810204u, 0xC0000000u,
    0x00000000u, 0xBF000000u, 0x3F800000u, 0xBFC00000u, 0x40000000u, 0x80000000u, 0x3F000000u,
    0xBF800000u, 0x3FC00000u, 0xC0000000u, 0x00000000u, 0xBF000000u, 0x3F800000u, 0xBFC00000u,
    0x40000000u, 0x80000000u, 0x3F000000u, 0xBF800000u, 0x3FC00000u, 0xC0000000u, 0x00000000u,
    0xBF000000u};
static const uint16_t k_q80_scale[2] = {0x29C8, 0x2408};
static const int8_t k_q80_codes[64] = {
    -127, -70, -12, 45, 102, -102, -45, 12, 70, 127, -78, -20, 37, 94, -111, -53,
    4,    61,  119, -86, -29, 29, 86, -119, -61, -4, 53, 111, -94, -37, 20, 78,
    0,    -32, 64,  -95, 127, 0, 32, -64, 0, -127, 0, -32, 64, -95, 127, 0,
    32,   -64, 95,  -127, 0, -32, 64, -95, 127, 0, 32, -64, 95, -127, 0, -32};

static void test_q8_0_exact(void **state) {
  (void)state;
  float x[64];
  for (int i = 0; i < 64; i++) memcpy(&x[i], &k_q80_in_bits[i], 4);
  /* [1, 64] along the last axis (the block path) and [64, 1] along axis 0
   * (the general path): the same blocks in the same logical order. */
  static const uint64_t s_row[2] = {1, 64}, s_col[2] = {64, 1};
  for (int path = 0; path < 2; path++) {
    T t;
    t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, path == 0 ? s_row : s_col);
    s_block(&t, path == 0 ? 1 : 0, 32, true, HURRAY_QUANT_SCALE_F16);
    t_alloc(&t);
    t_quant_ok(&t, x, 0);
    const uint8_t *codes = t.buf[0], *sc = t.buf[1];
    for (int i = 0; i < 64; i++)
      if ((int8_t)codes[i] != k_q80_codes[i])
        fail_msg("path %d code %d: %d, gguf %d", path, i, (int8_t)codes[i], k_q80_codes[i]);
    for (int b = 0; b < 2; b++)
      assert_int_equal(sc[2 * b] | (sc[2 * b + 1] << 8), k_q80_scale[b]);
    t_free(&t);
  }
}

/* ---- round trips within half a step ------------------------------------------------- */

static double scale_eps(const T *t) {
  if (t->q.scheme != HURRAY_QUANT_PER_BLOCK_AFFINE) return 0;
  switch (t->q.u.per_block.scale_type) {
    case HURRAY_QUANT_SCALE_F16: return 0x1p-11;
    case HURRAY_QUANT_SCALE_BF16: return 0x1p-8;
    default: return 0;
  }
}

/* |x - dequant| <= s / 2, plus the scale's own rounding times |q - z| and
 * float32's resolution over the code range (2^bits codes, at most 2^-23 of
 * a step each: what makes 32-bit storage coarser than half a step), and the
 * library's dequantization equals the reference. */
static void check_affine_round_trip(T *t, const float *x, float *out) {
  t_deq(t, out);
  double eps = scale_eps(t);
  double levels = ldexp(1.0, (int)hurray_dtype_info(t->f.type_tag)->bit_width);
  for (uint64_t e = 0; e < t->count; e++) {
    float ref = t_ref_value(t, e);
    if (memcmp(&ref, &out[e], 4) != 0)
      fail_msg("element %llu: dequantize %.9g, reference %.9g", (unsigned long long)e,
               (double)out[e], (double)ref);
    Loc l = t_locate(t, e);
    double s = t_scale(t, l.entry);
    int64_t q = int_value(t->f.type_tag, t_code(t, e)) - t_zp(t, l.entry);
    /* codes come from the float32 scale before its rounding (ggml's rule),
     * so the half step is that scale's: s (1 + eps) / 2 at most */
    double bound = s * (0.5 * (1.0 + eps) + levels * 0x1p-23) + fabs((double)q) * s * eps +
                   fabs((double)x[e]) * 1e-6;
    if (fabs((double)x[e] - (double)out[e]) > bound)
      fail_msg("type 0x%02X scheme %u layout %u flags %u element %llu (entry %llu): x %.9g "
               "back %.9g, step %.9g (q - z = %lld)",
               t->f.type_tag, t->q.scheme, t->f.layout.tag, t->q.flags, (unsigned long long)e,
               (unsigned long long)l.entry, (double)x[e], (double)out[e], s, (long long)q);
  }
}

static void test_round_trip_affine(void **state) {
  (void)state;
  static const uint8_t types[] = {HURRAY_DTYPE_INT8,  HURRAY_DTYPE_UINT8, HURRAY_DTYPE_INT4,
                                  HURRAY_DTYPE_UINT4, HURRAY_DTYPE_INT2,  HURRAY_DTYPE_UINT2,
                                  HURRAY_DTYPE_INT16, HURRAY_DTYPE_UINT32};
  static const uint8_t scales[] = {HURRAY_QUANT_SCALE_F32, HURRAY_QUANT_SCALE_F16,
                                   HURRAY_QUANT_SCALE_BF16};
  static const uint64_t shape[3] = {3, 5, 37}; /* 37: partial blocks of 4, 8 and 32 */
  enum { N = 3 * 5 * 37 };
  float x[N], out[N];
  for (size_t ti = 0; ti < sizeof types; ti++) {
    uint8_t type = types[ti];
    bool wide = type == HURRAY_DTYPE_INT16 || type == HURRAY_DTYPE_UINT32;
    for (int layout = 0; layout < 2; layout++) {
      uint8_t lt = layout == 0 ? HURRAY_LAYOUT_ROW_MAJOR : HURRAY_LAYOUT_COL_MAJOR;
      for (int sym = 0; sym < 2; sym++) {
        bool unsigned_sym = sym && (type == HURRAY_DTYPE_UINT8 || type == HURRAY_DTYPE_UINT4 ||
                                    type == HURRAY_DTYPE_UINT2 || type == HURRAY_DTYPE_UINT32);
        for (int i = 0; i < N; i++) x[i] = unsigned_sym ? frand(0.0f, 3.0f) : frand(-3.0f, 2.0f);
        /* per-tensor, per-channel on each axis, per-block on each axis */
        for (int scheme = 0; scheme < 1 + 3 + (wide ? 0 : 3 * 3 * 3); scheme++) {
          T t;
          t_init(&t, type, lt, 3, shape);
          if (scheme == 0) {
            s_tensor(&t);
          } else if (scheme < 4) {
            s_channel(&t, (uint32_t)(scheme - 1), sym != 0);
          } else {
            int k = scheme - 4; /* axis (3) x block (3) x scale type (3) */
            uint32_t axis = (uint32_t)(k % 3), blocks[3] = {2, 4, 32};
            uint32_t bs = blocks[(k / 3) % 3];
            if (bs > shape[axis]) bs = 2;
            s_block(&t, axis, bs, sym != 0, scales[k / 9]);
          }
          t_alloc(&t);
          t_quant_ok(&t, x, sym ? HURRAY_QUANTIZE_SYMMETRIC : 0);
          check_affine_round_trip(&t, x, out);
          t_free(&t);
        }
      }
    }
  }
}

/* The row-major block path and the general walk give the same codes for
 * the same logical tensor (column-major takes the walk). */
static void test_layouts_agree(void **state) {
  (void)state;
  static const uint64_t shape[2] = {6, 48};
  float x[6 * 48], a[6 * 48], b[6 * 48];
  for (int i = 0; i < 6 * 48; i++) x[i] = frand(-5.0f, 7.0f);
  for (int scheme = 0; scheme < 3; scheme++) {
    T r, c;
    uint8_t type = scheme == 1 ? HURRAY_DTYPE_UINT4 : scheme == 2 ? HURRAY_DTYPE_FLOAT4_E2M1
                                                                  : HURRAY_DTYPE_UINT4;
    t_init(&r, type, HURRAY_LAYOUT_ROW_MAJOR, 2, shape);
    t_init(&c, type, HURRAY_LAYOUT_COL_MAJOR, 2, shape);
    if (scheme == 0) {
      s_block(&r, 1, 32, false, HURRAY_QUANT_SCALE_F16);
      s_block(&c, 1, 32, false, HURRAY_QUANT_SCALE_F16);
    } else if (scheme == 1) {
      s_nf4(&r, 1, 16);
      s_nf4(&c, 1, 16);
    } else {
      s_mxfp(&r, 1, 16);
      s_mxfp(&c, 1, 16);
    }
    t_alloc(&r);
    t_alloc(&c);
    t_quant_ok(&r, x, 0);
    t_quant_ok(&c, x, 0);
    t_deq(&r, a);
    t_deq(&c, b);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(r.buf[1], c.buf[1], r.size[1]);
    for (uint64_t e = 0; e < r.count; e++) {
      assert_int_equal(t_code(&r, e), t_code(&c, e));
      float ref = t_ref_value(&r, e);
      assert_memory_equal(&ref, &a[e], 4);
    }
    t_free(&r);
    t_free(&c);
  }
}

/* ---- padding ----------------------------------------------------------------------- */

static void test_partial_block_padding(void **state) {
  (void)state;
  /* uint4 asymmetric [3, 40], blocks of 32 along axis 1: storage rows of 64
   * codes (32 bytes); codes 40 .. 63 are padding, zero bytes, although the
   * code of 0.0 is the zero point (non-zero for data in [1, 5]). */
  static const uint64_t s[2] = {3, 40};
  float x[120];
  for (int i = 0; i < 120; i++) x[i] = frand(1.0f, 5.0f);
  T t;
  t_init(&t, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, false, HURRAY_QUANT_SCALE_F32);
  t_alloc(&t);
  assert_int_equal(t.size[0], 3 * 32);
  t_quant_ok(&t, x, 0);
  const uint8_t *d = t.buf[0];
  for (int row = 0; row < 3; row++)
    for (int k = 20; k < 32; k++) assert_int_equal(d[row * 32 + k], 0);
  /* the range includes 0, so z = 0 here and x's codes are at most 15 */
  assert_int_equal(t_zp(&t, 1), 0);
  float out[120];
  check_affine_round_trip(&t, x, out);
  t_free(&t);

  /* int8 [5, 3] along axis 0 with blocks of 4: storage [8, 3]; rows 5..7 are
   * padding. Column-major: columns of 8 with 3 padding codes each. */
  static const uint64_t s2[2] = {5, 3};
  for (int l = 0; l < 2; l++) {
    t_init(&t, HURRAY_DTYPE_INT8, l == 0 ? HURRAY_LAYOUT_ROW_MAJOR : HURRAY_LAYOUT_COL_MAJOR, 2,
           s2);
    s_block(&t, 0, 4, false, HURRAY_QUANT_SCALE_BF16);
    t_alloc(&t);
    assert_int_equal(t.size[0], 24);
    t_quant_ok(&t, x, 0);
    d = t.buf[0];
    for (int k = 0; k < 24; k++) {
      bool pad = l == 0 ? k >= 15 : k % 8 >= 5;
      if (pad) assert_int_equal(d[k], 0);
    }
    check_affine_round_trip(&t, x, out);
    t_free(&t);
  }

  /* int4 with an odd row: [1, 5] symmetric, block 4: 2 blocks, 8 codes in 4
   * bytes; x = [7, -7, 3.5, 0, 1] -> block 0 amax 7, s = 1: codes 7 -7 4 0
   * (3.5 rounds away from zero); block 1 amax 1, s = 1/7: code 7. */
  static const uint64_t s3[2] = {1, 5};
  const float x3[5] = {7, -7, 3.5f, 0, 1};
  t_init(&t, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s3);
  s_block(&t, 1, 4, true, HURRAY_QUANT_SCALE_F32);
  t_alloc(&t);
  t_quant_ok(&t, x3, 0);
  d = t.buf[0];
  assert_int_equal(d[0], 0x97); /* 7 | (-7 & 15) << 4 */
  assert_int_equal(d[1], 0x04);
  assert_int_equal(d[2], 0x07);
  assert_int_equal(d[3], 0x00);
  assert_true(t_scale(&t, 0) == 1.0);
  assert_true(t_scale(&t, 1) == (double)(1.0f / 7.0f));
  t_free(&t);
}

/* ---- small exact vectors: asymmetric, per-tensor, per-channel ------------------------ */

static void test_exact_affine(void **state) {
  (void)state;
  /* uint8 per-tensor asymmetric over [-1, 3]: s = 4/255, z = 0 - round(-1 /
   * s) = round(63.75) = 64; x = 3 -> round(191.25) + 64 = 255; x = 0 -> 64;
   * x = -1 -> 0; x = 1 -> round(63.75) + 64 = 128. */
  static const uint64_t s4[1] = {4};
  const float x[4] = {-1, 0, 1, 3};
  T t;
  t_init(&t, HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1, s4);
  s_tensor(&t);
  t.q.u.per_tensor.scale = 0.0f; /* ignored: it is what the quantizer computes */
  t_alloc(&t);
  t_quant_ok(&t, x, 0);
  assert_true(t.q.u.per_tensor.scale == 4.0f / 255.0f);
  assert_int_equal(t.q.u.per_tensor.zero_point, 64);
  const uint8_t want[4] = {0, 64, 128, 255};
  assert_memory_equal(t.buf[0], want, 4);
  /* symmetric: s = 3/127 over int8 (amax 3) */
  t_free(&t);
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 1, s4);
  s_tensor(&t);
  t_alloc(&t);
  t_quant_ok(&t, x, HURRAY_QUANTIZE_SYMMETRIC);
  assert_true(t.q.u.per_tensor.scale == 3.0f / 127.0f);
  assert_int_equal(t.q.u.per_tensor.zero_point, 0);
  const int8_t want8[4] = {-42, 0, 42, 127}; /* 1 / (3/127) = 42.33 */
  assert_memory_equal(t.buf[0], want8, 4);
  t_free(&t);

  /* int4 per-channel along axis 0 of [2, 3], asymmetric: channel 0 over
   * [0, 1.875] (the range always holds 0): s = 1/8, z = -8 - round(0) = -8;
   * channel 1 over [-3.75, 0]: s = 1/4, z = -8 - round(-15) = 7. */
  static const uint64_t s23[2] = {2, 3};
  const float xc[6] = {0, 0.0625f, 1.875f, -3.75f, -1.875f, 0};
  t_init(&t, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s23);
  s_channel(&t, 0, false);
  t_alloc(&t);
  t_quant_ok(&t, xc, 0);
  assert_true(t_scale(&t, 0) == 0.125);
  assert_true(t_scale(&t, 1) == 0.25);
  assert_int_equal(t_zp(&t, 0), -8);
  assert_int_equal(t_zp(&t, 1), 7);
  /* codes: ch0 -8, round(0.5) - 8 = -7 (a tie, away from zero), 15 - 8 = 7;
   * ch1 -15 + 7 = -8, round(-7.5) + 7 = -1 (a tie), 0 + 7 = 7 */
  const int64_t wantc[6] = {-8, -7, 7, -8, -1, 7};
  for (int e = 0; e < 6; e++)
    assert_int_equal(int_value(HURRAY_DTYPE_INT4, t_code(&t, (uint64_t)e)), wantc[e]);
  t_free(&t);
}

/* ---- NF4 ---------------------------------------------------------------------------- */

/* The nearest NF4 level of v (ties to the lower code). */
static uint32_t nf4_oracle(float v) {
  const float *t = hurray_nf4_table();
  uint32_t best = 0;
  for (uint32_t k = 1; k < 16; k++)
    if (fabsf(v - t[k]) < fabsf(v - t[best])) best = k;
  return best;
}

static void test_nf4(void **state) {
  (void)state;
  static const uint64_t s[2] = {3, 70}; /* blocks of 16: 5 per row, the last partial */
  float x[210], out[210];
  for (int i = 0; i < 210; i++) x[i] = frand(-2.0f, 2.0f);
  for (int i = 140; i < 210; i++) x[i] = 0.0f; /* row 2: all zero */
  /* exact levels: x = 2 * nf4[k] in a block of absmax 2 */
  for (int k = 0; k < 16; k++) x[16 + k] = 2.0f * hurray_nf4_table()[k];
  T t;
  t_init(&t, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_nf4(&t, 1, 16);
  t_alloc(&t);
  t_quant_ok(&t, x, 0);
  t_deq(&t, out);
  for (uint64_t e = 0; e < t.count; e++) {
    Loc l = t_locate(&t, e);
    float sc = (float)t_scale(&t, l.entry);
    uint32_t want = sc == 0.0f ? 7u : nf4_oracle(x[e] / sc);
    if (t_code(&t, e) != want)
      fail_msg("element %llu: code %llu, nearest level %u", (unsigned long long)e,
               (unsigned long long)t_code(&t, e), want);
    float ref = t_ref_value(&t, e);
    assert_memory_equal(&ref, &out[e], 4);
  }
  for (int k = 0; k < 16; k++) assert_int_equal(t_code(&t, (uint64_t)(16 + k)), (uint64_t)k);
  assert_true(t_scale(&t, 1) == 2.0);
  assert_true(t_scale(&t, 10) == 0.0); /* all-zero block: absmax 0, allowed by NF4 */
  /* padding of the partial last block (6 codes of 16) is zero */
  const uint8_t *d = t.buf[0];
  for (int row = 0; row < 3; row++)
    for (int k = 3; k < 8; k++) assert_int_equal(d[row * 40 + 32 + k], 0);
  t_free(&t);
}

/* ---- MXFP --------------------------------------------------------------------------- */

/* The code of the value nearest to v among the finite values of `type`,
 * after saturation to the largest one; ties to the even code (even
 * mantissa); the sign of v kept on zero. */
static uint64_t mini_oracle(uint8_t type, double v) {
  const HurrayDtypeInfo *info = hurray_dtype_info(type);
  uint32_t n = 1u << info->bit_width;
  double maxv = 0;
  for (uint32_t c = 0; c < n; c++) {
    double d = 0;
    if (hurray_value_code_to_double(type, c, &d) == HURRAY_OK && isfinite(d) && d > maxv)
      maxv = d;
  }
  double a = fabs(v) > maxv ? maxv : fabs(v);
  uint32_t best = 0;
  double bd = INFINITY;
  for (uint32_t c = 0; c < n / 2; c++) { /* non-negative codes */
    double d = 0;
    if (hurray_value_code_to_double(type, c, &d) != HURRAY_OK || !isfinite(d)) continue;
    double dist = fabs(a - d);
    if (dist < bd || (dist == bd && (c & 1u) == 0)) {
      bd = dist;
      best = c;
    }
  }
  return signbit(v) ? best | (n / 2) : best;
}

static void test_mxfp(void **state) {
  (void)state;
  static const uint8_t types[] = {HURRAY_DTYPE_FLOAT8_E4M3, HURRAY_DTYPE_FLOAT8_E5M2,
                                  HURRAY_DTYPE_FLOAT4_E2M1, HURRAY_DTYPE_FLOAT6_E2M3,
                                  HURRAY_DTYPE_FLOAT6_E3M2, HURRAY_DTYPE_INT8,
                                  HURRAY_DTYPE_INT4};
  static const int emax[] = {8, 15, 2, 2, 4, 6, 2};
  static const uint64_t s[2] = {2, 96}; /* 3 blocks of 32 per row */
  float x[192];
  for (size_t ti = 0; ti < sizeof types; ti++) {
    for (int i = 0; i < 192; i++) x[i] = frand(-3.0f, 3.0f);
    for (int i = 32; i < 64; i++) x[i] = 0.0f;           /* block 1: zero */
    for (int i = 64; i < 96; i++) x[i] *= 1e-39f;         /* block 2: tiny (exponent clamps) */
    x[96] = 500.0f;                                       /* block 3: a large amax */
    x[97] = -0.0f;
    x[98] = 1e-30f;
    for (int layout = 0; layout < 2; layout++) {
      T t;
      t_init(&t, types[ti], layout == 0 ? HURRAY_LAYOUT_ROW_MAJOR : HURRAY_LAYOUT_COL_MAJOR, 2,
             s);
      s_mxfp(&t, 1, 32);
      t_alloc(&t);
      t_quant_ok(&t, x, 0);
      const uint8_t *sc = t.buf[1];
      for (int b = 0; b < 6; b++) {
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[32 * b + i]));
        int want = 127;
        if (amax > 0) {
          int ex;
          (void)frexpf(amax, &ex);
          want = ex - 1 - emax[ti] + 127;
          want = want < 1 ? 1 : want;
        }
        assert_int_equal(sc[b], want);
      }
      assert_int_equal(sc[1], 127);
      assert_int_equal(sc[2], 1);
      bool is_int = types[ti] == HURRAY_DTYPE_INT8 || types[ti] == HURRAY_DTYPE_INT4;
      for (uint64_t e = 0; e < t.count; e++) {
        Loc l = t_locate(&t, e);
        double v = (double)x[e] * ldexp(1.0, 127 - (int)sc[l.entry]);
        uint64_t want;
        if (is_int) {
          int64_t lim = types[ti] == HURRAY_DTYPE_INT8 ? 127 : 7;
          double r = nearbyint(v); /* ties to even */
          r = r > (double)lim ? (double)lim : r < (double)(-lim - 1) ? (double)(-lim - 1) : r;
          want = (uint64_t)(int64_t)r & (types[ti] == HURRAY_DTYPE_INT8 ? 0xFFu : 0xFu);
        } else {
          want = mini_oracle(types[ti], v);
        }
        if (t_code(&t, e) != want)
          fail_msg("type 0x%02X element %llu (x %.9g, scaled %.9g): code 0x%llX, oracle 0x%llX",
                   types[ti], (unsigned long long)e, (double)x[e], v,
                   (unsigned long long)t_code(&t, e), (unsigned long long)want);
      }
      /* saturation: 500 / 2^(8 - 8) in e4m3 is 448 (code 0x7E) */
      if (types[ti] == HURRAY_DTYPE_FLOAT8_E4M3) assert_int_equal(t_code(&t, 96), 0x7E);
      float out[192];
      t_deq(&t, out);
      for (uint64_t e = 0; e < t.count; e++) {
        float ref = t_ref_value(&t, e);
        assert_memory_equal(&ref, &out[e], 4);
      }
      t_free(&t);
    }
  }
}

/* ---- refused inputs ------------------------------------------------------------------- */

static void expect_fail(T *t, const float *x, uint32_t options, HurrayStatus want,
                        const char *field) {
  HurrayError e;
  HurrayStatus st = t_quant(t, x, options, &e);
  if (st != want) fail_msg("expected %d, got %d (%s)", want, st, e.message);
  if (field != NULL && strcmp(e.field, field) != 0)
    fail_msg("expected field %s, got %s (%s)", field, e.field, e.message);
}

static void test_refused_values(void **state) {
  (void)state;
  static const uint64_t s[2] = {2, 32};
  float x[64];
  const float bad[3] = {NAN, INFINITY, -INFINITY};
  for (int scheme = 0; scheme < 6; scheme++) {
    for (int k = 0; k < 3; k++) {
      for (int i = 0; i < 64; i++) x[i] = frand(-1.0f, 1.0f);
      x[37] = bad[k];
      T t;
      t_init(&t, scheme == 3 ? HURRAY_DTYPE_UINT4 : scheme == 4 ? HURRAY_DTYPE_FLOAT8_E5M2
                                                               : HURRAY_DTYPE_INT8,
             HURRAY_LAYOUT_ROW_MAJOR, 2, s);
      switch (scheme) {
        case 0: s_tensor(&t); break;
        case 1: s_channel(&t, 1, true); break;
        case 2: s_block(&t, 1, 16, false, HURRAY_QUANT_SCALE_F16); break; /* block path */
        case 3: s_nf4(&t, 1, 16); break;
        case 4: s_mxfp(&t, 1, 32); break; /* e5m2 has infinities: refused all the same */
        default: s_block(&t, 0, 2, true, HURRAY_QUANT_SCALE_F32); break; /* general path */
      }
      t_alloc(&t);
      expect_fail(&t, x, 0, HURRAY_ERR_INVALID_ARGUMENT, "in[37]");
      t_free(&t);
    }
  }
  /* symmetric unsigned: no negative values (-0.0 is fine) */
  for (int path = 0; path < 2; path++) {
    for (int i = 0; i < 64; i++) x[i] = frand(0.0f, 1.0f);
    x[3] = -0.0f;
    x[50] = -0.25f;
    T t;
    t_init(&t, HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
    if (path == 0)
      s_block(&t, 1, 32, true, HURRAY_QUANT_SCALE_F32);
    else
      s_channel(&t, 0, true);
    t_alloc(&t);
    expect_fail(&t, x, 0, HURRAY_ERR_INVALID_ARGUMENT, "in[50]");
    x[50] = 0.25f;
    t_quant_ok(&t, x, 0);
    t_free(&t);
  }
}

/* ---- zero, tiny and huge blocks -------------------------------------------------------- */

static void test_zero_tiny_huge(void **state) {
  (void)state;
  static const uint64_t s[2] = {1, 96};
  float x[96];
  for (int i = 0; i < 96; i++) x[i] = 0.0f;
  for (int i = 32; i < 64; i++) x[i] = frand(-1e-9f, 1e-9f); /* f16 scale: amax/127 < 2^-25 */
  x[40] = 1e-9f;
  for (int i = 64; i < 96; i++) x[i] = frand(-1.0f, 1.0f);
  for (int k = 0; k < 2; k++) {
    T t;
    t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
    s_block(&t, 1, 32, k == 0, HURRAY_QUANT_SCALE_F16);
    t_alloc(&t);
    t_quant_ok(&t, x, 0);
    const uint8_t *d = t.buf[0], *sc = t.buf[1];
    /* blocks 0 (zero) and 1 (below float16's resolution): scale 1, codes 0 */
    for (int b = 0; b < 2; b++) assert_int_equal(sc[2 * b] | (sc[2 * b + 1] << 8), 0x3C00);
    for (int i = 0; i < 64; i++) assert_int_equal(d[i], 0);
    if (k == 1) assert_int_equal(t_zp(&t, 0), 0);
    float out[96];
    t_deq(&t, out);
    for (int i = 0; i < 64; i++) assert_true(out[i] == 0.0f);
    t_free(&t);
  }
  /* the same tiny block with float32 scales is kept */
  T t;
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, true, HURRAY_QUANT_SCALE_F32);
  t_alloc(&t);
  t_quant_ok(&t, x, 0);
  assert_true(t_scale(&t, 1) == (double)(1e-9f / 127.0f));
  t_free(&t);
  /* float32 scales of subnormal size: 1/s overflows, the block is flushed */
  for (int i = 0; i < 96; i++) x[i] = i < 32 ? 1e-38f : 0.0f;
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, true, HURRAY_QUANT_SCALE_F32);
  t_alloc(&t);
  t_quant_ok(&t, x, 0);
  assert_true(t_scale(&t, 0) == 1.0);
  assert_int_equal(((uint8_t *)t.buf[0])[0], 0);
  t_free(&t);

  /* a float16 scale beyond 65504 (amax 1e7 / 127) is refused; bfloat16 holds it */
  for (int i = 0; i < 96; i++) x[i] = i == 70 ? 1e7f : 1.0f;
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, true, HURRAY_QUANT_SCALE_F16);
  t_alloc(&t);
  expect_fail(&t, x, 0, HURRAY_ERR_INVALID_ARGUMENT, "quantization.scale[2]");
  t.q.u.per_block.scale_type = HURRAY_QUANT_SCALE_BF16;
  t_free(&t);
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, true, HURRAY_QUANT_SCALE_BF16);
  t_alloc(&t);
  t_quant_ok(&t, x, 0);
  t_free(&t);
  /* an asymmetric range wider than float32 */
  x[5] = -3e38f;
  x[6] = 3e38f;
  t_init(&t, HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, false, HURRAY_QUANT_SCALE_F32);
  t_alloc(&t);
  expect_fail(&t, x, 0, HURRAY_ERR_INVALID_ARGUMENT, "quantization.scale[0]");
  t_free(&t);
}

/* ---- per-tensor and per-channel details, empty tensors ----------------------------------- */

static void test_tensor_channel_details(void **state) {
  (void)state;
  static const uint64_t s[2] = {2, 2};
  const float x[4] = {1, 2, 3, 4};
  T t;
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_tensor(&t);
  t_alloc(&t);
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_quant_quantize_f32(&t.f, x, 4, t.buf, t.size, 0, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "out_quant");
  t_free(&t);
  /* an empty tensor still has one scale per channel: 1.0, zero point 0 */
  static const uint64_t s0[2] = {0, 3};
  t_init(&t, HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s0);
  s_channel(&t, 1, false);
  t_alloc(&t);
  assert_int_equal(t.size[1], 12);
  t_quant_ok(&t, NULL, 0);
  for (uint64_t c = 0; c < 3; c++) {
    assert_true(t_scale(&t, c) == 1.0);
    assert_int_equal(t_zp(&t, c), 0);
  }
  t_free(&t);
  /* rank 0 per-tensor */
  const float one = -2.5f;
  t_init(&t, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 0, s);
  s_tensor(&t);
  t_alloc(&t);
  t_quant_ok(&t, &one, HURRAY_QUANTIZE_SYMMETRIC);
  assert_true(t.q.u.per_tensor.scale == 2.5f / 7.0f);
  assert_int_equal(((uint8_t *)t.buf[0])[0], 0x09); /* -7 */
  t_free(&t);
}

/* ---- argument errors -------------------------------------------------------------------- */

static void test_arguments(void **state) {
  (void)state;
  static const uint64_t s[2] = {2, 32};
  float x[64];
  for (int i = 0; i < 64; i++) x[i] = (float)i;
  T t;
  t_init(&t, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, true, HURRAY_QUANT_SCALE_F16);
  t_alloc(&t);
  HurrayError e;
  HurrayQuantization oq;
  expect_fail(&t, x, 0x2u, HURRAY_ERR_INVALID_ARGUMENT, "options");
  hurray_error_clear(&e);
  assert_int_equal(hurray_quant_quantize_f32(&t.f, x, 63, t.buf, t.size, 0, &oq, &e),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_string_equal(e.field, "in");
  assert_int_equal(hurray_quant_quantize_f32(NULL, x, 64, t.buf, t.size, 0, &oq, NULL),
                   HURRAY_ERR_NULL_POINTER);
  t.size[0]--;
  expect_fail(&t, x, 0, HURRAY_ERR_BUFFER_SIZE, "buffers[0]");
  t.size[0]++;
  t.size[1]--;
  expect_fail(&t, x, 0, HURRAY_ERR_BUFFER_SIZE, "buffers[1]");
  t.size[1]++;
  /* descriptor rules: the declared buffer sizes, the block size */
  t.b[1].byte_size--;
  expect_fail(&t, x, 0, HURRAY_ERR_BUFFER_SIZE, NULL);
  t.b[1].byte_size++;
  t.q.u.per_block.block_size = 64; /* > shape[1] */
  expect_fail(&t, x, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
  t.q.u.per_block.block_size = 32;
  t.f.layout.tag = HURRAY_LAYOUT_STRIDED;
  expect_fail(&t, x, 0, HURRAY_ERR_UNSUPPORTED, "layout");
  t.f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  t.f.type_tag = HURRAY_DTYPE_FLOAT32;
  expect_fail(&t, x, 0, HURRAY_ERR_INVALID_QUANTIZATION, "type_tag");
  t.f.type_tag = HURRAY_DTYPE_INT4;
  t.f.quantization = NULL;
  expect_fail(&t, x, 0, HURRAY_ERR_INVALID_ARGUMENT, "quantization");
  t.f.quantization = &t.q;
  t.q.scheme = 0xF3;
  expect_fail(&t, x, 0, HURRAY_ERR_UNSUPPORTED, "quantization.scheme_tag");
  t_free(&t);
  /* MXFP refuses a partial block */
  static const uint64_t s40[2] = {1, 40};
  t_init(&t, HURRAY_DTYPE_FLOAT4_E2M1, HURRAY_LAYOUT_ROW_MAJOR, 2, s40);
  s_mxfp(&t, 1, 32);
  t.f.buffer_count = 2;
  t.b[0].byte_size = 20;
  t.b[1].byte_size = 2;
  t.size[0] = 20;
  t.size[1] = 2;
  uint8_t b0[20], b1[2];
  t.buf[0] = b0;
  t.buf[1] = b1;
  expect_fail(&t, x, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
}

static void test_workspace_out_of_memory(void **state) {
  (void)state;
  /* the general path needs one entry of workspace per scale: per-channel */
  static const uint64_t s[2] = {4, 8};
  float x[32];
  for (int i = 0; i < 32; i++) x[i] = (float)i;
  T t;
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_channel(&t, 1, true);
  t_alloc(&t);
  tu_alloc_install();
  tu_fail_alloc_after(0);
  expect_fail(&t, x, 0, HURRAY_ERR_OUT_OF_MEMORY, NULL);
  tu_alloc_reset();
  t_quant_ok(&t, x, 0);
  assert_int_equal(tu_alloc_live(), 0);
  t_free(&t);
}

/* ---- dequantization: output types, fast paths against the reference -------------------- */

static void test_dequantize_types(void **state) {
  (void)state;
  static const uint64_t s[2] = {4, 64};
  float x[256], f32[256];
  for (int i = 0; i < 256; i++) x[i] = frand(-1000.0f, 1000.0f);
  x[7] = 70000.0f; /* beyond float16: an infinity there */
  T t;
  t_init(&t, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s);
  s_block(&t, 1, 32, false, HURRAY_QUANT_SCALE_F32);
  t_alloc(&t);
  t_quant_ok(&t, x, 0);
  t_deq(&t, f32);
  double f64[256];
  uint16_t h[256];
  HurrayError e;
  const void *const *bufs = (const void *const *)t.buf;
  assert_int_equal(hurray_quant_dequantize(&t.f, bufs, t.size, HURRAY_DTYPE_FLOAT64, f64, 256, &e),
                   HURRAY_OK);
  for (int i = 0; i < 256; i++) assert_true(f64[i] == (double)f32[i]);
  assert_int_equal(hurray_quant_dequantize(&t.f, bufs, t.size, HURRAY_DTYPE_FLOAT16, h, 256, &e),
                   HURRAY_OK);
  for (int i = 0; i < 256; i++) {
    /* float16 of the float32 value, round to nearest even (checked by value) */
    double back = 0;
    assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT16, h[i], &back), HURRAY_OK);
    double lo = 0, hi = 0;
    assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT16, (uint16_t)(h[i] - 1), &lo),
                     HURRAY_OK);
    assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT16, (uint16_t)(h[i] + 1), &hi),
                     HURRAY_OK);
    if (isinf(back)) {
      assert_true(fabs((double)f32[i]) >= 65520.0);
      continue;
    }
    double v = (double)f32[i];
    if ((!isnan(lo) && fabs(v - back) > fabs(v - lo)) ||
        (!isnan(hi) && fabs(v - back) > fabs(v - hi)))
      fail_msg("element %d: %.9g became float16 0x%04X (%.9g)", i, v, h[i], back);
  }
  assert_true(h[7] == 0x7C00);
  assert_int_equal(hurray_quant_dequantize(&t.f, bufs, t.size, HURRAY_DTYPE_BFLOAT16, h, 256, &e),
                   HURRAY_OK);
  for (int i = 0; i < 256; i++) {
    uint32_t b;
    memcpy(&b, &f32[i], 4);
    uint32_t r = (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
    assert_int_equal(h[i], r);
  }
  hurray_error_clear(&e);
  assert_int_equal(hurray_quant_dequantize(&t.f, bufs, t.size, HURRAY_DTYPE_INT8, h, 256, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "out_type");
  t_free(&t);
}

/* Random (valid) codes and parameters of every scheme and layout: the
 * library's dequantization equals the element-by-element reference. */
static void test_dequantize_reference(void **state) {
  (void)state;
  static const uint64_t shapes[3][3] = {{3, 5, 64}, {2, 64, 3}, {70, 2, 33}};
  static const uint8_t types[] = {HURRAY_DTYPE_INT4, HURRAY_DTYPE_UINT4, HURRAY_DTYPE_INT8,
                                  HURRAY_DTYPE_UINT2, HURRAY_DTYPE_FLOAT6_E3M2};
  enum { N = 70 * 2 * 33 };
  static float out[N];
  for (int si = 0; si < 3; si++) {
    for (size_t ti = 0; ti < sizeof types; ti++) {
      for (int layout = 0; layout < 2; layout++) {
        for (uint32_t axis = 0; axis < 3; axis++) {
          T t;
          t_init(&t, types[ti], layout ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR, 3,
                 shapes[si]);
          if (types[ti] == HURRAY_DTYPE_FLOAT6_E3M2) {
            if (shapes[si][axis] % 32 != 0) continue;
            s_mxfp(&t, axis, 32);
          } else if (types[ti] == HURRAY_DTYPE_UINT4 && axis == 1) {
            if (shapes[si][axis] < 8) continue;
            s_nf4(&t, axis, 8);
          } else {
            s_block(&t, axis, shapes[si][axis] >= 32 ? 32 : 2, ti % 2 == 0,
                    (uint8_t)(1u + ((uint32_t)si + axis) % 3u));
          }
          t_alloc(&t);
          /* random codes and valid parameters */
          uint8_t *d = t.buf[0];
          for (uint64_t i = 0; i < t.size[0]; i++) d[i] = (uint8_t)rnd();
          uint64_t entries = t.q.scheme == HURRAY_QUANT_MXFP ? t.size[1]
                             : t.q.scheme == HURRAY_QUANT_NF4 ? t.size[1] / 4
                             : t.q.u.per_block.scale_type == HURRAY_QUANT_SCALE_F32
                                 ? t.size[1] / 4
                                 : t.size[1] / 2;
          uint8_t *sc = t.buf[1];
          for (uint64_t k = 0; k < entries; k++) {
            float v = frand(0.01f, 3.0f) * (rnd() % 2 ? 1.0f : -1.0f);
            if (t.q.scheme == HURRAY_QUANT_MXFP) {
              sc[k] = (uint8_t)(100 + rnd() % 50);
            } else if (t.q.scheme == HURRAY_QUANT_NF4 ||
                       t.q.u.per_block.scale_type == HURRAY_QUANT_SCALE_F32) {
              v = fabsf(v);
              memcpy(sc + 4 * k, &v, 4);
            } else {
              uint32_t b;
              memcpy(&b, &v, 4);
              uint16_t hb = t.q.u.per_block.scale_type == HURRAY_QUANT_SCALE_BF16
                                ? (uint16_t)(b >> 16)
                                : (uint16_t)(0x3000u + rnd() % 0x1000u);
              sc[2 * k] = (uint8_t)hb;
              sc[2 * k + 1] = (uint8_t)(hb >> 8);
            }
          }
          if (t.f.buffer_count == 3) {
            int64_t lo = 0, hi = 0;
            lo = types[ti] == HURRAY_DTYPE_INT8 ? -128 : types[ti] == HURRAY_DTYPE_UINT2 ? 0 : -8;
            hi = types[ti] == HURRAY_DTYPE_INT8 ? 127 : types[ti] == HURRAY_DTYPE_UINT2 ? 3 : 7;
            if (types[ti] == HURRAY_DTYPE_UINT4) lo = 0, hi = 15;
            for (uint64_t k = 0; k < entries; k++) {
              int32_t z = (int32_t)(lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1)));
              memcpy((uint8_t *)t.buf[2] + 4 * k, &z, 4);
            }
          }
          t_deq(&t, out);
          for (uint64_t e = 0; e < t.count; e++) {
            float ref = t_ref_value(&t, e);
            if (memcmp(&ref, &out[e], 4) != 0)
              fail_msg("shape %d type 0x%02X layout %d axis %u element %llu: %.9g, reference "
                       "%.9g",
                       si, types[ti], layout, axis, (unsigned long long)e, (double)out[e],
                       (double)ref);
          }
          t_free(&t);
        }
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_q8_0_exact),
      cmocka_unit_test(test_round_trip_affine),
      cmocka_unit_test(test_layouts_agree),
      cmocka_unit_test(test_partial_block_padding),
      cmocka_unit_test(test_exact_affine),
      cmocka_unit_test(test_nf4),
      cmocka_unit_test(test_mxfp),
      cmocka_unit_test(test_refused_values),
      cmocka_unit_test(test_zero_tiny_huge),
      cmocka_unit_test(test_tensor_channel_details),
      cmocka_unit_test(test_arguments),
      cmocka_unit_test(test_workspace_out_of_memory),
      cmocka_unit_test(test_dequantize_types),
      cmocka_unit_test(test_dequantize_reference),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
