/* POSIX I/O helpers and the shared source of mapped tensors. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal/file.h"

/* Largest single transfer (Linux moves at most 0x7ffff000 bytes per call). */
#define IO_CHUNK ((uint64_t)1 << 30)

HurrayStatus hurray__io_fail(HurrayError *err, int errnum, uint64_t offset, const char *what) {
  char msg[128];
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  const char *s = strerror_r(errnum, msg, sizeof msg); /* GNU variant */
#else
  const char *s = strerror_r(errnum, msg, sizeof msg) == 0 ? msg : "unknown error";
#endif
  return hurray__fail(err, HURRAY_ERR_IO, offset, what, "%s (errno %d)", s, errnum);
}

HurrayStatus hurray__pread_full(int fd, void *buf, uint64_t len, uint64_t off, const char *what,
                                HurrayError *err) {
  uint8_t *p = buf;
  while (len > 0) {
    size_t n = (size_t)(len < IO_CHUNK ? len : IO_CHUNK);
    if (off > (uint64_t)INT64_MAX)
      return hurray__fail(err, HURRAY_ERR_IO, off, what, "offset out of range");
    ssize_t r = pread(fd, p, n, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return hurray__io_fail(err, errno, off, what);
    }
    if (r == 0)
      return hurray__fail(err, HURRAY_ERR_IO, off, what,
                          "unexpected end of file (%llu bytes missing; was it truncated?)",
                          (unsigned long long)len);
    p += r;
    off += (uint64_t)r;
    len -= (uint64_t)r;
  }
  return HURRAY_OK;
}

HurrayStatus hurray__pwrite_full(int fd, const void *buf, uint64_t len, uint64_t off,
                                 const char *what, HurrayError *err) {
  const uint8_t *p = buf;
  while (len > 0) {
    size_t n = (size_t)(len < IO_CHUNK ? len : IO_CHUNK);
    if (off > (uint64_t)INT64_MAX)
      return hurray__fail(err, HURRAY_ERR_IO, off, what, "offset out of range");
    ssize_t r = pwrite(fd, p, n, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return hurray__io_fail(err, errno, off, what);
    }
    if (r == 0) return hurray__io_fail(err, EIO, off, what);
    p += r;
    off += (uint64_t)r;
    len -= (uint64_t)r;
  }
  return HURRAY_OK;
}

/* Starts the disk write of [off, off + len) without waiting for it (Linux:
 * sync_file_range SYNC_FILE_RANGE_WRITE). A durable save calls it behind its
 * writes, so the disk works while later bytes are still being copied and the
 * final fsync finds little left to do. A hint: any failure is ignored, the
 * fsync that follows is what makes the data durable. */
void hurray__write_behind(int fd, uint64_t off, uint64_t len) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  if (len == 0 || off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) return;
  (void)sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
  (void)off;
  (void)len;
#endif
}

/* Large arrays about to be written in full: fresh memory would take a page
 * fault per page (about a microsecond each on a VM); one madvise maps them
 * all at once. Only a hint: any failure is ignored. */
void hurray__prefault(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  if (n < ((size_t)64 << 10)) return;
  uintptr_t lo = ((uintptr_t)p + 4095u) & ~(uintptr_t)4095u;
  uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)4095u;
  if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* ---- the shared source ----------------------------------------------------- */

HurrayFileSource *hurray__source_retain(HurrayFileSource *s) {
  if (s != NULL) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  return s;
}

void hurray__source_release(HurrayFileSource *s) {
  if (s == NULL) return;
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  if (s->map_addr != NULL) munmap(s->map_addr, s->map_len);
  if (s->release != NULL) s->release(s->release_ctx, s->base, s->size);
  hurray__free(s);
}
