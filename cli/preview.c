/*
 * hurray-inspect: --preview, the first stored elements of a tensor's buffer 0
 * decoded with the library's element decoder (include/hurray/values.h):
 * sub-byte integers, float8/6/4 and the rest. Values are shown in storage
 * order; a quantized tensor shows its stored codes.
 */
#include <string.h>

#include "inspect.h"

/* How many elements buffer 0 logically holds, or UINT64_MAX if unknown. */
static uint64_t logical_count(const HurrayDescriptor *d, const HurrayDescriptorFields *f) {
  uint64_t n = UINT64_MAX;
  switch (hurray_layout_class(f->layout.tag)) {
    case HURRAY_LAYOUT_CLASS_DENSE:
      if (f->quantization == NULL && hurray_descriptor_element_count(d, &n) != HURRAY_OK)
        n = UINT64_MAX;
      break;
    case HURRAY_LAYOUT_CLASS_SPARSE:
      if (f->layout.tag == HURRAY_LAYOUT_COO) n = f->layout.u.coo.nnz;
      else if (f->layout.tag == HURRAY_LAYOUT_CSF) n = f->layout.u.csf.nnz;
      else n = f->layout.u.csr.nnz;
      break;
    default:
      break;
  }
  return n;
}

static int64_t sign_extend(uint64_t code, unsigned bits) {
  if (bits >= 64) return (int64_t)code;
  uint64_t sign = (uint64_t)1 << (bits - 1);
  return (int64_t)((code ^ sign) - sign);
}

/* Formats element i into buf; false when it cannot be read. */
static bool element_text(const HurrayDtypeInfo *info, const uint8_t *data, uint64_t size,
                         uint64_t i, char *buf, size_t n, double *re, double *im, bool *exact_int,
                         int64_t *sval, uint64_t *uval) {
  *exact_int = false;
  if (info->flags & (HURRAY_DTF_INT | HURRAY_DTF_BOOL)) {
    uint64_t code = 0;
    if (hurray_value_get_code(info->tag, data, size, i, &code) != HURRAY_OK) return false;
    *exact_int = true;
    if (info->flags & HURRAY_DTF_BOOL) {
      *uval = code;
      snprintf(buf, n, "%s", code ? "true" : "false");
    } else if (info->flags & HURRAY_DTF_SIGNED) {
      *sval = sign_extend(code, info->bit_width);
      *uval = (uint64_t)*sval;
      snprintf(buf, n, "%lld", (long long)*sval);
    } else {
      *uval = code;
      *sval = -1;
      snprintf(buf, n, "%llu", (unsigned long long)code);
    }
    return true;
  }
  HurrayStatus st = hurray_value_get(info->tag, data, size, i, re, im);
  if (st != HURRAY_OK && st != HURRAY_ERR_INVALID_ARGUMENT) return false; /* reserved codes read as NaN */
  char a[40], b[40];
  fmt_double(*re, a, sizeof a);
  if (info->flags & HURRAY_DTF_COMPLEX) {
    fmt_double(*im, b, sizeof b);
    snprintf(buf, n, "(%s%s%sj)", a, (b[0] == '-' || b[0] == 'n') ? "" : "+", b);
  } else {
    snprintf(buf, n, "%s", a);
  }
  return true;
}

void report_preview(Report *r, const HurrayDescriptor *d, const uint8_t *data, uint64_t size,
                    unsigned indent) {
  HurrayDescriptorFields f;
  if (d == NULL || hurray_descriptor_fields(d, &f) != HURRAY_OK) return;
  const HurrayDtypeInfo *info = hurray_dtype_info(f.type_tag);
  const bool dense = hurray_layout_class(f.layout.tag) == HURRAY_LAYOUT_CLASS_DENSE;
  uint64_t skip = dense ? f.byte_offset : 0;
  if (info == NULL || skip > size) {
    const char *why = info == NULL ? "no element decoder for this type" : "byte_offset past the buffer";
    if (r->json) {
      j_open(r, "preview", '{');
      j_str(r, "unavailable", why);
      j_close(r, '}');
    } else {
      fprintf(r->out, "%*spreview: %s\n", (int)indent, "", why);
    }
    return;
  }
  const uint8_t *start = data + skip;
  const uint64_t avail = size - skip;
  uint64_t limit = logical_count(d, &f);
  if (limit > r->preview_n) limit = r->preview_n;
  bool more = false;
  if (r->json) {
    j_open(r, "preview", '{');
    j_str(r, "dtype", info->name);
    if (f.quantization != NULL) j_bool(r, "stored_codes", true);
    j_open(r, "values", '[');
  } else {
    fprintf(r->out, "%*spreview (%s%s, storage order): [", (int)indent, "", info->name,
            f.quantization != NULL ? " stored codes" : "");
  }
  uint64_t shown = 0;
  for (uint64_t i = 0; i < limit; i++) {
    char text[96];
    double re = 0, im = 0;
    int64_t sv = 0;
    uint64_t uv = 0;
    bool exact = false;
    if (!element_text(info, start, avail, i, text, sizeof text, &re, &im, &exact, &sv, &uv)) break;
    if (r->json) {
      if (exact && (info->flags & HURRAY_DTF_BOOL)) j_bool(r, NULL, uv != 0);
      else if (exact && (info->flags & HURRAY_DTF_SIGNED)) j_i64(r, NULL, sv);
      else if (exact) j_u64(r, NULL, uv);
      else if (info->flags & HURRAY_DTF_COMPLEX) {
        j_open(r, NULL, '[');
        j_f64(r, NULL, re);
        j_f64(r, NULL, im);
        j_close(r, ']');
      } else {
        j_f64(r, NULL, re);
      }
    } else {
      fprintf(r->out, "%s%s", shown ? ", " : "", text);
    }
    shown++;
  }
  /* Is there anything after what was shown? */
  if (shown == r->preview_n) {
    uint64_t probe = 0;
    uint64_t total = logical_count(d, &f);
    if (total == UINT64_MAX || total > shown) {
      if (info->flags & (HURRAY_DTF_INT | HURRAY_DTF_BOOL))
        more = hurray_value_get_code(info->tag, start, avail, shown, &probe) == HURRAY_OK;
      else {
        double a, b;
        HurrayStatus st = hurray_value_get(info->tag, start, avail, shown, &a, &b);
        more = st == HURRAY_OK || st == HURRAY_ERR_INVALID_ARGUMENT;
      }
    }
  }
  if (r->json) {
    j_close(r, ']');
    j_bool(r, "truncated", more);
    j_close(r, '}');
  } else {
    fprintf(r->out, "%s]\n", more ? (shown ? ", ..." : "...") : "");
  }
}
