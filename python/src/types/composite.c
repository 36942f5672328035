/*
 * types/composite.c - hurray.Composite (spec:
 * docs/adr/ADR-036-python-composite-class.md): a head descriptor that owns no
 * buffers, plus its members, each a hurray.Tensor or a nested Composite.
 *
 * Construction states the composition rule, the logical shape and dtype of
 * the head (never derived from the members), the members and, for an overlay
 * only, the combine operation. Every rule of the format is delegated to the C
 * library: the head to hurray_descriptor_from_fields, the tree (per-member
 * boxes, partition cover, overlay roles, member count, nesting depth) to
 * hurray_composite_validate_preorder. Nothing is re-checked here.
 *
 * Overlay roles follow from position, so they are derived rather than
 * accepted: the descriptor each member presents to this head (`presented`,
 * what validation and equality use, never the member's tensor) is
 * hurray_composite_member_present's.
 *
 * A Composite has no data accessors (values, buffer, buffer_count,
 * __array__, __dlpack__, __hurray__): the members hold the data.
 */
#include "types/composite.h"

#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "types/descriptor.h"
#include "types/layout.h"
#include "types/schema.h"
#include "types/sections.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"
#include "types/state.h"

#include <string.h>

/* A composite tensor: a head descriptor (layout 0x0B, no buffers) and its
 * members, each a hurray.Tensor or a nested hurray.Composite. Immutable. */
typedef struct {
  PyObject_HEAD
  HurrayDescriptor *head;    /* owned */
  HurrayDescriptorFields hf; /* borrowed views into head */
  PyObject *dtype;           /* Dtype singleton of the head */
  PyObject *members;         /* tuple */
  /* presented[i]: the descriptor member i presents to this head (owned), or
   * NULL when that is the member's own (its tensor's descriptor, or a nested
   * composite's head). An overlay member gets its role section here. */
  HurrayDescriptor **presented;
  uint32_t count;
} HrpyComposite;

#define C(o) ((HrpyComposite *)(o))

const HurrayDescriptor *hrpy_composite_head(PyObject *c) { return C(c)->head; }
uint32_t hrpy_composite_count(PyObject *c) { return C(c)->count; }
PyObject *hrpy_composite_member(PyObject *c, uint32_t i) {
  return PyTuple_GET_ITEM(C(c)->members, (Py_ssize_t)i);
}

static const HurrayDescriptor *member_descriptor(HrpyState *st, const HrpyComposite *c,
                                                 uint32_t i) {
  if (c->presented[i] != NULL) return c->presented[i];
  PyObject *m = PyTuple_GET_ITEM(c->members, (Py_ssize_t)i);
  /* a member tensor's descriptor was built when the composite was (it is
   * cached from then on, so this cannot fail) */
  return hrpy_tensor_check(st, m) ? hrpy_tensor_desc(st, m) : C(m)->head;
}

const HurrayDescriptor *hrpy_composite_member_descriptor(HrpyState *st, PyObject *c, uint32_t i) {
  return member_descriptor(st, C(c), i);
}

/* ---- the tree in pre-order ------------------------------------------------------ */

/* Number of descriptors in the pre-order walk of c (head, then each member's). */
static size_t tree_size(HrpyState *st, const HrpyComposite *c) {
  size_t n = 1;
  for (uint32_t i = 0; i < c->count; i++) {
    PyObject *m = PyTuple_GET_ITEM(c->members, (Py_ssize_t)i);
    n += hrpy_composite_check(st, m) ? tree_size(st, C(m)) : 1u;
  }
  return n;
}

/* Fills fields[*pos ..] with the pre-order walk of c. */
static void tree_fill(HrpyState *st, const HrpyComposite *c, HurrayDescriptorFields *fields,
                      size_t *pos) {
  fields[(*pos)++] = c->hf;
  for (uint32_t i = 0; i < c->count; i++) {
    PyObject *m = PyTuple_GET_ITEM(c->members, (Py_ssize_t)i);
    if (hrpy_composite_check(st, m)) {
      tree_fill(st, C(m), fields, pos);
    } else {
      HRPY_CANNOT_FAIL(hurray_descriptor_fields(member_descriptor(st, c, i), &fields[*pos]));
      (*pos)++;
    }
  }
}

static int validate_tree(HrpyState *st, const HrpyComposite *c, const char *context) {
  size_t n = tree_size(st, c);
  HurrayDescriptorFields *fields = PyMem_Calloc(n, sizeof *fields);
  const HurrayDescriptorFields **ptrs = PyMem_Calloc(n, sizeof *ptrs);
  if (fields == NULL || ptrs == NULL) {
    PyMem_Free(fields);
    PyMem_Free(ptrs);
    PyErr_NoMemory();
    return -1;
  }
  size_t pos = 0;
  tree_fill(st, c, fields, &pos);
  for (size_t i = 0; i < n; i++) ptrs[i] = &fields[i];
  HurrayError err;
  hurray_error_clear(&err);
  size_t consumed = 0;
  HurrayStatus rc = hurray_composite_validate_preorder(ptrs, n, HURRAY_DECODE_STRICT, &consumed,
                                                       &err);
  PyMem_Free(fields);
  PyMem_Free(ptrs);
  if (rc == HURRAY_OK && consumed != n) rc = HURRAY_ERR_INTERNAL;
  if (rc != HURRAY_OK) {
    hrpy_raise_status(st, rc, &err, context);
    return -1;
  }
  return 0;
}

/* ---- construction --------------------------------------------------------------- */

PyObject *hrpy_composite_from_head(HrpyState *st, HurrayDescriptor *head, PyObject *members,
                                  const char *context) {
  HrpyComposite *c = PyObject_GC_New(HrpyComposite, st->types->CompositeType);
  if (c == NULL) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(head));
    return NULL;
  }
  c->head = head;
  c->dtype = NULL;
  c->members = Py_NewRef(members);
  c->presented = NULL;
  c->count = 0;
  PyObject_GC_Track((PyObject *)c);
  if (hurray_descriptor_fields(head, &c->hf) != HURRAY_OK ||
      c->hf.layout.tag != HURRAY_LAYOUT_COMPOSITE) {
    Py_DECREF(c);
    return hrpy_raise(st->InvalidDescriptorError, "%s: the head is not a composite descriptor",
                     context);
  }
  Py_ssize_t n = PyTuple_GET_SIZE(members);
  c->presented = PyMem_Calloc(n > 0 ? (size_t)n : 1u, sizeof(HurrayDescriptor *));
  if (c->presented == NULL) {
    Py_DECREF(c);
    return PyErr_NoMemory();
  }
  c->count = (uint32_t)n;
  for (uint32_t i = 0; i < c->count; i++) {
    PyObject *m = PyTuple_GET_ITEM(members, (Py_ssize_t)i);
    if (!hrpy_tensor_check(st, m)) continue;
    /* built here, so hrpy_tensor_desc(m) is cached for every member later */
    const HurrayDescriptor *md = hrpy_tensor_desc(st, m);
    HurrayError err;
    hurray_error_clear(&err);
    HurrayStatus rc = md == NULL ? HURRAY_OK
                                 : hurray_composite_member_present(
                                       md, c->hf.layout.u.composite.rule, i, &c->presented[i], &err);
    if (md == NULL || rc != HURRAY_OK) {
      if (rc != HURRAY_OK) hrpy_raise_status(st, rc, &err, context);
      Py_DECREF(c);
      return NULL;
    }
  }
  c->dtype = hrpy_dtype_relayed(st, c->hf.type_tag);
  if (c->dtype == NULL || validate_tree(st, c, context) < 0) {
    Py_DECREF(c);
    return NULL;
  }
  return (PyObject *)c;
}

/* The fields of the composite layout (composition_rule, combine_op) as
 * CompositeLayout has them: parsed, read and named through libhurray's table
 * (types/schema.c), so the two classes share one set of rules. */
static HrpyRecord head_record(HurrayLayout *l) {
  const HurrayLayoutInfo *info = hurray_layout_info(HURRAY_LAYOUT_COMPOSITE);
  HrpyRecord r = {info->fields, info->field_count, (char *)l, NULL, 0};
  return r;
}
static uint32_t head_field(const char *name) {
  HurrayLayout l;
  HrpyRecord r = head_record(&l);
  uint32_t i = 0;
  while (i + 1 < r.count && strcmp(r.fields[i].name, name) != 0) i++;
  return i;
}

/* composition_rule and combine_op into *l: a string outside its enumeration
 * is a ValueError, combine_op given exactly for an overlay
 * (InvalidDescriptorError, a ValueError too). */
static int parse_rule(HrpyState *st, PyObject *rule_o, PyObject *op_o, HurrayLayout *l,
                      const char *ctx) {
  memset(l, 0, sizeof *l);
  l->tag = HURRAY_LAYOUT_COMPOSITE;
  HrpyBuild b;
  memset(&b, 0, sizeof b);
  b.rec = head_record(l);
  bool given[HRPY_MAX_FIELDS] = {false};
  uint32_t ri = head_field("composition_rule"), oi = head_field("combine_op");
  given[ri] = true;
  given[oi] = op_o != Py_None;
  int rc = hrpy_build_field(st, &b, ri, rule_o, ctx);
  if (rc == 0) rc = hrpy_build_field(st, &b, oi, given[oi] ? op_o : NULL, ctx);
  if (rc == 0) rc = hrpy_build_check_conditions(st, &b, given, ctx);
  hrpy_build_release(&b);
  return rc;
}

static PyObject *composite_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"composition_rule", "shape", "dtype", "members", "combine_op",
                           "shard", NULL};
  PyObject *rule_o, *shape_o, *dtype_o, *members_o, *op_o = Py_None, *shard_o = Py_None;
  PyObject *argv_[6];
  if (hrpy_parse_tuple("Composite", args, kwargs, kwlist, 5, 4, argv_) < 0) return NULL;
  rule_o = argv_[0];
  shape_o = argv_[1];
  dtype_o = argv_[2];
  members_o = argv_[3];
  if (argv_[4] != NULL) op_o = argv_[4];
  if (argv_[5] != NULL) shard_o = argv_[5];
  HrpyState *st = hrpy_state_of_type(type);
  const char *ctx = "Composite";
  /* the rule and the combine operation: the same fields as CompositeLayout */
  HurrayLayout layout;
  if (parse_rule(st, rule_o, op_o, &layout, ctx) < 0) return NULL;
  /* shape and dtype: stated, never derived */
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, shape_o, shape, &rank, ctx) < 0) return NULL;
  for (uint32_t k = 0; k < rank; k++)
    if (shape[k] == HURRAY_DYNAMIC_DIM)
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: shape[%u] is dynamic (None); a composite's members are placed "
                       "against every extent of its head",
                       ctx, (unsigned)k);
  uint8_t tag;
  if (hrpy_dtype_converter(st, dtype_o, &tag) < 0) return NULL;
  /* a shard places a nested head inside a parent partition or overlay */
  const HurrayShard *shard = NULL;
  if (shard_o != Py_None) {
    if (!Py_IS_TYPE(shard_o, st->types->ShardType))
      return PyErr_Format(PyExc_TypeError, "%s: shard must be a hurray.Shard, not %.100s", ctx,
                          Py_TYPE(shard_o)->tp_name);
    uint32_t shard_rank = 0;
    shard = hrpy_shard_value(shard_o, &shard_rank);
    if (shard_rank != rank)
      return hrpy_raise_rule(st, HURRAY_ERR_INVALID_SHARD, "shard", ctx,
                             "the shard has %u dimensions, the head %u", (unsigned)shard_rank,
                             (unsigned)rank);
  }
  /* members: tensors or composites */
  if (PyUnicode_Check(members_o) || PyBytes_Check(members_o))
    return PyErr_Format(PyExc_TypeError, "%s: members must be a sequence", ctx);
  PyObject *members = PySequence_Tuple(members_o);
  if (members == NULL) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(members);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *m = PyTuple_GET_ITEM(members, i);
    if (!hrpy_tensor_check(st, m) && !hrpy_composite_check(st, m)) {
      Py_DECREF(members);
      return PyErr_Format(PyExc_TypeError,
                          "%s: members[%zd] must be a hurray.Tensor or hurray.Composite, not "
                          "%.100s",
                          ctx, i, Py_TYPE(m)->tp_name);
    }
  }
  if ((uint64_t)n >= HURRAY_COMPOSITE_OPEN_COUNT) {
    Py_DECREF(members);
    return hrpy_raise(st->InvalidDescriptorError, "%s: too many members (%zd)", ctx, n);
  }
  /* the head: the C library checks its rules */
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = tag;
  f.rank = rank;
  f.shape = shape;
  f.layout = layout;
  f.layout.u.composite.member_count = (uint32_t)n;
  f.shard = shard;
  HurrayDescriptor *head = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &head, &err);
  if (rc != HURRAY_OK) {
    Py_DECREF(members);
    return hrpy_raise_status(st, rc, &err, ctx);
  }
  PyObject *r = hrpy_composite_from_head(st, head, members, ctx);
  Py_DECREF(members);
  return r;
}

PyObject *hrpy_composite_read(HrpyState *st, const HurrayDescriptor *head, uint32_t n,
                              PyObject *(*member)(void *ctx, uint32_t k), void *ctx,
                              const char *context) {
  PyObject *members = PyTuple_New((Py_ssize_t)n);
  for (uint32_t k = 0; members != NULL && k < n; k++) {
    PyObject *m = member(ctx, k);
    if (m == NULL) Py_CLEAR(members);
    else PyTuple_SET_ITEM(members, (Py_ssize_t)k, m);
  }
  if (members == NULL) return NULL;
  HurrayDescriptor *copy = NULL;
  HurrayStatus rc = hurray_descriptor_clone(head, &copy);
  PyObject *r = rc == HURRAY_OK ? hrpy_composite_from_head(st, copy, members, context)
                                : hrpy_raise_status(st, rc, NULL, context);
  Py_DECREF(members);
  return r;
}

/* ---- getters --------------------------------------------------------------------- */

/* composition_rule, combine_op: the head's layout fields, by name */
static PyObject *cg_rule_field(PyObject *s, void *name) {
  HrpyRecord r = head_record(&C(s)->hf.layout);
  return hrpy_record_get(hrpy_state_of(s), &r, head_field(name));
}
/* shape, ndim, layout, shard: read as a Tensor's are */
static PyObject *cg_field(PyObject *s, void *which) {
  return hrpy_field_get(hrpy_state_of(s), &C(s)->hf, which);
}
static PyObject *cg_dtype(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(C(s)->dtype);
}
static PyObject *cg_members(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(C(s)->members);
}
static PyObject *cg_member_count(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(C(s)->count);
}
static PyObject *cg_member_roles(PyObject *s, void *c) {
  (void)c;
  HrpyState *st = hrpy_state_of(s);
  HrpyComposite *k = C(s);
  PyObject *t = PyTuple_New((Py_ssize_t)k->count);
  for (uint32_t i = 0; t != NULL && i < k->count; i++) {
    HurrayDescriptorFields f;
    PyObject *v;
    const char *name = NULL;
    if (hurray_descriptor_fields(member_descriptor(st, k, i), &f) == HURRAY_OK &&
        f.composite_member != NULL)
      name = hurray_member_role_name(f.composite_member->role);
    if (name != NULL) {
      v = PyUnicode_FromString(name);
    } else {
      v = Py_NewRef(Py_None);
    }
    if (v == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
  }
  return t;
}
static PyObject *cg_descriptor(PyObject *s, void *c) {
  (void)c;
  HrpyState *st = hrpy_state_of(s);
  HurrayDescriptor *d = NULL;
  HurrayStatus rc = hurray_descriptor_clone(C(s)->head, &d);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, NULL, "Composite.descriptor");
  return hrpy_descriptor_wrap(st, d, NULL);
}
static PyObject *cg_member_descriptors(PyObject *s, void *c) {
  (void)c;
  HrpyState *st = hrpy_state_of(s);
  HrpyComposite *k = C(s);
  PyObject *t = PyTuple_New((Py_ssize_t)k->count);
  for (uint32_t i = 0; t != NULL && i < k->count; i++) {
    HurrayDescriptor *d = NULL;
    PyObject *v = NULL;
    if (hurray_descriptor_clone(member_descriptor(st, k, i), &d) == HURRAY_OK) {
      PyObject *m = PyTuple_GET_ITEM(k->members, (Py_ssize_t)i);
      v = hrpy_descriptor_wrap(st, d, hrpy_tensor_check(st, m) ? hrpy_tensor_device(m) : NULL);
    } else {
      PyErr_NoMemory();
    }
    if (v == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
  }
  return t;
}

/* ---- value equality ------------------------------------------------------------------- */

/* Two member tensors are equal when they present equal descriptors (but for
 * the measured alignment) and hold
 * the same bytes in every buffer (host memory), or the same memory (device
 * buffers, which this process cannot read). */
static bool tensor_bytes_equal(const HrpyTensorView *a, const HrpyTensorView *b) {
  if (a->nbuf != b->nbuf) return false;
  bool host = hrpy_device_tag(a->device) == HURRAY_DEVICE_CPU;
  for (uint32_t i = 0; i < a->nbuf; i++) {
    uint64_t n = a->f->buffers[i].byte_size;
    if (n != b->f->buffers[i].byte_size) return false;
    if (n == 0 || a->bufs[i].data == b->bufs[i].data) continue;
    if (!host || a->f->buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) return false;
    if (memcmp(a->bufs[i].data, b->bufs[i].data, (size_t)n) != 0) return false;
  }
  return true;
}

static bool composite_equal(HrpyState *st, const HrpyComposite *a, const HrpyComposite *b) {
  if (a == b) return true;
  if (!hurray_descriptor_equal(a->head, b->head) || a->count != b->count) return false;
  for (uint32_t i = 0; i < a->count; i++) {
    PyObject *x = PyTuple_GET_ITEM(a->members, (Py_ssize_t)i);
    PyObject *y = PyTuple_GET_ITEM(b->members, (Py_ssize_t)i);
    bool xc = hrpy_composite_check(st, x), yc = hrpy_composite_check(st, y);
    if (xc != yc) return false;
    if (xc) {
      if (!composite_equal(st, C(x), C(y))) return false;
      continue;
    }
    /* alignment is measured from wherever the bytes sit: exempt */
    if (!hurray_descriptor_equal_except_alignment(member_descriptor(st, a, i),
                                                  member_descriptor(st, b, i)))
      return false;
    HrpyTensorView xv = hrpy_tensor_view(x), yv = hrpy_tensor_view(y);
    if (!tensor_bytes_equal(&xv, &yv)) return false;
  }
  return true;
}

static PyObject *composite_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = composite_equal(hrpy_state_of(a), C(a), C(b));
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

/* ---- repr (hurray._display), pickling, lifetime ------------------------------------- */

/* The package's formatter (registered at its import), or, before that, the
 * rule and the member count alone. */
static PyObject *composite_repr(PyObject *s) {
  HrpyState *st = hrpy_state_of(s);
  PyObject *fn = hrpy_peek(&st->hook_composite_repr);
  if (fn != NULL) return PyObject_CallOneArg(fn, s);
  return PyUnicode_FromFormat("hurray.Composite(<%u members>)", (unsigned)C(s)->count);
}

/* Pickling: (_rebuild_composite, (head bytes, members, permissive)); each
 * member pickles itself (a Tensor by its descriptor and buffers). */
static PyObject *composite_reduce(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of(s);
  PyObject *mod = PyType_GetModule(Py_TYPE(s));
  if (mod == NULL) return NULL;
  PyObject *fn = PyObject_GetAttrString(mod, "_rebuild_composite");
  if (fn == NULL) return NULL;
  bool permissive = false;
  PyObject *b = hrpy_descriptor_bytes(st, C(s)->head, &permissive, "pickle");
  if (b == NULL) {
    Py_DECREF(fn);
    return NULL;
  }
  return Py_BuildValue("(N(NOO))", fn, b, C(s)->members, permissive ? Py_True : Py_False);
}

/* _rebuild_composite(head, members, permissive, /): what Composite pickles to. */
static PyObject *m_rebuild_composite(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"head", "members", "permissive", NULL};
  PyObject *a[3];
  if (hrpy_parse_args("_rebuild_composite", args, nargs, kwnames, names, 3, 3, a) < 0)
    return NULL;
  bool permissive;
  if (hrpy_arg_flag(a[2], false, &permissive) < 0) return NULL;
  PyObject *members = PySequence_Tuple(a[1]);
  if (members == NULL) return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(members); i++) {
    PyObject *x = PyTuple_GET_ITEM(members, i);
    if (!hrpy_tensor_check(st, x) && !Py_IS_TYPE(x, st->types->CompositeType)) {
      Py_DECREF(members);
      return PyErr_Format(PyExc_TypeError,
                          "_rebuild_composite: members[%zd] is a %.100s, not a hurray.Tensor or "
                          "hurray.Composite", i, Py_TYPE(x)->tp_name);
    }
  }
  Py_buffer view;
  if (PyObject_GetBuffer(a[0], &view, PyBUF_SIMPLE) < 0) {
    Py_DECREF(members);
    return NULL;
  }
  HurrayDescriptor *head = NULL;
  uint32_t options = 0;
  int rc = hrpy_decode_descriptor(st, (const uint8_t *)view.buf, (uint64_t)view.len, permissive,
                                  &head, &options, "unpickle");
  PyBuffer_Release(&view);
  if (rc < 0) {
    Py_DECREF(members);
    return NULL;
  }
  /* a head built by the Composite constructor declares its members; one read
   * from a pickle must be checked against the members that came with it */
  HurrayDescriptorFields hf;
  if (hurray_descriptor_fields(head, &hf) == HURRAY_OK && hf.layout.tag == HURRAY_LAYOUT_COMPOSITE &&
      (Py_ssize_t)hf.layout.u.composite.member_count != PyTuple_GET_SIZE(members)) {
    hrpy_raise(st->InvalidDescriptorError,
               "unpickle: the composite head declares %lu members, %zd were given",
               (unsigned long)hf.layout.u.composite.member_count, PyTuple_GET_SIZE(members));
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(head));
    Py_DECREF(members);
    return NULL;
  }
  PyObject *r = hrpy_composite_from_head(st, head, members, "unpickle");
  Py_DECREF(members);
  return r;
}

static PyMethodDef composite_module_methods[] = {
    {"_rebuild_composite", (PyCFunction)(void (*)(void))m_rebuild_composite,
     METH_FASTCALL | METH_KEYWORDS,
     "_rebuild_composite(head, members, permissive, /)\n--\n\nThe Composite a pickle "
     "describes (what Composite.__reduce__ names)."},
    {NULL, NULL, 0, NULL},
};

static int composite_traverse(PyObject *s, visitproc visit, void *arg) {
  Py_VISIT(C(s)->dtype);
  Py_VISIT(C(s)->members);
  Py_VISIT(Py_TYPE(s));
  return 0;
}

static int composite_clear(PyObject *s) {
  Py_CLEAR(C(s)->dtype);
  Py_CLEAR(C(s)->members);
  return 0;
}

static void composite_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  HrpyComposite *c = C(s);
  PyObject_GC_UnTrack(s);
  (void)composite_clear(s);
  if (c->presented != NULL) {
    for (uint32_t i = 0; i < c->count; i++) HRPY_CANNOT_FAIL(hurray_descriptor_destroy(c->presented[i]));
    PyMem_Free(c->presented);
  }
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(c->head));
  tp->tp_free(s);
  Py_DECREF(tp);
}

#define GET(name, fn, doc) {name, fn, NULL, doc, NULL}
static PyGetSetDef composite_getset[] = {
    {"composition_rule", cg_rule_field, NULL, "'partition', 'overlay' or 'group'.",
     (void *)"composition_rule"},
    {"combine_op", cg_rule_field, NULL, "'replace' or 'add' for an overlay; None otherwise.",
     (void *)"combine_op"},
    {"shape", cg_field, NULL, "The logical shape the head presents.",
     (void *)(intptr_t)HRPY_FIELD_SHAPE},
    {"ndim", cg_field, NULL, "Rank of the head.", (void *)(intptr_t)HRPY_FIELD_NDIM},
    GET("dtype", cg_dtype, "The element type the head presents."),
    GET("members", cg_members, "Tuple of the members (hurray.Tensor or hurray.Composite)."),
    GET("member_count", cg_member_count, "len(members)."),
    GET("member_roles", cg_member_roles,
        "Per member: 'base' or 'correction' in an overlay, None otherwise."),
    {"layout", cg_field, NULL, "The head's hurray.CompositeLayout.",
     (void *)(intptr_t)HRPY_FIELD_LAYOUT},
    {"shard", cg_field, NULL, "The head's place in a parent composite (hurray.Shard), or None.",
     (void *)(intptr_t)HRPY_FIELD_SHARD},
    GET("descriptor", cg_descriptor, "The head as a hurray.Descriptor (no buffers)."),
    GET("member_descriptors", cg_member_descriptors,
        "The descriptor each member presents to this head (an overlay member's carries its "
        "role); a nested composite presents its head."),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef composite_methods[] = {
    {"__reduce__", composite_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot composite_slots[] = {
    {Py_tp_doc,
     "Composite(composition_rule, shape, dtype, members, combine_op=None, *, shard=None)\n--\n\n"
     "A composite "
     "tensor: a head that owns no buffers and presents one logical view over its members "
     "(hurray.Tensor or hurray.Composite). composition_rule is 'partition', 'overlay' or "
     "'group'; combine_op ('replace' or 'add') is required for an overlay and refused "
     "otherwise. shard= places this head inside a parent partition or overlay. Overlay roles "
     "follow from position. Compared by value (head, members, "
     "bytes); unhashable."},
    {Py_tp_new, composite_new},
    {Py_tp_repr, composite_repr},
    {Py_tp_richcompare, composite_richcompare},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, composite_getset},
    {Py_tp_methods, composite_methods},
    {Py_tp_traverse, composite_traverse},
    {Py_tp_clear, composite_clear},
    {Py_tp_dealloc, composite_dealloc},
    {0, NULL},
};

static PyType_Spec composite_spec = {
    .name = "hurray.Composite",
    .basicsize = sizeof(HrpyComposite),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = composite_slots,
};

int hrpy_composite_init(PyObject *m, HrpyState *st) {
  st->types->CompositeType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &composite_spec, NULL);
  if (st->types->CompositeType == NULL) return -1;
  if (PyModule_AddFunctions(m, composite_module_methods) < 0) return -1;
  return PyModule_AddType(m, st->types->CompositeType);
}
