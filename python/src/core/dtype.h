/*
 * core/dtype.h - hurray.Dtype: one immutable singleton per element type
 * (layer 1).
 */
#ifndef HURRAY_PY_CORE_DTYPE_H
#define HURRAY_PY_CORE_DTYPE_H

#include "util/state.h"
#include "core/state.h"

int hrpy_dtype_init(PyObject *m, HrpyState *st);
/* The singleton for a tag (new reference); InvalidDescriptorError for tags
 * that name no type (reserved, unassigned, invalid). */
PyObject *hrpy_dtype_from_tag(HrpyState *st, uint8_t tag);
/* The same, but a reserved or unassigned tag (kept by a relay-mode decode)
 * gets a singleton named "unknown" instead of an error. */
PyObject *hrpy_dtype_relayed(HrpyState *st, uint8_t tag);
/* Accepts a Dtype or a type name; stores the tag. TypeError /
 * InvalidDescriptorError otherwise. */
int hrpy_dtype_converter(HrpyState *st, PyObject *obj, uint8_t *out_tag);
static inline int hrpy_dtype_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->core->DtypeType);
}

#endif /* HURRAY_PY_CORE_DTYPE_H */
