/*
 * The contract between the descriptor codec (src/descriptor) and the layout
 * and quantization rules (src/layout, src/quant). Never installed.
 *
 * Division of labour, so that every MUST-reject is checked exactly once:
 *
 *  src/descriptor (codec): everything syntactic plus the rules that need no
 *    layout or scheme knowledge: magic, version, descriptor_length, flags,
 *    tag domains (type, layout, device, memory class, sync mode), rank cap,
 *    payload framing and reserved bytes of every layout payload (tiled
 *    outer/inner tag domains and depth, COO is_sorted 0/1), buffer handle
 *    rules (alignment, reserved byte, CPU => producer-synced, one device and
 *    memory class per descriptor, the validity table), HAS_EXTENSION_TYPE iff
 *    the type is private and the extension section's rules, the composite
 *    member section's bytes, the statistics section (mask, reserved bytes,
 *    ranges, nnz agreement with a sparse layout), the shard section (bounds,
 *    no dynamic dims, forbidden on CSF and block-paged), and the quantization
 *    framing (length prefix; then hurray__quant_parse).
 *
 *  src/layout (hurray__layout_validate): rank rules of each layout, payload
 *    semantics (tile_shape > 0, morton bits, hilbert order/rank and shape, CSF
 *    mode_order permutation, block-paged fields, composite head rules incl.
 *    no buffers / no quantization / no member section), the exact buffer
 *    count (layout base + hurray__quant_param_buffer_count), byte_offset rules
 *    (0 for sparse/indirect/virtual, <= size of buffer 0 for dense), and the
 *    minimum byte size of every layout buffer.
 *
 *  src/quant (hurray__quant_parse, hurray__quant_validate): the scheme header
 *    and payload bytes, scheme versions and flags, storage types allowed per
 *    scheme, axis and block-size rules, parameter buffer placement and sizes,
 *    block-paged composition rules.
 *
 * Status codes: rank/payload problems HURRAY_ERR_INVALID_LAYOUT; buffer count
 * and placement HURRAY_ERR_INVALID_BUFFER_TABLE; a buffer smaller than implied
 * HURRAY_ERR_BUFFER_SIZE; quantization HURRAY_ERR_INVALID_QUANTIZATION;
 * composite head rules HURRAY_ERR_INVALID_COMPOSITE; type/device/class tags
 * HURRAY_ERR_INVALID_TYPE; shard HURRAY_ERR_INVALID_SHARD; statistics
 * HURRAY_ERR_INVALID_STATISTICS. Every failure goes through hurray__fail with
 * the field path and the byte offset taken from HurrayOffsets.
 *
 * Permissive mode (HURRAY_DECODE_PERMISSIVE): a rule that needs the meaning of
 * an unknown tag is skipped, never guessed.
 */
#ifndef HURRAY_INTERNAL_VALIDATE_H
#define HURRAY_INTERNAL_VALIDATE_H

#include "hurray/descriptor.h"
#include "internal/common.h"

/* Byte offsets at which each part of a descriptor is (or would be) encoded.
 * A section that is absent has the offset where it would start. */
typedef struct HurrayOffsets {
  uint64_t shape;
  uint64_t byte_offset;
  uint64_t layout;        /* first byte of the layout payload */
  uint64_t buffer_table;  /* the buffer_count byte; handle i at buffer_table + 1 + 16 i */
  uint64_t quantization;  /* the u32 quantization_length; payload at +4 */
  uint64_t shard;
  uint64_t statistics;
  uint64_t extension_type;
  uint64_t composite_member;
  uint64_t trailing;
  uint64_t end;           /* == descriptor_length */
} HurrayOffsets;

/* Computes the offsets of an encoding of f (src/descriptor). */
HURRAY_INTERNAL void hurray__descriptor_offsets(const HurrayDescriptorFields *f,
                                                HurrayOffsets *out);

/* Layout rules (src/layout/validate.c). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__layout_validate(
    const HurrayDescriptorFields *f, const HurrayOffsets *o, uint32_t options, HurrayError *err);

/* Number of buffer-table slots the layout itself needs before quantization
 * parameter buffers: dense 1, COO 2, CSR/CSC 3, CSF 2r+1, block-paged 3,
 * composite 0. Returns false for a layout tag that is not named.
 * (src/layout/tags.c) */
HURRAY_INTERNAL bool hurray__layout_base_buffer_count(uint8_t layout_tag, uint32_t rank,
                                                      uint32_t *out);

/*
 * Parses a quantization payload (header included) of `len` bytes into q;
 * q->raw/raw_len are set to (raw, len). `base` is the byte offset of raw[0]
 * in the descriptor, for error messages. Unknown schemes are rejected unless
 * permissive; private schemes are kept opaque. (src/quant)
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__quant_parse(
    const uint8_t *raw, uint32_t len, uint32_t options, uint64_t base, HurrayQuantization *q,
    HurrayError *err);

/* Encoded payload length: raw_len when raw is set, else the scheme's length. */
HURRAY_INTERNAL uint32_t hurray__quant_encoded_len(const HurrayQuantization *q);

/* Writes hurray__quant_encoded_len(q) bytes. */
HURRAY_INTERNAL void hurray__quant_encode(const HurrayQuantization *q, uint8_t *out);

/* Number of distinct parameter buffers the scheme adds to the buffer table
 * (0 per-tensor; 1 or 2 per-channel/per-block; 1 NF4/MXFP). Returns false
 * when the scheme is not named (private or unknown). */
HURRAY_INTERNAL bool hurray__quant_param_buffer_count(const HurrayQuantization *q,
                                                      uint32_t *out);

/* Scheme semantics against the rest of the descriptor (src/quant/validate.c). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__quant_validate(
    const HurrayDescriptorFields *f, const HurrayOffsets *o, uint32_t options, HurrayError *err);

#endif /* HURRAY_INTERNAL_VALIDATE_H */
