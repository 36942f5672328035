/*
 * Element lookup in sparse tensors (coo.md, csr.md, csc.md, csf.md § Element
 * Lookup), the block-paged address (block-paged.md § Element Lookup) and the
 * checked offset of a dense element (hurray_layout_element_offset: the shape
 * rules of validate.c, then the addressing of address.c).
 * Every read of an index buffer is bounds-checked.
 */
#include "layout/layout_internal.h"

#define BAD_ HURRAY_ERR_INVALID_INDEX_DATA

/* Binary search for `key` in the u64 entries [a, b) of buffer `which`. */
static HurrayStatus search(const HurrayBufView *v, uint32_t which, uint64_t a, uint64_t b,
                           uint64_t key, const char *name, bool *found, uint64_t *at,
                           HurrayError *err) {
  while (a < b) {
    uint64_t mid = a + (b - a) / 2, x;
    HURRAY_TRY(hurray__idx_read(v, which, mid, 8, name, &x, err));
    if (x == key) {
      *found = true;
      *at = mid;
      return HURRAY_OK;
    }
    if (x < key)
      a = mid + 1;
    else
      b = mid;
  }
  *found = false;
  return HURRAY_OK;
}

/* Reads ptr[k] and ptr[k + 1] of buffer `which` and checks a <= b <= limit. */
static HurrayStatus slice(const HurrayBufView *v, uint32_t which, uint64_t k, uint64_t limit,
                          const char *name, uint64_t *a, uint64_t *b, HurrayError *err) {
  char path[24];
  HURRAY_TRY(hurray__idx_read(v, which, k, 8, name, a, err));
  HURRAY_TRY(hurray__idx_read(v, which, k + 1, 8, name, b, err));
  if (*a > *b || *b > limit)
    return hurray__fail(err, BAD_, k * 8, hurray__path(path, sizeof path, "buffers[%u]", which),
                        "%s[%llu..%llu] = [%llu, %llu] is not a slice of %llu entries", name,
                        (unsigned long long)k, (unsigned long long)(k + 1),
                        (unsigned long long)*a, (unsigned long long)*b,
                        (unsigned long long)limit);
  return HURRAY_OK;
}

static HurrayStatus coo_lookup(const HurrayDescriptorFields *f, const HurrayBufView *v,
                               const uint64_t *index, bool *found, uint64_t *pos,
                               HurrayError *err) {
  uint32_t r = f->rank;
  uint64_t nnz = f->layout.u.coo.nnz, n;
  char path[24];
  if (hurray__mul_overflow_u64(nnz, r, &n) || v[1].size / 8 < n)
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "buffers[1]"),
                        "indices needs nnz * rank = %llu entries, buffer has %llu bytes",
                        (unsigned long long)n, (unsigned long long)v[1].size);
  const uint8_t *p = v[1].p;
  /* Compare entry i with the query: -1, 0, 1. */
#define CMP_ENTRY(i, out)                                 \
  do {                                                    \
    (out) = 0;                                            \
    for (uint32_t d_ = 0; d_ < r && (out) == 0; d_++) {   \
      uint64_t x_ = hurray__ld64(p + 8 * ((i) * r + d_)); \
      if (x_ != index[d_]) (out) = x_ < index[d_] ? -1 : 1; \
    }                                                     \
  } while (0)
  *found = false;
  if (f->layout.u.coo.is_sorted) {
    uint64_t a = 0, b = nnz;
    while (a < b) {
      uint64_t mid = a + (b - a) / 2;
      int c;
      CMP_ENTRY(mid, c);
      if (c == 0) {
        *found = true;
        *pos = mid;
        return HURRAY_OK;
      }
      if (c < 0)
        a = mid + 1;
      else
        b = mid;
    }
  } else {
    for (uint64_t i = 0; i < nnz; i++) {
      int c;
      CMP_ENTRY(i, c);
      if (c == 0) {
        *found = true;
        *pos = i;
        return HURRAY_OK;
      }
    }
  }
#undef CMP_ENTRY
  return HURRAY_OK;
}

static HurrayStatus csf_lookup(const HurrayDescriptorFields *f, const HurrayBufView *v,
                               const uint64_t *index, bool *found, uint64_t *pos,
                               HurrayError *err) {
  uint32_t r = f->rank;
  uint64_t p = 0, a, b;
  char name[24];
  for (uint32_t L = 0; L < r; L++) {
    uint32_t pb = 2 * L + 1, cb = 2 * L + 2;
    hurray__path(name, sizeof name, "pos_%u", L);
    HURRAY_TRY(slice(v, pb, p, v[cb].size / 8, name, &a, &b, err));
    hurray__path(name, sizeof name, "crd_%u", L);
    HURRAY_TRY(search(v, cb, a, b, index[f->layout.u.csf.mode_order[L]], name, found, &p, err));
    if (!*found) return HURRAY_OK;
  }
  *pos = p;
  return HURRAY_OK;
}

HurrayStatus hurray_layout_sparse_lookup(const HurrayDescriptorFields *f,
                                         const void *const *buffers, const uint64_t *sizes,
                                         const uint64_t *index, bool *found, uint64_t *position,
                                         HurrayError *err) {
  if (f == NULL || index == NULL || found == NULL || position == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "fields, index, found and position are required");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  uint8_t tag = f->layout.tag;
  if (hurray_layout_class(tag) != HURRAY_LAYOUT_CLASS_SPARSE)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout_tag",
                        "%s is not a sparse layout",
                        hurray_layout_name(tag) ? hurray_layout_name(tag) : "unknown");
  uint32_t base;
  (void)hurray__layout_base_buffer_count(tag, f->rank, &base);
  if (f->buffer_count < base)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "%s needs %u buffers, got %u", hurray_layout_name(tag), base,
                        f->buffer_count);
  char path[24];
  for (uint32_t k = 0; k < f->rank; k++)
    if (index[k] >= f->shape[k])
      return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "index[%u]", k),
                          "%llu is outside dimension %u of size %llu",
                          (unsigned long long)index[k], k, (unsigned long long)f->shape[k]);
  HurrayBufView v[HURRAY_MAX_BUFFERS];
  HURRAY_TRY(hurray__buf_views(f, buffers, sizes, v, err));
  *found = false;
  *position = 0;
  uint64_t a, b, at = 0;
  HurrayStatus st;
  switch (tag) {
    case HURRAY_LAYOUT_COO:
      st = coo_lookup(f, v, index, found, &at, err);
      break;
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC: {
      bool csr = tag == HURRAY_LAYOUT_CSR;
      const char *ptr = csr ? "row_ptr" : "col_ptr";
      st = slice(v, 2, index[csr ? 0 : 1], v[1].size / 8, ptr, &a, &b, err);
      if (st == HURRAY_OK)
        st = search(v, 1, a, b, index[csr ? 1 : 0], csr ? "col_indices" : "row_indices", found,
                    &at, err);
      break;
    }
    default:
      st = csf_lookup(f, v, index, found, &at, err);
      break;
  }
  if (st != HURRAY_OK) {
    *found = false;
    return st;
  }
  if (*found) *position = at;
  return HURRAY_OK;
}

HurrayStatus hurray_layout_block_paged_address(const HurrayDescriptorFields *f,
                                               const void *const *buffers, const uint64_t *sizes,
                                               uint64_t seq, uint64_t token, uint64_t head,
                                               uint64_t dim, uint64_t *out_flat,
                                               uint64_t *out_slot, HurrayError *err) {
  if (f == NULL || out_flat == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "fields and out_flat are required");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  if (f->layout.tag != HURRAY_LAYOUT_BLOCK_PAGED)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout_tag",
                        "not a block-paged layout");
  if (f->buffer_count < 3)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "block_paged needs 3 buffers, got %u", f->buffer_count);
  uint32_t ps = f->layout.u.block_paged.page_size;
  uint32_t w = hurray_block_index_width(f->layout.u.block_paged.block_table_index_type);
  uint64_t heads = f->shape[1], hdim = f->shape[2];
  if (seq >= f->layout.u.block_paged.num_seqs)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET, "seq",
                        "sequence %llu of %u", (unsigned long long)seq,
                        f->layout.u.block_paged.num_seqs);
  if (head >= heads || dim >= hdim)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET,
                        head >= heads ? "head" : "dim", "head %llu / dim %llu outside [%llu, %llu]",
                        (unsigned long long)head, (unsigned long long)dim,
                        (unsigned long long)heads, (unsigned long long)hdim);
  HurrayBufView v[HURRAY_MAX_BUFFERS];
  HURRAY_TRY(hurray__buf_views(f, buffers, sizes, v, err));
  uint64_t s0, s1, phys;
  HURRAY_TRY(hurray__idx_read(v, 2, seq, w, "seq_ptr", &s0, err));
  HURRAY_TRY(hurray__idx_read(v, 2, seq + 1, w, "seq_ptr", &s1, err));
  if (s1 < s0)
    return hurray__fail(err, BAD_, (seq + 1) * w, "buffers[2]",
                        "seq_ptr[%llu] = %llu is less than seq_ptr[%llu] = %llu",
                        (unsigned long long)(seq + 1), (unsigned long long)s1,
                        (unsigned long long)seq, (unsigned long long)s0);
  uint64_t page = token / ps, in_page = token % ps;
  if (page >= s1 - s0)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET, "token",
                        "token %llu is beyond the %llu pages of sequence %llu",
                        (unsigned long long)token, (unsigned long long)(s1 - s0),
                        (unsigned long long)seq);
  HURRAY_TRY(hurray__idx_read(v, 1, s0 + page, w, "block_table", &phys, err));
  if (phys >= f->layout.u.block_paged.num_pages)
    return hurray__fail(err, BAD_, (s0 + page) * w, "buffers[1]",
                        "block_table[%llu] = %llu is not a page (num_pages = %llu)",
                        (unsigned long long)(s0 + page), (unsigned long long)phys,
                        (unsigned long long)f->layout.u.block_paged.num_pages);
  uint64_t slot, flat;
  if (hurray__mul_overflow_u64(phys, ps, &slot) || hurray__add_overflow_u64(slot, in_page, &slot) ||
      hurray__mul_overflow_u64(slot, heads, &flat) || hurray__add_overflow_u64(flat, head, &flat) ||
      hurray__mul_overflow_u64(flat, hdim, &flat) || hurray__add_overflow_u64(flat, dim, &flat))
    return hurray__fail(err, HURRAY_ERR_INVALID_LAYOUT, HURRAY_NO_OFFSET, "layout",
                        "the page pool address does not fit in 64 bits");
  *out_flat = flat;
  if (out_slot != NULL) *out_slot = slot;
  return HURRAY_OK;
}

/* ---- dense element offset ---------------------------------------------------------- */

HurrayStatus hurray_layout_element_offset(const HurrayDescriptorFields *f, const uint64_t *index,
                                          int64_t *out, HurrayError *err) {
  if (f == NULL || out == NULL || (f->rank > 0 && index == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, NULL,
                        "fields, index and out are required");
  HURRAY_TRY(hurray__layout_check_shape(f, NULL, HURRAY_DECODE_STRICT, err));
  if (hurray_layout_class(f->layout.tag) != HURRAY_LAYOUT_CLASS_DENSE)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "layout_tag",
                        "%s is not a dense layout", hurray_layout_name(f->layout.tag));
  if (hurray__shape_has_dynamic(f->rank, f->shape))
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "shape",
                        "a dynamic dimension must be resolved before addressing");
  char path[24];
  for (uint32_t k = 0; k < f->rank; k++)
    if (index[k] >= f->shape[k])
      return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "index[%u]", k),
                          "%llu is outside dimension %u of size %llu",
                          (unsigned long long)index[k], k, (unsigned long long)f->shape[k]);
  HurrayStatus st = hurray__dense_offset(f, index, out);
  if (st != HURRAY_OK)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "layout",
                        "the element offset does not fit in 64 bits");
  return HURRAY_OK;
}
