/*
 * Truncation at every byte of a small stream: each prefix is either a clean
 * end on a top-level frame boundary (the items before it, then NULL) or an
 * error (HURRAY_ERR_STREAM) mid-frame or inside a composite; never a crash.
 * Checked through the memory source and through a callback handing out one
 * byte at a time (the fd/callback code path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_stream_util.h"

typedef struct ByteFeed {
  const uint8_t *data;
  size_t len, pos;
} ByteFeed;

static int64_t one_byte(void *ctx, uint8_t *buf, size_t len) {
  ByteFeed *f = ctx;
  if (len == 0) return -22;
  if (f->pos >= f->len) return 0;
  buf[0] = f->data[f->pos++];
  return 1;
}

/* Stream: tensor(3) | group composite {tensor(2), tensor(0)} | tensor(1).
 * ends[] receives the stream offset after each top-level item. */
static uint8_t *build(size_t *len, size_t ends[3]) {
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  su_write_dense(w, 3, 0);
  ends[0] = (size_t)hurray_stream_writer_offset(w);

  HurrayDescriptor *m0 = su_dense(2), *m1 = su_dense(0);
  uint8_t *p0 = su_pattern(8, 1);
  const void *b0[1] = {p0};
  uint64_t s0[1] = {8};
  const void *b1[1] = {NULL};
  uint64_t s1[1] = {0};
  HurrayStreamNode members[2];
  memset(members, 0, sizeof members);
  members[0].descriptor = m0;
  members[0].buffers = b0;
  members[0].buffer_sizes = s0;
  members[0].buffer_count = 1;
  members[1].descriptor = m1;
  members[1].buffers = b1;
  members[1].buffer_sizes = s1;
  members[1].buffer_count = 1;
  HurrayDescriptor *head = su_head(HURRAY_COMPOSITE_GROUP, 0, 2, 1, 1, 0, 0, 0, 0);
  HurrayStreamNode root;
  memset(&root, 0, sizeof root);
  root.descriptor = head;
  root.member_count = 2;
  root.members = members;
  HurrayError e;
  if (hurray_stream_writer_write_node(w, &root, &e) != HURRAY_OK) fail_msg("%s", e.message);
  ends[1] = (size_t)hurray_stream_writer_offset(w);
  su_write_dense(w, 1, 3);
  ends[2] = (size_t)hurray_stream_writer_offset(w);

  const uint8_t *data = NULL;
  assert_int_equal(hurray_stream_writer_memory(w, &data, len), HURRAY_OK);
  uint8_t *copy = malloc(*len);
  assert_non_null(copy);
  memcpy(copy, data, *len);
  hurray_stream_writer_destroy(&w);
  free(p0);
  assert_int_equal(hurray_descriptor_destroy(m0), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(m1), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(head), HURRAY_OK);
  return copy;
}

static void check_item(const HurrayStreamItem *it, size_t index) {
  if (index == 0) {
    su_check_dense(it, 3, 0);
  } else if (index == 1) {
    assert_int_equal(hurray_stream_item_kind(it), HURRAY_STREAM_ITEM_COMPOSITE);
    assert_int_equal(hurray_stream_item_member_count(it), 2);
    su_check_dense(hurray_stream_item_member(it, 0), 2, 1);
    su_check_dense(hurray_stream_item_member(it, 1), 0, 2);
  } else {
    su_check_dense(it, 1, 3);
  }
}

/* Reads a prefix of `cut` bytes; returns the number of items and the final status. */
static HurrayStatus read_prefix(const uint8_t *bytes, size_t cut, bool via_callback,
                                size_t *items, HurrayError *e) {
  HurrayStreamReader *r = NULL;
  ByteFeed feed = {bytes, cut, 0};
  if (via_callback)
    assert_int_equal(hurray_stream_reader_from_callback(one_byte, &feed, NULL, &r), HURRAY_OK);
  else
    assert_int_equal(hurray_stream_reader_from_memory(bytes, cut, NULL, &r), HURRAY_OK);
  *items = 0;
  HurrayStatus st;
  HurrayStreamItem *it = NULL;
  while ((st = hurray_stream_reader_next_item(r, &it, e)) == HURRAY_OK && it != NULL) {
    check_item(it, *items);
    (*items)++;
    hurray_stream_item_destroy(&it);
  }
  if (st != HURRAY_OK) {
    assert_null(it);
    /* A failed reader stays failed with the same status. */
    HurrayError again;
    assert_int_equal(hurray_stream_reader_next_item(r, &it, &again), st);
    assert_string_equal(again.message, e->message);
  }
  hurray_stream_reader_destroy(&r);
  return st;
}

static void run(bool via_callback) {
  size_t len = 0, ends[3];
  uint8_t *bytes = build(&len, ends);
  assert_int_equal(ends[2], len);
  for (size_t cut = 0; cut <= len; cut++) {
    size_t items = 0;
    HurrayError e;
    hurray_error_clear(&e);
    HurrayStatus st = read_prefix(bytes, cut, via_callback, &items, &e);
    size_t complete = 0;
    while (complete < 3 && ends[complete] <= cut) complete++;
    bool boundary = cut == 0 || cut == ends[0] || cut == ends[1] || cut == ends[2];
    if (boundary) {
      if (st != HURRAY_OK) fail_msg("cut %zu: expected a clean end, got %s", cut, e.message);
      assert_int_equal(items, complete);
    } else {
      if (st != HURRAY_ERR_STREAM)
        fail_msg("cut %zu: expected HURRAY_ERR_STREAM, got %s (%s)", cut,
                 hurray_status_name(st), e.message);
      assert_int_equal(items, complete);
      assert_true(e.offset <= cut);
      assert_true(e.offset >= (complete == 0 ? 0 : ends[complete - 1]));
      /* Inside the composite at a member boundary: a torn composite. */
      assert_true(strlen(e.message) > 0);
    }
  }
  free(bytes);
}

static void test_every_prefix_memory(void **state) {
  (void)state;
  run(false);
}

static void test_every_prefix_callback(void **state) {
  (void)state;
  run(true);
}

static void test_torn_composite_message(void **state) {
  (void)state;
  size_t len = 0, ends[3];
  uint8_t *bytes = build(&len, ends);
  /* Cut right after the first member: head and member 0 complete. */
  HurrayDescriptor *h = su_head(HURRAY_COMPOSITE_GROUP, 0, 2, 1, 1, 0, 0, 0, 0);
  HurrayDescriptor *m0 = su_dense(2);
  uint64_t hl = 0, ml = 0;
  assert_int_equal(hurray_descriptor_encoded_len(h, &hl), HURRAY_OK);
  assert_int_equal(hurray_descriptor_encoded_len(m0, &ml), HURRAY_OK);
  size_t cut = ends[0] + (size_t)hl + (size_t)ml + 8;
  size_t items = 0;
  HurrayError e;
  assert_int_equal(read_prefix(bytes, cut, false, &items, &e), HURRAY_ERR_STREAM);
  assert_int_equal(items, 1);
  assert_non_null(strstr(e.message, "torn composite"));
  assert_non_null(strstr(e.message, "declares 2 members"));
  assert_non_null(strstr(e.message, "after 1"));
  assert_int_equal(hurray_descriptor_destroy(h), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(m0), HURRAY_OK);
  free(bytes);
}

static void test_garbage_is_an_error_not_a_crash(void **state) {
  (void)state;
  /* Bad magic with a full prefix: the decoder's status. */
  static const uint8_t bad[12] = {'B', 'A', 'A', 'D', 1, 0, 20, 0, 0, 0, 0, 0};
  size_t items = 0;
  HurrayError e;
  assert_int_equal(read_prefix(bad, sizeof bad, false, &items, &e), HURRAY_ERR_INVALID_MAGIC);
  assert_int_equal(read_prefix(bad, sizeof bad, true, &items, &e), HURRAY_ERR_INVALID_MAGIC);
  /* Short garbage: a truncated prefix. */
  assert_int_equal(read_prefix(bad, 4, false, &items, &e), HURRAY_ERR_STREAM);
  /* descriptor_length below the header size. */
  static const uint8_t tiny[20] = {'H', 'R', 'R', 'Y', 1, 0, 12, 0, 0, 0};
  assert_int_equal(read_prefix(tiny, sizeof tiny, false, &items, &e), HURRAY_ERR_INVALID_LAYOUT);
  /* Unsupported major version. */
  static const uint8_t v9[20] = {'H', 'R', 'R', 'Y', 9, 0, 20, 0, 0, 0};
  assert_int_equal(read_prefix(v9, sizeof v9, false, &items, &e), HURRAY_ERR_VERSION_MISMATCH);
}

/* Errors inside the second frame carry stream offsets. */
static void test_decode_error_offsets_are_stream_offsets(void **state) {
  (void)state;
  size_t len = 0, ends[3];
  uint8_t *bytes = build(&len, ends);
  uint8_t *copy = malloc(len);
  memcpy(copy, bytes, len);
  copy[ends[1] + 16] = 65; /* rank of the third frame: over the cap of 64 */
  size_t items = 0;
  HurrayError e;
  HurrayStatus st = read_prefix(copy, len, false, &items, &e);
  assert_true(st != HURRAY_OK && st != HURRAY_ERR_STREAM);
  assert_int_equal(items, 2);
  assert_true(e.offset >= ends[1] && e.offset < len);
  char want[64];
  snprintf(want, sizeof want, "descriptor at stream byte %zu", ends[1]);
  assert_non_null(strstr(e.message, want));
  /* The reason is the decoder's alone: no stream position, no field; the
   * message ends with it. */
  assert_string_equal(e.field, "rank");
  assert_true(e.reason[0] != '\0');
  assert_null(strstr(e.reason, "stream byte"));
  assert_null(strstr(e.reason, "at byte"));
  size_t rl = strlen(e.reason), ml = strlen(e.message);
  assert_true(ml > rl);
  assert_string_equal(e.message + ml - rl, e.reason);
  free(copy);
  free(bytes);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_prefix_memory),
      cmocka_unit_test(test_every_prefix_callback),
      cmocka_unit_test(test_torn_composite_message),
      cmocka_unit_test(test_garbage_is_an_error_not_a_crash),
      cmocka_unit_test(test_decode_error_offsets_are_stream_offsets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
