/* What each quantization scheme carries, as data (include/hurray/schema.h;
 * spec: quantization/\*.md): one static description per scheme, for
 * bindings. Calls scheme_tags.c only. Adding a scheme adds its entry here. */
#include "hurray/schema.h"
#include "internal/common.h"

#include <stddef.h>

#define OFF(member) ((uint32_t)offsetof(HurrayQuantization, member))
#define N_(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const char *const k_f32_name[] = {"float32"};
static const uint8_t k_f32_value[] = {HURRAY_QUANT_SCALE_F32};
static const char *const k_scale_names[] = {"float16", "bfloat16", "float32"};
static const uint8_t k_scale_values[] = {HURRAY_QUANT_SCALE_F16, HURRAY_QUANT_SCALE_BF16,
                                         HURRAY_QUANT_SCALE_F32};

#define AXIS(s)                                                                          \
  {.name = "axis", .doc = "The quantized axis (below 64; below the rank once attached).", .kind = HURRAY_VALUE_U32,               \
   .offset = OFF(u.s.axis), .max = UINT32_MAX}
#define BLOCK(s)                                                                         \
  {.name = "block_size", .doc = "Elements per block along axis.", .kind = HURRAY_VALUE_U32, \
   .offset = OFF(u.s.block_size), .max = UINT32_MAX}
#define SCALES(s, text)                                                                  \
  {.name = "scale_buffer_index", .doc = text " (1 to 254: 0 is the data).", .kind = HURRAY_VALUE_BUFFER_INDEX,         \
   .offset = OFF(u.s.scale_buffer_index), .max = UINT32_MAX, .role = "quantization scales"}
#define ZERO_POINTS(s)                                                                   \
  {.name = "zero_point_buffer_index",                                                    \
   .doc = "Buffer holding the int32 zero points (1 to 254; it may be the scales' buffer, "  \
          "holding [scales | zero_points]), or None when symmetric (the wire's 0xFFFFFFFF).", \
   .kind = HURRAY_VALUE_BUFFER_INDEX,                                                    \
   .flags = HURRAY_FIELD_NULLABLE | HURRAY_FIELD_SYMMETRIC,                              \
   .offset = OFF(u.s.zero_point_buffer_index), .max = UINT32_MAX - 1u,                   \
   .absent_value = HURRAY_QUANT_NO_BUFFER, .role = "quantization zero points"}

static const HurrayFieldInfo k_per_tensor[] = {
    {.name = "scale", .doc = "The scale, stored as float32: finite, not zero.", .kind = HURRAY_VALUE_F32,
     .offset = OFF(u.per_tensor.scale)},
    {.name = "zero_point", .doc = "The zero point (int32; within the storage type once attached).", .kind = HURRAY_VALUE_I32,
     .flags = HURRAY_FIELD_OPTIONAL, .offset = OFF(u.per_tensor.zero_point),
     .max = INT32_MAX},
};

static const HurrayFieldInfo k_per_channel[] = {
    AXIS(per_channel),
    SCALES(per_channel, "Buffer holding the float32 scales"),
    ZERO_POINTS(per_channel),
    {.name = "scale_type", .doc = "Element type of the scales (float32).",
     .kind = HURRAY_VALUE_TYPE_TAG, .flags = HURRAY_FIELD_FIXED,
     .offset = OFF(u.per_channel.scale_type), .default_value = HURRAY_QUANT_SCALE_F32,
     .value_count = 1, .value_names = k_f32_name, .values = k_f32_value},
};

static const HurrayFieldInfo k_per_block[] = {
    AXIS(per_block),
    BLOCK(per_block),
    SCALES(per_block, "Buffer holding the per-block scales"),
    ZERO_POINTS(per_block),
    {.name = "scale_type", .doc = "Element type of the scales: float16, bfloat16 or float32.",
     .kind = HURRAY_VALUE_TYPE_TAG, .flags = HURRAY_FIELD_OPTIONAL,
     .offset = OFF(u.per_block.scale_type), .default_value = HURRAY_QUANT_SCALE_F32,
     .value_count = 3, .value_names = k_scale_names, .values = k_scale_values},
};

static const HurrayFieldInfo k_nf4[] = {
    AXIS(nf4), BLOCK(nf4), SCALES(nf4, "Buffer holding the per-block float32 absmax scales")};
static const HurrayFieldInfo k_mxfp[] = {
    AXIS(mxfp), BLOCK(mxfp), SCALES(mxfp, "Buffer holding the per-block float8_e8m0 exponents")};

static const HurrayFieldInfo k_opaque[] = {
    {.name = "payload", .doc = "The section payload, verbatim.", .kind = HURRAY_VALUE_BYTES,
     .count = HURRAY_COUNT_FIELD, .offset = OFF(raw), .count_offset = OFF(raw_len)},
};

/* In the order of HURRAY_QUANT_SCHEME_TABLE (tests/c/test_schema.c checks it). */
static const HurrayQuantSchemeInfo k_schemes[] = {
    {HURRAY_QUANT_PER_TENSOR_AFFINE, HURRAY_TAG_NAMED, "per_tensor_affine", 16,
     N_(k_per_tensor), k_per_tensor},
    {HURRAY_QUANT_PER_CHANNEL_AFFINE, HURRAY_TAG_NAMED, "per_channel_affine", 20,
     N_(k_per_channel), k_per_channel},
    {HURRAY_QUANT_PER_BLOCK_AFFINE, HURRAY_TAG_NAMED, "per_block_affine", 24, N_(k_per_block),
     k_per_block},
    {HURRAY_QUANT_NF4, HURRAY_TAG_NAMED, "nf4", 16, N_(k_nf4), k_nf4},
    {HURRAY_QUANT_MXFP, HURRAY_TAG_NAMED, "mxfp", 16, N_(k_mxfp), k_mxfp},
};

static const HurrayQuantSchemeInfo k_opaque_info = {0, HURRAY_TAG_PRIVATE, "opaque", 0,
                                                    N_(k_opaque), k_opaque};

const HurrayQuantSchemeInfo *hurray_quant_scheme_info(uint8_t scheme) {
  if (hurray_quant_scheme_kind(scheme) == HURRAY_TAG_INVALID) return NULL;
  for (uint32_t i = 0; i < N_(k_schemes); i++)
    if (k_schemes[i].scheme == scheme) return &k_schemes[i];
  return &k_opaque_info;
}
