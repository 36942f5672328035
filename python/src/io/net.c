/*
 * io/net.c - the network transport from Python: hurray._hurray._NetServer and
 * _NetClient, thin classes over include/hurray/net.h (src/net/). hurray/_net.py
 * owns the sockets, the threads and the public surface (hurray.serve,
 * hurray.connect); this file converts the Python objects and moves the bytes,
 * the GIL released around every wait and every transfer.
 *
 * _NetServer binds the C library's server table (HurrayNetTable: entries,
 * composites, the catalog, shards, pushes, layout transcoding, the log lines)
 * and its connection loop: add() hands it a tensor's descriptor and buffers
 * (a composite's head and members in pre-order), serve(fd) runs one connection
 * without the GIL, in as many threads as there are connections. The table
 * borrows the tensors' memory: the server object keeps every tensor it was
 * given alive (its `keep` list) until the table is destroyed. The table's log
 * lines reach the Python `log` callable with the GIL taken.
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
#include "util/args.h"
#include "util/errors.h"

#include "hurray/alloc.h"
#include "hurray/net.h"

#include <pythread.h>
#include <string.h>

/* ---- the server ---------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  HurrayNetTable *table;
  PyObject *keep; /* list: the tensors and composites the entries point into */
  PyObject *log;  /* callable(str) or NULL */
} NetServer;

#define SRV(o) ((NetServer *)(o))

/* Raises StreamError for a failure of the connection, the table's class for
 * anything else. */
static PyObject *raise_net(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                           const char *ctx) {
  if (rc == HURRAY_ERR_IO) return hrpy_raise_status_as(st, st->StreamError, rc, err, ctx);
  return hrpy_raise_status(st, rc, err, ctx);
}

/* The encoded descriptor `d` (NULL: an exception is set), PyMem_Malloc'd
 * into *out. */
static int encode_descriptor(HrpyState *st, const HurrayDescriptor *d, uint8_t **out,
                             uint32_t *out_len, const char *ctx) {
  if (d == NULL) return -1;
  uint64_t n = 0;
  HRPY_CANNOT_FAIL(hurray_descriptor_encoded_len(d, &n));
  if (n > UINT32_MAX) {
    hrpy_raise(st->UnsupportedError, "%s: a descriptor of %llu bytes", ctx, (unsigned long long)n);
    return -1;
  }
  uint8_t *b = PyMem_Malloc((size_t)n);
  if (b == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  HRPY_CANNOT_FAIL(hurray_descriptor_encode(d, b, n, &n));
  *out = b;
  *out_len = (uint32_t)n;
  return 0;
}

/* A timeout in seconds (negative: none) as the C side's milliseconds. */
static int32_t timeout_ms(double seconds) {
  if (seconds < 0) return -1;
  if (seconds * 1000.0 > 2e9) return 2000000000;
  int32_t ms = (int32_t)(seconds * 1000.0);
  return ms == 0 ? 1 : ms;
}

/* The table's log callback: one line, handed to the Python callable with the
 * GIL taken (called from the serving threads). */
static void log_to_python(void *ctx, const char *line) {
  NetServer *s = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  if (s->log != NULL) {
    PyObject *l = PyUnicode_DecodeUTF8(line, (Py_ssize_t)strlen(line), "replace");
    PyObject *r = l == NULL ? NULL : PyObject_CallOneArg(s->log, l);
    if (r == NULL) PyErr_WriteUnraisable(s->log);
    Py_XDECREF(r);
    Py_XDECREF(l);
  }
  PyGILState_Release(g);
}

static PyObject *server_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"log",        "writable",        "max_put_bytes", "timeout",
                       "frame_size", "transcode_limit", NULL};
  HrpyState *st = hrpy_state_of_type(type);
  PyObject *log = Py_None;
  int writable = 0;
  unsigned long long max_put = 0, transcode = 0;
  double timeout = 300.0;
  unsigned int frame = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$pKdIK:_NetServer", kw, &log, &writable,
                                   &max_put, &timeout, &frame, &transcode))
    return NULL;
  NetServer *s = (NetServer *)type->tp_alloc(type, 0);
  if (s == NULL) return NULL;
  s->keep = PyList_New(0);
  if (s->keep == NULL) {
    Py_DECREF(s);
    return NULL;
  }
  s->log = log == Py_None ? NULL : Py_NewRef(log);
  HurrayNetTableOptions o;
  memset(&o, 0, sizeof o);
  o.writable = writable != 0;
  o.max_put_bytes = max_put;
  o.timeout_ms = timeout_ms(timeout);
  o.frame_size = frame;
  o.transcode_limit = transcode;
  o.log = s->log != NULL ? log_to_python : NULL;
  o.log_ctx = s;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_net_table_new(&o, &s->table, &err);
  if (rc != HURRAY_OK) {
    Py_DECREF(s);
    return hrpy_raise_status(st, rc, &err, "serve");
  }
  return (PyObject *)s;
}

static int server_traverse(PyObject *o, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(o));
  Py_VISIT(SRV(o)->keep);
  Py_VISIT(SRV(o)->log);
  return 0;
}

static int server_clear(PyObject *o) {
  /* No connection runs (each holds a reference to the server), so no log
   * line can come: the callback reads s->log under the GIL anyway. */
  Py_CLEAR(SRV(o)->log);
  return 0;
}

static void server_dealloc(PyObject *o) {
  NetServer *s = SRV(o);
  PyTypeObject *tp = Py_TYPE(o);
  PyObject_GC_UnTrack(o);
  hurray_net_table_destroy(&s->table); /* before the tensors its entries point into */
  Py_CLEAR(s->keep);
  Py_CLEAR(s->log);
  tp->tp_free(o);
  Py_DECREF(tp);
}

/* The tensors of an entry being gathered (a tensor, or a composite's head and
 * its members in pre-order): descriptors encoded here, buffers borrowed from
 * the Python tensors. */
typedef struct Gather {
  HurrayNetTableTensor *v;
  uint32_t *first; /* per tensor: its first buffer in bufs */
  uint32_t n, cap;
  const void **bufs;
  uint64_t *sizes;
  uint32_t nb, capb;
} Gather;

static void gather_free(Gather *g) {
  for (uint32_t i = 0; i < g->n; i++) PyMem_Free((void *)(uintptr_t)g->v[i].descriptor);
  PyMem_Free(g->v);
  PyMem_Free(g->first);
  PyMem_Free(g->bufs);
  PyMem_Free(g->sizes);
}

/* Appends descriptor `d` and, for a tensor `t` (NULL for a composite head),
 * its buffers. */
static int gather_one(HrpyState *st, Gather *g, const HurrayDescriptor *d, PyObject *t) {
  if (g->n == g->cap) {
    uint32_t cap = g->cap == 0 ? 8 : g->cap * 2;
    HurrayNetTableTensor *v = PyMem_Realloc(g->v, cap * sizeof *v);
    if (v != NULL) g->v = v;
    uint32_t *first = v == NULL ? NULL : PyMem_Realloc(g->first, cap * sizeof *first);
    if (first == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    g->first = first;
    g->cap = cap;
  }
  uint32_t nbuf = 0;
  if (t != NULL) {
    if (hrpy_tensor_check_host(st, t, "serve") < 0 ||
        hrpy_tensor_check_readable(st, t, "serve") < 0)
      return -1;
    nbuf = hrpy_tensor_nbuf(t);
    if (nbuf != hrpy_tensor_fields(t)->buffer_count) {
      hrpy_raise(st->UnsupportedError, "serve: a tensor of an opaque layout cannot be sent");
      return -1;
    }
    if (nbuf > g->capb - g->nb) {
      uint32_t capb = g->capb == 0 ? 16 : g->capb;
      while (capb - g->nb < nbuf) capb *= 2;
      const void **b = PyMem_Realloc((void *)g->bufs, capb * sizeof *b);
      if (b != NULL) g->bufs = b;
      uint64_t *sz = b == NULL ? NULL : PyMem_Realloc(g->sizes, capb * sizeof *sz);
      if (sz == NULL) {
        PyErr_NoMemory();
        return -1;
      }
      g->sizes = sz;
      g->capb = capb;
    }
  }
  uint8_t *bytes = NULL;
  uint32_t n = 0;
  if (encode_descriptor(st, d, &bytes, &n, "serve") < 0) return -1;
  HurrayNetTableTensor *e = &g->v[g->n];
  memset(e, 0, sizeof *e);
  e->descriptor = bytes;
  e->descriptor_len = n;
  e->buffer_count = nbuf;
  g->first[g->n++] = g->nb;
  for (uint32_t i = 0; i < nbuf; i++) {
    const HrpyBuffer *b = hrpy_tensor_buffer(t, i);
    g->bufs[g->nb] = b->data;
    g->sizes[g->nb++] = b->size;
  }
  return 0;
}

/* The members of composite `comp`, in pre-order (a nested composite: its
 * head as its parent presents it, then its own members). */
static int gather_members(HrpyState *st, Gather *g, PyObject *comp) {
  uint32_t n = hrpy_composite_count(comp);
  for (uint32_t i = 0; i < n; i++) {
    const HurrayDescriptor *d = hrpy_composite_member_descriptor(st, comp, i);
    if (d == NULL) return -1;
    PyObject *m = hrpy_composite_member(comp, i);
    bool nested = hrpy_composite_check(st, m);
    if (gather_one(st, g, d, nested ? NULL : m) < 0) return -1;
    if (nested && gather_members(st, g, m) < 0) return -1;
  }
  return 0;
}

/* add(name, tensor, /): serves `tensor` (a Tensor or a Composite) under
 * `name`, replacing what had it. */
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
  Gather g;
  memset(&g, 0, sizeof g);
  int rc = composite ? gather_one(st, &g, hrpy_composite_head(t), NULL)
                     : gather_one(st, &g, hrpy_tensor_desc(st, t), t);
  if (rc == 0 && composite) rc = gather_members(st, &g, t);
  /* the entries point into `t`: kept alive with the server */
  if (rc == 0) rc = PyList_Append(s->keep, t);
  if (rc < 0) {
    gather_free(&g);
    return NULL;
  }
  for (uint32_t i = 0; i < g.n; i++) {
    g.v[i].buffers = g.bufs + g.first[i];
    g.v[i].sizes = g.sizes + g.first[i];
  }
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus r;
  Py_BEGIN_ALLOW_THREADS /* the buffers of a multi-buffer tensor are copied end to end */
  r = hurray_net_table_add(s->table, key, (size_t)klen, g.v, g.n, NULL, NULL, &err);
  Py_END_ALLOW_THREADS
  gather_free(&g);
  if (r != HURRAY_OK) return hrpy_raise_status(st, r, &err, "serve");
  Py_RETURN_NONE;
}

/* keys(): the names served, in the order they were first added. */
static PyObject *server_keys(PyObject *self, PyObject *unused) {
  (void)unused;
  NetServer *s = SRV(self);
  HrpyState *st = hrpy_state_of(self);
  size_t n = hurray_net_table_count(s->table);
  PyObject *out = PyList_New(0);
  char small[256];
  char *buf = small;
  size_t cap = sizeof small;
  for (size_t i = 0; out != NULL && i < n; i++) {
    size_t len = 0;
    HurrayError err;
    HurrayStatus rc = hurray_net_table_key(s->table, i, buf, cap, &len, &err);
    if (rc == HURRAY_ERR_BUFFER_TOO_SMALL) {
      if (buf != small) PyMem_Free(buf);
      cap = len + 1;
      buf = PyMem_Malloc(cap);
      if (buf == NULL) {
        Py_CLEAR(out);
        PyErr_NoMemory();
        break;
      }
      rc = hurray_net_table_key(s->table, i, buf, cap, &len, &err);
    }
    if (rc != HURRAY_OK) {
      Py_CLEAR(out);
      hrpy_raise_status(st, rc, &err, "keys");
      break;
    }
    PyObject *k = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "strict");
    if (k == NULL || PyList_Append(out, k) < 0) Py_CLEAR(out);
    Py_XDECREF(k);
  }
  if (buf != small) PyMem_Free(buf);
  return out;
}

/* serve(fd, peer, /): speaks the protocol on the connected socket `fd` until
 * the client closes it (None), without the GIL. The socket is the caller's. */
static PyObject *server_serve(PyObject *self, PyObject *args) {
  NetServer *s = SRV(self);
  HrpyState *st = hrpy_state_of(self);
  int fd;
  PyObject *peer;
  if (!PyArg_ParseTuple(args, "iU:serve", &fd, &peer)) return NULL;
  const char *who = PyUnicode_AsUTF8(peer);
  if (who == NULL) return NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_net_table_serve(s->table, fd, who, &err);
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
     "_NetServer(log=None, *, writable=False, max_put_bytes=0, timeout=300.0, frame_size=0, "
     "transcode_limit=0)\n"
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

/* The data of a received tensor: one block holding its buffers end to end
 * (moved in). Buffer 0 takes the block (its start); each other buffer is
 * copied out of it into memory of its own alignment. */
typedef struct Wire {
  HrpyState *st;
  const HurrayDescriptorFields *f;
  uint8_t *data;       /* the block, until buffer 0 takes it */
  const uint8_t *base; /* the block */
  uint64_t len, at;
  const char *context;
} Wire;

static int wire_buffer(void *ctx, uint32_t i, HrpyBuffer *b) {
  Wire *w = ctx;
  uint64_t sz = w->f->buffers[i].byte_size;
  if (sz > w->len - w->at) {
    hrpy_raise(w->st->StreamError, "%s: buffer %u ends past the data received", w->context, i);
    return -1;
  }
  b->size = sz;
  if (i == 0) {
    b->data = w->data;
    b->owned = w->data;
    w->data = NULL;
  } else if (sz != 0) {
    size_t align = w->f->buffers[i].alignment > HURRAY_MIN_BUFFER_ALIGNMENT
                       ? w->f->buffers[i].alignment
                       : HURRAY_MIN_BUFFER_ALIGNMENT;
    b->data = hurray_alloc((size_t)sz, align);
    if (b->data == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    memcpy(b->data, w->base + w->at, (size_t)sz);
    b->owned = b->data;
  }
  w->at += sz;
  return 0;
}

/* A tensor from a received descriptor and its data (both moved), built as
 * every reader builds one (hrpy_tensor_read). */
static PyObject *tensor_from_wire(HrpyState *st, HurrayDescriptor *d, void *data, uint64_t len,
                                  const char *ctx) {
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
  Wire w = {st, &f, data, data, len, 0, ctx};
  PyObject *r = hrpy_tensor_read(st, d, f.buffer_count, wire_buffer, &w, 0, ctx);
  hurray_free(w.data); /* not taken: no buffer, or a failure before buffer 0 */
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return r;
}

/* The members of a composite response, received one at a time. */
typedef struct Members {
  HrpyState *st;
  HurrayNetConnection *c;
  HurrayStatus *rc;
  HurrayError *err;
} Members;

static PyObject *value_from_wire(HrpyState *st, HurrayNetConnection *c, HurrayDescriptor *d,
                                 void *data, uint64_t len, HurrayStatus *rc, HurrayError *err);

/* Member k: the response's next value (NULL with *rc set and no exception
 * when receiving fails: the caller raises). */
static PyObject *member_from_wire(void *ctx, uint32_t k) {
  (void)k;
  Members *m = ctx;
  HurrayDescriptor *md = NULL;
  void *mdata = NULL;
  uint64_t mlen = 0;
  Py_BEGIN_ALLOW_THREADS
  *m->rc = hurray_net_client_get_next(m->c, &md, &mdata, &mlen, m->err);
  Py_END_ALLOW_THREADS
  if (*m->rc != HURRAY_OK) return NULL;
  return value_from_wire(m->st, m->c, md, mdata, mlen, m->rc, m->err);
}

/* The value of a response whose first tensor is `d` / `data` (moved): a
 * tensor, or a composite whose members are received from `c` in pre-order
 * (hrpy_composite_read, as a stream's composite is read). Called with the
 * client's lock held. */
static PyObject *value_from_wire(HrpyState *st, HurrayNetConnection *c, HurrayDescriptor *d,
                                 void *data, uint64_t len, HurrayStatus *rc, HurrayError *err) {
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
  if (f.layout.tag != HURRAY_LAYOUT_COMPOSITE) return tensor_from_wire(st, d, data, len, "get");
  hurray_free(data); /* a head owns no buffers */
  Members m = {st, c, rc, err};
  PyObject *r =
      hrpy_composite_read(st, d, f.layout.u.composite.member_count, member_from_wire, &m, "get");
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return r;
}

/* The layout tags of `layouts` (a layout name, or a sequence of names in
 * preference order; names as hurray_layout_name spells them) into tags[]
 * (HURRAY_NET_MAX_PREFERENCES entries); *n their count. */
#define HURRAY_NET_MAX_PREFERENCES 64
static int layout_tags(PyObject *layouts, uint8_t *tags, uint16_t *n) {
  *n = 0;
  PyObject *seq = PyUnicode_Check(layouts) ? PyTuple_Pack(1, layouts)
                                           : PySequence_Fast(layouts, "get: layout is a layout "
                                                                      "name or a sequence of names");
  if (seq == NULL) return -1;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
  int rc = 0;
  if (count > HURRAY_NET_MAX_PREFERENCES) {
    PyErr_Format(PyExc_ValueError, "get: %zd preferred layouts (at most %d)", count,
                 HURRAY_NET_MAX_PREFERENCES);
    rc = -1;
  }
  for (Py_ssize_t i = 0; rc == 0 && i < count; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    const char *name = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
    if (name == NULL) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "get: a layout is named by a str, not %.100s",
                     Py_TYPE(item)->tp_name);
      rc = -1;
      break;
    }
    unsigned tag = 1;
    for (; tag < 0xFF; tag++) {
      const char *known = hurray_layout_name((uint8_t)tag);
      if (known != NULL && strcmp(known, name) == 0) break;
    }
    if (tag == 0xFF) {
      PyErr_Format(PyExc_ValueError,
                   "get: %R is not a layout name (row_major, col_major, strided, tiled, morton, "
                   "hilbert, coo, csr, csc, csf, ...)",
                   item);
      rc = -1;
      break;
    }
    tags[(*n)++] = (uint8_t)tag;
  }
  Py_DECREF(seq);
  return rc;
}

/* get(name, /, *, layout=None): the tensor the server serves under `name`,
 * in the first layout of `layout` the server has or transcodes to (the
 * request allows transcoding), else as stored; get_raw(name, /): its data as
 * bytes (the catalog). */
static PyObject *client_get_as(PyObject *o, PyObject *name, PyObject *layouts, bool raw);

static PyObject *client_get(PyObject *o, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  static const char *const names[] = {"name", "layout", NULL};
  PyObject *a[2] = {NULL, NULL};
  if (hrpy_parse_args("get", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  return client_get_as(o, a[0], a[1] == Py_None ? NULL : a[1], false);
}

static PyObject *client_get_raw(PyObject *o, PyObject *name) {
  return client_get_as(o, name, NULL, true);
}

static PyObject *client_get_as(PyObject *o, PyObject *name, PyObject *layouts, bool raw) {
  NetClient *self = CLI(o);
  HrpyState *st = hrpy_state_of(o);
  if (!PyUnicode_Check(name))
    return PyErr_Format(PyExc_TypeError, "get: a name is a str, not %.100s",
                        Py_TYPE(name)->tp_name);
  const char *key = PyUnicode_AsUTF8(name);
  if (key == NULL) return NULL;
  uint8_t tags[HURRAY_NET_MAX_PREFERENCES];
  HurrayNetLayoutEntry prefs[HURRAY_NET_MAX_PREFERENCES];
  HurrayNetRequestOptions req;
  memset(&req, 0, sizeof req);
  req.preferred_device = HURRAY_DEVICE_CPU;
  if (layouts != NULL) {
    if (layout_tags(layouts, tags, &req.layout_count) < 0) return NULL;
    for (uint16_t i = 0; i < req.layout_count; i++) {
      memset(&prefs[i], 0, sizeof prefs[i]);
      prefs[i].tag = tags[i];
    }
    req.layouts = prefs;
    if (req.layout_count != 0) req.flags = HURRAY_NET_REQ_ALLOW_TRANSCODE;
  }
  HurrayNetConnection *c = client_acquire(st, self, "get");
  if (c == NULL) return NULL;
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t len = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_net_client_get_ex(c, key, &req, &d, &data, &len, &err);
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
    Py_XDECREF(r);
    PyErr_SetObject(PyExc_KeyError, name);
    return NULL;
  }
  if (rc != HURRAY_OK) {
    Py_XDECREF(r);
    return raise_net(st, rc, &err, "get");
  }
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
  if (encode_descriptor(st, hrpy_tensor_desc(st, t), &desc, &desc_len, "put") < 0) return NULL;
  const uint8_t *data = NULL;
  uint64_t len = 0;
  void *owned = NULL;
  if (tensor_data(st, t, &data, &len, &owned, "put") < 0) {
    PyMem_Free(desc);
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
  PyMem_Free(desc);
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
    {"get", (PyCFunction)(void (*)(void))client_get, METH_FASTCALL | METH_KEYWORDS,
     "get($self, name, /, layout=None)\n--\n\nThe tensor served under `name`; `layout`, a "
     "layout name or a sequence of names in preference order, lets the server transcode."},
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
