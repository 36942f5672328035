/* Handle identity checks: magic field + graveyard of destroyed addresses
 * (src/ffi/handles.h explains the design). */
#include "ffi/handles.h"

#include "hurray/buffer.h"

#if HURRAY_HANDLE_CHECKS
#include <stdatomic.h>

/* 4096 slots of one address each, indexed by a multiplicative hash. */
#define GRAVE_BITS 12u
#define GRAVE_SLOTS (1u << GRAVE_BITS)

static _Atomic(uintptr_t) g_grave[GRAVE_SLOTS];

static size_t grave_slot(uintptr_t p) {
  uint64_t x = (uint64_t)p >> 4; /* handles are at least 16-byte aligned */
  x *= UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(x >> (64u - GRAVE_BITS));
}

static bool grave_has(uintptr_t p) {
  return atomic_load_explicit(&g_grave[grave_slot(p)], memory_order_acquire) == p;
}
#endif

bool hurray_handle_checks_enabled(void) { return HURRAY_HANDLE_CHECKS != 0; }

HurrayStatus hurray__handle_check(const void *h, uint64_t magic) {
#if HURRAY_HANDLE_CHECKS
  if (grave_has((uintptr_t)h)) return HURRAY_ERR_INTERNAL;
#endif
  uint64_t got;
  memcpy(&got, h, sizeof got);
  return got == magic ? HURRAY_OK : HURRAY_ERR_INTERNAL;
}

void hurray__handle_born(const void *h) {
#if HURRAY_HANDLE_CHECKS
  uintptr_t p = (uintptr_t)h;
  uintptr_t expected = p;
  atomic_compare_exchange_strong(&g_grave[grave_slot(p)], &expected, (uintptr_t)0);
#else
  (void)h;
#endif
}

void hurray__handle_bury(const void *h, uint64_t *magic_field) {
  *magic_field = HURRAY__MAGIC_DEAD;
#if HURRAY_HANDLE_CHECKS
  uintptr_t p = (uintptr_t)h;
  atomic_store_explicit(&g_grave[grave_slot(p)], p, memory_order_release);
#else
  (void)h;
#endif
}
