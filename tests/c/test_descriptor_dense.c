/*
 * hurray_descriptor_fields_dense: for a broad set of valid and invalid inputs,
 * its verdict is hurray_descriptor_from_fields's for the same fields, the
 * fields it fills are those hurray_descriptor_fields reports for the built
 * descriptor, and a failure carries from_fields's status, field and reason
 * without a byte offset.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

/* The fields as a caller would fill them by hand (the binding did, before). */
static void by_hand(uint8_t type_tag, uint32_t rank, const uint64_t *shape, uint8_t layout_tag,
                    uint64_t bytes, uint32_t alignment, HurrayBufferHandle *h,
                    HurrayDescriptorFields *f) {
  memset(h, 0, sizeof *h);
  h->byte_size = bytes;
  h->alignment = alignment;
  h->device_tag = HURRAY_DEVICE_CPU;
  h->sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  h->memory_class = HURRAY_MEMORY_STANDARD;
  memset(f, 0, sizeof *f);
  f->version_major = 1;
  f->type_tag = type_tag;
  f->rank = rank;
  f->shape = shape;
  f->layout.tag = layout_tag;
  f->buffer_count = 1;
  f->buffers = h;
}

/* *a == *b field by field (arrays by content). */
static void same_fields(const HurrayDescriptorFields *a, const HurrayDescriptorFields *b,
                        const char *what) {
  if (a->version_major != b->version_major || a->version_minor != b->version_minor ||
      a->flags != b->flags || a->type_tag != b->type_tag || a->rank != b->rank ||
      a->byte_offset != b->byte_offset || a->buffer_count != b->buffer_count ||
      a->trailing_len != b->trailing_len)
    fail_msg("%s: scalar fields differ", what);
  if ((a->shape == NULL) != (b->shape == NULL) ||
      (a->rank > 0 && memcmp(a->shape, b->shape, a->rank * sizeof *a->shape) != 0))
    fail_msg("%s: shape differs", what);
  if (memcmp(&a->layout, &b->layout, sizeof a->layout) != 0 ||
      !hurray_layout_equal(&a->layout, &b->layout, a->rank))
    fail_msg("%s: layout differs", what);
  if (a->buffer_count == 1 && memcmp(a->buffers, b->buffers, sizeof *a->buffers) != 0)
    fail_msg("%s: buffer handle differs", what);
  if (a->quantization || b->quantization || a->shard || b->shard || a->statistics ||
      b->statistics || a->extension_type || b->extension_type || a->composite_member ||
      b->composite_member || a->trailing || b->trailing)
    fail_msg("%s: a section is present", what);
}

static unsigned long long g_ok, g_fail;

/* One case: fields_dense against from_fields. */
static void one(uint8_t type_tag, uint32_t rank, const uint64_t *shape, uint8_t layout_tag,
                uint64_t bytes, uint32_t alignment) {
  char what[160];
  snprintf(what, sizeof what, "type 0x%02X rank %u layout %u bytes %llu align %u", type_tag,
           rank, layout_tag, (unsigned long long)bytes, alignment);
  HurrayBufferHandle h, href;
  HurrayDescriptorFields f, ref;
  HurrayError e, eref;
  hurray_error_clear(&e);
  hurray_error_clear(&eref);
  HurrayStatus st =
      hurray_descriptor_fields_dense(type_tag, rank, shape, layout_tag, bytes, alignment, &h, &f, &e);
  by_hand(type_tag, rank, shape, layout_tag, bytes, alignment, &href, &ref);
  HurrayDescriptor *d = NULL;
  HurrayStatus want = hurray_descriptor_from_fields(&ref, HURRAY_DECODE_STRICT, &d, &eref);
  if (st != want)
    fail_msg("%s: fields_dense says %s (%s), from_fields %s (%s)", what, hurray_status_name(st),
             e.message, hurray_status_name(want), eref.message);
  if (st == HURRAY_OK) {
    g_ok++;
    HurrayDescriptorFields g;
    assert_int_equal(hurray_descriptor_fields(d, &g), HURRAY_OK);
    same_fields(&f, &g, what);
    assert_ptr_equal(f.buffers, &h);
    if (rank > 0) assert_ptr_equal(f.shape, shape); /* borrowed, not copied */
    assert_int_equal(e.status, HURRAY_OK);         /* untouched on success */
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    return;
  }
  g_fail++;
  assert_null(d);
  if (e.status != st || strcmp(e.field, eref.field) != 0 || strcmp(e.reason, eref.reason) != 0)
    fail_msg("%s: error %s [%s] \"%s\", from_fields %s [%s] \"%s\"", what,
             hurray_status_name(e.status), e.field, e.reason, hurray_status_name(eref.status),
             eref.field, eref.reason);
  assert_true(e.offset == HURRAY_NO_OFFSET);
  char msg[sizeof e.message];
  if (e.field[0] != '\0') snprintf(msg, sizeof msg, "%s: %s", e.field, e.reason);
  else snprintf(msg, sizeof msg, "%s", e.reason);
  assert_string_equal(e.message, msg);
  /* Without err, the same status. */
  assert_int_equal(hurray_descriptor_fields_dense(type_tag, rank, shape, layout_tag, bytes,
                                                  alignment, &h, &f, NULL),
                   st);
}

/* Sizes around the one the data needs (when it has one). */
static void around_need(uint8_t type_tag, uint32_t rank, const uint64_t *shape, uint8_t layout,
                        uint32_t alignment) {
  uint64_t count = 1, need = 0;
  bool known = true;
  for (uint32_t k = 0; k < rank && known; k++)
    known = shape[k] != HURRAY_DYNAMIC_DIM && !__builtin_mul_overflow(count, shape[k], &count);
  if (known && hurray_buffer_size_bytes(type_tag, count, &need) == HURRAY_OK) {
    one(type_tag, rank, shape, layout, need, alignment);
    if (need > 0) one(type_tag, rank, shape, layout, need - 1, alignment);
    if (need < UINT64_MAX) one(type_tag, rank, shape, layout, need + 1, alignment);
  }
  one(type_tag, rank, shape, layout, 0, alignment);
  one(type_tag, rank, shape, layout, UINT64_MAX, alignment);
  one(type_tag, rank, shape, layout, 1ull << 63, alignment);
}

/* Every type tag, both layouts, ranks and shapes at the edges. */
static void test_structured(void **state) {
  (void)state;
  static const uint64_t dims[] = {0, 1, 2, 3, 7, 64, 1000, 1ull << 31, 1ull << 32,
                                  (1ull << 62) + 1, 1ull << 63, UINT64_MAX - 1,
                                  HURRAY_DYNAMIC_DIM};
  static const uint32_t aligns[] = {64, 0, 1, 32, 48, 128, 4096, 1u << 31, 3};
  uint64_t shape[66];
  for (unsigned t = 0; t < 256; t++) {
    for (int lay = 1; lay <= 2; lay++) {
      /* scalars, vectors, matrices of the edge dimensions */
      one((uint8_t)t, 0, NULL, (uint8_t)lay, 0, 64);
      around_need((uint8_t)t, 0, shape, (uint8_t)lay, 64);
      for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        shape[0] = dims[i];
        around_need((uint8_t)t, 1, shape, (uint8_t)lay, 64);
        for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j += 2) {
          shape[1] = dims[j];
          around_need((uint8_t)t, 2, shape, (uint8_t)lay, 64);
        }
      }
    }
  }
  /* Alignments, for a named type of each width. */
  static const uint8_t types[] = {HURRAY_DTYPE_FLOAT32, HURRAY_DTYPE_BOOL, HURRAY_DTYPE_INT4,
                                  HURRAY_DTYPE_UINT2, HURRAY_DTYPE_FLOAT6_E2M3,
                                  HURRAY_DTYPE_FLOAT128, HURRAY_DTYPE_UINT8};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++)
      for (uint64_t n = 0; n < 5; n++) {
        shape[0] = n;
        shape[1] = 3;
        around_need(types[t], 2, shape, HURRAY_LAYOUT_COL_MAJOR, aligns[a]);
        around_need(types[t], 1, shape, HURRAY_LAYOUT_ROW_MAJOR, aligns[a]);
      }
  /* Rank at and over the cap; a zero dimension among huge ones. */
  for (uint32_t r = 62; r <= 66; r++) {
    for (uint32_t k = 0; k < r; k++) shape[k] = 2;
    around_need(HURRAY_DTYPE_UINT8, r, shape, HURRAY_LAYOUT_ROW_MAJOR, 64);
    for (uint32_t k = 0; k < r; k++) shape[k] = 1;
    around_need(HURRAY_DTYPE_FLOAT64, r, shape, HURRAY_LAYOUT_COL_MAJOR, 64);
  }
  shape[0] = UINT64_MAX - 1;
  shape[1] = 0;
  shape[2] = UINT64_MAX - 1;
  around_need(HURRAY_DTYPE_FLOAT32, 3, shape, HURRAY_LAYOUT_ROW_MAJOR, 64);
  /* Element counts and byte sizes at 2^63. */
  static const uint64_t edge[] = {(1ull << 63) - 1, 1ull << 63, (1ull << 63) + 1,
                                  (1ull << 61), (1ull << 61) + 1, (1ull << 62)};
  for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (unsigned t = 0; t < 256; t++) {
      if (hurray_dtype_tag_kind((uint8_t)t) != HURRAY_TAG_NAMED) continue;
      shape[0] = edge[i];
      around_need((uint8_t)t, 1, shape, HURRAY_LAYOUT_ROW_MAJOR, 64);
      shape[0] = 2;
      shape[1] = edge[i] / 2;
      around_need((uint8_t)t, 2, shape, HURRAY_LAYOUT_COL_MAJOR, 4096);
    }
  assert_true(g_ok > 1000);
  assert_true(g_fail > 1000);
}

/* Pseudo-random cases (a fixed seed: the same run every time). */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void test_random(void **state) {
  (void)state;
  static const uint64_t small[] = {0, 1, 2, 3, 5, 8, 13, 100, 4096, 65537};
  uint64_t shape[70];
  for (int i = 0; i < 40000; i++) {
    uint64_t r = next();
    uint32_t rank = (uint32_t)(r % 9);
    if ((r >> 8) % 64 == 0) rank = 60 + (uint32_t)((r >> 16) % 8);
    for (uint32_t k = 0; k < rank; k++) {
      uint64_t x = next();
      switch (x % 16) {
        case 0: shape[k] = HURRAY_DYNAMIC_DIM; break;
        case 1: shape[k] = x >> 4; break;               /* huge */
        case 2: shape[k] = (x >> 40) + 1; break;        /* large */
        default: shape[k] = rank > 8 ? 1 : small[(x >> 4) % 10]; break;
      }
    }
    uint64_t y = next();
    uint8_t type = (y % 4 == 0) ? (uint8_t)(y >> 8) : (uint8_t)HURRAY_DTYPE_FLOAT16 + (uint8_t)((y >> 8) % 3);
    if (y % 7 == 0) type = HURRAY_DTYPE_INT4;
    uint8_t layout = (uint8_t)(1 + (y >> 16) % 2);
    uint32_t align = 1u << ((y >> 20) % 14);
    if ((y >> 30) % 16 == 0) align = (uint32_t)(y >> 32);
    around_need(type, rank, shape, layout, align);
  }
}

static void test_arguments(void **state) {
  (void)state;
  uint64_t shape[2] = {3, 4};
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  HurrayError e;
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape,
                                                  HURRAY_LAYOUT_ROW_MAJOR, 48, 64, NULL, &f, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "handle");
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape,
                                                  HURRAY_LAYOUT_ROW_MAJOR, 48, 64, &h, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "out");
  /* Only the two dense layouts: other tags are refused, nothing written. */
  static const uint8_t others[] = {0x00, HURRAY_LAYOUT_STRIDED, HURRAY_LAYOUT_TILED,
                                   HURRAY_LAYOUT_COO, HURRAY_LAYOUT_COMPOSITE,
                                   HURRAY_LAYOUT_HILBERT, 0x0C, 0xF0, 0xFF};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    memset(&h, 0x77, sizeof h);
    HurrayBufferHandle before = h;
    assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape, others[i],
                                                    48, 64, &h, &f, &e),
                     HURRAY_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.field, "layout_tag");
    assert_memory_equal(&h, &before, sizeof h);
  }
  /* A NULL shape for rank 2: from_fields's NULL_POINTER on "shape". */
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, NULL,
                                                  HURRAY_LAYOUT_ROW_MAJOR, 48, 64, &h, &f, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "shape");
  assert_true(e.offset == HURRAY_NO_OFFSET);
  /* What it fills, on the common path. */
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape,
                                                  HURRAY_LAYOUT_COL_MAJOR, 48, 128, &h, &f, &e),
                   HURRAY_OK);
  assert_int_equal(h.byte_size, 48);
  assert_int_equal(h.alignment, 128);
  assert_int_equal(h.device_tag, HURRAY_DEVICE_CPU);
  assert_int_equal(h.sync_mode, HURRAY_SYNC_PRODUCER_SYNCED);
  assert_int_equal(h.memory_class, HURRAY_MEMORY_STANDARD);
  assert_int_equal(h.reserved, 0);
  assert_ptr_equal(f.buffers, &h);
  assert_ptr_equal(f.shape, shape);
  assert_int_equal(f.layout.tag, HURRAY_LAYOUT_COL_MAJOR);
  assert_int_equal(f.version_major, 1);
  assert_int_equal(f.buffer_count, 1);
  /* A scalar: no shape pointer, even if one is given. */
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 0, shape,
                                                  HURRAY_LAYOUT_ROW_MAJOR, 4, 64, &h, &f, NULL),
                   HURRAY_OK);
  assert_null(f.shape);
  /* The error of a rule, reworded without the offset from_fields gives. */
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape,
                                                  HURRAY_LAYOUT_ROW_MAJOR, 48, 48, &h, &f, &e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(e.field, "buffers[0].alignment");
  assert_string_equal(e.message, "buffers[0].alignment: 48 is not a power of two");
}

/* Allocates nothing, on either path. */
static void test_no_allocation(void **state) {
  (void)state;
  tu_alloc_install();
  uint64_t shape[3] = {2, 3, 4};
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  HurrayError e;
  long before = tu_alloc_count();
  for (int i = 0; i < 100; i++) {
    assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT64, 3, shape,
                                                    HURRAY_LAYOUT_ROW_MAJOR, 192, 64, &h, &f,
                                                    &e),
                     HURRAY_OK);
    assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT64, 3, shape,
                                                    HURRAY_LAYOUT_ROW_MAJOR, 191, 64, &h, &f,
                                                    &e),
                     HURRAY_ERR_BUFFER_SIZE);
  }
  assert_int_equal(tu_alloc_count(), before);
  /* The counter does count: building the descriptor allocates. */
  assert_int_equal(hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT64, 3, shape,
                                                  HURRAY_LAYOUT_ROW_MAJOR, 192, 64, &h, &f, &e),
                   HURRAY_OK);
  HurrayDescriptor *d = NULL;
  assert_int_equal(hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e), HURRAY_OK);
  assert_true(tu_alloc_count() > before);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  tu_alloc_reset();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arguments),
      cmocka_unit_test(test_no_allocation),
      cmocka_unit_test(test_structured),
      cmocka_unit_test(test_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
