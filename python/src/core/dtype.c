/*
 * core/dtype.c - hurray.Dtype: one immutable singleton per element type.
 *
 * Named types are created at module init; a private (extension) type
 * 0xF0-0xFE gets its singleton on first use, so Dtype.from_tag(0xF3) is
 * Dtype.from_tag(0xF3). Every private type is named "extension"; the repr
 * carries the tag, which is the only thing telling two of them apart.
 *
 * A descriptor decoded in relay mode may carry a reserved or unassigned tag:
 * its dtype is a singleton named "unknown" (hrpy_dtype_relayed), which reads
 * and relays but cannot author a tensor, and Dtype.from_tag still refuses
 * that tag.
 */
#include "core/dtype.h"

#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  uint8_t tag;
  const HurrayDtypeInfo *info; /* NULL for a private (extension) type */
} HrpyDtype;

#define DTYPE_SELF(o) ((HrpyDtype *)(o))

static bool is_private_tag(uint8_t tag) {
  return tag >= HURRAY_DTYPE_PRIVATE_FIRST && tag <= HURRAY_DTYPE_PRIVATE_LAST;
}

static PyObject *dtype_create(HrpyState *st, uint8_t tag) {
  HrpyDtype *d = PyObject_New(HrpyDtype, st->DtypeType);
  if (d == NULL) return NULL;
  d->tag = tag;
  d->info = hurray_dtype_info(tag);
  return (PyObject *)d;
}

PyObject *hrpy_dtype_from_tag(HrpyState *st, uint8_t tag) {
  PyObject *d = hrpy_peek(&st->dtypes[tag]);
  if (d != NULL && (DTYPE_SELF(d)->info != NULL || is_private_tag(tag))) return Py_NewRef(d);
  if (!is_private_tag(tag)) {
    const char *kind;
    switch (hurray_dtype_tag_kind(tag)) {
      case HURRAY_TAG_RESERVED:
        kind = "reserved";
        break;
      case HURRAY_TAG_UNASSIGNED:
        kind = "unassigned";
        break;
      default:
        kind = "invalid";
        break;
    }
    return hrpy_raise(st->InvalidDescriptorError,
                     "element type tag 0x%02x is %s: it names no type", (unsigned)tag, kind);
  }
  return Py_XNewRef(hrpy_publish(&st->dtypes[tag], dtype_create(st, tag)));
}

PyObject *hrpy_dtype_relayed(HrpyState *st, uint8_t tag) {
  HurrayTagKind k = hurray_dtype_tag_kind(tag);
  if (hurray_dtype_info(tag) != NULL || is_private_tag(tag) ||
      (k != HURRAY_TAG_RESERVED && k != HURRAY_TAG_UNASSIGNED))
    return hrpy_dtype_from_tag(st, tag);
  PyObject *d = hrpy_peek(&st->dtypes[tag]);
  if (d != NULL) return Py_NewRef(d);
  return Py_XNewRef(hrpy_publish(&st->dtypes[tag], dtype_create(st, tag)));
}

int hrpy_dtype_converter(HrpyState *st, PyObject *obj, uint8_t *out_tag) {
  if (hrpy_dtype_check(st, obj)) {
    uint8_t tag = DTYPE_SELF(obj)->tag;
    if (DTYPE_SELF(obj)->info == NULL && !is_private_tag(tag)) {
      hrpy_raise(st->InvalidDescriptorError,
                "element type tag 0x%02x names no type this build knows; a relayed "
                "descriptor's type cannot author a tensor",
                (unsigned)tag);
      return -1;
    }
    *out_tag = tag;
    return 0;
  }
  if (PyUnicode_Check(obj)) {
    const char *name = PyUnicode_AsUTF8(obj);
    if (name == NULL) return -1;
    uint8_t tag;
    if (hurray_dtype_from_name(name, &tag) != HURRAY_OK) {
      hrpy_raise(st->InvalidDescriptorError, "unknown element type name '%s'", name);
      return -1;
    }
    *out_tag = tag;
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "dtype must be a hurray.Dtype or a type name, not %.100s",
               Py_TYPE(obj)->tp_name);
  return -1;
}

/* ---- getters --------------------------------------------------------------- */

static PyObject *dt_name(PyObject *self, void *c) {
  (void)c;
  const HurrayDtypeInfo *i = DTYPE_SELF(self)->info;
  if (i != NULL) return PyUnicode_FromString(i->name);
  return PyUnicode_FromString(is_private_tag(DTYPE_SELF(self)->tag) ? "extension" : "unknown");
}
static PyObject *dt_tag(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(DTYPE_SELF(self)->tag);
}
static PyObject *dt_bit_width(PyObject *self, void *c) {
  (void)c;
  const HurrayDtypeInfo *i = DTYPE_SELF(self)->info;
  if (i == NULL) Py_RETURN_NONE;
  return PyLong_FromLong(i->bit_width);
}
static PyObject *dt_itemsize(PyObject *self, void *c) {
  (void)c;
  const HurrayDtypeInfo *i = DTYPE_SELF(self)->info;
  if (i == NULL || i->bit_width < 8) Py_RETURN_NONE;
  return PyLong_FromLong(i->bit_width / 8);
}
static PyObject *dt_tier(PyObject *self, void *c) {
  (void)c;
  const HurrayDtypeInfo *i = DTYPE_SELF(self)->info;
  if (i == NULL) Py_RETURN_NONE;
  return PyLong_FromLong(i->tier);
}
static PyObject *dt_is_array_api(PyObject *self, void *c) {
  (void)c;
  const HurrayDtypeInfo *i = DTYPE_SELF(self)->info;
  return PyBool_FromLong(i != NULL && i->tier == 1);
}
static PyObject *dt_is_extension(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(is_private_tag(DTYPE_SELF(self)->tag));
}
#define DT_PRED(fn, lib)                              \
  static PyObject *fn(PyObject *self, void *c) {      \
    (void)c;                                          \
    return PyBool_FromLong(lib(DTYPE_SELF(self)->tag)); \
  }
DT_PRED(dt_is_float, hurray_dtype_is_float)
DT_PRED(dt_is_integer, hurray_dtype_is_integer)
DT_PRED(dt_is_signed, hurray_dtype_is_signed)
DT_PRED(dt_is_sub_byte, hurray_dtype_is_sub_byte)
DT_PRED(dt_is_complex, hurray_dtype_is_complex)

static PyGetSetDef dtype_getset[] = {
    {"name", dt_name, NULL, "Canonical spec name ('float32', 'int4'; 'extension' for a private type).", NULL},
    {"tag", dt_tag, NULL, "The wire byte of the type (int).", NULL},
    {"bit_width", dt_bit_width, NULL,
     "Bits per element (1 for bool, 4 for int4); None for a private type, whose width is "
     "declared by the descriptor's extension type section.", NULL},
    {"itemsize", dt_itemsize, NULL, "Bytes per element; None for sub-byte and private types.", NULL},
    {"tier", dt_tier, NULL, "1 or 2 (element-types.md); None for a private type.", NULL},
    {"is_float", dt_is_float, NULL, "True for floating-point types (complex included).", NULL},
    {"is_integer", dt_is_integer, NULL, "True for signed and unsigned integers (not bool).", NULL},
    {"is_signed", dt_is_signed, NULL, "True when the type has a sign.", NULL},
    {"is_sub_byte", dt_is_sub_byte, NULL, "True when an element is narrower than a byte.", NULL},
    {"is_complex", dt_is_complex, NULL, "True for complex64 and complex128.", NULL},
    {"is_array_api", dt_is_array_api, NULL,
     "True for Tier 1 types (the standard numeric vocabulary); same as tier == 1.", NULL},
    {"is_extension", dt_is_extension, NULL, "True for a private type (tag 0xF0-0xFE).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- methods --------------------------------------------------------------- */

static PyObject *dt_from_tag(PyObject *cls, PyObject *arg) {
  HrpyState *st = hrpy_state_of_type((PyTypeObject *)cls);
  uint64_t v;
  if (hrpy_arg_u64(st, arg, "Dtype.from_tag", "tag", 255, &v) < 0) return NULL;
  return hrpy_dtype_from_tag(st, (uint8_t)v);
}

static PyObject *dt_from_name(PyObject *cls, PyObject *arg) {
  HrpyState *st = hrpy_state_of_type((PyTypeObject *)cls);
  if (!PyUnicode_Check(arg)) {
    return PyErr_Format(PyExc_TypeError, "name must be a str, not %.100s",
                        Py_TYPE(arg)->tp_name);
  }
  uint8_t tag;
  if (hrpy_dtype_converter(st, arg, &tag) < 0) return NULL;
  return hrpy_dtype_from_tag(st, tag);
}

static PyObject *dt_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *from_tag = PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_tag");
  if (from_tag == NULL) return NULL;
  return Py_BuildValue("N(i)", from_tag, (int)DTYPE_SELF(self)->tag);
}

static PyMethodDef dtype_methods[] = {
    {"from_tag", dt_from_tag, METH_O | METH_CLASS,
     "from_tag(tag, /)\n--\n\nThe Dtype singleton for a wire tag (0xF0-0xFE give private "
     "extension types). Raises hurray.InvalidDescriptorError for a reserved, unassigned or "
     "invalid tag."},
    {"from_name", dt_from_name, METH_O | METH_CLASS,
     "from_name(name, /)\n--\n\nThe Dtype singleton for a spec name ('float32', 'int4'). "
     "Raises hurray.InvalidDescriptorError for an unknown name."},
    {"__reduce__", dt_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- dunders --------------------------------------------------------------- */

static PyObject *dtype_repr(PyObject *self) {
  HrpyDtype *d = DTYPE_SELF(self);
  if (d->info == NULL) {
    return PyUnicode_FromFormat("hurray.Dtype('%s', tag=0x%02x)",
                                is_private_tag(d->tag) ? "extension" : "unknown",
                                (unsigned)d->tag);
  }
  return PyUnicode_FromFormat("hurray.Dtype('%s')", d->info->name);
}

static PyObject *dtype_str(PyObject *self) {
  HrpyDtype *d = DTYPE_SELF(self);
  if (d->info == NULL)
    return PyUnicode_FromFormat("%s(0x%02x)", is_private_tag(d->tag) ? "extension" : "unknown",
                                (unsigned)d->tag);
  return PyUnicode_FromString(d->info->name);
}

static Py_hash_t dtype_hash(PyObject *self) {
  return (Py_hash_t)0x5eed0000 + (Py_hash_t)DTYPE_SELF(self)->tag;
}

static PyObject *dtype_richcompare(PyObject *a, PyObject *b, int op) {
  if (!Py_IS_TYPE(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = DTYPE_SELF(a)->tag == DTYPE_SELF(b)->tag;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static void dtype_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyType_Slot dtype_slots[] = {
    {Py_tp_doc,
     "A Hurray element type.\n\nDtype objects are singletons: hurray.float32 is "
     "hurray.dtype.float32 is Dtype.from_name('float32'). They cannot be instantiated; "
     "use the module attributes, Dtype.from_tag or Dtype.from_name."},
    {Py_tp_repr, dtype_repr},
    {Py_tp_str, dtype_str},
    {Py_tp_hash, dtype_hash},
    {Py_tp_richcompare, dtype_richcompare},
    {Py_tp_getset, dtype_getset},
    {Py_tp_methods, dtype_methods},
    {Py_tp_dealloc, dtype_dealloc},
    {0, NULL},
};

static PyType_Spec dtype_spec = {
    .name = "hurray.Dtype",
    .basicsize = sizeof(HrpyDtype),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = dtype_slots,
};

static PyObject *dtype_table(PyObject *m, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of_module(m);
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (int tag = 0; tag < 256; tag++) {
    const HurrayDtypeInfo *i = hurray_dtype_info((uint8_t)tag);
    if (i == NULL || st->dtypes[tag] == NULL) continue;
    if (PyDict_SetItemString(d, i->name, st->dtypes[tag]) < 0) {
      Py_DECREF(d);
      return NULL;
    }
  }
  return d;
}

static PyMethodDef dtype_table_def = {
    "_dtype_table", dtype_table, METH_NOARGS,
    "_dtype_table()\n--\n\nDict of every named element type: name -> Dtype singleton."};

int hrpy_dtype_init(PyObject *m, HrpyState *st) {
  st->DtypeType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &dtype_spec, NULL);
  if (st->DtypeType == NULL) return -1;
  if (PyModule_AddType(m, st->DtypeType) < 0) return -1;
  for (int tag = 0; tag < 256; tag++) {
    if (hurray_dtype_info((uint8_t)tag) == NULL) continue;
    st->dtypes[tag] = dtype_create(st, (uint8_t)tag);
    if (st->dtypes[tag] == NULL) return -1;
  }
  PyObject *fn = PyCFunction_NewEx(&dtype_table_def, m, NULL);
  if (fn == NULL) return -1;
  int rc = PyModule_AddObjectRef(m, "_dtype_table", fn);
  Py_DECREF(fn);
  return rc;
}
