/* HurrayBuffer: construction, reference counting, getters
 * (include/hurray/buffer.h; upstream docs/impl/c-ffi.md, buffer-protocol.md). */
#include "ffi/buffer_internal.h"

/* Devices whose base address is a real address (host or device pointer), so
 * that its alignment can be checked. The others (Metal, Vulkan, WebGPU,
 * OpenCL) may carry an opaque resource handle instead (buffer-protocol.md,
 * per-device memory model); private devices are agreed out of band. */
static bool device_has_address(uint8_t device_tag) {
  switch (device_tag) {
    case HURRAY_DEVICE_CPU:
    case HURRAY_DEVICE_CUDA:
    case HURRAY_DEVICE_ROCM:
    case HURRAY_DEVICE_HEXAGON:
    case HURRAY_DEVICE_LEVEL_ZERO:
      return true;
    default:
      return false;
  }
}

static HurrayStatus check_alignment(uint64_t byte_size, uint32_t alignment, HurrayError *err) {
  if (!hurray__is_pow2_u64(alignment))
    return hurray__fail(err, HURRAY_ERR_INVALID_LAYOUT, HURRAY_NO_OFFSET, "alignment",
                        "%u is not a power of two", (unsigned)alignment);
  if (byte_size != 0 && alignment < HURRAY_MIN_BUFFER_ALIGNMENT)
    return hurray__fail(err, HURRAY_ERR_INVALID_LAYOUT, HURRAY_NO_OFFSET, "alignment",
                        "%u is below the %u-byte minimum of a non-empty buffer",
                        (unsigned)alignment, (unsigned)HURRAY_MIN_BUFFER_ALIGNMENT);
  return HURRAY_OK;
}

/* The rules of a wire buffer handle (buffer-protocol.md), minus the reserved
 * byte, which a C ABI buffer does not have. */
static HurrayStatus check_declarations(uint64_t byte_size, uint32_t alignment,
                                       uint8_t device_tag, uint8_t sync_mode,
                                       uint8_t memory_class, HurrayError *err) {
  HurrayTagKind dk = hurray_device_tag_kind(device_tag);
  if (dk != HURRAY_TAG_NAMED && dk != HURRAY_TAG_PRIVATE)
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "device_tag",
                        "0x%02X is %s", (unsigned)device_tag,
                        dk == HURRAY_TAG_INVALID ? "invalid" : "reserved");
  if (hurray_sync_mode_kind(sync_mode) != HURRAY_TAG_NAMED)
    return hurray__fail(err, HURRAY_ERR_INVALID_SYNC_MODE, HURRAY_NO_OFFSET, "sync_mode",
                        "0x%02X is %s", (unsigned)sync_mode,
                        sync_mode == 0xFF ? "invalid" : "reserved");
  HurrayTagKind ck = hurray_memory_class_kind(memory_class);
  if (ck != HURRAY_TAG_NAMED && ck != HURRAY_TAG_PRIVATE)
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "memory_class",
                        "0x%02X is %s", (unsigned)memory_class,
                        ck == HURRAY_TAG_INVALID ? "invalid" : "reserved");
  HURRAY_TRY(check_alignment(byte_size, alignment, err));
  if (device_tag == HURRAY_DEVICE_CPU && sync_mode != HURRAY_SYNC_PRODUCER_SYNCED)
    return hurray__fail(err, HURRAY_ERR_INVALID_SYNC_MODE, HURRAY_NO_OFFSET, "sync_mode",
                        "a CPU buffer must be producer_synced, not %s",
                        hurray_sync_mode_name(sync_mode));
  if (!hurray_device_memory_class_valid(device_tag, memory_class))
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "memory_class",
                        "memory class 0x%02X is not valid on device 0x%02X",
                        (unsigned)memory_class, (unsigned)device_tag);
  return HURRAY_OK;
}

static HurrayBuffer *buffer_alloc(void) {
  HurrayBuffer *b = hurray__malloc(sizeof *b);
  if (b == NULL) return NULL;
  memset(b, 0, sizeof *b);
  b->magic = HURRAY__MAGIC_BUFFER;
  atomic_init(&b->counts, HURRAY__REF_ONE);
  hurray__handle_born(b);
  return b;
}

/* The last reference went: release the bytes and free the handle. */
static void buffer_finalize(HurrayBuffer *b) {
  void *data = b->data;
  bool owns = b->owns_data;
  HurrayReleaseCallback release = b->release;
  void *release_context = b->release_context;
  hurray__handle_bury(b, &b->magic);
  hurray__free(b);
  if (owns)
    hurray_free(data);
  else if (release != NULL)
    release(data, release_context);
}

HurrayStatus hurray_buffer_from_ptr_ex(void *data, uint64_t byte_size, uint32_t alignment,
                                       uint8_t device_tag, uint8_t sync_mode,
                                       uint8_t memory_class, HurrayReleaseCallback release,
                                       void *release_context, HurrayBuffer **out_handle,
                                       HurrayError *err) {
  if (out_handle == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out_handle",
                        "is NULL");
  if (data == NULL && byte_size != 0)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "data",
                        "is NULL for a buffer of %llu bytes", (unsigned long long)byte_size);
  *out_handle = NULL;
  HURRAY_TRY(check_declarations(byte_size, alignment, device_tag, sync_mode, memory_class,
                                err));
  if (data != NULL && device_has_address(device_tag)) {
    uintptr_t addr = (uintptr_t)data;
    if ((addr & ((uintptr_t)alignment - 1u)) != 0)
      return hurray__fail(err, HURRAY_ERR_MISALIGNED, HURRAY_NO_OFFSET, "data",
                          "address 0x%llx is not aligned to the declared %u bytes",
                          (unsigned long long)addr, (unsigned)alignment);
    if (byte_size > (uint64_t)(UINTPTR_MAX - addr))
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "byte_size",
                          "%llu bytes from 0x%llx run past the end of the address space",
                          (unsigned long long)byte_size, (unsigned long long)addr);
  }
  HurrayBuffer *b = buffer_alloc();
  if (b == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate a buffer handle");
  b->data = data;
  b->byte_size = byte_size;
  b->alignment = alignment;
  b->device_tag = device_tag;
  b->sync_mode = sync_mode;
  b->memory_class = memory_class;
  b->owns_data = false;
  b->release = release;
  b->release_context = release_context;
  *out_handle = b;
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_from_ptr(void *data, uint64_t byte_size, uint32_t alignment,
                                    uint8_t device_tag, uint8_t sync_mode, uint8_t memory_class,
                                    HurrayReleaseCallback release, void *release_context,
                                    HurrayBuffer **out_handle) {
  return hurray_buffer_from_ptr_ex(data, byte_size, alignment, device_tag, sync_mode,
                                   memory_class, release, release_context, out_handle, NULL);
}

HurrayStatus hurray_buffer_new(uint64_t byte_size, uint32_t alignment, uint32_t flags,
                               HurrayBuffer **out_handle, HurrayError *err) {
  if (out_handle == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out_handle",
                        "is NULL");
  *out_handle = NULL;
  if ((flags & ~(uint32_t)HURRAY_BUFFER_ZEROED) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "flags",
                        "unknown flag bits 0x%X", (unsigned)(flags & ~HURRAY_BUFFER_ZEROED));
  HURRAY_TRY(check_alignment(byte_size, alignment, err));
  /* No object may be larger than PTRDIFF_MAX bytes: refuse before asking. */
  if (byte_size > (uint64_t)PTRDIFF_MAX)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "byte_size",
                        "%llu bytes exceed the largest possible object",
                        (unsigned long long)byte_size);

  void *data = NULL;
  if (byte_size != 0) {
    data = hurray_alloc((size_t)byte_size, alignment);
    if (data == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "byte_size",
                          "cannot allocate %llu bytes aligned to %u",
                          (unsigned long long)byte_size, (unsigned)alignment);
    if (((uintptr_t)data & ((uintptr_t)alignment - 1u)) != 0) {
      hurray_free(data);
      return hurray__fail(err, HURRAY_ERR_MISALIGNED, HURRAY_NO_OFFSET, "data",
                          "the installed allocator returned 0x%llx for an alignment of %u",
                          (unsigned long long)(uintptr_t)data, (unsigned)alignment);
    }
    if ((flags & HURRAY_BUFFER_ZEROED) != 0) memset(data, 0, (size_t)byte_size);
  }
  HurrayBuffer *b = buffer_alloc();
  if (b == NULL) {
    hurray_free(data);
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate a buffer handle");
  }
  b->data = data;
  b->byte_size = byte_size;
  b->alignment = alignment;
  b->device_tag = HURRAY_DEVICE_CPU;
  b->sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  b->memory_class = HURRAY_MEMORY_STANDARD;
  b->owns_data = true;
  *out_handle = b;
  return HURRAY_OK;
}

/* ---- references ----------------------------------------------------------- */

HurrayStatus hurray_buffer_retain(HurrayBuffer *buffer) {
  if (buffer == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  uint64_t v = atomic_load(&buffer->counts);
  do {
    if (HURRAY__REFS(v) == UINT32_MAX) return HURRAY_ERR_INVALID_STATE;
  } while (!atomic_compare_exchange_weak(&buffer->counts, &v, v + HURRAY__REF_ONE));
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_destroy(HurrayBuffer *buffer) {
  if (buffer == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  uint64_t v = atomic_load(&buffer->counts);
  do {
    /* Every reference left belongs to a list: the caller's pointer is a borrow. */
    if (HURRAY__LISTED(v) >= HURRAY__REFS(v)) return HURRAY_ERR_INVALID_STATE;
  } while (!atomic_compare_exchange_weak(&buffer->counts, &v, v - HURRAY__REF_ONE));
  if (HURRAY__REFS(v) == 1) buffer_finalize(buffer);
  return HURRAY_OK;
}

HurrayStatus hurray__buffer_list_acquire(HurrayBuffer *b) {
  uint64_t v = atomic_load(&b->counts);
  do {
    if (HURRAY__LISTED(v) >= HURRAY__REFS(v)) return HURRAY_ERR_INVALID_STATE;
  } while (!atomic_compare_exchange_weak(&b->counts, &v, v + HURRAY__LISTED_ONE));
  return HURRAY_OK;
}

void hurray__buffer_list_release(HurrayBuffer *b) {
  uint64_t v = atomic_fetch_sub(&b->counts, HURRAY__LISTED_ONE + HURRAY__REF_ONE);
  if (HURRAY__REFS(v) == 1) buffer_finalize(b);
}

/* ---- getters -------------------------------------------------------------- */

#define GETTER(name, type, expr)                                    \
  HurrayStatus name(const HurrayBuffer *buffer, type *out) {        \
    if (buffer == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER; \
    HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER)); \
    *out = (expr);                                                  \
    return HURRAY_OK;                                               \
  }

GETTER(hurray_buffer_data_ptr, void *, buffer->data)
GETTER(hurray_buffer_byte_size, uint64_t, buffer->byte_size)
GETTER(hurray_buffer_alignment, uint32_t, buffer->alignment)
GETTER(hurray_buffer_device_tag, uint8_t, buffer->device_tag)
GETTER(hurray_buffer_sync_mode, uint8_t, buffer->sync_mode)
GETTER(hurray_buffer_memory_class, uint8_t, buffer->memory_class)

#undef GETTER

HurrayStatus hurray_buffer_wire_handle(const HurrayBuffer *buffer, HurrayBufferHandle *out) {
  if (buffer == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  out->byte_size = buffer->byte_size;
  out->alignment = buffer->alignment;
  out->device_tag = buffer->device_tag;
  out->sync_mode = buffer->sync_mode;
  out->memory_class = buffer->memory_class;
  out->reserved = 0;
  return HURRAY_OK;
}
