/*
 * Shared tensors: the views record (docs/reference/file-format.md, "Shared tensors").
 *
 * Tensors that share memory are stored once; the others are recorded as
 * views of a stored tensor (their base) in one KV string, HURRAY_FILE_KV_VIEWS,
 * holding JSON:
 *
 *   {"format":1,"views":{"w.T":{"base":"w","dtype":"float32","shape":[6,4],
 *                               "byte_offset":0,"byte_strides":[4,24]},
 *                        "lm_head":{"base":"embed"}}}
 *
 * This file owns the record: its encoding (the writer calls
 * hurray__views_encode; the bytes are what Python's json.dumps with
 * separators=(",", ":") gives, so files written before the record moved
 * into C stay byte for byte the same), the rules a view must keep against
 * its base (hurray__view_check, the one check the writer and every reader
 * make), and the reader's side: parsing, checking and looking views up.
 *
 * The reader parses the record on first need and checks it whole before
 * anything is built from it, then publishes the result (success or the
 * error) with a compare-and-swap: every later call gives the same answer.
 * The parser is a strict, bounded JSON reader: nesting deeper than
 * MAX_DEPTH, a number that is not an integer where one is needed, an
 * integer past 64 bits, invalid UTF-8 or escapes, and duplicate view names
 * are refused; keys it does not know are skipped, as the record's first
 * readers skipped them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal/file.h"

#define MAX_DEPTH 32

static const char FIELD[] = "kv['" HURRAY_FILE_KV_VIEWS "']";

/* ---- the rules ----------------------------------------------------------------- */

void hurray__view_base_of(const HurrayDescriptorFields *f, HurrayViewBase *out) {
  memset(out, 0, sizeof *out);
  out->type_tag = f->type_tag;
  out->layout_tag = f->layout.tag;
  out->quantized = f->quantization != NULL;
  out->byte_offset = f->byte_offset;
  uint64_t n = 1;
  out->counted = true;
  for (uint32_t k = 0; k < f->rank; k++) {
    if (f->shape[k] == HURRAY_DYNAMIC_DIM || hurray__mul_overflow_u64(n, f->shape[k], &n)) {
      out->counted = false;
      break;
    }
  }
  out->elements = out->counted ? n : 0;
}

/* Bit width of a known type tag, 0 when unknown. */
static uint32_t bits_of(uint8_t tag) {
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  return info != NULL ? info->bit_width : 0u;
}

HurrayStatus hurray__view_check(const HurrayFileView *v, const HurrayViewBase *b,
                                HurrayStatus status, uint64_t offset, const char *field,
                                HurrayError *err) {
  const int nl = (int)(v->name_len > 48 ? 48 : v->name_len);
  const int bl = (int)(v->base_len > 48 ? 48 : v->base_len);
#define BAD(...) \
  return hurray__fail(err, status, offset, field, "view '%.*s': " __VA_ARGS__)
  const uint32_t base_bits = bits_of(b->type_tag);
  if (base_bits == 0 || base_bits % 8u != 0 || !b->counted || b->quantized ||
      (b->layout_tag != HURRAY_LAYOUT_ROW_MAJOR && b->layout_tag != HURRAY_LAYOUT_COL_MAJOR))
    BAD("its base '%.*s' is not a dense row- or column-major tensor of whole-byte elements",
        nl, v->name, bl, v->base);
  const uint32_t bits = bits_of(v->dtype);
  const char *tname = hurray_dtype_name(v->dtype);
  if (bits == 0 || tname == NULL)
    BAD("dtype tag 0x%02x is not a known type", nl, v->name, v->dtype);
  if (bits % 8u != 0) BAD("dtype %s is not a whole-byte type", nl, v->name, tname);
  const int64_t item = (int64_t)(bits / 8u);
  if (v->rank > HURRAY_MAX_RANK)
    BAD("shape has %u dimensions, more than %u", nl, v->name, v->rank, HURRAY_MAX_RANK);
  if (v->rank > 0 && (v->shape == NULL || v->byte_strides == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, offset, field,
                        "view '%.*s': shape or byte_strides is NULL", nl, v->name);
  if (v->byte_offset % item != 0)
    BAD("byte_offset %lld is not a multiple of %s's size (%lld)", nl, v->name,
        (long long)v->byte_offset, tname, (long long)item);
  if (b->byte_offset % (uint64_t)item != 0)
    BAD("its base '%.*s' starts %llu bytes into its buffer, not a multiple of %s's size (%lld)",
        nl, v->name, bl, v->base, (unsigned long long)b->byte_offset, tname, (long long)item);
  for (uint32_t k = 0; k < v->rank; k++) {
    if (v->byte_strides[k] == INT64_MIN)
      BAD("byte_strides[%u] does not fit in 64 bits", nl, v->name, k);
    if (v->byte_strides[k] % item != 0)
      BAD("byte_strides[%u] = %lld is not a multiple of %s's size (%lld)", nl, v->name, k,
          (long long)v->byte_strides[k], tname, (long long)item);
    if (v->shape[k] > (uint64_t)INT64_MAX)
      BAD("shape[%u] = %llu is past 2**63 - 1", nl, v->name, k,
          (unsigned long long)v->shape[k]);
  }
  /* NumPy and PyTorch multiply every nonzero dimension, elements or not */
  int64_t prod = item;
  bool empty = false;
  for (uint32_t k = 0; k < v->rank; k++) {
    if (v->shape[k] == 0) {
      empty = true;
      continue;
    }
    if (hurray__mul_overflow_i64(prod, (int64_t)v->shape[k], &prod))
      BAD("its nonzero dimensions multiply past 2**63 - 1 bytes", nl, v->name);
  }
  /* every byte it can reach, counted from the base's first element */
  uint64_t size = 0;
  if (hurray__mul_overflow_u64(b->elements, base_bits / 8u, &size) || size > (uint64_t)INT64_MAX)
    BAD("its base '%.*s' is larger than 2**63 - 1 bytes", nl, v->name, bl, v->base);
  int64_t lo = v->byte_offset, hi = v->byte_offset;
  bool out = false;
  if (!empty) {
    for (uint32_t k = 0; k < v->rank && !out; k++) {
      int64_t span;
      if (hurray__mul_overflow_i64((int64_t)v->shape[k] - 1, v->byte_strides[k], &span)) {
        out = true;
        break;
      }
      out = span < 0 ? hurray__add_overflow_i64(lo, span, &lo)
                     : hurray__add_overflow_i64(hi, span, &hi);
    }
    if (!out) out = hurray__add_overflow_i64(hi, item, &hi);
  }
  if (out || lo < 0 || hi > (int64_t)size || (empty && v->byte_offset > (int64_t)size)) {
    if (out)
      BAD("byte_offset %lld and its byte_strides reach past 64-bit offsets in its base "
          "'%.*s', which holds %llu bytes",
          nl, v->name, (long long)v->byte_offset, bl, v->base, (unsigned long long)size);
    BAD("byte_offset %lld and its byte_strides reach bytes %lld..%lld of its base '%.*s', "
        "which holds %llu",
        nl, v->name, (long long)v->byte_offset, (long long)lo, (long long)hi, bl, v->base,
        (unsigned long long)size);
  }
#undef BAD
  return HURRAY_OK;
}

/* ---- encoding (the writer) ----------------------------------------------------- */

/* *p grown from `old` to `new_size` bytes (the old bytes kept); false
 * without memory (*p untouched). */
static bool grow(void **p, size_t old, size_t new_size) {
  void *q = hurray__malloc(new_size);
  if (q == NULL) return false;
  if (old > 0) memcpy(q, *p, old);
  hurray__free(*p);
  *p = q;
  return true;
}

static HurrayStatus put(HurrayByteBuf *b, const void *p, size_t n) {
  HURRAY_TRY(hurray__buf_reserve(b, n));
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return HURRAY_OK;
}

static HurrayStatus put_str(HurrayByteBuf *b, const char *s) { return put(b, s, strlen(s)); }

static HurrayStatus put_escape(HurrayByteBuf *b, uint32_t u) {
  char e[16];
  (void)snprintf(e, sizeof e, "\\u%04x", (unsigned)(u & 0xFFFFu));
  return put(b, e, 6);
}

/* A JSON string as json.dumps writes it (ensure_ascii): the short escapes,
 * \u00XX for other control characters, \uXXXX (surrogate pairs past the
 * BMP) for every non-ASCII character. `s` is valid UTF-8 (checked). */
static HurrayStatus put_json_string(HurrayByteBuf *b, const char *s, size_t n) {
  const uint8_t *p = (const uint8_t *)s, *end = p + n;
  HURRAY_TRY(put(b, "\"", 1));
  while (p < end) {
    uint32_t c = *p;
    if (c < 0x80) {
      p++;
      const char *esc = NULL;
      switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default: break;
      }
      if (esc != NULL) {
        HURRAY_TRY(put_str(b, esc));
      } else if (c < 0x20) {
        HURRAY_TRY(put_escape(b, c));
      } else {
        char ch = (char)c;
        HURRAY_TRY(put(b, &ch, 1));
      }
      continue;
    }
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    c &= (uint32_t)(0x7F >> len);
    for (int k = 1; k < len; k++) c = (c << 6) | (p[k] & 0x3Fu);
    p += len;
    if (c >= 0x10000) {
      c -= 0x10000;
      HURRAY_TRY(put_escape(b, 0xD800u + (c >> 10)));
      HURRAY_TRY(put_escape(b, 0xDC00u + (c & 0x3FFu)));
    } else {
      HURRAY_TRY(put_escape(b, c));
    }
  }
  return put(b, "\"", 1);
}

HurrayStatus hurray__views_encode(HurrayByteBuf *b, const HurrayFileView *v) {
  char num[32];
  HURRAY_TRY(put_json_string(b, v->name, v->name_len));
  HURRAY_TRY(put_str(b, ":{\"base\":"));
  HURRAY_TRY(put_json_string(b, v->base, v->base_len));
  if (v->same) return put(b, "}", 1);
  HURRAY_TRY(put_str(b, ",\"dtype\":"));
  const char *tname = hurray_dtype_name(v->dtype);
  HURRAY_TRY(put_json_string(b, tname, strlen(tname)));
  HURRAY_TRY(put_str(b, ",\"shape\":["));
  for (uint32_t k = 0; k < v->rank; k++) {
    int n = snprintf(num, sizeof num, "%s%llu", k ? "," : "", (unsigned long long)v->shape[k]);
    HURRAY_TRY(put(b, num, (size_t)n));
  }
  int n = snprintf(num, sizeof num, "],\"byte_offset\":%lld", (long long)v->byte_offset);
  HURRAY_TRY(put(b, num, (size_t)n));
  HURRAY_TRY(put_str(b, ",\"byte_strides\":["));
  for (uint32_t k = 0; k < v->rank; k++) {
    n = snprintf(num, sizeof num, "%s%lld", k ? "," : "", (long long)v->byte_strides[k]);
    HURRAY_TRY(put(b, num, (size_t)n));
  }
  return put(b, "]}", 2);
}

/* ---- parsing (the reader) ------------------------------------------------------ */

typedef struct ViewRec {
  uint32_t name_off, name_len; /* into the arena's string bytes */
  uint32_t base_off, base_len;
  uint32_t base_index;
  bool same;
  uint8_t dtype;
  uint32_t rank;
  uint32_t dims_off; /* into shape[] and strides[] */
  int64_t byte_offset;
} ViewRec;

struct HurrayFileViews {
  HurrayStatus verdict;
  HurrayError error; /* the failure, given back by every call */
  uint32_t count;
  ViewRec *recs;
  uint8_t *strings;
  uint64_t *shapes;
  int64_t *strides;
  HurrayNameLookup lookup;
};

typedef struct Parser {
  const uint8_t *p, *end, *start;
  uint64_t base; /* file offset of start */
  HurrayError *err;
  /* growing storage */
  HurrayByteBuf strings;
  ViewRec *recs;
  uint32_t count, cap;
  uint64_t *shapes;
  int64_t *strides;
  uint32_t dims, dims_cap;
  /* the view being read, for messages */
  const char *vname;
  int vname_len;
} Parser;

static HurrayStatus bad(Parser *ps, const char *fmt, ...) HURRAY_PRINTF(2, 3);
static HurrayStatus bad(Parser *ps, const char *fmt, ...) {
  char reason[160];
  va_list ap;
  va_start(ap, fmt);
  (void)vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return hurray__fail(ps->err, HURRAY_ERR_INVALID_KV, ps->base + (uint64_t)(ps->p - ps->start),
                      FIELD, "%s", reason);
}

/* A text that is not JSON at all (or not JSON this reader takes). */
static HurrayStatus syntax(Parser *ps, const char *what) {
  return bad(ps, "not JSON (%s)", what);
}

static HurrayStatus oom(Parser *ps) {
  return hurray__fail(ps->err, HURRAY_ERR_OUT_OF_MEMORY, ps->base, FIELD, "out of memory");
}

static void ws(Parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static bool eat(Parser *ps, char c) {
  ws(ps);
  if (ps->p < ps->end && *ps->p == (uint8_t)c) {
    ps->p++;
    return true;
  }
  return false;
}

static int hexval(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool hex4(Parser *ps, uint32_t *out) {
  if (ps->end - ps->p < 4) return false;
  uint32_t v = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval(ps->p[k]);
    if (h < 0) return false;
    v = (v << 4) | (uint32_t)h;
  }
  ps->p += 4;
  *out = v;
  return true;
}

static HurrayStatus put_utf8(HurrayByteBuf *b, uint32_t c) {
  uint8_t u[4];
  size_t n;
  if (c < 0x80) {
    u[0] = (uint8_t)c;
    n = 1;
  } else if (c < 0x800) {
    u[0] = (uint8_t)(0xC0 | (c >> 6));
    u[1] = (uint8_t)(0x80 | (c & 0x3F));
    n = 2;
  } else if (c < 0x10000) {
    u[0] = (uint8_t)(0xE0 | (c >> 12));
    u[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    u[2] = (uint8_t)(0x80 | (c & 0x3F));
    n = 3;
  } else {
    u[0] = (uint8_t)(0xF0 | (c >> 18));
    u[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    u[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    u[3] = (uint8_t)(0x80 | (c & 0x3F));
    n = 4;
  }
  return put(b, u, n);
}

/* A string, unescaped into ps->strings: *off and *len locate it there. */
static HurrayStatus string(Parser *ps, uint32_t *off, uint32_t *len) {
  ws(ps);
  if (ps->p >= ps->end || *ps->p != '"') return syntax(ps, "expected a string");
  ps->p++;
  size_t from = ps->strings.len;
  for (;;) {
    if (ps->p >= ps->end) return syntax(ps, "a string is not closed");
    const uint8_t *q = ps->p;
    while (q < ps->end && *q != '"' && *q != '\\' && *q >= 0x20) q++;
    if (q > ps->p) {
      if (!hurray__utf8_valid(ps->p, (size_t)(q - ps->p))) return syntax(ps, "invalid UTF-8");
      if (put(&ps->strings, ps->p, (size_t)(q - ps->p)) != HURRAY_OK) return oom(ps);
      ps->p = q;
      continue;
    }
    uint8_t c = *ps->p;
    if (c == '"') {
      ps->p++;
      break;
    }
    if (c < 0x20) return syntax(ps, "a control character inside a string");
    ps->p++; /* the backslash */
    if (ps->p >= ps->end) return syntax(ps, "a string is not closed");
    uint8_t e = *ps->p++;
    uint32_t u;
    switch (e) {
      case '"': case '\\': case '/': u = e; break;
      case 'b': u = '\b'; break;
      case 'f': u = '\f'; break;
      case 'n': u = '\n'; break;
      case 'r': u = '\r'; break;
      case 't': u = '\t'; break;
      case 'u':
        if (!hex4(ps, &u)) return syntax(ps, "a \\u escape without four hex digits");
        if (u >= 0xDC00 && u <= 0xDFFF) return syntax(ps, "a lone low surrogate in a string");
        if (u >= 0xD800 && u <= 0xDBFF) {
          uint32_t lo;
          if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
            return syntax(ps, "a lone high surrogate in a string");
          ps->p += 2;
          if (!hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF)
            return syntax(ps, "a high surrogate not followed by a low one");
          u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        }
        break;
      default:
        return bad(ps, "not JSON (an unknown escape \\%c)",
                   e >= 0x20 && e < 0x7F ? (char)e : '?');
    }
    if (put_utf8(&ps->strings, u) != HURRAY_OK) return oom(ps);
  }
  size_t n = ps->strings.len - from;
  if (n > UINT32_MAX || ps->strings.len > UINT32_MAX) return bad(ps, "the record is too large");
  *off = (uint32_t)from;
  *len = (uint32_t)n;
  return HURRAY_OK;
}

/* An integer (no fraction, no exponent) within int64; *is_int false (and
 * the number skipped) for any other JSON number; HURRAY_ERR_INVALID_KV
 * when it is no number at all or past 64 bits. */
static HurrayStatus integer(Parser *ps, int64_t *out, bool *is_int, const char *what) {
  ws(ps);
  const uint8_t *q = ps->p;
  bool neg = false;
  if (q < ps->end && *q == '-') {
    neg = true;
    q++;
  }
  if (q >= ps->end || *q < '0' || *q > '9') {
    *is_int = false;
    return HURRAY_OK; /* not a number: the caller says what was expected */
  }
  if (*q == '0' && q + 1 < ps->end && q[1] >= '0' && q[1] <= '9')
    return bad(ps, "not JSON (%s: a number with a leading zero)", what);
  uint64_t mag = 0;
  bool over = false;
  while (q < ps->end && *q >= '0' && *q <= '9') {
    uint64_t d = (uint64_t)(*q - '0');
    if (mag > (UINT64_MAX - d) / 10u) over = true;
    else mag = mag * 10u + d;
    q++;
  }
  bool frac = false;
  if (q < ps->end && *q == '.') {
    frac = true;
    q++;
    if (q >= ps->end || *q < '0' || *q > '9')
      return bad(ps, "not JSON (%s: a malformed number)", what);
    while (q < ps->end && *q >= '0' && *q <= '9') q++;
  }
  if (q < ps->end && (*q == 'e' || *q == 'E')) {
    frac = true;
    q++;
    if (q < ps->end && (*q == '+' || *q == '-')) q++;
    if (q >= ps->end || *q < '0' || *q > '9')
      return bad(ps, "not JSON (%s: a malformed number)", what);
    while (q < ps->end && *q >= '0' && *q <= '9') q++;
  }
  ps->p = q;
  if (frac) {
    *is_int = false;
    return HURRAY_OK;
  }
  if (over || (neg ? mag > (uint64_t)INT64_MAX + 1u : mag > (uint64_t)INT64_MAX))
    return bad(ps, "%s does not fit in 64 bits", what);
  *out = neg ? (mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
  *is_int = true;
  return HURRAY_OK;
}

static bool literal(Parser *ps, const char *lit) {
  size_t n = strlen(lit);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n) != 0) return false;
  ps->p += n;
  return true;
}

/* Skips any JSON value, nesting at most `depth` more levels. */
static HurrayStatus skip(Parser *ps, int depth) {
  ws(ps);
  if (ps->p >= ps->end) return syntax(ps, "the text ends early");
  if (depth <= 0) return bad(ps, "nested deeper than %d levels", MAX_DEPTH);
  uint8_t c = *ps->p;
  if (c == '"') {
    uint32_t o, l;
    size_t keep = ps->strings.len;
    HURRAY_TRY(string(ps, &o, &l));
    ps->strings.len = keep; /* not kept */
    return HURRAY_OK;
  }
  if (c == '{' || c == '[') {
    ps->p++;
    uint8_t close = c == '{' ? '}' : ']';
    if (eat(ps, (char)close)) return HURRAY_OK;
    do {
      if (c == '{') {
        uint32_t o, l;
        size_t keep = ps->strings.len;
        HURRAY_TRY(string(ps, &o, &l));
        ps->strings.len = keep;
        if (!eat(ps, ':')) return syntax(ps, "expected ':'");
      }
      HURRAY_TRY(skip(ps, depth - 1));
    } while (eat(ps, ','));
    if (!eat(ps, (char)close)) return bad(ps, "not JSON (expected ',' or '%c')", (char)close);
    return HURRAY_OK;
  }
  if (literal(ps, "true") || literal(ps, "false") || literal(ps, "null")) return HURRAY_OK;
  int64_t v;
  bool is_int = false;
  const uint8_t *at = ps->p;
  HURRAY_TRY(integer(ps, &v, &is_int, "a number"));
  if (ps->p == at) return syntax(ps, "an unexpected character");
  return HURRAY_OK;
}

static bool key_is(const Parser *ps, uint32_t off, uint32_t len, const char *k) {
  return len == strlen(k) && memcmp(ps->strings.data + off, k, len) == 0;
}

/* [int, ...] into the dims arrays (shape when `shape`, else strides);
 * *n the count; false in *ok when it is no list of ints. */
static HurrayStatus int_list(Parser *ps, bool shape, uint32_t *first, uint32_t *n, bool *ok,
                             const char *what) {
  *ok = false;
  *first = ps->dims;
  *n = 0;
  if (!eat(ps, '[')) return HURRAY_OK;
  if (!eat(ps, ']')) {
    do {
      int64_t v;
      bool is_int = false;
      HURRAY_TRY(integer(ps, &v, &is_int, what));
      if (!is_int) return HURRAY_OK;
      if (ps->dims == ps->dims_cap) {
        if (ps->dims_cap >= (1u << 24)) return bad(ps, "%s: too many entries", what);
        uint32_t cap = ps->dims_cap ? ps->dims_cap * 2u : 64u;
        if (!grow((void **)&ps->shapes, (size_t)ps->dims_cap * sizeof *ps->shapes,
                  (size_t)cap * sizeof *ps->shapes) ||
            !grow((void **)&ps->strides, (size_t)ps->dims_cap * sizeof *ps->strides,
                  (size_t)cap * sizeof *ps->strides))
          return oom(ps); /* a partial grow keeps the old count valid in both */
        ps->dims_cap = cap;
      }
      if (shape) {
        if (v < 0) return HURRAY_OK; /* a negative dimension: not a shape */
        ps->shapes[ps->dims] = (uint64_t)v;
      } else {
        ps->strides[ps->dims] = v;
      }
      ps->dims++;
      (*n)++;
    } while (eat(ps, ','));
    if (!eat(ps, ']')) return bad(ps, "not JSON (%s: expected ',' or ']')", what);
  }
  *ok = true;
  return HURRAY_OK;
}

/* One record: {"base": ..., "dtype": ..., ...} for view `rec`. */
static HurrayStatus record(Parser *ps, ViewRec *rec) {
  const int nl = ps->vname_len;
  const char *nm = ps->vname;
  if (!eat(ps, '{')) return bad(ps, "views['%.*s'].base must be a tensor name", nl, nm);
  bool have_base = false, have_dtype = false, have_shape = false, have_off = false,
       have_strides = false, other = false;
  bool shape_ok = true, strides_ok = true, off_ok = true, dtype_ok = true;
  uint32_t dt_off = 0, dt_len = 0, shape_first = 0, shape_n = 0, str_first = 0, str_n = 0;
  if (!eat(ps, '}')) {
    do {
      uint32_t ko, kl;
      HURRAY_TRY(string(ps, &ko, &kl));
      if (!eat(ps, ':')) return syntax(ps, "expected ':'");
      ws(ps);
      if (key_is(ps, ko, kl, "base")) {
        if (ps->p >= ps->end || *ps->p != '"')
          return bad(ps, "views['%.*s'].base must be a tensor name", nl, nm);
        HURRAY_TRY(string(ps, &rec->base_off, &rec->base_len));
        have_base = true;
      } else if (key_is(ps, ko, kl, "dtype")) {
        have_dtype = true;
        if (ps->p < ps->end && *ps->p == '"') {
          HURRAY_TRY(string(ps, &dt_off, &dt_len));
        } else {
          dtype_ok = false;
          HURRAY_TRY(skip(ps, MAX_DEPTH));
        }
      } else if (key_is(ps, ko, kl, "shape")) {
        have_shape = true;
        const uint8_t *at = ps->p;
        HURRAY_TRY(int_list(ps, true, &shape_first, &shape_n, &shape_ok, "shape"));
        if (!shape_ok) {
          ps->p = at;
          HURRAY_TRY(skip(ps, MAX_DEPTH));
        }
      } else if (key_is(ps, ko, kl, "byte_strides")) {
        have_strides = true;
        const uint8_t *at = ps->p;
        HURRAY_TRY(int_list(ps, false, &str_first, &str_n, &strides_ok, "byte_strides"));
        if (!strides_ok) {
          ps->p = at;
          HURRAY_TRY(skip(ps, MAX_DEPTH));
        }
      } else if (key_is(ps, ko, kl, "byte_offset")) {
        have_off = true;
        bool is_int = false;
        const uint8_t *at = ps->p;
        HURRAY_TRY(integer(ps, &rec->byte_offset, &is_int, "byte_offset"));
        if (!is_int) {
          off_ok = false;
          ps->p = at;
          HURRAY_TRY(skip(ps, MAX_DEPTH));
        }
      } else {
        other = true; /* kept by nobody: skipped */
        HURRAY_TRY(skip(ps, MAX_DEPTH));
      }
    } while (eat(ps, ','));
    if (!eat(ps, '}')) return syntax(ps, "expected ',' or '}'");
  }
  if (!have_base) return bad(ps, "views['%.*s'].base must be a tensor name", nl, nm);
  if (!have_dtype && !have_shape && !have_off && !have_strides && !other) {
    rec->same = true;
    return HURRAY_OK;
  }
  if (!have_dtype || !dtype_ok)
    return bad(ps, "views['%.*s'].dtype must be a type name", nl, nm);
  if (!have_shape || !shape_ok)
    return bad(ps, "views['%.*s'].shape must be a list of non-negative ints", nl, nm);
  if (!have_strides || !strides_ok || str_n != shape_n)
    return bad(ps, "views['%.*s'].byte_strides must be %u ints", nl, nm, shape_n);
  if (!have_off || !off_ok) return bad(ps, "views['%.*s'].byte_offset must be an int", nl, nm);
  if (shape_n > HURRAY_MAX_RANK)
    return bad(ps, "view '%.*s': shape has %u dimensions, more than %u", nl, nm, shape_n,
               HURRAY_MAX_RANK);
  char tname[48];
  if (dt_len == 0 || dt_len >= sizeof tname)
    return bad(ps, "view '%.*s': dtype is not a hurray type name", nl, nm);
  memcpy(tname, ps->strings.data + dt_off, dt_len);
  tname[dt_len] = '\0';
  if (hurray_dtype_from_name(tname, &rec->dtype) != HURRAY_OK)
    return bad(ps, "view '%.*s': dtype '%s' is not a hurray type name", nl, nm, tname);
  rec->rank = shape_n;
  /* the strides were stored at str_first: line them up with the shape */
  for (uint32_t k = 0; k < shape_n; k++) ps->strides[shape_first + k] = ps->strides[str_first + k];
  rec->dims_off = shape_first;
  return HURRAY_OK;
}

static const uint8_t *view_name_at(const void *ctx, uint32_t i, size_t *len) {
  const HurrayFileViews *v = ctx;
  *len = v->recs[i].name_len;
  return v->strings + v->recs[i].name_off;
}

static void views_destroy(HurrayFileViews *v) {
  if (v == NULL) return;
  hurray__lookup_free(&v->lookup);
  hurray__free(v->recs);
  hurray__free(v->strings);
  hurray__free(v->shapes);
  hurray__free(v->strides);
  hurray__free(v);
}

static void to_view(const HurrayFileViews *vs, uint32_t i, HurrayFileView *out) {
  const ViewRec *r = &vs->recs[i];
  memset(out, 0, sizeof *out);
  out->name = (const char *)vs->strings + r->name_off;
  out->name_len = r->name_len;
  out->base = (const char *)vs->strings + r->base_off;
  out->base_len = r->base_len;
  out->base_index = r->base_index;
  out->same = r->same;
  if (r->same) return;
  out->dtype = r->dtype;
  out->rank = r->rank;
  out->shape = r->rank ? vs->shapes + r->dims_off : NULL;
  out->byte_offset = r->byte_offset;
  out->byte_strides = r->rank ? vs->strides + r->dims_off : NULL;
}

/* Parses the record `text` (at file offset `base`) into *vs. */
static HurrayStatus parse(const HurrayFile *f, const uint8_t *text, uint32_t len, uint64_t base,
                          HurrayFileViews *vs, HurrayError *err) {
  Parser ps;
  memset(&ps, 0, sizeof ps);
  ps.p = ps.start = text;
  ps.end = text + len;
  ps.base = base;
  ps.err = err;
  HurrayStatus st = HURRAY_OK;
  bool format_ok = false, have_views = false;
  if (!eat(&ps, '{')) {
    /* JSON of another kind, or no JSON at all */
    st = skip(&ps, MAX_DEPTH);
    ws(&ps);
    if (st == HURRAY_OK && ps.p != ps.end) st = syntax(&ps, "extra data after a value");
    if (st == HURRAY_OK) st = bad(&ps, "format must be 1 (the record is not a JSON object)");
    goto done;
  }
  if (!eat(&ps, '}')) {
    do {
      uint32_t ko, kl;
      if ((st = string(&ps, &ko, &kl)) != HURRAY_OK) goto done;
      if (!eat(&ps, ':')) {
        st = bad(&ps, "not JSON (expected ':')");
        goto done;
      }
      if (key_is(&ps, ko, kl, "format")) {
        int64_t v = 0;
        bool is_int = false;
        const uint8_t *at = ps.p;
        if ((st = integer(&ps, &v, &is_int, "format")) != HURRAY_OK) goto done;
        format_ok = is_int && v == 1;
        if (!is_int && (st = (ps.p = at, skip(&ps, MAX_DEPTH))) != HURRAY_OK) goto done;
      } else if (key_is(&ps, ko, kl, "views")) {
        if (have_views) {
          st = bad(&ps, "'views' appears twice");
          goto done;
        }
        have_views = true;
        if (!eat(&ps, '{')) {
          st = bad(&ps, "'views' must be an object");
          goto done;
        }
        if (!eat(&ps, '}')) {
          do {
            if (ps.count == ps.cap) {
              if (ps.cap >= (1u << 24)) {
                st = bad(&ps, "too many views");
                goto done;
              }
              uint32_t cap = ps.cap ? ps.cap * 2u : 16u;
              if (!grow((void **)&ps.recs, (size_t)ps.cap * sizeof *ps.recs,
                        (size_t)cap * sizeof *ps.recs)) {
                st = oom(&ps);
                goto done;
              }
              ps.cap = cap;
            }
            ViewRec *rec = &ps.recs[ps.count];
            memset(rec, 0, sizeof *rec);
            if ((st = string(&ps, &rec->name_off, &rec->name_len)) != HURRAY_OK) goto done;
            if (!eat(&ps, ':')) {
              st = bad(&ps, "not JSON (expected ':')");
              goto done;
            }
            ps.vname = (const char *)ps.strings.data + rec->name_off;
            ps.vname_len = (int)(rec->name_len > 48 ? 48 : rec->name_len);
            if ((st = record(&ps, rec)) != HURRAY_OK) goto done;
            ps.count++;
          } while (eat(&ps, ','));
          if (!eat(&ps, '}')) {
            st = bad(&ps, "not JSON (expected ',' or '}')");
            goto done;
          }
        }
      } else if ((st = skip(&ps, MAX_DEPTH)) != HURRAY_OK) {
        goto done;
      }
    } while (eat(&ps, ','));
    if (!eat(&ps, '}')) {
      st = bad(&ps, "not JSON (expected ',' or '}')");
      goto done;
    }
  }
  ws(&ps);
  if (ps.p != ps.end) {
    st = bad(&ps, "not JSON (extra data after the record)");
    goto done;
  }
  if (!format_ok) {
    st = bad(&ps, "format must be 1");
    goto done;
  }
  if (!have_views) {
    st = bad(&ps, "'views' must be an object");
    goto done;
  }
  /* names: a view's is no stored tensor's and no other view's; its base is stored */
  ps.p = ps.start; /* messages about names point at the record's start */
  for (uint32_t i = 0; i < ps.count; i++) {
    ViewRec *r = &ps.recs[i];
    const uint8_t *nm = ps.strings.data + r->name_off, *bn = ps.strings.data + r->base_off;
    const int nl = (int)(r->name_len > 48 ? 48 : r->name_len);
    const int bl = (int)(r->base_len > 48 ? 48 : r->base_len);
    uint32_t at;
    HurrayStatus found = r->name_len == 0 || r->name_len > HURRAY_FILE_MAX_NAME_LEN
                             ? HURRAY_ERR_NOT_FOUND
                             : hurray__file_lookup_find(f, nm, r->name_len, &at);
    if (found != HURRAY_ERR_NOT_FOUND) {
      st = bad(&ps, "views['%.*s'] names a tensor the file also stores", nl, (const char *)nm);
      goto done;
    }
    found = r->base_len == 0 || r->base_len > HURRAY_FILE_MAX_NAME_LEN
                ? HURRAY_ERR_NOT_FOUND
                : hurray__file_lookup_find(f, bn, r->base_len, &at);
    if (found == HURRAY_ERR_DUPLICATE_NAME) {
      st = bad(&ps, "views['%.*s'].base '%.*s' names two tensors of the file", nl,
               (const char *)nm, bl, (const char *)bn);
      goto done;
    }
    if (found != HURRAY_OK) {
      st = bad(&ps, "views['%.*s'].base '%.*s' is not a tensor of the file", nl,
               (const char *)nm, bl, (const char *)bn);
      goto done;
    }
    r->base_index = at;
  }
  /* hand the storage over */
  vs->count = ps.count;
  vs->recs = ps.recs;
  vs->strings = ps.strings.data;
  vs->shapes = ps.shapes;
  vs->strides = ps.strides;
  ps.recs = NULL;
  ps.strings.data = NULL;
  ps.shapes = NULL;
  ps.strides = NULL;
  if (vs->count > 0) {
    uint32_t a = 0, b = 0;
    st = hurray__lookup_build(&vs->lookup, vs->count, false, view_name_at, vs, NULL, &a, &b);
    if (st == HURRAY_ERR_DUPLICATE_NAME) {
      st = hurray__fail(err, HURRAY_ERR_INVALID_KV, base, FIELD,
                        "view '%.*s' is recorded twice",
                        (int)(vs->recs[b].name_len > 48 ? 48 : vs->recs[b].name_len),
                        (const char *)vs->strings + vs->recs[b].name_off);
    } else if (st != HURRAY_OK) {
      st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, base, FIELD, "out of memory");
    }
  }
done:
  hurray__free(ps.recs);
  hurray__buf_free(&ps.strings);
  hurray__free(ps.shapes);
  hurray__free(ps.strides);
  return st;
}

/* Builds the views of f: parsed, names resolved, each checked against its
 * base. Always returns a structure (NULL only without memory for it), whose
 * verdict says how it went. */
static HurrayFileViews *build(const HurrayFile *f) {
  HurrayFileViews *vs = hurray__calloc(1, sizeof *vs);
  if (vs == NULL) return NULL;
  HurrayError *err = &vs->error;
  hurray_error_clear(err);
  uint32_t ki;
  if (f->kv.count == 0 ||
      !hurray__lookup_find(&f->kv.lookup, f->kv.count, (const uint8_t *)HURRAY_FILE_KV_VIEWS,
                           HURRAY_FILE_KV_VIEWS_LEN, hurray__kv_key_at, &f->kv, &ki)) {
    vs->verdict = HURRAY_OK; /* no record: no views */
    return vs;
  }
  const HurrayKvValue *val = &f->kv.entries[ki].value;
  const uint8_t *kv_bytes = f->owned_kv != NULL ? f->owned_kv
                            : f->source != NULL ? f->source->base + f->info.kv_offset
                                                : NULL;
  uint64_t at = f->info.kv_offset;
  if (val->tag != HURRAY_KV_STRING) {
    if (kv_bytes != NULL) at += (uint64_t)(f->kv.entries[ki].key - kv_bytes);
    vs->verdict = hurray__fail(err, HURRAY_ERR_INVALID_KV, at, FIELD,
                               "expected a JSON string, found a value of KV tag %u", val->tag);
    return vs;
  }
  if (kv_bytes != NULL && val->v.str.data != NULL)
    at += (uint64_t)((const uint8_t *)val->v.str.data - kv_bytes);
  HurrayStatus st = parse(f, (const uint8_t *)val->v.str.data, val->v.str.len, at, vs, err);
  /* each view against its base, in record order */
  for (uint32_t i = 0; st == HURRAY_OK && i < vs->count; i++) {
    if (vs->recs[i].same) continue;
    HurrayFileView v;
    to_view(vs, i, &v);
    HurrayDescriptor *d = NULL;
    st = hurray_file_descriptor(f, v.base_index, &d, err);
    if (st != HURRAY_OK) break;
    HurrayDescriptorFields fields;
    st = hurray_descriptor_fields(d, &fields);
    if (st == HURRAY_OK) {
      HurrayViewBase b;
      hurray__view_base_of(&fields, &b);
      st = hurray__view_check(&v, &b, HURRAY_ERR_INVALID_KV, at, FIELD, err);
    }
    hurray__descriptor_drop(d);
  }
  vs->verdict = st;
  return vs;
}

/* The file's views, built on first need; *out set even on a verdict that
 * is an error (given back with the structure's saved error). */
static HurrayStatus get(const HurrayFile *cf, const HurrayFileViews **out, HurrayError *err) {
  HurrayFile *f = (HurrayFile *)(uintptr_t)cf; /* the lazy state is mutable */
  HurrayFileViews *vs = atomic_load_explicit(&f->views, memory_order_acquire);
  if (vs == NULL) {
    HurrayFileViews *mine = build(f);
    if (mine == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, FIELD,
                          "out of memory");
    HurrayFileViews *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&f->views, &expected, mine,
                                                memory_order_acq_rel, memory_order_acquire)) {
      vs = mine;
    } else {
      views_destroy(mine); /* another thread published first: its answer is the same */
      vs = expected;
    }
  }
  *out = vs;
  if (vs->verdict != HURRAY_OK) {
    if (err != NULL) *err = vs->error;
    return vs->verdict;
  }
  return HURRAY_OK;
}

void hurray__file_views_free(HurrayFile *f) {
  views_destroy(atomic_load_explicit(&f->views, memory_order_relaxed));
  atomic_store_explicit(&f->views, NULL, memory_order_relaxed);
}

/* ---- the public functions ---------------------------------------------------- */

HurrayStatus hurray_file_view_count(const HurrayFile *f, uint64_t *count, HurrayError *err) {
  if (count != NULL) *count = 0;
  if (f == NULL || count == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        f == NULL ? "file" : "count", "is NULL");
  const HurrayFileViews *vs = NULL;
  HURRAY_TRY(get(f, &vs, err));
  *count = vs->count;
  return HURRAY_OK;
}

HurrayStatus hurray_file_view(const HurrayFile *f, uint64_t i, HurrayFileView *out,
                              HurrayError *err) {
  if (f == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        f == NULL ? "file" : "out", "is NULL");
  const HurrayFileViews *vs = NULL;
  HURRAY_TRY(get(f, &vs, err));
  if (i >= vs->count)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET, "view",
                        "%llu is not below the view count %u", (unsigned long long)i,
                        vs->count);
  to_view(vs, (uint32_t)i, out);
  return HURRAY_OK;
}

HurrayStatus hurray_file_find_view(const HurrayFile *f, const char *name, size_t name_len,
                                   uint64_t *out_view, HurrayError *err) {
  if (f == NULL || out_view == NULL || (name == NULL && name_len > 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        f == NULL ? "file" : out_view == NULL ? "out_view" : "name", "is NULL");
  const HurrayFileViews *vs = NULL;
  HURRAY_TRY(get(f, &vs, err));
  uint32_t i;
  if (vs->count == 0 || name_len == 0 || name_len > HURRAY_FILE_MAX_NAME_LEN ||
      !hurray__lookup_find(&vs->lookup, vs->count, (const uint8_t *)name, name_len, view_name_at,
                           vs, &i))
    return HURRAY_ERR_NOT_FOUND;
  *out_view = i;
  return HURRAY_OK;
}

/* The descriptor of view `v` over its base (whose descriptor is `bd`): the
 * base's own for the same-tensor kind, else the view's type and geometry,
 * strided, over the base's buffer 0. */
static HurrayStatus view_descriptor(const HurrayFileView *v, const HurrayDescriptor *bd,
                                    HurrayDescriptor **out, HurrayError *err) {
  HurrayDescriptorFields bf;
  HURRAY_TRY(hurray_descriptor_fields(bd, &bf));
  if (v->same) return hurray_descriptor_clone(bd, out); /* every buffer of the base */
  int64_t strides[HURRAY_MAX_RANK];
  const int64_t item = (int64_t)(bits_of(v->dtype) / 8u);
  for (uint32_t k = 0; k < v->rank; k++) strides[k] = v->byte_strides[k] / item;
  HurrayDescriptorFields vf;
  memset(&vf, 0, sizeof vf);
  vf.type_tag = v->dtype;
  vf.rank = v->rank;
  vf.shape = v->shape;
  vf.byte_offset = bf.byte_offset + (uint64_t)v->byte_offset; /* checked: inside the base */
  vf.layout.tag = v->rank > 0 ? HURRAY_LAYOUT_STRIDED : HURRAY_LAYOUT_ROW_MAJOR;
  if (v->rank > 0) vf.layout.u.strided.strides = strides;
  vf.buffer_count = 1;
  vf.buffers = bf.buffers;
  return hurray_descriptor_from_fields(&vf, HURRAY_DECODE_STRICT, out, err);
}

HurrayStatus hurray_file_view_descriptor(const HurrayFile *f, uint64_t i, HurrayDescriptor **out,
                                         HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  HurrayFileView v;
  HURRAY_TRY(hurray_file_view(f, i, &v, err));
  HurrayDescriptor *bd = NULL;
  HURRAY_TRY(hurray_file_descriptor(f, v.base_index, &bd, err));
  HurrayStatus st = view_descriptor(&v, bd, out, err);
  hurray__descriptor_drop(bd);
  return st;
}

HurrayStatus hurray_file_view_tensor(const HurrayFile *f, uint64_t i, HurrayFileTensor *given,
                                     HurrayFileTensor **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  HurrayFileView v;
  HURRAY_TRY(hurray_file_view(f, i, &v, err));
  HurrayFileTensor *base = NULL;
  if (given != NULL) {
    if (hurray_file_tensor_index(given) != v.base_index)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "base",
                          "is index entry %llu, not the view's base (entry %llu)",
                          (unsigned long long)hurray_file_tensor_index(given),
                          (unsigned long long)v.base_index);
    base = hurray_file_tensor_retain(given);
  } else {
    HURRAY_TRY(hurray_file_tensor(f, v.base_index, &base, err));
  }
  HurrayDescriptor *d = NULL;
  HurrayStatus st = view_descriptor(&v, hurray_file_tensor_descriptor(base), &d, err);
  if (st == HURRAY_OK) st = hurray__file_tensor_derive(base, v.name, v.name_len, d, out);
  if (st == HURRAY_ERR_OUT_OF_MEMORY && *out == NULL)
    (void)hurray__fail(err, st, HURRAY_NO_OFFSET, "view", "out of memory");
  else if (st != HURRAY_OK && err != NULL && err->status != st)
    (void)hurray__fail(err, st, HURRAY_NO_OFFSET, "view", "building the view's descriptor");
  hurray_file_tensor_release(&base);
  return st;
}
