/* Composites in streams: trees written head-then-members, read back as trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/file.h"
#include "test_stream_util.h"

/* A member tensor node with its own pattern buffer. */
typedef struct Leaf {
  HurrayDescriptor *d;
  uint8_t *data;
  const void *bufs[1];
  uint64_t sizes[1];
} Leaf;

static void leaf_init(Leaf *l, HurrayDescriptor *d, unsigned seed, HurrayStreamNode *node) {
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  l->d = d;
  l->sizes[0] = f.buffers[0].byte_size;
  l->data = su_pattern(l->sizes[0], seed);
  l->bufs[0] = l->data;
  memset(node, 0, sizeof *node);
  node->descriptor = d;
  node->buffers = l->bufs;
  node->buffer_sizes = l->sizes;
  node->buffer_count = 1;
}

static void leaf_free(Leaf *l) {
  free(l->data);
  assert_int_equal(hurray_descriptor_destroy(l->d), HURRAY_OK);
}

static void check_leaf(const HurrayStreamItem *it, const Leaf *l, unsigned seed) {
  assert_non_null(it);
  assert_int_equal(hurray_stream_item_kind(it), HURRAY_STREAM_ITEM_TENSOR);
  assert_true(hurray_descriptor_equal(hurray_stream_item_descriptor(it), l->d));
  const uint8_t *data = NULL;
  uint64_t size = 0;
  assert_int_equal(hurray_stream_item_buffer(it, 0, &data, &size), HURRAY_OK);
  assert_int_equal(size, l->sizes[0]);
  uint8_t *want = su_pattern(size, seed);
  assert_memory_equal(data, want, (size_t)size);
  free(want);
}

/*
 * Tree (partition of an [8, 8] float32):
 *   head P [8,8] partition, 2 members
 *     member 0: tensor [8,4] at (0,0)
 *     member 1: head Q [8,4] partition at (0,4) of [8,8], 2 members
 *        member 0: tensor [4,4] at (0,0) of [8,4]
 *        member 1: tensor [4,4] at (4,0) of [8,4]
 * then a plain tensor after the composite.
 */
typedef struct Tree {
  HurrayDescriptor *p, *q;
  Leaf a, b, c, tail;
  HurrayStreamNode top[2], inner[2], root, qnode, tail_node;
} Tree;

static void tree_init(Tree *t) {
  memset(t, 0, sizeof *t);
  t->p = su_head(HURRAY_COMPOSITE_PARTITION, 0, 2, 8, 8, 0, 0, 0, 0);
  t->q = su_head(HURRAY_COMPOSITE_PARTITION, 0, 2, 8, 4, 8, 8, 0, 4);
  leaf_init(&t->a, su_member(8, 4, 8, 8, 0, 0, -1), 1, &t->top[0]);
  leaf_init(&t->b, su_member(4, 4, 8, 4, 0, 0, -1), 2, &t->inner[0]);
  leaf_init(&t->c, su_member(4, 4, 8, 4, 4, 0, -1), 3, &t->inner[1]);
  leaf_init(&t->tail, su_dense(5), 4, &t->tail_node);
  t->top[1].descriptor = t->q;
  t->top[1].member_count = 2;
  t->top[1].members = t->inner;
  t->root.descriptor = t->p;
  t->root.member_count = 2;
  t->root.members = t->top;
}

static void tree_free(Tree *t) {
  assert_int_equal(hurray_descriptor_destroy(t->p), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(t->q), HURRAY_OK);
  leaf_free(&t->a);
  leaf_free(&t->b);
  leaf_free(&t->c);
  leaf_free(&t->tail);
}

static uint8_t *write_tree(Tree *t, size_t *len, size_t *composite_end) {
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  HurrayError e;
  if (hurray_stream_writer_write_node(w, &t->root, &e) != HURRAY_OK) fail_msg("%s", e.message);
  *composite_end = (size_t)hurray_stream_writer_offset(w);
  assert_int_equal(hurray_stream_writer_write_node(w, &t->tail_node, &e), HURRAY_OK);
  const uint8_t *data = NULL;
  assert_int_equal(hurray_stream_writer_memory(w, &data, len), HURRAY_OK);
  uint8_t *copy = malloc(*len);
  memcpy(copy, data, *len);
  hurray_stream_writer_destroy(&w);
  return copy;
}

static size_t enc_len(const HurrayDescriptor *d) {
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &n), HURRAY_OK);
  return (size_t)n;
}

static void test_nested_round_trip(void **state) {
  (void)state;
  Tree t;
  tree_init(&t);
  size_t len = 0, cend = 0;
  uint8_t *bytes = write_tree(&t, &len, &cend);

  /* Pre-order on the wire: P, A(+data), Q, B(+data), C(+data), tail. */
  size_t pos = 0;
  uint8_t *enc = malloc(4096);
  uint64_t n = 0;
  const HurrayDescriptor *order[5] = {t.p, t.a.d, t.q, t.b.d, t.c.d};
  const uint64_t data_len[5] = {0, t.a.sizes[0], 0, t.b.sizes[0], t.c.sizes[0]};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(hurray_descriptor_encode(order[i], enc, 4096, &n), HURRAY_OK);
    assert_memory_equal(bytes + pos, enc, (size_t)n);
    pos += (size_t)n + (size_t)data_len[i];
  }
  assert_int_equal(pos, cend);
  free(enc);

  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayError e;
  if (hurray_stream_reader_next_item(r, &it, &e) != HURRAY_OK) fail_msg("%s", e.message);
  /* The whole composite is one item, returned once its last byte arrived. */
  assert_int_equal(hurray_stream_reader_offset(r), cend);
  assert_int_equal(hurray_stream_item_kind(it), HURRAY_STREAM_ITEM_COMPOSITE);
  assert_true(hurray_descriptor_equal(hurray_stream_item_descriptor(it), t.p));
  assert_int_equal(hurray_stream_item_offset(it), 0);
  assert_int_equal(hurray_stream_item_buffer_count(it), 0);
  assert_int_equal(hurray_stream_item_member_count(it), 2);
  assert_null(hurray_stream_item_member(it, 2));
  check_leaf(hurray_stream_item_member(it, 0), &t.a, 1);
  assert_int_equal(hurray_stream_item_offset(hurray_stream_item_member(it, 0)), enc_len(t.p));
  const HurrayStreamItem *q = hurray_stream_item_member(it, 1);
  assert_int_equal(hurray_stream_item_kind(q), HURRAY_STREAM_ITEM_COMPOSITE);
  assert_true(hurray_descriptor_equal(hurray_stream_item_descriptor(q), t.q));
  assert_int_equal(hurray_stream_item_member_count(q), 2);
  check_leaf(hurray_stream_item_member(q, 0), &t.b, 2);
  check_leaf(hurray_stream_item_member(q, 1), &t.c, 3);
  /* A tensor is not surfaced as a member of anything: the next item is the tail. */
  HurrayStreamItem *tail = NULL;
  assert_int_equal(hurray_stream_reader_next_item(r, &tail, NULL), HURRAY_OK);
  check_leaf(tail, &t.tail, 4);
  hurray_stream_item_destroy(&tail);

  /* Relaying the composite item reproduces its bytes exactly. */
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write_item(w, it, NULL), HURRAY_OK);
  const uint8_t *out = NULL;
  size_t out_len = 0;
  assert_int_equal(hurray_stream_writer_memory(w, &out, &out_len), HURRAY_OK);
  assert_int_equal(out_len, cend);
  assert_memory_equal(out, bytes, cend);
  hurray_stream_writer_destroy(&w);

  hurray_stream_item_destroy(&it);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  assert_null(it);
  hurray_stream_reader_destroy(&r);
  free(bytes);
  tree_free(&t);
}

static void test_torn_everywhere_inside(void **state) {
  (void)state;
  Tree t;
  tree_init(&t);
  size_t len = 0, cend = 0;
  uint8_t *bytes = write_tree(&t, &len, &cend);
  /* Every cut strictly inside the composite is an error, whether or not it
   * falls on a frame boundary. */
  for (size_t cut = 1; cut < cend; cut++) {
    HurrayStreamReader *r = NULL;
    assert_int_equal(hurray_stream_reader_from_memory(bytes, cut, NULL, &r), HURRAY_OK);
    HurrayStreamItem *it = NULL;
    HurrayError e;
    HurrayStatus st = hurray_stream_reader_next_item(r, &it, &e);
    if (st != HURRAY_ERR_STREAM) fail_msg("cut %zu: %s", cut, hurray_status_name(st));
    assert_null(it);
    hurray_stream_reader_destroy(&r);
  }
  free(bytes);
  tree_free(&t);
}

static void test_writer_validates_tree_before_writing(void **state) {
  (void)state;
  Tree t;
  tree_init(&t);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  HurrayError e;

  /* A wrong buffer size deep in the tree: nothing at all is written. */
  uint64_t saved = t.c.sizes[0];
  t.c.sizes[0] = saved - 1;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_BUFFER_SIZE);
  assert_string_equal(e.field, "members[1].members[1].buffers[0]");
  assert_int_equal(hurray_stream_writer_offset(w), 0);
  t.c.sizes[0] = saved;

  /* Node member_count disagreeing with the head (both directions). */
  t.inner[0].member_count = 0;
  t.top[1].member_count = 1;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_string_equal(e.field, "members[1].members");
  t.top[1].member_count = 3;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  t.top[1].member_count = 2;
  assert_int_equal(hurray_stream_writer_offset(w), 0);

  /* A tensor node with members. */
  t.top[0].member_count = 1;
  t.top[0].members = t.inner;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_string_equal(e.field, "members[0].members");
  t.top[0].member_count = 0;
  t.top[0].members = NULL;

  /* Members missing, NULL descriptor. */
  t.root.members = NULL;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_NULL_POINTER);
  t.root.members = t.top;
  t.inner[0].descriptor = NULL;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "members[1].members[0].descriptor");
  t.inner[0].descriptor = t.b.d;

  /* A head given buffers. */
  t.root.buffer_count = 1;
  t.root.buffers = t.a.bufs;
  t.root.buffer_sizes = t.a.sizes;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e),
                   HURRAY_ERR_INVALID_BUFFER_TABLE);
  t.root.buffer_count = 0;
  t.root.buffers = NULL;
  t.root.buffer_sizes = NULL;
  assert_int_equal(hurray_stream_writer_offset(w), 0);

  /* And the valid tree goes through. */
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_OK);
  assert_true(hurray_stream_writer_offset(w) > 0);
  hurray_stream_writer_destroy(&w);
  tree_free(&t);
}

/* A group with no members is one item with no members. */
static void test_empty_group(void **state) {
  (void)state;
  HurrayDescriptor *g = su_head(HURRAY_COMPOSITE_GROUP, 0, 0, 2, 2, 0, 0, 0, 0);
  HurrayStreamNode node;
  memset(&node, 0, sizeof node);
  node.descriptor = g;
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write_node(w, &node, NULL), HURRAY_OK);
  su_write_dense(w, 2, 9);
  const uint8_t *data = NULL;
  size_t len = 0;
  assert_int_equal(hurray_stream_writer_memory(w, &data, &len), HURRAY_OK);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(data, len, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  assert_int_equal(hurray_stream_item_kind(it), HURRAY_STREAM_ITEM_COMPOSITE);
  assert_int_equal(hurray_stream_item_member_count(it), 0);
  hurray_stream_item_destroy(&it);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  su_check_dense(it, 2, 9);
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);
  hurray_stream_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(g), HURRAY_OK);
}

/* A head claiming far more members than arrive never allocates for the claim. */
static void test_member_count_claim_is_not_trusted(void **state) {
  (void)state;
  HurrayDescriptor *g = su_head(HURRAY_COMPOSITE_GROUP, 0, 4000000000u, 2, 2, 0, 0, 0, 0);
  uint8_t enc[256];
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(g, enc, sizeof enc, &n), HURRAY_OK);
  tu_alloc_install();
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(enc, (size_t)n, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_ERR_STREAM);
  assert_non_null(strstr(e.message, "torn composite"));
  assert_true(tu_alloc_count() < 10);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
  assert_int_equal(hurray_descriptor_destroy(g), HURRAY_OK);
}

/* Allocation failures while assembling a tree leak nothing. */
static void test_alloc_failures_in_tree(void **state) {
  (void)state;
  Tree t;
  tree_init(&t);
  size_t len = 0, cend = 0;
  uint8_t *bytes = write_tree(&t, &len, &cend);
  tu_alloc_install();
  for (long k = 0; k < 500; k++) {
    tu_fail_alloc_after(k);
    HurrayStreamReader *r = NULL;
    HurrayStatus st = hurray_stream_reader_from_memory(bytes, len, NULL, &r);
    bool done = false;
    if (st == HURRAY_OK) {
      HurrayStreamItem *it = NULL;
      st = hurray_stream_reader_next_item(r, &it, NULL);
      if (st == HURRAY_OK) {
        assert_int_equal(hurray_stream_item_member_count(it), 2);
        done = true;
      } else {
        assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
      }
      hurray_stream_item_destroy(&it);
      hurray_stream_reader_destroy(&r);
    }
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), 0);
    if (done) break;
  }
  /* Relaying a tree under allocation failures. */
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  long base = tu_alloc_live();
  for (long k = 0; k < 500; k++) {
    HurrayStreamWriter *w = NULL;
    assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
    tu_fail_alloc_after(k);
    HurrayStatus st = hurray_stream_writer_write_item(w, it, NULL);
    tu_alloc_reset();
    hurray_stream_writer_destroy(&w);
    assert_int_equal(tu_alloc_live(), base);
    if (st == HURRAY_OK) break;
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
  }
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
  free(bytes);
  tree_free(&t);
}


/* The tree a file writer takes (HurrayFileCompositeNode) is written as the
 * same tree of stream nodes: the same bytes, sizes taken from the handles
 * when not given, names ignored; its errors are write_node's; allocation
 * failures leak nothing. */
static void test_file_tree_writes_the_same_bytes(void **state) {
  (void)state;
  Tree t;
  tree_init(&t);
  size_t len = 0, cend = 0;
  uint8_t *want = write_tree(&t, &len, &cend);
  HurrayFileCompositeNode inner[2], top[2], root;
  memset(inner, 0, sizeof inner);
  memset(top, 0, sizeof top);
  memset(&root, 0, sizeof root);
  inner[0].descriptor = t.b.d;
  inner[0].buffers = t.b.bufs;
  inner[1].descriptor = t.c.d;
  inner[1].buffers = t.c.bufs;
  inner[1].sizes = t.c.sizes; /* given or not: the same */
  top[0].descriptor = t.a.d;
  top[0].buffers = t.a.bufs;
  top[1].descriptor = t.q;
  top[1].members = inner;
  top[1].member_count = 2;
  root.name = "ignored";
  root.name_len = 7;
  root.descriptor = t.p;
  root.members = top;
  root.member_count = 2;
  HurrayStreamWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write_tree(w, &root, &e), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_offset(w), cend);
  const uint8_t *got = NULL;
  size_t got_len = 0;
  assert_int_equal(hurray_stream_writer_memory(w, &got, &got_len), HURRAY_OK);
  assert_int_equal(got_len, cend);
  assert_memory_equal(got, want, cend);
  /* a tensor on its own */
  HurrayFileCompositeNode tail;
  memset(&tail, 0, sizeof tail);
  tail.descriptor = t.tail.d;
  tail.buffers = t.tail.bufs;
  assert_int_equal(hurray_stream_writer_write_tree(w, &tail, &e), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_memory(w, &got, &got_len), HURRAY_OK);
  assert_int_equal(got_len, len);
  assert_memory_equal(got, want, len);
  /* write_node's checks and field paths */
  inner[1].sizes = NULL;
  inner[1].buffers = NULL;
  assert_int_equal(hurray_stream_writer_write_tree(w, &root, &e), HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "members[1].members[1].buffers");
  inner[1].buffers = t.c.bufs;
  top[1].member_count = 1;
  assert_int_equal(hurray_stream_writer_write_tree(w, &root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  top[1].member_count = 2;
  top[1].members = NULL;
  assert_int_equal(hurray_stream_writer_write_tree(w, &root, &e), HURRAY_ERR_NULL_POINTER);
  top[1].members = inner;
  assert_int_equal(hurray_stream_writer_write_tree(w, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_writer_write_tree(NULL, &root, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_writer_offset(w), len); /* nothing written by a refusal */
  hurray_stream_writer_destroy(&w);
  tu_alloc_install();
  for (long k = 0; k < 500; k++) {
    assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
    tu_fail_alloc_after(k);
    HurrayStatus st = hurray_stream_writer_write_tree(w, &root, NULL);
    tu_alloc_reset();
    hurray_stream_writer_destroy(&w);
    assert_int_equal(tu_alloc_live(), 0);
    if (st == HURRAY_OK) break;
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
  }
  hurray_set_allocator(NULL);
  free(want);
  tree_free(&t);
}

/* ---- composite rules (the composite validator, driven level by level) ---------- */

/* Appends descriptor d and `data_len` zero bytes to buf at *len. */
static void append_frame(uint8_t *buf, size_t cap, size_t *len, const HurrayDescriptor *d,
                         size_t data_len) {
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, buf + *len, cap - *len, &n), HURRAY_OK);
  *len += (size_t)n;
  assert_true(*len + data_len <= cap);
  memset(buf + *len, 0, data_len);
  *len += data_len;
}

static HurrayStatus read_first(const uint8_t *bytes, size_t len, HurrayError *e) {
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayStatus st = hurray_stream_reader_next_item(r, &it, e);
  if (st == HURRAY_OK) assert_non_null(it);
  else assert_null(it);
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);
  return st;
}

static void test_reader_applies_composite_rules(void **state) {
  (void)state;
  uint8_t buf[2048];
  HurrayError e;
  HurrayDescriptor *head = su_head(HURRAY_COMPOSITE_PARTITION, 0, 2, 4, 4, 0, 0, 0, 0);
  HurrayDescriptor *left = su_member(4, 2, 4, 4, 0, 0, -1);
  HurrayDescriptor *right = su_member(4, 2, 4, 4, 0, 2, -1);
  HurrayDescriptor *narrow = su_member(4, 1, 4, 4, 0, 2, -1);
  HurrayDescriptor *stranger = su_member(4, 2, 8, 8, 0, 2, -1); /* wrong parent shape */
  HurrayDescriptor *overlap = su_member(4, 2, 4, 4, 0, 1, -1);

  /* The accept side: an exact cover. */
  size_t len = 0;
  append_frame(buf, sizeof buf, &len, head, 0);
  append_frame(buf, sizeof buf, &len, left, 32);
  append_frame(buf, sizeof buf, &len, right, 32);
  assert_int_equal(read_first(buf, len, &e), HURRAY_OK);

  /* A gap: refused when the last member closes the composite. */
  len = 0;
  append_frame(buf, sizeof buf, &len, head, 0);
  append_frame(buf, sizeof buf, &len, left, 32);
  size_t last = len;
  append_frame(buf, sizeof buf, &len, narrow, 16);
  assert_int_equal(read_first(buf, len, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(e.offset, last);
  assert_non_null(strstr(e.message, "composite at stream byte 0"));
  /* The validator's reason, without the stream position the message leads with. */
  assert_true(e.reason[0] != '\0');
  assert_null(strstr(e.reason, "stream byte"));
  assert_string_equal(e.message + strlen(e.message) - strlen(e.reason), e.reason);

  /* An overlap. */
  len = 0;
  append_frame(buf, sizeof buf, &len, head, 0);
  append_frame(buf, sizeof buf, &len, left, 32);
  append_frame(buf, sizeof buf, &len, overlap, 32);
  assert_int_equal(read_first(buf, len, &e), HURRAY_ERR_INVALID_COMPOSITE);

  /* A member whose shard names another parent: refused at that member, before
   * anything after it is read (the stream ends there, unnoticed). */
  len = 0;
  append_frame(buf, sizeof buf, &len, head, 0);
  last = len;
  append_frame(buf, sizeof buf, &len, stranger, 32);
  assert_int_equal(read_first(buf, len, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(e.offset, last);
  assert_non_null(strstr(e.field, "members[0]"));

  /* Overlay: member 0 must be the base, later ones corrections. */
  HurrayDescriptor *ov = su_head(HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 2, 4, 4, 0, 0, 0, 0);
  HurrayDescriptor *base = su_member(4, 4, 4, 4, 0, 0, HURRAY_MEMBER_ROLE_BASE);
  HurrayDescriptor *fix = su_member(2, 2, 4, 4, 1, 1, HURRAY_MEMBER_ROLE_CORRECTION);
  len = 0;
  append_frame(buf, sizeof buf, &len, ov, 0);
  append_frame(buf, sizeof buf, &len, base, 64);
  append_frame(buf, sizeof buf, &len, fix, 16);
  assert_int_equal(read_first(buf, len, &e), HURRAY_OK);
  len = 0;
  append_frame(buf, sizeof buf, &len, ov, 0);
  append_frame(buf, sizeof buf, &len, base, 64);
  append_frame(buf, sizeof buf, &len, base, 64); /* a second base */
  assert_int_equal(read_first(buf, len, &e), HURRAY_ERR_INVALID_COMPOSITE);
  len = 0;
  append_frame(buf, sizeof buf, &len, ov, 0);
  append_frame(buf, sizeof buf, &len, fix, 16);
  append_frame(buf, sizeof buf, &len, base, 64);
  assert_int_equal(read_first(buf, len, &e), HURRAY_ERR_INVALID_COMPOSITE);

  /* An overlay head with no members cannot supply its base (member_count at
   * byte 20 + 16 + 8 + 4 of a rank-2 head). */
  len = 0;
  append_frame(buf, sizeof buf, &len, ov, 0);
  memset(buf + 48, 0, 4);
  assert_int_equal(read_first(buf, len, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(e.offset, 48);

  HurrayDescriptor *all[] = {head, left, right, narrow, stranger, overlap, ov, base, fix};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    assert_int_equal(hurray_descriptor_destroy(all[i]), HURRAY_OK);
}

static void test_writer_applies_composite_rules(void **state) {
  (void)state;
  Tree t;
  tree_init(&t);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  HurrayError e;
  /* The inner partition's second member moved: the inner composite no longer
   * covers its head. Nothing at all is written. */
  HurrayDescriptor *moved = su_member(4, 4, 8, 4, 3, 0, -1);
  t.inner[1].descriptor = moved;
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_true(strncmp(e.field, "members[1].", 11) == 0);
  assert_int_equal(hurray_stream_writer_offset(w), 0);
  /* A member typed differently from a partition head. */
  t.inner[1].descriptor = t.c.d;
  HurrayDescriptor *typed = su_dense(32); /* rank 1, no shard */
  HurrayStreamNode saved = t.top[0];
  Leaf l;
  leaf_init(&l, typed, 7, &t.top[0]);
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_true(strncmp(e.field, "members[0]", 10) == 0);
  assert_int_equal(hurray_stream_writer_offset(w), 0);
  t.top[0] = saved;
  leaf_free(&l);
  /* Repaired: accepted. */
  assert_int_equal(hurray_stream_writer_write_node(w, &t.root, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(moved), HURRAY_OK);
  hurray_stream_writer_destroy(&w);
  tree_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nested_round_trip),
      cmocka_unit_test(test_torn_everywhere_inside),
      cmocka_unit_test(test_writer_validates_tree_before_writing),
      cmocka_unit_test(test_empty_group),
      cmocka_unit_test(test_member_count_claim_is_not_trusted),
      cmocka_unit_test(test_alloc_failures_in_tree),
      cmocka_unit_test(test_file_tree_writes_the_same_bytes),
      cmocka_unit_test(test_reader_applies_composite_rules),
      cmocka_unit_test(test_writer_applies_composite_rules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
