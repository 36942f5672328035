/*
 * Moving bytes inside one block of memory (include/hurray/alloc.h,
 * hurray_move_within): memmove, by two threads for a large block shifted by
 * little (one core does not reach the memory's bandwidth: 256 MiB moved in
 * 20 ms by one, 11 ms by two). How a receiver realigns a tensor that arrived
 * a few bytes off its 64-byte boundary.
 */
#include "hurray/alloc.h"

#include <stdint.h>
#include <string.h>

#include "internal/platform.h"

/* Two threads from this size on, when the shift is under STASH bytes. */
#define SPLIT_BYTES ((size_t)16 << 20)
#define STASH 4096u

/* Half of a move: memmove(dst, src, n), then the stash (bytes of this half's
 * source that the other half overwrites, saved before either started) copied
 * to stash_dst. */
typedef struct {
  uint8_t *dst;
  const uint8_t *src;
  size_t n;
  const uint8_t *stash;
  uint8_t *stash_dst;
  size_t stash_n;
} Half;

static void move_half(void *arg) {
  const Half *h = arg;
  memmove(h->dst, h->src, h->n);
  if (h->stash_n > 0) memcpy(h->stash_dst, h->stash, h->stash_n);
}

/* memmove(base + to, base + from, n) by two threads: the block cut in two
 * halves at `cut`; where one half's writes reach the other's first (or last)
 * source bytes, those are saved first and written by their own half after its
 * memmove. One memmove when no thread can be started. */
static void move_split(uint8_t *base, size_t to, size_t from, size_t n) {
  uint8_t stash[STASH];
  size_t cut = (n / 2) & ~(size_t)63;
  Half a, b;
  if (to > from) { /* forward: the first half's writes reach the second half's first d bytes */
    size_t d = to - from;
    memcpy(stash, base + from + cut, d);
    a = (Half){base + to, base + from, cut, NULL, NULL, 0};
    b = (Half){base + to + cut + d, base + from + cut + d, n - cut - d, stash, base + to + cut, d};
  } else { /* backward: the second half's writes reach the first half's last d bytes */
    size_t d = from - to;
    memcpy(stash, base + from + cut - d, d);
    a = (Half){base + to, base + from, cut - d, stash, base + to + cut - d, d};
    b = (Half){base + to + cut, base + from + cut, n - cut, NULL, NULL, 0};
  }
  HurrayThread t = {NULL};
  if (hurray__thread_start(&t, move_half, &b) != 0) {
    memmove(base + to, base + from, n); /* nothing moved yet: all in one */
    return;
  }
  move_half(&a);
  hurray__thread_join(&t);
}

void hurray_move_within(void *base, size_t to, size_t from, size_t n) {
  size_t shift = to > from ? to - from : from - to;
  if (base == NULL || n == 0 || shift == 0) return;
  if (n >= SPLIT_BYTES && shift < STASH)
    move_split(base, to, from, n);
  else
    memmove((uint8_t *)base + to, (uint8_t *)base + from, n);
}
