/*
 * types/quant.c - the quantization classes: PerTensorAffine, PerChannelAffine,
 * PerBlockAffine, NF4, MXFP (the reference's names), OpaqueQuantization for
 * a private or unknown scheme a permissive reader relays, and
 * hurray.decode_quantization.
 *
 * Each object holds the exact section payload (scheme header included) and
 * its parsed fields. Constructors check what a scheme states about itself
 * through hurray_quant_check; the rules that need a tensor run when the
 * scheme is attached to one. encode() returns the payload, decode_quantization
 * reads one back into whichever class its scheme tag names, and the Tensor
 * and Descriptor getters return these same classes, so an inspected scheme
 * builds another tensor unchanged.
 *
 * Equality compares the payload bytes. PerTensorAffine carries a float
 * (its scale) and is therefore unhashable; the others hash their bytes.
 */
#include "types/quant.h"

#include "core/dtype.h"
#include "util/args.h"
#include "util/errors.h"
#include "types/state.h"

#include <math.h>
#include <stdlib.h>
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

PyObject *hrpy_quant_new(HrpyState *st, const HurrayQuantization *q) { return quant_wrap(st, q); }

/* Checks an authored scheme, encodes its payload and wraps it. */
static PyObject *quant_build(HrpyState *st, HurrayQuantization *q, const char *ctx) {
  HurrayError err;
  hurray_error_clear(&err);
  q->version = HURRAY_QUANT_SCHEME_VERSION;
  q->raw = NULL;
  q->raw_len = 0;
  HurrayStatus rc = hurray_quant_check(q, HURRAY_DECODE_STRICT, &err);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, ctx);
  uint8_t buf[64];
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
  uint8_t buf[64];
  if (q.raw == NULL) { /* a hand-built section: encode its typed fields */
    uint64_t n = 0;
    if (hurray_quant_encode(&q, buf, sizeof buf, &n) != HURRAY_OK)
      return hrpy_raise_status(st, HURRAY_ERR_INTERNAL, NULL, "quantization");
    q.raw = buf;
    q.raw_len = (uint32_t)n;
  }
  return quant_wrap(st, &q);
}

/* ---- argument helpers ----------------------------------------------------------- */


/* An optional zero-point index: None means symmetric. */
static int zp_arg(HrpyState *st, PyObject *o, const char *ctx, uint32_t *out, uint16_t *flags) {
  if (o == NULL || o == Py_None) {
    *out = HURRAY_QUANT_NO_BUFFER;
    *flags = HURRAY_QUANT_FLAG_SYMMETRIC;
    return 0;
  }
  *flags = 0;
  return hrpy_arg_u32(st, o, ctx, "zero_point_buffer_index", out);
}

static int scale_type_arg(HrpyState *st, PyObject *o, const char *ctx, uint8_t *out) {
  if (o == NULL) {
    *out = HURRAY_QUANT_SCALE_F32;
    return 0;
  }
  if (hrpy_dtype_converter(st, o, out) < 0) return -1;
  if (*out != HURRAY_QUANT_SCALE_F16 && *out != HURRAY_QUANT_SCALE_BF16 &&
      *out != HURRAY_QUANT_SCALE_F32) {
    const char *n = hurray_dtype_name(*out);
    hrpy_raise(st->InvalidDescriptorError,
              "%s: scale_type must be float16, bfloat16 or float32, not %s", ctx,
              n != NULL ? n : "a private type");
    return -1;
  }
  return 0;
}

static HurrayQuantization blank(uint8_t scheme) {
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = scheme;
  return q;
}

/* ---- constructors ------------------------------------------------------------------ */

static PyObject *per_tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"scale", "zero_point", NULL};
  PyObject *scale_o, *zp_o = NULL;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("PerTensorAffine", args, kwargs, kwlist, 2, 1, argv_) < 0) return NULL;
  scale_o = argv_[0];
  if (argv_[1] != NULL) zp_o = argv_[1];
  HrpyState *st = hrpy_state_of_type(type);
  const char *ctx = "PerTensorAffine";
  HurrayQuantization q = blank(HURRAY_QUANT_PER_TENSOR_AFFINE);
  double scale;
  if (hrpy_arg_float(scale_o, ctx, "scale", &scale) < 0) return NULL;
  q.u.per_tensor.scale = (float)scale; /* stored as float32 on the wire */
  if (zp_o != NULL) {
    int64_t z;
    if (hrpy_arg_i64(st, zp_o, ctx, "zero_point", INT32_MIN, INT32_MAX, &z) < 0) return NULL;
    q.u.per_tensor.zero_point = (int32_t)z;
  }
  return quant_build(st, &q, ctx);
}

static PyObject *per_channel_make(HrpyState *st, PyObject *axis, PyObject *sidx, PyObject *zidx,
                                  const char *ctx) {
  HurrayQuantization q = blank(HURRAY_QUANT_PER_CHANNEL_AFFINE);
  q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  if (hrpy_arg_u32(st, axis, ctx, "axis", &q.u.per_channel.axis) < 0 ||
      hrpy_arg_u32(st, sidx, ctx, "scale_buffer_index", &q.u.per_channel.scale_buffer_index) < 0 ||
      zp_arg(st, zidx, ctx, &q.u.per_channel.zero_point_buffer_index, &q.flags) < 0)
    return NULL;
  return quant_build(st, &q, ctx);
}

static PyObject *per_channel_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"axis", "scale_buffer_index", "zero_point_buffer_index", NULL};
  PyObject *a, *s, *z = NULL;
  PyObject *argv_[3];
  if (hrpy_parse_tuple("PerChannelAffine", args, kwargs, kwlist, 3, 2, argv_) < 0) return NULL;
  a = argv_[0];
  s = argv_[1];
  if (argv_[2] != NULL) z = argv_[2];
  return per_channel_make(hrpy_state_of_type(type), a, s, z, "PerChannelAffine");
}

static PyObject *per_channel_symmetric(PyObject *cls, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"axis", "scale_buffer_index", NULL};
  PyObject *a, *s;
  PyObject *argv_[2];
  if (hrpy_parse_tuple("symmetric", args, kwargs, kwlist, 2, 2, argv_) < 0) return NULL;
  a = argv_[0];
  s = argv_[1];
  return per_channel_make(hrpy_state_of_type((PyTypeObject *)cls), a, s, NULL,
                          "PerChannelAffine.symmetric");
}

static PyObject *per_channel_asymmetric(PyObject *cls, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"axis", "scale_buffer_index", "zero_point_buffer_index", NULL};
  PyObject *a, *s, *z;
  PyObject *argv_[3];
  if (hrpy_parse_tuple("asymmetric", args, kwargs, kwlist, 3, 3, argv_) < 0) return NULL;
  a = argv_[0];
  s = argv_[1];
  z = argv_[2];
  if (z == Py_None)
    return PyErr_Format(PyExc_TypeError,
                        "PerChannelAffine.asymmetric: zero_point_buffer_index must be an int");
  return per_channel_make(hrpy_state_of_type((PyTypeObject *)cls), a, s, z,
                          "PerChannelAffine.asymmetric");
}

static PyObject *per_block_make(HrpyState *st, PyObject *axis, PyObject *block, PyObject *sidx,
                                PyObject *zidx, PyObject *stype, const char *ctx) {
  HurrayQuantization q = blank(HURRAY_QUANT_PER_BLOCK_AFFINE);
  if (hrpy_arg_u32(st, axis, ctx, "axis", &q.u.per_block.axis) < 0 ||
      hrpy_arg_u32(st, block, ctx, "block_size", &q.u.per_block.block_size) < 0 ||
      hrpy_arg_u32(st, sidx, ctx, "scale_buffer_index", &q.u.per_block.scale_buffer_index) < 0 ||
      zp_arg(st, zidx, ctx, &q.u.per_block.zero_point_buffer_index, &q.flags) < 0 ||
      scale_type_arg(st, stype, ctx, &q.u.per_block.scale_type) < 0)
    return NULL;
  return quant_build(st, &q, ctx);
}

static PyObject *per_block_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"axis", "block_size", "scale_buffer_index",
                           "zero_point_buffer_index", "scale_type", NULL};
  PyObject *a, *b, *s, *z = NULL, *t = NULL;
  PyObject *argv_[5];
  if (hrpy_parse_tuple("PerBlockAffine", args, kwargs, kwlist, 5, 3, argv_) < 0) return NULL;
  a = argv_[0];
  b = argv_[1];
  s = argv_[2];
  if (argv_[3] != NULL) z = argv_[3];
  if (argv_[4] != NULL) t = argv_[4];
  return per_block_make(hrpy_state_of_type(type), a, b, s, z, t, "PerBlockAffine");
}

static PyObject *per_block_symmetric(PyObject *cls, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"axis", "block_size", "scale_buffer_index", "scale_type", NULL};
  PyObject *a, *b, *s, *t;
  PyObject *argv_[4];
  if (hrpy_parse_tuple("symmetric", args, kwargs, kwlist, 4, 4, argv_) < 0) return NULL;
  a = argv_[0];
  b = argv_[1];
  s = argv_[2];
  t = argv_[3];
  return per_block_make(hrpy_state_of_type((PyTypeObject *)cls), a, b, s, NULL, t,
                        "PerBlockAffine.symmetric");
}

static PyObject *per_block_asymmetric(PyObject *cls, PyObject *args, PyObject *kwargs) {
  static const char *const kwlist[] = {"axis", "block_size", "scale_buffer_index", "zero_point_buffer_index",
                           "scale_type", NULL};
  PyObject *a, *b, *s, *z, *t;
  PyObject *argv_[5];
  if (hrpy_parse_tuple("asymmetric", args, kwargs, kwlist, 5, 5, argv_) < 0) return NULL;
  a = argv_[0];
  b = argv_[1];
  s = argv_[2];
  z = argv_[3];
  t = argv_[4];
  if (z == Py_None)
    return PyErr_Format(PyExc_TypeError,
                        "PerBlockAffine.asymmetric: zero_point_buffer_index must be an int");
  return per_block_make(hrpy_state_of_type((PyTypeObject *)cls), a, b, s, z, t,
                        "PerBlockAffine.asymmetric");
}

static PyObject *block_scheme_new(PyTypeObject *type, PyObject *args, PyObject *kwargs,
                                  uint8_t scheme, const char *name) {
  static const char *const kwlist[] = {"axis", "block_size", "scale_buffer_index", NULL};
  PyObject *argv_[3];
  if (hrpy_parse_tuple(name, args, kwargs, kwlist, 3, 3, argv_) < 0) return NULL;
  PyObject *a = argv_[0], *b = argv_[1], *s = argv_[2];
  HrpyState *st = hrpy_state_of_type(type);
  HurrayQuantization q = blank(scheme);
  /* NF4 and MXFP share one field layout (quant.h) */
  if (hrpy_arg_u32(st, a, name, "axis", &q.u.nf4.axis) < 0 ||
      hrpy_arg_u32(st, b, name, "block_size", &q.u.nf4.block_size) < 0 ||
      hrpy_arg_u32(st, s, name, "scale_buffer_index", &q.u.nf4.scale_buffer_index) < 0)
    return NULL;
  if (scheme == HURRAY_QUANT_MXFP) {
    HurrayQuantization m = blank(scheme);
    m.u.mxfp.axis = q.u.nf4.axis;
    m.u.mxfp.block_size = q.u.nf4.block_size;
    m.u.mxfp.scale_buffer_index = q.u.nf4.scale_buffer_index;
    q = m;
  }
  return quant_build(st, &q, name);
}

static PyObject *nf4_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return block_scheme_new(type, args, kwargs, HURRAY_QUANT_NF4, "NF4");
}
static PyObject *mxfp_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  return block_scheme_new(type, args, kwargs, HURRAY_QUANT_MXFP, "MXFP");
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
static PyObject *qg_scale(PyObject *s, void *c) {
  (void)c;
  return PyFloat_FromDouble((double)Q(s)->q.u.per_tensor.scale);
}
static PyObject *qg_zero_point(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromLong(Q(s)->q.u.per_tensor.zero_point);
}

/* Fields of the axis schemes, by scheme. */
static uint32_t f_axis(const HurrayQuantization *q) {
  switch (q->scheme) {
    case HURRAY_QUANT_PER_CHANNEL_AFFINE: return q->u.per_channel.axis;
    case HURRAY_QUANT_PER_BLOCK_AFFINE: return q->u.per_block.axis;
    case HURRAY_QUANT_NF4: return q->u.nf4.axis;
    default: return q->u.mxfp.axis;
  }
}
static uint32_t f_block(const HurrayQuantization *q) {
  switch (q->scheme) {
    case HURRAY_QUANT_PER_BLOCK_AFFINE: return q->u.per_block.block_size;
    case HURRAY_QUANT_NF4: return q->u.nf4.block_size;
    default: return q->u.mxfp.block_size;
  }
}
static uint32_t f_scale_index(const HurrayQuantization *q) {
  switch (q->scheme) {
    case HURRAY_QUANT_PER_CHANNEL_AFFINE: return q->u.per_channel.scale_buffer_index;
    case HURRAY_QUANT_PER_BLOCK_AFFINE: return q->u.per_block.scale_buffer_index;
    case HURRAY_QUANT_NF4: return q->u.nf4.scale_buffer_index;
    default: return q->u.mxfp.scale_buffer_index;
  }
}
static uint32_t f_zp_index(const HurrayQuantization *q) {
  return q->scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE ? q->u.per_channel.zero_point_buffer_index
                                                      : q->u.per_block.zero_point_buffer_index;
}
static uint8_t f_scale_type(const HurrayQuantization *q) {
  return q->scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE ? q->u.per_channel.scale_type
                                                      : q->u.per_block.scale_type;
}

static PyObject *qg_axis(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(f_axis(&Q(s)->q));
}
static PyObject *qg_block_size(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(f_block(&Q(s)->q));
}
static PyObject *qg_scale_index(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(f_scale_index(&Q(s)->q));
}
static PyObject *qg_zp_index(PyObject *s, void *c) {
  (void)c;
  uint32_t z = f_zp_index(&Q(s)->q);
  if (z == HURRAY_QUANT_NO_BUFFER) Py_RETURN_NONE;
  return PyLong_FromUnsignedLong(z);
}
static PyObject *qg_scale_type(PyObject *s, void *c) {
  (void)c;
  return hrpy_dtype_from_tag(hrpy_state_of(s), f_scale_type(&Q(s)->q));
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
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < Q(s)->q.raw_len; i++) {
    h ^= Q(s)->raw[i];
    h *= 0x100000001b3ull;
  }
  Py_hash_t r = (Py_hash_t)(h ^ (h >> 32));
  return r == -1 ? -2 : r;
}

/* The shortest decimal that reads back as the same float32. */
static void f32_text(float v, char *out, size_t n) {
  for (int p = 1; p <= 9; p++) {
    PyOS_snprintf(out, n, "%.*g", p, (double)v);
    if ((float)strtod(out, NULL) == v) break;
  }
  if (strchr(out, '.') == NULL && strchr(out, 'e') == NULL && strchr(out, 'n') == NULL &&
      strchr(out, 'i') == NULL) {
    size_t used = strlen(out);
    PyOS_snprintf(out + used, n - used, ".0");
  }
}

static PyObject *per_tensor_repr(PyObject *s) {
  char text[48];
  f32_text(Q(s)->q.u.per_tensor.scale, text, sizeof text);
  return PyUnicode_FromFormat("PerTensorAffine(scale=%s, zero_point=%d)", text,
                              (int)Q(s)->q.u.per_tensor.zero_point);
}
static PyObject *per_channel_repr(PyObject *s) {
  const HurrayQuantization *q = &Q(s)->q;
  if (q->u.per_channel.zero_point_buffer_index == HURRAY_QUANT_NO_BUFFER)
    return PyUnicode_FromFormat("PerChannelAffine.symmetric(axis=%u, scale_buffer_index=%u)",
                                (unsigned)q->u.per_channel.axis,
                                (unsigned)q->u.per_channel.scale_buffer_index);
  return PyUnicode_FromFormat(
      "PerChannelAffine.asymmetric(axis=%u, scale_buffer_index=%u, zero_point_buffer_index=%u)",
      (unsigned)q->u.per_channel.axis, (unsigned)q->u.per_channel.scale_buffer_index,
      (unsigned)q->u.per_channel.zero_point_buffer_index);
}
static PyObject *per_block_repr(PyObject *s) {
  const HurrayQuantization *q = &Q(s)->q;
  const char *tn = hurray_dtype_name(q->u.per_block.scale_type);
  if (q->u.per_block.zero_point_buffer_index == HURRAY_QUANT_NO_BUFFER)
    return PyUnicode_FromFormat(
        "PerBlockAffine.symmetric(axis=%u, block_size=%u, scale_buffer_index=%u, "
        "scale_type=%s)",
        (unsigned)q->u.per_block.axis, (unsigned)q->u.per_block.block_size,
        (unsigned)q->u.per_block.scale_buffer_index, tn != NULL ? tn : "?");
  return PyUnicode_FromFormat(
      "PerBlockAffine.asymmetric(axis=%u, block_size=%u, scale_buffer_index=%u, "
      "zero_point_buffer_index=%u, scale_type=%s)",
      (unsigned)q->u.per_block.axis, (unsigned)q->u.per_block.block_size,
      (unsigned)q->u.per_block.scale_buffer_index,
      (unsigned)q->u.per_block.zero_point_buffer_index, tn != NULL ? tn : "?");
}
static PyObject *block_repr(PyObject *s) {
  const HurrayQuantization *q = &Q(s)->q;
  return PyUnicode_FromFormat("%s(axis=%u, block_size=%u, scale_buffer_index=%u)",
                              q->scheme == HURRAY_QUANT_NF4 ? "NF4" : "MXFP",
                              (unsigned)f_axis(q), (unsigned)f_block(q),
                              (unsigned)f_scale_index(q));
}
static PyObject *opaque_repr(PyObject *s) {
  return PyUnicode_FromFormat("OpaqueQuantization(scheme_tag=0x%s, payload=%u bytes)",
                              hrpy_hex(Q(s)->q.scheme).s, (unsigned)Q(s)->q.raw_len);
}

static void q_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  PyMem_Free(Q(s)->raw);
  tp->tp_free(s);
  Py_DECREF(tp);
}

/* ---- the classes ------------------------------------------------------------------------ */

#define GET(name, fn, doc) {name, fn, NULL, doc, NULL}
#define END_GET {NULL, NULL, NULL, NULL, NULL}
#define COMMON_GET                                                                      \
  GET("scheme", qg_scheme, "The scheme name ('per_tensor_affine', 'nf4', ...)."),       \
      GET("scheme_tag", qg_scheme_tag, "The scheme tag byte.")

static PyGetSetDef per_tensor_getset[] = {
    COMMON_GET, GET("scale", qg_scale, "The scale (stored as float32)."),
    GET("zero_point", qg_zero_point, "The zero point (int32)."), END_GET};
static PyGetSetDef per_channel_getset[] = {
    COMMON_GET,
    GET("axis", qg_axis, "The quantized axis."),
    GET("scale_buffer_index", qg_scale_index, "Buffer holding the float32 scales."),
    GET("zero_point_buffer_index", qg_zp_index,
        "Buffer holding the int32 zero points, or None when symmetric."),
    GET("scale_type", qg_scale_type, "Element type of the scales (float32)."),
    END_GET};
static PyGetSetDef per_block_getset[] = {
    COMMON_GET,
    GET("axis", qg_axis, "The quantized axis."),
    GET("block_size", qg_block_size, "Elements per block along axis."),
    GET("scale_buffer_index", qg_scale_index, "Buffer holding the per-block scales."),
    GET("zero_point_buffer_index", qg_zp_index,
        "Buffer holding the int32 zero points, or None when symmetric."),
    GET("scale_type", qg_scale_type, "Element type of the scales: float16, bfloat16 or float32."),
    END_GET};
static PyGetSetDef block_getset[] = {
    COMMON_GET,
    GET("axis", qg_axis, "The quantized axis."),
    GET("block_size", qg_block_size, "Elements per block along axis."),
    GET("scale_buffer_index", qg_scale_index, "Buffer holding the per-block scales."),
    END_GET};
static PyGetSetDef opaque_getset[] = {
    COMMON_GET, GET("payload", qg_payload, "The section payload, verbatim."), END_GET};

#define Q_METHODS_COMMON                                                                     \
  {"encode", q_encode, METH_NOARGS,                                                          \
   "encode(self)\n--\n\nThe quantization section payload (scheme header included, without " \
   "the u32 length that frames it in a descriptor); hurray.decode_quantization reads it."},  \
      {"__reduce__", q_reduce, METH_NOARGS, NULL}

static PyMethodDef plain_methods[] = {Q_METHODS_COMMON, {NULL, NULL, 0, NULL}};
static PyMethodDef per_channel_methods[] = {
    Q_METHODS_COMMON,
    {"symmetric", (PyCFunction)(void (*)(void))per_channel_symmetric,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "symmetric(axis, scale_buffer_index)\n--\n\nPer-channel scales, no zero points."},
    {"asymmetric", (PyCFunction)(void (*)(void))per_channel_asymmetric,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "asymmetric(axis, scale_buffer_index, zero_point_buffer_index)\n--\n\nPer-channel scales "
     "and zero points (one buffer index may hold both: [scales | zero_points])."},
    {NULL, NULL, 0, NULL}};
static PyMethodDef per_block_methods[] = {
    Q_METHODS_COMMON,
    {"symmetric", (PyCFunction)(void (*)(void))per_block_symmetric,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "symmetric(axis, block_size, scale_buffer_index, scale_type)\n--\n\nPer-block scales, no "
     "zero points."},
    {"asymmetric", (PyCFunction)(void (*)(void))per_block_asymmetric,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "asymmetric(axis, block_size, scale_buffer_index, zero_point_buffer_index, "
     "scale_type)\n--\n\nPer-block scales and zero points."},
    {NULL, NULL, 0, NULL}};

typedef struct {
  const char *name;
  const char *doc;
  newfunc tp_new;
  reprfunc repr;
  PyGetSetDef *getset;
  PyMethodDef *methods;
  bool hashable;
  uint8_t scheme; /* the scheme tag it binds; 0 for OpaqueQuantization */
} QClass;

/* The quantization classes: adding a scheme adds its entry here (and its
 * constructor, getters and repr above). */
static const QClass k_qclasses[] = {
    {"hurray.PerTensorAffine",
     "PerTensorAffine(scale, zero_point=0)\n--\n\nOne scale and zero point for the whole "
     "tensor, inline in the descriptor (scheme 0x01). value = scale * (q - zero_point). The "
     "scale is stored as float32 and must be finite and non-zero. Unhashable (a float field).",
     per_tensor_new, per_tensor_repr, per_tensor_getset, plain_methods, false,
     HURRAY_QUANT_PER_TENSOR_AFFINE},
    {"hurray.PerChannelAffine",
     "PerChannelAffine(axis, scale_buffer_index, zero_point_buffer_index=None)\n--\n\nOne "
     "float32 scale (and int32 zero point) per slice along axis, in buffers referenced by "
     "index (scheme 0x02). None for zero_point_buffer_index means symmetric.",
     per_channel_new, per_channel_repr, per_channel_getset, per_channel_methods, true,
     HURRAY_QUANT_PER_CHANNEL_AFFINE},
    {"hurray.PerBlockAffine",
     "PerBlockAffine(axis, block_size, scale_buffer_index, zero_point_buffer_index=None, "
     "scale_type='float32')\n--\n\nOne scale (and zero point) per block of block_size elements "
     "along axis (scheme 0x03); block_size is a power of two >= 2.",
     per_block_new, per_block_repr, per_block_getset, per_block_methods, true,
     HURRAY_QUANT_PER_BLOCK_AFFINE},
    {"hurray.NF4",
     "NF4(axis, block_size, scale_buffer_index)\n--\n\nNormalFloat4: uint4 codes into the "
     "fixed NF4 table, one float32 absmax scale per block (scheme 0x04; block_size a power "
     "of two >= 8).",
     nf4_new, block_repr, block_getset, plain_methods, true, HURRAY_QUANT_NF4},
    {"hurray.MXFP",
     "MXFP(axis, block_size, scale_buffer_index)\n--\n\nOCP Microscaling: one float8_e8m0 "
     "shared exponent per block (scheme 0x05; block_size a power of two in [16, 2048]).",
     mxfp_new, block_repr, block_getset, plain_methods, true, HURRAY_QUANT_MXFP},
    {"hurray.OpaqueQuantization",
     "OpaqueQuantization(payload)\n--\n\nA private (0xF0-0xFE) or unknown scheme, carried "
     "verbatim for relays: only its agreed reader can interpret it.",
     opaque_new, opaque_repr, opaque_getset, plain_methods, true, 0},
};

static PyMethodDef quant_module_methods[] = {
    {"decode_quantization", (PyCFunction)(void (*)(void))m_decode_quantization,
     METH_FASTCALL | METH_KEYWORDS,
     "decode_quantization(data, /, *, permissive=False)\n--\n\nRead a quantization section "
     "payload (what encode() returns) into the class its scheme tag names. permissive=True "
     "also accepts a scheme tag this version does not define (OpaqueQuantization)."},
    {NULL, NULL, 0, NULL},
};

int hrpy_quant_init(PyObject *m, HrpyState *st) {
  const size_t count = sizeof k_qclasses / sizeof k_qclasses[0];
  st->types->quant_classes = PyTuple_New((Py_ssize_t)count);
  if (st->types->quant_classes == NULL) return -1;
  for (size_t i = 0; i < count; i++) {
    const QClass *c = &k_qclasses[i];
    PyType_Slot slots[] = {
        {Py_tp_doc, (void *)c->doc},
        {Py_tp_new, (void *)c->tp_new},
        {Py_tp_repr, (void *)c->repr},
        {Py_tp_getset, c->getset},
        {Py_tp_methods, c->methods},
        {Py_tp_richcompare, (void *)q_richcompare},
        {Py_tp_hash, c->hashable ? (void *)q_hash : (void *)PyObject_HashNotImplemented},
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
