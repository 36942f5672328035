/*
 * module/tensor_class.h - the Python class hurray.Tensor (top layer, module/; see
 * tensor_class.c).
 */
#ifndef HURRAY_PY_MODULE_TENSOR_CLASS_H
#define HURRAY_PY_MODULE_TENSOR_CLASS_H

#include "util/state.h"

/* Creates hurray.Tensor into st->core->TensorType and adds it (and the module
 * functions of this file) to module m. */
int hrpy_tensor_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_MODULE_TENSOR_CLASS_H */
