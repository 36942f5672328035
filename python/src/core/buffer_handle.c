/*
 * core/buffer_handle.c - hurray.BufferHandle: one entry of a descriptor's buffer
 * table, as read-only metadata.
 *
 * Immutable, compared and hashed by value, not constructible from Python.
 * It holds no reference to its tensor or to any buffer (collecting handles
 * pins nothing); it shares the tensor's Device object, so
 * t.buffer_handles[i].device is t.device.
 */
#include "core/buffer_handle.h"

#include <string.h>

#include "core/device.h"
#include "util/args.h"
#include "util/bytes.h"
#include "core/state.h"

typedef struct {
  PyObject_HEAD
  uint32_t index;
  HurrayBufferHandle h;
  PyObject *device; /* the owning tensor's Device (strong; Devices hold nothing) */
} HrpyBufferHandle;

#define BH(o) ((HrpyBufferHandle *)(o))

PyObject *hrpy_buffer_handle_new(HrpyState *st, uint32_t index, const HurrayBufferHandle *h,
                                PyObject *device) {
  HrpyBufferHandle *b = PyObject_GC_New(HrpyBufferHandle, st->core->BufferHandleType);
  if (b == NULL) return NULL;
  b->index = index;
  b->h = *h;
  b->device = Py_NewRef(device);
  PyObject_GC_Track((PyObject *)b);
  return (PyObject *)b;
}

PyObject *hrpy_buffer_handles_tuple(HrpyState *st, const HurrayDescriptorFields *f,
                                   PyObject *device) {
  PyObject *t = PyTuple_New((Py_ssize_t)f->buffer_count);
  if (t == NULL) return NULL;
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    PyObject *h = hrpy_buffer_handle_new(st, i, &f->buffers[i], device);
    if (h == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, h);
  }
  return t;
}

static PyObject *bh_index(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(BH(s)->index);
}
static PyObject *bh_byte_size(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(BH(s)->h.byte_size);
}
static PyObject *bh_alignment(PyObject *s, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(BH(s)->h.alignment);
}
static PyObject *bh_device(PyObject *s, void *c) {
  (void)c;
  return Py_NewRef(BH(s)->device);
}
static PyObject *bh_sync_mode(PyObject *s, void *c) {
  (void)c;
  const char *n = hurray_sync_mode_name(BH(s)->h.sync_mode);
  if (n == NULL) return PyUnicode_FromFormat("unknown(0x%02x)", (unsigned)BH(s)->h.sync_mode);
  return PyUnicode_FromString(n);
}

static PyGetSetDef bh_getset[] = {
    {"index", bh_index, NULL, "Position in the descriptor's buffer table.", NULL},
    {"byte_size", bh_byte_size, NULL, "Declared size of the buffer in bytes.", NULL},
    {"alignment", bh_alignment, NULL,
     "Declared alignment (a power of two the buffer's address satisfies; 1 when empty).",
     NULL},
    {"device", bh_device, NULL, "The tensor's Device (the same object as tensor.device).", NULL},
    {"sync_mode", bh_sync_mode, NULL, "'producer_synced', 'event' or 'consumer_stream'.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyObject *bh_repr(PyObject *s) {
  HrpyBufferHandle *b = BH(s);
  const char *sm = hurray_sync_mode_name(b->h.sync_mode);
  return PyUnicode_FromFormat(
      "hurray.BufferHandle(index=%u, byte_size=%llu, alignment=%u, device=%R, "
      "sync_mode='%s')",
      (unsigned)b->index, (unsigned long long)b->h.byte_size, (unsigned)b->h.alignment,
      b->device, sm != NULL ? sm : "unknown");
}

static bool bh_equal(HrpyBufferHandle *x, HrpyBufferHandle *y, int *err) {
  *err = 0;
  if (x->index != y->index || x->h.byte_size != y->h.byte_size ||
      x->h.alignment != y->h.alignment || x->h.device_tag != y->h.device_tag ||
      x->h.sync_mode != y->h.sync_mode || x->h.memory_class != y->h.memory_class)
    return false;
  int r = PyObject_RichCompareBool(x->device, y->device, Py_EQ);
  if (r < 0) *err = 1;
  return r == 1;
}

static PyObject *bh_richcompare(PyObject *a, PyObject *b, int op) {
  if (!Py_IS_TYPE(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  int err;
  bool eq = bh_equal(BH(a), BH(b), &err);
  if (err) return NULL;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t bh_hash(PyObject *s) {
  HrpyBufferHandle *b = BH(s);
  Py_hash_t dh = PyObject_Hash(b->device);
  if (dh == -1) return -1;
  const uint64_t parts[5] = {b->index, b->h.byte_size, b->h.alignment,
                             ((uint64_t)b->h.device_tag << 16) |
                                 ((uint64_t)b->h.sync_mode << 8) | b->h.memory_class,
                             (uint64_t)dh};
  return hrpy_hash_fold(hrpy_hash_words(HRPY_HASH_SEED, parts, 5));
}

static int bh_traverse(PyObject *s, visitproc visit, void *arg) {
  Py_VISIT(BH(s)->device);
  Py_VISIT(Py_TYPE(s));
  return 0;
}

static int bh_clear(PyObject *s) {
  Py_CLEAR(BH(s)->device);
  return 0;
}

static void bh_dealloc(PyObject *s) {
  PyTypeObject *tp = Py_TYPE(s);
  PyObject_GC_UnTrack(s);
  (void)bh_clear(s);
  tp->tp_free(s);
  Py_DECREF(tp);
}

/* Pickling: (_rebuild_buffer_handle, (index, byte_size, alignment, device,
 * sync_mode tag, reserved)); the device carries the kind and memory class. */
static PyObject *bh_reduce(PyObject *s, PyObject *unused) {
  (void)unused;
  PyObject *mod = PyType_GetModule(Py_TYPE(s));
  if (mod == NULL) return NULL;
  PyObject *fn = PyObject_GetAttrString(mod, "_rebuild_buffer_handle");
  if (fn == NULL) return NULL;
  const HrpyBufferHandle *b = BH(s);
  return Py_BuildValue("(N(IKIOII))", fn, (unsigned)b->index, (unsigned long long)b->h.byte_size,
                       (unsigned)b->h.alignment, b->device, (unsigned)b->h.sync_mode,
                       (unsigned)b->h.reserved);
}

static PyMethodDef bh_methods[] = {{"__reduce__", bh_reduce, METH_NOARGS, NULL},
                                   {NULL, NULL, 0, NULL}};

/* _rebuild_buffer_handle(index, byte_size, alignment, device, sync_mode, reserved, /). */
static PyObject *m_rebuild_buffer_handle(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                         PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"index", "byte_size", "alignment", "device",
                                      "sync_mode", "reserved", NULL};
  const char *ctx = "_rebuild_buffer_handle";
  PyObject *a[6];
  if (hrpy_parse_args(ctx, args, nargs, kwnames, names, 6, 6, a) < 0) return NULL;
  uint32_t index, alignment;
  uint64_t size, sync, reserved;
  if (hrpy_arg_u32(st, a[0], ctx, "index", &index) < 0 ||
      hrpy_arg_u64(st, a[1], ctx, "byte_size", UINT64_MAX, &size) < 0 ||
      hrpy_arg_u32(st, a[2], ctx, "alignment", &alignment) < 0 ||
      hrpy_arg_u64(st, a[4], ctx, "sync_mode", 255, &sync) < 0 ||
      hrpy_arg_u64(st, a[5], ctx, "reserved", 255, &reserved) < 0)
    return NULL;
  if (!hrpy_device_check(st, a[3]))
    return PyErr_Format(PyExc_TypeError, "%s: device must be a hurray.Device, not %.100s", ctx,
                        Py_TYPE(a[3])->tp_name);
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = size;
  h.alignment = alignment;
  h.device_tag = hrpy_device_tag(a[3]);
  h.memory_class = hrpy_device_memory_class(a[3]);
  h.sync_mode = (uint8_t)sync;
  h.reserved = (uint8_t)reserved;
  return hrpy_buffer_handle_new(st, index, &h, a[3]);
}

static PyMethodDef bh_module_methods[] = {
    {"_rebuild_buffer_handle", (PyCFunction)(void (*)(void))m_rebuild_buffer_handle,
     METH_FASTCALL | METH_KEYWORDS,
     "_rebuild_buffer_handle(index, byte_size, alignment, device, sync_mode, reserved, /)\n--"
     "\n\nThe BufferHandle a pickle describes (what BufferHandle.__reduce__ names)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot bh_slots[] = {
    {Py_tp_methods, bh_methods},
    {Py_tp_doc,
     "One entry of a tensor's buffer table (read-only metadata).\n"
     "\n"
     "`Tensor.buffer_handles` is a tuple with one `hurray.BufferHandle` per buffer, in\n"
     "descriptor order (`len(t.buffer_handles) == t.buffer_count`), available for every device.\n"
     "A handle is immutable, compares and hashes by value, cannot be constructed, and holds no\n"
     "reference to its tensor or buffer. Properties: `index`, `byte_size`, `alignment`,\n"
     "`device` (the same object as `tensor.device`), `sync_mode`.\n"
     "\n"
     "The format requires every non-empty buffer to start at an address that is a multiple of\n"
     "64 bytes (`MIN_BUFFER_ALIGNMENT`, called *the floor* below;\n"
     "`docs/spec/buffer-protocol.md` § Minimum Alignment); a handle's `alignment` declares a "
     "power\n"
     "of two that the buffer's address is a multiple of. It states what the producer\n"
     "guarantees, never the accident of an address, so the same data from two allocations\n"
     "gives byte-identical descriptors, files, streams and pickles (docs/internals/decisions.md § "
     "What a buffer declares):\n"
     "\n"
     "- an empty buffer declares 1;\n"
     "- every other buffer this package builds declares 64, owned or borrowed (a borrowed\n"
     "  address below the floor is copied first, see `copy=`); a page-aligned `mmap` declares 64\n"
     "  as well, and `data_ptr()` still gives the true address;\n"
     "- a tensor read back (`load`, `open`, a stream, unpickling) keeps the alignment its\n"
     "  descriptor declares, and its bytes sit at an address that satisfies it (copied into\n"
     "  such memory in the rare case they would not; a promise above a page that a mapping\n"
     "  cannot keep is replaced by the true value)."},
    {Py_tp_repr, bh_repr},
    {Py_tp_hash, bh_hash},
    {Py_tp_richcompare, bh_richcompare},
    {Py_tp_getset, bh_getset},
    {Py_tp_traverse, bh_traverse},
    {Py_tp_clear, bh_clear},
    {Py_tp_dealloc, bh_dealloc},
    {0, NULL},
};

static PyType_Spec bh_spec = {
    .name = "hurray.BufferHandle",
    .basicsize = sizeof(HrpyBufferHandle),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = bh_slots,
};

int hrpy_buffer_handle_init(PyObject *m, HrpyState *st) {
  st->core->BufferHandleType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &bh_spec, NULL);
  if (st->core->BufferHandleType == NULL) return -1;
  if (PyModule_AddFunctions(m, bh_module_methods) < 0) return -1;
  return PyModule_AddType(m, st->core->BufferHandleType);
}
