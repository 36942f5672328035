/*
 * bench_descriptor: nanoseconds per descriptor for
 *   decode  = hurray_descriptor_decode_ex (strict: parse + full validation)
 *             followed by hurray_descriptor_destroy,
 *   encode  = hurray_descriptor_encode into a caller buffer,
 *   floor   = hurray_alloc + memcpy of the same bytes + hurray_free, the peer
 *             every decode has to beat at least (one allocation, one copy),
 * for every descriptor of the golden corpus (../shared/golden, or argv[1], or
 * HURRAY_GOLDEN_DIR) and for built-in dense and sparse descriptors.
 * Each figure is the best of 11 rounds (the machine is shared, so the best
 * round is the least disturbed one); the ratio column is decode / floor.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hurray/hurray.h"

#ifndef HURRAY_BENCH_GOLDEN_DIR
#define HURRAY_BENCH_GOLDEN_DIR "../shared/golden"
#endif

#define ROUNDS 11

static volatile uint64_t g_sink;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double best(double *v) {
  qsort(v, ROUNDS, sizeof *v, cmp_double);
  return v[0];
}

static long iterations_for(size_t len) { return len < 512 ? 200000 : 20000; }

static double bench_decode(const uint8_t *b, size_t n) {
  double r[ROUNDS];
  long iters = iterations_for(n);
  for (int round = 0; round < ROUNDS; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      HurrayDescriptor *d = NULL;
      if (hurray_descriptor_decode_ex(b, n, HURRAY_DECODE_STRICT, &d, NULL) != HURRAY_OK) abort();
      g_sink += (uintptr_t)d;
      if (hurray_descriptor_destroy(d) != HURRAY_OK) abort();
    }
    r[round] = (now_ns() - t0) / (double)iters;
  }
  return best(r);
}

static double bench_encode(const HurrayDescriptor *d, size_t n) {
  double r[ROUNDS];
  long iters = iterations_for(n);
  uint8_t *out = malloc(n);
  for (int round = 0; round < ROUNDS; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      uint64_t len = 0;
      if (hurray_descriptor_encode(d, out, n, &len) != HURRAY_OK) abort();
      g_sink += out[i % (long)n];
    }
    r[round] = (now_ns() - t0) / (double)iters;
  }
  free(out);
  return best(r);
}

static double bench_floor(const uint8_t *b, size_t n) {
  double r[ROUNDS];
  long iters = iterations_for(n);
  for (int round = 0; round < ROUNDS; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      uint8_t *p = hurray_alloc(n, 16);
      if (p == NULL) abort();
      memcpy(p, b, n);
      g_sink += p[i % (long)n];
      hurray_free(p);
    }
    r[round] = (now_ns() - t0) / (double)iters;
  }
  return best(r);
}

static void run_one(const char *name, const uint8_t *b, size_t n) {
  HurrayDescriptor *d = NULL;
  HurrayError err;
  if (hurray_descriptor_decode_ex(b, n, HURRAY_DECODE_STRICT, &d, &err) != HURRAY_OK) {
    printf("%-34s %6zu  decode failed: %s\n", name, n, err.message);
    return;
  }
  double dec = bench_decode(b, n), enc = bench_encode(d, n), flo = bench_floor(b, n);
  printf("%-34s %6zu %10.1f %10.1f %10.1f %8.2f\n", name, n, dec, enc, flo, dec / flo);
  if (hurray_descriptor_destroy(d) != HURRAY_OK) abort();
}

static void run_fields(const char *name, const HurrayDescriptorFields *f) {
  HurrayDescriptor *d = NULL;
  HurrayError err;
  if (hurray_descriptor_from_fields(f, 0, &d, &err) != HURRAY_OK) {
    printf("%-34s  build failed: %s\n", name, err.message);
    return;
  }
  uint64_t n = 0;
  if (hurray_descriptor_encoded_len(d, &n) != HURRAY_OK) abort();
  uint8_t *b = malloc(n);
  if (hurray_descriptor_encode(d, b, n, &n) != HURRAY_OK) abort();
  run_one(name, b, (size_t)n);
  free(b);
  if (hurray_descriptor_destroy(d) != HURRAY_OK) abort();
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_golden(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/descriptors", dir);
  DIR *dp = opendir(path);
  if (dp == NULL) {
    printf("golden corpus absent (%s): skipped\n", path);
    return;
  }
  char *names[256];
  int count = 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL && count < 256) {
    size_t l = strlen(e->d_name);
    if (l > 4 && strcmp(e->d_name + l - 4, ".bin") == 0) names[count++] = strdup(e->d_name);
  }
  closedir(dp);
  qsort(names, (size_t)count, sizeof names[0], by_name);
  for (int i = 0; i < count; i++) {
    snprintf(path, sizeof path, "%s/descriptors/%s", dir, names[i]);
    FILE *f = fopen(path, "rb");
    uint8_t buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    char label[64];
    snprintf(label, sizeof label, "golden/%.*s", (int)(strlen(names[i]) - 4), names[i]);
    run_one(label, buf, n);
    free(names[i]);
  }
}

static HurrayBufferHandle cpu(uint64_t size) {
  HurrayBufferHandle h = {size, 64, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                          HURRAY_MEMORY_STANDARD, 0};
  return h;
}

static void run_builtin(void) {
  HurrayDescriptorFields f;
  HurrayBufferHandle b[8];

  static const uint64_t d34[2] = {3, 4};
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = d34;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  b[0] = cpu(48);
  f.buffer_count = 1;
  f.buffers = b;
  run_fields("dense row_major f32 [3,4]", &f);

  static const uint64_t d4[4] = {8, 16, 32, 64};
  f.rank = 4;
  f.shape = d4;
  b[0] = cpu(8u * 16u * 32u * 64u * 2u);
  f.type_tag = HURRAY_DTYPE_BFLOAT16;
  run_fields("dense row_major bf16 rank 4", &f);

  static const int64_t st4[4] = {16384, 1024, 32, 1};
  f.layout.tag = HURRAY_LAYOUT_STRIDED;
  f.layout.u.strided.strides = st4;
  b[0] = cpu(8u * 16384u * 2u);
  run_fields("dense strided bf16 rank 4", &f);

  static const uint64_t d88[2] = {64, 64}, t16[2] = {16, 16}, t4[2] = {4, 4};
  HurrayTiledLevel lv[2] = {{t16, 0x01, 0x04, NULL, NULL}, {t4, 0x01, 0x01, NULL, NULL}};
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = d88;
  f.layout.tag = HURRAY_LAYOUT_TILED;
  f.layout.u.tiled.depth = 2;
  f.layout.u.tiled.levels = lv;
  b[0] = cpu(64u * 64u * 4u);
  run_fields("dense tiled f32 2 levels", &f);

  /* int8 with per-tensor affine quantization and statistics */
  static const uint8_t qraw[16] = {0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3F,
                                   0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.raw = qraw;
  q.raw_len = 16;
  HurrayStatistics s;
  memset(&s, 0, sizeof s);
  s.computed_mask = HURRAY_STAT_VALUE_RANGE_VALID;
  s.value_min = -1.0;
  s.value_max = 1.0;
  s.value_abs_max = 1.0;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_INT8;
  f.rank = 2;
  f.shape = d34;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  b[0] = cpu(12);
  f.buffer_count = 1;
  f.buffers = b;
  f.quantization = &q;
  f.statistics = &s;
  run_fields("dense int8 per-tensor + stats", &f);

  static const uint64_t d44[2] = {4, 4};
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = d44;
  f.layout.tag = HURRAY_LAYOUT_COO;
  f.layout.u.coo.nnz = 3;
  f.layout.u.coo.is_sorted = 1;
  b[0] = cpu(12);
  b[1] = cpu(48);
  f.buffer_count = 2;
  f.buffers = b;
  run_fields("sparse coo f32 [4,4]", &f);

  static const uint64_t d33[2] = {3, 3};
  f.shape = d33;
  f.layout.tag = HURRAY_LAYOUT_CSR;
  f.layout.u.csr.nnz = 2;
  b[0] = cpu(8);
  b[1] = cpu(16);
  b[2] = cpu(32);
  f.buffer_count = 3;
  run_fields("sparse csr f32 [3,3]", &f);

  static const uint64_t d234[3] = {2, 3, 4};
  static const uint32_t mo[3] = {0, 1, 2};
  static const uint64_t csf_sizes[7] = {16, 16, 16, 24, 24, 32, 32};
  f.rank = 3;
  f.shape = d234;
  f.layout.tag = HURRAY_LAYOUT_CSF;
  f.layout.u.csf.nnz = 4;
  f.layout.u.csf.mode_order = mo;
  for (int i = 0; i < 7; i++) b[i] = cpu(csf_sizes[i]);
  f.buffer_count = 7;
  run_fields("sparse csf f32 [2,3,4]", &f);
}

/* The fields of a dense tensor: hurray_descriptor_fields_dense against the
 * full check (hurray_descriptor_validate) of the same fields, per call. */
static void run_dense(void) {
  static const uint64_t shape[3] = {64, 128, 3};
  double rd[ROUNDS], rv[ROUNDS];
  const long iters = 1000000;
  HurrayBufferHandle h;
  HurrayDescriptorFields f;
  for (int round = 0; round < ROUNDS; round++) {
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      if (hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 3, shape, HURRAY_LAYOUT_ROW_MAJOR,
                                         64u * 128u * 3u * 4u, 64, &h, &f, NULL) != HURRAY_OK)
        abort();
      g_sink += f.rank;
    }
    rd[round] = (now_ns() - t0) / (double)iters;
    t0 = now_ns();
    for (long i = 0; i < iters; i++) {
      if (hurray_descriptor_validate(&f, HURRAY_DECODE_STRICT, NULL) != HURRAY_OK) abort();
      g_sink += f.rank;
    }
    rv[round] = (now_ns() - t0) / (double)iters;
  }
  double d = best(rd), v = best(rv);
  printf("\n%-34s %10s %10s %8s\n", "dense fields f32 [64,128,3]", "dense ns", "check ns",
         "ratio");
  printf("%-34s %10.1f %10.1f %8.2f\n", "hurray_descriptor_fields_dense", d, v, d / v);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : getenv("HURRAY_GOLDEN_DIR");
  if (dir == NULL || dir[0] == '\0') dir = HURRAY_BENCH_GOLDEN_DIR;
  printf("%-34s %6s %10s %10s %10s %8s\n", "descriptor", "bytes", "decode ns", "encode ns",
         "floor ns", "dec/flr");
  run_golden(dir);
  run_builtin();
  run_dense();
  return g_sink == 42 ? 1 : 0;
}
