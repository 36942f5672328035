/*
 * errors.c - the exception classes of hurray (DECISIONS D9) and the one
 * function that turns a C status into a Python exception.
 *
 * The class of each status comes from the status table's Python column
 * (HURRAY_STATUS_TABLE in include/hurray/status.h); nothing else in the
 * extension decides which exception a C status becomes.
 */
#include "hrpy.h"

#include <stdarg.h>

/* The status table's Python column names a class; map each name to an object. */
#define HRPY_EXC_None(st) ((st)->InternalError)
#define HRPY_EXC_InvalidDescriptorError(st) ((st)->InvalidDescriptorError)
#define HRPY_EXC_BufferError(st) ((st)->BufferError)
#define HRPY_EXC_UnsupportedError(st) ((st)->UnsupportedError)
#define HRPY_EXC_InternalError(st) ((st)->InternalError)
#define HRPY_EXC_FileError(st) ((st)->FileError)
#define HRPY_EXC_StreamError(st) ((st)->StreamError)
#define HRPY_EXC_IndexError(st) PyExc_IndexError
#define HRPY_EXC_KeyError(st) PyExc_KeyError
#define HRPY_EXC_ValueError(st) PyExc_ValueError
#define HRPY_EXC_MemoryError(st) PyExc_MemoryError

PyObject *hrpy_exception_for(HrpyState *st, HurrayStatus status) {
  switch (status) {
#define HRPY_X_(name, value, msg, pyexc) \
  case HURRAY_##name:                   \
    return HRPY_EXC_##pyexc(st);
    HURRAY_STATUS_TABLE(HRPY_X_)
#undef HRPY_X_
    default:
      return st->InternalError;
  }
}

PyObject *hrpy_raise(PyObject *exc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
  va_end(ap);
  if (msg == NULL) return NULL;
  PyErr_SetObject(exc, msg);
  Py_DECREF(msg);
  return NULL;
}

PyObject *hrpy_raise_status(HrpyState *st, HurrayStatus status, const HurrayError *err,
                           const char *context) {
  return hrpy_raise_status_as(st, hrpy_exception_for(st, status), status, err, context);
}

PyObject *hrpy_raise_status_as(HrpyState *st, PyObject *exc, HurrayStatus status,
                              const HurrayError *err, const char *context) {
  (void)st;
  bool detail = err != NULL && err->status == status && err->message[0] != '\0';
  const char *text = detail ? err->message : hurray_status_message(status);
  PyObject *msg = context != NULL && context[0] != '\0'
                      ? PyUnicode_FromFormat("%s: %s", context, text)
                      : PyUnicode_FromString(text);
  if (msg == NULL) return NULL;
  PyObject *inst = PyObject_CallOneArg(exc, msg);
  Py_DECREF(msg);
  if (inst == NULL) return NULL;
  /* Built-in classes without a __dict__ (IndexError, MemoryError) take no
   * attributes; the message still carries the detail. */
  if (PyObject_HasAttrString(inst, "__dict__")) {
    PyObject *name = PyUnicode_FromString(hurray_status_name(status));
    PyObject *field = detail && err->field[0] != '\0' ? PyUnicode_FromString(err->field)
                                                      : Py_NewRef(Py_None);
    PyObject *offset = detail && err->offset != HURRAY_NO_OFFSET
                           ? PyLong_FromUnsignedLongLong(err->offset)
                           : Py_NewRef(Py_None);
    if (name == NULL || field == NULL || offset == NULL ||
        PyObject_SetAttrString(inst, "status", name) < 0 ||
        PyObject_SetAttrString(inst, "field", field) < 0 ||
        PyObject_SetAttrString(inst, "offset", offset) < 0) {
      Py_XDECREF(name);
      Py_XDECREF(field);
      Py_XDECREF(offset);
      Py_DECREF(inst);
      return NULL;
    }
    Py_DECREF(name);
    Py_DECREF(field);
    Py_DECREF(offset);
  }
  PyErr_SetObject((PyObject *)Py_TYPE(inst), inst);
  Py_DECREF(inst);
  return NULL;
}

void hrpy_error_drop_offset(HurrayError *err) {
  if (err->offset == HURRAY_NO_OFFSET) return;
  err->offset = HURRAY_NO_OFFSET;
  char *at = strstr(err->message, " at byte ");
  if (at == NULL) return;
  char *colon = strstr(at, ": ");
  if (colon == NULL) return;
  memmove(at, colon, strlen(colon) + 1);
}

PyObject *hrpy_raise_rule(HrpyState *st, HurrayStatus status, const char *field,
                         const char *context, const char *fmt, ...) {
  HurrayError err;
  hurray_error_clear(&err);
  err.status = status;
  PyOS_snprintf(err.field, sizeof err.field, "%s", field != NULL ? field : "");
  va_list ap;
  va_start(ap, fmt);
  PyOS_vsnprintf(err.message, sizeof err.message, fmt, ap);
  va_end(ap);
  return hrpy_raise_status(st, status, &err, context);
}

static int add_exc(PyObject *m, PyObject **slot, const char *qualname, const char *doc,
                   PyObject *base) {
  /* status, field and offset default to None at class level, so every
   * instance has them, also one raised with a message only */
  PyObject *dict = Py_BuildValue("{sOsOsO}", "status", Py_None, "field", Py_None, "offset",
                                 Py_None);
  if (dict == NULL) return -1;
  *slot = PyErr_NewExceptionWithDoc(qualname, doc, base, dict);
  Py_DECREF(dict);
  if (*slot == NULL) return -1;
  const char *dot = strrchr(qualname, '.');
  return PyModule_AddObjectRef(m, dot != NULL ? dot + 1 : qualname, *slot);
}

int hrpy_errors_init(PyObject *m, HrpyState *st) {
  if (add_exc(m, &st->InvalidDescriptorError, "hurray.InvalidDescriptorError",
              "A descriptor (or a value meant to become one) breaks a rule of the "
              "Hurray format.\n\nSubclass of ValueError. Instances raised from the C "
              "library carry `status`, `field` and `offset` attributes.",
              PyExc_ValueError) < 0)
    return -1;
  if (add_exc(m, &st->BufferError, "hurray.BufferError",
              "A buffer is too small, misaligned, or cannot be used as asked.\n\n"
              "Subclass of ValueError. Distinct from the built-in BufferError, which "
              "the DLPack protocol uses.",
              PyExc_ValueError) < 0)
    return -1;
  if (add_exc(m, &st->CopyRequiredError, "hurray.CopyRequiredError",
              "copy=False was requested but the conversion needs a copy.\n\n"
              "Subclass of ValueError, as NumPy expects from __array__(copy=False).",
              PyExc_ValueError) < 0)
    return -1;
  if (add_exc(m, &st->UnsupportedError, "hurray.UnsupportedError",
              "The element type, layout, device or operation is not supported here.\n\n"
              "Subclass of NotImplementedError.",
              PyExc_NotImplementedError) < 0)
    return -1;
  if (add_exc(m, &st->InternalError, "hurray.InternalError",
              "An internal failure of the C library (a bug: please report it).\n\n"
              "Subclass of RuntimeError.",
              PyExc_RuntimeError) < 0)
    return -1;
  if (add_exc(m, &st->FileError, "hurray.FileError",
              "A .hrry file could not be read or written.\n\nSubclass of OSError.",
              PyExc_OSError) < 0)
    return -1;
  if (add_exc(m, &st->StreamError, "hurray.StreamError",
              "A Hurray stream is malformed, truncated, or over a reader limit.\n\n"
              "Subclass of OSError.",
              PyExc_OSError) < 0)
    return -1;
  return 0;
}
