/*
 * The descriptor API around the codec: reference getters and their NULL /
 * shape-query behaviour, encode capacity handling, from_fields argument
 * checks, allocation discipline (one allocation, bounded size, failure
 * injection) and the field walk.
 */
#include "descriptor/descriptor_impl.h"
#include "test_descriptor_wire.h"

static HurrayDescriptor *worked(void) {
  W w;
  w_dense_f32_3x4(&w, 0);
  w_finish(&w);
  return expect_decode(w.b, w.n, 0, HURRAY_OK, NULL);
}

/* A composite group head (no buffers) of the given shape. */
static HurrayStatus group_head(const uint64_t *dims, uint32_t rank, HurrayDescriptor **out) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = rank;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_COMPOSITE;
  f.layout.u.composite.rule = HURRAY_COMPOSITE_GROUP;
  f.layout.u.composite.member_count = 1;
  return hurray_descriptor_from_fields(&f, 0, out, NULL);
}

static void test_getters_null(void **state) {
  (void)state;
  HurrayDescriptor *d = worked();
  uint8_t u8v;
  uint32_t u32v;
  uint64_t u64v;
  uintptr_t cap = 2;
  uint64_t dims[2];
  HurrayDescriptorFields f;
  const HurrayBufferHandle *h;
  assert_int_equal(hurray_descriptor_element_type_tag(NULL, &u8v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_element_type_tag(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_layout_tag(NULL, &u8v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_layout_tag(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_rank(NULL, &u32v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_rank(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_byte_offset(NULL, &u64v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_byte_offset(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_buffer_count(NULL, &u32v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_buffer_count(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_shape(NULL, dims, &cap), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_shape(d, dims, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_fields(NULL, &f), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_fields(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_version(d, &u8v, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_version(d, NULL, &u8v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_flags(NULL, &u32v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_buffer(NULL, 0, &h), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_buffer(d, 0, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_element_count(NULL, &u64v), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_data_bytes(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_encoded_len(NULL, &u64v), HURRAY_ERR_NULL_POINTER);
  HurrayDescriptor *c = (HurrayDescriptor *)(uintptr_t)1;
  assert_int_equal(hurray_descriptor_clone(NULL, &c), HURRAY_ERR_NULL_POINTER);
  assert_null(c);
  assert_int_equal(hurray_descriptor_clone(d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_destroy(NULL), HURRAY_OK);
  assert_false(hurray_descriptor_equal(NULL, d));
  assert_false(hurray_descriptor_equal(d, NULL));
  assert_false(hurray_descriptor_equal(NULL, NULL));
  assert_true(hurray_descriptor_equal(d, d));
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_getter_values(void **state) {
  (void)state;
  HurrayDescriptor *d = worked();
  uint8_t a = 0, b = 0;
  uint32_t u = 0;
  uint64_t v = 0;
  assert_int_equal(hurray_descriptor_element_type_tag(d, &a), HURRAY_OK);
  assert_int_equal(a, HURRAY_DTYPE_FLOAT32);
  assert_int_equal(hurray_descriptor_layout_tag(d, &a), HURRAY_OK);
  assert_int_equal(a, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(hurray_descriptor_rank(d, &u), HURRAY_OK);
  assert_int_equal(u, 2);
  assert_int_equal(hurray_descriptor_buffer_count(d, &u), HURRAY_OK);
  assert_int_equal(u, 1);
  assert_int_equal(hurray_descriptor_version(d, &a, &b), HURRAY_OK);
  assert_int_equal(a, 1);
  assert_int_equal(b, 0);
  assert_int_equal(hurray_descriptor_flags(d, &u), HURRAY_OK);
  assert_int_equal(u, 0);
  assert_int_equal(hurray_descriptor_element_count(d, &v), HURRAY_OK);
  assert_int_equal(v, 12);
  assert_int_equal(hurray_descriptor_data_bytes(d, &v), HURRAY_OK);
  assert_int_equal(v, 48);
  const HurrayBufferHandle *h = NULL;
  assert_int_equal(hurray_descriptor_buffer(d, 0, &h), HURRAY_OK);
  assert_int_equal(h->byte_size, 48);
  assert_int_equal(hurray_descriptor_buffer(d, 1, &h), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_descriptor_buffer(d, UINT32_MAX, &h), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Sum of buffer sizes of a CSR matrix. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_CSR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 3}, 0);
  w_u64(&w, 2);
  w_zero(&w, 8);
  w_u8(&w, 3);
  w_cpu_buffer(&w, 8);
  w_cpu_buffer(&w, 16);
  w_cpu_buffer(&w, 32);
  w_finish(&w);
  d = expect_decode(w.b, w.n, 0, HURRAY_OK, NULL);
  assert_int_equal(hurray_descriptor_data_bytes(d, &v), HURRAY_OK);
  assert_int_equal(v, 56);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_shape_query(void **state) {
  (void)state;
  HurrayDescriptor *d = worked();
  uint64_t dims[3] = {9, 9, 9};
  uintptr_t n = 0;
  assert_int_equal(hurray_descriptor_shape(d, NULL, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n, 2);
  n = 1;
  assert_int_equal(hurray_descriptor_shape(d, dims, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n, 2);
  assert_int_equal(dims[0], 9); /* nothing written */
  n = 3;
  assert_int_equal(hurray_descriptor_shape(d, dims, &n), HURRAY_OK);
  assert_int_equal(n, 2);
  assert_int_equal(dims[0], 3);
  assert_int_equal(dims[1], 4);
  assert_int_equal(dims[2], 9);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* A scalar: a NULL array is still "too small" (reference behaviour), an
   * empty one is fine. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_INT32, HURRAY_LAYOUT_ROW_MAJOR, 0);
  w_u64(&w, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 4);
  w_finish(&w);
  d = expect_decode(w.b, w.n, 0, HURRAY_OK, NULL);
  n = 0;
  assert_int_equal(hurray_descriptor_shape(d, NULL, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n, 0);
  assert_int_equal(hurray_descriptor_shape(d, dims, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_element_count_limits(void **state) {
  (void)state;
  HurrayDescriptor *d = NULL;
  uint64_t v = 0;
  assert_int_equal(group_head((const uint64_t[]){HURRAY_DYNAMIC_DIM, 4}, 2, &d), HURRAY_OK);
  assert_int_equal(hurray_descriptor_element_count(d, &v), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(group_head((const uint64_t[]){1ull << 32, 1ull << 32}, 2, &d), HURRAY_OK);
  assert_int_equal(hurray_descriptor_element_count(d, &v), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(group_head((const uint64_t[]){0, 1ull << 40}, 2, &d), HURRAY_OK);
  assert_int_equal(hurray_descriptor_element_count(d, &v), HURRAY_OK);
  assert_int_equal(v, 0);
  assert_int_equal(hurray_descriptor_data_bytes(d, &v), HURRAY_OK);
  assert_int_equal(v, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_encode_capacity(void **state) {
  (void)state;
  HurrayDescriptor *d = worked();
  uint8_t out[64];
  memset(out, 0x77, sizeof out);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, 60, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n, 61);
  for (size_t i = 0; i < sizeof out; i++) assert_int_equal(out[i], 0x77);
  n = 0;
  assert_int_equal(hurray_descriptor_encode(d, NULL, 0, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(n, 61);
  assert_int_equal(hurray_descriptor_encode(d, NULL, 61, &n), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_encode(d, out, 64, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_encode(NULL, out, 64, &n), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_encode(d, out, 61, &n), HURRAY_OK);
  assert_int_equal(out[61], 0x77); /* exactly 61 bytes written */
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* ---- from_fields argument checks ------------------------------------------------ */

static HurrayDescriptorFields dense_fields(const uint64_t *dims, const HurrayBufferHandle *b) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = b;
  return f;
}

static void expect_fields(const HurrayDescriptorFields *f, uint32_t options, HurrayStatus st,
                          const char *field) {
  HurrayDescriptor *d = (HurrayDescriptor *)(uintptr_t)1;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus got = hurray_descriptor_from_fields(f, options, &d, &err);
  if (got != st)
    fail_msg("from_fields: expected %s, got %s (%s)", hurray_status_name(st),
             hurray_status_name(got), err.message);
  assert_int_equal(hurray_descriptor_validate(f, options, NULL), st);
  if (st == HURRAY_OK) {
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    return;
  }
  assert_null(d);
  if (field != NULL && strstr(err.field, field) == NULL)
    fail_msg("from_fields: field \"%s\", expected \"%s\" (%s)", err.field, field, err.message);
}

static void test_from_fields_arguments(void **state) {
  (void)state;
  static const uint64_t dims[2] = {3, 4};
  HurrayBufferHandle b = {48, 64, 0, 0, 0, 0};
  HurrayDescriptorFields f = dense_fields(dims, &b);
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(NULL, 0, &d, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, NULL, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_validate(NULL, 0, NULL), HURRAY_ERR_NULL_POINTER);
  expect_fields(&f, 0, HURRAY_OK, NULL);
  expect_fields(&f, 0x10, HURRAY_ERR_INVALID_ARGUMENT, "options");
  /* version 0 means 1.0; 2 is not supported. */
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, &d, NULL), HURRAY_OK);
  uint8_t major = 0, minor = 9;
  assert_int_equal(hurray_descriptor_version(d, &major, &minor), HURRAY_OK);
  assert_int_equal(major, 1);
  assert_int_equal(minor, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  f.version_major = 2;
  expect_fields(&f, 0, HURRAY_ERR_VERSION_MISMATCH, "version_major");
  f.version_major = 1;
  /* Missing arrays. */
  f.shape = NULL;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "shape");
  f.shape = dims;
  f.buffers = NULL;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "buffers");
  f.buffers = &b;
  f.buffer_count = 256;
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "buffer_count");
  f.buffer_count = 1;
  f.layout.tag = HURRAY_LAYOUT_STRIDED;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "layout.strides");
  f.layout.tag = HURRAY_LAYOUT_MORTON;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "layout.morton_bits");
  f.layout.tag = 0xF4;
  f.layout.u.private_ext.data_len = 3;
  expect_fields(&f, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_NULL_POINTER, "layout.data");
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.trailing_len = 3;
  f.version_minor = 1;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "trailing");
  /* An encoding longer than a u32 descriptor_length can declare. */
  static const uint8_t dummy = 0;
  f.trailing = &dummy;
  f.trailing_len = UINT32_MAX - 10;
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "descriptor_length");
  f.trailing_len = 0;
  f.trailing = NULL;
  /* Strict from_fields refuses reserved flag bits. */
  f.flags = 1u << 7;
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "flags");
  expect_fields(&f, HURRAY_DECODE_PERMISSIVE, HURRAY_OK, NULL);
}

static void test_from_fields_tiled_structure(void **state) {
  (void)state;
  static const uint64_t dims[2] = {8, 8}, t4[2] = {4, 4}, t2[2] = {2, 2};
  static const int64_t strides[2] = {2, 1};
  HurrayBufferHandle b = {256, 64, 0, 0, 0, 0};
  HurrayTiledLevel lv[HURRAY_MAX_TILED_DEPTH + 1];
  HurrayDescriptorFields f = dense_fields(dims, &b);
  f.layout.tag = HURRAY_LAYOUT_TILED;
  f.layout.u.tiled.levels = lv;
  memset(lv, 0, sizeof lv);
  lv[0] = (HurrayTiledLevel){t4, 0x01, 0x04, NULL, NULL};
  lv[1] = (HurrayTiledLevel){t2, 0x01, 0x01, NULL, NULL};
  f.layout.u.tiled.depth = 2;
  expect_fields(&f, 0, HURRAY_OK, NULL);
  f.layout.u.tiled.depth = 0;
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled");
  f.layout.u.tiled.depth = HURRAY_MAX_TILED_DEPTH + 1;
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled");
  f.layout.u.tiled.depth = 1; /* level 0 says "nested" but is the last */
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].inner_layout");
  f.layout.u.tiled.depth = 2;
  lv[0].inner_layout = 0x01; /* level 0 says "not nested" but a level follows */
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].inner_layout");
  lv[0].inner_layout = 0x04;
  lv[1].outer_layout = 0x03;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "layout.tiled[1].outer_strides");
  lv[1].outer_strides = strides;
  expect_fields(&f, 0, HURRAY_OK, NULL);
  lv[1].inner_layout = 0x03;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "layout.tiled[1].inner_strides");
  lv[1].inner_layout = 0x06;
  expect_fields(&f, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT,
                "layout.tiled[1].inner_layout");
  lv[1].inner_layout = 0x01;
  lv[1].outer_layout = 0x00;
  expect_fields(&f, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[1].outer_layout");
  lv[1].outer_layout = 0x01;
  lv[1].tile_shape = NULL;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "layout.tiled[1].tile_shape");
  lv[1].tile_shape = t2;
  f.layout.u.tiled.levels = NULL;
  expect_fields(&f, 0, HURRAY_ERR_NULL_POINTER, "layout.tiled.levels");
  /* Stride arrays given for a non-strided level are ignored, not encoded. */
  f.layout.u.tiled.levels = lv;
  lv[1].outer_layout = 0x01;
  lv[1].outer_strides = strides;
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, &d, NULL), HURRAY_OK);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &n), HURRAY_OK);
  assert_int_equal(n, 20 + 16 + 8 + 2 * 20 + 1 + 16);
  HurrayDescriptorFields g;
  assert_int_equal(hurray_descriptor_fields(d, &g), HURRAY_OK);
  assert_null(g.layout.u.tiled.levels[1].outer_strides);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* ---- allocation discipline -------------------------------------------------------- */

static size_t g_last_size, g_allocs;
static void *sizing_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  g_last_size = size;
  g_allocs++;
  return tu_aligned_alloc(alignment, size);
}
static void sizing_free(void *ctx, void *p) {
  (void)ctx;
  tu_aligned_free(p);
}

static size_t decode_alloc_size(const W *w) {
  HurrayAllocator a = {sizing_alloc, sizing_free, NULL};
  hurray_set_allocator(&a);
  g_allocs = 0;
  HurrayDescriptor *d = expect_decode(w->b, w->n, HURRAY_DECODE_PERMISSIVE, HURRAY_OK, NULL);
  size_t n = g_last_size;
  assert_int_equal(g_allocs, 1);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  hurray_set_allocator(NULL);
  return n;
}

static void test_one_bounded_allocation(void **state) {
  (void)state;
  /* Private layouts with growing data: the allocation grows with the wire
   * length and never by more than a constant beyond it. */
  size_t base = 0;
  for (uint32_t len = 0; len <= 6000; len += 2000) {
    W w;
    w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, 0xF9, 2);
    w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
    w_u64(&w, 1);
    w_u32(&w, len);
    w_zero(&w, len);
    w_u8(&w, 1);
    w_cpu_buffer(&w, 48);
    w_finish(&w);
    size_t got = decode_alloc_size(&w);
    assert_true(got <= sizeof(HurrayDescriptor) + w.n + 256);
    if (len == 0) base = got;
    assert_true(got - base <= len + 16);
  }
  /* The deepest tiled layout and rank 64 stay within the same constant. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 64);
  for (int k = 0; k < 64; k++) w_u64(&w, 1);
  w_u64(&w, 0);
  for (int k = 0; k < 64; k++) w_u64(&w, 1);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 4);
  w_finish(&w);
  assert_true(decode_alloc_size(&w) <= sizeof(HurrayDescriptor) + w.n + 256);
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 1);
  w_shape(&w, 1, (const uint64_t[]){256}, 0);
  for (int i = 0; i < 8; i++) {
    w_u64(&w, 256u >> i);
    w_u8(&w, 1);
    w_u8(&w, i < 7 ? 4 : 1);
    w_zero(&w, 2);
  }
  w_u8(&w, 1);
  w_cpu_buffer(&w, 1024);
  w_finish(&w);
  assert_true(decode_alloc_size(&w) <=
              sizeof(HurrayDescriptor) + w.n + 256 + 8 * (sizeof(HurrayTiledLevel) + 32));
}

static void test_allocation_failure(void **state) {
  (void)state;
  W w;
  w_dense_f32_3x4(&w, HURRAY_FLAG_HAS_STATISTICS);
  w_stats(&w, 0, 0, 0, 0, 0, 0, 0, 0);
  w_finish(&w);
  tu_alloc_install();
  /* Exactly one allocation per decode, from_fields and clone. */
  HurrayDescriptor *d = expect_decode(w.b, w.n, 0, HURRAY_OK, NULL);
  assert_int_equal(tu_alloc_count(), 1);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  HurrayDescriptor *r = NULL, *c = NULL;
  long before = tu_alloc_count();
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, &r, NULL), HURRAY_OK);
  assert_int_equal(tu_alloc_count() - before, 1);
  before = tu_alloc_count();
  assert_int_equal(hurray_descriptor_clone(d, &c), HURRAY_OK);
  assert_int_equal(tu_alloc_count() - before, 1);
  assert_int_equal(hurray_descriptor_destroy(c), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(r), HURRAY_OK);
  assert_int_equal(tu_alloc_live(), 1);

  /* Each path fails cleanly when its allocation fails. */
  HurrayError err;
  tu_fail_alloc_after(0);
  r = (HurrayDescriptor *)(uintptr_t)1;
  assert_int_equal(hurray_descriptor_decode_ex(w.b, w.n, 0, &r, &err), HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(r);
  assert_int_equal(err.status, HURRAY_ERR_OUT_OF_MEMORY);
  r = (HurrayDescriptor *)(uintptr_t)1;
  assert_int_equal(hurray_descriptor_decode(w.b, w.n, &r), HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(r);
  r = (HurrayDescriptor *)(uintptr_t)1;
  assert_int_equal(hurray_descriptor_from_fields(&f, 0, &r, &err), HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(r);
  c = (HurrayDescriptor *)(uintptr_t)1;
  assert_int_equal(hurray_descriptor_clone(d, &c), HURRAY_ERR_OUT_OF_MEMORY);
  assert_null(c);
  WalkLog log;
  memset(&log, 0, sizeof log);
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, walk_log_visit, &log, &err),
                   HURRAY_ERR_OUT_OF_MEMORY);
  tu_alloc_reset();
  assert_int_equal(tu_alloc_live(), 1);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(tu_alloc_live(), 0);
  /* Validation failures after the allocation free it. */
  w.b[61 + 4] = 1;
  assert_int_equal(hurray_descriptor_decode(w.b, w.n, &r), HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
}

/* ---- walk ---------------------------------------------------------------------- */

typedef struct Seen {
  int count;
  char paths[160][48];
  char meanings[160][24];
  uint64_t off[160], size[160], u[160];
  HurrayFieldKind kind[160];
  double f[160];
} Seen;

static void record(const HurrayFieldEvent *e, void *ctx) {
  Seen *s = ctx;
  assert_true(s->count < 160);
  int i = s->count++;
  snprintf(s->paths[i], sizeof s->paths[i], "%s", e->path);
  snprintf(s->meanings[i], sizeof s->meanings[i], "%s", e->meaning ? e->meaning : "");
  s->off[i] = e->offset;
  s->size[i] = e->size;
  s->u[i] = e->u;
  s->kind[i] = e->kind;
  s->f[i] = e->f;
}

static int find(const Seen *s, const char *path) {
  for (int i = 0; i < s->count; i++)
    if (strcmp(s->paths[i], path) == 0) return i;
  fail_msg("walk: no event %s", path);
  return -1;
}

static void test_walk_events(void **state) {
  (void)state;
  W w;
  w_dense_f32_3x4(&w, HURRAY_FLAG_HAS_STATISTICS);
  w_stats(&w, HURRAY_STAT_VALUE_RANGE_VALID, 0, 0, 0, 0, 0, 0, 0);
  w_finish(&w);
  Seen *s = calloc(1, sizeof *s);
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, record, s, NULL), HURRAY_OK);
  int i = find(s, "magic");
  assert_int_equal(s->kind[i], HURRAY_FIELD_BYTES);
  assert_string_equal(s->meanings[i], "HRRY");
  i = find(s, "type_tag");
  assert_int_equal(s->off[i], 14);
  assert_string_equal(s->meanings[i], "float32");
  i = find(s, "layout_tag");
  assert_string_equal(s->meanings[i], "row_major");
  i = find(s, "flags");
  assert_string_equal(s->meanings[i], "HAS_STATISTICS");
  i = find(s, "shape[1]");
  assert_int_equal(s->off[i], 28);
  assert_int_equal(s->size[i], 8);
  assert_int_equal(s->u[i], 4);
  i = find(s, "buffers[0].alignment");
  assert_int_equal(s->off[i], 53);
  assert_int_equal(s->size[i], 4);
  assert_int_equal(s->u[i], 64);
  i = find(s, "buffers[0].device_tag");
  assert_string_equal(s->meanings[i], "cpu");
  i = find(s, "buffers[0].sync_mode");
  assert_string_equal(s->meanings[i], "producer_synced");
  i = find(s, "buffers[0]");
  assert_int_equal(s->kind[i], HURRAY_FIELD_SECTION);
  assert_int_equal(s->size[i], 16);
  i = find(s, "statistics");
  assert_int_equal(s->kind[i], HURRAY_FIELD_SECTION);
  assert_int_equal(s->off[i], 61);
  assert_int_equal(s->size[i], 72);
  i = find(s, "statistics.value_min");
  assert_int_equal(s->kind[i], HURRAY_FIELD_FLOAT);
  assert_true(s->f[i] == -1.5);
  /* Wire order: offsets never go back. */
  for (int k = 1; k < s->count; k++) assert_true(s->off[k] >= s->off[k - 1]);
  free(s);
  expect_walk_covers(w.b, w.n, 0);
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, NULL, NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

static void test_walk_layout_paths(void **state) {
  (void)state;
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
  w_shape(&w, 2, (const uint64_t[]){8, 8}, 0);
  w_u64(&w, 4);
  w_u64(&w, 4);
  w_u8(&w, 1);
  w_u8(&w, 4);
  w_zero(&w, 2);
  w_u64(&w, 2);
  w_u64(&w, 2);
  w_u8(&w, 3);
  w_u8(&w, 2);
  w_zero(&w, 2);
  w_u64(&w, 2);
  w_u64(&w, 1);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 256);
  w_finish(&w);
  Seen *s = calloc(1, sizeof *s);
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, record, s, NULL), HURRAY_OK);
  int i = find(s, "layout");
  assert_int_equal(s->kind[i], HURRAY_FIELD_SECTION);
  assert_int_equal(s->off[i], 44);
  assert_int_equal(s->size[i], 20 + 36);
  i = find(s, "layout.tiled[0].inner_layout");
  assert_string_equal(s->meanings[i], "tiled");
  i = find(s, "layout.tiled[1].tile_shape[1]");
  assert_int_equal(s->off[i], 44 + 20 + 8);
  i = find(s, "layout.tiled[1].outer_strides[0]");
  assert_int_equal(s->kind[i], HURRAY_FIELD_INT);
  i = find(s, "layout.tiled[1]");
  assert_int_equal(s->kind[i], HURRAY_FIELD_SECTION);
  assert_int_equal(s->size[i], 36);
  free(s);
  expect_walk_covers(w.b, w.n, 0);
}

static void test_walk_failure_delivers_prefix(void **state) {
  (void)state;
  /* Truncated inside the buffer handle: events up to buffer_count, then -3. */
  W w;
  w_dense_f32_3x4(&w, 0);
  w.n = 50;
  w_finish(&w);
  WalkLog log;
  memset(&log, 0, sizeof log);
  HurrayError err;
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, walk_log_visit, &log, &err),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_false(log.bad);
  assert_int_equal(log.next, 45);
  assert_string_equal(err.field, "buffers[0]");
  /* A rule failure after a complete parse: every field was delivered. */
  w_dense_f32_3x4(&w, 0);
  w.b[53] = 32;
  w_finish(&w);
  memset(&log, 0, sizeof log);
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, walk_log_visit, &log, &err),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(log.next, 61);
  /* Bad magic: the magic event, then the error. */
  w.b[0] = 'X';
  memset(&log, 0, sizeof log);
  assert_int_equal(hurray_descriptor_walk(w.b, w.n, 0, walk_log_visit, &log, &err),
                   HURRAY_ERR_INVALID_MAGIC);
  assert_int_equal(log.leaves, 1);
}

/* Debug builds recognise a destroyed descriptor without reading its freed
 * memory (the handle graveyard): this test runs clean under ASan. */
static void test_destroyed_descriptor_detected(void **state) {
  (void)state;
  if (!hurray_handle_checks_enabled()) {
    printf("handle checks are off in this build (NDEBUG): nothing to test\n");
    return;
  }
  static const uint8_t k[61] = {
      0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x3D, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x01, 0x02, 0, 0, 0,
      0x03, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0x01, 0x30, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_decode(k, sizeof k, &d), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  uint32_t rank = 0;
  assert_int_equal(hurray_descriptor_rank(d, &rank), HURRAY_ERR_INTERNAL);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_ERR_INTERNAL);
  /* A new descriptor at the same address is live again. */
  HurrayDescriptor *e = NULL;
  assert_int_equal(hurray_descriptor_decode(k, sizeof k, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_rank(e, &rank), HURRAY_OK);
  assert_int_equal(rank, 2);
  assert_int_equal(hurray_descriptor_destroy(e), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_getters_null),
      cmocka_unit_test(test_getter_values),
      cmocka_unit_test(test_shape_query),
      cmocka_unit_test(test_element_count_limits),
      cmocka_unit_test(test_encode_capacity),
      cmocka_unit_test(test_from_fields_arguments),
      cmocka_unit_test(test_from_fields_tiled_structure),
      cmocka_unit_test(test_one_bounded_allocation),
      cmocka_unit_test(test_allocation_failure),
      cmocka_unit_test(test_walk_events),
      cmocka_unit_test(test_walk_layout_paths),
      cmocka_unit_test(test_walk_failure_delivers_prefix),
      cmocka_unit_test(test_destroyed_descriptor_detected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
