/*
 * Ranges of elements (include/hurray/convert.h, "ranges"): the numeric rules
 * of arange and linspace, computed as NumPy computes them so that the same
 * call gives the same bits, for the Python package's hurray.arange and
 * hurray.linspace and for any C caller.
 *
 * - arange (integers): element i is first + i * step modulo 2**bits.
 * - arange (floats): elements 0 and 1 are `first` and `second` converted to
 *   the type; element i >= 2 is e0 + i * (e1 - e0) in the type's arithmetic
 *   (float32 in float32; float16 and bfloat16 in float32, then rounded;
 *   float64 in float64). bfloat16 takes its doubles through float32 (two
 *   roundings, as NumPy's cast does).
 * - linspace: in float64, i * step + start with step = (stop - start) / div
 *   (div = n - 1 with the endpoint, n without; (i / div) * delta + start when
 *   step underflows to zero), the last element exactly stop with the
 *   endpoint, then converted to the type (integers: floor, then range check).
 */
#include "hurray/convert.h"

#include <math.h>
#include <string.h>

#include "hurray/dtype.h"
#include "internal/common.h"

/* Whether x is finite: x - x is 0 for finite x, NaN for inf and NaN (MinGW's
 * isfinite on a double warns under -Wfloat-conversion). */
static bool finite64(double x) { return x - x == 0.0; }

/* FP contraction would fuse i * step + start into one rounding (NumPy rounds
 * twice); the build is ISO C (GCC: contraction off); clang needs telling. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

typedef enum { K_INT, K_F16, K_BF16, K_F32, K_F64, K_C64, K_C128 } Kind;

/* The kind of `tag` and its element size in bytes; a status for the rest. */
static HurrayStatus kind_of(uint8_t tag, Kind *kind, unsigned *size, HurrayError *err) {
  switch (tag) {
    case HURRAY_DTYPE_FLOAT16: *kind = K_F16; *size = 2; break;
    case HURRAY_DTYPE_BFLOAT16: *kind = K_BF16; *size = 2; break;
    case HURRAY_DTYPE_FLOAT32: *kind = K_F32; *size = 4; break;
    case HURRAY_DTYPE_FLOAT64: *kind = K_F64; *size = 8; break;
    case HURRAY_DTYPE_COMPLEX64: *kind = K_C64; *size = 8; break;
    case HURRAY_DTYPE_COMPLEX128: *kind = K_C128; *size = 16; break;
    default: {
      const HurrayDtypeInfo *info = hurray_dtype_info(tag);
      if (info == NULL)
        return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "type_tag",
                            "0x%02x names no element type", tag);
      if ((info->flags & HURRAY_DTF_INT) != 0 && info->bit_width >= 8 &&
          info->bit_width % 8 == 0 && info->bit_width <= 64) {
        *kind = K_INT;
        *size = info->bit_width / 8u;
        break;
      }
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                          "a range of %s has no defined step (integer types of 8 to 64 "
                          "bits, float16, bfloat16, float32, float64, complex64 and "
                          "complex128 only)",
                          info->name);
    }
  }
  return HURRAY_OK;
}

/* kind_of, for a function that takes integers only, or no integer. */
static HurrayStatus kind_for(uint8_t tag, bool integers, Kind *kind, unsigned *size,
                             HurrayError *err) {
  HURRAY_TRY(kind_of(tag, kind, size, err));
  if (integers != (*kind == K_INT))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        integers ? "hurray_fill_arange_int takes an integer type"
                                 : "hurray_fill_arange_float takes a float or complex type");
  return HURRAY_OK;
}

/* dst has room for n elements of `size` bytes. */
static HurrayStatus room(void *dst, uint64_t dst_size, uint64_t n, unsigned size,
                         HurrayError *err) {
  if (n > 0 && dst == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "dst", "is NULL");
  if (n > dst_size / size)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "dst_size",
                        "%llu bytes, %llu elements of %u bytes need more",
                        (unsigned long long)dst_size, (unsigned long long)n, size);
  return HURRAY_OK;
}

static uint16_t bf16_of_double(double d) { return hurray_bfloat16_from_float((float)d); }

static void store_uint(uint8_t *p, unsigned size, uint64_t v) {
  for (unsigned b = 0; b < size; b++) p[b] = (uint8_t)(v >> (8 * b));
}

HurrayStatus hurray_fill_arange_int(uint8_t type_tag, uint64_t n, uint64_t first, uint64_t step,
                                    void *dst, uint64_t dst_size, HurrayError *err) {
  Kind kind = K_INT;
  unsigned size = 0; /* set by kind_of on success; GCC 15 -O3 cannot tell */
  HURRAY_TRY(kind_for(type_tag, true, &kind, &size, err));
  HURRAY_TRY(room(dst, dst_size, n, size, err));
  uint8_t *d = dst;
  uint64_t v = first;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  switch (size) {
    case 1:
      for (uint64_t i = 0; i < n; i++, v += step) d[i] = (uint8_t)v;
      return HURRAY_OK;
    case 2:
      for (uint64_t i = 0; i < n; i++, v += step) {
        uint16_t w = (uint16_t)v;
        memcpy(d + 2 * i, &w, 2);
      }
      return HURRAY_OK;
    case 4:
      for (uint64_t i = 0; i < n; i++, v += step) {
        uint32_t w = (uint32_t)v;
        memcpy(d + 4 * i, &w, 4);
      }
      return HURRAY_OK;
    default:
      break;
  }
#endif
  for (uint64_t i = 0; i < n; i++, v += step) store_uint(d + (uint64_t)size * i, size, v);
  return HURRAY_OK;
}

HurrayStatus hurray_fill_arange_float(uint8_t type_tag, uint64_t n, double first, double second,
                                      void *dst, uint64_t dst_size, HurrayError *err) {
  Kind kind = K_INT;
  unsigned size = 0; /* set by kind_of on success; GCC 15 -O3 cannot tell */
  HURRAY_TRY(kind_for(type_tag, false, &kind, &size, err));
  HURRAY_TRY(room(dst, dst_size, n, size, err));
  uint8_t *d = dst;
  if ((kind == K_C64 || kind == K_C128) && n > 0) memset(d, 0, (size_t)(n * size)); /* imaginary parts */
  switch (kind) {
    case K_F64:
    case K_C128: {
      double s = first, nx = second, delta = nx - s;
      if (n > 0) memcpy(d, &s, 8);
      if (n > 1) memcpy(d + size, &nx, 8);
      for (uint64_t i = 2; i < n; i++) {
        double prod = (double)i * delta;
        double v = s + prod;
        memcpy(d + (uint64_t)size * i, &v, 8);
      }
      break;
    }
    case K_F32:
    case K_C64: {
      float s = (float)first, nx = (float)second, delta = nx - s;
      if (n > 0) memcpy(d, &s, 4);
      if (n > 1) memcpy(d + size, &nx, 4);
      for (uint64_t i = 2; i < n; i++) {
        float prod = (float)i * delta;
        float v = s + prod;
        memcpy(d + (uint64_t)size * i, &v, 4);
      }
      break;
    }
    default: { /* float16, bfloat16: in float32, each element rounded */
      const bool half = kind == K_F16;
      uint16_t h0 = half ? hurray_float16_from_double(first) : bf16_of_double(first);
      uint16_t h1 = half ? hurray_float16_from_double(second) : bf16_of_double(second);
      float s = half ? hurray_float16_to_float(h0) : hurray_bfloat16_to_float(h0);
      float delta = (half ? hurray_float16_to_float(h1) : hurray_bfloat16_to_float(h1)) - s;
      if (n > 0) memcpy(d, &h0, 2);
      if (n > 1) memcpy(d + 2, &h1, 2);
      for (uint64_t i = 2; i < n; i++) {
        float prod = (float)i * delta;
        float v = s + prod;
        uint16_t h = half ? hurray_float16_from_float(v) : hurray_bfloat16_from_float(v);
        memcpy(d + 2 * i, &h, 2);
      }
      break;
    }
  }
  return HURRAY_OK;
}

/* Whether floor(y) fits the integer type. */
static bool fits(double y, const HurrayDtypeInfo *info) {
  const int bits = (int)info->bit_width;
  if ((info->flags & HURRAY_DTF_SIGNED) != 0) {
    double lim = ldexp(1.0, bits - 1); /* 2**(bits-1), exact */
    return y >= -lim && y < lim;
  }
  return y >= 0.0 && y < ldexp(1.0, bits);
}

HurrayStatus hurray_fill_linspace(uint8_t type_tag, uint64_t n, double start, double stop,
                                  bool endpoint, void *dst, uint64_t dst_size,
                                  double *out_bad, HurrayError *err) {
  if (out_bad != NULL) *out_bad = 0.0;
  Kind kind = K_INT;
  unsigned size = 0; /* set by kind_of on success; GCC 15 -O3 cannot tell */
  const HurrayDtypeInfo *info = hurray_dtype_info(type_tag);
  HURRAY_TRY(kind_of(type_tag, &kind, &size, err));
  if (!finite64(start) || !finite64(stop))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                        finite64(start) ? "stop" : "start", "must be finite");
  const double delta = stop - start;
  if (!finite64(delta))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "stop",
                        "stop - start overflows float64");
  HURRAY_TRY(room(dst, dst_size, n, size, err));
  const uint64_t div = endpoint ? (n > 0 ? n - 1 : 0) : n;
  const double divd = (double)div;
  const double step = div > 0 ? delta / divd : 0.0;
  const bool step_zero = div > 0 && step == 0.0;
  const bool is_signed = (info->flags & HURRAY_DTF_SIGNED) != 0;
  uint8_t *d = dst;
  if ((kind == K_C64 || kind == K_C128) && n > 0) memset(d, 0, (size_t)(n * size)); /* imaginary parts */
  /* integers: checked first, so nothing is written for a range that does not fit */
  for (uint64_t pass = kind == K_INT ? 0 : 1; pass < 2; pass++) {
    for (uint64_t i = 0; i < n; i++) {
      double y;
      if (div == 0) {
        y = (double)i * delta;
      } else if (step_zero) { /* the step underflowed: scale first */
        double f = (double)i / divd;
        y = f * delta;
      } else {
        y = (double)i * step;
      }
      y = y + start;
      if (endpoint && n > 1 && i == n - 1) y = stop;
      uint8_t *p = d + (uint64_t)size * i;
      switch (kind) {
        case K_F64:
        case K_C128:
          memcpy(p, &y, 8);
          break;
        case K_F32:
        case K_C64: {
          float f = (float)y;
          memcpy(p, &f, 4);
          break;
        }
        case K_F16:
        case K_BF16: {
          uint16_t h = kind == K_F16 ? hurray_float16_from_double(y) : bf16_of_double(y);
          memcpy(p, &h, 2);
          break;
        }
        case K_INT: {
          y = floor(y);
          if (pass == 0) {
            if (!fits(y, info)) {
              if (out_bad != NULL) *out_bad = y;
              return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "dst",
                                  "element %llu, %.17g, is out of range for %s",
                                  (unsigned long long)i, y, info->name);
            }
            break;
          }
          store_uint(p, size, is_signed ? (uint64_t)(int64_t)y : (uint64_t)y);
          break;
        }
      }
    }
  }
  return HURRAY_OK;
}
