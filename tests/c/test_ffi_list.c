/* C ABI buffer lists: ownership moves on push, borrowed gets, destroy through
 * the caller's pointer, release counts on every path, allocation failures. */
#include <string.h>

#include "testutil.h"

#define MAXB 64

static _Alignas(4096) uint8_t g_mem[MAXB][64];

/* Release log: which buffer (by index into g_mem) was released, in order. */
static int g_released[MAXB];
static int g_order[MAXB];
static int g_nrel;

static void on_release(void *data, void *ctx) {
  int i = (int)(((uint8_t *)data - &g_mem[0][0]) / 64);
  assert_ptr_equal(ctx, &g_released[i]);
  g_released[i]++;
  g_order[g_nrel++] = i;
}

static HurrayBuffer *make(int i) {
  HurrayBuffer *b = NULL;
  assert_int_equal(hurray_buffer_from_ptr(g_mem[i], (uint64_t)(i + 1), 64, HURRAY_DEVICE_CPU,
                                          0, 0, on_release, &g_released[i], &b),
                   HURRAY_OK);
  return b;
}

static uint64_t size_of(const HurrayBuffer *b) {
  uint64_t s = 0;
  assert_int_equal(hurray_buffer_byte_size(b, &s), HURRAY_OK);
  return s;
}

static uint64_t len_of(const HurrayBufferList *l) {
  uint64_t n = 12345;
  assert_int_equal(hurray_buffer_list_len(l, &n), HURRAY_OK);
  return n;
}

static int setup(void **state) {
  (void)state;
  memset(g_released, 0, sizeof g_released);
  g_nrel = 0;
  tu_alloc_install();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tu_alloc_reset();
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
  return 0;
}

static void test_new_and_destroy(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(4, &l), HURRAY_OK);
  assert_non_null(l);
  assert_int_equal(len_of(l), 0);
  HurrayBuffer *got = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(hurray_buffer_list_get(l, 0, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_null(got);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_null(l); /* the caller's variable is dead */
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK); /* no-op */
  assert_null(l);
  /* Capacity 0 and an absurd hint both work without a huge allocation. */
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  assert_int_equal(tu_alloc_live(), 1);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_new(UINT64_MAX, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
}

static void test_push_order_len_get(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(2, &l), HURRAY_OK);
  HurrayBuffer *b[5];
  for (int i = 0; i < 5; i++) {
    b[i] = make(i);
    assert_int_equal(hurray_buffer_list_push(l, b[i]), HURRAY_OK);
    assert_int_equal(len_of(l), (uint64_t)(i + 1));
  }
  for (int i = 0; i < 5; i++) {
    HurrayBuffer *got = NULL;
    assert_int_equal(hurray_buffer_list_get(l, (uint64_t)i, &got), HURRAY_OK);
    assert_ptr_equal(got, b[i]); /* element i is push number i */
    assert_int_equal(size_of(got), (uint64_t)(i + 1));
  }
  HurrayBuffer *got = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(hurray_buffer_list_get(l, 5, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_null(got);
  got = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(hurray_buffer_list_get(l, UINT64_MAX, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_null(got);
  for (int i = 0; i < 5; i++) assert_int_equal(g_released[i], 0);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  /* Every owned buffer released exactly once, in list order. */
  assert_int_equal(g_nrel, 5);
  for (int i = 0; i < 5; i++) {
    assert_int_equal(g_released[i], 1);
    assert_int_equal(g_order[i], i);
  }
}

static void test_borrow_survives_later_pushes(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(1, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(l, make(0)), HURRAY_OK);
  HurrayBuffer *first = NULL;
  assert_int_equal(hurray_buffer_list_get(l, 0, &first), HURRAY_OK);
  /* Enough pushes to move the slot array several times. */
  for (int i = 1; i < MAXB; i++) assert_int_equal(hurray_buffer_list_push(l, make(i)), HURRAY_OK);
  assert_int_equal(size_of(first), 1);
  void *data = NULL;
  assert_int_equal(hurray_buffer_data_ptr(first, &data), HURRAY_OK);
  assert_ptr_equal(data, g_mem[0]);
  HurrayBuffer *again = NULL;
  assert_int_equal(hurray_buffer_list_get(l, 0, &again), HURRAY_OK);
  assert_ptr_equal(again, first);
  assert_int_equal(len_of(l), MAXB);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  for (int i = 0; i < MAXB; i++) assert_int_equal(g_released[i], 1);
}

static void test_failed_push_keeps_ownership(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(1, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(l, make(0)), HURRAY_OK); /* full now */
  HurrayBuffer *b = make(1);
  tu_fail_alloc_after(0); /* the list cannot grow */
  assert_int_equal(hurray_buffer_list_push(l, b), HURRAY_ERR_OUT_OF_MEMORY);
  tu_alloc_reset();
  assert_int_equal(len_of(l), 1);
  assert_int_equal(g_released[1], 0);
  /* Still the caller's: it may destroy it, which releases once. */
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(g_released[1], 1);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
  assert_int_equal(g_released[1], 1); /* the list did not release it again */
  assert_int_equal(g_nrel, 2);
}

static void test_push_without_a_reference_is_refused(void **state) {
  (void)state;
  HurrayBufferList *l = NULL, *m = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_new(0, &m), HURRAY_OK);
  HurrayBuffer *b = make(0);
  assert_int_equal(hurray_buffer_list_push(l, b), HURRAY_OK);
  /* The caller's only reference moved: pushing it again would be a second
   * owner for one reference. */
  assert_int_equal(hurray_buffer_list_push(l, b), HURRAY_ERR_INVALID_STATE);
  assert_int_equal(hurray_buffer_list_push(m, b), HURRAY_ERR_INVALID_STATE);
  assert_int_equal(len_of(l), 1);
  assert_int_equal(len_of(m), 0);
  assert_int_equal(hurray_buffer_list_destroy(&m), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
}

static void test_destroying_a_borrow_is_refused(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(l, make(0)), HURRAY_OK);
  HurrayBuffer *borrowed = NULL;
  assert_int_equal(hurray_buffer_list_get(l, 0, &borrowed), HURRAY_OK);
  assert_int_equal(hurray_buffer_destroy(borrowed), HURRAY_ERR_INVALID_STATE);
  assert_int_equal(g_released[0], 0);
  assert_int_equal(size_of(borrowed), 1); /* still alive and well */
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
}

static void test_retained_borrow_outlives_the_list(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(l, make(0)), HURRAY_OK);
  HurrayBuffer *kept = NULL;
  assert_int_equal(hurray_buffer_list_get(l, 0, &kept), HURRAY_OK);
  assert_int_equal(hurray_buffer_retain(kept), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 0);
  assert_int_equal(size_of(kept), 1);
  assert_int_equal(hurray_buffer_destroy(kept), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
}

static void test_one_buffer_in_two_lists(void **state) {
  (void)state;
  HurrayBufferList *l = NULL, *m = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_new(0, &m), HURRAY_OK);
  HurrayBuffer *b = make(0);
  assert_int_equal(hurray_buffer_retain(b), HURRAY_OK); /* two references */
  assert_int_equal(hurray_buffer_list_push(l, b), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(m, b), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 0);
  assert_int_equal(hurray_buffer_list_destroy(&m), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
}

static void test_owned_buffers_in_a_list(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(3, &l), HURRAY_OK);
  for (int i = 0; i < 3; i++) {
    HurrayBuffer *b = NULL;
    assert_int_equal(hurray_buffer_new(100, 64, HURRAY_BUFFER_ZEROED, &b, NULL), HURRAY_OK);
    assert_int_equal(hurray_buffer_list_push(l, b), HURRAY_OK);
  }
  assert_int_equal(tu_alloc_live(), 2 + 3 * 2); /* list + slots + (handle + bytes) x 3 */
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(tu_alloc_live(), 0);
}

static void test_null_arguments(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(0, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  HurrayBuffer *b = make(0);
  assert_int_equal(hurray_buffer_list_push(NULL, b), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_list_push(l, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(len_of(l), 0);
  uint64_t n = 77;
  assert_int_equal(hurray_buffer_list_len(NULL, &n), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_list_len(l, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(n, 77);
  HurrayBuffer *got = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(hurray_buffer_list_get(NULL, 0, &got), HURRAY_ERR_NULL_POINTER);
  assert_ptr_equal(got, (HurrayBuffer *)(uintptr_t)0x1); /* untouched */
  assert_int_equal(hurray_buffer_list_get(l, 0, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_buffer_list_destroy(NULL), HURRAY_ERR_NULL_POINTER);
  /* The failed pushes left b with the caller. */
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
}

static void test_allocation_failures(void **state) {
  (void)state;
  /* hurray_buffer_list_new with a hint: the list, then its slots. */
  int failures = 0;
  for (long n = 0;; n++) {
    HurrayBufferList *l = (HurrayBufferList *)(uintptr_t)0x1;
    tu_fail_alloc_after(n);
    HurrayStatus st = hurray_buffer_list_new(8, &l);
    tu_alloc_reset();
    if (st == HURRAY_OK) {
      assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
      break;
    }
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
    assert_null(l);
    assert_int_equal(tu_alloc_live(), 0);
    failures++;
  }
  assert_int_equal(failures, 2);

  /* Building a 20-buffer list, with the k-th allocation failing: each failed
   * push leaves its buffer with the caller, and nothing leaks. */
  for (long k = 0; k < 40; k++) {
    memset(g_released, 0, sizeof g_released);
    g_nrel = 0;
    HurrayBufferList *l = NULL;
    int pushed = 0, refused = 0;
    tu_fail_alloc_after(k);
    HurrayStatus st = hurray_buffer_list_new(0, &l);
    if (st == HURRAY_OK) {
      for (int i = 0; i < 20; i++) {
        HurrayBuffer *b = NULL;
        if (hurray_buffer_from_ptr(g_mem[i], 1, 64, 0, 0, 0, on_release, &g_released[i], &b) !=
            HURRAY_OK)
          continue;
        if (hurray_buffer_list_push(l, b) == HURRAY_OK) {
          pushed++;
        } else {
          refused++;
          assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
          assert_int_equal(g_released[i], 1);
        }
      }
    } else {
      assert_null(l);
    }
    tu_alloc_reset();
    assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
    assert_int_equal(tu_alloc_live(), 0);
    assert_int_equal(g_nrel, pushed + refused);
    for (int i = 0; i < MAXB; i++) assert_true(g_released[i] <= 1);
  }
}

/* ---- release callbacks that look at the list mid-destroy ------------------ */

static HurrayBufferList *g_spy_list;
static int g_spy_present[4][4]; /* [released buffer][slot]: 1 present, 0 absent */
static HurrayStatus g_spy_destroy;

static void spy_release(void *data, void *ctx) {
  (void)ctx;
  int i = (int)(((uint8_t *)data - &g_mem[0][0]) / 64);
  for (int s = 0; s < 4; s++) {
    HurrayBuffer *got = NULL;
    HurrayStatus st = hurray_buffer_list_get(g_spy_list, (uint64_t)s, &got);
    g_spy_present[i][s] = st == HURRAY_OK && got != NULL;
  }
  /* A second destroy from inside the first must not run. */
  HurrayBufferList *copy = g_spy_list;
  g_spy_destroy = hurray_buffer_list_destroy(&copy);
}

static void test_slots_are_nulled_as_destroy_goes(void **state) {
  (void)state;
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(4, &l), HURRAY_OK);
  for (int i = 0; i < 4; i++) {
    HurrayBuffer *b = NULL;
    assert_int_equal(hurray_buffer_from_ptr(g_mem[i], 64, 64, 0, 0, 0, spy_release, NULL, &b),
                     HURRAY_OK);
    assert_int_equal(hurray_buffer_list_push(l, b), HURRAY_OK);
  }
  g_spy_list = l;
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_null(l);
  /* When buffer i was released, slots 0..i were already empty and the
   * later ones still held their buffers. */
  for (int i = 0; i < 4; i++)
    for (int s = 0; s < 4; s++) assert_int_equal(g_spy_present[i][s], s > i);
  assert_int_equal(g_spy_destroy, HURRAY_ERR_INTERNAL);
}

static void test_destroyed_list_is_reported(void **state) {
  (void)state;
  if (!hurray_handle_checks_enabled()) skip();
  HurrayBufferList *l = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &l), HURRAY_OK);
  assert_int_equal(hurray_buffer_list_push(l, make(0)), HURRAY_OK);
  HurrayBuffer *borrowed = NULL;
  assert_int_equal(hurray_buffer_list_get(l, 0, &borrowed), HURRAY_OK);
  HurrayBufferList *copy = l;
  assert_int_equal(hurray_buffer_list_destroy(&l), HURRAY_OK);
  assert_int_equal(g_released[0], 1);
  /* The borrowed buffer died with the list (checked before anything new is
   * allocated: a new handle may reuse a freed address, which no check can
   * tell from the stale pointer). */
  uint64_t s = 9;
  assert_int_equal(hurray_buffer_byte_size(borrowed, &s), HURRAY_ERR_INTERNAL);
  assert_int_equal(s, 9);
  assert_int_equal(hurray_buffer_destroy(borrowed), HURRAY_ERR_INTERNAL);
  assert_int_equal(g_released[0], 1);
  /* A stale copy of the list pointer. */
  assert_int_equal(hurray_buffer_list_destroy(&copy), HURRAY_ERR_INTERNAL);
  assert_non_null(copy); /* not nulled: nothing was touched */
  uint64_t n = 5;
  assert_int_equal(hurray_buffer_list_len(copy, &n), HURRAY_ERR_INTERNAL);
  assert_int_equal(n, 5);
  HurrayBuffer *got = (HurrayBuffer *)(uintptr_t)0x1;
  assert_int_equal(hurray_buffer_list_get(copy, 0, &got), HURRAY_ERR_INTERNAL);
  assert_null(got);
  /* A push into it fails and leaves the buffer with the caller. */
  HurrayBuffer *b = make(1);
  assert_int_equal(hurray_buffer_list_push(copy, b), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
  assert_int_equal(g_released[1], 1);
}

static void test_foreign_object_is_not_a_list(void **state) {
  (void)state;
  HurrayBuffer *b = make(0);
  HurrayBufferList *fake = (HurrayBufferList *)(void *)b;
  uint64_t n = 3;
  assert_int_equal(hurray_buffer_list_len(fake, &n), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_buffer_list_destroy(&fake), HURRAY_ERR_INTERNAL);
  assert_int_equal(n, 3);
  assert_int_equal(hurray_buffer_destroy(b), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_new_and_destroy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_push_order_len_get, setup, teardown),
      cmocka_unit_test_setup_teardown(test_borrow_survives_later_pushes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_push_keeps_ownership, setup, teardown),
      cmocka_unit_test_setup_teardown(test_push_without_a_reference_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_destroying_a_borrow_is_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_retained_borrow_outlives_the_list, setup, teardown),
      cmocka_unit_test_setup_teardown(test_one_buffer_in_two_lists, setup, teardown),
      cmocka_unit_test_setup_teardown(test_owned_buffers_in_a_list, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slots_are_nulled_as_destroy_goes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_destroyed_list_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_object_is_not_a_list, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
