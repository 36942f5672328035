/* Dense addressing (row/col-major, strided, tiled, Morton, Hilbert) and
 * hurray_layout_to_row_major for dense layouts (src/layout/address.c, copy.c). */
#include <stdlib.h>

#include "test_layout_fixture.h"

#define F32 HURRAY_DTYPE_FLOAT32

static int64_t offset_of(Fx *x, const uint64_t *idx) {
  int64_t off = 0;
  HurrayStatus st = hurray_layout_element_offset(&x->f, idx, &off, &x->e);
  if (st != HURRAY_OK) print_error("%s\n", x->e.message);
  assert_int_equal(st, HURRAY_OK);
  return off;
}

/* ---- spec examples ------------------------------------------------------------------ */

static void test_contiguous_and_strided(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 4}, 1, NULL);
  assert_int_equal(offset_of(&x, (uint64_t[]){1, 2}), 6); /* row-major.md */
  assert_int_equal(offset_of(&x, (uint64_t[]){2, 3}), 11);
  x.f.layout.tag = HURRAY_LAYOUT_COL_MAJOR;
  assert_int_equal(offset_of(&x, (uint64_t[]){1, 2}), 7); /* column-major.md */
  assert_int_equal(offset_of(&x, (uint64_t[]){2, 3}), 11);
  int64_t st[2] = {-4, 1};
  x.f.layout.tag = HURRAY_LAYOUT_STRIDED;
  x.f.layout.u.strided.strides = st;
  assert_int_equal(offset_of(&x, (uint64_t[]){2, 3}), -5); /* strided.md */
  assert_int_equal(offset_of(&x, (uint64_t[]){0, 0}), 0);
  /* A scalar is element 0. */
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1, NULL);
  int64_t off = 9;
  assert_int_equal(hurray_layout_element_offset(&x.f, NULL, &off, NULL), HURRAY_OK);
  assert_int_equal(off, 0);
}

static void test_tiled_examples(void **state) {
  (void)state;
  Fx x;
  uint64_t ts[2] = {2, 4};
  HurrayTiledLevel lv[2] = {{ts, 1, 1, NULL, NULL}};
  fx_init(&x, F32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){6, 8}, 1, NULL);
  x.f.layout.u.tiled.depth = 1;
  x.f.layout.u.tiled.levels = lv;
  assert_int_equal(offset_of(&x, (uint64_t[]){3, 5}), 29); /* tiled.md */
  assert_int_equal(offset_of(&x, (uint64_t[]){0, 0}), 0);
  assert_int_equal(offset_of(&x, (uint64_t[]){5, 7}), 47);
  lv[0].inner_layout = 2;
  assert_int_equal(offset_of(&x, (uint64_t[]){3, 5}), 27);
  /* Column-major tile grid: tile [1, 1] of a 3 x 2 grid is tile 1 + 1 * 3 = 4. */
  lv[0].outer_layout = 2;
  lv[0].inner_layout = 1;
  assert_int_equal(offset_of(&x, (uint64_t[]){3, 5}), 4 * 8 + 5);
  /* Recursive: [8, 8] / [4, 4] / [2, 2]. */
  uint64_t t4[2] = {4, 4}, t2[2] = {2, 2};
  lv[0] = (HurrayTiledLevel){t4, 1, 4, NULL, NULL};
  lv[1] = (HurrayTiledLevel){t2, 1, 1, NULL, NULL};
  fx_init(&x, F32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){8, 8}, 1, NULL);
  x.f.layout.u.tiled.depth = 2;
  x.f.layout.u.tiled.levels = lv;
  assert_int_equal(offset_of(&x, (uint64_t[]){3, 5}), 27);
  /* Strided outer and inner on [4, 4] / [2, 2]. */
  int64_t s12[2] = {1, 2};
  lv[0] = (HurrayTiledLevel){t2, 3, 1, s12, NULL};
  fx_init(&x, F32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){4, 4}, 1, NULL);
  x.f.layout.u.tiled.depth = 1;
  x.f.layout.u.tiled.levels = lv;
  assert_int_equal(offset_of(&x, (uint64_t[]){2, 3}), 13);
  lv[0] = (HurrayTiledLevel){t2, 1, 3, NULL, s12};
  assert_int_equal(offset_of(&x, (uint64_t[]){2, 3}), 14);
}

static void test_morton(void **state) {
  (void)state;
  Fx x;
  uint32_t bits[2] = {2, 2};
  fx_init(&x, F32, HURRAY_LAYOUT_MORTON, 2, (uint64_t[]){4, 4}, 1, NULL);
  x.f.layout.u.morton.bits = bits;
  assert_int_equal(offset_of(&x, (uint64_t[]){2, 3}), 14); /* morton.md */
  assert_int_equal(offset_of(&x, (uint64_t[]){3, 3}), 15);
  assert_int_equal(offset_of(&x, (uint64_t[]){1, 0}), 1);
  assert_int_equal(offset_of(&x, (uint64_t[]){0, 1}), 2);
  /* The literal formula with unequal bits (docs/internals/decisions.md § Morton addressing):
   * bit b of dim d goes to b * rank + d, so [1, 7] with bits [1, 3] lands at
   * 1+2+8+32 = 43 although the spec sizes the buffer at 2^4 = 16 elements. */
  bits[0] = 1;
  bits[1] = 3;
  x.shape[0] = 2;
  x.shape[1] = 8;
  assert_int_equal(offset_of(&x, (uint64_t[]){1, 7}), 43);
  uint64_t code;
  assert_int_equal(hurray_morton_encode(2, bits, (uint64_t[]){1, 7}, &code), HURRAY_OK);
  assert_int_equal(code, 43);
  /* Index bits beyond morton_bits are an error, as is a code beyond 64 bits. */
  assert_int_equal(hurray_morton_encode(2, bits, (uint64_t[]){2, 0}, &code),
                   HURRAY_ERR_INVALID_ARGUMENT);
  uint32_t wide[2] = {40, 40};
  assert_int_equal(hurray_morton_encode(2, wide, (uint64_t[]){1ull << 39, 0}, &code),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_morton_encode(2, wide, (uint64_t[]){1ull << 31, 0}, &code), HURRAY_OK);
  assert_int_equal(code, 1ull << 62);
  assert_int_equal(hurray_morton_encode(2, wide, NULL, &code), HURRAY_ERR_NULL_POINTER);
  /* Interleaving is a bijection for equal bits: 3-D, 2 bits each. */
  uint32_t b3[3] = {2, 2, 2};
  uint8_t seen[64] = {0};
  for (uint64_t i = 0; i < 4; i++)
    for (uint64_t j = 0; j < 4; j++)
      for (uint64_t k = 0; k < 4; k++) {
        assert_int_equal(hurray_morton_encode(3, b3, (uint64_t[]){i, j, k}, &code), HURRAY_OK);
        assert_true(code < 64);
        assert_int_equal(seen[code], 0);
        seen[code] = 1;
        assert_int_equal(code & 1, i & 1);
        assert_int_equal((code >> 5) & 1, (k >> 1) & 1); /* b 1, d 2 → bit 1*3+2 */
      }
}

static void test_hilbert_table(void **state) {
  (void)state;
  /* hilbert.md § Conformance Check, r = 2, p = 2. */
  static const uint64_t table[16][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 2}, {0, 3},
                                        {1, 3}, {1, 2}, {2, 2}, {2, 3}, {3, 3}, {3, 2},
                                        {3, 1}, {2, 1}, {2, 0}, {3, 0}};
  Fx x;
  fx_init(&x, F32, HURRAY_LAYOUT_HILBERT, 2, (uint64_t[]){4, 4}, 1, NULL);
  x.f.layout.u.hilbert.order = 2;
  x.f.layout.u.hilbert.rank = 2;
  for (uint64_t h = 0; h < 16; h++) {
    uint64_t got, xy[2];
    assert_int_equal(hurray_hilbert_encode(2, 2, table[h], &got), HURRAY_OK);
    assert_int_equal(got, h);
    assert_int_equal(offset_of(&x, table[h]), (int64_t)h);
    assert_int_equal(hurray_hilbert_decode(2, 2, h, xy), HURRAY_OK);
    assert_int_equal(xy[0], table[h][0]);
    assert_int_equal(xy[1], table[h][1]);
  }
}

/* Every Hilbert curve is a bijection whose steps move by 1 along one axis. */
static void test_hilbert_properties(void **state) {
  (void)state;
  const uint32_t cases[][2] = {{2, 1}, {2, 3}, {2, 5}, {3, 1}, {3, 2}, {3, 3}, {4, 2}, {5, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    uint32_t r = cases[c][0], p = cases[c][1];
    uint64_t n = 1ull << (r * p);
    uint64_t prev[8] = {0}, cur[8], back;
    for (uint64_t h = 0; h < n; h++) {
      assert_int_equal(hurray_hilbert_decode(r, p, h, cur), HURRAY_OK);
      assert_int_equal(hurray_hilbert_encode(r, p, cur, &back), HURRAY_OK);
      assert_int_equal(back, h);
      if (h > 0) {
        uint64_t moved = 0;
        for (uint32_t d = 0; d < r; d++) {
          uint64_t diff = cur[d] > prev[d] ? cur[d] - prev[d] : prev[d] - cur[d];
          assert_true(diff <= 1);
          moved += diff;
        }
        assert_int_equal(moved, 1);
      } else {
        for (uint32_t d = 0; d < r; d++) assert_int_equal(cur[d], 0);
      }
      memcpy(prev, cur, sizeof cur);
    }
  }
  uint64_t out, c2[2] = {4, 0};
  assert_int_equal(hurray_hilbert_encode(2, 2, c2, &out), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_hilbert_encode(0, 2, c2, &out), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_hilbert_encode(2, 0, c2, &out), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_hilbert_encode(5, 13, c2, &out), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_hilbert_decode(2, 2, 16, c2), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_hilbert_decode(2, 2, 1, NULL), HURRAY_ERR_NULL_POINTER);
  /* Full width: rank 2, order 32 and rank 1, order 64 round-trip. */
  uint64_t big[2] = {0xFFFFFFFFu, 0x12345678u}, got[2];
  assert_int_equal(hurray_hilbert_encode(2, 32, big, &out), HURRAY_OK);
  assert_int_equal(hurray_hilbert_decode(2, 32, out, got), HURRAY_OK);
  assert_int_equal(got[0], big[0]);
  assert_int_equal(got[1], big[1]);
  uint64_t one = UINT64_MAX - 5;
  assert_int_equal(hurray_hilbert_encode(1, 64, &one, &out), HURRAY_OK);
  assert_int_equal(hurray_hilbert_decode(1, 64, out, got), HURRAY_OK);
  assert_int_equal(got[0], one);
}

static void test_element_offset_errors(void **state) {
  (void)state;
  Fx x;
  int64_t off;
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 4}, 1, NULL);
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){2, 4}, &off, &x.e),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_string_equal(x.e.field, "index[1]");
  assert_int_equal(hurray_layout_element_offset(&x.f, NULL, &off, &x.e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_layout_element_offset(NULL, (uint64_t[]){0, 0}, &off, NULL),
                   HURRAY_ERR_NULL_POINTER);
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){0, 0}, &off, &x.e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  x.shape[0] = 3;
  x.f.layout.tag = HURRAY_LAYOUT_COO;
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){0, 0}, &off, &x.e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  x.f.layout.tag = HURRAY_LAYOUT_STRIDED; /* strides missing */
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){0, 0}, &off, &x.e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(x.e.field, "layout.strides");
  int64_t huge[2] = {INT64_MAX, 1};
  x.f.layout.u.strided.strides = huge;
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){2, 0}, &off, &x.e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){1, 3}, &off, &x.e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){1, 0}, &off, &x.e), HURRAY_OK);
  assert_int_equal(off, INT64_MAX);
  x.f.layout.tag = 0xF0;
  assert_int_equal(hurray_layout_element_offset(&x.f, (uint64_t[]){0, 0}, &off, &x.e),
                   HURRAY_ERR_INVALID_LAYOUT);
}

/* ---- to_row_major: fuzz against element_offset -------------------------------------------- */

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}
static uint64_t rndn(uint64_t n) { return rnd() % n; }

/* Independent reference of the packing rules (element-types.md § Encoding). */
static unsigned ref_bits(uint8_t type) {
  if (type == 0xF1) return 4; /* the private type of these tests */
  return hurray_dtype_info(type)->bit_width;
}

static void ref_get(uint8_t type, const uint8_t *buf, int64_t bo, int64_t off, uint8_t *out) {
  unsigned bits = ref_bits(type);
  if (bits >= 8) {
    memcpy(out, buf + bo + off * (int64_t)(bits / 8), bits / 8);
    return;
  }
  if (bits == 6) {
    int64_t g = off >= 0 ? off / 4 : -((-off + 3) / 4);
    int64_t j = off - 4 * g;
    const uint8_t *b = buf + bo + 3 * g;
    switch (j) {
      case 0: out[0] = b[0] & 0x3F; break;
      case 1: out[0] = (uint8_t)((b[0] >> 6) | ((b[1] & 0x0F) << 2)); break;
      case 2: out[0] = (uint8_t)((b[1] >> 4) | ((b[2] & 0x03) << 4)); break;
      default: out[0] = b[2] >> 2; break;
    }
    return;
  }
  int64_t per = 8 / bits;
  int64_t byte = off >= 0 ? off / per : -((-off + per - 1) / per);
  int64_t j = off - per * byte;
  out[0] = (uint8_t)((buf[bo + byte] >> (j * bits)) & ((1u << bits) - 1));
}

static void ref_put(uint8_t type, uint8_t *buf, uint64_t e, const uint8_t *v) {
  unsigned bits = ref_bits(type);
  if (bits >= 8) {
    memcpy(buf + e * (bits / 8), v, bits / 8);
  } else if (bits == 6) {
    uint8_t *b = buf + (e / 4) * 3;
    switch (e % 4) {
      case 0: b[0] |= v[0]; break;
      case 1: b[0] |= (uint8_t)(v[0] << 6); b[1] |= (uint8_t)(v[0] >> 2); break;
      case 2: b[1] |= (uint8_t)(v[0] << 4); b[2] |= (uint8_t)(v[0] >> 4); break;
      default: b[2] |= (uint8_t)(v[0] << 2); break;
    }
  } else {
    buf[e / (8 / bits)] |= (uint8_t)(v[0] << ((e % (8 / bits)) * bits));
  }
}

static uint64_t packed_size(uint8_t type, uint64_t n) {
  unsigned bits = ref_bits(type);
  if (bits == 6) return (n + 3) / 4 * 3;
  if (bits < 8) return (n * bits + 7) / 8;
  return n * (bits / 8);
}

typedef struct Dense {
  Fx x;
  int64_t strides[8];
  uint64_t ts[8][8];
  int64_t os[8][8], is[8][8];
  HurrayTiledLevel lv[8];
  uint32_t bits[8];
  HurrayExtensionType ext;
} Dense;

static void random_dense(Dense *d) {
  static const uint8_t types[] = {HURRAY_DTYPE_FLOAT32,     HURRAY_DTYPE_INT8,
                                  HURRAY_DTYPE_BOOL,        HURRAY_DTYPE_INT4,
                                  HURRAY_DTYPE_UINT2,       HURRAY_DTYPE_FLOAT6_E2M3,
                                  HURRAY_DTYPE_COMPLEX128,  HURRAY_DTYPE_FLOAT16,
                                  HURRAY_DTYPE_FLOAT6_E3M2, 0xF1};
  static const uint8_t layouts[] = {HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_COL_MAJOR,
                                    HURRAY_LAYOUT_STRIDED,   HURRAY_LAYOUT_TILED,
                                    HURRAY_LAYOUT_MORTON,    HURRAY_LAYOUT_HILBERT};
  uint8_t type = types[rndn(sizeof types)];
  uint8_t layout = layouts[rndn(sizeof layouts)];
  uint32_t r = (uint32_t)(layout == HURRAY_LAYOUT_HILBERT ? 2 + rndn(2) : rndn(4));
  if (r == 0 && layout != HURRAY_LAYOUT_ROW_MAJOR) r = 1;
  uint64_t shape[8];
  for (uint32_t k = 0; k < r; k++) shape[k] = 1 + rndn(6);
  Fx *x = &d->x;
  if (layout == HURRAY_LAYOUT_HILBERT) {
    uint32_t p = (uint32_t)(1 + rndn(r == 2 ? 3 : 2));
    for (uint32_t k = 0; k < r; k++) shape[k] = 1ull << p;
    fx_init(x, type, layout, r, shape, 1, NULL);
    x->f.layout.u.hilbert.order = p;
    x->f.layout.u.hilbert.rank = r;
  } else {
    fx_init(x, type, layout, r, shape, 1, NULL);
  }
  if (type == 0xF1) {
    memset(&d->ext, 0, sizeof d->ext);
    d->ext.bit_width = 4;
    d->ext.packing_factor = 2;
    x->f.extension_type = &d->ext;
  }
  switch (layout) {
    case HURRAY_LAYOUT_STRIDED:
      for (uint32_t k = 0; k < r; k++) d->strides[k] = (int64_t)rndn(13) - 6;
      x->f.layout.u.strided.strides = d->strides;
      break;
    case HURRAY_LAYOUT_TILED: {
      uint32_t depth = (uint32_t)(1 + rndn(3));
      for (uint32_t L = 0; L < depth; L++) {
        HurrayTiledLevel *t = &d->lv[L];
        for (uint32_t k = 0; k < r; k++) {
          d->ts[L][k] = 1 + rndn(4);
          d->os[L][k] = (int64_t)rndn(9) - 4;
          d->is[L][k] = (int64_t)rndn(9) - 4;
        }
        t->tile_shape = d->ts[L];
        t->outer_layout = (uint8_t)(1 + rndn(3));
        t->inner_layout = L + 1 < depth ? 4 : (uint8_t)(1 + rndn(3));
        t->outer_strides = t->outer_layout == 3 ? d->os[L] : NULL;
        t->inner_strides = t->inner_layout == 3 ? d->is[L] : NULL;
      }
      x->f.layout.u.tiled.depth = depth;
      x->f.layout.u.tiled.levels = d->lv;
      break;
    }
    case HURRAY_LAYOUT_MORTON: {
      uint32_t b = 3; /* equal bits: the formula stays inside 2^(sum bits) */
      for (uint32_t k = 0; k < r; k++) d->bits[k] = b;
      x->f.layout.u.morton.bits = d->bits;
      break;
    }
    default:
      break;
  }
}

static void test_to_row_major_fuzz(void **state) {
  (void)state;
  Dense d;
  for (int iter = 0; iter < 400; iter++) {
    random_dense(&d);
    Fx *x = &d.x;
    uint32_t r = x->f.rank;
    uint64_t vol = 1;
    for (uint32_t k = 0; k < r; k++) vol *= x->shape[k];
    /* Smallest offset, to place byte_offset so that negative strides fit. */
    uint64_t idx[8] = {0};
    int64_t mn = 0;
    for (uint64_t e = 0; e < vol; e++) {
      int64_t off = offset_of(x, idx);
      if (off < mn) mn = off;
      for (uint32_t k = r; k-- > 0;) {
        if (++idx[k] < x->shape[k]) break;
        idx[k] = 0;
      }
    }
    unsigned bits = ref_bits(x->f.type_tag);
    uint64_t bo = bits >= 8 ? (uint64_t)(-mn) * (bits / 8)
                  : bits == 6 ? (uint64_t)((-mn + 3) / 4) * 3
                              : (uint64_t)((-mn + (8 / bits) - 1) / (8 / bits));
    bo += rndn(3); /* extra slack before element [0...0] */
    x->f.byte_offset = bo;
    uint64_t need;
    HurrayStatus st;
    /* Padded tiles with negative strides may reach further back than any
     * element: grow byte_offset until the validator's rule is met. */
    while ((st = hurray_layout_min_buffer_size(&x->f, 0, &need, &x->e)) ==
               HURRAY_ERR_INVALID_LAYOUT &&
           strcmp(x->e.field, "byte_offset") == 0) {
      assert_int_equal(x->f.layout.tag, HURRAY_LAYOUT_TILED);
      bo = ++x->f.byte_offset;
    }
    if (st != HURRAY_OK) print_error("%s\n", x->e.message);
    assert_int_equal(st, HURRAY_OK);
    x->bufs[0].byte_size = need;
    FX_ACCEPT(x, HURRAY_DECODE_STRICT);
    uint8_t *src = malloc(need + 1);
    for (uint64_t i = 0; i < need; i++) src[i] = (uint8_t)rnd();
    uint64_t dsize = packed_size(x->f.type_tag, vol);
    uint8_t *want = calloc(1, dsize + 1), *got = malloc(dsize + 1);
    memset(got, 0xA5, dsize + 1);
    memset(idx, 0, sizeof idx);
    for (uint64_t e = 0; e < vol; e++) {
      uint8_t v[16];
      ref_get(x->f.type_tag, src, (int64_t)bo, offset_of(x, idx), v);
      ref_put(x->f.type_tag, want, e, v);
      for (uint32_t k = r; k-- > 0;) {
        if (++idx[k] < x->shape[k]) break;
        idx[k] = 0;
      }
    }
    const void *bufs[1] = {src};
    st = hurray_layout_to_row_major(&x->f, bufs, NULL, got, dsize, &x->e);
    if (st != HURRAY_OK) print_error("iter %d: %s\n", iter, x->e.message);
    assert_int_equal(st, HURRAY_OK);
    if (memcmp(want, got, dsize) != 0)
      print_error("iter %d layout 0x%02X type 0x%02X rank %u\n", iter, x->f.layout.tag,
                  x->f.type_tag, r);
    assert_memory_equal(want, got, dsize);
    assert_int_equal(got[dsize], 0xA5); /* nothing written past dst_size */
    /* One byte short of the destination. */
    if (dsize > 0)
      assert_int_equal(hurray_layout_to_row_major(&x->f, bufs, NULL, got, dsize - 1, NULL),
                       HURRAY_ERR_BUFFER_TOO_SMALL);
    free(src);
    free(want);
    free(got);
  }
}

static void test_to_row_major_bounds(void **state) {
  (void)state;
  Fx x;
  uint8_t src[64], dst[64];
  for (int i = 0; i < 64; i++) src[i] = (uint8_t)i;
  const void *bufs[1] = {src};
  /* Row-major int8 [2, 3] at byte_offset 4: a copy of bytes 4..9. */
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){2, 3}, 1,
          (uint64_t[]){10});
  x.f.byte_offset = 4;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 6, &x.e), HURRAY_OK);
  assert_memory_equal(dst, src + 4, 6);
  uint64_t sizes[1] = {9};
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, sizes, dst, 6, &x.e),
                   HURRAY_ERR_BUFFER_SIZE);
  assert_string_equal(x.e.field, "buffers[0]");
  /* Column-major transposes. */
  x.f.layout.tag = HURRAY_LAYOUT_COL_MAJOR;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 6, &x.e), HURRAY_OK);
  const uint8_t colmajor[6] = {4, 6, 8, 5, 7, 9};
  assert_memory_equal(dst, colmajor, 6);
  /* int4 [3] row-major: the high nibble after the last element is cleared. */
  src[0] = 0x21;
  src[1] = 0xF3;
  fx_init(&x, HURRAY_DTYPE_UINT4, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){3}, 1,
          (uint64_t[]){2});
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 2, &x.e), HURRAY_OK);
  assert_int_equal(dst[0], 0x21);
  assert_int_equal(dst[1], 0x03);
  /* 6-bit: spec example 1, 2, 4, 8 packs as 81 40 20; keep 3 of them. */
  src[0] = 0x81;
  src[1] = 0x40;
  src[2] = 0x20;
  fx_init(&x, HURRAY_DTYPE_FLOAT6_E2M3, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){3}, 1,
          (uint64_t[]){3});
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 3, &x.e), HURRAY_OK);
  assert_int_equal(dst[0], 0x81);
  assert_int_equal(dst[1], 0x40);
  assert_int_equal(dst[2], 0x00);
  /* Strided 6-bit with stride -1: element e sits at offset -e, i.e. slot 0 of
   * the group at byte_offset, then slots 3, 2, 1 of the group before it. */
  int64_t neg[1] = {-1};
  fx_init(&x, HURRAY_DTYPE_FLOAT6_E2M3, HURRAY_LAYOUT_STRIDED, 1, (uint64_t[]){4}, 1,
          (uint64_t[]){6});
  x.f.layout.u.strided.strides = neg;
  x.f.byte_offset = 0; /* offset -1 would be before the buffer */
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 3, &x.e),
                   HURRAY_ERR_BUFFER_SIZE);
  const uint8_t g[6] = {0x81, 0x40, 0x20, 0x05, 0x00, 0x00}; /* [1, 2, 4, 8] [5, 0, 0, 0] */
  memcpy(src, g, 6);
  x.f.byte_offset = 3;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 3, &x.e), HURRAY_OK);
  uint8_t vals[4];
  for (int e = 0; e < 4; e++) ref_get(HURRAY_DTYPE_FLOAT6_E2M3, dst, 0, e, &vals[e]);
  const uint8_t want[4] = {5, 8, 4, 2};
  assert_memory_equal(vals, want, 4);
  /* Morton with unequal bits: the literal formula reads past 2^(sum bits). */
  uint32_t bits[2] = {1, 3};
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_MORTON, 2, (uint64_t[]){2, 8}, 1,
          (uint64_t[]){16});
  x.f.layout.u.morton.bits = bits;
  FX_ACCEPT(&x, HURRAY_DECODE_STRICT);
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 16, &x.e),
                   HURRAY_ERR_BUFFER_SIZE);
  x.bufs[0].byte_size = 44; /* max code 43 */
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 16, &x.e), HURRAY_OK);
  /* A wide private type (256 bits), column-major so each element is moved alone. */
  HurrayExtensionType wide;
  memset(&wide, 0, sizeof wide);
  wide.bit_width = 256;
  wide.packing_factor = 1;
  uint8_t wsrc[128], wdst[128];
  for (int i = 0; i < 128; i++) wsrc[i] = (uint8_t)(i * 7);
  const void *wb[1] = {wsrc};
  fx_init(&x, 0xF2, HURRAY_LAYOUT_COL_MAJOR, 2, (uint64_t[]){2, 2}, 1, (uint64_t[]){128});
  x.f.extension_type = &wide;
  FX_ACCEPT(&x, HURRAY_DECODE_STRICT);
  assert_int_equal(hurray_layout_to_row_major(&x.f, wb, NULL, wdst, 128, &x.e), HURRAY_OK);
  assert_memory_equal(wdst + 32, wsrc + 64, 32); /* row-major [0, 1] = col-major element 2 */
  assert_memory_equal(wdst + 64, wsrc + 32, 32);
  /* Errors. */
  fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4}, 1, (uint64_t[]){4});
  x.f.buffer_count = 256;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 4, &x.e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  x.f.buffer_count = 1;
  assert_int_equal(hurray_layout_to_row_major(&x.f, NULL, NULL, dst, 4, &x.e),
                   HURRAY_ERR_NULL_POINTER);
  const void *nullbuf[1] = {NULL};
  assert_int_equal(hurray_layout_to_row_major(&x.f, nullbuf, NULL, dst, 4, &x.e),
                   HURRAY_ERR_NULL_POINTER);
  x.f.buffer_count = 0;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 4, &x.e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  x.f.buffer_count = 1;
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 4, &x.e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  x.shape[0] = 4;
  x.f.type_tag = 0x30;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 4, &x.e),
                   HURRAY_ERR_UNSUPPORTED);
  x.f.type_tag = HURRAY_DTYPE_INT8;
  x.shape[0] = 0; /* empty: nothing read, dst may be NULL */
  assert_int_equal(hurray_layout_to_row_major(&x.f, nullbuf, (uint64_t[]){0}, NULL, 0, &x.e),
                   HURRAY_OK);
  fx_init(&x, F32, HURRAY_LAYOUT_BLOCK_PAGED, 3, (uint64_t[]){1, 1, 1}, 3, NULL);
  x.f.layout.u.block_paged.page_size = 1;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 4, &x.e),
                   HURRAY_ERR_UNSUPPORTED);
  fx_init(&x, F32, HURRAY_LAYOUT_COMPOSITE, 1, (uint64_t[]){1}, 0, NULL);
  x.f.layout.u.composite.rule = HURRAY_COMPOSITE_GROUP;
  assert_int_equal(hurray_layout_to_row_major(&x.f, bufs, NULL, dst, 4, &x.e),
                   HURRAY_ERR_UNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_contiguous_and_strided),
      cmocka_unit_test(test_tiled_examples),
      cmocka_unit_test(test_morton),
      cmocka_unit_test(test_hilbert_table),
      cmocka_unit_test(test_hilbert_properties),
      cmocka_unit_test(test_element_offset_errors),
      cmocka_unit_test(test_to_row_major_fuzz),
      cmocka_unit_test(test_to_row_major_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
