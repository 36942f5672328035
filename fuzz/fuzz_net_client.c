/*
 * libFuzzer target: the client's frame decoding in the network transport.
 * Hostile bytes from a peer through a client session and a client connection
 * over a socketpair; the input format and the properties checked are in
 * fuzz_net_common.h.
 */
#include "fuzz_net_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_net(HURRAY_NET_ROLE_CLIENT, data, size);
}
