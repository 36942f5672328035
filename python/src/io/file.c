/*
 * io/file.c - .hrry files from Python (docs/internals/decisions.md, "File format"):
 * hurray.save, hurray.load, hurray.load_kv and the lazy reader hurray.open
 * (hurray.File).
 *
 * Everything goes through the C reader and writer (include/hurray/file.h;
 * docs/reference/c-api/file.md): what a load reads (hurray_file_load), what a
 * save writes and how it stays atomic (hurray_file_save), how composite
 * members are named, how a name resolves. This file converts arguments and
 * wraps what comes back; the C structures a call needs are built first with
 * the GIL held, from objects the call keeps alive, and the call runs without
 * it. A tensor's buffers are views of the file's mapping or of memory the
 * file tensor owns (the mmap= modes are hurray.load's docstring), kept alive
 * by a capsule holding the C library's HurrayFileTensor.
 */
#include "io/file.h"

#include "core/buffer.h"
#include "core/tensor.h"
#include "io/kv.h"
#include "io/slice.h"
#include "types/composite.h"
#include "types/descriptor.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/runtime.h"
#include "io/state.h"

#include <string.h>

#define F(o) ((HrpyFile *)(o))

static const char KEEPER_NAME[] = "hurray._file_tensor";

/* A bit of the options the tensors of a file are made with (never passed on
 * to the C library): the file is a memory image that belongs to it alone
 * (open_image with share, a writable buffer), so its views may be handed out
 * writable, as a copy-on-write mapping's are. */
#define HRPY_FILE_WRITABLE_IMAGE 0x40000000u

/* ---- errors ---------------------------------------------------------------------------- */

/* A failure of an operation on the file itself (opening, creating, finishing):
 * always hurray.FileError, whatever the status says (a path that names a
 * directory is an argument error to the C library, a file error to Python). */
static PyObject *raise_file(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                            const char *context, const char *path) {
  PyObject *exc = hrpy_exception_for(st, rc);
  if (rc == HURRAY_ERR_INVALID_ARGUMENT || rc == HURRAY_ERR_INVALID_STATE ||
      exc == st->InternalError)
    exc = st->FileError;
  /* a missing file or a permission refused: also FileNotFoundError /
   * PermissionError, with errno and filename (util/errors.c) */
  return hrpy_raise_file_status(st, exc, rc, err != NULL && err->status == rc ? err : NULL,
                                context, path);
}

/* "op: tensor 'name'" for tensor `index` of f. */
static void tensor_context(char *buf, size_t n, const char *op, const HurrayFile *f,
                           uint64_t index) {
  HurrayFileEntry e;
  if (f != NULL && hurray_file_entry(f, index, &e) == HURRAY_OK)
    PyOS_snprintf(buf, n, "%s: tensor '%.*s'", op, (int)(e.name_len > 120 ? 120 : e.name_len),
                  e.name);
  else
    PyOS_snprintf(buf, n, "%s", op);
}

/* ---- tensors out of a file ------------------------------------------------------------- */

static void keeper_destructor(PyObject *cap) {
  HrpySavedError saved;
  hrpy_dtor_begin(&saved);
  HurrayFileTensor *t = PyCapsule_GetPointer(cap, KEEPER_NAME);
  if (t != NULL) hurray_file_tensor_release(&t); /* the last user unmaps the file */
  hrpy_dtor_end(&saved, cap);
}

/* Buffer i of a file tensor: a view of the mapping or of memory the file
 * tensor owns, kept alive by its keeper capsule. */
typedef struct {
  HurrayFileTensor *ft;
  PyObject *keeper;
  bool writable;
} FileBufs;

static int file_buffer(void *ctx, uint32_t i, HrpyBuffer *b) {
  const FileBufs *x = ctx;
  const void *data = NULL;
  HRPY_CANNOT_FAIL(hurray_file_tensor_buffer(x->ft, i, &data, &b->size));
  /* A buffer of a read-only mapping is handed out read-only, so the const is
   * honoured; one read into memory of the tensor's own, or a view of a
   * copy-on-write mapping, may be written. */
  b->data = (uint8_t *)(uintptr_t)data;
  b->owner = Py_NewRef(x->keeper);
  b->readonly = !x->writable;
  return 0;
}

/* A hurray.Tensor over the buffers of ft (borrowed: the tensor takes its own
 * reference, so it outlives the file and the caller's reference). */
static PyObject *tensor_from_file(HrpyState *st, HurrayFileTensor *ft, uint32_t options,
                                  const char *context) {
  FileBufs x = {ft, PyCapsule_New(hurray_file_tensor_retain(ft), KEEPER_NAME, keeper_destructor),
                hurray_file_tensor_is_writable(ft) || (options & HRPY_FILE_WRITABLE_IMAGE)};
  if (x.keeper == NULL) {
    hurray_file_tensor_release(&ft); /* the reference retained for the capsule */
    return NULL;
  }
  PyObject *r = hrpy_tensor_read(st, hurray_file_tensor_descriptor(ft),
                                 hurray_file_tensor_buffer_count(ft), file_buffer, &x,
                                 options & ~HRPY_FILE_WRITABLE_IMAGE, context);
  Py_DECREF(x.keeper);
  return r;
}

typedef struct {
  HrpyState *st;
  const HurrayFileNode *node;
  uint32_t options;
  const char *context;
} NodeCtx;

static PyObject *node_to_py(HrpyState *st, const HurrayFileNode *node, uint32_t options,
                            const char *context);

static PyObject *node_member(void *ctx, uint32_t k) {
  const NodeCtx *x = ctx;
  return node_to_py(x->st, &x->node->members[k], x->options, x->context);
}

static PyObject *node_to_py(HrpyState *st, const HurrayFileNode *node, uint32_t options,
                            const char *context) {
  if (!node->is_composite) return tensor_from_file(st, node->tensor, options, context);
  NodeCtx x = {st, node, options, context};
  return hrpy_composite_read(st, hurray_file_tensor_descriptor(node->tensor), node->member_count,
                             node_member, &x, context);
}

/* What hurray_file_load refused, as Python sees it: a missing name is a
 * KeyError, a name two entries share a FileError naming it, a views record
 * the reader refuses a ValueError (hrpy_raise_views), a failed read the
 * status's exception naming the tensor. */
static PyObject *raise_load(HrpyState *st, const HurrayFile *f, HurrayStatus rc,
                            const HurrayError *err, const HurrayFileLoadFailure *fail,
                            PyObject *names, const char *op) {
  char ctx[200];
  if (fail->stage == HURRAY_FILE_LOAD_AT_VIEWS) return hrpy_raise_views(st, rc, err, op);
  if (fail->stage == HURRAY_FILE_LOAD_AT_NAME) {
    PyObject *name = PyTuple_GET_ITEM(names, (Py_ssize_t)fail->at);
    if (rc == HURRAY_ERR_NOT_FOUND) {
      PyErr_SetObject(PyExc_KeyError, name);
      return NULL;
    }
    PyOS_snprintf(ctx, sizeof ctx, "%s: tensor '%.120s'", op, PyUnicode_AsUTF8(name));
    return hrpy_raise_status(st, rc, NULL, ctx);
  }
  if (fail->stage == HURRAY_FILE_LOAD_AT_TENSOR)
    tensor_context(ctx, sizeof ctx, op, f, fail->at);
  else
    PyOS_snprintf(ctx, sizeof ctx, "%s", op);
  return hrpy_raise_status(st, rc, err, ctx);
}

/* hurray_file_load without the GIL: `names` a tuple of str (NULL: the whole
 * file). NULL with the exception raised. */
static HurrayFileLoad *run_load(HrpyState *st, const HurrayFile *f, PyObject *names,
                                uint32_t flags, const char *op) {
  Py_ssize_t n = names != NULL ? PyTuple_GET_SIZE(names) : 0;
  const char **s = names != NULL ? PyMem_Calloc((size_t)n + 1u, sizeof *s) : NULL;
  size_t *lens = names != NULL ? PyMem_Calloc((size_t)n + 1u, sizeof *lens) : NULL;
  HurrayFileLoad *L = NULL;
  if (names != NULL && (s == NULL || lens == NULL)) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_ssize_t len = 0;
    s[i] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(names, i), &len);
    if (s[i] == NULL) goto done;
    lens[i] = (size_t)len;
  }
  HurrayFileLoadFailure fail;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_load(f, s, lens, (uint64_t)n, flags, &L, &fail, &err);
  Py_END_ALLOW_THREADS
  if (rc != HURRAY_OK) raise_load(st, f, rc, &err, &fail, names, op);
done:
  PyMem_Free(s);
  PyMem_Free(lens);
  return L;
}

/* Item i of a load as a Python object: the object of the item it is the same
 * as (objs holds the earlier items'), or a new one naming the tensor or view. */
static PyObject *item_to_py(HrpyState *st, const HurrayFile *f, const HurrayFileLoad *L,
                            uint64_t i, PyObject *objs, uint32_t options, const char *op) {
  const HurrayFileLoadItem *x = &L->items[i];
  if (x->same_as != UINT64_MAX) return Py_NewRef(PyTuple_GET_ITEM(objs, (Py_ssize_t)x->same_as));
  char ctx[200];
  if (x->view >= 0)
    PyOS_snprintf(ctx, sizeof ctx, "%s: view '%.*s'", op,
                  (int)(x->name_len > 120 ? 120 : x->name_len), x->name);
  else
    tensor_context(ctx, sizeof ctx, op, f, x->index);
  return x->node != NULL ? node_to_py(st, x->node, options, ctx)
                         : tensor_from_file(st, x->tensor, options, ctx);
}

/* ---- opening ------------------------------------------------------------------------- */

/* mmap=: True or "c" (the default): a private copy-on-write mapping; "r": a
 * shared read-only one; False: plain reads. Anything else is a ValueError
 * (a bool is compared by identity: 0, 1 and None are not flags here). */
static int parse_mmap(PyObject *o, const char *fname, HurrayFileAccess *out) {
  if (o == NULL || o == Py_True) {
    *out = HURRAY_FILE_ACCESS_MMAP_COPY;
    return 0;
  }
  if (o == Py_False) {
    *out = HURRAY_FILE_ACCESS_READ;
    return 0;
  }
  if (PyUnicode_Check(o)) {
    if (PyUnicode_CompareWithASCIIString(o, "c") == 0) {
      *out = HURRAY_FILE_ACCESS_MMAP_COPY;
      return 0;
    }
    if (PyUnicode_CompareWithASCIIString(o, "r") == 0) {
      *out = HURRAY_FILE_ACCESS_MMAP;
      return 0;
    }
  }
  PyErr_Format(PyExc_ValueError,
               "%s: invalid mmap %R; expected True or 'c' (copy-on-write mapping, the "
               "default), 'r' (read-only mapping) or False (read into memory)",
               fname, o);
  return -1;
}

/* workers=: a whole number in [1, HURRAY_FILE_MAX_WORKERS]; None (or not
 * given): the environment variable HURRAY_WORKERS, else the library's default
 * (0 here: the library reads the variable). A bad value, given or in the
 * environment, is a ValueError naming it. */
static int parse_workers(PyObject *o, const char *fname, uint32_t *out) {
  *out = 0;
  if (o == NULL || o == Py_None) {
    uint32_t env = 0; /* checked here, read by the library */
    HurrayError err;
    hurray_error_clear(&err);
    if (hurray_file_workers_env(&env, &err) == HURRAY_OK) return 0;
    PyErr_Format(PyExc_ValueError, "%s: %s", fname, err.message);
    return -1;
  }
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow == 0 && v >= 1 && v <= (long long)HURRAY_FILE_MAX_WORKERS) {
      *out = (uint32_t)v;
      return 0;
    }
  }
  PyErr_Format(PyExc_ValueError,
               "%s: invalid workers %.100R; expected a whole number from 1 to %u (threads "
               "reading the file; 1 reads one piece at a time) or None (HURRAY_WORKERS, else %u)",
               fname, o, HURRAY_FILE_MAX_WORKERS, HURRAY_FILE_DEFAULT_WORKERS);
  return -1;
}

/* File.mmap_mode and the repr: "c", "r", or NULL for plain reads. */
static const char *mmap_mode_name(HurrayFileAccess access) {
  switch (access) {
    case HURRAY_FILE_ACCESS_MMAP_COPY: return "c";
    case HURRAY_FILE_ACCESS_MMAP: return "r";
    default: return NULL;
  }
}

static void image_release(void *ctx, const void *data, uint64_t size);

/* Opens a file through the C reader without the GIL: from a path (`from`
 * the path), a file image (a Py_buffer, moved into the file on success) or a
 * HurrayFileReader. A failure is hurray.FileError, `what` naming the file. */
typedef enum { FROM_PATH, FROM_IMAGE, FROM_READER } OpenFrom;
static HurrayFile *open_via(HrpyState *st, OpenFrom how, const void *from, HurrayFileAccess access,
                            uint32_t options, uint32_t workers, const char *what,
                            const char *path) {
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = access;
  o.decode_options = options & ~HRPY_FILE_WRITABLE_IMAGE;
  o.workers = workers;
  HurrayFile *f = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  const Py_buffer *view = from;
  Py_BEGIN_ALLOW_THREADS
  if (how == FROM_PATH)
    rc = hurray_file_open(from, &o, &f, &err);
  else if (how == FROM_IMAGE)
    rc = hurray_file_open_memory(view->buf, (uint64_t)view->len, image_release, (void *)view,
                                 &o, &f, &err);
  else
    rc = hurray_file_open_reader(from, &o, &f, &err);
  Py_END_ALLOW_THREADS
  if (rc != HURRAY_OK) raise_file(st, rc, &err, what, path);
  return f;
}

static HurrayFile *open_file(HrpyState *st, PyObject *pathobj, HurrayFileAccess access,
                             uint32_t options, uint32_t workers, const char *op) {
  PyObject *b = hrpy_fs_path(pathobj);
  if (b == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(b);
  char ctx[200];
  PyOS_snprintf(ctx, sizeof ctx, "%s: '%.150s'", op, p);
  HurrayFile *f = open_via(st, FROM_PATH, p, access, options, workers, ctx, p);
  Py_DECREF(b);
  return f;
}

/* permissive= as decode options (relay mode: unknown tags kept). */
static int parse_permissive(PyObject *o, uint32_t *out) {
  bool v;
  if (hrpy_arg_flag(o, false, &v) < 0) return -1;
  *out = v ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT;
  return 0;
}

/* ---- shared tensors: the views record (docs/reference/file-format.md, "Shared tensors") -------- */

/* The view count, the record checked whole (runs the check without the GIL
 * the first time); -1 with an exception. */
static int64_t view_count(HrpyState *st, const HurrayFile *f, const char *op) {
  uint64_t n = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_view_count(f, &n, &err);
  Py_END_ALLOW_THREADS
  if (rc != HURRAY_OK) {
    hrpy_raise_views(st, rc, &err, op);
    return -1;
  }
  return (int64_t)n;
}

/* The checked records as a tuple of (name, base, dtype name or None, shape,
 * byte_offset, byte_strides): what hurray.torch and hurray.numpy rebuild
 * their own views from. */
static PyObject *view_records(HrpyState *st, const HurrayFile *f, const char *op) {
  int64_t n = view_count(st, f, op);
  if (n < 0) return NULL;
  PyObject *out = PyTuple_New((Py_ssize_t)n);
  for (int64_t i = 0; out != NULL && i < n; i++) {
    HurrayFileView v;
    HRPY_CANNOT_FAIL(hurray_file_view(f, (uint64_t)i, &v, NULL));
    PyObject *shape = PyTuple_New(v.same ? 0 : (Py_ssize_t)v.rank);
    PyObject *strides = PyTuple_New(v.same ? 0 : (Py_ssize_t)v.rank);
    bool ok = shape != NULL && strides != NULL;
    for (uint32_t k = 0; ok && !v.same && k < v.rank; k++) {
      PyObject *a = PyLong_FromUnsignedLongLong(v.shape[k]);
      PyObject *b = PyLong_FromLongLong(v.byte_strides[k]);
      if (a == NULL || b == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        ok = false;
        break;
      }
      PyTuple_SET_ITEM(shape, k, a);
      PyTuple_SET_ITEM(strides, k, b);
    }
    PyObject *rec = NULL;
    if (ok)
      rec = v.same ? Py_BuildValue("(s#s#OOiO)", v.name, (Py_ssize_t)v.name_len, v.base,
                                   (Py_ssize_t)v.base_len, Py_None, shape, 0, strides)
                   : Py_BuildValue("(s#s#sOLO)", v.name, (Py_ssize_t)v.name_len, v.base,
                                   (Py_ssize_t)v.base_len, hurray_dtype_name(v.dtype), shape,
                                   (long long)v.byte_offset, strides);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (rec == NULL) {
      Py_CLEAR(out);
      break;
    }
    PyTuple_SET_ITEM(out, (Py_ssize_t)i, rec);
  }
  return out;
}

/* ---- load ------------------------------------------------------------------------------ */

/* The KV value of `key` (NUL-terminated), or None: one entry decoded, not the
 * whole section. */
static PyObject *kv_value(HrpyState *st, const HurrayFile *f, const char *key) {
  const HurrayKvValue *v = NULL;
  if (hurray_file_kv_find(f, key, strlen(key), &v) != HURRAY_OK || v == NULL) Py_RETURN_NONE;
  PyObject *k = PyUnicode_FromString(key);
  PyObject *r = k != NULL ? hrpy_kv_value_to_py(st, k, v) : NULL;
  Py_XDECREF(k);
  return r;
}

/* load(), and _load_with_views() for the Python layer (python/hurray/_files.py):
 * the same, returning (tensors, the KV value of "hurray.views" or None) from
 * one open of the file, so the shared-tensor record and the tensors come from
 * the same file. */
/* The Py_buffer of a file image, moved into the C file (hurray_file_open_memory
 * calls this once no file or tensor uses the image). The GIL is taken: the
 * last user may be a tensor freed by any thread. */
static void image_release(void *ctx, const void *data, uint64_t size) {
  (void)data;
  (void)size;
  PyGILState_STATE g = PyGILState_Ensure();
  PyBuffer_Release((Py_buffer *)ctx);
  PyMem_RawFree(ctx);
  PyGILState_Release(g);
}

/* A file image held by a Python object (bytes, bytearray, memoryview, any
 * contiguous buffer); no file system is involved. share=false: opened with
 * HURRAY_FILE_ACCESS_READ, each tensor copied out into memory of its own, so
 * nothing fetched refers to `data`. share=true: the tensors are views of
 * `data` (HURRAY_FILE_ACCESS_MMAP), which stays exported while any of them
 * lives; when `data` is writable they are writable too
 * (HRPY_FILE_WRITABLE_IMAGE is added to *options). Either way the buffer is
 * released when the file and its last tensor are gone (image_release). */
static HurrayFile *open_image(HrpyState *st, PyObject *data, bool share, uint32_t *options,
                              const char *op) {
  if (PyUnicode_Check(data)) {
    PyErr_Format(PyExc_TypeError,
                 "%s: data must be a bytes-like object holding a .hrry file image, not str "
                 "(to read a file by its path, use hurray.load)",
                 op);
    return NULL;
  }
  Py_buffer *view = PyMem_RawMalloc(sizeof *view);
  if (view == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  bool writable = share && PyObject_GetBuffer(data, view, PyBUF_WRITABLE) == 0;
  if (share && !writable) PyErr_Clear();
  if (!writable && PyObject_GetBuffer(data, view, PyBUF_SIMPLE) < 0) {
    PyMem_RawFree(view);
    if (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s: data must be a contiguous bytes-like object (bytes, bytearray, "
                   "memoryview) holding a .hrry file image, not %.100s",
                   op, Py_TYPE(data)->tp_name);
    }
    return NULL;
  }
  char ctx[120];
  PyOS_snprintf(ctx, sizeof ctx, "%s: a file image of %zd bytes", op, view->len);
  HurrayFile *f = open_via(st, FROM_IMAGE, view,
                           share ? HURRAY_FILE_ACCESS_MMAP : HURRAY_FILE_ACCESS_READ, *options, 0,
                           ctx, NULL);
  if (f == NULL) {
    PyBuffer_Release(view); /* not moved on failure */
    PyMem_RawFree(view);
    return NULL;
  }
  if (writable) *options |= HRPY_FILE_WRITABLE_IMAGE;
  return f;
}

/* ---- a file read through a Python source object --------------------------------------- */

/* HurrayFileReader.read_at over a Python object's readinto(offset, memoryview)
 * (the remote byte sources of hurray/_remote.py; any object with that method
 * and a size): called by the C reader without the GIL, from any thread, so it
 * takes the GIL for the call. The memoryview over `buf` is released before
 * returning, and a source that still exports it (a NumPy array over it) fails
 * the read; readinto must not write into `buf` once it returned (a slice it
 * kept escapes that check: the sources of hurray/_remote.py wait for every
 * part they started). A failure is the Python exception's message, in why. */
static int source_read_at(void *ctx, uint64_t offset, void *buf, uint64_t len, char *why,
                          size_t why_len) {
  if (len > (uint64_t)PY_SSIZE_T_MAX) {
    PyOS_snprintf(why, why_len, "a read of %llu bytes is too large for this platform",
                  (unsigned long long)len);
    return -1;
  }
  PyGILState_STATE g = PyGILState_Ensure();
  int ok = 0;
  PyObject *mv = PyMemoryView_FromMemory(buf, (Py_ssize_t)len, PyBUF_WRITE);
  PyObject *r = mv != NULL ? PyObject_CallMethod((PyObject *)ctx, "readinto", "KO",
                                                 (unsigned long long)offset, mv)
                           : NULL;
  if (r != NULL) {
    Py_ssize_t n = PyLong_Check(r) ? PyLong_AsSsize_t(r) : -1;
    if (n == (Py_ssize_t)len) {
      ok = 1;
    } else if (!PyErr_Occurred()) {
      PyErr_Format(PyExc_OSError, "readinto gave %R for a read of %llu bytes at byte %llu", r,
                   (unsigned long long)len, (unsigned long long)offset);
    }
    Py_DECREF(r);
  }
  if (mv != NULL) {
    /* the source must not keep an export of the memory: release() raises if it does */
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject *done = PyObject_CallMethod(mv, "release", NULL);
    Py_DECREF(mv);
    if (done == NULL && t == NULL) {
      ok = 0; /* refuse what it read */
    } else {
      PyErr_Clear();
      PyErr_Restore(t, v, tb);
    }
    Py_XDECREF(done);
  }
  if (!ok) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    PyObject *msg = v != NULL ? PyObject_Str(v) : NULL;
    const char *s = msg != NULL ? PyUnicode_AsUTF8(msg) : NULL;
    PyErr_Clear();
    if (s != NULL && s[0] != '\0')
      PyOS_snprintf(why, why_len, "%s", s);
    else
      PyOS_snprintf(why, why_len, "%s",
                    t != NULL ? ((PyTypeObject *)t)->tp_name : "the source's readinto failed");
    Py_XDECREF(msg);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
  }
  PyGILState_Release(g);
  return ok ? 0 : -1;
}

static void source_close(void *ctx) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)ctx);
  PyGILState_Release(g);
}

/* Opens the file `source` gives the bytes of: an object with readinto(offset,
 * memoryview) -> int and an int attribute size (hurray_file_open_reader; the
 * file holds a reference to it until it closes). `what` names it in errors. */
static HurrayFile *open_source(HrpyState *st, PyObject *source, uint32_t options,
                               const char *op, const char *what) {
  PyObject *size_obj = PyObject_GetAttrString(source, "size");
  if (size_obj == NULL) return NULL;
  unsigned long long size = PyLong_Check(size_obj) ? PyLong_AsUnsignedLongLong(size_obj)
                                                   : (unsigned long long)-1;
  Py_DECREF(size_obj);
  if (size == (unsigned long long)-1) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: a source's size must be a non-negative int", op);
    return NULL;
  }
  HurrayFileReader reader;
  memset(&reader, 0, sizeof reader);
  reader.read_at = source_read_at;
  reader.close = source_close;
  reader.ctx = Py_NewRef(source);
  reader.size = (uint64_t)size;
  HurrayFile *f = open_via(st, FROM_READER, &reader, HURRAY_FILE_ACCESS_READ, options, 0, what,
                           NULL);
  if (f == NULL) Py_DECREF(source); /* not moved on failure */
  return f;
}

/* load(path, ...) and load_bytes(data, ...): `from_bytes` reads a file image
 * held in memory (open_image) instead of a file. */
static PyObject *load_impl(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames, bool with_kv, bool from_bytes) {
  static const char *const names[] = {"path",   "names",   "mmap", "permissive",
                                      "verify", "workers", NULL};
  static const char *const image_names[] = {"data", "names", "permissive", "verify", "copy",
                                             NULL};
  const char *op = from_bytes ? "load_bytes" : "load";
  PyObject *a[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  bool copy = true; /* load_bytes: each tensor copied out of the image, or views of it */
  if (from_bytes) {
    PyObject *b[5];
    if (hrpy_parse_args(op, args, nargs, kwnames, image_names, 1, 1, b) < 0) return NULL;
    a[0] = b[0];
    a[1] = b[1];
    a[2] = Py_False;
    a[3] = b[2];
    a[4] = b[3];
    if (hrpy_arg_flag(b[4], true, &copy) < 0) return NULL;
  } else if (hrpy_parse_args(op, args, nargs, kwnames, names, 1, 1, a) < 0) {
    return NULL;
  }
  HrpyState *st = hrpy_state_of_module(m);
  HurrayFileAccess access;
  uint32_t options;
  bool verify = false;
  uint32_t workers = 0;
  if (parse_mmap(a[2], op, &access) < 0 || parse_permissive(a[3], &options) < 0 ||
      hrpy_arg_flag(a[4], false, &verify) < 0 ||
      (!from_bytes && parse_workers(a[5], op, &workers) < 0))
    return NULL;
  PyObject *wanted = NULL; /* a tuple of str when names= is given */
  if (a[1] != NULL && a[1] != Py_None) {
    if (PyUnicode_Check(a[1]) || PyBytes_Check(a[1]))
      return PyErr_Format(PyExc_TypeError, "%s: names must be a sequence of str, not a %.100s",
                          op, Py_TYPE(a[1])->tp_name);
    wanted = PySequence_Tuple(a[1]);
    if (wanted == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(wanted); i++) {
      if (!PyUnicode_Check(PyTuple_GET_ITEM(wanted, i))) {
        PyErr_Format(PyExc_TypeError, "%s: names[%zd] must be a str, not %.100s", op, i,
                     Py_TYPE(PyTuple_GET_ITEM(wanted, i))->tp_name);
        Py_DECREF(wanted);
        return NULL;
      }
    }
  }
  HurrayFile *f;
  if (from_bytes) {
    f = open_image(st, a[0], !copy, &options, op);
  } else {
    f = open_file(st, a[0], access, options, workers, op);
  }
  if (f == NULL) {
    Py_XDECREF(wanted);
    return NULL;
  }
  uint32_t flags = (verify ? HURRAY_FILE_LOAD_VERIFY : 0u) | (with_kv ? HURRAY_FILE_LOAD_STORED : 0u);
  HurrayFileLoad *L = run_load(st, f, wanted, flags, op);
  /* each item's object (same_as: an earlier item's), then the dict of names
   * to them: names= given, each name the caller's key */
  PyObject *objs = L != NULL ? PyTuple_New((Py_ssize_t)L->count) : NULL;
  PyObject *result = objs != NULL ? PyDict_New() : NULL;
  for (uint64_t i = 0; result != NULL && i < L->count; i++) {
    const HurrayFileLoadItem *x = &L->items[i];
    PyObject *obj = item_to_py(st, f, L, i, objs, options, op);
    PyObject *key = wanted != NULL ? Py_NewRef(PyTuple_GET_ITEM(wanted, (Py_ssize_t)i))
                                   : PyUnicode_DecodeUTF8(x->name, (Py_ssize_t)x->name_len,
                                                          "strict");
    if (obj != NULL) PyTuple_SET_ITEM(objs, (Py_ssize_t)i, Py_NewRef(obj));
    if (obj == NULL || key == NULL || PyDict_SetItem(result, key, obj) < 0) Py_CLEAR(result);
    Py_XDECREF(key);
    Py_XDECREF(obj);
  }
  Py_XDECREF(objs);
  hurray_file_load_destroy(&L);
  if (result != NULL && with_kv) {
    PyObject *records = view_records(st, f, op);
    PyObject *pair = records != NULL ? PyTuple_Pack(2, result, records) : NULL;
    Py_XDECREF(records);
    Py_SETREF(result, pair);
  }
  hurray_file_close(&f); /* an image is released with it, or with its last view */
  Py_XDECREF(wanted);
  return result;
}

static PyObject *m_load(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  return load_impl(m, args, nargs, kwnames, false, false);
}

static PyObject *m_load_with_views(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames) {
  return load_impl(m, args, nargs, kwnames, true, false);
}

static PyObject *m_load_bytes(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  return load_impl(m, args, nargs, kwnames, false, true);
}

static PyObject *m_load_bytes_with_views(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames) {
  return load_impl(m, args, nargs, kwnames, true, true);
}

static PyObject *m_load_kv(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static const char *const names[] = {"path", "max_kv_memory", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("load_kv", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  uint64_t max_kv_memory;
  if (hrpy_kv_max_memory_arg(a[1], &max_kv_memory) < 0) return NULL;
  /* plain reads: only the header, trailer, index and KV section are read */
  HurrayFile *f = open_file(st, a[0], HURRAY_FILE_ACCESS_READ, HURRAY_DECODE_STRICT, 1, "load_kv");
  if (f == NULL) return NULL;
  PyObject *d = hrpy_kv_to_dict(st, f, max_kv_memory, true);
  hurray_file_close(&f);
  return d;
}

/* remove_stale_temporaries(path, *, min_age=3600): what killed saves left. */
static PyObject *m_remove_stale_temporaries(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                            PyObject *kwnames) {
  static const char *const names[] = {"path", "min_age", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("remove_stale_temporaries", args, nargs, kwnames, names, 1, 1, a) < 0)
    return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  uint64_t min_age = 3600;
  if (a[1] != NULL && hrpy_arg_uint_as(PyExc_ValueError, a[1], "remove_stale_temporaries",
                                       "min_age", UINT32_MAX, &min_age) < 0)
    return NULL;
  PyObject *b = hrpy_fs_path(a[0]);
  if (b == NULL) return NULL;
  const char *p = PyBytes_AS_STRING(b);
  uint32_t removed = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_remove_stale_temporaries(p, (uint32_t)min_age, &removed, &err);
  Py_END_ALLOW_THREADS
  PyObject *r = NULL;
  if (rc == HURRAY_OK) {
    r = PyLong_FromUnsignedLong(removed);
  } else {
    char ctx[200];
    PyOS_snprintf(ctx, sizeof ctx, "remove_stale_temporaries: '%.150s' (%u removed)", p,
                  (unsigned)removed);
    raise_file(st, rc, &err, ctx, p);
  }
  Py_DECREF(b);
  return r;
}

/* ---- save ------------------------------------------------------------------------------ */

/* `desc`: the descriptor a composite's member presents (NULL: the tensor's own). */
static int save_node(HrpyState *st, HrpyArena *a, PyObject *obj, const HurrayDescriptor *desc,
                     const char *name, size_t len, const char *op,
                     HurrayFileCompositeNode *node) {
  memset(node, 0, sizeof *node);
  node->name = name; /* a member's: none, the C writer names it "{head}.{i}" */
  node->name_len = len;
  if (hrpy_tensor_check(st, obj)) {
    /* only memory this process can read is written: a device tensor's buffer
     * when it is a declaration over host bytes */
    char what[160];
    if (name != NULL)
      PyOS_snprintf(what, sizeof what, "%s: tensor '%.*s'", op, (int)(len > 120 ? 120 : len), name);
    else
      PyOS_snprintf(what, sizeof what, "%s", op);
    HrpyTensorView t = hrpy_tensor_view(obj);
    node->descriptor = desc != NULL ? desc : hrpy_tensor_desc(st, obj);
    if (node->descriptor == NULL || hrpy_tensor_check_host(st, obj, what) < 0) return -1;
    if (t.nbuf == 0) return 0;
    const void **p = hrpy_arena_alloc(a, t.nbuf * sizeof *p);
    if (p == NULL) return -1;
    for (uint32_t i = 0; i < t.nbuf; i++) p[i] = t.bufs[i].data;
    node->buffers = p;
    return 0;
  }
  uint32_t count = hrpy_composite_count(obj);
  node->descriptor = hrpy_composite_head(obj);
  node->member_count = count;
  HurrayFileCompositeNode *kids = hrpy_arena_alloc(a, (size_t)count * sizeof *kids);
  if (kids == NULL && count > 0) return -1;
  node->members = kids;
  for (uint32_t i = 0; i < count; i++)
    if (save_node(st, a, hrpy_composite_member(obj, i),
                  hrpy_composite_member_descriptor(st, obj, i), NULL, 0, op, &kids[i]) < 0)
      return -1;
  return 0;
}

int hrpy_save_node(HrpyState *st, HrpyArena *a, PyObject *obj, const char *name, size_t len,
                   const char *op, HurrayFileCompositeNode *node) {
  return save_node(st, a, obj, NULL, name, len, op, node);
}

PyObject *hrpy_raise_save(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                          const HurrayFileContents *c, const HurrayFileSaveFailure *fail,
                          const char *op, const char *path) {
  char ctx[220];
  const char *s = NULL;
  size_t n = 0;
  if (fail->stage == HURRAY_FILE_SAVE_AT_TENSOR) {
    s = c->items[fail->at].name;
    n = c->items[fail->at].name_len;
    PyOS_snprintf(ctx, sizeof ctx, "%s: tensor '%.*s'", op, (int)(n > 120 ? 120 : n), s);
  } else if (fail->stage == HURRAY_FILE_SAVE_AT_VIEW) {
    s = c->views[fail->at].name;
    n = c->views[fail->at].name_len;
    PyOS_snprintf(ctx, sizeof ctx, "%s: view '%.*s'", op, (int)(n > 120 ? 120 : n), s);
    /* a view that breaks a rule is a bad argument of the caller's */
    if (rc == HURRAY_ERR_INVALID_ARGUMENT || rc == HURRAY_ERR_DUPLICATE_NAME)
      return PyErr_Format(PyExc_ValueError, "%s: %s", ctx, err->message);
  } else if (fail->stage == HURRAY_FILE_SAVE_AT_KV) {
    s = c->kv_keys[fail->at];
    n = c->kv_key_lens[fail->at];
    PyOS_snprintf(ctx, sizeof ctx, "%s: kv['%.*s']", op, (int)(n > 120 ? 120 : n), s);
  } else if (path == NULL) {
    PyOS_snprintf(ctx, sizeof ctx, "%s: the file image", op);
  } else {
    PyOS_snprintf(ctx, sizeof ctx, "%s: '%.150s'", op, path);
    return raise_file(st, rc, err, ctx, path);
  }
  return hrpy_raise_status(st, rc, err, ctx);
}

/* One views= record as a HurrayFileView (strings and arrays in the arena,
 * which the record's str objects outlive: the caller keeps the sequence). */
int hrpy_view_from_py(HrpyArena *arena, PyObject *rec, const char *op, HurrayFileView *v) {
  memset(v, 0, sizeof *v);
  PyObject *name, *base, *dtype, *shape, *off, *strides;
  if (!PyTuple_Check(rec) ||
      !PyArg_ParseTuple(rec, "UUOOOO", &name, &base, &dtype, &shape, &off, &strides)) {
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s: a views record is (name, base, dtype or None, shape, byte_offset, "
                   "byte_strides), not %.100s",
                   op, Py_TYPE(rec)->tp_name);
    }
    return -1;
  }
  Py_ssize_t nl = 0, bl = 0;
  v->name = PyUnicode_AsUTF8AndSize(name, &nl);
  v->base = v->name != NULL ? PyUnicode_AsUTF8AndSize(base, &bl) : NULL;
  if (v->base == NULL) return -1;
  v->name_len = (size_t)nl;
  v->base_len = (size_t)bl;
  if (dtype == Py_None) {
    v->same = true;
    return 0;
  }
  const char *tn = PyUnicode_Check(dtype) ? PyUnicode_AsUTF8(dtype) : NULL;
  if (tn == NULL || hurray_dtype_from_name(tn, &v->dtype) != HURRAY_OK) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_ValueError, "%s: view %R: dtype %R is not a hurray type name", op,
                   name, dtype);
    return -1;
  }
  PyObject *sh = PySequence_Tuple(shape), *stv = sh != NULL ? PySequence_Tuple(strides) : NULL;
  int r = -1;
  if (stv == NULL) goto out;
  Py_ssize_t rank = PyTuple_GET_SIZE(sh);
  if (PyTuple_GET_SIZE(stv) != rank || rank > (Py_ssize_t)HURRAY_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "%s: view %R: %zd dimensions and %zd strides (at most %u)",
                 op, name, rank, PyTuple_GET_SIZE(stv), HURRAY_MAX_RANK);
    goto out;
  }
  uint64_t *dims = hrpy_arena_alloc(arena, (size_t)(rank ? rank : 1) * sizeof *dims);
  int64_t *bst = hrpy_arena_alloc(arena, (size_t)(rank ? rank : 1) * sizeof *bst);
  if (dims == NULL || bst == NULL) goto out;
  for (Py_ssize_t k = 0; k < rank; k++) {
    dims[k] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(sh, k));
    bst[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(stv, k));
    if (PyErr_Occurred()) goto out;
  }
  v->byte_offset = PyLong_AsLongLong(off);
  if (PyErr_Occurred()) goto out;
  v->rank = (uint32_t)rank;
  v->shape = dims;
  v->byte_strides = bst;
  r = 0;
out:
  Py_XDECREF(sh);
  Py_XDECREF(stv);
  return r;
}

int hrpy_views_from_py(HrpyArena *arena, PyObject *seq, const char *op, HurrayFileContents *c) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  HurrayFileView *views = hrpy_arena_alloc(arena, (size_t)(n ? n : 1) * sizeof *views);
  if (views == NULL) return -1;
  for (Py_ssize_t i = 0; i < n; i++)
    if (hrpy_view_from_py(arena, PySequence_Fast_GET_ITEM(seq, i), op, &views[i]) < 0) return -1;
  c->views = views;
  c->view_count = (uint64_t)n;
  return 0;
}

/* save(path, tensors, ...) and save_bytes(tensors, ...): `to_memory` writes
 * the file image into memory (hurray_file_writer_open_memory) and returns it
 * as bytes, with no file system involved. */
static PyObject *save_impl(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames, bool to_memory) {
  static const char *const names[] = {"path", "tensors", "kv", "durable", "checksums", "views",
                                      NULL};
  static const char *const image_names[] = {"tensors", "kv", "checksums", "views", NULL};
  const char *op = to_memory ? "save_bytes" : "save";
  PyObject *a[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  if (to_memory) {
    PyObject *b[4];
    if (hrpy_parse_args(op, args, nargs, kwnames, image_names, 1, 1, b) < 0) return NULL;
    a[1] = b[0];
    a[2] = b[1];
    a[4] = b[2];
    a[5] = b[3];
  } else if (hrpy_parse_args(op, args, nargs, kwnames, names, 2, 2, a) < 0) {
    return NULL;
  }
  HrpyState *st = hrpy_state_of_module(m);
  /* durable=True (the default): fsync the file before the rename and the
   * folder after it. False skips both syncs, never the temporary file and the
   * rename. A bool exactly: this flag trades safety away. */
  if (a[3] != NULL && !PyBool_Check(a[3]))
    return PyErr_Format(PyExc_TypeError, "%s: durable must be True or False, not %.100s", op,
                        Py_TYPE(a[3])->tp_name);
  HurrayFileWriterOptions wopt;
  memset(&wopt, 0, sizeof wopt);
  wopt.skip_fsync = a[3] == Py_False;
  /* checksums=True (the default): a CRC-32C of every tensor in the KV entry
   * HURRAY_FILE_KV_DATA_CRC32C, computed while writing (docs/reference/file-format.md). */
  if (hrpy_arg_flag(a[4], true, &wopt.data_checksums) < 0) return NULL;
  PyObject *path = NULL, *items = NULL, *result = NULL, *view_seq = NULL;
  HrpyArena arena = {NULL, 0, 0};
  HrpyKvList kv;
  memset(&kv, 0, sizeof kv);
  HurrayFileContents c;
  memset(&c, 0, sizeof c);
  if (!PyDict_Check(a[1]) && !PyObject_HasAttrString(a[1], "items"))
    return PyErr_Format(PyExc_TypeError,
                        "%s: tensors must be a dict of name to hurray.Tensor or "
                        "hurray.Composite, not %.100s",
                        op, Py_TYPE(a[1])->tp_name);
  if (!to_memory) {
    path = hrpy_fs_path(a[0]);
    if (path == NULL) goto done;
  }
  /* the pairs keep every name and tensor alive while the GIL is released */
  items = PyMapping_Items(a[1]);
  if (items == NULL) goto done;
  Py_ssize_t n = PyList_GET_SIZE(items);
  HurrayFileCompositeNode *nodes = hrpy_arena_alloc(&arena, (size_t)(n ? n : 1) * sizeof *nodes);
  if (nodes == NULL) goto done;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *pair = PyList_GET_ITEM(items, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_Format(PyExc_TypeError, "%s: tensors.items() must yield (name, tensor) pairs", op);
      goto done;
    }
    PyObject *key = PyTuple_GET_ITEM(pair, 0), *val = PyTuple_GET_ITEM(pair, 1);
    if (!PyUnicode_Check(key)) {
      PyErr_Format(PyExc_TypeError, "%s: tensor names must be str, not %.100s", op,
                   Py_TYPE(key)->tp_name);
      goto done;
    }
    if (!hrpy_tensor_check(st, val) && !hrpy_composite_check(st, val)) {
      PyErr_Format(PyExc_TypeError,
                   "%s: tensors[%R] must be a hurray.Tensor or hurray.Composite, not %.100s",
                   op, key, Py_TYPE(val)->tp_name);
      goto done;
    }
    Py_ssize_t len = 0;
    const char *s = PyUnicode_AsUTF8AndSize(key, &len);
    if (s == NULL || hrpy_save_node(st, &arena, val, s, (size_t)len, op, &nodes[i]) < 0)
      goto done;
  }
  c.items = nodes;
  c.item_count = (uint64_t)n;
  if (hrpy_kv_from_mapping(st, a[2], &kv) < 0) goto done;
  c.kv_keys = kv.keys;
  c.kv_key_lens = kv.key_lens;
  c.kv_values = kv.values;
  c.kv_count = kv.count;
  /* views=: (name, base, dtype name or None, shape, byte_offset, byte_strides)
   * records, checked and written by the C writer (hurray_file_writer_add_view) */
  if (a[5] != NULL && a[5] != Py_None) {
    view_seq = PySequence_Fast(a[5], "save: views must be a sequence of records");
    if (view_seq == NULL || hrpy_views_from_py(&arena, view_seq, op, &c) < 0) goto done;
  }
  const char *p = to_memory ? NULL : PyBytes_AS_STRING(path);
  void *image = NULL;
  uint64_t image_size = 0;
  HurrayFileSaveFailure fail;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_save(p, &wopt, &c, &image, &image_size, &fail, &err);
  Py_END_ALLOW_THREADS
  if (rc != HURRAY_OK) {
    hrpy_raise_save(st, rc, &err, &c, &fail, op, p);
  } else if (to_memory) {
    /* one copy, into the bytes object a caller of safetensors' save() expects */
    result = image_size <= (uint64_t)PY_SSIZE_T_MAX
                 ? PyBytes_FromStringAndSize(image, (Py_ssize_t)image_size)
                 : PyErr_NoMemory();
    hurray_free(image);
  } else {
    result = Py_NewRef(Py_None);
  }
done:
  hrpy_kv_list_free(&kv);
  hrpy_arena_free(&arena);
  Py_XDECREF(items);
  Py_XDECREF(path);
  Py_XDECREF(view_seq);
  return result;
}

static PyObject *m_save(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  return save_impl(m, args, nargs, kwnames, false);
}

static PyObject *m_save_bytes(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  return save_impl(m, args, nargs, kwnames, true);
}

/* ---- hurray.File: the lazy reader --------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  HurrayFile *f;   /* NULL once closed and no call uses it */
  PyObject *path;  /* as os.fspath gave it (str or bytes), for repr */
  PyObject *names; /* tuple of every name in file order, built on first use */
  PyObject *kv;    /* dict, built on first use (without hurray's own records) */
  uint32_t busy;   /* calls running without the GIL */
  uint32_t options; /* HURRAY_DECODE_* */
  uint64_t max_kv_memory; /* bound on the KV dict (bytes; UINT64_MAX: none) */
  bool closed;
  HurrayFileAccess access; /* as opened: fixed for the object's life */
  PyObject *ref;    /* pickle="reference": what each fetched tensor is registered with
                       (ref.register(tensor, name), hurray/_pickling.py); NULL: none */
  PyObject *reopen; /* (callable, args) that __reduce__ gives: the same file, opened
                       the same way (set by hurray.open); NULL: not picklable */
} HrpyFile;

/*
 * Every use of the C handle is bracketed by file_acquire / file_release: the
 * count of calls in flight (`busy`) and the closed flag change together in a
 * critical section on the object, so close() from another thread never frees
 * the handle under a running call (the last call out closes it). The calls
 * themselves run outside the section, the blocking ones without the GIL; the
 * C handle is safe for concurrent reads (include/hurray/file.h).
 */
static const HurrayFile *file_acquire(HrpyFile *self) {
  const HurrayFile *f = NULL;
  Py_BEGIN_CRITICAL_SECTION(self);
  if (!self->closed) {
    self->busy++;
    f = self->f;
  }
  Py_END_CRITICAL_SECTION();
  if (f == NULL) PyErr_SetString(PyExc_ValueError, "I/O operation on a closed hurray.File");
  return f;
}

static void file_release(HrpyFile *self) {
  Py_BEGIN_CRITICAL_SECTION(self);
  self->busy--;
  if (self->closed && self->busy == 0) hurray_file_close(&self->f);
  Py_END_CRITICAL_SECTION();
}

/* The names tuple in file order (borrowed; built once, on first use). */
static PyObject *file_names(HrpyFile *self, const HurrayFile *f) {
  PyObject *names = hrpy_peek(&self->names);
  if (names != NULL) return names;
  HrpyState *st = hrpy_state_of((PyObject *)self);
  uint64_t n = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_file_name_count(f, &n, &err);
  if (rc != HURRAY_OK) return hrpy_raise_views(st, rc, &err, "hurray.File.keys");
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  for (uint64_t i = 0; t != NULL && i < n; i++) {
    const char *s = NULL;
    size_t len = 0;
    PyObject *u = NULL;
    rc = hurray_file_name(f, i, &s, &len, NULL);
    if (rc == HURRAY_OK)
      u = PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "strict");
    else
      hrpy_raise_status(st, rc, NULL, "hurray.File.keys");
    if (u == NULL) Py_CLEAR(t);
    else PyTuple_SET_ITEM(t, (Py_ssize_t)i, u);
  }
  return hrpy_publish(&self->names, t);
}

static PyObject *file_get(HrpyFile *self, PyObject *name, const char *op) {
  HrpyState *st = hrpy_state_of((PyObject *)self);
  if (!PyUnicode_Check(name))
    return PyErr_Format(PyExc_TypeError, "%s: tensor names are str, not %.100s", op,
                        Py_TYPE(name)->tp_name);
  const HurrayFile *f = file_acquire(self);
  if (f == NULL) return NULL;
  PyObject *names = PyTuple_Pack(1, name);
  HurrayFileLoad *L = names != NULL ? run_load(st, f, names, 0, op) : NULL;
  PyObject *r = L != NULL ? item_to_py(st, f, L, 0, NULL, self->options, op) : NULL;
  hurray_file_load_destroy(&L);
  Py_XDECREF(names);
  file_release(self);
  PyObject *ref = r != NULL ? Py_XNewRef(self->ref) : NULL;
  if (ref != NULL && PyObject_TypeCheck(r, st->core->TensorType)) {
    /* pickle="reference": from now on the tensor pickles as a reference */
    PyObject *done = PyObject_CallMethod(ref, "register", "OO", r, name);
    if (done == NULL) Py_CLEAR(r);
    Py_XDECREF(done);
  }
  Py_XDECREF(ref);
  return r;
}

static PyObject *file_subscript(PyObject *self, PyObject *name) {
  return file_get(F(self), name, "hurray.File");
}

static PyObject *file_get_tensor(PyObject *self, PyObject *name) {
  return file_get(F(self), name, "get_tensor");
}

static Py_ssize_t file_length(PyObject *self) {
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return -1;
  uint64_t n = 0;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS /* the views record is checked the first time */
  rc = hurray_file_name_count(f, &n, &err);
  Py_END_ALLOW_THREADS
  file_release(F(self));
  if (rc == HURRAY_OK) return (Py_ssize_t)n;
  hrpy_raise_views(hrpy_state_of(self), rc, &err, "hurray.File");
  return -1;
}

static int file_contains(PyObject *self, PyObject *name) {
  if (!PyUnicode_Check(name)) return 0;
  Py_ssize_t len = 0;
  const char *s = PyUnicode_AsUTF8AndSize(name, &len);
  if (s == NULL) return -1;
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return -1;
  uint64_t idx;
  bool is_view;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_find_name(f, s, (size_t)len, &idx, &is_view, &err);
  Py_END_ALLOW_THREADS
  file_release(F(self));
  if (rc == HURRAY_OK || rc == HURRAY_ERR_DUPLICATE_NAME) return 1; /* present (twice) */
  if (rc == HURRAY_ERR_NOT_FOUND) return 0;
  hrpy_raise_views(hrpy_state_of(self), rc, &err, "hurray.File");
  return -1;
}

/* The names tuple (new reference), or NULL with an exception. */
static PyObject *names_of(PyObject *self) {
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return NULL;
  PyObject *names = Py_XNewRef(file_names(F(self), f));
  file_release(F(self));
  return names;
}

static PyObject *file_iter(PyObject *self) {
  PyObject *names = names_of(self);
  PyObject *it = names != NULL ? PyObject_GetIter(names) : NULL;
  Py_XDECREF(names);
  return it;
}

static PyObject *file_keys(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *names = names_of(self);
  PyObject *list = names != NULL ? PySequence_List(names) : NULL;
  Py_XDECREF(names);
  return list;
}

/* File._views(): the views record, checked whole by the C reader, as
 * load's records (view_records). */
static PyObject *file_views(PyObject *self, PyObject *unused) {
  (void)unused;
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return NULL;
  PyObject *r = view_records(hrpy_state_of(self), f, "hurray.File");
  file_release(F(self));
  return r;
}

/* File.views: each view's name to its base's name. */
static PyObject *file_views_map(PyObject *self, void *closure) {
  (void)closure;
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return NULL;
  int64_t n = view_count(hrpy_state_of(self), f, "hurray.File.views");
  PyObject *d = n >= 0 ? PyDict_New() : NULL;
  for (int64_t i = 0; d != NULL && i < n; i++) {
    HurrayFileView v;
    HRPY_CANNOT_FAIL(hurray_file_view(f, (uint64_t)i, &v, NULL));
    PyObject *k = PyUnicode_DecodeUTF8(v.name, (Py_ssize_t)v.name_len, "strict");
    PyObject *b = PyUnicode_DecodeUTF8(v.base, (Py_ssize_t)v.base_len, "strict");
    if (k == NULL || b == NULL || PyDict_SetItem(d, k, b) < 0) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(b);
  }
  file_release(F(self));
  return d;
}

/* File.descriptor(key): the descriptor of a name (a stored tensor or a view:
 * hurray_file_find_descriptor) or of an index entry (an int: hurray_file_descriptor),
 * decoded alone: no data is read. */
static PyObject *file_descriptor(PyObject *self, PyObject *key) {
  HrpyState *st = hrpy_state_of(self);
  bool by_index = PyLong_Check(key) && !PyBool_Check(key);
  if (!by_index && !PyUnicode_Check(key))
    return PyErr_Format(PyExc_TypeError,
                        "File.descriptor: a tensor name (str) or an index entry (int), not "
                        "%.100s",
                        Py_TYPE(key)->tp_name);
  uint64_t index = 0;
  const char *s = NULL;
  Py_ssize_t len = 0;
  if (by_index) {
    index = PyLong_AsUnsignedLongLong(key);
    if (index == (uint64_t)-1 && PyErr_Occurred()) {
      PyErr_Clear();
      return PyErr_Format(PyExc_IndexError, "File.descriptor: no index entry %R", key);
    }
  } else if ((s = PyUnicode_AsUTF8AndSize(key, &len)) == NULL) {
    return NULL;
  }
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return NULL;
  HurrayDescriptor *d = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  bool is_view = false;
  Py_BEGIN_ALLOW_THREADS
  rc = by_index ? hurray_file_descriptor(f, index, &d, &err)
                : hurray_file_find_descriptor(f, s, (size_t)len, &index, &is_view, &d, &err);
  Py_END_ALLOW_THREADS
  char ctx[200];
  if (rc != HURRAY_OK && !by_index && rc != HURRAY_ERR_NOT_FOUND)
    PyOS_snprintf(ctx, sizeof ctx, "File.descriptor: tensor '%.120s'", s);
  else if (rc != HURRAY_OK && by_index && rc != HURRAY_ERR_INDEX_OUT_OF_BOUNDS)
    tensor_context(ctx, sizeof ctx, "File.descriptor", f, index);
  file_release(F(self));
  if (rc == HURRAY_ERR_NOT_FOUND && !by_index) {
    PyErr_SetObject(PyExc_KeyError, key);
    return NULL;
  }
  if (rc == HURRAY_ERR_INDEX_OUT_OF_BOUNDS && by_index)
    return PyErr_Format(PyExc_IndexError, "File.descriptor: no index entry %R", key);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, err.status == rc ? &err : NULL, ctx);
  return hrpy_descriptor_wrap(st, d, NULL);
}

/* File.entries(): each index entry, in index order, as (name, descriptor_offset,
 * descriptor_length, data_offset, data_length): where its bytes lie, read from
 * the index alone. */
static PyObject *file_entries(PyObject *self, PyObject *unused) {
  (void)unused;
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return NULL;
  uint64_t n = hurray_file_tensor_count(f);
  PyObject *out = PyTuple_New((Py_ssize_t)n);
  for (uint64_t i = 0; out != NULL && i < n; i++) {
    HurrayFileEntry e;
    HRPY_CANNOT_FAIL(hurray_file_entry(f, i, &e));
    PyObject *t = Py_BuildValue("(s#KKKK)", e.name, (Py_ssize_t)e.name_len,
                                (unsigned long long)e.descriptor_offset,
                                (unsigned long long)e.descriptor_length,
                                (unsigned long long)e.data_offset,
                                (unsigned long long)e.data_length);
    if (t == NULL) Py_CLEAR(out);
    else PyTuple_SET_ITEM(out, (Py_ssize_t)i, t);
  }
  file_release(F(self));
  return out;
}

/* File.info(): the facts of the header and trailer (hurray_file_info). */
static PyObject *file_info(PyObject *self, PyObject *unused) {
  (void)unused;
  const HurrayFile *f = file_acquire(F(self));
  if (f == NULL) return NULL;
  HurrayFileInfo i;
  HRPY_CANNOT_FAIL(hurray_file_info(f, &i));
  file_release(F(self));
  PyObject *hint = i.tensor_count_hint == UINT64_MAX
                       ? Py_NewRef(Py_None)
                       : PyLong_FromUnsignedLongLong(i.tensor_count_hint);
  PyObject *version = PyUnicode_FromFormat("%u.%u", (unsigned)i.version_major,
                                           (unsigned)i.version_minor);
  if (hint == NULL || version == NULL) {
    Py_XDECREF(hint);
    Py_XDECREF(version);
    return NULL;
  }
  return Py_BuildValue("{s:N,s:I,s:I,s:K,s:N,s:K,s:K,s:K,s:K,s:I,s:I}", "version", version, "flags",
                       (unsigned)i.flags, "data_alignment", (unsigned)i.data_alignment,
                       "first_descriptor_offset", (unsigned long long)i.first_descriptor_offset,
                       "tensor_count_hint", hint, "file_size", (unsigned long long)i.file_size,
                       "index_offset", (unsigned long long)i.index_offset, "index_length",
                       (unsigned long long)i.index_length, "kv_offset",
                       (unsigned long long)i.kv_offset, "kv_length", (unsigned)i.kv_length,
                       "index_crc32c", (unsigned)i.index_crc32c);
}

/* File._repr_html_() (notebooks): the package's HTML of the summary and the table
 * (hurray/_view/render.py, imported when first asked), or None before the
 * package registered it (the notebook then shows the repr). */
static PyObject *file_repr_html(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *fn = hrpy_peek(&hrpy_state_of(self)->hook_file_html);
  return fn != NULL ? PyObject_CallOneArg(fn, self) : Py_NewRef(Py_None);
}

/* File._kv_value(key): one KV value (None when absent), without decoding the
 * rest of the section (and so without its max_kv_memory bound). */
static PyObject *file_kv_value(PyObject *self, PyObject *key) {
  if (!PyUnicode_Check(key))
    return PyErr_Format(PyExc_TypeError, "File._kv_value: key must be a str, not %.100s",
                        Py_TYPE(key)->tp_name);
  const char *k = PyUnicode_AsUTF8(key);
  if (k == NULL) return NULL;
  HrpyFile *fo = F(self);
  const HurrayFile *f = file_acquire(fo);
  if (f == NULL) return NULL;
  PyObject *r = kv_value(hrpy_state_of(self), f, k);
  file_release(fo);
  return r;
}

static PyObject *file_kv(PyObject *self, void *closure) {
  (void)closure;
  HrpyFile *fo = F(self);
  const HurrayFile *f = file_acquire(fo);
  if (f == NULL) return NULL;
  PyObject *kv = hrpy_peek(&fo->kv);
  if (kv == NULL)
    kv = hrpy_publish(&fo->kv, hrpy_kv_to_dict(hrpy_state_of(self), f, fo->max_kv_memory, false));
  PyObject *copy = kv != NULL ? PyDict_Copy(kv) : NULL;
  file_release(fo);
  return copy;
}

static PyObject *file_metadata(PyObject *self, PyObject *unused) {
  (void)unused;
  return file_kv(self, NULL);
}

/* File._verify(): (tensors checked, whether the file has data checksums,
 * bytes checksummed), or the first violation raised (a FileError naming the
 * tensor, the field and the byte offset). The Python layer makes the report. */
static PyObject *file_verify(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyFile *fo = F(self);
  const HurrayFile *f = file_acquire(fo);
  if (f == NULL) return NULL;
  HurrayFileDataReport rep;
  bool has_sums = false;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_check(f, &rep, &has_sums, &err);
  Py_END_ALLOW_THREADS
  uint64_t n = hurray_file_tensor_count(f);
  file_release(fo);
  HrpyState *st = hrpy_state_of(self);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, "File.verify");
  PyObject *r = PyStructSequence_New(st->io->VerifyReportType);
  if (r == NULL) return NULL;
  PyObject *a = PyLong_FromUnsignedLongLong(n);
  PyObject *c = PyLong_FromUnsignedLongLong(rep.bytes);
  if (a == NULL || c == NULL) {
    Py_XDECREF(a);
    Py_XDECREF(c);
    Py_DECREF(r);
    return NULL;
  }
  PyStructSequence_SetItem(r, 0, a);
  PyStructSequence_SetItem(r, 1, Py_NewRef(has_sums ? Py_True : Py_False));
  PyStructSequence_SetItem(r, 2, c);
  return r;
}

/* get_slice (io/slice.c): the handle is lent through file_acquire / file_release,
 * so a slice's read counts as a call in flight and close() waits for it. */
static const HurrayFile *slice_lease_acquire(PyObject *file) { return file_acquire(F(file)); }
static void slice_lease_release(PyObject *file) { file_release(F(file)); }
static const HrpySliceLease file_slice_lease = {slice_lease_acquire, slice_lease_release};

static PyObject *file_get_slice(PyObject *self, PyObject *name) {
  return hrpy_slice_open(hrpy_state_of(self), self, &file_slice_lease, name);
}

static PyObject *file_close(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyFile *fo = F(self);
  Py_BEGIN_CRITICAL_SECTION(self);
  fo->closed = true;
  if (fo->busy == 0) hurray_file_close(&fo->f); /* else the last call out closes it */
  Py_END_CRITICAL_SECTION();
  Py_RETURN_NONE;
}

/* pickling: reopened by path in the receiver, with the same options. */
static PyObject *file_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyFile *fo = F(self);
  PyObject *r = NULL;
  Py_BEGIN_CRITICAL_SECTION(self);
  if (!fo->closed && fo->reopen != NULL) r = Py_NewRef(fo->reopen);
  Py_END_CRITICAL_SECTION();
  if (r == NULL)
    PyErr_SetString(PyExc_TypeError, fo->closed ? "cannot pickle a closed hurray.File"
                                                : "cannot pickle this hurray.File (open it "
                                                  "with hurray.open)");
  return r;
}

/* File._set_pickling(reopen, ref): what hurray.open records once the file
 * is open (hurray/_files.py): reopen a (callable, args) pair for __reduce__,
 * ref None or the reference every fetched tensor registers with. */
static PyObject *file_set_pickling(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) != 2)
    return PyErr_Format(PyExc_TypeError, "_set_pickling(reopen, ref): reopen is a "
                                         "(callable, args) pair");
  HrpyFile *fo = F(self);
  PyObject *ref = args[1] == Py_None ? NULL : args[1];
  Py_BEGIN_CRITICAL_SECTION(self);
  Py_XSETREF(fo->reopen, Py_NewRef(args[0]));
  Py_XSETREF(fo->ref, Py_XNewRef(ref));
  Py_END_CRITICAL_SECTION();
  Py_RETURN_NONE;
}

static PyObject *file_ref(PyObject *self, void *closure) {
  (void)closure;
  PyObject *r;
  Py_BEGIN_CRITICAL_SECTION(self);
  r = F(self)->ref != NULL ? Py_NewRef(F(self)->ref) : Py_NewRef(Py_None);
  Py_END_CRITICAL_SECTION();
  return r;
}

static PyObject *file_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  if (file_acquire(F(self)) == NULL) return NULL;
  file_release(F(self));
  return Py_NewRef(self);
}

static PyObject *file_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)args;
  (void)nargs;
  return file_close(self, NULL);
}

static PyObject *file_closed(PyObject *self, void *closure) {
  (void)closure;
  bool closed;
  Py_BEGIN_CRITICAL_SECTION(self);
  closed = F(self)->closed;
  Py_END_CRITICAL_SECTION();
  return PyBool_FromLong(closed);
}

static PyObject *file_mapped(PyObject *self, void *closure) {
  (void)closure;
  return PyBool_FromLong(F(self)->access != HURRAY_FILE_ACCESS_READ);
}

static PyObject *file_mmap_mode(PyObject *self, void *closure) {
  (void)closure;
  const char *mode = mmap_mode_name(F(self)->access);
  return mode != NULL ? PyUnicode_FromString(mode) : Py_NewRef(Py_None);
}

static PyObject *file_repr(PyObject *self) {
  HrpyFile *fo = F(self);
  const HurrayFile *f = file_acquire(fo);
  if (f == NULL) {
    PyErr_Clear();
    return PyUnicode_FromFormat("<hurray.File %R (closed)>", fo->path);
  }
  const char *mode = mmap_mode_name(fo->access);
  uint64_t nv = 0;
  if (hurray_file_view_count(f, &nv, NULL) != HURRAY_OK) nv = 0; /* load says why */
  char views[40] = "";
  if (nv > 0)
    PyOS_snprintf(views, sizeof views, ", %llu view%s", (unsigned long long)nv, nv == 1 ? "" : "s");
  uint64_t nt = hurray_file_tensor_count(f);
  PyObject *r = PyUnicode_FromFormat("<hurray.File %R, %llu tensor%s, mmap=%s%s%s%s>", fo->path,
                                     (unsigned long long)nt, nt == 1 ? "" : "s",
                                     mode != NULL ? "'" : "", mode != NULL ? mode : "False",
                                     mode != NULL ? "'" : "", views);
  file_release(fo);
  return r;
}

static void file_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  HrpyFile *fo = F(self);
  hurray_file_close(&fo->f); /* tensors handed out keep the mapping */
  Py_CLEAR(fo->path);
  Py_CLEAR(fo->names);
  Py_CLEAR(fo->kv);
  Py_CLEAR(fo->ref);
  Py_CLEAR(fo->reopen);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyObject *m_open(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  static const char *const names[] = {"path", "mmap", "permissive", "max_kv_memory",
                                      "workers", NULL};
  PyObject *a[5];
  if (hrpy_parse_args("open", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  HurrayFileAccess access;
  uint32_t options;
  uint64_t max_kv_memory;
  uint32_t workers = 0;
  if (parse_mmap(a[1], "open", &access) < 0 || parse_permissive(a[2], &options) < 0 ||
      hrpy_kv_max_memory_arg(a[3], &max_kv_memory) < 0 ||
      parse_workers(a[4], "open", &workers) < 0)
    return NULL;
  /* a path; a source object (readinto(offset, memoryview) and size: read
   * through it, each tensor into memory of its own); or a file image held by
   * a buffer other than bytes (memoryview, bytearray, mmap: tensors are views
   * of it, writable when it is) */
  PyObject *o = a[0];
  bool is_path = PyUnicode_Check(o) || PyBytes_Check(o) || PyObject_HasAttrString(o, "__fspath__");
  PyObject *shown;
  HurrayFile *f = NULL;
  if (!is_path && PyObject_HasAttrString(o, "readinto")) {
    shown = PyObject_Str(o);
    access = HURRAY_FILE_ACCESS_READ;
    if (shown != NULL) {
      const char *sh = PyUnicode_AsUTF8(shown);
      if (sh == NULL) PyErr_Clear();
      char what[200];
      PyOS_snprintf(what, sizeof what, "open: %.150s", sh != NULL ? sh : "a source");
      f = open_source(st, o, options, "open", what);
    }
  } else if (!is_path && PyObject_CheckBuffer(o)) {
    shown = PyUnicode_FromFormat("<a file image in a %s>", Py_TYPE(o)->tp_name);
    access = HURRAY_FILE_ACCESS_MMAP;
    if (shown != NULL) f = open_image(st, o, true, &options, "open");
  } else {
    shown = PyOS_FSPath(o);
    if (shown != NULL) f = open_file(st, o, access, options, workers, "open");
  }
  if (shown == NULL) return NULL;
  if (f == NULL) {
    Py_DECREF(shown);
    return NULL;
  }
  HrpyFile *fo = PyObject_New(HrpyFile, st->io->FileType);
  if (fo == NULL) {
    hurray_file_close(&f);
    Py_DECREF(shown);
    return NULL;
  }
  fo->f = f;
  fo->path = shown;
  fo->names = NULL;
  fo->kv = NULL;
  fo->busy = 0;
  fo->options = options;
  fo->max_kv_memory = max_kv_memory;
  fo->closed = false;
  fo->access = access;
  fo->ref = NULL;
  fo->reopen = NULL;
  return (PyObject *)fo;
}

static PyMethodDef file_methods[] = {
    {"keys", file_keys, METH_NOARGS,
     "keys(self)\n--\n\nEvery name: the stored tensors in file order (composite members "
     "included, under '{head}.{index}'), then the views of shared tensors in the order "
     "they were saved."},
    {"get_tensor", file_get_tensor, METH_O,
     "get_tensor(self, name, /)\n--\n\nThe tensor (or composite) `name`, as f[name]."},
    {"get_slice", file_get_slice, METH_O,
     "get_slice(self, name, /)\n--\n\nA hurray.TensorSlice of dense tensor `name`: shape, "
     "dtype and layout from its descriptor alone; slice[...] reads only the selected "
     "elements (as safetensors' get_slice). The view of a shared tensor is sliced over "
     "its base's bytes."},
    {"metadata", file_metadata, METH_NOARGS,
     "metadata(self)\n--\n\nThe file's KV section as a dict (the same as f.kv), the name "
     "safetensors' safe_open uses."},
    {"close", file_close, METH_NOARGS,
     "close(self)\n--\n\nCloses the file. Tensors already read stay valid (they keep the "
     "mapping alive). Idempotent."},
    {"verify", file_verify, METH_NOARGS,
     "verify(self)\n--\n\nChecks the whole file: every structural rule of the C reader (the "
     "index, names, overlaps, each descriptor and its buffers' placement, composites, the "
     "views record), then each tensor's descriptor and data against the CRC-32C recorded at "
     "save (when the file has them: checksums=True). Returns a hurray.VerifyReport; raises "
     "FileError at the first damage, naming the tensor (e.status, e.field, e.offset: "
     "'ERR_CRC_MISMATCH', 'index[i].data', the byte offset). Reads every byte of the file "
     "when it has checksums: the bytes as this File maps them (a tensor written in place "
     "through a copy-on-write map no longer matches)."},
    {"descriptor", file_descriptor, METH_O,
     "descriptor(self, name, /)\n--\n\nThe hurray.Descriptor of tensor `name` (a stored "
     "tensor, a composite head or member, or a view of a shared tensor: the view's own type, "
     "shape and strides over its base's buffer), or of index entry `name` when it is an int "
     "(as entries() numbers them), decoded alone: no data is read. KeyError for a missing "
     "name, IndexError for an entry past the end; a damaged descriptor raises what decoding "
     "it raises (InvalidDescriptorError, FileError), naming the tensor."},
    {"entries", file_entries, METH_NOARGS,
     "entries(self)\n--\n\nWhere each stored tensor lies, from the index alone: a tuple with "
     "one (name, descriptor_offset, descriptor_length, data_offset, data_length) per index "
     "entry, in index order (write order, or name order for a sorted index), composite heads "
     "and members included (views have no entry of their own). Offsets and lengths in bytes "
     "from the start of the file; data_length covers every buffer of the tensor."},
    {"info", file_info, METH_NOARGS,
     "info(self)\n--\n\nThe file's header and trailer as a dict: version ('1.0'), flags, "
     "data_alignment, first_descriptor_offset, tensor_count_hint (None when the writer did not "
     "know), file_size, index_offset, index_length, kv_offset (0: no KV section), kv_length, "
     "index_crc32c."},
    {"_repr_html_", file_repr_html, METH_NOARGS,
     "_repr_html_(self, /)\n--\n\nThe file as HTML for notebooks (Jupyter, VS Code): the "
     "summary (tensors, parameters and bytes by dtype and layout, overhead, KV metadata) and "
     "the table of its tensors, from the descriptors alone (no tensor data is read). repr() "
     "is unchanged."},
    {"__reduce__", file_reduce, METH_NOARGS, NULL},
    {"_set_pickling", (PyCFunction)(void (*)(void))file_set_pickling, METH_FASTCALL,
     "_set_pickling(self, reopen, ref, /)\n--\n\nSet by hurray.open: how the file pickles "
     "(reopen: (callable, args)) and, with pickle='reference', what its tensors register "
     "with."},
    {"_views", file_views, METH_NOARGS,
     "_views(self, /)\n--\n\nThe views record, checked whole: a tuple of (name, base, dtype "
     "or None, shape, byte_offset, byte_strides). get_tensor(name) gives a view as a tensor "
     "over its base's bytes."},
    {"_kv_value", file_kv_value, METH_O,
     "_kv_value(self, key, /)\n--\n\nOne KV value, or None (the rest of the section is not "
     "decoded)."},
    {"__enter__", file_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))file_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef file_getset[] = {
    {"kv", file_kv, NULL,
     "The KV section as save(kv=) was given it, as a new dict (hurray's own records left "
     "out, as hurray.load_kv).",
     NULL},
    {"views", file_views_map, NULL,
     "Name of each view of a shared tensor to the name of the tensor it is a view of "
     "(empty for a file without shared tensors).",
     NULL},
    {"_ref", file_ref, NULL, "pickle='reference': what fetched tensors register with, or None.",
     NULL},
    {"closed", file_closed, NULL, "True once close() was called.", NULL},
    {"mapped", file_mapped, NULL,
     "True when tensors are views of a mapping (open(..., mmap=True, 'c' or 'r')).", NULL},
    {"mmap_mode", file_mmap_mode, NULL,
     "How the file was opened: 'c' (a private copy-on-write mapping: tensors are writable "
     "views, writes never reach the file, and tensors of this File share them), 'r' (a "
     "read-only mapping: read-only views) or None (mmap=False: each tensor read into memory "
     "of its own).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot file_slots[] = {
    {Py_tp_doc,
     "A `.hrry` file opened by `hurray.open`: a read-only mapping of tensor names to tensors (the "
     "views of shared tensors included, after the stored tensors). Opening reads the header, "
     "trailer, index and KV section and decodes no descriptor; each access reads one entry:\n"
     "\n"
     "| | |\n"
     "|---|---|\n"
     "| `f.keys()` | every name in file order, composite members included (`\"head.0\"`, ...), "
     "then the views of shared tensors |\n"
     "| `f.views` | name of each view of a shared tensor to the name it is a view of |\n"
     "| `f[name]`, `f.get_tensor(name)` | that tensor (a `hurray.Composite` for a head), "
     "zero-copy when mapped; `KeyError` for a missing name, `TypeError` for a non-`str`, "
     "`hurray.FileError` (`ERR_DUPLICATE_NAME`) for a name two entries share |\n"
     "| `name in f`, `len(f)`, `iter(f)` | from the index alone |\n"
     "| `f.get_slice(name)` | a `hurray.TensorSlice`: shape, dtype and layout from the descriptor "
     "alone; `[...]` reads only the selected elements (see `hurray.TensorSlice`) |\n"
     "| `f.descriptor(name)` | the `hurray.Descriptor` of a tensor or view (or of index entry "
     "`name` when it is an `int`), decoded alone: no data is read |\n"
     "| `f.entries()`, `f.info()` | where each stored tensor's descriptor and data lie (offsets "
     "and lengths, from the index); the header and trailer's facts |\n"
     "| `f.kv`, `f.metadata()` | the KV section as `save(kv=)` was given it (a new dict each "
     "time) |\n"
     "| `f.close()`, `with` | closes the file; tensors already read stay valid |\n"
     "| `f.verify()` | checks the whole file and returns a `hurray.VerifyReport`, a named tuple "
     "`(tensors, checksums, checked_bytes)` (of `os.stat_result`'s kind): every structural rule "
     "of the C reader (the index, names, overlaps, each descriptor and its buffers' placement, "
     "composites), then each tensor's descriptor and data against the CRC-32C recorded at save "
     "(`checksums` False when the file has none: `save(..., checksums=False)` or another writer). "
     "Raises `hurray.FileError` at the first damage, naming the tensor and the byte offset "
     "(`e.status`, `e.field`, `e.offset`). It checks the bytes as this `File` maps them: a tensor "
     "written in place through a copy-on-write map no longer matches. 5.5-8 GB/s on a file in the "
     "page cache |\n"
     "| `f.closed`, `f.mapped` | state (`mapped`: `mmap` was `True`, `\"c\"` or `\"r\"`) |\n"
     "| `f.mmap_mode` | `\"c\"` (the default: copy-on-write, writable views shared by every "
     "tensor of this `File`), `\"r\"` (read-only views) or `None` (`mmap=False`) |\n"
     "\n"
     "After `close()` every other operation raises `ValueError`. A `File` may be used from\n"
     "several threads; `close()` from another thread waits for the reads in flight. `File` is\n"
     "not constructible directly. A `File` pickles as its path and how it was opened;\n"
     "`pickle=\"reference\"` (with `mmap=\"r\"`) makes its tensors pickle as a reference to the "
     "file\n"
     "rather than their bytes ([across "
     "processes](../guide/processes.md#files-and-pickling-by-reference))."},
    {Py_tp_repr, file_repr},
    {Py_tp_iter, file_iter},
    {Py_mp_subscript, file_subscript},
    {Py_mp_length, file_length},
    {Py_sq_contains, file_contains},
    {Py_tp_methods, file_methods},
    {Py_tp_getset, file_getset},
    {Py_tp_dealloc, file_dealloc},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {0, NULL},
};

static PyType_Spec file_spec = {
    .name = "hurray.File",
    .basicsize = sizeof(HrpyFile),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = file_slots,
};

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef file_module_methods[] = {
    {"save", FASTKW(m_save),
     "save(path, tensors, *, kv=None, durable=True, checksums=True, views=None)\n--\n\nWrites `tensors` (a dict of "
     "name to hurray.Tensor or hurray.Composite) and the KV metadata `kv` to a .hrry file, "
     "atomically: the bytes go to a temporary file renamed over `path` once complete. A "
     "composite's members are stored under '{name}.{index}'. durable=True (the default) "
     "flushes the file to the disk before the rename and the folder after it, so the saved "
     "file survives a power loss or an OS crash once save returns; durable=False skips both "
     "flushes (faster) and keeps the atomic rename: a killed process still never leaves a "
     "half-written file, but an OS crash or power loss soon after save returns may. "
     "checksums=True (the default) records a CRC-32C of every tensor (KV entry "
     "'hurray.data_crc32c'), checked by load(verify=True) and File.verify(). views= records "
     "views of the tensors written (a sequence of (name, base, dtype or None, shape, "
     "byte_offset, byte_strides)), each checked against its base by the C writer."},
    {"load", FASTKW(m_load),
     "load(path, *, names=None, mmap=True, permissive=False, verify=False, workers=None)\n--\n\nReads a .hrry file into a dict of name to "
     "hurray.Tensor (a composite under its head's name, as a hurray.Composite). names= reads "
     "only those (a composite member too, when named). mmap=True or 'c' (the default) maps "
     "the file private and copy-on-write: tensors are writable zero-copy views that keep the "
     "mapping alive; a write copies the page it lands on and never reaches the file, and the "
     "tensors of one load share the mapping. mmap='r' maps it read-only: read-only zero-copy "
     "views. mmap=False reads each tensor into memory of its own. permissive=True reads "
     "descriptors in relay mode (unknown and private tags kept). Views of shared tensors come "
     "back after the stored tensors, over their bases' bytes, once the record was checked "
     "whole. verify=True first checks every "
     "structural rule and the data checksums the file carries (FileError naming the damaged "
     "tensor and its byte offset). workers= threads read a cold file ahead in parallel "
     "(None: HURRAY_WORKERS, else 4; 1: one piece at a time; a file in memory is not read "
     "again)."},
    {"save_bytes", FASTKW(m_save_bytes),
     "save_bytes(tensors, *, kv=None, checksums=True, views=None)\n--\n\nThe .hrry file image "
     "save() would write for `tensors`, `kv` and `views`, as bytes, made in memory: no file system is involved."},
    {"load_bytes", FASTKW(m_load_bytes),
     "load_bytes(data, *, names=None, permissive=False, verify=False, copy=True)\n--\n\nload() "
     "of a .hrry file image held in memory (bytes, bytearray, memoryview, any contiguous "
     "buffer), each tensor copied into memory of its own, views rebuilt over their bases. No "
     "file system is involved. copy=False: the tensors are views of `data` (writable when it "
     "is), which stays exported while any of them lives; it must be aligned to the file's data "
     "alignment."},
    {"_load_bytes_with_views", FASTKW(m_load_bytes_with_views),
     "_load_bytes_with_views(data, *, names=None, permissive=False, verify=False, "
     "copy=True)\n--\n\nload() "
     "of a .hrry file image held in memory, the stored tensors only, with the views records "
     "checked by the C reader: (tensors, records)."},
    {"_load_with_views", FASTKW(m_load_with_views),
     "_load_with_views(path, *, names=None, mmap=True, permissive=False, verify=False, workers=None)\n--\n\nload() "
     "of the stored tensors only, with the views records checked whole by the C reader: "
     "(tensors, records), each record (name, base, dtype or None, shape, byte_offset, "
     "byte_strides), from one open of the file."},
    {"remove_stale_temporaries", FASTKW(m_remove_stale_temporaries),
     "remove_stale_temporaries(path, *, min_age=3600)\n--\n\n"
     "Removes the temporary files that saves killed before they finished left in `path` (a "
     "folder, or one target's), and returns how many.\n"
     "\n"
     "A save writes a temporary file in the target's folder and renames it over the target once "
     "complete. On Linux the temporary has no name until it is complete (`O_TMPFILE`), so a "
     "killed save leaves nothing behind, except when the kill lands in the instant between naming "
     "it and the rename: then a complete `.<name>.tmp-XXXXXX` remains. Elsewhere (or on a file "
     "system without unnamed files) it is `.<name>.tmp-XXXXXX` from the start, which a kill can "
     "leave. Only the writer's own names, owned by this user, not locked by a live save, and not "
     "written to for `min_age` seconds are removed. `hurray convert` names the temporary of every "
     "target format the same way ([the hurray command § Atomic](cli.md)), so the same call cleans "
     "up after a killed conversion."},
    {"load_kv", FASTKW(m_load_kv),
     "load_kv(path, *, max_kv_memory=268435456)\n--\n\nThe file's KV section as a dict: the "
     "exact inverse of save's kv= "
     "(an empty dict when the file has none)."},
    {"open", FASTKW(m_open),
     "open(path, *, mmap=True, permissive=False, max_kv_memory=268435456, workers=None)\n--\n\nOpens a .hrry file lazily (hurray.File): keys(), "
     "f[name], get_tensor(name), kv, len, iteration and `in`, reading only what is asked. "
     "mmap= as for load: True or 'c' (copy-on-write mapping, the default), 'r' (read-only "
     "mapping), False (read into memory). workers= threads read a large tensor's bytes ahead "
     "when it is fetched (None: HURRAY_WORKERS, else 4; 1: as it is touched). Use it as a "
     "context manager. `path` may also be a "
     "byte source, an object with an int `size` and readinto(offset, memoryview) -> int "
     "(called from any thread; each tensor is read through it into memory of its own; a "
     "failure is FileError carrying the exception's message), or a file image in a buffer "
     "other than bytes (memoryview, bytearray, mmap: tensors are views of it)."},
    {NULL, NULL, 0, NULL},
};

static PyStructSequence_Field verify_report_fields[] = {
    {"tensors", "index entries checked against every structural rule"},
    {"checksums", "True when the file carries data checksums (they were all checked)"},
    {"checked_bytes", "bytes of descriptors and data checked against their CRC-32C"},
    {NULL, NULL},
};

static PyStructSequence_Desc verify_report_desc = {
    "hurray.VerifyReport",
    "What File.verify() checked: every structural rule for `tensors` index entries, and, "
    "when `checksums` is True (the file was saved with them), the CRC-32C of "
    "`checked_bytes` bytes of descriptors and data.",
    verify_report_fields,
    3,
};

int hrpy_file_init(PyObject *m, HrpyState *st) {
  st->io->FileType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &file_spec, NULL);
  if (st->io->FileType == NULL) return -1;
  st->io->VerifyReportType = PyStructSequence_NewType(&verify_report_desc);
  if (st->io->VerifyReportType == NULL ||
      PyModule_AddType(m, st->io->VerifyReportType) < 0)
    return -1;
  if (PyModule_AddFunctions(m, file_module_methods) < 0) return -1;
  /* the reserved KV keys, spelled once (include/hurray/file.h) */
  if (PyModule_AddStringConstant(m, "_KV_RESERVED_PREFIX", HURRAY_FILE_KV_RESERVED_PREFIX) < 0 ||
      PyModule_AddStringConstant(m, "_KV_VIEWS", HURRAY_FILE_KV_VIEWS) < 0 ||
      PyModule_AddStringConstant(m, "_KV_GGUF", HURRAY_FILE_KV_GGUF) < 0 ||
      PyModule_AddStringConstant(m, "_KV_DATA_CRC32C", HURRAY_FILE_KV_DATA_CRC32C) < 0)
    return -1;
  return PyModule_AddType(m, st->io->FileType);
}
