/*
 * io/writer.c - hurray._hurray._FileWriter: a .hrry file written one tensor
 * at a time, over the C writer (include/hurray/file.h, hurray_file_writer_*).
 *
 * hurray.save takes every tensor at once; a converter streaming a checkpoint
 * larger than memory cannot. This type opens the C writer on construction,
 * writes each tensor (or composite) when write() is called, straight from
 * its buffers (nothing is retained: the caller may drop the tensor at once),
 * collects KV entries, and finish() writes the KV section, the index and the
 * trailer, syncs and renames the file into place. The save semantics are the
 * C writer's: the target is untouched until finish() (the file is written
 * under a temporary name, unnamed on Linux); abort(), an error in finish(), or
 * dropping an unfinished writer removes the temporary file. durable=False
 * skips the two fsyncs, never the temporary file and the rename.
 *
 * The Python class hurray.FileWriter (python/hurray/_writer.py) wraps this
 * one: it converts NumPy arrays and torch tensors and refuses the reserved
 * 'hurray.' KV keys. This type takes hurray.Tensor and hurray.Composite only,
 * and any KV key.
 *
 * Threads: the GIL is released around the writes; one call uses the writer
 * at a time (a second thread's call raises RuntimeError), as for
 * StreamWriter.
 */
#include "io/writer.h"

#include "core/buffer.h"
#include "core/tensor.h"
#include "io/file.h"
#include "io/kv.h"
#include "types/composite.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"

#include <string.h>

typedef enum { WRITER_OPEN = 0, WRITER_FINISHED, WRITER_ABORTED } WriterState;

typedef struct {
  PyObject_HEAD
  HurrayFileWriter *w; /* NULL once finished or aborted (and no call runs) */
  PyObject *path;      /* the target as os.fspath gave it (str or bytes), for messages */
  uint64_t count;      /* tensors written (index entries, composite members included) */
  bool busy;           /* a call is using the writer (the GIL released) */
  WriterState state;
} HrpyFileWriter;

#define FW(o) ((HrpyFileWriter *)(o))

/* A failure of the file itself (creating, finishing), as hurray.save raises it. */
static PyObject *raise_file(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                            const char *op, const char *path) {
  HurrayFileSaveFailure at = {HURRAY_FILE_SAVE_AT_OPEN, 0};
  return hrpy_raise_save(st, rc, err, NULL, &at, op, path);
}

static const char *state_word(WriterState s) {
  return s == WRITER_FINISHED ? "finished" : "aborted";
}

/* Claims the writer for one call (RuntimeError while another runs, ValueError
 * once finished or aborted). */
static HurrayFileWriter *writer_acquire(HrpyFileWriter *self, const char *op) {
  HurrayFileWriter *w = NULL;
  int why = 0; /* 0 claimed, 1 busy, 2 closed */
  WriterState s;
  Py_BEGIN_CRITICAL_SECTION(self);
  s = self->state;
  if (self->busy) {
    why = 1;
  } else if (s != WRITER_OPEN) {
    why = 2;
  } else {
    self->busy = true;
    w = self->w;
  }
  Py_END_CRITICAL_SECTION();
  if (why == 1)
    PyErr_Format(PyExc_RuntimeError, "%s: another thread is writing this file", op);
  else if (why == 2)
    PyErr_Format(PyExc_ValueError, "%s: the writer is %s; open a new FileWriter to write more",
                 op, state_word(s));
  return w;
}

static void writer_release(HrpyFileWriter *self, WriterState next) {
  Py_BEGIN_CRITICAL_SECTION(self);
  self->busy = false;
  self->state = next;
  if (self->w != NULL) self->count = hurray_file_writer_tensor_count(self->w);
  if (next != WRITER_OPEN) hurray_file_writer_destroy(&self->w);
  Py_END_CRITICAL_SECTION();
}

static PyObject *writer_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  static const char *const kwlist[] = {"path", "durable", "checksums", NULL};
  PyObject *a[3];
  if (hrpy_parse_tuple("FileWriter", args, kwargs, kwlist, 1, 1, a) < 0) return NULL;
  if (a[1] != NULL && !PyBool_Check(a[1]))
    return PyErr_Format(PyExc_TypeError, "FileWriter: durable must be True or False, not %.100s",
                        Py_TYPE(a[1])->tp_name);
  if (a[2] != NULL && !PyBool_Check(a[2]))
    return PyErr_Format(PyExc_TypeError,
                        "FileWriter: checksums must be True or False, not %.100s",
                        Py_TYPE(a[2])->tp_name);
  PyObject *path = hrpy_fs_path(a[0]);
  if (path == NULL) return NULL;
  PyObject *shown = PyOS_FSPath(a[0]);
  if (shown == NULL) {
    Py_DECREF(path);
    return NULL;
  }
  HurrayFileWriterOptions opt;
  memset(&opt, 0, sizeof opt);
  opt.skip_fsync = a[1] == Py_False;
  opt.data_checksums = a[2] != Py_False; /* as save(): on unless checksums=False */
  HurrayFileWriter *w = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_writer_open(p, &opt, &w, &err);
  Py_END_ALLOW_THREADS
  if (rc != HURRAY_OK) {
    raise_file(st, rc, &err, "FileWriter", p);
    Py_DECREF(path);
    Py_DECREF(shown);
    return NULL;
  }
  Py_DECREF(path);
  HrpyFileWriter *self = (HrpyFileWriter *)type->tp_alloc(type, 0);
  if (self == NULL) {
    hurray_file_writer_destroy(&w);
    Py_DECREF(shown);
    return NULL;
  }
  self->w = w;
  self->path = shown;
  self->count = 0;
  self->busy = false;
  self->state = WRITER_OPEN;
  return (PyObject *)self;
}

/* Adds `c` to the file (one call at a time): None, or the failure raised
 * naming the tensor, view or KV key. */
static PyObject *add_contents(PyObject *s, const HurrayFileContents *c, const char *op) {
  HrpyFileWriter *self = FW(s);
  HurrayFileWriter *w = writer_acquire(self, op);
  if (w == NULL) return NULL;
  HurrayFileSaveFailure fail;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_writer_add_contents(w, c, &fail, &err);
  Py_END_ALLOW_THREADS
  writer_release(self, WRITER_OPEN);
  if (rc != HURRAY_OK) return hrpy_raise_save(hrpy_state_of(s), rc, &err, c, &fail, op, NULL);
  Py_RETURN_NONE;
}

static PyObject *writer_write(PyObject *s, PyObject *const *args, Py_ssize_t nargs) {
  HrpyState *st = hrpy_state_of(s);
  if (nargs != 2)
    return PyErr_Format(PyExc_TypeError, "FileWriter.write expected 2 arguments (name, tensor), "
                                         "got %zd",
                        nargs);
  PyObject *key = args[0], *obj = args[1];
  if (!PyUnicode_Check(key))
    return PyErr_Format(PyExc_TypeError, "FileWriter.write: the name must be a str, not %.100s",
                        Py_TYPE(key)->tp_name);
  if (!hrpy_tensor_check(st, obj) && !hrpy_composite_check(st, obj))
    return PyErr_Format(PyExc_TypeError,
                        "FileWriter.write: expected a hurray.Tensor or hurray.Composite, not "
                        "%.100s",
                        Py_TYPE(obj)->tp_name);
  Py_ssize_t len = 0;
  const char *name = PyUnicode_AsUTF8AndSize(key, &len);
  if (name == NULL) return NULL;
  HrpyArena arena = {NULL, 0, 0};
  HurrayFileCompositeNode node;
  HurrayFileContents c;
  memset(&c, 0, sizeof c);
  c.items = &node;
  c.item_count = 1;
  PyObject *r = hrpy_save_node(st, &arena, obj, name, (size_t)len, "FileWriter.write", &node) == 0
                    ? add_contents(s, &c, "FileWriter.write")
                    : NULL;
  hrpy_arena_free(&arena);
  return r;
}

static PyObject *writer_add_kv(PyObject *s, PyObject *kv) {
  if (!PyDict_Check(kv) && !PyObject_HasAttrString(kv, "items"))
    return PyErr_Format(PyExc_TypeError,
                        "FileWriter.add_kv: expected a dict of str to KV values, not %.100s",
                        Py_TYPE(kv)->tp_name);
  HrpyKvList l;
  HurrayFileContents c;
  memset(&c, 0, sizeof c);
  PyObject *r = NULL;
  if (hrpy_kv_from_mapping(hrpy_state_of(s), kv, &l) == 0) {
    c.kv_keys = l.keys;
    c.kv_key_lens = l.key_lens;
    c.kv_values = l.values;
    c.kv_count = l.count;
    r = add_contents(s, &c, "FileWriter.add_kv");
  }
  hrpy_kv_list_free(&l);
  return r;
}

/* FileWriter.add_views(records): the shared-tensor views of tensors written
 * already, checked and recorded by the C writer (hurray_file_writer_add_view). */
static PyObject *writer_add_views(PyObject *s, PyObject *records) {
  PyObject *seq =
      PySequence_Fast(records, "FileWriter.add_views: expected a sequence of records");
  if (seq == NULL) return NULL;
  HrpyArena arena = {NULL, 0, 0};
  HurrayFileContents c;
  memset(&c, 0, sizeof c);
  PyObject *r = hrpy_views_from_py(&arena, seq, "FileWriter.add_views", &c) == 0
                    ? add_contents(s, &c, "FileWriter.add_views")
                    : NULL;
  hrpy_arena_free(&arena);
  Py_DECREF(seq);
  return r;
}

static PyObject *writer_finish(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyFileWriter *self = FW(s);
  HrpyState *st = hrpy_state_of(s);
  HurrayFileWriter *w = writer_acquire(self, "FileWriter.finish");
  if (w == NULL) return NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_writer_finish(w, &err);
  Py_END_ALLOW_THREADS
  /* after any outcome the C writer only accepts destroy; a failed finish
   * removed the temporary file (or left the file in place when only the
   * directory sync failed: the message says so) */
  writer_release(self, rc == HURRAY_OK ? WRITER_FINISHED : WRITER_ABORTED);
  if (rc != HURRAY_OK) {
    PyObject *shown = PyObject_Str(self->path);
    const char *p = shown != NULL ? PyUnicode_AsUTF8(shown) : NULL;
    if (p == NULL) {
      PyErr_Clear();
      p = "?";
    }
    raise_file(st, rc, &err, "FileWriter.finish", p);
    Py_XDECREF(shown);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *writer_abort(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyFileWriter *self = FW(s);
  int why = 0; /* 0 aborted here, 1 busy, 2 already closed */
  Py_BEGIN_CRITICAL_SECTION(s);
  if (self->busy) {
    why = 1;
  } else if (self->state != WRITER_OPEN) {
    why = 2;
  } else {
    self->state = WRITER_ABORTED;
    hurray_file_writer_destroy(&self->w); /* removes the temporary file */
  }
  Py_END_CRITICAL_SECTION();
  if (why == 1) {
    PyErr_SetString(PyExc_RuntimeError, "FileWriter.abort: another thread is writing this file");
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *writer_state_get(PyObject *s, void *c) {
  WriterState want = (WriterState)(intptr_t)c, now;
  Py_BEGIN_CRITICAL_SECTION(s);
  now = FW(s)->state;
  Py_END_CRITICAL_SECTION();
  return PyBool_FromLong(want == WRITER_OPEN ? now != WRITER_OPEN : now == want);
}

static PyObject *writer_count(PyObject *s, void *c) {
  (void)c;
  uint64_t n;
  Py_BEGIN_CRITICAL_SECTION(s);
  n = FW(s)->count;
  Py_END_CRITICAL_SECTION();
  return PyLong_FromUnsignedLongLong(n);
}

static PyObject *writer_repr(PyObject *s) {
  HrpyFileWriter *self = FW(s);
  WriterState now;
  uint64_t n;
  Py_BEGIN_CRITICAL_SECTION(s);
  now = self->state;
  n = self->count;
  Py_END_CRITICAL_SECTION();
  return PyUnicode_FromFormat("<hurray._FileWriter %R, %llu tensor%s%s>", self->path,
                              (unsigned long long)n, n == 1 ? "" : "s",
                              now == WRITER_OPEN ? "" : now == WRITER_FINISHED ? ", finished"
                                                                               : ", aborted");
}

static void writer_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  hurray_file_writer_destroy(&FW(s)->w); /* an unfinished file is removed */
  Py_XDECREF(FW(s)->path);
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyMethodDef writer_methods[] = {
    {"write", (PyCFunction)(void (*)(void))writer_write, METH_FASTCALL,
     "write(self, name, tensor, /)\n--\n\nWrites a hurray.Tensor (its descriptor, then every "
     "buffer) or a hurray.Composite (its head, then its members named '{name}.{i}') under "
     "`name`. The bytes are in the file when the call returns; nothing is retained."},
    {"add_kv", writer_add_kv, METH_O,
     "add_kv(self, kv, /)\n--\n\nAdds the entries of the dict `kv` to the KV section (written "
     "by finish(), in insertion order). Any key is accepted here."},
    {"add_views", writer_add_views, METH_O,
     "add_views(self, records, /)\n--\n\nRecords views of tensors written already: each "
     "(name, base, dtype or None, shape, byte_offset, byte_strides), checked against its base "
     "by the C writer."},
    {"finish", writer_finish, METH_NOARGS,
     "finish(self)\n--\n\nWrites the KV section, the index and the trailer, syncs the file "
     "(unless durable=False) and renames it onto the target. hurray.FileError on failure "
     "(the target is then untouched)."},
    {"abort", writer_abort, METH_NOARGS,
     "abort(self)\n--\n\nAbandons the file: the temporary file is removed, the target "
     "untouched. No effect once finished or aborted."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef writer_getset[] = {
    {"finished", writer_state_get, NULL, "True once finish() succeeded.",
     (void *)(intptr_t)WRITER_FINISHED},
    {"closed", writer_state_get, NULL, "True once finished or aborted.",
     (void *)(intptr_t)WRITER_OPEN},
    {"tensor_count", writer_count, NULL,
     "Index entries written so far (composite members included).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot writer_slots[] = {
    {Py_tp_doc,
     "_FileWriter(path, *, durable=True, checksums=True)\n--\n\n"
     "Writes a .hrry file one tensor at a time (the C writer); hurray.FileWriter wraps it."},
    {Py_tp_new, writer_new},
    {Py_tp_methods, writer_methods},
    {Py_tp_getset, writer_getset},
    {Py_tp_repr, writer_repr},
    {Py_tp_dealloc, writer_dealloc},
    {0, NULL},
};

static PyType_Spec writer_spec = {
    .name = "hurray._FileWriter",
    .basicsize = sizeof(HrpyFileWriter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = writer_slots,
};

int hrpy_writer_init(PyObject *m, HrpyState *st) {
  (void)st;
  PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(m, &writer_spec, NULL);
  if (t == NULL) return -1;
  int rc = PyModule_AddObjectRef(m, "_FileWriter", (PyObject *)t);
  Py_DECREF(t);
  return rc;
}
