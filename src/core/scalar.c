/*
 * One scalar as NumPy stores it (include/hurray/convert.h, "one value
 * repeated"): the element bytes numpy.full gives for a Python number, for
 * the Python package's hurray.full, hurray.ones and hurray.eye and any C
 * caller. Floats: float16 rounded once from the double, bfloat16 through
 * float32 (two roundings, as NumPy's cast), the float8 types by the codec
 * (hurray_value_code_from_double); integers: exact, refused out of range
 * (NumPy 2 raises OverflowError there too).
 */
#include "hurray/convert.h"

#include <string.h>

#include "hurray/dtype.h"
#include "internal/common.h"

static HurrayStatus check(uint8_t tag, const void *out, HurrayError *err,
                          const HurrayDtypeInfo **info) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *info = hurray_dtype_info(tag);
  if (*info == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "type_tag",
                        "0x%02x names no element type", tag);
  return HURRAY_OK;
}

HurrayStatus hurray_scalar_from_double(uint8_t type_tag, double re, double im, void *out,
                                       HurrayError *err) {
  const HurrayDtypeInfo *info;
  HURRAY_TRY(check(type_tag, out, err, &info));
  uint8_t *o = out;
  switch (type_tag) {
    case HURRAY_DTYPE_FLOAT64: memcpy(o, &re, 8); return HURRAY_OK;
    case HURRAY_DTYPE_COMPLEX128:
      memcpy(o, &re, 8);
      memcpy(o + 8, &im, 8);
      return HURRAY_OK;
    case HURRAY_DTYPE_FLOAT32:
    case HURRAY_DTYPE_COMPLEX64: {
      float f[2] = {(float)re, (float)im};
      memcpy(o, f, type_tag == HURRAY_DTYPE_FLOAT32 ? 4 : 8);
      return HURRAY_OK;
    }
    case HURRAY_DTYPE_FLOAT16:
    case HURRAY_DTYPE_BFLOAT16: {
      uint16_t h = type_tag == HURRAY_DTYPE_FLOAT16 ? hurray_float16_from_double(re)
                                                    : hurray_bfloat16_from_float((float)re);
      memcpy(o, &h, 2);
      return HURRAY_OK;
    }
    case HURRAY_DTYPE_FLOAT8_E4M3:
    case HURRAY_DTYPE_FLOAT8_E5M2:
    case HURRAY_DTYPE_FLOAT8_E8M0: {
      uint64_t code = 0;
      if (hurray_value_code_from_double(type_tag, re, 0, &code) != HURRAY_OK)
        return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "re",
                            "cannot be stored as %s%s", info->name,
                            type_tag == HURRAY_DTYPE_FLOAT8_E8M0
                                ? " (a power of two 2**-126 .. 2**127)"
                                : "");
      o[0] = (uint8_t)code;
      return HURRAY_OK;
    }
    default:
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                          "%s values cannot be encoded from a double (float16, bfloat16, "
                          "float32, float64, complex and float8 only)",
                          info->name);
  }
}

HurrayStatus hurray_scalar_from_int(uint8_t type_tag, bool negative, uint64_t magnitude,
                                    void *out, HurrayError *err) {
  const HurrayDtypeInfo *info;
  HURRAY_TRY(check(type_tag, out, err, &info));
  if ((info->flags & HURRAY_DTF_INT) == 0 || info->bit_width < 8 || info->bit_width > 64 ||
      info->bit_width % 8 != 0)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        "%s values cannot be encoded from an integer (integers of 8 to 64 bits "
                        "only)",
                        info->name);
  unsigned bits = info->bit_width;
  bool is_signed = (info->flags & HURRAY_DTF_SIGNED) != 0;
  /* the largest magnitude each sign allows */
  uint64_t top = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1u;
  uint64_t pos = is_signed ? top >> 1 : top, neg = is_signed ? (top >> 1) + 1u : 0;
  if (negative && magnitude == 0) negative = false; /* -0 */
  if (magnitude > (negative ? neg : pos))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "magnitude",
                        "%s%llu is out of range for %s", negative ? "-" : "",
                        (unsigned long long)magnitude, info->name);
  uint64_t v = negative ? (uint64_t)0 - magnitude : magnitude; /* two's complement */
  uint8_t *o = out;
  for (unsigned i = 0; i < bits / 8u; i++) o[i] = (uint8_t)(v >> (8 * i)); /* little-endian */
  return HURRAY_OK;
}
