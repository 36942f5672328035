/*
 * util/runtime.h - the interpreter around the extension (layer 0).
 */
#ifndef HURRAY_PY_UTIL_RUNTIME_H
#define HURRAY_PY_UTIL_RUNTIME_H

#include "util/state.h"

/* True when the interpreter can no longer take a reference drop from this
 * thread (not initialized, or finalizing while this thread lacks the GIL). */
bool hrpy_interpreter_gone(void);

/* Drops a strong reference (`obj`, a PyObject *) from any thread, taking the
 * GIL itself; leaks it deliberately when hrpy_interpreter_gone(). Shaped as a
 * C callback (HurrayOwnerReleaseFn). NULL-safe. */
void hrpy_release_object(void *obj);

/* tp_dealloc of a heap type whose objects hold no reference and no memory of
 * their own (Dtype, Device, Statistics). */
void hrpy_plain_dealloc(PyObject *o);

/* Capsule destructors (and C callbacks) run while an exception may be
 * pending and cannot return one. hrpy_dtor_begin sets the pending one aside;
 * hrpy_dtor_end reports whatever the destructor's own work raised through
 * sys.unraisablehook (PyErr_WriteUnraisable, naming `obj`), never clearing it
 * silently, then puts the pending one back. */
typedef struct HrpySavedError {
  PyObject *type, *value, *tb;
} HrpySavedError;
static inline void hrpy_dtor_begin(HrpySavedError *saved) {
  PyErr_Fetch(&saved->type, &saved->value, &saved->tb);
}
static inline void hrpy_dtor_end(HrpySavedError *saved, PyObject *obj) {
  if (PyErr_Occurred()) PyErr_WriteUnraisable(obj);
  PyErr_Restore(saved->type, saved->value, saved->tb);
}

/* A lazily imported module (`attr` NULL) or one of its attributes, cached in
 * `slot` (a field of the module state) on first success; borrowed. NULL with
 * the exception set when the import or the lookup fails (nothing cached, so a
 * later call tries again). Safe from any number of threads. */
PyObject *hrpy_lazy_attr(PyObject **slot, const char *module, const char *attr);

/* The numpy module (borrowed from the state cache), imported on first use;
 * NULL with ImportError set when NumPy is not installed. */
PyObject *hrpy_numpy(HrpyState *st);

#endif /* HURRAY_PY_UTIL_RUNTIME_H */
