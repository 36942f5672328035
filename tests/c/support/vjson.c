/* vjson - see vjson.h. A recursive-descent parser over a byte range. */
#include "vjson.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VJ_MAX_DEPTH 64

typedef struct VjParser {
  const char *p;
  const char *end;
  char *err;
  size_t errlen;
  bool failed;
} VjParser;

/* printf-checked: every caller passes a literal format (Clang's -Wformat-nonliteral
 * under -Wformat=2 rejects vsnprintf on an unchecked one). */
#if defined(__MINGW32__)
#define VJ_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__) || defined(__clang__)
#define VJ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VJ_PRINTF(f, a)
#endif

static void vj_fail(VjParser *ps, const char *fmt, ...) VJ_PRINTF(2, 3);

static void vj_fail(VjParser *ps, const char *fmt, ...) {
  if (ps->failed) return;
  ps->failed = true;
  if (ps->err && ps->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, ps->errlen, fmt, ap);
    va_end(ap);
  }
}

static void vj_skip_ws(VjParser *ps) {
  while (ps->p < ps->end &&
         (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static void vj_clear(VjValue *v) {
  if (!v) return;
  free(v->str);
  for (size_t i = 0; i < v->count; i++) {
    vj_clear(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static bool vj_literal(VjParser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return false;
  ps->p += n;
  return true;
}

static int vj_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Appends the UTF-8 encoding of cp to out[*n]. out has room for 4 more bytes. */
static void vj_utf8(char *out, size_t *n, unsigned long cp) {
  if (cp < 0x80) {
    out[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[(*n)++] = (char)(0xE0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xF0 | (cp >> 18));
    out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

static bool vj_u4(VjParser *ps, unsigned long *out) {
  if (ps->end - ps->p < 4) return false;
  unsigned long v = 0;
  for (int i = 0; i < 4; i++) {
    int h = vj_hex(ps->p[i]);
    if (h < 0) return false;
    v = (v << 4) | (unsigned long)h;
  }
  ps->p += 4;
  *out = v;
  return true;
}

/* Parses a string literal (ps->p at the opening quote) into a new buffer. */
static char *vj_string(VjParser *ps) {
  ps->p++; /* opening quote */
  const char *start = ps->p;
  size_t cap = 0;
  /* Upper bound of the decoded size: every escape shrinks or keeps length,
   * except \uXXXX (6 bytes -> at most 4), so the raw span bounds it. */
  const char *q = start;
  while (q < ps->end && *q != '"') {
    if (*q == '\\') q++;
    q++;
  }
  if (q >= ps->end) {
    vj_fail(ps, "unterminated string");
    return NULL;
  }
  cap = (size_t)(q - start) + 1;
  char *out = malloc(cap + 4);
  if (!out) {
    vj_fail(ps, "out of memory");
    return NULL;
  }
  size_t n = 0;
  while (ps->p < ps->end && *ps->p != '"') {
    unsigned char c = (unsigned char)*ps->p++;
    if (c < 0x20) {
      vj_fail(ps, "control character in string");
      free(out);
      return NULL;
    }
    if (c != '\\') {
      out[n++] = (char)c;
      continue;
    }
    if (ps->p >= ps->end) break;
    char e = *ps->p++;
    switch (e) {
      case '"': out[n++] = '"'; break;
      case '\\': out[n++] = '\\'; break;
      case '/': out[n++] = '/'; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'n': out[n++] = '\n'; break;
      case 'r': out[n++] = '\r'; break;
      case 't': out[n++] = '\t'; break;
      case 'u': {
        unsigned long cp = 0;
        if (!vj_u4(ps, &cp)) {
          vj_fail(ps, "bad \\u escape");
          free(out);
          return NULL;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          unsigned long lo = 0;
          if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
            vj_fail(ps, "unpaired surrogate");
            free(out);
            return NULL;
          }
          ps->p += 2;
          if (!vj_u4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            vj_fail(ps, "bad surrogate pair");
            free(out);
            return NULL;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp == 0) {
          vj_fail(ps, "NUL in string");
          free(out);
          return NULL;
        }
        vj_utf8(out, &n, cp);
        break;
      }
      default:
        vj_fail(ps, "bad escape \\%c", e);
        free(out);
        return NULL;
    }
  }
  if (ps->p >= ps->end) {
    vj_fail(ps, "unterminated string");
    free(out);
    return NULL;
  }
  ps->p++; /* closing quote */
  out[n] = '\0';
  return out;
}

static bool vj_number(VjParser *ps, VjValue *v) {
  const char *s = ps->p;
  bool neg = false;
  if (ps->p < ps->end && *ps->p == '-') {
    neg = true;
    ps->p++;
  }
  if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') {
    vj_fail(ps, "bad number");
    return false;
  }
  uint64_t mag = 0;
  bool overflow = false;
  if (*ps->p == '0') {
    ps->p++;
  } else {
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
      uint64_t d = (uint64_t)(*ps->p - '0');
      if (mag > (UINT64_MAX - d) / 10) overflow = true;
      mag = mag * 10 + d;
      ps->p++;
    }
  }
  bool is_int = true;
  if (ps->p < ps->end && *ps->p == '.') {
    is_int = false;
    ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') {
      vj_fail(ps, "bad fraction");
      return false;
    }
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
  }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
    is_int = false;
    ps->p++;
    if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') {
      vj_fail(ps, "bad exponent");
      return false;
    }
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
  }
  if (is_int && !overflow) {
    v->kind = VJ_INT;
    v->neg = neg && mag != 0;
    v->mag = mag;
    return true;
  }
  size_t n = (size_t)(ps->p - s);
  char tmp[64];
  if (n >= sizeof tmp) {
    vj_fail(ps, "number too long");
    return false;
  }
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  v->kind = VJ_NUMBER;
  v->num = strtod(tmp, NULL);
  return true;
}

static bool vj_value(VjParser *ps, VjValue *v, int depth);

static bool vj_push(VjParser *ps, VjValue *v, size_t *cap, bool with_keys) {
  if (v->count < *cap) return true;
  size_t ncap = *cap ? *cap * 2 : 8;
  VjValue *items = realloc(v->items, ncap * sizeof *items);
  if (!items) {
    vj_fail(ps, "out of memory");
    return false;
  }
  v->items = items;
  if (with_keys) {
    char **keys = realloc(v->keys, ncap * sizeof *keys);
    if (!keys) {
      vj_fail(ps, "out of memory");
      return false;
    }
    v->keys = keys;
  }
  *cap = ncap;
  return true;
}

static bool vj_array(VjParser *ps, VjValue *v, int depth) {
  v->kind = VJ_ARRAY;
  size_t cap = 0;
  ps->p++;
  vj_skip_ws(ps);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    return true;
  }
  for (;;) {
    if (!vj_push(ps, v, &cap, false)) return false;
    memset(&v->items[v->count], 0, sizeof v->items[0]);
    v->count++;
    if (!vj_value(ps, &v->items[v->count - 1], depth + 1)) return false;
    vj_skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == ']') {
      ps->p++;
      return true;
    }
    vj_fail(ps, "expected ',' or ']'");
    return false;
  }
}

static bool vj_object(VjParser *ps, VjValue *v, int depth) {
  v->kind = VJ_OBJECT;
  size_t cap = 0;
  ps->p++;
  vj_skip_ws(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    return true;
  }
  for (;;) {
    vj_skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"') {
      vj_fail(ps, "expected a key");
      return false;
    }
    if (!vj_push(ps, v, &cap, true)) return false;
    char *key = vj_string(ps);
    if (!key) return false;
    memset(&v->items[v->count], 0, sizeof v->items[0]);
    v->keys[v->count] = key;
    v->count++;
    vj_skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') {
      vj_fail(ps, "expected ':'");
      return false;
    }
    ps->p++;
    if (!vj_value(ps, &v->items[v->count - 1], depth + 1)) return false;
    vj_skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == '}') {
      ps->p++;
      return true;
    }
    vj_fail(ps, "expected ',' or '}'");
    return false;
  }
}

static bool vj_value(VjParser *ps, VjValue *v, int depth) {
  if (depth > VJ_MAX_DEPTH) {
    vj_fail(ps, "nesting deeper than %d", VJ_MAX_DEPTH);
    return false;
  }
  vj_skip_ws(ps);
  if (ps->p >= ps->end) {
    vj_fail(ps, "unexpected end of input");
    return false;
  }
  char c = *ps->p;
  if (c == '{') return vj_object(ps, v, depth);
  if (c == '[') return vj_array(ps, v, depth);
  if (c == '"') {
    v->kind = VJ_STRING;
    v->str = vj_string(ps);
    return v->str != NULL;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return vj_number(ps, v);
  if (vj_literal(ps, "true")) {
    v->kind = VJ_BOOL;
    v->b = true;
    return true;
  }
  if (vj_literal(ps, "false")) {
    v->kind = VJ_BOOL;
    return true;
  }
  if (vj_literal(ps, "null")) {
    v->kind = VJ_NULL;
    return true;
  }
  vj_fail(ps, "unexpected character '%c'", c);
  return false;
}

VjValue *vj_parse(const char *text, size_t len, char *errbuf, size_t errlen) {
  VjParser ps = {text, text + len, errbuf, errlen, false};
  if (errbuf && errlen) errbuf[0] = '\0';
  VjValue *root = calloc(1, sizeof *root);
  if (!root) return NULL;
  bool ok = vj_value(&ps, root, 0);
  if (ok) {
    vj_skip_ws(&ps);
    if (ps.p != ps.end) {
      vj_fail(&ps, "trailing characters at byte %zu", (size_t)(ps.p - text));
      ok = false;
    }
  }
  if (!ok) {
    vj_fail(&ps, "syntax error");
    vj_free(root);
    return NULL;
  }
  return root;
}

void vj_free(VjValue *root) {
  if (!root) return;
  vj_clear(root);
  free(root);
}

const VjValue *vj_get(const VjValue *obj, const char *key) {
  if (!obj || obj->kind != VJ_OBJECT) return NULL;
  for (size_t i = 0; i < obj->count; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}

size_t vj_len(const VjValue *v) {
  if (!v || (v->kind != VJ_ARRAY && v->kind != VJ_OBJECT)) return 0;
  return v->count;
}

const VjValue *vj_at(const VjValue *arr, size_t i) {
  if (!arr || arr->kind != VJ_ARRAY || i >= arr->count) return NULL;
  return &arr->items[i];
}

bool vj_is_null(const VjValue *v) { return !v || v->kind == VJ_NULL; }

bool vj_bool(const VjValue *v, bool *out) {
  if (!v || v->kind != VJ_BOOL) return false;
  *out = v->b;
  return true;
}

bool vj_u64(const VjValue *v, uint64_t *out) {
  if (!v || v->kind != VJ_INT || v->neg) return false;
  *out = v->mag;
  return true;
}

bool vj_i64(const VjValue *v, int64_t *out) {
  if (!v || v->kind != VJ_INT) return false;
  if (v->neg) {
    if (v->mag > (uint64_t)INT64_MAX + 1u) return false;
    *out = v->mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v->mag;
  } else {
    if (v->mag > (uint64_t)INT64_MAX) return false;
    *out = (int64_t)v->mag;
  }
  return true;
}

const char *vj_str(const VjValue *v) {
  if (!v || v->kind != VJ_STRING) return NULL;
  return v->str;
}
