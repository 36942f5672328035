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

/* ---- large reads over several threads (READ access) ------------------------------ */

typedef struct PreadJob {
  HurrayOsFile fd;
  uint8_t *buf;     /* where byte lo goes */
  uint64_t lo, hi;  /* the range */
  uint64_t piece;   /* each worker's slice */
  const char *what;
} PreadJob;

static HurrayStatus pread_piece(const void *ctx, uint64_t k, HurrayError *err) {
  const PreadJob *j = ctx;
  uint64_t a = k * j->piece, n = j->hi - j->lo - a < j->piece ? j->hi - j->lo - a : j->piece;
  return hurray__pread_full(j->fd, j->buf + a, n, j->lo + a, j->what, err);
}

/* hurray__pread_full of [off, off + len) cut in one slice per worker, read at
 * once (at least 16 MiB each); the error of the lowest failed slice. */
static HurrayStatus parallel_pread(HurrayOsFile fd, void *buf, uint64_t len, uint64_t off,
                                   uint32_t workers, const char *what, HurrayError *err) {
  PreadJob j = {fd, buf, off, off + len, hurray__workers_slice(len, workers), what};
  return hurray__workers_run(pread_piece, &j, (len + j.piece - 1) / j.piece, workers, err);
}

/* ---- the byte source of the copying reads ------------------------------------- */

void hurray__bytes_init(HurrayFileBytes *b) {
  memset(b, 0, sizeof *b);
  b->fd = HURRAY__OS_FILE_NONE;
}

HurrayStatus hurray__bytes_read(const HurrayFileBytes *b, void *buf, uint64_t len, uint64_t off,
                                const char *what, HurrayError *err) {
  if (len == 0) return HURRAY_OK;
  if (off > b->size || len > b->size - off)
    return hurray__fail(err, HURRAY_ERR_IO, off, what,
                        "unexpected end of file (%llu bytes asked for, the file has %llu)",
                        (unsigned long long)len, (unsigned long long)b->size);
  if (b->fd != HURRAY__OS_FILE_NONE) {
    if (b->workers > 1 && len >= 2 * HURRAY__MIN_SLICE)
      return parallel_pread(b->fd, buf, len, off, b->workers, what, err);
    return hurray__pread_full(b->fd, buf, len, off, what, err);
  }
  if (b->memory != NULL) {
    memcpy(buf, b->memory->base + off, (size_t)len);
    return HURRAY_OK;
  }
  if (b->reader.read_at == NULL)
    return hurray__fail(err, HURRAY_ERR_INTERNAL, off, what, "the file has no byte source");
  const uint64_t step = b->reader.max_read ? b->reader.max_read : len;
  uint8_t *p = buf;
  while (len > 0) {
    uint64_t n = len < step ? len : step;
    char why[160];
    why[0] = '\0';
    if (b->reader.read_at(b->reader.ctx, off, p, n, why, sizeof why) != 0) {
      why[sizeof why - 1] = '\0';
      return hurray__fail(err, HURRAY_ERR_IO, off, what, "%s",
                          why[0] ? why : "the reader failed (it gave no reason)");
    }
    p += n;
    off += n;
    len -= n;
  }
  return HURRAY_OK;
}

void hurray__bytes_close(HurrayFileBytes *b) {
  if (b->fd != HURRAY__OS_FILE_NONE) (void)hurray__os_close(b->fd);
  if (b->reader.close != NULL) b->reader.close(b->reader.ctx);
  hurray__source_release(b->memory);
  hurray__bytes_init(b);
}
