/*
 * The wire codec of the network transport (include/hurray/net.h): the
 * message header and every payload. Decoding reads through a cursor that
 * checks each field against the bytes left; nothing is allocated. Encoding
 * writes the payload, then decodes what it wrote, so the two can never
 * disagree on what is valid.
 */
#include "hurray/net.h"

#include <stdio.h>

#include "hurray/descriptor.h"
#include "hurray/device.h"
#include "hurray/layout.h"
#include "internal/common.h"
#include "internal/file.h"

const char *hurray_net_message_type_name(uint32_t message_type) {
  switch (message_type) {
#define HURRAY_X_NAME_(tag, NAME) \
  case tag:                       \
    return #NAME;
    HURRAY_NET_MESSAGE_TABLE(HURRAY_X_NAME_)
#undef HURRAY_X_NAME_
    default:
      break;
  }
  if (message_type >= HURRAY_NET_PRIVATE_FIRST && message_type <= HURRAY_NET_PRIVATE_LAST)
    return "PRIVATE";
  return NULL;
}

const char *hurray_net_error_code_name(uint32_t error_code) {
  switch (error_code) {
#define HURRAY_X_NAME_(code, NAME) \
  case code:                       \
    return #NAME;
    HURRAY_NET_ERROR_TABLE(HURRAY_X_NAME_)
#undef HURRAY_X_NAME_
    default:
      break;
  }
  if (error_code >= HURRAY_NET_E_PRIVATE_FIRST && error_code <= HURRAY_NET_E_PRIVATE_LAST)
    return "PRIVATE";
  return NULL;
}

/* ---- header ----------------------------------------------------------------- */

HurrayStatus hurray_net_header_decode(const uint8_t *bytes, size_t len, uint32_t max_payload,
                                      HurrayNetHeader *out, HurrayError *err) {
  if (bytes == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "bytes and out are required");
  if (len < HURRAY_NET_HEADER_LEN)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, len, "header",
                        "a message header is 12 bytes, %zu given", len);
  HurrayNetHeader h;
  h.message_type = hurray__ld32(bytes);
  h.stream_id = hurray__ld32(bytes + 4);
  h.payload_length = hurray__ld32(bytes + 8);
  if (h.stream_id == 0)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, 4, "stream_id", "stream id 0 is reserved");
  if (h.payload_length > max_payload)
    return hurray__fail(err, HURRAY_ERR_STREAM_LIMIT, 8, "payload_length",
                        "%u bytes exceed the maximum message size of %u", h.payload_length,
                        max_payload);
  *out = h;
  return HURRAY_OK;
}

HurrayStatus hurray_net_header_encode(const HurrayNetHeader *h, uint8_t *out) {
  if (h == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  hurray__st32(out, h->message_type);
  hurray__st32(out + 4, h->stream_id);
  hurray__st32(out + 8, h->payload_length);
  return HURRAY_OK;
}

/* ---- decoding cursor ------------------------------------------------------- */

typedef struct Cursor {
  const uint8_t *p;
  size_t len;
  size_t pos;
  HurrayError *err;
} Cursor;

/* The wire offset of payload position `pos` (counted from the header). */
static uint64_t wire_off(size_t pos) { return (uint64_t)pos + HURRAY_NET_HEADER_LEN; }

static HurrayStatus need(Cursor *c, size_t n, const char *field) {
  if (c->len - c->pos < n)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(c->pos), field,
                        "%zu byte%s needed, %zu left in the payload", n, HURRAY__S(n),
                        c->len - c->pos);
  return HURRAY_OK;
}

static HurrayStatus rd_u8(Cursor *c, const char *field, uint8_t *v) {
  HURRAY_TRY(need(c, 1, field));
  *v = c->p[c->pos++];
  return HURRAY_OK;
}
static HurrayStatus rd_u16(Cursor *c, const char *field, uint16_t *v) {
  HURRAY_TRY(need(c, 2, field));
  *v = hurray__ld16(c->p + c->pos);
  c->pos += 2;
  return HURRAY_OK;
}
static HurrayStatus rd_u32(Cursor *c, const char *field, uint32_t *v) {
  HURRAY_TRY(need(c, 4, field));
  *v = hurray__ld32(c->p + c->pos);
  c->pos += 4;
  return HURRAY_OK;
}
static HurrayStatus rd_u64(Cursor *c, const char *field, uint64_t *v) {
  HURRAY_TRY(need(c, 8, field));
  *v = hurray__ld64(c->p + c->pos);
  c->pos += 8;
  return HURRAY_OK;
}
static HurrayStatus rd_bytes(Cursor *c, size_t n, const char *field, const uint8_t **v) {
  HURRAY_TRY(need(c, n, field));
  *v = n == 0 ? NULL : c->p + c->pos;
  c->pos += n;
  return HURRAY_OK;
}

/* A u32-length-prefixed UTF-8 string. */
static HurrayStatus rd_utf8(Cursor *c, const char *field, const uint8_t **s, uint32_t *n) {
  char path[64];
  HURRAY_TRY(rd_u32(c, hurray__path(path, sizeof path, "%s.length", field), n));
  size_t at = c->pos;
  HURRAY_TRY(rd_bytes(c, *n, field, s));
  if (!hurray__utf8_valid(*s, *n))
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), field,
                        "not valid UTF-8");
  return HURRAY_OK;
}

static HurrayStatus expect_end(Cursor *c, const char *type) {
  if (c->pos != c->len)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(c->pos), "payload_length",
                        "%zu byte%s after the last field of %s", c->len - c->pos,
                        HURRAY__S(c->len - c->pos), type);
  return HURRAY_OK;
}

/* ---- layout lists ---------------------------------------------------------- */

static bool is_private_tag(uint8_t t) { return t >= 0xF0 && t <= 0xFE; }

/* Parses `count` entries at the cursor; fills *list. Tags 0x00 and 0xFF are
 * invalid layout tags; reserved tags are kept (a newer peer's layouts). */
static HurrayStatus rd_layout_list(Cursor *c, const char *field, HurrayNetLayoutList *list) {
  char path[80];
  uint16_t count;
  HURRAY_TRY(rd_u16(c, hurray__path(path, sizeof path, "%s.count", field), &count));
  size_t start = c->pos;
  for (uint32_t i = 0; i < count; i++) {
    uint8_t tag;
    size_t at = c->pos;
    HURRAY_TRY(rd_u8(c, hurray__path(path, sizeof path, "%s[%u].layout_tag", field, i), &tag));
    if (hurray_layout_tag_kind(tag) == HURRAY_TAG_INVALID)
      return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), path,
                          "layout tag 0x%02X is invalid", tag);
    if (is_private_tag(tag)) {
      uint16_t n;
      const uint8_t *ext;
      HURRAY_TRY(rd_u16(
          c, hurray__path(path, sizeof path, "%s[%u].ext_metadata_length", field, i), &n));
      HURRAY_TRY(
          rd_bytes(c, n, hurray__path(path, sizeof path, "%s[%u].ext_metadata", field, i), &ext));
    }
  }
  list->count = count;
  list->len = (uint32_t)(c->pos - start);
  list->bytes = list->len == 0 ? NULL : c->p + start;
  return HURRAY_OK;
}

bool hurray_net_layout_list_next(const HurrayNetLayoutList *list, uint32_t *cursor,
                                 HurrayNetLayoutEntry *out) {
  if (list == NULL || cursor == NULL || out == NULL) return false;
  uint32_t pos = *cursor;
  if (pos >= list->len || list->bytes == NULL) return false;
  uint8_t tag = list->bytes[pos];
  HurrayNetLayoutEntry e = {tag, 0, NULL};
  pos++;
  if (is_private_tag(tag)) {
    if (list->len - pos < 2) return false;
    e.ext_len = hurray__ld16(list->bytes + pos);
    pos += 2;
    if (list->len - pos < e.ext_len) return false;
    e.ext = e.ext_len == 0 ? NULL : list->bytes + pos;
    pos += e.ext_len;
  }
  *out = e;
  *cursor = pos;
  return true;
}

HurrayStatus hurray_net_layout_list_encode(const HurrayNetLayoutEntry *entries, uint16_t count,
                                           uint8_t *out, size_t capacity, size_t *out_len,
                                           HurrayError *err) {
  if ((entries == NULL && count != 0) || out_len == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "entries and out_len are required");
  size_t n = 0;
  for (uint32_t i = 0; i < count; i++) {
    const HurrayNetLayoutEntry *e = &entries[i];
    char path[48];
    hurray__path(path, sizeof path, "layouts[%u]", i);
    if (hurray_layout_tag_kind(e->tag) == HURRAY_TAG_INVALID)
      return hurray__fail(err, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, path,
                          "layout tag 0x%02X is invalid", e->tag);
    if (!is_private_tag(e->tag)) {
      if (e->ext_len != 0)
        return hurray__fail(err, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, path,
                            "only private tags (0xF0-0xFE) carry metadata");
      n += 1;
    } else {
      if (e->ext_len != 0 && e->ext == NULL)
        return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, path,
                            "ext is NULL with ext_len %u", e->ext_len);
      n += 3u + e->ext_len;
    }
  }
  *out_len = n;
  if (capacity < n || (out == NULL && n != 0))
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, NULL,
                        "%zu bytes needed, capacity %zu", n, capacity);
  size_t pos = 0;
  for (uint32_t i = 0; i < count; i++) {
    const HurrayNetLayoutEntry *e = &entries[i];
    out[pos++] = e->tag;
    if (is_private_tag(e->tag)) {
      hurray__st16(out + pos, e->ext_len);
      pos += 2;
      if (e->ext_len != 0) memcpy(out + pos, e->ext, e->ext_len);
      pos += e->ext_len;
    }
  }
  return HURRAY_OK;
}

/* A u16-counted list of device tags or memory classes. 0xFF is invalid in
 * both; reserved and private values are kept (a peer may advertise them). */
static HurrayStatus rd_tag_list(Cursor *c, const char *field, uint16_t *count,
                                const uint8_t **tags) {
  char path[64];
  HURRAY_TRY(rd_u16(c, hurray__path(path, sizeof path, "%s.count", field), count));
  size_t at = c->pos;
  HURRAY_TRY(rd_bytes(c, *count, field, tags));
  for (uint32_t i = 0; i < *count; i++)
    if ((*tags)[i] == 0xFF)
      return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at + i),
                          hurray__path(path, sizeof path, "%s[%u]", field, i),
                          "0xFF is reserved (invalid)");
  return HURRAY_OK;
}

/* ---- payloads --------------------------------------------------------------- */

static HurrayStatus check_caps(Cursor *c, size_t at, uint64_t caps) {
  if (caps & ~(uint64_t)HURRAY_NET_CAPS_KNOWN)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "capability_flags",
                        "reserved bits 0x%016llX are set (bits 4-63 must be 0)",
                        (unsigned long long)(caps & ~(uint64_t)HURRAY_NET_CAPS_KNOWN));
  if ((caps & HURRAY_NET_CAP_RDMA_GPUDIRECT) && !(caps & HURRAY_NET_CAP_RDMA_DATA_PLANE))
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "capability_flags",
                        "RDMA_GPUDIRECT (bit 3) requires RDMA_DATA_PLANE (bit 2)");
  return HURRAY_OK;
}

static HurrayStatus dec_hello(Cursor *c, HurrayNetHello *h) {
  memset(h, 0, sizeof *h);
  HURRAY_TRY(rd_u32(c, "protocol_version", &h->protocol_version));
  if (h->protocol_version == 0)
    return hurray__fail(c->err, HURRAY_ERR_VERSION_MISMATCH, wire_off(0), "protocol_version",
                        "version 0 does not exist (the first version is 1)");
  size_t at = c->pos;
  HURRAY_TRY(rd_u32(c, "max_message_size", &h->max_message_size));
  if (h->max_message_size < HURRAY_NET_MIN_MESSAGE_SIZE)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "max_message_size",
                        "%u is below the smallest usable size, %u", h->max_message_size,
                        HURRAY_NET_MIN_MESSAGE_SIZE);
  at = c->pos;
  HURRAY_TRY(rd_u64(c, "capability_flags", &h->capabilities));
  HURRAY_TRY(check_caps(c, at, h->capabilities));
  HURRAY_TRY(rd_layout_list(c, "supported_layouts", &h->layouts));
  HURRAY_TRY(rd_tag_list(c, "supported_devices", &h->device_count, &h->devices));
  /* The memory class list may be absent: the payload ends here. */
  if (c->pos == c->len) return HURRAY_OK;
  HURRAY_TRY(rd_tag_list(c, "supported_memory_classes", &h->memory_class_count,
                         &h->memory_classes));
  /* A newer version may append fields; version 1 has none after these. */
  if (h->protocol_version > HURRAY_NET_PROTOCOL_VERSION) {
    c->pos = c->len;
    return HURRAY_OK;
  }
  return expect_end(c, "a HELLO");
}

static HurrayStatus check_device(Cursor *c, size_t at, const char *field, uint8_t tag) {
  if (tag == 0xFF)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), field,
                        "device tag 0xFF is reserved (invalid)");
  return HURRAY_OK;
}

static HurrayStatus dec_request(Cursor *c, HurrayNetRequest *r) {
  memset(r, 0, sizeof *r);
  HURRAY_TRY(rd_utf8(c, "tensor_key", &r->key, &r->key_len));
  HURRAY_TRY(rd_layout_list(c, "preferred_layouts", &r->layouts));
  size_t at = c->pos;
  HURRAY_TRY(rd_u8(c, "preferred_device", &r->preferred_device));
  HURRAY_TRY(check_device(c, at, "preferred_device", r->preferred_device));
  at = c->pos;
  HURRAY_TRY(rd_u32(c, "min_alignment", &r->min_alignment));
  if (!hurray__is_pow2_u64(r->min_alignment))
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "min_alignment",
                        "%u is not a power of two", r->min_alignment);
  at = c->pos;
  HURRAY_TRY(rd_u32(c, "request_flags", &r->flags));
  if (r->flags & ~(uint32_t)HURRAY_NET_REQ_KNOWN)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "request_flags",
                        "reserved bits 0x%08X are set (bits 2-31 must be 0)",
                        r->flags & ~(uint32_t)HURRAY_NET_REQ_KNOWN);
  return expect_end(c, "TENSOR_REQUEST");
}

/* The descriptor at the cursor, delimited by its descriptor_length, which
 * must be exactly `declared` when that is not 0. */
static HurrayStatus rd_descriptor(Cursor *c, uint32_t declared, const uint8_t **d,
                                  uint32_t *dlen) {
  size_t at = c->pos;
  uint32_t n = 0;
  HurrayError e;
  HurrayStatus st = hurray_descriptor_peek_length(c->p + c->pos, c->len - c->pos, &n, &e);
  if (st != HURRAY_OK) {
    /* Peek reports "too short" as a layout error: on the wire it is a
     * message whose payload ends inside the descriptor. */
    HurrayStatus out = st == HURRAY_ERR_INVALID_LAYOUT ? HURRAY_ERR_PROTOCOL : st;
    uint64_t off = e.offset == HURRAY_NO_OFFSET ? wire_off(at) : wire_off(at) + e.offset;
    return hurray__fail(c->err, out, off, "descriptor", "%s", e.reason);
  }
  if (declared != 0 && n != declared)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "descriptor",
                        "descriptor_length %u differs from the declared length %u", n,
                        declared);
  HURRAY_TRY(rd_bytes(c, n, "descriptor", d));
  *dlen = n;
  return HURRAY_OK;
}

static HurrayStatus dec_tensor_descriptor(Cursor *c, HurrayNetTensorDescriptor *t) {
  memset(t, 0, sizeof *t);
  HURRAY_TRY(rd_descriptor(c, 0, &t->descriptor, &t->descriptor_len));
  HURRAY_TRY(rd_u64(c, "total_data_bytes", &t->total_data_bytes));
  HURRAY_TRY(rd_u32(c, "shard_index", &t->shard_index));
  size_t at = c->pos;
  HURRAY_TRY(rd_u32(c, "total_shards", &t->total_shards));
  if (t->total_shards == 0)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "total_shards",
                        "0 shards (1 for a transfer that is not parallel)");
  if (t->shard_index >= t->total_shards)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at - 4), "shard_index",
                        "%u is not below total_shards %u", t->shard_index, t->total_shards);
  return expect_end(c, "TENSOR_DESCRIPTOR");
}

static HurrayStatus dec_data(Cursor *c, HurrayNetData *d) {
  HURRAY_TRY(rd_u64(c, "byte_offset_in_buffer", &d->offset));
  size_t n = c->len - c->pos;
  if (n == 0)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(c->pos), "data",
                        "a data frame without data bytes");
  uint64_t end;
  if (hurray__add_overflow_u64(d->offset, n, &end))
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(0), "byte_offset_in_buffer",
                        "offset + %zu bytes overflows 64 bits", n);
  d->len = (uint32_t)n;
  d->data = c->p + c->pos;
  c->pos = c->len;
  return HURRAY_OK;
}

static HurrayStatus dec_put(Cursor *c, HurrayNetPut *p) {
  memset(p, 0, sizeof *p);
  HURRAY_TRY(rd_utf8(c, "tensor_key", &p->key, &p->key_len));
  uint32_t declared;
  size_t at = c->pos;
  HURRAY_TRY(rd_u32(c, "descriptor.length", &declared));
  if (declared == 0)
    return hurray__fail(c->err, HURRAY_ERR_PROTOCOL, wire_off(at), "descriptor.length",
                        "an empty descriptor");
  HURRAY_TRY(need(c, declared, "descriptor"));
  HURRAY_TRY(rd_descriptor(c, declared, &p->descriptor, &p->descriptor_len));
  HURRAY_TRY(rd_u64(c, "total_data_bytes", &p->total_data_bytes));
  return expect_end(c, "TENSOR_PUT");
}

static HurrayStatus dec_error(Cursor *c, HurrayNetErrorMessage *e) {
  memset(e, 0, sizeof *e);
  HURRAY_TRY(rd_u32(c, "error_code", &e->code));
  HURRAY_TRY(rd_utf8(c, "message", &e->text, &e->text_len));
  return expect_end(c, "ERROR");
}

static HurrayStatus dec_rdma_register(Cursor *c, HurrayNetRdmaRegister *r) {
  memset(r, 0, sizeof *r);
  HURRAY_TRY(rd_u64(c, "remote_addr", &r->remote_addr));
  HURRAY_TRY(rd_u64(c, "length", &r->length));
  HURRAY_TRY(rd_u32(c, "rkey.length", &r->rkey_len));
  HURRAY_TRY(rd_bytes(c, r->rkey_len, "rkey", &r->rkey));
  return expect_end(c, "RDMA_REGISTER");
}

HurrayStatus hurray_net_message_decode(const HurrayNetHeader *h, const uint8_t *payload,
                                       size_t len, HurrayNetMessage *out, HurrayError *err) {
  if (h == NULL || out == NULL || (payload == NULL && len != 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "h, out and payload are required");
  memset(out, 0, sizeof *out);
  out->type = h->message_type;
  out->stream_id = h->stream_id;
  if (h->stream_id == 0)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, 4, "stream_id", "stream id 0 is reserved");
  if (len != h->payload_length)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, 8, "payload_length",
                        "the header announces %u bytes, %zu given", h->payload_length, len);
  /* An empty payload may come as NULL; the cursor always points somewhere,
   * so no field read computes an offset from a null pointer. */
  static const uint8_t empty[1] = {0};
  Cursor c = {payload != NULL ? payload : empty, len, 0, err};
  switch (h->message_type) {
    case HURRAY_NET_CLIENT_HELLO:
    case HURRAY_NET_SERVER_HELLO:
      return dec_hello(&c, &out->u.hello);
    case HURRAY_NET_TENSOR_REQUEST:
      return dec_request(&c, &out->u.request);
    case HURRAY_NET_TENSOR_DESCRIPTOR:
      return dec_tensor_descriptor(&c, &out->u.descriptor);
    case HURRAY_NET_TENSOR_DATA:
      return dec_data(&c, &out->u.data);
    case HURRAY_NET_TENSOR_PUT:
      return dec_put(&c, &out->u.put);
    case HURRAY_NET_ERROR:
      return dec_error(&c, &out->u.error);
    case HURRAY_NET_RDMA_REGISTER:
      return dec_rdma_register(&c, &out->u.rdma_register);
    case HURRAY_NET_TENSOR_DATA_END:
    case HURRAY_NET_TENSOR_PUT_ACK:
    case HURRAY_NET_RDMA_READY:
      return expect_end(&c, hurray_net_message_type_name(h->message_type));
    case HURRAY_NET_PING:
    case HURRAY_NET_PONG:
      out->u.opaque.bytes = len == 0 ? NULL : payload;
      out->u.opaque.len = (uint32_t)len;
      return HURRAY_OK;
    default:
      break;
  }
  if (h->message_type >= HURRAY_NET_PRIVATE_FIRST && h->message_type <= HURRAY_NET_PRIVATE_LAST) {
    out->u.opaque.bytes = len == 0 ? NULL : payload;
    out->u.opaque.len = (uint32_t)len;
    return HURRAY_OK;
  }
  if (h->message_type == HURRAY_NET_INVALID_TYPE)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, 0, "message_type",
                        "0x000000FF is reserved and must not be used");
  return hurray__fail(err, HURRAY_ERR_PROTOCOL, 0, "message_type",
                      "unknown message type 0x%08X", h->message_type);
}

/* ---- encoding ---------------------------------------------------------------- */

typedef struct Writer {
  uint8_t *p; /* NULL: count only */
  uint64_t pos;
} Writer;

static void wr_bytes(Writer *w, const void *b, size_t n) {
  if (w->p != NULL && n != 0) memcpy(w->p + w->pos, b, n);
  w->pos += n;
}
static void wr_u8(Writer *w, uint8_t v) { wr_bytes(w, &v, 1); }
static void wr_u16(Writer *w, uint16_t v) {
  uint8_t b[2];
  hurray__st16(b, v);
  wr_bytes(w, b, 2);
}
static void wr_u32(Writer *w, uint32_t v) {
  uint8_t b[4];
  hurray__st32(b, v);
  wr_bytes(w, b, 4);
}
static void wr_u64(Writer *w, uint64_t v) {
  uint8_t b[8];
  hurray__st64(b, v);
  wr_bytes(w, b, 8);
}

/* Writes (or, with w->p NULL, counts) the payload of m. Pointers that are
 * NULL with a nonzero length were refused by check_views. */
static void wr_payload(Writer *w, const HurrayNetMessage *m) {
  const HurrayNetHello *h = &m->u.hello;
  switch (m->type) {
    case HURRAY_NET_CLIENT_HELLO:
    case HURRAY_NET_SERVER_HELLO:
      wr_u32(w, h->protocol_version);
      wr_u32(w, h->max_message_size);
      wr_u64(w, h->capabilities);
      wr_u16(w, h->layouts.count);
      wr_bytes(w, h->layouts.bytes, h->layouts.len);
      wr_u16(w, h->device_count);
      wr_bytes(w, h->devices, h->device_count);
      wr_u16(w, h->memory_class_count);
      wr_bytes(w, h->memory_classes, h->memory_class_count);
      break;
    case HURRAY_NET_TENSOR_REQUEST:
      wr_u32(w, m->u.request.key_len);
      wr_bytes(w, m->u.request.key, m->u.request.key_len);
      wr_u16(w, m->u.request.layouts.count);
      wr_bytes(w, m->u.request.layouts.bytes, m->u.request.layouts.len);
      wr_u8(w, m->u.request.preferred_device);
      wr_u32(w, m->u.request.min_alignment);
      wr_u32(w, m->u.request.flags);
      break;
    case HURRAY_NET_TENSOR_DESCRIPTOR:
      wr_bytes(w, m->u.descriptor.descriptor, m->u.descriptor.descriptor_len);
      wr_u64(w, m->u.descriptor.total_data_bytes);
      wr_u32(w, m->u.descriptor.shard_index);
      wr_u32(w, m->u.descriptor.total_shards);
      break;
    case HURRAY_NET_TENSOR_DATA:
      wr_u64(w, m->u.data.offset);
      wr_bytes(w, m->u.data.data, m->u.data.len);
      break;
    case HURRAY_NET_TENSOR_PUT:
      wr_u32(w, m->u.put.key_len);
      wr_bytes(w, m->u.put.key, m->u.put.key_len);
      wr_u32(w, m->u.put.descriptor_len);
      wr_bytes(w, m->u.put.descriptor, m->u.put.descriptor_len);
      wr_u64(w, m->u.put.total_data_bytes);
      break;
    case HURRAY_NET_ERROR:
      wr_u32(w, m->u.error.code);
      wr_u32(w, m->u.error.text_len);
      wr_bytes(w, m->u.error.text, m->u.error.text_len);
      break;
    case HURRAY_NET_RDMA_REGISTER:
      wr_u64(w, m->u.rdma_register.remote_addr);
      wr_u64(w, m->u.rdma_register.length);
      wr_u32(w, m->u.rdma_register.rkey_len);
      wr_bytes(w, m->u.rdma_register.rkey, m->u.rdma_register.rkey_len);
      break;
    case HURRAY_NET_TENSOR_DATA_END:
    case HURRAY_NET_TENSOR_PUT_ACK:
    case HURRAY_NET_RDMA_READY:
      break;
    default: /* PING, PONG, private */
      wr_bytes(w, m->u.opaque.bytes, m->u.opaque.len);
      break;
  }
}

/* A NULL view with a nonzero length, or an unknown type. */
static HurrayStatus check_views(const HurrayNetMessage *m, HurrayError *err) {
#define HURRAY_VIEW_(ptr, n, name)                                                       \
  if ((ptr) == NULL && (n) != 0)                                                         \
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, name,            \
                        "NULL with length %llu", (unsigned long long)(n));
  switch (m->type) {
    case HURRAY_NET_CLIENT_HELLO:
    case HURRAY_NET_SERVER_HELLO:
      HURRAY_VIEW_(m->u.hello.layouts.bytes, m->u.hello.layouts.len, "supported_layouts");
      HURRAY_VIEW_(m->u.hello.devices, m->u.hello.device_count, "supported_devices");
      HURRAY_VIEW_(m->u.hello.memory_classes, m->u.hello.memory_class_count,
                   "supported_memory_classes");
      return HURRAY_OK;
    case HURRAY_NET_TENSOR_REQUEST:
      HURRAY_VIEW_(m->u.request.key, m->u.request.key_len, "tensor_key");
      HURRAY_VIEW_(m->u.request.layouts.bytes, m->u.request.layouts.len, "preferred_layouts");
      return HURRAY_OK;
    case HURRAY_NET_TENSOR_DESCRIPTOR:
      HURRAY_VIEW_(m->u.descriptor.descriptor, m->u.descriptor.descriptor_len, "descriptor");
      return HURRAY_OK;
    case HURRAY_NET_TENSOR_DATA:
      HURRAY_VIEW_(m->u.data.data, m->u.data.len, "data");
      return HURRAY_OK;
    case HURRAY_NET_TENSOR_PUT:
      HURRAY_VIEW_(m->u.put.key, m->u.put.key_len, "tensor_key");
      HURRAY_VIEW_(m->u.put.descriptor, m->u.put.descriptor_len, "descriptor");
      return HURRAY_OK;
    case HURRAY_NET_ERROR:
      HURRAY_VIEW_(m->u.error.text, m->u.error.text_len, "message");
      return HURRAY_OK;
    case HURRAY_NET_RDMA_REGISTER:
      HURRAY_VIEW_(m->u.rdma_register.rkey, m->u.rdma_register.rkey_len, "rkey");
      return HURRAY_OK;
    case HURRAY_NET_TENSOR_DATA_END:
    case HURRAY_NET_TENSOR_PUT_ACK:
    case HURRAY_NET_RDMA_READY:
      return HURRAY_OK;
    case HURRAY_NET_PING:
    case HURRAY_NET_PONG:
      HURRAY_VIEW_(m->u.opaque.bytes, m->u.opaque.len, "payload");
      return HURRAY_OK;
    default:
      break;
  }
  if (m->type >= HURRAY_NET_PRIVATE_FIRST && m->type <= HURRAY_NET_PRIVATE_LAST) {
    HURRAY_VIEW_(m->u.opaque.bytes, m->u.opaque.len, "payload");
    return HURRAY_OK;
  }
#undef HURRAY_VIEW_
  return hurray__fail(err, HURRAY_ERR_PROTOCOL, 0, "message_type",
                      m->type == HURRAY_NET_INVALID_TYPE
                          ? "0x%08X is reserved and must not be used"
                          : "unknown message type 0x%08X",
                      m->type);
}

HurrayStatus hurray_net_message_encoded_len(const HurrayNetMessage *m, uint64_t *out_len,
                                            HurrayError *err) {
  if (m == NULL || out_len == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "m and out_len are required");
  HURRAY_TRY(check_views(m, err));
  Writer w = {NULL, 0};
  wr_payload(&w, m);
  if (w.pos > UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, 8, "payload_length",
                        "a payload of %llu bytes does not fit the 32-bit length",
                        (unsigned long long)w.pos);
  *out_len = w.pos + HURRAY_NET_HEADER_LEN;
  return HURRAY_OK;
}

HurrayStatus hurray_net_message_encode(const HurrayNetMessage *m, uint8_t *out, size_t capacity,
                                       size_t *out_len, HurrayError *err) {
  if (out_len == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "out_len is required");
  uint64_t n = 0;
  HURRAY_TRY(hurray_net_message_encoded_len(m, &n, err));
  if (n > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_PROTOCOL, HURRAY_NO_OFFSET, NULL,
                        "the message does not fit this platform's memory");
  *out_len = (size_t)n;
  if (out == NULL || capacity < n)
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, NULL,
                        "%llu bytes needed, capacity %zu", (unsigned long long)n, capacity);
  HurrayNetHeader h = {m->type, m->stream_id, (uint32_t)(n - HURRAY_NET_HEADER_LEN)};
  HURRAY_TRY(hurray_net_header_encode(&h, out));
  Writer w = {out + HURRAY_NET_HEADER_LEN, 0};
  wr_payload(&w, m);
  HurrayNetMessage back;
  return hurray_net_message_decode(&h, out + HURRAY_NET_HEADER_LEN, h.payload_length, &back,
                                   err);
}
