/* Quantized tensors: hurray_quant_param_sizes, hurray_quant_storage_count,
 * hurray_quant_check_params, hurray_quant_dequantize_f32 (src/quant/dequant.c;
 * spec: quantization/\*.md § Dequantization Formula, § Padding, § Validity
 * Constraints). Expected values are computed by hand in the comments. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "hurray/values.h"

#define NB HURRAY_QUANT_NO_BUFFER

typedef struct Fx {
  HurrayDescriptorFields f;
  uint64_t shape[8];
  HurrayBufferHandle b[8];
  HurrayQuantization q;
  uint8_t data[20000];
  uint8_t p1[1024];
  uint8_t p2[1024];
  const void *ptr[8];
  uint64_t size[8];
} Fx;

static Fx g_fx; /* large: keep it off the stack */

static Fx *fx(uint8_t type, uint8_t layout, uint32_t rank, const uint64_t *shape, uint32_t nbuf) {
  Fx *x = &g_fx;
  memset(x, 0, sizeof *x);
  x->f.version_major = 1;
  x->f.type_tag = type;
  x->f.rank = rank;
  if (rank > 0) memcpy(x->shape, shape, rank * sizeof shape[0]);
  x->f.shape = x->shape;
  x->f.layout.tag = layout;
  x->f.buffer_count = nbuf;
  x->f.buffers = x->b;
  x->f.quantization = &x->q;
  x->q.version = 1;
  x->ptr[0] = x->data;
  x->ptr[1] = x->p1;
  x->ptr[2] = x->p2;
  x->size[0] = sizeof x->data;
  x->size[1] = sizeof x->p1;
  x->size[2] = sizeof x->p2;
  for (int i = 0; i < 8; i++) {
    x->b[i].byte_size = i < 3 ? x->size[i] : 0;
    x->b[i].alignment = 64;
  }
  return x;
}

static void put_f32(uint8_t *p, size_t i, float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  for (int k = 0; k < 4; k++) p[4 * i + (size_t)k] = (uint8_t)(b >> (8 * k));
}
static void put_u16(uint8_t *p, size_t i, uint16_t v) {
  p[2 * i] = (uint8_t)v;
  p[2 * i + 1] = (uint8_t)(v >> 8);
}
static void put_i32(uint8_t *p, size_t i, int32_t v) {
  uint32_t u = (uint32_t)v;
  for (int k = 0; k < 4; k++) p[4 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
}

static void run_ok(Fx *x, float *out, uint64_t n) {
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus st = hurray_quant_dequantize_f32(&x->f, x->ptr, x->size, out, n, &e);
  if (st != HURRAY_OK) fail_msg("dequantize: %d %s", st, e.message);
}

static void run_bad(Fx *x, HurrayStatus want, const char *field) {
  float out[64];
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus st = hurray_quant_dequantize_f32(&x->f, x->ptr, x->size, out, 64, &e);
  if (st != want) fail_msg("expected %d, got %d (%s)", want, st, e.message);
  if (field != NULL) {
    assert_string_equal(e.field, field);
    assert_true(e.offset == HURRAY_NO_OFFSET);
  }
}

static void expect_out(const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t a, b;
    memcpy(&a, &got[i], 4);
    memcpy(&b, &want[i], 4);
    if (a != b && !(isnan(got[i]) && isnan(want[i])))
      fail_msg("element %zu: got %.9g, want %.9g", i, (double)got[i], (double)want[i]);
  }
}

/* ---- per-tensor ---------------------------------------------------------------------------- */

static void test_per_tensor(void **state) {
  (void)state;
  static const uint64_t s4[1] = {4};
  Fx *x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 1, s4, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 0.5f;
  x->q.u.per_tensor.zero_point = -2;
  const uint8_t d[4] = {0x80, 0x00, 0x05, 0x7F}; /* -128 0 5 127 */
  memcpy(x->data, d, 4);
  float out[4];
  run_ok(x, out, 4);
  const float want[4] = {-63.0f, 1.0f, 3.5f, 64.5f}; /* 0.5 * (q + 2) */
  expect_out(out, want, 4);

  /* byte_offset: the first element is at byte 2 of buffer 0. */
  x->f.byte_offset = 2;
  const uint8_t d2[6] = {0xAA, 0xAA, 0x80, 0x00, 0x05, 0x7F};
  memcpy(x->data, d2, 6);
  run_ok(x, out, 4);
  expect_out(out, want, 4);
  x->size[0] = 5; /* 2 + 4 bytes needed */
  run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[0]");

  /* uint4 [5, 12, 3] (C5 03), scale 2, zero point 8: 2 * (q - 8). */
  static const uint64_t s3[1] = {3};
  x = fx(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 1, s3, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 2.0f;
  x->q.u.per_tensor.zero_point = 8;
  x->data[0] = 0xC5;
  x->data[1] = 0x03;
  run_ok(x, out, 3);
  const float want2[3] = {-6.0f, 8.0f, -10.0f};
  expect_out(out, want2, 3);

  /* The difference is exact (64-bit) before rounding to float32. */
  static const uint64_t s1[1] = {1};
  x = fx(HURRAY_DTYPE_UINT32, HURRAY_LAYOUT_ROW_MAJOR, 1, s1, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 1.0f;
  memset(x->data, 0xFF, 4);
  run_ok(x, out, 1);
  assert_true(out[0] == 4294967296.0f);
  x->f.type_tag = HURRAY_DTYPE_INT32;
  x->q.u.per_tensor.zero_point = -1;
  put_i32(x->data, 0, INT32_MAX);
  run_ok(x, out, 1);
  assert_true(out[0] == 2147483648.0f);

  /* Scalar (rank 0). */
  x = fx(HURRAY_DTYPE_INT16, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 0.25f;
  x->data[0] = 0xFE;
  x->data[1] = 0xFF; /* -2 */
  run_ok(x, out, 1);
  assert_true(out[0] == -0.5f);
}

/* ---- per-channel ---------------------------------------------------------------------------- */

static Fx *pc_fixture(uint8_t layout, uint32_t axis, uint32_t zp_index) {
  static const uint64_t s[2] = {2, 3};
  Fx *x = fx(HURRAY_DTYPE_INT8, layout, 2, s, zp_index == 2 ? 3 : 2);
  x->q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  x->q.flags = zp_index == NB ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
  x->q.u.per_channel.axis = axis;
  x->q.u.per_channel.scale_buffer_index = 1;
  x->q.u.per_channel.zero_point_buffer_index = zp_index;
  x->q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  /* logical rows [1, 2, 3] and [4, 8, -4] */
  const int8_t rm[6] = {1, 2, 3, 4, 8, -4}, cm[6] = {1, 4, 2, 8, 3, -4};
  memcpy(x->data, layout == HURRAY_LAYOUT_COL_MAJOR ? cm : rm, 6);
  return x;
}

static void test_per_channel(void **state) {
  (void)state;
  float out[6];
  /* axis 0, asymmetric: scales [1, 0.25], zero points [0, 4].
   * row 0: 1 2 3; row 1: 0.25 * ([4, 8, -4] - 4) = 0 1 -2 */
  const float want0[6] = {1, 2, 3, 0, 1, -2};
  const uint8_t layouts[2] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR};
  for (int l = 0; l < 2; l++) {
    Fx *x = pc_fixture(layouts[l], 0, 2);
    put_f32(x->p1, 0, 1.0f);
    put_f32(x->p1, 1, 0.25f);
    put_i32(x->p2, 0, 0);
    put_i32(x->p2, 1, 4);
    run_ok(x, out, 6);
    expect_out(out, want0, 6);
  }
  /* axis 1, symmetric: scales [1, 2, 4] -> [1 4 12; 4 16 -16]. */
  Fx *x = pc_fixture(HURRAY_LAYOUT_ROW_MAJOR, 1, NB);
  put_f32(x->p1, 0, 1.0f);
  put_f32(x->p1, 1, 2.0f);
  put_f32(x->p1, 2, 4.0f);
  run_ok(x, out, 6);
  const float want1[6] = {1, 4, 12, 4, 16, -16};
  expect_out(out, want1, 6);
  /* axis 1, one shared buffer [scales 1 2 4 | zero points 1 0 -1]:
   * [(1-1)1 (2)2 (3+1)4; (4-1)1 (8)2 (-4+1)4] */
  x = pc_fixture(HURRAY_LAYOUT_ROW_MAJOR, 1, 1);
  put_f32(x->p1, 0, 1.0f);
  put_f32(x->p1, 1, 2.0f);
  put_f32(x->p1, 2, 4.0f);
  put_i32(x->p1, 3, 1);
  put_i32(x->p1, 4, 0);
  put_i32(x->p1, 5, -1);
  run_ok(x, out, 6);
  const float want2[6] = {0, 4, 16, 3, 16, -12};
  expect_out(out, want2, 6);
  x->size[1] = 23; /* 24 bytes of arrays */
  run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[1]");
}

static void test_per_channel_bad_params(void **state) {
  (void)state;
  Fx *x = pc_fixture(HURRAY_LAYOUT_ROW_MAJOR, 0, 2);
  put_f32(x->p1, 0, 1.0f);
  put_f32(x->p1, 1, 0.0f);
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");
  put_f32(x->p1, 1, NAN);
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");
  put_f32(x->p1, 1, -INFINITY);
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");
  put_f32(x->p1, 1, -3.0f); /* negative is fine */
  put_i32(x->p2, 0, 128);   /* outside int8 */
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point[0]");
  put_i32(x->p2, 0, -128);
  float out[6];
  run_ok(x, out, 6);
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, NULL), HURRAY_OK);
  /* The descriptor rules run first. */
  x->q.u.per_channel.axis = 2;
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis");
  x->q.u.per_channel.axis = 0;
  x->q.u.per_channel.zero_point_buffer_index = 0;
  run_bad(x, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.zero_point_buffer_index");
}

/* ---- per-block ------------------------------------------------------------------------------- */

static void test_per_block_partial_last_axis(void **state) {
  (void)state;
  /* int8 [2, 5], blocks of 4 along axis 1: 2 blocks per row, the second one
   * partial; storage rows of 8 (padding set to 0x55 to prove it is skipped).
   * Blocks b = row * 2 + col / 4; f16 scales [1, 0.5, 2, 0.25], zero points
   * [1, 0, 5, 10]:
   *   row 0: (1-1)1 (2-1)1 (3-1)1 (4-1)1 | (5-0)0.5  = 0 1 2 3 2.5
   *   row 1: (6-5)2 (7-5)2 (8-5)2 (9-5)2 | (10-10)0.25 = 2 4 6 8 0 */
  static const uint64_t s[2] = {2, 5};
  Fx *x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 3);
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.u.per_block.axis = 1;
  x->q.u.per_block.block_size = 4;
  x->q.u.per_block.scale_buffer_index = 1;
  x->q.u.per_block.zero_point_buffer_index = 2;
  x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F16;
  const uint8_t d[16] = {1, 2, 3, 4, 5, 0x55, 0x55, 0x55, 6, 7, 8, 9, 10, 0x55, 0x55, 0x55};
  memcpy(x->data, d, 16);
  put_u16(x->p1, 0, 0x3C00);
  put_u16(x->p1, 1, 0x3800);
  put_u16(x->p1, 2, 0x4000);
  put_u16(x->p1, 3, 0x3400);
  put_i32(x->p2, 0, 1);
  put_i32(x->p2, 1, 0);
  put_i32(x->p2, 2, 5);
  put_i32(x->p2, 3, 10);
  float out[10];
  run_ok(x, out, 10);
  const float want[10] = {0, 1, 2, 3, 2.5f, 2, 4, 6, 8, 0};
  expect_out(out, want, 10);
  /* The padded storage must be there. */
  x->size[0] = 15;
  run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[0]");
  x->size[0] = 16;
  /* Bad scale / zero point entries. */
  put_u16(x->p1, 2, 0x7C00); /* +inf */
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[2]");
  put_u16(x->p1, 2, 0x8000); /* -0 */
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[2]");
  put_u16(x->p1, 2, 0x4000);
  put_i32(x->p2, 3, 200);
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point[3]");
  put_i32(x->p2, 3, 10);
  x->size[2] = 15; /* 4 int32 zero points */
  run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[2]");
}

static void test_per_block_partial_axis0(void **state) {
  (void)state;
  /* uint8 [3, 2], blocks of 2 along axis 0: ceil(3/2) = 2 blocks per column;
   * block b = col * 2 + row / 2 (outer index = the column). Symmetric float32
   * scales [1, 2, 3, 4]:
   *   [10 20; 30 40; 50 60] -> [10*1 20*3; 30*1 40*3; 50*2 60*4] */
  static const uint64_t s[2] = {3, 2};
  const float want[6] = {10, 60, 30, 120, 100, 240};
  const uint8_t layouts[2] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR};
  /* Row-major storage: padded shape [4, 2]; column-major: columns of 4. */
  const uint8_t rm[8] = {10, 20, 30, 40, 50, 60, 0x77, 0x77};
  const uint8_t cm[8] = {10, 30, 50, 0x77, 20, 40, 60, 0x77};
  for (int l = 0; l < 2; l++) {
    Fx *x = fx(HURRAY_DTYPE_UINT8, layouts[l], 2, s, 2);
    x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
    x->q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
    x->q.u.per_block.axis = 0;
    x->q.u.per_block.block_size = 2;
    x->q.u.per_block.scale_buffer_index = 1;
    x->q.u.per_block.zero_point_buffer_index = NB;
    x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F32;
    memcpy(x->data, l == 0 ? rm : cm, 8);
    for (int i = 0; i < 4; i++) put_f32(x->p1, (size_t)i, (float)(i + 1));
    float out[6];
    run_ok(x, out, 6);
    expect_out(out, want, 6);
    uint64_t n = 0;
    assert_int_equal(hurray_quant_storage_count(&x->f, &n), HURRAY_OK);
    assert_int_equal(n, 8);
    x->size[0] = 7;
    run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[0]");
  }
}

static void test_per_block_bf16_int4(void **state) {
  (void)state;
  /* int4 [1, 4] codes [-1, 2, -8, 7] = bytes 2F 78; blocks of 2 along axis 1,
   * bfloat16 scales [1.5, -2]: [-1.5, 3, 16, -14]. */
  static const uint64_t s[2] = {1, 4};
  Fx *x = fx(HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  x->q.u.per_block.axis = 1;
  x->q.u.per_block.block_size = 2;
  x->q.u.per_block.scale_buffer_index = 1;
  x->q.u.per_block.zero_point_buffer_index = NB;
  x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_BF16;
  x->data[0] = 0x2F;
  x->data[1] = 0x78;
  put_u16(x->p1, 0, 0x3FC0);
  put_u16(x->p1, 1, 0xC000);
  float out[4];
  run_ok(x, out, 4);
  const float want[4] = {-1.5f, 3.0f, 16.0f, -14.0f};
  expect_out(out, want, 4);
  put_u16(x->p1, 1, 0x7FC0); /* NaN */
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");
}

/* The shape of the reference corpus' per-block descriptor (int4 [128, 128],
 * one float16 scale per row), filled with a pattern checked element by element. */
static void test_per_block_golden_shape(void **state) {
  (void)state;
  static const uint64_t s[2] = {128, 128};
  Fx *x = fx(HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  x->q.u.per_block.axis = 1;
  x->q.u.per_block.block_size = 128;
  x->q.u.per_block.scale_buffer_index = 1;
  x->q.u.per_block.zero_point_buffer_index = NB;
  x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F16;
  x->b[0].byte_size = 8192;
  x->b[1].byte_size = 256;
  for (uint64_t i = 0; i < 128 * 128; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_INT4, x->data, 8192, i,
                                           (i / 128 + i % 128) & 0xF),
                     HURRAY_OK);
  for (size_t r = 0; r < 128; r++) put_u16(x->p1, r, r % 2 ? 0x4000 : 0x3C00); /* 2 or 1 */
  static float out[128 * 128];
  run_ok(x, out, 128 * 128);
  for (uint64_t i = 0; i < 128 * 128; i++) {
    int code = (int)((i / 128 + i % 128) & 0xF);
    int q = code >= 8 ? code - 16 : code;
    float want = (float)q * ((i / 128) % 2 ? 2.0f : 1.0f);
    if (out[i] != want) fail_msg("element %llu: %g != %g", (unsigned long long)i, (double)out[i], (double)want);
  }
  uint64_t sb = 0, zb = 7;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_int_equal(sb, 256);
  assert_int_equal(zb, 0);
}

/* ---- NF4 ------------------------------------------------------------------------------------------ */

static void test_nf4(void **state) {
  (void)state;
  const float *lut = hurray_nf4_table();
  assert_true(lut[0] == -1.0f && lut[7] == 0.0f && lut[15] == 1.0f);
  assert_true(lut[13] == 0.5626170039176941f);
  /* uint4 [1, 16], blocks of 8, codes 0..15, absmax [2, 0.5]. */
  static const uint64_t s[2] = {1, 16};
  Fx *x = fx(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  x->q.scheme = HURRAY_QUANT_NF4;
  x->q.u.nf4.axis = 1;
  x->q.u.nf4.block_size = 8;
  x->q.u.nf4.scale_buffer_index = 1;
  for (int k = 0; k < 8; k++) x->data[k] = (uint8_t)((2 * k) | ((2 * k + 1) << 4));
  put_f32(x->p1, 0, 2.0f);
  put_f32(x->p1, 1, 0.5f);
  float out[16], want[16];
  run_ok(x, out, 16);
  for (int i = 0; i < 16; i++) want[i] = (i < 8 ? 2.0f : 0.5f) * lut[i];
  expect_out(out, want, 16);
  /* absmax must be finite and >= 0 (0 and -0 allowed). */
  put_f32(x->p1, 1, 0.0f);
  run_ok(x, out, 16);
  assert_true(out[15] == 0.0f);
  put_f32(x->p1, 1, -0.0f);
  run_ok(x, out, 16);
  put_f32(x->p1, 1, -0.5f);
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");
  put_f32(x->p1, 1, INFINITY);
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");

  /* Partial last block: [10], K = 8 -> 2 blocks, 16 storage nibbles; codes
   * 0..9 then padding (0xF, ignored); absmax [1, 4]. */
  static const uint64_t s10[1] = {10};
  x = fx(HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 1, s10, 2);
  x->q.scheme = HURRAY_QUANT_NF4;
  x->q.u.nf4.block_size = 8;
  x->q.u.nf4.scale_buffer_index = 1;
  for (uint64_t i = 0; i < 16; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_UINT4, x->data, 8, i, i < 10 ? i : 0xF),
                     HURRAY_OK);
  put_f32(x->p1, 0, 1.0f);
  put_f32(x->p1, 1, 4.0f);
  run_ok(x, out, 10);
  for (int i = 0; i < 10; i++) want[i] = (i < 8 ? 1.0f : 4.0f) * lut[i];
  expect_out(out, want, 10);
  x->size[0] = 7; /* 16 nibbles = 8 bytes */
  run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[0]");
}

/* ---- MXFP ------------------------------------------------------------------------------------------ */

static Fx *mx_fixture(uint8_t type, uint32_t rank, const uint64_t *s, uint32_t axis, uint32_t k) {
  Fx *x = fx(type, HURRAY_LAYOUT_ROW_MAJOR, rank, s, 2);
  x->q.scheme = HURRAY_QUANT_MXFP;
  x->q.u.mxfp.axis = axis;
  x->q.u.mxfp.block_size = k;
  x->q.u.mxfp.scale_buffer_index = 1;
  return x;
}

static void test_mxfp_float8(void **state) {
  (void)state;
  static const uint64_t s[1] = {32};
  Fx *x = mx_fixture(HURRAY_DTYPE_FLOAT8_E4M3, 1, s, 0, 32);
  x->p1[0] = 0x80; /* 2^(128-127) = 2 */
  x->data[0] = 0x38; /* 1 */
  x->data[1] = 0x7E; /* 448 */
  x->data[2] = 0x7F; /* NaN */
  x->data[3] = 0x01; /* 2^-9 */
  x->data[4] = 0xB8; /* -1 */
  float out[32], want[32] = {2.0f, 896.0f, NAN, 0x1p-8f, -2.0f};
  run_ok(x, out, 32);
  expect_out(out, want, 32);
  assert_true(isnan(out[2]));
  /* e5m2 keeps infinities: 0x7C -> inf. */
  x = mx_fixture(HURRAY_DTYPE_FLOAT8_E5M2, 1, s, 0, 32);
  x->p1[0] = 0x7E; /* 0.5 */
  x->data[0] = 0x7C;
  x->data[1] = 0x7B; /* 57344 */
  x->data[2] = 0x3C; /* 1 */
  run_ok(x, out, 32);
  assert_true(isinf(out[0]) && out[0] > 0);
  assert_true(out[1] == 28672.0f && out[2] == 0.5f && out[3] == 0.0f);
  /* Reserved scale bytes. */
  x->p1[0] = 0x00;
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[0]");
  x->p1[0] = 0xFF;
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[0]");
  /* Extreme valid scales are exact in float32. */
  x->p1[0] = 0x01; /* 2^-126 */
  run_ok(x, out, 32);
  assert_true(out[2] == 0x1p-126f);
  x->p1[0] = 0xFE; /* 2^127 */
  run_ok(x, out, 32);
  assert_true(out[2] == 0x1p127f);
}

static void test_mxfp_fp4_fp6_int(void **state) {
  (void)state;
  static const float e2m1[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  /* float4_e2m1 [2, 16] along axis 1, scales [0.5, 4]: row 0 codes 0..15, row 1 15..0. */
  static const uint64_t s2[2] = {2, 16};
  Fx *x = mx_fixture(HURRAY_DTYPE_FLOAT4_E2M1, 2, s2, 1, 16);
  for (uint64_t i = 0; i < 32; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_FLOAT4_E2M1, x->data, 16, i,
                                           i < 16 ? i : 31 - i),
                     HURRAY_OK);
  x->p1[0] = 0x7E;
  x->p1[1] = 0x81;
  float out[32], want[32];
  run_ok(x, out, 32);
  for (int i = 0; i < 32; i++) want[i] = i < 16 ? 0.5f * e2m1[i] : 4.0f * e2m1[31 - i];
  expect_out(out, want, 32);
  x->p1[1] = 0xFF;
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale[1]");

  /* float6_e2m3 [16] (four 3-byte groups), codes 4i, scale 1. */
  static const uint64_t s16[1] = {16};
  x = mx_fixture(HURRAY_DTYPE_FLOAT6_E2M3, 1, s16, 0, 16);
  for (uint64_t i = 0; i < 16; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_FLOAT6_E2M3, x->data, 12, i, 4 * i),
                     HURRAY_OK);
  x->p1[0] = 0x7F;
  run_ok(x, out, 16);
  for (uint64_t i = 0; i < 16; i++) {
    double d;
    assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT6_E2M3, 4 * i, &d), HURRAY_OK);
    want[i] = (float)d;
  }
  expect_out(out, want, 16);
  assert_true(out[3] == 1.5f);  /* code 12 = 0.001.100: 1.5 x 2^0 */
  assert_true(out[15] == -6.0f); /* code 60 = 1.11.100: -(1.5 x 2^2) */
  x->size[0] = 11;
  run_bad(x, HURRAY_ERR_BUFFER_SIZE, "buffers[0]");

  /* float6_e3m2 [16], code 0x1F (28) everywhere, scale 2^-2. */
  x = mx_fixture(HURRAY_DTYPE_FLOAT6_E3M2, 1, s16, 0, 16);
  for (uint64_t i = 0; i < 16; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_FLOAT6_E3M2, x->data, 12, i, 0x1F),
                     HURRAY_OK);
  x->p1[0] = 0x7D;
  run_ok(x, out, 16);
  for (int i = 0; i < 16; i++) want[i] = 7.0f;
  expect_out(out, want, 16);

  /* MXINT8 [16]: q = 16 i - 128, scale 0.25. */
  x = mx_fixture(HURRAY_DTYPE_INT8, 1, s16, 0, 16);
  for (int i = 0; i < 16; i++) x->data[i] = (uint8_t)(16 * i - 128);
  x->p1[0] = 0x7D;
  run_ok(x, out, 16);
  for (int i = 0; i < 16; i++) want[i] = 0.25f * (float)(16 * i - 128);
  expect_out(out, want, 16);

  /* MXINT4 [16]: codes 0..15 read as signed, scale 1. */
  x = mx_fixture(HURRAY_DTYPE_INT4, 1, s16, 0, 16);
  for (int k = 0; k < 8; k++) x->data[k] = (uint8_t)((2 * k) | ((2 * k + 1) << 4));
  x->p1[0] = 0x7F;
  run_ok(x, out, 16);
  for (int i = 0; i < 16; i++) want[i] = (float)(i < 8 ? i : i - 16);
  expect_out(out, want, 16);
}

/* ---- sizes, storage counts, arguments ----------------------------------------------------------- */

static void test_param_sizes(void **state) {
  (void)state;
  uint64_t sb = 99, zb = 99;
  static const uint64_t s[2] = {6, 10};
  Fx *x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 1.0f;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_true(sb == 0 && zb == 0);
  uint64_t n = 0;
  assert_int_equal(hurray_quant_storage_count(&x->f, &n), HURRAY_OK);
  assert_int_equal(n, 60);

  x->q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  x->q.u.per_channel.axis = 1;
  x->q.u.per_channel.scale_buffer_index = 1;
  x->q.u.per_channel.zero_point_buffer_index = 2;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_true(sb == 40 && zb == 40);
  x->q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, NULL), HURRAY_OK);
  assert_int_equal(hurray_quant_param_sizes(&x->f, NULL, &zb), HURRAY_OK);
  assert_true(sb == 40 && zb == 0);

  /* per-block [6, 10], K = 4, float16: 6 x 3 = 18 blocks. */
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.flags = 0;
  x->q.u.per_block.axis = 1;
  x->q.u.per_block.block_size = 4;
  x->q.u.per_block.scale_buffer_index = 1;
  x->q.u.per_block.zero_point_buffer_index = 2;
  x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F16;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_true(sb == 36 && zb == 72);
  assert_int_equal(hurray_quant_storage_count(&x->f, &n), HURRAY_OK);
  assert_int_equal(n, 72); /* 6 x 12 */
  x->shape[0] = 0;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_true(sb == 0 && zb == 0);
  assert_int_equal(hurray_quant_storage_count(&x->f, &n), HURRAY_OK);
  assert_int_equal(n, 0);
  x->shape[0] = HURRAY_DYNAMIC_DIM;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_quant_storage_count(&x->f, &n), HURRAY_ERR_INVALID_ARGUMENT);
  x->shape[0] = 6;

  /* Block-paged: one entry per page slot. */
  static const uint64_t bp[3] = {9, 2, 8};
  x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 3, bp, 5);
  x->f.layout.u.block_paged.page_size = 4;
  x->f.layout.u.block_paged.num_pages = 5;
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.u.per_block.block_size = 4;
  x->q.u.per_block.scale_buffer_index = 3;
  x->q.u.per_block.zero_point_buffer_index = 4;
  x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F32;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_true(sb == 80 && zb == 80);

  /* MXFP [3, 64], K = 32: 6 one-byte scales. */
  static const uint64_t m[2] = {3, 64};
  x = mx_fixture(HURRAY_DTYPE_FLOAT8_E4M3, 2, m, 1, 32);
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_OK);
  assert_true(sb == 6 && zb == 0);
  assert_int_equal(hurray_quant_storage_count(&x->f, &n), HURRAY_OK);
  assert_int_equal(n, 192);

  /* Errors. */
  assert_int_equal(hurray_quant_param_sizes(NULL, &sb, &zb), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_storage_count(&x->f, NULL), HURRAY_ERR_NULL_POINTER);
  x->q.u.mxfp.block_size = 0;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_ERR_INVALID_QUANTIZATION);
  x->q.u.mxfp.block_size = 32;
  x->q.u.mxfp.axis = 2;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_ERR_INVALID_QUANTIZATION);
  x->q.scheme = 0xF1;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_ERR_INVALID_QUANTIZATION);
  x->f.quantization = NULL;
  assert_int_equal(hurray_quant_param_sizes(&x->f, &sb, &zb), HURRAY_ERR_INVALID_ARGUMENT);
}

static void test_check_params_block_paged(void **state) {
  (void)state;
  /* Parameters of a block-paged tensor can be checked without its data. */
  static const uint64_t bp[3] = {9, 2, 8};
  Fx *x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 3, bp, 4);
  x->f.layout.u.block_paged.page_size = 4;
  x->f.layout.u.block_paged.num_pages = 2;
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  x->q.u.per_block.block_size = 4;
  x->q.u.per_block.scale_buffer_index = 3;
  x->q.u.per_block.zero_point_buffer_index = NB;
  x->q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F32;
  x->b[3].byte_size = 32;
  x->ptr[0] = NULL;
  x->ptr[3] = x->p1;
  x->size[3] = 32;
  for (int i = 0; i < 8; i++) put_f32(x->p1, (size_t)i, 1.0f + (float)i);
  HurrayError e;
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e), HURRAY_OK);
  put_f32(x->p1, 7, 0.0f);
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e),
                   HURRAY_ERR_INVALID_QUANTIZATION);
  assert_string_equal(e.field, "quantization.scale[7]");
  x->size[3] = 31;
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e), HURRAY_ERR_BUFFER_SIZE);
  assert_string_equal(e.field, "buffers[3]");
  x->size[3] = 32;
  x->ptr[3] = NULL;
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e), HURRAY_ERR_NULL_POINTER);
  /* ...but not dequantized as a whole. */
  x->ptr[3] = x->p1;
  put_f32(x->p1, 7, 8.0f);
  run_bad(x, HURRAY_ERR_UNSUPPORTED, "layout");
}

/* The value types of quantizers and dequantizers: exactly the four float types, each taken
 * by hurray_quant_dequantize as out_type, and every other tag refused there. */
static void test_value_types(void **state) {
  (void)state;
  int n = 0;
  for (unsigned tag = 0; tag < 256; tag++) {
    bool want = tag == HURRAY_DTYPE_FLOAT16 || tag == HURRAY_DTYPE_BFLOAT16 ||
                tag == HURRAY_DTYPE_FLOAT32 || tag == HURRAY_DTYPE_FLOAT64;
    assert_int_equal(hurray_quant_value_type((uint8_t)tag), want);
    n += want;
  }
  assert_int_equal(n, 4);
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  HurrayError e;
  float out[1];
  assert_int_equal(hurray_quant_dequantize(&f, NULL, NULL, HURRAY_DTYPE_INT8, out, 1, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "out_type");
  assert_int_equal(hurray_quant_dequantize(&f, NULL, NULL, HURRAY_DTYPE_BFLOAT16, out, 1, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "quantization"); /* past the type check */
}

static void test_arguments(void **state) {
  (void)state;
  static const uint64_t s[2] = {2, 3};
  Fx *x = pc_fixture(HURRAY_LAYOUT_ROW_MAJOR, 1, NB);
  for (int i = 0; i < 3; i++) put_f32(x->p1, (size_t)i, 1.0f);
  float out[6];
  HurrayError e;
  /* Room for fewer values than the tensor has. */
  assert_int_equal(hurray_quant_dequantize_f32(&x->f, x->ptr, x->size, out, 5, &e),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(hurray_quant_dequantize_f32(&x->f, x->ptr, x->size, out, 7, &e), HURRAY_OK);
  assert_int_equal(hurray_quant_dequantize_f32(&x->f, x->ptr, x->size, NULL, 6, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_dequantize_f32(NULL, x->ptr, x->size, out, 6, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_dequantize_f32(&x->f, NULL, x->size, out, 6, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_dequantize_f32(&x->f, x->ptr, NULL, out, 6, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_check_params(NULL, x->ptr, x->size, &e), HURRAY_ERR_NULL_POINTER);
  x->ptr[0] = NULL;
  run_bad(x, HURRAY_ERR_NULL_POINTER, "buffers[0]");
  x->ptr[0] = x->data;
  /* Layouts other than row-/column-major. */
  const uint8_t others[] = {HURRAY_LAYOUT_STRIDED, HURRAY_LAYOUT_TILED, HURRAY_LAYOUT_MORTON,
                            HURRAY_LAYOUT_COO, HURRAY_LAYOUT_CSR, HURRAY_LAYOUT_HILBERT};
  for (size_t i = 0; i < sizeof others; i++) {
    x->f.layout.tag = others[i];
    run_bad(x, HURRAY_ERR_UNSUPPORTED, "layout");
  }
  x->f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  /* Schemes without a known meaning. */
  x->q.scheme = 0xF2;
  run_bad(x, HURRAY_ERR_UNSUPPORTED, "quantization.scheme_tag");
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e), HURRAY_ERR_UNSUPPORTED);
  x->q.scheme = 0x07;
  run_bad(x, HURRAY_ERR_UNSUPPORTED, "quantization.scheme_tag");
  x->f.quantization = NULL;
  run_bad(x, HURRAY_ERR_INVALID_ARGUMENT, "quantization");
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  /* Composite heads have no data. */
  x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_COMPOSITE, 2, s, 0);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 1.0f;
  assert_int_equal(hurray_quant_check_params(&x->f, x->ptr, x->size, &e), HURRAY_ERR_UNSUPPORTED);
  /* A dynamic dimension cannot be dequantized. */
  static const uint64_t d[2] = {HURRAY_DYNAMIC_DIM, 3};
  x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, d, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 1.0f;
  run_bad(x, HURRAY_ERR_INVALID_ARGUMENT, "shape");
  /* An empty tensor dequantizes to nothing (out may be NULL). */
  static const uint64_t z[2] = {0, 3};
  x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, z, 2);
  x->q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  x->q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  x->q.u.per_channel.axis = 1;
  x->q.u.per_channel.scale_buffer_index = 1;
  x->q.u.per_channel.zero_point_buffer_index = NB;
  x->q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  for (int i = 0; i < 3; i++) put_f32(x->p1, (size_t)i, 1.0f);
  assert_int_equal(hurray_quant_dequantize_f32(&x->f, x->ptr, x->size, NULL, 0, &e), HURRAY_OK);
  /* Per-tensor scale rules apply here too. */
  x = fx(HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 1);
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = 0.0f;
  run_bad(x, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_per_tensor),
      cmocka_unit_test(test_per_channel),
      cmocka_unit_test(test_per_channel_bad_params),
      cmocka_unit_test(test_per_block_partial_last_axis),
      cmocka_unit_test(test_per_block_partial_axis0),
      cmocka_unit_test(test_per_block_bf16_int4),
      cmocka_unit_test(test_per_block_golden_shape),
      cmocka_unit_test(test_nf4),
      cmocka_unit_test(test_mxfp_float8),
      cmocka_unit_test(test_mxfp_fp4_fp6_int),
      cmocka_unit_test(test_param_sizes),
      cmocka_unit_test(test_check_params_block_paged),
      cmocka_unit_test(test_value_types),
      cmocka_unit_test(test_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
