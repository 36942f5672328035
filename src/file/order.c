/*
 * File order: the tensors sorted by descriptor offset, and the proof that
 * they do not overlap, for an index that does not list them in that order
 * (SORTED_INDEX lists them by name).
 *
 * When the index is in file order, the walk of open checks each tensor
 * against the one before, and file order is the index order: nothing here
 * runs. Otherwise open checks every entry on its own, and the sort and the
 * overlap check wait for the first call that needs file order
 * (hurray_file_position, hurray_file_composite, hurray_file_verify): they
 * cost a sort of all the entries, which open does not need. Built once,
 * under the file's mutex, and published atomically, like the name lookups.
 *
 * The sort: the start and end of every tensor, read from the index in index
 * order, then a bucket sort of the entries by start (build()), then one
 * sweep that checks each start against the end before it, and the ranks.
 */
#include "internal/file.h"

struct HurrayFileOrder {
  uint32_t *order;      /* position -> entry */
  uint32_t *rank;       /* entry -> position */
  HurrayStatus verdict; /* HURRAY_OK or HURRAY_ERR_INVALID_FILE (two tensors overlap) */
  uint32_t bad, other;  /* the overlap: entry `bad` starts before entry `other` ends */
  uint64_t other_end;
};

/* Sorts ent[0..k) by start[ent[i]], ties in entry order. Insertion sort for
 * the few entries a bucket usually holds; a bottom-up merge sort (tmp: k
 * more) beyond. */
static void sort_bucket(uint32_t *ent, uint32_t k, const uint64_t *start, uint32_t *tmp) {
  if (k <= 16) {
    for (uint32_t i = 1; i < k; i++) {
      uint32_t e = ent[i], j = i;
      for (; j > 0 && start[ent[j - 1]] > start[e]; j--) ent[j] = ent[j - 1];
      ent[j] = e;
    }
    return;
  }
  uint32_t *src = ent, *dst = tmp;
  for (uint64_t w = 1; w < k; w *= 2) {
    for (uint64_t lo = 0; lo < k; lo += 2 * w) {
      uint64_t mid = lo + w < k ? lo + w : k, hi = lo + 2 * w < k ? lo + 2 * w : k;
      uint64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) dst[o++] = start[src[j]] < start[src[i]] ? src[j++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != ent) memcpy(ent, src, (size_t)k * sizeof *ent);
}

static void order_destroy(HurrayFileOrder *o) {
  if (o == NULL) return;
  hurray__free(o->order);
  hurray__free(o->rank);
  hurray__free(o);
}

/*
 * A bucket sort: the tensors' starts spread over the tensor region, so
 * about n buckets by start (the high bits of start - min) hold one or two
 * entries each; one counting pass, one scatter, then each bucket sorted on
 * its own. A crowded bucket (starts chosen to collide) falls to a merge
 * sort, so the worst case is O(n log n).
 */
static HurrayStatus build(const HurrayFile *f, HurrayFileOrder **out) {
  const uint32_t n = f->count;
  const size_t m = n ? n : 1;
  HurrayFileOrder *o = hurray__calloc(1, sizeof *o);
  uint64_t *start = hurray__malloc(m * 2 * sizeof *start); /* then the ends */
  uint32_t *counts = NULL;
  uint32_t nb = 1;
  while (nb < n) nb *= 2;
  counts = hurray__calloc((size_t)nb + 1, sizeof *counts);
  if (o != NULL) {
    o->order = hurray__malloc(m * sizeof *o->order);
    o->rank = hurray__malloc(m * sizeof *o->rank); /* also the merge sort's scratch */
  }
  if (o == NULL || start == NULL || counts == NULL || o->order == NULL || o->rank == NULL) {
    order_destroy(o);
    hurray__free(start);
    hurray__free(counts);
    return HURRAY_ERR_OUT_OF_MEMORY;
  }
  uint64_t *end = start + m;
  hurray__prefault(start, m * 2 * sizeof *start);
  hurray__prefault(o->order, m * sizeof *o->order);
  hurray__prefault(o->rank, m * sizeof *o->rank);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t i = 0; i < n; i++) {
    HurrayFileIndexEntry e;
    hurray__file_entry_at(f, i, &e);
    start[i] = e.desc_off;
    end[i] = e.data_off + e.data_len; /* open proved both inside the file */
    if (e.desc_off < lo) lo = e.desc_off;
    if (e.desc_off > hi) hi = e.desc_off;
  }
  /* bucket(s) = (s - lo) >> shift, below nb */
  unsigned shift = 0;
  if (n > 0)
    while (((hi - lo) >> shift) >= nb) shift++;
  for (uint32_t i = 0; i < n; i++) counts[((start[i] - lo) >> shift) + 1]++;
  for (uint32_t b = 0; b < nb; b++) counts[b + 1] += counts[b]; /* counts[b]: bucket b's first */
  for (uint32_t i = 0; i < n; i++) o->order[counts[(start[i] - lo) >> shift]++] = i;
  /* now counts[b] is where bucket b ends */
  for (uint32_t b = 0, first = 0; b < nb; first = counts[b], b++)
    if (counts[b] - first > 1) sort_bucket(o->order + first, counts[b] - first, start, o->rank);
  o->verdict = HURRAY_OK;
  for (uint32_t p = 0; p < n; p++) {
    uint32_t i = o->order[p];
    if (p > 0 && o->verdict == HURRAY_OK && start[i] < end[o->order[p - 1]]) {
      o->verdict = HURRAY_ERR_INVALID_FILE;
      o->bad = i;
      o->other = o->order[p - 1];
      o->other_end = end[o->other];
    }
  }
  for (uint32_t p = 0; p < n; p++) o->rank[o->order[p]] = p;
  hurray__free(start);
  hurray__free(counts);
  *out = o;
  return HURRAY_OK;
}

HurrayStatus hurray__file_order_get(const HurrayFile *cf, const HurrayFileOrder **out,
                                    HurrayError *err) {
  *out = NULL;
  if (cf->in_file_order) return HURRAY_OK; /* identity */
  HurrayFile *f = (HurrayFile *)(uintptr_t)cf; /* the lazy state is mutable */
  HurrayFileOrder *o = atomic_load_explicit(&f->file_order, memory_order_acquire);
  if (o == NULL) {
    hurray__mutex_lock(&f->mutex);
    o = atomic_load_explicit(&f->file_order, memory_order_acquire);
    HurrayStatus st = HURRAY_OK;
    if (o == NULL) {
      st = build(f, &o);
      if (st == HURRAY_OK) atomic_store_explicit(&f->file_order, o, memory_order_release);
    }
    hurray__mutex_unlock(&f->mutex);
    if (st != HURRAY_OK)
      return hurray__fail(err, st, f->info.index_offset, "index",
                          "out of memory sorting the tensors by offset");
  }
  if (o->verdict != HURRAY_OK) {
    HurrayFileIndexEntry e, p;
    hurray__file_entry_at(f, o->bad, &e);
    hurray__file_entry_at(f, o->other, &p);
    char field[48];
    return hurray__fail(
        err, o->verdict, e.desc_off,
        hurray__path(field, sizeof field, "index[%u].descriptor_offset", o->bad),
        "tensor \"%.*s\" at %llu overlaps tensor \"%.*s\" (index[%u]) ending at %llu",
        (int)(e.name_len > 48 ? 48 : e.name_len), (const char *)e.name,
        (unsigned long long)e.desc_off, (int)(p.name_len > 48 ? 48 : p.name_len),
        (const char *)p.name, o->other, (unsigned long long)o->other_end);
  }
  *out = o;
  return HURRAY_OK;
}

uint32_t hurray__file_order_at(const HurrayFileOrder *o, uint32_t position) {
  return o != NULL ? o->order[position] : position;
}

uint32_t hurray__file_rank_of(const HurrayFileOrder *o, uint32_t entry) {
  return o != NULL ? o->rank[entry] : entry;
}

void hurray__file_order_free(HurrayFile *f) {
  order_destroy(atomic_load_explicit(&f->file_order, memory_order_relaxed));
  atomic_store_explicit(&f->file_order, NULL, memory_order_relaxed);
}
