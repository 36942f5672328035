/*
 * Finding a tensor by name, and proving names unique.
 *
 * Open does not compare names: that would cost a hash table (or a sort) over
 * every name, several times the cost of the rest of open on a large index,
 * and most opens look up a few names or none. Instead:
 *
 *  - the first HURRAY__FILE_SCAN_FINDS lookups scan the index: every entry
 *    whose name has the right length is compared word by word, and the
 *    lookup succeeds only when exactly one entry has the name (two or more
 *    are HURRAY_ERR_DUPLICATE_NAME). About a nanosecond per entry;
 *  - the next lookup builds, once, a structure over every name, and
 *    publishes it (atomically; builders serialise on the file's mutex):
 *    under SORTED_INDEX, a check that the names ascend strictly, then binary
 *    search; otherwise (or if that check fails) a hash table of 32-bit slots
 *    (entry number, a tag of the hash, a "duplicated" bit), seeded per
 *    process; if the probe count shows collisions being forced, a sorted
 *    permutation instead (O(n log n) whatever the names).
 *
 * Either way a lookup that succeeds has proven its name unique in the file;
 * hurray_file_verify builds the structure and reports the first
 * duplicate (or, under SORTED_INDEX, the first name out of order) in full.
 */
#include "internal/file.h"

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#else
#define PREFETCH_W(p) ((void)(p))
#endif

#define SLOT_DUP 0x80000000u

struct HurrayIndexLookup {
  int kind;              /* HURRAY__LOOKUP_SORTED, _HASH or _PERM */
  uint32_t *slots;       /* HASH: (dup << 31) | (tag << bits) | (entry + 1); 0 = empty */
  uint32_t mask;         /* HASH: capacity - 1 */
  unsigned bits;         /* HASH: log2(capacity), at most 31 */
  uint32_t tag_mask;     /* HASH: (1 << (31 - bits)) - 1 */
  uint32_t *perm;        /* PERM: entry numbers in name order */
  HurrayStatus verdict;  /* HURRAY_OK, _DUPLICATE_NAME, or _INVALID_FILE (SORTED_INDEX broken) */
  uint32_t bad_a, bad_b; /* the first violation: index[bad_b] repeats (or sorts before) index[bad_a] */
};

const uint8_t *hurray__file_name_at(const void *ctx, uint32_t i, size_t *len) {
  return hurray__file_entry_name(ctx, i, len);
}

/* ---- scanning ----------------------------------------------------------------- */

/* Compares the query with every entry whose name hash (recorded by the walk,
 * so the index itself is only read for candidates) matches. */
static HurrayStatus scan(const HurrayFile *f, const uint8_t *name, size_t len, uint32_t *out) {
  const uint32_t qh = hurray__file_name_hash(name, (uint32_t)len);
  const uint32_t *hashes = f->hashes, n = f->count;
  uint32_t found = UINT32_MAX, i = 0;
#if defined(__SSE2__)
  /* Four hashes a step; a candidate (rare) leaves the vector loop for one
   * step of the scalar one. */
  const __m128i q = _mm_set1_epi32((int)qh);
  for (;;) {
    while (i + 4 <= n &&
           _mm_movemask_epi8(_mm_cmpeq_epi32(
               _mm_loadu_si128((const __m128i *)(const void *)(hashes + i)), q)) == 0)
      i += 4;
    if (i + 4 > n) break;
    for (uint32_t end = i + 4; i < end; i++) {
      if (hashes[i] != qh) continue;
      const uint8_t *p = f->index + f->offsets[i];
      if (hurray__ld16(p) != len || memcmp(p + 2, name, len) != 0) continue;
      if (found != UINT32_MAX) return HURRAY_ERR_DUPLICATE_NAME;
      found = i;
    }
  }
#endif
  for (; i < n; i++) {
    if (hashes[i] != qh) continue;
    const uint8_t *p = f->index + f->offsets[i];
    if (hurray__ld16(p) != len || memcmp(p + 2, name, len) != 0) continue;
    if (found != UINT32_MAX) return HURRAY_ERR_DUPLICATE_NAME;
    found = i;
  }
  if (found == UINT32_MAX) return HURRAY_ERR_NOT_FOUND;
  *out = found;
  return HURRAY_OK;
}

/* The table hash: the walk's name hash, reseeded per process (0 under the
 * test hook of hurray__name_hash_test_constant: every name alike). */
static inline uint32_t table_hash(uint64_t seed, uint32_t name_hash) {
  if (HURRAY_UNLIKELY(seed == 0)) return 7;
  return (uint32_t)(hurray__mix64(seed ^ name_hash) >> 32);
}

/* ---- building ----------------------------------------------------------------- */

static int cmp_entries(const HurrayFile *f, uint32_t a, uint32_t b) {
  size_t al, bl;
  const uint8_t *an = hurray__file_entry_name(f, a, &al);
  const uint8_t *bn = hurray__file_entry_name(f, b, &bl);
  return hurray__name_cmp(an, al, bn, bl);
}

static void record(HurrayIndexLookup *lk, HurrayStatus verdict, uint32_t a, uint32_t b) {
  if (lk->verdict != HURRAY_OK) return; /* the first one found is kept */
  lk->verdict = verdict;
  lk->bad_a = a;
  lk->bad_b = b;
}

/* Under SORTED_INDEX: true when the names ascend strictly; otherwise
 * records the first pair that does not. */
static bool check_sorted(const HurrayFile *f, HurrayIndexLookup *lk) {
  for (uint32_t i = 1; i < f->count; i++) {
    int c = cmp_entries(f, i - 1, i);
    if (c >= 0) {
      record(lk, c == 0 ? HURRAY_ERR_DUPLICATE_NAME : HURRAY_ERR_INVALID_FILE, i - 1, i);
      return false;
    }
  }
  return true;
}

/* Sorted permutation (hash flooding fallback); equal names end up adjacent. */
static HurrayStatus build_perm(const HurrayFile *f, HurrayIndexLookup *lk) {
  const uint32_t n = f->count;
  lk->kind = HURRAY__LOOKUP_PERM;
  lk->perm = hurray__malloc((size_t)(n ? n : 1) * sizeof *lk->perm);
  if (lk->perm == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < n; i++) lk->perm[i] = i;
  HURRAY_TRY(hurray__names_sort(lk->perm, n, hurray__file_name_at, f));
  for (uint32_t k = 1; k < n; k++) {
    uint32_t a = lk->perm[k - 1], b = lk->perm[k];
    if (cmp_entries(f, a, b) == 0)
      record(lk, HURRAY_ERR_DUPLICATE_NAME, a < b ? a : b, a < b ? b : a);
  }
  return HURRAY_OK;
}

/* Inserts entry i (hash h); an equal name already there is marked duplicated
 * instead. Returns the probe steps taken. */
static uint32_t insert(const HurrayFile *f, HurrayIndexLookup *lk, uint32_t h, uint32_t i) {
  const uint32_t mask = lk->mask, tag = (h >> lk->bits) & lk->tag_mask;
  uint32_t pos = h & mask, steps = 0;
  for (;;) {
    uint32_t s = lk->slots[pos];
    if (s == 0) break;
    if (((s >> lk->bits) & lk->tag_mask) == tag) {
      uint32_t other = (s & mask) - 1u;
      if (f->hashes[other] == f->hashes[i] && cmp_entries(f, other, i) == 0) {
        lk->slots[pos] = s | SLOT_DUP;
        record(lk, HURRAY_ERR_DUPLICATE_NAME, other, i);
        return steps;
      }
    }
    pos = (pos + 1) & mask;
    steps++;
  }
  lk->slots[pos] = (tag << lk->bits) | (i + 1u);
  return steps;
}

static HurrayStatus build_hash(const HurrayFile *f, HurrayIndexLookup *lk) {
  const uint32_t n = f->count;
  /* At most half full; n < 2^30, so capacity <= 2^31 and entry + 1 fits
   * in `bits` bits. */
  unsigned bits = 4;
  while ((UINT64_C(1) << (bits - 1)) < n) bits++;
  const uint32_t cap = (uint32_t)1 << bits;
  lk->slots = hurray__calloc(cap, sizeof *lk->slots);
  if (lk->slots == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  lk->kind = HURRAY__LOOKUP_HASH;
  lk->mask = cap - 1;
  lk->bits = bits;
  lk->tag_mask = bits >= 31 ? 0 : ((uint32_t)1 << (31 - bits)) - 1u;
  const uint64_t seed = hurray__name_seed();
  /* What check_sorted found, if anything, stays the first violation. */
  const HurrayStatus pre = lk->verdict;
  const uint32_t pre_a = lk->bad_a, pre_b = lk->bad_b;
  /* Linear probing at load <= 1/2 averages under 2 probes per insert; far
   * more means the names were chosen to collide. */
  const uint64_t budget = 16u * (uint64_t)n + 1024u;
  uint64_t probes = 0;
  /* Hashes are computed AHEAD entries early and their slots prefetched: the
   * table is bigger than a cache for large n. */
  enum { AHEAD = 16 };
  uint32_t ring[AHEAD];
  for (uint32_t i = 0; i < n + (uint32_t)AHEAD; i++) {
    if (i >= (uint32_t)AHEAD) { /* entry i - AHEAD, whose ring cell entry i reuses */
      uint32_t j = i - (uint32_t)AHEAD;
      probes += insert(f, lk, ring[j % AHEAD], j);
      if (HURRAY_UNLIKELY(probes > budget)) {
        hurray__free(lk->slots);
        lk->slots = NULL;
        lk->verdict = pre; /* duplicates are found again by the sort */
        lk->bad_a = pre_a;
        lk->bad_b = pre_b;
        return build_perm(f, lk);
      }
    }
    if (i < n) {
      uint32_t h = table_hash(seed, f->hashes[i]);
      ring[i % AHEAD] = h;
      PREFETCH_W(&lk->slots[h & lk->mask]);
    }
  }
  return HURRAY_OK;
}

static void lookup_destroy(HurrayIndexLookup *lk) {
  if (lk == NULL) return;
  hurray__free(lk->slots);
  hurray__free(lk->perm);
  hurray__free(lk);
}

static HurrayStatus build(const HurrayFile *f, HurrayIndexLookup **out) {
  HurrayIndexLookup *lk = hurray__calloc(1, sizeof *lk);
  if (lk == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  lk->verdict = HURRAY_OK;
  HurrayStatus st = HURRAY_OK;
  if ((f->info.flags & HURRAY_FILE_FLAG_SORTED_INDEX) && check_sorted(f, lk))
    lk->kind = HURRAY__LOOKUP_SORTED;
  else
    st = build_hash(f, lk); /* also when SORTED_INDEX is broken: lookups stay right */
  if (st != HURRAY_OK) {
    lookup_destroy(lk);
    return st;
  }
  *out = lk;
  return HURRAY_OK;
}

/* The lookup structure, built on first need; NULL when out of memory. */
static HurrayIndexLookup *ensure(const HurrayFile *cf) {
  HurrayFile *f = (HurrayFile *)(uintptr_t)cf; /* the lookup state is mutable */
  HurrayIndexLookup *lk = atomic_load_explicit(&f->lookup, memory_order_acquire);
  if (lk != NULL) return lk;
  hurray__mutex_lock(&f->mutex);
  lk = atomic_load_explicit(&f->lookup, memory_order_acquire);
  if (lk == NULL && build(f, &lk) == HURRAY_OK)
    atomic_store_explicit(&f->lookup, lk, memory_order_release);
  hurray__mutex_unlock(&f->mutex);
  return lk;
}

/* ---- lookups ------------------------------------------------------------------ */

static HurrayStatus find_sorted(const HurrayFile *f, const uint32_t *perm, const uint8_t *name,
                                size_t len, uint32_t *out) {
  uint32_t lo = 0, hi = f->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    uint32_t item = perm != NULL ? perm[mid] : mid;
    size_t il;
    const uint8_t *iname = hurray__file_entry_name(f, item, &il);
    int c = hurray__name_cmp(iname, il, name, len);
    if (c < 0) {
      lo = mid + 1;
    } else if (c > 0) {
      hi = mid;
    } else {
      /* Equal names are adjacent in a permutation (a verified sorted index
       * has none). */
      if (perm != NULL && ((mid > 0 && cmp_entries(f, perm[mid - 1], item) == 0) ||
                           (mid + 1 < f->count && cmp_entries(f, perm[mid + 1], item) == 0)))
        return HURRAY_ERR_DUPLICATE_NAME;
      *out = item;
      return HURRAY_OK;
    }
  }
  return HURRAY_ERR_NOT_FOUND;
}

static HurrayStatus find_hash(const HurrayFile *f, const HurrayIndexLookup *lk,
                              const uint8_t *name, size_t len, uint32_t *out) {
  const uint32_t qh = hurray__file_name_hash(name, (uint32_t)len);
  const uint32_t h = table_hash(hurray__name_seed(), qh);
  const uint32_t mask = lk->mask, tag = (h >> lk->bits) & lk->tag_mask;
  for (uint32_t pos = h & mask;; pos = (pos + 1) & mask) {
    uint32_t s = lk->slots[pos];
    if (s == 0) return HURRAY_ERR_NOT_FOUND;
    if (((s >> lk->bits) & lk->tag_mask) != tag) continue;
    uint32_t i = (s & mask) - 1u;
    if (f->hashes[i] != qh) continue;
    size_t il;
    const uint8_t *iname = hurray__file_entry_name(f, i, &il);
    if (il != len || memcmp(iname, name, len) != 0) continue;
    if (s & SLOT_DUP) return HURRAY_ERR_DUPLICATE_NAME;
    *out = i;
    return HURRAY_OK;
  }
}

HurrayStatus hurray__file_lookup_find(const HurrayFile *f, const uint8_t *name, size_t len,
                                      uint32_t *out) {
  if (f->count == 0 || len == 0 || len > HURRAY_FILE_MAX_NAME_LEN) return HURRAY_ERR_NOT_FOUND;
  HurrayIndexLookup *lk = atomic_load_explicit(&f->lookup, memory_order_acquire);
  if (lk == NULL) {
    HurrayFile *mf = (HurrayFile *)(uintptr_t)f;
    if (atomic_fetch_add_explicit(&mf->finds, 1, memory_order_relaxed) < HURRAY__FILE_SCAN_FINDS)
      return scan(f, name, len, out);
    lk = ensure(f);
    if (lk == NULL) return scan(f, name, len, out); /* out of memory: keep scanning */
  }
  switch (lk->kind) {
    case HURRAY__LOOKUP_SORTED: return find_sorted(f, NULL, name, len, out);
    case HURRAY__LOOKUP_PERM: return find_sorted(f, lk->perm, name, len, out);
    default: return find_hash(f, lk, name, len, out);
  }
}

HurrayStatus hurray__file_lookup_verify(const HurrayFile *f, HurrayError *err) {
  if (f->count == 0) return HURRAY_OK;
  const HurrayIndexLookup *lk = ensure(f);
  if (lk == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, f->info.index_offset, "index",
                        "out of memory comparing the names");
  if (lk->verdict == HURRAY_OK) return HURRAY_OK;
  HurrayFileIndexEntry e;
  hurray__file_entry_at(f, lk->bad_b, &e);
  const uint64_t at = f->info.index_offset + f->offsets[lk->bad_b];
  const int shown = (int)(e.name_len > 64 ? 64 : e.name_len);
  char field[48];
  hurray__path(field, sizeof field, "index[%u].name", lk->bad_b);
  if (lk->verdict == HURRAY_ERR_DUPLICATE_NAME)
    return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, at, field,
                        "\"%.*s\" is also the name of index[%u]", shown, (const char *)e.name,
                        lk->bad_a);
  return hurray__fail(err, HURRAY_ERR_INVALID_FILE, at, field,
                      "SORTED_INDEX is set but \"%.*s\" sorts before index[%u]", shown,
                      (const char *)e.name, lk->bad_a);
}

int hurray__file_lookup_kind(const HurrayFile *f) {
  const HurrayIndexLookup *lk = atomic_load_explicit(&f->lookup, memory_order_acquire);
  return lk != NULL ? lk->kind : -1;
}

HurrayStatus hurray__file_lookup_init(HurrayFile *f) {
  atomic_init(&f->lookup, NULL);
  atomic_init(&f->finds, 0);
  atomic_init(&f->file_order, NULL);
  if (hurray__mutex_init(&f->mutex) != 0) return HURRAY_ERR_OUT_OF_MEMORY;
  f->mutex_ready = true;
  return HURRAY_OK;
}

void hurray__file_lookup_free(HurrayFile *f) {
  lookup_destroy(atomic_load_explicit(&f->lookup, memory_order_relaxed));
  atomic_store_explicit(&f->lookup, NULL, memory_order_relaxed);
  if (f->mutex_ready) hurray__mutex_destroy(&f->mutex);
  f->mutex_ready = false;
}
