/*
 * Helpers shared by the tests of the .hrry container (tests/c/test_file_*.c):
 * scratch directories, descriptors, whole-file edits, and a builder that
 * assembles files byte by byte (for layouts our writer never produces).
 */
#ifndef HURRAY_TEST_FILE_UTIL_H
#define HURRAY_TEST_FILE_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "internal/file.h"

/* ---- scratch directory --------------------------------------------------------- */

static char tf_dir[512];

/* Creates a fresh scratch directory (under $TMPDIR or /tmp; %TEMP% on Windows). */
static inline const char *tf_mkdir(void) {
  snprintf(tf_dir, sizeof tf_dir, "%s/hurray-file-XXXXXX", tu_tmp_root());
  if (tu_mkdtemp(tf_dir) == NULL) fail_msg("mkdtemp: %s", strerror(errno));
  return tf_dir;
}

/* Path of `name` inside the scratch directory (static buffer, one of 4). */
static inline const char *tf_path(const char *name) {
  static char bufs[4][600];
  static int k;
  char *b = bufs[k++ & 3];
  snprintf(b, 600, "%s/%s", tf_dir, name);
  return b;
}

/* Number of entries in the scratch directory (temporary files included). */
static inline int tf_dir_entries(void) {
  DIR *d = opendir(tf_dir);
  int n = 0;
  if (d == NULL) return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* Removes the scratch directory and its files. */
static inline void tf_rmdir(void) {
  DIR *d = opendir(tf_dir);
  if (d == NULL) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", tf_dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(tf_dir);
}

/* ---- descriptors ------------------------------------------------------------------- */

/* A row-major descriptor of `type` and shape dims[0..rank) with one CPU
 * buffer of `nbytes` bytes declaring `align`. Owned: hurray_descriptor_destroy. */
static inline HurrayDescriptor *tf_desc_align(uint8_t type, uint32_t rank, const uint64_t *dims,
                                              uint64_t nbytes, uint32_t align) {
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = nbytes;
  h.alignment = align;
  h.device_tag = HURRAY_DEVICE_CPU;
  h.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  h.memory_class = 0;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = type;
  f.rank = rank;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  HurrayStatus st = hurray_descriptor_from_fields(&f, 0, &d, &e);
  if (st != HURRAY_OK) fail_msg("descriptor: %s", e.message);
  return d;
}

/* uint8 vector of n elements (one buffer of n bytes). */
static inline HurrayDescriptor *tf_desc_u8(uint64_t n) {
  return tf_desc_align(HURRAY_DTYPE_UINT8, 1, &n, n, 64);
}

/* float32 [r, c]. */
static inline HurrayDescriptor *tf_desc_f32(uint64_t r, uint64_t c) {
  uint64_t dims[2] = {r, c};
  return tf_desc_align(HURRAY_DTYPE_FLOAT32, 2, dims, r * c * 4, 64);
}

/* Encoded bytes of d (malloc'ed; *len set). */
static inline uint8_t *tf_encode(const HurrayDescriptor *d, uint64_t *len) {
  assert_int_equal(hurray_descriptor_encoded_len(d, len), HURRAY_OK);
  uint8_t *p = malloc((size_t)*len);
  uint64_t got = 0;
  assert_int_equal(hurray_descriptor_encode(d, p, *len, &got), HURRAY_OK);
  return p;
}

/* ---- whole files --------------------------------------------------------------------- */

static inline uint8_t *tf_load(const char *path, size_t *len) {
  uint8_t *p = tu_read_file(path, len);
  if (p == NULL) fail_msg("cannot read %s", path);
  return p;
}

static inline void tf_store(const char *path, const uint8_t *p, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) fail_msg("cannot write %s", path);
  if (len > 0 && fwrite(p, 1, len, f) != len) fail_msg("short write %s", path);
  fclose(f);
}

/* Recomputes the index CRC of a file image from its trailer (when flagged). */
static inline void tf_fix_crc(uint8_t *p, size_t len) {
  const uint8_t *t = p + len - 40;
  uint64_t off = hurray__ld64(t), n = hurray__ld64(t + 8);
  if ((hurray__ld32(p + 12) & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C) && n <= len && off <= len - n)
    hurray__st32(p + len - 40 + 28, hurray_crc32c(0, p + off, (size_t)n));
}

/* Pointer to the descriptor_offset field of index entry k of a file image. */
static inline uint8_t *tf_index_entry(uint8_t *p, size_t len, uint64_t k) {
  uint64_t pos = hurray__ld64(p + len - 40) + 8;
  for (uint64_t i = 0; i < k; i++) pos += 34u + hurray__ld16(p + pos);
  return p + pos + 2 + hurray__ld16(p + pos);
}

/* Opens a file image held in memory (copied into 2 MiB-aligned memory, so
 * every buffer meets its alignment). Returns the status; *out as the API. */
/* Opens `path` with `access`, failing the test on error. Owned: hurray_file_close. */
static inline HurrayFile *tf_open_as(const char *path, HurrayFileAccess access) {
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = access;
  HurrayFile *f = NULL;
  HurrayError e;
  if (hurray_file_open(path, &o, &f, &e) != HURRAY_OK) fail_msg("open: %s", e.message);
  return f;
}

static inline void tf_release_free(void *ctx, const void *data, uint64_t size) {
  (void)size;
  (void)data;
  tu_aligned_free(ctx);
}
static inline HurrayStatus tf_open_image(const uint8_t *p, size_t len, HurrayFile **out,
                                         HurrayError *err) {
  void *m = tu_aligned_alloc(2u << 20, len);
  if (m == NULL) fail_msg("out of memory");
  memcpy(m, p, len);
  HurrayStatus st = hurray_file_open_memory(m, len, tf_release_free, m, NULL, out, err);
  if (st != HURRAY_OK) tu_aligned_free(m);
  return st;
}

/* Writes the image to `name` and opens it with `access`. */
static inline HurrayStatus tf_open_bytes(const uint8_t *p, size_t len, HurrayFileAccess access,
                                         HurrayFile **out, HurrayError *err) {
  const char *path = tf_path("image.hrry");
  tf_store(path, p, len);
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.access = access;
  return hurray_file_open(path, &o, out, err);
}

/* ---- builder: files assembled byte by byte ------------------------------------- */

typedef struct TfImage {
  uint8_t *p;
  size_t len;
} TfImage;

/* Writes n bytes at off, growing (zero-filled) as needed. */
static inline void tf_put(TfImage *im, uint64_t off, const void *src, size_t n) {
  if (off + n > im->len) {
    im->p = realloc(im->p, (size_t)(off + n));
    memset(im->p + im->len, 0, (size_t)(off + n) - im->len);
    im->len = (size_t)(off + n);
  }
  if (n) memcpy(im->p + off, src, n);
}

typedef struct TfEntry {
  const char *name;
  uint64_t desc_off;
  uint32_t desc_len;
  uint64_t data_off;
  uint64_t data_len;
} TfEntry;

/*
 * Appends (8-aligned after the current end) an optional KV section and the
 * index of `entries`, then the trailer, and writes the 64-byte header.
 * `flags` go to the header as given (CRC computed when HAS_INDEX_CRC32C).
 */
static inline void tf_finish(TfImage *im, const TfEntry *entries, size_t n, const uint8_t *kv,
                             uint32_t kv_len, uint32_t flags, uint32_t align) {
  uint64_t pos = (im->len + 7) & ~(uint64_t)7;
  uint64_t kv_off = 0;
  if (kv != NULL) {
    kv_off = pos;
    tf_put(im, pos, kv, kv_len);
    pos = (pos + kv_len + 7) & ~(uint64_t)7;
  }
  uint64_t ix = pos;
  uint8_t b8[8];
  hurray__st64(b8, n);
  tf_put(im, pos, b8, 8);
  pos += 8;
  for (size_t i = 0; i < n; i++) {
    uint8_t e[34 + 256];
    size_t nl = strlen(entries[i].name);
    hurray__st16(e, (uint16_t)nl);
    memcpy(e + 2, entries[i].name, nl);
    uint8_t *q = e + 2 + nl;
    hurray__st64(q, entries[i].desc_off);
    hurray__st32(q + 8, entries[i].desc_len);
    hurray__st64(q + 12, entries[i].data_off);
    hurray__st64(q + 20, entries[i].data_len);
    hurray__st32(q + 28, 0);
    tf_put(im, pos, e, 34 + nl);
    pos += 34 + nl;
  }
  uint64_t ixlen = pos - ix;
  uint8_t t[40];
  memset(t, 0, sizeof t);
  hurray__st64(t, ix);
  hurray__st64(t + 8, ixlen);
  hurray__st64(t + 16, kv_off);
  hurray__st32(t + 24, kv != NULL ? kv_len : 0);
  if (flags & HURRAY_FILE_FLAG_HAS_INDEX_CRC32C)
    hurray__st32(t + 28, hurray_crc32c(0, im->p + ix, (size_t)ixlen));
  memcpy(t + 36, "HRRY", 4);
  tf_put(im, pos, t, 40);
  uint8_t h[64];
  memset(h, 0, sizeof h);
  memcpy(h, "HRRYFILE", 8);
  h[8] = 1;
  hurray__st32(h + 12, flags);
  hurray__st32(h + 16, align);
  hurray__st64(h + 20, 64);
  hurray__st64(h + 28, UINT64_MAX);
  tf_put(im, 0, h, 64);
}

/* Places descriptor d at `off` and its single buffer (n bytes of `fill`) at
 * `data_off`; returns the index entry. */
static inline TfEntry tf_place(TfImage *im, const char *name, const HurrayDescriptor *d,
                               uint64_t off, uint64_t data_off, uint8_t fill) {
  uint64_t len = 0;
  uint8_t *enc = tf_encode(d, &len);
  tf_put(im, off, enc, (size_t)len);
  free(enc);
  uint64_t data = 0;
  assert_int_equal(hurray_descriptor_data_bytes(d, &data), HURRAY_OK);
  if (data > 0) {
    uint8_t *b = malloc((size_t)data);
    memset(b, fill, (size_t)data);
    tf_put(im, data_off, b, (size_t)data);
    free(b);
  }
  TfEntry e = {name, off, (uint32_t)len, data_off, data};
  return e;
}

#endif /* HURRAY_TEST_FILE_UTIL_H */
