/*
 * bench_quant: GB/s of float32 input (quantize) or output (dequantize) of
 * hurray_quant_quantize_f32 / hurray_quant_dequantize_f32 on a row-major
 * [rows, 4096] float32 tensor (default 64 MiB: 4096 rows), one thread, for
 * the block schemes along the last axis:
 *   int4 / int8 symmetric per-block (block 32, float16 scales: Q4 / Q8_0-like),
 *   uint4 asymmetric per-block, NF4 (block 64), MXFP4 and MXFP8 (block 32),
 * and the peer: memcpy of the same float32 bytes (what any pass over the
 * input costs at least). Each figure is the best of ROUNDS rounds (the
 * machine is shared, so the best round is the least disturbed one).
 *
 *   bench_quant [MIB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hurray/hurray.h"

#define ROUNDS 7
#define COLS 4096u

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Case {
  const char *name;
  uint8_t type, scheme;
  uint32_t block;
  bool symmetric;
  uint8_t scale_type;
} Case;

static const Case k_cases[] = {
    {"int4 per-block sym (f16)", HURRAY_DTYPE_INT4, HURRAY_QUANT_PER_BLOCK_AFFINE, 32, true,
     HURRAY_QUANT_SCALE_F16},
    {"uint4 per-block asym (f16)", HURRAY_DTYPE_UINT4, HURRAY_QUANT_PER_BLOCK_AFFINE, 32, false,
     HURRAY_QUANT_SCALE_F16},
    {"int8 per-block sym (f16)", HURRAY_DTYPE_INT8, HURRAY_QUANT_PER_BLOCK_AFFINE, 32, true,
     HURRAY_QUANT_SCALE_F16},
    {"nf4 (block 64)", HURRAY_DTYPE_UINT4, HURRAY_QUANT_NF4, 64, true, 0},
    {"mxfp4 e2m1", HURRAY_DTYPE_FLOAT4_E2M1, HURRAY_QUANT_MXFP, 32, true, 0},
    {"mxfp8 e4m3", HURRAY_DTYPE_FLOAT8_E4M3, HURRAY_QUANT_MXFP, 32, true, 0},
};

int main(int argc, char **argv) {
  uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 64;
  uint64_t rows = mib * 1024u * 1024u / 4u / COLS, n = rows * COLS;
  if (rows == 0) return 2;
  float *x = hurray_alloc(n * 4, 64), *y = hurray_alloc(n * 4, 64);
  if (x == NULL || y == NULL) return 1;
  uint64_t seed = 88172645463325252ull;
  for (uint64_t i = 0; i < n; i++) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    x[i] = (float)(int64_t)(seed >> 11) * 0x1p-52f - 1.0f; /* uniform in [-1, 1) */
  }
  double best = 1e9;
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_s();
    memcpy(y, x, n * 4);
    double t = now_s() - t0;
    best = t < best ? t : best;
  }
  printf("%llu MiB float32 [%llu, %u], one thread, best of %d\n", (unsigned long long)mib,
         (unsigned long long)rows, COLS, ROUNDS);
  printf("%-28s %10.2f GB/s\n", "memcpy (peer)", (double)n * 4 / best / 1e9);
  printf("%-28s %10s %12s\n", "scheme", "quantize", "dequantize");
  for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++) {
    const Case *k = &k_cases[c];
    uint64_t shape[2] = {rows, COLS};
    HurrayQuantization q;
    memset(&q, 0, sizeof q);
    q.scheme = k->scheme;
    q.version = 1;
    if (k->scheme == HURRAY_QUANT_PER_BLOCK_AFFINE) {
      q.flags = k->symmetric ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
      q.u.per_block.axis = 1;
      q.u.per_block.block_size = k->block;
      q.u.per_block.scale_buffer_index = 1;
      q.u.per_block.zero_point_buffer_index = k->symmetric ? HURRAY_QUANT_NO_BUFFER : 2;
      q.u.per_block.scale_type = k->scale_type;
    } else {
      q.u.nf4.axis = 1; /* NF4 and MXFP share the field layout */
      q.u.nf4.block_size = k->block;
      q.u.nf4.scale_buffer_index = 1;
    }
    HurrayBufferHandle h[3];
    memset(h, 0, sizeof h);
    HurrayDescriptorFields f;
    memset(&f, 0, sizeof f);
    f.version_major = 1;
    f.type_tag = k->type;
    f.rank = 2;
    f.shape = shape;
    f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
    f.quantization = &q;
    f.buffers = h;
    f.buffer_count = k->symmetric ? 2 : 3;
    uint64_t sizes[3] = {0, 0, 0}, count = 0;
    if (hurray_quant_param_sizes(&f, &sizes[1], &sizes[2]) != HURRAY_OK ||
        hurray_quant_storage_count(&f, &count) != HURRAY_OK ||
        hurray_buffer_size_bytes(k->type, count, &sizes[0]) != HURRAY_OK)
      return 1;
    void *bufs[3] = {NULL, NULL, NULL};
    for (uint32_t i = 0; i < f.buffer_count; i++) {
      h[i].byte_size = sizes[i];
      h[i].alignment = 64;
      bufs[i] = hurray_alloc(sizes[i], 64);
      if (bufs[i] == NULL) return 1;
    }
    double bq = 1e9, bd = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
      HurrayError e;
      double t0 = now_s();
      if (hurray_quant_quantize_f32(&f, x, n, bufs, sizes, 0, NULL, &e) != HURRAY_OK) {
        fprintf(stderr, "%s: %s\n", k->name, e.message);
        return 1;
      }
      double t1 = now_s();
      if (hurray_quant_dequantize_f32(&f, (const void *const *)bufs, sizes, y, n, &e) !=
          HURRAY_OK) {
        fprintf(stderr, "%s: %s\n", k->name, e.message);
        return 1;
      }
      double t2 = now_s();
      bq = t1 - t0 < bq ? t1 - t0 : bq;
      bd = t2 - t1 < bd ? t2 - t1 : bd;
    }
    printf("%-28s %5.2f GB/s %7.2f GB/s\n", k->name, (double)n * 4 / bq / 1e9,
           (double)n * 4 / bd / 1e9);
    for (uint32_t i = 0; i < f.buffer_count; i++) hurray_free(bufs[i]);
  }
  hurray_free(x);
  hurray_free(y);
  return 0;
}
