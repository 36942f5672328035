/*
 * Whether a quantization scheme composes with a block-paged layout
 * (include/hurray/layout.h, hurray_block_paged_check_quantization): the
 * descriptor rules run on a probe tensor with this paging, so the answer is
 * the one a tensor carrying both would get.
 */
#include "hurray/descriptor.h"

#include <string.h>

#include "internal/common.h"

HurrayStatus hurray_block_paged_check_quantization(const HurrayLayout *layout,
                                                   const HurrayQuantization *q,
                                                   HurrayError *err) {
  if (layout == NULL || q == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        layout == NULL ? "layout" : "quantization", "is NULL");
  if (layout->tag != HURRAY_LAYOUT_BLOCK_PAGED)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout",
                        "is not block-paged");
  /* A probe tensor: every extent the scheme's own rules accept, every buffer
   * large enough, the parameter buffers at their indices, a storage type the
   * scheme takes; what can still fail is the composition of scheme and paging. */
  uint64_t shape[3] = {1, 1, 1};
  uint32_t axis = UINT32_MAX, block = 0, sidx = HURRAY_QUANT_NO_BUFFER,
           zidx = HURRAY_QUANT_NO_BUFFER;
  uint8_t type = HURRAY_DTYPE_INT8;
  switch (q->scheme) {
    case HURRAY_QUANT_PER_TENSOR_AFFINE: type = HURRAY_DTYPE_INT32; break;
    case HURRAY_QUANT_PER_CHANNEL_AFFINE:
      type = HURRAY_DTYPE_INT32;
      axis = q->u.per_channel.axis;
      sidx = q->u.per_channel.scale_buffer_index;
      zidx = q->u.per_channel.zero_point_buffer_index;
      break;
    case HURRAY_QUANT_PER_BLOCK_AFFINE:
      axis = q->u.per_block.axis;
      block = q->u.per_block.block_size;
      sidx = q->u.per_block.scale_buffer_index;
      zidx = q->u.per_block.zero_point_buffer_index;
      break;
    case HURRAY_QUANT_NF4:
    case HURRAY_QUANT_MXFP: /* the same three fields */
      type = q->scheme == HURRAY_QUANT_NF4 ? HURRAY_DTYPE_UINT4 : HURRAY_DTYPE_INT8;
      axis = q->u.nf4.axis;
      block = q->u.nf4.block_size;
      sidx = q->u.nf4.scale_buffer_index;
      break;
    default: break; /* a private or unknown scheme: no field this build reads */
  }
  if (axis < 3 && block > 0) shape[axis] = block;
  /* exactly the layout's three buffers plus the scheme's parameter buffers */
  uint32_t nbuf = 3;
  if (sidx != HURRAY_QUANT_NO_BUFFER) nbuf++;
  if (zidx != HURRAY_QUANT_NO_BUFFER && zidx != sidx) nbuf++;
  HurrayBufferHandle handles[5];
  memset(handles, 0, sizeof handles);
  for (uint32_t i = 0; i < nbuf; i++) {
    handles[i].byte_size = UINT64_MAX / 4u;
    handles[i].alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
  }
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = type;
  f.rank = 3;
  f.shape = shape;
  f.layout = *layout;
  f.buffer_count = nbuf;
  f.buffers = handles;
  f.quantization = q;
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus rc = hurray_descriptor_validate(&f, HURRAY_DECODE_STRICT, &e);
  if (rc == HURRAY_OK) return HURRAY_OK;
  if (rc == HURRAY_ERR_BUFFER_SIZE) /* only a parameter size overflowing can get here */
    rc = e.status = HURRAY_ERR_INVALID_QUANTIZATION;
  /* the offsets point into the probe, which the caller never saw */
  e.offset = HURRAY_NO_OFFSET;
  hurray__error_compose(&e);
  if (err != NULL) *err = e;
  return rc;
}
