/* The alignment of an address (include/hurray/device.h, "alignment of an
 * address"): measured, declared by policy, checked, and what a reader
 * declares for a promised value. */
#include "testutil.h"

static const void *at(uintptr_t a) { return (const void *)a; }

static void test_measure(void **state) {
  (void)state;
  assert_int_equal(hurray_alignment_measure(at(0x1000), 0), 1); /* empty */
  assert_int_equal(hurray_alignment_measure(at(0x1001), 8), 1);
  assert_int_equal(hurray_alignment_measure(at(0x1040), 8), 64);
  assert_int_equal(hurray_alignment_measure(at(0x200000), 8), HURRAY_PAGE_ALIGNMENT); /* capped */
  assert_int_equal(hurray_alignment_measure(NULL, 8), HURRAY_PAGE_ALIGNMENT);
}

static void test_policy(void **state) {
  (void)state;
  assert_int_equal(hurray_alignment_policy(at(0x1000), 0), 1);
  assert_int_equal(hurray_alignment_policy(at(0x2000), 8), HURRAY_MIN_BUFFER_ALIGNMENT);
  assert_int_equal(hurray_alignment_policy(at(0x1040), 8), HURRAY_MIN_BUFFER_ALIGNMENT);
  assert_int_equal(hurray_alignment_policy(at(0x1010), 8), 16); /* below the floor: as held */
}

static void test_satisfied(void **state) {
  (void)state;
  assert_true(hurray_alignment_satisfied(at(0x1040), 8, 64));
  assert_false(hurray_alignment_satisfied(at(0x1020), 8, 64));
  assert_true(hurray_alignment_satisfied(at(0x1001), 0, 64)); /* empty: any address */
  assert_false(hurray_alignment_satisfied(at(0x1000), 8, 48)); /* not a power of two */
  assert_false(hurray_alignment_satisfied(at(0x1000), 8, 0));
}

static void test_for_reader(void **state) {
  (void)state;
  uint32_t out = 0;
  /* kept: the address holds the promise */
  assert_false(hurray_alignment_for_reader(at(0x2000), 8, 128, true, &out));
  assert_int_equal(out, 128);
  /* missed, at most a page, host memory: copy to the promise */
  assert_true(hurray_alignment_for_reader(at(0x1040), 8, 128, true, &out));
  assert_int_equal(out, 128);
  /* missed, no copy possible: what the address holds */
  assert_false(hurray_alignment_for_reader(at(0x1040), 8, 128, false, &out));
  assert_int_equal(out, 64);
  /* a promise above a page, missed: the measured value, no copy */
  assert_false(hurray_alignment_for_reader(at(0x3000), 8, 1u << 21, true, &out));
  assert_int_equal(out, HURRAY_PAGE_ALIGNMENT);
  /* not a power of two: the policy value */
  assert_false(hurray_alignment_for_reader(at(0x2000), 8, 96, true, &out));
  assert_int_equal(out, HURRAY_MIN_BUFFER_ALIGNMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_measure),
      cmocka_unit_test(test_policy),
      cmocka_unit_test(test_satisfied),
      cmocka_unit_test(test_for_reader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
