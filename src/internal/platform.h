/*
 * The operating-system services libhurray uses, behind one small interface.
 * Never installed.
 *
 * src/core/platform_posix.c implements them with POSIX calls and
 * src/core/platform_win32.c with Win32 calls; each file compiles to nothing
 * on the other platform. The rest of the library calls only these, so that
 * nothing outside those two files (and src/stream/transport*.c, the stream
 * transports) includes a system header beyond ISO C.
 *
 * System error codes: every function returning `int` returns 0 on success or
 * a system error code: an errno value on POSIX, a GetLastError() value on
 * Windows. hurray__os_strerror turns one into text and hurray__io_fail
 * (internal/file.h) into a HurrayError.
 *
 * Paths are NUL-terminated UTF-8 on Windows (converted to UTF-16 for the
 * wide-character API), bytes as given on POSIX.
 */
#ifndef HURRAY_INTERNAL_PLATFORM_H
#define HURRAY_INTERNAL_PLATFORM_H

#include "internal/common.h"

#if !defined(_WIN32)
#include <errno.h>
#include <pthread.h>
#endif

/* ---- once and mutex ---------------------------------------------------------------- */

#if defined(_WIN32)
/* An INIT_ONCE and an SRWLOCK have the size of a pointer; platform_win32.c
 * checks that. No Windows header is needed here. */
typedef struct HurrayOnce {
  void *state;
} HurrayOnce;
#define HURRAY__ONCE_INIT {NULL}
typedef struct HurrayMutex {
  void *state;
} HurrayMutex;

/* Runs fn exactly once per `once`, every caller returning after it ran. */
HURRAY_INTERNAL void hurray__once(HurrayOnce *once, void (*fn)(void));
/* 0, or a system error code. */
HURRAY_INTERNAL int hurray__mutex_init(HurrayMutex *m);
HURRAY_INTERNAL void hurray__mutex_lock(HurrayMutex *m);
HURRAY_INTERNAL void hurray__mutex_unlock(HurrayMutex *m);
HURRAY_INTERNAL void hurray__mutex_destroy(HurrayMutex *m);
#else
typedef pthread_once_t HurrayOnce;
#define HURRAY__ONCE_INIT PTHREAD_ONCE_INIT
typedef pthread_mutex_t HurrayMutex;

static inline void hurray__once(HurrayOnce *once, void (*fn)(void)) { (void)pthread_once(once, fn); }
static inline int hurray__mutex_init(HurrayMutex *m) { return pthread_mutex_init(m, NULL); }
static inline void hurray__mutex_lock(HurrayMutex *m) { (void)pthread_mutex_lock(m); }
static inline void hurray__mutex_unlock(HurrayMutex *m) { (void)pthread_mutex_unlock(m); }
static inline void hurray__mutex_destroy(HurrayMutex *m) { (void)pthread_mutex_destroy(m); }
#endif

/* ---- errors, clock, process ----------------------------------------------------------- */

/* A generic I/O failure, as a system error code. */
#if defined(_WIN32)
#define HURRAY__OS_ERR_IO 29 /* ERROR_WRITE_FAULT */
#else
#define HURRAY__OS_ERR_IO EIO
#endif

/* Text of a system error code, written to buf (n > 0 bytes) or a constant;
 * the result is borrowed (buf or static storage). */
HURRAY_INTERNAL const char *hurray__os_strerror(int code, char *buf, size_t n);
/* The label printed beside a system error code in messages. */
#if defined(_WIN32)
#define HURRAY__OS_ERROR_LABEL "error"
#else
#define HURRAY__OS_ERROR_LABEL "errno"
#endif
/* True when a system error code means "out of memory" (ENOMEM is not one:
 * POSIX callers report it as an I/O failure, as they always did; on Windows
 * ERROR_NOT_ENOUGH_MEMORY and ERROR_OUTOFMEMORY are, which includes the
 * conversion of a path to UTF-16 failing to allocate). */
HURRAY_INTERNAL bool hurray__os_error_is_nomem(int code);
/* True when a system error code means "the file already exists". */
HURRAY_INTERNAL bool hurray__os_error_is_exists(int code);

/* A clock for seeds: the monotonic clock or the wall clock, in seconds and
 * nanoseconds. False when unavailable. */
HURRAY_INTERNAL bool hurray__os_clock(bool monotonic, uint64_t *sec, uint64_t *nsec);
/* This process's id. */
HURRAY_INTERNAL uint64_t hurray__os_pid(void);

/* ---- files --------------------------------------------------------------------------- */

#if defined(_WIN32)
typedef void *HurrayOsFile; /* a HANDLE */
#define HURRAY__OS_FILE_NONE ((HurrayOsFile)(intptr_t)-1) /* INVALID_HANDLE_VALUE */
#else
typedef int HurrayOsFile; /* a file descriptor */
#define HURRAY__OS_FILE_NONE (-1)
#endif

/* Where the file name starts in `path` (after the last separator: '/' on
 * POSIX; '/', '\\' or a drive's ':' on Windows); `path` itself when there is
 * none. Borrowed from path. */
static inline const char *hurray__path_base(const char *path) {
  const char *base = path;
  for (const char *p = path; *p != '\0'; p++) {
#if defined(_WIN32)
    if (*p == '/' || *p == '\\' || (*p == ':' && p == path + 1)) base = p + 1;
#else
    if (*p == '/') base = p + 1;
#endif
  }
  return base;
}

/* Opens an existing file for reading (close-on-exec; on Windows shared for
 * reading, writing and deletion, so that it can be replaced while open). */
HURRAY_INTERNAL int hurray__os_open_read(const char *path, HurrayOsFile *out);
/* Creates a new file for writing, mode 0666 less the umask; fails
 * (hurray__os_error_is_exists) when the path exists. On POSIX the file is
 * also locked (flock LOCK_EX, released when the descriptor is closed or the
 * process ends), which is how hurray__os_remove_stale tells a temporary file
 * that a live writer holds from a stray one. */
HURRAY_INTERNAL int hurray__os_create_new(const char *path, HurrayOsFile *out);
/*
 * Creates a file without a name in directory `dir`, for writing (Linux
 * O_TMPFILE; mode 0666 less the umask, locked as by hurray__os_create_new):
 * if the process dies before hurray__os_link_unnamed names it, the system
 * frees it and nothing is left behind. Fails (any code: the caller falls back
 * to a named temporary file) where the system or the file system has no such
 * files (EOPNOTSUPP, EISDIR, EINVAL; every system but Linux) or where the file
 * could not be named later (no /proc/self/fd).
 */
HURRAY_INTERNAL int hurray__os_create_unnamed(const char *dir, HurrayOsFile *out);
/* Gives the unnamed file `f` (from hurray__os_create_unnamed) the name
 * `path`, in the directory it was created in (linkat through
 * /proc/self/fd/N, else AT_EMPTY_PATH); fails (hurray__os_error_is_exists)
 * when `path` exists. */
HURRAY_INTERNAL int hurray__os_link_unnamed(HurrayOsFile f, const char *path);
/* Size of an open file, and whether it is a regular file. */
HURRAY_INTERNAL int hurray__os_file_size(HurrayOsFile f, uint64_t *size, bool *regular);
/* One positioned read of at most n bytes at offset `off` (< 2^63); *got
 * receives the count, 0 at the end of the file. Interrupted calls are retried. */
HURRAY_INTERNAL int hurray__os_pread(HurrayOsFile f, void *buf, size_t n, uint64_t off,
                                     size_t *got);
/* One positioned write of at most n bytes; *put receives the count. */
HURRAY_INTERNAL int hurray__os_pwrite(HurrayOsFile f, const void *buf, size_t n, uint64_t off,
                                      size_t *put);
/* Starts writing [off, off + len) of `f` to the storage without waiting for
 * it (Linux sync_file_range SYNC_FILE_RANGE_WRITE); a hint, failures are
 * ignored. Elsewhere (other POSIX systems, Windows) it does nothing: the sync
 * that follows does all the work. */
HURRAY_INTERNAL void hurray__os_write_behind(HurrayOsFile f, uint64_t off, uint64_t len);
/* Whether reserving a file's blocks before writing them pays on the file
 * system that holds f: Linux ext4 and XFS (buffered writes into reserved
 * blocks skip delayed allocation, and a full disk is found before the range
 * is written). False elsewhere, where it would cost (tmpfs zeroes the pages)
 * or not exist. */
HURRAY_INTERNAL bool hurray__os_preallocate_pays(HurrayOsFile f);
/* Reserves the blocks of [off, off + len) (fallocate, mode 0). Returns 0 when
 * done or when the system cannot (a hint), and ENOSPC, EDQUOT or EFBIG (the
 * errno) when the disk, the quota or the file size limit has no room. */
HURRAY_INTERNAL int hurray__os_preallocate(HurrayOsFile f, uint64_t off, uint64_t len);
/* Flushes the file's data and metadata to the storage (fsync, FlushFileBuffers). */
HURRAY_INTERNAL int hurray__os_sync(HurrayOsFile f);
HURRAY_INTERNAL int hurray__os_close(HurrayOsFile f);
/* True when `path` names an existing directory. */
HURRAY_INTERNAL bool hurray__os_is_dir(const char *path);
/* Atomically replaces `to` with `from` (rename; on Windows MoveFileExW with
 * MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH). */
HURRAY_INTERNAL int hurray__os_replace(const char *from, const char *to);
HURRAY_INTERNAL int hurray__os_remove(const char *path);
/*
 * Makes a rename inside directory `dir` durable: POSIX fsyncs the directory
 * (0 also where the file system cannot sync one); Windows has nothing to do
 * (MOVEFILE_WRITE_THROUGH did it). On failure *opened says whether the
 * directory could be opened.
 */
HURRAY_INTERNAL int hurray__os_sync_dir(const char *dir, bool *opened);
/*
 * Removes the stray temporary files of directory `dir`: each entry whose
 * name `is_temp(ctx, name)` accepts (name borrowed, NUL-terminated UTF-8 on
 * Windows) and that is a regular file (not a link, not a directory), owned
 * by this process's (effective) user, last modified at least `min_age`
 * seconds ago and not held by a live writer (POSIX: its flock is free;
 * Windows: no other handle is open on it). Anything else is left alone.
 * *removed receives the count. Returns 0, or the system error code of
 * opening the directory; a file that cannot be removed is skipped, its code
 * kept in *first_error (0 when none) with its name in
 * first_name[0..name_cap) (truncated, NUL-terminated).
 */
HURRAY_INTERNAL int hurray__os_remove_stale(const char *dir,
                                            bool (*is_temp)(void *ctx, const char *name),
                                            void *ctx, uint64_t min_age, uint32_t *removed,
                                            int *first_error, char *first_name,
                                            size_t name_cap);

/* ---- memory mapping ----------------------------------------------------------------- */

/* The page size (4096 when unknown). */
HURRAY_INTERNAL uint64_t hurray__os_page_size(void);
/*
 * Maps bytes [0, size) of `f` at an address that is a multiple of `align` (a
 * power of two); size > 0 and size + 2 * align must fit a size_t.
 * copy_on_write false: read-only and shared (the pages of the file's cache).
 * copy_on_write true: readable and writable, private: a page is copied on
 * its first write, and writes never reach the file or another mapping of it
 * (POSIX MAP_PRIVATE, Windows FILE_MAP_COPY). *addr receives the mapping
 * (hurray__os_unmap(addr, size)); on failure *step names what failed
 * ("mapping the file", "mapping the file copy-on-write", "reserving address
 * space").
 */
HURRAY_INTERNAL int hurray__os_map(HurrayOsFile f, uint64_t size, uint64_t align,
                                   bool copy_on_write, void **addr, const char **step);
HURRAY_INTERNAL void hurray__os_unmap(void *addr, size_t size);
/* Hints that [addr, addr + len) of a mapping is about to be read. */
HURRAY_INTERNAL void hurray__os_will_read(const void *addr, size_t len);
/* Hints that [p, p + n) of fresh memory is about to be written in full:
 * maps its pages in one call instead of one page fault each where the system
 * can (Linux MADV_POPULATE_WRITE), for blocks of 64 KiB or more. */
HURRAY_INTERNAL void hurray__os_prefault_write(void *p, size_t n);
/* Hints that the mapped pages of [p, p + n) are about to be read in full:
 * maps those already in the page cache in one call instead of a fault every
 * few pages, and reads the others ahead (Linux MADV_POPULATE_READ, else
 * MADV_WILLNEED where there is one). For 64 KiB or more. */
HURRAY_INTERNAL void hurray__os_prefault_read(const void *p, size_t n);

/*
 * Which pages of the mapped range [addr, addr + len) (addr page-aligned) are
 * in memory: vec[i] bit 0 for page i (POSIX mincore). Returns 0, or a system
 * error code (ENOSYS where there is no such call: Windows).
 */
HURRAY_INTERNAL int hurray__os_resident(const void *addr, size_t len, unsigned char *vec);
/*
 * Reads in and maps the pages of [addr, addr + len) of a mapping (addr
 * page-aligned), waiting for them: Linux MADV_POPULATE_READ. Returns 0;
 * EFAULT when a page cannot be read (past the end of a file truncated since
 * it was mapped, or an I/O error: a touch would raise SIGBUS); ENOSYS where
 * the system has no such call (then it only hints, as hurray__os_will_read).
 */
HURRAY_INTERNAL int hurray__os_populate_read(const void *addr, size_t len);

/* ---- a worker thread ------------------------------------------------------------ */

/* One thread running fn(arg), joined exactly once. The writer checksums a
 * large tensor on it while the calling thread copies the same bytes into the
 * file (src/file/writer.c). */
typedef struct HurrayThread {
  void *handle;
} HurrayThread;

/* Starts fn(arg) on a new thread: 0, or a system error code (then nothing
 * runs and t is not to be joined). */
HURRAY_INTERNAL int hurray__thread_start(HurrayThread *t, void (*fn)(void *arg), void *arg);
/* Waits for the thread started in t to return and releases it. */
HURRAY_INTERNAL void hurray__thread_join(HurrayThread *t);

#endif /* HURRAY_INTERNAL_PLATFORM_H */
