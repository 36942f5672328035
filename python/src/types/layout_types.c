/*
 * types/layout_types.c - the 14 subclasses of hurray.Layout (spec:
 * docs/adr/ADR-032-python-layout-descriptor-hierarchy.md): one constructor, one set of getters and one repr per layout, all over the
 * base's value (types/layout.h: hrpy_layout_value, hrpy_layout_rank).
 *
 * Constructors check what a layout states about itself by running the C
 * library's shape tier (hurray_layout_validate_shape) against a shape of
 * dynamic dimensions of the layout's own rank: tile sizes, stride arrays,
 * Morton bits, CSF mode orders, block-paged fields and composite rules are
 * therefore judged by the one copy of those rules, and an extent rule can
 * only fail once a tensor supplies extents.
 *
 * Small closed enumerations are lowercase strings (spec:
 * docs/impl/python-bindings.md, "Frozen name and enumeration strings"): tiled
 * orderings, kv_role, block_table_index_type, composition_rule, combine_op.
 * A string outside its enumeration is a ValueError.
 */
#include "util/state.h"

#include "core/device.h"
#include "core/tensor.h"
#include "types/layout.h"
#include "types/quant.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/reduce.h"
#include "types/state.h"

#include <string.h>


/* ---- enumerations ---------------------------------------------------------------- */

static const char *const k_order_names[] = {"row_major", "col_major", "strided", "tiled"};
static const uint8_t k_order_values[] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR,
                                         HURRAY_LAYOUT_STRIDED, HURRAY_LAYOUT_TILED};
static const HrpyEnum k_outer = {k_order_names, k_order_values, 3};
static const HrpyEnum k_inner = {k_order_names, k_order_values, 4};

static const char *const k_role_names[] = {"key", "value", "fused"};
static const uint8_t k_role_values[] = {HURRAY_KV_ROLE_KEY, HURRAY_KV_ROLE_VALUE,
                                        HURRAY_KV_ROLE_FUSED};
static const HrpyEnum k_roles = {k_role_names, k_role_values, 3};

static const char *const k_index_names[] = {"uint32", "uint64"};
static const uint8_t k_index_values[] = {HURRAY_BLOCK_INDEX_U32, HURRAY_BLOCK_INDEX_U64};
static const HrpyEnum k_index_types = {k_index_names, k_index_values, 2};

static const char *const k_rule_names[] = {"partition", "overlay", "group"};
static const uint8_t k_rule_values[] = {HURRAY_COMPOSITE_PARTITION, HURRAY_COMPOSITE_OVERLAY,
                                        HURRAY_COMPOSITE_GROUP};
static const HrpyEnum k_rules = {k_rule_names, k_rule_values, 3};

static const char *const k_combine_names[] = {"replace", "add"};
static const uint8_t k_combine_values[] = {HURRAY_COMBINE_REPLACE, HURRAY_COMBINE_ADD};
static const HrpyEnum k_combines = {k_combine_names, k_combine_values, 2};

/* Builds the object, then checks its own rules against `rank` dynamic
 * dimensions (see the file comment). */
static PyObject *finish(HrpyState *st, PyTypeObject *type, const HurrayLayout *l, uint32_t n,
                        uint32_t rank, const char *ctx) {
  PyObject *o = hrpy_layout_new(st, type, l, n);
  if (o == NULL) return NULL;
  uint64_t shape[HURRAY_MAX_RANK];
  for (uint32_t k = 0; k < rank; k++) shape[k] = HURRAY_DYNAMIC_DIM;
  if (hrpy_layout_validate_shape(st, o, rank, shape, ctx) < 0) {
    Py_DECREF(o);
    return NULL;
  }
  return o;
}

#define STATE(type) hrpy_state_of_type(type)

/* ---- row-major / column-major ----------------------------------------------------- */

static PyObject *plain_new(PyTypeObject *type, PyObject *args, PyObject *kwargs, uint8_t tag,
                           const char *name) {
  static const char *const kwlist[] = {NULL};
  PyObject *argv_[1];
  if (hrpy_parse_tuple(name, args, kwargs, kwlist, 0, 0, argv_) < 0) return NULL;
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = tag;
  return hrpy_layout_new(STATE(type), type, &l, 0);
}

static PyObject *rowmajor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return plain_new(type, args, kwargs, HURRAY_LAYOUT_ROW_MAJOR, "RowMajorLayout");
}
static PyObject *colmajor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return plain_new(type, args, kwargs, HURRAY_LAYOUT_COL_MAJOR, "ColMajorLayout");
}
static PyObject *rowmajor_repr(PyObject *s) {
  (void)s;
  return PyUnicode_FromString("RowMajorLayout()");
}
static PyObject *colmajor_repr(PyObject *s) {
  (void)s;
  return PyUnicode_FromString("ColMajorLayout()");
}

/* ---- strided ----------------------------------------------------------------------- */

static PyObject *strided_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"strides", NULL};
  PyObject *s;
  PyObject *argv_[1];
  if (hrpy_parse_tuple("StridedLayout", args, kwargs, kwlist, 1, 1, argv_) < 0) return NULL;
  s = argv_[0];
  HrpyState *st = STATE(type);
  int64_t strides[HURRAY_MAX_RANK];
  uint32_t n = 0;
  if (hrpy_arg_int_array(st, s, "StridedLayout", "strides", HRPY_ARR_I64, strides, &n) < 0) return NULL;
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_STRIDED;
  l.u.strided.strides = strides;
  return finish(st, type, &l, n, n, "StridedLayout");
}
static PyObject *strided_strides(PyObject *s, void *c) {
  (void)c;
  return hrpy_tuple_i64((*hrpy_layout_value(s)).u.strided.strides, hrpy_layout_rank(s));
}
static PyObject *strided_repr(PyObject *s) {
  PyObject *t = strided_strides(s, NULL);
  if (t == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("StridedLayout(strides=%R)", t);
  Py_DECREF(t);
  return r;
}

/* ---- tiled --------------------------------------------------------------------------- */

static PyObject *tiled_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"tile_shape",    "outer_layout",  "inner_layout",
                           "outer_strides", "inner_strides", "inner_tiled", NULL};
  PyObject *ts, *outer_o = NULL, *inner_o = NULL, *os_o = Py_None, *is_o = Py_None,
                *nested = Py_None;
  PyObject *argv_[6];
  if (hrpy_parse_tuple("TiledLayout", args, kwargs, kwlist, 6, 1, argv_) < 0) return NULL;
  ts = argv_[0];
  if (argv_[1] != NULL) outer_o = argv_[1];
  if (argv_[2] != NULL) inner_o = argv_[2];
  if (argv_[3] != NULL) os_o = argv_[3];
  if (argv_[4] != NULL) is_o = argv_[4];
  if (argv_[5] != NULL) nested = argv_[5];
  HrpyState *st = STATE(type);
  const char *ctx = "TiledLayout";
  uint64_t tile[HURRAY_MAX_RANK];
  int64_t ostr[HURRAY_MAX_RANK], istr[HURRAY_MAX_RANK];
  uint32_t n = 0, m = 0;
  uint8_t outer = HURRAY_LAYOUT_ROW_MAJOR, inner = HURRAY_LAYOUT_ROW_MAJOR;
  if (hrpy_arg_int_array(st, ts, ctx, "tile_shape", HRPY_ARR_U64, tile, &n) < 0) return NULL;
  if (outer_o != NULL && hrpy_arg_enum(outer_o, &k_outer, ctx, "outer_layout", &outer) < 0)
    return NULL;
  if (inner_o != NULL && hrpy_arg_enum(inner_o, &k_inner, ctx, "inner_layout", &inner) < 0)
    return NULL;
  HurrayTiledLevel levels[HURRAY_MAX_TILED_DEPTH];
  memset(levels, 0, sizeof levels);
  levels[0].tile_shape = tile;
  levels[0].outer_layout = outer;
  levels[0].inner_layout = inner;
  if (os_o != Py_None && outer != HURRAY_LAYOUT_STRIDED)
    return hrpy_raise(st->InvalidDescriptorError,
                     "%s: outer_strides are given only when outer_layout is 'strided'", ctx);
  if (is_o != Py_None && inner != HURRAY_LAYOUT_STRIDED)
    return hrpy_raise(st->InvalidDescriptorError,
                     "%s: inner_strides are given only when inner_layout is 'strided'", ctx);
  if (os_o != Py_None) {
    if (hrpy_arg_int_array(st, os_o, ctx, "outer_strides", HRPY_ARR_I64, ostr, &m) < 0) return NULL;
    if (m != n)
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: outer_strides has %u entries, tile_shape %u (one per dimension)",
                       ctx, (unsigned)m, (unsigned)n);
    levels[0].outer_strides = ostr;
  }
  if (is_o != Py_None) {
    if (hrpy_arg_int_array(st, is_o, ctx, "inner_strides", HRPY_ARR_I64, istr, &m) < 0) return NULL;
    if (m != n)
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: inner_strides has %u entries, tile_shape %u (one per dimension)",
                       ctx, (unsigned)m, (unsigned)n);
    levels[0].inner_strides = istr;
  }
  uint32_t depth = 1;
  if (nested != Py_None) {
    if (!Py_IS_TYPE(nested, st->types->LayoutByTag[HURRAY_LAYOUT_TILED]))
      return PyErr_Format(PyExc_TypeError, "%s: inner_tiled must be a hurray.TiledLayout, not %.100s",
                          ctx, Py_TYPE(nested)->tp_name);
    const HurrayLayout *in = hrpy_layout_value(nested);
    uint32_t in_n = hrpy_layout_rank(nested);
    if (in_n != n)
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: inner_tiled has rank %u, tile_shape %u entries", ctx,
                       (unsigned)in_n, (unsigned)n);
    if (in->u.tiled.depth + 1u > HURRAY_MAX_TILED_DEPTH)
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: nesting %u tiled levels exceeds the maximum depth %u", ctx,
                       (unsigned)(in->u.tiled.depth + 1u), (unsigned)HURRAY_MAX_TILED_DEPTH);
    for (uint32_t d = 0; d < in->u.tiled.depth; d++) levels[1 + d] = in->u.tiled.levels[d];
    depth += in->u.tiled.depth;
    if (inner != HURRAY_LAYOUT_TILED)
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: inner_tiled is given, so inner_layout must be 'tiled'", ctx);
  } else if (inner == HURRAY_LAYOUT_TILED) {
    return hrpy_raise(st->InvalidDescriptorError,
                     "%s: inner_layout 'tiled' needs the nested level as inner_tiled=", ctx);
  }
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_TILED;
  l.u.tiled.depth = depth;
  l.u.tiled.levels = levels;
  return finish(st, type, &l, n, n, ctx);
}

static const HurrayTiledLevel *level0(PyObject *s) { return &(*hrpy_layout_value(s)).u.tiled.levels[0]; }

static PyObject *tiled_tile_shape(PyObject *s, void *c) {
  (void)c;
  return hrpy_tuple_u64(level0(s)->tile_shape, hrpy_layout_rank(s));
}
static PyObject *tiled_outer_layout(PyObject *s, void *c) {
  (void)c;
  return PyUnicode_FromString(hrpy_enum_name(&k_inner, level0(s)->outer_layout));
}
static PyObject *tiled_inner_layout(PyObject *s, void *c) {
  (void)c;
  return PyUnicode_FromString(hrpy_enum_name(&k_inner, level0(s)->inner_layout));
}
static PyObject *tiled_outer_strides(PyObject *s, void *c) {
  (void)c;
  if (level0(s)->outer_strides == NULL) Py_RETURN_NONE;
  return hrpy_tuple_i64(level0(s)->outer_strides, hrpy_layout_rank(s));
}
static PyObject *tiled_inner_strides(PyObject *s, void *c) {
  (void)c;
  if (level0(s)->inner_strides == NULL) Py_RETURN_NONE;
  return hrpy_tuple_i64(level0(s)->inner_strides, hrpy_layout_rank(s));
}
static PyObject *tiled_inner_tiled(PyObject *s, void *c) {
  (void)c;
  const HurrayLayout *l = hrpy_layout_value(s);
  if (l->u.tiled.depth < 2) Py_RETURN_NONE;
  HurrayLayout in = *l;
  in.u.tiled.depth = l->u.tiled.depth - 1u;
  in.u.tiled.levels = l->u.tiled.levels + 1;
  return hrpy_layout_new(hrpy_state_of(s), Py_TYPE(s), &in, hrpy_layout_rank(s));
}

/* repr of levels[d..]; nested levels print inside inner_tiled=. */
static PyObject *tiled_level_repr(const HurrayLayout *l, uint32_t n, uint32_t d) {
  const HurrayTiledLevel *v = &l->u.tiled.levels[d];
  PyObject *ts = hrpy_tuple_u64(v->tile_shape, n);
  PyObject *os = v->outer_strides != NULL ? hrpy_tuple_i64(v->outer_strides, n) : NULL;
  PyObject *is = v->inner_strides != NULL ? hrpy_tuple_i64(v->inner_strides, n) : NULL;
  PyObject *nested = d + 1 < l->u.tiled.depth ? tiled_level_repr(l, n, d + 1) : NULL;
  PyObject *r = NULL;
  if (ts == NULL || (v->outer_strides != NULL && os == NULL) ||
      (v->inner_strides != NULL && is == NULL) || (d + 1 < l->u.tiled.depth && nested == NULL))
    goto done;
  {
    PyObject *os_part = os != NULL ? PyUnicode_FromFormat(", outer_strides=%R", os)
                                   : PyUnicode_FromString("");
    PyObject *is_part = is != NULL ? PyUnicode_FromFormat(", inner_strides=%R", is)
                                   : PyUnicode_FromString("");
    PyObject *n_part = nested != NULL ? PyUnicode_FromFormat(", inner_tiled=%U", nested)
                                      : PyUnicode_FromString("");
    if (os_part != NULL && is_part != NULL && n_part != NULL)
      r = PyUnicode_FromFormat("TiledLayout(tile_shape=%R, outer_layout='%s', inner_layout='%s'%U%U%U)",
                               ts, hrpy_enum_name(&k_inner, v->outer_layout),
                               hrpy_enum_name(&k_inner, v->inner_layout), os_part, is_part, n_part);
    Py_XDECREF(os_part);
    Py_XDECREF(is_part);
    Py_XDECREF(n_part);
  }
done:
  Py_XDECREF(ts);
  Py_XDECREF(os);
  Py_XDECREF(is);
  Py_XDECREF(nested);
  return r;
}
static PyObject *tiled_repr(PyObject *s) {
  return tiled_level_repr(hrpy_layout_value(s), hrpy_layout_rank(s), 0);
}

/* ---- Morton, Hilbert ------------------------------------------------------------------ */

static PyObject *morton_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"morton_bits", NULL};
  PyObject *b;
  PyObject *argv_[1];
  if (hrpy_parse_tuple("MortonLayout", args, kwargs, kwlist, 1, 1, argv_) < 0) return NULL;
  b = argv_[0];
  HrpyState *st = STATE(type);
  uint32_t bits[HURRAY_MAX_RANK], n = 0;
  if (hrpy_arg_int_array(st, b, "MortonLayout", "morton_bits", HRPY_ARR_U32, bits, &n) < 0) return NULL;
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_MORTON;
  l.u.morton.bits = bits;
  return finish(st, type, &l, n, n, "MortonLayout");
}
static PyObject *morton_bits(PyObject *s, void *c) {
  (void)c;
  return hrpy_tuple_u32((*hrpy_layout_value(s)).u.morton.bits, hrpy_layout_rank(s));
}
static PyObject *morton_repr(PyObject *s) {
  PyObject *t = morton_bits(s, NULL);
  if (t == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("MortonLayout(morton_bits=%R)", t);
  Py_DECREF(t);
  return r;
}

static PyObject *hilbert_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"hilbert_order", "hilbert_rank", NULL};
  PyObject *o, *r;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("HilbertLayout", args, kwargs, kwlist, 2, 2, argv_) < 0) return NULL;
  o = argv_[0];
  r = argv_[1];
  HrpyState *st = STATE(type);
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_HILBERT;
  if (hrpy_arg_u32(st, o, "HilbertLayout", "hilbert_order", &l.u.hilbert.order) < 0 ||
      hrpy_arg_u32(st, r, "HilbertLayout", "hilbert_rank", &l.u.hilbert.rank) < 0)
    return NULL;
  if (l.u.hilbert.rank > HURRAY_MAX_RANK)
    return hrpy_raise(st->InvalidDescriptorError,
                     "HilbertLayout: hilbert_rank %u exceeds the maximum rank %u",
                     (unsigned)l.u.hilbert.rank, (unsigned)HURRAY_MAX_RANK);
  return finish(st, type, &l, 0, l.u.hilbert.rank, "HilbertLayout");
}
static PyObject *hilbert_order(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong((*hrpy_layout_value(s)).u.hilbert.order);
}
static PyObject *hilbert_rank(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong((*hrpy_layout_value(s)).u.hilbert.rank);
}
static PyObject *hilbert_repr(PyObject *s) {
  return PyUnicode_FromFormat("HilbertLayout(hilbert_order=%u, hilbert_rank=%u)",
                              (unsigned)(*hrpy_layout_value(s)).u.hilbert.order,
                              (unsigned)(*hrpy_layout_value(s)).u.hilbert.rank);
}

/* ---- COO, CSR, CSC, CSF ---------------------------------------------------------------- */

static PyObject *coo_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"nnz", "is_sorted", NULL};
  PyObject *nnz, *sorted = Py_False;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("CooLayout", args, kwargs, kwlist, 2, 1, argv_) < 0) return NULL;
  nnz = argv_[0];
  if (argv_[1] != NULL) sorted = argv_[1];
  HrpyState *st = STATE(type);
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_COO;
  if (hrpy_arg_u64(st, nnz, "CooLayout", "nnz", UINT64_MAX, &l.u.coo.nnz) < 0) return NULL;
  if (!PyBool_Check(sorted))
    return PyErr_Format(PyExc_TypeError, "CooLayout: is_sorted must be a bool, not %.100s",
                        Py_TYPE(sorted)->tp_name);
  l.u.coo.is_sorted = sorted == Py_True ? 1 : 0;
  return hrpy_layout_new(st, type, &l, 0);
}
static PyObject *sparse_nnz(PyObject *s, void *c) {
  (void)c;
  const HurrayLayout *l = &(*hrpy_layout_value(s));
  uint64_t nnz = l->tag == HURRAY_LAYOUT_COO   ? l->u.coo.nnz
                 : l->tag == HURRAY_LAYOUT_CSF ? l->u.csf.nnz
                                               : l->u.csr.nnz;
  return PyLong_FromUnsignedLongLong(nnz);
}
static PyObject *coo_is_sorted(PyObject *s, void *c) {
  (void)c;
  return PyBool_FromLong((*hrpy_layout_value(s)).u.coo.is_sorted != 0);
}
static PyObject *coo_repr(PyObject *s) {
  return PyUnicode_FromFormat("CooLayout(nnz=%llu, is_sorted=%s)",
                              (unsigned long long)(*hrpy_layout_value(s)).u.coo.nnz,
                              (*hrpy_layout_value(s)).u.coo.is_sorted ? "True" : "False");
}

static PyObject *compressed_new(PyTypeObject *type, PyObject *args, PyObject *kwargs,
                                uint8_t tag, const char *name) {
  static const char *const kwlist[] = {"nnz", NULL};
  PyObject *argv_[1];
  if (hrpy_parse_tuple(name, args, kwargs, kwlist, 1, 1, argv_) < 0) return NULL;
  PyObject *nnz = argv_[0];
  HrpyState *st = STATE(type);
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = tag;
  if (hrpy_arg_u64(st, nnz, name, "nnz", UINT64_MAX, &l.u.csr.nnz) < 0) return NULL;
  return hrpy_layout_new(st, type, &l, 0);
}
static PyObject *csr_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return compressed_new(type, args, kwargs, HURRAY_LAYOUT_CSR, "CsrLayout");
}
static PyObject *csc_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return compressed_new(type, args, kwargs, HURRAY_LAYOUT_CSC, "CscLayout");
}
static PyObject *csr_repr(PyObject *s) {
  return PyUnicode_FromFormat("CsrLayout(nnz=%llu)", (unsigned long long)(*hrpy_layout_value(s)).u.csr.nnz);
}
static PyObject *csc_repr(PyObject *s) {
  return PyUnicode_FromFormat("CscLayout(nnz=%llu)", (unsigned long long)(*hrpy_layout_value(s)).u.csr.nnz);
}

static PyObject *csf_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"nnz", "mode_order", NULL};
  PyObject *nnz, *mo;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("CsfLayout", args, kwargs, kwlist, 2, 2, argv_) < 0) return NULL;
  nnz = argv_[0];
  mo = argv_[1];
  HrpyState *st = STATE(type);
  uint32_t order[HURRAY_MAX_RANK], n = 0;
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_CSF;
  if (hrpy_arg_u64(st, nnz, "CsfLayout", "nnz", UINT64_MAX, &l.u.csf.nnz) < 0) return NULL;
  if (hrpy_arg_int_array(st, mo, "CsfLayout", "mode_order", HRPY_ARR_U32, order, &n) < 0) return NULL;
  l.u.csf.mode_order = order;
  return finish(st, type, &l, n, n, "CsfLayout");
}
static PyObject *csf_mode_order(PyObject *s, void *c) {
  (void)c;
  return hrpy_tuple_u32((*hrpy_layout_value(s)).u.csf.mode_order, hrpy_layout_rank(s));
}
static PyObject *csf_repr(PyObject *s) {
  PyObject *t = csf_mode_order(s, NULL);
  if (t == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat("CsfLayout(nnz=%llu, mode_order=%R)",
                                     (unsigned long long)(*hrpy_layout_value(s)).u.csf.nnz, t);
  Py_DECREF(t);
  return r;
}

/* ---- block-paged --------------------------------------------------------------------- */

static PyObject *paged_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"page_size", "num_pages", "paged_axis", "num_seqs", "kv_role",
                           "layer_index", "block_table_index_type", NULL};
  PyObject *ps, *np_, *axis, *ns, *role = NULL, *layer = Py_None, *itype = NULL;
  PyObject *argv_[7];
  if (hrpy_parse_tuple("BlockPagedLayout", args, kwargs, kwlist, 7, 4, argv_) < 0) return NULL;
  ps = argv_[0];
  np_ = argv_[1];
  axis = argv_[2];
  ns = argv_[3];
  if (argv_[4] != NULL) role = argv_[4];
  if (argv_[5] != NULL) layer = argv_[5];
  if (argv_[6] != NULL) itype = argv_[6];
  HrpyState *st = STATE(type);
  const char *ctx = "BlockPagedLayout";
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_BLOCK_PAGED;
  l.u.block_paged.kv_role = HURRAY_KV_ROLE_KEY;
  l.u.block_paged.layer_index = HURRAY_NO_LAYER_INDEX;
  l.u.block_paged.block_table_index_type = HURRAY_BLOCK_INDEX_U32;
  if (hrpy_arg_u32(st, ps, ctx, "page_size", &l.u.block_paged.page_size) < 0 ||
      hrpy_arg_u64(st, np_, ctx, "num_pages", UINT64_MAX, &l.u.block_paged.num_pages) < 0 ||
      hrpy_arg_u32(st, axis, ctx, "paged_axis", &l.u.block_paged.paged_axis) < 0 ||
      hrpy_arg_u32(st, ns, ctx, "num_seqs", &l.u.block_paged.num_seqs) < 0)
    return NULL;
  if (role != NULL && hrpy_arg_enum(role, &k_roles, ctx, "kv_role", &l.u.block_paged.kv_role) < 0)
    return NULL;
  if (itype != NULL &&
      hrpy_arg_enum(itype, &k_index_types, ctx, "block_table_index_type",
               &l.u.block_paged.block_table_index_type) < 0)
    return NULL;
  if (layer != Py_None) {
    uint64_t v;
    /* 0xFFFFFFFF is the wire's "no layer": spell it None */
    if (hrpy_arg_u64(st, layer, ctx, "layer_index", UINT32_MAX - 1u, &v) < 0) return NULL;
    l.u.block_paged.layer_index = (uint32_t)v;
  }
  return finish(st, type, &l, 0, 3, ctx);
}

#define BP(s) ((*hrpy_layout_value(s)).u.block_paged)
static PyObject *paged_page_size(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(BP(s).page_size);
}
static PyObject *paged_num_pages(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(BP(s).num_pages);
}
static PyObject *paged_paged_axis(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(BP(s).paged_axis);
}
static PyObject *paged_num_seqs(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(BP(s).num_seqs);
}
static PyObject *paged_kv_role(PyObject *s, void *c) {
  (void)c;
  return PyUnicode_FromString(hrpy_enum_name(&k_roles, BP(s).kv_role));
}
static PyObject *paged_layer_index(PyObject *s, void *c) {
  (void)c;
  if (BP(s).layer_index == HURRAY_NO_LAYER_INDEX) Py_RETURN_NONE;
  return PyLong_FromUnsignedLong(BP(s).layer_index);
}
static PyObject *paged_index_type(PyObject *s, void *c) {
  (void)c;
  return PyUnicode_FromString(hrpy_enum_name(&k_index_types, BP(s).block_table_index_type));
}
static PyObject *paged_repr(PyObject *s) {
  PyObject *layer = paged_layer_index(s, NULL);
  if (layer == NULL) return NULL;
  PyObject *r = PyUnicode_FromFormat(
      "BlockPagedLayout(page_size=%u, num_pages=%llu, paged_axis=%u, num_seqs=%u, "
      "kv_role='%s', layer_index=%R, block_table_index_type='%s')",
      (unsigned)BP(s).page_size, (unsigned long long)BP(s).num_pages, (unsigned)BP(s).paged_axis,
      (unsigned)BP(s).num_seqs, hrpy_enum_name(&k_roles, BP(s).kv_role), layer,
      hrpy_enum_name(&k_index_types, BP(s).block_table_index_type));
  Py_DECREF(layer);
  return r;
}

/* One index array for validate_index_buffers: a typed buffer whose items are
 * `width` bytes (exact length), raw bytes (itemsize 1, longer is fine), or a
 * host hurray.Tensor (its bytes). */
typedef struct {
  Py_buffer view;
  const void *data;
  uint64_t size;
  bool typed;
} IndexArg;

static int index_arg(HrpyState *st, PyObject *o, uint32_t width, const char *what,
                     IndexArg *out) {
  memset(out, 0, sizeof *out);
  if (hrpy_tensor_check(st, o)) {
    HrpyTensorView t_view = hrpy_tensor_view(o);
  const HrpyTensorView *t = &t_view;
    if (hrpy_device_tag(t->device) != HURRAY_DEVICE_CPU || t->nbuf == 0) {
      PyErr_Format(PyExc_TypeError, "validate_index_buffers: %s must be host memory", what);
      return -1;
    }
    if (hrpy_tensor_check_readable(st, t->self, "validate_index_buffers") < 0) return -1;
    if (t->f->layout.tag != HURRAY_LAYOUT_ROW_MAJOR) {
      PyErr_Format(PyExc_TypeError, "validate_index_buffers: %s must be a row-major tensor",
                   what);
      return -1;
    }
    uint64_t count = 0, bytes = 0;
    if (!hrpy_element_count(t->f->rank, t->f->shape, &count) ||
        hurray_buffer_size_bytes(t->f->type_tag, count, &bytes) != HURRAY_OK) {
      PyErr_Format(PyExc_TypeError, "validate_index_buffers: %s has no fixed size", what);
      return -1;
    }
    const HurrayDtypeInfo *info = hurray_dtype_info(t->f->type_tag);
    out->data = t->bufs[0].data + t->f->byte_offset;
    out->size = bytes;
    out->typed = info != NULL && info->bit_width > 8;
    if (out->typed && info->bit_width != width * 8u) {
      PyErr_Format(PyExc_ValueError,
                   "validate_index_buffers: %s holds %s entries; this layout's index type is "
                   "uint%u",
                   what, info->name, (unsigned)(width * 8u));
      return -1;
    }
    return 0;
  }
  if (PyObject_GetBuffer(o, &out->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "validate_index_buffers: %s must be a buffer (bytes, numpy.ndarray, ...) or "
                   "a hurray.Tensor, not %.100s",
                   what, Py_TYPE(o)->tp_name);
    }
    return -1;
  }
  out->data = out->view.buf;
  out->size = (uint64_t)out->view.len;
  if (out->view.itemsize != 1) {
    const char *f = out->view.format != NULL ? out->view.format : "B";
    while (*f == '<' || *f == '=' || *f == '@') f++;
    bool integer = f[0] != '\0' && f[1] == '\0' && strchr("bBhHiIlLqQnN", f[0]) != NULL;
    if (!integer || (uint32_t)out->view.itemsize != width) {
      PyErr_Format(PyExc_ValueError,
                   "validate_index_buffers: %s has items of format '%s' and %zd bytes; this "
                   "layout's index type is uint%u",
                   what, out->view.format != NULL ? out->view.format : "B", out->view.itemsize,
                   (unsigned)(width * 8u));
      PyBuffer_Release(&out->view);
      return -1;
    }
    out->typed = true;
  }
  return 0;
}

static PyObject *paged_validate_index_buffers(PyObject *s, PyObject *const *args,
                                              Py_ssize_t nargs, PyObject *kwnames) {
  HrpyState *st = hrpy_state_of(s);
  static const char *const names[] = {"seq_ptr", "block_table", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("validate_index_buffers", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  uint32_t width = BP(s).block_table_index_type == HURRAY_BLOCK_INDEX_U64 ? 8u : 4u;
  IndexArg sp, bt;
  if (index_arg(st, a[0], width, "seq_ptr", &sp) < 0) return NULL;
  if (index_arg(st, a[1], width, "block_table", &bt) < 0) {
    if (sp.view.obj != NULL) PyBuffer_Release(&sp.view);
    return NULL;
  }
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_block_paged_validate_index_buffers(
      BP(s).block_table_index_type, BP(s).num_seqs, BP(s).num_pages, sp.data, sp.size, bt.data,
      bt.size, sp.typed && bt.typed ? HURRAY_INDEX_EXACT_LENGTHS : 0u, &err);
  if (sp.view.obj != NULL) PyBuffer_Release(&sp.view);
  if (bt.view.obj != NULL) PyBuffer_Release(&bt.view);
  if (rc == HURRAY_ERR_BUFFER_SIZE) {
    /* a short index array is an index-data violation here: there is no
     * descriptor whose declared sizes could be at fault */
    return hrpy_raise(st->InvalidDescriptorError, "validate_index_buffers: %s", err.message);
  }
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, "validate_index_buffers");
  Py_RETURN_NONE;
}

static PyObject *paged_validate_quantization(PyObject *s, PyObject *q) {
  HrpyState *st = hrpy_state_of(s);
  const char *ctx = "validate_quantization_compatibility";
  if (!hrpy_quant_check_type(st, q))
    return PyErr_Format(PyExc_TypeError,
                        "%s: expected a quantization object (PerTensorAffine, PerChannelAffine, "
                        "PerBlockAffine, NF4 or MXFP), not %.100s",
                        ctx, Py_TYPE(q)->tp_name);
  const HurrayQuantization *qz = hrpy_quant_value(q);
  /* A probe tensor with this paging: every extent the scheme's own rules
   * accept, every buffer large enough, the parameter buffers at their indices;
   * what can still fail is the composition of scheme and paging. */
  uint64_t shape[3] = {1, 1, 1};
  uint32_t axis = UINT32_MAX, block = 0, sidx = HURRAY_QUANT_NO_BUFFER,
           zidx = HURRAY_QUANT_NO_BUFFER;
  uint8_t type = HURRAY_DTYPE_INT8;
  switch (qz->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      type = HURRAY_DTYPE_INT32;
      break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      type = HURRAY_DTYPE_INT32;
      axis = qz->u.per_channel.axis;
      sidx = qz->u.per_channel.scale_buffer_index;
      zidx = qz->u.per_channel.zero_point_buffer_index;
      break;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      axis = qz->u.per_block.axis;
      block = qz->u.per_block.block_size;
      sidx = qz->u.per_block.scale_buffer_index;
      zidx = qz->u.per_block.zero_point_buffer_index;
      break;
    case HURRAY_QUANT_NF4:
      type = HURRAY_DTYPE_UINT4;
      axis = qz->u.nf4.axis;
      block = qz->u.nf4.block_size;
      sidx = qz->u.nf4.scale_buffer_index;
      break;
    default:
      axis = qz->u.mxfp.axis;
      block = qz->u.mxfp.block_size;
      sidx = qz->u.mxfp.scale_buffer_index;
      break;
  }
  if (axis < 3 && block > 0) shape[axis] = block;
  /* exactly the layout's three buffers plus the scheme's parameter buffers */
  uint32_t nbuf = 3;
  if (sidx != HURRAY_QUANT_NO_BUFFER) nbuf++;
  if (zidx != HURRAY_QUANT_NO_BUFFER && zidx != sidx) nbuf++;
  HurrayBufferHandle handles[HURRAY_MAX_BUFFERS];
  memset(handles, 0, sizeof handles);
  for (uint32_t i = 0; i < nbuf; i++) {
    handles[i].byte_size = UINT64_MAX / 4u;
    handles[i].alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
  }
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = type;
  f.rank = 3;
  f.shape = shape;
  f.layout = (*hrpy_layout_value(s));
  f.buffer_count = nbuf;
  f.buffers = handles;
  f.quantization = qz;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_validate(&f, HURRAY_DECODE_STRICT, &err);
  if (rc == HURRAY_ERR_BUFFER_SIZE) /* only a parameter size overflowing can get here */
    rc = err.status = HURRAY_ERR_INVALID_QUANTIZATION;
  if (rc != HURRAY_OK) {
    hrpy_error_drop_offset(&err);
    return hrpy_raise_status(st, rc, &err, ctx);
  }
  Py_RETURN_NONE;
}

static PyObject *layout_reduce(PyObject *s, PyObject *unused);

static PyMethodDef paged_methods[] = {
    {"__reduce__", layout_reduce, METH_NOARGS, NULL},
    {"validate_index_buffers", (PyCFunction)(void (*)(void))paged_validate_index_buffers,
     METH_FASTCALL | METH_KEYWORDS,
     "validate_index_buffers(self, seq_ptr, block_table)\n--\n\nCheck the storage invariants "
     "of block-paged.md: seq_ptr[0] == 0, non-decreasing, seq_ptr[num_seqs] == "
     "len(block_table), every page id < num_pages (two sequences naming one page is "
     "allowed). Each argument is a typed array of the layout's index type (exact length), "
     "raw bytes, or a host hurray.Tensor. InvalidDescriptorError on a violation."},
    {"validate_quantization_compatibility", paged_validate_quantization, METH_O,
     "validate_quantization_compatibility(self, quantization, /)\n--\n\nRaise "
     "InvalidDescriptorError unless the scheme composes with this paging (per-channel on "
     "axis 1 or 2; per-block on axis 0 with block_size == page_size; parameter buffers from "
     "index 3)."},
    {NULL, NULL, 0, NULL},
};

/* ---- composite ------------------------------------------------------------------------ */

static PyObject *composite_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"composition_rule", "member_count", "combine_op", NULL};
  PyObject *rule_o, *count_o, *op_o = Py_None;
  PyObject *argv_[3];
  if (hrpy_parse_tuple("CompositeLayout", args, kwargs, kwlist, 3, 2, argv_) < 0) return NULL;
  rule_o = argv_[0];
  count_o = argv_[1];
  if (argv_[2] != NULL) op_o = argv_[2];
  HrpyState *st = STATE(type);
  const char *ctx = "CompositeLayout";
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  l.tag = HURRAY_LAYOUT_COMPOSITE;
  if (hrpy_arg_enum(rule_o, &k_rules, ctx, "composition_rule", &l.u.composite.rule) < 0) return NULL;
  if (hrpy_arg_u32(st, count_o, ctx, "member_count", &l.u.composite.member_count) < 0) return NULL;
  if (l.u.composite.rule == HURRAY_COMPOSITE_OVERLAY) {
    if (op_o == Py_None)
      return PyErr_Format(PyExc_ValueError,
                          "%s: an overlay needs combine_op='replace' or combine_op='add'", ctx);
    if (hrpy_arg_enum(op_o, &k_combines, ctx, "combine_op", &l.u.composite.combine_op) < 0)
      return NULL;
  } else if (op_o != Py_None) {
    return PyErr_Format(PyExc_ValueError,
                        "%s: combine_op applies only to an 'overlay'; a %R composite has none",
                        ctx, rule_o);
  }
  return finish(st, type, &l, 0, 0, ctx);
}
static const char *rule_name(uint8_t rule) {
  if (rule >= 0xF0 && rule <= 0xFE) return "private";
  return hrpy_enum_name(&k_rules, rule);
}
static PyObject *composite_rule(PyObject *s, void *c) {
  (void)c;
  return PyUnicode_FromString(rule_name((*hrpy_layout_value(s)).u.composite.rule));
}
static PyObject *composite_combine(PyObject *s, void *c) {
  (void)c;
  const HurrayLayout *l = &(*hrpy_layout_value(s));
  if (l->u.composite.rule != HURRAY_COMPOSITE_OVERLAY) Py_RETURN_NONE;
  return PyUnicode_FromString(hrpy_enum_name(&k_combines, l->u.composite.combine_op));
}
static PyObject *composite_count(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong((*hrpy_layout_value(s)).u.composite.member_count);
}
static PyObject *composite_repr(PyObject *s) {
  const HurrayLayout *l = &(*hrpy_layout_value(s));
  if (l->u.composite.rule == HURRAY_COMPOSITE_OVERLAY)
    return PyUnicode_FromFormat(
        "CompositeLayout(composition_rule='overlay', member_count=%u, combine_op='%s')",
        (unsigned)l->u.composite.member_count, hrpy_enum_name(&k_combines, l->u.composite.combine_op));
  return PyUnicode_FromFormat("CompositeLayout(composition_rule='%s', member_count=%u)",
                              rule_name(l->u.composite.rule),
                              (unsigned)l->u.composite.member_count);
}

/* ---- private extension, unknown ------------------------------------------------------- */

static int tag_arg(HrpyState *st, PyObject *o, const char *ctx, uint8_t *out) {
  uint64_t v;
  if (hrpy_arg_u64(st, o, ctx, "tag", 255, &v) < 0) return -1;
  *out = (uint8_t)v;
  return 0;
}

/* Copies a bytes-like object (None: empty) into *mem / *len (PyMem). */
static int bytes_arg(PyObject *o, const char *ctx, const char *what, uint8_t **mem,
                     uint32_t *len) {
  *mem = NULL;
  *len = 0;
  if (o == Py_None) return 0;
  Py_buffer v;
  if (PyObject_GetBuffer(o, &v, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: %s must be bytes-like, not %.100s", ctx, what,
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  if ((uint64_t)v.len > UINT32_MAX) {
    PyBuffer_Release(&v);
    PyErr_Format(PyExc_ValueError, "%s: %s is longer than 4294967295 bytes", ctx, what);
    return -1;
  }
  if (v.len > 0) {
    *mem = PyMem_Malloc((size_t)v.len);
    if (*mem == NULL) {
      PyBuffer_Release(&v);
      PyErr_NoMemory();
      return -1;
    }
    memcpy(*mem, v.buf, (size_t)v.len);
  }
  *len = (uint32_t)v.len;
  PyBuffer_Release(&v);
  return 0;
}

static PyObject *private_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"tag", "extension_layout_id", "extension_data", NULL};
  PyObject *tag_o, *id_o, *data_o = Py_None;
  PyObject *argv_[3];
  if (hrpy_parse_tuple("PrivateExtensionLayout", args, kwargs, kwlist, 3, 2, argv_) < 0) return NULL;
  tag_o = argv_[0];
  id_o = argv_[1];
  if (argv_[2] != NULL) data_o = argv_[2];
  HrpyState *st = STATE(type);
  const char *ctx = "PrivateExtensionLayout";
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  if (tag_arg(st, tag_o, ctx, &l.tag) < 0) return NULL;
  if (hurray_layout_tag_kind(l.tag) != HURRAY_TAG_PRIVATE)
    return hrpy_raise(st->InvalidDescriptorError,
                     "%s: tag 0x%s is not in the private range 0xF0-0xFE", ctx,
                     hrpy_hex(l.tag).s);
  if (hrpy_arg_u64(st, id_o, ctx, "extension_layout_id", UINT64_MAX, &l.u.private_ext.layout_id) < 0)
    return NULL;
  uint8_t *data;
  if (bytes_arg(data_o, ctx, "extension_data", &data, &l.u.private_ext.data_len) < 0)
    return NULL;
  l.u.private_ext.data = data;
  PyObject *r = hrpy_layout_new(st, type, &l, 0);
  PyMem_Free(data);
  return r;
}
static PyObject *private_id(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong((*hrpy_layout_value(s)).u.private_ext.layout_id);
}
static PyObject *private_data(PyObject *s, void *c) {
  (void)c;
  const HurrayLayout *l = &(*hrpy_layout_value(s));
  return PyBytes_FromStringAndSize((const char *)l->u.private_ext.data,
                                   (Py_ssize_t)l->u.private_ext.data_len);
}
static PyObject *private_repr(PyObject *s) {
  const HurrayLayout *l = &(*hrpy_layout_value(s));
  return PyUnicode_FromFormat(
      "PrivateExtensionLayout(tag=0x%s, extension_layout_id=%llu, extension_data=%u bytes)",
      hrpy_hex(l->tag).s, (unsigned long long)l->u.private_ext.layout_id,
      (unsigned)l->u.private_ext.data_len);
}

static const char *class_for_named(uint8_t tag) {
  switch (tag) {
    case HURRAY_LAYOUT_ROW_MAJOR: return "RowMajorLayout";
    case HURRAY_LAYOUT_COL_MAJOR: return "ColMajorLayout";
    case HURRAY_LAYOUT_STRIDED: return "StridedLayout";
    case HURRAY_LAYOUT_TILED: return "TiledLayout";
    case HURRAY_LAYOUT_MORTON: return "MortonLayout";
    case HURRAY_LAYOUT_HILBERT: return "HilbertLayout";
    case HURRAY_LAYOUT_COO: return "CooLayout";
    case HURRAY_LAYOUT_CSR: return "CsrLayout";
    case HURRAY_LAYOUT_CSC: return "CscLayout";
    case HURRAY_LAYOUT_CSF: return "CsfLayout";
    case HURRAY_LAYOUT_BLOCK_PAGED: return "BlockPagedLayout";
    case HURRAY_LAYOUT_COMPOSITE: return "CompositeLayout";
    default: return "Layout";
  }
}

static PyObject *unknown_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"tag", "raw_bytes", NULL};
  PyObject *tag_o, *raw_o = Py_None;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("UnknownLayout", args, kwargs, kwlist, 2, 1, argv_) < 0) return NULL;
  tag_o = argv_[0];
  if (argv_[1] != NULL) raw_o = argv_[1];
  HrpyState *st = STATE(type);
  const char *ctx = "UnknownLayout";
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  if (tag_arg(st, tag_o, ctx, &l.tag) < 0) return NULL;
  switch (hurray_layout_tag_kind(l.tag)) {
    case HURRAY_TAG_NAMED:
      return PyErr_Format(PyExc_ValueError,
                          "%s: tag 0x%s is the %s layout, not an unknown one; use hurray.%s",
                          ctx, hrpy_hex(l.tag).s, hrpy_layout_name(l.tag), class_for_named(l.tag));
    case HURRAY_TAG_PRIVATE:
      return PyErr_Format(PyExc_ValueError,
                          "%s: tag 0x%s is a private layout; use "
                          "hurray.PrivateExtensionLayout, which carries its extension id",
                          ctx, hrpy_hex(l.tag).s);
    case HURRAY_TAG_INVALID:
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: tag 0x%s is invalid in every version of the format", ctx,
                       hrpy_hex(l.tag).s);
    default:
      break;
  }
  uint8_t *raw;
  if (bytes_arg(raw_o, ctx, "raw_bytes", &raw, &l.u.opaque.len) < 0) return NULL;
  l.u.opaque.bytes = raw;
  PyObject *r = hrpy_layout_new(st, type, &l, 0);
  PyMem_Free(raw);
  return r;
}
static PyObject *unknown_raw(PyObject *s, void *c) {
  (void)c;
  const HurrayLayout *l = &(*hrpy_layout_value(s));
  return PyBytes_FromStringAndSize((const char *)l->u.opaque.bytes, (Py_ssize_t)l->u.opaque.len);
}
static PyObject *unknown_repr(PyObject *s) {
  return PyUnicode_FromFormat("UnknownLayout(tag=0x%s, raw_bytes=%u bytes)",
                              hrpy_hex((*hrpy_layout_value(s)).tag).s, (unsigned)(*hrpy_layout_value(s)).u.opaque.len);
}

/* ---- the type table -------------------------------------------------------------------- */

#define GET(name, fn, doc) {name, fn, NULL, doc, NULL}
#define END_GET {NULL, NULL, NULL, NULL, NULL}

static PyGetSetDef no_getset[] = {END_GET};
static PyGetSetDef strided_getset[] = {
    GET("strides", strided_strides, "Per-dimension strides in logical elements (signed)."),
    END_GET};
static PyGetSetDef tiled_getset[] = {
    GET("tile_shape", tiled_tile_shape, "Tile extent along each dimension."),
    GET("outer_layout", tiled_outer_layout,
        "Order of the tiles: 'row_major', 'col_major' or 'strided'."),
    GET("inner_layout", tiled_inner_layout,
        "Order inside a tile: 'row_major', 'col_major', 'strided' or 'tiled'."),
    GET("outer_strides", tiled_outer_strides,
        "Tile-grid strides (in tiles), or None unless outer_layout is 'strided'."),
    GET("inner_strides", tiled_inner_strides,
        "Within-tile strides (in elements), or None unless inner_layout is 'strided'."),
    GET("inner_tiled", tiled_inner_tiled,
        "The nested TiledLayout, or None unless inner_layout is 'tiled'."),
    END_GET};
static PyGetSetDef morton_getset[] = {
    GET("morton_bits", morton_bits, "Interleaved index bits per dimension."), END_GET};
static PyGetSetDef hilbert_getset[] = {
    GET("hilbert_order", hilbert_order, "Curve order: every dimension is 2**order long."),
    GET("hilbert_rank", hilbert_rank, "Curve rank (the tensor's rank)."), END_GET};
static PyGetSetDef coo_getset[] = {
    GET("nnz", sparse_nnz, "Number of stored elements."),
    GET("is_sorted", coo_is_sorted, "True when the coordinates are in strictly increasing "
                                    "lexicographic order."),
    END_GET};
static PyGetSetDef csr_getset[] = {GET("nnz", sparse_nnz, "Number of stored elements."),
                                   END_GET};
static PyGetSetDef csf_getset[] = {
    GET("nnz", sparse_nnz, "Number of stored elements."),
    GET("mode_order", csf_mode_order, "The dimension nesting order."), END_GET};
static PyGetSetDef paged_getset[] = {
    GET("page_size", paged_page_size, "Tokens per page."),
    GET("num_pages", paged_num_pages, "Pages in the shared pool."),
    GET("paged_axis", paged_paged_axis, "The paged axis (0)."),
    GET("num_seqs", paged_num_seqs, "Sequences sharing the pool."),
    GET("kv_role", paged_kv_role, "'key', 'value' or 'fused'."),
    GET("layer_index", paged_layer_index, "The transformer layer, or None."),
    GET("block_table_index_type", paged_index_type, "'uint32' or 'uint64'."),
    END_GET};
static PyGetSetDef composite_getset[] = {
    GET("composition_rule", composite_rule, "'partition', 'overlay' or 'group'."),
    GET("combine_op", composite_combine, "'replace' or 'add' for an overlay, else None."),
    GET("member_count", composite_count, "Number of members the head composes."),
    END_GET};
static PyGetSetDef private_getset[] = {
    GET("extension_layout_id", private_id, "The private extension identifier."),
    GET("extension_data", private_data, "The opaque payload (bytes)."), END_GET};
static PyGetSetDef unknown_getset[] = {
    GET("raw_bytes", unknown_raw,
        "Everything after byte_offset, kept verbatim (a permissive decode cannot find where "
        "an unknown layout's payload ends)."),
    END_GET};

static PyMethodDef no_methods[] = {{"__reduce__", layout_reduce, METH_NOARGS, NULL},
                                    {NULL, NULL, 0, NULL}};

/* Constructor parameters, in order, each also a getter of the class: what
 * __reduce__ rebuilds a layout from. */
static const char *const a_none[] = {NULL};
static const char *const a_strided[] = {"strides", NULL};
static const char *const a_tiled[] = {"tile_shape",    "outer_layout",  "inner_layout",
                                      "outer_strides", "inner_strides", "inner_tiled", NULL};
static const char *const a_morton[] = {"morton_bits", NULL};
static const char *const a_hilbert[] = {"hilbert_order", "hilbert_rank", NULL};
static const char *const a_coo[] = {"nnz", "is_sorted", NULL};
static const char *const a_nnz[] = {"nnz", NULL};
static const char *const a_csf[] = {"nnz", "mode_order", NULL};
static const char *const a_paged[] = {"page_size", "num_pages",   "paged_axis",
                                      "num_seqs",  "kv_role",     "layer_index",
                                      "block_table_index_type", NULL};
static const char *const a_composite[] = {"composition_rule", "member_count", "combine_op",
                                          NULL};
static const char *const a_private[] = {"tag", "extension_layout_id", "extension_data", NULL};
static const char *const a_unknown[] = {"tag", "raw_bytes", NULL};

/* One bound layout class. `tag` is the named tag it binds; the two
 * catch-all classes (private tags, unknown tags) have tag 0 and a role. */
typedef enum { CLASS_NAMED, CLASS_PRIVATE, CLASS_UNKNOWN } ClassRole;

typedef struct {
  uint8_t tag;
  ClassRole role;
  const char *name;
  const char *doc;
  newfunc tp_new;
  reprfunc repr;
  PyGetSetDef *getset;
  PyMethodDef *methods;
  const char *const *args; /* constructor parameters (pickling) */
} ClassDef;

/* The layout classes: adding a layout adds its entry here (and its
 * constructor, getters and repr above); nothing else in the extension
 * switches over layout tags. */
static const ClassDef k_classes[] = {
    {HURRAY_LAYOUT_ROW_MAJOR, CLASS_NAMED, "hurray.RowMajorLayout",
     "RowMajorLayout()\n--\n\nRow-major (C-order) layout, tag 0x01: the default.", rowmajor_new,
     rowmajor_repr, no_getset, no_methods, a_none},
    {HURRAY_LAYOUT_COL_MAJOR, CLASS_NAMED, "hurray.ColMajorLayout",
     "ColMajorLayout()\n--\n\nColumn-major (Fortran-order) layout, tag 0x02.", colmajor_new,
     colmajor_repr, no_getset, no_methods, a_none},
    {HURRAY_LAYOUT_STRIDED, CLASS_NAMED, "hurray.StridedLayout",
     "StridedLayout(strides)\n--\n\nExplicit per-dimension strides, tag 0x03. Strides are in "
     "logical elements (not bytes), signed, and may be negative or zero.",
     strided_new, strided_repr, strided_getset, no_methods, a_strided},
    {HURRAY_LAYOUT_TILED, CLASS_NAMED, "hurray.TiledLayout",
     "TiledLayout(tile_shape, outer_layout='row_major', inner_layout='row_major', "
     "outer_strides=None, inner_strides=None, inner_tiled=None)\n--\n\nTiled (blocked) "
     "layout, tag 0x04. Strides are given exactly when the matching ordering is 'strided', "
     "inner_tiled exactly when inner_layout is 'tiled' (at most 8 levels).",
     tiled_new, tiled_repr, tiled_getset, no_methods, a_tiled},
    {HURRAY_LAYOUT_MORTON, CLASS_NAMED, "hurray.MortonLayout",
     "MortonLayout(morton_bits)\n--\n\nMorton (Z-order) layout, tag 0x05: morton_bits[k] "
     "index bits interleaved for dimension k.",
     morton_new, morton_repr, morton_getset, no_methods, a_morton},
    {HURRAY_LAYOUT_HILBERT, CLASS_NAMED, "hurray.HilbertLayout",
     "HilbertLayout(hilbert_order, hilbert_rank)\n--\n\nHilbert-curve layout, tag 0x40: every "
     "dimension is 2**hilbert_order long and hilbert_rank is the tensor's rank.",
     hilbert_new, hilbert_repr, hilbert_getset, no_methods, a_hilbert},
    {HURRAY_LAYOUT_COO, CLASS_NAMED, "hurray.CooLayout",
     "CooLayout(nnz, is_sorted=False)\n--\n\nCoordinate-list sparse layout, tag 0x06: values, "
     "then [nnz, rank] uint64 indices. nnz is required: it is never inferred from buffers.",
     coo_new, coo_repr, coo_getset, no_methods, a_coo},
    {HURRAY_LAYOUT_CSR, CLASS_NAMED, "hurray.CsrLayout",
     "CsrLayout(nnz)\n--\n\nCompressed sparse rows, tag 0x07 (rank 2): values, col_indices, "
     "row_ptr (uint64).",
     csr_new, csr_repr, csr_getset, no_methods, a_nnz},
    {HURRAY_LAYOUT_CSC, CLASS_NAMED, "hurray.CscLayout",
     "CscLayout(nnz)\n--\n\nCompressed sparse columns, tag 0x08 (rank 2): values, "
     "row_indices, col_ptr (uint64).",
     csc_new, csc_repr, csr_getset, no_methods, a_nnz},
    {HURRAY_LAYOUT_CSF, CLASS_NAMED, "hurray.CsfLayout",
     "CsfLayout(nnz, mode_order)\n--\n\nCompressed sparse fibers, tag 0x09 (rank >= 3): "
     "values, then a (pos, crd) pair per level: 2 * rank + 1 buffers, reached with "
     "Tensor.buffer(i).",
     csf_new, csf_repr, csf_getset, no_methods, a_csf},
    {HURRAY_LAYOUT_BLOCK_PAGED, CLASS_NAMED, "hurray.BlockPagedLayout",
     "BlockPagedLayout(page_size, num_pages, paged_axis, num_seqs, kv_role='key', "
     "layer_index=None, block_table_index_type='uint32')\n--\n\nBlock-paged KV-cache layout, "
     "tag 0x0A (rank 3): page pool, block table, seq_ptr.",
     paged_new, paged_repr, paged_getset, paged_methods, a_paged},
    {HURRAY_LAYOUT_COMPOSITE, CLASS_NAMED, "hurray.CompositeLayout",
     "CompositeLayout(composition_rule, member_count, combine_op=None)\n--\n\nComposite head, "
     "tag 0x0B: owns no buffers. combine_op is required for 'overlay' and refused otherwise. "
     "Readable in full; hurray.Tensor refuses it (use hurray.Composite).",
     composite_new, composite_repr, composite_getset, no_methods, a_composite},
    {0, CLASS_PRIVATE, "hurray.PrivateExtensionLayout",
     "PrivateExtensionLayout(tag, extension_layout_id, extension_data=None)\n--\n\nAn "
     "implementation-private layout, tags 0xF0-0xFE. Its buffer count is not knowable, so "
     "the buffer-count and buffer-size tiers cannot run for it.",
     private_new, private_repr, private_getset, no_methods, a_private},
    {0, CLASS_UNKNOWN, "hurray.UnknownLayout",
     "UnknownLayout(tag, raw_bytes=None)\n--\n\nA reserved layout tag this build cannot parse "
     "(a newer format), kept for permissive relays. Named and private tags are refused.",
     unknown_new, unknown_repr, unknown_getset, no_methods, a_unknown},
};

/* Pickling: the class called with its constructor parameters, read back
 * through the getters of the same names. The bare Layout (a named tag this
 * build does not bind) has no constructor and keeps the base's refusal. */
static PyObject *layout_reduce(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyState *st = STATE(Py_TYPE(s));
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(st->types->layout_classes); i++) {
    if ((PyObject *)Py_TYPE(s) == PyTuple_GET_ITEM(st->types->layout_classes, i))
      return hrpy_reduce_by_attrs(s, k_classes[i].args, false);
  }
  return PyErr_Format(PyExc_TypeError, "cannot pickle '%.100s' object", Py_TYPE(s)->tp_name);
}

int hrpy_layout_types_init(PyObject *m, HrpyState *st) {
  const size_t count = sizeof k_classes / sizeof k_classes[0];
  st->types->layout_classes = PyTuple_New((Py_ssize_t)count);
  if (st->types->layout_classes == NULL) return -1;
  for (size_t i = 0; i < count; i++) {
    const ClassDef *c = &k_classes[i];
    PyType_Slot slots[] = {
        {Py_tp_doc, (void *)c->doc},      {Py_tp_new, (void *)c->tp_new},
        {Py_tp_repr, (void *)c->repr},    {Py_tp_getset, c->getset},
        {Py_tp_methods, c->methods},      {0, NULL},
    };
    PyType_Spec spec = {
        .name = c->name,
        .basicsize = 0, /* the base's struct */
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
        .slots = slots,
    };
    PyTypeObject *t =
        (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, (PyObject *)st->types->LayoutType);
    if (t == NULL) return -1;
    PyTuple_SET_ITEM(st->types->layout_classes, (Py_ssize_t)i, (PyObject *)t); /* owns t */
    switch (c->role) {
      case CLASS_NAMED: st->types->LayoutByTag[c->tag] = t; break;
      case CLASS_PRIVATE: st->types->PrivateLayoutType = t; break;
      case CLASS_UNKNOWN: st->types->UnknownLayoutType = t; break;
    }
    if (PyModule_AddType(m, t) < 0) return -1;
  }
  return 0;
}
