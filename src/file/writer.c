/*
 * The single-pass .hrry writer (docs/spec/file-format.md § Writer Protocol;
 * docs/internals/decisions.md § File format).
 *
 * Layout produced, per tensor:
 *   descriptor at an 8-aligned offset
 *   zero padding to the data alignment A, then for each buffer:
 *     the buffer's bytes, zero padding to A (after every buffer, the last too)
 *   a composite head (no buffers) gets no A padding: the next descriptor
 *   follows at the next multiple of 8.
 * Then the KV section (8-aligned), the index (8-aligned) and the trailer.
 *
 * Every byte is written with pwrite at an offset tracked here (w_put); padding
 * is never written: the gaps read as zeros (POSIX: bytes of a gap that were
 * never written read as 0), and the file system may keep them as holes. A
 * memory writer (hurray_file_writer_open_memory) puts the same bytes at the
 * same offsets into one growing image, zeroing the gaps. The header
 * is written last, at offset 0, once the flags (HAS_KV_METADATA) and the
 * tensor count are known; nothing observes the temporary file before the
 * rename, so this is the only out-of-order write and it costs nothing.
 *
 * Memory: the encoded descriptor of the tensor being written, the index
 * entries and their names, and the encoded KV entries. Tensor data is written
 * straight from the caller's buffers.
 */
#include <stdio.h>

#include "internal/file.h"

typedef struct WEntry {
  uint64_t name_off; /* into names */
  uint32_t name_len;
  uint32_t desc_len;
  uint64_t desc_off;
  uint64_t data_off;
  uint64_t data_len;
  uint32_t desc_crc; /* data checksums (options.data_checksums) */
  uint32_t data_crc;
  HurrayViewBase vb; /* what a view of this tensor is checked against */
} WEntry;

typedef struct KvKey {
  uint64_t off; /* into kv */
  uint32_t len;
} KvKey;

typedef enum WState { W_OPEN = 0, W_FAILED = 1, W_DONE = 2 } WState;

struct HurrayFileWriter {
  HurrayOsFile fd;
  char *path;     /* target */
  char *tmp_path; /* the temporary file's name (buffer of tmp_cap bytes) */
  size_t tmp_cap;
  size_t base_off; /* where the target's file name starts in path */
  bool unnamed;    /* fd is a file without a name (O_TMPFILE) until finish */
  bool named;      /* a file named tmp_path exists and is ours to remove */
  char *dir_path;  /* their directory (fsync after rename) */
  uint32_t align;
  bool sorted;
  bool skip_fsync;
  bool checksums;   /* options.data_checksums: CRC each tensor while writing it */
  WState state;
  uint64_t cur;     /* next descriptor offset */
  uint64_t wb_from; /* durable saves: where the bytes not yet sent to the disk start */
  bool prealloc;    /* reserve each large tensor's blocks before writing it */
  WEntry *entries;
  uint64_t count;
  uint64_t cap;
  HurrayByteBuf names;
  HurrayNameIndex name_ix;
  HurrayByteBuf kv; /* encoded entries, without the count */
  KvKey *kv_keys;
  uint32_t kv_count;
  uint32_t kv_cap;
  HurrayNameIndex kv_ix;
  HurrayByteBuf scratch; /* encoded descriptor */
  /* Views (hurray_file_writer_add_view): their records, JSON, in the order
   * added (views.c encodes each), and their names, to keep them unique. */
  HurrayByteBuf views_json;
  HurrayByteBuf view_names;
  KvKey *view_keys; /* offset and length of each view's name in view_names */
  uint32_t view_count;
  uint32_t view_cap;
  HurrayNameIndex view_ix;
  /* A memory writer: the image, hurray_alloc'ed at the data alignment (the
   * bytes [0, mem_len) written or zeroed) */
  bool memory;
  uint8_t *mem;
  uint64_t mem_len;
  uint64_t mem_cap;
};

/* ---- small helpers ------------------------------------------------------------- */

static char *dup_str(const char *s, size_t n) {
  char *p = hurray__malloc(n + 1);
  if (p != NULL) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

static const uint8_t *w_view_at(const void *ctx, uint32_t i, size_t *len) {
  const HurrayFileWriter *w = ctx;
  *len = w->view_keys[i].len;
  return w->view_names.data + w->view_keys[i].off;
}

static const uint8_t *w_name_at(const void *ctx, uint32_t i, size_t *len) {
  const HurrayFileWriter *w = ctx;
  *len = w->entries[i].name_len;
  return w->names.data + w->entries[i].name_off;
}

static const uint8_t *w_key_at(const void *ctx, uint32_t i, size_t *len) {
  const HurrayFileWriter *w = ctx;
  *len = w->kv_keys[i].len;
  return w->kv.data + w->kv_keys[i].off;
}

/* A memory writer's image grown to hold [0, end): doubling (so that a long
 * save copies each byte a bounded number of times), or exactly `end` when
 * the double cannot be had. */
static HurrayStatus mem_grow(HurrayFileWriter *w, uint64_t end, uint64_t off, const char *what,
                             HurrayError *err) {
  uint64_t cap = w->mem_cap > (UINT64_MAX >> 1) ? UINT64_MAX : w->mem_cap * 2u;
  if (cap < ((uint64_t)64 << 10)) cap = (uint64_t)64 << 10;
  if (cap < end) cap = end;
  uint8_t *p = cap <= SIZE_MAX ? hurray_alloc((size_t)cap, w->align) : NULL;
  if (p == NULL && cap != end) {
    cap = end;
    p = hurray_alloc((size_t)cap, w->align);
  }
  if (p == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, off, what,
                        "out of memory for a file image of %llu bytes",
                        (unsigned long long)end);
  if (w->mem_len > 0) memcpy(p, w->mem, (size_t)w->mem_len);
  hurray_free(w->mem);
  w->mem = p;
  w->mem_cap = cap;
  return HURRAY_OK;
}

/* Writes len bytes at off: to the file, or into a memory writer's image. */
static HurrayStatus w_put(HurrayFileWriter *w, const void *buf, uint64_t len, uint64_t off,
                          const char *what, HurrayError *err) {
  if (!w->memory) return hurray__pwrite_full(w->fd, buf, len, off, what, err);
  uint64_t end;
  if (hurray__add_overflow_u64(off, len, &end) || end > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, off, what,
                        "the file image would not fit in this address space");
  if (end > w->mem_cap) HURRAY_TRY(mem_grow(w, end, off, what, err));
  if (off > w->mem_len) memset(w->mem + w->mem_len, 0, (size_t)(off - w->mem_len));
  if (len > 0) memcpy(w->mem + off, buf, (size_t)len);
  if (end > w->mem_len) w->mem_len = end;
  return HURRAY_OK;
}

static HurrayStatus state_check(const HurrayFileWriter *w, HurrayError *err) {
  if (w->state == W_OPEN) return HURRAY_OK;
  return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, "writer",
                      w->state == W_FAILED
                          ? "an earlier write failed; only abort or destroy remain"
                          : "the writer is finished");
}

/* Checks a name: UTF-8, 1..65535 bytes. */
static HurrayStatus check_name_syntax(const char *name, size_t len, const char *field,
                                      HurrayError *err) {
  if (name == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field, "is NULL");
  if (len == 0 || len > HURRAY_FILE_MAX_NAME_LEN)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                        "length %zu is outside 1..65535", len);
  if (!hurray__utf8_valid((const uint8_t *)name, len))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                        "is not valid UTF-8");
  return HURRAY_OK;
}

static bool name_taken(const HurrayFileWriter *w, const char *name, size_t len) {
  uint32_t i;
  return hurray__name_index_find(&w->name_ix, (const uint8_t *)name, len,
                                 hurray__name_hash((const uint8_t *)name, len), w_name_at, w,
                                 &i);
}

/* Room for `extra` more entries with `name_bytes` more name bytes, so that
 * recording them cannot fail. */
static HurrayStatus reserve_entries(HurrayFileWriter *w, uint64_t extra, uint64_t name_bytes,
                                    HurrayError *err) {
  if (extra > UINT32_MAX / 4 - w->count)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "writer",
                        "too many tensors");
  uint64_t want = w->count + extra;
  if (want > w->cap) {
    uint64_t cap = w->cap ? w->cap : 64;
    while (cap < want) cap *= 2;
    WEntry *e = hurray__malloc((size_t)cap * sizeof *e);
    if (e == NULL) goto oom;
    if (w->count) memcpy(e, w->entries, (size_t)w->count * sizeof *e);
    hurray__free(w->entries);
    w->entries = e;
    w->cap = cap;
  }
  if (name_bytes > SIZE_MAX || hurray__buf_reserve(&w->names, (size_t)name_bytes) != HURRAY_OK)
    goto oom;
  if (hurray__name_index_reserve(&w->name_ix, (uint32_t)want) != HURRAY_OK) goto oom;
  return HURRAY_OK;
oom:
  return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "writer",
                      "out of memory for the index");
}

/* ---- open ------------------------------------------------------------------------ */

static atomic_uint_fast64_t g_tmp_counter;
static atomic_bool g_no_prealloc; /* tests: writers opened while set never preallocate */
static atomic_bool g_named_temp;  /* tests: writers opened while set use a named temp file */

void hurray__file_writer_test_no_prealloc(bool on) { atomic_store(&g_no_prealloc, on); }
bool hurray__file_writer_preallocates(const HurrayFileWriter *w) { return w->prealloc; }
void hurray__file_writer_test_named_temp(bool on) { atomic_store(&g_named_temp, on); }
bool hurray__file_writer_unnamed(const HurrayFileWriter *w) { return w->unnamed; }

/* The letters of a temporary name's suffix (base32, lower case). */
static const char g_suffix_digits[] = "abcdefghijklmnopqrstuvwxyz234567";
#define TEMP_MARK ".tmp-"
#define TEMP_MARK_LEN 5u
#define TEMP_SUFFIX_LEN 6u

/* Writes a fresh temporary name into tmp_path: the target's directory part,
 * then ".<base>.tmp-XXXXXX". */
static void next_temp_name(HurrayFileWriter *w) {
  uint64_t sec = 0, nsec = 0;
  (void)hurray__os_clock(false, &sec, &nsec);
  uint64_t r = nsec ^ (hurray__os_pid() << 20) ^ ((uint64_t)(uintptr_t)w << 7) ^
               ((uint64_t)atomic_fetch_add_explicit(&g_tmp_counter, 1, memory_order_relaxed) *
                0x9E3779B97F4A7C15ull);
  char suffix[TEMP_SUFFIX_LEN + 1];
  for (unsigned k = 0; k < TEMP_SUFFIX_LEN; k++) {
    suffix[k] = g_suffix_digits[r & 31u];
    r >>= 5;
  }
  suffix[TEMP_SUFFIX_LEN] = '\0';
  snprintf(w->tmp_path, w->tmp_cap, "%.*s.%s" TEMP_MARK "%s", (int)w->base_off, w->path,
           w->path + w->base_off, suffix);
}

/*
 * Creates the file being written, in the target's directory. Linux: a file
 * without a name (O_TMPFILE), named only in finish, so that a process killed
 * mid-save leaves nothing behind. Elsewhere, or where the file system has no
 * such files: a named temporary file ".<base>.tmp-XXXXXX", which a killed
 * save leaves behind (hurray_file_remove_stale_temporaries removes those).
 */
static HurrayStatus create_temp(HurrayFileWriter *w, HurrayError *err) {
  w->tmp_cap = strlen(w->path) + 1 + TEMP_MARK_LEN + TEMP_SUFFIX_LEN + 1;
  w->tmp_path = hurray__malloc(w->tmp_cap);
  if (w->tmp_path == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "writer",
                        "out of memory");
  if (!atomic_load_explicit(&g_named_temp, memory_order_relaxed) &&
      hurray__os_create_unnamed(w->dir_path, &w->fd) == 0) {
    w->unnamed = true;
    return HURRAY_OK;
  }
  w->fd = HURRAY__OS_FILE_NONE;
  int e = 0;
  for (int attempt = 0; attempt < 64; attempt++) {
    next_temp_name(w);
    e = hurray__os_create_new(w->tmp_path, &w->fd);
    if (e == 0) {
      w->named = true;
      return HURRAY_OK;
    }
    w->fd = HURRAY__OS_FILE_NONE;
    if (!hurray__os_error_is_exists(e)) break;
  }
  return hurray__io_fail(err, e, HURRAY_NO_OFFSET, "creating the temporary file");
}

/* Finish, unnamed file: gives it a temporary name (the rename then replaces
 * the target atomically, which a link cannot). */
static HurrayStatus name_temp(HurrayFileWriter *w, HurrayError *err) {
  int e = 0;
  for (int attempt = 0; attempt < 64; attempt++) {
    next_temp_name(w);
    e = hurray__os_link_unnamed(w->fd, w->tmp_path);
    if (e == 0) {
      w->named = true;
      return HURRAY_OK;
    }
    if (!hurray__os_error_is_exists(e)) break;
  }
  return hurray__io_fail(err, e, HURRAY_NO_OFFSET, "naming the file");
}

HurrayStatus hurray_file_writer_open(const char *path, const HurrayFileWriterOptions *options,
                                     HurrayFileWriter **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (path == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "path", "is NULL");
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  if (options != NULL) o = *options;
  uint32_t align = o.data_alignment ? o.data_alignment : HURRAY_FILE_DEFAULT_ALIGNMENT;
  if (!hurray__is_pow2_u64(align) || align < HURRAY_FILE_MIN_ALIGNMENT ||
      align > HURRAY_FILE_MAX_ALIGNMENT)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                        "options.data_alignment",
                        "must be a power of two in [4096, 2097152], got %u", align);
  size_t plen = strlen(path);
  const char *base = hurray__path_base(path);
  const char *slash = base != path ? base - 1 : NULL;
  size_t blen = plen - (size_t)(base - path);
  if (blen == 0 || (blen == 1 && base[0] == '.') || (blen == 2 && memcmp(base, "..", 2) == 0))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "path",
                        "\"%s\" does not name a file", path);
  const char *dir = slash ? path : ".";
  size_t dlen = slash ? (slash == path ? 1u : (size_t)(slash - path)) : 1u;
  if (hurray__os_is_dir(path))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "path",
                        "\"%s\" is a directory", path);

  HurrayFileWriter *w = hurray__calloc(1, sizeof *w);
  if (w == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "writer",
                        "out of memory");
  w->fd = HURRAY__OS_FILE_NONE;
  w->align = align;
  w->sorted = o.sorted_index;
  w->skip_fsync = o.skip_fsync;
  w->checksums = o.data_checksums;
  w->cur = HURRAY_FILE_HEADER_LEN;
  w->wb_from = HURRAY_FILE_HEADER_LEN;
  w->path = dup_str(path, plen);
  w->dir_path = dup_str(dir, dlen);
  HurrayStatus status = HURRAY_OK;
  if (w->path == NULL || w->dir_path == NULL ||
      hurray__name_index_init(&w->name_ix, 16) != HURRAY_OK ||
      hurray__name_index_init(&w->kv_ix, 16) != HURRAY_OK) {
    status = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "writer",
                          "out of memory");
    goto fail;
  }
  w->base_off = (size_t)(base - path);
  status = create_temp(w, err);
  if (status != HURRAY_OK) goto fail;
  w->prealloc = hurray__os_preallocate_pays(w->fd) &&
                !atomic_load_explicit(&g_no_prealloc, memory_order_relaxed);
  *out = w;
  return HURRAY_OK;
fail:
  w->state = W_DONE;
  hurray_file_writer_destroy(&w);
  return status;
}

HurrayStatus hurray_file_writer_open_memory(const HurrayFileWriterOptions *options,
                                            uint64_t size_hint, HurrayFileWriter **out,
                                            HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  if (options != NULL) o = *options;
  uint32_t align = o.data_alignment ? o.data_alignment : HURRAY_FILE_DEFAULT_ALIGNMENT;
  if (!hurray__is_pow2_u64(align) || align < HURRAY_FILE_MIN_ALIGNMENT ||
      align > HURRAY_FILE_MAX_ALIGNMENT)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                        "options.data_alignment",
                        "must be a power of two in [4096, 2097152], got %u", align);
  HurrayFileWriter *w = hurray__calloc(1, sizeof *w);
  if (w == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "writer",
                        "out of memory");
  w->fd = HURRAY__OS_FILE_NONE;
  w->memory = true;
  w->align = align;
  w->sorted = o.sorted_index;
  w->skip_fsync = true; /* nothing to sync: no write-behind either */
  w->checksums = o.data_checksums;
  w->cur = HURRAY_FILE_HEADER_LEN;
  w->wb_from = HURRAY_FILE_HEADER_LEN;
  HurrayStatus status = HURRAY_OK;
  if (hurray__name_index_init(&w->name_ix, 16) != HURRAY_OK ||
      hurray__name_index_init(&w->kv_ix, 16) != HURRAY_OK) {
    status = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "writer",
                          "out of memory");
    goto fail;
  }
  /* The hint is only a first size: a wrong one costs a copy, nothing else. */
  if (size_hint > 0 && size_hint <= SIZE_MAX) {
    w->mem = hurray_alloc((size_t)size_hint, align);
    if (w->mem != NULL) w->mem_cap = size_hint;
  }
  *out = w;
  return HURRAY_OK;
fail:
  w->state = W_DONE;
  hurray_file_writer_destroy(&w);
  return status;
}

/* ---- tensors ------------------------------------------------------------------------ */

/* Checks a tensor's descriptor against the buffers handed over. */
static HurrayStatus check_tensor(const HurrayFileWriter *w, const HurrayDescriptor *d,
                                 const void *const *buffers, const uint64_t *sizes,
                                 bool head_ok, HurrayError *err) {
  if (d == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "descriptor",
                        "is NULL");
  uint32_t n_members;
  if (hurray__file_composite_members(d, &n_members) && !head_ok)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "descriptor",
                        "is a composite head: write it with hurray_file_writer_add_composite");
  uint32_t nb = 0;
  HURRAY_TRY(hurray_descriptor_buffer_count(d, &nb));
  char field[32];
  for (uint32_t k = 0; k < nb; k++) {
    const HurrayBufferHandle *h = NULL;
    HURRAY_TRY(hurray_descriptor_buffer(d, k, &h));
    hurray__path(field, sizeof field, "buffers[%u]", k);
    if (sizes != NULL && sizes[k] != h->byte_size)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                          "size %llu differs from the descriptor's byte_size %llu",
                          (unsigned long long)sizes[k], (unsigned long long)h->byte_size);
    if (h->byte_size > 0 && (buffers == NULL || buffers[k] == NULL))
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field,
                          "is NULL but holds %llu bytes", (unsigned long long)h->byte_size);
    if (h->byte_size > 0 && h->alignment > w->align)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                          "declares alignment %u above the file's data alignment %u: the "
                          "file cannot place it there",
                          h->alignment, w->align);
  }
  return HURRAY_OK;
}

/* A tensor of PREALLOC_MIN bytes or more has its blocks reserved before it is
 * written, where that pays (hurray__os_preallocate_pays: ext4, XFS): the
 * writes then skip delayed allocation (about a tenth of a save's system time),
 * and a full disk stops the writer before the tensor's bytes are copied. */
#define PREALLOC_MIN ((uint64_t)1 << 20)

/* Durable saves send what they wrote to the disk every WB_WINDOW bytes
 * (hurray__write_behind), so that the disk works while the rest is copied
 * and the fsync at the end waits for one window, not the whole file. */
#define WB_WINDOW ((uint64_t)8 << 20)

/* With data checksums, bytes are written and checksummed CRC_CHUNK at a time:
 * the checksum then reads them from the cache the write's copy brought them
 * into, so they cross the memory bus once. */
#define CRC_CHUNK ((uint64_t)2 << 20)

/* Writes len bytes at off in pieces (continuing *crc over each when crc is
 * not NULL, while it is in the cache). Pieces end at file offsets
 * that are multiples of their size (2 or 8 MiB): the page cache then holds the
 * file in folios of up to 2 MiB, which a later mapping maps with one fault per
 * folio; pieces cut elsewhere leave smaller folios and make every mapped load
 * of the file fault six times as often (bench/framework_torch.py). */
static HurrayStatus write_pieces(HurrayFileWriter *w, const void *buf, uint64_t len,
                                 uint64_t off, uint32_t *crc, const char *what,
                                 HurrayError *err) {
  if (w->skip_fsync && crc == NULL) return w_put(w, buf, len, off, what, err);
  const uint8_t *p = buf;
  const uint64_t step = crc != NULL ? CRC_CHUNK : WB_WINDOW; /* powers of two */
  while (len > 0) {
    uint64_t n = step - (off & (step - 1));
    if (n > len) n = len;
    HURRAY_TRY(w_put(w, p, n, off, what, err));
    if (crc != NULL) *crc = hurray_crc32c(*crc, p, (size_t)n);
    p += n;
    off += n;
    len -= n;
    if (!w->skip_fsync && off > w->wb_from && off - w->wb_from >= WB_WINDOW) {
      hurray__write_behind(w->fd, w->wb_from, off - w->wb_from);
      w->wb_from = off;
    }
  }
  return HURRAY_OK;
}

/* A tensor of CRC_THREAD_MIN bytes or more is checksummed on a second thread
 * while this one writes it: the checksum (about 10 GB/s) then costs no time
 * beside the copy into the page cache (about 2 GB/s), where it would add a
 * tenth to a save on one thread. Below it, starting a thread costs more than
 * the checksum. */
#define CRC_THREAD_MIN ((uint64_t)4 << 20)

typedef struct CrcJob {
  const uint8_t *p;
  uint64_t len;
  uint32_t crc;
} CrcJob;

static void crc_job_run(void *arg) {
  CrcJob *job = arg;
  const uint8_t *p = job->p;
  uint64_t len = job->len;
  uint32_t crc = job->crc;
  while (len > 0) { /* hurray_crc32c takes a size_t */
    size_t n = len < ((uint64_t)1 << 30) ? (size_t)len : (size_t)1 << 30;
    crc = hurray_crc32c(crc, p, n);
    p += n;
    len -= n;
  }
  job->crc = crc;
}

/* Writes len bytes at off (ascending offsets, as the writer lays them out);
 * continues *crc over them when crc is not NULL: on a second thread, for
 * CRC_THREAD_MIN bytes or more, while this one writes (one thread if none
 * can be started). */
static HurrayStatus write_data(HurrayFileWriter *w, const void *buf, uint64_t len, uint64_t off,
                               uint32_t *crc, const char *what, HurrayError *err) {
  if (crc != NULL && len >= CRC_THREAD_MIN) {
    CrcJob job = {buf, len, *crc};
    HurrayThread t = {NULL};
    if (hurray__thread_start(&t, crc_job_run, &job) == 0) {
      HurrayStatus rc = write_pieces(w, buf, len, off, NULL, what, err);
      hurray__thread_join(&t); /* always: the job reads buf */
      if (rc == HURRAY_OK) *crc = job.crc;
      return rc;
    }
  }
  return write_pieces(w, buf, len, off, crc, what, err);
}

/* Writes one checked tensor and records its index entry (room reserved). */
static HurrayStatus write_tensor(HurrayFileWriter *w, const char *name, size_t name_len,
                                 const HurrayDescriptor *d, const void *const *buffers,
                                 HurrayError *err) {
  uint64_t dlen = 0;
  HURRAY_TRY(hurray_descriptor_encoded_len(d, &dlen));
  if (dlen > UINT32_MAX || dlen > SIZE_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "descriptor",
                        "encoded length %llu exceeds 4 GiB", (unsigned long long)dlen);
  w->scratch.len = 0;
  if (hurray__buf_reserve(&w->scratch, (size_t)dlen) != HURRAY_OK)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "descriptor",
                        "out of memory encoding it");
  uint64_t got = 0;
  HURRAY_TRY(hurray_descriptor_encode(d, w->scratch.data, dlen, &got));
  if (got != dlen)
    return hurray__fail(err, HURRAY_ERR_INTERNAL, HURRAY_NO_OFFSET, "descriptor",
                        "encoded %llu bytes, %llu announced", (unsigned long long)got,
                        (unsigned long long)dlen);
  uint32_t nb = 0;
  HURRAY_TRY(hurray_descriptor_buffer_count(d, &nb));

  /* Plan every offset first, with overflow checks, then write. */
  const uint64_t A = w->align;
  uint64_t desc_off = w->cur, pos, data_off, data_end;
  if (hurray__add_overflow_u64(desc_off, dlen, &pos)) goto too_big;
  if (nb == 0) {
    data_off = data_end = pos; /* composite head: no alignment padding */
  } else {
    if (hurray__align_up_u64(pos, A, &pos)) goto too_big;
    data_off = data_end = pos;
    for (uint32_t k = 0; k < nb; k++) {
      const HurrayBufferHandle *h = NULL;
      HURRAY_TRY(hurray_descriptor_buffer(d, k, &h));
      if (hurray__add_overflow_u64(pos, h->byte_size, &data_end)) goto too_big;
      if (hurray__align_up_u64(data_end, A, &pos)) goto too_big; /* after every buffer */
    }
  }
  uint64_t next;
  if (hurray__align_up_u64(pos, 8, &next) || next > (uint64_t)INT64_MAX) goto too_big;

  if (w->prealloc && data_end - desc_off >= PREALLOC_MIN) {
    int rc = hurray__os_preallocate(w->fd, desc_off, data_end - desc_off);
    if (rc != 0) {
      w->state = W_FAILED;
      return hurray__io_fail(err, rc, desc_off, "reserving disk space for the tensor");
    }
  }
  uint32_t desc_crc = 0, data_crc = 0;
  uint32_t *crc = w->checksums ? &data_crc : NULL;
  if (crc != NULL) desc_crc = hurray_crc32c(0, w->scratch.data, (size_t)dlen);
  HurrayStatus st =
      write_data(w, w->scratch.data, dlen, desc_off, NULL, "writing a descriptor", err);
  uint64_t bpos = data_off;
  for (uint32_t k = 0; st == HURRAY_OK && k < nb; k++) {
    const HurrayBufferHandle *h = NULL;
    st = hurray_descriptor_buffer(d, k, &h);
    if (st != HURRAY_OK) break;
    /* The data region's CRC covers the gaps between buffers (zeros). */
    if (crc != NULL && k > 0) data_crc = hurray__crc32c_zeros(data_crc, bpos - data_end);
    if (h->byte_size > 0)
      st = write_data(w, buffers[k], h->byte_size, bpos, crc, "writing a buffer", err);
    data_end = bpos + h->byte_size;
    (void)hurray__align_up_u64(bpos + h->byte_size, A, &bpos);
  }
  if (st != HURRAY_OK) {
    w->state = W_FAILED;
    return st;
  }

  WEntry *e = &w->entries[w->count];
  e->name_off = w->names.len;
  e->name_len = (uint32_t)name_len;
  e->desc_len = (uint32_t)dlen;
  e->desc_off = desc_off;
  e->data_off = data_off;
  e->data_len = data_end - data_off;
  e->desc_crc = desc_crc;
  e->data_crc = data_crc;
  HurrayDescriptorFields df;
  if (hurray_descriptor_fields(d, &df) == HURRAY_OK) {
    hurray__view_base_of(&df, &e->vb);
  } else {
    memset(&e->vb, 0, sizeof e->vb); /* type tag 0: no view can use it as a base */
  }
  memcpy(w->names.data + w->names.len, name, name_len);
  w->names.len += name_len;
  uint32_t dup;
  (void)hurray__name_index_insert(&w->name_ix, hurray__name_hash((const uint8_t *)name, name_len),
                                  (uint32_t)w->count, w_name_at, w, &dup);
  w->count++;
  w->cur = next;
  return HURRAY_OK;
too_big:
  return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, desc_off, "file",
                      "the file would exceed the largest supported offset");
}

HurrayStatus hurray_file_writer_add_tensor(HurrayFileWriter *w, const char *name,
                                           size_t name_len, const HurrayDescriptor *descriptor,
                                           const void *const *buffers, const uint64_t *sizes,
                                           HurrayError *err) {
  if (w == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "writer", "is NULL");
  HURRAY_TRY(state_check(w, err));
  HURRAY_TRY(check_name_syntax(name, name_len, "name", err));
  if (name_taken(w, name, name_len))
    return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, HURRAY_NO_OFFSET, "name",
                        "\"%.*s\" is already in the file", (int)(name_len > 64 ? 64 : name_len),
                        name);
  HURRAY_TRY(check_tensor(w, descriptor, buffers, sizes, false, err));
  HURRAY_TRY(reserve_entries(w, 1, name_len, err));
  return write_tensor(w, name, name_len, descriptor, buffers, err);
}

/* ---- composites ------------------------------------------------------------------- */

typedef struct CNodes {
  const HurrayFileCompositeNode **v;
  const char **names; /* node k's name: its own, or made (owned: made[k]) */
  size_t *lens;
  char **made;
  uint64_t n;
  uint64_t cap;
  uint64_t name_bytes;
} CNodes;

static const uint8_t *c_name_at(const void *ctx, uint32_t i, size_t *len) {
  const CNodes *c = ctx;
  *len = c->lens[i];
  return (const uint8_t *)c->names[i];
}

static void c_free(CNodes *c) {
  for (uint64_t k = 0; k < c->n; k++) hurray__free(c->made[k]);
  hurray__free(c->v);
  hurray__free((void *)c->names);
  hurray__free(c->lens);
  hurray__free(c->made);
}

/* Room for one more node. */
static bool c_grow(CNodes *c) {
  if (c->n < c->cap) return true;
  uint64_t cap = c->cap ? c->cap * 2 : 16;
  const HurrayFileCompositeNode **v = hurray__malloc((size_t)cap * sizeof *v);
  const char **names = hurray__malloc((size_t)cap * sizeof *names);
  size_t *lens = hurray__malloc((size_t)cap * sizeof *lens);
  char **made = hurray__malloc((size_t)cap * sizeof *made);
  if (v == NULL || names == NULL || lens == NULL || made == NULL) {
    hurray__free(v);
    hurray__free((void *)names);
    hurray__free(lens);
    hurray__free(made);
    return false;
  }
  if (c->n) {
    memcpy(v, c->v, (size_t)c->n * sizeof *v);
    memcpy((void *)names, (const void *)c->names, (size_t)c->n * sizeof *names);
    memcpy(lens, c->lens, (size_t)c->n * sizeof *lens);
    memcpy(made, c->made, (size_t)c->n * sizeof *made);
  }
  hurray__free(c->v);
  hurray__free((void *)c->names);
  hurray__free(c->lens);
  hurray__free(c->made);
  c->v = v;
  c->names = names;
  c->lens = lens;
  c->made = made;
  c->cap = cap;
  return true;
}

/* Flattens the tree pre-order and checks its shape: member counts, depth,
 * each level's composition rules, each leaf's buffers. `parent`: the node
 * number of the head whose member `k` this node is (UINT64_MAX for the root);
 * a member with no name (NULL, length 0) is named "{parent's name}.{k}". */
static HurrayStatus collect(const HurrayFileWriter *w, const HurrayFileCompositeNode *node,
                            uint32_t depth, uint64_t parent, uint32_t k, CNodes *c,
                            HurrayError *err) {
  char field[48];
  hurray__path(field, sizeof field, "composite node %llu", (unsigned long long)c->n);
  if (node == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field, "is NULL");
  if (c->n >= UINT32_MAX / 4)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                        "too many nodes");
  if (!c_grow(c))
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, field,
                        "out of memory");
  const uint64_t at = c->n;
  const char *name = node->name;
  size_t len = node->name_len;
  char *made = NULL;
  if (name == NULL && len == 0 && parent != UINT64_MAX) {
    char suffix[16];
    int m = snprintf(suffix, sizeof suffix, ".%u", (unsigned)k);
    len = c->lens[parent] + (size_t)m;
    made = hurray__malloc(len + 1u);
    if (made == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, field,
                          "out of memory");
    memcpy(made, c->names[parent], c->lens[parent]);
    memcpy(made + c->lens[parent], suffix, (size_t)m + 1u);
    name = made;
  }
  c->v[at] = node;
  c->names[at] = name;
  c->lens[at] = len;
  c->made[at] = made;
  c->n++; /* before any failure below: c_free frees `made` */
  HURRAY_TRY(check_name_syntax(name, len, field, err));
  if (name_taken(w, name, len))
    return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, HURRAY_NO_OFFSET, field,
                        "name \"%.*s\" is already in the file", (int)(len > 64 ? 64 : len),
                        name);
  if (node->descriptor == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field,
                        "descriptor is NULL");
  c->name_bytes += len;

  uint32_t members;
  if (!hurray__file_composite_members(node->descriptor, &members)) {
    if (node->member_count != 0 || node->members != NULL)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, field,
                          "has members but its descriptor is not a composite head");
    return check_tensor(w, node->descriptor, node->buffers, node->sizes, false, err);
  }
  if (depth >= HURRAY_FILE_MAX_COMPOSITE_DEPTH)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, HURRAY_NO_OFFSET, field,
                        "composite nesting deeper than %u levels",
                        HURRAY_FILE_MAX_COMPOSITE_DEPTH);
  if (node->member_count != members)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, HURRAY_NO_OFFSET, field,
                        "has %u members but its head declares member_count %u",
                        node->member_count, members);
  if (members > 0 && node->members == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, field,
                        "members is NULL");
  HURRAY_TRY(check_tensor(w, node->descriptor, NULL, NULL, true, err));
  const HurrayDescriptor **md = NULL;
  if (members > 0) {
    md = hurray__malloc((size_t)members * sizeof *md);
    if (md == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, field,
                          "out of memory");
    for (uint32_t m = 0; m < members; m++) md[m] = node->members[m].descriptor;
  }
  for (uint32_t m = 0; m < members; m++) {
    HurrayStatus st = collect(w, &node->members[m], depth + 1, at, m, c, err);
    if (st != HURRAY_OK) {
      hurray__free(md);
      return st;
    }
  }
  HurrayStatus st =
      hurray__file_check_composite_level(node->descriptor, md, members, depth, 0, err);
  hurray__free(md);
  return st;
}

HurrayStatus hurray_file_writer_add_composite(HurrayFileWriter *w,
                                              const HurrayFileCompositeNode *root,
                                              HurrayError *err) {
  if (w == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "writer", "is NULL");
  HURRAY_TRY(state_check(w, err));
  if (root == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "root", "is NULL");
  uint32_t members;
  if (root->descriptor != NULL && !hurray__file_composite_members(root->descriptor, &members))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "root",
                        "descriptor is not a composite head");
  CNodes c;
  memset(&c, 0, sizeof c);
  HurrayNameLookup lk;
  memset(&lk, 0, sizeof lk);
  HurrayStatus st = collect(w, root, 0, UINT64_MAX, 0, &c, err);
  if (st == HURRAY_OK) {
    uint32_t a = 0, b = 0;
    st = hurray__lookup_build(&lk, (uint32_t)c.n, false, c_name_at, &c, NULL, &a, &b);
    if (st == HURRAY_ERR_DUPLICATE_NAME)
      st = hurray__fail(err, st, HURRAY_NO_OFFSET, "composite",
                        "nodes %u and %u are both named \"%.*s\"", a, b,
                        (int)(c.lens[b] > 64 ? 64 : c.lens[b]), c.names[b]);
    else if (st != HURRAY_OK)
      st = hurray__fail(err, st, HURRAY_NO_OFFSET, "composite", "out of memory");
  }
  if (st == HURRAY_OK) st = reserve_entries(w, c.n, c.name_bytes, err);
  for (uint64_t k = 0; st == HURRAY_OK && k < c.n; k++) {
    const HurrayFileCompositeNode *n = c.v[k];
    st = write_tensor(w, c.names[k], c.lens[k], n->descriptor, n->buffers, err);
    /* A failure after the head is out leaves a torn composite: fail the writer. */
    if (st != HURRAY_OK && k > 0) w->state = W_FAILED;
  }
  hurray__lookup_free(&lk);
  c_free(&c);
  return st;
}

/* ---- KV ---------------------------------------------------------------------------- */

static bool is_checksum_key(const char *key, size_t key_len) {
  return key_len == HURRAY_FILE_KV_DATA_CRC32C_LEN &&
         memcmp(key, HURRAY_FILE_KV_DATA_CRC32C, key_len) == 0;
}

/* Appends one KV entry (key syntax checked). */
static HurrayStatus kv_append(HurrayFileWriter *w, const char *key, size_t key_len,
                              const HurrayKvValue *value, HurrayError *err) {
  if (value == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "value", "is NULL");
  uint32_t other;
  if (hurray__name_index_find(&w->kv_ix, (const uint8_t *)key, key_len,
                              hurray__name_hash((const uint8_t *)key, key_len), w_key_at, w,
                              &other))
    return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, HURRAY_NO_OFFSET, "key",
                        "\"%.*s\" is already set", (int)(key_len > 64 ? 64 : key_len), key);
  uint64_t vlen = 0;
  HURRAY_TRY(hurray__kv_value_check(value, &vlen, err));
  uint64_t entry = 2u + key_len + vlen;
  /* The section (count + entries) must fit kv_length, a u32. */
  if (vlen > UINT32_MAX || entry > (uint64_t)UINT32_MAX - 4u - w->kv.len ||
      w->kv_count == UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "value",
                        "the KV section would exceed 4 GiB");
  if (w->kv_count == w->kv_cap) {
    uint32_t cap = w->kv_cap ? w->kv_cap * 2 : 16;
    KvKey *k = hurray__malloc((size_t)cap * sizeof *k);
    if (k == NULL) goto oom;
    if (w->kv_count) memcpy(k, w->kv_keys, (size_t)w->kv_count * sizeof *k);
    hurray__free(w->kv_keys);
    w->kv_keys = k;
    w->kv_cap = cap;
  }
  if (hurray__buf_reserve(&w->kv, (size_t)entry) != HURRAY_OK ||
      hurray__name_index_reserve(&w->kv_ix, w->kv_count + 1) != HURRAY_OK)
    goto oom;
  uint8_t *o = w->kv.data + w->kv.len;
  hurray__st16(o, (uint16_t)key_len);
  memcpy(o + 2, key, key_len);
  hurray__kv_value_encode(value, o + 2 + key_len);
  w->kv_keys[w->kv_count].off = w->kv.len + 2;
  w->kv_keys[w->kv_count].len = (uint32_t)key_len;
  w->kv.len += (size_t)entry;
  (void)hurray__name_index_insert(&w->kv_ix, hurray__name_hash((const uint8_t *)key, key_len),
                                  w->kv_count, w_key_at, w, &other);
  w->kv_count++;
  return HURRAY_OK;
oom:
  return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "kv", "out of memory");
}

HurrayStatus hurray_file_writer_add_kv(HurrayFileWriter *w, const char *key, size_t key_len,
                                       const HurrayKvValue *value, HurrayError *err) {
  if (w == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "writer", "is NULL");
  HURRAY_TRY(state_check(w, err));
  HURRAY_TRY(check_name_syntax(key, key_len, "key", err));
  if (w->checksums && is_checksum_key(key, key_len))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key",
                        "\"" HURRAY_FILE_KV_DATA_CRC32C "\" is written by the writer itself "
                        "(options.data_checksums)");
  return kv_append(w, key, key_len, value, err);
}

HurrayStatus hurray_file_writer_add_view(HurrayFileWriter *w, const HurrayFileView *view,
                                         HurrayError *err) {
  if (w == NULL || view == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        w == NULL ? "writer" : "view", "is NULL");
  HURRAY_TRY(state_check(w, err));
  HURRAY_TRY(check_name_syntax(view->name, view->name_len, "view.name", err));
  HURRAY_TRY(check_name_syntax(view->base, view->base_len, "view.base", err));
  const int nl = (int)(view->name_len > 64 ? 64 : view->name_len);
  if (name_taken(w, view->name, view->name_len))
    return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, HURRAY_NO_OFFSET, "view.name",
                        "\"%.*s\" is a tensor of the file", nl, view->name);
  uint32_t other;
  const uint32_t vh = hurray__name_hash((const uint8_t *)view->name, view->name_len);
  if (w->view_count > 0 && hurray__name_index_find(&w->view_ix, (const uint8_t *)view->name,
                                                   view->name_len, vh, w_view_at, w, &other))
    return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, HURRAY_NO_OFFSET, "view.name",
                        "\"%.*s\" is already a view of the file", nl, view->name);
  uint32_t bi;
  if (!hurray__name_index_find(&w->name_ix, (const uint8_t *)view->base, view->base_len,
                               hurray__name_hash((const uint8_t *)view->base, view->base_len),
                               w_name_at, w, &bi))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "view.base",
                        "view \"%.*s\": its base \"%.*s\" is no tensor written so far", nl,
                        view->name, (int)(view->base_len > 64 ? 64 : view->base_len),
                        view->base);
  if (!view->same) {
    if (hurray_dtype_name(view->dtype) == NULL)
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "view.dtype",
                          "view \"%.*s\": 0x%02x names no type", nl, view->name, view->dtype);
    HURRAY_TRY(hurray__view_check(view, &w->entries[bi].vb, HURRAY_ERR_INVALID_ARGUMENT,
                                  HURRAY_NO_OFFSET, "view", err));
  }
  /* room first, so that recording it cannot fail half-way */
  if (w->view_count == 0 && w->view_cap == 0 &&
      hurray__name_index_init(&w->view_ix, 16) != HURRAY_OK)
    goto oom;
  if (w->view_count == w->view_cap) {
    if (w->view_cap >= UINT32_MAX / 4) goto oom;
    uint32_t cap = w->view_cap ? w->view_cap * 2 : 16;
    KvKey *k = hurray__malloc((size_t)cap * sizeof *k);
    if (k == NULL) goto oom;
    if (w->view_count) memcpy(k, w->view_keys, (size_t)w->view_count * sizeof *k);
    hurray__free(w->view_keys);
    w->view_keys = k;
    w->view_cap = cap;
  }
  if (hurray__name_index_reserve(&w->view_ix, w->view_count + 1) != HURRAY_OK ||
      hurray__buf_reserve(&w->view_names, view->name_len) != HURRAY_OK)
    goto oom;
  size_t json_len = w->views_json.len;
  if ((w->view_count > 0 && hurray__buf_reserve(&w->views_json, 1) != HURRAY_OK)) goto oom;
  if (w->view_count > 0) w->views_json.data[w->views_json.len++] = ',';
  if (hurray__views_encode(&w->views_json, view) != HURRAY_OK) {
    w->views_json.len = json_len;
    goto oom;
  }
  w->view_keys[w->view_count].off = w->view_names.len;
  w->view_keys[w->view_count].len = (uint32_t)view->name_len;
  memcpy(w->view_names.data + w->view_names.len, view->name, view->name_len);
  w->view_names.len += view->name_len;
  (void)hurray__name_index_insert(&w->view_ix, vh, w->view_count, w_view_at, w, &other);
  w->view_count++;
  return HURRAY_OK;
oom:
  return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "view", "out of memory");
}

/* The views record, as the KV entry HURRAY_FILE_KV_VIEWS (finish). */
static HurrayStatus add_views_record(HurrayFileWriter *w, HurrayError *err) {
  if (w->view_count == 0) return HURRAY_OK;
  uint32_t other;
  if (hurray__name_index_find(&w->kv_ix, (const uint8_t *)HURRAY_FILE_KV_VIEWS,
                              HURRAY_FILE_KV_VIEWS_LEN,
                              hurray__name_hash((const uint8_t *)HURRAY_FILE_KV_VIEWS,
                                                HURRAY_FILE_KV_VIEWS_LEN),
                              w_key_at, w, &other))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "key",
                        "\"" HURRAY_FILE_KV_VIEWS "\" was given as a KV entry and views were "
                        "added too: the writer records the views itself");
  /* a tensor written after a view took its name */
  for (uint32_t i = 0; i < w->view_count; i++) {
    const uint8_t *nm = w->view_names.data + w->view_keys[i].off;
    size_t len = w->view_keys[i].len;
    if (name_taken(w, (const char *)nm, len))
      return hurray__fail(err, HURRAY_ERR_DUPLICATE_NAME, HURRAY_NO_OFFSET, "view.name",
                          "\"%.*s\" is both a view and a tensor of the file",
                          (int)(len > 64 ? 64 : len), (const char *)nm);
  }
  static const char head[] = "{\"format\":1,\"views\":{";
  static const char tail[] = "}}";
  const size_t n = sizeof head - 1 + w->views_json.len + sizeof tail - 1;
  if (n > UINT32_MAX)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "view",
                        "the views record would exceed 4 GiB");
  char *text = hurray__malloc(n);
  if (text == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "view",
                        "out of memory");
  memcpy(text, head, sizeof head - 1);
  if (w->views_json.len) memcpy(text + sizeof head - 1, w->views_json.data, w->views_json.len);
  memcpy(text + sizeof head - 1 + w->views_json.len, tail, sizeof tail - 1);
  HurrayKvValue v = hurray_kv_string(text, (uint32_t)n);
  HurrayStatus st = kv_append(w, HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_VIEWS_LEN, &v, err);
  hurray__free(text);
  return st;
}

uint64_t hurray_file_writer_tensor_count(const HurrayFileWriter *w) {
  return w != NULL ? w->count : 0;
}

/* ---- finish ------------------------------------------------------------------------ */

/* Larger than the largest entry (34 + 65535 bytes). */
#define INDEX_CHUNK (128u * 1024u)

/* Streams the index through a bounded buffer, computing its CRC. */
/* The index order (entries sorted by name) of a SORTED_INDEX writer in
 * *out (owned: hurray__free), or NULL for write order. */
static HurrayStatus index_order(HurrayFileWriter *w, uint32_t **out, HurrayError *err) {
  *out = NULL;
  if (!w->sorted || w->count <= 1) return HURRAY_OK;
  uint32_t *perm = hurray__malloc((size_t)w->count * sizeof *perm);
  if (perm == NULL) goto oom;
  for (uint32_t i = 0; i < w->count; i++) perm[i] = i;
  if (hurray__names_sort(perm, (uint32_t)w->count, w_name_at, w) != HURRAY_OK) {
    hurray__free(perm);
    goto oom;
  }
  *out = perm;
  return HURRAY_OK;
oom:
  return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "index",
                      "out of memory");
}

/* Adds the data checksums record: 8 bytes per entry, in index order. */
static HurrayStatus add_checksums(HurrayFileWriter *w, const uint32_t *perm, HurrayError *err) {
  if (w->count > UINT32_MAX / HURRAY__DATA_CRC_ENTRY)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET,
                        HURRAY_FILE_KV_DATA_CRC32C, "too many tensors for the record");
  size_t n = (size_t)w->count * HURRAY__DATA_CRC_ENTRY;
  uint8_t *rec = hurray__malloc(n ? n : 1);
  if (rec == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET,
                        HURRAY_FILE_KV_DATA_CRC32C, "out of memory");
  for (uint64_t k = 0; k < w->count; k++) {
    const WEntry *e = &w->entries[perm ? perm[k] : k];
    hurray__st32(rec + k * HURRAY__DATA_CRC_ENTRY, e->desc_crc);
    hurray__st32(rec + k * HURRAY__DATA_CRC_ENTRY + 4, e->data_crc);
  }
  HurrayKvValue v = hurray_kv_bytes(rec, (uint32_t)n);
  HurrayStatus st =
      kv_append(w, HURRAY_FILE_KV_DATA_CRC32C, HURRAY_FILE_KV_DATA_CRC32C_LEN, &v, err);
  hurray__free(rec);
  return st;
}

/* Streams the index (in the order perm gives, or write order) through a
 * bounded buffer, computing its CRC. */
static HurrayStatus write_index(HurrayFileWriter *w, const uint32_t *perm, uint64_t off,
                                uint64_t *out_len, uint32_t *out_crc, HurrayError *err) {
  uint8_t *buf = hurray__malloc(INDEX_CHUNK);
  if (buf == NULL) goto oom;
  uint32_t crc = 0;
  uint64_t pos = off;
  size_t used = 8;
  hurray__st64(buf, w->count);
  HurrayStatus st = HURRAY_OK;
  for (uint64_t k = 0; st == HURRAY_OK && k <= w->count; k++) {
    size_t want = 0;
    const WEntry *e = NULL;
    if (k < w->count) {
      e = &w->entries[perm ? perm[k] : k];
      want = HURRAY__FILE_INDEX_ENTRY_FIXED + e->name_len;
    }
    /* Flush when the entry does not fit (an entry is at most 65569 bytes). */
    if (k == w->count || used + want > INDEX_CHUNK) {
      crc = hurray_crc32c(crc, buf, used);
      st = w_put(w, buf, used, pos, "writing the index", err);
      pos += used;
      used = 0;
    }
    if (e != NULL && st == HURRAY_OK) {
      uint8_t *o = buf + used;
      hurray__st16(o, (uint16_t)e->name_len);
      memcpy(o + 2, w->names.data + e->name_off, e->name_len);
      o += 2 + e->name_len;
      hurray__st64(o, e->desc_off);
      hurray__st32(o + 8, e->desc_len);
      hurray__st64(o + 12, e->data_off);
      hurray__st64(o + 20, e->data_len);
      hurray__st32(o + 28, 0); /* flags */
      used += want;
    }
  }
  hurray__free(buf);
  *out_len = pos - off;
  *out_crc = crc;
  return st;
oom:
  return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "index",
                      "out of memory");
}

static HurrayStatus sync_dir(const HurrayFileWriter *w, HurrayError *err) {
  bool opened = false;
  int e = hurray__os_sync_dir(w->dir_path, &opened);
  if (e == 0) return HURRAY_OK;
  return hurray__io_fail(err, e, HURRAY_NO_OFFSET,
                         opened ? "syncing the directory (the file is in place)"
                                : "opening the directory");
}

/* Everything after the tensors: the KV section, the index, the trailer and
 * the header. */
static HurrayStatus write_tail(HurrayFileWriter *w, HurrayError *err) {
  uint32_t *perm = NULL;
  HurrayStatus st = add_views_record(w, err);
  if (st == HURRAY_OK) st = index_order(w, &perm, err);
  if (st == HURRAY_OK && w->checksums) st = add_checksums(w, perm, err);
  uint64_t pos = w->cur;
  uint64_t kv_off = 0;
  uint32_t kv_len = 0;
  if (st == HURRAY_OK && w->kv_count > 0) {
    uint8_t cnt[4];
    hurray__st32(cnt, w->kv_count);
    kv_off = pos;
    kv_len = (uint32_t)(4u + w->kv.len);
    st = w_put(w, cnt, 4, pos, "writing the KV section", err);
    if (st == HURRAY_OK)
      st = w_put(w, w->kv.data, w->kv.len, pos + 4, "writing the KV section", err);
    (void)hurray__align_up_u64(pos + kv_len, 8, &pos);
  }
  uint64_t index_len = 0;
  uint32_t crc = 0;
  if (st == HURRAY_OK) st = write_index(w, perm, pos, &index_len, &crc, err);
  hurray__free(perm);
  if (st == HURRAY_OK) {
    uint8_t t[HURRAY_FILE_TRAILER_LEN];
    memset(t, 0, sizeof t);
    hurray__st64(t, pos);
    hurray__st64(t + 8, index_len);
    hurray__st64(t + 16, kv_off);
    hurray__st32(t + 24, kv_len);
    hurray__st32(t + 28, crc);
    memcpy(t + 36, HURRAY_FILE_TRAILER_MAGIC, 4);
    st = w_put(w, t, sizeof t, pos + index_len, "writing the trailer", err);
  }
  if (st == HURRAY_OK) {
    uint8_t h[HURRAY_FILE_HEADER_LEN];
    memset(h, 0, sizeof h);
    memcpy(h, HURRAY_FILE_MAGIC, 8);
    h[8] = HURRAY_FILE_VERSION_MAJOR;
    h[9] = HURRAY_FILE_VERSION_MINOR;
    uint32_t flags = HURRAY_FILE_FLAG_HAS_INDEX_CRC32C;
    if (w->sorted) flags |= HURRAY_FILE_FLAG_SORTED_INDEX;
    if (w->kv_count > 0) flags |= HURRAY_FILE_FLAG_HAS_KV_METADATA;
    hurray__st32(h + 12, flags);
    hurray__st32(h + 16, w->align);
    hurray__st64(h + 20, HURRAY_FILE_HEADER_LEN);
    hurray__st64(h + 28, w->count); /* known: the header is written last */
    st = w_put(w, h, sizeof h, 0, "writing the header", err);
  }
  return st;
}

HurrayStatus hurray_file_writer_finish(HurrayFileWriter *w, HurrayError *err) {
  if (w == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "writer", "is NULL");
  if (w->memory)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "writer",
                        "writes to memory: finish it with hurray_file_writer_finish_memory");
  HURRAY_TRY(state_check(w, err));
  HurrayStatus st = write_tail(w, err);
  int e;
  if (st == HURRAY_OK && !w->skip_fsync && (e = hurray__os_sync(w->fd)) != 0)
    st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "syncing the file");
  /* Complete (and synced, unless skip_fsync), then named: no name ever shows
   * a file still being written. */
  HurrayOsFile fd = w->fd;
  if (st == HURRAY_OK && w->unnamed) {
    /* Named and at once renamed over the target, the descriptor still open,
     * so that the only moment a kill can leave a (complete) temporary behind
     * is between these two calls. */
    st = name_temp(w, err);
    if (st == HURRAY_OK && (e = hurray__os_replace(w->tmp_path, w->path)) != 0)
      st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "renaming the file into place");
    w->fd = HURRAY__OS_FILE_NONE;
    if ((e = hurray__os_close(fd)) != 0 && st == HURRAY_OK)
      st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "closing the file");
  } else {
    w->fd = HURRAY__OS_FILE_NONE;
    if ((e = hurray__os_close(fd)) != 0 && st == HURRAY_OK)
      st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "closing the file");
    if (st == HURRAY_OK && (e = hurray__os_replace(w->tmp_path, w->path)) != 0)
      st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "renaming the file into place");
  }
  w->state = W_DONE;
  if (st != HURRAY_OK) {
    if (w->named) (void)hurray__os_remove(w->tmp_path);
    w->named = false;
    return st;
  }
  w->named = false; /* renamed: nothing left to remove */
  if (!w->skip_fsync) return sync_dir(w, err);
  return HURRAY_OK;
}

HurrayStatus hurray_file_writer_finish_memory(HurrayFileWriter *w, void **data, uint64_t *size,
                                             HurrayError *err) {
  if (data != NULL) *data = NULL;
  if (size != NULL) *size = 0;
  if (w == NULL || data == NULL || size == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        w == NULL ? "writer" : data == NULL ? "data" : "size", "is NULL");
  if (!w->memory)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "writer",
                        "writes a file: finish it with hurray_file_writer_finish");
  HURRAY_TRY(state_check(w, err));
  HurrayStatus st = write_tail(w, err);
  w->state = W_DONE;
  if (st != HURRAY_OK) {
    hurray_free(w->mem);
    w->mem = NULL;
    w->mem_len = w->mem_cap = 0;
    return st;
  }
  *data = w->mem;
  *size = w->mem_len;
  w->mem = NULL;
  w->mem_len = w->mem_cap = 0;
  return HURRAY_OK;
}

void hurray_file_writer_abort(HurrayFileWriter *w) {
  if (w == NULL) return;
  hurray_free(w->mem);
  w->mem = NULL;
  w->mem_len = w->mem_cap = 0;
  if (w->fd != HURRAY__OS_FILE_NONE) {
    (void)hurray__os_close(w->fd);
    w->fd = HURRAY__OS_FILE_NONE;
  }
  if (w->named) (void)hurray__os_remove(w->tmp_path);
  w->named = false;
  w->state = W_DONE;
}

void hurray_file_writer_destroy(HurrayFileWriter **pw) {
  if (pw == NULL || *pw == NULL) return;
  HurrayFileWriter *w = *pw;
  *pw = NULL;
  hurray_file_writer_abort(w);
  hurray__free(w->path);
  hurray__free(w->tmp_path);
  hurray__free(w->dir_path);
  hurray__free(w->entries);
  hurray__buf_free(&w->names);
  hurray__name_index_free(&w->name_ix);
  hurray__buf_free(&w->kv);
  hurray__free(w->kv_keys);
  hurray__name_index_free(&w->kv_ix);
  hurray__buf_free(&w->scratch);
  hurray__buf_free(&w->views_json);
  hurray__buf_free(&w->view_names);
  hurray__free(w->view_keys);
  hurray__name_index_free(&w->view_ix);
  hurray__free(w);
}

/* ---- stray temporary files ---------------------------------------------------------- */

typedef struct StaleMatch {
  const char *base; /* only temporaries of this target name; NULL: any */
  size_t blen;
} StaleMatch;

/* Whether `name` is one of this writer's temporary names: ".<base>.tmp-"
 * then 6 letters of g_suffix_digits, <base> not empty. */
static bool is_writer_temp(void *ctx, const char *name) {
  const StaleMatch *m = ctx;
  size_t n = strlen(name);
  if (n < 2u + TEMP_MARK_LEN + TEMP_SUFFIX_LEN || name[0] != '.') return false;
  const char *mark = name + n - TEMP_SUFFIX_LEN - TEMP_MARK_LEN;
  if (memcmp(mark, TEMP_MARK, TEMP_MARK_LEN) != 0) return false;
  for (const char *c = mark + TEMP_MARK_LEN; *c != '\0'; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '2' && *c <= '7'))) return false;
  size_t blen = (size_t)(mark - name) - 1u;
  if (m->base == NULL) return true;
  return blen == m->blen && memcmp(name + 1, m->base, blen) == 0;
}

HurrayStatus hurray_file_remove_stale_temporaries(const char *dir_or_target,
                                                  uint32_t min_age_seconds, uint32_t *removed,
                                                  HurrayError *err) {
  if (removed != NULL) *removed = 0;
  if (dir_or_target == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "dir_or_target",
                        "is NULL");
  StaleMatch m = {NULL, 0};
  char *dir = NULL;
  const char *where = dir_or_target;
  if (dir_or_target[0] == '\0')
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "dir_or_target",
                        "is empty");
  if (!hurray__os_is_dir(dir_or_target)) {
    /* A target: its temporaries only, in its directory (as the writer places them). */
    const char *base = hurray__path_base(dir_or_target);
    m.base = base;
    m.blen = strlen(base);
    if (m.blen == 0 || (m.blen == 1 && base[0] == '.') ||
        (m.blen == 2 && memcmp(base, "..", 2) == 0))
      return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "dir_or_target",
                          "\"%s\" names neither a directory nor a file", dir_or_target);
    if (base == dir_or_target) {
      where = ".";
    } else {
      size_t dlen = base - 1 == dir_or_target ? 1u : (size_t)(base - 1 - dir_or_target);
      dir = dup_str(dir_or_target, dlen);
      if (dir == NULL)
        return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "dir_or_target",
                            "out of memory");
      where = dir;
    }
  }
  uint32_t n = 0;
  int first = 0;
  char first_name[80];
  int e = hurray__os_remove_stale(where, is_writer_temp, &m, min_age_seconds, &n, &first,
                                  first_name, sizeof first_name);
  hurray__free(dir);
  if (removed != NULL) *removed = n;
  if (e != 0) return hurray__io_fail(err, e, HURRAY_NO_OFFSET, "opening the directory");
  if (first != 0) {
    char what[128];
    snprintf(what, sizeof what, "removing \"%s\"", first_name);
    return hurray__io_fail(err, first, HURRAY_NO_OFFSET, what);
  }
  return HURRAY_OK;
}
