/*
 * interop/dlpack.h - DLPack producer (Tensor.__dlpack__, __dlpack_device__),
 * consumer (hurray.from_dlpack, from_torch) and Tensor.to_torch (layer 3).
 */
#ifndef HURRAY_PY_INTEROP_DLPACK_H
#define HURRAY_PY_INTEROP_DLPACK_H

#include "util/state.h"

PyObject *hrpy_tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);
PyObject *hrpy_tensor_dlpack_device(PyObject *self, PyObject *unused);
PyObject *hrpy_tensor_to_torch(PyObject *self, PyObject *unused);
PyObject *hrpy_from_dlpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);
PyObject *hrpy_from_torch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);

#endif /* HURRAY_PY_INTEROP_DLPACK_H */
