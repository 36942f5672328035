/*
 * The HurrayBuffer object and the hooks buffer lists use to move references
 * in and out of it. Never installed.
 */
#ifndef HURRAY_FFI_BUFFER_INTERNAL_H
#define HURRAY_FFI_BUFFER_INTERNAL_H

#include <stdatomic.h>

#include "internal/handles.h"
#include "hurray/buffer.h"

/*
 * Reference counts, packed in one atomic word so that one load sees both:
 * low 32 bits  - references in existence (the buffer is freed at 0);
 * high 32 bits - how many of them are owned by lists.
 * Invariant: listed <= refs. When listed == refs, nobody but lists holds the
 * buffer, so a plain destroy or push from the outside is refused.
 */
#define HURRAY__REF_ONE UINT64_C(1)
#define HURRAY__LISTED_ONE (UINT64_C(1) << 32)
#define HURRAY__REFS(v) ((uint32_t)(v))
#define HURRAY__LISTED(v) ((uint32_t)((v) >> 32))

struct HurrayBuffer {
  uint64_t magic; /* HURRAY__MAGIC_BUFFER while live; first field */
  _Atomic(uint64_t) counts;
  void *data;
  uint64_t byte_size;
  uint32_t alignment;
  uint8_t device_tag;
  uint8_t sync_mode;
  uint8_t memory_class;
  bool owns_data; /* data came from hurray_alloc and is freed with the handle */
  HurrayReleaseCallback release;
  void *release_context;
};

/* Moves one of the caller's references to a list: HURRAY_ERR_INVALID_STATE
 * when every reference already belongs to lists. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__buffer_list_acquire(HurrayBuffer *b);

/* Drops a list-owned reference (releasing the buffer if it was the last). */
HURRAY_INTERNAL void hurray__buffer_list_release(HurrayBuffer *b);

#endif /* HURRAY_FFI_BUFFER_INTERNAL_H */
