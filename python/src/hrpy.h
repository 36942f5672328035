/*
 * hrpy.h - shared declarations of the hurray._hurray extension module.
 *
 * Every Python class lives in its own C file (dtype.c, device.c, tensor.c,
 * buffer_handle.c, descriptor.c, layout.c + layout_types.c for the layout
 * hierarchy, quant.c for the quantization classes, sections.c for Statistics
 * and Shard, composite.c, file_io.c for hurray.File with save/load/load_kv,
 * stream.c for StreamReader and StreamWriter); native.c is the native
 * protocol (__hurray__, from_hurray), kv.c the KV metadata conversions.
 * module.c creates the module (multi-phase init) and owns the module state
 * below. Types are heap types created with
 * PyType_FromModuleAndSpec and are not subclassable (hurray.Layout is the one
 * base class, for its 14 subclasses; it is not instantiable, so no instance of
 * a foreign subclass exists), so PyType_GetModule on an instance's exact type
 * always finds the module state.
 *
 * Naming: functions shared between the files of the extension are hrpy_*;
 * everything else is static.
 */
#ifndef HURRAY_PY_HRPY_H
#define HURRAY_PY_HRPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "hurray/hurray.h"

/* ---- module state ---------------------------------------------------------- */

typedef struct HrpyState {
  /* classes */
  PyTypeObject *DtypeType;
  PyTypeObject *DeviceType;
  PyTypeObject *TensorType;
  PyTypeObject *BufferHandleType;
  PyTypeObject *DescriptorType;
  PyTypeObject *LayoutType;                /* hurray.Layout, the base */
  PyTypeObject *LayoutClasses[14];         /* indexed by HrpyLayoutKind */
  PyTypeObject *QuantClasses[6];           /* scheme tag - 1; [5] OpaqueQuantization */
  PyTypeObject *StatisticsType;
  PyTypeObject *ShardType;
  PyTypeObject *CompositeType;
  PyTypeObject *FileType;                  /* hurray.File (file_io.c) */
  PyTypeObject *StreamReaderType;          /* hurray.StreamReader (stream.c) */
  PyTypeObject *StreamWriterType;          /* hurray.StreamWriter (stream.c) */
  /* exceptions (D9) */
  PyObject *InvalidDescriptorError;
  PyObject *BufferError;
  PyObject *UnsupportedError;
  PyObject *InternalError;
  PyObject *FileError;
  PyObject *StreamError;
  PyObject *CopyRequiredError;
  /* Dtype singletons by wire tag; private (extension) tags are created on
   * first use. NULL for tags that name no type. */
  PyObject *dtypes[256];
  /* hurray.device.cpu: the default device of every tensor */
  PyObject *cpu;
  /* lazily imported helpers (NULL until first use) */
  PyObject *numpy;            /* the numpy module */
  /* numpy.dtype objects by wire tag, made on first use by __array_struct__
   * (NULL until then, and for tags NumPy has no type for) */
  PyObject *np_dtypes[256];
  PyObject *ndarray_type;     /* numpy.ndarray, once from_numpy met one */
  int nd_header;              /* ndarray.c: 1 header layout proven, -1 not, 0 unknown */
  PyObject *display_repr;     /* hurray._display.tensor_repr */
  PyObject *display_str;      /* hurray._display.tensor_str */
  PyObject *simple_namespace; /* types.SimpleNamespace */
  PyObject *sparse_module;    /* hurray._sparse (to_scipy) */
  PyObject *display_composite; /* hurray._display.composite_repr */
  /* interned strings */
  PyObject *s_dlpack;         /* "__dlpack__" */
  PyObject *s_max_version;
  PyObject *s_copy;
  PyObject *s_dl_device;
  PyObject *s_array_struct;   /* "__array_struct__" */
} HrpyState;

/* State of the module that defined the exact type of `self`. */
static inline HrpyState *hrpy_state_of(PyObject *self) {
  return (HrpyState *)PyType_GetModuleState(Py_TYPE(self));
}
static inline HrpyState *hrpy_state_of_type(PyTypeObject *type) {
  return (HrpyState *)PyType_GetModuleState(type);
}
static inline HrpyState *hrpy_state_of_module(PyObject *module) {
  return (HrpyState *)PyModule_GetState(module);
}

/* ---- errors (errors.c) ----------------------------------------------------- */

/* Creates the exception classes into st and adds them to module m. */
int hrpy_errors_init(PyObject *m, HrpyState *st);

/* The exception class the status table assigns to `status` (borrowed). */
PyObject *hrpy_exception_for(HrpyState *st, HurrayStatus status);

/*
 * The one place where a C status becomes a Python exception. Sets the class
 * from the status table with the C library's detail message (field path and
 * byte offset) when `err` carries one, else the status's default message;
 * `context` (may be NULL) prefixes it ("Tensor: ..."). The exception instance
 * gets attributes `status` (name), `field` and `offset` (None when unknown).
 * Always returns NULL so callers can `return hrpy_raise_status(...)`.
 */
PyObject *hrpy_raise_status(HrpyState *st, HurrayStatus status, const HurrayError *err,
                           const char *context);

/* hrpy_raise_status with the class chosen by the caller (`exc`, borrowed):
 * for an operation whose own error class wins over the table's (a stream's
 * transport failure is a StreamError, not a FileError). */
PyObject *hrpy_raise_status_as(HrpyState *st, PyObject *exc, HurrayStatus status,
                              const HurrayError *err, const char *context);

/* Two uppercase hex digits of a byte, for messages and reprs
 * (PyUnicode_FromFormat has no %X): "0x%s" with hrpy_hex(tag, buf). */
typedef struct { char s[3]; } HrpyHex;
static inline HrpyHex hrpy_hex(uint8_t v) {
  static const char d[] = "0123456789ABCDEF";
  HrpyHex h = {{d[v >> 4], d[v & 15], '\0'}};
  return h;
}

/* Removes the byte offset from a detail that came from a descriptor the
 * binding built only to run a rule (its offsets mean nothing to the caller). */
void hrpy_error_drop_offset(HurrayError *err);

/* A format rule the binding checks itself (an array length the C library
 * cannot see): raised through hrpy_raise_status with a detail carrying
 * `status` and `field` (offset unknown). printf-style `fmt`. Returns NULL. */
PyObject *hrpy_raise_rule(HrpyState *st, HurrayStatus status, const char *field,
                         const char *context, const char *fmt, ...);

/* Raise `exc` with a formatted message; returns NULL. */
PyObject *hrpy_raise(PyObject *exc, const char *fmt, ...);

/* ---- argument parsing and small utilities (args.c) ------------------------- */

/* Blocks of PyMem memory freed together (the C structures built for one call). */
typedef struct HrpyArena {
  void **blocks;
  size_t n, cap;
} HrpyArena;
/* `bytes` zeroed bytes owned by the arena; MemoryError (NULL) on failure. */
void *hrpy_arena_alloc(HrpyArena *a, size_t bytes);
/* Frees every block (the arena can be reused). */
void hrpy_arena_free(HrpyArena *a);

/* A path argument (str, bytes or os.PathLike) as file-system bytes (new
 * reference to a bytes object); TypeError for anything else. */
PyObject *hrpy_fs_path(PyObject *obj);

/*
 * A small parser for METH_FASTCALL | METH_KEYWORDS. `names` lists every
 * parameter (NULL-terminated): the first `npos` may be passed positionally,
 * the rest are keyword-only; the first `nreq` are required. `out` receives
 * borrowed references (NULL when not given). Raises TypeError like CPython.
 */
int hrpy_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, const char *const *names, int npos, int nreq,
                   PyObject **out);

/* `copy` keyword: None -> -1, False -> 0, True -> 1; other objects: TypeError. */
int hrpy_parse_copy(PyObject *obj, int *out);

/* ---- Dtype (dtype.c) ------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  uint8_t tag;
  const HurrayDtypeInfo *info; /* NULL for a private (extension) type */
} HrpyDtype;

int hrpy_dtype_init(PyObject *m, HrpyState *st);
/* The singleton for a tag (new reference); InvalidDescriptorError for tags
 * that name no type (reserved, unassigned, invalid). */
PyObject *hrpy_dtype_from_tag(HrpyState *st, uint8_t tag);
/* The same, but a reserved or unassigned tag (kept by a relay-mode decode)
 * gets a singleton named "unknown" instead of an error. */
PyObject *hrpy_dtype_relayed(HrpyState *st, uint8_t tag);
/* Accepts a Dtype or a type name; stores the tag. TypeError /
 * InvalidDescriptorError otherwise. */
int hrpy_dtype_converter(HrpyState *st, PyObject *obj, uint8_t *out_tag);
static inline int hrpy_dtype_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->DtypeType);
}

/* ---- Device (device.c) ----------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  uint8_t tag;          /* device tag (buffer handle byte 12) */
  uint8_t memory_class; /* memory class (byte 14) */
  int32_t device_id;    /* runtime metadata, not on the wire */
} HrpyDevice;

int hrpy_device_init(PyObject *m, HrpyState *st);
/* A Device (new reference); hurray.device.cpu for (CPU, standard, 0). */
PyObject *hrpy_device_new(HrpyState *st, uint8_t tag, uint8_t memory_class, int32_t device_id);
static inline int hrpy_device_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->DeviceType);
}
/* DLPack device type for (tag, class): >0, or 0 after raising
 * hurray.UnsupportedError (PEER, ROCm unified, private, invalid pairs). */
int hrpy_device_to_dlpack(HrpyState *st, const HrpyDevice *dev);

/* ---- BufferHandle (buffer_handle.c) ----------------------------------------- */

int hrpy_buffer_handle_init(PyObject *m, HrpyState *st);
/* New BufferHandle for entry `index`; `device` is the tensor's Device object
 * (borrowed; the handle keeps its own reference). */
PyObject *hrpy_buffer_handle_new(HrpyState *st, uint32_t index, const HurrayBufferHandle *h,
                                PyObject *device);
/* Tuple of handles for a descriptor (new reference). */
PyObject *hrpy_buffer_handles_tuple(HrpyState *st, const HurrayDescriptorFields *f,
                                   PyObject *device);

/* ---- Descriptor (descriptor.c) ---------------------------------------------- */

int hrpy_descriptor_init(PyObject *m, HrpyState *st);
/* New hurray.Descriptor taking ownership of `desc` (moved: freed on failure);
 * `device` (borrowed) is the device to report, or NULL to derive it from the
 * buffer table with device_id 0. */
PyObject *hrpy_descriptor_wrap(HrpyState *st, HurrayDescriptor *desc, PyObject *device);
/* The optional sections as objects, shared by Tensor and Descriptor (new
 * references; Py_None when the section is absent): a hurray.Layout subclass,
 * a quantization class, hurray.Shard, hurray.Statistics. */
PyObject *hrpy_layout_object(HrpyState *st, const HurrayDescriptorFields *f);
PyObject *hrpy_quantization_object(HrpyState *st, const HurrayDescriptorFields *f);
PyObject *hrpy_shard_object(HrpyState *st, const HurrayDescriptorFields *f);
PyObject *hrpy_statistics_object(HrpyState *st, const HurrayDescriptorFields *f);
/* The HurrayDescriptor inside a hurray.Descriptor (borrowed), or NULL when
 * `o` is not one. */
const HurrayDescriptor *hrpy_descriptor_get(HrpyState *st, PyObject *o);
/* Shape tuple (None for a dynamic dimension); new reference. */
PyObject *hrpy_shape_tuple(uint32_t rank, const uint64_t *shape);
/* Element count, or Py_None if any dimension is dynamic; new reference. */
PyObject *hrpy_size_object(uint32_t rank, const uint64_t *shape);

/* ---- Layout (layout.c: the base; layout_types.c: the 14 subclasses) ------- */

typedef enum HrpyLayoutKind {
  HRPY_L_ROW_MAJOR = 0,
  HRPY_L_COL_MAJOR,
  HRPY_L_STRIDED,
  HRPY_L_TILED,
  HRPY_L_MORTON,
  HRPY_L_HILBERT,
  HRPY_L_COO,
  HRPY_L_CSR,
  HRPY_L_CSC,
  HRPY_L_CSF,
  HRPY_L_BLOCK_PAGED,
  HRPY_L_COMPOSITE,
  HRPY_L_PRIVATE,
  HRPY_L_UNKNOWN,
  HRPY_L_COUNT
} HrpyLayoutKind;
_Static_assert(HRPY_L_COUNT == 14, "HrpyState.LayoutClasses has one slot per kind");

/* Every layout class shares this struct: a subclass is a typed facade over
 * the same value. Immutable once built. */
typedef struct {
  PyObject_HEAD
  HurrayLayout lay; /* array and byte pointers point into `mem` */
  uint32_t n;       /* entries of the per-dimension arrays (strided, tiled,
                       morton, csf); 0 for the other layouts */
  void *mem;        /* PyMem block owning every array of `lay`, or NULL */
} HrpyLayout;

int hrpy_layout_init(PyObject *m, HrpyState *st);
int hrpy_layout_types_init(PyObject *m, HrpyState *st); /* layout_types.c */
static inline int hrpy_layout_check(HrpyState *st, PyObject *o) {
  return PyObject_TypeCheck(o, st->LayoutType);
}
/* True for the layouts with per-dimension arrays (n counts their entries). */
bool hrpy_layout_has_arrays(uint8_t tag);
/* A new layout object of class `type` holding a deep copy of `src`, whose
 * per-dimension arrays have `n` entries. */
PyObject *hrpy_layout_new(HrpyState *st, PyTypeObject *type, const HurrayLayout *src, uint32_t n);
/* The class the layout getter returns for a tag: the named subclass,
 * PrivateExtensionLayout, UnknownLayout, or the bare base for a named tag
 * this build does not bind. Borrowed. */
PyTypeObject *hrpy_layout_class_for_tag(HrpyState *st, uint8_t tag);
/* Decode options a descriptor carrying this layout needs: permissive for a
 * private or unknown layout (their rules are agreed out of band), else strict. */
uint32_t hrpy_layout_options(uint8_t tag);
/*
 * The layout of `obj` (a hurray.Layout) for a tensor of rank `rank`, in *out
 * (borrowed from obj). The shape tier's one check the C library cannot make
 * on raw arrays: per-dimension arrays must have `rank` entries
 * (InvalidDescriptorError naming `context`).
 */
int hrpy_layout_for_rank(HrpyState *st, PyObject *obj, uint32_t rank, HurrayLayout *out,
                        const char *context);
/* Shape-tier validation of `obj` against a shape (dynamic dimensions
 * allowed): what Layout.validate_against_shape and Tensor share. */
int hrpy_layout_validate_shape(HrpyState *st, PyObject *obj, uint32_t rank, const uint64_t *shape,
                              const char *context);

/* ---- quantization, statistics, shard (quant.c, sections.c) ------------------ */

typedef struct {
  PyObject_HEAD
  HurrayQuantization q; /* q.raw points at `raw` */
  uint8_t *raw;         /* PyMem copy of the exact payload bytes */
} HrpyQuant;

int hrpy_quant_init(PyObject *m, HrpyState *st);
static inline int hrpy_quant_check_type(HrpyState *st, PyObject *o) {
  for (int i = 0; i < 6; i++)
    if (Py_IS_TYPE(o, st->QuantClasses[i])) return 1;
  return 0;
}
/* A quantization object for a parsed section (q->raw must be set). */
PyObject *hrpy_quant_new(HrpyState *st, const HurrayQuantization *q);

typedef struct {
  PyObject_HEAD
  HurrayStatistics s;
} HrpyStatistics;

typedef struct {
  PyObject_HEAD
  uint32_t rank;
  uint64_t *parent_shape; /* PyMem, rank entries (NULL when rank is 0) */
  uint64_t *offset;       /* PyMem, rank entries */
  HurrayShard shard;      /* views of the two arrays */
} HrpyShard;

int hrpy_sections_init(PyObject *m, HrpyState *st);
PyObject *hrpy_statistics_new(HrpyState *st, const HurrayStatistics *s);
PyObject *hrpy_shard_new(HrpyState *st, uint32_t rank, const HurrayShard *sh);

/* ---- Composite (composite.c) ------------------------------------------------ */

/* A composite tensor: a head descriptor (layout 0x0B, no buffers) and its
 * members, each a hurray.Tensor or a nested hurray.Composite. */
typedef struct {
  PyObject_HEAD
  HurrayDescriptor *head;        /* owned */
  HurrayDescriptorFields hf;     /* borrowed views into head */
  PyObject *dtype;               /* Dtype singleton of the head */
  PyObject *members;             /* tuple */
  /* presented[i]: the descriptor member i presents to this head (owned), or
   * NULL when that is the member's own (its tensor's descriptor, or a nested
   * composite's head). An overlay member gets its role section here. */
  HurrayDescriptor **presented;
  uint32_t count;
} HrpyComposite;

int hrpy_composite_init(PyObject *m, HrpyState *st);
static inline int hrpy_composite_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->CompositeType);
}
/*
 * A Composite from a head descriptor (moved: destroyed on failure) and a
 * tuple of members (borrowed; the composite takes its own reference), as a
 * stream or file reader has them. Overlay members without a role section get
 * theirs by position (0 base, the rest correction); a member that carries one
 * keeps it. The whole tree is checked by the C composite validator.
 */
PyObject *hrpy_composite_from_head(HrpyState *st, HurrayDescriptor *head, PyObject *members,
                                  const char *context);
/* The descriptor member i presents to its composite (borrowed). */
const HurrayDescriptor *hrpy_composite_member_descriptor(HrpyState *st, const HrpyComposite *c,
                                                        uint32_t i);

/* ---- Tensor (tensor.c, tensor_numpy.c, tensor_sparse.c, dlpack.c, creation.c) - */

/* One buffer of a tensor and what keeps its memory alive. */
typedef struct {
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

typedef struct {
  PyObject_HEAD
  /* owned; immutable. NULL for a tensor built by hrpy_tensor_new_dense until
   * something needs the descriptor itself (hrpy_tensor_desc builds it then). */
  HurrayDescriptor *desc;
  /* The fields: borrowed views into desc, or, for a lazily described tensor,
   * into the tail of the `bufs` block (its one handle and its shape), filled
   * exactly as hurray_descriptor_fields would fill them. */
  HurrayDescriptorFields f;
  PyObject *dtype;              /* Dtype singleton */
  PyObject *device;             /* Device */
  PyObject *handles;            /* cached tuple of BufferHandle, or NULL */
  PyObject *weakreflist;
  uint32_t nbuf;
  HrpyBuffer *bufs;              /* nbuf entries (PyMem) */
} HrpyTensor;

int hrpy_tensor_init(PyObject *m, HrpyState *st);
static inline int hrpy_tensor_check(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->TensorType);
}

/*
 * Measured alignment of an address: the largest power of two dividing it,
 * capped at HURRAY_PAGE_ALIGNMENT; 1 for an empty buffer.
 */
uint32_t hrpy_measure_alignment(const void *p, uint64_t size);

/* Allocates `size` bytes aligned to HURRAY_MIN_BUFFER_ALIGNMENT (hurray_alloc),
 * zeroed when `zero`. MemoryError on failure. */
void *hrpy_alloc_buffer(uint64_t size, bool zero);

/*
 * Builds a tensor from prepared buffers. `bufs` (nbuf entries) are moved into
 * the tensor on success and released on failure (either way the caller no
 * longer owns them). The buffer table's handles are derived from the buffers
 * (byte size, measured or owned alignment) and the device. `layout` NULL
 * means row-major. Raises the status-table exception on validation failure.
 */
/* Optional sections and options for hrpy_tensor_build (all borrowed for the
 * call; a zeroed struct means none, strict). */
typedef struct HrpySections {
  const HurrayQuantization *quantization;
  const HurrayShard *shard;
  const HurrayStatistics *statistics;
  const HurrayCompositeMember *member;
  const HurrayExtensionType *extension_type;
  uint32_t flags;           /* kept verbatim for opaque layouts; reserved bits (permissive) */
  const uint8_t *trailing;  /* bytes of a newer minor version, written back verbatim */
  uint32_t trailing_len;
  uint8_t version_minor;
  uint32_t options; /* HURRAY_DECODE_* */
} HrpySections;

PyObject *hrpy_tensor_build(HrpyState *st, uint8_t type_tag, uint32_t rank,
                           const uint64_t *shape, const HurrayLayout *layout,
                           uint64_t byte_offset, PyObject *device, HrpyBuffer *bufs,
                           uint32_t nbuf, const char *context);
/* hrpy_tensor_build with optional sections (`sec` may be NULL). */
PyObject *hrpy_tensor_build_ex(HrpyState *st, uint8_t type_tag, uint32_t rank,
                              const uint64_t *shape, const HurrayLayout *layout,
                              uint64_t byte_offset, PyObject *device, HrpyBuffer *bufs,
                              uint32_t nbuf, const HrpySections *sec, const char *context);
/* Releases what a buffer holds (safe on zeroed entries). */
void hrpy_buffer_release(HrpyBuffer *b);

/*
 * Acquires a buffer-protocol object as buffer `index` of a tensor being
 * built, applying the copy policy (copy: -1 None, 0 False, 1 True): borrow
 * when the address meets the 64-byte floor, else copy (None) or raise
 * hurray.BufferError naming the index, the measured alignment and the floor
 * (False). The object must be C-contiguous.
 */
int hrpy_buffer_acquire(HrpyState *st, PyObject *obj, uint32_t index, int copy,
                       const char *context, HrpyBuffer *out);

/* Applies the copy policy to a buffer already described by data/size/owner:
 * copies it into owned memory when required (releasing the borrow). */
int hrpy_buffer_apply_copy_policy(HrpyState *st, HrpyBuffer *b, uint32_t index, int copy,
                                 bool can_copy, const char *context);

/* Shape parsing: a sequence of int >= 0 or None (dynamic). Fills out[rank]
 * (HURRAY_DYNAMIC_DIM for None). InvalidDescriptorError / TypeError. */
int hrpy_parse_shape(HrpyState *st, PyObject *obj, uint64_t *out, uint32_t *rank,
                    const char *context);

/* Row-major element count; false when a dimension is dynamic or overflow. */
bool hrpy_element_count(uint32_t rank, const uint64_t *shape, uint64_t *out);

/* Copies a strided array (signed byte strides) into a dense row-major dst. */
void hrpy_strided_gather(uint8_t *dst, const uint8_t *src, size_t itemsize, uint32_t rank,
                        const uint64_t *shape, const int64_t *bstrides);

/* For a strided array whose element [0, ..., 0] is at `first` (element
 * strides, every extent > 0): the lowest address touched (*base), the bytes
 * spanned and the byte offset of element 0 from *base. False on overflow or
 * an empty extent. */
bool hrpy_strided_extent(uint8_t *first, uint64_t esize, uint32_t rank, const uint64_t *shape,
                        const int64_t *estrides, uint8_t **base, uint64_t *span,
                        uint64_t *byte_offset);

/* Name of the tensor's layout for error messages (single helper). */
const char *hrpy_layout_name(uint8_t tag);

/* True when buffer i's bytes can be read by this process: a CPU tensor, or a
 * buffer known to be host memory (HrpyBuffer.host, a held export, owned memory).
 * A device tensor imported from elsewhere (DLPack, a foreign capsule) holds
 * device addresses that must never be read. */
static inline bool hrpy_tensor_buffer_is_host(const HrpyTensor *t, uint32_t i) {
  const HrpyBuffer *b = &t->bufs[i];
  return t->f.buffers[i].device_tag == HURRAY_DEVICE_CPU || b->host || b->view.obj != NULL ||
         b->owned != NULL;
}

/* Checks that every buffer's bytes can be read to be written out (save, a
 * stream): else hurray.UnsupportedError naming `what` and the device. */
int hrpy_tensor_check_host(HrpyState *st, const HrpyTensor *t, const char *what);

/* Checks that the tensor's bytes may be handed out (every buffer is
 * producer_synced); else hurray.UnsupportedError naming the mode. */
int hrpy_tensor_check_readable(HrpyState *st, HrpyTensor *t, const char *what);

/*
 * A tensor from a decoded descriptor and its buffers (what file and stream
 * readers have): `bufs` (moved, as for hrpy_tensor_build) must hold
 * d's buffer_count entries, each at least its declared byte_size (which is
 * kept). Every section is kept; alignment is measured again (it is exempt
 * from the round trip), the device comes from the buffer table (id 0).
 * `options`: HURRAY_DECODE_*. Index buffers are checked as at construction.
 */
PyObject *hrpy_tensor_from_descriptor(HrpyState *st, const HurrayDescriptor *d, HrpyBuffer *bufs,
                                     uint32_t nbuf, uint32_t options, const char *context);

/*
 * A dense row-major or column-major host tensor over one buffer (moved, as for
 * hrpy_tensor_build), whose descriptor is built only when first needed
 * (hrpy_tensor_desc): what from_numpy and the creation functions make. The
 * descriptor is valid by construction when the preconditions hold, and they
 * are checked here: a named element type, rank <= HURRAY_MAX_RANK, no dynamic
 * dimension, row-major at rank 0, a standard CPU device, a buffer aligned to
 * the 64-byte floor (or empty) holding at least the elements' bytes, with an
 * element count and byte size below 2**63. Anything else goes through
 * hrpy_tensor_build, which validates (and raises) as it always does; the
 * fields are then identical either way (tests/python/test_perf_paths.py).
 */
PyObject *hrpy_tensor_new_dense(HrpyState *st, uint8_t type_tag, uint32_t rank,
                               const uint64_t *shape, uint8_t layout_tag, PyObject *device,
                               HrpyBuffer *b, const char *context);

/* The descriptor of a tensor (borrowed from it), built from its fields on
 * first use; NULL with an exception set when that fails (memory). */
const HurrayDescriptor *hrpy_tensor_desc(HrpyState *st, PyObject *t);

/* The descriptor of a tensor already described (borrowed): a composite's
 * member tensors are (hrpy_composite_from_head calls hrpy_tensor_desc). */
static inline const HurrayDescriptor *hrpy_tensor_descriptor(PyObject *t) {
  return ((HrpyTensor *)t)->desc;
}

/*
 * Checks what the index buffers of a host sparse or block-paged tensor
 * contain (hurray_layout_validate_index_buffers): InvalidDescriptorError
 * before any consumer can read out of bounds. Dense tensors and device
 * buffers (which this process cannot read) pass.
 */
int hrpy_tensor_validate_index_buffers(HrpyState *st, HrpyTensor *t, const char *context);

/* Sparse accessors (tensor_sparse.c): getters raising AttributeError when
 * the layout has no such component, so hasattr tells the truth. */
PyObject *hrpy_tensor_nnz(PyObject *self, void *closure);
PyObject *hrpy_tensor_values(PyObject *self, void *closure);
PyObject *hrpy_tensor_indices(PyObject *self, void *closure);
PyObject *hrpy_tensor_col_indices(PyObject *self, void *closure);
PyObject *hrpy_tensor_row_ptr(PyObject *self, void *closure);
PyObject *hrpy_tensor_row_indices(PyObject *self, void *closure);
PyObject *hrpy_tensor_col_ptr(PyObject *self, void *closure);
/* to_scipy(): through hurray._sparse (SciPy is imported lazily). */
PyObject *hrpy_tensor_to_scipy(PyObject *self, PyObject *unused);
/* _coo_lexsorted(indices, nnz, rank): whether the [nnz, rank] uint64 coordinates
 * (a C-contiguous buffer) strictly increase lexicographically: one scan in C,
 * stopping at the first row out of order (hurray._sparse). */
PyObject *hrpy_coo_lexsorted(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
/* A 1-D or 2-D view Tensor of `dtype` over buffer `index` (keeps self alive). */
PyObject *hrpy_tensor_component(PyObject *self, uint32_t index, uint8_t type_tag, uint32_t rank,
                               const uint64_t *shape, const char *what);

/* NumPy's PyArrayInterface (__array_struct__), a stable part of NumPy's ABI
 * since 1.x, declared here so that nothing is compiled against NumPy. */
typedef struct {
  int two; /* 2: contents are valid */
  int nd;
  char typekind;
  int itemsize;
  int flags;
  Py_intptr_t *shape;
  Py_intptr_t *strides;
  void *data;
  PyObject *descr;
} HrpyArrayInterface;

/* NumPy array flags (the same bits in PyArrayInterface.flags). */
enum {
  HRPY_NPY_C_CONTIGUOUS = 0x0001,
  HRPY_NPY_F_CONTIGUOUS = 0x0002,
  HRPY_NPY_ALIGNED = 0x0100,
  HRPY_NPY_NOTSWAPPED = 0x0200,
  HRPY_NPY_WRITEABLE = 0x0400,
  HRPY_NPY_ARR_HAS_DESCR = 0x0800,
};

/* from_numpy for an exact numpy.ndarray in the plain case (ndarray.c):
 * returns true with *out the tensor (or NULL with an exception set), false
 * with nothing raised when the array is not the plain case (the caller then
 * takes the general buffer-protocol path). */
bool hrpy_from_ndarray(HrpyState *st, PyObject *obj, int copy, const char *context,
                      PyObject **out);
/* _ndarray_path(mode): chooses and reports the way (tests). */
PyObject *hrpy_ndarray_path(PyObject *m, PyObject *mode);

/* numpy interop (tensor_numpy.c) */
PyObject *hrpy_tensor_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);
PyObject *hrpy_tensor_array_interface(PyObject *self, void *closure);
PyObject *hrpy_tensor_array_struct(PyObject *self, void *closure);
PyObject *hrpy_from_numpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
/* The numpy module (borrowed from the state cache), importing it lazily. */
PyObject *hrpy_numpy(HrpyState *st);

/* DLPack (dlpack.c) */
PyObject *hrpy_tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *hrpy_tensor_dlpack_device(PyObject *self, PyObject *unused);
PyObject *hrpy_tensor_to_torch(PyObject *self, PyObject *unused);
PyObject *hrpy_from_dlpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_from_torch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);

/* creation functions (creation.c) */
PyObject *hrpy_zeros(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_ones(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_empty(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_full(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_zeros_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_ones_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *hrpy_empty_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
PyObject *hrpy_full_like(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *hrpy_arange(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *hrpy_linspace(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
PyObject *hrpy_eye(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* aligned NumPy allocator (allocator.c) */
PyObject *hrpy_aligned_mem_handler(PyObject *m, PyObject *unused);
/* Installs a NEP 49 handler capsule (None: NumPy's default) for the current
 * context; returns the previous one. hurray.UnsupportedError before 1.22. */
PyObject *hrpy_numpy_set_handler(PyObject *m, PyObject *handler);

/* ---- KV metadata (kv.c) ------------------------------------------------------- */

/* A Python dict converted for hurray_file_writer_add_kv: entry i is
 * keys[i] (key_lens[i] bytes, not NUL-terminated) -> values[i]. Every pointer
 * is borrowed from objects `items` keeps alive, or from the arena. */
typedef struct HrpyKvList {
  size_t count;
  const char **keys;
  size_t *key_lens;
  HurrayKvValue *values;
  HrpyArena arena;
  PyObject *items; /* list of the objects the pointers borrow from */
} HrpyKvList;
/* Converts `kv` (a mapping of str to KV values, or None/NULL for none) into
 * *l; TypeError / OverflowError / ValueError naming the key. Call
 * hrpy_kv_list_free after either outcome. */
int hrpy_kv_from_mapping(HrpyState *st, PyObject *kv, HrpyKvList *l);
void hrpy_kv_list_free(HrpyKvList *l);
/* One KV value as a Python object (`key` names it in errors). */
PyObject *hrpy_kv_value_to_py(HrpyState *st, PyObject *key, const HurrayKvValue *v);
/* The KV section of an open file as a new dict, in file order. */
PyObject *hrpy_kv_to_dict(HrpyState *st, const HurrayFile *f);

/* .hrry files (file_io.c): save, load, load_kv, open and hurray.File */
int hrpy_file_init(PyObject *m, HrpyState *st);

/* streams (stream.c): hurray.StreamReader, hurray.StreamWriter */
int hrpy_stream_init(PyObject *m, HrpyState *st);

/* native protocol (native.c) */
PyObject *hrpy_tensor_hurray(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *hrpy_from_hurray(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
/* True when the interpreter can no longer take a reference drop from this
 * thread (not initialized, or finalizing while this thread lacks the GIL). */
bool hrpy_interpreter_gone(void);
/* Drops a strong reference (`obj`, a PyObject *) from any thread, taking the
 * GIL itself; leaks it deliberately when hrpy_interpreter_gone(). Shaped as a
 * C callback (HurrayOwnerReleaseFn). NULL-safe. */
void hrpy_release_object(void *obj);
/* Decode options a tensor with these fields was built with: permissive for a
 * private or unknown layout or an opaque quantization scheme, else strict. */
uint32_t hrpy_options_for_descriptor(const HurrayDescriptorFields *f);
/*
 * Decodes a descriptor a reader received (`bytes` borrowed): strictly unless
 * `permissive`; a descriptor that fails strictly but carries what this
 * package itself builds with relay semantics (hrpy_options_for_descriptor) is
 * accepted permissively. *out owned on success; *options receives the mode
 * used. Raises the status-table exception (prefixed with `context`).
 */
int hrpy_decode_descriptor(HrpyState *st, const uint8_t *bytes, uint64_t len, bool permissive,
                          HurrayDescriptor **out, uint32_t *options, const char *context);

/* Bit-packed bool <-> one byte per element (LSB-first). */
void hrpy_bool_unpack(const uint8_t *src, uint8_t *dst, uint64_t count);
void hrpy_bool_pack(const uint8_t *src, uint8_t *dst, uint64_t count);

#endif /* HURRAY_PY_HRPY_H */
