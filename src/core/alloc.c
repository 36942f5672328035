/*
 * The allocator hook (include/hurray/alloc.h).
 *
 * The default allocator is posix_memalign / free, except for large blocks on
 * POSIX systems: a block of HURRAY__MAP_THRESHOLD bytes or more is mapped from
 * the kernel (mmap), aligned to 2 MiB and advised as huge pages
 * (MADV_HUGEPAGE) where the kernel has them. Such pages read as zero until
 * first written, so hurray_alloc_zeroed spends no time zeroing a large block
 * (as calloc does), and a block written whole takes one page fault per 2 MiB
 * instead of per 4 KiB (as NumPy advises its own large blocks).
 *
 * free() must not see a mapped block, and hurray_free receives only the
 * pointer, so the mapped blocks are kept in a small lock-free table (address
 * and length): default_free looks a page-aligned pointer up there and unmaps
 * it when found; every other pointer goes to free(). When the table has no
 * room near a block's hash, the block comes from posix_memalign instead (and
 * is zeroed by memset when asked to be). An installed allocator is never
 * bypassed: hurray_alloc_zeroed is then one call of its alloc and a memset.
 *
 * Freed mapped blocks are not all unmapped at once: up to REUSE_SLOTS of them
 * (REUSE_MAX_BYTES in all) are kept and handed out again by hurray_alloc to a
 * request they fit closely (a stream reading tensor after tensor of the same
 * size, a load that frees and allocates in turn). Their pages are already
 * mapped and faulted in, so the next block costs no mmap, no page faults, no
 * page zeroing and no munmap. hurray_alloc_zeroed never takes one (they hold
 * old bytes); it always maps fresh, zero pages.
 *
 * Builds with AddressSanitizer keep every block on the posix_memalign path,
 * so that ASan's redzones guard large buffers too.
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "internal/common.h"

#if defined(_WIN32)
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define HURRAY__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HURRAY__ASAN 1
#endif
#endif

#if !defined(_WIN32) && !defined(HURRAY__ASAN) && \
    (defined(__unix__) || defined(__APPLE__))
#define HURRAY__MAP 1
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

static void *memalign_block(size_t size, size_t alignment) {
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
#if defined(_WIN32)
  return _aligned_malloc(size == 0 ? 1 : size, alignment);
#else
  void *p = NULL;
  if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return NULL;
  return p;
#endif
}

/* ---- mapped blocks -------------------------------------------------------------- */

#if defined(HURRAY__MAP)

#define MAP_ALIGN ((uintptr_t)2 << 20) /* huge page size on x86-64 and arm64 (4K pages) */
#define MAP_SLOTS 256u                 /* live mapped blocks the table can hold */
#define MAP_WINDOW 8u                  /* slots probed from a block's hash */

static atomic_uintptr_t g_map_addr[MAP_SLOTS]; /* 0: free slot */
static atomic_size_t g_map_len[MAP_SLOTS];
static atomic_size_t g_map_live;

static unsigned map_hash(uintptr_t p) {
  return (unsigned)(((uint64_t)(p / MAP_ALIGN) * 0x9E3779B97F4A7C15ull) >> 56) % MAP_SLOTS;
}

/* Records a mapped block; false when its window is full. */
static bool map_insert(uintptr_t p, size_t len) {
  unsigned h = map_hash(p);
  for (unsigned k = 0; k < MAP_WINDOW; k++) {
    unsigned i = (h + k) % MAP_SLOTS;
    uintptr_t empty = 0;
    if (atomic_compare_exchange_strong(&g_map_addr[i], &empty, p)) {
      /* nobody looks p up before this call returns it */
      atomic_store_explicit(&g_map_len[i], len, memory_order_relaxed);
      atomic_fetch_add_explicit(&g_map_live, 1, memory_order_relaxed);
      return true;
    }
  }
  return false;
}

/* Forgets a mapped block: its length, or 0 when p is not one. */
static size_t map_remove(uintptr_t p) {
  unsigned h = map_hash(p);
  for (unsigned k = 0; k < MAP_WINDOW; k++) {
    unsigned i = (h + k) % MAP_SLOTS;
    if (atomic_load_explicit(&g_map_addr[i], memory_order_acquire) == p) {
      size_t len = atomic_load_explicit(&g_map_len[i], memory_order_relaxed);
      atomic_store_explicit(&g_map_addr[i], (uintptr_t)0, memory_order_release);
      atomic_fetch_sub_explicit(&g_map_live, 1, memory_order_relaxed);
      return len;
    }
  }
  return 0;
}

/* A mapped block of `size` (>= the threshold) bytes aligned to MAP_ALIGN, or
 * NULL (no memory, or no room in the table: the caller falls back). */
static void *map_block(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (page == 0 || (page & (page - 1)) != 0 || page > MAP_ALIGN) return NULL;
  if (size > SIZE_MAX - MAP_ALIGN - page) return NULL;
  size_t len = (size + page - 1) & ~(page - 1);
  size_t span = len + MAP_ALIGN;
  uint8_t *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)base + MAP_ALIGN - 1) & ~(MAP_ALIGN - 1);
  size_t head = (size_t)(start - (uintptr_t)base);
  if (head > 0) munmap(base, head);
  if (span - head - len > 0) munmap((uint8_t *)start + len, span - head - len);
#if defined(MADV_HUGEPAGE)
  (void)madvise((void *)start, len, MADV_HUGEPAGE); /* advice: failure changes nothing */
#endif
  if (!map_insert(start, len)) {
    munmap((void *)start, len);
    return NULL;
  }
  return (void *)start;
}

size_t hurray__alloc_mapped_blocks(void) {
  return atomic_load_explicit(&g_map_live, memory_order_relaxed);
}

/* ---- freed mapped blocks kept for reuse ---------------------------------------- */

#define REUSE_SLOTS 4u
#define REUSE_MAX_BYTES ((size_t)64 << 20)

static atomic_flag g_reuse_lock = ATOMIC_FLAG_INIT;
static uintptr_t g_reuse_addr[REUSE_SLOTS]; /* 0: empty; under g_reuse_lock */
static size_t g_reuse_len[REUSE_SLOTS];
static size_t g_reuse_bytes;
static unsigned g_reuse_next; /* the slot to give up when all are taken */

static void reuse_spin(void) {
  while (atomic_flag_test_and_set_explicit(&g_reuse_lock, memory_order_acquire)) {
  }
}
static void reuse_unlock(void) { atomic_flag_clear_explicit(&g_reuse_lock, memory_order_release); }

/* fork() while another thread holds the lock would leave it held forever in
 * the child: the lock is taken around fork, as malloc's own are. */
static pthread_once_t g_reuse_once = PTHREAD_ONCE_INIT;
static void reuse_atfork_setup(void) {
  (void)pthread_atfork(reuse_spin, reuse_unlock, reuse_unlock);
}

static void reuse_lock(void) {
  (void)pthread_once(&g_reuse_once, reuse_atfork_setup);
  reuse_spin();
}

/* Keeps a freed mapped block (already out of the table) for reuse, or unmaps
 * it; when every slot is taken the oldest kept block is unmapped instead. */
static void reuse_put(uintptr_t p, size_t len) {
  uintptr_t evict = 0;
  size_t evict_len = 0;
  if (len <= REUSE_MAX_BYTES) {
    reuse_lock();
    unsigned slot = REUSE_SLOTS;
    for (unsigned i = 0; i < REUSE_SLOTS; i++)
      if (g_reuse_addr[i] == 0) {
        slot = i;
        break;
      }
    if (slot == REUSE_SLOTS) { /* all taken: the oldest goes */
      slot = g_reuse_next;
      g_reuse_next = (g_reuse_next + 1) % REUSE_SLOTS;
      evict = g_reuse_addr[slot];
      evict_len = g_reuse_len[slot];
      g_reuse_bytes -= evict_len;
      g_reuse_addr[slot] = 0;
    }
    if (g_reuse_bytes + len <= REUSE_MAX_BYTES) {
      g_reuse_addr[slot] = p;
      g_reuse_len[slot] = len;
      g_reuse_bytes += len;
      p = 0; /* kept */
    }
    reuse_unlock();
  }
  if (evict != 0) munmap((void *)evict, evict_len);
  if (p != 0) munmap((void *)p, len);
}

/* A kept block for `size` bytes: at least size, at most a quarter more (so
 * that a small request does not pin a large block). NULL when none fits. */
static void *reuse_take(size_t size) {
  uintptr_t p = 0;
  size_t len = 0;
  reuse_lock();
  for (unsigned i = 0; i < REUSE_SLOTS; i++) {
    size_t l = g_reuse_len[i];
    if (g_reuse_addr[i] != 0 && l >= size && l - size <= l / 4 && (p == 0 || l < len)) {
      p = g_reuse_addr[i];
      len = l;
    }
  }
  if (p != 0)
    for (unsigned i = 0; i < REUSE_SLOTS; i++)
      if (g_reuse_addr[i] == p) {
        g_reuse_addr[i] = 0;
        g_reuse_bytes -= len;
      }
  reuse_unlock();
  if (p == 0) return NULL;
  if (!map_insert(p, len)) { /* the table is full: give the block back to the kernel */
    munmap((void *)p, len);
    return NULL;
  }
  return (void *)p;
}

void hurray__alloc_release_kept(void) {
  for (unsigned i = 0; i < REUSE_SLOTS; i++) {
    reuse_lock();
    uintptr_t p = g_reuse_addr[i];
    size_t len = g_reuse_len[i];
    g_reuse_addr[i] = 0;
    if (p != 0) g_reuse_bytes -= len;
    reuse_unlock();
    if (p != 0) munmap((void *)p, len);
  }
}

size_t hurray__alloc_kept_blocks(void) {
  size_t n = 0;
  reuse_lock();
  for (unsigned i = 0; i < REUSE_SLOTS; i++) n += g_reuse_addr[i] != 0;
  reuse_unlock();
  return n;
}

#else

size_t hurray__alloc_mapped_blocks(void) { return 0; }
size_t hurray__alloc_kept_blocks(void) { return 0; }
void hurray__alloc_release_kept(void) {}

#endif /* HURRAY__MAP */

/* ---- the default allocator ---------------------------------------------------- */

/* A block for the default allocator. want_zero: the caller needs zeroed
 * memory (a kept block is then not taken); *zeroed tells whether the block
 * reads as zero. */
static void *default_block(size_t size, size_t alignment, bool want_zero, bool *zeroed) {
  *zeroed = false;
  (void)want_zero; /* unused where blocks are never mapped (Windows, ASan) */
#if defined(HURRAY__MAP)
  if (size >= HURRAY__MAP_THRESHOLD && alignment <= MAP_ALIGN) {
    void *p = want_zero ? NULL : reuse_take(size);
    if (p != NULL) return p;
    p = map_block(size);
    if (p != NULL) {
      *zeroed = true; /* fresh anonymous pages */
      return p;
    }
  }
#endif
  return memalign_block(size, alignment);
}

static void *default_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  bool zeroed;
  return default_block(size, alignment, false, &zeroed);
}

static void default_free(void *ctx, void *ptr) {
  (void)ctx;
  if (ptr == NULL) return;
#if defined(HURRAY__MAP)
  if (((uintptr_t)ptr & (MAP_ALIGN - 1)) == 0) {
    size_t len = map_remove((uintptr_t)ptr);
    if (len != 0) {
      reuse_put((uintptr_t)ptr, len);
      return;
    }
  }
#endif
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

void *hurray_alloc_zeroed(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  bool zeroed = false;
  void *p = g_alloc.alloc == default_alloc ? default_block(size, alignment, true, &zeroed)
                                           : g_alloc.alloc(g_alloc.ctx, size, alignment);
  if (p != NULL && !zeroed && size > 0) memset(p, 0, size);
  return p;
}

void hurray_free(void *ptr) {
  if (ptr != NULL) g_alloc.free(g_alloc.ctx, ptr);
}

void *hurray__malloc(size_t size) { return hurray_alloc(size, alignof(max_align_t)); }

void *hurray__calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  return hurray_alloc_zeroed(n * size, alignof(max_align_t));
}

void hurray__free(void *p) { hurray_free(p); }
