/* The operating-system services of internal/platform.h, with POSIX calls. */
#include "internal/platform.h"

#if !defined(_WIN32)

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/vfs.h>
#endif

/* ---- errors, clock, process ----------------------------------------------------------- */

const char *hurray__os_strerror(int code, char *buf, size_t n) {
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
  return strerror_r(code, buf, n); /* GNU variant: may return a constant */
#else
  return strerror_r(code, buf, n) == 0 ? buf : "unknown error";
#endif
}

bool hurray__os_error_is_nomem(int code) {
  (void)code;
  return false;
}

bool hurray__os_error_is_exists(int code) { return code == EEXIST; }

bool hurray__os_clock(bool monotonic, uint64_t *sec, uint64_t *nsec) {
  struct timespec ts;
  if (clock_gettime(monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, &ts) != 0) return false;
  *sec = (uint64_t)ts.tv_sec;
  *nsec = (uint64_t)ts.tv_nsec;
  return true;
}

uint64_t hurray__os_pid(void) { return (uint64_t)getpid(); }

/* ---- files --------------------------------------------------------------------------- */

int hurray__os_open_read(const char *path, HurrayOsFile *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  *out = fd;
  return fd < 0 ? errno : 0;
}

int hurray__os_create_new(const char *path, HurrayOsFile *out) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  *out = fd;
  return fd < 0 ? errno : 0;
}

int hurray__os_file_size(HurrayOsFile f, uint64_t *size, bool *regular) {
  struct stat sb;
  if (fstat(f, &sb) != 0) return errno;
  *size = (uint64_t)sb.st_size;
  *regular = S_ISREG(sb.st_mode);
  return 0;
}

int hurray__os_pread(HurrayOsFile f, void *buf, size_t n, uint64_t off, size_t *got) {
  for (;;) {
    ssize_t r = pread(f, buf, n, (off_t)off);
    if (r >= 0) {
      *got = (size_t)r;
      return 0;
    }
    if (errno != EINTR) return errno;
  }
}

int hurray__os_pwrite(HurrayOsFile f, const void *buf, size_t n, uint64_t off, size_t *put) {
  for (;;) {
    ssize_t r = pwrite(f, buf, n, (off_t)off);
    if (r >= 0) {
      *put = (size_t)r;
      return 0;
    }
    if (errno != EINTR) return errno;
  }
}

void hurray__os_write_behind(HurrayOsFile f, uint64_t off, uint64_t len) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
  if (len == 0 || off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) return;
  (void)sync_file_range(f, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
  (void)f;
  (void)off;
  (void)len;
#endif
}

bool hurray__os_preallocate_pays(HurrayOsFile f) {
#if defined(__linux__)
  struct statfs sf;
  if (fstatfs(f, &sf) != 0) return false;
  return sf.f_type == 0xEF53 /* ext2/3/4 */ || sf.f_type == 0x58465342 /* XFS */;
#else
  (void)f;
  return false;
#endif
}

int hurray__os_preallocate(HurrayOsFile f, uint64_t off, uint64_t len) {
#if defined(__linux__)
  if (len == 0 || off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) return 0;
  for (;;) {
    if (fallocate(f, 0, (off_t)off, (off_t)len) == 0) return 0;
    int e = errno;
    if (e == EINTR) continue;
    return e == ENOSPC || e == EDQUOT || e == EFBIG ? e : 0;
  }
#else
  (void)f;
  (void)off;
  (void)len;
  return 0;
#endif
}

int hurray__os_sync(HurrayOsFile f) { return fsync(f) != 0 ? errno : 0; }

int hurray__os_close(HurrayOsFile f) { return close(f) != 0 ? errno : 0; }

bool hurray__os_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int hurray__os_replace(const char *from, const char *to) {
  return rename(from, to) != 0 ? errno : 0;
}

int hurray__os_remove(const char *path) { return unlink(path) != 0 ? errno : 0; }

int hurray__os_sync_dir(const char *dir, bool *opened) {
  *opened = false;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno;
  *opened = true;
  int rc = fsync(dfd);
  int e = errno;
  close(dfd);
  /* Some file systems cannot sync a directory; the rename is then as durable
   * as they make it. */
  if (rc != 0 && e != EINVAL && e != ENOTSUP) return e;
  return 0;
}

/* ---- memory mapping ----------------------------------------------------------------- */

uint64_t hurray__os_page_size(void) {
  long pg = sysconf(_SC_PAGESIZE);
  return pg > 0 ? (uint64_t)pg : 4096u;
}

int hurray__os_map_read(HurrayOsFile f, uint64_t size, uint64_t align, void **addr,
                        const char **step) {
  const uint64_t page = hurray__os_page_size();
  const size_t len = (size_t)size;
  *addr = NULL;
  *step = "mapping the file";
  if (align <= page) {
    void *a = mmap(NULL, len, PROT_READ, MAP_SHARED, f, 0);
    if (a == MAP_FAILED) return errno;
    *addr = a;
    return 0;
  }
  /* Reserve len + align, place the file at the first aligned address, and
   * give back the rest. */
  size_t span = len + (size_t)align;
  uint8_t *res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (res == MAP_FAILED) {
    *step = "reserving address space";
    return errno;
  }
  uintptr_t al = ((uintptr_t)res + (uintptr_t)(align - 1)) & ~(uintptr_t)(align - 1);
  uint8_t *aligned = (uint8_t *)al;
  void *a = mmap(aligned, len, PROT_READ, MAP_SHARED | MAP_FIXED, f, 0);
  if (a == MAP_FAILED) {
    int e = errno;
    munmap(res, span);
    return e;
  }
  size_t mapped_end = (size_t)(((uint64_t)len + page - 1) & ~(page - 1));
  if (aligned > res) munmap(res, (size_t)(aligned - res));
  if (aligned + mapped_end < res + span)
    munmap(aligned + mapped_end, (size_t)((res + span) - (aligned + mapped_end)));
  *addr = a;
  return 0;
}

void hurray__os_unmap(void *addr, size_t size) {
  if (addr != NULL) munmap(addr, size);
}

void hurray__os_will_read(const void *addr, size_t len) {
  uintptr_t pg = (uintptr_t)hurray__os_page_size();
  uintptr_t start = (uintptr_t)addr & ~(pg - 1);
  (void)madvise((void *)start, len + (size_t)((uintptr_t)addr - start), MADV_WILLNEED);
}

/* Fresh memory would take a page fault per page (about a microsecond each on
 * a VM); one madvise maps them all at once. Only a hint: failures are ignored. */
void hurray__os_prefault_write(void *p, size_t n) {
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

#endif /* !_WIN32 */
