/*
 * types/layout_types.c - the 14 subclasses of hurray.Layout (spec:
 * docs/adr/ADR-032-python-layout-descriptor-hierarchy.md), built from
 * libhurray's table of what each layout carries (hurray_layout_info,
 * include/hurray/schema.h): one constructor for all of them, which parses
 * each argument by its field's kind; the getters, repr and pickling come
 * from the same table through the base (types/layout.c).
 *
 * Constructors check what a layout states about itself by running the C
 * library's shape tier (hurray_layout_validate_shape) against a shape of
 * dynamic dimensions of the layout's own rank (its arrays' length, the rank
 * field of a Hilbert curve, or the least rank the layout allows): tile sizes,
 * stride arrays, the depth of nested tiled levels, Morton bits, CSF mode
 * orders, block-paged fields and composite rules are therefore judged by the
 * one copy of those rules, and
 * an extent rule can only fail once a tensor supplies extents.
 *
 * Small closed enumerations are lowercase strings (spec:
 * docs/impl/python-bindings.md, "Frozen name and enumeration strings"): the
 * names the table gives. A string outside its enumeration is a ValueError.
 *
 * Two things are not in the table and stay here: the nesting of tiled levels
 * (inner_tiled is a TiledLayout whose levels continue this one's), and the
 * tag a catch-all class takes (PrivateExtensionLayout, UnknownLayout).
 */
#include "types/layout.h"

#include "types/block_paged.h"
#include "types/schema.h"
#include "types/state.h"
#include "util/args.h"
#include "util/errors.h"

#include <string.h>

/* One bound layout class. `tag` is the named tag it binds; the two
 * catch-all classes (private tags, unknown tags) have tag 0 and a role, and
 * take the tag as their first argument. */
typedef enum { CLASS_NAMED, CLASS_PRIVATE, CLASS_UNKNOWN } ClassRole;

typedef struct {
  uint8_t tag;
  ClassRole role;
  const char *name;
  const char *doc; /* its first line is the constructor's signature */
  PyMethodDef *(*methods)(void); /* methods beyond the fields, or NULL */
} ClassDef;

/* The layout classes: adding a layout adds its entry here (its fields come
 * from libhurray's table); nothing else in the extension switches over
 * layout tags. */
static const ClassDef k_classes[] = {
    {HURRAY_LAYOUT_ROW_MAJOR, CLASS_NAMED, "hurray.RowMajorLayout",
     "RowMajorLayout()\n--\n\nRow-major (C-order) layout, tag 0x01: the default.", NULL},
    {HURRAY_LAYOUT_COL_MAJOR, CLASS_NAMED, "hurray.ColMajorLayout",
     "ColMajorLayout()\n--\n\nColumn-major (Fortran-order) layout, tag 0x02.", NULL},
    {HURRAY_LAYOUT_STRIDED, CLASS_NAMED, "hurray.StridedLayout",
     "StridedLayout(strides)\n--\n\nExplicit per-dimension strides, tag 0x03. Strides are in "
     "logical elements (not bytes), signed, and may be negative or zero.", NULL},
    {HURRAY_LAYOUT_TILED, CLASS_NAMED, "hurray.TiledLayout",
     "TiledLayout(tile_shape, outer_layout='row_major', inner_layout='row_major', "
     "outer_strides=None, inner_strides=None, inner_tiled=None)\n--\n\nTiled (blocked) "
     "layout, tag 0x04. Strides are given exactly when the matching ordering is 'strided', "
     "inner_tiled exactly when inner_layout is 'tiled' (at most 8 levels).", NULL},
    {HURRAY_LAYOUT_MORTON, CLASS_NAMED, "hurray.MortonLayout",
     "MortonLayout(morton_bits)\n--\n\nMorton (Z-order) layout, tag 0x05: morton_bits[k] "
     "index bits interleaved for dimension k.", NULL},
    {HURRAY_LAYOUT_HILBERT, CLASS_NAMED, "hurray.HilbertLayout",
     "HilbertLayout(hilbert_order, hilbert_rank)\n--\n\nHilbert-curve layout, tag 0x40: every "
     "dimension is 2**hilbert_order long and hilbert_rank is the tensor's rank.", NULL},
    {HURRAY_LAYOUT_COO, CLASS_NAMED, "hurray.CooLayout",
     "CooLayout(nnz, is_sorted=False)\n--\n\nCoordinate-list sparse layout, tag 0x06: values, "
     "then [nnz, rank] uint64 indices. nnz is required: it is never inferred from buffers.", NULL},
    {HURRAY_LAYOUT_CSR, CLASS_NAMED, "hurray.CsrLayout",
     "CsrLayout(nnz)\n--\n\nCompressed sparse rows, tag 0x07 (rank 2): values, col_indices, "
     "row_ptr (uint64).", NULL},
    {HURRAY_LAYOUT_CSC, CLASS_NAMED, "hurray.CscLayout",
     "CscLayout(nnz)\n--\n\nCompressed sparse columns, tag 0x08 (rank 2): values, "
     "row_indices, col_ptr (uint64).", NULL},
    {HURRAY_LAYOUT_CSF, CLASS_NAMED, "hurray.CsfLayout",
     "CsfLayout(nnz, mode_order)\n--\n\nCompressed sparse fibers, tag 0x09 (rank >= 3): "
     "values, then a (pos, crd) pair per level: 2 * rank + 1 buffers, reached with "
     "Tensor.buffer(i).", NULL},
    {HURRAY_LAYOUT_BLOCK_PAGED, CLASS_NAMED, "hurray.BlockPagedLayout",
     "BlockPagedLayout(page_size, num_pages, paged_axis, num_seqs, kv_role='key', "
     "layer_index=None, block_table_index_type='uint32')\n--\n\nBlock-paged KV-cache layout, "
     "tag 0x0A (rank 3): page pool, block table, seq_ptr.", hrpy_block_paged_methods},
    {HURRAY_LAYOUT_COMPOSITE, CLASS_NAMED, "hurray.CompositeLayout",
     "CompositeLayout(composition_rule, member_count, combine_op=None)\n--\n\nComposite head, "
     "tag 0x0B: owns no buffers (`is_virtual`). Readable in full; hurray.Tensor refuses it "
     "(use hurray.Composite).", NULL},
    {0, CLASS_PRIVATE, "hurray.PrivateExtensionLayout",
     "PrivateExtensionLayout(tag, extension_layout_id, extension_data=None)\n--\n\nAn "
     "implementation-private layout, tags 0xF0-0xFE (another tag is InvalidDescriptorError). "
     "Its buffer count is not knowable, so the buffer-count and buffer-size tiers cannot "
     "run for it.", NULL},
    {0, CLASS_UNKNOWN, "hurray.UnknownLayout",
     "UnknownLayout(tag, raw_bytes=None)\n--\n\nA reserved layout tag this build cannot parse "
     "(a newer format), kept for permissive relays. A named tag is a ValueError naming the "
     "class to use, a private one a ValueError (use PrivateExtensionLayout), 0x00 and 0xFF "
     "InvalidDescriptorError.\n\nA permissive reader cannot know where an unknown payload "
     "ends, so `raw_bytes` keeps everything after `byte_offset`: the buffer table and the "
     "sections stay inside it. A tensor with an UnknownLayout therefore declares no buffers "
     "of its own (pass `buffer=None` or `b\"\"`, and no `aux_buffers`), and re-encodes to "
     "exactly the bytes it was decoded from.", NULL},
};
#define CLASS_COUNT (sizeof k_classes / sizeof k_classes[0])

/* The table entry of a class: a catch-all class takes the entry its tags
 * share (the first tag of that kind, as libhurray classifies the tags). */
static const HurrayLayoutInfo *info_of(const ClassDef *c) {
  if (c->role == CLASS_NAMED) return hurray_layout_info(c->tag);
  HurrayTagKind want = c->role == CLASS_PRIVATE ? HURRAY_TAG_PRIVATE : HURRAY_TAG_RESERVED;
  for (unsigned t = 0; t < 256; t++)
    if (hurray_layout_tag_kind((uint8_t)t) == want) return hurray_layout_info((uint8_t)t);
  return NULL;
}

static const ClassDef *class_of(HrpyState *st, PyTypeObject *type) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(st->types->layout_classes); i++)
    if ((PyObject *)type == PyTuple_GET_ITEM(st->types->layout_classes, i)) return &k_classes[i];
  return NULL;
}

/* The tag a catch-all class is given: private tags for PrivateExtensionLayout,
 * reserved ones for UnknownLayout. */
static int catch_all_tag(HrpyState *st, const ClassDef *c, PyObject *o, const char *ctx,
                         uint8_t *out) {
  uint64_t v;
  if (hrpy_arg_u64(st, o, ctx, "tag", 255, &v) < 0) return -1;
  uint8_t tag = *out = (uint8_t)v;
  HurrayTagKind kind = hurray_layout_tag_kind(tag);
  if (c->role == CLASS_PRIVATE) {
    if (kind == HURRAY_TAG_PRIVATE) return 0;
    hrpy_raise(st->InvalidDescriptorError,
               "%s: tag 0x%s is not in the private range 0x%s-0x%s", ctx, hrpy_hex(tag).s,
               hrpy_hex(HURRAY_LAYOUT_PRIVATE_FIRST).s, hrpy_hex(HURRAY_LAYOUT_PRIVATE_LAST).s);
    return -1;
  }
  switch (kind) {
    case HURRAY_TAG_NAMED: {
      PyTypeObject *named = st->types->LayoutByTag[tag];
      PyErr_Format(PyExc_ValueError,
                   "%s: tag 0x%s is the %s layout, not an unknown one; use %s", ctx,
                   hrpy_hex(tag).s, hrpy_layout_name(tag),
                   named != NULL ? named->tp_name : "hurray.Layout");
      return -1;
    }
    case HURRAY_TAG_PRIVATE:
      PyErr_Format(PyExc_ValueError,
                   "%s: tag 0x%s is a private layout; use hurray.PrivateExtensionLayout, which "
                   "carries its extension id",
                   ctx, hrpy_hex(tag).s);
      return -1;
    case HURRAY_TAG_INVALID:
      hrpy_raise(st->InvalidDescriptorError,
                 "%s: tag 0x%s is invalid in every version of the format", ctx, hrpy_hex(tag).s);
      return -1;
    default: return 0;
  }
}

/* inner_tiled: `nested`'s levels continue `levels[0]` (`cap` entries: room
 * for one more than any tiled layout has, so a nesting one level too deep is
 * built, and refused by the shape tier run on the result). */
static int nest(HrpyState *st, PyTypeObject *type, PyObject *nested, uint32_t n,
                HurrayTiledLevel *levels, uint32_t cap, uint32_t *depth, const char *ctx) {
  *depth = 1;
  if (nested == NULL) return 0;
  if (!Py_IS_TYPE(nested, type)) {
    PyErr_Format(PyExc_TypeError, "%s: inner_tiled must be a %s, not %.100s", ctx,
                 type->tp_name, Py_TYPE(nested)->tp_name);
    return -1;
  }
  const HurrayLayout *in = hrpy_layout_value(nested);
  if (hrpy_layout_rank(nested) != n) {
    hrpy_raise(st->InvalidDescriptorError, "%s: inner_tiled has rank %u, tile_shape %u entries",
               ctx, (unsigned)hrpy_layout_rank(nested), (unsigned)n);
    return -1;
  }
  if (in->u.tiled.depth >= cap) { /* a layout object holds a valid depth */
    PyErr_Format(PyExc_SystemError, "%s: inner_tiled has %u levels", ctx,
                 (unsigned)in->u.tiled.depth);
    return -1;
  }
  for (uint32_t d = 0; d < in->u.tiled.depth; d++) levels[1 + d] = in->u.tiled.levels[d];
  *depth += in->u.tiled.depth;
  return 0;
}

/* The one constructor: every argument parsed by its field's kind
 * (types/schema.c), then the layout's own rules (see the file comment). */
static PyObject *layout_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  const ClassDef *c = class_of(st, type);
  if (c == NULL) return PyErr_Format(PyExc_TypeError, "cannot create '%.100s' instances",
                                     type->tp_name);
  const char *ctx = c->name + strlen("hurray.");
  const HurrayLayoutInfo *info = info_of(c);
  const char *kw[HRPY_MAX_FIELDS + 2];
  int fields_of[HRPY_MAX_FIELDS + 1], required;
  int np = hrpy_fields_params(info->fields, info->field_count,
                              c->role == CLASS_NAMED ? NULL : "tag", kw, fields_of, &required);
  PyObject *argv[HRPY_MAX_FIELDS + 1];
  if (hrpy_parse_tuple(ctx, args, kwargs, kw, np, required, argv) < 0) return NULL;

  HurrayLayout l;
  HurrayTiledLevel levels[HURRAY_MAX_TILED_DEPTH + 1]; /* inner_tiled's (valid) and one */
  HrpyBuild b;
  memset(&l, 0, sizeof l);
  memset(levels, 0, sizeof levels);
  memset(&b, 0, sizeof b);
  b.rec.fields = info->fields;
  b.rec.count = info->field_count;
  b.rec.base = (char *)&l;
  b.rec.level = (char *)levels;
  l.tag = c->tag;
  PyObject *field_arg[HRPY_MAX_FIELDS] = {NULL};
  bool given[HRPY_MAX_FIELDS] = {false};
  PyObject *nested = NULL, *res = NULL;
  bool has_levels = false;
  for (int k = 0; k < np; k++) {
    if (fields_of[k] < 0) {
      if (catch_all_tag(st, c, argv[k], ctx, &l.tag) < 0) return NULL;
    } else {
      field_arg[fields_of[k]] = argv[k];
    }
  }
  uint32_t rank = info->min_rank;
  for (uint32_t i = 0; i < info->field_count; i++) {
    const HurrayFieldInfo *f = &info->fields[i];
    given[i] = field_arg[i] != NULL && field_arg[i] != Py_None;
    if (f->kind == HURRAY_VALUE_NESTED && given[i]) nested = field_arg[i];
    if (f->flags & HURRAY_FIELD_IN_LEVEL) has_levels = true;
    if (hrpy_build_field(st, &b, i, field_arg[i], ctx) < 0) goto done;
    if (f->flags & HURRAY_FIELD_GIVES_RANK) rank = (uint32_t)hrpy_record_u64(&b.rec, i);
  }
  if (b.has_rank) rank = b.rec.n;
  if (hrpy_build_check_conditions(st, &b, given, ctx) < 0) goto done;
  if (has_levels) { /* a tiled layout: its outermost level, then inner_tiled's */
    if (nest(st, type, nested, b.rec.n, levels, (uint32_t)(sizeof levels / sizeof levels[0]),
             &l.u.tiled.depth, ctx) < 0)
      goto done;
    l.u.tiled.levels = levels;
  }
  res = hrpy_layout_new(st, type, &l, b.rec.n);
  if (res != NULL && c->role == CLASS_NAMED) {
    uint64_t shape[HURRAY_MAX_RANK];
    for (uint32_t k = 0; k < rank && k < HURRAY_MAX_RANK; k++) shape[k] = HURRAY_DYNAMIC_DIM;
    if (hrpy_layout_validate_shape(st, res, rank, shape, ctx) < 0) Py_CLEAR(res);
  }
done:
  hrpy_build_release(&b);
  return res;
}

/* The getters of each class, shared by every interpreter (types/schema.c). */
static PyGetSetDef *g_getsets[CLASS_COUNT];

int hrpy_layout_types_init(PyObject *m, HrpyState *st) {
  st->types->layout_classes = PyTuple_New((Py_ssize_t)CLASS_COUNT);
  if (st->types->layout_classes == NULL) return -1;
  for (size_t i = 0; i < CLASS_COUNT; i++) {
    const ClassDef *c = &k_classes[i];
    const HurrayLayoutInfo *info = info_of(c);
    if (info == NULL) {
      PyErr_Format(PyExc_SystemError, "%s: libhurray has no table for it", c->name);
      return -1;
    }
    if (hrpy_fields_check(info->fields, info->field_count, c->name) < 0) return -1;
    PyGetSetDef *getset = hrpy_fields_getset(&g_getsets[i], NULL, info->fields, info->field_count,
                                             hrpy_layout_field_get);
    if (getset == NULL) return -1;
    PyType_Slot slots[] = {
        {Py_tp_doc, (void *)c->doc},
        {Py_tp_new, (void *)layout_new},
        {Py_tp_getset, getset},
        {c->methods != NULL ? Py_tp_methods : 0, c->methods != NULL ? c->methods() : NULL},
        {0, NULL},
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
