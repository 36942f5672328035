/*
 * Invariants of the sparse and paged index buffers, which a descriptor alone
 * cannot check (coo.md, csr.md, csc.md, csf.md, block-paged.md § Storage
 * Invariants). Failures: HURRAY_ERR_INVALID_INDEX_DATA naming the buffer and
 * the element; HURRAY_ERR_BUFFER_SIZE for a buffer too short for its content.
 */
#include "layout/layout_internal.h"

#define BAD_ HURRAY_ERR_INVALID_INDEX_DATA

/* Failure inside buffer `which` at entry k of width w. */
#define FAIL_AT(which, k, w, ...)                                                   \
  hurray__fail(err, BAD_, (uint64_t)(k) * (w),                                      \
               hurray__path(path, sizeof path, "buffers[%u]", (unsigned)(which)), \
               __VA_ARGS__)

static HurrayStatus need_bytes(const HurrayBufView *v, uint32_t which, uint64_t entries,
                               uint64_t width, const char *name, HurrayError *err) {
  char path[24];
  uint64_t need;
  if (hurray__mul_overflow_u64(entries, width, &need) || v[which].size < need)
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "buffers[%u]", which),
                        "%s needs %llu entries of %llu bytes, buffer %u has %llu bytes", name,
                        (unsigned long long)entries, (unsigned long long)width, which,
                        (unsigned long long)v[which].size);
  return HURRAY_OK;
}

static inline uint64_t u64_at(const HurrayBufView *b, uint64_t k) {
  return hurray__ld64(b->p + 8 * k);
}

/* ---- sorting (heapsort: no recursion, no extra memory) ---------------------------- */

static void sift_down(uint64_t *a, size_t start, size_t end, HurraySortCmp cmp, const void *ctx) {
  size_t root = start;
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && cmp(a[child], a[child + 1], ctx) < 0) child++;
    if (cmp(a[root], a[child], ctx) >= 0) return;
    uint64_t t = a[root];
    a[root] = a[child];
    a[child] = t;
    root = child;
  }
}

void hurray__heapsort(uint64_t *a, size_t n, HurraySortCmp cmp, const void *ctx) {
  if (n < 2) return;
  for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n, cmp, ctx);
  for (size_t end = n - 1; end > 0; end--) {
    uint64_t t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift_down(a, 0, end, cmp, ctx);
  }
}

/* ---- COO ---------------------------------------------------------------------- */

typedef struct CooCtx {
  const HurrayBufView *idx;
  uint32_t rank;
} CooCtx;

static int coo_cmp(uint64_t a, uint64_t b, const void *vctx) {
  const CooCtx *c = (const CooCtx *)vctx;
  for (uint32_t d = 0; d < c->rank; d++) {
    uint64_t x = u64_at(c->idx, a * c->rank + d), y = u64_at(c->idx, b * c->rank + d);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

static HurrayStatus check_coo(const HurrayDescriptorFields *f, const HurrayBufView *v,
                              HurrayError *err) {
  char path[24];
  uint32_t r = f->rank;
  uint64_t nnz = f->layout.u.coo.nnz, n;
  if (hurray__mul_overflow_u64(nnz, r, &n)) return need_bytes(v, 1, UINT64_MAX, 8, "indices", err);
  HURRAY_TRY(need_bytes(v, 1, n, 8, "indices", err));
  for (uint64_t i = 0; i < nnz; i++)
    for (uint32_t d = 0; d < r; d++) {
      uint64_t x = u64_at(&v[1], i * r + d);
      if (x >= f->shape[d])
        return FAIL_AT(1, i * r + d, 8,
                       "indices entry %llu, dimension %u: %llu is outside shape[%u] = %llu",
                       (unsigned long long)i, d, (unsigned long long)x, d,
                       (unsigned long long)f->shape[d]);
    }
  CooCtx ctx = {&v[1], r};
  bool increasing = true;
  for (uint64_t i = 1; i < nnz; i++) {
    int c = coo_cmp(i - 1, i, &ctx);
    if (c == 0)
      return FAIL_AT(1, i * r, 8, "indices entries %llu and %llu are the same coordinates",
                     (unsigned long long)(i - 1), (unsigned long long)i);
    if (c > 0) {
      if (f->layout.u.coo.is_sorted)
        return FAIL_AT(1, i * r, 8,
                       "indices entry %llu comes before entry %llu in lexicographic order, "
                       "but is_sorted is 1",
                       (unsigned long long)i, (unsigned long long)(i - 1));
      increasing = false;
    }
  }
  if (increasing) return HURRAY_OK; /* strictly increasing: no duplicates */
  if (nnz > SIZE_MAX / sizeof(uint64_t))
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot sort %llu entries", (unsigned long long)nnz);
  uint64_t *perm = (uint64_t *)hurray__malloc((size_t)nnz * sizeof(uint64_t));
  if (perm == NULL)
    return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, NULL,
                        "cannot allocate %llu bytes to look for duplicate coordinates",
                        (unsigned long long)nnz * 8u);
  for (uint64_t i = 0; i < nnz; i++) perm[i] = i;
  hurray__heapsort(perm, (size_t)nnz, coo_cmp, &ctx);
  HurrayStatus st = HURRAY_OK;
  for (uint64_t i = 1; i < nnz; i++) {
    if (coo_cmp(perm[i - 1], perm[i], &ctx) == 0) {
      uint64_t a = perm[i - 1] < perm[i] ? perm[i - 1] : perm[i];
      uint64_t b = perm[i - 1] < perm[i] ? perm[i] : perm[i - 1];
      st = FAIL_AT(1, b * r, 8, "indices entries %llu and %llu are the same coordinates",
                   (unsigned long long)a, (unsigned long long)b);
      break;
    }
  }
  hurray__free(perm);
  return st;
}

/* ---- CSR / CSC ------------------------------------------------------------------ */

static HurrayStatus check_compressed(const HurrayDescriptorFields *f, const HurrayBufView *v,
                                     HurrayError *err) {
  char path[24];
  bool csr = f->layout.tag == HURRAY_LAYOUT_CSR;
  const char *ptr_name = csr ? "row_ptr" : "col_ptr";
  const char *idx_name = csr ? "col_indices" : "row_indices";
  uint64_t n = f->shape[csr ? 0 : 1], m = f->shape[csr ? 1 : 0];
  uint64_t nnz = f->layout.u.csr.nnz;
  if (n == HURRAY_DYNAMIC_DIM)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "%s needs a static shape[%d]", ptr_name, csr ? 0 : 1);
  HURRAY_TRY(need_bytes(v, 2, n + 1, 8, ptr_name, err));
  HURRAY_TRY(need_bytes(v, 1, nnz, 8, idx_name, err));
  uint64_t prev = u64_at(&v[2], 0);
  if (prev != 0)
    return FAIL_AT(2, 0, 8, "%s[0] must be 0, got %llu", ptr_name, (unsigned long long)prev);
  for (uint64_t k = 1; k <= n; k++) {
    uint64_t cur = u64_at(&v[2], k);
    if (cur < prev)
      return FAIL_AT(2, k, 8, "%s[%llu] = %llu is less than %s[%llu] = %llu", ptr_name,
                     (unsigned long long)k, (unsigned long long)cur, ptr_name,
                     (unsigned long long)(k - 1), (unsigned long long)prev);
    prev = cur;
  }
  if (prev != nnz)
    return FAIL_AT(2, n, 8, "%s[%llu] = %llu must equal nnz = %llu", ptr_name,
                   (unsigned long long)n, (unsigned long long)prev, (unsigned long long)nnz);
  for (uint64_t row = 0; row < n; row++) {
    uint64_t a = u64_at(&v[2], row), b = u64_at(&v[2], row + 1);
    for (uint64_t j = a; j < b; j++) {
      uint64_t x = u64_at(&v[1], j);
      if (x >= m)
        return FAIL_AT(1, j, 8, "%s[%llu] = %llu is outside shape[%d] = %llu", idx_name,
                       (unsigned long long)j, (unsigned long long)x, csr ? 1 : 0,
                       (unsigned long long)m);
      if (j > a && x <= u64_at(&v[1], j - 1))
        return FAIL_AT(1, j, 8,
                       "%s[%llu] = %llu does not increase strictly inside %s %llu", idx_name,
                       (unsigned long long)j, (unsigned long long)x, csr ? "row" : "column",
                       (unsigned long long)row);
    }
  }
  return HURRAY_OK;
}

/* ---- CSF ------------------------------------------------------------------------ */

static HurrayStatus check_csf(const HurrayDescriptorFields *f, const HurrayBufView *v,
                              HurrayError *err) {
  char path[24], name[24];
  uint32_t r = f->rank;
  uint64_t nnz = f->layout.u.csf.nnz;
  uint64_t parents = 1; /* n_{L-1}; the virtual root above level 0 */
  for (uint32_t L = 0; L < r; L++) {
    uint32_t pb = 2 * L + 1, cb = 2 * L + 2;
    hurray__path(name, sizeof name, "pos_%u", L);
    HURRAY_TRY(need_bytes(v, pb, parents + 1, 8, name, err));
    uint64_t prev = u64_at(&v[pb], 0);
    if (prev != 0)
      return FAIL_AT(pb, 0, 8, "%s[0] must be 0, got %llu", name, (unsigned long long)prev);
    for (uint64_t k = 1; k <= parents; k++) {
      uint64_t cur = u64_at(&v[pb], k);
      if (cur < prev)
        return FAIL_AT(pb, k, 8, "%s[%llu] = %llu is less than %s[%llu] = %llu", name,
                       (unsigned long long)k, (unsigned long long)cur, name,
                       (unsigned long long)(k - 1), (unsigned long long)prev);
      prev = cur;
    }
    uint64_t count = prev; /* n_L */
    if (L == 0 && nnz == 0 && count != 0)
      return FAIL_AT(pb, 1, 8, "an empty tensor (nnz 0) needs pos_0 = [0, 0], got [0, %llu]",
                     (unsigned long long)count);
    if (L + 1 == r && count != nnz)
      return FAIL_AT(pb, parents, 8, "%s[%llu] = %llu must equal nnz = %llu at the leaf level",
                     name, (unsigned long long)parents, (unsigned long long)count,
                     (unsigned long long)nnz);
    char cname[24];
    hurray__path(cname, sizeof cname, "crd_%u", L);
    HURRAY_TRY(need_bytes(v, cb, count, 8, cname, err));
    uint32_t dim = f->layout.u.csf.mode_order[L];
    uint64_t bound = f->shape[dim];
    for (uint64_t k = 0; k < parents; k++) {
      uint64_t a = u64_at(&v[pb], k), b = u64_at(&v[pb], k + 1);
      for (uint64_t i = a; i < b; i++) {
        uint64_t x = u64_at(&v[cb], i);
        if (x >= bound)
          return FAIL_AT(cb, i, 8, "%s[%llu] = %llu is outside shape[%u] = %llu", cname,
                         (unsigned long long)i, (unsigned long long)x, dim,
                         (unsigned long long)bound);
        if (i > a && x <= u64_at(&v[cb], i - 1))
          return FAIL_AT(cb, i, 8, "%s[%llu] = %llu: siblings must increase strictly", cname,
                         (unsigned long long)i, (unsigned long long)x);
      }
    }
    parents = count;
  }
  return HURRAY_OK;
}

/* ---- block-paged ---------------------------------------------------------------- */

static HurrayStatus check_paged(uint8_t itype, uint32_t num_seqs, uint64_t num_pages,
                                const HurrayBufView *sp, const HurrayBufView *bt, uint32_t flags,
                                const char *sp_field, const char *bt_field, HurrayError *err) {
  uint64_t w = hurray_block_index_width(itype); /* itype was checked: 4 or 8 */
  uint64_t n = (uint64_t)num_seqs + 1;
  if (sp->size < n * w || ((flags & HURRAY_INDEX_EXACT_LENGTHS) && sp->size != n * w))
    return hurray__fail(err,
                        sp->size < n * w ? HURRAY_ERR_BUFFER_SIZE : BAD_, HURRAY_NO_OFFSET,
                        sp_field,
                        "seq_ptr needs num_seqs + 1 = %llu entries of %llu bytes, has %llu "
                        "bytes",
                        (unsigned long long)n, (unsigned long long)w,
                        (unsigned long long)sp->size);
#define SP_(k) (w == 8 ? hurray__ld64(sp->p + 8 * (k)) : hurray__ld32(sp->p + 4 * (k)))
#define BT_(k) (w == 8 ? hurray__ld64(bt->p + 8 * (k)) : hurray__ld32(bt->p + 4 * (k)))
  uint64_t prev = SP_(0);
  if (prev != 0)
    return hurray__fail(err, BAD_, 0, sp_field, "seq_ptr[0] must be 0, got %llu",
                        (unsigned long long)prev);
  for (uint64_t s = 1; s < n; s++) {
    uint64_t cur = SP_(s);
    if (cur < prev)
      return hurray__fail(err, BAD_, s * w, sp_field,
                          "seq_ptr[%llu] = %llu is less than seq_ptr[%llu] = %llu",
                          (unsigned long long)s, (unsigned long long)cur,
                          (unsigned long long)(s - 1), (unsigned long long)prev);
    prev = cur;
  }
  uint64_t have = bt->size / w;
  if (prev > have || ((flags & HURRAY_INDEX_EXACT_LENGTHS) && bt->size != prev * w))
    return hurray__fail(err, prev > have ? HURRAY_ERR_BUFFER_SIZE : BAD_, HURRAY_NO_OFFSET,
                        bt_field,
                        "seq_ptr[num_seqs] = %llu pages, block_table holds %llu bytes (%llu "
                        "bytes per entry)",
                        (unsigned long long)prev, (unsigned long long)bt->size,
                        (unsigned long long)w);
  for (uint64_t k = 0; k < prev; k++) {
    uint64_t id = BT_(k);
    if (id >= num_pages)
      return hurray__fail(err, BAD_, k * w, bt_field,
                          "block_table[%llu] = %llu is not a page (num_pages = %llu)",
                          (unsigned long long)k, (unsigned long long)id,
                          (unsigned long long)num_pages);
  }
#undef SP_
#undef BT_
  return HURRAY_OK;
}

HurrayStatus hurray_block_paged_validate_index_buffers(uint8_t index_type, uint32_t num_seqs,
                                                       uint64_t num_pages, const void *seq_ptr,
                                                       uint64_t seq_ptr_size,
                                                       const void *block_table,
                                                       uint64_t block_table_size, uint32_t flags,
                                                       HurrayError *err) {
  if (index_type > HURRAY_BLOCK_INDEX_U64 || (flags & ~HURRAY_INDEX_EXACT_LENGTHS) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, NULL,
                        "index_type must be 0 (uint32) or 1 (uint64) and flags known, got %u / "
                        "0x%x",
                        index_type, flags);
  if ((seq_ptr == NULL && seq_ptr_size != 0) || (block_table == NULL && block_table_size != 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "NULL pointer for a non-empty array");
  HurrayBufView sp = {(const uint8_t *)seq_ptr, seq_ptr_size};
  HurrayBufView bt = {(const uint8_t *)block_table, block_table_size};
  return check_paged(index_type, num_seqs, num_pages, &sp, &bt, flags, "seq_ptr", "block_table",
                     err);
}

/* ---- generic entry --------------------------------------------------------------- */

HurrayStatus hurray__index_check(const HurrayDescriptorFields *f, const HurrayBufView *v,
                                 HurrayError *err) {
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_COO:
      return check_coo(f, v, err);
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC:
      return check_compressed(f, v, err);
    case HURRAY_LAYOUT_CSF:
      return check_csf(f, v, err);
    case HURRAY_LAYOUT_BLOCK_PAGED:
      return check_paged(f->layout.u.block_paged.block_table_index_type,
                         f->layout.u.block_paged.num_seqs, f->layout.u.block_paged.num_pages,
                         &v[2], &v[1], 0, "buffers[2]", "buffers[1]", err);
    default:
      return HURRAY_OK;
  }
}

HurrayStatus hurray_layout_validate_index_buffers(const HurrayDescriptorFields *f,
                                                  const void *const *buffers,
                                                  const uint64_t *sizes, HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "descriptor fields are required");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  uint32_t base;
  if (!hurray__layout_base_buffer_count(f->layout.tag, f->rank, &base))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "layout_tag",
                        "layout 0x%02X is unknown", f->layout.tag);
  HurrayLayoutClass cls = hurray_layout_class(f->layout.tag);
  if (cls != HURRAY_LAYOUT_CLASS_SPARSE && cls != HURRAY_LAYOUT_CLASS_INDIRECT) return HURRAY_OK;
  if (f->buffer_count < base)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "%s needs %u buffers, got %u", hurray_layout_name(f->layout.tag), base,
                        f->buffer_count);
  HurrayBufView views[HURRAY_MAX_BUFFERS];
  HURRAY_TRY(hurray__buf_views(f, buffers, sizes, views, err));
  return hurray__index_check(f, views, err);
}
