/* Quantization scheme tags and the NF4 table (include/hurray/quant.h;
 * spec: quantization.md, quantization/nf4.md). */
#include "hurray/quant.h"
#include "internal/common.h"

HurrayTagKind hurray_quant_scheme_kind(uint8_t s) {
  if (s == 0x00 || s == 0xFF) return HURRAY_TAG_INVALID;
  if (s >= 0x01 && s <= 0x05) return HURRAY_TAG_NAMED;
  if (s >= 0xF0) return HURRAY_TAG_PRIVATE;
  if (s >= 0x60) return HURRAY_TAG_RESERVED;
  return HURRAY_TAG_UNASSIGNED;
}

const char *hurray_quant_scheme_name(uint8_t s) {
  switch (s) {
#define HURRAY_X_(t, NAME, name, len) \
  case (t):                           \
    return name;
    HURRAY_QUANT_SCHEME_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      return NULL;
  }
}

/* Normative code values of nf4.md (QLoRA), q = 0..15. */
static const float k_nf4[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f,
};

const float *hurray_nf4_table(void) { return k_nf4; }
