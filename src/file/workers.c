/*
 * Work cut in pieces over threads (src/file/prefetch.c reads a mapping ahead
 * with it, io.c the large reads of READ access): the workers setting, the
 * slice of each worker, and the loop that runs the pieces, the calling thread
 * among the workers. Calls nothing of src/file but the error helpers.
 */
#include <stdlib.h>

#include "internal/file.h"

uint64_t hurray__workers_slice(uint64_t len, uint32_t workers) {
  const uint64_t page = hurray__os_page_size();
  if (workers == 0) workers = 1;
  uint64_t s = (len + workers - 1) / workers;
  s = (s + page - 1) & ~(page - 1);
  return s < HURRAY__MIN_SLICE ? HURRAY__MIN_SLICE : s;
}

uint32_t hurray__file_workers(uint32_t asked) {
  if (asked == 0) {
    /* a bad value counts as unset (bindings refuse it up front) */
    if (hurray_file_workers_env(&asked, NULL) != HURRAY_OK || asked == 0)
      asked = HURRAY_FILE_DEFAULT_WORKERS;
  }
  return asked > HURRAY_FILE_MAX_WORKERS ? HURRAY_FILE_MAX_WORKERS : asked;
}

typedef struct Worker {
  HurrayWorkFn fn;
  const void *ctx;
  uint64_t count;
  atomic_uint_fast64_t *next;
  atomic_int *failed;
  HurrayStatus st;
  uint64_t piece; /* the failed piece */
  HurrayError err;
} Worker;

static void work(void *arg) {
  Worker *w = arg;
  while (atomic_load_explicit(w->failed, memory_order_relaxed) == 0) {
    uint64_t k = atomic_fetch_add_explicit(w->next, 1, memory_order_relaxed);
    if (k >= w->count) break;
    HurrayStatus st = w->fn(w->ctx, k, &w->err);
    if (st != HURRAY_OK) {
      w->st = st;
      w->piece = k;
      atomic_store_explicit(w->failed, 1, memory_order_relaxed);
      break;
    }
  }
}

HurrayStatus hurray__workers_run(HurrayWorkFn fn, const void *ctx, uint64_t count,
                                 uint32_t workers, HurrayError *err) {
  uint64_t n = workers < count ? workers : count;
  if (n == 0) return HURRAY_OK;
  atomic_uint_fast64_t next;
  atomic_int failed;
  atomic_init(&next, 0);
  atomic_init(&failed, 0);
  Worker one[1];
  Worker *w = one;
  HurrayThread *th = NULL;
  if (n > 1) {
    w = hurray__calloc((size_t)n, sizeof *w + sizeof *th);
    if (w == NULL) {
      w = one; /* no memory for the others: the calling thread does it all */
      n = 1;
    } else {
      th = (HurrayThread *)(void *)(w + n);
    }
  }
  for (uint64_t i = 0; i < n; i++) {
    w[i].fn = fn;
    w[i].ctx = ctx;
    w[i].count = count;
    w[i].next = &next;
    w[i].failed = &failed;
    w[i].st = HURRAY_OK;
    hurray_error_clear(&w[i].err);
  }
  uint64_t started = 1;
  for (uint64_t i = 1; i < n; i++) {
    if (hurray__thread_start(&th[i], work, &w[i]) != 0) break; /* the others do its share */
    started++;
  }
  work(&w[0]);
  for (uint64_t i = 1; i < started; i++) hurray__thread_join(&th[i]);
  HurrayStatus st = HURRAY_OK;
  uint64_t first = UINT64_MAX;
  for (uint64_t i = 0; i < started; i++) {
    if (w[i].st == HURRAY_OK || w[i].piece >= first) continue;
    first = w[i].piece;
    st = w[i].st;
    if (err != NULL) *err = w[i].err;
  }
  if (w != one) hurray__free(w);
  return st;
}
