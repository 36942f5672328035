/* Overlay member roles (include/hurray/composite.h): by position, by name,
 * and the descriptor a member presents to its head
 * (hurray_composite_member_present). */
#include "test_layout_fixture.h"

static void test_role_and_name(void **state) {
  (void)state;
  assert_int_equal(hurray_overlay_member_role(0), HURRAY_MEMBER_ROLE_BASE);
  assert_int_equal(hurray_overlay_member_role(1), HURRAY_MEMBER_ROLE_CORRECTION);
  assert_int_equal(hurray_overlay_member_role(UINT32_MAX), HURRAY_MEMBER_ROLE_CORRECTION);
  assert_string_equal(hurray_member_role_name(HURRAY_MEMBER_ROLE_BASE), "base");
  assert_string_equal(hurray_member_role_name(HURRAY_MEMBER_ROLE_CORRECTION), "correction");
  assert_null(hurray_member_role_name(2));
  assert_null(hurray_member_role_name(0xFF));
}

/* A [4, 4] float32 member at offset 0 of a [4, 4] parent; with a role
 * section when role >= 0. */
static HurrayDescriptor *member(int role) {
  static const uint64_t shape[2] = {4, 4}, zero[2] = {0, 0};
  const uint64_t size[1] = {64};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, size);
  HurrayShard sh = {shape, zero};
  HurrayCompositeMember cm = {(uint8_t)(role < 0 ? 0 : role)};
  x.f.shard = &sh;
  x.f.composite_member = role < 0 ? NULL : &cm;
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&x.f, HURRAY_DECODE_STRICT, &d, NULL), HURRAY_OK);
  return d;
}

static uint8_t role_of(const HurrayDescriptor *d) {
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.composite_member);
  return f.composite_member->role;
}

static void test_present(void **state) {
  (void)state;
  HurrayDescriptor *own = member(-1), *out = own;
  /* an overlay: the role its position gives, the rest unchanged */
  assert_int_equal(hurray_composite_member_present(own, HURRAY_COMPOSITE_OVERLAY, 0, &out, NULL),
                   HURRAY_OK);
  assert_non_null(out);
  assert_int_equal(role_of(out), HURRAY_MEMBER_ROLE_BASE);
  assert_int_equal(hurray_descriptor_destroy(out), HURRAY_OK);
  assert_int_equal(hurray_composite_member_present(own, HURRAY_COMPOSITE_OVERLAY, 3, &out, NULL),
                   HURRAY_OK);
  assert_int_equal(role_of(out), HURRAY_MEMBER_ROLE_CORRECTION);
  assert_int_equal(hurray_descriptor_destroy(out), HURRAY_OK);
  /* another rule: the member's own descriptor */
  out = own;
  assert_int_equal(hurray_composite_member_present(own, HURRAY_COMPOSITE_PARTITION, 0, &out, NULL),
                   HURRAY_OK);
  assert_null(out);
  assert_int_equal(hurray_descriptor_destroy(own), HURRAY_OK);
  /* a member decoded with a role keeps it, whatever its position */
  HurrayDescriptor *decoded = member(HURRAY_MEMBER_ROLE_CORRECTION);
  out = decoded;
  assert_int_equal(
      hurray_composite_member_present(decoded, HURRAY_COMPOSITE_OVERLAY, 0, &out, NULL),
      HURRAY_OK);
  assert_null(out);
  /* NULL arguments */
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_composite_member_present(NULL, HURRAY_COMPOSITE_OVERLAY, 0, &out, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "member");
  assert_int_equal(
      hurray_composite_member_present(decoded, HURRAY_COMPOSITE_OVERLAY, 0, NULL, NULL),
      HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_destroy(decoded), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_role_and_name),
                                     cmocka_unit_test(test_present)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
