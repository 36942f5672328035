/* Element values: codes, packing and conversion to double (include/hurray/values.h;
 * spec: element-types.md). */
#include <math.h>

#include "hurray/values.h"
#include "internal/common.h"
#include "internal/convert.h"

/* ---- locating an element ------------------------------------------------------ */

/* Bit width of a named tag with a code (<= 64 bits), or 0. Sets *status. */
static unsigned code_width(uint8_t tag, HurrayStatus *status) {
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  if (info == NULL) {
    *status = HURRAY_ERR_INVALID_TYPE;
    return 0;
  }
  if (info->bit_width > 64) {
    *status = HURRAY_ERR_UNSUPPORTED;
    return 0;
  }
  *status = HURRAY_OK;
  return info->bit_width;
}

/* Where element `index` of a `bits`-wide type lives: the first byte, how many
 * bytes to touch, and the bit shift inside the little-endian word they form.
 * Returns false when the element is not wholly inside `size` bytes. */
static bool locate(unsigned bits, uint64_t size, uint64_t index, uint64_t *byte,
                   unsigned *nbytes, unsigned *shift) {
  if (bits == 6) {
    uint64_t group = index / 4;
    if (group > UINT64_MAX / 3) return false;
    *byte = group * 3;
    *nbytes = 3;
    *shift = (unsigned)(index % 4) * 6;
  } else if (bits < 8) {
    uint64_t per_byte = 8u / bits;
    *byte = index / per_byte;
    *nbytes = 1;
    *shift = (unsigned)(index % per_byte) * bits;
  } else {
    uint64_t width = bits / 8u;
    if (hurray__mul_overflow_u64(index, width, byte)) return false;
    *nbytes = (unsigned)width;
    *shift = 0;
  }
  return *byte < size && size - *byte >= *nbytes;
}

static uint64_t load_le(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8u * i);
  return v;
}

static void store_le(uint8_t *p, unsigned n, uint64_t v) {
  for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8u * i));
}

static uint64_t width_mask(unsigned bits) {
  return bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1u);
}

HurrayStatus hurray_value_get_code(uint8_t tag, const void *data, uint64_t size, uint64_t index,
                                   uint64_t *out_code) {
  if (out_code == NULL || (data == NULL && size > 0)) return HURRAY_ERR_NULL_POINTER;
  HurrayStatus st;
  unsigned bits = code_width(tag, &st);
  if (st != HURRAY_OK) return st;
  uint64_t byte;
  unsigned nbytes, shift;
  if (!locate(bits, size, index, &byte, &nbytes, &shift)) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  uint64_t word = load_le((const uint8_t *)data + byte, nbytes);
  *out_code = (word >> shift) & width_mask(bits);
  return HURRAY_OK;
}

HurrayStatus hurray_value_set_code(uint8_t tag, void *data, uint64_t size, uint64_t index,
                                   uint64_t code) {
  if (data == NULL && size > 0) return HURRAY_ERR_NULL_POINTER;
  HurrayStatus st;
  unsigned bits = code_width(tag, &st);
  if (st != HURRAY_OK) return st;
  if ((code & ~width_mask(bits)) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
  uint64_t byte;
  unsigned nbytes, shift;
  if (!locate(bits, size, index, &byte, &nbytes, &shift)) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  uint8_t *p = (uint8_t *)data + byte;
  uint64_t mask = width_mask(bits) << shift;
  uint64_t word = load_le(p, nbytes);
  word = (word & ~mask) | (code << shift);
  store_le(p, nbytes, word);
  return HURRAY_OK;
}

/* ---- float types ---------------------------------------------------------------- */

/* A NaN of the given sign whose payload starts with `payload` (of `pbits` bits),
 * built as a double bit pattern; the quiet bit is set so the value is usable. */
static double make_nan(bool negative, uint64_t payload, unsigned pbits) {
  uint64_t frac = pbits == 0 ? 0 : (payload << (52u - pbits)) & (((uint64_t)1 << 52) - 1u);
  uint64_t b = ((uint64_t)negative << 63) | ((uint64_t)0x7FF << 52) | ((uint64_t)1 << 51) | frac;
  return hurray__f64_from_bits(b);
}

/* The value of a code of a float type narrower than float32 (the codec's
 * exact float32, widened); a NaN from the bits, with its sign and the
 * leading bits of its payload, quiet. */
static double narrow_value(uint8_t tag, uint64_t code) {
  HurrayNarrow m;
  if (!hurray__narrow_of(tag, &m)) return make_nan(false, 0, 0); /* not reached */
  uint32_t c = (uint32_t)code;
  if (hurray__narrow_is_nan(&m, c))
    return make_nan((c & hurray__narrow_sign(&m)) != 0, c & ((1u << m.mbits) - 1u), m.mbits);
  switch (tag) {
    case HURRAY_DTYPE_FLOAT16: return (double)hurray__f16_to_f32((uint16_t)c);
    case HURRAY_DTYPE_BFLOAT16: return (double)hurray__bf16_to_f32((uint16_t)c);
    default: return (double)hurray__narrow_to_f32(&m, c);
  }
}

HurrayStatus hurray_value_code_to_double(uint8_t tag, uint64_t code, double *out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  if (info == NULL) return HURRAY_ERR_INVALID_TYPE;
  if (info->bit_width > 64 || (info->flags & HURRAY_DTF_COMPLEX) != 0)
    return HURRAY_ERR_UNSUPPORTED;
  if ((code & ~width_mask(info->bit_width)) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
  switch (tag) {
    case HURRAY_DTYPE_FLOAT16:
    case HURRAY_DTYPE_BFLOAT16:
    case HURRAY_DTYPE_FLOAT8_E4M3:
    case HURRAY_DTYPE_FLOAT8_E5M2:
    case HURRAY_DTYPE_FLOAT4_E2M1:
    case HURRAY_DTYPE_FLOAT6_E2M3:
    case HURRAY_DTYPE_FLOAT6_E3M2:
      *out = narrow_value(tag, code);
      return HURRAY_OK;
    case HURRAY_DTYPE_FLOAT32: {
      float f = hurray__f32_from_bits((uint32_t)code);
      *out = isnan(f) ? make_nan((code >> 31) != 0, code & 0x7FFFFFu, 23) : (double)f;
      return HURRAY_OK;
    }
    case HURRAY_DTYPE_FLOAT64:
      *out = hurray__f64_from_bits(code);
      return HURRAY_OK;
    case HURRAY_DTYPE_INT8:
      *out = (double)(int8_t)(uint8_t)code;
      return HURRAY_OK;
    case HURRAY_DTYPE_INT16:
      *out = (double)(int16_t)(uint16_t)code;
      return HURRAY_OK;
    case HURRAY_DTYPE_INT32:
      *out = (double)(int32_t)(uint32_t)code;
      return HURRAY_OK;
    case HURRAY_DTYPE_INT64: {
      int64_t v;
      memcpy(&v, &code, sizeof v);
      *out = (double)v;
      return HURRAY_OK;
    }
    case HURRAY_DTYPE_UINT8:
    case HURRAY_DTYPE_UINT16:
    case HURRAY_DTYPE_UINT32:
    case HURRAY_DTYPE_UINT64:
    case HURRAY_DTYPE_BOOL:
    case HURRAY_DTYPE_UINT4:
    case HURRAY_DTYPE_UINT2:
      *out = (double)code;
      return HURRAY_OK;
    case HURRAY_DTYPE_INT4:
      *out = (double)((int)code - ((code & 0x8u) ? 16 : 0));
      return HURRAY_OK;
    case HURRAY_DTYPE_INT2:
      *out = (double)((int)code - ((code & 0x2u) ? 4 : 0));
      return HURRAY_OK;
    case HURRAY_DTYPE_FLOAT8_E8M0:
      if (code == 0x00u || code == 0xFFu) {
        *out = make_nan(false, 0, 0);
        return HURRAY_ERR_INVALID_ARGUMENT;
      }
      *out = (double)hurray__e8m0_to_f32((uint8_t)code);
      return HURRAY_OK;
    default:
      return HURRAY_ERR_UNSUPPORTED; /* not reached: every named tag is listed */
  }
}

/* ---- float128 ------------------------------------------------------------------- */

/* A 128-bit unsigned integer as two halves (portable; no __int128). */
typedef struct U128 {
  uint64_t hi, lo;
} U128;

static U128 shr128(U128 v, unsigned n) {
  U128 r;
  if (n == 0) return v;
  if (n >= 128) {
    r.hi = r.lo = 0;
  } else if (n >= 64) {
    r.hi = 0;
    r.lo = v.hi >> (n - 64);
  } else {
    r.hi = v.hi >> n;
    r.lo = (v.lo >> n) | (v.hi << (64 - n));
  }
  return r;
}

/* v mod 2^n compared with 2^(n-1): -1 below, 0 equal, +1 above (1 <= n <= 128). */
static int cmp_half(U128 v, unsigned n) {
  U128 rem = v;
  if (n < 128) {
    if (n >= 64) {
      rem.hi &= width_mask(n - 64);
    } else {
      rem.hi = 0;
      rem.lo &= width_mask(n);
    }
  }
  U128 half = {0, 0};
  if (n - 1 >= 64) {
    half.hi = (uint64_t)1 << (n - 1 - 64);
  } else {
    half.lo = (uint64_t)1 << (n - 1);
  }
  if (rem.hi != half.hi) return rem.hi < half.hi ? -1 : 1;
  if (rem.lo != half.lo) return rem.lo < half.lo ? -1 : 1;
  return 0;
}

double hurray_float128_to_double(const uint8_t *b) {
  uint64_t lo = hurray__ld64(b);
  uint64_t hi = hurray__ld64(b + 8);
  bool neg = (hi >> 63) != 0;
  unsigned exp = (unsigned)((hi >> 48) & 0x7FFFu);
  U128 sig = {hi & 0xFFFFFFFFFFFFull, lo}; /* 112-bit fraction */
  if (exp == 0x7FFFu) {
    if (sig.hi == 0 && sig.lo == 0) return neg ? -HUGE_VAL : HUGE_VAL;
    return make_nan(neg, sig.hi >> 44, 4); /* keep the leading payload bits */
  }
  int e; /* value = sig * 2^(e - 112) */
  if (exp == 0) {
    if (sig.hi == 0 && sig.lo == 0) return neg ? -0.0 : 0.0;
    e = 1 - 16383;
  } else {
    sig.hi |= (uint64_t)1 << 48;
    e = (int)exp - 16383;
  }
  /* Precision available in a double at this exponent: 53 bits for normals,
   * fewer below 2^-1022. The significand has 113 bits (bit 112 = 2^e). */
  int p = 53;
  if (e < -1022) p = 53 - (-1022 - e);
  if (p < 0) return neg ? -0.0 : 0.0; /* below half the smallest subnormal */
  unsigned shift = (unsigned)(113 - p); /* 60 .. 113 */
  U128 q = shr128(sig, shift);
  int c = cmp_half(sig, shift);
  uint64_t r = q.lo; /* q < 2^53 */
  if (c > 0 || (c == 0 && (r & 1u) != 0)) r++;
  double v = ldexp((double)r, e - 112 + (int)shift);
  return neg ? -v : v;
}

HurrayStatus hurray_value_get(uint8_t tag, const void *data, uint64_t size, uint64_t index,
                              double *out_real, double *out_imag) {
  if (out_real == NULL || (data == NULL && size > 0)) return HURRAY_ERR_NULL_POINTER;
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  if (info == NULL) return HURRAY_ERR_INVALID_TYPE;
  if (out_imag != NULL) *out_imag = 0.0;
  if (tag == HURRAY_DTYPE_FLOAT128 || tag == HURRAY_DTYPE_COMPLEX128 ||
      tag == HURRAY_DTYPE_COMPLEX64) {
    uint64_t width = info->bit_width / 8u, byte;
    if (hurray__mul_overflow_u64(index, width, &byte) || byte >= size || size - byte < width)
      return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
    const uint8_t *p = (const uint8_t *)data + byte;
    if (tag == HURRAY_DTYPE_FLOAT128) {
      *out_real = hurray_float128_to_double(p);
    } else if (tag == HURRAY_DTYPE_COMPLEX64) {
      HURRAY_TRY(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT32, hurray__ld32(p), out_real));
      if (out_imag != NULL)
        HURRAY_TRY(hurray_value_code_to_double(HURRAY_DTYPE_FLOAT32, hurray__ld32(p + 4),
                                               out_imag));
    } else {
      *out_real = hurray__f64_from_bits(hurray__ld64(p));
      if (out_imag != NULL) *out_imag = hurray__f64_from_bits(hurray__ld64(p + 8));
    }
    return HURRAY_OK;
  }
  uint64_t code;
  HURRAY_TRY(hurray_value_get_code(tag, data, size, index, &code));
  return hurray_value_code_to_double(tag, code, out_real);
}

/* ---- runs of elements ------------------------------------------------------------ */

/* The code of element i of a packed run of a type of at most 8 bits. */
static inline uint32_t small_code(const uint8_t *p, unsigned bits, uint64_t i) {
  if (bits == 8) return p[i];
  if (bits == 6) {
    const uint8_t *g = p + (i / 4u) * 3u;
    uint32_t w = (uint32_t)g[0] | ((uint32_t)g[1] << 8) | ((uint32_t)g[2] << 16);
    return (w >> ((unsigned)(i % 4u) * 6u)) & 63u;
  }
  unsigned per = 8u / bits;
  return ((uint32_t)p[i / per] >> ((unsigned)(i % per) * bits)) & ((1u << bits) - 1u);
}

/* What both run functions check first; *info the type's entry. */
static HurrayStatus run_check(uint8_t tag, const void *src, uint64_t src_size, uint64_t count,
                              const void *dst, const HurrayDtypeInfo **info) {
  *info = hurray_dtype_info(tag);
  if (*info == NULL) return HURRAY_ERR_INVALID_TYPE;
  if (count == 0) return HURRAY_OK;
  if (src == NULL || dst == NULL) return HURRAY_ERR_NULL_POINTER;
  uint64_t need = 0;
  if (hurray_buffer_size_bytes(tag, count, &need) != HURRAY_OK) return HURRAY_ERR_INVALID_ARGUMENT;
  return src_size < need ? HURRAY_ERR_BUFFER_TOO_SMALL : HURRAY_OK;
}

HurrayStatus hurray_elements_to_double(uint8_t tag, const void *src, uint64_t src_size,
                                       uint64_t count, double *dst, uint64_t *out_reserved) {
  const HurrayDtypeInfo *info;
  HURRAY_TRY(run_check(tag, src, src_size, count, dst, &info));
  if ((info->flags & HURRAY_DTF_COMPLEX) != 0) return HURRAY_ERR_UNSUPPORTED;
  const uint8_t *p = src;
  unsigned bits = info->bit_width;
  uint64_t reserved = 0;
  if (tag == HURRAY_DTYPE_FLOAT128) {
    for (uint64_t i = 0; i < count; i++) dst[i] = hurray_float128_to_double(p + i * 16u);
  } else if (bits <= 8) {
    /* every code's value once (the reserved e8m0 codes are NaN), then a lookup */
    double table[256];
    for (uint32_t c = 0; c < (1u << bits); c++) {
      HurrayStatus st = hurray_value_code_to_double(tag, c, &table[c]);
      (void)st; /* only the reserved e8m0 codes fail, with NaN written */
    }
    bool e8m0 = tag == HURRAY_DTYPE_FLOAT8_E8M0;
    for (uint64_t i = 0; i < count; i++) {
      uint32_t c = small_code(p, bits, i);
      dst[i] = table[c];
      if (e8m0 && (c == 0x00u || c == 0xFFu)) reserved++;
    }
  } else {
    unsigned width = bits / 8u;
    for (uint64_t i = 0; i < count; i++) {
      HurrayStatus st = hurray_value_code_to_double(tag, load_le(p + i * width, width), &dst[i]);
      (void)st; /* cannot fail: a named real type, a code of its width */
    }
  }
  if (out_reserved != NULL) *out_reserved = reserved;
  return HURRAY_OK;
}

HurrayStatus hurray_elements_unpack(uint8_t tag, const void *src, uint64_t src_size,
                                    uint64_t count, uint8_t *dst) {
  const HurrayDtypeInfo *info;
  HURRAY_TRY(run_check(tag, src, src_size, count, dst, &info));
  unsigned bits = info->bit_width;
  if (bits > 8) return HURRAY_ERR_UNSUPPORTED;
  const uint8_t *p = src;
  bool is_signed = tag == HURRAY_DTYPE_INT8 || tag == HURRAY_DTYPE_INT4 || tag == HURRAY_DTYPE_INT2;
  uint32_t sign = 1u << (bits - 1u), extend = 0xFFu & ~((1u << bits) - 1u);
  for (uint64_t i = 0; i < count; i++) {
    uint32_t c = small_code(p, bits, i);
    if (is_signed && (c & sign) != 0) c |= extend;
    dst[i] = (uint8_t)c;
  }
  return HURRAY_OK;
}
