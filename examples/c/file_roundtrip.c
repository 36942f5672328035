/*
 * file_roundtrip.c - write a .hrry file with two tensors and two metadata
 * entries, then open it, look a tensor up by name and read its bytes.
 *
 * The file goes to a fresh directory under $TMPDIR (or /tmp), removed at the
 * end. Uses the public API only (docs/reference/c-api/index.md, "Worked examples").
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <direct.h>
#include <io.h>
#define rmdir _rmdir
#define unlink _unlink
#else
#include <unistd.h>
#endif

#include "hurray/hurray.h"

#define CHECK(call)                                                        \
  do {                                                                     \
    HurrayStatus st_ = (call);                                             \
    if (st_ != HURRAY_OK) {                                                \
      fprintf(stderr, "%s failed: %s\n", #call, hurray_status_name(st_)); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

/* Same, printing the error detail. */
#define CHECK_ERR(call, err)                                                       \
  do {                                                                             \
    HurrayStatus st_ = (call);                                                     \
    if (st_ != HURRAY_OK) {                                                        \
      fprintf(stderr, "%s: %s: %s\n", #call, hurray_status_name(st_), (err).message); \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

/* A row-major float32 descriptor of the given shape in one CPU buffer.
 * *out owned by the caller (hurray_descriptor_destroy). */
static HurrayStatus make_f32(uint32_t rank, const uint64_t *shape, HurrayDescriptor **out) {
  uint64_t count = 1;
  for (uint32_t k = 0; k < rank; k++) count *= shape[k];
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  HurrayStatus st = hurray_buffer_size_bytes(HURRAY_DTYPE_FLOAT32, count, &h.byte_size);
  if (st != HURRAY_OK) return st;
  h.alignment = HURRAY_MIN_BUFFER_ALIGNMENT; /* cpu, producer-synced, standard: all 0 */
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = rank;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  return hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, out, NULL);
}

static int write_file(const char *path) {
  static const uint64_t w_shape[2] = {2, 3}, b_shape[1] = {3};
  static const float weights[6] = {1, 2, 3, 4, 5, 6};
  static const float bias[3] = {0.5f, -0.5f, 0.25f};
  HurrayDescriptor *w_desc = NULL, *b_desc = NULL;
  CHECK(make_f32(2, w_shape, &w_desc));
  CHECK(make_f32(1, b_shape, &b_desc));

  /* The bytes go to a temporary file; finish renames it to `path`.
   * skip_fsync: this is a scratch file (keep the default for real data). */
  HurrayFileWriterOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.skip_fsync = true;
  HurrayFileWriter *w = NULL; /* owned: hurray_file_writer_destroy */
  HurrayError err;
  HurrayStatus st = hurray_file_writer_open(path, &opts, &w, &err);
  if (st == HURRAY_OK) {
    /* Each call writes the tensor's bytes before it returns; nothing is kept. */
    const void *w_bufs[1] = {weights}, *b_bufs[1] = {bias};
    st = hurray_file_writer_add_tensor(w, "layer0.weight", 13, w_desc, w_bufs, NULL, &err);
    if (st == HURRAY_OK)
      st = hurray_file_writer_add_tensor(w, "layer0.bias", 11, b_desc, b_bufs, NULL, &err);
  }
  if (st == HURRAY_OK) {
    HurrayKvValue arch = hurray_kv_string("toy", 3); /* borrowed, copied by add_kv */
    HurrayKvValue layers = hurray_kv_int64(1);
    st = hurray_file_writer_add_kv(w, "architecture", 12, &arch, &err);
    if (st == HURRAY_OK) st = hurray_file_writer_add_kv(w, "num_layers", 10, &layers, &err);
  }
  if (st == HURRAY_OK) st = hurray_file_writer_finish(w, &err);
  hurray_file_writer_destroy(&w); /* always; removes the temporary file if not finished */
  CHECK(hurray_descriptor_destroy(w_desc));
  CHECK(hurray_descriptor_destroy(b_desc));
  if (st != HURRAY_OK) {
    fprintf(stderr, "writing %s: %s: %s\n", path, hurray_status_name(st), err.message);
    return 1;
  }
  return 0;
}

static int read_file(const char *path) {
  HurrayFile *f = NULL; /* owned: hurray_file_close */
  HurrayError err;
  CHECK_ERR(hurray_file_open(path, NULL, &f, &err), err); /* maps the file */

  /* The index, without decoding any descriptor. Names are NOT NUL-terminated. */
  for (uint64_t i = 0; i < hurray_file_tensor_count(f); i++) {
    HurrayFileEntry e;
    CHECK(hurray_file_entry(f, i, &e));
    printf("tensor %" PRIu64 ": %.*s, %" PRIu64 " data bytes at %" PRIu64 "\n", i,
           (int)e.name_len, e.name, e.data_length, e.data_offset);
  }

  /* Find by name, fetch (decodes that one descriptor), read a zero-copy view. */
  uint64_t index = 0;
  CHECK(hurray_file_find(f, "layer0.bias", 11, &index));
  HurrayFileTensor *t = NULL; /* owned: hurray_file_tensor_release */
  CHECK_ERR(hurray_file_tensor(f, index, &t, &err), err);
  /* About to use all of its bytes: read them ahead, several threads at once
   * when they are large and not in memory yet (0: the file's workers). */
  HurrayFileEntry entry;
  CHECK(hurray_file_entry(f, index, &entry));
  CHECK_ERR(hurray_file_prefetch(f, entry.data_offset, entry.data_length, 0, &err), err);

  const HurrayKvValue *arch = NULL; /* borrowed until hurray_file_close */
  CHECK(hurray_file_kv_find(f, "architecture", 12, &arch));
  printf("architecture = %.*s\n", (int)arch->v.str.len, arch->v.str.data);

  hurray_file_close(&f); /* t stays valid: it holds the mapping */

  const void *data = NULL; /* borrowed from t, read-only */
  uint64_t size = 0;
  CHECK(hurray_file_tensor_buffer(t, 0, &data, &size));
  float bias[3];
  if (size != sizeof bias) return 1;
  memcpy(bias, data, sizeof bias);
  printf("%s = [%g, %g, %g] (%s)\n", hurray_file_tensor_name(t, NULL), (double)bias[0],
         (double)bias[1], (double)bias[2], hurray_file_tensor_is_mapped(t) ? "mapped" : "copied");
  int ok = bias[0] == 0.5f && bias[1] == -0.5f && bias[2] == 0.25f;
  hurray_file_tensor_release(&t); /* the last user: the file is unmapped */
  return ok ? 0 : 1;
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  char dir[512], path[600];
#if defined(_WIN32)
  if (tmp == NULL || *tmp == '\0') tmp = getenv("TEMP");
  snprintf(dir, sizeof dir, "%s/hurray-example-XXXXXX", tmp != NULL && *tmp ? tmp : ".");
  if (_mktemp(dir) == NULL || _mkdir(dir) != 0) { /* no mkdtemp on Windows */
    perror("mkdir");
    return 1;
  }
#else
  snprintf(dir, sizeof dir, "%s/hurray-example-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
#endif
  snprintf(path, sizeof path, "%s/model.hrry", dir);
  int rc = write_file(path);
  if (rc == 0) rc = read_file(path);
  unlink(path);
  rmdir(dir);
  return rc;
}
