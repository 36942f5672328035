/*
 * io/stream.c - the streaming format from Python: hurray.StreamWriter and
 * hurray.StreamReader over include/hurray/stream.h (spec:
 * docs/adr/ADR-035-python-streaming-api.md; docs/internals/decisions.md, "Streaming
 * format", "Limits", "Stream transports", "Composites in streams").
 *
 * Transports: a path (str, bytes or os.PathLike), an int file descriptor, or
 * an object with fileno() (a socket, a pipe, an open file); the library opens
 * the path or duplicates the descriptor (hurray_stream_reader_open,
 * hurray_stream_reader_from_fd_dup and the writer's two), so finishing or
 * closing the stream never closes the caller's.
 * The reader also reads bytes-like objects (zero-copy where a buffer's place
 * in them meets its declared alignment); the writer with no destination
 * builds the stream in memory (getvalue()). An object with no descriptor
 * (io.BytesIO) is refused with a TypeError that says what to pass instead.
 *
 * Both classes block; the GIL is released around every call that can wait on
 * the transport (opening a path, reading an item, writing a frame, finishing),
 * so other threads run meanwhile. One object must not be used by two threads
 * at once: a call made while another is in flight raises RuntimeError, and a
 * close() from another thread takes effect when the running call returns.
 *
 * A composite is one item: the writer takes a hurray.Composite and writes its
 * head then its members (pre-order); the reader yields a hurray.Composite
 * (docs/internals/decisions.md, "Composites in streams"), never a bare head followed by
 * its members.
 */
#include "io/stream.h"

#include "core/buffer.h"
#include "core/tensor.h"
#include "io/file.h"
#include "types/composite.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "io/state.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#if defined(_WIN32)
#include <winsock2.h>
#include <windows.h>
#include <io.h>
#include <fcntl.h>
#endif

#define R(o) ((HrpyStreamReader *)(o))
#define W(o) ((HrpyStreamWriter *)(o))

/* ---- errors -------------------------------------------------------------------------- */

/* Statuses of a stream operation: a transport failure is a StreamError here
 * (the table's FileError is for files), the rest follow the table. */
static PyObject *raise_stream(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                              const char *context) {
  PyObject *exc = hrpy_exception_for(st, rc);
  if (rc == HURRAY_ERR_IO || rc == HURRAY_ERR_INVALID_STATE) exc = st->StreamError;
  return hrpy_raise_status_as(st, exc, rc, err != NULL && err->status == rc ? err : NULL,
                             context);
}

/* ---- transports ------------------------------------------------------------------------ */

/*
 * Where a stream's bytes go or come from: a path (`path`, os.fsencode'd),
 * a caller's descriptor (`fd`, duplicated by the library, a reader's moved
 * to `pos` when >= 0), or, on Windows, a descriptor made for a socket that
 * the stream takes (`owned`).
 */
typedef struct {
  PyObject *path; /* bytes, or NULL */
  PyObject *shown; /* the path object as given, for errno errors */
  int fd;
  long long pos;
  bool owned;
} Transport;

/* An int argument that must fit a C int (a file descriptor). */
static int as_int(PyObject *o, int *out) {
  int64_t v;
  if (hrpy_arg_int_as(PyExc_OverflowError, o, "stream", "file descriptor", INT_MIN, INT_MAX, &v) <
      0)
    return -1;
  *out = (int)v;
  return 0;
}

#if defined(_WIN32)
/* A socket object's fileno() is a SOCKET, not a descriptor: a duplicate
 * socket (o.dup().detach()) wrapped in a C runtime descriptor that the
 * stream takes; -2 when o is not a socket. */
static int socket_fd(HrpyState *st, PyObject *o, const char *context) {
  PyObject *mod = PyImport_ImportModule("socket");
  if (mod == NULL) return -1;
  PyObject *cls = PyObject_GetAttrString(mod, "socket");
  Py_DECREF(mod);
  if (cls == NULL) return -1;
  int is = PyObject_IsInstance(o, cls);
  Py_DECREF(cls);
  if (is <= 0) return is < 0 ? -1 : -2;
  PyObject *dup = PyObject_CallMethod(o, "dup", NULL);
  if (dup == NULL) return -1;
  PyObject *h = PyObject_CallMethod(dup, "detach", NULL);
  Py_DECREF(dup);
  if (h == NULL) return -1;
  unsigned long long s = PyLong_AsUnsignedLongLong(h);
  Py_DECREF(h);
  if (s == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  int fd = _open_osfhandle((intptr_t)s, _O_BINARY);
  if (fd < 0) {
    closesocket((SOCKET)s);
    PyErr_Format(st->StreamError, "%s: cannot make a descriptor for the socket", context);
    return -1;
  }
  return fd;
}
#endif

/*
 * The descriptor behind an object with fileno(); -2 (no error set) when the
 * object has none. A writer flushes the object first (bytes a buffered file
 * holds would otherwise land after ours); a reader of a seekable buffered
 * file starts where the object's position says (t->pos), not where its
 * read-ahead left the descriptor.
 */
static int fd_of_object(HrpyState *st, PyObject *o, bool write, const char *context,
                        Transport *t) {
#if defined(_WIN32)
  t->fd = socket_fd(st, o, context);
  t->owned = t->fd >= 0;
  if (t->fd != -2) return t->fd < 0 ? -1 : 0;
#else
  (void)st;
#endif
  PyObject *fno = PyObject_CallMethod(o, "fileno", NULL);
  if (fno == NULL) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError) || PyErr_ExceptionMatches(PyExc_OSError) ||
        PyErr_ExceptionMatches(PyExc_ValueError)) {
      PyErr_Clear();
      return -2;
    }
    return -1;
  }
  if (!PyLong_Check(fno)) {
    Py_DECREF(fno);
    return -2;
  }
  int bad = as_int(fno, &t->fd);
  Py_DECREF(fno);
  if (bad < 0) return -1;
  if (t->fd < 0) {
    PyErr_Format(PyExc_ValueError, "%s: fileno() returned %d", context, t->fd);
    return -1;
  }
  if (write) {
    if (PyObject_HasAttrString(o, "flush")) {
      PyObject *r = PyObject_CallMethod(o, "flush", NULL);
      if (r == NULL) return -1;
      Py_DECREF(r);
    }
  } else if (PyObject_HasAttrString(o, "seekable") && PyObject_HasAttrString(o, "tell")) {
    PyObject *sk = PyObject_CallMethod(o, "seekable", NULL);
    int seekable = sk != NULL ? PyObject_IsTrue(sk) : -1;
    Py_XDECREF(sk);
    if (seekable < 0) {
      PyErr_Clear();
      seekable = 0;
    }
    if (seekable) {
      PyObject *pos = PyObject_CallMethod(o, "tell", NULL);
      if (pos == NULL) return -1;
      t->pos = PyLong_AsLongLong(pos);
      Py_DECREF(pos);
      if (t->pos == -1 && PyErr_Occurred()) return -1;
    }
  }
  return 0;
}

/*
 * The transport `o` names: an int descriptor or an object's fileno() (the
 * library duplicates it: the caller's is never closed); a path (str,
 * os.PathLike; for a writer bytes too). 0; -2 without an exception when `o`
 * is none of those; -1 with one. Release with transport_done.
 */
static int transport_of(HrpyState *st, PyObject *o, bool write, const char *ctx, Transport *t) {
  memset(t, 0, sizeof *t);
  t->fd = -1;
  t->pos = -1;
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    if (as_int(o, &t->fd) < 0) return -1;
    if (t->fd >= 0) return 0;
    PyErr_Format(PyExc_ValueError, "%s: file descriptor %d", ctx, t->fd);
    return -1;
  }
  if (PyUnicode_Check(o) || (write && PyBytes_Check(o)) ||
      PyObject_HasAttrString(o, "__fspath__")) {
    t->path = hrpy_fs_path(o);
    t->shown = Py_NewRef(o);
    return t->path != NULL ? 0 : -1;
  }
  return fd_of_object(st, o, write, ctx, t);
}

static void transport_done(Transport *t) {
  Py_CLEAR(t->path);
  Py_CLEAR(t->shown);
}

/* Opens the reader (w NULL) or writer over `t`, without the GIL (opening a
 * FIFO waits for its other end); NULL-free on success, else the failure
 * raised: a path that cannot be opened as hurray.FileError with errno and
 * filename, the rest as stream errors. */
static int transport_open(HrpyState *st, Transport *t, HurrayStreamReaderOptions *ro,
                          uint32_t wflags, HurrayStreamReader **r, HurrayStreamWriter **w,
                          const char *ctx) {
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  const char *p = t->path != NULL ? PyBytes_AS_STRING(t->path) : NULL;
  if (t->owned && ro != NULL) ro->flags |= HURRAY_STREAM_OWN_FD;
  Py_BEGIN_ALLOW_THREADS
  if (p != NULL)
    rc = w != NULL ? hurray_stream_writer_open(p, wflags, w, &err)
                   : hurray_stream_reader_open(p, ro, r, &err);
  else if (t->owned)
    rc = w != NULL ? hurray_stream_writer_to_fd(t->fd, wflags | HURRAY_STREAM_OWN_FD, w)
                   : hurray_stream_reader_from_fd(t->fd, ro, r);
  else
    rc = w != NULL ? hurray_stream_writer_to_fd_dup(t->fd, wflags, w, &err)
                   : hurray_stream_reader_from_fd_dup(t->fd, t->pos, ro, r, &err);
  Py_END_ALLOW_THREADS
  if (rc == HURRAY_OK) return 0;
#if defined(_WIN32)
  if (t->owned) (void)_close(t->fd); /* not taken on failure */
#endif
  int code = p != NULL ? hurray_error_os_code(&err) : 0;
  if (code != 0) {
    errno = code;
    PyErr_SetFromErrnoWithFilenameObject(st->FileError, t->shown);
  } else {
    raise_stream(st, rc, &err, ctx);
  }
  return -1;
}

/* ---- StreamReader ----------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  HurrayStreamReader *r; /* NULL once closed (and no call is running) */
  PyObject *source;      /* memoryview over a bytes-like source (views point into it), or NULL */
  uint32_t options;      /* HURRAY_DECODE_* for the tensors built */
  uint64_t offset;        /* bytes consumed by the last finished call */
  bool busy;              /* a call is reading (without the GIL) */
  bool closed;
} HrpyStreamReader;

/*
 * One call reads at a time: reader_acquire claims the reader in a critical
 * section on the object (a second thread gets RuntimeError, a closed reader
 * NULL without an exception: it is exhausted), reader_release hands it back
 * and, once closed, destroys it (closing the owned fd). close() from another
 * thread while a call runs only marks it closed; the call's release destroys
 * it.
 */
static HurrayStreamReader *reader_acquire(HrpyStreamReader *self) {
  HurrayStreamReader *r = NULL;
  bool busy = false;
  Py_BEGIN_CRITICAL_SECTION(self);
  if (self->busy) {
    busy = true;
  } else if (!self->closed) {
    self->busy = true;
    r = self->r;
  }
  Py_END_CRITICAL_SECTION();
  if (busy)
    PyErr_SetString(PyExc_RuntimeError, "StreamReader: another thread is reading this stream");
  return r;
}

/* Destroys a closed reader that no call uses; returns the source view to
 * release (outside the critical section: releasing an export runs code). */
static PyObject *reader_settle(HrpyStreamReader *self) {
  if (!self->closed || self->busy) return NULL;
  hurray_stream_reader_destroy(&self->r); /* closes the owned fd */
  PyObject *source = self->source;
  self->source = NULL;
  return source;
}

static void reader_release(HrpyStreamReader *self) {
  PyObject *drop;
  Py_BEGIN_CRITICAL_SECTION(self);
  self->busy = false;
  if (self->r != NULL) self->offset = hurray_stream_reader_offset(self->r);
  drop = reader_settle(self);
  Py_END_CRITICAL_SECTION();
  Py_XDECREF(drop);
}

/* An unsigned keyword limit; None = unlimited (`none_value`). */
static int parse_limit(PyObject *o, const char *name, uint64_t none_value, uint64_t *out) {
  if (o == NULL) return 0;
  if (o == Py_None) {
    *out = none_value;
    return 0;
  }
  return hrpy_arg_uint_as(PyExc_ValueError, o, "StreamReader", name, UINT64_MAX, out);
}

static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  static const char ctx[] = "StreamReader";
  static const char *const kwlist[] = {"source",      "max_descriptor_bytes", "max_buffer_bytes",
                           "max_composite_depth", "cross_machine", "permissive", NULL};
  PyObject *src, *mdb = NULL, *mbb = NULL, *mcd = NULL;
  int cross = 0, permissive = 0;
  PyObject *argv_[6];
  if (hrpy_parse_tuple("StreamReader", args, kwargs, kwlist, 1, 1, argv_) < 0) return NULL;
  src = argv_[0];
  if (argv_[1] != NULL) mdb = argv_[1];
  if (argv_[2] != NULL) mbb = argv_[2];
  if (argv_[3] != NULL) mcd = argv_[3];
  if (argv_[4] != NULL && (cross = PyObject_IsTrue(argv_[4])) < 0) return NULL;
  if (argv_[5] != NULL && (permissive = PyObject_IsTrue(argv_[5])) < 0) return NULL;
  HurrayStreamReaderOptions o;
  hurray_stream_reader_options_init(&o);
  uint64_t depth = o.max_composite_depth;
  if (parse_limit(mdb, "max_descriptor_bytes", HURRAY_STREAM_UNLIMITED,
                  &o.max_descriptor_bytes) < 0 ||
      parse_limit(mbb, "max_buffer_bytes", HURRAY_STREAM_UNLIMITED, &o.max_buffer_bytes) < 0 ||
      parse_limit(mcd, "max_composite_depth", HURRAY_STREAM_MAX_COMPOSITE_DEPTH, &depth) < 0)
    return NULL;
  if (depth > HURRAY_STREAM_MAX_COMPOSITE_DEPTH)
    return PyErr_Format(PyExc_ValueError,
                        "StreamReader: max_composite_depth is at most %u (the format's nesting "
                        "limit), got %llu",
                        (unsigned)HURRAY_STREAM_MAX_COMPOSITE_DEPTH, (unsigned long long)depth);
  o.max_composite_depth = (uint32_t)depth;
  o.flags = (cross ? HURRAY_STREAM_CROSS_MACHINE : 0u) |
            (permissive ? HURRAY_STREAM_PERMISSIVE : 0u);

  HurrayStreamReader *r = NULL;
  PyObject *view = NULL;
  if (!PyLong_Check(src) && !PyUnicode_Check(src) && !PyObject_HasAttrString(src, "__fspath__") &&
      PyObject_CheckBuffer(src)) {
    /* bytes are data here, not a path */
    view = PyMemoryView_FromObject(src);
    if (view == NULL) return NULL;
    Py_buffer *b = PyMemoryView_GET_BUFFER(view);
    if (!PyBuffer_IsContiguous(b, 'C')) {
      Py_DECREF(view);
      return PyErr_Format(PyExc_TypeError, "%s: the source bytes must be C-contiguous", ctx);
    }
    o.flags |= HURRAY_STREAM_ZERO_COPY;
    HurrayStatus rc =
        hurray_stream_reader_from_memory((const uint8_t *)b->buf, (size_t)b->len, &o, &r);
    if (rc != HURRAY_OK) {
      Py_DECREF(view);
      return raise_stream(st, rc, NULL, ctx);
    }
  } else {
    Transport t;
    int found = transport_of(st, src, false, ctx, &t);
    if (found == -2)
      PyErr_Format(PyExc_TypeError,
                   "%s: expected a path, a file descriptor, an object with fileno() or "
                   "bytes, not %.100s; an in-memory file such as io.BytesIO has no "
                   "descriptor: pass its contents instead (StreamReader(f.getvalue()))",
                   ctx, Py_TYPE(src)->tp_name);
    int opened = found == 0 ? transport_open(st, &t, &o, 0, &r, NULL, ctx) : -1;
    transport_done(&t);
    if (opened < 0) return NULL;
  }
  HrpyStreamReader *self = (HrpyStreamReader *)type->tp_alloc(type, 0);
  if (self == NULL) {
    hurray_stream_reader_destroy(&r);
    Py_XDECREF(view);
    return NULL;
  }
  self->r = r;
  self->source = view;
  self->options = permissive ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT;
  self->offset = 0;
  self->busy = false;
  self->closed = false;
  return (PyObject *)self;
}

/* An item being built: the reader and the item (members are borrowed from
 * their composite; taking their buffers is still ours to do). */
typedef struct {
  HrpyState *st;
  HrpyStreamReader *self;
  HurrayStreamItem *item;
  const char *context;
} ItemCtx;

static PyObject *item_to_py(HrpyState *st, HrpyStreamReader *self, HurrayStreamItem *item,
                            const char *context);

static PyObject *item_member(void *c, uint32_t k) {
  const ItemCtx *x = c;
  return item_to_py(x->st, x->self, (HurrayStreamItem *)hurray_stream_item_member(x->item, k),
                    x->context);
}

/* Buffer i: a view into the source bytes, or taken from the item (owned). */
static int item_buffer(void *c, uint32_t i, HrpyBuffer *b) {
  const ItemCtx *x = c;
  if (hurray_stream_item_buffer_is_view(x->item, i)) {
    const uint8_t *data = NULL;
    HRPY_CANNOT_FAIL(hurray_stream_item_buffer(x->item, i, &data, &b->size));
    b->data = (uint8_t *)(uintptr_t)data;
    b->owner = Py_NewRef(x->self->source); /* the memoryview keeps the export */
    b->readonly = PyMemoryView_GET_BUFFER(x->self->source)->readonly != 0;
    return 0;
  }
  HurrayStatus rc = hurray_stream_item_take_buffer(x->item, i, &b->data, &b->size);
  if (rc != HURRAY_OK) {
    hrpy_raise_status(x->st, rc, NULL, x->context);
    return -1;
  }
  b->owned = b->data; /* hurray_free with the tensor */
  return 0;
}

/* Builds the Python object of an item (a Tensor, or a Composite of items). */
static PyObject *item_to_py(HrpyState *st, HrpyStreamReader *self, HurrayStreamItem *item,
                            const char *context) {
  ItemCtx x = {st, self, item, context};
  const HurrayDescriptor *d = hurray_stream_item_descriptor(item);
  if (hurray_stream_item_kind(item) == HURRAY_STREAM_ITEM_COMPOSITE)
    return hrpy_composite_read(st, d, hurray_stream_item_member_count(item), item_member, &x,
                               context);
  return hrpy_tensor_read(st, d, hurray_stream_item_buffer_count(item), item_buffer, &x,
                          self->options, context);
}

static PyObject *reader_next(PyObject *s) {
  HrpyStreamReader *self = R(s);
  HrpyState *st = hrpy_state_of(s);
  HurrayStreamReader *r = reader_acquire(self);
  if (r == NULL) return NULL; /* closed (exhausted), or busy (RuntimeError) */
  HurrayStreamItem *item = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_stream_reader_next_item(r, &item, &err);
  Py_END_ALLOW_THREADS
  PyObject *result = NULL;
  if (rc != HURRAY_OK) {
    bool closed;
    Py_BEGIN_CRITICAL_SECTION(s);
    closed = self->closed;
    Py_END_CRITICAL_SECTION();
    raise_stream(st, rc, &err,
                 closed ? "StreamReader: closed by another thread while reading" : "StreamReader");
  } else if (item != NULL) {
    char ctx[64];
    PyOS_snprintf(ctx, sizeof ctx, "StreamReader: item at byte %llu",
                  (unsigned long long)hurray_stream_item_offset(item));
    result = item_to_py(st, self, item, ctx);
    hurray_stream_item_destroy(&item);
  }
  reader_release(self); /* after the item is built: it may view the source */
  return result; /* NULL without an exception: StopIteration */
}

static PyObject *reader_iter(PyObject *s) { return Py_NewRef(s); }

static PyObject *reader_close(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyStreamReader *self = R(s);
  PyObject *drop;
  Py_BEGIN_CRITICAL_SECTION(s);
  self->closed = true;
  /* A call reading in another thread (perhaps blocked mid-frame on a pipe or a
   * socket) is woken: it fails as interrupted and its release destroys the
   * reader. The interrupt runs inside the section, so that release cannot
   * destroy the reader under it. Where the platform cannot wake a blocked
   * read (Windows), the call ends with its read and fails then. */
  if (self->busy && self->r != NULL) (void)!hurray_stream_reader_interrupt(self->r);
  drop = reader_settle(self); /* NULL while a call runs: its release settles */
  Py_END_CRITICAL_SECTION();
  Py_XDECREF(drop);
  Py_RETURN_NONE;
}

/* A flag or a count of either class, read in a critical section on the
 * object (closure: the field's offset). */
static PyObject *get_flag(PyObject *s, void *c) {
  bool v;
  Py_BEGIN_CRITICAL_SECTION(s);
  v = *(const bool *)((const char *)s + (uintptr_t)c);
  Py_END_CRITICAL_SECTION();
  return PyBool_FromLong(v);
}

static PyObject *get_u64(PyObject *s, void *c) {
  uint64_t v;
  Py_BEGIN_CRITICAL_SECTION(s);
  v = *(const uint64_t *)((const char *)s + (uintptr_t)c);
  Py_END_CRITICAL_SECTION();
  return PyLong_FromUnsignedLongLong(v);
}

static PyObject *stream_enter(PyObject *s, PyObject *unused) {
  (void)unused;
  return Py_NewRef(s);
}

static PyObject *reader_exit(PyObject *s, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  (void)nargs;
  reader_close(s, NULL);
  Py_RETURN_FALSE;
}

static void reader_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  hurray_stream_reader_destroy(&R(s)->r);
  Py_CLEAR(R(s)->source);
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyMethodDef reader_methods[] = {
    {"close", reader_close, METH_NOARGS,
     "close(self)\n--\n\nReleases the transport now; the reader then behaves as exhausted. "
     "Tensors already read stay valid. Idempotent."},
    {"__enter__", stream_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))reader_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef reader_getset[] = {
    {"closed", get_flag, NULL, "True once close() was called.",
     (void *)offsetof(HrpyStreamReader, closed)},
    {"offset", get_u64, NULL, "Bytes consumed from the stream so far.",
     (void *)offsetof(HrpyStreamReader, offset)},
    {NULL, NULL, NULL, NULL, NULL},
};

/* What StreamReader's and StreamWriter's docstrings both say (transports,
 * descriptors, threads, signals, cross-machine streams): written once. */
/* The paragraph on the format both classes' docstrings open with. */
#define STREAM_FORMAT_DOC                                                                       \
  "The format ([the stream format](stream-format.md);\n"                                      \
  "[decisions § Streaming format](../internals/decisions.md#streaming-format)): each frame is " \
  "a descriptor\n"                                                                             \
  "followed by the bytes of its buffers in buffer-table order; no header, no end marker, the " \
  "stream ends at\n"                                                                           \
  "end of file. Neither side holds more than the item at hand.\n"

#define STREAM_SHARED_DOC \
  "Transports ([decisions § Stream transports](../internals/decisions.md#stream-transports)):\n" \
  "\n" \
  "| | Writer | Reader |\n" \
  "|---|---|---|\n" \
  "| `str` / `os.PathLike` | created or truncated | opened |\n" \
  "| `bytes` | a path | the stream's bytes |\n" \
  "| `bytearray`, `memoryview`, NumPy array, ... | — | the stream's bytes |\n" \
  "| `int` | a file descriptor | a file descriptor |\n" \
  "| object with `fileno()` (socket, pipe, open file) | its descriptor | its descriptor |\n" \
  "| `None` | in memory (`getvalue()`) | — |\n" \
  "| `io.BytesIO` | `TypeError`: use `StreamWriter()` and `getvalue()` | `TypeError`: pass " \
  "`f.getvalue()` |\n" \
  "\n" \
  "A descriptor (given as an int or through `fileno()`) is **duplicated**: finishing or\n" \
  "closing the stream never closes the caller's, so a socket stays usable (shut it down or\n" \
  "close it to end the stream for the peer). A writer flushes a buffered file object before\n" \
  "taking its descriptor; a reader of a seekable buffered file starts at the object's\n" \
  "position, not where its read-ahead left the descriptor. Opening a path that cannot be\n" \
  "opened is `hurray.FileError` with `errno` and `filename` set.\n" \
  "\n" \
  "Both classes block, and release the GIL around every call that can wait (opening a\n" \
  "path, reading an item, writing a frame, finishing): a writer thread and a reader thread\n" \
  "can share a pipe, and other threads run while a stream waits. One object must not be\n" \
  "used by two threads at once: a second call while one is in flight raises `RuntimeError`,\n" \
  "and `close()` from another thread takes effect when the running call returns. A writer\n" \
  "never lets `SIGPIPE` kill the process: a closed peer is `hurray.StreamError`\n" \
  "(`ERR_IO`), and the writer refuses further writes (a frame may be torn). A call waiting\n" \
  "on its transport is not interrupted by a signal: the C library retries `EINTR`, so\n" \
  "Ctrl-C takes effect when the call returns (close the peer, or shut the socket down from\n" \
  "another thread, to end a wait).\n" \
  "\n" \
  "`cross_machine=True` (either side) refuses any buffer that is not `producer_synced`\n" \
  "(`ERR_CROSS_MACHINE`), before any byte of its frame is read or written. Without it such\n" \
  "declarations are relayed unchanged.\n" \
  "\n"

static PyType_Slot reader_slots[] = {
    {Py_tp_doc,
     "StreamReader(source, *, max_descriptor_bytes=16777216, max_buffer_bytes=None, "
     "max_composite_depth=8, cross_machine=False, permissive=False)\n--\n\n"
     "Reads a Hurray stream: iterating yields each `hurray.Tensor` (or `hurray.Composite`) as "
     "soon as its bytes have arrived.\n"
     "\n"
     STREAM_FORMAT_DOC
     "\n"
     "- An iterator: `__next__` yields a `hurray.Tensor`, or a whole composite as one\n"
     "  `hurray.Composite` (never a bare head followed by its members:\n"
     "  [decisions § Composites in streams](../internals/decisions.md#composites-in-streams)), "
     "and\n"
     "  raises `StopIteration` at a clean end of stream. A context manager; `close()` releases\n"
     "  the transport at once and a closed reader behaves as exhausted. `closed`, `offset`\n"
     "  (bytes consumed).\n"
     "- Threads: one call reads at a time (a second thread gets `RuntimeError`). `close()` from\n"
     "  another thread wakes a reader blocked on a pipe or a socket, even in the middle of a\n"
     "  frame: that call raises `hurray.StreamError` (\"closed by another thread while "
     "reading\")\n"
     "  and the item it was reading is dropped. On Windows a read already blocked is not woken:\n"
     "  it fails when it returns.\n"
     "- The limits (keyword-only; `None` = unlimited) bound what one frame may claim and are\n"
     "  checked before anything is allocated for it; exceeding one raises `hurray.StreamError`\n"
     "  (`ERR_STREAM_LIMIT`). `max_composite_depth` is 0 to 8. Set `max_buffer_bytes` for an\n"
     "  untrusted peer: unlimited, a reader allocates what a descriptor claims before the bytes\n"
     "  arrive.\n"
     "- Buffers read from a transport land in memory the tensor owns (aligned as declared,\n"
     "  writable). From bytes-like data, a buffer whose place in the data meets its declared\n"
     "  alignment is a zero-copy view (read-only when the data is), holding the data alive.\n"
     "- `permissive=True` reads descriptors in relay mode (private layouts, unknown tags).\n"
     "\n"
     STREAM_SHARED_DOC
     "Truncation: a stream cut inside a frame (inside a descriptor, a buffer, or before a\n"
     "composite's last member) raises `hurray.StreamError`, and the reader keeps raising it;\n"
     "a stream cut exactly on a frame boundary is indistinguishable from a shorter stream and\n"
     "ends cleanly (a property of the format). A descriptor that breaks a format rule is\n"
     "`hurray.InvalidDescriptorError`; every message names the byte offset in the stream.\n"
     "\n"
     "Example: the guide, [Streaming](../guide/streaming.md)."},
    {Py_tp_new, reader_new},
    {Py_tp_iter, reader_iter},
    {Py_tp_iternext, reader_next},
    {Py_tp_methods, reader_methods},
    {Py_tp_getset, reader_getset},
    {Py_tp_dealloc, reader_dealloc},
    {0, NULL},
};

static PyType_Spec reader_spec = {
    .name = "hurray.StreamReader",
    .basicsize = sizeof(HrpyStreamReader),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = reader_slots,
};

/* ---- StreamWriter ------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  HurrayStreamWriter *w; /* NULL once closed (and no call is running) */
  uint64_t offset;       /* bytes written by the last finished call */
  bool busy;             /* a call is using the writer (the GIL released) */
  bool memory;   /* no destination: getvalue() */
  bool finished;
  bool closed;
} HrpyStreamWriter;

/*
 * As for the reader, one call uses the writer at a time: writer_acquire
 * claims it in a critical section on the object (RuntimeError for a second
 * thread; hurray.StreamError once finished when `need_open`), writer_release
 * hands it back, and a closed writer with a destination is destroyed by the
 * last call out.
 */
static HurrayStreamWriter *writer_acquire(HrpyState *st, HrpyStreamWriter *self, bool need_open,
                                          const char *op) {
  HurrayStreamWriter *w = NULL;
  int state = 0; /* 0 claimed, 1 busy, 2 finished */
  Py_BEGIN_CRITICAL_SECTION(self);
  if (self->busy) {
    state = 1;
  } else if (need_open && (self->finished || self->closed)) {
    state = 2;
  } else {
    self->busy = true;
    w = self->w;
  }
  Py_END_CRITICAL_SECTION();
  if (state == 1)
    PyErr_SetString(PyExc_RuntimeError, "StreamWriter: another thread is writing this stream");
  else if (state == 2)
    hrpy_raise(st->StreamError,
               "%s: the stream is finished; create a new StreamWriter to write more", op);
  return w;
}

static void writer_settle(HrpyStreamWriter *self) {
  if (self->closed && !self->busy && !self->memory) hurray_stream_writer_destroy(&self->w);
}

static void writer_release(HrpyStreamWriter *self) {
  Py_BEGIN_CRITICAL_SECTION(self);
  self->busy = false;
  if (self->w != NULL) self->offset = hurray_stream_writer_offset(self->w);
  writer_settle(self);
  Py_END_CRITICAL_SECTION();
}

static PyObject *writer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  static const char ctx[] = "StreamWriter";
  static const char *const kwlist[] = {"destination", "cross_machine", NULL};
  PyObject *dst = Py_None;
  int cross = 0;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("StreamWriter", args, kwargs, kwlist, 1, 0, argv_) < 0) return NULL;
  if (argv_[0] != NULL) dst = argv_[0];
  if (argv_[1] != NULL && (cross = PyObject_IsTrue(argv_[1])) < 0) return NULL;
  uint32_t flags = cross ? HURRAY_STREAM_CROSS_MACHINE : 0u;
  HurrayStreamWriter *w = NULL;
  bool memory = dst == Py_None;
  if (memory) {
    HurrayStatus rc = hurray_stream_writer_to_memory(flags, &w);
    if (rc != HURRAY_OK) return raise_stream(st, rc, NULL, ctx);
  } else {
    Transport t;
    int found = transport_of(st, dst, true, ctx, &t);
    if (found == -2)
      PyErr_Format(PyExc_TypeError,
                   "%s: expected a path, a file descriptor or an object with fileno(), "
                   "not %.100s; an in-memory file such as io.BytesIO has no "
                   "descriptor: use StreamWriter() with no destination and take its "
                   "getvalue()",
                   ctx, Py_TYPE(dst)->tp_name);
    int opened = found == 0 ? transport_open(st, &t, NULL, flags, NULL, &w, ctx) : -1;
    transport_done(&t);
    if (opened < 0) return NULL;
  }
  HrpyStreamWriter *self = (HrpyStreamWriter *)type->tp_alloc(type, 0);
  if (self == NULL) {
    hurray_stream_writer_destroy(&w);
    return NULL;
  }
  self->w = w;
  self->offset = 0;
  self->busy = false;
  self->memory = memory;
  self->finished = false;
  self->closed = false;
  return (PyObject *)self;
}

static PyObject *writer_write_tensor(PyObject *s, PyObject *obj);

/* write(obj): a hurray.Tensor or Composite as it is; anything else save takes
 * (a NumPy array, a torch tensor, an object with __dlpack__ or __hurray__)
 * through the package's conversion (the as_tensor hook), which names the type
 * it was given when it cannot. */
static PyObject *writer_write(PyObject *s, PyObject *obj) {
  HrpyState *st = hrpy_state_of(s);
  if (hrpy_tensor_check(st, obj) || hrpy_composite_check(st, obj))
    return writer_write_tensor(s, obj);
  PyObject *fn = hrpy_peek(&st->hook_as_tensor);
  if (fn == NULL)
    return PyErr_Format(PyExc_TypeError,
                        "StreamWriter.write: expected a hurray.Tensor or hurray.Composite, not "
                        "%.100s",
                        Py_TYPE(obj)->tp_name);
  PyObject *t = PyObject_CallOneArg(fn, obj);
  if (t == NULL) return NULL;
  PyObject *r = NULL;
  if (hrpy_tensor_check(st, t) || hrpy_composite_check(st, t))
    r = writer_write_tensor(s, t);
  else
    PyErr_Format(PyExc_TypeError, "StreamWriter.write: the conversion of %.100s gave %.100s",
                 Py_TYPE(obj)->tp_name, Py_TYPE(t)->tp_name);
  Py_DECREF(t);
  return r;
}

static PyObject *writer_write_tensor(PyObject *s, PyObject *obj) {
  HrpyStreamWriter *self = W(s);
  HrpyState *st = hrpy_state_of(s);
  HrpyArena arena = {NULL, 0, 0};
  HurrayFileCompositeNode node;
  if (hrpy_save_node(st, &arena, obj, NULL, 0, "StreamWriter.write", &node) < 0) {
    hrpy_arena_free(&arena);
    return NULL;
  }
  HurrayStreamWriter *w = writer_acquire(st, self, true, "StreamWriter.write");
  if (w == NULL) {
    hrpy_arena_free(&arena);
    return NULL;
  }
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_stream_writer_write_tree(w, &node, &err);
  Py_END_ALLOW_THREADS
  writer_release(self);
  hrpy_arena_free(&arena);
  if (rc != HURRAY_OK) return raise_stream(st, rc, &err, "StreamWriter.write");
  Py_RETURN_NONE;
}

static PyObject *writer_finish(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyStreamWriter *self = W(s);
  HrpyState *st = hrpy_state_of(s);
  HurrayStreamWriter *w = NULL;
  int state = 0; /* 0 claimed, 1 busy, 2 already finished */
  Py_BEGIN_CRITICAL_SECTION(s);
  if (self->finished) {
    state = 2;
  } else if (self->busy) {
    state = 1;
  } else {
    self->finished = true;
    self->busy = true;
    w = self->w;
  }
  Py_END_CRITICAL_SECTION();
  if (state == 2) Py_RETURN_NONE;
  if (state == 1) {
    PyErr_SetString(PyExc_RuntimeError, "StreamWriter: another thread is writing this stream");
    return NULL;
  }
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_stream_writer_finish(w, &err); /* closes the owned fd */
  Py_END_ALLOW_THREADS
  writer_release(self);
  if (rc != HURRAY_OK) return raise_stream(st, rc, &err, "StreamWriter.finish");
  Py_RETURN_NONE;
}

static PyObject *writer_close(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyStreamWriter *self = W(s);
  bool deferred = false;
  Py_BEGIN_CRITICAL_SECTION(s);
  if (self->busy) {
    self->closed = true; /* the running call's release destroys the writer */
    deferred = true;
  }
  Py_END_CRITICAL_SECTION();
  if (deferred) Py_RETURN_NONE;
  PyObject *r = writer_finish(s, NULL);
  Py_BEGIN_CRITICAL_SECTION(s);
  self->closed = true;
  writer_settle(self);
  Py_END_CRITICAL_SECTION();
  return r;
}

static PyObject *writer_getvalue(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyStreamWriter *self = W(s);
  HrpyState *st = hrpy_state_of(s);
  if (!self->memory)
    return hrpy_raise(st->StreamError,
                     "StreamWriter.getvalue: this writer has a destination; its bytes went "
                     "there and are not kept in memory");
  HurrayStreamWriter *w = writer_acquire(st, self, false, "StreamWriter.getvalue");
  if (w == NULL) return NULL;
  const uint8_t *data = NULL;
  size_t len = 0;
  HurrayStatus rc = hurray_stream_writer_memory(w, &data, &len);
  PyObject *r = rc == HURRAY_OK
                    ? PyBytes_FromStringAndSize(data != NULL ? (const char *)data : "",
                                                (Py_ssize_t)len)
                    : raise_stream(st, rc, NULL, "StreamWriter.getvalue");
  writer_release(self);
  return r;
}

static PyObject *writer_exit(PyObject *s, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  (void)nargs;
  PyObject *r = writer_finish(s, NULL);
  if (r == NULL) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static void writer_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  hurray_stream_writer_destroy(&W(s)->w); /* closes an fd that finish did not */
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyMethodDef writer_methods[] = {
    {"write", writer_write, METH_O,
     "write(self, tensor, /)\n--\n\nWrites a hurray.Tensor (its descriptor, then every buffer "
     "in buffer-table order) or a hurray.Composite (its head, then its members, pre-order); "
     "anything hurray.save takes (a NumPy array, a torch tensor, an object with __dlpack__ or "
     "__hurray__) is converted as save converts it, sharing its memory where it can; another "
     "type is a TypeError naming it. The bytes have reached the transport when the call "
     "returns. hurray.StreamError after finish()."},
    {"finish", writer_finish, METH_NOARGS,
     "finish(self)\n--\n\nEnds the stream (a stream has no end marker: this closes the "
     "writer's own descriptor). Idempotent."},
    {"close", writer_close, METH_NOARGS, "close(self)\n--\n\nfinish(), then release the writer."},
    {"getvalue", writer_getvalue, METH_NOARGS,
     "getvalue(self)\n--\n\nThe stream built so far, for a writer with no destination "
     "(repeatable, also after finish). hurray.StreamError for a writer with a destination."},
    {"__enter__", stream_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))writer_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef writer_getset[] = {
    {"finished", get_flag, NULL, "True once finish() (or close) was called.",
     (void *)offsetof(HrpyStreamWriter, finished)},
    {"offset", get_u64, NULL, "Bytes written so far.", (void *)offsetof(HrpyStreamWriter, offset)},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot writer_slots[] = {
    {Py_tp_doc,
     "StreamWriter(destination=None, *, cross_machine=False)\n--\n\n"
     "Writes a Hurray stream, one tensor at a time, nothing buffered.\n"
     "\n"
     STREAM_FORMAT_DOC
     "\n"
     "- `write(obj)` takes a `hurray.Tensor` (every buffer, in table order) or a\n"
     "  `hurray.Composite` (its head, then its members, pre-order, after validating the whole\n"
     "  tree). Nothing is buffered: the bytes have reached the transport when it returns.\n"
     "- `finish()` ends the stream (closes the writer's own descriptor); idempotent. The\n"
     "  context manager calls it on exit. `write` after `finish` raises `hurray.StreamError`.\n"
     "  `close()` is `finish()` plus releasing the writer.\n"
     "- With no destination the stream is built in memory: `getvalue()` returns it, as many\n"
     "  times as asked, also after `finish()`. With a destination, `getvalue()` raises\n"
     "  `hurray.StreamError`.\n"
     "- `finished`, `offset` (bytes written).\n"
     "\n"
     STREAM_SHARED_DOC
     "Example: the guide, [Streaming](../guide/streaming.md)."},
    {Py_tp_new, writer_new},
    {Py_tp_methods, writer_methods},
    {Py_tp_getset, writer_getset},
    {Py_tp_dealloc, writer_dealloc},
    {0, NULL},
};

static PyType_Spec writer_spec = {
    .name = "hurray.StreamWriter",
    .basicsize = sizeof(HrpyStreamWriter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = writer_slots,
};

int hrpy_stream_init(PyObject *m, HrpyState *st) {
  st->io->StreamReaderType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &reader_spec, NULL);
  if (st->io->StreamReaderType == NULL || PyModule_AddType(m, st->io->StreamReaderType) < 0) return -1;
  st->io->StreamWriterType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &writer_spec, NULL);
  if (st->io->StreamWriterType == NULL) return -1;
  return PyModule_AddType(m, st->io->StreamWriterType);
}
