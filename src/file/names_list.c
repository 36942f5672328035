/*
 * Every name a file gives back (file.h, hurray_file_name_count and
 * hurray_file_name): the stored tensors in file order (composite members
 * included), then the views of shared tensors in record order; what a
 * reader's keys() lists.
 */
#include "internal/file.h"

HurrayStatus hurray_file_name_count(const HurrayFile *f, uint64_t *count, HurrayError *err) {
  if (f == NULL || count == NULL) return HURRAY_ERR_NULL_POINTER;
  uint64_t views = 0;
  *count = 0;
  HURRAY_TRY(hurray_file_view_count(f, &views, err));
  *count = hurray_file_tensor_count(f) + views;
  return HURRAY_OK;
}

HurrayStatus hurray_file_name(const HurrayFile *f, uint64_t i, const char **name, size_t *len,
                              HurrayError *err) {
  if (f == NULL || name == NULL || len == NULL) return HURRAY_ERR_NULL_POINTER;
  uint64_t n = hurray_file_tensor_count(f);
  if (i >= n) {
    HurrayFileView v;
    HURRAY_TRY(hurray_file_view(f, i - n, &v, err));
    *name = v.name;
    *len = v.name_len;
    return HURRAY_OK;
  }
  uint64_t idx = 0;
  HurrayFileEntry e;
  HURRAY_TRY(hurray_file_position(f, i, &idx));
  HURRAY_TRY(hurray_file_entry(f, idx, &e));
  *name = e.name;
  *len = e.name_len;
  return HURRAY_OK;
}
