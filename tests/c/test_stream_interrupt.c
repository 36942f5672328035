/*
 * hurray_stream_reader_interrupt: a reader thread blocked in the middle of a
 * frame (or between frames) on a pipe or a socket returns HURRAY_ERR_STREAM
 * promptly when another thread interrupts it, and every later read fails
 * the same way; interrupting before any read, twice, after the end; memory,
 * callback and regular-file readers; non-blocking fds; the channel other
 * POSIX systems use (a pipe, polled before every read); a race of interrupts
 * against a live stream (run under ThreadSanitizer by scripts/tsan.sh).
 *
 * No test can hang the suite: alarm() ends the process after WATCHDOG_S
 * seconds, and each wait for the reader thread is bounded (WAKE_BOUND_MS).
 */
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <io.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if !defined(_WIN32)
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#endif

#include "test_stream_util.h"
#include "stream/stream_internal.h"

/* The reader thread must return within this after the interrupt. */
#define WAKE_BOUND_MS 2000
#define WATCHDOG_S 120

/* ---- helpers ------------------------------------------------------------------ */

#if !defined(_WIN32) /* the timed tests below are POSIX only */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
#endif

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* The bytes of a stream of dense tensors of n[0..count) floats (pattern i). */
static uint8_t *encode(const uint64_t *n, size_t count, size_t *len) {
  HurrayStreamWriter *w = NULL;
  assert_int_equal(hurray_stream_writer_to_memory(0, &w), HURRAY_OK);
  for (size_t i = 0; i < count; i++) su_write_dense(w, n[i], (unsigned)i);
  const uint8_t *p = NULL;
  assert_int_equal(hurray_stream_writer_memory(w, &p, len), HURRAY_OK);
  uint8_t *copy = malloc(*len);
  assert_non_null(copy);
  memcpy(copy, p, *len);
  hurray_stream_writer_destroy(&w);
  return copy;
}

/* A reader thread: reads items until the end or a failure; the last status
 * and error are kept. */
typedef struct ReadJob {
  HurrayStreamReader *r;
  atomic_int started;
  atomic_int done;
  HurrayStatus st;
  HurrayError err;
  size_t items;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} ReadJob;

static void *read_main(void *arg) {
  ReadJob *j = arg;
  atomic_store(&j->started, 1);
  HurrayStreamItem *it = NULL;
  for (;;) {
    j->st = hurray_stream_reader_next_item(j->r, &it, &j->err);
    if (j->st != HURRAY_OK || it == NULL) break;
    j->items++;
    hurray_stream_item_destroy(&it);
  }
  pthread_mutex_lock(&j->mu);
  atomic_store(&j->done, 1);
  pthread_cond_signal(&j->cv);
  pthread_mutex_unlock(&j->mu);
  return NULL;
}

static void job_start(ReadJob *j, HurrayStreamReader *r, pthread_t *t) {
  memset(j, 0, sizeof *j);
  j->r = r;
  atomic_init(&j->started, 0);
  atomic_init(&j->done, 0);
  pthread_mutex_init(&j->mu, NULL);
  pthread_cond_init(&j->cv, NULL);
  assert_int_equal(pthread_create(t, NULL, read_main, j), 0);
  while (!atomic_load(&j->started)) sleep_ms(1);
}

/* Waits at most ms for the reader thread to be done; true when it is. */
static bool job_wait(ReadJob *j, long ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += ms / 1000;
  until.tv_nsec += (ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&j->mu);
  while (!atomic_load(&j->done))
    if (pthread_cond_timedwait(&j->cv, &j->mu, &until) != 0) break;
  bool done = atomic_load(&j->done) != 0;
  pthread_mutex_unlock(&j->mu);
  return done;
}

static void job_end(ReadJob *j, pthread_t t) {
  pthread_join(t, NULL);
  pthread_mutex_destroy(&j->mu);
  pthread_cond_destroy(&j->cv);
}

static void expect_interrupted(HurrayStatus st, const HurrayError *e) {
  assert_int_equal(st, HURRAY_ERR_STREAM);
  if (strstr(e->message, "interrupted") == NULL) fail_msg("message: %s", e->message);
}

/* Every later read fails as interrupted, without reading. */
static void expect_stays_interrupted(HurrayStreamReader *r) {
  for (int k = 0; k < 2; k++) {
    HurrayStreamItem *it = (HurrayStreamItem *)(uintptr_t)1;
    HurrayError e;
    expect_interrupted(hurray_stream_reader_next_item(r, &it, &e), &e);
    assert_null(it);
  }
}

#if !defined(_WIN32)

static void write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    assert_true(k > 0);
    p += k;
    n -= (size_t)k;
  }
}

/* A connected pair of stream sockets. */
static void socket_pair(int sv[2]) { assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0); }

/*
 * A reader thread over fd (the read end of `wr`'s transport) blocked after
 * `prefix` bytes of `bytes` have arrived (mid-frame, or on a frame
 * boundary), interrupted from this thread: it returns HURRAY_ERR_STREAM
 * within WAKE_BOUND_MS, having handed out `want_items` items.
 */
static void blocked_then_interrupted(int rd, int wr, const uint8_t *bytes, size_t prefix,
                                     size_t want_items) {
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(rd, NULL, &r), HURRAY_OK);
  ReadJob j;
  pthread_t t;
  job_start(&j, r, &t);
  if (prefix > 0) write_all(wr, bytes, prefix);
  /* Let it read what arrived and block waiting for the rest. */
  sleep_ms(100);
  assert_false(atomic_load(&j.done));
  double t0 = now_ms();
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  bool done = job_wait(&j, WAKE_BOUND_MS);
  double took = now_ms() - t0;
  if (!done) {
    /* Unblock it so that the suite goes on, then fail. */
    close(wr);
    job_wait(&j, WAKE_BOUND_MS);
    fail_msg("the reader was not woken within %d ms", WAKE_BOUND_MS);
  }
  job_end(&j, t);
  expect_interrupted(j.st, &j.err);
  assert_int_equal(j.items, want_items);
  assert_true(took < WAKE_BOUND_MS);
  expect_stays_interrupted(r);
  /* More bytes arriving change nothing. */
  write_all(wr, bytes + prefix, 16);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
}

typedef enum Transport { T_PIPE, T_SOCKET, T_NONBLOCKING_PIPE } Transport;

static void open_transport(Transport t, int fds[2]) {
  if (t == T_SOCKET) {
    socket_pair(fds);
    return;
  }
  assert_int_equal(pipe(fds), 0);
  if (t == T_NONBLOCKING_PIPE)
    assert_int_equal(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0);
}

/* Blocked in the descriptor's first bytes, inside the descriptor, inside a
 * large buffer, and between two frames; on every transport. */
static void interrupt_everywhere(Transport t) {
  const uint64_t n[] = {1 << 18, 3};
  size_t len = 0;
  uint8_t *bytes = encode(n, 2, &len);
  uint64_t dlen = 0;
  HurrayDescriptor *d = su_dense(n[0]);
  assert_int_equal(hurray_descriptor_encoded_len(d, &dlen), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  const size_t frame0 = (size_t)dlen + 4u * (size_t)n[0];
  const size_t cuts[] = {0, 3, (size_t)dlen - 5, (size_t)dlen + 1000, (size_t)dlen + 300000,
                         frame0};
  for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
    int fds[2];
    open_transport(t, fds);
    blocked_then_interrupted(fds[0], fds[1], bytes, cuts[k], cuts[k] == frame0 ? 1u : 0u);
    close(fds[0]);
    close(fds[1]);
  }
  free(bytes);
}

static void test_interrupt_blocked_on_pipe(void **state) {
  (void)state;
  interrupt_everywhere(T_PIPE);
}

static void test_interrupt_blocked_on_socket(void **state) {
  (void)state;
  interrupt_everywhere(T_SOCKET);
}

static void test_interrupt_blocked_on_nonblocking_pipe(void **state) {
  (void)state;
  interrupt_everywhere(T_NONBLOCKING_PIPE);
}

/* What other POSIX systems do: a pipe as the channel, poll before every
 * read. */
static void test_interrupt_portable_channel(void **state) {
  (void)state;
  hurray__fd_waker_test_portable(true);
  interrupt_everywhere(T_PIPE);
  interrupt_everywhere(T_SOCKET);
  hurray__fd_waker_test_portable(false);
}

/* Signals without SA_RESTART (EINTR) while blocked are retried, and an
 * interrupt after them still wakes the reader. */
static atomic_int g_signals; /* atomic: the handler runs on the reader thread */
static void on_usr1(int sig) {
  (void)sig;
  int saved = errno;
  atomic_fetch_add(&g_signals, 1);
  errno = saved;
}

static void test_eintr_then_interrupt(void **state) {
  (void)state;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
  for (int portable = 0; portable < 2; portable++) {
    hurray__fd_waker_test_portable(portable != 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    HurrayStreamReader *r = NULL;
    assert_int_equal(hurray_stream_reader_from_fd(fds[0], NULL, &r), HURRAY_OK);
    ReadJob j;
    pthread_t t;
    job_start(&j, r, &t);
    atomic_store(&g_signals, 0);
    for (int k = 0; k < 5; k++) {
      sleep_ms(20);
      pthread_kill(t, SIGUSR1);
    }
    sleep_ms(50);
    assert_false(atomic_load(&j.done)); /* EINTR did not end the read */
    assert_true(atomic_load(&g_signals) >= 1);
    assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
    assert_true(job_wait(&j, WAKE_BOUND_MS));
    job_end(&j, t);
    expect_interrupted(j.st, &j.err);
    hurray_stream_reader_destroy(&r);
    close(fds[0]);
    close(fds[1]);
  }
  hurray__fd_waker_test_portable(false);
  sigaction(SIGUSR1, &old, NULL);
}

/* Data flowing normally is unaffected by the channel: every item arrives,
 * on each kind of channel and transport (the bulk path reads without
 * waiting first on Linux, polls first elsewhere). */
static void test_streams_still_flow(void **state) {
  (void)state;
  const uint64_t n[] = {1, 0, 300, 1 << 20, 7, (2 << 20) + 3, 64};
  size_t len = 0;
  uint8_t *bytes = encode(n, 7, &len);
  for (int portable = 0; portable < 2; portable++) {
    hurray__fd_waker_test_portable(portable != 0);
    for (int tr = 0; tr < 3; tr++) {
      int fds[2];
      open_transport((Transport)tr, fds);
      HurrayStreamReader *r = NULL;
      assert_int_equal(hurray_stream_reader_from_fd(fds[0], NULL, &r), HURRAY_OK);
      ReadJob j;
      pthread_t t;
      job_start(&j, r, &t);
      /* In uneven pieces, so that reads find the pipe empty now and then. */
      for (size_t off = 0; off < len;) {
        size_t piece = 1 + (off * 7919u) % 200000u;
        if (piece > len - off) piece = len - off;
        write_all(fds[1], bytes + off, piece);
        off += piece;
        if ((off & 3u) == 0) sleep_ms(1);
      }
      close(fds[1]);
      assert_true(job_wait(&j, 20000));
      job_end(&j, t);
      assert_int_equal(j.st, HURRAY_OK);
      assert_int_equal(j.items, 7);
      hurray_stream_reader_destroy(&r);
      close(fds[0]);
    }
  }
  hurray__fd_waker_test_portable(false);
  free(bytes);
}

/* Before any read; twice; after the end of stream: on a pipe. */
static void test_interrupt_pipe_states(void **state) {
  (void)state;
  const uint64_t n[] = {5};
  size_t len = 0;
  uint8_t *bytes = encode(n, 1, &len);
  /* Before any read, with a whole item waiting in the pipe: nothing read. */
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  write_all(fds[1], bytes, len);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(fds[0], NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK); /* twice: no-op */
  expect_stays_interrupted(r);
  assert_int_equal(hurray_stream_reader_offset(r), 0);
  hurray_stream_reader_destroy(&r);
  /* The bytes are still in the pipe: a new reader gets the item. */
  assert_int_equal(hurray_stream_reader_from_fd(fds[0], NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayError e;
  close(fds[1]);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  su_check_dense(it, 5, 0);
  hurray_stream_item_destroy(&it);
  /* After the end. */
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  assert_null(it);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  close(fds[0]);
  free(bytes);
}

/* Many interrupts at random moments of a live stream (writer thread,
 * reader thread, this thread interrupting): the reader always returns, with
 * the whole stream or interrupted; run under ThreadSanitizer by
 * scripts/tsan.sh. */
typedef struct WriteJob {
  int fd;
  const uint8_t *bytes;
  size_t len;
} WriteJob;

static void *write_main(void *arg) {
  WriteJob *w = arg;
  size_t off = 0;
  while (off < w->len) {
    size_t piece = w->len - off < 50000 ? w->len - off : 50000;
    ssize_t k = write(w->fd, w->bytes + off, piece);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break; /* the reader end was closed */
    off += (size_t)k;
    struct timespec ts = {0, 100000L}; /* a slow producer: the reader waits often */
    nanosleep(&ts, NULL);
  }
  close(w->fd);
  return NULL;
}

static void test_interrupt_races(void **state) {
  (void)state;
  signal(SIGPIPE, SIG_IGN);
  const uint64_t n[] = {100000, 3, 70000, 1, 250000, 9, 40000, 2};
  size_t len = 0;
  uint8_t *bytes = encode(n, 8, &len);
  unsigned seed = (unsigned)time(NULL);
  int interrupted = 0, whole = 0;
  for (int round = 0; round < 40; round++) {
    hurray__fd_waker_test_portable(round % 4 == 3);
    int fds[2];
    if (round % 2 == 0)
      assert_int_equal(pipe(fds), 0);
    else
      socket_pair(fds);
    HurrayStreamReader *r = NULL;
    assert_int_equal(hurray_stream_reader_from_fd(fds[0], NULL, &r), HURRAY_OK);
    WriteJob wj = {fds[1], bytes, len};
    pthread_t wt, rt;
    ReadJob j;
    job_start(&j, r, &rt);
    assert_int_equal(pthread_create(&wt, NULL, write_main, &wj), 0);
    seed = seed * 1103515245u + 12345u;
    struct timespec ts = {0, (long)((seed >> 8) % 12000u) * 1000L};
    nanosleep(&ts, NULL);
    assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
    if (!job_wait(&j, WAKE_BOUND_MS)) fail_msg("round %d: the reader was not woken", round);
    job_end(&j, rt);
    close(fds[0]); /* the writer, if still writing, gets EPIPE and ends */
    pthread_join(wt, NULL);
    if (j.st == HURRAY_OK) {
      assert_int_equal(j.items, 8); /* it ended before the interrupt */
      whole++;
    } else {
      /* Interrupted mid-stream, or after the last item while it waited
       * for the end (the writer had not closed yet). */
      expect_interrupted(j.st, &j.err);
      assert_true(j.items <= 8);
      interrupted++;
    }
    expect_stays_interrupted(r);
    hurray_stream_reader_destroy(&r);
  }
  hurray__fd_waker_test_portable(false);
  signal(SIGPIPE, SIG_DFL);
  print_message("[ NOTE     ] 40 rounds: %d interrupted mid-stream, %d had read it all\n",
                interrupted, whole);
  assert_true(interrupted > 0);
  free(bytes);
}

/* A regular file never blocks: the interrupt is seen at the next read. */
static void test_interrupt_regular_file(void **state) {
  (void)state;
  const uint64_t n[] = {5, 6};
  size_t len = 0;
  uint8_t *bytes = encode(n, 2, &len);
  char path[600];
  snprintf(path, sizeof path, "%s/hurray-interrupt-XXXXXX", tu_tmp_root());
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  write_all(fd, bytes, len);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(fd, NULL, &r), HURRAY_OK);
  HurrayStreamItem *it = NULL;
  HurrayError e;
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  su_check_dense(it, 5, 0);
  hurray_stream_item_destroy(&it);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  close(fd);
  free(bytes);
}

/* Out of descriptors: the reader cannot make its wake channel and says so
 * (in a child process, whose descriptor limit is lowered). */
static void test_no_descriptor_for_the_channel(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int top = fds[1];
    for (int k = 0; k < 4096; k++) {
      int d = dup(0);
      if (d < 0) break;
      if (d > top) top = d;
    }
    struct rlimit rl = {(rlim_t)top + 1, (rlim_t)top + 1};
    setrlimit(RLIMIT_NOFILE, &rl);
    while (dup(0) >= 0) {
    }
    HurrayStreamReader *r = NULL;
    if (hurray_stream_reader_from_fd(fds[0], NULL, &r) != HURRAY_ERR_IO) _exit(2);
    if (r != NULL) _exit(3);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  close(fds[0]);
  close(fds[1]);
}

#else /* _WIN32 */

/* Windows: no wake channel; the reader is marked and says the blocked read
 * cannot be woken. */
static void test_interrupt_blocked_on_pipe(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(tu_pipe(fds), 0);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_fd(fds[0], NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_ERR_UNSUPPORTED);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  _close(fds[0]);
  _close(fds[1]);
}
static void test_interrupt_blocked_on_socket(void **state) {
  (void)state;
  tu_skip("a blocked recv is not woken on Windows (documented)");
}
static void test_interrupt_blocked_on_nonblocking_pipe(void **state) {
  (void)state;
  tu_skip("no non-blocking anonymous pipes");
}
static void test_interrupt_portable_channel(void **state) {
  (void)state;
  tu_skip("POSIX channel");
}
static void test_eintr_then_interrupt(void **state) {
  (void)state;
  tu_skip("no signals that interrupt a blocked read");
}
static void test_streams_still_flow(void **state) {
  (void)state;
  tu_skip("covered by test_stream_pipe");
}
static void test_interrupt_pipe_states(void **state) {
  (void)state;
  tu_skip("a pipe reader's interrupt is HURRAY_ERR_UNSUPPORTED (test_interrupt_blocked_on_pipe)");
}
static void test_interrupt_races(void **state) {
  (void)state;
  tu_skip("no wake channel");
}
static void test_interrupt_regular_file(void **state) {
  (void)state;
  tu_skip("POSIX mkstemp");
}
static void test_no_descriptor_for_the_channel(void **state) {
  (void)state;
  tu_skip("no wake channel");
}

#endif

/* ---- memory and callback readers (every platform) --------------------------------- */

static void test_interrupt_memory_reader(void **state) {
  (void)state;
  const uint64_t n[] = {5, 6};
  size_t len = 0;
  uint8_t *bytes = encode(n, 2, &len);
  HurrayStreamReader *r = NULL;
  HurrayStreamItem *it = NULL;
  HurrayError e;
  /* Before any read. */
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  /* Between items, twice. */
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  su_check_dense(it, 5, 0);
  hurray_stream_item_destroy(&it);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  /* After the end; after a failure (interrupted wins from then on). */
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len, NULL, &r), HURRAY_OK);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
    hurray_stream_item_destroy(&it);
  }
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  assert_null(it);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(hurray_stream_reader_from_memory(bytes, len - 1, NULL, &r), HURRAY_OK);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_OK);
  hurray_stream_item_destroy(&it);
  assert_int_equal(hurray_stream_reader_next_item(r, &it, &e), HURRAY_ERR_STREAM);
  assert_null(strstr(e.message, "interrupted")); /* truncated */
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  expect_stays_interrupted(r);
  hurray_stream_reader_destroy(&r);
  assert_int_equal(hurray_stream_reader_interrupt(NULL), HURRAY_ERR_NULL_POINTER);
  free(bytes);
}

/* A callback reader: the callback is blocked in its own wait when the
 * interrupt comes; once it returns, the reader calls it no more and fails
 * as interrupted. */
typedef struct Feed {
  const uint8_t *bytes;
  size_t len, pos;
  atomic_int calls;
  atomic_int release; /* the callback waits for this before returning */
  atomic_int waiting;
} Feed;

static int64_t feed_read(void *ctx, uint8_t *buf, size_t len) {
  Feed *f = ctx;
  atomic_fetch_add(&f->calls, 1);
  if (f->pos >= 20) { /* 20 bytes in: wait, as a callback on a slow peer would */
    atomic_store(&f->waiting, 1);
    while (!atomic_load(&f->release)) sleep_ms(1);
  }
  size_t n = len < 7 ? len : 7;
  if (n > f->len - f->pos) n = f->len - f->pos;
  memcpy(buf, f->bytes + f->pos, n);
  f->pos += n;
  return (int64_t)n;
}

static void test_interrupt_callback_reader(void **state) {
  (void)state;
  const uint64_t n[] = {1000};
  size_t len = 0;
  uint8_t *bytes = encode(n, 1, &len);
  Feed f;
  memset(&f, 0, sizeof f);
  f.bytes = bytes;
  f.len = len;
  atomic_init(&f.calls, 0);
  atomic_init(&f.release, 0);
  atomic_init(&f.waiting, 0);
  HurrayStreamReader *r = NULL;
  assert_int_equal(hurray_stream_reader_from_callback(feed_read, &f, NULL, &r), HURRAY_OK);
  ReadJob j;
  pthread_t t;
  job_start(&j, r, &t);
  while (!atomic_load(&f.waiting)) sleep_ms(1);
  assert_int_equal(hurray_stream_reader_interrupt(r), HURRAY_OK);
  sleep_ms(50);
  assert_false(atomic_load(&j.done)); /* the callback has not returned yet */
  int calls = atomic_load(&f.calls);
  atomic_store(&f.release, 1);
  assert_true(job_wait(&j, WAKE_BOUND_MS));
  job_end(&j, t);
  expect_interrupted(j.st, &j.err);
  assert_int_equal(atomic_load(&f.calls), calls); /* not called again */
  expect_stays_interrupted(r);
  assert_int_equal(atomic_load(&f.calls), calls);
  hurray_stream_reader_destroy(&r);
  free(bytes);
}

int main(void) {
#if !defined(_WIN32)
  alarm(WATCHDOG_S); /* a hang ends the process (SIGALRM) instead of the suite */
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_interrupt_blocked_on_pipe),
      cmocka_unit_test(test_interrupt_blocked_on_socket),
      cmocka_unit_test(test_interrupt_blocked_on_nonblocking_pipe),
      cmocka_unit_test(test_interrupt_portable_channel),
      cmocka_unit_test(test_eintr_then_interrupt),
      cmocka_unit_test(test_streams_still_flow),
      cmocka_unit_test(test_interrupt_pipe_states),
      cmocka_unit_test(test_interrupt_races),
      cmocka_unit_test(test_interrupt_regular_file),
      cmocka_unit_test(test_no_descriptor_for_the_channel),
      cmocka_unit_test(test_interrupt_memory_reader),
      cmocka_unit_test(test_interrupt_callback_reader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
