/* Composite validator (include/hurray/composite.h, src/composite/validator.c). */
#include <stdlib.h>

#include "test_layout_fixture.h"

#define F32 HURRAY_DTYPE_FLOAT32
#define CMP HURRAY_ERR_INVALID_COMPOSITE

/* A member: fields plus its shard and role storage. */
typedef struct Mem {
  Fx x;
  uint64_t parent[8], off[8];
  HurrayShard shard;
  HurrayCompositeMember cm;
} Mem;

static void head_init(Fx *h, uint8_t rule, uint8_t op, uint32_t n, uint32_t rank,
                      const uint64_t *shape) {
  fx_init(h, F32, HURRAY_LAYOUT_COMPOSITE, rank, shape, 0, NULL);
  h->f.layout.u.composite.rule = rule;
  h->f.layout.u.composite.combine_op = op;
  h->f.layout.u.composite.member_count = n;
}

/* Dense member of shape `shape` at `off` in a parent of shape `parent`;
 * role < 0: no composite member section. */
static void mem_init(Mem *m, uint32_t rank, const uint64_t *parent, const uint64_t *off,
                     const uint64_t *shape, int role) {
  fx_init(&m->x, F32, HURRAY_LAYOUT_ROW_MAJOR, rank, shape, 1, NULL);
  for (uint32_t k = 0; k < rank && parent != NULL; k++) {
    m->parent[k] = parent[k];
    m->off[k] = off[k];
  }
  m->shard.parent_shape = m->parent;
  m->shard.offset = m->off;
  m->x.f.shard = parent ? &m->shard : NULL;
  m->cm.role = (uint8_t)(role < 0 ? 0 : role);
  m->x.f.composite_member = role < 0 ? NULL : &m->cm;
}

static HurrayCompositeValidator *start(const Fx *h, uint32_t options) {
  HurrayCompositeValidator *v = NULL;
  HurrayError e;
  HurrayStatus st = hurray_composite_validator_new(&h->f, 0, options, &v, &e);
  if (st != HURRAY_OK) print_error("%s\n", e.message);
  assert_int_equal(st, HURRAY_OK);
  assert_non_null(v);
  return v;
}

#define PUSH_OK(v, m) \
  assert_int_equal(hurray_composite_validator_push((v), &(m)->x.f, NULL), HURRAY_OK)

#define PUSH_FAIL(v, m, st, fieldstr)                                        \
  do {                                                                       \
    HurrayError e_;                                                          \
    hurray_error_clear(&e_);                                                 \
    assert_int_equal(hurray_composite_validator_push((v), &(m)->x.f, &e_), (st)); \
    assert_string_equal(e_.field, (fieldstr));                               \
  } while (0)

static const uint64_t S88[2] = {8, 8}, S84[2] = {8, 4}, Z[2] = {0, 0}, O4[2] = {0, 4};

/* ---- partition ---------------------------------------- */

static void test_partition(void **state) {
  (void)state;
  Fx h;
  Mem a, b;
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, 2, 2, S88);
  /* composite.md example: two [8, 4] halves. */
  HurrayCompositeValidator *v = start(&h, 0);
  assert_int_equal(hurray_composite_validator_remaining(v), 2);
  mem_init(&a, 2, S88, Z, S84, -1);
  mem_init(&b, 2, S88, O4, S84, -1);
  PUSH_OK(v, &a);
  assert_int_equal(hurray_composite_validator_remaining(v), 1);
  PUSH_OK(v, &b);
  assert_int_equal(hurray_composite_validator_remaining(v), 0);
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_OK);
  /* a third member is one too many */
  PUSH_FAIL(v, &b, CMP, "members[2]");
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_ERR_INVALID_STATE);
  hurray_composite_validator_destroy(&v);
  assert_null(v);
  hurray_composite_validator_destroy(&v);
  hurray_composite_validator_destroy(NULL);

  /* overlap: both at offset 0 (volumes add up, boxes overlap) */
  v = start(&h, 0);
  PUSH_OK(v, &a);
  PUSH_FAIL(v, &a, CMP, "members[1]");
  PUSH_FAIL(v, &a, HURRAY_ERR_INVALID_STATE, "");
  hurray_composite_validator_destroy(&v);
  /* gap: second member [8, 3] */
  v = start(&h, 0);
  PUSH_OK(v, &a);
  b.x.shape[1] = 3;
  PUSH_FAIL(v, &b, CMP, "members");
  hurray_composite_validator_destroy(&v);
  b.x.shape[1] = 4;
  /* torn: only one member arrives */
  v = start(&h, 0);
  PUSH_OK(v, &a);
  HurrayError e;
  assert_int_equal(hurray_composite_validator_finish(v, &e), CMP);
  assert_string_equal(e.field, "members");
  hurray_composite_validator_destroy(&v);

  /* per-member rules */
  struct { const char *field; } cases[] = {{"members[0].shard"},
                                           {"members[0].shard.parent_shape[1]"},
                                           {"members[0].shard.offset[1]"},
                                           {"members[0].type_tag"},
                                           {"members[0].composite_member"},
                                           {"members[0].rank"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    Mem m;
    mem_init(&m, 2, S88, Z, S84, -1);
    switch (c) {
      case 0: m.x.f.shard = NULL; break;
      case 1: m.parent[1] = 9; break;
      case 2: m.off[1] = 5; break; /* 5 + 4 > 8 */
      case 3: m.x.f.type_tag = HURRAY_DTYPE_FLOAT16; break;
      case 4: m.x.f.composite_member = &m.cm; break;
      default: m.x.f.rank = 1; break;
    }
    v = start(&h, 0);
    PUSH_FAIL(v, &m, CMP, cases[c].field);
    hurray_composite_validator_destroy(&v);
  }
  /* a box exactly at the edge is in bounds; offset + extent overflow is not */
  Mem m;
  mem_init(&m, 2, S88, O4, S84, -1);
  v = start(&h, 0);
  PUSH_OK(v, &m);
  m.off[1] = UINT64_MAX - 1;
  PUSH_FAIL(v, &m, CMP, "members[1].shard.offset[1]");
  hurray_composite_validator_destroy(&v);
  /* a quantized member may store another type (its decoded type is not named) */
  HurrayQuantization q;
  memset(&q, 0, sizeof q);
  q.scheme = HURRAY_QUANT_PER_TENSOR_AFFINE;
  mem_init(&m, 2, S88, Z, S84, -1);
  m.x.f.type_tag = HURRAY_DTYPE_INT8;
  m.x.f.quantization = &q;
  v = start(&h, 0);
  PUSH_OK(v, &m);
  hurray_composite_validator_destroy(&v);
  /* member_count 0: fine for an empty head, a gap otherwise */
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, 0, 2, (uint64_t[]){0, 8});
  v = start(&h, 0);
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_OK);
  hurray_composite_validator_destroy(&v);
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, 0, 2, S88);
  v = start(&h, 0);
  assert_int_equal(hurray_composite_validator_finish(v, NULL), CMP);
  hurray_composite_validator_destroy(&v);
  /* scalar partition: exactly one member */
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, 2, 0, NULL);
  mem_init(&m, 0, Z, Z, NULL, -1);
  v = start(&h, 0);
  PUSH_OK(v, &m);
  PUSH_FAIL(v, &m, CMP, "members[1]");
  hurray_composite_validator_destroy(&v);
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, 1, 0, NULL);
  v = start(&h, 0);
  PUSH_OK(v, &m);
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_OK);
  hurray_composite_validator_destroy(&v);
}

/* Exact-cover checks against a brute-force count on random box sets. */
static uint64_t g_rng = 0xDEADBEEFCAFEF00Dull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static void test_partition_fuzz(void **state) {
  (void)state;
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 500; iter++) {
    uint64_t shape[3] = {1 + rnd() % 6, 1 + rnd() % 6, 1 + rnd() % 4};
    uint32_t n = (uint32_t)(1 + rnd() % 6);
    Mem *ms = calloc(n, sizeof *ms);
    static uint8_t cover[6 * 6 * 4];
    memset(cover, 0, sizeof cover);
    bool exact = true;
    if (iter % 2 == 0) {
      /* A true partition: split dim 0 (or 1) into n slabs where possible. */
      uint32_t dim = (uint32_t)(rnd() % 2);
      uint64_t cut = 0;
      n = (uint32_t)(shape[dim] < n ? shape[dim] : n);
      for (uint32_t i = 0; i < n; i++) {
        uint64_t ext = i + 1 == n ? shape[dim] - cut : 1 + rnd() % (shape[dim] - cut - (n - 1 - i));
        uint64_t off[3] = {0, 0, 0}, sh[3] = {shape[0], shape[1], shape[2]};
        off[dim] = cut;
        sh[dim] = ext;
        mem_init(&ms[i], 3, shape, off, sh, -1);
        cut += ext;
      }
    } else {
      for (uint32_t i = 0; i < n; i++) {
        uint64_t off[3], sh[3];
        for (int k = 0; k < 3; k++) {
          off[k] = rnd() % shape[k];
          sh[k] = 1 + rnd() % (shape[k] - off[k]);
        }
        mem_init(&ms[i], 3, shape, off, sh, -1);
      }
    }
    for (uint32_t i = 0; i < n; i++)
      for (uint64_t a = ms[i].off[0]; a < ms[i].off[0] + ms[i].x.shape[0]; a++)
        for (uint64_t b = ms[i].off[1]; b < ms[i].off[1] + ms[i].x.shape[1]; b++)
          for (uint64_t c = ms[i].off[2]; c < ms[i].off[2] + ms[i].x.shape[2]; c++)
            cover[(a * 6 + b) * 4 + c]++;
    for (uint64_t a = 0; a < shape[0]; a++)
      for (uint64_t b = 0; b < shape[1]; b++)
        for (uint64_t c = 0; c < shape[2]; c++)
          if (cover[(a * 6 + b) * 4 + c] != 1) exact = false;
    Fx h;
    head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, n, 3, shape);
    HurrayCompositeValidator *v = start(&h, 0);
    HurrayStatus st = HURRAY_OK;
    for (uint32_t i = 0; i < n && st == HURRAY_OK; i++)
      st = hurray_composite_validator_push(v, &ms[i].x.f, NULL);
    if (st == HURRAY_OK) st = hurray_composite_validator_finish(v, NULL);
    assert_int_equal(st, exact ? HURRAY_OK : CMP);
    if (exact) accepted++;
    else rejected++;
    hurray_composite_validator_destroy(&v);
    free(ms);
  }
  assert_true(accepted > 100);
  assert_true(rejected > 100);
}

static void test_partition_many(void **state) {
  (void)state;
  /* 2000 column slabs of a [4, 2000] head: the sweep runs along dim 1. */
  const uint32_t n = 2000;
  Fx h;
  uint64_t shape[2] = {4, n};
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, n, 2, shape);
  HurrayCompositeValidator *v = start(&h, 0);
  Mem m;
  for (uint32_t i = 0; i < n; i++) {
    mem_init(&m, 2, shape, (uint64_t[]){0, n - 1 - i}, (uint64_t[]){4, 1}, -1);
    PUSH_OK(v, &m);
  }
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_OK);
  hurray_composite_validator_destroy(&v);
  /* the same with one slab shifted onto its neighbour */
  v = start(&h, 0);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t col = i == 777 ? 778 : i;
    mem_init(&m, 2, shape, (uint64_t[]){0, col}, (uint64_t[]){4, 1}, -1);
    if (i + 1 < n) PUSH_OK(v, &m);
    else PUSH_FAIL(v, &m, CMP, "members[778]");
  }
  hurray_composite_validator_destroy(&v);
}

/* ---- overlay and group ---------------------------------------- */

static void test_overlay(void **state) {
  (void)state;
  Fx h;
  Mem base, corr;
  head_init(&h, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_REPLACE, 3, 2, S88);
  mem_init(&base, 2, S88, Z, S88, HURRAY_MEMBER_ROLE_BASE);
  mem_init(&corr, 2, S88, O4, S84, HURRAY_MEMBER_ROLE_CORRECTION);
  HurrayCompositeValidator *v = start(&h, 0);
  PUSH_OK(v, &base);
  PUSH_OK(v, &corr);
  PUSH_OK(v, &corr); /* corrections may overlap */
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_OK);
  hurray_composite_validator_destroy(&v);
  /* SpQR example: quantized int4 base, f16 head would differ; a COO correction. */
  Mem coo;
  mem_init(&coo, 2, S88, Z, S88, HURRAY_MEMBER_ROLE_CORRECTION);
  coo.x.f.layout.tag = HURRAY_LAYOUT_COO;
  v = start(&h, 0);
  PUSH_OK(v, &base);
  PUSH_OK(v, &coo);
  hurray_composite_validator_destroy(&v);
  /* the first member must be a spanning base */
  v = start(&h, 0);
  PUSH_FAIL(v, &corr, CMP, "members[0].composite_member.role");
  hurray_composite_validator_destroy(&v);
  Mem half;
  mem_init(&half, 2, S88, Z, S84, HURRAY_MEMBER_ROLE_BASE);
  v = start(&h, 0);
  PUSH_FAIL(v, &half, CMP, "members[0].shard.offset[1]");
  hurray_composite_validator_destroy(&v);
  mem_init(&half, 2, S88, (uint64_t[]){0, 0}, S88, HURRAY_MEMBER_ROLE_BASE);
  half.x.shape[0] = 7;
  v = start(&h, 0);
  PUSH_FAIL(v, &half, CMP, "members[0].shard.offset[0]");
  hurray_composite_validator_destroy(&v);
  /* a second base, a reserved role, a missing section, a missing shard */
  v = start(&h, 0);
  PUSH_OK(v, &base);
  PUSH_FAIL(v, &base, CMP, "members[1].composite_member.role");
  hurray_composite_validator_destroy(&v);
  Mem odd;
  mem_init(&odd, 2, S88, Z, S88, 2);
  v = start(&h, 0);
  PUSH_OK(v, &base);
  PUSH_FAIL(v, &odd, CMP, "members[1].composite_member.role");
  hurray_composite_validator_destroy(&v);
  mem_init(&odd, 2, S88, Z, S88, -1);
  v = start(&h, 0);
  PUSH_FAIL(v, &odd, CMP, "members[0].composite_member");
  hurray_composite_validator_destroy(&v);
  odd.x.f.composite_member = &odd.cm;
  odd.cm.role = HURRAY_MEMBER_ROLE_BASE;
  odd.x.f.shard = NULL;
  v = start(&h, 0);
  PUSH_FAIL(v, &odd, CMP, "members[0].shard");
  hurray_composite_validator_destroy(&v);
  /* type mismatch */
  mem_init(&odd, 2, S88, Z, S88, HURRAY_MEMBER_ROLE_BASE);
  odd.x.f.type_tag = HURRAY_DTYPE_FLOAT64;
  v = start(&h, 0);
  PUSH_FAIL(v, &odd, CMP, "members[0].type_tag");
  hurray_composite_validator_destroy(&v);
  /* an overlay head of 0 members cannot be started */
  head_init(&h, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 0, 2, S88);
  HurrayCompositeValidator *none = (HurrayCompositeValidator *)&h; /* must be reset to NULL */
  assert_int_equal(hurray_composite_validator_new(&h.f, 0, 0, &none, NULL), CMP);
  assert_null(none);
}

static void test_group_and_private(void **state) {
  (void)state;
  Fx h;
  head_init(&h, HURRAY_COMPOSITE_GROUP, 0, 3, 1, (uint64_t[]){HURRAY_DYNAMIC_DIM});
  HurrayCompositeValidator *v = start(&h, 0);
  Mem a, b;
  mem_init(&a, 3, NULL, Z, (uint64_t[]){1, 2, 3}, -1);
  a.x.f.type_tag = HURRAY_DTYPE_INT64;
  mem_init(&b, 0, NULL, Z, NULL, -1);
  PUSH_OK(v, &a);
  PUSH_OK(v, &b);
  b.x.f.composite_member = &b.cm;
  PUSH_FAIL(v, &b, CMP, "members[2].composite_member");
  hurray_composite_validator_destroy(&v);
  /* private rule: strict refuses the head, permissive applies no member rule */
  head_init(&h, 0xF5, 9, 2, 2, S88);
  assert_int_equal(hurray_composite_validator_new(&h.f, 0, 0, &v, NULL), CMP);
  v = start(&h, HURRAY_DECODE_PERMISSIVE);
  PUSH_OK(v, &a);
  PUSH_OK(v, &b);
  assert_int_equal(hurray_composite_validator_finish(v, NULL), HURRAY_OK);
  hurray_composite_validator_destroy(&v);
  /* head rules are the layout rules */
  head_init(&h, HURRAY_COMPOSITE_GROUP, 0, UINT32_MAX, 2, S88);
  assert_int_equal(hurray_composite_validator_new(&h.f, 0, 0, &v, NULL), CMP);
  head_init(&h, HURRAY_COMPOSITE_GROUP, 0, 1, 2, S88);
  h.f.buffer_count = 1;
  assert_int_equal(hurray_composite_validator_new(&h.f, 0, 0, &v, NULL), CMP);
  fx_init(&h, F32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){4}, 1, NULL);
  assert_int_equal(hurray_composite_validator_new(&h.f, 0, 0, &v, NULL), CMP);
  assert_int_equal(hurray_composite_validator_new(NULL, 0, 0, &v, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_composite_validator_push(NULL, &h.f, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_composite_validator_finish(NULL, NULL), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_composite_validator_remaining(NULL), 0);
}

/* ---- nesting ---------------------------------------- */

static void test_depth(void **state) {
  (void)state;
  Fx h;
  head_init(&h, HURRAY_COMPOSITE_GROUP, 0, 1, 1, (uint64_t[]){4});
  HurrayCompositeValidator *v = NULL;
  HurrayError e;
  assert_int_equal(
      hurray_composite_validator_new(&h.f, HURRAY_MAX_COMPOSITE_DEPTH - 1, 0, &v, &e), HURRAY_OK);
  hurray_composite_validator_destroy(&v);
  assert_int_equal(hurray_composite_validator_new(&h.f, HURRAY_MAX_COMPOSITE_DEPTH, 0, &v, &e),
                   CMP);
  assert_null(v);
}

static void test_preorder(void **state) {
  (void)state;
  /* partition [8, 8] = [8, 4] dense + [8, 4] nested overlay (base + correction). */
  Fx top, inner;
  Mem left, base, corr;
  head_init(&top, HURRAY_COMPOSITE_PARTITION, 0, 2, 2, S88);
  mem_init(&left, 2, S88, Z, S84, -1);
  head_init(&inner, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 2, 2, S84);
  uint64_t ip[2] = {8, 8}, io[2] = {0, 4};
  HurrayShard ish = {ip, io};
  inner.f.shard = &ish;
  mem_init(&base, 2, S84, Z, S84, HURRAY_MEMBER_ROLE_BASE);
  mem_init(&corr, 2, S84, Z, (uint64_t[]){2, 2}, HURRAY_MEMBER_ROLE_CORRECTION);
  Fx plain;
  fx_init(&plain, F32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){3}, 1, NULL);
  const HurrayDescriptorFields *seq[6] = {&top.f, &left.x.f, &inner.f, &base.x.f, &corr.x.f,
                                          &plain.f};
  size_t used = 99;
  HurrayError e;
  assert_int_equal(hurray_composite_validate_preorder(seq, 6, 0, &used, &e), HURRAY_OK);
  assert_int_equal(used, 5);
  /* a plain tensor is a tree of one */
  assert_int_equal(hurray_composite_validate_preorder(seq + 5, 1, 0, &used, &e), HURRAY_OK);
  assert_int_equal(used, 1);
  /* torn inside the nested head */
  assert_int_equal(hurray_composite_validate_preorder(seq, 4, 0, &used, &e), CMP);
  assert_int_equal(used, 0);
  /* a nested head without its shard breaks the partition */
  inner.f.shard = NULL;
  assert_int_equal(hurray_composite_validate_preorder(seq, 6, 0, &used, &e), CMP);
  assert_string_equal(e.field, "members[1].shard");
  inner.f.shard = &ish;
  /* a wrong member inside the nested overlay */
  corr.cm.role = HURRAY_MEMBER_ROLE_BASE;
  assert_int_equal(hurray_composite_validate_preorder(seq, 6, 0, &used, &e), CMP);
  assert_string_equal(e.field, "members[1].composite_member.role");
  corr.cm.role = HURRAY_MEMBER_ROLE_CORRECTION;
  /* a nested head with 0 members closes immediately */
  Fx empty;
  head_init(&empty, HURRAY_COMPOSITE_GROUP, 0, 0, 1, (uint64_t[]){1});
  Fx g;
  head_init(&g, HURRAY_COMPOSITE_GROUP, 0, 2, 1, (uint64_t[]){1});
  const HurrayDescriptorFields *seq2[4] = {&g.f, &empty.f, &plain.f, &plain.f};
  assert_int_equal(hurray_composite_validate_preorder(seq2, 4, 0, &used, &e), HURRAY_OK);
  assert_int_equal(used, 3);
  assert_int_equal(hurray_composite_validate_preorder(NULL, 1, 0, &used, &e),
                   HURRAY_ERR_NULL_POINTER);
  /* A nested head cannot be an overlay member (docs/reference/layouts.md): without the
   * member section the overlay refuses it, with it the head rules do. */
  Fx ov, nested;
  head_init(&ov, HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_REPLACE, 1, 2, S84);
  head_init(&nested, HURRAY_COMPOSITE_GROUP, 0, 1, 2, S84);
  uint64_t np[2] = {8, 4}, no[2] = {0, 0};
  HurrayShard nsh = {np, no};
  nested.f.shard = &nsh;
  const HurrayDescriptorFields *seq3[3] = {&ov.f, &nested.f, &plain.f};
  assert_int_equal(hurray_composite_validate_preorder(seq3, 3, 0, &used, &e), CMP);
  assert_string_equal(e.field, "members[0].composite_member");
  HurrayCompositeMember role = {HURRAY_MEMBER_ROLE_BASE};
  nested.f.composite_member = &role;
  assert_int_equal(hurray_composite_validate_preorder(seq3, 3, 0, &used, &e), CMP);
  assert_string_equal(e.field, "composite_member");
}

static void test_preorder_depth(void **state) {
  (void)state;
  /* A chain of group heads, each with one member: the next head. */
  Fx heads[10], leaf;
  const HurrayDescriptorFields *seq[11];
  fx_init(&leaf, F32, HURRAY_LAYOUT_ROW_MAJOR, 1, (uint64_t[]){3}, 1, NULL);
  for (int n = 1; n <= 10; n++) {
    for (int i = 0; i < n; i++) {
      head_init(&heads[i], HURRAY_COMPOSITE_GROUP, 0, 1, 1, (uint64_t[]){3});
      seq[i] = &heads[i].f;
    }
    seq[n] = &leaf.f;
    size_t used;
    HurrayError e;
    HurrayStatus st = hurray_composite_validate_preorder(seq, (size_t)n + 1, 0, &used, &e);
    if (n <= (int)HURRAY_MAX_COMPOSITE_DEPTH) {
      assert_int_equal(st, HURRAY_OK);
      assert_int_equal(used, (size_t)n + 1);
    } else {
      assert_int_equal(st, CMP);
    }
  }
}

static void test_alloc_failures(void **state) {
  (void)state;
  tu_alloc_install();
  Fx h;
  head_init(&h, HURRAY_COMPOSITE_PARTITION, 0, 20, 2, (uint64_t[]){20, 1});
  Mem m;
  for (long fail = 0; fail < 16; fail++) {
    tu_fail_alloc_after(fail);
    HurrayCompositeValidator *v = NULL;
    HurrayStatus st = hurray_composite_validator_new(&h.f, 0, 0, &v, NULL);
    for (uint64_t i = 0; i < 20 && st == HURRAY_OK; i++) {
      mem_init(&m, 2, (uint64_t[]){20, 1}, (uint64_t[]){i, 0}, (uint64_t[]){1, 1}, -1);
      st = hurray_composite_validator_push(v, &m.x.f, NULL);
    }
    if (st == HURRAY_OK) st = hurray_composite_validator_finish(v, NULL);
    assert_true(st == HURRAY_OK || st == HURRAY_ERR_OUT_OF_MEMORY);
    if (st == HURRAY_OK) assert_true(fail >= 5); /* new, 3 box growths, the sweep */
    else assert_true(fail < 5);
    hurray_composite_validator_destroy(&v);
    assert_int_equal(tu_alloc_live(), 0);
  }
  /* The tree helper frees its validators on failure too. */
  const HurrayDescriptorFields *seq[1] = {&h.f};
  tu_fail_alloc_after(0);
  assert_int_equal(hurray_composite_validate_preorder(seq, 1, 0, NULL, NULL),
                   HURRAY_ERR_OUT_OF_MEMORY);
  tu_alloc_reset();
  assert_int_equal(hurray_composite_validate_preorder(seq, 1, 0, NULL, NULL), CMP);
  assert_int_equal(tu_alloc_live(), 0);
  hurray_set_allocator(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_partition),       cmocka_unit_test(test_partition_fuzz),
      cmocka_unit_test(test_partition_many),  cmocka_unit_test(test_overlay),
      cmocka_unit_test(test_group_and_private), cmocka_unit_test(test_depth),
      cmocka_unit_test(test_preorder),        cmocka_unit_test(test_preorder_depth),
      cmocka_unit_test(test_alloc_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
