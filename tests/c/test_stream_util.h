/* Helpers shared by the stream tests (tests/c/test_stream_*.c). */
#ifndef HURRAY_TEST_STREAM_UTIL_H
#define HURRAY_TEST_STREAM_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A float32 row-major tensor of `n` elements whose one buffer declares
 * `byte_size` bytes (at least 4 n) on `device` with `sync`. */
static inline HurrayDescriptor *su_dense_full(uint64_t n, uint64_t byte_size, uint8_t device,
                                              uint8_t sync) {
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = byte_size;
  h.alignment = 64;
  h.device_tag = device;
  h.sync_mode = sync;
  h.memory_class = HURRAY_MEMORY_STANDARD;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.version_major = 1;
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 1;
  f.shape = &n;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  HurrayStatus st = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e);
  if (st != HURRAY_OK) fail_msg("su_dense_full: %s", e.message);
  return d;
}

/* A float32 row-major tensor of `n` elements on `device` with `sync`. */
static inline HurrayDescriptor *su_dense_dev(uint64_t n, uint8_t device, uint8_t sync) {
  return su_dense_full(n, 4 * n, device, sync);
}

static inline HurrayDescriptor *su_dense(uint64_t n) {
  return su_dense_dev(n, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED);
}

/* A float32 [rows, cols] member of a [prows, pcols] parent at (r0, c0);
 * role < 0 means no composite member section. */
static inline HurrayDescriptor *su_member(uint64_t rows, uint64_t cols, uint64_t prows,
                                          uint64_t pcols, uint64_t r0, uint64_t c0, int role) {
  uint64_t shape[2] = {rows, cols};
  uint64_t parent[2] = {prows, pcols};
  uint64_t off[2] = {r0, c0};
  HurrayShard sh = {parent, off};
  HurrayCompositeMember cm;
  memset(&cm, 0, sizeof cm);
  cm.role = (uint8_t)(role < 0 ? 0 : role);
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = 4 * rows * cols;
  h.alignment = 64;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.version_major = 1;
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  f.shard = &sh;
  f.composite_member = role < 0 ? NULL : &cm;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e) != HURRAY_OK)
    fail_msg("su_member: %s", e.message);
  return d;
}

/* A composite head over float32 [rows, cols]; with a shard when prows > 0. */
static inline HurrayDescriptor *su_head(uint8_t rule, uint8_t op, uint32_t members, uint64_t rows,
                                        uint64_t cols, uint64_t prows, uint64_t pcols,
                                        uint64_t r0, uint64_t c0) {
  uint64_t shape[2] = {rows, cols};
  uint64_t parent[2] = {prows, pcols};
  uint64_t off[2] = {r0, c0};
  HurrayShard sh = {parent, off};
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.version_major = 1;
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_COMPOSITE;
  f.layout.u.composite.rule = rule;
  f.layout.u.composite.combine_op = op;
  f.layout.u.composite.member_count = members;
  f.shard = prows > 0 ? &sh : NULL;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e) != HURRAY_OK)
    fail_msg("su_head: %s", e.message);
  return d;
}

/* Deterministic bytes for buffer `seed`. */
static inline uint8_t *su_pattern(uint64_t n, unsigned seed) {
  uint8_t *p = malloc(n == 0 ? 1 : (size_t)n);
  assert_non_null(p);
  for (uint64_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 31u + seed * 7u + (i >> 8));
  return p;
}

/* Writes one dense tensor of n floats with pattern `seed`. */
static inline void su_write_dense(HurrayStreamWriter *w, uint64_t n, unsigned seed) {
  HurrayDescriptor *d = su_dense(n);
  uint8_t *data = su_pattern(4 * n, seed);
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {4 * n};
  HurrayError e;
  HurrayStatus st = hurray_stream_writer_write(w, d, bufs, sizes, 1, &e);
  if (st != HURRAY_OK) fail_msg("su_write_dense: %s", e.message);
  free(data);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* Asserts that `it` is a dense tensor of n floats with pattern `seed`. */
static inline void su_check_dense(const HurrayStreamItem *it, uint64_t n, unsigned seed) {
  assert_non_null(it);
  assert_int_equal(hurray_stream_item_kind(it), HURRAY_STREAM_ITEM_TENSOR);
  assert_int_equal(hurray_stream_item_buffer_count(it), 1);
  const uint8_t *data = NULL;
  uint64_t size = 0;
  assert_int_equal(hurray_stream_item_buffer(it, 0, &data, &size), HURRAY_OK);
  assert_int_equal(size, 4 * n);
  uint8_t *want = su_pattern(4 * n, seed);
  if (n > 0) {
    assert_non_null(data);
    assert_memory_equal(data, want, (size_t)(4 * n));
    if (!hurray_stream_item_buffer_is_view(it, 0)) assert_int_equal((uintptr_t)data % 64, 0);
  }
  free(want);
  uint64_t shape = 0;
  uintptr_t rank = 1;
  assert_int_equal(hurray_descriptor_shape(hurray_stream_item_descriptor(it), &shape, &rank),
                   HURRAY_OK);
  assert_int_equal(rank, 1);
  assert_int_equal(shape, n);
}

#endif
