/*
 * A tiny JSON reader for test manifests (golden corpus, vectors). Parses a
 * whole document into a tree owned by the caller (free with tj_free). Strings
 * support the standard escapes; \u escapes are decoded to UTF-8 (BMP only).
 * Integers are kept exactly (tj_u64 / tj_i64) besides their double value.
 */
#ifndef HURRAY_TEST_JSON_H
#define HURRAY_TEST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum TjKind { TJ_NULL, TJ_BOOL, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT } TjKind;

typedef struct TjValue TjValue;
struct TjValue {
  TjKind kind;
  bool boolean;
  double number;
  bool is_integer; /* the literal had no fraction or exponent */
  bool negative;
  uint64_t magnitude; /* |value| for integers */
  char *string;       /* TJ_STRING, NUL-terminated (owned by the tree) */
  size_t count;       /* TJ_ARRAY / TJ_OBJECT: number of items */
  TjValue *items;     /* count values */
  char **keys;        /* TJ_OBJECT: count keys */
};

/* Parses text[0..len). NULL on a syntax error (then *error_at, when not NULL,
 * receives the byte offset). The result is owned: free with tj_free. */
TjValue *tj_parse(const char *text, size_t len, size_t *error_at);
void tj_free(TjValue *v);

/* Member of an object (NULL if absent or v is not an object). Borrowed. */
const TjValue *tj_get(const TjValue *v, const char *key);
/* Item i of an array (NULL if out of range). Borrowed. */
const TjValue *tj_at(const TjValue *v, size_t i);
/* Number of items of an array/object, 0 otherwise. */
size_t tj_len(const TjValue *v);

/* Typed accessors; they return false when the value has another type or
 * does not fit. */
bool tj_u64(const TjValue *v, uint64_t *out);
bool tj_i64(const TjValue *v, int64_t *out);
bool tj_bool(const TjValue *v, bool *out);
const char *tj_str(const TjValue *v); /* NULL unless a string */

#endif
