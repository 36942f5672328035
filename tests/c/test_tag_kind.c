/* The word of a tag kind (include/hurray/dtype.h, hurray_tag_kind_name). */
#include <string.h>

#include "testutil.h"

static void test_names(void **state) {
  (void)state;
  assert_string_equal(hurray_tag_kind_name(HURRAY_TAG_INVALID), "invalid");
  assert_string_equal(hurray_tag_kind_name(HURRAY_TAG_NAMED), "named");
  assert_string_equal(hurray_tag_kind_name(HURRAY_TAG_UNASSIGNED), "unassigned");
  assert_string_equal(hurray_tag_kind_name(HURRAY_TAG_RESERVED), "reserved");
  assert_string_equal(hurray_tag_kind_name(HURRAY_TAG_PRIVATE), "private");
  assert_string_equal(hurray_tag_kind_name((HurrayTagKind)99), "invalid");
  /* as the kinds of bytes come */
  assert_string_equal(hurray_tag_kind_name(hurray_dtype_tag_kind(0xF3)), "private");
  assert_string_equal(hurray_tag_kind_name(hurray_device_tag_kind(0x40)), "reserved");
  assert_string_equal(hurray_tag_kind_name(hurray_device_tag_kind(0xFF)), "invalid");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_names)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
