/* Ranges of elements (hurray_fill_arange_int / _float, hurray_fill_linspace;
 * include/hurray/convert.h): the bits NumPy gives for the same calls
 * (numpy.arange / numpy.linspace, recorded from NumPy 2 on x86-64), the
 * wrap-around of integer steps, and the errors; one value repeated
 * (hurray_fill_value, hurray_fill_eye). */
#include <math.h>
#include <string.h>

#include "testutil.h"

static void test_arange_float_is_numpys(void **state) {
  (void)state;
  /* numpy.arange(0.5, 3.0, 0.3, dtype=numpy.float32).view(numpy.uint32) */
  static const uint32_t want32[9] = {1056964608u, 1061997773u, 1066192077u,
                                     1068708660u, 1071225242u, 1073741824u,
                                     1075000116u, 1076258407u, 1077516698u};
  uint32_t got32[9];
  HurrayError e;
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_FLOAT32, 9, 0.5, 0.5 + 0.3, got32,
                                            sizeof got32, &e),
                   HURRAY_OK);
  assert_memory_equal(got32, want32, sizeof want32);
  /* numpy.arange(1, 2, 0.25, dtype=numpy.float16).view(numpy.uint16) */
  static const uint16_t want16[4] = {15360, 15616, 15872, 16128};
  uint16_t got16[4];
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_FLOAT16, 4, 1.0, 1.25, got16,
                                            sizeof got16, &e),
                   HURRAY_OK);
  assert_memory_equal(got16, want16, sizeof want16);
  /* complex128: real parts the float64 range, imaginary parts zero */
  double c[6];
  memset(c, 0xAB, sizeof c);
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_COMPLEX128, 3, -1.0, 1.0, c, sizeof c,
                                            &e),
                   HURRAY_OK);
  assert_true(c[0] == -1.0 && c[2] == 1.0 && c[4] == 3.0);
  assert_true(c[1] == 0.0 && c[3] == 0.0 && c[5] == 0.0);
}

static void test_arange_int_wraps_modulo_the_width(void **state) {
  (void)state;
  uint8_t u8[5];
  HurrayError e;
  /* -3 + 37 i modulo 256: what numpy.arange(-3, 150, 37).astype(numpy.uint8) gives */
  assert_int_equal(hurray_fill_arange_int(HURRAY_DTYPE_UINT8, 5, (uint64_t)-3, 37, u8,
                                          sizeof u8, &e),
                   HURRAY_OK);
  static const uint8_t want8[5] = {253, 34, 71, 108, 145};
  assert_memory_equal(u8, want8, 5);
  int64_t i64[3];
  assert_int_equal(hurray_fill_arange_int(HURRAY_DTYPE_INT64, 3, 10, (uint64_t)-4, i64,
                                          sizeof i64, &e),
                   HURRAY_OK);
  assert_true(i64[0] == 10 && i64[1] == 6 && i64[2] == 2);
  int16_t i16[3];
  assert_int_equal(hurray_fill_arange_int(HURRAY_DTYPE_INT16, 3, 32766, 1, i16, sizeof i16, &e),
                   HURRAY_OK);
  assert_true(i16[0] == 32766 && i16[1] == 32767 && i16[2] == -32768);
}

static void test_linspace_is_numpys(void **state) {
  (void)state;
  /* numpy.linspace(-1, 1, 7).view(numpy.uint64) */
  static const uint64_t want[7] = {13830554455654793216ull, 13827552055903212886ull,
                                   13823048456275842390ull, 0ull,
                                   4599676419421066580ull,  4604180019048437076ull,
                                   4607182418800017408ull};
  uint64_t got[7];
  HurrayError e;
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_FLOAT64, 7, -1.0, 1.0, true, got,
                                        sizeof got, NULL, &e),
                   HURRAY_OK);
  assert_memory_equal(got, want, sizeof want);
  /* numpy.linspace(0, 10, 4, endpoint=False) */
  double d[4];
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_FLOAT64, 4, 0.0, 10.0, false, d, sizeof d,
                                        NULL, &e),
                   HURRAY_OK);
  assert_true(d[0] == 0.0 && d[1] == 2.5 && d[2] == 5.0 && d[3] == 7.5);
  /* a step that underflows: numpy.linspace(0, 1e-320, 3).view(numpy.uint64) */
  uint64_t tiny[3];
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_FLOAT64, 3, 0.0, 1e-320, true, tiny,
                                        sizeof tiny, NULL, &e),
                   HURRAY_OK);
  assert_true(tiny[0] == 0 && tiny[1] == 1012 && tiny[2] == 2024);
  /* integers floor: numpy.floor(numpy.linspace(-2.5, 3.5, 5)) as int8 */
  int8_t i8[5];
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_INT8, 5, -2.5, 3.5, true, i8, sizeof i8,
                                        NULL, &e),
                   HURRAY_OK);
  static const int8_t want8[5] = {-3, -1, 0, 2, 3};
  assert_memory_equal(i8, want8, 5);
}

static void test_linspace_refuses_what_does_not_fit(void **state) {
  (void)state;
  uint8_t u8[4] = {7, 7, 7, 7};
  double bad = 0.0;
  HurrayError e;
  /* 0, 100, 200, 300: the last does not fit uint8, and nothing is written */
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_UINT8, 4, 0.0, 300.0, true, u8, sizeof u8,
                                        &bad, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_true(bad == 300.0);
  assert_non_null(strstr(e.message, "out of range for uint8"));
  assert_true(u8[0] == 7 && u8[3] == 7);
  double d[2];
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_FLOAT64, 2, -1e308, 1e308, true, d,
                                        sizeof d, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_fill_linspace(HURRAY_DTYPE_FLOAT64, 2, NAN, 1.0, true, d, sizeof d,
                                        NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "start");
}

static void test_errors(void **state) {
  (void)state;
  uint8_t b[16];
  HurrayError e;
  assert_int_equal(hurray_fill_arange_int(HURRAY_DTYPE_FLOAT32, 1, 0, 1, b, sizeof b, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_INT32, 1, 0, 1, b, sizeof b, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_BOOL, 1, 0, 1, b, sizeof b, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_fill_arange_int(HURRAY_DTYPE_INT4, 1, 0, 1, b, sizeof b, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_fill_linspace(0xEE, 1, 0, 1, true, b, sizeof b, NULL, &e),
                   HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_FLOAT64, 3, 0, 1, b, sizeof b, &e),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_FLOAT64, 1, 0, 1, NULL, 8, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_fill_arange_float(HURRAY_DTYPE_FLOAT64, 0, 0, 1, NULL, 0, &e),
                   HURRAY_OK);
}

/* ---- hurray_fill_value, hurray_fill_eye (src/core/fill.c) ------------------------------ */

static void test_fill_value(void **state) {
  (void)state;
  /* every element, and nothing past them; 16-byte stores over odd lengths */
  uint8_t buf[64];
  const uint16_t h = 0x3C00; /* float16 1.0 */
  memset(buf, 0xEE, sizeof buf);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_FLOAT16, 13, &h, buf, 26, NULL), HURRAY_OK);
  for (int i = 0; i < 13; i++) {
    uint16_t v;
    memcpy(&v, buf + 2 * i, 2);
    assert_int_equal(v, 0x3C00);
  }
  assert_int_equal(buf[26], 0xEE);
  const double c[2] = {1.5, -2.0}; /* complex128: the 16-byte element */
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_COMPLEX128, 3, c, buf, 48, NULL), HURRAY_OK);
  for (int i = 0; i < 3; i++) assert_memory_equal(buf + 16 * i, c, 16);
  const uint8_t seven = 7; /* a uniform byte */
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_UINT8, 5, &seven, buf, 5, NULL), HURRAY_OK);
  for (int i = 0; i < 5; i++) assert_int_equal(buf[i], 7);
  /* bool: packed LSB-first, the last byte's padding bits zero */
  const uint8_t yes = 2, no = 0;
  memset(buf, 0xEE, sizeof buf);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_BOOL, 11, &yes, buf, 2, NULL), HURRAY_OK);
  assert_int_equal(buf[0], 0xFF);
  assert_int_equal(buf[1], 0x07);
  assert_int_equal(buf[2], 0xEE);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_BOOL, 11, &no, buf, 2, NULL), HURRAY_OK);
  assert_int_equal(buf[0] | buf[1], 0);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_FLOAT32, 0, &h, NULL, 0, NULL), HURRAY_OK);
  /* errors, nothing written */
  HurrayError e;
  memset(buf, 0xEE, sizeof buf);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_FLOAT16, 13, &h, buf, 25, &e),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_BOOL, 17, &yes, buf, 2, &e),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(buf[0], 0xEE);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_INT4, 4, &seven, buf, 2, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_fill_value(0xF3, 4, &seven, buf, 4, &e), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_UINT8, 4, NULL, buf, 4, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_fill_value(HURRAY_DTYPE_UINT8, 4, &seven, NULL, 4, &e),
                   HURRAY_ERR_NULL_POINTER);
}

static void test_fill_eye(void **state) {
  (void)state;
  /* a 3 x 4 int32 matrix, each diagonal from -3 to 4, on zeroed memory */
  const int32_t one = 1;
  for (int64_t k = -3; k <= 4; k++) {
    int32_t m[12];
    memset(m, 0, sizeof m);
    assert_int_equal(hurray_fill_eye(HURRAY_DTYPE_INT32, 3, 4, k, &one, m, sizeof m, NULL),
                     HURRAY_OK);
    for (int64_t i = 0; i < 3; i++)
      for (int64_t j = 0; j < 4; j++) assert_int_equal(m[i * 4 + j], j - i == k ? 1 : 0);
  }
  int32_t m[12];
  memset(m, 0, sizeof m);
  assert_int_equal(hurray_fill_eye(HURRAY_DTYPE_INT32, 3, 4, INT64_MIN, &one, m, sizeof m, NULL),
                   HURRAY_OK);
  for (int i = 0; i < 12; i++) assert_int_equal(m[i], 0);
  /* bool, bit-packed: a 3 x 3 identity is bits 0, 4 and 8 */
  uint8_t bits[2] = {0, 0};
  const uint8_t yes = 1;
  assert_int_equal(hurray_fill_eye(HURRAY_DTYPE_BOOL, 3, 3, 0, &yes, bits, 2, NULL), HURRAY_OK);
  assert_int_equal(bits[0], 0x11);
  assert_int_equal(bits[1], 0x01);
  HurrayError e;
  assert_int_equal(hurray_fill_eye(HURRAY_DTYPE_BOOL, 3, 3, 0, &yes, bits, 1, &e),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(hurray_fill_eye(HURRAY_DTYPE_INT32, UINT64_MAX, 2, 0, &one, m, sizeof m, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "rows");
  assert_int_equal(hurray_fill_eye(HURRAY_DTYPE_INT32, 0, 5, 0, &one, NULL, 0, NULL), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arange_float_is_numpys),
      cmocka_unit_test(test_arange_int_wraps_modulo_the_width),
      cmocka_unit_test(test_linspace_is_numpys),
      cmocka_unit_test(test_linspace_refuses_what_does_not_fit),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_fill_value),
      cmocka_unit_test(test_fill_eye),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
