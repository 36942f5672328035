/*
 * A layout as a value (include/hurray/layout.h): hurray_layout_copy_size,
 * hurray_layout_copy, hurray_layout_equal, hurray_layout_hash, for every
 * layout tag, including private and reserved/unassigned opaque payloads.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define RANK 3u

/* ---- samples ------------------------------------------------------------------- */

/* One sample layout per payload kind, with arrays in the sample itself. */
typedef struct Sample {
  const char *what;
  HurrayLayout l;
  uint32_t rank;
  int64_t strides[RANK];
  uint32_t u32[RANK];
  uint64_t tile[2][RANK];
  int64_t outer[2][RANK], inner[2][RANK];
  HurrayTiledLevel levels[2];
  uint8_t bytes[13];
} Sample;

enum {
  S_ROW, S_COL, S_STRIDED, S_TILED, S_MORTON, S_HILBERT, S_COO, S_CSR, S_CSC, S_CSF,
  S_BLOCK_PAGED, S_COMPOSITE, S_PRIVATE, S_PRIVATE_EMPTY, S_RESERVED, S_RESERVED_HIGH,
  S_INVALID_00, S_INVALID_FF, S_COUNT
};

/* Fills *s with sample k. The union is first filled with junk: equality and
 * hashing must look only at the fields the tag carries. */
static void sample(Sample *s, int k) {
  memset(s, 0, sizeof *s);
  memset(&s->l, 0xA7, sizeof s->l);
  s->rank = RANK;
  for (uint32_t i = 0; i < RANK; i++) {
    s->strides[i] = -(int64_t)(i + 1) * 100;
    s->u32[i] = RANK - 1 - i;
    for (int d = 0; d < 2; d++) {
      s->tile[d][i] = 2u + i + (uint64_t)d;
      s->outer[d][i] = 1000 + (int64_t)(10 * d) + (int64_t)i;
      s->inner[d][i] = -7 - (int64_t)(10 * d) - (int64_t)i;
    }
  }
  for (size_t i = 0; i < sizeof s->bytes; i++) s->bytes[i] = (uint8_t)(0x30 + 7 * i);
  HurrayLayout *l = &s->l;
  switch (k) {
    case S_ROW: s->what = "row_major"; l->tag = HURRAY_LAYOUT_ROW_MAJOR; break;
    case S_COL: s->what = "col_major"; l->tag = HURRAY_LAYOUT_COL_MAJOR; break;
    case S_STRIDED:
      s->what = "strided";
      l->tag = HURRAY_LAYOUT_STRIDED;
      l->u.strided.strides = s->strides;
      break;
    case S_TILED:
      s->what = "tiled";
      l->tag = HURRAY_LAYOUT_TILED;
      /* level 0: strided outer, nested inner; level 1: row-major outer, strided inner */
      s->levels[0].tile_shape = s->tile[0];
      s->levels[0].outer_layout = HURRAY_LAYOUT_STRIDED;
      s->levels[0].inner_layout = HURRAY_LAYOUT_TILED;
      s->levels[0].outer_strides = s->outer[0];
      s->levels[0].inner_strides = NULL;
      s->levels[1].tile_shape = s->tile[1];
      s->levels[1].outer_layout = HURRAY_LAYOUT_ROW_MAJOR;
      s->levels[1].inner_layout = HURRAY_LAYOUT_STRIDED;
      s->levels[1].outer_strides = NULL;
      s->levels[1].inner_strides = s->inner[1];
      l->u.tiled.depth = 2;
      l->u.tiled.levels = s->levels;
      break;
    case S_MORTON:
      s->what = "morton";
      l->tag = HURRAY_LAYOUT_MORTON;
      l->u.morton.bits = s->u32;
      break;
    case S_HILBERT:
      s->what = "hilbert";
      l->tag = HURRAY_LAYOUT_HILBERT;
      l->u.hilbert.order = 5;
      l->u.hilbert.rank = 2;
      break;
    case S_COO:
      s->what = "coo";
      l->tag = HURRAY_LAYOUT_COO;
      l->u.coo.nnz = 42;
      l->u.coo.is_sorted = 1;
      break;
    case S_CSR:
      s->what = "csr";
      l->tag = HURRAY_LAYOUT_CSR;
      l->u.csr.nnz = 17;
      break;
    case S_CSC:
      s->what = "csc";
      l->tag = HURRAY_LAYOUT_CSC;
      l->u.csr.nnz = 17;
      break;
    case S_CSF:
      s->what = "csf";
      l->tag = HURRAY_LAYOUT_CSF;
      l->u.csf.nnz = 9;
      l->u.csf.mode_order = s->u32;
      break;
    case S_BLOCK_PAGED:
      s->what = "block_paged";
      l->tag = HURRAY_LAYOUT_BLOCK_PAGED;
      l->u.block_paged.page_size = 16;
      l->u.block_paged.num_pages = 1u << 20;
      l->u.block_paged.paged_axis = 0;
      l->u.block_paged.num_seqs = 4;
      l->u.block_paged.kv_role = HURRAY_KV_ROLE_VALUE;
      l->u.block_paged.layer_index = 3;
      l->u.block_paged.block_table_index_type = HURRAY_BLOCK_INDEX_U64;
      break;
    case S_COMPOSITE:
      s->what = "composite";
      l->tag = HURRAY_LAYOUT_COMPOSITE;
      l->u.composite.rule = HURRAY_COMPOSITE_OVERLAY;
      l->u.composite.combine_op = HURRAY_COMBINE_ADD;
      l->u.composite.member_count = 2;
      break;
    case S_PRIVATE:
      s->what = "private";
      l->tag = 0xF3;
      l->u.private_ext.layout_id = 0x0123456789ABCDEFull;
      l->u.private_ext.data_len = sizeof s->bytes;
      l->u.private_ext.data = s->bytes;
      break;
    case S_PRIVATE_EMPTY:
      s->what = "private, no data";
      l->tag = 0xFE;
      l->u.private_ext.layout_id = 7;
      l->u.private_ext.data_len = 0;
      l->u.private_ext.data = NULL;
      break;
    case S_RESERVED:
      s->what = "reserved 0x0C";
      l->tag = 0x0C;
      l->u.opaque.len = sizeof s->bytes;
      l->u.opaque.bytes = s->bytes;
      break;
    case S_RESERVED_HIGH:
      s->what = "reserved 0x41";
      l->tag = 0x41;
      l->u.opaque.len = 5;
      l->u.opaque.bytes = s->bytes;
      break;
    case S_INVALID_00: s->what = "invalid 0x00"; l->tag = 0x00; break;
    default: s->what = "invalid 0xFF"; l->tag = 0xFF; break;
  }
}

/* Storage for copies: 8-byte aligned, with room to spare. */
typedef struct Store {
  uint64_t w[256];
} Store;

/* Copies s into *dst backed by *st; returns the size used. */
static size_t copy_into(const HurrayLayout *src, uint32_t rank, Store *st, HurrayLayout *dst) {
  size_t need = 0;
  HurrayError e;
  assert_int_equal(hurray_layout_copy_size(src, rank, &need, &e), HURRAY_OK);
  assert_true(need <= sizeof st->w);
  memset(st, 0xEE, sizeof *st);
  assert_int_equal(hurray_layout_copy(src, rank, st->w, need, dst, &e), HURRAY_OK);
  return need;
}

/* ---- copy ---------------------------------------------------------------------- */

static bool inside(const void *p, const Store *st, size_t need, size_t bytes) {
  const unsigned char *b = (const unsigned char *)st->w, *q = p;
  return q >= b && q + bytes <= b + need && ((uintptr_t)q & 7u) == 0;
}

static void test_copy_size_by_tag(void **state) {
  (void)state;
  /* Expected sizes: every array rounded up to 8 bytes. */
  static const size_t want[S_COUNT] = {
      [S_ROW] = 0, [S_COL] = 0, [S_STRIDED] = 24, [S_MORTON] = 16, [S_HILBERT] = 0,
      [S_COO] = 0, [S_CSR] = 0, [S_CSC] = 0, [S_CSF] = 16, [S_BLOCK_PAGED] = 0,
      [S_COMPOSITE] = 0, [S_PRIVATE] = 16, [S_PRIVATE_EMPTY] = 0, [S_RESERVED] = 16,
      [S_RESERVED_HIGH] = 8, [S_INVALID_00] = 0, [S_INVALID_FF] = 0,
      /* 2 levels + 2 tile shapes + one outer and one inner stride array */
      [S_TILED] = 2 * sizeof(HurrayTiledLevel) + 4 * 24,
  };
  for (int k = 0; k < S_COUNT; k++) {
    Sample s;
    sample(&s, k);
    size_t need = 1234;
    assert_int_equal(hurray_layout_copy_size(&s.l, RANK, &need, NULL), HURRAY_OK);
    if (need != want[k]) fail_msg("%s: copy size %zu, want %zu", s.what, need, want[k]);
    /* rank counts only the per-dimension arrays */
    size_t need1 = 0;
    assert_int_equal(hurray_layout_copy_size(&s.l, 1, &need1, NULL), HURRAY_OK);
    bool per_dim = k == S_STRIDED || k == S_MORTON || k == S_CSF || k == S_TILED;
    if (per_dim) assert_true(need1 < need);
    else assert_int_equal(need1, need);
  }
}

static void test_copy_round_trip(void **state) {
  (void)state;
  for (int k = 0; k < S_COUNT; k++) {
    Sample s;
    sample(&s, k);
    Store st;
    HurrayLayout c;
    size_t need = copy_into(&s.l, RANK, &st, &c);
    if (!hurray_layout_equal(&s.l, &c, RANK)) fail_msg("%s: copy differs", s.what);
    assert_true(hurray_layout_equal(&c, &s.l, RANK));
    assert_true(hurray_layout_hash(&s.l, RANK) == hurray_layout_hash(&c, RANK));
    assert_int_equal(c.tag, s.l.tag);
    /* Every array of the copy lies in the storage, 8-byte aligned, apart from the source. */
    switch (k) {
      case S_STRIDED:
        assert_true(inside(c.u.strided.strides, &st, need, RANK * 8));
        assert_ptr_not_equal(c.u.strided.strides, s.strides);
        break;
      case S_MORTON:
        assert_true(inside(c.u.morton.bits, &st, need, RANK * 4));
        break;
      case S_CSF:
        assert_true(inside(c.u.csf.mode_order, &st, need, RANK * 4));
        assert_int_equal(c.u.csf.nnz, 9);
        break;
      case S_TILED:
        assert_int_equal(c.u.tiled.depth, 2);
        assert_true(inside(c.u.tiled.levels, &st, need, 2 * sizeof(HurrayTiledLevel)));
        for (int d = 0; d < 2; d++) {
          assert_true(inside(c.u.tiled.levels[d].tile_shape, &st, need, RANK * 8));
          assert_ptr_not_equal(c.u.tiled.levels[d].tile_shape, s.tile[d]);
        }
        assert_true(inside(c.u.tiled.levels[0].outer_strides, &st, need, RANK * 8));
        assert_null(c.u.tiled.levels[0].inner_strides);
        assert_null(c.u.tiled.levels[1].outer_strides);
        assert_true(inside(c.u.tiled.levels[1].inner_strides, &st, need, RANK * 8));
        break;
      case S_PRIVATE:
        assert_true(inside(c.u.private_ext.data, &st, need, sizeof s.bytes));
        assert_true(c.u.private_ext.layout_id == 0x0123456789ABCDEFull);
        break;
      case S_PRIVATE_EMPTY:
        assert_null(c.u.private_ext.data);
        break;
      case S_RESERVED:
      case S_RESERVED_HIGH:
        assert_true(inside(c.u.opaque.bytes, &st, need, c.u.opaque.len));
        assert_int_equal(c.u.opaque.len, s.l.u.opaque.len);
        break;
      default:
        assert_int_equal(need, 0);
        break;
    }
    /* Deep: the copy no longer depends on the source's arrays. */
    memset(s.strides, 0, sizeof s.strides);
    memset(s.u32, 0, sizeof s.u32);
    memset(s.tile, 0, sizeof s.tile);
    memset(s.outer, 0, sizeof s.outer);
    memset(s.inner, 0, sizeof s.inner);
    memset(s.bytes, 0, sizeof s.bytes);
    Sample fresh;
    sample(&fresh, k);
    if (!hurray_layout_equal(&fresh.l, &c, RANK)) fail_msg("%s: copy is shallow", s.what);
    /* A copy of the copy, and a copy with more storage than needed. */
    Store st2;
    HurrayLayout c2;
    (void)copy_into(&c, RANK, &st2, &c2);
    assert_true(hurray_layout_equal(&fresh.l, &c2, RANK));
    HurrayLayout c3;
    assert_int_equal(hurray_layout_copy(&fresh.l, RANK, st2.w, sizeof st2.w, &c3, NULL),
                     HURRAY_OK);
    assert_true(hurray_layout_equal(&fresh.l, &c3, RANK));
  }
}

/* dst may be src: the copy reads the source before writing. */
static void test_copy_in_place(void **state) {
  (void)state;
  for (int k = 0; k < S_COUNT; k++) {
    Sample s, fresh;
    sample(&s, k);
    sample(&fresh, k);
    Store st;
    memset(&st, 0, sizeof st);
    assert_int_equal(hurray_layout_copy(&s.l, RANK, st.w, sizeof st.w, &s.l, NULL), HURRAY_OK);
    assert_true(hurray_layout_equal(&s.l, &fresh.l, RANK));
  }
}

/* Every one of the 256 tags copies and compares equal to itself. */
static void test_every_tag(void **state) {
  (void)state;
  uint8_t data[5] = {1, 2, 3, 4, 5};
  int64_t strides[RANK] = {3, 2, 1};
  uint64_t tile[RANK] = {2, 2, 2};
  HurrayTiledLevel lv = {tile, HURRAY_LAYOUT_ROW_MAJOR, HURRAY_LAYOUT_ROW_MAJOR, NULL, NULL};
  for (unsigned t = 0; t < 256; t++) {
    HurrayLayout l;
    memset(&l, 0, sizeof l);
    l.tag = (uint8_t)t;
    HurrayTagKind kind = hurray_layout_tag_kind(l.tag);
    if (kind == HURRAY_TAG_PRIVATE) {
      l.u.private_ext.layout_id = t;
      l.u.private_ext.data_len = sizeof data;
      l.u.private_ext.data = data;
    } else if (kind == HURRAY_TAG_RESERVED || kind == HURRAY_TAG_UNASSIGNED) {
      l.u.opaque.len = sizeof data;
      l.u.opaque.bytes = data;
    } else if (t == HURRAY_LAYOUT_STRIDED) {
      l.u.strided.strides = strides;
    } else if (t == HURRAY_LAYOUT_MORTON || t == HURRAY_LAYOUT_CSF) {
      l.u.morton.bits = (const uint32_t *)(const void *)strides; /* any 12 bytes */
      if (t == HURRAY_LAYOUT_CSF) l.u.csf.mode_order = l.u.morton.bits;
    } else if (t == HURRAY_LAYOUT_TILED) {
      l.u.tiled.depth = 1;
      l.u.tiled.levels = &lv;
    }
    Store st;
    HurrayLayout c;
    size_t need = copy_into(&l, RANK, &st, &c);
    if (!hurray_layout_equal(&l, &c, RANK)) fail_msg("tag 0x%02X: copy differs", t);
    assert_true(hurray_layout_hash(&l, RANK) == hurray_layout_hash(&c, RANK));
    bool carries = kind == HURRAY_TAG_PRIVATE || kind == HURRAY_TAG_RESERVED ||
                   kind == HURRAY_TAG_UNASSIGNED || t == HURRAY_LAYOUT_STRIDED ||
                   t == HURRAY_LAYOUT_MORTON || t == HURRAY_LAYOUT_CSF ||
                   t == HURRAY_LAYOUT_TILED;
    if (carries != (need > 0)) fail_msg("tag 0x%02X: copy size %zu", t, need);
  }
}

static void test_storage_too_small(void **state) {
  (void)state;
  for (int k = 0; k < S_COUNT; k++) {
    Sample s;
    sample(&s, k);
    size_t need = 0;
    assert_int_equal(hurray_layout_copy_size(&s.l, RANK, &need, NULL), HURRAY_OK);
    if (need == 0) continue;
    Store st;
    HurrayLayout dst, before;
    memset(&dst, 0x5C, sizeof dst);
    before = dst;
    HurrayError e;
    for (size_t short_by = 1; short_by <= need; short_by += 7) {
      hurray_error_clear(&e);
      assert_int_equal(hurray_layout_copy(&s.l, RANK, st.w, need - short_by, &dst, &e),
                       HURRAY_ERR_BUFFER_TOO_SMALL);
      assert_int_equal(e.status, HURRAY_ERR_BUFFER_TOO_SMALL);
      assert_string_equal(e.field, "storage_bytes");
      assert_memory_equal(&dst, &before, sizeof dst); /* untouched */
    }
    /* No storage at all. */
    assert_int_equal(hurray_layout_copy(&s.l, RANK, NULL, 0, &dst, NULL),
                     HURRAY_ERR_BUFFER_TOO_SMALL);
    assert_int_equal(hurray_layout_copy(&s.l, RANK, NULL, need, &dst, &e),
                     HURRAY_ERR_NULL_POINTER);
    assert_string_equal(e.field, "storage");
    /* Storage that is not 8-byte aligned. */
    unsigned char *odd = (unsigned char *)st.w + 4;
    assert_int_equal(hurray_layout_copy(&s.l, RANK, odd, need, &dst, &e), HURRAY_ERR_MISALIGNED);
    assert_string_equal(e.field, "storage");
    assert_memory_equal(&dst, &before, sizeof dst);
  }
  /* A layout without arrays needs no storage. */
  Sample s;
  sample(&s, S_COO);
  HurrayLayout dst;
  assert_int_equal(hurray_layout_copy(&s.l, RANK, NULL, 0, &dst, NULL), HURRAY_OK);
  assert_true(hurray_layout_equal(&dst, &s.l, RANK));
}

static void test_null_and_missing(void **state) {
  (void)state;
  Sample s;
  sample(&s, S_STRIDED);
  size_t need;
  HurrayLayout dst;
  HurrayError e;
  Store st;
  assert_int_equal(hurray_layout_copy_size(NULL, RANK, &need, &e), HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "src");
  assert_int_equal(hurray_layout_copy_size(&s.l, RANK, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "out_bytes");
  assert_int_equal(hurray_layout_copy(NULL, RANK, st.w, sizeof st.w, &dst, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_layout_copy(&s.l, RANK, st.w, sizeof st.w, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_string_equal(e.field, "dst");

  /* A required array with entries but no pointer: refused, named. */
  struct {
    int k;
    const char *field;
  } cases[] = {
      {S_STRIDED, "layout.strides"}, {S_MORTON, "layout.morton_bits"},
      {S_CSF, "layout.mode_order"},  {S_PRIVATE, "layout.data"},
      {S_RESERVED, "layout.opaque"}, {S_TILED, "layout.tiled.levels"},
      {-1, "layout.tiled[1].tile_shape"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int k = cases[i].k < 0 ? S_TILED : cases[i].k;
    sample(&s, k);
    switch (cases[i].k) {
      case S_STRIDED: s.l.u.strided.strides = NULL; break;
      case S_MORTON: s.l.u.morton.bits = NULL; break;
      case S_CSF: s.l.u.csf.mode_order = NULL; break;
      case S_PRIVATE: s.l.u.private_ext.data = NULL; break;
      case S_RESERVED: s.l.u.opaque.bytes = NULL; break;
      case S_TILED: s.l.u.tiled.levels = NULL; break;
      default: s.levels[1].tile_shape = NULL; break;
    }
    hurray_error_clear(&e);
    assert_int_equal(hurray_layout_copy_size(&s.l, RANK, &need, &e), HURRAY_ERR_NULL_POINTER);
    assert_string_equal(e.field, cases[i].field);
    assert_true(e.offset == HURRAY_NO_OFFSET);
    assert_int_equal(hurray_layout_copy(&s.l, RANK, st.w, sizeof st.w, &dst, NULL),
                     HURRAY_ERR_NULL_POINTER);
    /* Missing equals missing, and hashes alike. */
    Sample t;
    memcpy(&t, &s, sizeof s);
    if (cases[i].k == S_TILED) t.l.u.tiled.levels = NULL;
    else if (cases[i].k < 0) t.l.u.tiled.levels = t.levels;
    assert_true(hurray_layout_equal(&s.l, &t.l, RANK));
    assert_true(hurray_layout_hash(&s.l, RANK) == hurray_layout_hash(&t.l, RANK));
    /* ... but not a present array. */
    Sample full;
    sample(&full, k);
    assert_false(hurray_layout_equal(&s.l, &full.l, RANK));
    assert_false(hurray_layout_equal(&full.l, &s.l, RANK));
  }
  /* With no entries, no pointer is needed. */
  sample(&s, S_STRIDED);
  s.l.u.strided.strides = NULL;
  assert_int_equal(hurray_layout_copy_size(&s.l, 0, &need, NULL), HURRAY_OK);
  assert_int_equal(need, 0);
  assert_int_equal(hurray_layout_copy(&s.l, 0, NULL, 0, &dst, NULL), HURRAY_OK);
  assert_null(dst.u.strided.strides);
  Sample full;
  sample(&full, S_STRIDED);
  assert_true(hurray_layout_equal(&s.l, &full.l, 0));
  assert_true(hurray_layout_hash(&s.l, 0) == hurray_layout_hash(&full.l, 0));
}

/* ---- equality and hash ---------------------------------------------------------- */

/* Applies mutation m to sample s (one field of what its tag carries changed);
 * false when the tag has no mutation m. */
static bool mutate(Sample *s, int k, int m) {
  HurrayLayout *l = &s->l;
  if (m == 0) {
    /* Another tag whose payload is safe to read: the same kind, or none. */
    if (k == S_RESERVED || k == S_RESERVED_HIGH) l->tag = 0x3F;
    else if (k == S_PRIVATE || k == S_PRIVATE_EMPTY) l->tag = 0xF0;
    else l->tag = k == S_ROW ? HURRAY_LAYOUT_COL_MAJOR : HURRAY_LAYOUT_ROW_MAJOR;
    return true;
  }
  m--;
  switch (k) {
    case S_STRIDED:
      if (m >= (int)RANK) return false;
      s->strides[m] += 1;
      return true;
    case S_MORTON:
      if (m >= (int)RANK) return false;
      s->u32[m] ^= 0x100;
      return true;
    case S_CSF:
      if (m == (int)RANK) {
        l->u.csf.nnz++;
        return true;
      }
      if (m > (int)RANK) return false;
      s->u32[m] ^= 0x100;
      return true;
    case S_TILED: {
      /* per level: outer, inner, tile[k] x RANK, outer stride presence, inner presence,
       * outer[k], inner[k] (of the present ones) */
      if (m == 0) { /* depth */
        l->u.tiled.depth = 1;
        return true;
      }
      m--;
      int per = 2 + (int)RANK + 2 + (int)RANK;
      int d = m / per, f = m % per;
      if (d >= 2) return false;
      HurrayTiledLevel *v = &s->levels[d];
      if (f == 0) v->outer_layout = (uint8_t)(v->outer_layout == 1 ? 2 : 1);
      else if (f == 1) v->inner_layout = (uint8_t)(v->inner_layout == 1 ? 2 : 1);
      else if (f < 2 + (int)RANK) s->tile[d][f - 2]++;
      else if (f == 2 + (int)RANK) v->outer_strides = v->outer_strides ? NULL : s->outer[d];
      else if (f == 3 + (int)RANK) v->inner_strides = v->inner_strides ? NULL : s->inner[d];
      else if (v->outer_strides != NULL) s->outer[d][f - 4 - (int)RANK]++;
      else s->inner[d][f - 4 - (int)RANK]++;
      return true;
    }
    case S_HILBERT:
      if (m == 0) l->u.hilbert.order++;
      else if (m == 1) l->u.hilbert.rank++;
      else return false;
      return true;
    case S_COO:
      if (m == 0) l->u.coo.nnz++;
      else if (m == 1) l->u.coo.is_sorted = 0;
      else return false;
      return true;
    case S_CSR:
    case S_CSC:
      if (m == 0) l->u.csr.nnz--;
      else if (m == 1) l->tag = k == S_CSR ? HURRAY_LAYOUT_CSC : HURRAY_LAYOUT_CSR;
      else return false;
      return true;
    case S_BLOCK_PAGED:
      switch (m) {
        case 0: l->u.block_paged.page_size++; return true;
        case 1: l->u.block_paged.num_pages++; return true;
        case 2: l->u.block_paged.paged_axis++; return true;
        case 3: l->u.block_paged.num_seqs++; return true;
        case 4: l->u.block_paged.kv_role = HURRAY_KV_ROLE_KEY; return true;
        case 5: l->u.block_paged.layer_index = HURRAY_NO_LAYER_INDEX; return true;
        case 6: l->u.block_paged.block_table_index_type = HURRAY_BLOCK_INDEX_U32; return true;
        default: return false;
      }
    case S_COMPOSITE:
      switch (m) {
        case 0: l->u.composite.rule = HURRAY_COMPOSITE_PARTITION; return true;
        case 1: l->u.composite.combine_op = HURRAY_COMBINE_REPLACE; return true;
        case 2: l->u.composite.member_count++; return true;
        default: return false;
      }
    case S_PRIVATE:
      if (m == 0) l->u.private_ext.layout_id ^= 1ull << 40;
      else if (m == 1) l->u.private_ext.data_len--;
      else if (m == 2) l->tag = 0xF4;
      else if (m < 3 + (int)sizeof s->bytes) s->bytes[m - 3] ^= 0x80;
      else return false;
      return true;
    case S_PRIVATE_EMPTY:
      if (m == 0) l->u.private_ext.layout_id++;
      else if (m == 1) {
        l->u.private_ext.data_len = 1;
        l->u.private_ext.data = s->bytes;
      } else return false;
      return true;
    case S_RESERVED:
    case S_RESERVED_HIGH:
      if (m == 0) l->u.opaque.len--;
      else if (m < 1 + (int)l->u.opaque.len) s->bytes[m - 1] ^= 0x01;
      else return false;
      return true;
    default:
      return false;
  }
}

static void test_equal_each_field(void **state) {
  (void)state;
  int total = 0;
  for (int k = 0; k < S_COUNT; k++) {
    Sample a, b;
    sample(&a, k);
    sample(&b, k);
    /* Same value in other storage (and other junk in the union): equal. */
    memset(&b.l.u, 0, sizeof b.l.u);
    sample(&b, k);
    assert_true(hurray_layout_equal(&a.l, &b.l, RANK));
    assert_true(hurray_layout_hash(&a.l, RANK) == hurray_layout_hash(&b.l, RANK));
    for (int m = 0;; m++) {
      sample(&b, k);
      if (!mutate(&b, k, m)) break;
      total++;
      if (hurray_layout_equal(&a.l, &b.l, RANK) || hurray_layout_equal(&b.l, &a.l, RANK))
        fail_msg("%s: mutation %d still compares equal", a.what, m);
      if (hurray_layout_hash(&a.l, RANK) == hurray_layout_hash(&b.l, RANK))
        fail_msg("%s: mutation %d hashes alike", a.what, m);
    }
  }
  assert_true(total > 60);
}

/* Only the fields of the tag count: junk elsewhere in the union, and the
 * rank for tags without per-dimension arrays, change nothing. */
static void test_equal_ignores_what_the_tag_does_not_carry(void **state) {
  (void)state;
  for (int k = 0; k < S_COUNT; k++) {
    Sample a, b;
    sample(&a, k);
    memset(&b, 0x00, sizeof b);
    sample(&b, k);
    /* sample() filled the union with junk first; refill b's junk differently */
    HurrayLayout l = b.l;
    memset(&b.l, 0x11, sizeof b.l);
    b.l.tag = l.tag;
    switch (k) {
      case S_STRIDED: b.l.u.strided = l.u.strided; break;
      case S_TILED: b.l.u.tiled = l.u.tiled; break;
      case S_MORTON: b.l.u.morton = l.u.morton; break;
      case S_HILBERT: b.l.u.hilbert = l.u.hilbert; break;
      case S_COO:
        b.l.u.coo.nnz = l.u.coo.nnz;
        b.l.u.coo.is_sorted = l.u.coo.is_sorted;
        break;
      case S_CSR: case S_CSC: b.l.u.csr = l.u.csr; break;
      case S_CSF:
        b.l.u.csf.nnz = l.u.csf.nnz;
        b.l.u.csf.mode_order = l.u.csf.mode_order;
        break;
      case S_BLOCK_PAGED:
        b.l.u.block_paged.page_size = l.u.block_paged.page_size;
        b.l.u.block_paged.num_pages = l.u.block_paged.num_pages;
        b.l.u.block_paged.paged_axis = l.u.block_paged.paged_axis;
        b.l.u.block_paged.num_seqs = l.u.block_paged.num_seqs;
        b.l.u.block_paged.kv_role = l.u.block_paged.kv_role;
        b.l.u.block_paged.layer_index = l.u.block_paged.layer_index;
        b.l.u.block_paged.block_table_index_type = l.u.block_paged.block_table_index_type;
        break;
      case S_COMPOSITE:
        b.l.u.composite.rule = l.u.composite.rule;
        b.l.u.composite.combine_op = l.u.composite.combine_op;
        b.l.u.composite.member_count = l.u.composite.member_count;
        break;
      case S_PRIVATE: case S_PRIVATE_EMPTY:
        b.l.u.private_ext.layout_id = l.u.private_ext.layout_id;
        b.l.u.private_ext.data_len = l.u.private_ext.data_len;
        b.l.u.private_ext.data = l.u.private_ext.data;
        break;
      case S_RESERVED: case S_RESERVED_HIGH:
        b.l.u.opaque.len = l.u.opaque.len;
        b.l.u.opaque.bytes = l.u.opaque.bytes;
        break;
      default: break;
    }
    if (!hurray_layout_equal(&a.l, &b.l, RANK)) fail_msg("%s: junk changed equality", a.what);
    assert_true(hurray_layout_hash(&a.l, RANK) == hurray_layout_hash(&b.l, RANK));
    bool per_dim = k == S_STRIDED || k == S_MORTON || k == S_CSF || k == S_TILED;
    if (!per_dim) {
      assert_true(hurray_layout_equal(&a.l, &b.l, 0));
      assert_true(hurray_layout_equal(&a.l, &b.l, 40));
      assert_true(hurray_layout_hash(&a.l, 0) == hurray_layout_hash(&a.l, RANK));
    }
  }
  /* A tiled stride array of 0 entries is absent whatever its pointer. */
  Sample a, b;
  sample(&a, S_TILED);
  sample(&b, S_TILED);
  b.levels[1].outer_strides = b.outer[1];
  assert_false(hurray_layout_equal(&a.l, &b.l, RANK));
  assert_true(hurray_layout_equal(&a.l, &b.l, 0));
  assert_true(hurray_layout_hash(&a.l, 0) == hurray_layout_hash(&b.l, 0));
  /* The rank of a per-dimension array counts: fewer entries compare fewer. */
  sample(&a, S_STRIDED);
  sample(&b, S_STRIDED);
  b.strides[RANK - 1] = 999;
  assert_false(hurray_layout_equal(&a.l, &b.l, RANK));
  assert_true(hurray_layout_equal(&a.l, &b.l, RANK - 1));
  assert_true(hurray_layout_hash(&a.l, RANK - 1) == hurray_layout_hash(&b.l, RANK - 1));
  /* NULL layouts. */
  assert_false(hurray_layout_equal(NULL, &a.l, RANK));
  assert_false(hurray_layout_equal(&a.l, NULL, RANK));
  assert_false(hurray_layout_equal(NULL, NULL, RANK));
  assert_true(hurray_layout_hash(NULL, RANK) == 0);
}

/* equal => same hash, over every pair of samples and of their copies. */
static void test_hash_consistent(void **state) {
  (void)state;
  static Sample s[S_COUNT];
  static Store st[S_COUNT];
  HurrayLayout c[S_COUNT];
  for (int k = 0; k < S_COUNT; k++) {
    sample(&s[k], k);
    (void)copy_into(&s[k].l, RANK, &st[k], &c[k]);
  }
  for (int i = 0; i < S_COUNT; i++) {
    for (int j = 0; j < S_COUNT; j++) {
      const HurrayLayout *x[2] = {&s[i].l, &c[i]}, *y[2] = {&s[j].l, &c[j]};
      for (int p = 0; p < 4; p++) {
        bool eq = hurray_layout_equal(x[p & 1], y[p >> 1], RANK);
        assert_int_equal(eq, i == j);
        if (eq) assert_true(hurray_layout_hash(x[p & 1], RANK) == hurray_layout_hash(y[p >> 1], RANK));
        else assert_true(hurray_layout_hash(x[p & 1], RANK) != hurray_layout_hash(y[p >> 1], RANK));
      }
    }
  }
}

/* A layout read back from a descriptor equals a copy of the one it was built from. */
static void test_descriptor_layouts(void **state) {
  (void)state;
  Sample s;
  sample(&s, S_TILED);
  uint64_t shape[RANK] = {8, 8, 8};
  /* valid tiled: level 0 strided outer over tiles, nested; level 1 strided inner */
  HurrayBufferHandle h = {1u << 20, 64, HURRAY_DEVICE_CPU, 0, HURRAY_MEMORY_STANDARD, 0};
  for (int d = 0; d < 2; d++)
    for (uint32_t i = 0; i < RANK; i++) s.tile[d][i] = d == 0 ? 4 : 2;
  for (uint32_t i = 0; i < RANK; i++) {
    s.outer[0][i] = (int64_t)(1u << (2 * (RANK - 1 - i)));
    s.inner[1][i] = (int64_t)(1u << (RANK - 1 - i));
  }
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_UINT8;
  f.rank = RANK;
  f.shape = shape;
  f.layout = s.l;
  f.buffer_count = 1;
  f.buffers = &h;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &d, &e) != HURRAY_OK)
    fail_msg("%s", e.message);
  HurrayDescriptorFields g;
  assert_int_equal(hurray_descriptor_fields(d, &g), HURRAY_OK);
  assert_true(hurray_layout_equal(&g.layout, &s.l, RANK));
  Store st;
  HurrayLayout c;
  (void)copy_into(&g.layout, RANK, &st, &c);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  assert_true(hurray_layout_equal(&c, &s.l, RANK)); /* outlives the descriptor */
  assert_true(hurray_layout_hash(&c, RANK) == hurray_layout_hash(&s.l, RANK));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_size_by_tag),
      cmocka_unit_test(test_copy_round_trip),
      cmocka_unit_test(test_copy_in_place),
      cmocka_unit_test(test_every_tag),
      cmocka_unit_test(test_storage_too_small),
      cmocka_unit_test(test_null_and_missing),
      cmocka_unit_test(test_equal_each_field),
      cmocka_unit_test(test_equal_ignores_what_the_tag_does_not_carry),
      cmocka_unit_test(test_hash_consistent),
      cmocka_unit_test(test_descriptor_layouts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
