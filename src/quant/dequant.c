/* Parameter sizes, parameter-array checks and dequantization to float32
 * (include/hurray/values.h; spec: quantization/\*.md § Dequantization Formula and
 * § Validity Constraints). */
#include <math.h>

#include "hurray/values.h"
#include "quant/quant_kernels.h"

/* ---- resolving a plan from bare fields ------------------------------------------ */

/* Plan of f's quantization with entries computed; reports problems the way
 * the public helpers document. */
HurrayStatus hurray__quant_resolve(const HurrayDescriptorFields *f, HurrayQuantPlan *p,
                                   HurrayError *err) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
  const HurrayQuantization *q = f->quantization;
  if (q == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "quantization",
                        "the tensor is not quantized");
  if (!hurray__quant_plan_init(q, p))
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET,
                        "quantization.scheme_tag", "scheme 0x%02X is not one this library knows",
                        q->scheme);
  if (f->rank > 0 && f->shape == NULL) return HURRAY_ERR_NULL_POINTER;
  if (p->has_axis) {
    if (p->axis >= f->rank || f->shape[p->axis] == HURRAY_DYNAMIC_DIM)
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET,
                          "quantization.axis",
                          "axis %u is not a static dimension of this rank-%u tensor", p->axis,
                          f->rank);
    if (p->block_size == 0 && q->scheme != HURRAY_QUANT_PER_CHANNEL_AFFINE)
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET,
                          "quantization.block_size", "block_size must not be 0");
  }
  int r = hurray__quant_plan_entries(f, p);
  if (r != HURRAY_QP_OK)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        r == HURRAY_QP_DYNAMIC
                            ? "a dimension the parameter arrays depend on is dynamic"
                            : "the parameter arrays' size overflows");
  return HURRAY_OK;
}

HurrayStatus hurray_quant_param_sizes(const HurrayDescriptorFields *f, uint64_t *out_scale,
                                      uint64_t *out_zp) {
  HurrayQuantPlan p;
  HURRAY_TRY(hurray__quant_resolve(f, &p, NULL));
  if (out_scale != NULL) *out_scale = p.scale_bytes;
  if (out_zp != NULL) *out_zp = p.zp_bytes;
  return HURRAY_OK;
}

HurrayStatus hurray_quant_storage_count(const HurrayDescriptorFields *f, uint64_t *out_count) {
  if (out_count == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayQuantPlan p;
  HURRAY_TRY(hurray__quant_resolve(f, &p, NULL));
  return hurray__quant_storage_count(f, &p, out_count) == HURRAY_QP_OK
             ? HURRAY_OK
             : HURRAY_ERR_INVALID_ARGUMENT;
}

/* ---- parameter arrays --------------------------------------------------------------- */

/* Where the parameter arrays are, once checked. */
typedef struct Params {
  const uint8_t *scales;     /* entries * scale_width bytes */
  const uint8_t *zero_points;/* entries * 4 bytes, or NULL when symmetric */
} Params;

static float scale_at(const HurrayQuantPlan *p, const Params *a, uint64_t i) {
  const uint8_t *s = a->scales + i * p->scale_width;
  switch (p->scale_tag) {
    case HURRAY_QUANT_SCALE_F16:
      return hurray__f16_to_f32(hurray__ld16(s)); /* exact */
    case HURRAY_QUANT_SCALE_BF16:
      return hurray__bf16_to_f32(hurray__ld16(s));
    case HURRAY_DTYPE_FLOAT8_E8M0:
      return hurray__e8m0_to_f32(s[0]); /* checked: neither 0x00 nor 0xFF */
    default:
      return hurray__f32_from_bits(hurray__ld32(s));
  }
}

static int64_t zero_point_at(const Params *a, uint64_t i) {
  return a->zero_points == NULL ? 0 : (int64_t)(int32_t)hurray__ld32(a->zero_points + 4 * i);
}

/* Maps the parameter arrays of buffers[] and checks every element. */
static HurrayStatus check_params(const HurrayDescriptorFields *f, HurrayQuantPlan *p,
                                 const void *const *buffers, const uint64_t *sizes,
                                 Params *a, HurrayError *err) {
  const HurrayQuantization *q = f->quantization;
  memset(a, 0, sizeof *a);
  if (hurray_layout_tag_kind(f->layout.tag) != HURRAY_TAG_NAMED ||
      f->layout.tag == HURRAY_LAYOUT_COMPOSITE)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout",
                        "quantization parameters of a %s layout cannot be checked",
                        f->layout.tag == HURRAY_LAYOUT_COMPOSITE ? "composite" : "unknown");
  HURRAY_TRY(hurray__quant_validate(f, NULL, HURRAY_DECODE_STRICT, err));
  HURRAY_TRY(hurray__quant_resolve(f, p, err));
  if (f->buffer_count > 0 && (buffers == NULL || sizes == NULL)) return HURRAY_ERR_NULL_POINTER;
  if (q->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) return HURRAY_OK;

  /* Map the arrays (validation guaranteed the indices are < buffer_count). */
  uint64_t need = p->scale_bytes;
  bool shared = p->zp_index == p->scale_index;
  if (shared) need += p->zp_bytes; /* no overflow: validated against a u64 byte_size */
  uint32_t idx[2] = {p->scale_index, shared ? HURRAY_QUANT_NO_BUFFER : p->zp_index};
  uint64_t want[2] = {need, p->zp_bytes};
  for (int k = 0; k < 2; k++) {
    if (idx[k] == HURRAY_QUANT_NO_BUFFER) continue;
    char path[32];
    hurray__path(path, sizeof path, "buffers[%u]", idx[k]);
    if (sizes[idx[k]] < want[k])
      return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET, path,
                          "%llu readable bytes, the parameter array needs %llu",
                          (unsigned long long)sizes[idx[k]], (unsigned long long)want[k]);
    if (want[k] > 0 && buffers[idx[k]] == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, path,
                          "parameter buffer address is NULL");
  }
  a->scales = (const uint8_t *)buffers[p->scale_index];
  if (p->zp_index != HURRAY_QUANT_NO_BUFFER)
    a->zero_points = (const uint8_t *)buffers[p->zp_index] + (shared ? p->scale_bytes : 0);

  const char *name = hurray_quant_scheme_name(q->scheme);
  int64_t lo = 0, hi = 0;
  bool ranged = hurray__quant_int_range(f->type_tag, &lo, &hi);
  for (uint64_t i = 0; i < p->entries; i++) {
    char path[64];
    if (p->scale_tag == HURRAY_DTYPE_FLOAT8_E8M0) {
      uint8_t e = a->scales[i];
      if (e == 0x00 || e == 0xFF) {
        hurray__path(path, sizeof path, "quantization.scale[%llu]", (unsigned long long)i);
        return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET, path,
                            "%s scale byte 0x%02X (buffer %u) is reserved in float8_e8m0",
                            name, e, p->scale_index);
      }
    } else {
      float s = scale_at(p, a, i);
      bool bad = q->scheme == HURRAY_QUANT_NF4 ? !(isfinite(s) && s >= 0.0f)
                                               : !(isfinite(s) && s != 0.0f);
      if (bad) {
        hurray__path(path, sizeof path, "quantization.scale[%llu]", (unsigned long long)i);
        return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET, path,
                            "%s scale %g (buffer %u) must be finite and %s", name, (double)s,
                            p->scale_index,
                            q->scheme == HURRAY_QUANT_NF4 ? "non-negative" : "non-zero");
      }
    }
    if (a->zero_points != NULL && ranged) {
      int64_t z = zero_point_at(a, i);
      if (z < lo || z > hi) {
        hurray__path(path, sizeof path, "quantization.zero_point[%llu]",
                     (unsigned long long)i);
        return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET, path,
                            "%s zero point %lld (buffer %u) is outside the %s range "
                            "[%lld, %lld]",
                            name, (long long)z, p->zp_index, hurray_dtype_name(f->type_tag),
                            (long long)lo, (long long)hi);
      }
    }
  }
  return HURRAY_OK;
}

HurrayStatus hurray_quant_check_params(const HurrayDescriptorFields *f,
                                       const void *const *buffers, const uint64_t *sizes,
                                       HurrayError *err) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
  if (f->quantization == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "quantization",
                        "the tensor is not quantized");
  if (hurray_quant_scheme_kind(f->quantization->scheme) != HURRAY_TAG_NAMED)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET,
                        "quantization.scheme_tag", "scheme 0x%02X has no known meaning",
                        f->quantization->scheme);
  HurrayQuantPlan p;
  Params a;
  return check_params(f, &p, buffers, sizes, &a, err);
}

/* ---- dequantization ------------------------------------------------------------------ */

/* How the codes of one tensor turn into values. */
typedef enum { DM_AFFINE, DM_NF4, DM_MX_FLOAT, DM_MX_INT } DMode;

typedef struct DSpec {
  DMode mode;
  unsigned bits;
  bool is_signed;
  float val[256]; /* NF4: the table; MX float: the value of every code */
} DSpec;

/* One entry's parameters: affine s and z; NF4 s; MXFP s = 2^(e - 127). */
typedef struct DParam {
  float s;
  int64_t z;
} DParam;

static void dspec_init(const HurrayDescriptorFields *f, DSpec *d) {
  const HurrayDtypeInfo *info = hurray_dtype_info(f->type_tag);
  d->bits = info->bit_width;
  d->is_signed = (info->flags & HURRAY_DTF_SIGNED) != 0;
  switch (f->quantization->scheme) {
    case HURRAY_QUANT_NF4:
      d->mode = DM_NF4;
      memcpy(d->val, hurray_nf4_table(), 16 * sizeof(float));
      break;
    case HURRAY_QUANT_MXFP:
      if ((info->flags & HURRAY_DTF_FLOAT) != 0) {
        d->mode = DM_MX_FLOAT;
        for (uint32_t c = 0; c < (1u << d->bits); c++) {
          double v = 0.0;
          /* a float element type: cannot fail (NaN if it ever did) */
          d->val[c] = hurray_value_code_to_double(f->type_tag, c, &v) == HURRAY_OK
                          ? (float)v /* exact: these formats are subsets of float32 */
                          : NAN;
        }
      } else {
        d->mode = DM_MX_INT;
      }
      break;
    default:
      d->mode = DM_AFFINE;
      break;
  }
}

static DParam dparam(const HurrayQuantization *q, const HurrayQuantPlan *p, const Params *a,
                     uint64_t entry) {
  DParam r;
  if (q->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) {
    r.s = q->u.per_tensor.scale;
    r.z = q->u.per_tensor.zero_point;
  } else {
    r.s = scale_at(p, a, entry);
    r.z = zero_point_at(a, entry);
  }
  return r;
}

/* The normative value of one code (quantization/\*.md § Dequantization
 * Formula): affine s * (q - z) with q - z exact in 64 bits then float32;
 * NF4 s * nf4[q]; MXFP s * value(q). */
static inline float dval(const DSpec *d, const DParam *q, uint32_t code) {
  switch (d->mode) {
    case DM_AFFINE: {
      int64_t v = d->is_signed ? (int64_t)hq_sext(code, d->bits) : (int64_t)code;
      return (float)(v - q->z) * q->s;
    }
    case DM_NF4: return q->s * d->val[code & 15u];
    case DM_MX_FLOAT: return q->s * d->val[code];
    default: return q->s * (float)hq_sext(code, d->bits);
  }
}

/* Values of n storage elements from st (stride `stride`) into dst. */
static void decode_run(const DSpec *d, const DParam *q, const uint8_t *data, uint64_t st,
                       uint64_t stride, uint64_t n, float *dst) {
  uint64_t i = 0;
#ifdef HQ_SSE2
  if (stride == 1 && d->bits == 4 && d->mode == DM_AFFINE && (st & 1u) == 0 && n >= 32) {
    /* 32 codes per 16 bytes: nibbles to bytes in element order, widened to
     * int32, q - z exact, then the float32 product, as dval computes it */
    const uint8_t *b = data + (st >> 1);
    const __m128i m = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8), zero = _mm_setzero_si128();
    const __m128i vz = _mm_set1_epi32((int32_t)q->z);
    const __m128 vs = _mm_set1_ps(q->s);
    for (; i + 32 <= n; i += 32, b += 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)b);
      __m128i lo = _mm_and_si128(v, m), hi = _mm_and_si128(_mm_srli_epi16(v, 4), m);
      __m128i e[2] = {_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi)};
      for (int h = 0; h < 2; h++) {
        __m128i c = e[h], sg = zero;
        if (d->is_signed) {
          c = _mm_sub_epi8(_mm_xor_si128(c, eight), eight);
          sg = _mm_cmpgt_epi8(zero, c);
        }
        __m128i w[2] = {_mm_unpacklo_epi8(c, sg), _mm_unpackhi_epi8(c, sg)};
        for (int k = 0; k < 2; k++) {
          __m128i s16 = _mm_srai_epi16(w[k], 15);
          __m128i d0 = _mm_sub_epi32(_mm_unpacklo_epi16(w[k], s16), vz);
          __m128i d1 = _mm_sub_epi32(_mm_unpackhi_epi16(w[k], s16), vz);
          float *o = dst + i + 16 * h + 8 * k;
          _mm_storeu_ps(o, _mm_mul_ps(_mm_cvtepi32_ps(d0), vs));
          _mm_storeu_ps(o + 4, _mm_mul_ps(_mm_cvtepi32_ps(d1), vs));
        }
      }
    }
    if (i == n) return;
    st += i;
    dst += i;
    n -= i;
    i = 0;
  }
#endif
  if (stride == 1 && d->bits == 4 && n >= 16) {
    float t[16]; /* one multiplication per code instead of per element */
    for (uint32_t c = 0; c < 16; c++) t[c] = dval(d, q, c);
    if ((st & 1u) != 0) dst[i++] = t[data[st >> 1] >> 4];
    const uint8_t *b = data + ((st + i) >> 1);
    for (; i + 2 <= n; i += 2, b++) {
      dst[i] = t[*b & 15u];
      dst[i + 1] = t[*b >> 4];
    }
    if (i < n) dst[i] = t[*b & 15u];
    return;
  }
  if (stride == 1 && d->bits == 8) {
    const uint8_t *b = data + st;
    if (d->mode == DM_AFFINE) {
      float s = q->s;
      int64_t z = q->z;
      if (d->is_signed)
        for (; i < n; i++) dst[i] = (float)((int64_t)(int8_t)b[i] - z) * s;
      else
        for (; i < n; i++) dst[i] = (float)((int64_t)b[i] - z) * s;
    } else {
      for (; i < n; i++) dst[i] = dval(d, q, b[i]);
    }
    return;
  }
  if (d->bits <= 6 && n >= 16) {
    float t[64];
    for (uint32_t c = 0; c < (1u << d->bits); c++) t[c] = dval(d, q, c);
    for (; i < n; i++) dst[i] = t[hq_get(data, st + i * stride, d->bits)];
    return;
  }
  for (; i < n; i++) dst[i] = dval(d, q, hq_get(data, st + i * stride, d->bits));
}

/* Writes n float32 values as elements off .. off+n-1 of `out` (out_type). */
static void emit(uint8_t out_type, void *out, uint64_t off, const float *v, uint64_t n) {
  switch (out_type) {
    case HURRAY_DTYPE_FLOAT64: {
      double *o = (double *)out + off;
      for (uint64_t i = 0; i < n; i++) o[i] = (double)v[i];
      break;
    }
    case HURRAY_DTYPE_FLOAT16: {
      uint16_t *o = (uint16_t *)out + off;
      for (uint64_t i = 0; i < n; i++) o[i] = hurray__f16_from_f32(v[i]);
      break;
    }
    case HURRAY_DTYPE_BFLOAT16: {
      uint16_t *o = (uint16_t *)out + off;
      for (uint64_t i = 0; i < n; i++) o[i] = hurray__bf16_from_f32(v[i]);
      break;
    }
    default:
      break; /* float32 is decoded in place */
  }
}

#define DCHUNK 256u

/* A run decoded into output elements from `off`, through a small float32
 * buffer when the output type is not float32. */
static void decode_out(const DSpec *d, const DParam *q, const uint8_t *data, uint64_t st,
                       uint64_t stride, uint64_t n, uint8_t out_type, void *out, uint64_t off) {
  if (out_type == HURRAY_DTYPE_FLOAT32) {
    decode_run(d, q, data, st, stride, n, (float *)out + off);
    return;
  }
  float tmp[DCHUNK];
  while (n > 0) {
    uint64_t m = n < DCHUNK ? n : DCHUNK;
    decode_run(d, q, data, st, stride, m, tmp);
    emit(out_type, out, off, tmp, m);
    st += m * stride;
    off += m;
    n -= m;
  }
}

bool hurray_quant_value_type(uint8_t type_tag) {
  return type_tag == HURRAY_DTYPE_FLOAT32 || type_tag == HURRAY_DTYPE_FLOAT64 ||
         type_tag == HURRAY_DTYPE_FLOAT16 || type_tag == HURRAY_DTYPE_BFLOAT16;
}

HurrayStatus hurray_quant_dequantize(const HurrayDescriptorFields *f, const void *const *buffers,
                                     const uint64_t *sizes, uint8_t out_type, void *out,
                                     uint64_t out_count, HurrayError *err) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
  if (!hurray_quant_value_type(out_type))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "out_type",
                        "type 0x%02X is not float16, bfloat16, float32 or float64", out_type);
  const HurrayQuantization *q = f->quantization;
  if (q == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "quantization",
                        "the tensor is not quantized");
  if (hurray_quant_scheme_kind(q->scheme) != HURRAY_TAG_NAMED)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET,
                        "quantization.scheme_tag", "scheme 0x%02X has no known meaning",
                        q->scheme);
  bool col = f->layout.tag == HURRAY_LAYOUT_COL_MAJOR;
  if (f->layout.tag != HURRAY_LAYOUT_ROW_MAJOR && !col)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout",
                        "dequantization of a whole tensor needs a row- or column-major layout");
  if (f->rank > HURRAY_MAX_RANK)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "rank",
                        "rank %u exceeds %u", f->rank, HURRAY_MAX_RANK);
  if (f->rank > 0 && f->shape == NULL) return HURRAY_ERR_NULL_POINTER;

  HurrayQuantPlan p;
  Params a;
  HURRAY_TRY(check_params(f, &p, buffers, sizes, &a, err));

  uint64_t count = 1;
  for (uint32_t j = 0; j < f->rank; j++) {
    if (f->shape[j] == HURRAY_DYNAMIC_DIM || hurray__mul_overflow_u64(count, f->shape[j], &count))
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                          "the element count is dynamic or overflows");
  }
  if (out_count < count)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "out",
                        "room for %llu values, the tensor has %llu",
                        (unsigned long long)out_count, (unsigned long long)count);
  if (count == 0) return HURRAY_OK;
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;

  /* The data buffer: byte_offset + the (padded) storage. */
  uint64_t storage, bytes, need;
  if (hurray__quant_storage_count(f, &p, &storage) != HURRAY_QP_OK ||
      hurray_buffer_size_bytes(f->type_tag, storage, &bytes) != HURRAY_OK ||
      hurray__add_overflow_u64(bytes, f->byte_offset, &need))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "the storage size overflows");
  if (f->buffer_count == 0 || sizes[0] < need)
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET, "buffers[0]",
                        "%llu readable bytes, byte_offset + storage needs %llu",
                        (unsigned long long)(f->buffer_count == 0 ? 0 : sizes[0]),
                        (unsigned long long)need);
  if (buffers[0] == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "buffers[0]",
                        "data buffer address is NULL");
  const uint8_t *data = (const uint8_t *)buffers[0] + f->byte_offset;

  DSpec d;
  dspec_init(f, &d);
  HqWalk w;
  hq_walk_init(&w, f, &p);
  if (p.has_axis && p.block_size != 0 && !col && p.axis == f->rank - 1u) {
    /* Blocks along the last axis of a row-major tensor: block by block. */
    uint64_t A = w.n_last, K = w.K, nbpa = w.nbpa, Apad = p.pads_blocks ? nbpa * K : A;
    for (uint64_t row = 0; row < w.nrows; row++) {
      for (uint64_t b = 0; b < nbpa; b++) {
        uint64_t first = b * K, n = A - first < K ? A - first : K;
        DParam dp = dparam(q, &p, &a, row * nbpa + b);
        decode_out(&d, &dp, data, row * Apad + first, 1, n, out_type, out, row * A + first);
      }
    }
    return HURRAY_OK;
  }
  HqChunk c;
  while (hq_walk_next(&w, &c)) {
    DParam dp = dparam(q, &p, &a, c.entry);
    decode_out(&d, &dp, data, c.st_off, c.st_stride, c.len, out_type, out, c.in_off);
  }
  return HURRAY_OK;
}

HurrayStatus hurray_quant_dequantize_f32(const HurrayDescriptorFields *f,
                                         const void *const *buffers, const uint64_t *sizes,
                                         float *out, uint64_t out_count, HurrayError *err) {
  return hurray_quant_dequantize(f, buffers, sizes, HURRAY_DTYPE_FLOAT32, out, out_count, err);
}
