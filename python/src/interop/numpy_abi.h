/*
 * interop/numpy_abi.h - the parts of NumPy's stable ABI this extension uses,
 * declared here so that nothing is compiled against NumPy.
 */
#ifndef HURRAY_PY_INTEROP_NUMPY_ABI_H
#define HURRAY_PY_INTEROP_NUMPY_ABI_H

#include "util/state.h"

/* NumPy's PyArrayInterface (__array_struct__), stable since NumPy 1.x. */
typedef struct {
  int two; /* 2: contents are valid */
  int nd;
  char typekind;
  int itemsize;
  int flags;
  Py_intptr_t *shape;
  Py_intptr_t *strides;
  void *data;
  PyObject *descr;
} HrpyArrayInterface;

/* NumPy array flags (the same bits in PyArrayInterface.flags). */
enum {
  HRPY_NPY_C_CONTIGUOUS = 0x0001,
  HRPY_NPY_F_CONTIGUOUS = 0x0002,
  HRPY_NPY_ALIGNED = 0x0100,
  HRPY_NPY_NOTSWAPPED = 0x0200,
  HRPY_NPY_WRITEABLE = 0x0400,
  HRPY_NPY_ARR_HAS_DESCR = 0x0800,
};

#endif /* HURRAY_PY_INTEROP_NUMPY_ABI_H */
