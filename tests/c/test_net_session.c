/* The session state machine of the network transport (hurray/net.h): which
 * message may come when. Every message travels as bytes: the sender's
 * session records it, the codec encodes it, the receiver's session checks
 * the header and then the payload. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "test_net_util.h"

/* float32 [3, 4] row-major, one 48-byte buffer (device at byte 57, sync
 * mode at 58, memory class at 59). */
static const uint8_t k_desc[61] = {
    'H', 'R', 'R', 'Y', 0x01, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01,
    0x02, 0x00, 0x00, 0x00, 0x03, 0,    0,    0,    0,    0,    0,    0,    0x04, 0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0x01, 0x30, 0,    0,
    0,    0,    0,    0,    0,    0x40, 0,    0,    0,    0x00, 0x00, 0x00, 0x00};

typedef struct Pair {
  HurrayNetSession *c;
  HurrayNetSession *s;
} Pair;

static HurrayNetMessage msg(uint32_t type, uint32_t stream) {
  HurrayNetMessage m;
  memset(&m, 0, sizeof m);
  m.type = type;
  m.stream_id = stream;
  return m;
}

/* Sends m from `from` (must be accepted by its session), then receives it
 * on `to`; returns the receiver's status and fills *v. */
static HurrayStatus deliver(HurrayNetSession *from, HurrayNetSession *to,
                            const HurrayNetMessage *m, HurrayNetVerdict *v, HurrayError *e) {
  HurrayError se;
  HurrayStatus st = hurray_net_session_send(from, m, &se);
  if (st != HURRAY_OK) fail_msg("send refused: %s", se.message);
  static uint8_t buf[1 << 16];
  size_t n = 0;
  st = hurray_net_message_encode(m, buf, sizeof buf, &n, &se);
  if (st != HURRAY_OK) fail_msg("encode: %s", se.message);
  HurrayNetHeader h;
  st = hurray_net_session_receive_header(to, buf, n, &h, v, e);
  if (st != HURRAY_OK) return st;
  HurrayNetMessage out;
  return hurray_net_session_receive_payload(to, &h, buf + HURRAY_NET_HEADER_LEN, h.payload_length,
                                            &out, v, e);
}

/* Delivers and expects acceptance. */
static HurrayNetVerdict ok(HurrayNetSession *from, HurrayNetSession *to,
                           const HurrayNetMessage *m) {
  HurrayNetVerdict v;
  HurrayError e;
  HurrayStatus st = deliver(from, to, m, &v, &e);
  if (st != HURRAY_OK) fail_msg("type %u refused: %s", m->type, e.message);
  assert_int_equal(v.action, HURRAY_NET_ACCEPT);
  return v;
}

/* Receives m on `to` without the sender's session (a peer breaking the
 * rules); returns the status, fills *v. */
static HurrayStatus inject(HurrayNetSession *to, const HurrayNetMessage *m, HurrayNetVerdict *v,
                           HurrayError *e) {
  return hurray_net_session_receive(to, m, v, e);
}

static void refused_with(HurrayNetSession *to, const HurrayNetMessage *m, HurrayStatus want,
                         uint32_t code, bool close_connection) {
  HurrayNetVerdict v;
  HurrayError e;
  memset(&e, 0, sizeof e);
  HurrayStatus st = inject(to, m, &v, &e);
  if (st != want)
    fail_msg("status %s, want %s (%s)", hurray_status_name(st), hurray_status_name(want),
             e.message);
  assert_int_equal(v.action, HURRAY_NET_REFUSE);
  assert_int_equal(v.error_code, code);
  assert_int_equal(v.close_connection, close_connection);
  assert_int_equal(v.stream_id, m->stream_id);
}

static const uint8_t k_cpu_cuda[] = {HURRAY_DEVICE_CPU, HURRAY_DEVICE_CUDA};

static HurrayNetMessage hello(uint32_t type, const uint8_t *devs, uint16_t ndev) {
  HurrayNetMessage m = msg(type, 1);
  m.u.hello.protocol_version = 1;
  m.u.hello.max_message_size = HURRAY_NET_DEFAULT_MAX_MESSAGE_SIZE;
  m.u.hello.device_count = ndev;
  m.u.hello.devices = devs;
  return m;
}

static Pair pair_with(const uint8_t *cdev, uint16_t nc, const uint8_t *sdev, uint16_t ns,
                      uint64_t server_caps) {
  Pair p = {NULL, NULL};
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_CLIENT, NULL, &p.c, NULL), HURRAY_OK);
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, NULL, &p.s, NULL), HURRAY_OK);
  HurrayNetMessage ch = hello(HURRAY_NET_CLIENT_HELLO, cdev, nc);
  ok(p.c, p.s, &ch);
  assert_int_equal(hurray_net_session_state(p.c), HURRAY_NET_STATE_HELLO_SENT);
  assert_int_equal(hurray_net_session_state(p.s), HURRAY_NET_STATE_HELLO_RECEIVED);
  HurrayNetMessage sh = hello(HURRAY_NET_SERVER_HELLO, sdev, ns);
  sh.u.hello.capabilities = server_caps;
  ok(p.s, p.c, &sh);
  assert_int_equal(hurray_net_session_state(p.c), HURRAY_NET_STATE_READY);
  assert_int_equal(hurray_net_session_state(p.s), HURRAY_NET_STATE_READY);
  assert_int_equal(hurray_net_session_version(p.c), 1);
  assert_int_equal(hurray_net_session_peer_max_message_size(p.c),
                   HURRAY_NET_DEFAULT_MAX_MESSAGE_SIZE);
  return p;
}

static Pair pair(void) { return pair_with(k_cpu_cuda, 1, k_cpu_cuda, 2, 0); }

static void pair_free(Pair *p) {
  hurray_net_session_destroy(&p->c);
  hurray_net_session_destroy(&p->s);
  assert_null(p->c);
  assert_null(p->s);
}

static HurrayNetMessage request(uint32_t stream, uint8_t device, uint32_t flags) {
  HurrayNetMessage m = msg(HURRAY_NET_TENSOR_REQUEST, stream);
  m.u.request.key = (const uint8_t *)"w";
  m.u.request.key_len = 1;
  m.u.request.preferred_device = device;
  m.u.request.min_alignment = 64;
  m.u.request.flags = flags;
  return m;
}

static HurrayNetMessage descriptor(uint32_t stream, const uint8_t *d, uint32_t len,
                                   uint64_t total) {
  HurrayNetMessage m = msg(HURRAY_NET_TENSOR_DESCRIPTOR, stream);
  m.u.descriptor.descriptor = d;
  m.u.descriptor.descriptor_len = len;
  m.u.descriptor.total_data_bytes = total;
  m.u.descriptor.total_shards = 1;
  return m;
}

static const uint8_t k_bytes[64];

static HurrayNetMessage data(uint32_t stream, uint64_t offset, uint32_t len) {
  HurrayNetMessage m = msg(HURRAY_NET_TENSOR_DATA, stream);
  m.u.data.offset = offset;
  m.u.data.data = k_bytes;
  m.u.data.len = len;
  return m;
}

/* ---- the whole exchange ----------------------------------------------------------- */

static void test_request_flow(void **state) {
  (void)state;
  Pair p = pair();
  HurrayNetMessage r = request(5, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage d = descriptor(5, k_desc, 61, 48);
  ok(p.s, p.c, &d);
  HurrayNetMessage f1 = data(5, 0, 40);
  HurrayNetMessage f2 = data(5, 40, 8);
  assert_false(ok(p.s, p.c, &f1).stream_done);
  ok(p.s, p.c, &f2);
  HurrayNetMessage end = msg(HURRAY_NET_TENSOR_DATA_END, 5);
  assert_true(ok(p.s, p.c, &end).stream_done);
  /* the stream is closed: its id opens a new request */
  ok(p.c, p.s, &r);
  /* PING / PONG on any stream */
  HurrayNetMessage ping = msg(HURRAY_NET_PING, 99);
  ok(p.c, p.s, &ping);
  HurrayNetMessage pong = msg(HURRAY_NET_PONG, 99);
  ok(p.s, p.c, &pong);
  pair_free(&p);
}

static void test_empty_tensor(void **state) {
  (void)state;
  Pair p = pair();
  uint8_t empty[61];
  memcpy(empty, k_desc, 61);
  empty[20] = 0;  /* shape [0, 4] */
  empty[45] = 0;  /* a 0-byte buffer */
  HurrayNetMessage r = request(2, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage d = descriptor(2, empty, 61, 0);
  ok(p.s, p.c, &d);
  /* no data frame may come when total_data_bytes is 0 */
  HurrayNetMessage f = data(2, 0, 1);
  refused_with(p.c, &f, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage end = msg(HURRAY_NET_TENSOR_DATA_END, 2);
  assert_true(ok(p.s, p.c, &end).stream_done);
  pair_free(&p);
}

static void test_data_order(void **state) {
  (void)state;
  Pair p = pair();
  HurrayNetMessage r = request(3, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage d = descriptor(3, k_desc, 61, 48);
  ok(p.s, p.c, &d);
  HurrayNetMessage end = msg(HURRAY_NET_TENSOR_DATA_END, 3);
  /* DATA_END before the data; a gap; data past the total */
  refused_with(p.c, &end, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage gap = data(3, 8, 8);
  refused_with(p.c, &gap, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage big = data(3, 0, 49);
  refused_with(p.c, &big, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage f = data(3, 0, 16);
  ok(p.s, p.c, &f);
  /* an overlap */
  HurrayNetMessage overlap = data(3, 8, 16);
  refused_with(p.c, &overlap, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* the server's own session refuses to send them too */
  HurrayError e;
  assert_int_equal(hurray_net_session_send(p.s, &overlap, &e), HURRAY_ERR_PROTOCOL);
  assert_int_equal(hurray_net_session_send(p.s, &end, &e), HURRAY_ERR_PROTOCOL);
  /* a data frame on a stream nobody opened; a descriptor twice */
  HurrayNetMessage stray = data(4, 0, 1);
  refused_with(p.c, &stray, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  refused_with(p.c, &d, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* the client may not send data on a request stream */
  assert_int_equal(hurray_net_session_send(p.c, &f, &e), HURRAY_ERR_PROTOCOL);
  pair_free(&p);
}

/* ---- HELLO ------------------------------------------------------------------------- */

static void test_hello_rules(void **state) {
  (void)state;
  HurrayNetSession *s = NULL, *c = NULL;
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, NULL, &s, NULL), HURRAY_OK);
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_CLIENT, NULL, &c, NULL), HURRAY_OK);
  /* anything before CLIENT_HELLO closes the connection */
  HurrayNetMessage r = request(1, 0, 0);
  refused_with(s, &r, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, true);
  HurrayNetMessage sh = hello(HURRAY_NET_SERVER_HELLO, k_cpu_cuda, 1);
  refused_with(s, &sh, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, true);
  /* the client may send nothing but its HELLO first */
  HurrayError e;
  assert_int_equal(hurray_net_session_send(c, &r, &e), HURRAY_ERR_PROTOCOL);
  /* a client of version 2: the server answers with 1 */
  HurrayNetMessage ch = hello(HURRAY_NET_CLIENT_HELLO, k_cpu_cuda, 1);
  ch.u.hello.protocol_version = 2;
  assert_int_equal(inject(s, &ch, &(HurrayNetVerdict){0}, &e), HURRAY_OK);
  HurrayNetMessage two = hello(HURRAY_NET_SERVER_HELLO, k_cpu_cuda, 1);
  two.u.hello.protocol_version = 2;
  assert_int_equal(hurray_net_session_send(s, &two, &e), HURRAY_ERR_VERSION_MISMATCH);
  /* a second CLIENT_HELLO */
  refused_with(s, &ch, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, true);
  assert_int_equal(hurray_net_session_send(s, &sh, &e), HURRAY_OK);
  assert_int_equal(hurray_net_session_state(s), HURRAY_NET_STATE_READY);
  assert_int_equal(hurray_net_session_version(s), 1);
  refused_with(s, &ch, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* the client: a SERVER_HELLO above its version is refused, connection closed */
  HurrayNetMessage mine = hello(HURRAY_NET_CLIENT_HELLO, k_cpu_cuda, 1);
  assert_int_equal(hurray_net_session_send(c, &mine, &e), HURRAY_OK);
  refused_with(c, &two, HURRAY_ERR_VERSION_MISMATCH, HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH,
               true);
  HurrayNetMessage err = msg(HURRAY_NET_ERROR, 1);
  err.u.error.code = HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH;
  assert_int_equal(hurray_net_session_send(c, &err, &e), HURRAY_OK);
  assert_int_equal(hurray_net_session_state(c), HURRAY_NET_STATE_CLOSED);
  assert_int_equal(hurray_net_session_send(c, &err, &e), HURRAY_ERR_INVALID_STATE);
  hurray_net_session_destroy(&s);
  hurray_net_session_destroy(&c);

  /* a server refusing the HELLO with ERROR closes the connection on both sides */
  Pair p = {NULL, NULL};
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_CLIENT, NULL, &p.c, NULL), HURRAY_OK);
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, NULL, &p.s, NULL), HURRAY_OK);
  ok(p.c, p.s, &mine);
  HurrayNetVerdict v = ok(p.s, p.c, &err);
  assert_true(v.close_connection);
  assert_int_equal(hurray_net_session_state(p.c), HURRAY_NET_STATE_CLOSED);
  assert_int_equal(hurray_net_session_state(p.s), HURRAY_NET_STATE_CLOSED);
  pair_free(&p);

  /* this library does not advertise RDMA, and announces its own maximum */
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_CLIENT, NULL, &c, NULL), HURRAY_OK);
  mine.u.hello.capabilities = HURRAY_NET_CAP_RDMA_DATA_PLANE;
  assert_int_equal(hurray_net_session_send(c, &mine, &e), HURRAY_ERR_UNSUPPORTED);
  mine.u.hello.capabilities = 0;
  mine.u.hello.max_message_size = 8192;
  assert_int_equal(hurray_net_session_send(c, &mine, &e), HURRAY_ERR_PROTOCOL);
  hurray_net_session_destroy(&c);
}

static void test_header_limits(void **state) {
  (void)state;
  HurrayNetSessionOptions o = {8192, 2, 0, false};
  HurrayNetSession *s = NULL;
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, &o, &s, NULL), HURRAY_OK);
  assert_int_equal(hurray_net_session_max_message_size(s), 8192);
  const uint8_t big[12] = {0x05, 0, 0, 0, 0x07, 0, 0, 0, 0x01, 0x20, 0, 0}; /* 8193 */
  HurrayNetHeader h;
  HurrayNetVerdict v;
  HurrayError e;
  assert_int_equal(hurray_net_session_receive_header(s, big, 12, &h, &v, &e),
                   HURRAY_ERR_STREAM_LIMIT);
  assert_int_equal(v.action, HURRAY_NET_REFUSE);
  assert_int_equal(v.error_code, HURRAY_NET_E_MESSAGE_TOO_LARGE);
  assert_true(v.skip_payload);
  assert_int_equal(v.stream_id, 7);
  const uint8_t zero[12] = {0x05, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0};
  assert_int_equal(hurray_net_session_receive_header(s, zero, 12, &h, &v, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_true(v.close_connection);
  /* a CLIENT_HELLO of version 0, as bytes: PROTOCOL_VERSION_MISMATCH, connection closed */
  const uint8_t v0[] = {0x01, 0, 0, 0, 0x01, 0, 0, 0, 22, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0, 0,
                        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  hurray_net_session_destroy(&s);
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, NULL, &s, NULL), HURRAY_OK);
  assert_int_equal(hurray_net_session_receive_header(s, v0, sizeof v0, &h, &v, &e), HURRAY_OK);
  HurrayNetMessage m;
  assert_int_equal(hurray_net_session_receive_payload(s, &h, v0 + 12, h.payload_length, &m, &v, &e),
                   HURRAY_ERR_VERSION_MISMATCH);
  assert_int_equal(v.action, HURRAY_NET_REFUSE);
  assert_int_equal(v.error_code, HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH);
  assert_true(v.close_connection);
  /* the server answers and the connection is closed: nothing more is read */
  HurrayNetMessage err = msg(HURRAY_NET_ERROR, 1);
  err.u.error.code = v.error_code;
  assert_int_equal(hurray_net_session_send(s, &err, &e), HURRAY_OK);
  assert_int_equal(hurray_net_session_state(s), HURRAY_NET_STATE_CLOSED);
  assert_int_equal(hurray_net_session_receive_header(s, v0, sizeof v0, &h, &v, &e),
                   HURRAY_ERR_INVALID_STATE);
  hurray_net_session_destroy(&s);
  /* options out of range */
  o.max_message_size = 100;
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, &o, &s, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(s);
  o = (HurrayNetSessionOptions){0, HURRAY_NET_MAX_STREAMS_LIMIT + 1, 0, false};
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, &o, &s, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_net_session_new((HurrayNetRole)7, NULL, &s, NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
  /* out of memory: nothing leaks */
  tu_alloc_install();
  tu_fail_alloc_after(0);
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, NULL, &s, NULL),
                   HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(s);
  tu_alloc_reset();
}

/* ---- ERROR, draining, unknown and refused types --------------------------------------- */

static void test_error_and_drain(void **state) {
  (void)state;
  Pair p = pair();
  HurrayNetMessage r = request(7, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage d = descriptor(7, k_desc, 61, 48);
  ok(p.s, p.c, &d);
  /* the client gives up: its ERROR crosses the server's frames */
  HurrayNetMessage err = msg(HURRAY_NET_ERROR, 7);
  err.u.error.code = HURRAY_NET_E_DEVICE_UNAVAILABLE;
  HurrayError e;
  assert_int_equal(hurray_net_session_send(p.c, &err, &e), HURRAY_OK);
  HurrayNetMessage f = data(7, 0, 16);
  HurrayNetVerdict v;
  assert_int_equal(deliver(p.s, p.c, &f, &v, &e), HURRAY_OK);
  assert_int_equal(v.action, HURRAY_NET_DISCARD);
  /* the client does not reuse a draining id */
  assert_int_equal(hurray_net_session_send(p.c, &r, &e), HURRAY_ERR_PROTOCOL);
  /* the server receives the ERROR: the stream ends there */
  assert_int_equal(inject(p.s, &err, &v, &e), HURRAY_OK);
  assert_true(v.stream_done);
  assert_int_equal(hurray_net_session_send(p.s, &f, &e), HURRAY_ERR_PROTOCOL);

  /* the server refuses a request: the stream is free again on both sides */
  HurrayNetMessage r8 = request(8, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r8);
  HurrayNetMessage unknown = msg(HURRAY_NET_ERROR, 8);
  unknown.u.error.code = HURRAY_NET_E_UNKNOWN_TENSOR;
  assert_true(ok(p.s, p.c, &unknown).stream_done);
  ok(p.c, p.s, &r8);

  /* unknown and private types; RDMA */
  HurrayNetMessage u = msg(0x0E, 8);
  refused_with(p.s, &u, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage priv = msg(0xF2, 8);
  refused_with(p.s, &priv, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage reg = msg(HURRAY_NET_RDMA_REGISTER, 8);
  refused_with(p.c, &reg, HURRAY_ERR_UNSUPPORTED, HURRAY_NET_E_INVALID_MESSAGE, false);
  HurrayNetMessage rdy = msg(HURRAY_NET_RDMA_READY, 8);
  refused_with(p.s, &rdy, HURRAY_ERR_UNSUPPORTED, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* an unknown type arriving as bytes: the payload does not decode */
  const uint8_t raw[12] = {0x0E, 0, 0, 0, 0x08, 0, 0, 0, 0, 0, 0, 0};
  HurrayNetHeader h;
  assert_int_equal(hurray_net_session_receive_header(p.s, raw, 12, &h, &v, &e), HURRAY_OK);
  HurrayNetMessage out;
  assert_int_equal(hurray_net_session_receive_payload(p.s, &h, NULL, 0, &out, &v, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_int_equal(v.action, HURRAY_NET_REFUSE);
  assert_int_equal(v.error_code, HURRAY_NET_E_INVALID_MESSAGE);
  assert_int_equal(v.stream_id, 8);
  pair_free(&p);

  /* private types agreed out of band pass */
  HurrayNetSessionOptions o = {0, 0, 0, true};
  HurrayNetSession *s = NULL;
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, &o, &s, NULL), HURRAY_OK);
  HurrayNetMessage ch = hello(HURRAY_NET_CLIENT_HELLO, k_cpu_cuda, 1);
  assert_int_equal(inject(s, &ch, &v, &e), HURRAY_OK);
  HurrayNetMessage sh = hello(HURRAY_NET_SERVER_HELLO, k_cpu_cuda, 1);
  assert_int_equal(hurray_net_session_send(s, &sh, &e), HURRAY_OK);
  assert_int_equal(inject(s, &priv, &v, &e), HURRAY_OK);
  assert_int_equal(v.action, HURRAY_NET_ACCEPT);
  hurray_net_session_destroy(&s);
}

static void test_max_streams(void **state) {
  (void)state;
  HurrayNetSessionOptions o = {0, 2, 0, false};
  HurrayNetSession *s = NULL;
  assert_int_equal(hurray_net_session_new(HURRAY_NET_ROLE_SERVER, &o, &s, NULL), HURRAY_OK);
  HurrayNetVerdict v;
  HurrayError e;
  HurrayNetMessage ch = hello(HURRAY_NET_CLIENT_HELLO, k_cpu_cuda, 1);
  assert_int_equal(inject(s, &ch, &v, &e), HURRAY_OK);
  HurrayNetMessage sh = hello(HURRAY_NET_SERVER_HELLO, k_cpu_cuda, 1);
  assert_int_equal(hurray_net_session_send(s, &sh, &e), HURRAY_OK);
  HurrayNetMessage r1 = request(1, 0, 0), r2 = request(2, 0, 0), r3 = request(3, 0, 0);
  assert_int_equal(inject(s, &r1, &v, &e), HURRAY_OK);
  assert_int_equal(inject(s, &r2, &v, &e), HURRAY_OK);
  refused_with(s, &r3, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* the same id twice */
  refused_with(s, &r1, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  hurray_net_session_destroy(&s);
}

/* ---- descriptor rules ------------------------------------------------------------------- */

static void test_descriptor_rules(void **state) {
  (void)state;
  /* the client advertises CPU, the server CPU and CUDA */
  Pair p = pair_with(k_cpu_cuda, 1, k_cpu_cuda, 2, 0);
  uint8_t d[61];
  HurrayError e;
  /* CUDA preferred, CPU served: the permitted fallback */
  HurrayNetMessage r = request(1, HURRAY_DEVICE_CUDA, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage m = descriptor(1, k_desc, 61, 48);
  ok(p.s, p.c, &m);
  /* CPU preferred, CUDA served: no silent fallback away from CPU */
  HurrayNetMessage r2 = request(2, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r2);
  memcpy(d, k_desc, 61);
  d[57] = HURRAY_DEVICE_CUDA;
  m = descriptor(2, d, 61, 48);
  refused_with(p.c, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, false);
  assert_int_equal(hurray_net_session_send(p.s, &m, &e), HURRAY_ERR_PROTOCOL);
  /* ROCm preferred (not advertised by the server), CPU served: refused */
  HurrayNetMessage r3 = request(3, HURRAY_DEVICE_ROCM, 0);
  ok(p.c, p.s, &r3);
  m = descriptor(3, k_desc, 61, 48);
  refused_with(p.c, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, false);
  /* CUDA preferred and served, but an event-synced buffer: cross-machine */
  HurrayNetMessage r4 = request(4, HURRAY_DEVICE_CUDA, 0);
  ok(p.c, p.s, &r4);
  d[58] = HURRAY_SYNC_EVENT;
  m = descriptor(4, d, 61, 48);
  refused_with(p.c, &m, HURRAY_ERR_CROSS_MACHINE, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* host-pinned memory: the client did not list it (standard only) */
  d[58] = HURRAY_SYNC_PRODUCER_SYNCED;
  d[59] = HURRAY_MEMORY_HOST_PINNED;
  m = descriptor(4, d, 61, 48);
  refused_with(p.c, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, false);
  /* total_data_bytes differs from the buffers */
  m = descriptor(4, k_desc, 61, 47);
  m.u.descriptor.total_data_bytes = 47;
  HurrayNetMessage r5 = request(5, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r5);
  m.stream_id = 5;
  refused_with(p.c, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  /* a descriptor that does not decode: its own status */
  memcpy(d, k_desc, 61);
  d[14] = 0xEE; /* a reserved element type */
  m = descriptor(5, d, 61, 48);
  HurrayNetVerdict v;
  assert_int_not_equal(inject(p.c, &m, &v, &e), HURRAY_OK);
  assert_int_equal(v.action, HURRAY_NET_REFUSE);
  assert_int_equal(e.offset, 12 + 14);
  /* shards: 2 shards without PARALLEL_OK */
  m = descriptor(5, k_desc, 61, 48);
  m.u.descriptor.total_shards = 2;
  refused_with(p.c, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_SHARD_MISMATCH, false);
  pair_free(&p);
}

/* ---- TENSOR_PUT ---------------------------------------------------------------------------- */

static HurrayNetMessage put(uint32_t stream, const uint8_t *d, uint32_t len, uint64_t total) {
  HurrayNetMessage m = msg(HURRAY_NET_TENSOR_PUT, stream);
  m.u.put.key = (const uint8_t *)"p";
  m.u.put.key_len = 1;
  m.u.put.descriptor = d;
  m.u.put.descriptor_len = len;
  m.u.put.total_data_bytes = total;
  return m;
}

static void test_put_flow(void **state) {
  (void)state;
  Pair p = pair();
  HurrayNetMessage m = put(9, k_desc, 61, 48);
  ok(p.c, p.s, &m);
  HurrayNetMessage f = data(9, 0, 48);
  /* the server sends no data on a put stream, nor an early ACK */
  HurrayError e;
  assert_int_equal(hurray_net_session_send(p.s, &f, &e), HURRAY_ERR_PROTOCOL);
  HurrayNetMessage ack = msg(HURRAY_NET_TENSOR_PUT_ACK, 9);
  refused_with(p.c, &ack, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  ok(p.c, p.s, &f);
  HurrayNetMessage end = msg(HURRAY_NET_TENSOR_DATA_END, 9);
  assert_false(ok(p.c, p.s, &end).stream_done);
  assert_true(ok(p.s, p.c, &ack).stream_done);
  /* a device the server did not advertise */
  uint8_t d[61];
  memcpy(d, k_desc, 61);
  d[57] = HURRAY_DEVICE_ROCM;
  m = put(10, d, 61, 48);
  refused_with(p.s, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, false);
  /* the server may not open a put */
  m = put(11, k_desc, 61, 48);
  refused_with(p.c, &m, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, false);
  pair_free(&p);
}

/* ---- composites ------------------------------------------------------------------------------ */

static void test_composite_response(void **state) {
  (void)state;
  Pair p = pair();
  uint8_t head[128], inner[128];
  uint32_t hn = net_group_head(2, head, sizeof head);
  uint32_t in = net_group_head(1, inner, sizeof inner);
  HurrayNetMessage r = request(4, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage end = msg(HURRAY_NET_TENSOR_DATA_END, 4);
  /* head(2): leaf, head(1): leaf */
  HurrayNetMessage h = descriptor(4, head, hn, 0);
  ok(p.s, p.c, &h);
  assert_false(ok(p.s, p.c, &end).stream_done);
  HurrayNetMessage leaf = descriptor(4, k_desc, 61, 48);
  HurrayNetMessage f = data(4, 0, 48);
  ok(p.s, p.c, &leaf);
  ok(p.s, p.c, &f);
  assert_false(ok(p.s, p.c, &end).stream_done);
  HurrayNetMessage h2 = descriptor(4, inner, in, 0);
  ok(p.s, p.c, &h2);
  assert_false(ok(p.s, p.c, &end).stream_done);
  ok(p.s, p.c, &leaf);
  ok(p.s, p.c, &f);
  /* the last member's DATA_END closes both composites: the response ends */
  assert_true(ok(p.s, p.c, &end).stream_done);
  /* a head of 0 members is complete at its own DATA_END */
  uint32_t zn = net_group_head(0, inner, sizeof inner);
  ok(p.c, p.s, &r);
  HurrayNetMessage z = descriptor(4, inner, zn, 0);
  ok(p.s, p.c, &z);
  assert_true(ok(p.s, p.c, &end).stream_done);
  /* a composite cannot be pushed */
  HurrayNetMessage pm = put(6, head, hn, 0);
  HurrayError e;
  assert_int_equal(hurray_net_session_send(p.c, &pm, &e), HURRAY_ERR_UNSUPPORTED);
  pair_free(&p);
}

/* Nesting deeper than the composite depth limit is refused. */
static void test_composite_depth(void **state) {
  (void)state;
  Pair p = pair();
  uint8_t head[128];
  uint32_t hn = net_group_head(1, head, sizeof head);
  HurrayNetMessage r = request(4, HURRAY_DEVICE_CPU, 0);
  ok(p.c, p.s, &r);
  HurrayNetMessage end = msg(HURRAY_NET_TENSOR_DATA_END, 4);
  HurrayNetMessage h = descriptor(4, head, hn, 0);
  for (uint32_t i = 0; i < HURRAY_MAX_COMPOSITE_DEPTH; i++) {
    ok(p.s, p.c, &h);
    ok(p.s, p.c, &end);
  }
  refused_with(p.c, &h, HURRAY_ERR_INVALID_COMPOSITE, HURRAY_NET_E_INVALID_MESSAGE, false);
  pair_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_request_flow),     cmocka_unit_test(test_empty_tensor),
      cmocka_unit_test(test_data_order),       cmocka_unit_test(test_hello_rules),
      cmocka_unit_test(test_header_limits),    cmocka_unit_test(test_error_and_drain),
      cmocka_unit_test(test_max_streams),      cmocka_unit_test(test_descriptor_rules),
      cmocka_unit_test(test_put_flow),         cmocka_unit_test(test_composite_response),
      cmocka_unit_test(test_composite_depth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
