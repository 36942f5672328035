/*
 * Descriptor decoding: the fixed header, the shape, every layout payload and
 * the buffer table, accept and reject side of each codec rule
 * (docs/spec/metadata.md, docs/spec/layouts/\*.md, docs/spec/buffer-protocol.md;
 * docs/internals/decisions.md § Descriptor encoding, § Strictness).
 */
#include "test_descriptor_wire.h"

/* The worked example of metadata.md, with the 16-byte buffer handle of
 * buffer-protocol.md (docs/internals/decisions.md § Descriptor encoding). */
static const uint8_t k_worked[61] = {
    0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x03, 0x01, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

static void test_worked_example(void **state) {
  (void)state;
  HurrayDescriptor *d = expect_roundtrip(k_worked, sizeof k_worked, HURRAY_DECODE_STRICT);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.version_major, 1);
  assert_int_equal(f.version_minor, 0);
  assert_int_equal(f.flags, 0);
  assert_int_equal(f.type_tag, HURRAY_DTYPE_FLOAT32);
  assert_int_equal(f.layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(f.rank, 2);
  assert_int_equal(f.shape[0], 3);
  assert_int_equal(f.shape[1], 4);
  assert_int_equal(f.byte_offset, 0);
  assert_int_equal(f.buffer_count, 1);
  assert_int_equal(f.buffers[0].byte_size, 192);
  assert_int_equal(f.buffers[0].alignment, 64);
  assert_int_equal(f.buffers[0].device_tag, HURRAY_DEVICE_CPU);
  assert_null(f.quantization);
  assert_null(f.shard);
  assert_null(f.statistics);
  assert_null(f.extension_type);
  assert_null(f.composite_member);
  assert_int_equal(f.trailing_len, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Built field by field, it encodes to exactly the spec's bytes. */
  static const uint64_t dims[2] = {3, 4};
  HurrayBufferHandle buf = {192, 64, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                            HURRAY_MEMORY_STANDARD, 0};
  HurrayDescriptorFields g;
  memset(&g, 0, sizeof g);
  g.type_tag = HURRAY_DTYPE_FLOAT32;
  g.rank = 2;
  g.shape = dims;
  g.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  g.buffer_count = 1;
  g.buffers = &buf;
  HurrayError err;
  assert_int_equal(hurray_descriptor_from_fields(&g, 0, &d, &err), HURRAY_OK);
  uint8_t out[61];
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encode(d, out, sizeof out, &n), HURRAY_OK);
  assert_int_equal(n, 61);
  assert_memory_equal(out, k_worked, 61);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* ---- fixed header ------------------------------------------------------------ */

static void test_header_rejects(void **state) {
  (void)state;
  uint8_t b[64];
  memcpy(b, k_worked, 61);
  /* Fewer than 10 bytes: truncated, whatever the content. */
  for (size_t n = 0; n < 10; n++) expect_decode(b, n, 0, HURRAY_ERR_INVALID_LAYOUT, NULL);
  /* Magic. */
  b[3] = 'Z';
  expect_decode(b, 61, 0, HURRAY_ERR_INVALID_MAGIC, "magic");
  b[3] = 'Y';
  /* Major version: only 1 is read; 0 and 2 are rejected. */
  b[4] = 2;
  expect_decode(b, 61, 0, HURRAY_ERR_VERSION_MISMATCH, "version_major");
  expect_decode(b, 61, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_VERSION_MISMATCH, "version_major");
  b[4] = 0;
  expect_decode(b, 61, 0, HURRAY_ERR_VERSION_MISMATCH, "version_major");
  b[4] = 1;
  /* descriptor_length below 20, above the bytes given, shorter or longer than
   * the content of a 1.0 descriptor. */
  b[6] = 19;
  expect_decode(b, 61, 0, HURRAY_ERR_INVALID_LAYOUT, "descriptor_length");
  b[6] = 20;
  expect_decode(b, 61, 0, HURRAY_ERR_INVALID_LAYOUT, "shape");
  b[6] = 62;
  expect_decode(b, 61, 0, HURRAY_ERR_INVALID_LAYOUT, "descriptor_length");
  b[61] = 0;
  expect_decode(b, 62, 0, HURRAY_ERR_INVALID_LAYOUT, "descriptor_length");
  b[6] = 60;
  expect_decode(b, 61, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0]");
  b[6] = 61;
  /* Bytes after descriptor_length are not part of the descriptor. */
  b[61] = 0xEE;
  HurrayDescriptor *d = expect_decode(b, 62, 0, HURRAY_OK, NULL);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* Unknown option bits. */
  expect_decode(b, 61, 0x80, HURRAY_ERR_INVALID_ARGUMENT, "options");
  /* NULL arguments. */
  assert_int_equal(hurray_descriptor_decode(NULL, 61, &d), HURRAY_ERR_NULL_POINTER);
  assert_null(d);
  assert_int_equal(hurray_descriptor_decode(b, 61, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_decode_ex(b, 61, 0, NULL, NULL), HURRAY_ERR_NULL_POINTER);
}

static void test_minor_version_trailing(void **state) {
  (void)state;
  W w;
  w_dense_f32_3x4(&w, 0);
  w.b[5] = 1; /* a 1.1 descriptor with 5 bytes this reader does not know */
  w_bytes(&w, "\x01\x02\x03\x04\x05", 5);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.version_minor, 1);
  assert_int_equal(f.trailing_len, 5);
  assert_memory_equal(f.trailing, "\x01\x02\x03\x04\x05", 5);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* The same bytes as a 1.0 descriptor: exact length required. */
  w.b[5] = 0;
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "descriptor_length");
  /* Minor 255 with no trailing bytes is fine too. */
  w_dense_f32_3x4(&w, 0);
  w.b[5] = 255;
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
}

static void test_flags_reserved_bits(void **state) {
  (void)state;
  for (unsigned bit = 5; bit < 32; bit++) {
    W w;
    w_dense_f32_3x4(&w, 1u << bit);
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "flags");
    w.b[5] = 1; /* a newer minor does not make an unknown flag acceptable */
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "flags");
  }
}

static void test_rank_cap(void **state) {
  (void)state;
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 64);
  for (int k = 0; k < 64; k++) w_u64(&w, 1);
  w_u64(&w, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 4);
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
  w.b[16] = 65;
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "rank");
  w.b[16] = 0;
  w.b[19] = 0x80; /* huge rank: rejected before anything is read or allocated */
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "rank");
}

static void test_scalar(void **state) {
  (void)state;
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_ROW_MAJOR, 0);
  w_u64(&w, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 8);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  uint64_t count = 0;
  assert_int_equal(hurray_descriptor_element_count(d, &count), HURRAY_OK);
  assert_int_equal(count, 1);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_type_tags(void **state) {
  (void)state;
  static const struct { uint8_t tag; HurrayStatus st; } k[] = {
      {0x00, HURRAY_ERR_INVALID_TYPE}, {0xFF, HURRAY_ERR_INVALID_TYPE},
      {0x05, HURRAY_ERR_INVALID_TYPE}, {0x21, HURRAY_ERR_INVALID_TYPE},
      {0x47, HURRAY_ERR_INVALID_TYPE}, {0x52, HURRAY_ERR_INVALID_TYPE},
      {0x80, HURRAY_ERR_INVALID_TYPE}, {0xEF, HURRAY_ERR_INVALID_TYPE},
      /* private without the extension section */
      {0xF0, HURRAY_ERR_INVALID_LAYOUT}, {0xFE, HURRAY_ERR_INVALID_LAYOUT},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    W w;
    w_dense_f32_3x4(&w, 0);
    w.b[14] = k[i].tag;
    w_finish(&w);
    expect_reject(&w, 0, k[i].st, k[i].st == HURRAY_ERR_INVALID_TYPE ? "type_tag" : "flags");
  }
  /* Every named tag decodes (buffer sized generously for the widest type). */
  for (unsigned t = 0; t < 256; t++) {
    if (hurray_dtype_tag_kind((uint8_t)t) != HURRAY_TAG_NAMED) continue;
    W w;
    w_header(&w, 0, 0, (uint8_t)t, HURRAY_LAYOUT_ROW_MAJOR, 1);
    w_shape(&w, 1, (const uint64_t[]){4}, 0);
    w_u8(&w, 1);
    w_cpu_buffer(&w, 64);
    w_finish(&w);
    expect_roundtrip_w(&w, 0);
  }
}

static void test_private_type_extension(void **state) {
  (void)state;
  /* A private 8-bit unsigned integer type. */
  W w;
  w_header(&w, 0, HURRAY_FLAG_HAS_EXTENSION_TYPE, 0xF3, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 12);
  w_ext(&w, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_non_null(f.extension_type);
  assert_int_equal(f.extension_type->bit_width, 8);
  assert_int_equal(f.flags, HURRAY_FLAG_HAS_EXTENSION_TYPE);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* HAS_EXTENSION_TYPE on a named type. */
  w.b[14] = HURRAY_DTYPE_UINT8;
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "flags");
}

/* ---- layout payloads --------------------------------------------------------- */

static void test_layout_tags(void **state) {
  (void)state;
  static const uint8_t bad[] = {0x00, 0xFF, 0x0C, 0x3F, 0x41, 0x80, 0xEF};
  for (size_t i = 0; i < sizeof bad; i++) {
    W w;
    w_dense_f32_3x4(&w, 0);
    w.b[15] = bad[i];
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout_tag");
  }
}

static void test_layout_strided(void **state) {
  (void)state;
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 32); /* row 2 first in memory */
  w_u64(&w, (uint64_t)-4);
  w_u64(&w, 1);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 48);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.strided.strides[0], -4);
  assert_int_equal(f.layout.u.strided.strides[1], 1);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* Truncated inside the strides. */
  w.n = 20 + 16 + 8 + 12;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.strides[1]");
}

/* Tiled level: tile shape, outer, inner, optional strides. */
static void w_tiled_level(W *w, uint64_t t0, uint64_t t1, uint8_t outer, uint8_t inner) {
  w_u64(w, t0);
  w_u64(w, t1);
  w_u8(w, outer);
  w_u8(w, inner);
  w_zero(w, 2);
}

static void test_layout_tiled(void **state) {
  (void)state;
  /* The spec's example: [6, 8] in [2, 4] tiles, row-major over row-major. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
  w_shape(&w, 2, (const uint64_t[]){6, 8}, 0);
  w_tiled_level(&w, 2, 4, 0x01, 0x01);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 192);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.tiled.depth, 1);
  assert_int_equal(f.layout.u.tiled.levels[0].tile_shape[1], 4);
  assert_null(f.layout.u.tiled.levels[0].outer_strides);
  assert_null(f.layout.u.tiled.levels[0].inner_strides);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Strided outer (tile units) and strided inner (element units). */
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
  w_shape(&w, 2, (const uint64_t[]){6, 8}, 0);
  w_tiled_level(&w, 2, 4, 0x03, 0x03);
  w_u64(&w, 2);
  w_u64(&w, 1);
  w_u64(&w, 4);
  w_u64(&w, 1);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 192);
  w_finish(&w);
  d = expect_roundtrip(w.b, w.n, 0);
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.tiled.levels[0].outer_strides[0], 2);
  assert_int_equal(f.layout.u.tiled.levels[0].inner_strides[0], 4);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  /* Two levels: [8, 8] in [4, 4] tiles, each in [2, 2] column-major tiles. */
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
  w_shape(&w, 2, (const uint64_t[]){8, 8}, 0);
  w_tiled_level(&w, 4, 4, 0x01, 0x04);
  w_tiled_level(&w, 2, 2, 0x01, 0x02);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 256);
  w_finish(&w);
  d = expect_roundtrip(w.b, w.n, 0);
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.tiled.depth, 2);
  assert_int_equal(f.layout.u.tiled.levels[1].inner_layout, 0x02);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void w_tiled_depth(W *w, unsigned depth) {
  w_header(w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
  w_shape(w, 2, (const uint64_t[]){512, 512}, 0);
  uint64_t t = 256;
  for (unsigned i = 0; i < depth; i++, t /= 2)
    w_tiled_level(w, t, t, 0x01, i + 1 < depth ? 0x04 : 0x01);
  w_u8(w, 1);
  w_cpu_buffer(w, 512u * 512u * 4u);
  w_finish(w);
}

static void test_layout_tiled_depth(void **state) {
  (void)state;
  W w;
  w_tiled_depth(&w, HURRAY_MAX_TILED_DEPTH);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.tiled.depth, 8);
  assert_int_equal(f.layout.u.tiled.levels[7].tile_shape[0], 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  w_tiled_depth(&w, HURRAY_MAX_TILED_DEPTH + 1);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[8]");
  expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[8]");
}

static void test_layout_tiled_rejects(void **state) {
  (void)state;
  static const struct { uint8_t outer, inner; const char *field; } k[] = {
      {0x00, 0x01, "layout.tiled[0].outer_layout"}, {0x04, 0x01, "layout.tiled[0].outer_layout"},
      {0x05, 0x01, "layout.tiled[0].outer_layout"}, {0xFF, 0x01, "layout.tiled[0].outer_layout"},
      {0x01, 0x00, "layout.tiled[0].inner_layout"}, {0x01, 0x05, "layout.tiled[0].inner_layout"},
      {0x01, 0x0B, "layout.tiled[0].inner_layout"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    W w;
    w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
    w_shape(&w, 2, (const uint64_t[]){6, 8}, 0);
    w_tiled_level(&w, 2, 4, k[i].outer, k[i].inner);
    w_u8(&w, 1);
    w_cpu_buffer(&w, 192);
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, k[i].field);
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, k[i].field);
  }
  /* Reserved bytes, in both modes. */
  for (int r = 0; r < 2; r++) {
    W w;
    w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_TILED, 2);
    w_shape(&w, 2, (const uint64_t[]){6, 8}, 0);
    w_tiled_level(&w, 2, 4, 1, 1);
    w.b[w.n - 2 + (size_t)r] = 0x01;
    w_u8(&w, 1);
    w_cpu_buffer(&w, 192);
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].reserved");
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT,
                  "layout.tiled[0].reserved");
  }
}

static void test_layout_morton_hilbert(void **state) {
  (void)state;
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_MORTON, 2);
  w_shape(&w, 2, (const uint64_t[]){4, 4}, 0);
  w_u32(&w, 2);
  w_u32(&w, 2);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 64);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.morton.bits[1], 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);

  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_HILBERT, 2);
  w_shape(&w, 2, (const uint64_t[]){4, 4}, 0);
  w_u32(&w, 2);
  w_u32(&w, 2);
  w_u8(&w, 1);
  w_cpu_buffer(&w, 64);
  w_finish(&w);
  d = expect_roundtrip(w.b, w.n, 0);
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.hilbert.order, 2);
  assert_int_equal(f.layout.u.hilbert.rank, 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  w.n -= 17 + 4; /* cut inside the hilbert payload */
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.order");
}

static void test_layout_coo(void **state) {
  (void)state;
  W w;
  w_coo_f32_4x4(&w, 0, 3, 1);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.coo.nnz, 3);
  assert_int_equal(f.layout.u.coo.is_sorted, 1);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  w_coo_f32_4x4(&w, 0, 0, 0); /* empty: nnz 0, empty buffers */
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
  /* is_sorted is a boolean byte. */
  w_coo_f32_4x4(&w, 0, 3, 2);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.is_sorted");
  /* Reserved bytes 9..15 of the payload, every one, both modes. */
  for (size_t k = 0; k < 7; k++) {
    w_coo_f32_4x4(&w, 0, 3, 1);
    w.b[44 + 9 + k] = 0x80;
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
  }
}

static void w_csr(W *w, uint8_t tag) {
  w_header(w, 0, 0, HURRAY_DTYPE_FLOAT32, tag, 2);
  w_shape(w, 2, (const uint64_t[]){3, 3}, 0);
  w_u64(w, 2);
  w_zero(w, 8);
  w_u8(w, 3);
  w_cpu_buffer(w, 8);
  w_cpu_buffer(w, 16);
  w_cpu_buffer(w, 32);
}

static void test_layout_csr_csc(void **state) {
  (void)state;
  for (uint8_t tag = HURRAY_LAYOUT_CSR; tag <= HURRAY_LAYOUT_CSC; tag++) {
    W w;
    w_csr(&w, tag);
    w_finish(&w);
    HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
    HurrayDescriptorFields f;
    assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
    assert_int_equal(f.layout.u.csr.nnz, 2);
    assert_int_equal(f.buffer_count, 3);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    for (size_t k = 0; k < 8; k++) {
      w_csr(&w, tag);
      w.b[44 + 8 + k] = 1;
      w_finish(&w);
      expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
    }
  }
}

static void w_csf(W *w, const uint32_t order[3], uint64_t nnz) {
  w_header(w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_CSF, 3);
  w_shape(w, 3, (const uint64_t[]){2, 3, 4}, 0);
  w_u64(w, nnz);
  for (int k = 0; k < 3; k++) w_u32(w, order[k]);
  w_zero(w, 8);
  w_u8(w, 7);
  if (nnz == 4) { /* the example of csf.md */
    static const uint64_t sizes[7] = {16, 16, 16, 24, 24, 32, 32};
    for (int i = 0; i < 7; i++) w_cpu_buffer(w, sizes[i]);
  } else { /* empty */
    static const uint64_t sizes[7] = {0, 16, 0, 8, 0, 8, 0};
    for (int i = 0; i < 7; i++) w_cpu_buffer(w, sizes[i]);
  }
}

static void test_layout_csf(void **state) {
  (void)state;
  W w;
  w_csf(&w, (const uint32_t[]){0, 1, 2}, 4);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.csf.nnz, 4);
  assert_int_equal(f.layout.u.csf.mode_order[2], 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  w_csf(&w, (const uint32_t[]){2, 0, 1}, 0);
  w_finish(&w);
  d = expect_roundtrip(w.b, w.n, 0);
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.csf.mode_order[0], 2);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  for (size_t k = 0; k < 8; k++) {
    w_csf(&w, (const uint32_t[]){0, 1, 2}, 4);
    w.b[72 + k] = 0x10;
    w_finish(&w);
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
  }
  w_csf(&w, (const uint32_t[]){0, 1, 2}, 4);
  w.n = 66;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.mode_order[1]");
}

static void w_block_paged(W *w, uint32_t flags) {
  w_header(w, 0, flags, HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, 3);
  w_shape(w, 3, (const uint64_t[]){0, 2, 4}, 0);
  w_u32(w, 16);          /* page_size */
  w_u64(w, 2);           /* num_pages */
  w_u32(w, 0);           /* paged_axis */
  w_u32(w, 0);           /* num_seqs */
  w_u8(w, 1);            /* kv_role value */
  w_u32(w, 5);           /* layer_index */
  w_u8(w, 0);            /* uint32 indices */
  w_zero(w, 6);
  w_u8(w, 3);
  w_cpu_buffer(w, 2u * 16u * 2u * 4u * 2u);
  w_buffer(w, 0, 64, 0, 0, 0);
  w_cpu_buffer(w, 4);
}

static void test_layout_block_paged(void **state) {
  (void)state;
  W w;
  w_block_paged(&w, 0);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.block_paged.page_size, 16);
  assert_int_equal(f.layout.u.block_paged.num_pages, 2);
  assert_int_equal(f.layout.u.block_paged.paged_axis, 0);
  assert_int_equal(f.layout.u.block_paged.num_seqs, 0);
  assert_int_equal(f.layout.u.block_paged.kv_role, 1);
  assert_int_equal(f.layout.u.block_paged.layer_index, 5);
  assert_int_equal(f.layout.u.block_paged.block_table_index_type, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* The six reserved bytes at payload offset 26. */
  for (size_t k = 0; k < 6; k++) {
    w_block_paged(&w, 0);
    w.b[52 + 26 + k] = 0xFF;
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
    expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
  }
}

static void w_composite(W *w, uint8_t rule, uint8_t op, uint32_t members) {
  w_header(w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE, 2);
  w_shape(w, 2, (const uint64_t[]){4, 4}, 0);
  w_u8(w, rule);
  w_u8(w, op);
  w_zero(w, 2);
  w_u32(w, members);
  w_u8(w, 0);
}

static void test_layout_composite(void **state) {
  (void)state;
  W w;
  w_composite(&w, HURRAY_COMPOSITE_PARTITION, 0, 2);
  w_finish(&w);
  HurrayDescriptor *d = expect_roundtrip(w.b, w.n, 0);
  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.layout.u.composite.rule, HURRAY_COMPOSITE_PARTITION);
  assert_int_equal(f.layout.u.composite.member_count, 2);
  assert_int_equal(f.buffer_count, 0);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  w_composite(&w, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 3);
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
  w_composite(&w, HURRAY_COMPOSITE_GROUP, 0, 0);
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
  for (size_t k = 0; k < 2; k++) {
    w_composite(&w, HURRAY_COMPOSITE_PARTITION, 0, 2);
    w.b[44 + 2 + k] = 1;
    w_finish(&w);
    expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "layout.reserved");
  }
}

/* ---- buffer table ------------------------------------------------------------ */

static void w_dense_with(W *w, uint64_t size, uint32_t align, uint8_t dev, uint8_t sync,
                         uint8_t cls, uint8_t reserved) {
  w_header(w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(w, 1);
  w_buffer(w, size, align, dev, sync, cls);
  w->b[w->n - 1] = reserved;
  w_finish(w);
}

static void test_buffer_handle_rules(void **state) {
  (void)state;
  static const struct {
    uint64_t size;
    uint32_t align;
    uint8_t dev, sync, cls, res;
    HurrayStatus st;
    const char *field;
  } k[] = {
      /* accepted */
      {48, 64, 0x00, 0, 0x00, 0, HURRAY_OK, NULL},
      {48, 4096, 0x00, 0, 0x01, 0, HURRAY_OK, NULL},
      {48, 1u << 31, 0x00, 0, 0x02, 0, HURRAY_OK, NULL},
      {48, 256, 0x01, 1, 0x03, 0, HURRAY_OK, NULL},    /* CUDA, event, peer */
      {48, 256, 0x02, 2, 0x02, 0, HURRAY_OK, NULL},    /* ROCm, consumer stream */
      {48, 64, 0x05, 0, 0x00, 0, HURRAY_OK, NULL},     /* WebGPU standard */
      {48, 64, 0x08, 0, 0x01, 0, HURRAY_OK, NULL},     /* OpenCL host pinned */
      {48, 64, 0xF0, 1, 0x00, 0, HURRAY_OK, NULL},     /* private device, standard */
      {48, 64, 0xFE, 0, 0xF7, 0, HURRAY_OK, NULL},     /* private device, private class */
      /* alignment */
      {48, 0, 0x00, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment"},
      {48, 96, 0x00, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment"},
      {48, 32, 0x00, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment"},
      {48, 0xFFFFFFFFu, 0x00, 0, 0, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment"},
      /* reserved byte */
      {48, 64, 0x00, 0, 0, 1, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].reserved"},
      {48, 64, 0x00, 0, 0, 0x80, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].reserved"},
      /* device tags */
      {48, 64, 0x09, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].device_tag"},
      {48, 64, 0xEF, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].device_tag"},
      {48, 64, 0xFF, 0, 0, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].device_tag"},
      /* sync modes */
      {48, 64, 0x01, 3, 0, 0, HURRAY_ERR_INVALID_SYNC_MODE, "buffers[0].sync_mode"},
      {48, 64, 0x01, 0xFF, 0, 0, HURRAY_ERR_INVALID_SYNC_MODE, "buffers[0].sync_mode"},
      {48, 64, 0x00, 1, 0, 0, HURRAY_ERR_INVALID_SYNC_MODE, "buffers[0].sync_mode"},
      {48, 64, 0x00, 2, 0, 0, HURRAY_ERR_INVALID_SYNC_MODE, "buffers[0].sync_mode"},
      /* memory classes and the validity table */
      {48, 64, 0x01, 0, 0x04, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0x01, 0, 0xEF, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0x01, 0, 0xFF, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0x00, 0, 0x03, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0x03, 0, 0x03, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0x05, 0, 0x01, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0x01, 0, 0xF0, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
      {48, 64, 0xF0, 0, 0x01, 0, HURRAY_ERR_INVALID_TYPE, "buffers[0].memory_class"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    W w;
    w_dense_with(&w, k[i].size, k[i].align, k[i].dev, k[i].sync, k[i].cls, k[i].res);
    if (k[i].st == HURRAY_OK)
      expect_roundtrip_w(&w, 0);
    else
      expect_reject(&w, 0, k[i].st, k[i].field);
  }
  /* An empty buffer may declare any power of two, 1 included, but not 0 or 3. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){0, 4}, 0);
  w_u8(&w, 1);
  w_buffer(&w, 0, 1, 0, 0, 0);
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
  w.b[53] = 3;
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment");
  w.b[53] = 0;
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0].alignment");
}

static void test_buffer_table_framing(void **state) {
  (void)state;
  /* No buffers on a layout that has data. */
  W w;
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2);
  w_shape(&w, 2, (const uint64_t[]){3, 4}, 0);
  w_u8(&w, 0);
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffer_count");
  /* buffer_count larger than what follows. */
  w_dense_f32_3x4(&w, 0);
  w.b[44] = 2;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[1]");
  /* A count far beyond the bytes left (and the arena's slack) is a truncated
   * handle too, not an internal error (found by the Python property tests). */
  w.b[44] = 255;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[1]");
  expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_LAYOUT, "buffers[1]");
  w.n = 45;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffers[0]");
  /* Missing buffer_count byte. */
  w.n = 44;
  w_finish(&w);
  expect_reject(&w, 0, HURRAY_ERR_INVALID_LAYOUT, "buffer_count");
}

static void test_buffer_colocation(void **state) {
  (void)state;
  W w;
  /* COO on CUDA, both buffers unified: fine. */
  w_header(&w, 0, 0, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2);
  w_shape(&w, 2, (const uint64_t[]){4, 4}, 0);
  w_u64(&w, 1);
  w_u8(&w, 0);
  w_zero(&w, 7);
  w_u8(&w, 2);
  w_buffer(&w, 4, 256, 0x01, 1, 0x02);
  w_buffer(&w, 16, 256, 0x01, 2, 0x02);
  w_finish(&w);
  expect_roundtrip_w(&w, 0);
  size_t b1 = 44 + 16 + 1 + 16;
  w.b[b1 + 12] = 0x02; /* second buffer on ROCm */
  expect_reject(&w, 0, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffers[1].device_tag");
  expect_reject(&w, HURRAY_DECODE_PERMISSIVE, HURRAY_ERR_INVALID_BUFFER_TABLE,
                "buffers[1].device_tag");
  w.b[b1 + 12] = 0x01;
  w.b[b1 + 14] = 0x01; /* second buffer host pinned */
  expect_reject(&w, 0, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffers[1].memory_class");
}

static void test_peek_length(void **state) {
  (void)state;
  uint32_t n = 0;
  HurrayError err;
  assert_int_equal(hurray_descriptor_peek_length(k_worked, 10, &n, &err), HURRAY_OK);
  assert_int_equal(n, 61);
  assert_int_equal(hurray_descriptor_peek_length(k_worked, 9, &n, &err),
                   HURRAY_ERR_INVALID_LAYOUT);
  uint8_t b[10];
  memcpy(b, k_worked, 10);
  b[0] = 'X';
  assert_int_equal(hurray_descriptor_peek_length(b, 10, &n, &err), HURRAY_ERR_INVALID_MAGIC);
  b[0] = 'H';
  b[4] = 2;
  assert_int_equal(hurray_descriptor_peek_length(b, 10, &n, &err),
                   HURRAY_ERR_VERSION_MISMATCH);
  b[4] = 1;
  b[6] = 19;
  assert_int_equal(hurray_descriptor_peek_length(b, 10, &n, &err), HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(err.field, "descriptor_length");
  assert_int_equal(hurray_descriptor_peek_length(NULL, 10, &n, &err), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_descriptor_peek_length(b, 10, NULL, &err), HURRAY_ERR_NULL_POINTER);
}

static void test_error_detail(void **state) {
  (void)state;
  W w;
  w_dense_with(&w, 48, 32, 0, 0, 0, 0);
  HurrayDescriptor *d = NULL;
  HurrayError err;
  assert_int_equal(hurray_descriptor_decode_ex(w.b, w.n, 0, &d, &err), HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(err.offset, 53);
  assert_string_equal(err.field, "buffers[0].alignment");
  assert_non_null(strstr(err.message, "buffers[0].alignment at byte 53"));
  /* The reference entry point returns the same status without detail. */
  assert_int_equal(hurray_descriptor_decode(w.b, w.n, &d), HURRAY_ERR_INVALID_LAYOUT);
  assert_null(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_worked_example),
      cmocka_unit_test(test_header_rejects),
      cmocka_unit_test(test_minor_version_trailing),
      cmocka_unit_test(test_flags_reserved_bits),
      cmocka_unit_test(test_rank_cap),
      cmocka_unit_test(test_scalar),
      cmocka_unit_test(test_type_tags),
      cmocka_unit_test(test_private_type_extension),
      cmocka_unit_test(test_layout_tags),
      cmocka_unit_test(test_layout_strided),
      cmocka_unit_test(test_layout_tiled),
      cmocka_unit_test(test_layout_tiled_depth),
      cmocka_unit_test(test_layout_tiled_rejects),
      cmocka_unit_test(test_layout_morton_hilbert),
      cmocka_unit_test(test_layout_coo),
      cmocka_unit_test(test_layout_csr_csc),
      cmocka_unit_test(test_layout_csf),
      cmocka_unit_test(test_layout_block_paged),
      cmocka_unit_test(test_layout_composite),
      cmocka_unit_test(test_buffer_handle_rules),
      cmocka_unit_test(test_buffer_table_framing),
      cmocka_unit_test(test_buffer_colocation),
      cmocka_unit_test(test_peek_length),
      cmocka_unit_test(test_error_detail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
