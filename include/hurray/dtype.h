/*
 * hurray/dtype.h - the element type system (spec: element-types.md).
 *
 * A type tag is one wire byte. Ranges: 0x00 invalid; 0x01-0x3F Tier 1;
 * 0x40-0x7F Tier 2; 0x80-0xEF reserved; 0xF0-0xFE private (described by the
 * descriptor's extension type section); 0xFF invalid. Tags inside 0x01-0x7F
 * that name no type (and 0x47, explicitly reserved) are "unassigned".
 */
#ifndef HURRAY_DTYPE_H
#define HURRAY_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(tag, NAME, "name", bit_width, tier, flags) - every assigned type tag. */
#define HURRAY_DTYPE_TABLE(X)                                                    \
  X(0x01, FLOAT16,      "float16",      16, 1, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x02, BFLOAT16,     "bfloat16",     16, 1, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x03, FLOAT32,      "float32",      32, 1, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x04, FLOAT64,      "float64",      64, 1, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x10, INT8,         "int8",          8, 1, HURRAY_DTF_INT | HURRAY_DTF_SIGNED)   \
  X(0x11, UINT8,        "uint8",         8, 1, HURRAY_DTF_INT)                       \
  X(0x12, INT16,        "int16",        16, 1, HURRAY_DTF_INT | HURRAY_DTF_SIGNED)   \
  X(0x13, UINT16,       "uint16",       16, 1, HURRAY_DTF_INT)                       \
  X(0x14, INT32,        "int32",        32, 1, HURRAY_DTF_INT | HURRAY_DTF_SIGNED)   \
  X(0x15, UINT32,       "uint32",       32, 1, HURRAY_DTF_INT)                       \
  X(0x16, INT64,        "int64",        64, 1, HURRAY_DTF_INT | HURRAY_DTF_SIGNED)   \
  X(0x17, UINT64,       "uint64",       64, 1, HURRAY_DTF_INT)                       \
  X(0x20, BOOL,         "bool",          1, 1, HURRAY_DTF_BOOL)                      \
  X(0x40, FLOAT8_E4M3,  "float8_e4m3",   8, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x41, FLOAT8_E5M2,  "float8_e5m2",   8, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x42, FLOAT8_E8M0,  "float8_e8m0",   8, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_NO_ZERO) \
  X(0x43, FLOAT4_E2M1,  "float4_e2m1",   4, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x44, FLOAT6_E2M3,  "float6_e2m3",   6, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x45, FLOAT6_E3M2,  "float6_e3m2",   6, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x46, FLOAT128,     "float128",    128, 2, HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED) \
  X(0x48, INT4,         "int4",          4, 2, HURRAY_DTF_INT | HURRAY_DTF_SIGNED)   \
  X(0x49, UINT4,        "uint4",         4, 2, HURRAY_DTF_INT)                       \
  X(0x4A, INT2,         "int2",          2, 2, HURRAY_DTF_INT | HURRAY_DTF_SIGNED)   \
  X(0x4B, UINT2,        "uint2",         2, 2, HURRAY_DTF_INT)                       \
  X(0x50, COMPLEX64,    "complex64",    64, 2,                                       \
    HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED | HURRAY_DTF_COMPLEX)                       \
  X(0x51, COMPLEX128,   "complex128",  128, 2,                                       \
    HURRAY_DTF_FLOAT | HURRAY_DTF_SIGNED | HURRAY_DTF_COMPLEX)

/* Flag bits of HurrayDtypeInfo.flags. */
#define HURRAY_DTF_FLOAT   0x01u /* floating point (complex included) */
#define HURRAY_DTF_INT     0x02u /* two's complement or unsigned integer */
#define HURRAY_DTF_SIGNED  0x04u /* has a sign (floats other than e8m0, signed ints) */
#define HURRAY_DTF_BOOL    0x08u
#define HURRAY_DTF_COMPLEX 0x10u
#define HURRAY_DTF_NO_ZERO 0x20u /* no code is zero (float8_e8m0: powers of two only) */

/* Bytes of the widest named type (float128, complex128): room for one element
 * of any of them (hurray_scalar_from_double's `out`). */
#define HURRAY_MAX_ELEMENT_BYTES 16u

/* The most elements, and the most bytes, one buffer can address: 2^63 - 1
 * (PTRDIFF_MAX on 64-bit platforms, Python's and NumPy's largest size; the
 * layout rules keep element offsets below 2^63). hurray_dense_buffer_size
 * refuses what is beyond it. */
#define HURRAY_MAX_ADDRESSABLE ((uint64_t)INT64_MAX)

/* Type tags as constants: HURRAY_DTYPE_FLOAT32 = 0x03, ... */
enum HurrayDtypeTag {
#define HURRAY_X_DT_(tag, NAME, name, bits, tier, flags) HURRAY_DTYPE_##NAME = (tag),
  HURRAY_DTYPE_TABLE(HURRAY_X_DT_)
#undef HURRAY_X_DT_
  HURRAY_DTYPE_RESERVED_47 = 0x47,
  HURRAY_DTYPE_PRIVATE_FIRST = 0xF0,
  HURRAY_DTYPE_PRIVATE_LAST = 0xFE
};

/* What a tag byte is. Shared by type, layout, scheme, device and class tags. */
typedef enum HurrayTagKind {
  HURRAY_TAG_INVALID = 0,    /* 0x00 or 0xFF (or otherwise never valid) */
  HURRAY_TAG_NAMED = 1,      /* assigned by the spec and known to this library */
  HURRAY_TAG_UNASSIGNED = 2, /* inside an assigned range but naming nothing yet */
  HURRAY_TAG_RESERVED = 3,   /* reserved for future versions of the spec */
  HURRAY_TAG_PRIVATE = 4     /* 0xF0-0xFE, implementation-defined */
} HurrayTagKind;

/* Static facts about one named element type. */
typedef struct HurrayDtypeInfo {
  uint8_t tag;
  uint8_t tier;       /* 1 or 2 */
  uint16_t bit_width; /* 1, 2, 4, 6, 8, 16, 32, 64 or 128 */
  uint8_t flags;      /* HURRAY_DTF_* */
  const char *name;   /* static string, e.g. "float32" */
} HurrayDtypeInfo;

/* Info of a named tag, or NULL for any other byte. Borrowed, static. */
HURRAY_API const HurrayDtypeInfo *hurray_dtype_info(uint8_t tag);

/* Classifies a type tag byte. */
HURRAY_API HurrayTagKind hurray_dtype_tag_kind(uint8_t tag);

/* Name of a named tag, else NULL. Static string (borrowed, never free). */
HURRAY_API const char *hurray_dtype_name(uint8_t tag);

/* Looks a name up ("float32", "int4", ...; `name` borrowed). *out_tag (caller
 * storage) is written on success only. HURRAY_ERR_INVALID_TYPE if unknown,
 * HURRAY_ERR_NULL_POINTER if name or out_tag is NULL. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dtype_from_name(const char *name, uint8_t *out_tag);

/* Looks up a name as other libraries spell it: hurray's names, then NumPy's
 * and ml_dtypes' ("float8_e4m3fn", "half", "bool_"), PyTorch's (also with
 * "torch." before it) and safetensors' dtype codes ("BF16", "F8_E4M3").
 * *out_tag is written on success only. HURRAY_ERR_UNSUPPORTED for a foreign
 * type with no hurray equivalent ("float8_e4m3fnuz", "complex32", ...),
 * err->reason saying why; HURRAY_ERR_INVALID_TYPE for a name nobody gives,
 * err->reason "did you mean 'float32'?" when one is close (field "name");
 * HURRAY_ERR_NULL_POINTER. `err` may be NULL. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dtype_from_alias(const char *name,
                                                                 uint8_t *out_tag,
                                                                 HurrayError *err);

/* Predicates; all false for tags that are not named. */
HURRAY_API bool hurray_dtype_is_float(uint8_t tag);   /* complex counts as float */
HURRAY_API bool hurray_dtype_is_integer(uint8_t tag); /* bool is not an integer */
HURRAY_API bool hurray_dtype_is_signed(uint8_t tag);
HURRAY_API bool hurray_dtype_is_sub_byte(uint8_t tag); /* bit width < 8 */
HURRAY_API bool hurray_dtype_is_complex(uint8_t tag);
/* Whether zero is a value of the type, stored as all bits clear (so zeroed
 * memory holds zeros): every named type but float8_e8m0 (HURRAY_DTF_NO_ZERO). */
HURRAY_API bool hurray_dtype_has_zero(uint8_t tag);
/* The standard numeric types: every Tier 1 type (bool, the integers of 8 to
 * 64 bits, float16, bfloat16, float32, float64) and complex64, complex128,
 * the types NumPy (with ml_dtypes' bfloat16) and PyTorch compute in; false
 * for the Tier 2 storage formats (float8, float6, float4, the 2- and 4-bit
 * integers) and float128. */
HURRAY_API bool hurray_dtype_is_standard(uint8_t tag);

/*
 * Bytes needed to store `count` packed elements of a named type:
 *   bit width 1/2/4: ceil(count * bits / 8) (LSB-first packing);
 *   bit width 6: ceil(count / 4) * 3 (four elements per three-byte group);
 *   otherwise count * bits / 8.
 * HURRAY_ERR_INVALID_TYPE for a tag that is not named (private types need
 * hurray_extension_buffer_size_bytes), HURRAY_ERR_INVALID_ARGUMENT if the
 * result overflows uint64_t, HURRAY_ERR_NULL_POINTER if out is NULL.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_buffer_size_bytes(
    uint8_t type_tag, uint64_t count, uint64_t *out);

/*
 * Same for a private type described by an extension type section with the
 * given bit width and packing factor: ceil(count / packing_factor) when
 * bit_width < 8, else count * (bit_width / 8). HURRAY_ERR_INVALID_TYPE when
 * the pair is not one the spec allows (1, 2 or 4 bits with packing_factor
 * 8 / bit_width; a multiple of 8 bits with packing_factor 1),
 * HURRAY_ERR_INVALID_ARGUMENT if the result overflows uint64_t,
 * HURRAY_ERR_NULL_POINTER if out is NULL.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_extension_buffer_size_bytes(
    uint32_t bit_width, uint8_t packing_factor, uint64_t count, uint64_t *out);

/*
 * The element count (*out_count, may be NULL) and byte size (*out_bytes) of a
 * dense tensor of the named type `type_tag` and the shape `shape` (`rank`
 * extents, borrowed; NULL allowed when rank is 0): one buffer holding every
 * element, packed as hurray_buffer_size_bytes packs them (row- and
 * column-major alike). Every extent, the element count and the byte size must
 * be at most HURRAY_MAX_ADDRESSABLE (2^63 - 1): the size of a buffer that can
 * be allocated and addressed (the Python package's creation functions ask it
 * before allocating). A zero extent makes an empty tensor whatever the others.
 * Written on success only.
 * Errors: HURRAY_ERR_INVALID_ARGUMENT for a dynamic extent
 * (HURRAY_DYNAMIC_DIM, 2^64 - 1: field "shape[i]"), an extent beyond the limit (field
 * "shape[i]"), an element count or byte size beyond it (field "shape"), a rank
 * above HURRAY_MAX_RANK (field "rank"); HURRAY_ERR_INVALID_TYPE for a tag that
 * names no type (field "type_tag"; a private type's size is
 * hurray_extension_buffer_size_bytes); HURRAY_ERR_NULL_POINTER. `err` may be
 * NULL.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dense_buffer_size(uint8_t type_tag, uint32_t rank,
                                                                  const uint64_t *shape,
                                                                  uint64_t *out_count,
                                                                  uint64_t *out_bytes,
                                                                  HurrayError *err);

/* The word of a tag kind in messages: "invalid", "named", "unassigned",
 * "reserved", "private" ("invalid" for a value outside the enum). Static. */
HURRAY_API const char *hurray_tag_kind_name(HurrayTagKind kind);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_DTYPE_H */
