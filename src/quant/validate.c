/* Quantization semantics against the rest of the descriptor (src/internal/validate.h;
 * spec: quantization.md, quantization/\*.md, layouts/block-paged.md § Quantization
 * Compatibility, layouts/csf.md § Quantization Compatibility, buffer-protocol.md
 * § Device Colocation). */
#include <math.h>
#include <stdio.h>

#include "quant/quant_internal.h"

/* ---- storage types -------------------------------------------------------------- */

bool hurray__quant_storage_allowed(uint8_t scheme, uint8_t t) {
  switch (scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      return t == HURRAY_DTYPE_INT8 || t == HURRAY_DTYPE_UINT8 || t == HURRAY_DTYPE_INT16 ||
             t == HURRAY_DTYPE_UINT16 || t == HURRAY_DTYPE_INT32 || t == HURRAY_DTYPE_UINT32 ||
             t == HURRAY_DTYPE_INT4 || t == HURRAY_DTYPE_UINT4 || t == HURRAY_DTYPE_INT2 ||
             t == HURRAY_DTYPE_UINT2;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      return t == HURRAY_DTYPE_INT8 || t == HURRAY_DTYPE_UINT8 || t == HURRAY_DTYPE_INT4 ||
             t == HURRAY_DTYPE_UINT4 || t == HURRAY_DTYPE_INT2 || t == HURRAY_DTYPE_UINT2;
    case HURRAY_QUANT_NF4:
      return t == HURRAY_DTYPE_UINT4;
    case HURRAY_QUANT_MXFP:
      return t == HURRAY_DTYPE_FLOAT8_E4M3 || t == HURRAY_DTYPE_FLOAT8_E5M2 ||
             t == HURRAY_DTYPE_FLOAT4_E2M1 || t == HURRAY_DTYPE_FLOAT6_E2M3 ||
             t == HURRAY_DTYPE_FLOAT6_E3M2 || t == HURRAY_DTYPE_INT8 || t == HURRAY_DTYPE_INT4;
    default:
      return false;
  }
}

static const char *allowed_list(uint8_t scheme) {
  switch (scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      return "int8, uint8, int16, uint16, int32, uint32, int4, uint4, int2, uint2";
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      return "int8, uint8, int4, uint4, int2, uint2";
    case HURRAY_QUANT_NF4:
      return "uint4";
    default:
      return "float8_e4m3, float8_e5m2, float4_e2m1, float6_e2m3, float6_e3m2, int8, int4";
  }
}

bool hurray__quant_int_range(uint8_t t, int64_t *lo, int64_t *hi) {
  switch (t) {
    case HURRAY_DTYPE_INT8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case HURRAY_DTYPE_UINT8: *lo = 0; *hi = UINT8_MAX; return true;
    case HURRAY_DTYPE_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case HURRAY_DTYPE_UINT16: *lo = 0; *hi = UINT16_MAX; return true;
    case HURRAY_DTYPE_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case HURRAY_DTYPE_UINT32: *lo = 0; *hi = UINT32_MAX; return true;
    case HURRAY_DTYPE_INT4: *lo = -8; *hi = 7; return true;
    case HURRAY_DTYPE_UINT4: *lo = 0; *hi = 15; return true;
    case HURRAY_DTYPE_INT2: *lo = -2; *hi = 1; return true;
    case HURRAY_DTYPE_UINT2: *lo = 0; *hi = 3; return true;
    default: return false;
  }
}

/* ---- context ---------------------------------------------------------------------- */

typedef struct Ctx {
  const HurrayDescriptorFields *f;
  const HurrayQuantization *q;
  const HurrayOffsets *o; /* NULL: no byte offsets */
  uint32_t options;
  HurrayError *err;
  const char *name;       /* scheme name for messages */
} Ctx;

/* Byte offset of payload byte k (payload = the scheme_tag byte onwards). */
static uint64_t pay(const Ctx *c, uint64_t k) {
  return c->o == NULL ? HURRAY_NO_OFFSET : c->o->quantization + 4u + k;
}

/* Byte offset of byte k of buffer handle i. */
static uint64_t handle(const Ctx *c, uint32_t i, uint64_t k) {
  return c->o == NULL ? HURRAY_NO_OFFSET : c->o->buffer_table + 1u + 16u * (uint64_t)i + k;
}

static HurrayStatus qfail(const Ctx *c, uint64_t k, const char *field, const char *why) {
  return hurray__fail(c->err, HURRAY_ERR_INVALID_QUANTIZATION, pay(c, k), field, "%s: %s",
                      c->name, why);
}

/* Payload offsets of the fields the rules below talk about. */
typedef struct Fields {
  uint32_t axis, block, scale_idx, zp_idx, scale_type;
} Fields;

static Fields field_offsets(uint8_t scheme) {
  Fields fo = {4, 8, 12, 16, 20}; /* per-block affine */
  if (scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE) {
    fo.block = 0;
    fo.scale_idx = 8;
    fo.zp_idx = 12;
    fo.scale_type = 16;
  } else if (scheme == HURRAY_QUANT_NF4 || scheme == HURRAY_QUANT_MXFP) {
    fo.zp_idx = 0;
    fo.scale_type = 0;
  }
  return fo;
}

/* ---- scheme rules ------------------------------------------------------------------ */

static HurrayStatus check_per_tensor(const Ctx *c) {
  float s = c->q->u.per_tensor.scale;
  char why[160];
  if (!isfinite(s) || s == 0.0f) {
    snprintf(why, sizeof why, "scale must be finite and non-zero, got %g (bits 0x%08X)",
             (double)s, hurray__f32_bits(s));
    return qfail(c, 4, "quantization.scale", why);
  }
  int64_t lo, hi, z = c->q->u.per_tensor.zero_point;
  if (hurray__quant_int_range(c->f->type_tag, &lo, &hi) && (z < lo || z > hi)) {
    snprintf(why, sizeof why, "zero_point %lld is outside the %s range [%lld, %lld]",
             (long long)z, hurray_dtype_name(c->f->type_tag), (long long)lo, (long long)hi);
    return qfail(c, 8, "quantization.zero_point", why);
  }
  return HURRAY_OK;
}

/* axis, block size, scale type and SYMMETRIC rules of the axis schemes. */
static HurrayStatus check_axis_scheme(const Ctx *c, const HurrayQuantPlan *p) {
  const HurrayDescriptorFields *f = c->f;
  uint8_t scheme = c->q->scheme;
  Fields fo = field_offsets(scheme);
  bool paged = f->layout.tag == HURRAY_LAYOUT_BLOCK_PAGED;
  char why[200];

  if (p->axis >= f->rank) {
    snprintf(why, sizeof why, "axis %u must be less than the rank %u", p->axis, f->rank);
    return qfail(c, fo.axis, "quantization.axis", why);
  }
  uint64_t extent = f->shape[p->axis];
  if (extent == HURRAY_DYNAMIC_DIM) {
    snprintf(why, sizeof why, "shape[%u] (the quantized axis) must not be dynamic", p->axis);
    return qfail(c, fo.axis, "quantization.axis", why);
  }

  if (scheme != HURRAY_QUANT_PER_CHANNEL_AFFINE) {
    uint32_t k = p->block_size, min = 2, max = UINT32_MAX;
    if (scheme == HURRAY_QUANT_NF4) min = 8;
    if (scheme == HURRAY_QUANT_MXFP) {
      min = 16;
      max = 2048;
    }
    if (!hurray__is_pow2_u64(k) || k < min || k > max) {
      if (max == UINT32_MAX)
        snprintf(why, sizeof why, "block_size %u must be a power of two >= %u", k, min);
      else
        snprintf(why, sizeof why, "block_size %u must be a power of two in [%u, %u]", k, min,
                 max);
      return qfail(c, fo.block, "quantization.block_size", why);
    }
    if (scheme == HURRAY_QUANT_MXFP) {
      if (extent == 0 || extent % k != 0) {
        snprintf(why, sizeof why,
                 "shape[%u] = %llu must be a positive multiple of block_size %u (MXFP has no "
                 "partial blocks)",
                 p->axis, (unsigned long long)extent, k);
        return qfail(c, fo.block, "quantization.block_size", why);
      }
    } else if (extent > 0 && k > extent && !(paged && scheme == HURRAY_QUANT_PER_BLOCK_AFFINE)) {
      /* On block-paged, per-block's block_size is pinned to page_size instead
       * (checked below): a batch may hold fewer tokens than one page. */
      snprintf(why, sizeof why, "block_size %u exceeds shape[%u] = %llu", k, p->axis,
               (unsigned long long)extent);
      return qfail(c, fo.block, "quantization.block_size", why);
    }
  }

  if (scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE &&
      c->q->u.per_channel.scale_type != HURRAY_QUANT_SCALE_F32) {
    snprintf(why, sizeof why, "scale_type_tag 0x%02X must be 0x03 (float32) in scheme version 1",
             c->q->u.per_channel.scale_type);
    return qfail(c, fo.scale_type, "quantization.scale_type_tag", why);
  }
  if (scheme == HURRAY_QUANT_PER_BLOCK_AFFINE) {
    uint8_t st = c->q->u.per_block.scale_type;
    if (st != HURRAY_QUANT_SCALE_F16 && st != HURRAY_QUANT_SCALE_BF16 &&
        st != HURRAY_QUANT_SCALE_F32) {
      snprintf(why, sizeof why,
               "scale_type_tag 0x%02X must be 0x01 (float16), 0x02 (bfloat16) or 0x03 (float32)",
               st);
      return qfail(c, fo.scale_type, "quantization.scale_type_tag", why);
    }
  }

  if (scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE || scheme == HURRAY_QUANT_PER_BLOCK_AFFINE) {
    uint32_t zp = scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE
                      ? c->q->u.per_channel.zero_point_buffer_index
                      : c->q->u.per_block.zero_point_buffer_index;
    /* Both flag tables say the index MUST be 0xFFFFFFFF when SYMMETRIC is set
     * (per-block's field table only says "SHOULD"; the flag table's MUST wins),
     * and the sentinel names no buffer, so an asymmetric scheme cannot use it. */
    if (p->symmetric && zp != HURRAY_QUANT_NO_BUFFER) {
      snprintf(why, sizeof why,
               "SYMMETRIC is set, so zero_point_buffer_index must be 0xFFFFFFFF, got %u", zp);
      return qfail(c, fo.zp_idx, "quantization.zero_point_buffer_index", why);
    }
    if (!p->symmetric && zp == HURRAY_QUANT_NO_BUFFER)
      return qfail(c, fo.zp_idx, "quantization.zero_point_buffer_index",
                   "zero_point_buffer_index is 0xFFFFFFFF (no buffer) but SYMMETRIC is not set");
  }

  if (paged) {
    /* block-paged.md § Per-scheme composition. */
    if (scheme == HURRAY_QUANT_PER_CHANNEL_AFFINE && p->axis == 0)
      return qfail(c, fo.axis, "quantization.axis",
                   "per-channel quantization of a block-paged tensor must use axis 1 "
                   "(num_heads) or 2 (head_dim), not the paged axis 0");
    if (scheme == HURRAY_QUANT_PER_BLOCK_AFFINE) {
      if (p->axis != 0) {
        snprintf(why, sizeof why,
                 "per-block quantization of a block-paged tensor must use axis 0, got %u",
                 p->axis);
        return qfail(c, fo.axis, "quantization.axis", why);
      }
      if (p->block_size != f->layout.u.block_paged.page_size) {
        snprintf(why, sizeof why,
                 "per-block quantization of a block-paged tensor needs block_size == "
                 "page_size (%u), got %u",
                 f->layout.u.block_paged.page_size, p->block_size);
        return qfail(c, fo.block, "quantization.block_size", why);
      }
    }
  }
  return HURRAY_OK;
}

/* Placement of one parameter buffer index (quantization.md § Buffer Table
 * Placement Rules). */
static HurrayStatus check_index(const Ctx *c, uint32_t idx, uint32_t field_off,
                                const char *field, uint32_t base) {
  const HurrayDescriptorFields *f = c->f;
  if (idx >= f->buffer_count)
    return hurray__fail(c->err, HURRAY_ERR_INVALID_BUFFER_TABLE, pay(c, field_off), field,
                        "%s: buffer %u does not exist (buffer_count is %u)", c->name, idx,
                        f->buffer_count);
  if (idx < base)
    return hurray__fail(c->err, HURRAY_ERR_INVALID_BUFFER_TABLE, pay(c, field_off), field,
                        "%s: buffer %u belongs to the %s layout (its buffers are 0..%u); "
                        "parameter buffers follow at index %u and up",
                        c->name, idx, hurray_layout_name(f->layout.tag), base - 1u, base);
  if (f->buffers != NULL && f->buffers[idx].device_tag != f->buffers[0].device_tag) {
    char path[48];
    hurray__path(path, sizeof path, "buffers[%u].device_tag", idx);
    return hurray__fail(c->err, HURRAY_ERR_INVALID_BUFFER_TABLE, handle(c, idx, 12), path,
                        "%s parameter buffer is on device 0x%02X, the data buffer on 0x%02X",
                        c->name, f->buffers[idx].device_tag, f->buffers[0].device_tag);
  }
  return HURRAY_OK;
}

static HurrayStatus size_fail(const Ctx *c, uint32_t idx, const char *what) {
  char path[48];
  hurray__path(path, sizeof path, "buffers[%u].byte_size", idx);
  return hurray__fail(c->err, HURRAY_ERR_BUFFER_SIZE, handle(c, idx, 0), path,
                      "%s: the implied size of the %s overflows", c->name, what);
}

static HurrayStatus check_size(const Ctx *c, uint32_t idx, uint64_t need, const char *what) {
  uint64_t have = c->f->buffers[idx].byte_size;
  if (have >= need) return HURRAY_OK;
  char path[48];
  hurray__path(path, sizeof path, "buffers[%u].byte_size", idx);
  return hurray__fail(c->err, HURRAY_ERR_BUFFER_SIZE, handle(c, idx, 0), path,
                      "%s: buffer %u holds %llu bytes, the %s needs %llu", c->name, idx,
                      (unsigned long long)have, what, (unsigned long long)need);
}

static HurrayStatus check_buffers(const Ctx *c, HurrayQuantPlan *p) {
  const HurrayDescriptorFields *f = c->f;
  Fields fo = field_offsets(c->q->scheme);
  uint32_t base = 0;
  if (!hurray__layout_base_buffer_count(f->layout.tag, f->rank, &base)) return HURRAY_OK;
  if (f->buffer_count > 0 && f->buffers == NULL)
    return hurray__fail(c->err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "buffers",
                        "buffer_count is %u but the buffer table is NULL", f->buffer_count);

  HURRAY_TRY(check_index(c, p->scale_index, fo.scale_idx, "quantization.scale_buffer_index",
                         base));
  if (p->zp_index != HURRAY_QUANT_NO_BUFFER)
    HURRAY_TRY(check_index(c, p->zp_index, fo.zp_idx, "quantization.zero_point_buffer_index",
                           base));

  int r = hurray__quant_plan_entries(f, p);
  if (r == HURRAY_QP_DYNAMIC) return HURRAY_OK; /* sizes cannot be known yet */
  if (r == HURRAY_QP_OVERFLOW) return size_fail(c, p->scale_index, "parameter arrays");
  if (p->zp_index == p->scale_index) {
    uint64_t both;
    if (hurray__add_overflow_u64(p->scale_bytes, p->zp_bytes, &both))
      return size_fail(c, p->scale_index, "parameter arrays");
    HURRAY_TRY(check_size(c, p->scale_index, both, "[scales | zero_points] arrays"));
  } else {
    HURRAY_TRY(check_size(c, p->scale_index, p->scale_bytes, "scale array"));
    if (p->zp_index != HURRAY_QUANT_NO_BUFFER)
      HURRAY_TRY(check_size(c, p->zp_index, p->zp_bytes, "zero-point array"));
  }

  /* per-block-affine.md § Padding (NF4 too): a partial last block still takes
   * a full block of storage. Checked where storage order is the logical order
   * (row- and column-major); without padding the layout rules cover buffer 0. */
  if (p->pads_blocks && hurray_dtype_info(f->type_tag) != NULL &&
      f->shape[p->axis] % p->block_size != 0 &&
      (f->layout.tag == HURRAY_LAYOUT_ROW_MAJOR || f->layout.tag == HURRAY_LAYOUT_COL_MAJOR) &&
      f->buffer_count > 0) {
    uint64_t count, bytes, need;
    r = hurray__quant_storage_count(f, p, &count);
    if (r == HURRAY_QP_DYNAMIC) return HURRAY_OK;
    if (r == HURRAY_QP_OVERFLOW || hurray_buffer_size_bytes(f->type_tag, count, &bytes) != HURRAY_OK ||
        hurray__add_overflow_u64(bytes, f->byte_offset, &need))
      return size_fail(c, 0, "padded storage");
    HURRAY_TRY(check_size(c, 0, need, "padded storage (partial last block)"));
  }
  return HURRAY_OK;
}

HurrayStatus hurray__quant_validate(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                    uint32_t options, HurrayError *err) {
  const HurrayQuantization *q = f->quantization;
  if (q == NULL) return HURRAY_OK;
  Ctx c = {f, q, o, options, err, hurray_quant_scheme_name(q->scheme)};
  bool permissive = (options & HURRAY_DECODE_PERMISSIVE) != 0;
  char why[200];

  switch (hurray_quant_scheme_kind(q->scheme)) {
    case HURRAY_TAG_INVALID:
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, pay(&c, 0),
                          "quantization.scheme_tag", "scheme tag 0x%02X is invalid", q->scheme);
    case HURRAY_TAG_PRIVATE:
      return HURRAY_OK; /* semantics agreed out of band */
    case HURRAY_TAG_UNASSIGNED:
    case HURRAY_TAG_RESERVED:
      if (permissive) return HURRAY_OK;
      return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, pay(&c, 0),
                          "quantization.scheme_tag",
                          "scheme tag 0x%02X is not defined by this version of the format",
                          q->scheme);
    case HURRAY_TAG_NAMED:
      break;
  }
  if (q->version != HURRAY_QUANT_SCHEME_VERSION) {
    snprintf(why, sizeof why, "scheme_version %u is not supported (only version %u is defined)",
             q->version, HURRAY_QUANT_SCHEME_VERSION);
    return qfail(&c, 1, "quantization.scheme_version", why);
  }
  uint16_t undefined = (uint16_t)(q->flags & ~hurray__quant_defined_flags(q->scheme));
  if (undefined != 0) {
    snprintf(why, sizeof why, "flags 0x%04X set reserved bits 0x%04X", q->flags, undefined);
    return qfail(&c, 2, "quantization.flags", why);
  }

  /* Rules that need the layout: skipped for a layout this library cannot
   * interpret (permissive relays) and for the composite head, which may not
   * be quantized at all (the layout rules reject it). */
  if (hurray_layout_tag_kind(f->layout.tag) != HURRAY_TAG_NAMED ||
      f->layout.tag == HURRAY_LAYOUT_COMPOSITE)
    return HURRAY_OK;

  if (f->rank > 0 && f->shape == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "shape",
                        "rank is %u but shape is NULL", f->rank);
  HurrayTagKind tk = hurray_dtype_tag_kind(f->type_tag);
  bool unknown_type = permissive && (tk == HURRAY_TAG_UNASSIGNED || tk == HURRAY_TAG_RESERVED);
  if (!unknown_type && !hurray__quant_storage_allowed(q->scheme, f->type_tag)) {
    const char *tn = hurray_dtype_name(f->type_tag);
    char tbuf[16];
    if (tn == NULL) {
      snprintf(tbuf, sizeof tbuf, "0x%02X", f->type_tag);
      tn = tbuf;
    }
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, o == NULL ? HURRAY_NO_OFFSET : 14,
                        "type_tag", "%s does not accept storage type %s (allowed: %s)", c.name,
                        tn, allowed_list(q->scheme));
  }

  HurrayQuantPlan p;
  (void)hurray__quant_plan_init(q, &p); /* named scheme: always true */
  if (q->scheme == HURRAY_QUANT_PER_TENSOR_AFFINE) return check_per_tensor(&c);
  HURRAY_TRY(check_axis_scheme(&c, &p));
  return check_buffers(&c, &p);
}
