/*
 * types/layout.h - hurray.Layout and its subclasses (layer 2): immutable
 * layout values. types/layout.c is the base (value, equality, hashing, shape
 * validation, and the getters, repr and pickling of every subclass from
 * libhurray's table hurray_layout_info); types/layout_types.c the subclasses
 * and their one constructor; types/block_paged.c BlockPagedLayout's methods.
 */
#ifndef HURRAY_PY_TYPES_LAYOUT_H
#define HURRAY_PY_TYPES_LAYOUT_H

#include "util/state.h"
#include "types/state.h"


/* Creates hurray.Layout (the base) into st->types->LayoutType (types/layout.c). */
int hrpy_layout_init(PyObject *m, HrpyState *st);
/* The getter of every field of a subclass: `closure` is the field's entry
 * in hurray_layout_info(tag)->fields (a PyGetSetDef closure). */
PyObject *hrpy_layout_field_get(PyObject *obj, void *closure);
/* Creates the subclasses (types/layout_types.c: one entry of its class table
 * per layout) into st->types->layout_classes and st->types->LayoutByTag; after
 * hrpy_layout_init. */
int hrpy_layout_types_init(PyObject *m, HrpyState *st);

static inline int hrpy_layout_check(HrpyState *st, PyObject *o) {
  return PyObject_TypeCheck(o, st->types->LayoutType);
}
/* The value of a layout object (`obj` must be one; borrowed, immutable): its
 * arrays have hrpy_layout_rank(obj) entries. */
const HurrayLayout *hrpy_layout_value(PyObject *obj);
/* Entries of the per-dimension arrays (strided, tiled, morton, csf); 0 for
 * the other layouts. */
uint32_t hrpy_layout_rank(PyObject *obj);
/* True for the layouts with per-dimension arrays. */
bool hrpy_layout_has_arrays(uint8_t tag);
/* A new layout object of class `type` holding a deep copy of `src`, whose
 * per-dimension arrays have `n` entries. */
PyObject *hrpy_layout_new(HrpyState *st, PyTypeObject *type, const HurrayLayout *src,
                          uint32_t n);
/* The layout of a descriptor as an object of the class the getters return
 * (new reference). */
PyObject *hrpy_layout_object(HrpyState *st, const HurrayDescriptorFields *f);
/* The class the layout getter returns for a tag: the named subclass,
 * PrivateExtensionLayout, UnknownLayout, or the bare base for a named tag
 * this build does not bind. Borrowed. */
PyTypeObject *hrpy_layout_class_for_tag(HrpyState *st, uint8_t tag);
/*
 * The layout of `obj` (a hurray.Layout) for a tensor of rank `rank`, in *out
 * (borrowed from obj). The shape tier's one check the C library cannot make
 * on raw arrays: per-dimension arrays must have `rank` entries
 * (InvalidDescriptorError naming `context`).
 */
int hrpy_layout_for_rank(HrpyState *st, PyObject *obj, uint32_t rank, HurrayLayout *out,
                         const char *context);
/* Shape-tier validation of `obj` against a shape (dynamic dimensions
 * allowed): what Layout.validate_against_shape and Tensor share. */
int hrpy_layout_validate_shape(HrpyState *st, PyObject *obj, uint32_t rank,
                               const uint64_t *shape, const char *context);

#endif /* HURRAY_PY_TYPES_LAYOUT_H */
