/*
 * The alignment of a buffer's address (include/hurray/device.h, "alignment
 * of an address"): what an address holds, what a binding declares for
 * memory it borrows (docs/internals/decisions.md, "What a buffer declares"),
 * and what a reader declares for a buffer whose descriptor promised a value
 * (the Python package's file, stream and network readers).
 */
#include "hurray/device.h"

#include "internal/common.h"

uint32_t hurray_alignment_measure(const void *data, uint64_t size) {
  if (size == 0) return 1;
  uintptr_t a = (uintptr_t)data;
  if (a == 0) return HURRAY_PAGE_ALIGNMENT;
  uintptr_t low = a & (~a + 1);
  return low >= HURRAY_PAGE_ALIGNMENT ? HURRAY_PAGE_ALIGNMENT : (uint32_t)low;
}

uint32_t hurray_alignment_policy(const void *data, uint64_t size) {
  if (size == 0) return 1;
  uint32_t measured = hurray_alignment_measure(data, size);
  return measured >= HURRAY_MIN_BUFFER_ALIGNMENT ? HURRAY_MIN_BUFFER_ALIGNMENT : measured;
}

bool hurray_alignment_satisfied(const void *data, uint64_t size, uint64_t alignment) {
  if (size == 0) return true;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return false;
  return ((uint64_t)(uintptr_t)data & (alignment - 1)) == 0;
}

bool hurray_alignment_for_reader(const void *data, uint64_t size, uint32_t declared,
                                 bool can_copy, uint32_t *out) {
  bool pow2 = declared != 0 && (declared & (declared - 1)) == 0;
  if (pow2 && hurray_alignment_satisfied(data, size, declared)) {
    *out = declared;
    return false;
  }
  if (!pow2) {
    *out = hurray_alignment_policy(data, size);
    return false;
  }
  if (!can_copy || declared > HURRAY_PAGE_ALIGNMENT) {
    uint32_t measured = hurray_alignment_measure(data, size);
    *out = measured < declared ? measured : declared;
    return false;
  }
  *out = declared;
  return true;
}
