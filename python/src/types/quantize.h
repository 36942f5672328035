/*
 * types/quantize.h - quantizing float values into a quantized hurray.Tensor
 * and dequantizing one (layer 2): the binding of the C library's
 * hurray_quant_quantize_f32 and hurray_quant_dequantize.
 */
#ifndef HURRAY_PY_TYPES_QUANTIZE_H
#define HURRAY_PY_TYPES_QUANTIZE_H

#include "util/state.h"

/* _quantize(x, dtype, *, axis=None, block_size=None, symmetric=True,
 * scale_dtype=None, scheme=None): `x` a hurray.Tensor of float16, bfloat16,
 * float32 or float64 (hurray.quantize, python/hurray/_quantize.py, brings
 * any other input to one). Module function (METH_FASTCALL | METH_KEYWORDS). */
PyObject *hrpy_quantize(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* Tensor.dequantize(dtype=float32): a new dense row-major host tensor.
 * Method (METH_FASTCALL | METH_KEYWORDS); `self` is a hurray.Tensor. */
PyObject *hrpy_tensor_dequantize(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);

#endif /* HURRAY_PY_TYPES_QUANTIZE_H */
