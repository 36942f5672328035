/*
 * interop/allocator.c - a 64-byte aligned NumPy data allocator (NEP 49), handed to
 * numpy.*.multiarray.set_handler as a "mem_handler" capsule by
 * hurray.aligned_allocator(). No NumPy header is needed: the handler layout
 * is a public ABI (PyDataMem_Handler, version 1), reproduced below.
 *
 * The memory is the C library's allocator's (hurray_alloc, hurray_alloc_zeroed:
 * a block of 4 MiB or more is mapped, advised as huge pages and zeroed by the
 * kernel, as NumPy's own allocator advises its blocks). realloc receives no
 * old size, so each block starts with a 64-byte header holding the size.
 */
#include "interop/allocator.h"

#include "util/errors.h"

#include <string.h>

#define HRPY_NP_ALIGN ((size_t)HURRAY_MIN_BUFFER_ALIGNMENT)

typedef struct {
  void *ctx;
  void *(*malloc)(void *ctx, size_t size);
  void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
  void *(*realloc)(void *ctx, void *ptr, size_t new_size);
  void (*free)(void *ctx, void *ptr, size_t size);
} HrpyDataMemAllocator;

typedef struct {
  char name[127];
  uint8_t version;
  HrpyDataMemAllocator allocator;
} HrpyDataMemHandler;

/* The block's data, past the header holding its size. */
static void *finish_block(void *raw, size_t size) {
  if (raw == NULL) return NULL;
  memcpy(raw, &size, sizeof size);
  return (uint8_t *)raw + HRPY_NP_ALIGN;
}

static void *aligned_malloc(void *ctx, size_t size) {
  (void)ctx;
  if (size > SIZE_MAX - HRPY_NP_ALIGN) return NULL;
  return finish_block(hurray_alloc(size + HRPY_NP_ALIGN, HRPY_NP_ALIGN), size);
}

static void *aligned_calloc(void *ctx, size_t nelem, size_t elsize) {
  (void)ctx;
  if (elsize != 0 && nelem > SIZE_MAX / elsize) return NULL;
  size_t size = nelem * elsize;
  if (size > SIZE_MAX - HRPY_NP_ALIGN) return NULL;
  return finish_block(hurray_alloc_zeroed(size + HRPY_NP_ALIGN, HRPY_NP_ALIGN), size);
}

static void aligned_free(void *ctx, void *ptr, size_t size) {
  (void)ctx;
  (void)size;
  if (ptr != NULL) hurray_free((uint8_t *)ptr - HRPY_NP_ALIGN);
}

static void *aligned_realloc(void *ctx, void *ptr, size_t new_size) {
  if (ptr == NULL) return aligned_malloc(ctx, new_size);
  size_t old;
  memcpy(&old, (uint8_t *)ptr - HRPY_NP_ALIGN, sizeof old);
  void *n = aligned_malloc(ctx, new_size);
  if (n == NULL) return NULL;
  memcpy(n, ptr, old < new_size ? old : new_size);
  aligned_free(ctx, ptr, old);
  return n;
}

static HrpyDataMemHandler aligned_handler = {
    "hurray_aligned_64",
    1,
    {NULL, aligned_malloc, aligned_calloc, aligned_realloc, aligned_free},
};

PyObject *hrpy_aligned_mem_handler(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  /* The handler is static: arrays allocated through it may outlive the
   * capsule and even the `with` block. */
  return PyCapsule_New(&aligned_handler, "mem_handler", NULL);
}

/* ---- installing it ------------------------------------------------------------
 *
 * NumPy exposes no Python function to install a handler: NEP 49's
 * PyDataMem_SetHandler is reachable only through NumPy's C-API table, which
 * NumPy publishes at run time as the capsule _multiarray_umath._ARRAY_API.
 * Its slots are part of NumPy's ABI and never move; this module reads the
 * three it needs instead of compiling against NumPy's headers.
 */
#define NPY_SLOT_FEATURE_VERSION 211 /* unsigned int PyArray_GetNDArrayCFeatureVersion(void) */
#define NPY_SLOT_SET_HANDLER 304     /* PyObject *PyDataMem_SetHandler(PyObject *) */
#define NPY_SLOT_GET_HANDLER 305     /* PyObject *PyDataMem_GetHandler(void) */
#define NPY_FEATURE_1_22 0x0Fu       /* first C-API feature version with NEP 49 */

typedef unsigned int (*FeatureVersionFn)(void);
typedef PyObject *(*SetHandlerFn)(PyObject *);

/* NumPy's C-API table, or NULL with hurray.UnsupportedError set. */
static void **numpy_api(HrpyState *st) {
  PyObject *mod = PyImport_ImportModule("numpy._core._multiarray_umath");
  if (mod == NULL) {
    PyErr_Clear();
    mod = PyImport_ImportModule("numpy.core._multiarray_umath");
  }
  if (mod == NULL) return NULL;
  PyObject *cap = PyObject_GetAttrString(mod, "_ARRAY_API");
  Py_DECREF(mod);
  if (cap == NULL) return NULL;
  void **api = PyCapsule_CheckExact(cap) ? PyCapsule_GetPointer(cap, NULL) : NULL;
  Py_DECREF(cap); /* the module keeps the table alive */
  if (api == NULL) {
    PyErr_Clear();
    hrpy_raise(st->UnsupportedError, "aligned_allocator: NumPy's C-API table is unavailable");
    return NULL;
  }
  union {
    void *p;
    FeatureVersionFn f;
  } fv;
  fv.p = api[NPY_SLOT_FEATURE_VERSION];
  unsigned int feature = fv.f();
  if (feature < NPY_FEATURE_1_22) {
    hrpy_raise(st->UnsupportedError,
              "aligned_allocator needs NumPy >= 1.22 (NEP 49); this NumPy's C-API feature "
              "version is 0x%x",
              feature);
    return NULL;
  }
  return api;
}

PyObject *hrpy_numpy_set_handler(PyObject *m, PyObject *handler) {
  HrpyState *st = hrpy_state_of_module(m);
  if (handler != Py_None && !PyCapsule_IsValid(handler, "mem_handler")) {
    return PyErr_Format(PyExc_TypeError,
                        "_numpy_set_handler: expected a 'mem_handler' capsule or None");
  }
  void **api = numpy_api(st);
  if (api == NULL) return NULL;
  union {
    void *p;
    SetHandlerFn f;
  } set;
  set.p = api[NPY_SLOT_SET_HANDLER];
  return set.f(handler == Py_None ? NULL : handler);
}
