/*
 * Composites in files (file-format.md § Composite Tensors; layouts/composite.md).
 *
 * A head is followed, in file order (ascending descriptor_offset, whatever
 * the index order), by its member_count members; a member that is itself a
 * head is followed by its own members first (pre-order). Reading a composite
 * walks that order from the head, fetching each tensor, and checks each level
 * with the composite validator once its members are all there.
 * hurray_file_verify_tensor (what a fetch checks, for any tensor) lives here
 * too: it walks a composite's tree, and this file sits above tensor.c.
 */
#include "hurray/composite.h"
#include "internal/file.h"

bool hurray__file_composite_members(const HurrayDescriptor *d, uint32_t *n) {
  uint8_t tag = 0;
  if (d == NULL || hurray_descriptor_layout_tag(d, &tag) != HURRAY_OK ||
      tag != HURRAY_LAYOUT_COMPOSITE)
    return false;
  HurrayDescriptorFields f;
  if (hurray_descriptor_fields(d, &f) != HURRAY_OK) return false;
  *n = f.layout.u.composite.member_count;
  return true;
}

HurrayStatus hurray__file_check_composite_level(const HurrayDescriptor *head,
                                                const HurrayDescriptor *const *members,
                                                uint32_t n, uint32_t depth, uint32_t options,
                                                HurrayError *err) {
  HurrayDescriptorFields hf;
  HURRAY_TRY(hurray_descriptor_fields(head, &hf));
  HurrayCompositeValidator *v = NULL;
  HURRAY_TRY(hurray_composite_validator_new(&hf, depth, options, &v, err));
  HurrayStatus st = HURRAY_OK;
  for (uint32_t k = 0; st == HURRAY_OK && k < n; k++) {
    HurrayDescriptorFields mf;
    st = hurray_descriptor_fields(members[k], &mf);
    if (st == HURRAY_OK) st = hurray_composite_validator_push(v, &mf, err);
  }
  if (st == HURRAY_OK) st = hurray_composite_validator_finish(v, err);
  hurray_composite_validator_destroy(&v);
  return st;
}

static void node_clear(HurrayFileNode *node) {
  for (uint32_t k = 0; k < node->member_count; k++) node_clear(&node->members[k]);
  hurray__free(node->members);
  hurray_file_tensor_release(&node->tensor);
  node->members = NULL;
  node->member_count = 0;
}

void hurray_file_node_destroy(HurrayFileNode **node) {
  if (node == NULL || *node == NULL) return;
  node_clear(*node);
  hurray__free(*node);
  *node = NULL;
}

/* Reads the tensor at file position `pos` into `node`, with its members when
 * it is a head; *next receives the position after its subtree. */
static HurrayStatus read_node(const HurrayFile *f, const HurrayFileOrder *o, uint32_t pos,
                              uint32_t depth, HurrayFileNode *node, uint32_t *next,
                              HurrayError *err) {
  uint32_t idx = hurray__file_order_at(o, pos);
  HURRAY_TRY(hurray_file_tensor(f, idx, &node->tensor, err));
  const HurrayDescriptor *head = hurray_file_tensor_descriptor(node->tensor);
  uint32_t m = 0;
  uint32_t cur = pos + 1;
  if (!hurray__file_composite_members(head, &m)) {
    *next = cur;
    return HURRAY_OK;
  }
  node->is_composite = true;
  HurrayFileIndexEntry entry;
  hurray__file_entry_at(f, idx, &entry);
  const HurrayFileIndexEntry *e = &entry;
  char field[48];
  hurray__path(field, sizeof field, "index[%u]", idx);
  if (depth >= f->opts.max_composite_depth)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, e->desc_off, field,
                        "composite \"%.*s\" nests deeper than %u levels",
                        (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name,
                        f->opts.max_composite_depth);
  /* Enough tensors must follow before anything is sized from member_count. */
  if (m > f->count - cur)
    return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, e->desc_off, field,
                        "torn composite \"%.*s\": %u member%s declared, %u tensor%s follow%s",
                        (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name, m,
                        HURRAY__S(m), f->count - cur, HURRAY__S(f->count - cur),
                        f->count - cur == 1 ? "s" : "");
  if (m == 0) {
    *next = cur;
    return hurray__file_check_composite_level(head, NULL, 0, depth, f->opts.decode_options, err);
  }
  node->members = hurray__calloc(m, sizeof *node->members);
  const HurrayDescriptor **md = hurray__malloc((size_t)m * sizeof *md);
  if (node->members == NULL || md == NULL) {
    hurray__free(md);
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, e->desc_off, field, "out of memory");
  }
  for (uint32_t k = 0; k < m; k++) {
    if (cur >= f->count) {
      hurray__free(md);
      return hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, e->desc_off, field,
                          "torn composite \"%.*s\": the file ends after %u of %u members",
                          (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name,
                          k, m);
    }
    node->member_count = k + 1;
    HurrayStatus st = read_node(f, o, cur, depth + 1, &node->members[k], &cur, err);
    if (st != HURRAY_OK) {
      hurray__free(md);
      return st;
    }
    md[k] = hurray_file_tensor_descriptor(node->members[k].tensor);
  }
  HurrayStatus st =
      hurray__file_check_composite_level(head, md, m, depth, f->opts.decode_options, err);
  hurray__free(md);
  *next = cur;
  return st;
}

HurrayStatus hurray_file_composite(const HurrayFile *f, uint64_t head_index,
                                   HurrayFileNode **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  if (head_index >= f->count)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET, "head_index",
                        "%llu is not below the tensor count %u",
                        (unsigned long long)head_index, f->count);
  const HurrayFileOrder *o;
  HURRAY_TRY(hurray__file_order_get(f, &o, err));
  HurrayDescriptor *d = NULL;
  HURRAY_TRY(hurray_file_descriptor(f, head_index, &d, err));
  uint32_t m;
  bool is_head = hurray__file_composite_members(d, &m);
  hurray__descriptor_drop(d);
  if (!is_head) {
    HurrayFileIndexEntry entry;
    hurray__file_entry_at(f, (uint32_t)head_index, &entry);
    const HurrayFileIndexEntry *e = &entry;
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, e->desc_off, "head_index",
                        "tensor \"%.*s\" is not a composite head",
                        (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name);
  }
  HurrayFileNode *root = hurray__calloc(1, sizeof *root);
  if (root == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "composite",
                        "out of memory");
  uint32_t next;
  HurrayStatus st =
      read_node(f, o, hurray__file_rank_of(o, (uint32_t)head_index), 0, root, &next, err);
  if (st != HURRAY_OK) {
    hurray_file_node_destroy(&root);
    return st;
  }
  *out = root;
  return HURRAY_OK;
}

/* ---- checking a composite from its descriptors (hurray_file_verify_tensor) ---- */

/* Checks the tensor at file position `pos` (its placement; for a head, its
 * members and its level) and returns its descriptor in *out (owned by the
 * caller); *next receives the position after its subtree. */
static HurrayStatus check_node(const HurrayFile *f, const HurrayFileOrder *o, uint32_t pos,
                               uint32_t depth, HurrayDescriptor **out, uint32_t *next,
                               HurrayError *err) {
  uint32_t idx = hurray__file_order_at(o, pos);
  HurrayDescriptor *head = NULL;
  HURRAY_TRY(hurray_file_descriptor(f, idx, &head, err));
  uint32_t nb = 0, m = 0, cur = pos + 1;
  uint64_t align = 0;
  HurrayStatus st = hurray__file_check_placement(f, idx, head, &nb, &align, err);
  if (st != HURRAY_OK || !hurray__file_composite_members(head, &m)) {
    *next = cur;
    if (st == HURRAY_OK) *out = head;
    else hurray__descriptor_drop(head);
    return st;
  }
  HurrayFileIndexEntry entry;
  hurray__file_entry_at(f, idx, &entry);
  const HurrayFileIndexEntry *e = &entry;
  char field[48];
  hurray__path(field, sizeof field, "index[%u]", idx);
  HurrayDescriptor **md = NULL;
  uint32_t got = 0;
  if (depth >= f->opts.max_composite_depth)
    st = hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, e->desc_off, field,
                      "composite \"%.*s\" nests deeper than %u levels",
                      (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name,
                      f->opts.max_composite_depth);
  else if (m > f->count - cur)
    st = hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, e->desc_off, field,
                      "torn composite \"%.*s\": %u member%s declared, %u tensor%s follow%s",
                      (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name, m,
                      HURRAY__S(m), f->count - cur, HURRAY__S(f->count - cur),
                      f->count - cur == 1 ? "s" : "");
  else if (m > 0 && (md = hurray__calloc(m, sizeof *md)) == NULL)
    st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, e->desc_off, field, "out of memory");
  for (; st == HURRAY_OK && got < m; got++) {
    if (cur >= f->count) {
      st = hurray__fail(err, HURRAY_ERR_INVALID_COMPOSITE, e->desc_off, field,
                        "torn composite \"%.*s\": the file ends after %u of %u members",
                        (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name,
                        got, m);
      break;
    }
    st = check_node(f, o, cur, depth + 1, &md[got], &cur, err);
    if (st != HURRAY_OK) break;
  }
  if (st == HURRAY_OK)
    st = hurray__file_check_composite_level(head, (const HurrayDescriptor *const *)md, m, depth,
                                            f->opts.decode_options, err);
  for (uint32_t k = 0; k < got; k++) hurray__descriptor_drop(md[k]);
  hurray__free(md);
  *next = cur;
  if (st == HURRAY_OK) *out = head;
  else hurray__descriptor_drop(head);
  return st;
}

/* Checks the composite whose head is tensor `head_index` as
 * hurray_file_composite does (members in file order, depth, torn composites,
 * each level's rules, each member's placement), from descriptors alone. */
static HurrayStatus check_tree(const HurrayFile *f, uint64_t head_index, HurrayError *err) {
  const HurrayFileOrder *o;
  HURRAY_TRY(hurray__file_order_get(f, &o, err));
  HurrayDescriptor *d = NULL;
  uint32_t next;
  HURRAY_TRY(check_node(f, o, hurray__file_rank_of(o, (uint32_t)head_index), 0, &d, &next, err));
  hurray__descriptor_drop(d);
  return HURRAY_OK;
}

/* What a fetch checks, from the descriptor alone (no buffer is read): the
 * placement of the tensor's buffers and, for a composite head, its whole tree.
 * Here rather than in tensor.c, which composite.c calls: tensor.c calls no
 * composite code. */
HurrayStatus hurray_file_verify_tensor(const HurrayFile *f, uint64_t index, HurrayError *err) {
  HurrayDescriptor *d = NULL;
  HURRAY_TRY(hurray_file_descriptor(f, index, &d, err));
  uint32_t nb = 0, members = 0;
  uint64_t max_align = 0;
  HurrayStatus st =
      hurray__file_check_placement(f, (uint32_t)index, d, &nb, &max_align, err);
  bool head = st == HURRAY_OK && hurray__file_composite_members(d, &members);
  hurray__descriptor_drop(d);
  if (head) st = check_tree(f, index, err);
  return st;
}
