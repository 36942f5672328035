/* What the C benchmarks share: a clock, a fatal error, a uint8 descriptor. */
#ifndef HURRAY_BENCH_UTIL_H
#define HURRAY_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hurray/hurray.h"

/* Seconds on the monotonic clock. */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Prints "<prog>: <what>: <message>" and exits 1. */
static inline void bench_die(const char *prog, const char *what, const HurrayError *e) {
  fprintf(stderr, "%s: %s: %s\n", prog, what, e != NULL ? e->message : "failed");
  exit(1);
}

/* A uint8 [n] row-major descriptor over one 64-byte-aligned buffer. Owned:
 * hurray_descriptor_destroy. */
static inline HurrayDescriptor *bench_u8_desc(const char *prog, uint64_t n) {
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = n;
  h.alignment = 64;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_UINT8;
  f.rank = 1;
  f.shape = &n;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, 0, &d, &e) != HURRAY_OK) bench_die(prog, "descriptor", &e);
  return d;
}

#endif /* HURRAY_BENCH_UTIL_H */
