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
#include <nmmintrin.h>
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

uint32_t hurray_crc32c(uint32_t crc, const void *data, size_t len) {
  if (len == 0 || data == NULL) return crc;
  if (len >= HURRAY__CRC_BULK_MIN && hurray__crc32c_bulk_available())
    return hurray__crc32c_bulk(crc, data, len);
  if (hurray__crc32c_hw_available()) return hurray__crc32c_hw(crc, data, len);
  return hurray__crc32c_sw(crc, data, len);
}
