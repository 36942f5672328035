/*
 * multi_buffer.c - one tensor, two buffers, one list.
 *
 * A per-channel-quantized weight travels as two buffers: the weights
 * (buffer 0) and their per-channel scales (buffer 1, the index that the
 * quantization section's scale_buffer_index names). A HurrayBufferList
 * carries both, in buffer-table order, so they share one lifetime and one
 * destroy. Uses the public API only.
 */
#include <stdint.h>
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

/* Counts releases, to show that each buffer is released exactly once. */
static int released;
static void on_release(void *data, void *ctx) {
  (void)data;
  (void)ctx;
  released++;
}

int main(void) {
  static _Alignas(64) uint8_t weights[64];
  static _Alignas(64) uint8_t scales[64];
  memset(weights, 0xAB, sizeof weights);
  memset(scales, 0x01, sizeof scales);

  HurrayBufferList *list = NULL;
  CHECK(hurray_buffer_list_new(2, &list));

  /* Push order is buffer-table order: weights are index 0, scales index 1. */
  uint8_t *data[2] = {weights, scales};
  for (int i = 0; i < 2; i++) {
    HurrayBuffer *handle = NULL;
    CHECK(hurray_buffer_from_ptr(data[i], 64, 64, HURRAY_DEVICE_CPU,
                                 HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD,
                                 on_release, NULL, &handle));
    /* The push moves the handle into the list; on failure it would still be ours. */
    HurrayStatus st = hurray_buffer_list_push(list, handle);
    if (st != HURRAY_OK) {
      /* Cleanup on the way out: the push's status is the one reported, so those of the
       * two destroys are stored and dropped (GCC's warn_unused_result ignores a cast). */
      HurrayStatus ignored = hurray_buffer_destroy(handle);
      ignored = hurray_buffer_list_destroy(&list);
      (void)ignored;
      fprintf(stderr, "push failed: %s\n", hurray_status_name(st));
      return 1;
    }
  }

  uint64_t len = 0;
  CHECK(hurray_buffer_list_len(list, &len));
  if (len != 2) {
    fprintf(stderr, "expected 2 buffers, got %llu\n", (unsigned long long)len);
    return 1;
  }

  for (uint64_t index = 0; index < len; index++) {
    /* Borrowed: the list owns it, so it is read here and never destroyed. */
    HurrayBuffer *borrowed = NULL;
    CHECK(hurray_buffer_list_get(list, index, &borrowed));
    uint64_t byte_size = 0;
    CHECK(hurray_buffer_byte_size(borrowed, &byte_size));
    printf("buffer[%llu]: %llu bytes\n", (unsigned long long)index,
           (unsigned long long)byte_size);
  }

  /* Destroys the list and both buffers, once each, and nulls our variable,
   * so a second destroy is a harmless no-op. */
  CHECK(hurray_buffer_list_destroy(&list));
  if (list != NULL || released != 2) {
    fprintf(stderr, "list not destroyed properly (released %d)\n", released);
    return 1;
  }
  CHECK(hurray_buffer_list_destroy(&list));
  if (released != 2) return 1;
  return 0;
}
