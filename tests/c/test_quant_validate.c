/* Quantization semantics: hurray__quant_validate (src/quant/validate.c; spec:
 * quantization.md, quantization/\*.md, layouts/block-paged.md § Quantization
 * Compatibility, layouts/csf.md, buffer-protocol.md § Device Colocation). Every
 * rule is tested on both sides of its boundary, with the exact status, field
 * path and byte offset. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "internal/validate.h"

#define QOFF 200u          /* where the quantization_length prefix pretends to be */
#define PAY (QOFF + 4u)    /* payload byte 0 */
#define TABLE 100u         /* the buffer_count byte */
#define HANDLE(i, k) (TABLE + 1u + 16u * (i) + (k))
#define DYN HURRAY_DYNAMIC_DIM
#define STRICT HURRAY_DECODE_STRICT
#define PERM HURRAY_DECODE_PERMISSIVE

typedef struct Fx {
  HurrayDescriptorFields f;
  uint64_t shape[8];
  HurrayBufferHandle b[20];
  HurrayQuantization q;
} Fx;

static HurrayOffsets offsets(void) {
  HurrayOffsets o;
  memset(&o, 0, sizeof o);
  o.quantization = QOFF;
  o.buffer_table = TABLE;
  return o;
}

static void fx_init(Fx *x, uint8_t type, uint8_t layout, uint32_t rank, const uint64_t *shape,
                    uint32_t nbuf) {
  memset(x, 0, sizeof *x);
  x->f.version_major = 1;
  x->f.type_tag = type;
  x->f.rank = rank;
  if (rank > 0) memcpy(x->shape, shape, rank * sizeof shape[0]);
  x->f.shape = x->shape;
  x->f.layout.tag = layout;
  x->f.buffer_count = nbuf;
  x->f.buffers = x->b;
  for (uint32_t i = 0; i < 20; i++) {
    x->b[i].byte_size = (uint64_t)1 << 24;
    x->b[i].alignment = 64;
  }
  x->f.quantization = &x->q;
  x->q.version = 1;
}

static void set_pt(Fx *x, float scale, int32_t zp) {
  x->q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  x->q.u.per_tensor.scale = scale;
  x->q.u.per_tensor.zero_point = zp;
}

static void set_pc(Fx *x, uint32_t axis, uint32_t s, uint32_t z) {
  x->q.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  x->q.flags = z == HURRAY_QUANT_NO_BUFFER ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
  x->q.u.per_channel.axis = axis;
  x->q.u.per_channel.scale_buffer_index = s;
  x->q.u.per_channel.zero_point_buffer_index = z;
  x->q.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
}

static void set_pb(Fx *x, uint32_t axis, uint32_t k, uint32_t s, uint32_t z, uint8_t st) {
  x->q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  x->q.flags = z == HURRAY_QUANT_NO_BUFFER ? HURRAY_QUANT_FLAG_SYMMETRIC : 0;
  x->q.u.per_block.axis = axis;
  x->q.u.per_block.block_size = k;
  x->q.u.per_block.scale_buffer_index = s;
  x->q.u.per_block.zero_point_buffer_index = z;
  x->q.u.per_block.scale_type = st;
}

static void set_nf4(Fx *x, uint32_t axis, uint32_t k, uint32_t s) {
  x->q.scheme = HURRAY_QUANT_NF4;
  x->q.u.nf4.axis = axis;
  x->q.u.nf4.block_size = k;
  x->q.u.nf4.scale_buffer_index = s;
}

static void set_mx(Fx *x, uint32_t axis, uint32_t k, uint32_t s) {
  x->q.scheme = HURRAY_QUANT_MXFP;
  x->q.u.mxfp.axis = axis;
  x->q.u.mxfp.block_size = k;
  x->q.u.mxfp.scale_buffer_index = s;
}

static void ok(const Fx *x, uint32_t options) {
  HurrayOffsets o = offsets();
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus st = hurray__quant_validate(&x->f, &o, options, &e);
  if (st != HURRAY_OK) fail_msg("expected OK, got %d: %s", st, e.message);
}

static void bad(const Fx *x, uint32_t options, HurrayStatus want, const char *field,
                uint64_t offset) {
  HurrayOffsets o = offsets();
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus st = hurray__quant_validate(&x->f, &o, options, &e);
  if (st != want) fail_msg("expected %d, got %d: %s", want, st, e.message);
  assert_int_equal(e.status, want);
  if (strcmp(e.field, field) != 0) fail_msg("field '%s' != '%s' (%s)", e.field, field, e.message);
  if (e.offset != offset)
    fail_msg("offset %llu != %llu (%s)", (unsigned long long)e.offset,
             (unsigned long long)offset, e.message);
  assert_non_null(strstr(e.message, field));
}

static const uint64_t S2x8[2] = {2, 8};

/* ---- header ------------------------------------------------------------------------ */

static void test_no_quantization(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 1);
  x.f.quantization = NULL;
  ok(&x, STRICT);
}

static void test_header_rules(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 1);
  set_pt(&x, 1.0f, 0);
  ok(&x, STRICT);
  x.q.scheme = 0x00;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag", PAY);
  bad(&x, PERM, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag", PAY);
  x.q.scheme = 0xFF;
  bad(&x, PERM, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag", PAY);
  const uint8_t unknown[] = {0x06, 0x45, 0x60, 0x9A, 0xEF};
  for (size_t i = 0; i < sizeof unknown; i++) {
    x.q.scheme = unknown[i];
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_tag", PAY);
    ok(&x, PERM);
  }
  /* Private schemes: meaning agreed out of band, nothing to check. */
  x.q.scheme = 0xF0;
  x.q.version = 77;
  x.q.flags = 0xFFFF;
  ok(&x, STRICT);
  x.q.scheme = 0xFE;
  ok(&x, STRICT);

  set_pt(&x, 1.0f, 0);
  x.q.version = 2;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_version", PAY + 1);
  bad(&x, PERM, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_version", PAY + 1);
  x.q.version = 0;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scheme_version", PAY + 1);
  x.q.version = 1;
  x.q.flags = 1;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", PAY + 2);
  bad(&x, PERM, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", PAY + 2);

  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 2);
  set_pc(&x, 0, 1, HURRAY_QUANT_NO_BUFFER);
  ok(&x, STRICT);
  x.q.flags = 0x0003;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", PAY + 2);
  set_nf4(&x, 1, 8, 1);
  x.f.type_tag = HURRAY_DTYPE_UINT4;
  x.q.flags = 0;
  ok(&x, STRICT);
  x.q.flags = HURRAY_QUANT_FLAG_SYMMETRIC; /* not defined for NF4 */
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.flags", PAY + 2);
}

/* ---- storage types ------------------------------------------------------------------ */

static void test_storage_types(void **state) {
  (void)state;
  /* The lists of each scheme's § Valid Storage Types. */
  static const uint8_t affine[] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x48, 0x49, 0x4A, 0x4B};
  static const uint8_t block[] = {0x10, 0x11, 0x48, 0x49, 0x4A, 0x4B};
  static const uint8_t nf4[] = {0x49};
  static const uint8_t mxfp[] = {0x40, 0x41, 0x43, 0x44, 0x45, 0x10, 0x48};
  struct { uint8_t scheme; const uint8_t *list; size_t n; } k[] = {
      {HURRAY_QUANT_PER_TENSOR_AFFINE, affine, sizeof affine},
      {HURRAY_QUANT_PER_CHANNEL_AFFINE, affine, sizeof affine},
      {HURRAY_QUANT_PER_BLOCK_AFFINE, block, sizeof block},
      {HURRAY_QUANT_NF4, nf4, sizeof nf4},
      {HURRAY_QUANT_MXFP, mxfp, sizeof mxfp}};
  static const uint64_t shape[2] = {4, 64};
  for (size_t s = 0; s < 5; s++) {
    for (unsigned t = 0; t <= 0xFF; t++) {
      if (hurray_dtype_tag_kind((uint8_t)t) != HURRAY_TAG_NAMED) continue;
      Fx x;
      fx_init(&x, (uint8_t)t, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 2);
      switch (k[s].scheme) {
        case HURRAY_QUANT_PER_TENSOR_AFFINE: set_pt(&x, 1.0f, 0); x.f.buffer_count = 1; break;
        case HURRAY_QUANT_PER_CHANNEL_AFFINE: set_pc(&x, 1, 1, HURRAY_QUANT_NO_BUFFER); break;
        case HURRAY_QUANT_PER_BLOCK_AFFINE:
          set_pb(&x, 1, 16, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F32);
          break;
        case HURRAY_QUANT_NF4: set_nf4(&x, 1, 16, 1); break;
        default: set_mx(&x, 1, 32, 1); break;
      }
      bool allowed = memchr(k[s].list, (int)t, k[s].n) != NULL;
      if (allowed)
        ok(&x, STRICT);
      else
        bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "type_tag", 14);
    }
  }
  /* A private storage type is not in any list. */
  Fx x;
  fx_init(&x, 0xF3, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1);
  set_pt(&x, 1.0f, 0);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "type_tag", 14);
  bad(&x, PERM, HURRAY_ERR_INVALID_QUANTIZATION, "type_tag", 14);
  /* An unassigned type tag in permissive mode: the rule needs its meaning, skipped. */
  x.f.type_tag = 0x30;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "type_tag", 14);
  ok(&x, PERM);
}

/* ---- per-tensor affine ----------------------------------------------------------------- */

static void test_per_tensor_scale(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 1);
  const uint32_t good[] = {0x3F800000u, 0xBF800000u, 0x00000001u, 0x80000001u, 0x7F7FFFFFu};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    set_pt(&x, hurray__f32_from_bits(good[i]), 0);
    ok(&x, STRICT);
  }
  const uint32_t badv[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                           0x7F800001u};
  for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++) {
    set_pt(&x, hurray__f32_from_bits(badv[i]), 0);
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale", PAY + 4);
    bad(&x, PERM, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale", PAY + 4);
  }
}

static void test_per_tensor_zero_point(void **state) {
  (void)state;
  struct { uint8_t type; int64_t lo, hi; } k[] = {
      {HURRAY_DTYPE_INT8, -128, 127},       {HURRAY_DTYPE_UINT8, 0, 255},
      {HURRAY_DTYPE_INT16, -32768, 32767},  {HURRAY_DTYPE_UINT16, 0, 65535},
      {HURRAY_DTYPE_INT4, -8, 7},           {HURRAY_DTYPE_UINT4, 0, 15},
      {HURRAY_DTYPE_INT2, -2, 1},           {HURRAY_DTYPE_UINT2, 0, 3},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    Fx x;
    fx_init(&x, k[i].type, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 1);
    set_pt(&x, 0.5f, (int32_t)k[i].lo);
    ok(&x, STRICT);
    set_pt(&x, 0.5f, (int32_t)k[i].hi);
    ok(&x, STRICT);
    set_pt(&x, 0.5f, (int32_t)(k[i].lo - 1));
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point", PAY + 8);
    set_pt(&x, 0.5f, (int32_t)(k[i].hi + 1));
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point", PAY + 8);
  }
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT32, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 1);
  set_pt(&x, 0.5f, INT32_MIN);
  ok(&x, STRICT);
  set_pt(&x, 0.5f, INT32_MAX);
  ok(&x, STRICT);
  x.f.type_tag = HURRAY_DTYPE_UINT32;
  ok(&x, STRICT);
  set_pt(&x, 0.5f, 0);
  ok(&x, STRICT);
  set_pt(&x, 0.5f, -1);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point", PAY + 8);
}

static void test_per_tensor_layouts(void **state) {
  (void)state;
  /* Per-tensor adds no buffer and composes with every layout, block-paged included. */
  static const uint64_t s3[3] = {9, 2, 8};
  const uint8_t layouts[] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR, HURRAY_LAYOUT_COO,
                             HURRAY_LAYOUT_CSF, HURRAY_LAYOUT_BLOCK_PAGED};
  for (size_t i = 0; i < sizeof layouts; i++) {
    Fx x;
    fx_init(&x, HURRAY_DTYPE_UINT8, layouts[i], 3, s3, 7);
    set_pt(&x, 0.1f, 128);
    ok(&x, STRICT);
  }
  /* Composite heads and layouts this library cannot read are the layout rules' business. */
  Fx x;
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE, 2, S2x8, 0);
  set_pt(&x, 0.0f, 0);
  ok(&x, STRICT);
  fx_init(&x, HURRAY_DTYPE_FLOAT32, 0x33, 2, S2x8, 0);
  set_pt(&x, 0.0f, 0);
  ok(&x, PERM);
}

/* ---- per-channel affine ---------------------------------------------------------------- */

static void test_per_channel_axis(void **state) {
  (void)state;
  static const uint64_t s[3] = {3, 5, 7};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 3, s, 3);
  for (uint32_t a = 0; a < 3; a++) {
    set_pc(&x, a, 1, 2);
    ok(&x, STRICT);
  }
  set_pc(&x, 3, 1, 2);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  set_pc(&x, UINT32_MAX, 1, 2);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  /* The quantized axis must be static; other dimensions may be dynamic (sizes
   * are then not checked). */
  x.shape[1] = DYN;
  set_pc(&x, 1, 1, 2);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  set_pc(&x, 0, 1, 2);
  ok(&x, STRICT);
  /* Rank 0: no axis exists. */
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 3);
  set_pc(&x, 0, 1, 2);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
}

static void test_per_channel_scale_type_and_symmetric(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 3);
  set_pc(&x, 0, 1, 2);
  for (unsigned t = 0; t < 256; t++) {
    x.q.u.per_channel.scale_type = (uint8_t)t;
    if (t == 0x03)
      ok(&x, STRICT);
    else
      bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale_type_tag", PAY + 16);
  }
  set_pc(&x, 0, 1, 2);
  x.q.flags = HURRAY_QUANT_FLAG_SYMMETRIC; /* with a zero-point index */
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index",
      PAY + 12);
  set_pc(&x, 0, 1, HURRAY_QUANT_NO_BUFFER);
  x.f.buffer_count = 2;
  ok(&x, STRICT);
  x.q.flags = 0; /* asymmetric with the sentinel */
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index",
      PAY + 12);
}

static void test_placement(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 3);
  set_pc(&x, 0, 1, 2);
  ok(&x, STRICT);
  set_pc(&x, 0, 2, 1); /* either order */
  ok(&x, STRICT);
  set_pc(&x, 0, 0, 2); /* the data buffer */
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index", PAY + 8);
  set_pc(&x, 0, 1, 0);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.zero_point_buffer_index",
      PAY + 12);
  set_pc(&x, 0, 3, 2); /* == buffer_count */
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index", PAY + 8);
  set_pc(&x, 0, 1, 3);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.zero_point_buffer_index",
      PAY + 12);
  bad(&x, PERM, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.zero_point_buffer_index",
      PAY + 12);

  /* Device colocation: every parameter buffer on the data buffer's device. */
  set_pc(&x, 0, 1, 2);
  x.b[2].device_tag = HURRAY_DEVICE_CUDA;
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffers[2].device_tag", HANDLE(2, 12));
  x.b[0].device_tag = HURRAY_DEVICE_CUDA;
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffers[1].device_tag", HANDLE(1, 12));
  x.b[1].device_tag = HURRAY_DEVICE_CUDA;
  ok(&x, STRICT);

  /* Sparse and indirect layouts: parameters after the layout's own buffers. */
  static const uint64_t s3[3] = {4, 4, 4};
  struct { uint8_t layout; uint32_t base; } k[] = {
      {HURRAY_LAYOUT_COO, 2}, {HURRAY_LAYOUT_CSR, 3}, {HURRAY_LAYOUT_CSF, 7},
      {HURRAY_LAYOUT_BLOCK_PAGED, 3}, {HURRAY_LAYOUT_TILED, 1}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    uint32_t rank = k[i].layout == HURRAY_LAYOUT_CSR ? 2 : 3;
    fx_init(&x, HURRAY_DTYPE_INT8, k[i].layout, rank, s3, k[i].base + 2);
    x.f.layout.u.block_paged.page_size = 4;
    x.f.layout.u.block_paged.num_pages = 2;
    set_pc(&x, 1, k[i].base, k[i].base + 1);
    ok(&x, STRICT);
    set_pc(&x, 1, k[i].base - 1, k[i].base + 1);
    bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index",
        PAY + 8);
    set_pc(&x, 1, k[i].base, k[i].base - 1);
    bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.zero_point_buffer_index",
        PAY + 12);
  }
}

static void test_per_channel_sizes(void **state) {
  (void)state;
  static const uint64_t s[2] = {6, 10};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 3);
  set_pc(&x, 1, 1, 2);
  x.b[1].byte_size = 40; /* 10 float32 */
  x.b[2].byte_size = 40; /* 10 int32 */
  ok(&x, STRICT);
  x.b[1].byte_size = 39;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
  x.b[1].byte_size = 4096; /* larger is fine */
  ok(&x, STRICT);
  x.b[2].byte_size = 39;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[2].byte_size", HANDLE(2, 0));
  /* Shared buffer: [scales | zero_points]. */
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  set_pc(&x, 0, 1, 1);
  x.b[1].byte_size = 48;
  ok(&x, STRICT);
  x.b[1].byte_size = 47;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
  /* Symmetric: the scale array only. */
  set_pc(&x, 0, 1, HURRAY_QUANT_NO_BUFFER);
  x.b[1].byte_size = 24;
  ok(&x, STRICT);
  x.b[1].byte_size = 23;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
  /* An empty channel axis needs empty arrays. */
  x.shape[0] = 0;
  x.b[1].byte_size = 0;
  ok(&x, STRICT);
}

static void test_per_channel_block_paged(void **state) {
  (void)state;
  static const uint64_t s[3] = {9, 2, 8};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 3, s, 5);
  x.f.layout.u.block_paged.page_size = 4;
  x.f.layout.u.block_paged.num_pages = 5;
  set_pc(&x, 0, 3, 4);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  set_pc(&x, 1, 3, 4);
  x.b[3].byte_size = 8; /* shape[1] = 2 channels: independent of the pages */
  x.b[4].byte_size = 8;
  ok(&x, STRICT);
  x.b[4].byte_size = 7;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[4].byte_size", HANDLE(4, 0));
  set_pc(&x, 2, 3, 4);
  x.b[3].byte_size = 32;
  x.b[4].byte_size = 32;
  ok(&x, STRICT);
}

/* ---- per-block affine ---------------------------------------------------------------------- */

static void test_per_block_block_size(void **state) {
  (void)state;
  static const uint64_t s[2] = {4, 64};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  const uint32_t good[] = {2, 4, 32, 64};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    set_pb(&x, 1, good[i], 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
    ok(&x, STRICT);
  }
  const uint32_t badk[] = {0, 1, 3, 6, 48, 128, 0x80000000u, UINT32_MAX};
  for (size_t i = 0; i < sizeof badk / sizeof badk[0]; i++) {
    set_pb(&x, 1, badk[i], 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  }
  /* An empty axis waives the upper bound (docs/adr/ADR-007-permit-empty-tensors.md),
   * not the power-of-two rule. */
  x.shape[1] = 0;
  set_pb(&x, 1, 128, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
  x.b[1].byte_size = 0;
  ok(&x, STRICT);
  set_pb(&x, 1, 3, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  /* Axis rules as per-channel. */
  set_pb(&x, 2, 2, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  x.shape[0] = DYN;
  set_pb(&x, 0, 2, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
}

static void test_per_block_fields(void **state) {
  (void)state;
  static const uint64_t s[2] = {4, 64};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 3);
  for (unsigned t = 0; t < 256; t++) {
    set_pb(&x, 1, 16, 1, 2, (uint8_t)t);
    if (t >= 1 && t <= 3)
      ok(&x, STRICT);
    else
      bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.scale_type_tag", PAY + 20);
  }
  /* SYMMETRIC <=> zero_point_buffer_index == 0xFFFFFFFF (the flag table's MUST). */
  set_pb(&x, 1, 16, 1, 2, HURRAY_QUANT_SCALE_F32);
  x.q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index",
      PAY + 16);
  set_pb(&x, 1, 16, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F32);
  x.q.flags = 0;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.zero_point_buffer_index",
      PAY + 16);
  /* Placement offsets of this scheme. */
  set_pb(&x, 1, 16, 0, 2, HURRAY_QUANT_SCALE_F32);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index", PAY + 12);
  set_pb(&x, 1, 16, 1, 5, HURRAY_QUANT_SCALE_F32);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.zero_point_buffer_index",
      PAY + 16);
}

static void test_per_block_sizes(void **state) {
  (void)state;
  /* shape [3, 10], blocks of 4 along axis 1: ceil(10/4) = 3 per row, 9 blocks
   * (the partial last block counts). */
  static const uint64_t s[2] = {3, 10};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 3);
  x.b[0].byte_size = 36; /* padded storage: 3 x 12 */
  struct { uint8_t st; uint64_t bytes; } k[] = {
      {HURRAY_QUANT_SCALE_F16, 18}, {HURRAY_QUANT_SCALE_BF16, 18}, {HURRAY_QUANT_SCALE_F32, 36}};
  for (size_t i = 0; i < 3; i++) {
    set_pb(&x, 1, 4, 1, 2, k[i].st);
    x.b[1].byte_size = k[i].bytes;
    x.b[2].byte_size = 36;
    ok(&x, STRICT);
    x.b[1].byte_size = k[i].bytes - 1;
    bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
    x.b[1].byte_size = k[i].bytes;
    x.b[2].byte_size = 35;
    bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[2].byte_size", HANDLE(2, 0));
  }
  /* Shared: 18 + 36. */
  x.f.buffer_count = 2;
  set_pb(&x, 1, 4, 1, 1, HURRAY_QUANT_SCALE_F16);
  x.b[1].byte_size = 54;
  ok(&x, STRICT);
  x.b[1].byte_size = 53;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
  /* A dynamic non-axis dimension: sizes cannot be known, not checked. */
  x.shape[0] = DYN;
  x.b[1].byte_size = 0;
  x.b[0].byte_size = 0;
  ok(&x, STRICT);
  /* Overflowing block counts are reported on the scale buffer. */
  static const uint64_t huge[3] = {UINT64_MAX / 2, UINT64_MAX / 2, 8};
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 3, huge, 2);
  set_pb(&x, 2, 4, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F32);
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
}

static void test_per_block_padded_storage(void **state) {
  (void)state;
  /* per-block-affine.md § Padding: the partial last block still takes a full
   * block of storage. int8 [3, 10], K = 4 along axis 1: 3 x 12 bytes. */
  static const uint64_t s[2] = {3, 10};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  set_pb(&x, 1, 4, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F32);
  x.b[0].byte_size = 36;
  ok(&x, STRICT);
  x.b[0].byte_size = 35;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", HANDLE(0, 0));
  x.f.byte_offset = 4; /* the storage starts at byte_offset */
  x.b[0].byte_size = 39;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", HANDLE(0, 0));
  x.b[0].byte_size = 40;
  ok(&x, STRICT);
  x.f.byte_offset = 0;
  /* Along axis 0 of a column-major uint4 [10, 3]: 12 x 3 nibbles = 18 bytes. */
  static const uint64_t t[2] = {10, 3};
  fx_init(&x, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_COL_MAJOR, 2, t, 2);
  set_pb(&x, 0, 4, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F32);
  x.b[0].byte_size = 18;
  ok(&x, STRICT);
  x.b[0].byte_size = 17;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", HANDLE(0, 0));
  /* No partial block: buffer 0 is the layout rules' business. */
  x.shape[0] = 8;
  x.b[0].byte_size = 0;
  ok(&x, STRICT);
  /* An unknown storage type in permissive mode: the padded size cannot be known. */
  x.shape[0] = 10;
  x.f.type_tag = 0x31;
  ok(&x, PERM);
  x.f.type_tag = HURRAY_DTYPE_UINT4;
  /* Other layouts address their storage themselves. */
  x.shape[0] = 10;
  x.f.layout.tag = HURRAY_LAYOUT_STRIDED;
  ok(&x, STRICT);
}

static void test_per_block_block_paged(void **state) {
  (void)state;
  /* 2 sequences, 9 tokens, page_size 4, 5 pages, 2 heads, head_dim 8. */
  static const uint64_t s[3] = {9, 2, 8};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_BLOCK_PAGED, 3, s, 5);
  x.f.layout.u.block_paged.page_size = 4;
  x.f.layout.u.block_paged.num_pages = 5;
  set_pb(&x, 0, 4, 3, 4, HURRAY_QUANT_SCALE_F16);
  x.b[3].byte_size = 40; /* one scale per page slot: 5 x 4 entries of 2 bytes */
  x.b[4].byte_size = 80; /* int32 zero points, same count */
  ok(&x, STRICT);
  x.b[3].byte_size = 39;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[3].byte_size", HANDLE(3, 0));
  x.b[3].byte_size = 40;
  x.b[4].byte_size = 79;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[4].byte_size", HANDLE(4, 0));
  x.b[4].byte_size = 80;
  set_pb(&x, 1, 2, 3, 4, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  set_pb(&x, 0, 8, 3, 4, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  set_pb(&x, 0, 2, 3, 4, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  /* Fewer tokens than a page: block_size is pinned to page_size, not bounded
   * by shape[0]. */
  x.shape[0] = 3;
  set_pb(&x, 0, 4, 3, 4, HURRAY_QUANT_SCALE_F16);
  ok(&x, STRICT);
  /* Parameters after buffers 0-2. */
  set_pb(&x, 0, 4, 2, 4, HURRAY_QUANT_SCALE_F16);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index", PAY + 12);
}

/* ---- NF4 --------------------------------------------------------------------------------------- */

static void test_nf4(void **state) {
  (void)state;
  static const uint64_t s[2] = {4, 64};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  const uint32_t good[] = {8, 16, 64};
  for (size_t i = 0; i < 3; i++) {
    set_nf4(&x, 1, good[i], 1);
    ok(&x, STRICT);
  }
  const uint32_t badk[] = {0, 2, 4, 12, 128};
  for (size_t i = 0; i < 5; i++) {
    set_nf4(&x, 1, badk[i], 1);
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  }
  set_nf4(&x, 2, 8, 1);
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  set_nf4(&x, 1, 8, 0);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index", PAY + 12);
  set_nf4(&x, 1, 8, 2);
  bad(&x, STRICT, HURRAY_ERR_INVALID_BUFFER_TABLE, "quantization.scale_buffer_index", PAY + 12);
  /* Sizes: [4, 20], K = 8 -> 3 blocks per row (partial), 12 float32 absmax. */
  x.shape[1] = 20;
  set_nf4(&x, 1, 8, 1);
  x.b[1].byte_size = 48;
  x.b[0].byte_size = 48; /* 4 x 24 nibbles */
  ok(&x, STRICT);
  x.b[1].byte_size = 47;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
  x.b[1].byte_size = 48;
  x.b[0].byte_size = 47;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", HANDLE(0, 0));
  /* Empty axis: power of two >= 8 still required, no upper bound. */
  x.shape[1] = 0;
  set_nf4(&x, 1, 1024, 1);
  ok(&x, STRICT);
}

/* ---- MXFP --------------------------------------------------------------------------------------- */

static void test_mxfp(void **state) {
  (void)state;
  static const uint64_t s[2] = {3, 4096};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_FLOAT8_E4M3, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  const uint32_t good[] = {16, 32, 64, 2048};
  for (size_t i = 0; i < 4; i++) {
    set_mx(&x, 1, good[i], 1);
    ok(&x, STRICT);
  }
  const uint32_t badk[] = {0, 4, 8, 24, 48, 4096, 1u << 31};
  for (size_t i = 0; i < sizeof badk / sizeof badk[0]; i++) {
    set_mx(&x, 1, badk[i], 1);
    bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  }
  /* shape[axis] a positive multiple of block_size: no partial block, no empty axis. */
  x.shape[1] = 48;
  set_mx(&x, 1, 16, 1);
  ok(&x, STRICT);
  x.shape[1] = 40;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  x.shape[1] = 0;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  x.shape[1] = 8; /* < block_size */
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.block_size", PAY + 8);
  x.shape[1] = DYN;
  bad(&x, STRICT, HURRAY_ERR_INVALID_QUANTIZATION, "quantization.axis", PAY + 4);
  /* Scale sizes: 3 x (64/32) = 6 one-byte e8m0 scales. */
  x.shape[1] = 64;
  set_mx(&x, 1, 32, 1);
  x.b[1].byte_size = 6;
  ok(&x, STRICT);
  x.b[1].byte_size = 5;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
  /* Along axis 0. */
  x.shape[0] = 32;
  set_mx(&x, 0, 32, 1);
  x.b[1].byte_size = 64;
  ok(&x, STRICT);
  x.b[1].byte_size = 63;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", HANDLE(1, 0));
}

static void test_block_schemes_block_paged(void **state) {
  (void)state;
  /* NF4 and MXFP compose with block-paged without an axis constraint; their
   * scale arrays follow the per-page-slot size (num_pages x page_size). */
  static const uint64_t s[3] = {32, 2, 64};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_BLOCK_PAGED, 3, s, 4);
  x.f.layout.u.block_paged.page_size = 16;
  x.f.layout.u.block_paged.num_pages = 3;
  set_nf4(&x, 2, 64, 3);
  x.b[3].byte_size = 3 * 16 * 4;
  ok(&x, STRICT);
  x.b[3].byte_size = 3 * 16 * 4 - 1;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[3].byte_size", HANDLE(3, 0));
  x.f.type_tag = HURRAY_DTYPE_FLOAT4_E2M1;
  set_mx(&x, 0, 16, 3);
  x.b[3].byte_size = 48;
  ok(&x, STRICT);
  x.b[3].byte_size = 47;
  bad(&x, STRICT, HURRAY_ERR_BUFFER_SIZE, "buffers[3].byte_size", HANDLE(3, 0));
}

/* The reference corpus' per-block int4 [128, 128] descriptor, as fields. */
static void test_golden_fields(void **state) {
  (void)state;
  static const uint64_t s[2] = {128, 128};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, s, 2);
  x.b[0].byte_size = 8192;
  x.b[1].byte_size = 256;
  set_pb(&x, 1, 128, 1, HURRAY_QUANT_NO_BUFFER, HURRAY_QUANT_SCALE_F16);
  ok(&x, STRICT);
  uint32_t n = 0;
  assert_true(hurray__quant_param_buffer_count(&x.q, &n));
  assert_int_equal(n, 1);
}

/* Without offsets (public helpers), errors carry HURRAY_NO_OFFSET. */
static void test_no_offsets(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, S2x8, 2);
  set_pc(&x, 5, 1, HURRAY_QUANT_NO_BUFFER);
  HurrayError e;
  assert_int_equal(hurray__quant_validate(&x.f, NULL, STRICT, &e),
                   HURRAY_ERR_INVALID_QUANTIZATION);
  assert_true(e.offset == HURRAY_NO_OFFSET);
  assert_string_equal(e.field, "quantization.axis");
  x.f.type_tag = HURRAY_DTYPE_FLOAT32;
  assert_int_equal(hurray__quant_validate(&x.f, NULL, STRICT, &e),
                   HURRAY_ERR_INVALID_QUANTIZATION);
  assert_true(e.offset == HURRAY_NO_OFFSET);
  assert_int_equal(hurray__quant_validate(&x.f, NULL, STRICT, NULL),
                   HURRAY_ERR_INVALID_QUANTIZATION);
  x.f.type_tag = HURRAY_DTYPE_INT8;
  x.f.shape = NULL;
  assert_int_equal(hurray__quant_validate(&x.f, NULL, STRICT, &e), HURRAY_ERR_NULL_POINTER);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_quantization),
      cmocka_unit_test(test_header_rules),
      cmocka_unit_test(test_storage_types),
      cmocka_unit_test(test_per_tensor_scale),
      cmocka_unit_test(test_per_tensor_zero_point),
      cmocka_unit_test(test_per_tensor_layouts),
      cmocka_unit_test(test_per_channel_axis),
      cmocka_unit_test(test_per_channel_scale_type_and_symmetric),
      cmocka_unit_test(test_placement),
      cmocka_unit_test(test_per_channel_sizes),
      cmocka_unit_test(test_per_channel_block_paged),
      cmocka_unit_test(test_per_block_block_size),
      cmocka_unit_test(test_per_block_fields),
      cmocka_unit_test(test_per_block_sizes),
      cmocka_unit_test(test_per_block_padded_storage),
      cmocka_unit_test(test_per_block_block_paged),
      cmocka_unit_test(test_nf4),
      cmocka_unit_test(test_mxfp),
      cmocka_unit_test(test_block_schemes_block_paged),
      cmocka_unit_test(test_golden_fields),
      cmocka_unit_test(test_no_offsets),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
