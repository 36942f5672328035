/*
 * util/bytes.h - byte-level helpers shared by every layer (layer 0).
 */
#ifndef HURRAY_PY_UTIL_BYTES_H
#define HURRAY_PY_UTIL_BYTES_H

#include "util/state.h"

/* Copies, moves, fills and zeroing of at least this many bytes run with the
 * GIL released (a release costs more than a small copy). */
#define HRPY_NOGIL_COPY_BYTES ((uint64_t)1 << 20)
/* Index checks over at least this many stored entries release the GIL. */
#define HRPY_NOGIL_INDEX_ENTRIES ((uint64_t)1 << 16)

/* Checked multiplication: true when the result overflowed (*out then unspecified). */
static inline bool hrpy_mul_u64_overflow(uint64_t a, uint64_t b, uint64_t *out) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  if (a != 0 && b > UINT64_MAX / a) return true;
  *out = a * b;
  return false;
#endif
}

/* Hashing value objects (tp_hash): FNV-1a over 64-bit words or bytes from
 * `h` (HRPY_HASH_SEED to start), folded into a Py_hash_t that is never -1. */
#define HRPY_HASH_SEED 0xcbf29ce484222325ull
static inline uint64_t hrpy_hash_words(uint64_t h, const uint64_t *w, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ w[i]) * 0x100000001b3ull;
  return h;
}
static inline uint64_t hrpy_hash_bytes(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
static inline Py_hash_t hrpy_hash_fold(uint64_t h) {
  Py_hash_t r = (Py_hash_t)(h ^ (h >> 32));
  return r == -1 ? -2 : r;
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

/* Allocates `size` bytes aligned to HURRAY_MIN_BUFFER_ALIGNMENT (hurray_alloc;
 * free with hurray_free), zeroed when `zero`. MemoryError (NULL) on failure. */
void *hrpy_alloc_buffer(uint64_t size, bool zero);

#endif /* HURRAY_PY_UTIL_BYTES_H */
