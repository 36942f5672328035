/*
 * core/tensor.c - the hurray.Tensor object (core/tensor.h): its accessors,
 * checks, lazily built descriptor and handle tuple, and its lifetime.
 */
#include "core/tensor_internal.h"

#include <string.h>

#include <structmember.h>

#include "core/buffer_handle.h"
#include "core/device.h"
#include "util/atomic.h"
#include "util/bytes.h"
#include "util/errors.h"


/* ---- accessors ------------------------------------------------------------- */

HrpyTensorView hrpy_tensor_view(PyObject *o) {
  const HrpyTensor *t = T(o);
  HrpyTensorView v = {o, &t->f, t->bufs, t->nbuf, t->dtype, t->device};
  return v;
}

const HurrayDescriptorFields *hrpy_tensor_fields(PyObject *t) { return &T(t)->f; }
uint32_t hrpy_tensor_nbuf(PyObject *t) { return T(t)->nbuf; }
const HrpyBuffer *hrpy_tensor_buffer(PyObject *t, uint32_t i) { return &T(t)->bufs[i]; }
PyObject *hrpy_tensor_dtype(PyObject *t) { return T(t)->dtype; }
PyObject *hrpy_tensor_device(PyObject *t) { return T(t)->device; }
bool hrpy_tensor_is_described(PyObject *t) {
  return hrpy_load_ptr((void *const *)&T(t)->desc) != NULL;
}

bool hrpy_tensor_buffer_is_host(PyObject *o, uint32_t i) {
  const HrpyTensor *t = T(o);
  const HrpyBuffer *b = &t->bufs[i];
  return t->f.buffers[i].device_tag == HURRAY_DEVICE_CPU || b->host || b->view.obj != NULL ||
         b->owned != NULL;
}

void hrpy_tensor_borrow_buffer(PyObject *o, uint32_t i, HrpyBuffer *out) {
  const HrpyTensor *t = T(o);
  memset(out, 0, sizeof *out);
  out->data = t->bufs[i].data;
  out->size = t->f.buffers[i].byte_size;
  out->readonly = t->bufs[i].readonly;
  out->sync_mode = t->f.buffers[i].sync_mode;
  out->owner = Py_NewRef(o);
  out->host = hrpy_tensor_buffer_is_host(o, i);
}

PyObject *hrpy_tensor_buffer_handles(HrpyState *st, PyObject *o) {
  HrpyTensor *t = T(o);
  PyObject *h = hrpy_peek(&t->handles);
  if (h == NULL) h = hrpy_publish(&t->handles, hrpy_buffer_handles_tuple(st, &t->f, t->device));
  return Py_XNewRef(h);
}

const HurrayDescriptor *hrpy_tensor_desc(HrpyState *st, PyObject *o) {
  HrpyTensor *t = T(o);
  HurrayDescriptor *d = hrpy_load_ptr((void *const *)&t->desc);
  if (d != NULL) return d;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_from_fields(&t->f, HURRAY_DECODE_STRICT, &d, &err);
  if (rc != HURRAY_OK) {
    hrpy_raise_status(st, rc, &err, "Tensor");
    return NULL;
  }
  /* t->f keeps pointing at the block: the same values. A thread that lost
   * the race drops its copy and uses the winner's. */
  if (!hrpy_cas_ptr((void **)&t->desc, NULL, d)) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
    d = hrpy_load_ptr((void *const *)&t->desc);
  }
  return d;
}

int hrpy_tensor_check_host(HrpyState *st, PyObject *o, const char *what) {
  const HrpyTensor *t = T(o);
  for (uint32_t i = 0; i < t->nbuf; i++) {
    if (t->f.buffers[i].byte_size > 0 && !hrpy_tensor_buffer_is_host(o, i)) {
      hrpy_raise(st->UnsupportedError,
                "%s: buffer %u is device memory (%R) that this process cannot read; copy the "
                "tensor to the host first",
                what, (unsigned)i, t->device);
      return -1;
    }
  }
  return 0;
}

int hrpy_tensor_check_readable(HrpyState *st, PyObject *o, const char *what) {
  const HrpyTensor *t = T(o);
  for (uint32_t i = 0; i < t->f.buffer_count; i++) {
    uint8_t m = t->f.buffers[i].sync_mode;
    if (m != HURRAY_SYNC_PRODUCER_SYNCED) {
      const char *n = hurray_sync_mode_name(m);
      hrpy_raise(st->UnsupportedError,
                "%s: buffer %u is in sync mode '%s'; its bytes cannot be read before the "
                "producer's event or stream completes, which no Python API can wait on",
                what, (unsigned)i, n != NULL ? n : "unknown");
      return -1;
    }
  }
  return 0;
}

static int tensor_traverse(PyObject *s, visitproc visit, void *arg) {
  HrpyTensor *t = T(s);
  Py_VISIT(t->dtype);
  Py_VISIT(t->device);
  Py_VISIT(t->handles);
  for (uint32_t i = 0; i < t->nbuf; i++) {
    Py_VISIT(t->bufs[i].owner);
    Py_VISIT(t->bufs[i].view.obj);
  }
  Py_VISIT(Py_TYPE(s));
  return 0;
}

static int tensor_clear(PyObject *s) {
  HrpyTensor *t = T(s);
  Py_CLEAR(t->dtype);
  Py_CLEAR(t->device);
  Py_CLEAR(t->handles);
  for (uint32_t i = 0; i < t->nbuf; i++) hrpy_buffer_release(&t->bufs[i]);
  return 0;
}

static void tensor_dealloc(PyObject *s) {
  HrpyTensor *t = T(s);
  PyTypeObject *tp = Py_TYPE(s);
  PyObject_GC_UnTrack(s);
  if (t->weakreflist != NULL) PyObject_ClearWeakRefs(s);
  (void)tensor_clear(s);
  PyMem_Free(t->bufs);
  t->bufs = NULL;
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(t->desc));
  t->desc = NULL;
  tp->tp_free(s);
  Py_DECREF(tp);
}

int hrpy_tensor_validate_index_buffers(HrpyState *st, PyObject *o, const char *context) {
  const HrpyTensor *t = T(o);
  HurrayLayoutClass cls = hurray_layout_class(t->f.layout.tag);
  if (cls != HURRAY_LAYOUT_CLASS_SPARSE && cls != HURRAY_LAYOUT_CLASS_INDIRECT) return 0;
  if (t->nbuf != t->f.buffer_count) return 0;
  for (uint32_t i = 0; i < t->nbuf; i++) {
    /* memory this process cannot read (a device address from DLPack or a
     * foreign capsule) is never read; host bytes are checked whatever device
     * the descriptor declares */
    if (!hrpy_tensor_buffer_is_host(o, i)) return 0;
    if (t->f.buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) return 0;
  }
  const void *small[8];
  const void **ptrs = small;
  if (t->nbuf > 8) {
    ptrs = PyMem_Calloc(t->nbuf, sizeof *ptrs);
    if (ptrs == NULL) {
      PyErr_NoMemory();
      return -1;
    }
  }
  for (uint32_t i = 0; i < t->nbuf; i++) ptrs[i] = t->bufs[i].data;
  uint64_t nnz = 0;
  (void)hurray_layout_nnz(&t->f.layout, &nnz);
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc;
  if (nnz >= HRPY_NOGIL_INDEX_ENTRIES) {
    Py_BEGIN_ALLOW_THREADS rc =
        hurray_layout_validate_index_buffers(&t->f, (const void *const *)ptrs, NULL, &err);
    Py_END_ALLOW_THREADS
  } else {
    rc = hurray_layout_validate_index_buffers(&t->f, (const void *const *)ptrs, NULL, &err);
  }
  if (ptrs != small) PyMem_Free(ptrs);
  if (rc == HURRAY_OK) return 0;
  hrpy_raise_status(st, rc, &err, context);
  return -1;
}

/* ---- geometry for strided consumers ------------------------------------------ */

int hrpy_tensor_strided_geometry(HrpyState *st, const HrpyTensorView *t, int64_t unit,
                                 int64_t *shape, int64_t *strides, const char *what) {
  HurrayError err;
  HurrayStatus rc = hurray_strided_geometry(t->f, unit, shape, strides, &err);
  if (rc == HURRAY_OK) return 0;
  hrpy_raise_status(st, rc, &err, what);
  return -1;
}

/* ---- the type ---------------------------------------------------------------- */

static PyMemberDef tensor_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(HrpyTensor, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject *hrpy_tensor_type_new(PyObject *m, const PyType_Slot *surface) {
  enum { CORE_SLOTS = 4, MAX_SLOTS = 32 };
  PyType_Slot slots[MAX_SLOTS];
  size_t n = 0;
  while (surface[n].slot != 0) {
    if (n + CORE_SLOTS + 1 >= MAX_SLOTS) {
      PyErr_SetString(PyExc_SystemError, "hurray.Tensor: too many type slots");
      return NULL;
    }
    slots[n] = surface[n];
    n++;
  }
  slots[n++] = (PyType_Slot){Py_tp_members, tensor_members};
  slots[n++] = (PyType_Slot){Py_tp_traverse, (void *)tensor_traverse};
  slots[n++] = (PyType_Slot){Py_tp_clear, (void *)tensor_clear};
  slots[n++] = (PyType_Slot){Py_tp_dealloc, (void *)tensor_dealloc};
  slots[n] = (PyType_Slot){0, NULL};
  PyType_Spec spec = {
      .name = "hurray.Tensor",
      .basicsize = sizeof(HrpyTensor),
      .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
      .slots = slots,
  };
  return (PyTypeObject *)PyType_FromModuleAndSpec(m, &spec, NULL);
}
