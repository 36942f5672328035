/* The size of a buffer sized from a shape and its one limit (include/hurray/dtype.h,
 * hurray_dense_buffer_size, HURRAY_MAX_ADDRESSABLE), and the dtype properties the
 * creation functions ask: hurray_dtype_has_zero, hurray_dtype_is_standard, and the
 * width of a block-paged index (hurray_block_index_width). */
#include <math.h>
#include <string.h>

#include "testutil.h"

#define LIMIT HURRAY_MAX_ADDRESSABLE

static HurrayStatus size_of(uint8_t tag, uint32_t rank, const uint64_t *shape, uint64_t *count,
                            uint64_t *bytes, HurrayError *err) {
  hurray_error_clear(err);
  return hurray_dense_buffer_size(tag, rank, shape, count, bytes, err);
}

static void test_sizes(void **state) {
  (void)state;
  HurrayError e;
  uint64_t count = 0, bytes = 0;
  uint64_t s23[] = {2, 3};
  assert_int_equal(size_of(HURRAY_DTYPE_FLOAT32, 2, s23, &count, &bytes, &e), HURRAY_OK);
  assert_int_equal(count, 6);
  assert_int_equal(bytes, 24);
  /* packed as hurray_buffer_size_bytes packs: bools, nibbles, 6-bit groups */
  uint64_t s10[] = {10};
  assert_int_equal(size_of(HURRAY_DTYPE_BOOL, 1, s10, &count, &bytes, &e), HURRAY_OK);
  assert_int_equal(bytes, 2);
  assert_int_equal(size_of(HURRAY_DTYPE_INT4, 1, s10, NULL, &bytes, &e), HURRAY_OK);
  assert_int_equal(bytes, 5);
  assert_int_equal(size_of(HURRAY_DTYPE_FLOAT6_E2M3, 1, s10, NULL, &bytes, &e), HURRAY_OK);
  assert_int_equal(bytes, 9);
  /* rank 0: one element, shape may be NULL */
  assert_int_equal(size_of(HURRAY_DTYPE_COMPLEX128, 0, NULL, &count, &bytes, &e), HURRAY_OK);
  assert_int_equal(count, 1);
  assert_int_equal(bytes, 16);
  /* a zero extent empties the tensor, whatever the other extents */
  uint64_t empty[] = {LIMIT, 0, LIMIT};
  assert_int_equal(size_of(HURRAY_DTYPE_FLOAT64, 3, empty, &count, &bytes, &e), HURRAY_OK);
  assert_int_equal(count, 0);
  assert_int_equal(bytes, 0);
}

/* Both sides of the limit: elements, bytes, and one extent. */
static void test_limit(void **state) {
  (void)state;
  HurrayError e;
  uint64_t count = 7, bytes = 7;
  assert_int_equal(LIMIT, (uint64_t)INT64_MAX);
  /* bytes: exactly 2^63 - 1 one-byte elements fit, one more does not */
  uint64_t at[] = {LIMIT};
  assert_int_equal(size_of(HURRAY_DTYPE_UINT8, 1, at, &count, &bytes, &e), HURRAY_OK);
  assert_int_equal(count, LIMIT);
  assert_int_equal(bytes, LIMIT);
  /* 2^62 uint16 elements are 2^63 bytes: one byte over */
  uint64_t over_bytes[] = {UINT64_C(1) << 62};
  count = bytes = 7;
  assert_int_equal(size_of(HURRAY_DTYPE_UINT16, 1, over_bytes, &count, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "shape");
  assert_non_null(strstr(e.reason, "elements of uint16 take more than the 2^63 - 1 bytes"));
  assert_int_equal(count, 7); /* written on success only */
  assert_int_equal(bytes, 7);
  /* 2^62 - 1 of them fit (2^63 - 2 bytes) */
  uint64_t under_bytes[] = {(UINT64_C(1) << 62) - 1};
  assert_int_equal(size_of(HURRAY_DTYPE_UINT16, 1, under_bytes, NULL, &bytes, &e), HURRAY_OK);
  assert_int_equal(bytes, LIMIT - 1);
  /* bytes overflowing 64 bits: the same refusal */
  uint64_t wrap[] = {UINT64_C(1) << 62};
  assert_int_equal(size_of(HURRAY_DTYPE_FLOAT64, 1, wrap, NULL, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "shape");
  /* elements: sub-byte types reach the element limit before the byte one */
  uint64_t bools_at[] = {UINT64_C(1) << 31, (UINT64_C(1) << 32) - 1};
  assert_int_equal(size_of(HURRAY_DTYPE_BOOL, 2, bools_at, &count, &bytes, &e), HURRAY_OK);
  assert_int_equal(count, (UINT64_C(1) << 63) - (UINT64_C(1) << 31));
  uint64_t bools_over[] = {UINT64_C(1) << 31, UINT64_C(1) << 32}; /* 2^63 elements */
  assert_int_equal(size_of(HURRAY_DTYPE_BOOL, 2, bools_over, &count, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "shape");
  assert_non_null(strstr(e.reason, "9223372036854775808 elements"));
  /* an element count overflowing 64 bits */
  uint64_t wide[] = {UINT64_C(1) << 32, UINT64_C(1) << 32};
  assert_int_equal(size_of(HURRAY_DTYPE_BOOL, 2, wide, NULL, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.reason, "overflows 64 bits"));
  /* one extent: 2^63 - 1 is addressable, 2^63 is not (even in an empty tensor) */
  uint64_t extent_at[] = {0, LIMIT};
  assert_int_equal(size_of(HURRAY_DTYPE_INT64, 2, extent_at, &count, &bytes, &e), HURRAY_OK);
  uint64_t extent_over[] = {0, LIMIT + 1};
  assert_int_equal(size_of(HURRAY_DTYPE_INT64, 2, extent_over, &count, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "shape[1]");
  assert_non_null(strstr(e.message, "shape[1]: 9223372036854775808, beyond the 2^63 - 1"));
}

static void test_refusals(void **state) {
  (void)state;
  HurrayError e;
  uint64_t bytes = 0;
  uint64_t dyn[] = {3, HURRAY_DYNAMIC_DIM, LIMIT + 1};
  assert_int_equal(size_of(HURRAY_DTYPE_FLOAT32, 3, dyn, NULL, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "shape[1]"); /* the dynamic extent, before the large one */
  assert_non_null(strstr(e.reason, "is dynamic"));
  uint64_t s[] = {4};
  assert_int_equal(size_of(0xF3, 1, s, NULL, &bytes, &e), HURRAY_ERR_INVALID_TYPE);
  assert_string_equal(e.field, "type_tag");
  assert_int_equal(size_of(0x00, 1, s, NULL, &bytes, &e), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(size_of(HURRAY_DTYPE_RESERVED_47, 1, s, NULL, &bytes, &e),
                   HURRAY_ERR_INVALID_TYPE);
  uint64_t big[HURRAY_MAX_RANK + 1];
  for (unsigned i = 0; i <= HURRAY_MAX_RANK; i++) big[i] = 1;
  assert_int_equal(size_of(HURRAY_DTYPE_UINT8, HURRAY_MAX_RANK, big, NULL, &bytes, &e),
                   HURRAY_OK);
  assert_int_equal(size_of(HURRAY_DTYPE_UINT8, HURRAY_MAX_RANK + 1, big, NULL, &bytes, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "rank");
  assert_int_equal(size_of(HURRAY_DTYPE_UINT8, 1, NULL, NULL, &bytes, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(size_of(HURRAY_DTYPE_UINT8, 1, s, NULL, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_dense_buffer_size(HURRAY_DTYPE_UINT8, 1, dyn + 1, NULL, &bytes, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT); /* err may be NULL */
}

/* Every named type, checked against the table's facts. */
static void test_dtype_properties(void **state) {
  (void)state;
  unsigned named = 0, standard = 0;
  for (unsigned t = 0; t < 256; t++) {
    const HurrayDtypeInfo *i = hurray_dtype_info((uint8_t)t);
    if (i == NULL) {
      assert_false(hurray_dtype_has_zero((uint8_t)t));
      assert_false(hurray_dtype_is_standard((uint8_t)t));
      continue;
    }
    named++;
    assert_true(i->bit_width <= 8u * HURRAY_MAX_ELEMENT_BYTES);
    assert_int_equal(hurray_dtype_has_zero((uint8_t)t), t != HURRAY_DTYPE_FLOAT8_E8M0);
    bool std_type = hurray_dtype_is_standard((uint8_t)t);
    assert_int_equal(std_type, i->tier == 1 || hurray_dtype_is_complex((uint8_t)t));
    standard += std_type;
  }
  assert_int_equal(named, 26);
  assert_int_equal(standard, 15); /* 4 floats, 8 integers, bool, 2 complex */
  assert_true(hurray_dtype_is_standard(HURRAY_DTYPE_BFLOAT16));
  assert_true(hurray_dtype_is_standard(HURRAY_DTYPE_BOOL));
  assert_true(hurray_dtype_is_standard(HURRAY_DTYPE_COMPLEX64));
  assert_false(hurray_dtype_is_standard(HURRAY_DTYPE_FLOAT8_E4M3));
  assert_false(hurray_dtype_is_standard(HURRAY_DTYPE_FLOAT128));
  assert_false(hurray_dtype_is_standard(HURRAY_DTYPE_INT4));
  /* the widest named types fill HURRAY_MAX_ELEMENT_BYTES */
  assert_int_equal(hurray_dtype_info(HURRAY_DTYPE_FLOAT128)->bit_width,
                   8u * HURRAY_MAX_ELEMENT_BYTES);
  /* a type without a zero: no code of float8_e8m0 decodes to 0 */
  for (unsigned c = 0; c < 256; c++) {
    double v = 1.0;
    HurrayStatus rc = hurray_value_code_to_double(HURRAY_DTYPE_FLOAT8_E8M0, c, &v);
    assert_true(rc == HURRAY_OK || isnan(v)); /* the reserved codes are NaN */
    assert_true(v != 0.0);
  }
  /* the encoders say which types they take, naming the type */
  HurrayError e;
  uint8_t out[HURRAY_MAX_ELEMENT_BYTES];
  hurray_error_clear(&e);
  assert_int_equal(hurray_scalar_from_double(HURRAY_DTYPE_FLOAT6_E2M3, 1.0, 0.0, out, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "float6_e2m3 values cannot be encoded"));
  hurray_error_clear(&e);
  assert_int_equal(hurray_scalar_from_int(HURRAY_DTYPE_INT4, false, 1, out, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "int4 values cannot be encoded"));
}

static void test_block_index_width(void **state) {
  (void)state;
  assert_int_equal(hurray_block_index_width(HURRAY_BLOCK_INDEX_U32), 4);
  assert_int_equal(hurray_block_index_width(HURRAY_BLOCK_INDEX_U64), 8);
  assert_int_equal(hurray_block_index_width(2), 0);
  assert_int_equal(hurray_block_index_width(0xFF), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sizes),          cmocka_unit_test(test_limit),
      cmocka_unit_test(test_refusals),       cmocka_unit_test(test_dtype_properties),
      cmocka_unit_test(test_block_index_width),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
