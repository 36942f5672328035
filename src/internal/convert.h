/*
 * The element codec: conversions between float32 / float64 and the narrow
 * float element types (float16, bfloat16, float8_e4m3, float8_e5m2,
 * float6_e2m3, float6_e3m2, float4_e2m1). Never installed.
 *
 * The one place these conversions are written: the public functions
 * (hurray/convert.h, src/core/convert.c), the element values
 * (src/core/values.c), the quantization kernels (src/quant/) and, through the
 * public functions, the Python extension use them. static inline, so that a
 * kernel's inner loop makes no call per element.
 *
 * Rounding is to nearest, ties to even, computed on the bits (no
 * floating-point rounding happens before the one to the target format).
 * Decoding is exact: every value of these types is a float32.
 */
#ifndef HURRAY_INTERNAL_CONVERT_H
#define HURRAY_INTERNAL_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/dtype.h"
#include "internal/common.h"

/* The encoders below fold to the code of one format when their format is a
 * constant (hurray__narrow_of of a constant tag): inlined, always. */
#if defined(__GNUC__) || defined(__clang__)
#define HURRAY__CODEC_INLINE static inline __attribute__((always_inline))
#else
#define HURRAY__CODEC_INLINE static inline
#endif

/* ---- float16 / bfloat16 <-> float32 ------------------------------------------------- */

/* IEEE binary16 to float32 (exact; a NaN keeps its sign and payload bits). */
static inline float hurray__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  if (exp == 0x1F) return hurray__f32_from_bits(sign | 0x7F800000u | (man << 13));
  if (exp != 0) return hurray__f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
  /* zero or subnormal: man * 2^-24, exact in float32 */
  float v = (float)man * 0x1p-24f;
  return sign != 0 ? -v : v;
}

/* float32 to binary16, round to nearest even; beyond 65504 (65520 and up
 * round past it) an infinity; NaN a quiet NaN with its sign and the leading
 * payload bits. The same code as hurray__narrow_encode(float16, f) for every
 * float32 (tests/c/test_convert.c), without the double arithmetic. */
static inline uint16_t hurray__f16_from_f32(float f) {
  uint32_t b = hurray__f32_bits(f);
  uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
  uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) /* inf or NaN */
    return (uint16_t)(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u | ((a >> 13) & 0x3FFu) : 0u));
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* rounds past 65504 */
  if (a < 0x38800000u) {                                     /* below 2^-14: subnormal */
    if (a < 0x33000000u) return sign;                        /* below 2^-25: zero */
    uint32_t man = (a & 0x7FFFFFu) | 0x800000u;
    unsigned shift = 126u - (a >> 23); /* 14 .. 24 for exponents -15 .. -25 */
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u) != 0)) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t v = a - 0x38000000u; /* rebias the exponent (127 -> 15) */
  uint32_t q = v >> 13, rem = v & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u) != 0)) q++;
  return (uint16_t)(sign | q);
}

/* bfloat16 to float32: the high half of its bits (exact). */
static inline float hurray__bf16_to_f32(uint16_t h) {
  return hurray__f32_from_bits((uint32_t)h << 16);
}

/* float32 to bfloat16, round to nearest even (a carry out of the largest
 * finite value gives the infinity); NaN a quiet NaN with its sign and the
 * leading payload bits. */
static inline uint16_t hurray__bf16_from_f32(float f) {
  uint32_t b = hurray__f32_bits(f);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((b >> 16) | 0x40u);
  b += 0x7FFFu + ((b >> 16) & 1u);
  return (uint16_t)(b >> 16);
}

/* A float32 widened to a double, a NaN's sign and payload bits kept as bits
 * (a conversion may quiet or replace a NaN on some hosts). */
static inline double hurray__f64_of_f32(float f) {
  uint32_t b = hurray__f32_bits(f);
  if ((b & 0x7FFFFFFFu) <= 0x7F800000u) return (double)f;
  return hurray__f64_from_bits(((uint64_t)(b >> 31) << 63) | (UINT64_C(0x7FF) << 52) |
                               ((uint64_t)(b & 0x7FFFFFu) << 29));
}

/* ---- narrow formats in general ---------------------------------------------------------- */

/* What the all-ones exponent of a format means. */
typedef enum HurrayNarrowKind {
  HURRAY__NARROW_IEEE = 0,  /* infinities and NaNs (float16, bfloat16, float8_e5m2) */
  HURRAY__NARROW_FN = 1,    /* ordinary numbers but S.1111.111, the one NaN; no infinity
                               (OCP float8_e4m3, "fn") */
  HURRAY__NARROW_FINITE = 2 /* ordinary numbers: no infinity, no NaN (OCP MX float6 / float4) */
} HurrayNarrowKind;

/* A narrow float format: exponent and mantissa widths, bias, the code of the
 * largest finite magnitude, the exponent of that magnitude (emax of the OCP
 * MX specification) and the meaning of the all-ones exponent. */
typedef struct HurrayNarrow {
  unsigned ebits, mbits;
  int bias;
  uint32_t max_mag;
  int emax;
  HurrayNarrowKind kind;
} HurrayNarrow;

/* The format of a float type narrower than float32; false for any other tag
 * (float8_e8m0, a scale type without sign or mantissa, included). */
HURRAY__CODEC_INLINE bool hurray__narrow_of(uint8_t tag, HurrayNarrow *m) {
  switch (tag) {
    case HURRAY_DTYPE_FLOAT16: /* 65504 */
      *m = (HurrayNarrow){5, 10, 15, 0x7BFFu, 15, HURRAY__NARROW_IEEE};
      return true;
    case HURRAY_DTYPE_BFLOAT16: /* 3.39e38 */
      *m = (HurrayNarrow){8, 7, 127, 0x7F7Fu, 127, HURRAY__NARROW_IEEE};
      return true;
    case HURRAY_DTYPE_FLOAT8_E4M3: /* 448 */
      *m = (HurrayNarrow){4, 3, 7, 0x7Eu, 8, HURRAY__NARROW_FN};
      return true;
    case HURRAY_DTYPE_FLOAT8_E5M2: /* 57344 */
      *m = (HurrayNarrow){5, 2, 15, 0x7Bu, 15, HURRAY__NARROW_IEEE};
      return true;
    case HURRAY_DTYPE_FLOAT4_E2M1: /* 6 */
      *m = (HurrayNarrow){2, 1, 1, 0x7u, 2, HURRAY__NARROW_FINITE};
      return true;
    case HURRAY_DTYPE_FLOAT6_E2M3: /* 7.5 */
      *m = (HurrayNarrow){2, 3, 1, 0x1Fu, 2, HURRAY__NARROW_FINITE};
      return true;
    case HURRAY_DTYPE_FLOAT6_E3M2: /* 28 */
      *m = (HurrayNarrow){3, 2, 3, 0x1Fu, 4, HURRAY__NARROW_FINITE};
      return true;
    default:
      return false;
  }
}

/* m / 2^sh rounded to nearest, ties to even (1 <= sh <= 63). */
HURRAY__CODEC_INLINE uint64_t hurray__rne_shift(uint64_t m, unsigned sh) {
  uint64_t q = m >> sh, rem = m & ((UINT64_C(1) << sh) - 1u), half = UINT64_C(1) << (sh - 1u);
  return q + ((uint64_t)(rem > half) | ((uint64_t)(rem == half) & q & 1u)); /* no branch */
}

/* The code of the sign bit, and of the magnitude that stands for an overflow
 * (an infinity, the NaN of an "fn" format; the largest finite value when
 * saturating or when the format has neither). */
HURRAY__CODEC_INLINE uint32_t hurray__narrow_sign(const HurrayNarrow *m) {
  return 1u << (m->ebits + m->mbits);
}
HURRAY__CODEC_INLINE uint32_t hurray__narrow_overflow(const HurrayNarrow *m, bool saturate) {
  if (saturate) return m->max_mag;
  switch (m->kind) {
    case HURRAY__NARROW_IEEE: return ((1u << m->ebits) - 1u) << m->mbits;
    case HURRAY__NARROW_FN: return (1u << (m->ebits + m->mbits)) - 1u;
    default: return m->max_mag;
  }
}

/*
 * The code of a finite v, rounded to nearest, ties to even; the sign is
 * kept (a negative value that rounds to zero gives -0). A magnitude that
 * rounds beyond the largest finite one gives hurray__narrow_overflow: the
 * largest finite value when `saturate` (the OCP MX rule; for formats
 * without infinity and NaN always), else the infinity (IEEE formats) or
 * the NaN ("fn" formats). Integer arithmetic on the bits of v: no rounding
 * happens before the one to the target format (a subnormal double, far
 * below every format's smallest subnormal, gives a signed zero).
 */
HURRAY__CODEC_INLINE uint32_t hurray__narrow_encode_finite(const HurrayNarrow *m, double v,
                                                    bool saturate) {
  uint64_t b = hurray__f64_bits(v), a = b & ~(UINT64_C(1) << 63);
  uint32_t sign = (b >> 63) != 0 ? hurray__narrow_sign(m) : 0u;
  if (a == 0) return sign;
  int e = (int)(a >> 52) - 1023;                                       /* v = 1.f * 2^e */
  uint64_t M = (a & ((UINT64_C(1) << 52) - 1u)) | (UINT64_C(1) << 52); /* 53 bits */
  uint64_t mag;
  if (e >= 1 - m->bias) { /* a normal value of the target */
    if (e + m->bias > (int)(m->max_mag >> m->mbits)) {
      return sign | hurray__narrow_overflow(m, saturate);
    }
    /* M rounded to 1 + mbits bits: [2^mbits, 2^(mbits+1)], the leading one
     * standing for the exponent step, so a carry moves to the next binade */
    uint64_t r = hurray__rne_shift(M, 52u - m->mbits);
    mag = ((uint64_t)(e + m->bias - 1) << m->mbits) + r;
  } else { /* subnormal steps of 2^(1 - bias - mbits); 2^mbits steps is the smallest normal */
    int sh = 53 - (int)m->mbits - m->bias - e;
    mag = sh > 63 ? 0 : hurray__rne_shift(M, (unsigned)sh);
  }
  if (mag > m->max_mag) return sign | hurray__narrow_overflow(m, saturate);
  return sign | (uint32_t)mag;
}

/*
 * The code of any double v: hurray__narrow_encode_finite for a finite v; an
 * infinity gives the overflow code of its sign (the largest finite value
 * when saturating); a NaN keeps its sign and gives the format's NaN: for an
 * IEEE format a quiet NaN (the mantissa's top bit set) carrying the leading
 * payload bits of v, for an "fn" format S.1111.111. A format with no NaN
 * (float6, float4) gives the largest finite magnitude of the NaN's sign.
 */
HURRAY__CODEC_INLINE uint32_t hurray__narrow_encode(const HurrayNarrow *m, double v, bool saturate) {
  uint64_t b = hurray__f64_bits(v), a = b & ~(UINT64_C(1) << 63);
  uint32_t sign = (b >> 63) != 0 ? hurray__narrow_sign(m) : 0u;
  if (a < UINT64_C(0x7FF0000000000000)) return hurray__narrow_encode_finite(m, v, saturate);
  if (a == UINT64_C(0x7FF0000000000000)) return sign | hurray__narrow_overflow(m, saturate);
  switch (m->kind) {
    case HURRAY__NARROW_IEEE: {
      uint32_t quiet = 1u << (m->mbits - 1u);
      uint32_t payload = (uint32_t)((a & ((UINT64_C(1) << 52) - 1u)) >> (52u - m->mbits));
      return sign | (((1u << m->ebits) - 1u) << m->mbits) | quiet | payload;
    }
    case HURRAY__NARROW_FN: return sign | ((1u << (m->ebits + m->mbits)) - 1u);
    default: return sign | m->max_mag;
  }
}

/* Whether `code` is a NaN of the format. */
static inline bool hurray__narrow_is_nan(const HurrayNarrow *m, uint32_t code) {
  uint32_t mag = code & (hurray__narrow_sign(m) - 1u), emask = (1u << m->ebits) - 1u;
  switch (m->kind) {
    case HURRAY__NARROW_IEEE:
      return (mag >> m->mbits) == emask && (mag & ((1u << m->mbits) - 1u)) != 0;
    case HURRAY__NARROW_FN: return mag == hurray__narrow_sign(m) - 1u;
    default: return false;
  }
}

/* 2^k as a float32, for -149 <= k <= 127 (exact: a subnormal below -126). */
static inline float hurray__f32_pow2(int k) {
  return k >= -126 ? hurray__f32_from_bits((uint32_t)(k + 127) << 23)
                   : hurray__f32_from_bits(1u << (k + 149));
}

/*
 * The value of a code of a format of at most 8 exponent and 22 mantissa
 * bits as a float32 (exact). An infinity stays one; a NaN gives a quiet
 * float32 NaN with its sign and payload (the mantissa bits, at the top).
 */
static inline float hurray__narrow_to_f32(const HurrayNarrow *m, uint32_t code) {
  uint32_t sign = (code & hurray__narrow_sign(m)) != 0 ? 0x80000000u : 0u;
  uint32_t emask = (1u << m->ebits) - 1u;
  uint32_t exp = (code >> m->mbits) & emask, man = code & ((1u << m->mbits) - 1u);
  if (hurray__narrow_is_nan(m, code))
    return hurray__f32_from_bits(sign | 0x7FC00000u | (man << (23u - m->mbits)));
  if (m->kind == HURRAY__NARROW_IEEE && exp == emask)
    return hurray__f32_from_bits(sign | 0x7F800000u);
  float v;
  if (exp == 0) { /* zero or subnormal: man * 2^(1 - bias - mbits) */
    v = (float)man * hurray__f32_pow2(1 - m->bias - (int)m->mbits);
  } else {
    uint32_t e32 = (uint32_t)((int)exp - m->bias + 127);
    v = hurray__f32_from_bits((e32 << 23) | (man << (23u - m->mbits)));
  }
  return sign != 0 ? -v : v;
}

/* float8_e8m0 (a scale: 2^(code - 127), no sign, no mantissa) as a float32;
 * the reserved codes 0x00 and 0xFF give a NaN. */
static inline float hurray__e8m0_to_f32(uint8_t code) {
  if (code == 0x00u || code == 0xFFu) return hurray__f32_from_bits(0x7FC00000u);
  return hurray__f32_pow2((int)code - 127);
}

#endif /* HURRAY_INTERNAL_CONVERT_H */
