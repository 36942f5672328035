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
HURRAY_INTERNAL HurrayStatus hurray__stream_item_new(HurrayStreamItemKind kind,
                                                     HurrayDescriptor *desc, uint64_t offset,
                                                     HurrayStreamItem **out);

/* Appends `member` (moved in; destroyed on failure) to a composite item. */
HURRAY_INTERNAL HurrayStatus hurray__stream_item_add_member(HurrayStreamItem *parent,
                                                            HurrayStreamItem *member);

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
HURRAY_INTERNAL HurrayStatus hurray__stream_composite_begin(const HurrayDescriptor *head,
                                                            uint32_t depth, uint32_t options,
                                                            uint64_t offset, const char *where,
                                                            HurrayStreamCompositeCheck **out,
                                                            HurrayError *err);

/* Checks the next member (its descriptor, or its head for a nested
 * composite); the last one also runs the close-time checks. */
HURRAY_INTERNAL HurrayStatus hurray__stream_composite_member(HurrayStreamCompositeCheck *c,
                                                             const HurrayDescriptor *member,
                                                             uint64_t offset, HurrayError *err);

/* After the last member: HURRAY_OK when all arrived and every check passed. */
HURRAY_INTERNAL HurrayStatus hurray__stream_composite_finish(HurrayStreamCompositeCheck *c,
                                                             HurrayError *err);

HURRAY_INTERNAL void hurray__stream_composite_free(HurrayStreamCompositeCheck *c);

/* ---- transport helpers (src/stream/transport.c) ------------------------------ */

/* One successful read(2) of at most `len` (> 0) bytes: retries EINTR, waits
 * with poll on EAGAIN. *got receives the count (0 only at end of file).
 * Returns 0 or the errno value of the failure. */
HURRAY_INTERNAL int hurray__fd_read_once(int fd, uint8_t *buf, size_t len, size_t *got);

/* Writes every byte of the iovec-like list to fd (writev or, on a socket,
 * sendmsg with MSG_NOSIGNAL), retrying EINTR and partial writes and waiting
 * on EAGAIN; SIGPIPE is kept from killing the process. Returns 0 or an errno
 * value; *written receives the bytes written before a failure. */
typedef struct HurrayStreamChunk {
  const uint8_t *data;
  uint64_t len;
} HurrayStreamChunk;

HURRAY_INTERNAL int hurray__fd_write_all(int fd, bool is_socket, bool guard_sigpipe,
                                         const HurrayStreamChunk *chunks, size_t count,
                                         uint64_t *written);

#endif /* HURRAY_STREAM_INTERNAL_H */
