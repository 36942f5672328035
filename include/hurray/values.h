/*
 * hurray/values.h - element values and dequantization (spec: element-types.md,
 * quantization.md and quantization/\*.md).
 *
 * Two families of helpers:
 *
 *  - Element access: read the bit pattern ("code") of one element of any
 *    named type from a packed little-endian buffer, turn a code into its real
 *    value, and write a code back (what a writer of packed sub-byte data
 *    needs). Every access is bounds-checked against the buffer size.
 *
 *  - Quantized tensors: the byte sizes of the parameter arrays a scheme
 *    needs, the per-element validity check of scale and zero-point arrays,
 *    and dequantization of a whole tensor to float32.
 *
 * Codes: an element's code is its bit pattern as an unsigned integer of the
 * type's width (an int4 of value -1 has code 0xF; a float16 1.0 has code
 * 0x3C00). Types wider than 64 bits (float128, complex128) have no code.
 */
#ifndef HURRAY_VALUES_H
#define HURRAY_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/dtype.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element access --------------------------------------------------------- */

/*
 * Reads the code of element `index` of a buffer of `size` bytes holding
 * elements of `type_tag` packed as element-types.md says: whole-byte types
 * little-endian at index * width; bool, int2/uint2, int4/uint4 and
 * float4_e2m1 LSB-first within each byte; float6 types four per three-byte
 * group (element 4k+j at bits [6j+5 : 6j] of the group read as a 24-bit
 * little-endian integer). A 6-bit element is readable only when its whole
 * group lies inside the buffer.
 *
 * `data` is borrowed and may be NULL when size is 0. Errors:
 * HURRAY_ERR_NULL_POINTER (out_code NULL, or data NULL with size > 0),
 * HURRAY_ERR_INVALID_TYPE (tag not named), HURRAY_ERR_UNSUPPORTED (float128,
 * complex128: wider than 64 bits), HURRAY_ERR_INDEX_OUT_OF_BOUNDS.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_value_get_code(uint8_t type_tag, const void *data,
                                                               uint64_t size, uint64_t index,
                                                               uint64_t *out_code);

/*
 * Writes `code` as element `index`, leaving every other bit of the buffer as
 * it was (sub-byte types are read-modify-written). `data` is borrowed.
 * HURRAY_ERR_INVALID_ARGUMENT when `code` does not fit the type's width;
 * otherwise the errors of hurray_value_get_code.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_value_set_code(uint8_t type_tag, void *data,
                                                               uint64_t size, uint64_t index,
                                                               uint64_t code);

/*
 * Real value of a code of a real (non-complex) type of at most 64 bits:
 * integers exactly where a double can hold them (int64/uint64 round to
 * nearest), bool 0 or 1, floats exactly (float16, bfloat16, float32, float8
 * e4m3 with NaN at 0x7F/0xFF and no infinity, e5m2 with infinities, float4
 * e2m1, float6 e2m3/e3m2, float8 e8m0 = 2^(code - 127)). NaN keeps its sign
 * and the leading bits of its payload.
 *
 * float8_e8m0 codes 0x00 and 0xFF are reserved (element-types.md): *out is
 * set to NaN and HURRAY_ERR_INVALID_ARGUMENT is returned, so a caller can
 * report the containing descriptor as invalid.
 * Other errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_TYPE (tag not
 * named), HURRAY_ERR_UNSUPPORTED (complex and float128: use hurray_value_get),
 * HURRAY_ERR_INVALID_ARGUMENT (code wider than the type). The inverse, for the
 * float types: hurray_value_code_from_double (hurray/convert.h).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_value_code_to_double(
    uint8_t type_tag, uint64_t code, double *out);

/*
 * Reads element `index` of any named type as a double: hurray_value_get_code
 * + hurray_value_code_to_double, plus float128 (rounded to nearest, ties to
 * even, as hurray_float128_to_double) and the complex types (real part in
 * *out_real, imaginary part in *out_imag). For a real type *out_imag is set
 * to 0. `out_imag` may be NULL; `data` is borrowed. Errors as the two
 * functions above (a reserved e8m0 byte gives NaN and
 * HURRAY_ERR_INVALID_ARGUMENT).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_value_get(uint8_t type_tag, const void *data,
                                                          uint64_t size, uint64_t index,
                                                          double *out_real, double *out_imag);

/*
 * Runs of elements: elements 0 .. count - 1 of a packed buffer `src` of
 * `src_size` bytes (borrowed; NULL allowed when count is 0), packed as
 * hurray_value_get_code reads them, decoded at once (what a viewer, a
 * histogram or a converter to a framework without the type needs).
 *
 * hurray_elements_to_double: each element's real value into dst[i] (count
 * doubles, borrowed): exactly hurray_value_code_to_double's value for every
 * real type of at most 64 bits (integers, bool, float16, bfloat16, float32,
 * float64, float8/float6/float4 and float8_e8m0), plus float128 as
 * hurray_float128_to_double. The reserved float8_e8m0 codes 0x00 and 0xFF
 * give NaN here without failing the call: *out_reserved (may be NULL)
 * receives how many elements had one (0 for every other type).
 *
 * hurray_elements_unpack: each element's code into one byte, dst[i] (count
 * bytes, borrowed), for the types of at most 8 bits: bool 0 or 1; the signed
 * integers (int2, int4, int8) sign-extended, so the byte read as int8_t is
 * the value; every other type its code (a float4_e2m1 or float8_e4m3 keeps
 * its bit pattern, as ml_dtypes and PyTorch hold one element per byte).
 *
 * Errors, nothing written: HURRAY_ERR_NULL_POINTER (src or dst with
 * elements), HURRAY_ERR_INVALID_TYPE (a tag that names no type),
 * HURRAY_ERR_UNSUPPORTED (to_double: the complex types; unpack: a type
 * wider than 8 bits), HURRAY_ERR_BUFFER_TOO_SMALL (src_size below
 * hurray_buffer_size_bytes of count elements), HURRAY_ERR_INVALID_ARGUMENT
 * (that size overflows 64 bits).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_elements_to_double(uint8_t type_tag,
                                                                   const void *src,
                                                                   uint64_t src_size,
                                                                   uint64_t count, double *dst,
                                                                   uint64_t *out_reserved);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_elements_unpack(uint8_t type_tag,
                                                                const void *src,
                                                                uint64_t src_size, uint64_t count,
                                                                uint8_t *dst);

/* IEEE binary128 (16 bytes, little-endian; borrowed, not NULL) to the nearest double,
 * ties to even; overflow gives an infinity, underflow a (signed) zero or a
 * subnormal. NaN stays NaN with its sign. */
HURRAY_API double hurray_float128_to_double(const uint8_t *bytes16);

/* ---- quantized tensors ----------------------------------------------------- */

/*
 * Byte sizes of the parameter arrays the quantization scheme of `f` implies
 * (quantization/\*.md): per-channel shape[axis] x 4 bytes each; per-block,
 * NF4 and MXFP num_blocks x the scale width (2 for float16/bfloat16 scales,
 * 4 for float32, 1 for MXFP's float8_e8m0) and num_blocks x 4 for int32
 * zero points, where num_blocks = ceil(shape[axis] / block_size) x the
 * product of the other dimensions (partial last block included); on a
 * block-paged tensor the block schemes use num_pages x page_size entries
 * (block-paged.md). Per-tensor and symmetric schemes report 0 for what they
 * do not have. When scale and zero points share one buffer, it holds
 * [scales | zero_points], so it needs the sum.
 *
 * HURRAY_ERR_INVALID_ARGUMENT when `f` has no quantization section, a
 * dimension the count needs is dynamic or the size overflows;
 * HURRAY_ERR_INVALID_QUANTIZATION when the scheme is not named or the axis /
 * block size fields are unusable; HURRAY_ERR_NULL_POINTER. Both outputs may
 * be NULL.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_param_sizes(
    const HurrayDescriptorFields *f, uint64_t *out_scale_bytes, uint64_t *out_zero_point_bytes);

/*
 * Number of storage elements of a dense (row- or column-major) quantized
 * tensor: the element count, except that per-block affine and NF4 pad a
 * partial last block along `axis` to a full block (per-block-affine.md
 * § Padding), so shape[axis] counts as ceil(shape[axis] / block_size) x
 * block_size. Size the data buffer with hurray_buffer_size_bytes(type,
 * count). Errors as hurray_quant_param_sizes.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_storage_count(
    const HurrayDescriptorFields *f, uint64_t *out_count);

/*
 * Checks every element of the parameter arrays (the checks the spec lets a
 * reader defer to dequantization time): per-channel and per-block scales
 * finite and non-zero (float16/bfloat16 scales widened first), NF4 scales
 * finite and >= 0, MXFP scale bytes neither 0x00 nor 0xFF, zero points
 * within the storage type's range. Also checks the descriptor fields' scheme
 * rules (as hurray_descriptor_validate does for the quantization section,
 * without byte offsets) and that each parameter buffer is long enough.
 *
 * `buffers` and `sizes` (borrowed) have f->buffer_count entries: the address
 * and the number of readable bytes of each buffer (a data buffer may be
 * NULL: only parameter buffers are read). Errors:
 * HURRAY_ERR_INVALID_QUANTIZATION (names the array and the element, e.g.
 * field "quantization.scale[5]"), HURRAY_ERR_BUFFER_SIZE,
 * HURRAY_ERR_INVALID_BUFFER_TABLE, HURRAY_ERR_UNSUPPORTED (scheme not named,
 * or a composite head), HURRAY_ERR_INVALID_ARGUMENT (not quantized, dynamic
 * dimensions), HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_check_params(
    const HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    HurrayError *err);

/*
 * Dequantizes a whole row- or column-major quantized tensor to float32, in
 * logical row-major order (out[0] is element [0, ..., 0], the last index
 * varies fastest), with the normative formulas:
 *   per-tensor / per-channel / per-block affine: s * (q - z), the difference
 *     computed exactly (64-bit) then rounded to float32, f16/bf16 scales
 *     widened to float32, the product in float32;
 *   NF4: s * nf4[q]; MXFP: 2^(e - 127) * value(q), value(q) the storage
 *   element's real value (float8/float6/float4 per element-types.md, int8 and
 *   int4 as signed integers).
 * Padding elements of a partial last block (per-block affine, NF4) are
 * skipped: the data buffer holds hurray_quant_storage_count() elements.
 *
 * Everything hurray_quant_check_params checks is checked first, then that the
 * data buffer holds byte_offset + the storage bytes. `buffers`/`sizes` as for
 * hurray_quant_check_params (all borrowed); `out` (borrowed) receives the
 * element count of values and must have room for at least that many
 * (`out_count`; HURRAY_ERR_BUFFER_TOO_SMALL otherwise). HURRAY_ERR_UNSUPPORTED
 * for other layouts (strided, tiled, Morton, Hilbert, sparse, block-paged:
 * dequantize their values with the element helpers above).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_dequantize_f32(
    const HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes, float *out,
    uint64_t out_count, HurrayError *err);

/* Whether `type_tag` is a type of the values a quantizer reads and a
 * dequantizer writes: float16, bfloat16, float32 or float64 (the out_type of
 * hurray_quant_dequantize; what a binding converts to float32 before
 * hurray_quant_quantize_f32). */
HURRAY_API bool hurray_quant_value_type(uint8_t type_tag);

/*
 * hurray_quant_dequantize_f32 with the choice of output type: `out_type` is
 * HURRAY_DTYPE_FLOAT32, FLOAT64 (the float32 value widened, exactly),
 * FLOAT16 or BFLOAT16 (the float32 value rounded to nearest even; beyond
 * float16's range an infinity). `out` (borrowed) receives out_count
 * elements of that type in host byte order. HURRAY_ERR_INVALID_ARGUMENT
 * (field "out_type") for another type; otherwise as
 * hurray_quant_dequantize_f32.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_dequantize(
    const HurrayDescriptorFields *f, const void *const *buffers, const uint64_t *sizes,
    uint8_t out_type, void *out, uint64_t out_count, HurrayError *err);

/* Options of hurray_quant_quantize_f32. */
#define HURRAY_QUANTIZE_SYMMETRIC 0x1u /* per-tensor affine: zero point 0 */

/*
 * Quantizes float32 values into the buffers of a row- or column-major
 * quantized tensor: the inverse of hurray_quant_dequantize_f32. `in`
 * (borrowed) holds the tensor's element count of values in logical
 * row-major order (in_count may be larger; the rest is ignored).
 *
 * `f` describes the tensor as for dequantization: storage type, shape,
 * layout, byte_offset, the buffer table (declared sizes) and the scheme in
 * f->quantization, whose axis, block size, scale type, buffer indices and
 * SYMMETRIC flag say what to produce. `buffers` / `sizes` (borrowed) are the
 * writable address and size of each of the f->buffer_count buffers; the
 * data buffer receives byte_offset + the storage bytes (partial last blocks
 * padded with zero bytes, unused high bits of the last byte zero), the
 * parameter buffers their scale and zero-point arrays. Nothing else is
 * written.
 *
 * Per-tensor affine carries its scale and zero point inline: the values in
 * f->quantization are ignored, and *out_quant (caller storage, required for
 * that scheme, optional otherwise) receives a copy of *f->quantization with
 * them filled in (raw NULL, raw_len 0). `options`: HURRAY_QUANTIZE_SYMMETRIC
 * makes a per-tensor scheme symmetric (zero point 0); the other affine
 * schemes follow their SYMMETRIC flag.
 *
 * How parameters are chosen (docs/reference/c-api/quant.md has the full statement):
 *   affine, symmetric: s = max|x| / qmax in float32 (qmax = 127 for int8,
 *     7 for int4, 255 for uint8, ...), codes in [-qmax, qmax];
 *   affine, asymmetric: the range [min(x, 0), max(x, 0)],
 *     s = (hi - lo) / (qmax - qmin), z = qmin - round(lo / s) clamped;
 *   codes q = clamp(round(x * (1/s)) + z), rounded half away from zero with
 *     the float32 inverse of the float32 s, which is then stored rounded to
 *     nearest even in the scale type (ggml's Q8_0 rule, bit for bit);
 *   a block whose values are all zero, or whose scale rounds to zero in
 *     the scale type, gets scale 1 and zero codes (the format forbids a zero
 *     scale);
 *   NF4: the block's max|x| as float32 scale, the nearest NF4 level of
 *     x / s (ties to the lower code);
 *   MXFP: shared exponent floor(log2(max|x|)) - emax of the element type,
 *     clamped to the e8m0 codes 1..254, elements x / 2^e rounded to nearest
 *     even and saturated to the largest finite value.
 *
 * Errors: HURRAY_ERR_INVALID_ARGUMENT naming "in[i]" for a NaN or an
 * infinity (always refused) and for a negative value under a symmetric
 * unsigned scheme; naming "quantization.scale[b]" when a scale overflows
 * its type (float16 beyond 65504) or an asymmetric range overflows float32;
 * "options" for unknown option bits. HURRAY_ERR_BUFFER_TOO_SMALL ("in"),
 * HURRAY_ERR_BUFFER_SIZE ("buffers[i]"), HURRAY_ERR_NULL_POINTER,
 * HURRAY_ERR_OUT_OF_MEMORY (a workspace for schemes other than per-block
 * along the last axis of a row-major tensor), HURRAY_ERR_UNSUPPORTED
 * (another layout, a scheme not named), and every descriptor rule of the
 * scheme (HURRAY_ERR_INVALID_QUANTIZATION, HURRAY_ERR_INVALID_BUFFER_TABLE).
 * On failure the buffers' contents are unspecified.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_quant_quantize_f32(
    const HurrayDescriptorFields *f, const float *in, uint64_t in_count, void *const *buffers,
    const uint64_t *sizes, uint32_t options, HurrayQuantization *out_quant, HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_VALUES_H */
