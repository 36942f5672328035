/*
 * The session state machine of the network transport (include/hurray/net.h):
 * which message may come when, per connection and per stream. One function,
 * step(), holds every rule; it is told which side sent the message, so the
 * same rules check what this side sends and what the peer sends.
 *
 * Connection: the client's CLIENT_HELLO first, the server's SERVER_HELLO (or
 * ERROR, closing the connection) next; the client waits for SERVER_HELLO
 * before anything else. Then, per stream:
 *
 *   request: TENSOR_REQUEST (client) -> for each tensor of the response (one,
 *            or a composite head and its members in pre-order):
 *            TENSOR_DESCRIPTOR, TENSOR_DATA (ascending, no gap, no overlap,
 *            covering total_data_bytes; none when it is 0), TENSOR_DATA_END
 *   put:     TENSOR_PUT, TENSOR_DATA..., TENSOR_DATA_END (client) ->
 *            TENSOR_PUT_ACK (server)
 *   ERROR from either side ends the stream at any point. A side that sends
 *   ERROR while the peer is sending keeps the stream "draining": the peer's
 *   frames already in flight are discarded, not refused.
 *
 * PING and PONG may travel on any stream once the HELLOs are done and
 * change nothing. Private types (0xF0-0xFE) pass only when the options say
 * they were agreed; RDMA_REGISTER and RDMA_READY are refused (this library
 * does not implement the RDMA data plane and never advertises it).
 */
#include "hurray/net.h"

#include <stdarg.h>
#include <stdio.h>

#include "hurray/composite.h"
#include "hurray/descriptor.h"
#include "hurray/device.h"
#include "hurray/layout.h"
#include "internal/common.h"

typedef enum StreamState {
  ST_FREE = 0,
  ST_AWAIT_DESCRIPTOR, /* request: the next tensor's descriptor (or ERROR) */
  ST_TRANSFER,         /* data frames of the current tensor, then DATA_END */
  ST_PUT_ACK,          /* put: the server's PUT_ACK (or ERROR) */
  ST_DRAINING          /* this side sent ERROR while the peer was sending */
} StreamState;

typedef struct Stream {
  uint32_t id;
  uint8_t state;
  bool put;
  uint8_t preferred_device;
  uint32_t flags; /* request flags */
  uint64_t total; /* total_data_bytes of the current tensor */
  uint64_t next;  /* bytes received of it */
  bool head_open; /* the current tensor is a composite head */
  uint32_t depth; /* open composite levels */
  HurrayCompositeValidator *levels[HURRAY_MAX_COMPOSITE_DEPTH];
  uint64_t used; /* clock of the last message, to recycle draining slots */
} Stream;

/* A set of byte values. */
typedef struct TagSet {
  uint64_t bits[4];
} TagSet;

static void set_add(TagSet *t, uint8_t v) { t->bits[v >> 6] |= (uint64_t)1 << (v & 63); }
static bool set_has(const TagSet *t, uint8_t v) {
  return (t->bits[v >> 6] >> (v & 63)) & 1;
}

/* What a HELLO advertised. */
typedef struct Advert {
  bool known;
  uint32_t version;
  uint32_t max_message_size;
  uint64_t caps;
  TagSet devices;
  TagSet classes; /* STANDARD only when the list was empty */
} Advert;

struct HurrayNetSession {
  HurrayNetRole role;
  HurrayNetSessionState state;
  HurrayNetSessionOptions opts;
  uint32_t version;
  Advert client; /* the CLIENT_HELLO */
  Advert server; /* the SERVER_HELLO */
  uint64_t clock;
  uint32_t nstreams;
  Stream streams[];
};

/* ---- lifetime ----------------------------------------------------------------- */

HurrayStatus hurray_net_session_new(HurrayNetRole role, const HurrayNetSessionOptions *opts,
                                    HurrayNetSession **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "out is required");
  *out = NULL;
  HurrayNetSessionOptions o = {0, 0, 0, false};
  if (opts != NULL) o = *opts;
  if (role != HURRAY_NET_ROLE_CLIENT && role != HURRAY_NET_ROLE_SERVER)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "role",
                        "%d is neither client nor server", (int)role);
  if (o.max_message_size == 0) o.max_message_size = HURRAY_NET_DEFAULT_MAX_MESSAGE_SIZE;
  if (o.max_message_size < HURRAY_NET_MIN_MESSAGE_SIZE)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "max_message_size",
                        "%u is below %u", o.max_message_size, HURRAY_NET_MIN_MESSAGE_SIZE);
  if (o.max_streams == 0) o.max_streams = HURRAY_NET_DEFAULT_MAX_STREAMS;
  if (o.max_streams > HURRAY_NET_MAX_STREAMS_LIMIT)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "max_streams",
                        "%u is above %u", o.max_streams, HURRAY_NET_MAX_STREAMS_LIMIT);
  if (o.decode_options & ~(uint32_t)HURRAY_DECODE_PERMISSIVE)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "decode_options",
                        "unknown option bits 0x%X", o.decode_options);
  HurrayNetSession *s =
      hurray__calloc(1, sizeof *s + (size_t)o.max_streams * sizeof(Stream));
  if (s == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate a session of %u streams", o.max_streams);
  s->role = role;
  s->state = HURRAY_NET_STATE_START;
  s->opts = o;
  s->nstreams = o.max_streams;
  *out = s;
  return HURRAY_OK;
}

static void stream_reset(Stream *st) {
  for (uint32_t i = 0; i < st->depth; i++) hurray_composite_validator_destroy(&st->levels[i]);
  memset(st, 0, sizeof *st);
}

void hurray_net_session_destroy(HurrayNetSession **s) {
  if (s == NULL || *s == NULL) return;
  for (uint32_t i = 0; i < (*s)->nstreams; i++) stream_reset(&(*s)->streams[i]);
  hurray__free(*s);
  *s = NULL;
}

HurrayNetSessionState hurray_net_session_state(const HurrayNetSession *s) {
  return s == NULL ? HURRAY_NET_STATE_CLOSED : s->state;
}
uint32_t hurray_net_session_max_message_size(const HurrayNetSession *s) {
  return s == NULL ? 0 : s->opts.max_message_size;
}
uint32_t hurray_net_session_peer_max_message_size(const HurrayNetSession *s) {
  if (s == NULL) return 0;
  const Advert *peer = s->role == HURRAY_NET_ROLE_CLIENT ? &s->server : &s->client;
  return peer->known ? peer->max_message_size : 0;
}
uint32_t hurray_net_session_version(const HurrayNetSession *s) {
  return s == NULL || s->state != HURRAY_NET_STATE_READY ? 0 : s->version;
}

/* ---- helpers ---------------------------------------------------------------------- */

static Stream *find(HurrayNetSession *s, uint32_t id) {
  for (uint32_t i = 0; i < s->nstreams; i++)
    if (s->streams[i].state != ST_FREE && s->streams[i].id == id) return &s->streams[i];
  return NULL;
}

uint64_t hurray_net_session_peer_capabilities(const HurrayNetSession *s) {
  if (s == NULL) return 0;
  const Advert *peer = s->role == HURRAY_NET_ROLE_CLIENT ? &s->server : &s->client;
  return peer->known ? peer->caps : 0;
}

bool hurray_net_session_stream_open(const HurrayNetSession *s, uint32_t stream_id) {
  if (s == NULL || s->state == HURRAY_NET_STATE_CLOSED) return false;
  for (uint32_t i = 0; i < s->nstreams; i++) {
    const Stream *st = &s->streams[i];
    if (st->state != ST_FREE && st->state != ST_DRAINING && st->id == stream_id) return true;
  }
  return false;
}

/* A free slot, or the least recently used draining one; NULL when every
 * slot holds an open stream. */
static Stream *slot(HurrayNetSession *s) {
  Stream *old = NULL;
  for (uint32_t i = 0; i < s->nstreams; i++) {
    Stream *st = &s->streams[i];
    if (st->state == ST_FREE) return st;
    if (st->state == ST_DRAINING && (old == NULL || st->used < old->used)) old = st;
  }
  if (old != NULL) stream_reset(old);
  return old;
}

static void advert_from(Advert *a, const HurrayNetHello *h) {
  memset(a, 0, sizeof *a);
  a->known = true;
  a->version = h->protocol_version;
  a->max_message_size = h->max_message_size;
  a->caps = h->capabilities;
  for (uint32_t i = 0; i < h->device_count; i++) set_add(&a->devices, h->devices[i]);
  for (uint32_t i = 0; i < h->memory_class_count; i++) set_add(&a->classes, h->memory_classes[i]);
  if (h->memory_class_count == 0) set_add(&a->classes, HURRAY_MEMORY_STANDARD);
}

/* A refusal: fills the verdict and the detail, returns `status`. */
typedef struct Ctx {
  HurrayNetSession *s;
  const HurrayNetMessage *m;
  bool outgoing;
  bool from_client;
  HurrayNetVerdict *v;
  HurrayError *err;
} Ctx;

static HurrayStatus refuse(Ctx *c, HurrayStatus status, uint32_t code, uint64_t offset,
                           const char *field, const char *fmt, ...) HURRAY_PRINTF(6, 7);

static HurrayStatus refuse(Ctx *c, HurrayStatus status, uint32_t code, uint64_t offset,
                           const char *field, const char *fmt, ...) {
  char reason[192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  c->v->action = HURRAY_NET_REFUSE;
  c->v->error_code = code;
  c->v->close_connection = c->s->state != HURRAY_NET_STATE_READY;
  const char *type = hurray_net_message_type_name(c->m->type);
  return hurray__fail(c->err, status, offset, field, "%s %s on stream %u: %s",
                      c->outgoing ? "sending" : "received", type != NULL ? type : "a message",
                      c->m->stream_id, reason);
}

static const char *side(bool client) { return client ? "client" : "server"; }

/* ---- descriptors -------------------------------------------------------------------- */

/*
 * The rules a descriptor crossing machines obeys, for a request's response
 * (st->put false) or a put (st->put true); `base` is the wire offset of the
 * descriptor's first byte. On success *out is the decoded descriptor (owned).
 */
static HurrayStatus check_descriptor(Ctx *c, Stream *st, const uint8_t *bytes, uint32_t len,
                                     uint64_t base, uint64_t total, HurrayDescriptor **out) {
  HurrayNetSession *s = c->s;
  *out = NULL;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  HurrayStatus rc = hurray_descriptor_decode_ex(bytes, len, s->opts.decode_options, &d, &e);
  if (rc != HURRAY_OK)
    return refuse(c, rc, HURRAY_NET_E_INVALID_MESSAGE,
                  e.offset == HURRAY_NO_OFFSET ? base : base + e.offset, e.field, "%s",
                  e.reason);
  HurrayDescriptorFields f;
  rc = hurray_descriptor_fields(d, &f);
  if (rc != HURRAY_OK) {
    hurray__descriptor_drop(d);
    return refuse(c, rc, HURRAY_NET_E_INVALID_MESSAGE, base, "descriptor", "unreadable");
  }
  uint64_t sum = 0;
  const Advert *receiver = st->put ? &s->server : &s->client;
  for (uint32_t i = 0; i < f.buffer_count; i++) {
    const HurrayBufferHandle *b = &f.buffers[i];
    char path[48];
    hurray__path(path, sizeof path, "buffers[%u]", i);
    if (b->sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      rc = refuse(c, HURRAY_ERR_CROSS_MACHINE, HURRAY_NET_E_INVALID_MESSAGE, base, path,
                  "sync mode %u on a cross-machine transport (producer_synced only)",
                  b->sync_mode);
      goto fail;
    }
    if (b->device_tag != f.buffers[0].device_tag) {
      rc = refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, base, path,
                  "device 0x%02X differs from buffer 0's 0x%02X (buffers share one device)",
                  b->device_tag, f.buffers[0].device_tag);
      goto fail;
    }
    if (!set_has(&receiver->classes, b->memory_class)) {
      rc = refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, base, path,
                  "memory class 0x%02X is not among the %s's", b->memory_class,
                  side(!st->put));
      goto fail;
    }
    sum += b->byte_size; /* each below 2^63 (decode), at most 255 of them */
  }
  if (sum != total) {
    rc = refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, base, "total_data_bytes",
                "%llu, but the buffers hold %llu bytes", (unsigned long long)total,
                (unsigned long long)sum);
    goto fail;
  }
  if (f.buffer_count > 0) {
    uint8_t dev = f.buffers[0].device_tag;
    if (st->put) {
      if (!set_has(&s->server.devices, dev)) {
        rc = refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, base,
                    "buffers[0].device_tag", "device 0x%02X is not among the server's", dev);
        goto fail;
      }
    } else if (dev != st->preferred_device) {
      /* The one silent fallback: to CPU, from a device the server
       * advertised, for a client that advertised CPU. */
      bool fallback = dev == HURRAY_DEVICE_CPU &&
                      set_has(&s->server.devices, st->preferred_device) &&
                      set_has(&s->client.devices, HURRAY_DEVICE_CPU);
      if (!fallback) {
        rc = refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_DEVICE_UNAVAILABLE, base,
                    "buffers[0].device_tag",
                    "device 0x%02X instead of the preferred 0x%02X (only a fallback to CPU "
                    "from an advertised device, for a client advertising CPU, is allowed)",
                    dev, st->preferred_device);
        goto fail;
      }
    }
  }
  *out = d;
  return HURRAY_OK;
fail:
  hurray__descriptor_drop(d);
  return rc;
}

/* Opens or continues the composite levels for a request's next tensor `f`. */
static HurrayStatus composite_enter(Ctx *c, Stream *st, const HurrayDescriptorFields *f,
                                    uint64_t base) {
  HurrayError e;
  if (st->depth > 0) {
    HurrayStatus rc = hurray_composite_validator_push(st->levels[st->depth - 1], f, &e);
    if (rc != HURRAY_OK)
      return refuse(c, rc, HURRAY_NET_E_INVALID_MESSAGE, base, e.field, "%s", e.reason);
  }
  st->head_open = f->layout.tag == HURRAY_LAYOUT_COMPOSITE;
  if (st->head_open) {
    HurrayCompositeValidator *v = NULL;
    HurrayStatus rc =
        hurray_composite_validator_new(f, st->depth, c->s->opts.decode_options, &v, &e);
    if (rc != HURRAY_OK)
      return refuse(c, rc, HURRAY_NET_E_INVALID_MESSAGE, base, e.field, "%s", e.reason);
    st->levels[st->depth++] = v;
  }
  return HURRAY_OK;
}

/* After a request's tensor ended: closes the levels it completes. True when
 * the whole response is complete. */
static HurrayStatus composite_leave(Ctx *c, Stream *st, bool *done) {
  st->head_open = false;
  while (st->depth > 0) {
    HurrayCompositeValidator *top = st->levels[st->depth - 1];
    if (hurray_composite_validator_remaining(top) > 0) {
      *done = false;
      return HURRAY_OK;
    }
    HurrayError e;
    HurrayStatus rc = hurray_composite_validator_finish(top, &e);
    if (rc != HURRAY_OK)
      return refuse(c, rc, HURRAY_NET_E_INVALID_MESSAGE, HURRAY_NO_OFFSET, e.field, "%s",
                    e.reason);
    hurray_composite_validator_destroy(&st->levels[--st->depth]);
  }
  *done = true;
  return HURRAY_OK;
}

/* ---- the rules ------------------------------------------------------------------------ */

static HurrayStatus hello(Ctx *c) {
  HurrayNetSession *s = c->s;
  const HurrayNetHello *h = &c->m->u.hello;
  bool client_hello = c->m->type == HURRAY_NET_CLIENT_HELLO;
  if (client_hello != c->from_client)
    return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                  "only the %s sends it", side(client_hello));
  HurrayNetSessionState want = client_hello
                                   ? HURRAY_NET_STATE_START
                                   : (s->role == HURRAY_NET_ROLE_CLIENT
                                          ? HURRAY_NET_STATE_HELLO_SENT
                                          : HURRAY_NET_STATE_HELLO_RECEIVED);
  if (s->state != want)
    return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                  "the HELLOs were already exchanged");
  if (c->outgoing) {
    if (h->max_message_size != s->opts.max_message_size)
      return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 16, "max_message_size",
                    "%u differs from the session's maximum %u", h->max_message_size,
                    s->opts.max_message_size);
    if (h->capabilities & (HURRAY_NET_CAP_RDMA_DATA_PLANE | HURRAY_NET_CAP_RDMA_GPUDIRECT))
      return refuse(c, HURRAY_ERR_UNSUPPORTED, HURRAY_NET_E_INVALID_MESSAGE, 20,
                    "capability_flags", "this library does not implement the RDMA data plane");
  }
  if (client_hello) {
    if (h->protocol_version < 1)
      return refuse(c, HURRAY_ERR_VERSION_MISMATCH, HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH, 12,
                    "protocol_version", "version 0 does not exist");
    if (c->outgoing && h->protocol_version != HURRAY_NET_PROTOCOL_VERSION)
      return refuse(c, HURRAY_ERR_VERSION_MISMATCH, HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH, 12,
                    "protocol_version", "this library speaks version %u",
                    HURRAY_NET_PROTOCOL_VERSION);
    advert_from(&s->client, h);
    s->state = s->role == HURRAY_NET_ROLE_CLIENT ? HURRAY_NET_STATE_HELLO_SENT
                                                 : HURRAY_NET_STATE_HELLO_RECEIVED;
    return HURRAY_OK;
  }
  /* SERVER_HELLO: at most the client's version, and one this library speaks. */
  uint32_t top = s->client.version < HURRAY_NET_PROTOCOL_VERSION ? s->client.version
                                                                  : HURRAY_NET_PROTOCOL_VERSION;
  if (h->protocol_version > s->client.version)
    return refuse(c, HURRAY_ERR_VERSION_MISMATCH, HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH, 12,
                  "protocol_version", "%u is above the client's %u", h->protocol_version,
                  s->client.version);
  if (h->protocol_version != top)
    return refuse(c, HURRAY_ERR_VERSION_MISMATCH, HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH, 12,
                  "protocol_version", "this library speaks version %u only",
                  HURRAY_NET_PROTOCOL_VERSION);
  advert_from(&s->server, h);
  s->version = h->protocol_version;
  s->state = HURRAY_NET_STATE_READY;
  return HURRAY_OK;
}

/* The side that sends data on a stream: the server for a request, the
 * client for a put. */
static bool data_from_client(const Stream *st) { return st->put; }

/* Whether the stream's next message comes from the client. */
static bool next_from_client(const Stream *st) {
  return st->state == ST_TRANSFER && data_from_client(st);
}

static HurrayStatus tensor_message(Ctx *c, Stream *st) {
  const HurrayNetMessage *m = c->m;
  HurrayNetSession *s = c->s;
  switch (m->type) {
    case HURRAY_NET_TENSOR_DESCRIPTOR: {
      const HurrayNetTensorDescriptor *t = &m->u.descriptor;
      if (c->from_client || st->put || st->state != ST_AWAIT_DESCRIPTOR)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                      "no descriptor is expected on this stream now");
      if (t->total_shards != 1) {
        if (!(st->flags & HURRAY_NET_REQ_PARALLEL_OK) ||
            !(s->server.caps & HURRAY_NET_CAP_PARALLEL_STREAMS))
          return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_SHARD_MISMATCH, HURRAY_NO_OFFSET,
                        "total_shards",
                        "%u shards, but the request did not allow parallel shards or the "
                        "server did not advertise PARALLEL_STREAMS",
                        t->total_shards);
      }
      HurrayDescriptor *d = NULL;
      HURRAY_TRY(check_descriptor(c, st, t->descriptor, t->descriptor_len,
                                  HURRAY_NET_HEADER_LEN, t->total_data_bytes, &d));
      HurrayDescriptorFields f;
      HurrayStatus rc = hurray_descriptor_fields(d, &f);
      if (rc == HURRAY_OK && t->total_shards != 1 && f.shard == NULL)
        rc = refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_SHARD_MISMATCH, HURRAY_NET_HEADER_LEN,
                    "descriptor.shard", "a parallel shard without a shard section");
      if (rc == HURRAY_OK) rc = composite_enter(c, st, &f, HURRAY_NET_HEADER_LEN);
      hurray__descriptor_drop(d);
      HURRAY_TRY(rc);
      st->state = ST_TRANSFER;
      st->total = t->total_data_bytes;
      st->next = 0;
      return HURRAY_OK;
    }
    case HURRAY_NET_TENSOR_DATA: {
      const HurrayNetData *dt = &m->u.data;
      if (c->from_client != data_from_client(st) || st->state != ST_TRANSFER)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                      "no data frame is expected on this stream now");
      if (dt->offset != st->next)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 12,
                      "byte_offset_in_buffer",
                      "%llu, but the frames so far end at %llu (ascending, no gap, no overlap)",
                      (unsigned long long)dt->offset, (unsigned long long)st->next);
      if (dt->len > st->total - st->next)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 20, "data",
                      "%u bytes at %llu run past total_data_bytes %llu", dt->len,
                      (unsigned long long)dt->offset, (unsigned long long)st->total);
      st->next += dt->len;
      return HURRAY_OK;
    }
    case HURRAY_NET_TENSOR_DATA_END: {
      if (c->from_client != data_from_client(st) || st->state != ST_TRANSFER)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                      "no TENSOR_DATA_END is expected on this stream now");
      if (st->next != st->total)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                      "%llu of total_data_bytes %llu sent", (unsigned long long)st->next,
                      (unsigned long long)st->total);
      if (st->put) {
        st->state = ST_PUT_ACK;
        return HURRAY_OK;
      }
      bool done = false;
      HURRAY_TRY(composite_leave(c, st, &done));
      if (done) {
        stream_reset(st);
        c->v->stream_done = true;
      } else {
        st->state = ST_AWAIT_DESCRIPTOR;
      }
      return HURRAY_OK;
    }
    case HURRAY_NET_TENSOR_PUT_ACK:
      if (c->from_client || !st->put || st->state != ST_PUT_ACK)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                      "no TENSOR_PUT_ACK is expected on this stream now");
      stream_reset(st);
      c->v->stream_done = true;
      return HURRAY_OK;
    default:
      return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                    "not valid on this stream now");
  }
}

static HurrayStatus open_stream(Ctx *c, Stream **out) {
  HurrayNetSession *s = c->s;
  const HurrayNetMessage *m = c->m;
  if (!c->from_client)
    return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                  "only the client opens a stream");
  Stream *st = find(s, m->stream_id);
  if (st != NULL && st->state == ST_DRAINING) {
    /* The peer opens the id again: it has seen our ERROR. Our own side
     * does not reuse an id it is draining. */
    if (c->outgoing)
      return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 4, "stream_id",
                    "the stream is still draining after an ERROR; use another id");
    stream_reset(st);
    st = NULL;
  }
  if (st != NULL)
    return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 4, "stream_id",
                  "the stream is already open");
  st = slot(s);
  if (st == NULL)
    return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 4, "stream_id",
                  "%u streams are open already (the session's maximum)", s->nstreams);
  *out = st;
  return HURRAY_OK;
}

static HurrayStatus ready(Ctx *c) {
  HurrayNetSession *s = c->s;
  const HurrayNetMessage *m = c->m;
  Stream *st = find(s, m->stream_id);
  switch (m->type) {
    case HURRAY_NET_PING:
    case HURRAY_NET_PONG:
      return HURRAY_OK;
    case HURRAY_NET_ERROR:
      if (st == NULL) {
        /* Nothing open: an answer to our own ERROR crossing it, or an
         * ERROR about a message this side never tracked. */
        if (!c->outgoing) c->v->action = HURRAY_NET_DISCARD;
        return HURRAY_OK;
      }
      if (c->outgoing && st->state != ST_DRAINING && next_from_client(st) != c->from_client) {
        /* The peer may have frames in flight: drain them. */
        for (uint32_t i = 0; i < st->depth; i++)
          hurray_composite_validator_destroy(&st->levels[i]);
        st->depth = 0;
        st->state = ST_DRAINING;
        return HURRAY_OK;
      }
      stream_reset(st);
      c->v->stream_done = true;
      return HURRAY_OK;
    case HURRAY_NET_TENSOR_REQUEST:
    case HURRAY_NET_TENSOR_PUT: {
      HURRAY_TRY(open_stream(c, &st));
      if (m->type == HURRAY_NET_TENSOR_PUT) {
        Stream probe;
        memset(&probe, 0, sizeof probe);
        probe.put = true;
        HurrayDescriptor *d = NULL;
        uint64_t base = HURRAY_NET_HEADER_LEN + 8u + (uint64_t)m->u.put.key_len;
        HURRAY_TRY(check_descriptor(c, &probe, m->u.put.descriptor, m->u.put.descriptor_len,
                                    base, m->u.put.total_data_bytes, &d));
        uint8_t tag = 0;
        HurrayStatus rc = hurray_descriptor_layout_tag(d, &tag);
        hurray__descriptor_drop(d);
        if (rc == HURRAY_OK && tag == HURRAY_LAYOUT_COMPOSITE)
          return refuse(c, HURRAY_ERR_UNSUPPORTED, HURRAY_NET_E_INVALID_MESSAGE, base,
                        "descriptor.layout", "a composite cannot be pushed with TENSOR_PUT");
        memset(st, 0, sizeof *st);
        st->id = m->stream_id;
        st->put = true;
        st->state = ST_TRANSFER;
        st->total = m->u.put.total_data_bytes;
      } else {
        memset(st, 0, sizeof *st);
        st->id = m->stream_id;
        st->state = ST_AWAIT_DESCRIPTOR;
        st->preferred_device = m->u.request.preferred_device;
        st->flags = m->u.request.flags;
      }
      st->used = ++s->clock;
      return HURRAY_OK;
    }
    case HURRAY_NET_TENSOR_DESCRIPTOR:
    case HURRAY_NET_TENSOR_DATA:
    case HURRAY_NET_TENSOR_DATA_END:
    case HURRAY_NET_TENSOR_PUT_ACK:
      if (st != NULL && st->state == ST_DRAINING && !c->outgoing) {
        c->v->action = HURRAY_NET_DISCARD;
        return HURRAY_OK;
      }
      if (st == NULL || st->state == ST_DRAINING)
        return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 4, "stream_id",
                      "no such open stream");
      st->used = ++s->clock;
      return tensor_message(c, st);
    case HURRAY_NET_CLIENT_HELLO:
    case HURRAY_NET_SERVER_HELLO:
      return hello(c);
    case HURRAY_NET_RDMA_REGISTER:
    case HURRAY_NET_RDMA_READY:
      return refuse(c, HURRAY_ERR_UNSUPPORTED, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                    "the RDMA data plane was not negotiated (this library never advertises it)");
    default:
      if (m->type >= HURRAY_NET_PRIVATE_FIRST && m->type <= HURRAY_NET_PRIVATE_LAST &&
          s->opts.allow_private_messages)
        return HURRAY_OK;
      return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                    m->type >= HURRAY_NET_PRIVATE_FIRST && m->type <= HURRAY_NET_PRIVATE_LAST
                        ? "private type 0x%02X was not agreed"
                        : "unknown message type 0x%08X",
                    m->type);
  }
}

static HurrayStatus step(Ctx *c) {
  HurrayNetSession *s = c->s;
  const HurrayNetMessage *m = c->m;
  if (m->stream_id == 0)
    return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 4, "stream_id",
                  "stream id 0 is reserved");
  switch (s->state) {
    case HURRAY_NET_STATE_READY:
      return ready(c);
    case HURRAY_NET_STATE_CLOSED:
      return hurray__fail(c->err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                          "the connection is closed");
    default:
      break;
  }
  /* Before both HELLOs: the HELLOs, or an ERROR that ends the connection. */
  if (m->type == HURRAY_NET_ERROR) {
    /* The server may refuse anything; the client speaks after its HELLO. */
    if (c->from_client && s->state == HURRAY_NET_STATE_START)
      return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                    "an ERROR before the CLIENT_HELLO");
    s->state = HURRAY_NET_STATE_CLOSED;
    c->v->close_connection = true;
    c->v->stream_done = true;
    return HURRAY_OK;
  }
  if (m->type == HURRAY_NET_CLIENT_HELLO || m->type == HURRAY_NET_SERVER_HELLO) return hello(c);
  return refuse(c, HURRAY_ERR_PROTOCOL, HURRAY_NET_E_INVALID_MESSAGE, 0, "message_type",
                "the %s must come first",
                s->state == HURRAY_NET_STATE_START ? "CLIENT_HELLO" : "SERVER_HELLO");
}

static void verdict_init(HurrayNetVerdict *v, uint32_t stream_id) {
  memset(v, 0, sizeof *v);
  v->action = HURRAY_NET_ACCEPT;
  v->stream_id = stream_id;
}

/* The largest payload the receiver of `m` accepts. */
static uint32_t receiver_max(const HurrayNetSession *s, bool outgoing) {
  if (!outgoing) return s->opts.max_message_size;
  uint32_t peer = hurray_net_session_peer_max_message_size(s);
  /* Before the peer's HELLO, only a HELLO or ERROR goes out: the spec's
   * smallest size bounds them. */
  return peer != 0 ? peer : HURRAY_NET_MIN_MESSAGE_SIZE;
}

HurrayStatus hurray_net_session_send(HurrayNetSession *s, const HurrayNetMessage *m,
                                     HurrayError *err) {
  if (s == NULL || m == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "s and m are required");
  HurrayNetVerdict v;
  verdict_init(&v, m->stream_id);
  Ctx c = {s, m, true, s->role == HURRAY_NET_ROLE_CLIENT, &v, err};
  uint64_t n = 0;
  HURRAY_TRY(hurray_net_message_encoded_len(m, &n, err));
  uint64_t max = receiver_max(s, true);
  if (n - HURRAY_NET_HEADER_LEN > max)
    return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, 8, "payload_length",
                        "%llu bytes exceed the peer's maximum message size %llu",
                        (unsigned long long)(n - HURRAY_NET_HEADER_LEN),
                        (unsigned long long)max);
  HurrayStatus rc = step(&c);
  if (rc == HURRAY_OK && m->type == HURRAY_NET_ERROR && v.close_connection)
    s->state = HURRAY_NET_STATE_CLOSED;
  return rc;
}

HurrayStatus hurray_net_session_receive(HurrayNetSession *s, const HurrayNetMessage *m,
                                        HurrayNetVerdict *verdict, HurrayError *err) {
  if (s == NULL || m == NULL || verdict == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "s, m and verdict are required");
  verdict_init(verdict, m->stream_id);
  Ctx c = {s, m, false, s->role == HURRAY_NET_ROLE_SERVER, verdict, err};
  return step(&c);
}

HurrayStatus hurray_net_session_receive_header(HurrayNetSession *s, const uint8_t *bytes,
                                               size_t len, HurrayNetHeader *out,
                                               HurrayNetVerdict *verdict, HurrayError *err) {
  if (s == NULL || verdict == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "s and verdict are required");
  verdict_init(verdict, 0);
  if (s->state == HURRAY_NET_STATE_CLOSED)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "the connection is closed");
  HurrayStatus rc = hurray_net_header_decode(bytes, len, s->opts.max_message_size, out, err);
  if (rc == HURRAY_OK) {
    verdict->stream_id = out->stream_id;
    return HURRAY_OK;
  }
  if (rc == HURRAY_ERR_NULL_POINTER) return rc;
  verdict->action = HURRAY_NET_REFUSE;
  verdict->close_connection = s->state != HURRAY_NET_STATE_READY;
  if (len >= HURRAY_NET_HEADER_LEN) verdict->stream_id = hurray__ld32(bytes + 4);
  if (rc == HURRAY_ERR_STREAM_LIMIT) {
    verdict->error_code = HURRAY_NET_E_MESSAGE_TOO_LARGE;
    verdict->skip_payload = true;
  } else {
    verdict->error_code = HURRAY_NET_E_INVALID_MESSAGE;
    /* stream id 0: nothing to answer on; the framing is intact */
    verdict->skip_payload = len >= HURRAY_NET_HEADER_LEN;
    if (verdict->stream_id == 0) verdict->close_connection = true;
  }
  return rc;
}

HurrayStatus hurray_net_session_receive_payload(HurrayNetSession *s, const HurrayNetHeader *h,
                                                const uint8_t *payload, size_t len,
                                                HurrayNetMessage *out, HurrayNetVerdict *verdict,
                                                HurrayError *err) {
  if (s == NULL || h == NULL || verdict == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "s, h and verdict are required");
  verdict_init(verdict, h->stream_id);
  if (s->state == HURRAY_NET_STATE_CLOSED)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "the connection is closed");
  HurrayStatus rc = hurray_net_message_decode(h, payload, len, out, err);
  if (rc == HURRAY_OK) return hurray_net_session_receive(s, out, verdict, err);
  if (rc == HURRAY_ERR_NULL_POINTER) return rc;
  verdict->action = HURRAY_NET_REFUSE;
  verdict->error_code = rc == HURRAY_ERR_VERSION_MISMATCH
                            ? HURRAY_NET_E_PROTOCOL_VERSION_MISMATCH
                            : HURRAY_NET_E_INVALID_MESSAGE;
  verdict->close_connection = s->state != HURRAY_NET_STATE_READY || h->stream_id == 0;
  return rc;
}
