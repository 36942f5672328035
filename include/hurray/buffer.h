/*
 * hurray/buffer.h - buffers, sync handoff payloads and buffer lists of the
 * stable C ABI (upstream docs/impl/c-ffi.md; C ABI version 4).
 *
 * A HurrayBuffer pairs a data pointer with the five declarations of a wire
 * buffer handle (byte size, alignment, device, sync mode, memory class) and
 * with whatever must run when the bytes are no longer needed. A
 * HurrayBufferList carries every buffer of one tensor, in descriptor
 * buffer-table order: element i of the list is buffer index i.
 *
 * Ownership words used in this header, for every pointer:
 *   borrowed - the callee reads it during the call (argument) or the caller
 *              may read it while its owner lives (result); nobody frees it here.
 *   owned    - the receiver must release it, with the function named.
 *   moved    - ownership passes from the caller to the callee on success only.
 *
 * Reference counting: a buffer starts with one reference, owned by whoever
 * created it. hurray_buffer_retain adds one, hurray_buffer_destroy drops one,
 * hurray_buffer_list_push moves one into a list. The release callback (or the
 * free of owned memory) runs exactly once, when the last reference goes. The
 * count is atomic, so references to one buffer may be dropped on different
 * threads; every other use of a handle is single-thread-at-a-time.
 *
 * Every function returns HURRAY_OK or a negative status. A required pointer
 * that is NULL gives HURRAY_ERR_NULL_POINTER and nothing is written. When
 * hurray_handle_checks_enabled() is true (builds without NDEBUG), a handle
 * that was already destroyed is reported as HURRAY_ERR_INTERNAL instead of
 * being used (see docs/internals/c-abi.md for how, and for the limits of the check).
 */
#ifndef HURRAY_BUFFER_H
#define HURRAY_BUFFER_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/device.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- opaque handles ------------------------------------------------------ */

/* A buffer: data pointer + handle declarations + release. Opaque. */
typedef struct HurrayBuffer HurrayBuffer;
/* An ordered list owning buffers, one per buffer-table slot. Opaque. */
typedef struct HurrayBufferList HurrayBufferList;
/* Streaming reader and writer handles of the reference C ABI. Declared for
 * source compatibility with the reference hurray.h; opaque. */
typedef struct HurrayReader HurrayReader;
typedef struct HurrayWriter HurrayWriter;

/* ---- callbacks ------------------------------------------------------------ */

/*
 * Release callback of a buffer: called exactly once, when the last reference
 * to the buffer goes, as release(data, release_context) with the two values
 * given at construction. It must not call back into libhurray.
 */
typedef void (*HurrayReleaseCallback)(void *data, void *release_context);

/*
 * Release callback of a device event (Event sync mode): the consumer calls it
 * once, as event_release_fn(sync_handle, event_release_context), after it has
 * issued its stream waits. It must be callable from any thread and must not
 * call back into libhurray.
 */
typedef void (*HurrayEventReleaseFn)(void *sync_handle, void *event_release_context);

/* ---- handoff payloads (plain data, field order and types are the ABI) ----- */

/* What a consumer supplies for a buffer in HURRAY_SYNC_CONSUMER_STREAM mode. */
typedef struct HurraySyncConsumerStreamPayload {
  void *consumer_stream;              /* borrowed; non-NULL stream (cudaStream_t, ...) */
  uint8_t consumer_stream_device_tag; /* must equal the buffer's device tag */
} HurraySyncConsumerStreamPayload;

/* What travels with a buffer in HURRAY_SYNC_EVENT mode. */
typedef struct HurraySyncEventPayload {
  void *sync_handle;                   /* borrowed; non-NULL recorded event (cudaEvent_t, ...) */
  uint8_t sync_handle_device_tag;      /* must equal the buffer's device tag */
  HurrayEventReleaseFn event_release_fn; /* must be non-NULL */
  void *event_release_context;         /* borrowed; passed to event_release_fn; may be NULL */
} HurraySyncEventPayload;

/* hurray_buffer_new flag: fill the new bytes with zeros. */
#define HURRAY_BUFFER_ZEROED 0x1u

/* ---- construction --------------------------------------------------------- */

/*
 * Wraps memory that someone else owns (the reference C ABI signature).
 *
 *   data            borrowed until the release callback runs; may be NULL only
 *                   when byte_size is 0.
 *   alignment       power of two, at least HURRAY_MIN_BUFFER_ALIGNMENT (64)
 *                   when byte_size > 0; any power of two for an empty buffer.
 *                   The address must honour it (checked for devices whose
 *                   base address is an address: CPU, CUDA, ROCm, Hexagon,
 *                   Level Zero; Metal, Vulkan, WebGPU, OpenCL and private
 *                   devices may pass opaque resource handles and are not
 *                   checked).
 *   device_tag, sync_mode, memory_class
 *                   wire bytes (device.h): named or private device; one of
 *                   the three sync modes (CPU buffers must be producer-synced);
 *                   a memory class valid for the device
 *                   (hurray_device_memory_class_valid).
 *   release         may be NULL: then the caller frees data after the last
 *                   reference is gone.
 *   release_context borrowed; passed to release; may be NULL.
 *   out_handle      receives an owned buffer (drop with hurray_buffer_destroy,
 *                   or move into a list); NULL on failure.
 *
 * On failure nothing is retained and release is not called: data stays the
 * caller's. Statuses: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_INVALID_TYPE (device
 * tag, memory class, or a pair outside the validity table);
 * HURRAY_ERR_INVALID_SYNC_MODE (sync byte, or a CPU buffer not
 * producer-synced); HURRAY_ERR_INVALID_LAYOUT (alignment value);
 * HURRAY_ERR_MISALIGNED (address below its declared alignment);
 * HURRAY_ERR_INVALID_ARGUMENT (data + byte_size wraps the address space);
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_from_ptr(void *data, uint64_t byte_size,
                                                                uint32_t alignment,
                                                                uint8_t device_tag,
                                                                uint8_t sync_mode,
                                                                uint8_t memory_class,
                                                                HurrayReleaseCallback release,
                                                                void *release_context,
                                                                HurrayBuffer **out_handle);

/* hurray_buffer_from_ptr with an optional error detail (err may be NULL):
 * field path ("alignment", "device_tag", ...) and reason. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_from_ptr_ex(
    void *data, uint64_t byte_size, uint32_t alignment, uint8_t device_tag, uint8_t sync_mode,
    uint8_t memory_class, HurrayReleaseCallback release, void *release_context,
    HurrayBuffer **out_handle, HurrayError *err);

/*
 * Allocates byte_size bytes of CPU memory at `alignment` through the
 * allocator hook (alloc.h) and wraps them: device CPU, producer-synced,
 * standard memory class. The bytes are zeroed when flags has
 * HURRAY_BUFFER_ZEROED, left unspecified otherwise. byte_size 0 allocates
 * nothing and gives a NULL data pointer (any power-of-two alignment).
 *
 *   out_handle  receives an owned buffer (hurray_buffer_destroy); the memory
 *               is freed when its last reference goes. NULL on failure.
 *   err         optional detail (may be NULL).
 *
 * Statuses: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_LAYOUT (alignment),
 * HURRAY_ERR_INVALID_ARGUMENT (unknown flag bits), HURRAY_ERR_OUT_OF_MEMORY,
 * HURRAY_ERR_MISALIGNED (the installed allocator broke its alignment promise).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_new(uint64_t byte_size, uint32_t alignment,
                                                           uint32_t flags,
                                                           HurrayBuffer **out_handle,
                                                           HurrayError *err);

/* ---- references ----------------------------------------------------------- */

/*
 * Adds one reference to `buffer` (borrowed). The caller then owns that
 * reference and drops it with hurray_buffer_destroy. Retaining a buffer
 * borrowed from a list is how to keep it alive past the list.
 * HURRAY_ERR_INVALID_STATE when the count would overflow (2^32 - 1).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_retain(HurrayBuffer *buffer);

/*
 * Drops one reference to `buffer` (moved: the caller's reference ends here).
 * When it was the last, the release callback runs (or owned memory is freed)
 * and the handle is freed.
 *
 * HURRAY_ERR_INVALID_STATE, and nothing changes, when every remaining
 * reference belongs to a list: the caller holds a borrowed handle (from
 * hurray_buffer_list_get) and must not destroy it. HURRAY_ERR_INTERNAL for a
 * handle already destroyed, when handle checks are enabled.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_destroy(HurrayBuffer *buffer);

/* ---- getters ---------------------------------------------------------------
 * In each, `buffer` is borrowed and the out pointer (caller storage, borrowed)
 * receives the value given at construction; nothing is written on failure. */

/* The data pointer: borrowed from the buffer's owner, valid while the buffer
 * lives; NULL only for an empty buffer. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_data_ptr(const HurrayBuffer *buffer,
                                                                void **out_data);
/* The declared byte size (0 = empty buffer). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_byte_size(
    const HurrayBuffer *buffer, uint64_t *out_byte_size);
/* The declared alignment in bytes (a power of two). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_alignment(
    const HurrayBuffer *buffer, uint32_t *out_alignment);
/* The device tag wire byte (HURRAY_DEVICE_* or private). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_device_tag(
    const HurrayBuffer *buffer, uint8_t *out_device_tag);
/* The sync mode wire byte (HURRAY_SYNC_*). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_sync_mode(
    const HurrayBuffer *buffer, uint8_t *out_sync_mode);
/* The memory class wire byte (HURRAY_MEMORY_* or private). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_memory_class(
    const HurrayBuffer *buffer, uint8_t *out_memory_class);

/* All five declarations at once, as the 16-byte wire handle of a descriptor's
 * buffer table (reserved = 0). `out` is borrowed (caller storage). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_wire_handle(
    const HurrayBuffer *buffer, HurrayBufferHandle *out);

/* ---- sync handoff cross-checks (buffer and payload borrowed) -------------- */

/*
 * Asserts a producer-synced handoff: OK when the buffer declares
 * HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_ERR_SYNC_MODE_MISMATCH otherwise.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_handoff_producer_synced(
    const HurrayBuffer *buffer);

/*
 * Checks an Event handoff: the buffer declares HURRAY_SYNC_EVENT, the payload
 * has a non-NULL sync_handle and event_release_fn, and sync_handle_device_tag
 * equals the buffer's device tag. HURRAY_ERR_SYNC_MODE_MISMATCH otherwise.
 * Nothing is called: releasing the event stays the consumer's duty.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_handoff_event(
    const HurrayBuffer *buffer, const HurraySyncEventPayload *payload);

/*
 * Checks a ConsumerStream handoff: the buffer declares
 * HURRAY_SYNC_CONSUMER_STREAM, consumer_stream is non-NULL and
 * consumer_stream_device_tag equals the buffer's device tag.
 * HURRAY_ERR_SYNC_MODE_MISMATCH otherwise.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_handoff_consumer_stream(
    const HurrayBuffer *buffer, const HurraySyncConsumerStreamPayload *payload);

/* ---- buffer lists --------------------------------------------------------- */

/*
 * Creates an empty list. `capacity` is a hint (slots reserved up front,
 * capped at HURRAY_MAX_BUFFERS + 1); the list grows as needed.
 * out_list receives an owned list (hurray_buffer_list_destroy); NULL on
 * failure (HURRAY_ERR_OUT_OF_MEMORY).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_list_new(uint64_t capacity,
                                                                HurrayBufferList **out_list);

/*
 * Appends `buffer` at index len, moving one of the caller's references into
 * the list (moved on success only: on failure the caller still owns it).
 * `list` is borrowed. Push in descriptor buffer-table order.
 * HURRAY_ERR_INVALID_STATE when the caller holds no reference of its own
 * (the buffer was borrowed from a list, or is already pushed; retain first);
 * HURRAY_ERR_OUT_OF_MEMORY when the list cannot grow.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_list_push(
    HurrayBufferList *list, HurrayBuffer *buffer);

/* Number of buffers in `list` (borrowed). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_list_len(const HurrayBufferList *list,
                                                                uint64_t *out_len);

/*
 * Borrows the buffer at `index`: *out_buffer stays valid until the list is
 * destroyed (later pushes do not move it) and must not be passed to
 * hurray_buffer_destroy (retain it first to keep it longer).
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS, and *out_buffer = NULL, when index >= len.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_list_get(const HurrayBufferList *list,
                                                                uint64_t index,
                                                                HurrayBuffer **out_buffer);

/*
 * Destroys *list and drops the reference it owns on each of its buffers,
 * exactly once each, nulling every slot before dropping it; then writes NULL
 * to *list. `list` is the caller's variable (borrowed); the list it points to
 * is moved. *list == NULL is a no-op returning HURRAY_OK; list == NULL is
 * HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_list_destroy(HurrayBufferList **list);

/* ---- debug checks --------------------------------------------------------- */

/* True when this build of libhurray detects destroyed handles used again
 * (builds without NDEBUG, or with HURRAY_HANDLE_CHECKS=1). */
HURRAY_API bool hurray_handle_checks_enabled(void);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_BUFFER_H */
