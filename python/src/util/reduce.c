/*
 * util/reduce.c - pickling value objects through their constructor
 * (util/reduce.h).
 */
#include "util/reduce.h"

PyObject *hrpy_reduce_by_attrs(PyObject *self, const char *const *names, bool keywords) {
  Py_ssize_t n = 0;
  while (names[n] != NULL) n++;
  PyObject *values = keywords ? PyDict_New() : PyTuple_New(n);
  if (values == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = PyObject_GetAttrString(self, names[i]);
    if (v == NULL) {
      Py_DECREF(values);
      return NULL;
    }
    if (!keywords) {
      PyTuple_SET_ITEM(values, i, v);
      continue;
    }
    int rc = v == Py_None ? 0 : PyDict_SetItemString(values, names[i], v);
    Py_DECREF(v);
    if (rc < 0) {
      Py_DECREF(values);
      return NULL;
    }
  }
  PyObject *type = (PyObject *)Py_TYPE(self);
  if (!keywords) return Py_BuildValue("(ON)", type, values);
  PyObject *copyreg = PyImport_ImportModule("copyreg");
  PyObject *fn = copyreg != NULL ? PyObject_GetAttrString(copyreg, "__newobj_ex__") : NULL;
  Py_XDECREF(copyreg);
  if (fn == NULL) {
    Py_DECREF(values);
    return NULL;
  }
  return Py_BuildValue("(N(O()N))", fn, type, values);
}
