/* NumPy's basic indexing (src/layout/basic_index.c): every item kind against
 * the ranges and shape NumPy gives, the clamping of slices, and each error
 * with the words a user sees. */
#include <string.h>

#include "testutil.h"

#include "hurray/hurray.h"

static const uint64_t SHAPE[3] = {4, 6, 5};

static HurrayIndexItem integer(int64_t v) { return (HurrayIndexItem){HURRAY_INDEX_INTEGER, v, 0, 0}; }
static HurrayIndexItem slice(int64_t a, int64_t b, int64_t s) {
  return (HurrayIndexItem){HURRAY_INDEX_SLICE, a, b, s};
}
static const HurrayIndexItem ELLIPSIS = {HURRAY_INDEX_ELLIPSIS, 0, 0, 0};
static const HurrayIndexItem NEWAXIS = {HURRAY_INDEX_NEWAXIS, 0, 0, 0};

static HurrayStatus run(const HurrayIndexItem *items, uint32_t n, HurraySliceRange *r,
                        uint64_t *shape, uint32_t *rank, HurrayError *e) {
  return hurray_layout_basic_index(3, SHAPE, items, n, r, shape, rank, e);
}

static void test_items_give_numpys_ranges_and_shape(void **state) {
  (void)state;
  HurraySliceRange r[3];
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 99;
  HurrayError e;
  /* a[-1, None, ::-2] (the rest whole): shape (1, 3, 5) */
  HurrayIndexItem a[3] = {integer(-1), NEWAXIS, slice(INT64_MAX, INT64_MIN, -2)};
  assert_int_equal(run(a, 3, r, shape, &rank, &e), HURRAY_OK);
  assert_int_equal(rank, 3);
  assert_int_equal(shape[0], 1);
  assert_int_equal(shape[1], 3);
  assert_int_equal(shape[2], 5);
  assert_int_equal(r[0].start, 3);
  assert_int_equal(r[0].stop, 4);
  /* indices 5, 3, 1 from the lowest, reversed */
  assert_int_equal(r[1].start, 1);
  assert_int_equal(r[1].stop, 6);
  assert_int_equal(r[1].step, 2);
  assert_int_equal(r[1].flags, HURRAY_SLICE_REVERSE);
  assert_int_equal(r[2].stop, 5);
  /* a[..., 1:100:3]: clamped; a[2:1] empty */
  HurrayIndexItem b[2] = {ELLIPSIS, slice(1, 100, 3)};
  assert_int_equal(run(b, 2, r, shape, &rank, &e), HURRAY_OK);
  assert_int_equal(rank, 3);
  assert_int_equal(shape[2], 2);
  assert_int_equal(r[2].start, 1);
  assert_int_equal(r[2].stop, 5);
  HurrayIndexItem c[1] = {slice(2, 1, 1)};
  assert_int_equal(run(c, 1, r, shape, &rank, &e), HURRAY_OK);
  assert_int_equal(shape[0], 0);
  /* no items: everything */
  assert_int_equal(run(NULL, 0, r, shape, &rank, &e), HURRAY_OK);
  assert_int_equal(rank, 3);
}

static void test_errors_name_the_index_the_axis_and_the_size(void **state) {
  (void)state;
  HurraySliceRange r[3];
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank;
  HurrayError e;
  HurrayIndexItem a[2] = {ELLIPSIS, integer(-7)};
  assert_int_equal(run(a, 2, r, shape, &rank, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_string_equal(e.message, "index -7 is out of bounds for axis 2 with size 5");
  HurrayIndexItem b[4] = {integer(0), integer(0), integer(0), integer(0)};
  assert_int_equal(run(b, 4, r, shape, &rank, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_non_null(strstr(e.message, "too many indices: the tensor is 3-dimensional, but 4"));
  HurrayIndexItem c[2] = {ELLIPSIS, ELLIPSIS};
  assert_int_equal(run(c, 2, r, shape, &rank, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_non_null(strstr(e.message, "single ellipsis"));
  HurrayIndexItem d[1] = {slice(0, 1, 0)};
  assert_int_equal(run(d, 1, r, shape, &rank, &e), HURRAY_ERR_INVALID_ARGUMENT);
  HurrayIndexItem many[70];
  for (int i = 0; i < 70; i++) many[i] = NEWAXIS;
  assert_int_equal(run(many, 70, r, shape, &rank, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_non_null(strstr(e.message, "more than 64 dimensions"));
  assert_int_equal(hurray_layout_basic_index(3, SHAPE, b, 1, r, NULL, &rank, &e),
                   HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_items_give_numpys_ranges_and_shape),
      cmocka_unit_test(test_errors_name_the_index_the_axis_and_the_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
