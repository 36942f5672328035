/*
 * CRC-32C in bursts, for a loop that interleaves them with its own work over
 * the same bytes (the index walk, index.c): each burst advances the checksum
 * by about HURRAY__CRC_BURST_BYTES, so the bytes are read from memory once,
 * and the checksum's instructions overlap with the walk's.
 *
 * Two engines, both giving the same value as hurray_crc32c(0, data, len):
 *
 *  - CLMUL512 (x86-64 with AVX-512F and VPCLMULQDQ, detected at run time):
 *    carry-less multiplication folding, 256 bytes a burst. Its code lives in
 *    crc32c.c (hurray__crc32c_clmul_start/_finish) beside the bulk loop of
 *    hurray_crc32c, which shares its folding and constants; this file sits
 *    above crc32c.c and is never called back by it;
 *  - STREAMS3 (the crc32 instruction: x86-64 with SSE4.2, aarch64 with the
 *    CRC extension): three streams over the thirds of the data, merged at
 *    the end with hurray__crc32c_shift.
 *
 * The engines are checked by test_bursts_every_engine (tests/c/test_file_crc.c).
 */
#include "internal/file.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_STEP 1
/* One 8-byte step of the raw register (only when hurray__crc32c_hw_available();
 * written in assembly so that no function needs a target attribute). */
static inline uint64_t step(uint64_t reg, uint64_t word) {
  __asm__("crc32q %1, %0" : "+r"(reg) : "r"(word));
  return reg;
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32) && \
    (defined(__GNUC__) || defined(__clang__))
#define HAVE_STEP 1
#include <arm_acle.h>
static inline uint64_t step(uint64_t reg, uint64_t word) {
  return __crc32cd((uint32_t)reg, word);
}
#endif

/* The raw register `reg` advanced over [p, p + n). */
static uint32_t raw_update(uint32_t reg, const uint8_t *p, uint64_t n) {
  return ~hurray_crc32c(~reg, p, (size_t)n);
}

/* ---- STREAMS3 ------------------------------------------------------------------- */

#if defined(HAVE_STEP)
#define STREAM_WORDS 12u /* per third per burst: 3 x 96 = 288 bytes */

static void streams3_burst(HurrayCrcBursts *c) {
  const uint64_t t = c->third;
  if (c->done + 8u * STREAM_WORDS > t) return;
  uint64_t c0 = c->c0, c1 = c->c1, c2 = c->c2;
  const uint8_t *s = c->data + c->done;
  for (unsigned k = 0; k < 8u * STREAM_WORDS; k += 8) {
    c0 = step(c0, hurray__ld64(s + k));
    c1 = step(c1, hurray__ld64(s + t + k));
    c2 = step(c2, hurray__ld64(s + 2 * t + k));
  }
  c->c0 = c0;
  c->c1 = c1;
  c->c2 = c2;
  c->done += 8u * STREAM_WORDS;
}
#endif

static uint32_t streams3_finish(const HurrayCrcBursts *c) {
  const uint8_t *d = c->data;
  const uint64_t t = c->third, n = c->done;
  uint32_t r0 = raw_update((uint32_t)c->c0, d + n, t - n);
  uint32_t r1 = raw_update((uint32_t)c->c1, d + t + n, t - n);
  uint32_t r2 = raw_update((uint32_t)c->c2, d + 2 * t + n, t - n);
  uint32_t r = hurray__crc32c_shift(hurray__crc32c_shift(r0, t) ^ r1, t) ^ r2;
  return ~raw_update(r, d + 3 * t, c->len - 3 * t);
}

/* ---- the interface ------------------------------------------------------------- */

bool hurray__crc32c_bursts_available(int kind) {
  switch (kind) {
    case HURRAY__CRC_BURSTS_CLMUL512: return hurray__crc32c_bulk_available();
#if defined(HAVE_STEP)
    case HURRAY__CRC_BURSTS_STREAMS3: return hurray__crc32c_hw_available();
#endif
    default: return false;
  }
}

int hurray__crc32c_bursts_best(void) {
  if (hurray__crc32c_bursts_available(HURRAY__CRC_BURSTS_CLMUL512))
    return HURRAY__CRC_BURSTS_CLMUL512;
  if (hurray__crc32c_bursts_available(HURRAY__CRC_BURSTS_STREAMS3))
    return HURRAY__CRC_BURSTS_STREAMS3;
  return HURRAY__CRC_BURSTS_NONE;
}

static void no_burst(HurrayCrcBursts *c) { (void)c; }

void hurray__crc32c_bursts_init(HurrayCrcBursts *c, int kind, const void *data, uint64_t len) {
  memset(c, 0, sizeof *c);
  c->data = data;
  c->len = len;
  c->kind = kind;
  c->burst = no_burst;
  if (kind == HURRAY__CRC_BURSTS_CLMUL512) {
    hurray__crc32c_clmul_start(c);
    return;
  }
#if defined(HAVE_STEP)
  if (kind == HURRAY__CRC_BURSTS_STREAMS3) {
    c->third = (len / 3) & ~(uint64_t)7;
    c->c0 = 0xFFFFFFFFu; /* the standard initial value, as a raw register */
    c->burst = streams3_burst;
  }
#endif
}

uint32_t hurray__crc32c_bursts_finish(HurrayCrcBursts *c) {
  if (c->kind == HURRAY__CRC_BURSTS_CLMUL512) return hurray__crc32c_clmul_finish(c);
  if (c->kind == HURRAY__CRC_BURSTS_STREAMS3) return streams3_finish(c);
  return hurray_crc32c(0, c->data, (size_t)c->len);
}
