/*
 * core/tensor.h - the core of hurray.Tensor (layer 1): the object (opaque
 * outside core/), its accessors and checks, and every way to build one.
 *
 * The Python surface of the class (constructor arguments, getters, methods)
 * is assembled in tensor.c from this core and the interop files; what a
 * tensor is lives here.
 */
#ifndef HURRAY_PY_CORE_TENSOR_H
#define HURRAY_PY_CORE_TENSOR_H

#include "core/buffer.h"
#include "core/state.h"

typedef struct HrpyTensor HrpyTensor;

static inline int hrpy_tensor_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->core->TensorType);
}

/* Creates the Tensor type from the surface slots the caller gives (doc, new,
 * repr, getset, methods, ...; terminated by {0, NULL}): the core adds the
 * object's size, lifetime (traverse, clear, dealloc) and weak references.
 * New reference, or NULL with an exception set. */
PyTypeObject *hrpy_tensor_type_new(PyObject *m, const PyType_Slot *surface);

/* ---- accessors (`t` must be a hurray.Tensor; results borrowed) ------------- */

/* A read-only view of a tensor for the files that read one (interop, I/O):
 * everything borrowed from `self`, valid while it lives. */
typedef struct HrpyTensorView {
  PyObject *self;                    /* the tensor */
  const HurrayDescriptorFields *f;   /* its descriptor fields (immutable) */
  const HrpyBuffer *bufs;            /* nbuf entries */
  uint32_t nbuf;
  PyObject *dtype;                   /* Dtype singleton */
  PyObject *device;                  /* Device */
} HrpyTensorView;
HrpyTensorView hrpy_tensor_view(PyObject *t);

/* The descriptor fields (valid for the tensor's lifetime; immutable). */
const HurrayDescriptorFields *hrpy_tensor_fields(PyObject *t);
/* Buffers held (the buffer table's length, or 0 for an opaque layout). */
uint32_t hrpy_tensor_nbuf(PyObject *t);
/* Buffer i (i < hrpy_tensor_nbuf). */
const HrpyBuffer *hrpy_tensor_buffer(PyObject *t, uint32_t i);
/* The Dtype singleton and the Device object. */
PyObject *hrpy_tensor_dtype(PyObject *t);
PyObject *hrpy_tensor_device(PyObject *t);
/* Whether the descriptor itself exists yet (false for a lazily described
 * dense tensor until hrpy_tensor_desc builds it). */
bool hrpy_tensor_is_described(PyObject *t);
/* The descriptor, built from the fields on first use; NULL with an exception
 * set when that fails (memory). */
const HurrayDescriptor *hrpy_tensor_desc(HrpyState *st, PyObject *t);
/* The tuple of hurray.BufferHandle (new reference; cached). */
PyObject *hrpy_tensor_buffer_handles(HrpyState *st, PyObject *t);

/* A borrowed view of buffer i for a tensor built over the same memory (a
 * transposed view, a buffer or component view): data, declared size,
 * read-only flag, sync mode and host-ness of the original, with a new
 * reference to `t` as owner (released with the view). */
void hrpy_tensor_borrow_buffer(PyObject *t, uint32_t i, HrpyBuffer *out);

/* True when buffer i's bytes can be read by this process: a CPU tensor, or a
 * buffer known to be host memory (HrpyBuffer.host, a held export, owned
 * memory). A device tensor imported from elsewhere (DLPack, a foreign
 * capsule) holds device addresses that must never be read. */
bool hrpy_tensor_buffer_is_host(PyObject *t, uint32_t i);

/* Checks that the tensor's bytes may be handed out (every buffer is
 * producer_synced); else hurray.UnsupportedError naming `what` and the mode. */
int hrpy_tensor_check_readable(HrpyState *st, PyObject *t, const char *what);
/* Checks that every buffer's bytes can be read to be written out (save, a
 * stream): else hurray.UnsupportedError naming `what` and the device. */
int hrpy_tensor_check_host(HrpyState *st, PyObject *t, const char *what);

/*
 * Checks what the index buffers of a host sparse or block-paged tensor
 * contain (hurray_layout_validate_index_buffers): InvalidDescriptorError
 * before any consumer can read out of bounds. Dense tensors and device
 * buffers (which this process cannot read) pass.
 */
int hrpy_tensor_validate_index_buffers(HrpyState *st, PyObject *t, const char *context);

/* hurray_strided_geometry of a tensor: its rules, raised as the exception of
 * the status (hurray.UnsupportedError) naming `what`. */
int hrpy_tensor_strided_geometry(HrpyState *st, const HrpyTensorView *t, int64_t unit,
                                 int64_t *shape, int64_t *strides, const char *what);

/* ---- construction (core/build.c) ------------------------------------------ */

/* Optional sections and options for hrpy_tensor_build_ex (all borrowed for
 * the call; a zeroed struct means none, strict). */
typedef struct HrpySections {
  const HurrayQuantization *quantization;
  const HurrayShard *shard;
  const HurrayStatistics *statistics;
  const HurrayCompositeMember *member;
  const HurrayExtensionType *extension_type;
  uint32_t flags;          /* kept verbatim for opaque layouts; reserved bits (permissive) */
  const uint8_t *trailing; /* bytes of a newer minor version, written back verbatim */
  uint32_t trailing_len;
  uint8_t version_minor;
  uint32_t options; /* HURRAY_DECODE_* */
  /* nbuf declared alignments a reader keeps (hrpy_tensor_from_descriptor),
   * or NULL: the binding's policy, hurray_alignment_policy */
  const uint32_t *alignment;
} HrpySections;

/*
 * Builds a tensor from prepared buffers. `bufs` (nbuf entries) are moved into
 * the tensor on success and released on failure (either way the caller no
 * longer owns them). The buffer table's handles are derived from the buffers
 * (byte size, measured or owned alignment) and the device. `layout` NULL
 * means row-major. Raises the status's exception on validation failure.
 */
PyObject *hrpy_tensor_build(HrpyState *st, uint8_t type_tag, uint32_t rank,
                            const uint64_t *shape, const HurrayLayout *layout,
                            uint64_t byte_offset, PyObject *device, HrpyBuffer *bufs,
                            uint32_t nbuf, const char *context);
/* hrpy_tensor_build with optional sections (`sec` may be NULL). */
PyObject *hrpy_tensor_build_ex(HrpyState *st, uint8_t type_tag, uint32_t rank,
                               const uint64_t *shape, const HurrayLayout *layout,
                               uint64_t byte_offset, PyObject *device, HrpyBuffer *bufs,
                               uint32_t nbuf, const HrpySections *sec, const char *context);

/*
 * A dense row-major or column-major host tensor over one buffer (moved, as for
 * hrpy_tensor_build), whose descriptor is built only when first needed
 * (hrpy_tensor_desc): what from_numpy and the creation functions make. The
 * fields come from the C library's dense constructor, which checks every rule
 * that applies; anything it refuses goes through hrpy_tensor_build, which
 * raises as it always does. The fields are identical either way
 * (tests/python/test_perf_paths.py).
 */
PyObject *hrpy_tensor_new_dense(HrpyState *st, uint8_t type_tag, uint32_t rank,
                                const uint64_t *shape, uint8_t layout_tag, PyObject *device,
                                HrpyBuffer *b, const char *context);

/*
 * A tensor from a decoded descriptor and its buffers (what file and stream
 * readers have): `bufs` (moved, as for hrpy_tensor_build) must hold d's
 * buffer_count entries, each at least its declared byte_size (which is kept).
 * Every section is kept; alignment is measured again (it is exempt from the
 * round trip), the device comes from the buffer table (id 0). `options`:
 * HURRAY_DECODE_*. Index buffers are checked as at construction.
 */
PyObject *hrpy_tensor_from_descriptor(HrpyState *st, const HurrayDescriptor *d, HrpyBuffer *bufs,
                                      uint32_t nbuf, uint32_t options, const char *context);
/* Fills buffer i of a tensor a reader builds (hrpy_tensor_read): data, size,
 * what keeps the memory alive (owner or owned) and readonly; `out` comes
 * zeroed with `host` set. 0, or -1 with an exception set. */
typedef int (*HrpyBufferFill)(void *ctx, uint32_t i, HrpyBuffer *out);
/* hrpy_tensor_from_descriptor for a reader (a file, a stream, the network):
 * `d` borrowed, its `n` host buffers filled in order by fill(ctx, i, ...),
 * decoded with `options` | hurray_descriptor_relay_options. The buffers filled
 * before a failure are released. */
PyObject *hrpy_tensor_read(HrpyState *st, const HurrayDescriptor *d, uint32_t n,
                           HrpyBufferFill fill, void *ctx, uint32_t options,
                           const char *context);
/* hrpy_tensor_from_descriptor on device `on` (borrowed; NULL: from the buffer
 * table, id 0), whose kind and memory class must be the buffer table's
 * (InvalidDescriptorError otherwise): what unpickling has, the device id
 * travelling beside the descriptor. */
PyObject *hrpy_tensor_from_descriptor_on(HrpyState *st, const HurrayDescriptor *d,
                                         PyObject *on, HrpyBuffer *bufs, uint32_t nbuf,
                                         uint32_t options, const char *context);

/*
 * A UserWarning when buffer 0 of a row- or column-major tensor of a sub-byte
 * type (bool, 2-, 4- and 6-bit types) holds exactly one byte per element
 * while the packed elements need fewer bytes: a legal buffer (larger ones
 * are) that is almost always an unpacked array handed over by mistake. The
 * message names the buffer and the packed size. -1 when the warning is an
 * error (warnings filter).
 */
int hrpy_tensor_warn_unpacked(PyObject *t, const char *context);

/* hurray_descriptor_decode_relay (`bytes` borrowed; *out owned on success,
 * *options the mode used), raising the status's exception (prefixed with
 * `context`). */
int hrpy_decode_descriptor(HrpyState *st, const uint8_t *bytes, uint64_t len, bool permissive,
                           HurrayDescriptor **out, uint32_t *options, const char *context);

#endif /* HURRAY_PY_CORE_TENSOR_H */
