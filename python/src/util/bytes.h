/*
 * util/bytes.h - byte-level helpers shared by every layer (layer 0).
 */
#ifndef HURRAY_PY_UTIL_BYTES_H
#define HURRAY_PY_UTIL_BYTES_H

#include "util/state.h"

/* Copies, fills and zeroing of at least this many bytes run with the GIL
 * released (a release costs more than a small copy). */
#define HRPY_NOGIL_COPY_BYTES ((uint64_t)1 << 20)

/* Checked arithmetic: true when the result overflowed (*out then unspecified). */
static inline bool hrpy_mul_i64_overflow(int64_t a, int64_t b, int64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  if (a != 0 && b != 0) {
    if (a == -1 && b == INT64_MIN) return true;
    if (b == -1 && a == INT64_MIN) return true;
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
      return true;
  }
  *out = a * b;
  return false;
#endif
}
static inline bool hrpy_mul_u64_overflow(uint64_t a, uint64_t b, uint64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  if (a != 0 && b > UINT64_MAX / a) return true;
  *out = a * b;
  return false;
#endif
}

/* Blocks of PyMem memory freed together (the C structures built for one call). */
typedef struct HrpyArena {
  void **blocks;
  size_t n, cap;
} HrpyArena;
/* `bytes` zeroed bytes owned by the arena; MemoryError (NULL) on failure. */
void *hrpy_arena_alloc(HrpyArena *a, size_t bytes);
/* Frees every block (the arena can be reused). */
void hrpy_arena_free(HrpyArena *a);

/* Measured alignment of an address: the largest power of two dividing it,
 * capped at HURRAY_PAGE_ALIGNMENT; 1 for an empty buffer. */
uint32_t hrpy_measure_alignment(const void *p, uint64_t size);

/* What a buffer the binding builds declares (docs/internals/decisions.md, "What a
 * buffer declares"): 1 when empty, else HURRAY_MIN_BUFFER_ALIGNMENT, which
 * every owned allocation and every borrowed address that passed the copy
 * policy satisfies, whatever the address; the measured value only for an
 * address below the floor that reached here uncopied (never claimed more
 * than it holds). A policy, not the address's accident: the same data from
 * two allocations gives the same descriptor. */
uint32_t hrpy_policy_alignment(const void *p, uint64_t size);

/* True when `p` is a multiple of `align` (a power of two; any for size 0). */
bool hrpy_address_satisfies(const void *p, uint64_t size, uint64_t align);

/* Allocates `size` bytes aligned to HURRAY_MIN_BUFFER_ALIGNMENT (hurray_alloc;
 * free with hurray_free), zeroed when `zero`. MemoryError (NULL) on failure. */
void *hrpy_alloc_buffer(uint64_t size, bool zero);

/* The strided-array rules are libhurray's (hurray/convert.h, "strided
 * arrays"); these keep the names every layer calls. */
static inline bool hrpy_element_count(uint32_t rank, const uint64_t *shape, uint64_t *out) {
  return hurray_shape_element_count(rank, shape, out);
}
/* A strided array (signed byte strides) into a dense row-major dst: copied,
 * or for one-byte bools packed into bits, LSB first (no one-byte-per-element
 * copy in between). The callers sized dst and checked the extent. */
static inline void hrpy_strided_gather(uint8_t *dst, const uint8_t *src, size_t itemsize,
                                       uint32_t rank, const uint64_t *shape,
                                       const int64_t *bstrides) {
  HurrayStatus rc = hurray_elements_gather(src, rank, shape, bstrides, itemsize, dst);
  (void)rc;
}
static inline void hrpy_strided_pack_bool(uint8_t *dst, const uint8_t *src, uint32_t rank,
                                          const uint64_t *shape, const int64_t *bstrides) {
  HurrayStatus rc = hurray_elements_gather_bool(src, rank, shape, bstrides, dst);
  (void)rc;
}
/* Bit-packed bool <-> one byte per element (LSB-first). */
static inline void hrpy_bool_unpack(const uint8_t *src, uint8_t *dst, uint64_t count) {
  hurray_bool_unpack(src, dst, count);
}
static inline void hrpy_bool_pack(const uint8_t *src, uint8_t *dst, uint64_t count) {
  hurray_bool_pack(src, dst, count);
}

#endif /* HURRAY_PY_UTIL_BYTES_H */
