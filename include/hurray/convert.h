/*
 * hurray/convert.h - the element codec: conversions between float32 /
 * float64 and the narrow float element types (spec: element-types.md).
 *
 * These are the library's one codec: the quantizer, the dequantizer and
 * hurray_value_code_to_double use the same kernels, and the Python package
 * calls these functions, so a value converted here has the bits it has
 * everywhere else (docs/reference/c-api/convert.md).
 *
 *  - Decoding is exact: every float16, bfloat16 and float8 value is a
 *    float32. An infinity stays one; a NaN stays a NaN with its sign.
 *  - Encoding rounds once, to nearest, ties to even, on the bits (no
 *    floating-point rounding happens before it). The sign of zero is kept.
 *  - NaN encodes as a quiet NaN of the same sign: float16, bfloat16 and
 *    float8_e5m2 keep the leading payload bits, float8_e4m3 has one NaN per
 *    sign (0x7F, 0xFF).
 *  - A magnitude that rounds beyond the type's largest finite value (65504
 *    for float16, 448 for float8_e4m3, 57344 for float8_e5m2) becomes an
 *    infinity, or NaN for float8_e4m3, which has no infinity (the OCP
 *    "non-saturating" conversion); with HURRAY_CONVERT_SATURATE it becomes
 *    the largest finite value of its sign, infinities included (the OCP
 *    "saturating" conversion, the MX quantizer's rule).
 *
 * Codes are bit patterns (a float16 1.0 is 0x3C00). All functions are pure
 * and thread-safe.
 */
#ifndef HURRAY_CONVERT_H
#define HURRAY_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of the float8 encoders, hurray_value_code_from_double and
 * hurray_elements_convert. */
#define HURRAY_CONVERT_SATURATE 0x1u /* overflow and infinities give the largest finite value */

/* ---- float16 (IEEE binary16) -------------------------------------------------- */

/* The value of a float16 code (exact; a NaN keeps its sign and payload bits). */
HURRAY_API float hurray_float16_to_float(uint16_t code);

/* The float16 code nearest `value`, ties to even; from 65520 up an infinity. */
HURRAY_API uint16_t hurray_float16_from_float(float value);

/* As hurray_float16_from_float, rounding the double once (not through
 * float32: 65519.999 gives 65504, and values just above a float16 tie round
 * up even where float32 would make them the tie). */
HURRAY_API uint16_t hurray_float16_from_double(double value);

/* ---- bfloat16 ----------------------------------------------------------------- */

/* The value of a bfloat16 code: the high 16 bits of a float32 (exact). */
HURRAY_API float hurray_bfloat16_to_float(uint16_t code);

/* The bfloat16 code nearest `value`, ties to even; beyond the largest finite
 * value (about 3.39e38) an infinity. */
HURRAY_API uint16_t hurray_bfloat16_from_float(float value);

/* ---- float8 (OCP OFP8) -------------------------------------------------------- */

/* The value of a float8_e4m3 code (the OCP "fn" variant: bias 7, largest
 * magnitude 448, NaN at 0x7F and 0xFF, no infinity). */
HURRAY_API float hurray_float8_e4m3_to_float(uint8_t code);

/* The float8_e4m3 code nearest `value`, ties to even: from 464 up (the tie
 * between 448 and the NaN code goes to 448) and for infinities NaN, or
 * +-448 with HURRAY_CONVERT_SATURATE. `flags`: 0 or HURRAY_CONVERT_SATURATE
 * (other bits are ignored). */
HURRAY_API uint8_t hurray_float8_e4m3_from_float(float value, uint32_t flags);

/* The value of a float8_e5m2 code (bias 15, largest magnitude 57344,
 * infinities 0x7C / 0xFC, NaN above them). */
HURRAY_API float hurray_float8_e5m2_to_float(uint8_t code);

/* The float8_e5m2 code nearest `value`, ties to even: from 61440 up an
 * infinity, or +-57344 with HURRAY_CONVERT_SATURATE (infinities too).
 * `flags` as for hurray_float8_e4m3_from_float. */
HURRAY_API uint8_t hurray_float8_e5m2_from_float(float value, uint32_t flags);

/* ---- any float type, by tag ------------------------------------------------------ */

/*
 * The code of a float type nearest `value`: the inverse of
 * hurray_value_code_to_double (hurray/values.h) for float16, bfloat16,
 * float32, float64, float8_e4m3, float8_e5m2, float6_e2m3, float6_e3m2,
 * float4_e2m1 and float8_e8m0, by the rules above (float32: C's
 * conversion, to nearest even). float6 and float4 have neither infinity
 * nor NaN: overflow and infinities always saturate (the OCP MX rule) and a
 * NaN is refused. float8_e8m0 (2^(code - 127)) takes exactly the powers of
 * two 2^-126 .. 2^127 (codes 0x00 and 0xFF are reserved). `flags`: 0 or
 * HURRAY_CONVERT_SATURATE.
 *
 * Errors: HURRAY_ERR_NULL_POINTER (out_code), HURRAY_ERR_INVALID_TYPE (a
 * tag that names no type), HURRAY_ERR_UNSUPPORTED (an integer, bool,
 * complex or float128 type), HURRAY_ERR_INVALID_ARGUMENT (unknown flag
 * bits; a NaN for float6 / float4; for float8_e8m0 anything but a power of
 * two in range); *out_code is not written then.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_value_code_from_double(uint8_t type_tag,
                                                                       double value,
                                                                       uint32_t flags,
                                                                       uint64_t *out_code);

/* ---- runs of elements ----------------------------------------------------------- */

/*
 * Converts `count` elements of `src_type` at `src` into `dst_type` at `dst`:
 * element i is read at src + i * src_stride and written at dst + i *
 * dst_stride (strides in bytes, any sign; elements in host byte order, as a
 * C float is stored). Both types are among float16, bfloat16, float32,
 * float64, float8_e4m3 and float8_e5m2. Each value is decoded exactly and
 * rounded once into dst_type, as the functions above do (float64 to
 * float32 or bfloat16 included: one rounding, not two); `flags`: 0 or
 * HURRAY_CONVERT_SATURATE, which then applies to every destination type.
 * A NaN's payload survives only as far as the narrower of the two types
 * holds it.
 *
 * `src` and `dst` are borrowed (NULL allowed when count is 0) and must not
 * overlap unless they are the same address with the same stride and the
 * two types have the same width. Errors: HURRAY_ERR_NULL_POINTER,
 * HURRAY_ERR_INVALID_TYPE (a tag that names no type), HURRAY_ERR_UNSUPPORTED
 * (a named type outside the list), HURRAY_ERR_INVALID_ARGUMENT (unknown flag
 * bits); nothing is written then.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_elements_convert(uint8_t src_type, const void *src,
                                                                 int64_t src_stride,
                                                                 uint8_t dst_type, void *dst,
                                                                 int64_t dst_stride,
                                                                 uint64_t count, uint32_t flags);

/* ---- ranges --------------------------------------------------------------------- */

/*
 * The numeric rules of arange and linspace, computed as NumPy computes them
 * so that the same call gives the same bits (the Python package's
 * hurray.arange and hurray.linspace are these functions). Elements are
 * written packed, in host byte order, into `dst` (borrowed, dst_size bytes;
 * NULL allowed when n is 0). Complex types get zero imaginary parts.
 *
 * hurray_fill_arange_int: an integer type of 8 to 64 bits; element i is
 * first + i * step modulo 2**bits (first and step are the values' low 64
 * bits: a caller checks that the first and the last element fit, if it
 * wants them to).
 *
 * hurray_fill_arange_float: float16, bfloat16, float32, float64, complex64
 * or complex128; elements 0 and 1 are `first` and `second` converted to the
 * type (bfloat16 through float32), element i >= 2 is e0 + i * (e1 - e0) in
 * the type's arithmetic (float16 and bfloat16 in float32, each element
 * rounded).
 *
 * hurray_fill_linspace: any of those types; in float64, i * step + start
 * with step = (stop - start) / div (div = n - 1 with the endpoint, n
 * without; (i / div) * (stop - start) + start when the step underflows to
 * zero), the last element exactly `stop` with the endpoint, then converted
 * (integers: floor, and every element must fit the type: otherwise
 * HURRAY_ERR_INVALID_ARGUMENT, *out_bad (may be NULL) the first that does
 * not, and nothing is written).
 *
 * Errors: HURRAY_ERR_INVALID_TYPE (a tag that names no type),
 * HURRAY_ERR_UNSUPPORTED (bool, sub-byte, float8 and other types; an
 * integer type for arange_float, a float type for arange_int),
 * HURRAY_ERR_NULL_POINTER, HURRAY_ERR_BUFFER_TOO_SMALL (dst_size below n
 * elements), HURRAY_ERR_INVALID_ARGUMENT (linspace: start or stop not
 * finite, stop - start overflowing float64, an integer element out of
 * range).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_fill_arange_int(uint8_t type_tag, uint64_t n,
                                                                uint64_t first, uint64_t step,
                                                                void *dst, uint64_t dst_size,
                                                                HurrayError *err);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_fill_arange_float(uint8_t type_tag, uint64_t n,
                                                                  double first, double second,
                                                                  void *dst, uint64_t dst_size,
                                                                  HurrayError *err);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_fill_linspace(uint8_t type_tag, uint64_t n,
                                                              double start, double stop,
                                                              bool endpoint, void *dst,
                                                              uint64_t dst_size, double *out_bad,
                                                              HurrayError *err);

/* ---- one value repeated ------------------------------------------------------ */

/*
 * hurray_fill_value: n copies of one element into `dst` (borrowed, dst_size
 * bytes; NULL allowed when n is 0). `value` holds the element as the type
 * stores it (host byte order, its size in bytes); for bool one byte, true
 * when not zero: bool elements are packed LSB-first, the padding bits of the
 * last byte zero. The buffer is written 16 bytes at a time and never read
 * back (the Python package's hurray.ones and hurray.full are this function).
 *
 * hurray_fill_eye: `value` on diagonal k of a rows x cols row-major matrix
 * (0 the main one, k > 0 above, k < 0 below; one beyond the matrix has no
 * element). Only the diagonal is written: on zeroed memory (hurray_alloc_zeroed,
 * whose large buffers cost nothing until written) it makes hurray.eye.
 *
 * Types: bool and every named type whose elements are whole bytes dividing
 * 16 (the 1-, 2-, 4-, 8- and 16-byte types). Errors: HURRAY_ERR_INVALID_TYPE
 * (a tag that names no type), HURRAY_ERR_UNSUPPORTED (a sub-byte type but
 * bool: set its codes with hurray_value_set_code), HURRAY_ERR_NULL_POINTER
 * (`value`; `dst` with elements), HURRAY_ERR_BUFFER_TOO_SMALL (dst_size below
 * the elements' bytes), HURRAY_ERR_INVALID_ARGUMENT (eye: rows x cols
 * overflowing 64 bits); nothing is written then.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_fill_value(uint8_t type_tag, uint64_t n,
                                                           const void *value, void *dst,
                                                           uint64_t dst_size, HurrayError *err);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_fill_eye(uint8_t type_tag, uint64_t rows,
                                                         uint64_t cols, int64_t k,
                                                         const void *value, void *dst,
                                                         uint64_t dst_size, HurrayError *err);

/*
 * One scalar as NumPy stores it (numpy.full's element for a Python number;
 * the Python package's hurray.full, hurray.ones and hurray.eye): the
 * element's bytes, in host byte order, into `out` (room for
 * HURRAY_MAX_ELEMENT_BYTES, 16).
 *
 * hurray_scalar_from_double: float64 and complex128 exact; float32 and
 * complex64 by C's conversion; float16 rounded once from the double;
 * bfloat16 through float32 (two roundings, as NumPy's cast); float8_e4m3
 * and float8_e5m2 to nearest even (beyond the largest finite value e5m2
 * gives an infinity, e4m3 NaN); float8_e8m0 a power of two 2^-126 .. 2^127
 * only (HURRAY_ERR_INVALID_ARGUMENT otherwise). `im` is the imaginary part
 * of a complex type, ignored otherwise.
 *
 * hurray_scalar_from_int: the integer given by its sign and magnitude, into
 * an integer type of 8 to 64 bits (two's complement for the signed ones);
 * outside the type's range HURRAY_ERR_INVALID_ARGUMENT (where NumPy's
 * wrap-around casts would store something else).
 *
 * Errors, nothing written: HURRAY_ERR_INVALID_TYPE (a tag that names no
 * type), HURRAY_ERR_UNSUPPORTED (another type: bool, the sub-byte types,
 * and integers for the first, floats for the second), HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_scalar_from_double(uint8_t type_tag, double re,
                                                                   double im, void *out,
                                                                   HurrayError *err);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_scalar_from_int(uint8_t type_tag, bool negative,
                                                                uint64_t magnitude, void *out,
                                                                HurrayError *err);

/* ---- strided arrays ------------------------------------------------------------- */

/*
 * hurray_shape_element_count: the product of `rank` extents (borrowed) into
 * *out; false, *out untouched, when an extent is dynamic (HURRAY_DYNAMIC_DIM)
 * or the product overflows 64 bits. Rank 0 counts one element.
 *
 * hurray_strided_span: the memory a strided array touches whose element
 * [0, ..., 0] is at address `first`, `strides` counting elements of
 * `item_size` bytes (any sign): the lowest address (*base), the bytes
 * spanned (*span, at most INT64_MAX) and the byte offset of element 0 from
 * *base. False, nothing written, when an extent is 0 or above INT64_MAX, an
 * offset overflows, or the span leaves the address space.
 *
 * hurray_elements_gather: the elements of a strided array (`byte_strides`
 * in bytes, any sign; element [0, ..., 0] at `src`) copied into `dst` in
 * row-major order, `item_size` bytes each: dst (borrowed) holds count *
 * item_size bytes. hurray_elements_gather_convert converts each element
 * from src_type to dst_type on the way (the types and rules of
 * hurray_elements_convert; dst holds count elements of dst_type).
 * hurray_elements_gather_bool packs an array of one-byte bools (nonzero is
 * true) into bits, LSB first, in row-major order: dst holds ceil(count / 8)
 * bytes, the padding bits of the last one zero.
 *
 * The memory the arguments describe must be readable (every element
 * address; hurray_strided_span checks that the offsets fit). Errors, nothing
 * written: HURRAY_ERR_INVALID_ARGUMENT (rank above HURRAY_MAX_RANK, a
 * dynamic extent, a count beyond 64 bits), HURRAY_ERR_NULL_POINTER (shape
 * or strides with rank > 0, src or dst with elements), and for the
 * conversion the type errors of hurray_elements_convert.
 *
 * hurray_bool_pack / hurray_bool_unpack: `count` bools between one byte
 * each (nonzero is true; unpacked as 0 or 1) and bits packed LSB first
 * (ceil(count / 8) bytes; pack writes the last byte's padding bits zero).
 * Both borrowed, not overlapping.
 */
HURRAY_API bool hurray_shape_element_count(uint32_t rank, const uint64_t *shape, uint64_t *out);
HURRAY_API bool hurray_strided_span(uintptr_t first, uint64_t item_size, uint32_t rank,
                                    const uint64_t *shape, const int64_t *strides,
                                    uintptr_t *base, uint64_t *span, uint64_t *byte_offset);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_elements_gather(const void *src, uint32_t rank,
                                                                const uint64_t *shape,
                                                                const int64_t *byte_strides,
                                                                uint64_t item_size, void *dst);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_elements_gather_convert(
    uint8_t src_type, const void *src, uint32_t rank, const uint64_t *shape,
    const int64_t *byte_strides, uint8_t dst_type, void *dst);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_elements_gather_bool(const void *src,
                                                                     uint32_t rank,
                                                                     const uint64_t *shape,
                                                                     const int64_t *byte_strides,
                                                                     void *dst);
HURRAY_API void hurray_bool_pack(const uint8_t *src, uint8_t *dst, uint64_t count);
HURRAY_API void hurray_bool_unpack(const uint8_t *src, uint8_t *dst, uint64_t count);

/* The index (rank entries into `index`, caller storage) of the element at
 * position `flat` of the row-major order of `shape` (borrowed): what a rule
 * found at element `flat` of a flat walk names. False, nothing written, when
 * `flat` is past the element count, an extent is dynamic, the count
 * overflows, rank exceeds HURRAY_MAX_RANK or a pointer is NULL with rank > 0.
 * Rank 0 has the one position 0 (an empty index). */
HURRAY_API bool hurray_shape_unravel(uint32_t rank, const uint64_t *shape, uint64_t flat,
                                     uint64_t *index);

/* The element count of a range from quotient = (stop - start) / step, as
 * NumPy computes it: ceil(quotient), 0 when negative; a nonzero span whose
 * quotient underflowed to (signed) zero has one element when positive, none
 * when negative (`span_nonzero`: stop != start). False, *out untouched, when
 * the count reaches 2**63 (or the quotient is infinite or NaN). */
HURRAY_API bool hurray_arange_length(double quotient, bool span_nonzero, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_CONVERT_H */
