/*
 * hurray/quant.h - the quantization section (spec: quantization.md and
 * quantization/\*.md).
 *
 * On the wire: u32 quantization_length, then a 4-byte header (scheme_tag,
 * scheme_version, u16 flags) and the scheme payload. HurrayQuantization holds
 * the typed fields of the five standard schemes; `raw` keeps the whole payload
 * as it appeared (header included), so private schemes, schemes unknown to a
 * permissive reader and writer padding travel unchanged.
 */
#ifndef HURRAY_QUANT_H
#define HURRAY_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/dtype.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(tag, NAME, "name", payload_length_including_header) */
#define HURRAY_QUANT_SCHEME_TABLE(X)                         \
  X(0x01, PER_TENSOR_AFFINE, "per_tensor_affine", 16)        \
  X(0x02, PER_CHANNEL_AFFINE, "per_channel_affine", 20)      \
  X(0x03, PER_BLOCK_AFFINE, "per_block_affine", 24)          \
  X(0x04, NF4, "nf4", 16)                                    \
  X(0x05, MXFP, "mxfp", 16)

enum HurrayQuantScheme {
#define HURRAY_X_QS_(tag, NAME, name, len) HURRAY_QUANT_##NAME = (tag),
  HURRAY_QUANT_SCHEME_TABLE(HURRAY_X_QS_)
#undef HURRAY_X_QS_
  HURRAY_QUANT_PRIVATE_FIRST = 0xF0,
  HURRAY_QUANT_PRIVATE_LAST = 0xFE
};

#define HURRAY_QUANT_SCHEME_VERSION 1u    /* the only scheme_version defined */
#define HURRAY_QUANT_FLAG_SYMMETRIC 0x0001u
#define HURRAY_QUANT_NO_BUFFER UINT32_MAX /* zero_point_buffer_index when symmetric */
#define HURRAY_QUANT_HEADER_LEN 4u

/* Scale element types of the per-channel / per-block schemes (type tags). */
#define HURRAY_QUANT_SCALE_F16 0x01u
#define HURRAY_QUANT_SCALE_BF16 0x02u
#define HURRAY_QUANT_SCALE_F32 0x03u

typedef struct HurrayQuantization {
  uint8_t scheme;   /* scheme tag */
  uint8_t version;  /* scheme_version (1) */
  uint16_t flags;   /* scheme flags (bit 0 SYMMETRIC for 0x02 / 0x03) */
  union {
    struct { float scale; int32_t zero_point; } per_tensor;
    struct {
      uint32_t axis;
      uint32_t scale_buffer_index;
      uint32_t zero_point_buffer_index; /* HURRAY_QUANT_NO_BUFFER iff symmetric */
      uint8_t scale_type;               /* must be HURRAY_QUANT_SCALE_F32 */
    } per_channel;
    struct {
      uint32_t axis;
      uint32_t block_size;
      uint32_t scale_buffer_index;
      uint32_t zero_point_buffer_index; /* HURRAY_QUANT_NO_BUFFER iff symmetric */
      uint8_t scale_type;               /* F16, BF16 or F32 */
    } per_block;
    struct { uint32_t axis; uint32_t block_size; uint32_t scale_buffer_index; } nf4;
    struct { uint32_t axis; uint32_t block_size; uint32_t scale_buffer_index; } mxfp;
  } u;
  /*
   * The whole section payload (header included), quantization_length bytes.
   * Decoding always sets it (borrowed from the descriptor). When building,
   * leave it NULL to have the typed fields encoded, or set it to give the
   * exact bytes: then it is authoritative and the typed fields are re-read
   * from it.
   */
  const uint8_t *raw;
  uint32_t raw_len;
} HurrayQuantization;

/* Classifies a scheme tag: invalid {0x00, 0xFF}; named {0x01-0x05};
 * unassigned {0x06-0x5F}; reserved {0x60-0xEF}; private {0xF0-0xFE}. */
HURRAY_API HurrayTagKind hurray_quant_scheme_kind(uint8_t scheme);

/* Name of a named scheme ("nf4"), else NULL. Static string. */
HURRAY_API const char *hurray_quant_scheme_name(uint8_t scheme);

/* The 16 normative NF4 code values (q = 0..15). */
HURRAY_API const float *hurray_nf4_table(void);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_QUANT_H */
