/*
 * What other array libraries call the format's types, devices and layouts
 * (include/hurray/interop.h): DLPack's type codes and device types, NumPy's
 * type strings and the buffer-protocol formats, and strided geometry.
 */
#include "hurray/interop.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "hurray/convert.h"
#include "hurray/device.h"
#include "hurray/dtype.h"
#include "hurray/layout.h"
#include "internal/common.h"

/* DLDataTypeCode values. */
enum {
  DL_INT = 0,
  DL_UINT = 1,
  DL_FLOAT = 2,
  DL_BFLOAT = 4,
  DL_COMPLEX = 5,
  DL_BOOL = 6,
  DL_FLOAT8_E4M3FN = 10,
  DL_FLOAT8_E5M2 = 12,
  DL_FLOAT8_E8M0FNU = 14,
  DL_FLOAT6_E2M3FN = 15,
  DL_FLOAT6_E3M2FN = 16,
  DL_FLOAT4_E2M1FN = 17
};

/* The element types DLPack and the format share, read both ways; the float8,
 * float6 and float4 codes came with DLPack 1.1. */
static const struct {
  uint8_t tag, code, bits;
  bool v11;
} k_dl_types[] = {
    {HURRAY_DTYPE_FLOAT16, DL_FLOAT, 16, false},
    {HURRAY_DTYPE_FLOAT32, DL_FLOAT, 32, false},
    {HURRAY_DTYPE_FLOAT64, DL_FLOAT, 64, false},
    {HURRAY_DTYPE_BFLOAT16, DL_BFLOAT, 16, false},
    {HURRAY_DTYPE_INT8, DL_INT, 8, false},
    {HURRAY_DTYPE_INT16, DL_INT, 16, false},
    {HURRAY_DTYPE_INT32, DL_INT, 32, false},
    {HURRAY_DTYPE_INT64, DL_INT, 64, false},
    {HURRAY_DTYPE_UINT8, DL_UINT, 8, false},
    {HURRAY_DTYPE_UINT16, DL_UINT, 16, false},
    {HURRAY_DTYPE_UINT32, DL_UINT, 32, false},
    {HURRAY_DTYPE_UINT64, DL_UINT, 64, false},
    {HURRAY_DTYPE_COMPLEX64, DL_COMPLEX, 64, false},
    {HURRAY_DTYPE_COMPLEX128, DL_COMPLEX, 128, false},
    {HURRAY_DTYPE_BOOL, DL_BOOL, 8, false},
    {HURRAY_DTYPE_FLOAT8_E4M3, DL_FLOAT8_E4M3FN, 8, true},
    {HURRAY_DTYPE_FLOAT8_E5M2, DL_FLOAT8_E5M2, 8, true},
    {HURRAY_DTYPE_FLOAT8_E8M0, DL_FLOAT8_E8M0FNU, 8, true},
    {HURRAY_DTYPE_FLOAT6_E2M3, DL_FLOAT6_E2M3FN, 6, true},
    {HURRAY_DTYPE_FLOAT6_E3M2, DL_FLOAT6_E3M2FN, 6, true},
    {HURRAY_DTYPE_FLOAT4_E2M1, DL_FLOAT4_E2M1FN, 4, true},
};
#define DL_TYPE_COUNT (sizeof k_dl_types / sizeof k_dl_types[0])

/* DLPack's device types: the (device, memory class) pairs each one carries. */
static const struct {
  int32_t type;
  uint8_t device, memory_class;
} k_dl_devices[] = {
    {HURRAY_DL_CPU, HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_CPU, HURRAY_DEVICE_CPU, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_CPU, HURRAY_DEVICE_CPU, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_CUDA, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_CUDA_HOST, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_CUDA_MANAGED, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_ROCM, HURRAY_DEVICE_ROCM, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_ROCM_HOST, HURRAY_DEVICE_ROCM, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_METAL, HURRAY_DEVICE_METAL, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_METAL, HURRAY_DEVICE_METAL, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_METAL, HURRAY_DEVICE_METAL, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_VULKAN, HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_VULKAN, HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_VULKAN, HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_WEBGPU, HURRAY_DEVICE_WEBGPU, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_HEXAGON, HURRAY_DEVICE_HEXAGON, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_HEXAGON, HURRAY_DEVICE_HEXAGON, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_HEXAGON, HURRAY_DEVICE_HEXAGON, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_ONEAPI, HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_ONEAPI, HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_ONEAPI, HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_UNIFIED},
    {HURRAY_DL_OPENCL, HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD},
    {HURRAY_DL_OPENCL, HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_HOST_PINNED},
    {HURRAY_DL_OPENCL, HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_UNIFIED},
};
#define DL_DEVICE_COUNT (sizeof k_dl_devices / sizeof k_dl_devices[0])

HurrayStatus hurray_dlpack_dtype_encode(uint8_t type_tag, uint32_t minor, HurrayDLDataType *out,
                                        HurrayError *err) {
  const char *name = hurray_dtype_name(type_tag);
  for (size_t i = 0; i < DL_TYPE_COUNT; i++) {
    if (k_dl_types[i].tag != type_tag) continue;
    if (k_dl_types[i].v11 && minor < 1)
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                          "%s needs DLPack 1.1; the consumer's max_version is older", name);
    out->code = k_dl_types[i].code;
    out->bits = k_dl_types[i].bits;
    out->lanes = 1;
    return HURRAY_OK;
  }
  return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                      "%s is not in the DLPack type enum", name != NULL ? name : "a private type");
}

HurrayStatus hurray_dlpack_dtype_decode(HurrayDLDataType dt, uint64_t flags, uint8_t *out_tag,
                                        HurrayError *err) {
  bool padded = (flags & HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0;
  for (size_t i = 0; dt.lanes == 1 && i < DL_TYPE_COUNT; i++) {
    if (k_dl_types[i].code == dt.code && k_dl_types[i].bits == dt.bits &&
        !(dt.bits < 8 && padded)) {
      *out_tag = k_dl_types[i].tag;
      return HURRAY_OK;
    }
  }
  return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                      "DLPack dtype (code %u, bits %u, lanes %u) has no Hurray type",
                      (unsigned)dt.code, (unsigned)dt.bits, (unsigned)dt.lanes);
}

HurrayStatus hurray_dlpack_device_encode(uint8_t device_tag, uint8_t memory_class, int32_t *out,
                                         HurrayError *err) {
  for (size_t i = 0; i < DL_DEVICE_COUNT; i++) {
    if (k_dl_devices[i].device == device_tag && k_dl_devices[i].memory_class == memory_class) {
      *out = k_dl_devices[i].type;
      return HURRAY_OK;
    }
  }
  const char *dn = hurray_device_name(device_tag), *mn = hurray_memory_class_name(memory_class);
  return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                      "device %s (0x%02x) with memory class %s (0x%02x) has no DLPack device "
                      "type; use the native protocol (__hurray__) instead",
                      dn != NULL ? dn : "private", device_tag, mn != NULL ? mn : "private",
                      memory_class);
}

HurrayStatus hurray_dlpack_device_decode(int32_t device_type, uint8_t *device_tag,
                                         uint8_t *memory_class, HurrayError *err) {
  for (size_t i = 0; i < DL_DEVICE_COUNT; i++) { /* the first pair of a type is its own */
    if (k_dl_devices[i].type == device_type) {
      *device_tag = k_dl_devices[i].device;
      *memory_class = k_dl_devices[i].memory_class;
      return HURRAY_OK;
    }
  }
  return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                      "DLPack device type %d has no Hurray device", (int)device_type);
}

/* ---- reading a DLPack tensor ------------------------------------------------- */

/* Whether non-NULL `strides` (in units of `unit`) are compact in row-major (or
 * column-major) order; a product that overflows describes no compact order. */
static bool compact(const uint64_t *shape, const int64_t *strides, uint32_t rank, bool row,
                    int64_t unit) {
  int64_t acc = unit;
  bool ok = true;
  for (uint32_t i = 0; i < rank; i++) {
    uint32_t k = row ? rank - 1 - i : i;
    if (shape[k] != 1 && (!ok || strides[k] != acc)) return false;
    ok = ok && !hurray__mul_overflow_i64(acc, (int64_t)shape[k], &acc);
  }
  return true;
}

/* HURRAY_LAYOUT_ROW_MAJOR when `strides` are NULL, compact row-major, or there
 * is at most one element; HURRAY_LAYOUT_COL_MAJOR when compact column-major at
 * rank 2 or more; 0 otherwise. */
static uint8_t compact_order(const uint64_t *shape, const int64_t *strides, uint32_t rank,
                             uint64_t count, int64_t unit) {
  if (strides == NULL || count <= 1 || compact(shape, strides, rank, true, unit))
    return HURRAY_LAYOUT_ROW_MAJOR;
  return rank >= 2 && compact(shape, strides, rank, false, unit) ? HURRAY_LAYOUT_COL_MAJOR : 0;
}

#define BAD_TABLE(...) \
  hurray__fail(err, HURRAY_ERR_INVALID_BUFFER_TABLE, HURRAY_NO_OFFSET, NULL, __VA_ARGS__)

HurrayStatus hurray_dlpack_import(const HurrayDLTensor *dl, uint64_t flags,
                                  HurrayDLPackImport *out, HurrayError *err) {
  if (dl == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL, "dl or out is NULL");
  /* the scalars only: the arrays are written as far as the rank reaches */
  memset(out, 0, offsetof(HurrayDLPackImport, shape));
  out->span_base = NULL;
  out->span = out->span_offset = 0;
  HURRAY_TRY(hurray_dlpack_dtype_decode(dl->dtype, flags, &out->type_tag, err));
  HURRAY_TRY(hurray_dlpack_device_decode(dl->device.device_type, &out->device_tag,
                                         &out->memory_class, err));
  if (dl->ndim < 0 || dl->ndim > (int32_t)HURRAY_MAX_RANK)
    return BAD_TABLE("rank %d is outside 0..%u", (int)dl->ndim, (unsigned)HURRAY_MAX_RANK);
  uint32_t rank = out->rank = (uint32_t)dl->ndim;
  const HurrayDtypeInfo *info = hurray_dtype_info(out->type_tag);
  out->itemsize = out->type_tag == HURRAY_DTYPE_BOOL ? 1u
                  : info->bit_width >= 8             ? info->bit_width / 8u
                                                     : 0u;
  if (rank > 0 && dl->shape == NULL)
    return BAD_TABLE("DLTensor.shape is NULL for rank %u", (unsigned)rank);
  for (uint32_t k = 0; k < rank; k++) {
    if (dl->shape[k] < 0)
      return BAD_TABLE("shape[%u] is negative (%lld)", (unsigned)k, (long long)dl->shape[k]);
    out->shape[k] = (uint64_t)dl->shape[k];
  }
  uint64_t count = 1, nbytes_all = 0;
  for (uint32_t k = 0; k < rank; k++)
    if (hurray__mul_overflow_u64(count, out->shape[k], &count))
      return BAD_TABLE("the element count or byte size of shape overflows 2**63");
  if (out->itemsize > 0 && (hurray__mul_overflow_u64(count, out->itemsize, &nbytes_all) ||
                            nbytes_all > (uint64_t)INT64_MAX))
    return BAD_TABLE("the element count or byte size of shape overflows 2**63");
  out->count = count;
  if (hurray_buffer_size_bytes(out->type_tag, count, &out->nbytes) != HURRAY_OK)
    return BAD_TABLE("the element count or byte size of shape overflows 2**63");
  if (count > 0 && dl->data == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "DLTensor.data is NULL but the tensor has %llu elements; refusing to "
                        "read through a NULL pointer",
                        (unsigned long long)count);
  /* the first element lies byte_offset bytes into the producer's buffer,
   * which a Hurray buffer describes only below 2**63 bytes */
  if (count > 0 && (dl->byte_offset > (uint64_t)INT64_MAX - nbytes_all ||
                    dl->byte_offset > UINTPTR_MAX - (uintptr_t)dl->data))
    return BAD_TABLE("DLTensor.byte_offset %llu puts the data past the end of the address "
                     "space, or past the 2**63 bytes a buffer can hold",
                     (unsigned long long)dl->byte_offset);
  out->first = count > 0 ? (uint8_t *)dl->data + dl->byte_offset : NULL;
  uint8_t order = compact_order(out->shape, dl->strides, rank, count, 1);
  bool rowm = order == HURRAY_LAYOUT_ROW_MAJOR, colm = order == HURRAY_LAYOUT_COL_MAJOR;
  out->layout_tag = rowm ? HURRAY_LAYOUT_ROW_MAJOR : HURRAY_LAYOUT_COL_MAJOR;
  if (!rowm && out->itemsize == 0)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                        "a non-contiguous sub-byte tensor cannot be imported");
  if (rowm || colm) return HURRAY_OK;
  /* Any other strides: the bytes they reach, checked. */
  out->layout_tag = HURRAY_LAYOUT_STRIDED;
  for (uint32_t k = 0; k < rank; k++) {
    out->strides[k] = dl->strides[k];
    /* an extent of 1 is never stepped: its stride is irrelevant to the bytes */
    if (hurray__mul_overflow_i64(out->shape[k] == 1 ? 0 : dl->strides[k],
                                 (int64_t)out->itemsize, &out->byte_strides[k]))
      return BAD_TABLE("strides[%u] = %lld overflows 64 bits in bytes", (unsigned)k,
                       (long long)dl->strides[k]);
  }
  if (!hurray_strided_extent(out->first, out->itemsize, rank, out->shape, out->strides,
                             &out->span_base, &out->span, &out->span_offset) ||
      dl->byte_offset > (uint64_t)INT64_MAX - (out->span - out->span_offset))
    return BAD_TABLE("the strides reach beyond the address space (their extent overflows 64 "
                     "bits or wraps around the data pointer)");
  return HURRAY_OK;
}

/* ---- NumPy and the Python buffer protocol ------------------------------------ */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BO ">"
#define OTHER_ORDER(c) ((c) == '<')
#else
#define BO "<"
#define OTHER_ORDER(c) ((c) == '>' || (c) == '!')
#endif

const char *hurray_dtype_array_typestr(uint8_t type_tag) {
  switch (type_tag) {
    case HURRAY_DTYPE_FLOAT16: return BO "f2";
    case HURRAY_DTYPE_FLOAT32: return BO "f4";
    case HURRAY_DTYPE_FLOAT64: return BO "f8";
    case HURRAY_DTYPE_INT8: return "|i1";
    case HURRAY_DTYPE_UINT8: return "|u1";
    case HURRAY_DTYPE_INT16: return BO "i2";
    case HURRAY_DTYPE_UINT16: return BO "u2";
    case HURRAY_DTYPE_INT32: return BO "i4";
    case HURRAY_DTYPE_UINT32: return BO "u4";
    case HURRAY_DTYPE_INT64: return BO "i8";
    case HURRAY_DTYPE_UINT64: return BO "u8";
    case HURRAY_DTYPE_COMPLEX64: return BO "c8";
    case HURRAY_DTYPE_COMPLEX128: return BO "c16";
    default: return NULL;
  }
}

uint8_t hurray_dtype_from_array_kind(char kind, uint64_t itemsize) {
  static const uint8_t ints[4] = {HURRAY_DTYPE_INT8, HURRAY_DTYPE_INT16, HURRAY_DTYPE_INT32,
                                  HURRAY_DTYPE_INT64};
  static const uint8_t uints[4] = {HURRAY_DTYPE_UINT8, HURRAY_DTYPE_UINT16, HURRAY_DTYPE_UINT32,
                                   HURRAY_DTYPE_UINT64};
  int log2 = itemsize == 1 ? 0 : itemsize == 2 ? 1 : itemsize == 4 ? 2 : itemsize == 8 ? 3 : -1;
  switch (kind) {
    case 'b': return itemsize == 1 ? HURRAY_DTYPE_BOOL : 0;
    case 'i': return log2 >= 0 ? ints[log2] : 0;
    case 'u': return log2 >= 0 ? uints[log2] : 0;
    case 'f':
      return itemsize == 2   ? HURRAY_DTYPE_FLOAT16
             : itemsize == 4 ? HURRAY_DTYPE_FLOAT32
             : itemsize == 8 ? HURRAY_DTYPE_FLOAT64
                             : 0;
    case 'c':
      return itemsize == 8 ? HURRAY_DTYPE_COMPLEX64 : itemsize == 16 ? HURRAY_DTYPE_COMPLEX128 : 0;
    default: return 0;
  }
}

uint8_t hurray_dtype_from_buffer_format(const char *fmt, uint64_t itemsize, bool *swapped) {
  *swapped = false;
  if (fmt == NULL) fmt = "B";
  for (; *fmt != '\0' && strchr("@=<>!", *fmt) != NULL; fmt++)
    if (OTHER_ORDER(*fmt)) *swapped = true;
  if (fmt[0] == 'Z' && (fmt[1] == 'f' || fmt[1] == 'd') && fmt[2] == '\0')
    return hurray_dtype_from_array_kind('c', fmt[1] == 'f' && itemsize == 8    ? 8
                                             : fmt[1] == 'd' && itemsize == 16 ? 16
                                                                               : 0);
  if (fmt[0] == '\0' || fmt[1] != '\0') return 0;
  /* the struct module's codes by kind; the sizes are the exporter's */
  char kind = fmt[0] == '?'                        ? 'b'
              : strchr("efd", fmt[0]) != NULL      ? 'f'
              : strchr("bhilqn", fmt[0]) != NULL   ? 'i'
              : strchr("BcHILQN", fmt[0]) != NULL  ? 'u'
                                                   : '\0';
  if (kind == 'f' && itemsize != (fmt[0] == 'e' ? 2u : fmt[0] == 'f' ? 4u : 8u)) return 0;
  return kind != '\0' ? hurray_dtype_from_array_kind(kind, itemsize) : 0;
}

/* ---- SciPy ------------------------------------------------------------------ */

bool hurray_coo_indices_increasing(const void *indices, uint64_t nnz, uint32_t rank) {
  if (nnz < 2) return true;
  if (rank == 0) return false; /* every row is the same (empty) coordinate */
  if ((uintptr_t)indices % sizeof(uint64_t) == 0) {
    /* read as words (a NumPy uint64 array is aligned); ranks 1 and 2 unrolled */
    const uint64_t *w = (const uint64_t *)indices;
    if (rank == 1) {
      for (uint64_t i = 1; i < nnz; i++)
        if (w[i - 1] >= w[i]) return false;
      return true;
    }
    if (rank == 2) {
      for (uint64_t i = 1; i < nnz; i++) {
        uint64_t a0 = w[2 * i - 2], a1 = w[2 * i - 1], b0 = w[2 * i], b1 = w[2 * i + 1];
        if (!(a0 < b0 || (a0 == b0 && a1 < b1))) return false;
      }
      return true;
    }
  }
  const uint8_t *p = indices;
  size_t row = (size_t)rank * 8u;
  for (uint64_t i = 1; i < nnz; i++, p += row) {
    uint32_t d = 0;
    uint64_t x = 0, y = 0;
    for (; d < rank; d++) {
      memcpy(&x, p + 8u * d, 8);
      memcpy(&y, p + row + 8u * d, 8);
      if (x != y) break;
    }
    if (d == rank || x > y) return false;
  }
  return true;
}

/* ---- strided geometry -------------------------------------------------------- */

HurrayStatus hurray_strided_geometry(const HurrayDescriptorFields *f, int64_t unit,
                                     int64_t *shape, int64_t *strides, HurrayError *err) {
  uint32_t rank = f->rank;
  for (uint32_t k = 0; k < rank; k++) {
    if (f->shape[k] > (uint64_t)INT64_MAX)
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                          "shape[%u] is %llu, beyond the 2**63 - 1 a strided consumer can hold "
                          "(legal here beside a 0); no NumPy or DLPack form",
                          (unsigned)k, (unsigned long long)f->shape[k]);
    shape[k] = (int64_t)f->shape[k];
  }
  /* Consumers multiply the dimensions before they look for a zero (PyTorch's
   * element count overflows on (2**32, 2**32, 0) and it drops the tensor half
   * taken): the product of the nonzero dimensions, in units, must fit in
   * int64 whatever the element count. */
  int64_t prod = unit;
  for (uint32_t k = 0; k < rank; k++) {
    if (shape[k] != 0 && hurray__mul_overflow_i64(prod, shape[k], &prod)) {
      char dims[96];
      size_t used = 0;
      dims[used++] = '(';
      for (uint32_t j = 0; j < rank && used + 24 < sizeof dims; j++)
        used += (size_t)snprintf(dims + used, sizeof dims - used, j ? ", %lld" : "%lld",
                                 (long long)shape[j]);
      snprintf(dims + used, sizeof dims - used, rank == 1 ? ",)" : ")");
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                          "shape %s multiplies past 2**63 - 1 (nonzero dimensions times %lld "
                          "byte%s); NumPy, DLPack and PyTorch cannot hold it even empty",
                          dims, (long long)unit, HURRAY__S(unit));
    }
  }
  bool ok = true, col = f->layout.tag == HURRAY_LAYOUT_COL_MAJOR;
  if (f->layout.tag == HURRAY_LAYOUT_STRIDED) {
    for (uint32_t k = 0; k < rank && ok; k++)
      ok = !hurray__mul_overflow_i64(f->layout.u.strided.strides[k], unit, &strides[k]);
  } else { /* row- or column-major */
    int64_t acc = unit;
    for (uint32_t i = 0; i < rank; i++) {
      uint32_t k = col ? i : rank - 1 - i;
      strides[k] = acc;
      /* past the last dimension a product is never used: it may overflow */
      if (i + 1 < rank && ok) ok = !hurray__mul_overflow_i64(acc, shape[k], &acc);
    }
  }
  if (!ok)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, NULL,
                        "a stride of this tensor does not fit in 64 bits (its shape multiplies "
                        "past 2**63); it has no NumPy or DLPack form");
  return HURRAY_OK;
}

bool hurray_strided_extent(uint8_t *first, uint64_t itemsize, uint32_t rank,
                           const uint64_t *shape, const int64_t *strides, uint8_t **base,
                           uint64_t *span, uint64_t *offset) {
  /* hurray_strided_span (src/core/strided.c) over a pointer */
  uintptr_t at;
  if (!hurray_strided_span((uintptr_t)first, itemsize, rank, shape, strides, &at, span, offset))
    return false;
  *base = (uint8_t *)at;
  return true;
}

void hurray_strided_classify(uint8_t type_tag, uint8_t *first, uint64_t itemsize, uint32_t rank,
                             const uint64_t *shape, const int64_t *byte_strides,
                             HurrayStridedForm *out) {
  memset(out, 0, sizeof *out);
  uint64_t count = 0;
  if (rank > HURRAY_MAX_RANK || itemsize == 0 || itemsize > (uint64_t)INT64_MAX ||
      !hurray_shape_element_count(rank, shape, &count))
    return;
  out->layout_tag = compact_order(shape, byte_strides, rank, count, (int64_t)itemsize);
  if (out->layout_tag != 0) return;
  /* Other strides: a strided layout when they are whole elements of a type
   * of whole bytes (bool is bit-packed) and the bytes they reach are known. */
  const HurrayDtypeInfo *info = hurray_dtype_info(type_tag);
  if (info == NULL || type_tag == HURRAY_DTYPE_BOOL || info->bit_width < 8) return;
  for (uint32_t k = 0; k < rank; k++) {
    if (byte_strides[k] % (int64_t)itemsize != 0) return;
    out->strides[k] = byte_strides[k] / (int64_t)itemsize;
  }
  if (hurray_strided_extent(first, itemsize, rank, shape, out->strides, &out->span_base,
                            &out->span, &out->span_offset))
    out->layout_tag = HURRAY_LAYOUT_STRIDED;
}

#define NO_NUMPY(field, ...) \
  hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, field, __VA_ARGS__)

HurrayStatus hurray_numpy_form(const HurrayDescriptorFields *f, uint8_t *form, bool *gather,
                               HurrayError *err) {
  if (f == NULL || form == NULL || gather == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        f == NULL ? "f" : form == NULL ? "form" : "gather", "is NULL");
  uint8_t lt = f->layout.tag;
  bool view = lt == HURRAY_LAYOUT_ROW_MAJOR || lt == HURRAY_LAYOUT_COL_MAJOR ||
              lt == HURRAY_LAYOUT_STRIDED;
  if (!view && hurray_layout_class(lt) != HURRAY_LAYOUT_CLASS_DENSE) {
    const char *name = hurray_layout_name(lt);
    return NO_NUMPY("layout.tag", "a %s tensor has no single dense element buffer",
                    name != NULL ? name : "extension");
  }
  if (f->quantization != NULL)
    return NO_NUMPY("quantization", "a quantized tensor has no NumPy dtype");
  for (uint32_t i = 0; i < f->rank; i++)
    if (f->shape[i] == HURRAY_DYNAMIC_DIM)
      return NO_NUMPY("shape", "shape[%u] is dynamic (None); an array needs every extent",
                      (unsigned)i);
  uint8_t tag = f->type_tag;
  if (hurray_dtype_array_typestr(tag) != NULL) {
    *form = HURRAY_NUMPY_VIEW;
  } else if (tag == HURRAY_DTYPE_BOOL && lt != HURRAY_LAYOUT_STRIDED) {
    *form = HURRAY_NUMPY_BOOL;
  } else if (tag == HURRAY_DTYPE_BFLOAT16) {
    *form = HURRAY_NUMPY_BFLOAT16;
  } else {
    const HurrayDtypeInfo *info = hurray_dtype_info(tag);
    return NO_NUMPY("type_tag", "%s has no NumPy dtype", info != NULL ? info->name : "a private type");
  }
  *gather = !view;
  return HURRAY_OK;
}
