/*
 * Reading many names of a file at once (file.h § Loading many names): what
 * the Python package's load(), load(names=) and f[name] do, once, for every
 * binding. A whole load reads the tensor region ahead in parallel, proves
 * the whole index (names unique, no overlaps) and gives every top-level item
 * in file order (a composite as one tree), then every view of a shared
 * tensor over its base's bytes. A load of given names resolves each (a stored
 * tensor, else a view), reads each index entry once and reads each view over
 * a base read beside it.
 */
#include "internal/file.h"

HurrayStatus hurray_file_check(const HurrayFile *f, HurrayFileDataReport *report, bool *has_sums,
                               HurrayError *err) {
  HurrayFileDataReport rep;
  memset(&rep, 0, sizeof rep);
  bool sums = false;
  HurrayStatus rc = hurray_file_verify(f, err);
  uint64_t n = hurray_file_tensor_count(f);
  for (uint64_t i = 0; rc == HURRAY_OK && i < n; i++) rc = hurray_file_verify_tensor(f, i, err);
  if (rc == HURRAY_OK) {
    HurrayError derr;
    hurray_error_clear(&derr);
    rc = hurray_file_verify_data(f, &rep, &derr);
    if (rc == HURRAY_ERR_NOT_FOUND) {
      rc = HURRAY_OK; /* no checksums: the structure is all */
    } else {
      sums = true;
      if (rc != HURRAY_OK && err != NULL) *err = derr;
    }
  }
  if (report != NULL) *report = rep;
  if (has_sums != NULL) *has_sums = sums;
  return rc;
}

static bool is_head(const HurrayFileTensor *t) {
  uint8_t tag = 0;
  return hurray_descriptor_layout_tag(hurray_file_tensor_descriptor(t), &tag) == HURRAY_OK &&
         tag == HURRAY_LAYOUT_COMPOSITE;
}

/* Reads item x: a view over `base` (NULL: fetched), a tensor, or a composite. */
static HurrayStatus fetch(const HurrayFile *f, HurrayFileLoadItem *x, HurrayFileTensor *base,
                          HurrayError *err) {
  if (x->view >= 0) return hurray_file_view_tensor(f, (uint64_t)x->view, base, &x->tensor, err);
  HurrayStatus rc = hurray_file_tensor(f, x->index, &x->tensor, err);
  if (rc != HURRAY_OK || !is_head(x->tensor)) return rc;
  hurray_file_tensor_release(&x->tensor);
  return hurray_file_composite(f, x->index, &x->node, err);
}

/* An item's own bytes read ahead (its data range; nothing for a view). */
static HurrayStatus prefetch_item(const HurrayFile *f, const HurrayFileLoadItem *x,
                                  HurrayError *err) {
  HurrayFileEntry e;
  if (x->view >= 0 || hurray_file_entry(f, x->index, &e) != HURRAY_OK) return HURRAY_OK;
  return hurray_file_prefetch(f, e.data_offset, e.data_length, 0, err);
}

static uint64_t node_size(const HurrayFileNode *n) {
  uint64_t c = 1;
  for (uint32_t k = 0; k < n->member_count; k++) c += node_size(&n->members[k]);
  return c;
}

void hurray_file_load_destroy(HurrayFileLoad **load) {
  if (load == NULL || *load == NULL) return;
  for (uint64_t i = 0; i < (*load)->count; i++) {
    hurray_file_tensor_release(&(*load)->items[i].tensor);
    hurray_file_node_destroy(&(*load)->items[i].node);
  }
  hurray__free((*load)->items);
  hurray__free(*load);
  *load = NULL;
}

/* Item x of a load of names: `name` a stored tensor, else a view (a
 * same-kind view reads its base as a tensor of its own). */
static HurrayStatus resolve(const HurrayFile *f, HurrayFileLoadItem *x,
                            HurrayFileLoadFailure *fail, HurrayError *err) {
  HurrayStatus rc = hurray_file_find(f, x->name, x->name_len, &x->index);
  if (rc != HURRAY_ERR_NOT_FOUND) return rc;
  uint64_t n = 0, vi = 0;
  rc = hurray_file_view_count(f, &n, err);
  if (rc == HURRAY_OK) rc = hurray_file_find_view(f, x->name, x->name_len, &vi, NULL);
  if (rc != HURRAY_OK) {
    if (rc != HURRAY_ERR_NOT_FOUND) fail->stage = HURRAY_FILE_LOAD_AT_VIEWS;
    return rc;
  }
  HurrayFileView v;
  HURRAY_TRY(hurray_file_view(f, vi, &v, err));
  x->index = v.base_index;
  if (!v.same) x->view = (int64_t)vi;
  return HURRAY_OK;
}

/* The whole tensor region read ahead, in parallel (nothing when it is in
 * memory already): it relies only on what open checked. */
static HurrayStatus prefetch_region(const HurrayFile *f, HurrayError *err) {
  HurrayFileInfo info;
  HURRAY_TRY(hurray_file_info(f, &info));
  uint64_t end = info.kv_offset != 0 ? info.kv_offset : info.index_offset;
  return hurray_file_prefetch(f, info.first_descriptor_offset,
                              end - info.first_descriptor_offset, 0, err);
}

/* The given names, once resolved: the stored items first (each index entry
 * read once: a later item with the same entry is the same as the first), then
 * the views, over a base read among them. */
static HurrayStatus read_names(const HurrayFile *f, HurrayFileLoad *L,
                               HurrayFileLoadFailure *fail, HurrayError *err) {
  HurrayFileLoadItem *it = L->items;
  fail->stage = HURRAY_FILE_LOAD_AT_TENSOR;
  for (int pass = 0; pass < 2; pass++) {
    for (uint64_t i = 0; i < L->count; i++) {
      HurrayFileLoadItem *x = &it[i];
      if ((x->view >= 0) != (pass == 1)) continue;
      fail->at = x->index;
      HurrayFileTensor *base = NULL;
      for (uint64_t k = 0; k < L->count; k++) {
        if (it[k].view >= 0 || it[k].index != x->index) continue;
        if (pass == 0 && k < i) x->same_as = k;
        if (pass == 1) base = it[k].tensor;
        break;
      }
      if (x->same_as != UINT64_MAX) continue;
      if (pass == 0) HURRAY_TRY(prefetch_item(f, x, err));
      HURRAY_TRY(fetch(f, x, base, err));
    }
  }
  return HURRAY_OK;
}

/* Every top-level item in file order (a composite's members belong to it),
 * then each view in record order: one with a geometry of its own over its
 * base's bytes, a same-kind one the same tensor as its base (or its base read
 * on its own when that is a composite's member). */
static HurrayStatus read_all(const HurrayFile *f, HurrayFileLoad *L, uint64_t nviews,
                             HurrayFileLoadFailure *fail, HurrayError *err) {
  uint64_t count = hurray_file_tensor_count(f);
  uint64_t *pos_of = NULL; /* index entry -> its top-level item, or UINT64_MAX */
  if (nviews > 0) {
    pos_of = hurray__calloc(count ? (size_t)count : 1u, sizeof *pos_of);
    if (pos_of == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
    for (uint64_t k = 0; k < count; k++) pos_of[k] = UINT64_MAX;
  }
  HurrayFileLoadItem *it = L->items;
  HurrayStatus rc = HURRAY_OK;
  uint64_t got = 0;
  fail->stage = HURRAY_FILE_LOAD_AT_TENSOR;
  for (uint64_t p = 0; rc == HURRAY_OK && p < count; got++) {
    HurrayFileLoadItem *x = &it[got];
    x->view = -1;
    x->same_as = UINT64_MAX;
    L->count = got + 1;
    rc = hurray_file_position(f, p, &x->index);
    fail->at = x->index;
    if (rc == HURRAY_OK) rc = fetch(f, x, NULL, err);
    if (rc != HURRAY_OK) break;
    HurrayFileEntry e;
    rc = hurray_file_entry(f, x->index, &e);
    x->name = e.name;
    x->name_len = e.name_len;
    if (pos_of != NULL) pos_of[x->index] = got;
    p += x->node != NULL ? node_size(x->node) : 1u;
  }
  for (uint64_t v = 0; rc == HURRAY_OK && v < nviews; v++, got++) {
    HurrayFileLoadItem *x = &it[got];
    L->count = got + 1;
    HurrayFileView fv;
    rc = hurray_file_view(f, v, &fv, err);
    if (rc != HURRAY_OK) break;
    x->name = fv.name;
    x->name_len = fv.name_len;
    x->index = fv.base_index;
    x->view = fv.same ? -1 : (int64_t)v;
    x->same_as = UINT64_MAX;
    fail->at = fv.base_index; /* the message names the base read */
    uint64_t at = pos_of[fv.base_index];
    if (fv.same && at != UINT64_MAX) {
      x->same_as = at;
    } else {
      rc = fv.same ? prefetch_item(f, x, err) : HURRAY_OK;
      if (rc == HURRAY_OK)
        rc = fetch(f, x, at != UINT64_MAX ? it[at].tensor : NULL, err);
    }
  }
  hurray__free(pos_of);
  return rc;
}

HurrayStatus hurray_file_load(const HurrayFile *f, const char *const *names,
                              const size_t *name_lens, uint64_t name_count, uint32_t flags,
                              HurrayFileLoad **out, HurrayFileLoadFailure *failure,
                              HurrayError *err) {
  HurrayFileLoadFailure scratch;
  HurrayFileLoadFailure *fail = failure != NULL ? failure : &scratch;
  fail->stage = HURRAY_FILE_LOAD_AT_FILE;
  fail->at = 0;
  if (out == NULL || f == NULL || (names != NULL && name_count > 0 && name_lens == NULL))
    return HURRAY_ERR_NULL_POINTER;
  *out = NULL;
  bool whole = names == NULL;
  uint64_t nviews = 0;
  if (whole && !(flags & HURRAY_FILE_LOAD_STORED)) {
    fail->stage = HURRAY_FILE_LOAD_AT_VIEWS;
    HURRAY_TRY(hurray_file_view_count(f, &nviews, err));
    fail->stage = HURRAY_FILE_LOAD_AT_FILE;
  }
  uint64_t cap = whole ? hurray_file_tensor_count(f) + nviews : name_count;
  if (cap > SIZE_MAX / sizeof(HurrayFileLoadItem)) return HURRAY_ERR_OUT_OF_MEMORY;
  HurrayFileLoad *L = hurray__calloc(1, sizeof *L);
  HurrayFileLoadItem *items = L != NULL ? hurray__calloc(cap ? (size_t)cap : 1u, sizeof *items)
                                        : NULL;
  if (items == NULL) {
    hurray__free(L);
    return HURRAY_ERR_OUT_OF_MEMORY;
  }
  L->items = items;
  HurrayStatus rc = HURRAY_OK;
  for (uint64_t i = 0; !whole && rc == HURRAY_OK && i < name_count; i++) {
    items[i].name = names[i];
    items[i].name_len = name_lens[i];
    items[i].view = -1;
    items[i].same_as = UINT64_MAX;
    L->count = i + 1;
    fail->stage = HURRAY_FILE_LOAD_AT_NAME;
    fail->at = i;
    rc = resolve(f, &items[i], fail, err);
  }
  if (rc == HURRAY_OK) fail->stage = HURRAY_FILE_LOAD_AT_FILE;
  /* everything is about to be read (the checksums of verify too) */
  if (rc == HURRAY_OK && (whole || (flags & HURRAY_FILE_LOAD_VERIFY)))
    rc = prefetch_region(f, err);
  /* Loading everything relies on every name being unique and no two tensors
   * overlapping: prove the whole index first (open checks only what a lazy
   * reader of one tensor relies on); verify: every rule and the checksums. */
  if (rc == HURRAY_OK && (flags & HURRAY_FILE_LOAD_VERIFY))
    rc = hurray_file_check(f, NULL, NULL, err);
  else if (rc == HURRAY_OK && whole)
    rc = hurray_file_verify(f, err);
  if (rc == HURRAY_OK) rc = whole ? read_all(f, L, nviews, fail, err) : read_names(f, L, fail, err);
  if (rc != HURRAY_OK) {
    hurray_file_load_destroy(&L);
    return rc;
  }
  *out = L;
  return HURRAY_OK;
}
