/*
 * core/build.c - every way a hurray.Tensor comes to be (core/tensor.h): from
 * prepared buffers and fields, lazily described dense tensors, and tensors
 * from a decoded descriptor (what file and stream readers have).
 *
 * Every format rule is the C library's: the fields go to
 * hurray_descriptor_from_fields (or the dense constructor), and what it
 * refuses is raised with its detail; nothing is re-checked here.
 */
#include "core/tensor_internal.h"

#include <stdio.h>
#include <string.h>

#include "core/device.h"
#include "core/dtype.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "core/state.h"


/* The one block behind a lazily described tensor's `bufs`: its buffer, then
 * the handle and the shape its fields point into (freed with bufs). */
typedef struct LazyBlock {
  HrpyBuffer buf;
  HurrayBufferHandle handle;
  uint64_t shape[]; /* rank entries */
} LazyBlock;

/* Appends what the buffer named by err->field ("buffers[i]...") holds. */
static void name_buffer(HurrayError *err, const HurrayDescriptorFields *f) {
  unsigned i;
  if (sscanf(err->field, "buffers[%u]", &i) != 1 || i >= f->buffer_count) return;
  char tmp[16];
  const char *role = hurray_descriptor_buffer_role(f, (uint32_t)i, tmp, sizeof tmp);
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
  uint8_t dev_tag = hrpy_device_tag(device), dev_class = hrpy_device_memory_class(device);
  HurrayBufferHandle handles_small[4];
  HurrayBufferHandle *handles = handles_small;
  HrpyTensor *t = NULL;
  PyObject *dtype = NULL;
  if (nbuf > 4) {
    handles = PyMem_Calloc(nbuf, sizeof *handles);
    if (handles == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
  }
  for (uint32_t i = 0; i < nbuf; i++) {
    handles[i].byte_size = bufs[i].size;
    handles[i].alignment = sec != NULL && sec->alignment != NULL
                               ? sec->alignment[i]
                               : hurray_alignment_policy(bufs[i].data, bufs[i].size);
    handles[i].device_tag = dev_tag;
    handles[i].memory_class = dev_class;
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
  t = PyObject_GC_New(HrpyTensor, st->core->TensorType);
  if (t == NULL) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(desc));
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

PyObject *hrpy_tensor_new_dense(HrpyState *st, uint8_t type_tag, uint32_t rank,
                                const uint64_t *shape, uint8_t layout_tag, PyObject *device,
                                HrpyBuffer *b, const char *context) {
  uint32_t alignment = hurray_alignment_policy(b->data, b->size);
  /* What the binding decides (a host tensor of standard memory, synced, in
   * one of the two dense orders); every format rule is the C library's. */
  bool plain = rank <= HURRAY_MAX_RANK && hrpy_device_tag(device) == HURRAY_DEVICE_CPU &&
               hrpy_device_memory_class(device) == HURRAY_MEMORY_STANDARD &&
               b->sync_mode == HURRAY_SYNC_PRODUCER_SYNCED &&
               (layout_tag == HURRAY_LAYOUT_ROW_MAJOR || layout_tag == HURRAY_LAYOUT_COL_MAJOR);
  LazyBlock *blk = NULL;
  HurrayDescriptorFields f;
  if (plain) {
    blk = PyMem_Malloc(sizeof *blk + (size_t)rank * sizeof(uint64_t));
    if (blk == NULL) {
      hrpy_buffer_release(b);
      return PyErr_NoMemory();
    }
    for (uint32_t i = 0; i < rank; i++) blk->shape[i] = shape[i]; /* no rep movs for rank 1 */
    if (hurray_descriptor_fields_dense(type_tag, rank, rank > 0 ? blk->shape : NULL, layout_tag,
                                       b->size, alignment, &blk->handle, &f, NULL) != HURRAY_OK) {
      PyMem_Free(blk);
      blk = NULL;
    }
  }
  if (blk == NULL) {
    /* refused, or not the plain case: the general build validates and raises
     * with every detail (buffer roles included) */
    HurrayLayout lay;
    memset(&lay, 0, sizeof lay);
    lay.tag = layout_tag;
    return hrpy_tensor_build(st, type_tag, rank, shape, &lay, 0, device, b, 1, context);
  }
  PyObject *dtype = hrpy_dtype_from_tag(st, type_tag);
  HrpyTensor *t = dtype != NULL ? PyObject_GC_New(HrpyTensor, st->core->TensorType) : NULL;
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
  t->f = f; /* points at blk->shape and blk->handle */
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

PyObject *hrpy_tensor_from_descriptor(HrpyState *st, const HurrayDescriptor *d, HrpyBuffer *bufs,
                                     uint32_t nbuf, uint32_t options, const char *context) {
  return hrpy_tensor_from_descriptor_on(st, d, NULL, bufs, nbuf, options, context);
}

PyObject *hrpy_tensor_from_descriptor_on(HrpyState *st, const HurrayDescriptor *d,
                                        PyObject *on, HrpyBuffer *bufs, uint32_t nbuf,
                                        uint32_t options, const char *context) {
  HurrayDescriptorFields f;
  PyObject *device = NULL, *result = NULL;
  uint32_t align_small[4];
  uint32_t *align = NULL;
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
  if (on != NULL) {
    /* the buffer table says the device kind and memory class; the id is the
     * caller's (a descriptor does not carry it) */
    if (nbuf > 0 && (f.buffers[0].device_tag != hrpy_device_tag(on) ||
                     f.buffers[0].memory_class != hrpy_device_memory_class(on))) {
      hrpy_raise_rule(st, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffers[0].device_tag", context,
                      "the descriptor's buffers are on device tag 0x%02x (memory class "
                      "0x%02x), the device given is tag 0x%02x (memory class 0x%02x)",
                      (unsigned)f.buffers[0].device_tag, (unsigned)f.buffers[0].memory_class,
                      (unsigned)hrpy_device_tag(on), (unsigned)hrpy_device_memory_class(on));
      goto done;
    }
    device = Py_NewRef(on);
  } else if (nbuf > 0) {
    device = hrpy_device_new(st, f.buffers[0].device_tag, f.buffers[0].memory_class, 0);
  } else {
    device = Py_NewRef(st->core->cpu);
  }
  if (device == NULL) goto done;
  align = nbuf <= 4 ? align_small : PyMem_Malloc(nbuf * sizeof *align);
  if (align == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  /* the descriptor's alignment where the address keeps it (hurray_alignment_for_reader) */
  for (uint32_t i = 0; i < nbuf; i++)
    if (hurray_alignment_for_reader(bufs[i].data, bufs[i].size, f.buffers[i].alignment,
                                    bufs[i].host, &align[i]) &&
        hrpy_buffer_copy_to_owned(&bufs[i], align[i], bufs[i].readonly) < 0)
      goto done;
  HrpySections sec;
  memset(&sec, 0, sizeof sec);
  sec.alignment = nbuf > 0 ? align : NULL;
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
  if (result != NULL && hrpy_tensor_validate_index_buffers(st, result, context) < 0)
    Py_CLEAR(result);
done:
  for (uint32_t i = 0; i < nbuf; i++) hrpy_buffer_release(&bufs[i]);
  if (align != align_small) PyMem_Free(align);
  Py_XDECREF(device);
  return result;
}

PyObject *hrpy_tensor_read(HrpyState *st, const HurrayDescriptor *d, uint32_t n,
                           HrpyBufferFill fill, void *ctx, uint32_t options,
                           const char *context) {
  HrpyBuffer small[4];
  HrpyBuffer *bufs = n <= 4 ? small : PyMem_Calloc(n, sizeof(HrpyBuffer));
  if (bufs == NULL) return PyErr_NoMemory();
  memset(bufs, 0, (n <= 4 ? 4 : n) * sizeof(HrpyBuffer));
  uint32_t got = 0;
  for (; got < n; got++) {
    bufs[got].host = true;
    if (fill(ctx, got, &bufs[got]) < 0) break;
  }
  PyObject *r = NULL;
  if (got == n) {
    HurrayDescriptorFields f;
    HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
    r = hrpy_tensor_from_descriptor(st, d, bufs, n, options | hurray_descriptor_relay_options(&f),
                                    context);
  } else {
    for (uint32_t i = 0; i <= got && i < n; i++) hrpy_buffer_release(&bufs[i]);
  }
  if (bufs != small) PyMem_Free(bufs);
  return r;
}

int hrpy_tensor_warn_unpacked(PyObject *t, const char *context) {
  const HurrayDescriptorFields *f = &((const HrpyTensor *)t)->f;
  uint64_t count = 0, packed = 0;
  if (!hurray_descriptor_looks_unpacked(f, &count, &packed)) return 0;
  const HurrayDtypeInfo *info = hurray_dtype_info(f->type_tag);
  return PyErr_WarnFormat(PyExc_UserWarning, 1,
                          "%s: buffer 0 holds %llu bytes, one per %s element, but %llu %s "
                          "elements pack into %llu bytes (%s): the buffer looks unpacked. Pack "
                          "the codes (hurray.quantize does); a larger buffer is legal, so it "
                          "is used as given",
                          context, (unsigned long long)f->buffers[0].byte_size, info->name,
                          (unsigned long long)count, info->name, (unsigned long long)packed,
                          info->bit_width == 6 ? "four per three bytes"
                          : info->bit_width == 1 ? "eight per byte"
                          : info->bit_width == 2 ? "four per byte"
                                                 : "two per byte");
}

int hrpy_decode_descriptor(HrpyState *st, const uint8_t *bytes, uint64_t len, bool permissive,
                          HurrayDescriptor **out, uint32_t *options, const char *context) {
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc =
      hurray_descriptor_decode_relay(bytes, (uintptr_t)len, permissive, out, options, &err);
  if (rc == HURRAY_OK) return 0;
  hrpy_raise_status(st, rc, &err, context);
  return -1;
}
