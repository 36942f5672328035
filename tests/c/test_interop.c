/* What other array libraries call the format's types, devices and layouts
 * (src/core/interop.c, include/hurray/interop.h). */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "hurray/hurray.h"

static void test_dlpack_dtypes_both_ways(void **state) {
  (void)state;
  unsigned mapped = 0;
  for (unsigned tag = 0; tag < 256; tag++) {
    HurrayDLDataType dt;
    uint8_t back = 0;
    if (hurray_dlpack_dtype_encode((uint8_t)tag, HURRAY_DLPACK_MINOR, &dt, NULL) != HURRAY_OK)
      continue;
    mapped++;
    assert_int_equal(dt.lanes, 1);
    assert_int_equal(hurray_dlpack_dtype_decode(dt, 0, &back, NULL), HURRAY_OK);
    assert_int_equal(back, tag);
  }
  assert_int_equal(mapped, 21);
  HurrayError e;
  HurrayDLDataType dt;
  assert_int_equal(hurray_dlpack_dtype_encode(HURRAY_DTYPE_FLOAT8_E4M3, 0, &dt, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "needs DLPack 1.1"));
  assert_int_equal(hurray_dlpack_dtype_encode(HURRAY_DTYPE_INT4, 1, &dt, &e), HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "int4 is not in the DLPack type enum"));
  /* float32 is (2, 32); bool one byte; a padded sub-byte type is not the packed one */
  assert_int_equal(hurray_dlpack_dtype_encode(HURRAY_DTYPE_FLOAT32, 0, &dt, NULL), HURRAY_OK);
  assert_int_equal(dt.code, 2);
  assert_int_equal(dt.bits, 32);
  uint8_t tag = 0;
  HurrayDLDataType f4 = {17, 4, 1}, lanes = {2, 32, 4};
  assert_int_equal(hurray_dlpack_dtype_decode(f4, 0, &tag, NULL), HURRAY_OK);
  assert_int_equal(tag, HURRAY_DTYPE_FLOAT4_E2M1);
  assert_int_equal(hurray_dlpack_dtype_decode(f4, HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED, &tag,
                                              NULL),
                   HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_dlpack_dtype_decode(lanes, 0, &tag, &e), HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "lanes 4"));
}

static void test_dlpack_devices_both_ways(void **state) {
  (void)state;
  int32_t t = 0;
  uint8_t d = 0, mc = 0;
  assert_int_equal(hurray_dlpack_device_encode(HURRAY_DEVICE_CUDA, HURRAY_MEMORY_HOST_PINNED, &t,
                                               NULL),
                   HURRAY_OK);
  assert_int_equal(t, HURRAY_DL_CUDA_HOST);
  assert_int_equal(hurray_dlpack_device_decode(t, &d, &mc, NULL), HURRAY_OK);
  assert_int_equal(d, HURRAY_DEVICE_CUDA);
  assert_int_equal(mc, HURRAY_MEMORY_HOST_PINNED);
  assert_int_equal(hurray_dlpack_device_encode(HURRAY_DEVICE_CPU, HURRAY_MEMORY_UNIFIED, &t, NULL),
                   HURRAY_OK);
  assert_int_equal(t, HURRAY_DL_CPU);
  assert_int_equal(hurray_dlpack_device_decode(HURRAY_DL_CPU, &d, &mc, NULL), HURRAY_OK);
  assert_int_equal(mc, HURRAY_MEMORY_STANDARD);
  HurrayError e;
  assert_int_equal(hurray_dlpack_device_encode(HURRAY_DEVICE_CUDA, HURRAY_MEMORY_PEER, &t, &e),
                   HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "no DLPack device type"));
  assert_int_equal(hurray_dlpack_device_decode(9, &d, &mc, NULL), HURRAY_ERR_UNSUPPORTED);
}

static HurrayStatus import(void *data, int32_t ndim, int64_t *shape, int64_t *strides,
                           uint64_t byte_offset, HurrayDLPackImport *out) {
  HurrayDLTensor dl = {data, {HURRAY_DL_CPU, 0}, ndim, {2, 32, 1}, shape, strides, byte_offset};
  return hurray_dlpack_import(&dl, 0, out, NULL);
}

static void test_dlpack_import_checks_everything(void **state) {
  (void)state;
  static float buf[64];
  HurrayDLPackImport im;
  int64_t s23[2] = {2, 3}, row[2] = {3, 1}, col[2] = {1, 2}, odd[2] = {6, 2};
  assert_int_equal(import(buf, 2, s23, NULL, 0, &im), HURRAY_OK);
  assert_int_equal(im.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(im.count, 6);
  assert_int_equal(im.nbytes, 24);
  assert_ptr_equal(im.first, buf);
  assert_int_equal(import(buf, 2, s23, row, 0, &im), HURRAY_OK);
  assert_int_equal(im.layout_tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(import(buf, 2, s23, col, 0, &im), HURRAY_OK);
  assert_int_equal(im.layout_tag, HURRAY_LAYOUT_COL_MAJOR);
  assert_int_equal(import(buf, 2, s23, odd, 8, &im), HURRAY_OK);
  assert_int_equal(im.layout_tag, HURRAY_LAYOUT_STRIDED);
  assert_int_equal(im.span, (6 + 2 * 2 + 1) * 4);
  assert_int_equal(im.byte_strides[0], 24);
  assert_ptr_equal(im.first, (uint8_t *)buf + 8);
  /* forged: NULL data, negative shape, a count past 2**63, strides that wrap */
  int64_t four[1] = {4}, neg[1] = {-4}, big[2] = {1LL << 40, 1LL << 40}, wrap[2] = {1LL << 62, 1};
  int64_t s22[2] = {2, 2}, s0[2] = {0, 3};
  assert_int_equal(import(NULL, 1, four, NULL, 0, &im), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(import(NULL, 2, s0, NULL, 0, &im), HURRAY_OK); /* no elements: fine */
  assert_int_equal(import(buf, 1, neg, NULL, 0, &im), HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_int_equal(import(buf, 2, big, NULL, 0, &im), HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_int_equal(import(buf, 2, s22, wrap, 0, &im), HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_int_equal(import(buf, 1, four, NULL, UINT64_MAX - 7, &im),
                   HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_int_equal(import(buf, 65, four, NULL, 0, &im), HURRAY_ERR_INVALID_BUFFER_TABLE);
  assert_int_equal(import(buf, 1, NULL, NULL, 0, &im), HURRAY_ERR_INVALID_BUFFER_TABLE);
}

static void test_numpy_names(void **state) {
  (void)state;
  assert_string_equal(hurray_dtype_array_typestr(HURRAY_DTYPE_UINT8), "|u1");
  assert_null(hurray_dtype_array_typestr(HURRAY_DTYPE_BOOL));
  assert_null(hurray_dtype_array_typestr(HURRAY_DTYPE_BFLOAT16));
  for (unsigned tag = 0; tag < 256; tag++) {
    const char *ts = hurray_dtype_array_typestr((uint8_t)tag);
    if (ts != NULL)
      assert_int_equal(hurray_dtype_from_array_kind(ts[1], (uint64_t)atoi(ts + 2)), tag);
  }
  assert_int_equal(hurray_dtype_from_array_kind('b', 1), HURRAY_DTYPE_BOOL);
  assert_int_equal(hurray_dtype_from_array_kind('f', 16), 0);
  bool sw;
  assert_int_equal(hurray_dtype_from_buffer_format(NULL, 1, &sw), HURRAY_DTYPE_UINT8);
  assert_int_equal(hurray_dtype_from_buffer_format("<l", 8, &sw), HURRAY_DTYPE_INT64);
  assert_false(sw);
  assert_int_equal(hurray_dtype_from_buffer_format(">f", 4, &sw), HURRAY_DTYPE_FLOAT32);
  assert_true(sw);
  assert_int_equal(hurray_dtype_from_buffer_format("Zd", 16, &sw), HURRAY_DTYPE_COMPLEX128);
  assert_int_equal(hurray_dtype_from_buffer_format("Zd", 8, &sw), 0);
  assert_int_equal(hurray_dtype_from_buffer_format("?", 1, &sw), HURRAY_DTYPE_BOOL);
  assert_int_equal(hurray_dtype_from_buffer_format("e", 4, &sw), 0);
  assert_int_equal(hurray_dtype_from_buffer_format("ff", 4, &sw), 0);
  assert_int_equal(hurray_dtype_from_buffer_format("", 4, &sw), 0);
}

static void test_strided_geometry(void **state) {
  (void)state;
  uint64_t shape[3] = {2, 3, 4};
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.rank = 3;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_COL_MAJOR;
  int64_t sh[3], st[3];
  assert_int_equal(hurray_strided_geometry(&f, 4, sh, st, NULL), HURRAY_OK);
  assert_int_equal(st[0], 4);
  assert_int_equal(st[1], 8);
  assert_int_equal(st[2], 24);
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  assert_int_equal(hurray_strided_geometry(&f, 1, sh, st, NULL), HURRAY_OK);
  assert_int_equal(st[0], 12);
  assert_int_equal(st[2], 1);
  uint64_t huge[2] = {0, UINT64_C(1) << 63}, wide[3] = {0, UINT64_C(1) << 32, UINT64_C(1) << 32};
  HurrayError e;
  f.rank = 2;
  f.shape = huge;
  assert_int_equal(hurray_strided_geometry(&f, 1, sh, st, &e), HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "2**63 - 1"));
  f.rank = 3;
  f.shape = wide;
  assert_int_equal(hurray_strided_geometry(&f, 1, sh, st, &e), HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "shape (0, 4294967296, 4294967296) multiplies past 2**63 - 1"));
  /* the bytes a strided view reaches */
  uint8_t mem[64], *base;
  uint64_t span, off, two[2] = {2, 3};
  int64_t back[2] = {-3, 1};
  assert_true(hurray_strided_extent(mem + 12, 2, 2, two, back, &base, &span, &off));
  assert_ptr_equal(base, mem + 6);
  assert_int_equal(span, 12);
  assert_int_equal(off, 6);
  int64_t far[2] = {INT64_MAX, 1}; /* the span passes 2**63 bytes */
  assert_false(hurray_strided_extent(mem, 2, 2, two, far, &base, &span, &off));
}

static void test_coo_order(void **state) {
  (void)state;
  uint64_t rows[8] = {0, 1, 0, 2, 1, 0, 1, 1}; /* (0,1) (0,2) (1,0) (1,1) */
  assert_true(hurray_coo_indices_increasing(rows, 4, 2));
  assert_true(hurray_coo_indices_increasing(rows, 1, 2));
  assert_false(hurray_coo_indices_increasing(rows, 2, 0));
  assert_false(hurray_coo_indices_increasing(rows, 8, 1)); /* 0 1 0 ... */
  assert_true(hurray_coo_indices_increasing(rows, 2, 4)); /* (0,1,0,2) < (1,0,1,1) */
  uint64_t dup[4] = {3, 3, 3, 3};
  assert_false(hurray_coo_indices_increasing(dup, 2, 2));
  uint8_t odd[8 * 4 + 1];
  memcpy(odd + 1, rows, 8 * 4); /* unaligned rows read the same */
  assert_true(hurray_coo_indices_increasing(odd + 1, 2, 2));
  memcpy(odd + 1, dup, 8 * 4);
  assert_false(hurray_coo_indices_increasing(odd + 1, 2, 2));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dlpack_dtypes_both_ways),
      cmocka_unit_test(test_dlpack_devices_both_ways),
      cmocka_unit_test(test_dlpack_import_checks_everything),
      cmocka_unit_test(test_numpy_names),
      cmocka_unit_test(test_strided_geometry),
      cmocka_unit_test(test_coo_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
