/* A quantization section on its own: hurray_quant_check / _decode /
 * _encoded_len / _encode (src/quant/section.c), and the section a
 * quantizer's arguments make (hurray_quant_request_resolve,
 * src/quant/request.c). */
#include <math.h>
#include <string.h>

#include "testutil.h"

static HurrayQuantization per_tensor(float scale, int32_t zp) {
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  q.version = 1;
  q.u.per_tensor.scale = scale;
  q.u.per_tensor.zero_point = zp;
  return q;
}

static HurrayQuantization per_channel(uint32_t axis, uint32_t s, uint32_t zp) {
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  q.version = 1;
  q.flags = zp == HURRAY_QUANT_NO_BUFFER ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
  q.u.per_channel.axis = axis;
  q.u.per_channel.scale_buffer_index = s;
  q.u.per_channel.zero_point_buffer_index = zp;
  q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  return q;
}

static HurrayQuantization block(uint8_t scheme, uint32_t axis, uint32_t k, uint32_t s) {
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = scheme;
  q.version = 1;
  if (scheme == HURRAY_QUANT_PER_BLOCK_AFFINE) {
    q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
    q.u.per_block.axis = axis;
    q.u.per_block.block_size = k;
    q.u.per_block.scale_buffer_index = s;
    q.u.per_block.zero_point_buffer_index = HURRAY_QUANT_NO_BUFFER;
    q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F16;
  } else if (scheme == HURRAY_QUANT_NF4) {
    q.u.nf4.axis = axis;
    q.u.nf4.block_size = k;
    q.u.nf4.scale_buffer_index = s;
  } else {
    q.u.mxfp.axis = axis;
    q.u.mxfp.block_size = k;
    q.u.mxfp.scale_buffer_index = s;
  }
  return q;
}

static void want_check(const HurrayQuantization *q, HurrayStatus st, const char *field) {
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_quant_check(q, 0, &e), st);
  if (st != HURRAY_OK) {
    assert_int_equal(e.status, st);
    assert_string_equal(e.field, field);
    assert_true(e.offset == HURRAY_NO_OFFSET);
  }
}

static void test_check_per_tensor(void **state) {
  (void)state;
  HurrayQuantization q = per_tensor(0.5f, -3);
  want_check(&q, HURRAY_OK, NULL);
  q = per_tensor(0.0f, 0);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale");
  q = per_tensor(INFINITY, 0);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale");
  q = per_tensor(NAN, 0);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale");
  /* any int32 zero point may fit some storage type */
  q = per_tensor(1.0f, INT32_MIN);
  want_check(&q, HURRAY_OK, NULL);
  q = per_tensor(1.0f, 0);
  q.version = 2;
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_version");
  q.version = 1;
  q.flags = 1;
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags");
}

static void test_check_axis_schemes(void **state) {
  (void)state;
  HurrayQuantization q = per_channel(0, 1, HURRAY_QUANT_NO_BUFFER);
  want_check(&q, HURRAY_OK, NULL);
  q = per_channel(63, 254, 1); /* highest axis and index; shared-free indices */
  want_check(&q, HURRAY_OK, NULL);
  q = per_channel(64, 1, HURRAY_QUANT_NO_BUFFER);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis");
  q = per_channel(0, 0, HURRAY_QUANT_NO_BUFFER);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale_buffer_index");
  q = per_channel(0, 255, HURRAY_QUANT_NO_BUFFER);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale_buffer_index");
  q = per_channel(0, 1, 0);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index");
  q = per_channel(0, 1, 1); /* scales and zero points sharing one buffer */
  want_check(&q, HURRAY_OK, NULL);
  q = per_channel(0, 1, 2);
  q.flags = HURRAY_QUANT_FLAG_SYMMETRIC; /* symmetric yet a zero-point index */
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index");
  q = per_channel(0, 1, HURRAY_QUANT_NO_BUFFER);
  q.flags = 0; /* asymmetric without a zero-point buffer */
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index");
  q = per_channel(0, 1, HURRAY_QUANT_NO_BUFFER);
  q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F16;
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale_type_tag");

  q = block(HURRAY_QUANT_PER_BLOCK_AFFINE, 1, 2, 1);
  want_check(&q, HURRAY_OK, NULL);
  q = block(HURRAY_QUANT_PER_BLOCK_AFFINE, 1, 3, 1);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
  q = block(HURRAY_QUANT_PER_BLOCK_AFFINE, 1, 0, 1);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
  q = block(HURRAY_QUANT_PER_BLOCK_AFFINE, 1, 1u << 31, 1); /* no huge probe tensor */
  want_check(&q, HURRAY_OK, NULL);
  q = block(HURRAY_QUANT_PER_BLOCK_AFFINE, 0, 32, 1);
  q.u.per_block.scale_type = 0x07;
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale_type_tag");
  q = block(HURRAY_QUANT_NF4, 0, 8, 1);
  want_check(&q, HURRAY_OK, NULL);
  q = block(HURRAY_QUANT_NF4, 0, 4, 1);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
  q = block(HURRAY_QUANT_MXFP, 0, 16, 1);
  want_check(&q, HURRAY_OK, NULL);
  q = block(HURRAY_QUANT_MXFP, 0, 2048, 1);
  want_check(&q, HURRAY_OK, NULL);
  q = block(HURRAY_QUANT_MXFP, 0, 4096, 1);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
  q = block(HURRAY_QUANT_MXFP, 0, 8, 1);
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
}

static void test_check_tags(void **state) {
  (void)state;
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.version = 1;
  q.scheme = 0x00;
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag");
  q.scheme = 0x30; /* unassigned */
  want_check(&q, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag");
  assert_int_equal(hurray_quant_check(&q, HURRAY_DECODE_PERMISSIVE, NULL), HURRAY_OK);
  q.scheme = 0xF4; /* private: opaque */
  want_check(&q, HURRAY_OK, NULL);
  assert_int_equal(hurray_quant_check(NULL, 0, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_check(&q, 0x8, NULL), HURRAY_ERR_INVALID_ARGUMENT);
}

static void test_decode_encode(void **state) {
  (void)state;
  /* per-channel-affine.md worked example: asymmetric, axis 0, buffers 1, 2. */
  static const uint8_t pc[20] = {0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
                                 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00};
  HurrayQuantization q;
  HurrayError e;
  assert_int_equal(hurray_quant_decode(pc, sizeof pc, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_PER_CHANNEL_AFFINE);
  assert_int_equal(q.u.per_channel.zero_point_buffer_index, 2);
  assert_ptr_equal(q.raw, pc);
  uint8_t out[32];
  uint64_t n = 0;
  assert_int_equal(hurray_quant_encode(&q, out, sizeof out, &n), HURRAY_OK);
  assert_int_equal(n, 20);
  assert_memory_equal(out, pc, 20);
  /* typed encoding gives the same bytes */
  q.raw = NULL;
  q.raw_len = 0;
  uint32_t len = 0;
  assert_int_equal(hurray_quant_encoded_len(&q, &len), HURRAY_OK);
  assert_int_equal(len, 20);
  memset(out, 0xAA, sizeof out);
  assert_int_equal(hurray_quant_encode(&q, out, 19, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n, 20);
  assert_int_equal(out[0], 0xAA);
  assert_int_equal(hurray_quant_encode(&q, out, 20, &n), HURRAY_OK);
  assert_memory_equal(out, pc, 20);

  /* padding is kept verbatim */
  uint8_t padded[24];
  memcpy(padded, pc, 20);
  memset(padded + 20, 0, 4);
  assert_int_equal(hurray_quant_decode(padded, sizeof padded, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.raw_len, 24);
  assert_int_equal(hurray_quant_encoded_len(&q, &len), HURRAY_OK);
  assert_int_equal(len, 24);

  /* too short, bad reserved byte, scheme rule: each names its field */
  hurray_error_clear(&e);
  assert_int_equal(hurray_quant_decode(pc, 19, 0, &q, &e), HURRAY_ERR_INVALID_QUANTIZATION);
  assert_string_equal(e.field, "quantization_length");
  uint8_t bad[20];
  memcpy(bad, pc, 20);
  bad[18] = 1;
  assert_int_equal(hurray_quant_decode(bad, 20, 0, &q, &e), HURRAY_ERR_INVALID_QUANTIZATION);
  assert_int_equal(e.offset, 18);
  memcpy(bad, pc, 20);
  bad[16] = 0x01; /* per-channel scale type must be float32 */
  assert_int_equal(hurray_quant_decode(bad, 20, 0, &q, &e), HURRAY_ERR_INVALID_QUANTIZATION);
  assert_string_equal(e.field, "quantization.scale_type_tag");
  assert_int_equal(hurray_quant_decode(pc, 3, 0, &q, &e), HURRAY_ERR_INVALID_QUANTIZATION);
  assert_int_equal(hurray_quant_decode(NULL, 4, 0, &q, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_decode(pc, 20, 0x10, &q, &e), HURRAY_ERR_INVALID_ARGUMENT);

  /* a private scheme decodes as opaque bytes */
  uint8_t priv[6] = {0xF2, 0x07, 0x12, 0x34, 0x56, 0x78};
  assert_int_equal(hurray_quant_decode(priv, sizeof priv, 0, &q, &e), HURRAY_OK);
  assert_int_equal(q.scheme, 0xF2);
  assert_int_equal(hurray_quant_encode(&q, out, sizeof out, &n), HURRAY_OK);
  assert_int_equal(n, 6);
  assert_memory_equal(out, priv, 6);
  assert_int_equal(hurray_quant_encode(NULL, out, 4, &n), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_encoded_len(NULL, &len), HURRAY_ERR_NULL_POINTER);
}

/* ---- hurray_quant_request_resolve ---------------------------------------------------- */

static HurrayQuantRequest request(uint8_t storage, const char *scheme) {
  HurrayQuantRequest r;
  memset(&r, 0, sizeof r);
  r.storage_type = storage;
  r.scheme = scheme;
  return r;
}

/* Resolves r for a rank-2 tensor and expects failure `st` naming `field`. */
static void resolve_fails(const HurrayQuantRequest *r, uint32_t rank, HurrayStatus st,
                          const char *field) {
  HurrayQuantization q;
  memset(&q, 0xAB, sizeof q);
  uint32_t n = 99;
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_quant_request_resolve(r, rank, &q, &n, &e), st);
  assert_string_equal(e.field, field);
  assert_int_equal(n, 99); /* nothing written */
  assert_int_equal(q.scheme, 0xAB);
}

static void test_request_resolve(void **state) {
  (void)state;
  HurrayQuantization q;
  uint32_t n = 0;
  HurrayError e;
  /* nothing but the storage type: per-tensor, one buffer, a scale the quantizer replaces */
  HurrayQuantRequest r = request(HURRAY_DTYPE_INT8, NULL);
  assert_int_equal(hurray_quant_request_resolve(&r, 2, &q, &n, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_PER_TENSOR_AFFINE);
  assert_int_equal(n, 1);
  assert_true(q.u.per_tensor.scale == 1.0f);
  /* an axis: per-channel along it, negative from the end; asymmetric adds buffer 2 */
  r.has_axis = true;
  r.axis = -2;
  r.asymmetric = true;
  assert_int_equal(hurray_quant_request_resolve(&r, 2, &q, &n, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_PER_CHANNEL_AFFINE);
  assert_int_equal(q.u.per_channel.axis, 0);
  assert_int_equal(q.u.per_channel.scale_buffer_index, 1);
  assert_int_equal(q.u.per_channel.zero_point_buffer_index, 2);
  assert_int_equal(q.flags, 0);
  assert_int_equal(n, 3);
  /* a block size: per-block along the last axis, symmetric, float16 scales */
  r = request(HURRAY_DTYPE_INT4, NULL);
  r.has_block_size = true;
  r.block_size = 16;
  r.scale_type = HURRAY_DTYPE_FLOAT16;
  assert_int_equal(hurray_quant_request_resolve(&r, 3, &q, &n, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_PER_BLOCK_AFFINE);
  assert_int_equal(q.u.per_block.axis, 2);
  assert_int_equal(q.u.per_block.block_size, 16);
  assert_int_equal(q.u.per_block.scale_type, HURRAY_QUANT_SCALE_F16);
  assert_int_equal(q.u.per_block.zero_point_buffer_index, HURRAY_QUANT_NO_BUFFER);
  assert_int_equal(q.flags, HURRAY_QUANT_FLAG_SYMMETRIC);
  assert_int_equal(n, 2);
  /* a small float: MXFP, blocks of 32; a name (short or full) picks the scheme */
  r = request(HURRAY_DTYPE_FLOAT8_E4M3, NULL);
  assert_int_equal(hurray_quant_request_resolve(&r, 1, &q, &n, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_MXFP);
  assert_int_equal(q.u.mxfp.block_size, 32);
  r = request(HURRAY_DTYPE_UINT4, "nf4");
  assert_int_equal(hurray_quant_request_resolve(&r, 1, &q, &n, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_NF4);
  assert_int_equal(q.u.nf4.block_size, 64);
  r = request(HURRAY_DTYPE_INT8, "mxfp"); /* MXINT8 */
  assert_int_equal(hurray_quant_request_resolve(&r, 1, &q, &n, &e), HURRAY_OK);
  assert_int_equal(q.scheme, HURRAY_QUANT_MXFP);
  static const char *const block_names[] = {"per_block", "per_block_affine"};
  for (int i = 0; i < 2; i++) {
    r = request(HURRAY_DTYPE_INT8, block_names[i]);
    assert_int_equal(hurray_quant_request_resolve(&r, 1, &q, &n, &e), HURRAY_OK);
    assert_int_equal(q.scheme, HURRAY_QUANT_PER_BLOCK_AFFINE);
    assert_int_equal(q.u.per_block.block_size, 32);
  }

  /* what does not apply, each naming its field */
  static const char *const unknown[] = {"per_row", "nf4_affine", "", "per_block_"};
  for (int i = 0; i < 4; i++) {
    r = request(HURRAY_DTYPE_INT8, unknown[i]);
    resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.scheme");
  }
  r = request(0xF3, NULL); /* a private type */
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.storage_type");
  r = request(HURRAY_DTYPE_UINT4, "nf4");
  r.asymmetric = true;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.asymmetric");
  r = request(HURRAY_DTYPE_INT8, "per_tensor");
  r.has_axis = true;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.axis");
  r = request(HURRAY_DTYPE_INT8, "per_channel"); /* no axis */
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.axis");
  r = request(HURRAY_DTYPE_INT8, NULL);
  r.has_block_size = true;
  r.block_size = 32;
  resolve_fails(&r, 0, HURRAY_ERR_INVALID_ARGUMENT, "request.axis"); /* a scalar */
  r.has_axis = true;
  r.axis = 2;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.axis");
  r.axis = -3;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.axis");
  r.axis = 0;
  r.block_size = (uint64_t)UINT32_MAX + 1u;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.block_size");
  r.block_size = 3; /* the scheme's own rule, from hurray_quant_check */
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size");
  r = request(HURRAY_DTYPE_INT8, "per_channel");
  r.has_axis = true;
  r.has_block_size = true;
  r.block_size = 32;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.block_size");
  r.has_block_size = false;
  r.scale_type = HURRAY_DTYPE_FLOAT16; /* per-channel scales are float32 */
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.scale_type");
  r = request(HURRAY_DTYPE_INT8, "per_block");
  r.scale_type = HURRAY_DTYPE_INT8;
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.scale_type");
  r = request(HURRAY_DTYPE_FLOAT8_E5M2, NULL);
  r.scale_type = HURRAY_DTYPE_FLOAT32; /* MXFP's are float8_e8m0 */
  resolve_fails(&r, 2, HURRAY_ERR_INVALID_ARGUMENT, "request.scale_type");
  assert_int_equal(hurray_quant_request_resolve(NULL, 2, &q, &n, NULL), HURRAY_ERR_NULL_POINTER);
  r = request(HURRAY_DTYPE_INT8, NULL);
  assert_int_equal(hurray_quant_request_resolve(&r, 2, NULL, &n, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_quant_request_resolve(&r, 2, &q, NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_per_tensor),
      cmocka_unit_test(test_check_axis_schemes),
      cmocka_unit_test(test_check_tags),
      cmocka_unit_test(test_decode_encode),
      cmocka_unit_test(test_request_resolve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
