/* The writer: the bytes it lays down (docs/internals/decisions.md § File format), its
 * argument checks, and crash safety (temporary file + rename). */
#include <signal.h>
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <sys/resource.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/vfs.h>
#endif
#endif

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

static HurrayFileWriter *wopen(const char *path, uint32_t align, bool sorted) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {align, sorted, true, false};
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  return w;
}

static void add(HurrayFileWriter *w, const char *name, const HurrayDescriptor *d,
                const void *data) {
  HurrayError e;
  const void *bufs[1] = {data};
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_data_bytes(d, &n), HURRAY_OK);
  HurrayStatus st = hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, &n, &e);
  if (st != HURRAY_OK) fail_msg("add %s: %s", name, e.message);
}

static void finish(HurrayFileWriter **w) {
  HurrayError e;
  HurrayStatus st = hurray_file_writer_finish(*w, &e);
  if (st != HURRAY_OK) fail_msg("finish: %s", e.message);
  hurray_file_writer_destroy(w);
}

static bool zeros(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

/* ---- the layout --------------------------------------------------------------------- */

static void test_layout_is_spec_literal(void **state) {
  (void)state;
  const char *path = tf_path("two.hrry");
  HurrayDescriptor *w32 = tf_desc_f32(2, 2);
  HurrayDescriptor *b8 = tf_desc_u8(3);
  float wdata[4] = {1, 2, 3, 4};
  uint8_t bdata[3] = {7, 8, 9};
  HurrayFileWriter *w = wopen(path, 0, false);
  add(w, "weights", w32, wdata);
  add(w, "bias", b8, bdata);
  assert_int_equal(hurray_file_writer_tensor_count(w), 2);
  HurrayKvValue v = hurray_kv_string("me", 2);
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_kv(w, "producer", 8, &v, &e), HURRAY_OK);
  finish(&w);

  size_t len;
  uint8_t *p = tf_load(path, &len);
  uint64_t d0len = 0, d1len = 0;
  free(tf_encode(w32, &d0len));
  free(tf_encode(b8, &d1len));
  /* Header. */
  assert_memory_equal(p, "HRRYFILE", 8);
  assert_int_equal(p[8], 1);
  assert_int_equal(p[9], 0);
  assert_int_equal(hurray__ld32(p + 12), HURRAY_FILE_FLAG_HAS_KV_METADATA |
                                             HURRAY_FILE_FLAG_HAS_INDEX_CRC32C);
  assert_int_equal(hurray__ld32(p + 16), 4096);
  assert_int_equal(hurray__ld64(p + 20), 64);
  assert_int_equal(hurray__ld64(p + 28), 2); /* the count is known: header written last */
  assert_true(zeros(p + 36, 28) && p[10] == 0 && p[11] == 0);
  /* weights: descriptor at 64, data at 4096, padded to 8192 after the last buffer. */
  assert_memory_equal(p + 64, "HRRY", 4);
  assert_true(zeros(p + 64 + d0len, 4096 - 64 - d0len));
  assert_memory_equal(p + 4096, wdata, 16);
  assert_true(zeros(p + 4096 + 16, 4096 - 16));
  /* bias: descriptor at 8192 (not 4112 as the reference writes), data at 12288. */
  assert_memory_equal(p + 8192, "HRRY", 4);
  assert_true(zeros(p + 8192 + d1len, 4096 - d1len));
  assert_memory_equal(p + 12288, bdata, 3);
  /* KV right after the padded last buffer, then the index, then the trailer. */
  const uint8_t *t = p + len - 40;
  uint64_t kv_off = hurray__ld64(t + 16);
  assert_int_equal(kv_off, 16384);
  assert_true(zeros(p + 12288 + 3, 4096 - 3));
  assert_int_equal(hurray__ld32(t + 24), 4 + 2 + 8 + 1 + 4 + 2);
  uint64_t ix = hurray__ld64(t);
  assert_int_equal(ix, (kv_off + 21 + 7) & ~7ull);
  assert_int_equal(hurray__ld64(t + 8), 8 + (34 + 7) + (34 + 4));
  assert_int_equal(ix + hurray__ld64(t + 8) + 40, len);
  assert_int_equal(hurray__ld32(t + 28), hurray_crc32c(0, p + ix, (size_t)hurray__ld64(t + 8)));
  assert_true(zeros(t + 32, 4));
  assert_memory_equal(t + 36, "HRRY", 4);
  /* Index entries: offsets and lengths. */
  const uint8_t *q = tf_index_entry(p, len, 0);
  assert_int_equal(hurray__ld64(q), 64);
  assert_int_equal(hurray__ld32(q + 8), d0len);
  assert_int_equal(hurray__ld64(q + 12), 4096);
  assert_int_equal(hurray__ld64(q + 20), 16); /* buffers only, no trailing padding */
  assert_int_equal(hurray__ld32(q + 28), 0);
  q = tf_index_entry(p, len, 1);
  assert_int_equal(hurray__ld64(q), 8192);
  assert_int_equal(hurray__ld64(q + 12), 12288);
  assert_int_equal(hurray__ld64(q + 20), 3);
  free(p);

  /* No KV: HAS_KV_METADATA stays clear and the KV fields are 0. */
  const char *p2 = tf_path("nokv.hrry");
  w = wopen(p2, 0, false);
  add(w, "bias", b8, bdata);
  finish(&w);
  p = tf_load(p2, &len);
  assert_int_equal(hurray__ld32(p + 12), HURRAY_FILE_FLAG_HAS_INDEX_CRC32C);
  assert_int_equal(hurray__ld64(p + len - 40 + 16), 0);
  assert_int_equal(hurray__ld32(p + len - 40 + 24), 0);
  assert_int_equal(hurray__ld64(p + len - 40), 8192); /* index after the padded buffer */
  free(p);
  assert_int_equal(hurray_descriptor_destroy(w32), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(b8), HURRAY_OK);
}

static void test_empty_file_and_empty_tensors(void **state) {
  (void)state;
  /* A file with no tensor and no KV. */
  const char *path = tf_path("empty.hrry");
  HurrayFileWriter *w = wopen(path, 0, false);
  finish(&w);
  size_t len;
  uint8_t *p = tf_load(path, &len);
  assert_int_equal(len, 64 + 8 + 40);
  free(p);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_tensor_count(f), 0);
  assert_int_equal(hurray_file_kv_count(f), 0);
  hurray_file_close(&f);

  /* Empty tensors: a zero-byte buffer still sits at an aligned offset. */
  path = tf_path("empties.hrry");
  HurrayDescriptor *z = tf_desc_u8(0);
  uint64_t dims[2] = {0, 5};
  HurrayDescriptor *z2 = tf_desc_align(HURRAY_DTYPE_FLOAT32, 2, dims, 0, 1);
  HurrayDescriptor *one = tf_desc_u8(1);
  w = wopen(path, 0, false);
  HurrayError err;
  assert_int_equal(hurray_file_writer_add_tensor(w, "z", 1, z, NULL, NULL, &err), HURRAY_OK);
  const void *nulls[1] = {NULL};
  assert_int_equal(hurray_file_writer_add_tensor(w, "z2", 2, z2, nulls, NULL, &err), HURRAY_OK);
  uint8_t x = 42;
  add(w, "one", one, &x);
  finish(&w);
  p = tf_load(path, &len);
  const uint8_t *q = tf_index_entry(p, len, 0);
  assert_int_equal(hurray__ld64(q), 64);
  assert_int_equal(hurray__ld64(q + 12), 4096);
  assert_int_equal(hurray__ld64(q + 20), 0);
  q = tf_index_entry(p, len, 1);
  assert_int_equal(hurray__ld64(q), 4096); /* right at the empty buffer's aligned offset */
  assert_int_equal(hurray__ld64(q + 12), 8192);
  q = tf_index_entry(p, len, 2);
  assert_int_equal(hurray__ld64(q), 8192);
  assert_int_equal(hurray__ld64(q + 12), 12288);
  free(p);
  for (int mode = 0; mode < 2; mode++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
    for (uint64_t i = 0; i < 3; i++) {
      HurrayFileTensor *t = NULL;
      assert_int_equal(hurray_file_tensor(f, i, &t, &e), HURRAY_OK);
      const void *data;
      uint64_t size;
      assert_int_equal(hurray_file_tensor_buffer(t, 0, &data, &size), HURRAY_OK);
      if (i < 2) {
        assert_int_equal(size, 0);
        assert_null(data);
      } else {
        assert_int_equal(size, 1);
        assert_int_equal(*(const uint8_t *)data, 42);
      }
      hurray_file_tensor_release(&t);
    }
    hurray_file_close(&f);
  }
  assert_int_equal(hurray_descriptor_destroy(z), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(z2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(one), HURRAY_OK);
}

static void test_alignment_option(void **state) {
  (void)state;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  static const uint32_t bad[] = {1, 64, 2048, 4095, 4097, 6144, 4u << 20, 0x80000000u};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    HurrayFileWriterOptions o = {bad[i], false, true, false};
    assert_int_equal(hurray_file_writer_open(tf_path("a.hrry"), &o, &w, &e),
                     HURRAY_ERR_INVALID_ARGUMENT);
    assert_null(w);
    assert_string_equal(e.field, "options.data_alignment");
  }
  assert_int_equal(tf_dir_entries(), 0); /* no temporary file left behind */

  /* 2 MiB: offsets in the file and addresses in the mapping both aligned. */
  const char *path = tf_path("huge.hrry");
  w = wopen(path, 2u << 20, false);
  HurrayDescriptor *d = tf_desc_align(HURRAY_DTYPE_UINT8, 1, (uint64_t[]){100}, 100, 2u << 20);
  HurrayDescriptor *d64 = tf_desc_u8(10);
  uint8_t data[100];
  for (int i = 0; i < 100; i++) data[i] = (uint8_t)i;
  add(w, "a", d, data);
  add(w, "b", d64, data);
  finish(&w);
  size_t len;
  uint8_t *p = tf_load(path, &len);
  assert_int_equal(hurray__ld32(p + 16), 2u << 20);
  assert_int_equal(hurray__ld64(tf_index_entry(p, len, 0) + 12), 2u << 20);
  assert_int_equal(hurray__ld64(tf_index_entry(p, len, 1)), 4u << 20);
  assert_int_equal(hurray__ld64(tf_index_entry(p, len, 1) + 12), 6u << 20);
  free(p);
  for (int mode = 0; mode < 2; mode++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    HurrayFile *f = NULL;
    assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_tensor(f, 0, &t, &e), HURRAY_OK);
    const void *q;
    uint64_t n;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, &n), HURRAY_OK);
    assert_int_equal(((uintptr_t)q) % (2u << 20), 0);
    assert_memory_equal(q, data, 100);
    hurray_file_tensor_release(&t);
    hurray_file_close(&f);
  }
  /* A buffer declaring more alignment than the file provides is refused. */
  w = wopen(tf_path("small.hrry"), 4096, false);
  const void *bufs[1] = {data};
  assert_int_equal(hurray_file_writer_add_tensor(w, "a", 1, d, bufs, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "buffers[0]");
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d64), HURRAY_OK);
}

static void test_sorted_index(void **state) {
  (void)state;
  const char *path = tf_path("sorted.hrry");
  HurrayFileWriter *w = wopen(path, 0, true);
  HurrayDescriptor *d = tf_desc_u8(4);
  static const char *names[] = {"zeta", "alpha", "Beta", "\xC3\xA9t\xC3\xA9", "alpha2", "a"};
  uint8_t data[4] = {0};
  for (int i = 0; i < 6; i++) {
    data[0] = (uint8_t)i;
    add(w, names[i], d, data);
  }
  finish(&w);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  HurrayFileInfo info;
  assert_int_equal(hurray_file_info(f, &info), HURRAY_OK);
  assert_true(info.flags & HURRAY_FILE_FLAG_SORTED_INDEX);
  /* Index order is byte order of the names. */
  static const char *want[] = {"Beta", "a", "alpha", "alpha2", "zeta", "\xC3\xA9t\xC3\xA9"};
  for (uint64_t i = 0; i < 6; i++) {
    HurrayFileEntry en;
    assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
    assert_int_equal(en.name_len, strlen(want[i]));
    assert_memory_equal(en.name, want[i], en.name_len);
  }
  /* File order is still write order. */
  for (uint64_t pos = 0; pos < 6; pos++) {
    uint64_t idx;
    assert_int_equal(hurray_file_position(f, pos, &idx), HURRAY_OK);
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_tensor(f, idx, &t, &e), HURRAY_OK);
    size_t nl;
    const char *nm = hurray_file_tensor_name(t, &nl);
    assert_string_equal(nm, names[pos]);
    const void *q;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, NULL), HURRAY_OK);
    assert_int_equal(((const uint8_t *)q)[0], pos);
    hurray_file_tensor_release(&t);
  }
  /* Binary search finds every name, and nothing else. */
  for (int i = 0; i < 6; i++) {
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, names[i], strlen(names[i]), &idx), HURRAY_OK);
    HurrayFileEntry en;
    assert_int_equal(hurray_file_entry(f, idx, &en), HURRAY_OK);
    assert_memory_equal(en.name, names[i], en.name_len);
  }
  uint64_t idx;
  assert_int_equal(hurray_file_find(f, "alph", 4, &idx), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_find(f, "zz", 2, &idx), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_find(f, "", 0, &idx), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_position(f, 6, &idx), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  hurray_file_close(&f);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* ---- argument checks ---------------------------------------------------------------- */

static void test_add_tensor_rejects(void **state) {
  (void)state;
  const char *path = tf_path("r.hrry");
  HurrayFileWriter *w = wopen(path, 0, false);
  HurrayDescriptor *d = tf_desc_u8(4);
  uint8_t data[4] = {1, 2, 3, 4};
  const void *bufs[1] = {data};
  uint64_t ok_size = 4, bad_size = 5;
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_tensor(w, "", 0, d, bufs, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_tensor(w, NULL, 1, d, bufs, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_writer_add_tensor(w, "\xFF\xFE", 2, d, bufs, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_tensor(w, "\xF4\x90\x80\x80", 4, d, bufs, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT); /* above U+10FFFF */
  char *long_name = malloc(65536);
  memset(long_name, 'n', 65536);
  assert_int_equal(hurray_file_writer_add_tensor(w, long_name, 65536, d, bufs, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, NULL, bufs, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, bufs, &bad_size, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "buffers[0]");
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, NULL, &ok_size, &e),
                   HURRAY_ERR_NULL_POINTER);
  const void *nulls[1] = {NULL};
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, nulls, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  /* Nothing was written by the refusals: the first real tensor sits at 64. */
  assert_int_equal(hurray_file_writer_add_tensor(w, long_name, 65535, d, bufs, &ok_size, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, bufs, &ok_size, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, bufs, &ok_size, &e),
                   HURRAY_ERR_DUPLICATE_NAME);
  assert_int_equal(hurray_file_writer_add_tensor(w, "T", 1, d, bufs, &ok_size, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_tensor_count(w), 3);
  finish(&w);
  size_t len;
  uint8_t *p = tf_load(path, &len);
  assert_int_equal(hurray__ld64(tf_index_entry(p, len, 0)), 64);
  free(p);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  uint64_t idx;
  assert_int_equal(hurray_file_find(f, long_name, 65535, &idx), HURRAY_OK);
  assert_int_equal(idx, 0);
  hurray_file_close(&f);
  free(long_name);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* NULL writer / after finish. */
  assert_int_equal(hurray_file_writer_add_tensor(NULL, "t", 1, d, bufs, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  w = wopen(path, 0, false);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  d = tf_desc_u8(4);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, bufs, NULL, &e),
                   HURRAY_ERR_INVALID_STATE);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_ERR_INVALID_STATE);
  HurrayKvValue v = hurray_kv_bool(true);
  assert_int_equal(hurray_file_writer_add_kv(w, "k", 1, &v, &e), HURRAY_ERR_INVALID_STATE);
  hurray_file_writer_destroy(&w);
  assert_null(w);
  hurray_file_writer_destroy(&w); /* NULL-safe */
  hurray_file_writer_destroy(NULL);
  hurray_file_writer_abort(NULL);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_open_rejects(void **state) {
  (void)state;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(NULL, NULL, &w, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_writer_open("x", NULL, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_writer_open(tf_dir, NULL, &w, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_open(tf_path(""), NULL, &w, &e),
                   HURRAY_ERR_INVALID_ARGUMENT); /* ends in '/' */
  assert_int_equal(hurray_file_writer_open(tf_path(".."), NULL, &w, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_open("/nonexistent-dir-hurray/x.hrry", NULL, &w, &e),
                   HURRAY_ERR_IO);
  assert_null(w);
  assert_int_equal(tf_dir_entries(), 0);
}

/* ---- crash safety -------------------------------------------------------------------- */

/* Writes a small file with one tensor "old" holding `v`. */
/* A durable save (fsync on) sends its bytes to the disk in 8 MiB windows as it
 * writes (write-behind): a tensor larger than several windows, and many small
 * ones whose windows end inside them, must still land byte for byte. */
static void test_durable_write_behind_windows(void **state) {
  (void)state;
  const char *path = tf_path("durable.hrry");
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, false, false}; /* durable */
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  const uint64_t big_n = ((uint64_t)20 << 20) + 5;
  uint8_t *big = malloc((size_t)big_n);
  assert_non_null(big);
  for (uint64_t i = 0; i < big_n; i++) big[i] = (uint8_t)(i * 131u + (i >> 20));
  HurrayDescriptor *bd = tf_desc_u8(big_n);
  add(w, "big", bd, big);
  enum { SMALL = 300, SMALL_N = 33 * 1024 + 7 };
  uint8_t *small = malloc(SMALL_N);
  assert_non_null(small);
  HurrayDescriptor *sd = tf_desc_u8(SMALL_N);
  for (int k = 0; k < SMALL; k++) {
    char name[16];
    snprintf(name, sizeof name, "s%03d", k);
    memset(small, k & 0xff, SMALL_N);
    small[0] = (uint8_t)(k >> 8);
    add(w, name, sd, small);
  }
  finish(&w);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_tensor_count(f), SMALL + 1);
  for (uint64_t i = 0; i <= SMALL; i++) {
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_tensor(f, i, &t, &e), HURRAY_OK);
    const void *data;
    uint64_t size;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &data, &size), HURRAY_OK);
    if (i == 0) {
      assert_int_equal(size, big_n);
      assert_memory_equal(data, big, (size_t)big_n);
    } else {
      int k = (int)i - 1;
      memset(small, k & 0xff, SMALL_N);
      small[0] = (uint8_t)(k >> 8);
      assert_int_equal(size, SMALL_N);
      assert_memory_equal(data, small, SMALL_N);
    }
    hurray_file_tensor_release(&t);
  }
  hurray_file_close(&f);
  assert_int_equal(tf_dir_entries(), 1); /* no temporary file left */
  assert_int_equal(hurray_descriptor_destroy(bd), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(sd), HURRAY_OK);
  free(big);
  free(small);
}

static void write_old(const char *path, uint8_t v) {
  HurrayFileWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, NULL, &w, &e), HURRAY_OK); /* with fsync */
  HurrayDescriptor *d = tf_desc_u8(8);
  uint8_t data[8];
  memset(data, v, 8);
  add(w, "old", d, data);
  finish(&w);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void expect_old(const char *path, uint8_t v) {
  HurrayFile *f = NULL;
  HurrayError e;
  HurrayStatus st = hurray_file_open(path, NULL, &f, &e);
  if (st != HURRAY_OK) fail_msg("%s", e.message);
  assert_int_equal(hurray_file_tensor_count(f), 1);
  uint64_t idx;
  assert_int_equal(hurray_file_find(f, "old", 3, &idx), HURRAY_OK);
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, idx, &t, &e), HURRAY_OK);
  const void *q;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, NULL), HURRAY_OK);
  assert_int_equal(((const uint8_t *)q)[7], v);
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
}

/* Whether the scratch directory takes files without a name (Linux
 * O_TMPFILE), asked of the system directly. */
static bool dir_has_unnamed_files(void) {
#if defined(__linux__) && defined(O_TMPFILE)
  int fd = open(tf_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
#else
  return false;
#endif
}

/* The temporary file of a writer: none under any name on Linux (the file
 * has none until finish), ".<name>.tmp-XXXXXX" with the named fallback. */
static void check_untouched_until_finish(bool named) {
  const char *path = tf_path("model.hrry");
  write_old(path, 1);
  expect_old(path, 1);
  assert_int_equal(tf_dir_entries(), 1);
  /* While a new version is written, the old one stays in place. */
  hurray__file_writer_test_named_temp(named);
  HurrayFileWriter *w = wopen(path, 0, false);
  const bool unnamed = hurray__file_writer_unnamed(w);
  assert_int_equal(unnamed, !named && dir_has_unnamed_files());
  HurrayDescriptor *d = tf_desc_u8(8);
  uint8_t data[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  add(w, "old", d, data);
  assert_int_equal(tf_dir_entries(), unnamed ? 1 : 2); /* the temporary file */
  expect_old(path, 1);
  /* Abort: old file intact, temporary removed. */
  hurray_file_writer_abort(w);
  assert_int_equal(tf_dir_entries(), 1);
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_tensor(w, "x", 1, d, (const void *[]){data}, NULL, &e),
                   HURRAY_ERR_INVALID_STATE);
  hurray_file_writer_destroy(&w);
  expect_old(path, 1);
  /* Destroy without finish: same. */
  w = wopen(path, 0, false);
  add(w, "old", d, data);
  hurray_file_writer_destroy(&w);
  assert_int_equal(tf_dir_entries(), 1);
  expect_old(path, 1);
  /* Finish replaces it. */
  w = wopen(path, 0, false);
  add(w, "old", d, data);
  finish(&w);
  assert_int_equal(tf_dir_entries(), 1);
  expect_old(path, 2);
  /* And again with fsync (the durable path names the file after syncing it). */
  HurrayFileWriterOptions o = {0, false, false, false};
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  data[7] = 3;
  add(w, "old", d, data);
  finish(&w);
  assert_int_equal(tf_dir_entries(), 1);
  expect_old(path, 3);
  hurray__file_writer_test_named_temp(false);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_target_untouched_until_finish(void **state) {
  (void)state;
  check_untouched_until_finish(false);
  tf_rmdir();
  tf_mkdir();
  check_untouched_until_finish(true);
}

#if defined(_WIN32)
/* The writer process of test_torn_write_sigkill (this executable run with
 * --torn-writer-child PATH): writes a bigger file slowly, one byte on stdout
 * per tensor, until it is killed. */
static int torn_writer_child(const char *path) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, false, false};
  if (hurray_file_writer_open(path, &o, &w, NULL) != HURRAY_OK) return 2;
  HurrayDescriptor *d = tf_desc_u8(100000);
  uint8_t *data = calloc(1, 100000);
  HANDLE out = GetStdHandle(STD_OUTPUT_HANDLE);
  for (int i = 0;; i++) {
    char name[32];
    snprintf(name, sizeof name, "t%d", i);
    const void *bufs[1] = {data};
    if (hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, NULL, NULL) != HURRAY_OK)
      return 3;
    DWORD n = 0;
    if (!WriteFile(out, "x", 1, &n, NULL) || n != 1) return 4;
    Sleep(2);
  }
}

/* Windows has no fork and no SIGKILL: the writer is a second process
 * (CreateProcess of this executable), ended with TerminateProcess, which
 * is as abrupt (no atexit, no cleanup). */
static void test_torn_write_sigkill(void **state) {
  (void)state;
  const char *path = tf_path("model.hrry");
  write_old(path, 1);
  char exe[MAX_PATH];
  DWORD el = GetModuleFileNameA(NULL, exe, sizeof exe);
  assert_true(el > 0 && el < sizeof exe);
  SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
  HANDLE rd, wr;
  assert_true(CreatePipe(&rd, &wr, &sa, 0));
  assert_true(SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0));
  STARTUPINFOA si;
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = wr;
  si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  char cmd[2 * MAX_PATH + 700];
  snprintf(cmd, sizeof cmd, "\"%s\" --torn-writer-child \"%s\"", exe, path);
  PROCESS_INFORMATION pi;
  assert_true(CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi));
  CloseHandle(wr);
  for (int i = 0; i < 5; i++) {
    char c;
    DWORD n = 0;
    assert_true(ReadFile(rd, &c, 1, &n, NULL) && n == 1);
  }
  assert_true(TerminateProcess(pi.hProcess, 137));
  assert_int_equal(WaitForSingleObject(pi.hProcess, 60000), WAIT_OBJECT_0);
  DWORD code = 0;
  assert_true(GetExitCodeProcess(pi.hProcess, &code));
  assert_int_equal(code, 137); /* killed, not finished */
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  CloseHandle(rd);
  /* The target is the previous file, intact and loadable. */
  expect_old(path, 1);
  /* The killed writer's temporary file is the only leftover; it never
   * became a valid file under any name. */
  assert_int_equal(tf_dir_entries(), 2);
}
#else
static void test_torn_write_sigkill(void **state) {
  (void)state;
  const char *path = tf_path("model.hrry");
  write_old(path, 1);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Child: write a bigger file slowly, reporting each tensor. */
    close(fds[0]);
    HurrayFileWriter *w = NULL;
    HurrayFileWriterOptions o = {0, false, false, false};
    if (hurray_file_writer_open(path, &o, &w, NULL) != HURRAY_OK) _exit(2);
    HurrayDescriptor *d = tf_desc_u8(100000);
    uint8_t *data = calloc(1, 100000);
    for (int i = 0;; i++) {
      char name[32];
      snprintf(name, sizeof name, "t%d", i);
      const void *bufs[1] = {data};
      if (hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, NULL, NULL) != HURRAY_OK)
        _exit(3);
      if (write(fds[1], "x", 1) != 1) _exit(4);
      usleep(2000);
    }
  }
  close(fds[1]);
  char c;
  for (int i = 0; i < 5; i++) assert_int_equal(read(fds[0], &c, 1), 1);
  kill(pid, SIGKILL);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  close(fds[0]);
  /* The target is the previous file, intact and loadable. */
  expect_old(path, 1);
  /* Linux: nothing is left (the file had no name). Elsewhere the killed
   * writer's temporary file is the only leftover; it never became a valid
   * file under any name. (test_file_killed kills saves at many points, on
   * both paths.) */
  assert_int_equal(tf_dir_entries(), dir_has_unnamed_files() ? 1 : 2);
}
#endif

static void test_io_error_fails_the_writer(void **state) {
  (void)state;
#if defined(_WIN32)
  tu_skip("no per-process file size limit (RLIMIT_FSIZE) to make a write fail part way");
#else
  const char *path = tf_path("big.hrry");
  write_old(path, 1);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* A file size limit makes the write fail (EFBIG) part way. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {50000, 50000};
    setrlimit(RLIMIT_FSIZE, &rl);
    HurrayFileWriter *w = NULL;
    HurrayFileWriterOptions o = {0, false, true, false};
    if (hurray_file_writer_open(path, &o, &w, NULL) != HURRAY_OK) _exit(2);
    HurrayDescriptor *d = tf_desc_u8(100000);
    uint8_t *data = calloc(1, 100000);
    const void *bufs[1] = {data};
    HurrayError e;
    if (hurray_file_writer_add_tensor(w, "a", 1, d, bufs, NULL, &e) != HURRAY_ERR_IO) _exit(3);
    HurrayDescriptor *s = tf_desc_u8(1);
    if (hurray_file_writer_add_tensor(w, "b", 1, s, bufs, NULL, &e) != HURRAY_ERR_INVALID_STATE)
      _exit(4);
    if (hurray_file_writer_finish(w, &e) != HURRAY_ERR_INVALID_STATE) _exit(5);
    hurray_file_writer_destroy(&w);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  expect_old(path, 1);
  assert_int_equal(tf_dir_entries(), 1); /* destroy removed the temporary file */
#endif
}

/* Large tensors have their blocks reserved before they are written where the
 * file system gains from it (ext4, XFS): the file is the same byte for byte,
 * and a file size limit stops the writer at the reservation, before the
 * tensor's bytes are copied, with the target untouched. */
static uint8_t *write_mixed(const char *path, bool prealloc, bool *did, size_t *len) {
  hurray__file_writer_test_no_prealloc(!prealloc);
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  hurray__file_writer_test_no_prealloc(false);
  *did = hurray__file_writer_preallocates(w);
  const uint64_t sizes[] = {3 * 1024 * 1024 + 17, 100, 1 << 20, (1 << 20) - 1, 0, 5000000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    uint8_t *data = malloc(sizes[k] + 1);
    assert_non_null(data);
    for (uint64_t i = 0; i < sizes[k]; i++) data[i] = (uint8_t)(i * 7u + k);
    HurrayDescriptor *d = tf_desc_u8(sizes[k]);
    char name[8];
    snprintf(name, sizeof name, "t%zu", k);
    add(w, name, d, data);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    free(data);
  }
  finish(&w);
  return tf_load(path, len);
}

static void test_preallocation(void **state) {
  (void)state;
  bool with = false, without = true;
  size_t n1 = 0, n2 = 0;
  uint8_t *a = write_mixed(tf_path("pre.hrry"), true, &with, &n1);
  uint8_t *b = write_mixed(tf_path("nopre.hrry"), false, &without, &n2);
  assert_false(without);
#if defined(__linux__)
  struct statfs sf;
  assert_int_equal(statfs(tf_dir, &sf), 0);
  const bool gains = sf.f_type == 0xEF53 || sf.f_type == 0x58465342; /* ext4, XFS */
  assert_int_equal(with, gains);
#endif
  if (!with)
    print_message("[ NOTE     ] the scratch folder's file system gains nothing from "
                  "reserving blocks (not ext4/XFS): the writer does not, and only the "
                  "plain path was exercised\n");
  assert_int_equal(n1, n2);
  assert_memory_equal(a, b, n1);
  free(a);
  free(b);
#if !defined(_WIN32)
  if (!with) return;
  const char *path = tf_path("limited.hrry");
  write_old(path, 7);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {2 << 20, 2 << 20};
    setrlimit(RLIMIT_FSIZE, &rl);
    HurrayFileWriter *w = NULL;
    HurrayFileWriterOptions o = {0, false, true, false};
    if (hurray_file_writer_open(path, &o, &w, NULL) != HURRAY_OK) _exit(2);
    HurrayDescriptor *d = tf_desc_u8(3 << 20);
    uint8_t *data = calloc(1, 3 << 20);
    const void *bufs[1] = {data};
    HurrayError e;
    if (hurray_file_writer_add_tensor(w, "a", 1, d, bufs, NULL, &e) != HURRAY_ERR_IO) _exit(3);
    if (strstr(e.message, "reserving disk space") == NULL) _exit(4); /* before any copy */
    if (e.offset != 64) _exit(5);                                      /* the tensor's start */
    if (hurray_file_writer_finish(w, &e) != HURRAY_ERR_INVALID_STATE) _exit(6);
    hurray_file_writer_destroy(&w);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  expect_old(path, 7);
#endif
}

/* ---- allocation failures ------------------------------------------------------------- */

static HurrayStatus write_some(const char *path, const HurrayDescriptor *d, bool sorted) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, sorted, true, false};
  HurrayStatus st = hurray_file_writer_open(path, &o, &w, NULL);
  if (st != HURRAY_OK) return st;
  uint8_t data[4] = {1, 2, 3, 4};
  const void *bufs[1] = {data};
  for (int i = 0; i < 70 && st == HURRAY_OK; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%02d", 69 - i);
    st = hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, NULL, NULL);
  }
  for (int i = 0; i < 20 && st == HURRAY_OK; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%d", i);
    HurrayKvString ss[2] = {{"x", 1}, {"yy", 2}};
    HurrayKvValue v = hurray_kv_array(HURRAY_KV_STRING, ss, 2);
    st = hurray_file_writer_add_kv(w, key, strlen(key), &v, NULL);
  }
  if (st == HURRAY_OK) st = hurray_file_writer_finish(w, NULL);
  hurray_file_writer_destroy(&w);
  return st;
}

static void test_writer_allocation_failures(void **state) {
  (void)state;
  HurrayDescriptor *d = tf_desc_u8(4);
  tu_alloc_install();
  for (int sorted = 0; sorted < 2; sorted++) {
    for (long n = 0;; n++) {
      tu_fail_alloc_after(n);
      HurrayStatus st = write_some(tf_path("oom.hrry"), d, sorted);
      tu_alloc_reset();
      assert_int_equal(tu_alloc_live(), 0);
      if (st == HURRAY_OK) break;
      assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
      assert_int_equal(tf_dir_entries(), 0); /* nothing under the target, no temp */
      assert_true(n < 200);
    }
    unlink(tf_path("oom.hrry"));
  }
  hurray_set_allocator(NULL);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

int main(int argc, char **argv) {
#if defined(_WIN32)
  if (argc == 3 && strcmp(argv[1], "--torn-writer-child") == 0) return torn_writer_child(argv[2]);
#else
  (void)argc;
  (void)argv;
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_layout_is_spec_literal, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_file_and_empty_tensors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_alignment_option, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sorted_index, setup, teardown),
      cmocka_unit_test_setup_teardown(test_add_tensor_rejects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_open_rejects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_durable_write_behind_windows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_target_untouched_until_finish, setup, teardown),
      cmocka_unit_test_setup_teardown(test_torn_write_sigkill, setup, teardown),
      cmocka_unit_test_setup_teardown(test_io_error_fails_the_writer, setup, teardown),
      cmocka_unit_test_setup_teardown(test_preallocation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writer_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
