/*
 * types/quant.c - the quantization classes: PerTensorAffine, PerChannelAffine,
 * PerBlockAffine, NF4, MXFP (the reference's names), OpaqueQuantization for
 * a private or unknown scheme a permissive reader relays, and
 * hurray.decode_quantization.
 *
 * Each object holds the exact section payload (scheme header included) and
 * its parsed fields. Every class is built from libhurray's table of what each
 * scheme carries (hurray_quant_scheme_info, include/hurray/schema.h): one
 * constructor (and one symmetric / asymmetric pair for the schemes whose
 * zero points may be absent), one getter per field, one repr
 * (types/schema.c). Constructors check what a scheme states about itself
 * through hurray_quant_check; the rules that need a tensor run when the
 * scheme is attached to one. encode() returns the payload, decode_quantization
 * reads one back into whichever class its scheme tag names, and the Tensor
 * and Descriptor getters return these same classes, so an inspected scheme
 * builds another tensor unchanged.
 *
 * Equality compares the payload bytes. A scheme with a float field
 * (PerTensorAffine's scale) is unhashable; the others hash their bytes.
 * OpaqueQuantization keeps a constructor of its own: it takes a whole
 * payload, not fields.
 */
#include "types/quant.h"

#include "types/schema.h"
#include "types/state.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  HurrayQuantization q; /* q.raw points at `raw` */
  uint8_t *raw;         /* PyMem copy of the exact payload bytes */
} HrpyQuant;

#define Q(o) ((HrpyQuant *)(o))

const HurrayQuantization *hrpy_quant_value(PyObject *o) { return &Q(o)->q; }
/* The class of a scheme tag: its bound class, else OpaqueQuantization
 * (borrowed). */
static PyTypeObject *class_of(HrpyState *st, uint8_t scheme) {
  PyTypeObject *c = st->types->QuantByScheme[scheme];
  return c != NULL ? c : st->types->OpaqueQuantType;
}

/* Takes a copy of q's payload (q->raw set) into a new object of its class. */
static PyObject *quant_wrap(HrpyState *st, const HurrayQuantization *q) {
  uint32_t len = q->raw_len;
  uint8_t *raw = PyMem_Malloc(len > 0 ? len : 1);
  if (raw == NULL) return PyErr_NoMemory();
  if (len > 0) memcpy(raw, q->raw, len);
  HrpyQuant *o = PyObject_New(HrpyQuant, class_of(st, q->scheme));
  if (o == NULL) {
    PyMem_Free(raw);
    return NULL;
  }
  o->q = *q;
  o->q.raw = raw;
  o->raw = raw;
  return (PyObject *)o;
}

/* Room for the encoded payload of any named scheme: the longest of the
 * lengths libhurray's scheme table gives (HURRAY_QUANT_SCHEME_TABLE). */
#define HRPY_QPAYLOAD_(tag, NAME, name, len) uint8_t NAME[len];
typedef union {
  HURRAY_QUANT_SCHEME_TABLE(HRPY_QPAYLOAD_)
} QPayload;
#undef HRPY_QPAYLOAD_

/* Checks an authored scheme, encodes its payload and wraps it. */
static PyObject *quant_build(HrpyState *st, HurrayQuantization *q, const char *ctx) {
  HurrayError err;
  hurray_error_clear(&err);
  q->version = HURRAY_QUANT_SCHEME_VERSION;
  q->raw = NULL;
  q->raw_len = 0;
  HurrayStatus rc = hurray_quant_check(q, HURRAY_DECODE_STRICT, &err);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, ctx);
  uint8_t buf[sizeof(QPayload)];
  uint64_t n = 0;
  rc = hurray_quant_encode(q, buf, sizeof buf, &n);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, NULL, ctx);
  q->raw = buf;
  q->raw_len = (uint32_t)n;
  return quant_wrap(st, q);
}

PyObject *hrpy_quantization_object(HrpyState *st, const HurrayDescriptorFields *f) {
  if (f->quantization == NULL) Py_RETURN_NONE;
  HurrayQuantization q = *f->quantization;
  uint8_t buf[sizeof(QPayload)];
  if (q.raw == NULL) { /* a hand-built section: encode its typed fields */
    uint64_t n = 0;
    if (hurray_quant_encode(&q, buf, sizeof buf, &n) != HURRAY_OK)
      return hrpy_raise_status(st, HURRAY_ERR_INTERNAL, NULL, "quantization");
    q.raw = buf;
    q.raw_len = (uint32_t)n;
  }
  return quant_wrap(st, &q);
}

/* ---- the one constructor ---------------------------------------------------------- */

struct QClass;
static const struct QClass *qclass_of(HrpyState *st, PyTypeObject *type);
static const HurrayQuantSchemeInfo *qinfo_of(const struct QClass *c);
static const char *qclass_name(const struct QClass *c);

/* How a scheme is built: by its class, or by its symmetric / asymmetric
 * form (every parameter required; the zero points left out, or given). */
typedef enum { AS_CLASS, AS_SYMMETRIC, AS_ASYMMETRIC } Form;

static PyObject *quant_make(PyTypeObject *type, PyObject *args, PyObject *kwargs, Form form) {
  static const char *const form_names[] = {"", "symmetric", "asymmetric"};
  HrpyState *st = hrpy_state_of_type(type);
  const struct QClass *c = qclass_of(st, type);
  if (c == NULL)
    return PyErr_Format(PyExc_TypeError, "cannot create '%.100s' instances", type->tp_name);
  const HurrayQuantSchemeInfo *info = qinfo_of(c);
  const char *cls = qclass_name(c);
  char ctx[64];
  PyOS_snprintf(ctx, sizeof ctx, "%s%s%s", cls, form == AS_CLASS ? "" : ".", form_names[form]);
  const char *kw[HRPY_MAX_FIELDS + 2];
  int fields_of[HRPY_MAX_FIELDS + 1], required;
  int np = hrpy_fields_params(info->fields, info->field_count, NULL, kw, fields_of, &required);
  if (form == AS_SYMMETRIC) { /* no zero points */
    int kept = 0;
    for (int k = 0; k < np; k++) {
      if (info->fields[fields_of[k]].flags & HURRAY_FIELD_SYMMETRIC) continue;
      kw[kept] = kw[k];
      fields_of[kept++] = fields_of[k];
    }
    kw[np = kept] = NULL;
  }
  if (form != AS_CLASS) required = np;
  PyObject *argv[HRPY_MAX_FIELDS + 1];
  if (hrpy_parse_tuple(form == AS_CLASS ? cls : form_names[form], args, kwargs, kw, np, required,
                       argv) < 0)
    return NULL;
  PyObject *field_arg[HRPY_MAX_FIELDS] = {NULL};
  for (int k = 0; k < np; k++) field_arg[fields_of[k]] = argv[k];

  HurrayQuantization q;
  HrpyBuild b;
  memset(&q, 0, sizeof q);
  memset(&b, 0, sizeof b);
  q.scheme = info->scheme;
  b.rec.fields = info->fields;
  b.rec.count = info->field_count;
  b.rec.base = (char *)&q;
  PyObject *res = NULL;
  for (uint32_t i = 0; i < info->field_count; i++) {
    const HurrayFieldInfo *f = &info->fields[i];
    bool symmetric_field = (f->flags & HURRAY_FIELD_SYMMETRIC) != 0;
    if (symmetric_field && form == AS_ASYMMETRIC && field_arg[i] == Py_None) {
      PyErr_Format(PyExc_TypeError, "%s: %s must be an int", ctx, f->name);
      goto done;
    }
    if (hrpy_build_field(st, &b, i, field_arg[i], ctx) < 0) goto done;
    if (symmetric_field && !hrpy_record_present(&b.rec, i)) q.flags |= HURRAY_QUANT_FLAG_SYMMETRIC;
  }
  res = quant_build(st, &q, ctx);
done:
  hrpy_build_release(&b);
  return res;
}

static PyObject *quant_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return quant_make(type, args, kwargs, AS_CLASS);
}
static PyObject *q_symmetric(PyObject *cls, PyObject *args, PyObject *kwargs) {
  return quant_make((PyTypeObject *)cls, args, kwargs, AS_SYMMETRIC);
}
static PyObject *q_asymmetric(PyObject *cls, PyObject *args, PyObject *kwargs) {
  return quant_make((PyTypeObject *)cls, args, kwargs, AS_ASYMMETRIC);
}

static PyObject *opaque_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"payload", NULL};
  PyObject *p;
  PyObject *argv_[1];
  if (hrpy_parse_tuple("OpaqueQuantization", args, kwargs, kwlist, 1, 1, argv_) < 0) return NULL;
  p = argv_[0];
  HrpyState *st = hrpy_state_of_type(type);
  Py_buffer v;
  if (PyObject_GetBuffer(p, &v, PyBUF_SIMPLE) < 0) return NULL;
  HurrayQuantization q;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_quant_decode((const uint8_t *)v.buf, (uintptr_t)v.len,
                                        HURRAY_DECODE_PERMISSIVE, &q, &err);
  PyObject *r = NULL;
  if (rc != HURRAY_OK) {
    hrpy_raise_status(st, rc, &err, "OpaqueQuantization");
  } else if (st->types->QuantByScheme[q.scheme] != NULL) {
    PyErr_Format(PyExc_ValueError,
                 "OpaqueQuantization: scheme 0x%s is %s; use hurray.decode_quantization",
                 hrpy_hex(q.scheme).s, hurray_quant_scheme_name(q.scheme));
  } else {
    r = quant_wrap(st, &q);
  }
  PyBuffer_Release(&v);
  return r;
}

/* ---- the module function ------------------------------------------------------------- */

static PyObject *m_decode_quantization(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"data", "permissive", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("decode_quantization", args, nargs, kwnames, names, 1, 1, a) < 0)
    return NULL;
  bool permissive;
  if (hrpy_arg_flag(a[1], false, &permissive) < 0) return NULL;
  Py_buffer v;
  if (PyObject_GetBuffer(a[0], &v, PyBUF_SIMPLE) < 0) return NULL;
  HurrayQuantization q;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc =
      hurray_quant_decode((const uint8_t *)v.buf, (uintptr_t)v.len,
                          permissive ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT, &q, &err);
  PyObject *r = rc == HURRAY_OK ? quant_wrap(st, &q)
                                : hrpy_raise_status(st, rc, &err, "decode_quantization");
  PyBuffer_Release(&v);
  return r;
}

/* ---- getters --------------------------------------------------------------------------- */

static PyObject *qg_scheme(PyObject *s, void *c) {
  (void)c;
  const char *n = hurray_quant_scheme_name(Q(s)->q.scheme);
  if (n != NULL) return PyUnicode_FromString(n);
  return PyUnicode_FromString(hurray_quant_scheme_kind(Q(s)->q.scheme) == HURRAY_TAG_PRIVATE
                                  ? "private"
                                  : "unknown");
}
static PyObject *qg_scheme_tag(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromLong(Q(s)->q.scheme);
}
/* The fields of a quantization object (libhurray's table of its scheme). */
static HrpyRecord record_of(PyObject *s) {
  const HurrayQuantSchemeInfo *info = hurray_quant_scheme_info(Q(s)->q.scheme);
  HrpyRecord r = {NULL, 0, (char *)&Q(s)->q, NULL, 0};
  if (info != NULL) {
    r.fields = info->fields;
    r.count = info->field_count;
  }
  return r;
}

/* The getter of every field: `closure` is its entry in the table. */
static PyObject *qg_field(PyObject *s, void *closure) {
  HrpyRecord r = record_of(s);
  const HurrayFieldInfo *f = closure;
  return hrpy_record_get(hrpy_state_of(s), &r, (uint32_t)(f - r.fields));
}

static PyObject *qg_payload(PyObject *s, void *c) {
  (void)c;
  return PyBytes_FromStringAndSize((const char *)Q(s)->raw, (Py_ssize_t)Q(s)->q.raw_len);
}

/* ---- value semantics, encode, repr ----------------------------------------------------- */

static PyObject *q_encode(PyObject *s, PyObject *unused) {
  (void)unused;
  return qg_payload(s, NULL);
}

static PyObject *q_reduce(PyObject *s, PyObject *unused) {
  (void)unused;
  PyObject *fn;
  if (hrpy_state_of(s)->types->QuantByScheme[Q(s)->q.scheme] == NULL) {
    fn = Py_NewRef((PyObject *)Py_TYPE(s));
  } else {
    PyObject *mod = PyType_GetModule(Py_TYPE(s));
    if (mod == NULL) return NULL;
    fn = PyObject_GetAttrString(mod, "decode_quantization");
    if (fn == NULL) return NULL;
  }
  PyObject *payload = qg_payload(s, NULL);
  if (payload == NULL) {
    Py_DECREF(fn);
    return NULL;
  }
  return Py_BuildValue("(N(N))", fn, payload);
}

static PyObject *q_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b)) Py_RETURN_NOTIMPLEMENTED;
  const HrpyQuant *x = Q(a), *y = Q(b);
  bool eq = x->q.raw_len == y->q.raw_len && memcmp(x->raw, y->raw, x->q.raw_len) == 0;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t q_hash(PyObject *s) {
  return hrpy_hash_fold(hrpy_hash_bytes(HRPY_HASH_SEED, Q(s)->raw, Q(s)->q.raw_len));
}

/* "PerBlockAffine.symmetric(axis=1, ...)": the class, the form that builds
 * it when its zero points may be absent, and the fields; a scheme without a
 * class of its own shows its tag first. */
static PyObject *q_repr(PyObject *s) {
  HrpyRecord r = record_of(s);
  const char *cls = strrchr(Py_TYPE(s)->tp_name, '.');
  char head[64], lead[24];
  PyOS_snprintf(head, sizeof head, "%s", cls != NULL ? cls + 1 : Py_TYPE(s)->tp_name);
  for (uint32_t i = 0; i < r.count; i++) {
    if (!(r.fields[i].flags & HURRAY_FIELD_SYMMETRIC)) continue;
    size_t used = strlen(head);
    PyOS_snprintf(head + used, sizeof head - used, "%s",
                  hrpy_record_present(&r, i) ? ".asymmetric" : ".symmetric");
  }
  bool named = hurray_quant_scheme_kind(Q(s)->q.scheme) == HURRAY_TAG_NAMED;
  PyOS_snprintf(lead, sizeof lead, "scheme_tag=0x%s", hrpy_hex(Q(s)->q.scheme).s);
  return hrpy_record_repr(hrpy_state_of(s), head, named ? NULL : lead, &r, NULL);
}

static void q_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  PyMem_Free(Q(s)->raw);
  tp->tp_free(s);
  Py_DECREF(tp);
}

/* ---- the classes ------------------------------------------------------------------------ */

static PyGetSetDef common_getset[] = {
    {"scheme", qg_scheme, NULL, "The scheme name ('per_tensor_affine', 'nf4', ...).", NULL},
    {"scheme_tag", qg_scheme_tag, NULL, "The scheme tag byte.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define Q_METHODS_COMMON                                                                     \
  {"encode", q_encode, METH_NOARGS,                                                          \
   "encode(self)\n--\n\nThe quantization section payload (scheme header included, without " \
   "the u32 length that frames it in a descriptor); hurray.decode_quantization reads it. "   \
   "The object keeps these exact bytes: it compares equal by them, and pickles."},          \
      {"__reduce__", q_reduce, METH_NOARGS, NULL}
#define Q_FORM(name, fn, doc) \
  {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS | METH_CLASS, doc}

static PyMethodDef plain_methods[] = {Q_METHODS_COMMON, {NULL, NULL, 0, NULL}};
static PyMethodDef per_channel_methods[] = {
    Q_METHODS_COMMON,
    Q_FORM("symmetric", q_symmetric,
           "symmetric(axis, scale_buffer_index)\n--\n\nPer-channel scales, no zero points."),
    Q_FORM("asymmetric", q_asymmetric,
           "asymmetric(axis, scale_buffer_index, zero_point_buffer_index)\n--\n\nPer-channel "
           "scales and zero points (one buffer index may hold both: [scales | zero_points])."),
    {NULL, NULL, 0, NULL}};
static PyMethodDef per_block_methods[] = {
    Q_METHODS_COMMON,
    Q_FORM("symmetric", q_symmetric,
           "symmetric(axis, block_size, scale_buffer_index, scale_type)\n--\n\nPer-block "
           "scales, no zero points."),
    Q_FORM("asymmetric", q_asymmetric,
           "asymmetric(axis, block_size, scale_buffer_index, zero_point_buffer_index, "
           "scale_type)\n--\n\nPer-block scales and zero points."),
    {NULL, NULL, 0, NULL}};

/* One quantization class: its fields come from hurray_quant_scheme_info(scheme). */
struct QClass {
  const char *name;
  const char *doc; /* its first line is the constructor's signature */
  PyMethodDef *methods;
  uint8_t scheme; /* the scheme tag it binds; 0 for OpaqueQuantization */
};

/* The quantization classes: adding a scheme adds its entry here (its fields
 * come from libhurray's table). */
static const struct QClass k_qclasses[] = {
    {"hurray.PerTensorAffine",
     "PerTensorAffine(scale, zero_point=0)\n--\n\nOne scale and zero point for the whole "
     "tensor, inline in the descriptor (scheme 0x01): the tensor stays single-buffer. value = "
     "scale * (q - zero_point). Unhashable (a float field); the other schemes hash.\n\n"
     "Every scheme class checks, at construction, the rules its fields state "
     "(`hurray_quant_check`: `InvalidDescriptorError`); what needs a tensor (storage type, "
     "axis below the rank, extents, buffer sizes, the zero point's range) is checked when "
     "the scheme is attached (`Tensor(quantization=...)`).",
     plain_methods, HURRAY_QUANT_PER_TENSOR_AFFINE},
    {"hurray.PerChannelAffine",
     "PerChannelAffine(axis, scale_buffer_index, zero_point_buffer_index=None)\n--\n\nOne "
     "float32 scale (and int32 zero point) per slice along axis, in buffers referenced by "
     "index (scheme 0x02). None for zero_point_buffer_index means symmetric. Checked as "
     "PerTensorAffine says.",
     per_channel_methods, HURRAY_QUANT_PER_CHANNEL_AFFINE},
    {"hurray.PerBlockAffine",
     "PerBlockAffine(axis, block_size, scale_buffer_index, zero_point_buffer_index=None, "
     "scale_type='float32')\n--\n\nOne scale (and zero point) per block of block_size elements "
     "along axis (scheme 0x03); block_size is a power of two >= 2. Checked as "
     "PerTensorAffine says.",
     per_block_methods, HURRAY_QUANT_PER_BLOCK_AFFINE},
    {"hurray.NF4",
     "NF4(axis, block_size, scale_buffer_index)\n--\n\nNormalFloat4: uint4 codes into the "
     "fixed NF4 table, one float32 absmax scale per block (scheme 0x04; block_size a power "
     "of two >= 8). Checked as PerTensorAffine says.",
     plain_methods, HURRAY_QUANT_NF4},
    {"hurray.MXFP",
     "MXFP(axis, block_size, scale_buffer_index)\n--\n\nOCP Microscaling: one float8_e8m0 "
     "shared exponent per block (scheme 0x05; block_size a power of two in [16, 2048]). "
     "Checked as PerTensorAffine says.",
     plain_methods, HURRAY_QUANT_MXFP},
    {"hurray.OpaqueQuantization",
     "OpaqueQuantization(payload)\n--\n\nA private scheme (0xF0-0xFE) or, from "
     "`decode_quantization(..., permissive=True)`, a scheme tag this version does not "
     "define: the payload carried verbatim for relays, never interpreted (only its agreed "
     "reader can).",
     plain_methods, 0},
};

#define QCLASS_COUNT (sizeof k_qclasses / sizeof k_qclasses[0])

static const struct QClass *qclass_of(HrpyState *st, PyTypeObject *type) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(st->types->quant_classes); i++)
    if ((PyObject *)type == PyTuple_GET_ITEM(st->types->quant_classes, i)) return &k_qclasses[i];
  return NULL;
}
static const HurrayQuantSchemeInfo *qinfo_of(const struct QClass *c) {
  return hurray_quant_scheme_info(c->scheme != 0 ? c->scheme : HURRAY_QUANT_PRIVATE_FIRST);
}
static const char *qclass_name(const struct QClass *c) { return c->name + strlen("hurray."); }

static PyMethodDef quant_module_methods[] = {
    {"decode_quantization", (PyCFunction)(void (*)(void))m_decode_quantization,
     METH_FASTCALL | METH_KEYWORDS,
     "decode_quantization(data, /, *, permissive=False)\n--\n\nRead a quantization section "
     "payload (what encode() returns) into the class its scheme tag names; bytes past the "
     "scheme's length are writer padding and are kept. permissive=True also accepts a scheme "
     "tag this version does not define (OpaqueQuantization)."},
    {NULL, NULL, 0, NULL},
};

/* The getters of each class, shared by every interpreter (types/schema.c). */
static PyGetSetDef *g_getsets[QCLASS_COUNT];

int hrpy_quant_init(PyObject *m, HrpyState *st) {
  st->types->quant_classes = PyTuple_New((Py_ssize_t)QCLASS_COUNT);
  if (st->types->quant_classes == NULL) return -1;
  for (size_t i = 0; i < QCLASS_COUNT; i++) {
    const struct QClass *c = &k_qclasses[i];
    const HurrayQuantSchemeInfo *info = qinfo_of(c);
    if (hrpy_fields_check(info->fields, info->field_count, c->name) < 0) return -1;
    PyGetSetDef *getset = hrpy_fields_getset(&g_getsets[i], common_getset, info->fields,
                                             info->field_count, qg_field);
    if (getset == NULL) return -1;
    bool hashable = true; /* unless a float field makes equal values hash apart */
    for (uint32_t k = 0; k < info->field_count; k++)
      if (info->fields[k].kind == HURRAY_VALUE_F32) hashable = false;
    PyType_Slot slots[] = {
        {Py_tp_doc, (void *)c->doc},
        {Py_tp_new, c->scheme != 0 ? (void *)quant_new : (void *)opaque_new},
        {Py_tp_repr, (void *)q_repr},
        {Py_tp_getset, getset},
        {Py_tp_methods, c->methods},
        {Py_tp_richcompare, (void *)q_richcompare},
        {Py_tp_hash, hashable ? (void *)q_hash : (void *)PyObject_HashNotImplemented},
        {Py_tp_dealloc, (void *)q_dealloc},
        {0, NULL},
    };
    PyType_Spec spec = {
        .name = c->name,
        .basicsize = sizeof(HrpyQuant),
        .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
        .slots = slots,
    };
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
    if (t == NULL) return -1;
    PyTuple_SET_ITEM(st->types->quant_classes, (Py_ssize_t)i, (PyObject *)t); /* owns t */
    if (c->scheme != 0)
      st->types->QuantByScheme[c->scheme] = t;
    else
      st->types->OpaqueQuantType = t;
    if (PyModule_AddType(m, t) < 0) return -1;
  }
  return PyModule_AddFunctions(m, quant_module_methods);
}
