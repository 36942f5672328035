/*
 * Drives the composite validator (include/hurray/composite.h) one composite
 * level at a time for the stream reader and writer, and places its verdicts
 * in the stream: the validator knows descriptors, not where they were read.
 */
#include <stdio.h>
#include <string.h>

#include "hurray/composite.h"
#include "stream/stream_internal.h"

struct HurrayStreamCompositeCheck {
  HurrayCompositeValidator *v;
  uint64_t offset; /* stream offset of the head, or HURRAY_NO_OFFSET */
  char where[96];  /* field prefix of this level */
};

/* dst = a + b, truncated to size - 1 characters. */
static void join(char *dst, size_t size, const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > size - 1) la = size - 1;
  if (lb > size - 1 - la) lb = size - 1 - la;
  memmove(dst, a, la);
  memmove(dst + la, b, lb);
  dst[la + lb] = '\0';
}

/* Rewrites a validator error for the stream: field prefixed with `where`,
 * offset set to the stream offset of what failed, and the validator's own
 * message kept whole, led by where the composite is. */
static HurrayStatus place(const HurrayStreamCompositeCheck *c, HurrayStatus st,
                          const HurrayError *inner, uint64_t offset, HurrayError *err) {
  if (err == NULL) return st;
  bool detail = inner->message[0] != '\0';
  const char *msg = detail ? inner->message : hurray_status_message(st);
  char lead[128];
  if (c->offset != HURRAY_NO_OFFSET) {
    snprintf(lead, sizeof lead, "composite at stream byte %llu: ", (unsigned long long)c->offset);
  } else if (c->where[0] != '\0') {
    /* "members[1]." names the nested composite the validator's paths start from */
    snprintf(lead, sizeof lead, "in %.*s: ", (int)(strlen(c->where) - 1), c->where);
  } else {
    lead[0] = '\0';
  }
  err->status = st;
  err->offset = c->offset != HURRAY_NO_OFFSET ? offset : HURRAY_NO_OFFSET;
  join(err->field, sizeof err->field, c->where, inner->field);
  join(err->message, sizeof err->message, lead, msg);
  join(err->reason, sizeof err->reason, "", detail ? inner->reason : msg);
  return st;
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
