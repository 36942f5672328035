/*
 * module/tensor_class.c - the Python class hurray.Tensor: a descriptor plus the buffers it
 * describes (top layer, module/).
 *
 * What a tensor is (the object, its buffers, every way to build one) is the
 * core's (core/tensor.h). This file assembles the class users see: the
 * constructor's arguments, the getters, and the methods, taking the interop
 * methods from their files (NumPy: interop/numpy.c, DLPack:
 * interop/dlpack.c, the native protocol: interop/native.c, sparse views:
 * interop/sparse.c).
 */
#include "module/tensor_class.h"

#include <string.h>

#include "core/buffer_handle.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "interop/dlpack.h"
#include "interop/native.h"
#include "interop/numpy.h"
#include "interop/pickle.h"
#include "interop/sparse.h"
#include "types/descriptor.h"
#include "types/layout.h"
#include "types/quant.h"
#include "types/quantize.h"
#include "types/sections.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"
#include "core/state.h"
#include "types/state.h"

#define F(o) hrpy_tensor_fields(o)

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
  bool lazy = !hrpy_tensor_is_described(arg);
  const HurrayDescriptor *d = hrpy_tensor_desc(st, arg);
  if (d == NULL) return NULL;
  HurrayDescriptorFields g;
  if (hurray_descriptor_fields(d, &g) != HURRAY_OK)
    return hrpy_raise_status(st, HURRAY_ERR_INTERNAL, NULL, "_lazy_fields");
  return Py_BuildValue("(OO)", lazy ? Py_True : Py_False,
                       same_plain_fields(F(arg), &g) ? Py_True : Py_False);
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
  if (hrpy_layout_value(layout)->tag == HURRAY_LAYOUT_COMPOSITE) {
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
    sec->quantization = hrpy_quant_value(quant);
    HurrayTagKind k = hurray_quant_scheme_kind(sec->quantization->scheme);
    if (k == HURRAY_TAG_RESERVED || k == HURRAY_TAG_UNASSIGNED)
      sec->options |= HURRAY_DECODE_PERMISSIVE; /* relayed, uninterpreted */
  }
  if (stats != Py_None) {
    if (!Py_IS_TYPE(stats, st->types->StatisticsType)) {
      PyErr_Format(PyExc_TypeError, "Tensor: statistics must be a hurray.Statistics, not %.100s",
                   Py_TYPE(stats)->tp_name);
      return -1;
    }
    sec->statistics = hrpy_statistics_value(stats);
  }
  if (shard != Py_None) {
    if (!Py_IS_TYPE(shard, st->types->ShardType)) {
      PyErr_Format(PyExc_TypeError, "Tensor: shard must be a hurray.Shard, not %.100s",
                   Py_TYPE(shard)->tp_name);
      return -1;
    }
    uint32_t shard_rank = 0;
    const HurrayShard *sh = hrpy_shard_value(shard, &shard_rank);
    if (shard_rank != rank) {
      hrpy_raise_rule(st, HURRAY_ERR_INVALID_SHARD, "shard", "Tensor",
                      "the shard has %u dimensions, the tensor %u", (unsigned)shard_rank,
                      (unsigned)rank);
      return -1;
    }
    sec->shard = sh;
  }
  return 0;
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  static const char *const kwlist[] = {"buffer",     "dtype", "shape",       "device", "aux_buffers",
                           "layout",     "quantization", "statistics", "shard", "byte_offset",
                           "copy",       NULL};
  PyObject *a[11];
  if (hrpy_parse_tuple("Tensor", args, kwargs, kwlist, 4, 3, a) < 0) return NULL;
  for (int i = 3; i < 11; i++)
    if (a[i] == NULL) a[i] = Py_None;
  PyObject *buffer = a[0], *device = a[3], *aux = a[4], *layout = a[5], *boff = a[9];
  const char *ctx = "Tensor";
  uint8_t tag;
  if (hrpy_dtype_converter(st, a[1], &tag) < 0) return NULL;
  uint64_t shape[HURRAY_MAX_RANK];
  uint32_t rank = 0;
  if (hrpy_parse_shape(st, a[2], shape, &rank, ctx) < 0) return NULL;
  if (device == Py_None) {
    device = st->core->cpu;
  } else if (!hrpy_device_check(st, device)) {
    return PyErr_Format(PyExc_TypeError, "Tensor: device must be a hurray.Device, not %.100s",
                        Py_TYPE(device)->tp_name);
  }
  int copy;
  if (hrpy_parse_copy(a[10], &copy) < 0) return NULL;
  HurrayLayout lay;
  if (layout_arg(st, layout, rank, shape, &lay) < 0) return NULL;
  HrpySections sec;
  memset(&sec, 0, sizeof sec);
  sec.options = hurray_layout_decode_options(lay.tag);
  if (sections_arg(st, a[6], a[7], a[8], rank, &sec) < 0) return NULL;
  uint64_t byte_offset = 0;
  if (boff != Py_None && hrpy_arg_u64(st, boff, ctx, "byte_offset", UINT64_MAX, &byte_offset) < 0)
    return NULL;
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
  if (n == 0) {
    Py_DECREF(all);
    return PyErr_Format(PyExc_TypeError, "Tensor: buffer is required (None only for an "
                                         "UnknownLayout, whose buffers are inside its bytes)");
  }
  /* A Python buffer is host memory whatever device the tensor declares
   * (docs/internals/decisions.md, "Device-tagged tensors built from host buffers"):
   * the copy policy is the same as for a CPU tensor. */
  uint32_t nbuf = 0;
  HrpyBuffer *bufs = hrpy_buffers_acquire(st, all, copy, ctx, &nbuf);
  Py_DECREF(all);
  if (bufs == NULL) return NULL;
  PyObject *result = /* moves or releases the buffers */
      hrpy_tensor_build_ex(st, tag, rank, shape, &lay, byte_offset, device, bufs, nbuf, &sec, ctx);
  PyMem_Free(bufs);
  if (result != NULL && (hrpy_tensor_validate_index_buffers(st, result, ctx) < 0 ||
                         hrpy_tensor_warn_unpacked(result, ctx) < 0))
    Py_CLEAR(result);
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
  bool permissive;
  int copy;
  if (hrpy_arg_flag(a[2], false, &permissive) < 0) return NULL;
  if (hrpy_parse_copy(a[3], &copy) < 0) return NULL;
  PyObject *seq = PySequence_Fast(a[1], "buffers must be a sequence");
  if (seq == NULL) return NULL;
  uint32_t n = 0;
  HrpyBuffer *bufs = hrpy_buffers_acquire(st, seq, copy, "_tensor_from_descriptor", &n);
  Py_DECREF(seq);
  if (bufs == NULL) return NULL;
  PyObject *r = hrpy_tensor_from_descriptor(
      st, d, bufs, n, permissive ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT,
      "_tensor_from_descriptor");
  PyMem_Free(bufs);
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

static PyObject *tg_field(PyObject *s, void *which) {
  return hrpy_field_get(hrpy_state_of(s), F(s), which);
}
static PyObject *tg_dtype(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(hrpy_tensor_dtype(s));
}
static PyObject *tg_device(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(hrpy_tensor_device(s));
}
static PyObject *tg_buffer_handles(PyObject *s, void *c) {
  (void)c;
  return hrpy_tensor_buffer_handles(hrpy_state_of(s), s);
}
static PyObject *tg_descriptor(PyObject *s, void *c) {
  (void)c;
  HrpyState *st = hrpy_state_of(s);
  const HurrayDescriptor *own = hrpy_tensor_desc(st, s);
  if (own == NULL) return NULL;
  HurrayDescriptor *d = NULL;
  HurrayStatus rc = hurray_descriptor_clone(own, &d);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, NULL, "Tensor.descriptor");
  return hrpy_descriptor_wrap(st, d, hrpy_tensor_device(s));
}
static PyObject *tg_sync_mode(PyObject *s, void *c) {
  (void)c;
  const HurrayDescriptorFields *f = F(s);
  uint8_t m = HURRAY_SYNC_PRODUCER_SYNCED;
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    if (f->buffers[i].sync_mode != HURRAY_SYNC_PRODUCER_SYNCED) {
      m = f->buffers[i].sync_mode;
      break;
    }
  }
  const char *n = hurray_sync_mode_name(m);
  return PyUnicode_FromString(n != NULL ? n : "unknown");
}
static PyObject *tg_readonly(PyObject *s, void *c) {
  (void)c;
  for (uint32_t i = 0; i < hrpy_tensor_nbuf(s); i++)
    if (hrpy_tensor_buffer(s, i)->readonly) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

/* T: a transposed view of a rank-2 tensor (row-major <-> column-major). */
static PyObject *tg_T(PyObject *s, void *c) {
  (void)c;
  const HurrayDescriptorFields *f = F(s);
  HrpyState *st = hrpy_state_of(s);
  if (f->rank != 2) {
    return PyErr_Format(PyExc_ValueError, "Tensor.T needs a rank-2 tensor; this one has rank %u",
                        (unsigned)f->rank);
  }
  HurrayLayout lay;
  memset(&lay, 0, sizeof lay);
  int64_t strides[2];
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_ROW_MAJOR:
      lay.tag = HURRAY_LAYOUT_COL_MAJOR;
      break;
    case HURRAY_LAYOUT_COL_MAJOR:
      lay.tag = HURRAY_LAYOUT_ROW_MAJOR;
      break;
    case HURRAY_LAYOUT_STRIDED:
      lay.tag = HURRAY_LAYOUT_STRIDED;
      strides[0] = f->layout.u.strided.strides[1];
      strides[1] = f->layout.u.strided.strides[0];
      lay.u.strided.strides = strides;
      break;
    default:
      return hrpy_raise(st->UnsupportedError,
                        "Tensor.T: a %s tensor has no transposed view without a copy",
                        hrpy_layout_name(f->layout.tag));
  }
  uint64_t shape[2] = {f->shape[1], f->shape[0]};
  uint32_t nbuf = hrpy_tensor_nbuf(s);
  HrpyBuffer *bufs = PyMem_Calloc(nbuf > 0 ? nbuf : 1, sizeof(HrpyBuffer));
  if (bufs == NULL) return PyErr_NoMemory();
  for (uint32_t i = 0; i < nbuf; i++) hrpy_tensor_borrow_buffer(s, i, &bufs[i]);
  PyObject *r = hrpy_tensor_build(st, f->type_tag, 2, shape, &lay, f->byte_offset,
                                  hrpy_tensor_device(s), bufs, nbuf, "Tensor.T");
  PyMem_Free(bufs);
  return r;
}

/* buffer(i): a 1-D uint8 Tensor over exactly the declared bytes of buffer i. */
static PyObject *tm_buffer(PyObject *s, PyObject *arg) {
  const HurrayDescriptorFields *f = F(s);
  HrpyState *st = hrpy_state_of(s);
  Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0 || (uint64_t)i >= f->buffer_count) {
    return PyErr_Format(PyExc_IndexError, "no buffer at index %zd; this tensor has %u", i,
                        (unsigned)f->buffer_count);
  }
  if (hrpy_tensor_check_readable(st, s, "Tensor.buffer") < 0) return NULL;
  HrpyBuffer b;
  hrpy_tensor_borrow_buffer(s, (uint32_t)i, &b);
  b.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  uint64_t shape[1] = {b.size};
  return hrpy_tensor_build(st, HURRAY_DTYPE_UINT8, 1, shape, NULL, 0, hrpy_tensor_device(s), &b,
                           1, "Tensor.buffer");
}

/* data_ptr(): the address of element [0, ..., 0] (buffer 0 + byte_offset), as
 * torch.Tensor.data_ptr(); a device address for a device tensor, 0 when the
 * tensor has no buffer or buffer 0 is empty. For telling whether two tensors
 * share memory, not for dereferencing from Python. */
static PyObject *tm_data_ptr(PyObject *s, PyObject *unused) {
  (void)unused;
  const HurrayDescriptorFields *f = F(s);
  if (f->buffer_count == 0) return PyLong_FromLong(0);
  const HrpyBuffer *b = hrpy_tensor_buffer(s, 0);
  if (b->data == NULL) return PyLong_FromLong(0);
  return PyLong_FromVoidPtr(b->data + f->byte_offset);
}

static PyGetSetDef tensor_getset[] = {
    {"dtype", tg_dtype, NULL, "Element type (hurray.Dtype singleton).", NULL},
    HRPY_FIELD_GETSETS(tg_field),
    {"device", tg_device, NULL, "The hurray.Device holding the buffers.", NULL},
    {"buffer_handles", tg_buffer_handles, NULL,
     "Tuple of hurray.BufferHandle, one per buffer, in descriptor order.", NULL},
    {"descriptor", tg_descriptor, NULL, "The tensor's hurray.Descriptor.", NULL},
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
    {"values", hrpy_tensor_component, NULL,
     "1-D view of the stored values of a sparse tensor (AttributeError otherwise).", "values"},
    {"indices", hrpy_tensor_component, NULL,
     "[nnz, rank] uint64 view of a COO tensor's coordinates (AttributeError otherwise).", "indices"},
    {"col_indices", hrpy_tensor_component, NULL,
     "uint64 view of a CSR tensor's column indices (AttributeError otherwise).", "col_indices"},
    {"row_ptr", hrpy_tensor_component, NULL,
     "uint64 view of a CSR tensor's row pointers (AttributeError otherwise).", "row_ptr"},
    {"row_indices", hrpy_tensor_component, NULL,
     "uint64 view of a CSC tensor's row indices (AttributeError otherwise).", "row_indices"},
    {"col_ptr", hrpy_tensor_component, NULL,
     "uint64 view of a CSC tensor's column pointers (AttributeError otherwise).", "col_ptr"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *tensor_repr_html(PyObject *s, PyObject *unused);

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
    {"data_ptr", tm_data_ptr, METH_NOARGS,
     "data_ptr($self)\n--\n\nAddress of element [0, ..., 0] (buffer 0 plus byte_offset), as "
     "torch.Tensor.data_ptr(): a device address for a device tensor, 0 without data. For "
     "telling whether tensors share memory."},
    {"dequantize", (PyCFunction)(void (*)(void))hrpy_tensor_dequantize,
     METH_FASTCALL | METH_KEYWORDS,
     "dequantize(self, dtype=None)\n--\n\n"
     "The real values of a quantized row- or column-major tensor (built here, from caller "
     "buffers, loaded, streamed; every scheme, partial blocks included) as a new dense row-major "
     "tensor of `dtype`: float32 (the default, `None`), float16, bfloat16 or float64.\n"
     "\n"
     "The C library's kernel (`hurray_quant_dequantize`) run without the GIL. Partial last blocks "
     "(per-block, NF4) are skipped, whatever their padding holds. `hurray.quantize` has the rules "
     "by which values were quantized."},
    {"__reduce_ex__", hrpy_tensor_reduce_ex, METH_O,
     "__reduce_ex__(self, protocol, /)\n--\n\nPickle support: the encoded descriptor and the "
     "buffers (protocol 5: pickle.PickleBuffer objects over this tensor's memory, sent out "
     "of band by a pickler with a buffer_callback; below 5: copies). docs/guide/processes.md."},
    {"__reduce__", hrpy_tensor_reduce, METH_NOARGS,
     "__reduce__(self, /)\n--\n\n__reduce_ex__(2)."},
    {"_repr_html_", tensor_repr_html, METH_NOARGS,
     "_repr_html_(self, /)\n--\n\nThe tensor as HTML for notebooks (Jupyter, VS Code): its "
     "metadata and, for a dense numeric tensor in host memory, statistics and a histogram of "
     "its values (sampled when large). repr() is unchanged."},
    {NULL, NULL, 0, NULL},
};

/* ---- repr / str (formatting lives in hurray/_display.py) -------------------- */

/* The package's formatter (registered at its import), or, before that, the
 * dtype and shape alone: a repr never fails for want of the package. */
static PyObject *display_call(PyObject *s, bool repr) {
  HrpyState *st = hrpy_state_of(s);
  PyObject *fn = hrpy_peek(repr ? &st->hook_tensor_repr : &st->hook_tensor_str);
  if (fn != NULL) return PyObject_CallOneArg(fn, s);
  PyObject *dtype = PyObject_GetAttrString(s, "dtype");
  PyObject *shape = dtype != NULL ? PyObject_GetAttrString(s, "shape") : NULL;
  PyObject *r = shape != NULL ? PyUnicode_FromFormat("hurray.Tensor(dtype=%S, shape=%R)", dtype,
                                                     shape)
                              : NULL;
  Py_XDECREF(dtype);
  Py_XDECREF(shape);
  return r;
}
static PyObject *tensor_repr(PyObject *s) { return display_call(s, true); }
static PyObject *tensor_str(PyObject *s) { return display_call(s, false); }

/* _repr_html_ (notebooks): the package's HTML (hurray/_view/render.py, imported
 * when first asked), or None before the package registered it (the notebook
 * then shows the repr). */
static PyObject *tensor_repr_html(PyObject *s, PyObject *unused) {
  (void)unused;
  PyObject *fn = hrpy_peek(&hrpy_state_of(s)->hook_tensor_html);
  return fn != NULL ? PyObject_CallOneArg(fn, s) : Py_NewRef(Py_None);
}

/* ---- lifetime -------------------------------------------------------------- */

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc,
     "Tensor(buffer, dtype, shape, device=None, *, aux_buffers=None, layout=None, "
     "quantization=None, statistics=None, shard=None, byte_offset=0, copy=None)\n--\n\n"
     "A Hurray tensor: a descriptor (what the tensor is: element type, shape, layout, "
     "quantization, device) and the buffers it describes.\n"
     "\n"
     "\n"
     "- `buffer` (and each of `aux_buffers`) is any C-contiguous buffer-protocol object\n"
     "  (`bytes`, `bytearray`, `memoryview`, `array.array`, `mmap`, a NumPy array, ...). The\n"
     "  tensor holds the export, so the source object stays alive (and a `bytearray` cannot be\n"
     "  resized) while the tensor lives. Read-only sources give read-only tensors\n"
     "  (`Tensor.readonly`).\n"
     "- `dtype` is a `hurray.Dtype` or anything naming the same type (the spellings "
     "`hurray.Dtype`\n"
     "  lists: NumPy and PyTorch dtypes, safetensors codes, names).\n"
     "  `shape` is a sequence of ints, with `None`\n"
     "  for a dynamic dimension, one whose extent is not known when the descriptor is written\n"
     "  (`docs/spec/data-model.md` § Dynamic Dimensions; there is no sentinel constant); an int\n"
     "  is a 1-D shape.\n"
     "- A tensor's memory is one or more buffers, listed in its descriptor's *buffer table*\n"
     "  (one handle per buffer: size, alignment, device, sync mode). `buffer` is buffer 0 of\n"
     "  the table and `aux_buffers` the following ones, in order (a sparse tensor's index\n"
     "  buffers, quantization parameters). A `list` or `tuple`\n"
     "  as `buffer` gives every buffer at once (`aux_buffers` must then be omitted): lists and\n"
     "  tuples do not export the buffer protocol, so the two forms cannot be confused.\n"
     "  `buffer=None` only for an `UnknownLayout` (see below).\n"
     "- The element buffer must hold at least `buffer_size_bytes(dtype, size)` bytes\n"
     "  (`hurray.BufferError` otherwise); a larger buffer is fine and is declared at its full\n"
     "  size. One larger size is almost always a mistake: for a sub-byte type (`bool`, `int2`,\n"
     "  `uint2`, `int4`, `uint4`, `float4_e2m1`, the six-bit floats) a row- or column-major\n"
     "  buffer 0 of exactly one byte per element (codes unpacked, as NumPy holds them) while the\n"
     "  packed elements need fewer bytes. It is accepted, with a `UserWarning` naming the buffer\n"
     "  and the packed size (for a per-block or NF4 tensor the element count is the padded\n"
     "  storage count).\n"
     "- `device` defaults to `hurray.device.cpu`. A Python buffer is host memory whatever device\n"
     "  the tensor declares, so the copy policy is the same on every device (`copy=None` copies\n"
     "  a buffer below the 64-byte floor into aligned memory), and its bytes can be saved,\n"
     "  streamed and checked (docs/internals/decisions.md § Device-tagged tensors built from host "
     "buffers). NumPy still\n"
     "  refuses such a tensor (its declaration says the bytes live on the device); DLPack hands\n"
     "  it out with that device.\n"
     "- `layout=` takes a `hurray.Layout` (row-major when omitted): see\n"
     "  [Authoring with `layout=`](../guide/layouts.md). `quantization=`,\n"
     "  `statistics=` and `shard=` take a scheme class ([`PerTensorAffine`][hurray.PerTensorAffine],\n"
     "  ...), a [`Statistics`][hurray.Statistics] and a [`Shard`][hurray.Shard]; another\n"
     "  object is a `TypeError`.\n"
     "- A quantization scheme other than `PerTensorAffine` references its parameter buffers by\n"
     "  index, supplied in `aux_buffers`. A dangling index, an index inside the layout's\n"
     "  buffers, or a storage type the scheme refuses (`float32` for an affine scheme) raise\n"
     "  `InvalidDescriptorError`; parameter buffers too small raise `hurray.BufferError`.\n"
     "  A quantized tensor is not a NumPy or DLPack array (`UnsupportedError`, `BufferError`):\n"
     "  `dequantize()` gives its values.\n"
     "- `byte_offset=` places element `[0, …, 0]` inside buffer 0 (a strided tensor with a\n"
     "  negative stride needs it); 0 for sparse, block-paged and composite layouts.\n"
     "\n"
     "Inspection: `dtype`, `shape` (tuple, `None` for a dynamic dimension), `ndim`,\n"
     "`size` (`None` if a dimension is dynamic), `device`, `layout` (a `hurray.Layout`),\n"
     "`buffer_count`, `buffer_handles`, `descriptor`, `quantization`, `shard`, `statistics`\n"
     "(the classes the constructor takes, or `None`), `byte_offset`, `sync_mode`, `readonly`,\n"
     "and `T`. Sparse tensors add `nnz`, `values` and their index views (see\n"
     "the guide page Sparse tensors).\n"
     "\n"
     "Rebuilding a tensor from another's `layout`, `quantization`, `statistics`, `shard`,\n"
     "`byte_offset` and buffers gives an equal descriptor, for every layout `Tensor` accepts.\n"
     "The declared alignment is a policy, not the address (below), so it does not differ when\n"
     "the buffers moved: equal data gives equal descriptors, and every round trip (save/load,\n"
     "streams, pickle, Ray, Dask) gives back an equal descriptor.\n"
     "\n"
     "- `T` is a transposed view of a rank-2 tensor, without a copy (row-major becomes\n"
     "  column-major over the same buffer); any other rank raises `ValueError`.\n"
     "- `sync_mode` says when a consumer may touch the bytes (the buffer handle's sync mode,\n"
     "  `docs/spec/buffer-protocol.md` § Stream and Event Synchronisation):\n"
     "  `\"producer_synced\"`, ready as soon as they are handed over (the only mode for CPU\n"
     "  memory); `\"event\"`, ready once a device event passed along with the buffer (through "
     "the\n"
     "  C ABI) has fired; `\"consumer_stream\"`, the producer has ordered its work onto a device\n"
     "  stream the consumer named. It is read-only and no constructor accepts it: everything\n"
     "  this package builds is `\"producer_synced\"`; the other two arrive only with what is "
     "read\n"
     "  from elsewhere (a file, a stream, another producer's capsule).\n"
     "- `buffer(i)` returns a 1-D `uint8` `hurray.Tensor` over exactly the declared bytes of\n"
     "  buffer `i` of the buffer table, sharing its memory (the view keeps the tensor alive).\n"
     "  An index with no buffer raises `IndexError`. A buffer whose sync mode is not\n"
     "  producer-synced is refused with `UnsupportedError` naming the mode (as are\n"
     "  `__array__` and `to_torch`; `__dlpack__` raises the built-in `BufferError`).\n"
     "- Tensors are not hashable; they pickle as their descriptor and buffers, zero-copy with\n"
     "  protocol 5 (the guide page Across processes and machines).\n"
     "- `repr` shows the data (through NumPy) for a host tensor of a NumPy-representable type,\n"
     "  and metadata otherwise (see [Display](../guide/quickstart.md#printing-tensors)).\n"
     "\n"
     "**Copies.** `copy=` on every ingest entry point (`Tensor`, `from_numpy`, `from_dlpack`, "
     "`from_torch`,\n"
     "`asarray`) is decided per buffer:\n"
     "\n"
     "| `copy` | behaviour |\n"
     "|---|---|\n"
     "| `None` (default) | borrow each buffer whose address meets the 64-byte floor; copy the "
     "others into owned aligned memory |\n"
     "| `True` | copy every buffer |\n"
     "| `False` | never copy; a buffer below the floor raises `hurray.BufferError` naming the "
     "buffer index, its measured alignment and the floor |\n"
     "\n"
     "A copy is also needed, and refused under `copy=False`, for `bool` data coming from NumPy,\n"
     "PyTorch or DLPack (Hurray packs `bool` 8 per byte) and for non-contiguous sources."},
    {Py_tp_new, tensor_new},
    {Py_tp_repr, tensor_repr},
    {Py_tp_str, tensor_str},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {0, NULL},
};

int hrpy_tensor_init(PyObject *m, HrpyState *st) {
  st->core->TensorType = hrpy_tensor_type_new(m, tensor_slots);
  if (st->core->TensorType == NULL) return -1;
  if (PyModule_AddFunctions(m, tensor_module_methods) < 0) return -1;
  return PyModule_AddType(m, st->core->TensorType);
}

/* ---- strided gather --------------------------------------------------------- */
