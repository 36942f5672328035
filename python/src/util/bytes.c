/*
 * util/bytes.c - byte-level helpers: per-call arenas and aligned buffers
 * (util/bytes.h).
 */
#include "util/bytes.h"

#include <string.h>

void *hrpy_arena_alloc(HrpyArena *a, size_t bytes) {
  if (a->n == a->cap) {
    size_t cap = a->cap == 0 ? 8 : a->cap * 2;
    void **b = PyMem_Realloc(a->blocks, cap * sizeof *b);
    if (b == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    a->blocks = b;
    a->cap = cap;
  }
  void *p = PyMem_Calloc(bytes > 0 ? bytes : 1u, 1);
  if (p == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  a->blocks[a->n++] = p;
  return p;
}

void hrpy_arena_free(HrpyArena *a) {
  for (size_t i = 0; i < a->n; i++) PyMem_Free(a->blocks[i]);
  PyMem_Free(a->blocks);
  a->blocks = NULL;
  a->n = a->cap = 0;
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
