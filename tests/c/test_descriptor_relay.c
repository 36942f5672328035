/* Relay semantics for a reader (include/hurray/descriptor.h): the decode
 * options of a layout and of a descriptor's fields, the decode that accepts
 * what a writer builds with relay semantics, and the unpacked-buffer hint. */
#include <string.h>

#include "testutil.h"

/* A row-major float32 [3, 4] tensor's fields over *h, with layout `tag`. */
static HurrayDescriptorFields dense(uint8_t type_tag, uint64_t *shape, HurrayBufferHandle *h,
                                    uint64_t bytes) {
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields_dense(type_tag, 2, shape, HURRAY_LAYOUT_ROW_MAJOR,
                                                  bytes, 64, h, &f, NULL),
                   HURRAY_OK);
  return f;
}

/* The encoding of `f` built with `options`, into buf; its length. */
static uint64_t encode(const HurrayDescriptorFields *f, uint32_t options, uint8_t *buf,
                       uint64_t cap) {
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(f, options, &d, NULL), HURRAY_OK);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, buf, cap, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return n;
}

static void test_options(void **state) {
  (void)state;
  assert_int_equal(hurray_layout_decode_options(HURRAY_LAYOUT_ROW_MAJOR), HURRAY_DECODE_STRICT);
  assert_int_equal(hurray_layout_decode_options(0xF3), HURRAY_DECODE_PERMISSIVE);
  assert_int_equal(hurray_layout_decode_options(0x70), HURRAY_DECODE_PERMISSIVE);
  uint64_t shape[2] = {3, 4};
  HurrayBufferHandle h;
  HurrayDescriptorFields f = dense(HURRAY_DTYPE_FLOAT32, shape, &h, 48);
  assert_int_equal(hurray_descriptor_relay_options(&f), HURRAY_DECODE_STRICT);
  f.layout.tag = 0xF0;
  assert_int_equal(hurray_descriptor_relay_options(&f), HURRAY_DECODE_PERMISSIVE);
}

static void test_decode_relay(void **state) {
  (void)state;
  uint8_t buf[256];
  uint64_t shape[2] = {3, 4};
  HurrayBufferHandle h;
  HurrayDescriptorFields f = dense(HURRAY_DTYPE_FLOAT32, shape, &h, 48);
  HurrayDescriptor *d = NULL;
  uint32_t options = 99;
  /* a plain descriptor decodes strictly */
  uint64_t n = encode(&f, HURRAY_DECODE_STRICT, buf, sizeof buf);
  assert_int_equal(hurray_descriptor_decode_relay(buf, (uintptr_t)n, false, &d, &options, NULL),
                   HURRAY_OK);
  assert_int_equal(options, HURRAY_DECODE_STRICT);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* a private layout, asked strictly: accepted permissively (relay semantics) */
  f.layout.tag = 0xF0;
  f.layout.u.private_ext.layout_id = 7;
  n = encode(&f, HURRAY_DECODE_PERMISSIVE, buf, sizeof buf);
  HurrayError err;
  hurray_error_clear(&err);
  d = NULL;
  assert_int_equal(hurray_descriptor_decode_relay(buf, (uintptr_t)n, false, &d, &options, &err),
                   HURRAY_OK);
  assert_non_null(d);
  assert_int_equal(options, HURRAY_DECODE_PERMISSIVE);
  assert_int_equal(err.status, HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* broken bytes: the strict decode's status, nothing out */
  buf[0] ^= 0xFF;
  d = NULL;
  assert_int_not_equal(
      hurray_descriptor_decode_relay(buf, (uintptr_t)n, false, &d, &options, &err), HURRAY_OK);
  assert_null(d);
  assert_int_equal(hurray_descriptor_decode_relay(buf, (uintptr_t)n, false, NULL, &options, NULL),
                   HURRAY_ERR_NULL_POINTER);
}

static void test_looks_unpacked(void **state) {
  (void)state;
  uint64_t shape[2] = {3, 4}, count = 0, packed = 0;
  HurrayBufferHandle h;
  /* 12 int4 elements in 12 bytes: one per element, 6 would do */
  HurrayDescriptorFields f = dense(HURRAY_DTYPE_INT4, shape, &h, 12);
  assert_true(hurray_descriptor_looks_unpacked(&f, &count, &packed));
  assert_int_equal(count, 12);
  assert_int_equal(packed, 6);
  assert_true(hurray_descriptor_looks_unpacked(&f, NULL, NULL));
  /* packed as the format says, or larger than one byte per element */
  f = dense(HURRAY_DTYPE_INT4, shape, &h, 6);
  assert_false(hurray_descriptor_looks_unpacked(&f, &count, &packed));
  f = dense(HURRAY_DTYPE_INT4, shape, &h, 13);
  assert_false(hurray_descriptor_looks_unpacked(&f, &count, &packed));
  /* whole-byte types never look unpacked */
  f = dense(HURRAY_DTYPE_UINT8, shape, &h, 12);
  assert_false(hurray_descriptor_looks_unpacked(&f, &count, &packed));
  assert_false(hurray_descriptor_looks_unpacked(NULL, &count, &packed));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options),
      cmocka_unit_test(test_decode_relay),
      cmocka_unit_test(test_looks_unpacked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
