/*
 * hurray/interop.h - what other array libraries call the format's types,
 * devices and layouts: the DLPack (v1.1) C ABI with its type codes and
 * device types, NumPy's array-interface type strings and the Python
 * buffer-protocol formats, and the geometry a strided consumer needs.
 *
 * Every table a binding needs to hand a tensor to DLPack or NumPy, or to
 * take one from them, is here, so a C program and the Python package read
 * a foreign tensor by the same rules: a DLPack tensor is checked in full
 * (no pointer, extent or product it declares is trusted) before anything
 * is read through it.
 */
#ifndef HURRAY_INTEROP_H
#define HURRAY_INTEROP_H

#include <stdbool.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the DLPack C ABI (dlpack.h v1.1, field order and widths exact) ---------- */

/* The version this library speaks when the other side allows it. */
#define HURRAY_DLPACK_MAJOR 1u
#define HURRAY_DLPACK_MINOR 1u

/* DLDeviceType values. */
enum {
  HURRAY_DL_CPU = 1,
  HURRAY_DL_CUDA = 2,
  HURRAY_DL_CUDA_HOST = 3,
  HURRAY_DL_OPENCL = 4,
  HURRAY_DL_VULKAN = 7,
  HURRAY_DL_METAL = 8,
  HURRAY_DL_ROCM = 10,
  HURRAY_DL_ROCM_HOST = 11,
  HURRAY_DL_CUDA_MANAGED = 13,
  HURRAY_DL_ONEAPI = 14,
  HURRAY_DL_WEBGPU = 15,
  HURRAY_DL_HEXAGON = 16
};

/* DLManagedTensorVersioned.flags bits. */
#define HURRAY_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define HURRAY_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)
#define HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)

typedef struct HurrayDLPackVersion {
  uint32_t major;
  uint32_t minor;
} HurrayDLPackVersion;

typedef struct HurrayDLDevice {
  int32_t device_type; /* DLDeviceType (a C enum: int-sized) */
  int32_t device_id;
} HurrayDLDevice;

typedef struct HurrayDLDataType {
  uint8_t code; /* DLDataTypeCode */
  uint8_t bits;
  uint16_t lanes;
} HurrayDLDataType;

typedef struct HurrayDLTensor {
  void *data;
  HurrayDLDevice device;
  int32_t ndim;
  HurrayDLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} HurrayDLTensor;

/* The legacy capsule "dltensor". */
typedef struct HurrayDLManagedTensor {
  HurrayDLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct HurrayDLManagedTensor *self);
} HurrayDLManagedTensor;

/* The versioned capsule "dltensor_versioned" (DLPack >= 1.0). */
typedef struct HurrayDLManagedTensorVersioned {
  HurrayDLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct HurrayDLManagedTensorVersioned *self);
  uint64_t flags;
  HurrayDLTensor dl_tensor;
} HurrayDLManagedTensorVersioned;

/* ---- element types and devices, both ways ---------------------------------- */

/*
 * The DLPack type of element type `type_tag` for a consumer speaking DLPack
 * 1.`minor` (the float8, float6 and float4 codes came with 1.1), lanes 1; bool
 * is DLPack's one byte per element. HURRAY_ERR_UNSUPPORTED (the reason names
 * the type) when DLPack has none or the consumer's version is too old.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dlpack_dtype_encode(uint8_t type_tag,
                                                                    uint32_t minor,
                                                                    HurrayDLDataType *out,
                                                                    HurrayError *err);
/* The element type of a DLPack type; `flags` are the managed tensor's (a sub-byte
 * type padded to whole bytes is not the format's packed layout). HURRAY_ERR_UNSUPPORTED
 * when there is none. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dlpack_dtype_decode(HurrayDLDataType dtype,
                                                                    uint64_t flags,
                                                                    uint8_t *out_tag,
                                                                    HurrayError *err);
/* The DLDeviceType of a (device tag, memory class) pair; HURRAY_ERR_UNSUPPORTED for
 * the pairs DLPack cannot carry (peer memory, ROCm unified, private values). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dlpack_device_encode(uint8_t device_tag,
                                                                     uint8_t memory_class,
                                                                     int32_t *out,
                                                                     HurrayError *err);
/* The (device tag, memory class) of a DLDeviceType; HURRAY_ERR_UNSUPPORTED for none. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dlpack_device_decode(int32_t device_type,
                                                                     uint8_t *device_tag,
                                                                     uint8_t *memory_class,
                                                                     HurrayError *err);

/* ---- reading a DLPack tensor ------------------------------------------------- */

/* What a DLPack tensor is, in the format's terms (hurray_dlpack_import). */
typedef struct HurrayDLPackImport {
  uint8_t type_tag;
  uint8_t device_tag;
  uint8_t memory_class;
  /* HURRAY_LAYOUT_ROW_MAJOR or _COL_MAJOR when the strides are compact in
   * that order, else HURRAY_LAYOUT_STRIDED (only for whole-byte types with
   * elements, whose `strides` and span are then set) */
  uint8_t layout_tag;
  uint32_t rank;
  uint64_t shape[HURRAY_MAX_RANK];
  int64_t strides[HURRAY_MAX_RANK];      /* element strides (strided) */
  int64_t byte_strides[HURRAY_MAX_RANK]; /* the same in bytes, 0 for an extent of 1 */
  uint64_t count;                        /* elements */
  uint64_t itemsize;                     /* bytes per element; 0 for a sub-byte type */
  uint64_t nbytes;                       /* the packed bytes of `count` elements */
  uint8_t *first;     /* element [0, ..., 0] (data + byte_offset); NULL without elements */
  uint8_t *span_base; /* strided: the lowest byte the strides reach */
  uint64_t span;      /* strided: bytes from span_base to past the highest */
  uint64_t span_offset; /* strided: first - span_base */
} HurrayDLPackImport;

/*
 * Checks a DLPack tensor (borrowed; `flags` are its managed tensor's, 0 for a
 * legacy one) before anything is read through it and says what it is in *out:
 * the element type and device (HURRAY_ERR_UNSUPPORTED for none, or for a
 * non-contiguous sub-byte tensor), the rank, shape, element count and byte size
 * (HURRAY_ERR_INVALID_BUFFER_TABLE for a rank over HURRAY_MAX_RANK, a NULL or
 * negative shape, products past 2**63, a byte_offset or strides that reach
 * past the address space or 2**63 bytes), and the compact order or the span
 * the strides reach. HURRAY_ERR_NULL_POINTER for a NULL data pointer with
 * elements. The memory is not read.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dlpack_import(const HurrayDLTensor *dl,
                                                              uint64_t flags,
                                                              HurrayDLPackImport *out,
                                                              HurrayError *err);

/* ---- NumPy and the Python buffer protocol ------------------------------------ */

/* The array-interface type string of `type_tag` ("<f4", "|u1", "<c16"), in this
 * machine's byte order; NULL for the types NumPy has no dtype for (bool, which
 * the format packs, bfloat16, the Tier 2 types but complex). Static. */
HURRAY_API const char *hurray_dtype_array_typestr(uint8_t type_tag);
/* The element type of an array-interface kind character ('f', 'i', 'u', 'c',
 * 'b') with `itemsize` bytes; 0 for none. */
HURRAY_API uint8_t hurray_dtype_from_array_kind(char kind, uint64_t itemsize);
/* The element type of a Python buffer-protocol format (struct module syntax,
 * NULL meaning "B") with `itemsize` bytes; 0 for none. *swapped is set when the
 * format declares the other byte order. */
HURRAY_API uint8_t hurray_dtype_from_buffer_format(const char *format, uint64_t itemsize,
                                                   bool *swapped);

/* ---- SciPy ------------------------------------------------------------------ */

/*
 * Whether the `nnz` rows of `rank` uint64 coordinates at `indices` (borrowed,
 * this machine's byte order, any alignment; nnz * rank entries) strictly
 * increase in lexicographic order, so hold no duplicate: SciPy's canonical COO
 * format. One scan, stopping at the first row out of order. True for fewer
 * than two rows; false for two or more rows of rank 0 (the same coordinate).
 */
HURRAY_API bool hurray_coo_indices_increasing(const void *indices, uint64_t nnz, uint32_t rank);

/* ---- strided geometry -------------------------------------------------------- */

/*
 * The geometry a strided consumer (NumPy, DLPack) needs of a row-major,
 * column-major or strided tensor: shape[k] and strides[k] as signed 64-bit
 * values, strides scaled by `unit` (1 for element strides, the item size for
 * byte strides); both arrays hold f->rank entries. HURRAY_ERR_UNSUPPORTED for a
 * dimension of 2**63 or more (legal beside a 0), for nonzero dimensions whose
 * product in units passes 2**63 - 1 (consumers multiply before they look for a
 * zero), and for a stride that overflows.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_strided_geometry(const HurrayDescriptorFields *f,
                                                                 int64_t unit, int64_t *shape,
                                                                 int64_t *strides,
                                                                 HurrayError *err);
/*
 * The bytes a strided view reaches: element [0, ..., 0] at `first`, `rank`
 * extents `shape` (none 0) and element strides `strides` of `itemsize` bytes.
 * On true, *base is the lowest byte reached, *span the bytes from there to past
 * the highest (below 2**63), *offset = first - *base. False when a product
 * overflows, an extent is 0 or above 2**63 - 1, or the span wraps around the
 * address space.
 */
HURRAY_API bool hurray_strided_extent(uint8_t *first, uint64_t itemsize, uint32_t rank,
                                      const uint64_t *shape, const int64_t *strides,
                                      uint8_t **base, uint64_t *span, uint64_t *offset);

/*
 * Whether DLPack can carry a tensor with fields `f` (borrowed) for a consumer
 * speaking DLPack 1.`minor`, and its DLPack element type in *out: a row-major,
 * column-major or strided layout (field "layout.tag"), no quantization
 * ("quantization"), every buffer producer-synced ("sync_mode"), every extent
 * known ("shape"), an element type DLPack has (hurray_dlpack_dtype_encode), a
 * bool tensor not strided ("type_tag"). HURRAY_ERR_UNSUPPORTED with the
 * reason otherwise, checked in that order; HURRAY_ERR_NULL_POINTER for a NULL
 * `f` or `out`. The geometry is hurray_strided_geometry's.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_dlpack_export_check(
    const HurrayDescriptorFields *f, uint32_t minor, HurrayDLDataType *out, HurrayError *err);

/* ---- what NumPy and a strided producer make of a tensor -------------------- */

/* What a strided view of a producer's memory is in the format's terms
 * (hurray_strided_classify). */
typedef struct HurrayStridedForm {
  /* HURRAY_LAYOUT_ROW_MAJOR, _COL_MAJOR or _STRIDED; 0 when the elements must
   * be copied to row-major (strides that are not whole elements, a bool or
   * sub-byte type, a span that cannot be described) */
  uint8_t layout_tag;
  int64_t strides[HURRAY_MAX_RANK]; /* STRIDED: element strides */
  uint8_t *span_base;               /* STRIDED: as hurray_strided_extent */
  uint64_t span;
  uint64_t span_offset;
} HurrayStridedForm;

/*
 * Classifies a producer's strided view (a Python buffer, an array): element
 * [0, ..., 0] at `first`, `rank` extents `shape` (borrowed) and byte strides
 * `byte_strides` (borrowed, rank entries; NULL meaning compact row-major) of
 * elements of `type_tag` and `itemsize` bytes. Row-major when the strides are
 * compact in that order or there is at most one element (an extent of 1 may
 * have any stride), column-major when compact in that order at rank 2 or
 * more, else strided when the type is of whole bytes (not bool), every
 * stride is a whole number of elements and the bytes reached are known
 * (hurray_strided_extent); otherwise layout_tag 0: a row-major copy. Also 0
 * for a rank above HURRAY_MAX_RANK, an itemsize of 0 or above 2**63 - 1, or
 * an element count past 64 bits. *out is caller storage, zeroed first.
 */
HURRAY_API void hurray_strided_classify(uint8_t type_tag, uint8_t *first, uint64_t itemsize,
                                        uint32_t rank, const uint64_t *shape,
                                        const int64_t *byte_strides, HurrayStridedForm *out);

/* How NumPy holds a tensor (hurray_numpy_form). */
typedef enum HurrayNumpyForm {
  HURRAY_NUMPY_VIEW = 1,    /* its own dtype (hurray_dtype_array_typestr) */
  HURRAY_NUMPY_BOOL = 2,    /* bool: unpacked to one byte per element, a copy */
  HURRAY_NUMPY_BFLOAT16 = 3 /* the uint16 codes, typed bfloat16 by ml_dtypes */
} HurrayNumpyForm;

/*
 * Whether NumPy can hold a tensor with fields `f` (borrowed), and how: *form
 * a HurrayNumpyForm; *gather true for the dense layouts NumPy cannot view
 * (tiled, Morton, Hilbert: the elements are copied out in row-major order,
 * hurray_layout_to_row_major), false for row-major, column-major and strided
 * (a strided view of buffer 0). HURRAY_ERR_UNSUPPORTED with the reason
 * otherwise, checked in this order: a layout without one dense element
 * buffer (field "layout.tag"), a quantized tensor ("quantization"), a
 * dynamic extent ("shape"), an element type NumPy has no dtype for, a
 * strided bool included ("type_tag"). HURRAY_ERR_NULL_POINTER for a NULL
 * argument. The device and whether the bytes may be read are the caller's.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_numpy_form(const HurrayDescriptorFields *f,
                                                           uint8_t *form, bool *gather,
                                                           HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_INTEROP_H */
