/* Handle identity checks: magic field + graveyard of destroyed addresses
 * (src/ffi/handles.h explains the design). */
#include "internal/handles.h"

#include "hurray/buffer.h"

#if HURRAY_HANDLE_CHECKS
#include <stdatomic.h>

/* 1024 sets of 4 addresses, a set chosen by a multiplicative hash: a
 * destroyed handle stays remembered until four later ones land in its set. */
#define GRAVE_SET_BITS 10u
#define GRAVE_SETS (1u << GRAVE_SET_BITS)
#define GRAVE_WAYS 4u

static _Atomic(uintptr_t) g_grave[GRAVE_SETS][GRAVE_WAYS];
static atomic_uint g_grave_evict; /* round-robin victim when a set is full */

static _Atomic(uintptr_t) *grave_set(uintptr_t p) {
  uint64_t x = (uint64_t)p >> 4; /* handles are at least 16-byte aligned */
  x *= UINT64_C(0x9E3779B97F4A7C15);
  return g_grave[(size_t)(x >> (64u - GRAVE_SET_BITS))];
}

static bool grave_has(uintptr_t p) {
  _Atomic(uintptr_t) *set = grave_set(p);
  for (unsigned w = 0; w < GRAVE_WAYS; w++)
    if (atomic_load_explicit(&set[w], memory_order_acquire) == p) return true;
  return false;
}

static void grave_add(uintptr_t p) {
  _Atomic(uintptr_t) *set = grave_set(p);
  for (unsigned w = 0; w < GRAVE_WAYS; w++) {
    uintptr_t empty = 0;
    if (atomic_compare_exchange_strong(&set[w], &empty, p)) return;
  }
  unsigned victim = atomic_fetch_add(&g_grave_evict, 1u) % GRAVE_WAYS;
  atomic_store_explicit(&set[victim], p, memory_order_release);
}

static void grave_forget(uintptr_t p) {
  _Atomic(uintptr_t) *set = grave_set(p);
  for (unsigned w = 0; w < GRAVE_WAYS; w++) {
    uintptr_t expected = p;
    atomic_compare_exchange_strong(&set[w], &expected, (uintptr_t)0);
  }
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
  grave_forget((uintptr_t)h);
#else
  (void)h;
#endif
}

void hurray__handle_bury(const void *h, uint64_t *magic_field) {
  *magic_field = HURRAY__MAGIC_DEAD;
#if HURRAY_HANDLE_CHECKS
  grave_add((uintptr_t)h);
#else
  (void)h;
#endif
}
