/*
 * tensor.c - hurray.Tensor: a descriptor plus the buffers it describes.
 *
 * The descriptor is an immutable HurrayDescriptor built and validated by the
 * C codec; the buffers are either borrowed (a held buffer-protocol export, or
 * a strong reference to the object that keeps the memory alive) or owned
 * (allocated 64-byte aligned here). Alignment is measured, never assumed:
 * each buffer declares the largest power of two its address satisfies, capped
 * at PAGE_ALIGNMENT, and 1 when empty.
 *
 * The NumPy surface lives in tensor_numpy.c, DLPack in dlpack.c, the
 * creation functions in creation.c.
 */
#include "hpy.h"

#include <string.h>

#include <structmember.h>

#define T(o) ((HpyTensor *)(o))

/* Copies at least this large run with the GIL released. */
#define HPY_NOGIL_COPY_BYTES ((uint64_t)1 << 20)

/* ---- buffers --------------------------------------------------------------- */

uint32_t hpy_measure_alignment(const void *p, uint64_t size) {
  if (size == 0) return 1;
  uintptr_t a = (uintptr_t)p;
  if (a == 0) return HURRAY_PAGE_ALIGNMENT;
  uintptr_t low = a & (~a + 1);
  return low >= HURRAY_PAGE_ALIGNMENT ? HURRAY_PAGE_ALIGNMENT : (uint32_t)low;
}

void *hpy_alloc_buffer(uint64_t size, bool zero) {
  if (size > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_NoMemory();
    return NULL;
  }
  void *p = hurray_alloc((size_t)(size == 0 ? 1 : size), HURRAY_MIN_BUFFER_ALIGNMENT);
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  if (zero) {
    if (size >= HPY_NOGIL_COPY_BYTES) {
      Py_BEGIN_ALLOW_THREADS memset(p, 0, (size_t)size);
      Py_END_ALLOW_THREADS
    } else {
      memset(p, 0, (size_t)size);
    }
  }
  return p;
}

void hpy_buffer_release(HpyBuffer *b) {
  if (b->view.obj != NULL) PyBuffer_Release(&b->view);
  Py_CLEAR(b->owner);
  if (b->owned != NULL) {
    hurray_free(b->owned);
    b->owned = NULL;
  }
  b->data = NULL;
}

int hpy_buffer_apply_copy_policy(HpyState *st, HpyBuffer *b, uint32_t index, int copy,
                                 bool can_copy, const char *context) {
  if (b->owned != NULL) return 0;
  uint32_t measured = hpy_measure_alignment(b->data, b->size);
  bool misaligned = b->size > 0 && measured < HURRAY_MIN_BUFFER_ALIGNMENT;
  if (copy == 0 && misaligned) {
    hpy_raise(st->BufferError,
              "%s: buffer %u is at an address aligned to %u bytes, below the %u-byte floor "
              "(MIN_BUFFER_ALIGNMENT), and copy=False forbids the copy that would fix it",
              context, (unsigned)index, (unsigned)measured,
              (unsigned)HURRAY_MIN_BUFFER_ALIGNMENT);
    return -1;
  }
  if (!(copy == 1 || misaligned)) return 0;
  if (!can_copy) {
    hpy_raise(st->BufferError,
              "%s: buffer %u needs a copy (aligned to %u bytes, floor %u) but its memory is "
              "not host memory this module can read",
              context, (unsigned)index, (unsigned)measured,
              (unsigned)HURRAY_MIN_BUFFER_ALIGNMENT);
    return -1;
  }
  void *mem = hpy_alloc_buffer(b->size, false);
  if (mem == NULL) return -1;
  if (b->size > 0) {
    if (b->size >= HPY_NOGIL_COPY_BYTES) {
      Py_BEGIN_ALLOW_THREADS memcpy(mem, b->data, (size_t)b->size);
      Py_END_ALLOW_THREADS
    } else {
      memcpy(mem, b->data, (size_t)b->size);
    }
  }
  uint64_t size = b->size;
  uint8_t sync = b->sync_mode;
  hpy_buffer_release(b);
  b->data = mem;
  b->owned = mem;
  b->size = size;
  b->readonly = false;
  b->sync_mode = sync;
  return 0;
}

int hpy_buffer_acquire(HpyState *st, PyObject *obj, uint32_t index, int copy,
                       const char *context, HpyBuffer *out) {
  memset(out, 0, sizeof *out);
  if (PyObject_GetBuffer(obj, &out->view, PyBUF_WRITABLE) < 0) {
    /* read-only exporters refuse a writable request (BufferError, or
     * ValueError from NumPy); ask again for a read-only view */
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "%s: buffer %u must support the buffer protocol (bytes, bytearray, "
                   "memoryview, array.array, numpy.ndarray, ...), not %.100s",
                   context, (unsigned)index, Py_TYPE(obj)->tp_name);
      return -1;
    }
    PyErr_Clear();
    if (PyObject_GetBuffer(obj, &out->view, PyBUF_SIMPLE) < 0) {
      memset(&out->view, 0, sizeof out->view);
      if (PyErr_ExceptionMatches(PyExc_BufferError) ||
          PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        hpy_raise(st->BufferError, "%s: buffer %u is not a C-contiguous buffer (%S)", context,
                  (unsigned)index, value != NULL ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
      }
      return -1;
    }
    out->readonly = true;
  }
  out->data = (uint8_t *)out->view.buf;
  out->size = (uint64_t)out->view.len;
  if (hpy_buffer_apply_copy_policy(st, out, index, copy, true, context) < 0) {
    hpy_buffer_release(out);
    return -1;
  }
  return 0;
}

/* ---- shape ----------------------------------------------------------------- */

int hpy_parse_shape(HpyState *st, PyObject *obj, uint64_t *out, uint32_t *rank,
                    const char *context) {
  if (PyIndex_Check(obj) && !PyBool_Check(obj)) {
    PyObject *tup = PyTuple_Pack(1, obj);
    if (tup == NULL) return -1;
    int rc = hpy_parse_shape(st, tup, out, rank, context);
    Py_DECREF(tup);
    return rc;
  }
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: shape must be a sequence of int or None", context);
    return -1;
  }
  PyObject *seq = PySequence_Fast(obj, "shape must be a sequence of int or None");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > (Py_ssize_t)HURRAY_MAX_RANK) {
    Py_DECREF(seq);
    hpy_raise(st->InvalidDescriptorError, "%s: rank %zd exceeds the maximum rank %u", context,
              n, (unsigned)HURRAY_MAX_RANK);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (item == Py_None) {
      out[i] = HURRAY_DYNAMIC_DIM;
      continue;
    }
    if (PyBool_Check(item) || !PyIndex_Check(item)) {
      PyErr_Format(PyExc_TypeError, "%s: shape[%zd] must be an int or None, not %.100s",
                   context, i, Py_TYPE(item)->tp_name);
      Py_DECREF(seq);
      return -1;
    }
    PyObject *v = PyNumber_Index(item);
    if (v == NULL) {
      Py_DECREF(seq);
      return -1;
    }
    int overflow = 0;
    long long sv = PyLong_AsLongLongAndOverflow(v, &overflow);
    unsigned long long u = 0;
    if (sv == -1 && overflow == 0 && PyErr_Occurred()) {
      Py_DECREF(v);
      Py_DECREF(seq);
      return -1;
    }
    if (overflow > 0) {
      u = PyLong_AsUnsignedLongLong(v);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_DECREF(v);
        Py_DECREF(seq);
        hpy_raise(st->InvalidDescriptorError, "%s: shape[%zd] does not fit in 64 bits",
                  context, i);
        return -1;
      }
    } else if (overflow < 0 || sv < 0) {
      Py_DECREF(v);
      Py_DECREF(seq);
      hpy_raise(st->InvalidDescriptorError,
                "%s: shape[%zd] is negative; dimensions are >= 0 (None for a dynamic one)",
                context, i);
      return -1;
    } else {
      u = (unsigned long long)sv;
    }
    Py_DECREF(v);
    if (u == HURRAY_DYNAMIC_DIM) {
      Py_DECREF(seq);
      hpy_raise(st->InvalidDescriptorError,
                "%s: shape[%zd] is the wire sentinel for a dynamic dimension; spell a dynamic "
                "dimension None",
                context, i);
      return -1;
    }
    out[i] = (uint64_t)u;
  }
  *rank = (uint32_t)n;
  Py_DECREF(seq);
  return 0;
}

/* ---- construction ---------------------------------------------------------- */

PyObject *hpy_tensor_build(HpyState *st, uint8_t type_tag, uint32_t rank,
                           const uint64_t *shape, const HurrayLayout *layout,
                           uint64_t byte_offset, PyObject *device, HpyBuffer *bufs,
                           uint32_t nbuf, const char *context) {
  HpyDevice *dev = (HpyDevice *)device;
  HurrayBufferHandle handles_small[4];
  HurrayBufferHandle *handles = handles_small;
  HpyTensor *t = NULL;
  PyObject *dtype = NULL;
  if (nbuf > HURRAY_MAX_BUFFERS) {
    hpy_raise(st->InvalidDescriptorError, "%s: %u buffers exceed the maximum of %u", context,
              (unsigned)nbuf, (unsigned)HURRAY_MAX_BUFFERS);
    goto fail;
  }
  if (nbuf > 4) {
    handles = PyMem_Calloc(nbuf, sizeof *handles);
    if (handles == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
  }
  for (uint32_t i = 0; i < nbuf; i++) {
    handles[i].byte_size = bufs[i].size;
    handles[i].alignment = bufs[i].owned != NULL && bufs[i].size > 0
                               ? HURRAY_MIN_BUFFER_ALIGNMENT
                               : hpy_measure_alignment(bufs[i].data, bufs[i].size);
    handles[i].device_tag = dev->tag;
    handles[i].memory_class = dev->memory_class;
    handles[i].sync_mode = bufs[i].sync_mode;
    handles[i].reserved = 0;
  }
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = type_tag;
  f.rank = rank;
  f.shape = shape;
  f.byte_offset = byte_offset;
  if (layout != NULL) {
    f.layout = *layout;
  } else {
    f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  }
  f.buffer_count = nbuf;
  f.buffers = handles;
  dtype = hpy_dtype_from_tag(st, type_tag);
  if (dtype == NULL) goto fail;
  HurrayDescriptor *desc = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &desc, &err);
  if (handles != handles_small) PyMem_Free(handles);
  handles = handles_small;
  if (rc != HURRAY_OK) {
    hpy_raise_status(st, rc, &err, context);
    goto fail;
  }
  t = PyObject_GC_New(HpyTensor, st->TensorType);
  if (t == NULL) {
    hurray_descriptor_destroy(desc);
    goto fail;
  }
  t->desc = desc;
  t->dtype = dtype;
  dtype = NULL;
  t->device = Py_NewRef(device);
  t->handles = NULL;
  t->weakreflist = NULL;
  t->nbuf = 0;
  t->bufs = NULL;
  rc = hurray_descriptor_fields(desc, &t->f);
  if (rc == HURRAY_OK && nbuf > 0) {
    t->bufs = PyMem_Calloc(nbuf, sizeof(HpyBuffer));
    if (t->bufs == NULL) {
      PyObject_GC_Track((PyObject *)t);
      Py_DECREF(t);
      PyErr_NoMemory();
      t = NULL;
      goto fail;
    }
    memcpy(t->bufs, bufs, nbuf * sizeof(HpyBuffer));
    t->nbuf = nbuf;
    /* The Py_buffer structs moved; a Py_buffer may be moved while held. */
    memset(bufs, 0, nbuf * sizeof(HpyBuffer));
  }
  PyObject_GC_Track((PyObject *)t);
  if (rc != HURRAY_OK) {
    Py_DECREF(t);
    t = NULL;
    hpy_raise_status(st, rc, NULL, context);
    goto fail;
  }
  return (PyObject *)t;

fail:
  if (handles != handles_small) PyMem_Free(handles);
  Py_XDECREF(dtype);
  for (uint32_t i = 0; i < nbuf; i++) hpy_buffer_release(&bufs[i]);
  return NULL;
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HpyState *st = hpy_state_of_type(type);
  static char *kwlist[] = {"buffer", "dtype", "shape", "device", "aux_buffers", "layout",
                           "quantization", "statistics", "shard", "copy", NULL};
  PyObject *buffer, *dtobj, *shapeobj, *device = Py_None, *aux = Py_None, *layout = Py_None,
                                                *quant = Py_None, *stats = Py_None,
                                                *shard = Py_None, *copyobj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O$OOOOOO:Tensor", kwlist, &buffer,
                                   &dtobj, &shapeobj, &device, &aux, &layout, &quant, &stats,
                                   &shard, &copyobj))
    return NULL;
  const char *ctx = "Tensor";
  uint8_t tag;
  if (hpy_dtype_converter(st, dtobj, &tag) < 0) return NULL;
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  if (hpy_parse_shape(st, shapeobj, shape, &rank, ctx) < 0) return NULL;
  if (device == Py_None) {
    device = st->cpu;
  } else if (!hpy_device_check(st, device)) {
    return PyErr_Format(PyExc_TypeError, "Tensor: device must be a hurray.Device, not %.100s",
                        Py_TYPE(device)->tp_name);
  }
  int copy;
  if (hpy_parse_copy(copyobj, &copy) < 0) return NULL;
  if (layout != Py_None || quant != Py_None || stats != Py_None || shard != Py_None) {
    return hpy_raise(st->UnsupportedError,
                     "Tensor: layout=, quantization=, statistics= and shard= authoring is "
                     "not available in this build yet");
  }
  bool host = ((HpyDevice *)device)->tag == HURRAY_DEVICE_CPU;
  Py_ssize_t naux = 0;
  PyObject *auxseq = NULL;
  if (aux != Py_None) {
    auxseq = PySequence_Fast(aux, "Tensor: aux_buffers must be a sequence of buffers");
    if (auxseq == NULL) return NULL;
    naux = PySequence_Fast_GET_SIZE(auxseq);
    if (naux >= (Py_ssize_t)HURRAY_MAX_BUFFERS) {
      Py_DECREF(auxseq);
      return hpy_raise(st->InvalidDescriptorError, "Tensor: too many buffers (%zd)",
                       naux + 1);
    }
  }
  uint32_t nbuf = (uint32_t)naux + 1;
  HpyBuffer *bufs = PyMem_Calloc(nbuf, sizeof(HpyBuffer));
  if (bufs == NULL) {
    Py_XDECREF(auxseq);
    return PyErr_NoMemory();
  }
  PyObject *result = NULL;
  uint32_t got = 0;
  for (uint32_t i = 0; i < nbuf; i++) {
    PyObject *o = i == 0 ? buffer : PySequence_Fast_GET_ITEM(auxseq, (Py_ssize_t)i - 1);
    /* Device memory is never copied: a non-CPU tensor's buffers are borrowed
     * as declarations (copy=None acts as copy=False there). */
    if (hpy_buffer_acquire(st, o, i, host ? copy : (copy == 1 ? 1 : 0), ctx, &bufs[i]) < 0)
      goto done;
    got = i + 1;
  }
  /* The element buffer of a dense row-major tensor must hold every element. */
  uint64_t count, need;
  if (hpy_element_count(rank, shape, &count) &&
      hurray_dtype_info(tag) != NULL &&
      hurray_buffer_size_bytes(tag, count, &need) == HURRAY_OK && bufs[0].size < need) {
    const HurrayDtypeInfo *info = hurray_dtype_info(tag);
    hpy_raise(st->BufferError,
              "Tensor: buffer 0 holds %llu bytes but %llu elements of %s need %llu",
              (unsigned long long)bufs[0].size, (unsigned long long)count, info->name,
              (unsigned long long)need);
    goto done;
  }
  result = hpy_tensor_build(st, tag, rank, shape, NULL, 0, device, bufs, nbuf, ctx);
  got = 0; /* moved or released by hpy_tensor_build */
done:
  for (uint32_t i = 0; i < got; i++) hpy_buffer_release(&bufs[i]);
  PyMem_Free(bufs);
  Py_XDECREF(auxseq);
  return result;
}

/* ---- getters --------------------------------------------------------------- */

static PyObject *tg_dtype(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(T(s)->dtype);
}
static PyObject *tg_shape(PyObject *s, void *c) {
  (void)c;
  return hpy_shape_tuple(T(s)->f.rank, T(s)->f.shape);
}
static PyObject *tg_ndim(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(T(s)->f.rank);
}
static PyObject *tg_size(PyObject *s, void *c) {
  (void)c;
  return hpy_size_object(T(s)->f.rank, T(s)->f.shape);
}
static PyObject *tg_device(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(T(s)->device);
}
static PyObject *tg_layout(PyObject *s, void *c) {
  (void)c;
  return hpy_layout_object(hpy_state_of(s), &T(s)->f);
}
static PyObject *tg_buffer_count(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(T(s)->f.buffer_count);
}
static PyObject *tg_buffer_handles(PyObject *s, void *c) {
  (void)c;
  HpyTensor *t = T(s);
  if (t->handles == NULL) {
    t->handles = hpy_buffer_handles_tuple(hpy_state_of(s), &t->f, t->device);
    if (t->handles == NULL) return NULL;
  }
  return Py_NewRef(t->handles);
}
static PyObject *tg_descriptor(PyObject *s, void *c) {
  (void)c;
  HpyState *st = hpy_state_of(s);
  HurrayDescriptor *d = NULL;
  HurrayStatus rc = hurray_descriptor_clone(T(s)->desc, &d);
  if (rc != HURRAY_OK) return hpy_raise_status(st, rc, NULL, "Tensor.descriptor");
  return hpy_descriptor_wrap(st, d, T(s)->device);
}
static PyObject *tg_quantization(PyObject *s, void *c) {
  (void)c;
  return hpy_quantization_object(hpy_state_of(s), &T(s)->f);
}
static PyObject *tg_shard(PyObject *s, void *c) {
  (void)c;
  return hpy_shard_object(hpy_state_of(s), &T(s)->f);
}
static PyObject *tg_statistics(PyObject *s, void *c) {
  (void)c;
  return hpy_statistics_object(hpy_state_of(s), &T(s)->f);
}
static PyObject *tg_byte_offset(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(T(s)->f.byte_offset);
}
static PyObject *tg_sync_mode(PyObject *s, void *c) {
  (void)c;
  HpyTensor *t = T(s);
  uint8_t m = HURRAY_SYNC_PRODUCER_SYNCED;
  for (uint32_t i = 0; i < t->f.buffer_count; i++) {
    if (t->f.buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      m = t->f.buffers[i].sync_mode;
      break;
    }
  }
  const char *n = hurray_sync_mode_name(m);
  return PyUnicode_FromString(n != NULL ? n : "unknown");
}
static PyObject *tg_readonly(PyObject *s, void *c) {
  (void)c;
  HpyTensor *t = T(s);
  for (uint32_t i = 0; i < t->nbuf; i++)
    if (t->bufs[i].readonly) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

/* T: a transposed view of a rank-2 tensor (row-major <-> column-major). */
static PyObject *tg_T(PyObject *s, void *c) {
  (void)c;
  HpyTensor *t = T(s);
  HpyState *st = hpy_state_of(s);
  if (t->f.rank != 2) {
    return PyErr_Format(PyExc_ValueError, "Tensor.T needs a rank-2 tensor; this one has rank %u",
                        (unsigned)t->f.rank);
  }
  HurrayLayout lay;
  memset(&lay, 0, sizeof lay);
  int64_t strides[2];
  switch (t->f.layout.tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
      lay.tag = HURRAY_LAYOUT_COL_MAJOR;
      break;
    case HURRAY_LAYOUT_COL_MAJOR:
      lay.tag = HURRAY_LAYOUT_ROW_MAJOR;
      break;
    case HURRAY_LAYOUT_STRIDED:
      lay.tag = HURRAY_LAYOUT_STRIDED;
      strides[0] = t->f.layout.u.strided.strides[1];
      strides[1] = t->f.layout.u.strided.strides[0];
      lay.u.strided.strides = strides;
      break;
    default:
      return hpy_raise(st->UnsupportedError,
                       "Tensor.T: a %s tensor has no transposed view without a copy",
                       hpy_layout_name(t->f.layout.tag));
  }
  uint64_t shape[2] = {t->f.shape[1], t->f.shape[0]};
  HpyBuffer *bufs = PyMem_Calloc(t->nbuf > 0 ? t->nbuf : 1, sizeof(HpyBuffer));
  if (bufs == NULL) return PyErr_NoMemory();
  for (uint32_t i = 0; i < t->nbuf; i++) {
    bufs[i].data = t->bufs[i].data;
    bufs[i].size = t->bufs[i].size;
    bufs[i].readonly = t->bufs[i].readonly;
    bufs[i].sync_mode = t->f.buffers[i].sync_mode;
    bufs[i].owner = Py_NewRef(s);
  }
  PyObject *r = hpy_tensor_build(st, t->f.type_tag, 2, shape, &lay, t->f.byte_offset, t->device,
                                 bufs, t->nbuf, "Tensor.T");
  PyMem_Free(bufs);
  return r;
}

int hpy_tensor_check_readable(HpyState *st, HpyTensor *t, const char *what) {
  for (uint32_t i = 0; i < t->f.buffer_count; i++) {
    uint8_t m = t->f.buffers[i].sync_mode;
    if (m != HURRAY_SYNC_PRODUCER_SYNCED) {
      const char *n = hurray_sync_mode_name(m);
      hpy_raise(st->UnsupportedError,
                "%s: buffer %u is in sync mode '%s'; its bytes cannot be read before the "
                "producer's event or stream completes, which no Python API can wait on",
                what, (unsigned)i, n != NULL ? n : "unknown");
      return -1;
    }
  }
  return 0;
}

/* buffer(i): a 1-D uint8 Tensor over exactly the declared bytes of buffer i. */
static PyObject *tm_buffer(PyObject *s, PyObject *arg) {
  HpyTensor *t = T(s);
  HpyState *st = hpy_state_of(s);
  Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0 || (uint64_t)i >= t->f.buffer_count) {
    return PyErr_Format(PyExc_IndexError, "no buffer at index %zd; this tensor has %u", i,
                        (unsigned)t->f.buffer_count);
  }
  if (hpy_tensor_check_readable(st, t, "Tensor.buffer") < 0) return NULL;
  HpyBuffer b;
  memset(&b, 0, sizeof b);
  b.data = t->bufs[i].data;
  b.size = t->f.buffers[i].byte_size;
  b.readonly = t->bufs[i].readonly;
  b.owner = Py_NewRef(s);
  uint64_t shape[1] = {b.size};
  return hpy_tensor_build(st, HURRAY_DTYPE_UINT8, 1, shape, NULL, 0, t->device, &b, 1,
                          "Tensor.buffer");
}

static PyObject *tm_reduce(PyObject *s, PyObject *unused) {
  (void)s;
  (void)unused;
  return PyErr_Format(PyExc_TypeError,
                      "cannot pickle a hurray.Tensor (its buffers may be borrowed); use "
                      "hurray.save or the stream writer");
}

static PyGetSetDef tensor_getset[] = {
    {"dtype", tg_dtype, NULL, "Element type (hurray.Dtype singleton).", NULL},
    {"shape", tg_shape, NULL, "Shape tuple; None for a dynamic dimension.", NULL},
    {"ndim", tg_ndim, NULL, "Rank.", NULL},
    {"size", tg_size, NULL, "Element count, or None if a dimension is dynamic.", NULL},
    {"device", tg_device, NULL, "The hurray.Device holding the buffers.", NULL},
    {"layout", tg_layout, NULL, "The memory layout (tag and name).", NULL},
    {"buffer_count", tg_buffer_count, NULL, "Number of buffers in the descriptor's table.", NULL},
    {"buffer_handles", tg_buffer_handles, NULL,
     "Tuple of hurray.BufferHandle, one per buffer, in descriptor order.", NULL},
    {"descriptor", tg_descriptor, NULL, "The tensor's hurray.Descriptor.", NULL},
    {"quantization", tg_quantization, NULL, "The quantization section, or None.", NULL},
    {"shard", tg_shard, NULL, "The shard section, or None.", NULL},
    {"statistics", tg_statistics, NULL, "The statistics section, or None.", NULL},
    {"byte_offset", tg_byte_offset, NULL, "Byte offset of element [0, ..., 0] in buffer 0.", NULL},
    {"sync_mode", tg_sync_mode, NULL,
     "'producer_synced' unless a buffer declares 'event' or 'consumer_stream' (read-only).",
     NULL},
    {"readonly", tg_readonly, NULL, "True when a buffer is read-only memory.", NULL},
    {"T", tg_T, NULL,
     "Transposed view of a rank-2 tensor (no copy); ValueError for any other rank.", NULL},
    {"__array_interface__", hpy_tensor_array_interface, NULL,
     "NumPy array interface (v3) of a dense, host, Tier 1 tensor.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"buffer", tm_buffer, METH_O,
     "buffer(self, index, /)\n--\n\nA 1-D uint8 hurray.Tensor viewing exactly the declared "
     "bytes of the buffer at `index` of the buffer table. IndexError if there is none."},
    {"__array__", (PyCFunction)(void (*)(void))hpy_tensor_array, METH_FASTCALL | METH_KEYWORDS,
     "__array__(self, dtype=None, copy=None)\n--\n\nA numpy.ndarray of the tensor: a view "
     "sharing its memory when possible (the array's base is the tensor)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))hpy_tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export as a DLPack capsule ('dltensor_versioned' when max_version >= (1, 0), else the "
     "legacy 'dltensor')."},
    {"__dlpack_device__", hpy_tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__(self)\n--\n\n(DLDeviceType, device_id) of the tensor."},
    {"to_torch", hpy_tensor_to_torch, METH_NOARGS,
     "to_torch(self)\n--\n\nA torch.Tensor sharing this tensor's memory (through DLPack)."},
    {"__reduce__", tm_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef tensor_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(HpyTensor, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* ---- repr / str (formatting lives in hurray/_display.py) -------------------- */

static PyObject *display_call(PyObject *s, bool repr) {
  HpyState *st = hpy_state_of(s);
  if (st->display_repr == NULL) {
    PyObject *mod = PyImport_ImportModule("hurray._display");
    if (mod == NULL) return NULL;
    st->display_repr = PyObject_GetAttrString(mod, "tensor_repr");
    st->display_str = PyObject_GetAttrString(mod, "tensor_str");
    Py_DECREF(mod);
    if (st->display_repr == NULL || st->display_str == NULL) {
      Py_CLEAR(st->display_repr);
      Py_CLEAR(st->display_str);
      return NULL;
    }
  }
  return PyObject_CallOneArg(repr ? st->display_repr : st->display_str, s);
}
static PyObject *tensor_repr(PyObject *s) { return display_call(s, true); }
static PyObject *tensor_str(PyObject *s) { return display_call(s, false); }

/* ---- lifetime -------------------------------------------------------------- */

static int tensor_traverse(PyObject *s, visitproc visit, void *arg) {
  HpyTensor *t = T(s);
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
  HpyTensor *t = T(s);
  Py_CLEAR(t->dtype);
  Py_CLEAR(t->device);
  Py_CLEAR(t->handles);
  for (uint32_t i = 0; i < t->nbuf; i++) hpy_buffer_release(&t->bufs[i]);
  return 0;
}

static void tensor_dealloc(PyObject *s) {
  HpyTensor *t = T(s);
  PyTypeObject *tp = Py_TYPE(s);
  PyObject_GC_UnTrack(s);
  if (t->weakreflist != NULL) PyObject_ClearWeakRefs(s);
  (void)tensor_clear(s);
  PyMem_Free(t->bufs);
  t->bufs = NULL;
  hurray_descriptor_destroy(t->desc);
  t->desc = NULL;
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc,
     "Tensor(buffer, dtype, shape, device=None, *, aux_buffers=None, layout=None, "
     "quantization=None, statistics=None, shard=None, copy=None)\n--\n\n"
     "A Hurray tensor: a descriptor and the buffers it describes.\n\n"
     "`buffer` (and each of `aux_buffers`) is any C-contiguous buffer-protocol object. "
     "It is borrowed when its address meets the 64-byte floor (MIN_BUFFER_ALIGNMENT) and "
     "copied into owned aligned memory otherwise (copy=None); copy=True always copies, "
     "copy=False never does and raises hurray.BufferError for a misaligned buffer. A "
     "dynamic dimension is spelled None in `shape`."},
    {Py_tp_new, tensor_new},
    {Py_tp_repr, tensor_repr},
    {Py_tp_str, tensor_str},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {Py_tp_members, tensor_members},
    {Py_tp_traverse, tensor_traverse},
    {Py_tp_clear, tensor_clear},
    {Py_tp_dealloc, tensor_dealloc},
    {0, NULL},
};

static PyType_Spec tensor_spec = {
    .name = "hurray.Tensor",
    .basicsize = sizeof(HpyTensor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tensor_slots,
};

int hpy_tensor_init(PyObject *m, HpyState *st) {
  st->TensorType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &tensor_spec, NULL);
  if (st->TensorType == NULL) return -1;
  return PyModule_AddType(m, st->TensorType);
}

/* ---- strided gather --------------------------------------------------------- */

void hpy_strided_gather(uint8_t *dst, const uint8_t *src, size_t itemsize, uint32_t rank,
                        const uint64_t *shape, const int64_t *bstrides) {
  uint64_t count;
  if (!hpy_element_count(rank, shape, &count) || count == 0) return;
  if (rank == 0) {
    memcpy(dst, src, itemsize);
    return;
  }
  uint64_t idx[HURRAY_MAX_RANK];
  memset(idx, 0, sizeof idx);
  uint32_t last = rank - 1;
  uint64_t inner = shape[last];
  int64_t istride = bstrides[last];
  const uint8_t *row = src;
  for (;;) {
    const uint8_t *p = row;
    if (istride == (int64_t)itemsize) {
      memcpy(dst, p, (size_t)(inner * itemsize));
      dst += inner * itemsize;
    } else {
      for (uint64_t j = 0; j < inner; j++) {
        memcpy(dst, p, itemsize);
        dst += itemsize;
        p += istride;
      }
    }
    /* advance the odometer over the outer dimensions */
    uint32_t d = last;
    for (;;) {
      if (d == 0) return;
      d--;
      idx[d]++;
      row += bstrides[d];
      if (idx[d] < shape[d]) break;
      row -= (int64_t)shape[d] * bstrides[d];
      idx[d] = 0;
    }
  }
}

bool hpy_strided_extent(uint8_t *first, uint64_t esize, uint32_t rank, const uint64_t *shape,
                        const int64_t *estrides, uint8_t **base, uint64_t *span,
                        uint64_t *byte_offset) {
  int64_t mn = 0, mx = 0;
  for (uint32_t k = 0; k < rank; k++) {
    if (shape[k] == 0) return false;
    if (shape[k] > (uint64_t)INT64_MAX) return false;
    int64_t ext = (int64_t)(shape[k] - 1), s = estrides[k], reach;
#if defined(__GNUC__) || defined(__clang__)
    if (__builtin_mul_overflow(s, ext, &reach)) return false;
    if (reach > 0 ? __builtin_add_overflow(mx, reach, &mx) : __builtin_add_overflow(mn, reach, &mn))
      return false;
#else
    if (ext != 0 && (s > INT64_MAX / ext || s < INT64_MIN / ext)) return false;
    reach = s * ext;
    if (reach > 0) {
      if (mx > INT64_MAX - reach) return false;
      mx += reach;
    } else {
      if (mn < INT64_MIN - reach) return false;
      mn += reach;
    }
#endif
  }
  uint64_t lo = (uint64_t)(-(mn + 1)) + 1u; /* -mn without overflow */
  if (mn == 0) lo = 0;
  uint64_t elems = lo + (uint64_t)mx + 1u;
  if (esize != 0 && elems > UINT64_MAX / esize) return false;
  *base = first - lo * esize;
  *span = elems * esize;
  *byte_offset = lo * esize;
  return true;
}
