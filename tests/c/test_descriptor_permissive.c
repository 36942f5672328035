/*
 * Permissive decoding for relays (docs/internals/decisions.md § Strictness): unknown and reserved tags,
 * flag bits and values are kept, bytes that cannot be interpreted travel
 * verbatim, and re-encoding reproduces the input byte for byte. Reserved
 * bytes and invalid tags are still rejected.
 */
#include "test_descriptor_wire.h"

#define PERM HURRAY_DECODE_PERMISSIVE

static HurrayDescriptorFields fields_of(const HurrayDescriptor *d) {
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  return f;
}

static void test_reserved_type_tags(void **state) {
  (void)state;
  static const uint8_t tags[] = {0x05, 0x3F, 0x47, 0x60, 0x7F, 0x80, 0xEF};
  for (size_t i = 0; i < sizeof tags; i++) {
    W w;
    w_dense_f32_3x4(&w, 0);
    w.b[14] = tags[i];
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_TYPE, "type_tag");
    HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
    HurrayDescriptorFields f = fields_of(d);
    assert_int_equal(f.type_tag, tags[i]);
    /* The view cannot be rebuilt strictly. */
    HurrayDescriptor *r = NULL;
    assert_int_equal(hurray_descriptor_from_fields(&f, 0, &r, NULL), HURRAY_ERR_INVALID_TYPE);
    assert_null(r);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
  /* Invalid stays invalid. */
  for (int t = 0; t < 2; t++) {
    W w;
    w_dense_f32_3x4(&w, 0);
    w.b[14] = t ? 0xFF : 0x00;
    w_finish(&w);
    expect_reject(&w, PERM, HURRAY_ERR_INVALID_TYPE, "type_tag");
  }
}

static void test_opaque_layout(void **state) {
  (void)state;
  /* Reserved layout tag: the payload length is unknowable, so every byte after
   * byte_offset is kept, including what looks like sections (flags verbatim). */
  static const uint8_t tags[] = {0x0C, 0x3F, 0x41, 0x99, 0xEF};
  for (size_t i = 0; i < sizeof tags; i++) {
    W w;
    uint32_t flags = HURRAY_FLAG_HAS_STATISTICS | HURRAY_FLAG_HAS_QUANTIZATION | (1u << 9);
    w_header(&w, 0, flags, HURRAY_DTYPE_FLOAT32, tags[i], 2);
    w_shape(&w, 2, (const uint64_t[]){3, 4}, 7);
    for (int k = 0; k < 37; k++) w_u8(&w, (uint8_t)(k * 37 + 11));
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "flags"); /* bit 9, checked first */
    w.b[11] = 0;
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout_tag");
    w.b[11] = 0x02;
    HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
    HurrayDescriptorFields f = fields_of(d);
    assert_int_equal(f.layout.tag, tags[i]);
    assert_int_equal(f.layout.u.opaque.len, 37);
    assert_memory_equal(f.layout.u.opaque.bytes, w.b + 44, 37);
    assert_int_equal(f.flags, flags);
    assert_int_equal(f.byte_offset, 7);
    assert_int_equal(f.buffer_count, 0);
    assert_null(f.quantization);
    assert_null(f.statistics);
    assert_int_equal(f.trailing_len, 0);
    /* Sections cannot be given beside an opaque payload. */
    HurrayBufferHandle b = {48, 64, 0, 0, 0, 0};
    f.buffer_count = 1;
    f.buffers = &b;
    HurrayDescriptor *r = NULL;
    assert_int_equal(hurray_descriptor_from_fields(&f, PERM, &r, NULL),
                     HURRAY_ERR_INVALID_LAYOUT);
    assert_null(r);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
  /* An empty opaque payload: the descriptor ends right after byte_offset. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, 0x20, 1);
  w_shape(&w, 1, (const uint64_t[]){5}, 0);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
  assert_int_equal(fields_of(d).layout.u.opaque.len, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* Private type with an opaque layout still needs HAS_EXTENSION_TYPE. */
  w.b[14] = 0xF5;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "flags");
  w.b[10] = HURRAY_FLAG_HAS_EXTENSION_TYPE;
  assert_int_equal(hurray_descriptor_destroy(expect_roundtrip(w.b, w.n, PERM)), HURRAY_OK);
  /* Invalid layout tags stay invalid. */
  w.b[10] = 0;
  w.b[14] = HURRAY_DTYPE_FLOAT32;
  w.b[15] = 0x00;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "layout_tag");
  w.b[15] = 0xFF;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "layout_tag");
}

static void test_private_layout(void **state) {
  (void)state;
  static const uint8_t data[5] = {0xDE, 0xAD, 0xBE, 0xEF, 0x00};
  static const uint8_t tags[3] = {0xF0, 0xF7, 0xFE};
  for (size_t t = 0; t < 3; t++) {
    uint8_t tag = tags[t];
    for (uint32_t len = 0; len <= 5; len += 5) {
      W w;
      w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, tag, 2);
      w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
      w_u64(&w, 0x0123456789ABCDEFull);
      w_u32(&w, len);
      w_bytes(&w, data, len);
      w_u8(&w, 1);
      w_cpu_buffer(&w, 48);
      w_finish(&w);
      HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
      HurrayDescriptorFields f = fields_of(d);
      assert_int_equal(f.layout.u.private_ext.layout_id, 0x0123456789ABCDEFull);
      assert_int_equal(f.layout.u.private_ext.data_len, len);
      if (len) assert_memory_equal(f.layout.u.private_ext.data, data, len);
      assert_int_equal(f.buffer_count, 1);
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
      /* extension_data_length past the end. */
      w.b[44 + 8] = 0xFF;
      expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "layout.data");
      expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.data");
    }
  }
}

static void test_reserved_flag_bits_and_trailing(void **state) {
  (void)state;
  /* A 1.0 descriptor with an unknown flag bit gating unknown bytes: a relay
   * keeps the bits and the bytes. */
  W w;
  uint32_t flags = HURRAY_FLAG_HAS_STATISTICS | (1u << 5) | (1u << 31);
  w_dense_f32_3x4(&w, flags);
  w_stats(&w, 0, 0, 0, 0, 0, 0, 0, 0);
  w_bytes(&w, "unknown!!", 9);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "flags");
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
  HurrayDescriptorFields f = fields_of(d);
  assert_int_equal(f.flags, flags);
  uint32_t got = 0;
  assert_int_equal(hurray_descriptor_flags(d, &got), HURRAY_OK);
  assert_int_equal(got, flags);
  assert_non_null(f.statistics);
  assert_int_equal(f.trailing_len, 9);
  assert_memory_equal(f.trailing, "unknown!!", 9);
  /* Strictly, the same fields are refused for their reserved flag bits. */
  assert_int_equal(hurray_descriptor_validate(&f, 0, NULL), HURRAY_ERR_INVALID_LAYOUT);
  /* Known flag bits in the fields are derived from the sections, whatever the
   * caller wrote; reserved bits are kept in permissive mode. */
  f.flags = (1u << 5) | (1u << 31) | HURRAY_FLAG_HAS_SHARD;
  HurrayDescriptor *r = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&f, PERM, &r, NULL), HURRAY_OK);
  assert_true(hurray_descriptor_equal(d, r));
  assert_int_equal(hurray_descriptor_destroy(r), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_reserved_device_and_class(void **state) {
  (void)state;
  static const struct { uint8_t dev, cls; } k[] = {
      {0x09, 0x00}, {0xEF, 0x01}, {0x01, 0x04}, {0x01, 0xEF}, {0x42, 0x77}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    W w;
    w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
    w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
    w_u8(&w, 1);
    w_buffer(&w, 48, 64, k[i].dev, 1, k[i].cls);
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_TYPE, NULL);
    HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
    const HurrayBufferHandle *h = NULL;
    assert_int_equal(hurray_descriptor_buffer(d, 0, &h), HURRAY_OK);
    assert_int_equal(h->device_tag, k[i].dev);
    assert_int_equal(h->memory_class, k[i].cls);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
  /* Invalid bytes, the reserved handle byte and bad sync modes stay rejected. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(&w, 1);
  w_buffer(&w, 48, 64, 0xFF, 0, 0);
  w_finish(&w);
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_TYPE, "buffers[0].device_tag");
  w.b[57] = 0x01;
  w.b[59] = 0xFF;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class");
  w.b[59] = 0x00;
  w.b[58] = 0x03;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_SYNC_MODE, "buffers[0].sync_mode");
  w.b[58] = 0x00;
  w.b[60] = 0x01;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].reserved");
  /* Alignment rules are not relaxed either. */
  w.b[60] = 0x00;
  w.b[53] = 0x20;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment");
}

static void test_unknown_values_kept(void **state) {
  (void)state;
  /* COO is_sorted = 2. */
  W w;
  w_coo_f32_4x4(&w, 0, 3, 2);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
  assert_int_equal(fields_of(d).layout.u.coo.is_sorted, 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Statistics: reserved mask bit and a has_nan byte of 2. */
  w_dense_f32_3x4(&w, HURRAY_FLAG_HAS_STATISTICS);
  w_stats(&w, HURRAY_STAT_NAN_INF_VALID | (1u << 6), 0, 0, 0, 0, 0, 2, 0);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "statistics.computed_mask");
  d = expect_roundtrip(w.b, w.n, PERM);
  assert_int_equal(fields_of(d).statistics->has_nan, 2);
  assert_int_equal(fields_of(d).statistics->computed_mask, HURRAY_STAT_NAN_INF_VALID | 0x40);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* ...but known rules on known fields still apply. */
  w_dense_f32_3x4(&w, HURRAY_FLAG_HAS_STATISTICS);
  w_stats(&w, HURRAY_STAT_SPARSITY_VALID, 0, 2.0, 0, 0, 0, 0, 0);
  w_finish(&w);
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_STATISTICS, "statistics.sparsity_ratio");

  /* Composite member role 7. */
  w_dense_f32_3x4(&w, HURRAY_FLAG_HAS_COMPOSITE_MEMBER);
  w_u8(&w, 7);
  w_zero(&w, 15);
  w_finish(&w);
  d = expect_roundtrip(w.b, w.n, PERM);
  assert_int_equal(fields_of(d).composite_member->role, 7);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Extension type with is_float = 3 and has_inf = 2. */
  w_header(&w, 0, HURRAY_FLAG_HAS_EXTENSION_TYPE, 0xF8, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 64);
  w_ext(&w, 16, 1, 3, 0, 1, 5, 10, 15, 1, 2);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_TYPE, "extension_type.is_float");
  d = expect_roundtrip(w.b, w.n, PERM);
  assert_int_equal(fields_of(d).extension_type->is_float, 3);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* The packing rule does not depend on unknown values: still enforced. */
  w.b[61 + 4] = 2;
  expect_reject(&w, PERM, HURRAY_ERR_INVALID_LAYOUT, "extension_type.packing_factor");
}

static void test_unknown_quant_scheme_kept(void **state) {
  (void)state;
  /* An unassigned scheme tag with an arbitrary payload: a relay passes it on. */
  W w;
  w_header(&w, 0, HURRAY_FLAG_HAS_QUANTIZATION, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 12);
  w_u32(&w, 11);
  w_u8(&w, 0x3A);
  w_u8(&w, 1);
  w_u16(&w, 0);
  w_bytes(&w, "payload", 7);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
  HurrayDescriptorFields f = fields_of(d);
  assert_int_equal(f.quantization->scheme, 0x3A);
  assert_int_equal(f.quantization->raw_len, 11);
  assert_memory_equal(f.quantization->raw, w.b + 65, 11);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_trailing_in_minor_zero(void **state) {
  (void)state;
  W w;
  w_dense_f32_3x4(&w, 0);
  w_bytes(&w, "\x00\x01", 2);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "descriptor_length");
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, PERM);
  HurrayDescriptorFields f = fields_of(d);
  assert_int_equal(f.trailing_len, 2);
  /* Strict from_fields refuses trailing bytes in a 1.0 descriptor... */
  assert_int_equal(hurray_descriptor_validate(&f, 0, NULL), HURRAY_ERR_INVALID_LAYOUT);
  /* ...and accepts them in a 1.1 one. */
  f.version_minor = 1;
  assert_int_equal(hurray_descriptor_validate(&f, 0, NULL), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reserved_type_tags),
      cmocka_unit_test(test_opaque_layout),
      cmocka_unit_test(test_private_layout),
      cmocka_unit_test(test_reserved_flag_bits_and_trailing),
      cmocka_unit_test(test_reserved_device_and_class),
      cmocka_unit_test(test_unknown_values_kept),
      cmocka_unit_test(test_unknown_quant_scheme_kept),
      cmocka_unit_test(test_trailing_in_minor_zero),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
