/*
 * The index of a .hrry file, parsed and validated in one pass.
 *
 * Entries have variable length (the name comes first), so finding entry i+1
 * needs entry i's name_length: the walk is a chain of dependent loads, about
 * one L1 hit per entry. Everything else an entry needs (bounds, flags,
 * placement, ordering, an ASCII test and a hash of its name) is independent
 * work that the CPU overlaps with that chain, and so is the CRC-32C of the
 * index: when the CPU has a way to compute it in bursts (crc_bursts.c), a
 * burst runs every few entries inside the same loop. The checksum then costs
 * little on top of the walk, and the index is read from memory once.
 *
 * The fast loop only decides "fine" or "look closer": any entry it does not
 * accept (a non-ASCII name, entries out of file order, any rule broken) is
 * handled by walk_one(), which applies every rule one by one, names the
 * first one broken, or accepts the entry and lets the fast loop resume. A
 * CRC mismatch wins over any other error in the index: it is reported
 * instead when the checksum does not match.
 *
 * Names are not compared with each other here: uniqueness (and the order
 * promised by SORTED_INDEX) is proven by the lookups (lookup.c). Tensors
 * listed out of file order are not sorted here either (order.c).
 */
#include "internal/file.h"

#define BAD(off, field, ...) hurray__fail(err, HURRAY_ERR_INVALID_FILE, (off), (field), __VA_ARGS__)

#if defined(__GNUC__) || defined(__clang__)
#define FORCE_INLINE inline __attribute__((always_inline))
#else
#define FORCE_INLINE inline
#endif

/* Entries walked per CRC burst (a burst is about 256 bytes: a bit more
 * than four typical entries, so the checksum keeps up; what is left either
 * way is done at the end). */
#define BURST_ENTRIES 4u

/* Where the walk stands, and what it checks against. */
typedef struct Walk {
  const uint8_t *ix;
  uint64_t len;        /* index_length */
  uint64_t first;      /* first_descriptor_offset */
  uint64_t region_end; /* end of the tensor region */
  uint64_t amask;      /* data alignment - 1 */
  uint32_t *offsets;
  uint32_t *hashes;
  uint32_t n;
  uint32_t i;          /* next entry */
  uint64_t pos;        /* its offset in the index */
  bool ordered;        /* every entry so far starts at or after the end of the one before */
  uint64_t prev_end;   /* while ordered: end of the previous tensor (first_descriptor_offset
                          before the first); so far, the largest end */
} Walk;

/*
 * Accepts entries from w->i on while each passes every rule with an ASCII
 * name (and, while `ordered`, starts at or after the end of the one before);
 * returns at the first one it cannot accept, or at n. Records each entry's
 * offset and name hash. With `with_crc`, advances the checksum as it goes.
 *
 * While ordered, two rules are implied rather than tested per entry: "at or
 * after first_descriptor_offset" (prev_end starts there) and "inside the
 * tensor region" (every end is at most the last one, which the caller
 * checks against the region when the loop returns).
 */
static FORCE_INLINE void walk_fast(Walk *w, HurrayCrcBursts *crc, const bool with_crc,
                                   const bool ordered) {
  const uint8_t *const ix = w->ix;
  const uint64_t len = w->len;
  uint64_t pos = w->pos;
  uint32_t *const offsets = w->offsets, *const hashes = w->hashes;
  const uint32_t n = w->n;
  const uint64_t amask = w->amask;
  const uint64_t first = w->first, region_end = w->region_end;
  uint64_t prev_end = w->prev_end;
  uint32_t i = w->i;
  while (i < n) {
    if (with_crc) crc->burst(crc);
    const uint32_t stop = n - i > BURST_ENTRIES ? i + BURST_ENTRIES : n;
    for (; i < stop; i++) {
      const uint64_t rem = len - pos;
      if (HURRAY_UNLIKELY(rem < HURRAY__FILE_INDEX_ENTRY_MIN)) goto out;
      const uint8_t *q = ix + pos;
      const uint32_t nl = hurray__ld16(q);
      /* 1 <= nl <= rem - 34, in one unsigned comparison */
      if (HURRAY_UNLIKELY((uint64_t)nl - 1u >= rem - HURRAY__FILE_INDEX_ENTRY_FIXED)) goto out;
      uint64_t high;
      const uint32_t h = hurray__file_name_hash_words(q + 2, nl, &high);
      const uint8_t *p = q + 2 + nl;
      const uint64_t doff = hurray__ld64(p), dlen = hurray__ld32(p + 8);
      const uint64_t aoff = hurray__ld64(p + 12), alen = hurray__ld64(p + 20);
      const uint64_t flags = hurray__ld32(p + 28);
      const uint64_t dend = doff + dlen, aend = aoff + alen;
      /* Every offset and length below 2^62 (a larger one, which no real
       * file has, goes to walk_one): then no sum overflows, and each
       * difference below is negative, its two top bits set, exactly when
       * the rule it stands for is broken. */
      uint64_t hi = doff | aoff | alen | (aoff - dend) | (dlen - HURRAY__FILE_MIN_DESCRIPTOR);
      if (ordered) hi |= doff - prev_end; /* also "at or after first": prev_end starts there */
      else hi |= (doff - first) | (region_end - aend);
      const uint64_t bad = (hi >> 62) | flags | (doff & 7u) |
                           (aoff & amask & (0u - (uint64_t)(alen != 0))) | high;
      if (HURRAY_UNLIKELY(bad != 0)) goto out;
      offsets[i] = (uint32_t)pos;
      hashes[i] = h;
      if (ordered) prev_end = aend;
      pos += HURRAY__FILE_INDEX_ENTRY_FIXED + nl;
    }
  }
out:
  w->i = i;
  w->pos = pos;
  w->prev_end = prev_end;
}

/* The variants, each with its loop specialised. */
static void walk_fast_plain(Walk *w) {
  if (w->ordered) walk_fast(w, NULL, false, true);
  else walk_fast(w, NULL, false, false);
}
static void walk_fast_crc(Walk *w, HurrayCrcBursts *crc) {
  if (w->ordered) walk_fast(w, crc, true, true);
  else walk_fast(w, crc, true, false);
}

/* Names the first rule index entry i breaks (fo: file offset of its
 * descriptor_offset field). */
static HurrayStatus entry_error(const HurrayFile *f, const HurrayFileIndexEntry *e, uint32_t i,
                                uint64_t fo, uint32_t eflags, uint64_t region_end,
                                HurrayError *err) {
  const uint64_t first = f->info.first_descriptor_offset, A = f->info.data_alignment;
  char field[48];
  if (eflags != 0)
    return BAD(fo + 28, hurray__path(field, sizeof field, "index[%u].flags", i),
               "must be 0, got 0x%08X", eflags);
  if (e->desc_off < first || (e->desc_off & 7u) != 0)
    return BAD(fo, hurray__path(field, sizeof field, "index[%u].descriptor_offset", i),
               "%llu must be 8-aligned and at or after first_descriptor_offset %llu",
               (unsigned long long)e->desc_off, (unsigned long long)first);
  if (e->desc_len < HURRAY__FILE_MIN_DESCRIPTOR)
    return BAD(fo + 8, hurray__path(field, sizeof field, "index[%u].descriptor_length", i),
               "%u is shorter than a descriptor header (20)", e->desc_len);
  uint64_t desc_end, data_end;
  if (hurray__add_overflow_u64(e->desc_off, e->desc_len, &desc_end) || desc_end > region_end)
    return BAD(fo, hurray__path(field, sizeof field, "index[%u].descriptor_offset", i),
               "descriptor [%llu, +%u) leaves the tensor region (ends at %llu)",
               (unsigned long long)e->desc_off, e->desc_len, (unsigned long long)region_end);
  if (e->data_off < desc_end || hurray__add_overflow_u64(e->data_off, e->data_len, &data_end) ||
      data_end > region_end)
    return BAD(fo + 12, hurray__path(field, sizeof field, "index[%u].data_offset", i),
               "data [%llu, +%llu) must follow its descriptor (ends at %llu) inside the "
               "tensor region (ends at %llu)",
               (unsigned long long)e->data_off, (unsigned long long)e->data_len,
               (unsigned long long)desc_end, (unsigned long long)region_end);
  return BAD(fo + 12, hurray__path(field, sizeof field, "index[%u].data_offset", i),
             "%llu is not a multiple of the data alignment %llu",
             (unsigned long long)e->data_off, (unsigned long long)A);
}

/*
 * Entry w->i, every rule checked in turn (the fast loop stopped on it).
 * Accepts it (and advances) or returns the error naming the first rule
 * broken.
 */
static HurrayStatus walk_one(const HurrayFile *f, Walk *w, HurrayError *err) {
  const uint64_t base = f->info.index_offset, len = w->len, pos = w->pos;
  const uint32_t i = w->i;
  const uint64_t A = f->info.data_alignment, region_end = w->region_end;
  const uint64_t at = base + pos;
  char field[48];
  if (len - pos < 2) goto truncated;
  const uint32_t nl = hurray__ld16(w->ix + pos);
  if (nl == 0)
    return BAD(at, hurray__path(field, sizeof field, "index[%u].name_length", i),
               "must be at least 1");
  if (len - pos < HURRAY__FILE_INDEX_ENTRY_FIXED + nl) goto truncated;
  const uint8_t *p = w->ix + pos + 2;
  if (!hurray__ascii(p, nl) && !hurray__utf8_valid(p, nl))
    return BAD(at + 2, hurray__path(field, sizeof field, "index[%u].name", i),
               "is not valid UTF-8");
  HurrayFileIndexEntry e;
  e.name = p;
  e.name_len = nl;
  p += nl;
  e.desc_off = hurray__ld64(p);
  e.desc_len = hurray__ld32(p + 8);
  e.data_off = hurray__ld64(p + 12);
  e.data_len = hurray__ld64(p + 20);
  const uint32_t eflags = hurray__ld32(p + 28);
  bool ok = eflags == 0 && e.desc_off >= w->first && (e.desc_off & 7u) == 0 &&
            e.desc_len >= HURRAY__FILE_MIN_DESCRIPTOR && e.desc_off <= region_end &&
            e.desc_len <= region_end - e.desc_off && e.data_off >= e.desc_off + e.desc_len &&
            e.data_off <= region_end && e.data_len <= region_end - e.data_off &&
            (e.data_len == 0 || (e.data_off & (A - 1)) == 0);
  if (!ok) return entry_error(f, &e, i, at + 2 + nl, eflags, region_end, err);
  /* In file order so far, the ranges are checked as they come. An entry
   * starting inside the previous tensor overlaps it; one starting before
   * the previous tensor is out of order: the sorted check (order.c) takes
   * over, when file order is first needed. */
  if (w->ordered && e.desc_off < w->prev_end) {
    HurrayFileIndexEntry prev;
    const uint8_t *q = w->ix + w->offsets[i - 1]; /* i > 0: prev_end starts at first */
    prev.name_len = hurray__ld16(q);
    prev.name = q + 2;
    prev.desc_off = hurray__ld64(q + 2 + prev.name_len);
    if (e.desc_off >= prev.desc_off)
      return BAD(e.desc_off, hurray__path(field, sizeof field, "index[%u].descriptor_offset", i),
                 "tensor \"%.*s\" at %llu overlaps tensor \"%.*s\" (index[%u]) ending at %llu",
                 (int)(e.name_len > 48 ? 48 : e.name_len), (const char *)e.name,
                 (unsigned long long)e.desc_off, (int)(prev.name_len > 48 ? 48 : prev.name_len),
                 (const char *)prev.name, i - 1, (unsigned long long)w->prev_end);
    w->ordered = false;
  }
  if (w->ordered) w->prev_end = e.data_off + e.data_len;
  uint64_t high;
  w->offsets[i] = (uint32_t)pos;
  w->hashes[i] = hurray__file_name_hash_words(e.name, nl, &high);
  w->pos = pos + HURRAY__FILE_INDEX_ENTRY_FIXED + nl;
  w->i = i + 1;
  return HURRAY_OK;
truncated:
  return BAD(at, "index", "entry runs past the end of the index (%llu bytes)",
             (unsigned long long)len);
}

/* Starts (or restarts) the walk at entry 0. */
static void walk_reset(Walk *w) {
  w->i = 0;
  w->pos = 8;
  w->ordered = true;
  w->prev_end = w->first;
}

/*
 * The whole walk: the fast loop, with walk_one for what it does not accept.
 * Entries the fast loop accepted while ordered were not compared with the
 * region end one by one: their largest end is, before anything is trusted.
 * If it fails, the walk restarts with walk_one alone, which names the first
 * rule broken.
 */
static atomic_bool g_no_fused_crc, g_slow_walk;

void hurray__file_index_test_no_fused_crc(bool on) { atomic_store(&g_no_fused_crc, on); }
void hurray__file_index_test_slow_walk(bool on) { atomic_store(&g_slow_walk, on); }

static HurrayStatus walk_all(const HurrayFile *f, Walk *w, HurrayCrcBursts *crc, bool fused,
                             HurrayError *err) {
  if (atomic_load_explicit(&g_slow_walk, memory_order_relaxed)) goto slow;
  walk_reset(w);
  for (;;) {
    const bool was_ordered = w->ordered;
    if (fused) walk_fast_crc(w, crc);
    else walk_fast_plain(w);
    if (was_ordered && w->prev_end > w->region_end) break; /* some end is past the region */
    if (w->i == w->n) return HURRAY_OK;
    HURRAY_TRY(walk_one(f, w, err));
  }
slow:
  walk_reset(w);
  while (w->i < w->n) HURRAY_TRY(walk_one(f, w, err));
  return HURRAY_OK; /* after a fast walk, not reached: walk_one finds the entry past the region */
}

/* The CRC check, which wins over an error found in the index (`st`). */
static HurrayStatus crc_first(const HurrayFile *f, const uint8_t *ix, HurrayStatus st,
                              HurrayError *err) {
  const HurrayFileInfo *in = &f->info;
  if (st == HURRAY_ERR_OUT_OF_MEMORY || !(in->flags & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C))
    return st;
  uint32_t crc = hurray_crc32c(0, ix, (size_t)in->index_length);
  if (crc == in->index_crc32c) return st;
  return hurray__fail(err, HURRAY_ERR_CRC_MISMATCH, in->index_offset, "index",
                      "CRC-32C is 0x%08X, the trailer says 0x%08X", crc, in->index_crc32c);
}



HurrayStatus hurray__file_parse_index(HurrayFile *f, const uint8_t *ix, HurrayError *err) {
  const HurrayFileInfo *in = &f->info;
  const uint64_t base = in->index_offset, len = in->index_length;
  const bool check_crc = (in->flags & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C) != 0;
  HurrayStatus st;
  f->index = ix;

  /* The checksum goes inside the walk when the CPU can do it there;
   * otherwise it is checked first, on its own. */
  const int engine = check_crc && !atomic_load_explicit(&g_no_fused_crc, memory_order_relaxed)
                         ? hurray__crc32c_bursts_best()
                         : HURRAY__CRC_BURSTS_NONE;
  const bool fused = engine != HURRAY__CRC_BURSTS_NONE;
  if (check_crc && !fused) {
    uint32_t crc = hurray_crc32c(0, ix, (size_t)len);
    if (crc != in->index_crc32c)
      return hurray__fail(err, HURRAY_ERR_CRC_MISMATCH, base, "index",
                          "CRC-32C is 0x%08X, the trailer says 0x%08X", crc, in->index_crc32c);
  }

  uint64_t count = hurray__ld64(ix);
  if (count > (len - 8) / HURRAY__FILE_INDEX_ENTRY_MIN) {
    st = BAD(base, "index.index_entry_count", "%llu entries cannot fit in %llu bytes",
             (unsigned long long)count, (unsigned long long)len);
    return fused ? crc_first(f, ix, st, err) : st;
  }
  if (in->tensor_count_hint != UINT64_MAX && in->tensor_count_hint != count) {
    st = BAD(28, "header.tensor_count_hint", "is %llu but the index has %llu entries",
             (unsigned long long)in->tensor_count_hint, (unsigned long long)count);
    return fused ? crc_first(f, ix, st, err) : st;
  }
  /* len < 2^32 (checked with the trailer), so count < 2^32 / 35. */
  const uint32_t n = (uint32_t)count;
  if (n > 0) {
    /* One block: offsets, then hashes (freed through f->offsets). */
    f->offsets = hurray__malloc((size_t)n * 2u * sizeof *f->offsets);
    if (f->offsets == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, base, "index", "out of memory");
    f->hashes = f->offsets + n;
    hurray__prefault(f->offsets, (size_t)n * 2u * sizeof *f->offsets);
  }
  f->count = n;

  Walk w;
  memset(&w, 0, sizeof w);
  w.ix = ix;
  w.len = len;
  w.first = in->first_descriptor_offset;
  w.region_end = in->kv_offset != 0 ? in->kv_offset : in->index_offset;
  w.amask = (uint64_t)in->data_alignment - 1u;
  w.offsets = f->offsets;
  w.hashes = f->hashes;
  w.n = n;
  HurrayCrcBursts crc;
  hurray__crc32c_bursts_init(&crc, engine, ix, len);

  st = walk_all(f, &w, &crc, fused, err);
  if (st == HURRAY_OK && w.pos != len)
    st = BAD(base + w.pos, "index", "%llu trailing bytes after %u entries",
             (unsigned long long)(len - w.pos), n);
  if (st != HURRAY_OK) return fused ? crc_first(f, ix, st, err) : st;
  if (fused) {
    uint32_t got = hurray__crc32c_bursts_finish(&crc);
    if (got != in->index_crc32c)
      return hurray__fail(err, HURRAY_ERR_CRC_MISMATCH, base, "index",
                          "CRC-32C is 0x%08X, the trailer says 0x%08X", got, in->index_crc32c);
  }
  /* File order and disjointness: each tensor (descriptor, then data) must
   * start at or after the end of the previous one. Checked during the walk
   * while the index is in file order; otherwise when file order is first
   * needed (order.c). */
  f->in_file_order = w.ordered;
  return HURRAY_OK;
}
