/*
 * interop/ndarray.h - from_numpy's fast path for an exact numpy.ndarray
 * (layer 3).
 */
#ifndef HURRAY_PY_INTEROP_NDARRAY_H
#define HURRAY_PY_INTEROP_NDARRAY_H

#include "util/state.h"

/* from_numpy for an exact numpy.ndarray in the plain case: returns true with
 * *out the tensor (or NULL with an exception set), false with nothing raised
 * when the array is not the plain case (the caller then takes the general
 * buffer-protocol path). */
bool hrpy_from_ndarray(HrpyState *st, PyObject *obj, int copy, const char *context,
                       PyObject **out);
/* _ndarray_path(mode): chooses and reports the way (tests). */
PyObject *hrpy_ndarray_path(PyObject *m, PyObject *mode);

#endif /* HURRAY_PY_INTEROP_NDARRAY_H */
