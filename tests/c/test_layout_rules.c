/* Layout rules of hurray__layout_validate: rank, payload, composite head,
 * buffer counts, byte_offset and minimum buffer sizes (src/layout/validate.c). */
#include "test_layout_fixture.h"

#define F32 HURRAY_DTYPE_FLOAT32
#define ANY ~0ull
#define S HURRAY_DECODE_STRICT
#define P HURRAY_DECODE_PERMISSIVE

/* ---- rank rules ----------------------------------------------------------------- */

static void test_scalar_rules(void **state) {
  (void)state;
  Fx x;
  uint64_t four = 4;
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 0, NULL, 1, &four);
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 3;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", 20 + 8 + 1);
  const uint8_t not_scalar[] = {HURRAY_LAYOUT_COL_MAJOR, HURRAY_LAYOUT_STRIDED,
                                HURRAY_LAYOUT_TILED,     HURRAY_LAYOUT_MORTON,
                                HURRAY_LAYOUT_COO,       HURRAY_LAYOUT_CSR,
                                HURRAY_LAYOUT_CSF,       HURRAY_LAYOUT_BLOCK_PAGED};
  for (size_t i = 0; i < sizeof not_scalar; i++) {
    fx_init(&x, F32, not_scalar[i], 0, NULL, 1, (uint64_t[]){4});
    FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "rank", 16);
  }
  /* A composite head is virtual: a rank-0 group head is fine. */
  fx_init(&x, F32, HURRAY_LAYOUT_COMPOSITE, 0, NULL, 0, NULL);
  x.f.layout.u.composite.rule = HURRAY_COMPOSITE_GROUP;
  x.f.layout.u.composite.member_count = 2;
  FX_ACCEPT(&x, S);
}

static void test_sparse_ranks(void **state) {
  (void)state;
  Fx x;
  uint64_t sh[4] = {3, 3, 3, 3};
  uint64_t sz[9] = {0};
  for (uint32_t r = 1; r <= 4; r++) {
    fx_init(&x, F32, HURRAY_LAYOUT_CSR, r, sh, 3, (uint64_t[]){0, 0, 32});
    if (r == 2) FX_ACCEPT(&x, S);
    else FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "rank", 16);
    fx_init(&x, F32, HURRAY_LAYOUT_CSC, r, sh, 3, (uint64_t[]){0, 0, 32});
    if (r == 2) FX_ACCEPT(&x, S);
    else FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "rank", 16);
  }
  static const uint32_t mo[4] = {0, 1, 2, 3};
  for (uint32_t r = 1; r <= 4; r++) {
    for (int i = 0; i < 9; i++) sz[i] = i == 1 ? 16 : 8;
    fx_init(&x, F32, HURRAY_LAYOUT_CSF, r, sh, 2 * r + 1, sz);
    x.f.layout.u.csf.mode_order = mo;
    if (r >= 3) FX_ACCEPT(&x, S);
    else FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "rank", 16);
  }
  fx_init(&x, F32, HURRAY_LAYOUT_COO, 1, sh, 2, NULL);
  FX_ACCEPT(&x, S);
  x.f.layout.u.coo.is_sorted = 2;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.is_sorted", 20 + 8 + 8 + 8);
  for (uint32_t r = 2; r <= 4; r++) {
    fx_init(&x, F32, HURRAY_LAYOUT_BLOCK_PAGED, r, (uint64_t[]){0, 0, 0, 0}, 3,
            (uint64_t[]){0, 0, 4});
    x.f.layout.u.block_paged.page_size = 1;
    if (r == 3) FX_ACCEPT(&x, S);
    else FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "rank", 16);
  }
}

/* ---- payload semantics ---------------------------------------------------------- */

static void test_strided_payload(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, F32, HURRAY_LAYOUT_STRIDED, 2, (uint64_t[]){3, 4}, 1, (uint64_t[]){48});
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.strides", 44);
  int64_t st[2] = {4, 1};
  x.f.layout.u.strided.strides = st;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 47;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", 44 + 16 + 1);
  /* Reversed rows: offsets -8..3, so byte_offset must reach 8 elements back. */
  st[0] = -4;
  x.f.byte_offset = 32;
  x.bufs[0].byte_size = 48;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 47;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  x.bufs[0].byte_size = 100;
  x.f.byte_offset = 28;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "byte_offset", 36);
  /* One byte short of the reach: int8, stride -1 needs byte_offset >= 1. */
  Fx y;
  int64_t back[1] = {-1};
  fx_init(&y, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_STRIDED, 1, (uint64_t[]){2}, 1, (uint64_t[]){2});
  y.f.layout.u.strided.strides = back;
  FX_REJECT(&y, S, HURRAY_ERR_INVALID_LAYOUT, "byte_offset", 28);
  y.f.byte_offset = 1;
  FX_ACCEPT(&y, S);
  y.bufs[0].byte_size = 1;
  FX_REJECT(&y, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* Broadcast: zero strides address one element. */
  st[0] = 0;
  st[1] = 0;
  x.f.byte_offset = 0;
  x.bufs[0].byte_size = 4;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 3;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* Offsets that do not fit in 64 bits. */
  st[0] = INT64_MAX;
  x.bufs[0].byte_size = UINT64_MAX;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout", 44);
  st[0] = INT64_MAX / 2; /* the offsets fit, their bytes do not */
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "buffers[0]", 44);
}

static void test_tiled_payload(void **state) {
  (void)state;
  Fx x;
  uint64_t ts0[2] = {2, 4}, ts1[2] = {1, 2};
  int64_t os[2] = {1, 2};
  HurrayTiledLevel lv[9];
  for (int i = 0; i < 9; i++) {
    lv[i] = (HurrayTiledLevel){ts1, 1, 4, NULL, NULL};
  }
  lv[0] = (HurrayTiledLevel){ts0, 1, 1, NULL, NULL};
  fx_init(&x, F32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){6, 8}, 1, (uint64_t[]){192});
  x.f.layout.u.tiled.depth = 1;
  x.f.layout.u.tiled.levels = lv;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 191;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* Padded boundary tiles: [5, 7] still needs the full 3 x 2 grid. */
  x.shape[0] = 5;
  x.shape[1] = 7;
  x.bufs[0].byte_size = 192;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 191;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  ts0[1] = 0;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].tile_shape[1]", 44 + 8);
  ts0[1] = 4;
  lv[0].outer_layout = 4;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].outer_layout", 44 + 16);
  lv[0].outer_layout = 3;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].outer_strides", 44 + 20);
  lv[0].outer_strides = os;
  x.bufs[0].byte_size = 1000;
  FX_ACCEPT(&x, S);
  lv[0].outer_layout = 1; /* strides of a non-strided level are ignored */
  FX_ACCEPT(&x, S);
  lv[0].outer_strides = NULL;
  lv[0].inner_layout = 3;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].inner_strides", 44 + 20);
  lv[0].inner_layout = 5;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].inner_layout", 44 + 17);
  lv[0].inner_layout = 4; /* nested on the last level */
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].inner_layout", 44 + 17);
  /* Two levels: [8, 8] / [4, 4] / [2, 2]. */
  uint64_t t4[2] = {4, 4}, t2[2] = {2, 2};
  lv[0] = (HurrayTiledLevel){t4, 1, 4, NULL, NULL};
  lv[1] = (HurrayTiledLevel){t2, 1, 1, NULL, NULL};
  fx_init(&x, F32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){8, 8}, 1, (uint64_t[]){256});
  x.f.layout.u.tiled.depth = 2;
  x.f.layout.u.tiled.levels = lv;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 255;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  lv[0].inner_layout = 1; /* a level that is not the last must nest */
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[0].inner_layout", ANY);
  lv[0].inner_layout = 4;
  t2[0] = 0; /* level 1 starts after level 0's 8r + 4 bytes */
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled[1].tile_shape[0]", 44 + 20);
  /* Inner tiles that do not divide the outer tile: 3 x 3 inside 4 x 4 pads to
   * 2 x 2 inner tiles of 9, so one outer tile spans 36 elements. */
  t2[0] = 3;
  t2[1] = 3;
  fx_init(&x, F32, HURRAY_LAYOUT_TILED, 2, (uint64_t[]){4, 4}, 1, (uint64_t[]){36 * 4});
  x.f.layout.u.tiled.depth = 2;
  x.f.layout.u.tiled.levels = lv;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 36 * 4 - 1;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* Depth 0 and 9 are outside 1..8. */
  x.f.layout.u.tiled.depth = 0;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled", ANY);
  for (int i = 0; i < 9; i++) lv[i] = (HurrayTiledLevel){t2, 1, 4, NULL, NULL};
  lv[8].inner_layout = 1;
  x.f.layout.u.tiled.depth = 9;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.tiled", ANY);
  lv[7].inner_layout = 1;
  x.f.layout.u.tiled.depth = 8;
  x.bufs[0].byte_size = 1u << 20;
  FX_ACCEPT(&x, S);
}

static void test_morton_payload(void **state) {
  (void)state;
  Fx x;
  uint32_t bits[2] = {2, 2};
  fx_init(&x, F32, HURRAY_LAYOUT_MORTON, 2, (uint64_t[]){4, 4}, 1, (uint64_t[]){64});
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.morton_bits", 44);
  x.f.layout.u.morton.bits = bits;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 63;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", 44 + 8 + 1);
  x.shape[1] = 5;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.morton_bits[1]", 48);
  x.shape[1] = 3; /* padding: 2^(2+2) elements still required */
  x.bufs[0].byte_size = 64;
  FX_ACCEPT(&x, S);
  bits[0] = 0;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.morton_bits[0]", 44);
  /* Unequal bits: 2^(1+3) = 16 elements (see docs/reference/layouts.md for the defect). */
  bits[0] = 1;
  bits[1] = 3;
  x.shape[0] = 2;
  x.shape[1] = 8;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 63;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* 2^(64+1) elements cannot exist. */
  bits[0] = 64;
  bits[1] = 1;
  x.shape[1] = 2;
  x.bufs[0].byte_size = UINT64_MAX;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout", 44);
  /* A dynamic dimension skips the bound and the size checks. */
  bits[0] = 2;
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  x.bufs[0].byte_size = 0;
  FX_ACCEPT(&x, S);
}

static void test_hilbert_payload(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, F32, HURRAY_LAYOUT_HILBERT, 2, (uint64_t[]){4, 4}, 1, (uint64_t[]){64});
  x.f.layout.u.hilbert.order = 2;
  x.f.layout.u.hilbert.rank = 2;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 63;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  x.bufs[0].byte_size = 64;
  x.shape[1] = 8;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "shape[1]", 28);
  x.shape[1] = HURRAY_DYNAMIC_DIM; /* resolved later */
  FX_ACCEPT(&x, S);
  x.shape[1] = 4;
  x.f.layout.u.hilbert.order = 0;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.hilbert_order", 44);
  x.f.layout.u.hilbert.order = 64;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.hilbert_order", 44);
  x.f.layout.u.hilbert.order = 2;
  x.f.layout.u.hilbert.rank = 3;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.hilbert_rank", 48);
  fx_init(&x, F32, HURRAY_LAYOUT_HILBERT, 1, (uint64_t[]){4}, 1, (uint64_t[]){16});
  x.f.layout.u.hilbert.order = 2;
  x.f.layout.u.hilbert.rank = 1;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.hilbert_rank", 36 + 4);
  /* 3-D, order 1: 8 elements. */
  fx_init(&x, F32, HURRAY_LAYOUT_HILBERT, 3, (uint64_t[]){2, 2, 2}, 1, (uint64_t[]){32});
  x.f.layout.u.hilbert.order = 1;
  x.f.layout.u.hilbert.rank = 3;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 31;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* 2^(2 * 32) elements do not fit. */
  fx_init(&x, HURRAY_DTYPE_BOOL, HURRAY_LAYOUT_HILBERT, 2,
          (uint64_t[]){1ull << 32, 1ull << 32}, 1, (uint64_t[]){UINT64_MAX});
  x.f.layout.u.hilbert.order = 32;
  x.f.layout.u.hilbert.rank = 2;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "buffers[0]", ANY);
}

static void test_csf_mode_order(void **state) {
  (void)state;
  Fx x;
  uint32_t mo[3] = {2, 0, 1};
  fx_init(&x, F32, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4}, 7,
          (uint64_t[]){0, 16, 0, 8, 0, 8, 0});
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.mode_order", 52 + 8);
  x.f.layout.u.csf.mode_order = mo;
  FX_ACCEPT(&x, S);
  mo[2] = 0;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.mode_order[2]", 52 + 16);
  mo[2] = 3;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.mode_order[2]", 52 + 16);
  FX_ACCEPT(&x, P); /* permissive keeps a bad permutation */
}

static void test_block_paged_payload(void **state) {
  (void)state;
  Fx x;
  /* block-paged.md example: f16, 5 pages of 4 tokens, 2 heads x 8. */
  fx_init(&x, HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, 3, (uint64_t[]){9, 2, 8}, 3,
          (uint64_t[]){640, 12, 12});
  x.f.layout.u.block_paged.page_size = 4;
  x.f.layout.u.block_paged.num_pages = 5;
  x.f.layout.u.block_paged.num_seqs = 2;
  x.f.layout.u.block_paged.layer_index = 3;
  const uint64_t lay = 20 + 24 + 8;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 639;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", lay + 32 + 1);
  x.bufs[0].byte_size = 640;
  x.bufs[2].byte_size = 11;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[2].byte_size", lay + 32 + 33);
  x.f.layout.u.block_paged.block_table_index_type = HURRAY_BLOCK_INDEX_U64;
  x.bufs[2].byte_size = 23;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[2].byte_size", ANY);
  x.bufs[2].byte_size = 24;
  FX_ACCEPT(&x, S);
  x.f.layout.u.block_paged.page_size = 0;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.page_size", lay);
  x.f.layout.u.block_paged.page_size = 4;
  x.f.layout.u.block_paged.paged_axis = 1;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.paged_axis", lay + 12);
  x.f.layout.u.block_paged.paged_axis = 0;
  x.f.layout.u.block_paged.kv_role = 3;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.kv_role", lay + 20);
  x.f.layout.u.block_paged.kv_role = HURRAY_KV_ROLE_FUSED;
  FX_ACCEPT(&x, S);
  x.f.layout.u.block_paged.block_table_index_type = 2;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.block_table_index_type", lay + 25);
  /* A uint32 table addresses up to 0xFFFFFFFF pages (heads = 0 keeps the pool empty). */
  x.f.layout.u.block_paged.block_table_index_type = HURRAY_BLOCK_INDEX_U32;
  x.shape[1] = 0;
  x.bufs[2].byte_size = 12;
  x.f.layout.u.block_paged.num_pages = UINT32_MAX;
  FX_ACCEPT(&x, S);
  x.f.layout.u.block_paged.num_pages = 1ull << 32;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout.num_pages", lay + 4);
  x.f.layout.u.block_paged.block_table_index_type = HURRAY_BLOCK_INDEX_U64;
  x.bufs[2].byte_size = 24;
  FX_ACCEPT(&x, S);
  /* byte_offset must be 0 (indirect). */
  x.f.byte_offset = 1;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "byte_offset", 44);
}

/* ---- composite head ---------------------------------------------------------------- */

static void head(Fx *x, uint8_t rule, uint8_t op, uint32_t n) {
  fx_init(x, F32, HURRAY_LAYOUT_COMPOSITE, 2, (uint64_t[]){8, 8}, 0, NULL);
  x->f.layout.u.composite.rule = rule;
  x->f.layout.u.composite.combine_op = op;
  x->f.layout.u.composite.member_count = n;
}

static void test_composite_head(void **state) {
  (void)state;
  Fx x;
  const uint64_t lay = 20 + 16 + 8;
  head(&x, HURRAY_COMPOSITE_PARTITION, 0, 2);
  FX_ACCEPT(&x, S);
  const uint8_t bad_rules[] = {0x00, 0x04, 0x40, 0xEF, 0xFF};
  for (size_t i = 0; i < sizeof bad_rules; i++) {
    head(&x, bad_rules[i], 0, 2);
    FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.composition_rule", lay);
    FX_REJECT(&x, P, HURRAY_ERR_INVALID_COMPOSITE, "layout.composition_rule", lay);
  }
  head(&x, 0xF0, 7, 2);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.composition_rule", lay);
  FX_ACCEPT(&x, P);
  head(&x, 0xFE, 0, 2);
  FX_ACCEPT(&x, P);
  /* combine_op */
  head(&x, HURRAY_COMPOSITE_PARTITION, 1, 2);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.combine_op", lay + 1);
  head(&x, HURRAY_COMPOSITE_GROUP, 2, 2);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.combine_op", lay + 1);
  head(&x, HURRAY_COMPOSITE_GROUP, 0, 2);
  FX_ACCEPT(&x, S);
  head(&x, HURRAY_COMPOSITE_OVERLAY, 0, 2);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.combine_op", lay + 1);
  head(&x, HURRAY_COMPOSITE_OVERLAY, 3, 2);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.combine_op", lay + 1);
  head(&x, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_REPLACE, 2);
  FX_ACCEPT(&x, S);
  head(&x, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 1);
  FX_ACCEPT(&x, S);
  /* member_count */
  head(&x, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 0);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.member_count", lay + 4);
  head(&x, HURRAY_COMPOSITE_PARTITION, 0, 0);
  FX_ACCEPT(&x, S);
  head(&x, HURRAY_COMPOSITE_GROUP, 0, UINT32_MAX);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "layout.member_count", lay + 4);
  head(&x, HURRAY_COMPOSITE_GROUP, 0, UINT32_MAX - 1);
  FX_ACCEPT(&x, S);
  /* dynamic dims: only group heads may have them */
  head(&x, HURRAY_COMPOSITE_PARTITION, 0, 2);
  x.shape[1] = HURRAY_DYNAMIC_DIM;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "shape[1]", 28);
  head(&x, HURRAY_COMPOSITE_OVERLAY, 1, 2);
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "shape[0]", 20);
  head(&x, HURRAY_COMPOSITE_GROUP, 0, 2);
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  FX_ACCEPT(&x, S);
  /* no data, no quantization, no member section */
  head(&x, HURRAY_COMPOSITE_GROUP, 0, 2);
  x.f.buffer_count = 1;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "buffer_count", lay + 8);
  x.f.buffer_count = 0;
  x.f.byte_offset = 64;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "byte_offset", 36);
  x.f.byte_offset = 0;
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  q.version = 1;
  x.f.quantization = &q;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "quantization", lay + 9);
  x.f.quantization = NULL;
  HurrayCompositeMember cm = {HURRAY_MEMBER_ROLE_BASE};
  x.f.composite_member = &cm;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_COMPOSITE, "composite_member", lay + 9);
  /* A head may carry a shard (it is a member of an enclosing composite). */
  x.f.composite_member = NULL;
  uint64_t parent[2] = {8, 16}, off[2] = {0, 8};
  HurrayShard sh = {parent, off};
  x.f.shard = &sh;
  FX_ACCEPT(&x, S);
}

/* ---- buffer counts ---------------------------------------------------------------------- */

static void test_buffer_counts(void **state) {
  (void)state;
  Fx x;
  static const uint32_t mo[3] = {0, 1, 2};
  const uint64_t big[9] = {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024};
  struct { uint8_t tag; uint32_t rank; uint32_t need; } k[] = {
      {HURRAY_LAYOUT_ROW_MAJOR, 2, 1}, {HURRAY_LAYOUT_COL_MAJOR, 2, 1},
      {HURRAY_LAYOUT_COO, 2, 2},       {HURRAY_LAYOUT_CSR, 2, 3},
      {HURRAY_LAYOUT_CSC, 2, 3},       {HURRAY_LAYOUT_CSF, 3, 7},
      {HURRAY_LAYOUT_BLOCK_PAGED, 3, 3}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    for (uint32_t n = 0; n <= k[i].need + 1; n++) {
      fx_init(&x, F32, k[i].tag, k[i].rank, (uint64_t[]){2, 2, 2}, n, big);
      if (k[i].tag == HURRAY_LAYOUT_CSF) x.f.layout.u.csf.mode_order = mo;
      if (k[i].tag == HURRAY_LAYOUT_BLOCK_PAGED) {
        memset(&x.f.layout.u, 0, sizeof x.f.layout.u);
        x.f.layout.u.block_paged.page_size = 1;
      }
      if (n == k[i].need) FX_ACCEPT(&x, S);
      else FX_REJECT(&x, S, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", ANY);
    }
  }
  /* Offset of the count byte: right after the payload. */
  fx_init(&x, F32, HURRAY_LAYOUT_COO, 1, (uint64_t[]){4}, 3, big);
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", 36 + 16);
}

static void test_buffer_counts_quantized(void **state) {
  (void)state;
  Fx x;
  const uint64_t big[5] = {64, 64, 64, 64, 64};
  /* A private scheme: its parameter buffers are unknown, at least the layout's. */
  HurrayQuantization priv;
  memset(&priv, 0, sizeof priv);
  priv.scheme = 0xF3;
  priv.version = 1;
  uint32_t unused;
  assert_false(hurray__quant_param_buffer_count(&priv, &unused));
  for (uint32_t n = 0; n <= 4; n++) {
    fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){16}, n, big);
    x.f.quantization = &priv;
    if (n >= 1) FX_ACCEPT(&x, P);
    else FX_REJECT(&x, P, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", ANY);
  }
  for (uint32_t n = 0; n <= 4; n++) {
    fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_CSR, 2, (uint64_t[]){2, 2}, n, big);
    x.f.quantization = &priv;
    if (n >= 3) FX_ACCEPT(&x, P);
    else FX_REJECT(&x, P, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", ANY);
  }
  /* A named scheme: exactly base + the scheme's count, whatever the quantization
   * module reports (it may not know the scheme yet: then at least base). */
  HurrayQuantization pc;
  memset(&pc, 0, sizeof pc);
  pc.scheme = HURRAY_QUANT_PER_CHANNEL_AFFINE;
  pc.version = 1;
  pc.u.per_channel.axis = 0;
  pc.u.per_channel.scale_buffer_index = 1;
  pc.u.per_channel.zero_point_buffer_index = 2;
  pc.u.per_channel.scale_type = HURRAY_QUANT_SCALE_F32;
  uint32_t params = 0;
  bool known = hurray__quant_param_buffer_count(&pc, &params);
  for (uint32_t n = 0; n <= 4; n++) {
    fx_init(&x, HURRAY_DTYPE_INT8, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){16}, n, big);
    x.f.quantization = &pc;
    bool ok = known ? n == 1 + params : n >= 1;
    if (ok) FX_ACCEPT(&x, S);
    else FX_REJECT(&x, S, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", ANY);
  }
}

/* ---- byte_offset -------------------------------------------------------------------------- */

static void test_byte_offset(void **state) {
  (void)state;
  Fx x;
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 4}, 1, (uint64_t[]){64});
  x.f.byte_offset = 16;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 63;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", 36 + 8 + 1);
  x.f.byte_offset = 64;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "byte_offset", 36);
  /* byte_offset == size is fine for an empty tensor. */
  x.shape[0] = 0;
  x.f.byte_offset = 63;
  FX_ACCEPT(&x, S);
  x.f.byte_offset = 64;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "byte_offset", 36);
  /* Dynamic dimension: the data size is unknown but byte_offset <= size still holds. */
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  x.f.byte_offset = 8;
  x.bufs[0].byte_size = 8;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 7;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "byte_offset", 36);
  /* Sparse layouts: byte_offset is 0. */
  static const uint32_t mo[3] = {0, 1, 2};
  const uint8_t sparse[] = {HURRAY_LAYOUT_COO, HURRAY_LAYOUT_CSR, HURRAY_LAYOUT_CSC,
                            HURRAY_LAYOUT_CSF};
  for (size_t i = 0; i < sizeof sparse; i++) {
    uint32_t r = sparse[i] == HURRAY_LAYOUT_CSF ? 3 : 2;
    fx_init(&x, F32, sparse[i], r, (uint64_t[]){2, 2, 2}, 2 * r + 1,
            (uint64_t[]){64, 64, 64, 64, 64, 64, 64});
    x.f.buffer_count = sparse[i] == HURRAY_LAYOUT_COO ? 2 : sparse[i] == HURRAY_LAYOUT_CSF ? 7 : 3;
    if (sparse[i] == HURRAY_LAYOUT_CSF) x.f.layout.u.csf.mode_order = mo;
    FX_ACCEPT(&x, S);
    x.f.byte_offset = 8;
    FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "byte_offset", 20 + 8 * r);
  }
}

/* ---- minimum sizes --------------------------------------------------------------------------- */

typedef struct SizeCase {
  uint8_t type;
  uint64_t n;
  uint64_t bytes;
} SizeCase;

static void test_dense_sizes_by_type(void **state) {
  (void)state;
  const SizeCase c[] = {
      {HURRAY_DTYPE_FLOAT32, 12, 48},     {HURRAY_DTYPE_INT8, 5, 5},
      {HURRAY_DTYPE_BOOL, 10, 2},         {HURRAY_DTYPE_BOOL, 8, 1},
      {HURRAY_DTYPE_INT4, 3, 2},          {HURRAY_DTYPE_UINT2, 5, 2},
      {HURRAY_DTYPE_FLOAT6_E2M3, 5, 6},   {HURRAY_DTYPE_FLOAT6_E3M2, 4, 3},
      {HURRAY_DTYPE_COMPLEX128, 3, 48},   {HURRAY_DTYPE_FLOAT128, 1, 16},
      {HURRAY_DTYPE_FLOAT4_E2M1, 7, 4},   {HURRAY_DTYPE_FLOAT8_E8M0, 9, 9},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    Fx x;
    for (int col = 0; col < 2; col++) {
      fx_init(&x, c[i].type, col ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR, 1,
              (uint64_t[]){c[i].n}, 1, (uint64_t[]){c[i].bytes});
      FX_ACCEPT(&x, S);
      uint64_t got;
      assert_int_equal(hurray_layout_min_buffer_size(&x.f, 0, &got, NULL), HURRAY_OK);
      assert_int_equal(got, c[i].bytes);
      x.bufs[0].byte_size = c[i].bytes - 1;
      FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", 36 + 1);
    }
  }
  /* Private types sized by the extension section. */
  Fx x;
  HurrayExtensionType ext;
  memset(&ext, 0, sizeof ext);
  ext.bit_width = 4;
  ext.packing_factor = 2;
  fx_init(&x, 0xF1, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){5}, 1, (uint64_t[]){3});
  x.f.extension_type = &ext;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 2;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  ext.bit_width = 24;
  ext.packing_factor = 1;
  x.bufs[0].byte_size = 15;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 14;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", ANY);
  /* Unknown types (permissive relays) skip the size check. */
  fx_init(&x, 0x30, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){100}, 1, (uint64_t[]){1});
  FX_ACCEPT(&x, P);
  /* A count whose bytes overflow. */
  fx_init(&x, HURRAY_DTYPE_FLOAT64, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){1ull << 62, 4}, 1,
          (uint64_t[]){UINT64_MAX});
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "buffers[0]", 36 + 8);
}

static void test_sparse_sizes(void **state) {
  (void)state;
  Fx x;
  /* COO f32, nnz 3, rank 2: values 12, indices 48. */
  fx_init(&x, F32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){4, 4}, 2, (uint64_t[]){12, 48});
  x.f.layout.u.coo.nnz = 3;
  FX_ACCEPT(&x, S);
  const uint64_t bt = 44 + 16;
  x.bufs[0].byte_size = 11;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", bt + 1);
  x.bufs[0].byte_size = 12;
  x.bufs[1].byte_size = 47;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[1].byte_size", bt + 17);
  /* Bool values: 3 bits in one byte. */
  x.f.type_tag = HURRAY_DTYPE_BOOL;
  x.bufs[0].byte_size = 1;
  x.bufs[1].byte_size = 48;
  FX_ACCEPT(&x, S);
  x.bufs[0].byte_size = 0;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[0].byte_size", bt + 1);
  /* CSR [3, 3], nnz 2 (golden csr_f32_3x3): 8 / 16 / 32. */
  fx_init(&x, F32, HURRAY_LAYOUT_CSR, 2, (uint64_t[]){3, 3}, 3, (uint64_t[]){8, 16, 32});
  x.f.layout.u.csr.nnz = 2;
  FX_ACCEPT(&x, S);
  for (uint32_t i = 0; i < 3; i++) {
    x.bufs[i].byte_size--;
    char field[32];
    snprintf(field, sizeof field, "buffers[%u].byte_size", i);
    FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, field, bt + 1 + 16 * i);
    x.bufs[i].byte_size++;
  }
  /* CSC [4, 5]: col_ptr has shape[1] + 1 entries. */
  fx_init(&x, F32, HURRAY_LAYOUT_CSC, 2, (uint64_t[]){4, 5}, 3, (uint64_t[]){20, 40, 48});
  x.f.layout.u.csr.nnz = 5;
  FX_ACCEPT(&x, S);
  x.bufs[2].byte_size = 47;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[2].byte_size", ANY);
  x.f.layout.tag = HURRAY_LAYOUT_CSR;
  x.bufs[2].byte_size = 40; /* CSR needs only shape[0] + 1 = 5 entries */
  FX_ACCEPT(&x, S);
  /* CSF rank 3, nnz 4 (csf.md example). */
  static const uint32_t mo[3] = {0, 1, 2};
  uint64_t csf[7] = {16, 16, 8, 16, 8, 16, 32};
  fx_init(&x, F32, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4}, 7, csf);
  x.f.layout.u.csf.nnz = 4;
  x.f.layout.u.csf.mode_order = mo;
  FX_ACCEPT(&x, S);
  for (uint32_t i = 0; i < 7; i++) {
    x.bufs[i].byte_size--;
    char field[32];
    snprintf(field, sizeof field, "buffers[%u].byte_size", i);
    FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, field, ANY);
    x.bufs[i].byte_size++;
  }
  /* Empty CSF: pos_0 16 bytes, other pos 8, crd and values 0. */
  uint64_t empty[7] = {0, 16, 0, 8, 0, 8, 0};
  fx_init(&x, F32, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4}, 7, empty);
  x.f.layout.u.csf.mode_order = mo;
  FX_ACCEPT(&x, S);
  x.bufs[3].byte_size = 7;
  FX_REJECT(&x, S, HURRAY_ERR_BUFFER_SIZE, "buffers[3].byte_size", ANY);
  /* Dynamic dims skip the sizes. */
  fx_init(&x, F32, HURRAY_LAYOUT_CSR, 2, (uint64_t[]){HURRAY_DYNAMIC_DIM, 3}, 3, NULL);
  x.f.layout.u.csr.nnz = 2;
  FX_ACCEPT(&x, S);
  /* nnz whose byte size overflows. */
  fx_init(&x, F32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){4, 4}, 2, (uint64_t[]){UINT64_MAX, 0});
  x.f.layout.u.coo.nnz = 1ull << 62;
  FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "buffers[0]", ANY);
}

static void test_min_buffer_size_api(void **state) {
  (void)state;
  Fx x;
  uint64_t got;
  HurrayError e;
  fx_init(&x, F32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){4, 4}, 2, NULL);
  x.f.layout.u.coo.nnz = 3;
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 1, &got, &e), HURRAY_OK);
  assert_int_equal(got, 48);
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 2, &got, &e), HURRAY_ERR_INVALID_ARGUMENT);
  x.shape[0] = HURRAY_DYNAMIC_DIM;
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 0, &got, &e), HURRAY_ERR_INVALID_ARGUMENT);
  x.shape[0] = 4;
  x.f.type_tag = 0x30;
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 0, &got, &e), HURRAY_ERR_UNSUPPORTED);
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 1, &got, &e), HURRAY_OK);
  assert_int_equal(hurray_layout_min_buffer_size(NULL, 0, &got, &e), HURRAY_ERR_NULL_POINTER);
  x.f.layout.tag = HURRAY_LAYOUT_CSR;
  x.shape[0] = 0;
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 2, &got, &e), HURRAY_OK);
  assert_int_equal(got, 8);
  x.f.rank = 3; /* the shape tier runs first */
  assert_int_equal(hurray_layout_min_buffer_size(&x.f, 2, &got, &e), HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(e.field, "rank");
}

static void test_validate_shape_api(void **state) {
  (void)state;
  Fx x;
  HurrayError e;
  /* Shape tier only: buffers are not looked at, dynamic dims are fine. */
  fx_init(&x, F32, HURRAY_LAYOUT_CSR, 2, (uint64_t[]){HURRAY_DYNAMIC_DIM, 3}, 0, NULL);
  assert_int_equal(hurray_layout_validate_shape(&x.f, 0, &e), HURRAY_OK);
  x.f.rank = 1;
  assert_int_equal(hurray_layout_validate_shape(&x.f, 0, &e), HURRAY_ERR_INVALID_LAYOUT);
  assert_string_equal(e.field, "rank");
  assert_int_equal(e.offset, HURRAY_NO_OFFSET);
  fx_init(&x, F32, HURRAY_LAYOUT_COMPOSITE, 1, (uint64_t[]){4}, 0, NULL);
  x.f.layout.u.composite.rule = 0x09;
  assert_int_equal(hurray_layout_validate_shape(&x.f, 0, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(hurray_layout_validate_shape(NULL, 0, &e), HURRAY_ERR_NULL_POINTER);
  uint32_t mo[3] = {0, 0, 1};
  fx_init(&x, F32, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 2, 2}, 0, NULL);
  x.f.layout.u.csf.mode_order = mo;
  assert_int_equal(hurray_layout_validate_shape(&x.f, 0, &e), HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_layout_validate_shape(&x.f, HURRAY_DECODE_PERMISSIVE, &e), HURRAY_OK);
}

static void test_unknown_layout_tags(void **state) {
  (void)state;
  Fx x;
  const uint8_t tags[] = {0x0C, 0x3F, 0x41, 0x80, 0xEF, 0xF0, 0xFE};
  for (size_t i = 0; i < sizeof tags; i++) {
    fx_init(&x, F32, tags[i], 2, (uint64_t[]){3, 4}, 5, NULL);
    FX_ACCEPT(&x, P);
    FX_REJECT(&x, S, HURRAY_ERR_INVALID_LAYOUT, "layout_tag", 15);
  }
  fx_init(&x, F32, 0x00, 1, (uint64_t[]){3}, 1, NULL);
  FX_REJECT(&x, P, HURRAY_ERR_INVALID_LAYOUT, "layout_tag", 15);
  fx_init(&x, F32, 0xFF, 1, (uint64_t[]){3}, 1, NULL);
  FX_REJECT(&x, P, HURRAY_ERR_INVALID_LAYOUT, "layout_tag", 15);
}

static void test_base_buffer_count(void **state) {
  (void)state;
  uint32_t n;
  assert_true(hurray__layout_base_buffer_count(HURRAY_LAYOUT_HILBERT, 2, &n));
  assert_int_equal(n, 1);
  assert_true(hurray__layout_base_buffer_count(HURRAY_LAYOUT_CSF, 5, &n));
  assert_int_equal(n, 11);
  assert_true(hurray__layout_base_buffer_count(HURRAY_LAYOUT_COMPOSITE, 5, &n));
  assert_int_equal(n, 0);
  assert_false(hurray__layout_base_buffer_count(0xF0, 1, &n));
  /* the public form agrees for every tag and leaves *out alone when unknown */
  for (unsigned t = 0; t < 256; t++) {
    uint32_t a = 77, b = 77;
    bool known = hurray__layout_base_buffer_count((uint8_t)t, 3, &a);
    assert_int_equal(hurray_layout_buffer_count((uint8_t)t, 3, &b), known);
    assert_int_equal(a, b);
  }
  assert_true(hurray_layout_buffer_count(HURRAY_LAYOUT_CSF, 3, &n));
  assert_int_equal(n, 7);
  assert_false(hurray_layout_buffer_count(HURRAY_LAYOUT_CSR, 1, NULL));
}

static void test_rank_arrays(void **state) {
  (void)state;
  assert_string_equal(hurray_layout_rank_array(HURRAY_LAYOUT_STRIDED), "strides");
  assert_string_equal(hurray_layout_rank_array(HURRAY_LAYOUT_TILED), "tile_shape");
  assert_string_equal(hurray_layout_rank_array(HURRAY_LAYOUT_MORTON), "morton_bits");
  assert_string_equal(hurray_layout_rank_array(HURRAY_LAYOUT_CSF), "mode_order");
  unsigned with = 0;
  for (unsigned t = 0; t < 256; t++) with += hurray_layout_rank_array((uint8_t)t) != NULL;
  assert_int_equal(with, 4);
}

static void test_buffer_roles(void **state) {
  (void)state;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  char buf[16];
  f.rank = 2;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 0, buf, sizeof buf), "element data");
  assert_null(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf));
  f.layout.tag = HURRAY_LAYOUT_CSR;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 2, buf, sizeof buf), "row_ptr");
  assert_null(hurray_descriptor_buffer_role(&f, 3, buf, sizeof buf));
  f.layout.tag = HURRAY_LAYOUT_CSC;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf), "row_indices");
  f.layout.tag = HURRAY_LAYOUT_COO;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf), "indices");
  f.layout.tag = HURRAY_LAYOUT_BLOCK_PAGED;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf), "block_table");
  f.layout.tag = HURRAY_LAYOUT_CSF;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 0, buf, sizeof buf), "values");
  assert_string_equal(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf), "pos_0");
  assert_string_equal(hurray_descriptor_buffer_role(&f, 4, buf, sizeof buf), "crd_1");
  assert_null(hurray_descriptor_buffer_role(&f, 5, buf, sizeof buf));
  assert_null(hurray_descriptor_buffer_role(&f, 1, NULL, 0));
  f.layout.tag = 0xF3; /* private: only its definer knows */
  assert_null(hurray_descriptor_buffer_role(&f, 0, buf, sizeof buf));
  /* a quantization parameter buffer is named by the scheme first */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  q.u.per_block.scale_buffer_index = 1;
  q.u.per_block.zero_point_buffer_index = 2;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.quantization = &q;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf), "quantization scales");
  assert_string_equal(hurray_descriptor_buffer_role(&f, 2, buf, sizeof buf),
                      "quantization zero points");
  q.u.per_block.zero_point_buffer_index = 1;
  assert_string_equal(hurray_descriptor_buffer_role(&f, 1, buf, sizeof buf),
                      "quantization scales and zero points");
  assert_null(hurray_descriptor_buffer_role(NULL, 0, buf, sizeof buf));
}

static void test_golden_shapes(void **state) {
  (void)state;
  /* The golden corpus' dense and sparse vectors as fields (the reference implementation's
   * conformance/vectors/manifest.json in pgillet/hurray). */
  Fx x;
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){3, 4}, 1, (uint64_t[]){48});
  FX_ACCEPT(&x, S);
  fx_init(&x, HURRAY_DTYPE_BOOL, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){10}, 1,
          (uint64_t[]){2});
  FX_ACCEPT(&x, S);
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){0, 4}, 1, (uint64_t[]){0});
  FX_ACCEPT(&x, S);
  fx_init(&x, F32, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){8, 4}, 1, (uint64_t[]){128});
  FX_ACCEPT(&x, S);
  fx_init(&x, HURRAY_DTYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, 2, (uint64_t[]){128, 128}, 2,
          (uint64_t[]){8192, 256});
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_BLOCK_AFFINE;
  q.version = 1;
  q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
  q.u.per_block.axis = 1;
  q.u.per_block.block_size = 128;
  q.u.per_block.scale_buffer_index = 1;
  q.u.per_block.zero_point_buffer_index = HURRAY_QUANT_NO_BUFFER;
  q.u.per_block.scale_type = HURRAY_QUANT_SCALE_F16;
  x.f.quantization = &q;
  FX_ACCEPT(&x, S);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalar_rules),
      cmocka_unit_test(test_sparse_ranks),
      cmocka_unit_test(test_strided_payload),
      cmocka_unit_test(test_tiled_payload),
      cmocka_unit_test(test_morton_payload),
      cmocka_unit_test(test_hilbert_payload),
      cmocka_unit_test(test_csf_mode_order),
      cmocka_unit_test(test_block_paged_payload),
      cmocka_unit_test(test_composite_head),
      cmocka_unit_test(test_buffer_counts),
      cmocka_unit_test(test_buffer_counts_quantized),
      cmocka_unit_test(test_byte_offset),
      cmocka_unit_test(test_dense_sizes_by_type),
      cmocka_unit_test(test_sparse_sizes),
      cmocka_unit_test(test_min_buffer_size_api),
      cmocka_unit_test(test_validate_shape_api),
      cmocka_unit_test(test_unknown_layout_tags),
      cmocka_unit_test(test_base_buffer_count),
      cmocka_unit_test(test_rank_arrays),
      cmocka_unit_test(test_buffer_roles),
      cmocka_unit_test(test_golden_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
