/*
 * The components of a sparse tensor (include/hurray/descriptor.h,
 * hurray_descriptor_component): which buffer holds the values or an index
 * array, and the dense tensor it is, from the layout's buffer roles
 * (src/layout/info.c) and the spec's shapes (coo.md, csr.md, csc.md,
 * csf.md): values [nnz] of the tensor's type; COO indices [nnz, rank],
 * CSR col_indices / CSC row_indices [nnz], CSR row_ptr [rows + 1] and CSC
 * col_ptr [cols + 1], all uint64.
 */
#include "descriptor_impl.h"

#include "hurray/schema.h"

#include <string.h>

/* One extent plus one, a dynamic extent staying dynamic. */
static uint64_t plus_one(uint64_t n) { return n == HURRAY_DYNAMIC_DIM ? n : n + 1u; }

HurrayStatus hurray_descriptor_component(const HurrayDescriptorFields *f, const char *role,
                                         HurrayComponent *out, HurrayError *err) {
  if (f == NULL || role == NULL || out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        f == NULL ? "f" : role == NULL ? "role" : "out", "is NULL");
  memset(out, 0, sizeof *out);
  uint8_t tag = f->layout.tag;
  const HurrayLayoutInfo *info = hurray_layout_info(tag);
  uint64_t nnz = 0;
  uint32_t index = 0, count = 0;
  if (info != NULL && hurray_layout_nnz(&f->layout, &nnz))
    count = tag == HURRAY_LAYOUT_CSF ? 1u : info->buffer_role_count; /* CSF: values only */
  while (index < count && strcmp(info->buffer_roles[index], role) != 0) index++;
  /* CSR and CSC are rank 2 (checked by the validator; not trusted here) */
  if (index == count || (index == 2 && f->rank != 2)) {
    const char *name = hurray_layout_name(tag);
    return hurray__fail(err, HURRAY_ERR_NOT_FOUND, HURRAY_NO_OFFSET, "layout.tag",
                        "a %s tensor has no component '%s'", name != NULL ? name : "non-sparse",
                        role);
  }
  out->buffer_index = index;
  out->type_tag = index == 0 ? f->type_tag : HURRAY_DTYPE_UINT64;
  out->rank = 1;
  out->shape[0] = nnz;
  if (index == 1 && tag == HURRAY_LAYOUT_COO) {
    out->rank = 2;
    out->shape[1] = f->rank;
  } else if (index == 2) { /* the pointer array: one entry per row (CSR) or column (CSC), plus one */
    out->shape[0] = plus_one(f->shape[tag == HURRAY_LAYOUT_CSR ? 0 : 1]);
  }
  return HURRAY_OK;
}
