/*
 * Incremental composite validator (include/hurray/composite.h; spec:
 * layouts/composite.md § Validation).
 */
#include "hurray/composite.h"
#include "layout/layout_internal.h"

#define CMP_ HURRAY_ERR_INVALID_COMPOSITE

struct HurrayCompositeValidator {
  uint8_t rule;
  uint8_t type_tag;
  bool private_rule;
  bool failed;
  bool closed;
  uint32_t rank;
  uint32_t expected;  /* member_count */
  uint32_t seen;      /* members pushed */
  uint32_t depth;
  uint64_t head_volume;
  uint64_t shape[64];
  uint64_t *boxes;    /* partition: per member, rank offsets then rank extents */
  uint32_t box_cap;   /* members that fit in boxes */
};

HurrayStatus hurray_composite_validator_new(const HurrayDescriptorFields *head, uint32_t depth,
                                            uint32_t options, HurrayCompositeValidator **out,
                                            HurrayError *err) {
  if (out != NULL) *out = NULL;
  if (head == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "head and out are required");
  if (depth >= HURRAY_MAX_COMPOSITE_DEPTH)
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "layout",
                        "composite nesting depth %u exceeds the maximum of %u levels", depth + 1,
                        HURRAY_MAX_COMPOSITE_DEPTH);
  if (head->rank > 64)
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "rank", "rank %u exceeds 64", head->rank);
  if (head->rank > 0 && head->shape == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "shape", "NULL");
  HURRAY_TRY(hurray__composite_head_check(head, NULL, options, err));
  HurrayCompositeValidator *v =
      (HurrayCompositeValidator *)hurray__calloc(1, sizeof(HurrayCompositeValidator));
  if (v == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate a composite validator");
  v->rule = head->layout.u.composite.rule;
  v->private_rule = v->rule >= 0xF0;
  v->type_tag = head->type_tag;
  v->rank = head->rank;
  v->expected = head->layout.u.composite.member_count;
  v->depth = depth;
  for (uint32_t k = 0; k < head->rank; k++) v->shape[k] = head->shape[k];
  if (v->rule == HURRAY_COMPOSITE_PARTITION &&
      !hurray__shape_volume(head->rank, head->shape, &v->head_volume)) {
    hurray__free(v);
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "shape",
                        "the partition head's volume does not fit in 64 bits");
  }
  *out = v;
  return HURRAY_OK;
}

void hurray_composite_validator_destroy(HurrayCompositeValidator **v) {
  if (v == NULL || *v == NULL) return;
  hurray__free((*v)->boxes);
  hurray__free(*v);
  *v = NULL;
}

uint32_t hurray_composite_validator_remaining(const HurrayCompositeValidator *v) {
  return v == NULL ? 0 : v->expected - v->seen;
}

/* ---- per-member checks -------------------------------------------------------- */

static const char *rule_name(uint8_t rule) {
  return rule == HURRAY_COMPOSITE_PARTITION ? "partition"
         : rule == HURRAY_COMPOSITE_OVERLAY ? "overlay"
                                            : "group";
}

static HurrayStatus check_box(const HurrayCompositeValidator *v, const HurrayDescriptorFields *m,
                              uint32_t i, HurrayError *err) {
  char path[64];
  if (m->shard == NULL || (m->rank > 0 && (m->shard->parent_shape == NULL ||
                                           m->shard->offset == NULL || m->shape == NULL)))
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "members[%u].shard", i),
                        "a %s member must carry a shard section", rule_name(v->rule));
  if (m->rank != v->rank)
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "members[%u].rank", i),
                        "member rank %u differs from the head's rank %u", m->rank, v->rank);
  for (uint32_t k = 0; k < v->rank; k++) {
    uint64_t parent = m->shard->parent_shape[k], off = m->shard->offset[k], end;
    if (parent != v->shape[k])
      return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "members[%u].shard.parent_shape[%u]",
                                       i, k),
                          "%llu differs from the head's shape[%u] = %llu",
                          (unsigned long long)parent, k, (unsigned long long)v->shape[k]);
    if (m->shape[k] == HURRAY_DYNAMIC_DIM || hurray__add_overflow_u64(off, m->shape[k], &end) ||
        end > v->shape[k])
      return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "members[%u].shard.offset[%u]", i, k),
                          "box [%llu, %llu + %llu) leaves the head's dimension of %llu",
                          (unsigned long long)off, (unsigned long long)off,
                          (unsigned long long)m->shape[k], (unsigned long long)v->shape[k]);
  }
  return HURRAY_OK;
}

static HurrayStatus keep_box(HurrayCompositeValidator *v, const HurrayDescriptorFields *m,
                             HurrayError *err) {
  if (v->rank == 0) return HURRAY_OK; /* boxes of a scalar have no coordinates */
  if (v->seen == v->box_cap) {
    uint32_t cap = v->box_cap == 0 ? 8 : v->box_cap * 2;
    if (cap > v->expected) cap = v->expected;
    size_t per = 2u * v->rank * sizeof(uint64_t);
    if ((size_t)cap > SIZE_MAX / per)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                          "too many partition members");
    uint64_t *nb = (uint64_t *)hurray__malloc((size_t)cap * per);
    if (nb == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                          "cannot allocate the boxes of %u partition members", cap);
    if (v->seen > 0) memcpy(nb, v->boxes, (size_t)v->seen * per);
    hurray__free(v->boxes);
    v->boxes = nb;
    v->box_cap = cap;
  }
  uint64_t *b = v->boxes + (size_t)v->seen * 2u * v->rank;
  for (uint32_t k = 0; k < v->rank; k++) {
    b[k] = m->shard->offset[k];
    b[v->rank + k] = m->shape[k];
  }
  return HURRAY_OK;
}

static HurrayStatus check_member(HurrayCompositeValidator *v, const HurrayDescriptorFields *m,
                                 HurrayError *err) {
  char path[48];
  uint32_t i = v->seen;
  if (v->private_rule) return HURRAY_OK;
  bool spatial = v->rule != HURRAY_COMPOSITE_GROUP;
  if (spatial) {
    HURRAY_TRY(check_box(v, m, i, err));
    if (m->quantization == NULL && m->type_tag != v->type_tag)
      return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "members[%u].type_tag", i),
                          "member type 0x%02X differs from the head's type 0x%02X",
                          m->type_tag, v->type_tag);
  }
  if (v->rule == HURRAY_COMPOSITE_OVERLAY) {
    if (m->composite_member == NULL)
      return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "members[%u].composite_member", i),
                          "an overlay member must carry a composite member section");
    uint8_t role = m->composite_member->role;
    if (role > HURRAY_MEMBER_ROLE_BASE)
      return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "members[%u].composite_member.role", i),
                          "role 0x%02X is reserved", role);
    uint8_t want = hurray_overlay_member_role(i);
    if (role != want)
      return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "members[%u].composite_member.role", i),
                          i == 0 ? "the first overlay member must be the base (role 1)"
                                 : "only the first overlay member is the base; this one must be "
                                   "a correction (role 0)");
    if (i == 0)
      for (uint32_t k = 0; k < v->rank; k++)
        if (m->shard->offset[k] != 0 || m->shape[k] != v->shape[k])
          return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                              hurray__path(path, sizeof path, "members[0].shard.offset[%u]", k),
                              "the overlay base must span the head (offset 0, extent %llu), got "
                              "offset %llu extent %llu",
                              (unsigned long long)v->shape[k],
                              (unsigned long long)m->shard->offset[k],
                              (unsigned long long)m->shape[k]);
  } else if (m->composite_member != NULL) {
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "members[%u].composite_member", i),
                        "a %s member must not carry a composite member section",
                        rule_name(v->rule));
  }
  if (v->rule == HURRAY_COMPOSITE_PARTITION) HURRAY_TRY(keep_box(v, m, err));
  return HURRAY_OK;
}

/* ---- close-time checks ------------------------------------------------------------ */

typedef struct SweepCtx {
  const uint64_t *boxes;
  uint32_t rank;
  uint32_t dim;
} SweepCtx;

static int by_offset(uint64_t a, uint64_t b, const void *vctx) {
  const SweepCtx *c = (const SweepCtx *)vctx;
  uint64_t x = c->boxes[a * 2u * c->rank + c->dim], y = c->boxes[b * 2u * c->rank + c->dim];
  return x < y ? -1 : x > y ? 1 : 0;
}

static bool overlap(const uint64_t *a, const uint64_t *b, uint32_t r) {
  for (uint32_t k = 0; k < r; k++)
    if (!(a[k] < b[k] + b[r + k] && b[k] < a[k] + a[r + k])) return false;
  return true;
}

static HurrayStatus close_partition(HurrayCompositeValidator *v, HurrayError *err) {
  uint32_t n = v->seen, r = v->rank;
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t vol = 1;
    if (r > 0) {
      const uint64_t *b = v->boxes + (size_t)i * 2u * r;
      /* boxes lie inside the head, so each volume is at most the head's */
      if (!hurray__shape_volume(r, b + r, &vol)) vol = UINT64_MAX;
    }
    if (hurray__add_overflow_u64(total, vol, &total)) total = UINT64_MAX;
  }
  if (r == 0 && n > 1)
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "members[1]",
                        "members 0 and 1 of a scalar partition overlap");
  if (r > 0 && n > 1) {
    /* Sweep along the dimension in which boxes are thinnest relative to the head. */
    uint32_t best = 0;
    double best_frac = 0;
    for (uint32_t k = 0; k < r; k++) {
      if (v->shape[k] == 0) continue;
      double frac = 0;
      for (uint32_t i = 0; i < n; i++) frac += (double)v->boxes[(size_t)i * 2u * r + r + k];
      frac /= (double)v->shape[k];
      if (k == 0 || frac < best_frac) {
        best = k;
        best_frac = frac;
      }
    }
    uint64_t *order = (uint64_t *)hurray__malloc((size_t)n * sizeof(uint64_t));
    if (order == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                          "cannot allocate the overlap sweep of %u members", n);
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    SweepCtx ctx = {v->boxes, r, best};
    hurray__heapsort(order, n, by_offset, &ctx);
    HurrayStatus st = HURRAY_OK;
    for (uint32_t x = 0; x < n && st == HURRAY_OK; x++) {
      const uint64_t *a = v->boxes + order[x] * 2u * r;
      uint64_t end = a[best] + a[r + best];
      for (uint32_t y = x + 1; y < n; y++) {
        const uint64_t *b = v->boxes + order[y] * 2u * r;
        if (b[best] >= end) break;
        if (overlap(a, b, r)) {
          char path[24];
          uint64_t lo = order[x] < order[y] ? order[x] : order[y];
          uint64_t hi = order[x] < order[y] ? order[y] : order[x];
          st = hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                            hurray__path(path, sizeof path, "members[%llu]",
                                         (unsigned long long)hi),
                            "partition members %llu and %llu overlap", (unsigned long long)lo,
                            (unsigned long long)hi);
          break;
        }
      }
    }
    hurray__free(order);
    HURRAY_TRY(st);
  }
  if (total != v->head_volume)
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "members",
                        "partition members cover %llu of the head's %llu elements",
                        (unsigned long long)total, (unsigned long long)v->head_volume);
  return HURRAY_OK;
}

static HurrayStatus close_composite(HurrayCompositeValidator *v, HurrayError *err) {
  v->closed = true;
  if (v->private_rule) return HURRAY_OK;
  if (v->rule == HURRAY_COMPOSITE_PARTITION) return close_partition(v, err);
  if (v->rule == HURRAY_COMPOSITE_OVERLAY && v->seen == 0)
    return hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "members", "an overlay needs a base");
  return HURRAY_OK;
}

HurrayStatus hurray_composite_validator_push(HurrayCompositeValidator *v,
                                             const HurrayDescriptorFields *member,
                                             HurrayError *err) {
  if (v == NULL || member == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "validator and member are required");
  if (v->failed)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "the composite already failed validation");
  HurrayStatus st;
  if (v->seen == v->expected) {
    char path[24];
    st = hurray__fail(err, CMP_, HURRAY_NO_OFFSET,
                      hurray__path(path, sizeof path, "members[%u]", v->seen),
                      "the head declares %u members; this is one more", v->expected);
  } else {
    st = check_member(v, member, err);
    if (st == HURRAY_OK) {
      v->seen++;
      if (v->seen == v->expected) st = close_composite(v, err);
    }
  }
  if (st != HURRAY_OK) v->failed = true;
  return st;
}

HurrayStatus hurray_composite_validator_finish(HurrayCompositeValidator *v, HurrayError *err) {
  if (v == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "validator is required");
  if (v->failed)
    return hurray__fail(err, HURRAY_ERR_INVALID_STATE, HURRAY_NO_OFFSET, NULL,
                        "the composite already failed validation");
  HurrayStatus st = HURRAY_OK;
  if (v->seen < v->expected)
    st = hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "members",
                      "torn composite: %u of %u members arrived", v->seen, v->expected);
  else if (!v->closed)
    st = close_composite(v, err); /* member_count 0 */
  if (st != HURRAY_OK) v->failed = true;
  return st;
}

/* ---- whole trees ---------------------------------------------------------------------- */

HurrayStatus hurray_composite_validate_preorder(const HurrayDescriptorFields *const *descs,
                                                size_t count, uint32_t options,
                                                size_t *consumed, HurrayError *err) {
  if (consumed != NULL) *consumed = 0;
  if (descs == NULL || count == 0 || descs[0] == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "at least one descriptor is required");
  if (descs[0]->layout.tag != HURRAY_LAYOUT_COMPOSITE) {
    if (consumed != NULL) *consumed = 1;
    return HURRAY_OK;
  }
  HurrayCompositeValidator *stack[HURRAY_MAX_COMPOSITE_DEPTH] = {NULL};
  uint32_t depth = 0;
  size_t pos = 1;
  HurrayStatus st = hurray_composite_validator_new(descs[0], 0, options, &stack[0], err);
  if (st == HURRAY_OK) depth = 1;
  while (st == HURRAY_OK && depth > 0) {
    HurrayCompositeValidator *top = stack[depth - 1];
    if (hurray_composite_validator_remaining(top) == 0) {
      st = hurray_composite_validator_finish(top, err);
      hurray_composite_validator_destroy(&stack[--depth]);
      continue;
    }
    if (pos == count || descs[pos] == NULL) {
      st = hurray__fail(err, CMP_, HURRAY_NO_OFFSET, "members",
                        "torn composite: the sequence ends with %u member(s) of a depth-%u head "
                        "missing",
                        hurray_composite_validator_remaining(top), depth - 1);
      break;
    }
    const HurrayDescriptorFields *m = descs[pos++];
    st = hurray_composite_validator_push(top, m, err);
    if (st == HURRAY_OK && m->layout.tag == HURRAY_LAYOUT_COMPOSITE) {
      HurrayCompositeValidator *child = NULL; /* new refuses depth >= the stack size */
      st = hurray_composite_validator_new(m, depth, options, &child, err);
      if (st == HURRAY_OK) stack[depth++] = child;
    }
  }
  while (depth > 0) hurray_composite_validator_destroy(&stack[--depth]);
  if (st == HURRAY_OK && consumed != NULL) *consumed = pos;
  return st;
}
