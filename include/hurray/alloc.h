/*
 * hurray/alloc.h - the allocator hook, and moving bytes inside a block.
 *
 * Every allocation libhurray makes goes through these functions, so an
 * embedding runtime can route memory to its own allocator, and tests can make
 * the Nth allocation fail to prove that no error path leaks.
 */
#ifndef HURRAY_ALLOC_H
#define HURRAY_ALLOC_H

#include <stddef.h>

#include "hurray/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct HurrayAllocator {
  /* Returns size bytes aligned to `alignment` (a power of two >= sizeof(void *)),
   * or NULL. Must accept size 0 (may return NULL or a unique pointer). */
  void *(*alloc)(void *ctx, size_t size, size_t alignment);
  /* Frees a pointer returned by alloc (NULL allowed). */
  void (*free)(void *ctx, void *ptr);
  void *ctx;
} HurrayAllocator;

/*
 * Installs an allocator: `allocator` is borrowed and copied (its ctx must stay
 * valid while installed). NULL, or a struct whose alloc or free is NULL,
 * restores the default (posix_memalign / free, and mmap / munmap with huge-page
 * advice for blocks of 4 MiB or more on POSIX systems, up to 4 freed ones
 * (64 MiB in all) kept for reuse by hurray_alloc; _aligned_malloc /
 * _aligned_free on Windows). Not thread-safe: call it before using the
 * library from several threads. Memory must be freed by the allocator that
 * made it, so switch only while the library holds no allocation.
 */
HURRAY_API void hurray_set_allocator(const HurrayAllocator *allocator);

/* Allocates through the current allocator. Returns owned memory (free with
 * hurray_free), or NULL on failure or when `alignment` is not a power of two.
 * An alignment below sizeof(void *) is raised to it, as the allocator
 * contract above promises. */
HURRAY_API void *hurray_alloc(size_t size, size_t alignment);
/* hurray_alloc, zeroed: `size` bytes that read as zero. Owned (free with
 * hurray_free); NULL on failure or a bad alignment. With an installed
 * allocator: one call of its alloc, then memset. With the default allocator
 * a block of 4 MiB or more is mapped from the kernel (POSIX), whose pages
 * read as zero until written, so nothing is spent zeroing it, as with
 * calloc. */
HURRAY_API void *hurray_alloc_zeroed(size_t size, size_t alignment);
/* Frees memory from hurray_alloc or hurray_alloc_zeroed (moved), and the
 * buffers moved out of stream items by hurray_stream_item_take_buffer. NULL is
 * a no-op. */
HURRAY_API void hurray_free(void *ptr);

/*
 * memmove(base + to, base + from, n) inside one block (`base` borrowed, the
 * two ranges may overlap; the caller checks they lie inside the block). A
 * move of 16 MiB or more shifted by under 4096 bytes runs on two threads
 * (the calling one and one started for it; one memmove when none can be
 * started): how a receiver realigns a large buffer that arrived a few bytes
 * off its boundary. Nothing happens for a NULL base, n 0 or to == from.
 */
HURRAY_API void hurray_move_within(void *base, size_t to, size_t from, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_ALLOC_H */
