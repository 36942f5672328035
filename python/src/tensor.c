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
#include "hrpy.h"

#include <stdio.h>
#include <string.h>

#include <structmember.h>

#define T(o) ((HrpyTensor *)(o))

/* Copies at least this large run with the GIL released. */
#define HRPY_NOGIL_COPY_BYTES ((uint64_t)1 << 20)

/* ---- buffers --------------------------------------------------------------- */

uint32_t hrpy_measure_alignment(const void *p, uint64_t size) {
  if (size == 0) return 1;
  uintptr_t a = (uintptr_t)p;
  if (a == 0) return HURRAY_PAGE_ALIGNMENT;
  uintptr_t low = a & (~a + 1);
  return low >= HURRAY_PAGE_ALIGNMENT ? HURRAY_PAGE_ALIGNMENT : (uint32_t)low;
}

void *hrpy_alloc_buffer(uint64_t size, bool zero) {
  if (size > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_NoMemory();
    return NULL;
  }
  size_t n = (size_t)(size == 0 ? 1 : size);
  void *p;
  if (!zero) {
    p = hurray_alloc(n, HURRAY_MIN_BUFFER_ALIGNMENT);
  } else if (size >= HRPY_NOGIL_COPY_BYTES) {
    /* zeroed by the allocator: a large block comes zeroed from the kernel
     * (nothing to write), a smaller one is memset, either way without the GIL */
    Py_BEGIN_ALLOW_THREADS p = hurray_alloc_zeroed(n, HURRAY_MIN_BUFFER_ALIGNMENT);
    Py_END_ALLOW_THREADS
  } else {
    p = hurray_alloc_zeroed(n, HURRAY_MIN_BUFFER_ALIGNMENT);
  }
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  return p;
}

void hrpy_buffer_release(HrpyBuffer *b) {
  if (b->view.obj != NULL) PyBuffer_Release(&b->view);
  Py_CLEAR(b->owner);
  if (b->owned != NULL) {
    hurray_free(b->owned);
    b->owned = NULL;
  }
  b->data = NULL;
}

int hrpy_buffer_apply_copy_policy(HrpyState *st, HrpyBuffer *b, uint32_t index, int copy,
                                 bool can_copy, const char *context) {
  if (b->owned != NULL) return 0;
  uint32_t measured = hrpy_measure_alignment(b->data, b->size);
  bool misaligned = b->size > 0 && measured < HURRAY_MIN_BUFFER_ALIGNMENT;
  if (copy == 0 && misaligned) {
    hrpy_raise(st->BufferError,
              "%s: buffer %u is at an address aligned to %u bytes, below the %u-byte floor "
              "(MIN_BUFFER_ALIGNMENT), and copy=False forbids the copy that would fix it",
              context, (unsigned)index, (unsigned)measured,
              (unsigned)HURRAY_MIN_BUFFER_ALIGNMENT);
    return -1;
  }
  if (!(copy == 1 || misaligned)) return 0;
  if (!can_copy) {
    hrpy_raise(st->BufferError,
              "%s: buffer %u needs a copy (aligned to %u bytes, floor %u) but its memory is "
              "not host memory this module can read",
              context, (unsigned)index, (unsigned)measured,
              (unsigned)HURRAY_MIN_BUFFER_ALIGNMENT);
    return -1;
  }
  void *mem = hrpy_alloc_buffer(b->size, false);
  if (mem == NULL) return -1;
  if (b->size > 0) {
    if (b->size >= HRPY_NOGIL_COPY_BYTES) {
      Py_BEGIN_ALLOW_THREADS memcpy(mem, b->data, (size_t)b->size);
      Py_END_ALLOW_THREADS
    } else {
      memcpy(mem, b->data, (size_t)b->size);
    }
  }
  uint64_t size = b->size;
  uint8_t sync = b->sync_mode;
  hrpy_buffer_release(b);
  b->data = mem;
  b->owned = mem;
  b->size = size;
  b->readonly = false;
  b->sync_mode = sync;
  return 0;
}

int hrpy_buffer_acquire(HrpyState *st, PyObject *obj, uint32_t index, int copy,
                       const char *context, HrpyBuffer *out) {
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
        hrpy_raise(st->BufferError, "%s: buffer %u is not a C-contiguous buffer (%S)", context,
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
  if (hrpy_buffer_apply_copy_policy(st, out, index, copy, true, context) < 0) {
    hrpy_buffer_release(out);
    return -1;
  }
  return 0;
}

/* ---- shape ----------------------------------------------------------------- */

int hrpy_parse_shape(HrpyState *st, PyObject *obj, uint64_t *out, uint32_t *rank,
                    const char *context) {
  if (PyIndex_Check(obj) && !PyBool_Check(obj)) {
    PyObject *tup = PyTuple_Pack(1, obj);
    if (tup == NULL) return -1;
    int rc = hrpy_parse_shape(st, tup, out, rank, context);
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
    hrpy_raise(st->InvalidDescriptorError, "%s: rank %zd exceeds the maximum rank %u", context,
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
        hrpy_raise(st->InvalidDescriptorError, "%s: shape[%zd] does not fit in 64 bits",
                  context, i);
        return -1;
      }
    } else if (overflow < 0 || sv < 0) {
      Py_DECREF(v);
      Py_DECREF(seq);
      hrpy_raise(st->InvalidDescriptorError,
                "%s: shape[%zd] is negative; dimensions are >= 0 (None for a dynamic one)",
                context, i);
      return -1;
    } else {
      u = (unsigned long long)sv;
    }
    Py_DECREF(v);
    if (u == HURRAY_DYNAMIC_DIM) {
      Py_DECREF(seq);
      hrpy_raise(st->InvalidDescriptorError,
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

/* What buffer `i` of a descriptor holds, for error messages ("values",
 * "row_ptr", "quantization scales", ...); NULL when the layout does not say. */
static const char *buffer_role(const HurrayDescriptorFields *f, uint32_t i, char *buf,
                               size_t n) {
  const HurrayQuantization *q = f->quantization;
  if (q != NULL) {
    uint32_t s = HURRAY_QUANT_NO_BUFFER, z = HURRAY_QUANT_NO_BUFFER;
    switch (q->scheme) {
      case HURRAY_QUANT_PER_CHANNEL_AFFINE:
        s = q->u.per_channel.scale_buffer_index;
        z = q->u.per_channel.zero_point_buffer_index;
        break;
      case HURRAY_QUANT_PER_BLOCK_AFFINE:
        s = q->u.per_block.scale_buffer_index;
        z = q->u.per_block.zero_point_buffer_index;
        break;
      case HURRAY_QUANT_NF4: s = q->u.nf4.scale_buffer_index; break;
      case HURRAY_QUANT_MXFP: s = q->u.mxfp.scale_buffer_index; break;
      default: break;
    }
    if (i == s && i == z) return "quantization scales and zero points";
    if (i == s) return "quantization scales";
    if (i == z) return "quantization zero points";
  }
  static const char *const coo[] = {"values", "indices"};
  static const char *const csr[] = {"values", "col_indices", "row_ptr"};
  static const char *const csc[] = {"values", "row_indices", "col_ptr"};
  static const char *const paged[] = {"page_pool", "block_table", "seq_ptr"};
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_COO: return i < 2 ? coo[i] : NULL;
    case HURRAY_LAYOUT_CSR: return i < 3 ? csr[i] : NULL;
    case HURRAY_LAYOUT_CSC: return i < 3 ? csc[i] : NULL;
    case HURRAY_LAYOUT_BLOCK_PAGED: return i < 3 ? paged[i] : NULL;
    case HURRAY_LAYOUT_CSF:
      if (i == 0) return "values";
      if (i > 2u * f->rank) return NULL;
      PyOS_snprintf(buf, n, "%s_%u", i % 2 == 1 ? "pos" : "crd", (unsigned)((i - 1) / 2));
      return buf;
    default:
      return hurray_layout_class(f->layout.tag) == HURRAY_LAYOUT_CLASS_DENSE && i == 0
                 ? "element data"
                 : NULL;
  }
}

/* Appends what the buffer named by err->field ("buffers[i]...") holds. */
static void name_buffer(HurrayError *err, const HurrayDescriptorFields *f) {
  unsigned i;
  if (sscanf(err->field, "buffers[%u]", &i) != 1 || i >= f->buffer_count) return;
  char tmp[16];
  const char *role = buffer_role(f, (uint32_t)i, tmp, sizeof tmp);
  if (role == NULL) return;
  size_t used = strlen(err->message);
  if (used + 1 < sizeof err->message)
    PyOS_snprintf(err->message + used, sizeof err->message - used, " (buffer %u holds the %s)",
                  i, role);
}

PyObject *hrpy_tensor_build(HrpyState *st, uint8_t type_tag, uint32_t rank,
                           const uint64_t *shape, const HurrayLayout *layout,
                           uint64_t byte_offset, PyObject *device, HrpyBuffer *bufs,
                           uint32_t nbuf, const char *context) {
  return hrpy_tensor_build_ex(st, type_tag, rank, shape, layout, byte_offset, device, bufs, nbuf,
                             NULL, context);
}

PyObject *hrpy_tensor_build_ex(HrpyState *st, uint8_t type_tag, uint32_t rank,
                              const uint64_t *shape, const HurrayLayout *layout,
                              uint64_t byte_offset, PyObject *device, HrpyBuffer *bufs,
                              uint32_t nbuf, const HrpySections *sec, const char *context) {
  HrpyDevice *dev = (HrpyDevice *)device;
  HurrayBufferHandle handles_small[4];
  HurrayBufferHandle *handles = handles_small;
  HrpyTensor *t = NULL;
  PyObject *dtype = NULL;
  if (nbuf > HURRAY_MAX_BUFFERS) {
    hrpy_raise(st->InvalidDescriptorError, "%s: %u buffers exceed the maximum of %u", context,
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
                               : hrpy_measure_alignment(bufs[i].data, bufs[i].size);
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
  uint32_t options = HURRAY_DECODE_STRICT;
  if (sec != NULL) {
    f.quantization = sec->quantization;
    f.shard = sec->shard;
    f.statistics = sec->statistics;
    f.composite_member = sec->member;
    f.extension_type = sec->extension_type;
    f.flags = sec->flags;
    f.trailing = sec->trailing;
    f.trailing_len = sec->trailing_len;
    f.version_minor = sec->version_minor;
    options = sec->options;
  }
  dtype = hrpy_dtype_relayed(st, type_tag);
  if (dtype == NULL) goto fail;
  HurrayDescriptor *desc = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_from_fields(&f, options, &desc, &err);
  if (handles != handles_small) PyMem_Free(handles);
  handles = handles_small;
  if (rc != HURRAY_OK) {
    if (rc == HURRAY_ERR_BUFFER_SIZE || rc == HURRAY_ERR_INVALID_BUFFER_TABLE)
      name_buffer(&err, &f);
    hrpy_raise_status(st, rc, &err, context);
    goto fail;
  }
  t = PyObject_GC_New(HrpyTensor, st->TensorType);
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
    t->bufs = PyMem_Calloc(nbuf, sizeof(HrpyBuffer));
    if (t->bufs == NULL) {
      PyObject_GC_Track((PyObject *)t);
      Py_DECREF(t);
      PyErr_NoMemory();
      t = NULL;
      goto fail;
    }
    memcpy(t->bufs, bufs, nbuf * sizeof(HrpyBuffer));
    t->nbuf = nbuf;
    /* The Py_buffer structs moved; a Py_buffer may be moved while held. */
    memset(bufs, 0, nbuf * sizeof(HrpyBuffer));
  }
  PyObject_GC_Track((PyObject *)t);
  if (rc != HURRAY_OK) {
    Py_DECREF(t);
    t = NULL;
    hrpy_raise_status(st, rc, NULL, context);
    goto fail;
  }
  return (PyObject *)t;

fail:
  if (handles != handles_small) PyMem_Free(handles);
  Py_XDECREF(dtype);
  for (uint32_t i = 0; i < nbuf; i++) hrpy_buffer_release(&bufs[i]);
  return NULL;
}

/* ---- lazily described dense tensors ------------------------------------------ */

/* The one block behind a lazily described tensor's `bufs`: its buffer, then
 * the handle and the shape its fields point into (freed with bufs). */
typedef struct LazyBlock {
  HrpyBuffer buf;
  HurrayBufferHandle handle;
  uint64_t shape[]; /* rank entries */
} LazyBlock;

PyObject *hrpy_tensor_new_dense(HrpyState *st, uint8_t type_tag, uint32_t rank,
                               const uint64_t *shape, uint8_t layout_tag, PyObject *device,
                               HrpyBuffer *b, const char *context) {
  const HrpyDevice *dev = (const HrpyDevice *)device;
  uint64_t count = 0, need = 0;
  uint32_t alignment = b->owned != NULL && b->size > 0 ? HURRAY_MIN_BUFFER_ALIGNMENT
                                                      : hrpy_measure_alignment(b->data, b->size);
  /* Each condition is a rule hurray_descriptor_from_fields would check for
   * these fields (the rest hold for any tensor built here: version 1, no
   * flags, no section, byte_offset 0, one producer-synced buffer). */
  bool valid = rank <= HURRAY_MAX_RANK && hurray_dtype_tag_kind(type_tag) == HURRAY_TAG_NAMED &&
               hurray_dtype_info(type_tag) != NULL &&
               (layout_tag == HURRAY_LAYOUT_ROW_MAJOR ||
                (layout_tag == HURRAY_LAYOUT_COL_MAJOR && rank > 0)) &&
               dev->tag == HURRAY_DEVICE_CPU && dev->memory_class == HURRAY_MEMORY_STANDARD &&
               b->sync_mode == HURRAY_SYNC_PRODUCER_SYNCED &&
               (b->size == 0 || alignment >= HURRAY_MIN_BUFFER_ALIGNMENT) &&
               hrpy_element_count(rank, shape, &count) && count <= (uint64_t)INT64_MAX &&
               hurray_buffer_size_bytes(type_tag, count, &need) == HURRAY_OK &&
               need <= (uint64_t)INT64_MAX && b->size >= need;
  if (!valid) {
    HurrayLayout lay;
    memset(&lay, 0, sizeof lay);
    lay.tag = layout_tag;
    return hrpy_tensor_build(st, type_tag, rank, shape, &lay, 0, device, b, 1, context);
  }
  LazyBlock *blk = PyMem_Malloc(sizeof *blk + (size_t)rank * sizeof(uint64_t));
  PyObject *dtype = blk != NULL ? hrpy_dtype_from_tag(st, type_tag) : PyErr_NoMemory();
  HrpyTensor *t = dtype != NULL ? PyObject_GC_New(HrpyTensor, st->TensorType) : NULL;
  if (t == NULL) {
    Py_XDECREF(dtype);
    PyMem_Free(blk);
    hrpy_buffer_release(b);
    return NULL;
  }
  /* Moved (a held Py_buffer may move). Without a held export only the fields
   * hrpy_buffer_release and the readers look at are copied: a whole-struct copy
   * (and memset) costs a measurable share of from_numpy. */
  if (b->view.obj != NULL) {
    blk->buf = *b;
  } else {
    blk->buf.data = b->data;
    blk->buf.size = b->size;
    blk->buf.owner = b->owner;
    blk->buf.view.obj = NULL;
    blk->buf.owned = b->owned;
    blk->buf.readonly = b->readonly;
    blk->buf.sync_mode = b->sync_mode;
    blk->buf.host = b->host;
  }
  b->view.obj = NULL;
  b->owner = NULL;
  b->owned = NULL;
  b->data = NULL;
  blk->handle.byte_size = blk->buf.size;
  blk->handle.alignment = alignment;
  blk->handle.device_tag = HURRAY_DEVICE_CPU;
  blk->handle.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  blk->handle.memory_class = HURRAY_MEMORY_STANDARD;
  blk->handle.reserved = 0;
  for (uint32_t i = 0; i < rank; i++) blk->shape[i] = shape[i]; /* no rep movs for rank 1 */
  /* exactly what hurray_descriptor_fields reports after from_fields (every
   * field written: no memset of the whole struct) */
  HurrayDescriptorFields *f = &t->f;
  f->version_major = HURRAY_DESCRIPTOR_VERSION_MAJOR;
  f->version_minor = 0;
  f->flags = 0;
  f->type_tag = type_tag;
  f->rank = rank;
  f->shape = rank > 0 ? blk->shape : NULL;
  f->byte_offset = 0;
  memset(&f->layout, 0, sizeof f->layout);
  f->layout.tag = layout_tag;
  f->buffer_count = 1;
  f->buffers = &blk->handle;
  f->quantization = NULL;
  f->shard = NULL;
  f->statistics = NULL;
  f->extension_type = NULL;
  f->composite_member = NULL;
  f->trailing = NULL;
  f->trailing_len = 0;
  t->desc = NULL;
  t->dtype = dtype;
  t->device = Py_NewRef(device);
  t->handles = NULL;
  t->weakreflist = NULL;
  t->nbuf = 1;
  t->bufs = &blk->buf;
  PyObject_GC_Track((PyObject *)t);
  return (PyObject *)t;
}

const HurrayDescriptor *hrpy_tensor_desc(HrpyState *st, PyObject *o) {
  HrpyTensor *t = T(o);
  if (t->desc != NULL) return t->desc;
  HurrayDescriptor *d = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_from_fields(&t->f, HURRAY_DECODE_STRICT, &d, &err);
  if (rc != HURRAY_OK) {
    hrpy_raise_status(st, rc, &err, "Tensor");
    return NULL;
  }
  t->desc = d; /* t->f keeps pointing at the block: the same values */
  return d;
}

/* True when two field sets describe the same plain tensor: every scalar, the
 * shape, the layout tag (a row- or column-major layout has no payload), each
 * buffer handle, and no section or trailing bytes on either side. */
static bool same_plain_fields(const HurrayDescriptorFields *a, const HurrayDescriptorFields *b) {
  if (a->version_major != b->version_major || a->version_minor != b->version_minor ||
      a->flags != b->flags || a->type_tag != b->type_tag || a->rank != b->rank ||
      a->byte_offset != b->byte_offset || a->layout.tag != b->layout.tag ||
      a->buffer_count != b->buffer_count || (a->shape == NULL) != (b->shape == NULL))
    return false;
  if (a->layout.tag != HURRAY_LAYOUT_ROW_MAJOR && a->layout.tag != HURRAY_LAYOUT_COL_MAJOR)
    return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return false;
  for (uint32_t i = 0; i < a->buffer_count; i++) {
    const HurrayBufferHandle *x = &a->buffers[i], *y = &b->buffers[i];
    if (x->byte_size != y->byte_size || x->alignment != y->alignment ||
        x->device_tag != y->device_tag || x->sync_mode != y->sync_mode ||
        x->memory_class != y->memory_class || x->reserved != y->reserved)
      return false;
  }
  const void *sa[] = {a->quantization, a->shard, a->statistics, a->extension_type,
                      a->composite_member, a->trailing};
  const void *sb[] = {b->quantization, b->shard, b->statistics, b->extension_type,
                      b->composite_member, b->trailing};
  for (size_t i = 0; i < sizeof sa / sizeof sa[0]; i++)
    if (sa[i] != NULL || sb[i] != NULL) return false;
  return a->trailing_len == 0 && b->trailing_len == 0;
}

/* _lazy_fields(tensor, /) -> (lazy, same): whether the tensor had no
 * descriptor yet, and, after building it, whether the fields the tensor
 * carried equal those hurray_descriptor_fields reports (tests). */
static PyObject *m_lazy_fields(PyObject *m, PyObject *arg) {
  HrpyState *st = hrpy_state_of_module(m);
  if (!hrpy_tensor_check(st, arg))
    return PyErr_Format(PyExc_TypeError, "expected a hurray.Tensor, not %.100s",
                        Py_TYPE(arg)->tp_name);
  bool lazy = T(arg)->desc == NULL;
  const HurrayDescriptor *d = hrpy_tensor_desc(st, arg);
  if (d == NULL) return NULL;
  HurrayDescriptorFields g;
  if (hurray_descriptor_fields(d, &g) != HURRAY_OK)
    return hrpy_raise_status(st, HURRAY_ERR_INTERNAL, NULL, "_lazy_fields");
  return Py_BuildValue("(OO)", lazy ? Py_True : Py_False,
                       same_plain_fields(&T(arg)->f, &g) ? Py_True : Py_False);
}

/* The layout= argument: row-major when None; InvalidDescriptorError from the
 * shape tier, which runs before any buffer is touched. */
static int layout_arg(HrpyState *st, PyObject *layout, uint32_t rank, const uint64_t *shape,
                      HurrayLayout *out) {
  memset(out, 0, sizeof *out);
  out->tag = HURRAY_LAYOUT_ROW_MAJOR;
  if (layout == Py_None) return 0;
  if (!hrpy_layout_check(st, layout)) {
    PyErr_Format(PyExc_TypeError,
                 "Tensor: layout must be a hurray.Layout instance (e.g. hurray.CsrLayout(nnz=4)), "
                 "not %.100s%s",
                 Py_TYPE(layout)->tp_name,
                 PyUnicode_Check(layout) ? "; a string cannot carry nnz, strides or page sizes"
                                         : "");
    return -1;
  }
  if (((HrpyLayout *)layout)->lay.tag == HURRAY_LAYOUT_COMPOSITE) {
    hrpy_raise(st->UnsupportedError,
              "Tensor: a composite layout cannot be given to hurray.Tensor: a composite head owns "
              "no buffers, which this class cannot represent; use hurray.Composite");
    return -1;
  }
  if (hrpy_layout_validate_shape(st, layout, rank, shape, "Tensor") < 0) return -1;
  return hrpy_layout_for_rank(st, layout, rank, out, "Tensor");
}

/* quantization=, statistics=, shard= into sec. TypeError for the wrong class. */
static int sections_arg(HrpyState *st, PyObject *quant, PyObject *stats, PyObject *shard,
                        uint32_t rank, HrpySections *sec) {
  if (quant != Py_None) {
    if (!hrpy_quant_check_type(st, quant)) {
      PyErr_Format(PyExc_TypeError,
                   "Tensor: quantization must be PerTensorAffine, PerChannelAffine, "
                   "PerBlockAffine, NF4, MXFP or OpaqueQuantization, not %.100s",
                   Py_TYPE(quant)->tp_name);
      return -1;
    }
    sec->quantization = &((HrpyQuant *)quant)->q;
    HurrayTagKind k = hurray_quant_scheme_kind(sec->quantization->scheme);
    if (k == HURRAY_TAG_RESERVED || k == HURRAY_TAG_UNASSIGNED)
      sec->options |= HURRAY_DECODE_PERMISSIVE; /* relayed, uninterpreted */
  }
  if (stats != Py_None) {
    if (!Py_IS_TYPE(stats, st->StatisticsType)) {
      PyErr_Format(PyExc_TypeError, "Tensor: statistics must be a hurray.Statistics, not %.100s",
                   Py_TYPE(stats)->tp_name);
      return -1;
    }
    sec->statistics = &((HrpyStatistics *)stats)->s;
  }
  if (shard != Py_None) {
    if (!Py_IS_TYPE(shard, st->ShardType)) {
      PyErr_Format(PyExc_TypeError, "Tensor: shard must be a hurray.Shard, not %.100s",
                   Py_TYPE(shard)->tp_name);
      return -1;
    }
    const HrpyShard *sh = (const HrpyShard *)shard;
    if (sh->rank != rank) {
      hrpy_raise_rule(st, HURRAY_ERR_INVALID_SHARD, "shard", "Tensor",
                     "the shard has %u dimensions, the tensor %u", (unsigned)sh->rank,
                     (unsigned)rank);
      return -1;
    }
    sec->shard = &sh->shard;
  }
  return 0;
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  static char *kwlist[] = {"buffer",     "dtype", "shape",       "device", "aux_buffers",
                           "layout",     "quantization", "statistics", "shard", "byte_offset",
                           "copy",       NULL};
  PyObject *buffer, *dtobj, *shapeobj, *device = Py_None, *aux = Py_None, *layout = Py_None,
                                                *quant = Py_None, *stats = Py_None,
                                                *shard = Py_None, *boff = NULL, *copyobj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O$OOOOOOO:Tensor", kwlist, &buffer, &dtobj,
                                   &shapeobj, &device, &aux, &layout, &quant, &stats, &shard,
                                   &boff, &copyobj))
    return NULL;
  const char *ctx = "Tensor";
  uint8_t tag;
  if (hrpy_dtype_converter(st, dtobj, &tag) < 0) return NULL;
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, shapeobj, shape, &rank, ctx) < 0) return NULL;
  if (device == Py_None) {
    device = st->cpu;
  } else if (!hrpy_device_check(st, device)) {
    return PyErr_Format(PyExc_TypeError, "Tensor: device must be a hurray.Device, not %.100s",
                        Py_TYPE(device)->tp_name);
  }
  int copy;
  if (hrpy_parse_copy(copyobj, &copy) < 0) return NULL;
  HurrayLayout lay;
  if (layout_arg(st, layout, rank, shape, &lay) < 0) return NULL;
  HrpySections sec;
  memset(&sec, 0, sizeof sec);
  sec.options = hrpy_layout_options(lay.tag);
  if (sections_arg(st, quant, stats, shard, rank, &sec) < 0) return NULL;
  uint64_t byte_offset = 0;
  if (boff != NULL && boff != Py_None) {
    if (PyBool_Check(boff) || !PyIndex_Check(boff))
      return PyErr_Format(PyExc_TypeError, "Tensor: byte_offset must be an int, not %.100s",
                          Py_TYPE(boff)->tp_name);
    PyObject *v = PyNumber_Index(boff);
    if (v == NULL) return NULL;
    byte_offset = PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    if (byte_offset == (uint64_t)-1 && PyErr_Occurred()) {
      PyErr_Clear();
      return hrpy_raise(st->InvalidDescriptorError,
                       "Tensor: byte_offset must be in [0, 2**64), got %R", boff);
    }
  }
  bool host = ((HrpyDevice *)device)->tag == HURRAY_DEVICE_CPU;
  /* An unknown layout keeps the buffer table inside its raw bytes (what a
   * permissive decode can do without the payload's length), so the tensor
   * declares no buffers of its own. */
  HurrayTagKind lk = hurray_layout_tag_kind(lay.tag);
  bool opaque = lk == HURRAY_TAG_RESERVED || lk == HURRAY_TAG_UNASSIGNED;
  /* Every buffer in one sequence: buffer + aux_buffers, or a list / tuple
   * given as `buffer` (neither exports the buffer protocol, so the two forms
   * cannot be confused). None: no buffer (an UnknownLayout's tensor). */
  PyObject *all = NULL;
  if (PyList_Check(buffer) || PyTuple_Check(buffer)) {
    if (aux != Py_None)
      return PyErr_Format(PyExc_TypeError,
                          "Tensor: give the buffers either as one sequence or as buffer and "
                          "aux_buffers, not both");
    all = PySequence_Fast(buffer, "");
  } else {
    PyObject *auxseq = aux == Py_None ? PyTuple_New(0)
                                      : PySequence_Fast(aux, "Tensor: aux_buffers must be a "
                                                             "sequence of buffers");
    if (auxseq == NULL) return NULL;
    Py_ssize_t naux = PySequence_Fast_GET_SIZE(auxseq);
    all = PyList_New(buffer == Py_None ? 0 : 1);
    if (all != NULL && buffer != Py_None) PyList_SET_ITEM(all, 0, Py_NewRef(buffer));
    for (Py_ssize_t i = 0; all != NULL && i < naux; i++) {
      if (PyList_Append(all, PySequence_Fast_GET_ITEM(auxseq, i)) < 0) Py_CLEAR(all);
    }
    Py_DECREF(auxseq);
  }
  if (all == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(all);
  if (n > (Py_ssize_t)HURRAY_MAX_BUFFERS) {
    Py_DECREF(all);
    return hrpy_raise(st->InvalidDescriptorError, "Tensor: too many buffers (%zd)", n);
  }
  uint32_t nbuf = (uint32_t)n;
  if (opaque) {
    bool empty = true;
    for (Py_ssize_t i = 0; empty && i < n; i++) {
      Py_buffer v;
      if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(all, i), &v, PyBUF_SIMPLE) == 0) {
        empty = i == 0 && v.len == 0;
        PyBuffer_Release(&v);
      } else {
        PyErr_Clear();
        empty = false;
      }
    }
    Py_DECREF(all);
    if (!empty)
      return hrpy_raise(st->InvalidDescriptorError,
                       "Tensor: an UnknownLayout carries the buffer table inside its raw bytes, "
                       "so the tensor declares no buffers: pass buffer=None (or b\"\") and no "
                       "aux_buffers");
    return hrpy_tensor_build_ex(st, tag, rank, shape, &lay, byte_offset, device, NULL, 0, &sec,
                               ctx);
  }
  if (nbuf == 0) {
    Py_DECREF(all);
    return PyErr_Format(PyExc_TypeError, "Tensor: buffer is required (None only for an "
                                         "UnknownLayout, whose buffers are inside its bytes)");
  }
  HrpyBuffer *bufs = PyMem_Calloc(nbuf, sizeof(HrpyBuffer));
  if (bufs == NULL) {
    Py_DECREF(all);
    return PyErr_NoMemory();
  }
  PyObject *result = NULL;
  uint32_t got = 0;
  for (uint32_t i = 0; i < nbuf; i++) {
    PyObject *o = PySequence_Fast_GET_ITEM(all, (Py_ssize_t)i);
    /* Device memory is never copied: a non-CPU tensor's buffers are borrowed
     * as declarations (copy=None acts as copy=False there). */
    if (hrpy_buffer_acquire(st, o, i, host ? copy : (copy == 1 ? 1 : 0), ctx, &bufs[i]) < 0)
      goto done;
    got = i + 1;
  }
  result =
      hrpy_tensor_build_ex(st, tag, rank, shape, &lay, byte_offset, device, bufs, nbuf, &sec, ctx);
  got = 0; /* moved or released by hrpy_tensor_build_ex */
  if (result != NULL && hrpy_tensor_validate_index_buffers(st, (HrpyTensor *)result, ctx) < 0)
    Py_CLEAR(result);
done:
  for (uint32_t i = 0; i < got; i++) hrpy_buffer_release(&bufs[i]);
  PyMem_Free(bufs);
  Py_DECREF(all);
  return result;
}

PyObject *hrpy_tensor_from_descriptor(HrpyState *st, const HurrayDescriptor *d, HrpyBuffer *bufs,
                                     uint32_t nbuf, uint32_t options, const char *context) {
  HurrayDescriptorFields f;
  PyObject *device = NULL, *result = NULL;
  if (hurray_descriptor_fields(d, &f) != HURRAY_OK) {
    hrpy_raise_status(st, HURRAY_ERR_INTERNAL, NULL, context);
    goto done;
  }
  if (nbuf != f.buffer_count) {
    hrpy_raise_rule(st, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", context,
                   "the descriptor declares %u buffers, %u were given", (unsigned)f.buffer_count,
                   (unsigned)nbuf);
    goto done;
  }
  for (uint32_t i = 0; i < nbuf; i++) {
    if (bufs[i].size < f.buffers[i].byte_size) {
      char field[32];
      PyOS_snprintf(field, sizeof field, "buffers[%u].byte_size", (unsigned)i);
      hrpy_raise_rule(st, HURRAY_ERR_BUFFER_SIZE, field, context,
                     "buffer %u holds %llu bytes, the descriptor declares %llu", (unsigned)i,
                     (unsigned long long)bufs[i].size,
                     (unsigned long long)f.buffers[i].byte_size);
      goto done;
    }
    bufs[i].size = f.buffers[i].byte_size;
    bufs[i].sync_mode = f.buffers[i].sync_mode;
  }
  if (nbuf > 0) {
    device = hrpy_device_new(st, f.buffers[0].device_tag, f.buffers[0].memory_class, 0);
  } else {
    device = Py_NewRef(st->cpu);
  }
  if (device == NULL) goto done;
  HrpySections sec;
  memset(&sec, 0, sizeof sec);
  sec.quantization = f.quantization;
  sec.shard = f.shard;
  sec.statistics = f.statistics;
  sec.member = f.composite_member;
  sec.extension_type = f.extension_type;
  sec.flags = f.flags;
  sec.trailing = f.trailing;
  sec.trailing_len = f.trailing_len;
  sec.version_minor = f.version_minor;
  sec.options = options;
  result = hrpy_tensor_build_ex(st, f.type_tag, f.rank, f.shape, &f.layout, f.byte_offset, device,
                               bufs, nbuf, &sec, context);
  nbuf = 0; /* moved */
  if (result != NULL && hrpy_tensor_validate_index_buffers(st, (HrpyTensor *)result, context) < 0)
    Py_CLEAR(result);
done:
  for (uint32_t i = 0; i < nbuf; i++) hrpy_buffer_release(&bufs[i]);
  Py_XDECREF(device);
  return result;
}

/* _tensor_from_descriptor(descriptor, buffers, /, *, permissive=False, copy=None):
 * the Python door to hrpy_tensor_from_descriptor (readers, tests). */
static PyObject *m_tensor_from_descriptor(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"descriptor", "buffers", "permissive", "copy", NULL};
  PyObject *a[4];
  if (hrpy_parse_args("_tensor_from_descriptor", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  const HurrayDescriptor *d = hrpy_descriptor_get(st, a[0]);
  if (d == NULL)
    return PyErr_Format(PyExc_TypeError, "descriptor must be a hurray.Descriptor, not %.100s",
                        Py_TYPE(a[0])->tp_name);
  int permissive = 0, copy;
  if (a[2] != NULL && (permissive = PyObject_IsTrue(a[2])) < 0) return NULL;
  if (hrpy_parse_copy(a[3], &copy) < 0) return NULL;
  PyObject *seq = PySequence_Fast(a[1], "buffers must be a sequence");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n > (Py_ssize_t)HURRAY_MAX_BUFFERS) {
    Py_DECREF(seq);
    return hrpy_raise(st->InvalidDescriptorError, "too many buffers (%zd)", n);
  }
  HrpyBuffer *bufs = PyMem_Calloc(n > 0 ? (size_t)n : 1u, sizeof(HrpyBuffer));
  if (bufs == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  HurrayDescriptorFields f;
  (void)hurray_descriptor_fields(d, &f);
  bool host = f.buffer_count == 0 || f.buffers[0].device_tag == HURRAY_DEVICE_CPU;
  PyObject *r = NULL;
  Py_ssize_t got = 0;
  for (; got < n; got++) {
    if (hrpy_buffer_acquire(st, PySequence_Fast_GET_ITEM(seq, got), (uint32_t)got,
                           host ? copy : (copy == 1 ? 1 : 0), "_tensor_from_descriptor",
                           &bufs[got]) < 0)
      break;
  }
  if (got == n) {
    r = hrpy_tensor_from_descriptor(st, d, bufs, (uint32_t)n,
                                   permissive ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT,
                                   "_tensor_from_descriptor");
  } else {
    for (Py_ssize_t i = 0; i < got; i++) hrpy_buffer_release(&bufs[i]);
  }
  PyMem_Free(bufs);
  Py_DECREF(seq);
  return r;
}

static PyMethodDef tensor_module_methods[] = {
    {"_lazy_fields", m_lazy_fields, METH_O,
     "_lazy_fields(tensor, /)\n--\n\n(lazy, same): whether the tensor's descriptor was still "
     "unbuilt, and whether the fields it carried equal the built descriptor's (tests)."},
    {"_tensor_from_descriptor", (PyCFunction)(void (*)(void))m_tensor_from_descriptor,
     METH_FASTCALL | METH_KEYWORDS,
     "_tensor_from_descriptor(descriptor, buffers, /, *, permissive=False, copy=None)\n--\n\n"
     "A Tensor from a decoded Descriptor and one buffer per entry of its buffer table (each "
     "at least its declared size). Every section is kept; alignment is measured again."},
    {NULL, NULL, 0, NULL},
};

/* ---- getters --------------------------------------------------------------- */

static PyObject *tg_dtype(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(T(s)->dtype);
}
static PyObject *tg_shape(PyObject *s, void *c) {
  (void)c;
  return hrpy_shape_tuple(T(s)->f.rank, T(s)->f.shape);
}
static PyObject *tg_ndim(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(T(s)->f.rank);
}
static PyObject *tg_size(PyObject *s, void *c) {
  (void)c;
  return hrpy_size_object(T(s)->f.rank, T(s)->f.shape);
}
static PyObject *tg_device(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(T(s)->device);
}
static PyObject *tg_layout(PyObject *s, void *c) {
  (void)c;
  return hrpy_layout_object(hrpy_state_of(s), &T(s)->f);
}
static PyObject *tg_buffer_count(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(T(s)->f.buffer_count);
}
static PyObject *tg_buffer_handles(PyObject *s, void *c) {
  (void)c;
  HrpyTensor *t = T(s);
  if (t->handles == NULL) {
    t->handles = hrpy_buffer_handles_tuple(hrpy_state_of(s), &t->f, t->device);
    if (t->handles == NULL) return NULL;
  }
  return Py_NewRef(t->handles);
}
static PyObject *tg_descriptor(PyObject *s, void *c) {
  (void)c;
  HrpyState *st = hrpy_state_of(s);
  const HurrayDescriptor *own = hrpy_tensor_desc(st, s);
  if (own == NULL) return NULL;
  HurrayDescriptor *d = NULL;
  HurrayStatus rc = hurray_descriptor_clone(own, &d);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, NULL, "Tensor.descriptor");
  return hrpy_descriptor_wrap(st, d, T(s)->device);
}
static PyObject *tg_quantization(PyObject *s, void *c) {
  (void)c;
  return hrpy_quantization_object(hrpy_state_of(s), &T(s)->f);
}
static PyObject *tg_shard(PyObject *s, void *c) {
  (void)c;
  return hrpy_shard_object(hrpy_state_of(s), &T(s)->f);
}
static PyObject *tg_statistics(PyObject *s, void *c) {
  (void)c;
  return hrpy_statistics_object(hrpy_state_of(s), &T(s)->f);
}
static PyObject *tg_byte_offset(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(T(s)->f.byte_offset);
}
static PyObject *tg_sync_mode(PyObject *s, void *c) {
  (void)c;
  HrpyTensor *t = T(s);
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
  HrpyTensor *t = T(s);
  for (uint32_t i = 0; i < t->nbuf; i++)
    if (t->bufs[i].readonly) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

/* T: a transposed view of a rank-2 tensor (row-major <-> column-major). */
static PyObject *tg_T(PyObject *s, void *c) {
  (void)c;
  HrpyTensor *t = T(s);
  HrpyState *st = hrpy_state_of(s);
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
      return hrpy_raise(st->UnsupportedError,
                       "Tensor.T: a %s tensor has no transposed view without a copy",
                       hrpy_layout_name(t->f.layout.tag));
  }
  uint64_t shape[2] = {t->f.shape[1], t->f.shape[0]};
  HrpyBuffer *bufs = PyMem_Calloc(t->nbuf > 0 ? t->nbuf : 1, sizeof(HrpyBuffer));
  if (bufs == NULL) return PyErr_NoMemory();
  for (uint32_t i = 0; i < t->nbuf; i++) {
    bufs[i].data = t->bufs[i].data;
    bufs[i].size = t->bufs[i].size;
    bufs[i].readonly = t->bufs[i].readonly;
    bufs[i].sync_mode = t->f.buffers[i].sync_mode;
    bufs[i].owner = Py_NewRef(s);
    bufs[i].host = hrpy_tensor_buffer_is_host(t, i);
  }
  PyObject *r = hrpy_tensor_build(st, t->f.type_tag, 2, shape, &lay, t->f.byte_offset, t->device,
                                 bufs, t->nbuf, "Tensor.T");
  PyMem_Free(bufs);
  return r;
}

int hrpy_tensor_check_host(HrpyState *st, const HrpyTensor *t, const char *what) {
  for (uint32_t i = 0; i < t->nbuf; i++) {
    if (t->f.buffers[i].byte_size > 0 && !hrpy_tensor_buffer_is_host(t, i)) {
      hrpy_raise(st->UnsupportedError,
                "%s: buffer %u is device memory (%R) that this process cannot read; copy the "
                "tensor to the host first",
                what, (unsigned)i, t->device);
      return -1;
    }
  }
  return 0;
}

int hrpy_tensor_check_readable(HrpyState *st, HrpyTensor *t, const char *what) {
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

/* buffer(i): a 1-D uint8 Tensor over exactly the declared bytes of buffer i. */
static PyObject *tm_buffer(PyObject *s, PyObject *arg) {
  HrpyTensor *t = T(s);
  HrpyState *st = hrpy_state_of(s);
  Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0 || (uint64_t)i >= t->f.buffer_count) {
    return PyErr_Format(PyExc_IndexError, "no buffer at index %zd; this tensor has %u", i,
                        (unsigned)t->f.buffer_count);
  }
  if (hrpy_tensor_check_readable(st, t, "Tensor.buffer") < 0) return NULL;
  HrpyBuffer b;
  memset(&b, 0, sizeof b);
  b.data = t->bufs[i].data;
  b.size = t->f.buffers[i].byte_size;
  b.readonly = t->bufs[i].readonly;
  b.owner = Py_NewRef(s);
  b.host = hrpy_tensor_buffer_is_host(t, (uint32_t)i);
  uint64_t shape[1] = {b.size};
  return hrpy_tensor_build(st, HURRAY_DTYPE_UINT8, 1, shape, NULL, 0, t->device, &b, 1,
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
    {"layout", tg_layout, NULL, "The memory layout (a hurray.Layout subclass; read-only).", NULL},
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
    {"__array_interface__", hrpy_tensor_array_interface, NULL,
     "NumPy array interface (v3) of a dense, host, Tier 1 tensor.", NULL},
    {"__array_struct__", hrpy_tensor_array_struct, NULL,
     "NumPy array interface as a C struct (capsule); the same tensors as the dict.", NULL},
    {"nnz", hrpy_tensor_nnz, NULL,
     "Stored element count of a COO, CSR, CSC or CSF tensor (AttributeError otherwise).", NULL},
    {"values", hrpy_tensor_values, NULL,
     "1-D view of the stored values of a sparse tensor (AttributeError otherwise).", NULL},
    {"indices", hrpy_tensor_indices, NULL,
     "[nnz, rank] uint64 view of a COO tensor's coordinates (AttributeError otherwise).", NULL},
    {"col_indices", hrpy_tensor_col_indices, NULL,
     "uint64 view of a CSR tensor's column indices (AttributeError otherwise).", NULL},
    {"row_ptr", hrpy_tensor_row_ptr, NULL,
     "uint64 view of a CSR tensor's row pointers (AttributeError otherwise).", NULL},
    {"row_indices", hrpy_tensor_row_indices, NULL,
     "uint64 view of a CSC tensor's row indices (AttributeError otherwise).", NULL},
    {"col_ptr", hrpy_tensor_col_ptr, NULL,
     "uint64 view of a CSC tensor's column pointers (AttributeError otherwise).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"buffer", tm_buffer, METH_O,
     "buffer(self, index, /)\n--\n\nA 1-D uint8 hurray.Tensor viewing exactly the declared "
     "bytes of the buffer at `index` of the buffer table. IndexError if there is none."},
    {"__array__", (PyCFunction)(void (*)(void))hrpy_tensor_array, METH_FASTCALL | METH_KEYWORDS,
     "__array__(self, dtype=None, copy=None)\n--\n\nA numpy.ndarray of the tensor: a view "
     "sharing its memory when possible (the array's base is the tensor)."},
    {"__dlpack__", (PyCFunction)(void (*)(void))hrpy_tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "Export as a DLPack capsule ('dltensor_versioned' when max_version >= (1, 0), else the "
     "legacy 'dltensor')."},
    {"__hurray__", (PyCFunction)(void (*)(void))hrpy_tensor_hurray, METH_FASTCALL | METH_KEYWORDS,
     "__hurray__(self, stream=None)\n--\n\nExport every buffer through the native protocol: a "
     "'hurray_tensor' PyCapsule whose pointer is a HurrayBufferList (buffer-table order) and "
     "whose context is a HurrayTensorContext (encoded descriptor, C ABI version). The tensor "
     "stays alive until the consumer destroys what it took, or the capsule dies unconsumed."},
    {"__dlpack_device__", hrpy_tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__(self)\n--\n\n(DLDeviceType, device_id) of the tensor."},
    {"to_torch", hrpy_tensor_to_torch, METH_NOARGS,
     "to_torch(self)\n--\n\nA torch.Tensor sharing this tensor's memory (through DLPack)."},
    {"to_scipy", hrpy_tensor_to_scipy, METH_NOARGS,
     "to_scipy(self)\n--\n\nThe scipy.sparse matrix of a CSR, CSC or COO tensor, sharing "
     "its memory where SciPy's layout allows (AttributeError for other layouts)."},
    {"__reduce__", tm_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef tensor_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(HrpyTensor, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* ---- repr / str (formatting lives in hurray/_display.py) -------------------- */

static PyObject *display_call(PyObject *s, bool repr) {
  HrpyState *st = hrpy_state_of(s);
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
  hurray_descriptor_destroy(t->desc);
  t->desc = NULL;
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc,
     "Tensor(buffer, dtype, shape, device=None, *, aux_buffers=None, layout=None, "
     "quantization=None, statistics=None, shard=None, byte_offset=0, copy=None)\n--\n\n"
     "A Hurray tensor: a descriptor and the buffers it describes.\n\n"
     "`buffer` (and each of `aux_buffers`) is any C-contiguous buffer-protocol object; a "
     "list or tuple of them gives every buffer at once. "
     "It is borrowed when its address meets the 64-byte floor (MIN_BUFFER_ALIGNMENT) and "
     "copied into owned aligned memory otherwise (copy=None); copy=True always copies, "
     "copy=False never does and raises hurray.BufferError for a misaligned buffer. A "
     "dynamic dimension is spelled None in `shape`.\n\n`layout` is a hurray.Layout "
     "(row-major when omitted); the layout is a declaration and the buffers are evidence: "
     "the shape tier and the buffer-count tier raise InvalidDescriptorError, an undersized "
     "buffer hurray.BufferError. Nothing is inferred or corrected."},
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
    .basicsize = sizeof(HrpyTensor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tensor_slots,
};

int hrpy_tensor_init(PyObject *m, HrpyState *st) {
  st->TensorType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &tensor_spec, NULL);
  if (st->TensorType == NULL) return -1;
  if (PyModule_AddFunctions(m, tensor_module_methods) < 0) return -1;
  return PyModule_AddType(m, st->TensorType);
}

/* ---- strided gather --------------------------------------------------------- */

void hrpy_strided_gather(uint8_t *dst, const uint8_t *src, size_t itemsize, uint32_t rank,
                        const uint64_t *shape, const int64_t *bstrides) {
  uint64_t count;
  if (!hrpy_element_count(rank, shape, &count) || count == 0) return;
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

bool hrpy_strided_extent(uint8_t *first, uint64_t esize, uint32_t rank, const uint64_t *shape,
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
