/*
 * util/atomic.h - what the extension needs to run without the GIL (layer 0).
 *
 * The module declares Py_MOD_GIL_NOT_USED: on a free-threaded interpreter
 * (3.13t and newer) any number of threads run its code at once. Three tools
 * keep that safe, and the same code runs on every interpreter:
 *
 * - Lazily built caches (a tensor's descriptor, handle tuples, imported
 *   modules, NumPy dtypes, private Dtype singletons) are published once with
 *   a compare-and-swap: whoever builds first wins, a thread that loses drops
 *   what it built and uses the winner. Readers load with acquire order.
 * - Objects with mutable state (hurray.File, StreamReader, StreamWriter) guard
 *   their transitions with Py_BEGIN_CRITICAL_SECTION on the object; blocking
 *   I/O runs outside the section, counted by the object's `busy`.
 * - Everything else is immutable once built.
 *
 * Before 3.13 (and on the default 3.13+ build) the critical-section macros
 * are no-ops and the GIL orders the rest; the atomics cost a plain load.
 */
#ifndef HURRAY_PY_UTIL_ATOMIC_H
#define HURRAY_PY_UTIL_ATOMIC_H

#include "util/state.h"

#ifndef Py_BEGIN_CRITICAL_SECTION
/* CPython < 3.13: the GIL serialises the section. */
#define Py_BEGIN_CRITICAL_SECTION(op) {
#define Py_END_CRITICAL_SECTION() }
#endif

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static inline void *hrpy_load_ptr(void *const *p) {
  return _InterlockedCompareExchangePointer((void *volatile *)p, NULL, NULL);
}
static inline bool hrpy_cas_ptr(void **p, void *expected, void *desired) {
  return _InterlockedCompareExchangePointer((void *volatile *)p, desired, expected) == expected;
}
static inline int hrpy_load_int(const int *p) { return _InterlockedOr((volatile long *)p, 0); }
static inline void hrpy_store_int(int *p, int v) { _InterlockedExchange((volatile long *)p, v); }
static inline int hrpy_exchange_int(int *p, int v) {
  return (int)_InterlockedExchange((volatile long *)p, v);
}
static inline int hrpy_sub_fetch_int(int *p, int v) {
  return (int)_InterlockedExchangeAdd((volatile long *)p, -v) - v;
}
#else
static inline void *hrpy_load_ptr(void *const *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline bool hrpy_cas_ptr(void **p, void *expected, void *desired) {
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE);
}
static inline int hrpy_load_int(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void hrpy_store_int(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
/* the value before; acquire-release */
static inline int hrpy_exchange_int(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL); }
/* the value after; acquire-release */
static inline int hrpy_sub_fetch_int(int *p, int v) { return __atomic_sub_fetch(p, v, __ATOMIC_ACQ_REL); }
#endif

/* The object in a lazily filled slot (borrowed), or NULL while empty. */
static inline PyObject *hrpy_peek(PyObject *const *slot) {
  return (PyObject *)hrpy_load_ptr((void *const *)slot);
}

/* Publishes `value` (a new reference, stolen; NULL passes through as NULL)
 * into an empty slot. Returns the slot's object (borrowed): `value` when it
 * won, the earlier winner otherwise (then `value` is released). */
static inline PyObject *hrpy_publish(PyObject **slot, PyObject *value) {
  if (value == NULL) return NULL;
  if (hrpy_cas_ptr((void **)slot, NULL, value)) return value;
  Py_DECREF(value);
  return hrpy_peek(slot);
}

#endif /* HURRAY_PY_UTIL_ATOMIC_H */
