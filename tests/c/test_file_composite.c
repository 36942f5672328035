/* Composites in files: head then members pre-order, recovered by file order. */
#include "test_file_util.h"

static int setup(void **state) {
  (void)state;
  tf_mkdir();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  tf_rmdir();
  return 0;
}

/* A composite head: float32 of shape dims[0..rank), rule/op, n members. */
static HurrayDescriptor *head(uint8_t rule, uint8_t op, uint32_t n, uint32_t rank,
                              const uint64_t *dims) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = rank;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_COMPOSITE;
  f.layout.u.composite.rule = rule;
  f.layout.u.composite.combine_op = op;
  f.layout.u.composite.member_count = n;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, 0, &d, &e) != HURRAY_OK) fail_msg("head: %s", e.message);
  return d;
}

static HurrayDescriptor *group(uint32_t n) {
  static const uint64_t dims[1] = {1};
  return head(HURRAY_COMPOSITE_GROUP, 0, n, 1, dims);
}

/* float32 [r, c] carrying a shard of parent [pr, pc] at (o0, o1). */
static HurrayDescriptor *shard_member(uint64_t r, uint64_t c, uint64_t pr, uint64_t pc,
                                      uint64_t o0, uint64_t o1) {
  uint64_t dims[2] = {r, c}, parent[2] = {pr, pc}, off[2] = {o0, o1};
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.byte_size = r * c * 4;
  h.alignment = 64;
  HurrayShard sh = {parent, off};
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  f.shard = &sh;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, 0, &d, &e) != HURRAY_OK) fail_msg("member: %s", e.message);
  return d;
}

static HurrayFileCompositeNode leaf(const char *name, const HurrayDescriptor *d,
                                    const void *const *bufs) {
  HurrayFileCompositeNode n;
  memset(&n, 0, sizeof n);
  n.name = name;
  n.name_len = strlen(name);
  n.descriptor = d;
  n.buffers = bufs;
  return n;
}

static HurrayFileCompositeNode node(const char *name, const HurrayDescriptor *d,
                                    const HurrayFileCompositeNode *members, uint32_t count) {
  HurrayFileCompositeNode n;
  memset(&n, 0, sizeof n);
  n.name = name;
  n.name_len = strlen(name);
  n.descriptor = d;
  n.members = members;
  n.member_count = count;
  return n;
}

static HurrayFileWriter *wopen(const char *path, bool sorted) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, sorted, true, false};
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  return w;
}

static uint64_t find(const HurrayFile *f, const char *name) {
  uint64_t idx = 0;
  if (hurray_file_find(f, name, strlen(name), &idx) != HURRAY_OK) fail_msg("no %s", name);
  return idx;
}

static void test_group_round_trip(void **state) {
  (void)state;
  const char *path = tf_path("g.hrry");
  HurrayDescriptor *g = group(3), *a = tf_desc_u8(3), *b = tf_desc_f32(2, 2), *z = tf_desc_u8(0);
  uint8_t ad[3] = {9, 8, 7};
  float bd[4] = {1, 2, 3, 4};
  const void *ab[1] = {ad}, *bb[1] = {bd}, *zb[1] = {NULL};
  HurrayFileCompositeNode members[3] = {leaf("g.0", a, ab), leaf("g.1", b, bb),
                                        leaf("g.2", z, zb)};
  HurrayFileCompositeNode root = node("g", g, members, 3);
  HurrayFileWriter *w = wopen(path, false);
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_tensor(w, "before", 6, a, ab, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "after", 5, a, ab, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_tensor_count(w), 6);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);

  /* No alignment padding after the head: its first member follows at the
   * next multiple of 8. */
  size_t len;
  uint8_t *p = tf_load(path, &len);
  const uint8_t *eh = tf_index_entry(p, len, 1), *em = tf_index_entry(p, len, 2);
  uint64_t head_end = hurray__ld64(eh) + hurray__ld32(eh + 8);
  assert_int_equal(hurray__ld64(em), (head_end + 7) & ~7ull);
  assert_int_equal(hurray__ld64(eh + 20), 0);    /* the head has no data */
  assert_int_equal(hurray__ld64(eh + 12), head_end); /* its empty data region */
  free(p);

  for (int mode = 0; mode < 2; mode++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    HurrayFile *f = NULL;
    assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
    HurrayFileNode *tree = NULL;
    assert_int_equal(hurray_file_composite(f, find(f, "g"), &tree, &e), HURRAY_OK);
    assert_true(tree->is_composite);
    assert_int_equal(tree->member_count, 3);
    assert_string_equal(hurray_file_tensor_name(tree->tensor, NULL), "g");
    assert_int_equal(hurray_file_tensor_buffer_count(tree->tensor), 0);
    for (uint32_t k = 0; k < 3; k++) {
      char want[8];
      snprintf(want, sizeof want, "g.%u", k);
      assert_string_equal(hurray_file_tensor_name(tree->members[k].tensor, NULL), want);
      assert_false(tree->members[k].is_composite);
      assert_int_equal(tree->members[k].member_count, 0);
    }
    const void *q;
    uint64_t n;
    assert_int_equal(hurray_file_tensor_buffer(tree->members[1].tensor, 0, &q, &n), HURRAY_OK);
    assert_int_equal(n, 16);
    assert_memory_equal(q, bd, 16);
    hurray_file_node_destroy(&tree);
    assert_null(tree);
    /* Not a head. */
    assert_int_equal(hurray_file_composite(f, find(f, "before"), &tree, &e),
                     HURRAY_ERR_INVALID_ARGUMENT);
    assert_int_equal(hurray_file_composite(f, 99, &tree, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_null(tree);
    /* A member stays addressable on its own. */
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_tensor(f, find(f, "g.0"), &t, &e), HURRAY_OK);
    hurray_file_tensor_release(&t);
    hurray_file_close(&f);
  }
  hurray_file_node_destroy(NULL);
  assert_int_equal(hurray_descriptor_destroy(g), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(a), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(b), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(z), HURRAY_OK);
}

static void test_nested_with_sorted_index(void **state) {
  (void)state;
  /* z (group of 2): [ y (group of 2): [a, b], c ]  -- names sort against
   * write order, so the index order is useless for membership. */
  const char *path = tf_path("n.hrry");
  HurrayDescriptor *g2 = group(2), *leafd = tf_desc_u8(4);
  uint8_t data[4] = {1, 2, 3, 4};
  const void *bufs[1] = {data};
  HurrayFileCompositeNode inner[2] = {leaf("z.0.0", leafd, bufs), leaf("a", leafd, bufs)};
  HurrayFileCompositeNode outer[2] = {node("y", g2, inner, 2), leaf("b", leafd, bufs)};
  HurrayFileCompositeNode root = node("z", g2, outer, 2);
  HurrayFileWriter *w = wopen(path, true);
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_tensor(w, "m", 1, leafd, bufs, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, find(f, "z"), &tree, &e), HURRAY_OK);
  assert_int_equal(tree->member_count, 2);
  assert_true(tree->members[0].is_composite);
  assert_string_equal(hurray_file_tensor_name(tree->members[0].tensor, NULL), "y");
  assert_int_equal(tree->members[0].member_count, 2);
  assert_string_equal(hurray_file_tensor_name(tree->members[0].members[0].tensor, NULL), "z.0.0");
  assert_string_equal(hurray_file_tensor_name(tree->members[0].members[1].tensor, NULL), "a");
  assert_string_equal(hurray_file_tensor_name(tree->members[1].tensor, NULL), "b");
  hurray_file_node_destroy(&tree);
  /* The nested head on its own. */
  assert_int_equal(hurray_file_composite(f, find(f, "y"), &tree, &e), HURRAY_OK);
  assert_int_equal(tree->member_count, 2);
  hurray_file_node_destroy(&tree);
  /* A depth limit of 1 refuses the nested head. */
  hurray_file_close(&f);
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.max_composite_depth = 1;
  assert_int_equal(hurray_file_open(path, &o, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_composite(f, find(f, "z"), &tree, &e),
                   HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(hurray_file_composite(f, find(f, "y"), &tree, &e), HURRAY_OK);
  hurray_file_node_destroy(&tree);
  hurray_file_close(&f);
  assert_int_equal(hurray_descriptor_destroy(g2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leafd), HURRAY_OK);
}

static void test_partition_round_trip(void **state) {
  (void)state;
  const char *path = tf_path("p.hrry");
  static const uint64_t dims[2] = {4, 4};
  HurrayDescriptor *h = head(HURRAY_COMPOSITE_PARTITION, 0, 2, 2, dims);
  HurrayDescriptor *left = shard_member(4, 2, 4, 4, 0, 0), *right = shard_member(4, 2, 4, 4, 0, 2);
  float l[8] = {0}, r[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const void *lb[1] = {l}, *rb[1] = {r};
  HurrayFileCompositeNode m[2] = {leaf("w.0", left, lb), leaf("w.1", right, rb)};
  HurrayFileCompositeNode root = node("w", h, m, 2);
  HurrayFileWriter *w = wopen(path, false);
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_OK);
  assert_int_equal(tree->member_count, 2);
  const void *q;
  assert_int_equal(hurray_file_tensor_buffer(tree->members[1].tensor, 0, &q, NULL), HURRAY_OK);
  assert_memory_equal(q, r, 32);
  hurray_file_node_destroy(&tree);
  hurray_file_close(&f);
  assert_int_equal(hurray_descriptor_destroy(h), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(left), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(right), HURRAY_OK);
}

static void test_writer_rejects(void **state) {
  (void)state;
  const char *path = tf_path("r.hrry");
  HurrayDescriptor *g2 = group(2), *g1 = group(1), *leafd = tf_desc_u8(4);
  uint8_t data[4] = {1, 2, 3, 4};
  const void *bufs[1] = {data};
  HurrayFileWriter *w = wopen(path, false);
  HurrayError e;
  /* A head is never a plain tensor. */
  assert_int_equal(hurray_file_writer_add_tensor(w, "h", 1, g2, NULL, NULL, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_tensor(w, "x", 1, leafd, bufs, NULL, &e), HURRAY_OK);
  HurrayFileCompositeNode two[2] = {leaf("h.0", leafd, bufs), leaf("h.1", leafd, bufs)};
  HurrayFileCompositeNode root;
  /* Member count differs from the head's. */
  root = node("h", g2, two, 1);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  root = node("h", g1, two, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  root = node("h", g2, NULL, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_NULL_POINTER);
  /* Names: duplicate inside the tree, taken by an earlier tensor, invalid. */
  HurrayFileCompositeNode dup[2] = {leaf("h.0", leafd, bufs), leaf("h.0", leafd, bufs)};
  root = node("h", g2, dup, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_DUPLICATE_NAME);
  HurrayFileCompositeNode taken[2] = {leaf("h.0", leafd, bufs), leaf("x", leafd, bufs)};
  root = node("h", g2, taken, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_DUPLICATE_NAME);
  root = node("x", g2, two, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_DUPLICATE_NAME);
  HurrayFileCompositeNode bad[2] = {leaf("h.0", leafd, bufs), leaf("", leafd, bufs)};
  root = node("h", g2, bad, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_ARGUMENT);
  /* A leaf with members; a root that is not a head; a leaf with no data. */
  HurrayFileCompositeNode odd[2] = {node("h.0", leafd, two, 2), leaf("h.1", leafd, bufs)};
  root = node("h", g2, odd, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_ARGUMENT);
  root = leaf("h", leafd, bufs);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_ARGUMENT);
  HurrayFileCompositeNode nodata[2] = {leaf("h.0", leafd, bufs), leaf("h.1", leafd, NULL)};
  root = node("h", g2, nodata, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_writer_add_composite(w, NULL, &e), HURRAY_ERR_NULL_POINTER);
  /* Nine levels of nesting: one too many. */
  HurrayFileCompositeNode chain[10];
  char names[10][8];
  chain[9] = leaf("bottom", leafd, bufs);
  for (int k = 8; k >= 0; k--) {
    snprintf(names[k], sizeof names[k], "c%d", k);
    chain[k] = node(names[k], g1, &chain[k + 1], 1);
  }
  assert_int_equal(hurray_file_writer_add_composite(w, &chain[0], &e),
                   HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(hurray_file_writer_add_composite(w, &chain[1], &e), HURRAY_OK); /* eight */
  /* None of the refusals wrote anything; the writer is still good. */
  root = node("h", g2, two, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_tensor_count(w), 1 + 9 + 3);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, find(f, "c1"), &tree, &e), HURRAY_OK);
  HurrayFileNode *n = tree;
  for (int k = 1; k < 9; k++) {
    assert_int_equal(n->member_count, 1);
    n = &n->members[0];
  }
  assert_string_equal(hurray_file_tensor_name(n->tensor, NULL), "bottom");
  hurray_file_node_destroy(&tree);
  assert_int_equal(hurray_file_composite(f, find(f, "h"), &tree, &e), HURRAY_OK);
  hurray_file_node_destroy(&tree);
  hurray_file_close(&f);
  assert_int_equal(hurray_descriptor_destroy(g2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(g1), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leafd), HURRAY_OK);
}

static void test_reader_rejects_torn_and_deep(void **state) {
  (void)state;
  HurrayDescriptor *g3 = group(3), *g1 = group(1), *leafd = tf_desc_u8(4);
  uint64_t hl = 0;
  free(tf_encode(g3, &hl));
  HurrayError e;
  /* A torn composite: three members declared, two follow. */
  TfImage im = {NULL, 0};
  TfEntry en[3];
  en[0] = tf_place(&im, "h", g3, 64, 64 + hl, 0);
  uint64_t m0 = (64 + hl + 7) & ~7ull;
  en[1] = tf_place(&im, "h.0", leafd, m0, 4096, 1);
  en[2] = tf_place(&im, "h.1", leafd, 4104, 8192, 2);
  tf_finish(&im, en, 3, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  HurrayFile *f = NULL;
  assert_int_equal(tf_open_image(im.p, im.len, &f, &e), HURRAY_OK); /* open reads no descriptor */
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_non_null(strstr(e.message, "torn"));
  assert_null(tree);
  hurray_file_close(&f);
  free(im.p);

  /* The reference writer pads a head to the data alignment; still a head. */
  im.p = NULL;
  im.len = 0;
  HurrayDescriptor *g2 = group(2);
  en[0] = tf_place(&im, "h", g2, 64, 4096, 0);
  en[1] = tf_place(&im, "h.0", leafd, 4096, 8192, 1);
  en[2] = tf_place(&im, "h.1", leafd, 8200, 12288, 2);
  tf_finish(&im, en, 3, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  assert_int_equal(tf_open_image(im.p, im.len, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_OK);
  assert_int_equal(tree->member_count, 2);
  hurray_file_node_destroy(&tree);
  hurray_file_close(&f);
  free(im.p);

  /* Nine nested heads of one member each, then a leaf: too deep to read. */
  im.p = NULL;
  im.len = 0;
  uint64_t gl = 0;
  free(tf_encode(g1, &gl));
  TfEntry chain[10];
  char names[10][8];
  uint64_t off = 64;
  for (int k = 0; k < 9; k++) {
    snprintf(names[k], sizeof names[k], "c%d", k);
    chain[k] = tf_place(&im, names[k], g1, off, off + gl, 0);
    off = (off + gl + 7) & ~7ull;
  }
  chain[9] = tf_place(&im, "leaf", leafd, off, (off + 4095) & ~4095ull, 3);
  tf_finish(&im, chain, 10, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  assert_int_equal(tf_open_image(im.p, im.len, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(hurray_file_composite(f, 1, &tree, &e), HURRAY_OK); /* eight levels */
  hurray_file_node_destroy(&tree);
  hurray_file_close(&f);
  free(im.p);
  assert_int_equal(hurray_descriptor_destroy(g3), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(g2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(g1), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leafd), HURRAY_OK);
}


static void test_composition_rules(void **state) {
  (void)state;
  /* The composite validator runs on every level, writing and reading. */
  static const uint64_t dims[2] = {4, 4};
  HurrayDescriptor *h = head(HURRAY_COMPOSITE_PARTITION, 0, 2, 2, dims);
  HurrayDescriptor *left = shard_member(4, 2, 4, 4, 0, 0), *right = shard_member(4, 2, 4, 4, 0, 2);
  HurrayDescriptor *mid = shard_member(4, 2, 4, 4, 0, 1);
  HurrayDescriptor *ov = head(HURRAY_COMPOSITE_OVERLAY, HURRAY_COMBINE_ADD, 2, 2, dims);
  float buf[8] = {0};
  const void *bb[1] = {buf};
  HurrayFileWriter *w = wopen(tf_path("rules.hrry"), false);
  HurrayError e;
  /* Gap: two boxes over the same left half. */
  HurrayFileCompositeNode gap[2] = {leaf("p.0", left, bb), leaf("p.1", left, bb)};
  HurrayFileCompositeNode root = node("p", h, gap, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  /* Overlap. */
  HurrayFileCompositeNode lap[2] = {leaf("p.0", left, bb), leaf("p.1", mid, bb)};
  root = node("p", h, lap, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  /* An overlay whose members carry no member roles. */
  HurrayFileCompositeNode noroles[2] = {leaf("o.0", left, bb), leaf("o.1", right, bb)};
  root = node("o", ov, noroles, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_int_equal(hurray_file_writer_tensor_count(w), 0); /* nothing written */
  HurrayFileCompositeNode good[2] = {leaf("p.0", left, bb), leaf("p.1", right, bb)};
  root = node("p", h, good, 2);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);

  /* A file (made by hand) whose partition overlaps: open is fine, the tensors
   * are fetchable, reading the composite fails. */
  uint64_t hl = 0;
  free(tf_encode(h, &hl));
  TfImage im = {NULL, 0};
  TfEntry en[3];
  en[0] = tf_place(&im, "p", h, 64, 64 + hl, 0);
  en[1] = tf_place(&im, "p.0", left, (64 + hl + 7) & ~7ull, 4096, 1);
  en[2] = tf_place(&im, "p.1", mid, 8192, 12288, 2);
  tf_finish(&im, en, 3, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  HurrayFile *f = NULL;
  assert_int_equal(tf_open_image(im.p, im.len, &f, &e), HURRAY_OK);
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_null(tree);
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, 2, &t, &e), HURRAY_OK);
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  free(im.p);
  assert_int_equal(hurray_descriptor_destroy(h), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(ov), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(left), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(right), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(mid), HURRAY_OK);
}

static size_t g_max_alloc;
static void *track_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (size > g_max_alloc) g_max_alloc = size;
  return tu_aligned_alloc(alignment, size);
}
static void track_free(void *ctx, void *q) {
  (void)ctx;
  tu_aligned_free(q);
}

static void test_huge_member_count_allocates_nothing(void **state) {
  (void)state;
  HurrayDescriptor *g = group(0xFFFFFFF0u), *leafd = tf_desc_u8(4);
  uint64_t hl = 0;
  free(tf_encode(g, &hl));
  TfImage im = {NULL, 0};
  TfEntry en[2];
  en[0] = tf_place(&im, "h", g, 64, 64 + hl, 0);
  en[1] = tf_place(&im, "h.0", leafd, (64 + hl + 7) & ~7ull, 4096, 1);
  tf_finish(&im, en, 2, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  HurrayAllocator a = {track_alloc, track_free, NULL};
  hurray_set_allocator(&a);
  g_max_alloc = 0;
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(tf_open_image(im.p, im.len, &f, &e), HURRAY_OK);
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_ERR_INVALID_COMPOSITE);
  assert_true(g_max_alloc < 4096);
  hurray_file_close(&f);
  hurray_set_allocator(NULL);
  free(im.p);
  assert_int_equal(hurray_descriptor_destroy(g), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leafd), HURRAY_OK);
}

static void test_composite_allocation_failures(void **state) {
  (void)state;
  const char *path = tf_path("oom.hrry");
  HurrayDescriptor *g2 = group(2), *leafd = tf_desc_u8(4);
  uint8_t data[4] = {1, 2, 3, 4};
  const void *bufs[1] = {data};
  HurrayFileCompositeNode inner[2] = {leaf("y.0", leafd, bufs), leaf("y.1", leafd, bufs)};
  HurrayFileCompositeNode outer[2] = {node("y", g2, inner, 2), leaf("z.1", leafd, bufs)};
  HurrayFileCompositeNode root = node("z", g2, outer, 2);
  tu_alloc_install();
  for (long n = 0;; n++) {
    tu_fail_alloc_after(n);
    HurrayFileWriter *w = NULL;
    HurrayFileWriterOptions o = {0, false, true, false};
    HurrayStatus st = hurray_file_writer_open(path, &o, &w, NULL);
    if (st == HURRAY_OK) st = hurray_file_writer_add_composite(w, &root, NULL);
    if (st == HURRAY_OK) st = hurray_file_writer_finish(w, NULL);
    hurray_file_writer_destroy(&w);
    HurrayFile *f = NULL;
    HurrayFileNode *tree = NULL;
    if (st == HURRAY_OK) st = hurray_file_open(path, NULL, &f, NULL);
    if (st == HURRAY_OK) st = hurray_file_composite(f, 0, &tree, NULL);
    hurray_file_node_destroy(&tree);
    hurray_file_close(&f);
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), 0);
    if (st == HURRAY_OK) break;
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
    assert_true(n < 200);
  }
  hurray_set_allocator(NULL);
  assert_int_equal(hurray_descriptor_destroy(g2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leafd), HURRAY_OK);
}

/* Members given no name are named "{head}.{i}" by the writer, recursively
 * (a nested head's members after its own made name); a name given is kept;
 * a made name is checked like any other. */
static void test_member_names_made(void **state) {
  (void)state;
  const char *path = tf_path("made.hrry");
  HurrayDescriptor *g2 = group(2), *leafd = tf_desc_u8(4);
  uint8_t data[4] = {1, 2, 3, 4};
  const void *bufs[1] = {data};
  HurrayFileCompositeNode inner[2] = {leaf("x", leafd, bufs), leaf("kept", leafd, bufs)};
  inner[0].name = NULL;
  inner[0].name_len = 0;
  HurrayFileCompositeNode outer[2] = {node("x", g2, inner, 2), leaf("x", leafd, bufs)};
  for (int k = 0; k < 2; k++) {
    outer[k].name = NULL;
    outer[k].name_len = 0;
  }
  HurrayFileCompositeNode root = node("w", g2, outer, 2);
  HurrayFileWriter *w = wopen(path, false);
  HurrayError e;
  /* an unnamed root is refused: it has no head to be named after */
  HurrayFileCompositeNode anon = root;
  anon.name = NULL;
  anon.name_len = 0;
  assert_int_equal(hurray_file_writer_add_composite(w, &anon, &e), HURRAY_ERR_NULL_POINTER);
  /* a made name that an earlier tensor took */
  assert_int_equal(hurray_file_writer_add_tensor(w, "w.1", 3, leafd, bufs, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_ERR_DUPLICATE_NAME);
  assert_non_null(strstr(e.message, "\"w.1\" is already in the file"));
  root.name = "v";
  root.name_len = 1;
  assert_int_equal(hurray_file_writer_add_composite(w, &root, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  HurrayFileNode *tree = NULL;
  assert_int_equal(hurray_file_composite(f, find(f, "v"), &tree, &e), HURRAY_OK);
  assert_string_equal(hurray_file_tensor_name(tree->members[0].tensor, NULL), "v.0");
  assert_string_equal(hurray_file_tensor_name(tree->members[0].members[0].tensor, NULL), "v.0.0");
  assert_string_equal(hurray_file_tensor_name(tree->members[0].members[1].tensor, NULL), "kept");
  assert_string_equal(hurray_file_tensor_name(tree->members[1].tensor, NULL), "v.1");
  hurray_file_node_destroy(&tree);
  hurray_file_close(&f);
  assert_int_equal(hurray_descriptor_destroy(g2), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(leafd), HURRAY_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_group_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_with_sorted_index, setup, teardown),
      cmocka_unit_test_setup_teardown(test_member_names_made, setup, teardown),
      cmocka_unit_test_setup_teardown(test_partition_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writer_rejects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_composition_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reader_rejects_torn_and_deep, setup, teardown),
      cmocka_unit_test_setup_teardown(test_huge_member_count_allocates_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_composite_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
