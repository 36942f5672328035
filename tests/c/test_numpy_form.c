/* What NumPy and a strided producer make of a tensor (include/hurray/interop.h):
 * hurray_numpy_form and hurray_strided_classify. */
#include <string.h>

#include "testutil.h"

static HurrayDescriptorFields fields(uint8_t type, uint8_t layout, uint32_t rank,
                                     uint64_t *shape) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = type;
  f.layout.tag = layout;
  f.rank = rank;
  f.shape = shape;
  return f;
}

static void form_ok(const HurrayDescriptorFields *f, uint8_t want, bool want_gather) {
  uint8_t form = 0;
  bool gather = !want_gather;
  assert_int_equal(hurray_numpy_form(f, &form, &gather, NULL), HURRAY_OK);
  assert_int_equal(form, want);
  assert_int_equal(gather, want_gather);
}

static void form_refused(const HurrayDescriptorFields *f, const char *field, const char *words) {
  uint8_t form = 0;
  bool gather = false;
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_numpy_form(f, &form, &gather, &e), HURRAY_ERR_UNSUPPORTED);
  assert_string_equal(e.field, field);
  assert_non_null(strstr(e.reason, words));
}

static void test_numpy_form(void **state) {
  (void)state;
  uint64_t shape[2] = {3, 4};
  HurrayDescriptorFields f = fields(HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, shape);
  form_ok(&f, HURRAY_NUMPY_VIEW, false);
  f.layout.tag = HURRAY_LAYOUT_COL_MAJOR;
  form_ok(&f, HURRAY_NUMPY_VIEW, false);
  f.layout.tag = HURRAY_LAYOUT_MORTON; /* dense, no strided view: copied out */
  form_ok(&f, HURRAY_NUMPY_VIEW, true);
  f.type_tag = HURRAY_DTYPE_BOOL;
  form_ok(&f, HURRAY_NUMPY_BOOL, true);
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  form_ok(&f, HURRAY_NUMPY_BOOL, false);
  f.layout.tag = HURRAY_LAYOUT_STRIDED; /* a strided bool: no form */
  form_refused(&f, "type_tag", "bool has no NumPy dtype");
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.type_tag = HURRAY_DTYPE_BFLOAT16;
  form_ok(&f, HURRAY_NUMPY_BFLOAT16, false);
  f.type_tag = HURRAY_DTYPE_INT4;
  form_refused(&f, "type_tag", "int4 has no NumPy dtype");
  f.type_tag = 0xF3;
  form_refused(&f, "type_tag", "a private type has no NumPy dtype");
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  /* in order: the layout first, then quantization, then a dynamic extent */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  f.quantization = &q;
  shape[1] = HURRAY_DYNAMIC_DIM;
  form_refused(&f, "quantization", "quantized");
  f.layout.tag = HURRAY_LAYOUT_CSR;
  form_refused(&f, "layout.tag", "a csr tensor has no single dense element buffer");
  f.layout.tag = 0xF1;
  form_refused(&f, "layout.tag", "extension tensor has no single dense element buffer");
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.quantization = NULL;
  form_refused(&f, "shape", "shape[1] is dynamic");
  uint8_t form;
  bool gather;
  assert_int_equal(hurray_numpy_form(NULL, &form, &gather, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_numpy_form(&f, NULL, &gather, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_numpy_form(&f, &form, NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

static void test_strided_classify(void **state) {
  (void)state;
  static uint8_t mem[4096];
  uint8_t *p = mem + 1024;
  HurrayStridedForm s;
  uint64_t shape[2] = {3, 4};
  int64_t row[2] = {16, 4}, col[2] = {4, 12}, every_other[2] = {32, 8}, odd[2] = {16, 2},
          back[2] = {-16, 4};
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, shape, NULL, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, shape, row, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, shape, col, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_COL_MAJOR);
  /* whole elements: strided, with the bytes it reaches */
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, shape, every_other, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_STRIDED);
  assert_int_equal(s.strides[0], 8);
  assert_int_equal(s.strides[1], 2);
  assert_ptr_equal(s.span_base, p);
  assert_int_equal(s.span, 2 * 32 + 3 * 8 + 4);
  assert_int_equal(s.span_offset, 0);
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, shape, back, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_STRIDED);
  assert_ptr_equal(s.span_base, p - 32);
  assert_int_equal(s.span_offset, 32);
  /* half elements, bool, sub-byte: a copy */
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, shape, odd, &s);
  assert_int_equal(s.layout_tag, 0);
  int64_t brow[2] = {8, 2};
  hurray_strided_classify(HURRAY_DTYPE_BOOL, p, 1, 2, shape, brow, &s);
  assert_int_equal(s.layout_tag, 0);
  /* a column-major rank-1 view is row-major; extents of 1 take any stride */
  uint64_t one[2] = {1, 4}, single[1] = {5};
  int64_t any[2] = {12345, 4}, s1[1] = {4};
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, one, any, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 1, single, s1, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  /* no element: row-major whatever the strides */
  uint64_t empty[2] = {0, 4};
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, empty, odd, &s);
  assert_int_equal(s.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  /* what cannot be described: a copy */
  uint64_t huge[2] = {UINT64_C(1) << 40, UINT64_C(1) << 40};
  int64_t wrap[2] = {INT64_C(1) << 40, 8};
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, 2, huge, wrap, &s);
  assert_int_equal(s.layout_tag, 0);
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 0, 2, shape, row, &s);
  assert_int_equal(s.layout_tag, 0);
  hurray_strided_classify(HURRAY_DTYPE_FLOAT32, p, 4, HURRAY_MAX_RANK + 1, shape, row, &s);
  assert_int_equal(s.layout_tag, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_numpy_form),
                                     cmocka_unit_test(test_strided_classify)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
