/*
 * File-descriptor transport of the stream reader and writer on POSIX
 * systems: EINTR-safe, partial-I/O-safe reads and gathered writes, and
 * SIGPIPE containment. Windows: transport_win32.c.
 */
#include "stream/stream_internal.h"

#if !defined(_WIN32)

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif

/* Bytes handed to one writev/sendmsg call at most (keeps the iovec total far
 * below SSIZE_MAX on every platform). */
#define HURRAY_STREAM_MAX_IO_CALL ((uint64_t)1 << 30)
/* iovec entries per call at most (POSIX guarantees IOV_MAX >= 16). */
#if defined(IOV_MAX) && IOV_MAX < 256
#define HURRAY_STREAM_MAX_IOV IOV_MAX
#else
#define HURRAY_STREAM_MAX_IOV 256
#endif

/* Waits until fd is ready for `events` (used on EAGAIN for non-blocking fds). */
static int wait_ready(int fd, short events) {
  struct pollfd p;
  p.fd = fd;
  p.events = events;
  p.revents = 0;
  for (;;) {
    int n = poll(&p, 1, -1);
    if (n >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

void hurray__fd_classify(int fd, bool *is_socket, bool *guard_sigpipe) {
  struct stat st;
  *is_socket = false;
  *guard_sigpipe = true;
  if (fstat(fd, &st) == 0) {
    *is_socket = S_ISSOCK(st.st_mode);
    /* Regular files and devices never raise SIGPIPE; pipes do. Anything
     * unexpected is guarded too. */
    *guard_sigpipe = !*is_socket && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) &&
                     !S_ISBLK(st.st_mode);
  }
}

int hurray__fd_close(int fd) {
  if (close(fd) != 0 && errno != EINTR) return errno;
  return 0;
}

int hurray__fd_dup(int fd, int64_t position, int *out, bool *seek_failed) {
  *out = -1;
  *seek_failed = false;
  int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0) return errno;
  if (position >= 0 && lseek(d, (off_t)position, SEEK_SET) < 0) {
    int e = errno;
    close(d);
    *seek_failed = true;
    return e;
  }
  *out = d;
  return 0;
}

int hurray__fd_open_path(const char *path, bool write, int *out) {
  *out = write ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)
               : open(path, O_RDONLY | O_CLOEXEC);
  return *out < 0 ? errno : 0;
}

bool hurray__fd_never_blocks(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return true;
  /* Opened for writing only: read(2) fails at once (EBADF), while poll
   * would never report it readable. */
  int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_ACCMODE) == O_WRONLY;
}

/* ---- wake channel ------------------------------------------------------------ */

#if defined(__linux__) && defined(EFD_CLOEXEC) && defined(EFD_NONBLOCK)
#define HURRAY_STREAM_EVENTFD 1
#else
#define HURRAY_STREAM_EVENTFD 0
#endif

/* Tests: channels opened while set are what other POSIX systems get. */
static atomic_bool g_portable_waker;
void hurray__fd_waker_test_portable(bool on) { atomic_store(&g_portable_waker, on); }

static int set_fd_flags(int fd) {
  int fl = fcntl(fd, F_GETFD);
  if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) != 0) return errno;
  fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) return errno;
  return 0;
}

int hurray__fd_waker_open(HurrayFdWaker *w) {
  w->rd = w->wr = -1;
  w->poll_first = false;
  const bool portable = atomic_load_explicit(&g_portable_waker, memory_order_relaxed);
#if HURRAY_STREAM_EVENTFD
  if (!portable) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return errno;
    w->rd = w->wr = fd;
    return 0;
  }
#endif
  int p[2];
  if (pipe(p) != 0) return errno;
  int e = set_fd_flags(p[0]);
  if (e == 0) e = set_fd_flags(p[1]);
  if (e != 0) {
    close(p[0]);
    close(p[1]);
    return e;
  }
  w->rd = p[0];
  w->wr = p[1];
  w->poll_first = portable; /* as where no read can skip the wait */
  return 0;
}

void hurray__fd_waker_wake(const HurrayFdWaker *w) {
  if (w->wr < 0) return;
  /* An eventfd takes an 8-byte count, a pipe any byte (8 of them here). */
  const uint64_t one = 1;
  const void *p = &one;
  size_t n = sizeof one;
  /* EAGAIN: a full pipe (or counter) is already readable, which is all a
   * wake needs. */
  while (write(w->wr, p, n) < 0 && errno == EINTR) {
  }
}

void hurray__fd_waker_close(HurrayFdWaker *w) {
  if (w->rd >= 0) close(w->rd);
  if (w->wr >= 0 && w->wr != w->rd) close(w->wr);
  w->rd = w->wr = -1;
}

/* Waits until fd is readable (or hung up, or in error: the read then says
 * which) or wake_fd is readable (HURRAY__FD_WOKEN). */
static int wait_readable_or_woken(int fd, int wake_fd) {
  struct pollfd p[2];
  p[0].fd = fd;
  p[0].events = POLLIN;
  p[1].fd = wake_fd;
  p[1].events = POLLIN;
  for (;;) {
    p[0].revents = p[1].revents = 0;
    int n = poll(p, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (p[1].revents != 0) return HURRAY__FD_WOKEN;
    if (p[0].revents != 0) return 0;
  }
}

/* One read that does not wait, where the system has one for fd: bytes, or
 * -1 with errno (EAGAIN: nothing yet; EOPNOTSUPP or EINVAL: unsupported,
 * ENOSYS on a kernel without preadv2). */
static ssize_t read_nowait(int fd, bool is_socket, uint8_t *buf, size_t len) {
#if defined(MSG_DONTWAIT)
  if (is_socket) return recv(fd, buf, len, MSG_DONTWAIT);
#else
  (void)is_socket;
#endif
#if defined(__linux__) && defined(RWF_NOWAIT)
  struct iovec iov;
  iov.iov_base = buf;
  iov.iov_len = len;
  return preadv2(fd, &iov, 1, -1, RWF_NOWAIT); /* -1: at the file position, as read(2) */
#else
  (void)fd;
  (void)buf;
  (void)len;
  errno = EOPNOTSUPP;
  return -1;
#endif
}

int hurray__fd_read_once(int fd, bool is_socket, HurrayFdWaker *waker, uint8_t *buf, size_t len,
                         size_t *got) {
  *got = 0;
  if (len > (size_t)HURRAY_STREAM_MAX_IO_CALL) len = (size_t)HURRAY_STREAM_MAX_IO_CALL;
  const int wake_fd = waker != NULL ? waker->rd : -1;
  for (;;) {
    ssize_t n;
    bool nowait = false;
    if (wake_fd < 0) {
      n = read(fd, buf, len); /* read(2) serves sockets too */
    } else if (!waker->poll_first) {
      nowait = true;
      n = read_nowait(fd, is_socket, buf, len);
    } else {
      /* Waited on here, where a wake can end the wait; the read that follows
       * then does not block (the fd is not shared with another reader: see
       * hurray_stream_reader_interrupt). */
      int w = wait_readable_or_woken(fd, wake_fd);
      if (w != 0) return w;
      n = read(fd, buf, len);
    }
    if (n >= 0) {
      *got = (size_t)n;
      return 0;
    }
    int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      int w = wake_fd >= 0 ? wait_readable_or_woken(fd, wake_fd) : wait_ready(fd, POLLIN);
      if (w != 0) return w;
      continue;
    }
    if (nowait && (e == EOPNOTSUPP || e == ENOTSUP || e == EINVAL || e == ENOSYS)) {
      waker->poll_first = true; /* this fd (or system) has no such read */
      continue;
    }
    return e;
  }
}

/*
 * SIGPIPE containment for pipes: SIGPIPE raised by write(2) is directed at the
 * calling thread, so blocking it in this thread for the duration of the write
 * keeps it from killing the process; if the write raised one (EPIPE) and none
 * was pending before, it is consumed before the old mask comes back. Only the
 * calling thread's mask changes: no global state.
 */
typedef struct SigpipeGuard {
  bool active;
  bool was_pending;
  sigset_t old_mask;
} SigpipeGuard;

static void sigpipe_block(SigpipeGuard *g) {
  sigset_t pipe_set, pending;
  g->active = false;
  g->was_pending = false;
  /* Ignored (CPython's default): nothing can kill us, skip the mask dance. */
  struct sigaction current;
  if (sigaction(SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_IGN) return;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigemptyset(&pending);
  if (sigpending(&pending) == 0) g->was_pending = sigismember(&pending, SIGPIPE) == 1;
  if (pthread_sigmask(SIG_BLOCK, &pipe_set, &g->old_mask) == 0) g->active = true;
}

static void sigpipe_restore(SigpipeGuard *g, bool got_epipe) {
  if (!g->active) return;
  int saved = errno;
  if (got_epipe && !g->was_pending) {
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) == -1 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
  errno = saved;
}

/* One writev/sendmsg over the chunks from (index, skip); returns bytes or -1. */
static ssize_t write_gather(int fd, bool is_socket, const HurrayStreamChunk *chunks, size_t count,
                            size_t index, uint64_t skip) {
  struct iovec iov[HURRAY_STREAM_MAX_IOV];
  int n = 0;
  uint64_t total = 0;
  for (size_t i = index; i < count && n < HURRAY_STREAM_MAX_IOV; i++) {
    uint64_t off = (i == index) ? skip : 0;
    uint64_t len = chunks[i].len - off;
    if (len == 0) continue;
    if (len > HURRAY_STREAM_MAX_IO_CALL - total) len = HURRAY_STREAM_MAX_IO_CALL - total;
    iov[n].iov_base = (void *)(uintptr_t)(chunks[i].data + off);
    iov[n].iov_len = (size_t)len;
    n++;
    total += len;
    if (total >= HURRAY_STREAM_MAX_IO_CALL) break;
  }
  if (n == 0) return 0;
#if defined(MSG_NOSIGNAL)
  if (is_socket) {
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = iov;
    msg.msg_iovlen = (size_t)n;
    return sendmsg(fd, &msg, MSG_NOSIGNAL);
  }
#else
  (void)is_socket;
#endif
  return writev(fd, iov, n);
}

int hurray__fd_write_all(int fd, bool is_socket, bool guard_sigpipe,
                         const HurrayStreamChunk *chunks, size_t count, uint64_t *written) {
  size_t index = 0;
  uint64_t skip = 0;
  int result = 0;
  *written = 0;
  SigpipeGuard guard;
  guard.active = false;
#if !defined(MSG_NOSIGNAL)
  if (is_socket) guard_sigpipe = true;
#endif
  if (guard_sigpipe) sigpipe_block(&guard);
  for (;;) {
    while (index < count && chunks[index].len == skip) {
      index++;
      skip = 0;
    }
    if (index >= count) break;
    ssize_t n = write_gather(fd, is_socket, chunks, count, index, skip);
    if (n < 0) {
      int e = errno;
      if (e == EINTR) continue;
      if (e == EAGAIN || e == EWOULDBLOCK) {
        int w = wait_ready(fd, POLLOUT);
        if (w == 0) continue;
        e = w;
      }
      result = e;
      break;
    }
    if (n == 0) {
      result = EIO; /* no progress on a non-empty write */
      break;
    }
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
  if (guard_sigpipe) sigpipe_restore(&guard, result == EPIPE);
  return result;
}

#endif /* !_WIN32 */
