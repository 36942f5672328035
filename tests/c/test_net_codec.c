/* The wire codec of the network transport (hurray/net.h): conformance vectors
 * written by hand from the tables of interchange.md § Network Transport
 * Protocol, a round trip of every message type, and every refusal. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The 61-byte descriptor of a float32 [3, 4] row-major tensor, one 48-byte
 * CPU buffer aligned to 64 (metadata.md; tests/vectors/valid/row_major_f32_3x4). */
static const uint8_t k_desc[61] = {
    'H', 'R', 'R', 'Y', 0x01, 0x00, 0x3D, 0x00, 0x00, 0x00, /* magic, 1.0, length 61 */
    0x00, 0x00, 0x00, 0x00, 0x03, 0x01,                     /* flags, float32, row-major */
    0x02, 0x00, 0x00, 0x00,                                 /* rank 2 */
    0x03, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0,   /* shape [3, 4] */
    0, 0, 0, 0, 0, 0, 0, 0,                                 /* byte_offset 0 */
    0x01,                                                   /* one buffer */
    0x30, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0,               /* 48 bytes, alignment 64 */
    0x00, 0x00, 0x00, 0x00};                                /* CPU, synced, standard */

/* Decodes a whole message (header + payload) with a 1 MiB maximum. */
static HurrayStatus decode(const uint8_t *b, size_t n, HurrayNetMessage *m, HurrayError *e) {
  HurrayNetHeader h;
  HurrayStatus st = hurray_net_header_decode(b, n, 1u << 20, &h, e);
  if (st != HURRAY_OK) return st;
  if (n - HURRAY_NET_HEADER_LEN != h.payload_length) {
    fail_msg("test vector: header says %u payload bytes, %zu given", h.payload_length,
             n - HURRAY_NET_HEADER_LEN);
  }
  return hurray_net_message_decode(&h, b + HURRAY_NET_HEADER_LEN, h.payload_length, m, e);
}

/* Encodes m and checks the bytes equal `want`. */
static void encodes_to(const HurrayNetMessage *m, const uint8_t *want, size_t n) {
  uint8_t out[512];
  size_t len = 0;
  HurrayError e;
  HurrayStatus st = hurray_net_message_encode(m, out, sizeof out, &len, &e);
  if (st != HURRAY_OK) fail_msg("encode: %s", e.message);
  assert_int_equal(len, n);
  if (memcmp(out, want, n) != 0) fail_msg("encoded %s", tu_hex(out, len));
  uint64_t n64 = 0;
  assert_int_equal(hurray_net_message_encoded_len(m, &n64, NULL), HURRAY_OK);
  assert_int_equal(n64, n);
}

/* Expects a refusal with this status, offset and field. */
static void refused(const uint8_t *b, size_t n, HurrayStatus want, uint64_t offset,
                    const char *field) {
  HurrayNetMessage m;
  HurrayError e;
  memset(&e, 0, sizeof e);
  HurrayStatus st = decode(b, n, &m, &e);
  if (st != want) fail_msg("status %s, want %s (%s)", hurray_status_name(st),
                           hurray_status_name(want), e.message);
  assert_int_equal(e.status, want);
  if (offset != HURRAY_NO_OFFSET && e.offset != offset)
    fail_msg("offset %llu, want %llu (%s)", (unsigned long long)e.offset,
             (unsigned long long)offset, e.message);
  if (field != NULL && strcmp(e.field, field) != 0)
    fail_msg("field '%s', want '%s' (%s)", e.field, field, e.message);
}

/* ---- header ----------------------------------------------------------------- */

static void test_header(void **state) {
  (void)state;
  const uint8_t b[12] = {0x05, 0, 0, 0, 0x07, 0, 0, 0, 0x10, 0, 0, 0};
  HurrayNetHeader h;
  HurrayError e;
  assert_int_equal(hurray_net_header_decode(b, 12, 16, &h, &e), HURRAY_OK);
  assert_int_equal(h.message_type, HURRAY_NET_TENSOR_DATA);
  assert_int_equal(h.stream_id, 7);
  assert_int_equal(h.payload_length, 16);
  uint8_t out[12];
  assert_int_equal(hurray_net_header_encode(&h, out), HURRAY_OK);
  assert_memory_equal(out, b, 12);
  /* payload_length above the receiver's maximum */
  assert_int_equal(hurray_net_header_decode(b, 12, 15, &h, &e), HURRAY_ERR_STREAM_LIMIT);
  assert_int_equal(e.offset, 8);
  assert_string_equal(e.field, "payload_length");
  /* stream id 0 is reserved */
  const uint8_t z[12] = {0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(hurray_net_header_decode(z, 12, 16, &h, &e), HURRAY_ERR_PROTOCOL);
  assert_int_equal(e.offset, 4);
  /* short */
  assert_int_equal(hurray_net_header_decode(b, 11, 16, &h, &e), HURRAY_ERR_PROTOCOL);
  assert_int_equal(hurray_net_header_decode(NULL, 12, 16, &h, &e), HURRAY_ERR_NULL_POINTER);
  assert_string_equal(hurray_net_message_type_name(0x0D), "RDMA_READY");
  assert_string_equal(hurray_net_message_type_name(0xF7), "PRIVATE");
  assert_null(hurray_net_message_type_name(0xFF));
  assert_null(hurray_net_message_type_name(0x0E));
  assert_string_equal(hurray_net_error_code_name(5), "DEVICE_UNAVAILABLE");
  assert_string_equal(hurray_net_error_code_name(0xF0), "PRIVATE");
  assert_null(hurray_net_error_code_name(0));
  assert_null(hurray_net_error_code_name(9));
}

/* ---- HELLO ------------------------------------------------------------------- */

/* CLIENT_HELLO, stream 1: version 1, max 65536, TRANSCODING; layouts
 * [row-major, private 0xF3 with metadata AA BB, column-major]; devices
 * [CPU, CUDA]; memory classes [standard]. */
static const uint8_t k_hello[] = {
    0x01, 0, 0, 0, 0x01, 0, 0, 0, 0x20, 0, 0, 0, /* header: 32 payload bytes */
    0x01, 0, 0, 0,                               /* protocol_version 1 */
    0x00, 0x00, 0x01, 0x00,                      /* max_message_size 65536 */
    0x01, 0, 0, 0, 0, 0, 0, 0,                   /* capability_flags TRANSCODING */
    0x03, 0x00,                                  /* 3 layout entries */
    0x01, 0xF3, 0x02, 0x00, 0xAA, 0xBB, 0x02,    /* 0x01 | 0xF3 len 2 AA BB | 0x02 */
    0x02, 0x00, 0x00, 0x01,                      /* devices [CPU, CUDA] */
    0x01, 0x00, 0x00};                           /* memory classes [standard] */

static void test_client_hello_vector(void **state) {
  (void)state;
  HurrayNetMessage m;
  HurrayError e;
  if (decode(k_hello, sizeof k_hello, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  const HurrayNetHello *h = &m.u.hello;
  assert_int_equal(m.type, HURRAY_NET_CLIENT_HELLO);
  assert_int_equal(m.stream_id, 1);
  assert_int_equal(h->protocol_version, 1);
  assert_int_equal(h->max_message_size, 65536);
  assert_int_equal(h->capabilities, HURRAY_NET_CAP_TRANSCODING);
  assert_int_equal(h->layouts.count, 3);
  assert_int_equal(h->layouts.len, 7);
  HurrayNetLayoutEntry le;
  uint32_t cur = 0;
  assert_true(hurray_net_layout_list_next(&h->layouts, &cur, &le));
  assert_int_equal(le.tag, 0x01);
  assert_int_equal(le.ext_len, 0);
  assert_null(le.ext);
  assert_true(hurray_net_layout_list_next(&h->layouts, &cur, &le));
  assert_int_equal(le.tag, 0xF3);
  assert_int_equal(le.ext_len, 2);
  assert_int_equal(le.ext[0], 0xAA);
  assert_int_equal(le.ext[1], 0xBB);
  assert_true(hurray_net_layout_list_next(&h->layouts, &cur, &le));
  assert_int_equal(le.tag, 0x02);
  assert_false(hurray_net_layout_list_next(&h->layouts, &cur, &le));
  assert_int_equal(h->device_count, 2);
  assert_int_equal(h->devices[1], HURRAY_DEVICE_CUDA);
  assert_int_equal(h->memory_class_count, 1);
  assert_int_equal(h->memory_classes[0], HURRAY_MEMORY_STANDARD);
  encodes_to(&m, k_hello, sizeof k_hello);

  /* The same list built from entries. */
  const uint8_t meta[2] = {0xAA, 0xBB};
  HurrayNetLayoutEntry ents[3] = {{0x01, 0, NULL}, {0xF3, 2, meta}, {0x02, 0, NULL}};
  uint8_t lb[16];
  size_t ln = 0;
  assert_int_equal(hurray_net_layout_list_encode(ents, 3, lb, sizeof lb, &ln, NULL), HURRAY_OK);
  assert_int_equal(ln, 7);
  assert_memory_equal(lb, k_hello + 12 + 18, 7);
  assert_int_equal(hurray_net_layout_list_encode(ents, 3, lb, 6, &ln, NULL),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(ln, 7);
  HurrayNetLayoutEntry bad = {0x01, 1, meta};
  assert_int_equal(hurray_net_layout_list_encode(&bad, 1, lb, sizeof lb, &ln, NULL),
                   HURRAY_ERR_PROTOCOL);
  HurrayNetLayoutEntry invalid = {0xFF, 0, NULL};
  assert_int_equal(hurray_net_layout_list_encode(&invalid, 1, lb, sizeof lb, &ln, NULL),
                   HURRAY_ERR_PROTOCOL);
}

/* A copy of k_hello with one byte changed (index in the message). */
static uint8_t *hello_with(size_t at, uint8_t v) {
  static uint8_t b[sizeof k_hello];
  memcpy(b, k_hello, sizeof b);
  b[at] = v;
  return b;
}

static void test_hello_refusals(void **state) {
  (void)state;
  /* Every truncation: the header announces the shorter payload. Only the
   * cut right after the device list is valid (the class list is absent). */
  for (size_t n = HURRAY_NET_HEADER_LEN; n < sizeof k_hello; n++) {
    uint8_t b[sizeof k_hello];
    memcpy(b, k_hello, n);
    b[8] = (uint8_t)(n - HURRAY_NET_HEADER_LEN);
    HurrayNetMessage m;
    HurrayError e;
    HurrayStatus st = decode(b, n, &m, &e);
    if (n == sizeof k_hello - 3) {
      assert_int_equal(st, HURRAY_OK);
      assert_int_equal(m.u.hello.memory_class_count, 0);
      assert_int_equal(m.u.hello.device_count, 2);
    } else if (st != HURRAY_ERR_PROTOCOL) {
      fail_msg("cut at %zu: %s", n, hurray_status_name(st));
    }
  }
  refused(hello_with(12, 0), sizeof k_hello, HURRAY_ERR_VERSION_MISMATCH, 12,
          "protocol_version");
  /* max_message_size 4095 < 4096 */
  uint8_t *b = hello_with(17, 0x0F);
  b[18] = 0;
  b[16] = 0xFF;
  refused(b, sizeof k_hello, HURRAY_ERR_PROTOCOL, 16, "max_message_size");
  refused(hello_with(20, 0x10), sizeof k_hello, HURRAY_ERR_PROTOCOL, 20, "capability_flags");
  refused(hello_with(27, 0x80), sizeof k_hello, HURRAY_ERR_PROTOCOL, 20, "capability_flags");
  /* RDMA_GPUDIRECT without RDMA_DATA_PLANE; with it, fine */
  refused(hello_with(20, 0x08), sizeof k_hello, HURRAY_ERR_PROTOCOL, 20, "capability_flags");
  HurrayNetMessage m;
  assert_int_equal(decode(hello_with(20, 0x0C), sizeof k_hello, &m, NULL), HURRAY_OK);
  /* layout tags 0xFF and 0x00 are invalid; a reserved tag is kept */
  refused(hello_with(30, 0xFF), sizeof k_hello, HURRAY_ERR_PROTOCOL, 30,
          "supported_layouts[0].layout_tag");
  refused(hello_with(30, 0x00), sizeof k_hello, HURRAY_ERR_PROTOCOL, 30, NULL);
  assert_int_equal(decode(hello_with(30, 0x3A), sizeof k_hello, &m, NULL), HURRAY_OK);
  /* a count beyond the bytes: 4 entries */
  refused(hello_with(28, 0x04), sizeof k_hello, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, NULL);
  /* private entry metadata longer than the payload */
  refused(hello_with(32, 0x40), sizeof k_hello, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET,
          "supported_layouts[1].ext_metadata");
  /* device 0xFF, memory class 0xFF */
  refused(hello_with(40, 0xFF), sizeof k_hello, HURRAY_ERR_PROTOCOL, 40,
          "supported_devices[1]");
  refused(hello_with(43, 0xFF), sizeof k_hello, HURRAY_ERR_PROTOCOL, 43,
          "supported_memory_classes[0]");
  /* a trailing byte: refused at version 1, skipped at version 2 */
  uint8_t t[sizeof k_hello + 1];
  memcpy(t, k_hello, sizeof k_hello);
  t[sizeof k_hello] = 0x55;
  t[8]++;
  refused(t, sizeof t, HURRAY_ERR_PROTOCOL, sizeof k_hello, "payload_length");
  t[12] = 2;
  assert_int_equal(decode(t, sizeof t, &m, NULL), HURRAY_OK);
  assert_int_equal(m.u.hello.protocol_version, 2);
}

/* ---- TENSOR_REQUEST ---------------------------------------------------------- */

/* Stream 3: key "w.0", layouts [0xF0 with no metadata],
 * preferred device CUDA, min_alignment 256, ALLOW_TRANSCODE | PARALLEL_OK. */
static const uint8_t k_request[] = {
    0x03, 0, 0, 0, 0x03, 0, 0, 0, 0x15, 0, 0, 0, /* header: 21 payload bytes */
    0x03, 0, 0, 0, 'w', '.', '0',                /* tensor_key */
    0x01, 0x00, 0xF0, 0x00, 0x00,                /* 1 layout: 0xF0, metadata length 0 */
    0x01,                                        /* preferred_device CUDA */
    0x00, 0x01, 0x00, 0x00,                      /* min_alignment 256 */
    0x03, 0x00, 0x00, 0x00};                     /* request_flags */

static void test_request_vector(void **state) {
  (void)state;
  HurrayNetMessage m;
  HurrayError e;
  if (decode(k_request, sizeof k_request, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  const HurrayNetRequest *r = &m.u.request;
  assert_int_equal(r->key_len, 3);
  assert_memory_equal(r->key, "w.0", 3);
  assert_int_equal(r->layouts.count, 1);
  assert_int_equal(r->layouts.len, 3);
  assert_int_equal(r->preferred_device, HURRAY_DEVICE_CUDA);
  assert_int_equal(r->min_alignment, 256);
  assert_int_equal(r->flags, HURRAY_NET_REQ_ALLOW_TRANSCODE | HURRAY_NET_REQ_PARALLEL_OK);
  encodes_to(&m, k_request, sizeof k_request);

  uint8_t b[sizeof k_request];
#define WITH(at, v) (memcpy(b, k_request, sizeof b), b[at] = (uint8_t)(v), b)
  refused(WITH(26, 0x03), sizeof b, HURRAY_ERR_PROTOCOL, 25, "min_alignment"); /* 768 */
  refused(WITH(26, 0x00), sizeof b, HURRAY_ERR_PROTOCOL, 25, "min_alignment"); /* 0 */
  refused(WITH(29, 0x04), sizeof b, HURRAY_ERR_PROTOCOL, 29, "request_flags");
  refused(WITH(32, 0x80), sizeof b, HURRAY_ERR_PROTOCOL, 29, "request_flags");
  refused(WITH(24, 0xFF), sizeof b, HURRAY_ERR_PROTOCOL, 24, "preferred_device");
  refused(WITH(17, 0xC3), sizeof b, HURRAY_ERR_PROTOCOL, 16, "tensor_key");        /* bad UTF-8 */
  refused(WITH(12, 0x30), sizeof b, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, "tensor_key");
  refused(WITH(15, 0x80), sizeof b, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, "tensor_key");
  refused(WITH(19, 0x02), sizeof b, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, NULL);
#undef WITH
  /* one byte short: the flags do not fit */
  memcpy(b, k_request, sizeof b);
  b[8]--;
  refused(b, sizeof b - 1, HURRAY_ERR_PROTOCOL, 29, "request_flags");
}

/* ---- TENSOR_DESCRIPTOR, TENSOR_DATA, TENSOR_DATA_END ------------------------- */

static size_t descriptor_message(uint8_t *b, uint64_t total, uint32_t index, uint32_t shards) {
  const uint8_t head[12] = {0x04, 0, 0, 0, 0x03, 0, 0, 0, 61 + 16, 0, 0, 0};
  memcpy(b, head, 12);
  memcpy(b + 12, k_desc, sizeof k_desc);
  for (int i = 0; i < 8; i++) b[73 + i] = (uint8_t)(total >> (8 * i));
  for (int i = 0; i < 4; i++) b[81 + i] = (uint8_t)(index >> (8 * i));
  for (int i = 0; i < 4; i++) b[85 + i] = (uint8_t)(shards >> (8 * i));
  return 89;
}

static void test_descriptor_vector(void **state) {
  (void)state;
  uint8_t b[96];
  size_t n = descriptor_message(b, 48, 0, 1);
  HurrayNetMessage m;
  HurrayError e;
  if (decode(b, n, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  assert_int_equal(m.u.descriptor.descriptor_len, 61);
  assert_ptr_equal(m.u.descriptor.descriptor, b + 12);
  assert_int_equal(m.u.descriptor.total_data_bytes, 48);
  assert_int_equal(m.u.descriptor.shard_index, 0);
  assert_int_equal(m.u.descriptor.total_shards, 1);
  encodes_to(&m, b, n);
  /* shard 1 of 2 is valid on the wire */
  n = descriptor_message(b, 48, 1, 2);
  assert_int_equal(decode(b, n, &m, NULL), HURRAY_OK);
  n = descriptor_message(b, 48, 0, 0);
  refused(b, n, HURRAY_ERR_PROTOCOL, 85, "total_shards");
  n = descriptor_message(b, 48, 2, 2);
  refused(b, n, HURRAY_ERR_PROTOCOL, 81, "shard_index");
  /* the descriptor's own length says 60: the transport fields shift */
  n = descriptor_message(b, 48, 0, 1);
  b[12 + 6] = 60;
  refused(b, n, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, NULL);
  /* a bad magic is the descriptor's status, at its offset */
  n = descriptor_message(b, 48, 0, 1);
  b[12] = 'X';
  refused(b, n, HURRAY_ERR_INVALID_MAGIC, 12, "descriptor");
  /* a payload ending inside the descriptor */
  n = descriptor_message(b, 48, 0, 1);
  b[8] = 40;
  refused(b, 52, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, "descriptor");
}

static void test_data_vectors(void **state) {
  (void)state;
  const uint8_t d[] = {0x05, 0, 0, 0, 0x03, 0, 0, 0, 0x0B, 0, 0, 0, /* 11 bytes */
                       0x10, 0, 0, 0, 0, 0, 0, 0,                   /* offset 16 */
                       0xDE, 0xAD, 0xBE};
  HurrayNetMessage m;
  HurrayError e;
  if (decode(d, sizeof d, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  assert_int_equal(m.u.data.offset, 16);
  assert_int_equal(m.u.data.len, 3);
  assert_ptr_equal(m.u.data.data, d + 20);
  encodes_to(&m, d, sizeof d);
  /* no data bytes; not even the offset */
  const uint8_t empty[] = {0x05, 0, 0, 0, 0x03, 0, 0, 0, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  refused(empty, sizeof empty, HURRAY_ERR_PROTOCOL, 20, "data");
  const uint8_t short_[] = {0x05, 0, 0, 0, 0x03, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0};
  refused(short_, sizeof short_, HURRAY_ERR_PROTOCOL, 12, "byte_offset_in_buffer");
  /* offset + length past 2^64 */
  uint8_t wrap[sizeof d];
  memcpy(wrap, d, sizeof d);
  memset(wrap + 12, 0xFF, 8);
  refused(wrap, sizeof wrap, HURRAY_ERR_PROTOCOL, 12, "byte_offset_in_buffer");
  /* DATA_END, PUT_ACK and RDMA_READY are empty */
  const uint8_t end[] = {0x06, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(decode(end, sizeof end, &m, NULL), HURRAY_OK);
  encodes_to(&m, end, sizeof end);
  const uint8_t end1[] = {0x06, 0, 0, 0, 0x03, 0, 0, 0, 1, 0, 0, 0, 0};
  refused(end1, sizeof end1, HURRAY_ERR_PROTOCOL, 12, "payload_length");
  const uint8_t ack1[] = {0x08, 0, 0, 0, 0x03, 0, 0, 0, 1, 0, 0, 0, 0};
  refused(ack1, sizeof ack1, HURRAY_ERR_PROTOCOL, 12, "payload_length");
  const uint8_t ready1[] = {0x0D, 0, 0, 0, 0x03, 0, 0, 0, 1, 0, 0, 0, 0};
  refused(ready1, sizeof ready1, HURRAY_ERR_PROTOCOL, 12, "payload_length");
}

/* ---- TENSOR_PUT, ERROR, RDMA, PING, private, unknown -------------------------- */

static void test_put_vector(void **state) {
  (void)state;
  uint8_t b[128];
  const uint8_t head[] = {0x07, 0, 0, 0, 0x09, 0, 0, 0, 5 + 4 + 61 + 8, 0, 0, 0,
                          0x01, 0, 0, 0, 'k', 61, 0, 0, 0};
  memcpy(b, head, sizeof head);
  memcpy(b + 21, k_desc, 61);
  const uint8_t total[8] = {0x30, 0, 0, 0, 0, 0, 0, 0};
  memcpy(b + 82, total, 8);
  size_t n = 90;
  HurrayNetMessage m;
  HurrayError e;
  if (decode(b, n, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  assert_int_equal(m.u.put.key_len, 1);
  assert_int_equal(m.u.put.key[0], 'k');
  assert_int_equal(m.u.put.descriptor_len, 61);
  assert_int_equal(m.u.put.total_data_bytes, 48);
  encodes_to(&m, b, n);
  /* the length prefix disagrees with descriptor_length */
  b[17] = 62;
  b[8]++;
  b[n] = 0;
  refused(b, n + 1, HURRAY_ERR_PROTOCOL, 21, "descriptor");
  b[17] = 0;
  refused(b, n + 1, HURRAY_ERR_PROTOCOL, 17, "descriptor.length");
  b[17] = 200;
  refused(b, n + 1, HURRAY_ERR_PROTOCOL, 21, "descriptor");
}

static void test_error_vector(void **state) {
  (void)state;
  const uint8_t b[] = {0x09, 0, 0, 0, 0x02, 0, 0, 0, 0x0B, 0, 0, 0,
                       0x02, 0, 0, 0,                   /* UNKNOWN_TENSOR */
                       0x03, 0, 0, 0, 'w', 0xC3, 0xA9}; /* "wé" */
  HurrayNetMessage m;
  HurrayError e;
  if (decode(b, sizeof b, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  assert_int_equal(m.u.error.code, HURRAY_NET_E_UNKNOWN_TENSOR);
  assert_int_equal(m.u.error.text_len, 3);
  encodes_to(&m, b, sizeof b);
  uint8_t bad[sizeof b];
  memcpy(bad, b, sizeof b);
  bad[22] = 0xFF;
  refused(bad, sizeof bad, HURRAY_ERR_PROTOCOL, 20, "message");
  memcpy(bad, b, sizeof b);
  bad[16] = 4;
  refused(bad, sizeof bad, HURRAY_ERR_PROTOCOL, 20, "message");
}

static void test_other_types(void **state) {
  (void)state;
  const uint8_t reg[] = {0x0C, 0, 0, 0, 0x02, 0, 0, 0, 0x16, 0, 0, 0,
                         0x00, 0x10, 0, 0, 0, 0, 0, 0, /* remote_addr 0x1000 */
                         0x30, 0, 0, 0, 0, 0, 0, 0,    /* length 48 */
                         0x02, 0, 0, 0, 0x12, 0x34};   /* rkey */
  HurrayNetMessage m;
  HurrayError e;
  if (decode(reg, sizeof reg, &m, &e) != HURRAY_OK) fail_msg("%s", e.message);
  assert_int_equal(m.u.rdma_register.remote_addr, 0x1000);
  assert_int_equal(m.u.rdma_register.length, 48);
  assert_int_equal(m.u.rdma_register.rkey_len, 2);
  encodes_to(&m, reg, sizeof reg);
  uint8_t bad[sizeof reg];
  memcpy(bad, reg, sizeof reg);
  bad[28] = 3;
  refused(bad, sizeof bad, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, "rkey");
  /* PING carries opaque bytes; PONG too */
  const uint8_t ping[] = {0x0A, 0, 0, 0, 0x02, 0, 0, 0, 2, 0, 0, 0, 'h', 'i'};
  assert_int_equal(decode(ping, sizeof ping, &m, NULL), HURRAY_OK);
  assert_int_equal(m.u.opaque.len, 2);
  encodes_to(&m, ping, sizeof ping);
  const uint8_t priv[] = {0xF5, 0, 0, 0, 0x02, 0, 0, 0, 1, 0, 0, 0, 0x7F};
  assert_int_equal(decode(priv, sizeof priv, &m, NULL), HURRAY_OK);
  assert_int_equal(m.type, 0xF5);
  encodes_to(&m, priv, sizeof priv);
  const uint8_t ff[] = {0xFF, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0};
  refused(ff, sizeof ff, HURRAY_ERR_PROTOCOL, 0, "message_type");
  const uint8_t unk[] = {0x0E, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0};
  refused(unk, sizeof unk, HURRAY_ERR_PROTOCOL, 0, "message_type");
  const uint8_t big[] = {0x01, 0x01, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0};
  refused(big, sizeof big, HURRAY_ERR_PROTOCOL, 0, "message_type");
  /* the encoder refuses them too */
  HurrayNetMessage u;
  memset(&u, 0, sizeof u);
  u.type = 0xFF;
  u.stream_id = 1;
  uint8_t out[64];
  size_t n = 0;
  assert_int_equal(hurray_net_message_encode(&u, out, sizeof out, &n, NULL), HURRAY_ERR_PROTOCOL);
  u.type = 0x0E;
  assert_int_equal(hurray_net_message_encode(&u, out, sizeof out, &n, NULL), HURRAY_ERR_PROTOCOL);
}

/* An empty payload given as NULL (a transport that allocates nothing for 0
 * bytes; the fuzzer's first finding, UB under UBSan): every type decodes
 * or is refused as for an empty buffer. */
static void test_empty_payload_null(void **state) {
  (void)state;
  static const uint8_t none[1] = {0};
  for (uint32_t t = 0x01; t <= 0x0D; t++) {
    HurrayNetHeader h = {t, 3, 0};
    HurrayNetMessage a, b;
    HurrayError ea, eb;
    HurrayStatus sa = hurray_net_message_decode(&h, NULL, 0, &a, &ea);
    HurrayStatus sb = hurray_net_message_decode(&h, none, 0, &b, &eb);
    assert_int_equal(sa, sb);
    if (sa != HURRAY_OK) assert_string_equal(ea.message, eb.message);
  }
  /* TENSOR_DESCRIPTOR needs a descriptor: refused, naming it */
  HurrayNetHeader h = {HURRAY_NET_TENSOR_DESCRIPTOR, 3, 0};
  HurrayNetMessage m;
  HurrayError e;
  assert_int_equal(hurray_net_message_decode(&h, NULL, 0, &m, &e), HURRAY_ERR_PROTOCOL);
  assert_non_null(strstr(e.message, "descriptor"));
}

/* ---- round trip of every type ------------------------------------------------- */

static void round_trip(const HurrayNetMessage *m) {
  uint8_t out[512];
  size_t n = 0;
  HurrayError e;
  if (hurray_net_message_encode(m, out, sizeof out, &n, &e) != HURRAY_OK)
    fail_msg("type %u: %s", m->type, e.message);
  HurrayNetMessage back;
  if (decode(out, n, &back, &e) != HURRAY_OK) fail_msg("type %u: %s", m->type, e.message);
  assert_int_equal(back.type, m->type);
  assert_int_equal(back.stream_id, m->stream_id);
  uint8_t again[512];
  size_t n2 = 0;
  assert_int_equal(hurray_net_message_encode(&back, again, sizeof again, &n2, NULL), HURRAY_OK);
  assert_int_equal(n2, n);
  assert_memory_equal(again, out, n);
  /* too small a capacity: the length, nothing written */
  size_t n3 = 0;
  assert_int_equal(hurray_net_message_encode(m, out, n - 1, &n3, NULL),
                   HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n3, n);
}

static void test_round_trip_all(void **state) {
  (void)state;
  const uint8_t devs[] = {0x00, 0x02, 0xF1};
  const uint8_t classes[] = {0x00, 0x01};
  const uint8_t lay[] = {0x01, 0xFE, 0x01, 0x00, 0x09, 0x40};
  const uint8_t data[] = {1, 2, 3, 4, 5};
  HurrayNetMessage m;
  for (uint32_t t = 1; t <= 0x0D; t++) {
    memset(&m, 0, sizeof m);
    m.type = t;
    m.stream_id = 0x01020304u + t;
    switch (t) {
      case HURRAY_NET_CLIENT_HELLO:
      case HURRAY_NET_SERVER_HELLO:
        m.u.hello = (HurrayNetHello){1, 1u << 20, 0x3, {3, sizeof lay, lay}, 3, devs, 2, classes};
        break;
      case HURRAY_NET_TENSOR_REQUEST:
        m.u.request = (HurrayNetRequest){(const uint8_t *)"key", 3, {3, sizeof lay, lay},
                                         0x01, 64, HURRAY_NET_REQ_ALLOW_TRANSCODE};
        break;
      case HURRAY_NET_TENSOR_DESCRIPTOR:
        m.u.descriptor = (HurrayNetTensorDescriptor){k_desc, 61, 48, 0, 1};
        break;
      case HURRAY_NET_TENSOR_DATA:
        m.u.data = (HurrayNetData){40, data, sizeof data};
        break;
      case HURRAY_NET_TENSOR_PUT:
        m.u.put = (HurrayNetPut){(const uint8_t *)"", 0, k_desc, 61, 48};
        break;
      case HURRAY_NET_ERROR:
        m.u.error = (HurrayNetErrorMessage){HURRAY_NET_E_SHARD_MISMATCH,
                                            (const uint8_t *)"no", 2};
        break;
      case HURRAY_NET_RDMA_REGISTER:
        m.u.rdma_register = (HurrayNetRdmaRegister){1, 48, data, 4};
        break;
      case HURRAY_NET_PING:
      case HURRAY_NET_PONG:
        m.u.opaque = (HurrayNetOpaque){data, 3};
        break;
      default:
        break;
    }
    round_trip(&m);
  }
  /* an invalid field is refused by the encoder, with the decoder's detail */
  memset(&m, 0, sizeof m);
  m.type = HURRAY_NET_TENSOR_REQUEST;
  m.stream_id = 1;
  m.u.request = (HurrayNetRequest){(const uint8_t *)"k", 1, {0, 0, NULL}, 0, 48, 0};
  uint8_t out[64];
  size_t n = 0;
  HurrayError e;
  assert_int_equal(hurray_net_message_encode(&m, out, sizeof out, &n, &e), HURRAY_ERR_PROTOCOL);
  assert_string_equal(e.field, "min_alignment");
  /* a NULL view with a length */
  m.u.request = (HurrayNetRequest){NULL, 1, {0, 0, NULL}, 0, 64, 0};
  assert_int_equal(hurray_net_message_encode(&m, out, sizeof out, &n, &e),
                   HURRAY_ERR_NULL_POINTER);
  /* stream 0 */
  m.u.request = (HurrayNetRequest){(const uint8_t *)"k", 1, {0, 0, NULL}, 0, 64, 0};
  m.stream_id = 0;
  assert_int_equal(hurray_net_message_encode(&m, out, sizeof out, &n, &e), HURRAY_ERR_PROTOCOL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header),
      cmocka_unit_test(test_client_hello_vector),
      cmocka_unit_test(test_hello_refusals),
      cmocka_unit_test(test_request_vector),
      cmocka_unit_test(test_descriptor_vector),
      cmocka_unit_test(test_data_vectors),
      cmocka_unit_test(test_put_vector),
      cmocka_unit_test(test_error_vector),
      cmocka_unit_test(test_other_types),
      cmocka_unit_test(test_empty_payload_null),
      cmocka_unit_test(test_round_trip_all),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
