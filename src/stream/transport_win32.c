/*
 * File-descriptor transport of the stream reader and writer on Windows.
 *
 * A descriptor is a C runtime one (_open, _fileno, _open_osfhandle). When its
 * handle is a socket (getsockopt answers for it), reads and writes go through
 * recv and WSASend, since ReadFile on an overlapped socket handle is not
 * reliable; everything else goes through _read and _write in binary mode.
 * Windows has no SIGPIPE: a write to a closed pipe fails with EPIPE. Socket
 * errors are mapped to the nearest errno value so that the messages and the
 * callers stay the same as on POSIX.
 */
#include "stream/stream_internal.h"

#if defined(_WIN32)

#if !defined(WIN32_LEAN_AND_MEAN)
#define WIN32_LEAN_AND_MEAN
#endif
#if !defined(NOMINMAX)
#define NOMINMAX
#endif
#include <winsock2.h>
#include <windows.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <sys/stat.h>

/* Bytes handed to one call at most (_read and _write take an unsigned int). */
#define MAX_IO_CALL ((uint64_t)1 << 30)
/* WSABUF entries per WSASend at most. */
#define MAX_WSABUF 64

/*
 * The UCRT (MSVC builds, MinGW's UCRT flavour) calls the process's
 * invalid-parameter handler for a descriptor that is not open, and the
 * default one ends the process. Around each C runtime call on the caller's
 * descriptor, a handler that returns is installed for this thread only, so
 * that a bad descriptor is an EBADF failure, as on POSIX (CPython does the
 * same). msvcrt.dll just fails the call.
 */
#if defined(_MSC_VER) || defined(_UCRT)
#include <stdlib.h>
#if !defined(_MSC_VER)
/* MinGW-w64 linked against the UCRT: older headers lack the declaration. */
_CRTIMP _invalid_parameter_handler __cdecl
_set_thread_local_invalid_parameter_handler(_invalid_parameter_handler handler);
#endif
static void __cdecl ignore_parameter(const wchar_t *expr, const wchar_t *fn, const wchar_t *file,
                                     unsigned int line, uintptr_t reserved) {
  (void)expr;
  (void)fn;
  (void)file;
  (void)line;
  (void)reserved;
}
#define CRT_CALL_BEGIN \
  _invalid_parameter_handler saved_iph_ = _set_thread_local_invalid_parameter_handler(ignore_parameter);
#define CRT_CALL_END _set_thread_local_invalid_parameter_handler(saved_iph_);
#else
#define CRT_CALL_BEGIN
#define CRT_CALL_END
#endif

static SOCKET socket_of(int fd) {
  CRT_CALL_BEGIN
  intptr_t h = _get_osfhandle(fd);
  CRT_CALL_END
  return (SOCKET)h;
}

void hurray__fd_classify(int fd, bool *is_socket, bool *guard_sigpipe) {
  *is_socket = false;
  *guard_sigpipe = false; /* no SIGPIPE on Windows */
  intptr_t h = (intptr_t)socket_of(fd);
  if (h == -1 || h == -2) return;
  if (GetFileType((HANDLE)h) == FILE_TYPE_PIPE) {
    /* Sockets report FILE_TYPE_PIPE; only a socket answers getsockopt (it
     * fails with WSANOTINITIALISED in a process that never made one). */
    int type = 0;
    int len = (int)sizeof type;
    if (getsockopt((SOCKET)h, SOL_SOCKET, SO_TYPE, (char *)&type, &len) == 0) {
      *is_socket = true;
      return;
    }
  }
  CRT_CALL_BEGIN
  (void)_setmode(fd, _O_BINARY);
  CRT_CALL_END
}

int hurray__fd_close(int fd) {
  CRT_CALL_BEGIN
  int rc = _close(fd);
  int e = rc != 0 ? errno : 0;
  CRT_CALL_END
  return e == EINTR ? 0 : e;
}

int hurray__fd_dup(int fd, int64_t position, int *out, bool *seek_failed) {
  *out = -1;
  *seek_failed = false;
  int d, e = 0;
  CRT_CALL_BEGIN
  d = _dup(fd);
  if (d < 0) e = errno;
  CRT_CALL_END
  if (d < 0) return e != 0 ? e : EBADF;
  /* _dup makes an inheritable handle: keep it out of child processes, as
   * O_CLOEXEC does on POSIX. */
  if (!SetHandleInformation((HANDLE)_get_osfhandle(d), HANDLE_FLAG_INHERIT, 0)) {
    (void)_close(d);
    return EIO;
  }
  if (position >= 0 && _lseeki64(d, position, SEEK_SET) < 0) {
    e = errno;
    (void)_close(d);
    *seek_failed = true;
    return e;
  }
  *out = d;
  return 0;
}

int hurray__fd_open_path(const char *path, bool write, int *out) {
  *out = -1;
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
  if (n <= 0) return EINVAL;
  wchar_t *w = hurray__malloc((size_t)n * sizeof *w);
  if (w == NULL) return ENOMEM;
  int e = 0;
  if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
    e = EINVAL;
  } else {
    *out = write ? _wopen(w, _O_WRONLY | _O_CREAT | _O_TRUNC | _O_BINARY | _O_NOINHERIT,
                          _S_IREAD | _S_IWRITE)
                 : _wopen(w, _O_RDONLY | _O_BINARY | _O_NOINHERIT);
    if (*out < 0) e = errno;
  }
  hurray__free(w);
  return e;
}

/* A Windows Sockets error as an errno value. */
static int wsa_errno(int w) {
  switch (w) {
    case WSAEINTR: return EINTR;
    case WSAEWOULDBLOCK: return EAGAIN;
    case WSAEBADF:
    case WSAENOTSOCK: return EBADF;
    case WSAEFAULT: return EFAULT;
    case WSAEINVAL: return EINVAL;
    case WSAEMSGSIZE: return EMSGSIZE;
    case WSAENOBUFS: return ENOBUFS;
    case WSAENETDOWN: return ENETDOWN;
    case WSAENETRESET: return ENETRESET;
    case WSAECONNABORTED: return ECONNABORTED;
    case WSAECONNRESET: return ECONNRESET;
    case WSAENOTCONN: return ENOTCONN;
    case WSAESHUTDOWN: return EPIPE; /* writing after shutdown(SD_SEND) */
    case WSAETIMEDOUT: return ETIMEDOUT;
    default: return EIO;
  }
}

/* Waits until the socket is readable or writable (WSAPoll); 0 or an errno value. */
static int wait_socket(SOCKET s, short events) {
  WSAPOLLFD p;
  p.fd = s;
  p.events = events;
  p.revents = 0;
  for (;;) {
    if (WSAPoll(&p, 1, -1) >= 0) return 0;
    int e = WSAGetLastError();
    if (e != WSAEINTR) return wsa_errno(e);
  }
}

bool hurray__fd_never_blocks(int fd) {
  intptr_t h = (intptr_t)socket_of(fd);
  return h != -1 && h != -2 && GetFileType((HANDLE)h) == FILE_TYPE_DISK;
}

/* No wake channel on Windows (see hurray_stream_reader_interrupt): a read
 * blocked in _read or recv is not woken. */
int hurray__fd_waker_open(HurrayFdWaker *w) {
  w->rd = w->wr = -1;
  w->poll_first = false;
  return 0;
}

void hurray__fd_waker_wake(const HurrayFdWaker *w) { (void)w; }

void hurray__fd_waker_test_portable(bool on) { (void)on; }

void hurray__fd_waker_close(HurrayFdWaker *w) { w->rd = w->wr = -1; }

int hurray__fd_read_once(int fd, bool is_socket, HurrayFdWaker *waker, uint8_t *buf, size_t len,
                         size_t *got) {
  (void)waker; /* no wake channel on Windows */
  *got = 0;
  if (len > (size_t)MAX_IO_CALL) len = (size_t)MAX_IO_CALL;
  if (is_socket) {
    SOCKET s = socket_of(fd);
    for (;;) {
      int n = recv(s, (char *)buf, (int)len, 0);
      if (n >= 0) {
        *got = (size_t)n;
        return 0;
      }
      int e = WSAGetLastError();
      if (e == WSAEINTR) continue;
      if (e == WSAEWOULDBLOCK) {
        int w = wait_socket(s, POLLRDNORM);
        if (w != 0) return w;
        continue;
      }
      if (e == WSAESHUTDOWN) return 0; /* the read side was shut down: end of stream */
      return wsa_errno(e);
    }
  }
  for (;;) {
    CRT_CALL_BEGIN
    int n = _read(fd, buf, (unsigned)len);
    int e = n < 0 ? errno : 0;
    CRT_CALL_END
    if (n >= 0) {
      *got = (size_t)n;
      return 0;
    }
    if (e == EINTR) continue;
    if (e == EAGAIN) { /* a PIPE_NOWAIT pipe: nothing to wait on but time */
      Sleep(1);
      continue;
    }
    return e;
  }
}

/* One WSASend over the chunks from (index, skip); bytes sent, or -1 and *err. */
static int64_t send_gather(SOCKET s, const HurrayStreamChunk *chunks, size_t count, size_t index,
                           uint64_t skip, int *err) {
  WSABUF bufs[MAX_WSABUF];
  DWORD n = 0;
  uint64_t total = 0;
  for (size_t i = index; i < count && n < MAX_WSABUF; i++) {
    uint64_t off = (i == index) ? skip : 0;
    uint64_t len = chunks[i].len - off;
    if (len == 0) continue;
    if (len > MAX_IO_CALL - total) len = MAX_IO_CALL - total;
    bufs[n].buf = (char *)(uintptr_t)(chunks[i].data + off);
    bufs[n].len = (ULONG)len;
    n++;
    total += len;
    if (total >= MAX_IO_CALL) break;
  }
  if (n == 0) return 0;
  DWORD sent = 0;
  if (WSASend(s, bufs, n, &sent, 0, NULL, NULL) != 0) {
    *err = WSAGetLastError();
    return -1;
  }
  return (int64_t)sent;
}

/* One _write of (part of) chunk `index` from `skip`; bytes written, or -1 and *err. */
static int64_t write_one(int fd, const HurrayStreamChunk *c, uint64_t skip, int *err) {
  uint64_t len = c->len - skip;
  if (len > MAX_IO_CALL) len = MAX_IO_CALL;
  CRT_CALL_BEGIN
  int n = _write(fd, c->data + skip, (unsigned)len);
  int e = n < 0 ? errno : 0;
  DWORD last = n < 0 ? GetLastError() : 0;
  CRT_CALL_END
  if (n < 0) {
    /* The C runtime reports a pipe whose reader is gone (ERROR_NO_DATA) as
     * EINVAL; it is EPIPE, as on POSIX. */
    if (e == EINVAL && (last == ERROR_NO_DATA || last == ERROR_BROKEN_PIPE)) e = EPIPE;
    *err = e;
    return -1;
  }
  return n;
}

int hurray__fd_write_all(int fd, bool is_socket, bool guard_sigpipe,
                         const HurrayStreamChunk *chunks, size_t count, uint64_t *written) {
  (void)guard_sigpipe;
  SOCKET s = is_socket ? socket_of(fd) : INVALID_SOCKET;
  size_t index = 0;
  uint64_t skip = 0;
  *written = 0;
  for (;;) {
    while (index < count && chunks[index].len == skip) {
      index++;
      skip = 0;
    }
    if (index >= count) return 0;
    int e = 0;
    int64_t n = is_socket ? send_gather(s, chunks, count, index, skip, &e)
                          : write_one(fd, &chunks[index], skip, &e);
    if (n < 0) {
      if (is_socket) {
        if (e == WSAEINTR) continue;
        if (e == WSAEWOULDBLOCK) {
          int w = wait_socket(s, POLLWRNORM);
          if (w != 0) return w;
          continue;
        }
        return wsa_errno(e);
      }
      if (e == EINTR) continue;
      if (e == EAGAIN) {
        Sleep(1);
        continue;
      }
      return e;
    }
    if (n == 0) return EIO; /* no progress on a non-empty write */
    uint64_t done = (uint64_t)n;
    *written += done;
    while (done > 0) {
      uint64_t left = chunks[index].len - skip;
      if (done < left) {
        skip += done;
        done = 0;
      } else {
        done -= left;
        index++;
        skip = 0;
      }
    }
  }
}

#endif /* _WIN32 */
