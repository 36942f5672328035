/* The components of a sparse tensor (include/hurray/descriptor.h,
 * hurray_descriptor_component): buffer, element type and shape per role. */
#include <string.h>

#include "testutil.h"

static HurrayDescriptorFields sparse(uint8_t tag, uint32_t rank, uint64_t *shape, uint64_t nnz) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = rank;
  f.shape = shape;
  f.layout.tag = tag;
  if (tag == HURRAY_LAYOUT_COO) f.layout.u.coo.nnz = nnz;
  if (tag == HURRAY_LAYOUT_CSR || tag == HURRAY_LAYOUT_CSC) f.layout.u.csr.nnz = nnz;
  if (tag == HURRAY_LAYOUT_CSF) f.layout.u.csf.nnz = nnz;
  return f;
}

static void expect(const HurrayDescriptorFields *f, const char *role, uint32_t index,
                   uint8_t type, uint32_t rank, uint64_t d0, uint64_t d1) {
  HurrayComponent c;
  assert_int_equal(hurray_descriptor_component(f, role, &c, NULL), HURRAY_OK);
  assert_int_equal(c.buffer_index, index);
  assert_int_equal(c.type_tag, type);
  assert_int_equal(c.rank, rank);
  assert_int_equal(c.shape[0], d0);
  assert_int_equal(c.shape[1], d1);
}

static void absent(const HurrayDescriptorFields *f, const char *role) {
  HurrayComponent c;
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_descriptor_component(f, role, &c, &e), HURRAY_ERR_NOT_FOUND);
  assert_string_equal(e.field, "layout.tag");
  assert_non_null(strstr(e.reason, role));
}

static void test_coo(void **state) {
  (void)state;
  uint64_t shape[3] = {4, 5, 6};
  HurrayDescriptorFields f = sparse(HURRAY_LAYOUT_COO, 3, shape, 7);
  expect(&f, "values", 0, HURRAY_DTYPE_FLOAT32, 1, 7, 0);
  expect(&f, "indices", 1, HURRAY_DTYPE_UINT64, 2, 7, 3);
  absent(&f, "row_ptr");
  absent(&f, "col_indices");
}

static void test_csr_csc(void **state) {
  (void)state;
  uint64_t shape[2] = {4, 9};
  HurrayDescriptorFields r = sparse(HURRAY_LAYOUT_CSR, 2, shape, 5);
  expect(&r, "values", 0, HURRAY_DTYPE_FLOAT32, 1, 5, 0);
  expect(&r, "col_indices", 1, HURRAY_DTYPE_UINT64, 1, 5, 0);
  expect(&r, "row_ptr", 2, HURRAY_DTYPE_UINT64, 1, 5, 0); /* rows + 1 */
  absent(&r, "col_ptr");
  absent(&r, "indices");
  HurrayDescriptorFields c = sparse(HURRAY_LAYOUT_CSC, 2, shape, 5);
  expect(&c, "row_indices", 1, HURRAY_DTYPE_UINT64, 1, 5, 0);
  expect(&c, "col_ptr", 2, HURRAY_DTYPE_UINT64, 1, 10, 0);
  absent(&c, "row_ptr");
  /* a dynamic extent gives a dynamic pointer array */
  uint64_t dyn[2] = {HURRAY_DYNAMIC_DIM, 3};
  HurrayDescriptorFields d = sparse(HURRAY_LAYOUT_CSR, 2, dyn, 0);
  expect(&d, "row_ptr", 2, HURRAY_DTYPE_UINT64, 1, HURRAY_DYNAMIC_DIM, 0);
  /* an unvalidated CSC of rank 1 has no col_ptr (shape[1] is not there) */
  HurrayDescriptorFields bad = sparse(HURRAY_LAYOUT_CSC, 1, shape, 5);
  absent(&bad, "col_ptr");
}

static void test_others(void **state) {
  (void)state;
  uint64_t shape[3] = {2, 2, 2};
  HurrayDescriptorFields csf = sparse(HURRAY_LAYOUT_CSF, 3, shape, 3);
  expect(&csf, "values", 0, HURRAY_DTYPE_FLOAT32, 1, 3, 0);
  absent(&csf, "pos");
  HurrayDescriptorFields dense = sparse(HURRAY_LAYOUT_ROW_MAJOR, 3, shape, 0);
  absent(&dense, "values");
  absent(&dense, "element data");
  HurrayComponent c;
  assert_int_equal(hurray_descriptor_component(NULL, "values", &c, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_component(&csf, NULL, &c, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_component(&csf, "values", NULL, NULL),
                   HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_coo), cmocka_unit_test(test_csr_csc),
                                     cmocka_unit_test(test_others)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
