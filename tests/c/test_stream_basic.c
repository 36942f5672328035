/* Stream round trips over memory, fds and callbacks; the item API; writer rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_stream_util.h"

/* Builds a memory stream of tensors with the given element counts (seed = index). */
static uint8_t *build_stream(const uint64_t *counts, size_t n, size_t *len) {
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  for (size_t i = 0; i < n; i++) su_write_dense(w, counts[i], (unsigned)i);
  const uint8_t *data = NULL;
  assert_int_equal(hurray_stream_writer_memory(w, &data, len), HURRAY_OK);
  uint8_t *copy = malloc(*len == 0 ? 1 : *len);
  assert_non_null(copy);
  if (*len > 0) memcpy(copy, data, *len);
  hurray_stream_writer_destroy(&w);
  assert_null(w);
  return copy;
}

static void read_all_and_check(HurrayStreamReader *r, const uint64_t *counts, size_t n) {
  for (size_t i = 0; i < n; i++) {
    HurrayStreamItem *it = NULL;
    HurrayError e;
    HurrayStatus st = hurray_stream_reader_next_item(r, &it, &e);
    if (st != HURRAY_OK) fail_msg("item %zu: %s", i, e.message);
    su_check_dense(it, counts[i], (unsigned)i);
    hurray_stream_item_destroy(&it);
    assert_null(it);
  }
  HurrayStreamItem *end = (HurrayStreamItem *)(uintptr_t)1;
  assert_int_equal(hurray_stream_reader_next_item(r, &end, NULL), HURRAY_OK);
  assert_null(end);
  /* The end is sticky and still clean. */
  end = (HurrayStreamItem *)(uintptr_t)1;
  assert_int_equal(hurray_stream_reader_next_item(r, &end, NULL), HURRAY_OK);
  assert_null(end);
}

static const uint64_t k_counts[] = {3, 0, 1, 1000, 17, 20000};
#define K_N (sizeof k_counts / sizeof k_counts[0])

static void test_memory_round_trip(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *bytes = build_stream(k_counts, K_N, &len);
  /* Layout on the wire: descriptor then exactly the buffer bytes, no framing. */
  HurrayDescriptor *d0 = su_dense(3);
  uint64_t dlen = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d0, &dlen), HURRAY_OK);
  uint8_t *enc = malloc((size_t)dlen);
  assert_int_equal(hurray_descriptor_encode(d0, enc, dlen, &dlen), HURRAY_OK);
  assert_memory_equal(bytes, enc, (size_t)dlen);
  uint8_t *pat = su_pattern(12, 0);
  assert_memory_equal(bytes + dlen, pat, 12);
  assert_memory_equal(bytes + dlen + 12, "HRRY", 4); /* next frame follows at once */
  free(pat);
  free(enc);
  assert_int_equal(hurray_descriptor_destroy(d0), HURRAY_OK);

  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  read_all_and_check(r, k_counts, K_N);
  assert_int_equal(hurray_stream_reader_offset(r), len);
  hurray_stream_reader_destroy(&r);
  assert_null(r);
  free(bytes);
}

static void test_empty_stream_is_clean_end(void **state) {
  (void)state;
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(NULL, 0, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  assert_null(it);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(hurray_stream_reader_from_memory(NULL, 5, NULL, &r), HURRAY_ERR_NULL_POINTER);
  assert_null(r);
}

static void test_zero_copy_views(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *bytes = build_stream(k_counts, K_N, &len);
  /* Place the stream so that the first buffer lands on a 64-byte boundary. */
  HurrayDescriptor *d0 = su_dense(3);
  uint64_t dlen = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d0, &dlen), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d0), HURRAY_OK);
  uint8_t *raw = hurray_alloc(len + 128, 64);
  assert_non_null(raw);
  size_t shift = (size_t)((64 - dlen % 64) % 64);
  memcpy(raw + shift, bytes, len);

  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  o.flags = HURRAY_STREAM_ZERO_COPY;
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(raw + shift, len, &o, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  su_check_dense(it, 3, 0);
  const uint8_t *data = NULL;
  assert_int_equal(hurray_stream_item_buffer(it, 0, &data, NULL), HURRAY_OK);
  assert_true(hurray_stream_item_buffer_is_view(it, 0));
  assert_ptr_equal(data, raw + shift + dlen);
  /* A view cannot be moved out. */
  uint8_t *taken = NULL;
  assert_int_equal(hurray_stream_item_take_buffer(it, 0, &taken, NULL), HURRAY_ERR_INVALID_STATE);
  hurray_stream_item_destroy(&it);
  /* Later buffers are views when aligned, copies (aligned) otherwise; all correct. */
  int views = 0, copies = 0;
  for (size_t i = 1; i < K_N; i++) {
    assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
    su_check_dense(it, k_counts[i], (unsigned)i);
    if (k_counts[i] > 0) {
      assert_int_equal(hurray_stream_item_buffer(it, 0, &data, NULL), HURRAY_OK);
      if (hurray_stream_item_buffer_is_view(it, 0)) {
        views++;
        assert_int_equal((uintptr_t)data % 64, 0);
        assert_true(data > raw && data < raw + shift + len);
      } else {
        copies++;
        assert_int_equal((uintptr_t)data % 64, 0);
      }
    }
    hurray_stream_item_destroy(&it);
  }
  assert_true(copies > 0); /* 3-float and 17-float buffers misalign what follows */
  (void)views;
  hurray_stream_reader_destroy(&r);
  /* Without the flag nothing is a view. */
  assert_int_equal(hurray_stream_reader_from_memory(raw + shift, len, NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  assert_false(hurray_stream_item_buffer_is_view(it, 0));
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);
  hurray_free(raw);
  free(bytes);
}

static void test_take_buffer(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *bytes = build_stream(k_counts, 2, &len);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  uint8_t *taken = NULL;
  uint64_t size = 0;
  assert_int_equal(hurray_stream_item_take_buffer(it, 1, &taken, &size),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_stream_item_take_buffer(it, 0, &taken, &size), HURRAY_OK);
  assert_non_null(taken);
  uint8_t *kept = taken;
  assert_int_equal(size, 12);
  uint8_t *pat = su_pattern(12, 0);
  assert_memory_equal(taken, pat, 12);
  free(pat);
  assert_int_equal(hurray_stream_item_buffer(it, 0, NULL, NULL), HURRAY_ERR_INVALID_STATE);
  assert_int_equal(hurray_stream_item_take_buffer(it, 0, &taken, &size), HURRAY_ERR_INVALID_STATE);
  assert_null(taken);
  /* A taken buffer cannot be relayed. */
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write_item(w, it, NULL), HURRAY_ERR_INVALID_STATE);
  hurray_stream_writer_destroy(&w);
  hurray_stream_item_destroy(&it); /* must not free the taken buffer */
  assert_int_equal(hurray_stream_item_buffer(NULL, 0, NULL, NULL), HURRAY_ERR_NULL_POINTER);
  /* Empty buffers hand out NULL data. */
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  const uint8_t *data = (const uint8_t *)1;
  assert_int_equal(hurray_stream_item_buffer(it, 0, &data, &size), HURRAY_OK);
  assert_null(data);
  assert_int_equal(size, 0);
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);
  /* Taken memory belongs to the caller. */
  assert_int_equal((uintptr_t)kept % 64, 0);
  hurray_free(kept);
  free(bytes);
}

static void test_relay_is_byte_identical(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *bytes = build_stream(k_counts, K_N, &len);
  HurrayStreamReader *r = NULL;
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  while (hurray_stream_reader_next_item(r, &it, NULL) == HURRAY_OK && it != NULL) {
    assert_int_equal(hurray_stream_writer_write_item(w, it, NULL), HURRAY_OK);
    hurray_stream_item_destroy(&it);
  }
  const uint8_t *out = NULL;
  size_t out_len = 0;
  assert_int_equal(hurray_stream_writer_memory(w, &out, &out_len), HURRAY_OK);
  assert_int_equal(out_len, len);
  assert_memory_equal(out, bytes, len);
  assert_int_equal(hurray_stream_writer_offset(w), len);
  hurray_stream_writer_destroy(&w);
  hurray_stream_reader_destroy(&r);
  free(bytes);
}

static void test_fd_round_trip_file(void **state) {
  (void)state;
  char path[600];
  snprintf(path, sizeof path, "%s/hurray_stream_XXXXXX", tu_tmp_root());
  int fd = mkstemp(path);
  assert_true(fd >= 0);
#if !defined(_WIN32)
  unlink(path); /* Windows cannot remove a file that is open: at the end */
#endif
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_fd(fd, 0, &w), HURRAY_OK);
  for (size_t i = 0; i < K_N; i++) su_write_dense(w, k_counts[i], (unsigned)i);
  uint64_t total = hurray_stream_writer_offset(w);
  assert_int_equal(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
  hurray_stream_writer_destroy(&w);
  /* The borrowed fd is still open. */
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(fd, NULL, &r), HURRAY_OK);
  read_all_and_check(r, k_counts, K_N);
  assert_int_equal(hurray_stream_reader_offset(r), total);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(close(fd), 0);
#if defined(_WIN32)
  assert_int_equal(unlink(path), 0);
#endif
}

static void test_own_fd_is_closed(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_fd(fds[1], HURRAY_STREAM_OWN_FD, &w), HURRAY_OK);
  su_write_dense(w, 2, 0);
  assert_int_equal(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_finish(w, NULL), HURRAY_OK); /* idempotent */
  assert_false(tu_fd_is_open(fds[1])); /* closed by finish */
  hurray_stream_writer_destroy(&w);
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  o.flags = HURRAY_STREAM_OWN_FD;
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(fds[0], &o, &r), HURRAY_OK);
  const uint64_t one[1] = {2};
  read_all_and_check(r, one, 1);
  hurray_stream_reader_destroy(&r);
  assert_false(tu_fd_is_open(fds[0]));
}

static void test_writer_after_finish(void **state) {
  (void)state;
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  su_write_dense(w, 4, 1);
  const uint8_t *a = NULL, *b = NULL;
  size_t la = 0, lb = 0;
  assert_int_equal(hurray_stream_writer_finish(w, NULL), HURRAY_OK);
  /* getvalue is repeatable, also after finish. */
  assert_int_equal(hurray_stream_writer_memory(w, &a, &la), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_memory(w, &b, &lb), HURRAY_OK);
  assert_true(la > 16);
  assert_int_equal(la, lb);
  assert_ptr_equal(a, b);
  HurrayDescriptor *d = su_dense(1);
  uint8_t four[4] = {0};
  const void *bufs[1] = {four};
  uint64_t sizes[1] = {4};
  HurrayError e;
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_STREAM);
  assert_non_null(strstr(e.message, "finished"));
  assert_int_equal(hurray_stream_writer_memory(w, &b, &lb), HURRAY_OK);
  assert_int_equal(lb, la);
  hurray_stream_writer_destroy(&w);
  /* A writer with a destination has no in-memory bytes. */
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  assert_int_equal(hurray_stream_writer_to_fd(fds[1], 0, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_memory(w, &b, &lb), HURRAY_ERR_STREAM);
  hurray_stream_writer_destroy(&w);
  close(fds[0]);
  close(fds[1]);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_writer_validates_buffers(void **state) {
  (void)state;
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  HurrayDescriptor *d = su_dense(4); /* one 16-byte buffer */
  uint8_t data[32] = {0};
  const void *bufs[2] = {data, data};
  uint64_t sizes[2] = {16, 16};
  HurrayError e;
  /* count mismatch: too many, too few */
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 2, &e),
                   HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_string_equal(e.field, "buffers");
  assert_int_equal(hurray_stream_writer_write(w, d, NULL, NULL, 0, &e),
                   HURRAY_ERR_INVALID_BUFFER_TABLE);
  /* size mismatch: one byte short, one byte long */
  sizes[0] = 15;
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_BUFFER_SIZE);
  assert_string_equal(e.field, "buffers[0]");
  sizes[0] = 17;
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_BUFFER_SIZE);
  /* NULL data for a non-empty buffer, NULL arrays */
  sizes[0] = 16;
  const void *nulls[1] = {NULL};
  assert_int_equal(hurray_stream_writer_write(w, d, nulls, sizes, 1, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_writer_write(w, d, NULL, sizes, 1, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_writer_write(w, NULL, bufs, sizes, 1, &e), HURRAY_ERR_NULL_POINTER);
  /* nothing was written by the refusals */
  assert_int_equal(hurray_stream_writer_offset(w), 0);
  /* the accept side of the boundary */
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_OK);
  uint64_t dlen = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &dlen), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_offset(w), dlen + 16);
  /* an empty buffer may have a NULL pointer */
  HurrayDescriptor *empty = su_dense(0);
  sizes[0] = 0;
  assert_int_equal(hurray_stream_writer_write(w, empty, nulls, sizes, 1, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(empty), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_stream_writer_destroy(&w);
  /* unknown flags */
  assert_int_equal(hurray_stream_writer_to_memory(0x80, &w), HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(w);
  assert_int_equal(hurray_stream_writer_to_memory(HURRAY_STREAM_ZERO_COPY, &w),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_stream_writer_to_fd(-1, 0, &w), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_stream_writer_to_callback(NULL, NULL, 0, &w), HURRAY_ERR_NULL_POINTER);
}

static void test_reader_arguments(void **state) {
  (void)state;
  HurrayStreamReader *r = (HurrayStreamReader *)(uintptr_t)1;
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  assert_int_equal(o.max_descriptor_bytes, 16u * 1024u * 1024u);
  assert_true(o.max_buffer_bytes == UINT64_MAX);
  assert_int_equal(o.max_composite_depth, 8);
  assert_int_equal(o.flags, 0);
  o.max_composite_depth = 9;
  assert_int_equal(hurray_stream_reader_from_memory((const uint8_t *)"", 0, &o, &r),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(r);
  o.max_composite_depth = 8;
  o.flags = 0x100;
  assert_int_equal(hurray_stream_reader_from_memory((const uint8_t *)"", 0, &o, &r),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_stream_reader_from_fd(-1, NULL, &r), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_stream_reader_from_callback(NULL, NULL, NULL, &r),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_stream_reader_next_item(NULL, NULL, NULL), HURRAY_ERR_NULL_POINTER);
  hurray_stream_reader_destroy(NULL);
  hurray_stream_writer_destroy(NULL);
  hurray_stream_item_destroy(NULL);
  HurrayStreamReader *none = NULL;
  hurray_stream_reader_destroy(&none);
  assert_int_equal(hurray_stream_item_kind(NULL), 0);
  assert_null(hurray_stream_item_descriptor(NULL));
  assert_null(hurray_stream_item_member(NULL, 0));
}

/* A composite head written as a plain tensor is refused. */
static void test_plain_write_refuses_head(void **state) {
  (void)state;
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  HurrayDescriptor *h = su_head(HURRAY_COMPOSITE_GROUP, 0, 1, 2, 2, 0, 0, 0, 0);
  HurrayError e;
  assert_int_equal(hurray_stream_writer_write(w, h, NULL, NULL, 0, &e),
                   HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(hurray_stream_writer_offset(w), 0);
  assert_int_equal(hurray_descriptor_destroy(h), HURRAY_OK);
  hurray_stream_writer_destroy(&w);
}

/* Allocation failures anywhere in a read or a write leak nothing. */
static void test_alloc_failures_do_not_leak(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *bytes = build_stream(k_counts, K_N, &len);
  tu_alloc_install();
  for (long n = 0; n < 200; n++) {
    tu_fail_alloc_after(n);
    HurrayStreamReader *r = NULL;
    HurrayStatus st = hurray_stream_reader_from_memory(bytes, len, NULL, &r);
    bool done = false;
    if (st == HURRAY_OK) {
      HurrayStreamItem *it = NULL;
      size_t i = 0;
      while ((st = hurray_stream_reader_next_item(r, &it, NULL)) == HURRAY_OK && it != NULL) {
        su_check_dense(it, k_counts[i], (unsigned)i);
        i++;
        hurray_stream_item_destroy(&it);
      }
      if (st == HURRAY_OK) {
        assert_int_equal(i, K_N);
        done = true;
      } else {
        assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
      }
      hurray_stream_reader_destroy(&r);
    } else {
      assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
    }
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), 0);
    if (done) break;
  }
  /* Writer side: memory growth and scratch allocations. */
  for (long n = 0; n < 200; n++) {
    tu_fail_alloc_after(n);
    HurrayStreamWriter *w = NULL;
    HurrayStatus st = hurray_stream_writer_to_memory(0, &w);
    bool done = false;
    if (st == HURRAY_OK) {
      HurrayDescriptor *d = NULL;
      tu_alloc_reset(); /* the descriptor itself is not under test */
      d = su_dense(5000);
      tu_fail_alloc_after(n);
      uint8_t *data = su_pattern(20000, 1);
      const void *bufs[1] = {data};
      uint64_t sizes[1] = {20000};
      st = hurray_stream_writer_write(w, d, bufs, sizes, 1, NULL);
      if (st == HURRAY_OK) done = true;
      else assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
      free(data);
      tu_alloc_reset();
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
      hurray_stream_writer_destroy(&w);
    }
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), 0);
    if (done) break;
  }
  hurray_set_allocator(NULL);
  free(bytes);
}

/* Permissive (relay) mode: unknown tags are kept and relayed byte for byte;
 * a layout whose buffer table cannot be located cannot be framed. */
static void test_permissive_relay(void **state) {
  (void)state;
  HurrayDescriptor *d = su_dense(4);
  uint8_t bytes[256];
  uint64_t dlen = 0;
  assert_int_equal(hurray_descriptor_encode(d, bytes, sizeof bytes, &dlen), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  memset(bytes + dlen, 0x5A, 16);
  size_t len = (size_t)dlen + 16;
  bytes[36 + 1 + 12] = 0x09; /* buffers[0].device_tag: reserved */

  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  HurrayStreamReader *r = NULL;
  HurrayStreamItem *it = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, &o, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(e.offset, 49);
  hurray_stream_reader_destroy(&r);

  o.flags = HURRAY_STREAM_PERMISSIVE;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, &o, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(HURRAY_STREAM_PERMISSIVE, &w), HURRAY_OK);
  assert_int_equal(hurray_stream_writer_write_item(w, it, &e), HURRAY_OK);
  const uint8_t *out = NULL;
  size_t out_len = 0;
  assert_int_equal(hurray_stream_writer_memory(w, &out, &out_len), HURRAY_OK);
  assert_int_equal(out_len, len);
  assert_memory_equal(out, bytes, len);
  hurray_stream_writer_destroy(&w);
  hurray_stream_item_destroy(&it);
  hurray_stream_reader_destroy(&r);

  /* A reserved layout tag: kept opaque by the decoder, so the frame's end is unknown. */
  bytes[36 + 1 + 12] = 0x00;
  bytes[15] = 0x0C;
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, &o, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_ERR_UNSUPPORTED);
  assert_string_equal(e.field, "layout_tag");
  assert_int_equal(e.offset, 15);
  hurray_stream_reader_destroy(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_memory_round_trip),
      cmocka_unit_test(test_empty_stream_is_clean_end),
      cmocka_unit_test(test_zero_copy_views),
      cmocka_unit_test(test_take_buffer),
      cmocka_unit_test(test_relay_is_byte_identical),
      cmocka_unit_test(test_fd_round_trip_file),
      cmocka_unit_test(test_own_fd_is_closed),
      cmocka_unit_test(test_writer_after_finish),
      cmocka_unit_test(test_writer_validates_buffers),
      cmocka_unit_test(test_reader_arguments),
      cmocka_unit_test(test_plain_write_refuses_head),
      cmocka_unit_test(test_alloc_failures_do_not_leak),
      cmocka_unit_test(test_permissive_relay),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
