/* Helpers shared by the network transport's C tests (test_net_*.c). */
#ifndef HURRAY_TEST_NET_UTIL_H
#define HURRAY_TEST_NET_UTIL_H

#include <string.h>

#include "testutil.h"

/* The encoded descriptor of a group head of `members` members over 12
 * float32 elements, into out[0..cap): its length. */
static inline uint32_t net_group_head(uint32_t members, uint8_t *out, size_t cap) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  const uint64_t shape[1] = {12};
  f.version_major = 1;
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 1;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_COMPOSITE;
  f.layout.u.composite.rule = HURRAY_COMPOSITE_GROUP;
  f.layout.u.composite.combine_op = HURRAY_COMBINE_NONE;
  f.layout.u.composite.member_count = members;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e) != HURRAY_OK)
    fail_msg("%s", e.message);
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, cap, &n), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  return (uint32_t)n;
}

#endif /* HURRAY_TEST_NET_UTIL_H */
