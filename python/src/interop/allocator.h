/*
 * interop/allocator.h - a 64-byte aligned NumPy data allocator (NEP 49)
 * (layer 3).
 */
#ifndef HURRAY_PY_INTEROP_ALLOCATOR_H
#define HURRAY_PY_INTEROP_ALLOCATOR_H

#include "util/state.h"

/* _aligned_mem_handler(): the "mem_handler" capsule of the aligned allocator. */
PyObject *hrpy_aligned_mem_handler(PyObject *m, PyObject *unused);
/* Installs a NEP 49 handler capsule (None: NumPy's default) for the current
 * context; returns the previous one. hurray.UnsupportedError before 1.22. */
PyObject *hrpy_numpy_set_handler(PyObject *m, PyObject *handler);

#endif /* HURRAY_PY_INTEROP_ALLOCATOR_H */
