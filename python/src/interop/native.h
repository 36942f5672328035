/*
 * interop/native.h - the native protocol (layer 3): Tensor.__hurray__ and
 * hurray.from_hurray, over the C ABI's buffer lists and tensor contexts.
 */
#ifndef HURRAY_PY_INTEROP_NATIVE_H
#define HURRAY_PY_INTEROP_NATIVE_H

#include "util/state.h"

PyObject *hrpy_tensor_hurray(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);
PyObject *hrpy_from_hurray(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);

#endif /* HURRAY_PY_INTEROP_NATIVE_H */
