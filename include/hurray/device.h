/*
 * hurray/device.h - devices, memory classes and sync modes of a buffer handle
 * (spec: docs/spec/buffer-protocol.md; docs/internals/decisions.md § Descriptor encoding).
 */
#ifndef HURRAY_DEVICE_H
#define HURRAY_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/dtype.h"
#include "hurray/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Buffers shared between components MUST be aligned at least this much. */
#define HURRAY_MIN_BUFFER_ALIGNMENT 64u
/* Page alignment (the default data alignment of .hrry files). */
#define HURRAY_PAGE_ALIGNMENT 4096u
/* Maximum rank of a tensor (docs/spec/data-model.md § Rank;
 * docs/adr/ADR-008-normative-rank-cap-64.md). */
#define HURRAY_MAX_RANK 64u
/* Shape value meaning "this dimension is not statically known". */
#define HURRAY_DYNAMIC_DIM UINT64_MAX

/* X(tag, NAME, "name") - device tags (buffer handle byte 12). */
#define HURRAY_DEVICE_TABLE(X)      \
  X(0x00, CPU, "cpu")               \
  X(0x01, CUDA, "cuda")             \
  X(0x02, ROCM, "rocm")             \
  X(0x03, METAL, "metal")           \
  X(0x04, VULKAN, "vulkan")         \
  X(0x05, WEBGPU, "webgpu")         \
  X(0x06, HEXAGON, "hexagon")       \
  X(0x07, LEVEL_ZERO, "level_zero") \
  X(0x08, OPENCL, "opencl")

enum HurrayDeviceTag {
#define HURRAY_X_DEV_(tag, NAME, name) HURRAY_DEVICE_##NAME = (tag),
  HURRAY_DEVICE_TABLE(HURRAY_X_DEV_)
#undef HURRAY_X_DEV_
  HURRAY_DEVICE_PRIVATE_FIRST = 0xF0,
  HURRAY_DEVICE_PRIVATE_LAST = 0xFE
};

/* X(tag, NAME, "name") - memory classes (buffer handle byte 14). */
#define HURRAY_MEMORY_CLASS_TABLE(X)   \
  X(0x00, STANDARD, "standard")        \
  X(0x01, HOST_PINNED, "host_pinned")  \
  X(0x02, UNIFIED, "unified")          \
  X(0x03, PEER, "peer")

enum HurrayMemoryClass {
#define HURRAY_X_MC_(tag, NAME, name) HURRAY_MEMORY_##NAME = (tag),
  HURRAY_MEMORY_CLASS_TABLE(HURRAY_X_MC_)
#undef HURRAY_X_MC_
  HURRAY_MEMORY_PRIVATE_FIRST = 0xF0,
  HURRAY_MEMORY_PRIVATE_LAST = 0xFE
};

/* X(tag, NAME, "name") - sync modes (buffer handle byte 13). */
#define HURRAY_SYNC_MODE_TABLE(X)               \
  X(0x00, PRODUCER_SYNCED, "producer_synced")   \
  X(0x01, EVENT, "event")                       \
  X(0x02, CONSUMER_STREAM, "consumer_stream")

enum HurraySyncMode {
#define HURRAY_X_SM_(tag, NAME, name) HURRAY_SYNC_##NAME = (tag),
  HURRAY_SYNC_MODE_TABLE(HURRAY_X_SM_)
#undef HURRAY_X_SM_
  HURRAY_SYNC_MODE_COUNT_ = 3
};

/* Classification of tag bytes (reserved and invalid ones are rejected on decode). */
HURRAY_API HurrayTagKind hurray_device_tag_kind(uint8_t device_tag);
HURRAY_API HurrayTagKind hurray_memory_class_kind(uint8_t memory_class);
HURRAY_API HurrayTagKind hurray_sync_mode_kind(uint8_t sync_mode);

/* Names ("cuda", "host_pinned", "event"); NULL for bytes that are not named.
 * Static strings (borrowed, never free). */
HURRAY_API const char *hurray_device_name(uint8_t device_tag);
HURRAY_API const char *hurray_memory_class_name(uint8_t memory_class);
HURRAY_API const char *hurray_sync_mode_name(uint8_t sync_mode);

/* Reverse lookups (`name` borrowed; the out byte is caller storage, written on
 * success only); HURRAY_ERR_INVALID_TYPE (devices, classes) or
 * HURRAY_ERR_INVALID_SYNC_MODE when the name is unknown, HURRAY_ERR_NULL_POINTER
 * when name or the out pointer is NULL. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_device_from_name(
    const char *name, uint8_t *out_tag);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_memory_class_from_name(
    const char *name, uint8_t *out);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_sync_mode_from_name(const char *name, uint8_t *out);

/*
 * The (device, memory class) validity table of buffer-protocol.md. True when a
 * buffer may declare this pair: peer memory only on CUDA, ROCm, Vulkan and
 * Level Zero (not on CPU, Metal, Hexagon, OpenCL); WebGPU only standard; a
 * private memory class needs a private device; a private device accepts
 * standard and private classes. False whenever either byte is reserved or
 * invalid.
 */
HURRAY_API bool hurray_device_memory_class_valid(uint8_t device_tag, uint8_t memory_class);

/* ---- alignment of an address ------------------------------------------------
 *
 * hurray_alignment_measure: the largest power of two dividing `data`, capped at
 * HURRAY_PAGE_ALIGNMENT (the cap for NULL too); 1 for an empty buffer (size 0).
 *
 * hurray_alignment_policy: what a buffer at `data` declares when nothing else
 * says (a binding borrowing memory): 1 when empty, else the measured value
 * capped at HURRAY_MIN_BUFFER_ALIGNMENT. Every owned allocation and every
 * borrowed address past the floor declares the floor, whatever the address
 * (the same data from two allocations gives the same descriptor); an address
 * below it declares what it holds, never more.
 *
 * hurray_alignment_satisfied: true when `data` is a multiple of `alignment`
 * (any address for size 0); false when `alignment` is not a power of two.
 *
 * hurray_alignment_for_reader: what a reader declares for a buffer whose
 * descriptor promised `declared` (a round trip gives back the descriptor
 * that went in), in *out. True when the bytes must first be copied into
 * memory aligned to *out: the address misses a promise of at most a page and
 * `can_copy` (host memory this process can read). Otherwise false: the
 * promise when the address keeps it; the measured value when it does not and
 * the promise is larger than a page (a mapped file places data on pages, not
 * on 2 MiB boundaries) or no copy can be made; the policy value for a
 * promise that is not a power of two. Never declares what the address does
 * not hold.
 */
HURRAY_API uint32_t hurray_alignment_measure(const void *data, uint64_t size);
HURRAY_API uint32_t hurray_alignment_policy(const void *data, uint64_t size);
HURRAY_API bool hurray_alignment_satisfied(const void *data, uint64_t size, uint64_t alignment);
HURRAY_API bool hurray_alignment_for_reader(const void *data, uint64_t size, uint32_t declared,
                                            bool can_copy, uint32_t *out);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_DEVICE_H */
