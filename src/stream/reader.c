/*
 * The stream reader (include/hurray/stream.h): frames a stream of
 * descriptors and buffers from an fd, memory or a callback, and assembles
 * composites into trees.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "hurray/file.h"
#include "internal/validate.h"
#include "stream/stream_internal.h"

/* Read-ahead buffer of fd readers. */
#define HURRAY_STREAM_READ_AHEAD ((size_t)64 * 1024)
/* Read-ahead while reading a descriptor: whatever it catches of the buffer
 * bytes after the descriptor is copied once more, so keep it small; a frame
 * of small buffers still arrives in one or two reads. */
#define HURRAY_STREAM_DESCRIPTOR_AHEAD ((size_t)4 * 1024)
/* Owned buffers are aligned to their declared alignment up to this much. */
#define HURRAY_STREAM_MAX_HONORED_ALIGNMENT ((uint64_t)2 * 1024 * 1024)
/* Bytes of a descriptor needed to learn its length. */
#define HURRAY_STREAM_PREFIX_LEN 10u

typedef enum SourceKind { SOURCE_FD = 1, SOURCE_MEMORY = 2, SOURCE_CALLBACK = 3 } SourceKind;

struct HurrayStreamReader {
  SourceKind kind;
  HurrayStreamReaderOptions opt;
  uint32_t decode_options;
  uint64_t offset; /* bytes consumed */
  /* fd */
  int fd;
  bool own_fd;
  bool is_socket;
  uint8_t *ahead; /* read-ahead buffer (owned) */
  size_t ahead_pos, ahead_len;
  size_t ahead_fill; /* how much a refill asks for (depends on what is being read) */
  /* memory */
  const uint8_t *mem;
  size_t mem_len;
  /* callback */
  HurrayStreamReadFn read_fn;
  void *ctx;
  /* descriptor scratch (fd and callback) */
  uint8_t *scratch;
  size_t scratch_cap;
  /* state */
  bool ended;
  HurrayStatus failed;
  HurrayError fail_err;
  /* interruption (hurray_stream_reader_interrupt): the only fields another
   * thread touches while a read runs; both set before the reader is handed
   * out, the flag then only ever set. */
  atomic_bool interrupted;
  HurrayFdWaker waker; /* fd readers that can block: polled beside fd */
  bool interrupt_seen; /* the reading thread has turned the flag into `failed` */
};

void hurray_stream_reader_options_init(HurrayStreamReaderOptions *opts) {
  if (opts == NULL) return;
  opts->max_descriptor_bytes = HURRAY_STREAM_DEFAULT_MAX_DESCRIPTOR_BYTES;
  opts->max_buffer_bytes = HURRAY_STREAM_UNLIMITED;
  opts->max_composite_depth = HURRAY_STREAM_MAX_COMPOSITE_DEPTH;
  opts->flags = 0;
}

static HurrayStatus reader_new(SourceKind kind, const HurrayStreamReaderOptions *opts,
                               HurrayStreamReader **out) {
  HurrayStreamReaderOptions o;
  if (opts != NULL) {
    o = *opts;
  } else {
    hurray_stream_reader_options_init(&o);
  }
  if (o.max_composite_depth > HURRAY_STREAM_MAX_COMPOSITE_DEPTH) return HURRAY_ERR_INVALID_ARGUMENT;
  if ((o.flags & ~(uint32_t)(HURRAY_STREAM_CROSS_MACHINE | HURRAY_STREAM_ZERO_COPY |
                             HURRAY_STREAM_OWN_FD | HURRAY_STREAM_PERMISSIVE)) != 0)
    return HURRAY_ERR_INVALID_ARGUMENT;
  HurrayStreamReader *r = hurray__calloc(1, sizeof *r);
  if (r == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  r->kind = kind;
  r->opt = o;
  r->decode_options =
      (o.flags & HURRAY_STREAM_PERMISSIVE) ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT;
  r->fd = -1;
  r->waker.rd = r->waker.wr = -1;
  r->waker.poll_first = false;
  atomic_init(&r->interrupted, false);
  r->failed = HURRAY_OK;
  hurray_error_clear(&r->fail_err);
  *out = r;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_reader_from_fd(int fd, const HurrayStreamReaderOptions *opts,
                                          HurrayStreamReader **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  if (fd < 0) return HURRAY_ERR_INVALID_ARGUMENT;
  HurrayStreamReader *r = NULL;
  HURRAY_TRY(reader_new(SOURCE_FD, opts, &r));
  r->ahead = hurray__malloc(HURRAY_STREAM_READ_AHEAD);
  if (r->ahead == NULL) {
    hurray__free(r);
    return HURRAY_ERR_OUT_OF_MEMORY;
  }
  /* A read that can wait for a peer (pipe, socket, terminal, ...) waits in
   * poll beside a wake channel, so that an interrupt can end it. */
  if (!hurray__fd_never_blocks(fd) && hurray__fd_waker_open(&r->waker) != 0) {
    hurray__free(r->ahead);
    hurray__free(r);
    return HURRAY_ERR_IO;
  }
  r->fd = fd;
  r->own_fd = (r->opt.flags & HURRAY_STREAM_OWN_FD) != 0;
  bool guard_unused;
  hurray__fd_classify(fd, &r->is_socket, &guard_unused);
  r->ahead_fill = HURRAY_STREAM_READ_AHEAD;
  *out = r;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_reader_from_memory(const uint8_t *bytes, size_t len,
                                              const HurrayStreamReaderOptions *opts,
                                              HurrayStreamReader **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  if (bytes == NULL && len != 0) return HURRAY_ERR_NULL_POINTER;
  HurrayStreamReader *r = NULL;
  HURRAY_TRY(reader_new(SOURCE_MEMORY, opts, &r));
  r->mem = bytes;
  r->mem_len = len;
  *out = r;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_reader_from_callback(HurrayStreamReadFn read_fn, void *ctx,
                                                const HurrayStreamReaderOptions *opts,
                                                HurrayStreamReader **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  if (read_fn == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayStreamReader *r = NULL;
  HURRAY_TRY(reader_new(SOURCE_CALLBACK, opts, &r));
  r->read_fn = read_fn;
  r->ctx = ctx;
  *out = r;
  return HURRAY_OK;
}

uint64_t hurray_stream_reader_offset(const HurrayStreamReader *reader) {
  return reader == NULL ? 0 : reader->offset;
}

void hurray_stream_reader_destroy(HurrayStreamReader **reader) {
  if (reader == NULL || *reader == NULL) return;
  HurrayStreamReader *r = *reader;
  *reader = NULL;
  if (r->kind == SOURCE_FD && r->own_fd && r->fd >= 0) (void)hurray__fd_close(r->fd);
  hurray__fd_waker_close(&r->waker);
  hurray__free(r->ahead);
  hurray__free(r->scratch);
  hurray__free(r);
}

HurrayStatus hurray_stream_reader_interrupt(HurrayStreamReader *reader) {
  if (reader == NULL) return HURRAY_ERR_NULL_POINTER;
  atomic_store_explicit(&reader->interrupted, true, memory_order_release);
  hurray__fd_waker_wake(&reader->waker);
#if defined(_WIN32)
  /* No wake channel: a read blocked in the transport is not woken. */
  if (reader->kind == SOURCE_FD && !hurray__fd_never_blocks(reader->fd))
    return HURRAY_ERR_UNSUPPORTED;
#endif
  return HURRAY_OK;
}

/* ---- source ----------------------------------------------------------------- */

static bool is_interrupted(const HurrayStreamReader *r) {
  return atomic_load_explicit(&r->interrupted, memory_order_acquire);
}

static HurrayStatus interrupted_fail(const HurrayStreamReader *r, HurrayError *err) {
  return hurray__fail(err, HURRAY_ERR_STREAM, r->offset, "stream",
                      "the reader was interrupted (hurray_stream_reader_interrupt)");
}

static HurrayStatus io_fail(HurrayStreamReader *r, HurrayError *err, int e, const char *what) {
  if (e == HURRAY__FD_WOKEN) return interrupted_fail(r, err);
  return hurray__fail(err, HURRAY_ERR_IO, r->offset, "stream", "%s failed: %s (errno %d)", what,
                      strerror(e), e);
}

/*
 * Reads up to n bytes into dst; fewer only at end of stream. *got receives
 * the count. Memory sources are served by the caller without copying.
 */
static HurrayStatus source_read(HurrayStreamReader *r, uint8_t *dst, size_t n, size_t *got,
                                HurrayError *err) {
  size_t have = 0;
  *got = 0;
  if (r->kind == SOURCE_MEMORY) {
    size_t left = r->mem_len - (size_t)r->offset;
    have = n < left ? n : left;
    if (have > 0) memcpy(dst, r->mem + r->offset, have);
    r->offset += have;
    *got = have;
    return HURRAY_OK;
  }
  while (have < n) {
    size_t k = 0;
    /* Seen before every call of the transport: a callback or a read that
     * does not block gets no further once interrupted. */
    if (is_interrupted(r)) {
      r->offset += have;
      *got = have;
      return interrupted_fail(r, err);
    }
    if (r->kind == SOURCE_FD) {
      if (r->ahead_pos < r->ahead_len) {
        k = r->ahead_len - r->ahead_pos;
        if (k > n - have) k = n - have;
        memcpy(dst + have, r->ahead + r->ahead_pos, k);
        r->ahead_pos += k;
      } else if (n - have >= r->ahead_fill) {
        int e = hurray__fd_read_once(r->fd, r->is_socket, &r->waker, dst + have, n - have, &k);
        if (e != 0) {
          r->offset += have;
          *got = have;
          return io_fail(r, err, e, "read");
        }
        if (k == 0) break;
      } else {
        size_t filled = 0;
        int e = hurray__fd_read_once(r->fd, r->is_socket, &r->waker, r->ahead, r->ahead_fill,
                                     &filled);
        if (e != 0) {
          r->offset += have;
          *got = have;
          return io_fail(r, err, e, "read");
        }
        if (filled == 0) break;
        r->ahead_pos = 0;
        r->ahead_len = filled;
        continue;
      }
    } else {
      int64_t res = r->read_fn(r->ctx, dst + have, n - have);
      if (res == -EINTR || res == -EAGAIN) continue;
      if (res < 0 || (uint64_t)res > (uint64_t)(n - have)) {
        r->offset += have;
        *got = have;
        if (res < 0) return io_fail(r, err, res < -4095 ? EIO : (int)-res, "read callback");
        return hurray__fail(err, HURRAY_ERR_IO, r->offset, "stream",
                            "read callback returned %lld bytes for a request of %zu",
                            (long long)res, n - have);
      }
      if (res == 0) break;
      k = (size_t)res;
    }
    have += k;
  }
  r->offset += have;
  *got = have;
  return HURRAY_OK;
}

/* Copies a decoder error into err, rebased to stream offsets. */
static HurrayStatus rebase(HurrayError *err, HurrayStatus st, const HurrayError *inner,
                           uint64_t frame_off) {
  if (err == NULL) return st;
  uint64_t off = inner->offset == HURRAY_NO_OFFSET ? frame_off : frame_off + inner->offset;
  bool detail = inner->message[0] != '\0';
  const char *msg = detail ? inner->message : hurray_status_message(st);
  hurray__fail(err, st, off, inner->field, "%s", detail ? inner->reason : msg);
  char head[64];
  int hn = snprintf(head, sizeof head, "descriptor at stream byte %llu: ",
                    (unsigned long long)frame_off);
  size_t h = hn < 0 ? 0 : (size_t)hn;
  if (h >= sizeof head) h = sizeof head - 1;
  size_t room = sizeof err->message - 1;
  size_t m = strlen(msg);
  memcpy(err->message, head, h);
  if (m > room - h) m = room - h;
  memcpy(err->message + h, msg, m);
  err->message[h + m] = '\0';
  return st;
}

/* Ensures the descriptor scratch holds n bytes (n already checked against the limit). */
static HurrayStatus scratch_reserve(HurrayStreamReader *r, size_t n) {
  if (r->scratch_cap >= n) return HURRAY_OK;
  size_t cap = r->scratch_cap < 256 ? 256 : r->scratch_cap;
  while (cap < n) cap = cap > SIZE_MAX / 2 ? n : cap * 2;
  uint8_t *p = hurray__malloc(cap);
  if (p == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  hurray__free(r->scratch);
  r->scratch = p;
  r->scratch_cap = cap;
  return HURRAY_OK;
}

/*
 * Reads one descriptor. *out NULL with HURRAY_OK means a clean end (no byte
 * before the descriptor). *frame_off receives its stream offset.
 */
static HurrayStatus read_descriptor(HurrayStreamReader *r, HurrayDescriptor **out,
                                    uint64_t *frame_off, HurrayError *err) {
  *out = NULL;
  *frame_off = r->offset;
  const uint64_t start = r->offset;
  uint8_t prefix[HURRAY_STREAM_PREFIX_LEN];
  const uint8_t *bytes = NULL;
  size_t got = 0;
  HurrayError inner;
  hurray_error_clear(&inner);

  if (r->kind == SOURCE_MEMORY) {
    size_t left = r->mem_len - (size_t)r->offset;
    if (left == 0) return HURRAY_OK;
    if (left < HURRAY_STREAM_PREFIX_LEN) {
      r->offset += left;
      return hurray__fail(err, HURRAY_ERR_STREAM, r->offset, "descriptor",
                          "stream ends %zu bytes into the descriptor at stream byte %llu "
                          "(its length needs %u)",
                          left, (unsigned long long)start, HURRAY_STREAM_PREFIX_LEN);
    }
    bytes = r->mem + r->offset;
  } else {
    r->ahead_fill = HURRAY_STREAM_DESCRIPTOR_AHEAD;
    HURRAY_TRY(source_read(r, prefix, sizeof prefix, &got, err));
    if (got == 0) return HURRAY_OK;
    if (got < sizeof prefix)
      return hurray__fail(err, HURRAY_ERR_STREAM, r->offset, "descriptor",
                          "stream ends %zu bytes into the descriptor at stream byte %llu "
                          "(its length needs %u)",
                          got, (unsigned long long)start, HURRAY_STREAM_PREFIX_LEN);
    bytes = prefix;
  }

  uint32_t len = 0;
  HurrayStatus st = hurray_descriptor_peek_length(bytes, HURRAY_STREAM_PREFIX_LEN, &len, &inner);
  if (st != HURRAY_OK && start == 0) {
    /* the first bytes of the stream: another kind of file? say which */
    HurrayFileKind kind = hurray_file_sniff(bytes, HURRAY_STREAM_PREFIX_LEN, 0);
    if (kind == HURRAY_FILE_KIND_HRRY)
      return hurray__fail(err, HURRAY_ERR_STREAM, 0, "descriptor.magic",
                          "\"HRRYFILE\": this is a .hrry file container, not a stream; open it "
                          "with hurray_file_open (hurray.open, hurray.load)");
    if (kind != HURRAY_FILE_KIND_UNKNOWN && kind != HURRAY_FILE_KIND_HRRY_STREAM)
      return hurray__fail(err, HURRAY_ERR_STREAM, 0, "descriptor.magic",
                          "this is %s, not a Hurray stream", hurray_file_kind_name(kind));
  }
  if (st != HURRAY_OK) return rebase(err, st, &inner, start);
  if ((uint64_t)len > r->opt.max_descriptor_bytes)
    return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, start + 6, "descriptor_length",
                        "descriptor at stream byte %llu declares %u bytes, over the limit "
                        "max_descriptor_bytes = %llu",
                        (unsigned long long)start, len,
                        (unsigned long long)r->opt.max_descriptor_bytes);

  if (r->kind == SOURCE_MEMORY) {
    size_t left = r->mem_len - (size_t)r->offset;
    if (left < len) {
      r->offset += left;
      return hurray__fail(err, HURRAY_ERR_STREAM, r->offset, "descriptor",
                          "stream ends %zu bytes into the %u-byte descriptor at stream byte %llu",
                          left, len, (unsigned long long)start);
    }
    r->offset += len;
  } else {
    if (scratch_reserve(r, len) != HURRAY_OK)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, start, "descriptor",
                          "cannot allocate %u bytes for a descriptor", len);
    memcpy(r->scratch, prefix, sizeof prefix);
    HURRAY_TRY(source_read(r, r->scratch + sizeof prefix, len - sizeof prefix, &got, err));
    if (got < len - sizeof prefix)
      return hurray__fail(err, HURRAY_ERR_STREAM, r->offset, "descriptor",
                          "stream ends %zu bytes into the %u-byte descriptor at stream byte %llu",
                          got + sizeof prefix, len, (unsigned long long)start);
    bytes = r->scratch;
  }

  r->ahead_fill = HURRAY_STREAM_READ_AHEAD;
  HurrayDescriptor *d = NULL;
  st = hurray_descriptor_decode_ex(bytes, len, r->decode_options, &d, &inner);
  if (st != HURRAY_OK) return rebase(err, st, &inner, start);
  *out = d;
  return HURRAY_OK;
}

/* Whether the buffer table of a decoded descriptor could be located (a
 * permissive decode keeps unparseable layouts opaque). */
static bool framable(const HurrayDescriptorFields *f) {
  HurrayTagKind k = hurray_layout_tag_kind(f->layout.tag);
  return k == HURRAY_TAG_NAMED || k == HURRAY_TAG_PRIVATE;
}

/* Checks every handle (cross-machine, size limits) before anything is read or
 * allocated for the frame's buffers. */
static HurrayStatus check_handles(const HurrayStreamReader *r, const HurrayDescriptorFields *f,
                                  uint64_t frame_off, HurrayError *err) {
  HurrayOffsets o;
  hurray__descriptor_offsets(f, &o);
  char path[64];
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const HurrayBufferHandle *h = &f->buffers[i];
    uint64_t hoff = frame_off + o.buffer_table + 1u + 16u * (uint64_t)i;
    if ((r->opt.flags & HURRAY_STREAM_CROSS_MACHINE) && h->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      const char *name = hurray_sync_mode_name(h->sync_mode);
      return hurray__fail(err, HURRAY_ERR_CROSS_MACHINE, hoff + 13,
                          hurray__path(path, sizeof path, "buffers[%u].sync_mode", i),
                          "sync mode %s (0x%02X) cannot cross machines; only producer_synced "
                          "buffers are accepted in cross-machine mode",
                          name != NULL ? name : "?", h->sync_mode);
    }
    if (h->byte_size > r->opt.max_buffer_bytes)
      return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, hoff,
                          hurray__path(path, sizeof path, "buffers[%u].byte_size", i),
                          "buffer of %llu bytes is over the limit max_buffer_bytes = %llu",
                          (unsigned long long)h->byte_size,
                          (unsigned long long)r->opt.max_buffer_bytes);
    if (h->byte_size > (uint64_t)SIZE_MAX)
      return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, hoff,
                          hurray__path(path, sizeof path, "buffers[%u].byte_size", i),
                          "buffer of %llu bytes does not fit in this process's address space",
                          (unsigned long long)h->byte_size);
  }
  return HURRAY_OK;
}

/*
 * Alignment of the memory a buffer is read into: its declared alignment, at
 * least 64; but an alignment above a page that is also above the buffer's
 * size is reduced to a page, and nothing is aligned beyond 2 MiB. So a few
 * wire bytes can never make the reader allocate much more than the buffer
 * itself (at most twice its size plus a page).
 */
static uint64_t owned_alignment(const HurrayBufferHandle *h) {
  uint64_t align = h->alignment;
  if (!hurray__is_pow2_u64(align) || align < HURRAY_MIN_BUFFER_ALIGNMENT)
    align = HURRAY_MIN_BUFFER_ALIGNMENT;
  if (align > HURRAY_PAGE_ALIGNMENT && align > h->byte_size) align = HURRAY_PAGE_ALIGNMENT;
  if (align > HURRAY_STREAM_MAX_HONORED_ALIGNMENT) align = HURRAY_STREAM_MAX_HONORED_ALIGNMENT;
  return align;
}

/* Reads the buffers of `it` (whose descriptor is decoded) from the source. */
static HurrayStatus read_buffers(HurrayStreamReader *r, HurrayStreamItem *it,
                                 const HurrayDescriptorFields *f, HurrayError *err) {
  HURRAY_TRY(check_handles(r, f, it->offset, err));
  if (f->buffer_count == 0) return HURRAY_OK;
  it->buffers = hurray__calloc(f->buffer_count, sizeof *it->buffers);
  if (it->buffers == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, it->offset, "buffers",
                        "cannot allocate the buffer list");
  it->buffer_count = f->buffer_count;
  char path[32];
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const HurrayBufferHandle *h = &f->buffers[i];
    HurrayStreamBuf *b = &it->buffers[i];
    const uint64_t start = r->offset;
    const size_t size = (size_t)h->byte_size;
    b->size = h->byte_size;
    if (size == 0) continue;
    if (r->kind == SOURCE_MEMORY) {
      size_t left = r->mem_len - (size_t)r->offset;
      if (left < size) {
        r->offset += left;
        return hurray__fail(err, HURRAY_ERR_STREAM, r->offset,
                            hurray__path(path, sizeof path, "buffers[%u]", i),
                            "stream ends %zu bytes into a %zu-byte buffer starting at stream "
                            "byte %llu",
                            left, size, (unsigned long long)start);
      }
      const uint8_t *src = r->mem + r->offset;
      uint64_t want = h->alignment < HURRAY_MIN_BUFFER_ALIGNMENT ? HURRAY_MIN_BUFFER_ALIGNMENT
                                                                  : h->alignment;
      if ((r->opt.flags & HURRAY_STREAM_ZERO_COPY) && hurray__is_pow2_u64(want) &&
          ((uintptr_t)src & (uintptr_t)(want - 1)) == 0) {
        b->data = (uint8_t *)(uintptr_t)src;
        b->view = true;
        r->offset += size;
        continue;
      }
    }
    b->data = hurray_alloc(size, (size_t)owned_alignment(h));
    if (b->data == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, start,
                          hurray__path(path, sizeof path, "buffers[%u]", i),
                          "cannot allocate %zu bytes", size);
    size_t got = 0;
    HURRAY_TRY(source_read(r, b->data, size, &got, err));
    if (got < size)
      return hurray__fail(err, HURRAY_ERR_STREAM, r->offset,
                          hurray__path(path, sizeof path, "buffers[%u]", i),
                          "stream ends %zu bytes into a %zu-byte buffer starting at stream "
                          "byte %llu",
                          got, size, (unsigned long long)start);
  }
  return HURRAY_OK;
}

/* Reads one item at composite nesting `depth` (0 = top level). *out NULL with
 * HURRAY_OK at a clean end. */
static HurrayStatus read_item(HurrayStreamReader *r, uint32_t depth, HurrayStreamItem **out,
                              HurrayError *err) {
  *out = NULL;
  HurrayDescriptor *d = NULL;
  uint64_t frame_off = 0;
  HURRAY_TRY(read_descriptor(r, &d, &frame_off, err));
  if (d == NULL) return HURRAY_OK;

  HurrayDescriptorFields f;
  HurrayStatus st = hurray_descriptor_fields(d, &f);
  if (st != HURRAY_OK) {
    hurray__descriptor_drop(d);
    return hurray__fail(err, st, frame_off, "descriptor", "cannot read the decoded descriptor");
  }
  if (!framable(&f)) {
    hurray__descriptor_drop(d);
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, frame_off + 15, "layout_tag",
                        "layout tag 0x%02X is not known, so the buffer table and the frame's "
                        "length cannot be located",
                        f.layout.tag);
  }
  const bool composite = f.layout.tag == HURRAY_LAYOUT_COMPOSITE;
  if (composite && depth >= r->opt.max_composite_depth) {
    hurray__descriptor_drop(d);
    return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, frame_off, "layout",
                        "composite head at stream byte %llu is nested %u levels deep, over the "
                        "limit max_composite_depth = %u",
                        (unsigned long long)frame_off, depth + 1, r->opt.max_composite_depth);
  }

  HurrayStreamItem *it = NULL;
  st = hurray__stream_item_new(composite ? HURRAY_STREAM_ITEM_COMPOSITE : HURRAY_STREAM_ITEM_TENSOR,
                               d, frame_off, &it);
  if (st != HURRAY_OK) return hurray__fail(err, st, frame_off, "", "cannot allocate an item");

  st = read_buffers(r, it, &f, err);
  if (st == HURRAY_OK && composite) {
    const uint32_t n = f.layout.u.composite.member_count;
    HurrayStreamCompositeCheck *check = NULL;
    st = hurray__stream_composite_begin(it->desc, depth, r->decode_options, frame_off, "",
                                        &check, err);
    for (uint32_t i = 0; st == HURRAY_OK && i < n; i++) {
      HurrayStreamItem *m = NULL;
      st = read_item(r, depth + 1, &m, err);
      if (st != HURRAY_OK) break;
      if (m == NULL) {
        st = hurray__fail(err, HURRAY_ERR_STREAM, r->offset, "composite",
                          "torn composite: the head at stream byte %llu declares %u members "
                          "but the stream ends after %u",
                          (unsigned long long)frame_off, n, i);
        break;
      }
      st = hurray__stream_composite_member(check, m->desc, m->offset, err);
      if (st != HURRAY_OK) {
        hurray_stream_item_destroy(&m);
        break;
      }
      st = hurray__stream_item_add_member(it, m);
      if (st != HURRAY_OK)
        st = hurray__fail(err, st, frame_off, "composite", "cannot allocate the member list");
    }
    if (st == HURRAY_OK) st = hurray__stream_composite_finish(check, err);
    hurray__stream_composite_free(check);
  }
  if (st != HURRAY_OK) {
    hurray_stream_item_destroy(&it);
    return st;
  }
  *out = it;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_reader_next_item(HurrayStreamReader *reader, HurrayStreamItem **out,
                                            HurrayError *err) {
  if (out != NULL) *out = NULL;
  if (reader == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "reader and out are required");
  if (!reader->interrupt_seen && is_interrupted(reader)) {
    /* Interrupted between calls (also after the end or a failure): this
     * call and every later one fail as interrupted, without reading. */
    reader->interrupt_seen = true;
    hurray_error_clear(&reader->fail_err);
    reader->failed = interrupted_fail(reader, &reader->fail_err);
  }
  if (reader->failed != HURRAY_OK) {
    if (err != NULL) *err = reader->fail_err;
    return reader->failed;
  }
  if (reader->ended) return HURRAY_OK;
  HurrayError local;
  hurray_error_clear(&local);
  HurrayStatus st = read_item(reader, 0, out, &local);
  if (st != HURRAY_OK) {
    if (local.status == HURRAY_OK) /* a path that set no detail */
      hurray__fail(&local, st, reader->offset, "stream", "%s", hurray_status_message(st));
    reader->failed = st;
    reader->fail_err = local;
    /* Interrupted during this call: its failure (interrupted, or whatever
     * came first) is what every later call returns. */
    if (is_interrupted(reader)) reader->interrupt_seen = true;
    if (err != NULL) *err = local;
    return st;
  }
  if (*out == NULL) reader->ended = true;
  return HURRAY_OK;
}
