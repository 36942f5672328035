/*
 * Reading a mapped file ahead of use, in parallel: hurray_file_prefetch (the
 * large reads of HURRAY_FILE_ACCESS_READ are cut the same way in io.c; both
 * run on src/file/workers.c).
 *
 * A cold file read one page fault at a time waits on each read-around window
 * in turn; several large reads in flight keep the storage busy
 * (docs/reference/benchmarks.md § Cold loads). The range is cut into one
 * slice per worker (at least 16 MiB each) that `workers` threads, the
 * calling one among them, read in and map at once: measured, a few large
 * slices beat many 16 MiB pieces, whose read-around windows (the kernel reads
 * up to read_ahead_kb around a faulting page) overlap their neighbours'. A
 * mapped range whose pages are in memory (a page of every MiB asked, mincore)
 * starts no thread: a warm file pays one mincore call per MiB.
 */
#include <errno.h>

#include "internal/file.h"

/* ---- mapped files ----------------------------------------------------------------------- */

static int (*g_populate)(const void *addr, size_t len) = hurray__os_populate_read;

void hurray__prefetch_populate_hook(int (*fn)(const void *addr, size_t len)) {
  g_populate = fn != NULL ? fn : hurray__os_populate_read;
}

typedef struct Populate {
  const uint8_t *map; /* the mapping, page-aligned at `lo` */
  uint64_t lo, hi;    /* the range */
  uint64_t piece;     /* each worker's slice */
} Populate;

static HurrayStatus populate_piece(const void *ctx, uint64_t k, HurrayError *err) {
  const Populate *j = ctx;
  uint64_t a = k * j->piece, b = a + j->piece;
  if (b > j->hi - j->lo) b = j->hi - j->lo;
  int e = g_populate(j->map + a, (size_t)(b - a));
  if (e == 0 || e == ENOSYS) return HURRAY_OK;
  return hurray__fail(err, HURRAY_ERR_IO, j->lo + a, "reading the file ahead",
                      "a page of bytes [%llu, %llu) cannot be read: the file was truncated "
                      "while mapped, or the storage failed (a touch would raise SIGBUS); "
                      "open it again, or use HURRAY_FILE_ACCESS_READ for files rewritten in place",
                      (unsigned long long)(j->lo + a), (unsigned long long)(j->lo + b));
}

/* Whether the mapped [map, map + len) looks cold: one page of every MiB (of
 * every len/4096 bytes beyond 4 GiB) and the last asked about (mincore).
 * Asking about every page walks the cache page by page (about 45 ms for
 * 1 GiB here, three times a warm load); a sample costs one call per MiB and
 * is what a cold file fails at once. A system that cannot tell: cold. */
static bool looks_cold(const uint8_t *map, uint64_t len) {
  const uint64_t page = hurray__os_page_size();
  uint64_t step = (uint64_t)1 << 20; /* and at most 4096 samples: a 100 GiB file, 25 MiB */
  if (len / 4096 > step) step = (len / 4096 + page - 1) & ~(page - 1);
  unsigned char v = 0;
  for (uint64_t a = 0; a < len; a += step) {
    if (hurray__os_resident(map + a, (size_t)page, &v) != 0 || (v & 1u) == 0) return true;
  }
  uint64_t last = (len - 1) & ~(page - 1);
  return hurray__os_resident(map + last, (size_t)page, &v) != 0 || (v & 1u) == 0;
}

/* Reads [lo, hi) of the mapping `base` (the file's byte 0) in, in parallel,
 * unless it looks warm. */
static HurrayStatus populate(const uint8_t *base, uint64_t lo, uint64_t hi, uint32_t workers,
                             HurrayError *err) {
  Populate j;
  j.map = base + lo;
  j.lo = lo;
  j.hi = hi;
  if (!looks_cold(j.map, hi - lo)) return HURRAY_OK; /* warm: nothing to start */
  j.piece = hurray__workers_slice(hi - lo, workers);
  return hurray__workers_run(populate_piece, &j, (hi - lo + j.piece - 1) / j.piece, workers, err);
}

HurrayStatus hurray_file_prefetch(const HurrayFile *f, uint64_t offset, uint64_t length,
                                  uint32_t workers, HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  workers = workers == 0 ? f->opts.workers : hurray__file_workers(workers);
  const uint64_t size = f->info.file_size;
  if (workers <= 1 || offset >= size) return HURRAY_OK; /* one at a time; nothing there */
  if (length > size - offset) length = size - offset;
  const uint64_t page = hurray__os_page_size();
  uint64_t lo = offset & ~(page - 1), hi = offset + length;
  if (hi <= lo) return HURRAY_OK;
  if (f->source != NULL)
    return f->source->map_addr != NULL ? populate(f->source->base, lo, hi, workers, err)
                                       : HURRAY_OK; /* memory given by the caller */
  if (f->bytes.fd == HURRAY__OS_FILE_NONE || hi - lo < 2 * HURRAY__MIN_SLICE)
    return HURRAY_OK; /* a reader's or memory's bytes; a range one read does as fast */
  /* READ access: the range brought into the system's cache through a mapping
   * made for the purpose, so that the reads that follow copy from memory. A
   * failure here is left to those reads, which report it in their words
   * ("unexpected end of file"); a mapping refused, to the reads too. */
  void *addr = NULL;
  const char *step = NULL;
  if (hurray__os_map(f->bytes.fd, size, page, false, &addr, &step) != 0) return HURRAY_OK;
  (void)populate(addr, lo, hi, workers, NULL);
  hurray__os_unmap(addr, (size_t)size);
  return HURRAY_OK;
}
