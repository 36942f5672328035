/*
 * core/buffer.h - one buffer of a tensor and what keeps its memory alive
 * (layer 1).
 *
 * A buffer is borrowed (a held buffer-protocol export, or a strong reference
 * to the object keeping the memory alive) or owned (allocated 64-byte aligned
 * here, freed with hurray_free). Alignment is measured, never assumed.
 */
#ifndef HURRAY_PY_CORE_BUFFER_H
#define HURRAY_PY_CORE_BUFFER_H

#include "util/state.h"

/* One buffer of a tensor. A plain value: tensors own an array of them. */
typedef struct HrpyBuffer {
  uint8_t *data;   /* first byte (may be NULL when size is 0) */
  uint64_t size;   /* declared byte_size */
  PyObject *owner; /* strong reference keeping `data` alive, or NULL */
  Py_buffer view;  /* held buffer-protocol export (view.obj != NULL) */
  void *owned;     /* memory this buffer owns (hurray_free), or NULL */
  bool readonly;
  uint8_t sync_mode; /* HURRAY_SYNC_* declared for this buffer (0: producer_synced) */
  /* `data` is host memory this process can read, whatever device the tensor
   * declares (a device "declaration" over host bytes, a buffer read from a
   * file or stream). Held exports and owned memory are host memory anyway;
   * see hrpy_tensor_buffer_is_host. */
  bool host;
} HrpyBuffer;

/* Releases what a buffer holds (safe on zeroed entries). */
void hrpy_buffer_release(HrpyBuffer *b);

/*
 * Acquires a buffer-protocol object as buffer `index` of a tensor being
 * built, applying the copy policy (copy: -1 None, 0 False, 1 True): borrow
 * when the address meets the 64-byte floor, else copy (None) or raise
 * hurray.BufferError naming the index, the measured alignment and the floor
 * (False). The object must be C-contiguous. A Python buffer is host memory
 * whatever device the tensor declares (out->host is set).
 */
int hrpy_buffer_acquire(HrpyState *st, PyObject *obj, uint32_t index, int copy,
                        const char *context, HrpyBuffer *out);

/* hrpy_buffer_acquire of every item of `seq` (a list or tuple), buffer i being
 * item i: a PyMem array of *n entries (free with PyMem_Free once they are moved
 * or released), or NULL with an exception set and nothing held. More than
 * HURRAY_MAX_BUFFERS items: InvalidDescriptorError naming `context`. */
HrpyBuffer *hrpy_buffers_acquire(HrpyState *st, PyObject *seq, int copy, const char *context,
                                 uint32_t *n);

/* Replaces what `b` holds with an owned copy of its bytes in memory aligned to
 * `align` (at least HURRAY_MIN_BUFFER_ALIGNMENT), read-only as `readonly`
 * says; the copy policy and the readers' declared alignment both use it.
 * MemoryError (-1, `b` unchanged) when the memory cannot be had. */
int hrpy_buffer_copy_to_owned(HrpyBuffer *b, size_t align, bool readonly);

/* Applies the copy policy to a buffer already described by data/size/owner:
 * copies it into owned memory when required (releasing the borrow);
 * `can_copy` false refuses a needed copy (memory this process cannot read). */
int hrpy_buffer_apply_copy_policy(HrpyState *st, HrpyBuffer *b, uint32_t index, int copy,
                                  bool can_copy, const char *context);

#endif /* HURRAY_PY_CORE_BUFFER_H */
