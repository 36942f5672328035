/*
 * util/errors.c - the exception classes of hurray and the one function that
 * turns a C status into a Python exception (util/errors.h).
 *
 * The hierarchy (docs/internals/decisions.md, "Exceptions"): InvalidDescriptorError and
 * hurray.BufferError are ValueErrors, UnsupportedError a NotImplementedError,
 * InternalError a RuntimeError, FileError and StreamError OSErrors. The class
 * of each C status is decided here and nowhere else.
 */
#include "util/errors.h"

#include <errno.h>
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
    case HURRAY_ERR_PROTOCOL:
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

/* The exception instance hrpy_raise_status_as raises (new reference), or
 * NULL with an exception set. */
static PyObject *build_status(PyObject *exc, HurrayStatus status, const HurrayError *err,
                              const char *context) {
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
  return inst;
}

PyObject *hrpy_raise_status_as(HrpyState *st, PyObject *exc, HurrayStatus status,
                              const HurrayError *err, const char *context) {
  (void)st;
  PyObject *inst = build_status(exc, status, err, context);
  if (inst == NULL) return NULL;
  PyErr_SetObject((PyObject *)Py_TYPE(inst), inst);
  Py_DECREF(inst);
  return NULL;
}

PyObject *hrpy_raise_file_status(HrpyState *st, PyObject *exc, HurrayStatus status,
                                 const HurrayError *err, const char *context,
                                 const char *filename) {
  int code = err != NULL && err->status == status ? hurray_error_os_code(err) : 0;
  if (status != HURRAY_ERR_IO) code = 0;
  if (code == ENOENT) exc = st->FileNotFoundError;
  else if (code == EACCES || code == EPERM) exc = st->PermissionError;
  PyObject *inst = build_status(exc, status, err, context);
  if (inst == NULL) return NULL;
  if (exc == st->FileNotFoundError || exc == st->PermissionError) {
    /* errno, strerror and filename as open() sets them; the message stays
     * the library's (the classes' __str__ is BaseException's) */
    PyObject *no = PyLong_FromLong(code);
    PyObject *text = PyUnicode_DecodeLocale(strerror(code), "surrogateescape");
    PyObject *name = filename != NULL ? PyUnicode_DecodeFSDefault(filename) : Py_NewRef(Py_None);
    int bad = no == NULL || text == NULL || name == NULL ||
              PyObject_SetAttrString(inst, "errno", no) < 0 ||
              PyObject_SetAttrString(inst, "strerror", text) < 0 ||
              PyObject_SetAttrString(inst, "filename", name) < 0;
    Py_XDECREF(no);
    Py_XDECREF(text);
    Py_XDECREF(name);
    if (bad) {
      Py_DECREF(inst);
      return NULL;
    }
  }
  PyErr_SetObject((PyObject *)Py_TYPE(inst), inst);
  Py_DECREF(inst);
  return NULL;
}

/* The detail of a rule the binding checks, raised; `named`: the message
 * names the field before the reason. */
static PyObject *raise_rule_v(HrpyState *st, HurrayStatus status, const char *field, bool named,
                              const char *context, const char *fmt, va_list ap) {
  HurrayError err;
  hurray_error_clear(&err);
  err.status = status;
  PyOS_snprintf(err.field, sizeof err.field, "%s", field != NULL ? field : "");
  PyOS_vsnprintf(err.reason, sizeof err.reason, fmt, ap);
  if (named)
    PyOS_snprintf(err.message, sizeof err.message, "%s: %s", err.field, err.reason);
  else
    PyOS_snprintf(err.message, sizeof err.message, "%s", err.reason);
  return hrpy_raise_status(st, status, &err, context);
}

PyObject *hrpy_raise_rule(HrpyState *st, HurrayStatus status, const char *field,
                         const char *context, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_rule_v(st, status, field, false, context, fmt, ap);
  va_end(ap);
  return NULL;
}

PyObject *hrpy_raise_arg(HrpyState *st, const char *context, const char *field, const char *fmt,
                         ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_rule_v(st, HURRAY_ERR_INVALID_ARGUMENT, field, true, context, fmt, ap);
  va_end(ap);
  return NULL;
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
  if (PyTuple_Check(base)) {
    /* the OSError classes with errno set: str(e) stays the message (OSError's
     * __str__ would print "[Errno N] strerror: 'filename'" instead) */
    PyObject *str = PyObject_GetAttrString(PyExc_BaseException, "__str__");
    if (str == NULL || PyDict_SetItemString(dict, "__str__", str) < 0) {
      Py_XDECREF(str);
      Py_DECREF(dict);
      return -1;
    }
    Py_DECREF(str);
  }
  *slot = PyErr_NewExceptionWithDoc(qualname, doc, base, dict);
  Py_DECREF(dict);
  if (*slot == NULL) return -1;
  const char *dot = strrchr(qualname, '.');
  return PyModule_AddObjectRef(m, dot != NULL ? dot + 1 : qualname, *slot);
}

int hrpy_errors_init(PyObject *m, HrpyState *st) {
  if (add_exc(m, &st->InvalidDescriptorError, "hurray.InvalidDescriptorError",
              "A descriptor, shape, tag or name that breaks a rule of the Hurray format (or a "
              "value meant to become one).\n"
              "\n"
              "Subclass of `ValueError`. C statuses: `ERR_INVALID_MAGIC`, `ERR_VERSION_MISMATCH`, "
              "`ERR_INVALID_LAYOUT`, `ERR_INVALID_TYPE`, `ERR_INVALID_SYNC_MODE`, "
              "`ERR_INVALID_QUANTIZATION`, `ERR_INVALID_BUFFER_TABLE`, `ERR_INVALID_COMPOSITE`, "
              "`ERR_INVALID_INDEX_DATA`, `ERR_INVALID_STATISTICS`, `ERR_INVALID_SHARD`.\n"
              "\n"
              "Every error class of hurray carries the attributes `status` (the C library's "
              "status name, for example `\"ERR_INVALID_MAGIC\"`), `field` (the field path) and "
              "`offset` (the byte offset), `None` when unknown; an error found by the C library "
              "also names the field and the offset in its message. The rules the package checks "
              "on its own (an array length the C library cannot see) carry a status too: "
              "`ERR_INVALID_LAYOUT` for a stride array whose length is not the rank, "
              "`ERR_INVALID_SHARD` for a shard of the wrong rank. When a rule ran against a "
              "descriptor the package built only to check a value (a `Statistics`, a `Shard`, a "
              "block-paged quantization check), `offset` is `None`: it would point into bytes the "
              "caller never saw.",
              PyExc_ValueError) < 0)
    return -1;
  if (add_exc(m, &st->BufferError, "hurray.BufferError",
              "A buffer too small, misaligned under `copy=False`, or one that needs a copy that "
              "was forbidden.\n"
              "\n"
              "Subclass of `ValueError`. C statuses: `ERR_BUFFER_TOO_SMALL`, "
              "`ERR_SYNC_MODE_MISMATCH`, `ERR_BUFFER_SIZE`, `ERR_MISALIGNED`. This is not the "
              "built-in `BufferError`: the DLPack protocol (`__dlpack__`) raises the built-in "
              "one, which is what NumPy and PyTorch catch. Carries `status`, `field` and `offset` "
              "(see `InvalidDescriptorError`).",
              PyExc_ValueError) < 0)
    return -1;
  if (add_exc(m, &st->CopyRequiredError, "hurray.CopyRequiredError",
              "`__array__(copy=False)` (or `copy=False` elsewhere) when the result must be a "
              "copy: `bool` data (Hurray packs it 8 per byte), a dtype conversion, a tiled, "
              "Morton or Hilbert tensor gathered into row-major order.\n"
              "\n"
              "Subclass of `ValueError`, as NumPy 2 expects from `__array__(copy=False)`.",
              PyExc_ValueError) < 0)
    return -1;
  if (add_exc(m, &st->UnsupportedError, "hurray.UnsupportedError",
              "A type, layout, device or operation this call cannot handle (C status "
              "`ERR_UNSUPPORTED`).\n"
              "\n"
              "Subclass of `NotImplementedError`. The message says why (the layout's name for a "
              "layout). Carries `status`, `field` and `offset` (see `InvalidDescriptorError`).",
              PyExc_NotImplementedError) < 0)
    return -1;
  if (add_exc(m, &st->InternalError, "hurray.InternalError",
              "A failure inside the C library: a bug, please report it.\n"
              "\n"
              "Subclass of `RuntimeError`. Raised for the C statuses no other class takes "
              "(`ERR_NULL_POINTER`, `ERR_INTERNAL_PANIC`, `ERR_INTERNAL`, an unknown status).",
              PyExc_RuntimeError) < 0)
    return -1;
  if (add_exc(m, &st->FileError, "hurray.FileError",
              "`.hrry` files: not found, permission denied, a corrupt container (header, trailer, "
              "index, CRC-32C, KV section), a truncated file, a failed write (missing folder, "
              "disk full).\n"
              "\n"
              "Subclass of `OSError`. C statuses: `ERR_IO`, `ERR_INVALID_FILE`, "
              "`ERR_CRC_MISMATCH`, `ERR_INVALID_KV`, `ERR_DUPLICATE_NAME`; `status`, `field` and "
              "`offset` say which and where (see `InvalidDescriptorError`). A missing file or "
              "folder raises a class that is both `hurray.FileError` and `FileNotFoundError`, a "
              "permission refused one that is both `hurray.FileError` and `PermissionError` "
              "(`hurray._hurray.FileNotFoundError`, `hurray._hurray.PermissionError`), with "
              "`errno`, `strerror` and `filename` set as `open()` sets them; `status` stays "
              "`ERR_IO`.",
              PyExc_OSError) < 0)
    return -1;
  if (add_exc(m, &st->StreamError, "hurray.StreamError",
              "Streams: a truncated or malformed frame, a reader limit exceeded, a transport "
              "failure (a broken pipe), a write after `finish()`, a network protocol "
              "violation.\n"
              "\n"
              "Subclass of `OSError`. C statuses: `ERR_STREAM`, `ERR_STREAM_LIMIT`, "
              "`ERR_CROSS_MACHINE`, `ERR_PROTOCOL` (and `ERR_IO` for the transport). Carries "
              "`status`, `field` and `offset` (see `InvalidDescriptorError`).",
              PyExc_OSError) < 0)
    return -1;
  /* Created once: both hurray.FileError and the built-in class, so that
   * `except FileNotFoundError` and `except hurray.FileError` both work. */
  PyObject *fnf = PyTuple_Pack(2, st->FileError, PyExc_FileNotFoundError);
  PyObject *perm = fnf != NULL ? PyTuple_Pack(2, st->FileError, PyExc_PermissionError) : NULL;
  int rc = perm == NULL ? -1 : 0;
  if (rc == 0)
    rc = add_exc(m, &st->FileNotFoundError, "hurray._hurray.FileNotFoundError",
                 "A .hrry file (or its folder) does not exist.\n\nBoth hurray.FileError and "
                 "FileNotFoundError; errno, strerror and filename are set.",
                 fnf);
  if (rc == 0)
    rc = add_exc(m, &st->PermissionError, "hurray._hurray.PermissionError",
                 "A .hrry file (or its folder) may not be read or written.\n\nBoth "
                 "hurray.FileError and PermissionError; errno, strerror and filename are set.",
                 perm);
  Py_XDECREF(fnf);
  Py_XDECREF(perm);
  return rc;
}

const char *hrpy_layout_name(uint8_t tag) {
  const char *n = hurray_layout_name(tag);
  return n != NULL ? n : "extension";
}
