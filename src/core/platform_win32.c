/* The operating-system services of internal/platform.h, with Win32 calls. */
#include "internal/platform.h"

#if defined(_WIN32)

#if !defined(WIN32_LEAN_AND_MEAN)
#define WIN32_LEAN_AND_MEAN
#endif
#if !defined(NOMINMAX)
#define NOMINMAX
#endif
#include <errno.h>
#include <windows.h>

#include <aclapi.h>
#include <stdio.h>

#if defined(_MSC_VER)
#pragma comment(lib, "advapi32.lib") /* GetSecurityInfo, OpenProcessToken */
#endif

_Static_assert(sizeof(HurrayOnce) == sizeof(INIT_ONCE), "HurrayOnce holds an INIT_ONCE");
_Static_assert(sizeof(HurrayMutex) == sizeof(SRWLOCK), "HurrayMutex holds an SRWLOCK");

/* ---- once and mutex ---------------------------------------------------------------- */

typedef struct OnceCall {
  void (*fn)(void);
} OnceCall;

static BOOL CALLBACK once_trampoline(PINIT_ONCE once, PVOID param, PVOID *ctx) {
  (void)once;
  (void)ctx;
  ((const OnceCall *)param)->fn();
  return TRUE;
}

void hurray__once(HurrayOnce *once, void (*fn)(void)) {
  OnceCall call = {fn};
  (void)InitOnceExecuteOnce((PINIT_ONCE)(void *)once, once_trampoline, &call, NULL);
}

int hurray__mutex_init(HurrayMutex *m) {
  InitializeSRWLock((PSRWLOCK)(void *)m);
  return 0;
}

void hurray__mutex_lock(HurrayMutex *m) { AcquireSRWLockExclusive((PSRWLOCK)(void *)m); }

void hurray__mutex_unlock(HurrayMutex *m) { ReleaseSRWLockExclusive((PSRWLOCK)(void *)m); }

void hurray__mutex_destroy(HurrayMutex *m) { (void)m; /* an SRWLOCK holds no resource */ }

/* ---- errors, clock, process ----------------------------------------------------------- */

static int last_error(void) { return (int)GetLastError(); }

const char *hurray__os_strerror(int code, char *buf, size_t n) {
  DWORD len = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                             (DWORD)code, MAKELANGID(LANG_NEUTRAL, SUBLANG_DEFAULT), buf,
                             n > 0xFFFFu ? 0xFFFFu : (DWORD)n, NULL);
  if (len == 0) {
    if (n > 0) snprintf(buf, n, "unknown error");
    return buf;
  }
  /* The system's text ends with ".\r\n": keep the sentence, drop the rest. */
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                     buf[len - 1] == '.'))
    buf[--len] = '\0';
  return buf;
}

bool hurray__os_error_is_nomem(int code) {
  return code == ERROR_NOT_ENOUGH_MEMORY || code == ERROR_OUTOFMEMORY;
}

bool hurray__os_error_is_exists(int code) {
  return code == ERROR_FILE_EXISTS || code == ERROR_ALREADY_EXISTS;
}

bool hurray__os_clock(bool monotonic, uint64_t *sec, uint64_t *nsec) {
  if (monotonic) {
    LARGE_INTEGER freq, now;
    if (!QueryPerformanceFrequency(&freq) || !QueryPerformanceCounter(&now) ||
        freq.QuadPart <= 0)
      return false;
    uint64_t f = (uint64_t)freq.QuadPart, c = (uint64_t)now.QuadPart;
    *sec = c / f;
    *nsec = (c % f) * 1000000000u / f;
    return true;
  }
  FILETIME ft; /* 100 ns units since 1601 */
  GetSystemTimeAsFileTime(&ft);
  uint64_t t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
  const uint64_t unix_epoch = UINT64_C(116444736000000000);
  t = t > unix_epoch ? t - unix_epoch : 0;
  *sec = t / 10000000u;
  *nsec = (t % 10000000u) * 100u;
  return true;
}

uint64_t hurray__os_pid(void) { return (uint64_t)GetCurrentProcessId(); }

/* ---- paths --------------------------------------------------------------------------- */

/* A path in UTF-16: in `small` when it fits (so that removing a temporary
 * file still works when allocations fail), else allocated. */
typedef struct WidePath {
  wchar_t *w;
  wchar_t small[520];
} WidePath;

/* UTF-8 to UTF-16: 0 or a system error code (ERROR_NO_UNICODE_TRANSLATION
 * for bad UTF-8, ERROR_NOT_ENOUGH_MEMORY). Release with widen_done. */
static int widen(const char *path, WidePath *wp) {
  wp->w = NULL;
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (n <= 0) return last_error();
  wchar_t *w = wp->small;
  if ((size_t)n > sizeof wp->small / sizeof wp->small[0]) {
    w = hurray__malloc((size_t)n * sizeof *w);
    if (w == NULL) return ERROR_NOT_ENOUGH_MEMORY;
  }
  if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
    int e = last_error();
    if (w != wp->small) hurray__free(w);
    return e != 0 ? e : ERROR_NO_UNICODE_TRANSLATION;
  }
  wp->w = w;
  return 0;
}

static void widen_done(WidePath *wp) {
  if (wp->w != NULL && wp->w != wp->small) hurray__free(wp->w);
  wp->w = NULL;
}

/* ---- files --------------------------------------------------------------------------- */

static int open_with(const char *path, DWORD access, DWORD share, DWORD how, DWORD flags,
                     HurrayOsFile *out) {
  *out = HURRAY__OS_FILE_NONE;
  WidePath wp;
  int e = widen(path, &wp);
  if (e != 0) return e;
  HANDLE h = CreateFileW(wp.w, access, share, NULL, how, flags, NULL);
  e = h == INVALID_HANDLE_VALUE ? last_error() : 0;
  widen_done(&wp);
  *out = h;
  return e;
}

int hurray__os_open_read(const char *path, HurrayOsFile *out) {
  /* BACKUP_SEMANTICS lets a directory open too, so that it is refused as
   * "not a regular file", as on POSIX. */
  return open_with(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                   OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, out);
}

int hurray__os_create_new(const char *path, HurrayOsFile *out) {
  return open_with(path, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, CREATE_NEW,
                   FILE_ATTRIBUTE_NORMAL, out);
}

/* Windows has no file without a name that can be given one later: the
 * writer uses a named temporary file (and hurray__os_remove_stale). */
int hurray__os_create_unnamed(const char *dir, HurrayOsFile *out) {
  (void)dir;
  *out = HURRAY__OS_FILE_NONE;
  return ERROR_NOT_SUPPORTED;
}

int hurray__os_link_unnamed(HurrayOsFile f, const char *path) {
  (void)f;
  (void)path;
  return ERROR_NOT_SUPPORTED;
}

int hurray__os_file_size(HurrayOsFile f, uint64_t *size, bool *regular) {
  BY_HANDLE_FILE_INFORMATION info;
  if (!GetFileInformationByHandle(f, &info)) return last_error();
  *size = ((uint64_t)info.nFileSizeHigh << 32) | info.nFileSizeLow;
  *regular = GetFileType(f) == FILE_TYPE_DISK &&
             (info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE)) == 0;
  return 0;
}

static OVERLAPPED at_offset(uint64_t off) {
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  ov.Offset = (DWORD)off;
  ov.OffsetHigh = (DWORD)(off >> 32);
  return ov;
}

/* One ReadFile/WriteFile moves at most a DWORD: callers pass at most 1 GiB. */
static DWORD io_len(size_t n) { return n > 0x40000000u ? 0x40000000u : (DWORD)n; }

int hurray__os_pread(HurrayOsFile f, void *buf, size_t n, uint64_t off, size_t *got) {
  OVERLAPPED ov = at_offset(off);
  DWORD done = 0;
  *got = 0;
  if (!ReadFile(f, buf, io_len(n), &done, &ov)) {
    int e = last_error();
    if (e == ERROR_HANDLE_EOF) return 0; /* at or past the end: nothing read */
    return e;
  }
  *got = done;
  return 0;
}

int hurray__os_pwrite(HurrayOsFile f, const void *buf, size_t n, uint64_t off, size_t *put) {
  OVERLAPPED ov = at_offset(off);
  DWORD done = 0;
  *put = 0;
  if (!WriteFile(f, buf, io_len(n), &done, &ov)) return last_error();
  *put = done;
  return 0;
}

/* Windows has no call that starts a write-back without waiting for it:
 * FlushFileBuffers at the end does all the work. */
void hurray__os_write_behind(HurrayOsFile f, uint64_t off, uint64_t len) {
  (void)f;
  (void)off;
  (void)len;
}

/* Not used on Windows: NTFS has no cheap reservation of a range that a
 * buffered write then fills (SetFileValidData needs a privilege). */
bool hurray__os_preallocate_pays(HurrayOsFile f) {
  (void)f;
  return false;
}

int hurray__os_preallocate(HurrayOsFile f, uint64_t off, uint64_t len) {
  (void)f;
  (void)off;
  (void)len;
  return 0;
}

int hurray__os_sync(HurrayOsFile f) { return FlushFileBuffers(f) ? 0 : last_error(); }

int hurray__os_close(HurrayOsFile f) { return CloseHandle(f) ? 0 : last_error(); }

bool hurray__os_is_dir(const char *path) {
  WidePath wp;
  if (widen(path, &wp) != 0) return false;
  DWORD a = GetFileAttributesW(wp.w);
  widen_done(&wp);
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY) != 0;
}

int hurray__os_replace(const char *from, const char *to) {
  WidePath wf, wt;
  int e = widen(from, &wf);
  if (e != 0) return e;
  e = widen(to, &wt);
  if (e != 0) {
    widen_done(&wf);
    return e;
  }
  e = MoveFileExW(wf.w, wt.w, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0
                                                                                 : last_error();
  widen_done(&wf);
  widen_done(&wt);
  return e;
}

int hurray__os_remove(const char *path) {
  WidePath wp;
  int e = widen(path, &wp);
  if (e != 0) return e;
  e = DeleteFileW(wp.w) ? 0 : last_error();
  widen_done(&wp);
  return e;
}

int hurray__os_sync_dir(const char *dir, bool *opened) {
  (void)dir;
  *opened = true;
  return 0; /* MOVEFILE_WRITE_THROUGH returned once the rename was on disk */
}

/* The SID of this process's user, copied into buf; NULL when unknown. */
static PSID process_user(void *buf, DWORD cap) {
  HANDLE tok = NULL;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok)) return NULL;
  DWORD len = 0;
  PSID sid = NULL;
  if (GetTokenInformation(tok, TokenUser, buf, cap, &len))
    sid = ((TOKEN_USER *)buf)->User.Sid;
  CloseHandle(tok);
  return sid;
}

/* Whether the open file h is owned by `user`. */
static bool owned_by(HANDLE h, PSID user) {
  PSID owner = NULL;
  PSECURITY_DESCRIPTOR sd = NULL;
  if (GetSecurityInfo(h, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, &owner, NULL, NULL, NULL,
                      &sd) != ERROR_SUCCESS)
    return false;
  bool same = owner != NULL && EqualSid(owner, user);
  LocalFree(sd);
  return same;
}

/*
 * One entry `name` (UTF-16, inside `dir`, a UTF-16 path with room for it):
 * opened without sharing (so the open fails while anybody, a live writer
 * included, holds the file), checked, and deleted through that handle, so
 * that what is checked is what goes.
 */
static int remove_if_stale(const wchar_t *path, PSID user, uint64_t min_age, uint64_t now,
                           bool *gone) {
  *gone = false;
  HANDLE h = CreateFileW(path, DELETE | READ_CONTROL | FILE_READ_ATTRIBUTES, 0, NULL,
                         OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, NULL);
  if (h == INVALID_HANDLE_VALUE) return 0; /* in use, vanished, or not ours to open */
  int rc = 0;
  BY_HANDLE_FILE_INFORMATION info;
  if (!GetFileInformationByHandle(h, &info) ||
      (info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT |
                                FILE_ATTRIBUTE_DEVICE)) != 0)
    goto done;
  uint64_t t = ((uint64_t)info.ftLastWriteTime.dwHighDateTime << 32) |
               info.ftLastWriteTime.dwLowDateTime;
  const uint64_t unix_epoch = UINT64_C(116444736000000000);
  uint64_t mtime = t > unix_epoch ? (t - unix_epoch) / 10000000u : 0;
  if (mtime > now || now - mtime < min_age) goto done;
  if (user == NULL || !owned_by(h, user)) goto done;
  FILE_DISPOSITION_INFO del;
  del.DeleteFile = TRUE;
  if (SetFileInformationByHandle(h, FileDispositionInfo, &del, sizeof del))
    *gone = true;
  else
    rc = last_error();
done:
  CloseHandle(h); /* deletes the file when marked */
  return rc;
}

int hurray__os_remove_stale(const char *dir, bool (*is_temp)(void *ctx, const char *name),
                            void *ctx, uint64_t min_age, uint32_t *removed, int *first_error,
                            char *first_name, size_t name_cap) {
  *removed = 0;
  *first_error = 0;
  if (name_cap > 0) first_name[0] = '\0';
  WidePath wp;
  int e = widen(dir, &wp);
  if (e != 0) return e;
  size_t dl = wcslen(wp.w);
  /* dir + '\\' + a name of at most MAX_PATH UTF-16 units + NUL */
  wchar_t *path = hurray__malloc((dl + 2 + MAX_PATH + 1) * sizeof *path);
  if (path == NULL) {
    widen_done(&wp);
    return ERROR_NOT_ENOUGH_MEMORY;
  }
  memcpy(path, wp.w, dl * sizeof *path);
  widen_done(&wp);
  if (dl > 0 && path[dl - 1] != L'\\' && path[dl - 1] != L'/' && path[dl - 1] != L':')
    path[dl++] = L'\\';
  path[dl] = L'*';
  path[dl + 1] = L'\0';
  WIN32_FIND_DATAW fd;
  HANDLE find = FindFirstFileW(path, &fd);
  if (find == INVALID_HANDLE_VALUE) {
    e = last_error();
    hurray__free(path);
    return e == ERROR_FILE_NOT_FOUND ? 0 : e; /* an empty drive root */
  }
  union {
    TOKEN_USER tu;
    char bytes[256];
  } ubuf;
  PSID user = process_user(&ubuf, (DWORD)sizeof ubuf);
  uint64_t now = 0, nsec = 0;
  if (!hurray__os_clock(false, &now, &nsec)) now = 0;
  do {
    if ((fd.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) != 0)
      continue;
    char name[4 * MAX_PATH];
    if (WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, fd.cFileName, -1, name,
                            (int)sizeof name, NULL, NULL) <= 0)
      continue;
    if (!is_temp(ctx, name)) continue;
    size_t nl = wcslen(fd.cFileName);
    if (nl > MAX_PATH) continue;
    memcpy(path + dl, fd.cFileName, (nl + 1) * sizeof *path);
    bool gone = false;
    e = remove_if_stale(path, user, min_age, now, &gone);
    if (gone && *removed < UINT32_MAX) (*removed)++;
    if (e != 0 && *first_error == 0) {
      *first_error = e;
      if (name_cap > 0) snprintf(first_name, name_cap, "%s", name);
    }
  } while (FindNextFileW(find, &fd));
  FindClose(find);
  hurray__free(path);
  return 0;
}

/* ---- memory mapping ----------------------------------------------------------------- */

uint64_t hurray__os_page_size(void) {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwPageSize > 0 ? si.dwPageSize : 4096u;
}

static uint64_t granularity(void) {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwAllocationGranularity > 0 ? si.dwAllocationGranularity : 65536u;
}

int hurray__os_map(HurrayOsFile f, uint64_t size, uint64_t align, bool copy_on_write,
                   void **addr, const char **step) {
  *addr = NULL;
  *step = copy_on_write ? "mapping the file copy-on-write" : "mapping the file";
  /* PAGE_WRITECOPY needs only read access to the file; FILE_MAP_COPY views
   * copy a page on its first write, and the copy never reaches the file.
   * Windows charges such a view against the commit limit in full. */
  HANDLE m = CreateFileMappingW(f, NULL, copy_on_write ? PAGE_WRITECOPY : PAGE_READONLY, 0, 0,
                                NULL);
  if (m == NULL) return last_error();
  const DWORD view = copy_on_write ? FILE_MAP_COPY : FILE_MAP_READ;
  int e = 0;
  void *a = NULL;
  if (align <= granularity()) {
    /* Views start at a multiple of the allocation granularity (64 KiB). */
    a = MapViewOfFile(m, view, 0, 0, (SIZE_T)size);
    if (a == NULL) e = last_error();
  } else {
    /* Find an aligned free range by reserving size + align, release it and
     * map there; another thread may take the range in between, so retry. */
    for (int attempt = 0; attempt < 64 && a == NULL; attempt++) {
      uint8_t *res = VirtualAlloc(NULL, (SIZE_T)(size + align), MEM_RESERVE, PAGE_NOACCESS);
      if (res == NULL) {
        e = last_error();
        *step = "reserving address space";
        break;
      }
      uintptr_t al = ((uintptr_t)res + (uintptr_t)(align - 1)) & ~(uintptr_t)(align - 1);
      VirtualFree(res, 0, MEM_RELEASE);
      a = MapViewOfFileEx(m, view, 0, 0, (SIZE_T)size, (void *)al);
      if (a == NULL) e = last_error();
    }
  }
  CloseHandle(m); /* the view keeps the mapping alive */
  if (a == NULL) return e != 0 ? e : ERROR_NOT_ENOUGH_MEMORY;
  *addr = a;
  return 0;
}

void hurray__os_unmap(void *addr, size_t size) {
  (void)size;
  if (addr != NULL) UnmapViewOfFile(addr);
}

void hurray__os_will_read(const void *addr, size_t len) {
#if defined(_WIN32_WINNT) && _WIN32_WINNT >= 0x0602
  WIN32_MEMORY_RANGE_ENTRY r;
  r.VirtualAddress = (void *)(uintptr_t)addr;
  r.NumberOfBytes = len;
  (void)PrefetchVirtualMemory(GetCurrentProcess(), 1, &r, 0);
#else
  (void)addr;
  (void)len;
#endif
}

void hurray__os_prefault_read(const void *p, size_t n) {
  if (n >= ((size_t)64 << 10)) hurray__os_will_read(p, n);
}

int hurray__os_resident(const void *addr, size_t len, unsigned char *vec) {
  (void)addr;
  (void)len;
  (void)vec;
  return ENOSYS;
}

int hurray__os_populate_read(const void *addr, size_t len) {
  hurray__os_will_read(addr, len);
  return ENOSYS;
}

void hurray__os_prefault_write(void *p, size_t n) {
  (void)p;
  (void)n;
}

/* ---- a worker thread ---------------------------------------------------------- */

typedef struct ThreadStart {
  void (*fn)(void *arg);
  void *arg;
} ThreadStart;

static DWORD WINAPI thread_trampoline(LPVOID p) {
  ThreadStart st = *(ThreadStart *)p;
  hurray__free(p);
  st.fn(st.arg);
  return 0;
}

int hurray__thread_start(HurrayThread *t, void (*fn)(void *arg), void *arg) {
  ThreadStart *st = hurray__malloc(sizeof *st);
  if (st == NULL) return ERROR_NOT_ENOUGH_MEMORY;
  st->fn = fn;
  st->arg = arg;
  HANDLE h = CreateThread(NULL, 0, thread_trampoline, st, 0, NULL);
  if (h == NULL) {
    int e = last_error();
    hurray__free(st);
    return e;
  }
  t->handle = h;
  return 0;
}

void hurray__thread_join(HurrayThread *t) {
  if (t->handle == NULL) return;
  (void)WaitForSingleObject((HANDLE)t->handle, INFINITE);
  (void)CloseHandle((HANDLE)t->handle);
  t->handle = NULL;
}

#endif /* _WIN32 */
