/*
 * interop/sparse.c - the sparse side of hurray.Tensor (spec:
 * docs/adr/ADR-031-unified-python-tensor-class.md): nnz, the
 * component views (.values, .indices, .col_indices / .row_ptr, .row_indices
 * / .col_ptr), the index-buffer check that runs at construction, and
 * to_scipy (through the pure-Python hurray._sparse).
 *
 * A sparse tensor is an ordinary Tensor whose layout is COO, CSR, CSC or CSF.
 * An accessor that does not apply to the layout raises AttributeError, never
 * UnsupportedError, so hasattr reports what a tensor actually has.
 *
 * Component views are Tensors over the buffers of the parent, sharing memory
 * and keeping the parent alive; index buffers are uint64 (coo.md, csr.md,
 * csc.md). Like buffer(i), they refuse buffers that are not producer-synced.
 */
#include "interop/sparse.h"

#include "core/buffer.h"
#include "core/tensor.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"



static PyObject *no_attribute(PyObject *self, const char *attr) {
  return PyErr_Format(PyExc_AttributeError,
                      "'hurray.Tensor' object has no attribute '%s'; this is a %s tensor", attr,
                      hrpy_layout_name(hrpy_tensor_fields(self)->layout.tag));
}

/* A 1-D or 2-D view Tensor of `type_tag` over buffer `index` (keeps self alive). */
static PyObject *component(PyObject *self, uint32_t index, uint8_t type_tag, uint32_t rank,
                           const uint64_t *shape, const char *what) {
  HrpyState *st = hrpy_state_of(self);
  if (index >= hrpy_tensor_nbuf(self))
    return hrpy_raise(st->InvalidDescriptorError, "%s: the tensor has no buffer %u", what,
                      (unsigned)index);
  if (hrpy_tensor_check_readable(st, self, what) < 0) return NULL;
  HrpyBuffer b;
  hrpy_tensor_borrow_buffer(self, index, &b);
  return hrpy_tensor_build(st, type_tag, rank, shape, NULL, 0, hrpy_tensor_device(self), &b, 1,
                           what);
}

PyObject *hrpy_tensor_nnz(PyObject *self, void *closure) {
  (void)closure;
  uint64_t nnz;
  if (!hurray_layout_nnz(&hrpy_tensor_fields(self)->layout, &nnz)) return no_attribute(self, "nnz");
  return PyLong_FromUnsignedLongLong(nnz);
}

PyObject *hrpy_tensor_values(PyObject *self, void *closure) {
  (void)closure;
  uint64_t nnz;
  if (!hurray_layout_nnz(&hrpy_tensor_fields(self)->layout, &nnz)) return no_attribute(self, "values");
  return component(self, 0, hrpy_tensor_fields(self)->type_tag, 1, &nnz, "Tensor.values");
}

PyObject *hrpy_tensor_indices(PyObject *self, void *closure) {
  (void)closure;
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  if (t->f->layout.tag != HURRAY_LAYOUT_COO) return no_attribute(self, "indices");
  uint64_t shape[2] = {t->f->layout.u.coo.nnz, t->f->rank};
  return component(self, 1, HURRAY_DTYPE_UINT64, 2, shape, "Tensor.indices");
}

static PyObject *compressed_indices(PyObject *self, uint8_t tag, const char *attr) {
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  if (t->f->layout.tag != tag) return no_attribute(self, attr);
  uint64_t nnz = t->f->layout.u.csr.nnz;
  char what[32];
  PyOS_snprintf(what, sizeof what, "Tensor.%s", attr);
  return component(self, 1, HURRAY_DTYPE_UINT64, 1, &nnz, what);
}

/* The pointer array: one entry per row (CSR, dim 0) or column (CSC, dim 1), plus one. */
static PyObject *compressed_ptr(PyObject *self, uint8_t tag, uint32_t dim, const char *attr) {
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  if (t->f->layout.tag != tag) return no_attribute(self, attr);
  uint64_t n = t->f->shape[dim];
  uint64_t len = n == HURRAY_DYNAMIC_DIM ? HURRAY_DYNAMIC_DIM : n + 1u;
  char what[32];
  PyOS_snprintf(what, sizeof what, "Tensor.%s", attr);
  return component(self, 2, HURRAY_DTYPE_UINT64, 1, &len, what);
}

PyObject *hrpy_tensor_col_indices(PyObject *self, void *closure) {
  (void)closure;
  return compressed_indices(self, HURRAY_LAYOUT_CSR, "col_indices");
}
PyObject *hrpy_tensor_row_ptr(PyObject *self, void *closure) {
  (void)closure;
  return compressed_ptr(self, HURRAY_LAYOUT_CSR, 0, "row_ptr");
}
PyObject *hrpy_tensor_row_indices(PyObject *self, void *closure) {
  (void)closure;
  return compressed_indices(self, HURRAY_LAYOUT_CSC, "row_indices");
}
PyObject *hrpy_tensor_col_ptr(PyObject *self, void *closure) {
  (void)closure;
  return compressed_ptr(self, HURRAY_LAYOUT_CSC, 1, "col_ptr");
}

PyObject *hrpy_tensor_to_scipy(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of(self);
  PyObject *fn = hrpy_peek(&st->hook_to_scipy); /* hurray._sparse.to_scipy, lent at import */
  if (fn == NULL)
    return PyErr_Format(PyExc_RuntimeError,
                        "to_scipy: the hurray package has not registered its SciPy conversion "
                        "(import hurray, not hurray._hurray alone)");
  return PyObject_CallOneArg(fn, self);
}

/* ---- COO order (hurray_coo_indices_increasing) ------------------------------ */

PyObject *hrpy_coo_lexsorted(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  if (nargs != 3)
    return PyErr_Format(PyExc_TypeError, "_coo_lexsorted(indices, nnz, rank) takes 3 arguments");
  uint64_t nnz, rank;
  if (hrpy_arg_uint_as(PyExc_ValueError, args[1], "_coo_lexsorted", "nnz", PY_SSIZE_T_MAX, &nnz) <
          0 ||
      hrpy_arg_uint_as(PyExc_ValueError, args[2], "_coo_lexsorted", "rank", HURRAY_MAX_RANK,
                       &rank) < 0)
    return NULL;
  Py_buffer v;
  if (PyObject_GetBuffer(args[0], &v, PyBUF_SIMPLE) < 0) return NULL;
  if (rank > 0 && (uint64_t)v.len / (8u * (uint64_t)rank) < nnz) {
    PyBuffer_Release(&v);
    return PyErr_Format(PyExc_ValueError,
                        "_coo_lexsorted: %zd bytes hold fewer than %llu rows of %u uint64 "
                        "coordinates",
                        v.len, (unsigned long long)nnz, (unsigned)rank);
  }
  bool inc;
  if (nnz >= HRPY_NOGIL_INDEX_ENTRIES) {
    Py_BEGIN_ALLOW_THREADS inc = hurray_coo_indices_increasing(v.buf, nnz, (uint32_t)rank);
    Py_END_ALLOW_THREADS
  } else {
    inc = hurray_coo_indices_increasing(v.buf, nnz, (uint32_t)rank);
  }
  PyBuffer_Release(&v);
  return PyBool_FromLong(inc);
}
