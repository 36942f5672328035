/*
 * dlpack.h - the DLPack C ABI structures this module produces and consumes,
 * written from the public DLPack specification (v1.1). Private header: the
 * layouts below are an ABI contract, so field order and widths are exact.
 */
#ifndef HURRAY_PY_DLPACK_H
#define HURRAY_PY_DLPACK_H

#include <stdint.h>

/* Version this module speaks when the consumer allows it. */
#define HRPY_DLPACK_MAJOR 1u
#define HRPY_DLPACK_MINOR 1u

/* DLDeviceType values. */
enum {
  HRPY_kDLCPU = 1,
  HRPY_kDLCUDA = 2,
  HRPY_kDLCUDAHost = 3,
  HRPY_kDLOpenCL = 4,
  HRPY_kDLVulkan = 7,
  HRPY_kDLMetal = 8,
  HRPY_kDLVPI = 9,
  HRPY_kDLROCM = 10,
  HRPY_kDLROCMHost = 11,
  HRPY_kDLExtDev = 12,
  HRPY_kDLCUDAManaged = 13,
  HRPY_kDLOneAPI = 14,
  HRPY_kDLWebGPU = 15,
  HRPY_kDLHexagon = 16
};

/* DLDataTypeCode values. */
enum {
  HRPY_kDLInt = 0,
  HRPY_kDLUInt = 1,
  HRPY_kDLFloat = 2,
  HRPY_kDLOpaqueHandle = 3,
  HRPY_kDLBfloat = 4,
  HRPY_kDLComplex = 5,
  HRPY_kDLBool = 6,
  HRPY_kDLFloat8_e3m4 = 7,
  HRPY_kDLFloat8_e4m3 = 8,
  HRPY_kDLFloat8_e4m3b11fnuz = 9,
  HRPY_kDLFloat8_e4m3fn = 10,
  HRPY_kDLFloat8_e4m3fnuz = 11,
  HRPY_kDLFloat8_e5m2 = 12,
  HRPY_kDLFloat8_e5m2fnuz = 13,
  HRPY_kDLFloat8_e8m0fnu = 14,
  HRPY_kDLFloat6_e2m3fn = 15,
  HRPY_kDLFloat6_e3m2fn = 16,
  HRPY_kDLFloat4_e2m1fn = 17
};

/* DLManagedTensorVersioned.flags bits. */
#define HRPY_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define HRPY_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)
#define HRPY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (UINT64_C(1) << 2)

typedef struct {
  uint32_t major;
  uint32_t minor;
} HrpyDLPackVersion;

typedef struct {
  int32_t device_type; /* DLDeviceType (a C enum: int-sized) */
  int32_t device_id;
} HrpyDLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} HrpyDLDataType;

typedef struct {
  void *data;
  HrpyDLDevice device;
  int32_t ndim;
  HrpyDLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL means compact row-major */
  uint64_t byte_offset;
} HrpyDLTensor;

/* Legacy capsule "dltensor". */
typedef struct HrpyDLManagedTensor {
  HrpyDLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct HrpyDLManagedTensor *self);
} HrpyDLManagedTensor;

/* Versioned capsule "dltensor_versioned" (DLPack >= 1.0). */
typedef struct HrpyDLManagedTensorVersioned {
  HrpyDLPackVersion version;
  void *manager_ctx;
  void (*deleter)(struct HrpyDLManagedTensorVersioned *self);
  uint64_t flags;
  HrpyDLTensor dl_tensor;
} HrpyDLManagedTensorVersioned;

#endif /* HURRAY_PY_DLPACK_H */
