/*
 * dlpack.h - the DLPack C ABI structures this module produces and consumes,
 * written from the public DLPack specification (v1.1). Private header: the
 * layouts below are an ABI contract, so field order and widths are exact.
 */
#ifndef HURRAY_PY_DLPACK_H
#define HURRAY_PY_DLPACK_H

#include <stdint.h>

/* Version this module speaks when the consumer allows it. */
#define HPY_DLPACK_MAJOR 1u
#define HPY_DLPACK_MINOR 1u

/* DLDeviceType values. */
enum {
  HPY_kDLCPU = 1,
  HPY_kDLCUDA = 2,
  HPY_kDLCUDAHost = 3,
  HPY_kDLOpenCL = 4,
  HPY_kDLVulkan = 7,
  HPY_kDLMetal = 8,
  HPY_kDLVPI = 9,
  HPY_kDLROCM = 10,
  HPY_kDLROCMHost = 11,
  HPY_kDLExtDev = 12,
  HPY_kDLCUDAManaged = 13,
  HPY_kDLOneAPI = 14,
  HPY_kDLWebGPU = 15,
  HPY_kDLHexagon = 16
};

/* DLDataTypeCode values. */
enum {
  HPY_kDLInt = 0,
  HPY_kDLUInt = 1,
  HPY_kDLFloat = 2,
  HPY_kDLOpaqueHandle = 3,
  HPY_kDLBfloat = 4,
  HPY_kDLComplex = 5,
  HPY_kDLBool = 6,
  HPY_kDLFloat8_e3m4 = 7,
  HPY_kDLFloat8_e4m3 = 8,
  HPY_kDLFloat8_e4m3b11fnuz = 9,
  HPY_kDLFloat8_e4m3fn = 10,
  HPY_kDLFloat8_e4m3fnuz = 11,
  HPY_kDLFloat8_e5m2 = 12,
  HPY_kDLFloat8_e5m2fnuz = 13,
  HPY_kDLFloat8_e8m0fnu = 14,
  HPY_kDLFloat6_e2m3fn = 15,
  HPY_kDLFloat6_e3m2fn = 16,
  HPY_kDLFloat4_e2m1fn = 17
};

/* DLManagedTensorVersioned.flags bits. */
#define HPY_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define HPY_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)
#define HPY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)

typedef struct {
  uint32_t major;
  uint32_t minor;
} HpyDLPackVersion;

typedef struct {
  int32_t device_type; /* DLDeviceType (a C enum: int-sized) */
  int32_t device_id;
} HpyDLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} HpyDLDataType;

typedef struct {
  void *data;
  HpyDLDevice device;
  int32_t ndim;
  HpyDLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} HpyDLTensor;

/* Legacy capsule "dltensor". */
typedef struct HpyDLManagedTensor {
  HpyDLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct HpyDLManagedTensor *self);
} HpyDLManagedTensor;

/* Versioned capsule "dltensor_versioned" (DLPack >= 1.0). */
typedef struct HpyDLManagedTensorVersioned {
  HpyDLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct HpyDLManagedTensorVersioned *self);
  uint64_t flags;
  HpyDLTensor dl_tensor;
} HpyDLManagedTensorVersioned;

#endif /* HURRAY_PY_DLPACK_H */
