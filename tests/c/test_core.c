/* Type system, devices, memory classes, sync modes, statuses, allocator hook. */
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "internal/common.h"

static void test_status_table(void **state) {
  (void)state;
  /* Values pinned by the reference C ABI. */
  assert_int_equal(HURRAY_OK, 0);
  assert_int_equal(HURRAY_ERR_INVALID_MAGIC, -1);
  assert_int_equal(HURRAY_ERR_VERSION_MISMATCH, -2);
  assert_int_equal(HURRAY_ERR_INVALID_LAYOUT, -3);
  assert_int_equal(HURRAY_ERR_INVALID_TYPE, -4);
  assert_int_equal(HURRAY_ERR_BUFFER_TOO_SMALL, -5);
  assert_int_equal(HURRAY_ERR_NULL_POINTER, -6);
  assert_int_equal(HURRAY_ERR_INTERNAL_PANIC, -7);
  assert_int_equal(HURRAY_ERR_INVALID_SYNC_MODE, -8);
  assert_int_equal(HURRAY_ERR_SYNC_MODE_MISMATCH, -9);
  assert_int_equal(HURRAY_ERR_INTERNAL, -10);
  assert_int_equal(HURRAY_ERR_INDEX_OUT_OF_BOUNDS, -11);
  /* Values this implementation added, pinned forever. */
  assert_int_equal(HURRAY_ERR_INVALID_QUANTIZATION, -12);
  assert_int_equal(HURRAY_ERR_INVALID_SHARD, -32);
  assert_int_equal(HURRAY_ERR_PROTOCOL, -33);
  assert_string_equal(hurray_status_name(HURRAY_ERR_INVALID_MAGIC), "ERR_INVALID_MAGIC");
  assert_string_equal(hurray_status_name(HURRAY_OK), "OK");
  assert_string_equal(hurray_status_name(-999), "UNKNOWN_STATUS");
  assert_string_equal(hurray_status_name(1), "UNKNOWN_STATUS");
  for (int s = 0; s >= HURRAY_STATUS_MIN_; s--) {
    assert_string_not_equal(hurray_status_name(s), "UNKNOWN_STATUS");
    assert_string_not_equal(hurray_status_message(s), "unknown status");
  }
}

static void test_error_detail(void **state) {
  (void)state;
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(e.status, HURRAY_OK);
  assert_true(e.offset == HURRAY_NO_OFFSET);
  HurrayStatus st = hurray__fail(&e, HURRAY_ERR_INVALID_LAYOUT, 53, "buffers[0].alignment",
                                 "must be a power of two, got %u", 3u);
  assert_int_equal(st, HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(e.status, HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(e.offset, 53);
  assert_string_equal(e.field, "buffers[0].alignment");
  assert_string_equal(e.message, "buffers[0].alignment at byte 53: must be a power of two, got 3");
  assert_string_equal(e.reason, "must be a power of two, got 3");
  assert_int_equal(hurray__fail(NULL, HURRAY_ERR_INTERNAL, 0, NULL, "x"), HURRAY_ERR_INTERNAL);
  hurray__fail(&e, HURRAY_ERR_IO, HURRAY_NO_OFFSET, NULL, "plain");
  assert_string_equal(e.message, "plain");
  assert_string_equal(e.reason, "plain");
  assert_string_equal(e.field, "");
  /* Each form of the message; the reason is the same text in all of them. */
  hurray__fail(&e, HURRAY_ERR_IO, HURRAY_NO_OFFSET, "rank", "too %s", "big");
  assert_string_equal(e.message, "rank: too big");
  assert_string_equal(e.reason, "too big");
  hurray__fail(&e, HURRAY_ERR_IO, 7, "", "too %s", "big");
  assert_string_equal(e.message, "at byte 7: too big");
  assert_string_equal(e.reason, "too big");
  hurray__fail(&e, HURRAY_ERR_IO, 7, NULL, "%s", "");
  assert_string_equal(e.reason, "");
  hurray_error_clear(&e);
  assert_string_equal(e.reason, "");
  assert_string_equal(e.message, "");
}

/* The field and the arguments may point into the error being written. */
static void test_error_detail_aliasing(void **state) {
  (void)state;
  HurrayError e;
  hurray__fail(&e, HURRAY_ERR_INVALID_LAYOUT, 9, "shape[2]", "dimension %d is dynamic", 2);
  hurray__fail(&e, HURRAY_ERR_INVALID_SHARD, HURRAY_NO_OFFSET, e.field, "again: %s", e.reason);
  assert_int_equal(e.status, HURRAY_ERR_INVALID_SHARD);
  assert_true(e.offset == HURRAY_NO_OFFSET);
  assert_string_equal(e.field, "shape[2]");
  assert_string_equal(e.reason, "again: dimension 2 is dynamic");
  assert_string_equal(e.message, "shape[2]: again: dimension 2 is dynamic");
}

/* Long parts are cut to fit, always NUL-terminated; the composed message holds
 * the longest field, an offset and the longest reason whole. */
static void test_error_detail_truncation(void **state) {
  (void)state;
  char longf[300], longr[300];
  memset(longf, 'f', sizeof longf - 1);
  longf[sizeof longf - 1] = '\0';
  memset(longr, 'r', sizeof longr - 1);
  longr[sizeof longr - 1] = '\0';
  HurrayError e;
  hurray__fail(&e, HURRAY_ERR_IO, UINT64_MAX - 1, longf, "%s", longr);
  assert_int_equal(strlen(e.field), sizeof e.field - 1);
  assert_int_equal(strlen(e.reason), sizeof e.reason - 1);
  char want[sizeof e.message];
  snprintf(want, sizeof want, "%s at byte %llu: %s", e.field,
           (unsigned long long)(UINT64_MAX - 1), e.reason);
  assert_int_equal(strlen(want), strlen(e.field) + 9 + 20 + 2 + strlen(e.reason));
  assert_string_equal(e.message, want);
}

/* A caller rebuilds the message without the offset from field and reason,
 * through the public API (the error of a decode). */
static void test_error_reason_public(void **state) {
  (void)state;
  uint8_t bytes[64];
  memset(bytes, 0, sizeof bytes);
  memcpy(bytes, "XXXX", 4);
  HurrayDescriptor *d = NULL;
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_descriptor_decode_ex(bytes, sizeof bytes, 0, &d, &e),
                   HURRAY_ERR_INVALID_MAGIC);
  assert_null(d);
  assert_string_equal(e.field, "magic");
  assert_int_equal(e.offset, 0);
  assert_true(e.reason[0] != '\0');
  assert_null(strstr(e.reason, "at byte"));
  assert_null(strstr(e.reason, "magic:"));
  char want[sizeof e.message];
  snprintf(want, sizeof want, "magic at byte 0: %s", e.reason);
  assert_string_equal(e.message, want);
}

static void test_dtype_table(void **state) {
  (void)state;
  static const struct { uint8_t tag; const char *name; unsigned bits; unsigned tier; } k[] = {
      {0x01, "float16", 16, 1},     {0x02, "bfloat16", 16, 1},    {0x03, "float32", 32, 1},
      {0x04, "float64", 64, 1},     {0x10, "int8", 8, 1},         {0x11, "uint8", 8, 1},
      {0x12, "int16", 16, 1},       {0x13, "uint16", 16, 1},      {0x14, "int32", 32, 1},
      {0x15, "uint32", 32, 1},      {0x16, "int64", 64, 1},       {0x17, "uint64", 64, 1},
      {0x20, "bool", 1, 1},         {0x40, "float8_e4m3", 8, 2},  {0x41, "float8_e5m2", 8, 2},
      {0x42, "float8_e8m0", 8, 2},  {0x43, "float4_e2m1", 4, 2},  {0x44, "float6_e2m3", 6, 2},
      {0x45, "float6_e3m2", 6, 2},  {0x46, "float128", 128, 2},   {0x48, "int4", 4, 2},
      {0x49, "uint4", 4, 2},        {0x4A, "int2", 2, 2},         {0x4B, "uint2", 2, 2},
      {0x50, "complex64", 64, 2},   {0x51, "complex128", 128, 2},
  };
  size_t named = 0;
  for (unsigned t = 0; t < 256; t++)
    if (hurray_dtype_tag_kind((uint8_t)t) == HURRAY_TAG_NAMED) named++;
  assert_int_equal(named, sizeof k / sizeof k[0]);
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    const HurrayDtypeInfo *info = hurray_dtype_info(k[i].tag);
    assert_non_null(info);
    assert_string_equal(info->name, k[i].name);
    assert_int_equal(info->bit_width, k[i].bits);
    assert_int_equal(info->tier, k[i].tier);
    uint8_t tag = 0;
    assert_int_equal(hurray_dtype_from_name(k[i].name, &tag), HURRAY_OK);
    assert_int_equal(tag, k[i].tag);
  }
  assert_int_equal(hurray_dtype_from_name("float31", &(uint8_t){0}), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_dtype_from_name(NULL, &(uint8_t){0}), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_dtype_tag_kind(0x00), HURRAY_TAG_INVALID);
  assert_int_equal(hurray_dtype_tag_kind(0xFF), HURRAY_TAG_INVALID);
  assert_int_equal(hurray_dtype_tag_kind(0x47), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_dtype_tag_kind(0x80), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_dtype_tag_kind(0xEF), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_dtype_tag_kind(0x05), HURRAY_TAG_UNASSIGNED);
  assert_int_equal(hurray_dtype_tag_kind(0x7F), HURRAY_TAG_UNASSIGNED);
  assert_int_equal(hurray_dtype_tag_kind(0xF0), HURRAY_TAG_PRIVATE);
  assert_int_equal(hurray_dtype_tag_kind(0xFE), HURRAY_TAG_PRIVATE);
  assert_null(hurray_dtype_info(0xF0));
}

static void test_dtype_predicates(void **state) {
  (void)state;
  assert_true(hurray_dtype_is_float(HURRAY_DTYPE_BFLOAT16));
  assert_true(hurray_dtype_is_float(HURRAY_DTYPE_COMPLEX64));
  assert_true(hurray_dtype_is_complex(HURRAY_DTYPE_COMPLEX128));
  assert_false(hurray_dtype_is_complex(HURRAY_DTYPE_FLOAT64));
  assert_true(hurray_dtype_is_integer(HURRAY_DTYPE_UINT4));
  assert_false(hurray_dtype_is_integer(HURRAY_DTYPE_BOOL));
  assert_false(hurray_dtype_is_float(HURRAY_DTYPE_BOOL));
  assert_true(hurray_dtype_is_signed(HURRAY_DTYPE_INT2));
  assert_false(hurray_dtype_is_signed(HURRAY_DTYPE_UINT64));
  assert_false(hurray_dtype_is_signed(HURRAY_DTYPE_FLOAT8_E8M0));
  assert_false(hurray_dtype_is_signed(HURRAY_DTYPE_BOOL));
  assert_true(hurray_dtype_is_sub_byte(HURRAY_DTYPE_FLOAT6_E2M3));
  assert_true(hurray_dtype_is_sub_byte(HURRAY_DTYPE_BOOL));
  assert_false(hurray_dtype_is_sub_byte(HURRAY_DTYPE_INT8));
  assert_false(hurray_dtype_is_float(0xF3));
  assert_false(hurray_dtype_is_sub_byte(0x05));
}

static void test_buffer_size_bytes(void **state) {
  (void)state;
  uint64_t n = 0;
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT32, 12, &n), HURRAY_OK);
  assert_int_equal(n, 48);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_BOOL, 10, &n), HURRAY_OK);
  assert_int_equal(n, 2);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_BOOL, 8, &n), HURRAY_OK);
  assert_int_equal(n, 1);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_INT4, 5, &n), HURRAY_OK);
  assert_int_equal(n, 3);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_UINT2, 5, &n), HURRAY_OK);
  assert_int_equal(n, 2);
  /* 6-bit: four elements per three bytes, a partial group takes a whole group */
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT6_E2M3, 1, &n), HURRAY_OK);
  assert_int_equal(n, 3);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT6_E3M2, 4, &n), HURRAY_OK);
  assert_int_equal(n, 3);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT6_E3M2, 5, &n), HURRAY_OK);
  assert_int_equal(n, 6);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT128, 3, &n), HURRAY_OK);
  assert_int_equal(n, 48);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT32, 0, &n), HURRAY_OK);
  assert_int_equal(n, 0);
  /* overflow is an error, not a wrapped size */
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT64, UINT64_MAX / 4, &n),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT6_E2M3, UINT64_MAX, &n), HURRAY_OK);
  assert_true(n == (UINT64_MAX / 4 + 1) * 3);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT128, UINT64_MAX / 8, &n),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_BOOL, UINT64_MAX, &n), HURRAY_OK);
  assert_true(n == UINT64_MAX / 8 + 1);
  assert_int_equal(hurray_buffer_size_bytes(0x05, 1, &n), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_buffer_size_bytes(0xF1, 1, &n), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_buffer_size_bytes(HURRAY_DTYPE_INT8, 1, NULL), HURRAY_ERR_NULL_POINTER);
  /* extension types */
  assert_int_equal(hurray_extension_buffer_size_bytes(4, 2, 5, &n), HURRAY_OK);
  assert_int_equal(n, 3);
  assert_int_equal(hurray_extension_buffer_size_bytes(24, 1, 5, &n), HURRAY_OK);
  assert_int_equal(n, 15);
  assert_int_equal(hurray_extension_buffer_size_bytes(4, 1, 5, &n), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_extension_buffer_size_bytes(6, 1, 5, &n), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_extension_buffer_size_bytes(12, 1, 5, &n), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_extension_buffer_size_bytes(16, 2, 5, &n), HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_extension_buffer_size_bytes(0, 1, 5, &n), HURRAY_ERR_INVALID_TYPE);
}

static void test_devices(void **state) {
  (void)state;
  assert_string_equal(hurray_device_name(0x00), "cpu");
  assert_string_equal(hurray_device_name(0x07), "level_zero");
  assert_null(hurray_device_name(0x09));
  assert_int_equal(hurray_device_tag_kind(0x08), HURRAY_TAG_NAMED);
  assert_int_equal(hurray_device_tag_kind(0x09), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_device_tag_kind(0xEF), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_device_tag_kind(0xF5), HURRAY_TAG_PRIVATE);
  assert_int_equal(hurray_device_tag_kind(0xFF), HURRAY_TAG_INVALID);
  assert_int_equal(hurray_memory_class_kind(0x04), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_memory_class_kind(0xFF), HURRAY_TAG_INVALID);
  assert_int_equal(hurray_sync_mode_kind(0x02), HURRAY_TAG_NAMED);
  assert_int_equal(hurray_sync_mode_kind(0x03), HURRAY_TAG_INVALID);
  uint8_t v = 0;
  assert_int_equal(hurray_device_from_name("webgpu", &v), HURRAY_OK);
  assert_int_equal(v, 0x05);
  assert_int_equal(hurray_memory_class_from_name("host_pinned", &v), HURRAY_OK);
  assert_int_equal(v, 0x01);
  assert_int_equal(hurray_sync_mode_from_name("consumer_stream", &v), HURRAY_OK);
  assert_int_equal(v, 0x02);
  assert_int_equal(hurray_sync_mode_from_name("later", &v), HURRAY_ERR_INVALID_SYNC_MODE);
  assert_int_equal(hurray_device_from_name("tpu", &v), HURRAY_ERR_INVALID_TYPE);
}

static void test_validity_table(void **state) {
  (void)state;
  /* rows: cpu cuda rocm metal vulkan webgpu hexagon level_zero opencl; cols: std pinned unified peer */
  static const char *rows[9] = {"111.", "1111", "1111", "111.", "1111",
                                "1...", "111.", "1111", "111."};
  for (uint8_t d = 0; d < 9; d++)
    for (uint8_t c = 0; c < 4; c++)
      assert_int_equal(hurray_device_memory_class_valid(d, c), rows[d][c] == '1');
  assert_false(hurray_device_memory_class_valid(0x00, 0x04));
  assert_false(hurray_device_memory_class_valid(0x00, 0xF0)); /* private class needs private device */
  assert_false(hurray_device_memory_class_valid(0x09, 0x00));
  assert_false(hurray_device_memory_class_valid(0xFF, 0x00));
  assert_true(hurray_device_memory_class_valid(0xF0, 0x00));
  assert_true(hurray_device_memory_class_valid(0xF0, 0xFE));
  assert_false(hurray_device_memory_class_valid(0xF0, 0x01));
  assert_false(hurray_device_memory_class_valid(0xF0, 0xFF));
}

static void test_layout_and_scheme_tags(void **state) {
  (void)state;
  assert_int_equal(hurray_layout_tag_kind(0x00), HURRAY_TAG_INVALID);
  assert_int_equal(hurray_layout_tag_kind(0x0B), HURRAY_TAG_NAMED);
  assert_int_equal(hurray_layout_tag_kind(0x0C), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_layout_tag_kind(0x40), HURRAY_TAG_NAMED);
  assert_int_equal(hurray_layout_tag_kind(0x41), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_layout_tag_kind(0xF3), HURRAY_TAG_PRIVATE);
  assert_int_equal(hurray_layout_tag_kind(0xFF), HURRAY_TAG_INVALID);
  assert_string_equal(hurray_layout_name(0x09), "csf");
  assert_int_equal(hurray_layout_class(0x0A), HURRAY_LAYOUT_CLASS_INDIRECT);
  assert_int_equal(hurray_layout_class(0x40), HURRAY_LAYOUT_CLASS_DENSE);
  assert_int_equal(hurray_layout_class(0xF0), HURRAY_LAYOUT_CLASS_UNKNOWN);
  /* nnz: the four sparse layouts say it, nothing else does */
  HurrayLayout l;
  memset(&l, 0, sizeof l);
  uint64_t nnz = 77;
  l.tag = HURRAY_LAYOUT_COO;
  l.u.coo.nnz = 5;
  assert_true(hurray_layout_nnz(&l, &nnz));
  assert_int_equal(nnz, 5);
  l.tag = HURRAY_LAYOUT_CSR;
  l.u.csr.nnz = 6;
  assert_true(hurray_layout_nnz(&l, &nnz));
  assert_int_equal(nnz, 6);
  l.tag = HURRAY_LAYOUT_CSC;
  assert_true(hurray_layout_nnz(&l, &nnz));
  assert_int_equal(nnz, 6);
  l.tag = HURRAY_LAYOUT_CSF;
  l.u.csf.nnz = 9;
  assert_true(hurray_layout_nnz(&l, &nnz));
  assert_int_equal(nnz, 9);
  nnz = 77;
  for (unsigned t = 0; t < 256; t++) {
    if (t == HURRAY_LAYOUT_COO || t == HURRAY_LAYOUT_CSR || t == HURRAY_LAYOUT_CSC ||
        t == HURRAY_LAYOUT_CSF)
      continue;
    l.tag = (uint8_t)t;
    assert_false(hurray_layout_nnz(&l, &nnz));
  }
  assert_int_equal(nnz, 77);
  assert_false(hurray_layout_nnz(NULL, &nnz));
  assert_false(hurray_layout_nnz(&l, NULL));
  assert_int_equal(hurray_quant_scheme_kind(0x05), HURRAY_TAG_NAMED);
  assert_int_equal(hurray_quant_scheme_kind(0x06), HURRAY_TAG_UNASSIGNED);
  assert_int_equal(hurray_quant_scheme_kind(0x60), HURRAY_TAG_RESERVED);
  assert_int_equal(hurray_quant_scheme_kind(0xF0), HURRAY_TAG_PRIVATE);
  assert_string_equal(hurray_quant_scheme_name(0x04), "nf4");
  const float *t = hurray_nf4_table();
  assert_true(t[0] == -1.0f && t[7] == 0.0f && t[15] == 1.0f);
}

static void test_allocator_hook(void **state) {
  (void)state;
  tu_alloc_install();
  void *p = hurray_alloc(100, 4096);
  assert_non_null(p);
  assert_int_equal((uintptr_t)p % 4096, 0);
  assert_int_equal(tu_alloc_live(), 1);
  hurray_free(p);
  assert_int_equal(tu_alloc_live(), 0);
  assert_null(hurray_alloc(8, 3)); /* not a power of two */
  tu_fail_alloc_after(0);
  assert_null(hurray_alloc(8, 8));
  tu_alloc_reset();
  hurray_set_allocator(NULL);
  p = hurray_alloc(10, 64);
  assert_non_null(p);
  hurray_free(p);
  assert_int_equal(hurray_c_abi_version(), 4);
}

/* Names other libraries give (hurray_dtype_from_alias, src/core/dtype_alias.c). */
static void test_dtype_from_alias(void **state) {
  (void)state;
  static const struct {
    const char *name;
    uint8_t tag;
  } hits[] = {{"float32", HURRAY_DTYPE_FLOAT32},        {"torch.float16", HURRAY_DTYPE_FLOAT16},
              {"float8_e4m3fn", HURRAY_DTYPE_FLOAT8_E4M3}, {"half", HURRAY_DTYPE_FLOAT16},
              {"BF16", HURRAY_DTYPE_BFLOAT16},          {"torch.bool_", HURRAY_DTYPE_BOOL},
              {"F8_E5M2", HURRAY_DTYPE_FLOAT8_E5M2},    {"F4", HURRAY_DTYPE_FLOAT4_E2M1}};
  for (size_t i = 0; i < sizeof hits / sizeof hits[0]; i++) {
    uint8_t tag = 0;
    assert_int_equal(hurray_dtype_from_alias(hits[i].name, &tag, NULL), HURRAY_OK);
    assert_int_equal(tag, hits[i].tag);
  }
  HurrayError e;
  uint8_t tag = 0x77;
  /* a foreign type hurray has no equivalent of, saying why; nothing written */
  assert_int_equal(hurray_dtype_from_alias("torch.float8_e4m3fnuz", &tag, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "float8_e4m3fn"));
  assert_int_equal(tag, 0x77);
  assert_int_equal(hurray_dtype_from_alias("complex32", &tag, &e), HURRAY_ERR_UNSUPPORTED);
  /* unknown: the closest name when one is close, case-insensitively, else none */
  assert_int_equal(hurray_dtype_from_alias("flaot32", &tag, &e), HURRAY_ERR_INVALID_TYPE);
  assert_string_equal(e.reason, "did you mean 'float32'?");
  assert_string_equal(e.field, "name");
  assert_int_equal(hurray_dtype_from_alias("bf15", &tag, &e), HURRAY_ERR_INVALID_TYPE);
  assert_string_equal(e.reason, "did you mean 'bfloat16'?");
  assert_int_equal(hurray_dtype_from_alias("zzzzzz", &tag, &e), HURRAY_ERR_INVALID_TYPE);
  assert_null(strstr(e.reason, "did you mean"));
  assert_int_equal(tag, 0x77);
  assert_int_equal(hurray_dtype_from_alias(NULL, &tag, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_dtype_from_alias("float32", NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_table),   cmocka_unit_test(test_error_detail),
      cmocka_unit_test(test_error_detail_aliasing),
      cmocka_unit_test(test_error_detail_truncation),
      cmocka_unit_test(test_error_reason_public),
      cmocka_unit_test(test_dtype_table),    cmocka_unit_test(test_dtype_predicates),
      cmocka_unit_test(test_dtype_from_alias),
      cmocka_unit_test(test_buffer_size_bytes), cmocka_unit_test(test_devices),
      cmocka_unit_test(test_validity_table), cmocka_unit_test(test_layout_and_scheme_tags),
      cmocka_unit_test(test_allocator_hook),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
