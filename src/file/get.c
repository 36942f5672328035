/*
 * hurray_file_get: one lookup for every name a writer gave, a stored tensor
 * (reader.c, tensor.c) or a view of a shared tensor (views.c). Above both,
 * so neither calls the other back.
 */
#include "internal/file.h"

HurrayStatus hurray_file_get(const HurrayFile *f, const char *name, size_t name_len,
                             HurrayFileTensor **out, HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (f == NULL || (name == NULL && name_len > 0))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        f == NULL ? "file" : "name", "is NULL");
  uint64_t i = 0;
  HurrayStatus st = hurray_file_find(f, name, name_len, &i);
  if (st == HURRAY_OK) return hurray_file_tensor(f, i, out, err);
  if (st != HURRAY_ERR_NOT_FOUND)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "name", "%s",
                        st == HURRAY_ERR_DUPLICATE_NAME
                            ? "several index entries have this name (the file is invalid)"
                            : hurray_status_message(st));
  st = hurray_file_find_view(f, name, name_len, &i, err);
  if (st == HURRAY_ERR_NOT_FOUND)
    return hurray__fail(err, st, HURRAY_NO_OFFSET, "name", "no tensor or view has this name");
  if (st != HURRAY_OK) return st;
  return hurray_file_view_tensor(f, i, NULL, out, err);
}
