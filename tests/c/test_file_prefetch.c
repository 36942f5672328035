/* Reading ahead in parallel (hurray_file_prefetch, src/file/prefetch.c): the
 * workers setting and HURRAY_WORKERS, what a prefetch brings into memory and
 * what it leaves alone (mincore after evicting the file's pages), the same
 * bytes with one worker and with eight (READ access), and a file truncated
 * under a mapping reported as an error instead of SIGBUS. */
#include "test_file_util.h"

#if !defined(_WIN32)
#include <stdatomic.h>
#include <sys/mman.h>

#define MIB ((uint64_t)1 << 20)
#define BIG (40 * MIB) /* each of the two large tensors */

static int setup(void **state) {
  (void)state;
  tf_mkdir();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  unsetenv("HURRAY_WORKERS");
  tf_rmdir();
  return 0;
}

static uint8_t pattern(uint64_t i, uint8_t seed) { return (uint8_t)((i * 2654435761u) >> 13) ^ seed; }

/* "a" and "b": BIG bytes each (a pattern), "c": 5 bytes. */
static const char *big_file(void) {
  const char *path = tf_path("big.hrry");
  uint8_t *a = malloc(BIG), *b = malloc(BIG);
  assert_non_null(a);
  assert_non_null(b);
  for (uint64_t i = 0; i < BIG; i++) {
    a[i] = pattern(i, 1);
    b[i] = pattern(i, 2);
  }
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *da = tf_desc_u8(BIG), *db = tf_desc_u8(BIG), *dc = tf_desc_u8(5);
  const uint8_t c[5] = {1, 2, 3, 4, 5};
  const void *pa[1] = {a}, *pb[1] = {b}, *pc[1] = {c};
  assert_int_equal(hurray_file_writer_add_tensor(w, "a", 1, da, pa, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "b", 1, db, pb, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "c", 1, dc, pc, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(da), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(db), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(dc), HURRAY_OK);
  free(a);
  free(b);
  return path;
}

/* Drops the file's pages from the cache (no root needed); false where the
 * file system keeps them (tmpfs), where the test has nothing to observe. */
static bool evict(const char *path) {
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  (void)fsync(fd);
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  size_t n = (size_t)st.st_size;
  void *m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  assert_true(m != MAP_FAILED);
  size_t pages = (n + 4095) / 4096, resident = 0;
  unsigned char *vec = malloc(pages);
  assert_int_equal(mincore(m, n, vec), 0);
  for (size_t i = 0; i < pages; i++) resident += vec[i] & 1u;
  free(vec);
  munmap(m, n);
  return resident < pages / 4;
}

/* Bytes of [off, off + len) of the file in the page cache (a mapping of our
 * own: mincore reports the file's cache). */
static uint64_t resident_bytes(const char *path, uint64_t off, uint64_t len) {
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  void *m = mmap(NULL, (size_t)(off + len), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  assert_true(m != MAP_FAILED);
  size_t first = (size_t)(off / 4096), pages = (size_t)((off + len + 4095) / 4096);
  unsigned char *vec = malloc(pages);
  assert_int_equal(mincore(m, (size_t)(off + len), vec), 0);
  uint64_t n = 0;
  for (size_t i = first; i < pages; i++) n += vec[i] & 1u;
  free(vec);
  munmap(m, (size_t)(off + len));
  return n * 4096;
}

static HurrayFile *open_with(const char *path, HurrayFileAccess access, uint32_t workers) {
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = access;
  o.workers = workers;
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
  return f;
}

static void test_workers_setting(void **state) {
  (void)state;
  _Static_assert(sizeof(HurrayFileOpenOptions) == 40, "the options struct grew");
  unsetenv("HURRAY_WORKERS");
  assert_int_equal(hurray__file_workers(0), HURRAY_FILE_DEFAULT_WORKERS);
  assert_int_equal(hurray__file_workers(1), 1);
  assert_int_equal(hurray__file_workers(7), 7);
  assert_int_equal(hurray__file_workers(1000), HURRAY_FILE_MAX_WORKERS);
  setenv("HURRAY_WORKERS", "3", 1);
  assert_int_equal(hurray__file_workers(0), 3);
  assert_int_equal(hurray__file_workers(2), 2); /* the option wins over the variable */
  const char *bad[] = {"0", "abc", "-2", "65", "3x", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("HURRAY_WORKERS", bad[i], 1);
    assert_int_equal(hurray__file_workers(0), HURRAY_FILE_DEFAULT_WORKERS);
  }
}

static void test_prefetch_reads_the_range_only(void **state) {
  (void)state;
  const char *path = big_file();
  if (!evict(path)) skip();
  HurrayFile *f = open_with(path, HURRAY_FILE_ACCESS_MMAP, 4);
  HurrayFileEntry ea, eb;
  assert_int_equal(hurray_file_entry(f, 0, &ea), HURRAY_OK);
  assert_int_equal(hurray_file_entry(f, 1, &eb), HURRAY_OK);
  /* one worker: nothing is read */
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 1, NULL), HURRAY_OK);
  assert_true(resident_bytes(path, eb.data_offset, eb.data_length) < eb.data_length / 4);
  HurrayError e;
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e), HURRAY_OK);
  /* all of it read; the kernel may reclaim a page or two under memory pressure before
   * mincore looks (seen once: 4 KiB of 40 MiB gone), hence 1 MiB of slack */
  assert_true(resident_bytes(path, eb.data_offset, eb.data_length) + MIB >= eb.data_length);
  /* the other large tensor stays on disk (the kernel's read-around may take
   * a few MiB beside the range) */
  assert_true(resident_bytes(path, ea.data_offset, ea.data_length) < 16 * MIB);
  /* a warm range again: nothing to do, still fine */
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 8, &e), HURRAY_OK);
  /* a range past the end is clipped; one beyond it is nothing */
  HurrayFileInfo info;
  assert_int_equal(hurray_file_info(f, &info), HURRAY_OK);
  assert_int_equal(hurray_file_prefetch(f, info.file_size - 10, 1000, 4, &e), HURRAY_OK);
  assert_int_equal(hurray_file_prefetch(f, info.file_size + 10, 1000, 4, &e), HURRAY_OK);
  /* the bytes are the file's */
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_OK);
  const void *p = NULL;
  uint64_t n = 0;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &p, &n), HURRAY_OK);
  assert_int_equal(n, BIG);
  for (uint64_t i = 0; i < BIG; i += 4099) assert_int_equal(((const uint8_t *)p)[i], pattern(i, 2));
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  assert_int_equal(hurray_file_prefetch(NULL, 0, 1, 4, &e), HURRAY_ERR_NULL_POINTER);
}

static void test_read_access_prefetch_fills_the_cache(void **state) {
  (void)state;
  const char *path = big_file();
  if (!evict(path)) skip();
  HurrayFile *f = open_with(path, HURRAY_FILE_ACCESS_READ, 4);
  HurrayFileEntry ea, eb;
  assert_int_equal(hurray_file_entry(f, 0, &ea), HURRAY_OK);
  assert_int_equal(hurray_file_entry(f, 1, &eb), HURRAY_OK);
  HurrayError e;
  /* a range one read does as fast (under 32 MiB): left to that read */
  assert_int_equal(hurray_file_prefetch(f, ea.data_offset, 8 * MIB, 0, &e), HURRAY_OK);
  assert_true(resident_bytes(path, ea.data_offset + 4 * MIB, 4 * MIB) < 4 * MIB);
  /* a large one is brought into the system's cache, and nothing far from it */
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e), HURRAY_OK);
  /* all of it read; the kernel may reclaim a page or two under memory pressure before
   * mincore looks (seen once: 4 KiB of 40 MiB gone), hence 1 MiB of slack */
  assert_true(resident_bytes(path, eb.data_offset, eb.data_length) + MIB >= eb.data_length);
  assert_true(resident_bytes(path, ea.data_offset + 16 * MIB, 8 * MIB) == 0);
  hurray_file_close(&f);
}

static void test_read_access_same_bytes(void **state) {
  (void)state;
  const char *path = big_file();
  uint8_t *got[2] = {NULL, NULL};
  const uint32_t workers[2] = {1, 8};
  for (int k = 0; k < 2; k++) {
    (void)evict(path);
    HurrayFile *f = open_with(path, HURRAY_FILE_ACCESS_READ, workers[k]);
    HurrayFileTensor *t = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_tensor(f, 0, &t, &e), HURRAY_OK);
    const void *p = NULL;
    uint64_t n = 0;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &p, &n), HURRAY_OK);
    assert_int_equal(n, BIG);
    got[k] = malloc(BIG);
    memcpy(got[k], p, BIG);
    hurray_file_tensor_release(&t);
    /* READ access: a prefetch of everything, then the same bytes again */
    assert_int_equal(hurray_file_prefetch(f, 0, UINT64_MAX, 8, &e), HURRAY_OK);
    HurrayFileTensor *t2 = NULL;
    assert_int_equal(hurray_file_tensor(f, 0, &t2, &e), HURRAY_OK);
    assert_int_equal(hurray_file_tensor_buffer(t2, 0, &p, &n), HURRAY_OK);
    assert_memory_equal(p, got[k], BIG);
    hurray_file_tensor_release(&t2);
    hurray_file_close(&f);
  }
  assert_memory_equal(got[0], got[1], BIG);
  for (uint64_t i = 0; i < BIG; i += 1) {
    if (got[1][i] != pattern(i, 1)) fail_msg("byte %llu differs", (unsigned long long)i);
  }
  free(got[0]);
  free(got[1]);
}

static void test_truncated_under_a_mapping(void **state) {
  (void)state;
  const char *path = big_file();
  (void)evict(path);
  HurrayFile *f = open_with(path, HURRAY_FILE_ACCESS_MMAP_COPY, 4);
  HurrayFileEntry eb;
  assert_int_equal(hurray_file_entry(f, 1, &eb), HURRAY_OK);
  assert_int_equal(truncate(path, (off_t)(eb.data_offset + MIB)), 0);
  HurrayError e;
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "truncated"));
  assert_true(e.offset >= eb.data_offset && e.offset < eb.data_offset + eb.data_length);
  hurray_file_close(&f);
}

static void test_truncated_under_a_parallel_read(void **state) {
  (void)state;
  const char *path = big_file();
  HurrayFile *f = open_with(path, HURRAY_FILE_ACCESS_READ, 8);
  HurrayFileEntry eb;
  assert_int_equal(hurray_file_entry(f, 1, &eb), HURRAY_OK);
  assert_int_equal(truncate(path, (off_t)(eb.data_offset + MIB)), 0);
  HurrayFileTensor *t = NULL;
  HurrayError e;
  /* the prefetch leaves the missing bytes to the reads, which say it in their words */
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e), HURRAY_OK);
  assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_ERR_IO);
  assert_null(t);
  assert_non_null(strstr(e.message, "unexpected end of file"));
  assert_true(e.offset >= eb.data_offset + MIB);
  hurray_file_close(&f);
}

/* The populate hook: counts calls, fails (EFAULT: an I/O error or a page
 * past the end) every slice but the one starting at g_ok. */
static atomic_int g_calls;
static const uint8_t *g_ok;
static int failing_populate(const void *addr, size_t len) {
  (void)len;
  atomic_fetch_add(&g_calls, 1);
  return (const uint8_t *)addr == g_ok ? 0 : EFAULT;
}
static int counting_populate(const void *addr, size_t len) {
  atomic_fetch_add(&g_calls, 1);
  return hurray__os_populate_read(addr, len);
}

static void test_storage_error_names_the_first_failed_slice(void **state) {
  (void)state;
  const char *path = big_file();
  if (!evict(path)) skip();
  HurrayFile *f = open_with(path, HURRAY_FILE_ACCESS_MMAP, 4);
  HurrayFileEntry eb;
  assert_int_equal(hurray_file_entry(f, 1, &eb), HURRAY_OK);
  HurrayFileTensor *t = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_OK);
  const void *p = NULL;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &p, NULL), HURRAY_OK);
  /* 40 MiB over 4 workers: slices of 16 MiB at +0, +16 and +32 MiB; the last
   * two fail, and the error is the one at +16 MiB whatever thread ran first */
  g_ok = p;
  atomic_store(&g_calls, 0);
  hurray__prefetch_populate_hook(failing_populate);
  HurrayStatus st = hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e);
  hurray__prefetch_populate_hook(NULL);
  assert_int_equal(st, HURRAY_ERR_IO);
  assert_int_equal(e.offset, eb.data_offset + 16 * MIB);
  assert_non_null(strstr(e.message, "the storage failed"));
  assert_non_null(strstr(e.message, "SIGBUS"));
  assert_true(atomic_load(&g_calls) >= 2);
  /* read it for real, then again: a warm range calls nothing */
  assert_int_equal(hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e), HURRAY_OK);
  atomic_store(&g_calls, 0);
  hurray__prefetch_populate_hook(counting_populate);
  st = hurray_file_prefetch(f, eb.data_offset, eb.data_length, 8, &e);
  hurray__prefetch_populate_hook(NULL);
  assert_int_equal(st, HURRAY_OK);
  assert_int_equal(atomic_load(&g_calls), 0);
  /* a cold one calls it once per slice */
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  (void)evict(path);
  f = open_with(path, HURRAY_FILE_ACCESS_MMAP, 2);
  hurray__prefetch_populate_hook(counting_populate);
  st = hurray_file_prefetch(f, eb.data_offset, eb.data_length, 0, &e);
  hurray__prefetch_populate_hook(NULL);
  assert_int_equal(st, HURRAY_OK);
  assert_int_equal(atomic_load(&g_calls), 2); /* 2 workers: 2 slices of 20 MiB */
  hurray_file_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_workers_setting, setup, teardown),
      cmocka_unit_test_setup_teardown(test_prefetch_reads_the_range_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_access_prefetch_fills_the_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_access_same_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncated_under_a_mapping, setup, teardown),
      cmocka_unit_test_setup_teardown(test_storage_error_names_the_first_failed_slice, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_truncated_under_a_parallel_read, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* _WIN32: mincore, truncate and posix_fadvise are POSIX */
int main(void) { return 0; }
#endif
