/*
 * core/buffer_handle.h - hurray.BufferHandle: one entry of a descriptor's
 * buffer table, as read-only metadata (layer 1).
 */
#ifndef HURRAY_PY_CORE_BUFFER_HANDLE_H
#define HURRAY_PY_CORE_BUFFER_HANDLE_H

#include "util/state.h"

int hrpy_buffer_handle_init(PyObject *m, HrpyState *st);
/* New BufferHandle for entry `index`; `device` is the tensor's Device object
 * (borrowed; the handle keeps its own reference). */
PyObject *hrpy_buffer_handle_new(HrpyState *st, uint32_t index, const HurrayBufferHandle *h,
                                 PyObject *device);
/* Tuple of handles for a descriptor (new reference). */
PyObject *hrpy_buffer_handles_tuple(HrpyState *st, const HurrayDescriptorFields *f,
                                    PyObject *device);

#endif /* HURRAY_PY_CORE_BUFFER_HANDLE_H */
