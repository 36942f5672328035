/*
 * libFuzzer target for the descriptor codec. For each input, in strict and in
 * permissive mode: whatever decodes must re-encode to exactly the bytes it
 * came from (descriptor_length of them), decode again to an equal descriptor,
 * rebuild equal through from_fields and clone, agree with peek_length, and
 * walk with the same status; a failed decode must leave *out NULL. Any
 * violation aborts. A strict success must also be a permissive success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "fuzz_descriptor: check failed at line %d: %s\n",       \
              __LINE__, #cond);                                               \
      abort();                                                                \
    }                                                                         \
  } while (0)

typedef struct WalkCheck {
  const uint8_t *base;
  size_t size;
  uint64_t next;
  int ok;
} WalkCheck;

static void visit(const HurrayFieldEvent *e, void *ctx) {
  WalkCheck *w = ctx;
  if (e->path == NULL || e->bytes != w->base + e->offset || e->offset > w->size ||
      e->size > w->size - e->offset)
    w->ok = 0;
  if (e->kind != HURRAY_FIELD_SECTION) {
    if (e->offset != w->next) w->ok = 0;
    w->next = e->offset + e->size;
  }
  /* Touch the borrowed strings and bytes so a sanitizer sees bad pointers. */
  volatile size_t n = strlen(e->path) + (e->meaning ? strlen(e->meaning) : 0);
  (void)n;
  if (e->size != 0) {
    volatile uint8_t last = e->bytes[e->size - 1];
    (void)last;
  }
}

static HurrayDescriptor *one_mode(const uint8_t *data, size_t size, uint32_t options) {
  HurrayDescriptor *d = (HurrayDescriptor *)(uintptr_t)1;
  HurrayError err;
  HurrayStatus st = hurray_descriptor_decode_ex(data, size, options, &d, &err);

  WalkCheck wc = {data, size, 0, 1};
  HurrayStatus wst = hurray_descriptor_walk(data, size, options, visit, &wc, NULL);
  CHECK(wst == st);
  CHECK(wc.ok);

  if (st != HURRAY_OK) {
    CHECK(d == NULL);
    CHECK(err.status == st);
    CHECK(err.message[0] != '\0');
    return NULL;
  }
  CHECK(d != NULL);
  uint32_t dlen = 0;
  CHECK(hurray_descriptor_peek_length(data, size, &dlen, NULL) == HURRAY_OK);
  CHECK(dlen <= size);
  CHECK(wc.next == dlen);

  uint64_t n = 0;
  CHECK(hurray_descriptor_encoded_len(d, &n) == HURRAY_OK);
  CHECK(n == dlen);
  uint8_t *out = malloc(n ? n : 1);
  CHECK(out != NULL);
  CHECK(hurray_descriptor_encode(d, out, n, &n) == HURRAY_OK);
  CHECK(memcmp(out, data, dlen) == 0);

  HurrayDescriptor *again = NULL;
  CHECK(hurray_descriptor_decode_ex(out, n, options, &again, NULL) == HURRAY_OK);
  CHECK(hurray_descriptor_equal(d, again));

  HurrayDescriptorFields f;
  CHECK(hurray_descriptor_fields(d, &f) == HURRAY_OK);
  HurrayDescriptor *built = NULL;
  CHECK(hurray_descriptor_from_fields(&f, options, &built, NULL) == HURRAY_OK);
  CHECK(hurray_descriptor_equal(d, built));
  HurrayDescriptor *copy = NULL;
  CHECK(hurray_descriptor_clone(d, &copy) == HURRAY_OK);
  CHECK(hurray_descriptor_equal(d, copy));

  /* Sizes of a valid descriptor: a value, or the one documented refusal (a dynamic
   * dimension, an overflowing product or sum). */
  uint64_t v;
  st = hurray_descriptor_element_count(d, &v);
  CHECK(st == HURRAY_OK || st == HURRAY_ERR_INVALID_ARGUMENT);
  st = hurray_descriptor_data_bytes(d, &v);
  CHECK(st == HURRAY_OK || st == HURRAY_ERR_INVALID_ARGUMENT);

  /* Every handle here is live and owned: destroy succeeds. */
  CHECK(hurray_descriptor_destroy(copy) == HURRAY_OK);
  CHECK(hurray_descriptor_destroy(built) == HURRAY_OK);
  CHECK(hurray_descriptor_destroy(again) == HURRAY_OK);
  free(out);
  return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HurrayDescriptor *strict = one_mode(data, size, HURRAY_DECODE_STRICT);
  HurrayDescriptor *perm = one_mode(data, size, HURRAY_DECODE_PERMISSIVE);
  if (strict != NULL) {
    CHECK(perm != NULL);
    CHECK(hurray_descriptor_equal(strict, perm));
  }
  CHECK(hurray_descriptor_destroy(strict) == HURRAY_OK);
  CHECK(hurray_descriptor_destroy(perm) == HURRAY_OK);
  return 0;
}
