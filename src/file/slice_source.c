/*
 * What a partial read starts from (file.h, hurray_file_find_descriptor and
 * hurray_file_slice_check): a name resolved to a stored tensor or a view
 * of a shared tensor, its descriptor alone, and whether hurray_file_read_slice
 * can read a selection of it, with the reason when it cannot.
 */
#include "hurray/quant.h"
#include "internal/file.h"

HurrayStatus hurray_file_find_name(const HurrayFile *f, const char *name, size_t name_len,
                                   uint64_t *index, bool *is_view, HurrayError *err) {
  if (f == NULL || index == NULL || is_view == NULL) return HURRAY_ERR_NULL_POINTER;
  *is_view = false;
  HurrayStatus rc = hurray_file_find(f, name, name_len, index);
  if (rc != HURRAY_ERR_NOT_FOUND) return rc;
  /* a view of a shared tensor: the record checked whole first */
  uint64_t count = 0;
  HURRAY_TRY(hurray_file_view_count(f, &count, err));
  HURRAY_TRY(hurray_file_find_view(f, name, name_len, index, err));
  *is_view = true;
  return HURRAY_OK;
}

HurrayStatus hurray_file_find_descriptor(const HurrayFile *f, const char *name, size_t name_len,
                                         uint64_t *index, bool *is_view, HurrayDescriptor **out,
                                         HurrayError *err) {
  if (f == NULL || index == NULL || is_view == NULL || out == NULL)
    return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  HURRAY_TRY(hurray_file_find_name(f, name, name_len, index, is_view, err));
  return *is_view ? hurray_file_view_descriptor(f, *index, out, err)
                  : hurray_file_descriptor(f, *index, out, err);
}

HurrayStatus hurray_file_slice_check(const HurrayDescriptorFields *f, HurrayError *err) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
  uint8_t tag = f->layout.tag;
  if (tag == HURRAY_LAYOUT_COMPOSITE)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                        "is a composite: it has no bytes of its own; slice one of its members "
                        "(stored as '{name}.{index}')");
  if (hurray_layout_class(tag) != HURRAY_LAYOUT_CLASS_DENSE) {
    const char *n = hurray_layout_name(tag);
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                        "has the %s layout: only dense layouts (row_major, col_major, strided, "
                        "tiled, morton, hilbert) can be sliced",
                        n != NULL ? n : "extension");
  }
  const HurrayQuantization *q = f->quantization;
  if (q == NULL || q->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) return HURRAY_OK;
  const char *scheme = hurray_quant_scheme_name(q->scheme);
  if (scheme != NULL)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                        "is quantized with %s: its scales follow its channels or blocks, so only "
                        "per_tensor_affine tensors can be sliced",
                        scheme);
  return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                      "is quantized with scheme 0x%02X (not one this build knows): only "
                      "per_tensor_affine tensors can be sliced",
                      q->scheme);
}

HurrayStatus hurray_file_slice_plan(const HurrayDescriptorFields *f, bool is_view,
                                    const HurrayIndexItem *items, uint32_t count,
                                    HurraySliceRange *ranges, uint64_t *bytes,
                                    HurrayDescriptor **result, HurrayError *err) {
  if (result != NULL) *result = NULL;
  if (f == NULL || (items == NULL && count > 0) || (ranges == NULL && f->rank > 0) ||
      bytes == NULL || result == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "a required pointer is NULL");
  *bytes = 0;
  HURRAY_TRY(hurray_file_slice_check(f, err));
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  HURRAY_TRY(hurray_layout_basic_index(f->rank, f->shape, items, count, ranges, shape, &rank,
                                       err));
  uint64_t n = 0;
  HURRAY_TRY(hurray_layout_slice_shape(f, f->rank > 0 ? ranges : NULL, NULL, &n, err));
  /* Only repeated elements (a zero stride) make a view's selection larger
   * than the base it reads: a forged record can describe exabytes over a few
   * bytes, which the view itself (zero-copy) never allocates. */
  if (is_view && f->buffer_count > 0 && n > f->buffers[0].byte_size)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                        "the view repeats elements of its base (a zero stride): this selection "
                        "would copy %llu bytes out of a base of %llu; read the view whole (no "
                        "copy) and index that",
                        (unsigned long long)n, (unsigned long long)f->buffers[0].byte_size);
  /* The result: row-major in one buffer of its own, on the source's device
   * kind and memory class. A per-tensor scale and a private type's extension
   * section hold for every element and travel; shard and statistics describe
   * the whole tensor and do not. */
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = n;
  h.alignment = 64;
  h.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  h.device_tag = f->buffer_count > 0 ? f->buffers[0].device_tag : (uint8_t)HURRAY_DEVICE_CPU;
  h.memory_class =
      f->buffer_count > 0 ? f->buffers[0].memory_class : (uint8_t)HURRAY_MEMORY_STANDARD;
  HurrayDescriptorFields r;
  memset(&r, 0, sizeof r);
  r.version_major = 1;
  r.type_tag = f->type_tag;
  r.rank = rank;
  r.shape = shape;
  r.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  r.buffer_count = 1;
  r.buffers = &h;
  r.quantization = f->quantization;
  r.extension_type = f->extension_type;
  HURRAY_TRY(hurray_descriptor_from_fields(&r, HURRAY_DECODE_STRICT, result, err));
  *bytes = n;
  return HURRAY_OK;
}
