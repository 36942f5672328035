/*
 * The blocking transport of the network protocol over a connected fd
 * (include/hurray/net.h § blocking transport): a client that says HELLO,
 * gets and puts tensors, and a server loop that serves them from handlers.
 * Every message goes through the connection's session, sent or received, so
 * the rules live in one place (session.c). Every wait is a poll(2) bounded by
 * the connection's timeout; writes use sendmsg with MSG_NOSIGNAL.
 *
 * Windows: not implemented yet (HURRAY_ERR_UNSUPPORTED).
 */
#include "hurray/net.h"

#include "hurray/alloc.h"
#include "hurray/descriptor.h"
#include "hurray/layout.h"
#include "internal/common.h"
#include "internal/net.h"

#if !defined(_WIN32)

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#if !defined(MSG_NOSIGNAL)
#define MSG_NOSIGNAL 0 /* macOS: the socket carries SO_NOSIGPIPE instead */
#endif

struct HurrayNetConnection {
  int fd;
  HurrayNetRole role;
  HurrayNetSession *s;
  int32_t timeout_ms;
  uint32_t frame_size;
  uint64_t max_tensor_bytes;
  uint32_t next_stream;
  uint8_t *in; /* the payload being received */
  size_t in_cap;
  uint8_t *out; /* the message being sent (all but data frames) */
  size_t out_cap;
  /* The data of the response being received (client get): frames arriving
   * in order on `direct_stream` are read straight into place. */
  uint8_t *direct;
  uint64_t direct_len;
  uint64_t direct_next; /* offset of the next frame expected */
  uint32_t direct_stream; /* 0: none */
  uint32_t pending;       /* client: the stream of a composite response being received */
  uint32_t request_flags;
  uint32_t shard_index, total_shards; /* server: set by a get handler; 0: one */
  const HurrayNetRequest *request;    /* server: the request being answered */
  void (*response_end)(void *ctx);    /* server: hurray__net_on_response_end */
  void *response_end_ctx;
};

HurrayStatus hurray_net_connection_new(int fd, HurrayNetRole role,
                                       const HurrayNetConnectionOptions *opts,
                                       HurrayNetConnection **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "out is required");
  *out = NULL;
  HurrayNetConnectionOptions o;
  memset(&o, 0, sizeof o);
  if (opts != NULL) o = *opts;
  if (fd < 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "fd",
                        "%d is not a file descriptor", fd);
  if (o.timeout_ms < -1)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "timeout_ms",
                        "%d (-1 waits forever)", (int)o.timeout_ms);
  HurrayNetConnection *c = hurray__calloc(1, sizeof *c);
  if (c == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate a connection");
  HurrayStatus st = hurray_net_session_new(role, &o.session, &c->s, err);
  if (st != HURRAY_OK) {
    hurray__free(c);
    return st;
  }
  c->fd = fd;
  c->role = role;
  c->timeout_ms = o.timeout_ms == 0 ? HURRAY_NET_DEFAULT_TIMEOUT_MS : o.timeout_ms;
  c->frame_size = o.frame_size == 0 ? HURRAY_NET_DEFAULT_FRAME_SIZE : o.frame_size;
  c->max_tensor_bytes =
      o.max_tensor_bytes == 0 ? HURRAY_NET_DEFAULT_MAX_TENSOR_BYTES : o.max_tensor_bytes;
  c->next_stream = 1;
  c->request_flags = o.request_flags;
#if defined(SO_NOSIGPIPE)
  int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
  *out = c;
  return HURRAY_OK;
}

void hurray_net_connection_destroy(HurrayNetConnection **c) {
  if (c == NULL || *c == NULL) return;
  hurray_net_session_destroy(&(*c)->s);
  hurray__free((*c)->in);
  hurray__free((*c)->out);
  hurray__free(*c);
  *c = NULL;
}

const HurrayNetSession *hurray_net_connection_session(const HurrayNetConnection *c) {
  return c == NULL ? NULL : c->s;
}

/* ---- I/O ---------------------------------------------------------------------- */

static HurrayStatus io_fail(HurrayError *err, const char *what, int e) {
  return hurray__fail(err, HURRAY_ERR_IO, HURRAY_NO_OFFSET, "connection", "%s: %s (errno %d)",
                      what, strerror(e), e);
}

static HurrayStatus wait_fd(HurrayNetConnection *c, short events, HurrayError *err) {
  struct pollfd p;
  p.fd = c->fd;
  p.events = events;
  p.revents = 0;
  for (;;) {
    int r = poll(&p, 1, c->timeout_ms);
    if (r > 0) return HURRAY_OK;
    if (r == 0)
      return hurray__fail(err, HURRAY_ERR_IO, HURRAY_NO_OFFSET, "connection",
                          "timed out after %d ms waiting for the peer", (int)c->timeout_ms);
    if (errno != EINTR) return io_fail(err, "poll failed", errno);
  }
}

/* Reads exactly n bytes. With `eof` non-NULL, an end of stream before the
 * first byte sets *eof instead of failing. Each read is tried first without
 * waiting (one system call when data is there, as it is while a tensor
 * streams in); poll, bounded by the timeout, only when nothing is. */
static HurrayStatus read_full(HurrayNetConnection *c, uint8_t *p, size_t n, bool *eof,
                              HurrayError *err) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = recv(c->fd, p + got, n - got, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      HURRAY_TRY(wait_fd(c, POLLIN, err));
      continue;
    }
    if (r > 0) {
      got += (size_t)r;
    } else if (r == 0) {
      if (eof != NULL && got == 0) {
        *eof = true;
        return HURRAY_OK;
      }
      return hurray__fail(err, HURRAY_ERR_IO, HURRAY_NO_OFFSET, "connection",
                          "the peer closed the connection inside a message");
    } else if (errno != EINTR) {
      return io_fail(err, "read failed", errno);
    }
  }
  return HURRAY_OK;
}

static HurrayStatus write_iov(HurrayNetConnection *c, struct iovec *iov, int n,
                              HurrayError *err) {
  while (n > 0) {
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = iov;
    mh.msg_iovlen = (size_t)n;
    /* Never blocking in the call: a peer that stops reading is waited for
     * with poll, bounded by the timeout, like a silent one. */
    ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        HURRAY_TRY(wait_fd(c, POLLOUT, err));
        continue;
      }
      return io_fail(err, "send failed", errno);
    }
    size_t left = (size_t)w;
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (uint8_t *)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
  return HURRAY_OK;
}

static HurrayStatus grow(uint8_t **buf, size_t *cap, size_t need, HurrayError *err) {
  if (*cap >= need) return HURRAY_OK;
  size_t n = need < 4096 ? 4096 : need;
  uint8_t *p = hurray__malloc(n);
  if (p == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate %zu bytes for a message", n);
  hurray__free(*buf);
  *buf = p;
  *cap = n;
  return HURRAY_OK;
}

/* Sends a message: the session records it, then it is written. */
static HurrayStatus send_msg(HurrayNetConnection *c, const HurrayNetMessage *m, HurrayError *err) {
  HURRAY_TRY(hurray_net_session_send(c->s, m, err));
  if (m->type == HURRAY_NET_TENSOR_DATA) {
    /* Header and offset from here, the data from the caller's memory. */
    uint8_t head[HURRAY_NET_HEADER_LEN + 8];
    HurrayNetHeader h = {m->type, m->stream_id, 8u + m->u.data.len};
    HURRAY_TRY(hurray_net_header_encode(&h, head));
    hurray__st64(head + HURRAY_NET_HEADER_LEN, m->u.data.offset);
    struct iovec iov[2];
    iov[0].iov_base = head;
    iov[0].iov_len = sizeof head;
    iov[1].iov_base = (void *)(uintptr_t)m->u.data.data;
    iov[1].iov_len = m->u.data.len;
    return write_iov(c, iov, 2, err);
  }
  uint64_t n = 0;
  HURRAY_TRY(hurray_net_message_encoded_len(m, &n, err));
  HURRAY_TRY(grow(&c->out, &c->out_cap, (size_t)n, err));
  size_t len = 0;
  HURRAY_TRY(hurray_net_message_encode(m, c->out, c->out_cap, &len, err));
  struct iovec iov = {c->out, len};
  return write_iov(c, &iov, 1, err);
}

static HurrayStatus send_error(HurrayNetConnection *c, uint32_t stream, uint32_t code,
                               const char *text, HurrayError *err) {
  HurrayNetMessage m;
  memset(&m, 0, sizeof m);
  m.type = HURRAY_NET_ERROR;
  m.stream_id = stream;
  m.u.error.code = code;
  size_t n = strnlen(text, 160);
  m.u.error.text = (const uint8_t *)text;
  m.u.error.text_len = (uint32_t)n;
  /* `text` may be err's own reason: the detail goes to a local first, and to
   * err only when sending fails (the connection failing). */
  HurrayError e;
  HurrayStatus st = send_msg(c, &m, &e);
  if (st != HURRAY_OK && err != NULL) *err = e;
  return st;
}

/* Discards n payload bytes. */
static HurrayStatus skip(HurrayNetConnection *c, uint64_t n, HurrayError *err) {
  uint8_t tmp[4096];
  while (n > 0) {
    size_t k = n < sizeof tmp ? (size_t)n : sizeof tmp;
    HURRAY_TRY(read_full(c, tmp, k, NULL, err));
    n -= k;
  }
  return HURRAY_OK;
}

/*
 * Receives the next message the session accepts into *m (its views point
 * into c->in, valid until the next receive). Frames the session discards
 * are dropped; PING is answered with PONG. A refused message is answered
 * with the verdict's ERROR, and its status returned. *eof: the peer closed
 * the connection between messages.
 */
static HurrayStatus recv_msg(HurrayNetConnection *c, HurrayNetMessage *m, HurrayNetVerdict *v,
                             bool *eof, HurrayError *err) {
  for (;;) {
    uint8_t head[HURRAY_NET_HEADER_LEN];
    bool end = false;
    HURRAY_TRY(read_full(c, head, sizeof head, &end, err));
    if (end) {
      if (eof != NULL) {
        *eof = true;
        return HURRAY_OK;
      }
      return hurray__fail(err, HURRAY_ERR_IO, HURRAY_NO_OFFSET, "connection",
                          "the peer closed the connection");
    }
    HurrayNetHeader h;
    HurrayStatus st = hurray_net_session_receive_header(c->s, head, sizeof head, &h, v, err);
    if (st == HURRAY_OK && h.message_type == HURRAY_NET_TENSOR_DATA && c->direct != NULL &&
        h.stream_id == c->direct_stream && c->direct_next >= 8 && h.payload_length > 8 &&
        h.payload_length - 8u <= c->direct_len - c->direct_next) {
      /* A frame of the data being received, where it is expected next: its
       * 8-byte offset is read over the 8 bytes before its place (kept aside
       * and put back), its data into place, so the frame is never copied.
       * The session still checks the whole payload. */
      uint8_t *at = c->direct + c->direct_next - 8;
      uint8_t saved[8];
      memcpy(saved, at, 8);
      st = read_full(c, at, h.payload_length, NULL, err);
      if (st == HURRAY_OK)
        st = hurray_net_session_receive_payload(c->s, &h, at, h.payload_length, m, v, err);
      memcpy(at, saved, 8);
      if (st == HURRAY_ERR_IO) return st;
      if (st == HURRAY_OK && m->type == HURRAY_NET_TENSOR_DATA)
        c->direct_next = m->u.data.offset + m->u.data.len;
    } else if (st == HURRAY_OK) {
      HURRAY_TRY(grow(&c->in, &c->in_cap, h.payload_length, err));
      HURRAY_TRY(read_full(c, c->in, h.payload_length, NULL, err));
      st = hurray_net_session_receive_payload(c->s, &h, c->in, h.payload_length, m, v, err);
    } else if (v->action == HURRAY_NET_REFUSE && v->skip_payload && !v->close_connection) {
      /* Answer first: the peer may be waiting for the ERROR before it sends
       * the payload (or never send it); then step over what does come. */
      if (v->stream_id != 0)
        (void)send_error(c, v->stream_id, v->error_code, err != NULL ? err->reason : "", NULL);
      HurrayError lost;
      HurrayStatus sk = skip(c, hurray__ld32(head + 8), &lost);
      if (sk != HURRAY_OK) {
        /* The connection failed while skipping: that is the status, and
         * its detail too (the refusal was answered already). */
        if (err != NULL) *err = lost;
        return sk;
      }
      return st;
    }
    if (st != HURRAY_OK) {
      if (v->action == HURRAY_NET_REFUSE && v->stream_id != 0)
        (void)send_error(c, v->stream_id, v->error_code, err != NULL ? err->reason : "", NULL);
      return st;
    }
    if (v->action == HURRAY_NET_DISCARD) continue;
    if (m->type == HURRAY_NET_PING) {
      HurrayNetMessage pong = *m;
      pong.type = HURRAY_NET_PONG;
      HURRAY_TRY(send_msg(c, &pong, err));
      continue;
    }
    return HURRAY_OK; /* PONG included: hurray_net_client_ping waits for it */
  }
}

/* The status for an ERROR the peer sent. */
static HurrayStatus peer_error(const HurrayNetMessage *m, HurrayError *err) {
  HurrayStatus st = HURRAY_ERR_PROTOCOL;
  switch (m->u.error.code) {
    case HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH:
      st = HURRAY_ERR_VERSION_MISMATCH;
      break;
    case HURRAY_NET_E_UNKNOWN_TENSOR:
      st = HURRAY_ERR_NOT_FOUND;
      break;
    case HURRAY_NET_E_DEVICE_UNAVAILABLE:
    case HURRAY_NET_E_LAYOUT_UNAVAILABLE:
    case HURRAY_NET_E_TRANSCODE_LIMIT_EXCEEDED:
      st = HURRAY_ERR_UNSUPPORTED;
      break;
    case HURRAY_NET_E_MESSAGE_TOO_LARGE:
      st = HURRAY_ERR_STREAM_LIMIT;
      break;
    default:
      break;
  }
  const char *name = hurray_net_error_code_name(m->u.error.code);
  int n = m->u.error.text_len > 120 ? 120 : (int)m->u.error.text_len;
  return hurray__fail(err, st, HURRAY_NO_OFFSET, "peer", "the peer answered ERROR %s (0x%X): %.*s",
                      name != NULL ? name : "?", m->u.error.code, n,
                      n > 0 ? (const char *)m->u.error.text : "");
}

static void fill_hello(HurrayNetConnection *c, const HurrayNetHello *given, uint32_t type,
                       HurrayNetMessage *m) {
  static const uint8_t cpu = 0x00;
  memset(m, 0, sizeof *m);
  m->type = type;
  m->stream_id = 1;
  if (given != NULL) {
    m->u.hello = *given;
  } else {
    m->u.hello.device_count = 1;
    m->u.hello.devices = &cpu;
  }
  m->u.hello.protocol_version = HURRAY_NET_PROTOCOL_VERSION;
  m->u.hello.max_message_size = hurray_net_session_max_message_size(c->s);
}

/* The largest data frame payload to send now. */
static uint32_t frame_bytes(const HurrayNetConnection *c) {
  uint32_t peer = hurray_net_session_peer_max_message_size(c->s) - 8u;
  return c->frame_size < peer ? c->frame_size : peer;
}

/* Sends `len` bytes of data as frames on `stream`. */
static HurrayStatus send_data(HurrayNetConnection *c, uint32_t stream, const void *data,
                              uint64_t len, HurrayError *err) {
  uint64_t off = 0;
  uint32_t max = frame_bytes(c);
  while (off < len) {
    uint64_t k = len - off < max ? len - off : max;
    HurrayNetMessage m;
    memset(&m, 0, sizeof m);
    m.type = HURRAY_NET_TENSOR_DATA;
    m.stream_id = stream;
    m.u.data.offset = off;
    m.u.data.data = (const uint8_t *)data + off;
    m.u.data.len = (uint32_t)k;
    HURRAY_TRY(send_msg(c, &m, err));
    off += k;
  }
  HurrayNetMessage end;
  memset(&end, 0, sizeof end);
  end.type = HURRAY_NET_TENSOR_DATA_END;
  end.stream_id = stream;
  return send_msg(c, &end, err);
}

/* Allocates the memory a tensor of `total` bytes is received into. */
static HurrayStatus alloc_data(HurrayNetConnection *c, uint64_t total, void **out,
                               HurrayError *err) {
  *out = NULL;
  if (total > c->max_tensor_bytes)
    return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, HURRAY_NO_OFFSET, "total_data_bytes",
                        "%llu bytes exceed the connection's limit of %llu",
                        (unsigned long long)total, (unsigned long long)c->max_tensor_bytes);
  if (total == 0) return HURRAY_OK;
  if (total > SIZE_MAX || (*out = hurray_alloc((size_t)total, HURRAY_MIN_BUFFER_ALIGNMENT)) == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "total_data_bytes",
                        "cannot allocate %llu bytes", (unsigned long long)total);
#if defined(MADV_HUGEPAGE)
  /* Fresh memory filled by the kernel's copy: with transparent huge pages
   * it faults in 2 MiB at a time instead of 4 KiB (NumPy asks the same for
   * its large arrays). Advice only: a failure changes nothing. */
  if (total >= ((uint64_t)4 << 20)) {
    uintptr_t page = 4096, lo = ((uintptr_t)*out + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)*out + (uintptr_t)total) & ~(page - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  }
#endif
  return HURRAY_OK;
}

/* ---- client ------------------------------------------------------------------------ */

static HurrayStatus check_role(HurrayNetConnection *c, HurrayNetRole role, HurrayError *err) {
  if (c == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "c is required");
  if (c->role != role)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "a %s call on a %s connection",
                        role == HURRAY_NET_ROLE_CLIENT ? "client" : "server",
                        c->role == HURRAY_NET_ROLE_CLIENT ? "client" : "server");
  return HURRAY_OK;
}

HurrayStatus hurray_net_client_hello(HurrayNetConnection *c, const HurrayNetHello *hello,
                                     HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_CLIENT, err));
  HurrayNetMessage m;
  fill_hello(c, hello, HURRAY_NET_CLIENT_HELLO, &m);
  HURRAY_TRY(send_msg(c, &m, err));
  HurrayNetVerdict v;
  HURRAY_TRY(recv_msg(c, &m, &v, NULL, err));
  if (m.type == HURRAY_NET_ERROR) return peer_error(&m, err);
  return HURRAY_OK; /* the session accepts only SERVER_HELLO or ERROR here */
}

/* A fresh stream id of this client. */
static uint32_t new_stream(HurrayNetConnection *c) {
  uint32_t id = c->next_stream++;
  if (c->next_stream == 0) c->next_stream = 1;
  return id;
}

/* A client call may start: no composite response is half received. */
static HurrayStatus check_idle(HurrayNetConnection *c, HurrayError *err) {
  if (c->pending != 0 && hurray_net_session_stream_open(c->s, c->pending))
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "the members of a composite response are still to be received "
                        "(hurray_net_client_get_next)");
  c->pending = 0;
  return HURRAY_OK;
}

/* Receives the next tensor of the response on `stream`: its descriptor and
 * data frames up to its TENSOR_DATA_END, into new memory, or into `dst` (cap
 * bytes, the caller's; a single tensor only) when it is not NULL. */
static HurrayStatus receive_tensor(HurrayNetConnection *c, uint32_t stream, void *dst,
                                   uint64_t cap, HurrayDescriptor **out_descriptor,
                                   void **out_data, uint64_t *out_len, HurrayError *err) {
  HurrayNetMessage m;
  HurrayDescriptor *d = NULL;
  void *data = NULL;
  uint64_t total = 0;
  HurrayStatus st;
  for (;;) {
    HurrayNetVerdict v;
    st = recv_msg(c, &m, &v, NULL, err);
    if (st != HURRAY_OK) break;
    if (m.stream_id != stream) continue; /* PING on another stream, private types */
    if (m.type == HURRAY_NET_ERROR) {
      st = peer_error(&m, err);
      break;
    }
    if (m.type == HURRAY_NET_TENSOR_DESCRIPTOR) {
      /* The session checked it decodes (and, in a composite, that it fits). */
      st = hurray_descriptor_decode(m.u.descriptor.descriptor, m.u.descriptor.descriptor_len, &d);
      if (st != HURRAY_OK) {
        (void)hurray__fail(err, st, HURRAY_NO_OFFSET, "descriptor", "does not decode");
        break;
      }
      total = m.u.descriptor.total_data_bytes;
      uint8_t tag = 0;
      if (dst == NULL) {
        st = alloc_data(c, total, &data, err);
      } else if (hurray_descriptor_layout_tag(d, &tag) == HURRAY_OK &&
                 tag == HURRAY_LAYOUT_COMPOSITE) {
        (void)send_error(c, stream, HURRAY_NET_E_INVALID_MESSAGE,
                         "a composite cannot be received into one buffer", NULL);
        st = hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "descriptor",
                          "a composite cannot be received into one buffer");
        break;
      } else if (total > cap) {
        st = hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, HURRAY_NO_OFFSET, "total_data_bytes",
                          "%llu bytes do not fit the %llu given", (unsigned long long)total,
                          (unsigned long long)cap);
      } else {
        data = total == 0 ? NULL : dst;
      }
      if (st != HURRAY_OK) {
        (void)send_error(c, stream, HURRAY_NET_E_MESSAGE_TOO_LARGE,
                         err != NULL ? err->reason : "", NULL);
        break;
      }
      c->direct = data;
      c->direct_len = total;
      c->direct_next = 0;
      c->direct_stream = stream;
    } else if (m.type == HURRAY_NET_TENSOR_DATA) {
      uint8_t *at = (uint8_t *)data + m.u.data.offset;
      if (m.u.data.data != at) {
        memcpy(at, m.u.data.data, m.u.data.len);
        c->direct_next = m.u.data.offset + m.u.data.len;
      }
    } else if (m.type == HURRAY_NET_TENSOR_DATA_END) {
      c->direct = NULL;
      c->direct_stream = 0;
      c->pending = hurray_net_session_stream_open(c->s, stream) ? stream : 0;
      *out_descriptor = d;
      *out_data = data;
      *out_len = total;
      return HURRAY_OK;
    }
  }
  c->direct = NULL;
  c->direct_stream = 0;
  c->pending = 0;
  hurray__descriptor_drop(d);
  if (dst == NULL) hurray_free(data);
  return st;
}

/* Sends a TENSOR_REQUEST for `key` on a new stream (*stream): `req`'s device,
 * preferences and flags (NULL: CPU, none, the connection's flags). */
static HurrayStatus send_request(HurrayNetConnection *c, const char *key,
                                 const HurrayNetRequestOptions *req, uint32_t *stream,
                                 HurrayError *err) {
  size_t klen = strlen(key);
  if (klen > UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key", "too long");
  HurrayNetRequestOptions r;
  memset(&r, 0, sizeof r);
  if (req != NULL) r = *req;
  if (r.layout_count != 0 && r.layouts == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "req.layouts",
                        "%u layouts without an array", (unsigned)r.layout_count);
  /* The preferences in wire form: on the stack when short, else allocated. */
  uint8_t small[64];
  uint8_t *list = small;
  size_t list_len = 0;
  HurrayStatus st = HURRAY_OK;
  if (r.layout_count != 0) {
    st = hurray_net_layout_list_encode(r.layouts, r.layout_count, small, sizeof small,
                                       &list_len, err);
    if (st == HURRAY_ERR_BUFFER_TOO_SMALL) {
      list = hurray__malloc(list_len);
      if (list == NULL)
        return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "req.layouts",
                            "cannot allocate %zu bytes", list_len);
      st = hurray_net_layout_list_encode(r.layouts, r.layout_count, list, list_len, &list_len,
                                         err);
    }
  }
  if (st == HURRAY_OK) {
    *stream = new_stream(c);
    HurrayNetMessage m;
    memset(&m, 0, sizeof m);
    m.type = HURRAY_NET_TENSOR_REQUEST;
    m.stream_id = *stream;
    m.u.request.key = (const uint8_t *)key;
    m.u.request.key_len = (uint32_t)klen;
    m.u.request.layouts.count = r.layout_count;
    m.u.request.layouts.len = (uint32_t)list_len;
    m.u.request.layouts.bytes = list_len != 0 ? list : NULL;
    m.u.request.preferred_device = r.preferred_device;
    m.u.request.min_alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
    m.u.request.flags = c->request_flags | r.flags;
    st = send_msg(c, &m, err);
  }
  if (list != small) hurray__free(list);
  return st;
}

HurrayStatus hurray_net_client_get_ex(HurrayNetConnection *c, const char *key,
                                      const HurrayNetRequestOptions *req,
                                      HurrayDescriptor **out_descriptor, void **out_data,
                                      uint64_t *out_len, HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_CLIENT, err));
  if (key == NULL || out_descriptor == NULL || out_data == NULL || out_len == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "key, out_descriptor, out_data and out_len are required");
  HURRAY_TRY(check_idle(c, err));
  uint32_t stream = 0;
  HURRAY_TRY(send_request(c, key, req, &stream, err));
  return receive_tensor(c, stream, NULL, 0, out_descriptor, out_data, out_len, err);
}

HurrayStatus hurray_net_client_get(HurrayNetConnection *c, const char *key,
                                   uint8_t preferred_device, HurrayDescriptor **out_descriptor,
                                   void **out_data, uint64_t *out_len, HurrayError *err) {
  HurrayNetRequestOptions r;
  memset(&r, 0, sizeof r);
  r.preferred_device = preferred_device;
  return hurray_net_client_get_ex(c, key, &r, out_descriptor, out_data, out_len, err);
}

HurrayStatus hurray_net_client_get_into_ex(HurrayNetConnection *c, const char *key,
                                           const HurrayNetRequestOptions *req, void *dst,
                                           uint64_t cap, HurrayDescriptor **out_descriptor,
                                           uint64_t *out_len, HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_CLIENT, err));
  if (key == NULL || out_descriptor == NULL || out_len == NULL || (dst == NULL && cap != 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "key, dst, out_descriptor and out_len are required");
  HURRAY_TRY(check_idle(c, err));
  static uint8_t none[1];
  uint32_t stream = 0;
  HURRAY_TRY(send_request(c, key, req, &stream, err));
  void *data = NULL;
  return receive_tensor(c, stream, dst != NULL ? dst : none, cap, out_descriptor, &data, out_len,
                        err);
}

HurrayStatus hurray_net_client_get_into(HurrayNetConnection *c, const char *key,
                                        uint8_t preferred_device, void *dst, uint64_t cap,
                                        HurrayDescriptor **out_descriptor, uint64_t *out_len,
                                        HurrayError *err) {
  HurrayNetRequestOptions r;
  memset(&r, 0, sizeof r);
  r.preferred_device = preferred_device;
  return hurray_net_client_get_into_ex(c, key, &r, dst, cap, out_descriptor, out_len, err);
}

HurrayStatus hurray_net_client_get_next(HurrayNetConnection *c, HurrayDescriptor **out_descriptor,
                                        void **out_data, uint64_t *out_len, HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_CLIENT, err));
  if (out_descriptor == NULL || out_data == NULL || out_len == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "out_descriptor, out_data and out_len are required");
  if (!hurray_net_client_response_open(c))
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "no composite response is being received");
  return receive_tensor(c, c->pending, NULL, 0, out_descriptor, out_data, out_len, err);
}

bool hurray_net_client_response_open(const HurrayNetConnection *c) {
  return c != NULL && c->pending != 0 && hurray_net_session_stream_open(c->s, c->pending);
}

HurrayStatus hurray_net_client_ping(HurrayNetConnection *c, HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_CLIENT, err));
  HURRAY_TRY(check_idle(c, err));
  uint32_t stream = new_stream(c);
  uint8_t token[8];
  hurray__st64(token, (uint64_t)stream);
  HurrayNetMessage m;
  memset(&m, 0, sizeof m);
  m.type = HURRAY_NET_PING;
  m.stream_id = stream;
  m.u.opaque.bytes = token;
  m.u.opaque.len = sizeof token;
  HURRAY_TRY(send_msg(c, &m, err));
  for (;;) {
    HurrayNetVerdict v;
    HURRAY_TRY(recv_msg(c, &m, &v, NULL, err));
    if (m.type == HURRAY_NET_PONG && m.stream_id == stream) return HURRAY_OK;
    if (m.type == HURRAY_NET_ERROR && m.stream_id == stream) return peer_error(&m, err);
  }
}

HurrayStatus hurray_net_client_put(HurrayNetConnection *c, const char *key,
                                   const uint8_t *descriptor, uint32_t descriptor_len,
                                   const void *data, uint64_t data_len, HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_CLIENT, err));
  if (key == NULL || descriptor == NULL || (data == NULL && data_len != 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "key, descriptor and data are required");
  HURRAY_TRY(check_idle(c, err));
  size_t klen = strlen(key);
  if (klen > UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key", "too long");
  uint32_t stream = new_stream(c);
  HurrayNetMessage m;
  memset(&m, 0, sizeof m);
  m.type = HURRAY_NET_TENSOR_PUT;
  m.stream_id = stream;
  m.u.put.key = (const uint8_t *)key;
  m.u.put.key_len = (uint32_t)klen;
  m.u.put.descriptor = descriptor;
  m.u.put.descriptor_len = descriptor_len;
  m.u.put.total_data_bytes = data_len;
  HURRAY_TRY(send_msg(c, &m, err));
  HURRAY_TRY(send_data(c, stream, data, data_len, err));
  for (;;) {
    HurrayNetVerdict v;
    HURRAY_TRY(recv_msg(c, &m, &v, NULL, err));
    if (m.stream_id != stream) continue;
    if (m.type == HURRAY_NET_ERROR) return peer_error(&m, err);
    if (m.type == HURRAY_NET_TENSOR_PUT_ACK) return HURRAY_OK;
  }
}

/* ---- server ------------------------------------------------------------------------ */

static HurrayStatus serve_response(HurrayNetConnection *c, const HurrayNetServerHandlers *h,
                                   const HurrayNetMessage *req, HurrayError *err);

/* Serves one request: the handler's tensor, or its ERROR. */
static HurrayStatus serve_get(HurrayNetConnection *c, const HurrayNetServerHandlers *h,
                              const HurrayNetMessage *req, HurrayError *err) {
  uint32_t stream = req->stream_id;
  if (h == NULL || h->get == NULL)
    return send_error(c, stream, HURRAY_NET_E_UNKNOWN_TENSOR, "this server serves no tensor",
                      err);
  c->shard_index = 0;
  c->total_shards = 0;
  c->request = &req->u.request;
  HurrayStatus st = serve_response(c, h, req, err);
  c->request = NULL;
  if (c->response_end != NULL) c->response_end(c->response_end_ctx);
  return st;
}

/* serve_get, with the request visible to the handlers. */
static HurrayStatus serve_response(HurrayNetConnection *c, const HurrayNetServerHandlers *h,
                                   const HurrayNetMessage *req, HurrayError *err) {
  uint32_t stream = req->stream_id;
  const uint8_t *desc = NULL;
  uint32_t desc_len = 0;
  const void *data = NULL;
  uint64_t len = 0;
  uint32_t code = h->get(h->ctx, req->u.request.key, req->u.request.key_len,
                         req->u.request.preferred_device, &desc, &desc_len, &data, &len);
  if (code != 0) return send_error(c, stream, code, "", err);
  HurrayNetMessage m;
  memset(&m, 0, sizeof m);
  m.type = HURRAY_NET_TENSOR_DESCRIPTOR;
  m.stream_id = stream;
  m.u.descriptor.descriptor = desc;
  m.u.descriptor.descriptor_len = desc_len;
  m.u.descriptor.total_data_bytes = len;
  m.u.descriptor.total_shards = c->total_shards == 0 ? 1 : c->total_shards;
  m.u.descriptor.shard_index = c->total_shards == 0 ? 0 : c->shard_index;
  c->shard_index = 0;
  c->total_shards = 0;
  HurrayError e;
  HurrayStatus st = send_msg(c, &m, &e);
  if (st == HURRAY_ERR_IO) {
    if (err != NULL) *err = e;
    return st;
  }
  if (st != HURRAY_OK) {
    /* The session refused the handler's tensor (a device the client cannot
     * take, a total that is not the buffers' sum, ...): tell the client. */
    uint32_t wire = e.status == HURRAY_ERR_PROTOCOL && strstr(e.reason, "device") != NULL
                        ? HURRAY_NET_E_DEVICE_UNAVAILABLE
                        : HURRAY_NET_E_INVALID_MESSAGE;
    return send_error(c, stream, wire, e.reason, err);
  }
  HURRAY_TRY(send_data(c, stream, data, len, err));
  /* A composite: its members follow, in pre-order, until the session says
   * the response is complete. */
  while (hurray_net_session_stream_open(c->s, stream)) {
    if (h->next == NULL)
      return send_error(c, stream, HURRAY_NET_E_INVALID_MESSAGE,
                        "this server cannot send the members of a composite", err);
    code = h->next(h->ctx, &desc, &desc_len, &data, &len);
    if (code != 0) return send_error(c, stream, code, "", err);
    m.u.descriptor.descriptor = desc;
    m.u.descriptor.descriptor_len = desc_len;
    m.u.descriptor.total_data_bytes = len;
    m.u.descriptor.total_shards = 1;
    m.u.descriptor.shard_index = 0;
    st = send_msg(c, &m, &e);
    if (st == HURRAY_ERR_IO) {
      if (err != NULL) *err = e;
      return st;
    }
    if (st != HURRAY_OK) return send_error(c, stream, HURRAY_NET_E_INVALID_MESSAGE, e.reason, err);
    HURRAY_TRY(send_data(c, stream, data, len, err));
  }
  return HURRAY_OK;
}

void hurray_net_server_set_shard(HurrayNetConnection *c, uint32_t shard_index,
                                 uint32_t total_shards) {
  if (c == NULL || c->role != HURRAY_NET_ROLE_SERVER) return;
  c->shard_index = shard_index;
  c->total_shards = total_shards;
}

void hurray__net_on_response_end(HurrayNetConnection *c, void (*fn)(void *ctx), void *ctx) {
  if (c == NULL) return;
  c->response_end = fn;
  c->response_end_ctx = ctx;
}

bool hurray_net_server_request(const HurrayNetConnection *c, HurrayNetRequest *out) {
  if (out == NULL) return false;
  memset(out, 0, sizeof *out);
  if (c == NULL || c->role != HURRAY_NET_ROLE_SERVER || c->request == NULL) return false;
  *out = *c->request;
  return true;
}

/* The put being received (one at a time). */
typedef struct Put {
  uint32_t stream; /* 0: none */
  uint8_t *key;
  uint32_t key_len;
  uint8_t *desc;
  uint32_t desc_len;
  void *data;
  uint64_t len;
} Put;

static void put_reset(Put *p) {
  hurray__free(p->key);
  hurray__free(p->desc);
  hurray_free(p->data);
  memset(p, 0, sizeof *p);
}

static HurrayStatus put_begin(HurrayNetConnection *c, const HurrayNetServerHandlers *h, Put *p,
                              const HurrayNetMessage *m, HurrayError *err) {
  if (h == NULL || h->put == NULL)
    return send_error(c, m->stream_id, HURRAY_NET_E_INVALID_MESSAGE, "this server takes no put",
                      err);
  if (p->stream != 0)
    return send_error(c, m->stream_id, HURRAY_NET_E_INVALID_MESSAGE,
                      "this server takes one put at a time", err);
  HurrayError e;
  if (alloc_data(c, m->u.put.total_data_bytes, &p->data, &e) != HURRAY_OK)
    return send_error(c, m->stream_id, HURRAY_NET_E_MESSAGE_TOO_LARGE, e.reason, err);
  p->key = hurray__malloc(m->u.put.key_len + 1u);
  p->desc = hurray__malloc(m->u.put.descriptor_len);
  if (p->key == NULL || p->desc == NULL) {
    put_reset(p);
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot keep a put's key and descriptor");
  }
  if (m->u.put.key_len != 0) memcpy(p->key, m->u.put.key, m->u.put.key_len);
  memcpy(p->desc, m->u.put.descriptor, m->u.put.descriptor_len);
  p->key_len = m->u.put.key_len;
  p->desc_len = m->u.put.descriptor_len;
  p->len = m->u.put.total_data_bytes;
  p->stream = m->stream_id;
  return HURRAY_OK;
}

HurrayStatus hurray_net_server_serve(HurrayNetConnection *c, const HurrayNetHello *hello,
                                     const HurrayNetServerHandlers *handlers, HurrayError *err) {
  HURRAY_TRY(check_role(c, HURRAY_NET_ROLE_SERVER, err));
  HurrayNetMessage m;
  HurrayNetVerdict v;
  HURRAY_TRY(recv_msg(c, &m, &v, NULL, err));
  if (m.type == HURRAY_NET_ERROR) return peer_error(&m, err);
  HurrayNetMessage sh;
  fill_hello(c, hello, HURRAY_NET_SERVER_HELLO, &sh);
  sh.stream_id = m.stream_id;
  if (m.u.hello.protocol_version < sh.u.hello.protocol_version)
    sh.u.hello.protocol_version = m.u.hello.protocol_version;
  HURRAY_TRY(send_msg(c, &sh, err));
  Put put;
  memset(&put, 0, sizeof put);
  HurrayStatus st = HURRAY_OK;
  for (;;) {
    bool eof = false;
    HurrayError e;
    st = recv_msg(c, &m, &v, &eof, &e);
    if (st == HURRAY_OK && eof) break;
    if (st != HURRAY_OK) {
      /* A refused message was answered; go on unless the connection is
       * lost or must close. */
      if (st == HURRAY_ERR_IO || st == HURRAY_ERR_OUT_OF_MEMORY || v.close_connection) {
        if (err != NULL) *err = e;
        break;
      }
      if (v.stream_id == put.stream) put_reset(&put);
      st = HURRAY_OK;
      continue;
    }
    switch (m.type) {
      case HURRAY_NET_TENSOR_REQUEST:
        st = serve_get(c, handlers, &m, err);
        break;
      case HURRAY_NET_TENSOR_PUT:
        st = put_begin(c, handlers, &put, &m, err);
        break;
      case HURRAY_NET_TENSOR_DATA:
        if (m.stream_id == put.stream)
          memcpy((uint8_t *)put.data + m.u.data.offset, m.u.data.data, m.u.data.len);
        break;
      case HURRAY_NET_TENSOR_DATA_END:
        if (m.stream_id == put.stream) {
          uint32_t code = handlers->put(handlers->ctx, put.key, put.key_len, put.desc,
                                        put.desc_len, put.data, put.len);
          put.data = NULL; /* moved to the handler */
          uint32_t stream = put.stream;
          put_reset(&put);
          if (code != 0) {
            st = send_error(c, stream, code, "", err);
          } else {
            HurrayNetMessage ack;
            memset(&ack, 0, sizeof ack);
            ack.type = HURRAY_NET_TENSOR_PUT_ACK;
            ack.stream_id = stream;
            st = send_msg(c, &ack, err);
          }
        }
        break;
      case HURRAY_NET_ERROR:
        if (m.stream_id == put.stream) put_reset(&put);
        break;
      default:
        break;
    }
    if (st != HURRAY_OK) break;
  }
  put_reset(&put);
  return st;
}

#else /* _WIN32 */

static HurrayStatus unsupported(HurrayError *err) {
  return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                      "the network transport is not implemented on Windows yet");
}

HurrayStatus hurray_net_connection_new(int fd, HurrayNetRole role,
                                       const HurrayNetConnectionOptions *opts,
                                       HurrayNetConnection **out, HurrayError *err) {
  (void)fd;
  (void)role;
  (void)opts;
  if (out != NULL) *out = NULL;
  return unsupported(err);
}
void hurray_net_connection_destroy(HurrayNetConnection **c) {
  if (c != NULL) *c = NULL;
}
const HurrayNetSession *hurray_net_connection_session(const HurrayNetConnection *c) {
  (void)c;
  return NULL;
}
HurrayStatus hurray_net_client_hello(HurrayNetConnection *c, const HurrayNetHello *hello,
                                     HurrayError *err) {
  (void)c;
  (void)hello;
  return unsupported(err);
}
HurrayStatus hurray_net_client_get(HurrayNetConnection *c, const char *key,
                                   uint8_t preferred_device, HurrayDescriptor **out_descriptor,
                                   void **out_data, uint64_t *out_len, HurrayError *err) {
  (void)c;
  (void)key;
  (void)preferred_device;
  (void)out_descriptor;
  (void)out_data;
  (void)out_len;
  return unsupported(err);
}
HurrayStatus hurray_net_client_put(HurrayNetConnection *c, const char *key,
                                   const uint8_t *descriptor, uint32_t descriptor_len,
                                   const void *data, uint64_t data_len, HurrayError *err) {
  (void)c;
  (void)key;
  (void)descriptor;
  (void)descriptor_len;
  (void)data;
  (void)data_len;
  return unsupported(err);
}
HurrayStatus hurray_net_server_serve(HurrayNetConnection *c, const HurrayNetHello *hello,
                                     const HurrayNetServerHandlers *handlers, HurrayError *err) {
  (void)c;
  (void)hello;
  (void)handlers;
  return unsupported(err);
}
HurrayStatus hurray_net_client_ping(HurrayNetConnection *c, HurrayError *err) {
  (void)c;
  return unsupported(err);
}
HurrayStatus hurray_net_client_get_next(HurrayNetConnection *c, HurrayDescriptor **out_descriptor,
                                        void **out_data, uint64_t *out_len, HurrayError *err) {
  (void)c;
  (void)out_descriptor;
  (void)out_data;
  (void)out_len;
  return unsupported(err);
}
bool hurray_net_client_response_open(const HurrayNetConnection *c) {
  (void)c;
  return false;
}
void hurray_net_server_set_shard(HurrayNetConnection *c, uint32_t shard_index,
                                 uint32_t total_shards) {
  (void)c;
  (void)shard_index;
  (void)total_shards;
}
void hurray__net_on_response_end(HurrayNetConnection *c, void (*fn)(void *ctx), void *ctx) {
  (void)c;
  (void)fn;
  (void)ctx;
}
bool hurray_net_server_request(const HurrayNetConnection *c, HurrayNetRequest *out) {
  (void)c;
  if (out != NULL) memset(out, 0, sizeof *out);
  return false;
}
HurrayStatus hurray_net_client_get_ex(HurrayNetConnection *c, const char *key,
                                      const HurrayNetRequestOptions *req,
                                      HurrayDescriptor **out_descriptor, void **out_data,
                                      uint64_t *out_len, HurrayError *err) {
  (void)c;
  (void)key;
  (void)req;
  (void)out_descriptor;
  (void)out_data;
  (void)out_len;
  return unsupported(err);
}
HurrayStatus hurray_net_client_get_into_ex(HurrayNetConnection *c, const char *key,
                                           const HurrayNetRequestOptions *req, void *dst,
                                           uint64_t cap, HurrayDescriptor **out_descriptor,
                                           uint64_t *out_len, HurrayError *err) {
  (void)c;
  (void)key;
  (void)req;
  (void)dst;
  (void)cap;
  (void)out_descriptor;
  (void)out_len;
  return unsupported(err);
}
HurrayStatus hurray_net_client_get_into(HurrayNetConnection *c, const char *key,
                                        uint8_t preferred_device, void *dst, uint64_t cap,
                                        HurrayDescriptor **out_descriptor, uint64_t *out_len,
                                        HurrayError *err) {
  (void)c;
  (void)key;
  (void)preferred_device;
  (void)dst;
  (void)cap;
  (void)out_descriptor;
  (void)out_len;
  return unsupported(err);
}

#endif
