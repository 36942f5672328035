/*
 * Streams over live transports: pipes with a writer thread and a reader
 * thread, items handed out as soon as their bytes arrive, partial reads and
 * writes from callbacks, EINTR, non-blocking fds, SIGPIPE, transport errors.
 *
 * Windows (MinGW, run under Wine by scripts/windows_cross.sh): pipes are
 * _pipe descriptors and sockets a loopback TCP pair behind _open_osfhandle
 * descriptors; threads come from winpthreads. Windows has no SIGPIPE, no
 * signals that interrupt I/O and no non-blocking anonymous pipes: those
 * tests check the Windows behaviour instead, or skip with the reason.
 */
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <io.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#include <sys/socket.h>
#endif
#include <time.h>
#include <unistd.h>

#include "test_stream_util.h"

static const uint64_t k_sizes[] = {1, 0, 300, 1024 * 1024, 7, 2 * 1024 * 1024 + 3, 64};
#define K_N (sizeof k_sizes / sizeof k_sizes[0])

/* ---- writer and reader threads over a pipe ------------------------------------ */

/* Items the reader has fully received, shared by both threads. */
typedef struct Ack {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t acked;
} Ack;

typedef struct PipeJob {
  int fd;
  HurrayStatus status;
  size_t items;
  bool use_callback; /* reader: a callback that blocks until `len` bytes arrive */
  bool lockstep;     /* writer: wait until the reader has item i before writing i+1 */
  Ack *ack;
} PipeJob;

static void *writer_main(void *arg) {
  PipeJob *j = arg;
  HurrayStreamWriter *w = NULL;
  j->status = hurray_stream_writer_to_fd(j->fd, HURRAY_STREAM_OWN_FD, &w);
  for (size_t i = 0; j->status == HURRAY_OK && i < K_N; i++) {
    su_write_dense(w, k_sizes[i], (unsigned)i);
    if (j->lockstep) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_sec += 20;
      pthread_mutex_lock(&j->ack->mu);
      while (j->ack->acked <= i) {
        if (pthread_cond_timedwait(&j->ack->cv, &j->ack->mu, &until) == ETIMEDOUT) {
          j->status = HURRAY_ERR_INTERNAL; /* the reader sat on a complete item */
          break;
        }
      }
      pthread_mutex_unlock(&j->ack->mu);
    }
  }
  if (w != NULL && j->status == HURRAY_OK) j->status = hurray_stream_writer_finish(w, NULL);
  hurray_stream_writer_destroy(&w);
  return NULL;
}

/* Blocks until exactly len bytes or end of file, like a buffered file read. */
static int64_t read_full(void *ctx, uint8_t *buf, size_t len) {
  int fd = *(int *)ctx;
  size_t got = 0;
  while (got < len) {
    size_t want = len - got < ((size_t)1 << 30) ? len - got : ((size_t)1 << 30);
#if defined(_WIN32)
    int n = read(fd, buf + got, (unsigned)want); /* the C runtime's read takes an unsigned */
#else
    ssize_t n = read(fd, buf + got, want);
#endif
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    got += (size_t)n;
  }
  return (int64_t)got;
}

static void *reader_main(void *arg) {
  PipeJob *j = arg;
  HurrayStreamReader *r = NULL;
  int fd = j->fd;
  j->status = j->use_callback ? hurray_stream_reader_from_callback(read_full, &fd, NULL, &r)
                              : hurray_stream_reader_from_fd(fd, NULL, &r);
  HurrayStreamItem *it = NULL;
  while (j->status == HURRAY_OK) {
    j->status = hurray_stream_reader_next_item(r, &it, NULL);
    if (j->status != HURRAY_OK || it == NULL) break;
    su_check_dense(it, k_sizes[j->items], (unsigned)j->items);
    hurray_stream_item_destroy(&it);
    j->items++;
    pthread_mutex_lock(&j->ack->mu);
    j->ack->acked = j->items;
    pthread_cond_signal(&j->ack->cv);
    pthread_mutex_unlock(&j->ack->mu);
  }
  hurray_stream_reader_destroy(&r);
  close(fd);
  return NULL;
}

static void run_pipe(bool lockstep, bool use_callback, bool nonblocking) {
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  if (nonblocking) {
#if defined(_WIN32)
    fail_msg("no non-blocking anonymous pipes on Windows");
#else
    assert_int_equal(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0);
    assert_int_equal(fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK), 0);
#endif
  }
  Ack ack;
  pthread_mutex_init(&ack.mu, NULL);
  pthread_cond_init(&ack.cv, NULL);
  ack.acked = 0;
  PipeJob wj, rj;
  memset(&wj, 0, sizeof wj);
  memset(&rj, 0, sizeof rj);
  wj.fd = fds[1];
  wj.lockstep = lockstep;
  wj.ack = &ack;
  rj.fd = fds[0];
  rj.use_callback = use_callback;
  rj.ack = &ack;
  pthread_t wt, rt;
  assert_int_equal(pthread_create(&wt, NULL, writer_main, &wj), 0);
  assert_int_equal(pthread_create(&rt, NULL, reader_main, &rj), 0);
  pthread_join(rt, NULL);
  pthread_join(wt, NULL);
  assert_int_equal(rj.status, HURRAY_OK);
  assert_int_equal(rj.items, K_N);
  assert_int_equal(wj.status, HURRAY_OK); /* in lockstep: no item waited for more bytes */
  pthread_mutex_destroy(&ack.mu);
  pthread_cond_destroy(&ack.cv);
}

static void test_threads_fd(void **state) {
  (void)state;
  run_pipe(false, false, false);
}

static void test_threads_callback(void **state) {
  (void)state;
  run_pipe(false, true, false);
}

static void test_threads_nonblocking(void **state) {
  (void)state;
#if defined(_WIN32)
  tu_skip("the C runtime's pipes cannot be made non-blocking (no O_NONBLOCK)");
#endif
  run_pipe(false, false, true);
}

static void test_item_as_soon_as_arrived_fd(void **state) {
  (void)state;
  run_pipe(true, false, false);
}

static void test_item_as_soon_as_arrived_callback(void **state) {
  (void)state;
  run_pipe(true, true, false);
}

/* ---- partial I/O from callbacks --------------------------------------------------- */

typedef struct Trickle {
  const uint8_t *data;
  size_t len, pos;
  unsigned calls;
  uint8_t *out;
  size_t out_len, out_cap;
} Trickle;

/* One byte per call, with -EINTR and -EAGAIN interleaved. */
static int64_t trickle_read(void *ctx, uint8_t *buf, size_t len) {
  Trickle *t = ctx;
  t->calls++;
  if (t->calls % 5 == 0) return -EINTR;
  if (t->calls % 7 == 0) return -EAGAIN;
  if (len == 0) return -EINVAL;
  if (t->pos >= t->len) return 0;
  buf[0] = t->data[t->pos++];
  return 1;
}

static int64_t trickle_write(void *ctx, const uint8_t *buf, size_t len) {
  Trickle *t = ctx;
  t->calls++;
  if (t->calls % 3 == 0) return -EINTR;
  if (len == 0) return -EINVAL;
  if (t->out_len == t->out_cap) return -ENOSPC;
  t->out[t->out_len++] = buf[0];
  return 1;
}

static void test_one_byte_callbacks(void **state) {
  (void)state;
  Trickle wt;
  memset(&wt, 0, sizeof wt);
  wt.out_cap = 1 << 20;
  wt.out = malloc(wt.out_cap);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_callback(trickle_write, &wt, 0, &w), HURRAY_OK);
  static const uint64_t sizes[] = {3, 0, 1000, 5};
  for (unsigned i = 0; i < 4; i++) su_write_dense(w, sizes[i], i);
  assert_int_equal(hurray_stream_writer_offset(w), wt.out_len);
  hurray_stream_writer_destroy(&w);

  Trickle rt;
  memset(&rt, 0, sizeof rt);
  rt.data = wt.out;
  rt.len = wt.out_len;
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_callback(trickle_read, &rt, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  for (unsigned i = 0; i < 4; i++) {
    HurrayError e;
    if (hurray_stream_reader_next_item(r, &it, &e) != HURRAY_OK) fail_msg("%s", e.message);
    su_check_dense(it, sizes[i], i);
    hurray_stream_item_destroy(&it);
  }
  assert_int_equal(hurray_stream_reader_next_item(r, &it, NULL), HURRAY_OK);
  assert_null(it);
  assert_true(rt.calls > rt.len); /* really one byte at a time, with retries */
  hurray_stream_reader_destroy(&r);
  free(wt.out);
}

static int64_t failing_read(void *ctx, uint8_t *buf, size_t len) {
  (void)buf;
  (void)len;
  int *mode = ctx;
  if (*mode == 0) return -EIO;
  return (int64_t)len + 1; /* more than asked */
}

static int64_t failing_write(void *ctx, const uint8_t *buf, size_t len) {
  (void)buf;
  int *mode = ctx;
  if (*mode == 0) return -ENOSPC;
  if (*mode == 1) return 0;
  /* mode 2: accept 10 bytes, then fail */
  static size_t total;
  if (total >= 10) return -EIO;
  size_t n = len < 10 - total ? len : 10 - total;
  total += n;
  return (int64_t)n;
}

static void test_callback_failures(void **state) {
  (void)state;
  HurrayError e;
  for (int mode = 0; mode < 2; mode++) {
    HurrayStreamReader *r = NULL;
    assert_int_equal(hurray_stream_reader_from_callback(failing_read, &mode, NULL, &r), HURRAY_OK);
    HurrayStreamItem *it = NULL;
    assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_ERR_IO);
    if (mode == 0) assert_non_null(strstr(e.message, "errno 5"));
    else assert_non_null(strstr(e.message, "for a request of"));
    hurray_stream_reader_destroy(&r);
  }
  for (int mode = 0; mode < 3; mode++) {
    HurrayStreamWriter *w = NULL;
    assert_int_equal(hurray_stream_writer_to_callback(failing_write, &mode, 0, &w), HURRAY_OK);
    HurrayDescriptor *d = su_dense(4);
    uint8_t data[16] = {0};
    const void *bufs[1] = {data};
    uint64_t sizes[1] = {16};
    assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_IO);
    if (mode == 0) assert_non_null(strstr(e.message, "errno 28"));
    if (mode == 2) assert_int_equal(hurray_stream_writer_offset(w), 10);
    /* The stream is torn: later writes are refused. */
    assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_STREAM);
    assert_non_null(strstr(e.message, "torn"));
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    hurray_stream_writer_destroy(&w);
  }
}

/* ---- fd errors, SIGPIPE, EINTR --------------------------------------------------------- */

/* A connected pair of stream sockets as file descriptors: socketpair on
 * POSIX; on Windows loopback TCP sockets wrapped by _open_osfhandle (the
 * library drives them with recv and WSASend). */
static void socket_pair(int sv[2]) {
#if defined(_WIN32)
  static bool started;
  if (!started) {
    WSADATA wd;
    assert_int_equal(WSAStartup(MAKEWORD(2, 2), &wd), 0);
    started = true;
  }
  SOCKET l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  assert_true(l != INVALID_SOCKET);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
  int alen = (int)sizeof a;
  assert_int_equal(getsockname(l, (struct sockaddr *)&a, &alen), 0);
  assert_int_equal(listen(l, 1), 0);
  SOCKET c = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
  assert_true(c != INVALID_SOCKET);
  assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof a), 0);
  SOCKET s = accept(l, NULL, NULL);
  assert_true(s != INVALID_SOCKET);
  closesocket(l);
  sv[0] = _open_osfhandle((intptr_t)c, _O_BINARY);
  sv[1] = _open_osfhandle((intptr_t)s, _O_BINARY);
  assert_true(sv[0] >= 0 && sv[1] >= 0);
#else
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
#endif
}

#if defined(_WIN32)
/* Windows has no SIGPIPE: a write to a pipe whose reader is gone fails with
 * EPIPE, and nothing else can happen to the process. */
static void test_sigpipe_on_pipe_does_not_kill(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  close(fds[0]);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_fd(fds[1], 0, &w), HURRAY_OK);
  HurrayDescriptor *d = su_dense(4);
  uint8_t data[16] = {0};
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {16};
  HurrayError e;
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_IO);
  print_message("closed pipe: %s\n", e.message);
  assert_non_null(strstr(e.message, "errno 32")); /* EPIPE */
  hurray_stream_writer_destroy(&w);
  close(fds[1]);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* A socket whose peer is gone: TCP accepts the first bytes into its buffers
 * and fails a later send once the peer's reset arrives. */
static void test_sigpipe_on_socket_does_not_kill(void **state) {
  (void)state;
  int sv[2];
  socket_pair(sv);
  close(sv[1]);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_fd(sv[0], HURRAY_STREAM_OWN_FD, &w), HURRAY_OK);
  HurrayDescriptor *d = su_dense(1 << 14); /* float32: 64 KiB */
  uint8_t *data = calloc(1, 1 << 16);
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {1 << 16};
  HurrayError e;
  HurrayStatus st = HURRAY_OK;
  for (int i = 0; i < 200 && st == HURRAY_OK; i++) {
    st = hurray_stream_writer_write(w, d, bufs, sizes, 1, &e);
    if (st == HURRAY_OK) Sleep(5);
  }
  assert_int_equal(st, HURRAY_ERR_IO);
  print_message("socket with its peer gone: %s\n", e.message);
  assert_non_null(strstr(e.message, "write failed"));
  hurray_stream_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  free(data);
}
#else
static volatile sig_atomic_t g_sigpipes;

static void on_sigpipe(int sig) {
  (void)sig;
  g_sigpipes++;
}

/* Writes to a pipe whose reader is gone under one SIGPIPE disposition. */
static void write_to_closed_pipe(void) {
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  close(fds[0]);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_fd(fds[1], 0, &w), HURRAY_OK);
  HurrayDescriptor *d = su_dense(4);
  uint8_t data[16] = {0};
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {16};
  HurrayError e;
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "errno 32")); /* EPIPE */
  /* Nothing left pending, nothing left blocked. */
  sigset_t pending, mask;
  sigpending(&pending);
  assert_false(sigismember(&pending, SIGPIPE));
  pthread_sigmask(SIG_SETMASK, NULL, &mask);
  assert_false(sigismember(&mask, SIGPIPE));
  hurray_stream_writer_destroy(&w);
  close(fds[1]);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_sigpipe_on_pipe_does_not_kill(void **state) {
  (void)state;
  signal(SIGPIPE, SIG_DFL); /* what would kill the process */
  write_to_closed_pipe();
  signal(SIGPIPE, SIG_IGN); /* CPython's setting */
  write_to_closed_pipe();
  /* A handler: the write's own SIGPIPE is consumed, never delivered. */
  g_sigpipes = 0;
  signal(SIGPIPE, on_sigpipe);
  write_to_closed_pipe();
  assert_int_equal(g_sigpipes, 0);
  signal(SIGPIPE, SIG_DFL);
}

static void test_sigpipe_on_socket_does_not_kill(void **state) {
  (void)state;
  signal(SIGPIPE, SIG_DFL);
  int sv[2];
  socket_pair(sv);
  close(sv[1]);
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_fd(sv[0], HURRAY_STREAM_OWN_FD, &w), HURRAY_OK);
  HurrayDescriptor *d = su_dense(4);
  uint8_t data[16] = {0};
  const void *bufs[1] = {data};
  uint64_t sizes[1] = {16};
  HurrayError e;
  assert_int_equal(hurray_stream_writer_write(w, d, bufs, sizes, 1, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "errno 32"));
  hurray_stream_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}
#endif

static void test_socket_round_trip(void **state) {
  (void)state;
  int sv[2];
  socket_pair(sv);
  PipeJob wj;
  memset(&wj, 0, sizeof wj);
  wj.fd = sv[1];
  pthread_t wt;
  assert_int_equal(pthread_create(&wt, NULL, writer_main, &wj), 0);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(sv[0], NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  size_t n = 0;
  while (hurray_stream_reader_next_item(r, &it, NULL) == HURRAY_OK && it != NULL) {
    su_check_dense(it, k_sizes[n], (unsigned)n);
    n++;
    hurray_stream_item_destroy(&it);
  }
  pthread_join(wt, NULL);
  assert_int_equal(n, K_N);
  assert_int_equal(wj.status, HURRAY_OK);
  hurray_stream_reader_destroy(&r);
  close(sv[0]);
}

static void test_read_error_names_errno(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  HurrayStreamReader *r = NULL;
  /* Reading the write end of a pipe fails with EBADF. */
  assert_int_equal(hurray_stream_reader_from_fd(fds[1], NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "errno 9"));
  hurray_stream_reader_destroy(&r);
  close(fds[0]);
  close(fds[1]);
}

#if defined(_WIN32)
static void test_eintr_is_retried(void **state) {
  (void)state;
  tu_skip("no signals that interrupt a blocked read or write (no EINTR)");
}
#else
/* Atomic, not volatile sig_atomic_t: the handler runs in the thread the
 * signal was sent to, while this thread reads the count (ThreadSanitizer
 * reports the volatile as the race it is). */
static atomic_int g_interrupts;

static void on_usr1(int sig) {
  (void)sig;
  int saved = errno;
  atomic_fetch_add(&g_interrupts, 1);
  errno = saved;
}

typedef struct Slow {
  int fd;
  HurrayStatus st;
  size_t items;
} Slow;

static void *slow_reader(void *arg) {
  Slow *s = arg;
  HurrayStreamReader *r = NULL;
  s->st = hurray_stream_reader_from_fd(s->fd, NULL, &r);
  HurrayStreamItem *it = NULL;
  while (s->st == HURRAY_OK) {
    s->st = hurray_stream_reader_next_item(r, &it, NULL);
    if (s->st != HURRAY_OK || it == NULL) break;
    su_check_dense(it, k_sizes[s->items], (unsigned)s->items);
    s->items++;
    hurray_stream_item_destroy(&it);
  }
  hurray_stream_reader_destroy(&r);
  return NULL;
}

static void *big_writer(void *arg) {
  Slow *s = arg;
  HurrayStreamWriter *w = NULL;
  s->st = hurray_stream_writer_to_fd(s->fd, 0, &w);
  for (size_t i = 0; s->st == HURRAY_OK && i < K_N; i++) su_write_dense(w, k_sizes[i], (unsigned)i);
  hurray_stream_writer_destroy(&w);
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Signals without SA_RESTART interrupt blocked reads and writes: retried. */
static void test_eintr_is_retried(void **state) {
  (void)state;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = 0; /* no SA_RESTART: read/write fail with EINTR */
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
  atomic_store(&g_interrupts, 0);

  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  Slow rs = {fds[0], HURRAY_OK, 0}, ws = {fds[1], HURRAY_OK, 0};
  pthread_t rt, wt;
  assert_int_equal(pthread_create(&rt, NULL, slow_reader, &rs), 0);
  /* The reader blocks in read(2) on an empty pipe: interrupt it. */
  for (int i = 0; i < 5; i++) {
    sleep_ms(20);
    pthread_kill(rt, SIGUSR1);
  }
  assert_int_equal(pthread_create(&wt, NULL, big_writer, &ws), 0);
  /* Interrupt both while megabytes flow through a 64 KiB pipe. */
  for (int i = 0; i < 20; i++) {
    sleep_ms(2);
    pthread_kill(wt, SIGUSR1);
    pthread_kill(rt, SIGUSR1);
  }
  pthread_join(wt, NULL);
  close(fds[1]);
  pthread_join(rt, NULL);
  close(fds[0]);
  assert_int_equal(ws.st, HURRAY_OK);
  assert_int_equal(rs.st, HURRAY_OK);
  assert_int_equal(rs.items, K_N);
  assert_true(atomic_load(&g_interrupts) > 0);
  signal(SIGUSR1, SIG_DFL);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_fd),
      cmocka_unit_test(test_threads_callback),
      cmocka_unit_test(test_threads_nonblocking),
      cmocka_unit_test(test_item_as_soon_as_arrived_fd),
      cmocka_unit_test(test_item_as_soon_as_arrived_callback),
      cmocka_unit_test(test_one_byte_callbacks),
      cmocka_unit_test(test_callback_failures),
      cmocka_unit_test(test_sigpipe_on_pipe_does_not_kill),
      cmocka_unit_test(test_sigpipe_on_socket_does_not_kill),
      cmocka_unit_test(test_socket_round_trip),
      cmocka_unit_test(test_read_error_names_errno),
      cmocka_unit_test(test_eintr_is_retried),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
