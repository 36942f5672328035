/*
 * Benchmarks of the .hrry container against plain POSIX peers measured in the
 * same run, on files that stay in the page cache:
 *
 *   save        hurray writer (tensor by tensor)  vs one write() of the same bytes
 *   load mmap   open + fetch every tensor + read every byte
 *                                                  vs mmap of the raw file + read every byte
 *   load read   open (plain reads) + fetch every tensor
 *                                                  vs one read() of the whole raw file
 *   random access  open + find + fetch one tensor + close, among N (N = 1k, 10k,
 *                  100k): best of 20, and the first of them (a new mapping, the
 *                  lookups scanning); then the find + fetch alone over 1000
 *                  names: should not grow with N
 *
 * Usage: bench_file [total MiB = 1024] [tensors = 64] [directory = $TMPDIR or /tmp]
 * Prints each measurement (best of several runs) and the ratios the targets
 * are stated in: save >= 0.8, load mmap >= 0.9, load read >= 0.8.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "bench_util.h"

static volatile uint64_t g_sink;

/* Reads every byte (8 at a time). */
static void touch(const void *p, uint64_t n) {
  const uint8_t *b = p;
  uint64_t acc = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    acc += w;
  }
  for (; i < n; i++) acc += b[i];
  g_sink += acc;
}

static double save_hurray(const char *path, const uint8_t *data, uint64_t total, int count) {
  uint64_t each = total / (uint64_t)count;
  HurrayDescriptor *d = bench_u8_desc("bench_file", each);
  unlink(path);
  double t0 = bench_now();
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) bench_die("bench_file", "writer", &e);
  for (int i = 0; i < count; i++) {
    char name[32];
    snprintf(name, sizeof name, "layer%03d", i);
    const void *bufs[1] = {data + (uint64_t)i * each};
    if (hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, NULL, &e) != HURRAY_OK)
      bench_die("bench_file", "add", &e);
  }
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) bench_die("bench_file", "finish", &e);
  double t1 = bench_now();
  hurray_file_writer_destroy(&w);
  if (hurray_descriptor_destroy(d) != HURRAY_OK) abort();
  return t1 - t0;
}

static double save_raw(const char *path, const uint8_t *data, uint64_t total) {
  unlink(path);
  double t0 = bench_now();
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) bench_die("bench_file", "raw open", NULL);
  uint64_t done = 0;
  while (done < total) {
    ssize_t r = write(fd, data + done, (size_t)(total - done));
    if (r <= 0) bench_die("bench_file", "raw write", NULL);
    done += (uint64_t)r;
  }
  close(fd);
  return bench_now() - t0;
}

static double load_hurray(const char *path, HurrayFileAccess access, bool touch_bytes,
                          uint64_t expect) {
  double t0 = bench_now();
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = access;
  HurrayFile *f = NULL;
  HurrayError e;
  if (hurray_file_open(path, &o, &f, &e) != HURRAY_OK) bench_die("bench_file", "open", &e);
  /* Like a real load, every tensor is kept until the end (so plain reads
   * cannot recycle one block), then all are dropped, as the peer frees. */
  uint64_t n = hurray_file_tensor_count(f), seen = 0;
  HurrayFileTensor **all = calloc(n ? n : 1, sizeof *all);
  for (uint64_t i = 0; i < n; i++) {
    if (hurray_file_tensor(f, i, &all[i], &e) != HURRAY_OK) bench_die("bench_file", "fetch", &e);
    const void *p;
    uint64_t size;
    if (hurray_file_tensor_buffer(all[i], 0, &p, &size) != HURRAY_OK) abort();
    if (touch_bytes) touch(p, size);
    seen += size;
  }
  hurray_file_close(&f);
  for (uint64_t i = 0; i < n; i++) hurray_file_tensor_release(&all[i]);
  double dt = bench_now() - t0;
  free(all);
  if (seen != expect) bench_die("bench_file", "load: wrong byte count", NULL);
  return dt;
}

static double load_raw_mmap(const char *path, uint64_t total) {
  double t0 = bench_now();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) bench_die("bench_file", "raw open", NULL);
  void *p = mmap(NULL, (size_t)total, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) bench_die("bench_file", "raw mmap", NULL);
  close(fd);
  touch(p, total);
  munmap(p, (size_t)total);
  return bench_now() - t0;
}

static double load_raw_read(const char *path, uint64_t total) {
  double t0 = bench_now();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) bench_die("bench_file", "raw open", NULL);
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, (size_t)total) != 0) bench_die("bench_file", "alloc", NULL);
  uint64_t done = 0;
  while (done < total) {
    ssize_t r = pread(fd, (uint8_t *)buf + done, (size_t)(total - done), (off_t)done);
    if (r <= 0) bench_die("bench_file", "raw read", NULL);
    done += (uint64_t)r;
  }
  close(fd);
  free(buf);
  return bench_now() - t0;
}


/* ---- random access ------------------------------------------------------------- */

static void write_many(const char *path, int n) {
  HurrayDescriptor *d = bench_u8_desc("bench_file", 0);
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) bench_die("bench_file", "writer", &e);
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "model.layers.%d.weight", i);
    if (hurray_file_writer_add_tensor(w, name, strlen(name), d, NULL, NULL, &e) != HURRAY_OK)
      bench_die("bench_file", "add", &e);
  }
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) bench_die("bench_file", "finish", &e);
  hurray_file_writer_destroy(&w);
  if (hurray_descriptor_destroy(d) != HURRAY_OK) abort();
}

static void random_access(const char *dir) {
  static const int counts[] = {1000, 10000, 100000};
  double fetch1 = 0;
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    int n = counts[c];
    char path[600];
    snprintf(path, sizeof path, "%s/bench-many-%d.hrry", dir, n);
    write_many(path, n);
    char name[32];
    snprintf(name, sizeof name, "model.layers.%d.weight", n / 2 + 1);
    double best_open = 1e9, best_all = 1e9, first_all = 0;
    for (int r = 0; r < 20; r++) {
      double t0 = bench_now();
      HurrayFile *f = NULL;
      HurrayError e;
      if (hurray_file_open(path, NULL, &f, &e) != HURRAY_OK) bench_die("bench_file", "open", &e);
      double t1 = bench_now();
      uint64_t idx;
      HurrayFileTensor *t = NULL;
      if (hurray_file_find(f, name, strlen(name), &idx) != HURRAY_OK) bench_die("bench_file", "find", NULL);
      if (hurray_file_tensor(f, idx, &t, &e) != HURRAY_OK) bench_die("bench_file", "fetch", &e);
      hurray_file_tensor_release(&t);
      hurray_file_close(&f);
      double t2 = bench_now();
      if (t1 - t0 < best_open) best_open = t1 - t0;
      if (t2 - t0 < best_all) best_all = t2 - t0;
      if (r == 0) first_all = t2 - t0;
    }
    /* The fetch alone (find + fetch + release), file open: over 1000 random
     * names, first when their pages are untouched (each fetch then takes a
     * page fault on its descriptor), then again with the pages mapped. */
    HurrayFile *f = NULL;
    HurrayError e;
    if (hurray_file_open(path, NULL, &f, &e) != HURRAY_OK) bench_die("bench_file", "open", &e);
    enum { K = 1000, ROUNDS = 20 };
    static char names[K][40];
    unsigned seed = 12345;
    for (int k = 0; k < K; k++) {
      seed = seed * 1103515245u + 12345u;
      snprintf(names[k], sizeof names[k], "model.layers.%d.weight",
               (int)((seed >> 8) % (unsigned)n));
    }
    double cold = 0, warm = 0;
    for (int r = 0; r <= ROUNDS; r++) {
      double t0 = bench_now();
      for (int k = 0; k < K; k++) {
        uint64_t idx;
        HurrayFileTensor *t = NULL;
        if (hurray_file_find(f, names[k], strlen(names[k]), &idx) != HURRAY_OK) bench_die("bench_file", "find", NULL);
        if (hurray_file_tensor(f, idx, &t, &e) != HURRAY_OK) bench_die("bench_file", "fetch", &e);
        hurray_file_tensor_release(&t);
      }
      double dt = (bench_now() - t0) / K;
      if (r == 0) cold = dt;
      else if (r == 1 || dt < warm) warm = dt;
    }
    hurray_file_close(&f);
    if (c == 0) fetch1 = warm;
    printf("random access, %6d tensors: open %.3f ms, open+find+fetch one+close %.3f ms "
           "(first time %.3f ms); find+fetch %.2f us first touch, %.2f us warm (x%.2f of 1k)\n",
           n, best_open * 1e3, best_all * 1e3, first_all * 1e3, cold * 1e6, warm * 1e6,
           warm / fetch1);
    unlink(path);
  }
}

int main(int argc, char **argv) {
  uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 1024;
  int count = argc > 2 ? atoi(argv[2]) : 64;
  const char *dir = argc > 3 ? argv[3] : getenv("TMPDIR");
  if (dir == NULL || *dir == '\0') dir = "/tmp";
  if (count < 1) count = 1;
  uint64_t total = (mib << 20) / (uint64_t)count * (uint64_t)count;
  char hpath[600], rpath[600];
  snprintf(hpath, sizeof hpath, "%s/bench-file.hrry", dir);
  snprintf(rpath, sizeof rpath, "%s/bench-file.raw", dir);
  uint8_t *data = NULL;
  if (posix_memalign((void **)&data, 4096, (size_t)total) != 0) bench_die("bench_file", "alloc", NULL);
  for (uint64_t i = 0; i < total; i += 4096) memset(data + i, (int)(i >> 12), 4096);
  printf("bench_file: %llu MiB in %d tensors, files in %s (kept in the page cache)\n",
         (unsigned long long)(total >> 20), count, dir);

  enum { RUNS = 5 };
  double s_h = 1e9, s_r = 1e9, m_h = 1e9, m_r = 1e9, r_h = 1e9, r_r = 1e9;
  for (int r = 0; r < RUNS; r++) {
    double a = save_hurray(hpath, data, total, count), b = save_raw(rpath, data, total);
    if (a < s_h) s_h = a;
    if (b < s_r) s_r = b;
  }
  free(data);
  for (int r = 0; r < RUNS; r++) {
    double a = load_hurray(hpath, HURRAY_FILE_ACCESS_MMAP, true, total);
    double b = load_raw_mmap(rpath, total);
    if (a < m_h) m_h = a;
    if (b < m_r) m_r = b;
    a = load_hurray(hpath, HURRAY_FILE_ACCESS_READ, false, total);
    b = load_raw_read(rpath, total);
    if (a < r_h) r_h = a;
    if (b < r_r) r_r = b;
  }
  double gib = (double)total / (double)(1ull << 30);
  printf("save:       hurray %6.2f GiB/s   one write()      %6.2f GiB/s   ratio %.2f (target >= 0.8)\n",
         gib / s_h, gib / s_r, s_r / s_h);
  printf("load mmap:  hurray %6.2f GiB/s   mmap + touch     %6.2f GiB/s   ratio %.2f (target >= 0.9)\n",
         gib / m_h, gib / m_r, m_r / m_h);
  printf("load read:  hurray %6.2f GiB/s   one read()       %6.2f GiB/s   ratio %.2f (target >= 0.8)\n",
         gib / r_h, gib / r_r, r_r / r_h);
  unlink(hpath);
  unlink(rpath);
  random_access(dir);
  return 0;
}
