/*
 * decode_descriptor.c - decode the bytes of a tensor descriptor, read it, and
 * explain a descriptor that is invalid.
 *
 * The 61 bytes below describe a float32 tensor of shape [3, 4], row-major, in
 * one CPU buffer of 48 bytes aligned to 64. The second half corrupts the
 * buffer's alignment and shows what the error detail (HurrayError) says: the
 * status, the field path and the byte offset of the field that is wrong.
 * Uses the public API only (docs/reference/c-api/index.md, "Worked examples").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hurray/hurray.h"

static const uint8_t k_descriptor[61] = {
    0x48, 0x52, 0x52, 0x59,                         /*  0 magic "HRRY"            */
    0x01, 0x00,                                     /*  4 version 1.0             */
    0x3D, 0x00, 0x00, 0x00,                         /*  6 descriptor_length 61    */
    0x00, 0x00, 0x00, 0x00,                         /* 10 flags: no sections      */
    0x03,                                           /* 14 type_tag float32        */
    0x01,                                           /* 15 layout_tag row_major    */
    0x02, 0x00, 0x00, 0x00,                         /* 16 rank 2                  */
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 20 shape[0] = 3            */
    0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 28 shape[1] = 4            */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 36 byte_offset 0           */
    0x01,                                           /* 44 buffer_count 1          */
    0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 45 buffers[0].byte_size 48 */
    0x40, 0x00, 0x00, 0x00,                         /* 53 buffers[0].alignment 64 */
    0x00, 0x00, 0x00, 0x00,                         /* 57 cpu, producer_synced, standard, reserved */
};

#define CHECK(call)                                                        \
  do {                                                                     \
    HurrayStatus st_ = (call);                                             \
    if (st_ != HURRAY_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, hurray_status_name(st_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

/* Prints a one-line summary of a decoded descriptor, through the getters. */
static int print_summary(const HurrayDescriptor *d) {
  uint8_t type_tag = 0, layout_tag = 0;
  uint64_t dims[HURRAY_MAX_RANK];
  uintptr_t rank = HURRAY_MAX_RANK; /* in: capacity of dims; out: the rank */
  uint32_t buffers = 0;
  CHECK(hurray_descriptor_element_type_tag(d, &type_tag));
  CHECK(hurray_descriptor_layout_tag(d, &layout_tag));
  CHECK(hurray_descriptor_shape(d, dims, &rank));
  CHECK(hurray_descriptor_buffer_count(d, &buffers));
  printf("%s [", hurray_dtype_name(type_tag)); /* static strings: never freed */
  for (uintptr_t k = 0; k < rank; k++) printf("%s%" PRIu64, k ? ", " : "", dims[k]);
  printf("] %s, %" PRIu32 " buffer(s)\n", hurray_layout_name(layout_tag), buffers);
  for (uint32_t i = 0; i < buffers; i++) {
    const HurrayBufferHandle *h = NULL; /* borrowed from d */
    CHECK(hurray_descriptor_buffer(d, i, &h));
    printf("  buffers[%" PRIu32 "]: %" PRIu64 " bytes, aligned %" PRIu32 ", on %s\n", i,
           h->byte_size, h->alignment, hurray_device_name(h->device_tag));
  }
  return 0;
}

int main(void) {
  /* A stream reader learns how many bytes a descriptor has from its first 10. */
  uint32_t length = 0;
  CHECK(hurray_descriptor_peek_length(k_descriptor, 10, &length, NULL));
  if (length != sizeof k_descriptor) return 1;

  /* Strict decode. On success d is owned: free it with hurray_descriptor_destroy. */
  HurrayDescriptor *d = NULL;
  HurrayError err;
  HurrayStatus st = hurray_descriptor_decode_ex(k_descriptor, sizeof k_descriptor,
                                                HURRAY_DECODE_STRICT, &d, &err);
  if (st != HURRAY_OK) {
    fprintf(stderr, "%s: %s\n", hurray_status_name(st), err.message);
    return 1;
  }
  int rc = print_summary(d);
  CHECK(hurray_descriptor_destroy(d));
  if (rc != 0) return rc;

  /* Now an invalid descriptor: an alignment of 48 is not a power of two. */
  uint8_t bad[sizeof k_descriptor];
  memcpy(bad, k_descriptor, sizeof bad);
  bad[53] = 0x30;
  d = NULL;
  st = hurray_descriptor_decode_ex(bad, sizeof bad, HURRAY_DECODE_STRICT, &d, &err);
  /* The status says what kind of error; err says which field and where. */
  printf("%s (%" PRId32 "): %s\n", hurray_status_name(st), st, err.message);
  printf("  field \"%s\", byte %" PRIu64 "\n", err.field, err.offset);
  if (st != HURRAY_ERR_INVALID_LAYOUT || d != NULL || err.status != st ||
      strcmp(err.field, "buffers[0].alignment") != 0 || err.offset != 53) {
    fprintf(stderr, "unexpected error detail\n");
    return 1;
  }

  /* The reference C ABI entry point gives the same status, without a detail. */
  st = hurray_descriptor_decode(bad, sizeof bad, &d);
  if (st != HURRAY_ERR_INVALID_LAYOUT || d != NULL) return 1;
  return 0;
}
