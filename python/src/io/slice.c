/*
 * io/slice.c - hurray.TensorSlice: File.get_slice(name) and its indexing
 * (docs/reference/api.md, hurray.TensorSlice).
 *
 * get_slice reads the tensor's descriptor alone; the slice object answers
 * shape, dtype and layout from it. Indexing translates a NumPy basic index
 * (integers, slices with any step, ..., None, fewer indices than dimensions)
 * into HurrayIndexItems; hurray_file_slice_plan resolves them into ranges and
 * says what the read gives (its bytes, the result's descriptor: shape,
 * device, the sections that travel) or refuses it, and
 * hurray_file_read_slice reads those bytes without the GIL. The result is a
 * new owned, writable, row-major hurray.Tensor. Every format rule is the C
 * library's; this file only translates Python's index syntax.
 */
#include "io/slice.h"

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "types/layout.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "io/state.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  PyObject *file;              /* the hurray.File (strong reference); NULL once cleared */
  const HrpySliceLease *lease; /* how to reach its C handle */
  PyObject *name;              /* str */
  uint64_t index;              /* in the file's index */
  int64_t view;                /* a view of a shared tensor (its number), or -1 */
  HurrayDescriptor *desc;      /* owned */
  HurrayDescriptorFields f;    /* borrowed from desc */
} HrpySlice;

#define S(o) ((HrpySlice *)(o))

/* "get_slice: tensor 'name'" for messages. */
static void context_of(char *buf, size_t n, const char *op, PyObject *name) {
  const char *s = name != NULL ? PyUnicode_AsUTF8(name) : NULL;
  if (s == NULL) {
    PyErr_Clear();
    s = "?";
  }
  PyOS_snprintf(buf, n, "%s: tensor '%.120s'", op, s);
}

/* ---- what can be sliced ----------------------------------------------------------- */

PyObject *hrpy_raise_views(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                           const char *op) {
  if (rc == HURRAY_ERR_INVALID_KV && err != NULL && err->status == rc)
    return PyErr_Format(PyExc_ValueError,
                        "%s: %s; the file's shared-tensor record is malformed or does not "
                        "match its tensors (written by another tool?); load it with "
                        "hurray.load_kv(path, raw=True) to inspect it",
                        op, err->message);
  return hrpy_raise_status(st, rc, err, op);
}

PyObject *hrpy_slice_open(HrpyState *st, PyObject *file, const HrpySliceLease *lease,
                          PyObject *name) {
  if (!PyUnicode_Check(name))
    return PyErr_Format(PyExc_TypeError, "get_slice: tensor names are str, not %.100s",
                        Py_TYPE(name)->tp_name);
  Py_ssize_t len = 0;
  const char *s = PyUnicode_AsUTF8AndSize(name, &len);
  if (s == NULL) return NULL;
  char ctx[160];
  context_of(ctx, sizeof ctx, "get_slice", name);
  const HurrayFile *f = lease->acquire(file);
  if (f == NULL) return NULL;
  uint64_t index = 0;
  bool is_view = false;
  HurrayDescriptor *d = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = hurray_file_find_descriptor(f, s, (size_t)len, &index, &is_view, &d, &err);
  Py_END_ALLOW_THREADS
  lease->release(file);
  if (rc == HURRAY_ERR_NOT_FOUND) {
    PyErr_SetObject(PyExc_KeyError, name);
    return NULL;
  }
  if (rc != HURRAY_OK) return hrpy_raise_views(st, rc, &err, ctx);
  HurrayDescriptorFields fields;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &fields));
  /* what the slice reader refuses: UnsupportedError naming the tensor */
  if (hurray_file_slice_check(&fields, &err) != HURRAY_OK) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
    return hrpy_raise(st->UnsupportedError, "%s %s; load it whole with f[name]", ctx,
                      err.reason);
  }
  HrpySlice *self = PyObject_GC_New(HrpySlice, st->io->TensorSliceType);
  if (self == NULL) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
    return NULL;
  }
  self->file = Py_NewRef(file);
  self->lease = lease;
  self->name = Py_NewRef(name);
  self->index = index;
  self->view = is_view ? (int64_t)index : -1;
  self->desc = d;
  self->f = fields;
  PyObject_GC_Track((PyObject *)self);
  return (PyObject *)self;
}

/* ---- the index: NumPy's basic indexing --------------------------------------------- */

/* Whether `it` (which has __index__) converts to an integer: NumPy arrays of
 * one dimension or more have __index__ but refuse (TypeError, cleared here:
 * the caller refuses them as advanced indices); other errors stay set. */
static bool index_ok(PyObject *it) {
  PyObject *v = PyNumber_Index(it);
  if (v != NULL) {
    Py_DECREF(v);
    return true;
  }
  if (PyErr_ExceptionMatches(PyExc_TypeError)) PyErr_Clear();
  return false;
}

/* Item i of the index, `it`, as a HurrayIndexItem: 0, or -1 with the
 * exception (an advanced index: IndexError; an integer beyond int64:
 * IndexError naming it and the axis it would index). */
static int item_of(PyObject *it, Py_ssize_t i, uint32_t axis, uint64_t dim, HurrayIndexItem *x,
                   const char *ctx) {
  memset(x, 0, sizeof *x);
  if (it == Py_Ellipsis) {
    x->kind = HURRAY_INDEX_ELLIPSIS;
  } else if (it == Py_None) {
    x->kind = HURRAY_INDEX_NEWAXIS;
  } else if (PySlice_Check(it)) {
    Py_ssize_t start, stop, step;
    x->kind = HURRAY_INDEX_SLICE;
    if (PySlice_Unpack(it, &start, &stop, &step) < 0) {
      if (!PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
      PyErr_Clear(); /* a step of 0: the C library says so, in its turn */
    }
    /* beyond Py_ssize_t (absent bounds too): beyond any dimension */
    x->start = start == PY_SSIZE_T_MAX ? INT64_MAX : start == PY_SSIZE_T_MIN ? INT64_MIN : start;
    x->stop = stop == PY_SSIZE_T_MAX ? INT64_MAX : stop == PY_SSIZE_T_MIN ? INT64_MIN : stop;
    x->step = step;
  } else if (PyLong_CheckExact(it) || (!PyBool_Check(it) && PyIndex_Check(it) && index_ok(it))) {
    /* an int, an int subclass, a NumPy integer or 0-d integer array */
    int overflow = 0;
    PyObject *v = PyNumber_Index(it);
    x->kind = HURRAY_INDEX_INTEGER;
    x->start = v != NULL ? PyLong_AsLongLongAndOverflow(v, &overflow) : -1;
    Py_XDECREF(v);
    if (overflow != 0)
      PyErr_Format(PyExc_IndexError, "%s: index %R is out of bounds for axis %u with size %llu",
                   ctx, it, axis, (unsigned long long)dim);
    if (PyErr_Occurred()) return -1;
  } else if (!PyErr_Occurred()) {
    PyErr_Format(PyExc_IndexError,
                 "%s: item %zd of the index: only integers, slices (`:`), ellipsis (`...`) and "
                 "None are valid indices (no advanced indexing with lists, arrays or booleans: "
                 "load the tensor with f[name] for that), not %.100s",
                 ctx, i, Py_TYPE(it)->tp_name);
    return -1;
  } else {
    return -1;
  }
  return 0;
}

/* The items of index `obj` (a new array of *n, PyMem_Free it), or NULL with
 * the exception (an integer's or a slice's own conversion's, or IndexError). */
static HurrayIndexItem *parse_items(const HurrayDescriptorFields *f, PyObject *obj, uint32_t *n,
                                    const char *ctx) {
  PyObject *items = PyTuple_Check(obj) ? Py_NewRef(obj) : PyTuple_Pack(1, obj);
  if (items == NULL) return NULL;
  Py_ssize_t count = PyTuple_GET_SIZE(items);
  HurrayIndexItem *x =
      (size_t)count < UINT32_MAX ? PyMem_Calloc((size_t)count + 1u, sizeof *x) : NULL;
  if (x == NULL) PyErr_NoMemory();
  /* the axis an integer would index, for its message (an ellipsis takes the
   * dimensions the other items leave) */
  Py_ssize_t consuming = 0;
  for (Py_ssize_t i = 0; i < count; i++)
    consuming += PyTuple_GET_ITEM(items, i) != Py_Ellipsis && PyTuple_GET_ITEM(items, i) != Py_None;
  uint64_t axis = 0;
  for (Py_ssize_t i = 0; x != NULL && i < count; i++) {
    uint32_t k = (uint32_t)(axis < f->rank ? axis : 0);
    if (item_of(PyTuple_GET_ITEM(items, i), i, k, f->rank > 0 ? f->shape[k] : 0, &x[i], ctx) < 0) {
      PyMem_Free(x);
      x = NULL;
    } else if (x[i].kind == HURRAY_INDEX_ELLIPSIS) {
      axis += f->rank > (uint64_t)consuming ? f->rank - (uint64_t)consuming : 0;
    } else if (x[i].kind != HURRAY_INDEX_NEWAXIS) {
      axis++;
    }
  }
  *n = (uint32_t)count;
  Py_DECREF(items);
  return x;
}

/* ---- reading --------------------------------------------------------------------- */

/* The one buffer of a slice's result (hrpy_tensor_read). */
static int result_buffer(void *ctx, uint32_t i, HrpyBuffer *b) {
  (void)i;
  *b = *(HrpyBuffer *)ctx; /* moved */
  memset(ctx, 0, sizeof *b);
  return 0;
}

static PyObject *slice_subscript(PyObject *o, PyObject *obj) {
  HrpySlice *self = S(o);
  HrpyState *st = hrpy_state_of(o);
  const HurrayDescriptorFields *f = &self->f;
  char ctx[160];
  context_of(ctx, sizeof ctx, "TensorSlice", self->name);
  uint32_t n = 0;
  HurrayIndexItem *items = parse_items(f, obj, &n, ctx);
  if (items == NULL) return NULL;
  HurraySliceRange ranges[HURRAY_MAX_RANK];
  uint64_t bytes = 0;
  HurrayDescriptor *d = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc =
      hurray_file_slice_plan(f, self->view >= 0, items, n, ranges, &bytes, &d, &err);
  PyMem_Free(items);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, ctx);
  HrpyBuffer b;
  memset(&b, 0, sizeof b);
  b.owned = hrpy_alloc_buffer(bytes, false);
  b.data = b.owned;
  b.size = bytes;
  b.host = true;
  const HurrayFile *file = NULL;
  if (b.owned == NULL) {
    /* raised */
  } else if (bytes > 0 && self->file == NULL) {
    PyErr_Format(PyExc_ValueError, "%s: the slice no longer has its file", ctx);
  } else if (bytes > 0 && (file = self->lease->acquire(self->file)) != NULL) {
    Py_BEGIN_ALLOW_THREADS
    rc = self->view >= 0 ? hurray_file_read_view_slice(file, (uint64_t)self->view, f->rank,
                                                       ranges, b.data, bytes, &err)
                         : hurray_file_read_slice(file, self->index, f->rank, ranges, b.data,
                                                  bytes, &err);
    Py_END_ALLOW_THREADS
    self->lease->release(self->file);
    if (rc != HURRAY_OK) hrpy_raise_status(st, rc, &err, ctx);
  }
  PyObject *r = NULL;
  if (!PyErr_Occurred())
    r = hrpy_tensor_read(st, d, 1, result_buffer, &b, HURRAY_DECODE_STRICT, ctx);
  hrpy_buffer_release(&b); /* not moved on failure */
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return r;
}

/* ---- the descriptor's facts -------------------------------------------------------- */

static PyObject *sg_shape(PyObject *o, void *c) {
  (void)c;
  return hrpy_shape_tuple(S(o)->f.rank, S(o)->f.shape);
}

static PyObject *sg_ndim(PyObject *o, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(S(o)->f.rank);
}

static PyObject *sg_dtype(PyObject *o, void *c) {
  (void)c;
  return hrpy_dtype_relayed(hrpy_state_of(o), S(o)->f.type_tag);
}

static PyObject *sg_layout(PyObject *o, void *c) {
  (void)c;
  return hrpy_layout_object(hrpy_state_of(o), &S(o)->f);
}

static PyObject *sg_name(PyObject *o, void *c) {
  (void)c;
  return Py_NewRef(S(o)->name);
}

static PyObject *slice_get_shape(PyObject *o, PyObject *unused) {
  (void)unused;
  PyObject *t = sg_shape(o, NULL);
  PyObject *l = t != NULL ? PySequence_List(t) : NULL;
  Py_XDECREF(t);
  return l;
}

static PyObject *slice_get_dtype(PyObject *o, PyObject *unused) {
  (void)unused;
  PyObject *d = sg_dtype(o, NULL);
  PyObject *name = d != NULL ? PyObject_GetAttrString(d, "name") : NULL;
  Py_XDECREF(d);
  return name;
}

static Py_ssize_t slice_length(PyObject *o) {
  const HurrayDescriptorFields *f = &S(o)->f;
  if (f->rank == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor slice");
    return -1;
  }
  if (f->shape[0] > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_SetString(PyExc_OverflowError, "the first dimension does not fit in a Py_ssize_t");
    return -1;
  }
  return (Py_ssize_t)f->shape[0];
}

static PyObject *slice_repr(PyObject *o) {
  HrpySlice *self = S(o);
  PyObject *shape = sg_shape(o, NULL);
  PyObject *dtype = shape != NULL ? slice_get_dtype(o, NULL) : NULL;
  PyObject *r = NULL;
  if (dtype != NULL)
    r = PyUnicode_FromFormat("<hurray.TensorSlice %R: shape=%R, dtype=%U, layout=%s>", self->name,
                             shape, dtype, hrpy_layout_name(self->f.layout.tag));
  Py_XDECREF(shape);
  Py_XDECREF(dtype);
  return r;
}

/* ---- lifetime -------------------------------------------------------------------------- */

static int slice_traverse(PyObject *o, visitproc visit, void *arg) {
  Py_VISIT(S(o)->file);
  Py_VISIT(S(o)->name);
  Py_VISIT(Py_TYPE(o));
  return 0;
}

static int slice_clear(PyObject *o) {
  Py_CLEAR(S(o)->file);
  return 0;
}

static void slice_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  PyObject_GC_UnTrack(o);
  (void)slice_clear(o);
  Py_CLEAR(S(o)->name);
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(S(o)->desc));
  tp->tp_free(o);
  Py_DECREF(tp);
}

static PyObject *slice_reduce(PyObject *o, PyObject *unused) {
  (void)o;
  (void)unused;
  return PyErr_Format(PyExc_TypeError,
                      "cannot pickle a hurray.TensorSlice (it reads from an open file)");
}

static PyMethodDef slice_methods[] = {
    {"get_shape", slice_get_shape, METH_NOARGS,
     "get_shape(self)\n--\n\nThe tensor's shape as a list (as safetensors' get_shape), from "
     "the descriptor alone."},
    {"get_dtype", slice_get_dtype, METH_NOARGS,
     "get_dtype(self)\n--\n\nThe tensor's element type as hurray's name ('float32', 'bfloat16', "
     "'int4'; safetensors says 'F32', 'BF16'), from the descriptor alone."},
    {"__reduce__", slice_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef slice_getset[] = {
    {"name", sg_name, NULL, "The tensor's name in the file.", NULL},
    {"shape", sg_shape, NULL, "The tensor's shape (a tuple).", NULL},
    {"ndim", sg_ndim, NULL, "The tensor's rank.", NULL},
    {"dtype", sg_dtype, NULL, "The tensor's element type (hurray.Dtype).", NULL},
    {"layout", sg_layout, NULL, "The tensor's layout in the file (hurray.Layout).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot slice_slots[] = {
    {Py_tp_doc,
     "A lazy view of one dense tensor of an open `hurray.File`, returned by "
     "`File.get_slice(name)`: safetensors' `get_slice`, for every dense layout.\n"
     "\n"
     "`f.get_slice(name)` looks the name up and decodes that one descriptor; nothing of the\n"
     "tensor's data is read until it is indexed. The `hurray.TensorSlice` it returns has:\n"
     "\n"
     "| | |\n"
     "|---|---|\n"
     "| `get_shape()` | the shape as a list, as safetensors |\n"
     "| `get_dtype()` | the element type as hurray's name: `\"float32\"`, `\"bfloat16\"`, "
     "`\"int4\"` (safetensors says `\"F32\"`, `\"BF16\"`; hurray has types safetensors has no "
     "name for) |\n"
     "| `shape`, `ndim`, `dtype`, `layout`, `name` | the shape as a tuple, the rank, the "
     "`hurray.Dtype`, the `hurray.Layout` the tensor has in the file, its name |\n"
     "| `len(s)` | `shape[0]` (`TypeError` for a scalar) |\n"
     "| `s[key]` | the selected elements as a new `hurray.Tensor` |\n"
     "\n"
     "`key` is anything NumPy's basic indexing takes, with NumPy's meaning: integers (negative\n"
     "ones count from the end), slices with any step (negative steps included: `s[::-1]` is\n"
     "copied in descending order directly, no second pass), `...`, `None` (a new axis of 1) and\n"
     "fewer indices than dimensions (the rest taken whole). Slices clamp to the dimension as\n"
     "NumPy's do; an integer outside `[-size, size)` is an `IndexError` naming it, the axis and\n"
     "its size (`TensorSlice: tensor 'w': index 6 is out of bounds for axis 0 with size 6`), as\n"
     "are too many indices, two ellipses, and advanced indices (lists, arrays, booleans, floats:\n"
     "load the tensor with `f[name]` and index that). A step of 0 is a `ValueError`.\n"
     "\n"
     "The result is a row-major tensor in memory of its own: 64-byte aligned, writable, valid\n"
     "after the file is closed, whatever layout the tensor has in the file (row-major,\n"
     "column-major, strided, tiled, Morton, Hilbert) and whatever its element type (sub-byte\n"
     "types are repacked: `bool`, `int2`, `int4`, `float4_e2m1` packed LSB-first, the 6-bit\n"
     "floats four to three bytes). It keeps the source's device declaration, a per-tensor\n"
     "quantization (`PerTensorAffine`: one scale for every element) and a private type's\n"
     "extension section; a shard or statistics section describes the whole tensor and is not\n"
     "carried.\n"
     "\n"
     "What is read (the C library's `hurray_file_read_slice`,\n"
     "[C API](c-api/file.md#hurray_file_read_slice)):\n"
     "\n"
     "- `mmap=True`: the selected bytes are copied out of the mapping, so only the pages that\n"
     "  hold them are read in. Each run of 4 KiB or more is announced to the system first\n"
     "  (`MADV_WILLNEED`), so the kernel reads those pages and not its usual read-ahead around\n"
     "  every page fault; runs below 4 KiB (single elements, narrow columns) fault their pages "
     "in\n"
     "  and the kernel may read ahead around them: use `mmap=False` for those.\n"
     "- `mmap=False`: positioned reads of the selected bytes only. A run of 512 bytes or more (a\n"
     "  row, a slab, a wide column band) is read straight into the result; smaller pieces\n"
     "  (single elements of Morton, Hilbert or tiled layouts, narrow columns) through the 4 KiB\n"
     "  pages that hold them, each page read once.\n"
     "\n"
     "How much is read, measured: [benchmarks § Partial "
     "reads](benchmarks.md#partial-reads-fileget_slice).\n"
     "\n"
     "What cannot be sliced raises `hurray.UnsupportedError` at `get_slice`, naming it: a\n"
     "composite head (slice a member, `f.get_slice(\"head.0\")`), a sparse or block-paged\n"
     "tensor, and a quantization scheme other than per-tensor (per-channel, per-block, NF4,\n"
     "MXFP: their scales follow channels and blocks). A missing name is a `KeyError`, a name\n"
     "that is not a `str` a `TypeError`.\n"
     "\n"
     "A `TensorSlice` reads through its file: indexing it once the file is closed is a\n"
     "`ValueError` (its shape, dtype and layout stay readable). It can be shared between\n"
     "threads; `f.close()` waits for the reads in flight. It is not picklable and not\n"
     "constructible directly.\n"
     "\n"
     "Compared with safetensors: the same calls, with `get_dtype()` returning hurray's type\n"
     "names; results are `hurray.Tensor`s (`np.asarray(part)`, `part.to_torch()` share their\n"
     "memory); negative steps and `None` are accepted where safetensors refuses them.\n"
     "\n"
     "Tensor-parallel loading with it: the guide, [PyTorch § Read part of a "
     "tensor](../guide/pytorch.md#read-part-of-a-tensor)."},
    {Py_tp_repr, slice_repr},
    {Py_mp_subscript, slice_subscript},
    {Py_mp_length, slice_length},
    {Py_tp_methods, slice_methods},
    {Py_tp_getset, slice_getset},
    {Py_tp_traverse, slice_traverse},
    {Py_tp_clear, slice_clear},
    {Py_tp_dealloc, slice_dealloc},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {0, NULL},
};

static PyType_Spec slice_spec = {
    .name = "hurray.TensorSlice",
    .basicsize = sizeof(HrpySlice),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = slice_slots,
};

int hrpy_slice_init(PyObject *m, HrpyState *st) {
  st->io->TensorSliceType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &slice_spec, NULL);
  if (st->io->TensorSliceType == NULL) return -1;
  return PyModule_AddType(m, st->io->TensorSliceType);
}
