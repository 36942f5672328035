/* HurrayTensorContext (include/hurray/context.h; upstream docs/impl/c-ffi.md
 * § Tensor Context). */
#include "internal/handles.h"
#include "hurray/context.h"

struct HurrayTensorContext {
  uint64_t magic; /* HURRAY__MAGIC_CONTEXT while live; first field */
  uint32_t abi_version;
  void *owner;
  HurrayOwnerReleaseFn owner_release;
  size_t len;
  uint8_t bytes[]; /* the copied descriptor, len bytes */
};

HurrayStatus hurray_tensor_context_new(uint32_t abi_version, const uint8_t *descriptor_bytes,
                                       uint64_t descriptor_len, void *owner,
                                       HurrayOwnerReleaseFn owner_release,
                                       HurrayTensorContext **out_ctx) {
  if (out_ctx == NULL) return HURRAY_ERR_NULL_POINTER;
  if (descriptor_bytes == NULL && descriptor_len != 0) return HURRAY_ERR_NULL_POINTER;
  *out_ctx = NULL;
  if (descriptor_len > (uint64_t)(SIZE_MAX - sizeof(HurrayTensorContext)))
    return HURRAY_ERR_OUT_OF_MEMORY;
  size_t len = (size_t)descriptor_len;
  HurrayTensorContext *c = hurray__malloc(sizeof *c + len);
  if (c == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  c->magic = HURRAY__MAGIC_CONTEXT;
  c->abi_version = abi_version;
  c->owner = owner;
  c->owner_release = owner_release;
  c->len = len;
  if (len != 0) memcpy(c->bytes, descriptor_bytes, len);
  hurray__handle_born(c);
  *out_ctx = c;
  return HURRAY_OK;
}

HurrayStatus hurray_tensor_context_abi_version(const HurrayTensorContext *ctx, uint32_t *out) {
  if (ctx == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(ctx, HURRAY__MAGIC_CONTEXT));
  *out = ctx->abi_version;
  return HURRAY_OK;
}

HurrayStatus hurray_tensor_context_descriptor(const HurrayTensorContext *ctx,
                                              const uint8_t **out_bytes, uint64_t *out_len) {
  if (ctx == NULL || out_bytes == NULL || out_len == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(ctx, HURRAY__MAGIC_CONTEXT));
  /* Empty: NULL rather than a pointer one past nothing. */
  *out_bytes = ctx->len != 0 ? ctx->bytes : NULL;
  *out_len = (uint64_t)ctx->len;
  return HURRAY_OK;
}

HurrayStatus hurray_tensor_context_destroy(HurrayTensorContext **ctx) {
  if (ctx == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayTensorContext *c = *ctx;
  if (c == NULL) return HURRAY_OK;
  HURRAY_TRY(hurray__handle_check(c, HURRAY__MAGIC_CONTEXT));
  void *owner = c->owner;
  HurrayOwnerReleaseFn release = c->owner_release;
  /* Everything is gone before the callback runs, so a callback that reaches
   * the context (which the contract forbids) finds it destroyed. */
  *ctx = NULL;
  hurray__handle_bury(c, &c->magic);
  hurray__free(c);
  if (release != NULL) release(owner);
  return HURRAY_OK;
}
