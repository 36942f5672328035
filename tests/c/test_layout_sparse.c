/* Sparse and block-paged tensors: index-buffer validators, lookups, the
 * block-paged address and to_row_major scatter (src/layout/index_check.c,
 * lookup.c, copy.c). */
#include <stdlib.h>

#include "test_layout_fixture.h"

#define F32 HURRAY_DTYPE_FLOAT32
#define BAD HURRAY_ERR_INVALID_INDEX_DATA

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}
static uint64_t rndn(uint64_t n) { return rnd() % n; }

/* A tensor under test: fields plus owned buffers. */
typedef struct Sp {
  Fx x;
  uint8_t *buf[16];
  uint64_t size[16];
  uint32_t mo[8];
} Sp;

static void sp_free(Sp *s) {
  for (int i = 0; i < 16; i++) {
    free(s->buf[i]);
    s->buf[i] = NULL;
  }
}

/* Sets buffer i to n u64 values. */
static void sp_u64(Sp *s, uint32_t i, const uint64_t *v, size_t n) {
  free(s->buf[i]);
  s->buf[i] = malloc(n * 8 + 1);
  fx_put64(s->buf[i], v, n);
  s->size[i] = n * 8;
  s->x.bufs[i].byte_size = n * 8;
}

static void sp_bytes(Sp *s, uint32_t i, const void *v, size_t n) {
  free(s->buf[i]);
  s->buf[i] = malloc(n + 1);
  if (n) memcpy(s->buf[i], v, n);
  s->size[i] = n;
  s->x.bufs[i].byte_size = n;
}

static HurrayStatus sp_check(Sp *s) {
  hurray_error_clear(&s->x.e);
  return hurray_layout_validate_index_buffers(&s->x.f, (const void *const *)s->buf, s->size,
                                              &s->x.e);
}

#define EXPECT_CHECK(s, st, fieldstr, off)                                          \
  do {                                                                              \
    HurrayStatus st_ = sp_check(s);                                                 \
    if (st_ != (st)) print_error("got %d: %s\n", st_, (s)->x.e.message);            \
    assert_int_equal(st_, (st));                                                    \
    if ((st) != HURRAY_OK) {                                                        \
      assert_string_equal((s)->x.e.field, (fieldstr));                              \
      if ((uint64_t)(off) != ~0ull) assert_int_equal((s)->x.e.offset, (off));       \
    }                                                                               \
  } while (0)

/* ---- COO ------------------------------------------------------------------------------- */

/* coo.md example: [4, 4] f32, (0,1)=1.5 (2,0)=-0.5 (3,3)=2.0. */
static void coo_example(Sp *s) {
  memset(s, 0, sizeof *s);
  fx_init(&s->x, F32, HURRAY_LAYOUT_COO, 2, (uint64_t[]){4, 4}, 2, NULL);
  s->x.f.layout.u.coo.nnz = 3;
  s->x.f.layout.u.coo.is_sorted = 1;
  const float v[3] = {1.5f, -0.5f, 2.0f};
  sp_bytes(s, 0, v, sizeof v);
  sp_u64(s, 1, (uint64_t[]){0, 1, 2, 0, 3, 3}, 6);
}

static void test_coo(void **state) {
  (void)state;
  Sp s;
  coo_example(&s);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  bool found;
  uint64_t pos;
  const void *const *b = (const void *const *)s.buf;
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){2, 0}, &found,
                                               &pos, NULL),
                   HURRAY_OK);
  assert_true(found);
  assert_int_equal(pos, 1);
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){2, 1}, &found,
                                               &pos, NULL),
                   HURRAY_OK);
  assert_false(found);
  float dense[16];
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, b, s.size, dense, sizeof dense, NULL),
                   HURRAY_OK);
  for (int i = 0; i < 16; i++) {
    float want = i == 1 ? 1.5f : i == 8 ? -0.5f : i == 15 ? 2.0f : 0.0f;
    assert_true(dense[i] == want);
  }
  /* Out of bounds: entry 2, dimension 1 (byte (2 * 2 + 1) * 8 of buffer 1). */
  sp_u64(&s, 1, (uint64_t[]){0, 1, 2, 0, 3, 4}, 6);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 40);
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, b, s.size, dense, sizeof dense, NULL), BAD);
  /* Not sorted although is_sorted. */
  sp_u64(&s, 1, (uint64_t[]){0, 1, 3, 3, 2, 0}, 6);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 32);
  s.x.f.layout.u.coo.is_sorted = 0;
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){2, 0}, &found,
                                               &pos, NULL),
                   HURRAY_OK);
  assert_true(found);
  assert_int_equal(pos, 2);
  /* Duplicates: adjacent (no allocation) and far apart (sorted copy). */
  sp_u64(&s, 1, (uint64_t[]){0, 1, 0, 1, 2, 0}, 6);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 16);
  sp_u64(&s, 1, (uint64_t[]){2, 0, 0, 1, 2, 0}, 6);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 32);
  s.x.f.layout.u.coo.is_sorted = 1;
  sp_u64(&s, 1, (uint64_t[]){0, 1, 0, 1, 2, 0}, 6);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 16);
  /* Short indices buffer. */
  sp_u64(&s, 1, (uint64_t[]){0, 1, 2, 0, 3}, 5);
  EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[1]", HURRAY_NO_OFFSET);
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){0, 0}, &found,
                                               &pos, NULL),
                   HURRAY_ERR_BUFFER_SIZE);
  /* Empty COO. */
  s.x.f.layout.u.coo.nnz = 0;
  sp_bytes(&s, 0, NULL, 0);
  sp_bytes(&s, 1, NULL, 0);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  sp_free(&s);
}

static void test_coo_alloc_failure(void **state) {
  (void)state;
  Sp s;
  coo_example(&s);
  s.x.f.layout.u.coo.is_sorted = 0;
  sp_u64(&s, 1, (uint64_t[]){2, 0, 0, 1, 2, 0}, 6);
  tu_alloc_install();
  tu_fail_alloc_after(0);
  EXPECT_CHECK(&s, HURRAY_ERR_OUT_OF_MEMORY, "", ~0ull);
  assert_int_equal(tu_alloc_live(), 0);
  tu_alloc_reset();
  EXPECT_CHECK(&s, BAD, "buffers[1]", 32);
  assert_int_equal(tu_alloc_live(), 0);
  /* Sorted input never allocates. */
  sp_u64(&s, 1, (uint64_t[]){0, 1, 2, 0, 3, 3}, 6);
  tu_fail_alloc_after(0);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  tu_alloc_reset();
  hurray_set_allocator(NULL);
  sp_free(&s);
}

/* ---- CSR / CSC ---------------------------------------------------------------------------- */

/* csr.md example [4, 5]. */
static void csr_example(Sp *s, bool csc) {
  memset(s, 0, sizeof *s);
  fx_init(&s->x, F32, csc ? HURRAY_LAYOUT_CSC : HURRAY_LAYOUT_CSR, 2, (uint64_t[]){4, 5}, 3,
          NULL);
  s->x.f.layout.u.csr.nnz = 5;
  if (!csc) {
    const float v[5] = {1, 2, 3, 4, 5};
    sp_bytes(s, 0, v, sizeof v);
    sp_u64(s, 1, (uint64_t[]){0, 3, 2, 1, 4}, 5);
    sp_u64(s, 2, (uint64_t[]){0, 2, 3, 5, 5}, 5);
  } else {
    const float v[5] = {1, 4, 3, 2, 5};
    sp_bytes(s, 0, v, sizeof v);
    sp_u64(s, 1, (uint64_t[]){0, 2, 1, 0, 2}, 5);
    sp_u64(s, 2, (uint64_t[]){0, 1, 2, 3, 4, 5}, 6);
  }
}

static void test_csr_csc(void **state) {
  (void)state;
  static const float dense_want[20] = {1, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 5, 0, 0, 0, 0, 0};
  for (int csc = 0; csc < 2; csc++) {
    Sp s;
    csr_example(&s, csc);
    const void *const *b = (const void *const *)s.buf;
    EXPECT_CHECK(&s, HURRAY_OK, "", 0);
    float dense[20];
    assert_int_equal(hurray_layout_to_row_major(&s.x.f, b, s.size, dense, sizeof dense, NULL),
                     HURRAY_OK);
    assert_memory_equal(dense, dense_want, sizeof dense);
    for (uint64_t r = 0; r < 4; r++)
      for (uint64_t c = 0; c < 5; c++) {
        bool found;
        uint64_t pos;
        assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){r, c},
                                                     &found, &pos, NULL),
                         HURRAY_OK);
        assert_int_equal(found, dense_want[r * 5 + c] != 0);
        if (found) assert_true(((float *)s.buf[0])[pos] == dense_want[r * 5 + c]);
      }
    sp_free(&s);
  }
  Sp s;
  csr_example(&s, false);
  /* ptr[0] != 0 */
  sp_u64(&s, 2, (uint64_t[]){1, 2, 3, 5, 5}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[2]", 0);
  /* decreasing */
  sp_u64(&s, 2, (uint64_t[]){0, 3, 2, 5, 5}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[2]", 16);
  /* ptr[n] != nnz */
  sp_u64(&s, 2, (uint64_t[]){0, 2, 3, 4, 4}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[2]", 32);
  sp_u64(&s, 2, (uint64_t[]){0, 2, 3, 5, 6}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[2]", 32);
  /* short ptr */
  sp_u64(&s, 2, (uint64_t[]){0, 2, 3, 5}, 4);
  EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[2]", HURRAY_NO_OFFSET);
  sp_u64(&s, 2, (uint64_t[]){0, 2, 3, 5, 5}, 5);
  /* column out of bounds */
  sp_u64(&s, 1, (uint64_t[]){0, 3, 2, 1, 5}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 32);
  /* duplicate and decreasing columns inside a row */
  sp_u64(&s, 1, (uint64_t[]){3, 3, 2, 1, 4}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 8);
  sp_u64(&s, 1, (uint64_t[]){3, 0, 2, 1, 4}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 8);
  /* decreasing across a row boundary is fine */
  sp_u64(&s, 1, (uint64_t[]){0, 3, 2, 1, 4}, 5);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  /* short indices */
  sp_u64(&s, 1, (uint64_t[]){0, 3, 2, 1}, 4);
  EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[1]", HURRAY_NO_OFFSET);
  /* to_row_major validates first */
  sp_u64(&s, 1, (uint64_t[]){0, 3, 2, 1, 9}, 5);
  float dense[20];
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, (const void *const *)s.buf, s.size, dense,
                                              sizeof dense, NULL),
                   BAD);
  /* A lookup through a pointer slice that cannot be right. */
  sp_u64(&s, 1, (uint64_t[]){0, 3, 2, 1, 4}, 5);
  sp_u64(&s, 2, (uint64_t[]){0, 2, 9, 5, 5}, 5);
  bool found;
  uint64_t pos;
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, (const void *const *)s.buf, s.size,
                                               (uint64_t[]){1, 0}, &found, &pos, &s.x.e),
                   BAD);
  assert_false(found);
  sp_u64(&s, 2, (uint64_t[]){0, 3, 2, 5, 5}, 5); /* row 1 = [3, 2) */
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, (const void *const *)s.buf, s.size,
                                               (uint64_t[]){1, 2}, &found, &pos, &s.x.e),
                   BAD);
  assert_string_equal(s.x.e.field, "buffers[2]");
  assert_int_equal(s.x.e.offset, 8);
  /* Dynamic row count: pointer length unknown. */
  s.x.shape[0] = HURRAY_DYNAMIC_DIM;
  EXPECT_CHECK(&s, HURRAY_ERR_INVALID_ARGUMENT, "shape", HURRAY_NO_OFFSET);
  sp_free(&s);
  /* CSC mirrors: col_ptr is buffer 2, row indices bounded by shape[0]. */
  csr_example(&s, true);
  sp_u64(&s, 1, (uint64_t[]){0, 2, 1, 0, 4}, 5);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 32);
  sp_u64(&s, 1, (uint64_t[]){0, 2, 1, 0, 3}, 5);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  sp_free(&s);
}

/* ---- CSF ------------------------------------------------------------------------------------- */

/* csf.md example: [2, 3, 4], identity mode order, nnz 4. */
static void csf_example(Sp *s) {
  memset(s, 0, sizeof *s);
  fx_init(&s->x, F32, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4}, 7, NULL);
  for (uint32_t L = 0; L < 3; L++) s->mo[L] = L;
  s->x.f.layout.u.csf.nnz = 4;
  s->x.f.layout.u.csf.mode_order = s->mo;
  const float v[4] = {1, 2, 3, 4};
  sp_bytes(s, 0, v, sizeof v);
  sp_u64(s, 1, (uint64_t[]){0, 2}, 2);
  sp_u64(s, 2, (uint64_t[]){0, 1}, 2);
  sp_u64(s, 3, (uint64_t[]){0, 2, 3}, 3);
  sp_u64(s, 4, (uint64_t[]){0, 2, 1}, 3);
  sp_u64(s, 5, (uint64_t[]){0, 1, 2, 4}, 4);
  sp_u64(s, 6, (uint64_t[]){1, 3, 0, 2}, 4);
}

static void test_csf(void **state) {
  (void)state;
  Sp s;
  csf_example(&s);
  const void *const *b = (const void *const *)s.buf;
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  bool found;
  uint64_t pos;
  assert_int_equal(
      hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){1, 1, 2}, &found, &pos, NULL),
      HURRAY_OK);
  assert_true(found);
  assert_int_equal(pos, 3);
  assert_int_equal(
      hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){0, 2, 3}, &found, &pos, NULL),
      HURRAY_OK);
  assert_true(found);
  assert_int_equal(pos, 1);
  assert_int_equal(
      hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){1, 2, 2}, &found, &pos, NULL),
      HURRAY_OK);
  assert_false(found);
  assert_int_equal(
      hurray_layout_sparse_lookup(&s.x.f, b, s.size, (uint64_t[]){1, 2, 4}, &found, &pos, NULL),
      HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  float dense[24];
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, b, s.size, dense, sizeof dense, NULL),
                   HURRAY_OK);
  for (int i = 0; i < 24; i++) {
    float want = i == 1 ? 1 : i == 11 ? 2 : i == 16 ? 3 : i == 18 ? 4 : 0;
    assert_true(dense[i] == want);
  }
  /* pos_1[0] != 0 */
  sp_u64(&s, 3, (uint64_t[]){1, 2, 3}, 3);
  EXPECT_CHECK(&s, BAD, "buffers[3]", 0);
  /* pos_1 decreasing */
  sp_u64(&s, 3, (uint64_t[]){0, 3, 2}, 3);
  EXPECT_CHECK(&s, BAD, "buffers[3]", 16);
  sp_u64(&s, 3, (uint64_t[]){0, 2, 3}, 3);
  /* terminal pos_2 != nnz */
  sp_u64(&s, 5, (uint64_t[]){0, 1, 2, 3}, 4);
  EXPECT_CHECK(&s, BAD, "buffers[5]", 24);
  sp_u64(&s, 5, (uint64_t[]){0, 1, 2, 4}, 4);
  /* crd_1 holds fewer entries than pos_1 says */
  sp_u64(&s, 4, (uint64_t[]){0, 2}, 2);
  EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[4]", HURRAY_NO_OFFSET);
  sp_u64(&s, 4, (uint64_t[]){0, 2, 1}, 3);
  /* siblings: duplicate, decreasing; across parents decreasing is fine */
  sp_u64(&s, 6, (uint64_t[]){1, 3, 2, 2}, 4);
  EXPECT_CHECK(&s, BAD, "buffers[6]", 24);
  sp_u64(&s, 6, (uint64_t[]){1, 3, 2, 0}, 4);
  EXPECT_CHECK(&s, BAD, "buffers[6]", 24);
  sp_u64(&s, 4, (uint64_t[]){2, 0, 1}, 3);
  EXPECT_CHECK(&s, BAD, "buffers[4]", 8);
  sp_u64(&s, 4, (uint64_t[]){0, 2, 1}, 3);
  sp_u64(&s, 6, (uint64_t[]){1, 3, 0, 2}, 4);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  /* crd out of bounds: level 1 is dimension 1 (bound 3) */
  sp_u64(&s, 4, (uint64_t[]){0, 3, 1}, 3);
  EXPECT_CHECK(&s, BAD, "buffers[4]", 8);
  sp_u64(&s, 4, (uint64_t[]){0, 2, 1}, 3);
  /* pos_0 must have two entries */
  sp_u64(&s, 1, (uint64_t[]){0}, 1);
  EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[1]", HURRAY_NO_OFFSET);
  sp_free(&s);

  /* Empty tensor: pos_0 = [0, 0], pos_L = [0]. */
  memset(&s, 0, sizeof s);
  fx_init(&s.x, F32, HURRAY_LAYOUT_CSF, 3, (uint64_t[]){2, 3, 4}, 7, NULL);
  for (uint32_t L = 0; L < 3; L++) s.mo[L] = L;
  s.x.f.layout.u.csf.mode_order = s.mo;
  sp_bytes(&s, 0, NULL, 0);
  sp_u64(&s, 1, (uint64_t[]){0, 0}, 2);
  sp_bytes(&s, 2, NULL, 0);
  sp_u64(&s, 3, (uint64_t[]){0}, 1);
  sp_bytes(&s, 4, NULL, 0);
  sp_u64(&s, 5, (uint64_t[]){0}, 1);
  sp_bytes(&s, 6, NULL, 0);
  EXPECT_CHECK(&s, HURRAY_OK, "", 0);
  float dense0[24];
  memset(dense0, 0xFF, sizeof dense0);
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, (const void *const *)s.buf, s.size, dense0,
                                              sizeof dense0, NULL),
                   HURRAY_OK);
  for (int i = 0; i < 24; i++) assert_true(dense0[i] == 0.0f);
  /* nnz 0 but a level-0 node without children */
  sp_u64(&s, 1, (uint64_t[]){0, 1}, 2);
  sp_u64(&s, 2, (uint64_t[]){0}, 1);
  sp_u64(&s, 3, (uint64_t[]){0, 0}, 2);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 8);
  sp_free(&s);
}

/* ---- random sparse tensors in every format ------------------------------------------------- */

typedef struct Ref {
  uint32_t rank;
  uint64_t shape[4];
  uint64_t vol;
  uint8_t val[1024]; /* 0 = not stored */
} Ref;

static void unflatten(const Ref *r, uint64_t e, uint64_t *idx) {
  for (uint32_t k = r->rank; k-- > 0;) {
    idx[k] = e % r->shape[k];
    e /= r->shape[k];
  }
}

static void pack_expected(uint8_t type, const Ref *r, uint8_t *out, uint64_t *n) {
  if (type == HURRAY_DTYPE_UINT8) {
    memcpy(out, r->val, r->vol);
    *n = r->vol;
    return;
  }
  *n = (r->vol + 1) / 2;
  memset(out, 0, *n);
  for (uint64_t e = 0; e < r->vol; e++) out[e / 2] |= (uint8_t)((r->val[e] & 15) << (4 * (e % 2)));
}

static void put_values(Sp *s, uint8_t type, const uint8_t *vals, uint64_t n) {
  uint8_t tmp[1024] = {0};
  if (type == HURRAY_DTYPE_UINT8) {
    sp_bytes(s, 0, vals, n);
    return;
  }
  for (uint64_t i = 0; i < n; i++) tmp[i / 2] |= (uint8_t)((vals[i] & 15) << (4 * (i % 2)));
  sp_bytes(s, 0, tmp, (n + 1) / 2);
}

static void check_against(Sp *s, uint8_t type, const Ref *r) {
  const void *const *b = (const void *const *)s->buf;
  HurrayStatus st = sp_check(s);
  if (st != HURRAY_OK) print_error("%s\n", s->x.e.message);
  assert_int_equal(st, HURRAY_OK);
  /* The descriptor rules agree with the buffers as built. */
  FX_ACCEPT(&s->x, HURRAY_DECODE_STRICT);
  uint8_t want[1024], got[1024];
  uint64_t n;
  pack_expected(type, r, want, &n);
  memset(got, 0xEE, sizeof got);
  st = hurray_layout_to_row_major(&s->x.f, b, s->size, got, n, &s->x.e);
  if (st != HURRAY_OK) print_error("%s\n", s->x.e.message);
  assert_int_equal(st, HURRAY_OK);
  assert_memory_equal(want, got, n);
  for (uint64_t e = 0; e < r->vol; e++) {
    uint64_t idx[4];
    unflatten(r, e, idx);
    bool found;
    uint64_t pos;
    assert_int_equal(hurray_layout_sparse_lookup(&s->x.f, b, s->size, idx, &found, &pos, NULL),
                     HURRAY_OK);
    assert_int_equal(found, r->val[e] != 0);
    if (found) {
      uint8_t v = (uint8_t)(type == HURRAY_DTYPE_UINT8
                                ? s->buf[0][pos]
                                : (s->buf[0][pos / 2] >> (4 * (pos % 2))) & 15);
      assert_int_equal(v, r->val[e]);
    }
  }
}

static void random_ref(Ref *r, uint32_t rank) {
  r->rank = rank;
  r->vol = 1;
  for (uint32_t k = 0; k < rank; k++) {
    r->shape[k] = 1 + rndn(rank <= 2 ? 9 : 5);
    r->vol *= r->shape[k];
  }
  uint64_t density = rndn(101);
  for (uint64_t e = 0; e < r->vol; e++)
    r->val[e] = rndn(100) < density ? (uint8_t)(1 + rndn(15)) : 0;
}

static void build_coo(Sp *s, uint8_t type, const Ref *r, bool sorted) {
  uint64_t order[1024], nnz = 0, idx[4 * 1024];
  uint8_t vals[1024];
  for (uint64_t e = 0; e < r->vol; e++)
    if (r->val[e]) order[nnz++] = e;
  if (!sorted)
    for (uint64_t i = nnz; i > 1; i--) {
      uint64_t j = rndn(i), t = order[i - 1];
      order[i - 1] = order[j];
      order[j] = t;
    }
  for (uint64_t i = 0; i < nnz; i++) {
    unflatten(r, order[i], idx + i * r->rank);
    vals[i] = r->val[order[i]];
  }
  memset(s, 0, sizeof *s);
  fx_init(&s->x, type, HURRAY_LAYOUT_COO, r->rank, r->shape, 2, NULL);
  s->x.f.layout.u.coo.nnz = nnz;
  s->x.f.layout.u.coo.is_sorted = sorted;
  put_values(s, type, vals, nnz);
  sp_u64(s, 1, idx, nnz * r->rank);
}

static void build_compressed(Sp *s, uint8_t type, const Ref *r, bool csc) {
  uint64_t nr = r->shape[0], nc = r->shape[1];
  uint64_t n = csc ? nc : nr, m = csc ? nr : nc;
  uint64_t ptr[16] = {0}, ind[1024], nnz = 0;
  uint8_t vals[1024];
  for (uint64_t o = 0; o < n; o++) {
    for (uint64_t i = 0; i < m; i++) {
      uint64_t e = csc ? i * nc + o : o * nc + i;
      if (r->val[e]) {
        ind[nnz] = i;
        vals[nnz++] = r->val[e];
      }
    }
    ptr[o + 1] = nnz;
  }
  memset(s, 0, sizeof *s);
  fx_init(&s->x, type, csc ? HURRAY_LAYOUT_CSC : HURRAY_LAYOUT_CSR, 2, r->shape, 3, NULL);
  s->x.f.layout.u.csr.nnz = nnz;
  put_values(s, type, vals, nnz);
  sp_u64(s, 1, ind, nnz);
  sp_u64(s, 2, ptr, n + 1);
}

static void build_csf(Sp *s, uint8_t type, const Ref *r, const uint32_t *mo) {
  uint32_t R = r->rank;
  /* Entries as storage-order tuples, sorted. */
  uint64_t tup[1024][4], nnz = 0;
  uint8_t vals[1024];
  for (uint64_t e = 0; e < r->vol; e++) {
    if (!r->val[e]) continue;
    uint64_t idx[4];
    unflatten(r, e, idx);
    for (uint32_t L = 0; L < R; L++) tup[nnz][L] = idx[mo[L]];
    vals[nnz++] = r->val[e];
  }
  for (uint64_t i = 1; i < nnz; i++) /* insertion sort of tuples + values */
    for (uint64_t j = i; j > 0; j--) {
      int c = 0;
      for (uint32_t L = 0; L < R && c == 0; L++)
        c = tup[j - 1][L] < tup[j][L] ? -1 : tup[j - 1][L] > tup[j][L] ? 1 : 0;
      if (c <= 0) break;
      uint64_t t[4];
      memcpy(t, tup[j], sizeof t);
      memcpy(tup[j], tup[j - 1], sizeof t);
      memcpy(tup[j - 1], t, sizeof t);
      uint8_t v = vals[j];
      vals[j] = vals[j - 1];
      vals[j - 1] = v;
    }
  static uint64_t crd[4][1024], cnt[4][1025];
  uint64_t nodes[4] = {0};
  memset(cnt, 0, sizeof cnt);
  for (uint64_t i = 0; i < nnz; i++) {
    uint32_t dl = 0;
    if (i > 0)
      while (dl < R && tup[i][dl] == tup[i - 1][dl]) dl++;
    for (uint32_t L = dl; L < R; L++) {
      uint64_t parent = L == 0 ? 0 : nodes[L - 1] - 1;
      crd[L][nodes[L]++] = tup[i][L];
      cnt[L][parent]++;
    }
  }
  memset(s, 0, sizeof *s);
  fx_init(&s->x, type, HURRAY_LAYOUT_CSF, R, r->shape, 2 * R + 1, NULL);
  memcpy(s->mo, mo, R * sizeof *mo);
  s->x.f.layout.u.csf.nnz = nnz;
  s->x.f.layout.u.csf.mode_order = s->mo;
  put_values(s, type, vals, nnz);
  uint64_t parents = 1;
  for (uint32_t L = 0; L < R; L++) {
    uint64_t pos[1025];
    pos[0] = 0;
    for (uint64_t k = 0; k < parents; k++) pos[k + 1] = pos[k] + cnt[L][k];
    sp_u64(s, 2 * L + 1, pos, parents + 1);
    sp_u64(s, 2 * L + 2, crd[L], nodes[L]);
    parents = nodes[L];
  }
}

static void test_sparse_fuzz(void **state) {
  (void)state;
  for (int iter = 0; iter < 300; iter++) {
    uint8_t type = rndn(2) ? HURRAY_DTYPE_UINT8 : HURRAY_DTYPE_UINT4;
    Ref r;
    Sp s;
    random_ref(&r, (uint32_t)(1 + rndn(4)));
    build_coo(&s, type, &r, true);
    check_against(&s, type, &r);
    sp_free(&s);
    build_coo(&s, type, &r, false);
    check_against(&s, type, &r);
    sp_free(&s);
    if (r.rank == 2) {
      build_compressed(&s, type, &r, false);
      check_against(&s, type, &r);
      sp_free(&s);
      build_compressed(&s, type, &r, true);
      check_against(&s, type, &r);
      sp_free(&s);
    }
    if (r.rank >= 3) {
      uint32_t mo[4] = {0, 1, 2, 3};
      for (uint32_t i = r.rank; i > 1; i--) {
        uint32_t j = (uint32_t)rndn(i), t = mo[i - 1];
        mo[i - 1] = mo[j];
        mo[j] = t;
      }
      build_csf(&s, type, &r, mo);
      check_against(&s, type, &r);
      sp_free(&s);
    }
  }
}

static void test_coo_subbyte_duplicates(void **state) {
  (void)state;
  /* bool COO with a duplicate: to_row_major lets the later entry win. */
  Sp s;
  memset(&s, 0, sizeof s);
  fx_init(&s.x, HURRAY_DTYPE_BOOL, HURRAY_LAYOUT_COO, 1, (uint64_t[]){10}, 2, NULL);
  s.x.f.layout.u.coo.nnz = 3;
  const uint8_t v = 0x03; /* values 1, 1, 0 */
  sp_bytes(&s, 0, &v, 1);
  sp_u64(&s, 1, (uint64_t[]){9, 2, 9}, 3);
  uint8_t out[2] = {0xFF, 0xFF};
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, (const void *const *)s.buf, s.size, out, 2,
                                              NULL),
                   HURRAY_OK);
  assert_int_equal(out[0], 0x04);
  assert_int_equal(out[1], 0x00);
  EXPECT_CHECK(&s, BAD, "buffers[1]", 16);
  /* Values buffer too short for nnz. */
  s.x.f.layout.u.coo.nnz = 3;
  sp_bytes(&s, 0, NULL, 0);
  assert_int_equal(hurray_layout_to_row_major(&s.x.f, (const void *const *)s.buf, s.size, out, 2,
                                              &s.x.e),
                   HURRAY_ERR_BUFFER_SIZE);
  assert_string_equal(s.x.e.field, "buffers[0]");
  sp_free(&s);
}

/* ---- block-paged -------------------------------------------------------------------------- */

static void paged_example(Sp *s, uint8_t itype) {
  memset(s, 0, sizeof *s);
  fx_init(&s->x, HURRAY_DTYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, 3, (uint64_t[]){9, 2, 8}, 3,
          NULL);
  s->x.f.layout.u.block_paged.page_size = 4;
  s->x.f.layout.u.block_paged.num_pages = 5;
  s->x.f.layout.u.block_paged.num_seqs = 2;
  s->x.f.layout.u.block_paged.layer_index = 3;
  s->x.f.layout.u.block_paged.block_table_index_type = itype;
  uint8_t pool[640] = {0};
  sp_bytes(s, 0, pool, sizeof pool);
  if (itype == HURRAY_BLOCK_INDEX_U32) {
    uint8_t bt[12], sp[12];
    fx_put32(bt, (uint32_t[]){0, 1, 0}, 3);
    fx_put32(sp, (uint32_t[]){0, 2, 3}, 3);
    sp_bytes(s, 1, bt, 12);
    sp_bytes(s, 2, sp, 12);
  } else {
    sp_u64(s, 1, (uint64_t[]){0, 1, 0}, 3);
    sp_u64(s, 2, (uint64_t[]){0, 2, 3}, 3);
  }
}

static void test_block_paged(void **state) {
  (void)state;
  for (uint8_t it = 0; it < 2; it++) {
    Sp s;
    paged_example(&s, it);
    const void *const *b = (const void *const *)s.buf;
    uint64_t w = it ? 8 : 4;
    EXPECT_CHECK(&s, HURRAY_OK, "", 0);
    FX_ACCEPT(&s.x, HURRAY_DECODE_STRICT);
    uint64_t flat, slot;
    /* seq 0, token 5: page 1 of seq 0 → physical page 1, slot 5. */
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 0, 5, 1, 3, &flat, &slot, NULL),
        HURRAY_OK);
    assert_int_equal(slot, 5);
    assert_int_equal(flat, (5 * 2 + 1) * 8 + 3);
    /* seq 1, token 2 aliases physical page 0. */
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 1, 2, 0, 0, &flat, NULL, NULL),
        HURRAY_OK);
    assert_int_equal(flat, 2 * 2 * 8);
    /* bounds */
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 0, 8, 0, 0, &flat, NULL, NULL),
        HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 1, 4, 0, 0, &flat, NULL, NULL),
        HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 2, 0, 0, 0, &flat, NULL, NULL),
        HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 0, 0, 2, 0, &flat, NULL, NULL),
        HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 0, 0, 0, 8, &flat, NULL, NULL),
        HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    /* generic validator through the descriptor's buffers */
    s.x.f.layout.u.block_paged.num_pages = 1; /* page 1 no longer exists */
    EXPECT_CHECK(&s, BAD, "buffers[1]", w);
    assert_int_equal(
        hurray_layout_block_paged_address(&s.x.f, b, s.size, 0, 5, 0, 0, &flat, NULL, NULL), BAD);
    s.x.f.layout.u.block_paged.num_pages = 5;
    s.size[2] = 2 * w; /* seq_ptr needs num_seqs + 1 entries */
    EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[2]", HURRAY_NO_OFFSET);
    s.size[2] = 3 * w;
    s.size[1] = 2 * w; /* block_table shorter than seq_ptr[num_seqs] */
    EXPECT_CHECK(&s, HURRAY_ERR_BUFFER_SIZE, "buffers[1]", HURRAY_NO_OFFSET);
    s.size[1] = 4 * w; /* longer is fine outside exact mode */
    EXPECT_CHECK(&s, HURRAY_OK, "", 0);
    sp_free(&s);
  }
}

static void test_block_paged_standalone(void **state) {
  (void)state;
  HurrayError e;
  uint8_t sp[16], bt[16];
  const uint32_t E = HURRAY_INDEX_EXACT_LENGTHS;
  fx_put32(sp, (uint32_t[]){0, 2, 3}, 3);
  fx_put32(bt, (uint32_t[]){0, 1, 0}, 3);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 12, E, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 16, E, &e), BAD);
  assert_string_equal(e.field, "block_table");
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 16, 0, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 16, bt, 12, E, &e), BAD);
  assert_string_equal(e.field, "seq_ptr");
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 16, bt, 12, 0, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 8, E, &e),
                   HURRAY_ERR_BUFFER_SIZE); /* shorter than its content, exact or not */
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 8, 0, &e),
                   HURRAY_ERR_BUFFER_SIZE);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 8, bt, 12, 0, &e),
                   HURRAY_ERR_BUFFER_SIZE);
  /* id == num_pages */
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 1, sp, 12, bt, 12, E, &e), BAD);
  assert_int_equal(e.offset, 4);
  /* seq_ptr[0] != 0, decreasing */
  fx_put32(sp, (uint32_t[]){1, 2, 3}, 3);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 12, E, &e), BAD);
  assert_int_equal(e.offset, 0);
  fx_put32(sp, (uint32_t[]){0, 3, 2}, 3);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 12, E, &e), BAD);
  assert_int_equal(e.offset, 8);
  /* prefix sharing (aliasing) is valid */
  fx_put32(sp, (uint32_t[]){0, 2, 4}, 3);
  fx_put32(bt, (uint32_t[]){4, 3, 4, 3}, 4);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 2, 5, sp, 12, bt, 16, E, &e),
                   HURRAY_OK);
  /* empty batch: seq_ptr = [0], block_table empty and NULL */
  fx_put32(sp, (uint32_t[]){0}, 1);
  assert_int_equal(hurray_block_paged_validate_index_buffers(0, 0, 0, sp, 4, NULL, 0, E, &e),
                   HURRAY_OK);
  /* uint64 entries */
  fx_put64(sp, (uint64_t[]){0, 1}, 2);
  fx_put64(bt, (uint64_t[]){(1ull << 33)}, 1);
  assert_int_equal(hurray_block_paged_validate_index_buffers(1, 1, (1ull << 33) + 1, sp, 16, bt,
                                                             8, E, &e),
                   HURRAY_OK);
  assert_int_equal(
      hurray_block_paged_validate_index_buffers(1, 1, 1ull << 33, sp, 16, bt, 8, E, &e), BAD);
  /* arguments */
  assert_int_equal(hurray_block_paged_validate_index_buffers(2, 1, 5, sp, 16, bt, 8, 0, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_block_paged_validate_index_buffers(1, 1, 5, sp, 16, bt, 8, 2, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_block_paged_validate_index_buffers(1, 1, 5, NULL, 16, bt, 8, 0, &e),
                   HURRAY_ERR_NULL_POINTER);
}

static void test_generic_entry(void **state) {
  (void)state;
  Sp s;
  memset(&s, 0, sizeof s);
  /* Dense layouts and composite heads have no index buffers. */
  fx_init(&s.x, F32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4}, 1, NULL);
  assert_int_equal(hurray_layout_validate_index_buffers(&s.x.f, NULL, NULL, NULL), HURRAY_OK);
  fx_init(&s.x, F32, HURRAY_LAYOUT_COMPOSITE, 1, (uint64_t[]){4}, 0, NULL);
  s.x.f.layout.u.composite.rule = HURRAY_COMPOSITE_GROUP;
  assert_int_equal(hurray_layout_validate_index_buffers(&s.x.f, NULL, NULL, NULL), HURRAY_OK);
  fx_init(&s.x, F32, 0x20, 1, (uint64_t[]){4}, 1, NULL);
  assert_int_equal(hurray_layout_validate_index_buffers(&s.x.f, NULL, NULL, &s.x.e),
                   HURRAY_ERR_INVALID_LAYOUT);
  assert_int_equal(hurray_layout_validate_index_buffers(NULL, NULL, NULL, NULL),
                   HURRAY_ERR_NULL_POINTER);
  /* Too few buffers; NULL sizes take the handles' byte_size. */
  coo_example(&s);
  s.x.f.buffer_count = 1;
  assert_int_equal(sp_check(&s), HURRAY_ERR_INVALID_ARGUMENT);
  s.x.f.buffer_count = 2;
  assert_int_equal(hurray_layout_validate_index_buffers(&s.x.f, (const void *const *)s.buf, NULL,
                                                        NULL),
                   HURRAY_OK);
  s.x.bufs[1].byte_size = 40;
  assert_int_equal(hurray_layout_validate_index_buffers(&s.x.f, (const void *const *)s.buf, NULL,
                                                        NULL),
                   HURRAY_ERR_BUFFER_SIZE);
  /* A NULL buffer that claims bytes. */
  free(s.buf[1]);
  s.buf[1] = NULL;
  assert_int_equal(sp_check(&s), HURRAY_ERR_NULL_POINTER);
  /* Lookup argument errors. */
  bool found;
  uint64_t pos;
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, NULL, NULL, (uint64_t[]){0, 0}, NULL, &pos,
                                               NULL),
                   HURRAY_ERR_NULL_POINTER);
  fx_init(&s.x, F32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4}, 1, NULL);
  assert_int_equal(hurray_layout_sparse_lookup(&s.x.f, NULL, NULL, (uint64_t[]){0}, &found, &pos,
                                               NULL),
                   HURRAY_ERR_INVALID_ARGUMENT);
  sp_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coo),
      cmocka_unit_test(test_coo_alloc_failure),
      cmocka_unit_test(test_csr_csc),
      cmocka_unit_test(test_csf),
      cmocka_unit_test(test_sparse_fuzz),
      cmocka_unit_test(test_coo_subbyte_duplicates),
      cmocka_unit_test(test_block_paged),
      cmocka_unit_test(test_block_paged_standalone),
      cmocka_unit_test(test_generic_entry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
