/*
 * types/creation.c - zeros, ones, empty, full: tensors whose one buffer this module
 * allocates (64-byte aligned, host memory).
 *
 * These functions allocate a buffer sized from the shape, so a dynamic
 * dimension is refused with InvalidDescriptorError naming the call and the
 * index.
 */
#include "types/creation.h"

#include "core/buffer.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"

#include <math.h>
#include <string.h>

/* Fills at least this large run with the GIL released (a release costs more
 * than filling a small buffer). */
#define HRPY_NOGIL_FILL_BYTES ((uint64_t)1 << 20)

/* IEEE binary16 from a double, rounding to nearest even. */
static uint16_t f64_to_f16(double d) {
  uint64_t x;
  memcpy(&x, &d, sizeof x);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
  int exp = (int)((x >> 52) & 0x7FF);
  uint64_t man = x & 0xFFFFFFFFFFFFFull;
  if (exp == 0x7FF) return (uint16_t)(sign | 0x7C00u | (man != 0 ? 0x200u | (man >> 42) : 0u));
  int e = exp - 1023 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7C00u);
  if (e < -10) return sign;
  uint64_t m = e <= 0 ? (man | (1ull << 52)) : man;
  int shift = e <= 0 ? 43 - e : 42;
  uint64_t h = m >> shift;
  uint64_t rem = m & ((1ull << shift) - 1), mid = 1ull << (shift - 1);
  if (rem > mid || (rem == mid && (h & 1u))) h++;
  if (e <= 0) return (uint16_t)(sign | h);
  return (uint16_t)(sign + (((uint64_t)e << 10) + h));
}

/* bfloat16 from a double (through float32), rounding to nearest even. */
static uint16_t f64_to_bf16(double d) {
  float f = (float)d;
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu) != 0)
    return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7FFFu + lsb;
  return (uint16_t)(x >> 16);
}

/* Encodes one element of `tag` from a Python value into out (itemsize bytes). */
static int encode_value(HrpyState *st, uint8_t tag, PyObject *v, uint8_t *out) {
  switch (tag) {
    case HURRAY_DTYPE_FLOAT16:
    case HURRAY_DTYPE_BFLOAT16:
    case HURRAY_DTYPE_FLOAT32:
    case HURRAY_DTYPE_FLOAT64: {
      double d = PyFloat_AsDouble(v);
      if (d == -1.0 && PyErr_Occurred()) return -1;
      if (tag == HURRAY_DTYPE_FLOAT64) {
        memcpy(out, &d, 8);
      } else if (tag == HURRAY_DTYPE_FLOAT32) {
        float f = (float)d;
        memcpy(out, &f, 4);
      } else {
        uint16_t h = tag == HURRAY_DTYPE_FLOAT16 ? f64_to_f16(d) : f64_to_bf16(d);
        memcpy(out, &h, 2);
      }
      return 0;
    }
    case HURRAY_DTYPE_COMPLEX64:
    case HURRAY_DTYPE_COMPLEX128: {
      Py_complex c = PyComplex_AsCComplex(v);
      if (c.real == -1.0 && PyErr_Occurred()) return -1;
      if (tag == HURRAY_DTYPE_COMPLEX128) {
        memcpy(out, &c.real, 8);
        memcpy(out + 8, &c.imag, 8);
      } else {
        float re = (float)c.real, im = (float)c.imag;
        memcpy(out, &re, 4);
        memcpy(out + 4, &im, 4);
      }
      return 0;
    }
    default:
      break;
  }
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  if (info == NULL || (info->flags & HURRAY_DTF_INT) == 0 || info->bit_width < 8) {
    hrpy_raise(st->UnsupportedError, "cannot encode a fill value as %s",
              info != NULL ? info->name : "a private type");
    return -1;
  }
  PyObject *iv = PyFloat_Check(v) ? PyNumber_Long(v) : PyNumber_Index(v);
  if (iv == NULL) return -1;
  unsigned bytes = info->bit_width / 8u;
  bool is_signed = (info->flags & HURRAY_DTF_SIGNED) != 0;
  int overflow = 0;
  long long s = PyLong_AsLongLongAndOverflow(iv, &overflow);
  unsigned long long u = 0;
  if (s == -1 && PyErr_Occurred()) {
    Py_DECREF(iv);
    return -1;
  }
  bool ok;
  if (is_signed) {
    long long lo = bytes == 8 ? INT64_MIN : -(1ll << (8 * bytes - 1));
    long long hi = bytes == 8 ? INT64_MAX : (1ll << (8 * bytes - 1)) - 1;
    ok = overflow == 0 && s >= lo && s <= hi;
    u = (unsigned long long)s;
  } else if (overflow > 0) {
    u = PyLong_AsUnsignedLongLong(iv);
    ok = !(u == (unsigned long long)-1 && PyErr_Occurred());
    PyErr_Clear();
  } else {
    ok = overflow == 0 && s >= 0 &&
         (bytes == 8 || (unsigned long long)s < (1ull << (8 * bytes)));
    u = (unsigned long long)s;
  }
  if (!ok) {
    PyErr_Format(PyExc_OverflowError, "fill value %R is out of range for %s", iv, info->name);
    Py_DECREF(iv);
    return -1;
  }
  Py_DECREF(iv);
  for (unsigned i = 0; i < bytes; i++) out[i] = (uint8_t)(u >> (8 * i)); /* little-endian */
  return 0;
}

/* Fills nbytes (a multiple of isz) at dst with copies of the isz-byte element
 * at elem; isz divides 16. One byte repeated is a memset; any other pattern
 * is stored 16 bytes at a time from registers: the buffer is only written,
 * never read back (a doubling memcpy reads as much as it writes). */
static void fill_pattern(uint8_t *dst, uint64_t nbytes, const uint8_t *elem, unsigned isz) {
  uint8_t pat[16];
  bool uniform = true;
  for (unsigned i = 0; i < 16; i++) {
    pat[i] = elem[i % isz];
    uniform = uniform && pat[i] == pat[0];
  }
  if (uniform) {
    memset(dst, pat[0], (size_t)nbytes);
    return;
  }
  uint64_t w0, w1;
  memcpy(&w0, pat, 8);
  memcpy(&w1, pat + 8, 8);
  uint64_t n16 = nbytes / 16u;
  uint8_t *p = dst;
  for (uint64_t i = 0; i < n16; i++, p += 16) {
    memcpy(p, &w0, 8);
    memcpy(p + 8, &w1, 8);
  }
  memcpy(p, pat, (size_t)(nbytes - 16u * n16));
}

/* How the buffer is filled. */
typedef enum { FILL_NONE, FILL_ZERO, FILL_ONE, FILL_VALUE } FillKind;

static PyObject *create(PyObject *m, const char *fname, FillKind kind, PyObject *shapeobj,
                        PyObject *value, PyObject *dtobj, PyObject *devobj) {
  HrpyState *st = hrpy_state_of_module(m);
  uint8_t tag = HURRAY_DTYPE_FLOAT64;
  if (dtobj != NULL && dtobj != Py_None) {
    if (hrpy_dtype_converter(st, dtobj, &tag) < 0) return NULL;
  } else if (kind == FILL_VALUE) {
    /* As NumPy: the fill value's Python type chooses the default. */
    if (PyBool_Check(value)) {
      tag = HURRAY_DTYPE_BOOL;
    } else if (PyLong_Check(value)) {
      tag = HURRAY_DTYPE_INT64;
    } else if (PyComplex_Check(value)) {
      tag = HURRAY_DTYPE_COMPLEX128;
    }
  }
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, shapeobj, shape, &rank, fname) < 0) return NULL;
  for (uint32_t i = 0; i < rank; i++) {
    if (shape[i] == HURRAY_DYNAMIC_DIM) {
      return hrpy_raise(st->InvalidDescriptorError,
                       "%s: shape[%u] is dynamic (None); %s allocates a buffer, which needs "
                       "every extent",
                       fname, (unsigned)i, fname);
    }
  }
  PyObject *device = st->cpu;
  if (devobj != NULL && devobj != Py_None) {
    if (!hrpy_device_check(st, devobj)) {
      return PyErr_Format(PyExc_TypeError, "%s: device must be a hurray.Device, not %.100s",
                          fname, Py_TYPE(devobj)->tp_name);
    }
    if (hrpy_device_tag(devobj) != HURRAY_DEVICE_CPU) {
      return hrpy_raise(st->UnsupportedError,
                       "%s: this module allocates host memory only; got %R", fname, devobj);
    }
    device = devobj;
  }
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  if (info == NULL) {
    return hrpy_raise(st->UnsupportedError, "%s: a private type cannot be allocated by tag",
                     fname);
  }
  bool fillable = info->tier == 1 || tag == HURRAY_DTYPE_COMPLEX64 ||
                  tag == HURRAY_DTYPE_COMPLEX128;
  if (kind == FILL_ZERO && tag == HURRAY_DTYPE_FLOAT8_E8M0) {
    return hrpy_raise(st->UnsupportedError, "%s: float8_e8m0 has no zero", fname);
  }
  if ((kind == FILL_ONE || kind == FILL_VALUE) && !fillable) {
    return hrpy_raise(st->UnsupportedError,
                     "%s: %s values cannot be encoded here (Tier 1 types and complex only)",
                     fname, info->name);
  }
  uint64_t count, nbytes;
  if (!hrpy_element_count(rank, shape, &count) ||
      hurray_buffer_size_bytes(tag, count, &nbytes) != HURRAY_OK) {
    return hrpy_raise(st->InvalidDescriptorError, "%s: the shape's size overflows 64 bits",
                     fname);
  }
  HrpyBuffer b;
  memset(&b, 0, sizeof b);
  uint8_t elem[16];
  unsigned isz = info->bit_width >= 8 ? info->bit_width / 8u : 0;
  if (kind == FILL_ONE || kind == FILL_VALUE) {
    if (tag == HURRAY_DTYPE_BOOL) {
      int truth = 1;
      if (kind == FILL_VALUE && (truth = PyObject_IsTrue(value)) < 0) return NULL;
      elem[0] = truth ? 0xFF : 0x00;
      isz = 1;
    } else if (kind == FILL_ONE) {
      PyObject *one = PyLong_FromLong(1);
      if (one == NULL) return NULL;
      int rc = encode_value(st, tag, one, elem);
      Py_DECREF(one);
      if (rc < 0) return NULL;
    } else if (encode_value(st, tag, value, elem) < 0) {
      return NULL;
    }
  }
  /* Sub-byte padding bits must be zero, so empty() zeroes those buffers. */
  b.owned = hrpy_alloc_buffer(nbytes, kind == FILL_ZERO || (kind == FILL_NONE && info->bit_width < 8));
  if (b.owned == NULL) return NULL;
  b.data = b.owned;
  b.size = nbytes;
  if ((kind == FILL_ONE || kind == FILL_VALUE) && nbytes > 0) {
    uint64_t fill = tag == HURRAY_DTYPE_BOOL ? nbytes : count * isz;
    if (fill >= HRPY_NOGIL_FILL_BYTES) {
      Py_BEGIN_ALLOW_THREADS fill_pattern(b.data, fill, elem, isz);
      Py_END_ALLOW_THREADS
    } else {
      fill_pattern(b.data, fill, elem, isz);
    }
    if (tag == HURRAY_DTYPE_BOOL && (count % 8u) != 0) {
      /* padding bits of the last byte are zero */
      b.data[nbytes - 1] = (uint8_t)(b.data[nbytes - 1] & ((1u << (count % 8u)) - 1u));
    }
  }
  return hrpy_tensor_new_dense(st, tag, rank, shape, HURRAY_LAYOUT_ROW_MAJOR, device, &b, fname);
}

static const char *const shape_names[] = {"shape", "dtype", "device", NULL};

PyObject *hrpy_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[3];
  if (hrpy_parse_args("zeros", args, nargs, kwnames, shape_names, 1, 1, a) < 0) return NULL;
  return create(m, "zeros", FILL_ZERO, a[0], NULL, a[1], a[2]);
}

PyObject *hrpy_ones(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[3];
  if (hrpy_parse_args("ones", args, nargs, kwnames, shape_names, 1, 1, a) < 0) return NULL;
  return create(m, "ones", FILL_ONE, a[0], NULL, a[1], a[2]);
}

PyObject *hrpy_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *a[3];
  if (hrpy_parse_args("empty", args, nargs, kwnames, shape_names, 1, 1, a) < 0) return NULL;
  return create(m, "empty", FILL_NONE, a[0], NULL, a[1], a[2]);
}

PyObject *hrpy_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"shape", "fill_value", "dtype", "device", NULL};
  PyObject *a[4];
  if (hrpy_parse_args("full", args, nargs, kwnames, names, 2, 2, a) < 0) return NULL;
  return create(m, "full", FILL_VALUE, a[0], a[1], a[2], a[3]);
}
