/* Device tags, memory classes, sync modes (include/hurray/device.h;
 * spec: buffer-protocol.md). */
#include <string.h>

#include "hurray/device.h"
#include "internal/common.h"

HurrayTagKind hurray_device_tag_kind(uint8_t tag) {
  if (tag == 0xFF) return HURRAY_TAG_INVALID;
  if (tag <= HURRAY_DEVICE_OPENCL) return HURRAY_TAG_NAMED;
  if (tag >= 0xF0) return HURRAY_TAG_PRIVATE;
  return HURRAY_TAG_RESERVED;
}

HurrayTagKind hurray_memory_class_kind(uint8_t c) {
  if (c == 0xFF) return HURRAY_TAG_INVALID;
  if (c <= HURRAY_MEMORY_PEER) return HURRAY_TAG_NAMED;
  if (c >= 0xF0) return HURRAY_TAG_PRIVATE;
  return HURRAY_TAG_RESERVED;
}

HurrayTagKind hurray_sync_mode_kind(uint8_t m) {
  return m < HURRAY_SYNC_MODE_COUNT_ ? HURRAY_TAG_NAMED : HURRAY_TAG_INVALID;
}

const char *hurray_device_name(uint8_t tag) {
  switch (tag) {
#define HURRAY_X_(t, NAME, name) \
  case (t):                      \
    return name;
    HURRAY_DEVICE_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      return NULL;
  }
}

const char *hurray_memory_class_name(uint8_t c) {
  switch (c) {
#define HURRAY_X_(t, NAME, name) \
  case (t):                      \
    return name;
    HURRAY_MEMORY_CLASS_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      return NULL;
  }
}

const char *hurray_sync_mode_name(uint8_t m) {
  switch (m) {
#define HURRAY_X_(t, NAME, name) \
  case (t):                      \
    return name;
    HURRAY_SYNC_MODE_TABLE(HURRAY_X_)
#undef HURRAY_X_
    default:
      return NULL;
  }
}

#define LOOKUP_BODY(TABLE, errst)                      \
  if (name == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER; \
  TABLE(LOOKUP_ONE_)                                   \
  return errst;
#define LOOKUP_ONE_(t, NAME, nm) \
  if (strcmp(name, nm) == 0) {   \
    *out = (t);                  \
    return HURRAY_OK;            \
  }

HurrayStatus hurray_device_from_name(const char *name, uint8_t *out) {
  LOOKUP_BODY(HURRAY_DEVICE_TABLE, HURRAY_ERR_INVALID_TYPE)
}
HurrayStatus hurray_memory_class_from_name(const char *name, uint8_t *out) {
  LOOKUP_BODY(HURRAY_MEMORY_CLASS_TABLE, HURRAY_ERR_INVALID_TYPE)
}
HurrayStatus hurray_sync_mode_from_name(const char *name, uint8_t *out) {
  LOOKUP_BODY(HURRAY_SYNC_MODE_TABLE, HURRAY_ERR_INVALID_SYNC_MODE)
}

bool hurray_device_memory_class_valid(uint8_t device, uint8_t cls) {
  HurrayTagKind dk = hurray_device_tag_kind(device);
  HurrayTagKind ck = hurray_memory_class_kind(cls);
  if (dk == HURRAY_TAG_PRIVATE) return cls == HURRAY_MEMORY_STANDARD || ck == HURRAY_TAG_PRIVATE;
  if (dk != HURRAY_TAG_NAMED || ck != HURRAY_TAG_NAMED) return false;
  switch (device) {
    case HURRAY_DEVICE_CUDA:
    case HURRAY_DEVICE_ROCM:
    case HURRAY_DEVICE_VULKAN:
    case HURRAY_DEVICE_LEVEL_ZERO:
      return true;
    case HURRAY_DEVICE_WEBGPU:
      return cls == HURRAY_MEMORY_STANDARD;
    default: /* CPU, Metal, Hexagon, OpenCL: no peer memory */
      return cls != HURRAY_MEMORY_PEER;
  }
}
