/*
 * core/state.h - what the core layer keeps in the module state: its classes
 * and the values every tensor shares.
 *
 * Layer 1 (core/). The module state (util/state.h) holds a pointer to this
 * part (st->core); module/module.c allocates every layer's part in the one
 * block CPython gives the module, and calls hrpy_core_state_traverse/_clear.
 */
#ifndef HURRAY_PY_CORE_STATE_H
#define HURRAY_PY_CORE_STATE_H

#include "util/state.h"

struct HrpyCoreState {
  PyTypeObject *DtypeType;        /* core/dtype.c */
  PyTypeObject *DeviceType;       /* core/device.c */
  /* hurray.Tensor: the object is the core's (core/tensor.c); the class users
   * see is assembled on top of it (module/tensor_class.c), which fills this */
  PyTypeObject *TensorType;
  PyTypeObject *BufferHandleType; /* core/buffer_handle.c */
  /* Dtype singletons by wire tag (core/dtype.c); private (extension) tags
   * are created on first use. NULL for tags that name no type. */
  PyObject *dtypes[256];
  /* hurray.device.cpu: the default device of every tensor (core/device.c) */
  PyObject *cpu;
};

static inline int hrpy_core_state_traverse(HrpyCoreState *s, visitproc visit, void *arg) {
  if (s == NULL) return 0;
  Py_VISIT(s->DtypeType);
  Py_VISIT(s->DeviceType);
  Py_VISIT(s->TensorType);
  Py_VISIT(s->BufferHandleType);
  for (int i = 0; i < 256; i++) Py_VISIT(s->dtypes[i]);
  Py_VISIT(s->cpu);
  return 0;
}

static inline void hrpy_core_state_clear(HrpyCoreState *s) {
  if (s == NULL) return;
  Py_CLEAR(s->DtypeType);
  Py_CLEAR(s->DeviceType);
  Py_CLEAR(s->TensorType);
  Py_CLEAR(s->BufferHandleType);
  for (int i = 0; i < 256; i++) Py_CLEAR(s->dtypes[i]);
  Py_CLEAR(s->cpu);
}

#endif /* HURRAY_PY_CORE_STATE_H */
