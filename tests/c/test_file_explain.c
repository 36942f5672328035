/* Errors that say what to do (docs/reference/file-format.md § When a file is not a
 * .hrry file): hurray_file_sniff names other formats, the reader's error says
 * what a file is and how to convert it, and a file that ends early says
 * where and by how much. */
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

/* A zip whose first member is `name` (a local file header, then nothing). */
static size_t zip_head(uint8_t *out, const char *name) {
  memset(out, 0, 30);
  memcpy(out, "PK\x03\x04", 4);
  size_t n = strlen(name);
  hurray__st16(out + 26, (uint16_t)n);
  memcpy(out + 30, name, n);
  return 30 + n;
}

static void test_sniff_every_kind(void **state) {
  (void)state;
  uint8_t b[128];
  assert_int_equal(hurray_file_sniff(NULL, 0, 0), HURRAY_FILE_KIND_EMPTY);
  assert_int_equal(hurray_file_sniff("HRRYFILE\x01", 9, 0), HURRAY_FILE_KIND_HRRY);
  assert_int_equal(hurray_file_sniff("HRRY\x01\x00", 6, 0), HURRAY_FILE_KIND_HRRY_STREAM);
  assert_int_equal(hurray_file_sniff("GGUF\x03\x00\x00\x00", 8, 0), HURRAY_FILE_KIND_GGUF);
  assert_int_equal(hurray_file_sniff("\x93NUMPY\x01\x00", 8, 0), HURRAY_FILE_KIND_NPY);
  assert_int_equal(hurray_file_sniff("\x80\x02}q\x00", 5, 0), HURRAY_FILE_KIND_PICKLE);
  assert_int_equal(hurray_file_sniff("\x80\x01", 2, 0), HURRAY_FILE_KIND_UNKNOWN);
  /* safetensors: u64 LE length of the JSON header, then '{' */
  memcpy(b, "\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}        ", 24);
  assert_int_equal(hurray_file_sniff(b, 24, 24), HURRAY_FILE_KIND_SAFETENSORS);
  assert_int_equal(hurray_file_sniff(b, 24, 0), HURRAY_FILE_KIND_SAFETENSORS);
  assert_int_equal(hurray_file_sniff(b, 24, 20), HURRAY_FILE_KIND_UNKNOWN); /* longer than the file */
  size_t n = zip_head(b, "arr_0.npy");
  assert_int_equal(hurray_file_sniff(b, n, 0), HURRAY_FILE_KIND_NPZ);
  n = zip_head(b, "archive/data.pkl");
  assert_int_equal(hurray_file_sniff(b, n, 0), HURRAY_FILE_KIND_TORCH_ZIP);
  assert_int_equal(hurray_file_sniff(b, 10, 0), HURRAY_FILE_KIND_ZIP); /* name not in reach */
  n = zip_head(b, "readme.txt");
  assert_int_equal(hurray_file_sniff(b, n, 0), HURRAY_FILE_KIND_ZIP);
  assert_int_equal(hurray_file_sniff("hello world", 11, 0), HURRAY_FILE_KIND_UNKNOWN);
  assert_string_equal(hurray_file_kind_name(HURRAY_FILE_KIND_SAFETENSORS), "a safetensors file");
  assert_string_equal(hurray_file_kind_name((HurrayFileKind)99), "an unknown kind of file");
}

/* Opening another format says what it is and how to convert it, from a
 * path (both access modes) and from memory, large or smaller than 104 bytes. */
static void test_open_another_format(void **state) {
  (void)state;
  uint8_t st[200];
  memset(st, ' ', sizeof st);
  hurray__st64(st, 120);
  memcpy(st + 8, "{\"__metadata__\":{}}", 19);
  struct {
    const uint8_t *p;
    size_t n;
    const char *says;
  } cases[] = {
      {st, sizeof st, "this is a safetensors file, not a .hrry file; convert it with "
                      "`hurray convert SRC DST`"},
      {(const uint8_t *)"GGUF\x03\x00\x00\x00", 8, "this is a GGUF file"},
      {(const uint8_t *)"\x93NUMPY\x01\x00v\x00{'descr': '<f4'}", 26, "a NumPy .npy file"},
      {(const uint8_t *)"\x80\x02}q\x00.", 6, "a Python pickle"},
      {(const uint8_t *)"HRRY\x01\x00\x14\x00\x00\x00", 10, "Hurray stream"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *path = tf_path("other.bin");
    tf_store(path, cases[i].p, cases[i].n);
    for (int access = 0; access < 2; access++) {
      HurrayFileOpenOptions o;
      memset(&o, 0, sizeof o);
      o.access = access ? HURRAY_FILE_ACCESS_READ : HURRAY_FILE_ACCESS_MMAP;
      HurrayFile *f = NULL;
      HurrayError e;
      assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_ERR_INVALID_FILE);
      assert_null(f);
      if (strstr(e.message, cases[i].says) == NULL) fail_msg("%zu: %s", i, e.message);
    }
    HurrayFile *f = NULL;
    HurrayError e;
    assert_int_equal(tf_open_image(cases[i].p, cases[i].n, &f, &e), HURRAY_ERR_INVALID_FILE);
    if (strstr(e.message, cases[i].says) == NULL) fail_msg("%zu (memory): %s", i, e.message);
  }
  /* empty, and unknown bytes keep the plain messages */
  const char *path = tf_path("empty.bin");
  tf_store(path, NULL, 0);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_ERR_INVALID_FILE);
  assert_non_null(strstr(e.message, "is empty (0 bytes)"));
  uint8_t junk[300];
  memset(junk, 'x', sizeof junk);
  tf_store(path, junk, sizeof junk);
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_ERR_INVALID_FILE);
  assert_non_null(strstr(e.message, "is not \"HRRYFILE\" (got \"xxxxxxxx\")"));
  tf_store(path, junk, 50);
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_ERR_INVALID_FILE);
  assert_non_null(strstr(e.message, "50 bytes is smaller than a header and a trailer"));
}

static uint8_t g_big[20000];

/* Three tensors of 20000, 3 and 20000 bytes and a KV entry. */
static void write_three(const char *path) {
  memset(g_big, 0xA5, sizeof g_big);
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  o.skip_fsync = true;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *big = tf_desc_u8(sizeof g_big), *small = tf_desc_u8(3);
  const void *b[1] = {g_big};
  assert_int_equal(hurray_file_writer_add_tensor(w, "t0", 2, big, b, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t1", 2, small, b, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t2", 2, big, b, NULL, &e), HURRAY_OK);
  HurrayKvValue v = hurray_kv_string("x", 1);
  assert_int_equal(hurray_file_writer_add_kv(w, "k", 1, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(big), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(small), HURRAY_OK);
}

/* Opens img[0, len) from a path (MMAP and READ) and from memory; each error
 * must contain `says`. */
static void expect_truncated(const uint8_t *img, size_t len, const char *says) {
  for (int how = 0; how < 3; how++) {
    HurrayFile *f = NULL;
    HurrayError e;
    HurrayStatus st = how == 2 ? tf_open_image(img, len, &f, &e)
                               : tf_open_bytes(img, len,
                                               how ? HURRAY_FILE_ACCESS_READ
                                                   : HURRAY_FILE_ACCESS_MMAP,
                                               &f, &e);
    assert_int_equal(st, HURRAY_ERR_INVALID_FILE);
    if (strstr(e.message, says) == NULL) fail_msg("len %zu (%d): %s", len, how, e.message);
    assert_string_equal(e.field, "trailer.trailer_magic");
    assert_int_equal(e.offset, len - 40 + 36);
  }
}

static void test_truncated_files_say_how_much(void **state) {
  (void)state;
  const char *path = tf_path("three.hrry");
  write_three(path);
  size_t len = 0;
  uint8_t *img = tf_load(path, &len);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(tf_open_image(img, len, &f, &e), HURRAY_OK);
  HurrayFileEntry t[3];
  for (uint64_t i = 0; i < 3; i++) assert_int_equal(hurray_file_entry(f, i, &t[i]), HURRAY_OK);
  HurrayFileInfo in;
  assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
  hurray_file_close(&f);
  char want[200];
  /* inside t2's data: the bytes missing up to its end */
  size_t cut = (size_t)t[2].data_offset + 5000;
  snprintf(want, sizeof want,
           "ends at byte %zu inside the data of tensor 2 (bytes %llu..%llu): at least %llu bytes "
           "are missing",
           cut, (unsigned long long)t[2].descriptor_offset,
           (unsigned long long)(t[2].data_offset + t[2].data_length),
           (unsigned long long)(t[2].data_offset + t[2].data_length - cut));
  expect_truncated(img, cut, want);
  /* inside t1's descriptor */
  cut = (size_t)t[1].descriptor_offset + 15;
  snprintf(want, sizeof want, "inside the descriptor of tensor 1 (bytes %llu..%llu): at least %llu",
           (unsigned long long)t[1].descriptor_offset,
           (unsigned long long)(t[1].descriptor_offset + t[1].descriptor_length),
           (unsigned long long)(t[1].descriptor_offset + t[1].descriptor_length - cut));
  expect_truncated(img, cut, want);
  /* right after the tensors: the KV, index and trailer are gone */
  cut = (size_t)(t[2].data_offset + t[2].data_length);
  expect_truncated(img, cut, "truncated after its 3 tensors");
  /* inside the index */
  cut = (size_t)in.index_offset + 20;
  snprintf(want, sizeof want, "its 3 tensors end at byte %llu and it stops at byte %zu",
           (unsigned long long)(t[2].data_offset + t[2].data_length), cut);
  expect_truncated(img, cut, want);
  /* a tail of zeros (a preallocated download) */
  uint8_t *z = malloc(len);
  memcpy(z, img, len);
  memset(z + len - 100, 0, 100);
  expect_truncated(z, len, "last 40 bytes are zeros");
  /* only the magic damaged: nothing is missing, and the message says no more */
  memcpy(z, img, len);
  z[len - 1] = 'X';
  expect_truncated(z, len, "trailer_magic at byte");
  for (int how = 0; how < 2; how++) {
    HurrayError e2;
    assert_int_equal(tf_open_bytes(z, len, how ? HURRAY_FILE_ACCESS_READ : HURRAY_FILE_ACCESS_MMAP,
                                   &f, &e2),
                     HURRAY_ERR_INVALID_FILE);
    assert_string_equal(e2.reason, "is not \"HRRY\"");
  }
  free(z);
  /* a header and nothing more */
  HurrayError e3;
  assert_int_equal(tf_open_image(img, 64, &f, &e3), HURRAY_ERR_INVALID_FILE);
  assert_non_null(strstr(e3.message, "64 bytes: a .hrry header, then the file ends: it is truncated"));
  free(img);
}

/* A .hrry file, or a safetensors file, given to the stream reader says what it is. */
static void test_stream_reader_names_files(void **state) {
  (void)state;
  const char *path = tf_path("s.hrry");
  write_three(path);
  size_t len = 0;
  uint8_t *img = tf_load(path, &len);
  uint8_t st[64];
  memset(st, ' ', sizeof st);
  hurray__st64(st, 40);
  st[8] = '{';
  const struct {
    const uint8_t *p;
    size_t n;
    const char *says;
  } cases[] = {{img, len, "this is a .hrry file container, not a stream"},
               {st, sizeof st, "this is a safetensors file, not a Hurray stream"}};
  for (size_t i = 0; i < 2; i++) {
    HurrayStreamReader *r = NULL;
    assert_int_equal(hurray_stream_reader_from_memory(cases[i].p, cases[i].n, NULL, &r),
                     HURRAY_OK);
    HurrayStreamItem *item = NULL;
    HurrayError e;
    assert_int_equal(hurray_stream_reader_next_item(r, &item, &e), HURRAY_ERR_STREAM);
    if (strstr(e.message, cases[i].says) == NULL) fail_msg("%s", e.message);
    assert_int_equal(e.offset, 0);
    hurray_stream_reader_destroy(&r);
  }
  free(img);
}

/* The system's error code behind an I/O failure, for bindings. */
static void test_error_os_code(void **state) {
  (void)state;
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(tf_path("missing.hrry"), NULL, &f, &e), HURRAY_ERR_IO);
  assert_int_equal(hurray_error_os_code(&e), ENOENT);
  HurrayFileWriter *w = NULL;
  assert_int_equal(hurray_file_writer_open(tf_path("no/such/dir/x.hrry"), NULL, &w, &e),
                   HURRAY_ERR_IO);
#ifdef _WIN32 /* GetLastError: a missing folder is ERROR_PATH_NOT_FOUND */
  assert_int_equal(hurray_error_os_code(&e), 3);
#else
  assert_int_equal(hurray_error_os_code(&e), ENOENT);
#endif
  tf_store(tf_path("junk"), (const uint8_t *)"junk", 4);
  assert_int_equal(hurray_file_open(tf_path("junk"), NULL, &f, &e), HURRAY_ERR_INVALID_FILE);
  assert_int_equal(hurray_error_os_code(&e), 0);
  assert_int_equal(hurray_error_os_code(NULL), 0);
  hurray_error_clear(&e);
  e.status = HURRAY_ERR_IO;
  snprintf(e.reason, sizeof e.reason, "reading: Permission denied (errno %d)", EACCES);
  assert_int_equal(hurray_error_os_code(&e), EACCES);
  snprintf(e.reason, sizeof e.reason, "no code (errno )");
  assert_int_equal(hurray_error_os_code(&e), 0);
  snprintf(e.reason, sizeof e.reason, "42)");
  assert_int_equal(hurray_error_os_code(&e), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sniff_every_kind),
      cmocka_unit_test_setup_teardown(test_open_another_format, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncated_files_say_how_much, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_reader_names_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_error_os_code, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
