/*
 * interop/pickle.h - pickling hurray.Tensor (layer 3): Tensor.__reduce_ex__
 * and the one function that rebuilds a tensor, hurray._hurray._rebuild_tensor.
 *
 * A tensor reduces to its encoded descriptor and its buffers and is rebuilt
 * through hrpy_tensor_from_descriptor_on, so every layout, quantization,
 * section, device declaration and sync mode is covered by construction
 * (docs/guide/processes.md). With protocol 5 each buffer travels as a
 * pickle.PickleBuffer over the tensor's own memory (out of band when the
 * pickler has a buffer_callback); below 5 it is copied into bytes.
 */
#ifndef HURRAY_PY_INTEROP_PICKLE_H
#define HURRAY_PY_INTEROP_PICKLE_H

#include "util/state.h"

/* Creates the buffer exporter type and adds _rebuild_tensor to module m. */
int hrpy_pickle_init(PyObject *m, HrpyState *st);

/* Tensor.__reduce_ex__(protocol) (METH_O) and Tensor.__reduce__ (protocol 2). */
PyObject *hrpy_tensor_reduce_ex(PyObject *self, PyObject *protocol);
PyObject *hrpy_tensor_reduce(PyObject *self, PyObject *unused);

#endif /* HURRAY_PY_INTEROP_PICKLE_H */
