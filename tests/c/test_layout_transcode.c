/* Element-preserving transcoding (src/layout/transcode.c): every dense source
 * layout to row-major and column-major, whole-byte and sub-byte types, ranks
 * 0 to 4 with empty dimensions, checked element by element: the source
 * through hurray_layout_element_offset and a reader of this file, the result
 * where a packed row-/column-major tensor keeps the index. Then the
 * refusals, and the descriptor of the result. */
#include <stdlib.h>

#include "test_layout_fixture.h"

/* ---- a small deterministic generator ---------------------------------------------- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* ---- element access, written here (not the library's) ------------------------------ */

/* Private types (extension section) of widths the kernels have no fixed
 * size for: 3 bytes, 40 bytes (a smaller staged block), 9000 bytes (no
 * block fits the stage: element lines only). */
#define T_PRIVATE24 0xF3u
#define T_PRIVATE320 0xF4u
#define T_PRIVATE72000 0xF5u

static uint32_t bits_of(uint8_t type) {
  switch (type) {
    case T_PRIVATE24: return 24u;
    case T_PRIVATE320: return 320u;
    case T_PRIVATE72000: return 72000u;
    default: return hurray_dtype_info(type)->bit_width;
  }
}

/* Element at linear offset `off` (elements, negative allowed) of a buffer
 * whose element 0 sits at byte bo, as up to 16 bytes (sub-byte: the value in
 * v[0]). */
static void read_at(uint32_t bits, const uint8_t *buf, uint64_t bo, int64_t off, uint8_t *v) {
  memset(v, 0, 16);
  if (bits >= 8) {
    memcpy(v, buf + (int64_t)bo + off * (int64_t)(bits / 8), bits / 8);
  } else if (bits == 6) {
    int64_t g = floor_div(off, 4), j = off - 4 * g;
    const uint8_t *p = buf + (int64_t)bo + 3 * g;
    uint32_t word = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    v[0] = (uint8_t)((word >> (6 * j)) & 0x3F);
  } else {
    int64_t per = 8 / (int64_t)bits, g = floor_div(off, per), j = off - per * g;
    v[0] = (uint8_t)(((unsigned)buf[(int64_t)bo + g] >> (j * (int64_t)bits)) & ((1u << bits) - 1u));
  }
}

static uint64_t packed_bytes(uint32_t bits, uint64_t n) {
  if (bits >= 8) return n * (bits / 8);
  if (bits == 6) return (n + 3) / 4 * 3;
  uint64_t per = 8 / bits;
  return (n + per - 1) / per;
}

/* ---- sources of every dense layout --------------------------------------------------- */

enum { K_ROW, K_COL, K_STRIDED_NEG, K_STRIDED_PERM, K_TILED, K_TILED_COL_STRIDED,
       K_TILED_OUTER_STRIDED, K_TILED_NESTED, K_MORTON, K_HILBERT, K_COUNT };

typedef struct Src {
  Fx x;
  int64_t strides[8], inner[8], outer[8];
  uint32_t mbits[8];
  uint64_t ta[8], tb[8];
  HurrayTiledLevel lv[2];
  HurrayExtensionType ext;
  uint8_t *buf;
  uint64_t size;
  char name[128];
} Src;

static uint32_t log2_ceil(uint64_t n) {
  uint32_t b = 0;
  while ((1ull << b) < n) b++;
  return b;
}

/* Source `kind` of `type` and shape (rank r), random contents; false when the
 * kind does not exist at this rank (a scalar is row-major only; Hilbert needs
 * rank >= 2 and equal power-of-two sides). */
static bool src_make(Src *s, int kind, uint8_t type, uint32_t r, const uint64_t *shape) {
  memset(s, 0, sizeof *s);
  static const uint8_t tags[K_COUNT] = {
      HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR, HURRAY_LAYOUT_STRIDED,
      HURRAY_LAYOUT_STRIDED,   HURRAY_LAYOUT_TILED,     HURRAY_LAYOUT_TILED,
      HURRAY_LAYOUT_TILED,     HURRAY_LAYOUT_TILED,     HURRAY_LAYOUT_MORTON,
      HURRAY_LAYOUT_HILBERT};
  static const char *names[K_COUNT] = {
      "row_major",      "col_major",         "strided (negative, gaps)",
      "strided (permuted)", "tiled",         "tiled (col grid, strided inner)",
      "tiled (strided grid)", "tiled (nested)", "morton",
      "hilbert"};
  if (r == 0 && kind != K_ROW) return false;
  if (kind == K_HILBERT) {
    if (r < 2) return false;
    for (uint32_t k = 0; k < r; k++)
      if (shape[k] != shape[0] || shape[0] < 2 || (shape[0] & (shape[0] - 1)) != 0) return false;
  }
  fx_init(&s->x, type, tags[kind], r, shape, 1, NULL);
  HurrayDescriptorFields *f = &s->x.f;
  bool private_type = hurray_dtype_info(type) == NULL;
  if (private_type) {
    s->ext.bit_width = bits_of(type);
    s->ext.packing_factor = 1;
    f->extension_type = &s->ext;
  }
  int len = snprintf(s->name, sizeof s->name, "%s, %s%u, shape [", names[kind],
                     private_type ? "private" : hurray_dtype_name(type),
                     private_type ? bits_of(type) : 0u);
  for (uint32_t k = 0; k < r; k++)
    len += snprintf(s->name + len, sizeof s->name - (size_t)len, "%s%llu", k ? ", " : "",
                    (unsigned long long)shape[k]);
  snprintf(s->name + len, sizeof s->name - (size_t)len, "]");
  int64_t st = 1, lo = 0;
  switch (kind) {
    case K_STRIDED_NEG:
      /* Column-major order with one element of padding per dimension, every
       * other dimension backwards. */
      for (uint32_t k = 0; k < r; k++) {
        s->strides[k] = k % 2 == 0 ? -st : st;
        if (k % 2 == 0 && shape[k] > 0) lo += st * (int64_t)(shape[k] - 1);
        st *= (int64_t)shape[k] + 1;
      }
      f->byte_offset = (uint64_t)lo * (bits_of(type) / 8 + 1) + 5; /* enough, odd */
      f->layout.u.strided.strides = s->strides;
      break;
    case K_STRIDED_PERM:
      /* Dimension order 1, 3, 0, 2 (outermost first), with gaps of 2. */
      for (uint32_t j = 0; j < r; j++) {
        static const uint32_t order[4][4] = {{0}, {1, 0}, {1, 0, 2}, {1, 3, 0, 2}};
        uint32_t k = order[r - 1][r - 1 - j];
        s->strides[k] = 2 * st;
        st *= 2 * (int64_t)(shape[k] > 0 ? shape[k] : 1);
      }
      f->layout.u.strided.strides = s->strides;
      break;
    case K_TILED:
    case K_TILED_COL_STRIDED:
    case K_TILED_OUTER_STRIDED:
      for (uint32_t k = 0; k < r; k++) s->ta[k] = 2 + k % 2; /* partial tiles */
      s->lv[0] = (HurrayTiledLevel){s->ta, 1, 1, NULL, NULL};
      if (kind == K_TILED_COL_STRIDED) {
        /* Inside a tile: row-major with a gap of one element per row. */
        int64_t t = 1;
        for (uint32_t k = r; k-- > 0;) {
          s->inner[k] = t;
          t *= (int64_t)s->ta[k] + (k == r - 1);
        }
        s->lv[0] = (HurrayTiledLevel){s->ta, 2, 3, NULL, s->inner};
      }
      if (kind == K_TILED_OUTER_STRIDED) {
        /* The tile grid column-major, twice as far apart as needed. */
        int64_t t = 2;
        for (uint32_t k = 0; k < r; k++) {
          uint64_t g = (shape[k] + s->ta[k] - 1) / s->ta[k];
          s->outer[k] = t;
          t *= (int64_t)(g > 0 ? g : 1);
        }
        s->lv[0] = (HurrayTiledLevel){s->ta, 3, 2, s->outer, NULL};
      }
      f->layout.u.tiled.depth = 1;
      f->layout.u.tiled.levels = s->lv;
      break;
    case K_TILED_NESTED:
      for (uint32_t k = 0; k < r; k++) {
        s->ta[k] = 3 + k % 2;
        s->tb[k] = 2;
      }
      s->lv[0] = (HurrayTiledLevel){s->ta, 1, 4, NULL, NULL};
      s->lv[1] = (HurrayTiledLevel){s->tb, 2, 1, NULL, NULL};
      f->layout.u.tiled.depth = 2;
      f->layout.u.tiled.levels = s->lv;
      break;
    case K_MORTON: {
      /* Equal bit counts: with unequal ones the spec's formula addresses
       * beyond 2^(sum of the bits) (docs/reference/layouts.md), past the
       * buffer the size rules ask for. */
      uint32_t b = 1;
      for (uint32_t k = 0; k < r; k++)
        if (log2_ceil(shape[k]) > b) b = log2_ceil(shape[k]);
      for (uint32_t k = 0; k < r; k++) s->mbits[k] = b;
      
      f->layout.u.morton.bits = s->mbits;
      break;
    }
    case K_HILBERT:
      f->layout.u.hilbert.order = log2_ceil(shape[0]);
      f->layout.u.hilbert.rank = r;
      break;
    default:
      break;
  }
  HurrayError e;
  HurrayStatus st2 = hurray_layout_min_buffer_size(f, 0, &s->size, &e);
  if (st2 != HURRAY_OK) fail_msg("%s: min_buffer_size: %s", s->name, e.message);
  s->x.bufs[0].byte_size = s->size;
  s->buf = malloc((size_t)s->size + 1);
  assert_non_null(s->buf);
  for (uint64_t i = 0; i < s->size; i++) s->buf[i] = (uint8_t)rnd();
  return true;
}

static void src_free(Src *s) { free(s->buf); }

static uint64_t volume(uint32_t r, const uint64_t *shape) {
  uint64_t v = 1;
  for (uint32_t k = 0; k < r; k++) v *= shape[k];
  return v;
}

/* Position of index i in a packed row-major (col false) or column-major
 * tensor of this shape. */
static uint64_t packed_index(uint32_t r, const uint64_t *shape, const uint64_t *i, bool col) {
  uint64_t lin = 0;
  for (uint32_t j = 0; j < r; j++) {
    uint32_t k = col ? r - 1 - j : j;
    lin = lin * shape[k] + i[k];
  }
  return lin;
}

/* Transcodes s to `target` and checks every element, the unused bits, the
 * bytes after the result, and (row-major) hurray_layout_to_row_major's copy. */
static void check(const Src *s, uint8_t target) {
  const HurrayDescriptorFields *f = &s->x.f;
  uint32_t r = f->rank, bits = bits_of(f->type_tag);
  bool col = target == HURRAY_LAYOUT_COL_MAJOR;
  HurrayError e;
  uint64_t bytes = 12345;
  HurrayStatus st = hurray_layout_transcode_size(f, target, &bytes, &e);
  if (r == 0 && col) {
    assert_int_equal(st, HURRAY_ERR_UNSUPPORTED);
    assert_string_equal(e.field, "target");
    assert_int_equal(bytes, 12345);
    return;
  }
  if (st != HURRAY_OK) fail_msg("%s: size: %s", s->name, e.message);
  uint64_t vol = volume(r, f->shape);
  assert_int_equal(bytes, packed_bytes(bits, vol));
  uint8_t *out = malloc((size_t)bytes + 16);
  assert_non_null(out);
  memset(out, 0xA5, (size_t)bytes + 16);
  const void *bufs[1] = {s->buf};
  st = hurray_layout_transcode(f, bufs, NULL, target, out, bytes, &e);
  if (st != HURRAY_OK) fail_msg("%s -> %s: %s", s->name, col ? "col" : "row", e.message);
  for (uint64_t i = 0; i < 16; i++)
    if (out[bytes + i] != 0xA5) fail_msg("%s: byte %llu past the result written", s->name,
                                         (unsigned long long)(bytes + i));
  uint64_t idx[8] = {0};
  for (uint64_t n = 0; n < vol; n++) {
    int64_t off;
    st = hurray_layout_element_offset(f, idx, &off, &e);
    if (st != HURRAY_OK) fail_msg("%s: element_offset: %s", s->name, e.message);
    int64_t at = (int64_t)packed_index(r, f->shape, idx, col);
    bool same;
    if (bits >= 8) {
      int64_t w = (int64_t)bits / 8;
      same = memcmp(s->buf + (int64_t)f->byte_offset + off * w, out + at * w, (size_t)w) == 0;
    } else {
      uint8_t want[16], got[16];
      read_at(bits, s->buf, f->byte_offset, off, want);
      read_at(bits, out, 0, at, got);
      same = memcmp(want, got, 16) == 0;
    }
    if (!same)
      fail_msg("%s -> %s: element %llu (offset %lld) differs", s->name, col ? "col" : "row",
               (unsigned long long)n, (long long)off);
    for (uint32_t k = r; k-- > 0;) {
      if (++idx[k] < f->shape[k]) break;
      idx[k] = 0;
    }
  }
  if (bits < 8 && vol > 0) {
    uint64_t per = bits == 6 ? 4 : 8 / bits;
    for (uint64_t n = vol; n % per != 0; n++) {
      uint8_t v[16];
      read_at(bits, out, 0, (int64_t)n, v);
      if (v[0] != 0) fail_msg("%s: unused element %llu is not zero", s->name,
                              (unsigned long long)n);
    }
  }
  if (!col) {
    uint8_t *ref = malloc((size_t)bytes + 1);
    st = hurray_layout_to_row_major(f, bufs, NULL, ref, bytes, &e);
    if (st != HURRAY_OK) fail_msg("%s: to_row_major: %s", s->name, e.message);
    assert_memory_equal(ref, out, (size_t)bytes);
    free(ref);
  }
  free(out);
}

static const uint8_t TYPES[] = {HURRAY_DTYPE_FLOAT32,  HURRAY_DTYPE_UINT8,
                                HURRAY_DTYPE_BFLOAT16, HURRAY_DTYPE_FLOAT64,
                                HURRAY_DTYPE_COMPLEX128, T_PRIVATE24,
                                HURRAY_DTYPE_BOOL,     HURRAY_DTYPE_INT2,
                                HURRAY_DTYPE_INT4,     HURRAY_DTYPE_UINT4,
                                HURRAY_DTYPE_FLOAT4_E2M1, HURRAY_DTYPE_FLOAT6_E2M3};

typedef struct Shape {
  uint32_t r;
  uint64_t d[4];
} Shape;

static const Shape SHAPES[] = {
    {0, {0}},        {1, {7}},          {1, {0}},          {1, {1}},
    {2, {5, 9}},     {2, {0, 3}},       {2, {1, 6}},       {2, {4, 4}},
    {3, {3, 4, 5}},  {3, {2, 0, 3}},    {3, {2, 2, 2}},    {4, {2, 3, 1, 4}},
    {4, {3, 2, 2, 0}}, {4, {2, 2, 2, 2}}, {4, {3, 5, 2, 3}}};

static void test_every_layout_type_and_rank(void **state) {
  (void)state;
  unsigned checked = 0;
  for (size_t si = 0; si < sizeof SHAPES / sizeof SHAPES[0]; si++)
    for (int kind = 0; kind < K_COUNT; kind++)
      for (size_t ti = 0; ti < sizeof TYPES; ti++) {
        Src s;
        if (!src_make(&s, kind, TYPES[ti], SHAPES[si].r, SHAPES[si].d)) continue;
        check(&s, HURRAY_LAYOUT_ROW_MAJOR);
        check(&s, HURRAY_LAYOUT_COL_MAJOR);
        src_free(&s);
        checked++;
      }
  /* 15 shapes x 12 types: 1 scalar + 14 x 9 layouts + 3 Hilbert shapes. */
  assert_int_equal(checked, 12u * (1 + 14 * 9 + 3));
}

/* Tensors larger than the kernels' blocks (32 and 64 elements a side), with
 * edges that are not multiples of them: the blocked transposes, the merged
 * runs and big tiles. */
static void test_larger_than_a_block(void **state) {
  (void)state;
  static const Shape big[] = {{2, {130, 97}}, {3, {70, 3, 67}}, {2, {1, 300}}, {4, {9, 40, 1, 41}}};
  static const uint8_t types[] = {HURRAY_DTYPE_UINT8,      HURRAY_DTYPE_FLOAT16,
                                  HURRAY_DTYPE_FLOAT32,    HURRAY_DTYPE_FLOAT64,
                                  HURRAY_DTYPE_COMPLEX128, T_PRIVATE24,
                                  T_PRIVATE320,            HURRAY_DTYPE_INT4};
  static const int kinds[] = {K_ROW, K_COL, K_STRIDED_NEG, K_STRIDED_PERM, K_TILED_NESTED};
  for (size_t si = 0; si < sizeof big / sizeof big[0]; si++)
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
      for (size_t ti = 0; ti < sizeof types; ti++) {
        Src s;
        assert_true(src_make(&s, kinds[ki], types[ti], big[si].r, big[si].d));
        check(&s, HURRAY_LAYOUT_ROW_MAJOR);
        check(&s, HURRAY_LAYOUT_COL_MAJOR);
        src_free(&s);
      }
  /* Elements of 9000 bytes: no staged block fits, lines only. */
  for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
    Src s;
    assert_true(src_make(&s, kinds[ki], T_PRIVATE72000, 3, (const uint64_t[]){7, 2, 5}));
    check(&s, HURRAY_LAYOUT_ROW_MAJOR);
    check(&s, HURRAY_LAYOUT_COL_MAJOR);
    src_free(&s);
  }
  /* Big tiles: one level of [64, 48] tiles (partial at the edges), column-major
   * inside, over [150, 140]. */
  for (size_t ti = 0; ti < sizeof types; ti++) {
    Src s;
    assert_true(src_make(&s, K_TILED, types[ti], 2, (const uint64_t[]){150, 140}));
    s.ta[0] = 64;
    s.ta[1] = 48;
    s.lv[0].inner_layout = 2;
    free(s.buf);
    assert_int_equal(hurray_layout_min_buffer_size(&s.x.f, 0, &s.size, NULL), HURRAY_OK);
    s.x.bufs[0].byte_size = s.size;
    s.buf = malloc((size_t)s.size);
    for (uint64_t i = 0; i < s.size; i++) s.buf[i] = (uint8_t)rnd();
    check(&s, HURRAY_LAYOUT_ROW_MAJOR);
    check(&s, HURRAY_LAYOUT_COL_MAJOR);
    src_free(&s);
  }
}

/* A source already in the target layout: a packed copy; and the result read
 * back through its own descriptor fields transcodes to the other order and
 * back to the same bytes. */
static void test_same_layout_and_round_trip(void **state) {
  (void)state;
  static const uint8_t types[] = {HURRAY_DTYPE_FLOAT32, HURRAY_DTYPE_INT4, HURRAY_DTYPE_FLOAT6_E3M2,
                                  HURRAY_DTYPE_BOOL};
  for (size_t ti = 0; ti < sizeof types; ti++) {
    uint64_t shape[3] = {5, 3, 7};
    Src s;
    assert_true(src_make(&s, K_COL, types[ti], 3, shape));
    uint64_t bytes;
    assert_int_equal(hurray_layout_transcode_size(&s.x.f, HURRAY_LAYOUT_COL_MAJOR, &bytes, NULL),
                     HURRAY_OK);
    assert_int_equal(bytes, s.size);
    uint8_t *a = malloc((size_t)bytes), *b = malloc((size_t)bytes), *c = malloc((size_t)bytes);
    const void *bufs[1] = {s.buf};
    assert_int_equal(
        hurray_layout_transcode(&s.x.f, bufs, NULL, HURRAY_LAYOUT_COL_MAJOR, a, bytes, NULL),
        HURRAY_OK);
    /* the packed source's bytes, unused trailing bits cleared */
    uint32_t bits = bits_of(types[ti]);
    uint64_t vol = volume(3, shape);
    for (uint64_t n = 0; n < vol; n++) {
      uint8_t x[16], y[16];
      read_at(bits, s.buf, 0, (int64_t)n, x);
      read_at(bits, a, 0, (int64_t)n, y);
      assert_memory_equal(x, y, 16);
    }
    /* col -> row through the result's own fields, then row -> col again */
    Fx rx;
    fx_init(&rx, types[ti], HURRAY_LAYOUT_COL_MAJOR, 3, shape, 1, &bytes);
    const void *abuf[1] = {a};
    assert_int_equal(
        hurray_layout_transcode(&rx.f, abuf, NULL, HURRAY_LAYOUT_ROW_MAJOR, b, bytes, NULL),
        HURRAY_OK);
    rx.f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
    const void *bbuf[1] = {b};
    assert_int_equal(
        hurray_layout_transcode(&rx.f, bbuf, NULL, HURRAY_LAYOUT_COL_MAJOR, c, bytes, NULL),
        HURRAY_OK);
    assert_memory_equal(a, c, (size_t)bytes);
    free(a);
    free(b);
    free(c);
    src_free(&s);
  }
}

/* ---- refusals ---------------------------------------------------------------------- */

#define EXPECT_FAIL(call, st_, field_)                                               \
  do {                                                                               \
    HurrayError e_;                                                                  \
    hurray_error_clear(&e_);                                                         \
    HurrayStatus got_ = (call);                                                      \
    if (got_ != (st_)) fail_msg("got %d (%s), want %d", got_, e_.message, (st_));    \
    assert_int_equal(e_.status, (st_));                                              \
    if ((field_) != NULL) assert_string_equal(e_.field, (const char *)(field_));     \
  } while (0)

/* Both entry points refuse fields f with status st naming field. */
static void refuse(const HurrayDescriptorFields *f, uint8_t target, HurrayStatus st,
                   const char *field) {
  uint64_t bytes = 777;
  uint8_t dst[256];
  const uint8_t src[256] = {0};
  const void *bufs[1] = {src};
  uint64_t sizes[1] = {sizeof src};
  EXPECT_FAIL(hurray_layout_transcode_size(f, target, &bytes, &e_), st, field);
  assert_int_equal(bytes, 777);
  EXPECT_FAIL(hurray_layout_transcode(f, bufs, sizes, target, dst, sizeof dst, &e_), st, field);
}

static void test_refusals(void **state) {
  (void)state;
  uint64_t two[2] = {3, 4};
  Fx x;
  /* targets other than row- and column-major */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, two, 1, (uint64_t[]){48});
  static const uint8_t targets[] = {0x00, HURRAY_LAYOUT_STRIDED, HURRAY_LAYOUT_TILED,
                                    HURRAY_LAYOUT_MORTON, HURRAY_LAYOUT_COO,
                                    HURRAY_LAYOUT_HILBERT, 0x3F, 0xF0, 0xFF};
  for (size_t i = 0; i < sizeof targets; i++)
    refuse(&x.f, targets[i], HURRAY_ERR_UNSUPPORTED, "target");
  /* a scalar to column-major */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1, (uint64_t[]){4});
  refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_UNSUPPORTED, "target");
  /* layouts that are not dense */
  static const uint8_t layouts[] = {HURRAY_LAYOUT_COO, HURRAY_LAYOUT_CSR, HURRAY_LAYOUT_CSC,
                                    HURRAY_LAYOUT_CSF, HURRAY_LAYOUT_BLOCK_PAGED,
                                    HURRAY_LAYOUT_COMPOSITE, 0xF0, 0x20};
  for (size_t i = 0; i < sizeof layouts; i++) {
    fx_init(&x, HURRAY_DTYPE_FLOAT32, layouts[i], 2, two, 3, NULL);
    refuse(&x.f, HURRAY_LAYOUT_ROW_MAJOR, HURRAY_ERR_UNSUPPORTED, "layout_tag");
    refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_UNSUPPORTED, "layout_tag");
  }
  /* quantized */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  q.version = 1;
  q.u.per_tensor.scale = 0.5f;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_COL_MAJOR, 2, two, 1, (uint64_t[]){12});
  x.f.quantization = &q;
  refuse(&x.f, HURRAY_LAYOUT_ROW_MAJOR, HURRAY_ERR_UNSUPPORTED, "quantization");
  refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_UNSUPPORTED, "quantization");
  /* a dynamic dimension */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2,
          (uint64_t[]){HURRAY_DYNAMIC_DIM, 4}, 1, (uint64_t[]){48});
  refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_UNSUPPORTED, "shape");
  /* element types without a storage format: reserved, private without its section */
  fx_init(&x, HURRAY_DTYPE_RESERVED_47, HURRAY_LAYOUT_ROW_MAJOR, 2, two, 1, (uint64_t[]){48});
  refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_UNSUPPORTED, "type_tag");
  x.f.type_tag = 0xF1;
  refuse(&x.f, HURRAY_LAYOUT_ROW_MAJOR, HURRAY_ERR_UNSUPPORTED, "type_tag");
  /* a malformed layout: the shape rules' own status */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 2, two, 1, (uint64_t[]){48});
  refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_INVALID_LAYOUT, "layout.strides");
  /* a packed size beyond 63 bits */
  fx_init(&x, HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_ROW_MAJOR, 2,
          (uint64_t[]){1ull << 31, 1ull << 31}, 1, NULL);
  refuse(&x.f, HURRAY_LAYOUT_COL_MAJOR, HURRAY_ERR_INVALID_ARGUMENT, "shape");
  /* NULL arguments */
  uint64_t bytes;
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, two, 1, (uint64_t[]){48});
  EXPECT_FAIL(hurray_layout_transcode_size(NULL, HURRAY_LAYOUT_ROW_MAJOR, &bytes, &e_),
              HURRAY_ERR_NULL_POINTER, NULL);
  EXPECT_FAIL(hurray_layout_transcode_size(&x.f, HURRAY_LAYOUT_ROW_MAJOR, NULL, &e_),
              HURRAY_ERR_NULL_POINTER, "out_bytes");
  EXPECT_FAIL(hurray_layout_transcode(NULL, NULL, NULL, HURRAY_LAYOUT_ROW_MAJOR, NULL, 0, &e_),
              HURRAY_ERR_NULL_POINTER, NULL);
}

static void test_dst_and_buffer_errors(void **state) {
  (void)state;
  static const int kinds[] = {K_ROW, K_COL, K_STRIDED_NEG, K_TILED, K_TILED_NESTED, K_MORTON};
  static const uint8_t types[] = {HURRAY_DTYPE_FLOAT32, HURRAY_DTYPE_INT4};
  for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
    for (size_t ti = 0; ti < sizeof types; ti++)
      for (uint8_t target = 1; target <= 2; target++) {
        Src s;
        assert_true(src_make(&s, kinds[ki], types[ti], 2, (const uint64_t[]){5, 6}));
        uint64_t bytes;
        assert_int_equal(hurray_layout_transcode_size(&s.x.f, target, &bytes, NULL), HURRAY_OK);
        uint8_t *dst = malloc((size_t)bytes);
        const void *bufs[1] = {s.buf};
        /* dst one byte short, or NULL */
        EXPECT_FAIL(hurray_layout_transcode(&s.x.f, bufs, NULL, target, dst, bytes - 1, &e_),
                    HURRAY_ERR_BUFFER_TOO_SMALL, "dst");
        EXPECT_FAIL(hurray_layout_transcode(&s.x.f, bufs, NULL, target, NULL, bytes, &e_),
                    HURRAY_ERR_NULL_POINTER, "dst");
        /* The bytes the elements take (padded tiles and unused curve codes
         * need not be there): enough, and one byte short. */
        uint64_t need = 0, idx[2];
        uint32_t bits = bits_of(types[ti]);
        for (idx[0] = 0; idx[0] < 5; idx[0]++)
          for (idx[1] = 0; idx[1] < 6; idx[1]++) {
            int64_t off;
            assert_int_equal(hurray_layout_element_offset(&s.x.f, idx, &off, NULL), HURRAY_OK);
            uint64_t end = s.x.f.byte_offset +
                           (bits >= 8 ? (uint64_t)(off + 1) * (bits / 8)
                                      : (uint64_t)floor_div(off, 8 / (int64_t)bits) + 1);
            if (end > need) need = end;
          }
        assert_true(need <= s.size);
        uint64_t sizes[1] = {need};
        assert_int_equal(hurray_layout_transcode(&s.x.f, bufs, sizes, target, dst, bytes, NULL),
                         HURRAY_OK);
        sizes[0] = need - 1;
        EXPECT_FAIL(hurray_layout_transcode(&s.x.f, bufs, sizes, target, dst, bytes, &e_),
                    HURRAY_ERR_BUFFER_SIZE, "buffers[0]");
        /* no buffer at all; a NULL buffer of non-zero size */
        s.x.f.buffer_count = 0;
        EXPECT_FAIL(hurray_layout_transcode(&s.x.f, bufs, NULL, target, dst, bytes, &e_),
                    HURRAY_ERR_INVALID_ARGUMENT, "buffer_count");
        s.x.f.buffer_count = 1;
        const void *none[1] = {NULL};
        EXPECT_FAIL(hurray_layout_transcode(&s.x.f, none, NULL, target, dst, bytes, &e_),
                    HURRAY_ERR_NULL_POINTER, "buffers[0]");
        free(dst);
        src_free(&s);
      }
  /* An empty tensor needs no destination and reads nothing. */
  Fx x;
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, 2, (uint64_t[]){0, 5}, 1, NULL);
  int64_t strides[2] = {-100, 1};
  x.f.layout.u.strided.strides = strides;
  uint64_t bytes = 1;
  assert_int_equal(hurray_layout_transcode_size(&x.f, HURRAY_LAYOUT_COL_MAJOR, &bytes, NULL),
                   HURRAY_OK);
  assert_int_equal(bytes, 0);
  const void *none[1] = {NULL};
  assert_int_equal(
      hurray_layout_transcode(&x.f, none, NULL, HURRAY_LAYOUT_COL_MAJOR, NULL, 0, NULL),
      HURRAY_OK);
}

/* ---- the descriptor of the result ------------------------------------------------------ */

static HurrayDescriptor *build(const HurrayDescriptorFields *f) {
  HurrayDescriptor *d = NULL;
  HurrayError e;
  HurrayStatus st = hurray_descriptor_from_fields(f, HURRAY_DECODE_STRICT, &d, &e);
  if (st != HURRAY_OK) fail_msg("from_fields: %s", e.message);
  return d;
}

/* Encodes d, decodes it strictly, validates its fields strictly; returns the
 * decoded copy (equal to d). */
static HurrayDescriptor *wire_round_trip(const HurrayDescriptor *d) {
  uint64_t len;
  assert_int_equal(hurray_descriptor_encoded_len(d, &len), HURRAY_OK);
  uint8_t *bytes = malloc((size_t)len);
  assert_int_equal(hurray_descriptor_encode(d, bytes, len, &len), HURRAY_OK);
  HurrayDescriptor *back = NULL;
  HurrayError e;
  HurrayStatus st = hurray_descriptor_decode_ex(bytes, len, HURRAY_DECODE_STRICT, &back, &e);
  if (st != HURRAY_OK) fail_msg("decode: %s", e.message);
  free(bytes);
  HurrayDescriptorFields g;
  assert_int_equal(hurray_descriptor_fields(back, &g), HURRAY_OK);
  st = hurray_descriptor_validate(&g, HURRAY_DECODE_STRICT, &e);
  if (st != HURRAY_OK) fail_msg("validate: %s", e.message);
  assert_true(hurray_descriptor_equal(back, d));
  return back;
}

static void test_descriptor_of_the_result(void **state) {
  (void)state;
  /* A strided float32 [3, 4] (rows backwards, a gap per row) at byte_offset
   * 40, its buffer 128-aligned in pinned memory, with a shard, statistics and
   * a composite member section. */
  uint64_t shape[2] = {3, 4}, parent[2] = {9, 4}, at[2] = {3, 0};
  int64_t strides[2] = {-5, 1};
  HurrayShard shard = {parent, at};
  HurrayStatistics stats;
  memset(&stats, 0, sizeof stats);
  stats.computed_mask = HURRAY_STAT_VALUE_RANGE_VALID | HURRAY_STAT_NAN_INF_VALID;
  stats.value_min = -2.5;
  stats.value_max = 7.0;
  stats.value_abs_max = 7.0;
  HurrayCompositeMember member = {HURRAY_MEMBER_ROLE_CORRECTION};
  HurrayBufferHandle h = {40 + 4 * 15, 128, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                          HURRAY_MEMORY_HOST_PINNED, 0};
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = shape;
  f.byte_offset = 40;
  f.layout.tag = HURRAY_LAYOUT_STRIDED;
  f.layout.u.strided.strides = strides;
  f.buffer_count = 1;
  f.buffers = &h;
  f.shard = &shard;
  f.statistics = &stats;
  f.composite_member = &member;
  HurrayDescriptor *d = build(&f);
  for (uint8_t target = 1; target <= 2; target++) {
    HurrayDescriptor *t = (HurrayDescriptor *)0x1;
    HurrayError e;
    HurrayStatus st = hurray_descriptor_transcoded(d, target, &t, &e);
    if (st != HURRAY_OK) fail_msg("transcoded: %s", e.message);
    /* expected: the same fields, the target's layout, one packed buffer */
    HurrayBufferHandle eh = {48, 128, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                             HURRAY_MEMORY_HOST_PINNED, 0};
    HurrayDescriptorFields ef = f;
    memset(&ef.layout, 0, sizeof ef.layout);
    ef.layout.tag = target;
    ef.byte_offset = 0;
    ef.buffers = &eh;
    HurrayDescriptor *want = build(&ef);
    assert_true(hurray_descriptor_equal(t, want));
    HurrayDescriptorFields g;
    assert_int_equal(hurray_descriptor_fields(t, &g), HURRAY_OK);
    assert_int_equal(g.layout.tag, target);
    assert_int_equal(g.byte_offset, 0);
    assert_int_equal(g.buffer_count, 1);
    assert_int_equal(g.buffers[0].byte_size, 48);
    assert_int_equal(g.buffers[0].alignment, 128);
    assert_int_equal(g.buffers[0].memory_class, HURRAY_MEMORY_HOST_PINNED);
    assert_int_equal(g.flags, HURRAY_FLAG_HAS_SHARD | HURRAY_FLAG_HAS_STATISTICS |
                                  HURRAY_FLAG_HAS_COMPOSITE_MEMBER);
    assert_true(hurray_statistics_equal(g.statistics, &stats));
    assert_memory_equal(g.shard->parent_shape, parent, sizeof parent);
    assert_memory_equal(g.shard->offset, at, sizeof at);
    HurrayDescriptor *back = wire_round_trip(t);
    /* the size the descriptor promises is what transcoding writes */
    uint64_t bytes;
    assert_int_equal(hurray_layout_transcode_size(&f, target, &bytes, NULL), HURRAY_OK);
    assert_int_equal(bytes, g.buffers[0].byte_size);
    assert_int_equal(hurray_descriptor_destroy(back), HURRAY_OK);
    assert_int_equal(hurray_descriptor_destroy(want), HURRAY_OK);
    assert_int_equal(hurray_descriptor_destroy(t), HURRAY_OK);
  }
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* Every dense source and a few types: the result equals what
 * hurray_descriptor_fields_dense builds for the shape and the target (sub-byte
 * sizes packed), and survives a strict wire round trip. */
static void test_descriptor_every_source(void **state) {
  (void)state;
  static const uint8_t types[] = {HURRAY_DTYPE_FLOAT64, HURRAY_DTYPE_UINT2,
                                  HURRAY_DTYPE_FLOAT6_E2M3};
  for (int kind = 0; kind < K_COUNT; kind++)
    for (size_t ti = 0; ti < sizeof types; ti++) {
      Src s;
      uint64_t shape[2] = {4, 4};
      assert_true(src_make(&s, kind, types[ti], 2, shape));
      HurrayDescriptor *d = build(&s.x.f);
      for (uint8_t target = 1; target <= 2; target++) {
        HurrayDescriptor *t = NULL;
        HurrayError e;
        HurrayStatus st = hurray_descriptor_transcoded(d, target, &t, &e);
        if (st != HURRAY_OK) fail_msg("%s: %s", s.name, e.message);
        uint64_t bytes;
        assert_int_equal(hurray_buffer_size_bytes(types[ti], 16, &bytes), HURRAY_OK);
        HurrayBufferHandle h;
        HurrayDescriptorFields ef;
        assert_int_equal(hurray_descriptor_fields_dense(types[ti], 2, shape, target, bytes, 64,
                                                        &h, &ef, NULL),
                         HURRAY_OK);
        HurrayDescriptor *want = build(&ef);
        assert_true(hurray_descriptor_equal(t, want));
        HurrayDescriptor *back = wire_round_trip(t);
        assert_int_equal(hurray_descriptor_destroy(back), HURRAY_OK);
        assert_int_equal(hurray_descriptor_destroy(want), HURRAY_OK);
        assert_int_equal(hurray_descriptor_destroy(t), HURRAY_OK);
      }
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
      src_free(&s);
    }
}

/* A descriptor only a permissive decode accepts (a reserved device tag, as a
 * relay keeps it): the result keeps the tag and is as permissive; a strict
 * source gives a strict result. */
static void test_descriptor_permissive_source(void **state) {
  (void)state;
  uint64_t shape[2] = {2, 8};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT16, HURRAY_LAYOUT_COL_MAJOR, 2, shape, 1, (uint64_t[]){32});
  x.bufs[0].device_tag = 0x30;
  HurrayDescriptor *d = NULL, *t = NULL;
  assert_int_equal(hurray_descriptor_validate(&x.f, HURRAY_DECODE_STRICT, NULL),
                   HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_descriptor_from_fields(&x.f, HURRAY_DECODE_PERMISSIVE, &d, NULL),
                   HURRAY_OK);
  HurrayError e;
  HurrayStatus st = hurray_descriptor_transcoded(d, HURRAY_LAYOUT_ROW_MAJOR, &t, &e);
  if (st != HURRAY_OK) fail_msg("%s", e.message);
  HurrayDescriptorFields g;
  assert_int_equal(hurray_descriptor_fields(t, &g), HURRAY_OK);
  assert_int_equal(g.layout.tag, HURRAY_LAYOUT_ROW_MAJOR);
  assert_int_equal(g.buffers[0].device_tag, 0x30);
  assert_int_equal(g.buffers[0].byte_size, 32);
  assert_int_equal(hurray_descriptor_validate(&g, HURRAY_DECODE_STRICT, NULL),
                   HURRAY_ERR_INVALID_TYPE);
  assert_int_equal(hurray_descriptor_validate(&g, HURRAY_DECODE_PERMISSIVE, NULL), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(t), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_descriptor_refusals(void **state) {
  (void)state;
  HurrayDescriptor *t = (HurrayDescriptor *)0x1;
  uint64_t two[2] = {3, 4};
  /* quantized */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  q.version = 1;
  q.u.per_tensor.scale = 0.25f;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, two, 1, (uint64_t[]){12});
  x.f.quantization = &q;
  HurrayDescriptor *d = build(&x.f);
  EXPECT_FAIL(hurray_descriptor_transcoded(d, HURRAY_LAYOUT_COL_MAJOR, &t, &e_),
              HURRAY_ERR_UNSUPPORTED, "quantization");
  assert_null(t);
  /* unknown target */
  t = (HurrayDescriptor *)0x1;
  EXPECT_FAIL(hurray_descriptor_transcoded(d, 0x07, &t, &e_), HURRAY_ERR_UNSUPPORTED, "target");
  assert_null(t);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* sparse: a COO tensor with 2 stored elements */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COO, 2, two, 2, (uint64_t[]){8, 32});
  x.f.layout.u.coo.nnz = 2;
  d = build(&x.f);
  t = (HurrayDescriptor *)0x1;
  EXPECT_FAIL(hurray_descriptor_transcoded(d, HURRAY_LAYOUT_ROW_MAJOR, &t, &e_),
              HURRAY_ERR_UNSUPPORTED, "layout_tag");
  assert_null(t);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* a dynamic dimension */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2,
          (uint64_t[]){HURRAY_DYNAMIC_DIM, 4}, 1, (uint64_t[]){64});
  d = build(&x.f);
  t = (HurrayDescriptor *)0x1;
  EXPECT_FAIL(hurray_descriptor_transcoded(d, HURRAY_LAYOUT_COL_MAJOR, &t, &e_),
              HURRAY_ERR_UNSUPPORTED, "shape");
  assert_null(t);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  /* a scalar to column-major */
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1, (uint64_t[]){4});
  d = build(&x.f);
  t = (HurrayDescriptor *)0x1;
  EXPECT_FAIL(hurray_descriptor_transcoded(d, HURRAY_LAYOUT_COL_MAJOR, &t, &e_),
              HURRAY_ERR_UNSUPPORTED, "target");
  assert_null(t);
  /* NULL arguments */
  EXPECT_FAIL(hurray_descriptor_transcoded(d, HURRAY_LAYOUT_ROW_MAJOR, NULL, &e_),
              HURRAY_ERR_NULL_POINTER, "out");
  t = (HurrayDescriptor *)0x1;
  EXPECT_FAIL(hurray_descriptor_transcoded(NULL, HURRAY_LAYOUT_ROW_MAJOR, &t, &e_),
              HURRAY_ERR_NULL_POINTER, NULL);
  assert_null(t);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* Every allocation of hurray_descriptor_transcoded failing in turn: out of
 * memory, *out NULL, nothing leaked. */
static void test_descriptor_out_of_memory(void **state) {
  (void)state;
  uint64_t shape[2] = {3, 4};
  Fx x;
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_COL_MAJOR, 2, shape, 1, (uint64_t[]){48});
  tu_alloc_install();
  HurrayDescriptor *d = build(&x.f);
  long base = tu_alloc_live();
  bool succeeded = false;
  for (long n = 0; n < 16 && !succeeded; n++) {
    tu_fail_alloc_after(n);
    HurrayDescriptor *t = (HurrayDescriptor *)0x1;
    HurrayStatus st = hurray_descriptor_transcoded(d, HURRAY_LAYOUT_ROW_MAJOR, &t, NULL);
    tu_alloc_reset();
    if (st == HURRAY_OK) {
      succeeded = true;
      assert_int_equal(hurray_descriptor_destroy(t), HURRAY_OK);
    } else {
      assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
      assert_null(t);
    }
    assert_int_equal(tu_alloc_live(), base);
  }
  assert_true(succeeded);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_layout_type_and_rank),
      cmocka_unit_test(test_larger_than_a_block),
      cmocka_unit_test(test_same_layout_and_round_trip),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_dst_and_buffer_errors),
      cmocka_unit_test(test_descriptor_of_the_result),
      cmocka_unit_test(test_descriptor_every_source),
      cmocka_unit_test(test_descriptor_permissive_source),
      cmocka_unit_test(test_descriptor_refusals),
      cmocka_unit_test(test_descriptor_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
