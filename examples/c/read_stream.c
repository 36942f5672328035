/*
 * read_stream.c - write three tensors as a Hurray stream, read them back one
 * item at a time, and see how a truncated stream is reported.
 *
 * The stream is built in memory so that the example is self-contained; the
 * reading loop is the same over a pipe or socket (hurray_stream_reader_from_fd)
 * or any byte source (hurray_stream_reader_from_callback).
 * Uses the public API only (docs/reference/c-api/index.md, "Worked examples").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hurray/hurray.h"

#define CHECK(call)                                                        \
  do {                                                                     \
    HurrayStatus st_ = (call);                                             \
    if (st_ != HURRAY_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, hurray_status_name(st_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

/* A row-major uint8 vector of n elements in one CPU buffer; *out owned. */
static HurrayStatus make_u8(const uint64_t *n, HurrayDescriptor **out) {
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = *n;
  h.alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_UINT8;
  f.rank = 1;
  f.shape = n;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  return hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, out, NULL);
}

/* Reads every item of a stream held in memory; returns the status that ended
 * the loop (HURRAY_OK at a clean end) and counts the tensors read. */
static HurrayStatus read_all(const uint8_t *bytes, size_t len, int *tensors, HurrayError *err) {
  HurrayStreamReaderOptions opts;
  hurray_stream_reader_options_init(&opts); /* 16 MiB descriptors, depth 8 */
  opts.max_buffer_bytes = 1u << 20;          /* bound what a peer may claim */
  HurrayStreamReader *r = NULL;              /* owned: hurray_stream_reader_destroy */
  HurrayStatus st = hurray_stream_reader_from_memory(bytes, len, &opts, &r);
  *tensors = 0;
  while (st == HURRAY_OK) {
    HurrayStreamItem *item = NULL; /* owned: hurray_stream_item_destroy */
    st = hurray_stream_reader_next_item(r, &item, err);
    if (st != HURRAY_OK || item == NULL) break; /* an error, or the clean end */
    if (hurray_stream_item_kind(item) == HURRAY_STREAM_ITEM_TENSOR) {
      const HurrayDescriptor *d = hurray_stream_item_descriptor(item); /* borrowed */
      const uint8_t *data = NULL;                                      /* borrowed */
      uint64_t size = 0, count = 0;
      st = hurray_descriptor_element_count(d, &count);
      if (st == HURRAY_OK) st = hurray_stream_item_buffer(item, 0, &data, &size);
      if (st != HURRAY_OK) {
        hurray_stream_item_destroy(&item);
        break;
      }
      printf("tensor at byte %" PRIu64 ": %" PRIu64 " elements, first %u\n",
             hurray_stream_item_offset(item), count, size > 0 ? data[0] : 0u);
      (*tensors)++;
    } else {
      /* A composite: its members are items (hurray_stream_item_member). */
      printf("composite of %" PRIu32 " members\n", hurray_stream_item_member_count(item));
    }
    hurray_stream_item_destroy(&item);
  }
  hurray_stream_reader_destroy(&r);
  return st;
}

int main(void) {
  /* Write: one frame per tensor, descriptor then buffer bytes, no padding. */
  HurrayStreamWriter *w = NULL; /* owned: hurray_stream_writer_destroy */
  CHECK(hurray_stream_writer_to_memory(0, &w));
  HurrayError err;
  for (uint64_t n = 1; n <= 3; n++) {
    HurrayDescriptor *d = NULL;
    CHECK(make_u8(&n, &d));
    uint8_t payload[3];
    memset(payload, (int)(10 * n), sizeof payload);
    const void *bufs[1] = {payload};
    uint64_t sizes[1] = {n};
    HurrayStatus st = hurray_stream_writer_write(w, d, bufs, sizes, 1, &err);
    CHECK(hurray_descriptor_destroy(d)); /* the writer keeps nothing */
    if (st != HURRAY_OK) {
      fprintf(stderr, "write: %s\n", err.message);
      return 1;
    }
  }
  CHECK(hurray_stream_writer_finish(w, &err));
  const uint8_t *bytes = NULL; /* borrowed from w, valid until it is destroyed */
  size_t len = 0;
  CHECK(hurray_stream_writer_memory(w, &bytes, &len));
  printf("stream of %zu bytes\n", len);

  /* Read it all: three tensors, then a clean end. */
  int tensors = 0;
  HurrayStatus st = read_all(bytes, len, &tensors, &err);
  if (st != HURRAY_OK || tensors != 3) {
    fprintf(stderr, "read: %s (%d tensors)\n", hurray_status_name(st), tensors);
    return 1;
  }

  /* Cut the last frame's buffer short: two tensors, then HURRAY_ERR_STREAM
   * with the stream offset where the bytes ran out. */
  st = read_all(bytes, len - 1, &tensors, &err);
  printf("truncated: %s after %d tensors: %s\n", hurray_status_name(st), tensors, err.message);
  int ok = st == HURRAY_ERR_STREAM && tensors == 2;
  hurray_stream_writer_destroy(&w);
  return ok ? 0 : 1;
}
