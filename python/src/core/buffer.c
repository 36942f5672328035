/*
 * core/buffer.c - acquiring, copying and releasing the buffers of a tensor
 * (core/buffer.h).
 */
#include "core/buffer.h"

#include <string.h>

#include "util/bytes.h"
#include "util/errors.h"

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
  uint32_t measured = hurray_alignment_measure(b->data, b->size);
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
  /* A copy made only because the address was below the floor (copy=None)
   * keeps the source's read-only flag: the tensor then behaves as the borrowed
   * one would (and pickles to the same bytes), whatever the address was. A copy
   * asked for (copy=True) is the caller's own, writable memory, as NumPy's. */
  return hrpy_buffer_copy_to_owned(b, HURRAY_MIN_BUFFER_ALIGNMENT, copy != 1 && b->readonly);
}

int hrpy_buffer_copy_to_owned(HrpyBuffer *b, size_t align, bool readonly) {
  if (b->size > (uint64_t)PY_SSIZE_T_MAX) {
    PyErr_NoMemory();
    return -1;
  }
  size_t n = (size_t)(b->size == 0 ? 1 : b->size);
  void *mem = hurray_alloc(n, align < HURRAY_MIN_BUFFER_ALIGNMENT ? HURRAY_MIN_BUFFER_ALIGNMENT
                                                                  : align);
  if (mem == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  if (b->size >= HRPY_NOGIL_COPY_BYTES) {
    Py_BEGIN_ALLOW_THREADS memcpy(mem, b->data, (size_t)b->size);
    Py_END_ALLOW_THREADS
  } else if (b->size > 0) {
    memcpy(mem, b->data, (size_t)b->size);
  }
  uint64_t size = b->size;
  uint8_t sync = b->sync_mode;
  hrpy_buffer_release(b);
  b->data = mem;
  b->owned = mem;
  b->size = size;
  b->readonly = readonly;
  b->sync_mode = sync;
  b->host = true;
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
  out->host = true; /* a buffer-protocol export is host memory */
  out->size = (uint64_t)out->view.len;
  if (hrpy_buffer_apply_copy_policy(st, out, index, copy, true, context) < 0) {
    hrpy_buffer_release(out);
    return -1;
  }
  return 0;
}

HrpyBuffer *hrpy_buffers_acquire(HrpyState *st, PyObject *seq, int copy, const char *context,
                                 uint32_t *n) {
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  if (len > (Py_ssize_t)HURRAY_MAX_BUFFERS) {
    hrpy_raise(st->InvalidDescriptorError, "%s: too many buffers (%zd)", context, len);
    return NULL;
  }
  HrpyBuffer *bufs = PyMem_Calloc(len > 0 ? (size_t)len : 1u, sizeof(HrpyBuffer));
  if (bufs == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    if (hrpy_buffer_acquire(st, PySequence_Fast_GET_ITEM(seq, i), (uint32_t)i, copy, context,
                            &bufs[i]) < 0) {
      while (i-- > 0) hrpy_buffer_release(&bufs[i]);
      PyMem_Free(bufs);
      return NULL;
    }
  }
  *n = (uint32_t)len;
  return bufs;
}
