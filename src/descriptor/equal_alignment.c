/*
 * Descriptor equality but for the buffers' alignment
 * (hurray_descriptor_equal_except_alignment, include/hurray/descriptor.h):
 * alignment is measured from wherever the bytes sit, so two placements of the
 * same tensor are the same value.
 */
#include "descriptor_impl.h"

/* What any placement satisfies: 1 when empty, else the 64-byte floor. */
static void normalise(const HurrayDescriptorFields *f, HurrayBufferHandle *h,
                      HurrayDescriptorFields *out) {
  *out = *f;
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    h[i] = f->buffers[i];
    h[i].alignment = h[i].byte_size == 0 ? 1u : HURRAY_MIN_BUFFER_ALIGNMENT;
  }
  out->buffers = h;
}

bool hurray_descriptor_equal_except_alignment(const HurrayDescriptor *a,
                                              const HurrayDescriptor *b) {
  if (hurray_descriptor_equal(a, b)) return true;
  if (!hurray__desc_live(a) || !hurray__desc_live(b) || a->encoded_len != b->encoded_len ||
      a->f.buffer_count != b->f.buffer_count)
    return false;
  HurrayBufferHandle ha[HURRAY_MAX_BUFFERS], hb[HURRAY_MAX_BUFFERS];
  HurrayDescriptorFields x, y;
  normalise(&a->f, ha, &x);
  normalise(&b->f, hb, &y);
  return hurray__fields_equal(&x, &y);
}
