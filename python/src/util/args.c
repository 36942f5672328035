/*
 * util/args.c - arguments: the keyword parser, the copy= policy, paths and
 * shapes in both directions (util/args.h).
 */
#include "util/args.h"

#include <string.h>

#include "util/bytes.h"
#include "util/errors.h"

/* The parameter count of a NULL-terminated name list. */
static int name_count(const char *const *names) {
  int total = 0;
  while (names[total] != NULL) total++;
  return total;
}

static int too_many_positional(const char *fname, int npos, Py_ssize_t given) {
  if (npos == 0) {
    PyErr_Format(PyExc_TypeError, "%s() takes no positional arguments", fname);
  } else {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                 fname, npos, npos == 1 ? "" : "s", given);
  }
  return -1;
}

/* Stores keyword `key` = `value` into out[]: TypeError for an unknown name
 * or a parameter given twice. */
static int put_keyword(const char *fname, const char *const *names, int total, PyObject *key,
                       PyObject *value, PyObject **out) {
  int found = -1;
  if (PyUnicode_Check(key)) {
    for (int i = 0; i < total; i++) {
      if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) {
        found = i;
        break;
      }
    }
  }
  if (found < 0) {
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%S'", fname, key);
    return -1;
  }
  if (out[found] != NULL) {
    PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                 names[found]);
    return -1;
  }
  out[found] = value;
  return 0;
}

static int check_required(const char *fname, const char *const *names, int nreq,
                          PyObject *const *out) {
  for (int i = 0; i < nreq; i++) {
    if (out[i] == NULL) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
      return -1;
    }
  }
  return 0;
}

int hrpy_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, const char *const *names, int npos, int nreq,
                    PyObject **out) {
  int total = name_count(names);
  for (int i = 0; i < total; i++) out[i] = NULL;
  if (nargs > npos) return too_many_positional(fname, npos, nargs);
  for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
  if (kwnames != NULL) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; k++)
      if (put_keyword(fname, names, total, PyTuple_GET_ITEM(kwnames, k), args[nargs + k], out) <
          0)
        return -1;
  }
  return check_required(fname, names, nreq, out);
}

int hrpy_parse_tuple(const char *fname, PyObject *args, PyObject *kwargs,
                     const char *const *names, int npos, int nreq, PyObject **out) {
  int total = name_count(names);
  for (int i = 0; i < total; i++) out[i] = NULL;
  Py_ssize_t nargs = args != NULL ? PyTuple_GET_SIZE(args) : 0;
  if (nargs > npos) return too_many_positional(fname, npos, nargs);
  for (Py_ssize_t i = 0; i < nargs; i++) out[i] = PyTuple_GET_ITEM(args, i);
  if (kwargs != NULL) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value))
      if (put_keyword(fname, names, total, key, value, out) < 0) return -1;
  }
  return check_required(fname, names, nreq, out);
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

PyObject *hrpy_fs_path(PyObject *obj) {
  PyObject *b = NULL;
  if (!PyUnicode_FSConverter(obj, &b)) return NULL;
  return b;
}

int hrpy_parse_shape(HrpyState *st, PyObject *obj, uint64_t *out, uint32_t *rank,
                    const char *context) {
  if (PyIndex_Check(obj) && !PyBool_Check(obj)) {
    PyObject *tup = PyTuple_Pack(1, obj);
    if (tup == NULL) return -1;
    int rc = hrpy_parse_shape(st, tup, out, rank, context);
    Py_DECREF(tup);
    return rc;
  }
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: shape must be a sequence of int or None", context);
    return -1;
  }
  PyObject *seq = PySequence_Fast(obj, "shape must be a sequence of int or None");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > (Py_ssize_t)HURRAY_MAX_RANK) {
    Py_DECREF(seq);
    hrpy_raise(st->InvalidDescriptorError, "%s: rank %zd exceeds the maximum rank %u", context,
              n, (unsigned)HURRAY_MAX_RANK);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (item == Py_None) {
      out[i] = HURRAY_DYNAMIC_DIM;
      continue;
    }
    if (PyBool_Check(item) || !PyIndex_Check(item)) {
      PyErr_Format(PyExc_TypeError, "%s: shape[%zd] must be an int or None, not %.100s",
                   context, i, Py_TYPE(item)->tp_name);
      Py_DECREF(seq);
      return -1;
    }
    PyObject *v = PyNumber_Index(item);
    if (v == NULL) {
      Py_DECREF(seq);
      return -1;
    }
    bool negative = false;
    uint64_t u = 0;
    int fits = hrpy_int_parts(v, &negative, &u);
    Py_DECREF(v);
    if (fits != 1 || negative) {
      Py_DECREF(seq);
      if (fits >= 0 && negative)
        hrpy_raise(st->InvalidDescriptorError,
                   "%s: shape[%zd] is negative; dimensions are >= 0 (None for a dynamic one)",
                   context, i);
      else if (fits == 0)
        hrpy_raise(st->InvalidDescriptorError, "%s: shape[%zd] does not fit in 64 bits",
                   context, i);
      return -1;
    }
    if (u == HURRAY_DYNAMIC_DIM) {
      Py_DECREF(seq);
      hrpy_raise(st->InvalidDescriptorError,
                "%s: shape[%zd] is the wire sentinel for a dynamic dimension; spell a dynamic "
                "dimension None",
                context, i);
      return -1;
    }
    out[i] = u;
  }
  *rank = (uint32_t)n;
  Py_DECREF(seq);
  return 0;
}

PyObject *hrpy_shape_tuple(uint32_t rank, const uint64_t *shape) {
  PyObject *t = PyTuple_New((Py_ssize_t)rank);
  if (t == NULL) return NULL;
  for (uint32_t i = 0; i < rank; i++) {
    PyObject *v = shape[i] == HURRAY_DYNAMIC_DIM ? Py_NewRef(Py_None)
                                                 : PyLong_FromUnsignedLongLong(shape[i]);
    if (v == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
  }
  return t;
}

PyObject *hrpy_size_object(uint32_t rank, const uint64_t *shape) {
  for (uint32_t i = 0; i < rank; i++)
    if (shape[i] == HURRAY_DYNAMIC_DIM) Py_RETURN_NONE;
  /* Python ints do not overflow: multiply there when u64 would. */
  uint64_t n;
  if (hurray_shape_element_count(rank, shape, &n)) return PyLong_FromUnsignedLongLong(n);
  PyObject *acc = PyLong_FromLong(1);
  for (uint32_t i = 0; acc != NULL && i < rank; i++) {
    PyObject *d = PyLong_FromUnsignedLongLong(shape[i]);
    PyObject *p = d != NULL ? PyNumber_Multiply(acc, d) : NULL;
    Py_XDECREF(d);
    Py_DECREF(acc);
    acc = p;
  }
  return acc;
}

/* ---- converters -------------------------------------------------------------- */

/* The int value of `o` (an int or an object with __index__, never a bool):
 * a new reference, or NULL with TypeError naming ctx and what. */
static PyObject *index_of(PyObject *o, const char *ctx, const char *what) {
  if (PyBool_Check(o) || !PyIndex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be an int, not %.100s", ctx, what,
                 Py_TYPE(o)->tp_name);
    return NULL;
  }
  return PyNumber_Index(o);
}

int hrpy_arg_int_as(PyObject *range_exc, PyObject *o, const char *ctx, const char *what,
                    int64_t lo, int64_t hi, int64_t *out) {
  PyObject *v = index_of(o, ctx, what);
  if (v == NULL) return -1;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && overflow == 0 && PyErr_Occurred()) {
    Py_DECREF(v);
    return -1;
  }
  if (overflow != 0 || x < lo || x > hi) {
    hrpy_raise(range_exc, "%s: %s must be in [%lld, %lld], got %R", ctx, what, (long long)lo,
               (long long)hi, v);
    Py_DECREF(v);
    return -1;
  }
  Py_DECREF(v);
  *out = (int64_t)x;
  return 0;
}

int hrpy_int_parts(PyObject *v, bool *negative, uint64_t *magnitude) {
  int overflow = 0;
  long long s = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (s == -1 && PyErr_Occurred()) return -1;
  *negative = overflow < 0 || (overflow == 0 && s < 0);
  if (overflow == 0) {
    *magnitude = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return 1;
  }
  if (overflow < 0) return 0;
  *magnitude = PyLong_AsUnsignedLongLong(v);
  if (*magnitude == (uint64_t)-1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
    PyErr_Clear();
    return 0;
  }
  return 1;
}

int hrpy_arg_uint_as(PyObject *range_exc, PyObject *o, const char *ctx, const char *what,
                     uint64_t hi, uint64_t *out) {
  PyObject *v = index_of(o, ctx, what);
  if (v == NULL) return -1;
  bool negative = false;
  uint64_t u = 0;
  int fits = hrpy_int_parts(v, &negative, &u);
  if (fits == 0 || (fits == 1 && (negative || u > hi)))
    hrpy_raise(range_exc, "%s: %s must be in [0, %llu], got %R", ctx, what,
               (unsigned long long)hi, v);
  Py_DECREF(v);
  if (fits != 1 || negative || u > hi) return -1;
  *out = u;
  return 0;
}

int hrpy_arg_i64(HrpyState *st, PyObject *o, const char *ctx, const char *what, int64_t lo,
                 int64_t hi, int64_t *out) {
  return hrpy_arg_int_as(st->InvalidDescriptorError, o, ctx, what, lo, hi, out);
}

int hrpy_arg_u64(HrpyState *st, PyObject *o, const char *ctx, const char *what, uint64_t hi,
                 uint64_t *out) {
  return hrpy_arg_uint_as(st->InvalidDescriptorError, o, ctx, what, hi, out);
}

int hrpy_arg_u32(HrpyState *st, PyObject *o, const char *ctx, const char *what, uint32_t *out) {
  uint64_t v;
  if (hrpy_arg_u64(st, o, ctx, what, UINT32_MAX, &v) < 0) return -1;
  *out = (uint32_t)v;
  return 0;
}

int hrpy_arg_float(PyObject *o, const char *ctx, const char *what, double *out) {
  if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o))) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a float, not %.100s", ctx, what,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = PyFloat_AsDouble(o);
  return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

int hrpy_arg_bool(PyObject *o, const char *ctx, const char *what, bool *out) {
  if (!PyBool_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a bool, not %.100s", ctx, what,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  *out = o == Py_True;
  return 0;
}

int hrpy_arg_flag(PyObject *o, bool dflt, bool *out) {
  if (o == NULL) {
    *out = dflt;
    return 0;
  }
  int t = PyObject_IsTrue(o);
  if (t < 0) return -1;
  *out = t != 0;
  return 0;
}

int hrpy_arg_int_array(HrpyState *st, PyObject *seq_obj, const char *ctx, const char *what,
                       HrpyArrKind kind, void *out, uint32_t *n) {
  if (PyUnicode_Check(seq_obj) || PyBytes_Check(seq_obj) || PyByteArray_Check(seq_obj)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a sequence of int", ctx, what);
    return -1;
  }
  PyObject *seq = PySequence_Fast(seq_obj, "");
  if (seq == NULL) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: %s must be a sequence of int, not %.100s", ctx, what,
                 Py_TYPE(seq_obj)->tp_name);
    return -1;
  }
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  if (len > (Py_ssize_t)HURRAY_MAX_RANK) {
    Py_DECREF(seq);
    hrpy_raise(st->InvalidDescriptorError,
               "%s: %s has %zd entries, one per dimension, and the rank is at most %u", ctx,
               what, len, (unsigned)HURRAY_MAX_RANK);
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    char label[64];
    PyOS_snprintf(label, sizeof label, "%s[%zd]", what, i);
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    int rc;
    if (kind == HRPY_ARR_I64) {
      int64_t v = 0;
      rc = hrpy_arg_i64(st, item, ctx, label, INT64_MIN, INT64_MAX, &v);
      ((int64_t *)out)[i] = v;
    } else if (kind == HRPY_ARR_U64) {
      uint64_t v = 0;
      rc = hrpy_arg_u64(st, item, ctx, label, UINT64_MAX, &v);
      ((uint64_t *)out)[i] = v;
    } else {
      uint32_t v = 0;
      rc = hrpy_arg_u32(st, item, ctx, label, &v);
      ((uint32_t *)out)[i] = v;
    }
    if (rc < 0) {
      Py_DECREF(seq);
      return -1;
    }
  }
  *n = (uint32_t)len;
  Py_DECREF(seq);
  return 0;
}

int hrpy_arg_enum(PyObject *o, const HrpyEnum *e, const char *ctx, const char *what,
                  uint8_t *out) {
  if (!PyUnicode_Check(o)) {
    PyErr_Format(PyExc_TypeError, "%s: %s must be a str, not %.100s", ctx, what,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  for (int i = 0; i < e->count; i++) {
    if (PyUnicode_CompareWithASCIIString(o, e->names[i]) == 0) {
      *out = e->values[i];
      return 0;
    }
  }
  char choices[192] = "";
  for (int i = 0; i < e->count; i++) {
    size_t used = strlen(choices);
    PyOS_snprintf(choices + used, sizeof choices - used, "%s'%s'", i == 0 ? "" : ", ",
                  e->names[i]);
  }
  PyErr_Format(PyExc_ValueError, "%s: invalid %s %R; expected one of %s", ctx, what, o, choices);
  return -1;
}

/* ---- results ------------------------------------------------------------------ */

#define HRPY_TUPLE_OF(name, type, conv)                                 \
  PyObject *name(const type *a, uint32_t n) {                          \
    PyObject *t = PyTuple_New((Py_ssize_t)n);                           \
    for (uint32_t i = 0; t != NULL && i < n; i++) {                     \
      PyObject *v = conv(a[i]);                                         \
      if (v == NULL) {                                                  \
        Py_CLEAR(t);                                                    \
      } else {                                                          \
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);                          \
      }                                                                 \
    }                                                                   \
    return t;                                                           \
  }
HRPY_TUPLE_OF(hrpy_tuple_i64, int64_t, PyLong_FromLongLong)
HRPY_TUPLE_OF(hrpy_tuple_u64, uint64_t, PyLong_FromUnsignedLongLong)
HRPY_TUPLE_OF(hrpy_tuple_u32, uint32_t, PyLong_FromUnsignedLong)
#undef HRPY_TUPLE_OF
