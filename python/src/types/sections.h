/*
 * types/sections.h - hurray.Statistics and hurray.Shard (layer 2): immutable
 * values over the optional statistics and shard sections.
 */
#ifndef HURRAY_PY_TYPES_SECTIONS_H
#define HURRAY_PY_TYPES_SECTIONS_H

#include "util/state.h"

int hrpy_sections_init(PyObject *m, HrpyState *st);
/* New objects over a parsed section (copied); new references. */
PyObject *hrpy_statistics_new(HrpyState *st, const HurrayStatistics *s);
PyObject *hrpy_shard_new(HrpyState *st, uint32_t rank, const HurrayShard *sh);
/* The section of a descriptor as an object, or Py_None (new reference). */
PyObject *hrpy_statistics_object(HrpyState *st, const HurrayDescriptorFields *f);
PyObject *hrpy_shard_object(HrpyState *st, const HurrayDescriptorFields *f);
/* The section a Statistics / Shard object holds (borrowed, immutable; the
 * object must be of that exact type); a shard's rank in *rank. */
const HurrayStatistics *hrpy_statistics_value(PyObject *o);
const HurrayShard *hrpy_shard_value(PyObject *o, uint32_t *rank);

#endif /* HURRAY_PY_TYPES_SECTIONS_H */
