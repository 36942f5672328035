/* Shared tensors in C: the writer records views (hurray_file_writer_add_view),
 * the reader checks the record once and gives each view back by name, as a
 * tensor over its base's bytes; forged records are refused naming the view
 * and the rule, whichever source the file is read from. */
#include "test_file_util.h"

static int setup(void **state) {
  (void)state;
  tf_mkdir();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  tf_rmdir();
  return 0;
}

/* base: float32 [4, 6] holding 0..23 */
static float g_base[24];

static HurrayFileWriter *writer(const char *path) {
  HurrayFileWriter *w = NULL;
  HurrayError e;
  if (hurray_file_writer_open(path, NULL, &w, &e) != HURRAY_OK) fail_msg("open: %s", e.message);
  for (int i = 0; i < 24; i++) g_base[i] = (float)i;
  HurrayDescriptor *d = tf_desc_f32(4, 6);
  const void *bufs[1] = {g_base};
  if (hurray_file_writer_add_tensor(w, "w", 1, d, bufs, NULL, &e) != HURRAY_OK)
    fail_msg("add: %s", e.message);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return w;
}

static HurrayFileView view_of(const char *name, const char *base, uint8_t dtype, uint32_t rank,
                              const uint64_t *shape, int64_t off, const int64_t *strides) {
  HurrayFileView v;
  memset(&v, 0, sizeof v);
  v.name = name;
  v.name_len = strlen(name);
  v.base = base;
  v.base_len = strlen(base);
  v.dtype = dtype;
  v.rank = rank;
  v.shape = shape;
  v.byte_offset = off;
  v.byte_strides = strides;
  return v;
}

static const uint64_t T_SHAPE[2] = {6, 4};
static const int64_t T_STRIDES[2] = {4, 24};
static const uint64_t R_SHAPE[1] = {4};
static const int64_t R_STRIDES[1] = {-24}; /* column 1, bottom to top */

static void add_all(HurrayFileWriter *w) {
  HurrayError e;
  HurrayFileView v = view_of("w.T", "w", HURRAY_DTYPE_FLOAT32, 2, T_SHAPE, 0, T_STRIDES);
  if (hurray_file_writer_add_view(w, &v, &e) != HURRAY_OK) fail_msg("view: %s", e.message);
  v = view_of("col1 reversed", "w", HURRAY_DTYPE_FLOAT32, 1, R_SHAPE, 3 * 24 + 4, R_STRIDES);
  if (hurray_file_writer_add_view(w, &v, &e) != HURRAY_OK) fail_msg("view: %s", e.message);
  v = view_of("scalar", "w", HURRAY_DTYPE_FLOAT32, 0, NULL, 7 * 4, NULL);
  if (hurray_file_writer_add_view(w, &v, &e) != HURRAY_OK) fail_msg("view: %s", e.message);
  v = view_of("tied \xc3\xa9\xf0\x9f\x98\x80", "w", 0, 0, NULL, 0, NULL);
  v.same = true;
  if (hurray_file_writer_add_view(w, &v, &e) != HURRAY_OK) fail_msg("view: %s", e.message);
  static const uint64_t hs[1] = {4};
  static const int64_t hst[1] = {2};
  v = view_of("halves", "w", HURRAY_DTYPE_INT16, 1, hs, 8, hst);
  if (hurray_file_writer_add_view(w, &v, &e) != HURRAY_OK) fail_msg("view: %s", e.message);
}

/* The record is what Python's json.dumps(..., separators=(",", ":")) writes:
 * files from before the record moved into C are byte for byte the same. */
static const char RECORD[] =
    "{\"format\":1,\"views\":{"
    "\"w.T\":{\"base\":\"w\",\"dtype\":\"float32\",\"shape\":[6,4],\"byte_offset\":0,"
    "\"byte_strides\":[4,24]},"
    "\"col1 reversed\":{\"base\":\"w\",\"dtype\":\"float32\",\"shape\":[4],\"byte_offset\":76,"
    "\"byte_strides\":[-24]},"
    "\"scalar\":{\"base\":\"w\",\"dtype\":\"float32\",\"shape\":[],\"byte_offset\":28,"
    "\"byte_strides\":[]},"
    "\"tied \\u00e9\\ud83d\\ude00\":{\"base\":\"w\"},"
    "\"halves\":{\"base\":\"w\",\"dtype\":\"int16\",\"shape\":[4],\"byte_offset\":8,"
    "\"byte_strides\":[2]}}}";

static float at(const HurrayFileTensor *t, int64_t elem_off) {
  const void *data = NULL;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &data, NULL), HURRAY_OK);
  uint64_t bo = 0;
  assert_int_equal(hurray_descriptor_byte_offset(hurray_file_tensor_descriptor(t), &bo),
                   HURRAY_OK);
  float x;
  memcpy(&x, (const uint8_t *)data + bo + elem_off * 4, 4);
  return x;
}

static void check_file(HurrayFile *f) {
  HurrayError e;
  uint64_t n = 0;
  if (hurray_file_view_count(f, &n, &e) != HURRAY_OK) fail_msg("count: %s", e.message);
  assert_int_equal(n, 5);
  const HurrayKvValue *kv = NULL;
  assert_int_equal(hurray_file_kv_find(f, HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_VIEWS_LEN, &kv),
                   HURRAY_OK);
  assert_int_equal(kv->v.str.len, strlen(RECORD));
  assert_memory_equal(kv->v.str.data, RECORD, strlen(RECORD));

  HurrayFileView v;
  assert_int_equal(hurray_file_view(f, 0, &v, &e), HURRAY_OK);
  assert_int_equal(v.name_len, 3);
  assert_memory_equal(v.name, "w.T", 3);
  assert_int_equal(v.base_index, 0);
  assert_false(v.same);
  assert_int_equal(v.dtype, HURRAY_DTYPE_FLOAT32);
  assert_int_equal(v.rank, 2);
  assert_int_equal(v.shape[0], 6);
  assert_int_equal(v.byte_strides[1], 24);
  assert_int_equal(hurray_file_view(f, 5, &v, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);

  uint64_t i = 99;
  const char tied[] = "tied \xc3\xa9\xf0\x9f\x98\x80";
  assert_int_equal(hurray_file_find_view(f, tied, strlen(tied), &i, &e), HURRAY_OK);
  assert_int_equal(i, 3);
  assert_int_equal(hurray_file_view(f, i, &v, &e), HURRAY_OK);
  assert_true(v.same);
  assert_int_equal(hurray_file_find_view(f, "w", 1, &i, &e), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_find_view(f, "nope", 4, &i, &e), HURRAY_ERR_NOT_FOUND);
  uint64_t ti;
  assert_int_equal(hurray_file_find(f, "w.T", 3, &ti), HURRAY_ERR_NOT_FOUND);
  /* one lookup over both: a stored tensor first, then a view */
  bool is_view = true;
  assert_int_equal(hurray_file_find_name(f, "w", 1, &ti, &is_view, &e), HURRAY_OK);
  assert_false(is_view);
  assert_int_equal(ti, 0);
  assert_int_equal(hurray_file_find_name(f, tied, strlen(tied), &ti, &is_view, &e), HURRAY_OK);
  assert_true(is_view);
  assert_int_equal(ti, 3);
  assert_int_equal(hurray_file_find_name(f, "nope", 4, &ti, &is_view, &e), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_find_name(f, "w", 1, NULL, &is_view, &e), HURRAY_ERR_NULL_POINTER);

  /* the transpose: element [r][c] of w.T is w[c][r] */
  HurrayFileTensor *t = NULL;
  if (hurray_file_view_tensor(f, 0, NULL, &t, &e) != HURRAY_OK)
    fail_msg("tensor: %s", e.message);
  HurrayDescriptorFields df;
  assert_int_equal(hurray_descriptor_fields(hurray_file_tensor_descriptor(t), &df), HURRAY_OK);
  assert_int_equal(df.layout.tag, HURRAY_LAYOUT_STRIDED);
  assert_int_equal(df.layout.u.strided.strides[0], 1);
  assert_int_equal(df.layout.u.strided.strides[1], 6);
  size_t len = 0;
  const char *nm = hurray_file_tensor_name(t, &len);
  assert_int_equal(len, 3);
  assert_memory_equal(nm, "w.T", 3);
  assert_int_equal(hurray_file_tensor_index(t), 0);
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 4; c++) assert_true(at(t, r * 1 + c * 6) == (float)(c * 6 + r));
  hurray_file_tensor_release(&t);

  /* the reversed column: w[3][1], w[2][1], w[1][1], w[0][1] */
  assert_int_equal(hurray_file_view_tensor(f, 1, NULL, &t, &e), HURRAY_OK);
  for (int k = 0; k < 4; k++) assert_true(at(t, -6 * k) == (float)((3 - k) * 6 + 1));
  hurray_file_tensor_release(&t);
  /* 0-d: row-major, element 7 */
  assert_int_equal(hurray_file_view_tensor(f, 2, NULL, &t, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_fields(hurray_file_tensor_descriptor(t), &df), HURRAY_OK);
  assert_int_equal(df.rank, 0);
  assert_int_equal(df.layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_true(at(t, 0) == 7.0f);
  /* the tensor outlives the file: it holds its base's bytes */
  HurrayFileTensor *keep = t;
  t = NULL;
  /* the same tensor under another name */
  assert_int_equal(hurray_file_view_tensor(f, 3, NULL, &t, &e), HURRAY_OK);
  assert_true(hurray_descriptor_equal(hurray_file_tensor_descriptor(t),
                                      hurray_file_tensor_descriptor(t)));
  assert_true(at(t, 23) == 23.0f);
  hurray_file_tensor_release(&t);
  /* over a base fetched already: the same bytes, also where each fetch copies */
  HurrayFileTensor *b = NULL;
  assert_int_equal(hurray_file_tensor(f, 0, &b, &e), HURRAY_OK);
  assert_int_equal(hurray_file_view_tensor(f, 0, b, &t, &e), HURRAY_OK);
  const void *pb = NULL, *pt = NULL;
  assert_int_equal(hurray_file_tensor_buffer(b, 0, &pb, NULL), HURRAY_OK);
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &pt, NULL), HURRAY_OK);
  assert_ptr_equal(pb, pt);
  hurray_file_tensor_release(&t);
  hurray_file_tensor_release(&b);

  /* one lookup for every name: a stored tensor, a view, neither */
  assert_int_equal(hurray_file_get(f, "w", 1, &t, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_fields(hurray_file_tensor_descriptor(t), &df), HURRAY_OK);
  assert_int_equal(df.layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_true(at(t, 13) == 13.0f);
  hurray_file_tensor_release(&t);
  assert_int_equal(hurray_file_get(f, "w.T", 3, &t, &e), HURRAY_OK);
  nm = hurray_file_tensor_name(t, &len);
  assert_int_equal(len, 3);
  assert_memory_equal(nm, "w.T", 3);
  assert_true(at(t, 2 * 1 + 3 * 6) == 20.0f); /* w.T[2][3] = w[3][2] */
  hurray_file_tensor_release(&t);
  assert_int_equal(hurray_file_get(f, tied, strlen(tied), &t, &e), HURRAY_OK);
  assert_true(at(t, 23) == 23.0f);
  hurray_file_tensor_release(&t);
  assert_int_equal(hurray_file_get(f, "nope", 4, &t, &e), HURRAY_ERR_NOT_FOUND);
  assert_null(t);
  assert_non_null(strstr(e.message, "no tensor or view"));
  assert_int_equal(hurray_file_get(f, "w", 1, NULL, &e), HURRAY_ERR_NULL_POINTER);

  /* the view's descriptor alone, then partial reads of views from the base's bytes */
  HurrayDescriptor *vd = NULL;
  assert_int_equal(hurray_file_view_descriptor(f, 0, &vd, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_fields(vd, &df), HURRAY_OK);
  assert_int_equal(df.rank, 2);
  assert_int_equal(df.shape[0], 6);
  assert_int_equal(df.shape[1], 4);
  assert_int_equal(df.layout.tag, HURRAY_LAYOUT_STRIDED);
  assert_int_equal(hurray_descriptor_destroy(vd), HURRAY_OK);
  /* w.T[1:5:2, ::-1] = w[3..0][1], w[3..0][3] */
  HurraySliceRange rg[2] = {{1, 5, 2, 0}, {0, 4, 1, HURRAY_SLICE_REVERSE}};
  float got[8];
  if (hurray_file_read_view_slice(f, 0, 2, rg, got, sizeof got, &e) != HURRAY_OK)
    fail_msg("view slice: %s", e.message);
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 4; c++)
      assert_true(got[r * 4 + c] == (float)((3 - c) * 6 + (1 + 2 * r)));
  /* the reversed column, its middle two: w[2][1], w[1][1] */
  HurraySliceRange mid = {1, 3, 1, 0};
  assert_int_equal(hurray_file_read_view_slice(f, 1, 1, &mid, got, 8, &e), HURRAY_OK);
  assert_true(got[0] == 13.0f && got[1] == 7.0f);
  /* the same-tensor kind reads its base; rank and bounds are the view's */
  HurraySliceRange row[2] = {{3, 4, 1, 0}, {0, 6, 1, 0}};
  assert_int_equal(hurray_file_read_view_slice(f, 3, 2, row, got, 24, &e), HURRAY_OK);
  assert_true(got[0] == 18.0f && got[5] == 23.0f);
  HurraySliceRange past[2] = {{0, 7, 1, 0}, {0, 4, 1, 0}};
  assert_int_equal(hurray_file_read_view_slice(f, 0, 2, past, got, sizeof got, &e),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_non_null(strstr(e.message, "view \"w.T\""));
  assert_int_equal(hurray_file_read_view_slice(f, 0, 1, past, got, sizeof got, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_read_view_slice(f, 5, 2, past, got, sizeof got, &e),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_int_equal(hurray_file_view_descriptor(f, 5, &vd, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_null(vd);
  hurray_file_close(&f);
  assert_true(at(keep, 0) == 7.0f);
  hurray_file_tensor_release(&keep);
}

static void test_views_written_then_read_from_every_source(void **state) {
  (void)state;
  const char *p = tf_path("v.hrry");
  HurrayFileWriter *w = writer(p);
  add_all(w);
  HurrayError e;
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) fail_msg("finish: %s", e.message);
  hurray_file_writer_destroy(&w);
  check_file(tf_open_as(p, HURRAY_FILE_ACCESS_MMAP));
  check_file(tf_open_as(p, HURRAY_FILE_ACCESS_READ));
  check_file(tf_open_as(p, HURRAY_FILE_ACCESS_MMAP_COPY));
  size_t len = 0;
  uint8_t *img = tf_load(p, &len);
  HurrayFile *f = NULL;
  assert_int_equal(tf_open_image(img, len, &f, &e), HURRAY_OK);
  check_file(f);
  free(img);
  /* the memory writer gives the same bytes */
  HurrayFileWriter *m = NULL;
  assert_int_equal(hurray_file_writer_open_memory(NULL, 0, &m, &e), HURRAY_OK);
  HurrayDescriptor *d = tf_desc_f32(4, 6);
  const void *bufs[1] = {g_base};
  assert_int_equal(hurray_file_writer_add_tensor(m, "w", 1, d, bufs, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  add_all(m);
  void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(hurray_file_writer_finish_memory(m, &data, &size, &e), HURRAY_OK);
  hurray_file_writer_destroy(&m);
  img = tf_load(p, &len);
  assert_int_equal(size, len);
  assert_memory_equal(data, img, len);
  free(img);
  hurray_free(data);
}

static void expect_refused(HurrayFileView v, HurrayStatus want, const char *why) {
  HurrayFileWriter *w = writer(tf_path("r.hrry"));
  HurrayError e;
  HurrayStatus st = hurray_file_writer_add_view(w, &v, &e);
  if (st != want) fail_msg("%s: status %s, wanted %s", why, hurray_status_name(st),
                           hurray_status_name(want));
  if (strstr(e.message, why) == NULL) fail_msg("message \"%s\" lacks \"%s\"", e.message, why);
  hurray_file_writer_abort(w);
  hurray_file_writer_destroy(&w);
}

static void test_the_writer_refuses_what_no_reader_would_take(void **state) {
  (void)state;
  static const uint64_t s2[1] = {2}, s7[1] = {7}, s65[65] = {0};
  static const int64_t st4[1] = {4}, st6[1] = {6}, stm[1] = {INT64_MIN}, st65[65] = {0};
  expect_refused(view_of("v", "nope", HURRAY_DTYPE_FLOAT32, 1, s2, 0, st4),
                 HURRAY_ERR_INVALID_ARGUMENT, "no tensor written so far");
  expect_refused(view_of("w", "w", HURRAY_DTYPE_FLOAT32, 1, s2, 0, st4),
                 HURRAY_ERR_DUPLICATE_NAME, "is a tensor of the file");
  expect_refused(view_of("v", "w", HURRAY_DTYPE_FLOAT32, 1, s2, 2, st4),
                 HURRAY_ERR_INVALID_ARGUMENT, "byte_offset 2 is not a multiple");
  expect_refused(view_of("v", "w", HURRAY_DTYPE_FLOAT32, 1, s2, 0, st6),
                 HURRAY_ERR_INVALID_ARGUMENT, "not a multiple of float32's size");
  expect_refused(view_of("v", "w", HURRAY_DTYPE_FLOAT32, 1, s7, 76, st4),
                 HURRAY_ERR_INVALID_ARGUMENT, "which holds 96");
  expect_refused(view_of("v", "w", HURRAY_DTYPE_FLOAT32, 1, s2, 4, stm),
                 HURRAY_ERR_INVALID_ARGUMENT, "does not fit in 64 bits");
  expect_refused(view_of("v", "w", HURRAY_DTYPE_BOOL, 1, s2, 0, st4),
                 HURRAY_ERR_INVALID_ARGUMENT, "not a whole-byte type");
  expect_refused(view_of("v", "w", 0x47, 1, s2, 0, st4), HURRAY_ERR_INVALID_ARGUMENT,
                 "names no type");
  expect_refused(view_of("v", "w", HURRAY_DTYPE_FLOAT32, 65, s65, 0, st65),
                 HURRAY_ERR_INVALID_ARGUMENT, "more than 64");
  static const uint64_t huge[3] = {UINT64_C(1) << 32, UINT64_C(1) << 32, 0};
  static const int64_t h3[3] = {4, 4, 4};
  expect_refused(view_of("v", "w", HURRAY_DTYPE_FLOAT32, 3, huge, 0, h3),
                 HURRAY_ERR_INVALID_ARGUMENT, "multiply past 2**63 - 1");

  /* two views of one name; a KV entry of the record's key; a tensor after a view */
  HurrayError e;
  HurrayFileWriter *w = writer(tf_path("d.hrry"));
  HurrayFileView v = view_of("v", "w", HURRAY_DTYPE_FLOAT32, 1, s2, 0, st4);
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_ERR_DUPLICATE_NAME);
  HurrayKvValue kv = hurray_kv_string("{}", 2);
  assert_int_equal(hurray_file_writer_add_kv(w, HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_VIEWS_LEN,
                                             &kv, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "records the views itself"));
  hurray_file_writer_destroy(&w);
  assert_int_equal(tf_dir_entries(), 0); /* nothing left behind */

  w = writer(tf_path("d.hrry"));
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_OK);
  HurrayDescriptor *d = tf_desc_u8(1);
  uint8_t one = 1;
  const void *bufs[1] = {&one};
  assert_int_equal(hurray_file_writer_add_tensor(w, "v", 1, d, bufs, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_ERR_DUPLICATE_NAME);
  hurray_file_writer_destroy(&w);

  /* a quantized or sub-byte base is no base; a u8 base is, for u8 views */
  w = writer(tf_path("q.hrry"));
  uint64_t n4 = 8;
  d = tf_desc_align(HURRAY_DTYPE_INT4, 1, &n4, 4, 64);
  uint8_t four[4] = {0};
  bufs[0] = four;
  assert_int_equal(hurray_file_writer_add_tensor(w, "q", 1, d, bufs, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  static const uint64_t one_s[1] = {1};
  static const int64_t one_st[1] = {1};
  v = view_of("qv", "q", HURRAY_DTYPE_UINT8, 1, one_s, 0, one_st);
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "whole-byte elements"));
  v.same = true; /* the same tensor under another name: any tensor */
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  /* a tensor given as the base that is not the view's base is refused */
  HurrayFile *f = tf_open_as(tf_path("q.hrry"), HURRAY_FILE_ACCESS_READ);
  HurrayFileTensor *other = NULL, *t = NULL;
  assert_int_equal(hurray_file_tensor(f, 0, &other, &e), HURRAY_OK); /* "w" */
  assert_int_equal(hurray_file_view_tensor(f, 0, other, &t, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(t);
  assert_non_null(strstr(e.message, "not the view's base"));
  hurray_file_tensor_release(&other);
  assert_int_equal(hurray_file_view_tensor(f, 0, NULL, &t, &e), HURRAY_OK);
  size_t nl = 0;
  assert_memory_equal(hurray_file_tensor_name(t, &nl), "qv", 2);
  assert_int_equal(hurray_file_tensor_index(t), 1);
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
}

/* A file whose KV holds `record` as the views record (written as any KV). */
static HurrayFile *forged(const char *record, size_t len, HurrayFileAccess access) {
  const char *p = tf_path("f.hrry");
  HurrayFileWriter *w = writer(p);
  HurrayError e;
  HurrayKvValue kv = hurray_kv_string(record, (uint32_t)len);
  assert_int_equal(hurray_file_writer_add_kv(w, HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_VIEWS_LEN,
                                             &kv, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  return tf_open_as(p, access);
}

static void expect_forged(const char *record, const char *why) {
  for (int access = 0; access < 2; access++) {
    HurrayFile *f = forged(record, strlen(record), (HurrayFileAccess)access);
    HurrayError e;
    uint64_t n = 0;
    HurrayStatus st = hurray_file_view_count(f, &n, &e);
    if (st != HURRAY_ERR_INVALID_KV)
      fail_msg("%s: status %s for %s", why, hurray_status_name(st), record);
    if (strstr(e.message, why) == NULL || strstr(e.message, "kv['hurray.views']") == NULL)
      fail_msg("message \"%s\" lacks \"%s\"", e.message, why);
    /* the same answer every time, from every function */
    HurrayError e2;
    uint64_t i;
    assert_int_equal(hurray_file_find_view(f, "v", 1, &i, &e2), HURRAY_ERR_INVALID_KV);
    assert_string_equal(e.message, e2.message);
    bool is_view = false;
    assert_int_equal(hurray_file_find_name(f, "v", 1, &i, &is_view, &e2), HURRAY_ERR_INVALID_KV);
    assert_string_equal(e.message, e2.message);
    assert_int_equal(hurray_file_find_name(f, "w", 1, &i, &is_view, &e2), HURRAY_OK);
    assert_false(is_view);
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_view_tensor(f, 0, NULL, &t, &e2), HURRAY_ERR_INVALID_KV);
    assert_null(t);
    assert_int_equal(hurray_file_get(f, "v", 1, &t, &e2), HURRAY_ERR_INVALID_KV);
    assert_string_equal(e.message, e2.message);
    assert_null(t);
    /* the rest of the file reads as usual, by number and by name */
    assert_int_equal(hurray_file_tensor(f, 0, &t, &e2), HURRAY_OK);
    hurray_file_tensor_release(&t);
    assert_int_equal(hurray_file_get(f, "w", 1, &t, &e2), HURRAY_OK);
    hurray_file_tensor_release(&t);
    hurray_file_close(&f);
  }
}

#define V(body) "{\"format\":1,\"views\":{\"v\":{\"base\":\"w\"" body "}}}"

static void test_forged_records_are_refused_naming_the_view_and_the_rule(void **state) {
  (void)state;
  expect_forged("not json", "not JSON");
  expect_forged("[1, 2]", "format must be 1");
  expect_forged("{\"format\":2,\"views\":{}}", "format must be 1");
  expect_forged("{\"format\":1.0,\"views\":{}}", "format must be 1");
  expect_forged("{\"format\":1}", "'views' must be an object");
  expect_forged("{\"format\":1,\"views\":[]}", "'views' must be an object");
  expect_forged("{\"format\":1,\"views\":{}} x", "extra data");
  expect_forged("{\"format\":1,\"views\":{\"v\":{\"base\":\"zz\"}}}", "'zz' is not a tensor");
  expect_forged("{\"format\":1,\"views\":{\"w\":{\"base\":\"w\"}}}", "also stores");
  expect_forged("{\"format\":1,\"views\":{\"v\":{\"base\":1}}}", "base must be a tensor name");
  expect_forged("{\"format\":1,\"views\":{\"v\":{\"base\":\"w\"},\"v\":{\"base\":\"w\"}}}",
                "recorded twice");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[8],\"byte_offset\":80,\"byte_strides\":[4]"),
                "reach bytes 80..112");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[30],\"byte_offset\":0,\"byte_strides\":[4]"),
                "which holds 96");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[-1],\"byte_offset\":0,\"byte_strides\":[4]"),
                "shape must be a list of non-negative ints");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[1],\"byte_offset\":0,\"byte_strides\":[4,4]"),
                "byte_strides must be 1 ints");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[1],\"byte_offset\":0.5,\"byte_strides\":[4]"),
                "byte_offset must be an int");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[1],\"byte_offset\":true,\"byte_strides\":[4]"),
                "byte_offset must be an int");
  expect_forged(V(",\"dtype\":\"float33\",\"shape\":[1],\"byte_offset\":0,\"byte_strides\":[4]"),
                "'float33' is not a hurray type name");
  expect_forged(V(",\"dtype\":3,\"shape\":[1],\"byte_offset\":0,\"byte_strides\":[4]"),
                "dtype must be a type name");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[1],\"byte_offset\":99999999999999999999,"
                  "\"byte_strides\":[4]"),
                "does not fit in 64 bits");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[2],\"byte_offset\":0,"
                  "\"byte_strides\":[-9223372036854775808]"),
                "does not fit in 64 bits");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[2],\"byte_offset\":4,\"byte_strides\":[-8]"),
                "reach bytes -4..8");
  expect_forged(V(",\"dtype\":\"float32\",\"shape\":[0],\"byte_offset\":100,\"byte_strides\":[4]"),
                "which holds 96");
  expect_forged(V(",\"dtype\":\"bool\",\"shape\":[1],\"byte_offset\":0,\"byte_strides\":[1]"),
                "not a whole-byte type");
  expect_forged("{\"format\":1,\"views\":{\"\\ud800\":{\"base\":\"w\"}}}", "lone high surrogate");
  expect_forged("{\"format\":1,\"views\":{\"\\udc00\":{\"base\":\"w\"}}}", "lone low surrogate");
  expect_forged("{\"format\":1,\"views\":{\"\\q\":{\"base\":\"w\"}}}", "unknown escape");
  expect_forged("{\"format\":1,\"views\":{\"v\":{\"base\":\"w\",\"x\":", "text ends early");
  /* invalid UTF-8 inside the JSON text cannot reach the reader: the KV
   * string itself must be UTF-8 (the writer and the KV parser check it) */
  /* nesting far deeper than any record needs */
  char deep[4096];
  size_t k = 0;
  k += (size_t)snprintf(deep, sizeof deep, "{\"format\":1,\"x\":");
  for (int d = 0; d < 1000; d++) deep[k++] = '[';
  for (int d = 0; d < 1000; d++) deep[k++] = ']';
  k += (size_t)snprintf(deep + k, sizeof deep - k, ",\"views\":{}}");
  expect_forged(deep, "nested deeper than");
}

static void test_valid_records_of_other_writers_are_read(void **state) {
  (void)state;
  /* whitespace, escapes, unknown keys skipped, keys in any order */
  const char rec[] =
      " { \"views\" : { \"v\\u0031\" : { \"byte_strides\" : [ 8 , 4 ] , \"dtype\" : "
      "\"float32\", \"shape\" : [2, 2], \"note\": {\"a\": [1, 2.5e3, null, true]}, "
      "\"byte_offset\" : 4, \"base\" : \"w\" } }, \"format\" : 1, \"by\": \"x\" } ";
  HurrayFile *f = forged(rec, strlen(rec), HURRAY_FILE_ACCESS_MMAP);
  HurrayError e;
  uint64_t n = 0, i = 0;
  if (hurray_file_view_count(f, &n, &e) != HURRAY_OK) fail_msg("count: %s", e.message);
  assert_int_equal(n, 1);
  assert_int_equal(hurray_file_find_view(f, "v1", 2, &i, &e), HURRAY_OK);
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_view_tensor(f, i, NULL, &t, &e), HURRAY_OK);
  assert_true(at(t, 0) == 1.0f && at(t, 1) == 2.0f && at(t, 2) == 3.0f);
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  /* no record: no views */
  const char *p = tf_path("none.hrry");
  HurrayFileWriter *w = writer(p);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  f = tf_open_as(p, HURRAY_FILE_ACCESS_READ);
  assert_int_equal(hurray_file_view_count(f, &n, &e), HURRAY_OK);
  assert_int_equal(n, 0);
  assert_int_equal(hurray_file_find_view(f, "v", 1, &i, &e), HURRAY_ERR_NOT_FOUND);
  hurray_file_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_views_written_then_read_from_every_source, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_the_writer_refuses_what_no_reader_would_take, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_forged_records_are_refused_naming_the_view_and_the_rule,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_valid_records_of_other_writers_are_read, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
