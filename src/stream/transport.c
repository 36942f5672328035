/*
 * File-descriptor transport of the stream reader and writer on POSIX
 * systems: EINTR-safe, partial-I/O-safe reads and gathered writes, and
 * SIGPIPE containment. Windows: transport_win32.c.
 */
#include "stream/stream_internal.h"

#if !defined(_WIN32)

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

int hurray__fd_read_once(int fd, bool is_socket, uint8_t *buf, size_t len, size_t *got) {
  (void)is_socket; /* read(2) serves sockets too */
  *got = 0;
  if (len > (size_t)HURRAY_STREAM_MAX_IO_CALL) len = (size_t)HURRAY_STREAM_MAX_IO_CALL;
  for (;;) {
    ssize_t n = read(fd, buf, len);
    if (n >= 0) {
      *got = (size_t)n;
      return 0;
    }
    int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      int w = wait_ready(fd, POLLIN);
      if (w != 0) return w;
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
