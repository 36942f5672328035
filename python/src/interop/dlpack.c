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
 * strides). The ABI, the type and device tables and the checks of what a
 * producer declares are the C library's (hurray/interop.h).
 */
#include "interop/dlpack.h"

#include "core/buffer.h"
#include "core/device.h"
#include "core/tensor.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/runtime.h"

#include <string.h>

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
    HurrayDLManagedTensor legacy;
    HurrayDLManagedTensorVersioned v;
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

static void deleter_legacy(HurrayDLManagedTensor *m) {
  if (m != NULL) export_release((Export *)m->manager_ctx);
}
static void deleter_versioned(HurrayDLManagedTensorVersioned *m) {
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

/* The DLPack device type of a Device, or -1 with UnsupportedError set. */
static int dl_device_type(HrpyState *st, PyObject *dev, int32_t *out) {
  HurrayError err;
  HurrayStatus rc = hurray_dlpack_device_encode(hrpy_device_tag(dev),
                                                hrpy_device_memory_class(dev), out, &err);
  if (rc == HURRAY_OK) return 0;
  hrpy_raise_status(st, rc, &err, NULL);
  return -1;
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
  *minor = major > 1 ? (int)HURRAY_DLPACK_MINOR : (mnr >= (long)HURRAY_DLPACK_MINOR ? (int)HURRAY_DLPACK_MINOR : 0);
  return 0;
}

PyObject *hrpy_tensor_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of(self);
  PyObject *d = hrpy_tensor_device(self);
  int32_t type;
  if (dl_device_type(st, d, &type) < 0) return NULL;
  return Py_BuildValue("(ii)", (int)type, (int)hrpy_device_id(d));
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
  HurrayDLDataType dt;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_dlpack_export_check(t->f, minor < 1 ? 0u : (uint32_t)minor, &dt, &err);
  if (rc != HURRAY_OK) {
    /* what DLPack cannot carry but __hurray__ can: say so */
    if (strcmp(err.field, "quantization") == 0 || strcmp(err.field, "layout.tag") == 0)
      PyOS_snprintf(err.reason + strlen(err.reason), sizeof err.reason - strlen(err.reason),
                    "; use __hurray__");
    PyOS_snprintf(err.message, sizeof err.message, "%s", err.reason);
    return hrpy_raise_status_as(st, PyExc_BufferError, rc, &err, "__dlpack__");
  }
  bool is_bool = t->f->type_tag == HURRAY_DTYPE_BOOL;
  if (is_bool && copy != 1) {
    return hrpy_raise(PyExc_BufferError,
                     "__dlpack__: bool is bit-packed in Hurray and DLPack stores one byte per "
                     "element; pass copy=True to export an unpacked copy");
  }
  PyObject *dev = t->device;
  int32_t dev_id = hrpy_device_id(dev);
  int32_t devtype;
  if (dl_device_type(st, dev, &devtype) < 0) return NULL;
  if (a[2] != NULL && a[2] != Py_None) {
    int rtype = 0, rid = 0;
    if (!PyArg_ParseTuple(a[2], "ii;__dlpack__: dl_device must be (device_type, device_id)",
                          &rtype, &rid))
      return NULL;
    if (rtype != devtype || rid != dev_id) {
      return hrpy_raise(PyExc_BufferError,
                       "__dlpack__: cannot export to device (%d, %d); the tensor is on (%d, %d)",
                       rtype, rid, (int)devtype, (int)dev_id);
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
  (void)hurray_shape_element_count(rank, t->f->shape, &count);
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
        hurray_bool_unpack(data, e->copy, count);
      } else if (lt == HURRAY_LAYOUT_STRIDED) {
        HRPY_CANNOT_FAIL(hurray_elements_gather(data, rank, t->f->shape, bstrides, esize, e->copy));
      } else {
        memcpy(e->copy, data, (size_t)nbytes);
      }
    }
    if (lt == HURRAY_LAYOUT_STRIDED) {
      /* the copy is compact row-major: its geometry (which fits, as the
       * strided one did) */
      HurrayDescriptorFields rm = *t->f;
      rm.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
      HRPY_CANNOT_FAIL(hurray_strided_geometry(&rm, 1, e->shape, e->strides, NULL));
    }
    data = e->copy;
  } else {
    e->owner = Py_NewRef(self);
  }
  HurrayDLTensor *dl;
  if (minor >= 0) {
    e->m.v.version.major = HURRAY_DLPACK_MAJOR;
    e->m.v.version.minor = (uint32_t)minor;
    e->m.v.manager_ctx = e;
    e->m.v.deleter = deleter_versioned;
    e->m.v.flags = (do_copy ? HURRAY_DLPACK_FLAG_IS_COPIED : 0) |
                   (readonly && !do_copy ? HURRAY_DLPACK_FLAG_READ_ONLY : 0);
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
    HurrayDLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, NAME_OWNER_VERSIONED);
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, NAME_OWNER_LEGACY)) {
    HurrayDLManagedTensor *m = PyCapsule_GetPointer(cap, NAME_OWNER_LEGACY);
    if (m != NULL && m->deleter != NULL) m->deleter(m);
  }
  hrpy_dtor_end(&saved, cap); /* a producer's deleter that raised */
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
  PyObject *ver = Py_BuildValue("(II)", HURRAY_DLPACK_MAJOR, HURRAY_DLPACK_MINOR);
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
 * the tensor is ours (wrapped in an owner capsule, or released on failure).
 * Nothing the producer says is trusted: hurray_dlpack_import checks every
 * pointer, extent and product before anything is read through it. */
static PyObject *import_claimed(HrpyState *st, void *ptr, bool versioned, int copy,
                                PyObject *want_device, bool *owned) {
  const char *ctx = "from_dlpack";
  HurrayDLManagedTensorVersioned *mv = versioned ? ptr : NULL;
  HurrayDLManagedTensor *ml = versioned ? NULL : ptr;
  if (mv != NULL && mv->version.major != HURRAY_DLPACK_MAJOR) {
    return hrpy_raise(PyExc_BufferError, "%s: DLPack major version %u is not supported (1 is)",
                     ctx, (unsigned)mv->version.major);
  }
  HurrayDLTensor *dl = mv != NULL ? &mv->dl_tensor : &ml->dl_tensor;
  HurrayDLPackImport im;
  HurrayError err;
  HurrayStatus rc = hurray_dlpack_import(dl, mv != NULL ? mv->flags : 0, &im, &err);
  if (rc != HURRAY_OK) /* a NULL data pointer is the producer's buffer's fault */
    return hrpy_raise_status_as(
        st, rc == HURRAY_ERR_NULL_POINTER ? st->BufferError : hrpy_exception_for(st, rc), rc,
        &err, ctx);
  PyObject *device = hrpy_device_new(st, im.device_tag, im.memory_class, dl->device.device_id);
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
  bool is_bool = im.type_tag == HURRAY_DTYPE_BOOL;
  bool host = dl->device.device_type == HURRAY_DL_CPU;
  /* Strides that are not compact stay zero-copy as a strided layout, unless
   * copy=True asks for a compact copy or bool must be packed: then they are
   * gathered. */
  bool strided = im.layout_tag == HURRAY_LAYOUT_STRIDED && !is_bool && copy != 1;
  bool need_gather = im.layout_tag == HURRAY_LAYOUT_STRIDED && !strided;
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
  lay.tag = strided || need_gather ? HURRAY_LAYOUT_ROW_MAJOR : im.layout_tag;
  if (strided) {
    lay.tag = HURRAY_LAYOUT_STRIDED;
    lay.u.strided.strides = im.strides;
  }
  if (need_gather || is_bool) {
    void *mem = hrpy_alloc_buffer(im.nbytes, false);
    if (mem == NULL) {
      Py_DECREF(owner);
      Py_DECREF(device);
      return NULL;
    }
    if (im.count > 0) {
      if (is_bool && need_gather) { /* no byte-per-element copy */
        HRPY_CANNOT_FAIL(hurray_elements_gather_bool(im.first, im.rank, im.shape, im.byte_strides, mem));
      } else if (need_gather) {
        HRPY_CANNOT_FAIL(hurray_elements_gather(im.first, im.rank, im.shape, im.byte_strides,
                                                im.itemsize, mem));
      } else { /* bool is packed in storage order, so a column-major tensor stays one */
        hurray_bool_pack(im.first, mem, im.count);
      }
    }
    Py_DECREF(owner); /* the producer's memory is no longer needed */
    b.data = mem;
    b.owned = mem;
    b.size = im.nbytes;
  } else {
    b.data = strided ? im.span_base : im.first;
    b.size = strided ? im.span : im.nbytes;
    b.owner = owner;
    b.readonly = mv != NULL && (mv->flags & HURRAY_DLPACK_FLAG_READ_ONLY) != 0;
    if (hrpy_buffer_apply_copy_policy(st, &b, 0, copy, host, ctx) < 0) {
      hrpy_buffer_release(&b);
      Py_DECREF(device);
      return NULL;
    }
  }
  PyObject *r = hrpy_tensor_build(st, im.type_tag, im.rank, im.shape, &lay,
                                 strided ? im.span_offset : 0, device, &b, 1, ctx);
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
                                 HURRAY_DLPACK_MAJOR, HURRAY_DLPACK_MINOR);
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
