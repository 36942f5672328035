/*
 * Partial reads of one tensor of a file (file.h § partial reads): decode its
 * descriptor, place its buffer 0 as hurray_file_tensor does, then run the
 * slice engine (src/layout/slice.c) over the mapping or over positioned
 * reads.
 *
 * Positioned reads, when the file is not mapped: the engine asks for the
 * bytes of each run it copies. A piece of DIRECT bytes or more is read
 * straight into the destination. Smaller pieces (single elements of the
 * addressed layouts, short rows) would cost a system call each, so the engine
 * runs twice: the first run only marks the 4 KiB pages of buffer 0 that hold
 * them; the marked pages are then read, each consecutive stretch with one
 * call, into a scratch block where marked page p sits at rank(p) * PAGE (the
 * count of marked pages below it); the second run copies every piece, the
 * small ones from the scratch.
 */
#include <stdio.h>

#include "internal/file.h"
#include "internal/slice.h"

#define PAGE 4096u
#define DIRECT 512u

static atomic_uint_fast64_t g_bytes_read;

uint64_t hurray__file_slice_bytes_read(void) { return (uint64_t)atomic_load(&g_bytes_read); }

/* Prefixes err's message with `prefix` (its first plen bytes). */
static HurrayStatus prefixed(HurrayStatus st, HurrayError *err, const char *prefix, int n) {
  if (err == NULL || st == HURRAY_OK) return st;
  size_t plen = n < 0 ? 0 : (size_t)n < 128 ? (size_t)n : 127;
  size_t cap = sizeof err->message;
  size_t mlen = strnlen(err->message, cap - 1);
  if (plen + mlen >= cap) mlen = cap - 1 - plen;
  memmove(err->message + plen, err->message, mlen);
  memcpy(err->message, prefix, plen);
  err->message[plen + mlen] = '\0';
  return st;
}

/* Prefixes err's message with the tensor's name, as the other reads do. */
static HurrayStatus named(const HurrayFile *f, uint32_t i, HurrayStatus st, HurrayError *err) {
  if (err == NULL || st == HURRAY_OK) return st;
  HurrayFileIndexEntry e;
  hurray__file_entry_at(f, i, &e);
  char prefix[128];
  int n = snprintf(prefix, sizeof prefix, "tensor \"%.*s\" (index[%u]): ",
                   (int)(e.name_len > 48 ? 48 : e.name_len), (const char *)e.name, i);
  return prefixed(st, err, prefix, n);
}

/* File offset and size of buffer 0 of tensor i, with the placement checks of
 * hurray_file_tensor (src/file/tensor.c): data_offset aligned, each buffer at
 * the next multiple of the data alignment, the span equal to data_length. */
static HurrayStatus place(const HurrayFile *f, uint32_t i, const HurrayDescriptor *d,
                          uint64_t *pos0, uint64_t *size0, HurrayError *err) {
  HurrayFileIndexEntry e;
  hurray__file_entry_at(f, i, &e);
  const uint64_t A = f->info.data_alignment;
  char field[48];
  uint32_t nb = 0;
  HURRAY_TRY(hurray_descriptor_buffer_count(d, &nb));
  if (nb > 0 && (e.data_off & (A - 1)) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, e.data_off,
                        hurray__path(field, sizeof field, "index[%u].data_offset", i),
                        "%llu is not a multiple of the data alignment %llu",
                        (unsigned long long)e.data_off, (unsigned long long)A);
  uint64_t pos = e.data_off, end = e.data_off;
  bool bad = false;
  *pos0 = e.data_off;
  *size0 = 0;
  for (uint32_t k = 0; k < nb && !bad; k++) {
    const HurrayBufferHandle *h = NULL;
    HURRAY_TRY(hurray_descriptor_buffer(d, k, &h));
    if ((k > 0 && hurray__align_up_u64(end, A, &pos)) ||
        hurray__add_overflow_u64(pos, h->byte_size, &end) || end > e.data_off + e.data_len) {
      bad = true;
      break;
    }
    if (h->byte_size > 0 && h->alignment > A)
      return hurray__fail(err, HURRAY_ERR_MISALIGNED, e.desc_off,
                          hurray__path(field, sizeof field, "buffers[%u].alignment", k),
                          "%u exceeds the file's data alignment %llu", h->alignment,
                          (unsigned long long)A);
    if (k == 0) {
      *pos0 = pos;
      *size0 = h->byte_size;
    }
  }
  if (bad || end - e.data_off != e.data_len)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, e.data_off,
                        hurray__path(field, sizeof field, "index[%u].data_length", i),
                        "data_length %llu does not match its %u buffers laid out from "
                        "data_offset %llu",
                        (unsigned long long)e.data_len, nb, (unsigned long long)e.data_off);
  return HURRAY_OK;
}

/* ---- positioned reads ------------------------------------------------------------- */

typedef struct Pages {
  const HurrayFileBytes *bytes;
  uint64_t at;      /* file offset of buffer 0 */
  uint64_t size;    /* its bytes */
  bool plan;        /* first run: mark pages, read nothing */
  uint64_t *bits;   /* one bit per page of buffer 0 a small piece needs */
  uint64_t *ranks;  /* marked pages before each word of bits */
  uint64_t words;
  uint8_t *scratch; /* the marked pages, in order */
} Pages;

static unsigned popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_popcountll(x);
#else
  unsigned n = 0;
  for (; x != 0; x &= x - 1) n++;
  return n;
#endif
}

static bool marked(const Pages *p, uint64_t q) {
  return p->bits != NULL && q / 64 < p->words && ((p->bits[q / 64] >> (q % 64)) & 1u) != 0;
}

/* Scratch position of marked page q. */
static uint64_t rank_of(const Pages *p, uint64_t q) {
  uint64_t below = p->bits[q / 64] & ((UINT64_C(1) << (q % 64)) - 1u);
  return p->ranks[q / 64] + popcount64(below);
}

static HurrayStatus counted_pread(const Pages *p, void *dst, uint64_t len, uint64_t pos,
                                  HurrayError *err) {
  HURRAY_TRY(hurray__bytes_read(p->bytes, dst, len, p->at + pos, "reading a slice", err));
  atomic_fetch_add_explicit(&g_bytes_read, len, memory_order_relaxed);
  return HURRAY_OK;
}

static HurrayStatus pages_read(void *ctx, uint64_t pos, uint64_t len, uint8_t *dst,
                               HurrayError *err) {
  Pages *p = ctx;
  if (len >= DIRECT) return p->plan ? HURRAY_OK : counted_pread(p, dst, len, pos, err);
  if (len == 0) return HURRAY_OK;
  uint64_t a = pos / PAGE, b = (pos + len - 1) / PAGE; /* the engine checked pos + len <= size */
  if (p->plan) {
    if (p->bits == NULL) {
      uint64_t pages = p->size / PAGE + (p->size % PAGE != 0);
      p->words = pages / 64 + (pages % 64 != 0);
      if (p->words > SIZE_MAX / 16)
        return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "slice",
                            "%llu pages do not fit in memory", (unsigned long long)pages);
      p->bits = hurray__calloc((size_t)p->words, 2 * sizeof(uint64_t));
      if (p->bits == NULL)
        return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "slice",
                            "out of memory for the page map of %llu pages",
                            (unsigned long long)pages);
      p->ranks = p->bits + p->words;
    }
    for (uint64_t q = a; q <= b; q++) p->bits[q / 64] |= UINT64_C(1) << (q % 64);
    memset(dst, 0, (size_t)len);
    return HURRAY_OK;
  }
  if (!marked(p, a) || !marked(p, b))
    return hurray__fail(err, HURRAY_ERR_INTERNAL, HURRAY_NO_OFFSET, "slice",
                        "a piece the plan did not see (bytes %llu..%llu)",
                        (unsigned long long)pos, (unsigned long long)(pos + len));
  /* Pages a..b are all marked, so they follow each other in the scratch. */
  memcpy(dst, p->scratch + rank_of(p, a) * PAGE + (pos - a * PAGE), (size_t)len);
  return HURRAY_OK;
}

/* Reads the marked pages into the scratch, one call per consecutive stretch. */
static HurrayStatus pages_fetch(Pages *p, HurrayError *err) {
  if (p->bits == NULL) return HURRAY_OK;
  uint64_t total = 0;
  for (uint64_t w = 0; w < p->words; w++) {
    p->ranks[w] = total;
    total += popcount64(p->bits[w]);
  }
  if (total > SIZE_MAX / PAGE)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "slice",
                        "%llu pages do not fit in memory", (unsigned long long)total);
  p->scratch = hurray__malloc((size_t)total * PAGE);
  if (p->scratch == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "slice",
                        "out of memory for %llu pages", (unsigned long long)total);
  uint64_t pages = p->words * 64;
  for (uint64_t q = 0; q < pages;) {
    uint64_t w = p->bits[q / 64] >> (q % 64);
    if (w == 0) {
      q = (q / 64 + 1) * 64;
      continue;
    }
    while (!marked(p, q)) q++;
    uint64_t q1 = q;
    while (q1 < pages && marked(p, q1)) q1++;
    uint64_t from = q * PAGE, to = q1 * PAGE < p->size ? q1 * PAGE : p->size;
    HURRAY_TRY(counted_pread(p, p->scratch + rank_of(p, q) * PAGE, to - from, from, err));
    q = q1;
  }
  return HURRAY_OK;
}

static HurrayStatus read_pages(const HurrayFile *f, const HurrayDescriptorFields *fl,
                               const HurraySliceRange *ranges, uint64_t pos0, uint64_t size0,
                               void *dst, uint64_t dst_size, HurrayError *err) {
  Pages p;
  memset(&p, 0, sizeof p);
  p.bytes = &f->bytes;
  p.at = pos0;
  p.size = size0;
  p.plan = true;
  HurraySliceSource src;
  memset(&src, 0, sizeof src);
  src.size = size0;
  src.read = pages_read;
  src.ctx = &p;
  HurrayStatus st = hurray__slice_gather(fl, ranges, &src, dst, dst_size, err);
  if (st == HURRAY_OK) st = pages_fetch(&p, err);
  if (st == HURRAY_OK) {
    p.plan = false;
    st = hurray__slice_gather(fl, ranges, &src, dst, dst_size, err);
  }
  hurray__free(p.scratch);
  hurray__free(p.bits);
  return st;
}

/* ---- entry ------------------------------------------------------------------------- */

/* The selection `ranges` of the tensor `d` describes, whose buffer 0 is that
 * of index entry i (d is its own descriptor, or a view's over its bytes). */
static HurrayStatus read_slice_of(const HurrayFile *f, uint32_t i, const HurrayDescriptor *d,
                                  uint32_t rank, const HurraySliceRange *ranges, void *dst,
                                  uint64_t dst_size, HurrayError *err) {
  HurrayDescriptorFields fl;
  HurrayStatus st = hurray_descriptor_fields(d, &fl);
  if (st == HURRAY_OK && rank != fl.rank)
    st = hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "rank",
                      "%u ranges for a tensor of rank %u", rank, fl.rank);
  if (st == HURRAY_OK) st = hurray_layout_slice_shape(&fl, ranges, NULL, NULL, err);
  uint64_t pos0 = 0, size0 = 0;
  if (st == HURRAY_OK) st = place(f, i, d, &pos0, &size0, err);
  if (st == HURRAY_OK && f->source != NULL) {
    HurraySliceSource src;
    memset(&src, 0, sizeof src);
    src.base = f->source->base + pos0;
    src.size = size0;
    if (f->source->map_addr != NULL) src.will_read = hurray__os_will_read; /* a mapping */
    st = hurray__slice_gather(&fl, ranges, &src, dst, dst_size, err);
  } else if (st == HURRAY_OK) {
    st = read_pages(f, &fl, ranges, pos0, size0, dst, dst_size, err);
  }
  return st;
}

HurrayStatus hurray_file_read_slice(const HurrayFile *f, uint64_t index, uint32_t rank,
                                    const HurraySliceRange *ranges, void *dst, uint64_t dst_size,
                                    HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  HurrayDescriptor *d = NULL;
  HURRAY_TRY(hurray_file_descriptor(f, index, &d, err)); /* names the tensor itself */
  const uint32_t i = (uint32_t)index;
  HurrayStatus st = read_slice_of(f, i, d, rank, ranges, dst, dst_size, err);
  hurray__descriptor_drop(d);
  return named(f, i, st, err);
}

HurrayStatus hurray_file_read_view_slice(const HurrayFile *f, uint64_t view, uint32_t rank,
                                         const HurraySliceRange *ranges, void *dst,
                                         uint64_t dst_size, HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  HurrayFileView v;
  HURRAY_TRY(hurray_file_view(f, view, &v, err));
  HurrayDescriptor *d = NULL;
  HURRAY_TRY(hurray_file_view_descriptor(f, view, &d, err));
  HurrayStatus st = read_slice_of(f, (uint32_t)v.base_index, d, rank, ranges, dst, dst_size, err);
  hurray__descriptor_drop(d);
  char prefix[128];
  int n = snprintf(prefix, sizeof prefix, "view \"%.*s\" (of index[%llu]): ",
                   (int)(v.name_len > 48 ? 48 : v.name_len), v.name,
                   (unsigned long long)v.base_index);
  return prefixed(st, err, prefix, n);
}
