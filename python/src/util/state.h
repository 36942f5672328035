/*
 * util/state.h - the module state of hurray._hurray and how to reach it.
 *
 * Every class is a heap type created with PyType_FromModuleAndSpec, so the
 * state of the module that defined an object's exact type is one call away
 * (hrpy_state_of). No class is subclassable except hurray.Layout, which is
 * not instantiable: PyType_GetModule on an instance's exact type always finds
 * this module's state.
 *
 * Layer 0 (util/): included by every file of the extension. It holds what
 * this layer needs (exceptions, lazily imported modules, the package's
 * hooks); each layer above keeps its own part in its own folder's state.h.
 * The fields are filled by the init function of the file that owns each
 * (named beside each field) and cleared by module/module.c.
 */
#ifndef HURRAY_PY_UTIL_STATE_H
#define HURRAY_PY_UTIL_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "hurray/hurray.h"


/* Each layer above keeps its own part of the state, defined in its own folder
 * (core/state.h, types/state.h, interop/state.h, io/state.h) and reached
 * through the pointers below; this layer knows their names only. */
typedef struct HrpyCoreState HrpyCoreState;
typedef struct HrpyTypesState HrpyTypesState;
typedef struct HrpyInteropState HrpyInteropState;
typedef struct HrpyIoState HrpyIoState;

typedef struct HrpyState {
  /* exceptions (util/errors.c; docs/internals/decisions.md, "Exceptions") */
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
  /* Lazily imported helpers (NULL until first use; util/runtime.c). */
  PyObject *numpy; /* the numpy module */
  /* What the Python package lends the extension, registered once when the
   * package is imported (hurray/__init__.py calls _hurray._register_hooks;
   * module/module.c): the extension imports no module of the package. NULL
   * until then: repr falls back to a plain form, to_scipy says so. */
  PyObject *hook_tensor_repr;    /* hurray._display.tensor_repr */
  PyObject *hook_tensor_str;     /* hurray._display.tensor_str */
  PyObject *hook_composite_repr; /* hurray._display.composite_repr */
  PyObject *hook_to_scipy;       /* hurray._sparse.to_scipy */
  PyObject *hook_as_tensor;      /* hurray._files.stream_item: what save takes -> Tensor */
  PyObject *hook_file_html;      /* hurray._display.file_html: File._repr_html_ (notebooks) */
  PyObject *hook_tensor_html;    /* hurray._display.tensor_html: Tensor._repr_html_ */
  /* the parts of the layers above (never NULL once the module is created) */
  HrpyCoreState *core;
  HrpyTypesState *types;
  HrpyInteropState *interop;
  HrpyIoState *io;
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
