/* Positioned I/O with error reporting, and the shared source of mapped tensors. */
#include <stdio.h>
#include <string.h>

#include "internal/file.h"
#include "internal/platform.h"

/* Largest single transfer (Linux moves at most 0x7ffff000 bytes per call). */
#define IO_CHUNK ((uint64_t)1 << 30)

HurrayStatus hurray__io_fail(HurrayError *err, int code, uint64_t offset, const char *what) {
  char msg[128];
  const char *s = hurray__os_strerror(code, msg, sizeof msg);
  return hurray__fail(err, hurray__os_error_is_nomem(code) ? HURRAY_ERR_OUT_OF_MEMORY : HURRAY_ERR_IO,
                      offset, what, "%s (" HURRAY__OS_ERROR_LABEL " %d)", s, code);
}

HurrayStatus hurray__pread_full(HurrayOsFile fd, void *buf, uint64_t len, uint64_t off,
                                const char *what, HurrayError *err) {
  uint8_t *p = buf;
  while (len > 0) {
    size_t n = (size_t)(len < IO_CHUNK ? len : IO_CHUNK);
    if (off > (uint64_t)INT64_MAX)
      return hurray__fail(err, HURRAY_ERR_IO, off, what, "offset out of range");
    size_t r = 0;
    int e = hurray__os_pread(fd, p, n, off, &r);
    if (e != 0) return hurray__io_fail(err, e, off, what);
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

HurrayStatus hurray__pwrite_full(HurrayOsFile fd, const void *buf, uint64_t len, uint64_t off,
                                 const char *what, HurrayError *err) {
  const uint8_t *p = buf;
  while (len > 0) {
    size_t n = (size_t)(len < IO_CHUNK ? len : IO_CHUNK);
    if (off > (uint64_t)INT64_MAX)
      return hurray__fail(err, HURRAY_ERR_IO, off, what, "offset out of range");
    size_t r = 0;
    int e = hurray__os_pwrite(fd, p, n, off, &r);
    if (e != 0) return hurray__io_fail(err, e, off, what);
    if (r == 0) return hurray__io_fail(err, HURRAY__OS_ERR_IO, off, what);
    p += r;
    off += (uint64_t)r;
    len -= (uint64_t)r;
  }
  return HURRAY_OK;
}

void hurray__write_behind(HurrayOsFile fd, uint64_t off, uint64_t len) {
  hurray__os_write_behind(fd, off, len);
}

void hurray__prefault(void *p, size_t n) { hurray__os_prefault_write(p, n); }

/* ---- the shared source ----------------------------------------------------- */

HurrayFileSource *hurray__source_retain(HurrayFileSource *s) {
  if (s != NULL) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  return s;
}

void hurray__source_release(HurrayFileSource *s) {
  if (s == NULL) return;
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  if (s->map_addr != NULL) hurray__os_unmap(s->map_addr, s->map_len);
  if (s->release != NULL) s->release(s->release_ctx, s->base, s->size);
  hurray__free(s);
}
