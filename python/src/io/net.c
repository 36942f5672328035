/*
 * io/net.c - the network transport from Python: hurray._hurray._NetServer and
 * _NetClient, thin classes over include/hurray/net.h's blocking transport
 * (src/net/socket.c). hurray/_net.py owns the sockets, the threads and the
 * public surface (hurray.serve, hurray.connect); this file moves the bytes,
 * the GIL released around every wait and every transfer.
 *
 * _NetServer holds the table of what it serves: one entry per name, with the
 * descriptor's bytes and the tensor's data (the buffers of its buffer table,
 * in order, without padding: a one-buffer tensor is served from its own
 * memory, a file's mapping for a file opened with mmap; the buffers of a
 * multi-buffer tensor are laid end to end once, when it is added). Many
 * connections read the table at once (serve(fd) runs in one thread per
 * connection, without the GIL); a lock guards it, and a reference count per
 * entry keeps an entry's memory alive while a connection sends it, even when
 * a push replaces it. Entries are plain C: no Python object is touched
 * without the GIL. The tensors the entries point into are kept alive by the
 * server object (its `keep` list).
 *
 * The key "__hurray_catalog__" is reserved (docs/internals/decisions.md
 * § Network transport): a request for it is answered with a uint8 tensor
 * listing every entry, u32 name length, name, u32 descriptor length,
 * descriptor, which is how a client learns keys(), shapes and dtypes
 * without fetching data.
 *
 * _NetClient is one connection (a connected socket's fd, owned by the
 * Python socket object): hello at creation, then get, put and ping, one at a
 * time (a lock; the calls of several threads queue).
 */
#include "io/net.h"

#include "core/buffer.h"
#include "core/state.h"
#include "core/tensor.h"
#include "types/composite.h"
#include "util/errors.h"

#include "hurray/alloc.h"
#include "hurray/net.h"

#include <pythread.h>
#include <string.h>

#define CATALOG_KEY "__hurray_catalog__"

/* ---- the table of a server ------------------------------------------------------- */

/* A tensor of a response: its descriptor and its data. */
typedef struct Part {
  uint8_t *desc; /* PyMem_RawMalloc */
  uint32_t desc_len;
  const uint8_t *data;
  uint64_t len;
  void *owned; /* hurray_free: buffers laid end to end */
} Part;

typedef struct Entry {
  char *key; /* key_len bytes of UTF-8 and a NUL */
  uint32_t key_len;
  uint8_t *desc; /* the tensor's, or a composite's head */
  uint32_t desc_len;
  const uint8_t *data;
  uint64_t len;
  void *owned;   /* hurray_free: buffers laid end to end, or a push's data */
  Part *more;    /* a composite: the rest of the response, in pre-order */
  uint32_t nmore, cap_more;
  uint64_t refs; /* the table's and the connections'; under the lock */
  bool pushed;   /* counted against max_put_bytes */
} Entry;

static void entry_free(Entry *e) {
  if (e == NULL) return;
  PyMem_RawFree(e->key);
  PyMem_RawFree(e->desc);
  hurray_free(e->owned);
  for (uint32_t i = 0; i < e->nmore; i++) {
    PyMem_RawFree(e->more[i].desc);
    hurray_free(e->more[i].owned);
  }
  PyMem_RawFree(e->more);
  PyMem_RawFree(e);
}

static Entry *entry_new(const uint8_t *key, uint32_t key_len, const uint8_t *desc,
                        uint32_t desc_len) {
  Entry *e = PyMem_RawCalloc(1, sizeof *e);
  if (e == NULL) return NULL;
  e->key = PyMem_RawMalloc((size_t)key_len + 1u);
  e->desc = PyMem_RawMalloc(desc_len == 0 ? 1u : desc_len);
  if (e->key == NULL || e->desc == NULL) {
    entry_free(e);
    return NULL;
  }
  if (key_len != 0) memcpy(e->key, key, key_len);
  e->key[key_len] = '\0';
  e->key_len = key_len;
  if (desc_len != 0) memcpy(e->desc, desc, desc_len);
  e->desc_len = desc_len;
  e->refs = 1;
  return e;
}

typedef struct {
  PyObject_HEAD
  PyThread_type_lock lock; /* guards the fields below `lock` */
  Entry **entries;
  size_t n, cap;
  uint64_t put_bytes; /* data of the pushed entries */
  /* set at creation, read-only after */
  uint64_t max_put_bytes;
  bool writable;
  int32_t timeout_ms;
  uint32_t frame_size;
  PyObject *keep; /* list: the tensors entries point into */
  PyObject *log;  /* callable(str) or None */
} NetServer;

#define SRV(o) ((NetServer *)(o))

static void entry_unref(NetServer *s, Entry *e) {
  if (e == NULL) return;
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  bool last = --e->refs == 0;
  PyThread_release_lock(s->lock);
  if (last) entry_free(e);
}

/* Index of `key` in the table, or n. Under the lock. */
static size_t find(NetServer *s, const uint8_t *key, uint32_t key_len) {
  for (size_t i = 0; i < s->n; i++)
    if (s->entries[i]->key_len == key_len && memcmp(s->entries[i]->key, key, key_len) == 0)
      return i;
  return s->n;
}

/* Puts `e` under its key (the table's reference moved in); the entry it
 * replaces, if any, is returned (its table reference for the caller to drop).
 * Under the lock. -1: no memory. */
static int table_set(NetServer *s, Entry *e, Entry **replaced) {
  *replaced = NULL;
  size_t i = find(s, (const uint8_t *)e->key, e->key_len);
  if (i < s->n) {
    *replaced = s->entries[i];
    s->entries[i] = e;
    return 0;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap == 0 ? 16 : s->cap * 2;
    Entry **p = PyMem_RawRealloc(s->entries, cap * sizeof *p);
    if (p == NULL) return -1;
    s->entries = p;
    s->cap = cap;
  }
  s->entries[s->n++] = e;
  return 0;
}

/* The encoded descriptor `d` (PyMem_RawMalloc'd into *out). */
static int encode_descriptor(HrpyState *st, const HurrayDescriptor *d, uint8_t **out,
                             uint32_t *out_len, const char *ctx) {
  uint64_t n = 0;
  HRPY_CANNOT_FAIL(hurray_descriptor_encoded_len(d, &n));
  if (n > UINT32_MAX) {
    hrpy_raise(st->UnsupportedError, "%s: a descriptor of %llu bytes", ctx, (unsigned long long)n);
    return -1;
  }
  uint8_t *b = PyMem_RawMalloc((size_t)n);
  if (b == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  uint64_t w = 0;
  HurrayStatus rc = hurray_descriptor_encode(d, b, n, &w);
  if (rc != HURRAY_OK) {
    PyMem_RawFree(b);
    hrpy_raise_status(st, rc, NULL, ctx);
    return -1;
  }
  *out = b;
  *out_len = (uint32_t)w;
  return 0;
}

/* The encoded descriptor of tensor `t` (PyMem_RawMalloc'd into *out). */
static int encode_desc(HrpyState *st, PyObject *t, uint8_t **out, uint32_t *out_len,
                       const char *ctx) {
  const HurrayDescriptor *d = hrpy_tensor_desc(st, t);
  if (d == NULL) return -1;
  return encode_descriptor(st, d, out, out_len, ctx);
}

/* The data of tensor `t` as the wire carries it: its one buffer in place
 * (*owned NULL), or its buffers laid end to end in new memory (*owned, free
 * with hurray_free). The GIL is released around a large copy. */
static int tensor_data(HrpyState *st, PyObject *t, const uint8_t **data, uint64_t *len,
                       void **owned, const char *ctx) {
  *owned = NULL;
  if (hrpy_tensor_check_host(st, t, ctx) < 0 || hrpy_tensor_check_readable(st, t, ctx) < 0)
    return -1;
  uint32_t nbuf = hrpy_tensor_nbuf(t);
  const HurrayDescriptorFields *f = hrpy_tensor_fields(t);
  if (nbuf != f->buffer_count) {
    hrpy_raise(st->UnsupportedError, "%s: a tensor of an opaque layout cannot be sent", ctx);
    return -1;
  }
  if (nbuf == 0) {
    *data = NULL;
    *len = 0;
    return 0;
  }
  if (nbuf == 1) {
    const HrpyBuffer *b = hrpy_tensor_buffer(t, 0);
    *data = b->data;
    *len = b->size;
    return 0;
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < nbuf; i++) {
    uint64_t sz = hrpy_tensor_buffer(t, i)->size;
    if (total + sz < total || total + sz > SIZE_MAX) {
      PyErr_NoMemory();
      return -1;
    }
    total += sz;
  }
  uint8_t *p = total == 0 ? NULL : hurray_alloc((size_t)total, HURRAY_MIN_BUFFER_ALIGNMENT);
  if (total != 0 && p == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_BEGIN_ALLOW_THREADS
  uint64_t at = 0;
  for (uint32_t i = 0; i < nbuf; i++) {
    const HrpyBuffer *b = hrpy_tensor_buffer(t, i);
    if (b->size != 0) memcpy(p + at, b->data, (size_t)b->size);
    at += b->size;
  }
  Py_END_ALLOW_THREADS
  *data = p;
  *len = total;
  *owned = p;
  return 0;
}

/* Appends the members of composite `comp` to e->more, in pre-order (a nested
 * composite: its head as its parent presents it, no data, then its members). */
static int add_members(HrpyState *st, Entry *e, PyObject *comp) {
  uint32_t n = hrpy_composite_count(comp);
  for (uint32_t i = 0; i < n; i++) {
    if (e->nmore == e->cap_more) {
      uint32_t cap = e->cap_more == 0 ? 8 : e->cap_more * 2;
      Part *p = PyMem_RawRealloc(e->more, cap * sizeof *p);
      if (p == NULL) {
        PyErr_NoMemory();
        return -1;
      }
      e->more = p;
      e->cap_more = cap;
    }
    Part *part = &e->more[e->nmore];
    memset(part, 0, sizeof *part);
    const HurrayDescriptor *d = hrpy_composite_member_descriptor(st, comp, i);
    if (d == NULL || encode_descriptor(st, d, &part->desc, &part->desc_len, "serve") < 0)
      return -1;
    e->nmore++;
    PyObject *m = hrpy_composite_member(comp, i);
    if (hrpy_composite_check(st, m)) {
      if (add_members(st, e, m) < 0) return -1;
    } else if (tensor_data(st, m, &part->data, &part->len, &part->owned, "serve") < 0) {
      return -1;
    }
  }
  return 0;
}

/* Raises StreamError for a failure of the connection, the table's class for
 * anything else. */
static PyObject *raise_net(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                           const char *ctx) {
  if (rc == HURRAY_ERR_IO) return hrpy_raise_status_as(st, st->StreamError, rc, err, ctx);
  return hrpy_raise_status(st, rc, err, ctx);
}

static PyObject *server_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"log", "writable", "max_put_bytes", "timeout", "frame_size", NULL};
  PyObject *log = Py_None;
  int writable = 0;
  unsigned long long max_put = 0;
  double timeout = 300.0;
  unsigned int frame = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$pKdI:_NetServer", kw, &log, &writable,
                                   &max_put, &timeout, &frame))
    return NULL;
  NetServer *s = (NetServer *)type->tp_alloc(type, 0);
  if (s == NULL) return NULL;
  s->lock = PyThread_allocate_lock();
  s->keep = PyList_New(0);
  if (s->lock == NULL || s->keep == NULL) {
    Py_DECREF(s);
    return PyErr_NoMemory();
  }
  s->log = log == Py_None ? NULL : Py_NewRef(log);
  s->writable = writable != 0;
  s->max_put_bytes = max_put;
  s->timeout_ms = timeout < 0 ? -1 : timeout * 1000.0 > 2e9 ? 2000000000 : (int32_t)(timeout * 1000.0);
  if (s->timeout_ms == 0) s->timeout_ms = 1;
  s->frame_size = frame;
  return (PyObject *)s;
}

static int server_traverse(PyObject *o, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(o));
  Py_VISIT(SRV(o)->keep);
  Py_VISIT(SRV(o)->log);
  return 0;
}

static int server_clear(PyObject *o) {
  Py_CLEAR(SRV(o)->log);
  return 0;
}

static void server_dealloc(PyObject *o) {
  NetServer *s = SRV(o);
  PyTypeObject *tp = Py_TYPE(o);
  PyObject_GC_UnTrack(o);
  /* No connection runs: each holds a reference to the server. */
  for (size_t i = 0; i < s->n; i++) entry_free(s->entries[i]);
  PyMem_RawFree(s->entries);
  if (s->lock != NULL) PyThread_free_lock(s->lock);
  Py_CLEAR(s->keep); /* after the entries that point into them */
  Py_CLEAR(s->log);
  tp->tp_free(o);
  Py_DECREF(tp);
}

/* add(name, tensor, /): serves `tensor` under `name` (replacing an entry). */
static PyObject *server_add(PyObject *self, PyObject *args) {
  NetServer *s = SRV(self);
  HrpyState *st = hrpy_state_of(self);
  PyObject *name, *t;
  if (!PyArg_ParseTuple(args, "UO:add", &name, &t)) return NULL;
  bool composite = hrpy_composite_check(st, t);
  if (!composite && !hrpy_tensor_check(st, t))
    return PyErr_Format(PyExc_TypeError, "serve: %R is a %.100s, not a hurray.Tensor or "
                        "hurray.Composite", name, Py_TYPE(t)->tp_name);
  Py_ssize_t klen = 0;
  const char *key = PyUnicode_AsUTF8AndSize(name, &klen);
  if (key == NULL) return NULL;
  if (strcmp(key, CATALOG_KEY) == 0 || klen == 0 || (size_t)klen > UINT32_MAX)
    return PyErr_Format(PyExc_ValueError, "serve: %R is not a name a server can serve", name);
  uint8_t *desc = NULL;
  uint32_t desc_len = 0;
  int rc = composite ? encode_descriptor(st, hrpy_composite_head(t), &desc, &desc_len, "serve")
                     : encode_desc(st, t, &desc, &desc_len, "serve");
  if (rc < 0) return NULL;
  const uint8_t *data = NULL;
  uint64_t len = 0;
  void *owned = NULL;
  if (!composite && tensor_data(st, t, &data, &len, &owned, "serve") < 0) {
    PyMem_RawFree(desc);
    return NULL;
  }
  Entry *e = entry_new((const uint8_t *)key, (uint32_t)klen, desc, desc_len);
  PyMem_RawFree(desc);
  if (e == NULL) {
    hurray_free(owned);
    return PyErr_NoMemory();
  }
  e->data = data;
  e->len = len;
  e->owned = owned;
  if ((composite && add_members(st, e, t) < 0) || PyList_Append(s->keep, t) < 0) {
    entry_free(e);
    return NULL;
  }
  Entry *old = NULL;
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  int r = table_set(s, e, &old);
  if (r == 0 && old != NULL && old->pushed) s->put_bytes -= old->len;
  PyThread_release_lock(s->lock);
  if (r < 0) {
    entry_free(e);
    return PyErr_NoMemory();
  }
  entry_unref(s, old);
  Py_RETURN_NONE;
}

/* keys(): the names served, in the order they were added. */
static PyObject *server_keys(PyObject *self, PyObject *unused) {
  (void)unused;
  NetServer *s = SRV(self);
  PyObject *out = PyList_New(0);
  if (out == NULL) return NULL;
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  size_t n = s->n;
  char **names = PyMem_RawMalloc((n == 0 ? 1 : n) * sizeof *names);
  int failed = names == NULL;
  for (size_t i = 0; i < n && !failed; i++) {
    names[i] = NULL;
    size_t kl = s->entries[i]->key_len;
    names[i] = PyMem_RawMalloc(kl + 1);
    if (names[i] == NULL) {
      failed = 1;
      for (size_t j = 0; j < i; j++) PyMem_RawFree(names[j]);
      break;
    }
    memcpy(names[i], s->entries[i]->key, kl + 1);
  }
  PyThread_release_lock(s->lock);
  if (failed) {
    PyMem_RawFree(names);
    Py_DECREF(out);
    return PyErr_NoMemory();
  }
  for (size_t i = 0; i < n; i++) {
    PyObject *k = out == NULL ? NULL : PyUnicode_FromString(names[i]);
    if (out != NULL && (k == NULL || PyList_Append(out, k) < 0)) Py_CLEAR(out);
    Py_XDECREF(k);
    PyMem_RawFree(names[i]);
  }
  PyMem_RawFree(names);
  return out;
}

/* ---- a connection of the server ----------------------------------------------- */

typedef struct Conn {
  NetServer *srv;
  HurrayNetConnection *conn;
  PyObject *peer; /* str, for the log */
  Entry *held;    /* the entry being sent */
  uint32_t part;  /* of a composite: the next of held->more */
  uint8_t *cat;   /* the catalog being sent (hurray_alloc) */
  uint8_t *cat_desc;
  uint32_t cat_desc_len;
} Conn;

static void conn_release(Conn *c) {
  entry_unref(c->srv, c->held);
  c->held = NULL;
  hurray_free(c->cat);
  c->cat = NULL;
  PyMem_RawFree(c->cat_desc);
  c->cat_desc = NULL;
}

/* One log line ("PEER OP NAME WHAT"), when the server has a log; called
 * without the GIL. */
static void log_line(Conn *c, const char *op, const uint8_t *key, uint32_t key_len,
                     const char *what, unsigned long long n) {
  if (c->srv->log == NULL) return;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *k = PyUnicode_DecodeUTF8(key == NULL ? "" : (const char *)key, (Py_ssize_t)key_len,
                                     "replace");
  PyObject *line = k == NULL            ? NULL
                   : key == NULL        ? PyUnicode_FromFormat("%S %s %llu bytes", c->peer, op, n)
                   : *what != '\0'      ? PyUnicode_FromFormat("%S %s %R %s", c->peer, op, k, what)
                                        : PyUnicode_FromFormat("%S %s %R %llu bytes", c->peer, op,
                                                               k, n);
  PyObject *r = line == NULL ? NULL : PyObject_CallOneArg(c->srv->log, line);
  if (r == NULL) PyErr_WriteUnraisable(c->srv->log);
  Py_XDECREF(r);
  Py_XDECREF(line);
  Py_XDECREF(k);
  PyGILState_Release(g);
}

static void st32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Builds the catalog into c->cat / c->cat_desc. Returns 0 or an ERROR code. */
static uint32_t build_catalog(Conn *c, uint64_t *len) {
  NetServer *s = c->srv;
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  uint64_t n = 0;
  for (size_t i = 0; i < s->n; i++) n += 8u + s->entries[i]->key_len + s->entries[i]->desc_len;
  c->cat = hurray_alloc(n == 0 ? 1 : (size_t)n, HURRAY_MIN_BUFFER_ALIGNMENT);
  if (c->cat != NULL) {
    uint8_t *p = c->cat;
    for (size_t i = 0; i < s->n; i++) {
      const Entry *e = s->entries[i];
      st32(p, e->key_len);
      memcpy(p + 4, e->key, e->key_len);
      p += 4 + e->key_len;
      st32(p, e->desc_len);
      memcpy(p + 4, e->desc, e->desc_len);
      p += 4 + e->desc_len;
    }
  }
  PyThread_release_lock(s->lock);
  if (c->cat == NULL) return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  uint64_t shape[1] = {n};
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  HurrayDescriptor *d = NULL;
  uint64_t dl = 0;
  if (hurray_descriptor_fields_dense(HURRAY_DTYPE_UINT8, 1, shape, HURRAY_LAYOUT_ROW_MAJOR, n,
                                     HURRAY_MIN_BUFFER_ALIGNMENT, &h, &f, NULL) != HURRAY_OK ||
      hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, NULL) != HURRAY_OK ||
      hurray_descriptor_encoded_len(d, &dl) != HURRAY_OK ||
      (c->cat_desc = PyMem_RawMalloc((size_t)dl)) == NULL ||
      hurray_descriptor_encode(d, c->cat_desc, dl, &dl) != HURRAY_OK) {
    if (d != NULL) HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
    return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  }
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  c->cat_desc_len = (uint32_t)dl;
  *len = n;
  return 0;
}

/* "NAME#shard=K/N" (docs/internals/decisions.md § Network transport): shard
 * K of N of tensor NAME. The length of NAME, or 0 when `key` is not one. */
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

/* Shard k of n of entry `e` (held), split along axis 0: a row-major tensor
 * of one buffer, whole rows. Its descriptor (with a shard section) goes to
 * c->cat_desc. Returns 0 or an ERROR code. */
static uint32_t shard_of(Conn *c, const Entry *e, uint32_t k, uint32_t n,
                         const uint8_t **descriptor, uint32_t *descriptor_len,
                         const void **data, uint64_t *data_len) {
  HurrayDescriptor *d = NULL;
  if (e->nmore != 0 || hurray_descriptor_decode(e->desc, e->desc_len, &d) != HURRAY_OK)
    return HURRAY_NET_E_SHARD_MISMATCH;
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
  uint32_t code = HURRAY_NET_E_SHARD_MISMATCH;
  uint64_t rows = f.rank >= 1 ? f.shape[0] : 0;
  uint64_t shape[HURRAY_MAX_RANK], offset[HURRAY_MAX_RANK];
  if (f.layout.tag == HURRAY_LAYOUT_ROW_MAJOR && f.rank >= 1 && f.rank <= HURRAY_MAX_RANK &&
      f.buffer_count == 1 && f.quantization == NULL && f.shard == NULL &&
      f.composite_member == NULL && rows >= n && rows != HURRAY_DYNAMIC_DIM &&
      f.buffers[0].byte_size % rows == 0 && f.buffers[0].byte_size == e->len) {
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
    uint64_t dl = 0;
    if (hurray_descriptor_from_fields(&g, HURRAY_DECODE_PERMISSIVE, &sd, NULL) == HURRAY_OK &&
        hurray_descriptor_encoded_len(sd, &dl) == HURRAY_OK && dl <= UINT32_MAX &&
        (c->cat_desc = PyMem_RawMalloc((size_t)dl)) != NULL &&
        hurray_descriptor_encode(sd, c->cat_desc, dl, &dl) == HURRAY_OK) {
      c->cat_desc_len = (uint32_t)dl;
      *descriptor = c->cat_desc;
      *descriptor_len = c->cat_desc_len;
      *data = e->data + start * row_bytes;
      *data_len = b.byte_size;
      hurray_net_server_set_shard(c->conn, k, n);
      code = 0;
    }
    if (sd != NULL) HRPY_CANNOT_FAIL(hurray_descriptor_destroy(sd));
  }
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return code;
}

static uint32_t on_get(void *ctx, const uint8_t *key, uint32_t key_len, uint8_t preferred_device,
                       const uint8_t **descriptor, uint32_t *descriptor_len, const void **data,
                       uint64_t *data_len) {
  (void)preferred_device; /* CPU only: the session applies the fallback rules */
  Conn *c = ctx;
  conn_release(c);
  if (key_len == sizeof CATALOG_KEY - 1 && memcmp(key, CATALOG_KEY, key_len) == 0) {
    uint64_t n = 0;
    uint32_t code = build_catalog(c, &n);
    if (code != 0) return code;
    *descriptor = c->cat_desc;
    *descriptor_len = c->cat_desc_len;
    *data = c->cat;
    *data_len = n;
    log_line(c, "LIST", NULL, 0, "", n);
    return 0;
  }
  NetServer *s = c->srv;
  uint32_t sk = 0, sn = 0;
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  size_t i = find(s, key, key_len);
  uint32_t base = i < s->n ? 0 : shard_key(key, key_len, &sk, &sn);
  if (base != 0) i = find(s, key, base);
  Entry *e = i < s->n ? s->entries[i] : NULL;
  if (e != NULL) e->refs++;
  PyThread_release_lock(s->lock);
  if (e == NULL) {
    log_line(c, "GET", key, key_len, "unknown tensor", 0);
    return HURRAY_NET_E_UNKNOWN_TENSOR;
  }
  c->held = e;
  c->part = 0;
  if (base != 0) {
    uint32_t code = shard_of(c, e, sk, sn, descriptor, descriptor_len, data, data_len);
    log_line(c, "GET", key, key_len, code != 0 ? "cannot be split in shards" : "", *data_len);
    return code;
  }
  *descriptor = e->desc;
  *descriptor_len = e->desc_len;
  *data = e->data;
  *data_len = e->len;
  log_line(c, "GET", key, key_len, "", e->len);
  return 0;
}

static uint32_t on_next(void *ctx, const uint8_t **descriptor, uint32_t *descriptor_len,
                        const void **data, uint64_t *data_len) {
  Conn *c = ctx;
  Entry *e = c->held;
  if (e == NULL || c->part >= e->nmore) return HURRAY_NET_E_INVALID_MESSAGE;
  const Part *p = &e->more[c->part++];
  *descriptor = p->desc;
  *descriptor_len = p->desc_len;
  *data = p->data;
  *data_len = p->len;
  return 0;
}

static uint32_t on_put(void *ctx, const uint8_t *key, uint32_t key_len, const uint8_t *descriptor,
                       uint32_t descriptor_len, void *data, uint64_t data_len) {
  Conn *c = ctx;
  NetServer *s = c->srv;
  if (key_len == 0 ||
      (key_len == sizeof CATALOG_KEY - 1 && memcmp(key, CATALOG_KEY, key_len) == 0)) {
    hurray_free(data);
    log_line(c, "PUT", key, key_len, "refused: a reserved name", data_len);
    return HURRAY_NET_E_INVALID_MESSAGE;
  }
  Entry *e = entry_new(key, key_len, descriptor, descriptor_len);
  if (e == NULL) {
    hurray_free(data);
    return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  }
  e->data = data;
  e->owned = data;
  e->len = data_len;
  e->pushed = true;
  Entry *old = NULL;
  PyThread_acquire_lock(s->lock, WAIT_LOCK);
  size_t i = find(s, key, key_len);
  uint64_t freed = i < s->n && s->entries[i]->pushed ? s->entries[i]->len : 0;
  uint64_t total = s->put_bytes - freed + data_len;
  int r = -2;
  if (total <= s->max_put_bytes && total >= data_len) r = table_set(s, e, &old);
  if (r == 0) s->put_bytes = total;
  PyThread_release_lock(s->lock);
  if (r != 0) {
    entry_free(e);
    log_line(c, "PUT", key, key_len, "refused: over max_put_bytes", data_len);
    return HURRAY_NET_E_MESSAGE_TOO_LARGE;
  }
  entry_unref(s, old);
  log_line(c, "PUT", key, key_len, "", data_len);
  return 0;
}

/* serve(fd, peer, /): speaks the protocol on the connected socket `fd` until
 * the client closes it (None), without the GIL. The socket is the caller's. */
static PyObject *server_serve(PyObject *self, PyObject *args) {
  NetServer *s = SRV(self);
  HrpyState *st = hrpy_state_of(self);
  int fd;
  PyObject *peer;
  if (!PyArg_ParseTuple(args, "iU:serve", &fd, &peer)) return NULL;
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = s->timeout_ms;
  o.frame_size = s->frame_size;
  o.max_tensor_bytes = s->writable && s->max_put_bytes > 0 ? s->max_put_bytes : 0;
  HurrayNetConnection *conn = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_net_connection_new(fd, HURRAY_NET_ROLE_SERVER, &o, &conn, &err);
  if (rc != HURRAY_OK) return raise_net(st, rc, &err, "serve");
  Conn c;
  memset(&c, 0, sizeof c);
  c.srv = s;
  c.peer = peer;
  HurrayNetServerHandlers h;
  memset(&h, 0, sizeof h);
  h.get = on_get;
  h.put = s->writable ? on_put : NULL;
  h.next = on_next;
  h.ctx = &c;
  c.conn = conn;
  /* CPU and standard memory; parallel shards ("NAME#shard=K/N") */
  static const uint8_t cpu = HURRAY_DEVICE_CPU;
  HurrayNetHello hello;
  memset(&hello, 0, sizeof hello);
  hello.capabilities = HURRAY_NET_CAP_PARALLEL_STREAMS;
  hello.device_count = 1;
  hello.devices = &cpu;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_net_server_serve(conn, &hello, &h, &err);
  conn_release(&c);
  hurray_net_connection_destroy(&conn);
  Py_END_ALLOW_THREADS
  if (rc != HURRAY_OK) return raise_net(st, rc, &err, "serve");
  Py_RETURN_NONE;
}

static PyMethodDef server_methods[] = {
    {"add", server_add, METH_VARARGS,
     "add($self, name, tensor, /)\n--\n\nServes `tensor` under `name` (replacing what had it)."},
    {"keys", server_keys, METH_NOARGS, "keys($self, /)\n--\n\nThe names served."},
    {"serve", server_serve, METH_VARARGS,
     "serve($self, fd, peer, /)\n--\n\nServes the connected socket `fd` until its client closes it, "
     "without the GIL; StreamError when the connection fails."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot server_slots[] = {
    {Py_tp_doc,
     "_NetServer(log=None, *, writable=False, max_put_bytes=0, timeout=300.0, frame_size=0)\n"
     "--\n\nThe table of a network server and its connection loop (hurray.serve builds "
     "on it)."},
    {Py_tp_new, server_new},
    {Py_tp_dealloc, server_dealloc},
    {Py_tp_traverse, server_traverse},
    {Py_tp_clear, server_clear},
    {Py_tp_methods, server_methods},
    {0, NULL},
};

static PyType_Spec server_spec = {
    .name = "hurray._NetServer",
    .basicsize = sizeof(NetServer),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = server_slots,
};

/* ---- client ------------------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  PyThread_type_lock lock; /* one call at a time */
  HurrayNetConnection *c;  /* NULL once closed */
  bool broken;             /* a failure left the connection unusable */
} NetClient;

#define CLI(o) ((NetClient *)(o))

static PyObject *client_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"fd", "timeout", "max_tensor_bytes", "frame_size", "parallel_ok", NULL};
  HrpyState *st = hrpy_state_of_type(type);
  int fd;
  double timeout = 30.0;
  unsigned long long max_tensor = 0;
  unsigned int frame = 0;
  int parallel = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "i|$dKIp:_NetClient", kw, &fd, &timeout,
                                   &max_tensor, &frame, &parallel))
    return NULL;
  NetClient *self = (NetClient *)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  self->lock = PyThread_allocate_lock();
  if (self->lock == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  o.timeout_ms = timeout < 0 ? -1 : timeout * 1000.0 > 2e9 ? 2000000000 : (int32_t)(timeout * 1000.0);
  if (o.timeout_ms == 0) o.timeout_ms = 1;
  o.max_tensor_bytes = max_tensor;
  o.frame_size = frame;
  o.request_flags = parallel ? HURRAY_NET_REQ_PARALLEL_OK : 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_net_connection_new(fd, HURRAY_NET_ROLE_CLIENT, &o, &self->c, &err);
  if (rc == HURRAY_OK) {
    Py_BEGIN_ALLOW_THREADS
    rc = hurray_net_client_hello(self->c, NULL, &err);
    Py_END_ALLOW_THREADS
  }
  if (rc != HURRAY_OK) {
    Py_DECREF(self);
    return raise_net(st, rc, &err, "connect");
  }
  return (PyObject *)self;
}

static void client_dealloc(PyObject *o) {
  NetClient *self = CLI(o);
  PyTypeObject *tp = Py_TYPE(o);
  hurray_net_connection_destroy(&self->c);
  if (self->lock != NULL) PyThread_free_lock(self->lock);
  tp->tp_free(o);
  Py_DECREF(tp);
}

/* Takes the client's lock (GIL released while waiting); the connection, or
 * NULL with an exception when it is closed or broken (lock released). */
static HurrayNetConnection *client_acquire(HrpyState *st, NetClient *self, const char *ctx) {
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS
  if (self->c == NULL || self->broken) {
    PyThread_release_lock(self->lock);
    hrpy_raise(self->c == NULL ? PyExc_ValueError : st->StreamError,
               self->c == NULL ? "%s: the connection is closed"
                               : "%s: the connection failed earlier; connect again",
               ctx);
    return NULL;
  }
  return self->c;
}

/* After a call: a connection that failed or whose session closed is broken. */
static void client_release(NetClient *self, HurrayStatus rc) {
  if (rc == HURRAY_ERR_IO || rc == HURRAY_ERR_OUT_OF_MEMORY ||
      hurray_net_session_state(hurray_net_connection_session(self->c)) == HURRAY_NET_STATE_CLOSED)
    self->broken = true;
  PyThread_release_lock(self->lock);
}

/* A tensor from a received descriptor and its data (both moved). */
static PyObject *tensor_from_wire(HrpyState *st, HurrayDescriptor *d, void *data, uint64_t len,
                                  const char *ctx) {
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
  uint32_t n = f.buffer_count;
  HrpyBuffer *bufs = PyMem_Calloc(n == 0 ? 1 : n, sizeof(HrpyBuffer));
  PyObject *r = NULL;
  if (bufs == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  uint64_t at = 0;
  uint32_t got = 0;
  for (; got < n; got++) {
    uint64_t sz = f.buffers[got].byte_size;
    HrpyBuffer *b = &bufs[got];
    b->host = true;
    b->size = sz;
    if (sz > len - at) {
      hrpy_raise(st->StreamError, "%s: buffer %u ends past the data received", ctx, got);
      break;
    }
    if (got == 0) {
      b->data = data; /* the received block: buffer 0 at its start */
      b->owned = data;
      data = NULL;
    } else if (sz != 0) {
      size_t align = f.buffers[got].alignment > HURRAY_MIN_BUFFER_ALIGNMENT
                         ? f.buffers[got].alignment
                         : HURRAY_MIN_BUFFER_ALIGNMENT;
      b->data = hurray_alloc((size_t)sz, align);
      if (b->data == NULL) {
        PyErr_NoMemory();
        break;
      }
      memcpy(b->data, (const uint8_t *)bufs[0].data + at, (size_t)sz);
      b->owned = b->data;
    }
    at += sz;
  }
  if (got == n) {
    r = hrpy_tensor_from_descriptor(st, d, bufs, n, hurray_descriptor_relay_options(&f), ctx);
  } else {
    for (uint32_t i = 0; i <= got && i < n; i++) hrpy_buffer_release(&bufs[i]);
  }
done:
  PyMem_Free(bufs);
  hurray_free(data);
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return r;
}

/* get(name, /): the tensor the server serves under `name`; get_raw(name, /):
 * its data as bytes (the catalog). */
static PyObject *client_get_as(PyObject *o, PyObject *name, bool raw);
static PyObject *client_get(PyObject *o, PyObject *name) { return client_get_as(o, name, false); }
static PyObject *client_get_raw(PyObject *o, PyObject *name) {
  return client_get_as(o, name, true);
}

/* The value of a response whose first tensor is `d` / `data` (moved): a
 * tensor, or a composite whose members are received from `c` in pre-order.
 * Called with the client's lock held. */
static PyObject *value_from_wire(HrpyState *st, HurrayNetConnection *c, HurrayDescriptor *d,
                                 void *data, uint64_t len, HurrayStatus *rc, HurrayError *err) {
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
  if (f.layout.tag != HURRAY_LAYOUT_COMPOSITE) return tensor_from_wire(st, d, data, len, "get");
  hurray_free(data); /* a head owns no buffers */
  uint32_t n = f.layout.u.composite.member_count;
  PyObject *members = PyTuple_New((Py_ssize_t)n);
  if (members == NULL) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++) {
    HurrayDescriptor *md = NULL;
    void *mdata = NULL;
    uint64_t mlen = 0;
    Py_BEGIN_ALLOW_THREADS
    *rc = hurray_net_client_get_next(c, &md, &mdata, &mlen, err);
    Py_END_ALLOW_THREADS
    PyObject *m = *rc != HURRAY_OK ? NULL : value_from_wire(st, c, md, mdata, mlen, rc, err);
    if (m == NULL) {
      Py_DECREF(members);
      HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
      return NULL;
    }
    PyTuple_SET_ITEM(members, (Py_ssize_t)i, m);
  }
  PyObject *r = hrpy_composite_from_head(st, d, members, "get");
  Py_DECREF(members);
  return r;
}

static PyObject *client_get_as(PyObject *o, PyObject *name, bool raw) {
  NetClient *self = CLI(o);
  HrpyState *st = hrpy_state_of(o);
  if (!PyUnicode_Check(name))
    return PyErr_Format(PyExc_TypeError, "get: a name is a str, not %.100s",
                        Py_TYPE(name)->tp_name);
  const char *key = PyUnicode_AsUTF8(name);
  if (key == NULL) return NULL;
  HurrayNetConnection *c = client_acquire(st, self, "get");
  if (c == NULL) return NULL;
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_net_client_get(c, key, HURRAY_DEVICE_CPU, &d, &data, &len, &err);
  Py_END_ALLOW_THREADS
  PyObject *r = NULL;
  if (rc == HURRAY_OK && raw) {
    r = len > PY_SSIZE_T_MAX ? PyErr_NoMemory() : PyBytes_FromStringAndSize(data, (Py_ssize_t)len);
    hurray_free(data);
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  } else if (rc == HURRAY_OK) {
    r = value_from_wire(st, c, d, data, len, &rc, &err);
  }
  /* a response left half received breaks the connection */
  client_release(self, rc == HURRAY_OK && hurray_net_client_response_open(c) ? HURRAY_ERR_IO : rc);
  if (rc == HURRAY_ERR_NOT_FOUND) {
    PyErr_SetObject(PyExc_KeyError, name);
    return NULL;
  }
  if (rc != HURRAY_OK) return raise_net(st, rc, &err, "get");
  return r;
}

/* get_into(name, buffer, /): a single tensor received straight into the
 * writable `buffer` (a shard into its part of the whole); returns its
 * encoded descriptor (bytes). */
static PyObject *client_get_into(PyObject *o, PyObject *args) {
  NetClient *self = CLI(o);
  HrpyState *st = hrpy_state_of(o);
  PyObject *name;
  Py_buffer view;
  if (!PyArg_ParseTuple(args, "Uw*:get_into", &name, &view)) return NULL;
  const char *key = PyUnicode_AsUTF8(name);
  HurrayNetConnection *c = key == NULL ? NULL : client_acquire(st, self, "get");
  if (c == NULL) {
    PyBuffer_Release(&view);
    return NULL;
  }
  HurrayDescriptor *d = NULL;
  uint64_t len = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_net_client_get_into(c, key, HURRAY_DEVICE_CPU, view.buf, (uint64_t)view.len, &d,
                                  &len, &err);
  Py_END_ALLOW_THREADS
  client_release(self, rc);
  PyBuffer_Release(&view);
  if (rc == HURRAY_ERR_NOT_FOUND) {
    PyErr_SetObject(PyExc_KeyError, name);
    return NULL;
  }
  if (rc != HURRAY_OK) return raise_net(st, rc, &err, "get");
  uint64_t n = 0;
  HRPY_CANNOT_FAIL(hurray_descriptor_encoded_len(d, &n));
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
  if (b != NULL)
    HRPY_CANNOT_FAIL(hurray_descriptor_encode(d, (uint8_t *)PyBytes_AS_STRING(b), n, &n));
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return b;
}

/* put(name, tensor, /): pushes `tensor` under `name`; returns once the server
 * acknowledged it. */
static PyObject *client_put(PyObject *o, PyObject *args) {
  NetClient *self = CLI(o);
  HrpyState *st = hrpy_state_of(o);
  PyObject *name, *t;
  if (!PyArg_ParseTuple(args, "UO:put", &name, &t)) return NULL;
  if (!hrpy_tensor_check(st, t))
    return PyErr_Format(PyExc_TypeError, "put: %.100s is not a hurray.Tensor",
                        Py_TYPE(t)->tp_name);
  const char *key = PyUnicode_AsUTF8(name);
  if (key == NULL) return NULL;
  uint8_t *desc = NULL;
  uint32_t desc_len = 0;
  if (encode_desc(st, t, &desc, &desc_len, "put") < 0) return NULL;
  const uint8_t *data = NULL;
  uint64_t len = 0;
  void *owned = NULL;
  if (tensor_data(st, t, &data, &len, &owned, "put") < 0) {
    PyMem_RawFree(desc);
    return NULL;
  }
  HurrayNetConnection *c = client_acquire(st, self, "put");
  HurrayStatus rc = HURRAY_OK;
  HurrayError err;
  hurray_error_clear(&err);
  if (c != NULL) {
    Py_BEGIN_ALLOW_THREADS
    rc = hurray_net_client_put(c, key, desc, desc_len, data, len, &err);
    Py_END_ALLOW_THREADS
    client_release(self, rc);
  }
  PyMem_RawFree(desc);
  hurray_free(owned);
  if (c == NULL) return NULL;
  if (rc != HURRAY_OK) return raise_net(st, rc, &err, "put");
  Py_RETURN_NONE;
}

static PyObject *client_ping(PyObject *o, PyObject *unused) {
  (void)unused;
  NetClient *self = CLI(o);
  HrpyState *st = hrpy_state_of(o);
  HurrayNetConnection *c = client_acquire(st, self, "ping");
  if (c == NULL) return NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_net_client_ping(c, &err);
  Py_END_ALLOW_THREADS
  client_release(self, rc);
  if (rc != HURRAY_OK) return raise_net(st, rc, &err, "ping");
  Py_RETURN_NONE;
}

static PyObject *client_close(PyObject *o, PyObject *unused) {
  (void)unused;
  NetClient *self = CLI(o);
  Py_BEGIN_ALLOW_THREADS
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS
  hurray_net_connection_destroy(&self->c);
  PyThread_release_lock(self->lock);
  Py_RETURN_NONE;
}

static PyObject *client_max_message_size(PyObject *o, void *closure) {
  (void)closure;
  NetClient *self = CLI(o);
  const HurrayNetSession *s = self->c == NULL ? NULL : hurray_net_connection_session(self->c);
  return PyLong_FromUnsignedLong(s == NULL ? 0 : hurray_net_session_peer_max_message_size(s));
}

static PyMethodDef client_methods[] = {
    {"get", client_get, METH_O, "get($self, name, /)\n--\n\nThe tensor served under `name`."},
    {"get_into", client_get_into, METH_VARARGS,
     "get_into($self, name, buffer, /)\n--\n\nThe tensor served under `name`, its data "
     "received straight into the writable `buffer`; returns its encoded descriptor."},
    {"get_raw", client_get_raw, METH_O,
     "get_raw($self, name, /)\n--\n\nThe data of the tensor served under `name`, as bytes."},
    {"put", client_put, METH_VARARGS,
     "put($self, name, tensor, /)\n--\n\nPushes `tensor` under `name` and waits for the ack."},
    {"ping", client_ping, METH_NOARGS, "ping($self, /)\n--\n\nA PING / PONG round trip."},
    {"close", client_close, METH_NOARGS, "close($self, /)\n--\n\nEnds the session (the socket stays)."},
    {NULL, NULL, 0, NULL},
};

static PyObject *client_peer_caps(PyObject *o, void *closure) {
  (void)closure;
  NetClient *self = CLI(o);
  const HurrayNetSession *s = self->c == NULL ? NULL : hurray_net_connection_session(self->c);
  return PyLong_FromUnsignedLongLong(hurray_net_session_peer_capabilities(s));
}

static PyGetSetDef client_getset[] = {
    {"peer_capabilities", client_peer_caps, NULL,
     "The capability flags of the server's HELLO (2: PARALLEL_STREAMS).", NULL},
    {"peer_max_message_size", client_max_message_size, NULL,
     "The largest message the server accepts (its HELLO).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot client_slots[] = {
    {Py_tp_doc,
     "_NetClient(fd, *, timeout=30.0, max_tensor_bytes=0, frame_size=0, parallel_ok=False)\n"
     "--\n\n"
     "One protocol session over the connected socket `fd` (hurray.connect builds on it)."},
    {Py_tp_new, client_new},
    {Py_tp_dealloc, client_dealloc},
    {Py_tp_methods, client_methods},
    {Py_tp_getset, client_getset},
    {0, NULL},
};

static PyType_Spec client_spec = {
    .name = "hurray._NetClient",
    .basicsize = sizeof(NetClient),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = client_slots,
};

int hrpy_net_init(PyObject *m, HrpyState *st) {
  (void)st;
  PyObject *t = PyType_FromModuleAndSpec(m, &server_spec, NULL);
  if (t == NULL || PyModule_AddType(m, (PyTypeObject *)t) < 0) {
    Py_XDECREF(t);
    return -1;
  }
  Py_DECREF(t);
  t = PyType_FromModuleAndSpec(m, &client_spec, NULL);
  if (t == NULL || PyModule_AddType(m, (PyTypeObject *)t) < 0) {
    Py_XDECREF(t);
    return -1;
  }
  Py_DECREF(t);
  return 0;
}
