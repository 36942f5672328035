/* Random access in a file of 100,000 tensors: open decodes no descriptor,
 * a fetch decodes exactly one, and the others' bytes are never looked at. */
#include <time.h>

#include "test_file_util.h"

enum { N = 100000 };

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

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n empty tensors "t000000".. (one page each) plus one KV entry. */
static void write_many(const char *path, int n, bool sorted) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, sorted, true, false};
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *d = tf_desc_u8(0);
  for (int i = 0; i < n; i++) {
    char name[16];
    /* Written in a scrambled order so that a sorted index differs from it. */
    snprintf(name, sizeof name, "t%06d", (int)(((long)i * 7919) % n));
    if (hurray_file_writer_add_tensor(w, name, 7, d, NULL, NULL, &e) != HURRAY_OK)
      fail_msg("%s", e.message);
  }
  HurrayKvValue v = hurray_kv_int64(n);
  assert_int_equal(hurray_file_writer_add_kv(w, "count", 5, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void fetch_one(const HurrayFile *f, const char *name, HurrayStatus want) {
  uint64_t idx;
  assert_int_equal(hurray_file_find(f, name, strlen(name), &idx), HURRAY_OK);
  HurrayFileTensor *t = NULL;
  HurrayError e;
  HurrayStatus st = hurray_file_tensor(f, idx, &t, &e);
  if (st != want) fail_msg("%s: %s (%s)", name, hurray_status_name(st), e.message);
  if (st == HURRAY_OK) {
    assert_string_equal(hurray_file_tensor_name(t, NULL), name);
    hurray_file_tensor_release(&t);
  }
}

static void test_open_and_fetch_one_of_100000(void **state) {
  (void)state;
  const char *path = tf_path("many.hrry");
  double t0 = now();
  write_many(path, N, false);
  double t1 = now();
  print_message("wrote %d tensors in %.3f s\n", N, t1 - t0);

  for (int mode = 0; mode < 2; mode++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    uint64_t before = hurray__file_descriptor_decodes();
    double a = now();
    HurrayFile *f = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
    double b = now();
    assert_int_equal(hurray__file_descriptor_decodes(), before); /* open decodes none */
    assert_int_equal(hurray_file_tensor_count(f), N);
    fetch_one(f, "t054321", HURRAY_OK);
    double c = now();
    assert_int_equal(hurray__file_descriptor_decodes(), before + 1); /* exactly one */
    print_message("%s: open %.3f ms, find+fetch %.3f ms\n", mode ? "read" : "mmap",
                  (b - a) * 1e3, (c - b) * 1e3);
    const HurrayKvValue *v;
    assert_int_equal(hurray_file_kv_find(f, "count", 5, &v), HURRAY_OK);
    assert_true(v->v.i64 == N);
    hurray_file_close(&f);
  }

  /* Ruin every other descriptor's magic: open and the one fetch still work,
   * so neither looked at them. */
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  uint64_t keep;
  assert_int_equal(hurray_file_find(f, "t054321", 7, &keep), HURRAY_OK);
  FILE *fp = fopen(path, "r+b");
  assert_non_null(fp);
  for (uint64_t i = 0; i < N; i++) {
    if (i == keep) continue;
    HurrayFileEntry en;
    assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
    assert_int_equal(fseek(fp, (long)en.descriptor_offset, SEEK_SET), 0);
    assert_int_equal(fwrite("XXXX", 1, 4, fp), 4);
  }
  assert_int_equal(fclose(fp), 0);
  hurray_file_close(&f);
  for (int mode = 0; mode < 2; mode++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
    fetch_one(f, "t054321", HURRAY_OK);
    fetch_one(f, "t054322", HURRAY_ERR_INVALID_MAGIC); /* the damage is real */
    hurray_file_close(&f);
  }
}

static void test_sorted_index_lookups(void **state) {
  (void)state;
  const char *path = tf_path("sorted.hrry");
  enum { M = 10000 };
  write_many(path, M, true);
  HurrayFile *f = NULL;
  HurrayError e;
  uint64_t before = hurray__file_descriptor_decodes();
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray__file_lookup_kind(f), -1); /* open compares no names */
  for (int i = 0; i < M; i += 97) {
    char name[16];
    snprintf(name, sizeof name, "t%06d", i);
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, name, 7, &idx), HURRAY_OK);
    assert_int_equal(idx, i); /* sorted index: name order */
  }
  assert_int_equal(hurray__file_lookup_kind(f), HURRAY__LOOKUP_SORTED); /* no table */
  assert_int_equal(hurray_file_verify(f, NULL), HURRAY_OK);
  assert_int_equal(hurray__file_descriptor_decodes(), before);
  fetch_one(f, "t000042", HURRAY_OK);
  assert_int_equal(hurray__file_descriptor_decodes(), before + 1);
  /* File order is the scrambled write order. */
  uint64_t idx;
  assert_int_equal(hurray_file_position(f, 1, &idx), HURRAY_OK);
  assert_int_equal(idx, 7919 % M);
  hurray_file_close(&f);
}

/* Looks every name up: found at its entry unless it is `dup_name`, which
 * two entries share. Then a few absent names. */
static void find_all(const HurrayFile *f, const char *dup_name) {
  uint64_t n = hurray_file_tensor_count(f);
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileEntry en;
    assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
    uint64_t idx = UINT64_MAX;
    HurrayStatus st = hurray_file_find(f, en.name, en.name_len, &idx);
    if (dup_name != NULL && en.name_len == strlen(dup_name) &&
        memcmp(en.name, dup_name, en.name_len) == 0) {
      assert_int_equal(st, HURRAY_ERR_DUPLICATE_NAME);
    } else {
      if (st != HURRAY_OK || idx != i)
        fail_msg("index[%llu] \"%.*s\": %s, %llu", (unsigned long long)i, (int)en.name_len,
                 en.name, hurray_status_name(st), (unsigned long long)idx);
    }
  }
  static const char *absent[] = {"t", "t00000", "t0000000", "u000001", "t999999", "t00001\xC3"};
  for (size_t k = 0; k < sizeof absent / sizeof absent[0]; k++) {
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, absent[k], strlen(absent[k]), &idx),
                     HURRAY_ERR_NOT_FOUND);
  }
}

static void test_lookups_every_way(void **state) {
  (void)state;
  enum { M = 5000 };
  for (int sorted = 0; sorted < 2; sorted++) {
    const char *path = tf_path("lookups.hrry");
    write_many(path, M, sorted != 0);
    HurrayFile *f = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
    assert_int_equal(hurray__file_lookup_kind(f), -1);
    find_all(f, NULL); /* the first ones scan, then the structure serves */
    assert_int_equal(hurray__file_lookup_kind(f),
                     sorted ? HURRAY__LOOKUP_SORTED : HURRAY__LOOKUP_HASH);
    find_all(f, NULL);
    assert_int_equal(hurray_file_verify(f, &e), HURRAY_OK);
    hurray_file_close(&f);

    /* Entry 4321 renamed after entry 17: both names now fail to look up
     * (while scanning and with the structure), every other one works. */
    size_t len;
    uint8_t *p = tf_load(path, &len);
    HurrayFileEntry a, b;
    assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
    assert_int_equal(hurray_file_entry(f, 17, &a), HURRAY_OK);
    assert_int_equal(hurray_file_entry(f, 4321, &b), HURRAY_OK);
    char dup[8];
    memcpy(dup, a.name, 7);
    dup[7] = '\0';
    hurray_file_close(&f);
    memcpy(tf_index_entry(p, len, 4321) - 7, dup, 7);
    tf_fix_crc(p, len);
    assert_int_equal(tf_open_image(p, len, &f, &e), HURRAY_OK);
    find_all(f, dup);
    find_all(f, dup);
    /* A sorted index is now out of order, so a hash table serves instead. */
    assert_int_equal(hurray__file_lookup_kind(f), HURRAY__LOOKUP_HASH);
    hurray_error_clear(&e);
    HurrayStatus st = hurray_file_verify(f, &e);
    if (sorted) {
      /* Either the renamed entry sorts before its predecessor, or after
       * its successor: the first pair out of order is reported. */
      assert_true(st == HURRAY_ERR_INVALID_FILE || st == HURRAY_ERR_DUPLICATE_NAME);
      assert_true(strcmp(e.field, "index[4321].name") == 0 ||
                  strcmp(e.field, "index[4322].name") == 0);
    } else {
      assert_int_equal(st, HURRAY_ERR_DUPLICATE_NAME);
      assert_string_equal(e.field, "index[4321].name");
      assert_non_null(strstr(e.message, "index[17]"));
    }
    hurray_file_close(&f);
    free(p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_open_and_fetch_one_of_100000, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sorted_index_lookups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_lookups_every_way, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
