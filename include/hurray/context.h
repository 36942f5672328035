/*
 * hurray/context.h - the tensor context of a native-protocol capsule
 * (upstream docs/impl/c-ffi.md § Tensor Context; C ABI version 4).
 *
 * A capsule carries a HurrayBufferList (the bytes) and a HurrayTensorContext:
 * the encoded tensor descriptor that says what the bytes are, the C ABI
 * version of the producing build, and an opaque owner kept alive for the
 * capsule's lifetime. A consumer calls hurray_tensor_context_abi_version
 * first, compares it with its own HURRAY_C_ABI_VERSION, and only then uses
 * the other accessors.
 *
 * Ownership words: borrowed, owned, moved, as in buffer.h.
 */
#ifndef HURRAY_CONTEXT_H
#define HURRAY_CONTEXT_H

#include <stdint.h>

#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Descriptor bytes + ABI version + owner. Opaque. */
typedef struct HurrayTensorContext HurrayTensorContext;

/* Called exactly once, as owner_release(owner), by
 * hurray_tensor_context_destroy. It must not call back into libhurray. */
typedef void (*HurrayOwnerReleaseFn)(void *owner);

/*
 * Creates a context holding its own copy of the encoded descriptor.
 *
 *   abi_version       the producing build's HURRAY_C_ABI_VERSION (stored, not
 *                     interpreted).
 *   descriptor_bytes  borrowed for the call (copied); may be NULL only when
 *                     descriptor_len is 0.
 *   owner             moved on success: kept, never read, handed to
 *                     owner_release at destroy. On failure it stays the
 *                     caller's and owner_release is not called.
 *   owner_release     may be NULL.
 *   out_ctx           receives an owned context
 *                     (hurray_tensor_context_destroy); NULL on failure.
 *
 * Statuses: HURRAY_ERR_NULL_POINTER (out_ctx, or descriptor_bytes with a
 * non-zero length), HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_tensor_context_new(
    uint32_t abi_version, const uint8_t *descriptor_bytes, uint64_t descriptor_len, void *owner,
    HurrayOwnerReleaseFn owner_release, HurrayTensorContext **out_ctx);

/* The producing build's ABI version. Call this first. ctx is borrowed. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_tensor_context_abi_version(
    const HurrayTensorContext *ctx, uint32_t *out);

/*
 * Borrows the encoded descriptor: *out_bytes is owned by ctx and valid until
 * the context is destroyed (copy it to keep it longer). An empty descriptor
 * gives *out_bytes = NULL and *out_len = 0. ctx is borrowed.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_tensor_context_descriptor(
    const HurrayTensorContext *ctx, const uint8_t **out_bytes, uint64_t *out_len);

/*
 * Destroys *ctx, writes NULL to *ctx, then calls owner_release(owner) once
 * if it was given. `ctx` is the caller's variable (borrowed); the context it
 * points to is moved. *ctx == NULL is a no-op returning HURRAY_OK;
 * ctx == NULL is HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_tensor_context_destroy(HurrayTensorContext **ctx);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_CONTEXT_H */
