/* Partial reads of dense tensors (src/layout/slice.c): every dense layout and
 * storage width against a reference built from hurray_layout_to_row_major,
 * the bytes the engine touches, empty selections and every error. */
#include <stdlib.h>

#include "internal/slice.h"
#include "test_layout_fixture.h"

/* ---- a small deterministic generator ---------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static uint64_t rnd_below(uint64_t n) { return n == 0 ? 0 : rnd() % n; }

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* ---- packed elements ---------------------------------------------------------------- */

static uint32_t bits_of(uint8_t type) { return hurray_dtype_info(type)->bit_width; }

/* Element e of a packed row-major buffer, as up to 16 bytes (sub-byte: the
 * value in v[0]). */
static void elem_at(uint32_t bits, const uint8_t *buf, uint64_t e, uint8_t *v) {
  memset(v, 0, 16);
  if (bits >= 8) {
    memcpy(v, buf + e * (bits / 8), bits / 8);
  } else if (bits == 6) {
    const uint8_t *p = buf + (e / 4) * 3;
    uint32_t g = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    v[0] = (uint8_t)((g >> (6 * (e % 4))) & 0x3F);
  } else {
    uint64_t per = 8 / bits;
    v[0] = (uint8_t)(((unsigned)buf[e / per] >> ((e % per) * bits)) & ((1u << bits) - 1u));
  }
}

static uint64_t packed_size(uint8_t type, uint64_t n) {
  uint64_t out = 0;
  assert_int_equal(hurray_buffer_size_bytes(type, n, &out), HURRAY_OK);
  return out;
}

/* ---- tensors of every dense layout ----------------------------------------------------- */

typedef struct T {
  Fx x;
  int64_t strides[8];
  uint32_t bits[8];
  uint64_t tile_a[8], tile_b[8];
  HurrayTiledLevel lv[2];
  uint8_t *buf;
  uint64_t size;
  const char *name;
} T;

enum { L_ROW, L_COL, L_STRIDED_NEG, L_STRIDED_PERM, L_TILED, L_TILED_NESTED, L_TILED_COLGRID,
       L_MORTON, L_HILBERT, L_COUNT };

/* Tensor `which` of shape [6, 10] (3-D [3, 4, 5] for column-major, the nested
 * and the permuted cases, [8, 8] for Hilbert) with random contents. */
static void t_make(T *t, int which, uint8_t type) {
  memset(t, 0, sizeof *t);
  uint64_t two[2] = {6, 10}, three[3] = {3, 4, 5};
  switch (which) {
    case L_ROW:
      t->name = "row_major";
      fx_init(&t->x, type, HURRAY_LAYOUT_ROW_MAJOR, 2, two, 1, NULL);
      break;
    case L_COL:
      t->name = "col_major";
      fx_init(&t->x, type, HURRAY_LAYOUT_COL_MAJOR, 3, three, 1, NULL);
      break;
    case L_STRIDED_NEG:
      /* Rows backwards with one element of padding each, columns forwards. */
      t->name = "strided (negative)";
      fx_init(&t->x, type, HURRAY_LAYOUT_STRIDED, 2, two, 1, NULL);
      t->strides[0] = -11;
      t->strides[1] = 1;
      t->x.f.byte_offset = 55 * 16;
      break;
    case L_STRIDED_PERM:
      t->name = "strided (permuted, gaps)";
      fx_init(&t->x, type, HURRAY_LAYOUT_STRIDED, 3, three, 1, NULL);
      t->strides[0] = 2;
      t->strides[1] = 40;
      t->strides[2] = 7;
      break;
    case L_TILED:
      t->name = "tiled [4, 4] (partial tiles)";
      fx_init(&t->x, type, HURRAY_LAYOUT_TILED, 2, two, 1, NULL);
      t->tile_a[0] = 4;
      t->tile_a[1] = 4;
      t->lv[0] = (HurrayTiledLevel){t->tile_a, 1, 1, NULL, NULL};
      t->x.f.layout.u.tiled.depth = 1;
      break;
    case L_TILED_NESTED:
      t->name = "tiled [2, 4, 4] / [1, 2, 2]";
      fx_init(&t->x, type, HURRAY_LAYOUT_TILED, 3, three, 1, NULL);
      t->tile_a[0] = 2, t->tile_a[1] = 4, t->tile_a[2] = 4;
      t->tile_b[0] = 1, t->tile_b[1] = 2, t->tile_b[2] = 2;
      t->lv[0] = (HurrayTiledLevel){t->tile_a, 1, 4, NULL, NULL};
      t->lv[1] = (HurrayTiledLevel){t->tile_b, 2, 2, NULL, NULL};
      t->x.f.layout.u.tiled.depth = 2;
      break;
    case L_TILED_COLGRID:
      t->name = "tiled, column-major grid, strided inner";
      fx_init(&t->x, type, HURRAY_LAYOUT_TILED, 2, two, 1, NULL);
      t->tile_a[0] = 3;
      t->tile_a[1] = 4;
      t->strides[0] = 1;
      t->strides[1] = 3;
      t->lv[0] = (HurrayTiledLevel){t->tile_a, 2, 3, NULL, t->strides};
      t->x.f.layout.u.tiled.depth = 1;
      break;
    case L_MORTON:
      t->name = "morton";
      fx_init(&t->x, type, HURRAY_LAYOUT_MORTON, 2, two, 1, NULL);
      t->bits[0] = 4;
      t->bits[1] = 4;
      break;
    default:
      t->name = "hilbert";
      fx_init(&t->x, type, HURRAY_LAYOUT_HILBERT, 2, (uint64_t[]){8, 8}, 1, NULL);
      t->x.f.layout.u.hilbert.order = 3;
      t->x.f.layout.u.hilbert.rank = 2;
      break;
  }
  if (t->x.f.layout.tag == HURRAY_LAYOUT_STRIDED) t->x.f.layout.u.strided.strides = t->strides;
  if (t->x.f.layout.tag == HURRAY_LAYOUT_TILED) t->x.f.layout.u.tiled.levels = t->lv;
  if (t->x.f.layout.tag == HURRAY_LAYOUT_MORTON) t->x.f.layout.u.morton.bits = t->bits;
  HurrayError e;
  HurrayStatus st = hurray_layout_min_buffer_size(&t->x.f, 0, &t->size, &e);
  if (st != HURRAY_OK) fail_msg("%s: %s", t->name, e.message);
  t->x.bufs[0].byte_size = t->size;
  t->buf = malloc((size_t)t->size + 1);
  for (uint64_t i = 0; i < t->size; i++) t->buf[i] = (uint8_t)rnd();
}

static void t_free(T *t) { free(t->buf); }

static uint64_t volume(const HurrayDescriptorFields *f) {
  uint64_t v = 1;
  for (uint32_t k = 0; k < f->rank; k++) v *= f->shape[k];
  return v;
}

/* Copies ranges through the public function and compares every element with
 * the row-major copy of the whole tensor. */
static void check_against_full(T *t, const HurraySliceRange *q) {
  const HurrayDescriptorFields *f = &t->x.f;
  uint32_t r = f->rank, bits = bits_of(f->type_tag);
  uint64_t full_bytes = packed_size(f->type_tag, volume(f));
  uint8_t *full = malloc((size_t)full_bytes + 1);
  const void *bufs[1] = {t->buf};
  HurrayError e;
  HurrayStatus st = hurray_layout_to_row_major(f, bufs, NULL, full, full_bytes, &e);
  if (st != HURRAY_OK) fail_msg("%s: to_row_major: %s", t->name, e.message);
  uint64_t n[8], bytes = 0;
  st = hurray_layout_slice_shape(f, q, n, &bytes, &e);
  if (st != HURRAY_OK) fail_msg("%s: slice_shape: %s", t->name, e.message);
  uint64_t vol = 1;
  for (uint32_t k = 0; k < r; k++) vol *= n[k];
  assert_int_equal(bytes, packed_size(f->type_tag, vol));
  uint8_t *out = malloc((size_t)bytes + 8);
  memset(out, 0xA5, (size_t)bytes + 8);
  st = hurray_layout_slice_to_row_major(f, bufs, NULL, q, out, bytes, &e);
  if (st != HURRAY_OK) fail_msg("%s: slice: %s", t->name, e.message);
  for (uint64_t i = 0; i < 8; i++) assert_int_equal(out[bytes + i], 0xA5); /* nothing past */
  uint64_t j[8] = {0};
  for (uint64_t o = 0; o < vol; o++) {
    uint64_t lin = 0;
    for (uint32_t k = 0; k < r; k++) {
      uint64_t first = q[k].start, x;
      if (q[k].flags & HURRAY_SLICE_REVERSE) {
        first = q[k].start + (n[k] - 1) * q[k].step;
        x = first - j[k] * q[k].step;
      } else {
        x = first + j[k] * q[k].step;
      }
      lin = lin * f->shape[k] + x;
    }
    uint8_t want[16], got[16];
    elem_at(bits, full, lin, want);
    elem_at(bits, out, o, got);
    if (memcmp(want, got, 16) != 0)
      fail_msg("%s (%u bits): output element %llu (source %llu) differs", t->name, bits,
               (unsigned long long)o, (unsigned long long)lin);
    for (uint32_t k = r; k-- > 0;) {
      if (++j[k] < n[k]) break;
      j[k] = 0;
    }
  }
  /* Unused bits of the last byte or group are zero. */
  if (bits < 8 && vol > 0) {
    uint64_t per = bits == 6 ? 4 : 8 / bits;
    for (uint64_t o = vol; o % per != 0; o++) {
      uint8_t v[16];
      elem_at(bits, out, o, v);
      assert_int_equal(v[0], 0);
    }
  }
  free(out);
  free(full);
}

/* A random range of a dimension of size d: whole, one index, a stepped
 * slice, forwards or backwards, sometimes empty. */
static HurraySliceRange random_range(uint64_t d) {
  HurraySliceRange q = {0, d, 1, 0};
  switch (rnd_below(5)) {
    case 0:
      break;
    case 1:
      q.start = rnd_below(d);
      q.stop = q.start + 1;
      break;
    case 2:
      q.start = rnd_below(d + 1);
      q.stop = q.start; /* empty */
      break;
    default:
      q.start = rnd_below(d);
      q.stop = q.start + 1 + rnd_below(d - q.start);
      q.step = 1 + rnd_below(4);
      break;
  }
  if (rnd_below(3) == 0) q.flags = HURRAY_SLICE_REVERSE;
  return q;
}

static const uint8_t TYPES[] = {
    HURRAY_DTYPE_FLOAT32,     HURRAY_DTYPE_UINT8, HURRAY_DTYPE_BFLOAT16,    HURRAY_DTYPE_FLOAT64,
    HURRAY_DTYPE_BOOL,        HURRAY_DTYPE_INT2,  HURRAY_DTYPE_INT4,        HURRAY_DTYPE_UINT4,
    HURRAY_DTYPE_FLOAT6_E2M3, HURRAY_DTYPE_FLOAT6_E3M2, HURRAY_DTYPE_COMPLEX128};

static void test_every_layout_and_type(void **state) {
  (void)state;
  for (int which = 0; which < L_COUNT; which++) {
    for (size_t ti = 0; ti < sizeof TYPES; ti++) {
      T t;
      t_make(&t, which, TYPES[ti]);
      HurraySliceRange q[8];
      uint32_t r = t.x.f.rank;
      /* The whole tensor, then random selections. */
      for (uint32_t k = 0; k < r; k++) q[k] = (HurraySliceRange){0, t.x.f.shape[k], 1, 0};
      check_against_full(&t, q);
      for (int trial = 0; trial < 60; trial++) {
        for (uint32_t k = 0; k < r; k++) q[k] = random_range(t.x.f.shape[k]);
        check_against_full(&t, q);
      }
      t_free(&t);
    }
  }
}

/* Runs that straddle bytes of sub-byte types: every start phase against every
 * destination phase, in one row. */
static void test_sub_byte_phases(void **state) {
  (void)state;
  const uint8_t types[] = {HURRAY_DTYPE_BOOL, HURRAY_DTYPE_UINT2, HURRAY_DTYPE_INT4,
                           HURRAY_DTYPE_FLOAT6_E2M3};
  for (size_t ti = 0; ti < sizeof types; ti++) {
    Fx x;
    uint64_t shape[2] = {5, 37};
    fx_init(&x, types[ti], HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1, NULL);
    T t;
    memset(&t, 0, sizeof t);
    t.x = x;
    t.x.f.shape = t.x.shape;
    t.x.f.buffers = t.x.bufs;
    t.name = "row_major phases";
    t.size = packed_size(types[ti], 5 * 37);
    t.x.bufs[0].byte_size = t.size;
    t.buf = malloc((size_t)t.size);
    for (uint64_t i = 0; i < t.size; i++) t.buf[i] = (uint8_t)rnd();
    for (uint64_t a = 0; a < 12; a++)
      for (uint64_t len = 0; len + a <= 37 && len < 30; len++) {
        HurraySliceRange q[2] = {{1, 4, 1, 0}, {a, a + len, 1, 0}};
        check_against_full(&t, q);
        q[0] = (HurraySliceRange){2, 3, 1, 0};
        check_against_full(&t, q);
      }
    free(t.buf);
  }
}

static void test_scalar_and_rank1(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, HURRAY_DTYPE_INT16, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1, (uint64_t[]){2});
  uint8_t v[2] = {0x34, 0x12}, out[2] = {0, 0};
  const void *bufs[1] = {v};
  uint64_t bytes = 9;
  assert_int_equal(hurray_layout_slice_shape(&x.f, NULL, NULL, &bytes, NULL), HURRAY_OK);
  assert_int_equal(bytes, 2);
  assert_int_equal(hurray_layout_slice_to_row_major(&x.f, bufs, NULL, NULL, out, 2, NULL),
                   HURRAY_OK);
  assert_memory_equal(out, v, 2);
  /* Rank 1, every other element backwards: [9, 7, 5, 3, 1]. */
  uint8_t w[10], o[5];
  for (int i = 0; i < 10; i++) w[i] = (uint8_t)i;
  fx_init(&x, HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){10}, 1,
          (uint64_t[]){10});
  const void *wb[1] = {w};
  HurraySliceRange q = {1, 10, 2, HURRAY_SLICE_REVERSE};
  assert_int_equal(hurray_layout_slice_to_row_major(&x.f, wb, NULL, &q, o, 5, NULL), HURRAY_OK);
  const uint8_t want[5] = {9, 7, 5, 3, 1};
  assert_memory_equal(o, want, 5);
}

/* ---- what the engine reads --------------------------------------------------------- */

typedef struct Rec {
  const uint8_t *buf;
  uint64_t size;
  uint8_t *allowed; /* per byte of the buffer: a selected element lives there */
  uint64_t calls, bytes, biggest;
  int bad;
} Rec;

static HurrayStatus rec_read(void *ctx, uint64_t pos, uint64_t len, uint8_t *dst,
                             HurrayError *err) {
  (void)err;
  Rec *r = ctx;
  r->calls++;
  r->bytes += len;
  if (len > r->biggest) r->biggest = len;
  for (uint64_t i = pos; i < pos + len; i++)
    if (!r->allowed[i]) r->bad++;
  memcpy(dst, r->buf + pos, (size_t)len);
  return HURRAY_OK;
}

/* Marks the bytes of each selected element; returns the element count. */
static uint64_t mark_selected(const T *t, const HurraySliceRange *q, uint8_t *allowed) {
  const HurrayDescriptorFields *f = &t->x.f;
  uint32_t r = f->rank, bits = bits_of(f->type_tag);
  uint64_t n[8];
  assert_int_equal(hurray_layout_slice_shape(f, q, n, NULL, NULL), HURRAY_OK);
  uint64_t vol = 1, j[8] = {0}, x[8];
  for (uint32_t k = 0; k < r; k++) vol *= n[k];
  for (uint64_t o = 0; o < vol; o++) {
    for (uint32_t k = 0; k < r; k++) x[k] = q[k].start + j[k] * q[k].step;
    int64_t off = 0;
    assert_int_equal(hurray_layout_element_offset(f, x, &off, NULL), HURRAY_OK);
    int64_t bo = (int64_t)f->byte_offset, a, len;
    if (bits >= 8) {
      a = bo + off * (int64_t)(bits / 8);
      len = bits / 8;
    } else if (bits == 6) {
      a = bo + floor_div(off, 4) * 3;
      len = 3;
    } else {
      a = bo + floor_div(off, 8 / (int64_t)bits);
      len = 1;
    }
    for (int64_t i = 0; i < len; i++) allowed[a + i] = 1;
    for (uint32_t k = r; k-- > 0;) {
      if (++j[k] < n[k]) break;
      j[k] = 0;
    }
  }
  return vol;
}

static void touched(int which, uint8_t type, const HurraySliceRange *q, Rec *rec) {
  T t;
  t_make(&t, which, type);
  memset(rec, 0, sizeof *rec);
  rec->buf = t.buf;
  rec->size = t.size;
  rec->allowed = calloc((size_t)t.size, 1);
  mark_selected(&t, q, rec->allowed);
  HurraySliceSource src = {NULL, t.size, rec_read, rec, NULL};
  uint64_t bytes = 0;
  assert_int_equal(hurray_layout_slice_shape(&t.x.f, q, NULL, &bytes, NULL), HURRAY_OK);
  uint8_t *out = malloc((size_t)bytes + 1);
  HurrayError e;
  HurrayStatus st = hurray__slice_gather(&t.x.f, q, &src, out, bytes, &e);
  if (st != HURRAY_OK) fail_msg("%s: %s", t.name, e.message);
  assert_int_equal(rec->bad, 0);
  free(out);
  free(rec->allowed);
  t_free(&t);
}

static void test_reads_only_selected_bytes(void **state) {
  (void)state;
  Rec rec;
  /* Rows 2..4 of a row-major tensor: one contiguous copy. */
  HurraySliceRange rows[2] = {{2, 5, 1, 0}, {0, 10, 1, 0}};
  touched(L_ROW, HURRAY_DTYPE_FLOAT32, rows, &rec);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.bytes, 3 * 10 * 4);
  /* Columns 3..6 of every row: one copy per row, 16 bytes each. */
  HurraySliceRange cols[2] = {{0, 6, 1, 0}, {3, 7, 1, 0}};
  touched(L_ROW, HURRAY_DTYPE_FLOAT32, cols, &rec);
  assert_int_equal(rec.calls, 6);
  assert_int_equal(rec.bytes, 6 * 4 * 4);
  /* int4 columns 2..9 (aligned nibbles): whole bytes per row. */
  HurraySliceRange nib[2] = {{1, 3, 1, 0}, {2, 10, 1, 0}};
  touched(L_ROW, HURRAY_DTYPE_INT4, nib, &rec);
  assert_int_equal(rec.calls, 2);
  assert_int_equal(rec.bytes, 2 * 4);
  /* Every layout and width, random selections: only the selected bytes. */
  for (int which = 0; which < L_COUNT; which++)
    for (size_t ti = 0; ti < sizeof TYPES; ti++)
      for (int trial = 0; trial < 20; trial++) {
        T t;
        t_make(&t, which, TYPES[ti]);
        HurraySliceRange q[8];
        for (uint32_t k = 0; k < t.x.f.rank; k++) {
          q[k] = random_range(t.x.f.shape[k]);
          q[k].flags = 0; /* mark_selected walks forwards */
        }
        t_free(&t);
        touched(which, TYPES[ti], q, &rec);
      }
  /* A tiled tensor's tile rows are contiguous: [0:4, 0:4] of [4, 4] tiles is
   * one tile, one copy. */
  HurraySliceRange tile[2] = {{0, 4, 1, 0}, {0, 4, 1, 0}};
  touched(L_TILED, HURRAY_DTYPE_FLOAT32, tile, &rec);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.bytes, 64);
}

/* A memory source that is a mapping hears of each piece of 4 KiB or more
 * before it is copied, and of nothing smaller. */
static uint64_t hint_calls, hint_bytes;
static void hint(const void *p, size_t n) {
  (void)p;
  hint_calls++;
  hint_bytes += n;
}

static void test_mapping_hints(void **state) {
  (void)state;
  Fx x;
  uint64_t shape[2] = {64, 1024};
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, shape, 1,
          (uint64_t[]){64 * 1024 * 4});
  uint8_t *buf = calloc(64 * 1024, 4), *out = malloc(64 * 1024 * 4);
  HurraySliceSource src = {buf, 64 * 1024 * 4, NULL, NULL, hint};
  /* Rows 8..15: one piece of 32 KiB. */
  HurraySliceRange rows[2] = {{8, 16, 1, 0}, {0, 1024, 1, 0}};
  hint_calls = hint_bytes = 0;
  assert_int_equal(hurray__slice_gather(&x.f, rows, &src, out, 8 * 4096, NULL), HURRAY_OK);
  assert_int_equal(hint_calls, 1);
  assert_int_equal(hint_bytes, 8 * 4096);
  /* Columns 0..511: one 2 KiB piece per row, below the threshold. */
  HurraySliceRange cols[2] = {{0, 64, 1, 0}, {0, 512, 1, 0}};
  hint_calls = 0;
  assert_int_equal(hurray__slice_gather(&x.f, cols, &src, out, 64 * 2048, NULL), HURRAY_OK);
  assert_int_equal(hint_calls, 0);
  /* Every other row: 64 pieces of 4 KiB, each announced. */
  HurraySliceRange every[2] = {{0, 64, 2, 0}, {0, 1024, 1, 0}};
  hint_calls = 0;
  assert_int_equal(hurray__slice_gather(&x.f, every, &src, out, 32 * 4096, NULL), HURRAY_OK);
  assert_int_equal(hint_calls, 32);
  free(buf);
  free(out);
  /* A piece of 2.5 MiB: announced in 1 MiB chunks, each before it is copied. */
  uint64_t big[2] = {640, 1024};
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, big, 1,
          (uint64_t[]){640 * 1024 * 4});
  buf = calloc(640 * 1024, 4);
  out = malloc(640 * 1024 * 4);
  for (size_t i = 0; i < 640 * 1024 * 4; i++) buf[i] = (uint8_t)i;
  HurraySliceSource bsrc = {buf, 640 * 1024 * 4, NULL, NULL, hint};
  HurraySliceRange all[2] = {{0, 640, 1, 0}, {0, 1024, 1, 0}};
  hint_calls = hint_bytes = 0;
  assert_int_equal(hurray__slice_gather(&x.f, all, &bsrc, out, 640 * 4096, NULL), HURRAY_OK);
  assert_int_equal(hint_calls, 3);
  assert_int_equal(hint_bytes, 640 * 4096);
  assert_memory_equal(out, buf, 640 * 4096);
  free(buf);
  free(out);
}

/* ---- empty selections and errors ----------------------------------------------------- */

static void test_empty(void **state) {
  (void)state;
  T t;
  t_make(&t, L_MORTON, HURRAY_DTYPE_FLOAT32);
  const void *bufs[1] = {t.buf};
  uint64_t n[2] = {9, 9}, bytes = 9;
  HurraySliceRange q[2] = {{3, 3, 1, 0}, {0, 10, 1, 0}};
  assert_int_equal(hurray_layout_slice_shape(&t.x.f, q, n, &bytes, NULL), HURRAY_OK);
  assert_int_equal(n[0], 0);
  assert_int_equal(n[1], 10);
  assert_int_equal(bytes, 0);
  /* No destination needed, nothing read (even from no buffer at all). */
  assert_int_equal(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, NULL, 0, NULL),
                   HURRAY_OK);
  q[0] = (HurraySliceRange){5, 2, 1, 0}; /* stop below start: empty too */
  assert_int_equal(hurray_layout_slice_shape(&t.x.f, q, n, &bytes, NULL), HURRAY_OK);
  assert_int_equal(n[0], 0);
  q[0] = (HurraySliceRange){6, 6, 1, 0}; /* start == size is allowed when empty */
  assert_int_equal(hurray_layout_slice_shape(&t.x.f, q, n, &bytes, NULL), HURRAY_OK);
  t_free(&t);
}

#define EXPECT(call, st_, field_)                                   \
  do {                                                              \
    HurrayError e_;                                                 \
    hurray_error_clear(&e_);                                        \
    HurrayStatus s_ = (call);                                       \
    if (s_ != (st_)) print_error("got %d: %s\n", s_, e_.message);   \
    assert_int_equal(s_, (st_));                                    \
    if ((field_) != NULL) assert_string_equal(e_.field, (field_)); \
  } while (0)

static void test_errors(void **state) {
  (void)state;
  T t;
  t_make(&t, L_ROW, HURRAY_DTYPE_FLOAT32); /* [6, 10] */
  const void *bufs[1] = {t.buf};
  uint8_t out[512];
  HurraySliceRange q[2] = {{0, 6, 1, 0}, {0, 10, 0, 0}};
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, out, sizeof out, &e_),
         HURRAY_ERR_INVALID_ARGUMENT, "ranges[1].step");
  q[1] = (HurraySliceRange){0, 11, 1, 0};
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, out, sizeof out, &e_),
         HURRAY_ERR_INDEX_OUT_OF_BOUNDS, "ranges[1].stop");
  q[1] = (HurraySliceRange){0, 10, 1, 0};
  q[0] = (HurraySliceRange){7, 7, 1, 0};
  EXPECT(hurray_layout_slice_shape(&t.x.f, q, NULL, NULL, &e_), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
         "ranges[0].start");
  {
    HurrayError e;
    assert_int_equal(hurray_layout_slice_shape(&t.x.f, q, NULL, NULL, &e),
                     HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_non_null(strstr(e.message, "start 7 is outside dimension 0 of size 6"));
  }
  q[0] = (HurraySliceRange){0, 6, 1, 0x2};
  EXPECT(hurray_layout_slice_shape(&t.x.f, q, NULL, NULL, &e_), HURRAY_ERR_INVALID_ARGUMENT,
         "ranges[0].flags");
  q[0] = (HurraySliceRange){0, 6, 1, 0};
  /* Destination one byte short, NULL destination, NULL ranges. */
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, out, 6 * 10 * 4 - 1, &e_),
         HURRAY_ERR_BUFFER_TOO_SMALL, "dst");
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, NULL, 240, &e_),
         HURRAY_ERR_NULL_POINTER, "dst");
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, NULL, out, 240, &e_),
         HURRAY_ERR_NULL_POINTER, NULL);
  EXPECT(hurray_layout_slice_to_row_major(NULL, bufs, NULL, q, out, 240, &e_),
         HURRAY_ERR_NULL_POINTER, NULL);
  /* A buffer too short for the last row: the first rows still copy. */
  uint64_t short_size = 5 * 40 + 8;
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, &short_size, q, out, 240, &e_),
         HURRAY_ERR_BUFFER_SIZE, "buffers[0]");
  HurraySliceRange top[2] = {{0, 5, 1, 0}, {0, 10, 1, 0}};
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, &short_size, top, out, 200, &e_),
         HURRAY_OK, NULL);
  /* No buffer at all. */
  t.x.f.buffer_count = 0;
  EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, out, 240, &e_),
         HURRAY_ERR_INVALID_ARGUMENT, "buffer_count");
  t.x.f.buffer_count = 1;
  /* A dynamic dimension. */
  t.x.shape[1] = HURRAY_DYNAMIC_DIM;
  EXPECT(hurray_layout_slice_shape(&t.x.f, q, NULL, NULL, &e_), HURRAY_ERR_INVALID_ARGUMENT,
         "shape");
  t.x.shape[1] = 10;
  /* Layouts that are not dense. */
  uint8_t not_dense[] = {HURRAY_LAYOUT_CSR, HURRAY_LAYOUT_COO, HURRAY_LAYOUT_BLOCK_PAGED,
                         HURRAY_LAYOUT_COMPOSITE, 0xF3};
  for (size_t i = 0; i < sizeof not_dense; i++) {
    t.x.f.layout.tag = not_dense[i];
    EXPECT(hurray_layout_slice_to_row_major(&t.x.f, bufs, NULL, q, out, 240, &e_),
           HURRAY_ERR_UNSUPPORTED, "layout_tag");
  }
  t.x.f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  /* A private element type without its extension section. */
  t.x.f.type_tag = 0xF1;
  EXPECT(hurray_layout_slice_shape(&t.x.f, q, NULL, NULL, &e_), HURRAY_ERR_UNSUPPORTED,
         "type_tag");
  t_free(&t);
}

/* A selection whose size does not fit in 64 bits is refused, not wrapped. */
static void test_huge(void **state) {
  (void)state;
  Fx x;
  uint64_t shape[3] = {UINT64_C(1) << 40, UINT64_C(1) << 40, 0};
  fx_init(&x, HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 3, shape, 1, NULL);
  HurraySliceRange q[3] = {{0, shape[0], 1, 0}, {0, shape[1], 1, 0}, {0, 0, 1, 0}};
  uint64_t n[3], bytes = 1;
  /* Zero elements whatever the product of the other counts. */
  assert_int_equal(hurray_layout_slice_shape(&x.f, q, n, &bytes, NULL), HURRAY_OK);
  assert_int_equal(bytes, 0);
  x.shape[2] = 1 << 20;
  q[2].stop = 1 << 20;
  EXPECT(hurray_layout_slice_shape(&x.f, q, NULL, NULL, &e_), HURRAY_ERR_INVALID_ARGUMENT,
         "ranges");
  /* A huge step on a short selection is fine: one element. */
  q[0] = (HurraySliceRange){5, shape[0], UINT64_MAX, 0};
  q[1] = (HurraySliceRange){0, 1, 1, 0};
  q[2] = (HurraySliceRange){0, 1, 1, 0};
  assert_int_equal(hurray_layout_slice_shape(&x.f, q, n, &bytes, NULL), HURRAY_OK);
  assert_int_equal(n[0], 1);
  assert_int_equal(bytes, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_layout_and_type),
      cmocka_unit_test(test_sub_byte_phases),
      cmocka_unit_test(test_scalar_and_rank1),
      cmocka_unit_test(test_reads_only_selected_bytes),
      cmocka_unit_test(test_mapping_hints),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_huge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
