/*
 * util/errors.c - the exception classes of hurray and the one function that
 * turns a C status into a Python exception (util/errors.h).
 *
 * The hierarchy (docs/decisions.md, "Exceptions"): InvalidDescriptorError and
 * hurray.BufferError are ValueErrors, UnsupportedError a NotImplementedError,
 * InternalError a RuntimeError, FileError and StreamError OSErrors. The class
 * of each C status is decided here and nowhere else.
 */
#include "util/errors.h"

#include <stdarg.h>

PyObject *hrpy_exception_for(HrpyState *st, HurrayStatus status) {
  switch (status) {
    case HURRAY_ERR_INVALID_MAGIC:
    case HURRAY_ERR_VERSION_MISMATCH:
    case HURRAY_ERR_INVALID_LAYOUT:
    case HURRAY_ERR_INVALID_TYPE:
    case HURRAY_ERR_INVALID_SYNC_MODE:
    case HURRAY_ERR_INVALID_QUANTIZATION:
    case HURRAY_ERR_INVALID_BUFFER_TABLE:
    case HURRAY_ERR_INVALID_COMPOSITE:
    case HURRAY_ERR_INVALID_INDEX_DATA:
    case HURRAY_ERR_INVALID_STATISTICS:
    case HURRAY_ERR_INVALID_SHARD:
      return st->InvalidDescriptorError;
    case HURRAY_ERR_BUFFER_TOO_SMALL:
    case HURRAY_ERR_SYNC_MODE_MISMATCH:
    case HURRAY_ERR_BUFFER_SIZE:
    case HURRAY_ERR_MISALIGNED:
      return st->BufferError;
    case HURRAY_ERR_UNSUPPORTED:
      return st->UnsupportedError;
    case HURRAY_ERR_IO:
    case HURRAY_ERR_INVALID_FILE:
    case HURRAY_ERR_CRC_MISMATCH:
    case HURRAY_ERR_INVALID_KV:
    case HURRAY_ERR_DUPLICATE_NAME:
      return st->FileError;
    case HURRAY_ERR_STREAM:
    case HURRAY_ERR_STREAM_LIMIT:
    case HURRAY_ERR_CROSS_MACHINE:
      return st->StreamError;
    case HURRAY_ERR_INDEX_OUT_OF_BOUNDS:
      return PyExc_IndexError;
    case HURRAY_ERR_NOT_FOUND:
      return PyExc_KeyError;
    case HURRAY_ERR_INVALID_ARGUMENT:
    case HURRAY_ERR_INVALID_STATE:
      return PyExc_ValueError;
    case HURRAY_ERR_OUT_OF_MEMORY:
      return PyExc_MemoryError;
    default: /* HURRAY_OK (a bug to raise), NULL_POINTER, INTERNAL_PANIC, INTERNAL, unknown */
      return st->InternalError;
  }
}

/* The format strings reach these functions from the callers' literals; the
 * compilers cannot see that through the va_list (clang warns). */
#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif

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
    /* the reason alone (no field, offset or context), from the C library's
     * structured detail; the status's default message without one */
    PyObject *reason = PyUnicode_FromString(detail && err->reason[0] != '\0' ? err->reason : text);
    if (name == NULL || field == NULL || offset == NULL || reason == NULL ||
        PyObject_SetAttrString(inst, "status", name) < 0 ||
        PyObject_SetAttrString(inst, "field", field) < 0 ||
        PyObject_SetAttrString(inst, "offset", offset) < 0 ||
        PyObject_SetAttrString(inst, "reason", reason) < 0) {
      Py_XDECREF(name);
      Py_XDECREF(field);
      Py_XDECREF(offset);
      Py_XDECREF(reason);
      Py_DECREF(inst);
      return NULL;
    }
    Py_DECREF(name);
    Py_DECREF(field);
    Py_DECREF(offset);
    Py_DECREF(reason);
  }
  PyErr_SetObject((PyObject *)Py_TYPE(inst), inst);
  Py_DECREF(inst);
  return NULL;
}

void hrpy_error_drop_offset(HurrayError *err) {
  if (err->offset == HURRAY_NO_OFFSET) return;
  err->offset = HURRAY_NO_OFFSET;
  /* the message again from its parts, without the offset */
  if (err->field[0] != '\0')
    PyOS_snprintf(err->message, sizeof err->message, "%s: %s", err->field, err->reason);
  else
    PyOS_snprintf(err->message, sizeof err->message, "%s", err->reason);
}

PyObject *hrpy_raise_rule(HrpyState *st, HurrayStatus status, const char *field,
                         const char *context, const char *fmt, ...) {
  HurrayError err;
  hurray_error_clear(&err);
  err.status = status;
  PyOS_snprintf(err.field, sizeof err.field, "%s", field != NULL ? field : "");
  va_list ap;
  va_start(ap, fmt);
  PyOS_vsnprintf(err.reason, sizeof err.reason, fmt, ap);
  va_end(ap);
  PyOS_snprintf(err.message, sizeof err.message, "%s", err.reason);
  return hrpy_raise_status(st, status, &err, context);
}

#if defined(__clang__) || defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static int add_exc(PyObject *m, PyObject **slot, const char *qualname, const char *doc,
                   PyObject *base) {
  /* status, field, offset and reason default to None at class level, so every
   * instance has them, also one raised with a message only */
  PyObject *dict = Py_BuildValue("{sOsOsOsO}", "status", Py_None, "field", Py_None, "offset",
                                 Py_None, "reason", Py_None);
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

const char *hrpy_layout_name(uint8_t tag) {
  const char *n = hurray_layout_name(tag);
  return n != NULL ? n : "extension";
}
