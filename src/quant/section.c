/*
 * A quantization section on its own (include/hurray/quant.h): decode, check
 * and encode a scheme payload without a descriptor around it. Bindings use
 * this for value objects that exist before any tensor does (the Python
 * quantization classes, hurray.decode_quantization).
 *
 * The rules are not restated here: hurray_quant_check runs the descriptor's
 * own scheme rules (hurray__quant_validate) against the most permissive
 * tensor the scheme fits, so only what a scheme states about itself can fail
 * (scale, block size, scale type, SYMMETRIC against the zero-point index,
 * parameter indices that no buffer table can satisfy).
 */
#include <string.h>

#include "quant/quant_internal.h"

/* A storage type every scheme rule accepts, with the widest zero-point range. */
static uint8_t probe_storage_type(uint8_t scheme) {
  switch (scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE:
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      return HURRAY_DTYPE_INT32;
    case HURRAY_QUANT_NF4:
      return HURRAY_DTYPE_UINT4;
    default: /* per-block affine, MXFP */
      return HURRAY_DTYPE_INT8;
  }
}

static HurrayStatus index_fail(HurrayError *err, const char *field, uint32_t idx) {
  return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET, field,
                      "%s %u names no buffer: a buffer table holds at most %u buffers and "
                      "buffer 0 always belongs to the layout",
                      field, idx, HURRAY_MAX_BUFFERS);
}

HurrayStatus hurray_quant_check(const HurrayQuantization *q, uint32_t options,
                                HurrayError *err) {
  if (q == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "quantization",
                        "quantization is NULL");
  if ((options & ~HURRAY_DECODE_PERMISSIVE) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options",
                        "unknown option bits 0x%X", options);
  HurrayQuantPlan p;
  if (!hurray__quant_plan_init(q, &p)) {
    /* Not a named scheme: the descriptor rules decide on the tag alone. */
    HurrayDescriptorFields f;
    memset(&f, 0, sizeof f);
    f.type_tag = HURRAY_DTYPE_INT8;
    f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
    f.quantization = q;
    return hurray__quant_validate(&f, NULL, options, err);
  }
  if (p.has_axis && p.axis >= HURRAY_MAX_RANK)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET,
                        "quantization.axis", "axis %u is not below the maximum rank %u", p.axis,
                        (unsigned)HURRAY_MAX_RANK);
  if (p.scale_index != HURRAY_QUANT_NO_BUFFER &&
      (p.scale_index == 0 || p.scale_index >= HURRAY_MAX_BUFFERS))
    return index_fail(err, "quantization.scale_buffer_index", p.scale_index);
  if (p.zp_index != HURRAY_QUANT_NO_BUFFER &&
      (p.zp_index == 0 || p.zp_index >= HURRAY_MAX_BUFFERS))
    return index_fail(err, "quantization.zero_point_buffer_index", p.zp_index);

  /* The probe tensor: row-major, rank axis + 1, the quantized axis one block
   * long (or one channel), every other dimension 1; a buffer table reaching
   * the highest parameter index, every buffer large enough. */
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = p.has_axis ? p.axis + 1u : 1u;
  for (uint32_t k = 0; k < rank; k++) shape[k] = 1;
  if (p.has_axis && p.block_size > 0) shape[p.axis] = p.block_size;
  uint32_t nbuf = 1;
  if (p.scale_index != HURRAY_QUANT_NO_BUFFER && p.scale_index + 1u > nbuf)
    nbuf = p.scale_index + 1u;
  if (p.zp_index != HURRAY_QUANT_NO_BUFFER && p.zp_index + 1u > nbuf) nbuf = p.zp_index + 1u;
  HurrayBufferHandle handles[HURRAY_MAX_BUFFERS];
  memset(handles, 0, nbuf * sizeof handles[0]);
  for (uint32_t i = 0; i < nbuf; i++) {
    handles[i].byte_size = UINT64_MAX / 2u;
    handles[i].alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
  }
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = probe_storage_type(q->scheme);
  f.rank = rank;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = nbuf;
  f.buffers = handles;
  f.quantization = q;
  return hurray__quant_validate(&f, NULL, options, err);
}

HurrayStatus hurray_quant_decode(const uint8_t *bytes, uintptr_t len, uint32_t options,
                                 HurrayQuantization *out, HurrayError *err) {
  if (out == NULL || (bytes == NULL && len > 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "bytes",
                        "bytes or out is NULL");
  memset(out, 0, sizeof *out);
  if ((options & ~HURRAY_DECODE_PERMISSIVE) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options",
                        "unknown option bits 0x%X", options);
  if (len > UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_NO_OFFSET,
                        "quantization_length",
                        "a quantization payload is at most 4294967295 bytes long");
  HurrayQuantization q;
  HURRAY_TRY(hurray__quant_parse(bytes, (uint32_t)len, options, 0, &q, err));
  HURRAY_TRY(hurray_quant_check(&q, options, err));
  *out = q;
  return HURRAY_OK;
}

HurrayStatus hurray_quant_encoded_len(const HurrayQuantization *q, uint32_t *out_len) {
  if (q == NULL || out_len == NULL) return HURRAY_ERR_NULL_POINTER;
  *out_len = hurray__quant_encoded_len(q);
  return HURRAY_OK;
}

HurrayStatus hurray_quant_encode(const HurrayQuantization *q, uint8_t *out, uint64_t capacity,
                                 uint64_t *out_len) {
  if (q == NULL || out_len == NULL || (out == NULL && capacity > 0))
    return HURRAY_ERR_NULL_POINTER;
  if (q->raw == NULL && q->raw_len != 0) return HURRAY_ERR_NULL_POINTER;
  uint32_t n = hurray__quant_encoded_len(q);
  *out_len = n;
  if (capacity < n) return HURRAY_ERR_BUFFER_TOO_SMALL;
  hurray__quant_encode(q, out);
  return HURRAY_OK;
}
