/*
 * CRC-32C in bursts, for a loop that interleaves them with its own work over
 * the same bytes (the index walk, index.c): each burst advances the checksum
 * by about HURRAY__CRC_BURST_BYTES, so the bytes are read from memory once,
 * and the checksum's instructions overlap with the walk's.
 *
 * Two engines, both giving the same value as hurray_crc32c(0, data, len):
 *
 *  - CLMUL512 (x86-64 with AVX-512F and VPCLMULQDQ, detected at run time):
 *    carry-less multiplication folding. A 64-byte accumulator (four 128-bit
 *    lanes) holds a message that has the same CRC, started from 0, as the
 *    bytes folded so far; each next 64-byte block B turns it into
 *    lo(A) * k1 ^ hi(A) * k2 ^ B lane by lane, with k1 = x^(8*64+32-1) and
 *    k2 = x^(8*64-32-1) mod P (bit-reflected). At the end the lanes are folded
 *    into one the same way (distances 48, 32 and 16 bytes), that one is
 *    checksummed, then the tail. The standard initial value is added last:
 *    register(~0, M) = shift(~0, |M|) ^ register(0, M). One multiplier
 *    chain of 4 cycles per 64 bytes, on a port the walk does not use;
 *  - STREAMS3 (the crc32 instruction: x86-64 with SSE4.2, aarch64 with the
 *    CRC extension): three streams over the thirds of the data, merged at
 *    the end with hurray__crc32c_shift.
 *
 * The same folding also runs on its own over large inputs (hurray__crc32c_bulk,
 * which hurray_crc32c uses from HURRAY__CRC_BULK_MIN bytes): four accumulators
 * over the interleaved 64-byte blocks of each 256 bytes, so four multiplier
 * chains run at once (about 60 GB/s in the cache, against 10 for the crc32
 * instruction's three streams); merged by folding them 192, 128 and 64 bytes
 * forward. Its constants are x^(8d+31) and x^(8d-33) mod P for d = 256, 192
 * and 128, as the 64-byte ones are for d = 64.
 *
 * The constants are checked by test_bursts_every_engine (tests/c/test_file_crc.c):
 * each fold distance shows in the result for some length.
 */
#include "internal/file.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_STEP 1
#define HAVE_CLMUL512 1
#include <immintrin.h>
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

/* ---- CLMUL512 ------------------------------------------------------------------ */

#if defined(HAVE_CLMUL512)
#define CLMUL_BLOCKS 4u /* 64-byte blocks per burst */

/* x^e mod P, bit-reflected, for the fold distances (see the top comment). */
#define K64_LO 0x740eef02u /* x^543 */
#define K64_HI 0x9e4addf8u /* x^479 */
#define K48_LO 0x1c291d04u /* x^415 */
#define K48_HI 0xddc0152bu /* x^351 */
#define K32_LO 0x3da6d0cbu /* x^287 */
#define K32_HI 0xba4fc28eu /* x^223 */
#define K16_LO 0xf20c0dfeu /* x^159 */
#define K16_HI 0x493c7d27u /* x^95 */

__attribute__((target("avx512f,vpclmulqdq"))) static void clmul512_burst(HurrayCrcBursts *c) {
  uint64_t left = c->len - c->done;
  if (left < 64 || c->done < 64) return; /* nothing to fold, or nothing loaded yet */
  uint64_t blocks = left / 64 < CLMUL_BLOCKS ? left / 64 : CLMUL_BLOCKS;
  const __m512i k = _mm512_set_epi64(K64_HI, K64_LO, K64_HI, K64_LO, K64_HI, K64_LO, K64_HI,
                                     K64_LO);
  const uint8_t *p = c->data + c->done;
  __m512i a = _mm512_loadu_si512((const void *)c->acc);
  for (uint64_t b = 0; b < blocks; b++, p += 64) {
    __m512i in = _mm512_loadu_si512((const void *)p);
    a = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                  _mm512_clmulepi64_epi128(a, k, 0x11), in, 0x96); /* xor3 */
  }
  _mm512_storeu_si512((void *)c->acc, a);
  c->done += 64 * blocks;
}

/* lane * (lo, hi): the lane moved forward by the distance of (lo, hi). */
__attribute__((target("pclmul,sse2"))) static __m128i fold128(__m128i lane, uint32_t lo,
                                                              uint32_t hi) {
  const __m128i k = _mm_set_epi64x((long long)hi, (long long)lo);
  return _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11));
}

__attribute__((target("avx512f,vpclmulqdq,pclmul"))) static uint32_t clmul512_finish(
    HurrayCrcBursts *c) {
  uint32_t reg; /* register(0, data) */
  if (c->len < 64) {
    reg = raw_update(0, c->data, c->len);
  } else {
    while (c->len - c->done >= 64) clmul512_burst(c);
    __m512i a = _mm512_loadu_si512((const void *)c->acc);
    __m128i r = _mm512_extracti32x4_epi32(a, 3);
    r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(a, 0), K48_LO, K48_HI));
    r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(a, 1), K32_LO, K32_HI));
    r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(a, 2), K16_LO, K16_HI));
    uint8_t last[16];
    _mm_storeu_si128((__m128i *)(void *)last, r);
    reg = raw_update(0, last, 16);
    reg = raw_update(reg, c->data + c->done, c->len - c->done);
  }
  return ~(hurray__crc32c_shift(0xFFFFFFFFu, c->len) ^ reg);
}

/* Fold distances of the bulk loop (x^(8d+31) and x^(8d-33) mod P, as above). */
#define K128_LO 0x6992cea2u /* x^1055 */
#define K128_HI 0x0d3b6092u /* x^991 */
#define K192_LO 0xa87ab8a8u /* x^1567 */
#define K192_HI 0xab7aff2au /* x^1503 */
#define K256_LO 0xdcb17aa4u /* x^2079 */
#define K256_HI 0xb9e02b86u /* x^2015 */

#define KPAIR(lo, hi) _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo)

/* a moved forward by the distance of k, plus b. */
__attribute__((target("avx512f,vpclmulqdq"))) static inline __m512i fold512(__m512i a, __m512i k,
                                                                           __m512i b) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                   _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96);
}

/*
 * register(0, data[0, len)) for len >= 256: four accumulators over the
 * interleaved 64-byte blocks of each 256 bytes (four independent multiplier
 * chains instead of the bursts' one), merged at the end by folding them
 * forward 192, 128 and 64 bytes; then as clmul512_finish.
 */
__attribute__((target("avx512f,vpclmulqdq,pclmul"))) static uint32_t clmul512_bulk(
    const uint8_t *p, uint64_t len) {
  __m512i a0 = _mm512_loadu_si512((const void *)p);
  __m512i a1 = _mm512_loadu_si512((const void *)(p + 64));
  __m512i a2 = _mm512_loadu_si512((const void *)(p + 128));
  __m512i a3 = _mm512_loadu_si512((const void *)(p + 192));
  p += 256;
  len -= 256;
  const __m512i k256 = KPAIR(K256_LO, K256_HI);
  while (len >= 256) {
    a0 = fold512(a0, k256, _mm512_loadu_si512((const void *)p));
    a1 = fold512(a1, k256, _mm512_loadu_si512((const void *)(p + 64)));
    a2 = fold512(a2, k256, _mm512_loadu_si512((const void *)(p + 128)));
    a3 = fold512(a3, k256, _mm512_loadu_si512((const void *)(p + 192)));
    p += 256;
    len -= 256;
  }
  const __m512i k64 = KPAIR(K64_LO, K64_HI);
  __m512i a = fold512(a0, KPAIR(K192_LO, K192_HI), a3);
  a = fold512(a1, KPAIR(K128_LO, K128_HI), a);
  a = fold512(a2, k64, a);
  for (; len >= 64; p += 64, len -= 64) a = fold512(a, k64, _mm512_loadu_si512((const void *)p));
  __m128i r = _mm512_extracti32x4_epi32(a, 3);
  r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(a, 0), K48_LO, K48_HI));
  r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(a, 1), K32_LO, K32_HI));
  r = _mm_xor_si128(r, fold128(_mm512_extracti32x4_epi32(a, 2), K16_LO, K16_HI));
  uint8_t last[16];
  _mm_storeu_si128((__m128i *)(void *)last, r);
  uint32_t reg = raw_update(0, last, 16);
  return raw_update(reg, p, len);
}

static bool clmul512_available(void) {
  static atomic_int cached = -1; /* every thread computes the same value */
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
        __builtin_cpu_supports("pclmul");
    atomic_store_explicit(&cached, v, memory_order_relaxed);
  }
  return v == 1;
}
#endif

/* ---- the interface ------------------------------------------------------------- */

bool hurray__crc32c_bulk_available(void) {
#if defined(HAVE_CLMUL512)
  return clmul512_available();
#else
  return false;
#endif
}

uint32_t hurray__crc32c_bulk(uint32_t crc, const void *data, uint64_t len) {
#if defined(HAVE_CLMUL512)
  if (len >= 256 && clmul512_available()) {
    /* register(~crc, data) = shift(~crc, len) ^ register(0, data) */
    uint32_t reg = clmul512_bulk((const uint8_t *)data, len);
    return ~(hurray__crc32c_shift(~crc, len) ^ reg);
  }
#endif
  return ~raw_update(~crc, (const uint8_t *)data, len);
}

bool hurray__crc32c_bursts_available(int kind) {
  switch (kind) {
#if defined(HAVE_CLMUL512)
    case HURRAY__CRC_BURSTS_CLMUL512: return clmul512_available();
#endif
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
#if defined(HAVE_CLMUL512)
  if (kind == HURRAY__CRC_BURSTS_CLMUL512) {
    if (len >= 64) {
      memcpy(c->acc, data, 64);
      c->done = 64;
      c->burst = clmul512_burst;
    }
    return;
  }
#endif
#if defined(HAVE_STEP)
  if (kind == HURRAY__CRC_BURSTS_STREAMS3) {
    c->third = (len / 3) & ~(uint64_t)7;
    c->c0 = 0xFFFFFFFFu; /* the standard initial value, as a raw register */
    c->burst = streams3_burst;
  }
#endif
}

uint32_t hurray__crc32c_bursts_finish(HurrayCrcBursts *c) {
#if defined(HAVE_CLMUL512)
  if (c->kind == HURRAY__CRC_BURSTS_CLMUL512) return clmul512_finish(c);
#endif
  if (c->kind == HURRAY__CRC_BURSTS_STREAMS3) return streams3_finish(c);
  return hurray_crc32c(0, c->data, (size_t)c->len);
}
