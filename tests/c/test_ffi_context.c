/* C ABI tensor contexts: copied descriptor, ABI version, owner release. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int g_owner_calls;
static void *g_owner_seen;

static void owner_release(void *owner) {
  g_owner_calls++;
  g_owner_seen = owner;
}

static int setup(void **state) {
  (void)state;
  g_owner_calls = 0;
  g_owner_seen = NULL;
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

static void test_round_trip(void **state) {
  (void)state;
  /* The bytes live on the heap and are freed before they are read back:
   * a context that borrowed them would read freed memory. */
  uint8_t *bytes = malloc(5);
  assert_non_null(bytes);
  memcpy(bytes, "\x01\x02\x03\x04\x05", 5);
  HurrayTensorContext *ctx = NULL;
  int owner = 0;
  assert_int_equal(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, 5, &owner,
                                             owner_release, &ctx),
                   HURRAY_OK);
  memset(bytes, 0xEE, 5);
  free(bytes);
  uint32_t v = 0;
  assert_int_equal(hurray_tensor_context_abi_version(ctx, &v), HURRAY_OK);
  assert_int_equal(v, HURRAY_C_ABI_VERSION);
  const uint8_t *out = NULL;
  uint64_t len = 0;
  assert_int_equal(hurray_tensor_context_descriptor(ctx, &out, &len), HURRAY_OK);
  assert_int_equal(len, 5);
  assert_memory_equal(out, "\x01\x02\x03\x04\x05", 5);
  /* The borrow is stable: the same pointer every time. */
  const uint8_t *out2 = NULL;
  assert_int_equal(hurray_tensor_context_descriptor(ctx, &out2, &len), HURRAY_OK);
  assert_ptr_equal(out, out2);
  assert_int_equal(g_owner_calls, 0);
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  assert_null(ctx);
  assert_int_equal(g_owner_calls, 1);
  assert_ptr_equal(g_owner_seen, &owner); /* exactly the value given */
  /* A second destroy through the nulled variable is a no-op. */
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  assert_int_equal(g_owner_calls, 1);
}

static void test_abi_version_is_stored_not_judged(void **state) {
  (void)state;
  static const uint32_t versions[] = {0, 1, 3, 4, 5, UINT32_MAX};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
    HurrayTensorContext *ctx = NULL;
    assert_int_equal(hurray_tensor_context_new(versions[i], NULL, 0, NULL, NULL, &ctx),
                     HURRAY_OK);
    uint32_t v = 12345;
    assert_int_equal(hurray_tensor_context_abi_version(ctx, &v), HURRAY_OK);
    assert_int_equal(v, versions[i]);
    assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  }
}

static void test_empty_descriptor(void **state) {
  (void)state;
  static const uint8_t some[] = {1, 2, 3};
  const uint8_t *sources[] = {NULL, some};
  for (size_t i = 0; i < 2; i++) {
    HurrayTensorContext *ctx = NULL;
    assert_int_equal(hurray_tensor_context_new(4, sources[i], 0, NULL, NULL, &ctx), HURRAY_OK);
    const uint8_t *out = some;
    uint64_t len = 99;
    assert_int_equal(hurray_tensor_context_descriptor(ctx, &out, &len), HURRAY_OK);
    assert_null(out);
    assert_int_equal(len, 0);
    assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  }
}

static void test_null_arguments(void **state) {
  (void)state;
  HurrayTensorContext *ctx = (HurrayTensorContext *)(uintptr_t)0x1;
  assert_int_equal(hurray_tensor_context_new(4, NULL, 8, NULL, owner_release, &ctx),
                   HURRAY_ERR_NULL_POINTER);
  assert_ptr_equal(ctx, (HurrayTensorContext *)(uintptr_t)0x1); /* untouched */
  assert_int_equal(hurray_tensor_context_new(4, NULL, 0, NULL, owner_release, NULL),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(g_owner_calls, 0);

  ctx = NULL;
  assert_int_equal(hurray_tensor_context_new(4, (const uint8_t *)"ab", 2, NULL, NULL, &ctx),
                   HURRAY_OK);
  uint32_t v = 7;
  const uint8_t *out = (const uint8_t *)"x";
  uint64_t len = 7;
  assert_int_equal(hurray_tensor_context_abi_version(NULL, &v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_tensor_context_abi_version(ctx, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_tensor_context_descriptor(NULL, &out, &len), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_tensor_context_descriptor(ctx, NULL, &len), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_tensor_context_descriptor(ctx, &out, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_tensor_context_destroy(NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(v, 7);
  assert_int_equal(len, 7);
  assert_string_equal((const char *)out, "x");
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  /* Without an owner_release, destroy releases nothing. */
  assert_int_equal(g_owner_calls, 0);
}

static void test_allocation_failure(void **state) {
  (void)state;
  int owner = 0;
  HurrayTensorContext *ctx = (HurrayTensorContext *)(uintptr_t)0x1;
  tu_fail_alloc_after(0);
  assert_int_equal(hurray_tensor_context_new(4, (const uint8_t *)"HRRY", 4, &owner,
                                             owner_release, &ctx),
                   HURRAY_ERR_OUT_OF_MEMORY);
  tu_alloc_reset();
  assert_null(ctx);
  assert_int_equal(g_owner_calls, 0); /* the owner stays the caller's */
  assert_int_equal(tu_alloc_live(), 0);
  /* A length that cannot be allocated is refused before anything is read. */
  static const uint8_t one = 0;
  assert_int_equal(hurray_tensor_context_new(4, &one, UINT64_MAX, &owner, owner_release, &ctx),
                   HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(ctx);
  assert_int_equal(g_owner_calls, 0);
}

static HurrayTensorContext *g_reentry_copy;
static HurrayStatus g_reentry_status;
static void reentrant_release(void *owner) {
  (void)owner;
  g_owner_calls++;
  uint32_t v = 0;
  g_reentry_status = hurray_tensor_context_abi_version(g_reentry_copy, &v);
}

static void test_destroyed_context_is_reported(void **state) {
  (void)state;
  if (!hurray_handle_checks_enabled()) skip();
  HurrayTensorContext *ctx = NULL;
  assert_int_equal(hurray_tensor_context_new(4, (const uint8_t *)"abc", 3, NULL,
                                             reentrant_release, &ctx),
                   HURRAY_OK);
  HurrayTensorContext *copy = ctx;
  g_reentry_copy = ctx;
  assert_int_equal(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
  /* The callback ran after the context was gone, and saw it gone. */
  assert_int_equal(g_owner_calls, 1);
  assert_int_equal(g_reentry_status, HURRAY_ERR_INTERNAL);
  /* A stale copy: reported, nothing released twice, nothing touched. */
  assert_int_equal(hurray_tensor_context_destroy(&copy), HURRAY_ERR_INTERNAL);
  assert_non_null(copy);
  assert_int_equal(g_owner_calls, 1);
  const uint8_t *out = NULL;
  uint64_t len = 42;
  assert_int_equal(hurray_tensor_context_descriptor(copy, &out, &len), HURRAY_ERR_INTERNAL);
  assert_int_equal(len, 42);
}

static void test_foreign_object_is_not_a_context(void **state) {
  (void)state;
  HurrayBufferList *list = NULL;
  assert_int_equal(hurray_buffer_list_new(0, &list), HURRAY_OK);
  HurrayTensorContext *fake = (HurrayTensorContext *)(void *)list;
  uint32_t v = 1;
  assert_int_equal(hurray_tensor_context_abi_version(fake, &v), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_tensor_context_destroy(&fake), HURRAY_ERR_INTERNAL);
  assert_int_equal(v, 1);
  assert_int_equal(hurray_buffer_list_destroy(&list), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_abi_version_is_stored_not_judged, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_descriptor, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failure, setup, teardown),
      cmocka_unit_test_setup_teardown(test_destroyed_context_is_reported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_object_is_not_a_context, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
