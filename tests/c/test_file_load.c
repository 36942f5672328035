/* hurray_file_load: every name of a file (stored items in file order, then
 * the views over their bases), or the names asked for (each index entry read
 * once, views over a base read beside them), and where it fails;
 * hurray_file_check, the structure then the checksums; and hurray_file_save,
 * a file's contents written at once, and where it fails; and the helpers a
 * binding's partial reads, KV arrays and workers setting start from. */
#include "test_file_util.h"

#ifdef _WIN32 /* the C runtime's spelling of setenv/unsetenv */
#define setenv(k, v, overwrite) _putenv_s((k), (v))
#define unsetenv(k) _putenv_s((k), "")
#endif

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

static float g_w[24];
static float g_b[6];

/* "w" float32 [4, 6], "b" float32 [1, 6]; views "w.T" (a transpose) and
 * "tied" (the same tensor as "w"). */
static const char *write_file(bool checksums) {
  const char *p = tf_path(checksums ? "sums.hrry" : "plain.hrry");
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  o.data_checksums = checksums;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  if (hurray_file_writer_open(p, &o, &w, &e) != HURRAY_OK) fail_msg("open: %s", e.message);
  for (int i = 0; i < 24; i++) g_w[i] = (float)i;
  for (int i = 0; i < 6; i++) g_b[i] = (float)(100 + i);
  HurrayDescriptor *d = tf_desc_f32(4, 6);
  const void *bw[1] = {g_w};
  assert_int_equal(hurray_file_writer_add_tensor(w, "w", 1, d, bw, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  d = tf_desc_f32(1, 6);
  const void *bb[1] = {g_b};
  assert_int_equal(hurray_file_writer_add_tensor(w, "b", 1, d, bb, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  static const uint64_t shape[2] = {6, 4};
  static const int64_t strides[2] = {4, 24};
  HurrayFileView v;
  memset(&v, 0, sizeof v);
  v.name = "w.T";
  v.name_len = 3;
  v.base = "w";
  v.base_len = 1;
  v.dtype = HURRAY_DTYPE_FLOAT32;
  v.rank = 2;
  v.shape = shape;
  v.byte_strides = strides;
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_OK);
  memset(&v, 0, sizeof v);
  v.name = "tied";
  v.name_len = 4;
  v.base = "w";
  v.base_len = 1;
  v.same = true;
  assert_int_equal(hurray_file_writer_add_view(w, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  return p;
}

static bool named(const HurrayFileLoadItem *x, const char *name) {
  return x->name_len == strlen(name) && memcmp(x->name, name, x->name_len) == 0;
}

static void test_a_whole_load_gives_the_stored_items_then_the_views(void **state) {
  (void)state;
  HurrayFile *f = tf_open_as(write_file(true), HURRAY_FILE_ACCESS_READ);
  HurrayFileLoad *L = NULL;
  HurrayFileLoadFailure fail;
  HurrayError e;
  if (hurray_file_load(f, NULL, NULL, 0, HURRAY_FILE_LOAD_VERIFY, &L, &fail, &e) != HURRAY_OK)
    fail_msg("load: %s", e.message);
  assert_int_equal(L->count, 4);
  assert_true(named(&L->items[0], "w") && named(&L->items[1], "b"));
  assert_true(named(&L->items[2], "w.T") && named(&L->items[3], "tied"));
  assert_non_null(L->items[0].tensor);
  assert_int_equal(L->items[0].same_as, UINT64_MAX);
  assert_int_equal(L->items[2].view, 0);
  assert_non_null(L->items[2].tensor);
  assert_int_equal(L->items[2].index, 0);
  assert_int_equal(L->items[3].view, -1);
  assert_int_equal(L->items[3].same_as, 0); /* the same tensor as "w" */
  assert_null(L->items[3].tensor);
  hurray_file_load_destroy(&L);
  assert_null(L);
  /* the stored items only */
  assert_int_equal(hurray_file_load(f, NULL, NULL, 0, HURRAY_FILE_LOAD_STORED, &L, NULL, &e),
                   HURRAY_OK);
  assert_int_equal(L->count, 2);
  hurray_file_load_destroy(&L);
  hurray_file_load_destroy(NULL);
  hurray_file_close(&f);
}

static void test_names_are_resolved_first_and_each_entry_read_once(void **state) {
  (void)state;
  HurrayFile *f = tf_open_as(write_file(false), HURRAY_FILE_ACCESS_READ);
  const char *names[4] = {"w.T", "b", "tied", "w"};
  size_t lens[4] = {3, 1, 4, 1};
  HurrayFileLoad *L = NULL;
  HurrayFileLoadFailure fail;
  HurrayError e;
  if (hurray_file_load(f, names, lens, 4, 0, &L, &fail, &e) != HURRAY_OK)
    fail_msg("load: %s", e.message);
  assert_int_equal(L->count, 4);
  assert_int_equal(L->items[0].view, 0);
  assert_non_null(L->items[0].tensor);
  assert_int_equal(L->items[2].index, 0); /* "tied" reads its base */
  assert_int_equal(L->items[2].same_as, UINT64_MAX);
  assert_int_equal(L->items[3].same_as, 2); /* "w": the entry "tied" read */
  assert_null(L->items[3].tensor);
  hurray_file_load_destroy(&L);
  /* none asked for: nothing read */
  assert_int_equal(hurray_file_load(f, names, lens, 0, 0, &L, &fail, &e), HURRAY_OK);
  assert_int_equal(L->count, 0);
  hurray_file_load_destroy(&L);
  /* a missing name: nothing read, the name's position reported */
  const char *bad[2] = {"b", "nope"};
  size_t blens[2] = {1, 4};
  assert_int_equal(hurray_file_load(f, bad, blens, 2, 0, &L, &fail, &e), HURRAY_ERR_NOT_FOUND);
  assert_null(L);
  assert_int_equal(fail.stage, HURRAY_FILE_LOAD_AT_NAME);
  assert_int_equal(fail.at, 1);
  assert_int_equal(hurray_file_load(NULL, bad, blens, 2, 0, &L, &fail, &e),
                   HURRAY_ERR_NULL_POINTER);
  hurray_file_close(&f);
}

static void test_check_finds_damaged_data_and_load_names_it(void **state) {
  (void)state;
  const char *p = write_file(true);
  HurrayFile *f = tf_open_as(p, HURRAY_FILE_ACCESS_READ);
  HurrayFileDataReport rep;
  bool sums = false;
  HurrayError e;
  if (hurray_file_check(f, &rep, &sums, &e) != HURRAY_OK) fail_msg("check: %s", e.message);
  assert_true(sums);
  assert_int_equal(rep.tensors, 2);
  hurray_file_close(&f);
  /* without checksums: the structure alone */
  f = tf_open_as(write_file(false), HURRAY_FILE_ACCESS_READ);
  assert_int_equal(hurray_file_check(f, &rep, &sums, &e), HURRAY_OK);
  assert_false(sums);
  hurray_file_close(&f);
  /* one byte of "b"'s data flipped: check and a verified load fail */
  size_t len = 0;
  uint8_t *bytes = tf_load(p, &len);
  f = tf_open_as(p, HURRAY_FILE_ACCESS_READ);
  HurrayFileEntry entry;
  assert_int_equal(hurray_file_entry(f, 1, &entry), HURRAY_OK);
  hurray_file_close(&f);
  bytes[entry.data_offset] ^= 0x55;
  tf_store(p, bytes, len);
  free(bytes);
  f = tf_open_as(p, HURRAY_FILE_ACCESS_READ);
  assert_int_equal(hurray_file_check(f, NULL, NULL, &e), HURRAY_ERR_CRC_MISMATCH);
  HurrayFileLoad *L = NULL;
  HurrayFileLoadFailure fail;
  assert_int_equal(hurray_file_load(f, NULL, NULL, 0, HURRAY_FILE_LOAD_VERIFY, &L, &fail, &e),
                   HURRAY_ERR_CRC_MISMATCH);
  assert_int_equal(fail.stage, HURRAY_FILE_LOAD_AT_FILE);
  assert_non_null(strstr(e.message, "\"b\""));
  /* unverified, the damage is not looked for */
  assert_int_equal(hurray_file_load(f, NULL, NULL, 0, 0, &L, &fail, &e), HURRAY_OK);
  hurray_file_load_destroy(&L);
  hurray_file_close(&f);
}

static void test_save_writes_every_item_view_and_entry_or_names_the_failure(void **state) {
  (void)state;
  for (int i = 0; i < 24; i++) g_w[i] = (float)i;
  HurrayDescriptor *d = tf_desc_f32(4, 6);
  const void *bw[1] = {g_w};
  HurrayFileCompositeNode items[2];
  memset(items, 0, sizeof items);
  items[0].name = "w";
  items[0].name_len = 1;
  items[0].descriptor = d;
  items[0].buffers = bw;
  items[1] = items[0];
  items[1].name = "v";
  HurrayFileView view;
  memset(&view, 0, sizeof view);
  view.name = "tied";
  view.name_len = 4;
  view.base = "w";
  view.base_len = 1;
  view.same = true;
  const char *keys[1] = {"k"};
  size_t klens[1] = {1};
  HurrayKvValue vals[1] = {hurray_kv_int64(7)};
  HurrayFileContents c;
  memset(&c, 0, sizeof c);
  c.items = items;
  c.item_count = 2;
  c.views = &view;
  c.view_count = 1;
  c.kv_keys = keys;
  c.kv_key_lens = klens;
  c.kv_values = vals;
  c.kv_count = 1;
  HurrayFileSaveFailure fail;
  HurrayError e;
  const char *p = tf_path("saved.hrry");
  if (hurray_file_save(p, NULL, &c, NULL, NULL, &fail, &e) != HURRAY_OK)
    fail_msg("save: %s", e.message);
  HurrayFile *f = tf_open_as(p, HURRAY_FILE_ACCESS_READ);
  assert_int_equal(hurray_file_tensor_count(f), 2);
  uint64_t n = 0;
  assert_int_equal(hurray_file_view_count(f, &n, &e), HURRAY_OK);
  assert_int_equal(n, 1);
  const HurrayKvValue *kv = NULL;
  assert_int_equal(hurray_file_kv_find(f, "k", 1, &kv), HURRAY_OK);
  assert_int_equal(kv->v.i64, 7);
  hurray_file_close(&f);
  /* into memory: the same file */
  void *image = NULL;
  uint64_t size = 0;
  assert_int_equal(hurray_file_save(NULL, NULL, &c, &image, &size, &fail, &e), HURRAY_OK);
  assert_true(size > 0);
  hurray_free(image);
  /* a duplicate name: the item named, nothing left behind */
  items[1].name = "w";
  assert_int_equal(hurray_file_save(tf_path("dup.hrry"), NULL, &c, NULL, NULL, &fail, &e),
                   HURRAY_ERR_DUPLICATE_NAME);
  assert_int_equal(fail.stage, HURRAY_FILE_SAVE_AT_TENSOR);
  assert_int_equal(fail.at, 1);
  items[1].name = "v";
  /* a view of no tensor written: the view named */
  view.base = "x";
  assert_int_equal(hurray_file_save(NULL, NULL, &c, &image, &size, &fail, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(fail.stage, HURRAY_FILE_SAVE_AT_VIEW);
  assert_null(image);
  assert_int_equal(hurray_file_save(NULL, NULL, &c, NULL, NULL, &fail, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_the_workers_variable_is_read_or_refused(void **state) {
  (void)state;
  uint32_t n = 99;
  HurrayError e;
  assert_int_equal(setenv("HURRAY_WORKERS", "3", 1), 0);
  assert_int_equal(hurray_file_workers_env(&n, &e), HURRAY_OK);
  assert_int_equal(n, 3);
  assert_int_equal(setenv("HURRAY_WORKERS", "65", 1), 0);
  assert_int_equal(hurray_file_workers_env(&n, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(n, 0);
  assert_non_null(strstr(e.message, "HURRAY_WORKERS is '65'"));
  assert_int_equal(unsetenv("HURRAY_WORKERS"), 0);
  assert_int_equal(hurray_file_workers_env(&n, &e), HURRAY_OK);
  assert_int_equal(n, 0);
  assert_int_equal(hurray_file_workers_env(NULL, &e), HURRAY_ERR_NULL_POINTER);
}

static void test_kv_arrays_are_packed_from_scalar_values(void **state) {
  (void)state;
  HurrayKvValue elems[3] = {hurray_kv_string("a", 1), hurray_kv_string("bc", 2),
                            hurray_kv_string(NULL, 0)};
  HurrayKvValue storage[3], out;
  HurrayError e;
  assert_int_equal(hurray_kv_array_pack(HURRAY_KV_STRING, elems, 3, storage, &out, &e), HURRAY_OK);
  assert_int_equal(out.tag, HURRAY_KV_ARRAY);
  assert_int_equal(out.elem_tag, HURRAY_KV_STRING);
  assert_int_equal(out.count, 3);
  assert_int_equal(out.v.str_array[1].len, 2);
  HurrayKvValue ints[2] = {hurray_kv_int64(-5), hurray_kv_int64(9)};
  assert_int_equal(hurray_kv_array_pack(HURRAY_KV_INT64, ints, 2, storage, &out, &e), HURRAY_OK);
  assert_int_equal(out.v.i64_array[0], -5);
  assert_int_equal(out.v.i64_array[1], 9);
  assert_int_equal(hurray_kv_array_pack(HURRAY_KV_BOOL, NULL, 0, NULL, &out, &e), HURRAY_OK);
  assert_int_equal(out.count, 0);
  ints[1] = hurray_kv_float64(1.5);
  assert_int_equal(hurray_kv_array_pack(HURRAY_KV_INT64, ints, 2, storage, &out, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "element 1"));
  assert_int_equal(hurray_kv_array_pack(HURRAY_KV_ARRAY, ints, 1, storage, &out, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

static void test_a_name_gives_its_descriptor_and_whether_it_can_be_sliced(void **state) {
  (void)state;
  HurrayFile *f = tf_open_as(write_file(false), HURRAY_FILE_ACCESS_READ);
  uint64_t index = 99;
  bool is_view = true;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_find_descriptor(f, "b", 1, &index, &is_view, &d, &e), HURRAY_OK);
  assert_int_equal(index, 1);
  assert_false(is_view);
  HurrayDescriptorFields df;
  assert_int_equal(hurray_descriptor_fields(d, &df), HURRAY_OK);
  assert_int_equal(hurray_file_slice_check(&df, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(hurray_file_find_descriptor(f, "w.T", 3, &index, &is_view, &d, &e), HURRAY_OK);
  assert_int_equal(index, 0);
  assert_true(is_view);
  assert_int_equal(hurray_descriptor_fields(d, &df), HURRAY_OK);
  assert_int_equal(df.layout.tag, HURRAY_LAYOUT_STRIDED);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(hurray_file_find_descriptor(f, "nope", 4, &index, &is_view, &d, &e),
                   HURRAY_ERR_NOT_FOUND);
  assert_null(d);
  /* every name: the stored ones in file order, then the views */
  uint64_t n = 0;
  assert_int_equal(hurray_file_name_count(f, &n, &e), HURRAY_OK);
  assert_int_equal(n, 4);
  const char *expect[4] = {"w", "b", "w.T", "tied"};
  for (uint64_t i = 0; i < n; i++) {
    const char *name = NULL;
    size_t len = 0;
    assert_int_equal(hurray_file_name(f, i, &name, &len, &e), HURRAY_OK);
    assert_int_equal(len, strlen(expect[i]));
    assert_memory_equal(name, expect[i], len);
  }
  const char *name = NULL;
  size_t len = 0;
  assert_int_equal(hurray_file_name(f, 4, &name, &len, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  hurray_file_close(&f);
  /* a sparse layout and a composite head are refused, saying why */
  memset(&df, 0, sizeof df);
  df.layout.tag = HURRAY_LAYOUT_COMPOSITE;
  assert_int_equal(hurray_file_slice_check(&df, &e), HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "is a composite"));
  df.layout.tag = HURRAY_LAYOUT_CSR;
  assert_int_equal(hurray_file_slice_check(&df, &e), HURRAY_ERR_UNSUPPORTED);
  assert_non_null(strstr(e.reason, "csr layout"));
  assert_int_equal(hurray_file_slice_check(NULL, &e), HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_a_whole_load_gives_the_stored_items_then_the_views,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_names_are_resolved_first_and_each_entry_read_once,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_check_finds_damaged_data_and_load_names_it, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          test_save_writes_every_item_view_and_entry_or_names_the_failure, setup, teardown),
      cmocka_unit_test(test_the_workers_variable_is_read_or_refused),
      cmocka_unit_test(test_kv_arrays_are_packed_from_scalar_values),
      cmocka_unit_test_setup_teardown(test_a_name_gives_its_descriptor_and_whether_it_can_be_sliced,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
