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
 * The sort: one record (start, end, entry) per tensor, read from the index in
 * index order, then an LSD radix sort of the records on `start`, 11 bits a
 * pass (passes where every record has the same digit skipped), then one
 * sweep that checks each start against the end before it and fills the
 * order and rank arrays.
 */
#include "internal/file.h"

typedef struct Rec {
  uint64_t start; /* descriptor offset */
  uint64_t end;   /* end of the data */
  uint32_t entry;
} Rec;

struct HurrayFileOrder {
  uint32_t *order;      /* position -> entry */
  uint32_t *rank;       /* entry -> position */
  HurrayStatus verdict; /* HURRAY_OK or HURRAY_ERR_INVALID_FILE (two tensors overlap) */
  uint32_t bad, other;  /* the overlap: entry `bad` starts before entry `other` ends */
  uint64_t other_end;
};

#define DIGIT_BITS 11u
#define DIGITS (1u << DIGIT_BITS)

static void radix_sort(Rec *a, Rec *tmp, uint32_t n, uint64_t max_start) {
  static const unsigned passes = (64 + DIGIT_BITS - 1) / DIGIT_BITS;
  for (unsigned pass = 0; pass < passes; pass++) {
    const unsigned shift = pass * DIGIT_BITS;
    if ((max_start >> shift) == 0) break; /* every later digit is 0 */
    uint32_t counts[DIGITS];
    memset(counts, 0, sizeof counts);
    for (uint32_t i = 0; i < n; i++) counts[(a[i].start >> shift) & (DIGITS - 1)]++;
    if (counts[(a[0].start >> shift) & (DIGITS - 1)] == n) continue; /* one digit */
    uint32_t sum = 0;
    for (uint32_t d = 0; d < DIGITS; d++) {
      uint32_t c = counts[d];
      counts[d] = sum;
      sum += c;
    }
    for (uint32_t i = 0; i < n; i++) tmp[counts[(a[i].start >> shift) & (DIGITS - 1)]++] = a[i];
    memcpy(a, tmp, (size_t)n * sizeof *a);
  }
}

static void order_destroy(HurrayFileOrder *o) {
  if (o == NULL) return;
  hurray__free(o->order);
  hurray__free(o->rank);
  hurray__free(o);
}

static HurrayStatus build(const HurrayFile *f, HurrayFileOrder **out) {
  const uint32_t n = f->count;
  HurrayFileOrder *o = hurray__calloc(1, sizeof *o);
  Rec *recs = hurray__malloc((size_t)(n ? n : 1) * sizeof *recs);
  Rec *tmp = hurray__malloc((size_t)(n ? n : 1) * sizeof *tmp);
  if (o != NULL) {
    o->order = hurray__malloc((size_t)(n ? n : 1) * sizeof *o->order);
    o->rank = hurray__malloc((size_t)(n ? n : 1) * sizeof *o->rank);
  }
  if (o == NULL || recs == NULL || tmp == NULL || o->order == NULL || o->rank == NULL) {
    order_destroy(o);
    hurray__free(recs);
    hurray__free(tmp);
    return HURRAY_ERR_OUT_OF_MEMORY;
  }
  uint64_t max_start = 0;
  for (uint32_t i = 0; i < n; i++) {
    HurrayFileIndexEntry e;
    hurray__file_entry_at(f, i, &e);
    recs[i].start = e.desc_off;
    recs[i].end = e.data_off + e.data_len; /* open proved both inside the file */
    recs[i].entry = i;
    if (e.desc_off > max_start) max_start = e.desc_off;
  }
  radix_sort(recs, tmp, n, max_start);
  o->verdict = HURRAY_OK;
  for (uint32_t p = 0; p < n; p++) {
    if (p > 0 && recs[p].start < recs[p - 1].end && o->verdict == HURRAY_OK) {
      o->verdict = HURRAY_ERR_INVALID_FILE;
      o->bad = recs[p].entry;
      o->other = recs[p - 1].entry;
      o->other_end = recs[p - 1].end;
    }
    o->order[p] = recs[p].entry;
    o->rank[recs[p].entry] = p;
  }
  hurray__free(recs);
  hurray__free(tmp);
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
    pthread_mutex_lock(&f->mutex);
    o = atomic_load_explicit(&f->file_order, memory_order_acquire);
    HurrayStatus st = HURRAY_OK;
    if (o == NULL) {
      st = build(f, &o);
      if (st == HURRAY_OK) atomic_store_explicit(&f->file_order, o, memory_order_release);
    }
    pthread_mutex_unlock(&f->mutex);
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
