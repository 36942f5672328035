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
 * and keeping the parent alive; which buffer, element type and shape each is
 * comes from hurray_descriptor_component. Like buffer(i), they refuse buffers
 * that are not producer-synced.
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

PyObject *hrpy_tensor_nnz(PyObject *self, void *closure) {
  (void)closure;
  uint64_t nnz;
  if (!hurray_layout_nnz(&hrpy_tensor_fields(self)->layout, &nnz)) return no_attribute(self, "nnz");
  return PyLong_FromUnsignedLongLong(nnz);
}

/* Component `role` (the getter's closure: "values", "indices", "row_ptr", ...)
 * as a view Tensor over its buffer, keeping self alive; which buffer, type and
 * shape are hurray_descriptor_component's. */
PyObject *hrpy_tensor_component(PyObject *self, void *role) {
  HrpyState *st = hrpy_state_of(self);
  HurrayComponent c;
  if (hurray_descriptor_component(hrpy_tensor_fields(self), role, &c, NULL) != HURRAY_OK)
    return no_attribute(self, role);
  char what[32];
  PyOS_snprintf(what, sizeof what, "Tensor.%s", (const char *)role);
  if (c.buffer_index >= hrpy_tensor_nbuf(self))
    return hrpy_raise(st->InvalidDescriptorError, "%s: the tensor has no buffer %u", what,
                      (unsigned)c.buffer_index);
  if (hrpy_tensor_check_readable(st, self, what) < 0) return NULL;
  HrpyBuffer b;
  hrpy_tensor_borrow_buffer(self, c.buffer_index, &b);
  return hrpy_tensor_build(st, c.type_tag, c.rank, c.shape, NULL, 0, hrpy_tensor_device(self),
                           &b, 1, what);
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
