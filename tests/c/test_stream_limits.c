/*
 * Reader limits (descriptor bytes, buffer bytes, composite depth), each
 * checked before anything is allocated for it; cross-machine refusals on the
 * reader and the writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_stream_util.h"
#include "internal/validate.h"

/* ---- an allocator that records the largest request ---------------------------- */

static size_t g_largest;
static size_t g_widest; /* largest alignment asked for */

static void *rec_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (size > g_largest) g_largest = size;
  if (alignment > g_widest) g_widest = alignment;
  if (size > ((size_t)1 << 30)) return NULL; /* refuse absurd requests */
  return tu_aligned_alloc(alignment, size);
}

static void rec_free(void *ctx, void *p) {
  (void)ctx;
  tu_aligned_free(p);
}

static void rec_install(void) {
  static const HurrayAllocator a = {rec_alloc, rec_free, NULL};
  hurray_set_allocator(&a);
  g_largest = 0;
  g_widest = 0;
}

/* ---- sources ---------------------------------------------------------------- */

typedef struct Feed {
  const uint8_t *data;
  size_t len, pos;
} Feed;

static int64_t feed_read(void *ctx, uint8_t *buf, size_t len) {
  Feed *f = ctx;
  size_t left = f->len - f->pos;
  size_t n = len < left ? len : left;
  memcpy(buf, f->data + f->pos, n);
  f->pos += n;
  return (int64_t)n;
}

static uint8_t *encode(const HurrayDescriptor *d, size_t *len) {
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &n), HURRAY_OK);
  uint8_t *p = malloc((size_t)n);
  assert_non_null(p);
  assert_int_equal(hurray_descriptor_encode(d, p, n, &n), HURRAY_OK);
  *len = (size_t)n;
  return p;
}

/* Stream bytes of descriptor d followed by `data_len` pattern bytes. */
static uint8_t *frame(const HurrayDescriptor *d, size_t data_len, size_t *len) {
  size_t dl = 0;
  uint8_t *desc = encode(d, &dl);
  uint8_t *p = malloc(dl + data_len + 1);
  assert_non_null(p);
  memcpy(p, desc, dl);
  uint8_t *pat = su_pattern(data_len, 0);
  memcpy(p + dl, pat, data_len);
  free(pat);
  free(desc);
  *len = dl + data_len;
  return p;
}

static HurrayStatus read_one(const uint8_t *bytes, size_t len, bool callback,
                             const HurrayStreamReaderOptions *o, HurrayError *e, Feed *feed) {
  HurrayStreamReader *r = NULL;
  Feed local = {bytes, len, 0};
  if (feed == NULL) feed = &local;
  *feed = local;
  if (callback)
    assert_int_equal(hurray_stream_reader_from_callback(feed_read, feed, o, &r), HURRAY_OK);
  else
    assert_int_equal(hurray_stream_reader_from_memory(bytes, len, o, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayStatus st = hurray_stream_reader_next_item(r, &it, e);
  if (st == HURRAY_OK) assert_non_null(it);
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);
  return st;
}

/* ---- descriptor limit --------------------------------------------------------- */

static void test_descriptor_limit_boundary(void **state) {
  (void)state;
  HurrayDescriptor *d = su_dense(4);
  size_t len = 0, dl = 0;
  uint8_t *bytes = frame(d, 16, &len);
  free(encode(d, &dl));
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  for (int cb = 0; cb < 2; cb++) {
    HurrayError e;
    o.max_descriptor_bytes = dl - 1;
    assert_int_equal(read_one(bytes, len, cb, &o, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
    assert_string_equal(e.field, "descriptor_length");
    assert_int_equal(e.offset, 6);
    assert_non_null(strstr(e.message, "max_descriptor_bytes"));
    o.max_descriptor_bytes = dl;
    assert_int_equal(read_one(bytes, len, cb, &o, &e, NULL), HURRAY_OK);
  }
  free(bytes);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_descriptor_limit_before_allocation(void **state) {
  (void)state;
  /* A prefix claiming a 4 GiB descriptor, and nothing behind it. */
  uint8_t forged[16] = {'H', 'R', 'R', 'Y', 1, 0, 0xF0, 0xFF, 0xFF, 0xFF};
  rec_install();
  HurrayError e;
  assert_int_equal(read_one(forged, sizeof forged, true, NULL, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  assert_true(g_largest < 1024 * 1024);
  g_largest = 0;
  assert_int_equal(read_one(forged, sizeof forged, false, NULL, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  assert_true(g_largest < 1024 * 1024);
  /* Under the limit, a memory source still allocates nothing for bytes it lacks. */
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  o.max_descriptor_bytes = UINT64_MAX;
  g_largest = 0;
  assert_int_equal(read_one(forged, sizeof forged, false, &o, &e, NULL), HURRAY_ERR_STREAM);
  assert_true(g_largest < 1024 * 1024);
  hurray_set_allocator(NULL);
}

/* ---- buffer limit ------------------------------------------------------------- */

static void test_buffer_limit_boundary(void **state) {
  (void)state;
  const uint64_t size = 1024 * 1024;
  HurrayDescriptor *d = su_dense(size / 4);
  size_t len = 0;
  uint8_t *bytes = frame(d, size, &len);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  HurrayOffsets off;
  hurray__descriptor_offsets(&f, &off);
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  rec_install();
  for (int cb = 0; cb < 2; cb++) {
    HurrayError e;
    o.max_buffer_bytes = size - 1;
    g_largest = 0;
    assert_int_equal(read_one(bytes, len, cb, &o, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
    assert_string_equal(e.field, "buffers[0].byte_size");
    assert_int_equal(e.offset, off.buffer_table + 1);
    assert_non_null(strstr(e.message, "max_buffer_bytes"));
    assert_true(g_largest < size);
    o.max_buffer_bytes = size;
    assert_int_equal(read_one(bytes, len, cb, &o, &e, NULL), HURRAY_OK);
    assert_true(g_largest >= size);
  }
  hurray_set_allocator(NULL);
  free(bytes);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_huge_buffer_claim(void **state) {
  (void)state;
  /* Three floats whose buffer claims 1 TiB (valid: larger than implied). */
  HurrayDescriptor *d = su_dense_full(3, (uint64_t)1 << 40, HURRAY_DEVICE_CPU,
                                      HURRAY_SYNC_PRODUCER_SYNCED);
  size_t len = 0;
  uint8_t *bytes = frame(d, 12, &len);
  rec_install();
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  o.max_buffer_bytes = 1024 * 1024;
  HurrayError e;
  /* With a limit: refused before allocating, from any source. */
  assert_int_equal(read_one(bytes, len, true, &o, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  assert_true(g_largest < 1024 * 1024);
  assert_int_equal(read_one(bytes, len, false, &o, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  /* Unlimited, memory source: the missing bytes are noticed before allocating. */
  g_largest = 0;
  assert_int_equal(read_one(bytes, len, false, NULL, &e, NULL), HURRAY_ERR_STREAM);
  assert_true(g_largest < 1024 * 1024);
  /* Unlimited, callback source: the allocation is attempted and its failure reported. */
  assert_int_equal(read_one(bytes, len, true, NULL, &e, NULL), HURRAY_ERR_OUT_OF_MEMORY);
  hurray_set_allocator(NULL);
  free(bytes);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* A huge declared alignment on a small buffer cannot inflate the allocation;
 * on a buffer at least that large it is honoured. */
static void test_alignment_cannot_inflate_allocations(void **state) {
  (void)state;
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  uint64_t n = 16;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.version_major = 1;
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 1;
  f.shape = &n;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  static const struct { uint64_t size; uint32_t align; size_t want; } k[] = {
      {64, 1u << 30, 4096},             /* tiny buffer, 1 GiB alignment: a page */
      {64, 4096, 4096},                 /* a page is always honoured */
      {64, 128, 128},
      {4u << 20, 1u << 20, 1u << 20},   /* big enough: honoured */
      {8u << 20, 4u << 20, 2u << 20},   /* capped at 2 MiB */
      {8u << 20, 1u << 30, 4096},       /* above the size: a page */
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    h.byte_size = k[i].size;
    h.alignment = k[i].align;
    HurrayDescriptor *d = NULL;
    HurrayError e;
    if (hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e) != HURRAY_OK)
      fail_msg("%s", e.message);
    size_t len = 0;
    uint8_t *bytes = frame(d, (size_t)k[i].size, &len);
    rec_install();
    HurrayStreamReader *r = NULL;
    assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
    HurrayStreamItem *it = NULL;
    assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
    const uint8_t *data = NULL;
    assert_int_equal(hurray_stream_item_buffer(it, 0, &data, NULL), HURRAY_OK);
    assert_int_equal((uintptr_t)data % k[i].want, 0);
    assert_int_equal(g_widest, k[i].want);
    hurray_stream_item_destroy(&it);
    hurray_stream_reader_destroy(&r);
    hurray_set_allocator(NULL);
    free(bytes);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
}

/* ---- composite depth -------------------------------------------------------------- */

/* `depth` nested one-member group heads around a 2-float tensor. */
static uint8_t *nested(unsigned depth, size_t *len) {
  size_t cap = 4096, n = 0;
  uint8_t *p = malloc(cap);
  assert_non_null(p);
  for (unsigned i = 0; i < depth; i++) {
    HurrayDescriptor *h = su_head(HURRAY_COMPOSITE_GROUP, 0, 1, 1, 1, 0, 0, 0, 0);
    size_t hl = 0;
    uint8_t *hb = encode(h, &hl);
    assert_true(n + hl < cap);
    memcpy(p + n, hb, hl);
    n += hl;
    free(hb);
    assert_int_equal(hurray_descriptor_destroy(h), HURRAY_OK);
  }
  HurrayDescriptor *d = su_dense(2);
  size_t fl = 0;
  uint8_t *fb = frame(d, 8, &fl);
  assert_true(n + fl < cap);
  memcpy(p + n, fb, fl);
  n += fl;
  free(fb);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  *len = n;
  return p;
}

static void test_depth_limit(void **state) {
  (void)state;
  size_t len = 0;
  HurrayError e;
  uint8_t *ok8 = nested(8, &len);
  assert_int_equal(read_one(ok8, len, false, NULL, &e, NULL), HURRAY_OK);
  free(ok8);
  uint8_t *bad9 = nested(9, &len);
  assert_int_equal(read_one(bad9, len, false, NULL, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  assert_non_null(strstr(e.message, "max_composite_depth = 8"));
  assert_int_equal(read_one(bad9, len, true, NULL, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  free(bad9);

  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  o.max_composite_depth = 2;
  uint8_t *two = nested(2, &len);
  assert_int_equal(read_one(two, len, false, &o, &e, NULL), HURRAY_OK);
  free(two);
  uint8_t *three = nested(3, &len);
  assert_int_equal(read_one(three, len, false, &o, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  free(three);
  o.max_composite_depth = 0;
  uint8_t *one = nested(1, &len);
  assert_int_equal(read_one(one, len, false, &o, &e, NULL), HURRAY_ERR_STREAM_LIMIT);
  free(one);
  uint8_t *zero = nested(0, &len);
  assert_int_equal(read_one(zero, len, false, &o, &e, NULL), HURRAY_OK);
  free(zero);
}

/* Writer: a tree nested 9 deep is refused before any byte is written. */
static void test_writer_depth_limit(void **state) {
  (void)state;
  HurrayDescriptor *head = su_head(HURRAY_COMPOSITE_GROUP, 0, 1, 1, 1, 0, 0, 0, 0);
  HurrayDescriptor *leaf = su_dense(2);
  uint8_t data[8] = {0};
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {8};
  HurrayStreamNode nodes[10];
  memset(nodes, 0, sizeof nodes);
  for (int depth = 8; depth <= 9; depth++) {
    memset(nodes, 0, sizeof nodes);
    for (int i = 0; i < depth; i++) {
      nodes[i].descriptor = head;
      nodes[i].member_count = 1;
      nodes[i].members = &nodes[i + 1];
    }
    nodes[depth].descriptor = leaf;
    nodes[depth].buffers = bufs;
    nodes[depth].buffer_sizes = sizes;
    nodes[depth].buffer_count = 1;
    nodes[depth].member_count = 0;
    nodes[depth].members = NULL;
    HurrayStreamWriter *w = NULL;
    assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
    HurrayError e;
    HurrayStatus st = hurray_stream_writer_write_node(w, &nodes[0], &e);
    if (depth == 8) {
      assert_int_equal(st, HURRAY_OK);
    } else {
      assert_int_equal(st, HURRAY_ERR_STREAM_LIMIT);
      assert_int_equal(hurray_stream_writer_offset(w), 0);
    }
    hurray_stream_writer_destroy(&w);
  }
  assert_int_equal(hurray_descriptor_destroy(head), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leaf), HURRAY_OK);
}

/* ---- cross-machine ------------------------------------------------------------------ */

static void test_cross_machine_reader(void **state) {
  (void)state;
  static const uint8_t modes[2] = {HURRAY_SYNC_EVENT, HURRAY_SYNC_CONSUMER_STREAM};
  for (int m = 0; m < 2; m++) {
    HurrayDescriptor *gpu = su_dense_dev(4, HURRAY_DEVICE_CUDA, modes[m]);
    size_t len = 0;
    uint8_t *bytes = frame(gpu, 16, &len);
    HurrayDescriptorFields f;
    assert_int_equal(hurray_descriptor_fields(gpu, &f), HURRAY_OK);
    HurrayOffsets off;
    hurray__descriptor_offsets(&f, &off);
    HurrayStreamReaderOptions o;
    hurray_stream_reader_options_init(&o);
    HurrayError e;
    /* Local stream: relayed as is. */
    assert_int_equal(read_one(bytes, len, true, &o, &e, NULL), HURRAY_OK);
    o.flags = HURRAY_STREAM_CROSS_MACHINE;
    Feed feed;
    assert_int_equal(read_one(bytes, len, true, &o, &e, &feed), HURRAY_ERR_CROSS_MACHINE);
    assert_string_equal(e.field, "buffers[0].sync_mode");
    assert_int_equal(e.offset, off.buffer_table + 1 + 13);
    /* Refused before any byte of the buffer was read. */
    assert_int_equal(feed.pos, off.end);
    assert_int_equal(read_one(bytes, len, false, &o, &e, NULL), HURRAY_ERR_CROSS_MACHINE);
    free(bytes);
    assert_int_equal(hurray_descriptor_destroy(gpu), HURRAY_OK);
  }
  /* A producer-synced device buffer crosses machines. */
  HurrayDescriptor *ok = su_dense_dev(4, HURRAY_DEVICE_CUDA, HURRAY_SYNC_PRODUCER_SYNCED);
  size_t len = 0;
  uint8_t *bytes = frame(ok, 16, &len);
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  o.flags = HURRAY_STREAM_CROSS_MACHINE;
  HurrayError e;
  assert_int_equal(read_one(bytes, len, true, &o, &e, NULL), HURRAY_OK);
  free(bytes);
  assert_int_equal(hurray_descriptor_destroy(ok), HURRAY_OK);
}

static void test_cross_machine_writer(void **state) {
  (void)state;
  HurrayDescriptor *gpu = su_dense_dev(4, HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT);
  HurrayDescriptor *ok = su_dense_dev(4, HURRAY_DEVICE_CUDA, HURRAY_SYNC_PRODUCER_SYNCED);
  uint8_t data[16] = {0};
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {16};
  HurrayStreamWriter *w = NULL;
  HurrayError e;
  /* Local writer relays the event-synced declaration unchanged. */
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write(w, gpu, bufs, sizes, 1, &e), HURRAY_OK);
  hurray_stream_writer_destroy(&w);

  assert_int_equal(hurray_stream_writer_to_memory(HURRAY_STREAM_CROSS_MACHINE, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write(w, gpu, bufs, sizes, 1, &e),
                   HURRAY_ERR_CROSS_MACHINE);
  assert_string_equal(e.field, "buffers[0].sync_mode");
  assert_int_equal(hurray_stream_writer_offset(w), 0);
  /* The refusal does not fail the writer. */
  assert_int_equal(hurray_stream_writer_write(w, ok, bufs, sizes, 1, &e), HURRAY_OK);
  uint64_t after_ok = hurray_stream_writer_offset(w);
  /* In a tree: refused as a whole, nothing written. */
  HurrayDescriptor *head = su_head(HURRAY_COMPOSITE_GROUP, 0, 2, 1, 1, 0, 0, 0, 0);
  HurrayStreamNode members[2];
  memset(members, 0, sizeof members);
  members[0].descriptor = ok;
  members[0].buffers = bufs;
  members[0].buffer_sizes = sizes;
  members[0].buffer_count = 1;
  members[1] = members[0];
  members[1].descriptor = gpu;
  HurrayStreamNode root;
  memset(&root, 0, sizeof root);
  root.descriptor = head;
  root.member_count = 2;
  root.members = members;
  assert_int_equal(hurray_stream_writer_write_node(w, &root, &e), HURRAY_ERR_CROSS_MACHINE);
  assert_string_equal(e.field, "members[1].buffers[0].sync_mode");
  assert_int_equal(hurray_stream_writer_offset(w), after_ok);
  hurray_stream_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(head), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(gpu), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(ok), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_descriptor_limit_boundary),
      cmocka_unit_test(test_descriptor_limit_before_allocation),
      cmocka_unit_test(test_buffer_limit_boundary),
      cmocka_unit_test(test_huge_buffer_claim),
      cmocka_unit_test(test_alignment_cannot_inflate_allocations),
      cmocka_unit_test(test_depth_limit),
      cmocka_unit_test(test_writer_depth_limit),
      cmocka_unit_test(test_cross_machine_reader),
      cmocka_unit_test(test_cross_machine_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
