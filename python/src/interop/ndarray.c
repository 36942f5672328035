/*
 * interop/ndarray.c - from_numpy's path for an exact numpy.ndarray (hrpy_from_ndarray).
 *
 * from_numpy's general path asks the buffer protocol, where NumPy formats a
 * struct-module format string and compares it with a cached one on every
 * call: most of from_numpy's time for a small array. An exact ndarray can
 * describe itself more cheaply, in one of two ways, fastest first:
 *
 *   1. Its object header. Every compiled NumPy extension reads an array
 *      through NumPy's macros, which read the fields of PyArrayObject_fields
 *      (data, nd, dimensions, strides, base, descr, flags) and of the dtype's
 *      head (typeobj, kind, type, byteorder, type_num): NumPy's headers name
 *      this head "1.x and 2.x compatible", and the array fields have not
 *      moved since NumPy 1.7. This module is compiled without NumPy's headers,
 *      so the layout is declared below and proven at run time before its
 *      first use: for probe arrays of known type, order and writability, the
 *      header must agree with what NumPy reports through
 *      __array_interface__ (data address, shape, strides, type, flags), and
 *      NumPy's major version must be 1 or 2. If anything disagrees (a NumPy
 *      that changed its objects), the header is never read.
 *   2. __array_struct__ (a PyArrayInterface in a capsule), NumPy's stable
 *      export of the same fields.
 *
 * Either way the tensor holds a strong reference to the array instead of a
 * buffer export; both keep the array, and so its memory, alive. Only the
 * plain case is taken: a native-order, C- or Fortran-contiguous array of a
 * type that maps one to one onto a Hurray type. bool (which Hurray packs),
 * bfloat16, structured types, every other kind, non-contiguous arrays and
 * ndarray subclasses take the general path, which also raises every error.
 * The tensor's descriptor is built lazily (hrpy_tensor_new_dense).
 */
#include "interop/ndarray.h"

#include "core/buffer.h"
#include "core/tensor.h"
#include "interop/numpy_abi.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/runtime.h"
#include "core/state.h"
#include "interop/state.h"

#include <string.h>

/* ---- element types ------------------------------------------------------------ */

/* Hurray type of a NumPy type number (bool and every unmapped type: 0): the
 * kind and size of each number of enum NPY_TYPES (unchanged since NumPy 1.0),
 * the C integer types of this platform's sizes, as in the NumPy built for it. */
static uint8_t tag_of_type_num(int n) {
  static const struct {
    char kind;
    unsigned char size;
  } k[24] = {[1] = {'i', 1},
             [2] = {'u', 1},
             [3] = {'i', sizeof(short)},
             [4] = {'u', sizeof(short)},
             [5] = {'i', sizeof(int)},
             [6] = {'u', sizeof(int)},
             [7] = {'i', sizeof(long)},
             [8] = {'u', sizeof(long)},
             [9] = {'i', sizeof(long long)},
             [10] = {'u', sizeof(long long)},
             [11] = {'f', 4},
             [12] = {'f', 8},
             [14] = {'c', 8},
             [15] = {'c', 16},
             [23] = {'f', 2}};
  return n > 0 && n < 24 && k[n].kind != 0 ? hurray_dtype_from_array_kind(k[n].kind, k[n].size)
                                           : 0;
}

/* ---- the plain case ----------------------------------------------------------- */

/* What from_numpy needs of a plain array. */
typedef struct Plain {
  uint8_t tag;
  uint8_t layout; /* HURRAY_LAYOUT_ROW_MAJOR or HURRAY_LAYOUT_COL_MAJOR */
  bool readonly;
  uint32_t rank;
  void *data;
  uint64_t nbytes;
  uint64_t shape[HURRAY_MAX_RANK];
} Plain;

/* Fills the rest of *p from its type, rank, dimensions and flags; false when
 * that is not the plain case. */
static bool plain_finish(Plain *p, const Py_ssize_t *dims, int nd, unsigned flags) {
  if (p->tag == 0 || nd < 0 || nd > (int)HURRAY_MAX_RANK || (nd > 0 && dims == NULL))
    return false;
  p->rank = (uint32_t)nd;
  bool c_contig = (flags & HRPY_NPY_C_CONTIGUOUS) != 0;
  bool f_contig = !c_contig && p->rank >= 2 && (flags & HRPY_NPY_F_CONTIGUOUS) != 0;
  if (!c_contig && !f_contig) return false;
  p->layout = f_contig ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR;
  p->readonly = (flags & HRPY_NPY_WRITEABLE) == 0;
  for (uint32_t i = 0; i < p->rank; i++) {
    if (dims[i] < 0) return false;
    p->shape[i] = (uint64_t)dims[i];
  }
  uint64_t count;
  return hurray_shape_element_count(p->rank, p->shape, &count) &&
         hurray_buffer_size_bytes(p->tag, count, &p->nbytes) == HURRAY_OK &&
         p->nbytes <= (uint64_t)PY_SSIZE_T_MAX;
}

/* ---- way 1: the object header --------------------------------------------------- */

/* The head of PyArrayObject_fields. */
typedef struct {
  PyObject_HEAD
  char *data;
  int nd;
  Py_ssize_t *dimensions;
  Py_ssize_t *strides;
  PyObject *base;
  PyObject *descr;
  int flags;
} HrpyNdHead;

/* The head of PyArray_Descr shared by NumPy 1.x and 2.x. */
typedef struct {
  PyObject_HEAD
  PyTypeObject *typeobj;
  char kind;
  char type;
  char byteorder;
  char former_flags;
  int type_num;
} HrpyNdDescrHead;

/* NumPy's internal "warn on write" flag: such an array is exported read-only. */
#define HRPY_NPY_WARN_ON_WRITE 0x80000000u

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HRPY_NATIVE_ORDER '>'
#else
#define HRPY_NATIVE_ORDER '<'
#endif

static bool header_plain(PyObject *obj, Plain *p) {
  const HrpyNdHead *h = (const HrpyNdHead *)obj;
  const HrpyNdDescrHead *d = (const HrpyNdDescrHead *)h->descr;
  if (d == NULL) return false;
  char bo = d->byteorder;
  if (bo != '=' && bo != '|' && bo != HRPY_NATIVE_ORDER) return false;
  unsigned flags = (unsigned)h->flags;
  if (flags & HRPY_NPY_WARN_ON_WRITE) flags &= ~(unsigned)HRPY_NPY_WRITEABLE;
  p->tag = tag_of_type_num(d->type_num);
  p->data = h->data;
  return plain_finish(p, h->dimensions, h->nd, flags);
}

/* One probe: `arr` (a fresh array of the type numbered `type_num`, kind
 * `kind`) must read through the header as __array_interface__ reports it,
 * with `want` flag bits set and `unwanted` clear. */
static bool probe_one(PyObject *np_dtype, PyObject *arr, int type_num, char kind, unsigned want,
                      unsigned unwanted) {
  if (arr == NULL) return false;
  const HrpyNdHead *h = (const HrpyNdHead *)arr;
  bool ok = h->descr != NULL && PyObject_TypeCheck(h->descr, (PyTypeObject *)np_dtype) &&
            ((const HrpyNdDescrHead *)h->descr)->type_num == type_num &&
            ((const HrpyNdDescrHead *)h->descr)->kind == kind &&
            ((unsigned)h->flags & want) == want && ((unsigned)h->flags & unwanted) == 0 &&
            h->nd >= 1 && h->nd <= 8;
  PyObject *ai = ok ? PyObject_GetAttrString(arr, "__array_interface__") : NULL;
  PyObject *data = ai != NULL ? PyDict_GetItemString(ai, "data") : NULL;
  PyObject *shape = ai != NULL ? PyDict_GetItemString(ai, "shape") : NULL;
  PyObject *strides = ai != NULL ? PyDict_GetItemString(ai, "strides") : NULL;
  ok = ok && data != NULL && PyTuple_Check(data) && PyTuple_GET_SIZE(data) == 2 &&
       shape != NULL && PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == h->nd &&
       strides != NULL;
  if (ok) {
    ok = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0)) == (void *)h->data &&
         PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == ((h->flags & HRPY_NPY_WRITEABLE) == 0);
    for (Py_ssize_t i = 0; ok && i < h->nd; i++) {
      ok = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i)) == h->dimensions[i];
      if (ok && strides != Py_None)
        ok = PyTuple_Check(strides) && PyTuple_GET_SIZE(strides) == h->nd &&
             PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i)) == h->strides[i];
    }
  }
  Py_XDECREF(ai);
  PyErr_Clear();
  return ok;
}

/* Proves the header layout once (st->interop->nd_header: 1 proven, -1 not). */
static bool header_proven(HrpyState *st) {
  int known = hrpy_load_int(&st->interop->nd_header);
  if (known != 0) return known > 0;
  /* other threads take the struct way while this one proves the header */
  hrpy_store_int(&st->interop->nd_header, -1);
  PyObject *np = hrpy_numpy(st);
  if (np == NULL) {
    PyErr_Clear();
    return false;
  }
  PyObject *ver = PyObject_GetAttrString(np, "__version__");
  const char *v = ver != NULL && PyUnicode_Check(ver) ? PyUnicode_AsUTF8(ver) : NULL;
  bool ok = v != NULL && (strncmp(v, "1.", 2) == 0 || strncmp(v, "2.", 2) == 0);
  Py_XDECREF(ver);
  PyObject *dtype = ok ? PyObject_GetAttrString(np, "dtype") : NULL;
  ok = dtype != NULL && PyType_Check(dtype);
  /* C order, writable float32; Fortran order (a transposed view) of int16;
   * a read-only uint8 array over bytes */
  PyObject *a = ok ? PyObject_CallMethod(np, "empty", "((ii)s)", 3, 5, "float32") : NULL;
  ok = probe_one(dtype, a, 11 /* NPY_FLOAT */, 'f', HRPY_NPY_C_CONTIGUOUS | HRPY_NPY_WRITEABLE,
                 HRPY_NPY_F_CONTIGUOUS);
  PyObject *b0 = ok ? PyObject_CallMethod(np, "empty", "((ii)s)", 6, 4, "int16") : NULL;
  PyObject *b = b0 != NULL ? PyObject_GetAttrString(b0, "T") : NULL;
  ok = ok && probe_one(dtype, b, 3 /* NPY_SHORT */, 'i', HRPY_NPY_F_CONTIGUOUS | HRPY_NPY_WRITEABLE,
                       HRPY_NPY_C_CONTIGUOUS);
  PyObject *bytes = ok ? PyBytes_FromString("0123456789") : NULL;
  PyObject *c = bytes != NULL ? PyObject_CallMethod(np, "frombuffer", "(Os)", bytes, "uint8")
                              : NULL;
  ok = ok && probe_one(dtype, c, 2 /* NPY_UBYTE */, 'u', HRPY_NPY_C_CONTIGUOUS, HRPY_NPY_WRITEABLE);
  Py_XDECREF(a);
  Py_XDECREF(b0);
  Py_XDECREF(b);
  Py_XDECREF(bytes);
  Py_XDECREF(c);
  Py_XDECREF(dtype);
  PyErr_Clear();
  if (ok) hrpy_store_int(&st->interop->nd_header, 1);
  return ok;
}

/* ---- way 2: __array_struct__ -------------------------------------------------------- */

/* *cap receives the capsule to release once the data pointer is taken. */
static bool struct_plain(HrpyState *st, PyObject *obj, Plain *p, PyObject **cap) {
  *cap = PyObject_GetAttr(obj, st->interop->s_array_struct);
  if (*cap == NULL) {
    PyErr_Clear();
    return false;
  }
  const HrpyArrayInterface *ai =
      PyCapsule_CheckExact(*cap) ? PyCapsule_GetPointer(*cap, NULL) : NULL;
  if (ai == NULL) {
    PyErr_Clear();
    return false;
  }
  unsigned flags = (unsigned)ai->flags;
  if (ai->two != 2 || (flags & HRPY_NPY_NOTSWAPPED) == 0 || (flags & HRPY_NPY_ARR_HAS_DESCR) != 0)
    return false;
  p->tag = ai->typekind == 'b' || ai->itemsize < 0
               ? 0 /* Hurray packs bool: the general path copies it */
               : hurray_dtype_from_array_kind(ai->typekind, (uint64_t)ai->itemsize);
  p->data = ai->data;
  return plain_finish(p, ai->shape, ai->nd, flags);
}

/* ---- entry -------------------------------------------------------------------------- */

/* True when obj is exactly a numpy.ndarray (NumPy is loaded if one exists). */
static bool is_exact_ndarray(HrpyState *st, PyObject *obj) {
  PyTypeObject *tp = Py_TYPE(obj);
  PyObject *nd = hrpy_peek(&st->interop->ndarray_type);
  if (nd == NULL) {
    if (strcmp(tp->tp_name, "numpy.ndarray") != 0) return false;
    nd = hrpy_lazy_attr(&st->interop->ndarray_type, "numpy", "ndarray");
    if (nd == NULL) {
      PyErr_Clear();
      return false;
    }
  }
  return (PyObject *)tp == nd;
}

bool hrpy_from_ndarray(HrpyState *st, PyObject *obj, int copy, const char *context,
                      PyObject **out) {
  if (!is_exact_ndarray(st, obj)) return false;
  Plain p;
  PyObject *cap = NULL;
  bool plain = header_proven(st) ? header_plain(obj, &p) : struct_plain(st, obj, &p, &cap);
  Py_XDECREF(cap); /* the data pointer stays valid: the array is alive */
  if (!plain) return false;
  /* every field the buffer functions read; no held export (view.obj NULL),
   * and no memset of the whole struct (a rep stos is a measurable share) */
  HrpyBuffer b;
  b.data = (uint8_t *)p.data;
  b.size = p.nbytes;
  b.owner = Py_NewRef(obj);
  b.view.obj = NULL;
  b.owned = NULL;
  b.readonly = p.readonly;
  b.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  b.host = false;
  if (hrpy_buffer_apply_copy_policy(st, &b, 0, copy, true, context) < 0) {
    hrpy_buffer_release(&b);
    *out = NULL;
    return true;
  }
  *out = hrpy_tensor_new_dense(st, p.tag, p.rank, p.shape, p.layout, st->core->cpu, &b, context);
  return true;
}

PyObject *hrpy_ndarray_path(PyObject *m, PyObject *mode) {
  HrpyState *st = hrpy_state_of_module(m);
  if (mode != Py_None) {
    if (!PyUnicode_Check(mode))
      return PyErr_Format(PyExc_TypeError, "mode must be a str or None");
    if (PyUnicode_CompareWithASCIIString(mode, "struct") == 0) {
      hrpy_store_int(&st->interop->nd_header, -1);
    } else if (PyUnicode_CompareWithASCIIString(mode, "auto") == 0) {
      hrpy_store_int(&st->interop->nd_header, 0);
    } else if (PyUnicode_CompareWithASCIIString(mode, "header") == 0) {
      hrpy_store_int(&st->interop->nd_header, 0);
      if (!header_proven(st))
        return PyErr_Format(PyExc_RuntimeError, "the ndarray header layout is not proven");
    } else {
      return PyErr_Format(PyExc_ValueError, "mode must be 'header', 'struct' or 'auto'");
    }
  }
  return PyUnicode_FromString(hrpy_load_int(&st->interop->nd_header) > 0 ? "header" : hrpy_load_int(&st->interop->nd_header) < 0 ? "struct"
                                                                               : "unproven");
}
