/*
 * interop/sparse.h - the sparse views of a tensor and SciPy (layer 3):
 * getters raising AttributeError when the layout has no such component (so
 * hasattr tells the truth), and to_scipy through hurray._sparse.
 */
#ifndef HURRAY_PY_INTEROP_SPARSE_H
#define HURRAY_PY_INTEROP_SPARSE_H

#include "util/state.h"

PyObject *hrpy_tensor_nnz(PyObject *self, void *closure);
/* A component view (values, indices, ...); `role` (the getset closure) is
 * its name, as hurray_descriptor_component takes it. */
PyObject *hrpy_tensor_component(PyObject *self, void *role);
/* to_scipy(): through hurray._sparse (SciPy is imported lazily). */
PyObject *hrpy_tensor_to_scipy(PyObject *self, PyObject *unused);
/* _coo_lexsorted(indices, nnz, rank): whether the [nnz, rank] uint64
 * coordinates (a C-contiguous buffer) strictly increase lexicographically:
 * one scan in C, stopping at the first row out of order (hurray._sparse). */
PyObject *hrpy_coo_lexsorted(PyObject *m, PyObject *const *args, Py_ssize_t nargs);

#endif /* HURRAY_PY_INTEROP_SPARSE_H */
