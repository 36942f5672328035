/*
 * libFuzzer target: reads every item of a stream from the input bytes.
 *
 * Properties checked on every input (a violation traps):
 *  - reading never crashes, never reads out of bounds, never leaks (ASan);
 *  - the reader stops with a clean end or a status, never loops;
 *  - every item read relays (hurray_stream_writer_write_item) to exactly the
 *    bytes it was read from, so decode + encode are byte-identical;
 *  - the zero-copy memory reader sees the same items as the copying one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hurray/hurray.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do {              \
    if (!(cond)) __builtin_trap(); \
  } while (0)

/* Reads the input with `opts`; when `relay` is set, writes each item back
 * and compares. Returns the number of items and the final status. */
static HurrayStatus read_all(const uint8_t *data, size_t size,
                             const HurrayStreamReaderOptions *opts, int relay, uint64_t *items,
                             uint64_t *consumed) {
  HurrayStreamReader *r = NULL;
  HurrayStatus st = hurray_stream_reader_from_memory(data, size, opts, &r);
  CHECK(st == HURRAY_OK);
  *items = 0;
  HurrayStreamItem *it = NULL;
  HurrayError e;
  uint64_t start = 0;
  for (;;) {
    st = hurray_stream_reader_next_item(r, &it, &e);
    if (st != HURRAY_OK) {
      CHECK(it == NULL);
      CHECK(e.status == st);
      break;
    }
    if (it == NULL) break;
    uint64_t end = hurray_stream_reader_offset(r);
    CHECK(end > start && end <= size);
    if (relay) {
      HurrayStreamWriter *w = NULL;
      CHECK(hurray_stream_writer_to_memory(0, &w) == HURRAY_OK);
      HurrayStatus ws = hurray_stream_writer_write_item(w, it, &e);
      CHECK(ws == HURRAY_OK);
      const uint8_t *out = NULL;
      size_t out_len = 0;
      CHECK(hurray_stream_writer_memory(w, &out, &out_len) == HURRAY_OK);
      CHECK(out_len == end - start);
      CHECK(memcmp(out, data + start, out_len) == 0);
      hurray_stream_writer_destroy(&w);
    }
    (*items)++;
    start = end;
    hurray_stream_item_destroy(&it);
  }
  *consumed = start;
  /* A finished or failed reader stays that way. */
  HurrayStatus again = hurray_stream_reader_next_item(r, &it, NULL);
  CHECK(again == st && it == NULL);
  hurray_stream_reader_destroy(&r);
  return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  uint64_t items = 0, consumed = 0;
  HurrayStatus st = read_all(data, size, &o, 1, &items, &consumed);

  /* The zero-copy reader agrees with the copying one. */
  uint64_t items2 = 0, consumed2 = 0;
  o.flags = HURRAY_STREAM_ZERO_COPY;
  HurrayStatus st2 = read_all(data, size, &o, 0, &items2, &consumed2);
  CHECK(st2 == st && items2 == items && consumed2 == consumed);

  /* Tight limits only ever turn success into HURRAY_ERR_STREAM_LIMIT. */
  hurray_stream_reader_options_init(&o);
  o.max_descriptor_bytes = 256;
  o.max_buffer_bytes = 1024;
  o.max_composite_depth = 2;
  uint64_t items3 = 0, consumed3 = 0;
  HurrayStatus st3 = read_all(data, size, &o, 0, &items3, &consumed3);
  CHECK(items3 <= items);
  if (st3 != st) CHECK(st3 == HURRAY_ERR_STREAM_LIMIT);
  return 0;
}
