/* Quantization payload: hurray__quant_parse / _encoded_len / _encode /
 * _param_buffer_count (src/quant/codec.c; spec: quantization.md § Descriptor
 * Header, quantization/\*.md § Binary Encoding). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "internal/validate.h"

#define BASE 100u /* byte offset of the payload in a pretend descriptor */

static HurrayStatus parse(const uint8_t *raw, uint32_t len, uint32_t options,
                          HurrayQuantization *q, HurrayError *e) {
  hurray_error_clear(e);
  HurrayStatus st = hurray__quant_parse(raw, len, options, BASE, q, e);
  if (st != HURRAY_OK) assert_int_equal(e->status, st);
  return st;
}

static void expect_fail(const uint8_t *raw, uint32_t len, uint32_t options, HurrayStatus st,
                        const char *field, uint64_t offset) {
  HurrayQuantization q;
  HurrayError e;
  assert_int_equal(parse(raw, len, options, &q, &e), st);
  assert_string_equal(e.field, field);
  assert_int_equal(e.offset, offset);
}

/* The worked example of per-channel-affine.md (asymmetric, axis 0, buffers 1, 2). */
static const uint8_t k_per_channel_example[20] = {0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
                                                  0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00,
                                                  0x00, 0x00, 0x03, 0x00, 0x00, 0x00};

/* One valid payload of each scheme, at its exact length. */
static const uint8_t k_per_tensor[16] = {0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3F,
                                         0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
static const uint8_t k_per_block[24] = {0x03, 0x01, 0x01, 0x00, 0x01, 0, 0, 0, 0x20, 0, 0, 0,
                                        0x01, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 0, 0};
static const uint8_t k_nf4[16] = {0x04, 0x01, 0x00, 0x00, 0x02, 0, 0, 0,
                                  0x40, 0, 0, 0,    0x01, 0, 0, 0};
static const uint8_t k_mxfp[16] = {0x05, 0x01, 0x00, 0x00, 0x00, 0, 0, 0,
                                   0x20, 0, 0, 0,    0x03, 0, 0, 0};

static void test_parse_typed_fields(void **state) {
  (void)state;
  HurrayQuantization q;
  HurrayError e;
  assert_int_equal(parse(k_per_channel_example, 20, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_PER_CHANNEL_AFFINE);
  assert_int_equal(q.version, 1);
  assert_int_equal(q.flags, 0);
  assert_int_equal(q.u.per_channel.axis, 0);
  assert_int_equal(q.u.per_channel.scale_buffer_index, 1);
  assert_int_equal(q.u.per_channel.zero_point_buffer_index, 2);
  assert_int_equal(q.u.per_channel.scale_type, HURRAY_QUANT_SCALE_F32);
  assert_ptr_equal(q.raw, k_per_channel_example);
  assert_int_equal(q.raw_len, 20);

  assert_int_equal(parse(k_per_tensor, 16, 0, &q, &e), HURRAY_OK);
  assert_true(q.u.per_tensor.scale == 0.5f);
  assert_int_equal(q.u.per_tensor.zero_point, -2);

  assert_int_equal(parse(k_per_block, 24, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.flags, HURRAY_QUANT_FLAG_SYMMETRIC);
  assert_int_equal(q.u.per_block.axis, 1);
  assert_int_equal(q.u.per_block.block_size, 32);
  assert_int_equal(q.u.per_block.scale_buffer_index, 1);
  assert_int_equal(q.u.per_block.zero_point_buffer_index, HURRAY_QUANT_NO_BUFFER);
  assert_int_equal(q.u.per_block.scale_type, HURRAY_QUANT_SCALE_F16);

  assert_int_equal(parse(k_nf4, 16, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.u.nf4.axis, 2);
  assert_int_equal(q.u.nf4.block_size, 64);
  assert_int_equal(q.u.nf4.scale_buffer_index, 1);

  assert_int_equal(parse(k_mxfp, 16, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.u.mxfp.axis, 0);
  assert_int_equal(q.u.mxfp.block_size, 32);
  assert_int_equal(q.u.mxfp.scale_buffer_index, 3);
}

static void test_parse_lengths(void **state) {
  (void)state;
  struct { const uint8_t *bytes; uint32_t len; } k[] = {
      {k_per_tensor, 16}, {k_per_channel_example, 20}, {k_per_block, 24}, {k_nf4, 16},
      {k_mxfp, 16}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    /* One byte short: rejected, reported at the quantization_length prefix. */
    expect_fail(k[i].bytes, k[i].len - 1, 0, HURRAY_ERR_INVALID_QUANTIZATION,
                "quantization_length", BASE - 4);
    expect_fail(k[i].bytes, k[i].len - 1, HURRAY_DECODE_PERMISSIVE,
                HURRAY_ERR_INVALID_QUANTIZATION, "quantization_length", BASE - 4);
    /* Writer padding after the scheme fields: accepted and kept in raw. */
    uint8_t padded[40];
    memset(padded, 0xAB, sizeof padded);
    memcpy(padded, k[i].bytes, k[i].len);
    HurrayQuantization q;
    HurrayError e;
    assert_int_equal(parse(padded, k[i].len + 7, 0, &q, &e), HURRAY_OK);
    assert_int_equal(q.raw_len, k[i].len + 7);
    assert_int_equal(hurray__quant_encoded_len(&q), k[i].len + 7);
    uint8_t out[40];
    hurray__quant_encode(&q, out);
    assert_memory_equal(out, padded, k[i].len + 7);
  }
  /* Shorter than the 4-byte header. */
  expect_fail(k_per_tensor, 3, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization_length",
              BASE - 4);
  expect_fail(k_per_tensor, 0, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_QUANTIZATION,
              "quantization_length", BASE - 4);
  /* A base below 4 (a bare payload) does not underflow. */
  HurrayQuantization q;
  HurrayError e;
  assert_int_equal(hurray__quant_parse(k_per_tensor, 2, 0, 0, &q, &e),
                   HURRAY_ERR_INVALID_QUANTIZATION);
  assert_int_equal(e.offset, 0);
}

static void test_parse_scheme_tags(void **state) {
  (void)state;
  uint8_t b[16];
  memcpy(b, k_per_tensor, 16);
  HurrayQuantization q;
  HurrayError e;
  /* 0x00 and 0xFF: invalid in every mode. */
  const uint8_t invalid[] = {0x00, 0xFF};
  for (size_t i = 0; i < 2; i++) {
    b[0] = invalid[i];
    expect_fail(b, 16, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag", BASE);
    expect_fail(b, 16, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_QUANTIZATION,
                "quantization.scheme_tag", BASE);
  }
  /* Unassigned (0x06-0x5F) and reserved (0x60-0xEF): strict rejects, permissive
   * keeps them opaque (raw covers the payload, typed fields stay zero). */
  const uint8_t unknown[] = {0x06, 0x3F, 0x40 + 0x06, 0x5F, 0x60, 0x7F, 0x80, 0xEF};
  for (size_t i = 0; i < sizeof unknown; i++) {
    b[0] = unknown[i];
    b[1] = 9;      /* any version */
    b[2] = 0xFF;   /* any flags */
    expect_fail(b, 16, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag", BASE);
    assert_int_equal(parse(b, 5, HURRAY_DECODE_PERMISSIVE, &q, &e), HURRAY_OK);
    assert_int_equal(q.scheme, unknown[i]);
    assert_int_equal(q.version, 9);
    assert_int_equal(q.flags, 0xFF);
    assert_int_equal(q.raw_len, 5);
    uint32_t n = 99;
    assert_false(hurray__quant_param_buffer_count(&q, &n));
  }
  /* Private (0xF0-0xFE): opaque in both modes, whatever version/flags/length. */
  const uint8_t priv[] = {0xF0, 0xF7, 0xFE};
  for (size_t i = 0; i < sizeof priv; i++) {
    uint8_t p[6] = {priv[i], 0x7A, 0xFF, 0xFF, 0xDE, 0xAD};
    assert_int_equal(parse(p, 6, 0, &q, &e), HURRAY_OK);
    assert_int_equal(q.scheme, priv[i]);
    assert_int_equal(q.version, 0x7A);
    assert_int_equal(q.flags, 0xFFFF);
    assert_int_equal(parse(p, 4, 0, &q, &e), HURRAY_OK);
    uint8_t out[6];
    assert_int_equal(parse(p, 6, 0, &q, &e), HURRAY_OK);
    assert_int_equal(hurray__quant_encoded_len(&q), 6);
    hurray__quant_encode(&q, out);
    assert_memory_equal(out, p, 6);
  }
}

static void test_parse_version(void **state) {
  (void)state;
  struct { const uint8_t *bytes; uint32_t len; } k[] = {
      {k_per_tensor, 16}, {k_per_channel_example, 20}, {k_per_block, 24}, {k_nf4, 16},
      {k_mxfp, 16}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    uint8_t b[24];
    memcpy(b, k[i].bytes, k[i].len);
    const uint8_t bad[] = {0, 2, 0xFF};
    for (size_t v = 0; v < sizeof bad; v++) {
      b[1] = bad[v];
      /* Newer versions are rejected in every mode (quantization.md § Version
       * Compatibility); only unknown scheme tags have a permissive exception. */
      expect_fail(b, k[i].len, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_version",
                  BASE + 1);
      expect_fail(b, k[i].len, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_QUANTIZATION,
                  "quantization.scheme_version", BASE + 1);
    }
  }
}

static void test_parse_flags(void **state) {
  (void)state;
  uint8_t b[24];
  HurrayQuantization q;
  HurrayError e;
  /* No flag is defined for per-tensor, NF4, MXFP. */
  const uint8_t *noflags[] = {k_per_tensor, k_nf4, k_mxfp};
  for (size_t i = 0; i < 3; i++) {
    memcpy(b, noflags[i], 16);
    b[2] = 0x01;
    expect_fail(b, 16, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", BASE + 2);
    b[2] = 0x00;
    b[3] = 0x80;
    expect_fail(b, 16, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_QUANTIZATION,
                "quantization.flags", BASE + 2);
  }
  /* Bit 0 (SYMMETRIC) is defined for 0x02 and 0x03; bits 1-15 are not. */
  memcpy(b, k_per_channel_example, 20);
  b[2] = 0x01;
  assert_int_equal(parse(b, 20, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.flags, 1);
  b[2] = 0x02;
  expect_fail(b, 20, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", BASE + 2);
  memcpy(b, k_per_block, 24);
  b[3] = 0x01; /* bit 8 */
  expect_fail(b, 24, 0, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", BASE + 2);
  b[3] = 0x00;
  b[2] = 0x00; /* asymmetric: parse accepts (the sentinel rule is semantic) */
  assert_int_equal(parse(b, 24, 0, &q, &e), HURRAY_OK);
}

static void test_parse_reserved_bytes(void **state) {
  (void)state;
  struct { const uint8_t *bytes; uint32_t len, from, n; } k[] = {
      {k_per_tensor, 16, 12, 4}, {k_per_channel_example, 20, 17, 3}, {k_per_block, 24, 21, 3}};
  for (size_t i = 0; i < 3; i++) {
    for (uint32_t j = 0; j < k[i].n; j++) {
      uint8_t b[24];
      memcpy(b, k[i].bytes, k[i].len);
      b[k[i].from + j] = 0x01;
      char field[64];
      snprintf(field, sizeof field, "quantization.reserved[%u]", j);
      expect_fail(b, k[i].len, 0, HURRAY_ERR_INVALID_QUANTIZATION, field, BASE + k[i].from + j);
      expect_fail(b, k[i].len, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_QUANTIZATION, field,
                  BASE + k[i].from + j);
    }
  }
}

/* encode(parse(bytes)) from the typed fields alone (raw cleared) is bit-exact. */
static void roundtrip_typed(const uint8_t *bytes, uint32_t len) {
  HurrayQuantization q;
  HurrayError e;
  assert_int_equal(parse(bytes, len, 0, &q, &e), HURRAY_OK);
  q.raw = NULL;
  q.raw_len = 0;
  assert_int_equal(hurray__quant_encoded_len(&q), len);
  uint8_t out[32];
  memset(out, 0xCC, sizeof out);
  hurray__quant_encode(&q, out);
  if (memcmp(out, bytes, len) != 0)
    fail_msg("round trip of %s gave %s", tu_hex(bytes, len), tu_hex(out, len));
  assert_int_equal(out[len], 0xCC); /* nothing written past the length */
}

static void test_roundtrip(void **state) {
  (void)state;
  roundtrip_typed(k_per_tensor, 16);
  roundtrip_typed(k_per_channel_example, 20);
  roundtrip_typed(k_per_block, 24);
  roundtrip_typed(k_nf4, 16);
  roundtrip_typed(k_mxfp, 16);
  /* Every field at a distinctive value, incl. all 32 bits of indices. */
  uint8_t pb[24] = {0x03, 0x01, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0x00, 0x80,
                    0xEF, 0xBE, 0xAD, 0xDE, 0x04, 0x03, 0x02, 0x01, 0x03, 0x00, 0x00, 0x00};
  roundtrip_typed(pb, 24);
  /* Per-tensor scale bit patterns: parse keeps the bits (finiteness is a
   * semantic rule), so a NaN payload, a signalling NaN, -0 and a subnormal
   * round-trip exactly. */
  const uint32_t scales[] = {0x7FC12345u, 0x7F800001u, 0xFFA00000u, 0x80000000u, 0x00000001u,
                             0x7F7FFFFFu, 0x7F800000u};
  for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
    uint8_t pt[16];
    memcpy(pt, k_per_tensor, 16);
    pt[4] = (uint8_t)scales[i];
    pt[5] = (uint8_t)(scales[i] >> 8);
    pt[6] = (uint8_t)(scales[i] >> 16);
    pt[7] = (uint8_t)(scales[i] >> 24);
    pt[8] = 0x00; pt[9] = 0x00; pt[10] = 0x00; pt[11] = 0x80; /* INT32_MIN */
    roundtrip_typed(pt, 16);
  }
}

static void test_encode_from_fields(void **state) {
  (void)state;
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  q.version = 1;
  q.u.per_channel.axis = 0;
  q.u.per_channel.scale_buffer_index = 1;
  q.u.per_channel.zero_point_buffer_index = 2;
  q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  uint8_t out[20];
  assert_int_equal(hurray__quant_encoded_len(&q), 20);
  hurray__quant_encode(&q, out);
  assert_memory_equal(out, k_per_channel_example, 20);

  /* raw is authoritative when set. */
  uint8_t raw[18] = {0xF3, 0x02, 0x34, 0x12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  q.raw = raw;
  q.raw_len = sizeof raw;
  assert_int_equal(hurray__quant_encoded_len(&q), sizeof raw);
  uint8_t out2[18];
  hurray__quant_encode(&q, out2);
  assert_memory_equal(out2, raw, sizeof raw);

  /* A private scheme without raw bytes: the header alone. */
  memset(&q, 0, sizeof q);
  q.scheme = 0xF5;
  q.version = 3;
  q.flags = 0xBEEF;
  assert_int_equal(hurray__quant_encoded_len(&q), 4);
  uint8_t hdr[4];
  hurray__quant_encode(&q, hdr);
  const uint8_t want[4] = {0xF5, 0x03, 0xEF, 0xBE};
  assert_memory_equal(hdr, want, 4);
}

static void test_param_buffer_count(void **state) {
  (void)state;
  HurrayQuantization q;
  HurrayError e;
  uint32_t n = 99;
  assert_int_equal(parse(k_per_tensor, 16, 0, &q, &e), HURRAY_OK);
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 0);
  assert_int_equal(parse(k_per_channel_example, 20, 0, &q, &e), HURRAY_OK);
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 2);
  q.u.per_channel.zero_point_buffer_index = 1; /* shared [scales | zero_points] */
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 1);
  q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  q.u.per_channel.zero_point_buffer_index = HURRAY_QUANT_NO_BUFFER;
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 1);
  assert_int_equal(parse(k_per_block, 24, 0, &q, &e), HURRAY_OK); /* symmetric */
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 1);
  q.flags = 0;
  q.u.per_block.zero_point_buffer_index = 2;
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 2);
  assert_int_equal(parse(k_nf4, 16, 0, &q, &e), HURRAY_OK);
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 1);
  assert_int_equal(parse(k_mxfp, 16, 0, &q, &e), HURRAY_OK);
  assert_true(hurray__quant_param_buffer_count(&q, &n));
  assert_int_equal(n, 1);
  const uint8_t priv[4] = {0xF0, 1, 0, 0};
  assert_int_equal(parse(priv, 4, 0, &q, &e), HURRAY_OK);
  assert_false(hurray__quant_param_buffer_count(&q, &n));
}

/* The reference corpus' quantized descriptor: its payload parses, with the
 * fields the manifest describes. */
static void test_golden_payload(void **state) {
  (void)state;
  const char *dir = tu_env_dir("HURRAY_GOLDEN_DIR");
  if (dir == NULL) skip();
  char path[512];
  snprintf(path, sizeof path, "%s/descriptors/quant_per_block_int4_128x128.bin", dir);
  size_t len = 0;
  uint8_t *bytes = tu_read_file(path, &len);
  if (bytes == NULL) skip();
  /* header 20 + shape 16 + byte_offset 8 + row-major (no payload) -> buffer
   * table at 44: count byte + 2 x 16 -> quantization_length at 77. */
  assert_true(len >= 81);
  uint32_t qlen = hurray__ld32(bytes + 77);
  assert_int_equal(qlen, 24);
  assert_true(len >= 81 + qlen);
  HurrayQuantization q;
  HurrayError e;
  assert_int_equal(hurray__quant_parse(bytes + 81, qlen, 0, 81, &q, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_PER_BLOCK_AFFINE);
  assert_int_equal(q.flags, HURRAY_QUANT_FLAG_SYMMETRIC);
  assert_int_equal(q.u.per_block.axis, 1);
  assert_int_equal(q.u.per_block.block_size, 128);
  assert_int_equal(q.u.per_block.scale_buffer_index, 1);
  assert_int_equal(q.u.per_block.zero_point_buffer_index, HURRAY_QUANT_NO_BUFFER);
  assert_int_equal(q.u.per_block.scale_type, HURRAY_QUANT_SCALE_F16);
  roundtrip_typed(bytes + 81, qlen);
  free(bytes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_typed_fields), cmocka_unit_test(test_parse_lengths),
      cmocka_unit_test(test_parse_scheme_tags),  cmocka_unit_test(test_parse_version),
      cmocka_unit_test(test_parse_flags),        cmocka_unit_test(test_parse_reserved_bytes),
      cmocka_unit_test(test_roundtrip),          cmocka_unit_test(test_encode_from_fields),
      cmocka_unit_test(test_param_buffer_count), cmocka_unit_test(test_golden_payload),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
