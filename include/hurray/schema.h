/*
 * hurray/schema.h - what each layout and each quantization scheme carries,
 * as data (src/layout/info.c, src/quant/info.c; docs/reference/c-api/schema.md).
 *
 * One static description per layout tag and per scheme tag (and one of the
 * statistics section's fields): its name, and
 * for every field of its payload the name, the kind of value, how many
 * entries an array has, where the value sits in HurrayLayout (or
 * HurrayTiledLevel, or HurrayQuantization), its default, its closed set of
 * values and the role of each buffer it names. A binding builds its classes
 * from these tables (one generic constructor, getter and repr) instead of
 * writing each layout out by hand; the rules themselves stay in the
 * validators (hurray_layout_validate_shape, hurray_quant_check), which a
 * binding runs on what it built. Every pointer here is static: borrowed,
 * never written or freed.
 */
#ifndef HURRAY_SCHEMA_H
#define HURRAY_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/dtype.h"
#include "hurray/export.h"
#include "hurray/layout.h"
#include "hurray/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kind of a field's value, and the C type stored at its offset. */
typedef enum HurrayValueKind {
  HURRAY_VALUE_BOOL = 1,     /* uint8_t, 0 or 1 */
  HURRAY_VALUE_ENUM = 2,     /* uint8_t, one of `values` (by name: value_names) */
  HURRAY_VALUE_TYPE_TAG = 3, /* uint8_t element type tag (hurray/dtype.h), one of `values` */
  HURRAY_VALUE_U32 = 4,      /* uint32_t */
  HURRAY_VALUE_I32 = 5,      /* int32_t */
  HURRAY_VALUE_U64 = 6,      /* uint64_t */
  HURRAY_VALUE_F32 = 7,      /* float (float32 on the wire) */
  HURRAY_VALUE_BUFFER_INDEX = 8, /* uint32_t: the index of a buffer whose role is `role` */
  HURRAY_VALUE_U32_ARRAY = 9,   /* const uint32_t * */
  HURRAY_VALUE_I64_ARRAY = 10,   /* const int64_t * */
  HURRAY_VALUE_U64_ARRAY = 11,   /* const uint64_t * */
  HURRAY_VALUE_BYTES = 12,       /* const uint8_t * */
  /* The nested levels of a tiled layout: a tiled layout of its own, whose
   * levels are HurrayLayout.u.tiled.levels[1 .. depth-1] (offset unused). */
  HURRAY_VALUE_NESTED = 13,
  HURRAY_VALUE_U8 = 14,          /* uint8_t integer */
  HURRAY_VALUE_F64 = 15          /* double (float64 on the wire) */
} HurrayValueKind;

/* How many entries an array (or BYTES) field has. */
typedef enum HurrayValueCount {
  HURRAY_COUNT_ONE = 0,   /* a scalar */
  HURRAY_COUNT_RANK = 1,  /* one per dimension of the tensor */
  HURRAY_COUNT_FIELD = 2  /* the uint32_t stored at count_offset */
} HurrayValueCount;

/* Field flags. */
#define HURRAY_FIELD_OPTIONAL 0x01u    /* a writer may leave it out: default_value */
#define HURRAY_FIELD_NULLABLE 0x02u    /* absent_value stored means "none" */
#define HURRAY_FIELD_CONDITIONAL 0x04u /* present iff fields[when_field] == when_value */
#define HURRAY_FIELD_FIXED 0x08u       /* read-only: always default_value when authored */
#define HURRAY_FIELD_IN_LEVEL 0x10u    /* offset is in the outermost HurrayTiledLevel */
#define HURRAY_FIELD_SYMMETRIC 0x20u   /* NULLABLE, and none iff HURRAY_QUANT_FLAG_SYMMETRIC */
#define HURRAY_FIELD_GIVES_RANK 0x40u  /* the value is the tensor's rank (hilbert_rank) */
#define HURRAY_FIELD_PRIVATE_VALUES 0x80u /* ENUM: 0xF0-0xFE decode as "private" values */
#define HURRAY_FIELD_MASKED 0x100u /* present iff the uint32_t at mask_offset has mask_bit;
                                      fields sharing a bit are given together */

/* One field of a layout payload or a scheme payload. */
typedef struct HurrayFieldInfo {
  const char *name;        /* the spec's field name (and the Python keyword) */
  const char *doc;         /* one sentence */
  HurrayValueKind kind;
  HurrayValueCount count;  /* arrays and BYTES; HURRAY_COUNT_ONE for scalars */
  uint32_t flags;          /* HURRAY_FIELD_* */
  uint32_t offset;         /* where the value (or array pointer) is: in HurrayLayout,
                              HurrayTiledLevel (IN_LEVEL) or HurrayQuantization */
  uint32_t count_offset;   /* HURRAY_COUNT_FIELD: where its uint32_t entry count is */
  uint64_t max;            /* integer scalars and entries: the largest value a writer
                              gives (signed kinds: INT64_MAX / INT32_MAX) */
  uint64_t default_value;  /* OPTIONAL, FIXED: the value when not given */
  uint64_t absent_value;   /* NULLABLE: the stored value meaning "none" */
  uint32_t value_count;    /* ENUM, TYPE_TAG: the values a writer may give ... */
  const char *const *value_names; /* ... their names ("row_major", "float32") */
  const uint8_t *values;          /* ... and their bytes, value_count each */
  uint32_t when_field;     /* CONDITIONAL: index (in the same table) of the field ... */
  uint8_t when_value;      /* ... whose value makes this one present */
  const char *role;        /* BUFFER_INDEX: the role of the buffer it names */
  uint32_t mask_offset;    /* MASKED: where the uint32_t validity mask is ... */
  uint32_t mask_bit;       /* ... and the bit that claims this field */
} HurrayFieldInfo;

/* What one layout carries. */
typedef struct HurrayLayoutInfo {
  uint8_t tag;            /* the named tag; 0 for the private and reserved entries */
  HurrayTagKind tag_kind; /* HURRAY_TAG_NAMED, _PRIVATE or _RESERVED */
  const char *name;       /* hurray_layout_name(tag); "private" / "reserved" otherwise */
  HurrayLayoutClass layout_class;
  uint32_t min_rank;      /* the ranks a tensor of this layout may have */
  uint32_t max_rank;
  uint32_t field_count;   /* the payload, in the order a writer gives it */
  const HurrayFieldInfo *fields;
  bool buffers_known;     /* false for a private or reserved tag: only its definer knows */
  uint32_t buffer_role_count;    /* buffers 0 .. buffer_role_count-1 ... */
  const char *const *buffer_roles;
  uint32_t dim_role_count;       /* ... then, once per dimension L, these roles */
  const char *const *dim_roles;  /* suffixed "_L" ("pos_0", "crd_0", "pos_1", ...) */
} HurrayLayoutInfo;

/* What one quantization scheme carries. */
typedef struct HurrayQuantSchemeInfo {
  uint8_t scheme;         /* the named scheme tag; 0 for the opaque entry */
  HurrayTagKind tag_kind; /* HURRAY_TAG_NAMED, or _PRIVATE for the opaque entry */
  const char *name;       /* hurray_quant_scheme_name(scheme); "opaque" otherwise */
  uint32_t payload_len;   /* bytes, scheme header included; 0 for the opaque entry */
  uint32_t field_count;
  const HurrayFieldInfo *fields;
} HurrayQuantSchemeInfo;

/*
 * The description of a layout tag: the named layout's entry, the one entry
 * shared by the private tags 0xF0-0xFE (extension_layout_id, extension_data:
 * HurrayLayout.u.private_ext) or the one shared by the reserved and
 * unassigned tags (raw_bytes: HurrayLayout.u.opaque, what a permissive
 * decode keeps). NULL for the invalid tags 0x00 and 0xFF. Static, borrowed.
 */
HURRAY_API const HurrayLayoutInfo *hurray_layout_info(uint8_t layout_tag);

/*
 * The description of a scheme tag: the named scheme's entry, or the opaque
 * entry (payload: HurrayQuantization.raw / raw_len, header included) shared
 * by every private, unassigned and reserved scheme. NULL for 0x00 and 0xFF.
 * Static, borrowed.
 */
HURRAY_API const HurrayQuantSchemeInfo *hurray_quant_scheme_info(uint8_t scheme);

/*
 * The name of `value` in an ENUM or TYPE_TAG field: its value_names entry,
 * "private" for 0xF0-0xFE in a field with HURRAY_FIELD_PRIVATE_VALUES, else
 * NULL (also when `field` is NULL or of another kind). Static string.
 */
HURRAY_API const char *hurray_field_value_name(const HurrayFieldInfo *field, uint8_t value);

/*
 * The fields of the statistics section (HurrayStatistics, include/hurray/
 * descriptor.h), in wire order; *count (required) gets their number. Every
 * field is HURRAY_FIELD_MASKED by its computed_mask bit (HURRAY_STAT_*_VALID):
 * value_min, value_max and value_abs_max share one, as do value_mean and
 * value_stddev, nm_n and nm_m, has_nan and has_inf. Static, borrowed.
 */
HURRAY_API const HurrayFieldInfo *hurray_statistics_fields(uint32_t *count);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_SCHEMA_H */
