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
#include "util/runtime.h"
#include "core/state.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  uint8_t tag;
  const HurrayDtypeInfo *info; /* NULL for a private (extension) type */
} HrpyDtype;

#define DTYPE_SELF(o) ((HrpyDtype *)(o))

static bool is_private_tag(uint8_t tag) {
  return hurray_dtype_tag_kind(tag) == HURRAY_TAG_PRIVATE;
}

static PyObject *dtype_create(HrpyState *st, uint8_t tag) {
  HrpyDtype *d = PyObject_New(HrpyDtype, st->core->DtypeType);
  if (d == NULL) return NULL;
  d->tag = tag;
  d->info = hurray_dtype_info(tag);
  return (PyObject *)d;
}

PyObject *hrpy_dtype_from_tag(HrpyState *st, uint8_t tag) {
  PyObject *d = hrpy_peek(&st->core->dtypes[tag]);
  if (d != NULL && (DTYPE_SELF(d)->info != NULL || is_private_tag(tag))) return Py_NewRef(d);
  if (!is_private_tag(tag))
    return hrpy_raise(st->InvalidDescriptorError, "element type tag 0x%02x is %s: it names no type",
                      (unsigned)tag, hurray_tag_kind_name(hurray_dtype_tag_kind(tag)));
  return Py_XNewRef(hrpy_publish(&st->core->dtypes[tag], dtype_create(st, tag)));
}

PyObject *hrpy_dtype_relayed(HrpyState *st, uint8_t tag) {
  HurrayTagKind k = hurray_dtype_tag_kind(tag);
  if (hurray_dtype_info(tag) != NULL || is_private_tag(tag) ||
      (k != HURRAY_TAG_RESERVED && k != HURRAY_TAG_UNASSIGNED))
    return hrpy_dtype_from_tag(st, tag);
  PyObject *d = hrpy_peek(&st->core->dtypes[tag]);
  if (d != NULL) return Py_NewRef(d);
  return Py_XNewRef(hrpy_publish(&st->core->dtypes[tag], dtype_create(st, tag)));
}

/* ---- what dtype= accepts ------------------------------------------------------
 *
 * A hurray.Dtype; a hurray type name; the names NumPy (with ml_dtypes), PyTorch
 * and safetensors give the same types; numpy.dtype objects and NumPy scalar
 * types (np.float32, ml_dtypes.bfloat16); torch.dtype objects; and the Python
 * types float, int, bool and complex as NumPy reads them. A foreign type with
 * no hurray equivalent raises UnsupportedError saying so; an unknown name
 * raises InvalidDescriptorError listing the valid names, with the closest
 * one first. */

/* A name another library gives (hurray_dtype_from_alias: the alias tables
 * are the C library's). 0 with *out_tag; else -1 with UnsupportedError for a
 * foreign type hurray has no equivalent of, or, when `unknown` is NULL,
 * InvalidDescriptorError listing the valid names (the closest first); with
 * `unknown`, *unknown = 1 and no exception for a name nobody gives. */
static int alias_to_tag(HrpyState *st, const char *what, const char *name, uint8_t *out_tag,
                        int *unknown) {
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus rc = hurray_dtype_from_alias(name, out_tag, &e);
  if (rc == HURRAY_OK) return 0;
  const char *why = rc == HURRAY_ERR_UNSUPPORTED ? e.reason : NULL;
  if (what != NULL) { /* a NumPy or torch dtype object */
    hrpy_raise(st->UnsupportedError, "dtype: %s %.100s has no hurray element type%s%s", what,
               name, why != NULL ? ": " : "", why != NULL ? why : "");
    return -1;
  }
  if (why != NULL) {
    hrpy_raise(st->UnsupportedError, "dtype '%.100s' has no hurray element type: %s", name, why);
    return -1;
  }
  if (unknown != NULL) {
    *unknown = 1;
    return -1;
  }
  char valid[700];
  size_t used = 0;
  valid[0] = '\0';
  for (unsigned tag = 0; tag < 256; tag++) {
    const char *n = hurray_dtype_name((uint8_t)tag);
    int w = n != NULL ? PyOS_snprintf(valid + used, sizeof valid - used, "%s%s",
                                      used ? ", " : "", n) : 0;
    if (w > 0 && (size_t)w < sizeof valid - used) used += (size_t)w;
  }
  bool close = strncmp(e.reason, "did you", 7) == 0; /* "did you mean 'float32'?" */
  hrpy_raise(st->InvalidDescriptorError,
             "unknown element type name '%.100s'%s%s Valid names: %s (NumPy, PyTorch and "
             "safetensors names of the same types are accepted too)",
             name, close ? "; " : ".", close ? e.reason : "", valid);
  return -1;
}

/* NumPy's float128 is the C long double: IEEE binary128 on some platforms
 * (AArch64 Linux), x87 80-bit extended precision padded to 16 bytes on x86. */
static bool longdouble_is_binary128(PyObject *d) {
  PyObject *np = PyImport_ImportModule("numpy");
  PyObject *fi = np != NULL ? PyObject_CallMethod(np, "finfo", "O", d) : NULL;
  PyObject *nmant = fi != NULL ? PyObject_GetAttrString(fi, "nmant") : NULL;
  long m = nmant != NULL ? PyLong_AsLong(nmant) : -1;
  Py_XDECREF(nmant);
  Py_XDECREF(fi);
  Py_XDECREF(np);
  PyErr_Clear();
  return m == 112;
}

/* numpy.dtype instances and NumPy scalar types (ml_dtypes' included). 1 when
 * obj is one (converted, or an error set and -1 returned), 0 when it is not. */
static int numpy_converter(HrpyState *st, PyObject *obj, uint8_t *out_tag, int *rc) {
  PyObject *modname = PyUnicode_FromString("numpy");
  if (modname == NULL) return *rc = -1, 1;
  PyObject *np = PyImport_GetModule(modname);
  Py_DECREF(modname);
  if (np == NULL) {
    if (PyErr_Occurred()) return *rc = -1, 1;
    return 0; /* NumPy not loaded: obj cannot be one of its types */
  }
  int is = 0;
  PyObject *dtype_cls = PyObject_GetAttrString(np, "dtype");
  PyObject *generic = dtype_cls != NULL ? PyObject_GetAttrString(np, "generic") : NULL;
  if (generic != NULL) {
    is = PyObject_IsInstance(obj, dtype_cls);
    if (is == 0 && PyType_Check(obj)) is = PyObject_IsSubclass(obj, generic);
  }
  if (generic == NULL || is < 0) {
    Py_XDECREF(dtype_cls), Py_XDECREF(generic), Py_DECREF(np);
    return *rc = -1, 1;
  }
  Py_DECREF(generic);
  Py_DECREF(np);
  if (!is) {
    Py_DECREF(dtype_cls);
    return 0;
  }
  PyObject *d = PyObject_CallOneArg(dtype_cls, obj);
  Py_DECREF(dtype_cls);
  PyObject *name = d != NULL ? PyObject_GetAttrString(d, "name") : NULL;
  PyObject *native = name != NULL ? PyObject_GetAttrString(d, "isnative") : NULL;
  *rc = -1;
  if (native != NULL) {
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (s != NULL && !PyObject_IsTrue(native))
      hrpy_raise(st->UnsupportedError,
                 "dtype: NumPy dtype %R is not in native byte order; hurray stores "
                 "little-endian data: convert with .astype(%R)",
                 d, name);
    else if (s != NULL && (strcmp(s, "float128") == 0 || strcmp(s, "float96") == 0) &&
             !longdouble_is_binary128(d))
      hrpy_raise(st->UnsupportedError,
                 "dtype: NumPy's %s is this platform's long double (x87 extended precision), "
                 "not IEEE binary128 (hurray's float128)",
                 s);
    else if (s != NULL)
      *rc = alias_to_tag(st, "NumPy dtype", s, out_tag, NULL);
  }
  Py_XDECREF(native);
  Py_XDECREF(name);
  Py_XDECREF(d);
  return 1;
}

/* torch.dtype objects, by their str() ("torch.float32"). */
static int torch_converter(HrpyState *st, PyObject *obj, uint8_t *out_tag, int *rc) {
  PyTypeObject *tp = Py_TYPE(obj);
  if (strcmp(tp->tp_name, "torch.dtype") != 0) return 0;
  PyObject *s = PyObject_Str(obj);
  const char *c = s != NULL ? PyUnicode_AsUTF8(s) : NULL;
  *rc = -1;
  if (c != NULL)
    *rc = alias_to_tag(st, "torch dtype", strncmp(c, "torch.", 6) == 0 ? c + 6 : c, out_tag,
                       NULL);
  Py_XDECREF(s);
  return 1;
}

/* A name as a user may write it: ours, an alias, "torch.float32", or (when
 * NumPy is loaded) anything numpy.dtype() understands ("f4", "<i8", "float"). */
static int string_converter(HrpyState *st, PyObject *obj, uint8_t *out_tag) {
  const char *name = PyUnicode_AsUTF8(obj);
  if (name == NULL) return -1;
  int unknown = 0;
  if (alias_to_tag(st, NULL, name, out_tag, &unknown) == 0) return 0;
  if (!unknown) return -1;
  /* NumPy's own spellings ("f4", "<i8", "float"), when NumPy is loaded */
  PyObject *modname = PyUnicode_FromString("numpy");
  PyObject *np = modname != NULL ? PyImport_GetModule(modname) : NULL;
  Py_XDECREF(modname);
  if (np != NULL) {
    PyObject *d = PyObject_CallMethod(np, "dtype", "O", obj);
    Py_DECREF(np);
    if (d != NULL) {
      int rc;
      int hit = numpy_converter(st, d, out_tag, &rc);
      Py_DECREF(d);
      if (hit) return rc;
    }
    PyErr_Clear(); /* NumPy does not know it either: report our own names */
  } else if (PyErr_Occurred()) {
    return -1;
  }
  return alias_to_tag(st, NULL, name, out_tag, NULL);
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
  if (PyUnicode_Check(obj)) return string_converter(st, obj, out_tag);
  /* the Python types, as NumPy reads them */
  const char *py = obj == (PyObject *)&PyFloat_Type     ? "float64"
                   : obj == (PyObject *)&PyLong_Type    ? "int64"
                   : obj == (PyObject *)&PyBool_Type    ? "bool"
                   : obj == (PyObject *)&PyComplex_Type ? "complex128"
                                                        : NULL;
  if (py != NULL) return hurray_dtype_from_name(py, out_tag) == HURRAY_OK ? 0 : -1;
  int rc = 0;
  if (torch_converter(st, obj, out_tag, &rc) || numpy_converter(st, obj, out_tag, &rc))
    return rc;
  PyErr_Format(PyExc_TypeError,
               "dtype must be a hurray.Dtype, a type name, a NumPy or PyTorch dtype, not %.100s",
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

static PyObject *dt_of(PyObject *cls, PyObject *arg) {
  HrpyState *st = hrpy_state_of_type((PyTypeObject *)cls);
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
    {"of", dt_of, METH_O | METH_CLASS,
     "of(obj, /)\n--\n\nThe Dtype singleton `obj` names: anything dtype= accepts (a Dtype, "
     "a hurray, NumPy, PyTorch or safetensors name, a NumPy or torch dtype, float/int/bool/"
     "complex)."},
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

static PyType_Slot dtype_slots[] = {
    {Py_tp_doc,
     "A Hurray element type.\n"
     "\n"
     "One immutable singleton per type: `hurray.float32 is hurray.dtype.float32 is\n"
     "hurray.Dtype.from_name(\"float32\") is hurray.Dtype.from_tag(0x03)`. Not constructible.\n"
     "\n"
     "- The format sorts its named types into two tiers by tag (the specification's\n"
     "  `docs/spec/element-types.md`): **Tier 1**, tags `0x01`–`0x3F`, the core types every\n"
     "  implementation must support — `float16`, `bfloat16`, `float32`, `float64`, `int8` …\n"
     "  `uint64` and `bool`; **Tier 2**, tags `0x40`–`0x7F`, the extended ones — the float8,\n"
     "  float6 and float4 variants, `float128`, `int4`/`uint4`/`int2`/`uint2`, `complex64` and\n"
     "  `complex128`. Tier 1 types are module attributes (`hurray.float16` … `hurray.bool`);\n"
     "  every named type, Tier 2 included, is on the namespace `hurray.dtype`\n"
     "  (`hurray.dtype.int4`, `hurray.dtype.complex64`, `from hurray.dtype import int4`).\n"
     "- Properties: `name`, `tag` (wire byte), `bit_width`, `itemsize` (bytes per element,\n"
     "  `None` for sub-byte types), `tier`, `is_float` (complex included), `is_integer` (bool\n"
     "  excluded), `is_signed`, `is_sub_byte`, `is_complex`, `is_array_api` (`tier == 1`),\n"
     "  `is_extension`.\n"
     "- `Dtype.from_tag(tag)` and `Dtype.from_name(name)` return the singleton and raise\n"
     "  `InvalidDescriptorError` for a reserved, unassigned or invalid tag, or an unknown name.\n"
     "- Private (extension) types, tags `0xF0`–`0xFE`, are an implementation's own types,\n"
     "  agreed out of band; they have singletons too, created on first use. They\n"
     "  all have the name `\"extension\"`, so the repr carries the tag:\n"
     "  `hurray.Dtype('extension', tag=0xf3)`. Their `bit_width`, `itemsize` and `tier` are\n"
     "  `None`: the width of a private type is declared by the descriptor's extension type\n"
     "  section, not by the tag.\n"
     "- A descriptor decoded in relay mode (`permissive=True`, for programs that forward\n"
     "  descriptors they do not fully understand; see `hurray.Descriptor`)\n"
     "  may carry a reserved or\n"
     "  unassigned type tag: its `dtype` is a singleton named `\"unknown\"` (repr\n"
     "  `hurray.Dtype('unknown', tag=0x07)`, widths `None`), which reads and relays but cannot\n"
     "  author a tensor, while `Dtype.from_tag` keeps refusing the tag.\n"
     "- Hashable and picklable (unpickling returns the singleton); no ordering.\n"
     "\n"
     "**Accepted spellings.** Wherever a function takes `dtype=` (and `Dtype.of`), it takes a "
     "`hurray.Dtype` or anything naming the same type: a hurray type name (`\"float32\"`, "
     "`\"int4\"`), a NumPy dtype or\n"
     "scalar type (`np.float32`, `np.dtype(\"<i8\")`, ml_dtypes' `bfloat16`), a `torch.dtype`\n"
     "(`torch.bfloat16`) or its string (`\"torch.bfloat16\"`), a safetensors code (`\"BF16\"`,\n"
     "`\"F8_E4M3\"`), a string NumPy understands (`\"f4\"`, `\"float\"`), or `float`, `int`,\n"
     "`bool`, `complex` as NumPy reads them (float64, int64, bool, complex128). The OCP\n"
     "float8/float6/float4 types are spelled `float8_e4m3fn` in NumPy and PyTorch and\n"
     "`float8_e4m3` in hurray; both work. A foreign type with no hurray equivalent\n"
     "(`torch.float8_e4m3fnuz`, a big-endian NumPy dtype, NumPy's x87 `longdouble`) raises\n"
     "`UnsupportedError` saying why; an unknown name raises `InvalidDescriptorError` listing\n"
     "the valid names, with the closest one suggested (`'flaot32'; did you mean 'float32'?`)."},
    {Py_tp_repr, dtype_repr},
    {Py_tp_str, dtype_str},
    {Py_tp_hash, dtype_hash},
    {Py_tp_richcompare, dtype_richcompare},
    {Py_tp_getset, dtype_getset},
    {Py_tp_methods, dtype_methods},
    {Py_tp_dealloc, hrpy_plain_dealloc},
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
    if (i == NULL || st->core->dtypes[tag] == NULL) continue;
    if (PyDict_SetItemString(d, i->name, st->core->dtypes[tag]) < 0) {
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
  st->core->DtypeType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &dtype_spec, NULL);
  if (st->core->DtypeType == NULL) return -1;
  if (PyModule_AddType(m, st->core->DtypeType) < 0) return -1;
  for (int tag = 0; tag < 256; tag++) {
    if (hurray_dtype_info((uint8_t)tag) == NULL) continue;
    st->core->dtypes[tag] = dtype_create(st, (uint8_t)tag);
    if (st->core->dtypes[tag] == NULL) return -1;
  }
  PyObject *fn = PyCFunction_NewEx(&dtype_table_def, m, NULL);
  if (fn == NULL) return -1;
  int rc = PyModule_AddObjectRef(m, "_dtype_table", fn);
  Py_DECREF(fn);
  return rc;
}
