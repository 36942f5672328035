/* Copy-on-write mappings (HURRAY_FILE_ACCESS_MMAP_COPY): tensors are
 * writable, a write never reaches the file, another HurrayFile of it or
 * another process, no page is copied before it is written, and the
 * read-only mapping stays read-only; over-aligned files take the same path. */
#if !defined(_WIN32)
#include <signal.h>
#include <sys/wait.h>
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

/* Bytes of the test pattern: byte k of tensor `seed` is (seed * 31 + k) % 251. */
static uint8_t pat(int seed, uint64_t k) { return (uint8_t)(((uint64_t)seed * 31u + k) % 251u); }

/*
 * Writes `path`: tensors "a" and "b", uint8 vectors of `n` bytes each in the
 * pattern (seeds 1 and 2), each buffer declaring `buf_align`, the file's data
 * alignment `data_align` (0: 4096).
 */
static void write_pair(const char *path, uint64_t n, uint32_t buf_align, uint32_t data_align) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {data_align, false, true, false};
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  HurrayDescriptor *d = tf_desc_align(HURRAY_DTYPE_UINT8, 1, &n, n, buf_align);
  uint8_t *bytes = malloc((size_t)n);
  assert_non_null(bytes);
  for (int seed = 1; seed <= 2; seed++) {
    for (uint64_t k = 0; k < n; k++) bytes[k] = pat(seed, k);
    const void *bufs[1] = {bytes};
    const char *name = seed == 1 ? "a" : "b";
    if (hurray_file_writer_add_tensor(w, name, 1, d, bufs, NULL, &e) != HURRAY_OK)
      fail_msg("%s", e.message);
  }
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  hurray_file_writer_destroy(&w);
  free(bytes);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* Tensor `name` of f and its one buffer. */
static HurrayFileTensor *get(const HurrayFile *f, const char *name, uint8_t **data,
                             uint64_t *size) {
  uint64_t i = 0;
  assert_int_equal(hurray_file_find(f, name, strlen(name), &i), HURRAY_OK);
  HurrayFileTensor *t = NULL;
  HurrayError e;
  if (hurray_file_tensor(f, i, &t, &e) != HURRAY_OK) fail_msg("fetch: %s", e.message);
  const void *q = NULL;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, size), HURRAY_OK);
  *data = (uint8_t *)(uintptr_t)q;
  return t;
}

static bool is_pattern(const uint8_t *p, uint64_t n, int seed) {
  for (uint64_t k = 0; k < n; k++)
    if (p[k] != pat(seed, k)) return false;
  return true;
}

/* The file's own bytes (read back with stdio): tensor data unchanged. */
static void file_is_untouched(const char *path, uint64_t n) {
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  uint8_t *p;
  uint64_t size;
  HurrayFileTensor *a = get(f, "a", &p, &size);
  assert_true(is_pattern(p, n, 1));
  HurrayFileTensor *b = get(f, "b", &p, &size);
  assert_true(is_pattern(p, n, 2));
  hurray_file_tensor_release(&a);
  hurray_file_tensor_release(&b);
  hurray_file_close(&f);
}

static void test_writes_stay_in_the_mapping(void **state) {
  (void)state;
  const char *path = tf_path("cow.hrry");
  const uint64_t n = 3 * 4096 + 100;
  write_pair(path, n, 64, 0);
  size_t len0 = 0;
  uint8_t *before = tf_load(path, &len0);

  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  HurrayFileInfo in;
  assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
  assert_true(in.mapped);
  assert_int_equal(in.access, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *p;
  uint64_t size;
  HurrayFileTensor *a = get(f, "a", &p, &size);
  assert_int_equal(size, n);
  assert_true(hurray_file_tensor_is_mapped(a));
  assert_true(hurray_file_tensor_is_writable(a));
  assert_true(is_pattern(p, n, 1));
  /* Write the first byte, one in the middle page and the last one. */
  p[0] = 0xEE;
  p[5000] = 0xEF;
  p[n - 1] = 0xF0;
  assert_int_equal(p[0], 0xEE);

  /* The same File shares its mapping: a second fetch sees the writes. */
  uint8_t *p2;
  HurrayFileTensor *a2 = get(f, "a", &p2, &size);
  assert_ptr_equal(p2, p);
  assert_int_equal(p2[5000], 0xEF);
  /* The other tensor is untouched. */
  uint8_t *pb;
  HurrayFileTensor *b = get(f, "b", &pb, &size);
  assert_true(is_pattern(pb, n, 2));

  /* Another copy-on-write open of the same file sees the original bytes, and
   * its writes are not seen by the first. */
  HurrayFile *g = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *q;
  HurrayFileTensor *ga = get(g, "a", &q, &size);
  assert_ptr_not_equal(q, p);
  assert_true(is_pattern(q, n, 1));
  q[1] = 0x11;
  assert_int_equal(p[1], pat(1, 1));
  assert_int_equal(p[0], 0xEE);
  /* A read-only (shared) mapping of the file sees the original bytes too. */
  HurrayFile *h = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  uint8_t *r;
  HurrayFileTensor *ha = get(h, "a", &r, &size);
  assert_false(hurray_file_tensor_is_writable(ha));
  assert_true(is_pattern(r, n, 1));

  /* The tensors outlive their file, writable still. */
  hurray_file_close(&f);
  p[2] = 0x22;
  assert_int_equal(p2[2], 0x22);
  hurray_file_tensor_release(&a);
  assert_int_equal(p2[0], 0xEE);
  hurray_file_tensor_release(&a2);
  hurray_file_tensor_release(&b);
  hurray_file_tensor_release(&ga);
  hurray_file_tensor_release(&ha);
  hurray_file_close(&g);
  hurray_file_close(&h);

  /* The file itself: byte for byte what was written, and a new open reads
   * the original tensors. */
  size_t len1 = 0;
  uint8_t *after = tf_load(path, &len1);
  assert_int_equal(len1, len0);
  assert_memory_equal(after, before, len0);
  free(after);
  free(before);
  file_is_untouched(path, n);
  f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  a = get(f, "a", &p, &size);
  assert_true(is_pattern(p, n, 1));
  hurray_file_tensor_release(&a);
  hurray_file_close(&f);
}

/* Over-aligned files (data alignment above the page size, and above the
 * 64 KiB granularity of Windows views): the reserve-and-place path maps
 * copy-on-write too, every buffer at its declared alignment. */
static void test_over_aligned_files(void **state) {
  (void)state;
  static const uint32_t aligns[] = {65536u, HURRAY_FILE_MAX_ALIGNMENT};
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
    const char *path = tf_path("aligned.hrry");
    const uint64_t n = 10000;
    write_pair(path, n, aligns[i], aligns[i]);
    for (int access = 0; access < 3; access++) {
      HurrayFile *f = tf_open_as(path, (HurrayFileAccess)access);
      HurrayFileInfo in;
      assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
      assert_int_equal(in.data_alignment, aligns[i]);
      assert_int_equal(in.access, access);
      uint8_t *pa, *pb;
      uint64_t size;
      HurrayFileTensor *a = get(f, "a", &pa, &size);
      HurrayFileTensor *b = get(f, "b", &pb, &size);
      assert_int_equal((uintptr_t)pa % aligns[i], 0);
      assert_int_equal((uintptr_t)pb % aligns[i], 0);
      assert_true(is_pattern(pa, n, 1) && is_pattern(pb, n, 2));
      assert_int_equal(hurray_file_tensor_is_writable(a), access != HURRAY_FILE_ACCESS_MMAP);
      if (access == HURRAY_FILE_ACCESS_MMAP_COPY) {
        for (uint64_t k = 0; k < n; k += 997) pa[k] = (uint8_t)~pa[k];
        pb[n - 1] = 0;
        assert_int_equal(pa[997], (uint8_t)~pat(1, 997));
        assert_int_equal(pb[n - 1], 0);
        assert_true(is_pattern(pb, n - 1, 2));
      }
      hurray_file_close(&f);
      hurray_file_tensor_release(&a);
      hurray_file_tensor_release(&b);
    }
    file_is_untouched(path, n);
  }
}

/* A value that is no HurrayFileAccess is refused; memory images are
 * read-only views whatever the options say. */
static void test_access_values(void **state) {
  (void)state;
  const char *path = tf_path("modes.hrry");
  write_pair(path, 16, 64, 0);
  static const int bad[] = {3, 4, 255, -1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)bad[i];
    HurrayFile *f = (HurrayFile *)(void *)&o; /* a non-NULL value: nulled on failure */
    HurrayError e;
    hurray_error_clear(&e);
    assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_ERR_INVALID_ARGUMENT);
    assert_null(f);
    assert_string_equal(e.field, "options.access");
  }
  size_t len = 0;
  uint8_t *img = tf_load(path, &len);
  void *mem = tu_aligned_alloc(4096, len);
  assert_non_null(mem);
  memcpy(mem, img, len);
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = HURRAY_FILE_ACCESS_MMAP_COPY; /* ignored for memory */
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open_memory(mem, len, NULL, NULL, &o, &f, &e), HURRAY_OK);
  HurrayFileInfo in;
  assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
  assert_true(in.mapped);
  assert_int_equal(in.access, HURRAY_FILE_ACCESS_MMAP);
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, 0, &t, &e), HURRAY_OK);
  assert_true(hurray_file_tensor_is_mapped(t));
  assert_false(hurray_file_tensor_is_writable(t));
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  tu_aligned_free(mem);
  free(img);
}

#if !defined(_WIN32)

/* Runs `body` in a child process that turns SIGSEGV and SIGBUS into exit
 * status 3; returns the child's exit status (or 128 + the signal). */
static void on_fault(int sig) {
  (void)sig;
  _exit(3);
}

static int in_child(void (*body)(const char *), const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    body(arg);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
}

/* Writes through the first buffer of "a" opened with `mode` ("r" or "c"). */
static void write_through(const char *path_and_mode) {
  char path[700];
  snprintf(path, sizeof path, "%s", path_and_mode + 1);
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = path_and_mode[0] == 'c' ? HURRAY_FILE_ACCESS_MMAP_COPY : HURRAY_FILE_ACCESS_MMAP;
  HurrayFile *f = NULL;
  HurrayError e;
  if (hurray_file_open(path, &o, &f, &e) != HURRAY_OK) _exit(10);
  uint64_t i = 0;
  HurrayFileTensor *t = NULL;
  if (hurray_file_find(f, "a", 1, &i) != HURRAY_OK || hurray_file_tensor(f, i, &t, &e) != HURRAY_OK)
    _exit(11);
  const void *q = NULL;
  if (hurray_file_tensor_buffer(t, 0, &q, NULL) != HURRAY_OK) _exit(12);
  volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)q;
  p[7] = (uint8_t)(p[7] + 1); /* faults when the mapping is read-only */
  if (p[7] != (uint8_t)(pat(1, 7) + 1)) _exit(13);
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
}

/* The read-only mode is still read-only: a write through it faults, where
 * the same write through a copy-on-write mapping succeeds. */
static void test_read_only_mapping_stays_read_only(void **state) {
  (void)state;
  const char *path = tf_path("ro.hrry");
  write_pair(path, 4096, 64, 0);
  char arg[700];
  snprintf(arg, sizeof arg, "r%s", path);
  assert_int_equal(in_child(write_through, arg), 3);
  snprintf(arg, sizeof arg, "c%s", path);
  assert_int_equal(in_child(write_through, arg), 0);
  file_is_untouched(path, 4096);
}

/* Another process writing through its copy-on-write mapping: this process's
 * mappings (shared and private) and the file never see it. */
static void test_other_processes_never_see_writes(void **state) {
  (void)state;
  const char *path = tf_path("procs.hrry");
  const uint64_t n = 8192;
  write_pair(path, n, 64, 0);
  HurrayFile *shared = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  HurrayFile *priv = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *ps, *pp;
  uint64_t size;
  HurrayFileTensor *ts = get(shared, "a", &ps, &size);
  HurrayFileTensor *tp = get(priv, "a", &pp, &size);
  int to_child[2], to_parent[2];
  assert_int_equal(pipe(to_child), 0);
  assert_int_equal(pipe(to_parent), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
    uint8_t *p;
    uint64_t sz;
    HurrayFileTensor *t = get(f, "a", &p, &sz);
    for (uint64_t k = 0; k < sz; k++) p[k] = 0xAB;
    /* The mapping this process inherited is private to it too. */
    pp[3] = 0xCD;
    char c = 'w';
    if (write(to_parent[1], &c, 1) != 1) _exit(20);
    if (read(to_child[0], &c, 1) != 1) _exit(21); /* hold the mapping until told */
    int code = p[sz - 1] == 0xAB ? 0 : 22;
    hurray_file_tensor_release(&t);
    hurray_file_close(&f);
    _exit(code);
  }
  close(to_child[0]);
  close(to_parent[1]);
  char c = 0;
  assert_int_equal(read(to_parent[0], &c, 1), 1);
  assert_true(is_pattern(ps, n, 1));
  assert_true(is_pattern(pp, n, 1));
  file_is_untouched(path, n);
  HurrayFile *fresh = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *pf;
  HurrayFileTensor *tf = get(fresh, "a", &pf, &size);
  assert_true(is_pattern(pf, n, 1));
  c = 'x';
  assert_int_equal(write(to_child[1], &c, 1), 1);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  close(to_child[1]);
  close(to_parent[0]);
  hurray_file_tensor_release(&ts);
  hurray_file_tensor_release(&tp);
  hurray_file_tensor_release(&tf);
  hurray_file_close(&shared);
  hurray_file_close(&priv);
  hurray_file_close(&fresh);
}

/* Saving over a mapped file renames a new file into place: the mappings keep
 * the old one, whole (no SIGBUS), and a new open reads the new one. */
static void test_save_over_a_mapped_file(void **state) {
  (void)state;
  const char *path = tf_path("replace.hrry");
  const uint64_t n = 5 * 4096;
  write_pair(path, n, 64, 0);
  HurrayFile *fs = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  HurrayFile *fc = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *ps, *pc;
  uint64_t size;
  HurrayFileTensor *ts = get(fs, "a", &ps, &size);
  HurrayFileTensor *tc = get(fc, "b", &pc, &size);
  pc[0] = 0x5A;
  write_pair(path, 16, 64, 0); /* a much shorter file under the same name */
  assert_true(is_pattern(ps, n, 1)); /* every page of the old one still there */
  assert_int_equal(pc[0], 0x5A);
  for (uint64_t k = 1; k < n; k++) assert_int_equal(pc[k], pat(2, k));
  HurrayFile *g = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *pg;
  HurrayFileTensor *tg = get(g, "a", &pg, &size);
  assert_int_equal(size, 16);
  hurray_file_tensor_release(&ts);
  hurray_file_tensor_release(&tc);
  hurray_file_tensor_release(&tg);
  hurray_file_close(&fs);
  hurray_file_close(&fc);
  hurray_file_close(&g);
}

#else /* _WIN32 */

static void test_read_only_mapping_stays_read_only(void **state) {
  (void)state;
  tu_skip("fork: the write must fault in a child process");
}
static void test_other_processes_never_see_writes(void **state) {
  (void)state;
  tu_skip("fork");
}
static void test_save_over_a_mapped_file(void **state) {
  (void)state;
  tu_skip("Windows does not let a file with a mapped view be replaced");
}

#endif

#if defined(__linux__)

/* The "Anonymous:" kB of the mapping holding `addr` in /proc/self/smaps (the
 * pages of a private file mapping that were copied), or -1. */
static long anonymous_kb(const void *addr) {
  FILE *fp = fopen("/proc/self/smaps", "r");
  if (fp == NULL) return -1;
  char line[512];
  bool inside = false;
  long kb = -1;
  while (fgets(line, sizeof line, fp) != NULL) {
    unsigned long lo = 0, hi = 0;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
      inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
      continue;
    }
    if (inside && sscanf(line, "Anonymous: %ld kB", &kb) == 1) break;
  }
  fclose(fp);
  return kb;
}

/* No page is copied until it is written: reading every byte copies none,
 * each written page exactly one. */
static void test_pages_are_copied_only_when_written(void **state) {
  (void)state;
  const char *path = tf_path("lazy.hrry");
  const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  const uint64_t n = 64 * page;
  write_pair(path, n, 64, 0);
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP_COPY);
  uint8_t *p;
  uint64_t size;
  HurrayFileTensor *t = get(f, "a", &p, &size);
  if (anonymous_kb(p) < 0) tu_skip("no Anonymous: line in /proc/self/smaps");
  assert_true(is_pattern(p, n, 1)); /* reads every page */
  assert_int_equal(anonymous_kb(p), 0);
  p[0] = 1;
  assert_int_equal(anonymous_kb(p), (long)(page / 1024));
  p[1] = 2; /* the same page */
  p[10 * page + 5] = 3;
  p[63 * page] = 4;
  assert_int_equal(anonymous_kb(p), (long)(3 * page / 1024));
  /* The read-only mapping never has any. */
  HurrayFile *g = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  uint8_t *q;
  HurrayFileTensor *u = get(g, "a", &q, &size);
  assert_true(is_pattern(q, n, 1));
  assert_int_equal(anonymous_kb(q), 0);
  hurray_file_tensor_release(&t);
  hurray_file_tensor_release(&u);
  hurray_file_close(&f);
  hurray_file_close(&g);
}

#else

static void test_pages_are_copied_only_when_written(void **state) {
  (void)state;
  tu_skip("reads the copied pages from Linux's /proc/self/smaps");
}

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_writes_stay_in_the_mapping, setup, teardown),
      cmocka_unit_test_setup_teardown(test_over_aligned_files, setup, teardown),
      cmocka_unit_test_setup_teardown(test_access_values, setup, teardown),
      cmocka_unit_test_setup_teardown(test_read_only_mapping_stays_read_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_processes_never_see_writes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_save_over_a_mapped_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pages_are_copied_only_when_written, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
