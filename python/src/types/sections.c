/*
 * types/sections.c - hurray.Statistics and hurray.Shard, the two optional
 * descriptor sections that are plain values.
 *
 * Statistics: keyword-only; the computed_mask is derived from what is given
 * (a statistic is present exactly when its validity bit is set), and fields
 * sharing one bit (value_min / value_max / value_abs_max, value_mean /
 * value_stddev, nm_n / nm_m, has_nan / has_inf) come together or not at all.
 * Getters return None for what the mask does not claim. Unhashable (floats).
 * libhurray's table of the fields (hurray_statistics_fields) drives all of it,
 * through types/schema.c as for the layout and quantization classes.
 *
 * Shard: parent_shape and shard_offset, one entry per dimension. Hashable.
 *
 * Both are checked at construction by the C library's own section rules
 * (hurray_statistics_check, hurray_shard_check); the rules that need the
 * tensor (nnz against a sparse layout, offset + shape <= parent) run when the
 * section is attached to one.
 */
#include "types/sections.h"

#include "types/schema.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/runtime.h"
#include "util/reduce.h"
#include "types/state.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

typedef struct {
  PyObject_HEAD
  HurrayStatistics s;
} HrpyStatistics;

typedef struct {
  PyObject_HEAD
  uint32_t rank;
  uint64_t *parent_shape; /* PyMem, rank entries (NULL when rank is 0) */
  uint64_t *offset;       /* PyMem, rank entries */
  HurrayShard shard;      /* views of the two arrays */
} HrpyShard;

#define S(o) ((HrpyStatistics *)(o))
#define SH(o) ((HrpyShard *)(o))

const HurrayStatistics *hrpy_statistics_value(PyObject *o) { return &S(o)->s; }
const HurrayShard *hrpy_shard_value(PyObject *o, uint32_t *rank) {
  *rank = SH(o)->rank;
  return &SH(o)->shard;
}

/* The section's own rules are libhurray's (hurray_statistics_check,
 * hurray_shard_check); the ones that need a tensor run when it is attached. */
static int checked(HrpyState *st, HurrayStatus rc, const HurrayError *err, const char *ctx) {
  if (rc == HURRAY_OK) return 0;
  hrpy_raise_status(st, rc, err, ctx);
  return -1;
}

/* ---- Statistics ---------------------------------------------------------------- */

PyObject *hrpy_statistics_new(HrpyState *st, const HurrayStatistics *s) {
  HrpyStatistics *o = PyObject_New(HrpyStatistics, st->types->StatisticsType);
  if (o == NULL) return NULL;
  o->s = *s;
  return (PyObject *)o;
}

PyObject *hrpy_statistics_object(HrpyState *st, const HurrayDescriptorFields *f) {
  if (f->statistics == NULL) Py_RETURN_NONE;
  return hrpy_statistics_new(st, f->statistics);
}




/* The fields: libhurray's table (hurray_statistics_fields), each claimed by
 * its computed_mask bit, read, parsed and printed by types/schema.c. */
static HrpyRecord stats_record(const HurrayStatistics *s) {
  HrpyRecord r = {NULL, 0, (char *)(uintptr_t)s, NULL, 0};
  r.fields = hurray_statistics_fields(&r.count);
  return r;
}

static PyObject *stat_get(PyObject *o, void *field) {
  HrpyRecord r = stats_record(&S(o)->s);
  return hrpy_record_get(hrpy_state_of(o), &r, (uint32_t)((HurrayFieldInfo *)field - r.fields));
}

/* The keywords, in the table's order (HRPY_MAX_FIELDS + 2 entries). */
static int stats_params(const char **kw) {
  uint32_t n;
  const HurrayFieldInfo *f = hurray_statistics_fields(&n);
  int fields_of[HRPY_MAX_FIELDS + 1], required;
  return hrpy_fields_params(f, n, NULL, kw, fields_of, &required);
}

static PyObject *stats_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  const char *kw[HRPY_MAX_FIELDS + 2];
  int np = stats_params(kw);
  PyObject *o[HRPY_MAX_FIELDS + 1];
  if (hrpy_parse_tuple("Statistics", args, kwargs, kw, 0, 0, o) < 0) return NULL;
  HrpyState *st = hrpy_state_of_type(type);
  HurrayStatistics s;
  HrpyBuild b;
  memset(&s, 0, sizeof s);
  memset(&b, 0, sizeof b);
  b.rec = stats_record(&s);
  bool given[HRPY_MAX_FIELDS] = {false};
  int rc = 0;
  for (int i = 0; i < np; i++) given[i] = o[i] != NULL && o[i] != Py_None;
  rc = hrpy_build_check_masks(st, &b, given, "Statistics");
  for (int i = 0; rc == 0 && i < np; i++)
    rc = hrpy_build_field(st, &b, (uint32_t)i, given[i] ? o[i] : NULL, "Statistics");
  hrpy_build_release(&b);
  if (rc < 0) return NULL;
  HurrayError err;
  hurray_error_clear(&err);
  if (checked(st, hurray_statistics_check(&s, &err), &err, "Statistics") < 0) return NULL;
  return hrpy_statistics_new(st, &s);
}

static PyObject *sg_mask(PyObject *o, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(S(o)->s.computed_mask);
}

static PyObject *stats_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b)) Py_RETURN_NOTIMPLEMENTED;
  /* equal when they encode alike (a NaN equals itself) */
  bool eq = hurray_statistics_equal(&S(a)->s, &S(b)->s);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *stats_repr(PyObject *o) {
  HrpyRecord r = stats_record(&S(o)->s);
  return hrpy_record_repr(hrpy_state_of(o), "Statistics", NULL, &r, NULL);
}

#define GET(name, fn, doc) {name, fn, NULL, doc, NULL}
static PyGetSetDef stats_common[] = {
    GET("computed_mask", sg_mask, "The validity bits (HURRAY_STAT_*_VALID) of the other fields."),
    {NULL, NULL, NULL, NULL, NULL},
};
/* The getters: the table's fields, then computed_mask; shared by every
 * interpreter (types/schema.c). */
static PyGetSetDef *g_stats_getset;

/* Pickling: the constructor called with what the getters return. */
static PyObject *stats_reduce(PyObject *o, PyObject *unused) {
  (void)unused;
  const char *kw[HRPY_MAX_FIELDS + 2];
  (void)stats_params(kw);
  return hrpy_reduce_by_attrs(o, kw, true);
}
static PyMethodDef stats_methods[] = {{"__reduce__", stats_reduce, METH_NOARGS, NULL},
                                      {NULL, NULL, 0, NULL}};

static PyType_Slot stats_slots[] = {
    {Py_tp_methods, stats_methods},
    {Py_tp_doc,
     "Statistics(*, nnz=None, sparsity_ratio=None, value_min=None, value_max=None, "
     "value_abs_max=None, value_mean=None, value_stddev=None, nm_n=None, nm_m=None, "
     "has_nan=None, has_inf=None)\n--\n\nThe advisory statistics section.\n\n"
     "The mask (`computed_mask`) follows what is given. Fields sharing one validity bit come "
     "together or raise `InvalidDescriptorError`: `value_min`/`value_max`/`value_abs_max`, "
     "`value_mean`/`value_stddev`, `nm_n`/`nm_m`, `has_nan`/`has_inf`. The format's rules "
     "apply at construction (`sparsity_ratio` in [0, 1], `value_stddev >= 0`, "
     "`nm_n <= nm_m`); `nnz` is checked against a sparse layout's when attached. Getters "
     "return None for what the mask does not claim. Compared by the bits of the claimed "
     "fields (a NaN equals itself, as in a descriptor); unhashable."},
    {Py_tp_new, stats_new},
    {Py_tp_repr, stats_repr},
    {Py_tp_richcompare, stats_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_dealloc, hrpy_plain_dealloc},
    {Py_tp_getset, NULL}, /* the last: g_stats_getset, at init */
    {0, NULL},
};

static PyType_Spec stats_spec = {
    .name = "hurray.Statistics",
    .basicsize = sizeof(HrpyStatistics),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = NULL, /* stats_slots with the getters, at init */
};

/* ---- Shard ------------------------------------------------------------------------ */

PyObject *hrpy_shard_new(HrpyState *st, uint32_t rank, const HurrayShard *sh) {
  uint64_t *mem = NULL;
  if (rank > 0) {
    mem = PyMem_Malloc(2u * rank * sizeof(uint64_t));
    if (mem == NULL) return PyErr_NoMemory();
    memcpy(mem, sh->parent_shape, rank * sizeof(uint64_t));
    memcpy(mem + rank, sh->offset, rank * sizeof(uint64_t));
  }
  HrpyShard *o = PyObject_New(HrpyShard, st->types->ShardType);
  if (o == NULL) {
    PyMem_Free(mem);
    return NULL;
  }
  o->rank = rank;
  o->parent_shape = mem;
  o->offset = mem != NULL ? mem + rank : NULL;
  o->shard.parent_shape = o->parent_shape;
  o->shard.offset = o->offset;
  return (PyObject *)o;
}

PyObject *hrpy_shard_object(HrpyState *st, const HurrayDescriptorFields *f) {
  if (f->shard == NULL) Py_RETURN_NONE;
  return hrpy_shard_new(st, f->rank, f->shard);
}

/* A sequence of extents (no None: a shard has no dynamic dimension). */
static int extents(HrpyState *st, PyObject *obj, const char *what, uint64_t *out, uint32_t *n) {
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, obj, out, &rank, what) < 0) return -1;
  for (uint32_t k = 0; k < rank; k++) {
    if (out[k] == HURRAY_DYNAMIC_DIM) {
      hrpy_raise(st->InvalidDescriptorError,
                "%s[%u] is None; a shard's extents and offsets are always known", what,
                (unsigned)k);
      return -1;
    }
  }
  *n = rank;
  return 0;
}

static PyObject *shard_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"parent_shape", "shard_offset", NULL};
  PyObject *p, *o;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("Shard", args, kwargs, kwlist, 2, 2, argv_) < 0) return NULL;
  p = argv_[0];
  o = argv_[1];
  HrpyState *st = hrpy_state_of_type(type);
  uint64_t parent[HURRAY_MAX_RANK], offset[HURRAY_MAX_RANK];
  uint32_t np_ = 0, no = 0;
  if (extents(st, p, "Shard: parent_shape", parent, &np_) < 0 ||
      extents(st, o, "Shard: shard_offset", offset, &no) < 0)
    return NULL;
  if (np_ != no)
    return hrpy_raise(st->InvalidDescriptorError,
                     "Shard: parent_shape has %u entries, shard_offset %u (one per dimension)",
                     (unsigned)np_, (unsigned)no);
  HurrayShard sh = {parent, offset};
  HurrayError err;
  hurray_error_clear(&err);
  if (checked(st, hurray_shard_check(np_, &sh, &err), &err, "Shard") < 0) return NULL;
  return hrpy_shard_new(st, np_, &sh);
}

static PyObject *shg_parent(PyObject *o, void *c) {
  (void)c;
  return hrpy_shape_tuple(SH(o)->rank, SH(o)->parent_shape);
}
static PyObject *shg_offset(PyObject *o, void *c) {
  (void)c;
  return hrpy_shape_tuple(SH(o)->rank, SH(o)->offset);
}

static bool shard_equal(const HrpyShard *a, const HrpyShard *b) {
  return a->rank == b->rank &&
         (a->rank == 0 ||
          (memcmp(a->parent_shape, b->parent_shape, a->rank * sizeof(uint64_t)) == 0 &&
           memcmp(a->offset, b->offset, a->rank * sizeof(uint64_t)) == 0));
}

static PyObject *shard_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = shard_equal(SH(a), SH(b));
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t shard_hash(PyObject *o) {
  /* offset follows parent_shape in the block */
  return hrpy_hash_fold(
      hrpy_hash_words(HRPY_HASH_SEED ^ SH(o)->rank, SH(o)->parent_shape, 2u * SH(o)->rank));
}

static PyObject *shard_repr(PyObject *o) {
  PyObject *p = shg_parent(o, NULL);
  PyObject *f = p != NULL ? shg_offset(o, NULL) : NULL;
  PyObject *r = f != NULL ? PyUnicode_FromFormat("Shard(parent_shape=%R, shard_offset=%R)", p, f)
                          : NULL;
  Py_XDECREF(p);
  Py_XDECREF(f);
  return r;
}

static void shard_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  PyMem_Free(SH(o)->parent_shape);
  tp->tp_free(o);
  Py_DECREF(tp);
}

static PyGetSetDef shard_getset[] = {
    GET("parent_shape", shg_parent, "Shape of the whole tensor this shard belongs to."),
    GET("shard_offset", shg_offset, "Position of this shard's element [0, ..., 0] in the parent."),
    {NULL, NULL, NULL, NULL, NULL},
};

static const char *const k_shard_args[] = {"parent_shape", "shard_offset", NULL};
static PyObject *shard_reduce(PyObject *o, PyObject *unused) {
  (void)unused;
  return hrpy_reduce_by_attrs(o, k_shard_args, false);
}
static PyMethodDef shard_methods[] = {{"__reduce__", shard_reduce, METH_NOARGS, NULL},
                                      {NULL, NULL, 0, NULL}};

static PyType_Slot shard_slots[] = {
    {Py_tp_methods, shard_methods},
    {Py_tp_doc,
     "Shard(parent_shape, shard_offset)\n--\n\nThe shard section: where this tensor sits in a "
     "larger one. One entry per dimension, no dynamic dimension, offsets inside the parent. "
     "Attached to a tensor of the same rank, whose box must fit in the parent (else "
     "`InvalidDescriptorError`); forbidden on CSF and block-paged tensors. Immutable, "
     "compared and hashed by value."},
    {Py_tp_new, shard_new},
    {Py_tp_repr, shard_repr},
    {Py_tp_richcompare, shard_richcompare},
    {Py_tp_hash, shard_hash},
    {Py_tp_getset, shard_getset},
    {Py_tp_dealloc, shard_dealloc},
    {0, NULL},
};

static PyType_Spec shard_spec = {
    .name = "hurray.Shard",
    .basicsize = sizeof(HrpyShard),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = shard_slots,
};

int hrpy_sections_init(PyObject *m, HrpyState *st) {
  uint32_t n;
  const HurrayFieldInfo *fields = hurray_statistics_fields(&n);
  if (hrpy_fields_check(fields, n, "hurray.Statistics") < 0) return -1;
  PyGetSetDef *getset = hrpy_fields_getset(&g_stats_getset, stats_common, fields, n, stat_get);
  if (getset == NULL) return -1;
  PyType_Slot slots[sizeof stats_slots / sizeof stats_slots[0]];
  memcpy(slots, stats_slots, sizeof slots);
  slots[sizeof slots / sizeof slots[0] - 2].pfunc = getset;
  PyType_Spec spec = stats_spec;
  spec.slots = slots;
  st->types->StatisticsType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
  if (st->types->StatisticsType == NULL || PyModule_AddType(m, st->types->StatisticsType) < 0) return -1;
  st->types->ShardType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &shard_spec, NULL);
  if (st->types->ShardType == NULL || PyModule_AddType(m, st->types->ShardType) < 0) return -1;
  return 0;
}
