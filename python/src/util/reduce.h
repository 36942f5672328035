/*
 * util/reduce.h - pickling value objects whose constructor takes what their
 * getters return (layer 0): the layout classes, Statistics, Shard.
 */
#ifndef HURRAY_PY_UTIL_REDUCE_H
#define HURRAY_PY_UTIL_REDUCE_H

#include "util/state.h"

/*
 * A __reduce__ result that rebuilds `self` by calling its exact type with
 * the value of each attribute in `names` (NULL-terminated): positionally
 * ((type, (values...))), or, when `keywords`, by name through
 * copyreg.__newobj_ex__ (type.__new__(type, **{name: value})), for
 * keyword-only constructors. New reference, or NULL with an exception set.
 */
PyObject *hrpy_reduce_by_attrs(PyObject *self, const char *const *names, bool keywords);

#endif /* HURRAY_PY_UTIL_REDUCE_H */
