/*
 * types/descriptor.c - hurray.Descriptor: what a tensor declares, without data.
 *
 * Obtained from Tensor.descriptor or Descriptor.decode(bytes); never
 * constructed from Python. Wraps an immutable HurrayDescriptor from the C
 * codec; encode() gives the exact wire bytes and decode() recovers an equal
 * descriptor (trailing bytes after descriptor_length are ignored).
 *
 * The getters of the optional sections return the classes Tensor returns
 * (layout.c, quant.c, sections.c).
 */
#include "types/descriptor.h"

#include "core/buffer_handle.h"
#include "core/device.h"
#include "core/dtype.h"
#include "types/layout.h"
#include "types/quant.h"
#include "types/sections.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"
#include "types/state.h"

typedef struct {
  PyObject_HEAD
  HurrayDescriptor *desc;   /* owned */
  HurrayDescriptorFields f; /* borrowed views into desc */
  PyObject *device;         /* Device of the buffers, or Py_None (no buffers) */
  PyObject *handles;        /* cached tuple, or NULL */
} HrpyDescriptor;

#define DS(o) ((HrpyDescriptor *)(o))

/* ---- the class ------------------------------------------------------------- */

const HurrayDescriptor *hrpy_descriptor_get(HrpyState *st, PyObject *o) {
  return Py_IS_TYPE(o, st->types->DescriptorType) ? DS(o)->desc : NULL;
}

PyObject *hrpy_descriptor_wrap(HrpyState *st, HurrayDescriptor *desc, PyObject *device) {
  HrpyDescriptor *d = PyObject_GC_New(HrpyDescriptor, st->types->DescriptorType);
  if (d == NULL) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(desc));
    return NULL;
  }
  d->desc = desc;
  d->handles = NULL;
  d->device = NULL;
  HurrayStatus s = hurray_descriptor_fields(desc, &d->f);
  if (s != HURRAY_OK) {
    memset(&d->f, 0, sizeof d->f);
    PyObject_GC_Track((PyObject *)d);
    Py_DECREF(d);
    return hrpy_raise_status(st, s, NULL, "Descriptor");
  }
  if (device != NULL) {
    d->device = Py_NewRef(device);
  } else if (d->f.buffer_count > 0) {
    d->device = hrpy_device_new(st, d->f.buffers[0].device_tag, d->f.buffers[0].memory_class, 0);
  } else {
    d->device = Py_NewRef(Py_None);
  }
  PyObject_GC_Track((PyObject *)d);
  if (d->device == NULL) {
    Py_DECREF(d);
    return NULL;
  }
  return (PyObject *)d;
}

static PyObject *ds_dtype(PyObject *s, void *c) {
  (void)c;
  return hrpy_dtype_relayed(hrpy_state_of(s), DS(s)->f.type_tag);
}
PyObject *hrpy_field_get(HrpyState *st, const HurrayDescriptorFields *f, void *which) {
  switch ((intptr_t)which) {
    case HRPY_FIELD_SHAPE: return hrpy_shape_tuple(f->rank, f->shape);
    case HRPY_FIELD_NDIM: return PyLong_FromUnsignedLong(f->rank);
    case HRPY_FIELD_SIZE: return hrpy_size_object(f->rank, f->shape);
    case HRPY_FIELD_LAYOUT: return hrpy_layout_object(st, f);
    case HRPY_FIELD_BUFFER_COUNT: return PyLong_FromUnsignedLong(f->buffer_count);
    case HRPY_FIELD_QUANTIZATION: return hrpy_quantization_object(st, f);
    case HRPY_FIELD_SHARD: return hrpy_shard_object(st, f);
    case HRPY_FIELD_STATISTICS: return hrpy_statistics_object(st, f);
    default: return PyLong_FromUnsignedLongLong(f->byte_offset);
  }
}
static PyObject *ds_field(PyObject *s, void *which) {
  return hrpy_field_get(hrpy_state_of(s), &DS(s)->f, which);
}
static PyObject *ds_buffer_handles(PyObject *s, void *c) {
  (void)c;
  HrpyDescriptor *d = DS(s);
  PyObject *h = hrpy_peek(&d->handles);
  if (h == NULL)
    h = hrpy_publish(&d->handles, hrpy_buffer_handles_tuple(hrpy_state_of(s), &d->f, d->device));
  return Py_XNewRef(h);
}
static PyObject *ds_device(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(DS(s)->device);
}
static PyObject *ds_version(PyObject *s, void *c) {
  (void)c;
  return Py_BuildValue("(ii)", (int)DS(s)->f.version_major, (int)DS(s)->f.version_minor);
}
static PyObject *ds_encoded_len(PyObject *s, void *c) {
  (void)c;
  uint64_t n = 0;
  HurrayStatus st = hurray_descriptor_encoded_len(DS(s)->desc, &n);
  if (st != HURRAY_OK) return hrpy_raise_status(hrpy_state_of(s), st, NULL, "encoded_len");
  return PyLong_FromUnsignedLongLong(n);
}

static PyGetSetDef ds_getset[] = {
    {"dtype", ds_dtype, NULL, "Element type (hurray.Dtype).", NULL},
    HRPY_FIELD_GETSETS(ds_field),
    {"buffer_handles", ds_buffer_handles, NULL, "Tuple of hurray.BufferHandle, one per buffer.", NULL},
    {"device", ds_device, NULL,
     "Device of the buffers (None when there are none, as for a composite "
     "head); a decoded descriptor builds it from its buffer table, with device id 0.",
     NULL},
    {"version", ds_version, NULL, "(major, minor) format version.", NULL},
    {"encoded_len", ds_encoded_len, NULL, "len(self.encode()).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyObject *hrpy_descriptor_bytes(HrpyState *st, const HurrayDescriptor *d, bool *permissive,
                               const char *context) {
  uint64_t n = 0;
  HurrayStatus rc = hurray_descriptor_encoded_len(d, &n);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, NULL, context);
  if (n > (uint64_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
  if (b == NULL) return NULL;
  uint64_t written = 0;
  rc = hurray_descriptor_encode(d, (uint8_t *)PyBytes_AS_STRING(b), n, &written);
  if (rc != HURRAY_OK || written != n) {
    Py_DECREF(b);
    return hrpy_raise_status(st, rc != HURRAY_OK ? rc : HURRAY_ERR_INTERNAL, NULL, context);
  }
  if (permissive != NULL) {
    HurrayDescriptor *probe = NULL;
    *permissive = hurray_descriptor_decode_ex((const uint8_t *)PyBytes_AS_STRING(b),
                                              (uintptr_t)n, HURRAY_DECODE_STRICT, &probe,
                                              NULL) != HURRAY_OK;
    if (probe != NULL) HRPY_CANNOT_FAIL(hurray_descriptor_destroy(probe));
  }
  return b;
}

static PyObject *ds_encode(PyObject *s, PyObject *unused) {
  (void)unused;
  return hrpy_descriptor_bytes(hrpy_state_of(s), DS(s)->desc, NULL, "encode");
}

/* Pickling: (_rebuild_descriptor, (bytes, permissive, device or None)). */
static PyObject *ds_reduce(PyObject *s, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of(s);
  PyObject *mod = PyType_GetModule(Py_TYPE(s));
  if (mod == NULL) return NULL;
  PyObject *fn = PyObject_GetAttrString(mod, "_rebuild_descriptor");
  if (fn == NULL) return NULL;
  bool permissive = false;
  PyObject *b = hrpy_descriptor_bytes(st, DS(s)->desc, &permissive, "pickle");
  if (b == NULL) {
    Py_DECREF(fn);
    return NULL;
  }
  return Py_BuildValue("(N(NOO))", fn, b, permissive ? Py_True : Py_False, DS(s)->device);
}

/* The Descriptor the bytes-like `data` holds (its bytes after it ignored),
 * on `device` (borrowed, NULL: from its buffer table); `ctx` names the call. */
static PyObject *decode_data(HrpyState *st, PyObject *data, bool permissive, PyObject *device,
                             const char *ctx) {
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
  HurrayDescriptor *d = NULL;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_descriptor_decode_ex(
      (const uint8_t *)view.buf, (uintptr_t)view.len,
      permissive ? HURRAY_DECODE_PERMISSIVE : HURRAY_DECODE_STRICT, &d, &err);
  PyBuffer_Release(&view);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, ctx);
  return hrpy_descriptor_wrap(st, d, device);
}

/* _rebuild_descriptor(data, permissive, device, /): what Descriptor pickles to. */
static PyObject *m_rebuild_descriptor(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"data", "permissive", "device", NULL};
  PyObject *a[3];
  if (hrpy_parse_args("_rebuild_descriptor", args, nargs, kwnames, names, 3, 3, a) < 0)
    return NULL;
  bool permissive;
  if (hrpy_arg_flag(a[1], false, &permissive) < 0) return NULL;
  if (a[2] != Py_None && !hrpy_device_check(st, a[2]))
    return PyErr_Format(PyExc_TypeError,
                        "_rebuild_descriptor: device must be a hurray.Device or None, not %.100s",
                        Py_TYPE(a[2])->tp_name);
  return decode_data(st, a[0], permissive, a[2] != Py_None ? a[2] : NULL, "unpickle");
}

static PyMethodDef ds_module_methods[] = {
    {"_rebuild_descriptor", (PyCFunction)(void (*)(void))m_rebuild_descriptor,
     METH_FASTCALL | METH_KEYWORDS,
     "_rebuild_descriptor(data, permissive, device, /)\n--\n\nThe Descriptor a pickle "
     "describes (what Descriptor.__reduce__ names)."},
    {NULL, NULL, 0, NULL},
};

static PyObject *ds_decode(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_type((PyTypeObject *)cls);
  static const char *const names[] = {"data", "permissive", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("decode", args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  bool permissive;
  if (hrpy_arg_flag(a[1], false, &permissive) < 0) return NULL;
  return decode_data(st, a[0], permissive, NULL, "Descriptor.decode");
}

static PyMethodDef ds_methods[] = {
    {"encode", ds_encode, METH_NOARGS,
     "encode(self)\n--\n\nThe descriptor's exact wire bytes."},
    {"decode", (PyCFunction)(void (*)(void))ds_decode,
     METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
     "decode(data, /, *, permissive=False)\n--\n\n"
     "Decode a descriptor from any bytes-like object. The bytes after it are ignored (in a "
     "stream, its data follows). Returns a Descriptor, never a Tensor (a descriptor has no "
     "buffers). `permissive=True` keeps unknown and reserved tags (for relays)."},
    {"__reduce__", ds_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyObject *ds_richcompare(PyObject *a, PyObject *b, int op) {
  if (!Py_IS_TYPE(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  bool eq = hurray_descriptor_equal(DS(a)->desc, DS(b)->desc);
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t ds_hash(PyObject *s) {
  PyObject *b = ds_encode(s, NULL);
  if (b == NULL) return -1;
  Py_hash_t h = PyObject_Hash(b);
  Py_DECREF(b);
  return h;
}

static PyObject *ds_repr(PyObject *s) {
  HrpyDescriptor *d = DS(s);
  PyObject *shape = hrpy_shape_tuple(d->f.rank, d->f.shape);
  if (shape == NULL) return NULL;
  const HurrayDtypeInfo *i = hurray_dtype_info(d->f.type_tag);
  PyObject *r = PyUnicode_FromFormat(
      "hurray.Descriptor(dtype=%s, shape=%R, layout=%s, buffer_count=%u)",
      i != NULL ? i->name : "extension", shape, hrpy_layout_name(d->f.layout.tag),
      (unsigned)d->f.buffer_count);
  Py_DECREF(shape);
  return r;
}

static int ds_traverse(PyObject *s, visitproc visit, void *arg) {
  Py_VISIT(DS(s)->device);
  Py_VISIT(DS(s)->handles);
  Py_VISIT(Py_TYPE(s));
  return 0;
}

static int ds_clear(PyObject *s) {
  Py_CLEAR(DS(s)->device);
  Py_CLEAR(DS(s)->handles);
  return 0;
}

static void ds_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  PyObject_GC_UnTrack(s);
  (void)ds_clear(s);
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(DS(s)->desc));
  tp->tp_free(s);
  Py_DECREF(tp);
}

static PyType_Slot ds_slots[] = {
    {Py_tp_doc,
     "What a tensor declares, without its data.\n\nObtained from `Tensor.descriptor` or "
     "`Descriptor.decode(data)`, never constructed. Its properties agree with the tensor's; "
     "`layout`, `quantization`, `statistics` and `shard` return the classes the tensor's "
     "getters return, so a decoded descriptor's sections can build a tensor. Compared and "
     "hashed by value, that is by its encoding (`device_id` is not part of it)."},
    {Py_tp_repr, ds_repr},
    {Py_tp_hash, ds_hash},
    {Py_tp_richcompare, ds_richcompare},
    {Py_tp_getset, ds_getset},
    {Py_tp_methods, ds_methods},
    {Py_tp_traverse, ds_traverse},
    {Py_tp_clear, ds_clear},
    {Py_tp_dealloc, ds_dealloc},
    {0, NULL},
};

static PyType_Spec ds_spec = {
    .name = "hurray.Descriptor",
    .basicsize = sizeof(HrpyDescriptor),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = ds_slots,
};

int hrpy_descriptor_init(PyObject *m, HrpyState *st) {
  st->types->DescriptorType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &ds_spec, NULL);
  if (st->types->DescriptorType == NULL) return -1;
  if (PyModule_AddFunctions(m, ds_module_methods) < 0) return -1;
  return PyModule_AddType(m, st->types->DescriptorType);
}
