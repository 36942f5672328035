/*
 * util/state.h - the module state of hurray._hurray and how to reach it.
 *
 * Every class is a heap type created with PyType_FromModuleAndSpec, so the
 * state of the module that defined an object's exact type is one call away
 * (hrpy_state_of). No class is subclassable except hurray.Layout, which is
 * not instantiable: PyType_GetModule on an instance's exact type always finds
 * this module's state.
 *
 * Layer 0 (util/): included by every file of the extension. The fields are
 * filled by the init function of the file that owns each class (named beside
 * each field) and cleared by module/module.c.
 */
#ifndef HURRAY_PY_UTIL_STATE_H
#define HURRAY_PY_UTIL_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "hurray/hurray.h"


typedef struct HrpyState {
  /* classes */
  PyTypeObject *DtypeType;          /* core/dtype.c */
  PyTypeObject *DeviceType;         /* core/device.c */
  PyTypeObject *TensorType;         /* module/tensor_class.c (object: core/tensor.c) */
  PyTypeObject *BufferHandleType;   /* types/buffer_handle.c */
  PyTypeObject *DescriptorType;     /* types/descriptor.c */
  PyTypeObject *LayoutType;         /* types/layout.c: hurray.Layout, the base */
  /* The layout subclasses (types/layout_types.c): `layout_classes` owns them
   * (a tuple); LayoutByTag[tag] is the class of each named tag it binds, and
   * the two catch-all classes are kept apart (all three borrowed). */
  PyObject *layout_classes;
  PyTypeObject *LayoutByTag[256];
  PyTypeObject *PrivateLayoutType;  /* hurray.PrivateExtensionLayout */
  PyTypeObject *UnknownLayoutType;  /* hurray.UnknownLayout */
  /* The quantization classes (types/quant.c), owned by `quant_classes` (a
   * tuple): QuantByScheme[tag] for each bound scheme, OpaqueQuantType for
   * the rest (borrowed). */
  PyObject *quant_classes;
  PyTypeObject *QuantByScheme[256];
  PyTypeObject *OpaqueQuantType;
  PyTypeObject *StatisticsType;     /* types/sections.c */
  PyTypeObject *ShardType;          /* types/sections.c */
  PyTypeObject *CompositeType;      /* types/composite.c */
  PyTypeObject *FileType;           /* io/file.c: hurray.File */
  PyTypeObject *TensorSliceType;    /* io/slice.c: hurray.TensorSlice (File.get_slice) */
  PyTypeObject *StreamReaderType;   /* io/stream.c */
  PyTypeObject *StreamWriterType;   /* io/stream.c */
  PyTypeObject *BufferExporterType; /* interop/pickle.c: a tensor buffer for PickleBuffer */
  /* exceptions (util/errors.c; docs/decisions.md, "Exceptions") */
  PyObject *InvalidDescriptorError;
  PyObject *BufferError;
  PyObject *UnsupportedError;
  PyObject *InternalError;
  PyObject *FileError;
  PyObject *StreamError;
  PyObject *CopyRequiredError;
  /* FileError and the built-in FileNotFoundError / PermissionError at once:
   * a file that is missing or may not be opened (util/errors.c) */
  PyObject *FileNotFoundError;
  PyObject *PermissionError;
  /* Dtype singletons by wire tag (core/dtype.c); private (extension) tags
   * are created on first use. NULL for tags that name no type. */
  PyObject *dtypes[256];
  /* hurray.device.cpu: the default device of every tensor (core/device.c) */
  PyObject *cpu;
  /* Lazily imported helpers (NULL until first use; util/runtime.c). */
  PyObject *numpy;             /* the numpy module */
  /* numpy.dtype objects by wire tag, made on first use by __array_struct__
   * (interop/numpy.c; NULL until then, and for tags NumPy has no type for) */
  PyObject *np_dtypes[256];
  PyObject *ndarray_type;      /* numpy.ndarray, once from_numpy met one (interop/ndarray.c) */
  int nd_header;               /* interop/ndarray.c: 1 header layout proven, -1 not, 0 unknown */
  PyObject *simple_namespace;  /* types.SimpleNamespace */
  /* What the Python package lends the extension, registered once when the
   * package is imported (hurray/__init__.py calls _hurray._register_hooks;
   * module/module.c): the extension imports no module of the package. NULL
   * until then: repr falls back to a plain form, to_scipy says so. */
  PyObject *hook_tensor_repr;    /* hurray._display.tensor_repr */
  PyObject *hook_tensor_str;     /* hurray._display.tensor_str */
  PyObject *hook_composite_repr; /* hurray._display.composite_repr */
  PyObject *hook_to_scipy;       /* hurray._sparse.to_scipy */
  /* interned strings (module/module.c) */
  PyObject *s_dlpack;          /* "__dlpack__" */
  PyObject *s_max_version;
  PyObject *s_copy;
  PyObject *s_dl_device;
  PyObject *s_array_struct;    /* "__array_struct__" */
} HrpyState;

/* State of the module that defined the exact type of `self`. */
static inline HrpyState *hrpy_state_of(PyObject *self) {
  return (HrpyState *)PyType_GetModuleState(Py_TYPE(self));
}
static inline HrpyState *hrpy_state_of_type(PyTypeObject *type) {
  return (HrpyState *)PyType_GetModuleState(type);
}
static inline HrpyState *hrpy_state_of_module(PyObject *module) {
  return (HrpyState *)PyModule_GetState(module);
}

#endif /* HURRAY_PY_UTIL_STATE_H */
