/* Element values (src/core/values.c; spec: element-types.md): codes, packing,
 * conversion of every named type to double. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "hurray/values.h"

static double val(uint8_t tag, uint64_t code) {
  double d = -12345.0;
  HurrayStatus st = hurray_value_code_to_double(tag, code, &d);
  if (st != HURRAY_OK) fail_msg("code 0x%llx of type 0x%02x: status %d", (unsigned long long)code,
                                tag, st);
  return d;
}

static void expect_val(uint8_t tag, uint64_t code, double want) {
  double got = val(tag, code);
  if (!(got == want && signbit(got) == signbit(want)))
    fail_msg("type 0x%02x code 0x%llx: got %.17g, want %.17g", tag, (unsigned long long)code, got,
             want);
}

/* Reference value of a sign/exponent/mantissa code, from the spec's formulas:
 * subnormal (m / 2^M) * 2^(1 - bias), normal (1 + m / 2^M) * 2^(e - bias). */
static double ref_float(unsigned code, unsigned E, unsigned M, int bias) {
  unsigned s = (code >> (E + M)) & 1u, e = (code >> M) & ((1u << E) - 1u),
           m = code & ((1u << M) - 1u);
  double v = e == 0 ? ((double)m / (double)(1u << M)) * pow(2.0, 1 - bias)
                    : (1.0 + (double)m / (double)(1u << M)) * pow(2.0, (double)e - bias);
  return s ? -v : v;
}

/* ---- float16 / bfloat16 / float32 / float64 ----------------------------------------------- */

static void test_float16(void **state) {
  (void)state;
  expect_val(HURRAY_DTYPE_FLOAT16, 0x3C00, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT16, 0xC000, -2.0);
  expect_val(HURRAY_DTYPE_FLOAT16, 0x3555, 0x155 / 1024.0 * 0.25 + 0.25);
  expect_val(HURRAY_DTYPE_FLOAT16, 0x7BFF, 65504.0);
  expect_val(HURRAY_DTYPE_FLOAT16, 0x0400, ldexp(1.0, -14));
  expect_val(HURRAY_DTYPE_FLOAT16, 0x0001, ldexp(1.0, -24));
  expect_val(HURRAY_DTYPE_FLOAT16, 0x03FF, ldexp(1023.0, -24));
  expect_val(HURRAY_DTYPE_FLOAT16, 0x0000, 0.0);
  expect_val(HURRAY_DTYPE_FLOAT16, 0x8000, -0.0);
  expect_val(HURRAY_DTYPE_FLOAT16, 0x7C00, HUGE_VAL);
  expect_val(HURRAY_DTYPE_FLOAT16, 0xFC00, -HUGE_VAL);
  double n = val(HURRAY_DTYPE_FLOAT16, 0xFE01);
  assert_true(isnan(n));
  assert_true(signbit(n));
  assert_true(isnan(val(HURRAY_DTYPE_FLOAT16, 0x7C01)));
  /* Every code against the IEEE binary16 formula. */
  for (unsigned c = 0; c < 0x10000u; c++) {
    if (((c >> 10) & 0x1F) == 0x1F) continue;
    expect_val(HURRAY_DTYPE_FLOAT16, c, ref_float(c, 5, 10, 15));
  }
}

static void test_bfloat16_f32_f64(void **state) {
  (void)state;
  expect_val(HURRAY_DTYPE_BFLOAT16, 0x3F80, 1.0);
  expect_val(HURRAY_DTYPE_BFLOAT16, 0x4049, 3.140625);
  expect_val(HURRAY_DTYPE_BFLOAT16, 0xC2F7, -123.5);
  expect_val(HURRAY_DTYPE_BFLOAT16, 0x0001, ldexp(1.0, -133));
  expect_val(HURRAY_DTYPE_BFLOAT16, 0x7F7F, ldexp(255.0, 127 - 7));
  expect_val(HURRAY_DTYPE_BFLOAT16, 0x7F80, HUGE_VAL);
  expect_val(HURRAY_DTYPE_BFLOAT16, 0x8000, -0.0);
  assert_true(isnan(val(HURRAY_DTYPE_BFLOAT16, 0x7FC0)));
  assert_true(isnan(val(HURRAY_DTYPE_BFLOAT16, 0x7F81)));
  expect_val(HURRAY_DTYPE_FLOAT32, 0x3F800000u, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT32, 0x00000001u, ldexp(1.0, -149));
  expect_val(HURRAY_DTYPE_FLOAT32, 0xFF800000u, -HUGE_VAL);
  double n = val(HURRAY_DTYPE_FLOAT32, 0xFFA00001u); /* signalling NaN: still NaN */
  assert_true(isnan(n));
  assert_true(signbit(n));
  expect_val(HURRAY_DTYPE_FLOAT64, 0x3FF0000000000000ull, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT64, 0x0000000000000001ull, ldexp(1.0, -1074));
  expect_val(HURRAY_DTYPE_FLOAT64, 0xC00921FB54442D18ull, -3.141592653589793);
}

/* ---- float8 ------------------------------------------------------------------------------------- */

static void test_float8_e4m3(void **state) {
  (void)state;
  /* OCP OFP8 E4M3: bias 7, NaN only at S.1111.111, no infinities. */
  for (unsigned c = 0; c < 256; c++) {
    double d = val(HURRAY_DTYPE_FLOAT8_E4M3, c);
    if ((c & 0x7F) == 0x7F) {
      assert_true(isnan(d));
      assert_int_equal(signbit(d) != 0, c >= 0x80);
      continue;
    }
    assert_true(isfinite(d));
    expect_val(HURRAY_DTYPE_FLOAT8_E4M3, c, ref_float(c, 4, 3, 7));
  }
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x7E, 448.0); /* max: 1.75 x 2^8 */
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0xFE, -448.0);
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x78, 256.0); /* exponent 15 is a normal binade */
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x38, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x08, ldexp(1.0, -6));  /* min normal */
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x01, ldexp(1.0, -9));  /* min subnormal */
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x07, ldexp(7.0, -9));
  expect_val(HURRAY_DTYPE_FLOAT8_E4M3, 0x80, -0.0);
}

static void test_float8_e5m2(void **state) {
  (void)state;
  for (unsigned c = 0; c < 256; c++) {
    double d = val(HURRAY_DTYPE_FLOAT8_E5M2, c);
    if (((c >> 2) & 0x1F) == 0x1F) {
      if ((c & 3) == 0)
        assert_true(isinf(d));
      else
        assert_true(isnan(d));
      assert_int_equal(signbit(d) != 0, c >= 0x80);
      continue;
    }
    expect_val(HURRAY_DTYPE_FLOAT8_E5M2, c, ref_float(c, 5, 2, 15));
  }
  expect_val(HURRAY_DTYPE_FLOAT8_E5M2, 0x7C, HUGE_VAL);
  expect_val(HURRAY_DTYPE_FLOAT8_E5M2, 0xFC, -HUGE_VAL);
  expect_val(HURRAY_DTYPE_FLOAT8_E5M2, 0x7B, 57344.0);
  expect_val(HURRAY_DTYPE_FLOAT8_E5M2, 0x3C, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT8_E5M2, 0x04, ldexp(1.0, -14));
  expect_val(HURRAY_DTYPE_FLOAT8_E5M2, 0x01, ldexp(1.0, -16));
}

static void test_float8_e8m0(void **state) {
  (void)state;
  for (unsigned c = 1; c < 255; c++) expect_val(HURRAY_DTYPE_FLOAT8_E8M0, c, ldexp(1.0, (int)c - 127));
  expect_val(HURRAY_DTYPE_FLOAT8_E8M0, 0x7F, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT8_E8M0, 0x01, ldexp(1.0, -126));
  expect_val(HURRAY_DTYPE_FLOAT8_E8M0, 0xFE, ldexp(1.0, 127));
  /* 0x00 and 0xFF are reserved: NaN, reported. */
  double d = 0.0;
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT8_E8M0, 0x00, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_true(isnan(d));
  d = 0.0;
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT8_E8M0, 0xFF, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_true(isnan(d));
  const uint8_t buf[2] = {0x80, 0xFF};
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT8_E8M0, buf, 2, 0, &d, NULL), HURRAY_OK);
  assert_true(d == 2.0);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT8_E8M0, buf, 2, 1, &d, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

/* ---- sub-byte floats ------------------------------------------------------------------------------- */

static void test_float4_e2m1(void **state) {
  (void)state;
  /* element-types.md's value map (OCP MX 5.2). */
  static const double want[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                  -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};
  for (unsigned c = 0; c < 16; c++) {
    expect_val(HURRAY_DTYPE_FLOAT4_E2M1, c, want[c]);
    expect_val(HURRAY_DTYPE_FLOAT4_E2M1, c, ref_float(c, 2, 1, 1));
  }
  double d;
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT4_E2M1, 16, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

static void test_float6(void **state) {
  (void)state;
  for (unsigned c = 0; c < 64; c++) {
    expect_val(HURRAY_DTYPE_FLOAT6_E2M3, c, ref_float(c, 2, 3, 1));
    expect_val(HURRAY_DTYPE_FLOAT6_E3M2, c, ref_float(c, 3, 2, 3));
  }
  /* e2m3: the largest magnitude is 1.875 x 2^(3-1) = 7.5 (OCP MX 5.3; the
   * spec text's "= 3.75" is an arithmetic slip in the same formula). */
  expect_val(HURRAY_DTYPE_FLOAT6_E2M3, 0x1F, 7.5);
  expect_val(HURRAY_DTYPE_FLOAT6_E2M3, 0x3F, -7.5);
  expect_val(HURRAY_DTYPE_FLOAT6_E2M3, 0x08, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT6_E2M3, 0x01, 0.125); /* subnormal (1/8) x 2^0 */
  expect_val(HURRAY_DTYPE_FLOAT6_E2M3, 0x07, 0.875);
  expect_val(HURRAY_DTYPE_FLOAT6_E2M3, 0x20, -0.0);
  /* e3m2: max (1 + 3/4) x 2^(7-3) = 28. */
  expect_val(HURRAY_DTYPE_FLOAT6_E3M2, 0x1F, 28.0);
  expect_val(HURRAY_DTYPE_FLOAT6_E3M2, 0x3F, -28.0);
  expect_val(HURRAY_DTYPE_FLOAT6_E3M2, 0x0C, 1.0);
  expect_val(HURRAY_DTYPE_FLOAT6_E3M2, 0x01, 0.0625); /* (1/4) x 2^-2 */
  expect_val(HURRAY_DTYPE_FLOAT6_E3M2, 0x04, 0.25);   /* min normal */
  double d;
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT6_E3M2, 64, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

/* ---- float128 --------------------------------------------------------------------------------------- */

static double q128(uint64_t hi, uint64_t lo) {
  uint8_t b[16];
  for (int i = 0; i < 8; i++) {
    b[i] = (uint8_t)(lo >> (8 * i));
    b[8 + i] = (uint8_t)(hi >> (8 * i));
  }
  return hurray_float128_to_double(b);
}

#define Q_EXP(e) ((uint64_t)((e) + 16383) << 48) /* biased exponent field for 2^e */

static void test_float128(void **state) {
  (void)state;
  assert_true(q128(Q_EXP(0), 0) == 1.0);
  assert_true(q128(Q_EXP(1) | (1ull << 47), 0) == 3.0);
  assert_true(q128((1ull << 63) | Q_EXP(-3), 0) == -0.125);
  double z = q128(1ull << 63, 0);
  assert_true(z == 0.0 && signbit(z));
  /* Rounding to 53 bits: the fraction's bit 60 is the double's last bit. */
  assert_true(q128(Q_EXP(0), 1ull << 60) == 1.0 + ldexp(1.0, -52));
  assert_true(q128(Q_EXP(0), 1ull << 59) == 1.0);                       /* tie -> even */
  assert_true(q128(Q_EXP(0), (1ull << 60) | (1ull << 59)) == 1.0 + ldexp(1.0, -51)); /* tie -> even, up */
  assert_true(q128(Q_EXP(0), (1ull << 59) | 1u) == 1.0 + ldexp(1.0, -52)); /* above half */
  assert_true(q128(Q_EXP(0), (1ull << 59) - 1u) == 1.0);                  /* below half */
  /* All-ones fraction rounds up into the next binade. */
  assert_true(q128(Q_EXP(0) | 0xFFFFFFFFFFFFull, UINT64_MAX) == 2.0);
  /* Range: the largest double, overflow, subnormals, underflow. */
  assert_true(q128(Q_EXP(1023) | 0xFFFFFFFFFFFFull, 0xF000000000000000ull) == 0x1.fffffffffffffp1023);
  assert_true(isinf(q128(Q_EXP(1023) | 0xFFFFFFFFFFFFull, 0xF800000000000000ull)));
  assert_true(isinf(q128(Q_EXP(1024), 0)));
  assert_true(q128(Q_EXP(-1074), 0) == ldexp(1.0, -1074));
  assert_true(q128(Q_EXP(-1060) | (1ull << 47), 0) == ldexp(3.0, -1061));
  assert_true(q128(Q_EXP(-1075), 0) == 0.0);                         /* tie -> even (0) */
  assert_true(q128(Q_EXP(-1075), 1) == ldexp(1.0, -1074));            /* just above the tie */
  assert_true(q128(Q_EXP(-1075) | (1ull << 47), 0) == ldexp(1.0, -1074));
  assert_true(q128(Q_EXP(-1076) | 0xFFFFFFFFFFFFull, UINT64_MAX) == 0.0);
  assert_true(q128(Q_EXP(-16382), 0) == 0.0);
  assert_true(q128(0, 1) == 0.0); /* float128 subnormal */
  assert_true(isinf(q128(0x7FFF000000000000ull, 0)) && q128(0x7FFF000000000000ull, 0) > 0);
  assert_true(isinf(q128(0xFFFF000000000000ull, 0)) && q128(0xFFFF000000000000ull, 0) < 0);
  assert_true(isnan(q128(0x7FFF800000000000ull, 0)));
  assert_true(isnan(q128(0xFFFF000000000000ull, 1)));
  /* Through hurray_value_get. */
  uint8_t b[32] = {0};
  b[14] = 0xFF;
  b[15] = 0x3F; /* element 0 = 1.0 */
  b[30] = 0x00;
  b[31] = 0x40; /* element 1 = 2.0 */
  double re = 0, im = 7;
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT128, b, 32, 0, &re, &im), HURRAY_OK);
  assert_true(re == 1.0 && im == 0.0);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT128, b, 32, 1, &re, NULL), HURRAY_OK);
  assert_true(re == 2.0);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT128, b, 31, 1, &re, NULL),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  uint64_t code;
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT128, b, 32, 0, &code),
                   HURRAY_ERR_UNSUPPORTED);
}

/* ---- integers, bool, packing -------------------------------------------------------------------------- */

static void test_integers(void **state) {
  (void)state;
  expect_val(HURRAY_DTYPE_INT8, 0x80, -128.0);
  expect_val(HURRAY_DTYPE_INT8, 0x7F, 127.0);
  expect_val(HURRAY_DTYPE_UINT8, 0xFF, 255.0);
  expect_val(HURRAY_DTYPE_INT16, 0x8000, -32768.0);
  expect_val(HURRAY_DTYPE_UINT16, 0xFFFF, 65535.0);
  expect_val(HURRAY_DTYPE_INT32, 0xFFFFFFFFu, -1.0);
  expect_val(HURRAY_DTYPE_UINT32, 0xFFFFFFFFu, 4294967295.0);
  expect_val(HURRAY_DTYPE_INT64, 0x8000000000000000ull, -9223372036854775808.0);
  expect_val(HURRAY_DTYPE_UINT64, UINT64_MAX, 18446744073709551616.0);
  static const int int4[16] = {0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1};
  for (unsigned c = 0; c < 16; c++) {
    expect_val(HURRAY_DTYPE_INT4, c, int4[c]);
    expect_val(HURRAY_DTYPE_UINT4, c, c);
  }
  static const int int2[4] = {0, 1, -2, -1};
  for (unsigned c = 0; c < 4; c++) {
    expect_val(HURRAY_DTYPE_INT2, c, int2[c]);
    expect_val(HURRAY_DTYPE_UINT2, c, c);
  }
  expect_val(HURRAY_DTYPE_BOOL, 1, 1.0);
  double d;
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_BOOL, 2, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_INT4, 0x10, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_INT8, 0x100, &d),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

static void test_multibyte_little_endian(void **state) {
  (void)state;
  const uint8_t b[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  uint64_t c;
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_UINT16, b, 8, 1, &c), HURRAY_OK);
  assert_int_equal(c, 0x0403);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT32, b, 8, 1, &c), HURRAY_OK);
  assert_int_equal(c, 0x08070605u);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_UINT64, b, 8, 0, &c), HURRAY_OK);
  assert_true(c == 0x0807060504030201ull);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_UINT64, b, 8, 1, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT32, b, 7, 1, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  /* An index whose byte offset overflows. */
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT64, b, 8, UINT64_MAX / 4, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  uint8_t w[4] = {0};
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_INT32, w, 4, 0, 0xA1B2C3D4u), HURRAY_OK);
  const uint8_t want[4] = {0xD4, 0xC3, 0xB2, 0xA1};
  assert_memory_equal(w, want, 4);
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_INT16, w, 4, 0, 0x10000), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_INT16, w, 4, 2, 1), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
}

static void test_bool_packing(void **state) {
  (void)state;
  /* element-types.md: [true, false, true, true, false] -> 0x0D. */
  const uint8_t b = 0x0D;
  const double want[5] = {1, 0, 1, 1, 0};
  for (uint64_t i = 0; i < 5; i++) {
    double d = -1;
    assert_int_equal(hurray_value_get(HURRAY_DTYPE_BOOL, &b, 1, i, &d, NULL), HURRAY_OK);
    assert_true(d == want[i]);
  }
  uint8_t w = 0;
  for (uint64_t i = 0; i < 5; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_BOOL, &w, 1, i, (uint64_t)want[i]),
                     HURRAY_OK);
  assert_int_equal(w, 0x0D);
  uint64_t c;
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_BOOL, &b, 1, 8, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
}

static void test_nibble_and_crumb_packing(void **state) {
  (void)state;
  /* uint4 [5, 12, 3] -> C5 03. */
  uint8_t w[2] = {0, 0};
  const uint64_t u4[3] = {5, 12, 3};
  for (uint64_t i = 0; i < 3; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_UINT4, w, 2, i, u4[i]), HURRAY_OK);
  assert_int_equal(w[0], 0xC5);
  assert_int_equal(w[1], 0x03);
  for (uint64_t i = 0; i < 3; i++) {
    uint64_t c;
    assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_UINT4, w, 2, i, &c), HURRAY_OK);
    assert_int_equal(c, u4[i]);
  }
  /* int4 -1 is code 0xF; float4 shares the nibble packing. */
  double d;
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_INT4, w, 2, 1, 0xF), HURRAY_OK);
  assert_int_equal(w[0], 0xF5);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_INT4, w, 2, 1, &d, NULL), HURRAY_OK);
  assert_true(d == -1.0);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT4_E2M1, w, 2, 1, &d, NULL), HURRAY_OK);
  assert_true(d == -6.0);
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_UINT4, w, 2, 0, 16),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(w[0], 0xF5); /* untouched */
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_UINT4, w, 2, 4, 1),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  /* uint2 [3, 1, 2] -> 0x27. */
  uint8_t c2 = 0;
  const uint64_t u2[3] = {3, 1, 2};
  for (uint64_t i = 0; i < 3; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_UINT2, &c2, 1, i, u2[i]), HURRAY_OK);
  assert_int_equal(c2, 0x27);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_INT2, &c2, 1, 2, &d, NULL), HURRAY_OK);
  assert_true(d == -2.0);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_INT2, &c2, 1, 0, &d, NULL), HURRAY_OK);
  assert_true(d == -1.0);
  /* Overwriting one element leaves its neighbours alone. */
  uint8_t all = 0xFF;
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_UINT2, &all, 1, 2, 0), HURRAY_OK);
  assert_int_equal(all, 0xCF);
}

static void test_six_bit_packing(void **state) {
  (void)state;
  /* element-types.md's worked example: 1, 2, 4, 8 -> 81 40 20. */
  uint8_t g[3] = {0, 0, 0};
  const uint64_t e[4] = {1, 2, 4, 8};
  for (uint64_t i = 0; i < 4; i++)
    assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_FLOAT6_E2M3, g, 3, i, e[i]), HURRAY_OK);
  const uint8_t want[3] = {0x81, 0x40, 0x20};
  assert_memory_equal(g, want, 3);
  for (uint64_t i = 0; i < 4; i++) {
    uint64_t c;
    assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT6_E3M2, want, 3, i, &c), HURRAY_OK);
    assert_int_equal(c, e[i]);
  }
  /* Each position written over a background of ones and of zeros touches
   * exactly its own six bits. */
  for (uint64_t pos = 0; pos < 4; pos++) {
    for (uint64_t code = 0; code < 64; code++) {
      uint8_t b[6];
      memset(b, 0xFF, sizeof b);
      assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_FLOAT6_E2M3, b, 6, 4 + pos, code),
                       HURRAY_OK);
      assert_int_equal(b[0] & b[1] & b[2], 0xFF);
      for (uint64_t other = 0; other < 8; other++) {
        uint64_t c;
        assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT6_E2M3, b, 6, other, &c),
                         HURRAY_OK);
        assert_int_equal(c, other == 4 + pos ? code : 63);
      }
    }
  }
  /* A 6-bit element is readable only with its whole 3-byte group. */
  uint64_t c;
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT6_E2M3, want, 2, 0, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT6_E2M3, want, 3, 4, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_FLOAT6_E2M3, want, 3, UINT64_MAX, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  double d;
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_FLOAT6_E2M3, want, 3, 3, &d, NULL), HURRAY_OK);
  assert_true(d == 1.0); /* code 8: exponent 1, mantissa 0 */
}

static void test_complex(void **state) {
  (void)state;
  uint8_t b[32];
  const uint32_t f[4] = {0x3F800000u, 0xC0000000u, 0x40400000u, 0x7F800000u}; /* 1 -2 3 inf */
  for (int i = 0; i < 4; i++) {
    b[4 * i] = (uint8_t)f[i];
    b[4 * i + 1] = (uint8_t)(f[i] >> 8);
    b[4 * i + 2] = (uint8_t)(f[i] >> 16);
    b[4 * i + 3] = (uint8_t)(f[i] >> 24);
  }
  double re, im;
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_COMPLEX64, b, 16, 0, &re, &im), HURRAY_OK);
  assert_true(re == 1.0 && im == -2.0);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_COMPLEX64, b, 16, 1, &re, &im), HURRAY_OK);
  assert_true(re == 3.0 && isinf(im));
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_COMPLEX64, b, 15, 1, &re, &im),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  const uint64_t g[2] = {0x4000000000000000ull, 0xBFF8000000000000ull}; /* 2, -1.5 */
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 8; k++) b[8 * i + k] = (uint8_t)(g[i] >> (8 * k));
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_COMPLEX128, b, 16, 0, &re, &im), HURRAY_OK);
  assert_true(re == 2.0 && im == -1.5);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_COMPLEX128, b, 16, 1, &re, &im),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  /* complex64 has a 64-bit code but no single real value. */
  uint64_t c;
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_COMPLEX64, b, 16, 0, &c), HURRAY_OK);
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_COMPLEX64, c, &re),
                   HURRAY_ERR_UNSUPPORTED);
  /* A real type reports imag 0. */
  im = 9;
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_UINT8, b, 16, 0, &re, &im), HURRAY_OK);
  assert_true(im == 0.0);
}

static void test_argument_errors(void **state) {
  (void)state;
  uint8_t b[4] = {0};
  uint64_t c;
  double d;
  assert_int_equal(hurray_value_get_code(0x30, b, 4, 0, &c), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_value_get_code(0xF0, b, 4, 0, &c), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_INT8, b, 4, 0, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_INT8, NULL, 4, 0, &c), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_value_get_code(HURRAY_DTYPE_INT8, NULL, 0, 0, &c),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_INT8, NULL, 4, 0, 0), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_value_set_code(HURRAY_DTYPE_COMPLEX128, b, 4, 0, 0), HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_value_set_code(0x00, b, 4, 0, 0), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_INT8, 0, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_value_code_to_double(0x47, 0, &d), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT128, 0, &d), HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_INT8, b, 4, 0, NULL, &d), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_value_get(0xFF, b, 4, 0, &d, NULL), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_value_get(HURRAY_DTYPE_INT8, b, 4, 4, &d, NULL),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
}

/* ---- runs of elements ------------------------------------------------------------------ */

/* hurray_elements_to_double and hurray_elements_unpack give, for every named type and
 * every element of a buffer of pseudo-random bytes (every code of the narrow types
 * occurs), what hurray_value_get / hurray_value_get_code give one element at a time;
 * an odd count leaves the last byte or group partly used. */
static void test_runs_match_one_element_at_a_time(void **state) {
  (void)state;
  enum { N = 1001 };
  static uint8_t src[N * 16];
  static double got[N];
  static uint8_t codes[N];
  uint32_t x = 12345u;
  for (size_t i = 0; i < sizeof src; i++) {
    x = x * 1103515245u + 12345u;
    src[i] = (uint8_t)(x >> 16);
  }
  int types = 0;
  for (unsigned tag = 0; tag < 256; tag++) {
    const HurrayDtypeInfo *info = hurray_dtype_info((uint8_t)tag);
    if (info == NULL) continue;
    uint64_t size = 0;
    assert_int_equal(hurray_buffer_size_bytes((uint8_t)tag, N, &size), HURRAY_OK);
    uint64_t reserved = 99, want_reserved = 0;
    HurrayStatus st = hurray_elements_to_double((uint8_t)tag, src, size, N, got, &reserved);
    if ((info->flags & HURRAY_DTF_COMPLEX) != 0) {
      assert_int_equal(st, HURRAY_ERR_UNSUPPORTED);
    } else {
      assert_int_equal(st, HURRAY_OK);
      types++;
      for (uint64_t i = 0; i < N; i++) {
        double want = 0;
        HurrayStatus one = hurray_value_get((uint8_t)tag, src, size, i, &want, NULL);
        if (one == HURRAY_ERR_INVALID_ARGUMENT && tag == HURRAY_DTYPE_FLOAT8_E8M0) want_reserved++;
        else assert_int_equal(one, HURRAY_OK);
        if (memcmp(&got[i], &want, sizeof want) != 0)
          fail_msg("type %s element %llu: %.17g, one at a time %.17g", info->name,
                   (unsigned long long)i, got[i], want);
      }
      assert_true(reserved == want_reserved);
      if (tag == HURRAY_DTYPE_FLOAT8_E8M0) assert_true(reserved > 0);
    }
    st = hurray_elements_unpack((uint8_t)tag, src, size, N, codes);
    if (info->bit_width > 8) {
      assert_int_equal(st, HURRAY_ERR_UNSUPPORTED);
      continue;
    }
    assert_int_equal(st, HURRAY_OK);
    for (uint64_t i = 0; i < N; i++) {
      uint64_t code = 0;
      assert_int_equal(hurray_value_get_code((uint8_t)tag, src, size, i, &code), HURRAY_OK);
      bool is_int = (info->flags & HURRAY_DTF_INT) != 0;
      if (is_int && (info->flags & HURRAY_DTF_SIGNED) != 0) {
        double v = val((uint8_t)tag, code); /* the signed value */
        assert_true((double)(int8_t)codes[i] == v);
      } else {
        assert_true(codes[i] == code);
      }
    }
  }
  assert_true(types >= 20);
  /* bool unpacks to 0 or 1, LSB first */
  uint8_t bits = 0xA5, b[8];
  assert_int_equal(hurray_elements_unpack(HURRAY_DTYPE_BOOL, &bits, 1, 8, b), HURRAY_OK);
  const uint8_t want_bits[8] = {1, 0, 1, 0, 0, 1, 0, 1};
  assert_memory_equal(b, want_bits, 8);
}

static void test_run_errors(void **state) {
  (void)state;
  uint8_t src[8] = {0};
  double d[16];
  uint8_t c[16];
  /* a buffer shorter than the elements: nothing written */
  d[0] = 7.0;
  assert_int_equal(hurray_elements_to_double(HURRAY_DTYPE_FLOAT32, src, 7, 2, d, NULL),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_true(d[0] == 7.0);
  assert_int_equal(hurray_elements_to_double(HURRAY_DTYPE_FLOAT6_E2M3, src, 5, 5, d, NULL),
                   HURRAY_ERR_BUFFER_TOO_SMALL); /* 5 six-bit elements need two groups */
  assert_int_equal(hurray_elements_unpack(HURRAY_DTYPE_INT4, src, 1, 3, c),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(hurray_elements_to_double(0x47, src, 8, 1, d, NULL), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_elements_unpack(0xF0, src, 8, 1, c), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_elements_to_double(HURRAY_DTYPE_FLOAT32, NULL, 8, 1, d, NULL),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_elements_unpack(HURRAY_DTYPE_INT4, src, 8, 1, NULL),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_elements_to_double(HURRAY_DTYPE_COMPLEX64, src, 8, 1, d, NULL),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_elements_unpack(HURRAY_DTYPE_FLOAT16, src, 8, 1, c),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_elements_to_double(HURRAY_DTYPE_FLOAT64, src, 8, UINT64_MAX, d, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
  /* no elements: NULL buffers are fine */
  uint64_t r = 5;
  assert_int_equal(hurray_elements_to_double(HURRAY_DTYPE_FLOAT32, NULL, 0, 0, NULL, &r),
                   HURRAY_OK);
  assert_true(r == 0);
  assert_int_equal(hurray_elements_unpack(HURRAY_DTYPE_UINT2, NULL, 0, 0, NULL), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float16),        cmocka_unit_test(test_bfloat16_f32_f64),
      cmocka_unit_test(test_float8_e4m3),    cmocka_unit_test(test_float8_e5m2),
      cmocka_unit_test(test_float8_e8m0),    cmocka_unit_test(test_float4_e2m1),
      cmocka_unit_test(test_float6),         cmocka_unit_test(test_float128),
      cmocka_unit_test(test_integers),       cmocka_unit_test(test_multibyte_little_endian),
      cmocka_unit_test(test_bool_packing),   cmocka_unit_test(test_nibble_and_crumb_packing),
      cmocka_unit_test(test_six_bit_packing), cmocka_unit_test(test_complex),
      cmocka_unit_test(test_argument_errors),
      cmocka_unit_test(test_runs_match_one_element_at_a_time),
      cmocka_unit_test(test_run_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
