/*
 * Data checksums (docs/reference/file-format.md § Data checksums): what they cost the
 * writer, and how fast hurray_file_verify_data reads them back.
 *
 *   save      the same tensors written with data_checksums and without, in
 *             alternating runs (ratio of the best of each; target <= 1.10)
 *   verify    hurray_file_verify_data over the file warm in the page cache,
 *             mapped (MMAP) and with plain reads (READ): GB/s (target >= 5)
 *   crc       hurray_crc32c over the same bytes in memory: the ceiling
 *
 * Usage: bench_checksums [total MiB = 1024] [tensors = 64] [runs = 5]
 *                        [directory = $TMPDIR or /tmp] [durable = 0]
 * The file stays in the page cache (tmpfs or a disk with free memory):
 * durable=1 adds the writer's fsyncs, which hide the checksum's cost behind
 * the disk.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hurray/hurray.h"
#include "bench_util.h"

static double save(const char *path, const uint8_t *data, uint64_t total, int count,
                   bool checksums, bool durable) {
  uint64_t each = total / (uint64_t)count;
  HurrayDescriptor *d = bench_u8_desc("bench_checksums", each);
  unlink(path);
  double t0 = bench_now();
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  o.skip_fsync = !durable;
  o.data_checksums = checksums;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) bench_die("bench_checksums", "open", &e);
  for (int i = 0; i < count; i++) {
    char name[32];
    int n = snprintf(name, sizeof name, "layer%d.weight", i);
    const void *b[1] = {data + (uint64_t)i * each};
    if (hurray_file_writer_add_tensor(w, name, (size_t)n, d, b, NULL, &e) != HURRAY_OK)
      bench_die("bench_checksums", "add_tensor", &e);
  }
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) bench_die("bench_checksums", "finish", &e);
  double t = bench_now() - t0;
  hurray_file_writer_destroy(&w);
  (void)!hurray_descriptor_destroy(d);
  return t;
}

static double verify(const char *path, HurrayFileAccess access, uint64_t *bytes) {
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = access;
  double t0 = bench_now();
  HurrayFile *f = NULL;
  HurrayError e;
  if (hurray_file_open(path, &o, &f, &e) != HURRAY_OK) bench_die("bench_checksums", "open", &e);
  HurrayFileDataReport r;
  if (hurray_file_verify_data(f, &r, &e) != HURRAY_OK) bench_die("bench_checksums", "verify", &e);
  hurray_file_close(&f);
  *bytes = r.bytes;
  return bench_now() - t0;
}

int main(int argc, char **argv) {
  uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 1024;
  int count = argc > 2 ? atoi(argv[2]) : 64;
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  const char *tmp = getenv("TMPDIR");
  const char *dir = argc > 4 ? argv[4] : (tmp != NULL && tmp[0] ? tmp : "/tmp");
  bool durable = argc > 5 && atoi(argv[5]) != 0;
  uint64_t total = mib << 20;
  uint8_t *data = malloc((size_t)total);
  if (data == NULL) bench_die("bench_checksums", "malloc", NULL);
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i + 8 <= total; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    memcpy(data + i, &x, 8);
  }
  char path[600];
  snprintf(path, sizeof path, "%s/bench_checksums.hrry", dir);
  printf("bench_checksums: %llu MiB in %d tensors, best of %d, %s, %s\n",
         (unsigned long long)mib, count, runs, dir, durable ? "durable" : "skip_fsync");

  double best_plain = 1e30, best_crc = 1e30;
  (void)save(path, data, total, count, false, durable); /* warm the page cache */
  for (int r = 0; r < runs; r++) {
    double a = save(path, data, total, count, false, durable);
    double b = save(path, data, total, count, true, durable);
    if (a < best_plain) best_plain = a;
    if (b < best_crc) best_crc = b;
  }
  printf("save without checksums  %8.3f s  %6.2f GB/s\n", best_plain,
         (double)total / best_plain / 1e9);
  printf("save with checksums     %8.3f s  %6.2f GB/s\n", best_crc,
         (double)total / best_crc / 1e9);
  printf("save ratio (with / without)  %.3f   (target <= 1.10)\n", best_crc / best_plain);

  uint64_t bytes = 0;
  const HurrayFileAccess modes[2] = {HURRAY_FILE_ACCESS_MMAP, HURRAY_FILE_ACCESS_READ};
  const char *names[2] = {"mmap", "read"};
  for (int m = 0; m < 2; m++) {
    double best = 1e30;
    (void)verify(path, modes[m], &bytes);
    for (int r = 0; r < runs; r++) {
      double t = verify(path, modes[m], &bytes);
      if (t < best) best = t;
    }
    printf("verify (%s, warm)      %8.3f s  %6.2f GB/s   (target >= 5)\n", names[m], best,
           (double)bytes / best / 1e9);
  }
  double best = 1e30;
  volatile uint32_t sink = 0;
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now();
    sink ^= hurray_crc32c(0, data, (size_t)total);
    double t = bench_now() - t0;
    if (t < best) best = t;
  }
  printf("hurray_crc32c in memory %8.3f s  %6.2f GB/s\n", best, (double)total / best / 1e9);
  (void)sink;
  unlink(path);
  free(data);
  return 0;
}
