/* Sync handoff cross-checks (include/hurray/buffer.h; upstream
 * docs/impl/c-ffi.md § Buffer Handoff Synchronisation). */
#include "ffi/buffer_internal.h"

/* The mode the buffer declares must be `want`. A reserved or invalid byte
 * cannot be stored in a buffer (construction rejects it); it is still
 * reported with its own status rather than as a mismatch. */
static HurrayStatus expect_mode(const HurrayBuffer *b, uint8_t want) {
  if (hurray_sync_mode_kind(b->sync_mode) != HURRAY_TAG_NAMED)
    return HURRAY_ERR_INVALID_SYNC_MODE;
  return b->sync_mode == want ? HURRAY_OK : HURRAY_ERR_SYNC_MODE_MISMATCH;
}

HurrayStatus hurray_buffer_handoff_producer_synced(const HurrayBuffer *buffer) {
  if (buffer == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  return expect_mode(buffer, HURRAY_SYNC_PRODUCER_SYNCED);
}

HurrayStatus hurray_buffer_handoff_event(const HurrayBuffer *buffer,
                                         const HurraySyncEventPayload *payload) {
  if (buffer == NULL || payload == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  HURRAY_TRY(expect_mode(buffer, HURRAY_SYNC_EVENT));
  if (payload->sync_handle == NULL || payload->event_release_fn == NULL ||
      payload->sync_handle_device_tag != buffer->device_tag)
    return HURRAY_ERR_SYNC_MODE_MISMATCH;
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_handoff_consumer_stream(
    const HurrayBuffer *buffer, const HurraySyncConsumerStreamPayload *payload) {
  if (buffer == NULL || payload == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  HURRAY_TRY(expect_mode(buffer, HURRAY_SYNC_CONSUMER_STREAM));
  if (payload->consumer_stream == NULL ||
      payload->consumer_stream_device_tag != buffer->device_tag)
    return HURRAY_ERR_SYNC_MODE_MISMATCH;
  return HURRAY_OK;
}
