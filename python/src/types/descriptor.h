/*
 * types/descriptor.h - hurray.Descriptor: what a tensor declares, without
 * data (layer 2).
 */
#ifndef HURRAY_PY_TYPES_DESCRIPTOR_H
#define HURRAY_PY_TYPES_DESCRIPTOR_H

#include "util/state.h"

int hrpy_descriptor_init(PyObject *m, HrpyState *st);
/* New hurray.Descriptor taking ownership of `desc` (moved: freed on failure);
 * `device` (borrowed) is the device to report, or NULL to derive it from the
 * buffer table with device_id 0. */
PyObject *hrpy_descriptor_wrap(HrpyState *st, HurrayDescriptor *desc, PyObject *device);
/* The HurrayDescriptor inside a hurray.Descriptor (borrowed), or NULL when
 * `o` is not one. */
const HurrayDescriptor *hrpy_descriptor_get(HrpyState *st, PyObject *o);
/* The wire bytes of `d` (new bytes object); `permissive` (may be NULL) is set
 * when a strict decode refuses them (relay semantics: a private or unknown
 * layout, an opaque scheme, reserved bits kept by a permissive read), so a
 * pickle's receiver decodes them the way they were built. `context` names
 * the operation in errors. */
PyObject *hrpy_descriptor_bytes(HrpyState *st, const HurrayDescriptor *d, bool *permissive,
                                const char *context);

#endif /* HURRAY_PY_TYPES_DESCRIPTOR_H */
