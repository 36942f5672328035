/* The element type table (include/hurray/dtype.h; spec: element-types.md). */
#include <string.h>

#include "hurray/dtype.h"
#include "internal/common.h"

enum {
#define HURRAY_X_IDX_(tag, NAME, name, bits, tier, flags) HURRAY_DTI_##NAME,
  HURRAY_DTYPE_TABLE(HURRAY_X_IDX_)
#undef HURRAY_X_IDX_
  HURRAY_DTI_COUNT_
};

static const HurrayDtypeInfo k_dtypes[] = {
#define HURRAY_X_INFO_(tag, NAME, name, bits, tier, flags) {tag, tier, bits, flags, name},
    HURRAY_DTYPE_TABLE(HURRAY_X_INFO_)
#undef HURRAY_X_INFO_
};
#define K_NDTYPES (sizeof k_dtypes / sizeof k_dtypes[0])

/* Tag byte to table slot: a switch the compiler turns into a jump table. */
const HurrayDtypeInfo *hurray_dtype_info(uint8_t tag) {
  switch (tag) {
#define HURRAY_X_SLOT_(t, NAME, name, bits, tier, flags) \
  case (t):                                               \
    return &k_dtypes[HURRAY_DTI_##NAME];
    HURRAY_DTYPE_TABLE(HURRAY_X_SLOT_)
#undef HURRAY_X_SLOT_
    default:
      return NULL;
  }
}

HurrayTagKind hurray_dtype_tag_kind(uint8_t tag) {
  if (tag == 0x00 || tag == 0xFF) return HURRAY_TAG_INVALID;
  if (hurray_dtype_info(tag) != NULL) return HURRAY_TAG_NAMED;
  if (tag >= 0xF0) return HURRAY_TAG_PRIVATE;
  if (tag >= 0x80 || tag == 0x47) return HURRAY_TAG_RESERVED;
  return HURRAY_TAG_UNASSIGNED;
}

const char *hurray_dtype_name(uint8_t tag) {
  const HurrayDtypeInfo *i = hurray_dtype_info(tag);
  return i ? i->name : NULL;
}

HurrayStatus hurray_dtype_from_name(const char *name, uint8_t *out_tag) {
  if (name == NULL || out_tag == NULL) return HURRAY_ERR_NULL_POINTER;
  for (size_t k = 0; k < K_NDTYPES; k++) {
    if (strcmp(k_dtypes[k].name, name) == 0) {
      *out_tag = k_dtypes[k].tag;
      return HURRAY_OK;
    }
  }
  return HURRAY_ERR_INVALID_TYPE;
}

static uint8_t flags_of(uint8_t tag) {
  const HurrayDtypeInfo *i = hurray_dtype_info(tag);
  return i ? i->flags : 0;
}

bool hurray_dtype_is_float(uint8_t tag) { return (flags_of(tag) & HURRAY_DTF_FLOAT) != 0; }
bool hurray_dtype_is_integer(uint8_t tag) { return (flags_of(tag) & HURRAY_DTF_INT) != 0; }
bool hurray_dtype_is_signed(uint8_t tag) { return (flags_of(tag) & HURRAY_DTF_SIGNED) != 0; }
bool hurray_dtype_is_complex(uint8_t tag) { return (flags_of(tag) & HURRAY_DTF_COMPLEX) != 0; }
bool hurray_dtype_has_zero(uint8_t tag) {
  return hurray_dtype_info(tag) != NULL && (flags_of(tag) & HURRAY_DTF_NO_ZERO) == 0;
}
bool hurray_dtype_is_standard(uint8_t tag) {
  const HurrayDtypeInfo *i = hurray_dtype_info(tag);
  return i != NULL && (i->tier == 1 || (i->flags & HURRAY_DTF_COMPLEX) != 0);
}
bool hurray_dtype_is_sub_byte(uint8_t tag) {
  const HurrayDtypeInfo *i = hurray_dtype_info(tag);
  return i != NULL && i->bit_width < 8;
}

HurrayStatus hurray_buffer_size_bytes(uint8_t type_tag, uint64_t count, uint64_t *out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  const HurrayDtypeInfo *i = hurray_dtype_info(type_tag);
  if (i == NULL) return HURRAY_ERR_INVALID_TYPE;
  uint64_t bits = i->bit_width;
  if (bits == 6) {
    /* four elements per three-byte group */
    uint64_t groups = count / 4 + (count % 4 != 0);
    if (hurray__mul_overflow_u64(groups, 3, out)) return HURRAY_ERR_INVALID_ARGUMENT;
    return HURRAY_OK;
  }
  if (bits < 8) {
    uint64_t per_byte = 8 / bits;
    *out = count / per_byte + (count % per_byte != 0);
    return HURRAY_OK;
  }
  if (hurray__mul_overflow_u64(count, bits / 8, out)) return HURRAY_ERR_INVALID_ARGUMENT;
  return HURRAY_OK;
}

HurrayStatus hurray_extension_buffer_size_bytes(uint32_t bit_width, uint8_t packing_factor,
                                                uint64_t count, uint64_t *out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  if (bit_width == 0) return HURRAY_ERR_INVALID_TYPE;
  if (bit_width < 8) {
    if ((bit_width != 1 && bit_width != 2 && bit_width != 4) ||
        packing_factor != 8 / bit_width)
      return HURRAY_ERR_INVALID_TYPE;
    *out = count / packing_factor + (count % packing_factor != 0);
    return HURRAY_OK;
  }
  if (packing_factor != 1 || bit_width % 8 != 0) return HURRAY_ERR_INVALID_TYPE;
  if (hurray__mul_overflow_u64(count, bit_width / 8, out)) return HURRAY_ERR_INVALID_ARGUMENT;
  return HURRAY_OK;
}
