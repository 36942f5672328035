/* The element codec's public functions (include/hurray/convert.h): the
 * internal/convert.h kernels, called once per value or over a run. */
#include "hurray/convert.h"

#include "hurray/dtype.h"
#include "internal/common.h"
#include "internal/convert.h"

/* ---- scalars -------------------------------------------------------------------- */

float hurray_float16_to_float(uint16_t code) { return hurray__f16_to_f32(code); }

uint16_t hurray_float16_from_float(float value) { return hurray__f16_from_f32(value); }

uint16_t hurray_float16_from_double(double value) {
  HurrayNarrow m;
  (void)hurray__narrow_of(HURRAY_DTYPE_FLOAT16, &m);
  return (uint16_t)hurray__narrow_encode(&m, value, false);
}

float hurray_bfloat16_to_float(uint16_t code) { return hurray__bf16_to_f32(code); }

uint16_t hurray_bfloat16_from_float(float value) { return hurray__bf16_from_f32(value); }

static float f8_to_float(uint8_t tag, uint8_t code) {
  HurrayNarrow m = {0}; /* set by narrow_of for every float8 tag; GCC -O1 cannot tell */
  (void)hurray__narrow_of(tag, &m);
  return hurray__narrow_to_f32(&m, code);
}

static uint8_t f8_from_double(uint8_t tag, double value, uint32_t flags) {
  HurrayNarrow m = {0}; /* set by narrow_of for every float8 tag; GCC -O1 cannot tell */
  (void)hurray__narrow_of(tag, &m);
  return (uint8_t)hurray__narrow_encode(&m, value, (flags & HURRAY_CONVERT_SATURATE) != 0);
}

float hurray_float8_e4m3_to_float(uint8_t code) {
  return f8_to_float(HURRAY_DTYPE_FLOAT8_E4M3, code);
}

uint8_t hurray_float8_e4m3_from_float(float value, uint32_t flags) {
  return f8_from_double(HURRAY_DTYPE_FLOAT8_E4M3, hurray__f64_of_f32(value), flags);
}

float hurray_float8_e5m2_to_float(uint8_t code) {
  return f8_to_float(HURRAY_DTYPE_FLOAT8_E5M2, code);
}

uint8_t hurray_float8_e5m2_from_float(float value, uint32_t flags) {
  return f8_from_double(HURRAY_DTYPE_FLOAT8_E5M2, hurray__f64_of_f32(value), flags);
}

/* The largest finite value of its sign for an infinity (HURRAY_CONVERT_SATURATE
 * into float32 and float64); anything else as it is. */
static inline float sat_f32(float f) {
  uint32_t b = hurray__f32_bits(f);
  return (b & 0x7FFFFFFFu) == 0x7F800000u ? hurray__f32_from_bits((b & 0x80000000u) | 0x7F7FFFFFu)
                                           : f;
}
static inline double sat_f64(double v) {
  uint64_t b = hurray__f64_bits(v);
  return (b & ~(UINT64_C(1) << 63)) == UINT64_C(0x7FF0000000000000)
             ? hurray__f64_from_bits((b & (UINT64_C(1) << 63)) | UINT64_C(0x7FEFFFFFFFFFFFFF))
             : v;
}

/* ---- any float type ------------------------------------------------------------- */

HurrayStatus hurray_value_code_from_double(uint8_t type_tag, double value, uint32_t flags,
                                           uint64_t *out_code) {
  if (out_code == NULL) return HURRAY_ERR_NULL_POINTER;
  if (hurray_dtype_info(type_tag) == NULL) return HURRAY_ERR_INVALID_TYPE;
  if ((flags & ~HURRAY_CONVERT_SATURATE) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
  bool sat = (flags & HURRAY_CONVERT_SATURATE) != 0;
  uint64_t b = hurray__f64_bits(value), a = b & ~(UINT64_C(1) << 63);
  bool nan = a > UINT64_C(0x7FF0000000000000);
  HurrayNarrow m;
  if (hurray__narrow_of(type_tag, &m)) {
    if (nan && m.kind == HURRAY__NARROW_FINITE) return HURRAY_ERR_INVALID_ARGUMENT;
    *out_code = hurray__narrow_encode(&m, value, sat); /* float6, float4: saturating anyway */
    return HURRAY_OK;
  }
  switch (type_tag) {
    case HURRAY_DTYPE_FLOAT64:
      *out_code = hurray__f64_bits(sat && !nan ? sat_f64(value) : value);
      return HURRAY_OK;
    case HURRAY_DTYPE_FLOAT32: {
      uint32_t f;
      if (nan) /* quiet, with its sign and leading payload bits (from the bits) */
        f = (uint32_t)((b >> 63) << 31) | 0x7FC00000u | (uint32_t)((a >> 29) & 0x3FFFFFu);
      else
        f = hurray__f32_bits(sat ? sat_f32((float)value) : (float)value);
      *out_code = f;
      return HURRAY_OK;
    }
    case HURRAY_DTYPE_FLOAT8_E8M0: {
      /* exactly 2^k, -126 <= k <= 127 (codes 0x01 .. 0xFE; 0x00 and 0xFF are
       * reserved): a positive normal double of mantissa zero */
      int k = (int)(a >> 52) - 1023;
      if ((b >> 63) != 0 || (a & ((UINT64_C(1) << 52) - 1u)) != 0 || k < -126 || k > 127)
        return HURRAY_ERR_INVALID_ARGUMENT;
      *out_code = (uint64_t)(k + 127);
      return HURRAY_OK;
    }
    default:
      return HURRAY_ERR_UNSUPPORTED;
  }
}

/* ---- runs ----------------------------------------------------------------------- */

/* Element width in bytes of a type hurray_elements_convert takes, else 0. */
static unsigned run_width(uint8_t tag) {
  switch (tag) {
    case HURRAY_DTYPE_FLOAT8_E4M3:
    case HURRAY_DTYPE_FLOAT8_E5M2: return 1;
    case HURRAY_DTYPE_FLOAT16:
    case HURRAY_DTYPE_BFLOAT16: return 2;
    case HURRAY_DTYPE_FLOAT32: return 4;
    case HURRAY_DTYPE_FLOAT64: return 8;
    default: return 0;
  }
}

/* Host-order loads and stores at any alignment. */
static inline uint16_t ld_u16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline float ld_f32(const uint8_t *p) {
  float v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline double ld_f64(const uint8_t *p) {
  double v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* One element of a source type other than float64, as a float32 (exact). */
static inline float load_f32(uint8_t tag, const uint8_t *p) {
  HurrayNarrow m;
  switch (tag) {
    case HURRAY_DTYPE_FLOAT32: return ld_f32(p);
    case HURRAY_DTYPE_FLOAT16: return hurray__f16_to_f32(ld_u16(p));
    case HURRAY_DTYPE_BFLOAT16: return hurray__bf16_to_f32(ld_u16(p));
    case HURRAY_DTYPE_FLOAT8_E4M3:
      (void)hurray__narrow_of(HURRAY_DTYPE_FLOAT8_E4M3, &m);
      return hurray__narrow_to_f32(&m, p[0]);
    default:
      (void)hurray__narrow_of(HURRAY_DTYPE_FLOAT8_E5M2, &m);
      return hurray__narrow_to_f32(&m, p[0]);
  }
}

/* One element's exact value as a double (a NaN's bits kept). */
static inline double load_f64(uint8_t tag, const uint8_t *p) {
  return tag == HURRAY_DTYPE_FLOAT64 ? ld_f64(p) : hurray__f64_of_f32(load_f32(tag, p));
}

/* The code of v in a narrow destination type (a constant format per case,
 * so each folds to that format's code). */
static inline uint32_t encode_narrow(uint8_t tag, double v, bool sat) {
  HurrayNarrow m;
  switch (tag) {
    case HURRAY_DTYPE_FLOAT16:
      (void)hurray__narrow_of(HURRAY_DTYPE_FLOAT16, &m);
      return hurray__narrow_encode(&m, v, sat);
    case HURRAY_DTYPE_BFLOAT16:
      (void)hurray__narrow_of(HURRAY_DTYPE_BFLOAT16, &m);
      return hurray__narrow_encode(&m, v, sat);
    case HURRAY_DTYPE_FLOAT8_E4M3:
      (void)hurray__narrow_of(HURRAY_DTYPE_FLOAT8_E4M3, &m);
      return hurray__narrow_encode(&m, v, sat);
    default:
      (void)hurray__narrow_of(HURRAY_DTYPE_FLOAT8_E5M2, &m);
      return hurray__narrow_encode(&m, v, sat);
  }
}

/* The loop over a run, with the per-element work as an expression of `s`
 * (the source element) stored at `d`. */
#define RUN(STMT)                                                           \
  for (uint64_t i_ = 0; i_ < count; i_++, s += src_stride, d += dst_stride) { \
    STMT;                                                                   \
  }

/* Stores of host-order elements. */
static inline void st_u16(uint8_t *p, uint32_t v) {
  uint16_t h = (uint16_t)v;
  memcpy(p, &h, 2);
}
static inline void st_f32(uint8_t *p, float v) { memcpy(p, &v, 4); }
static inline void st_f64(uint8_t *p, double v) { memcpy(p, &v, 8); }

HurrayStatus hurray_elements_convert(uint8_t src_type, const void *src, int64_t src_stride,
                                     uint8_t dst_type, void *dst, int64_t dst_stride,
                                     uint64_t count, uint32_t flags) {
  if (hurray_dtype_info(src_type) == NULL || hurray_dtype_info(dst_type) == NULL)
    return HURRAY_ERR_INVALID_TYPE;
  if (run_width(src_type) == 0 || run_width(dst_type) == 0) return HURRAY_ERR_UNSUPPORTED;
  if ((flags & ~HURRAY_CONVERT_SATURATE) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
  if (count == 0) return HURRAY_OK;
  if (src == NULL || dst == NULL) return HURRAY_ERR_NULL_POINTER;
  bool sat = (flags & HURRAY_CONVERT_SATURATE) != 0;
  const uint8_t *s = (const uint8_t *)src;
  uint8_t *d = (uint8_t *)dst;
  /* One loop per case, so that each is a tight loop over one conversion.
   * Sources of at most 32 bits decode to a float32 exactly; float16 and
   * bfloat16 are rounded from it by the float32 kernels (the same bits as
   * from the double). */
  bool f64_src = src_type == HURRAY_DTYPE_FLOAT64;
  switch (sat ? 0 : dst_type) {
    case HURRAY_DTYPE_FLOAT32:
      if (f64_src) {
        RUN(st_f32(d, (float)ld_f64(s))) /* to nearest even; beyond float32 an infinity */
      } else if (src_type == HURRAY_DTYPE_FLOAT16) {
        RUN(st_f32(d, hurray__f16_to_f32(ld_u16(s))))
      } else if (src_type == HURRAY_DTYPE_BFLOAT16) {
        RUN(st_f32(d, hurray__bf16_to_f32(ld_u16(s))))
      } else {
        RUN(st_f32(d, load_f32(src_type, s)))
      }
      break;
    case HURRAY_DTYPE_FLOAT64:
      RUN(st_f64(d, load_f64(src_type, s)))
      break;
    case HURRAY_DTYPE_FLOAT16:
      if (f64_src) {
        RUN(st_u16(d, encode_narrow(HURRAY_DTYPE_FLOAT16, ld_f64(s), false)))
      } else {
        RUN(st_u16(d, hurray__f16_from_f32(load_f32(src_type, s))))
      }
      break;
    case HURRAY_DTYPE_BFLOAT16:
      if (f64_src) {
        RUN(st_u16(d, encode_narrow(HURRAY_DTYPE_BFLOAT16, ld_f64(s), false)))
      } else {
        RUN(st_u16(d, hurray__bf16_from_f32(load_f32(src_type, s))))
      }
      break;
    default: /* float8 destinations, and every saturating conversion */
      switch (dst_type) {
        case HURRAY_DTYPE_FLOAT32:
          RUN(st_f32(d, sat_f32(f64_src ? (float)ld_f64(s) : load_f32(src_type, s))))
          break;
        case HURRAY_DTYPE_FLOAT64:
          RUN(st_f64(d, sat_f64(load_f64(src_type, s))))
          break;
        case HURRAY_DTYPE_FLOAT16:
        case HURRAY_DTYPE_BFLOAT16:
          RUN(st_u16(d, encode_narrow(dst_type, load_f64(src_type, s), sat)))
          break;
        default:
          RUN(d[0] = (uint8_t)encode_narrow(dst_type, load_f64(src_type, s), sat))
          break;
      }
      break;
  }
  return HURRAY_OK;
}
