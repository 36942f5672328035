/*
 * types/quantize.c - hurray.quantize (its C half, _quantize) and
 * Tensor.dequantize (types/quantize.h).
 *
 * The binding converts: it reads the input tensor as float32 (widening
 * float16 / bfloat16, rounding float64, gathering strided elements), turns
 * the keyword arguments into a request the C library makes a scheme of
 * (hurray_quant_request_resolve), allocates the buffers it sizes, and calls
 * hurray_quant_quantize_f32 /
 * hurray_quant_dequantize without the GIL. How scales are chosen, how values
 * round and what is refused are the C library's (docs/reference/c-api/quant.md).
 */
#include "types/quantize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "core/state.h"

/* ---- reading the input as float32 ------------------------------------------------------ */

typedef struct Input {
  uint32_t rank;
  uint64_t shape[HURRAY_MAX_RANK];
  uint64_t count;
  const float *vals; /* count values in row-major order */
  float *owned;      /* what vals points into when converted (hurray_free) */
  Py_buffer view;    /* held export of a buffer-protocol input (view.obj != NULL) */
} Input;

static void input_release(Input *in) {
  if (in->owned != NULL) hurray_free(in->owned);
  in->owned = NULL;
  if (in->view.obj != NULL) PyBuffer_Release(&in->view);
}

/* Contiguous row-major float32 values at base (used in place when aligned),
 * else a float32 copy gathered without the GIL. */
static int take_values(Input *in, const uint8_t *base, uint8_t tag, unsigned isz,
                       const int64_t *bst) {
  HurrayStridedForm form;
  hurray_strided_classify(tag, (uint8_t *)(uintptr_t)base, isz, in->rank, in->shape, bst, &form);
  if (tag == HURRAY_DTYPE_FLOAT32 && ((uintptr_t)base % sizeof(float)) == 0 &&
      form.layout_tag == HURRAY_LAYOUT_ROW_MAJOR) {
    in->vals = (const float *)(const void *)base;
    return 0;
  }
  if (in->count > (uint64_t)PY_SSIZE_T_MAX / sizeof(float)) {
    PyErr_NoMemory();
    return -1;
  }
  in->owned = hurray_alloc((size_t)in->count * sizeof(float), HURRAY_MIN_BUFFER_ALIGNMENT);
  if (in->owned == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  /* libhurray's conversion (exact widening, float64 rounded to nearest even,
   * beyond float32 an infinity); the types are those the callers checked */
  float *dst = in->owned;
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS rc = hurray_elements_gather_convert(tag, base, in->rank, in->shape, bst,
                                                             HURRAY_DTYPE_FLOAT32, dst);
  Py_END_ALLOW_THREADS in->vals = in->owned;
  (void)rc;
  return 0;
}

/* A buffer-protocol input (a NumPy array of float16 / 32 / 64, any strides):
 * read in place, without the 64-byte floor a tensor's buffer needs. */
static int read_buffer(HrpyState *st, PyObject *x, Input *in) {
  if (PyObject_GetBuffer(x, &in->view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
    memset(&in->view, 0, sizeof in->view);
    return -1;
  }
  Py_buffer *v = &in->view;
  /* a quantizer's value type (no buffer format names bfloat16) in this machine's order */
  bool swapped = false;
  uint8_t tag = hurray_dtype_from_buffer_format(v->format, (uint64_t)v->itemsize, &swapped);
  if (swapped || !hurray_quant_value_type(tag)) {
    PyErr_Format(PyExc_TypeError,
                 "quantize: x holds items of format '%s'; quantize takes float16, bfloat16, "
                 "float32 or float64 values",
                 v->format != NULL ? v->format : "B");
    return -1;
  }
  if (v->ndim < 0 || v->ndim > (int)HURRAY_MAX_RANK) {
    hrpy_raise_arg(st, "quantize", "x", "rank %d exceeds %u", v->ndim, HURRAY_MAX_RANK);
    return -1;
  }
  in->rank = (uint32_t)v->ndim;
  int64_t bst[HURRAY_MAX_RANK];
  in->count = 1;
  for (uint32_t j = 0; j < in->rank; j++) {
    bst[j] = v->strides != NULL ? (int64_t)v->strides[j] : 0;
    in->shape[j] = (uint64_t)v->shape[j];
    in->count *= in->shape[j]; /* bounded: the exporter holds these bytes */
  }
  if (v->strides == NULL) { /* C-contiguous */
    int64_t acc = (int64_t)v->itemsize;
    for (uint32_t j = in->rank; j-- > 0;) {
      bst[j] = acc;
      acc *= (int64_t)in->shape[j];
    }
  }
  if (in->count == 0) return 0;
  return take_values(in, (const uint8_t *)v->buf, tag, (unsigned)v->itemsize, bst);
}

static int read_input(HrpyState *st, PyObject *x, Input *in) {
  memset(in, 0, sizeof *in);
  if (!hrpy_tensor_check(st, x)) {
    if (PyObject_CheckBuffer(x)) return read_buffer(st, x, in);
    PyErr_Format(PyExc_TypeError,
                 "quantize: x must be a hurray.Tensor or a buffer of float values here "
                 "(hurray.quantize converts NumPy arrays, torch tensors and DLPack objects), "
                 "not %.100s",
                 Py_TYPE(x)->tp_name);
    return -1;
  }
  HrpyTensorView v = hrpy_tensor_view(x);
  const HurrayDescriptorFields *f = v.f;
  uint8_t tag = f->type_tag;
  if (f->quantization != NULL) {
    const char *sn = hurray_quant_scheme_name(f->quantization->scheme);
    hrpy_raise_arg(st, "quantize", "x", "x is already quantized (%s); dequantize it first",
              sn != NULL ? sn : "an opaque scheme");
    return -1;
  }
  if (!hurray_quant_value_type(tag)) {
    const char *n = hurray_dtype_name(tag);
    PyErr_Format(PyExc_TypeError,
                 "quantize: x holds %s values; quantize takes float16, bfloat16, float32 or "
                 "float64",
                 n != NULL ? n : "private-type");
    return -1;
  }
  uint8_t lt = f->layout.tag;
  if (lt != HURRAY_LAYOUT_ROW_MAJOR && lt != HURRAY_LAYOUT_COL_MAJOR &&
      lt != HURRAY_LAYOUT_STRIDED) {
    hrpy_raise(st->UnsupportedError,
               "quantize: x has a %s layout; quantize takes a dense row-major, column-major or "
               "strided tensor",
               hrpy_layout_name(lt));
    return -1;
  }
  in->rank = f->rank;
  for (uint32_t j = 0; j < f->rank; j++) {
    if (f->shape[j] == HURRAY_DYNAMIC_DIM) {
      hrpy_raise_arg(st, "quantize", "x", "x has a dynamic dimension (shape[%u])", (unsigned)j);
      return -1;
    }
    in->shape[j] = f->shape[j];
  }
  if (!hurray_shape_element_count(f->rank, f->shape, &in->count)) {
    hrpy_raise_arg(st, "quantize", "x", "x's element count overflows");
    return -1;
  }
  if (hrpy_tensor_check_host(st, x, "quantize") < 0 ||
      hrpy_tensor_check_readable(st, x, "quantize") < 0)
    return -1;
  if (in->count == 0) return 0;
  unsigned isz = hurray_dtype_info(tag)->bit_width / 8u;
  int64_t shp[HURRAY_MAX_RANK], bst[HURRAY_MAX_RANK];
  if (hrpy_tensor_strided_geometry(st, &v, (int64_t)isz, shp, bst, "quantize") < 0) return -1;
  return take_values(in, v.bufs[0].data + f->byte_offset, tag, isz, bst);
}

/* ---- the scheme the arguments name -------------------------------------------------------- */

/* Converts the arguments (a[1] .. a[6]: dtype, axis, block_size, symmetric,
 * scale_dtype, scheme) into a request; the C library resolves it
 * (hurray_quant_request_resolve: which scheme, its defaults, what does not
 * apply). dtype 'nf4' is uint4 storage under the nf4 scheme (*nf4). */
static int read_request(HrpyState *st, PyObject *const *a, HurrayQuantRequest *r, bool *nf4) {
  memset(r, 0, sizeof *r);
  const char *ctx = "quantize";
  *nf4 = PyUnicode_Check(a[1]) && PyUnicode_CompareWithASCIIString(a[1], "nf4") == 0;
  if (*nf4)
    r->storage_type = HURRAY_DTYPE_UINT4;
  else if (hrpy_dtype_converter(st, a[1], &r->storage_type) < 0)
    return -1;
  r->has_axis = a[2] != NULL && a[2] != Py_None;
  if (r->has_axis &&
      hrpy_arg_int_as(PyExc_ValueError, a[2], ctx, "axis", INT64_MIN, INT64_MAX, &r->axis) < 0)
    return -1;
  r->has_block_size = a[3] != NULL && a[3] != Py_None;
  if (r->has_block_size && hrpy_arg_uint_as(PyExc_ValueError, a[3], ctx, "block_size",
                                            UINT64_MAX, &r->block_size) < 0)
    return -1;
  bool sym = true;
  if (a[4] != NULL && hrpy_arg_bool(a[4], ctx, "symmetric", &sym) < 0) return -1;
  r->asymmetric = !sym;
  if (a[5] != NULL && a[5] != Py_None && hrpy_dtype_converter(st, a[5], &r->scale_type) < 0)
    return -1;
  if (a[6] == NULL || a[6] == Py_None) {
    r->scheme = *nf4 ? "nf4" : NULL;
  } else if (!PyUnicode_Check(a[6])) {
    PyErr_Format(PyExc_TypeError, "quantize: scheme must be a str, not %.100s",
                 Py_TYPE(a[6])->tp_name);
    return -1;
  } else if ((r->scheme = PyUnicode_AsUTF8(a[6])) == NULL) {
    return -1;
  }
  return 0;
}

/* Raises a status of the C library, naming the argument a field stands for
 * ("quantization.block_size" is block_size, "in[i]" is x at its index). */
static PyObject *raise_as_argument(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                                   const Input *in, const char *ctx) {
  if (err->status != rc || err->message[0] == '\0') return hrpy_raise_status(st, rc, err, ctx);
  static const char *const map[][2] = {{"quantization.axis", "axis"},
                                       {"quantization.block_size", "block_size"},
                                       {"type_tag", "dtype"},
                                       {"quantization.scale_type_tag", "scale_dtype"},
                                       {"out_type", "dtype"},
                                       {"request.storage_type", "dtype"},
                                       {"request.scheme", "scheme"},
                                       {"request.axis", "axis"},
                                       {"request.block_size", "block_size"},
                                       {"request.asymmetric", "symmetric"},
                                       {"request.scale_type", "scale_dtype"}};
  HurrayError e = *err;
  unsigned long long i;
  bool renamed = false;
  uint64_t part[HURRAY_MAX_RANK];
  if (in != NULL && sscanf(err->field, "in[%llu]", &i) == 1 &&
      hurray_shape_unravel(in->rank, in->shape, (uint64_t)i, part)) {
    char idx[HURRAY_MAX_RANK * 21 + 8];
    size_t used = (size_t)PyOS_snprintf(idx, sizeof idx, "x[");
    for (uint32_t j = 0; j < in->rank && used < sizeof idx; j++)
      used += (size_t)PyOS_snprintf(idx + used, sizeof idx - used, j == 0 ? "%llu" : ", %llu",
                                    (unsigned long long)part[j]);
    if (used < sizeof idx) PyOS_snprintf(idx + used, sizeof idx - used, "]");
    PyOS_snprintf(e.field, sizeof e.field, "%s", in->rank == 0 ? "x" : idx);
    renamed = true;
  }
  for (size_t k = 0; !renamed && k < sizeof map / sizeof map[0]; k++) {
    if (strcmp(err->field, map[k][0]) == 0) {
      PyOS_snprintf(e.field, sizeof e.field, "%s", map[k][1]);
      renamed = true;
    }
  }
  if (renamed) PyOS_snprintf(e.message, sizeof e.message, "%s: %s", e.field, e.reason);
  return hrpy_raise_status(st, rc, &e, ctx);
}

PyObject *hrpy_quantize(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"x",         "dtype",       "axis",   "block_size",
                                      "symmetric", "scale_dtype", "scheme", NULL};
  PyObject *a[7];
  if (hrpy_parse_args("quantize", args, nargs, kwnames, names, 2, 2, a) < 0) return NULL;
  Input in;
  if (read_input(st, a[0], &in) < 0) {
    input_release(&in);
    return NULL;
  }
  PyObject *result = NULL;
  HrpyBuffer bufs[3];
  memset(bufs, 0, sizeof bufs);
  uint32_t nbuf = 0;
  HurrayQuantRequest req;
  bool nf4;
  if (read_request(st, a, &req, &nf4) < 0) goto done;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayQuantization q;
  uint32_t want = 0;
  HurrayStatus rc = hurray_quant_request_resolve(&req, in.rank, &q, &want, &err);
  if (rc == HURRAY_OK && nf4 && q.scheme != HURRAY_QUANT_NF4) {
    hrpy_raise_arg(st, "quantize", "dtype", "dtype 'nf4' is the nf4 scheme, not %s",
              hurray_quant_scheme_name(q.scheme));
    goto done;
  }
  HurrayBufferHandle h[3];
  memset(h, 0, sizeof h);
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.version_major = 1;
  f.type_tag = req.storage_type;
  f.rank = in.rank;
  f.shape = in.shape;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.quantization = &q;
  f.buffers = h;
  f.buffer_count = want;
  uint64_t sizes[3] = {0, 0, 0}, storage = 0;
  /* The library sizes every buffer; the rules that need the tensor (storage
   * type, block size against the extent) come with their detail from the
   * quantizer itself. */
  if (rc == HURRAY_OK && q.scheme != HURRAY_QUANT_PER_TENSOR_AFFINE)
    rc = hurray_quant_param_sizes(&f, &sizes[1], &sizes[2]);
  if (rc == HURRAY_OK) rc = hurray_quant_storage_count(&f, &storage);
  if (rc == HURRAY_OK) rc = hurray_buffer_size_bytes(req.storage_type, storage, &sizes[0]);
  if (rc != HURRAY_OK) {
    raise_as_argument(st, rc, &err, &in, "quantize");
    goto done;
  }
  for (; nbuf < want; nbuf++) {
    uint32_t i = nbuf;
    bufs[i].owned = hrpy_alloc_buffer(sizes[i], false);
    if (bufs[i].owned == NULL) goto done;
    bufs[i].data = bufs[i].owned;
    bufs[i].size = sizes[i];
    bufs[i].host = true;
    h[i].byte_size = sizes[i];
    h[i].alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
  }
  void *ptrs[3] = {bufs[0].data, bufs[1].data, bufs[2].data};
  HurrayQuantization out_q;
  Py_BEGIN_ALLOW_THREADS rc = hurray_quant_quantize_f32(&f, in.vals, in.count, ptrs, sizes,
                                                        req.asymmetric ? 0u
                                                                    : HURRAY_QUANTIZE_SYMMETRIC,
                                                        &out_q, &err);
  Py_END_ALLOW_THREADS if (rc != HURRAY_OK) {
    raise_as_argument(st, rc, &err, &in, "quantize");
    goto done;
  }
  HrpySections sec;
  memset(&sec, 0, sizeof sec);
  sec.quantization = &out_q;
  sec.options = HURRAY_DECODE_STRICT;
  result = hrpy_tensor_build_ex(st, req.storage_type, in.rank, in.shape, NULL, 0, st->core->cpu, bufs, nbuf,
                                &sec, "quantize");
  nbuf = 0; /* moved or released */
done:
  for (uint32_t i = 0; i < nbuf; i++) hrpy_buffer_release(&bufs[i]);
  input_release(&in);
  return result;
}

/* ---- Tensor.dequantize ------------------------------------------------------------------ */

PyObject *hrpy_tensor_dequantize(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  HrpyState *st = hrpy_state_of(self);
  static const char *const names[] = {"dtype", NULL};
  PyObject *a[1];
  if (hrpy_parse_args("dequantize", args, nargs, kwnames, names, 1, 0, a) < 0) return NULL;
  uint8_t tag = HURRAY_DTYPE_FLOAT32;
  if (a[0] != NULL && a[0] != Py_None && hrpy_dtype_converter(st, a[0], &tag) < 0) return NULL;
  const char *ctx = "dequantize";
  HrpyTensorView v = hrpy_tensor_view(self);
  const HurrayDescriptorFields *f = v.f;
  if (!hurray_quant_value_type(tag)) {
    const char *n = hurray_dtype_name(tag);
    return hrpy_raise_arg(st, ctx, "dtype",
                     "dequantize gives float16, bfloat16, float32 or float64, not %s",
                     n != NULL ? n : "a private type");
  }
  if (f->quantization == NULL)
    return hrpy_raise_arg(st, ctx, "quantization", "the tensor is not quantized (dtype %s)",
                     hurray_dtype_name(f->type_tag) != NULL ? hurray_dtype_name(f->type_tag)
                                                            : "private");
  if (hrpy_tensor_check_host(st, self, ctx) < 0 || hrpy_tensor_check_readable(st, self, ctx) < 0)
    return NULL;
  /* the result's size and its limit: libhurray's (a dynamic dimension, or a
   * size one buffer cannot address, is a ValueError naming the shape) */
  uint64_t count = 0, bytes = 0;
  HurrayError serr;
  hurray_error_clear(&serr);
  HurrayStatus src = hurray_dense_buffer_size(tag, f->rank, f->shape, &count, &bytes, &serr);
  if (src != HURRAY_OK) return hrpy_raise_status(st, src, &serr, ctx);
  const void *ptrs[HURRAY_MAX_BUFFERS];
  uint64_t sizes[HURRAY_MAX_BUFFERS];
  for (uint32_t i = 0; i < v.nbuf; i++) {
    ptrs[i] = v.bufs[i].data;
    sizes[i] = f->buffers[i].byte_size;
  }
  HrpyBuffer b;
  memset(&b, 0, sizeof b);
  b.owned = hrpy_alloc_buffer(bytes, false);
  if (b.owned == NULL) return NULL;
  b.data = b.owned;
  b.size = bytes;
  b.host = true;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  Py_BEGIN_ALLOW_THREADS rc = hurray_quant_dequantize(f, ptrs, sizes, tag, b.data, count, &err);
  Py_END_ALLOW_THREADS if (rc != HURRAY_OK) {
    hrpy_buffer_release(&b);
    return raise_as_argument(st, rc, &err, NULL, ctx);
  }
  return hrpy_tensor_new_dense(st, tag, f->rank, f->shape, HURRAY_LAYOUT_ROW_MAJOR, st->core->cpu, &b,
                               ctx);
}
