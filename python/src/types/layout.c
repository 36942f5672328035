/*
 * types/layout.c - hurray.Layout, the base of the layout classes (spec:
 * docs/adr/ADR-032-python-layout-descriptor-hierarchy.md).
 *
 * A layout object is an immutable value: the C library's HurrayLayout plus a
 * private copy of its arrays. The base implements tag, name, buffer_count,
 * is_dense, is_virtual, equality, hashing and validate_against_shape once;
 * the 14 subclasses (layout_types.c) are typed facades over the same struct,
 * adding their own getters, constructor and repr.
 *
 * The base is not constructible from Python. It is returned directly only for
 * a named layout tag this build does not bind (hrpy_layout_class_for_tag),
 * which is a different fact from UnknownLayout (a tag nobody defined yet).
 *
 * Names come from hrpy_layout_name (descriptor.c), the one helper error
 * messages use too, so .name and the layout named in an error cannot drift.
 */
#include "types/layout.h"

#include "core/tensor.h"
#include "types/schema.h"
#include "types/state.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/reduce.h"

#include <string.h>

/* Every layout class shares this struct: a subclass is a typed facade over
 * the same value. Immutable once built. */
typedef struct {
  PyObject_HEAD
  HurrayLayout lay; /* array and byte pointers point into `mem` */
  uint32_t n;       /* entries of the per-dimension arrays (strided, tiled,
                       morton, csf); 0 for the other layouts */
  void *mem;        /* PyMem block owning every array of `lay`, or NULL */
} HrpyLayout;

#define L(o) ((HrpyLayout *)(o))

const HurrayLayout *hrpy_layout_value(PyObject *obj) { return &L(obj)->lay; }
uint32_t hrpy_layout_rank(PyObject *obj) { return L(obj)->n; }

/* ---- classification ----------------------------------------------------------- */

bool hrpy_layout_has_arrays(uint8_t tag) { return hurray_layout_rank_array(tag) != NULL; }

PyTypeObject *hrpy_layout_class_for_tag(HrpyState *st, uint8_t tag) {
  PyTypeObject *c = st->types->LayoutByTag[tag];
  if (c != NULL) return c;
  switch (hurray_layout_tag_kind(tag)) {
    case HURRAY_TAG_PRIVATE: return st->types->PrivateLayoutType;
    case HURRAY_TAG_NAMED: return st->types->LayoutType; /* named by the library, not bound here */
    default: return st->types->UnknownLayoutType;
  }
}

/* ---- value: the C library copies, compares and hashes ---------------------- */

PyObject *hrpy_layout_new(HrpyState *st, PyTypeObject *type, const HurrayLayout *src, uint32_t n) {
  if (!hrpy_layout_has_arrays(src->tag)) n = 0;
  HurrayError err;
  hurray_error_clear(&err);
  size_t need = 0;
  HurrayStatus rc = hurray_layout_copy_size(src, n, &need, &err);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, "Layout");
  void *mem = NULL;
  if (need > 0) {
    mem = PyMem_Malloc(need);
    if (mem == NULL) return PyErr_NoMemory();
  }
  HrpyLayout *self = PyObject_New(HrpyLayout, type);
  if (self == NULL) {
    PyMem_Free(mem);
    return NULL;
  }
  rc = hurray_layout_copy(src, n, mem, need, &self->lay, &err);
  if (rc != HURRAY_OK) {
    self->mem = mem; /* freed with the object */
    self->n = 0;
    memset(&self->lay, 0, sizeof self->lay);
    Py_DECREF(self);
    return hrpy_raise_status(st, rc, &err, "Layout");
  }
  self->n = n;
  self->mem = mem;
  return (PyObject *)self;
}

PyObject *hrpy_layout_object(HrpyState *st, const HurrayDescriptorFields *f) {
  return hrpy_layout_new(st, hrpy_layout_class_for_tag(st, f->layout.tag), &f->layout, f->rank);
}

static PyObject *layout_richcompare(PyObject *a, PyObject *b, int op) {
  HrpyState *st = hrpy_state_of(a);
  if ((op != Py_EQ && op != Py_NE) || !hrpy_layout_check(st, b)) Py_RETURN_NOTIMPLEMENTED;
  /* the rank of the per-dimension arrays is part of the value */
  bool eq = L(a)->n == L(b)->n && hurray_layout_equal(&L(a)->lay, &L(b)->lay, L(a)->n);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t layout_hash(PyObject *self) {
  uint64_t h = hurray_layout_hash(&L(self)->lay, L(self)->n);
  return hrpy_hash_fold(h ^ (uint64_t)L(self)->n * 0x9E3779B97F4A7C15ull);
}

/* ---- the shape tier, shared with Tensor ---------------------------------------- */


int hrpy_layout_for_rank(HrpyState *st, PyObject *obj, uint32_t rank, HurrayLayout *out,
                        const char *context) {
  const HrpyLayout *l = L(obj);
  if (hrpy_layout_has_arrays(l->lay.tag) && l->n != rank) {
    hrpy_raise_rule(st, HURRAY_ERR_INVALID_LAYOUT, "rank", context,
                   "%s has %u %s entries, but the tensor has rank %u (one per dimension)",
                   Py_TYPE(obj)->tp_name, (unsigned)l->n, hurray_layout_rank_array(l->lay.tag),
                   (unsigned)rank);
    return -1;
  }
  *out = l->lay;
  return 0;
}

int hrpy_layout_validate_shape(HrpyState *st, PyObject *obj, uint32_t rank, const uint64_t *shape,
                              const char *context) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  if (hrpy_layout_for_rank(st, obj, rank, &f.layout, context) < 0) return -1;
  f.type_tag = HURRAY_DTYPE_UINT8;
  f.rank = rank;
  f.shape = shape;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_layout_validate_shape(&f, hurray_layout_decode_options(f.layout.tag), &err);
  if (rc != HURRAY_OK) {
    hrpy_raise_status(st, rc, &err, context);
    return -1;
  }
  return 0;
}

/* ---- the fields of a subclass, from libhurray's table ----------------------------- */

/* The fields of a layout object over its value (the outermost tiled level
 * for HURRAY_FIELD_IN_LEVEL fields). */
static HrpyRecord record_of(PyObject *s) {
  HrpyLayout *l = L(s);
  const HurrayLayoutInfo *info = hurray_layout_info(l->lay.tag);
  HrpyRecord r = {NULL, 0, (char *)&l->lay, NULL, l->n};
  if (info != NULL) {
    r.fields = info->fields;
    r.count = info->field_count;
  }
  if (l->lay.tag == HURRAY_LAYOUT_TILED && l->lay.u.tiled.depth > 0)
    r.level = (char *)(uintptr_t)&l->lay.u.tiled.levels[0];
  return r;
}

/* The nested levels of a tiled layout as a layout of the same class. */
static PyObject *inner_levels(PyObject *s) {
  HurrayLayout in = L(s)->lay;
  in.u.tiled.depth--;
  in.u.tiled.levels++;
  return hrpy_layout_new(hrpy_state_of(s), Py_TYPE(s), &in, L(s)->n);
}

PyObject *hrpy_layout_field_get(PyObject *s, void *closure) {
  const HurrayFieldInfo *f = closure;
  HrpyRecord r = record_of(s);
  uint32_t i = (uint32_t)(f - r.fields);
  if (f->kind == HURRAY_VALUE_NESTED) {
    if (!hrpy_record_present(&r, i) || L(s)->lay.u.tiled.depth < 2) Py_RETURN_NONE;
    return inner_levels(s);
  }
  return hrpy_record_get(hrpy_state_of(s), &r, i);
}

static bool is_catch_all(uint8_t tag) {
  HurrayTagKind k = hurray_layout_tag_kind(tag);
  return k != HURRAY_TAG_NAMED && k != HURRAY_TAG_INVALID;
}

/* ---- the base's surface --------------------------------------------------------- */

static PyObject *lg_tag(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromLong(L(s)->lay.tag);
}

static PyObject *lg_name(PyObject *s, void *c) {
  (void)c;
  return PyUnicode_FromString(hrpy_layout_name(L(s)->lay.tag));
}

static PyObject *lg_buffer_count(PyObject *s, void *c) {
  (void)c;
  uint32_t n;
  if (!hurray_layout_buffer_count(L(s)->lay.tag, L(s)->n, &n))
    Py_RETURN_NONE; /* private or unknown: only its definer knows */
  return PyLong_FromUnsignedLong(n);
}

static PyObject *lg_is_dense(PyObject *s, void *c) {
  (void)c;
  return PyBool_FromLong(hurray_layout_class(L(s)->lay.tag) == HURRAY_LAYOUT_CLASS_DENSE);
}

static PyObject *lg_is_virtual(PyObject *s, void *c) {
  (void)c;
  return PyBool_FromLong(hurray_layout_class(L(s)->lay.tag) == HURRAY_LAYOUT_CLASS_VIRTUAL);
}

static PyObject *lm_validate_against_shape(PyObject *s, PyObject *shape_obj) {
  HrpyState *st = hrpy_state_of(s);
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, shape_obj, shape, &rank, "validate_against_shape") < 0) return NULL;
  if (hrpy_layout_validate_shape(st, s, rank, shape, "validate_against_shape") < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *layout_repr(PyObject *s) {
  HrpyState *st = hrpy_state_of(s);
  uint8_t tag = L(s)->lay.tag;
  if (Py_TYPE(s) == st->types->LayoutType)
    return PyUnicode_FromFormat("Layout(tag=0x%s, name='%s')", hrpy_hex(tag).s,
                                hrpy_layout_name(tag));
  /* a subclass: its fields, as its constructor takes them */
  const char *cls = strrchr(Py_TYPE(s)->tp_name, '.');
  cls = cls != NULL ? cls + 1 : Py_TYPE(s)->tp_name;
  char lead[16];
  PyOS_snprintf(lead, sizeof lead, "tag=0x%s", hrpy_hex(tag).s);
  PyObject *nested = NULL;
  if (tag == HURRAY_LAYOUT_TILED && L(s)->lay.u.tiled.depth > 1) {
    PyObject *in = inner_levels(s);
    nested = in != NULL ? PyObject_Repr(in) : NULL;
    Py_XDECREF(in);
    if (nested == NULL) return NULL;
  }
  HrpyRecord r = record_of(s);
  PyObject *res = hrpy_record_repr(st, cls, is_catch_all(tag) ? lead : NULL, &r, nested);
  Py_XDECREF(nested);
  return res;
}

/* Pickling: a subclass is called with its constructor parameters, read back
 * through the getters of the same names. The bare Layout (a named tag this
 * build does not bind) has no constructor and refuses. */
static PyObject *lm_reduce(PyObject *s, PyObject *unused) {
  (void)unused;
  const HurrayLayoutInfo *info = hurray_layout_info(L(s)->lay.tag);
  if (Py_TYPE(s) == hrpy_state_of(s)->types->LayoutType || info == NULL)
    return PyErr_Format(PyExc_TypeError, "cannot pickle '%.100s' object", Py_TYPE(s)->tp_name);
  const char *kw[HRPY_MAX_FIELDS + 2];
  int fields_of[HRPY_MAX_FIELDS + 1], required;
  hrpy_fields_params(info->fields, info->field_count,
                     is_catch_all(L(s)->lay.tag) ? "tag" : NULL, kw, fields_of, &required);
  return hrpy_reduce_by_attrs(s, kw, false);
}

static PyGetSetDef layout_getset[] = {
    {"tag", lg_tag, NULL, "The layout tag byte (memory-layout.md).", NULL},
    {"name", lg_name, NULL,
     "'row_major', 'col_major', 'strided', 'tiled', 'morton', 'hilbert', 'coo', 'csr', "
     "'csc', 'csf', 'block_paged', 'composite', or 'extension' for a private or "
     "unrecognised tag (PrivateExtensionLayout and UnknownLayout share it and stay separate "
     "classes). Error messages name layouts the same way.",
     NULL},
    {"buffer_count", lg_buffer_count, NULL,
     "Buffers the layout itself needs: dense 1, COO 2, CSR and CSC 3, CSF 2 * rank + 1, "
     "block-paged 3; 0 for a composite head, None for a private or unknown layout (not "
     "knowable).",
     NULL},
    {"is_dense", lg_is_dense, NULL,
     "True for the layouts whose one buffer holds every element in an addressable order: "
     "row- and column-major, strided, tiled, Morton, Hilbert.",
     NULL},
    {"is_virtual", lg_is_virtual, NULL, "True for a composite head, which owns no buffers.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef layout_methods[] = {
    {"validate_against_shape", lm_validate_against_shape, METH_O,
     "validate_against_shape(self, shape, /)\n--\n\nRaise InvalidDescriptorError unless this "
     "layout's rank and extent rules accept `shape` (`hurray_layout_validate_shape`: the rule "
     "hurray.Tensor runs first, so the two always agree). A dynamic dimension (None) is "
     "accepted."},
    {"__reduce__", lm_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static void layout_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  PyMem_Free(L(s)->mem);
  L(s)->mem = NULL;
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyType_Slot layout_slots[] = {
    {Py_tp_doc,
     "The memory layout of a tensor: a tag plus that layout's parameters.\n\n"
     "`Tensor.layout` and `Descriptor.layout` return a layout object, never a string "
     "([ADR-032](https://github.com/pgillet/hurray/blob/main/docs/adr/"
     "ADR-032-python-layout-descriptor-hierarchy.md)), a fresh one per access "
     "(`t.layout == t.layout`, not `is`). This base is not constructible; every layout has "
     "its own subclass, whose constructor takes the fields it lists (its properties), in "
     "the order given.\n\n"
     "- Layouts are immutable, compare and hash by value, never equal a string, hold no "
     "reference to a tensor, and pickle to equal values; `repr` is `CsrLayout(nnz=4)`-style.\n"
     "- Small closed enumerations are lowercase strings (tile orderings, `kv_role`, "
     "`block_table_index_type`, `composition_rule`, `combine_op`); a string outside its "
     "enumeration is a `ValueError`.\n"
     "- Strides (`StridedLayout.strides`, the tiled `outer_strides` and `inner_strides`) are "
     "signed, may be negative or zero, and count elements (tiles for `outer_strides`), not "
     "bytes as NumPy's do.\n"
     "- The constructors check what a layout states about itself with the C library's own "
     "shape rules, run against dynamic dimensions of the layout's rank: empty tiles, stride "
     "arrays given for a non-strided ordering (or missing for a strided one), nesting beyond "
     "8 tiled levels, zero Morton bits, a Hilbert rank below 2, a CSF `mode_order` that is "
     "not a permutation of at least 3 dimensions, a block-paged `page_size` of 0 or "
     "`paged_axis` other than 0, an overlay without members are `InvalidDescriptorError`. "
     "Out-of-range integers are `InvalidDescriptorError`, non-integers `TypeError`.\n"
     "- A named tag this build does not bind would come back as a bare `hurray.Layout` with "
     "`tag` and `name` (never as `UnknownLayout`, which means unrecognised); every named tag "
     "is bound today (`hurray._hurray._layout_fallback(tag)` shows that object)."},
    {Py_tp_repr, layout_repr},
    {Py_tp_hash, layout_hash},
    {Py_tp_richcompare, layout_richcompare},
    {Py_tp_getset, layout_getset},
    {Py_tp_methods, layout_methods},
    {Py_tp_dealloc, layout_dealloc},
    {0, NULL},
};

static PyType_Spec layout_spec = {
    .name = "hurray.Layout",
    .basicsize = sizeof(HrpyLayout),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_BASETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = layout_slots,
};

/* _layout_fallback(tag): the bare Layout the getter returns for a named tag
 * this build does not bind (a test hook: every named tag is bound today). */
static PyObject *m_layout_fallback(PyObject *m, PyObject *arg) {
  HrpyState *st = hrpy_state_of_module(m);
  uint64_t v;
  if (hrpy_arg_uint_as(PyExc_ValueError, arg, "_layout_fallback", "tag", 255, &v) < 0)
    return NULL;
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = (uint8_t)v;
  return hrpy_layout_new(st, st->types->LayoutType, &l, 0);
}

static PyMethodDef layout_module_methods[] = {
    {"_layout_fallback", m_layout_fallback, METH_O,
     "_layout_fallback(tag, /)\n--\n\nThe bare hurray.Layout returned for a named layout tag "
     "this build does not bind (test hook)."},
    {NULL, NULL, 0, NULL},
};

int hrpy_layout_init(PyObject *m, HrpyState *st) {
  st->types->LayoutType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &layout_spec, NULL);
  if (st->types->LayoutType == NULL) return -1;
  if (PyModule_AddType(m, st->types->LayoutType) < 0) return -1;
  return PyModule_AddFunctions(m, layout_module_methods);
}
