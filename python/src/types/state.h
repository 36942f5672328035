/*
 * types/state.h - what the types layer keeps in the module state: the
 * classes of the Python value types.
 *
 * Layer 2 (types/). Reached as st->types (util/state.h); allocated, traversed
 * and cleared by module/module.c through the functions below.
 */
#ifndef HURRAY_PY_TYPES_STATE_H
#define HURRAY_PY_TYPES_STATE_H

#include <string.h>

#include "util/state.h"

struct HrpyTypesState {
  PyTypeObject *DescriptorType; /* types/descriptor.c */
  PyTypeObject *LayoutType;     /* types/layout.c: hurray.Layout, the base */
  /* The layout subclasses (types/layout_types.c): `layout_classes` owns them
   * (a tuple); LayoutByTag[tag] is the class of each named tag it binds, and
   * the two catch-all classes are kept apart (all three borrowed). */
  PyObject *layout_classes;
  PyTypeObject *LayoutByTag[256];
  PyTypeObject *PrivateLayoutType; /* hurray.PrivateExtensionLayout */
  PyTypeObject *UnknownLayoutType; /* hurray.UnknownLayout */
  /* The quantization classes (types/quant.c), owned by `quant_classes` (a
   * tuple): QuantByScheme[tag] for each bound scheme, OpaqueQuantType for
   * the rest (borrowed). */
  PyObject *quant_classes;
  PyTypeObject *QuantByScheme[256];
  PyTypeObject *OpaqueQuantType;
  PyTypeObject *StatisticsType; /* types/sections.c */
  PyTypeObject *ShardType;      /* types/sections.c */
  PyTypeObject *CompositeType;  /* types/composite.c */
};

static inline int hrpy_types_state_traverse(HrpyTypesState *s, visitproc visit, void *arg) {
  if (s == NULL) return 0;
  Py_VISIT(s->DescriptorType);
  Py_VISIT(s->LayoutType);
  Py_VISIT(s->layout_classes);
  Py_VISIT(s->quant_classes);
  Py_VISIT(s->StatisticsType);
  Py_VISIT(s->ShardType);
  Py_VISIT(s->CompositeType);
  return 0;
}

static inline void hrpy_types_state_clear(HrpyTypesState *s) {
  if (s == NULL) return;
  Py_CLEAR(s->DescriptorType);
  Py_CLEAR(s->LayoutType);
  Py_CLEAR(s->layout_classes); /* LayoutByTag and the catch-alls borrowed from it */
  memset(s->LayoutByTag, 0, sizeof s->LayoutByTag);
  s->PrivateLayoutType = NULL;
  s->UnknownLayoutType = NULL;
  Py_CLEAR(s->quant_classes); /* QuantByScheme and OpaqueQuantType borrowed from it */
  memset(s->QuantByScheme, 0, sizeof s->QuantByScheme);
  s->OpaqueQuantType = NULL;
  Py_CLEAR(s->StatisticsType);
  Py_CLEAR(s->ShardType);
  Py_CLEAR(s->CompositeType);
}

#endif /* HURRAY_PY_TYPES_STATE_H */
