/*
 * Source compatibility with the reference C ABI header (hurray-ffi's
 * hurray.h, ABI version 4): every type, constant and function it declares
 * exists here with the same type, so a program written against it compiles
 * unchanged. Function types are checked with _Generic on an unevaluated
 * operand, so functions implemented elsewhere need not be linked in.
 */
#include <stddef.h>

#include "testutil.h"

#define SAME_TYPE(expr, type) _Generic((expr), type : 1, default : 0)
#define CHECK_FN(fn, type) \
  _Static_assert(SAME_TYPE(&fn, type), #fn " does not have the reference signature")

/* Types. */
_Static_assert(SAME_TYPE((HurrayStatus)0, int32_t), "HurrayStatus is int32_t");
_Static_assert(SAME_TYPE((HurrayReleaseCallback)0, void (*)(void *, void *)), "release cb");
_Static_assert(SAME_TYPE((HurrayEventReleaseFn)0, void (*)(void *, void *)), "event cb");
_Static_assert(SAME_TYPE((HurrayOwnerReleaseFn)0, void (*)(void *)), "owner cb");
_Static_assert(SAME_TYPE((struct HurrayBuffer *)0, HurrayBuffer *), "HurrayBuffer");
_Static_assert(SAME_TYPE((struct HurrayBufferList *)0, HurrayBufferList *), "list");
_Static_assert(SAME_TYPE((struct HurrayDescriptor *)0, HurrayDescriptor *), "descriptor");
_Static_assert(SAME_TYPE((struct HurrayTensorContext *)0, HurrayTensorContext *), "context");
_Static_assert(SAME_TYPE((struct HurrayReader *)0, HurrayReader *), "reader");
_Static_assert(SAME_TYPE((struct HurrayWriter *)0, HurrayWriter *), "writer");

/* Payload structs: the reference field order, names and types. */
_Static_assert(offsetof(HurraySyncConsumerStreamPayload, consumer_stream) == 0, "cs[0]");
_Static_assert(offsetof(HurraySyncConsumerStreamPayload, consumer_stream_device_tag) ==
                   sizeof(void *),
               "cs[1]");
_Static_assert(offsetof(HurraySyncEventPayload, sync_handle) == 0, "ev[0]");
_Static_assert(offsetof(HurraySyncEventPayload, sync_handle_device_tag) == sizeof(void *),
               "ev[1]");
_Static_assert(offsetof(HurraySyncEventPayload, event_release_fn) == 2 * sizeof(void *),
               "ev[2]");
_Static_assert(offsetof(HurraySyncEventPayload, event_release_context) == 3 * sizeof(void *),
               "ev[3]");
_Static_assert(sizeof(HurraySyncEventPayload) == 4 * sizeof(void *), "ev size");

/* Constants. */
_Static_assert(HURRAY_C_ABI_VERSION == 4, "ABI version");
_Static_assert(HURRAY_OK == 0 && HURRAY_ERR_INVALID_MAGIC == -1 &&
                   HURRAY_ERR_VERSION_MISMATCH == -2 && HURRAY_ERR_INVALID_LAYOUT == -3 &&
                   HURRAY_ERR_INVALID_TYPE == -4 && HURRAY_ERR_BUFFER_TOO_SMALL == -5 &&
                   HURRAY_ERR_NULL_POINTER == -6 && HURRAY_ERR_INTERNAL_PANIC == -7 &&
                   HURRAY_ERR_INVALID_SYNC_MODE == -8 && HURRAY_ERR_SYNC_MODE_MISMATCH == -9 &&
                   HURRAY_ERR_INTERNAL == -10 && HURRAY_ERR_INDEX_OUT_OF_BOUNDS == -11,
               "reference status values");

/* Functions, with the reference's exact parameter types. */
CHECK_FN(hurray_buffer_alignment, HurrayStatus (*)(const struct HurrayBuffer *, uint32_t *));
CHECK_FN(hurray_buffer_byte_size, HurrayStatus (*)(const struct HurrayBuffer *, uint64_t *));
CHECK_FN(hurray_buffer_data_ptr, HurrayStatus (*)(const struct HurrayBuffer *, void **));
CHECK_FN(hurray_buffer_destroy, HurrayStatus (*)(struct HurrayBuffer *));
CHECK_FN(hurray_buffer_device_tag, HurrayStatus (*)(const struct HurrayBuffer *, uint8_t *));
CHECK_FN(hurray_buffer_from_ptr,
         HurrayStatus (*)(void *, uint64_t, uint32_t, uint8_t, uint8_t, uint8_t,
                          HurrayReleaseCallback, void *, struct HurrayBuffer **));
CHECK_FN(hurray_buffer_handoff_consumer_stream,
         HurrayStatus (*)(const struct HurrayBuffer *,
                          const struct HurraySyncConsumerStreamPayload *));
CHECK_FN(hurray_buffer_handoff_event,
         HurrayStatus (*)(const struct HurrayBuffer *, const struct HurraySyncEventPayload *));
CHECK_FN(hurray_buffer_handoff_producer_synced, HurrayStatus (*)(const struct HurrayBuffer *));
CHECK_FN(hurray_buffer_list_destroy, HurrayStatus (*)(struct HurrayBufferList **));
CHECK_FN(hurray_buffer_list_get,
         HurrayStatus (*)(const struct HurrayBufferList *, uint64_t, struct HurrayBuffer **));
CHECK_FN(hurray_buffer_list_len, HurrayStatus (*)(const struct HurrayBufferList *, uint64_t *));
CHECK_FN(hurray_buffer_list_new, HurrayStatus (*)(uint64_t, struct HurrayBufferList **));
CHECK_FN(hurray_buffer_list_push,
         HurrayStatus (*)(struct HurrayBufferList *, struct HurrayBuffer *));
CHECK_FN(hurray_buffer_memory_class, HurrayStatus (*)(const struct HurrayBuffer *, uint8_t *));
CHECK_FN(hurray_buffer_sync_mode, HurrayStatus (*)(const struct HurrayBuffer *, uint8_t *));
CHECK_FN(hurray_c_abi_version, uint32_t (*)(void));
CHECK_FN(hurray_descriptor_buffer_count,
         HurrayStatus (*)(const struct HurrayDescriptor *, uint32_t *));
CHECK_FN(hurray_descriptor_byte_offset,
         HurrayStatus (*)(const struct HurrayDescriptor *, uint64_t *));
CHECK_FN(hurray_descriptor_decode,
         HurrayStatus (*)(const uint8_t *, uintptr_t, struct HurrayDescriptor **));
CHECK_FN(hurray_descriptor_destroy, HurrayStatus (*)(struct HurrayDescriptor *));
CHECK_FN(hurray_descriptor_element_type_tag,
         HurrayStatus (*)(const struct HurrayDescriptor *, uint8_t *));
CHECK_FN(hurray_descriptor_layout_tag,
         HurrayStatus (*)(const struct HurrayDescriptor *, uint8_t *));
CHECK_FN(hurray_descriptor_rank, HurrayStatus (*)(const struct HurrayDescriptor *, uint32_t *));
CHECK_FN(hurray_descriptor_shape,
         HurrayStatus (*)(const struct HurrayDescriptor *, uint64_t *, uintptr_t *));
CHECK_FN(hurray_tensor_context_abi_version,
         HurrayStatus (*)(const struct HurrayTensorContext *, uint32_t *));
CHECK_FN(hurray_tensor_context_descriptor,
         HurrayStatus (*)(const struct HurrayTensorContext *, const uint8_t **, uint64_t *));
CHECK_FN(hurray_tensor_context_destroy, HurrayStatus (*)(struct HurrayTensorContext **));
CHECK_FN(hurray_tensor_context_new,
         HurrayStatus (*)(uint32_t, const uint8_t *, uint64_t, void *, HurrayOwnerReleaseFn,
                          struct HurrayTensorContext **));

/* The reference's own usage examples, run as written against this library. */
static void test_reference_examples(void **state) {
  (void)state;
  /* buffer_list_new / destroy: destroy nulls, a second destroy is a no-op. */
  struct HurrayBufferList *list = NULL;
  assert_int_equal(hurray_buffer_list_new(2, &list), HURRAY_OK);
  assert_non_null(list);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
  assert_null(list);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);

  /* An empty list has no index 0; a fresh list has length 0. */
  assert_int_equal(hurray_buffer_list_new(0, &list), HURRAY_OK);
  uint64_t len = 7;
  assert_int_equal(hurray_buffer_list_len(list, &len), HURRAY_OK);
  assert_int_equal(len, 0);
  struct HurrayBuffer *got = NULL;
  assert_int_equal(hurray_buffer_list_get(list, 0, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);

  /* Push a 64-byte CPU buffer, read the length back, destroy the list. */
  static _Alignas(64) uint8_t data[64];
  struct HurrayBuffer *buffer = NULL;
  assert_int_equal(hurray_buffer_from_ptr(data, 64, 64, 0, 0, 0, NULL, NULL, &buffer),
                   HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(list, buffer), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_len(list, &len), HURRAY_OK);
  assert_int_equal(len, 1);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);

  /* Tensor context with the "HRRY" bytes and no owner. */
  static const uint8_t descriptor[] = {0x48, 0x52, 0x52, 0x59};
  struct HurrayTensorContext *ctx = NULL;
  assert_int_equal(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, descriptor, 4, NULL, NULL,
                                             &ctx),
                   HURRAY_OK);
  uint32_t version = 0;
  assert_int_equal(hurray_tensor_context_abi_version(ctx, &version), HURRAY_OK);
  assert_int_equal(version, HURRAY_C_ABI_VERSION);
  const uint8_t *bytes = NULL;
  uint64_t n = 0;
  assert_int_equal(hurray_tensor_context_descriptor(ctx, &bytes, &n), HURRAY_OK);
  assert_int_equal(n, 4);
  assert_memory_equal(bytes, descriptor, 4);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  assert_null(ctx);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reference_examples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
