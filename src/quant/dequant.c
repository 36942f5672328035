/* Parameter sizes, parameter-array checks and dequantization to float32
 * (include/hurray/values.h; spec: quantization/\*.md § Dequantization Formula and
 * § Validity Constraints). */
#include <math.h>

#include "hurray/values.h"
#include "quant/quant_internal.h"

/* ---- resolving a plan from bare fields ------------------------------------------ */

/* Plan of f's quantization with entries computed; reports problems the way
 * the public helpers document. */
static HurrayStatus resolve(const HurrayDescriptorFields *f, HurrayQuantPlan *p,
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
  HURRAY_TRY(resolve(f, &p, NULL));
  if (out_scale != NULL) *out_scale = p.scale_bytes;
  if (out_zp != NULL) *out_zp = p.zp_bytes;
  return HURRAY_OK;
}

HurrayStatus hurray_quant_storage_count(const HurrayDescriptorFields *f, uint64_t *out_count) {
  if (out_count == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayQuantPlan p;
  HURRAY_TRY(resolve(f, &p, NULL));
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
  double d = 0.0;
  switch (p->scale_tag) {
    case HURRAY_QUANT_SCALE_F16:
      /* float16 is a named float type: this cannot fail (NaN if it ever did) */
      if (hurray_value_code_to_double(HURRAY_DTYPE_FLOAT16, hurray__ld16(s), &d) != HURRAY_OK)
        return NAN;
      return (float)d; /* exact: float16 widens losslessly */
    case HURRAY_QUANT_SCALE_BF16:
      return hurray__f32_from_bits((uint32_t)hurray__ld16(s) << 16);
    case HURRAY_DTYPE_FLOAT8_E8M0:
      return ldexpf(1.0f, (int)s[0] - 127);
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
  HURRAY_TRY(resolve(f, p, err));
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

static int64_t sign_extend(uint64_t code, unsigned bits, bool is_signed) {
  if (is_signed && bits < 64 && ((code >> (bits - 1u)) & 1u) != 0)
    return (int64_t)code - ((int64_t)1 << bits);
  return (int64_t)code;
}

HurrayStatus hurray_quant_dequantize_f32(const HurrayDescriptorFields *f,
                                         const void *const *buffers, const uint64_t *sizes,
                                         float *out, uint64_t out_count, HurrayError *err) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
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
  uint64_t avail = sizes[0] - f->byte_offset;

  /* Storage strides over the padded shape, and row-major strides over the
   * dimensions other than `axis` (the "outer" index of the block formula).
   * No overflow: every product is bounded by `storage` or `count`. */
  uint32_t r = f->rank;
  uint64_t st[HURRAY_MAX_RANK], ost[HURRAY_MAX_RANK], idx[HURRAY_MAX_RANK];
  uint64_t padded_axis = 0, nbpa = 0;
  if (p.has_axis && p.block_size != 0) {
    nbpa = f->shape[p.axis] / p.block_size + (f->shape[p.axis] % p.block_size != 0);
    padded_axis = p.pads_blocks ? nbpa * p.block_size : f->shape[p.axis];
  }
  for (uint32_t k = 0; k < r; k++) {
    uint32_t j = col ? k : r - 1u - k; /* fastest-varying storage dimension first */
    uint64_t prev_extent = 1, prev_stride = 1;
    if (k > 0) {
      uint32_t pj = col ? j - 1u : j + 1u;
      prev_extent = (p.has_axis && p.block_size != 0 && pj == p.axis) ? padded_axis
                                                                       : f->shape[pj];
      prev_stride = st[pj];
    }
    st[j] = k == 0 ? 1 : prev_stride * prev_extent;
    idx[j] = 0;
  }
  uint64_t acc = 1;
  for (uint32_t k = r; k-- > 0;) {
    ost[k] = acc;
    if (!p.has_axis || k != p.axis) acc *= f->shape[k];
  }

  const HurrayDtypeInfo *info = hurray_dtype_info(f->type_tag);
  bool is_float = (info->flags & HURRAY_DTF_FLOAT) != 0;
  bool is_signed = (info->flags & HURRAY_DTF_SIGNED) != 0;
  const float *lut = hurray_nf4_table();
  for (uint64_t e = 0; e < count; e++) {
    uint64_t so = 0, outer = 0;
    for (uint32_t j = 0; j < r; j++) {
      so += idx[j] * st[j];
      if (!p.has_axis || j != p.axis) outer += idx[j] * ost[j];
    }
    uint64_t code;
    HurrayStatus s = hurray_value_get_code(f->type_tag, data, avail, so, &code);
    if (s != HURRAY_OK)
      return hurray__fail(err, HURRAY_ERR_INTERNAL, HURRAY_NO_OFFSET, "buffers[0]",
                          "storage element %llu could not be read",
                          (unsigned long long)so); /* not reached: bounds checked above */
    uint64_t entry = 0;
    if (p.has_axis)
      entry = p.block_size == 0 ? idx[p.axis] : outer * nbpa + idx[p.axis] / p.block_size;
    float v;
    switch (q->scheme) {
      case HURRAY_QUANT_PER_TENSOR_AFFINE: {
        int64_t d = sign_extend(code, info->bit_width, is_signed) - q->u.per_tensor.zero_point;
        v = (float)d * q->u.per_tensor.scale;
        break;
      }
      case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      case HURRAY_QUANT_PER_BLOCK_AFFINE: {
        int64_t d = sign_extend(code, info->bit_width, is_signed) - zero_point_at(&a, entry);
        v = (float)d * scale_at(&p, &a, entry);
        break;
      }
      case HURRAY_QUANT_NF4:
        v = scale_at(&p, &a, entry) * lut[code & 0xFu];
        break;
      default: { /* MXFP */
        float x;
        if (is_float) {
          double dv = 0.0;
          /* a float element type: cannot fail (NaN if it ever did) */
          x = hurray_value_code_to_double(f->type_tag, code, &dv) == HURRAY_OK
                  ? (float)dv /* exact: these formats are subsets of float32 */
                  : NAN;
        } else {
          x = (float)sign_extend(code, info->bit_width, true);
        }
        v = scale_at(&p, &a, entry) * x;
        break;
      }
    }
    out[e] = v;
    for (uint32_t j = r; j-- > 0;) { /* next logical index, row-major */
      if (++idx[j] < f->shape[j]) break;
      idx[j] = 0;
    }
  }
  return HURRAY_OK;
}
