/*
 * io/kv.c - file-level key-value metadata between Python and the C writer and
 * reader (requirements "File metadata").
 *
 * Python -> file (save(..., kv=)):   bool (tested before int) -> bool,
 *   int -> int64 (a value outside int64 raises OverflowError: a value written
 *   from Python never carries the uint64 tag), float -> float64, str ->
 *   string, bytes / bytearray -> bytes, a list or tuple whose elements are all
 *   of one of those kinds -> an array of it (an empty one is written as an
 *   empty int64 array, which reads back as []). Anything else: TypeError.
 * file -> Python (load_kv, File.kv): the inverse; uint64 (written by another
 *   producer) reads back as int, arrays as lists (the C reader refuses a tag
 *   it does not know).
 */
#include "io/kv.h"

#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"

#include <string.h>

/* ---- Python -> C ---------------------------------------------------------------- */

/* The KV kind of a scalar: a HURRAY_KV_* tag, or 0 (not a KV scalar). */
static uint8_t scalar_kind(PyObject *v) {
  if (PyBool_Check(v)) return HURRAY_KV_BOOL; /* before int: bool is an int */
  if (PyLong_Check(v)) return HURRAY_KV_INT64;
  if (PyFloat_Check(v)) return HURRAY_KV_FLOAT64;
  if (PyUnicode_Check(v)) return HURRAY_KV_STRING;
  if (PyBytes_Check(v) || PyByteArray_Check(v)) return HURRAY_KV_BYTES;
  return 0;
}

static const char *kind_name(uint8_t k) {
  switch (k) {
    case HURRAY_KV_BOOL: return "bool";
    case HURRAY_KV_INT64: return "int";
    case HURRAY_KV_FLOAT64: return "float";
    case HURRAY_KV_STRING: return "str";
    case HURRAY_KV_BYTES: return "bytes";
    default: return "?";
  }
}

static void *keep(HrpyKvList *l, size_t bytes) { return hrpy_arena_alloc(&l->arena, bytes); }

static int int64_of(PyObject *v, PyObject *key, int64_t *out) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) return -1;
  if (overflow != 0) {
    PyErr_Format(PyExc_OverflowError,
                 "kv[%R]: %R does not fit in int64, the type a Python int is written as "
                 "(store it as a str or bytes)",
                 key, v);
    return -1;
  }
  *out = (int64_t)x;
  return 0;
}

/* A string or bytes payload (borrowed from `v`, which the list keeps alive). */
static int str_of(PyObject *v, PyObject *key, HurrayKvString *out) {
  Py_ssize_t n = 0;
  const char *s = PyUnicode_AsUTF8AndSize(v, &n);
  if (s == NULL) return -1;
  if ((uint64_t)n > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "kv[%R]: a string of %zd bytes exceeds 4 GiB", key, n);
    return -1;
  }
  out->data = s;
  out->len = (uint32_t)n;
  return 0;
}

static int bytes_of(HrpyKvList *l, PyObject *v, PyObject *key, HurrayKvBytes *out) {
  if (!PyBytes_Check(v)) {
    /* a bytearray may be resized while the GIL is released: write a copy */
    PyObject *copy = PyBytes_FromObject(v);
    if (copy == NULL) return -1;
    int rc = PyList_Append(l->items, copy);
    Py_DECREF(copy); /* kept alive by l->items */
    if (rc < 0) return -1;
    v = copy;
  }
  const char *p = PyBytes_AS_STRING(v);
  Py_ssize_t n = PyBytes_GET_SIZE(v);
  if ((uint64_t)n > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "kv[%R]: a value of %zd bytes exceeds 4 GiB", key, n);
    return -1;
  }
  out->data = (const uint8_t *)p;
  out->len = (uint32_t)n;
  return 0;
}

/* A scalar `v` of KV kind k (scalar_kind). */
static int scalar_of(HrpyKvList *l, PyObject *key, PyObject *v, uint8_t k, HurrayKvValue *out) {
  memset(out, 0, sizeof *out);
  out->tag = k;
  switch (k) {
    case HURRAY_KV_BOOL: out->v.b = v == Py_True; return 0;
    case HURRAY_KV_INT64: return int64_of(v, key, &out->v.i64);
    case HURRAY_KV_FLOAT64:
      out->v.f64 = PyFloat_AsDouble(v);
      return out->v.f64 == -1.0 && PyErr_Occurred() ? -1 : 0;
    case HURRAY_KV_STRING: return str_of(v, key, &out->v.str);
    default: return bytes_of(l, v, key, &out->v.bytes);
  }
}

static int value_of(HrpyKvList *l, PyObject *key, PyObject *v, HurrayKvValue *out) {
  uint8_t k = scalar_kind(v);
  if (k != 0) return scalar_of(l, key, v, k, out);
  if (!PyList_Check(v) && !PyTuple_Check(v)) {
    PyErr_Format(PyExc_TypeError,
                 "kv[%R]: a %.100s cannot be stored; KV values are bool, int, float, str, "
                 "bytes, or a list of one of those",
                 key, Py_TYPE(v)->tp_name);
    return -1;
  }
  /* An array: every element of the first element's kind. The sequence is
   * held by the list (items), and a list may not change under us: copy the
   * element references into a tuple first. */
  PyObject *seq = PySequence_Tuple(v);
  if (seq == NULL) return -1;
  if (PyList_Append(l->items, seq) < 0) {
    Py_DECREF(seq);
    return -1;
  }
  Py_DECREF(seq); /* kept alive by l->items */
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if ((uint64_t)n > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "kv[%R]: an array of %zd elements is too long", key, n);
    return -1;
  }
  uint8_t ek = n == 0 ? HURRAY_KV_INT64 : scalar_kind(PyTuple_GET_ITEM(seq, 0));
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *e = PyTuple_GET_ITEM(seq, i);
    uint8_t k2 = scalar_kind(e);
    if (k2 == 0 || k2 != ek) {
      if (k2 == 0 && (PyList_Check(e) || PyTuple_Check(e)))
        PyErr_Format(PyExc_TypeError, "kv[%R]: arrays of arrays cannot be stored", key);
      else if (k2 == 0 || ek == 0)
        PyErr_Format(PyExc_TypeError,
                     "kv[%R]: element %zd is a %.100s; array elements are bool, int, float, "
                     "str or bytes",
                     key, k2 == 0 ? i : (Py_ssize_t)0,
                     Py_TYPE(k2 == 0 ? e : PyTuple_GET_ITEM(seq, 0))->tp_name);
      else
        PyErr_Format(PyExc_TypeError,
                     "kv[%R]: an array holds one type; element 0 is a %s, element %zd a %s",
                     key, kind_name(ek), i, kind_name(k2));
      return -1;
    }
  }
  /* each element converted as a scalar, then laid out by the library */
  HurrayKvValue *elems = keep(l, (size_t)(n ? n : 1) * sizeof *elems);
  void *storage = keep(l, (size_t)(n ? n : 1) * sizeof *elems);
  if (elems == NULL || storage == NULL) return -1;
  for (Py_ssize_t i = 0; i < n; i++)
    if (scalar_of(l, key, PyTuple_GET_ITEM(seq, i), ek, &elems[i]) < 0) return -1;
  HRPY_CANNOT_FAIL(hurray_kv_array_pack(ek, elems, (uint32_t)n, storage, out, NULL));
  return 0;
}

int hrpy_kv_from_mapping(HrpyState *st, PyObject *kv, HrpyKvList *l) {
  (void)st;
  memset(l, 0, sizeof *l);
  l->items = PyList_New(0);
  if (l->items == NULL) return -1;
  if (kv == NULL || kv == Py_None) return 0;
  if (!PyDict_Check(kv) && !PyObject_HasAttrString(kv, "items")) {
    PyErr_Format(PyExc_TypeError, "kv must be a dict of str to values, not %.100s",
                 Py_TYPE(kv)->tp_name);
    return -1;
  }
  PyObject *pairs = PyMapping_Items(kv);
  if (pairs == NULL) return -1;
  int rc = PyList_Append(l->items, pairs);
  Py_DECREF(pairs); /* kept alive by l->items */
  if (rc < 0) return -1;
  Py_ssize_t n = PyList_GET_SIZE(pairs);
  l->keys = keep(l, (size_t)n * sizeof *l->keys);
  l->key_lens = keep(l, (size_t)n * sizeof *l->key_lens);
  l->values = keep(l, (size_t)n * sizeof *l->values);
  if (l->keys == NULL || l->key_lens == NULL || l->values == NULL) return -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *pair = PyList_GET_ITEM(pairs, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "kv.items() must yield (key, value) pairs");
      return -1;
    }
    PyObject *key = PyTuple_GET_ITEM(pair, 0), *value = PyTuple_GET_ITEM(pair, 1);
    if (!PyUnicode_Check(key)) {
      PyErr_Format(PyExc_TypeError, "kv keys must be str, not %.100s", Py_TYPE(key)->tp_name);
      return -1;
    }
    Py_ssize_t klen = 0;
    const char *k = PyUnicode_AsUTF8AndSize(key, &klen);
    if (k == NULL) return -1;
    l->keys[i] = k;
    l->key_lens[i] = (size_t)klen;
    if (value_of(l, key, value, &l->values[i]) < 0) return -1;
    l->count = (size_t)i + 1;
  }
  return 0;
}

void hrpy_kv_list_free(HrpyKvList *l) {
  hrpy_arena_free(&l->arena);
  Py_CLEAR(l->items);
  memset(l, 0, sizeof *l);
}

/* ---- C -> Python ------------------------------------------------------------------ */

static PyObject *str_to_py(const HurrayKvString *s) {
  return PyUnicode_DecodeUTF8(s->data != NULL ? s->data : "", (Py_ssize_t)s->len, "strict");
}
static PyObject *bytes_to_py(const HurrayKvBytes *b) {
  return PyBytes_FromStringAndSize(b->data != NULL ? (const char *)b->data : "",
                                   (Py_ssize_t)b->len);
}

PyObject *hrpy_kv_value_to_py(HrpyState *st, PyObject *key, const HurrayKvValue *v) {
  switch (v->tag) {
    case HURRAY_KV_STRING: return str_to_py(&v->v.str);
    case HURRAY_KV_INT64: return PyLong_FromLongLong(v->v.i64);
    case HURRAY_KV_UINT64: return PyLong_FromUnsignedLongLong(v->v.u64);
    case HURRAY_KV_FLOAT64: return PyFloat_FromDouble(v->v.f64);
    case HURRAY_KV_BOOL: return PyBool_FromLong(v->v.b);
    case HURRAY_KV_BYTES: return bytes_to_py(&v->v.bytes);
    case HURRAY_KV_ARRAY: /* the C reader refuses any other tag */
      if (v->elem_tag >= HURRAY_KV_STRING && v->elem_tag <= HURRAY_KV_BYTES) break;
      /* fall through */
    default:
      return hrpy_raise(st->InternalError, "kv[%R]: the C reader handed out tag 0x%s", key,
                        hrpy_hex(v->tag == HURRAY_KV_ARRAY ? v->elem_tag : v->tag).s);
  }
  PyObject *list = PyList_New((Py_ssize_t)v->count);
  for (uint32_t i = 0; list != NULL && i < v->count; i++) {
    PyObject *e;
    switch (v->elem_tag) {
      case HURRAY_KV_STRING: e = str_to_py(&v->v.str_array[i]); break;
      case HURRAY_KV_INT64: e = PyLong_FromLongLong(v->v.i64_array[i]); break;
      case HURRAY_KV_UINT64: e = PyLong_FromUnsignedLongLong(v->v.u64_array[i]); break;
      case HURRAY_KV_FLOAT64: e = PyFloat_FromDouble(v->v.f64_array[i]); break;
      case HURRAY_KV_BOOL: e = PyBool_FromLong(v->v.bool_array[i]); break;
      default: e = bytes_to_py(&v->v.bytes_array[i]); break;
    }
    if (e == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, e);
  }
  return list;
}

/* What one decoded value costs as Python objects, roughly and from above
 * (CPython on a 64-bit platform): a list is a header plus one slot per
 * element, ints and floats are objects of their own, True and False are
 * shared, a str or bytes is a header plus its bytes. */
static uint64_t scalar_cost(uint8_t tag, uint32_t len) {
  switch (tag) {
    case HURRAY_KV_BOOL: return 0;
    case HURRAY_KV_INT64:
    case HURRAY_KV_UINT64: return 36;
    case HURRAY_KV_FLOAT64: return 24;
    case HURRAY_KV_STRING: return 80 + (uint64_t)len;
    default: return 40 + (uint64_t)len; /* bytes */
  }
}

static uint64_t value_cost(const HurrayKvValue *v) {
  if (v->tag != HURRAY_KV_ARRAY)
    return scalar_cost(v->tag, v->tag == HURRAY_KV_STRING  ? v->v.str.len
                               : v->tag == HURRAY_KV_BYTES ? v->v.bytes.len
                                                           : 0);
  uint64_t total = 56 + 8u * (uint64_t)v->count;
  for (uint32_t i = 0; i < v->count; i++) {
    uint32_t len = v->elem_tag == HURRAY_KV_STRING  ? v->v.str_array[i].len
                   : v->elem_tag == HURRAY_KV_BYTES ? v->v.bytes_array[i].len
                                                    : 0;
    total += scalar_cost(v->elem_tag, len);
    if (v->elem_tag != HURRAY_KV_STRING && v->elem_tag != HURRAY_KV_BYTES) {
      total += (uint64_t)(v->count - 1u - i) * scalar_cost(v->elem_tag, 0);
      break; /* fixed-size elements: one multiplication */
    }
  }
  return total;
}

PyObject *hrpy_kv_to_dict(HrpyState *st, const HurrayFile *f, uint64_t max_memory, bool own) {
  uint32_t count = hurray_file_kv_count(f);
  if (max_memory != UINT64_MAX) {
    /* Bound what the dict will take before building it: a small section of
     * arrays (a million bools is a megabyte on disk) decodes to many times
     * its size as Python objects. */
    uint64_t need = 0;
    for (uint32_t i = 0; i < count; i++) {
      const char *k = NULL;
      size_t klen = 0;
      const HurrayKvValue *v = NULL;
      if (hurray_file_kv_get(f, i, &k, &klen, &v) != HURRAY_OK) break; /* raised below */
      need += 160 + klen + value_cost(v);
    }
    if (need > max_memory)
      return hrpy_raise(st->FileError,
                        "kv: the file's KV section would take about %llu MiB as Python objects, "
                        "over max_kv_memory (%llu MiB); pass a larger max_kv_memory (or None) "
                        "to read it",
                        (unsigned long long)(need >> 20), (unsigned long long)(max_memory >> 20));
  }
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    const char *k = NULL;
    size_t klen = 0;
    const HurrayKvValue *v = NULL;
    HurrayStatus rc = hurray_file_kv_get(f, i, &k, &klen, &v);
    if (rc != HURRAY_OK) {
      Py_DECREF(d);
      return hrpy_raise_status(st, rc, NULL, "kv");
    }
    if (!own && hurray_file_kv_is_own(k, klen)) continue;
    PyObject *key = PyUnicode_DecodeUTF8(k, (Py_ssize_t)klen, "strict");
    PyObject *val = key != NULL ? hrpy_kv_value_to_py(st, key, v) : NULL;
    if (val == NULL || PyDict_SetItem(d, key, val) < 0) {
      Py_XDECREF(key);
      Py_XDECREF(val);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(key);
    Py_DECREF(val);
  }
  return d;
}

int hrpy_kv_max_memory_arg(PyObject *o, uint64_t *out) {
  *out = HRPY_KV_MAX_MEMORY_DEFAULT;
  if (o == NULL) return 0;
  if (o == Py_None) {
    *out = UINT64_MAX;
    return 0;
  }
  return hrpy_arg_uint_as(PyExc_ValueError, o, "kv", "max_kv_memory", UINT64_MAX - 1u, out);
}
