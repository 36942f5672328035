/* Descriptor equality but for the buffers' alignment
 * (hurray_descriptor_equal_except_alignment, include/hurray/descriptor.h). */
#include <string.h>

#include "testutil.h"

/* A row-major float32 vector of n elements whose buffer declares `align` and holds
 * `extra` bytes past the elements. */
static HurrayDescriptor *vec(uint64_t n, uint32_t align, uint64_t extra) {
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = 4 * n + extra;
  h.alignment = align;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 1;
  f.shape = &n;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, NULL), HURRAY_OK);
  return d;
}

static void test_equal_except_alignment(void **state) {
  (void)state;
  HurrayDescriptor *a = vec(4, 64, 0), *b = vec(4, 4096, 0), *c = vec(5, 64, 0);
  HurrayDescriptor *d = vec(4, 64, 8), *e = vec(0, 1, 0), *f = vec(0, 64, 0);
  assert_false(hurray_descriptor_equal(a, b));
  assert_true(hurray_descriptor_equal_except_alignment(a, b));
  assert_true(hurray_descriptor_equal_except_alignment(b, a));
  assert_true(hurray_descriptor_equal_except_alignment(a, a));
  assert_false(hurray_descriptor_equal_except_alignment(a, c)); /* another shape */
  assert_false(hurray_descriptor_equal_except_alignment(a, d)); /* another buffer size */
  assert_true(hurray_descriptor_equal_except_alignment(e, f));  /* empty: any alignment */
  assert_false(hurray_descriptor_equal_except_alignment(a, NULL));
  assert_false(hurray_descriptor_equal_except_alignment(NULL, NULL));
  HurrayDescriptor *all[6] = {a, b, c, d, e, f};
  for (int i = 0; i < 6; i++) assert_int_equal(hurray_descriptor_destroy(all[i]), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal_except_alignment),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
