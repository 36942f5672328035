/*
 * interop/dlpack.c - DLPack producer (Tensor.__dlpack__, __dlpack_device__), consumer
 * (hurray.from_dlpack, from_torch) and Tensor.to_torch (docs/internals/decisions.md,
 * "DLPack").
 *
 * Producer: max_version None or below (1, 0) gives the legacy "dltensor"
 * capsule, otherwise "dltensor_versioned". Strides are always filled (in
 * elements). The capsule's manager context holds a strong reference to the
 * tensor, released by the deleter, which the capsule destructor calls when
 * the capsule dies unconsumed. The deleter takes the GIL itself and leaks
 * rather than touch a finalizing interpreter.
 *
 * Consumer: accepts both capsule kinds, asks for the newest version it
 * speaks, retries without keywords when the producer raises TypeError, and
 * decides copy per buffer (alignment floor, bool packing, non-contiguous
 * strides).
 */
#include "interop/dlpack.h"

#include "core/buffer.h"
#include "core/device.h"
#include "core/tensor.h"
#include "interop/dlpack_abi.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/runtime.h"

#include <string.h>

#include "interop/dlpack_abi.h"
#include "interop/state.h"

/* An implicit copy (copy=None) of a strided tensor that repeats elements may take
 * its buffer's size, or this much when that is larger (a short broadcast of a tiny
 * base): a forged view record cannot make it allocate more. */
#define HRPY_IMPLICIT_COPY_FLOOR ((uint64_t)64 << 20)


static const char NAME_LEGACY[] = "dltensor";
static const char NAME_VERSIONED[] = "dltensor_versioned";
static const char NAME_USED_LEGACY[] = "used_dltensor";
static const char NAME_USED_VERSIONED[] = "used_dltensor_versioned";
static const char NAME_OWNER_LEGACY[] = "hurray._dlpack_import";
static const char NAME_OWNER_VERSIONED[] = "hurray._dlpack_import_versioned";


/* ---- producer --------------------------------------------------------------- */

/*
 * One export. Two parties hold it: the capsule and the managed tensor (whose
 * deleter a consumer calls when done). `refs` counts them and the block is
 * freed when both have let go; `released` makes the payload (the tensor
 * reference, the copy) go exactly once. So the block outlives whichever goes
 * first, and a consumer that calls the deleter but leaves the capsule named
 * "dltensor" (PyTorch does when it refuses the tensor after taking it) costs a
 * no-op in the capsule destructor instead of a second free.
 */
typedef struct {
  union {
    HrpyDLManagedTensor legacy;
    HrpyDLManagedTensorVersioned v;
  } m;
  PyObject *owner; /* the exported tensor (strong), NULL for a copy */
  void *copy;      /* owned copy (hurray_free), or NULL */
  int refs;        /* 2 while the capsule and the managed tensor live */
  int released;    /* 1 once the deleter ran */
  int64_t shape[HURRAY_MAX_RANK];
  int64_t strides[HURRAY_MAX_RANK];
} Export;

static void export_unref(Export *e) {
  if (hrpy_sub_fetch_int(&e->refs, 1) == 0) PyMem_RawFree(e);
}

/* The deleter's work: the payload once, then the managed tensor's reference. */
static void export_release(Export *e) {
  if (hrpy_exchange_int(&e->released, 1) == 0) {
    if (e->owner != NULL && !hrpy_interpreter_gone()) {
      PyGILState_STATE g = PyGILState_Ensure();
      Py_DECREF(e->owner);
      PyGILState_Release(g);
    }
    e->owner = NULL;
    hurray_free(e->copy);
    e->copy = NULL;
    export_unref(e);
  }
}

static void deleter_legacy(HrpyDLManagedTensor *m) {
  if (m != NULL) export_release((Export *)m->manager_ctx);
}
static void deleter_versioned(HrpyDLManagedTensorVersioned *m) {
  if (m != NULL) export_release((Export *)m->manager_ctx);
}

/* The export a capsule of ours carries: its context, set at creation (DLPack
 * consumers rename a capsule, never touch its context). */
static Export *export_of(PyObject *cap) {
  Export *e = PyCapsule_GetContext(cap);
  if (e == NULL) PyErr_Clear();
  return e;
}

static void capsule_dtor(PyObject *cap) {
  HrpySavedError saved;
  hrpy_dtor_begin(&saved);
  Export *e = export_of(cap);
  if (e != NULL) {
    /* unconsumed ("dltensor*"): release what the managed tensor holds,
     * unless a consumer already did; consumed ("used_*"): the consumer owns
     * the managed tensor now. Either way the capsule lets go of the block. */
    if (PyCapsule_IsValid(cap, NAME_VERSIONED) || PyCapsule_IsValid(cap, NAME_LEGACY))
      export_release(e);
    export_unref(e);
  }
  hrpy_dtor_end(&saved, cap);
}

/* The element types DLPack and Hurray share, read both ways; the float8,
 * float6 and float4 codes came with DLPack 1.1. */
static const struct {
  uint8_t tag, code, bits;
  bool v11;
} k_dl_types[] = {
    {HURRAY_DTYPE_FLOAT16, HRPY_kDLFloat, 16, false},
    {HURRAY_DTYPE_FLOAT32, HRPY_kDLFloat, 32, false},
    {HURRAY_DTYPE_FLOAT64, HRPY_kDLFloat, 64, false},
    {HURRAY_DTYPE_BFLOAT16, HRPY_kDLBfloat, 16, false},
    {HURRAY_DTYPE_INT8, HRPY_kDLInt, 8, false},
    {HURRAY_DTYPE_INT16, HRPY_kDLInt, 16, false},
    {HURRAY_DTYPE_INT32, HRPY_kDLInt, 32, false},
    {HURRAY_DTYPE_INT64, HRPY_kDLInt, 64, false},
    {HURRAY_DTYPE_UINT8, HRPY_kDLUInt, 8, false},
    {HURRAY_DTYPE_UINT16, HRPY_kDLUInt, 16, false},
    {HURRAY_DTYPE_UINT32, HRPY_kDLUInt, 32, false},
    {HURRAY_DTYPE_UINT64, HRPY_kDLUInt, 64, false},
    {HURRAY_DTYPE_COMPLEX64, HRPY_kDLComplex, 64, false},
    {HURRAY_DTYPE_COMPLEX128, HRPY_kDLComplex, 128, false},
    {HURRAY_DTYPE_BOOL, HRPY_kDLBool, 8, false},
    {HURRAY_DTYPE_FLOAT8_E4M3, HRPY_kDLFloat8_e4m3fn, 8, true},
    {HURRAY_DTYPE_FLOAT8_E5M2, HRPY_kDLFloat8_e5m2, 8, true},
    {HURRAY_DTYPE_FLOAT8_E8M0, HRPY_kDLFloat8_e8m0fnu, 8, true},
    {HURRAY_DTYPE_FLOAT6_E2M3, HRPY_kDLFloat6_e2m3fn, 6, true},
    {HURRAY_DTYPE_FLOAT6_E3M2, HRPY_kDLFloat6_e3m2fn, 6, true},
    {HURRAY_DTYPE_FLOAT4_E2M1, HRPY_kDLFloat4_e2m1fn, 4, true},
};
#define DL_TYPE_COUNT (sizeof k_dl_types / sizeof k_dl_types[0])

/* DLPack element type of a Hurray type; false when DLPack has none or the
 * consumer's version is too old for it (*needs_v11). */
static bool dl_dtype_of(uint8_t tag, HrpyDLDataType *out, bool *needs_v11) {
  for (size_t i = 0; i < DL_TYPE_COUNT; i++) {
    if (k_dl_types[i].tag != tag) continue;
    out->code = k_dl_types[i].code;
    out->bits = k_dl_types[i].bits;
    out->lanes = 1;
    *needs_v11 = k_dl_types[i].v11;
    return true;
  }
  *needs_v11 = false;
  return false;
}

/* Parses max_version: -1 for legacy, else the minor version to declare. */
static int parse_max_version(PyObject *mv, int *minor) {
  *minor = -1;
  if (mv == NULL || mv == Py_None) return 0;
  if (!PyTuple_Check(mv) || PyTuple_GET_SIZE(mv) != 2) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__: max_version must be a (major, minor) tuple");
    return -1;
  }
  long major = PyLong_AsLong(PyTuple_GET_ITEM(mv, 0));
  long mnr = PyLong_AsLong(PyTuple_GET_ITEM(mv, 1));
  if ((major == -1 || mnr == -1) && PyErr_Occurred()) return -1;
  if (major < 1) return 0;
  *minor = major > 1 ? (int)HRPY_DLPACK_MINOR : (mnr >= (long)HRPY_DLPACK_MINOR ? (int)HRPY_DLPACK_MINOR : 0);
  return 0;
}

PyObject *hrpy_tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of(self);
  PyObject *d = hrpy_tensor_device(self);
  int type = hrpy_device_to_dlpack(st, d);
  if (type == 0) return NULL;
  return Py_BuildValue("(ii)", type, (int)hrpy_device_id(d));
}

PyObject *hrpy_tensor_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  HrpyState *st = hrpy_state_of(self);
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  static const char *const names[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *a[4];
  if (hrpy_parse_args("__dlpack__", args, nargs, kwnames, names, 0, 0, a) < 0) return NULL;
  PyObject *stream = a[0];
  if (stream != NULL && stream != Py_None && (PyBool_Check(stream) || !PyLong_Check(stream))) {
    return PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an int, not %.100s",
                        Py_TYPE(stream)->tp_name);
  }
  int minor;
  if (parse_max_version(a[1], &minor) < 0) return NULL;
  int copy;
  if (hrpy_parse_copy(a[3], &copy) < 0) return NULL;

  uint8_t lt = t->f->layout.tag;
  if (lt != HURRAY_LAYOUT_ROW_MAJOR && lt != HURRAY_LAYOUT_COL_MAJOR &&
      lt != HURRAY_LAYOUT_STRIDED) {
    return hrpy_raise(PyExc_BufferError,
                     "__dlpack__: a %s tensor has no DLPack representation (DLPack describes "
                     "one dense strided buffer); use __hurray__",
                     hrpy_layout_name(lt));
  }
  if (t->f->quantization != NULL) {
    return hrpy_raise(PyExc_BufferError,
                     "__dlpack__: a quantized tensor has no DLPack element type; use __hurray__");
  }
  for (uint32_t i = 0; i < t->f->buffer_count; i++) {
    if (t->f->buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      const char *n = hurray_sync_mode_name(t->f->buffers[i].sync_mode);
      return hrpy_raise(PyExc_BufferError,
                       "__dlpack__: buffer %u is in sync mode '%s'; DLPack can only hand out "
                       "producer-synced buffers",
                       (unsigned)i, n != NULL ? n : "unknown");
    }
  }
  for (uint32_t i = 0; i < t->f->rank; i++) {
    if (t->f->shape[i] == HURRAY_DYNAMIC_DIM) {
      return hrpy_raise(PyExc_BufferError, "__dlpack__: shape[%u] is dynamic (None)",
                       (unsigned)i);
    }
  }
  HrpyDLDataType dt;
  bool needs_v11;
  const HurrayDtypeInfo *info = hurray_dtype_info(t->f->type_tag);
  if (!dl_dtype_of(t->f->type_tag, &dt, &needs_v11)) {
    return hrpy_raise(PyExc_BufferError, "__dlpack__: %s is not in the DLPack type enum",
                     info != NULL ? info->name : "a private type");
  }
  if (needs_v11 && minor < 1) {
    return hrpy_raise(PyExc_BufferError,
                     "__dlpack__: %s needs DLPack 1.1; the consumer's max_version is older",
                     info->name);
  }
  bool is_bool = t->f->type_tag == HURRAY_DTYPE_BOOL;
  if (is_bool && lt == HURRAY_LAYOUT_STRIDED) {
    return hrpy_raise(PyExc_BufferError, "__dlpack__: a strided bool tensor cannot be exported");
  }
  if (is_bool && copy != 1) {
    return hrpy_raise(PyExc_BufferError,
                     "__dlpack__: bool is bit-packed in Hurray and DLPack stores one byte per "
                     "element; pass copy=True to export an unpacked copy");
  }
  PyObject *dev = t->device;
  int32_t dev_id = hrpy_device_id(dev);
  int devtype = hrpy_device_to_dlpack(st, dev);
  if (devtype == 0) return NULL;
  if (a[2] != NULL && a[2] != Py_None) {
    int rtype = 0, rid = 0;
    if (!PyArg_ParseTuple(a[2], "ii;__dlpack__: dl_device must be (device_type, device_id)",
                          &rtype, &rid))
      return NULL;
    if (rtype != devtype || rid != dev_id) {
      return hrpy_raise(PyExc_BufferError,
                       "__dlpack__: cannot export to device (%d, %d); the tensor is on (%d, %d)",
                       rtype, rid, devtype, (int)dev_id);
    }
  }
  bool readonly = t->nbuf > 0 && t->bufs[0].readonly;
  bool host = hrpy_device_tag(dev) == HURRAY_DEVICE_CPU;
  if (copy == 1 && !host) {
    return hrpy_raise(PyExc_BufferError, "__dlpack__: copy=True needs host memory");
  }
  Export *e = PyMem_RawCalloc(1, sizeof(Export));
  if (e == NULL) return PyErr_NoMemory();
  uint32_t rank = t->f->rank;
  uint64_t esize = is_bool ? 1u : (uint64_t)dt.bits / 8u;
  int64_t bstrides[HURRAY_MAX_RANK];
  /* shape and strides, every product checked (a dimension of 2**63 or more,
   * legal beside a 0, has no DLPack form) */
  if (hrpy_tensor_strided_geometry(st, t, 1, e->shape, e->strides, "__dlpack__") < 0 ||
      hrpy_tensor_strided_geometry(st, t, (int64_t)esize, e->shape, bstrides, "__dlpack__") <
          0) {
    PyMem_RawFree(e);
    return NULL;
  }
  /* copy=None copies what consumers are known to mishandle: a read-only
   * buffer (PyTorch ignores DLPack's READ_ONLY flag, and a write into a
   * read-only mapping kills the process) and a negative stride (PyTorch
   * aborts on one). copy=False hands out exactly what is there, flagged. */
  bool negative = false;
  for (uint32_t k = 0; k < rank; k++) negative |= e->strides[k] < 0 && e->shape[k] > 1;
  bool do_copy = copy == 1 || (copy == -1 && host && (readonly || negative));
  if (minor < 0 && readonly && !do_copy) {
    PyMem_RawFree(e);
    return hrpy_raise(PyExc_BufferError,
                      "__dlpack__: the tensor is read-only and the legacy DLPack capsule cannot "
                      "say so; ask for max_version >= (1, 0) or leave copy=None");
  }
  uint64_t count = 0;
  (void)hrpy_element_count(rank, t->f->shape, &count);
  uint8_t *data = t->nbuf > 0 && t->bufs[0].data != NULL ? t->bufs[0].data + t->f->byte_offset
                                                          : NULL;
  if (do_copy) {
    uint64_t nbytes = 0;
    if (is_bool ? false
                : lt == HURRAY_LAYOUT_STRIDED
                      ? hrpy_mul_u64_overflow(count, esize, &nbytes)
                      : hurray_buffer_size_bytes(t->f->type_tag, count, &nbytes) != HURRAY_OK) {
      PyMem_RawFree(e);
      return hrpy_raise(PyExc_BufferError, "__dlpack__: size overflow");
    }
    if (is_bool) nbytes = count;
    if (copy == -1 && lt == HURRAY_LAYOUT_STRIDED && t->nbuf > 0 && nbytes > t->bufs[0].size &&
        nbytes > HRPY_IMPLICIT_COPY_FLOOR) {
      /* An implicit copy is bounded by the memory the tensor stands on (or a
       * small floor, for a short broadcast of a tiny base): only repeated
       * elements (a zero stride) make a tensor larger than its buffer, and a
       * view record forged so can be exabytes over a few bytes. */
      PyMem_RawFree(e);
      return PyErr_Format(PyExc_BufferError,
                          "__dlpack__: this tensor needs a copy (%s) and repeats elements (a "
                          "zero stride): the copy would take %llu bytes for a buffer of %llu "
                          "(an implicit copy takes at most the buffer's size or 64 MiB); "
                          "pass copy=True to make it anyway",
                          negative ? "negative strides" : "read-only memory",
                          (unsigned long long)nbytes, (unsigned long long)t->bufs[0].size);
    }
    e->copy = hurray_alloc((size_t)(nbytes > 0 ? nbytes : 1), HURRAY_MIN_BUFFER_ALIGNMENT);
    if (e->copy == NULL) {
      PyMem_RawFree(e);
      return PyErr_NoMemory();
    }
    if (count > 0 && data != NULL) {
      if (is_bool) {
        hrpy_bool_unpack(data, e->copy, count);
      } else if (lt == HURRAY_LAYOUT_STRIDED) {
        hrpy_strided_gather(e->copy, data, (size_t)esize, rank, t->f->shape, bstrides);
      } else {
        memcpy(e->copy, data, (size_t)nbytes);
      }
    }
    if (lt == HURRAY_LAYOUT_STRIDED) {
      /* the copy is compact row-major; its strides fit (count * esize did) */
      int64_t acc = 1;
      for (uint32_t k = rank; k-- > 0;) {
        e->strides[k] = acc;
        if (k > 0 && hrpy_mul_i64_overflow(acc, e->shape[k], &acc)) acc = 0;
      }
    }
    data = e->copy;
  } else {
    e->owner = Py_NewRef(self);
  }
  HrpyDLTensor *dl;
  if (minor >= 0) {
    e->m.v.version.major = HRPY_DLPACK_MAJOR;
    e->m.v.version.minor = (uint32_t)minor;
    e->m.v.manager_ctx = e;
    e->m.v.deleter = deleter_versioned;
    e->m.v.flags = (do_copy ? HRPY_DLPACK_FLAG_IS_COPIED : 0) |
                   (readonly && !do_copy ? HRPY_DLPACK_FLAG_READ_ONLY : 0);
    dl = &e->m.v.dl_tensor;
  } else {
    e->m.legacy.manager_ctx = e;
    e->m.legacy.deleter = deleter_legacy;
    dl = &e->m.legacy.dl_tensor;
  }
  dl->data = data;
  dl->device.device_type = devtype;
  dl->device.device_id = dev_id;
  dl->ndim = (int32_t)rank;
  dl->dtype = dt;
  dl->shape = e->shape;
  dl->strides = e->strides;
  dl->byte_offset = 0;
  PyObject *cap = PyCapsule_New(minor >= 0 ? (void *)&e->m.v : (void *)&e->m.legacy,
                                minor >= 0 ? NAME_VERSIONED : NAME_LEGACY, capsule_dtor);
  if (cap == NULL) {
    Py_XDECREF(e->owner);
    hurray_free(e->copy);
    PyMem_RawFree(e);
    return NULL;
  }
  e->refs = 2;
  if (PyCapsule_SetContext(cap, e) < 0) { /* cannot fail on a fresh capsule */
    e->refs = 1;
    export_release(e);
    PyCapsule_SetDestructor(cap, NULL);
    Py_DECREF(cap);
    return NULL;
  }
  return cap;
}

/* ---- consumer --------------------------------------------------------------- */

static void import_owner_dtor(PyObject *cap) {
  HrpySavedError saved;
  hrpy_dtor_begin(&saved);
  if (PyCapsule_IsValid(cap, NAME_OWNER_VERSIONED)) {
    HrpyDLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, NAME_OWNER_VERSIONED);
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, NAME_OWNER_LEGACY)) {
    HrpyDLManagedTensor *m = PyCapsule_GetPointer(cap, NAME_OWNER_LEGACY);
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  }
  hrpy_dtor_end(&saved, cap); /* a producer's deleter that raised */
}

/* The Hurray type of a DLPack one, 0 for none (a sub-byte type padded to
 * whole bytes is not Hurray's packed layout). */
static uint8_t tag_of_dl(HrpyDLDataType dt, bool padded) {
  for (size_t i = 0; dt.lanes == 1 && i < DL_TYPE_COUNT; i++)
    if (k_dl_types[i].code == dt.code && k_dl_types[i].bits == dt.bits)
      return dt.bits < 8 && padded ? 0 : k_dl_types[i].tag;
  return 0;
}

/* Hurray (device tag, memory class) of a DLPack device type; false if none. */
static bool device_of_dl(int32_t type, uint8_t *tag, uint8_t *mc) {
  *mc = HURRAY_MEMORY_STANDARD;
  switch (type) {
    case HRPY_kDLCPU: *tag = HURRAY_DEVICE_CPU; return true;
    case HRPY_kDLCUDA: *tag = HURRAY_DEVICE_CUDA; return true;
    case HRPY_kDLCUDAHost: *tag = HURRAY_DEVICE_CUDA; *mc = HURRAY_MEMORY_HOST_PINNED; return true;
    case HRPY_kDLCUDAManaged: *tag = HURRAY_DEVICE_CUDA; *mc = HURRAY_MEMORY_UNIFIED; return true;
    case HRPY_kDLROCM: *tag = HURRAY_DEVICE_ROCM; return true;
    case HRPY_kDLROCMHost: *tag = HURRAY_DEVICE_ROCM; *mc = HURRAY_MEMORY_HOST_PINNED; return true;
    case HRPY_kDLMetal: *tag = HURRAY_DEVICE_METAL; return true;
    case HRPY_kDLVulkan: *tag = HURRAY_DEVICE_VULKAN; return true;
    case HRPY_kDLWebGPU: *tag = HURRAY_DEVICE_WEBGPU; return true;
    case HRPY_kDLHexagon: *tag = HURRAY_DEVICE_HEXAGON; return true;
    case HRPY_kDLOneAPI: *tag = HURRAY_DEVICE_LEVEL_ZERO; return true;
    case HRPY_kDLOpenCL: *tag = HURRAY_DEVICE_OPENCL; return true;
    default: return false;
  }
}

/* Calls obj.__dlpack__(max_version=(1, 1)[, copy=False]); on TypeError, retries
 * without keywords (producers that predate DLPack 1.0). */
static PyObject *call_producer(HrpyState *st, PyObject *obj, int copy) {
  PyObject *meth = PyObject_GetAttr(obj, st->interop->s_dlpack);
  if (meth == NULL) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "from_dlpack: %.100s implements neither __dlpack__ nor is a DLPack capsule",
                   Py_TYPE(obj)->tp_name);
    }
    return NULL;
  }
  PyObject *kw = PyDict_New();
  PyObject *ver = Py_BuildValue("(II)", HRPY_DLPACK_MAJOR, HRPY_DLPACK_MINOR);
  PyObject *cap = NULL;
  if (kw != NULL && ver != NULL && PyDict_SetItem(kw, st->interop->s_max_version, ver) == 0 &&
      (copy != 0 || PyDict_SetItem(kw, st->interop->s_copy, Py_False) == 0)) {
    PyObject *empty = PyTuple_New(0);
    if (empty != NULL) {
      cap = PyObject_Call(meth, empty, kw);
      Py_DECREF(empty);
    }
    if (cap == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      cap = PyObject_CallNoArgs(meth);
    }
  }
  Py_XDECREF(kw);
  Py_XDECREF(ver);
  Py_DECREF(meth);
  return cap;
}

/*
 * Claims a DLPack capsule: in one critical section on the capsule, checks its
 * name and renames it "used_...", so two threads handed the same capsule
 * cannot both consume it. NULL (nothing raised) when it is no unconsumed
 * DLPack capsule. A claim that does not end in taking ownership is undone by
 * unclaim_capsule, which restores the name (the capsule's destructor then
 * releases the tensor, as for a capsule never consumed).
 */
static void *claim_capsule(PyObject *cap, bool *versioned) {
  void *ptr = NULL;
  Py_BEGIN_CRITICAL_SECTION(cap);
  if (PyCapsule_IsValid(cap, NAME_VERSIONED)) {
    *versioned = true;
    ptr = PyCapsule_GetPointer(cap, NAME_VERSIONED);
  } else if (PyCapsule_IsValid(cap, NAME_LEGACY)) {
    *versioned = false;
    ptr = PyCapsule_GetPointer(cap, NAME_LEGACY);
  }
  if (ptr != NULL && PyCapsule_SetName(cap, *versioned ? NAME_USED_VERSIONED : NAME_USED_LEGACY) < 0)
    ptr = NULL;
  Py_END_CRITICAL_SECTION();
  PyErr_Clear();
  return ptr;
}

static void unclaim_capsule(PyObject *cap, bool versioned) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  Py_BEGIN_CRITICAL_SECTION(cap);
  (void)PyCapsule_SetName(cap, versioned ? NAME_VERSIONED : NAME_LEGACY);
  Py_END_CRITICAL_SECTION();
  PyErr_Restore(type, value, tb);
}

static PyObject *import_claimed(HrpyState *st, void *ptr, bool versioned, int copy,
                                PyObject *want_device, bool *owned);

/* Wraps a capsule as a tensor; see the file comment. */
static PyObject *consume_capsule(HrpyState *st, PyObject *cap, int copy, PyObject *want_device) {
  bool versioned = false, owned = false;
  void *ptr = claim_capsule(cap, &versioned);
  if (ptr == NULL)
    return hrpy_raise(PyExc_BufferError,
                      "from_dlpack: not a DLPack capsule, or one that was already consumed");
  PyObject *r = import_claimed(st, ptr, versioned, copy, want_device, &owned);
  if (r == NULL && !owned) unclaim_capsule(cap, versioned);
  return r;
}

/* The import of a claimed capsule's managed tensor. *owned becomes true once
 * the tensor is ours (wrapped in an owner capsule, or released on failure). */
static PyObject *import_claimed(HrpyState *st, void *ptr, bool versioned, int copy,
                                PyObject *want_device, bool *owned) {
  const char *ctx = "from_dlpack";
  HrpyDLManagedTensorVersioned *mv = versioned ? ptr : NULL;
  HrpyDLManagedTensor *ml = versioned ? NULL : ptr;
  if (mv != NULL && mv->version.major != HRPY_DLPACK_MAJOR) {
    return hrpy_raise(PyExc_BufferError, "%s: DLPack major version %u is not supported (1 is)",
                     ctx, (unsigned)mv->version.major);
  }
  HrpyDLTensor *dl = mv != NULL ? &mv->dl_tensor : &ml->dl_tensor;
  uint64_t flags = mv != NULL ? mv->flags : 0;
  uint8_t tag = tag_of_dl(dl->dtype, (flags & HRPY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0);
  if (tag == 0) {
    return hrpy_raise(st->UnsupportedError,
                     "%s: DLPack dtype (code %u, bits %u, lanes %u) has no Hurray type", ctx,
                     (unsigned)dl->dtype.code, (unsigned)dl->dtype.bits,
                     (unsigned)dl->dtype.lanes);
  }
  uint8_t dtag, dmc;
  if (!device_of_dl(dl->device.device_type, &dtag, &dmc)) {
    return hrpy_raise(st->UnsupportedError, "%s: DLPack device type %d has no Hurray device",
                     ctx, (int)dl->device.device_type);
  }
  if (dl->ndim < 0 || dl->ndim > (int32_t)HURRAY_MAX_RANK) {
    return hrpy_raise(st->InvalidDescriptorError, "%s: rank %d is outside 0..%u", ctx,
                     (int)dl->ndim, (unsigned)HURRAY_MAX_RANK);
  }
  PyObject *device = hrpy_device_new(st, dtag, dmc, dl->device.device_id);
  if (device == NULL) return NULL;
  if (want_device != NULL) {
    int eq = PyObject_RichCompareBool(want_device, device, Py_EQ);
    if (eq <= 0) {
      if (eq == 0) {
        hrpy_raise(PyExc_BufferError, "%s: the producer's tensor is on %R, not on %R", ctx,
                  device, want_device);
      }
      Py_DECREF(device);
      return NULL;
    }
  }
  uint32_t rank = (uint32_t)dl->ndim;
  uint64_t shape[HURRAY_MAX_RANK];
  int64_t bstrides[HURRAY_MAX_RANK];
  bool is_bool = tag == HURRAY_DTYPE_BOOL;
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  uint64_t esize = is_bool ? 1u : info->bit_width >= 8 ? info->bit_width / 8u : 0u;
  /* Nothing the producer says is trusted: every pointer, extent and product
   * below is checked before anything is read through it. */
  if (rank > 0 && dl->shape == NULL) {
    Py_DECREF(device);
    return hrpy_raise(st->InvalidDescriptorError, "%s: DLTensor.shape is NULL for rank %u", ctx,
                      (unsigned)rank);
  }
  for (uint32_t k = 0; k < rank; k++) {
    if (dl->shape[k] < 0) {
      Py_DECREF(device);
      return hrpy_raise(st->InvalidDescriptorError, "%s: shape[%u] is negative (%lld)", ctx,
                        (unsigned)k, (long long)dl->shape[k]);
    }
    shape[k] = (uint64_t)dl->shape[k];
  }
  uint64_t count = 0, nbytes_all = 0;
  if (!hrpy_element_count(rank, shape, &count) ||
      (esize > 0 && (hrpy_mul_u64_overflow(count, esize, &nbytes_all) ||
                     nbytes_all > (uint64_t)INT64_MAX))) {
    Py_DECREF(device);
    return hrpy_raise(st->InvalidDescriptorError,
                      "%s: the element count or byte size of shape overflows 2**63", ctx);
  }
  if (count > 0 && dl->data == NULL) {
    Py_DECREF(device);
    return hrpy_raise(st->BufferError,
                      "%s: DLTensor.data is NULL but the tensor has %llu elements; refusing "
                      "to read through a NULL pointer",
                      ctx, (unsigned long long)count);
  }
  /* the first element lies byte_offset bytes into the producer's buffer,
   * which a Hurray buffer describes only below 2**63 bytes */
  if (count > 0 && (dl->byte_offset > (uint64_t)INT64_MAX - nbytes_all ||
                    dl->byte_offset > UINTPTR_MAX - (uintptr_t)dl->data)) {
    Py_DECREF(device);
    return hrpy_raise(st->InvalidDescriptorError,
                      "%s: DLTensor.byte_offset %llu puts the data past the end of the address "
                      "space, or past the 2**63 bytes a buffer can hold",
                      ctx, (unsigned long long)dl->byte_offset);
  }
  /* Which compact order, if any, do the strides describe? (A product that
   * overflows describes no compact order.) */
  bool rowm = true, colm = rank >= 2;
  if (dl->strides != NULL && count > 1) {
    int64_t acc = 1;
    bool ok = true;
    for (uint32_t k = rank; k-- > 0;) {
      if (shape[k] != 1 && (!ok || dl->strides[k] != acc)) rowm = false;
      ok = ok && !hrpy_mul_i64_overflow(acc, (int64_t)shape[k], &acc);
    }
    acc = 1;
    ok = true;
    for (uint32_t k = 0; k < rank; k++) {
      if (shape[k] != 1 && (!ok || dl->strides[k] != acc)) colm = false;
      ok = ok && !hrpy_mul_i64_overflow(acc, (int64_t)shape[k], &acc);
    }
  } else {
    colm = false;
  }
  if (rowm) colm = false;
  bool sub_byte = esize == 0;
  if (sub_byte && !rowm) {
    Py_DECREF(device);
    return hrpy_raise(st->UnsupportedError,
                     "%s: a non-contiguous sub-byte tensor cannot be imported", ctx);
  }
  bool host = dl->device.device_type == HRPY_kDLCPU;
  uint8_t *first = dl->data != NULL && count > 0 ? (uint8_t *)dl->data + dl->byte_offset : NULL;
  /* Any other strides: the bytes they reach, checked. They stay zero-copy as
   * a strided layout (unless copy=True asks for a compact copy, or bool must
   * be packed), or are gathered through byte strides that are checked too. */
  int64_t estr[HURRAY_MAX_RANK];
  uint8_t *span_base = first;
  uint64_t span = 0, boff = 0;
  bool strided = false;
  if (!rowm && !colm && count > 0) {
    for (uint32_t k = 0; k < rank; k++) {
      estr[k] = dl->strides[k];
      /* an extent of 1 is never stepped: its stride is irrelevant to the bytes */
      if (hrpy_mul_i64_overflow(shape[k] == 1 ? 0 : estr[k], (int64_t)esize, &bstrides[k])) {
        Py_DECREF(device);
        return hrpy_raise(st->InvalidDescriptorError,
                          "%s: strides[%u] = %lld overflows 64 bits in bytes", ctx, (unsigned)k,
                          (long long)dl->strides[k]);
      }
    }
    if (!hrpy_strided_extent(first, esize, rank, shape, estr, &span_base, &span, &boff) ||
        dl->byte_offset > (uint64_t)INT64_MAX - (span - boff)) {
      Py_DECREF(device);
      return hrpy_raise(st->InvalidDescriptorError,
                        "%s: the strides reach beyond the address space (their extent "
                        "overflows 64 bits or wraps around the data pointer)",
                        ctx);
    }
    strided = !is_bool && copy != 1;
  }
  bool need_gather = !rowm && !colm && !strided;
  if ((need_gather || is_bool) && copy == 0) {
    Py_DECREF(device);
    return hrpy_raise(st->BufferError, "%s: %s, which needs a copy, and copy=False forbids it",
                     ctx, is_bool ? "bool is bit-packed in Hurray" : "the tensor is not contiguous");
  }
  if ((need_gather || is_bool) && !host) {
    Py_DECREF(device);
    return hrpy_raise(st->BufferError,
                     "%s: the tensor needs a copy (%s) but lives in device memory", ctx,
                     is_bool ? "bool packing" : "non-contiguous strides");
  }
  /* Take ownership (the capsule is already renamed): wrap the managed tensor
   * in an owner capsule, whose destructor calls its deleter. */
  *owned = true;
  PyObject *owner = PyCapsule_New(ptr, versioned ? NAME_OWNER_VERSIONED : NAME_OWNER_LEGACY,
                                  import_owner_dtor);
  if (owner == NULL) {
    /* ownership is ours: release it now */
    if (mv != NULL && mv->deleter != NULL) mv->deleter(mv);
    if (ml != NULL && ml->deleter != NULL) ml->deleter(ml);
    Py_DECREF(device);
    return NULL;
  }
  HrpyBuffer b;
  memset(&b, 0, sizeof b);
  HurrayLayout lay;
  memset(&lay, 0, sizeof lay);
  lay.tag = colm ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR;
  if (strided) {
    lay.tag = HURRAY_LAYOUT_STRIDED;
    lay.u.strided.strides = estr;
  }
  if (need_gather || is_bool) {
    uint64_t nbytes = is_bool ? (count + 7u) / 8u : count * esize;
    void *mem = hrpy_alloc_buffer(nbytes, false);
    if (mem == NULL) {
      Py_DECREF(owner);
      Py_DECREF(device);
      return NULL;
    }
    if (count > 0) {
      if (is_bool && need_gather) {
        hrpy_strided_pack_bool(mem, first, rank, shape, bstrides); /* no byte-per-element copy */
      } else if (need_gather) {
        hrpy_strided_gather(mem, first, (size_t)esize, rank, shape, bstrides);
      } else if (is_bool) {
        /* bool is packed in storage order, so a column-major tensor stays one */
        hrpy_bool_pack(first, mem, count);
      }
    }
    Py_DECREF(owner); /* the producer's memory is no longer needed */
    b.data = mem;
    b.owned = mem;
    b.size = nbytes;
    if (need_gather) lay.tag = HURRAY_LAYOUT_ROW_MAJOR;
  } else {
    uint64_t nbytes = 0;
    if (hurray_buffer_size_bytes(tag, count, &nbytes) != HURRAY_OK) {
      Py_DECREF(owner);
      Py_DECREF(device);
      return hrpy_raise(st->InvalidDescriptorError, "%s: size overflows", ctx);
    }
    b.data = strided ? span_base : first;
    b.size = strided ? span : nbytes;
    b.owner = owner;
    b.readonly = (flags & HRPY_DLPACK_FLAG_READ_ONLY) != 0;
    if (hrpy_buffer_apply_copy_policy(st, &b, 0, copy, host, ctx) < 0) {
      hrpy_buffer_release(&b);
      Py_DECREF(device);
      return NULL;
    }
  }
  PyObject *r = hrpy_tensor_build(st, tag, rank, shape, &lay, strided ? boff : 0, device, &b, 1,
                                 ctx);
  Py_DECREF(device);
  return r;
}

PyObject *hrpy_from_dlpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(module);
  static const char *const names[] = {"x", "device", "copy", NULL};
  PyObject *a[3];
  if (hrpy_parse_args("from_dlpack", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  int copy;
  if (hrpy_parse_copy(a[2], &copy) < 0) return NULL;
  PyObject *want = a[1] != NULL && a[1] != Py_None ? a[1] : NULL;
  if (want != NULL && !hrpy_device_check(st, want)) {
    return PyErr_Format(PyExc_TypeError, "from_dlpack: device must be a hurray.Device, not %.100s",
                        Py_TYPE(want)->tp_name);
  }
  if (PyCapsule_CheckExact(a[0])) return consume_capsule(st, a[0], copy, want);
  PyObject *cap = call_producer(st, a[0], copy);
  if (cap == NULL) return NULL;
  PyObject *r = consume_capsule(st, cap, copy, want);
  Py_DECREF(cap);
  return r;
}

/* The torch dtypes with no Hurray type, named as the user wrote them (DLPack would
 * name them by codes, and torch raises through C++ for its bits types), with what to
 * convert them to first: -1 with UnsupportedError set, 0 for any other dtype. */
static int refuse_torch_dtype(HrpyState *st, PyObject *tensor) {
  PyObject *dt = PyObject_GetAttrString(tensor, "dtype");
  PyObject *s = dt != NULL ? PyObject_Str(dt) : NULL;
  Py_XDECREF(dt);
  const char *n = s != NULL ? PyUnicode_AsUTF8(s) : NULL;
  if (n == NULL) {
    Py_XDECREF(s);
    return -1;
  }
  const char *hint = NULL;
  if (strcmp(n, "torch.complex32") == 0)
    hint = "x.to(torch.complex64)";
  else if (strncmp(n, "torch.bits", 10) == 0)
    hint = "x.view(torch.uint8), or the unsigned type of its size";
  else if (strncmp(n, "torch.qint", 10) == 0 || strncmp(n, "torch.quint", 11) == 0)
    hint = "x.dequantize() or x.int_repr()";
  if (hint != NULL)
    hrpy_raise(st->UnsupportedError,
               "from_torch: a torch tensor of dtype %s has no Hurray type; convert it first (%s)",
               n, hint);
  Py_DECREF(s);
  return hint != NULL ? -1 : 0;
}

PyObject *hrpy_from_torch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames) {
  static const char *const names[] = {"tensor", "copy", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("from_torch", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  PyObject *torch = PyImport_ImportModule("torch");
  if (torch == NULL) return NULL;
  PyObject *cls = PyObject_GetAttrString(torch, "Tensor");
  Py_DECREF(torch);
  if (cls == NULL) return NULL;
  int ok = PyObject_IsInstance(a[0], cls);
  Py_DECREF(cls);
  if (ok < 0) return NULL;
  if (!ok) {
    return PyErr_Format(PyExc_TypeError, "from_torch: expected a torch.Tensor, not %.100s",
                        Py_TYPE(a[0])->tp_name);
  }
  HrpyState *st = hrpy_state_of_module(module);
  if (refuse_torch_dtype(st, a[0]) < 0) return NULL;
  int copy;
  if (hrpy_parse_copy(a[1], &copy) < 0) return NULL;
  PyObject *cap = call_producer(st, a[0], copy);
  if (cap == NULL) return NULL;
  PyObject *r = consume_capsule(st, cap, copy, NULL);
  Py_DECREF(cap);
  return r;
}

PyObject *hrpy_tensor_to_torch(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of(self);
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  if (hrpy_tensor_check_readable(st, t->self, "to_torch") < 0) return NULL;
  PyObject *mod = PyImport_ImportModule("torch.utils.dlpack");
  if (mod == NULL) return NULL;
  PyObject *fn = PyObject_GetAttrString(mod, "from_dlpack");
  Py_DECREF(mod);
  if (fn == NULL) return NULL;
  PyObject *r;
  if (t->f->type_tag == HURRAY_DTYPE_BOOL) {
    /* bool must be unpacked: a copy. (A read-only buffer or a negative stride,
     * which torch cannot take, is copied by __dlpack__ itself.) */
    PyObject *kw = Py_BuildValue("{s:O,s:(II)}", "copy", Py_True, "max_version",
                                 HRPY_DLPACK_MAJOR, HRPY_DLPACK_MINOR);
    PyObject *meth = kw != NULL ? PyObject_GetAttr(self, st->interop->s_dlpack) : NULL;
    PyObject *empty = meth != NULL ? PyTuple_New(0) : NULL;
    PyObject *cap = empty != NULL ? PyObject_Call(meth, empty, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(meth);
    Py_XDECREF(empty);
    r = cap != NULL ? PyObject_CallOneArg(fn, cap) : NULL;
    Py_XDECREF(cap);
  } else {
    r = PyObject_CallOneArg(fn, self);
  }
  Py_DECREF(fn);
  return r;
}
