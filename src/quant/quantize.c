/* Quantization of float32 values into a row- or column-major quantized tensor
 * (include/hurray/values.h; spec: quantization/\*.md). The inverse of
 * hurray_quant_dequantize_f32 (dequant.c); docs/reference/c-api/quant.md states how the
 * parameters are chosen and how values round.
 *
 * Two paths. Per-block, NF4 and MXFP along the last axis of a row-major
 * tensor (the usual weight layout) go block by block: the block's range,
 * its parameters, its codes, while the block is in cache. Everything else
 * takes two passes over the input in logical order (HqWalk): the range of
 * every parameter entry, then the codes. */
#include <float.h>
#include <stdio.h>

#include "hurray/values.h"
#include "quant/quant_kernels.h"

/* What the quantizer does with one element, by scheme. */
typedef enum { QM_AFFINE, QM_NF4, QM_MX_FLOAT, QM_MX_INT } QMode;

typedef struct QSpec {
  QMode mode;
  uint8_t scheme, type;
  unsigned bits;
  uint32_t mask;       /* (1 << bits) - 1 */
  bool symmetric;      /* affine */
  bool is_unsigned;    /* integer storage without a sign */
  int64_t qlo, qhi;    /* affine / MX int code range */
  uint8_t scale_tag;   /* stored scale type */
  uint32_t scale_width;
  HurrayNarrow mini;   /* MX float */
  int emax;            /* MX: exponent of the element type's largest magnitude */
  float nf4_mid[15];   /* NF4: midpoints between neighbouring levels */
} QSpec;

/* Parameters of one entry (scale index), as the kernels use them. */
typedef struct QParam {
  float a;   /* affine: 1/s; NF4: s (the absmax); MX: 2^-e */
  int32_t z; /* affine zero point */
} QParam;

/* Range of one entry's values (the general path's first pass). */
typedef struct QEntry {
  float mn, mx;
  QParam p;
} QEntry;

static void spec_init(const HurrayDescriptorFields *f, const HurrayQuantPlan *p, bool sym_tensor,
                      QSpec *s) {
  memset(s, 0, sizeof *s);
  s->scheme = f->quantization->scheme;
  s->type = f->type_tag;
  s->bits = hurray_dtype_info(f->type_tag)->bit_width;
  s->mask = s->bits >= 32 ? UINT32_MAX : (1u << s->bits) - 1u;
  s->scale_tag = p->scale_tag;
  s->scale_width = p->scale_width;
  int64_t lo = 0, hi = 0;
  bool is_int = hurray__quant_int_range(f->type_tag, &lo, &hi);
  s->is_unsigned = is_int && lo == 0;
  switch (s->scheme) {
    case HURRAY_QUANT_NF4: {
      s->mode = QM_NF4;
      const float *t = hurray_nf4_table();
      for (int k = 0; k < 15; k++) s->nf4_mid[k] = (t[k] + t[k + 1]) * 0.5f;
      break;
    }
    case HURRAY_QUANT_MXFP:
      if (hurray__narrow_of(f->type_tag, &s->mini)) { /* MXFP storage: an OCP MX float */
        s->mode = QM_MX_FLOAT;
        s->emax = s->mini.emax;
      } else { /* int8 / int4: the OCP MXINT8 reading, q * 2^-(bits-2) */
        s->mode = QM_MX_INT;
        s->qlo = lo;
        s->qhi = hi;
        s->emax = (int)s->bits - 2;
      }
      break;
    default:
      s->mode = QM_AFFINE;
      s->symmetric = s->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE ? sym_tensor : p->symmetric;
      if (s->symmetric && !s->is_unsigned) lo = -hi; /* [-qmax, qmax] */
      if (s->symmetric && s->is_unsigned) lo = 0;
      s->qlo = lo;
      s->qhi = hi;
      break;
  }
}

/* ---- errors -------------------------------------------------------------------------- */

static HurrayStatus bad_value(const QSpec *s, uint64_t i, float x, HurrayError *err) {
  char path[48];
  hurray__path(path, sizeof path, "in[%llu]", (unsigned long long)i);
  if (!isfinite(x))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, path,
                        "value %s cannot be quantized (NaN and infinities are refused)",
                        isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
  return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, path,
                      "value %g is negative: symmetric quantization to %s has zero point 0 and "
                      "holds only values >= 0 (quantize asymmetrically instead)",
                      (double)x, hurray_dtype_name(s->type));
}

/* Whether x is refused: NaN, an infinity, or below zero under a symmetric
 * unsigned scheme. */
static inline bool refused_bits(uint32_t b, bool no_negatives) {
  return (b & 0x7F800000u) == 0x7F800000u || (no_negatives && b > 0x80000000u);
}

static bool no_negatives(const QSpec *s) {
  return s->mode == QM_AFFINE && s->symmetric && s->is_unsigned;
}

/* First refused element of x[0 .. n), or n. */
static uint64_t first_refused(const QSpec *s, const float *x, uint64_t n) {
  bool nn = no_negatives(s);
  for (uint64_t i = 0; i < n; i++)
    if (refused_bits(hurray__f32_bits(x[i]), nn)) return i;
  return n;
}

/* ---- ranges ---------------------------------------------------------------------------- */

/* min and max of x[0 .. n) (n > 0); returns true when an element is refused
 * (then mn / mx are meaningless). Four lanes hide the compare latency; a NaN
 * or an infinity turns the lanes' sum of x * 0 into a NaN. */
static bool range_of(const QSpec *s, const float *x, uint64_t n, float *mn, float *mx) {
  float lo0 = x[0], hi0 = x[0], lo1 = x[0], hi1 = x[0];
  float z0 = 0.0f, z1 = 0.0f;
  uint64_t i = 0;
#ifdef HQ_SSE2
  if (n >= 8) {
    __m128 l0 = _mm_loadu_ps(x), h0 = l0, l1 = l0, h1 = l0, zz = _mm_setzero_ps();
    const __m128 zero = _mm_setzero_ps();
    for (; i + 8 <= n; i += 8) {
      __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4);
      l0 = _mm_min_ps(l0, a);
      h0 = _mm_max_ps(h0, a);
      l1 = _mm_min_ps(l1, b);
      h1 = _mm_max_ps(h1, b);
      zz = _mm_add_ps(zz, _mm_add_ps(_mm_mul_ps(a, zero), _mm_mul_ps(b, zero)));
    }
    float l[4], h[4], zl[4];
    _mm_storeu_ps(l, _mm_min_ps(l0, l1));
    _mm_storeu_ps(h, _mm_max_ps(h0, h1));
    _mm_storeu_ps(zl, zz);
    for (int k = 0; k < 4; k++) {
      lo0 = l[k] < lo0 ? l[k] : lo0;
      hi0 = h[k] > hi0 ? h[k] : hi0;
      z0 += zl[k];
    }
  }
#endif
  for (; i + 4 <= n; i += 4) {
    float a = x[i], b = x[i + 1], c = x[i + 2], d = x[i + 3];
    z0 += a * 0.0f + c * 0.0f;
    z1 += b * 0.0f + d * 0.0f;
    lo0 = a < lo0 ? a : lo0;
    hi0 = a > hi0 ? a : hi0;
    lo1 = b < lo1 ? b : lo1;
    hi1 = b > hi1 ? b : hi1;
    lo0 = c < lo0 ? c : lo0;
    hi0 = c > hi0 ? c : hi0;
    lo1 = d < lo1 ? d : lo1;
    hi1 = d > hi1 ? d : hi1;
  }
  for (; i < n; i++) {
    float a = x[i];
    z0 += a * 0.0f;
    lo0 = a < lo0 ? a : lo0;
    hi0 = a > hi0 ? a : hi0;
  }
  *mn = lo0 < lo1 ? lo0 : lo1;
  *mx = hi0 > hi1 ? hi0 : hi1;
  float z = z0 + z1;
  return z != z || (no_negatives(s) && *mn < 0.0f);
}

/* ---- parameters ------------------------------------------------------------------------ */

static float store_scale(const QSpec *s, uint8_t *dst, float d) {
  switch (s->scale_tag) {
    case HURRAY_QUANT_SCALE_F16: {
      uint16_t h = hurray__f16_from_f32(d);
      if (dst != NULL) hurray__st16(dst, h);
      return hurray__f16_to_f32(h);
    }
    case HURRAY_QUANT_SCALE_BF16: {
      uint16_t h = hurray__bf16_from_f32(d);
      if (dst != NULL) hurray__st16(dst, h);
      return hurray__bf16_to_f32(h);
    }
    default:
      if (dst != NULL) hurray__st32(dst, hurray__f32_bits(d));
      return d;
  }
}

/*
 * The parameters of entry `e` from the range [mn, mx] of its values (both 0
 * for an entry without values). Writes the stored scale (and zero point) at
 * `scale_dst` / `zp_dst` (NULL: not stored there; per-tensor keeps them in
 * *tensor_scale / *tensor_zp).
 */
static HurrayStatus derive(const QSpec *s, uint64_t e, float mn, float mx, uint8_t *scale_dst,
                           uint8_t *zp_dst, QParam *out, float *tensor_scale, HurrayError *err) {
  float amax = fmaxf(fabsf(mn), fabsf(mx));
  char path[48];
  switch (s->mode) {
    case QM_NF4:
      hurray__st32(scale_dst, hurray__f32_bits(amax));
      out->a = amax;
      out->z = 0;
      return HURRAY_OK;
    case QM_MX_FLOAT:
    case QM_MX_INT: {
      int byte = 127;
      if (amax > 0.0f) {
        int ex;
        (void)frexpf(amax, &ex); /* amax = m * 2^ex, m in [0.5, 1): floor(log2) = ex - 1 */
        byte = ex - 1 - s->emax + 127;
        byte = byte < 1 ? 1 : byte > 254 ? 254 : byte;
      }
      scale_dst[0] = (uint8_t)byte;
      out->a = ldexpf(1.0f, 127 - byte);
      out->z = 0;
      return HURRAY_OK;
    }
    default:
      break;
  }
  /* affine */
  float lo = 0.0f, d;
  if (s->symmetric) {
    d = amax / (float)s->qhi;
  } else {
    lo = fminf(mn, 0.0f);
    float hi = fmaxf(mx, 0.0f), range = hi - lo;
    if (isinf(range)) {
      hurray__path(path, sizeof path, "quantization.scale[%llu]", (unsigned long long)e);
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, path,
                          "the value range [%g, %g] of entry %llu overflows float32", (double)lo,
                          (double)hi, (unsigned long long)e);
    }
    d = range / (float)(s->qhi - s->qlo);
    /* zero points are int32: for uint32 storage z <= 2^31 - 1, so -lo / s
     * must stay within that (the other types hold any z of their range) */
    if (s->qhi > INT32_MAX) d = fmaxf(d, -lo / (float)INT32_MAX);
  }
  float stored = 1.0f, inv = 0.0f;
  int64_t z = 0;
  if (d != 0.0f) {
    stored = store_scale(s, NULL, d);
    if (isinf(stored)) {
      hurray__path(path, sizeof path, "quantization.scale[%llu]", (unsigned long long)e);
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, path,
                          "the scale %g of entry %llu overflows %s (max |x| = %g); use a "
                          "float32 or bfloat16 scale type",
                          (double)d, (unsigned long long)e, hurray_dtype_name(s->scale_tag),
                          (double)amax);
    }
    inv = 1.0f / d;
    if (stored == 0.0f || isinf(inv)) {
      /* below the scale type's resolution: the entry is flushed to zero */
      stored = 1.0f;
      inv = 0.0f;
    } else if (!s->symmetric) {
      z = s->qlo - hq_round_away(lo * inv);
      int64_t zlo = s->qlo > INT32_MIN ? s->qlo : INT32_MIN;
      int64_t zhi = s->qhi < INT32_MAX ? s->qhi : INT32_MAX;
      z = z < zlo ? zlo : z > zhi ? zhi : z;
    }
  }
  if (tensor_scale != NULL)
    *tensor_scale = stored;
  else
    (void)store_scale(s, scale_dst, stored);
  if (zp_dst != NULL) hurray__st32(zp_dst, (uint32_t)(int32_t)z);
  out->a = inv;
  out->z = (int32_t)z;
  return HURRAY_OK;
}

/* ---- codes ----------------------------------------------------------------------------- */

/* Codes of x[0 .. n) under parameters q, into c. */
static void encode(const QSpec *s, const QParam *q, const float *x, uint64_t n, uint32_t *c) {
  switch (s->mode) {
    case QM_AFFINE: {
      float a = q->a;
      int64_t z = q->z, lo = s->qlo, hi = s->qhi;
      uint32_t mask = s->mask;
      for (uint64_t i = 0; i < n; i++) {
        int64_t r = hq_round_away(x[i] * a) + z;
        r = r < lo ? lo : r > hi ? hi : r;
        c[i] = (uint32_t)r & mask;
      }
      break;
    }
    case QM_NF4: {
      if (q->a == 0.0f) {
        for (uint64_t i = 0; i < n; i++) c[i] = 7; /* the level 0.0 */
        break;
      }
      const float *m = s->nf4_mid;
      float a = q->a;
      for (uint64_t i = 0; i < n; i++) { /* the count of midpoints below v */
        float v = x[i] / a;
        uint32_t k = (uint32_t)(v > m[7]) * 8u;
        k += (uint32_t)(v > m[k + 3u]) * 4u;
        k += (uint32_t)(v > m[k + 1u]) * 2u;
        k += (uint32_t)(v > m[k]);
        c[i] = k;
      }
      break;
    }
    case QM_MX_FLOAT: {
      double a = (double)q->a;
      for (uint64_t i = 0; i < n; i++) /* saturating: the OCP MX rule */
        c[i] = hurray__narrow_encode_finite(&s->mini, (double)x[i] * a, true);
      break;
    }
    default: { /* MX int */
      double a = (double)q->a;
      for (uint64_t i = 0; i < n; i++) {
        double v = (double)x[i] * a; /* |v| < 2^(bits - 1): see derive */
        double r = hq_rne_nonneg(fabs(v));
        int64_t k = (int64_t)r;
        if (v < 0) k = -k;
        k = k < s->qlo ? s->qlo : k > s->qhi ? s->qhi : k;
        c[i] = (uint32_t)k & s->mask;
      }
      break;
    }
  }
}

/* Stores codes c[0 .. n) at storage elements st, st + stride, ... of a
 * zeroed storage region. */
static void pack(uint8_t *d, uint64_t st, uint64_t stride, const uint32_t *c, uint64_t n,
                 unsigned bits) {
  uint64_t i = 0;
  if (stride == 1 && bits == 8) {
    for (; i < n; i++) d[st + i] = (uint8_t)c[i];
    return;
  }
  if (stride == 1 && bits == 4 && (st & 1u) == 0) {
    uint8_t *p = d + (st >> 1);
    for (; i + 2 <= n; i += 2) *p++ = (uint8_t)(c[i] | (c[i + 1] << 4));
  } else if (stride == 1 && bits == 2 && (st & 3u) == 0) {
    uint8_t *p = d + (st >> 2);
    for (; i + 4 <= n; i += 4)
      *p++ = (uint8_t)(c[i] | (c[i + 1] << 2) | (c[i + 2] << 4) | (c[i + 3] << 6));
  }
  for (; i < n; i++) hq_put(d, st + i * stride, bits, c[i]);
}

#define QCHUNK 256u

#ifdef HQ_SSE2
/* Four affine codes: clamp(x * a) to [lo - z, hi - z] (integers, so clamping
 * first changes nothing), round half away from zero, add z: the scalar
 * loop's bits. */
static inline __m128i affine4(__m128 x, __m128 a, __m128 flo, __m128 fhi, __m128i z) {
  __m128 y = _mm_min_ps(_mm_max_ps(_mm_mul_ps(x, a), flo), fhi);
  __m128i t = _mm_cvttps_epi32(y);
  __m128 fr = _mm_sub_ps(y, _mm_cvtepi32_ps(t));
  __m128i up = _mm_castps_si128(_mm_cmpge_ps(fr, _mm_set1_ps(0.5f)));
  __m128i dn = _mm_castps_si128(_mm_cmple_ps(fr, _mm_set1_ps(-0.5f)));
  return _mm_add_epi32(_mm_add_epi32(_mm_sub_epi32(t, up), dn), z);
}
#endif

/* Affine codes of 4 or 8 bits written straight into contiguous storage
 * from st (even for 4 bits): the hot loop of int4 / int8 per-block. */
static void encode_affine_packed(const QSpec *s, const QParam *q, const float *x, uint64_t n,
                                 uint8_t *d, uint64_t st) {
  float a = q->a;
  int32_t z = q->z, lo = (int32_t)s->qlo, hi = (int32_t)s->qhi;
  uint64_t i = 0;
#ifdef HQ_SSE2
  __m128 va = _mm_set1_ps(a), flo = _mm_set1_ps((float)(lo - z));
  __m128 fhi = _mm_set1_ps((float)(hi - z));
  __m128i vz = _mm_set1_epi32(z);
#endif
  if (s->bits == 8) {
    uint8_t *p = d + st;
#ifdef HQ_SSE2
    for (; i + 16 <= n; i += 16) {
      __m128i r0 = affine4(_mm_loadu_ps(x + i), va, flo, fhi, vz);
      __m128i r1 = affine4(_mm_loadu_ps(x + i + 4), va, flo, fhi, vz);
      __m128i r2 = affine4(_mm_loadu_ps(x + i + 8), va, flo, fhi, vz);
      __m128i r3 = affine4(_mm_loadu_ps(x + i + 12), va, flo, fhi, vz);
      __m128i w0 = _mm_packs_epi32(r0, r1), w1 = _mm_packs_epi32(r2, r3);
      __m128i b = lo < 0 ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
      _mm_storeu_si128((__m128i *)(void *)(p + i), b);
    }
#endif
    for (; i < n; i++) {
      int32_t r = hq_round_away32(x[i] * a) + z;
      r = r < lo ? lo : r;
      r = r > hi ? hi : r;
      p[i] = (uint8_t)r;
    }
    return;
  }
  uint8_t *p = d + (st >> 1);
#ifdef HQ_SSE2
  const __m128i m0f = _mm_set1_epi16(0x000F), mf0 = _mm_set1_epi16(0x00F0);
  for (; i + 32 <= n; i += 32) {
    __m128i b[2];
    for (int h = 0; h < 2; h++) {
      const float *xh = x + i + 16 * h;
      __m128i r0 = affine4(_mm_loadu_ps(xh), va, flo, fhi, vz);
      __m128i r1 = affine4(_mm_loadu_ps(xh + 4), va, flo, fhi, vz);
      __m128i r2 = affine4(_mm_loadu_ps(xh + 8), va, flo, fhi, vz);
      __m128i r3 = affine4(_mm_loadu_ps(xh + 12), va, flo, fhi, vz);
      /* 16 codes as bytes, then each 16-bit lane (code 2j | code 2j+1 << 8)
       * folded to one byte: low nibble code 2j, high nibble code 2j+1 */
      __m128i e = _mm_packs_epi16(_mm_packs_epi32(r0, r1), _mm_packs_epi32(r2, r3));
      b[h] = _mm_or_si128(_mm_and_si128(e, m0f), _mm_and_si128(_mm_srli_epi16(e, 4), mf0));
    }
    _mm_storeu_si128((__m128i *)(void *)p, _mm_packus_epi16(b[0], b[1]));
    p += 16;
  }
#endif
  for (; i + 2 <= n; i += 2) {
    int32_t r0 = hq_round_away32(x[i] * a) + z, r1 = hq_round_away32(x[i + 1] * a) + z;
    r0 = r0 < lo ? lo : r0;
    r0 = r0 > hi ? hi : r0;
    r1 = r1 < lo ? lo : r1;
    r1 = r1 > hi ? hi : r1;
    *p++ = (uint8_t)(((uint32_t)r0 & 15u) | (((uint32_t)r1 & 15u) << 4));
  }
  if (i < n) {
    int32_t r0 = hq_round_away32(x[i] * a) + z;
    r0 = r0 < lo ? lo : r0;
    r0 = r0 > hi ? hi : r0;
    *p = (uint8_t)((uint32_t)r0 & 15u);
  }
}

/* Codes of a run of input values sharing parameters q, stored from st. */
static void encode_run(const QSpec *s, const QParam *q, const float *x, uint64_t n, uint8_t *d,
                       uint64_t st, uint64_t stride) {
  if (s->mode == QM_AFFINE && stride == 1 &&
      (s->bits == 8 || (s->bits == 4 && (st & 1u) == 0))) {
    encode_affine_packed(s, q, x, n, d, st);
    return;
  }
  uint32_t c[QCHUNK];
  while (n > 0) {
    uint64_t m = n < QCHUNK ? n : QCHUNK;
    encode(s, q, x, m, c);
    pack(d, st, stride, c, m, s->bits);
    x += m;
    st += m * stride;
    n -= m;
  }
}

/* ---- the two paths ----------------------------------------------------------------------- */

typedef struct QOut {
  uint8_t *data;   /* storage element 0 */
  uint8_t *scales; /* scale array */
  uint8_t *zps;    /* zero-point array, or NULL */
  float tensor_scale;
  int32_t tensor_zp;
} QOut;

/* Per-block, NF4, MXFP along the last axis of a row-major tensor. */
static HurrayStatus quantize_blocks(const QSpec *s, const HurrayQuantPlan *p, const HqWalk *w,
                                    const float *in, QOut *o, HurrayError *err) {
  uint64_t A = w->n_last, K = w->K, nbpa = w->nbpa;
  uint64_t Apad = p->pads_blocks ? nbpa * K : A;
  for (uint64_t row = 0; row < w->nrows; row++) {
    const float *x = in + row * A;
    for (uint64_t b = 0; b < nbpa; b++) {
      uint64_t first = b * K, n = A - first < K ? A - first : K, e = row * nbpa + b;
      float mn, mx;
      if (range_of(s, x + first, n, &mn, &mx)) {
        uint64_t k = first + first_refused(s, x + first, n);
        return bad_value(s, row * A + k, x[k], err);
      }
      QParam q;
      HURRAY_TRY(derive(s, e, mn, mx, o->scales + e * s->scale_width,
                        o->zps != NULL ? o->zps + 4 * e : NULL, &q, NULL, err));
      encode_run(s, &q, x + first, n, o->data, row * Apad + first, 1);
    }
  }
  return HURRAY_OK;
}

/* Any scheme, any row- or column-major tensor: ranges, parameters, codes. */
static HurrayStatus quantize_general(const QSpec *s, const HurrayDescriptorFields *f,
                                     const HurrayQuantPlan *p, uint64_t count, const float *in,
                                     QOut *o, HurrayError *err) {
  uint64_t bad = first_refused(s, in, count);
  if (bad < count) return bad_value(s, bad, in[bad], err);
  uint64_t entries = p->has_axis ? p->entries : 1;
  QEntry one;
  QEntry *ent = &one;
  if (entries > 1) {
    if (entries > SIZE_MAX / sizeof(QEntry)) return HURRAY_ERR_OUT_OF_MEMORY;
    ent = (QEntry *)hurray__malloc((size_t)entries * sizeof(QEntry));
    if (ent == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "quantize",
                          "no memory for the ranges of %llu parameter entries",
                          (unsigned long long)entries);
  }
  for (uint64_t e = 0; e < entries; e++) ent[e].mn = ent[e].mx = 0.0f;
  HqWalk w;
  HqChunk c;
  if (count > 0) {
    hq_walk_init(&w, f, p);
    while (hq_walk_next(&w, &c)) {
      float mn, mx;
      (void)range_of(s, in + c.in_off, c.len, &mn, &mx); /* checked above */
      QEntry *t = &ent[c.entry];
      t->mn = mn < t->mn ? mn : t->mn;
      t->mx = mx > t->mx ? mx : t->mx;
    }
  }
  HurrayStatus st = HURRAY_OK;
  bool tensor = !p->has_axis;
  for (uint64_t e = 0; e < entries && st == HURRAY_OK; e++)
    st = derive(s, e, ent[e].mn, ent[e].mx, tensor ? NULL : o->scales + e * s->scale_width,
                o->zps != NULL ? o->zps + 4 * e : NULL, &ent[e].p,
                tensor ? &o->tensor_scale : NULL, err);
  if (tensor) o->tensor_zp = ent[0].p.z;
  if (st == HURRAY_OK && count > 0) {
    hq_walk_init(&w, f, p);
    while (hq_walk_next(&w, &c))
      encode_run(s, &ent[c.entry].p, in + c.in_off, c.len, o->data, c.st_off, c.st_stride);
  }
  if (ent != &one) hurray__free(ent);
  return st;
}

/* ---- the public function --------------------------------------------------------------- */

static HurrayStatus need_buffer(void *const *buffers, const uint64_t *sizes, uint32_t i,
                                uint64_t need, const char *what, HurrayError *err) {
  char path[32];
  hurray__path(path, sizeof path, "buffers[%u]", i);
  if (sizes[i] < need)
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET, path,
                        "%llu writable bytes, the %s needs %llu", (unsigned long long)sizes[i],
                        what, (unsigned long long)need);
  if (need > 0 && buffers[i] == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, path,
                        "buffer address is NULL");
  return HURRAY_OK;
}

HurrayStatus hurray_quant_quantize_f32(const HurrayDescriptorFields *f, const float *in,
                                       uint64_t in_count, void *const *buffers,
                                       const uint64_t *sizes, uint32_t options,
                                       HurrayQuantization *out_quant, HurrayError *err) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
  if ((options & ~HURRAY_QUANTIZE_SYMMETRIC) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options",
                        "unknown option bits 0x%X", options & ~HURRAY_QUANTIZE_SYMMETRIC);
  const HurrayQuantization *q = f->quantization;
  if (q == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "quantization",
                        "the tensor is not quantized");
  if (hurray_quant_scheme_kind(q->scheme) != HURRAY_TAG_NAMED)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET,
                        "quantization.scheme_tag", "scheme 0x%02X has no known meaning",
                        q->scheme);
  if (f->layout.tag != HURRAY_LAYOUT_ROW_MAJOR && f->layout.tag != HURRAY_LAYOUT_COL_MAJOR)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout",
                        "quantization of a whole tensor needs a row- or column-major layout");
  if (f->rank > HURRAY_MAX_RANK)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "rank",
                        "rank %u exceeds %u", f->rank, HURRAY_MAX_RANK);
  if (f->rank > 0 && f->shape == NULL) return HURRAY_ERR_NULL_POINTER;
  bool tensor = q->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE;
  if (tensor && out_quant == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out_quant",
                        "per-tensor affine returns its scale and zero point in out_quant");

  /* The descriptor rules, with placeholders for what is being computed. */
  HurrayQuantization qv = *q;
  qv.raw = NULL;
  qv.raw_len = 0;
  if (tensor) {
    qv.u.per_tensor.scale = 1.0f;
    qv.u.per_tensor.zero_point = 0;
  }
  HurrayDescriptorFields fv = *f;
  fv.quantization = &qv;
  HURRAY_TRY(hurray__quant_validate(&fv, NULL, HURRAY_DECODE_STRICT, err));
  HurrayQuantPlan p;
  HURRAY_TRY(hurray__quant_resolve(&fv, &p, err));

  uint64_t count = 1, storage = 0, bytes = 0, need = 0;
  for (uint32_t j = 0; j < f->rank; j++)
    if (hurray__mul_overflow_u64(count, f->shape[j], &count))
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                          "the element count overflows");
  if (hurray__quant_storage_count(&fv, &p, &storage) != HURRAY_QP_OK ||
      hurray_buffer_size_bytes(f->type_tag, storage, &bytes) != HURRAY_OK ||
      hurray__add_overflow_u64(bytes, f->byte_offset, &need))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "the storage size overflows");
  if (in_count < count)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "in",
                        "%llu values given, the tensor has %llu", (unsigned long long)in_count,
                        (unsigned long long)count);
  if (count > 0 && in == NULL) return HURRAY_ERR_NULL_POINTER;
  if (f->buffer_count > 0 && (buffers == NULL || sizes == NULL)) return HURRAY_ERR_NULL_POINTER;
  if (f->buffer_count == 0)
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET, "buffers[0]",
                        "the tensor has no data buffer");
  HURRAY_TRY(need_buffer(buffers, sizes, 0, need, "storage (byte_offset + codes)", err));
  QOut o;
  memset(&o, 0, sizeof o);
  if (!tensor) {
    bool shared = p.zp_index == p.scale_index;
    HURRAY_TRY(need_buffer(buffers, sizes, p.scale_index,
                           p.scale_bytes + (shared ? p.zp_bytes : 0),
                           shared ? "[scales | zero_points] arrays" : "scale array", err));
    if (p.zp_index != HURRAY_QUANT_NO_BUFFER && !shared)
      HURRAY_TRY(need_buffer(buffers, sizes, p.zp_index, p.zp_bytes, "zero-point array", err));
    o.scales = (uint8_t *)buffers[p.scale_index];
    if (p.zp_index != HURRAY_QUANT_NO_BUFFER)
      o.zps = (uint8_t *)buffers[p.zp_index] + (shared ? p.scale_bytes : 0);
  }
  if (bytes > 0) {
    o.data = (uint8_t *)buffers[0] + f->byte_offset;
    memset(o.data, 0, (size_t)bytes); /* padding and unused bits are zero */
  }

  QSpec s;
  spec_init(&fv, &p, (options & HURRAY_QUANTIZE_SYMMETRIC) != 0, &s);
  HurrayStatus st;
  if (count > 0 && p.has_axis && p.block_size != 0 &&
      f->layout.tag == HURRAY_LAYOUT_ROW_MAJOR && p.axis == f->rank - 1u) {
    HqWalk w;
    hq_walk_init(&w, &fv, &p);
    st = quantize_blocks(&s, &p, &w, in, &o, err);
  } else {
    st = quantize_general(&s, &fv, &p, count, in, &o, err);
  }
  if (st != HURRAY_OK) return st;
  if (out_quant != NULL) {
    *out_quant = qv;
    if (tensor) {
      out_quant->u.per_tensor.scale = o.tensor_scale;
      out_quant->u.per_tensor.zero_point = o.tensor_zp;
    }
  }
  return HURRAY_OK;
}
