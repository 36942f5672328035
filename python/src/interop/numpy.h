/*
 * interop/numpy.h - NumPy interop (layer 3): Tensor.__array__,
 * __array_interface__, __array_struct__ and hurray.from_numpy.
 */
#ifndef HURRAY_PY_INTEROP_NUMPY_H
#define HURRAY_PY_INTEROP_NUMPY_H

#include "util/state.h"

PyObject *hrpy_tensor_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *hrpy_tensor_array_interface(PyObject *self, void *closure);
PyObject *hrpy_tensor_array_struct(PyObject *self, void *closure);
PyObject *hrpy_from_numpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);

#endif /* HURRAY_PY_INTEROP_NUMPY_H */
