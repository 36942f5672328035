/*
 * types/composite.h - hurray.Composite: a head descriptor that owns no
 * buffers, plus its members, each a hurray.Tensor or a nested Composite
 * (layer 2).
 */
#ifndef HURRAY_PY_TYPES_COMPOSITE_H
#define HURRAY_PY_TYPES_COMPOSITE_H

#include "util/state.h"
#include "types/state.h"

int hrpy_composite_init(PyObject *m, HrpyState *st);
static inline int hrpy_composite_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->types->CompositeType);
}
/*
 * A Composite from a head descriptor (moved: destroyed on failure) and a
 * tuple of members (borrowed; the composite takes its own reference), as a
 * stream or file reader has them. Overlay members without a role section get
 * theirs by position (0 base, the rest correction); a member that carries one
 * keeps it. The whole tree is checked by the C composite validator.
 */
PyObject *hrpy_composite_from_head(HrpyState *st, HurrayDescriptor *head, PyObject *members,
                                   const char *context);
/* hrpy_composite_from_head for a reader: the head a copy of `head`
 * (borrowed), member k (k < n) built by member(ctx, k) (a new reference, or
 * NULL with an exception set). */
PyObject *hrpy_composite_read(HrpyState *st, const HurrayDescriptor *head, uint32_t n,
                              PyObject *(*member)(void *ctx, uint32_t k), void *ctx,
                              const char *context);
/* The head descriptor of a Composite `c` (borrowed, immutable). */
const HurrayDescriptor *hrpy_composite_head(PyObject *c);
/* Member count, and member i (borrowed: a Tensor or a Composite). */
uint32_t hrpy_composite_count(PyObject *c);
PyObject *hrpy_composite_member(PyObject *c, uint32_t i);
/* The descriptor member i presents to its composite (borrowed). */
const HurrayDescriptor *hrpy_composite_member_descriptor(HrpyState *st, PyObject *c, uint32_t i);

#endif /* HURRAY_PY_TYPES_COMPOSITE_H */
