/*
 * types/creation.c - zeros, ones, empty, full, their *_like forms, arange, linspace
 * and eye: tensors whose one buffer this module allocates (64-byte aligned,
 * host memory, row-major).
 *
 * These functions allocate a buffer sized from the shape: its size, and the
 * one limit on it, are libhurray's (hurray_dense_buffer_size), asked before
 * anything is allocated; a dynamic dimension or a size beyond what one buffer
 * can address is InvalidDescriptorError naming the extent or the shape, a
 * size below it that the allocator refuses is MemoryError. Which types have
 * a zero, a one or a diagonal is libhurray's too (its dtype table and scalar
 * encoders).
 */
#include "types/creation.h"

#include "core/buffer.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "core/state.h"

#include <math.h>
#include <string.h>


/* One element of `tag` from a Python value into out
 * (HURRAY_MAX_ELEMENT_BYTES): the library's encoding (hurray_scalar_from_double
 * / _from_int, NumPy's rules), which also says which types take a value
 * (UnsupportedError with its reason); an integer type truncates a float, as
 * int() does. */
static int encode_value(HrpyState *st, const char *fname, uint8_t tag, PyObject *v,
                        uint8_t *out) {
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus rc;
  if (hurray_dtype_is_integer(tag)) {
    PyObject *iv = PyFloat_Check(v) ? PyNumber_Long(v) : PyNumber_Index(v);
    if (iv == NULL) return -1;
    bool negative = false;
    uint64_t magnitude = 0;
    int fits = hrpy_int_parts(iv, &negative, &magnitude);
    rc = fits == 1 ? hurray_scalar_from_int(tag, negative, magnitude, out, &e)
                   : HURRAY_ERR_INVALID_ARGUMENT;
    if (fits >= 0 && rc == HURRAY_ERR_INVALID_ARGUMENT)
      PyErr_Format(PyExc_OverflowError, "fill value %R is out of range for %s", iv,
                   hurray_dtype_name(tag));
    Py_DECREF(iv);
    if (fits < 0 || rc == HURRAY_ERR_INVALID_ARGUMENT) return -1;
  } else {
    Py_complex c = {0.0, 0.0};
    if (hurray_dtype_is_complex(tag))
      c = PyComplex_AsCComplex(v);
    else
      c.real = PyFloat_AsDouble(v);
    if (c.real == -1.0 && PyErr_Occurred()) return -1;
    rc = hurray_scalar_from_double(tag, c.real, c.imag, out, &e);
    if (rc == HURRAY_ERR_INVALID_ARGUMENT) {
      PyErr_Format(PyExc_ValueError, "fill value %R %s", v, e.reason);
      return -1;
    }
  }
  if (rc != HURRAY_OK) {
    hrpy_raise_status(st, rc, &e, fname);
    return -1;
  }
  return 0;
}

/* Runs fn(dst, plan) with the GIL released when the buffer is large. */
#define RUN_FILL(fn, dst, plan, nbytes)          \
  do {                                          \
    if ((nbytes) >= HRPY_NOGIL_COPY_BYTES) {    \
      Py_BEGIN_ALLOW_THREADS fn((dst), (plan)); \
      Py_END_ALLOW_THREADS                      \
    } else {                                    \
      fn((dst), (plan));                        \
    }                                           \
  } while (0)

/* n copies of one element (ones, full): the library's fill. */
typedef struct {
  uint8_t tag;
  uint64_t n;
  const uint8_t *elem;
  uint64_t nbytes;
} FillPlan;

static void value_fill(uint8_t *dst, const FillPlan *p) {
  HRPY_CANNOT_FAIL(hurray_fill_value(p->tag, p->n, p->elem, dst, p->nbytes, NULL));
}

/* How the buffer is filled. */
typedef enum { FILL_NONE, FILL_ZERO, FILL_ONE, FILL_VALUE } FillKind;

/* The device a creation function allocates for: `devobj` when given (a
 * hurray.Device), else `dflt`; either must be a CPU device (this module
 * allocates host memory). Borrowed; NULL with an exception set. */
static PyObject *resolve_device(HrpyState *st, const char *fname, PyObject *devobj,
                                PyObject *dflt) {
  PyObject *device = dflt;
  if (devobj != NULL && devobj != Py_None) {
    if (!hrpy_device_check(st, devobj)) {
      return PyErr_Format(PyExc_TypeError, "%s: device must be a hurray.Device, not %.100s",
                          fname, Py_TYPE(devobj)->tp_name);
    }
    device = devobj;
  }
  if (hrpy_device_tag(device) != HURRAY_DEVICE_CPU) {
    return hrpy_raise(st->UnsupportedError, "%s: this module allocates host memory only; got %R",
                     fname, device);
  }
  return device;
}

/* The element count and byte size of a dense tensor of `tag` and `shape`:
 * libhurray's (hurray_dense_buffer_size), asked before anything is allocated,
 * so no argument makes an unbounded request. What it refuses (a dynamic
 * extent, a size beyond what one buffer can address) is
 * InvalidDescriptorError with its field and reason. */
static int dense_size(HrpyState *st, const char *fname, uint8_t tag, uint32_t rank,
                      const uint64_t *shape, uint64_t *count, uint64_t *nbytes) {
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus rc = hurray_dense_buffer_size(tag, rank, shape, count, nbytes, &e);
  if (rc == HURRAY_OK) return 0;
  hrpy_raise_status_as(st,
                       rc == HURRAY_ERR_INVALID_ARGUMENT ? st->InvalidDescriptorError
                                                         : hrpy_exception_for(st, rc),
                       rc, &e, fname);
  return -1;
}

/* UnsupportedError unless a tensor of `tag` filled as `kind` can be made: a
 * named type (a private one has no size without its extension section), and
 * for zeros one with a zero (hurray_dtype_has_zero). */
static int check_fill_type(HrpyState *st, const char *fname, FillKind kind, uint8_t tag) {
  if (hurray_dtype_info(tag) == NULL) {
    hrpy_raise(st->UnsupportedError, "%s: a private type cannot be allocated by tag", fname);
    return -1;
  }
  if (kind == FILL_ZERO && !hurray_dtype_has_zero(tag)) {
    hrpy_raise(st->UnsupportedError, "%s: %s has no zero", fname, hurray_dtype_name(tag));
    return -1;
  }
  return 0;
}

/* An owned buffer of nbytes (zeroed when `zero`) in *b; MemoryError when
 * the allocator refuses it. */
static int alloc_owned(uint64_t nbytes, bool zero, HrpyBuffer *b) {
  memset(b, 0, sizeof *b);
  b->owned = hrpy_alloc_buffer(nbytes, zero);
  if (b->owned == NULL) return -1;
  b->data = b->owned;
  b->size = nbytes;
  return 0;
}

/* The tensor of a creation function once its arguments are resolved: `tag`
 * (from a Dtype, checked by check_fill_type), `shape` with its element count
 * and byte size (from dense_size), `device` (borrowed, from resolve_device)
 * and, for FILL_VALUE, the Python value to encode. */
static PyObject *create_tensor(HrpyState *st, const char *fname, FillKind kind, uint8_t tag,
                               uint32_t rank, const uint64_t *shape, uint64_t count,
                               uint64_t nbytes, PyObject *value, PyObject *device) {
  uint8_t elem[HURRAY_MAX_ELEMENT_BYTES];
  if (kind == FILL_ONE || kind == FILL_VALUE) {
    if (tag == HURRAY_DTYPE_BOOL) {
      int truth = 1;
      if (kind == FILL_VALUE && (truth = PyObject_IsTrue(value)) < 0) return NULL;
      elem[0] = truth != 0;
    } else if (kind == FILL_ONE) {
      PyObject *one = PyLong_FromLong(1);
      if (one == NULL) return NULL;
      int rc = encode_value(st, fname, tag, one, elem);
      Py_DECREF(one);
      if (rc < 0) return NULL;
    } else if (encode_value(st, fname, tag, value, elem) < 0) {
      return NULL;
    }
  }
  /* Sub-byte padding bits must be zero, so empty() zeroes those buffers. */
  bool zero = kind == FILL_ZERO || (kind == FILL_NONE && hurray_dtype_is_sub_byte(tag));
  HrpyBuffer b;
  if (alloc_owned(nbytes, zero, &b) < 0) return NULL;
  if (kind == FILL_ONE || kind == FILL_VALUE) {
    /* the library's fill (hurray_fill_value); the types were checked above */
    FillPlan plan = {tag, count, elem, nbytes};
    RUN_FILL(value_fill, b.data, &plan, nbytes);
  }
  return hrpy_tensor_new_dense(st, tag, rank, shape, HURRAY_LAYOUT_ROW_MAJOR, device, &b, fname);
}

static PyObject *create(PyObject *m, const char *fname, FillKind kind, PyObject *shapeobj,
                        PyObject *value, PyObject *dtobj, PyObject *devobj) {
  HrpyState *st = hrpy_state_of_module(m);
  uint8_t tag = HURRAY_DTYPE_FLOAT64;
  if (dtobj != NULL && dtobj != Py_None) {
    if (hrpy_dtype_converter(st, dtobj, &tag) < 0) return NULL;
  } else if (kind == FILL_VALUE) {
    /* As NumPy: the fill value's Python type chooses the default. */
    if (PyBool_Check(value)) {
      tag = HURRAY_DTYPE_BOOL;
    } else if (PyLong_Check(value)) {
      tag = HURRAY_DTYPE_INT64;
    } else if (PyComplex_Check(value)) {
      tag = HURRAY_DTYPE_COMPLEX128;
    }
  }
  uint64_t shape[HURRAY_MAX_RANK], count, nbytes;
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, shapeobj, shape, &rank, fname) < 0) return NULL;
  if (check_fill_type(st, fname, kind, tag) < 0 ||
      dense_size(st, fname, tag, rank, shape, &count, &nbytes) < 0)
    return NULL;
  PyObject *device = resolve_device(st, fname, devobj, st->core->cpu);
  if (device == NULL) return NULL;
  return create_tensor(st, fname, kind, tag, rank, shape, count, nbytes, value, device);
}

/* ---- zeros_like, ones_like, empty_like, full_like ------------------------------ */

/* What a *_like function takes from its source `x` (a hurray.Tensor): element
 * type, shape and device (borrowed). The one place this file reads a
 * tensor's fields. */
static int like_source(HrpyState *st, const char *fname, PyObject *x, uint8_t *tag,
                       uint32_t *rank, uint64_t *shape, PyObject **device) {
  if (!hrpy_tensor_check(st, x)) {
    PyErr_Format(PyExc_TypeError, "%s: x must be a hurray.Tensor, not %.100s", fname,
                 Py_TYPE(x)->tp_name);
    return -1;
  }
  const HurrayDescriptorFields *f = hrpy_tensor_fields(x);
  *tag = f->type_tag;
  *rank = f->rank;
  for (uint32_t i = 0; i < f->rank; i++) shape[i] = f->shape[i];
  *device = hrpy_tensor_device(x);
  return 0;
}

/* A tensor with x's shape, of x's element type and on x's device unless
 * dtype= / device= say otherwise (row-major, like every creation function). */
static PyObject *create_like(PyObject *m, const char *fname, FillKind kind, PyObject *x,
                             PyObject *value, PyObject *dtobj, PyObject *devobj) {
  HrpyState *st = hrpy_state_of_module(m);
  uint8_t tag;
  uint32_t rank;
  uint64_t shape[HURRAY_MAX_RANK], count, nbytes;
  PyObject *xdev;
  if (like_source(st, fname, x, &tag, &rank, shape, &xdev) < 0) return NULL;
  if (dtobj != NULL && dtobj != Py_None) {
    if (hrpy_dtype_converter(st, dtobj, &tag) < 0) return NULL;
  } else if (hurray_dtype_info(tag) == NULL) {
    return hrpy_raise(st->UnsupportedError,
                     "%s: x's element type (tag 0x%s) is private or unknown, so it cannot "
                     "be allocated by tag; pass dtype=",
                     fname, hrpy_hex(tag).s);
  }
  if (check_fill_type(st, fname, kind, tag) < 0 ||
      dense_size(st, fname, tag, rank, shape, &count, &nbytes) < 0)
    return NULL;
  PyObject *device = resolve_device(st, fname, devobj, xdev);
  if (device == NULL) return NULL;
  return create_tensor(st, fname, kind, tag, rank, shape, count, nbytes, value, device);
}

/* The eight entry points: their arguments, then create or create_like. */
static const char *const shape_names[] = {"shape", "dtype", "device", NULL};
static const char *const full_names[] = {"shape", "fill_value", "dtype", "device", NULL};
static const char *const like_names[] = {"x", "dtype", "device", NULL};
static const char *const full_like_names[] = {"x", "fill_value", "dtype", "device", NULL};

#define CREATION_FUNCTION(name, kind, fn, names, npos)                                        \
  PyObject *hrpy_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs,                \
                        PyObject *kwnames) {                                                 \
    PyObject *a[4];                                                                          \
    if (hrpy_parse_args(#name, args, nargs, kwnames, names, npos, npos, a) < 0) return NULL; \
    return fn(m, #name, kind, a[0], npos == 2 ? a[1] : NULL, a[npos], a[npos + 1]);         \
  }
CREATION_FUNCTION(zeros, FILL_ZERO, create, shape_names, 1)
CREATION_FUNCTION(ones, FILL_ONE, create, shape_names, 1)
CREATION_FUNCTION(empty, FILL_NONE, create, shape_names, 1)
CREATION_FUNCTION(full, FILL_VALUE, create, full_names, 2)
CREATION_FUNCTION(zeros_like, FILL_ZERO, create_like, like_names, 1)
CREATION_FUNCTION(ones_like, FILL_ONE, create_like, like_names, 1)
CREATION_FUNCTION(empty_like, FILL_NONE, create_like, like_names, 1)
CREATION_FUNCTION(full_like, FILL_VALUE, create_like, full_like_names, 2)
#undef CREATION_FUNCTION

/* ---- arange, linspace, eye -------------------------------------------------------- */

/*
 * The values are the library's (hurray_fill_arange_int / _float and
 * hurray_fill_linspace, include/hurray/convert.h: NumPy's rules, the same
 * bits for the same call). This part reads Python's arguments: the length is
 * ceil((stop - start) / step) with Python's true division (exact for
 * integers), integer ranges are checked to fit their type (OverflowError,
 * where NumPy wraps silently), arguments are finite real numbers.
 */


/* How the elements of a range are computed and stored. */
typedef enum { RK_INT, RK_FLOAT } RangeKind;

/* The range kind of `tag`, or UnsupportedError: the types the library's
 * range functions take (asked with an empty range), integers or not. */
static int range_kind(HrpyState *st, const char *fname, uint8_t tag, RangeKind *out) {
  HurrayError e;
  hurray_error_clear(&e);
  if (hurray_fill_linspace(tag, 0, 0.0, 0.0, true, NULL, 0, NULL, &e) != HURRAY_OK) {
    const char *n = hurray_dtype_name(tag);
    hrpy_raise(st->UnsupportedError, "%s: dtype=%s: %s", fname, n != NULL ? n : "(private)",
               e.reason);
    return -1;
  }
  *out = hurray_dtype_is_integer(tag) ? RK_INT : RK_FLOAT;
  return 0;
}

/* One real argument of a range: an integer (Python int or anything with
 * __index__; `i` a new reference) or a float (`d`). */
typedef struct {
  PyObject *i;
  double d;
  bool is_int;
} RangeArg;

static void range_arg_clear(RangeArg *r) { Py_CLEAR(r->i); }

static int range_arg(const char *fname, const char *name, PyObject *o, RangeArg *out) {
  out->i = NULL;
  out->d = 0.0;
  out->is_int = false;
  if (PyComplex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a real number, not complex", fname, name);
    return -1;
  }
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) {
    out->i = PyNumber_Index(o);
    if (out->i == NULL) return -1;
    out->is_int = true;
    return 0;
  }
  PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
  if (!PyFloat_Check(o) && (nb == NULL || nb->nb_float == NULL)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a real number, not %.100s", fname, name,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  out->d = PyFloat_AsDouble(o);
  if (out->d == -1.0 && PyErr_Occurred()) return -1;
  return 0;
}

/* The argument as a float64 (an integer converted, OverflowError naming it
 * when it is beyond float64); InvalidDescriptorError unless finite. */
static int range_arg_double(HrpyState *st, const char *fname, const char *name,
                            const RangeArg *r, double *out) {
  double d = r->d;
  if (r->is_int) {
    d = PyLong_AsDouble(r->i);
    if (d == -1.0 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
      PyErr_Clear();
      PyErr_Format(PyExc_OverflowError, "%s: %s=%R is too large for a float64", fname, name,
                   r->i);
      return -1;
    }
  }
  if (!isfinite(d)) {
    PyObject *f = PyFloat_FromDouble(d);
    if (f == NULL) return -1;
    hrpy_raise(st->InvalidDescriptorError, "%s: %s must be finite, got %R", fname, name, f);
    Py_DECREF(f);
    return -1;
  }
  *out = d;
  return 0;
}

/* Whether the Python int `v` fits the integer type `info` (the library's
 * range, hurray_scalar_from_int): 1 with *bits its two's complement, 0, or
 * -1 on error. */
static int int_fits(PyObject *v, const HurrayDtypeInfo *info, uint64_t *bits) {
  bool negative;
  uint64_t magnitude;
  uint8_t code[8] = {0};
  int rc = hrpy_int_parts(v, &negative, &magnitude);
  if (rc <= 0) return rc;
  if (hurray_scalar_from_int(info->tag, negative, magnitude, code, NULL) != HURRAY_OK) return 0;
  *bits = 0;
  for (unsigned i = 0; i < 8; i++) *bits |= (uint64_t)code[i] << (8 * i);
  return 1;
}

/* An arange, once its arguments are resolved (see the comment above). */
typedef struct {
  RangeKind kind;
  uint8_t tag;
  uint64_t n, nbytes;
  uint64_t ifirst, idelta; /* RK_INT: element 0 and the step, modulo 2**64 */
  double e0, e1;           /* the others: elements 0 and 1 before conversion */
} ArangePlan;

/* The values: the library's rules (hurray_fill_arange_*, hurray/convert.h).
 * The arguments were checked here: the fill cannot fail. */
static void arange_fill(uint8_t *dst, const ArangePlan *p) {
  if (p->kind == RK_INT)
    HRPY_CANNOT_FAIL(hurray_fill_arange_int(p->tag, p->n, p->ifirst, p->idelta, dst, p->nbytes,
                                            NULL));
  else
    HRPY_CANNOT_FAIL(hurray_fill_arange_float(p->tag, p->n, p->e0, p->e1, dst, p->nbytes, NULL));
}

/* The length of a range from q = (stop - start) / step (hurray_arange_length,
 * NumPy's count); InvalidDescriptorError beyond 63 bits. */
static int arange_length(HrpyState *st, double q, bool span_nonzero, uint64_t *n) {
  if (hurray_arange_length(q, span_nonzero, n)) return 0;
  PyObject *f = PyFloat_FromDouble(q);
  if (f == NULL) return -1;
  hrpy_raise(st->InvalidDescriptorError,
             "arange: the length (stop - start) / step = %R does not fit 63 bits", f);
  Py_DECREF(f);
  return -1;
}

/* For an integer element type: element 0 (`first`) and the step (`delta`),
 * Python ints, give the plan's bits after checking that the first and the
 * last element fit (OverflowError naming them). */
static int arange_int_plan(uint8_t tag, PyObject *first, PyObject *delta, ArangePlan *p) {
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  p->ifirst = p->idelta = 0;
  if (p->n == 0) return 0;
  int ok = int_fits(first, info, &p->ifirst);
  if (ok < 0) return -1;
  if (!ok) {
    PyErr_Format(PyExc_OverflowError, "arange: start=%R is out of range for %s", first,
                 info->name);
    return -1;
  }
  if (p->n == 1) return 0;
  PyObject *k = PyLong_FromUnsignedLongLong(p->n - 1);
  PyObject *span = k != NULL ? PyNumber_Multiply(k, delta) : NULL;
  PyObject *last = span != NULL ? PyNumber_Add(first, span) : NULL;
  Py_XDECREF(k);
  Py_XDECREF(span);
  if (last == NULL) return -1;
  uint64_t unused;
  ok = int_fits(last, info, &unused);
  if (ok == 0) {
    PyErr_Format(PyExc_OverflowError,
                 "arange: the last element, %R, is out of range for %s (stop or step too "
                 "large for the type)",
                 last, info->name);
  }
  Py_DECREF(last);
  if (ok <= 0) return -1;
  /* |delta| <= |last - first| < 2**64: its low 64 bits are exact modulo 2**64 */
  p->idelta = PyLong_AsUnsignedLongLongMask(delta);
  if (p->idelta == (uint64_t)-1 && PyErr_Occurred()) return -1;
  return 0;
}

PyObject *hrpy_arange(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"start", "stop", "step", "dtype", "device", NULL};
  PyObject *a[5];
  if (hrpy_parse_args("arange", args, nargs, kwnames, names, 3, 1, a) < 0) return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  PyObject *o_start = a[0], *o_stop = a[1], *o_step = a[2];
  if (o_stop == NULL || o_stop == Py_None) { /* arange(stop) */
    o_stop = o_start;
    o_start = NULL;
  }
  RangeArg start = {NULL, 0.0, true}, stop = {NULL, 0.0, true}, step = {NULL, 0.0, true};
  PyObject *result = NULL, *first = NULL, *delta = NULL, *tmp = NULL;
  if (o_start == NULL) {
    if ((start.i = PyLong_FromLong(0)) == NULL) goto done;
  } else if (range_arg("arange", "start", o_start, &start) < 0) {
    goto done;
  }
  if (range_arg("arange", "stop", o_stop, &stop) < 0) goto done;
  if (o_step == NULL || o_step == Py_None) {
    if ((step.i = PyLong_FromLong(1)) == NULL) goto done;
  } else if (range_arg("arange", "step", o_step, &step) < 0) {
    goto done;
  }
  bool all_int = start.is_int && stop.is_int && step.is_int;
  uint8_t tag = all_int ? HURRAY_DTYPE_INT64 : HURRAY_DTYPE_FLOAT64;
  if (a[3] != NULL && a[3] != Py_None && hrpy_dtype_converter(st, a[3], &tag) < 0) goto done;
  ArangePlan plan;
  memset(&plan, 0, sizeof plan);
  if (range_kind(st, "arange", tag, &plan.kind) < 0) goto done;
  PyObject *device = resolve_device(st, "arange", a[4], st->core->cpu);
  if (device == NULL) goto done;

  if (all_int) {
    int zero = PyObject_Not(step.i);
    if (zero < 0) goto done;
    if (zero) {
      hrpy_raise(st->InvalidDescriptorError, "arange: step must not be zero");
      goto done;
    }
    PyObject *span = PyNumber_Subtract(stop.i, start.i);
    if (span == NULL) goto done;
    int nonzero = PyObject_IsTrue(span);
    PyObject *q = nonzero >= 0 ? PyNumber_TrueDivide(span, step.i) : NULL;
    Py_DECREF(span);
    if (q == NULL) {
      if (nonzero >= 0 && PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        hrpy_raise(st->InvalidDescriptorError,
                  "arange: the length (stop - start) / step does not fit 63 bits");
      }
      goto done;
    }
    double qd = PyFloat_AsDouble(q);
    Py_DECREF(q);
    if (qd == -1.0 && PyErr_Occurred()) goto done;
    if (arange_length(st, qd, nonzero != 0, &plan.n) < 0) goto done;
  } else {
    if (range_arg_double(st, "arange", "start", &start, &start.d) < 0 ||
        range_arg_double(st, "arange", "stop", &stop, &stop.d) < 0 ||
        range_arg_double(st, "arange", "step", &step, &step.d) < 0)
      goto done;
    if (step.d == 0.0) {
      hrpy_raise(st->InvalidDescriptorError, "arange: step must not be zero");
      goto done;
    }
    double span = stop.d - start.d;
    if (arange_length(st, span / step.d, span != 0.0, &plan.n) < 0) goto done;
  }
  uint64_t nbytes;
  if (dense_size(st, "arange", tag, 1, &plan.n, NULL, &nbytes) < 0) goto done;
  plan.tag = tag;
  plan.nbytes = nbytes;

  if (plan.kind == RK_INT) {
    if (all_int) {
      first = Py_NewRef(start.i);
      delta = Py_NewRef(step.i);
    } else {
      /* NumPy converts elements 0 and 1 (start, start + step) to the integer
       * type, truncating, and steps by their difference */
      if ((first = PyLong_FromDouble(start.d)) == NULL) goto done;
      if (plan.n > 1) {
        if ((tmp = PyLong_FromDouble(start.d + step.d)) == NULL) goto done;
        delta = PyNumber_Subtract(tmp, first);
      } else {
        delta = PyLong_FromLong(0);
      }
      if (delta == NULL) goto done;
    }
    if (arange_int_plan(tag, first, delta, &plan) < 0) goto done;
  } else if (all_int) {
    RangeArg e1 = {NULL, 0.0, true};
    if (range_arg_double(st, "arange", "start", &start, &plan.e0) < 0) goto done;
    if (plan.n > 1) {
      if ((e1.i = PyNumber_Add(start.i, step.i)) == NULL) goto done;
      int rc = range_arg_double(st, "arange", "start + step", &e1, &plan.e1);
      range_arg_clear(&e1);
      if (rc < 0) goto done;
    }
  } else {
    plan.e0 = start.d;
    plan.e1 = start.d + step.d;
  }
  HrpyBuffer b;
  if (alloc_owned(nbytes, false, &b) < 0) goto done;
  RUN_FILL(arange_fill, b.data, &plan, nbytes);
  result = hrpy_tensor_new_dense(st, tag, 1, &plan.n, HURRAY_LAYOUT_ROW_MAJOR, device, &b,
                                 "arange");
done:
  range_arg_clear(&start);
  range_arg_clear(&stop);
  range_arg_clear(&step);
  Py_XDECREF(first);
  Py_XDECREF(delta);
  Py_XDECREF(tmp);
  return result;
}

/* A linspace, once its arguments are resolved (see the comment above). */
typedef struct {
  RangeKind kind;
  uint8_t tag;
  const HurrayDtypeInfo *info;
  uint64_t n, nbytes;
  double start, stop;
  bool endpoint;
  HurrayStatus status; /* set by the fill: an integer element does not fit */
  double bad;          /* the first such element */
} LinspacePlan;

/* The values: the library's rules (hurray_fill_linspace, hurray/convert.h). */
static void linspace_fill(uint8_t *dst, LinspacePlan *p) {
  p->status = hurray_fill_linspace(p->tag, p->n, p->start, p->stop, p->endpoint, dst, p->nbytes,
                                   &p->bad, NULL);
}

/* A count argument (num, n_rows, n_cols): an int >= 0 (TypeError for a
 * non-integer, InvalidDescriptorError naming it when negative or beyond 64
 * bits). */
static int count_arg(HrpyState *st, const char *fname, const char *name, PyObject *o,
                     uint64_t *out) {
  PyObject *v = PyNumber_Index(o);
  if (v == NULL) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "%s: %s must be an int, not %.100s", fname, name,
                   Py_TYPE(o)->tp_name);
    }
    return -1;
  }
  bool negative = false;
  int fits = hrpy_int_parts(v, &negative, out);
  if (fits >= 0 && negative)
    hrpy_raise(st->InvalidDescriptorError, "%s: %s must be non-negative, got %R", fname, name, v);
  else if (fits == 0)
    hrpy_raise(st->InvalidDescriptorError, "%s: %s=%R does not fit 64 bits", fname, name, v);
  Py_DECREF(v);
  return fits == 1 && !negative ? 0 : -1;
}

PyObject *hrpy_linspace(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  static const char *const names[] = {"start", "stop", "num", "endpoint", "dtype", "device",
                                      NULL};
  PyObject *a[6];
  if (hrpy_parse_args("linspace", args, nargs, kwnames, names, 4, 2, a) < 0) return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  LinspacePlan plan;
  memset(&plan, 0, sizeof plan);
  RangeArg start, stop;
  if (range_arg("linspace", "start", a[0], &start) < 0) return NULL;
  int rc = range_arg_double(st, "linspace", "start", &start, &plan.start);
  range_arg_clear(&start);
  if (rc < 0) return NULL;
  if (range_arg("linspace", "stop", a[1], &stop) < 0) return NULL;
  rc = range_arg_double(st, "linspace", "stop", &stop, &plan.stop);
  range_arg_clear(&stop);
  if (rc < 0) return NULL;
  plan.n = 50;
  if (a[2] != NULL && count_arg(st, "linspace", "num", a[2], &plan.n) < 0) return NULL;
  plan.endpoint = true;
  if (a[3] != NULL) {
    int t = PyObject_IsTrue(a[3]);
    if (t < 0) return NULL;
    plan.endpoint = t != 0;
  }
  uint8_t tag = HURRAY_DTYPE_FLOAT64;
  if (a[4] != NULL && a[4] != Py_None && hrpy_dtype_converter(st, a[4], &tag) < 0) return NULL;
  if (range_kind(st, "linspace", tag, &plan.kind) < 0) return NULL;
  plan.info = hurray_dtype_info(tag);
  PyObject *device = resolve_device(st, "linspace", a[5], st->core->cpu);
  if (device == NULL) return NULL;
  if (!isfinite(plan.stop - plan.start)) {
    return hrpy_raise(st->InvalidDescriptorError,
                     "linspace: stop - start overflows float64 (start=%R, stop=%R)", a[0], a[1]);
  }
  uint64_t nbytes;
  if (dense_size(st, "linspace", tag, 1, &plan.n, NULL, &nbytes) < 0) return NULL;
  plan.tag = tag;
  plan.nbytes = nbytes;
  HrpyBuffer b;
  if (alloc_owned(nbytes, false, &b) < 0) return NULL;
  RUN_FILL(linspace_fill, b.data, &plan, nbytes);
  if (plan.status != HURRAY_OK) {
    hrpy_buffer_release(&b);
    PyObject *f = PyFloat_FromDouble(plan.bad);
    if (f == NULL) return NULL;
    PyErr_Format(PyExc_OverflowError, "linspace: the element %R is out of range for %s", f,
                 plan.info->name);
    Py_DECREF(f);
    return NULL;
  }
  return hrpy_tensor_new_dense(st, tag, 1, &plan.n, HURRAY_LAYOUT_ROW_MAJOR, device, &b,
                               "linspace");
}

PyObject *hrpy_eye(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"n_rows", "n_cols", "k", "dtype", "device", NULL};
  PyObject *a[5];
  if (hrpy_parse_args("eye", args, nargs, kwnames, names, 3, 1, a) < 0) return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  uint64_t shape[2];
  if (count_arg(st, "eye", "n_rows", a[0], &shape[0]) < 0) return NULL;
  shape[1] = shape[0];
  if (a[1] != NULL && a[1] != Py_None && count_arg(st, "eye", "n_cols", a[1], &shape[1]) < 0)
    return NULL;
  /* the diagonal; one beyond 64 bits is beyond the matrix (all zeros) */
  long long kv = 0;
  if (a[2] != NULL) {
    PyObject *k = PyNumber_Index(a[2]);
    if (k == NULL) return NULL;
    int overflow = 0;
    kv = PyLong_AsLongLongAndOverflow(k, &overflow);
    Py_DECREF(k);
    if (kv == -1 && PyErr_Occurred()) return NULL;
    if (overflow != 0) kv = overflow > 0 ? INT64_MAX : INT64_MIN;
  }
  uint8_t tag = HURRAY_DTYPE_FLOAT64;
  if (a[3] != NULL && a[3] != Py_None && hrpy_dtype_converter(st, a[3], &tag) < 0) return NULL;
  PyObject *device = resolve_device(st, "eye", a[4], st->core->cpu);
  if (device == NULL) return NULL;
  if (!hurray_dtype_is_standard(tag))
    return hrpy_raise(st->UnsupportedError,
                      "eye: %s values cannot be encoded here (Tier 1 types and complex only)",
                      hurray_dtype_name(tag) != NULL ? hurray_dtype_name(tag) : "private type");
  uint64_t count, nbytes;
  if (dense_size(st, "eye", tag, 2, shape, &count, &nbytes) < 0) return NULL;
  uint8_t one[HURRAY_MAX_ELEMENT_BYTES] = {1};
  if (tag != HURRAY_DTYPE_BOOL) {
    PyObject *o = PyLong_FromLong(1);
    if (o == NULL) return NULL;
    int rc = encode_value(st, "eye", tag, o, one);
    Py_DECREF(o);
    if (rc < 0) return NULL;
  }
  HrpyBuffer b;
  if (alloc_owned(nbytes, true, &b) < 0) return NULL;
  /* the library's diagonal (hurray_fill_eye) on zeroed memory; its arguments were checked here */
  HRPY_CANNOT_FAIL(hurray_fill_eye(tag, shape[0], shape[1], (int64_t)kv, one, b.data, nbytes,
                                   NULL));
  return hrpy_tensor_new_dense(st, tag, 2, shape, HURRAY_LAYOUT_ROW_MAJOR, device, &b, "eye");
}
