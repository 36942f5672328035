/*
 * Relay semantics for a reader (include/hurray/descriptor.h, "relay
 * semantics"): which decode options a descriptor carrying a private or
 * unknown layout, or an opaque quantization scheme, needs to be decoded
 * again, and a decode that accepts such a descriptor strictly asked for.
 * The Python package decodes every descriptor it reads back (pickles,
 * capsules, composites) with these. And the hint a sub-byte tensor whose
 * buffer holds one byte per element gives (hurray_descriptor_looks_unpacked).
 */
#include "hurray/convert.h"
#include "hurray/layout.h"
#include "hurray/quant.h"
#include "hurray/values.h"

#include "descriptor_impl.h"

uint32_t hurray_layout_decode_options(uint8_t layout_tag) {
  return hurray_layout_tag_kind(layout_tag) == HURRAY_TAG_NAMED ? HURRAY_DECODE_STRICT
                                                                 : HURRAY_DECODE_PERMISSIVE;
}

uint32_t hurray_descriptor_relay_options(const HurrayDescriptorFields *f) {
  uint32_t o = hurray_layout_decode_options(f->layout.tag);
  if (f->quantization != NULL) {
    HurrayTagKind k = hurray_quant_scheme_kind(f->quantization->scheme);
    if (k == HURRAY_TAG_RESERVED || k == HURRAY_TAG_UNASSIGNED) o |= HURRAY_DECODE_PERMISSIVE;
  }
  return o;
}

HurrayStatus hurray_descriptor_decode_relay(const uint8_t *bytes, uintptr_t len,
                                            bool permissive, HurrayDescriptor **out,
                                            uint32_t *options, HurrayError *err) {
  if (out == NULL || options == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  uint32_t opt = permissive ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT;
  HurrayStatus rc = hurray_descriptor_decode_ex(bytes, len, opt, out, err);
  if (rc != HURRAY_OK && !permissive) {
    /* what a writer builds with relay semantics comes back the same way */
    HurrayDescriptor *d = NULL;
    if (hurray_descriptor_decode_ex(bytes, len, HURRAY_DECODE_PERMISSIVE, &d, NULL) == HURRAY_OK) {
      HurrayDescriptorFields f;
      if (hurray_descriptor_fields(d, &f) == HURRAY_OK &&
          hurray_descriptor_relay_options(&f) == HURRAY_DECODE_PERMISSIVE) {
        hurray_error_clear(err);
        *out = d;
        *options = HURRAY_DECODE_PERMISSIVE;
        return HURRAY_OK;
      }
      (void)!hurray_descriptor_destroy(d);
    }
  }
  if (rc == HURRAY_OK) *options = opt;
  return rc;
}

bool hurray_descriptor_looks_unpacked(const HurrayDescriptorFields *f, uint64_t *count,
                                      uint64_t *packed) {
  const HurrayDtypeInfo *info = f != NULL ? hurray_dtype_info(f->type_tag) : NULL;
  if (info == NULL || info->bit_width >= 8 || f->buffer_count == 0 || f->buffers == NULL ||
      (f->layout.tag != HURRAY_LAYOUT_ROW_MAJOR && f->layout.tag != HURRAY_LAYOUT_COL_MAJOR))
    return false;
  uint64_t n = 0, p = 0, have = f->buffers[0].byte_size;
  bool known = f->quantization != NULL ? hurray_quant_storage_count(f, &n) == HURRAY_OK
                                       : hurray_shape_element_count(f->rank, f->shape, &n);
  if (!known || hurray_buffer_size_bytes(f->type_tag, n, &p) != HURRAY_OK ||
      have < f->byte_offset || have - f->byte_offset != n || p >= n)
    return false;
  if (count != NULL) *count = n;
  if (packed != NULL) *packed = p;
  return true;
}
