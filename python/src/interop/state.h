/*
 * interop/state.h - what the interop layer keeps in the module state: the
 * pickling buffer class, what it learned of NumPy, and interned names.
 *
 * Layer 3 (interop/). Reached as st->interop (util/state.h); allocated,
 * traversed and cleared by module/module.c through the functions below.
 */
#ifndef HURRAY_PY_INTEROP_STATE_H
#define HURRAY_PY_INTEROP_STATE_H

#include "util/state.h"

struct HrpyInteropState {
  PyTypeObject *BufferExporterType; /* interop/pickle.c: a tensor buffer for PickleBuffer */
  /* numpy.dtype objects by wire tag, made on first use by __array_struct__
   * (interop/numpy.c; NULL until then, and for tags NumPy has no type for) */
  PyObject *np_dtypes[256];
  PyObject *ndarray_type;     /* numpy.ndarray, once from_numpy met one (interop/ndarray.c) */
  int nd_header;              /* interop/ndarray.c: 1 header layout proven, -1 not, 0 unknown */
  PyObject *simple_namespace; /* types.SimpleNamespace (interop/numpy.c) */
  /* interned names of the DLPack and NumPy protocols (module/module.c) */
  PyObject *s_dlpack;         /* "__dlpack__" */
  PyObject *s_max_version;
  PyObject *s_copy;
  PyObject *s_dl_device;
  PyObject *s_array_struct;   /* "__array_struct__" */
};

static inline int hrpy_interop_state_traverse(HrpyInteropState *s, visitproc visit, void *arg) {
  if (s == NULL) return 0;
  Py_VISIT(s->BufferExporterType);
  for (int i = 0; i < 256; i++) Py_VISIT(s->np_dtypes[i]);
  Py_VISIT(s->ndarray_type);
  Py_VISIT(s->simple_namespace);
  return 0;
}

static inline void hrpy_interop_state_clear(HrpyInteropState *s) {
  if (s == NULL) return;
  Py_CLEAR(s->BufferExporterType);
  for (int i = 0; i < 256; i++) Py_CLEAR(s->np_dtypes[i]);
  Py_CLEAR(s->ndarray_type);
  Py_CLEAR(s->simple_namespace);
  Py_CLEAR(s->s_dlpack);
  Py_CLEAR(s->s_max_version);
  Py_CLEAR(s->s_copy);
  Py_CLEAR(s->s_dl_device);
  Py_CLEAR(s->s_array_struct);
}

#endif /* HURRAY_PY_INTEROP_STATE_H */
