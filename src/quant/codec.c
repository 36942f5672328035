/* Quantization payload parse / encode (src/internal/validate.h; spec:
 * quantization.md § Descriptor Header and quantization/\*.md § Binary Encoding). */
#include "quant/quant_internal.h"

/* Payload offsets (from the scheme_tag byte). */
enum {
  PT_SCALE = 4, PT_ZERO_POINT = 8, PT_RESERVED = 12,                      /* 0x01 */
  PC_AXIS = 4, PC_SCALE_IDX = 8, PC_ZP_IDX = 12, PC_SCALE_TYPE = 16,
  PC_RESERVED = 17,                                                      /* 0x02 */
  PB_AXIS = 4, PB_BLOCK = 8, PB_SCALE_IDX = 12, PB_ZP_IDX = 16, PB_SCALE_TYPE = 20,
  PB_RESERVED = 21,                                                      /* 0x03 */
  NB_AXIS = 4, NB_BLOCK = 8, NB_SCALE_IDX = 12                           /* 0x04, 0x05 */
};

uint32_t hurray__quant_scheme_len(uint8_t scheme) {
  switch (scheme) {
#define HURRAY_X_(t, NAME, name, len) \
  case (t):                           \
    return (len);
    HURRAY_QUANT_SCHEME_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      return 0;
  }
}

uint16_t hurray__quant_defined_flags(uint8_t scheme) {
  return (scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE || scheme == HURRAY_QUANT_PER_BLOCK_AFFINE)
             ? (uint16_t)HURRAY_QUANT_FLAG_SYMMETRIC
             : 0u;
}

static const char *scheme_label(uint8_t scheme) {
  const char *n = hurray_quant_scheme_name(scheme);
  return n != NULL ? n : "unknown scheme";
}

/* Rejects non-zero bytes raw[from .. from+n). */
static HurrayStatus check_reserved(const uint8_t *raw, uint32_t from, uint32_t n, uint64_t base,
                                   uint8_t scheme, HurrayError *err) {
  for (uint32_t i = 0; i < n; i++) {
    if (raw[from + i] != 0) {
      char path[48];
      hurray__path(path, sizeof path, "quantization.reserved[%u]", i);
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base + from + i, path,
                          "reserved byte of %s is 0x%02X, must be 0", scheme_label(scheme),
                          raw[from + i]);
    }
  }
  return HURRAY_OK;
}

HurrayStatus hurray__quant_parse(const uint8_t *raw, uint32_t len, uint32_t options,
                                 uint64_t base, HurrayQuantization *q, HurrayError *err) {
  memset(q, 0, sizeof *q);
  if (len < HURRAY_QUANT_HEADER_LEN)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base >= 4 ? base - 4 : base,
                        "quantization_length",
                        "payload of %u bytes is shorter than the 4-byte scheme header", len);
  q->scheme = raw[0];
  q->version = raw[1];
  q->flags = hurray__ld16(raw + 2);
  q->raw = raw;
  q->raw_len = len;

  switch (hurray_quant_scheme_kind(q->scheme)) {
    case HURRAY_TAG_INVALID:
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base, "quantization.scheme_tag",
                          "scheme tag 0x%02X is invalid", q->scheme);
    case HURRAY_TAG_PRIVATE:
      return HURRAY_OK; /* payload beyond the header is private: kept opaque */
    case HURRAY_TAG_UNASSIGNED:
    case HURRAY_TAG_RESERVED:
      if ((options & HURRAY_DECODE_PERMISSIVE) != 0) return HURRAY_OK; /* relayed opaque */
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base, "quantization.scheme_tag",
                          "scheme tag 0x%02X is not defined by this version of the format",
                          q->scheme);
    case HURRAY_TAG_NAMED:
      break;
  }

  /* quantization.md § Version Compatibility: a version newer than the highest
   * one defined is rejected (in every mode: only unknown scheme tags have a
   * permissive exception); 0 was never defined. */
  if (q->version != HURRAY_QUANT_SCHEME_VERSION)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base + 1,
                        "quantization.scheme_version",
                        "%s scheme_version %u is not supported (only version %u is defined)",
                        scheme_label(q->scheme), q->version, HURRAY_QUANT_SCHEME_VERSION);
  uint16_t undefined = (uint16_t)(q->flags & ~hurray__quant_defined_flags(q->scheme));
  if (undefined != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base + 2, "quantization.flags",
                        "%s flags 0x%04X set reserved bits 0x%04X", scheme_label(q->scheme),
                        q->flags, undefined);
  uint32_t need = hurray__quant_scheme_len(q->scheme);
  if (len < need)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base >= 4 ? base - 4 : base,
                        "quantization_length",
                        "%s payload needs %u bytes, quantization_length is %u",
                        scheme_label(q->scheme), need, len);

  switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      q->u.per_tensor.scale = hurray__f32_from_bits(hurray__ld32(raw + PT_SCALE));
      q->u.per_tensor.zero_point = (int32_t)hurray__ld32(raw + PT_ZERO_POINT);
      return check_reserved(raw, PT_RESERVED, 4, base, q->scheme, err);
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      q->u.per_channel.axis = hurray__ld32(raw + PC_AXIS);
      q->u.per_channel.scale_buffer_index = hurray__ld32(raw + PC_SCALE_IDX);
      q->u.per_channel.zero_point_buffer_index = hurray__ld32(raw + PC_ZP_IDX);
      q->u.per_channel.scale_type = raw[PC_SCALE_TYPE];
      return check_reserved(raw, PC_RESERVED, 3, base, q->scheme, err);
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      q->u.per_block.axis = hurray__ld32(raw + PB_AXIS);
      q->u.per_block.block_size = hurray__ld32(raw + PB_BLOCK);
      q->u.per_block.scale_buffer_index = hurray__ld32(raw + PB_SCALE_IDX);
      q->u.per_block.zero_point_buffer_index = hurray__ld32(raw + PB_ZP_IDX);
      q->u.per_block.scale_type = raw[PB_SCALE_TYPE];
      return check_reserved(raw, PB_RESERVED, 3, base, q->scheme, err);
    case HURRAY_QUANT_NF4:
      q->u.nf4.axis = hurray__ld32(raw + NB_AXIS);
      q->u.nf4.block_size = hurray__ld32(raw + NB_BLOCK);
      q->u.nf4.scale_buffer_index = hurray__ld32(raw + NB_SCALE_IDX);
      return HURRAY_OK;
    default: /* HURRAY_QUANT_MXFP */
      q->u.mxfp.axis = hurray__ld32(raw + NB_AXIS);
      q->u.mxfp.block_size = hurray__ld32(raw + NB_BLOCK);
      q->u.mxfp.scale_buffer_index = hurray__ld32(raw + NB_SCALE_IDX);
      return HURRAY_OK;
  }
}

uint32_t hurray__quant_encoded_len(const HurrayQuantization *q) {
  if (q->raw != NULL) return q->raw_len;
  uint32_t n = hurray__quant_scheme_len(q->scheme);
  return n != 0 ? n : HURRAY_QUANT_HEADER_LEN;
}

void hurray__quant_encode(const HurrayQuantization *q, uint8_t *out) {
  if (q->raw != NULL) {
    if (q->raw_len > 0) memcpy(out, q->raw, q->raw_len);
    return;
  }
  uint32_t n = hurray__quant_encoded_len(q);
  memset(out, 0, n); /* reserved bytes */
  out[0] = q->scheme;
  out[1] = q->version;
  hurray__st16(out + 2, q->flags);
  switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      hurray__st32(out + PT_SCALE, hurray__f32_bits(q->u.per_tensor.scale));
      hurray__st32(out + PT_ZERO_POINT, (uint32_t)q->u.per_tensor.zero_point);
      break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      hurray__st32(out + PC_AXIS, q->u.per_channel.axis);
      hurray__st32(out + PC_SCALE_IDX, q->u.per_channel.scale_buffer_index);
      hurray__st32(out + PC_ZP_IDX, q->u.per_channel.zero_point_buffer_index);
      out[PC_SCALE_TYPE] = q->u.per_channel.scale_type;
      break;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      hurray__st32(out + PB_AXIS, q->u.per_block.axis);
      hurray__st32(out + PB_BLOCK, q->u.per_block.block_size);
      hurray__st32(out + PB_SCALE_IDX, q->u.per_block.scale_buffer_index);
      hurray__st32(out + PB_ZP_IDX, q->u.per_block.zero_point_buffer_index);
      out[PB_SCALE_TYPE] = q->u.per_block.scale_type;
      break;
    case HURRAY_QUANT_NF4:
      hurray__st32(out + NB_AXIS, q->u.nf4.axis);
      hurray__st32(out + NB_BLOCK, q->u.nf4.block_size);
      hurray__st32(out + NB_SCALE_IDX, q->u.nf4.scale_buffer_index);
      break;
    case HURRAY_QUANT_MXFP:
      hurray__st32(out + NB_AXIS, q->u.mxfp.axis);
      hurray__st32(out + NB_BLOCK, q->u.mxfp.block_size);
      hurray__st32(out + NB_SCALE_IDX, q->u.mxfp.scale_buffer_index);
      break;
    default:
      break; /* private or unknown scheme without raw bytes: header only */
  }
}

bool hurray__quant_param_buffer_count(const HurrayQuantization *q, uint32_t *out) {
  HurrayQuantPlan p;
  if (!hurray__quant_plan_init(q, &p)) return false;
  uint32_t n = 0;
  if (p.scale_index != HURRAY_QUANT_NO_BUFFER) n++;
  if (p.zp_index != HURRAY_QUANT_NO_BUFFER && p.zp_index != p.scale_index) n++;
  *out = n;
  return true;
}

bool hurray__quant_plan_init(const HurrayQuantization *q, HurrayQuantPlan *p) {
  memset(p, 0, sizeof *p);
  p->scale_index = HURRAY_QUANT_NO_BUFFER;
  p->zp_index = HURRAY_QUANT_NO_BUFFER;
  p->symmetric = true;
  switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      return true;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      p->has_axis = true;
      p->axis = q->u.per_channel.axis;
      p->symmetric = (q->flags & HURRAY_QUANT_FLAG_SYMMETRIC) != 0;
      p->scale_index = q->u.per_channel.scale_buffer_index;
      if (!p->symmetric) p->zp_index = q->u.per_channel.zero_point_buffer_index;
      p->scale_tag = HURRAY_DTYPE_FLOAT32;
      p->scale_width = 4;
      return true;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      p->has_axis = true;
      p->axis = q->u.per_block.axis;
      p->block_size = q->u.per_block.block_size;
      p->symmetric = (q->flags & HURRAY_QUANT_FLAG_SYMMETRIC) != 0;
      p->scale_index = q->u.per_block.scale_buffer_index;
      if (!p->symmetric) p->zp_index = q->u.per_block.zero_point_buffer_index;
      p->scale_tag = q->u.per_block.scale_type;
      p->scale_width = q->u.per_block.scale_type == HURRAY_QUANT_SCALE_F32 ? 4u : 2u;
      p->pads_blocks = true;
      return true;
    case HURRAY_QUANT_NF4:
      p->has_axis = true;
      p->axis = q->u.nf4.axis;
      p->block_size = q->u.nf4.block_size;
      p->scale_index = q->u.nf4.scale_buffer_index;
      p->pads_blocks = true;
      p->scale_tag = HURRAY_DTYPE_FLOAT32;
      p->scale_width = 4;
      return true;
    case HURRAY_QUANT_MXFP:
      p->has_axis = true;
      p->axis = q->u.mxfp.axis;
      p->block_size = q->u.mxfp.block_size;
      p->scale_index = q->u.mxfp.scale_buffer_index;
      p->scale_tag = HURRAY_DTYPE_FLOAT8_E8M0;
      p->scale_width = 1;
      return true;
    default:
      return false;
  }
}

/* ceil(s / k) for k > 0. */
static uint64_t div_ceil(uint64_t s, uint64_t k) { return s / k + (s % k != 0); }

int hurray__quant_plan_entries(const HurrayDescriptorFields *f, HurrayQuantPlan *p) {
  uint64_t n = 0;
  if (!p->has_axis) {
    n = 0; /* per-tensor */
  } else if (p->block_size == 0) {
    n = f->shape[p->axis]; /* per-channel */
  } else if (f->layout.tag == HURRAY_LAYOUT_BLOCK_PAGED) {
    /* block-paged.md § Scale-buffer size: one entry per physical page slot. */
    if (hurray__mul_overflow_u64(f->layout.u.block_paged.num_pages,
                                 f->layout.u.block_paged.page_size, &n))
      return HURRAY_QP_OVERFLOW;
  } else {
    n = div_ceil(f->shape[p->axis], p->block_size);
    bool zero = n == 0, dynamic = false;
    for (uint32_t j = 0; j < f->rank; j++) {
      if (j == p->axis) continue;
      if (f->shape[j] == HURRAY_DYNAMIC_DIM)
        dynamic = true;
      else if (f->shape[j] == 0)
        zero = true;
    }
    if (dynamic) return HURRAY_QP_DYNAMIC;
    if (zero) {
      n = 0;
    } else {
      for (uint32_t j = 0; j < f->rank; j++)
        if (j != p->axis && hurray__mul_overflow_u64(n, f->shape[j], &n))
          return HURRAY_QP_OVERFLOW;
    }
  }
  p->entries = n;
  if (hurray__mul_overflow_u64(n, p->scale_width, &p->scale_bytes)) return HURRAY_QP_OVERFLOW;
  p->zp_bytes = 0;
  if (p->zp_index != HURRAY_QUANT_NO_BUFFER &&
      hurray__mul_overflow_u64(n, 4, &p->zp_bytes))
    return HURRAY_QP_OVERFLOW;
  return HURRAY_QP_OK;
}

int hurray__quant_storage_count(const HurrayDescriptorFields *f, const HurrayQuantPlan *p,
                                uint64_t *out) {
  bool pads = p->pads_blocks;
  bool zero = false;
  for (uint32_t j = 0; j < f->rank; j++) {
    if (f->shape[j] == HURRAY_DYNAMIC_DIM) return HURRAY_QP_DYNAMIC;
    if (f->shape[j] == 0) zero = true;
  }
  if (zero) {
    *out = 0;
    return HURRAY_QP_OK;
  }
  uint64_t n = 1;
  for (uint32_t j = 0; j < f->rank; j++) {
    uint64_t d = f->shape[j];
    if (pads && j == p->axis &&
        hurray__mul_overflow_u64(div_ceil(d, p->block_size), p->block_size, &d))
      return HURRAY_QP_OVERFLOW;
    if (hurray__mul_overflow_u64(n, d, &n)) return HURRAY_QP_OVERFLOW;
  }
  *out = n;
  return HURRAY_QP_OK;
}
