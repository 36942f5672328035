/*
 * sparselib.c - a Python extension whose own sparse type implements the
 * native protocol, __hurray__, in C, with libhurray's C ABI only.
 *
 * sparselib.diagonal(n) returns a CooMatrix: an n x n matrix holding
 * 1, 2, ..., n on its diagonal, in memory this module allocated. Its
 * __hurray__() hands that memory to any Hurray-aware consumer without a copy:
 *
 *   - the capsule's pointer is a HurrayBufferList of two buffers, in the
 *     order of the descriptor's buffer table: the values (float32) and the
 *     coordinates (uint64, [nnz, 2]);
 *   - the capsule's context is a HurrayTensorContext: the encoded descriptor
 *     (a COO layout) and the C ABI version this module was built with;
 *   - a consumer renames the capsule "used_hurray_tensor" and from then on
 *     owns both; if nobody consumes it, the capsule's destructor frees them.
 *
 * Lifetime: each buffer holds a reference to the CooMatrix, dropped by its
 * release callback, so the memory stays valid for as long as the consumer
 * keeps any buffer, even after Python code has dropped the matrix.
 *
 * Build (the guide page "Integrating your library" runs exactly this):
 *   cc -shared -fPIC -std=c11 -I include $(python3-config --includes) \
 *      examples/capsule/sparselib.c build/libhurray.a \
 *      -o sparselib$(python3-config --extension-suffix)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "hurray/hurray.h"

typedef struct {
  PyObject_HEAD
  uint64_t n;
  float *values;     /* n values, 64-byte aligned */
  uint64_t *coords;  /* n * 2 coordinates (row, column), 64-byte aligned */
} CooMatrix;

static void coo_dealloc(PyObject *self) {
  CooMatrix *m = (CooMatrix *)self;
  PyTypeObject *tp = Py_TYPE(self);
  free(m->values);
  free(m->coords);
  tp->tp_free(self);
  Py_DECREF(tp); /* a heap type: each instance holds a reference to it */
}

/* Release callback of one buffer: drops the buffer's reference to the matrix.
 * It may run on any thread, so it takes the Python lock itself. */
static void release_buffer(void *data, void *matrix) {
  (void)data;
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF((PyObject *)matrix);
  PyGILState_Release(gil);
}

static void capsule_destructor(PyObject *capsule) {
  /* Consumed capsules were renamed: their list and context are the consumer's. */
  if (!PyCapsule_IsValid(capsule, "hurray_tensor")) return;
  HurrayBufferList *list = PyCapsule_GetPointer(capsule, "hurray_tensor");
  HurrayTensorContext *ctx = PyCapsule_GetContext(capsule);
  (void)hurray_buffer_list_destroy(&list); /* releases every buffer it holds */
  (void)hurray_tensor_context_destroy(&ctx);
}

static PyObject *status_error(const char *what, HurrayStatus st) {
  PyErr_Format(PyExc_RuntimeError, "%s: %s", what, hurray_status_name(st));
  return NULL;
}

/* The descriptor of the matrix: float32 values, COO layout, two buffers. */
static HurrayStatus encode_descriptor(const CooMatrix *m, uint8_t *out, uint64_t cap,
                                      uint64_t *out_len, HurrayError *err) {
  const uint64_t shape[2] = {m->n, m->n};
  HurrayBufferHandle buffers[2];
  memset(buffers, 0, sizeof buffers);
  for (int i = 0; i < 2; i++) {
    buffers[i].alignment = HURRAY_MIN_BUFFER_ALIGNMENT;
    buffers[i].device_tag = HURRAY_DEVICE_CPU;
    buffers[i].sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
    buffers[i].memory_class = HURRAY_MEMORY_STANDARD;
  }
  buffers[0].byte_size = m->n * sizeof(float);
  buffers[1].byte_size = m->n * 2 * sizeof(uint64_t);

  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_COO;
  f.layout.u.coo.nnz = m->n;
  f.layout.u.coo.is_sorted = 1; /* (0,0), (1,1), ...: lexicographic order */
  f.buffer_count = 2;
  f.buffers = buffers;

  HurrayDescriptor *d = NULL;
  HurrayStatus st = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, err);
  if (st != HURRAY_OK) return st;
  st = hurray_descriptor_encode(d, out, cap, out_len);
  (void)hurray_descriptor_destroy(d);
  return st;
}

static PyObject *coo_hurray(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"stream", NULL};
  PyObject *stream = Py_None; /* CPU memory: nothing to synchronize */
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:__hurray__", keywords, &stream))
    return NULL;
  CooMatrix *m = (CooMatrix *)self;

  uint8_t bytes[256];
  uint64_t len = 0;
  HurrayError err;
  HurrayStatus st = encode_descriptor(m, bytes, sizeof bytes, &len, &err);
  if (st != HURRAY_OK) return status_error("descriptor", st);

  HurrayBufferList *list = NULL;
  st = hurray_buffer_list_new(2, &list);
  if (st != HURRAY_OK) return status_error("hurray_buffer_list_new", st);
  void *data[2] = {m->values, m->coords};
  uint64_t sizes[2] = {m->n * sizeof(float), m->n * 2 * sizeof(uint64_t)};
  for (int i = 0; i < 2; i++) {
    HurrayBuffer *buffer = NULL;
    Py_INCREF(self); /* the buffer's reference, dropped by release_buffer */
    st = hurray_buffer_from_ptr(data[i], sizes[i], HURRAY_MIN_BUFFER_ALIGNMENT,
                                HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                                HURRAY_MEMORY_STANDARD, release_buffer, self, &buffer);
    if (st != HURRAY_OK) {
      Py_DECREF(self); /* not taken: the buffer does not exist */
      (void)hurray_buffer_list_destroy(&list);
      return status_error("hurray_buffer_from_ptr", st);
    }
    st = hurray_buffer_list_push(list, buffer); /* moves the buffer into the list */
    if (st != HURRAY_OK) {
      (void)hurray_buffer_destroy(buffer); /* still ours: releases its reference */
      (void)hurray_buffer_list_destroy(&list);
      return status_error("hurray_buffer_list_push", st);
    }
  }

  HurrayTensorContext *ctx = NULL;
  st = hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, len, NULL, NULL, &ctx);
  if (st != HURRAY_OK) {
    (void)hurray_buffer_list_destroy(&list);
    return status_error("hurray_tensor_context_new", st);
  }
  PyObject *capsule = PyCapsule_New(list, "hurray_tensor", NULL);
  if (capsule == NULL || PyCapsule_SetContext(capsule, ctx) != 0 ||
      PyCapsule_SetDestructor(capsule, capsule_destructor) != 0) {
    /* (with no destructor yet, dropping the capsule frees nothing: free both here) */
    if (capsule != NULL) (void)PyCapsule_SetDestructor(capsule, NULL);
    Py_XDECREF(capsule);
    (void)hurray_buffer_list_destroy(&list);
    (void)hurray_tensor_context_destroy(&ctx);
    return NULL;
  }
  return capsule;
}

static PyObject *coo_nnz(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromUnsignedLongLong(((CooMatrix *)self)->n);
}

static PyMethodDef coo_methods[] = {
    {"__hurray__", (PyCFunction)(void (*)(void))coo_hurray, METH_VARARGS | METH_KEYWORDS,
     "__hurray__(stream=None)\n--\n\nThe matrix as a \"hurray_tensor\" capsule."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef coo_getset[] = {
    {"nnz", coo_nnz, NULL, "stored elements", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot coo_slots[] = {
    {Py_tp_dealloc, (void *)coo_dealloc},
    {Py_tp_methods, coo_methods},
    {Py_tp_getset, coo_getset},
    {Py_tp_doc, "A sparse matrix in coordinate form, owned by sparselib."},
    {0, NULL},
};

static PyType_Spec coo_spec = {
    .name = "sparselib.CooMatrix",
    .basicsize = sizeof(CooMatrix),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = coo_slots,
};

static PyObject *diagonal(PyObject *module, PyObject *arg) {
  unsigned long long n = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  if (n == 0 || n > (1ull << 24)) {
    PyErr_SetString(PyExc_ValueError, "diagonal: n must be 1 to 2**24");
    return NULL;
  }
  PyTypeObject *tp = (PyTypeObject *)PyObject_GetAttrString(module, "CooMatrix");
  if (tp == NULL) return NULL;
  CooMatrix *m = (CooMatrix *)tp->tp_alloc(tp, 0);
  Py_DECREF(tp);
  if (m == NULL) return NULL;
  /* aligned_alloc needs a size that is a multiple of the alignment */
  size_t vbytes = ((size_t)n * sizeof(float) + 63) / 64 * 64;
  size_t cbytes = ((size_t)n * 2 * sizeof(uint64_t) + 63) / 64 * 64;
  m->n = n;
  m->values = aligned_alloc(64, vbytes);
  m->coords = aligned_alloc(64, cbytes);
  if (m->values == NULL || m->coords == NULL) {
    Py_DECREF(m);
    return PyErr_NoMemory();
  }
  for (uint64_t i = 0; i < n; i++) {
    m->values[i] = (float)(i + 1);
    m->coords[2 * i] = i;
    m->coords[2 * i + 1] = i;
  }
  return (PyObject *)m;
}

static PyMethodDef module_methods[] = {
    {"diagonal", diagonal, METH_O,
     "diagonal(n)\n--\n\nAn n x n CooMatrix holding 1, 2, ..., n on its diagonal."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module) {
  PyObject *tp = PyType_FromModuleAndSpec(module, &coo_spec, NULL);
  if (tp == NULL) return -1;
  int rc = PyModule_AddObjectRef(module, "CooMatrix", tp);
  Py_DECREF(tp);
  return rc;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sparselib",
    .m_doc = "A sparse type that speaks the Hurray native protocol (__hurray__).",
    .m_methods = module_methods,
    .m_slots = module_slots,
};

PyMODINIT_FUNC PyInit_sparselib(void) { return PyModuleDef_Init(&module_def); }
