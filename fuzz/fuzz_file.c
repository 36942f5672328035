/*
 * libFuzzer target for the .hrry reader: the input is a file image.
 *
 * Each input is opened as caller memory (an exact-size, page-aligned copy, so
 * a sanitizer sees any read past the end), then again with its index CRC
 * recomputed (so mutations of the index reach the parser behind the CRC
 * check), and on Linux through a memfd with both the mapping and the plain
 * read paths. Every opened file is exercised in full: every entry, every
 * lookup, every tensor (each buffer byte is read), every composite head,
 * every KV entry; and the invariants a valid open promises are checked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* memfd_create */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(_WIN32)
#include <malloc.h>
#endif

#include "hurray/hurray.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#define CHECK(c)                                                     \
  do {                                                               \
    if (!(c)) {                                                      \
      fprintf(stderr, "fuzz_file: check failed: %s (line %d)\n", #c, __LINE__); \
      abort();                                                       \
    }                                                                \
  } while (0)

static volatile uint8_t g_sink;

static uint32_t ld32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t ld64(const uint8_t *p) { return ld32(p) | ((uint64_t)ld32(p + 4) << 32); }

static void touch(const void *p, uint64_t n) {
  const uint8_t *b = p;
  uint8_t acc = 0;
  for (uint64_t i = 0; i < n; i++) acc ^= b[i];
  g_sink ^= acc;
}

static void exercise_kv(const HurrayFile *f) {
  uint32_t n = hurray_file_kv_count(f);
  for (uint32_t i = 0; i < n; i++) {
    const char *key;
    size_t klen;
    const HurrayKvValue *v;
    CHECK(hurray_file_kv_get(f, i, &key, &klen, &v) == HURRAY_OK);
    CHECK(klen >= 1 && klen <= 65535);
    const HurrayKvValue *w;
    CHECK(hurray_file_kv_find(f, key, klen, &w) == HURRAY_OK && w == v); /* keys unique */
    touch(key, klen);
    switch (v->tag) {
      case HURRAY_KV_STRING: touch(v->v.str.data, v->v.str.len); break;
      case HURRAY_KV_BYTES: touch(v->v.bytes.data, v->v.bytes.len); break;
      case HURRAY_KV_BOOL: g_sink ^= (uint8_t)v->v.b; break;
      case HURRAY_KV_ARRAY:
        for (uint32_t k = 0; k < v->count; k++) {
          switch (v->elem_tag) {
            case HURRAY_KV_STRING: touch(v->v.str_array[k].data, v->v.str_array[k].len); break;
            case HURRAY_KV_BYTES: touch(v->v.bytes_array[k].data, v->v.bytes_array[k].len); break;
            case HURRAY_KV_BOOL: g_sink ^= (uint8_t)v->v.bool_array[k]; break;
            case HURRAY_KV_INT64: g_sink ^= (uint8_t)v->v.i64_array[k]; break;
            case HURRAY_KV_UINT64: g_sink ^= (uint8_t)v->v.u64_array[k]; break;
            case HURRAY_KV_FLOAT64: g_sink ^= (uint8_t)(v->v.f64_array[k] > 0); break;
            default: CHECK(0);
          }
        }
        break;
      case HURRAY_KV_INT64:
      case HURRAY_KV_UINT64:
      case HURRAY_KV_FLOAT64: break;
      default: CHECK(0);
    }
  }
  const HurrayKvValue *v;
  CHECK(hurray_file_kv_get(f, n, NULL, NULL, &v) == HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
}

static void exercise(const HurrayFile *f) {
  HurrayFileInfo info;
  CHECK(hurray_file_info(f, &info) == HURRAY_OK);
  uint64_t n = hurray_file_tensor_count(f);
  /* File order is a permutation of the index, or (tensors listed out of
   * file order that overlap) an error every time. */
  uint8_t *seen = calloc(n ? n : 1, 1);
  CHECK(seen != NULL);
  uint64_t idx0;
  const bool overlap = n > 0 && hurray_file_position(f, 0, &idx0) == HURRAY_ERR_INVALID_FILE;
  for (uint64_t pos = 0; pos < n; pos++) {
    uint64_t idx;
    HurrayStatus ps = hurray_file_position(f, pos, &idx);
    if (overlap) {
      CHECK(ps == HURRAY_ERR_INVALID_FILE);
      continue;
    }
    CHECK(ps == HURRAY_OK && idx < n && !seen[idx]);
    seen[idx] = 1;
  }
  free(seen);
  /* Lookups succeed exactly for the names no other entry has (the first
   * ones scan, the later ones use the structure built on the way); the
   * answers do not change once hurray_file_verify has built it, and it
   * reports the overlap, or a duplicate exactly when a lookup found one. */
  uint8_t *dup = calloc(n ? n : 1, 1);
  CHECK(dup != NULL);
  bool any_dup = false;
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileEntry e;
    CHECK(hurray_file_entry(f, i, &e) == HURRAY_OK);
    uint64_t found;
    HurrayStatus fs = hurray_file_find(f, e.name, e.name_len, &found);
    CHECK((fs == HURRAY_OK && found == i) || fs == HURRAY_ERR_DUPLICATE_NAME);
    dup[i] = fs == HURRAY_ERR_DUPLICATE_NAME;
    any_dup |= dup[i];
  }
  HurrayError verr;
  HurrayFileDataReport rep;
  HurrayStatus cs = hurray_file_verify_data(f, &rep, &verr);
  CHECK(cs == HURRAY_OK || cs == HURRAY_ERR_NOT_FOUND || cs == HURRAY_ERR_INVALID_KV ||
        cs == HURRAY_ERR_CRC_MISMATCH || cs == HURRAY_ERR_IO);
  CHECK(rep.tensors <= n && (cs != HURRAY_OK || rep.tensors == n));
  HurrayStatus vs = hurray_file_verify(f, &verr);
  if (overlap) CHECK(vs == HURRAY_ERR_INVALID_FILE);
  CHECK((vs == HURRAY_OK && !any_dup) || (vs == HURRAY_ERR_DUPLICATE_NAME && any_dup) ||
        vs == HURRAY_ERR_INVALID_FILE);
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileEntry e;
    CHECK(hurray_file_entry(f, i, &e) == HURRAY_OK);
    uint64_t found;
    HurrayStatus fs = hurray_file_find(f, e.name, e.name_len, &found);
    CHECK(fs == (dup[i] ? HURRAY_ERR_DUPLICATE_NAME : HURRAY_OK));
  }
  free(dup);
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileEntry e;
    CHECK(hurray_file_entry(f, i, &e) == HURRAY_OK);
    CHECK(e.descriptor_offset + e.descriptor_length <= info.file_size);
    CHECK(e.data_offset + e.data_length <= info.file_size);
    HurrayFileTensor *t = NULL;
    HurrayError err;
    HurrayStatus st = hurray_file_tensor(f, i, &t, &err);
    /* hurray_file_verify_tensor proves what a fetch checks (and, for a
     * composite head, its members), without the data. */
    HurrayError terr;
    HurrayStatus ts = hurray_file_verify_tensor(f, i, &terr);
    if (ts == HURRAY_OK && !(overlap && info.access == HURRAY_FILE_ACCESS_MMAP_COPY))
      CHECK(st == HURRAY_OK || st == HURRAY_ERR_IO || st == HURRAY_ERR_OUT_OF_MEMORY ||
            st == HURRAY_ERR_MISALIGNED); /* caller memory: the address, not the file */
    if (ts != HURRAY_OK) CHECK(terr.status == ts);
    HurrayStatus ds = hurray_file_verify_tensor_data(f, i, &terr);
    CHECK(ds == HURRAY_OK || ds == HURRAY_ERR_NOT_FOUND || ds == HURRAY_ERR_INVALID_KV ||
          ds == HURRAY_ERR_CRC_MISMATCH || ds == HURRAY_ERR_IO);
    /* Writable views only of a file whose tensors are proven disjoint. */
    if (overlap && info.access == HURRAY_FILE_ACCESS_MMAP_COPY)
      CHECK(st == HURRAY_ERR_INVALID_FILE);
    if (st != HURRAY_OK) {
      CHECK(t == NULL && err.status == st);
      continue;
    }
    CHECK(hurray_file_tensor_is_writable(t) == (info.access != HURRAY_FILE_ACCESS_MMAP));
    uint64_t total = 0;
    uint32_t nb = hurray_file_tensor_buffer_count(t);
    for (uint32_t k = 0; k < nb; k++) {
      const void *p;
      uint64_t size;
      CHECK(hurray_file_tensor_buffer(t, k, &p, &size) == HURRAY_OK);
      CHECK(size == 0 || p != NULL);
      CHECK(size <= e.data_length);
      touch(p, size);
      if (size > 0 && hurray_file_tensor_is_writable(t)) { /* first and last byte, and back */
        volatile uint8_t *w = (volatile uint8_t *)(uintptr_t)p;
        w[0] ^= 0xFF;
        w[size - 1] ^= 0xFF;
        w[0] ^= 0xFF;
        w[size - 1] ^= 0xFF;
      }
      total += size;
    }
    uint64_t declared = 0;
    CHECK(hurray_descriptor_data_bytes(hurray_file_tensor_descriptor(t), &declared) ==
          HURRAY_OK);
    CHECK(declared == total);
    HurrayFileTensor *u = hurray_file_tensor_retain(t);
    hurray_file_tensor_release(&t);
    uint8_t layout = 0;
    CHECK(hurray_descriptor_layout_tag(hurray_file_tensor_descriptor(u), &layout) == HURRAY_OK);
    hurray_file_tensor_release(&u);
    if (layout == HURRAY_LAYOUT_COMPOSITE) {
      HurrayFileNode *tree = NULL;
      if (hurray_file_composite(f, i, &tree, &err) == HURRAY_OK) {
        CHECK(tree->is_composite);
        hurray_file_node_destroy(&tree);
      } else {
        CHECK(tree == NULL);
      }
    }
  }
  exercise_kv(f);
}

static void open_memory(const uint8_t *p, size_t size) {
  HurrayFile *f = NULL;
  HurrayError err;
  HurrayStatus st = hurray_file_open_memory(p, size, NULL, NULL, NULL, &f, &err);
  if (st != HURRAY_OK) {
    CHECK(f == NULL && err.status == st);
    return;
  }
  exercise(f);
  hurray_file_close(&f);
}

#if defined(__linux__)
static void open_fd(const uint8_t *p, size_t size) {
  int fd = memfd_create("fuzz_file", MFD_CLOEXEC);
  if (fd < 0) return;
  if (write(fd, p, size) == (ssize_t)size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int mode = 0; mode < 3; mode++) { /* MMAP, READ, MMAP_COPY */
      HurrayFileOpenOptions o;
      memset(&o, 0, sizeof o);
      o.access = (HurrayFileAccess)mode;
      HurrayFile *f = NULL;
      HurrayError err;
      if (hurray_file_open(path, &o, &f, &err) == HURRAY_OK) {
        exercise(f);
        hurray_file_close(&f);
      }
    }
  }
  close(fd);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (64u << 20)) return 0;
  /* Page-aligned (buffers need their alignment) and exactly `size` bytes long
   * (a sanitizer then flags any read past the image). */
  void *mem = NULL;
#if defined(_WIN32)
  mem = _aligned_malloc(size ? size : 1, 4096);
  if (mem == NULL) return 0;
#else
  if (posix_memalign(&mem, 4096, size ? size : 1) != 0) return 0;
#endif
  uint8_t *copy = mem;
  if (size) memcpy(copy, data, size);
  open_memory(copy, size);
  /* The same image with its index CRC made right. */
  if (size >= 104) {
    const uint8_t *t = copy + size - 40;
    uint64_t off = ld64(t), n = ld64(t + 8);
    if (n <= size && off <= size - n) {
      uint32_t crc = hurray_crc32c(0, copy + off, (size_t)n);
      uint8_t *c = copy + size - 40 + 28;
      c[0] = (uint8_t)crc;
      c[1] = (uint8_t)(crc >> 8);
      c[2] = (uint8_t)(crc >> 16);
      c[3] = (uint8_t)(crc >> 24);
      open_memory(copy, size);
    }
#if defined(__linux__)
    open_fd(copy, size);
#endif
  }
#if defined(_WIN32)
  _aligned_free(copy);
#else
  free(copy);
#endif
  return 0;
}
