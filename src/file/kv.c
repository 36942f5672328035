/*
 * The KV metadata section: encoding of values handed to the writer, and a
 * validating parser for the reader.
 *
 *   kv_count u32 | entries: key_len u16 (>= 1) | key (UTF-8) | value_tag u8 | payload
 *
 * Payloads: 0x01 string (u32 length + UTF-8), 0x02 int64, 0x03 uint64,
 * 0x04 float64 (8 bytes each), 0x05 bool (one byte, 0 or 1), 0x06 bytes
 * (u32 length + bytes), 0x07 array (element tag 0x01-0x06, u32 count, the
 * element payloads concatenated). Tags 0x00, 0x08-0xFF are rejected: reserved
 * and invalid ones by rule, private ones because their payload length is
 * unknowable.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal/file.h"

/* ---- growable buffer ---------------------------------------------------------- */

HurrayStatus hurray__buf_reserve(HurrayByteBuf *b, size_t extra) {
  if (extra <= b->cap - b->len) return HURRAY_OK;
  if (extra > SIZE_MAX / 2 - b->len) return HURRAY_ERR_OUT_OF_MEMORY;
  size_t want = b->len + extra;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < want) cap *= 2;
  uint8_t *p = hurray__malloc(cap);
  if (p == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  if (b->len > 0) memcpy(p, b->data, b->len);
  hurray__free(b->data);
  b->data = p;
  b->cap = cap;
  return HURRAY_OK;
}

void hurray__buf_free(HurrayByteBuf *b) {
  hurray__free(b->data);
  memset(b, 0, sizeof *b);
}

/* ---- writer side ---------------------------------------------------------------- */

static const char *tag_name(uint8_t tag) {
  switch (tag) {
    case HURRAY_KV_STRING: return "string";
    case HURRAY_KV_INT64: return "int64";
    case HURRAY_KV_UINT64: return "uint64";
    case HURRAY_KV_FLOAT64: return "float64";
    case HURRAY_KV_BOOL: return "bool";
    case HURRAY_KV_BYTES: return "bytes";
    case HURRAY_KV_ARRAY: return "array";
    default: return "unknown";
  }
}

/* Payload length of a scalar (non-array) value; checks strings. */
static HurrayStatus scalar_check(uint8_t tag, const HurrayKvString *s, const HurrayKvBytes *b,
                                 uint64_t *len, const char *field, HurrayError *err) {
  switch (tag) {
    case HURRAY_KV_STRING:
      if (s->data == NULL && s->len != 0)
        return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field,
                            "string data is NULL with length %u", s->len);
      if (!hurray__utf8_valid((const uint8_t *)s->data, s->len))
        return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                            "string is not valid UTF-8");
      *len = 4u + (uint64_t)s->len;
      return HURRAY_OK;
    case HURRAY_KV_BYTES:
      if (b->data == NULL && b->len != 0)
        return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field,
                            "bytes data is NULL with length %u", b->len);
      *len = 4u + (uint64_t)b->len;
      return HURRAY_OK;
    case HURRAY_KV_INT64:
    case HURRAY_KV_UINT64:
    case HURRAY_KV_FLOAT64:
      *len = 8;
      return HURRAY_OK;
    case HURRAY_KV_BOOL:
      *len = 1;
      return HURRAY_OK;
    default:
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                          "tag 0x%02X cannot be written (only 0x01-0x07)", tag);
  }
}

HurrayStatus hurray__kv_value_check(const HurrayKvValue *v, uint64_t *out_len,
                                    HurrayError *err) {
  uint64_t len = 0;
  if (v->tag != HURRAY_KV_ARRAY) {
    HURRAY_TRY(scalar_check(v->tag, &v->v.str, &v->v.bytes, &len, "value", err));
    *out_len = 1u + len;
    return HURRAY_OK;
  }
  uint8_t et = v->elem_tag;
  if (et < HURRAY_KV_STRING || et > HURRAY_KV_BYTES)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "value.elem_tag",
                        "array element tag must be 0x01-0x06, got 0x%02X", et);
  if (v->count > 0 && v->v.i64_array == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "value",
                        "array of %u elements has NULL elements", v->count);
  uint64_t total = 1u + 1u + 4u;
  char field[48];
  for (uint32_t k = 0; k < v->count; k++) {
    uint64_t el = 0;
    if (et == HURRAY_KV_STRING || et == HURRAY_KV_BYTES) {
      HurrayKvString s = {NULL, 0};
      HurrayKvBytes b = {NULL, 0};
      if (et == HURRAY_KV_STRING) s = v->v.str_array[k];
      else b = v->v.bytes_array[k];
      HURRAY_TRY(scalar_check(et, &s, &b, &el, hurray__path(field, sizeof field, "value[%u]", k),
                              err));
    } else {
      el = et == HURRAY_KV_BOOL ? 1u : 8u;
    }
    total += el; /* at most 2^32 * (4 + 2^32): no overflow */
  }
  *out_len = total;
  return HURRAY_OK;
}

static uint8_t *put_scalar(uint8_t tag, const HurrayKvString *s, const HurrayKvBytes *b,
                           int64_t i64, uint64_t u64, double f64, bool bv, uint8_t *o) {
  switch (tag) {
    case HURRAY_KV_STRING:
      hurray__st32(o, s->len);
      if (s->len) memcpy(o + 4, s->data, s->len);
      return o + 4 + s->len;
    case HURRAY_KV_BYTES:
      hurray__st32(o, b->len);
      if (b->len) memcpy(o + 4, b->data, b->len);
      return o + 4 + b->len;
    case HURRAY_KV_INT64:
      hurray__st64(o, (uint64_t)i64);
      return o + 8;
    case HURRAY_KV_UINT64:
      hurray__st64(o, u64);
      return o + 8;
    case HURRAY_KV_FLOAT64:
      hurray__st64(o, hurray__f64_bits(f64));
      return o + 8;
    default: /* BOOL */
      *o = bv ? 1u : 0u;
      return o + 1;
  }
}

void hurray__kv_value_encode(const HurrayKvValue *v, uint8_t *o) {
  *o++ = v->tag;
  static const HurrayKvString no_s = {NULL, 0};
  static const HurrayKvBytes no_b = {NULL, 0};
  switch (v->tag) {
    case HURRAY_KV_STRING: put_scalar(v->tag, &v->v.str, &no_b, 0, 0, 0.0, false, o); return;
    case HURRAY_KV_BYTES: put_scalar(v->tag, &no_s, &v->v.bytes, 0, 0, 0.0, false, o); return;
    case HURRAY_KV_INT64: put_scalar(v->tag, &no_s, &no_b, v->v.i64, 0, 0.0, false, o); return;
    case HURRAY_KV_UINT64: put_scalar(v->tag, &no_s, &no_b, 0, v->v.u64, 0.0, false, o); return;
    case HURRAY_KV_FLOAT64: put_scalar(v->tag, &no_s, &no_b, 0, 0, v->v.f64, false, o); return;
    case HURRAY_KV_BOOL: put_scalar(v->tag, &no_s, &no_b, 0, 0, 0.0, v->v.b, o); return;
    default: break; /* ARRAY */
  }
  uint8_t et = v->elem_tag;
  *o++ = et;
  hurray__st32(o, v->count);
  o += 4;
  for (uint32_t k = 0; k < v->count; k++) {
    switch (et) {
      case HURRAY_KV_STRING:
        o = put_scalar(et, &v->v.str_array[k], &no_b, 0, 0, 0.0, false, o);
        break;
      case HURRAY_KV_BYTES:
        o = put_scalar(et, &no_s, &v->v.bytes_array[k], 0, 0, 0.0, false, o);
        break;
      case HURRAY_KV_INT64:
        o = put_scalar(et, &no_s, &no_b, v->v.i64_array[k], 0, 0.0, false, o);
        break;
      case HURRAY_KV_UINT64:
        o = put_scalar(et, &no_s, &no_b, 0, v->v.u64_array[k], 0.0, false, o);
        break;
      case HURRAY_KV_FLOAT64:
        o = put_scalar(et, &no_s, &no_b, 0, 0, v->v.f64_array[k], false, o);
        break;
      default:
        o = put_scalar(et, &no_s, &no_b, 0, 0, 0.0, v->v.bool_array[k], o);
        break;
    }
  }
}

/* ---- reader side --------------------------------------------------------------- */

typedef struct KvCursor {
  const uint8_t *p;
  uint64_t len;
  uint64_t pos;
  uint64_t base; /* file offset of p[0] */
  HurrayError *err;
  char field[64];
  /* fill pass */
  HurrayKvEntry *entries; /* NULL on the counting pass */
  uint8_t *arena;
  uint64_t arena_used;
} KvCursor;

static HurrayStatus kv_fail(KvCursor *c, uint64_t at, const char *fmt, ...)
    HURRAY_PRINTF(3, 4);

static HurrayStatus kv_fail(KvCursor *c, uint64_t at, const char *fmt, ...) {
  char reason[192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return hurray__fail(c->err, HURRAY_ERR_INVALID_KV, c->base + at, c->field, "%s", reason);
}

static HurrayStatus need(KvCursor *c, uint64_t n, const char *what) {
  if (n > c->len - c->pos)
    return kv_fail(c, c->pos, "%s needs %llu bytes, %llu left in the KV section", what,
                   (unsigned long long)n, (unsigned long long)(c->len - c->pos));
  return HURRAY_OK;
}

/* Memory one array element takes in the arena. */
static uint64_t elem_mem(uint8_t et) {
  switch (et) {
    case HURRAY_KV_STRING: return sizeof(HurrayKvString);
    case HURRAY_KV_BYTES: return sizeof(HurrayKvBytes);
    case HURRAY_KV_BOOL: return sizeof(bool);
    default: return 8;
  }
}

/* Smallest wire size of one array element. */
static uint64_t elem_wire_min(uint8_t et) {
  switch (et) {
    case HURRAY_KV_STRING:
    case HURRAY_KV_BYTES: return 4;
    case HURRAY_KV_BOOL: return 1;
    default: return 8;
  }
}

/* Parses one scalar payload of tag `tag`. On the fill pass stores it through
 * the pointer matching the tag. */
static HurrayStatus scalar(KvCursor *c, uint8_t tag, HurrayKvString *s, HurrayKvBytes *b,
                           int64_t *i64, uint64_t *u64, double *f64, bool *bv) {
  uint64_t at = c->pos;
  switch (tag) {
    case HURRAY_KV_STRING:
    case HURRAY_KV_BYTES: {
      HURRAY_TRY(need(c, 4, tag_name(tag)));
      uint32_t n = hurray__ld32(c->p + c->pos);
      c->pos += 4;
      HURRAY_TRY(need(c, n, tag_name(tag)));
      const uint8_t *data = c->p + c->pos;
      if (tag == HURRAY_KV_STRING && !hurray__utf8_valid(data, n))
        return kv_fail(c, c->pos, "string of %u bytes is not valid UTF-8", n);
      c->pos += n;
      if (s != NULL) {
        s->data = (const char *)data;
        s->len = n;
      }
      if (b != NULL) {
        b->data = data;
        b->len = n;
      }
      return HURRAY_OK;
    }
    case HURRAY_KV_INT64:
    case HURRAY_KV_UINT64:
    case HURRAY_KV_FLOAT64: {
      HURRAY_TRY(need(c, 8, tag_name(tag)));
      uint64_t raw = hurray__ld64(c->p + c->pos);
      c->pos += 8;
      if (i64 != NULL) *i64 = (int64_t)raw;
      if (u64 != NULL) *u64 = raw;
      if (f64 != NULL) *f64 = hurray__f64_from_bits(raw);
      return HURRAY_OK;
    }
    case HURRAY_KV_BOOL: {
      HURRAY_TRY(need(c, 1, "bool"));
      uint8_t v = c->p[c->pos];
      if (v > 1)
        return kv_fail(c, at, "bool byte must be 0x00 or 0x01, got 0x%02X", v);
      c->pos += 1;
      if (bv != NULL) *bv = v == 1;
      return HURRAY_OK;
    }
    default:
      return kv_fail(c, at, "tag 0x%02X is not an element type", tag);
  }
}

static HurrayStatus array(KvCursor *c, HurrayKvValue *v) {
  HURRAY_TRY(need(c, 5, "array header"));
  uint8_t et = c->p[c->pos];
  if (et < HURRAY_KV_STRING || et > HURRAY_KV_BYTES)
    return kv_fail(c, c->pos, "array element tag must be 0x01-0x06, got 0x%02X", et);
  uint32_t count = hurray__ld32(c->p + c->pos + 1);
  c->pos += 5;
  /* Bound the count by the bytes left before sizing anything from it. */
  uint64_t min = elem_wire_min(et);
  if ((uint64_t)count > (c->len - c->pos) / min)
    return kv_fail(c, c->pos - 4, "array count %u cannot fit in the %llu bytes left", count,
                   (unsigned long long)(c->len - c->pos));
  uint64_t mem = (uint64_t)count * elem_mem(et);
  mem = (mem + 7u) & ~(uint64_t)7u;
  uint8_t *slot = NULL;
  if (c->entries != NULL) {
    slot = c->arena + c->arena_used;
    v->tag = HURRAY_KV_ARRAY;
    v->elem_tag = et;
    v->count = count;
    v->v.i64_array = count ? (const int64_t *)(void *)slot : NULL;
  }
  c->arena_used += mem;
  for (uint32_t k = 0; k < count; k++) {
    HurrayKvString *s = NULL;
    HurrayKvBytes *b = NULL;
    int64_t *i64 = NULL;
    uint64_t *u64 = NULL;
    double *f64 = NULL;
    bool *bv = NULL;
    if (slot != NULL) {
      switch (et) {
        case HURRAY_KV_STRING: s = (HurrayKvString *)(void *)slot + k; break;
        case HURRAY_KV_BYTES: b = (HurrayKvBytes *)(void *)slot + k; break;
        case HURRAY_KV_INT64: i64 = (int64_t *)(void *)slot + k; break;
        case HURRAY_KV_UINT64: u64 = (uint64_t *)(void *)slot + k; break;
        case HURRAY_KV_FLOAT64: f64 = (double *)(void *)slot + k; break;
        default: bv = (bool *)(void *)slot + k; break;
      }
    }
    HURRAY_TRY(scalar(c, et, s, b, i64, u64, f64, bv));
  }
  return HURRAY_OK;
}

/* One pass over the section: validates (entries NULL) or fills. */
static HurrayStatus kv_pass(KvCursor *c, uint32_t *out_count) {
  c->pos = 0;
  c->arena_used = 0;
  hurray__path(c->field, sizeof c->field, "kv.kv_count");
  HURRAY_TRY(need(c, 4, "kv_count"));
  uint32_t count = hurray__ld32(c->p);
  c->pos = 4;
  if ((uint64_t)count > (c->len - 4) / HURRAY__FILE_KV_ENTRY_MIN)
    return kv_fail(c, 0, "kv_count %u cannot fit in a section of %llu bytes", count,
                   (unsigned long long)c->len);
  for (uint32_t i = 0; i < count; i++) {
    hurray__path(c->field, sizeof c->field, "kv[%u].key", i);
    HURRAY_TRY(need(c, 2, "key_length"));
    uint16_t klen = hurray__ld16(c->p + c->pos);
    if (klen == 0) return kv_fail(c, c->pos, "key_length must be at least 1");
    c->pos += 2;
    HURRAY_TRY(need(c, klen, "key"));
    const uint8_t *key = c->p + c->pos;
    if (!hurray__utf8_valid(key, klen))
      return kv_fail(c, c->pos, "key is not valid UTF-8");
    c->pos += klen;
    hurray__path(c->field, sizeof c->field, "kv[%u].value", i);
    HURRAY_TRY(need(c, 1, "value_tag"));
    uint8_t tag = c->p[c->pos];
    uint64_t tag_at = c->pos;
    c->pos += 1;
    HurrayKvEntry *e = c->entries != NULL ? &c->entries[i] : NULL;
    if (e != NULL) {
      e->key = key;
      e->key_len = klen;
      memset(&e->value, 0, sizeof e->value);
      e->value.tag = tag;
    }
    if (tag == HURRAY_KV_ARRAY) {
      HURRAY_TRY(array(c, e != NULL ? &e->value : NULL));
    } else if (tag >= HURRAY_KV_STRING && tag <= HURRAY_KV_BYTES) {
      HurrayKvValue *v = e != NULL ? &e->value : NULL;
      HURRAY_TRY(scalar(c, tag, v && tag == HURRAY_KV_STRING ? &v->v.str : NULL,
                        v && tag == HURRAY_KV_BYTES ? &v->v.bytes : NULL,
                        v && tag == HURRAY_KV_INT64 ? &v->v.i64 : NULL,
                        v && tag == HURRAY_KV_UINT64 ? &v->v.u64 : NULL,
                        v && tag == HURRAY_KV_FLOAT64 ? &v->v.f64 : NULL,
                        v && tag == HURRAY_KV_BOOL ? &v->v.b : NULL));
    } else {
      const char *kind = tag >= 0xF0 && tag <= 0xFE ? "private (implementation-defined)"
                         : tag == 0xFF || tag == 0x00 ? "invalid"
                                                      : "reserved";
      return kv_fail(c, tag_at, "value tag 0x%02X is %s", tag, kind);
    }
  }
  hurray__path(c->field, sizeof c->field, "kv");
  if (c->pos != c->len)
    return kv_fail(c, c->pos, "%llu trailing bytes after the %u entries",
                   (unsigned long long)(c->len - c->pos), count);
  *out_count = count;
  return HURRAY_OK;
}

const uint8_t *hurray__kv_key_at(const void *ctx, uint32_t i, size_t *len) {
  const HurrayKvTable *t = ctx;
  *len = t->entries[i].key_len;
  return t->entries[i].key;
}

HurrayStatus hurray__kv_parse(const uint8_t *bytes, uint64_t len, uint64_t base,
                              HurrayKvTable *out, HurrayError *err) {
  memset(out, 0, sizeof *out);
  KvCursor c;
  memset(&c, 0, sizeof c);
  c.p = bytes;
  c.len = len;
  c.base = base;
  c.err = err;
  uint32_t count = 0;
  HURRAY_TRY(kv_pass(&c, &count)); /* validates every tag and length; allocates nothing */
  if (count == 0) return HURRAY_OK;
  uint64_t arena = c.arena_used;
  if (arena > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, base, "kv", "arrays too large");
  HurrayKvEntry *entries = hurray__calloc(count, sizeof *entries);
  uint8_t *mem = arena > 0 ? hurray__malloc((size_t)arena) : NULL;
  if (entries == NULL || (arena > 0 && mem == NULL)) {
    hurray__free(entries);
    hurray__free(mem);
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, base, "kv", "out of memory");
  }
  c.entries = entries;
  c.arena = mem;
  HurrayStatus st = kv_pass(&c, &count);
  out->entries = entries;
  out->count = count;
  out->arena = mem;
  if (st != HURRAY_OK) { /* cannot happen: the same bytes passed */
    hurray__kv_table_free(out);
    return st;
  }
  uint32_t a = 0, b = 0;
  st = hurray__lookup_build(&out->lookup, count, false, hurray__kv_key_at, out, NULL, &a, &b);
  if (st == HURRAY_ERR_DUPLICATE_NAME) {
    uint64_t at = (uint64_t)(entries[b].key - bytes) + base;
    char field[32];
    st = hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, at,
                      hurray__path(field, sizeof field, "kv[%u].key", b),
                      "key \"%.*s\" already used by kv[%u]",
                      (int)(entries[b].key_len > 64 ? 64 : entries[b].key_len),
                      (const char *)entries[b].key, a);
  } else if (st != HURRAY_OK) {
    st = hurray__fail(err, st, base, "kv", "out of memory");
  }
  if (st != HURRAY_OK) hurray__kv_table_free(out);
  return st;
}

void hurray__kv_table_free(HurrayKvTable *t) {
  hurray__lookup_free(&t->lookup);
  hurray__free(t->entries);
  hurray__free(t->arena);
  memset(t, 0, sizeof *t);
}

bool hurray_file_kv_is_own(const char *key, size_t key_len) {
  static const struct {
    const char *key;
    size_t len;
  } own[] = {{HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_VIEWS_LEN},
             {HURRAY_FILE_KV_GGUF, HURRAY_FILE_KV_GGUF_LEN},
             {HURRAY_FILE_KV_DATA_CRC32C, HURRAY_FILE_KV_DATA_CRC32C_LEN}};
  for (size_t i = 0; key != NULL && i < sizeof own / sizeof own[0]; i++)
    if (key_len == own[i].len && memcmp(key, own[i].key, key_len) == 0) return true;
  return false;
}
