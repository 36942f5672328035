/*
 * hurray_descriptor_fields_dense (include/hurray/descriptor.h): the fields of
 * a one-buffer row- or column-major tensor of a named type, checked with
 * hurray_descriptor_from_fields's verdict, without building anything.
 *
 * The common case is decided by one expression, each term of which is a rule
 * the full check applies to such fields; it only ever says "valid" when the
 * full check would. Whatever it does not accept goes through the full check
 * itself (hurray__descriptor_check, the one from_fields runs), so the verdict,
 * the status and the error are from_fields's by construction. The error loses
 * its byte offset: it would point into an encoding the caller never made.
 */
#include "descriptor/descriptor_impl.h"

static bool dense_valid(uint8_t type_tag, uint32_t rank, const uint64_t *shape,
                        uint8_t layout_tag, uint64_t buffer_bytes, uint32_t alignment) {
  if (rank > HURRAY_MAX_RANK || (rank > 0 && shape == NULL)) return false;
  if (hurray_dtype_tag_kind(type_tag) != HURRAY_TAG_NAMED || hurray_dtype_info(type_tag) == NULL)
    return false;
  if (layout_tag != HURRAY_LAYOUT_ROW_MAJOR && (layout_tag != HURRAY_LAYOUT_COL_MAJOR || rank == 0))
    return false;
  if (!hurray__is_pow2_u64(alignment) ||
      (buffer_bytes != 0 && alignment < HURRAY_MIN_BUFFER_ALIGNMENT))
    return false;
  uint64_t count = 1, need = 0;
  for (uint32_t k = 0; k < rank; k++)
    if (shape[k] == HURRAY_DYNAMIC_DIM || hurray__mul_overflow_u64(count, shape[k], &count))
      return false;
  /* Offsets and byte sizes below 2^63, as the layout rules require. */
  return count <= (uint64_t)INT64_MAX &&
         hurray_buffer_size_bytes(type_tag, count, &need) == HURRAY_OK &&
         need <= (uint64_t)INT64_MAX && buffer_bytes >= need;
}

HurrayStatus hurray_descriptor_fields_dense(uint8_t type_tag, uint32_t rank,
                                            const uint64_t *shape, uint8_t layout_tag,
                                            uint64_t buffer_bytes, uint32_t alignment,
                                            HurrayBufferHandle *handle,
                                            HurrayDescriptorFields *out, HurrayError *err) {
  if (handle == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        handle == NULL ? "handle" : "out", "is NULL");
  if (layout_tag != HURRAY_LAYOUT_ROW_MAJOR && layout_tag != HURRAY_LAYOUT_COL_MAJOR)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout_tag",
                        "0x%02X: a dense descriptor is row-major (0x01) or column-major (0x02)",
                        layout_tag);
  handle->byte_size = buffer_bytes;
  handle->alignment = alignment;
  handle->device_tag = HURRAY_DEVICE_CPU;
  handle->sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  handle->memory_class = HURRAY_MEMORY_STANDARD;
  handle->reserved = 0;
  /* Every field written, as hurray_descriptor_fields reports them after from_fields. */
  out->version_major = HURRAY_DESCRIPTOR_VERSION_MAJOR;
  out->version_minor = 0;
  out->flags = 0;
  out->type_tag = type_tag;
  out->rank = rank;
  out->shape = rank > 0 ? shape : NULL;
  out->byte_offset = 0;
  memset(&out->layout, 0, sizeof out->layout);
  out->layout.tag = layout_tag;
  out->buffer_count = 1;
  out->buffers = handle;
  out->quantization = NULL;
  out->shard = NULL;
  out->statistics = NULL;
  out->extension_type = NULL;
  out->composite_member = NULL;
  out->trailing = NULL;
  out->trailing_len = 0;
  if (HURRAY_LIKELY(dense_valid(type_tag, rank, shape, layout_tag, buffer_bytes, alignment)))
    return HURRAY_OK;

  /* The rest: what from_fields says (also "valid", at the edges the expression leaves). */
  HurrayError local;
  HurrayError *e = err != NULL ? err : &local;
  HurrayStatus st = hurray__descriptor_check(out, HURRAY_DECODE_STRICT, NULL, e);
  if (st == HURRAY_OK || err == NULL) return st;
  err->offset = HURRAY_NO_OFFSET;
  hurray__error_compose(err);
  return st;
}
