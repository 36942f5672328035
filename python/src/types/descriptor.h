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

/* The properties a hurray.Tensor and its hurray.Descriptor read alike from
 * their fields: one getter per class, calling hrpy_field_get with the
 * closure, and one list of entries (HRPY_FIELD_GETSETS) with their docs. */
enum {
  HRPY_FIELD_SHAPE = 1,
  HRPY_FIELD_NDIM,
  HRPY_FIELD_SIZE,
  HRPY_FIELD_LAYOUT,
  HRPY_FIELD_BUFFER_COUNT,
  HRPY_FIELD_QUANTIZATION,
  HRPY_FIELD_SHARD,
  HRPY_FIELD_STATISTICS,
  HRPY_FIELD_BYTE_OFFSET
};
PyObject *hrpy_field_get(HrpyState *st, const HurrayDescriptorFields *f, void *which);
#define HRPY_FIELD_GETSET_(name, which, doc, getter) \
  {name, getter, NULL, doc, (void *)(intptr_t)(which)}
#define HRPY_FIELD_GETSETS(getter)                                                            \
  HRPY_FIELD_GETSET_("shape", HRPY_FIELD_SHAPE, "Shape tuple; None for a dynamic dimension.",  \
                     getter),                                                                 \
  HRPY_FIELD_GETSET_("ndim", HRPY_FIELD_NDIM, "Rank.", getter),                                \
  HRPY_FIELD_GETSET_("size", HRPY_FIELD_SIZE,                                                  \
                     "Element count, or None if a dimension is dynamic.", getter),             \
  HRPY_FIELD_GETSET_("layout", HRPY_FIELD_LAYOUT,                                              \
                     "The layout (a hurray.Layout subclass; a fresh, equal object each time).", \
                     getter),                                                                 \
  HRPY_FIELD_GETSET_("buffer_count", HRPY_FIELD_BUFFER_COUNT,                                  \
                     "Number of entries in the buffer table.", getter),                        \
  HRPY_FIELD_GETSET_("quantization", HRPY_FIELD_QUANTIZATION,                                  \
                     "The quantization section (an object of the class Tensor's constructor "  \
                     "takes, equal to the one given), or None.",                               \
                     getter),                                                                 \
  HRPY_FIELD_GETSET_("shard", HRPY_FIELD_SHARD, "The shard section (a hurray.Shard), or None.", \
                     getter),                                                                 \
  HRPY_FIELD_GETSET_("statistics", HRPY_FIELD_STATISTICS,                                      \
                     "The statistics section (a hurray.Statistics), or None.", getter),        \
  HRPY_FIELD_GETSET_("byte_offset", HRPY_FIELD_BYTE_OFFSET,                                    \
                     "Byte offset of element [0, ..., 0] in buffer 0.", getter)

#endif /* HURRAY_PY_TYPES_DESCRIPTOR_H */
