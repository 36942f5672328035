/*
 * core/device.h - hurray.Device: a device kind, a memory class and a runtime
 * device id (layer 1).
 */
#ifndef HURRAY_PY_CORE_DEVICE_H
#define HURRAY_PY_CORE_DEVICE_H

#include "util/state.h"
#include "core/state.h"

int hrpy_device_init(PyObject *m, HrpyState *st);
/* A Device (new reference); hurray.device.cpu for (CPU, standard, 0). */
PyObject *hrpy_device_new(HrpyState *st, uint8_t tag, uint8_t memory_class, int32_t device_id);
static inline int hrpy_device_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->core->DeviceType);
}
/* The fields of a Device (`dev` must be one): the device tag (buffer handle
 * byte 12), the memory class (byte 14), the runtime id (not on the wire). */
uint8_t hrpy_device_tag(PyObject *dev);
uint8_t hrpy_device_memory_class(PyObject *dev);
int32_t hrpy_device_id(PyObject *dev);

#endif /* HURRAY_PY_CORE_DEVICE_H */
