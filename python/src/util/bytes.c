/*
 * util/bytes.c - byte-level helpers: per-call arenas, aligned buffers,
 * alignment measurement, element counts, strided gathers and bool packing
 * (util/bytes.h).
 */
#include "util/bytes.h"

#include <string.h>

void *hrpy_arena_alloc(HrpyArena *a, size_t bytes) {
  if (a->n == a->cap) {
    size_t cap = a->cap == 0 ? 8 : a->cap * 2;
    void **b = PyMem_Realloc(a->blocks, cap * sizeof *b);
    if (b == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    a->blocks = b;
    a->cap = cap;
  }
  void *p = PyMem_Calloc(bytes > 0 ? bytes : 1u, 1);
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  a->blocks[a->n++] = p;
  return p;
}

void hrpy_arena_free(HrpyArena *a) {
  for (size_t i = 0; i < a->n; i++) PyMem_Free(a->blocks[i]);
  PyMem_Free(a->blocks);
  a->blocks = NULL;
  a->n = a->cap = 0;
}

uint32_t hrpy_measure_alignment(const void *p, uint64_t size) {
  if (size == 0) return 1;
  uintptr_t a = (uintptr_t)p;
  if (a == 0) return HURRAY_PAGE_ALIGNMENT;
  uintptr_t low = a & (~a + 1);
  return low >= HURRAY_PAGE_ALIGNMENT ? HURRAY_PAGE_ALIGNMENT : (uint32_t)low;
}

uint32_t hrpy_policy_alignment(const void *p, uint64_t size) {
  if (size == 0) return 1;
  uint32_t measured = hrpy_measure_alignment(p, size);
  return measured >= HURRAY_MIN_BUFFER_ALIGNMENT ? HURRAY_MIN_BUFFER_ALIGNMENT : measured;
}

bool hrpy_address_satisfies(const void *p, uint64_t size, uint64_t align) {
  if (size == 0) return true;
  if (align == 0 || (align & (align - 1)) != 0) return false;
  return ((uint64_t)(uintptr_t)p & (align - 1)) == 0;
}

void *hrpy_alloc_buffer(uint64_t size, bool zero) {
  if (size > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_NoMemory();
    return NULL;
  }
  size_t n = (size_t)(size == 0 ? 1 : size);
  void *p;
  if (!zero) {
    p = hurray_alloc(n, HURRAY_MIN_BUFFER_ALIGNMENT);
  } else if (size >= HRPY_NOGIL_COPY_BYTES) {
    /* zeroed by the allocator: a large block comes zeroed from the kernel
     * (nothing to write), a smaller one is memset, either way without the GIL */
    Py_BEGIN_ALLOW_THREADS p = hurray_alloc_zeroed(n, HURRAY_MIN_BUFFER_ALIGNMENT);
    Py_END_ALLOW_THREADS
  } else {
    p = hurray_alloc_zeroed(n, HURRAY_MIN_BUFFER_ALIGNMENT);
  }
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  return p;
}

/* Moves `row` to the next row of a strided walk (every dimension but the
 * last): false when the walk is over. Each step stays inside the extent the
 * caller checked: a dimension's counter wraps by (shape - 1) strides, never
 * shape strides (which could overflow at the edge of the address space). */
static bool next_row(const uint8_t **row, uint64_t *idx, uint32_t rank, const uint64_t *shape,
                     const int64_t *bstrides) {
  for (uint32_t d = rank - 1; d-- > 0;) {
    if (idx[d] + 1 < shape[d]) {
      idx[d]++;
      *row += bstrides[d];
      return true;
    }
    *row -= (int64_t)(shape[d] - 1) * bstrides[d];
    idx[d] = 0;
  }
  return false;
}

void hrpy_strided_gather(uint8_t *dst, const uint8_t *src, size_t itemsize, uint32_t rank,
                         const uint64_t *shape, const int64_t *bstrides) {
  uint64_t count;
  if (!hrpy_element_count(rank, shape, &count) || count == 0) return;
  if (rank == 0) {
    memcpy(dst, src, itemsize);
    return;
  }
  uint64_t idx[HURRAY_MAX_RANK];
  memset(idx, 0, sizeof idx);
  uint32_t last = rank - 1;
  uint64_t inner = shape[last];
  int64_t istride = bstrides[last];
  const uint8_t *row = src;
  do {
    const uint8_t *p = row;
    if (istride == (int64_t)itemsize) {
      memcpy(dst, p, (size_t)(inner * itemsize));
      dst += inner * itemsize;
    } else {
      for (uint64_t j = 0; j < inner; j++) {
        memcpy(dst, p, itemsize);
        dst += itemsize;
        if (j + 1 < inner) p += istride;
      }
    }
  } while (next_row(&row, idx, rank, shape, bstrides));
}

void hrpy_strided_pack_bool(uint8_t *dst, const uint8_t *src, uint32_t rank,
                            const uint64_t *shape, const int64_t *bstrides) {
  uint64_t count;
  if (!hrpy_element_count(rank, shape, &count) || count == 0) return;
  memset(dst, 0, (size_t)((count + 7u) / 8u));
  if (rank == 0) {
    dst[0] = src[0] != 0;
    return;
  }
  uint64_t idx[HURRAY_MAX_RANK];
  memset(idx, 0, sizeof idx);
  uint32_t last = rank - 1;
  uint64_t inner = shape[last], e = 0;
  int64_t istride = bstrides[last];
  const uint8_t *row = src;
  do {
    const uint8_t *p = row;
    for (uint64_t j = 0; j < inner; j++, e++) {
      if (*p) dst[e >> 3] |= (uint8_t)(1u << (e & 7u)); /* LSB first */
      if (j + 1 < inner) p += istride;
    }
  } while (next_row(&row, idx, rank, shape, bstrides));
}

bool hrpy_strided_extent(uint8_t *first, uint64_t esize, uint32_t rank, const uint64_t *shape,
                         const int64_t *estrides, uint8_t **base, uint64_t *span,
                         uint64_t *byte_offset) {
  int64_t mn = 0, mx = 0;
  for (uint32_t k = 0; k < rank; k++) {
    if (shape[k] == 0) return false;
    if (shape[k] > (uint64_t)INT64_MAX) return false;
    int64_t ext = (int64_t)(shape[k] - 1), reach;
    if (hrpy_mul_i64_overflow(estrides[k], ext, &reach)) return false;
    if (reach > 0 ? hrpy_add_i64_overflow(mx, reach, &mx) : hrpy_add_i64_overflow(mn, reach, &mn))
      return false;
  }
  uint64_t lo = mn == 0 ? 0 : (uint64_t)(-(mn + 1)) + 1u; /* -mn without overflow */
  uint64_t elems = lo + (uint64_t)mx + 1u, bytes_lo, bytes;
  if (elems < lo) return false;
  if (hrpy_mul_u64_overflow(elems, esize, &bytes) || bytes > (uint64_t)INT64_MAX) return false;
  if (hrpy_mul_u64_overflow(lo, esize, &bytes_lo)) return false;
  /* the span must lie inside the address space around `first` */
  uintptr_t at = (uintptr_t)first;
  if (at < bytes_lo || bytes - bytes_lo > UINTPTR_MAX - at) return false;
  *base = (uint8_t *)(at - (uintptr_t)bytes_lo);
  *span = bytes;
  *byte_offset = bytes_lo;
  return true;
}

bool hrpy_element_count(uint32_t rank, const uint64_t *shape, uint64_t *out) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) {
    if (shape[i] == HURRAY_DYNAMIC_DIM) return false;
    uint64_t t;
#if defined(__GNUC__) || defined(__clang__)
    if (__builtin_mul_overflow(n, shape[i], &t)) return false;
#else
    if (shape[i] != 0 && n > UINT64_MAX / shape[i]) return false;
    t = n * shape[i];
#endif
    n = t;
  }
  *out = n;
  return true;
}

/* Eight elements at a time (SWAR): byte j of a little-endian 64-bit word is
 * element j, and packed bit j (LSB first) is element j. The loads and stores
 * are byte-wise, so any alignment and host byte order work; compilers fuse them
 * into one 64-bit access. */
static uint64_t ld64le(const uint8_t *p) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; i--) x = (x << 8) | p[i];
  return x;
}

static void st64le(uint8_t *p, uint64_t x) {
  for (int i = 0; i < 8; i++) {
    p[i] = (uint8_t)x;
    x >>= 8;
  }
}

void hrpy_bool_unpack(const uint8_t *src, uint8_t *dst, uint64_t count) {
  uint64_t whole = count / 8u;
  for (uint64_t k = 0; k < whole; k++) {
    /* byte j keeps bit j of the packed byte, then becomes 0 or 1 (no carry:
     * each byte is at most 0x80 + 0x7F) */
    uint64_t y = ((uint64_t)src[k] * 0x0101010101010101u) & 0x8040201008040201u;
    st64le(dst + 8u * k, ((y + 0x7F7F7F7F7F7F7F7Fu) >> 7) & 0x0101010101010101u);
  }
  for (uint64_t i = 8u * whole; i < count; i++)
    dst[i] = (uint8_t)(((unsigned)src[i >> 3] >> (unsigned)(i & 7u)) & 1u);
}

void hrpy_bool_pack(const uint8_t *src, uint8_t *dst, uint64_t count) {
  uint64_t whole = count / 8u;
  for (uint64_t k = 0; k < whole; k++) {
    uint64_t x = ld64le(src + 8u * k);
    /* any nonzero byte is true: fold each byte's bits into its bit 0 (shifts
     * only move higher bytes' bits into this byte's upper bits, never bit 0) */
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    x &= 0x0101010101010101u;
    /* byte j's bit lands on bit 56 + j; nothing else reaches bits 56..63 */
    dst[k] = (uint8_t)((x * 0x0102040810204080u) >> 56);
  }
  if (8u * whole < count) {
    uint8_t last = 0;
    for (uint64_t i = 8u * whole; i < count; i++)
      if (src[i]) last = (uint8_t)(last | (1u << (i & 7u)));
    dst[whole] = last;
  }
}
