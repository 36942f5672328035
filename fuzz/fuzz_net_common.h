/*
 * The two libFuzzer targets of the network transport share this harness:
 * fuzz_net_client.c (the client's frame decoding) and fuzz_net_server.c (the
 * server's). Each input goes through both layers of its side:
 *
 *  1. a bare session (hurray_net_session_*) in that role;
 *  2. the blocking transport (hurray_net_connection_*, src/net/socket.c) over
 *     a socketpair, the peer's bytes written in advance: the client says
 *     HELLO then gets, pings and puts; the server serves a small tensor and
 *     takes puts, or serves a table (hurray_net_table_serve). This covers the transport's own receive paths (data frames
 *     read in place, payload skipping, truncated frames, ERROR answers).
 *
 * Input: one byte (bit 0: the client allows parallel shards; bit 1: private
 * types agreed; bits 2-7: the client's
 * calls, two bits each: get, ping, put, get into a 16-byte buffer; for the
 * server, bit 2: serve through libhurray's server table, with the catalog,
 * shards, layout transcoding and capped pushes, instead of bare handlers), then
 * records of one direction byte (bit 0: this side sends, else the peer
 * does) and one message (12-byte header + payload_length bytes). The
 * transport is fed the peer's records, in order, then whatever trails the
 * last whole record (a truncated frame).
 *
 * Properties checked on every input (a violation traps):
 *  - nothing crashes, reads out of bounds, leaks or hangs (ASan, libFuzzer);
 *  - a refusal is exactly a failing status, with an error code from the
 *    spec's table, and the detail names the same status;
 *  - an accepted or sent message encodes back to exactly its bytes;
 *  - the ERROR a refusal asks for can be sent, unless the connection closes;
 *  - a closed connection stays closed;
 *  - the transport returns a status from its documented set, and a tensor
 *    it delivers (a composite's members too) has exactly the descriptor's
 *    total bytes.
 */
#ifndef HURRAY_FUZZ_NET_COMMON_H
#define HURRAY_FUZZ_NET_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hurray/hurray.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do {              \
    if (!(cond)) __builtin_trap(); \
  } while (0)

/* The message re-encodes to the bytes it came from; a HELLO may differ in
 * what decoding dropped (fields a newer version appended) or supplied (the
 * count of an absent memory class list). */
static void same_bytes(const HurrayNetMessage *m, const uint8_t *frame, size_t n) {
  uint8_t *out = malloc(n + 2);
  CHECK(out != NULL);
  size_t len = 0;
  CHECK(hurray_net_message_encode(m, out, n + 2, &len, NULL) == HURRAY_OK);
  if (m->type == HURRAY_NET_CLIENT_HELLO || m->type == HURRAY_NET_SERVER_HELLO) {
    size_t common = len < n ? len : n;
    CHECK(len <= n + 2 && memcmp(out + 12, frame + 12, common - 12 - 2) == 0);
  } else {
    CHECK(len == n && memcmp(out, frame, n) == 0);
  }
  free(out);
}

/* The records through a bare session in `role`. */
static void fuzz_session(HurrayNetRole role, const uint8_t *data, size_t size) {
  HurrayNetSessionOptions o = {HURRAY_NET_MIN_MESSAGE_SIZE, 4, 0, (data[0] & 2) != 0};
  HurrayNetSession *s = NULL;
  CHECK(hurray_net_session_new(role, &o, &s, NULL) == HURRAY_OK);
  size_t pos = 1;
  while (size - pos >= 1 + HURRAY_NET_HEADER_LEN) {
    bool outgoing = data[pos] & 1;
    const uint8_t *frame = data + pos + 1;
    size_t left = size - pos - 1;
    uint32_t plen = (uint32_t)frame[8] | ((uint32_t)frame[9] << 8) |
                    ((uint32_t)frame[10] << 16) | ((uint32_t)frame[11] << 24);
    if (plen > left - HURRAY_NET_HEADER_LEN) break;
    size_t n = HURRAY_NET_HEADER_LEN + plen;
    pos += 1 + n;
    bool closed = hurray_net_session_state(s) == HURRAY_NET_STATE_CLOSED;
    HurrayError e;
    HurrayNetHeader h;
    HurrayNetMessage m;
    if (outgoing) {
      if (hurray_net_header_decode(frame, n, UINT32_MAX, &h, NULL) != HURRAY_OK) continue;
      if (hurray_net_message_decode(&h, frame + HURRAY_NET_HEADER_LEN, plen, &m, NULL) !=
          HURRAY_OK)
        continue;
      same_bytes(&m, frame, n);
      HurrayStatus st = hurray_net_session_send(s, &m, &e);
      if (st != HURRAY_OK) CHECK(e.status == st);
      if (closed) CHECK(st == HURRAY_ERR_INVALID_STATE);
      continue;
    }
    HurrayNetVerdict v;
    HurrayStatus st = hurray_net_session_receive_header(s, frame, n, &h, &v, &e);
    if (st == HURRAY_OK) {
      CHECK(v.action == HURRAY_NET_ACCEPT);
      st = hurray_net_session_receive_payload(s, &h, frame + HURRAY_NET_HEADER_LEN, plen, &m, &v,
                                              &e);
      if (st == HURRAY_OK) {
        CHECK(v.action == HURRAY_NET_ACCEPT || v.action == HURRAY_NET_DISCARD);
        same_bytes(&m, frame, n);
        continue;
      }
    }
    CHECK(e.status == st);
    if (closed) {
      CHECK(st == HURRAY_ERR_INVALID_STATE);
      continue;
    }
    CHECK(v.action == HURRAY_NET_REFUSE);
    CHECK(hurray_net_error_code_name(v.error_code) != NULL);
    if (v.close_connection || v.stream_id == 0) break;
    /* Answer as the verdict says. */
    HurrayNetMessage err;
    memset(&err, 0, sizeof err);
    err.type = HURRAY_NET_ERROR;
    err.stream_id = v.stream_id;
    err.u.error.code = v.error_code;
    CHECK(hurray_net_session_send(s, &err, NULL) == HURRAY_OK);
  }
  hurray_net_session_destroy(&s);
}

/* ---- the transport over a socketpair ------------------------------------------ */

/* Reads and drops what the side under test writes, until it closes. */
static void *drain(void *arg) {
  int fd = *(const int *)arg;
  uint8_t buf[4096];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  return NULL;
}

/* The encoded descriptor of a row-major float32 tensor of `shape` (rank
 * entries, `bytes` of data) into buf[0..256): its length. */
static uint32_t f32_descriptor(uint32_t rank, const uint64_t *shape, uint64_t bytes,
                               uint8_t *buf) {
  uint8_t f32 = 0;
  CHECK(hurray_dtype_from_name("float32", &f32) == HURRAY_OK);
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  CHECK(hurray_descriptor_fields_dense(f32, rank, shape, HURRAY_LAYOUT_ROW_MAJOR, bytes, 64, &h,
                                       &f, NULL) == HURRAY_OK);
  HurrayDescriptor *d = NULL;
  CHECK(hurray_descriptor_from_fields(&f, 0, &d, NULL) == HURRAY_OK);
  uint64_t got = 0;
  CHECK(hurray_descriptor_encode(d, buf, 256, &got) == HURRAY_OK);
  CHECK(hurray_descriptor_destroy(d) == HURRAY_OK);
  return (uint32_t)got;
}

/* A float32 vector of 3 elements: its encoded descriptor (once). */
static const uint8_t *small_descriptor(uint32_t *len) {
  static uint8_t desc[256];
  static uint32_t n = 0;
  static const uint64_t shape[1] = {3};
  if (n == 0) n = f32_descriptor(1, shape, 12, desc);
  *len = n;
  return desc;
}

static const float small_data[3] = {1.0f, 2.0f, 3.0f};

static uint32_t fz_get(void *ctx, const uint8_t *key, uint32_t key_len, uint8_t device,
                       const uint8_t **descriptor, uint32_t *descriptor_len, const void **data,
                       uint64_t *data_len) {
  (void)ctx;
  (void)device;
  if (key_len != 1 || key[0] != 't') return HURRAY_NET_E_UNKNOWN_TENSOR;
  *descriptor = small_descriptor(descriptor_len);
  *data = small_data;
  *data_len = sizeof small_data;
  return 0;
}

static uint32_t fz_put(void *ctx, const uint8_t *key, uint32_t key_len, const uint8_t *descriptor,
                       uint32_t descriptor_len, void *data, uint64_t data_len) {
  (void)ctx;
  (void)key;
  (void)descriptor;
  (void)descriptor_len;
  CHECK(data_len == 0 || data != NULL);
  hurray_free(data);
  return key_len == 1 && key[0] == 'x' ? HURRAY_NET_E_INVALID_MESSAGE : 0;
}

/* A float32 matrix of 4 x 3, row-major: its encoded descriptor (once). */
static const uint8_t *matrix_descriptor(uint32_t *len) {
  static uint8_t desc[256];
  static uint32_t n = 0;
  static const uint64_t shape[2] = {4, 3};
  if (n == 0) n = f32_descriptor(2, shape, 48, desc);
  *len = n;
  return desc;
}

static const float matrix_data[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

/* Serves fd through a table holding "v" (3 floats) and "t" (4 x 3), writable
 * under a 64-byte cap, transcoding up to 48 bytes (t fits, nothing larger). */
static HurrayStatus fuzz_table(int fd, HurrayError *e) {
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  o.writable = true;
  o.max_put_bytes = 64;
  o.timeout_ms = 5000;
  o.frame_size = 8;
  o.transcode_limit = 48;
  HurrayNetTable *t = NULL;
  CHECK(hurray_net_table_new(&o, &t, NULL) == HURRAY_OK);
  const void *vb[1] = {small_data}, *tb[1] = {matrix_data};
  const uint64_t vs[1] = {sizeof small_data}, ts[1] = {sizeof matrix_data};
  HurrayNetTableTensor v = {NULL, 0, 1, vb, vs}, m = {NULL, 0, 1, tb, ts};
  v.descriptor = small_descriptor(&v.descriptor_len);
  m.descriptor = matrix_descriptor(&m.descriptor_len);
  CHECK(hurray_net_table_add(t, "v", 1, &v, 1, NULL, NULL, NULL) == HURRAY_OK);
  CHECK(hurray_net_table_add(t, "t", 1, &m, 1, NULL, NULL, NULL) == HURRAY_OK);
  HurrayStatus st = hurray_net_table_serve(t, fd, "fuzz", e);
  CHECK(hurray_net_table_count(t) >= 2);
  hurray_net_table_destroy(&t);
  return st;
}

/* A status the transport may return on a hostile peer. */
static bool expected_status(HurrayStatus st) {
  switch (st) {
    case HURRAY_OK:
    case HURRAY_ERR_IO:
    case HURRAY_ERR_PROTOCOL:
    case HURRAY_ERR_VERSION_MISMATCH:
    case HURRAY_ERR_NOT_FOUND:
    case HURRAY_ERR_UNSUPPORTED:
    case HURRAY_ERR_STREAM_LIMIT:
    case HURRAY_ERR_INVALID_STATE:
      return true;
    default:
      /* a descriptor that does not decode: the decoder's own status */
      return st < 0;
  }
}

/* The peer's bytes of the input: its records' messages, then the tail. */
static size_t peer_bytes(const uint8_t *data, size_t size, uint8_t *out) {
  size_t pos = 1, n = 0;
  while (size - pos >= 1 + HURRAY_NET_HEADER_LEN) {
    const uint8_t *frame = data + pos + 1;
    size_t left = size - pos - 1;
    uint32_t plen = (uint32_t)frame[8] | ((uint32_t)frame[9] << 8) |
                    ((uint32_t)frame[10] << 16) | ((uint32_t)frame[11] << 24);
    if (plen > left - HURRAY_NET_HEADER_LEN) break;
    size_t k = HURRAY_NET_HEADER_LEN + plen;
    if (!(data[pos] & 1)) {
      memcpy(out + n, frame, k);
      n += k;
    }
    pos += 1 + k;
  }
  if (size - pos > 1) {
    memcpy(out + n, data + pos + 1, size - pos - 1);
    n += size - pos - 1;
  }
  return n;
}

/* The input's peer bytes against the transport of `role`. */
static void fuzz_connection(HurrayNetRole role, const uint8_t *data, size_t size) {
  uint8_t *peer = malloc(size);
  CHECK(peer != NULL);
  size_t n = peer_bytes(data, size, peer);
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  /* The input (at most a few KiB) fits in the socket's buffer. */
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(sv[1], peer + off, n - off);
    CHECK(w > 0);
    off += (size_t)w;
  }
  free(peer);
  CHECK(shutdown(sv[1], SHUT_WR) == 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, drain, &sv[1]) == 0);

  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.session.max_message_size = HURRAY_NET_MIN_MESSAGE_SIZE;
  o.session.max_streams = 4;
  o.session.allow_private_messages = (data[0] & 2) != 0;
  o.timeout_ms = 5000; /* never reached: the peer's bytes end with EOF */
  o.frame_size = 8;    /* several frames per tensor */
  o.max_tensor_bytes = 1u << 20;
  o.request_flags = (data[0] & 1) ? HURRAY_NET_REQ_PARALLEL_OK : 0;
  HurrayNetConnection *c = NULL;
  CHECK(hurray_net_connection_new(sv[0], role, &o, &c, NULL) == HURRAY_OK);
  HurrayError e;
  HurrayStatus st;
  if (role == HURRAY_NET_ROLE_SERVER && (data[0] & 4)) {
    /* libhurray's server table: the catalog, "t#shard=K/N", layout selection
     * and transcoding, pushes under a cap (its own connection, same fd) */
    hurray_net_connection_destroy(&c);
    st = fuzz_table(sv[0], &e);
    CHECK(expected_status(st));
    if (st != HURRAY_OK) CHECK(e.status == st);
  } else if (role == HURRAY_NET_ROLE_SERVER) {
    HurrayNetServerHandlers h = {fz_get, fz_put, NULL, NULL};
    st = hurray_net_server_serve(c, NULL, &h, &e);
    CHECK(expected_status(st));
    if (st != HURRAY_OK) CHECK(e.status == st);
  } else {
    st = hurray_net_client_hello(c, NULL, &e);
    CHECK(expected_status(st));
    if (st != HURRAY_OK) CHECK(e.status == st);
    for (unsigned i = 0; st != HURRAY_ERR_IO && st != HURRAY_ERR_INVALID_STATE && i < 3; i++) {
      unsigned op = (data[0] >> (2 + 2 * i)) & 3;
      if (op == 0 || op == 3) {
        HurrayDescriptor *d = NULL;
        void *got = NULL;
        uint64_t len = 0;
        float into[4];
        if (op == 0) {
          st = hurray_net_client_get(c, "t", 0, &d, &got, &len, &e);
        } else {
          st = hurray_net_client_get_into(c, "t", 0, into, sizeof into, &d, &len, &e);
          CHECK(st != HURRAY_OK || len <= sizeof into);
          got = NULL;
        }
        /* the tensor, then the rest of a composite response, if it is one */
        while (st == HURRAY_OK) {
          uint64_t want = 0;
          CHECK(hurray_descriptor_data_bytes(d, &want) == HURRAY_OK);
          CHECK(len == want && (len == 0 || got != NULL));
          CHECK(hurray_descriptor_destroy(d) == HURRAY_OK);
          hurray_free(got);
          if (op != 0 || !hurray_net_client_response_open(c)) break;
          d = NULL;
          got = NULL;
          st = hurray_net_client_get_next(c, &d, &got, &len, &e);
        }
      } else if (op == 1) {
        st = hurray_net_client_ping(c, &e);
      } else {
        uint32_t dl = 0;
        const uint8_t *desc = small_descriptor(&dl);
        st = hurray_net_client_put(c, "t", desc, dl, small_data, sizeof small_data, &e);
      }
      CHECK(expected_status(st));
      if (st != HURRAY_OK) CHECK(e.status == st);
    }
  }
  hurray_net_connection_destroy(&c);
  CHECK(close(sv[0]) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(close(sv[1]) == 0);
}

/* Both layers of `role`'s side. */
static int fuzz_net(HurrayNetRole role, const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fuzz_session(role, data, size);
  fuzz_connection(role, data, size);
  return 0;
}

#endif /* HURRAY_FUZZ_NET_COMMON_H */
