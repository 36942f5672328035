/*
 * types/quant.h - the quantization classes (layer 2): PerTensorAffine,
 * PerChannelAffine, PerBlockAffine, NF4, MXFP and OpaqueQuantization, each an
 * immutable value over a parsed quantization section.
 */
#ifndef HURRAY_PY_TYPES_QUANT_H
#define HURRAY_PY_TYPES_QUANT_H

#include "util/state.h"
#include "types/state.h"

int hrpy_quant_init(PyObject *m, HrpyState *st);
static inline int hrpy_quant_check_type(HrpyState *st, PyObject *o) {
  Py_ssize_t n = PyTuple_GET_SIZE(st->types->quant_classes);
  for (Py_ssize_t i = 0; i < n; i++)
    if (Py_IS_TYPE(o, (PyTypeObject *)PyTuple_GET_ITEM(st->types->quant_classes, i))) return 1;
  return 0;
}
/* The section a quantization object holds (borrowed, immutable; `o` must be
 * one: hrpy_quant_check_type). */
const HurrayQuantization *hrpy_quant_value(PyObject *o);
/* The quantization section of a descriptor as an object, or Py_None (new
 * reference). */
PyObject *hrpy_quantization_object(HrpyState *st, const HurrayDescriptorFields *f);

#endif /* HURRAY_PY_TYPES_QUANT_H */
