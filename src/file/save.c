/*
 * A file's contents written at once (file.h § Saving many names): what the
 * Python package's save(), save_bytes() and FileWriter do, once, for every
 * binding. The tensors and composites first, in the order given, then the
 * views (checked against the bases just written), then the KV entries; the
 * failure says which step and which entry.
 */
#include "internal/file.h"

static bool is_head(const HurrayDescriptor *d) {
  uint8_t tag = 0;
  return d != NULL && hurray_descriptor_layout_tag(d, &tag) == HURRAY_OK &&
         tag == HURRAY_LAYOUT_COMPOSITE;
}

HurrayStatus hurray_file_writer_add_contents(HurrayFileWriter *w, const HurrayFileContents *c,
                                             HurrayFileSaveFailure *failure, HurrayError *err) {
  HurrayFileSaveFailure scratch;
  HurrayFileSaveFailure *fail = failure != NULL ? failure : &scratch;
  fail->stage = HURRAY_FILE_SAVE_AT_OPEN;
  fail->at = 0;
  if (w == NULL || c == NULL) return HURRAY_ERR_NULL_POINTER;
  fail->stage = HURRAY_FILE_SAVE_AT_TENSOR;
  for (uint64_t i = 0; i < c->item_count; i++) {
    const HurrayFileCompositeNode *n = &c->items[i];
    fail->at = i;
    HURRAY_TRY(is_head(n->descriptor)
                   ? hurray_file_writer_add_composite(w, n, err)
                   : hurray_file_writer_add_tensor(w, n->name, n->name_len, n->descriptor,
                                                   n->buffers, n->sizes, err));
  }
  fail->stage = HURRAY_FILE_SAVE_AT_VIEW;
  for (uint64_t i = 0; i < c->view_count; i++) {
    fail->at = i;
    HURRAY_TRY(hurray_file_writer_add_view(w, &c->views[i], err));
  }
  fail->stage = HURRAY_FILE_SAVE_AT_KV;
  for (uint64_t i = 0; i < c->kv_count; i++) {
    fail->at = i;
    HURRAY_TRY(hurray_file_writer_add_kv(w, c->kv_keys[i], c->kv_key_lens[i], &c->kv_values[i],
                                         err));
  }
  return HURRAY_OK;
}

/* A memory writer's first allocation: the tensors' bytes, each padded to the
 * data alignment, plus room for descriptors, KV and index; 0 (grow as
 * written) for a sum past 1 TiB. */
static uint64_t size_hint(const HurrayFileContents *c) {
  uint64_t hint = (uint64_t)1 << 16;
  for (uint64_t i = 0; i < c->item_count && hint != UINT64_MAX; i++) {
    uint64_t nb = 0;
    const HurrayDescriptor *d = c->items[i].descriptor;
    if (is_head(d) || hurray_descriptor_data_bytes(d, &nb) != HURRAY_OK) continue;
    uint64_t more = nb + 2u * HURRAY_FILE_DEFAULT_ALIGNMENT;
    hint = more > UINT64_MAX - hint ? UINT64_MAX : hint + more;
  }
  return hint > ((uint64_t)1 << 40) ? 0 : hint;
}

HurrayStatus hurray_file_save(const char *path, const HurrayFileWriterOptions *options,
                              const HurrayFileContents *c, void **image, uint64_t *image_size,
                              HurrayFileSaveFailure *failure, HurrayError *err) {
  HurrayFileSaveFailure scratch;
  HurrayFileSaveFailure *fail = failure != NULL ? failure : &scratch;
  fail->stage = HURRAY_FILE_SAVE_AT_OPEN;
  fail->at = 0;
  if (c == NULL || (path == NULL && (image == NULL || image_size == NULL)))
    return HURRAY_ERR_NULL_POINTER;
  if (path == NULL) {
    *image = NULL;
    *image_size = 0;
  }
  HurrayFileWriter *w = NULL;
  HurrayStatus rc = path != NULL ? hurray_file_writer_open(path, options, &w, err)
                                 : hurray_file_writer_open_memory(options, size_hint(c), &w, err);
  if (rc == HURRAY_OK) rc = hurray_file_writer_add_contents(w, c, fail, err);
  if (rc == HURRAY_OK) {
    fail->stage = HURRAY_FILE_SAVE_AT_FINISH;
    fail->at = 0;
    rc = path != NULL ? hurray_file_writer_finish(w, err)
                      : hurray_file_writer_finish_memory(w, image, image_size, err);
  }
  hurray_file_writer_destroy(&w); /* removes the temporary file (or image) unless finished */
  return rc;
}
