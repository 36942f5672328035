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

/* Name of a named scheme ("nf4"), else NULL. Static string (borrowed, never free). */
HURRAY_API const char *hurray_quant_scheme_name(uint8_t scheme);

/* The 16 normative NF4 code values (q = 0..15): a static array, borrowed,
 * never written or freed. */
HURRAY_API const float *hurray_nf4_table(void);

/* ---- a quantization section on its own --------------------------------------
 * The section payload (scheme header included, without the u32
 * quantization_length that frames it inside a descriptor), for bindings that
 * hold a scheme before any tensor exists. */

/*
 * The rules a scheme states about itself, i.e. every rule of the descriptor
 * checks that some tensor could satisfy: scheme tag (unknown tags only with
 * HURRAY_DECODE_PERMISSIVE; private tags are opaque), scheme_version, flags,
 * per-tensor scale finite and non-zero, axis below the rank cap, block size
 * rules, scale type, SYMMETRIC against zero_point_buffer_index, and parameter
 * buffer indices in 1..254. Rules that need a tensor (storage type, axis <
 * rank, extents, buffer sizes, zero-point range) are left to the descriptor.
 * `err` may be NULL. Errors carry the field path, offset HURRAY_NO_OFFSET.
 * HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_ERR_INVALID_ARGUMENT (options),
 * HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_check(const HurrayQuantization *q,
                                                            uint32_t options, HurrayError *err);

/*
 * Decodes a section payload of `len` bytes at `bytes` (borrowed) into *out,
 * then applies hurray_quant_check. Bytes beyond the scheme's length are
 * writer padding and are kept: out->raw = bytes, out->raw_len = len (so
 * out->raw is borrowed from `bytes` and lives as long as it does). Error
 * offsets are relative to bytes[0]. `options`: HURRAY_DECODE_*.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_decode(const uint8_t *bytes, uintptr_t len,
                                                             uint32_t options,
                                                             HurrayQuantization *out,
                                                             HurrayError *err);

/* Encoded payload length: q->raw_len when q->raw is set, else the scheme's
 * length (the 4-byte header alone for a scheme that is not named). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_encoded_len(
    const HurrayQuantization *q, uint32_t *out_len);

/*
 * Writes the payload into out[0..capacity) (`out` borrowed; may be NULL when
 * capacity is 0): q->raw verbatim when set, else the typed fields with zero
 * reserved bytes. *out_len receives the length, also when the capacity is
 * short (then HURRAY_ERR_BUFFER_TOO_SMALL and nothing is written).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_encode(const HurrayQuantization *q,
                                                             uint8_t *out, uint64_t capacity,
                                                             uint64_t *out_len);

/* ---- a scheme from a quantizer's arguments --------------------------------- */

/* What a caller of a quantizer asks for, as a binding receives it
 * (hurray_quant_request_resolve); zero means "not given" throughout. */
typedef struct HurrayQuantRequest {
  uint8_t storage_type; /* the quantized element type (a named type tag) */
  const char *scheme;   /* a scheme name ("per_block_affine" or "per_block", "nf4", ...),
                           or NULL: chosen from the fields below */
  bool has_axis;        /* axis given: a negative one counts from the end */
  int64_t axis;
  bool has_block_size;
  uint64_t block_size;
  bool asymmetric;      /* zero points (the affine schemes) */
  uint8_t scale_type;   /* a type tag, or 0 for the scheme's own */
} HurrayQuantRequest;

/*
 * The scheme a request makes, for a tensor of rank `rank`: the one
 * req->scheme names, else MXFP for a small-float storage type (float8,
 * float6, float4), per-block affine when a block size is given, per-channel
 * affine when an axis is, per-tensor affine otherwise. Defaults: the last
 * axis, block size 64 for NF4 and 32 for per-block and MXFP, float32 scales
 * (MXFP's float8_e8m0). *out receives the section with its parameter
 * buffers at 1 (scales) and 2 (zero points), and *out_buffer_count the
 * buffers of the tensor in all (data included); a per-tensor scale is 1
 * until hurray_quant_quantize_f32 computes it. The section then passes
 * hurray_quant_check. Size the buffers with hurray_quant_param_sizes and
 * hurray_quant_storage_count.
 *
 * Errors: HURRAY_ERR_INVALID_ARGUMENT naming the request field
 * ("request.axis", ...): a private storage type, an unknown scheme name,
 * asymmetric for NF4 or MXFP, an axis for per-tensor or none for
 * per-channel, any axis for a scalar, an axis outside [-rank, rank - 1], a
 * block size for a scheme without blocks or beyond 32 bits, a scale type
 * the scheme does not take (per-block: float16, bfloat16, float32);
 * hurray_quant_check's errors (a block size that breaks its scheme's rule:
 * HURRAY_ERR_INVALID_QUANTIZATION, field "quantization.block_size");
 * HURRAY_ERR_NULL_POINTER. *out is not written then. The storage type
 * against the scheme and the block size against the extent need the
 * tensor: hurray_quant_quantize_f32 checks them.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_request_resolve(
    const HurrayQuantRequest *req, uint32_t rank, HurrayQuantization *out,
    uint32_t *out_buffer_count, HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_QUANT_H */
