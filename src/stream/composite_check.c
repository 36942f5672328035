/*
 * Drives the composite validator (include/hurray/composite.h) one composite
 * level at a time for the stream reader and writer, and places its verdicts
 * in the stream: the validator knows descriptors, not where they were read.
 */
#include <stdio.h>

#include "hurray/composite.h"
#include "stream/stream_internal.h"

struct HurrayStreamCompositeCheck {
  HurrayCompositeValidator *v;
  uint64_t offset; /* stream offset of the head, or HURRAY_NO_OFFSET */
  char where[96];  /* field prefix of this level */
};

/* Rewrites a validator error: field prefixed with `where`, offset set to the
 * stream offset of what failed, message led by the head's position. */
static HurrayStatus place(const HurrayStreamCompositeCheck *c, HurrayStatus st,
                          const HurrayError *inner, uint64_t offset, HurrayError *err) {
  if (err == NULL) return st;
  char field[192];
  snprintf(field, sizeof field, "%s%s", c->where, inner->field);
  const char *msg = inner->message[0] != '\0' ? inner->message : hurray_status_message(st);
  if (c->offset != HURRAY_NO_OFFSET)
    return hurray__fail(err, st, offset, field, "composite at stream byte %llu: %s",
                        (unsigned long long)c->offset, msg);
  return hurray__fail(err, st, HURRAY_NO_OFFSET, field, "%s", msg);
}

HurrayStatus hurray__stream_composite_begin(const HurrayDescriptor *head, uint32_t depth,
                                            uint32_t options, uint64_t offset, const char *where,
                                            HurrayStreamCompositeCheck **out, HurrayError *err) {
  *out = NULL;
  HurrayStreamCompositeCheck *c = hurray__calloc(1, sizeof *c);
  if (c == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, offset, "composite",
                        "cannot allocate the composite validator");
  c->offset = offset;
  snprintf(c->where, sizeof c->where, "%s", where != NULL ? where : "");
  HurrayDescriptorFields f;
  HurrayError inner;
  hurray_error_clear(&inner);
  HurrayStatus st = hurray_descriptor_fields(head, &f);
  if (st == HURRAY_OK) st = hurray_composite_validator_new(&f, depth, options, &c->v, &inner);
  if (st != HURRAY_OK) {
    place(c, st, &inner, offset, err);
    hurray__free(c);
    return st;
  }
  *out = c;
  return HURRAY_OK;
}

HurrayStatus hurray__stream_composite_member(HurrayStreamCompositeCheck *c,
                                             const HurrayDescriptor *member, uint64_t offset,
                                             HurrayError *err) {
  HurrayDescriptorFields f;
  HurrayError inner;
  hurray_error_clear(&inner);
  HurrayStatus st = hurray_descriptor_fields(member, &f);
  if (st == HURRAY_OK) st = hurray_composite_validator_push(c->v, &f, &inner);
  if (st != HURRAY_OK) return place(c, st, &inner, offset, err);
  return HURRAY_OK;
}

HurrayStatus hurray__stream_composite_finish(HurrayStreamCompositeCheck *c, HurrayError *err) {
  HurrayError inner;
  hurray_error_clear(&inner);
  HurrayStatus st = hurray_composite_validator_finish(c->v, &inner);
  if (st != HURRAY_OK) return place(c, st, &inner, c->offset, err);
  return HURRAY_OK;
}

void hurray__stream_composite_free(HurrayStreamCompositeCheck *c) {
  if (c == NULL) return;
  hurray_composite_validator_destroy(&c->v);
  hurray__free(c);
}
