/*
 * Helpers shared by the quantization files (codec.c, validate.c, dequant.c).
 * Never installed.
 */
#ifndef HURRAY_QUANT_INTERNAL_H
#define HURRAY_QUANT_INTERNAL_H

#include "internal/validate.h"

/* Payload length (header included) of a named scheme, else 0. */
HURRAY_INTERNAL uint32_t hurray__quant_scheme_len(uint8_t scheme);

/* Flag bits a named scheme defines (SYMMETRIC for 0x02 / 0x03, none else). */
HURRAY_INTERNAL uint16_t hurray__quant_defined_flags(uint8_t scheme);

/* Whether `type_tag` may be the storage type of named scheme `scheme`. */
HURRAY_INTERNAL bool hurray__quant_storage_allowed(uint8_t scheme, uint8_t type_tag);

/* Value range of an integer storage type that affine schemes accept
 * (int8 .. uint32, int4/uint4, int2/uint2). False for any other tag. */
HURRAY_INTERNAL bool hurray__quant_int_range(uint8_t type_tag, int64_t *lo, int64_t *hi);

/* The parameter arrays of a scheme, resolved from its typed fields. */
typedef struct HurrayQuantPlan {
  bool has_axis;         /* per-channel, per-block, NF4, MXFP */
  bool symmetric;        /* no zero-point array */
  uint32_t axis;
  uint32_t block_size;   /* 0 for per-tensor and per-channel */
  bool pads_blocks;      /* a partial last block is padded in storage (0x03, 0x04) */
  uint32_t scale_index;  /* HURRAY_QUANT_NO_BUFFER when there is no scale array */
  uint32_t zp_index;     /* HURRAY_QUANT_NO_BUFFER when there is no zero-point array */
  uint8_t scale_tag;     /* dtype tag of one scale; 0 when none */
  uint32_t scale_width;  /* bytes per scale */
  uint64_t entries;      /* scale (and zero-point) entries, from hurray__quant_plan_entries */
  uint64_t scale_bytes;  /* entries * scale_width */
  uint64_t zp_bytes;     /* entries * 4, or 0 */
} HurrayQuantPlan;

/* Fills the fields of `p` that come from q alone (entries and byte counts 0).
 * False when the scheme is not named. */
HURRAY_INTERNAL bool hurray__quant_plan_init(const HurrayQuantization *q, HurrayQuantPlan *p);

/* Outcome of hurray__quant_plan_entries. */
enum { HURRAY_QP_OK = 0, HURRAY_QP_DYNAMIC = 1, HURRAY_QP_OVERFLOW = 2 };

/*
 * Computes p->entries, p->scale_bytes and p->zp_bytes for the descriptor f.
 * Expects axis < rank, shape[axis] static and block_size > 0 (the scheme
 * rules). Returns HURRAY_QP_DYNAMIC when a dimension the count needs is
 * dynamic, HURRAY_QP_OVERFLOW when a count overflows uint64_t.
 */
HURRAY_INTERNAL int hurray__quant_plan_entries(const HurrayDescriptorFields *f,
                                               HurrayQuantPlan *p);

/*
 * Storage elements of a dense quantized tensor: the element count with a
 * partial last block (per-block affine, NF4) padded to a full block. Same
 * return values as hurray__quant_plan_entries.
 */
HURRAY_INTERNAL int hurray__quant_storage_count(const HurrayDescriptorFields *f,
                                                const HurrayQuantPlan *p, uint64_t *out);

/* The plan of f's (named) scheme with its entries computed, checking what
 * the public helpers need: axis < rank and static, block_size > 0, no
 * dynamic dimension the counts need, no overflow (dequant.c). */
HURRAY_INTERNAL HurrayStatus hurray__quant_resolve(const HurrayDescriptorFields *f,
                                                   HurrayQuantPlan *p, HurrayError *err);

/* Note: hurray__quant_validate (validate.h) also accepts o == NULL; every error
 * then carries HURRAY_NO_OFFSET (the public helpers that receive bare fields
 * use this). */

#endif /* HURRAY_QUANT_INTERNAL_H */
