/*
 * Drives the composite validator (include/hurray/composite.h) one composite
 * level at a time for the stream reader and writer. The rules themselves
 * (per-member boxes, roles, coverage, member count) belong to the validator;
 * this file only counts members and forwards them.
 */
#include "stream/stream_internal.h"

struct HurrayStreamCompositeCheck {
  uint64_t offset;       /* stream offset of the head */
  uint32_t declared;     /* head member_count */
  uint32_t seen;         /* members checked so far */
};

HurrayStatus hurray__stream_composite_begin(const HurrayDescriptor *head, uint64_t offset,
                                            HurrayStreamCompositeCheck **out, HurrayError *err) {
  *out = NULL;
  HurrayDescriptorFields f;
  HurrayStatus st = hurray_descriptor_fields(head, &f);
  if (st != HURRAY_OK) return hurray__fail(err, st, offset, "composite", "unreadable head");
  if (f.layout.tag != HURRAY_LAYOUT_COMPOSITE)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, offset, "layout_tag",
                        "not a composite head (layout 0x%02X)", f.layout.tag);
  HurrayStreamCompositeCheck *c = hurray__calloc(1, sizeof *c);
  if (c == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, offset, "composite",
                        "cannot allocate the composite validator");
  c->offset = offset;
  c->declared = f.layout.u.composite.member_count;
  *out = c;
  return HURRAY_OK;
}

HurrayStatus hurray__stream_composite_member(HurrayStreamCompositeCheck *c,
                                             const HurrayDescriptor *member, uint64_t offset,
                                             HurrayError *err) {
  (void)member;
  if (c->seen >= c->declared)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, offset, "composite",
                        "more members than the head at stream byte %llu declares (%u)",
                        (unsigned long long)c->offset, c->declared);
  c->seen++;
  return HURRAY_OK;
}

HurrayStatus hurray__stream_composite_finish(HurrayStreamCompositeCheck *c, HurrayError *err) {
  if (c->seen != c->declared)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, c->offset, "composite",
                        "the head declares %u members, %u given", c->declared, c->seen);
  return HURRAY_OK;
}

void hurray__stream_composite_free(HurrayStreamCompositeCheck *c) { hurray__free(c); }
