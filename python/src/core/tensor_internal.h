/*
 * core/tensor_internal.h - the hurray.Tensor object struct, private to the
 * files of core/ that implement it (core/tensor.c: the object, its accessors
 * and lifetime; core/build.c: construction). Every other file reaches a
 * tensor through core/tensor.h.
 */
#ifndef HURRAY_PY_CORE_TENSOR_INTERNAL_H
#define HURRAY_PY_CORE_TENSOR_INTERNAL_H

#include "core/tensor.h"

struct HrpyTensor {
  PyObject_HEAD
  /* owned; immutable. NULL for a tensor built by hrpy_tensor_new_dense until
   * something needs the descriptor itself (hrpy_tensor_desc builds it then). */
  HurrayDescriptor *desc;
  /* The fields: borrowed views into desc, or, for a lazily described tensor,
   * into the tail of the `bufs` block (its one handle and its shape), filled
   * exactly as hurray_descriptor_fields would fill them. */
  HurrayDescriptorFields f;
  PyObject *dtype;   /* Dtype singleton */
  PyObject *device;  /* Device */
  PyObject *handles; /* cached tuple of BufferHandle, or NULL */
  PyObject *weakreflist;
  uint32_t nbuf;
  HrpyBuffer *bufs;  /* nbuf entries (PyMem) */
};

#define T(o) ((HrpyTensor *)(o))

#endif /* HURRAY_PY_CORE_TENSOR_INTERNAL_H */
