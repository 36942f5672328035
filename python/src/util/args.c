/*
 * args.c - a small keyword parser for METH_FASTCALL | METH_KEYWORDS.
 */
#include "hrpy.h"

int hrpy_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, const char *const *names, int npos, int nreq,
                   PyObject **out) {
  int total = 0;
  while (names[total] != NULL) total++;
  for (int i = 0; i < total; i++) out[i] = NULL;
  if (nargs > npos) {
    if (npos == 0) {
      PyErr_Format(PyExc_TypeError, "%s() takes no positional arguments", fname);
    } else {
      PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                   fname, npos, npos == 1 ? "" : "s", nargs);
    }
    return -1;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
  if (kwnames != NULL) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; k++) {
      PyObject *key = PyTuple_GET_ITEM(kwnames, k);
      int found = -1;
      for (int i = 0; i < total; i++) {
        if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) {
          found = i;
          break;
        }
      }
      if (found < 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname,
                     key);
        return -1;
      }
      if (out[found] != NULL) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                     names[found]);
        return -1;
      }
      out[found] = args[nargs + k];
    }
  }
  for (int i = 0; i < nreq; i++) {
    if (out[i] == NULL) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
      return -1;
    }
  }
  return 0;
}

int hrpy_parse_copy(PyObject *obj, int *out) {
  if (obj == NULL || obj == Py_None) {
    *out = -1;
  } else if (obj == Py_True) {
    *out = 1;
  } else if (obj == Py_False) {
    *out = 0;
  } else {
    PyErr_Format(PyExc_TypeError, "copy must be True, False or None, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  return 0;
}

void *hrpy_arena_alloc(HrpyArena *a, size_t bytes) {
  if (a->n == a->cap) {
    size_t cap = a->cap == 0 ? 8 : a->cap * 2;
    void **b = PyMem_Realloc(a->blocks, cap * sizeof *b);
    if (b == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    a->blocks = b;
    a->cap = cap;
  }
  void *p = PyMem_Calloc(bytes > 0 ? bytes : 1u, 1);
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  a->blocks[a->n++] = p;
  return p;
}

void hrpy_arena_free(HrpyArena *a) {
  for (size_t i = 0; i < a->n; i++) PyMem_Free(a->blocks[i]);
  PyMem_Free(a->blocks);
  a->blocks = NULL;
  a->n = a->cap = 0;
}

PyObject *hrpy_fs_path(PyObject *obj) {
  PyObject *b = NULL;
  if (!PyUnicode_FSConverter(obj, &b)) return NULL;
  return b;
}
