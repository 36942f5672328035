/*
 * Helpers shared by the descriptor tests: a little-endian wire writer,
 * builders of spec-valid descriptors, and assertions (status + field path,
 * byte-exact round trip, walk coverage). Header-only; every function is
 * static inline so each test uses what it needs.
 */
#ifndef HURRAY_TEST_DESCRIPTOR_WIRE_H
#define HURRAY_TEST_DESCRIPTOR_WIRE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/validate.h"
#include "testutil.h"

/* ---- wire writer ----------------------------------------------------------- */

typedef struct W {
  uint8_t b[8192];
  size_t n;
} W;

static inline void w_u8(W *w, uint8_t v) { w->b[w->n++] = v; }
static inline void w_u16(W *w, uint16_t v) {
  w_u8(w, (uint8_t)v);
  w_u8(w, (uint8_t)(v >> 8));
}
static inline void w_u32(W *w, uint32_t v) {
  for (int k = 0; k < 4; k++) w_u8(w, (uint8_t)(v >> (8 * k)));
}
static inline void w_u64(W *w, uint64_t v) {
  for (int k = 0; k < 8; k++) w_u8(w, (uint8_t)(v >> (8 * k)));
}
static inline void w_f64(W *w, double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  w_u64(w, b);
}
static inline void w_zero(W *w, size_t n) {
  memset(w->b + w->n, 0, n);
  w->n += n;
}
static inline void w_bytes(W *w, const void *p, size_t n) {
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

/* Fixed header with descriptor_length patched later by w_finish. */
static inline void w_header(W *w, uint8_t minor, uint32_t flags, uint8_t type, uint8_t layout,
                            uint32_t rank) {
  w->n = 0;
  w_bytes(w, "HRRY", 4);
  w_u8(w, 1);
  w_u8(w, minor);
  w_u32(w, 0);
  w_u32(w, flags);
  w_u8(w, type);
  w_u8(w, layout);
  w_u32(w, rank);
}
static inline void w_shape(W *w, uint32_t rank, const uint64_t *dims, uint64_t byte_offset) {
  for (uint32_t k = 0; k < rank; k++) w_u64(w, dims[k]);
  w_u64(w, byte_offset);
}
static inline void w_buffer(W *w, uint64_t size, uint32_t align, uint8_t dev, uint8_t sync,
                            uint8_t cls) {
  w_u64(w, size);
  w_u32(w, align);
  w_u8(w, dev);
  w_u8(w, sync);
  w_u8(w, cls);
  w_u8(w, 0);
}
static inline void w_cpu_buffer(W *w, uint64_t size) { w_buffer(w, size, 64, 0, 0, 0); }
static inline void w_finish(W *w) {
  uint32_t n = (uint32_t)w->n;
  for (int k = 0; k < 4; k++) w->b[6 + k] = (uint8_t)(n >> (8 * k));
}

/* ---- spec-valid building blocks ---------------------------------------------- */

/* float32 [3, 4] row-major, one 48-byte CPU buffer; `flags` sections appended
 * by the caller after this returns (then w_finish). */
static inline void w_dense_f32_3x4(W *w, uint32_t flags) {
  static const uint64_t dims[2] = {3, 4};
  w_header(w, 0, flags, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(w, 2, dims, 0);
  w_u8(w, 1);
  w_cpu_buffer(w, 48);
}

/* float32 [4, 4] COO with `nnz` stored entries (values + indices buffers). */
static inline void w_coo_f32_4x4(W *w, uint32_t flags, uint64_t nnz, uint8_t is_sorted) {
  static const uint64_t dims[2] = {4, 4};
  w_header(w, 0, flags, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2);
  w_shape(w, 2, dims, 0);
  w_u64(w, nnz);
  w_u8(w, is_sorted);
  w_zero(w, 7);
  w_u8(w, 2);
  w_cpu_buffer(w, nnz * 4);
  w_cpu_buffer(w, nnz * 2 * 8);
}

/* Statistics section with the given mask (other fields consistent). */
static inline void w_stats(W *w, uint32_t mask, uint64_t nnz, double sparsity, double stddev,
                           uint8_t nm_n, uint8_t nm_m, uint8_t has_nan, uint8_t has_inf) {
  w_u32(w, mask);
  w_u32(w, 0);
  w_u64(w, nnz);
  w_f64(w, sparsity);
  w_f64(w, -1.5);
  w_f64(w, 2.5);
  w_f64(w, 2.5);
  w_f64(w, 0.25);
  w_f64(w, stddev);
  w_u8(w, nm_n);
  w_u8(w, nm_m);
  w_u8(w, has_nan);
  w_u8(w, has_inf);
  w_zero(w, 4);
}

/* Extension type section. */
static inline void w_ext(W *w, uint32_t bits, uint8_t pack, uint8_t is_float, uint8_t is_signed,
                         uint8_t sign, uint8_t expo, uint8_t mant, uint32_t bias, uint8_t nan,
                         uint8_t inf) {
  w_u32(w, bits);
  w_u8(w, pack);
  w_u8(w, is_float);
  w_u8(w, is_signed);
  w_u8(w, sign);
  w_u8(w, expo);
  w_u8(w, mant);
  w_zero(w, 2);
  w_u32(w, bias);
  w_u8(w, nan);
  w_u8(w, inf);
  w_zero(w, 2);
}

/* ---- assertions -------------------------------------------------------------- */

/* Decodes and expects `status`; on failure the error names a field that
 * contains `field` (when not NULL) and *out stays NULL. Returns the decoded
 * descriptor on success (caller destroys). */
static inline HurrayDescriptor *expect_decode(const uint8_t *b, size_t n, uint32_t options,
                                              HurrayStatus status, const char *field) {
  HurrayDescriptor *d = (HurrayDescriptor *)(uintptr_t)1;
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus st = hurray_descriptor_decode_ex(b, n, options, &d, &err);
  if (st != status)
    fail_msg("decode: expected %s, got %s (%s)\n%s", hurray_status_name(status),
             hurray_status_name(st), err.message, tu_hex(b, n));
  if (st != HURRAY_OK) {
    assert_null(d);
    assert_int_equal(err.status, status);
    if (field != NULL && strstr(err.field, field) == NULL)
      fail_msg("decode: error names field \"%s\", expected \"%s\" (%s)", err.field, field,
               err.message);
    assert_true(err.message[0] != '\0');
    return NULL;
  }
  assert_non_null(d);
  return d;
}

static inline void expect_reject(const W *w, uint32_t options, HurrayStatus status,
                                 const char *field) {
  expect_decode(w->b, w->n, options, status, field);
}

/* Leaf events of a walk must tile [0, length) exactly, in order. */
typedef struct WalkLog {
  uint64_t next;      /* end of the last leaf */
  uint64_t leaves;
  uint64_t sections;
  int bad;            /* first problem seen */
  char where[128];
} WalkLog;

static inline void walk_log_visit(const HurrayFieldEvent *e, void *ctx) {
  WalkLog *log = ctx;
  assert_non_null(e->path);
  assert_non_null(e->bytes);
  if (e->kind == HURRAY_FIELD_SECTION) {
    log->sections++;
    if (e->offset < log->next && !log->bad) {
      log->bad = 1;
      snprintf(log->where, sizeof log->where, "section %s at %llu before %llu", e->path,
               (unsigned long long)e->offset, (unsigned long long)log->next);
    }
    return;
  }
  log->leaves++;
  if (e->offset != log->next && !log->bad) {
    log->bad = 1;
    snprintf(log->where, sizeof log->where, "leaf %s at %llu, expected %llu", e->path,
             (unsigned long long)e->offset, (unsigned long long)log->next);
  }
  log->next = e->offset + e->size;
}

static inline void expect_walk_covers(const uint8_t *b, size_t n, uint32_t options) {
  WalkLog log;
  memset(&log, 0, sizeof log);
  HurrayError err;
  HurrayStatus st = hurray_descriptor_walk(b, n, options, walk_log_visit, &log, &err);
  if (st != HURRAY_OK) fail_msg("walk failed: %s", err.message);
  if (log.bad) fail_msg("walk: %s", log.where);
  assert_int_equal(log.next, hurray__ld32(b + 6));
  assert_true(log.leaves >= 8);
}

/* Full round trip: decode -> encode == input; fields -> from_fields -> same
 * bytes; clone equal; walk covers every byte. Returns the descriptor. */
static inline HurrayDescriptor *expect_roundtrip(const uint8_t *b, size_t n, uint32_t options) {
  HurrayDescriptor *d = expect_decode(b, n, options, HURRAY_OK, NULL);
  uint64_t len = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &len), HURRAY_OK);
  assert_int_equal(len, n);
  uint8_t *out = malloc(n + 1);
  assert_int_equal(hurray_descriptor_encode(d, out, n, &len), HURRAY_OK);
  if (memcmp(out, b, n) != 0) fail_msg("re-encoding differs:\n%s", tu_hex(out, n));

  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  HurrayDescriptor *r = NULL;
  HurrayError err;
  HurrayStatus st = hurray_descriptor_from_fields(&f, options, &r, &err);
  if (st != HURRAY_OK) fail_msg("from_fields of a decoded view failed: %s", err.message);
  assert_true(hurray_descriptor_equal(d, r));
  memset(out, 0xAA, n);
  assert_int_equal(hurray_descriptor_encode(r, out, n, &len), HURRAY_OK);
  assert_memory_equal(out, b, n);
  assert_int_equal(hurray_descriptor_validate(&f, options, NULL), HURRAY_OK);

  HurrayDescriptor *c = NULL;
  assert_int_equal(hurray_descriptor_clone(d, &c), HURRAY_OK);
  assert_true(hurray_descriptor_equal(d, c));
  memset(out, 0x55, n);
  assert_int_equal(hurray_descriptor_encode(c, out, n, &len), HURRAY_OK);
  assert_memory_equal(out, b, n);

  expect_walk_covers(b, n, options);
  assert_int_equal(hurray_descriptor_destroy(c), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(r), HURRAY_OK);
  free(out);
  return d;
}

static inline void expect_roundtrip_w(const W *w, uint32_t options) {
  assert_int_equal(hurray_descriptor_destroy(expect_roundtrip(w->b, w->n, options)), HURRAY_OK);
}

#endif
