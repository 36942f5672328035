/*
 * hurray/net.h - the network transport protocol (spec: docs/spec/interchange.md
 * § Network Transport Protocol; docs/internals/decisions.md § Network transport).
 *
 * Two layers that touch no socket, and a blocking transport over a
 * connected fd built on them:
 *
 *  - the wire codec: the 12-byte message header and the payload of every
 *    message type, decoded into a HurrayNetMessage whose variable-length
 *    parts (keys, lists, descriptor bytes, data) are borrowed views into the
 *    caller's bytes. Decoding allocates nothing. Every length is checked
 *    against the bytes left before it is used. Encoding writes the same
 *    bytes back and refuses what decoding would refuse.
 *  - the session: a state machine per connection (client or server role)
 *    that checks which message may come when, on each stream. Feed it every
 *    message sent (hurray_net_session_send) and received
 *    (hurray_net_session_receive_*); a message received out of turn is
 *    refused with the ERROR to answer and what to close.
 *  - the connection (POSIX): hurray_net_client_* and hurray_net_server_serve
 *    speak the protocol over a connected socket, with timeouts.
 *  - the server's table (POSIX): HurrayNetTable holds what a server serves by
 *    name (tensors, composites, pushes) and runs its connections with the
 *    built-in names (the catalog, shards) and the layout selection rules.
 *
 * All multi-byte fields are little-endian. Offsets in error details count
 * from the first byte of the message header (a payload field at payload
 * byte 4 is reported at byte 16).
 *
 * Statuses: a malformed message or one out of turn HURRAY_ERR_PROTOCOL; a
 * payload longer than the receiver's maximum HURRAY_ERR_STREAM_LIMIT; an
 * unsupported protocol version HURRAY_ERR_VERSION_MISMATCH; a descriptor
 * that does not decode, the descriptor's status.
 */
#ifndef HURRAY_NET_H
#define HURRAY_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HURRAY_NET_HEADER_LEN 12u
/* The protocol version this library speaks. */
#define HURRAY_NET_PROTOCOL_VERSION 1u
/* The smallest max_message_size a HELLO may announce (a rank-64 descriptor
 * with every section fits); a smaller one is refused. */
#define HURRAY_NET_MIN_MESSAGE_SIZE 4096u
/* The default maximum payload a session accepts (16 MiB). */
#define HURRAY_NET_DEFAULT_MAX_MESSAGE_SIZE (16u * 1024u * 1024u)
/* Streams a session tracks at once by default, and at most. */
#define HURRAY_NET_DEFAULT_MAX_STREAMS 16u
#define HURRAY_NET_MAX_STREAMS_LIMIT 1024u

/* X(tag, NAME) - message types (header bytes 0-3). */
#define HURRAY_NET_MESSAGE_TABLE(X) \
  X(0x01, CLIENT_HELLO)             \
  X(0x02, SERVER_HELLO)             \
  X(0x03, TENSOR_REQUEST)           \
  X(0x04, TENSOR_DESCRIPTOR)        \
  X(0x05, TENSOR_DATA)              \
  X(0x06, TENSOR_DATA_END)          \
  X(0x07, TENSOR_PUT)               \
  X(0x08, TENSOR_PUT_ACK)           \
  X(0x09, ERROR)                    \
  X(0x0A, PING)                     \
  X(0x0B, PONG)                     \
  X(0x0C, RDMA_REGISTER)            \
  X(0x0D, RDMA_READY)

enum HurrayNetMessageType {
#define HURRAY_X_NM_(tag, NAME) HURRAY_NET_##NAME = (tag),
  HURRAY_NET_MESSAGE_TABLE(HURRAY_X_NM_)
#undef HURRAY_X_NM_
  HURRAY_NET_PRIVATE_FIRST = 0xF0, /* 0xF0-0xFE: private extensions */
  HURRAY_NET_PRIVATE_LAST = 0xFE,
  HURRAY_NET_INVALID_TYPE = 0xFF /* reserved, never sent */
};

/* Capability flags of a HELLO (bits 4-63 must be 0). */
#define HURRAY_NET_CAP_TRANSCODING 0x1u
#define HURRAY_NET_CAP_PARALLEL_STREAMS 0x2u
#define HURRAY_NET_CAP_RDMA_DATA_PLANE 0x4u
#define HURRAY_NET_CAP_RDMA_GPUDIRECT 0x8u /* requires RDMA_DATA_PLANE */
#define HURRAY_NET_CAPS_KNOWN 0xFu

/* Request flags of a TENSOR_REQUEST (bits 2-31 must be 0). */
#define HURRAY_NET_REQ_ALLOW_TRANSCODE 0x1u
#define HURRAY_NET_REQ_PARALLEL_OK 0x2u
#define HURRAY_NET_REQ_KNOWN 0x3u

/* X(code, NAME) - error codes of an ERROR message; 0xF0-0xFE are
 * implementation-defined. */
#define HURRAY_NET_ERROR_TABLE(X)    \
  X(0x01, PROTOCOL_VERSION_MISMATCH) \
  X(0x02, UNKNOWN_TENSOR)            \
  X(0x03, LAYOUT_UNAVAILABLE)        \
  X(0x04, TRANSCODE_LIMIT_EXCEEDED)  \
  X(0x05, DEVICE_UNAVAILABLE)        \
  X(0x06, INVALID_MESSAGE)           \
  X(0x07, MESSAGE_TOO_LARGE)         \
  X(0x08, SHARD_MISMATCH)

enum HurrayNetErrorCode {
#define HURRAY_X_NE_(code, NAME) HURRAY_NET_E_##NAME = (code),
  HURRAY_NET_ERROR_TABLE(HURRAY_X_NE_)
#undef HURRAY_X_NE_
  HURRAY_NET_E_PRIVATE_FIRST = 0xF0,
  HURRAY_NET_E_PRIVATE_LAST = 0xFE
};

/* "TENSOR_DATA" for a message type of the table, "PRIVATE" for 0xF0-0xFE,
 * NULL otherwise. Static string (borrowed, never free). */
HURRAY_API const char *hurray_net_message_type_name(uint32_t message_type);

/* "DEVICE_UNAVAILABLE" for an error code of the table, "PRIVATE" for
 * 0xF0-0xFE, NULL otherwise. Static string (borrowed, never free). */
HURRAY_API const char *hurray_net_error_code_name(uint32_t error_code);

/* ---- wire codec ------------------------------------------------------------ */

/* The message header. */
typedef struct HurrayNetHeader {
  uint32_t message_type;
  uint32_t stream_id;      /* 0 is reserved */
  uint32_t payload_length; /* bytes after the header */
} HurrayNetHeader;

/* A list of layout entries as it is on the wire: `count` entries in `len`
 * bytes at `bytes` (borrowed). An entry is a layout tag, followed, for a tag
 * in 0xF0-0xFE, by a u16 metadata length and that many bytes. Walk it with
 * hurray_net_layout_list_next; build one with hurray_net_layout_list_encode. */
typedef struct HurrayNetLayoutList {
  uint16_t count;
  uint32_t len;
  const uint8_t *bytes;
} HurrayNetLayoutList;

/* One layout entry. `ext` (borrowed) holds `ext_len` bytes of opaque
 * metadata for a private tag (0xF0-0xFE), NULL and 0 otherwise. */
typedef struct HurrayNetLayoutEntry {
  uint8_t tag;
  uint16_t ext_len;
  const uint8_t *ext;
} HurrayNetLayoutEntry;

/* CLIENT_HELLO and SERVER_HELLO. The device and memory class lists are
 * borrowed (count bytes each; NULL allowed when the count is 0). An empty
 * memory class list means "standard only"; on decode a HELLO that ends
 * before the memory class count has an empty list. */
typedef struct HurrayNetHello {
  uint32_t protocol_version;
  uint32_t max_message_size; /* largest payload the sender accepts */
  uint64_t capabilities;     /* HURRAY_NET_CAP_* */
  HurrayNetLayoutList layouts;
  uint16_t device_count;
  const uint8_t *devices;
  uint16_t memory_class_count;
  const uint8_t *memory_classes;
} HurrayNetHello;

/* TENSOR_REQUEST. `key` (borrowed): key_len bytes of UTF-8, not terminated. */
typedef struct HurrayNetRequest {
  const uint8_t *key;
  uint32_t key_len;
  HurrayNetLayoutList layouts; /* preference order; count 0 = no preference */
  uint8_t preferred_device;
  uint32_t min_alignment; /* a power of two */
  uint32_t flags;         /* HURRAY_NET_REQ_* */
} HurrayNetRequest;

/* TENSOR_DESCRIPTOR: the descriptor's bytes (borrowed; exactly its
 * descriptor_length) and the transport fields. */
typedef struct HurrayNetTensorDescriptor {
  const uint8_t *descriptor;
  uint32_t descriptor_len;
  uint64_t total_data_bytes;
  uint32_t shard_index;  /* < total_shards */
  uint32_t total_shards; /* >= 1 */
} HurrayNetTensorDescriptor;

/* TENSOR_DATA: `len` bytes (borrowed, len >= 1) at byte `offset` of the
 * tensor's data (the buffers of its buffer table, in table order, without
 * padding). */
typedef struct HurrayNetData {
  uint64_t offset;
  const uint8_t *data;
  uint32_t len;
} HurrayNetData;

/* TENSOR_PUT: key (UTF-8) and descriptor, both borrowed. */
typedef struct HurrayNetPut {
  const uint8_t *key;
  uint32_t key_len;
  const uint8_t *descriptor;
  uint32_t descriptor_len;
  uint64_t total_data_bytes;
} HurrayNetPut;

/* ERROR: a code and a UTF-8 text (borrowed, text_len bytes, not terminated). */
typedef struct HurrayNetErrorMessage {
  uint32_t code;
  const uint8_t *text;
  uint32_t text_len;
} HurrayNetErrorMessage;

/* RDMA_REGISTER (decoded so that it can be refused: this library does not
 * implement the RDMA data plane). `rkey` borrowed. */
typedef struct HurrayNetRdmaRegister {
  uint64_t remote_addr;
  uint64_t length;
  const uint8_t *rkey;
  uint32_t rkey_len;
} HurrayNetRdmaRegister;

/* Payload bytes kept as they are (PING, PONG, private types); borrowed. */
typedef struct HurrayNetOpaque {
  const uint8_t *bytes;
  uint32_t len;
} HurrayNetOpaque;

/* A decoded message. Which member of `u` holds the payload depends on
 * `type`: hello (CLIENT_HELLO, SERVER_HELLO), request, descriptor, data, put,
 * error, rdma_register, opaque (PING, PONG, private types); TENSOR_DATA_END,
 * TENSOR_PUT_ACK and RDMA_READY have an empty payload and use none. */
typedef struct HurrayNetMessage {
  uint32_t type;
  uint32_t stream_id;
  union {
    HurrayNetHello hello;
    HurrayNetRequest request;
    HurrayNetTensorDescriptor descriptor;
    HurrayNetData data;
    HurrayNetPut put;
    HurrayNetErrorMessage error;
    HurrayNetRdmaRegister rdma_register;
    HurrayNetOpaque opaque;
  } u;
} HurrayNetMessage;

/*
 * Reads a message header from bytes[0..12) (borrowed; len must be >= 12)
 * into *out (caller storage, written on success only). Checks the framing
 * only: stream_id not 0 (HURRAY_ERR_PROTOCOL) and payload_length not above
 * `max_payload` (HURRAY_ERR_STREAM_LIMIT). The message type is not checked
 * here: a receiver still skips the payload of a type it does not know.
 * HURRAY_ERR_PROTOCOL when len < 12; HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_header_decode(
    const uint8_t *bytes, size_t len, uint32_t max_payload, HurrayNetHeader *out,
    HurrayError *err);

/* Writes `h` (borrowed) into out[0..12) (caller memory). No check. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_header_encode(const HurrayNetHeader *h,
                                                                  uint8_t *out);

/*
 * Decodes the payload of the message whose header is `h` (borrowed):
 * `payload` (borrowed; NULL allowed when len is 0) must hold exactly
 * h->payload_length bytes. Fills *out (caller storage; its views point into
 * `payload`, valid while it is). Every field is checked against the spec:
 * reserved bits and values, counts against the bytes left, UTF-8 strings,
 * exact payload lengths (no trailing bytes, except after a HELLO that
 * announces a protocol version above 1). The descriptor of a
 * TENSOR_DESCRIPTOR or TENSOR_PUT is delimited by its descriptor_length
 * here and decoded by the session. Allocates nothing.
 * Unknown types and 0xFF: HURRAY_ERR_PROTOCOL (field "message_type").
 * *out is written on failure too (do not use it then).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_message_decode(
    const HurrayNetHeader *h, const uint8_t *payload, size_t len, HurrayNetMessage *out,
    HurrayError *err);

/* The number of bytes hurray_net_message_encode writes for `m` (borrowed):
 * header and payload. HURRAY_ERR_PROTOCOL when the payload would not fit a
 * u32 length or the type is unknown. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_message_encoded_len(
    const HurrayNetMessage *m, uint64_t *out_len, HurrayError *err);

/*
 * Writes message `m` (borrowed), header then payload, into out[0..capacity)
 * (caller memory) and its length into *out_len (also when the capacity is
 * short: then HURRAY_ERR_BUFFER_TOO_SMALL). The written bytes are decoded
 * back before returning: a message the decoder would refuse is refused
 * (its status and detail), so nothing invalid leaves this function.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_message_encode(
    const HurrayNetMessage *m, uint8_t *out, size_t capacity, size_t *out_len,
    HurrayError *err);

/*
 * Steps through a layout list (borrowed): *cursor (caller storage) starts at
 * 0; each call that returns true fills *out with the next entry (its `ext`
 * points into the list). Returns false at the end, and for a list that is
 * malformed (a decoded list never is).
 */
HURRAY_API bool hurray_net_layout_list_next(const HurrayNetLayoutList *list, uint32_t *cursor,
                                            HurrayNetLayoutEntry *out);

/*
 * Encodes `count` entries (borrowed) into out[0..capacity) (caller memory)
 * in wire form, for a HurrayNetLayoutList; *out_len receives the length
 * (also when the capacity is short: HURRAY_ERR_BUFFER_TOO_SMALL). A tag
 * outside 0xF0-0xFE with ext_len != 0, or tag 0x00/0xFF:
 * HURRAY_ERR_PROTOCOL.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_layout_list_encode(
    const HurrayNetLayoutEntry *entries, uint16_t count, uint8_t *out, size_t capacity,
    size_t *out_len, HurrayError *err);

/* ---- session --------------------------------------------------------------- */

typedef enum HurrayNetRole {
  HURRAY_NET_ROLE_CLIENT = 0,
  HURRAY_NET_ROLE_SERVER = 1
} HurrayNetRole;

/* Where the connection stands. */
typedef enum HurrayNetSessionState {
  HURRAY_NET_STATE_START = 0,          /* nothing exchanged yet */
  HURRAY_NET_STATE_HELLO_SENT = 1,     /* client: CLIENT_HELLO sent */
  HURRAY_NET_STATE_HELLO_RECEIVED = 2, /* server: CLIENT_HELLO received */
  HURRAY_NET_STATE_READY = 3,          /* both HELLOs exchanged */
  HURRAY_NET_STATE_CLOSED = 4          /* the connection must be closed */
} HurrayNetSessionState;

/* Options of a session (zero-initialise, then set what you need). */
typedef struct HurrayNetSessionOptions {
  uint32_t max_message_size;     /* largest payload accepted; 0 = default;
                                    >= HURRAY_NET_MIN_MESSAGE_SIZE */
  uint32_t max_streams;          /* streams tracked at once; 0 = default */
  uint32_t decode_options;       /* HURRAY_DECODE_* for received descriptors */
  bool allow_private_messages;   /* types 0xF0-0xFE agreed out of band */
} HurrayNetSessionOptions;

/* What to do with a received message. */
typedef enum HurrayNetAction {
  HURRAY_NET_ACCEPT = 0,  /* act on it */
  HURRAY_NET_DISCARD = 1, /* a late message on a stream this side closed: drop it */
  HURRAY_NET_REFUSE = 2   /* send ERROR (error_code, stream_id) and close that
                             stream, or the connection when close_connection */
} HurrayNetAction;

/* The verdict on a received message (caller storage, always written). */
typedef struct HurrayNetVerdict {
  HurrayNetAction action;
  uint32_t stream_id;
  uint32_t error_code;   /* HURRAY_NET_E_* to send, when refusing */
  bool close_connection; /* close the connection (after the ERROR, if any) */
  bool stream_done;      /* the stream ended with this message (a complete
                            response, a PUT_ACK, an ERROR) */
  bool skip_payload;     /* header refused: skip payload_length bytes */
} HurrayNetVerdict;

typedef struct HurrayNetSession HurrayNetSession;

/* Starts a session in `role`. `opts` borrowed (NULL = defaults). *out owned
 * (hurray_net_session_destroy), NULL on failure; HURRAY_ERR_INVALID_ARGUMENT
 * for options out of range, HURRAY_ERR_OUT_OF_MEMORY. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_session_new(
    HurrayNetRole role, const HurrayNetSessionOptions *opts, HurrayNetSession **out,
    HurrayError *err);

/* Frees a session (*s moved) and sets *s to NULL; NULL and *s == NULL are no-ops. */
HURRAY_API void hurray_net_session_destroy(HurrayNetSession **s);

/* The connection state; HURRAY_NET_STATE_CLOSED for NULL. `s` borrowed. */
HURRAY_API HurrayNetSessionState hurray_net_session_state(const HurrayNetSession *s);

/* The largest payload this side accepts (what its HELLO announces). */
HURRAY_API uint32_t hurray_net_session_max_message_size(const HurrayNetSession *s);

/* The largest payload the peer accepts (0 before its HELLO): the bound of
 * every message this side sends, data frames included. */
HURRAY_API uint32_t hurray_net_session_peer_max_message_size(const HurrayNetSession *s);

/* The protocol version in use (0 before both HELLOs). */
HURRAY_API uint32_t hurray_net_session_version(const HurrayNetSession *s);

/* The capability flags the peer advertised in its HELLO (HURRAY_NET_CAP_*;
 * 0 before it). */
HURRAY_API uint64_t hurray_net_session_peer_capabilities(const HurrayNetSession *s);

/* Whether stream `stream_id` is open: a request whose response has not
 * ended (a composite's members still to come), a put not acknowledged. False
 * once it ended, was closed with ERROR, or the connection is closed. */
HURRAY_API bool hurray_net_session_stream_open(const HurrayNetSession *s, uint32_t stream_id);

/*
 * Records that this side sends `m` (borrowed) and advances the state; call
 * it before writing the message. Refuses (HURRAY_ERR_PROTOCOL, state
 * unchanged) a message this side may not send now: out of turn, on a stream
 * in the wrong state, larger than the peer accepts, a data frame out of
 * order, a descriptor whose placement breaks the request's device rules,
 * capabilities this library does not implement (RDMA). ERROR may be sent on
 * any stream at any time and closes it. HURRAY_ERR_INVALID_STATE once the
 * connection is closed.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_session_send(
    HurrayNetSession *s, const HurrayNetMessage *m, HurrayError *err);

/*
 * Checks a received header (12 bytes at `bytes`, borrowed) before its
 * payload is read: framing and this side's maximum message size. On
 * success *out is the header and verdict->action ACCEPT. On failure the
 * status of hurray_net_header_decode and a REFUSE verdict
 * (MESSAGE_TOO_LARGE with skip_payload, or INVALID_MESSAGE); before both
 * HELLOs it closes the connection.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_session_receive_header(
    HurrayNetSession *s, const uint8_t *bytes, size_t len, HurrayNetHeader *out,
    HurrayNetVerdict *verdict, HurrayError *err);

/*
 * Decodes a received payload (borrowed, exactly h->payload_length bytes)
 * into *out and checks it against the session (hurray_net_session_receive).
 * A payload that does not decode gives a REFUSE verdict (INVALID_MESSAGE)
 * and the decoder's status.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_session_receive_payload(
    HurrayNetSession *s, const HurrayNetHeader *h, const uint8_t *payload, size_t len,
    HurrayNetMessage *out, HurrayNetVerdict *verdict, HurrayError *err);

/*
 * Checks a received, decoded message (borrowed) against the session and
 * advances the state. HURRAY_OK with verdict ACCEPT or DISCARD; otherwise
 * a REFUSE verdict naming the ERROR to send, the state unchanged (send the
 * ERROR through hurray_net_session_send, which closes the stream or the
 * connection), and HURRAY_ERR_PROTOCOL (or HURRAY_ERR_VERSION_MISMATCH for
 * a HELLO of a version this library cannot speak; a descriptor's own
 * decoding status when it does not decode). The receive functions return
 * HURRAY_ERR_INVALID_STATE, reading nothing, once the connection is closed.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_session_receive(
    HurrayNetSession *s, const HurrayNetMessage *m, HurrayNetVerdict *verdict,
    HurrayError *err);

/* ---- blocking transport over a connected fd (POSIX) ------------------------- */

/* Defaults of HurrayNetConnectionOptions. */
#define HURRAY_NET_DEFAULT_TIMEOUT_MS 30000
#define HURRAY_NET_DEFAULT_FRAME_SIZE (1u << 20)
#define HURRAY_NET_DEFAULT_MAX_TENSOR_BYTES ((uint64_t)1 << 36) /* 64 GiB */

/* Options of a connection (zero-initialise, then set what you need). */
typedef struct HurrayNetConnectionOptions {
  HurrayNetSessionOptions session;
  int32_t timeout_ms;        /* longest wait for the peer; 0 = default, -1 = none */
  uint32_t frame_size;       /* largest data frame payload sent; 0 = default (the
                                peer's maximum caps it) */
  uint64_t max_tensor_bytes; /* largest total_data_bytes received; 0 = default */
  uint32_t request_flags;    /* client: request_flags of every TENSOR_REQUEST
                                (HURRAY_NET_REQ_*; PARALLEL_OK lets the server
                                answer with one shard of a tensor) */
} HurrayNetConnectionOptions;

typedef struct HurrayNetConnection HurrayNetConnection;

/* What a server serves. `get`: the tensor named by key (key_len bytes of
 * UTF-8, borrowed for the call) for a client preferring `preferred_device`;
 * on success it sets *descriptor (descriptor_len bytes) and *data (data_len
 * bytes: the buffers of its buffer table, in order, without padding), all
 * borrowed until the next call of a handler, and returns 0; or it returns
 * the ERROR code to answer (HURRAY_NET_E_UNKNOWN_TENSOR, ...). `put`: the
 * tensor a client pushed; `data` (data_len bytes, 64-byte aligned, NULL when
 * 0) is moved to the handler (free with hurray_free); returns 0 to
 * acknowledge or the ERROR code. A NULL handler answers every such request
 * with ERROR (UNKNOWN_TENSOR, or INVALID_MESSAGE for a put). */
typedef struct HurrayNetServerHandlers {
  uint32_t (*get)(void *ctx, const uint8_t *key, uint32_t key_len, uint8_t preferred_device,
                  const uint8_t **descriptor, uint32_t *descriptor_len, const void **data,
                  uint64_t *data_len);
  uint32_t (*put)(void *ctx, const uint8_t *key, uint32_t key_len, const uint8_t *descriptor,
                  uint32_t descriptor_len, void *data, uint64_t data_len);
  void *ctx;
  /* A composite response: when `get` gave a composite head, `next` gives the
   * response's following tensors, one per call, in pre-order (a member that
   * is itself a composite: its head, then its members), as `get` gives one,
   * until the session says the response is complete. A NULL `next` answers
   * the request with ERROR (INVALID_MESSAGE) after the head. */
  uint32_t (*next)(void *ctx, const uint8_t **descriptor, uint32_t *descriptor_len,
                   const void **data, uint64_t *data_len);
} HurrayNetServerHandlers;

/*
 * A connection over `fd` (a connected socket; borrowed, never closed here)
 * in `role`. `opts` borrowed (NULL = defaults). *out owned
 * (hurray_net_connection_destroy), NULL on failure. HURRAY_ERR_UNSUPPORTED on
 * Windows. Every wait for the peer is bounded by the timeout (HURRAY_ERR_IO,
 * "timed out"); a closed peer is HURRAY_ERR_IO; SIGPIPE is never raised.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_connection_new(
    int fd, HurrayNetRole role, const HurrayNetConnectionOptions *opts,
    HurrayNetConnection **out, HurrayError *err);

/* Frees a connection (*c moved; the fd stays open) and sets *c to NULL. */
HURRAY_API void hurray_net_connection_destroy(HurrayNetConnection **c);

/* The session of the connection (borrowed, owned by c): its state and limits. */
HURRAY_API const HurrayNetSession *hurray_net_connection_session(const HurrayNetConnection *c);

/*
 * Client: sends CLIENT_HELLO advertising `hello` (borrowed; its layouts,
 * devices, memory classes and capabilities; the version and maximum size
 * are the session's; NULL = CPU and standard memory only) and waits for
 * SERVER_HELLO. An ERROR from the server: HURRAY_ERR_VERSION_MISMATCH for
 * PROTOCOL_VERSION_MISMATCH, else HURRAY_ERR_PROTOCOL, the message naming
 * the code and the server's text.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_hello(HurrayNetConnection *c,
                                                                 const HurrayNetHello *hello,
                                                                 HurrayError *err);

/*
 * Client: requests the tensor `key` (NUL-terminated UTF-8, borrowed) on a new
 * stream, preferring `preferred_device`, and receives it: *out_descriptor
 * owned (hurray_descriptor_destroy), *out_data the tensor's data (owned,
 * 64-byte aligned, free with hurray_free; NULL when *out_len is 0). All
 * three are written on success only. A composite response: this is its
 * head (layout COMPOSITE; hurray_net_client_response_open is then true), and
 * hurray_net_client_get_next receives the rest. An ERROR from
 * the server: UNKNOWN_TENSOR is HURRAY_ERR_NOT_FOUND, DEVICE_UNAVAILABLE,
 * LAYOUT_UNAVAILABLE and TRANSCODE_LIMIT_EXCEEDED HURRAY_ERR_UNSUPPORTED,
 * MESSAGE_TOO_LARGE HURRAY_ERR_STREAM_LIMIT, others HURRAY_ERR_PROTOCOL.
 * total_data_bytes above max_tensor_bytes: HURRAY_ERR_STREAM_LIMIT.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_get(
    HurrayNetConnection *c, const char *key, uint8_t preferred_device,
    HurrayDescriptor **out_descriptor, void **out_data, uint64_t *out_len, HurrayError *err);

/* What a client asks for in a TENSOR_REQUEST beyond the key (zero-initialise,
 * then set what you need): hurray_net_client_get_ex / _get_into_ex. */
typedef struct HurrayNetRequestOptions {
  uint8_t preferred_device;             /* HURRAY_DEVICE_* (0: CPU) */
  uint32_t flags;                       /* HURRAY_NET_REQ_*, sent with the connection's
                                           request_flags; ALLOW_TRANSCODE lets the server
                                           transcode to a preferred layout */
  const HurrayNetLayoutEntry *layouts;  /* preferred layouts, most preferred first
                                           (borrowed for the call); NULL when count is 0 */
  uint16_t layout_count;                /* 0: no preference (the stored layout) */
} HurrayNetRequestOptions;

/*
 * Client: hurray_net_client_get with the request's layout preferences and
 * flags: `req` (borrowed; NULL = CPU, no preference, the connection's
 * request_flags). The server answers in the layout its selection rules give
 * (interchange.md § Server Layout Selection): the descriptor says which.
 * A layout list that does not encode (tag 0x00 or 0xFF, metadata on a tag
 * outside 0xF0-0xFE): HURRAY_ERR_PROTOCOL before anything is sent. Outputs,
 * ownership and other statuses as for hurray_net_client_get.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_get_ex(
    HurrayNetConnection *c, const char *key, const HurrayNetRequestOptions *req,
    HurrayDescriptor **out_descriptor, void **out_data, uint64_t *out_len, HurrayError *err);

/*
 * Client: as hurray_net_client_get, for a single tensor received straight
 * into `dst` (cap bytes, borrowed, the caller's memory, e.g. its part of a
 * larger buffer for a parallel shard): *out_descriptor owned, *out_len the
 * bytes written at dst. total_data_bytes above cap: answered with
 * MESSAGE_TOO_LARGE, HURRAY_ERR_STREAM_LIMIT; a composite head:
 * HURRAY_ERR_UNSUPPORTED (the stream closed with ERROR). On failure dst holds
 * whatever arrived.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_get_into(
    HurrayNetConnection *c, const char *key, uint8_t preferred_device, void *dst, uint64_t cap,
    HurrayDescriptor **out_descriptor, uint64_t *out_len, HurrayError *err);

/* Client: hurray_net_client_get_into with the request's preferences and flags
 * (`req` as for hurray_net_client_get_ex). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_get_into_ex(
    HurrayNetConnection *c, const char *key, const HurrayNetRequestOptions *req, void *dst,
    uint64_t cap, HurrayDescriptor **out_descriptor, uint64_t *out_len, HurrayError *err);

/*
 * Client: the next tensor of the composite response hurray_net_client_get
 * began, in pre-order (a nested composite's head, then its members), into
 * the same outputs with the same ownership. HURRAY_ERR_INVALID_STATE when no
 * response is open; other statuses as for hurray_net_client_get.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_get_next(
    HurrayNetConnection *c, HurrayDescriptor **out_descriptor, void **out_data,
    uint64_t *out_len, HurrayError *err);

/* Whether the response hurray_net_client_get began has tensors still to
 * come (a composite's members). While it has, other calls on `c` are
 * refused (HURRAY_ERR_INVALID_STATE). */
HURRAY_API bool hurray_net_client_response_open(const HurrayNetConnection *c);

/*
 * Client: pushes a tensor: `descriptor` (descriptor_len bytes) and `data`
 * (data_len bytes, the buffers in order; NULL allowed when 0), all borrowed,
 * under `key` (NUL-terminated UTF-8), and waits for TENSOR_PUT_ACK. An ERROR
 * from the server maps as for hurray_net_client_get.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_put(
    HurrayNetConnection *c, const char *key, const uint8_t *descriptor, uint32_t descriptor_len,
    const void *data, uint64_t data_len, HurrayError *err);

/*
 * Client: sends PING on a new stream and waits for the server's PONG on it
 * (keepalive; a round trip without data). An ERROR on that stream maps as
 * for hurray_net_client_get.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_client_ping(HurrayNetConnection *c,
                                                                HurrayError *err);

/*
 * Server: waits for CLIENT_HELLO, answers SERVER_HELLO advertising `hello`
 * (borrowed; NULL = CPU and standard memory only), then serves requests and
 * puts with `handlers` (borrowed) until the client closes the connection
 * (HURRAY_OK). Data frames are sent from the handler's buffer without a
 * copy. A message the session refuses is answered with ERROR and serving
 * goes on, unless the connection must close (then its status).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_server_serve(
    HurrayNetConnection *c, const HurrayNetHello *hello, const HurrayNetServerHandlers *handlers,
    HurrayError *err);

/*
 * Server, from inside a `get` handler: the descriptor it gives is shard
 * `shard_index` of `total_shards` of a tensor split for parallel transfer
 * (the TENSOR_DESCRIPTOR's transport fields; the descriptor carries the
 * shard section). Applies to that response only. The session refuses it
 * unless the request set PARALLEL_OK and the server advertised
 * PARALLEL_STREAMS.
 */
HURRAY_API void hurray_net_server_set_shard(HurrayNetConnection *c, uint32_t shard_index,
                                            uint32_t total_shards);

/*
 * Server, from inside a `get` or `next` handler: the TENSOR_REQUEST being
 * answered (its key, preferred layouts, preferred device, alignment and
 * flags) into *out (caller storage); its views are borrowed until the
 * response ends. False, *out zeroed, outside a handler, on a client
 * connection, or for NULL.
 */
HURRAY_API bool hurray_net_server_request(const HurrayNetConnection *c, HurrayNetRequest *out);

/* ---- layout selection (interchange.md § Server Layout Selection) ------------ */

/*
 * The layout tag a server answers a request with, for a tensor whose fields
 * are `f` (borrowed): the first entry of `preferred` (borrowed; a request's
 * preferred_layouts) that is f's stored layout tag, or, when `request_flags`
 * has HURRAY_NET_REQ_ALLOW_TRANSCODE and `transcode_limit` is not 0 (the
 * server transcodes, and advertises TRANSCODING), a tag the tensor
 * transcodes to (row-major or column-major; hurray_layout_transcode_size) in
 * at most `transcode_limit` bytes; an entry over the limit or not
 * transcodable is passed over (the spec's fall-through). No entry satisfied,
 * or an empty list: the stored tag. *out_bytes (NULL allowed) is the
 * transcoded size, 0 when the stored layout is chosen. `preferred` NULL is an
 * empty list; `f` NULL returns 0.
 */
HURRAY_API uint8_t hurray_net_layout_select(const HurrayNetLayoutList *preferred,
                                            uint32_t request_flags,
                                            const HurrayDescriptorFields *f,
                                            uint64_t transcode_limit, uint64_t *out_bytes);

/* ---- the server's table (POSIX) ---------------------------------------------- */

/* The reserved key of the catalog: a request for it is answered with a uint8
 * tensor listing every entry (u32 name length, the UTF-8 name, u32 descriptor
 * length, the encoded descriptor); no entry may take this name. */
#define HURRAY_NET_CATALOG_KEY "__hurray_catalog__"

/* The transcode limit hurray.serve and `hurray serve` use unless told
 * otherwise (256 MiB); a table's own default is 0, no transcoding. */
#define HURRAY_NET_DEFAULT_TRANSCODE_LIMIT ((uint64_t)256 << 20)

/*
 * A server's table: the tensors it serves by name, and the connection loop
 * serving them (hurray_net_table_serve) with the built-in names (the
 * catalog, shards "NAME#shard=K/N"), pushes when writable, and layout
 * transcoding within a limit. Thread-safe: entries may be added, and any
 * number of connections served at once, from any threads. A connection keeps
 * the entry it is sending alive even when a push or an add replaces it.
 */
typedef struct HurrayNetTable HurrayNetTable;

/* Options of a table (zero-initialise, then set what you need). */
typedef struct HurrayNetTableOptions {
  bool writable;            /* accept TENSOR_PUT into memory */
  uint64_t max_put_bytes;   /* writable: data of every pushed entry together (a push
                               over it: MESSAGE_TOO_LARGE) */
  int32_t timeout_ms;       /* a connection's longest wait for its client; 0 = the
                               connection default, -1 = none */
  uint32_t frame_size;      /* largest data frame sent; 0 = the connection default */
  uint64_t transcode_limit; /* bytes of the transcoded copies held at once by every
                               connection together (a copy holds its share until it
                               is sent; one that does not fit in what is left falls
                               through to the next preference or the stored layout);
                               0 = no transcoding (TRANSCODING is not advertised) */
  /* One line per request ("PEER GET 'name' 48 bytes", "PEER LIST 120 bytes",
   * "PEER PUT 'name' refused: over max_put_bytes", ...), `line` borrowed for
   * the call; called from the serving threads, from several at once: it must
   * be thread-safe. NULL: no log. */
  void (*log)(void *ctx, const char *line);
  void *log_ctx;
} HurrayNetTableOptions;

/* One tensor of an entry: its encoded descriptor (descriptor_len bytes,
 * borrowed for the call: copied) and the data of each buffer of its buffer
 * table (`buffer_count` pointers and sizes; each size at least the buffer's
 * byte_size, of which byte_size bytes are served). The data is borrowed while
 * the entry lives: a one-buffer tensor is served from it in place; the
 * buffers of a multi-buffer tensor are laid end to end once, by the add. */
typedef struct HurrayNetTableTensor {
  const uint8_t *descriptor;
  uint32_t descriptor_len;
  uint32_t buffer_count;
  const void *const *buffers;
  const uint64_t *sizes;
} HurrayNetTableTensor;

/* A new, empty table. `opts` borrowed (NULL = defaults: read-only, no
 * transcoding, no log). *out owned (hurray_net_table_destroy), NULL on
 * failure; HURRAY_ERR_INVALID_ARGUMENT for a timeout below -1,
 * HURRAY_ERR_OUT_OF_MEMORY. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_table_new(const HurrayNetTableOptions *opts,
                                                              HurrayNetTable **out,
                                                              HurrayError *err);

/* Frees a table (*t moved) and every entry (calling their release callbacks)
 * and sets *t to NULL; NULL and *t == NULL are no-ops. No connection may be
 * serving it. */
HURRAY_API void hurray_net_table_destroy(HurrayNetTable **t);

/*
 * Serves `count` tensors (borrowed array) under `key` (key_len bytes of
 * UTF-8, borrowed, copied), replacing the entry of that name if any: one
 * tensor, or a composite's head followed by its members in pre-order (a
 * member that is itself a composite: its head, then its members), each
 * member's descriptor as its parent presents it. `release` (NULL allowed) is
 * called once with `release_ctx` when the entry is freed (replaced and no
 * longer sent, or the table destroyed), from whichever thread drops it last;
 * never when the add fails. Refusals, nothing added:
 * HURRAY_ERR_INVALID_ARGUMENT for an empty key, one that is not UTF-8, the
 * catalog's key, buffers that do not match a descriptor's buffer table
 * ("tensors[1].sizes[0]"), or a count that is not the composite's tree; a
 * descriptor that does not decode, its status ("tensors[i].descriptor");
 * HURRAY_ERR_NULL_POINTER, HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_table_add(
    HurrayNetTable *t, const char *key, size_t key_len, const HurrayNetTableTensor *tensors,
    uint32_t count, void (*release)(void *ctx), void *release_ctx, HurrayError *err);

/* The number of entries (pushes included); 0 for NULL. Entries are never
 * removed: the count only grows and entry i keeps its key. */
HURRAY_API size_t hurray_net_table_count(HurrayNetTable *t);

/*
 * The key of entry `i` (in the order entries were first added): its bytes and
 * a NUL into out[0..capacity) (caller memory), its length (without the NUL)
 * into *out_len, also when the capacity is short (then
 * HURRAY_ERR_BUFFER_TOO_SMALL). HURRAY_ERR_INVALID_ARGUMENT for i out of
 * range; HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_table_key(HurrayNetTable *t, size_t i,
                                                              char *out, size_t capacity,
                                                              size_t *out_len, HurrayError *err);

/*
 * Serves one connection over `fd` (a connected socket; borrowed, never closed
 * here) from table `t` until the client closes it (HURRAY_OK): the HELLO
 * exchange (advertising CPU and standard memory, PARALLEL_STREAMS, the
 * layouts stored and, with a transcode limit, TRANSCODING and row-major and
 * column-major), then every request and push. `peer` (borrowed, NULL
 * allowed) names the client in log lines. Any number of calls may run at
 * once on one table, one per connection. A failure of the connection
 * (HURRAY_ERR_IO: the client vanished, timed out) or a refusal that closes
 * it ends the call with that status. HURRAY_ERR_UNSUPPORTED on Windows.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_net_table_serve(HurrayNetTable *t, int fd,
                                                                const char *peer,
                                                                HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_NET_H */
