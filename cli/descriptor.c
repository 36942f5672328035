/* hurray-inspect: one descriptor, field by field (hurray_descriptor_walk). */
#include <string.h>

#include "inspect.h"

typedef struct WalkCtx {
  Report *r;
  uint64_t base;
  unsigned indent;
} WalkCtx;

static void on_field(const HurrayFieldEvent *ev, void *ctx) {
  WalkCtx *w = ctx;
  report_field(w->r, ev, w->base, w->indent);
}

HurrayStatus inspect_descriptor_fields(Report *r, const uint8_t *bytes, size_t len,
                                       uint64_t base, unsigned indent, const char *context,
                                       HurrayDescriptor **out, uint32_t *dlen) {
  if (out != NULL) *out = NULL;
  if (dlen != NULL) *dlen = 0;
  WalkCtx ctx = {r, base, indent};
  HurrayError e;
  hurray_error_clear(&e);
  if (r->json && !r->brief) j_open(r, "fields", '[');
  else report_field_header(r, indent);
  HurrayStatus st = hurray_descriptor_walk(bytes, len, HURRAY_DECODE_STRICT, on_field, &ctx, &e);
  if (r->json && !r->brief) j_close(r, ']');
  HurrayDescriptor *d = NULL;
  if (st == HURRAY_OK) st = hurray_descriptor_decode_ex(bytes, len, HURRAY_DECODE_STRICT, &d, &e);
  uint32_t n = 0;
  if (st == HURRAY_OK) st = hurray_descriptor_peek_length(bytes, len, &n, &e);
  if (st != HURRAY_OK) {
    inspect_descriptor_free(d);
    const char *msg = e.message[0] != '\0' ? e.message : hurray_status_message(st);
    report_error(r, "error", st, e.offset == HURRAY_NO_OFFSET ? HURRAY_NO_OFFSET : base + e.offset,
                 e.field, context, msg, indent);
    return st;
  }
  if (out != NULL) *out = d;
  else inspect_descriptor_free(d);
  if (dlen != NULL) *dlen = n;
  return HURRAY_OK;
}

int inspect_descriptor(Report *r, const uint8_t *bytes, size_t len) {
  report_begin(r, "descriptor", "tensor descriptor", len);
  if (r->json) j_open(r, "descriptor", '{');
  HurrayDescriptor *d = NULL;
  uint32_t dlen = 0;
  HurrayStatus st = inspect_descriptor_fields(r, bytes, len, 0, 0, NULL, &d, &dlen);
  if (st == HURRAY_OK) {
    if (r->json) j_u64(r, "length", dlen);
    report_summary(r, d, 0);
    if (r->hex) {
      if (!r->json) fprintf(r->out, "\ndescriptor bytes:\n");
      report_hexdump(r, "hex", bytes, dlen, 0, 0);
    }
    if (len > dlen) {
      /* Trailing bytes: too few to be the descriptor's buffers, or --as=descriptor. */
      if (r->json) j_u64(r, "ignored_trailing_bytes", len - dlen);
      else fprintf(r->out, "\n%llu bytes after the descriptor ignored\n",
                   (unsigned long long)(len - dlen));
    }
  }
  if (r->json) j_close(r, '}');
  inspect_descriptor_free(d);
  return report_end(r);
}
