/*
 * What a quantizer's caller asks for, made a scheme (include/hurray/quant.h,
 * hurray_quant_request_resolve): which scheme the arguments name or imply,
 * the defaults each scheme takes (axis, block size, scale type), what does
 * not apply to it, then the scheme's own rules (hurray_quant_check). The
 * bindings only convert their arguments into a HurrayQuantRequest.
 */
#include <stdio.h>
#include <string.h>

#include "quant/quant_internal.h"

#define AFFINE_SUFFIX "_affine"

/* The named scheme `name` spells: a table name, or an affine scheme's name
 * without "_affine". 0 for none. */
static uint8_t scheme_by_name(const char *name) {
  size_t n = strlen(name);
  for (unsigned t = 1; t < HURRAY_QUANT_PRIVATE_FIRST; t++) {
    const char *s = hurray_quant_scheme_name((uint8_t)t);
    if (s == NULL) continue;
    size_t len = strlen(s), suffix = strlen(AFFINE_SUFFIX);
    if (strcmp(s, name) == 0 ||
        (len > suffix && n == len - suffix && strcmp(s + n, AFFINE_SUFFIX) == 0 &&
         strncmp(s, name, n) == 0))
      return (uint8_t)t;
  }
  return 0;
}

#define BAD(field, ...) \
  hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field, __VA_ARGS__)

/* The names of the named schemes, for a message: "per_tensor_affine, ...". */
static const char *scheme_names(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned t = 1; t < HURRAY_QUANT_PRIVATE_FIRST && used < size; t++) {
    const char *s = hurray_quant_scheme_name((uint8_t)t);
    if (s != NULL)
      used += (size_t)snprintf(buf + used, size - used, "%s%s", used == 0 ? "" : ", ", s);
  }
  return buf;
}

HurrayStatus hurray_quant_request_resolve(const HurrayQuantRequest *req, uint32_t rank,
                                          HurrayQuantization *out, uint32_t *out_buffer_count,
                                          HurrayError *err) {
  if (req == NULL || out == NULL || out_buffer_count == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "req, out and out_buffer_count are required");
  const HurrayDtypeInfo *storage = hurray_dtype_info(req->storage_type);
  if (storage == NULL)
    return BAD("request.storage_type",
                        "type 0x%02X is not a named type: a private type cannot be a quantized "
                        "storage type", req->storage_type);
  uint8_t s;
  if (req->scheme != NULL) {
    s = scheme_by_name(req->scheme);
    char names[128];
    if (s == 0)
      return BAD("request.scheme",
                          "'%s' names no scheme: %s (the affine ones also without "
                          "\"_affine\")",
                          req->scheme, scheme_names(names, sizeof names));
  } else if ((storage->flags & HURRAY_DTF_FLOAT) &&
             hurray__quant_storage_allowed(HURRAY_QUANT_MXFP, req->storage_type)) {
    s = HURRAY_QUANT_MXFP; /* a small float holds block-scaled values only */
  } else if (req->has_block_size) {
    s = HURRAY_QUANT_PER_BLOCK_AFFINE;
  } else if (req->has_axis) {
    s = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  } else {
    s = HURRAY_QUANT_PER_TENSOR_AFFINE;
  }
  const char *name = hurray_quant_scheme_name(s);
  bool blocks = s == HURRAY_QUANT_PER_BLOCK_AFFINE || s == HURRAY_QUANT_NF4 ||
                s == HURRAY_QUANT_MXFP;
  bool zero_points = s == HURRAY_QUANT_PER_TENSOR_AFFINE ||
                     s == HURRAY_QUANT_PER_CHANNEL_AFFINE || s == HURRAY_QUANT_PER_BLOCK_AFFINE;

  if (req->asymmetric && !zero_points)
    return BAD("request.asymmetric", "%s has no zero point: it is always symmetric", name);
  uint32_t axis = 0;
  if (s == HURRAY_QUANT_PER_TENSOR_AFFINE) {
    if (req->has_axis) return BAD("request.axis", "%s takes no axis", name);
  } else {
    if (!req->has_axis && s == HURRAY_QUANT_PER_CHANNEL_AFFINE)
      return BAD("request.axis", "%s needs an axis", name);
    if (rank == 0)
      return BAD("request.axis", "a scalar has no axis to quantize along: use %s",
                 hurray_quant_scheme_name(HURRAY_QUANT_PER_TENSOR_AFFINE));
    int64_t ax = req->has_axis ? req->axis : (int64_t)rank - 1; /* default: the last axis */
    if (ax < -(int64_t)rank || ax >= (int64_t)rank)
      return BAD("request.axis",
                          "axis %lld is outside [%lld, %u] for a rank-%u tensor",
                          (long long)ax, -(long long)rank, rank - 1u, rank);
    axis = (uint32_t)(ax < 0 ? ax + (int64_t)rank : ax);
  }
  uint32_t block = 0;
  if (!blocks && req->has_block_size)
    return BAD("request.block_size",
               "%s has no blocks (a block size applies to %s, nf4 and mxfp)", name,
               hurray_quant_scheme_name(HURRAY_QUANT_PER_BLOCK_AFFINE));
  if (blocks) {
    /* bitsandbytes' NF4 blocks and OCP MX's */
    uint64_t k = req->has_block_size ? req->block_size : s == HURRAY_QUANT_NF4 ? 64u : 32u;
    if (k > UINT32_MAX)
      return BAD("request.block_size", "block size %llu exceeds 2^32 - 1",
                          (unsigned long long)k);
    block = (uint32_t)k;
  }
  uint8_t own = s == HURRAY_QUANT_MXFP ? HURRAY_DTYPE_FLOAT8_E8M0 : HURRAY_DTYPE_FLOAT32;
  uint8_t scale = req->scale_type != 0 ? req->scale_type : own;
  bool scale_ok = s == HURRAY_QUANT_PER_BLOCK_AFFINE
                      ? scale == HURRAY_QUANT_SCALE_F16 || scale == HURRAY_QUANT_SCALE_BF16 ||
                            scale == HURRAY_QUANT_SCALE_F32
                      : scale == own;
  if (!scale_ok) {
    const char *tn = hurray_dtype_name(scale);
    if (s == HURRAY_QUANT_PER_BLOCK_AFFINE)
      return BAD("request.scale_type", "%s scales are float16, bfloat16 or float32, not %s",
                 name, tn != NULL ? tn : "a private type");
    return BAD("request.scale_type",
                        "%s scales are %s (the format fixes them), not %s", name,
                        hurray_dtype_name(own), tn != NULL ? tn : "a private type");
  }

  /* Parameter buffers from 1: the scales, then the zero points. */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = s;
  q.version = HURRAY_QUANT_SCHEME_VERSION;
  bool symmetric = !req->asymmetric;
  uint32_t zp = symmetric ? HURRAY_QUANT_NO_BUFFER : 2u;
  uint32_t n = 2;
  switch (s) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
      q.u.per_tensor.scale = 1.0f; /* inline: the quantizer computes it */
      n = 1;
      break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      q.u.per_channel.axis = axis;
      q.u.per_channel.scale_buffer_index = 1;
      q.u.per_channel.zero_point_buffer_index = zp;
      q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
      break;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      q.u.per_block.axis = axis;
      q.u.per_block.block_size = block;
      q.u.per_block.scale_buffer_index = 1;
      q.u.per_block.zero_point_buffer_index = zp;
      q.u.per_block.scale_type = scale;
      break;
    case HURRAY_QUANT_NF4:
      q.u.nf4.axis = axis;
      q.u.nf4.block_size = block;
      q.u.nf4.scale_buffer_index = 1;
      break;
    default:
      q.u.mxfp.axis = axis;
      q.u.mxfp.block_size = block;
      q.u.mxfp.scale_buffer_index = 1;
      break;
  }
  if (s == HURRAY_QUANT_PER_CHANNEL_AFFINE || s == HURRAY_QUANT_PER_BLOCK_AFFINE) {
    if (symmetric)
      q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
    else
      n = 3;
  }
  HurrayStatus rc = hurray_quant_check(&q, HURRAY_DECODE_STRICT, err);
  if (rc != HURRAY_OK) return rc;
  *out = q;
  *out_buffer_count = n;
  return HURRAY_OK;
}
