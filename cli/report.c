/* hurray-inspect: the report writer, as aligned text or as JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__MINGW32__)
/* MinGW's classification macros pass a double through their float branch
 * too (-Wfloat-conversion); GCC's type-generic builtins do not. */
#undef isnan
#undef isinf
#undef isfinite
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
#endif

#include "inspect.h"

/* ---- JSON primitives ------------------------------------------------------------ */

static void j_indent(Report *r) {
  for (int i = 0; i < r->depth; i++) fputs("  ", r->out);
}

static void j_escape(Report *r, const char *s) {
  fputc('"', r->out);
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    switch (*p) {
      case '"': fputs("\\\"", r->out); break;
      case '\\': fputs("\\\\", r->out); break;
      case '\n': fputs("\\n", r->out); break;
      case '\r': fputs("\\r", r->out); break;
      case '\t': fputs("\\t", r->out); break;
      default:
        if (*p < 0x20 || *p >= 0x7F) fprintf(r->out, "\\u%04x", *p);
        else fputc(*p, r->out);
    }
  }
  fputc('"', r->out);
}

/* Separator, newline and indentation before a value, then its key. */
static void j_prefix(Report *r, const char *key) {
  if (r->depth > 0) {
    if (r->count[r->depth - 1]++ > 0) fputc(',', r->out);
    fputc('\n', r->out);
    j_indent(r);
  }
  if (key != NULL) {
    j_escape(r, key);
    fputs(": ", r->out);
  }
}

void j_open(Report *r, const char *key, char bracket) {
  j_prefix(r, key);
  fputc(bracket, r->out);
  if (r->depth < INSPECT_MAX_JSON_DEPTH) {
    r->count[r->depth] = 0;
    r->depth++;
  }
}

void j_close(Report *r, char bracket) {
  if (r->depth == 0) return;
  r->depth--;
  if (r->count[r->depth] > 0) {
    fputc('\n', r->out);
    j_indent(r);
  }
  fputc(bracket, r->out);
  if (r->depth == 0) fputc('\n', r->out);
}

void j_str(Report *r, const char *key, const char *value) {
  j_prefix(r, key);
  if (value == NULL) fputs("null", r->out);
  else j_escape(r, value);
}

void j_u64(Report *r, const char *key, uint64_t value) {
  j_prefix(r, key);
  fprintf(r->out, "%llu", (unsigned long long)value);
}

void j_i64(Report *r, const char *key, int64_t value) {
  j_prefix(r, key);
  fprintf(r->out, "%lld", (long long)value);
}

/* Shortest text that reads back as the same double. */
void fmt_double(double v, char *buf, size_t size) {
  if (isnan(v)) {
    snprintf(buf, size, "nan");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, size, v < 0 ? "-inf" : "inf");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* Make a float look like one ("1" -> "1.0"). */
  if (strpbrk(buf, ".eE") == NULL && strlen(buf) + 2 < size) strcat(buf, ".0");
}

void j_f64(Report *r, const char *key, double value) {
  char buf[40];
  fmt_double(value, buf, sizeof buf);
  if (isfinite(value)) {
    j_prefix(r, key);
    fputs(buf, r->out);
  } else {
    j_str(r, key, buf);
  }
}

void j_bool(Report *r, const char *key, bool value) {
  j_prefix(r, key);
  fputs(value ? "true" : "false", r->out);
}

void j_hex(Report *r, const char *key, const uint8_t *bytes, uint64_t n) {
  j_prefix(r, key);
  fputc('"', r->out);
  for (uint64_t i = 0; i < n; i++) fprintf(r->out, "%02x", bytes[i]);
  fputc('"', r->out);
}

/* ---- document ------------------------------------------------------------------- */

void report_begin(Report *r, const char *format, const char *title, uint64_t size) {
  if (r->json) {
    j_open(r, NULL, '{');
    j_str(r, "format", format);
    j_u64(r, "size", size);
  } else {
    fprintf(r->out, "%s, %llu bytes\n", title, (unsigned long long)size);
  }
}

int report_end(Report *r) {
  if (r->json) {
    j_bool(r, "valid", !r->failed);
    while (r->depth > 0) j_close(r, r->depth == 1 ? '}' : ']');
  }
  fflush(r->out);
  if (r->failed) {
    fprintf(stderr, "hurray-inspect: %s: %s\n", hurray_status_name(r->status), r->message);
    return INSPECT_EXIT_INVALID;
  }
  return INSPECT_EXIT_OK;
}

/* ---- field table ------------------------------------------------------------------ */

#define BYTES_SHOWN 8u

static void fmt_bytes(const uint8_t *b, uint64_t n, char *buf, size_t size) {
  size_t o = 0;
  buf[0] = '\0';
  uint64_t shown = n < BYTES_SHOWN ? n : BYTES_SHOWN;
  for (uint64_t i = 0; i < shown && o + 4 < size; i++)
    o += (size_t)snprintf(buf + o, size - o, i == 0 ? "%02X" : " %02X", b[i]);
  if (n > shown && o + 4 < size) snprintf(buf + o, size - o, " ..");
}

void report_field_header(Report *r, unsigned indent) {
  if (r->json || r->brief) return;
  fprintf(r->out, "%*s%8s  %-26s  %-34s %s\n", (int)indent, "", "offset", "bytes", "field",
          "value");
}

static const char *kind_name(HurrayFieldKind k) {
  switch (k) {
    case HURRAY_FIELD_UINT: return "uint";
    case HURRAY_FIELD_INT: return "int";
    case HURRAY_FIELD_FLOAT: return "float";
    case HURRAY_FIELD_BYTES: return "bytes";
    case HURRAY_FIELD_SECTION: return "section";
  }
  return "unknown";
}

void report_field(Report *r, const HurrayFieldEvent *ev, uint64_t base, unsigned indent) {
  if (r->brief) return;
  const char *path = ev->path != NULL ? ev->path : "";
  if (r->json) {
    j_open(r, NULL, '{');
    j_u64(r, "offset", base + ev->offset);
    j_u64(r, "size", ev->size);
    j_str(r, "field", path);
    j_str(r, "kind", kind_name(ev->kind));
    if (ev->kind != HURRAY_FIELD_SECTION && ev->bytes != NULL) j_hex(r, "bytes", ev->bytes, ev->size);
    switch (ev->kind) {
      case HURRAY_FIELD_UINT: j_u64(r, "value", ev->u); break;
      case HURRAY_FIELD_INT: j_i64(r, "value", ev->i); break;
      case HURRAY_FIELD_FLOAT: j_f64(r, "value", ev->f); break;
      default: break;
    }
    if (ev->meaning != NULL) j_str(r, "meaning", ev->meaning);
    j_close(r, '}');
    return;
  }
  if (ev->kind == HURRAY_FIELD_SECTION) {
    fprintf(r->out, "%*s%8llu  %-26s  -- %s (%llu byte%s)\n", (int)indent, "",
            (unsigned long long)(base + ev->offset), "", path, (unsigned long long)ev->size,
            ev->size == 1 ? "" : "s");
    return;
  }
  char hex[40];
  if (ev->bytes != NULL) fmt_bytes(ev->bytes, ev->size, hex, sizeof hex);
  else hex[0] = '\0';
  char value[64];
  value[0] = '\0';
  switch (ev->kind) {
    case HURRAY_FIELD_UINT:
      snprintf(value, sizeof value, "%llu", (unsigned long long)ev->u);
      break;
    case HURRAY_FIELD_INT:
      snprintf(value, sizeof value, "%lld", (long long)ev->i);
      break;
    case HURRAY_FIELD_FLOAT:
      fmt_double(ev->f, value, sizeof value);
      break;
    default:
      break;
  }
  if (ev->meaning != NULL) {
    if (value[0] != '\0')
      fprintf(r->out, "%*s%8llu  %-26s  %-34s %s (%s)\n", (int)indent, "",
              (unsigned long long)(base + ev->offset), hex, path, value, ev->meaning);
    else
      fprintf(r->out, "%*s%8llu  %-26s  %-34s %s\n", (int)indent, "",
              (unsigned long long)(base + ev->offset), hex, path, ev->meaning);
  } else if (value[0] != '\0') {
    fprintf(r->out, "%*s%8llu  %-26s  %-34s %s\n", (int)indent, "",
            (unsigned long long)(base + ev->offset), hex, path, value);
  } else {
    fprintf(r->out, "%*s%8llu  %-26s  %s\n", (int)indent, "",
            (unsigned long long)(base + ev->offset), hex, path);
  }
}

void report_error(Report *r, const char *key, HurrayStatus st, uint64_t offset,
                  const char *field, const char *context, const char *message,
                  unsigned indent) {
  if (!r->failed) {
    r->failed = true;
    r->status = st;
    if (context != NULL && context[0] != '\0')
      snprintf(r->message, sizeof r->message, "%s: %s", context, message);
    else
      snprintf(r->message, sizeof r->message, "%s", message);
  }
  if (r->json) {
    j_open(r, key, '{');
    j_str(r, "status", hurray_status_name(st));
    if (offset != HURRAY_NO_OFFSET) j_u64(r, "offset", offset);
    else j_str(r, "offset", NULL);
    j_str(r, "field", field != NULL && field[0] != '\0' ? field : NULL);
    j_str(r, "message", message);
    if (context != NULL && context[0] != '\0') j_str(r, "context", context);
    j_close(r, '}');
    return;
  }
  if (context != NULL && context[0] != '\0')
    fprintf(r->out, "%*s   ERROR  %s: %s: %s\n", (int)indent, "", hurray_status_name(st), context,
            message);
  else
    fprintf(r->out, "%*s   ERROR  %s: %s\n", (int)indent, "", hurray_status_name(st), message);
}

void report_hexdump(Report *r, const char *key, const uint8_t *bytes, uint64_t n, uint64_t base,
                    unsigned indent) {
  if (r->json) {
    j_hex(r, key, bytes, n);
    return;
  }
  for (uint64_t row = 0; row < n; row += 16) {
    fprintf(r->out, "%*s%8llu  ", (int)indent, "", (unsigned long long)(base + row));
    for (uint64_t i = 0; i < 16; i++) {
      if (row + i < n) fprintf(r->out, "%02x ", bytes[row + i]);
      else fputs("   ", r->out);
      if (i == 7) fputc(' ', r->out);
    }
    fputs(" |", r->out);
    for (uint64_t i = 0; i < 16 && row + i < n; i++) {
      uint8_t c = bytes[row + i];
      fputc(c >= 0x20 && c < 0x7F ? c : '.', r->out);
    }
    fputs("|\n", r->out);
  }
}

/* ---- summaries ---------------------------------------------------------------------- */

static const char *rule_name(uint8_t rule) {
  switch (rule) {
    case HURRAY_COMPOSITE_PARTITION: return "partition";
    case HURRAY_COMPOSITE_OVERLAY: return "overlay";
    case HURRAY_COMPOSITE_GROUP: return "group";
    default: return NULL;
  }
}

static size_t fmt_shape(const HurrayDescriptorFields *f, char *buf, size_t size) {
  size_t o = (size_t)snprintf(buf, size, "[");
  for (uint32_t i = 0; i < f->rank && o < size; i++) {
    if (f->shape[i] == HURRAY_DYNAMIC_DIM)
      o += (size_t)snprintf(buf + o, size - o, i ? ", ?" : "?");
    else
      o += (size_t)snprintf(buf + o, size - o, i ? ", %llu" : "%llu",
                            (unsigned long long)f->shape[i]);
  }
  if (o < size) o += (size_t)snprintf(buf + o, size - o, "]");
  return o;
}

void describe_descriptor(const HurrayDescriptor *d, char *buf, size_t size) {
  HurrayDescriptorFields f;
  if (hurray_descriptor_fields(d, &f) != HURRAY_OK) {
    snprintf(buf, size, "(unreadable descriptor)");
    return;
  }
  char dtype[24], layout[24], shape[256];
  const char *dn = hurray_dtype_name(f.type_tag);
  if (dn != NULL) snprintf(dtype, sizeof dtype, "%s", dn);
  else snprintf(dtype, sizeof dtype, "type 0x%02X", f.type_tag);
  const char *ln = hurray_layout_name(f.layout.tag);
  if (ln != NULL) snprintf(layout, sizeof layout, "%s", ln);
  else snprintf(layout, sizeof layout, "layout 0x%02X", f.layout.tag);
  fmt_shape(&f, shape, sizeof shape);
  if (f.layout.tag == HURRAY_LAYOUT_COMPOSITE) {
    const char *rn = rule_name(f.layout.u.composite.rule);
    snprintf(buf, size, "composite head: %s %s %s, %u member%s", rn != NULL ? rn : "private",
             dtype, shape, f.layout.u.composite.member_count,
             f.layout.u.composite.member_count == 1 ? "" : "s");
    return;
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < f.buffer_count; i++) total += f.buffers[i].byte_size;
  char quant[48] = "";
  if (f.quantization != NULL) {
    const char *qn = hurray_quant_scheme_name(f.quantization->scheme);
    if (qn != NULL) snprintf(quant, sizeof quant, ", quantized %s", qn);
    else snprintf(quant, sizeof quant, ", quantized scheme 0x%02X", f.quantization->scheme);
  }
  snprintf(buf, size, "%s %s %s%s, %u buffer%s, %llu data bytes", dtype, shape, layout, quant,
           f.buffer_count, f.buffer_count == 1 ? "" : "s", (unsigned long long)total);
}

void report_summary(Report *r, const HurrayDescriptor *d, unsigned indent) {
  if (!r->json) {
    char text[400];
    describe_descriptor(d, text, sizeof text);
    fprintf(r->out, "%*s  => %s\n", (int)indent, "", text);
    return;
  }
  HurrayDescriptorFields f;
  if (hurray_descriptor_fields(d, &f) != HURRAY_OK) return;
  j_open(r, "summary", '{');
  j_str(r, "dtype", hurray_dtype_name(f.type_tag));
  j_u64(r, "type_tag", f.type_tag);
  j_open(r, "shape", '[');
  for (uint32_t i = 0; i < f.rank; i++) {
    if (f.shape[i] == HURRAY_DYNAMIC_DIM) j_str(r, NULL, NULL);
    else j_u64(r, NULL, f.shape[i]);
  }
  j_close(r, ']');
  j_str(r, "layout", hurray_layout_name(f.layout.tag));
  j_u64(r, "layout_tag", f.layout.tag);
  if (f.layout.tag == HURRAY_LAYOUT_COMPOSITE) {
    j_str(r, "composition_rule", rule_name(f.layout.u.composite.rule));
    j_u64(r, "member_count", f.layout.u.composite.member_count);
  }
  if (f.quantization != NULL) j_str(r, "quantization", hurray_quant_scheme_name(f.quantization->scheme));
  j_open(r, "buffer_sizes", '[');
  for (uint32_t i = 0; i < f.buffer_count; i++) j_u64(r, NULL, f.buffers[i].byte_size);
  j_close(r, ']');
  j_close(r, '}');
}
