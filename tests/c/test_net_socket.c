/* The blocking transport of the network protocol (hurray/net.h): a client and
 * a server thread over a socketpair get, put and refuse tensors. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#if !defined(_WIN32)

#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

/* A float32 row-major tensor of `count` elements: its encoded descriptor. */
static uint32_t dense_descriptor(uint64_t count, uint8_t *out, size_t cap) {
  uint8_t f32 = 0;
  assert_int_equal(hurray_dtype_from_name("float32", &f32), HURRAY_OK);
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  const uint64_t shape[1] = {count};
  HurrayError e;
  if (hurray_descriptor_fields_dense(f32, 1, shape, HURRAY_LAYOUT_ROW_MAJOR, count * 4, 64, &h,
                                     &f, &e) != HURRAY_OK)
    fail_msg("%s", e.message);
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, &d, NULL), HURRAY_OK);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, cap, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return (uint32_t)n;
}

#define BIG 5000u /* elements: 20000 bytes, several frames of 4096 */

typedef struct Server {
  int fd;
  uint8_t desc[256];
  uint32_t desc_len;
  uint8_t *data; /* BIG * 4 bytes */
  /* what a put delivered */
  uint8_t put_key[16];
  uint32_t put_key_len;
  void *put_data;
  uint64_t put_len;
  uintptr_t put_align;
  HurrayStatus status;
  HurrayError err;
  HurrayNetConnection *conn; /* for hurray_net_server_set_shard */
  uint8_t shard_desc[256];   /* shard 1 of 2 of "big" */
  uint32_t shard_desc_len;
  /* the last request, as hurray_net_server_request showed it to the handler */
  bool seen;
  uint32_t seen_flags, seen_align, seen_count;
  uint8_t seen_device, seen_tags[4], seen_ext[4];
  uint16_t seen_ext_len;
  char seen_key[16];
} Server;

static uint32_t on_get(void *ctx, const uint8_t *key, uint32_t key_len, uint8_t device,
                       const uint8_t **desc, uint32_t *desc_len, const void **data,
                       uint64_t *data_len) {
  Server *s = ctx;
  (void)device;
  HurrayNetRequest r;
  s->seen = hurray_net_server_request(s->conn, &r);
  if (s->seen) {
    s->seen_flags = r.flags;
    s->seen_align = r.min_alignment;
    s->seen_device = r.preferred_device;
    s->seen_count = r.layouts.count;
    memset(s->seen_key, 0, sizeof s->seen_key);
    memcpy(s->seen_key, r.key, r.key_len < 15 ? r.key_len : 15);
    uint32_t cursor = 0;
    HurrayNetLayoutEntry e;
    for (uint32_t i = 0; i < 4 && hurray_net_layout_list_next(&r.layouts, &cursor, &e); i++) {
      s->seen_tags[i] = e.tag;
      if (e.ext_len != 0) {
        s->seen_ext_len = e.ext_len;
        memcpy(s->seen_ext, e.ext, e.ext_len < 4 ? e.ext_len : 4);
      }
    }
  }
  if (key_len == 4 && memcmp(key, "half", 4) == 0 && s->shard_desc_len != 0) {
    /* shard 1 of 2: the second half of "big" */
    hurray_net_server_set_shard(s->conn, 1, 2);
    *desc = s->shard_desc;
    *desc_len = s->shard_desc_len;
    *data = s->data + (size_t)BIG * 2;
    *data_len = (uint64_t)BIG * 2;
    return 0;
  }
  if (key_len != 3 || memcmp(key, "big", 3) != 0) return HURRAY_NET_E_UNKNOWN_TENSOR;
  *desc = s->desc;
  *desc_len = s->desc_len;
  *data = s->data;
  *data_len = (uint64_t)BIG * 4;
  return 0;
}

static uint32_t on_put(void *ctx, const uint8_t *key, uint32_t key_len, const uint8_t *desc,
                       uint32_t desc_len, void *data, uint64_t data_len) {
  Server *s = ctx;
  (void)desc;
  (void)desc_len;
  if (key_len > sizeof s->put_key) {
    hurray_free(data);
    return HURRAY_NET_E_INVALID_MESSAGE;
  }
  memcpy(s->put_key, key, key_len);
  s->put_key_len = key_len;
  s->put_data = data;
  s->put_len = data_len;
  s->put_align = (uintptr_t)data % 64;
  return 0;
}

static void *serve(void *arg) {
  Server *s = arg;
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.frame_size = 4096;
  o.timeout_ms = 10000;
  HurrayNetConnection *c = NULL;
  s->status = hurray_net_connection_new(s->fd, HURRAY_NET_ROLE_SERVER, &o, &c, &s->err);
  if (s->status != HURRAY_OK) return NULL;
  HurrayNetServerHandlers h = {on_get, on_put, s, NULL};
  s->conn = c;
  static const uint8_t cpu = 0;
  HurrayNetHello hello;
  memset(&hello, 0, sizeof hello);
  hello.capabilities = HURRAY_NET_CAP_PARALLEL_STREAMS;
  hello.device_count = 1;
  hello.devices = &cpu;
  s->status = hurray_net_server_serve(c, &hello, &h, &s->err);
  /* outside a handler the server has no request to show */
  HurrayNetRequest r;
  if (hurray_net_server_request(c, &r) || r.key != NULL) s->status = HURRAY_ERR_INTERNAL;
  hurray_net_connection_destroy(&c);
  return NULL;
}

static void test_round_trip(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Server *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->fd = fds[1];
  s->desc_len = dense_descriptor(BIG, s->desc, sizeof s->desc);
  s->data = malloc((size_t)BIG * 4);
  assert_non_null(s->data);
  for (size_t i = 0; i < (size_t)BIG * 4; i++) s->data[i] = (uint8_t)(i * 7 + 3);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, serve, s), 0);

  HurrayNetConnection *c = NULL;
  HurrayError e;
  assert_int_equal(hurray_net_connection_new(fds[0], HURRAY_NET_ROLE_CLIENT, NULL, &c, &e),
                   HURRAY_OK);
  if (hurray_net_client_hello(c, NULL, &e) != HURRAY_OK) fail_msg("hello: %s", e.message);
  assert_int_equal(hurray_net_session_state(hurray_net_connection_session(c)),
                   HURRAY_NET_STATE_READY);
  /* get: the descriptor and every byte, in 64-byte aligned memory */
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  if (hurray_net_client_get(c, "big", HURRAY_DEVICE_CPU, &d, &data, &len, &e) != HURRAY_OK)
    fail_msg("get: %s", e.message);
  assert_int_equal(len, (uint64_t)BIG * 4);
  assert_int_equal((uintptr_t)data % 64, 0);
  assert_memory_equal(data, s->data, (size_t)len);
  uint8_t back[256];
  uint64_t blen = 0;
  assert_int_equal(hurray_descriptor_encode(d, back, sizeof back, &blen), HURRAY_OK);
  assert_int_equal(blen, s->desc_len);
  assert_memory_equal(back, s->desc, s->desc_len);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* an unknown key: the server's ERROR as a status; the connection goes on */
  d = NULL;
  assert_int_equal(hurray_net_client_get(c, "nope", HURRAY_DEVICE_CPU, &d, &data, &len, &e),
                   HURRAY_ERR_NOT_FOUND);
  assert_non_null(strstr(e.message, "UNKNOWN_TENSOR"));
  assert_null(d);
  /* a device the server does not serve: it refuses the placement */
  assert_int_equal(hurray_net_client_get(c, "big", HURRAY_DEVICE_CUDA, &d, &data, &len, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.message, "DEVICE_UNAVAILABLE"));
  /* put: the server's handler receives the bytes */
  if (hurray_net_client_put(c, "up", s->desc, s->desc_len, data, len, &e) != HURRAY_OK)
    fail_msg("put: %s", e.message);
  hurray_net_connection_destroy(&c);
  assert_null(c);
  /* the client closes: the server returns cleanly */
  close(fds[0]);
  assert_int_equal(pthread_join(t, NULL), 0);
  if (s->status != HURRAY_OK) fail_msg("server: %s", s->err.message);
  assert_int_equal(s->put_key_len, 2);
  assert_memory_equal(s->put_key, "up", 2);
  assert_int_equal(s->put_len, len);
  assert_int_equal(s->put_align, 0);
  assert_memory_equal(s->put_data, data, (size_t)len);
  hurray_free(s->put_data);
  hurray_free(data);
  free(s->data);
  close(fds[1]);
  free(s);
}

static void test_timeout_and_refusals(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = 50;
  HurrayNetConnection *c = NULL;
  HurrayError e;
  assert_int_equal(hurray_net_connection_new(fds[0], HURRAY_NET_ROLE_CLIENT, &o, &c, &e),
                   HURRAY_OK);
  /* nobody answers */
  assert_int_equal(hurray_net_client_hello(c, NULL, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "timed out"));
  /* a server call on a client connection */
  assert_int_equal(hurray_net_server_serve(c, NULL, NULL, &e), HURRAY_ERR_INVALID_STATE);
  hurray_net_connection_destroy(&c);
  /* a peer that answers the HELLO with garbage: refused, connection closed */
  assert_int_equal(hurray_net_connection_new(fds[0], HURRAY_NET_ROLE_CLIENT, &o, &c, &e),
                   HURRAY_OK);
  const uint8_t junk[12] = {0x05, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0};
  assert_int_equal(write(fds[1], junk, sizeof junk), (ssize_t)sizeof junk);
  assert_int_equal(hurray_net_client_hello(c, NULL, &e), HURRAY_ERR_PROTOCOL);
  assert_int_equal(hurray_net_session_state(hurray_net_connection_session(c)),
                   HURRAY_NET_STATE_CLOSED);
  hurray_net_connection_destroy(&c);
  /* a peer that closes */
  close(fds[1]);
  assert_int_equal(hurray_net_connection_new(fds[0], HURRAY_NET_ROLE_CLIENT, &o, &c, &e),
                   HURRAY_OK);
  HurrayStatus st = hurray_net_client_hello(c, NULL, &e);
  assert_int_equal(st, HURRAY_ERR_IO);
  hurray_net_connection_destroy(&c);
  close(fds[0]);
  assert_int_equal(hurray_net_connection_new(-1, HURRAY_NET_ROLE_CLIENT, NULL, &c, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(c);
}

/* Parallel shards: a server advertising PARALLEL_STREAMS answers with shard 1
 * of 2 (hurray_net_server_set_shard), received straight into the caller's
 * memory (hurray_net_client_get_into) by a client whose requests say
 * PARALLEL_OK; a buffer too small is refused before any byte lands. */
/* A client connection over fd that accepts parallel shards, past its HELLO. */
static HurrayNetConnection *parallel_client(int fd) {
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.request_flags = HURRAY_NET_REQ_PARALLEL_OK;
  HurrayNetConnection *c = NULL;
  HurrayError e;
  assert_int_equal(hurray_net_connection_new(fd, HURRAY_NET_ROLE_CLIENT, &o, &c, &e), HURRAY_OK);
  if (hurray_net_client_hello(c, NULL, &e) != HURRAY_OK) fail_msg("hello: %s", e.message);
  return c;
}

static void test_shard_into_caller_memory(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Server *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->fd = fds[1];
  s->desc_len = dense_descriptor(BIG, s->desc, sizeof s->desc);
  s->data = malloc((size_t)BIG * 4);
  assert_non_null(s->data);
  for (size_t i = 0; i < (size_t)BIG * 4; i++) s->data[i] = (uint8_t)(i * 5 + 1);
  {
    uint8_t f32 = 0;
    assert_int_equal(hurray_dtype_from_name("float32", &f32), HURRAY_OK);
    HurrayBufferHandle h;
    HurrayDescriptorFields f;
    const uint64_t shape[1] = {BIG / 2}, parent[1] = {BIG}, offset[1] = {BIG / 2};
    assert_int_equal(hurray_descriptor_fields_dense(f32, 1, shape, HURRAY_LAYOUT_ROW_MAJOR,
                                                    (uint64_t)BIG * 2, 64, &h, &f, NULL),
                     HURRAY_OK);
    HurrayShard sh = {parent, offset};
    f.shard = &sh;
    HurrayDescriptor *d = NULL;
    assert_int_equal(hurray_descriptor_from_fields(&f, 0, &d, NULL), HURRAY_OK);
    uint64_t n = 0;
    assert_int_equal(hurray_descriptor_encode(d, s->shard_desc, sizeof s->shard_desc, &n),
                     HURRAY_OK);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    s->shard_desc_len = (uint32_t)n;
  }
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, serve, s), 0);

  HurrayError e;
  HurrayNetConnection *c = parallel_client(fds[0]);
  assert_true(hurray_net_session_peer_capabilities(hurray_net_connection_session(c)) &
              HURRAY_NET_CAP_PARALLEL_STREAMS);
  uint8_t *into = calloc(1, (size_t)BIG * 4);
  assert_non_null(into);
  HurrayDescriptor *d = NULL;
  uint64_t len = 0;
  if (hurray_net_client_get_into(c, "half", HURRAY_DEVICE_CPU, into + (size_t)BIG * 2,
                                 (uint64_t)BIG * 2, &d, &len, &e) != HURRAY_OK)
    fail_msg("get_into: %s", e.message);
  assert_int_equal(len, (uint64_t)BIG * 2);
  assert_memory_equal(into + (size_t)BIG * 2, s->data + (size_t)BIG * 2, (size_t)BIG * 2);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.shard);
  assert_int_equal(f.shard->offset[0], BIG / 2);
  assert_int_equal(f.shard->parent_shape[0], BIG);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_false(hurray_net_client_response_open(c));
  /* the whole tensor does not fit half the room: refused, the connection goes on */
  d = NULL;
  assert_int_equal(hurray_net_client_get_into(c, "big", HURRAY_DEVICE_CPU, into,
                                              (uint64_t)BIG * 2, &d, &len, &e),
                   HURRAY_ERR_STREAM_LIMIT);
  assert_null(d);
  assert_int_equal(hurray_net_client_ping(c, &e), HURRAY_OK);
  hurray_net_connection_destroy(&c);
  close(fds[0]);
  assert_int_equal(pthread_join(t, NULL), 0);
  close(fds[1]);
  free(into);
  free(s->data);
  free(s);
}

/* A handler sees the request it answers (hurray_net_server_request): the
 * preferred layouts and flags a client sent with hurray_net_client_get_ex,
 * its own request_flags added. */
static void test_request_seen_by_the_handler(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Server *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->fd = fds[1];
  s->desc_len = dense_descriptor(BIG, s->desc, sizeof s->desc);
  s->data = calloc(1, (size_t)BIG * 4);
  assert_non_null(s->data);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, serve, s), 0);
  HurrayError e;
  HurrayNetConnection *c = parallel_client(fds[0]);
  static const uint8_t meta[2] = {0xAB, 0xCD};
  HurrayNetLayoutEntry prefs[2] = {{HURRAY_LAYOUT_COL_MAJOR, 0, NULL}, {0xF3, 2, meta}};
  HurrayNetRequestOptions r;
  memset(&r, 0, sizeof r);
  r.flags = HURRAY_NET_REQ_ALLOW_TRANSCODE;
  r.layouts = prefs;
  r.layout_count = 2;
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  if (hurray_net_client_get_ex(c, "big", &r, &d, &data, &len, &e) != HURRAY_OK)
    fail_msg("get: %s", e.message);
  assert_true(s->seen);
  assert_string_equal(s->seen_key, "big");
  assert_int_equal(s->seen_flags, HURRAY_NET_REQ_ALLOW_TRANSCODE | HURRAY_NET_REQ_PARALLEL_OK);
  assert_int_equal(s->seen_align, 64);
  assert_int_equal(s->seen_device, HURRAY_DEVICE_CPU);
  assert_int_equal(s->seen_count, 2);
  assert_int_equal(s->seen_tags[0], HURRAY_LAYOUT_COL_MAJOR);
  assert_int_equal(s->seen_tags[1], 0xF3);
  assert_int_equal(s->seen_ext_len, 2);
  assert_memory_equal(s->seen_ext, meta, 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* the old call: no preference, the connection's flags only */
  if (hurray_net_client_get(c, "big", HURRAY_DEVICE_CPU, &d, &data, &len, &e) != HURRAY_OK)
    fail_msg("get: %s", e.message);
  assert_int_equal(s->seen_count, 0);
  assert_int_equal(s->seen_flags, HURRAY_NET_REQ_PARALLEL_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* a client connection, NULL: nothing to show */
  HurrayNetRequest seen;
  assert_false(hurray_net_server_request(c, &seen));
  assert_false(hurray_net_server_request(NULL, &seen));
  assert_false(hurray_net_server_request(c, NULL));
  hurray_net_connection_destroy(&c);
  close(fds[0]);
  assert_int_equal(pthread_join(t, NULL), 0);
  if (s->status != HURRAY_OK) fail_msg("server: %s", s->err.message);
  close(fds[1]);
  free(s->data);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_timeout_and_refusals),
      cmocka_unit_test(test_shard_into_caller_memory),
      cmocka_unit_test(test_request_seen_by_the_handler),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* _WIN32: the transport is POSIX only for now */

int main(void) { return 0; }

#endif
