/* C ABI sync handoff cross-checks: producer-synced, event, consumer stream. */
#include <string.h>

#include "testutil.h"

static int g_event_releases;
static void event_release(void *handle, void *ctx) {
  (void)handle;
  (void)ctx;
  g_event_releases++;
}

/* Fake device pointers and driver handles: never dereferenced. */
#define DEV_PTR ((void *)(uintptr_t)0x7f0000001000u)
#define EVENT ((void *)(uintptr_t)0xE1E1E000u)
#define STREAM ((void *)(uintptr_t)0x5757000u)

static HurrayBuffer *make(uint8_t device, uint8_t sync) {
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(DEV_PTR, 4096, 4096, device, sync,
                                          HURRAY_MEMORY_STANDARD, NULL, NULL, &b),
                   HURRAY_OK);
  return b;
}

static void test_producer_synced(void **state) {
  (void)state;
  HurrayBuffer *cpu = NULL;
  static _Alignas(64) uint8_t bytes[64];
  assert_int_equal(hurray_buffer_from_ptr(bytes, 64, 64, HURRAY_DEVICE_CPU, 0, 0, NULL, NULL,
                                          &cpu),
                   HURRAY_OK);
  HurrayBuffer *cuda = make(HURRAY_DEVICE_CUDA, HURRAY_SYNC_PRODUCER_SYNCED);
  HurrayBuffer *ev = make(HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT);
  HurrayBuffer *cs = make(HURRAY_DEVICE_CUDA, HURRAY_SYNC_CONSUMER_STREAM);
  assert_int_equal(hurray_buffer_handoff_producer_synced(cpu), HURRAY_OK);
  assert_int_equal(hurray_buffer_handoff_producer_synced(cuda), HURRAY_OK);
  assert_int_equal(hurray_buffer_handoff_producer_synced(ev), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_producer_synced(cs), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_producer_synced(NULL), HURRAY_ERR_NULL_POINTER);
  /* A producer-synced buffer carries no event and no stream. */
  HurraySyncEventPayload ep = {EVENT, HURRAY_DEVICE_CUDA, event_release, NULL};
  HurraySyncConsumerStreamPayload sp = {STREAM, HURRAY_DEVICE_CUDA};
  assert_int_equal(hurray_buffer_handoff_event(cuda, &ep), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_consumer_stream(cuda, &sp),
                   HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_event(cpu, &ep), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_destroy(cpu), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(cuda), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(ev), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(cs), HURRAY_OK);
}

static void test_event(void **state) {
  (void)state;
  g_event_releases = 0;
  HurrayBuffer *b = make(HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT);
  int ctx = 0;
  HurraySyncEventPayload good = {EVENT, HURRAY_DEVICE_CUDA, event_release, &ctx};
  assert_int_equal(hurray_buffer_handoff_event(b, &good), HURRAY_OK);
  /* The context may be NULL. */
  HurraySyncEventPayload p = good;
  p.event_release_context = NULL;
  assert_int_equal(hurray_buffer_handoff_event(b, &p), HURRAY_OK);
  /* Each required part missing or wrong. */
  p = good;
  p.sync_handle = NULL;
  assert_int_equal(hurray_buffer_handoff_event(b, &p), HURRAY_ERR_SYNC_MODE_MISMATCH);
  p = good;
  p.event_release_fn = NULL;
  assert_int_equal(hurray_buffer_handoff_event(b, &p), HURRAY_ERR_SYNC_MODE_MISMATCH);
  p = good;
  p.sync_handle_device_tag = HURRAY_DEVICE_ROCM;
  assert_int_equal(hurray_buffer_handoff_event(b, &p), HURRAY_ERR_SYNC_MODE_MISMATCH);
  p = good;
  p.sync_handle_device_tag = HURRAY_DEVICE_CPU;
  assert_int_equal(hurray_buffer_handoff_event(b, &p), HURRAY_ERR_SYNC_MODE_MISMATCH);
  /* An event buffer offered as something else. */
  HurraySyncConsumerStreamPayload sp = {STREAM, HURRAY_DEVICE_CUDA};
  assert_int_equal(hurray_buffer_handoff_consumer_stream(b, &sp),
                   HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_producer_synced(b), HURRAY_ERR_SYNC_MODE_MISMATCH);
  /* NULL arguments. */
  assert_int_equal(hurray_buffer_handoff_event(NULL, &good), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_handoff_event(b, NULL), HURRAY_ERR_NULL_POINTER);
  /* Checking never releases the event: that is the consumer's call. */
  assert_int_equal(g_event_releases, 0);
  assert_int_equal(ctx, 0);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(g_event_releases, 0);
}

static void test_consumer_stream(void **state) {
  (void)state;
  HurrayBuffer *b = make(HURRAY_DEVICE_ROCM, HURRAY_SYNC_CONSUMER_STREAM);
  HurraySyncConsumerStreamPayload good = {STREAM, HURRAY_DEVICE_ROCM};
  assert_int_equal(hurray_buffer_handoff_consumer_stream(b, &good), HURRAY_OK);
  HurraySyncConsumerStreamPayload p = good;
  p.consumer_stream = NULL;
  assert_int_equal(hurray_buffer_handoff_consumer_stream(b, &p), HURRAY_ERR_SYNC_MODE_MISMATCH);
  p = good;
  p.consumer_stream_device_tag = HURRAY_DEVICE_CUDA;
  assert_int_equal(hurray_buffer_handoff_consumer_stream(b, &p), HURRAY_ERR_SYNC_MODE_MISMATCH);
  HurraySyncEventPayload ep = {EVENT, HURRAY_DEVICE_ROCM, event_release, NULL};
  assert_int_equal(hurray_buffer_handoff_event(b, &ep), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_producer_synced(b), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_handoff_consumer_stream(NULL, &good), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_handoff_consumer_stream(b, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
}

static void test_private_device(void **state) {
  (void)state;
  HurrayBuffer *b = make(0xF2, HURRAY_SYNC_EVENT);
  HurraySyncEventPayload ep = {EVENT, 0xF2, event_release, NULL};
  assert_int_equal(hurray_buffer_handoff_event(b, &ep), HURRAY_OK);
  ep.sync_handle_device_tag = 0xF3;
  assert_int_equal(hurray_buffer_handoff_event(b, &ep), HURRAY_ERR_SYNC_MODE_MISMATCH);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
}

static void test_reserved_modes_never_reach_a_handoff(void **state) {
  (void)state;
  /* Reserved (0x03-0xFE) and invalid (0xFF) sync bytes are refused when the
   * buffer is made, with the status the handoff rules name. */
  for (unsigned m = 3; m <= 0xFF; m++) {
    HurrayBuffer *b = NULL;
    assert_int_equal(hurray_buffer_from_ptr(DEV_PTR, 64, 64, HURRAY_DEVICE_CUDA, (uint8_t)m, 0,
                                            NULL, NULL, &b),
                     HURRAY_ERR_INVALID_SYNC_MODE);
    assert_null(b);
  }
}

static void test_destroyed_buffer(void **state) {
  (void)state;
  if (!hurray_handle_checks_enabled()) skip();
  HurrayBuffer *b = make(HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  HurraySyncEventPayload ep = {EVENT, HURRAY_DEVICE_CUDA, event_release, NULL};
  HurraySyncConsumerStreamPayload sp = {STREAM, HURRAY_DEVICE_CUDA};
  assert_int_equal(hurray_buffer_handoff_event(b, &ep), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_handoff_consumer_stream(b, &sp), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_handoff_producer_synced(b), HURRAY_ERR_INTERNAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_producer_synced),
      cmocka_unit_test(test_event),
      cmocka_unit_test(test_consumer_stream),
      cmocka_unit_test(test_private_device),
      cmocka_unit_test(test_reserved_modes_never_reach_a_handoff),
      cmocka_unit_test(test_destroyed_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
