/*
 * hurray-inspect: a stream (concatenated frames), frame by frame, with the
 * composite structure shown by indentation; then the library's stream
 * reader gives the verdict (composite rules, limits).
 */
#include <string.h>

#include "inspect.h"

/* Nesting shown at most (the reader's own limit, 8, gives the verdict). */
#define DISPLAY_MAX_DEPTH 64u

typedef struct Level {
  uint64_t head_frame;
  uint32_t declared;
  uint32_t next;
} Level;

static void frame_header(Report *r, uint64_t frame, uint64_t off, unsigned depth,
                         const Level *parent) {
  if (r->json) {
    j_open(r, NULL, '{');
    j_u64(r, "index", frame);
    j_u64(r, "offset", off);
    j_u64(r, "depth", depth);
    if (parent != NULL) {
      j_u64(r, "member_of", parent->head_frame);
      j_u64(r, "member_index", parent->next);
    }
    return;
  }
  fprintf(r->out, "\n%*sframe %llu at byte %llu", (int)(2 * depth), "", (unsigned long long)frame,
          (unsigned long long)off);
  if (parent != NULL)
    fprintf(r->out, " (member %u of frame %llu)", parent->next,
            (unsigned long long)parent->head_frame);
  fputc('\n', r->out);
}

/* Reports the buffers of a frame; returns false (error reported) when the
 * stream ends inside one. *pos advances past them. */
static bool frame_buffers(Report *r, const HurrayDescriptor *d, const HurrayDescriptorFields *f,
                          const uint8_t *bytes, size_t len, uint64_t *pos, unsigned indent) {
  bool ok = true;
  if (r->json) j_open(r, "buffers", '[');
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    uint64_t size = f->buffers[i].byte_size;
    uint64_t at = *pos;
    if (size > (uint64_t)len - at) {
      char field[32], msg[200];
      snprintf(field, sizeof field, "buffers[%u]", i);
      snprintf(msg, sizeof msg,
               "the stream ends %llu bytes into the %llu-byte buffer %u that starts at byte %llu",
               (unsigned long long)((uint64_t)len - at), (unsigned long long)size, i,
               (unsigned long long)at);
      if (r->json) {
        j_close(r, ']');
        report_error(r, "error", HURRAY_ERR_STREAM, len, field, NULL, msg, indent);
        return false;
      }
      report_error(r, "error", HURRAY_ERR_STREAM, len, field, NULL, msg, indent);
      ok = false;
      break;
    }
    const uint8_t *data = bytes + at;
    if (r->json) {
      j_open(r, NULL, '{');
      j_u64(r, "index", i);
      j_u64(r, "offset", at);
      j_u64(r, "size", size);
      if (r->hex) report_hexdump(r, "hex", data, size, at, 0);
      if (r->preview && i == 0) report_preview(r, d, data, size, 0);
      j_close(r, '}');
    } else {
      fprintf(r->out, "%*s  buffer[%u] at byte %llu: %llu bytes\n", (int)indent, "", i,
              (unsigned long long)at, (unsigned long long)size);
      if (r->hex) report_hexdump(r, NULL, data, size, at, indent);
      if (r->preview && i == 0) report_preview(r, d, data, size, indent + 4);
    }
    *pos = at + size;
  }
  if (r->json && ok) j_close(r, ']');
  return ok;
}

/* Runs the library's stream reader over the bytes: its verdict is final. */
static void verdict(Report *r, const uint8_t *bytes, size_t len, uint64_t *items) {
  HurrayStreamReader *reader = NULL;
  *items = 0;
  if (hurray_stream_reader_from_memory(bytes, len, NULL, &reader) != HURRAY_OK) {
    report_error(r, "error", HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL, "stream reader",
                 "cannot create a stream reader", 0);
    return;
  }
  HurrayError e;
  HurrayStreamItem *it = NULL;
  HurrayStatus st;
  while ((st = hurray_stream_reader_next_item(reader, &it, &e)) == HURRAY_OK && it != NULL) {
    (*items)++;
    hurray_stream_item_destroy(&it);
  }
  if (st != HURRAY_OK) {
    if (!r->json) fputc('\n', r->out);
    report_error(r, "error", st, e.offset, e.field, "stream reader", e.message, 0);
  }
  hurray_stream_reader_destroy(&reader);
}

int inspect_stream(Report *r, const uint8_t *bytes, size_t len) {
  report_begin(r, "stream", "stream", len);
  if (r->json) j_open(r, "frames", '[');
  Level stack[DISPLAY_MAX_DEPTH];
  unsigned depth = 0;
  uint64_t off = 0, frame = 0;
  bool ok = true;
  while (off < len && ok) {
    const unsigned indent = 2 * depth;
    char context[64];
    snprintf(context, sizeof context, "descriptor at byte %llu", (unsigned long long)off);
    frame_header(r, frame, off, depth, depth > 0 ? &stack[depth - 1] : NULL);
    HurrayDescriptor *d = NULL;
    uint32_t dlen = 0;
    if (inspect_descriptor_fields(r, bytes + off, len - off, off, indent, context, &d, &dlen) !=
        HURRAY_OK) {
      if (r->json) j_close(r, '}');
      ok = false;
      break;
    }
    if (r->json) j_u64(r, "length", dlen);
    report_summary(r, d, indent);
    if (r->hex) {
      if (!r->json) fprintf(r->out, "%*s  descriptor bytes:\n", (int)indent, "");
      report_hexdump(r, "hex", bytes + off, dlen, off, indent);
    }
    HurrayDescriptorFields f;
    HurrayStatus fst = hurray_descriptor_fields(d, &f);
    if (fst != HURRAY_OK) {
      report_error(r, "error", fst, off, NULL, context, hurray_status_message(fst), indent);
      if (r->json) j_close(r, '}');
      inspect_descriptor_free(d);
      ok = false;
      break;
    }
    uint64_t pos = off + dlen;
    ok = frame_buffers(r, d, &f, bytes, len, &pos, indent);
    if (r->json) j_close(r, '}');
    frame++;
    off = pos;
    const bool head = f.layout.tag == HURRAY_LAYOUT_COMPOSITE;
    const uint32_t members = head ? f.layout.u.composite.member_count : 0;
    inspect_descriptor_free(d);
    if (!ok) break;
    if (head && members > 0) {
      if (depth == DISPLAY_MAX_DEPTH) {
        report_error(r, "error", HURRAY_ERR_STREAM_LIMIT, off, "composite", NULL,
                     "composites nested too deep to display", 0);
        ok = false;
        break;
      }
      stack[depth].head_frame = frame - 1;
      stack[depth].declared = members;
      stack[depth].next = 0;
      depth++;
      continue;
    }
    /* An item is complete; so may be the composites it closes. */
    while (depth > 0) {
      stack[depth - 1].next++;
      if (stack[depth - 1].next < stack[depth - 1].declared) break;
      depth--;
    }
  }
  if (r->json) j_close(r, ']');
  if (ok && depth > 0) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "torn composite: the head in frame %llu declares %u members; the stream ends "
             "after %u",
             (unsigned long long)stack[depth - 1].head_frame, stack[depth - 1].declared,
             stack[depth - 1].next);
    if (!r->json) fputc('\n', r->out);
    report_error(r, "error", HURRAY_ERR_STREAM, len, "composite", NULL, msg, 0);
    ok = false;
  }
  uint64_t items = 0;
  if (ok) verdict(r, bytes, len, &items);
  if (r->json) {
    j_u64(r, "frames_read", frame);
    if (!r->failed) j_u64(r, "items", items);
  } else if (!r->failed) {
    fprintf(r->out, "\nend of stream at byte %llu: %llu frame%s, %llu item%s\n",
            (unsigned long long)len, (unsigned long long)frame, frame == 1 ? "" : "s",
            (unsigned long long)items, items == 1 ? "" : "s");
  }
  return report_end(r);
}
