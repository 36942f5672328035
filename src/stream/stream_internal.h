/*
 * Internals shared by the stream reader, writer and items (src/stream).
 * Never installed.
 */
#ifndef HURRAY_STREAM_INTERNAL_H
#define HURRAY_STREAM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hurray/stream.h"
#include "internal/common.h"

/* One buffer of a tensor item. */
typedef struct HurrayStreamBuf {
  uint8_t *data;   /* owned (hurray_free) unless view; NULL when empty or taken */
  uint64_t size;
  bool view;       /* points into the caller's bytes of a memory reader */
  bool taken;      /* moved out with hurray_stream_item_take_buffer */
} HurrayStreamBuf;

struct HurrayStreamItem {
  HurrayStreamItemKind kind;
  HurrayDescriptor *desc;     /* owned */
  uint64_t offset;            /* stream offset of the descriptor */
  uint32_t buffer_count;
  HurrayStreamBuf *buffers;   /* owned array of buffer_count entries (NULL if 0) */
  uint32_t member_count;      /* members read so far (== head member_count when done) */
  uint32_t member_cap;
  HurrayStreamItem **members; /* owned array of owned items */
};

/* Allocates an empty item of `kind` owning `desc` (moved in even on failure:
 * it is destroyed when the item cannot be created). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__stream_item_new(
    HurrayStreamItemKind kind, HurrayDescriptor *desc, uint64_t offset, HurrayStreamItem **out);

/* Appends `member` (moved in; destroyed on failure) to a composite item. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__stream_item_add_member(
    HurrayStreamItem *parent, HurrayStreamItem *member);

/* ---- composite validation glue ------------------------------------------------
 * The composite rules live with the composite validator (include/hurray/
 * composite.h); the stream code drives it one composite level at a time and
 * places its errors in the stream: `offset` is the stream offset of the head
 * or member (HURRAY_NO_OFFSET for the writer) and `where` prefixes field
 * paths ("" at the top, "members[1]." below). */

typedef struct HurrayStreamCompositeCheck HurrayStreamCompositeCheck;

/* Starts validating the composite whose head is `head` (borrowed) at nesting
 * `depth` (0 = outermost) with HURRAY_DECODE_* `options`. *out owned
 * (hurray__stream_composite_free). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__stream_composite_begin(
    const HurrayDescriptor *head, uint32_t depth, uint32_t options, uint64_t offset,
    const char *where, HurrayStreamCompositeCheck **out, HurrayError *err);

/* Checks the next member (its descriptor, or its head for a nested
 * composite); the last one also runs the close-time checks. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__stream_composite_member(
    HurrayStreamCompositeCheck *c, const HurrayDescriptor *member, uint64_t offset,
    HurrayError *err);

/* After the last member: HURRAY_OK when all arrived and every check passed. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__stream_composite_finish(
    HurrayStreamCompositeCheck *c, HurrayError *err);

HURRAY_INTERNAL void hurray__stream_composite_free(HurrayStreamCompositeCheck *c);

/* ---- transport helpers ------------------------------------------------------------
 * src/stream/transport.c (POSIX) and src/stream/transport_win32.c (Windows,
 * where `fd` is a C runtime descriptor: _open, _fileno, _open_osfhandle, and
 * a socket behind one is driven with recv/WSASend). Failures are errno
 * values (on Windows, socket errors are mapped to the nearest errno value). */

/* What fd is: *is_socket, and *guard_sigpipe when a write to it can raise
 * SIGPIPE (pipes, FIFOs, anything unknown; never on Windows). On Windows the
 * descriptor is also switched to binary mode (_setmode _O_BINARY): a stream
 * is bytes, and a text-mode descriptor would rewrite its line feeds. */
HURRAY_INTERNAL void hurray__fd_classify(int fd, bool *is_socket, bool *guard_sigpipe);

/* Closes fd (close(2); _close on Windows). 0, or an errno value; EINTR is
 * not a failure (the descriptor is released all the same). */
HURRAY_INTERNAL int hurray__fd_close(int fd);

/* A duplicate of fd in *out, close-on-exec (on Windows not inherited by
 * child processes), moved to byte `position` when it is >= 0 (a duplicate
 * shares the file position with fd). 0, or an errno value with *out -1 (and
 * *seek_failed set when the duplicate was made but could not be moved). */
HURRAY_INTERNAL int hurray__fd_dup(int fd, int64_t position, int *out, bool *seek_failed);

/* Opens `path` (UTF-8 on Windows, bytes as given elsewhere) for reading, or
 * for writing (created with mode 0666 less the umask, or truncated), close-on-
 * exec; on a FIFO, waits for the other end. 0, or an errno value with *out -1. */
HURRAY_INTERNAL int hurray__fd_open_path(const char *path, bool write, int *out);

/* True when a read of fd never waits for a peer (regular files, block
 * devices; an fd that is not open, or open for writing only, where the read
 * fails at once), so that there is nothing to interrupt. */
HURRAY_INTERNAL bool hurray__fd_never_blocks(int fd);

/*
 * A wake channel for hurray_stream_reader_interrupt: an eventfd (Linux) or
 * a non-blocking pipe (other POSIX systems), both close-on-exec; `rd` is
 * what a reader polls beside its fd, `wr` what hurray__fd_waker_wake writes
 * (the same descriptor for an eventfd). Once woken it stays readable: it is
 * never drained, so every later wait returns at once. On Windows there is
 * none (rd == wr == -1).
 */
typedef struct HurrayFdWaker {
  int rd;
  int wr;
  /* Set by hurray__fd_read_once (the reading thread only) once a read that
   * does not wait (Linux RWF_NOWAIT) proved unsupported for the fd: every
   * read then polls first. */
  bool poll_first;
} HurrayFdWaker;

/* Opens the channel: 0 or an errno value (EMFILE, ...); w is {-1, -1} on
 * failure and on Windows. poll_first starts false. */
HURRAY_INTERNAL int hurray__fd_waker_open(HurrayFdWaker *w);
/* Makes w->rd readable, for good. Safe from any thread (one write(2)). */
HURRAY_INTERNAL void hurray__fd_waker_wake(const HurrayFdWaker *w);
/* Closes the channel (no-op for {-1, -1}) and sets it to {-1, -1}. */
HURRAY_INTERNAL void hurray__fd_waker_close(HurrayFdWaker *w);

/* Tests: channels opened while `on` are a pipe whose reads always poll
 * first, as on POSIX systems other than Linux (where there is no eventfd and
 * no read that skips the wait). No-op on Windows. */
HURRAY_INTERNAL void hurray__fd_waker_test_portable(bool on);

/* What hurray__fd_read_once returns when the wake channel woke it (never an
 * errno value). */
#define HURRAY__FD_WOKEN (-1)

/*
 * One successful read of at most `len` (> 0) bytes: retries EINTR, waits on
 * EAGAIN (poll on POSIX). *got receives the count (0 only at end of file).
 * `is_socket` as hurray__fd_classify found it. With a wake channel (`waker`
 * not NULL, waker->rd >= 0; POSIX), the read never blocks in read(2): it
 * reads without waiting where the system can for that fd (recv with
 * MSG_DONTWAIT on a socket, preadv2 with RWF_NOWAIT on Linux for the rest;
 * so that the bulk path costs no more system calls than before) and, when
 * nothing has arrived, waits in poll for the fd or waker->rd, returning
 * HURRAY__FD_WOKEN as soon as waker->rd is readable; elsewhere it polls
 * first, then reads. Returns 0, HURRAY__FD_WOKEN or an errno value.
 */
HURRAY_INTERNAL int hurray__fd_read_once(int fd, bool is_socket, HurrayFdWaker *waker,
                                         uint8_t *buf, size_t len, size_t *got);

/* Writes every byte of the iovec-like list to fd (writev or, on a socket,
 * sendmsg with MSG_NOSIGNAL; on Windows _write, or WSASend on a socket),
 * retrying EINTR and partial writes and waiting on EAGAIN; SIGPIPE is kept
 * from killing the process. Returns 0 or an errno value; *written receives
 * the bytes written before a failure. */
typedef struct HurrayStreamChunk {
  const uint8_t *data;
  uint64_t len;
} HurrayStreamChunk;

HURRAY_INTERNAL int hurray__fd_write_all(int fd, bool is_socket, bool guard_sigpipe,
                                         const HurrayStreamChunk *chunks, size_t count,
                                         uint64_t *written);

#endif /* HURRAY_STREAM_INTERNAL_H */
