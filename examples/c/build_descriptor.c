/*
 * build_descriptor.c - build a descriptor field by field, validate it, encode
 * it, and decode the bytes back.
 *
 * The tensor: int8 codes of shape [2, 3], row-major, quantized per tensor
 * (real value = 0.5 * (q - 0)), in one 64-byte-aligned CPU buffer of 6 bytes.
 * HurrayDescriptorFields borrows every array it points at; from_fields copies
 * them, so the descriptor it returns owns all its memory.
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

int main(void) {
  static const uint64_t shape[2] = {2, 3};

  /* The buffer table: one handle per buffer. Size it from the element type. */
  uint64_t data_bytes = 0;
  CHECK(hurray_buffer_size_bytes(HURRAY_DTYPE_INT8, 2 * 3, &data_bytes));
  HurrayBufferHandle buffers[1];
  memset(buffers, 0, sizeof buffers);
  buffers[0].byte_size = data_bytes;
  buffers[0].alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
  buffers[0].device_tag = HURRAY_DEVICE_CPU;
  buffers[0].sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  buffers[0].memory_class = HURRAY_MEMORY_STANDARD;

  /* The quantization section, typed (raw NULL: the library encodes it). */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  q.version = HURRAY_QUANT_SCHEME_VERSION;
  q.u.per_tensor.scale = 0.5f;
  q.u.per_tensor.zero_point = 0;

  /* Every field; a zeroed struct means version "current", no sections. */
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_INT8;
  f.rank = 2;
  f.shape = shape;
  f.byte_offset = 0;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = buffers;
  f.quantization = &q; /* the HAS_QUANTIZATION flag is derived from this */

  /* Validation names the field that is wrong: make the buffer one byte short. */
  HurrayError err;
  HurrayDescriptor *d = NULL;
  buffers[0].byte_size = data_bytes - 1;
  HurrayStatus st = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &err);
  printf("%s: %s\n", hurray_status_name(st), err.message);
  if (st != HURRAY_ERR_BUFFER_SIZE || d != NULL ||
      strcmp(err.field, "buffers[0].byte_size") != 0) {
    fprintf(stderr, "unexpected error detail\n");
    return 1;
  }
  buffers[0].byte_size = data_bytes;

  /* Valid now. d is owned (hurray_descriptor_destroy); f's arrays were copied. */
  st = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &err);
  if (st != HURRAY_OK) {
    fprintf(stderr, "%s: %s\n", hurray_status_name(st), err.message);
    return 1;
  }

  /* Encode: ask the length, then write into caller memory. */
  uint64_t len = 0;
  CHECK(hurray_descriptor_encoded_len(d, &len));
  uint8_t bytes[256];
  if (len > sizeof bytes) return 1;
  uint64_t written = 0;
  /* A short capacity reports the length and writes nothing. */
  if (hurray_descriptor_encode(d, bytes, 8, &written) != HURRAY_ERR_BUFFER_TOO_SMALL ||
      written != len)
    return 1;
  CHECK(hurray_descriptor_encode(d, bytes, sizeof bytes, &written));
  printf("encoded %" PRIu64 " bytes:", written);
  for (uint64_t i = 0; i < written; i++) printf("%s%02X", i % 16 ? " " : "\n  ", bytes[i]);
  printf("\n");

  /* Decoding the bytes gives the same descriptor back (encoding is deterministic). */
  HurrayDescriptor *back = NULL;
  CHECK(hurray_descriptor_decode(bytes, (uintptr_t)written, &back));
  bool same = hurray_descriptor_equal(d, back);

  /* Everything at once, as borrowed views valid while `back` lives. */
  HurrayDescriptorFields view;
  CHECK(hurray_descriptor_fields(back, &view));
  printf("decoded: flags 0x%02" PRIX32 ", scheme %s, scale %g, equal %s\n", view.flags,
         hurray_quant_scheme_name(view.quantization->scheme),
         (double)view.quantization->u.per_tensor.scale, same ? "yes" : "no");

  CHECK(hurray_descriptor_destroy(back));
  CHECK(hurray_descriptor_destroy(d));
  return same && view.flags == HURRAY_FLAG_HAS_QUANTIZATION ? 0 : 1;
}
