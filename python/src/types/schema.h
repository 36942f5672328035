/*
 * types/schema.h - the Python side of libhurray's field tables (layer 2;
 * include/hurray/schema.h): reading, parsing and printing the fields of a
 * layout or a quantization scheme by their kind, so the layout and scheme
 * classes share one constructor, one getter and one repr.
 */
#ifndef HURRAY_PY_TYPES_SCHEMA_H
#define HURRAY_PY_TYPES_SCHEMA_H

#include "util/state.h"

/* The most fields a table has (hrpy_fields_check): the statistics section's 11. */
#define HRPY_MAX_FIELDS 12

/* A struct described by a field table: a HurrayLayout (with its outermost
 * tiled level, for HURRAY_FIELD_IN_LEVEL fields), a HurrayQuantization or a
 * HurrayStatistics. */
typedef struct HrpyRecord {
  const HurrayFieldInfo *fields;
  uint32_t count;
  char *base;  /* the HurrayLayout or HurrayQuantization */
  char *level; /* HurrayTiledLevel of IN_LEVEL fields, or NULL */
  uint32_t n;  /* entries of the HURRAY_COUNT_RANK arrays */
} HrpyRecord;

/* 0 when every field of `fields` has a kind and flags this binding handles
 * (checked at module init), else -1 with SystemError. */
int hrpy_fields_check(const HurrayFieldInfo *fields, uint32_t count, const char *owner);

/* The integer stored for scalar field i (I32 sign-extended; 0 for arrays). */
uint64_t hrpy_record_u64(const HrpyRecord *r, uint32_t i);
/* False when field i is absent: a CONDITIONAL field whose condition fails, a
 * NULLABLE one holding its absent_value, a MASKED one whose bit is clear. */
bool hrpy_record_present(const HrpyRecord *r, uint32_t i);
/* The Python value of field i (None when absent); not for NESTED fields. New
 * reference. */
PyObject *hrpy_record_get(HrpyState *st, const HrpyRecord *r, uint32_t i);
/*
 * "<cls>(<lead>, name=value, ...)" over the fields: FIXED fields and absent
 * CONDITIONAL, SYMMETRIC or MASKED fields are left out; `nested` (borrowed, may be
 * NULL) is printed for a NESTED field. `lead` may be NULL.
 */
PyObject *hrpy_record_repr(HrpyState *st, const char *cls, const char *lead, const HrpyRecord *r,
                           PyObject *nested);

/* The constructor parameters of a table: every field but the FIXED ones,
 * after `lead` (NULL or one leading name); NULL-terminated into `kw`
 * (HRPY_MAX_FIELDS + 2 entries). *required gets the leading parameters
 * without a default. Returns the count; fields_of[k] is the field index of
 * parameter k (-1 for the lead). */
int hrpy_fields_params(const HurrayFieldInfo *fields, uint32_t count, const char *lead,
                       const char **kw, int *fields_of, int *required);

/* What a constructor fills: the record plus storage for its arrays and
 * bytes. Zero it, set rec.fields/count/base/level, parse, then release. */
typedef struct HrpyBuild {
  HrpyRecord rec;
  bool has_rank;         /* a RANK array was parsed (rec.n is its length) ... */
  const char *rank_from; /* ... this one first */
  int64_t arrays[HRPY_MAX_FIELDS][64];
  uint8_t *bytes[HRPY_MAX_FIELDS]; /* PyMem copies */
} HrpyBuild;

/* Stores argument `o` (NULL: not given) of field i into b->rec, by its kind;
 * defaults for a field not given; a MASKED field given sets its bit. NESTED
 * fields are left to the caller. Every RANK array must have as many entries
 * as the first one. */
int hrpy_build_field(HrpyState *st, HrpyBuild *b, uint32_t i, PyObject *o, const char *ctx);
/* After every field: each CONDITIONAL field given exactly when its condition
 * holds (InvalidDescriptorError). `given[i]`: field i was given (not None). */
int hrpy_build_check_conditions(HrpyState *st, const HrpyBuild *b, const bool *given,
                                const char *ctx);
/* After every field: the MASKED fields sharing a bit given all or none
 * (InvalidDescriptorError naming them). */
int hrpy_build_check_masks(HrpyState *st, const HrpyBuild *b, const bool *given,
                           const char *ctx);
void hrpy_build_release(HrpyBuild *b);

/* The getters of a table as a PyGetSetDef array: `common` (NULL or
 * NULL-terminated) first, then one per field, calling `fn` with the field as
 * its closure. Built once per process and published in *slot (static storage
 * the caller owns), so the descriptors of every interpreter share it. */
PyGetSetDef *hrpy_fields_getset(PyGetSetDef **slot, const PyGetSetDef *common,
                                const HurrayFieldInfo *fields, uint32_t count, getter fn);

#endif /* HURRAY_PY_TYPES_SCHEMA_H */
