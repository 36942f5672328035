/*
 * Internal helpers shared by every part of libhurray: little-endian access,
 * checked arithmetic, allocation, and error reporting. Never installed.
 */
#ifndef HURRAY_INTERNAL_COMMON_H
#define HURRAY_INTERNAL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hurray/alloc.h"
#include "hurray/status.h"

#if defined(__GNUC__) || defined(__clang__)
#define HURRAY_LIKELY(x) __builtin_expect(!!(x), 1)
#define HURRAY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__MINGW32__)
/* MinGW's printf is either its own C99 one (__USE_MINGW_ANSI_STDIO, the
 * default in C11 mode) or the UCRT's: both take %zu and %llu, which the
 * default ms_printf checking does not know. */
#define HURRAY_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#else
#define HURRAY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif
#if defined(_WIN32)
#define HURRAY_INTERNAL /* PE targets: symbols are not exported unless HURRAY_API */
#else
#define HURRAY_INTERNAL __attribute__((visibility("hidden")))
#endif
#else
#define HURRAY_LIKELY(x) (x)
#define HURRAY_UNLIKELY(x) (x)
#define HURRAY_PRINTF(f, a)
#define HURRAY_INTERNAL
#endif

/* ---- little-endian loads and stores (unaligned-safe) ------------------------ */

static inline uint16_t hurray__ld16(const uint8_t *p) {
  return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}
static inline uint32_t hurray__ld32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
         ((uint32_t)p[3] << 24);
}
static inline uint64_t hurray__ld64(const uint8_t *p) {
  return (uint64_t)hurray__ld32(p) | ((uint64_t)hurray__ld32(p + 4) << 32);
}
static inline void hurray__st16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void hurray__st32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static inline void hurray__st64(uint8_t *p, uint64_t v) {
  hurray__st32(p, (uint32_t)v);
  hurray__st32(p + 4, (uint32_t)(v >> 32));
}
static inline float hurray__f32_from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static inline uint32_t hurray__f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}
static inline double hurray__f64_from_bits(uint64_t b) {
  double f;
  memcpy(&f, &b, sizeof f);
  return f;
}
static inline uint64_t hurray__f64_bits(double f) {
  uint64_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* ---- checked arithmetic ---------------------------------------------------- */

/* Each returns true on overflow (and then *out is unspecified). */
static inline bool hurray__mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  if (a != 0 && b > UINT64_MAX / a) return true;
  *out = a * b;
  return false;
#endif
}
static inline bool hurray__add_overflow_u64(uint64_t a, uint64_t b, uint64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_add_overflow(a, b, out);
#else
  if (b > UINT64_MAX - a) return true;
  *out = a + b;
  return false;
#endif
}
static inline bool hurray__mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  if (a == 0 || b == 0) {
    *out = 0;
    return false;
  }
  if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
            : (b > 0 ? a < INT64_MIN / b : b < INT64_MAX / a))
    return true;
  *out = a * b;
  return false;
#endif
}

static inline bool hurray__add_overflow_i64(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_add_overflow(a, b, out);
#else
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return true;
  *out = a + b;
  return false;
#endif
}
static inline bool hurray__is_pow2_u64(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* Rounds v up to a multiple of the power of two `a`; returns true on overflow. */
static inline bool hurray__align_up_u64(uint64_t v, uint64_t a, uint64_t *out) {
  uint64_t t;
  if (hurray__add_overflow_u64(v, a - 1, &t)) return true;
  *out = t & ~(a - 1);
  return false;
}

/* ---- allocation ------------------------------------------------------------ */

/* Thin wrappers over the installed allocator (src/core/alloc.c). */
HURRAY_INTERNAL void *hurray__malloc(size_t size);   /* max_align_t alignment */
HURRAY_INTERNAL void *hurray__calloc(size_t n, size_t size);
HURRAY_INTERNAL void hurray__free(void *p);
/* Blocks of at least this many bytes come from mmap under the default
 * allocator (POSIX, without ASan; src/core/alloc.c). */
#define HURRAY__MAP_THRESHOLD ((size_t)4 << 20)

/* "s" after a count other than one, in messages: "%u tensor%s", n, HURRAY__S(n). */
#define HURRAY__S(n) ((n) == 1 ? "" : "s")
/* Mapped blocks of the default allocator not yet freed (tests). */
HURRAY_INTERNAL size_t hurray__alloc_mapped_blocks(void);
/* Freed mapped blocks the default allocator keeps for reuse (tests). */
HURRAY_INTERNAL size_t hurray__alloc_kept_blocks(void);
/* Unmaps every kept block (tests). */
HURRAY_INTERNAL void hurray__alloc_release_kept(void);

/* ---- errors ---------------------------------------------------------------- */

/*
 * Records a failure in *err (NULL allowed) and returns `status`, so a caller
 * writes `return hurray__fail(err, HURRAY_ERR_..., off, "field", "fmt", ...)`.
 * err->reason gets the formatted reason alone, err->message reads
 * "<field> at byte <offset>: <reason>"; `offset` may be HURRAY_NO_OFFSET and
 * `field` NULL or "" (those parts are then left out of the message).
 * Not HURRAY_NODISCARD: it returns `status` unchanged, for `return`, so a call
 * that only records the detail loses nothing.
 */
HURRAY_INTERNAL HurrayStatus hurray__fail(HurrayError *err, HurrayStatus status,
                                          uint64_t offset, const char *field,
                                          const char *fmt, ...) HURRAY_PRINTF(5, 6);

/* Rewrites err->message from err->field, err->offset and err->reason, in the
 * form hurray__fail writes (after a caller changed one of them). */
HURRAY_INTERNAL void hurray__error_compose(HurrayError *err);

/* Formats a field path into buf (e.g. "buffers[%u].alignment") and returns buf. */
HURRAY_INTERNAL const char *hurray__path(char *buf, size_t size, const char *fmt, ...)
    HURRAY_PRINTF(3, 4);

/* ---- descriptors the library owns ----------------------------------------- */

/* Destroys a descriptor this library created and still owns (NULL allowed).
 * hurray_descriptor_destroy fails only for a handle already destroyed, which
 * an owner never holds: its status is dropped here, in one place. */
struct HurrayDescriptor;
HURRAY_INTERNAL void hurray__descriptor_drop(struct HurrayDescriptor *d);

#define HURRAY_TRY(expr)                           \
  do {                                             \
    HurrayStatus hurray_try_st_ = (expr);          \
    if (HURRAY_UNLIKELY(hurray_try_st_ != HURRAY_OK)) return hurray_try_st_; \
  } while (0)

#endif /* HURRAY_INTERNAL_COMMON_H */
