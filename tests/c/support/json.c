/* A tiny recursive-descent JSON reader (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

typedef struct TjParser {
  const char *s;
  size_t pos, len;
  int depth;
} TjParser;

#define TJ_MAX_DEPTH 64

static void free_value(TjValue *v);

static void skip_ws(TjParser *p) {
  while (p->pos < p->len) {
    char c = p->s[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->pos++;
  }
}

static bool literal(TjParser *p, const char *word) {
  size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return false;
  p->pos += n;
  return true;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Parses a string at p->pos (the opening quote) into a malloc'ed buffer. */
static char *parse_string(TjParser *p) {
  if (p->pos >= p->len || p->s[p->pos] != '"') return NULL;
  p->pos++;
  char *out = malloc(p->len - p->pos + 1);
  size_t o = 0;
  if (out == NULL) return NULL;
  while (p->pos < p->len) {
    char c = p->s[p->pos++];
    if (c == '"') {
      out[o] = '\0';
      return out;
    }
    if ((unsigned char)c < 0x20) break;
    if (c != '\\') {
      out[o++] = c;
      continue;
    }
    if (p->pos >= p->len) break;
    char e = p->s[p->pos++];
    switch (e) {
      case '"': out[o++] = '"'; break;
      case '\\': out[o++] = '\\'; break;
      case '/': out[o++] = '/'; break;
      case 'b': out[o++] = '\b'; break;
      case 'f': out[o++] = '\f'; break;
      case 'n': out[o++] = '\n'; break;
      case 'r': out[o++] = '\r'; break;
      case 't': out[o++] = '\t'; break;
      case 'u': {
        if (p->len - p->pos < 4) goto fail;
        unsigned cp = 0;
        for (int k = 0; k < 4; k++) {
          int h = hex_digit(p->s[p->pos++]);
          if (h < 0) goto fail;
          cp = cp * 16u + (unsigned)h;
        }
        if (cp < 0x80) {
          out[o++] = (char)cp;
        } else if (cp < 0x800) {
          out[o++] = (char)(0xC0 | (cp >> 6));
          out[o++] = (char)(0x80 | (cp & 0x3F));
        } else {
          out[o++] = (char)(0xE0 | (cp >> 12));
          out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
          out[o++] = (char)(0x80 | (cp & 0x3F));
        }
        break;
      }
      default:
        goto fail;
    }
  }
fail:
  free(out);
  return NULL;
}

static bool parse_value(TjParser *p, TjValue *v);

static bool parse_number(TjParser *p, TjValue *v) {
  size_t start = p->pos;
  v->kind = TJ_NUMBER;
  v->is_integer = true;
  if (p->pos < p->len && p->s[p->pos] == '-') {
    v->negative = true;
    p->pos++;
  }
  size_t digits = 0;
  uint64_t mag = 0;
  bool overflow = false;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
    unsigned d = (unsigned)(p->s[p->pos] - '0');
    if (mag > (UINT64_MAX - d) / 10u) overflow = true;
    mag = mag * 10u + d;
    p->pos++;
    digits++;
  }
  if (digits == 0) return false;
  if (p->pos < p->len && p->s[p->pos] == '.') {
    v->is_integer = false;
    p->pos++;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
    v->is_integer = false;
    p->pos++;
    if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') p->pos++;
  }
  if (overflow) v->is_integer = false;
  v->magnitude = mag;
  char buf[64];
  size_t n = p->pos - start;
  if (n >= sizeof buf) n = sizeof buf - 1;
  memcpy(buf, p->s + start, n);
  buf[n] = '\0';
  v->number = strtod(buf, NULL);
  return true;
}

static bool parse_container(TjParser *p, TjValue *v, bool object) {
  char close = object ? '}' : ']';
  p->pos++;
  v->kind = object ? TJ_OBJECT : TJ_ARRAY;
  size_t cap = 0;
  skip_ws(p);
  if (p->pos < p->len && p->s[p->pos] == close) {
    p->pos++;
    return true;
  }
  for (;;) {
    if (v->count == cap) {
      size_t ncap = cap ? cap * 2 : 4;
      TjValue *items = realloc(v->items, ncap * sizeof *items);
      if (items == NULL) return false;
      v->items = items;
      if (object) {
        char **keys = realloc(v->keys, ncap * sizeof *keys);
        if (keys == NULL) return false;
        v->keys = keys;
      }
      cap = ncap;
    }
    TjValue *item = &v->items[v->count];
    memset(item, 0, sizeof *item);
    skip_ws(p);
    if (object) {
      v->keys[v->count] = parse_string(p);
      if (v->keys[v->count] == NULL) return false;
      v->count++; /* key owned from now on; value freed with the item */
      skip_ws(p);
      if (p->pos >= p->len || p->s[p->pos] != ':') return false;
      p->pos++;
      if (!parse_value(p, item)) return false;
    } else {
      v->count++;
      if (!parse_value(p, item)) return false;
    }
    skip_ws(p);
    if (p->pos >= p->len) return false;
    if (p->s[p->pos] == ',') {
      p->pos++;
      continue;
    }
    if (p->s[p->pos] == close) {
      p->pos++;
      return true;
    }
    return false;
  }
}

static bool parse_value(TjParser *p, TjValue *v) {
  memset(v, 0, sizeof *v);
  skip_ws(p);
  if (p->pos >= p->len) return false;
  char c = p->s[p->pos];
  if (c == '{' || c == '[') {
    if (++p->depth > TJ_MAX_DEPTH) return false;
    bool ok = parse_container(p, v, c == '{');
    p->depth--;
    return ok;
  }
  if (c == '"') {
    v->kind = TJ_STRING;
    v->string = parse_string(p);
    return v->string != NULL;
  }
  if (literal(p, "true")) {
    v->kind = TJ_BOOL;
    v->boolean = true;
    return true;
  }
  if (literal(p, "false")) {
    v->kind = TJ_BOOL;
    return true;
  }
  if (literal(p, "null")) {
    v->kind = TJ_NULL;
    return true;
  }
  return parse_number(p, v);
}

static void free_value(TjValue *v) {
  for (size_t i = 0; i < v->count; i++) {
    free_value(&v->items[i]);
    if (v->keys != NULL) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->string);
}

TjValue *tj_parse(const char *text, size_t len, size_t *error_at) {
  TjParser p = {text, 0, len, 0};
  TjValue *v = malloc(sizeof *v);
  if (v == NULL) return NULL;
  bool ok = parse_value(&p, v);
  if (ok) {
    skip_ws(&p);
    ok = p.pos == p.len;
  }
  if (!ok) {
    free_value(v);
    free(v);
    if (error_at != NULL) *error_at = p.pos;
    return NULL;
  }
  return v;
}

void tj_free(TjValue *v) {
  if (v == NULL) return;
  free_value(v);
  free(v);
}

const TjValue *tj_get(const TjValue *v, const char *key) {
  if (v == NULL || v->kind != TJ_OBJECT) return NULL;
  for (size_t i = 0; i < v->count; i++)
    if (strcmp(v->keys[i], key) == 0) return &v->items[i];
  return NULL;
}

const TjValue *tj_at(const TjValue *v, size_t i) {
  if (v == NULL || v->kind != TJ_ARRAY || i >= v->count) return NULL;
  return &v->items[i];
}

size_t tj_len(const TjValue *v) {
  return v != NULL && (v->kind == TJ_ARRAY || v->kind == TJ_OBJECT) ? v->count : 0;
}

bool tj_u64(const TjValue *v, uint64_t *out) {
  if (v == NULL || v->kind != TJ_NUMBER || !v->is_integer || (v->negative && v->magnitude != 0))
    return false;
  *out = v->magnitude;
  return true;
}

bool tj_i64(const TjValue *v, int64_t *out) {
  if (v == NULL || v->kind != TJ_NUMBER || !v->is_integer) return false;
  if (v->negative) {
    if (v->magnitude > (uint64_t)INT64_MAX + 1u) return false;
    *out = v->magnitude == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v->magnitude;
  } else {
    if (v->magnitude > (uint64_t)INT64_MAX) return false;
    *out = (int64_t)v->magnitude;
  }
  return true;
}

bool tj_bool(const TjValue *v, bool *out) {
  if (v == NULL || v->kind != TJ_BOOL) return false;
  *out = v->boolean;
  return true;
}

const char *tj_str(const TjValue *v) {
  return v != NULL && v->kind == TJ_STRING ? v->string : NULL;
}
