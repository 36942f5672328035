/* Moving bytes inside one block (include/hurray/alloc.h, hurray_move_within):
 * the same bytes as memmove, on one thread or two, forwards and backwards. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Moves n bytes from `from` to `to` in a block of n + slack bytes and checks
 * the result against memmove on a copy. */
static void check(size_t n, size_t to, size_t from) {
  size_t len = n + (to > from ? to : from) + 64;
  uint8_t *a = malloc(len), *b = malloc(len);
  assert_non_null(a);
  assert_non_null(b);
  for (size_t i = 0; i < len; i++) a[i] = (uint8_t)(i * 2654435761u >> 13);
  memcpy(b, a, len);
  hurray_move_within(a, to, from, n);
  memmove(b + to, b + from, n);
  assert_memory_equal(a, b, len);
  free(a);
  free(b);
}

static void test_small(void **state) {
  (void)state;
  check(1000, 16, 3);
  check(1000, 3, 16);
  check(0, 5, 0);
  check(64, 0, 0);
  hurray_move_within(NULL, 1, 0, 10); /* nothing */
}

/* 16 MiB and more, shifted by under 4096 bytes: two threads, each half's
 * overlap with the other saved first. */
static void test_large(void **state) {
  (void)state;
  size_t big = ((size_t)16 << 20) + 4099;
  check(big, 48, 0);
  check(big, 0, 48);
  check(big, 4095, 1);
  check(big, 1, 4095);
  check(big, 5000, 0); /* a shift too large to stash: one memmove */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_small), cmocka_unit_test(test_large)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
