/*
 * hurray/stream.h - the Hurray streaming format (docs/internals/decisions.md § Streaming
 * format, § Limits).
 *
 * A stream is a sequence of frames ending at end of file:
 *
 *   descriptor | buffer 0 bytes | buffer 1 bytes | ... | descriptor | ... EOF
 *
 * Each frame is one descriptor (self-delimiting through its descriptor_length)
 * followed by the bytes of each buffer of its buffer table, in table order,
 * with no padding. There is no framing header and no end marker. A composite
 * is its head frame (zero buffers) followed by its member_count members, each
 * of which is a frame or, nested, another composite (pre-order).
 *
 * Ending exactly on a frame boundary outside any composite is a clean end of
 * stream; ending anywhere else (inside a descriptor, inside a buffer, or
 * before a composite's last member) is an error. A stream truncated exactly
 * on a frame boundary is indistinguishable from a shorter stream: that is a
 * property of the format.
 *
 * Readers never hold more than the item being read: one descriptor and its
 * buffers, or one composite tree. Every bound is checked before anything is
 * allocated for it.
 *
 * Threads: readers and writers keep no global state, so different objects
 * may be used from different threads at the same time (the calls block; the
 * Python layer releases the GIL around them). One object must not be used by
 * two threads at once, with one exception: hurray_stream_reader_interrupt
 * may be called from any thread while another is inside
 * hurray_stream_reader_next_item on the same reader (see there).
 *
 * SIGPIPE: a writer never lets SIGPIPE kill the process. On a socket it
 * sends with MSG_NOSIGNAL; on a pipe, unless SIGPIPE is already ignored, it
 * blocks SIGPIPE in the calling thread for the duration of the write and
 * consumes a SIGPIPE that the write itself raised; either way a closed peer
 * is reported as HURRAY_ERR_IO (EPIPE).
 * Callback transports handle their own signals.
 *
 * Statuses: truncation and framing errors HURRAY_ERR_STREAM; a limit exceeded
 * HURRAY_ERR_STREAM_LIMIT; a buffer that is not producer-synced in
 * cross-machine mode HURRAY_ERR_CROSS_MACHINE; transport failures
 * HURRAY_ERR_IO (the message names the errno); a bad descriptor the
 * decoder's own status; composite violations the composite validator's.
 * Error offsets are byte offsets in the stream.
 */
#ifndef HURRAY_STREAM_H
#define HURRAY_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reader defaults (docs/internals/decisions.md § Limits). */
#define HURRAY_STREAM_DEFAULT_MAX_DESCRIPTOR_BYTES (16u * 1024u * 1024u)
#define HURRAY_STREAM_UNLIMITED UINT64_MAX
/* Composite nesting: the spec's 8 levels is both the default and the maximum. */
#define HURRAY_STREAM_MAX_COMPOSITE_DEPTH 8u

/* ---- option flags ----------------------------------------------------------- */

/* Reader and writer: refuse any buffer whose sync_mode is not producer_synced
 * (HURRAY_ERR_CROSS_MACHINE), checked before any byte of its frame is read or
 * written. */
#define HURRAY_STREAM_CROSS_MACHINE 0x01u
/* Reader over memory: a buffer whose address in the caller's bytes meets its
 * declared alignment is handed out as a view into those bytes instead of a
 * copy (see hurray_stream_item_buffer_is_view). Ignored by other sources. */
#define HURRAY_STREAM_ZERO_COPY 0x02u
/* fd transports: the reader or writer owns the descriptor and closes it
 * (writer: at finish; both: at destroy). Without it the caller's fd is only
 * borrowed and never closed. */
#define HURRAY_STREAM_OWN_FD 0x04u
/* Reader: decode descriptors in relay mode (HURRAY_DECODE_PERMISSIVE). A
 * descriptor whose buffer table cannot be located (a layout tag this library
 * cannot parse) cannot be framed and fails with HURRAY_ERR_UNSUPPORTED.
 * Reader and writer: validate composites in relay mode (private composition
 * rules accepted without member rules), as the composite validator does. */
#define HURRAY_STREAM_PERMISSIVE 0x08u

/* ---- transports ------------------------------------------------------------- */

/*
 * Read callback: reads up to `len` (> 0) bytes into `buf` (borrowed) and
 * returns how many it read (1..len), 0 at end of stream, or a negative errno
 * value on failure (-EINTR and -EAGAIN make the library call again). It may
 * return fewer bytes than asked at any time; the library asks for exactly the
 * bytes the current frame still needs, never more, so a callback that blocks
 * until `len` bytes arrive does not stall a live stream.
 */
typedef int64_t (*HurrayStreamReadFn)(void *ctx, uint8_t *buf, size_t len);

/*
 * Write callback: writes up to `len` (> 0) bytes from `buf` (borrowed) and
 * returns how many it wrote (1..len) or a negative errno value (-EINTR and
 * -EAGAIN make the library call again). Returning 0 is a failure (HURRAY_ERR_IO).
 */
typedef int64_t (*HurrayStreamWriteFn)(void *ctx, const uint8_t *buf, size_t len);

/* ---- reader ----------------------------------------------------------------- */

typedef struct HurrayStreamReaderOptions {
  uint64_t max_descriptor_bytes; /* largest descriptor_length accepted */
  uint64_t max_buffer_bytes;     /* largest buffer byte_size accepted */
  uint32_t max_composite_depth;  /* composite heads nested deeper fail; 0..8 */
  uint32_t flags;                /* HURRAY_STREAM_* */
} HurrayStreamReaderOptions;

/* Fills *opts with the defaults: 16 MiB, unlimited, 8, no flags. NULL-safe. */
HURRAY_API void hurray_stream_reader_options_init(HurrayStreamReaderOptions *opts);

typedef struct HurrayStreamReader HurrayStreamReader;

/*
 * Creates a reader over a file descriptor (pipe, socket, regular file, ...)
 * positioned at the start of a frame. `opts` (borrowed, copied) may be NULL
 * for the defaults. The fd is borrowed unless HURRAY_STREAM_OWN_FD is set.
 * The reader reads ahead into an internal 64 KiB buffer (read(2) returns what
 * has arrived, so this never delays an item). Over anything but a regular
 * file or a block device it also holds a wake channel for
 * hurray_stream_reader_interrupt (an eventfd on Linux, a pipe on other POSIX
 * systems: one or two more descriptors, close-on-exec). *out owned: free with
 * hurray_stream_reader_destroy; NULL on failure (an fd passed with
 * HURRAY_STREAM_OWN_FD then stays the caller's). HURRAY_ERR_INVALID_ARGUMENT
 * for fd < 0, max_composite_depth > 8 or an unknown flag; HURRAY_ERR_IO when
 * the wake channel cannot be made (out of descriptors).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_from_fd(
    int fd, const HurrayStreamReaderOptions *opts, HurrayStreamReader **out);

/*
 * Creates a reader over `len` bytes at `bytes` (borrowed: they must outlive
 * the reader and every item holding a view into them). `bytes` may be NULL
 * when len is 0. Nothing is allocated for a buffer that the remaining bytes
 * cannot hold.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_from_memory(
    const uint8_t *bytes, size_t len, const HurrayStreamReaderOptions *opts,
    HurrayStreamReader **out);

/* Creates a reader over a read callback. `ctx` is borrowed and passed back. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_from_callback(
    HurrayStreamReadFn read_fn, void *ctx, const HurrayStreamReaderOptions *opts,
    HurrayStreamReader **out);

/*
 * Creates a reader over the file at `path` (borrowed; UTF-8 on Windows,
 * bytes as given elsewhere), opened for reading, close-on-exec (not inherited
 * by child processes on Windows), owned by the reader (closed at destroy).
 * Opening a FIFO waits for its writer. `opts` as for
 * hurray_stream_reader_from_fd (HURRAY_STREAM_OWN_FD implied). *out owned
 * (hurray_stream_reader_destroy), NULL on failure, when nothing is left open.
 * Errors: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_IO (field "path") when the
 * file cannot be opened, the errno value last in the reason
 * (hurray_error_os_code gives it back: ENOENT, EACCES, ...); those of
 * hurray_stream_reader_from_fd.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_open(
    const char *path, const HurrayStreamReaderOptions *opts, HurrayStreamReader **out,
    HurrayError *err);

/*
 * Creates a reader over a duplicate of `fd` that the reader owns
 * (close-on-exec; not inherited by child processes on Windows), so the
 * caller's descriptor is never closed. With `position` >= 0 the duplicate is
 * first moved to that byte (it shares the caller's file position): a reader
 * of a buffered file object starts where the object says, not where its
 * read-ahead left the descriptor. Nothing is left open on failure.
 * Errors: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_INVALID_ARGUMENT (fd < 0);
 * HURRAY_ERR_IO (field "fd": it cannot be duplicated; "position": the
 * duplicate cannot be moved), the errno value last in the reason; those of
 * hurray_stream_reader_from_fd.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_from_fd_dup(
    int fd, int64_t position, const HurrayStreamReaderOptions *opts, HurrayStreamReader **out,
    HurrayError *err);

typedef struct HurrayStreamItem HurrayStreamItem;

/*
 * Reads the next item: a tensor (a descriptor and its buffers) or a whole
 * composite (its head and, recursively, its members, validated level by level
 * by the composite validator). Returns as soon as the item's last byte has
 * arrived.
 *
 * On success *out is owned (free with hurray_stream_item_destroy), or NULL at
 * a clean end of stream; calling again after the end keeps returning HURRAY_OK
 * with NULL. On failure *out is NULL, err (optional) says what and where, and
 * the reader is failed: later calls return the same status without reading.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_next_item(
    HurrayStreamReader *reader, HurrayStreamItem **out, HurrayError *err);

/* Bytes consumed from the stream so far (the offset of the next frame after a
 * successful next_item). 0 for NULL. */
HURRAY_API uint64_t hurray_stream_reader_offset(const HurrayStreamReader *reader);

/*
 * Interrupts the reader, from any thread: a hurray_stream_reader_next_item
 * running on another thread returns promptly with HURRAY_ERR_STREAM ("the
 * reader was interrupted"), also when it is blocked in the middle of a frame
 * waiting for bytes from a pipe or a socket, and drops the item it was
 * reading; every later next_item returns that error without reading (also
 * after a clean end of stream or an earlier failure). How many bytes of the
 * stream were consumed is then unspecified. Calling it again is a no-op, and
 * calling it before any read makes the first read fail.
 *
 * Threading contract: `reader` is borrowed. interrupt may run at the same
 * time as one next_item call (on another thread) and as other interrupt
 * calls; nothing else of the reader may run concurrently with next_item
 * (not hurray_stream_reader_offset, not destroy). The reader must stay
 * alive until every interrupt call has returned: the thread that owns the
 * reader destroys it after the reading thread has returned from next_item
 * (joined) and the interrupting call has returned. An owned fd is closed by
 * destroy, never by interrupt (closing an fd another thread is reading
 * from would race with the reuse of its number).
 *
 * Transports. fd readers over a pipe, socket, FIFO or terminal wait in
 * poll(2) on the fd and a wake channel (an eventfd on Linux, a pipe
 * elsewhere, made by hurray_stream_reader_from_fd) before each read(2);
 * this call makes the channel readable. Non-blocking fds and EINTR keep
 * working as before. The fd must not also be read by someone else: a read
 * that poll found ready could otherwise block after all. Regular files and
 * block devices never wait, so the interrupt is seen before the next read.
 * Memory readers never block: the interrupt is seen at the next call.
 * Callback readers: a callback blocked in its own wait is not woken (it
 * must return on its own, e.g. when its peer closes or its own timeout
 * fires); the interrupt is seen before the next call of the callback.
 * Windows: fd readers have no wake channel; the reader is marked as
 * interrupted (the next read fails as above) but a _read or recv already
 * blocked is not woken, and HURRAY_ERR_UNSUPPORTED says so: end that read by
 * other means (shutdown(SD_BOTH) on a socket, closing the pipe's write end).
 *
 * Returns HURRAY_OK; HURRAY_ERR_NULL_POINTER for NULL; HURRAY_ERR_UNSUPPORTED
 * as said for Windows fd readers over a pipe or socket.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_reader_interrupt(HurrayStreamReader *reader);

/* Frees the reader (closing an owned fd) and sets *reader to NULL. NULL and
 * *reader == NULL are no-ops. Items already handed out stay valid (views into
 * a memory source stay bound to the caller's bytes, not to the reader). Not
 * while another thread is inside a call on it, interrupt included. */
HURRAY_API void hurray_stream_reader_destroy(HurrayStreamReader **reader);

/* ---- items ------------------------------------------------------------------ */

typedef enum HurrayStreamItemKind {
  HURRAY_STREAM_ITEM_TENSOR = 1,   /* a descriptor with its buffers */
  HURRAY_STREAM_ITEM_COMPOSITE = 2 /* a composite head with its members */
} HurrayStreamItemKind;

/* Kind of an item (0 for NULL). */
HURRAY_API HurrayStreamItemKind hurray_stream_item_kind(const HurrayStreamItem *item);

/* The tensor's descriptor or the composite's head. Borrowed: valid while the
 * item lives (clone it with hurray_descriptor_clone to keep it). NULL for NULL. */
HURRAY_API const HurrayDescriptor *hurray_stream_item_descriptor(const HurrayStreamItem *item);

/* Stream byte offset of the item's (head) descriptor. */
HURRAY_API uint64_t hurray_stream_item_offset(const HurrayStreamItem *item);

/* Number of buffers (the descriptor's buffer_count; 0 for a composite). */
HURRAY_API uint32_t hurray_stream_item_buffer_count(const HurrayStreamItem *item);

/*
 * Buffer `index` of a tensor item: *out_data (borrowed, valid while the item
 * lives) and *out_size (== the handle's byte_size). Owned buffers are aligned
 * to their declared alignment, at least 64, except that an alignment above
 * 4096 that also exceeds the buffer's size gets 4096, and none gets more than
 * 2 MiB (so wire bytes cannot inflate allocations); an empty buffer has
 * *out_data NULL.
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS past the count, HURRAY_ERR_INVALID_STATE if
 * the buffer was taken. Either out pointer may be NULL.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_item_buffer(
    const HurrayStreamItem *item, uint32_t index, const uint8_t **out_data, uint64_t *out_size);

/* True when buffer `index` is a view into the caller's bytes of a memory
 * reader (HURRAY_STREAM_ZERO_COPY) rather than memory the item owns. */
HURRAY_API bool hurray_stream_item_buffer_is_view(const HurrayStreamItem *item, uint32_t index);

/*
 * Moves owned buffer `index` out of the item: *out_data becomes the caller's
 * (free with hurray_free; NULL for an empty buffer) and the item no longer
 * hands it out (hurray_stream_item_buffer then answers HURRAY_ERR_INVALID_STATE).
 * A view cannot be moved: HURRAY_ERR_INVALID_STATE (read it in place instead).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_item_take_buffer(
    HurrayStreamItem *item, uint32_t index, uint8_t **out_data, uint64_t *out_size);

/* Number of members of a composite item (0 for a tensor). */
HURRAY_API uint32_t hurray_stream_item_member_count(const HurrayStreamItem *item);

/* Member `index` of a composite, in stream order; borrowed (valid while the
 * composite lives). NULL when out of range. */
HURRAY_API const HurrayStreamItem *hurray_stream_item_member(const HurrayStreamItem *item,
                                                             uint32_t index);

/* Frees an item and everything under it (owned buffers not taken, members)
 * and sets *item to NULL. NULL and *item == NULL are no-ops. */
HURRAY_API void hurray_stream_item_destroy(HurrayStreamItem **item);

/* ---- writer ----------------------------------------------------------------- */

typedef struct HurrayStreamWriter HurrayStreamWriter;

/*
 * Creates a writer emitting to a file descriptor. `flags`: HURRAY_STREAM_
 * CROSS_MACHINE, HURRAY_STREAM_OWN_FD, HURRAY_STREAM_PERMISSIVE (others are
 * rejected with HURRAY_ERR_INVALID_ARGUMENT). Nothing is buffered: each write
 * call has emitted its bytes when it returns. *out owned
 * (hurray_stream_writer_destroy); on failure *out is NULL and an fd passed
 * with HURRAY_STREAM_OWN_FD stays the caller's.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_to_fd(
    int fd, uint32_t flags, HurrayStreamWriter **out);

/*
 * Creates a writer over the file at `path` (borrowed; UTF-8 on Windows),
 * created with mode 0666 less the umask or truncated, close-on-exec, owned by
 * the writer (closed at finish). Opening a FIFO waits for its reader.
 * `flags` as for hurray_stream_writer_to_fd (HURRAY_STREAM_OWN_FD implied).
 * Errors as for hurray_stream_reader_open.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_open(
    const char *path, uint32_t flags, HurrayStreamWriter **out, HurrayError *err);

/* Creates a writer over a duplicate of `fd` that the writer owns, as
 * hurray_stream_reader_from_fd_dup does for a reader (no position: a writer
 * writes where the descriptor is). Errors as there. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_to_fd_dup(
    int fd, uint32_t flags, HurrayStreamWriter **out, HurrayError *err);

/* Creates a writer that builds the stream in memory; read it with
 * hurray_stream_writer_memory, as many times as wanted. `flags`:
 * HURRAY_STREAM_CROSS_MACHINE, HURRAY_STREAM_PERMISSIVE. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_to_memory(
    uint32_t flags, HurrayStreamWriter **out);

/* Creates a writer over a write callback. `ctx` is borrowed and passed back. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_to_callback(
    HurrayStreamWriteFn write_fn, void *ctx, uint32_t flags, HurrayStreamWriter **out);

/*
 * Writes one tensor frame: the descriptor `d` (borrowed), then buffers[i]
 * (borrowed; buffer_sizes[i] bytes each) for i < buffer_count. Checked before
 * any byte is written: buffer_count == the descriptor's buffer_count
 * (HURRAY_ERR_INVALID_BUFFER_TABLE), each size == the handle's byte_size
 * (HURRAY_ERR_BUFFER_SIZE), a non-empty buffer has a non-NULL pointer
 * (HURRAY_ERR_NULL_POINTER), cross-machine mode, and that `d` is not a
 * composite head (write composites with hurray_stream_writer_write_node:
 * HURRAY_ERR_INVALID_COMPOSITE). `buffers` and `buffer_sizes` may be NULL
 * when buffer_count is 0.
 *
 * A transport failure part-way leaves a torn frame behind: the writer is
 * failed and later writes return HURRAY_ERR_STREAM. Writing after finish is
 * HURRAY_ERR_STREAM too.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_write(
    HurrayStreamWriter *writer, const HurrayDescriptor *d, const void *const *buffers,
    const uint64_t *buffer_sizes, uint32_t buffer_count, HurrayError *err);

/* One node of a tree to write: a tensor (descriptor + buffers, no members) or a
 * composite (head descriptor + members, no buffers). All pointers borrowed. */
typedef struct HurrayStreamNode {
  const HurrayDescriptor *descriptor;
  const void *const *buffers;      /* tensor: buffer_count pointers */
  const uint64_t *buffer_sizes;    /* tensor: buffer_count sizes */
  uint32_t buffer_count;
  uint32_t member_count;           /* composite: must equal the head's member_count */
  const struct HurrayStreamNode *members; /* composite: member_count nodes */
} HurrayStreamNode;

/*
 * Writes a tensor or a whole composite tree, head then members pre-order,
 * after validating the entire tree (every tensor as in
 * hurray_stream_writer_write, every composite level through the composite
 * validator, node member_count == head member_count, nesting at most 8:
 * HURRAY_ERR_STREAM_LIMIT): nothing is written unless the whole tree is valid.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_write_node(
    HurrayStreamWriter *writer, const HurrayStreamNode *node, HurrayError *err);

/* Writes an item read from a stream (a relay), tensor or composite, with the
 * same checks. The item is borrowed. Taken buffers cannot be relayed
 * (HURRAY_ERR_INVALID_STATE). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_write_item(
    HurrayStreamWriter *writer, const HurrayStreamItem *item, HurrayError *err);

/*
 * Writes the tree a file writer takes (HurrayFileCompositeNode, hurray/file.h:
 * a tensor, or a composite head with its members), as
 * hurray_stream_writer_write_node writes it, so that one tree serves both: a
 * node's buffer count is its descriptor's, its sizes those given or, when
 * `sizes` is NULL, its handles' byte sizes; names are not written (a stream
 * has none). `root` and everything under it borrowed. Errors: those of
 * hurray_stream_writer_write_node (its field paths), HURRAY_ERR_NULL_POINTER,
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
struct HurrayFileCompositeNode;
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_write_tree(
    HurrayStreamWriter *writer, const struct HurrayFileCompositeNode *root, HurrayError *err);

/*
 * The bytes of a memory writer so far: *out_data borrowed, valid until the
 * next write or destroy (NULL when empty), *out_len their count. Repeatable,
 * also after finish. HURRAY_ERR_STREAM for a writer that has a destination.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_memory(
    const HurrayStreamWriter *writer, const uint8_t **out_data, size_t *out_len);

/* Bytes written so far. 0 for NULL. */
HURRAY_API uint64_t hurray_stream_writer_offset(const HurrayStreamWriter *writer);

/*
 * Finishes the stream: closes an owned fd (a close failure is HURRAY_ERR_IO).
 * Idempotent: a second call returns HURRAY_OK. Later writes fail with
 * HURRAY_ERR_STREAM; a memory writer's bytes stay readable.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_stream_writer_finish(
    HurrayStreamWriter *writer, HurrayError *err);

/* Frees the writer (closing an owned fd if finish did not) and sets *writer
 * to NULL. NULL and *writer == NULL are no-ops. */
HURRAY_API void hurray_stream_writer_destroy(HurrayStreamWriter **writer);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_STREAM_H */
