/*
 * interop/sparse.h - the sparse views of a tensor and SciPy (layer 3):
 * getters raising AttributeError when the layout has no such component (so
 * hasattr tells the truth), and to_scipy through hurray._sparse.
 */
#ifndef HURRAY_PY_INTEROP_SPARSE_H
#define HURRAY_PY_INTEROP_SPARSE_H

#include "util/state.h"

PyObject *hrpy_tensor_nnz(PyObject *self, void *closure);
PyObject *hrpy_tensor_values(PyObject *self, void *closure);
PyObject *hrpy_tensor_indices(PyObject *self, void *closure);
PyObject *hrpy_tensor_col_indices(PyObject *self, void *closure);
PyObject *hrpy_tensor_row_ptr(PyObject *self, void *closure);
PyObject *hrpy_tensor_row_indices(PyObject *self, void *closure);
PyObject *hrpy_tensor_col_ptr(PyObject *self, void *closure);
/* to_scipy(): through hurray._sparse (SciPy is imported lazily). */
PyObject *hrpy_tensor_to_scipy(PyObject *self, PyObject *unused);
/* _coo_lexsorted(indices, nnz, rank): whether the [nnz, rank] uint64
 * coordinates (a C-contiguous buffer) strictly increase lexicographically:
 * one scan in C, stopping at the first row out of order (hurray._sparse). */
PyObject *hrpy_coo_lexsorted(PyObject *m, PyObject *const *args, Py_ssize_t nargs);

#endif /* HURRAY_PY_INTEROP_SPARSE_H */
