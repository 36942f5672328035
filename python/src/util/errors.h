/*
 * util/errors.h - the exception classes of hurray and the one way a C status
 * becomes a Python exception (layer 0).
 *
 * Which class each status raises is this binding's own table
 * (util/errors.c, hrpy_exception_for); the C library's status table knows
 * nothing of Python. Messages carry the C library's detail: the field path,
 * the byte offset and the reason (HurrayError).
 */
#ifndef HURRAY_PY_UTIL_ERRORS_H
#define HURRAY_PY_UTIL_ERRORS_H

#include <assert.h>

#include "util/state.h"

/* Creates the exception classes into st and adds them to module m. */
int hrpy_errors_init(PyObject *m, HrpyState *st);

/* The exception class for `status` (borrowed). */
PyObject *hrpy_exception_for(HrpyState *st, HurrayStatus status);

/*
 * The one place where a C status becomes a Python exception. Sets the class
 * from hrpy_exception_for with the C library's detail message (field path and
 * byte offset) when `err` carries one, else the status's default message;
 * `context` (may be NULL) prefixes it ("Tensor: ..."). The exception instance
 * gets attributes `status` (name), `field` and `offset` (None when unknown).
 * Always returns NULL so callers can `return hrpy_raise_status(...)`.
 */
PyObject *hrpy_raise_status(HrpyState *st, HurrayStatus status, const HurrayError *err,
                            const char *context);

/* hrpy_raise_status with the class chosen by the caller (`exc`, borrowed):
 * for an operation whose own error class wins over the table's (a stream's
 * transport failure is a StreamError, not a FileError). */
PyObject *hrpy_raise_status_as(HrpyState *st, PyObject *exc, HurrayStatus status,
                               const HurrayError *err, const char *context);

/*
 * A failure of an operation on the file at `filename` (NUL-terminated,
 * borrowed; the system's encoding: os.fsdecode), raised as `exc` unless the
 * detail holds the system's error code of a missing file (ENOENT) or of a
 * permission refused (EACCES, EPERM): then as a class that is both FileError
 * and FileNotFoundError (PermissionError). Either way an OSError gets
 * `errno`, `strerror` and `filename` when the code is known. Returns NULL.
 */
PyObject *hrpy_raise_file_status(HrpyState *st, PyObject *exc, HurrayStatus status,
                                 const HurrayError *err, const char *context,
                                 const char *filename);

/* A format rule the binding checks itself (an array length the C library
 * cannot see): raised through hrpy_raise_status with a detail carrying
 * `status` and `field` (offset unknown). printf-style `fmt`. Returns NULL. */
PyObject *hrpy_raise_rule(HrpyState *st, HurrayStatus status, const char *field,
                          const char *context, const char *fmt, ...);
/* The same for an argument: ValueError (HURRAY_ERR_INVALID_ARGUMENT) with the
 * message in the form the C library's details take, "<context>: <field>:
 * <reason>". Returns NULL. */
PyObject *hrpy_raise_arg(HrpyState *st, const char *context, const char *field, const char *fmt,
                         ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A C call that cannot fail where it is made (the destroy of a handle the
 * caller owns, the fields of a descriptor it holds, an index below a count
 * it just read): the status is checked by assert in debug builds (the
 * sanitizer suite builds Debug), so a broken assumption fails loudly there. */
#define HRPY_CANNOT_FAIL(call)               \
  do {                                       \
    HurrayStatus hrpy_must_ = (call);        \
    assert(hrpy_must_ == HURRAY_OK);         \
    (void)hrpy_must_;                        \
  } while (0)

/* Raise `exc` with a formatted message (PyUnicode_FromFormat); returns NULL. */
PyObject *hrpy_raise(PyObject *exc, const char *fmt, ...);

/* Two uppercase hex digits of a byte, for messages and reprs
 * (PyUnicode_FromFormat has no %X): "0x%s" with hrpy_hex(tag).s. */
typedef struct {
  char s[3];
} HrpyHex;
static inline HrpyHex hrpy_hex(uint8_t v) {
  static const char d[] = "0123456789ABCDEF";
  HrpyHex h = {{d[v >> 4], d[v & 15], '\0'}};
  return h;
}

/* The name of a layout tag in messages and reprs: the C library's name, or
 * "extension" for a private or unknown tag (one helper, so .name and the
 * layout named in an error cannot drift). */
const char *hrpy_layout_name(uint8_t tag);

#endif /* HURRAY_PY_UTIL_ERRORS_H */
