/*
 * types/creation.h - tensors whose buffer this module allocates: zeros, ones,
 * empty, full, their *_like forms, arange, linspace, eye (layer 2).
 */
#ifndef HURRAY_PY_TYPES_CREATION_H
#define HURRAY_PY_TYPES_CREATION_H

#include "util/state.h"

PyObject *hrpy_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_ones(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_zeros_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_ones_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *hrpy_empty_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_full_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *hrpy_arange(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_linspace(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
PyObject *hrpy_eye(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

#endif /* HURRAY_PY_TYPES_CREATION_H */
