/*
 * hurray_dense_buffer_size (include/hurray/dtype.h): the element count and
 * byte size of a dense tensor, refused beyond HURRAY_MAX_ADDRESSABLE. The one
 * limit of a buffer sized from a shape (docs/internals/decisions.md, "One
 * limit for a buffer sized from a shape"); the Python package's creation
 * functions ask it before they allocate.
 */
#include "hurray/device.h"
#include "hurray/dtype.h"
#include "internal/common.h"

HurrayStatus hurray_dense_buffer_size(uint8_t type_tag, uint32_t rank, const uint64_t *shape,
                                      uint64_t *out_count, uint64_t *out_bytes,
                                      HurrayError *err) {
  if (out_bytes == NULL || (rank > 0 && shape == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        out_bytes == NULL ? "out_bytes" : "shape", "is NULL");
  const HurrayDtypeInfo *info = hurray_dtype_info(type_tag);
  if (info == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "type_tag",
                        "0x%02X names no element type (a private type's size is the extension "
                        "type section's)",
                        type_tag);
  if (rank > HURRAY_MAX_RANK)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "rank",
                        "%u is above the maximum rank %u", rank, HURRAY_MAX_RANK);
  char path[32];
  bool empty = false;
  for (uint32_t i = 0; i < rank; i++)
    if (shape[i] == HURRAY_DYNAMIC_DIM)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "shape[%u]", i),
                          "is dynamic (2^64 - 1); a buffer's size needs every extent");
  for (uint32_t i = 0; i < rank; i++) {
    if (shape[i] > HURRAY_MAX_ADDRESSABLE)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "shape[%u]", i),
                          "%llu, beyond the 2^63 - 1 elements one buffer can address",
                          (unsigned long long)shape[i]);
    empty = empty || shape[i] == 0;
  }
  uint64_t count = empty ? 0 : 1, bytes = 0;
  for (uint32_t i = 0; i < rank && !empty; i++)
    if (hurray__mul_overflow_u64(count, shape[i], &count))
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                          "the element count overflows 64 bits, beyond the 2^63 - 1 elements one "
                          "buffer can address");
  if (count > HURRAY_MAX_ADDRESSABLE)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "%llu elements, beyond the 2^63 - 1 one buffer can address",
                        (unsigned long long)count);
  if (hurray_buffer_size_bytes(type_tag, count, &bytes) != HURRAY_OK ||
      bytes > HURRAY_MAX_ADDRESSABLE)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "%llu elements of %s take more than the 2^63 - 1 bytes one buffer can "
                        "address",
                        (unsigned long long)count, info->name);
  if (out_count != NULL) *out_count = count;
  *out_bytes = bytes;
  return HURRAY_OK;
}
