/*
 * vjson - the small JSON reader of the C tests (the golden manifest in
 * test_golden.c, the project's vector manifest in test_vectors.c). Test
 * support only, never part of libhurray.
 *
 * Parses a whole document into a tree. Integers keep all 64 bits (the
 * manifest carries u64 values such as the dynamic-dimension sentinel and
 * float bit patterns), so a number without fraction or exponent is stored as
 * sign + magnitude; other numbers as a double.
 */
#ifndef HURRAY_TEST_VJSON_H
#define HURRAY_TEST_VJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum VjKind {
  VJ_NULL = 0,
  VJ_BOOL = 1,
  VJ_INT = 2,    /* integer literal: neg + mag */
  VJ_NUMBER = 3, /* any other number: num */
  VJ_STRING = 4,
  VJ_ARRAY = 5,
  VJ_OBJECT = 6
} VjKind;

typedef struct VjValue VjValue;
struct VjValue {
  VjKind kind;
  bool b;         /* VJ_BOOL */
  bool neg;       /* VJ_INT: the value is -mag */
  uint64_t mag;   /* VJ_INT */
  double num;     /* VJ_NUMBER */
  char *str;      /* VJ_STRING: NUL-terminated (embedded NULs are rejected) */
  size_t count;   /* VJ_ARRAY / VJ_OBJECT: number of items */
  VjValue *items; /* VJ_ARRAY elements / VJ_OBJECT values */
  char **keys;    /* VJ_OBJECT keys, parallel to items */
};

/*
 * Parses text[0..len). Returns the root (owned: free with vj_free) or NULL on
 * a syntax error, with a message in errbuf (may be NULL). Nesting is limited
 * to 64 levels.
 */
VjValue *vj_parse(const char *text, size_t len, char *errbuf, size_t errlen);

/* Frees a tree returned by vj_parse. NULL is a no-op. */
void vj_free(VjValue *root);

/* Member `key` of an object (borrowed), or NULL if absent or not an object. */
const VjValue *vj_get(const VjValue *obj, const char *key);

/* Number of items of an array or object; 0 for anything else or NULL. */
size_t vj_len(const VjValue *v);

/* Element i of an array (borrowed), or NULL. */
const VjValue *vj_at(const VjValue *arr, size_t i);

/* True for NULL or a JSON null. */
bool vj_is_null(const VjValue *v);

/* Integer accessors: false unless v is an integer that fits. */
bool vj_u64(const VjValue *v, uint64_t *out);
bool vj_i64(const VjValue *v, int64_t *out);

/* Boolean accessor: false unless v is a JSON true/false. */
bool vj_bool(const VjValue *v, bool *out);

/* The string of a VJ_STRING (borrowed), else NULL. */
const char *vj_str(const VjValue *v);

#endif
