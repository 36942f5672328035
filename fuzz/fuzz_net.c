/*
 * libFuzzer target: network transport frames through a session.
 *
 * Input: one byte choosing the session's role (bit 0: server) and whether
 * private types are agreed (bit 1), then records of one direction byte
 * (bit 0: this side sends, else the peer does) and one message (12-byte
 * header + payload_length bytes). A received record goes through
 * hurray_net_session_receive_header and _receive_payload; a sent one is
 * decoded with the codec and offered to hurray_net_session_send.
 *
 * Properties checked on every input (a violation traps):
 *  - nothing crashes, reads out of bounds or leaks (ASan);
 *  - a refusal is exactly a failing status, with an error code from the
 *    spec's table, and the detail names the same status;
 *  - an accepted or sent message encodes back to exactly its bytes;
 *  - the ERROR a refusal asks for can be sent, unless the connection closes;
 *  - a closed connection stays closed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hurray/hurray.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
  do {              \
    if (!(cond)) __builtin_trap(); \
  } while (0)

/* The message re-encodes to the bytes it came from; a HELLO may differ in
 * what decoding dropped (fields a newer version appended) or supplied (the
 * count of an absent memory class list). */
static void same_bytes(const HurrayNetMessage *m, const uint8_t *frame, size_t n) {
  uint8_t *out = malloc(n + 2);
  CHECK(out != NULL);
  size_t len = 0;
  CHECK(hurray_net_message_encode(m, out, n + 2, &len, NULL) == HURRAY_OK);
  if (m->type == HURRAY_NET_CLIENT_HELLO || m->type == HURRAY_NET_SERVER_HELLO) {
    size_t common = len < n ? len : n;
    CHECK(len <= n + 2 && memcmp(out + 12, frame + 12, common - 12 - 2) == 0);
  } else {
    CHECK(len == n && memcmp(out, frame, n) == 0);
  }
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  HurrayNetSessionOptions o = {HURRAY_NET_MIN_MESSAGE_SIZE, 4, 0, (data[0] & 2) != 0};
  HurrayNetRole role = (data[0] & 1) ? HURRAY_NET_ROLE_SERVER : HURRAY_NET_ROLE_CLIENT;
  HurrayNetSession *s = NULL;
  CHECK(hurray_net_session_new(role, &o, &s, NULL) == HURRAY_OK);
  size_t pos = 1;
  while (size - pos >= 1 + HURRAY_NET_HEADER_LEN) {
    bool outgoing = data[pos] & 1;
    const uint8_t *frame = data + pos + 1;
    size_t left = size - pos - 1;
    uint32_t plen = (uint32_t)frame[8] | ((uint32_t)frame[9] << 8) |
                    ((uint32_t)frame[10] << 16) | ((uint32_t)frame[11] << 24);
    if (plen > left - HURRAY_NET_HEADER_LEN) break;
    size_t n = HURRAY_NET_HEADER_LEN + plen;
    pos += 1 + n;
    bool closed = hurray_net_session_state(s) == HURRAY_NET_STATE_CLOSED;
    HurrayError e;
    HurrayNetHeader h;
    HurrayNetMessage m;
    if (outgoing) {
      if (hurray_net_header_decode(frame, n, UINT32_MAX, &h, NULL) != HURRAY_OK) continue;
      if (hurray_net_message_decode(&h, frame + HURRAY_NET_HEADER_LEN, plen, &m, NULL) !=
          HURRAY_OK)
        continue;
      same_bytes(&m, frame, n);
      HurrayStatus st = hurray_net_session_send(s, &m, &e);
      if (st != HURRAY_OK) CHECK(e.status == st);
      if (closed) CHECK(st == HURRAY_ERR_INVALID_STATE);
      continue;
    }
    HurrayNetVerdict v;
    HurrayStatus st = hurray_net_session_receive_header(s, frame, n, &h, &v, &e);
    if (st == HURRAY_OK) {
      CHECK(v.action == HURRAY_NET_ACCEPT);
      st = hurray_net_session_receive_payload(s, &h, frame + HURRAY_NET_HEADER_LEN, plen, &m, &v,
                                              &e);
      if (st == HURRAY_OK) {
        CHECK(v.action == HURRAY_NET_ACCEPT || v.action == HURRAY_NET_DISCARD);
        same_bytes(&m, frame, n);
        continue;
      }
    }
    CHECK(e.status == st);
    if (closed) {
      CHECK(st == HURRAY_ERR_INVALID_STATE);
      continue;
    }
    CHECK(v.action == HURRAY_NET_REFUSE);
    CHECK(hurray_net_error_code_name(v.error_code) != NULL);
    if (v.close_connection || v.stream_id == 0) break;
    /* Answer as the verdict says. */
    HurrayNetMessage err;
    memset(&err, 0, sizeof err);
    err.type = HURRAY_NET_ERROR;
    err.stream_id = v.stream_id;
    err.u.error.code = v.error_code;
    CHECK(hurray_net_session_send(s, &err, NULL) == HURRAY_OK);
  }
  hurray_net_session_destroy(&s);
  return 0;
}
