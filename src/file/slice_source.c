/*
 * What a partial read starts from (file.h, hurray_file_find_descriptor and
 * hurray_file_slice_check): a name resolved to a stored tensor or a view
 * of a shared tensor, its descriptor alone, and whether hurray_file_read_slice
 * can read a selection of it, with the reason when it cannot.
 */
#include "hurray/quant.h"
#include "internal/file.h"

HurrayStatus hurray_file_find_descriptor(const HurrayFile *f, const char *name, size_t name_len,
                                         uint64_t *index, bool *is_view, HurrayDescriptor **out,
                                         HurrayError *err) {
  if (f == NULL || index == NULL || is_view == NULL || out == NULL)
    return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  *is_view = false;
  HurrayStatus rc = hurray_file_find(f, name, name_len, index);
  if (rc == HURRAY_OK) return hurray_file_descriptor(f, *index, out, err);
  if (rc != HURRAY_ERR_NOT_FOUND) return rc;
  /* a view of a shared tensor: the record checked whole first */
  uint64_t count = 0;
  HURRAY_TRY(hurray_file_view_count(f, &count, err));
  HURRAY_TRY(hurray_file_find_view(f, name, name_len, index, err));
  *is_view = true;
  return hurray_file_view_descriptor(f, *index, out, err);
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
