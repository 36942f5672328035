/* The operating-system services of internal/platform.h, with POSIX calls. */
#include "internal/platform.h"

#if !defined(_WIN32)

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
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

/* Marks a writer's file as held (hurray__os_remove_stale): a hint, so a
 * file system without locks only loses that protection. */
static void lock_held(int fd) {
#if defined(LOCK_EX)
  while (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EINTR) {
  }
#else
  (void)fd;
#endif
}

int hurray__os_create_new(const char *path, HurrayOsFile *out) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  *out = fd;
  if (fd < 0) return errno;
  lock_held(fd);
  return 0;
}

#if defined(__linux__) && defined(O_TMPFILE)
static void proc_fd_path(char *buf, size_t n, int fd) {
  snprintf(buf, n, "/proc/self/fd/%d", fd);
}
#endif

int hurray__os_create_unnamed(const char *dir, HurrayOsFile *out) {
  *out = -1;
#if defined(__linux__) && defined(O_TMPFILE)
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  /* linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH on most kernels; the
   * /proc/self/fd link needs /proc. Without it, the file could not be given
   * a name at the end: refuse now, while falling back costs nothing. */
  char p[40];
  struct stat st;
  proc_fd_path(p, sizeof p, fd);
  if (stat(p, &st) != 0) {
    close(fd);
    return EOPNOTSUPP;
  }
  lock_held(fd);
  *out = fd;
  return 0;
#else
  (void)dir;
  return ENOTSUP;
#endif
}

int hurray__os_link_unnamed(HurrayOsFile f, const char *path) {
#if defined(__linux__) && defined(O_TMPFILE)
  char p[40];
  proc_fd_path(p, sizeof p, f);
  if (linkat(AT_FDCWD, p, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) return 0;
  int e = errno;
  if (e == EEXIST) return e;
#if defined(AT_EMPTY_PATH)
  if (linkat(f, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0) return 0;
  if (errno == EEXIST) return EEXIST;
#endif
  return e;
#else
  (void)f;
  (void)path;
  return ENOTSUP;
#endif
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

/* Whether the entry `name` of directory `dfd` is a stray that may go: see
 * hurray__os_remove_stale. Returns 0 (removed or left alone: *gone says
 * which) or the errno of a removal that failed. */
static int remove_if_stale(int dfd, const char *name, uint64_t min_age, uint64_t now,
                           bool *gone) {
  *gone = false;
  struct stat a;
  if (fstatat(dfd, name, &a, AT_SYMLINK_NOFOLLOW) != 0) return 0; /* vanished */
  if (!S_ISREG(a.st_mode) || a.st_uid != geteuid()) return 0;
  if (a.st_mtime < 0 || (uint64_t)a.st_mtime > now || now - (uint64_t)a.st_mtime < min_age)
    return 0; /* young, or from the future: maybe a save in progress */
  /* The same file, opened: is a live writer holding its lock? */
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat b;
  int rc = 0;
  if (fstat(fd, &b) != 0 || b.st_dev != a.st_dev || b.st_ino != a.st_ino) goto done;
#if defined(LOCK_EX)
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK || errno == EAGAIN) goto done; /* held: in use */
    break; /* no locks on this file system: the age alone decides */
  }
#endif
  /* Still the same name for the same file (not replaced meanwhile)? */
  if (fstatat(dfd, name, &a, AT_SYMLINK_NOFOLLOW) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino)
    goto done;
  if (unlinkat(dfd, name, 0) == 0) {
    *gone = true;
  } else if (errno != ENOENT) {
    rc = errno;
  }
done:
  close(fd);
  return rc;
}

int hurray__os_remove_stale(const char *dir, bool (*is_temp)(void *ctx, const char *name),
                            void *ctx, uint64_t min_age, uint32_t *removed, int *first_error,
                            char *first_name, size_t name_cap) {
  *removed = 0;
  *first_error = 0;
  if (name_cap > 0) first_name[0] = '\0';
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno;
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    int e = errno;
    close(dfd);
    return e;
  }
  uint64_t now = 0, nsec = 0;
  if (!hurray__os_clock(false, &now, &nsec)) now = 0; /* nothing is old */
  for (;;) {
    errno = 0;
    struct dirent *ent = readdir(d);
    if (ent == NULL) break;
    if (!is_temp(ctx, ent->d_name)) continue;
    bool gone = false;
    int e = remove_if_stale(dfd, ent->d_name, min_age, now, &gone);
    if (gone && *removed < UINT32_MAX) (*removed)++;
    if (e != 0 && *first_error == 0) {
      *first_error = e;
      if (name_cap > 0) snprintf(first_name, name_cap, "%s", ent->d_name);
    }
  }
  closedir(d); /* closes dfd */
  return 0;
}

/* ---- memory mapping ----------------------------------------------------------------- */

uint64_t hurray__os_page_size(void) {
  long pg = sysconf(_SC_PAGESIZE);
  return pg > 0 ? (uint64_t)pg : 4096u;
}

/* Private writable mappings are not charged against the commit limit in
 * full (Linux: MAP_NORESERVE, honoured unless vm.overcommit_memory is 2):
 * only the pages written ever take memory, as with a read-only mapping. */
#if defined(MAP_NORESERVE)
#define HURRAY__MAP_NORESERVE MAP_NORESERVE
#else
#define HURRAY__MAP_NORESERVE 0
#endif

int hurray__os_map(HurrayOsFile f, uint64_t size, uint64_t align, bool copy_on_write,
                   void **addr, const char **step) {
  const uint64_t page = hurray__os_page_size();
  const size_t len = (size_t)size;
  const int prot = copy_on_write ? PROT_READ | PROT_WRITE : PROT_READ;
  const int flags = copy_on_write ? MAP_PRIVATE | HURRAY__MAP_NORESERVE : MAP_SHARED;
  *addr = NULL;
  *step = copy_on_write ? "mapping the file copy-on-write" : "mapping the file";
  if (align <= page) {
    void *a = mmap(NULL, len, prot, flags, f, 0);
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
  void *a = mmap(aligned, len, prot, flags | MAP_FIXED, f, 0);
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

void hurray__os_prefault_read(const void *p, size_t n) {
  if (n < ((size_t)64 << 10)) return;
  uintptr_t pg = (uintptr_t)hurray__os_page_size();
  uintptr_t lo = (uintptr_t)p & ~(pg - 1);
  size_t len = n + (size_t)((uintptr_t)p - lo);
#if defined(__linux__)
#if !defined(MADV_POPULATE_READ)
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels answer EINVAL */
#endif
  if (madvise((void *)lo, len, MADV_POPULATE_READ) == 0) return;
#endif
  (void)madvise((void *)lo, len, MADV_WILLNEED);
}

int hurray__os_resident(const void *addr, size_t len, unsigned char *vec) {
#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__)
  return mincore((void *)(uintptr_t)addr, len, (void *)vec) == 0 ? 0 : errno;
#else
  (void)addr;
  (void)len;
  (void)vec;
  return ENOSYS;
#endif
}

int hurray__os_populate_read(const void *addr, size_t len) {
#if defined(__linux__)
  for (int tries = 0; tries < 100; tries++) {
    if (madvise((void *)(uintptr_t)addr, len, MADV_POPULATE_READ) == 0) return 0;
    if (errno == EINTR || errno == EAGAIN) continue; /* a signal, or a page being read */
    if (errno == EFAULT || errno == EIO) return EFAULT;
#if defined(EHWPOISON)
    if (errno == EHWPOISON) return EFAULT;
#endif
    break; /* EINVAL: a kernel before 5.14 */
  }
#endif
  hurray__os_will_read(addr, len);
  return ENOSYS;
}

/* ---- a worker thread ---------------------------------------------------------- */

typedef struct ThreadStart {
  void (*fn)(void *arg);
  void *arg;
} ThreadStart;

static void *thread_trampoline(void *p) {
  ThreadStart st = *(ThreadStart *)p;
  hurray__free(p);
  st.fn(st.arg);
  return NULL;
}

int hurray__thread_start(HurrayThread *t, void (*fn)(void *arg), void *arg) {
  ThreadStart *st = hurray__malloc(sizeof *st);
  if (st == NULL) return ENOMEM;
  st->fn = fn;
  st->arg = arg;
  pthread_t *h = hurray__malloc(sizeof *h);
  if (h == NULL) {
    hurray__free(st);
    return ENOMEM;
  }
  int rc = pthread_create(h, NULL, thread_trampoline, st);
  if (rc != 0) {
    hurray__free(st);
    hurray__free(h);
    return rc;
  }
  t->handle = h;
  return 0;
}

void hurray__thread_join(HurrayThread *t) {
  pthread_t *h = t->handle;
  if (h == NULL) return;
  (void)pthread_join(*h, NULL);
  hurray__free(h);
  t->handle = NULL;
}

#endif /* !_WIN32 */
