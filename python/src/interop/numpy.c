/*
 * interop/numpy.c - NumPy interoperability without a build-time dependency on
 * NumPy: Tensor.__array_interface__, Tensor.__array__ and hurray.from_numpy.
 *
 * Out of hurray: a dense host tensor of a Tier 1 type is exposed through the
 * array interface (v3), so numpy.asarray(t) is a view whose base is the
 * tensor. Row-major, column-major and strided layouts become (strided) views.
 * bool is bit-packed in Hurray and bfloat16 has no NumPy dtype: for those the
 * interface is absent (AttributeError) and __array__ builds the array (bool:
 * an unpacked copy; bfloat16: a view typed ml_dtypes.bfloat16 when installed).
 *
 * Into hurray: from_numpy reads any buffer-protocol exporter (format, shape,
 * strides) and borrows its memory, holding the export (and so the array) for
 * the tensor's lifetime. A Fortran-ordered array becomes a column-major tensor
 * without a copy; arrays with whole-element strides become strided tensors;
 * other non-contiguous arrays are copied to row-major (the library's
 * classification, hurray_strided_classify; which tensors NumPy can hold, and
 * how, is hurray_numpy_form's). The plain case of an
 * exact numpy.ndarray takes a cheaper way first (ndarray.c). Dense results
 * describe themselves lazily (hrpy_tensor_new_dense).
 */
#include "interop/numpy.h"

#include "core/buffer.h"
#include "core/device.h"
#include "core/tensor.h"
#include "interop/ndarray.h"
#include "interop/numpy_abi.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/runtime.h"
#include "core/state.h"
#include "interop/state.h"

#include <string.h>

/* NumPy's type string of a type it holds directly (hurray_dtype_array_typestr). */
#define typestr_of hurray_dtype_array_typestr

/* How NumPy holds a tensor: hurray_numpy_form's form, and whether its dense
 * layout is copied out in row-major order (tiled, Morton, Hilbert). */
typedef struct {
  uint8_t form; /* HURRAY_NUMPY_VIEW, _BOOL, _BFLOAT16 */
  bool gather;
} ArrKind;

/* Everything that keeps a tensor from becoming an ndarray: the library's
 * reasons (hurray_numpy_form), with what to use instead. */
static int numpy_checks(HrpyState *st, const HrpyTensorView *t, const char *what, ArrKind *kind) {
  /* A buffer whose bytes are not yet valid is the first thing to say, on any
   * device: no reader may touch it before the producer's event or stream. */
  if (hrpy_tensor_check_readable(st, t->self, what) < 0) return -1;
  if (hrpy_device_tag(t->device) != HURRAY_DEVICE_CPU) {
    hrpy_raise(st->UnsupportedError,
              "%s: the tensor is on %R, whose memory NumPy cannot address; use DLPack "
              "(__dlpack__) with a framework for that device",
              what, t->device);
    return -1;
  }
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_numpy_form(t->f, &kind->form, &kind->gather, &err);
  if (rc != HURRAY_OK) {
    const char *instead = strcmp(err.field, "layout.tag") == 0
                              ? "read its buffers with Tensor.buffer(i) or use the native protocol"
                          : strcmp(err.field, "quantization") == 0
                              ? "use the native protocol or save/load"
                          : strcmp(err.field, "type_tag") == 0
                              ? "use the native protocol, save/load, or DLPack where DLPack has "
                                "the type"
                              : NULL;
    if (instead != NULL)
      PyOS_snprintf(err.reason + strlen(err.reason), sizeof err.reason - strlen(err.reason),
                    "; %s", instead);
    PyOS_snprintf(err.message, sizeof err.message, "%s", err.reason);
    hrpy_raise_status_as(st, st->UnsupportedError, rc, &err, what);
    return -1;
  }
  for (uint32_t i = 0; i < t->f->rank; i++) {
    if (t->f->shape[i] > (uint64_t)PY_SSIZE_T_MAX) {
      hrpy_raise(st->UnsupportedError,
                 "%s: shape[%u] is %llu, beyond what a NumPy dimension holds (legal here "
                 "because another dimension is 0)",
                 what, (unsigned)i, (unsigned long long)t->f->shape[i]);
      return -1;
    }
  }
  return 0;
}

/* Shape and byte strides as NumPy holds them, every value checked
 * (hrpy_tensor_strided_geometry, then the width of Py_intptr_t). */
static int np_geometry(HrpyState *st, const HrpyTensorView *t, int64_t itemsize, int64_t *shape,
                       int64_t *strides, const char *what) {
  if (hrpy_tensor_strided_geometry(st, t, itemsize, shape, strides, what) < 0) return -1;
  for (uint32_t k = 0; k < t->f->rank; k++) {
    if (shape[k] > (int64_t)PY_SSIZE_T_MAX || strides[k] > (int64_t)PY_SSIZE_T_MAX ||
        strides[k] < -(int64_t)PY_SSIZE_T_MAX) {
      hrpy_raise(st->UnsupportedError, "%s: shape[%u] or its stride does not fit this platform's "
                 "pointer width", what, (unsigned)k);
      return -1;
    }
  }
  return 0;
}

/* The array interface dict of a dense tensor with element bytes `itemsize`. */
static PyObject *interface_dict(HrpyState *st, const HrpyTensorView *t, const char *typestr,
                                uint64_t itemsize) {
  uint32_t rank = t->f->rank;
  int64_t shp[HURRAY_MAX_RANK], str[HURRAY_MAX_RANK];
  if (np_geometry(st, t, (int64_t)itemsize, shp, str, "__array_interface__") < 0) return NULL;
  bool ro = t->nbuf > 0 && t->bufs[0].readonly;
  uint8_t *base = t->nbuf > 0 ? t->bufs[0].data : NULL;
  uintptr_t addr = base != NULL ? (uintptr_t)(base + t->f->byte_offset) : 0;
  return Py_BuildValue("{s:N,s:s,s:(NO),s:N,s:i}", "shape", hrpy_tuple_i64(shp, rank), "typestr",
                       typestr, "data", PyLong_FromVoidPtr((void *)addr),
                       ro ? Py_True : Py_False, "strides",
                       t->f->layout.tag == HURRAY_LAYOUT_ROW_MAJOR ? Py_NewRef(Py_None)
                                                                   : hrpy_tuple_i64(str, rank),
                       "version", 3);
}

PyObject *hrpy_tensor_array_interface(PyObject *self, void *closure) {
  (void)closure;
  HrpyState *st = hrpy_state_of(self);
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  ArrKind kind;
  if (numpy_checks(st, t, "__array_interface__", &kind) < 0) return NULL;
  if (kind.form != HURRAY_NUMPY_VIEW) {
    /* NumPy then falls back to __array__, which builds the array. */
    return PyErr_Format(PyExc_AttributeError,
                        "__array_interface__: %s elements have no NumPy typestr; "
                        "numpy.asarray uses __array__ instead",
                        kind.form == HURRAY_NUMPY_BOOL ? "bit-packed bool" : "bfloat16");
  }
  if (kind.gather) {
    return PyErr_Format(PyExc_AttributeError,
                        "__array_interface__: a %s tensor has no strided view; numpy.asarray "
                        "uses __array__, which copies it out in row-major order",
                        hrpy_layout_name(t->f->layout.tag));
  }
  const HurrayDtypeInfo *info = hurray_dtype_info(t->f->type_tag);
  return interface_dict(st, t, typestr_of(t->f->type_tag), info->bit_width / 8u);
}

/* ---- __array_struct__ ------------------------------------------------------
 *
 * NumPy looks up __array_struct__ before __array_interface__: a capsule holding
 * a PyArrayInterface (a stable part of NumPy's ABI since 1.x, declared here so
 * nothing is compiled against NumPy's headers). It spares NumPy the parsing of
 * the interface dict, which was most of numpy.asarray(t)'s time. The capsule
 * holds a strong reference to the tensor and owns the struct; the array's base
 * is the tensor (NumPy 1) or the tuple (tensor, capsule) (NumPy 2). The capsule
 * is unnamed: NumPy reads it with PyCapsule_GetPointer(capsule, NULL). The
 * same tensors have it as have the
 * interface (everything else raises AttributeError, so NumPy falls back).
 *
 * The struct carries the element type as a numpy.dtype object in `descr`
 * (flag NPY_ARR_HAS_DESCR): NumPy takes a dtype object as it is, where the
 * typekind/itemsize pair would make it format and parse a type string on
 * every call. The dtype objects are made once per element type and kept in
 * the module state; without NumPy's dtype (it failed to import) the struct
 * falls back to typekind/itemsize. */


typedef struct {
  HrpyArrayInterface inter;
  PyObject *owner;       /* the tensor (strong) */
  Py_intptr_t dims[];    /* shape then strides, 2 * nd entries */
} HrpyArrayStruct;

static void array_struct_dtor(PyObject *cap) {
  HrpySavedError saved;
  hrpy_dtor_begin(&saved);
  HrpyArrayStruct *s = PyCapsule_GetPointer(cap, NULL);
  if (s != NULL) {
    Py_XDECREF(s->owner);
    Py_XDECREF(s->inter.descr);
    PyMem_Free(s);
  }
  hrpy_dtor_end(&saved, cap);
}

/* numpy.dtype for a tag with a typestr (borrowed from the state), made on
 * first use; NULL without an exception when NumPy cannot make it. */
static PyObject *np_dtype_of(HrpyState *st, uint8_t tag, const char *typestr) {
  PyObject *dt = hrpy_peek(&st->interop->np_dtypes[tag]);
  if (dt != NULL) return dt;
  PyObject *np = hrpy_numpy(st);
  dt = np != NULL ? PyObject_CallMethod(np, "dtype", "(s)", typestr) : NULL;
  if (dt == NULL) {
    PyErr_Clear();
    return NULL;
  }
  dt = hrpy_publish(&st->interop->np_dtypes[tag], dt);
  return dt;
}

PyObject *hrpy_tensor_array_struct(PyObject *self, void *closure) {
  (void)closure;
  HrpyState *st = hrpy_state_of(self);
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  ArrKind kind;
  if (numpy_checks(st, t, "__array_struct__", &kind) < 0) return NULL;
  if (kind.form != HURRAY_NUMPY_VIEW || kind.gather) {
    return PyErr_Format(PyExc_AttributeError,
                        "__array_struct__: this tensor has no NumPy view; numpy.asarray "
                        "uses __array__ instead");
  }
  uint8_t tag = t->f->type_tag;
  const char *ts = typestr_of(tag); /* "<f4", "|u1", "<c8", ... */
  uint32_t rank = t->f->rank;
  int64_t itemsize = (int64_t)(hurray_dtype_info(tag)->bit_width / 8u);
  HrpyArrayStruct *s = PyMem_Malloc(sizeof *s + 2u * (size_t)rank * sizeof(Py_intptr_t));
  if (s == NULL) return PyErr_NoMemory();
  Py_intptr_t *shp = s->dims, *str = s->dims + rank;
  int64_t shape[HURRAY_MAX_RANK], strides[HURRAY_MAX_RANK];
  if (np_geometry(st, t, itemsize, shape, strides, "__array_struct__") < 0) {
    PyMem_Free(s);
    return NULL;
  }
  for (uint32_t k = 0; k < rank; k++) {
    shp[k] = (Py_intptr_t)shape[k];
    str[k] = (Py_intptr_t)strides[k];
  }
  bool ro = t->nbuf > 0 && t->bufs[0].readonly;
  uint8_t *base = t->nbuf > 0 ? t->bufs[0].data : NULL;
  s->inter.two = 2;
  s->inter.nd = (int)rank;
  s->inter.typekind = ts[1];
  s->inter.itemsize = (int)itemsize;
  s->inter.flags = HRPY_NPY_ALIGNED | HRPY_NPY_NOTSWAPPED | (ro ? 0 : HRPY_NPY_WRITEABLE);
  s->inter.shape = rank > 0 ? shp : NULL;
  s->inter.strides = rank > 0 ? str : NULL;
  s->inter.data = base != NULL ? base + t->f->byte_offset : NULL;
  s->inter.descr = NULL;
  PyObject *descr = np_dtype_of(st, tag, ts);
  if (descr != NULL) {
    s->inter.flags |= HRPY_NPY_ARR_HAS_DESCR;
    s->inter.descr = Py_NewRef(descr);
  }
  s->owner = Py_NewRef(self);
  PyObject *cap = PyCapsule_New(s, NULL, array_struct_dtor);
  if (cap == NULL) {
    Py_DECREF(s->owner);
    Py_XDECREF(s->inter.descr);
    PyMem_Free(s);
  }
  return cap;
}

/* A new bool ndarray holding the unpacked elements of a row/col-major tensor. */
static PyObject *bool_array(HrpyState *st, const HrpyTensorView *t) {
  PyObject *np = hrpy_numpy(st);
  if (np == NULL) return NULL;
  uint32_t rank = t->f->rank;
  bool colmajor = t->f->layout.tag == HURRAY_LAYOUT_COL_MAJOR;
  uint64_t dims[HURRAY_MAX_RANK];
  for (uint32_t i = 0; i < rank; i++) dims[i] = t->f->shape[colmajor ? rank - 1 - i : i];
  PyObject *shape = hrpy_shape_tuple(rank, dims);
  if (shape == NULL) return NULL;
  PyObject *arr = PyObject_CallMethod(np, "empty", "(Os)", shape, "bool");
  Py_DECREF(shape);
  if (arr == NULL) return NULL;
  uint64_t count = 0;
  (void)hurray_shape_element_count(rank, t->f->shape, &count);
  Py_buffer v;
  if (PyObject_GetBuffer(arr, &v, PyBUF_WRITABLE) < 0) {
    Py_DECREF(arr);
    return NULL;
  }
  if (count > 0) {
    const uint8_t *src = t->bufs[0].data + t->f->byte_offset;
    Py_BEGIN_ALLOW_THREADS hurray_bool_unpack(src, (uint8_t *)v.buf, count);
    Py_END_ALLOW_THREADS
  }
  PyBuffer_Release(&v);
  if (colmajor) {
    PyObject *tr = PyObject_GetAttrString(arr, "T");
    Py_DECREF(arr);
    return tr;
  }
  return arr;
}

/* `arr` (a uint16 array, stolen) viewed as ml_dtypes.bfloat16. */
static PyObject *as_bf16(HrpyState *st, PyObject *arr) {
  PyObject *mld = arr != NULL ? PyImport_ImportModule("ml_dtypes") : NULL;
  PyObject *bf16 = mld != NULL ? PyObject_GetAttrString(mld, "bfloat16") : NULL;
  PyObject *view = bf16 != NULL ? PyObject_CallMethod(arr, "view", "(O)", bf16) : NULL;
  if (arr != NULL && mld == NULL) {
    PyErr_Clear();
    hrpy_raise(st->UnsupportedError,
               "__array__: bfloat16 has no NumPy dtype unless ml_dtypes is installed; hand the "
               "tensor to PyTorch or JAX through DLPack instead");
  }
  Py_XDECREF(mld);
  Py_XDECREF(bf16);
  Py_XDECREF(arr);
  return view;
}

/* A bfloat16 view of the tensor's memory: a uint16 array over it (made from an
 * object holding the interface dict and the tensor), viewed as bfloat16. */
static PyObject *bf16_array(HrpyState *st, PyObject *self) {
  PyObject *np = hrpy_numpy(st);
  PyObject *ns_type = np != NULL ? hrpy_lazy_attr(&st->interop->simple_namespace, "types",
                                                  "SimpleNamespace")
                                 : NULL;
  if (ns_type == NULL) return NULL;
  HrpyTensorView view = hrpy_tensor_view(self);
  PyObject *d = interface_dict(st, &view, typestr_of(HURRAY_DTYPE_UINT16), 2);
  PyObject *kw = d != NULL ? Py_BuildValue("{s:N,s:O}", "__array_interface__", d, "tensor", self)
                           : NULL;
  PyObject *empty = kw != NULL ? PyTuple_New(0) : NULL;
  PyObject *ns = empty != NULL ? PyObject_Call(ns_type, empty, kw) : NULL;
  Py_XDECREF(kw);
  Py_XDECREF(empty);
  PyObject *raw = ns != NULL ? PyObject_CallMethod(np, "asarray", "(O)", ns) : NULL;
  Py_XDECREF(ns);
  return as_bf16(st, raw);
}

/* A new row-major ndarray holding the elements of a tiled, Morton or Hilbert
 * tensor, copied through the layout's addressing. */
static PyObject *gather_array(HrpyState *st, const HrpyTensorView *t, uint8_t form) {
  PyObject *np = hrpy_numpy(st);
  if (np == NULL) return NULL;
  uint64_t count = 0, packed = 0;
  (void)hurray_shape_element_count(t->f->rank, t->f->shape, &count);
  if (hurray_buffer_size_bytes(t->f->type_tag, count, &packed) != HURRAY_OK ||
      packed > (uint64_t)PY_SSIZE_T_MAX)
    return PyErr_NoMemory();
  PyObject *shape = hrpy_shape_tuple(t->f->rank, t->f->shape);
  if (shape == NULL) return NULL;
  const char *typestr = form == HURRAY_NUMPY_BOOL       ? "bool"
                        : form == HURRAY_NUMPY_BFLOAT16 ? typestr_of(HURRAY_DTYPE_UINT16)
                                                        : typestr_of(t->f->type_tag);
  PyObject *arr = PyObject_CallMethod(np, "empty", "(Os)", shape, typestr);
  Py_DECREF(shape);
  if (arr == NULL) return NULL;
  Py_buffer v;
  if (PyObject_GetBuffer(arr, &v, PyBUF_WRITABLE) < 0) {
    Py_DECREF(arr);
    return NULL;
  }
  void *dst = v.buf;
  uint8_t *tmp = NULL;
  if (form == HURRAY_NUMPY_BOOL) { /* Hurray bool is bit-packed: gather packed, then unpack */
    tmp = PyMem_Malloc(packed > 0 ? (size_t)packed : 1u);
    if (tmp == NULL) {
      PyBuffer_Release(&v);
      Py_DECREF(arr);
      return PyErr_NoMemory();
    }
    dst = tmp;
  }
  const void *small[4];
  const void **ptrs = small;
  if (t->nbuf > 4) ptrs = PyMem_Calloc(t->nbuf, sizeof *ptrs);
  HurrayStatus rc = HURRAY_ERR_OUT_OF_MEMORY;
  HurrayError err;
  hurray_error_clear(&err);
  if (ptrs != NULL) {
    for (uint32_t i = 0; i < t->nbuf; i++) ptrs[i] = t->bufs[i].data;
    Py_BEGIN_ALLOW_THREADS rc = hurray_layout_to_row_major(t->f, (const void *const *)ptrs, NULL,
                                                           dst, packed, &err);
    if (rc == HURRAY_OK && tmp != NULL) hurray_bool_unpack(tmp, (uint8_t *)v.buf, count);
    Py_END_ALLOW_THREADS
  }
  if (ptrs != small) PyMem_Free(ptrs);
  PyMem_Free(tmp);
  PyBuffer_Release(&v);
  if (rc != HURRAY_OK) {
    Py_DECREF(arr);
    return hrpy_raise_status(st, rc, &err, "__array__");
  }
  return form == HURRAY_NUMPY_BFLOAT16 ? as_bf16(st, arr) : arr;
}

PyObject *hrpy_tensor_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  HrpyState *st = hrpy_state_of(self);
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  static const char *const names[] = {"dtype", "copy", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("__array__", args, nargs, kwnames, names, 2, 0, a) < 0) return NULL;
  int copy;
  if (hrpy_parse_copy(a[1], &copy) < 0) return NULL;
  ArrKind kind;
  if (numpy_checks(st, t, "__array__", &kind) < 0) return NULL;
  PyObject *np = hrpy_numpy(st);
  if (np == NULL) return NULL;
  PyObject *arr;
  bool fresh = false;
  if (kind.gather) {
    if (copy == 0) {
      return hrpy_raise(st->CopyRequiredError,
                       "__array__(copy=False): a %s tensor has no strided view; its elements "
                       "must be copied out in row-major order",
                       hrpy_layout_name(t->f->layout.tag));
    }
    arr = gather_array(st, t, kind.form);
    fresh = true;
  } else if (kind.form == HURRAY_NUMPY_BOOL) {
    if (copy == 0) {
      return hrpy_raise(st->CopyRequiredError,
                       "__array__(copy=False): bool is bit-packed in Hurray and NumPy stores "
                       "one byte per element, so the array must be a copy");
    }
    arr = bool_array(st, t);
    fresh = true;
  } else if (kind.form == HURRAY_NUMPY_BFLOAT16) {
    arr = bf16_array(st, self);
  } else {
    arr = PyObject_CallMethod(np, "asarray", "(O)", self);
  }
  if (arr == NULL) return NULL;
  PyObject *dtype = a[0];
  if (dtype != NULL && dtype != Py_None) {
    PyObject *have = PyObject_GetAttrString(arr, "dtype");
    int same = have != NULL ? PyObject_RichCompareBool(have, dtype, Py_EQ) : -1;
    Py_XDECREF(have);
    if (same < 0) {
      Py_DECREF(arr);
      return NULL;
    }
    if (!same) {
      if (copy == 0) {
        Py_DECREF(arr);
        return hrpy_raise(st->CopyRequiredError,
                         "__array__(copy=False): converting to dtype %R needs a copy", dtype);
      }
      PyObject *conv = PyObject_CallMethod(arr, "astype", "(O)", dtype);
      Py_DECREF(arr);
      if (conv == NULL) return NULL;
      arr = conv;
      fresh = true;
    }
  }
  if (copy == 1 && !fresh) {
    PyObject *c = PyObject_CallMethod(arr, "copy", NULL);
    Py_DECREF(arr);
    arr = c;
  }
  return arr;
}

/* ---- from_numpy ------------------------------------------------------------- */

/* ml_dtypes.bfloat16 arrays export no buffer format: read them as uint16. */
static PyObject *bf16_as_uint16(PyObject *obj) {
  PyObject *dt = PyObject_GetAttrString(obj, "dtype");
  if (dt == NULL) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *name = PyObject_GetAttrString(dt, "name");
  Py_DECREF(dt);
  if (name == NULL) {
    PyErr_Clear();
    return NULL;
  }
  int is_bf16 = PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0;
  Py_DECREF(name);
  if (!is_bf16) return NULL;
  PyObject *v = PyObject_CallMethod(obj, "view", "(s)", "uint16");
  if (v == NULL) PyErr_Clear();
  return v;
}

PyObject *hrpy_from_numpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(module);
  static const char *const names[] = {"array", "copy", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("from_numpy", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  int copy;
  if (hrpy_parse_copy(a[1], &copy) < 0) return NULL;
  const char *ctx = "from_numpy";
  PyObject *fast;
  if (hrpy_from_ndarray(st, a[0], copy, ctx, &fast)) return fast;
  HrpyBuffer b;
  memset(&b, 0, sizeof b);
  bool bf16 = false;
  if (PyObject_GetBuffer(a[0], &b.view, PyBUF_RECORDS_RO) < 0) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *u16 = bf16_as_uint16(a[0]);
    if (u16 == NULL) {
      PyErr_Restore(type, value, tb);
      if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        return PyErr_Format(PyExc_TypeError,
                            "from_numpy: expected a numpy.ndarray or another buffer-protocol "
                            "object, not %.100s",
                            Py_TYPE(a[0])->tp_name);
      }
      if (PyErr_ExceptionMatches(PyExc_ValueError) ||
          PyErr_ExceptionMatches(PyExc_BufferError)) {
        /* e.g. NumPy refuses to export datetime64 or object elements */
        PyErr_Fetch(&type, &value, &tb);
        hrpy_raise(st->UnsupportedError, "from_numpy: the elements have no Hurray type (%S)",
                  value != NULL ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
      }
      return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    int rc = PyObject_GetBuffer(u16, &b.view, PyBUF_RECORDS_RO);
    Py_DECREF(u16);
    if (rc < 0) return NULL;
    bf16 = true;
  }
  Py_buffer *v = &b.view;
  bool swapped = false;
  uint8_t tag = bf16 ? HURRAY_DTYPE_BFLOAT16 : hurray_dtype_from_buffer_format(
                                                      v->format, (uint64_t)v->itemsize, &swapped);
  if (tag == 0) {
    hrpy_raise(st->UnsupportedError, "%s: element format '%s' (itemsize %zd) has no Hurray type",
              ctx, v->format != NULL ? v->format : "B", v->itemsize);
    goto fail;
  }
  if (swapped) {
    hrpy_raise(st->UnsupportedError,
              "%s: the array is in non-native byte order; convert it with "
              "array.astype(array.dtype.newbyteorder('='))",
              ctx);
    goto fail;
  }
  if (v->ndim > (int)HURRAY_MAX_RANK) {
    hrpy_raise(st->InvalidDescriptorError, "%s: rank %d exceeds the maximum rank %u", ctx,
              v->ndim, (unsigned)HURRAY_MAX_RANK);
    goto fail;
  }
  uint32_t rank = (uint32_t)v->ndim;
  uint64_t shape[HURRAY_MAX_RANK];
  /* an exporter written in C could say anything: check what is read */
  if (v->ndim < 0 || (rank > 0 && v->shape == NULL) || v->itemsize <= 0 || v->len < 0) {
    hrpy_raise(st->BufferError, "%s: the exporter's buffer description is inconsistent "
               "(ndim %d, itemsize %zd, len %zd)", ctx, v->ndim, v->itemsize, v->len);
    goto fail;
  }
  for (uint32_t i = 0; i < rank; i++) {
    if (v->shape[i] < 0) {
      hrpy_raise(st->BufferError, "%s: the exporter says shape[%u] is negative (%zd)", ctx,
                 (unsigned)i, v->shape[i]);
      goto fail;
    }
    shape[i] = (uint64_t)v->shape[i];
  }
  b.readonly = v->readonly != 0;
  /* row-major, column-major, strided over whole elements, or a copy: the
   * library's classification (copy=True asks for a compact copy instead of a
   * strided view) */
  int64_t bstr[HURRAY_MAX_RANK];
  for (uint32_t k = 0; k < rank && v->strides != NULL; k++) bstr[k] = v->strides[k];
  HurrayStridedForm form;
  hurray_strided_classify(tag, (uint8_t *)v->buf, (uint64_t)v->itemsize, rank, shape,
                          v->strides != NULL ? bstr : NULL, &form);
  bool c_contig = form.layout_tag == HURRAY_LAYOUT_ROW_MAJOR;
  bool strided = form.layout_tag == HURRAY_LAYOUT_STRIDED && copy != 1;
  HurrayLayout lay;
  memset(&lay, 0, sizeof lay);
  lay.tag = form.layout_tag == HURRAY_LAYOUT_COL_MAJOR ? HURRAY_LAYOUT_COL_MAJOR
                                                       : HURRAY_LAYOUT_ROW_MAJOR;
  uint64_t boff = form.span_offset;
  if (strided) {
    lay.tag = HURRAY_LAYOUT_STRIDED;
    lay.u.strided.strides = form.strides;
    b.data = form.span_base;
    b.size = form.span;
    if (hrpy_buffer_apply_copy_policy(st, &b, 0, copy, true, ctx) < 0) goto fail;
  } else if (tag == HURRAY_DTYPE_BOOL || form.layout_tag == 0 ||
             form.layout_tag == HURRAY_LAYOUT_STRIDED) {
    /* bool is bit-packed in Hurray; other strides are gathered to row-major. */
    if (copy == 0) {
      hrpy_raise(st->BufferError,
                "%s: %s, which needs a copy, and copy=False forbids it", ctx,
                tag == HURRAY_DTYPE_BOOL ? "bool is bit-packed in Hurray"
                                         : "the array is not contiguous");
      goto fail;
    }
    bool is_bool = tag == HURRAY_DTYPE_BOOL; /* else not contiguous */
    uint64_t count = (uint64_t)(v->len / (v->itemsize > 0 ? v->itemsize : 1));
    uint64_t nbytes = is_bool ? (count + 7u) / 8u : (uint64_t)v->len;
    void *mem = hrpy_alloc_buffer(nbytes, false);
    /* bool is packed from its elements in C order, gathered first unless they are */
    uint8_t *tmp = mem != NULL && is_bool && !c_contig
                       ? PyMem_Malloc((size_t)(v->len > 0 ? v->len : 1))
                       : NULL;
    int rc = mem == NULL ? -1 : is_bool && !c_contig && tmp == NULL ? (PyErr_NoMemory(), -1) : 0;
    if (rc == 0 && !c_contig) rc = PyBuffer_ToContiguous(is_bool ? tmp : mem, v, v->len, 'C');
    if (rc == 0 && is_bool) hurray_bool_pack(c_contig ? (const uint8_t *)v->buf : tmp, mem, count);
    PyMem_Free(tmp);
    if (rc < 0) {
      hurray_free(mem);
      goto fail;
    }
    hrpy_buffer_release(&b);
    b.data = mem;
    b.owned = mem;
    b.size = nbytes;
    b.readonly = false;
    lay.tag = HURRAY_LAYOUT_ROW_MAJOR;
  } else {
    b.data = (uint8_t *)v->buf;
    b.size = (uint64_t)v->len;
    if (hrpy_buffer_apply_copy_policy(st, &b, 0, copy, true, ctx) < 0) goto fail;
  }
  if (strided)
    return hrpy_tensor_build(st, tag, rank, shape, &lay, boff, st->core->cpu, &b, 1, ctx);
  /* dense: the descriptor is built when first needed */
  return hrpy_tensor_new_dense(st, tag, rank, shape, lay.tag, st->core->cpu, &b, ctx);
fail:
  hrpy_buffer_release(&b);
  return NULL;
}
