/*
 * Opening a .hrry file: header, trailer, index and KV section, validated
 * before anything is trusted (docs/spec/file-format.md § Reader Protocol;
 * docs/internals/decisions.md § File format).
 *
 * What open proves, so that a fetch only has to check its own descriptor:
 *  - header: magic, major version 1, reserved bytes 0, no reserved flag bits,
 *    data alignment a power of two in [4096, 2 MiB], first_descriptor_offset
 *    >= 64, 8-aligned and inside the file;
 *  - trailer: magic (checked first), reserved bytes 0, the index and the KV
 *    section 8-aligned, after the header, KV before the index, the index
 *    ending at or before the trailer; a CRC field of 0 when the CRC flag is
 *    clear; HAS_KV_METADATA consistent with the KV fields (a KV section with
 *    the flag clear is accepted: the reference writer never sets it);
 *  - index (index.c): CRC-32C when flagged, exact length, entry count
 *    bounded by the bytes, names 1..65535 bytes of valid UTF-8, flags 0,
 *    every descriptor 8-aligned and at least 20 bytes, every data region
 *    after its descriptor, A-aligned when not empty, and all of them inside
 *    the tensor region and disjoint;
 *  - KV: every tag and length, unique keys, no trailing bytes;
 *  - tensor_count_hint: unknown (all ones) or equal to the entry count.
 * Names are compared with each other by the lookups (lookup.c): a lookup
 * that succeeds has proven its name unique. Tensors listed out of file order
 * are sorted, and checked for overlaps, when file order is first needed
 * (order.c). hurray_file_verify does both at once.
 * Every length is compared with the file size and the caps of the options
 * before any allocation is sized from it.
 */
#include <stdio.h>

#include "internal/file.h"

#define DEFAULT_MAX_INDEX ((uint64_t)1 << 30)
#define DEFAULT_MAX_KV ((uint64_t)64 << 20)
#define DEFAULT_MAX_DESCRIPTOR ((uint64_t)16 << 20)

static void apply_defaults(HurrayFileOpenOptions *o, const HurrayFileOpenOptions *in) {
  memset(o, 0, sizeof *o);
  if (in != NULL) *o = *in;
  if (o->max_index_bytes == 0) o->max_index_bytes = DEFAULT_MAX_INDEX;
  if (o->max_kv_bytes == 0) o->max_kv_bytes = DEFAULT_MAX_KV;
  if (o->max_descriptor_bytes == 0) o->max_descriptor_bytes = DEFAULT_MAX_DESCRIPTOR;
  if (o->max_composite_depth == 0 || o->max_composite_depth > HURRAY_FILE_MAX_COMPOSITE_DEPTH)
    o->max_composite_depth = HURRAY_FILE_MAX_COMPOSITE_DEPTH;
  o->workers = hurray__file_workers(o->workers);
}

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0) return false;
  return true;
}

/* "HRRY\x00..." for a message: printable ASCII kept, other bytes escaped. */
static const char *printable8(const uint8_t *p, char *buf, size_t n) {
  size_t o = 0;
  for (int i = 0; i < 8 && o + 5 < n; i++) {
    if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '"' && p[i] != '\\') buf[o++] = (char)p[i];
    else o += (size_t)snprintf(buf + o, n - o, "\\x%02X", p[i]);
  }
  buf[o] = '\0';
  return buf;
}

#define BAD(off, field, ...) hurray__fail(err, HURRAY_ERR_INVALID_FILE, (off), (field), __VA_ARGS__)

/* ---- header and trailer ------------------------------------------------------- */

static HurrayStatus parse_header(HurrayFile *f, const uint8_t *h, HurrayError *err) {
  HurrayFileInfo *in = &f->info;
  char shown[40];
  if (memcmp(h, HURRAY_FILE_MAGIC, 8) != 0) {
    /* another kind of file: say which, and what to do */
    HURRAY_TRY(hurray__file_not_hrry(h, HURRAY_FILE_HEADER_LEN, in->file_size, err));
    return BAD(0, "header.magic", "is not \"HRRYFILE\" (got \"%s\")",
               printable8(h, shown, sizeof shown));
  }
  in->version_major = h[8];
  in->version_minor = h[9];
  if (in->version_major != HURRAY_FILE_VERSION_MAJOR)
    return hurray__fail(err, HURRAY_ERR_VERSION_MISMATCH, 8, "header.container_version_major",
                        "is %u; this reader supports major version %u", in->version_major,
                        HURRAY_FILE_VERSION_MAJOR);
  if (h[10] != 0 || h[11] != 0) return BAD(10, "header._reserved", "must be zero");
  in->flags = hurray__ld32(h + 12);
  if (in->flags & ~HURRAY_FILE_FLAGS_KNOWN)
    return BAD(12, "header.file_flags", "reserved bits set (0x%08X)", in->flags);
  in->data_alignment = hurray__ld32(h + 16);
  if (!hurray__is_pow2_u64(in->data_alignment) ||
      in->data_alignment < HURRAY_FILE_MIN_ALIGNMENT ||
      in->data_alignment > HURRAY_FILE_MAX_ALIGNMENT)
    return BAD(16, "header.data_buffer_alignment",
               "must be a power of two in [4096, 2097152], got %u", in->data_alignment);
  in->first_descriptor_offset = hurray__ld64(h + 20);
  if (in->first_descriptor_offset < HURRAY_FILE_HEADER_LEN ||
      (in->first_descriptor_offset & 7u) != 0)
    return BAD(20, "header.first_descriptor_offset", "must be >= 64 and 8-aligned, got %llu",
               (unsigned long long)in->first_descriptor_offset);
  in->tensor_count_hint = hurray__ld64(h + 28);
  if (!all_zero(h + 36, 28)) return BAD(36, "header._reserved_header", "must be zero");
  return HURRAY_OK;
}

static HurrayStatus parse_trailer(HurrayFile *f, const uint8_t *t, HurrayError *err) {
  HurrayFileInfo *in = &f->info;
  const uint64_t size = in->file_size;
  const uint64_t toff = size - HURRAY_FILE_TRAILER_LEN;
  if (memcmp(t + 36, HURRAY_FILE_TRAILER_MAGIC, 4) != 0)
    return BAD(toff + 36, "trailer.trailer_magic", "is not \"HRRY\"");
  if (!all_zero(t + 32, 4)) return BAD(toff + 32, "trailer._reserved", "must be zero");
  in->index_offset = hurray__ld64(t);
  in->index_length = hurray__ld64(t + 8);
  in->kv_offset = hurray__ld64(t + 16);
  in->kv_length = hurray__ld32(t + 24);
  in->index_crc32c = hurray__ld32(t + 28);

  uint64_t end;
  if (hurray__add_overflow_u64(in->index_offset, in->index_length, &end) || end > toff)
    return BAD(toff, "trailer.index_offset",
               "index [%llu, +%llu) extends into the trailer at %llu",
               (unsigned long long)in->index_offset, (unsigned long long)in->index_length,
               (unsigned long long)toff);
  if (in->index_offset < in->first_descriptor_offset || (in->index_offset & 7u) != 0)
    return BAD(toff, "trailer.index_offset",
               "must be 8-aligned and at or after the first descriptor (%llu), got %llu",
               (unsigned long long)in->first_descriptor_offset,
               (unsigned long long)in->index_offset);
  if (in->index_length < 8)
    return BAD(toff + 8, "trailer.index_length", "must be at least 8 bytes, got %llu",
               (unsigned long long)in->index_length);
  if (in->index_length > f->opts.max_index_bytes)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, toff + 8, "trailer.index_length",
                        "%llu bytes exceeds the limit max_index_bytes = %llu",
                        (unsigned long long)in->index_length,
                        (unsigned long long)f->opts.max_index_bytes);
  if (in->index_length > UINT32_MAX) /* entries are located by 32-bit offsets */
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, toff + 8, "trailer.index_length",
                        "%llu bytes: this reader supports indexes of at most 4 GiB - 1",
                        (unsigned long long)in->index_length);
  if (!(in->flags & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C) && in->index_crc32c != 0)
    return BAD(toff + 28, "trailer.index_crc32c",
               "is 0x%08X but HAS_INDEX_CRC32C is clear (must be 0)", in->index_crc32c);

  bool flag = (in->flags & HURRAY_FILE_FLAG_HAS_KV_METADATA) != 0;
  bool off0 = in->kv_offset == 0, len0 = in->kv_length == 0;
  if (flag && (off0 || len0))
    return BAD(toff + 16, "trailer.kv_offset",
               "HAS_KV_METADATA is set but kv_offset/kv_length are %llu/%u",
               (unsigned long long)in->kv_offset, in->kv_length);
  if (off0 != len0)
    return BAD(toff + 16, "trailer.kv_offset", "kv_offset %llu and kv_length %u disagree",
               (unsigned long long)in->kv_offset, in->kv_length);
  if (!off0) {
    if (in->kv_length < 4) return BAD(toff + 24, "trailer.kv_length", "must be at least 4");
    if (in->kv_length > f->opts.max_kv_bytes)
      return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, toff + 24, "trailer.kv_length",
                          "%u bytes exceeds the limit max_kv_bytes = %llu", in->kv_length,
                          (unsigned long long)f->opts.max_kv_bytes);
    if (in->kv_offset < in->first_descriptor_offset || (in->kv_offset & 7u) != 0 ||
        in->kv_offset > in->index_offset || in->kv_length > in->index_offset - in->kv_offset)
      return BAD(toff + 16, "trailer.kv_offset",
                 "KV [%llu, +%u) must be 8-aligned, after the first descriptor and before "
                 "the index at %llu",
                 (unsigned long long)in->kv_offset, in->kv_length,
                 (unsigned long long)in->index_offset);
  }
  if (in->first_descriptor_offset > (off0 ? in->index_offset : in->kv_offset))
    return BAD(20, "header.first_descriptor_offset", "%llu is past the tensor region",
               (unsigned long long)in->first_descriptor_offset);
  return HURRAY_OK;
}

/* ---- open ------------------------------------------------------------------------- */

static HurrayStatus check_access(const HurrayFileOpenOptions *options, HurrayError *err);

static HurrayFile *file_new(const HurrayFileOpenOptions *options) {
  HurrayFile *f = hurray__calloc(1, sizeof *f);
  if (f == NULL) return NULL;
  hurray__bytes_init(&f->bytes);
  apply_defaults(&f->opts, options);
  if (hurray__file_lookup_init(f) != HURRAY_OK) {
    hurray__free(f);
    return NULL;
  }
  return f;
}

/* Parses the header and the trailer. A valid header without a trailer is a
 * file that ended early: the tensors (from `mem`, or read through `b`) tell
 * how much is missing. */
static HurrayStatus parse_all(HurrayFile *f, const uint8_t *header, const uint8_t *trailer,
                              const uint8_t *mem, const HurrayFileBytes *b, HurrayError *err) {
  HURRAY_TRY(parse_header(f, header, err));
  if (memcmp(trailer + 36, HURRAY_FILE_TRAILER_MAGIC, 4) != 0)
    return hurray__file_explain_trailer(mem, b, f->info.file_size,
                                        f->info.first_descriptor_offset,
                                        f->info.data_alignment, f->opts.max_descriptor_bytes,
                                        trailer, err);
  return parse_trailer(f, trailer, err);
}

static HurrayStatus parse_sections(HurrayFile *f, const uint8_t *index, const uint8_t *kv,
                                   HurrayError *err) {
  HURRAY_TRY(hurray__file_parse_index(f, index, err));
  if (kv != NULL)
    HURRAY_TRY(hurray__kv_parse(kv, f->info.kv_length, f->info.kv_offset, &f->kv, err));
  return HURRAY_OK;
}

/* A file of fewer than 104 bytes (`head` holds them all). */
static HurrayStatus too_small(const uint8_t *head, uint64_t size, HurrayError *err) {
  HURRAY_TRY(hurray__file_not_hrry(head, (size_t)size, size, err));
  if (size >= 8 && memcmp(head, HURRAY_FILE_MAGIC, 8) == 0)
    return BAD(0, "file", "%llu bytes: a .hrry header, then the file ends: it is truncated "
               "(a .hrry file has at least 104 bytes)", (unsigned long long)size);
  return BAD(0, "file", "%llu bytes is smaller than a header and a trailer (104)",
             (unsigned long long)size);
}

HurrayStatus hurray_file_open_memory(const void *data, uint64_t size, HurrayFileReleaseFn release,
                                     void *ctx, const HurrayFileOpenOptions *options,
                                     HurrayFile **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (data == NULL && size > 0)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "data", "is NULL");
  HURRAY_TRY(check_access(options, err));
  if (size < HURRAY__FILE_MIN_SIZE) return too_small(data, size, err);
  HurrayFile *f = file_new(options);
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "file",
                        "out of memory");
  const uint8_t *p = data;
  f->info.file_size = size;
  f->info.mapped = true;
  f->info.access = (uint8_t)HURRAY_FILE_ACCESS_MMAP; /* read-only views of `data` */
  HurrayStatus st = parse_all(f, p, p + size - HURRAY_FILE_TRAILER_LEN, p, NULL, err);
  if (st == HURRAY_OK)
    st = parse_sections(f, p + f->info.index_offset,
                        f->info.kv_offset ? p + f->info.kv_offset : NULL, err);
  if (st == HURRAY_OK) {
    f->source = hurray__calloc(1, sizeof *f->source);
    if (f->source == NULL)
      st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "file",
                        "out of memory");
  }
  if (st != HURRAY_OK) {
    hurray_file_close(&f);
    return st;
  }
  atomic_init(&f->source->refs, 1);
  f->source->base = p;
  f->source->size = size;
  f->source->release = release;
  f->source->release_ctx = ctx;
  if (f->opts.access == HURRAY_FILE_ACCESS_READ) {
    /* tensors are copied out of `data`, which the file keeps until it closes
     * (its index and KV are parsed in place) */
    f->bytes.memory = f->source;
    f->bytes.size = size;
    f->source = NULL;
    f->info.mapped = false;
    f->info.access = (uint8_t)HURRAY_FILE_ACCESS_READ;
  }
  *out = f;
  return HURRAY_OK;
}

/* Maps the whole file (read-only and shared, or private copy-on-write) at an
 * address aligned like its offsets, so that a buffer at an A-aligned offset
 * is A-aligned in memory. */
static HurrayStatus map_file(HurrayFile *f, HurrayOsFile fd, HurrayError *err) {
  uint64_t size = f->info.file_size;
  uint64_t A = f->info.data_alignment;
  if (size > SIZE_MAX - 2 * A)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "file",
                        "%llu bytes cannot be mapped in this address space",
                        (unsigned long long)size);
  f->source = hurray__calloc(1, sizeof *f->source);
  if (f->source == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "file",
                        "out of memory");
  atomic_init(&f->source->refs, 1);
  void *addr = NULL;
  const char *step = NULL;
  const bool cow = f->opts.access == HURRAY_FILE_ACCESS_MMAP_COPY;
  int e = hurray__os_map(fd, size, A, cow, &addr, &step);
  if (e != 0) return hurray__io_fail(err, e, HURRAY_NO_OFFSET, step);
  f->source->writable = cow;
  f->source->map_addr = addr;
  f->source->map_len = (size_t)size;
  f->source->base = addr;
  f->source->size = size;
  return HURRAY_OK;
}

static HurrayStatus read_section(HurrayFile *f, uint64_t off, uint64_t len, uint8_t **out,
                                 const char *what, HurrayError *err) {
  if (len > SIZE_MAX) return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, off, what, "too large");
  *out = hurray__malloc((size_t)(len ? len : 1));
  if (*out == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, off, what, "out of memory (%llu bytes)",
                        (unsigned long long)len);
  return hurray__bytes_read(&f->bytes, *out, len, off, what, err);
}

/* The header and the trailer of a file of f->info.file_size bytes, read
 * through `b`, parsed. */
static HurrayStatus read_head(HurrayFile *f, const HurrayFileBytes *b, HurrayError *err) {
  const uint64_t size = f->info.file_size;
  if (size < HURRAY__FILE_MIN_SIZE) {
    uint8_t head[HURRAY__FILE_MIN_SIZE];
    HURRAY_TRY(hurray__bytes_read(b, head, size, 0, "reading the file", err));
    return too_small(head, size, err);
  }
  uint8_t header[HURRAY_FILE_HEADER_LEN], trailer[HURRAY_FILE_TRAILER_LEN];
  HURRAY_TRY(hurray__bytes_read(b, header, sizeof header, 0, "reading the header", err));
  HURRAY_TRY(hurray__bytes_read(b, trailer, sizeof trailer, size - HURRAY_FILE_TRAILER_LEN,
                                "reading the trailer", err));
  return parse_all(f, header, trailer, NULL, b, err);
}

/* Read mode, whatever the source (f->bytes): the header, the trailer, the
 * index and the KV section read into memory of the file's own and parsed. */
static HurrayStatus open_read(HurrayFile *f, HurrayError *err) {
  f->info.access = (uint8_t)HURRAY_FILE_ACCESS_READ;
  f->info.mapped = false;
  HURRAY_TRY(read_head(f, &f->bytes, err));
  HURRAY_TRY(read_section(f, f->info.index_offset, f->info.index_length, &f->owned_index,
                          "reading the index", err));
  if (f->info.kv_offset != 0)
    HURRAY_TRY(read_section(f, f->info.kv_offset, f->info.kv_length, &f->owned_kv,
                            "reading the KV section", err));
  return parse_sections(f, f->owned_index, f->owned_kv, err);
}

static HurrayStatus check_access(const HurrayFileOpenOptions *options, HurrayError *err) {
  if (options != NULL && options->access != HURRAY_FILE_ACCESS_MMAP &&
      options->access != HURRAY_FILE_ACCESS_READ &&
      options->access != HURRAY_FILE_ACCESS_MMAP_COPY)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options.access",
                        "%d is not a HurrayFileAccess (0 MMAP, 1 READ, 2 MMAP_COPY)",
                        (int)options->access);
  return HURRAY_OK;
}

HurrayStatus hurray_file_open(const char *path, const HurrayFileOpenOptions *options,
                              HurrayFile **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (path == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "path", "is NULL");
  HURRAY_TRY(check_access(options, err));
  HurrayFile *f = file_new(options);
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "file",
                        "out of memory");
  f->info.access = (uint8_t)f->opts.access;
  HurrayStatus st = HURRAY_OK;
  HurrayFileBytes b;
  hurray__bytes_init(&b);
  int e = hurray__os_open_read(path, &b.fd);
  if (e != 0) {
    b.fd = HURRAY__OS_FILE_NONE;
    st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "opening the file");
    goto done;
  }
  bool regular = false;
  e = hurray__os_file_size(b.fd, &f->info.file_size, &regular);
  if (e != 0) {
    st = hurray__io_fail(err, e, HURRAY_NO_OFFSET, "inspecting the file");
    goto done;
  }
  if (!regular) {
    st = hurray__fail(err, HURRAY_ERR_IO, HURRAY_NO_OFFSET, "file", "\"%s\" is not a regular file",
                      path);
    goto done;
  }
  b.size = f->info.file_size;
  if (f->opts.access == HURRAY_FILE_ACCESS_READ) {
    f->bytes = b; /* moved: the file reads its tensors through it */
    f->bytes.workers = f->opts.workers;
    hurray__bytes_init(&b);
    st = open_read(f, err);
    goto done;
  }
  st = read_head(f, &b, err);
  if (st != HURRAY_OK) goto done;
  f->info.mapped = true;
  st = map_file(f, b.fd, err);
  if (st == HURRAY_OK) {
    const uint8_t *m = f->source->base;
    /* The reader is about to walk the index and KV: ask for them at once. */
    uint64_t lo = f->info.kv_offset ? f->info.kv_offset : f->info.index_offset;
    hurray__os_will_read(m + lo, (size_t)(f->info.index_offset + f->info.index_length - lo));
    st = parse_sections(f, m + f->info.index_offset,
                        f->info.kv_offset ? m + f->info.kv_offset : NULL, err);
  }
done:
  hurray__bytes_close(&b); /* the mapping keeps the file */
  if (st != HURRAY_OK) {
    hurray_file_close(&f);
    return st;
  }
  *out = f;
  return HURRAY_OK;
}

HurrayStatus hurray_file_open_reader(const HurrayFileReader *reader,
                                     const HurrayFileOpenOptions *options, HurrayFile **out,
                                     HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (reader == NULL || reader->read_at == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        reader == NULL ? "reader" : "reader.read_at", "is NULL");
  HURRAY_TRY(check_access(options, err));
  if (options != NULL && options->access == HURRAY_FILE_ACCESS_MMAP_COPY)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "options.access",
                        "MMAP_COPY: a reader's bytes cannot be mapped (use READ)");
  HurrayFile *f = file_new(options);
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "file",
                        "out of memory");
  f->opts.access = HURRAY_FILE_ACCESS_READ;
  f->bytes.reader = *reader;
  f->bytes.size = reader->size;
  f->info.file_size = reader->size;
  HurrayStatus st = open_read(f, err);
  if (st != HURRAY_OK) {
    f->bytes.reader.close = NULL; /* the caller keeps the source on failure */
    hurray_file_close(&f);
    return st;
  }
  *out = f;
  return HURRAY_OK;
}

void hurray_file_close(HurrayFile **pf) {
  if (pf == NULL || *pf == NULL) return;
  HurrayFile *f = *pf;
  *pf = NULL;
  hurray__kv_table_free(&f->kv);
  hurray__file_views_free(f);
  hurray__file_lookup_free(f);
  hurray__free(f->offsets); /* and f->hashes, in the same block */
  hurray__file_order_free(f);
  hurray__free(f->owned_index);
  hurray__free(f->owned_kv);
  hurray__bytes_close(&f->bytes);
  hurray__source_release(f->source);
  hurray__free(f);
}

/* ---- queries --------------------------------------------------------------------- */

/* HurrayFileInfo.access sits in the padding after `mapped`: the struct is no
 * larger than it was without it, so programs built against the older header
 * (which allocate the smaller struct) keep working. */
_Static_assert(offsetof(HurrayFileInfo, access) == offsetof(HurrayFileInfo, mapped) + 1 &&
                   sizeof(HurrayFileInfo) ==
                       (offsetof(HurrayFileInfo, mapped) + _Alignof(HurrayFileInfo)) /
                           _Alignof(HurrayFileInfo) * _Alignof(HurrayFileInfo),
               "HurrayFileInfo grew: existing programs allocate the older size");

HurrayStatus hurray_file_info(const HurrayFile *f, HurrayFileInfo *out) {
  if (f == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  *out = f->info;
  return HURRAY_OK;
}

uint64_t hurray_file_tensor_count(const HurrayFile *f) { return f != NULL ? f->count : 0; }

HurrayStatus hurray_file_entry(const HurrayFile *f, uint64_t index, HurrayFileEntry *out) {
  if (f == NULL || out == NULL) return HURRAY_ERR_NULL_POINTER;
  if (index >= f->count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  HurrayFileIndexEntry e;
  hurray__file_entry_at(f, (uint32_t)index, &e);
  out->name = (const char *)e.name;
  out->name_len = e.name_len;
  out->descriptor_offset = e.desc_off;
  out->descriptor_length = e.desc_len;
  out->data_offset = e.data_off;
  out->data_length = e.data_len;
  return HURRAY_OK;
}

HurrayStatus hurray_file_position(const HurrayFile *f, uint64_t position, uint64_t *out_index) {
  if (f == NULL || out_index == NULL) return HURRAY_ERR_NULL_POINTER;
  if (position >= f->count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  const HurrayFileOrder *o;
  HURRAY_TRY(hurray__file_order_get(f, &o, NULL));
  *out_index = hurray__file_order_at(o, (uint32_t)position);
  return HURRAY_OK;
}

HurrayStatus hurray_file_find(const HurrayFile *f, const char *name, size_t name_len,
                              uint64_t *out_index) {
  if (f == NULL || out_index == NULL || (name == NULL && name_len > 0))
    return HURRAY_ERR_NULL_POINTER;
  uint32_t i = 0;
  HURRAY_TRY(hurray__file_lookup_find(f, (const uint8_t *)name, name_len, &i));
  *out_index = i;
  return HURRAY_OK;
}

HurrayStatus hurray_file_verify(const HurrayFile *f, HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  const HurrayFileOrder *o;
  HURRAY_TRY(hurray__file_order_get(f, &o, err));
  return hurray__file_lookup_verify(f, err);
}

uint32_t hurray_file_kv_count(const HurrayFile *f) { return f != NULL ? f->kv.count : 0; }

HurrayStatus hurray_file_kv_get(const HurrayFile *f, uint32_t i, const char **key,
                                size_t *key_len, const HurrayKvValue **value) {
  if (f == NULL) return HURRAY_ERR_NULL_POINTER;
  if (i >= f->kv.count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  const HurrayKvEntry *e = &f->kv.entries[i];
  if (key != NULL) *key = (const char *)e->key;
  if (key_len != NULL) *key_len = e->key_len;
  if (value != NULL) *value = &e->value;
  return HURRAY_OK;
}

HurrayStatus hurray_file_kv_find(const HurrayFile *f, const char *key, size_t key_len,
                                 const HurrayKvValue **value) {
  if (f == NULL || value == NULL || (key == NULL && key_len > 0)) return HURRAY_ERR_NULL_POINTER;
  uint32_t i;
  if (f->kv.count == 0 || key_len == 0 || key_len > HURRAY_FILE_MAX_NAME_LEN ||
      !hurray__lookup_find(&f->kv.lookup, f->kv.count, (const uint8_t *)key, key_len,
                           hurray__kv_key_at, &f->kv, &i))
    return HURRAY_ERR_NOT_FOUND;
  *value = &f->kv.entries[i].value;
  return HURRAY_OK;
}
