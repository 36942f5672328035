/*
 * The table of a network server and its connection loop (include/hurray/net.h
 * § the server's table; docs/internals/decisions.md § Network transport).
 *
 * An entry is a name and the tensors of its response: one tensor, or a
 * composite's head and its members in pre-order, each as its encoded
 * descriptor and its data (the buffers of its buffer table end to end, as
 * TENSOR_DATA carries them: a one-buffer tensor is sent from the caller's
 * memory, a file's mapping for instance; the buffers of a multi-buffer tensor
 * are laid end to end once, when it is added). Any number of connections
 * (hurray_net_table_serve, one thread each) read the table at once: a mutex
 * guards the entry list and the reference counts, and the reference an entry
 * gives each connection sending it keeps its memory alive even when a push
 * replaces it.
 *
 * The built-in names: HURRAY_NET_CATALOG_KEY (every entry's name and
 * descriptor, as one uint8 tensor) and "NAME#shard=K/N" (shard K of N of
 * tensor NAME, in whole rows). Responses are served in the layout the
 * specification's selection rules give (hurray_net_layout_select): the
 * stored one, or a transcoded copy owned by the connection for the response.
 */
#include "hurray/net.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hurray/alloc.h"
#include "hurray/descriptor.h"
#include "hurray/device.h"
#include "hurray/layout.h"
#include "internal/common.h"
#include "internal/file.h"
#include "internal/net.h"
#include "internal/platform.h"

/* ---- entries -------------------------------------------------------------------- */

/* A tensor of a response. */
typedef struct Part {
  uint8_t *desc; /* hurray__malloc */
  uint32_t desc_len;
  uint8_t layout; /* the stored layout tag */
  const uint8_t *data;
  uint64_t len;
  void *owned; /* hurray_free: the buffers laid end to end, or a push's data */
} Part;

typedef struct Entry {
  char *key; /* key_len bytes and a NUL */
  uint32_t key_len;
  Part *parts; /* the tensor, or a composite's head then its members in pre-order */
  uint32_t nparts;
  bool pushed;   /* parts[0].len counts against max_put_bytes */
  uint64_t refs; /* the table's and the connections'; under the lock */
  void (*release)(void *ctx);
  void *release_ctx;
} Entry;

struct HurrayNetTable {
  HurrayMutex lock; /* guards the fields below and every entry's refs */
  Entry **entries;
  size_t n, cap;
  uint64_t put_bytes; /* data of the pushed entries */
  uint64_t transcoded; /* bytes of the transcoded copies held now, every connection's */
  HurrayNetTableOptions opts; /* read-only after creation */
};

static void entry_free(Entry *e) {
  if (e == NULL) return;
  for (uint32_t i = 0; i < e->nparts; i++) {
    hurray__free(e->parts[i].desc);
    hurray_free(e->parts[i].owned);
  }
  hurray__free(e->parts);
  hurray__free(e->key);
  if (e->release != NULL) e->release(e->release_ctx);
  hurray__free(e);
}

static Entry *entry_new(const uint8_t *key, uint32_t key_len, uint32_t nparts) {
  Entry *e = hurray__calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  e->key = hurray__malloc((size_t)key_len + 1u);
  e->parts = hurray__calloc(nparts, sizeof *e->parts);
  if (e->key == NULL || e->parts == NULL) {
    entry_free(e);
    return NULL;
  }
  if (key_len != 0) memcpy(e->key, key, key_len);
  e->key[key_len] = '\0';
  e->key_len = key_len;
  e->nparts = nparts;
  e->refs = 1;
  return e;
}

static void entry_unref(HurrayNetTable *t, Entry *e) {
  if (e == NULL) return;
  hurray__mutex_lock(&t->lock);
  bool last = --e->refs == 0;
  hurray__mutex_unlock(&t->lock);
  if (last) entry_free(e);
}

/* Index of `key` in the table, or t->n. Under the lock. */
static size_t find(const HurrayNetTable *t, const uint8_t *key, uint32_t key_len) {
  for (size_t i = 0; i < t->n; i++)
    if (t->entries[i]->key_len == key_len && memcmp(t->entries[i]->key, key, key_len) == 0)
      return i;
  return t->n;
}

/* Puts `e` under its key (the table's reference moved in); the entry it
 * replaces, if any, comes back in *replaced (its table reference for the
 * caller to drop, outside the lock). Under the lock. False: no memory. */
static bool table_set(HurrayNetTable *t, Entry *e, Entry **replaced) {
  *replaced = NULL;
  size_t i = find(t, (const uint8_t *)e->key, e->key_len);
  if (i < t->n) {
    *replaced = t->entries[i];
    t->entries[i] = e;
    return true;
  }
  if (t->n == t->cap) {
    size_t cap = t->cap == 0 ? 16 : t->cap * 2;
    Entry **p = hurray__malloc(cap * sizeof *p);
    if (p == NULL) return false;
    if (t->n != 0) memcpy(p, t->entries, t->n * sizeof *p);
    hurray__free(t->entries);
    t->entries = p;
    t->cap = cap;
  }
  t->entries[t->n++] = e;
  return true;
}

static bool is_catalog(const uint8_t *key, uint32_t key_len) {
  return key_len == sizeof HURRAY_NET_CATALOG_KEY - 1 &&
         memcmp(key, HURRAY_NET_CATALOG_KEY, key_len) == 0;
}

/* ---- the table ------------------------------------------------------------------ */

HurrayStatus hurray_net_table_new(const HurrayNetTableOptions *opts, HurrayNetTable **out,
                                  HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "out is required");
  *out = NULL;
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  if (o.timeout_ms < -1)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "timeout_ms",
                        "%d (-1 waits forever)", (int)o.timeout_ms);
  HurrayNetTable *t = hurray__calloc(1, sizeof *t);
  if (t == NULL || hurray__mutex_init(&t->lock) != 0) {
    hurray__free(t);
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate a server table");
  }
  t->opts = o;
  *out = t;
  return HURRAY_OK;
}

void hurray_net_table_destroy(HurrayNetTable **t) {
  if (t == NULL || *t == NULL) return;
  HurrayNetTable *tab = *t;
  /* No connection serves it: the table's reference is the last of each. */
  for (size_t i = 0; i < tab->n; i++) entry_free(tab->entries[i]);
  hurray__free(tab->entries);
  hurray__mutex_destroy(&tab->lock);
  hurray__free(tab);
  *t = NULL;
}

size_t hurray_net_table_count(HurrayNetTable *t) {
  if (t == NULL) return 0;
  hurray__mutex_lock(&t->lock);
  size_t n = t->n;
  hurray__mutex_unlock(&t->lock);
  return n;
}

HurrayStatus hurray_net_table_key(HurrayNetTable *t, size_t i, char *out, size_t capacity,
                                  size_t *out_len, HurrayError *err) {
  if (t == NULL || out_len == NULL || (out == NULL && capacity != 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "t, out and out_len are required");
  HurrayStatus st = HURRAY_OK;
  hurray__mutex_lock(&t->lock);
  if (i >= t->n) {
    size_t n = t->n;
    hurray__mutex_unlock(&t->lock);
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "i",
                        "entry %zu of %zu", i, n);
  }
  const Entry *e = t->entries[i];
  *out_len = e->key_len;
  if (capacity <= e->key_len) {
    st = HURRAY_ERR_BUFFER_TOO_SMALL;
  } else {
    memcpy(out, e->key, (size_t)e->key_len + 1u);
  }
  hurray__mutex_unlock(&t->lock);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "capacity",
                        "%zu bytes, the key and its NUL take %zu", capacity, *out_len + 1u);
  return HURRAY_OK;
}

/* A name an entry may take. */
static HurrayStatus check_key(const uint8_t *key, size_t len, HurrayError *err) {
  if (len == 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key",
                        "an empty name cannot be served");
  if (len > UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key",
                        "%zu bytes: a tensor_key is at most 4 GiB", len);
  if (!hurray__utf8_valid(key, len))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key",
                        "not valid UTF-8 (a tensor_key is UTF-8)");
  if (is_catalog(key, (uint32_t)len))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key",
                        "'%s' is reserved: a request for it is answered with the catalog",
                        HURRAY_NET_CATALOG_KEY);
  return HURRAY_OK;
}

/* Part i of an entry from `src`: its descriptor copied, its data in place
 * (one buffer) or laid end to end (several). *members: the composite's member
 * count when it is a head, else 0. */
static HurrayStatus part_from(const HurrayNetTableTensor *src, uint32_t i, Part *p,
                              uint32_t *members, HurrayError *err) {
  char path[64];
  if (src->descriptor == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "tensors[%u].descriptor", i),
                        "no descriptor given");
  uint32_t declared = 0;
  HurrayError e;
  HurrayStatus st =
      hurray_descriptor_peek_length(src->descriptor, src->descriptor_len, &declared, &e);
  if (st == HURRAY_OK && declared != src->descriptor_len)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "tensors[%u].descriptor_len", i),
                        "%u bytes, but the descriptor's descriptor_length is %u",
                        src->descriptor_len, declared);
  HurrayDescriptor *d = NULL;
  if (st == HURRAY_OK)
    st = hurray_descriptor_decode_ex(src->descriptor, src->descriptor_len,
                                     HURRAY_DECODE_PERMISSIVE, &d, &e);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, e.offset,
                        hurray__path(path, sizeof path, "tensors[%u].descriptor%s%s", i,
                                     e.field[0] != '\0' ? "." : "", e.field),
                        "%s", e.reason);
  HurrayDescriptorFields f;
  st = hurray_descriptor_fields(d, &f);
  if (st != HURRAY_OK) {
    hurray__descriptor_drop(d);
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "descriptor", "unreadable");
  }
  uint64_t total = 0;
  if (src->buffer_count != f.buffer_count) {
    st = hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                      hurray__path(path, sizeof path, "tensors[%u].buffer_count", i),
                      "%u buffers given, the descriptor's buffer table has %u",
                      src->buffer_count, f.buffer_count);
  } else if (f.buffer_count != 0 && (src->buffers == NULL || src->sizes == NULL)) {
    st = hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                      hurray__path(path, sizeof path, "tensors[%u].buffers", i),
                      "%u buffers without their pointers and sizes", f.buffer_count);
  }
  for (uint32_t j = 0; st == HURRAY_OK && j < f.buffer_count; j++) {
    uint64_t want = f.buffers[j].byte_size;
    if (src->sizes[j] < want)
      st = hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "tensors[%u].sizes[%u]", i, j),
                        "%llu bytes, the descriptor's buffer %u holds %llu",
                        (unsigned long long)src->sizes[j], j, (unsigned long long)want);
    else if (src->buffers[j] == NULL && want != 0)
      st = hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "tensors[%u].buffers[%u]", i, j),
                        "no data for %llu bytes", (unsigned long long)want);
    else if (hurray__add_overflow_u64(total, want, &total) || total > SIZE_MAX)
      st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "tensors[%u]", i),
                        "the buffers do not fit this machine's memory");
  }
  *members = f.layout.tag == HURRAY_LAYOUT_COMPOSITE ? f.layout.u.composite.member_count : 0;
  p->layout = f.layout.tag;
  if (st == HURRAY_OK) {
    p->desc = hurray__malloc(src->descriptor_len);
    if (p->desc == NULL)
      st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot copy a descriptor of %u bytes", src->descriptor_len);
  }
  if (st == HURRAY_OK) {
    memcpy(p->desc, src->descriptor, src->descriptor_len);
    p->desc_len = src->descriptor_len;
    p->len = total;
    if (f.buffer_count == 1) {
      p->data = src->buffers[0];
    } else if (total != 0) {
      uint8_t *block = hurray_alloc((size_t)total, HURRAY_MIN_BUFFER_ALIGNMENT);
      if (block == NULL) {
        st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                          "cannot allocate %llu bytes to lay %u buffers end to end",
                          (unsigned long long)total, f.buffer_count);
      } else {
        uint64_t at = 0;
        for (uint32_t j = 0; j < f.buffer_count; j++) {
          if (f.buffers[j].byte_size != 0)
            memcpy(block + at, src->buffers[j], (size_t)f.buffers[j].byte_size);
          at += f.buffers[j].byte_size;
        }
        p->data = block;
        p->owned = block;
      }
    }
  }
  hurray__descriptor_drop(d);
  return st;
}

HurrayStatus hurray_net_table_add(HurrayNetTable *t, const char *key, size_t key_len,
                                  const HurrayNetTableTensor *tensors, uint32_t count,
                                  void (*release)(void *ctx), void *release_ctx,
                                  HurrayError *err) {
  if (t == NULL || key == NULL || tensors == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "t, key and tensors are required");
  HURRAY_TRY(check_key((const uint8_t *)key, key_len, err));
  if (count == 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "count",
                        "an entry holds at least one tensor");
  Entry *e = entry_new((const uint8_t *)key, (uint32_t)key_len, count);
  if (e == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate an entry of %u tensors", count);
  /* The tensors are one tree in pre-order: each head binds the next
   * member_count tensors (interchange.md § Composite Tensor Streaming). */
  uint64_t need = 1;
  HurrayStatus st = HURRAY_OK;
  for (uint32_t i = 0; i < count && st == HURRAY_OK; i++) {
    if (need == 0) {
      st = hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "count",
                        "%u tensors given, but the tree of tensors[0] ends after %u", count, i);
      break;
    }
    uint32_t members = 0;
    st = part_from(&tensors[i], i, &e->parts[i], &members, err);
    need = need - 1u + members;
  }
  if (st == HURRAY_OK && need != 0)
    st = hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "count",
                      "%u tensors given, but the composite's tree needs %llu more (its "
                      "members in pre-order)",
                      count, (unsigned long long)need);
  if (st != HURRAY_OK) {
    entry_free(e);
    return st;
  }
  e->release = release;
  e->release_ctx = release_ctx;
  Entry *old = NULL;
  hurray__mutex_lock(&t->lock);
  bool ok = table_set(t, e, &old);
  if (ok && old != NULL && old->pushed) t->put_bytes -= old->parts[0].len;
  hurray__mutex_unlock(&t->lock);
  if (!ok) {
    e->release = NULL; /* a failed add leaves the data to its owner */
    entry_free(e);
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot grow the table");
  }
  entry_unref(t, old);
  return HURRAY_OK;
}

/* ---- a connection ---------------------------------------------------------------- */

typedef struct Conn {
  HurrayNetTable *t;
  HurrayNetConnection *conn;
  const char *peer;
  Entry *held;   /* the entry being sent (a reference) */
  uint32_t next; /* of a composite: the next part of held */
  uint8_t *cat;  /* the catalog being sent (hurray_alloc) */
  uint8_t *desc; /* a descriptor made for this response (hurray__malloc) */
  uint32_t desc_len;
  void *xdata;   /* the tensor being sent, transcoded (hurray_alloc) */
  uint64_t xbytes; /* its share of the table's transcoding budget */
} Conn;

/* Frees the connection's transcoded copy and gives its bytes back to the
 * table's transcoding budget. */
static void drop_transcoded(Conn *c) {
  hurray_free(c->xdata);
  c->xdata = NULL;
  if (c->xbytes != 0) {
    hurray__mutex_lock(&c->t->lock);
    c->t->transcoded -= c->xbytes;
    hurray__mutex_unlock(&c->t->lock);
    c->xbytes = 0;
  }
}

/* Drops what the previous response held. */
static void conn_release(Conn *c) {
  entry_unref(c->t, c->held);
  c->held = NULL;
  hurray_free(c->cat);
  c->cat = NULL;
  hurray__free(c->desc);
  c->desc = NULL;
  c->desc_len = 0;
  drop_transcoded(c);
}

/* Appends `key` quoted as Python's repr quotes a str (single quotes unless the
 * name holds one and no double quote; backslashes, the quote and control
 * characters escaped), at most `max` bytes of it, to line[*at..cap). */
static void put_quoted(char *line, size_t cap, size_t *at, const uint8_t *key, uint32_t len,
                       uint32_t max) {
  bool single = memchr(key, '\'', len) == NULL || memchr(key, '"', len) != NULL;
  char q = single ? '\'' : '"';
  size_t n = *at;
  if (n + 1 < cap) line[n++] = q;
  uint32_t shown = len <= max ? len : max;
  while (shown > 0 && shown < len && (key[shown] & 0xC0) == 0x80) shown--; /* whole characters */
  for (uint32_t i = 0; i < shown && n + 5 < cap; i++) {
    uint8_t b = key[i];
    if (b == '\\' || b == (uint8_t)q) {
      line[n++] = '\\';
      line[n++] = (char)b;
    } else if (b == '\n' || b == '\r' || b == '\t') {
      line[n++] = '\\';
      line[n++] = b == '\n' ? 'n' : b == '\r' ? 'r' : 't';
    } else if (b < 0x20 || b == 0x7F) {
      n += (size_t)snprintf(line + n, cap - n, "\\x%02x", b);
    } else {
      line[n++] = (char)b;
    }
  }
  if (shown < len && n + 4 < cap) {
    memcpy(line + n, "...", 3);
    n += 3;
  }
  if (n + 1 < cap) line[n++] = q;
  line[n < cap ? n : cap - 1] = '\0';
  *at = n < cap ? n : cap - 1;
}

/* One log line, "PEER OP 'KEY' WHAT" (no key: "PEER OP WHAT"), when the table
 * has a log. */
static void log_line(Conn *c, const char *op, const uint8_t *key, uint32_t key_len,
                     const char *fmt, ...) HURRAY_PRINTF(5, 6);

static void log_line(Conn *c, const char *op, const uint8_t *key, uint32_t key_len,
                     const char *fmt, ...) {
  if (c->t->opts.log == NULL) return;
  char line[768];
  int w = snprintf(line, sizeof line, "%s %s ", c->peer, op);
  size_t at = w < 0 ? 0 : (size_t)w < sizeof line ? (size_t)w : sizeof line - 1;
  if (key != NULL) {
    put_quoted(line, sizeof line, &at, key, key_len, 256);
    if (at + 1 < sizeof line) line[at++] = ' ';
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + at, sizeof line - at, fmt, ap);
  va_end(ap);
  c->t->opts.log(c->t->opts.log_ctx, line);
}

/* The encoded descriptor `d` into c->desc. False: no memory. */
static bool keep_descriptor(Conn *c, const HurrayDescriptor *d) {
  uint64_t n = 0;
  if (hurray_descriptor_encoded_len(d, &n) != HURRAY_OK || n > UINT32_MAX) return false;
  hurray__free(c->desc);
  c->desc = hurray__malloc((size_t)n);
  c->desc_len = 0;
  if (c->desc == NULL || hurray_descriptor_encode(d, c->desc, n, &n) != HURRAY_OK) return false;
  c->desc_len = (uint32_t)n;
  return true;
}

/* The catalog (HURRAY_NET_CATALOG_KEY) into c->cat and c->desc: for each
 * entry, u32 name length, name, u32 descriptor length, descriptor (of its
 * head, for a composite). 0 or an ERROR code. */
static uint32_t build_catalog(Conn *c, uint64_t *len) {
  HurrayNetTable *t = c->t;
  hurray__mutex_lock(&t->lock);
  uint64_t n = 0;
  for (size_t i = 0; i < t->n; i++)
    n += 8u + (uint64_t)t->entries[i]->key_len + t->entries[i]->parts[0].desc_len;
  c->cat = n > SIZE_MAX ? NULL : hurray_alloc(n == 0 ? 1 : (size_t)n, HURRAY_MIN_BUFFER_ALIGNMENT);
  if (c->cat != NULL) {
    uint8_t *p = c->cat;
    for (size_t i = 0; i < t->n; i++) {
      const Entry *e = t->entries[i];
      hurray__st32(p, e->key_len);
      memcpy(p + 4, e->key, e->key_len);
      p += 4 + e->key_len;
      hurray__st32(p, e->parts[0].desc_len);
      memcpy(p + 4, e->parts[0].desc, e->parts[0].desc_len);
      p += 4 + e->parts[0].desc_len;
    }
  }
  hurray__mutex_unlock(&t->lock);
  if (c->cat == NULL) return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  uint64_t shape[1] = {n};
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  HurrayDescriptor *d = NULL;
  bool ok = hurray_descriptor_fields_dense(HURRAY_DTYPE_UINT8, 1, shape, HURRAY_LAYOUT_ROW_MAJOR,
                                           n, HURRAY_MIN_BUFFER_ALIGNMENT, &h, &f,
                                           NULL) == HURRAY_OK &&
            hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, NULL) == HURRAY_OK &&
            keep_descriptor(c, d);
  hurray__descriptor_drop(d);
  if (!ok) return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  *len = n;
  return 0;
}

/* "NAME#shard=K/N" (docs/internals/decisions.md § Network transport): shard
 * K of N of tensor NAME, K < N, each at most 9 digits. The length of NAME,
 * or 0 when `key` is not one. */
static uint32_t shard_key(const uint8_t *key, uint32_t key_len, uint32_t *k, uint32_t *n) {
  static const char tag[] = "#shard=";
  const uint32_t tl = sizeof tag - 1;
  for (uint32_t at = key_len; at-- > 0;) {
    if (key_len - at < tl || memcmp(key + at, tag, tl) != 0) continue;
    uint64_t v[2] = {0, 0};
    uint32_t which = 0, digits = 0;
    for (uint32_t i = at + tl; i < key_len; i++) {
      if (key[i] == '/' && which == 0 && digits > 0) {
        which = 1;
        digits = 0;
      } else if (key[i] >= '0' && key[i] <= '9' && digits < 9) {
        v[which] = v[which] * 10 + (uint64_t)(key[i] - '0');
        digits++;
      } else {
        return 0;
      }
    }
    if (which != 1 || digits == 0 || v[1] == 0 || v[0] >= v[1] || at == 0) return 0;
    *k = (uint32_t)v[0];
    *n = (uint32_t)v[1];
    return at;
  }
  return 0;
}

/* Shard k of n of entry `e` (held), split along axis 0 in whole rows (the
 * first rows % n shards one row longer): a row-major tensor of one buffer,
 * not quantized, not itself a shard. Its descriptor (with a shard section:
 * parent shape, offset) goes to c->desc; always from the stored layout.
 * 0 or an ERROR code. */
static uint32_t shard_of(Conn *c, const Entry *e, uint32_t k, uint32_t n,
                         const uint8_t **descriptor, uint32_t *descriptor_len,
                         const void **data, uint64_t *data_len) {
  const Part *p = &e->parts[0];
  HurrayDescriptor *d = NULL;
  if (e->nparts != 1 ||
      hurray_descriptor_decode_ex(p->desc, p->desc_len, HURRAY_DECODE_PERMISSIVE, &d, NULL) !=
          HURRAY_OK)
    return HURRAY_NET_E_SHARD_MISMATCH;
  HurrayDescriptorFields f;
  uint32_t code = HURRAY_NET_E_SHARD_MISMATCH;
  uint64_t shape[HURRAY_MAX_RANK], offset[HURRAY_MAX_RANK];
  if (hurray_descriptor_fields(d, &f) == HURRAY_OK && f.layout.tag == HURRAY_LAYOUT_ROW_MAJOR &&
      f.rank >= 1 && f.rank <= HURRAY_MAX_RANK && f.buffer_count == 1 &&
      f.quantization == NULL && f.shard == NULL && f.composite_member == NULL &&
      f.shape[0] >= n && f.shape[0] != HURRAY_DYNAMIC_DIM &&
      f.buffers[0].byte_size % f.shape[0] == 0 && f.buffers[0].byte_size == p->len) {
    uint64_t rows = f.shape[0];
    uint64_t row_bytes = f.buffers[0].byte_size / rows;
    uint64_t start = rows / n * k + (k < rows % n ? k : rows % n);
    uint64_t count = rows / n + (k < rows % n ? 1 : 0);
    memcpy(shape, f.shape, f.rank * sizeof *shape);
    memset(offset, 0, f.rank * sizeof *offset);
    shape[0] = count;
    offset[0] = start;
    HurrayShard sh = {f.shape, offset};
    HurrayBufferHandle b = f.buffers[0];
    b.byte_size = count * row_bytes;
    HurrayDescriptorFields g = f;
    g.shape = shape;
    g.buffers = &b;
    g.shard = &sh;
    g.statistics = NULL; /* the whole tensor's, not the shard's */
    HurrayDescriptor *sd = NULL;
    if (hurray_descriptor_from_fields(&g, HURRAY_DECODE_PERMISSIVE, &sd, NULL) == HURRAY_OK &&
        keep_descriptor(c, sd)) {
      *descriptor = c->desc;
      *descriptor_len = c->desc_len;
      *data = p->data + start * row_bytes;
      *data_len = b.byte_size;
      hurray_net_server_set_shard(c->conn, k, n);
      code = 0;
    }
    hurray__descriptor_drop(sd);
  }
  hurray__descriptor_drop(d);
  return code;
}

/* ---- layout selection ------------------------------------------------------------ */

uint8_t hurray_net_layout_select(const HurrayNetLayoutList *preferred, uint32_t request_flags,
                                 const HurrayDescriptorFields *f, uint64_t transcode_limit,
                                 uint64_t *out_bytes) {
  if (out_bytes != NULL) *out_bytes = 0;
  if (f == NULL) return 0;
  /* Rule 1: the first preference that is stored (a), or that this server
   * transcodes to (b: ALLOW_TRANSCODE and TRANSCODING for that tag, within
   * the transcoding memory limit: over it, on to the next); rule 2: the
   * stored layout. */
  bool transcoding = (request_flags & HURRAY_NET_REQ_ALLOW_TRANSCODE) != 0 && transcode_limit != 0;
  uint32_t cursor = 0;
  HurrayNetLayoutEntry e;
  while (preferred != NULL && hurray_net_layout_list_next(preferred, &cursor, &e)) {
    if (e.tag == f->layout.tag) return f->layout.tag;
    if (!transcoding || (e.tag != HURRAY_LAYOUT_ROW_MAJOR && e.tag != HURRAY_LAYOUT_COL_MAJOR))
      continue;
    uint64_t bytes = 0;
    if (hurray_layout_transcode_size(f, e.tag, &bytes, NULL) == HURRAY_OK &&
        bytes <= transcode_limit) {
      if (out_bytes != NULL) *out_bytes = bytes;
      return e.tag;
    }
  }
  return f->layout.tag;
}

/* Part `p` as the request asks for it: stored, or transcoded (into
 * c->xdata and c->desc, the connection's for this response) when the
 * selection says so. `how` receives what the log adds (" as col_major
 * (transcoded from tiled)"), or "". */
static void serve_part(Conn *c, const Part *p, const uint8_t **descriptor,
                       uint32_t *descriptor_len, const void **data, uint64_t *data_len,
                       char *how, size_t how_cap) {
  *descriptor = p->desc;
  *descriptor_len = p->desc_len;
  *data = p->data;
  *data_len = p->len;
  how[0] = '\0';
  drop_transcoded(c); /* the previous tensor of the response is sent */
  HurrayNetRequest r;
  uint32_t cursor = 0;
  HurrayNetLayoutEntry first;
  if (c->t->opts.transcode_limit == 0 || !hurray_net_server_request(c->conn, &r) ||
      (r.flags & HURRAY_NET_REQ_ALLOW_TRANSCODE) == 0 ||
      !hurray_net_layout_list_next(&r.layouts, &cursor, &first) || first.tag == p->layout)
    return; /* the stored layout, without decoding anything */
  HurrayDescriptor *d = NULL;
  HurrayDescriptorFields f;
  if (hurray_descriptor_decode_ex(p->desc, p->desc_len, HURRAY_DECODE_PERMISSIVE, &d, NULL) !=
          HURRAY_OK ||
      hurray_descriptor_fields(d, &f) != HURRAY_OK) {
    hurray__descriptor_drop(d);
    return;
  }
  /* The limit bounds the transcoded copies held at once by every connection
   * together: the selection sees what is left of it, and takes its share
   * before the copy is made (over it: the next preference, or as stored). */
  uint64_t bytes = 0;
  hurray__mutex_lock(&c->t->lock);
  uint64_t left = c->t->opts.transcode_limit - c->t->transcoded;
  uint8_t tag = left == 0 ? f.layout.tag
                          : hurray_net_layout_select(&r.layouts, r.flags, &f, left, &bytes);
  if (tag != f.layout.tag) c->t->transcoded += bytes;
  hurray__mutex_unlock(&c->t->lock);
  if (tag != f.layout.tag) {
    c->xbytes = bytes;
    /* the buffers, where they lie in the entry's data */
    const void *bufs[256];
    uint64_t sizes[256];
    uint64_t at = 0;
    for (uint32_t i = 0; i < f.buffer_count && i < 256; i++) {
      bufs[i] = p->data + at;
      sizes[i] = f.buffers[i].byte_size;
      at += sizes[i];
    }
    HurrayError e;
    HurrayDescriptor *td = NULL;
    void *x = bytes == 0 ? NULL : hurray_alloc((size_t)bytes, HURRAY_MIN_BUFFER_ALIGNMENT);
    HurrayStatus st = bytes != 0 && x == NULL ? HURRAY_ERR_OUT_OF_MEMORY : HURRAY_OK;
    if (st == HURRAY_OK && bytes != 0)
      st = hurray_layout_transcode(&f, bufs, sizes, tag, x, bytes, &e);
    if (st == HURRAY_OK) st = hurray_descriptor_transcoded(d, tag, &td, &e);
    if (st == HURRAY_OK && keep_descriptor(c, td)) {
      c->xdata = x;
      *descriptor = c->desc;
      *descriptor_len = c->desc_len;
      *data = x;
      *data_len = bytes;
      snprintf(how, how_cap, " as %s (transcoded from %s)", hurray_layout_name(tag),
               hurray_layout_name(f.layout.tag) != NULL ? hurray_layout_name(f.layout.tag)
                                                        : "its layout");
    } else {
      /* no memory: as stored (the selection's last resort) */
      hurray_free(x);
      drop_transcoded(c);
      snprintf(how, how_cap, " as stored (transcoding to %s failed: %s)",
               hurray_layout_name(tag),
               st == HURRAY_OK ? "no memory for its descriptor" : hurray_status_name(st));
    }
    hurray__descriptor_drop(td);
  }
  hurray__descriptor_drop(d);
}

static uint32_t on_get(void *ctx, const uint8_t *key, uint32_t key_len, uint8_t preferred_device,
                       const uint8_t **descriptor, uint32_t *descriptor_len, const void **data,
                       uint64_t *data_len) {
  (void)preferred_device; /* CPU only: the session applies the fallback rules */
  Conn *c = ctx;
  conn_release(c);
  if (is_catalog(key, key_len)) {
    uint64_t n = 0;
    uint32_t code = build_catalog(c, &n);
    if (code != 0) return code;
    *descriptor = c->desc;
    *descriptor_len = c->desc_len;
    *data = c->cat;
    *data_len = n;
    log_line(c, "LIST", NULL, 0, "%llu bytes", (unsigned long long)n);
    return 0;
  }
  HurrayNetTable *t = c->t;
  uint32_t sk = 0, sn = 0;
  hurray__mutex_lock(&t->lock);
  size_t i = find(t, key, key_len);
  uint32_t base = i < t->n ? 0 : shard_key(key, key_len, &sk, &sn);
  if (base != 0) i = find(t, key, base);
  Entry *e = i < t->n ? t->entries[i] : NULL;
  if (e != NULL) e->refs++;
  hurray__mutex_unlock(&t->lock);
  if (e == NULL) {
    log_line(c, "GET", key, key_len, "unknown tensor");
    return HURRAY_NET_E_UNKNOWN_TENSOR;
  }
  c->held = e;
  c->next = 1;
  if (base != 0) {
    uint32_t code = shard_of(c, e, sk, sn, descriptor, descriptor_len, data, data_len);
    if (code != 0)
      log_line(c, "GET", key, key_len, "cannot be split in shards");
    else
      log_line(c, "GET", key, key_len, "%llu bytes", (unsigned long long)*data_len);
    return code;
  }
  char how[128];
  serve_part(c, &e->parts[0], descriptor, descriptor_len, data, data_len, how, sizeof how);
  log_line(c, "GET", key, key_len, "%llu bytes%s", (unsigned long long)*data_len, how);
  return 0;
}

static uint32_t on_next(void *ctx, const uint8_t **descriptor, uint32_t *descriptor_len,
                        const void **data, uint64_t *data_len) {
  Conn *c = ctx;
  Entry *e = c->held;
  if (e == NULL || c->next >= e->nparts) return HURRAY_NET_E_INVALID_MESSAGE;
  char how[128];
  serve_part(c, &e->parts[c->next++], descriptor, descriptor_len, data, data_len, how,
             sizeof how);
  return 0;
}

static uint32_t on_put(void *ctx, const uint8_t *key, uint32_t key_len, const uint8_t *descriptor,
                       uint32_t descriptor_len, void *data, uint64_t data_len) {
  Conn *c = ctx;
  HurrayNetTable *t = c->t;
  if (key_len == 0 || is_catalog(key, key_len)) {
    hurray_free(data);
    log_line(c, "PUT", key, key_len, "refused: a reserved name");
    return HURRAY_NET_E_INVALID_MESSAGE;
  }
  Entry *e = entry_new(key, key_len, 1);
  uint8_t tag = 0;
  HurrayDescriptor *d = NULL;
  /* The session decoded and checked the descriptor: only its layout is read. */
  if (e != NULL && hurray_descriptor_decode_ex(descriptor, descriptor_len,
                                               HURRAY_DECODE_PERMISSIVE, &d, NULL) == HURRAY_OK &&
      hurray_descriptor_layout_tag(d, &tag) == HURRAY_OK)
    e->parts[0].desc = hurray__malloc(descriptor_len);
  hurray__descriptor_drop(d);
  if (e == NULL || e->parts[0].desc == NULL) {
    entry_free(e);
    hurray_free(data);
    log_line(c, "PUT", key, key_len, "refused: no memory for its entry");
    return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  }
  memcpy(e->parts[0].desc, descriptor, descriptor_len);
  e->parts[0].desc_len = descriptor_len;
  e->parts[0].layout = tag;
  e->parts[0].data = data;
  e->parts[0].owned = data;
  e->parts[0].len = data_len;
  e->pushed = true;
  Entry *old = NULL;
  hurray__mutex_lock(&t->lock);
  size_t i = find(t, key, key_len);
  uint64_t freed = i < t->n && t->entries[i]->pushed ? t->entries[i]->parts[0].len : 0;
  uint64_t total = t->put_bytes - freed + data_len;
  bool fits = total <= t->opts.max_put_bytes && total >= data_len;
  bool ok = fits && table_set(t, e, &old);
  if (ok) t->put_bytes = total;
  hurray__mutex_unlock(&t->lock);
  if (!ok) {
    entry_free(e);
    log_line(c, "PUT", key, key_len, fits ? "refused: no memory for its entry"
                                          : "refused: over max_put_bytes");
    return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  }
  entry_unref(t, old);
  log_line(c, "PUT", key, key_len, "%llu bytes", (unsigned long long)data_len);
  return 0;
}

/* The layouts the table can answer with, as a HELLO's supported_layouts: each
 * layout stored (heads and members), and row-major and column-major when it
 * transcodes. `buf` holds 768 bytes (256 entries of at most 3 bytes). */
static void hello_layouts(HurrayNetTable *t, uint8_t *buf, HurrayNetLayoutList *out) {
  bool seen[256] = {false};
  if (t->opts.transcode_limit != 0) {
    seen[HURRAY_LAYOUT_ROW_MAJOR] = true;
    seen[HURRAY_LAYOUT_COL_MAJOR] = true;
  }
  hurray__mutex_lock(&t->lock);
  for (size_t i = 0; i < t->n; i++)
    for (uint32_t j = 0; j < t->entries[i]->nparts; j++) seen[t->entries[i]->parts[j].layout] = true;
  hurray__mutex_unlock(&t->lock);
  HurrayNetLayoutEntry entries[256];
  uint16_t n = 0;
  for (unsigned tag = 1; tag < 0xFF; tag++)
    if (seen[tag]) {
      entries[n].tag = (uint8_t)tag;
      entries[n].ext_len = 0;
      entries[n].ext = NULL;
      n++;
    }
  size_t len = 0;
  memset(out, 0, sizeof *out);
  if (n != 0 && hurray_net_layout_list_encode(entries, n, buf, 768, &len, NULL) == HURRAY_OK) {
    out->count = n;
    out->len = (uint32_t)len;
    out->bytes = buf;
  }
}


/* A response ended: what it held goes back (the entry's reference, a
 * transcoded copy and its share of the table's budget) at once, not at the
 * connection's next request. */
static void response_end(void *ctx) { conn_release(ctx); }
HurrayStatus hurray_net_table_serve(HurrayNetTable *t, int fd, const char *peer,
                                    HurrayError *err) {
  if (t == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "t is required");
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = t->opts.timeout_ms;
  o.frame_size = t->opts.frame_size;
  /* a push is allocated whole before its data arrives: bounded by the cap */
  o.max_tensor_bytes =
      t->opts.writable && t->opts.max_put_bytes > 0 ? t->opts.max_put_bytes : 0;
  HurrayNetConnection *conn = NULL;
  HURRAY_TRY(hurray_net_connection_new(fd, HURRAY_NET_ROLE_SERVER, &o, &conn, err));
  Conn c;
  memset(&c, 0, sizeof c);
  c.t = t;
  c.conn = conn;
  c.peer = peer != NULL ? peer : "?";
  HurrayNetServerHandlers h;
  memset(&h, 0, sizeof h);
  h.get = on_get;
  h.put = t->opts.writable ? on_put : NULL;
  h.next = on_next;
  h.ctx = &c;
  static const uint8_t cpu = HURRAY_DEVICE_CPU;
  uint8_t layouts[768];
  HurrayNetHello hello;
  memset(&hello, 0, sizeof hello);
  hello.capabilities = HURRAY_NET_CAP_PARALLEL_STREAMS |
                       (t->opts.transcode_limit != 0 ? HURRAY_NET_CAP_TRANSCODING : 0u);
  hello_layouts(t, layouts, &hello.layouts);
  hello.device_count = 1;
  hello.devices = &cpu;
  hurray__net_on_response_end(conn, response_end, &c);
  HurrayStatus st = hurray_net_server_serve(conn, &hello, &h, err);
  conn_release(&c);
  hurray_net_connection_destroy(&conn);
  return st;
}
