/*
 * interop/pickle.c - pickling hurray.Tensor (interop/pickle.h).
 *
 * Reduce: (hurray._hurray._rebuild_tensor, (descriptor bytes, buffers,
 * device, permissive, copy)). The descriptor says everything the tensor is;
 * the device travels beside it because a buffer table names the device kind
 * and memory class but not the id. Protocol 5: each buffer is a
 * pickle.PickleBuffer over a small exporter of the tensor's own memory
 * (read-only exactly when the tensor's buffer is), so a pickler with a
 * buffer_callback sends it out of band and copies nothing; without one the
 * pickler writes the bytes in band itself. Protocols 0-4: each buffer is
 * copied into a bytes object; the receiver copies a small one again into
 * aligned memory of its own (copy=True), so the tensor it gets is always
 * writable. A buffer of PAD_MIN bytes or more travels with PAD_SLACK bytes of
 * slack, its data starting at byte PAD_AT of the bytes object (the sixth
 * argument, `pads`, says so per buffer): the receiver then moves the data
 * inside the bytes object the unpickler made for it to the first 64-byte
 * boundary, usually not at all, and keeps that object as the buffer's memory,
 * writable, as NumPy keeps the bytes of an array it unpickles. No second copy
 * into fresh memory: what Python's multiprocessing (protocol 4 before 3.14)
 * pays for a large tensor is then what it pays for a NumPy array.
 *
 * Rebuild: the buffers given (PickleBuffer, memoryview, bytes, whatever the
 * unpickler hands over) are acquired with the usual copy policy: borrowed
 * when aligned to the 64-byte floor, copied into aligned memory otherwise.
 * Device memory never reaches a pickle: only buffers this process can read
 * are exported (UnsupportedError otherwise).
 */
#include "interop/pickle.h"

#include <string.h>

#include "core/buffer.h"
#include "core/device.h"
#include "core/tensor.h"
#include "types/descriptor.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "interop/state.h"

/* ---- the buffer exporter ----------------------------------------------------- */

/* Exports buffer `index` of `tensor` (strong reference) through the buffer
 * protocol: exactly its declared bytes, read-only when the tensor's buffer
 * is. Only ever handed to pickle.PickleBuffer. */
typedef struct {
  PyObject_HEAD
  PyObject *tensor;
  uint32_t index;
} HrpyExporter;

#define EX(o) ((HrpyExporter *)(o))

static int exporter_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  static char empty[1];
  const HrpyBuffer *b = hrpy_tensor_buffer(EX(self)->tensor, EX(self)->index);
  uint64_t size = hrpy_tensor_fields(EX(self)->tensor)->buffers[EX(self)->index].byte_size;
  if (size > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_SetString(PyExc_BufferError, "pickle: a buffer larger than the address space");
    return -1;
  }
  void *data = b->data != NULL ? (void *)b->data : (void *)empty;
  return PyBuffer_FillInfo(view, self, data, (Py_ssize_t)size, b->readonly ? 1 : 0, flags);
}

static int exporter_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(EX(self)->tensor);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

static int exporter_clear(PyObject *self) {
  Py_CLEAR(EX(self)->tensor);
  return 0;
}

static void exporter_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  (void)exporter_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static PyType_Slot exporter_slots[] = {
    {Py_tp_doc, "One buffer of a hurray.Tensor, exported for pickle.PickleBuffer (internal)."},
    {Py_bf_getbuffer, exporter_getbuffer},
    {Py_tp_traverse, exporter_traverse},
    {Py_tp_clear, exporter_clear},
    {Py_tp_dealloc, exporter_dealloc},
    {0, NULL},
};

static PyType_Spec exporter_spec = {
    .name = "hurray._TensorBuffer",
    .basicsize = sizeof(HrpyExporter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = exporter_slots,
};

/* A pickle.PickleBuffer over buffer i of t (new reference). */
static PyObject *pickle_buffer(HrpyState *st, PyObject *t, uint32_t i) {
  HrpyExporter *e = PyObject_GC_New(HrpyExporter, st->interop->BufferExporterType);
  if (e == NULL) return NULL;
  e->tensor = Py_NewRef(t);
  e->index = i;
  PyObject_GC_Track((PyObject *)e);
  PyObject *pb = PyPickleBuffer_FromObject((PyObject *)e);
  Py_DECREF(e);
  return pb;
}

/* ---- in-band buffers with slack --------------------------------------------- */

/* Buffers of PAD_MIN bytes or more go in band with PAD_SLACK bytes of slack.
 * PAD_AT: where the sender puts the data, chosen so that no move is needed in
 * the usual receiver: CPython's bytes data start 32 bytes into the object and
 * glibc places a large block 16 bytes past a page, so byte 16 of the data is on
 * a 64-byte boundary. Any other receiver moves the data by under 64 bytes. */
#define PAD_MIN ((uint64_t)64 << 10)
#define PAD_SLACK 64u
#define PAD_AT 16u

static PyObject *padded_bytes(const uint8_t *data, uint64_t size) {
  if (size > (uint64_t)PY_SSIZE_T_MAX - PAD_SLACK) return PyErr_NoMemory();
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(size + PAD_SLACK));
  if (b == NULL) return NULL;
  char *p = PyBytes_AS_STRING(b);
  memset(p, 0, PAD_AT);
  memset(p + PAD_AT + size, 0, PAD_SLACK - PAD_AT);
  Py_BEGIN_ALLOW_THREADS memcpy(p + PAD_AT, data, (size_t)size);
  Py_END_ALLOW_THREADS
  return b;
}

/* Buffer `index` from a padded bytes object `obj` (the unpickler's, used by
 * nobody else): checks it is bytes of size + PAD_SLACK with the data at `at`,
 * moves the data to the first 64-byte boundary inside it and borrows it,
 * writable. */
static int take_padded(HrpyState *st, PyObject *obj, uint32_t index, uint64_t size, long at,
                       const char *ctx, HrpyBuffer *out) {
  memset(out, 0, sizeof *out);
  if (!PyBytes_CheckExact(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: buffer %u sent with slack must be bytes, not %.100s",
                 ctx, (unsigned)index, Py_TYPE(obj)->tp_name);
    return -1;
  }
  uint64_t len = (uint64_t)PyBytes_GET_SIZE(obj);
  if (size > UINT64_MAX - PAD_SLACK || len != size + PAD_SLACK || at < 0 ||
      at > (long)PAD_SLACK) {
    hrpy_raise(st->BufferError,
               "%s: buffer %u: %llu bytes with the data at byte %ld, where the descriptor "
               "declares %llu bytes of data with %u bytes of slack",
               ctx, (unsigned)index, (unsigned long long)len, at, (unsigned long long)size,
               PAD_SLACK);
    return -1;
  }
  uint8_t *base = (uint8_t *)PyBytes_AS_STRING(obj);
  size_t k = (size_t)((HURRAY_MIN_BUFFER_ALIGNMENT - ((uintptr_t)base % HURRAY_MIN_BUFFER_ALIGNMENT)) %
                      HURRAY_MIN_BUFFER_ALIGNMENT);
  if (k != (size_t)at && size > 0) {
    Py_BEGIN_ALLOW_THREADS memmove(base + k, base + at, (size_t)size);
    Py_END_ALLOW_THREADS
  }
  out->data = base + k;
  out->size = size;
  out->owner = Py_NewRef(obj);
  out->readonly = false;
  out->host = true;
  return 0;
}

/* ---- reduce ------------------------------------------------------------------- */

PyObject *hrpy_tensor_reduce_ex(PyObject *self, PyObject *protocol) {
  HrpyState *st = hrpy_state_of(self);
  long proto = PyLong_AsLong(protocol);
  if (proto == -1 && PyErr_Occurred()) return NULL;
  PyObject *m = PyType_GetModule(Py_TYPE(self)); /* borrowed */
  if (m == NULL) return NULL;
  PyObject *dict = PyModule_GetDict(m); /* borrowed */
  /* hurray.open(..., pickle="reference") installs a hook that reduces the
   * tensors of such a file to a reference to it (hurray/_pickling.py). */
  PyObject *hook = PyDict_GetItemString(dict, "_pickle_reference_hook"); /* borrowed */
  if (hook != NULL && hook != Py_None) {
    Py_INCREF(hook); /* the call may replace the module attribute */
    PyObject *r = PyObject_CallFunction(hook, "Ol", self, proto);
    Py_DECREF(hook);
    if (r == NULL || r != Py_None) return r;
    Py_DECREF(r);
  }
  PyObject *rebuild = PyDict_GetItemString(dict, "_rebuild_tensor");
  if (rebuild == NULL)
    return PyErr_Format(PyExc_RuntimeError, "hurray._hurray._rebuild_tensor is missing");
  if (hrpy_tensor_check_host(st, self, "pickle") < 0) return NULL;
  const HurrayDescriptor *d = hrpy_tensor_desc(st, self);
  if (d == NULL) return NULL;
  bool permissive = false;
  PyObject *bytes = hrpy_descriptor_bytes(st, d, &permissive, "pickle");
  if (bytes == NULL) return NULL;
  uint32_t n = hrpy_tensor_nbuf(self);
  const HurrayDescriptorFields *f = hrpy_tensor_fields(self);
  PyObject *bufs = PyTuple_New((Py_ssize_t)n);
  PyObject *pads = NULL; /* protocols 0-4 with a large buffer: where each one's data is */
  for (uint32_t i = 0; bufs != NULL && i < n; i++) {
    PyObject *b;
    if (proto >= 5) {
      b = pickle_buffer(st, self, i);
    } else {
      const HrpyBuffer *hb = hrpy_tensor_buffer(self, i);
      uint64_t size = f->buffers[i].byte_size;
      if (size >= PAD_MIN) {
        if (pads == NULL) {
          pads = PyTuple_New((Py_ssize_t)n);
          for (uint32_t j = 0; pads != NULL && j < n; j++) {
            PyObject *none_yet = PyLong_FromLong(-1);
            if (none_yet == NULL) Py_CLEAR(pads);
            else PyTuple_SET_ITEM(pads, (Py_ssize_t)j, none_yet);
          }
        }
        PyObject *at = pads != NULL ? PyLong_FromLong((long)PAD_AT) : NULL;
        if (at != NULL) {
          Py_SETREF(((PyTupleObject *)pads)->ob_item[i], at);
          b = padded_bytes(hb->data, size);
        } else {
          b = NULL;
        }
      } else {
        b = size > (uint64_t)PY_SSIZE_T_MAX
                ? PyErr_NoMemory()
                : PyBytes_FromStringAndSize(size > 0 ? (const char *)hb->data : NULL,
                                            (Py_ssize_t)size);
      }
    }
    if (b == NULL) {
      Py_CLEAR(bufs);
      break;
    }
    PyTuple_SET_ITEM(bufs, (Py_ssize_t)i, b);
  }
  if (bufs == NULL) {
    Py_XDECREF(pads);
    Py_DECREF(bytes);
    return NULL;
  }
  if (pads != NULL)
    return Py_BuildValue("O(NNOOON)", rebuild, bytes, bufs, hrpy_tensor_device(self),
                         permissive ? Py_True : Py_False, Py_True, pads);
  return Py_BuildValue("O(NNOOO)", rebuild, bytes, bufs, hrpy_tensor_device(self),
                       permissive ? Py_True : Py_False, proto >= 5 ? Py_None : Py_True);
}

PyObject *hrpy_tensor_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  PyObject *two = PyLong_FromLong(2);
  if (two == NULL) return NULL;
  PyObject *r = hrpy_tensor_reduce_ex(self, two);
  Py_DECREF(two);
  return r;
}

/* ---- rebuild ------------------------------------------------------------------ */

/* _rebuild_tensor(descriptor, buffers, device=None, permissive=False, copy=None,
 * pads=None): a Tensor from encoded descriptor bytes and one buffer-protocol
 * object per entry of its buffer table (the reconstruction of a pickled
 * tensor). pads: None, or per buffer -1 (an ordinary buffer, under the copy
 * policy) or where its data starts in a bytes object with PAD_SLACK bytes of
 * slack (take_padded). */
static PyObject *m_rebuild_tensor(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"descriptor", "buffers", "device", "permissive", "copy",
                                      "pads", NULL};
  const char *ctx = "unpickle";
  PyObject *a[6];
  if (hrpy_parse_args("_rebuild_tensor", args, nargs, kwnames, names, 6, 2, a) < 0) return NULL;
  PyObject *pads = a[5] != NULL && a[5] != Py_None ? a[5] : NULL;
  if (pads != NULL && !PyTuple_Check(pads))
    return PyErr_Format(PyExc_TypeError, "_rebuild_tensor: pads must be a tuple, not %.100s",
                        Py_TYPE(pads)->tp_name);
  PyObject *device = a[2] != NULL && a[2] != Py_None ? a[2] : NULL;
  if (device != NULL && !hrpy_device_check(st, device))
    return PyErr_Format(PyExc_TypeError, "_rebuild_tensor: device must be a hurray.Device, not %.100s",
                        Py_TYPE(device)->tp_name);
  bool permissive;
  int copy;
  if (hrpy_arg_flag(a[3], false, &permissive) < 0) return NULL;
  if (hrpy_parse_copy(a[4] != NULL ? a[4] : Py_None, &copy) < 0) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(a[0], &view, PyBUF_SIMPLE) < 0) return NULL;
  HurrayDescriptor *d = NULL;
  uint32_t options = 0;
  int rc = hrpy_decode_descriptor(st, (const uint8_t *)view.buf, (uint64_t)view.len, permissive,
                                  &d, &options, ctx);
  PyBuffer_Release(&view);
  if (rc < 0) return NULL;
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(d, &f));
  options |= hurray_descriptor_relay_options(&f);
  PyObject *seq = PySequence_Fast(a[1], "_rebuild_tensor: buffers must be a sequence");
  if (seq == NULL) {
    HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
    return NULL;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject *r = NULL;
  HrpyBuffer *bufs = NULL;
  if (n > (Py_ssize_t)HURRAY_MAX_BUFFERS) {
    hrpy_raise(st->InvalidDescriptorError, "%s: too many buffers (%zd)", ctx, n);
    goto done;
  }
  bufs = PyMem_Calloc(n > 0 ? (size_t)n : 1u, sizeof(HrpyBuffer));
  if (bufs == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if (pads != NULL && (PyTuple_GET_SIZE(pads) != n || n != (Py_ssize_t)f.buffer_count)) {
    hrpy_raise(st->InvalidDescriptorError,
               "%s: %zd buffers and %zd pads for a descriptor of %u buffers", ctx, n,
               PyTuple_GET_SIZE(pads), (unsigned)f.buffer_count);
    goto done;
  }
  Py_ssize_t got = 0;
  for (; got < n; got++) {
    PyObject *obj = PySequence_Fast_GET_ITEM(seq, got);
    long at = -1;
    if (pads != NULL) {
      PyObject *pa = PyTuple_GET_ITEM(pads, got);
      at = PyLong_Check(pa) ? PyLong_AsLong(pa) : -2;
      if (at == -2 || (at == -1 && PyErr_Occurred()) || at < -1) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
          PyErr_Clear();
          PyErr_Format(PyExc_ValueError,
                       "%s: pads[%zd] must be -1 or a byte position in the slack, not %R", ctx,
                       got, pa);
        }
        break;
      }
    }
    if (at >= 0) {
      if (take_padded(st, obj, (uint32_t)got, f.buffers[got].byte_size, at, ctx, &bufs[got]) < 0)
        break;
    } else if (hrpy_buffer_acquire(st, obj, (uint32_t)got, copy, ctx, &bufs[got]) < 0) {
      break;
    }
  }
  if (got == n) {
    r = hrpy_tensor_from_descriptor_on(st, d, device, bufs, (uint32_t)n, options, ctx);
  } else {
    for (Py_ssize_t i = 0; i < got; i++) hrpy_buffer_release(&bufs[i]);
  }
done:
  PyMem_Free(bufs);
  Py_DECREF(seq);
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(d));
  return r;
}


/* ---- realigning received frames (hurray/_dask.py) --------------------------- */

/* _buffer_address(obj) -> (address, nbytes, readonly) of a contiguous buffer:
 * how hurray/_dask.py tells whether two frames Dask received lie end to end
 * in one block of memory. Nothing is kept: the numbers are only compared. */
static PyObject *m_buffer_address(PyObject *m, PyObject *obj) {
  (void)m;
  Py_buffer v;
  if (PyObject_GetBuffer(obj, &v, PyBUF_SIMPLE) < 0) return NULL;
  PyObject *r = Py_BuildValue("(KnO)", (unsigned long long)(uintptr_t)v.buf, v.len,
                              v.readonly ? Py_True : Py_False);
  PyBuffer_Release(&v);
  return r;
}

/* _move_within(obj, dst, src, nbytes): memmove inside one writable buffer,
 * both ranges checked against its length (overlap allowed). */
static PyObject *m_move_within(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  (void)m;
  if (nargs != 4)
    return PyErr_Format(PyExc_TypeError, "_move_within(obj, dst, src, nbytes) takes 4 arguments");
  uint64_t at[3];
  static const char *const names[3] = {"dst", "src", "nbytes"};
  for (int i = 0; i < 3; i++)
    if (hrpy_arg_uint_as(PyExc_ValueError, args[i + 1], "_move_within", names[i], PY_SSIZE_T_MAX,
                         &at[i]) < 0)
      return NULL;
  Py_buffer v;
  if (PyObject_GetBuffer(args[0], &v, PyBUF_SIMPLE | PyBUF_WRITABLE) < 0) return NULL;
  uint64_t len = (uint64_t)v.len, n = at[2];
  if (n > len || at[0] > len - n || at[1] > len - n) {
    PyBuffer_Release(&v);
    return PyErr_Format(PyExc_ValueError,
                        "_move_within: %llu bytes from %llu to %llu do not fit a buffer of %llu",
                        (unsigned long long)n, (unsigned long long)at[1],
                        (unsigned long long)at[0], (unsigned long long)len);
  }
  /* the library's move (hurray_move_within: two threads for a large one) */
  if (n >= HRPY_NOGIL_COPY_BYTES) {
    Py_BEGIN_ALLOW_THREADS hurray_move_within(v.buf, (size_t)at[0], (size_t)at[1], (size_t)n);
    Py_END_ALLOW_THREADS
  } else {
    hurray_move_within(v.buf, (size_t)at[0], (size_t)at[1], (size_t)n);
  }
  PyBuffer_Release(&v);
  Py_RETURN_NONE;
}

static PyMethodDef pickle_module_methods[] = {
    {"_rebuild_tensor", (PyCFunction)(void (*)(void))m_rebuild_tensor,
     METH_FASTCALL | METH_KEYWORDS,
     "_rebuild_tensor(descriptor, buffers, device=None, permissive=False, copy=None)\n--\n\n"
     "The Tensor a pickle describes: encoded descriptor bytes and one buffer per entry of "
     "its buffer table, borrowed when aligned to the 64-byte floor, else copied (copy=True "
     "always copies). What Tensor.__reduce_ex__ names; not for direct use."},
    {"_buffer_address", m_buffer_address, METH_O,
     "_buffer_address(obj, /)\n--\n\n(address, nbytes, readonly) of obj's contiguous buffer, "
     "to compare where two received frames lie (hurray/_dask.py); not for direct use."},
    {"_move_within", (PyCFunction)(void (*)(void))m_move_within, METH_FASTCALL,
     "_move_within(obj, dst, src, nbytes, /)\n--\n\nmemmove of nbytes from offset src to "
     "offset dst inside obj's writable contiguous buffer, both ranges checked (the GIL "
     "released from 1 MiB); how hurray/_dask.py realigns a received frame. Not for direct "
     "use."},
    {NULL, NULL, 0, NULL},
};

int hrpy_pickle_init(PyObject *m, HrpyState *st) {
  st->interop->BufferExporterType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &exporter_spec, NULL);
  if (st->interop->BufferExporterType == NULL) return -1;
  return PyModule_AddFunctions(m, pickle_module_methods);
}
