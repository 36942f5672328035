/* The allocator hook (include/hurray/alloc.h). */
#include <stdalign.h>
#include <stdlib.h>

#include "internal/common.h"

#if defined(_WIN32)
#include <malloc.h>
#endif

static void *default_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
#if defined(_WIN32)
  return _aligned_malloc(size == 0 ? 1 : size, alignment);
#else
  void *p = NULL;
  if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return NULL;
  return p;
#endif
}

static void default_free(void *ctx, void *ptr) {
  (void)ctx;
#if defined(_WIN32)
  _aligned_free(ptr);
#else
  free(ptr);
#endif
}

static HurrayAllocator g_alloc = {default_alloc, default_free, NULL};

void hurray_set_allocator(const HurrayAllocator *allocator) {
  if (allocator == NULL || allocator->alloc == NULL || allocator->free == NULL) {
    g_alloc.alloc = default_alloc;
    g_alloc.free = default_free;
    g_alloc.ctx = NULL;
  } else {
    g_alloc = *allocator;
  }
}

void *hurray_alloc(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *); /* the hook's promise */
  return g_alloc.alloc(g_alloc.ctx, size, alignment);
}

void hurray_free(void *ptr) {
  if (ptr != NULL) g_alloc.free(g_alloc.ctx, ptr);
}

void *hurray__malloc(size_t size) { return hurray_alloc(size, alignof(max_align_t)); }

void *hurray__calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  void *p = hurray__malloc(n * size);
  if (p != NULL) memset(p, 0, n * size);
  return p;
}

void hurray__free(void *p) { hurray_free(p); }
