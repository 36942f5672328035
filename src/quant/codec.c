/* Quantization payload parse/encode (src/internal/validate.h).
 * PLACEHOLDER until the scheme codecs land: keeps the payload opaque. */
#include "internal/validate.h"

HurrayStatus hurray__quant_parse(const uint8_t *raw, uint32_t len, uint32_t options,
                                 uint64_t base, HurrayQuantization *q, HurrayError *err) {
  (void)options;
  memset(q, 0, sizeof *q);
  if (len < HURRAY_QUANT_HEADER_LEN)
    return hurray__fail(err, HURRAY_ERR_INVALID_QUANTIZATION, base, "quantization",
                        "payload of %u bytes is shorter than the 4-byte header", len);
  q->scheme = raw[0];
  q->version = raw[1];
  q->flags = hurray__ld16(raw + 2);
  q->raw = raw;
  q->raw_len = len;
  return HURRAY_OK;
}

uint32_t hurray__quant_encoded_len(const HurrayQuantization *q) {
  return q->raw != NULL ? q->raw_len : HURRAY_QUANT_HEADER_LEN;
}

void hurray__quant_encode(const HurrayQuantization *q, uint8_t *out) {
  if (q->raw != NULL) {
    memcpy(out, q->raw, q->raw_len);
    return;
  }
  out[0] = q->scheme;
  out[1] = q->version;
  hurray__st16(out + 2, q->flags);
}

bool hurray__quant_param_buffer_count(const HurrayQuantization *q, uint32_t *out) {
  (void)q;
  (void)out;
  return false;
}

HurrayStatus hurray__quant_validate(const HurrayDescriptorFields *f, const HurrayOffsets *o,
                                    uint32_t options, HurrayError *err) {
  (void)f;
  (void)o;
  (void)options;
  (void)err;
  return HURRAY_OK;
}
