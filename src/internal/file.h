/*
 * Internals of the .hrry container (src/file). Never installed.
 */
#ifndef HURRAY_INTERNAL_FILE_H
#define HURRAY_INTERNAL_FILE_H

#include <stdatomic.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hurray/file.h"
#include "internal/common.h"
#include "internal/platform.h"

/* ---- wire constants ----------------------------------------------------------- */

#define HURRAY__FILE_INDEX_ENTRY_FIXED 34u  /* name_len excluded: 2 + 8 + 4 + 8 + 8 + 4 */
#define HURRAY__FILE_INDEX_ENTRY_MIN 35u    /* with a 1-byte name */
#define HURRAY__FILE_KV_ENTRY_MIN 5u        /* key_len 2, key 1, tag 1, bool 1 */
#define HURRAY__FILE_MIN_SIZE (HURRAY_FILE_HEADER_LEN + HURRAY_FILE_TRAILER_LEN)
#define HURRAY__FILE_MIN_DESCRIPTOR 20u

/* ---- CRC-32C (src/file/crc32c.c) ------------------------------------------- */

/* Portable table implementation (slicing by 8). Same contract as hurray_crc32c. */
HURRAY_INTERNAL uint32_t hurray__crc32c_sw(uint32_t crc, const void *data, size_t len);
/* True when a hardware implementation is available on this CPU. */
HURRAY_INTERNAL bool hurray__crc32c_hw_available(void);
/* Hardware implementation; only call when hurray__crc32c_hw_available(). */
HURRAY_INTERNAL uint32_t hurray__crc32c_hw(uint32_t crc, const void *data, size_t len);
/*
 * The raw CRC register (no pre/post inversion) `reg` advanced over `nbytes`
 * zero bytes: reg * x^(8 nbytes) mod P. Since the register is linear, the
 * register after A|B is hurray__crc32c_shift(reg after A, |B|) xor (the
 * register after B started from 0); this merges independent streams.
 */
HURRAY_INTERNAL uint32_t hurray__crc32c_shift(uint32_t reg, uint64_t nbytes);
/* hurray_crc32c(crc, zeros, nbytes) without the zeros: the CRC continued over
 * nbytes zero bytes (the padding the writer leaves as gaps), in O(log n). */
static inline uint32_t hurray__crc32c_zeros(uint32_t crc, uint64_t nbytes) {
  return nbytes == 0 ? crc : ~hurray__crc32c_shift(~crc, nbytes);
}

/*
 * The fastest CRC-32C for large inputs (src/file/crc32c.c): AVX-512
 * VPCLMULQDQ folding with four accumulators (x86-64, detected at run time),
 * else hurray__crc32c_hw / _sw. Same contract as hurray_crc32c, which uses it
 * from HURRAY__CRC_BULK_MIN bytes on.
 */
HURRAY_INTERNAL bool hurray__crc32c_bulk_available(void);
HURRAY_INTERNAL uint32_t hurray__crc32c_bulk(uint32_t crc, const void *data, uint64_t len);
#define HURRAY__CRC_BULK_MIN 2048u

/* ---- data checksums (src/file/checksums.c) --------------------------------- */

/* Bytes per index entry in the HURRAY_FILE_KV_DATA_CRC32C record. */
#define HURRAY__DATA_CRC_ENTRY 8u

/*
 * CRC-32C in bursts (src/file/crc_bursts.c), for a loop that interleaves
 * them with its own work over the same bytes: each call of burst() advances
 * the checksum by about 256 bytes (nothing once it is done); finish() does
 * what is left and returns hurray_crc32c(0, data, len).
 */
enum {
  HURRAY__CRC_BURSTS_NONE = 0,     /* no such engine here: checksum on its own */
  HURRAY__CRC_BURSTS_STREAMS3 = 1, /* the crc32 instruction on three streams */
  HURRAY__CRC_BURSTS_CLMUL512 = 2  /* AVX-512 VPCLMULQDQ folding */
};
typedef struct HurrayCrcBursts {
  _Alignas(64) uint8_t acc[64]; /* CLMUL512: the folded accumulator */
  void (*burst)(struct HurrayCrcBursts *c);
  const uint8_t *data;
  uint64_t len;
  uint64_t done;       /* CLMUL512: bytes folded; STREAMS3: bytes of each third */
  uint64_t third;      /* STREAMS3: length of each stream, a multiple of 8 */
  uint64_t c0, c1, c2; /* STREAMS3: the raw registers */
  int kind;
} HurrayCrcBursts;

/* Whether this CPU has the engine `kind`. */
HURRAY_INTERNAL bool hurray__crc32c_bursts_available(int kind);
/* The fastest engine this CPU has (HURRAY__CRC_BURSTS_NONE when none). */
HURRAY_INTERNAL int hurray__crc32c_bursts_best(void);
/* Starts over data[0, len) (borrowed until finish) with an available `kind`
 * (NONE: burst() does nothing and finish() computes everything). */
HURRAY_INTERNAL void hurray__crc32c_bursts_init(HurrayCrcBursts *c, int kind, const void *data,
                                                uint64_t len);
HURRAY_INTERNAL uint32_t hurray__crc32c_bursts_finish(HurrayCrcBursts *c);
/* The CLMUL512 engine of the bursts, in src/file/crc32c.c beside the bulk loop
 * that shares its folding (crc_bursts.c calls crc32c.c, never the reverse):
 * start sets up c, initialized with kind CLMUL512, when
 * hurray__crc32c_bulk_available(); finish returns hurray_crc32c(0, data, len). */
HURRAY_INTERNAL void hurray__crc32c_clmul_start(HurrayCrcBursts *c);
HURRAY_INTERNAL uint32_t hurray__crc32c_clmul_finish(HurrayCrcBursts *c);

/* ---- names (src/file/names.c) ------------------------------------------------ */

/* Strict UTF-8 check (no overlongs, surrogates or code points > U+10FFFF). */
HURRAY_INTERNAL bool hurray__utf8_valid(const uint8_t *p, size_t len);

/* True when every byte is ASCII (then the bytes are valid UTF-8). */
static inline bool hurray__ascii(const uint8_t *p, size_t len) {
  uint64_t acc = 0;
  while (len >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    acc |= w;
    p += 8;
    len -= 8;
  }
  while (len-- > 0) acc |= *p++;
  return (acc & 0x8080808080808080ull) == 0;
}

/* The per-process hash seed (random; 0 only under the test hook below, which
 * makes every name hash alike). */
HURRAY_INTERNAL uint64_t hurray__name_seed(void);

static inline uint64_t hurray__mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

/* 32-bit seeded hash of a name (seed from hurray__name_seed). */
static inline uint32_t hurray__name_hash_s(uint64_t seed, const uint8_t *p, size_t len) {
  if (HURRAY_UNLIKELY(seed == 0)) return 7;
  uint64_t h = seed ^ ((uint64_t)len * 0x9E3779B97F4A7C15ull);
  while (len > 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    len -= 8;
  }
  uint64_t w;
  if (len >= 4) { /* two overlapping loads cover 4..8 bytes */
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + len - 4, 4);
    w = (uint64_t)a | ((uint64_t)b << 32);
  } else if (len > 0) {
    w = (uint64_t)p[0] | ((uint64_t)p[len / 2] << 8) | ((uint64_t)p[len - 1] << 16);
  } else {
    w = 0;
  }
  h = (h ^ w) * 0x94d049bb133111ebull;
  return (uint32_t)(hurray__mix64(h ^ seed) >> 32);
}

/* 32-bit hash of a name, seeded per process (hash flooding resistance). */
HURRAY_INTERNAL uint32_t hurray__name_hash(const uint8_t *p, size_t len);

/* Returns the name of item i of a table (for the hash index). */
typedef const uint8_t *(*HurrayNameAt)(const void *ctx, uint32_t i, size_t *len);

/*
 * An open-addressing hash index over names stored elsewhere. Each slot holds
 * (hash << 32) | (item + 1); 0 is empty. Capacity is a power of two, kept at
 * most half full.
 */
typedef struct HurrayNameIndex {
  uint64_t *slots;
  uint32_t cap;   /* 0 when empty */
  uint32_t count;
  uint64_t probes; /* total probe steps taken while inserting */
} HurrayNameIndex;

/* Allocates for `n` items (n <= UINT32_MAX / 4). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__name_index_init(
    HurrayNameIndex *ix, uint32_t n);
/* Grows when needed, then inserts. HURRAY_ERR_OUT_OF_MEMORY. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__name_index_reserve(
    HurrayNameIndex *ix, uint32_t n);
/*
 * Inserts item `i` with hash `h`, unless an item with an equal name exists:
 * then returns false and sets *dup to that item. Requires room (init or
 * reserve for the final count).
 */
HURRAY_INTERNAL bool hurray__name_index_insert(HurrayNameIndex *ix, uint32_t h, uint32_t i,
                                               HurrayNameAt at, const void *ctx,
                                               uint32_t *dup);
/* Looks a name up; true and *i on a hit. */
HURRAY_INTERNAL bool hurray__name_index_find(const HurrayNameIndex *ix, const uint8_t *name,
                                             size_t len, uint32_t h, HurrayNameAt at,
                                             const void *ctx, uint32_t *i);
HURRAY_INTERNAL void hurray__name_index_free(HurrayNameIndex *ix);

/* Byte-wise comparison of two names (memcmp, shorter first on a tie). */
HURRAY_INTERNAL int hurray__name_cmp(const uint8_t *a, size_t alen, const uint8_t *b,
                                     size_t blen);

/* Sorts perm[0..n) by name (stable merge sort, O(n log n) comparisons).
 * HURRAY_ERR_OUT_OF_MEMORY. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__names_sort(
    uint32_t *perm, uint32_t n, HurrayNameAt at, const void *ctx);

/* How a table of unique names is searched. */
typedef enum HurrayLookupKind {
  HURRAY__LOOKUP_HASH = 0,   /* hash index */
  HURRAY__LOOKUP_SORTED = 1, /* the items themselves are in strict name order */
  HURRAY__LOOKUP_PERM = 2    /* perm lists the items in name order (hash flooding fallback) */
} HurrayLookupKind;

typedef struct HurrayNameLookup {
  HurrayLookupKind kind;
  HurrayNameIndex hash;
  uint32_t *perm;
} HurrayNameLookup;

/*
 * Builds a lookup over n names and proves them unique. `hashes` (or NULL to
 * compute them) holds hurray__name_hash of each name. `sorted`: the names
 * must be in strictly ascending byte order (checked; no index is built).
 * Otherwise a hash index is built; when the probe count shows hash flooding,
 * it falls back to sorting (O(n log n) worst case). On a duplicate returns
 * HURRAY_ERR_DUPLICATE_NAME with *dup_a < *dup_b the two items; when
 * `sorted` and the order is wrong returns HURRAY_ERR_INVALID_ARGUMENT with
 * *dup_b the first item out of order. HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__lookup_build(
    HurrayNameLookup *lk, uint32_t n, bool sorted, HurrayNameAt at, const void *ctx,
    const uint32_t *hashes, uint32_t *dup_a, uint32_t *dup_b);
HURRAY_INTERNAL bool hurray__lookup_find(const HurrayNameLookup *lk, uint32_t n,
                                         const uint8_t *name, size_t len, HurrayNameAt at,
                                         const void *ctx, uint32_t *out);
HURRAY_INTERNAL void hurray__lookup_free(HurrayNameLookup *lk);

/* Test hook: when true, every name hashes to the same value (forces the
 * hash flooding fallback). */
HURRAY_INTERNAL void hurray__name_hash_test_constant(bool on);

/* ---- KV section (src/file/kv.c) ------------------------------------------------ */

/* A growable byte buffer. */
typedef struct HurrayByteBuf {
  uint8_t *data;
  size_t len;
  size_t cap;
} HurrayByteBuf;

HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__buf_reserve(HurrayByteBuf *b, size_t extra);
HURRAY_INTERNAL void hurray__buf_free(HurrayByteBuf *b);

/* Checks a value given to the writer (tags, UTF-8, sizes) and returns its
 * encoded length (tag byte included) in *out_len. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__kv_value_check(
    const HurrayKvValue *v, uint64_t *out_len, HurrayError *err);
/* Appends the tag byte and payload of a checked value (room reserved). */
HURRAY_INTERNAL void hurray__kv_value_encode(const HurrayKvValue *v, uint8_t *out);

/* One decoded KV entry (the name leads, for HurrayNameAt). */
typedef struct HurrayKvEntry {
  const uint8_t *key;
  uint32_t key_len;
  HurrayKvValue value;
} HurrayKvEntry;

/* A decoded KV section. Keys and string/bytes payloads point into the bytes
 * that were parsed; arrays of numbers and of strings live in `arena`. */
typedef struct HurrayKvTable {
  HurrayKvEntry *entries;
  uint32_t count;
  void *arena;
  HurrayNameLookup lookup;
} HurrayKvTable;

/*
 * Parses and validates a KV section of `len` bytes found at file offset
 * `base` (for messages). Every length is checked against the bytes left
 * before anything is allocated; the allocations are bounded by a constant
 * times len. `bytes` must outlive the table. HURRAY_ERR_INVALID_KV.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__kv_parse(const uint8_t *bytes, uint64_t len,
                                                               uint64_t base, HurrayKvTable *out,
                                                               HurrayError *err);
HURRAY_INTERNAL void hurray__kv_table_free(HurrayKvTable *t);
HURRAY_INTERNAL const uint8_t *hurray__kv_key_at(const void *ctx, uint32_t i, size_t *len);

/* ---- shared memory behind tensors (src/file/source.c) ------------------------ */

/*
 * The bytes of an opened file (a mapping, or memory given by the caller),
 * shared by the HurrayFile and every tensor fetched from it. A writable
 * (copy-on-write) mapping is shared too: a write through one tensor is seen
 * by every tensor of the same file over the same bytes.
 */
typedef struct HurrayFileSource {
  atomic_size_t refs;
  const uint8_t *base; /* file byte 0 */
  uint64_t size;
  void *map_addr;      /* mapping to unmap, or NULL */
  size_t map_len;
  bool writable;       /* a private copy-on-write mapping (HURRAY_FILE_ACCESS_MMAP_COPY) */
  HurrayFileReleaseFn release; /* caller memory */
  void *release_ctx;
} HurrayFileSource;

HURRAY_INTERNAL HurrayFileSource *hurray__source_retain(HurrayFileSource *s);
HURRAY_INTERNAL void hurray__source_release(HurrayFileSource *s);

/*
 * The one byte source under every read that copies (src/file/io.c): where
 * the bytes of a file whose tensors are not views of a mapping come from
 * (HURRAY_FILE_ACCESS_READ, a caller's reader), and what the open, the
 * descriptor and tensor fetches, slices, verification and the truncation
 * diagnosis read through. Exactly one of its sources is set:
 *  - fd: a file, read with pread;
 *  - reader.read_at: the caller's read-at function (hurray_file_open_reader);
 *  - memory: caller memory (hurray_file_open_memory with access READ), copied.
 */
typedef struct HurrayFileBytes {
  HurrayOsFile fd;
  HurrayFileReader reader;
  HurrayFileSource *memory; /* retained */
  uint64_t size;            /* the file's size (what every read is checked against) */
  uint32_t workers;         /* fd: threads for one large read (hurray__parallel_pread) */
} HurrayFileBytes;

/* An empty byte source (no source set). */
HURRAY_INTERNAL void hurray__bytes_init(HurrayFileBytes *b);
/* Reads exactly len bytes at off into buf; HURRAY_ERR_IO ("<what>: ..." at
 * off; a read past the end is one, "unexpected end of file"). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__bytes_read(
    const HurrayFileBytes *b, void *buf, uint64_t len, uint64_t off, const char *what,
    HurrayError *err);
/* Whether a source is set. */
static inline bool hurray__bytes_set(const HurrayFileBytes *b) {
  return b->fd != HURRAY__OS_FILE_NONE || b->reader.read_at != NULL || b->memory != NULL;
}
/* Closes the source (the fd, the reader's close, the memory's release). */
HURRAY_INTERNAL void hurray__bytes_close(HurrayFileBytes *b);

/* ---- work over several threads (src/file/workers.c) ------------------------------- */

/* The smallest slice a worker is given (and a READ-access read is cut from
 * twice that size on). */
#define HURRAY__MIN_SLICE ((uint64_t)16 << 20)
/* HurrayFileOpenOptions.workers resolved: 0 gives HURRAY_WORKERS from the
 * environment (when a number in [1, HURRAY_FILE_MAX_WORKERS]) or
 * HURRAY_FILE_DEFAULT_WORKERS; larger values are capped. */
HURRAY_INTERNAL uint32_t hurray__file_workers(uint32_t asked);
/* The length of each of the `workers` slices of len bytes: page-aligned, at
 * least HURRAY__MIN_SLICE (measured: a few large slices read faster than many
 * small pieces, whose read-around windows overlap their neighbours'). */
HURRAY_INTERNAL uint64_t hurray__workers_slice(uint64_t len, uint32_t workers);
/* Does piece k of ctx's work; HURRAY_OK or an error recorded in err. */
typedef HurrayStatus (*HurrayWorkFn)(const void *ctx, uint64_t k, HurrayError *err);
/* Runs pieces [0, count) on up to `workers` threads, the calling one among
 * them (a thread that cannot start leaves its share to the others); stops
 * early on an error and reports the one of the lowest failed piece. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__workers_run(HurrayWorkFn fn,
                                                                  const void *ctx,
                                                                  uint64_t count,
                                                                  uint32_t workers,
                                                                  HurrayError *err);

/* Test hook (src/file/prefetch.c): fn replaces hurray__os_populate_read for
 * the read-ahead of mappings (same contract); NULL restores it. Set it while
 * no prefetch runs. */
HURRAY_INTERNAL void hurray__prefetch_populate_hook(int (*fn)(const void *addr, size_t len));

/* ---- I/O helpers over internal/platform.h (src/file/io.c) ------------------------- */

/* Reads exactly len bytes at off; HURRAY_ERR_IO (short file included). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__pread_full(
    HurrayOsFile fd, void *buf, uint64_t len, uint64_t off, const char *what, HurrayError *err);
/* Writes exactly len bytes at off. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__pwrite_full(
    HurrayOsFile fd, const void *buf, uint64_t len, uint64_t off, const char *what,
    HurrayError *err);
/* Starts writing [off, off + len) of fd to the disk without waiting (a hint
 * for durable saves; a no-op where the system has no such call). */
HURRAY_INTERNAL void hurray__write_behind(HurrayOsFile fd, uint64_t off, uint64_t len);
/* Maps the pages of [p, p + n) (memory about to be written in full) in one
 * call instead of one page fault each; a hint, for blocks of 64 KiB or more. */
HURRAY_INTERNAL void hurray__prefault(void *p, size_t n);
/* Records a system error code (internal/platform.h) in err as HURRAY_ERR_IO:
 * "<what>: <text> (errno N)" ("(error N)" on Windows, where the system's
 * out-of-memory codes give HURRAY_ERR_OUT_OF_MEMORY instead). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__io_fail(HurrayError *err, int errnum,
                                                              uint64_t offset, const char *what);

/* ---- reader internals shared by reader.c, index.c, lookup.c, tensor.c and composite.c */

/* One index entry, decoded from the index bytes (hurray__file_entry_at). */
typedef struct HurrayFileIndexEntry {
  const uint8_t *name;
  uint32_t name_len;
  uint32_t desc_len;
  uint64_t desc_off;
  uint64_t data_off;
  uint64_t data_len;
} HurrayFileIndexEntry;

typedef struct HurrayIndexLookup HurrayIndexLookup; /* src/file/lookup.c */
typedef struct HurrayFileOrder HurrayFileOrder;     /* src/file/order.c */

/*
 * The name hash of the index walk, cheap enough to compute for every entry
 * at open. With SSE2: the name's last 16 bytes (under 16 bytes: the name,
 * zero-padded), then its 16-byte blocks from the start, each folded in as
 * x = rotate32(x) ^ block; then the two halves of x multiplied by odd
 * constants. Elsewhere the same with 8-byte words, x = rotl(x, 23) ^ word.
 * Not seeded and not collision resistant: the lookups reseed it, compare
 * names on every match, and fall back to sorting when collisions are forced.
 * The value is only ever compared within one process.
 * `p` must have 16 readable bytes (true inside an index entry, whose 32
 * fixed bytes follow the name); *high gets non-zero when a byte of the name
 * has its high bit set (for an ASCII test).
 */
#if defined(__SSE2__)
static inline uint32_t hurray__file_name_hash_words(const uint8_t *p, uint32_t n,
                                                    uint64_t *high) {
  /* 16 bytes of 0xFF, then 16 of 0: loading at 16 - n keeps n bytes. */
  static const uint8_t keep[32] = {255, 255, 255, 255, 255, 255, 255, 255,
                                   255, 255, 255, 255, 255, 255, 255, 255};
  __m128i x, acc;
  if (n <= 16) {
    x = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)p),
                      _mm_loadu_si128((const __m128i *)(const void *)(keep + 16 - n)));
    acc = x;
  } else {
    x = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16));
    acc = x;
    for (uint32_t k = 0; k + 16 < n; k += 16) {
      __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + k));
      acc = _mm_or_si128(acc, b);
      x = _mm_xor_si128(_mm_shuffle_epi32(x, 0x39), b);
    }
  }
  *high = (uint64_t)_mm_movemask_epi8(acc);
  uint64_t lo = (uint64_t)_mm_cvtsi128_si64(x);
  uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x));
  uint64_t h = (lo ^ n) * UINT64_C(0x9E3779B97F4A7C15) + hi * UINT64_C(0xC2B2AE3D27D4EB4F);
  return (uint32_t)(h >> 32);
}
#else
static inline uint64_t hurray__rotl23(uint64_t x) { return (x << 23) | (x >> 41); }
static inline uint32_t hurray__file_name_hash_words(const uint8_t *p, uint32_t n,
                                                    uint64_t *high) {
  uint64_t x, acc;
  if (n >= 8) {
    x = hurray__ld64(p + n - 8);
    acc = x;
    for (uint32_t k = 0; k + 8 < n; k += 8) {
      uint64_t w = hurray__ld64(p + k);
      acc |= w;
      x = hurray__rotl23(x) ^ w;
    }
  } else {
    x = hurray__ld64(p) & ((UINT64_C(1) << (8 * n)) - 1u);
    acc = x;
  }
  *high = acc & UINT64_C(0x8080808080808080);
  return (uint32_t)(((x ^ n) * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}
#endif

/* The same for a name in the caller's memory (read only inside [p, p + n)). */
static inline uint32_t hurray__file_name_hash(const uint8_t *p, uint32_t n) {
  uint64_t high;
  if (n >= 16) return hurray__file_name_hash_words(p, n, &high);
  uint8_t pad[16] = {0};
  memcpy(pad, p, n);
  return hurray__file_name_hash_words(pad, n, &high);
}

/* ---- shared tensors: the views record (src/file/views.c) -------------------- */

/* What the rules of a view need to know of its base (from its descriptor). */
typedef struct HurrayViewBase {
  uint8_t type_tag;
  uint8_t layout_tag;
  bool quantized;
  bool counted;      /* the element count is known (no dynamic dimension) */
  uint64_t elements; /* element count */
  uint64_t byte_offset;
} HurrayViewBase;

HURRAY_INTERNAL void hurray__view_base_of(const HurrayDescriptorFields *f, HurrayViewBase *out);
/*
 * Checks view `v` (not same-kind) against its base: fails with `status` at
 * `offset` with field `field` and a reason "view '<name>': <rule broken>".
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__view_check(
    const HurrayFileView *v, const HurrayViewBase *b, HurrayStatus status, uint64_t offset,
    const char *field, HurrayError *err);
/* Appends `"name":{...}` (the JSON of one view, as the record holds it) to b. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__views_encode(HurrayByteBuf *b,
                                                                   const HurrayFileView *v);
/* The parsed record of an open file: built on first need, published once. */
typedef struct HurrayFileViews HurrayFileViews;
HURRAY_INTERNAL void hurray__file_views_free(HurrayFile *f);

struct HurrayFile {
  HurrayFileSource *source; /* mapping or caller memory: tensors are views; NULL in read mode */
  HurrayFileBytes bytes;    /* read mode: where tensors are read from; unset otherwise */
  HurrayFileOpenOptions opts;
  HurrayFileInfo info;
  uint8_t *owned_index;     /* read mode: the index bytes */
  uint8_t *owned_kv;        /* read mode: the KV bytes */
  const uint8_t *index;     /* the index bytes (mapping, caller memory or owned_index) */
  uint32_t *offsets;        /* entry i starts at index + offsets[i] (its name_length) */
  uint32_t *hashes;         /* hurray__file_name_hash of entry i's name (same block) */
  uint32_t count;
  bool in_file_order;       /* the index lists the tensors by descriptor offset */
  HurrayKvTable kv;
  /* Name lookups (lookup.c): the first ones scan the index; then a lookup
   * structure is built once, under the mutex, and published. */
  _Atomic(HurrayIndexLookup *) lookup;
  atomic_uint finds;
  /* File order when the index is not in it (order.c): built on first need,
   * under the same mutex. */
  _Atomic(HurrayFileOrder *) file_order;
  /* The views record (views.c): parsed and checked on first need, then
   * published with a compare-and-swap (no lock: its checks look names up). */
  _Atomic(HurrayFileViews *) views;
  bool mutex_ready;
  HurrayMutex mutex;
};

/* Entry i (< f->count), decoded. Open proved every entry in bounds. */
static inline void hurray__file_entry_at(const HurrayFile *f, uint32_t i,
                                         HurrayFileIndexEntry *e) {
  const uint8_t *p = f->index + f->offsets[i];
  e->name_len = hurray__ld16(p);
  e->name = p + 2;
  p += 2u + e->name_len;
  e->desc_off = hurray__ld64(p);
  e->desc_len = hurray__ld32(p + 8);
  e->data_off = hurray__ld64(p + 12);
  e->data_len = hurray__ld64(p + 20);
}

/* Name of entry i (borrowed from the index bytes). */
static inline const uint8_t *hurray__file_entry_name(const HurrayFile *f, uint32_t i,
                                                     size_t *len) {
  const uint8_t *p = f->index + f->offsets[i];
  *len = hurray__ld16(p);
  return p + 2;
}

/*
 * Parses and validates the index (`ix`, f->info.index_length bytes at file
 * offset f->info.index_offset): CRC-32C when flagged (checked while the
 * entries are walked when the CPU has a CRC instruction), the entry count,
 * every entry (bounds, flags, placement, UTF-8 names) and the disjointness
 * of the tensors when they are listed in file order. Fills f->index,
 * f->offsets, f->hashes, f->count, f->in_file_order.
 * Names are not compared with each other here (see lookup.c).
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_parse_index(
    HurrayFile *f, const uint8_t *ix, HurrayError *err);

/* Test hook: when true, the index CRC is computed on its own before the
 * walk, as on CPUs without a CRC instruction. */
HURRAY_INTERNAL void hurray__file_index_test_no_fused_crc(bool on);
/* Tests: writers opened while `on` never reserve blocks ahead of writing
 * (src/file/writer.c), to compare files written both ways. */
HURRAY_INTERNAL void hurray__file_writer_test_no_prealloc(bool on);
/* Whether a writer reserves each large tensor's blocks before writing it. */
HURRAY_INTERNAL bool hurray__file_writer_preallocates(const HurrayFileWriter *w);
/* Tests: writers opened while `on` write a named temporary file, as where
 * the system has no unnamed files (the fallback of O_TMPFILE). */
HURRAY_INTERNAL void hurray__file_writer_test_named_temp(bool on);
/* Whether a writer's file has no name until finish (Linux O_TMPFILE). */
HURRAY_INTERNAL bool hurray__file_writer_unnamed(const HurrayFileWriter *w);
/* Test hook: when true, every entry goes through the rule-by-rule check (no
 * fast loop), so the two can be compared. */
HURRAY_INTERNAL void hurray__file_index_test_slow_walk(bool on);

/* Name lookups (src/file/lookup.c). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_lookup_init(HurrayFile *f);
HURRAY_INTERNAL void hurray__file_lookup_free(HurrayFile *f);
/* HURRAY_OK and *out, HURRAY_ERR_NOT_FOUND, or HURRAY_ERR_DUPLICATE_NAME when
 * more than one entry has this name. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_lookup_find(
    const HurrayFile *f, const uint8_t *name, size_t len, uint32_t *out);
/* Compares every name (builds the lookup structure if needed) and reports the
 * first duplicate, or the first name out of order under SORTED_INDEX. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_lookup_verify(
    const HurrayFile *f, HurrayError *err);
/* Test hooks: which structure serves the lookups (-1 = none yet: lookups
 * scan; then HURRAY__LOOKUP_HASH, _SORTED or _PERM), and the number of
 * lookups answered by scanning before one is built. */
HURRAY_INTERNAL int hurray__file_lookup_kind(const HurrayFile *f);
#define HURRAY__FILE_SCAN_FINDS 8u

HURRAY_INTERNAL const uint8_t *hurray__file_name_at(const void *ctx, uint32_t i, size_t *len);

/*
 * File order (src/file/order.c). *out is NULL when the index is in file
 * order (the identity), else the tensors sorted by descriptor offset, built
 * on first call; HURRAY_ERR_INVALID_FILE when two tensors overlap (then for
 * good), HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_order_get(
    const HurrayFile *f, const HurrayFileOrder **out, HurrayError *err);
/* The entry at a position in file order, and the position of an entry. */
HURRAY_INTERNAL uint32_t hurray__file_order_at(const HurrayFileOrder *o, uint32_t position);
HURRAY_INTERNAL uint32_t hurray__file_rank_of(const HurrayFileOrder *o, uint32_t entry);
HURRAY_INTERNAL void hurray__file_order_free(HurrayFile *f);

/*
 * Failure-path explanations (src/file/explain.c). hurray__file_not_hrry:
 * when `head` (n bytes of a file of `size` bytes) is another kind of file,
 * fails with HURRAY_ERR_INVALID_FILE saying which and what to do; HURRAY_OK
 * when it is a .hrry file or nothing known (the caller reports as usual).
 * hurray__file_explain_trailer: the header was valid but the trailer magic
 * is not there; walks the tensors (from `mem`, or read through `b` when mem is NULL) to
 * say where the file ends and how much is missing. Always fails.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_not_hrry(const uint8_t *head,
                                                                    size_t n, uint64_t size,
                                                                    HurrayError *err);
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_explain_trailer(
    const uint8_t *mem, const HurrayFileBytes *b, uint64_t size, uint64_t first, uint32_t align,
    uint64_t max_desc, const uint8_t *trailer, HurrayError *err);

/*
 * A tensor over the bytes of `base` (retained by it): descriptor `d` (moved
 * into it), whose buffers are base's first ones (as many as d declares);
 * named `name` (copied); its index is base's (src/file/tensor.c).
 * HURRAY_ERR_OUT_OF_MEMORY, HURRAY_ERR_INTERNAL (d declares more buffers
 * than base has); on failure d is freed.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_tensor_derive(
    HurrayFileTensor *base, const char *name, size_t name_len, HurrayDescriptor *d,
    HurrayFileTensor **out);

/* Number of descriptors decoded by this process (test hook: proves that
 * open decodes none and a fetch decodes one). */
HURRAY_INTERNAL uint64_t hurray__file_descriptor_decodes(void);

/* Checks one level of a composite (head + direct members, the head at nesting
 * `depth`) with the composite validator of hurray/composite.h. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_check_composite_level(
    const HurrayDescriptor *head, const HurrayDescriptor *const *members, uint32_t n,
    uint32_t depth, uint32_t options, HurrayError *err);

/* Checks the placement of tensor i's buffers, described by d (tensor.c): a
 * known layout, data_offset aligned, each buffer at the next multiple of the
 * data alignment, declared alignments at most it, the span equal to
 * data_length. *out_nb: the buffer count; *max_align: the largest declared
 * alignment of a non-empty buffer (at least 64). */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__file_check_placement(
    const HurrayFile *f, uint32_t i, const HurrayDescriptor *d, uint32_t *out_nb,
    uint64_t *max_align, HurrayError *err);

/* Member count of a composite head; false when d is not a composite head. */
HURRAY_INTERNAL bool hurray__file_composite_members(const HurrayDescriptor *d, uint32_t *n);

#endif /* HURRAY_INTERNAL_FILE_H */
