/*
 * CRC-32C (Castagnoli; reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF), used for the index of .hrry files.
 *
 * Two implementations computing the same function:
 *  - portable: slicing by 8 over eight 256-entry tables;
 *  - x86-64 with SSE4.2 (detected at run time): the crc32 instruction over
 *    three independent streams, whose results are merged with a "shift by one
 *    block" operator (the CRC register is linear, so the register after A|B
 *    is shift_|B|(reg after A) xor (reg after B started from 0));
 *  - aarch64 with the CRC extension: its instructions in one stream. Builds
 *    whose -march includes the extension (__ARM_FEATURE_CRC32: Apple arm64,
 *    armv8.1-a and later) use it unconditionally; other Linux builds (the
 *    default -march=armv8-a of Debian, Ubuntu, manylinux) compile the loop
 *    for the extension alone and take it when the kernel reports HWCAP_CRC32.
 * Both work on the raw register (no pre/post inversion); hurray_crc32c adds
 * the inversions.
 *
 * From HURRAY__CRC_BULK_MIN bytes on, x86-64 CPUs with AVX-512F and VPCLMULQDQ
 * (detected at run time) take carry-less multiplication folding instead
 * (hurray__crc32c_bulk; about 60 GB/s in the cache, against 10 for the crc32
 * instruction's three streams). A 64-byte accumulator (four 128-bit lanes)
 * holds a message that has the same CRC, started from 0, as the bytes folded
 * so far; each next 64-byte block B turns it into lo(A) * k1 ^ hi(A) * k2 ^ B
 * lane by lane, with k1 = x^(8*64+32-1) and k2 = x^(8*64-32-1) mod P
 * (bit-reflected). At the end the lanes are folded into one the same way
 * (distances 48, 32 and 16 bytes), that one is checksummed, then the tail.
 * The standard initial value is added last: register(~0, M) = shift(~0, |M|)
 * ^ register(0, M). The bulk loop runs four accumulators over the interleaved
 * 64-byte blocks of each 256 bytes, so four multiplier chains run at once,
 * merged by folding them 192, 128 and 64 bytes forward; its constants are
 * x^(8d+31) and x^(8d-33) mod P for d = 256, 192 and 128, as the 64-byte ones
 * are for d = 64. The same folding with one accumulator is the CLMUL512 engine
 * of the bursts (crc_bursts.c), one multiplier chain of 4 cycles per 64 bytes
 * on a port the index walk does not use. The constants are checked by
 * test_bursts_every_engine and test_paths_agree (tests/c/test_file_crc.c): each
 * fold distance shows in the result for some length.
 */
#include "internal/file.h"

#define CRC32C_POLY 0x82F63B78u

static uint32_t g_table[8][256];
static HurrayOnce g_table_once = HURRAY__ONCE_INIT;

static void build_tables(void) {
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t c = b;
    for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
    g_table[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t c = g_table[0][b];
    for (int t = 1; t < 8; t++) {
      c = (c >> 8) ^ g_table[0][c & 0xFFu];
      g_table[t][b] = c;
    }
  }
}

static const uint32_t (*tables(void))[256] {
  hurray__once(&g_table_once, build_tables);
  return (const uint32_t(*)[256])g_table;
}

/* Raw register update, portable. */
static uint32_t sw_update(uint32_t crc, const uint8_t *p, size_t n, const uint32_t (*t)[256]) {
  while (n > 0 && ((uintptr_t)p & 7u) != 0) {
    crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFFu];
    n--;
  }
  while (n >= 8) {
    uint32_t lo = hurray__ld32(p) ^ crc;
    uint32_t hi = hurray__ld32(p + 4);
    crc = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^
          t[4][lo >> 24] ^ t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^
          t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFFu];
  return crc;
}

/* a * b mod P, polynomials in the reflected order of the register (bit 31
 * holds x^0, bit 0 holds x^31). */
static uint32_t gf2_mulmod(uint32_t a, uint32_t b) {
  uint32_t prod = 0;
  for (uint32_t bit = 0x80000000u; bit != 0 && a != 0; bit >>= 1) {
    if (a & bit) {
      prod ^= b;
      a ^= bit;
    }
    b = (b & 1u) ? (b >> 1) ^ CRC32C_POLY : b >> 1; /* b *= x */
  }
  return prod;
}

uint32_t hurray__crc32c_shift(uint32_t reg, uint64_t nbytes) {
  /* x^(8 nbytes) by square and multiply, starting from x^8. */
  uint32_t power = 0x80000000u >> 8, xn = 0x80000000u;
  for (; nbytes != 0; nbytes >>= 1) {
    if (nbytes & 1u) xn = gf2_mulmod(xn, power);
    if (nbytes > 1) power = gf2_mulmod(power, power);
  }
  return gf2_mulmod(reg, xn);
}

uint32_t hurray__crc32c_sw(uint32_t crc, const void *data, size_t len) {
  if (len == 0) return crc;
  return ~sw_update(~crc, (const uint8_t *)data, len, tables());
}

/* ---- hardware ------------------------------------------------------------- */

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define HURRAY_CRC_X86 1
#define HURRAY_CRC_CLMUL512 1
#include <immintrin.h>
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__ARM_FEATURE_CRC32) || defined(__linux__))
#define HURRAY_CRC_ARM 1
#if defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define ARM_CRC_TARGET
#define ARM_CRC_U8(c, b) __crc32cb((c), (b))
#define ARM_CRC_U64(c, w) __crc32cd((c), (w))
#else
/* The extension is enabled for hw_update alone. Clang's arm_acle.h declares
 * the intrinsics only when the whole unit targets it, so its builtins are
 * named directly. */
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1ul << 7) /* the Linux arm64 ABI bit */
#endif
#define HURRAY_CRC_ARM_RUNTIME 1
#if defined(__clang__)
#define ARM_CRC_TARGET __attribute__((target("crc")))
#define ARM_CRC_U8(c, b) __builtin_arm_crc32cb((c), (b))
#define ARM_CRC_U64(c, w) __builtin_arm_crc32cd((c), (w))
#else
#include <arm_acle.h> /* GCC's declares them for functions targeting +crc */
#define ARM_CRC_TARGET __attribute__((target("+crc")))
#define ARM_CRC_U8(c, b) __crc32cb((c), (b))
#define ARM_CRC_U64(c, w) __crc32cd((c), (w))
#endif
#endif
#endif

#if defined(HURRAY_CRC_X86)

/* Bytes per stream per round of the three-stream loop. */
#define CRC_BLOCK 4096u

/* shift_table[j][b] = register after CRC_BLOCK zero bytes starting from b << 8j. */
static uint32_t g_shift[4][256];
static HurrayOnce g_shift_once = HURRAY__ONCE_INIT;

static void build_shift(void) {
  const uint32_t(*t)[256] = tables();
  static const uint8_t zeros[CRC_BLOCK];
  uint32_t basis[32];
  for (int k = 0; k < 32; k++) basis[k] = sw_update(1u << k, zeros, CRC_BLOCK, t);
  for (int j = 0; j < 4; j++) {
    for (uint32_t b = 0; b < 256; b++) {
      uint32_t v = 0;
      for (int bit = 0; bit < 8; bit++)
        if (b & (1u << bit)) v ^= basis[8 * j + bit];
      g_shift[j][b] = v;
    }
  }
}

static inline uint32_t shift_block(uint32_t r) {
  return g_shift[0][r & 0xFFu] ^ g_shift[1][(r >> 8) & 0xFFu] ^ g_shift[2][(r >> 16) & 0xFFu] ^
         g_shift[3][r >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t hw_update(uint32_t crc, const uint8_t *p,
                                                            size_t n) {
  while (n > 0 && ((uintptr_t)p & 7u) != 0) {
    crc = _mm_crc32_u8(crc, *p++);
    n--;
  }
  if (n >= 3u * CRC_BLOCK) {
    hurray__once(&g_shift_once, build_shift);
    do {
      uint64_t c0 = crc, c1 = 0, c2 = 0;
      for (size_t i = 0; i < CRC_BLOCK; i += 8) {
        uint64_t a, b, c;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + CRC_BLOCK + i, 8);
        memcpy(&c, p + 2u * CRC_BLOCK + i, 8);
        c0 = _mm_crc32_u64(c0, a);
        c1 = _mm_crc32_u64(c1, b);
        c2 = _mm_crc32_u64(c2, c);
      }
      crc = shift_block(shift_block((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
      p += 3u * CRC_BLOCK;
      n -= 3u * CRC_BLOCK;
    } while (n >= 3u * CRC_BLOCK);
  }
  uint64_t c64 = crc;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    c64 = _mm_crc32_u64(c64, w);
    p += 8;
    n -= 8;
  }
  crc = (uint32_t)c64;
  while (n-- > 0) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

bool hurray__crc32c_hw_available(void) {
  static atomic_int cached = -1; /* every thread computes the same value */
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v < 0) {
    __builtin_cpu_init();
    v = __builtin_cpu_supports("sse4.2") ? 1 : 0;
    atomic_store_explicit(&cached, v, memory_order_relaxed);
  }
  return v == 1;
}

#elif defined(HURRAY_CRC_ARM)

ARM_CRC_TARGET static uint32_t hw_update(uint32_t crc, const uint8_t *p, size_t n) {
  while (n > 0 && ((uintptr_t)p & 7u) != 0) {
    crc = ARM_CRC_U8(crc, *p++);
    n--;
  }
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    crc = ARM_CRC_U64(crc, w);
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = ARM_CRC_U8(crc, *p++);
  return crc;
}

#if defined(HURRAY_CRC_ARM_RUNTIME)
bool hurray__crc32c_hw_available(void) {
  static atomic_int cached = -1; /* every thread computes the same value */
  int v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v < 0) {
    v = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0 ? 1 : 0;
    atomic_store_explicit(&cached, v, memory_order_relaxed);
  }
  return v == 1;
}
#else
bool hurray__crc32c_hw_available(void) { return true; }
#endif

#else

bool hurray__crc32c_hw_available(void) { return false; }

#endif

uint32_t hurray__crc32c_hw(uint32_t crc, const void *data, size_t len) {
#if defined(HURRAY_CRC_X86) || defined(HURRAY_CRC_ARM)
  if (len == 0) return crc;
  return ~hw_update(~crc, (const uint8_t *)data, len);
#else
  return hurray__crc32c_sw(crc, data, len);
#endif
}

/* The raw register `reg` advanced over [p, p + n). */
static uint32_t raw_update(uint32_t reg, const uint8_t *p, uint64_t n) {
  return ~hurray_crc32c(~reg, p, (size_t)n);
}

/* ---- CLMUL512: the bulk loop and the engine of the bursts ------------------- */

#if defined(HURRAY_CRC_CLMUL512)
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

/* ---- the interface of the CLMUL512 engine -------------------------------------- */

void hurray__crc32c_clmul_start(HurrayCrcBursts *c) {
#if defined(HURRAY_CRC_CLMUL512)
  if (c->len >= 64) {
    memcpy(c->acc, c->data, 64);
    c->done = 64;
    c->burst = clmul512_burst;
  }
#else
  (void)c;
#endif
}

uint32_t hurray__crc32c_clmul_finish(HurrayCrcBursts *c) {
#if defined(HURRAY_CRC_CLMUL512)
  return clmul512_finish(c);
#else
  return hurray_crc32c(0, c->data, (size_t)c->len);
#endif
}

bool hurray__crc32c_bulk_available(void) {
#if defined(HURRAY_CRC_CLMUL512)
  return clmul512_available();
#else
  return false;
#endif
}

uint32_t hurray__crc32c_bulk(uint32_t crc, const void *data, uint64_t len) {
#if defined(HURRAY_CRC_CLMUL512)
  if (len >= 256 && clmul512_available()) {
    /* register(~crc, data) = shift(~crc, len) ^ register(0, data) */
    uint32_t reg = clmul512_bulk((const uint8_t *)data, len);
    return ~(hurray__crc32c_shift(~crc, len) ^ reg);
  }
#endif
  return ~raw_update(~crc, (const uint8_t *)data, len);
}

uint32_t hurray_crc32c(uint32_t crc, const void *data, size_t len) {
  if (len == 0 || data == NULL) return crc;
  if (len >= HURRAY__CRC_BULK_MIN && hurray__crc32c_bulk_available())
    return hurray__crc32c_bulk(crc, data, len);
  if (hurray__crc32c_hw_available()) return hurray__crc32c_hw(crc, data, len);
  return hurray__crc32c_sw(crc, data, len);
}
