/*
 * The stream writer (include/hurray/stream.h): validates frames and composite
 * trees, then emits descriptor and buffer bytes to an fd, memory or a
 * callback.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hurray/file.h"
#include "stream/stream_internal.h"

typedef enum SinkKind { SINK_FD = 1, SINK_MEMORY = 2, SINK_CALLBACK = 3 } SinkKind;

struct HurrayStreamWriter {
  SinkKind kind;
  uint32_t flags;
  uint64_t offset; /* bytes emitted */
  /* fd */
  int fd;
  bool own_fd;
  bool fd_closed;
  bool is_socket;
  bool guard_sigpipe;
  /* memory */
  uint8_t *mem;
  size_t mem_len, mem_cap;
  /* callback */
  HurrayStreamWriteFn write_fn;
  void *ctx;
  /* encoded descriptor scratch */
  uint8_t *scratch;
  size_t scratch_cap;
  /* state */
  bool finished;
  bool failed;
};

/* Longest field path built while validating a tree. */
#define PATH_LEN 96

static HurrayStatus writer_new(SinkKind kind, uint32_t flags, uint32_t allowed,
                               HurrayStreamWriter **out) {
  if ((flags & ~allowed) != 0) return HURRAY_ERR_INVALID_ARGUMENT;
  HurrayStreamWriter *w = hurray__calloc(1, sizeof *w);
  if (w == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  w->kind = kind;
  w->flags = flags;
  w->fd = -1;
  *out = w;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_writer_to_fd(int fd, uint32_t flags, HurrayStreamWriter **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  if (fd < 0) return HURRAY_ERR_INVALID_ARGUMENT;
  HurrayStreamWriter *w = NULL;
  HURRAY_TRY(writer_new(SINK_FD, flags,
                        HURRAY_STREAM_CROSS_MACHINE | HURRAY_STREAM_OWN_FD | HURRAY_STREAM_PERMISSIVE,
                        &w));
  w->fd = fd;
  w->own_fd = (flags & HURRAY_STREAM_OWN_FD) != 0;
  hurray__fd_classify(fd, &w->is_socket, &w->guard_sigpipe);
  *out = w;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_writer_to_memory(uint32_t flags, HurrayStreamWriter **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  return writer_new(SINK_MEMORY, flags, HURRAY_STREAM_CROSS_MACHINE | HURRAY_STREAM_PERMISSIVE, out);
}

HurrayStatus hurray_stream_writer_to_callback(HurrayStreamWriteFn write_fn, void *ctx,
                                              uint32_t flags, HurrayStreamWriter **out) {
  if (out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  if (write_fn == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayStreamWriter *w = NULL;
  HURRAY_TRY(writer_new(SINK_CALLBACK, flags, HURRAY_STREAM_CROSS_MACHINE | HURRAY_STREAM_PERMISSIVE,
                        &w));
  w->write_fn = write_fn;
  w->ctx = ctx;
  *out = w;
  return HURRAY_OK;
}

uint64_t hurray_stream_writer_offset(const HurrayStreamWriter *writer) {
  return writer == NULL ? 0 : writer->offset;
}

HurrayStatus hurray_stream_writer_memory(const HurrayStreamWriter *writer,
                                         const uint8_t **out_data, size_t *out_len) {
  if (out_data != NULL) *out_data = NULL;
  if (out_len != NULL) *out_len = 0;
  if (writer == NULL) return HURRAY_ERR_NULL_POINTER;
  if (writer->kind != SINK_MEMORY) return HURRAY_ERR_STREAM;
  if (out_data != NULL) *out_data = writer->mem;
  if (out_len != NULL) *out_len = writer->mem_len;
  return HURRAY_OK;
}

HurrayStatus hurray_stream_writer_finish(HurrayStreamWriter *writer, HurrayError *err) {
  if (writer == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "writer is NULL");
  if (writer->finished) return HURRAY_OK;
  writer->finished = true;
  if (writer->kind == SINK_FD && writer->own_fd && !writer->fd_closed) {
    writer->fd_closed = true;
    int e = hurray__fd_close(writer->fd);
    if (e != 0) {
      return hurray__fail(err, HURRAY_ERR_IO, writer->offset, "stream",
                          "close failed: %s (errno %d)", strerror(e), e);
    }
  }
  return HURRAY_OK;
}

void hurray_stream_writer_destroy(HurrayStreamWriter **writer) {
  if (writer == NULL || *writer == NULL) return;
  HurrayStreamWriter *w = *writer;
  *writer = NULL;
  if (w->kind == SINK_FD && w->own_fd && !w->fd_closed) (void)hurray__fd_close(w->fd);
  hurray__free(w->mem);
  hurray__free(w->scratch);
  hurray__free(w);
}

/* ---- emission --------------------------------------------------------------- */

static HurrayStatus emit_memory(HurrayStreamWriter *w, const HurrayStreamChunk *chunks,
                                size_t count, HurrayError *err) {
  uint64_t total = 0;
  for (size_t i = 0; i < count; i++)
    if (hurray__add_overflow_u64(total, chunks[i].len, &total))
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, w->offset, "stream",
                          "frame too large for memory");
  uint64_t need;
  if (hurray__add_overflow_u64(w->mem_len, total, &need) || need > (uint64_t)SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, w->offset, "stream",
                        "stream too large for memory");
  if (need > w->mem_cap) {
    size_t cap = w->mem_cap < 4096 ? 4096 : w->mem_cap;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? (size_t)need : cap * 2;
    uint8_t *p = hurray_alloc(cap, HURRAY_MIN_BUFFER_ALIGNMENT);
    if (p == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, w->offset, "stream",
                          "cannot grow the in-memory stream to %zu bytes", cap);
    if (w->mem_len > 0) memcpy(p, w->mem, w->mem_len);
    hurray_free(w->mem);
    w->mem = p;
    w->mem_cap = cap;
  }
  for (size_t i = 0; i < count; i++) {
    if (chunks[i].len == 0) continue;
    memcpy(w->mem + w->mem_len, chunks[i].data, (size_t)chunks[i].len);
    w->mem_len += (size_t)chunks[i].len;
  }
  w->offset += total;
  return HURRAY_OK;
}

static HurrayStatus emit_callback(HurrayStreamWriter *w, const HurrayStreamChunk *chunks,
                                  size_t count, HurrayError *err) {
  for (size_t i = 0; i < count; i++) {
    uint64_t done = 0;
    while (done < chunks[i].len) {
      uint64_t left = chunks[i].len - done;
      size_t ask = left > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)left;
      int64_t n = w->write_fn(w->ctx, chunks[i].data + done, ask);
      if (n == -EINTR || n == -EAGAIN) continue;
      if (n <= 0 || (uint64_t)n > (uint64_t)ask) {
        w->failed = true;
        if (n < 0) {
          int e = n < -4095 ? EIO : (int)-n;
          return hurray__fail(err, HURRAY_ERR_IO, w->offset, "stream",
                              "write callback failed: %s (errno %d)", strerror(e), e);
        }
        return hurray__fail(err, HURRAY_ERR_IO, w->offset, "stream",
                            "write callback returned %lld for a request of %zu bytes",
                            (long long)n, ask);
      }
      done += (uint64_t)n;
      w->offset += (uint64_t)n;
    }
  }
  return HURRAY_OK;
}

static HurrayStatus emit(HurrayStreamWriter *w, const HurrayStreamChunk *chunks, size_t count,
                         HurrayError *err) {
  switch (w->kind) {
    case SINK_MEMORY:
      return emit_memory(w, chunks, count, err);
    case SINK_CALLBACK:
      return emit_callback(w, chunks, count, err);
    case SINK_FD: {
      uint64_t written = 0;
      int e = hurray__fd_write_all(w->fd, w->is_socket, w->guard_sigpipe, chunks, count, &written);
      w->offset += written;
      if (e != 0) {
        w->failed = true;
        return hurray__fail(err, HURRAY_ERR_IO, w->offset, "stream", "write failed: %s (errno %d)",
                            strerror(e), e);
      }
      return HURRAY_OK;
    }
  }
  return HURRAY_ERR_INTERNAL;
}

/* Encodes d into the scratch buffer; *len receives its length. */
static HurrayStatus encode_descriptor(HurrayStreamWriter *w, const HurrayDescriptor *d,
                                      uint64_t *len, HurrayError *err) {
  HurrayStatus st = hurray_descriptor_encoded_len(d, len);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "descriptor", "cannot size the descriptor");
  if (*len > w->scratch_cap) {
    if (*len > (uint64_t)SIZE_MAX)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "descriptor",
                          "descriptor too large");
    uint8_t *p = hurray__malloc((size_t)*len);
    if (p == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "descriptor",
                          "cannot allocate %llu bytes to encode a descriptor",
                          (unsigned long long)*len);
    hurray__free(w->scratch);
    w->scratch = p;
    w->scratch_cap = (size_t)*len;
  }
  st = hurray_descriptor_encode(d, w->scratch, w->scratch_cap, len);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "descriptor", "cannot encode the descriptor");
  return HURRAY_OK;
}

/* Emits one frame (descriptor + buffers), already validated. */
static HurrayStatus emit_frame(HurrayStreamWriter *w, const HurrayDescriptor *d,
                               const void *const *buffers, const uint64_t *sizes, uint32_t count,
                               HurrayError *err) {
  HurrayStreamChunk chunks[1u + HURRAY_MAX_BUFFERS];
  uint64_t dlen = 0;
  HURRAY_TRY(encode_descriptor(w, d, &dlen, err));
  chunks[0].data = w->scratch;
  chunks[0].len = dlen;
  for (uint32_t i = 0; i < count; i++) {
    chunks[1u + i].data = (const uint8_t *)buffers[i];
    chunks[1u + i].len = sizes[i];
  }
  return emit(w, chunks, 1u + (size_t)count, err);
}

/* ---- validation ------------------------------------------------------------- */

static HurrayStatus check_writable(const HurrayStreamWriter *w, HurrayError *err) {
  if (w->finished)
    return hurray__fail(err, HURRAY_ERR_STREAM, w->offset, "stream",
                        "the stream is finished; nothing more can be written");
  if (w->failed)
    return hurray__fail(err, HURRAY_ERR_STREAM, w->offset, "stream",
                        "an earlier write failed part-way; the stream is torn");
  return HURRAY_OK;
}

/* Checks the buffers given for one frame against its descriptor. `where` is
 * the node path ("" at the top, "members[1]." below). */
static HurrayStatus check_frame(const HurrayStreamWriter *w, const HurrayDescriptorFields *f,
                                const void *const *buffers, const uint64_t *sizes,
                                uint32_t count, const char *where, HurrayError *err) {
  char path[PATH_LEN];
  if (count != f->buffer_count)
    return hurray__fail(err, HURRAY_ERR_INVALID_BUFFER_TABLE, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%sbuffers", where),
                        "%u buffers given, the descriptor declares %u", count, f->buffer_count);
  if (count > 0 && (buffers == NULL || sizes == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%sbuffers", where),
                        "buffer pointers and sizes are required");
  for (uint32_t i = 0; i < count; i++) {
    const HurrayBufferHandle *h = &f->buffers[i];
    if (sizes[i] != h->byte_size)
      return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "%sbuffers[%u]", where, i),
                          "%llu bytes given, the handle declares byte_size %llu",
                          (unsigned long long)sizes[i], (unsigned long long)h->byte_size);
    if (sizes[i] > 0 && buffers[i] == NULL)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "%sbuffers[%u]", where, i),
                          "a non-empty buffer needs its bytes");
    if ((w->flags & HURRAY_STREAM_CROSS_MACHINE) && h->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      const char *name = hurray_sync_mode_name(h->sync_mode);
      return hurray__fail(err, HURRAY_ERR_CROSS_MACHINE, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "%sbuffers[%u].sync_mode", where, i),
                          "sync mode %s (0x%02X) cannot cross machines; only producer_synced "
                          "buffers are written in cross-machine mode",
                          name != NULL ? name : "?", h->sync_mode);
    }
  }
  return HURRAY_OK;
}

static HurrayStatus fields_of(const HurrayDescriptor *d, HurrayDescriptorFields *f,
                              const char *where, HurrayError *err) {
  char path[PATH_LEN];
  if (d == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%sdescriptor", where),
                        "descriptor is NULL");
  HurrayStatus st = hurray_descriptor_fields(d, f);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%sdescriptor", where),
                        "unreadable descriptor");
  return HURRAY_OK;
}

/* Validates a node and everything under it (depth 0 = top level). */
static HurrayStatus check_node(const HurrayStreamWriter *w, const HurrayStreamNode *node,
                               uint32_t depth, const char *where, HurrayError *err) {
  char path[PATH_LEN];
  HurrayDescriptorFields f;
  HURRAY_TRY(fields_of(node->descriptor, &f, where, err));
  HURRAY_TRY(check_frame(w, &f, node->buffers, node->buffer_sizes, node->buffer_count, where, err));
  if (f.layout.tag != HURRAY_LAYOUT_COMPOSITE) {
    if (node->member_count != 0)
      return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "%smembers", where),
                          "a tensor (layout 0x%02X) has no members; %u given", f.layout.tag,
                          node->member_count);
    return HURRAY_OK;
  }
  if (depth >= HURRAY_STREAM_MAX_COMPOSITE_DEPTH)
    return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%slayout", where),
                        "composite nested %u levels deep; at most %u are allowed", depth + 1,
                        HURRAY_STREAM_MAX_COMPOSITE_DEPTH);
  if (node->member_count != f.layout.u.composite.member_count)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%smembers", where),
                        "%u members given, the head declares member_count %u",
                        node->member_count, f.layout.u.composite.member_count);
  if (node->member_count > 0 && node->members == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%smembers", where), "members is NULL");
  HurrayStreamCompositeCheck *check = NULL;
  HURRAY_TRY(hurray__stream_composite_begin(node->descriptor, depth,
                                            (w->flags & HURRAY_STREAM_PERMISSIVE)
                                                ? HURRAY_DECODE_PERMISSIVE
                                                : HURRAY_DECODE_STRICT,
                                            HURRAY_NO_OFFSET, where, &check, err));
  HurrayStatus st = HURRAY_OK;
  for (uint32_t i = 0; st == HURRAY_OK && i < node->member_count; i++) {
    char sub[PATH_LEN];
    snprintf(sub, sizeof sub, "%smembers[%u].", where, i);
    st = check_node(w, &node->members[i], depth + 1, sub, err);
    if (st == HURRAY_OK)
      st = hurray__stream_composite_member(check, node->members[i].descriptor, HURRAY_NO_OFFSET,
                                           err);
  }
  if (st == HURRAY_OK) st = hurray__stream_composite_finish(check, err);
  hurray__stream_composite_free(check);
  return st;
}

static HurrayStatus emit_node(HurrayStreamWriter *w, const HurrayStreamNode *node,
                              HurrayError *err) {
  HURRAY_TRY(emit_frame(w, node->descriptor, node->buffers, node->buffer_sizes,
                        node->buffer_count, err));
  for (uint32_t i = 0; i < node->member_count; i++) HURRAY_TRY(emit_node(w, &node->members[i], err));
  return HURRAY_OK;
}

/* ---- public writes ---------------------------------------------------------- */

HurrayStatus hurray_stream_writer_write(HurrayStreamWriter *writer, const HurrayDescriptor *d,
                                        const void *const *buffers, const uint64_t *buffer_sizes,
                                        uint32_t buffer_count, HurrayError *err) {
  if (writer == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "writer is NULL");
  HURRAY_TRY(check_writable(writer, err));
  HurrayDescriptorFields f;
  HURRAY_TRY(fields_of(d, &f, "", err));
  if (f.layout.tag == HURRAY_LAYOUT_COMPOSITE)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, HURRAY_NO_OFFSET, "layout_tag",
                        "a composite head is written with its members "
                        "(hurray_stream_writer_write_node)");
  HURRAY_TRY(check_frame(writer, &f, buffers, buffer_sizes, buffer_count, "", err));
  return emit_frame(writer, d, buffers, buffer_sizes, buffer_count, err);
}

HurrayStatus hurray_stream_writer_write_node(HurrayStreamWriter *writer,
                                             const HurrayStreamNode *node, HurrayError *err) {
  if (writer == NULL || node == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "writer and node are required");
  HURRAY_TRY(check_writable(writer, err));
  HURRAY_TRY(check_node(writer, node, 0, "", err));
  const uint64_t before = writer->offset;
  HurrayStatus st = emit_node(writer, node, err);
  /* A tree cut short leaves a torn composite behind. */
  if (st != HURRAY_OK && writer->offset != before) writer->failed = true;
  return st;
}

/* ---- relaying items --------------------------------------------------------- */

/* Node tree mirroring an item tree; the arrays are owned by the mirror. */
typedef struct NodeMirror {
  HurrayStreamNode node;
  const void **bufs;
  uint64_t *sizes;
  HurrayStreamNode *members;
  struct NodeMirror *sub; /* one per member */
} NodeMirror;

static void mirror_free(NodeMirror *m) {
  if (m->sub != NULL)
    for (uint32_t i = 0; i < m->node.member_count; i++) mirror_free(&m->sub[i]);
  hurray__free(m->sub);
  hurray__free(m->members);
  hurray__free((void *)m->bufs);
  hurray__free(m->sizes);
  memset(m, 0, sizeof *m);
}

static HurrayStatus mirror_item(const HurrayStreamItem *it, NodeMirror *m, const char *where,
                                HurrayError *err) {
  char path[PATH_LEN];
  memset(m, 0, sizeof *m);
  m->node.descriptor = it->desc;
  if (it->buffer_count > 0) {
    m->bufs = hurray__calloc(it->buffer_count, sizeof *m->bufs);
    m->sizes = hurray__calloc(it->buffer_count, sizeof *m->sizes);
    if (m->bufs == NULL || m->sizes == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "", "out of memory");
    for (uint32_t i = 0; i < it->buffer_count; i++) {
      if (it->buffers[i].taken)
        return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET,
                            hurray__path(path, sizeof path, "%sbuffers[%u]", where, i),
                            "the buffer was taken out of the item");
      m->bufs[i] = it->buffers[i].data;
      m->sizes[i] = it->buffers[i].size;
    }
    m->node.buffers = m->bufs;
    m->node.buffer_sizes = m->sizes;
    m->node.buffer_count = it->buffer_count;
  }
  if (it->member_count > 0) {
    m->members = hurray__calloc(it->member_count, sizeof *m->members);
    m->sub = hurray__calloc(it->member_count, sizeof *m->sub);
    if (m->members == NULL || m->sub == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "", "out of memory");
    m->node.member_count = it->member_count;
    m->node.members = m->members;
    for (uint32_t i = 0; i < it->member_count; i++) {
      char sub[PATH_LEN];
      snprintf(sub, sizeof sub, "%smembers[%u].", where, i);
      HURRAY_TRY(mirror_item(it->members[i], &m->sub[i], sub, err));
      m->members[i] = m->sub[i].node;
    }
  }
  return HURRAY_OK;
}

HurrayStatus hurray_stream_writer_write_item(HurrayStreamWriter *writer,
                                             const HurrayStreamItem *item, HurrayError *err) {
  if (writer == NULL || item == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "writer and item are required");
  HURRAY_TRY(check_writable(writer, err));
  NodeMirror m;
  HurrayStatus st = mirror_item(item, &m, "", err);
  if (st == HURRAY_OK) st = hurray_stream_writer_write_node(writer, &m.node, err);
  mirror_free(&m);
  return st;
}

/* ---- writing a file's tree -------------------------------------------------- */

/* Node tree mirroring a file writer's tree: buffer pointers borrowed, sizes
 * the node's or (NULL) its handles' byte sizes. */
static HurrayStatus mirror_tree(const HurrayFileCompositeNode *n, NodeMirror *m,
                                const char *where, HurrayError *err) {
  char path[PATH_LEN];
  memset(m, 0, sizeof *m);
  if (n == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "%snode", where), "is NULL");
  m->node.descriptor = n->descriptor;
  m->node.buffers = n->buffers;
  m->node.buffer_sizes = n->sizes;
  HurrayDescriptorFields f;
  if (n->descriptor != NULL && hurray_descriptor_fields(n->descriptor, &f) == HURRAY_OK) {
    m->node.buffer_count = f.buffer_count; /* checked against the descriptor: its own */
    if (n->sizes == NULL && f.buffer_count > 0) {
      m->sizes = hurray__calloc(f.buffer_count, sizeof *m->sizes);
      if (m->sizes == NULL)
        return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "", "out of memory");
      for (uint32_t i = 0; i < f.buffer_count; i++) m->sizes[i] = f.buffers[i].byte_size;
      m->node.buffer_sizes = m->sizes;
    }
  }
  if (n->member_count > 0 && n->members != NULL) {
    m->members = hurray__calloc(n->member_count, sizeof *m->members);
    m->sub = hurray__calloc(n->member_count, sizeof *m->sub);
    if (m->members == NULL || m->sub == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "", "out of memory");
    m->node.member_count = n->member_count;
    m->node.members = m->members;
    for (uint32_t i = 0; i < n->member_count; i++) {
      char sub[PATH_LEN];
      snprintf(sub, sizeof sub, "%smembers[%u].", where, i);
      HURRAY_TRY(mirror_tree(&n->members[i], &m->sub[i], sub, err));
      m->members[i] = m->sub[i].node;
    }
  } else {
    m->node.member_count = n->member_count; /* members NULL: check_node says so */
  }
  return HURRAY_OK;
}

HurrayStatus hurray_stream_writer_write_tree(HurrayStreamWriter *writer,
                                             const HurrayFileCompositeNode *root,
                                             HurrayError *err) {
  if (writer == NULL || root == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "writer and root are required");
  HURRAY_TRY(check_writable(writer, err));
  NodeMirror m;
  HurrayStatus st = mirror_tree(root, &m, "", err);
  if (st == HURRAY_OK) st = hurray_stream_writer_write_node(writer, &m.node, err);
  mirror_free(&m);
  return st;
}
