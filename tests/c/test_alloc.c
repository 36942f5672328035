/* The allocator hook: hurray_alloc_zeroed, and the default allocator's mapped
 * large blocks (src/core/alloc.c). */
#include <string.h>
#if !defined(_WIN32)
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "testutil.h"
#include "internal/common.h"

/* Whether this build maps large blocks (the condition of src/core/alloc.c). */
#if defined(__SANITIZE_ADDRESS__)
#define MAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAPS 0
#endif
#endif
#if !defined(MAPS)
#if !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#define MAPS 1
#else
#define MAPS 0
#endif
#endif

#define MIB ((size_t)1 << 20)

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0) return false;
  return true;
}

static void test_zeroed_small_blocks(void **state) {
  (void)state;
  hurray_set_allocator(NULL);
  static const size_t sizes[] = {0, 1, 63, 100, 4095, 4096, 100000, HURRAY__MAP_THRESHOLD - 1};
  static const size_t aligns[] = {1, 8, 64, 4096};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
      /* dirty memory of the same size first, so a recycled block would show */
      uint8_t *d = hurray_alloc(sizes[s], aligns[a]);
      assert_non_null(d);
      memset(d, 0xA5, sizes[s]);
      hurray_free(d);
      size_t before = hurray__alloc_mapped_blocks();
      uint8_t *p = hurray_alloc_zeroed(sizes[s], aligns[a]);
      assert_non_null(p);
      assert_int_equal((uintptr_t)p % aligns[a], 0);
      assert_true(all_zero(p, sizes[s]));
      assert_int_equal(hurray__alloc_mapped_blocks(), before); /* below the threshold */
      memset(p, 0x5A, sizes[s]);
      hurray_free(p);
    }
  }
  assert_null(hurray_alloc_zeroed(8, 0));
  assert_null(hurray_alloc_zeroed(8, 48));
}

static void test_zeroed_large_blocks(void **state) {
  (void)state;
  hurray_set_allocator(NULL);
  static const size_t sizes[] = {HURRAY__MAP_THRESHOLD, HURRAY__MAP_THRESHOLD + 1,
                                 9 * MIB + 123};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    for (int round = 0; round < 2; round++) { /* the second reuses freed address space */
      size_t before = hurray__alloc_mapped_blocks();
      uint8_t *p = hurray_alloc_zeroed(sizes[s], 64);
      assert_non_null(p);
      assert_int_equal(hurray__alloc_mapped_blocks(), before + (MAPS ? 1 : 0));
      if (MAPS) assert_int_equal((uintptr_t)p % (2 * MIB), 0);
      assert_int_equal((uintptr_t)p % 64, 0);
      assert_true(all_zero(p, sizes[s]));
      memset(p, 0xC3, sizes[s]); /* every byte writable */
      assert_int_equal(p[sizes[s] - 1], 0xC3);
      hurray_free(p);
      assert_int_equal(hurray__alloc_mapped_blocks(), before);
    }
  }
  /* an alignment above 2 MiB is not a mapped block's: posix_memalign, zeroed */
  size_t before = hurray__alloc_mapped_blocks();
  uint8_t *p = hurray_alloc_zeroed(HURRAY__MAP_THRESHOLD, 4 * MIB);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % (4 * MIB), 0);
  assert_int_equal(hurray__alloc_mapped_blocks(), before);
  assert_true(all_zero(p, HURRAY__MAP_THRESHOLD));
  hurray_free(p);
}

static void test_large_plain_blocks_are_mapped(void **state) {
  (void)state;
  hurray_set_allocator(NULL);
  size_t before = hurray__alloc_mapped_blocks();
  uint8_t *p = hurray_alloc(8 * MIB, 4096);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 4096, 0);
  assert_int_equal(hurray__alloc_mapped_blocks(), before + (MAPS ? 1 : 0));
  memset(p, 1, 8 * MIB);
  hurray_free(p);
  assert_int_equal(hurray__alloc_mapped_blocks(), before);
  /* internal zeroed tables take the same path */
  uint8_t *q = hurray__calloc(HURRAY__MAP_THRESHOLD / 8, 8);
  assert_non_null(q);
  assert_true(all_zero(q, HURRAY__MAP_THRESHOLD));
  hurray__free(q);
  assert_null(hurray__calloc(SIZE_MAX / 4, 8)); /* n * size overflows */
}

/* More live large blocks than the table of mapped blocks holds (256): the
 * rest come from posix_memalign, still zeroed, and every one frees. Nothing
 * is touched but two bytes a block, so this maps address space, not memory. */
static void test_more_large_blocks_than_the_table(void **state) {
  (void)state;
  hurray_set_allocator(NULL);
  enum { N = 300 };
  static uint8_t *blocks[N];
  size_t before = hurray__alloc_mapped_blocks();
  for (int i = 0; i < N; i++) {
    blocks[i] = hurray_alloc_zeroed(HURRAY__MAP_THRESHOLD, 64);
    assert_non_null(blocks[i]);
    assert_int_equal(blocks[i][0], 0);
    assert_int_equal(blocks[i][HURRAY__MAP_THRESHOLD - 1], 0);
    blocks[i][0] = (uint8_t)i;
  }
  size_t mapped = hurray__alloc_mapped_blocks() - before;
  assert_true(mapped <= 256);
  if (MAPS) assert_true(mapped > 0);
  for (int i = 0; i < N; i++) {
    assert_int_equal(blocks[i][0], (uint8_t)i);
    hurray_free(blocks[i]);
  }
  assert_int_equal(hurray__alloc_mapped_blocks(), before);
}

/* Freed mapped blocks are kept (at most 4, 64 MiB in all) and handed out
 * again to plain allocations they fit; never to zeroed ones. */
static void test_freed_large_blocks_are_reused(void **state) {
  (void)state;
  hurray_set_allocator(NULL);
  hurray__alloc_release_kept(); /* a known start */
  assert_int_equal(hurray__alloc_kept_blocks(), 0);
  size_t kept0 = hurray__alloc_kept_blocks();
  size_t mapped0 = hurray__alloc_mapped_blocks();

  uint8_t *a = hurray_alloc(8 * MIB, 64);
  assert_non_null(a);
  memset(a, 0xA5, 8 * MIB);
  hurray_free(a);
  assert_int_equal(hurray__alloc_kept_blocks(), kept0 + (MAPS ? 1 : 0));
  assert_int_equal(hurray__alloc_mapped_blocks(), mapped0);

  /* a zeroed request never takes it: fresh zero pages */
  uint8_t *z = hurray_alloc_zeroed(8 * MIB, 64);
  assert_non_null(z);
  assert_true(all_zero(z, 8 * MIB));
  assert_int_equal(hurray__alloc_kept_blocks(), kept0 + (MAPS ? 1 : 0));
  memset(z, 0x3C, 8 * MIB);

  /* a plain request it fits closely takes it (7 MiB: at most a quarter more) */
  uint8_t *b = hurray_alloc(7 * MIB, 64);
  assert_non_null(b);
  if (MAPS) {
    assert_ptr_equal(b, a);
    assert_int_equal(hurray__alloc_kept_blocks(), kept0);
  }
  assert_int_equal(hurray__alloc_mapped_blocks(), mapped0 + (MAPS ? 2 : 0));
  memset(b, 0x11, 7 * MIB); /* writable */
  hurray_free(b);
  hurray_free(z); /* both kept now */
  assert_int_equal(hurray__alloc_kept_blocks(), kept0 + (MAPS ? 2 : 0));

  /* a request they would fit loosely does not pin them (4 MiB < 3/4 of 8) */
  uint8_t *c = hurray_alloc(4 * MIB, 64);
  assert_non_null(c);
  if (MAPS) { /* without mapped blocks the heap may well hand a or z out again */
    assert_ptr_not_equal(c, a);
    assert_ptr_not_equal(c, z);
  }
  assert_int_equal(hurray__alloc_kept_blocks(), kept0 + (MAPS ? 2 : 0));
  hurray_free(c);

  /* never more than 4 kept; a block over 64 MiB is always unmapped */
  uint8_t *many[6];
  for (int i = 0; i < 6; i++) {
    many[i] = hurray_alloc(5 * MIB, 64);
    assert_non_null(many[i]);
    many[i][0] = (uint8_t)i;
  }
  for (int i = 0; i < 6; i++) hurray_free(many[i]);
  assert_true(hurray__alloc_kept_blocks() <= 4);
  if (MAPS) assert_int_equal(hurray__alloc_kept_blocks(), 4);
  uint8_t *huge = hurray_alloc(65 * MIB, 64);
  assert_non_null(huge);
  huge[65 * MIB - 1] = 1;
  size_t kept = hurray__alloc_kept_blocks();
  hurray_free(huge);
  assert_true(hurray__alloc_kept_blocks() <= kept);
  assert_int_equal(hurray__alloc_mapped_blocks(), mapped0);

  /* what is kept is handed out again whole and writable */
  for (int i = 0; i < 6; i++) {
    many[i] = hurray_alloc(5 * MIB, 64);
    assert_non_null(many[i]);
    memset(many[i], i, 5 * MIB);
  }
  assert_int_equal(hurray__alloc_kept_blocks(), 0); /* the four kept were 5 MiB ones */
  for (int i = 0; i < 6; i++) {
    assert_int_equal(many[i][5 * MIB - 1], (uint8_t)i);
    hurray_free(many[i]);
  }
  hurray__alloc_release_kept();
  assert_int_equal(hurray__alloc_kept_blocks(), 0);
  assert_int_equal(hurray__alloc_mapped_blocks(), mapped0);
}

#if !defined(_WIN32)
/* A child process takes over the parent's kept blocks (copies of its pages):
 * it can reuse and free them while the parent keeps its own. */
static void test_kept_blocks_across_fork(void **state) {
  (void)state;
  hurray_set_allocator(NULL);
  hurray__alloc_release_kept();
  uint8_t *a = hurray_alloc(6 * MIB, 64);
  assert_non_null(a);
  memset(a, 0x77, 6 * MIB);
  hurray_free(a);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    uint8_t *b = hurray_alloc(6 * MIB, 64);
    int ok = b != NULL && (!MAPS || b == a);
    if (b != NULL) {
      memset(b, 0x12, 6 * MIB);
      hurray_free(b);
    }
    uint8_t *z = hurray_alloc_zeroed(6 * MIB, 64);
    ok = ok && z != NULL && all_zero(z, 6 * MIB);
    hurray_free(z);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  uint8_t *c = hurray_alloc(6 * MIB, 64); /* the parent's copy is untouched by the child */
  assert_non_null(c);
  if (MAPS) {
    assert_ptr_equal(c, a);
    assert_int_equal(c[0], 0x77);
  }
  hurray_free(c);
  hurray__alloc_release_kept();
}
#else
static void test_kept_blocks_across_fork(void **state) {
  (void)state;
  tu_skip("no fork (and the default allocator maps no large blocks here)");
}
#endif

static void test_zeroed_through_an_installed_allocator(void **state) {
  (void)state;
  tu_alloc_install();
  size_t mapped = hurray__alloc_mapped_blocks();
  static const size_t sizes[] = {0, 100, 5 * MIB};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    long count = tu_alloc_count();
    uint8_t *p = hurray_alloc_zeroed(sizes[s], 64);
    assert_non_null(p);
    assert_int_equal(tu_alloc_count(), count + 1); /* exactly one call of the hook */
    assert_int_equal(tu_alloc_live(), 1);
    assert_int_equal((uintptr_t)p % 64, 0);
    assert_true(all_zero(p, sizes[s]));
    assert_int_equal(hurray__alloc_mapped_blocks(), mapped); /* never bypassed */
    hurray_free(p);
    assert_int_equal(tu_alloc_live(), 0);
  }
  long count = tu_alloc_count();
  assert_null(hurray_alloc_zeroed(8, 3)); /* refused before the hook */
  assert_int_equal(tu_alloc_count(), count);
  tu_fail_alloc_after(0);
  assert_null(hurray_alloc_zeroed(5 * MIB, 64));
  assert_null(hurray__calloc(4, 4));
  assert_int_equal(tu_alloc_live(), 0);
  tu_alloc_reset();
  hurray_set_allocator(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_zeroed_small_blocks),
      cmocka_unit_test(test_zeroed_large_blocks),
      cmocka_unit_test(test_large_plain_blocks_are_mapped),
      cmocka_unit_test(test_more_large_blocks_than_the_table),
      cmocka_unit_test(test_freed_large_blocks_are_reused),
      cmocka_unit_test(test_kept_blocks_across_fork),
      cmocka_unit_test(test_zeroed_through_an_installed_allocator),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
