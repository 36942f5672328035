/*
 * util/runtime.c - the interpreter around the extension: reference drops from
 * foreign threads, and the lazily imported modules (util/runtime.h).
 */
#include "util/runtime.h"

#include "util/atomic.h"

void hrpy_plain_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  tp->tp_free(o);
  Py_DECREF(tp);
}

bool hrpy_interpreter_gone(void) {
  if (!Py_IsInitialized()) return true;
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() && !PyGILState_Check();
#else
  return _Py_IsFinalizing() && !PyGILState_Check();
#endif
}

void hrpy_release_object(void *obj) {
  if (obj == NULL) return;
  /* A finalizing interpreter cannot hand the GIL to another thread (the
   * thread would hang or be terminated): leak the reference, whose memory
   * goes with the process. */
  if (hrpy_interpreter_gone()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb); /* a caller may be unwinding an error */
  Py_DECREF((PyObject *)obj);
  PyErr_Restore(type, value, tb);
  PyGILState_Release(g);
}

PyObject *hrpy_lazy_attr(PyObject **slot, const char *module, const char *attr) {
  PyObject *v = hrpy_peek(slot);
  if (v != NULL) return v;
  PyObject *mod = PyImport_ImportModule(module);
  if (mod == NULL || attr == NULL) return hrpy_publish(slot, mod);
  v = PyObject_GetAttrString(mod, attr);
  Py_DECREF(mod);
  return hrpy_publish(slot, v);
}

PyObject *hrpy_numpy(HrpyState *st) { return hrpy_lazy_attr(&st->numpy, "numpy", NULL); }
