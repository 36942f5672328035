/*
 * What a tensor must be for DLPack to carry it (include/hurray/interop.h,
 * hurray_dlpack_export_check): one dense strided buffer of a DLPack element
 * type, producer-synced, every extent known. The Python package's __dlpack__
 * refuses the rest with these reasons.
 */
#include "hurray/interop.h"

#include "hurray/device.h"
#include "hurray/layout.h"
#include "internal/common.h"

HurrayStatus hurray_dlpack_export_check(const HurrayDescriptorFields *f, uint32_t minor,
                                        HurrayDLDataType *out, HurrayError *err) {
  if (f == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, f == NULL ? "f" : "out",
                        "is NULL");
  uint8_t lt = f->layout.tag;
  if (lt != HURRAY_LAYOUT_ROW_MAJOR && lt != HURRAY_LAYOUT_COL_MAJOR &&
      lt != HURRAY_LAYOUT_STRIDED) {
    const char *name = hurray_layout_name(lt);
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout.tag",
                        "a %s tensor has no DLPack representation (DLPack describes one dense "
                        "strided buffer)",
                        name != NULL ? name : "extension");
  }
  if (f->quantization != NULL)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "quantization",
                        "a quantized tensor has no DLPack element type");
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    if (f->buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      const char *n = hurray_sync_mode_name(f->buffers[i].sync_mode);
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "sync_mode",
                          "buffer %u is in sync mode '%s'; DLPack can only hand out "
                          "producer-synced buffers",
                          (unsigned)i, n != NULL ? n : "unknown");
    }
  }
  for (uint32_t i = 0; i < f->rank; i++)
    if (f->shape[i] == HURRAY_DYNAMIC_DIM)
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "shape",
                          "shape[%u] is dynamic (None)", (unsigned)i);
  HURRAY_TRY(hurray_dlpack_dtype_encode(f->type_tag, minor, out, err));
  if (f->type_tag == HURRAY_DTYPE_BOOL && lt == HURRAY_LAYOUT_STRIDED)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        "a strided bool tensor cannot be exported");
  return HURRAY_OK;
}
