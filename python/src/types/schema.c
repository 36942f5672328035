/*
 * types/schema.c - fields of a layout or a quantization scheme, by kind
 * (libhurray's tables, include/hurray/schema.h): one way to read a field
 * into Python, to print it in a repr and to parse a constructor argument
 * into it. types/layout.c, types/layout_types.c and types/quant.c build
 * every class from these.
 */
#include "types/schema.h"

#include "core/dtype.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"

#include <stdlib.h>
#include <string.h>

#define FIELD_FLAGS_KNOWN                                                                   \
  (HURRAY_FIELD_OPTIONAL | HURRAY_FIELD_NULLABLE | HURRAY_FIELD_CONDITIONAL |               \
   HURRAY_FIELD_FIXED | HURRAY_FIELD_IN_LEVEL | HURRAY_FIELD_SYMMETRIC |                    \
   HURRAY_FIELD_GIVES_RANK | HURRAY_FIELD_PRIVATE_VALUES | HURRAY_FIELD_MASKED)

int hrpy_fields_check(const HurrayFieldInfo *fields, uint32_t count, const char *owner) {
  if (count > HRPY_MAX_FIELDS) {
    PyErr_Format(PyExc_SystemError, "%s: %u fields, more than this build handles", owner,
                 (unsigned)count);
    return -1;
  }
  for (uint32_t i = 0; i < count; i++) {
    const HurrayFieldInfo *f = &fields[i];
    if (f->kind < HURRAY_VALUE_BOOL || f->kind > HURRAY_VALUE_F64 ||
        (f->flags & ~FIELD_FLAGS_KNOWN) != 0 ||
        ((f->flags & HURRAY_FIELD_CONDITIONAL) && f->when_field >= count)) {
      PyErr_Format(PyExc_SystemError, "%s.%s: a field this build cannot bind", owner, f->name);
      return -1;
    }
  }
  return 0;
}

/* ---- reading ------------------------------------------------------------------ */

static char *addr(const HrpyRecord *r, const HurrayFieldInfo *f) {
  return ((f->flags & HURRAY_FIELD_IN_LEVEL) ? r->level : r->base) + f->offset;
}

static uint32_t entries(const HrpyRecord *r, const HurrayFieldInfo *f) {
  if (f->count == HURRAY_COUNT_RANK) return r->n;
  uint32_t n = 0;
  if (f->count == HURRAY_COUNT_FIELD) memcpy(&n, r->base + f->count_offset, sizeof n);
  return n;
}

static const void *pointer_at(const char *p) {
  const void *v;
  memcpy(&v, p, sizeof v);
  return v;
}

uint64_t hrpy_record_u64(const HrpyRecord *r, uint32_t i) {
  const HurrayFieldInfo *f = &r->fields[i];
  const char *p = addr(r, f);
  switch (f->kind) {
    case HURRAY_VALUE_BOOL:
    case HURRAY_VALUE_ENUM:
    case HURRAY_VALUE_TYPE_TAG:
    case HURRAY_VALUE_U8: return (uint8_t)*p;
    case HURRAY_VALUE_U32:
    case HURRAY_VALUE_BUFFER_INDEX: {
      uint32_t v;
      memcpy(&v, p, sizeof v);
      return v;
    }
    case HURRAY_VALUE_I32: {
      int32_t v;
      memcpy(&v, p, sizeof v);
      return (uint64_t)(int64_t)v;
    }
    case HURRAY_VALUE_U64: {
      uint64_t v;
      memcpy(&v, p, sizeof v);
      return v;
    }
    default: return 0;
  }
}

/* The validity mask a MASKED field's presence is read from. */
static uint32_t mask_of(const HrpyRecord *r, const HurrayFieldInfo *f) {
  uint32_t m;
  memcpy(&m, r->base + f->mask_offset, sizeof m);
  return m;
}

bool hrpy_record_present(const HrpyRecord *r, uint32_t i) {
  const HurrayFieldInfo *f = &r->fields[i];
  if ((f->flags & HURRAY_FIELD_MASKED) && (mask_of(r, f) & f->mask_bit) == 0) return false;
  if ((f->flags & HURRAY_FIELD_CONDITIONAL) &&
      hrpy_record_u64(r, f->when_field) != f->when_value)
    return false;
  if ((f->flags & HURRAY_FIELD_NULLABLE) && hrpy_record_u64(r, i) == f->absent_value)
    return false;
  if (f->kind >= HURRAY_VALUE_U32_ARRAY && f->kind <= HURRAY_VALUE_U64_ARRAY &&
      (f->flags & HURRAY_FIELD_CONDITIONAL) && pointer_at(addr(r, f)) == NULL)
    return false;
  return true;
}

PyObject *hrpy_record_get(HrpyState *st, const HrpyRecord *r, uint32_t i) {
  const HurrayFieldInfo *f = &r->fields[i];
  if (!hrpy_record_present(r, i)) Py_RETURN_NONE;
  const char *p = addr(r, f);
  switch (f->kind) {
    case HURRAY_VALUE_BOOL: return PyBool_FromLong(*p != 0);
    case HURRAY_VALUE_ENUM: {
      const char *name = hurray_field_value_name(f, (uint8_t)*p);
      return PyUnicode_FromString(name != NULL ? name : "unknown");
    }
    case HURRAY_VALUE_TYPE_TAG: return hrpy_dtype_from_tag(st, (uint8_t)*p);
    case HURRAY_VALUE_I32: return PyLong_FromLongLong((long long)(int64_t)hrpy_record_u64(r, i));
    case HURRAY_VALUE_F32: {
      float v;
      memcpy(&v, p, sizeof v);
      return PyFloat_FromDouble((double)v);
    }
    case HURRAY_VALUE_F64: {
      double v;
      memcpy(&v, p, sizeof v);
      return PyFloat_FromDouble(v);
    }
    case HURRAY_VALUE_U32_ARRAY: return hrpy_tuple_u32(pointer_at(p), entries(r, f));
    case HURRAY_VALUE_I64_ARRAY: return hrpy_tuple_i64(pointer_at(p), entries(r, f));
    case HURRAY_VALUE_U64_ARRAY: return hrpy_tuple_u64(pointer_at(p), entries(r, f));
    case HURRAY_VALUE_BYTES:
      return PyBytes_FromStringAndSize(pointer_at(p), (Py_ssize_t)entries(r, f));
    case HURRAY_VALUE_NESTED:
      PyErr_SetString(PyExc_SystemError, "a nested field is read by its class");
      return NULL;
    default: return PyLong_FromUnsignedLongLong(hrpy_record_u64(r, i));
  }
}

/* ---- repr ----------------------------------------------------------------------- */

/* The shortest decimal that reads back as the same float32. */
static void f32_text(float v, char *out, size_t n) {
  for (int p = 1; p <= 9; p++) {
    PyOS_snprintf(out, n, "%.*g", p, (double)v);
    if ((float)strtod(out, NULL) == v) break;
  }
  if (strpbrk(out, ".eni") == NULL) {
    size_t used = strlen(out);
    PyOS_snprintf(out + used, n - used, ".0");
  }
}

/* "name=value" of field i (new reference), or Py_None (new) to leave it out. */
static PyObject *field_text(HrpyState *st, const HrpyRecord *r, uint32_t i, PyObject *nested) {
  const HurrayFieldInfo *f = &r->fields[i];
  bool present = hrpy_record_present(r, i);
  if ((f->flags & HURRAY_FIELD_FIXED) ||
      (!present &&
       (f->flags & (HURRAY_FIELD_CONDITIONAL | HURRAY_FIELD_SYMMETRIC | HURRAY_FIELD_MASKED))))
    Py_RETURN_NONE;
  if (!present) return PyUnicode_FromFormat("%s=None", f->name);
  const char *p = addr(r, f);
  switch (f->kind) {
    case HURRAY_VALUE_NESTED: return PyUnicode_FromFormat("%s=%S", f->name, nested);
    case HURRAY_VALUE_ENUM:
    case HURRAY_VALUE_TYPE_TAG: {
      const char *name = hurray_field_value_name(f, (uint8_t)*p);
      if (f->kind == HURRAY_VALUE_TYPE_TAG && name == NULL) name = hurray_dtype_name((uint8_t)*p);
      return PyUnicode_FromFormat(f->kind == HURRAY_VALUE_ENUM ? "%s='%s'" : "%s=%s", f->name,
                                  name != NULL ? name : "?");
    }
    case HURRAY_VALUE_F32: {
      float v;
      char text[48];
      memcpy(&v, p, sizeof v);
      f32_text(v, text, sizeof text);
      return PyUnicode_FromFormat("%s=%s", f->name, text);
    }
    case HURRAY_VALUE_BYTES:
      return PyUnicode_FromFormat("%s=%u bytes", f->name, (unsigned)entries(r, f));
    default: {
      PyObject *v = hrpy_record_get(st, r, i);
      if (v == NULL) return NULL;
      PyObject *t = PyUnicode_FromFormat("%s=%R", f->name, v);
      Py_DECREF(v);
      return t;
    }
  }
}

PyObject *hrpy_record_repr(HrpyState *st, const char *cls, const char *lead, const HrpyRecord *r,
                           PyObject *nested) {
  PyObject *parts = PyList_New(0);
  if (parts == NULL) return NULL;
  if (lead != NULL) {
    PyObject *t = PyUnicode_FromString(lead);
    if (t == NULL || PyList_Append(parts, t) < 0) {
      Py_XDECREF(t);
      Py_DECREF(parts);
      return NULL;
    }
    Py_DECREF(t);
  }
  for (uint32_t i = 0; i < r->count; i++) {
    PyObject *t = field_text(st, r, i, nested);
    if (t == NULL || (t != Py_None && PyList_Append(parts, t) < 0)) {
      Py_XDECREF(t);
      Py_DECREF(parts);
      return NULL;
    }
    Py_DECREF(t);
  }
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *body = sep != NULL ? PyUnicode_Join(sep, parts) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(parts);
  if (body == NULL) return NULL;
  PyObject *res = PyUnicode_FromFormat("%s(%U)", cls, body);
  Py_DECREF(body);
  return res;
}

/* ---- constructors ----------------------------------------------------------------- */

int hrpy_fields_params(const HurrayFieldInfo *fields, uint32_t count, const char *lead,
                       const char **kw, int *fields_of, int *required) {
  int k = 0;
  bool optional_seen = false;
  *required = 0;
  if (lead != NULL) {
    fields_of[k] = -1;
    kw[k++] = lead;
    (*required)++;
  }
  for (uint32_t i = 0; i < count; i++) {
    const HurrayFieldInfo *f = &fields[i];
    if (f->flags & HURRAY_FIELD_FIXED) continue;
    fields_of[k] = (int)i;
    kw[k++] = f->name;
    if (f->flags & (HURRAY_FIELD_OPTIONAL | HURRAY_FIELD_NULLABLE | HURRAY_FIELD_CONDITIONAL |
                    HURRAY_FIELD_MASKED))
      optional_seen = true;
    else if (!optional_seen)
      (*required)++;
  }
  kw[k] = NULL;
  return k;
}

static void put(char *p, const void *v, size_t n) { memcpy(p, v, n); }

/* A bytes-like object (None: empty) copied into PyMem. */
static int bytes_arg(PyObject *o, const char *ctx, const char *what, uint8_t **mem,
                     uint32_t *len) {
  *mem = NULL;
  *len = 0;
  if (o == NULL || o == Py_None) return 0;
  Py_buffer v;
  if (PyObject_GetBuffer(o, &v, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: %s must be bytes-like, not %.100s", ctx, what,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  int rc = 0;
  if ((uint64_t)v.len > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "%s: %s is longer than 4294967295 bytes", ctx, what);
    rc = -1;
  } else if (v.len > 0) {
    *mem = PyMem_Malloc((size_t)v.len);
    if (*mem == NULL) {
      PyErr_NoMemory();
      rc = -1;
    } else {
      memcpy(*mem, v.buf, (size_t)v.len);
      *len = (uint32_t)v.len;
    }
  }
  PyBuffer_Release(&v);
  return rc;
}

/* A TYPE_TAG argument: any dtype spelling, one of the field's values. */
static int type_tag_arg(HrpyState *st, const HurrayFieldInfo *f, PyObject *o, const char *ctx,
                        uint8_t *out) {
  if (hrpy_dtype_converter(st, o, out) < 0) return -1;
  for (uint32_t k = 0; k < f->value_count; k++)
    if (f->values[k] == *out) return 0;
  char choices[128] = "";
  for (uint32_t k = 0; k < f->value_count; k++) {
    size_t used = strlen(choices);
    PyOS_snprintf(choices + used, sizeof choices - used, "%s%s",
                  k == 0 ? "" : (k + 1 == f->value_count ? " or " : ", "), f->value_names[k]);
  }
  const char *n = hurray_dtype_name(*out);
  hrpy_raise(st->InvalidDescriptorError, "%s: %s must be %s, not %s", ctx, f->name, choices,
             n != NULL ? n : "a private type");
  return -1;
}

/* Stores an integer into a scalar field of any width. */
static void store(const HurrayFieldInfo *f, char *p, uint64_t v) {
  if (f->kind == HURRAY_VALUE_U64) {
    put(p, &v, sizeof v);
  } else if (f->kind == HURRAY_VALUE_U32 || f->kind == HURRAY_VALUE_I32 ||
             f->kind == HURRAY_VALUE_BUFFER_INDEX) {
    uint32_t x = (uint32_t)v;
    put(p, &x, sizeof x);
  } else { /* BOOL, ENUM, TYPE_TAG, U8 */
    *p = (char)(uint8_t)v;
  }
}

/* The integer an argument gives a BOOL, ENUM, TYPE_TAG or integer field. */
static int scalar_arg(HrpyState *st, const HurrayFieldInfo *f, PyObject *o, const char *ctx,
                      uint64_t *v) {
  uint8_t u8 = 0;
  int rc;
  switch (f->kind) {
    case HURRAY_VALUE_BOOL: {
      bool t = false;
      rc = hrpy_arg_bool(o, ctx, f->name, &t);
      u8 = t ? 1 : 0;
      break;
    }
    case HURRAY_VALUE_ENUM: {
      HrpyEnum e = {f->value_names, f->values, (int)f->value_count};
      rc = hrpy_arg_enum(o, &e, ctx, f->name, &u8);
      break;
    }
    case HURRAY_VALUE_TYPE_TAG: rc = type_tag_arg(st, f, o, ctx, &u8); break;
    case HURRAY_VALUE_I32: {
      int64_t x = 0;
      rc = hrpy_arg_i64(st, o, ctx, f->name, INT32_MIN, INT32_MAX, &x);
      *v = (uint64_t)x;
      return rc;
    }
    default: return hrpy_arg_u64(st, o, ctx, f->name, f->max, v); /* U8, U32, U64, BUFFER_INDEX */
  }
  *v = u8;
  return rc;
}

int hrpy_build_field(HrpyState *st, HrpyBuild *b, uint32_t i, PyObject *o, const char *ctx) {
  const HurrayFieldInfo *f = &b->rec.fields[i];
  char *p = addr(&b->rec, f);
  if (o == Py_None && (f->flags & (HURRAY_FIELD_NULLABLE | HURRAY_FIELD_CONDITIONAL |
                                   HURRAY_FIELD_OPTIONAL | HURRAY_FIELD_MASKED)) &&
      (f->kind == HURRAY_VALUE_BYTES || !(f->flags & HURRAY_FIELD_OPTIONAL)))
    o = NULL; /* None spells "not given" where the field can be absent */
  if (o == NULL) { /* the default; arrays, bytes and the nested levels stay NULL */
    if (f->kind < HURRAY_VALUE_U32_ARRAY && f->kind != HURRAY_VALUE_F32)
      store(f, p, (f->flags & HURRAY_FIELD_NULLABLE) ? f->absent_value : f->default_value);
    return 0;
  }
  if (f->flags & HURRAY_FIELD_MASKED) { /* given: its bit claims it */
    uint32_t m = mask_of(&b->rec, f) | f->mask_bit;
    put(b->rec.base + f->mask_offset, &m, sizeof m);
  }
  switch (f->kind) {
    case HURRAY_VALUE_NESTED: return 0; /* the caller's */
    case HURRAY_VALUE_F32:
    case HURRAY_VALUE_F64: {
      double v;
      if (hrpy_arg_float(o, ctx, f->name, &v) < 0) return -1;
      float x = (float)v; /* float32 on the wire */
      if (f->kind == HURRAY_VALUE_F64)
        put(p, &v, sizeof v);
      else
        put(p, &x, sizeof x);
      return 0;
    }
    case HURRAY_VALUE_BYTES: {
      uint32_t len;
      if (bytes_arg(o, ctx, f->name, &b->bytes[i], &len) < 0) return -1;
      const void *data = b->bytes[i];
      put(p, &data, sizeof data);
      put(b->rec.base + f->count_offset, &len, sizeof len);
      return 0;
    }
    case HURRAY_VALUE_U32_ARRAY:
    case HURRAY_VALUE_I64_ARRAY:
    case HURRAY_VALUE_U64_ARRAY: {
      HrpyArrKind k = f->kind == HURRAY_VALUE_U32_ARRAY   ? HRPY_ARR_U32
                      : f->kind == HURRAY_VALUE_I64_ARRAY ? HRPY_ARR_I64
                                                          : HRPY_ARR_U64;
      uint32_t n = 0;
      if (hrpy_arg_int_array(st, o, ctx, f->name, k, b->arrays[i], &n) < 0) return -1;
      if (b->has_rank && n != b->rec.n) {
        hrpy_raise(st->InvalidDescriptorError, "%s: %s has %u entries, %s %u (one per dimension)",
                   ctx, f->name, (unsigned)n, b->rank_from, (unsigned)b->rec.n);
        return -1;
      }
      if (!b->has_rank) b->rank_from = f->name;
      b->has_rank = true;
      b->rec.n = n;
      const void *data = b->arrays[i];
      put(p, &data, sizeof data);
      return 0;
    }
    default: {
      uint64_t v = 0;
      if (scalar_arg(st, f, o, ctx, &v) < 0) return -1;
      store(f, p, v);
      return 0;
    }
  }
}

int hrpy_build_check_conditions(HrpyState *st, const HrpyBuild *b, const bool *given,
                                const char *ctx) {
  for (uint32_t i = 0; i < b->rec.count; i++) {
    const HurrayFieldInfo *f = &b->rec.fields[i];
    if (!(f->flags & HURRAY_FIELD_CONDITIONAL)) continue;
    const HurrayFieldInfo *w = &b->rec.fields[f->when_field];
    bool applies = hrpy_record_u64(&b->rec, f->when_field) == f->when_value;
    if (given[i] == applies) continue;
    const char *wv = hurray_field_value_name(w, f->when_value);
    if (given[i])
      hrpy_raise(st->InvalidDescriptorError, "%s: %s is given only when %s is '%s'", ctx,
                 f->name, w->name, wv);
    else
      hrpy_raise(st->InvalidDescriptorError, "%s: %s '%s' needs %s=", ctx, w->name, wv,
                 f->name);
    return -1;
  }
  return 0;
}

int hrpy_build_check_masks(HrpyState *st, const HrpyBuild *b, const bool *given,
                           const char *ctx) {
  const HurrayFieldInfo *fs = b->rec.fields;
  for (uint32_t i = 0; i < b->rec.count; i++) {
    if (!(fs[i].flags & HURRAY_FIELD_MASKED)) continue;
    uint32_t first = 0, all = 0, got = 0;
    while (fs[first].mask_bit != fs[i].mask_bit || !(fs[first].flags & HURRAY_FIELD_MASKED))
      first++;
    if (first != i) continue; /* that bit's group was judged at its first field */
    for (uint32_t k = i; k < b->rec.count; k++)
      if ((fs[k].flags & HURRAY_FIELD_MASKED) && fs[k].mask_bit == fs[i].mask_bit)
        all++, got += given[k];
    if (got == 0 || got == all) continue;
    char names[160] = "";
    for (uint32_t k = i, seen = 0; k < b->rec.count; k++) {
      if (!(fs[k].flags & HURRAY_FIELD_MASKED) || fs[k].mask_bit != fs[i].mask_bit) continue;
      seen++;
      size_t used = strlen(names);
      PyOS_snprintf(names + used, sizeof names - used, "%s%s",
                    seen == 1 ? "" : seen == all ? " and " : ", ", fs[k].name);
    }
    hrpy_raise(st->InvalidDescriptorError,
               "%s: %s share one validity bit: supply all of them or none", ctx, names);
    return -1;
  }
  return 0;
}

void hrpy_build_release(HrpyBuild *b) {
  for (uint32_t i = 0; i < HRPY_MAX_FIELDS; i++) {
    PyMem_Free(b->bytes[i]);
    b->bytes[i] = NULL;
  }
}

/* ---- getters ------------------------------------------------------------------------ */

PyGetSetDef *hrpy_fields_getset(PyGetSetDef **slot, const PyGetSetDef *common,
                                const HurrayFieldInfo *fields, uint32_t count, getter fn) {
  PyGetSetDef *g = hrpy_load_ptr((void *const *)slot);
  if (g != NULL) return g;
  uint32_t nc = 0;
  while (common != NULL && common[nc].name != NULL) nc++;
  g = PyMem_RawCalloc(nc + count + 1u, sizeof *g);
  if (g == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  for (uint32_t i = 0; i < nc; i++) g[i] = common[i];
  for (uint32_t i = 0; i < count; i++) {
    g[nc + i].name = fields[i].name;
    g[nc + i].get = fn;
    g[nc + i].doc = fields[i].doc;
    g[nc + i].closure = (void *)(uintptr_t)&fields[i];
  }
  if (!hrpy_cas_ptr((void **)slot, NULL, g)) { /* another interpreter was first */
    PyMem_RawFree(g);
    g = hrpy_load_ptr((void *const *)slot);
  }
  return g; /* lives as long as the process: the types of every interpreter point into it */
}
