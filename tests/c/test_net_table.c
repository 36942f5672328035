/* The server's table (hurray/net.h § the server's table): what an add accepts
 * and refuses, keys, and a C client against hurray_net_table_serve over
 * socketpairs: tensors (one buffer, several), a composite in pre-order, the
 * catalog, shards and their refusals, pushes under the cap, the reserved
 * name, the log lines, and many connections at once while entries are
 * replaced under them. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "test_net_util.h"

#if !defined(_WIN32)

#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- descriptors ------------------------------------------------------------------------ */

/* A float32 tensor of `shape` (rank 1 or 2) in `layout` (row- or column-major),
 * encoded into out; its length. */
static uint32_t dense(uint32_t rank, const uint64_t *shape, uint8_t layout, uint8_t *out,
                      size_t cap) {
  uint64_t count = 1;
  for (uint32_t i = 0; i < rank; i++) count *= shape[i];
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  HurrayError e;
  if (hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, rank, shape, layout, count * 4, 64,
                                     &h, &f, &e) != HURRAY_OK)
    fail_msg("%s", e.message);
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, &d, NULL), HURRAY_OK);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, cap, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return (uint32_t)n;
}

/* A 2x3 float32 COO tensor of 2 stored elements: buffers values (8 bytes) and
 * coordinates (2 x 2 x 8 bytes). */
static uint32_t coo(uint8_t *out, size_t cap) {
  const uint64_t shape[2] = {2, 3};
  HurrayBufferHandle b[2];
  memset(b, 0, sizeof b);
  b[0].byte_size = 8;
  b[0].alignment = 64;
  b[1].byte_size = 32;
  b[1].alignment = 64;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_COO;
  f.layout.u.coo.nnz = 2;
  f.layout.u.coo.is_sorted = 1;
  f.buffer_count = 2;
  f.buffers = b;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, 0, &d, &e) != HURRAY_OK) fail_msg("%s", e.message);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, cap, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return (uint32_t)n;
}


/* One tensor of an entry (one buffer, or none). */
static HurrayNetTableTensor one(const uint8_t *desc, uint32_t len, const void *const *bufs,
                                const uint64_t *sizes, uint32_t nbuf) {
  HurrayNetTableTensor t;
  memset(&t, 0, sizeof t);
  t.descriptor = desc;
  t.descriptor_len = len;
  t.buffer_count = nbuf;
  t.buffers = bufs;
  t.sizes = sizes;
  return t;
}

/* ---- the log ----------------------------------------------------------------------------- */

typedef struct Log {
  pthread_mutex_t mu;
  char text[1 << 16];
  size_t len;
} Log;

static void log_append(void *ctx, const char *line) {
  Log *l = ctx;
  pthread_mutex_lock(&l->mu);
  size_t n = strlen(line);
  if (l->len + n + 2 < sizeof l->text) {
    memcpy(l->text + l->len, line, n);
    l->len += n;
    l->text[l->len++] = '\n';
    l->text[l->len] = '\0';
  }
  pthread_mutex_unlock(&l->mu);
}

static bool logged(Log *l, const char *what) {
  pthread_mutex_lock(&l->mu);
  bool found = strstr(l->text, what) != NULL;
  pthread_mutex_unlock(&l->mu);
  return found;
}

/* ---- a connection: the table served in a thread, a C client ------------------------------ */

typedef struct Serving {
  HurrayNetTable *t;
  int fds[2];
  pthread_t thread;
  HurrayStatus status;
  HurrayError err;
  HurrayNetConnection *c; /* the client */
} Serving;

static void *serve_thread(void *arg) {
  Serving *s = arg;
  s->status = hurray_net_table_serve(s->t, s->fds[1], "peer", &s->err);
  return NULL;
}

/* Starts serving `t` on a socketpair and says HELLO from a client whose
 * requests carry `flags`. */
static Serving *open_client(HurrayNetTable *t, uint32_t flags) {
  Serving *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->t = t;
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s->fds), 0);
  assert_int_equal(pthread_create(&s->thread, NULL, serve_thread, s), 0);
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = 20000;
  o.request_flags = flags;
  HurrayError e;
  assert_int_equal(hurray_net_connection_new(s->fds[0], HURRAY_NET_ROLE_CLIENT, &o, &s->c, &e),
                   HURRAY_OK);
  if (hurray_net_client_hello(s->c, NULL, &e) != HURRAY_OK) fail_msg("hello: %s", e.message);
  return s;
}

/* The client closes; the server's call returns HURRAY_OK. */
static void close_client(Serving *s) {
  hurray_net_connection_destroy(&s->c);
  close(s->fds[0]);
  assert_int_equal(pthread_join(s->thread, NULL), 0);
  if (s->status != HURRAY_OK) fail_msg("server: %s", s->err.message);
  close(s->fds[1]);
  free(s);
}

/* Gets `key`: its descriptor fields into *d (owned by the caller) and data. */
static HurrayStatus get(Serving *s, const char *key, HurrayDescriptor **d, void **data,
                        uint64_t *len, HurrayError *e) {
  *d = NULL;
  *data = NULL;
  *len = 0;
  return hurray_net_client_get(s->c, key, HURRAY_DEVICE_CPU, d, data, len, e);
}

static uint32_t ld32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void expect_descriptor(const HurrayDescriptor *d, const uint8_t *want, uint32_t len) {
  uint8_t back[512];
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, back, sizeof back, &n), HURRAY_OK);
  assert_int_equal(n, len);
  assert_memory_equal(back, want, len);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_add_refusals_and_keys(void **state) {
  (void)state;
  HurrayNetTable *t = NULL;
  HurrayError e;
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = -2;
  assert_int_equal(hurray_net_table_new(&o, &t, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "timeout_ms");
  assert_null(t);
  assert_int_equal(hurray_net_table_new(NULL, &t, &e), HURRAY_OK);
  uint8_t desc[256];
  const uint64_t shape[1] = {4};
  uint32_t n = dense(1, shape, HURRAY_LAYOUT_ROW_MAJOR, desc, sizeof desc);
  static float values[4] = {1, 2, 3, 4};
  const void *bufs[1] = {values};
  uint64_t sizes[1] = {16};
  HurrayNetTableTensor x = one(desc, n, bufs, sizes, 1);
  /* names */
  assert_int_equal(hurray_net_table_add(t, "", 0, &x, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "key");
  assert_int_equal(hurray_net_table_add(t, HURRAY_NET_CATALOG_KEY,
                                        strlen(HURRAY_NET_CATALOG_KEY), &x, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.reason, "reserved"));
  assert_int_equal(hurray_net_table_add(t, "\xff\xfe", 2, &x, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.reason, "UTF-8"));
  /* buffers that do not match the descriptor */
  uint64_t small[1] = {15};
  HurrayNetTableTensor bad = one(desc, n, bufs, small, 1);
  assert_int_equal(hurray_net_table_add(t, "w", 1, &bad, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "tensors[0].sizes[0]");
  bad = one(desc, n, NULL, NULL, 0);
  assert_int_equal(hurray_net_table_add(t, "w", 1, &bad, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "tensors[0].buffer_count");
  /* a descriptor that does not decode, one with bytes after it */
  uint8_t junk[64];
  memset(junk, 0x5A, sizeof junk);
  bad = one(junk, sizeof junk, bufs, sizes, 1);
  assert_int_not_equal(hurray_net_table_add(t, "w", 1, &bad, 1, NULL, NULL, &e), HURRAY_OK);
  assert_non_null(strstr(e.field, "tensors[0].descriptor"));
  bad = one(desc, n + 1, bufs, sizes, 1);
  assert_int_equal(hurray_net_table_add(t, "w", 1, &bad, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "tensors[0].descriptor_len");
  /* a composite whose tree is not the count given */
  uint8_t head[128];
  uint32_t hn = net_group_head(2, head, sizeof head);
  HurrayNetTableTensor tree[3] = {one(head, hn, NULL, NULL, 0), x, x};
  assert_int_equal(hurray_net_table_add(t, "c", 1, tree, 2, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "count");
  assert_int_equal(hurray_net_table_add(t, "c", 1, tree, 1, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  HurrayNetTableTensor two[2] = {x, x}; /* a tensor is a whole tree of one */
  assert_int_equal(hurray_net_table_add(t, "c", 1, two, 2, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_net_table_count(t), 0);
  /* accepted: in the order first added; a replacement keeps its place */
  assert_int_equal(hurray_net_table_add(t, "w", 1, &x, 1, NULL, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_net_table_add(t, "c", 1, tree, 3, NULL, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_net_table_add(t, "w", 1, &x, 1, NULL, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_net_table_count(t), 2);
  char key[4];
  size_t klen = 0;
  assert_int_equal(hurray_net_table_key(t, 1, key, sizeof key, &klen, &e), HURRAY_OK);
  assert_string_equal(key, "c");
  assert_int_equal(klen, 1);
  assert_int_equal(hurray_net_table_key(t, 0, key, 1, &klen, &e), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(klen, 1);
  assert_int_equal(hurray_net_table_key(t, 2, key, sizeof key, &klen, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  hurray_net_table_destroy(&t);
  assert_null(t);
  hurray_net_table_destroy(&t); /* NULL: a no-op */
}

#define BIG 5000u /* float32 elements: 20000 bytes, several frames of 4096 */

typedef struct Fixture {
  HurrayNetTable *t;
  Log log;
  uint8_t big_desc[256], coo_desc[256], head[128], inner[128], small_desc[256], col_desc[256];
  uint32_t big_len, coo_len, head_len, inner_len, small_len, col_len;
  uint8_t *big;
  uint8_t coo_values[8], coo_coords[32];
  float small[3];
} Fixture;

static Fixture *fixture(bool writable, uint64_t max_put) {
  Fixture *x = calloc(1, sizeof *x);
  assert_non_null(x);
  pthread_mutex_init(&x->log.mu, NULL);
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  o.writable = writable;
  o.max_put_bytes = max_put;
  o.frame_size = 4096;
  o.timeout_ms = 20000;
  o.log = log_append;
  o.log_ctx = &x->log;
  HurrayError e;
  assert_int_equal(hurray_net_table_new(&o, &x->t, &e), HURRAY_OK);
  /* big: 1000 rows of 5 float32, one buffer */
  const uint64_t rows[2] = {1000, 5};
  x->big_len = dense(2, rows, HURRAY_LAYOUT_ROW_MAJOR, x->big_desc, sizeof x->big_desc);
  x->big = malloc((size_t)BIG * 4);
  assert_non_null(x->big);
  for (size_t i = 0; i < (size_t)BIG * 4; i++) x->big[i] = (uint8_t)(i * 7 + 3);
  const void *bb[1] = {x->big};
  uint64_t bs[1] = {(uint64_t)BIG * 4};
  HurrayNetTableTensor big = one(x->big_desc, x->big_len, bb, bs, 1);
  assert_int_equal(hurray_net_table_add(x->t, "big", 3, &big, 1, NULL, NULL, &e), HURRAY_OK);
  /* coo: two buffers, laid end to end by the add */
  x->coo_len = coo(x->coo_desc, sizeof x->coo_desc);
  for (int i = 0; i < 8; i++) x->coo_values[i] = (uint8_t)(0xA0 + i);
  for (int i = 0; i < 32; i++) x->coo_coords[i] = (uint8_t)i;
  const void *cb[2] = {x->coo_values, x->coo_coords};
  uint64_t cs[2] = {8, 32};
  HurrayNetTableTensor c = one(x->coo_desc, x->coo_len, cb, cs, 2);
  assert_int_equal(hurray_net_table_add(x->t, "coo", 3, &c, 1, NULL, NULL, &e), HURRAY_OK);
  /* comp: head(2) [small, head(1) [coo]] in pre-order */
  x->head_len = net_group_head(2, x->head, sizeof x->head);
  x->inner_len = net_group_head(1, x->inner, sizeof x->inner);
  const uint64_t three[1] = {3};
  x->small_len = dense(1, three, HURRAY_LAYOUT_ROW_MAJOR, x->small_desc, sizeof x->small_desc);
  x->small[0] = 1.5f;
  x->small[1] = -2.0f;
  x->small[2] = 8.0f;
  const void *sb[1] = {x->small};
  uint64_t ss[1] = {12};
  HurrayNetTableTensor tree[4] = {
      one(x->head, x->head_len, NULL, NULL, 0), one(x->small_desc, x->small_len, sb, ss, 1),
      one(x->inner, x->inner_len, NULL, NULL, 0), c};
  assert_int_equal(hurray_net_table_add(x->t, "comp", 4, tree, 4, NULL, NULL, &e), HURRAY_OK);
  /* col: column-major (cannot be split in shards) */
  x->col_len = dense(2, rows, HURRAY_LAYOUT_COL_MAJOR, x->col_desc, sizeof x->col_desc);
  HurrayNetTableTensor col = one(x->col_desc, x->col_len, bb, bs, 1);
  assert_int_equal(hurray_net_table_add(x->t, "col", 3, &col, 1, NULL, NULL, &e), HURRAY_OK);
  return x;
}

static void fixture_free(Fixture *x) {
  hurray_net_table_destroy(&x->t);
  free(x->big);
  pthread_mutex_destroy(&x->log.mu);
  free(x);
}

static void test_tensors_composite_catalog(void **state) {
  (void)state;
  Fixture *x = fixture(false, 0);
  Serving *s = open_client(x->t, 0);
  uint64_t caps = hurray_net_session_peer_capabilities(hurray_net_connection_session(s->c));
  assert_true(caps & HURRAY_NET_CAP_PARALLEL_STREAMS);
  assert_false(caps & HURRAY_NET_CAP_TRANSCODING); /* no transcode limit */
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  HurrayError e;
  /* one buffer, served in place */
  if (get(s, "big", &d, &data, &len, &e) != HURRAY_OK) fail_msg("get: %s", e.message);
  assert_int_equal(len, (uint64_t)BIG * 4);
  assert_memory_equal(data, x->big, (size_t)len);
  expect_descriptor(d, x->big_desc, x->big_len);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* two buffers: their bytes end to end */
  if (get(s, "coo", &d, &data, &len, &e) != HURRAY_OK) fail_msg("get: %s", e.message);
  assert_int_equal(len, 40);
  assert_memory_equal(data, x->coo_values, 8);
  assert_memory_equal((uint8_t *)data + 8, x->coo_coords, 32);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* a composite: the head, then its members in pre-order */
  if (get(s, "comp", &d, &data, &len, &e) != HURRAY_OK) fail_msg("get: %s", e.message);
  expect_descriptor(d, x->head, x->head_len);
  assert_int_equal(len, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  const uint8_t *want[3] = {x->small_desc, x->inner, x->coo_desc};
  const uint32_t want_len[3] = {x->small_len, x->inner_len, x->coo_len};
  const uint64_t want_bytes[3] = {12, 0, 40};
  for (int i = 0; i < 3; i++) {
    assert_true(hurray_net_client_response_open(s->c));
    if (hurray_net_client_get_next(s->c, &d, &data, &len, &e) != HURRAY_OK)
      fail_msg("member %d: %s", i, e.message);
    expect_descriptor(d, want[i], want_len[i]);
    assert_int_equal(len, want_bytes[i]);
    if (i == 0) assert_memory_equal(data, x->small, 12);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    hurray_free(data);
  }
  assert_false(hurray_net_client_response_open(s->c));
  /* the catalog: every name and its descriptor (a composite's head) in order */
  if (get(s, HURRAY_NET_CATALOG_KEY, &d, &data, &len, &e) != HURRAY_OK)
    fail_msg("catalog: %s", e.message);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  const char *names[4] = {"big", "coo", "comp", "col"};
  const uint8_t *descs[4] = {x->big_desc, x->coo_desc, x->head, x->col_desc};
  const uint32_t lens[4] = {x->big_len, x->coo_len, x->head_len, x->col_len};
  const uint8_t *p = data;
  for (int i = 0; i < 4; i++) {
    uint32_t kl = ld32(p);
    assert_int_equal(kl, strlen(names[i]));
    assert_memory_equal(p + 4, names[i], kl);
    p += 4 + kl;
    uint32_t dl = ld32(p);
    assert_int_equal(dl, lens[i]);
    assert_memory_equal(p + 4, descs[i], dl);
    p += 4 + dl;
  }
  assert_int_equal((uint64_t)(p - (const uint8_t *)data), len);
  hurray_free(data);
  /* an unknown name; the connection goes on */
  assert_int_equal(get(s, "nope", &d, &data, &len, &e), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_net_client_ping(s->c, &e), HURRAY_OK);
  /* pushes: this table is not writable */
  assert_int_equal(hurray_net_client_put(s->c, "up", x->small_desc, x->small_len, x->small, 12,
                                         &e),
                   HURRAY_ERR_PROTOCOL);
  assert_non_null(strstr(e.message, "INVALID_MESSAGE"));
  close_client(s);
  assert_true(logged(&x->log, "peer GET 'big' 20000 bytes"));
  assert_true(logged(&x->log, "peer GET 'coo' 40 bytes"));
  assert_true(logged(&x->log, "peer GET 'comp' 0 bytes"));
  assert_true(logged(&x->log, "peer LIST "));
  assert_true(logged(&x->log, "peer GET 'nope' unknown tensor"));
  fixture_free(x);
}

static void test_shards(void **state) {
  (void)state;
  Fixture *x = fixture(false, 0);
  Serving *s = open_client(x->t, HURRAY_NET_REQ_PARALLEL_OK);
  HurrayError e;
  HurrayDescriptor *d = NULL;
  uint64_t len = 0;
  /* shard 1 of 3 of 1000 rows: rows 334..667 (the first shard one row longer) */
  uint8_t *into = calloc(1, (size_t)BIG * 4);
  assert_non_null(into);
  if (hurray_net_client_get_into(s->c, "big#shard=1/3", HURRAY_DEVICE_CPU, into, (uint64_t)BIG * 4,
                                 &d, &len, &e) != HURRAY_OK)
    fail_msg("shard: %s", e.message);
  assert_int_equal(len, 333u * 20u);
  assert_memory_equal(into, x->big + 334u * 20u, (size_t)len);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.shard);
  assert_int_equal(f.shape[0], 333);
  assert_int_equal(f.shape[1], 5);
  assert_int_equal(f.shard->offset[0], 334);
  assert_int_equal(f.shard->offset[1], 0);
  assert_int_equal(f.shard->parent_shape[0], 1000);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  d = NULL;
  /* a layout that cannot be split in rows, a composite */
  assert_int_equal(hurray_net_client_get_into(s->c, "col#shard=0/2", HURRAY_DEVICE_CPU, into,
                                              (uint64_t)BIG * 4, &d, &len, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_non_null(strstr(e.message, "SHARD_MISMATCH"));
  assert_int_equal(hurray_net_client_get_into(s->c, "comp#shard=0/2", HURRAY_DEVICE_CPU, into,
                                              (uint64_t)BIG * 4, &d, &len, &e),
                   HURRAY_ERR_PROTOCOL);
  /* more shards than rows; K not below N is no shard key at all */
  assert_int_equal(hurray_net_client_get_into(s->c, "big#shard=0/1001", HURRAY_DEVICE_CPU, into,
                                              (uint64_t)BIG * 4, &d, &len, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_int_equal(hurray_net_client_get_into(s->c, "big#shard=3/3", HURRAY_DEVICE_CPU, into,
                                              (uint64_t)BIG * 4, &d, &len, &e),
                   HURRAY_ERR_NOT_FOUND);
  assert_null(d);
  close_client(s);
  /* a client that did not say PARALLEL_OK is never sent a shard */
  s = open_client(x->t, 0);
  assert_int_equal(hurray_net_client_get_into(s->c, "big#shard=0/2", HURRAY_DEVICE_CPU, into,
                                              (uint64_t)BIG * 4, &d, &len, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_non_null(strstr(e.message, "parallel"));
  assert_int_equal(hurray_net_client_ping(s->c, &e), HURRAY_OK);
  close_client(s);
  assert_true(logged(&x->log, "peer GET 'big#shard=1/3' 6660 bytes"));
  assert_true(logged(&x->log, "peer GET 'col#shard=0/2' cannot be split in shards"));
  free(into);
  fixture_free(x);
}

static void test_puts_and_cap(void **state) {
  (void)state;
  Fixture *x = fixture(true, 100);
  Serving *s = open_client(x->t, 0);
  HurrayError e;
  uint8_t d10[256], d25[256], d20[256];
  const uint64_t s10[1] = {10}, s25[1] = {25}, s20[1] = {20};
  uint32_t n10 = dense(1, s10, HURRAY_LAYOUT_ROW_MAJOR, d10, sizeof d10);
  uint32_t n25 = dense(1, s25, HURRAY_LAYOUT_ROW_MAJOR, d25, sizeof d25);
  uint32_t n20 = dense(1, s20, HURRAY_LAYOUT_ROW_MAJOR, d20, sizeof d20);
  uint8_t bytes[100];
  for (int i = 0; i < 100; i++) bytes[i] = (uint8_t)(100 - i);
  /* 40 bytes: taken, and served back */
  if (hurray_net_client_put(s->c, "up", d10, n10, bytes, 40, &e) != HURRAY_OK)
    fail_msg("put: %s", e.message);
  assert_int_equal(hurray_net_table_count(x->t), 5);
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  assert_int_equal(get(s, "up", &d, &data, &len, &e), HURRAY_OK);
  assert_int_equal(len, 40);
  assert_memory_equal(data, bytes, 40);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* 40 + 100 > 100: refused, MESSAGE_TOO_LARGE */
  assert_int_equal(hurray_net_client_put(s->c, "more", d25, n25, bytes, 100, &e),
                   HURRAY_ERR_STREAM_LIMIT);
  assert_non_null(strstr(e.message, "MESSAGE_TOO_LARGE"));
  /* a replacement counts instead of the entry it replaces: 80 in all */
  if (hurray_net_client_put(s->c, "up", d20, n20, bytes + 20, 80, &e) != HURRAY_OK)
    fail_msg("put: %s", e.message);
  assert_int_equal(get(s, "up", &d, &data, &len, &e), HURRAY_OK);
  assert_int_equal(len, 80);
  assert_memory_equal(data, bytes + 20, 80);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* the reserved name */
  assert_int_equal(hurray_net_client_put(s->c, HURRAY_NET_CATALOG_KEY, d10, n10, bytes, 40, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_non_null(strstr(e.message, "INVALID_MESSAGE"));
  /* a pushed name appears in the keys and the catalog */
  char key[8];
  size_t klen = 0;
  assert_int_equal(hurray_net_table_key(x->t, 4, key, sizeof key, &klen, &e), HURRAY_OK);
  assert_string_equal(key, "up");
  assert_int_equal(hurray_net_table_count(x->t), 5);
  close_client(s);
  assert_true(logged(&x->log, "peer PUT 'up' 40 bytes"));
  assert_true(logged(&x->log, "peer PUT 'more' refused: over max_put_bytes"));
  assert_true(logged(&x->log, "peer PUT '__hurray_catalog__' refused: a reserved name"));
  fixture_free(x);
}

/* Log lines quote names as Python's repr does. */
static void test_log_quoting(void **state) {
  (void)state;
  Fixture *x = fixture(false, 0);
  Serving *s = open_client(x->t, 0);
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  HurrayError e;
  assert_int_equal(get(s, "it's", &d, &data, &len, &e), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(get(s, "a\nb\\c", &d, &data, &len, &e), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(get(s, "\xc3\xa9t\xc3\xa9", &d, &data, &len, &e), HURRAY_ERR_NOT_FOUND);
  close_client(s);
  assert_true(logged(&x->log, "peer GET \"it's\" unknown tensor"));
  assert_true(logged(&x->log, "peer GET 'a\\nb\\\\c' unknown tensor"));
  assert_true(logged(&x->log, "peer GET '\xc3\xa9t\xc3\xa9' unknown tensor"));
  fixture_free(x);
}

/* ---- many connections while entries are replaced --------------------------------------- */

#define VBYTES (256u * 1024u) /* 64 frames of 4096 */
#define CLIENTS 6
#define ROUNDS 12

typedef struct Version {
  uint8_t *data;
  int *released;
  pthread_mutex_t *mu;
} Version;

/* The release callback: poisons the data, so a server still sending it after
 * its release would be caught, then frees it. */
static void release_version(void *ctx) {
  Version *v = ctx;
  memset(v->data, 0xDD, VBYTES);
  free(v->data);
  pthread_mutex_lock(v->mu);
  (*v->released)++;
  pthread_mutex_unlock(v->mu);
  free(v);
}

typedef struct Worker {
  HurrayNetTable *t;
  pthread_t thread;
  int bad; /* a fetch whose bytes are not one version, whole */
  int got;
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  Serving *s = open_client(w->t, 0);
  for (int r = 0; r < ROUNDS; r++) {
    HurrayDescriptor *d = NULL;
    void *data = NULL;
    uint64_t len = 0;
    HurrayError e;
    if (get(s, "v", &d, &data, &len, &e) != HURRAY_OK || len != VBYTES) {
      w->bad++;
      continue;
    }
    const uint8_t *p = data;
    uint8_t version = p[0];
    for (uint32_t i = 0; i < VBYTES; i++)
      if (p[i] != (uint8_t)(version + i * 13u)) {
        w->bad++;
        break;
      }
    w->got++;
    if (hurray_descriptor_destroy(d) != HURRAY_OK) w->bad++;
    hurray_free(data);
  }
  close_client(s);
  return NULL;
}

static void add_version(HurrayNetTable *t, const uint8_t *desc, uint32_t dlen, uint8_t version,
                        int *released, pthread_mutex_t *mu) {
  Version *v = malloc(sizeof *v);
  assert_non_null(v);
  v->data = malloc(VBYTES);
  assert_non_null(v->data);
  for (uint32_t i = 0; i < VBYTES; i++) v->data[i] = (uint8_t)(version + i * 13u);
  v->released = released;
  v->mu = mu;
  const void *b[1] = {v->data};
  uint64_t sz[1] = {VBYTES};
  HurrayNetTableTensor x = one(desc, dlen, b, sz, 1);
  HurrayError e;
  if (hurray_net_table_add(t, "v", 1, &x, 1, release_version, v, &e) != HURRAY_OK)
    fail_msg("add: %s", e.message);
}

static void test_concurrent_connections(void **state) {
  (void)state;
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  o.frame_size = 4096;
  HurrayNetTable *t = NULL;
  HurrayError e;
  assert_int_equal(hurray_net_table_new(&o, &t, &e), HURRAY_OK);
  uint8_t desc[256];
  const uint64_t shape[1] = {VBYTES / 4};
  uint32_t dlen = dense(1, shape, HURRAY_LAYOUT_ROW_MAJOR, desc, sizeof desc);
  int released = 0, added = 0;
  pthread_mutex_t mu;
  pthread_mutex_init(&mu, NULL);
  add_version(t, desc, dlen, 0, &released, &mu);
  added++;
  Worker w[CLIENTS];
  memset(w, 0, sizeof w);
  for (int i = 0; i < CLIENTS; i++) {
    w[i].t = t;
    assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
  }
  /* replace the entry under the connections: each release poisons and frees */
  for (uint8_t v = 1; v <= 40; v++) {
    add_version(t, desc, dlen, v, &released, &mu);
    added++;
    usleep(1000);
  }
  for (int i = 0; i < CLIENTS; i++) {
    assert_int_equal(pthread_join(w[i].thread, NULL), 0);
    assert_int_equal(w[i].bad, 0);
    assert_int_equal(w[i].got, ROUNDS);
  }
  /* every replaced version is released once no connection sends it */
  pthread_mutex_lock(&mu);
  assert_int_equal(released, added - 1);
  pthread_mutex_unlock(&mu);
  hurray_net_table_destroy(&t);
  assert_int_equal(released, added);
  pthread_mutex_destroy(&mu);
}

/* ---- layout selection and transcoding (interchange.md § Server Layout Selection) ------- */

/* A layout list in wire form from tags (a private tag gets 2 bytes of metadata). */
static HurrayNetLayoutList prefs(const uint8_t *tags, uint16_t n, uint8_t *buf, size_t cap) {
  HurrayNetLayoutEntry e[8];
  static const uint8_t meta[2] = {0x12, 0x34};
  if (n == 0) {
    HurrayNetLayoutList empty = {0, 0, NULL};
    (void)buf;
    (void)cap;
    return empty;
  }
  for (uint16_t i = 0; i < n; i++) {
    e[i].tag = tags[i];
    e[i].ext_len = tags[i] >= 0xF0 ? 2 : 0;
    e[i].ext = tags[i] >= 0xF0 ? meta : NULL;
  }
  size_t len = 0;
  assert_int_equal(hurray_net_layout_list_encode(e, n, buf, cap, &len, NULL), HURRAY_OK);
  HurrayNetLayoutList l = {n, (uint32_t)len, buf};
  return l;
}

static void test_layout_select(void **state) {
  (void)state;
  const uint64_t shape[2] = {2, 3};
  HurrayBufferHandle h;
  HurrayDescriptorFields col;
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape,
                                                  HURRAY_LAYOUT_COL_MAJOR, 24, 64, &h, &col, NULL),
                   HURRAY_OK);
  const uint8_t ROW = HURRAY_LAYOUT_ROW_MAJOR, COL = HURRAY_LAYOUT_COL_MAJOR;
  const uint32_t ALLOW = HURRAY_NET_REQ_ALLOW_TRANSCODE;
  uint8_t buf[64];
  uint64_t bytes = 99;
  /* rule 2: no preference, the stored layout */
  assert_int_equal(hurray_net_layout_select(NULL, ALLOW, &col, 1000, &bytes), COL);
  assert_int_equal(bytes, 0);
  HurrayNetLayoutList none = prefs(NULL, 0, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&none, ALLOW, &col, 1000, &bytes), COL);
  /* rule 1b needs ALLOW_TRANSCODE and a server that transcodes */
  const uint8_t row_only[1] = {ROW};
  HurrayNetLayoutList l = prefs(row_only, 1, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&l, 0, &col, 1000, &bytes), COL);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 0, &bytes), COL);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 1000, &bytes), ROW);
  assert_int_equal(bytes, 24);
  /* within the limit exactly; one byte over falls through to the stored layout */
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 24, &bytes), ROW);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 23, &bytes), COL);
  assert_int_equal(bytes, 0);
  /* the first satisfiable preference wins: a private tag and CSR are passed over */
  const uint8_t mixed[4] = {0xF3, HURRAY_LAYOUT_CSR, ROW, COL};
  l = prefs(mixed, 4, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 1000, &bytes), ROW);
  /* a stored preference before a transcodable one: 1a, nothing made */
  const uint8_t col_first[3] = {HURRAY_LAYOUT_CSR, COL, ROW};
  l = prefs(col_first, 3, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 1000, &bytes), COL);
  assert_int_equal(bytes, 0);
  /* a layout this server does not transcode to (strided) is passed over */
  const uint8_t strided[2] = {HURRAY_LAYOUT_STRIDED, ROW};
  l = prefs(strided, 2, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 1000, &bytes), ROW);
  /* over the limit, the next preference may still be satisfied (stored) */
  const uint8_t row_col[2] = {ROW, COL};
  l = prefs(row_col, 2, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &col, 10, &bytes), COL);
  /* a tensor that cannot be transcoded (sparse): its stored layout */
  uint8_t cdesc[256];
  uint32_t cn = coo(cdesc, sizeof cdesc);
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_decode(cdesc, cn, &d), HURRAY_OK);
  HurrayDescriptorFields cf;
  assert_int_equal(hurray_descriptor_fields(d, &cf), HURRAY_OK);
  l = prefs(row_only, 1, buf, sizeof buf);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, &cf, 1000, &bytes), HURRAY_LAYOUT_COO);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(hurray_net_layout_select(&l, ALLOW, NULL, 1000, &bytes), 0);
}

/* Gets `key` with the preferences `tags` and `flags`. */
static HurrayStatus get_prefs(Serving *s, const char *key, const uint8_t *tags, uint16_t n,
                              uint32_t flags, HurrayDescriptor **d, void **data, uint64_t *len,
                              HurrayError *e) {
  HurrayNetLayoutEntry ent[8];
  memset(ent, 0, sizeof ent);
  for (uint16_t i = 0; i < n; i++) ent[i].tag = tags[i];
  HurrayNetRequestOptions r;
  memset(&r, 0, sizeof r);
  r.flags = flags;
  r.layouts = ent;
  r.layout_count = n;
  *d = NULL;
  *data = NULL;
  *len = 0;
  return hurray_net_client_get_ex(s->c, key, &r, d, data, len, e);
}

static uint8_t layout_of(const HurrayDescriptor *d) {
  uint8_t tag = 0;
  assert_int_equal(hurray_descriptor_layout_tag(d, &tag), HURRAY_OK);
  return tag;
}

static void test_transcoding_over_the_wire(void **state) {
  (void)state;
  Fixture *x = fixture(false, 0);
  /* a second table over the same tensors, transcoding up to 8000 bytes */
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  o.frame_size = 4096;
  o.timeout_ms = 20000;
  o.transcode_limit = 8000;
  o.log = log_append;
  o.log_ctx = &x->log;
  HurrayNetTable *t = NULL;
  HurrayError e;
  assert_int_equal(hurray_net_table_new(&o, &t, &e), HURRAY_OK);
  /* m: 10 x 5 float32 row-major (200 bytes); big: 20000 bytes, over the limit */
  const uint64_t ten[2] = {10, 5};
  uint8_t mdesc[256];
  uint32_t mn = dense(2, ten, HURRAY_LAYOUT_ROW_MAJOR, mdesc, sizeof mdesc);
  const void *mb[1] = {x->big};
  uint64_t ms[1] = {200};
  HurrayNetTableTensor m = one(mdesc, mn, mb, ms, 1);
  assert_int_equal(hurray_net_table_add(t, "m", 1, &m, 1, NULL, NULL, &e), HURRAY_OK);
  const void *bb[1] = {x->big};
  uint64_t bs[1] = {(uint64_t)BIG * 4};
  HurrayNetTableTensor big = one(x->big_desc, x->big_len, bb, bs, 1);
  assert_int_equal(hurray_net_table_add(t, "big", 3, &big, 1, NULL, NULL, &e), HURRAY_OK);
  const void *sb[1] = {x->small};
  uint64_t ss[1] = {12};
  const void *cb[2] = {x->coo_values, x->coo_coords};
  uint64_t cs[2] = {8, 32};
  HurrayNetTableTensor tree[4] = {
      one(x->head, x->head_len, NULL, NULL, 0), one(x->small_desc, x->small_len, sb, ss, 1),
      one(x->inner, x->inner_len, NULL, NULL, 0), one(x->coo_desc, x->coo_len, cb, cs, 2)};
  assert_int_equal(hurray_net_table_add(t, "comp", 4, tree, 4, NULL, NULL, &e), HURRAY_OK);

  Serving *s = open_client(t, HURRAY_NET_REQ_PARALLEL_OK);
  uint64_t caps = hurray_net_session_peer_capabilities(hurray_net_connection_session(s->c));
  assert_true(caps & HURRAY_NET_CAP_TRANSCODING);
  const uint8_t COL[1] = {HURRAY_LAYOUT_COL_MAJOR};
  const uint32_t ALLOW = HURRAY_NET_REQ_ALLOW_TRANSCODE;
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  /* without ALLOW_TRANSCODE: as stored */
  assert_int_equal(get_prefs(s, "m", COL, 1, 0, &d, &data, &len, &e), HURRAY_OK);
  assert_int_equal(layout_of(d), HURRAY_LAYOUT_ROW_MAJOR);
  assert_memory_equal(data, x->big, 200);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* with it: column-major, element (i, j) at j * 10 + i */
  if (get_prefs(s, "m", COL, 1, ALLOW, &d, &data, &len, &e) != HURRAY_OK)
    fail_msg("get: %s", e.message);
  assert_int_equal(layout_of(d), HURRAY_LAYOUT_COL_MAJOR);
  assert_int_equal(len, 200);
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 5; j++)
      assert_memory_equal((uint8_t *)data + (j * 10 + i) * 4, x->big + (i * 5 + j) * 4, 4);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.shape[0], 10);
  assert_int_equal(f.buffers[0].byte_size, 200);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* over the limit: falls through to the stored layout */
  assert_int_equal(get_prefs(s, "big", COL, 1, ALLOW, &d, &data, &len, &e), HURRAY_OK);
  assert_int_equal(layout_of(d), HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(len, (uint64_t)BIG * 4);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_free(data);
  /* a composite: each member negotiated on its own (the sparse one kept) */
  assert_int_equal(get_prefs(s, "comp", COL, 1, ALLOW, &d, &data, &len, &e), HURRAY_OK);
  assert_int_equal(layout_of(d), HURRAY_LAYOUT_COMPOSITE);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  const uint8_t want[3] = {HURRAY_LAYOUT_COL_MAJOR, HURRAY_LAYOUT_COMPOSITE, HURRAY_LAYOUT_COO};
  for (int i = 0; i < 3; i++) {
    if (hurray_net_client_get_next(s->c, &d, &data, &len, &e) != HURRAY_OK)
      fail_msg("member %d: %s", i, e.message);
    assert_int_equal(layout_of(d), want[i]);
    if (i == 0) assert_memory_equal(data, x->small, 12); /* 1-D: the same bytes */
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    hurray_free(data);
  }
  assert_false(hurray_net_client_response_open(s->c));
  /* a shard is cut from the stored layout, whatever the preferences */
  HurrayNetLayoutEntry ent = {HURRAY_LAYOUT_COL_MAJOR, 0, NULL};
  HurrayNetRequestOptions r;
  memset(&r, 0, sizeof r);
  r.flags = ALLOW;
  r.layouts = &ent;
  r.layout_count = 1;
  uint8_t *into = calloc(1, 200);
  assert_non_null(into);
  if (hurray_net_client_get_into_ex(s->c, "m#shard=1/2", &r, into, 200, &d, &len, &e) !=
      HURRAY_OK)
    fail_msg("shard: %s", e.message);
  assert_int_equal(layout_of(d), HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(len, 100);
  assert_memory_equal(into, x->big + 100, 100);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  free(into);
  /* a layout list that does not encode is refused before anything is sent */
  HurrayNetLayoutEntry bad = {0x00, 0, NULL};
  r.layouts = &bad;
  assert_int_equal(hurray_net_client_get_ex(s->c, "m", &r, &d, &data, &len, &e),
                   HURRAY_ERR_PROTOCOL);
  assert_int_equal(hurray_net_client_ping(s->c, &e), HURRAY_OK);
  close_client(s);
  assert_true(logged(&x->log, "peer GET 'm' 200 bytes as col_major (transcoded from row_major)"));
  assert_true(logged(&x->log, "peer GET 'big' 20000 bytes\n"));
  hurray_net_table_destroy(&t);
  fixture_free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_refusals_and_keys),
      cmocka_unit_test(test_tensors_composite_catalog),
      cmocka_unit_test(test_shards),
      cmocka_unit_test(test_puts_and_cap),
      cmocka_unit_test(test_log_quoting),
      cmocka_unit_test(test_concurrent_connections),
      cmocka_unit_test(test_layout_select),
      cmocka_unit_test(test_transcoding_over_the_wire),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* _WIN32: the transport is POSIX only for now */

int main(void) { return 0; }

#endif
