/* Tensor names and KV keys: UTF-8 validation, hashing, a hash index. */
#include "internal/file.h"

/* ---- UTF-8 ------------------------------------------------------------------ */

bool hurray__utf8_valid(const uint8_t *p, size_t len) {
  if (len <= 64 && hurray__ascii(p, len)) return true;
  size_t i = 0;
  while (i < len) {
    /* ASCII fast path, eight bytes at a time. */
    while (i + 8 <= len) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= len) break;
    uint8_t c = p[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;       /* no overlongs */
      else if (c == 0xED) hi = 0x9F;  /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;       /* no overlongs */
      else if (c == 0xF4) hi = 0x8F;  /* <= U+10FFFF */
    } else {
      return false; /* continuation byte, C0/C1, F5..FF */
    }
    if (len - i - 1 < need) return false;
    if (p[i + 1] < lo || p[i + 1] > hi) return false;
    for (size_t k = 2; k <= need; k++)
      if ((p[i + k] & 0xC0u) != 0x80u) return false;
    i += need + 1;
  }
  return true;
}

/* ---- hashing --------------------------------------------------------------- */

static uint64_t g_seed;
static HurrayOnce g_seed_once = HURRAY__ONCE_INIT;
static atomic_bool g_hash_constant;

static void init_seed(void) {
  uint64_t sec, nsec;
  uint64_t s = (uint64_t)(uintptr_t)&g_seed; /* address-space randomisation */
  if (hurray__os_clock(true, &sec, &nsec)) s ^= nsec * 0x9E3779B97F4A7C15ull ^ sec;
  s ^= hurray__os_pid() << 32;
  g_seed = hurray__mix64(s) | 1u;
}

void hurray__name_hash_test_constant(bool on) { atomic_store(&g_hash_constant, on); }

uint64_t hurray__name_seed(void) {
  if (HURRAY_UNLIKELY(atomic_load_explicit(&g_hash_constant, memory_order_relaxed))) return 0;
  hurray__once(&g_seed_once, init_seed);
  return g_seed;
}

uint32_t hurray__name_hash(const uint8_t *p, size_t len) {
  return hurray__name_hash_s(hurray__name_seed(), p, len);
}

int hurray__name_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t n = alen < blen ? alen : blen;
  int c = n > 0 ? memcmp(a, b, n) : 0;
  if (c != 0) return c;
  return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* ---- hash index --------------------------------------------------------------- */

static uint32_t cap_for(uint32_t n) {
  uint32_t cap = 16;
  while (cap / 2 < n) cap *= 2;
  return cap;
}

HurrayStatus hurray__name_index_init(HurrayNameIndex *ix, uint32_t n) {
  memset(ix, 0, sizeof *ix);
  if (n > UINT32_MAX / 4) return HURRAY_ERR_OUT_OF_MEMORY;
  uint32_t cap = cap_for(n);
  ix->slots = hurray__calloc(cap, sizeof *ix->slots);
  if (ix->slots == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  ix->cap = cap;
  return HURRAY_OK;
}

static void place(uint64_t *slots, uint32_t cap, uint64_t slot) {
  uint32_t mask = cap - 1;
  uint32_t pos = (uint32_t)(slot >> 32) & mask;
  while (slots[pos] != 0) pos = (pos + 1) & mask;
  slots[pos] = slot;
}

HurrayStatus hurray__name_index_reserve(HurrayNameIndex *ix, uint32_t n) {
  if (ix->cap != 0 && n <= ix->cap / 2) return HURRAY_OK;
  if (n > UINT32_MAX / 4) return HURRAY_ERR_OUT_OF_MEMORY;
  uint32_t cap = cap_for(n);
  uint64_t *slots = hurray__calloc(cap, sizeof *slots);
  if (slots == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  for (uint32_t k = 0; k < ix->cap; k++)
    if (ix->slots[k] != 0) place(slots, cap, ix->slots[k]);
  hurray__free(ix->slots);
  ix->slots = slots;
  ix->cap = cap;
  return HURRAY_OK;
}

static inline bool index_insert(HurrayNameIndex *ix, uint32_t h, uint32_t i, HurrayNameAt at,
                                const void *ctx, uint32_t *dup) {
  uint32_t mask = ix->cap - 1;
  uint32_t pos = h & mask;
  size_t len = 0;
  const uint8_t *name = NULL;
  for (;;) {
    uint64_t s = ix->slots[pos];
    if (s == 0) break;
    if ((uint32_t)(s >> 32) == h) {
      uint32_t other = (uint32_t)s - 1u;
      if (name == NULL) name = at(ctx, i, &len);
      size_t olen;
      const uint8_t *oname = at(ctx, other, &olen);
      if (olen == len && memcmp(oname, name, len) == 0) {
        *dup = other;
        return false;
      }
    }
    ix->probes++;
    pos = (pos + 1) & mask;
  }
  ix->slots[pos] = ((uint64_t)h << 32) | ((uint64_t)i + 1u);
  ix->count++;
  return true;
}

bool hurray__name_index_insert(HurrayNameIndex *ix, uint32_t h, uint32_t i, HurrayNameAt at,
                               const void *ctx, uint32_t *dup) {
  return index_insert(ix, h, i, at, ctx, dup);
}

bool hurray__name_index_find(const HurrayNameIndex *ix, const uint8_t *name, size_t len,
                             uint32_t h, HurrayNameAt at, const void *ctx, uint32_t *i) {
  if (ix->cap == 0) return false;
  uint32_t mask = ix->cap - 1;
  uint32_t pos = h & mask;
  for (;;) {
    uint64_t s = ix->slots[pos];
    if (s == 0) return false;
    if ((uint32_t)(s >> 32) == h) {
      uint32_t other = (uint32_t)s - 1u;
      size_t olen;
      const uint8_t *oname = at(ctx, other, &olen);
      if (olen == len && (len == 0 || memcmp(oname, name, len) == 0)) {
        *i = other;
        return true;
      }
    }
    pos = (pos + 1) & mask;
  }
}

void hurray__name_index_free(HurrayNameIndex *ix) {
  hurray__free(ix->slots);
  memset(ix, 0, sizeof *ix);
}

/* ---- sorting and lookups ------------------------------------------------------ */

static int cmp_items(HurrayNameAt at, const void *ctx, uint32_t a, uint32_t b) {
  size_t al, bl;
  const uint8_t *an = at(ctx, a, &al);
  const uint8_t *bn = at(ctx, b, &bl);
  return hurray__name_cmp(an, al, bn, bl);
}

HurrayStatus hurray__names_sort(uint32_t *perm, uint32_t n, HurrayNameAt at, const void *ctx) {
  if (n < 2) return HURRAY_OK;
  uint32_t *tmp = hurray__malloc((size_t)n * sizeof *tmp);
  if (tmp == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  /* Bottom-up merge sort: runs of width w merged from src into dst. */
  uint32_t *src = perm, *dst = tmp;
  for (uint64_t w = 1; w < n; w *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * w) {
      uint64_t mid = lo + w < n ? lo + w : n;
      uint64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      uint64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = cmp_items(at, ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != perm) memcpy(perm, src, (size_t)n * sizeof *perm);
  hurray__free(tmp);
  return HURRAY_OK;
}

static HurrayStatus build_perm(HurrayNameLookup *lk, uint32_t n, HurrayNameAt at,
                               const void *ctx, uint32_t *dup_a, uint32_t *dup_b) {
  lk->kind = HURRAY__LOOKUP_PERM;
  lk->perm = hurray__malloc((size_t)(n ? n : 1) * sizeof *lk->perm);
  if (lk->perm == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < n; i++) lk->perm[i] = i;
  HURRAY_TRY(hurray__names_sort(lk->perm, n, at, ctx));
  for (uint32_t k = 1; k < n; k++) {
    if (cmp_items(at, ctx, lk->perm[k - 1], lk->perm[k]) == 0) {
      uint32_t a = lk->perm[k - 1], b = lk->perm[k];
      *dup_a = a < b ? a : b;
      *dup_b = a < b ? b : a;
      return HURRAY_ERR_DUPLICATE_NAME;
    }
  }
  return HURRAY_OK;
}

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#else
#define PREFETCH_W(p) ((void)(p))
#endif

HurrayStatus hurray__lookup_build(HurrayNameLookup *lk, uint32_t n, bool sorted,
                                  HurrayNameAt at, const void *ctx, const uint32_t *hashes,
                                  uint32_t *dup_a, uint32_t *dup_b) {
  memset(lk, 0, sizeof *lk);
  if (sorted) {
    lk->kind = HURRAY__LOOKUP_SORTED;
    for (uint32_t i = 1; i < n; i++) {
      int c = cmp_items(at, ctx, i - 1, i);
      if (c >= 0) {
        *dup_a = i - 1;
        *dup_b = i;
        return c == 0 ? HURRAY_ERR_DUPLICATE_NAME : HURRAY_ERR_INVALID_ARGUMENT;
      }
    }
    return HURRAY_OK;
  }
  lk->kind = HURRAY__LOOKUP_HASH;
  HURRAY_TRY(hurray__name_index_init(&lk->hash, n));
  const uint64_t seed = hashes == NULL ? hurray__name_seed() : 0;
  /* Linear probing at load <= 1/2 averages under 2 probes per insert; far
   * more means the names were chosen to collide. */
  const uint64_t budget = 16u * (uint64_t)n + 1024u;
  const uint32_t mask = lk->hash.cap - 1;
  enum { AHEAD = 32 };
  for (uint32_t i = 0; i < n; i++) {
    uint32_t h;
    if (hashes != NULL) {
      /* The table is far bigger than a cache: fetch the slot needed a few
       * inserts from now. */
      if (i + AHEAD < n) PREFETCH_W(&lk->hash.slots[hashes[i + AHEAD] & mask]);
      h = hashes[i];
    } else {
      size_t len;
      const uint8_t *name = at(ctx, i, &len);
      h = hurray__name_hash_s(seed, name, len);
    }
    uint32_t other;
    if (!index_insert(&lk->hash, h, i, at, ctx, &other)) {
      *dup_a = other;
      *dup_b = i;
      return HURRAY_ERR_DUPLICATE_NAME;
    }
    if (HURRAY_UNLIKELY(lk->hash.probes > budget)) {
      hurray__name_index_free(&lk->hash);
      return build_perm(lk, n, at, ctx, dup_a, dup_b);
    }
  }
  return HURRAY_OK;
}

bool hurray__lookup_find(const HurrayNameLookup *lk, uint32_t n, const uint8_t *name,
                         size_t len, HurrayNameAt at, const void *ctx, uint32_t *out) {
  if (lk->kind == HURRAY__LOOKUP_HASH)
    return hurray__name_index_find(&lk->hash, name, len, hurray__name_hash(name, len), at, ctx,
                                   out);
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    uint32_t item = lk->kind == HURRAY__LOOKUP_PERM ? lk->perm[mid] : mid;
    size_t il;
    const uint8_t *iname = at(ctx, item, &il);
    int c = hurray__name_cmp(iname, il, name, len);
    if (c == 0) {
      *out = item;
      return true;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

void hurray__lookup_free(HurrayNameLookup *lk) {
  hurray__name_index_free(&lk->hash);
  hurray__free(lk->perm);
  memset(lk, 0, sizeof *lk);
}
