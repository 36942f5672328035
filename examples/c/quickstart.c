/*
 * quickstart.c - the C library in one page: describe a tensor, write it to
 * a .hrry file with one metadata entry, open the file, find the tensor by
 * name and read its values without copying them.
 *
 * Writes quickstart.hrry in the current folder (and leaves it there, for
 * another program to read: the guide's next step reads it from Python).
 * Uses the public API only (docs/guide/c-library.md).
 */
#include <stdio.h>
#include <string.h>

#include "hurray/hurray.h"

/* Every function that can fail returns a HurrayStatus; HURRAY_OK is 0. */
#define CHECK(call)                                                        \
  do {                                                                     \
    HurrayStatus st_ = (call);                                             \
    if (st_ != HURRAY_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, hurray_status_name(st_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

static int write_file(const char *path) {
  static const uint64_t shape[2] = {2, 3};
  static const float values[6] = {1, 2, 3, 4, 5, 6};

  /* A row-major float32 tensor in one CPU buffer: the descriptor's fields.
   * `fields` and `handle` are caller storage; `shape` is borrowed by them. */
  HurrayBufferHandle handle;
  HurrayDescriptorFields fields;
  HurrayError err;
  HurrayStatus st = hurray_descriptor_fields_dense(HURRAY_DTYPE_FLOAT32, 2, shape,
                                                   HURRAY_LAYOUT_ROW_MAJOR, sizeof values,
                                                   HURRAY_MIN_BUFFER_ALIGNMENT, &handle,
                                                   &fields, &err);
  if (st != HURRAY_OK) {
    fprintf(stderr, "%s\n", err.message); /* names the field and says what is wrong */
    return 1;
  }
  HurrayDescriptor *desc = NULL; /* owned: hurray_descriptor_destroy */
  CHECK(hurray_descriptor_from_fields(&fields, HURRAY_DECODE_STRICT, &desc, NULL));

  /* The writer writes to a temporary file and renames it to `path` in
   * finish: a crash leaves the old file or the new one, never a part. */
  HurrayFileWriter *w = NULL; /* owned: hurray_file_writer_destroy */
  st = hurray_file_writer_open(path, NULL, &w, &err);
  if (st == HURRAY_OK) {
    const void *buffers[1] = {values}; /* borrowed: written before the call returns */
    st = hurray_file_writer_add_tensor(w, "weights", 7, desc, buffers, NULL, &err);
  }
  if (st == HURRAY_OK) {
    HurrayKvValue producer = hurray_kv_string("quickstart.c", 12); /* copied by add_kv */
    st = hurray_file_writer_add_kv(w, "producer", 8, &producer, &err);
  }
  if (st == HURRAY_OK) st = hurray_file_writer_finish(w, &err);
  hurray_file_writer_destroy(&w); /* always; sets w to NULL */
  CHECK(hurray_descriptor_destroy(desc));
  if (st != HURRAY_OK) {
    fprintf(stderr, "writing %s: %s\n", path, err.message);
    return 1;
  }
  return 0;
}

static int read_file(const char *path) {
  HurrayFile *f = NULL; /* owned: hurray_file_close */
  HurrayError err;
  if (hurray_file_open(path, NULL, &f, &err) != HURRAY_OK) { /* maps the file */
    fprintf(stderr, "%s: %s\n", path, err.message);
    return 1;
  }
  uint64_t index = 0;
  CHECK(hurray_file_find(f, "weights", 7, &index)); /* through the file's index */
  HurrayFileTensor *t = NULL; /* owned: hurray_file_tensor_release */
  CHECK(hurray_file_tensor(f, index, &t, &err));
  hurray_file_close(&f); /* t stays valid: it holds the mapping */

  const void *data = NULL; /* borrowed from t: valid until t is released */
  uint64_t size = 0;
  CHECK(hurray_file_tensor_buffer(t, 0, &data, &size));
  float values[6];
  if (size != sizeof values) return 1;
  memcpy(values, data, sizeof values);
  printf("weights: 2 x 3 float32, last value %g\n", (double)values[5]);
  hurray_file_tensor_release(&t); /* the last user: the file is unmapped */
  return values[5] == 6.0f ? 0 : 1;
}

int main(void) {
  if (write_file("quickstart.hrry") != 0) return 1;
  return read_file("quickstart.hrry");
}
