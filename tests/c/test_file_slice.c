/* Partial reads from files (src/file/slice.c): hurray_file_read_slice on
 * mapped, read-mode and in-memory files against the layout function on the
 * whole tensor, the bytes the positioned reads fetch, and the errors. */
#include "internal/slice.h"
#include "test_file_util.h"

static int setup(void **state) {
  (void)state;
  tf_mkdir();
  return 0;
}
static int teardown(void **state) {
  (void)state;
  tf_rmdir();
  return 0;
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static uint64_t rnd_below(uint64_t n) { return n == 0 ? 0 : rnd() % n; }

/* ---- the file ----------------------------------------------------------------------- */

typedef struct Spec {
  const char *name;
  uint8_t type;
  uint8_t layout;
  uint32_t rank;
  uint64_t shape[3];
  int64_t strides[3];
  uint32_t bits[3];
  uint64_t tile[3];
  HurrayTiledLevel lv[1];
  uint64_t byte_offset;
} Spec;

static Spec specs[] = {
    {"w", HURRAY_DTYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, 2, {64, 4096, 0}, {0}, {0}, {0}, {{0}}, 0},
    {"m", HURRAY_DTYPE_INT4, HURRAY_LAYOUT_MORTON, 2, {256, 256, 0}, {0}, {8, 8, 0}, {0}, {{0}}, 0},
    {"t", HURRAY_DTYPE_BOOL, HURRAY_LAYOUT_TILED, 2, {40, 70, 0}, {0}, {0}, {8, 16, 0}, {{0}}, 0},
    {"c", HURRAY_DTYPE_FLOAT6_E2M3, HURRAY_LAYOUT_COL_MAJOR, 3, {7, 33, 17}, {0}, {0}, {0}, {{0}},
     0},
    {"s", HURRAY_DTYPE_INT16, HURRAY_LAYOUT_STRIDED, 2, {30, 20, 0}, {-21, 1, 0}, {0}, {0}, {{0}},
     29 * 21 * 2},
    {"h", HURRAY_DTYPE_UINT8, HURRAY_LAYOUT_HILBERT, 2, {32, 32, 0}, {0}, {0}, {0}, {{0}}, 0},
};
#define NSPECS (sizeof specs / sizeof specs[0])

static HurrayDescriptorFields spec_fields(Spec *s, HurrayBufferHandle *h) {
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = s->type;
  f.rank = s->rank;
  f.shape = s->shape;
  f.byte_offset = s->byte_offset;
  f.layout.tag = s->layout;
  if (s->layout == HURRAY_LAYOUT_STRIDED) f.layout.u.strided.strides = s->strides;
  if (s->layout == HURRAY_LAYOUT_MORTON) f.layout.u.morton.bits = s->bits;
  if (s->layout == HURRAY_LAYOUT_HILBERT) {
    f.layout.u.hilbert.order = 5;
    f.layout.u.hilbert.rank = 2;
  }
  if (s->layout == HURRAY_LAYOUT_TILED) {
    s->lv[0] = (HurrayTiledLevel){s->tile, 1, 1, NULL, NULL};
    f.layout.u.tiled.depth = 1;
    f.layout.u.tiled.levels = s->lv;
  }
  memset(h, 0, sizeof *h);
  h->alignment = 64;
  h->device_tag = HURRAY_DEVICE_CPU;
  h->sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  f.buffer_count = 1;
  f.buffers = h;
  HurrayError e;
  if (hurray_layout_min_buffer_size(&f, 0, &h->byte_size, &e) != HURRAY_OK)
    fail_msg("%s: %s", s->name, e.message);
  return f;
}

/* Writes every spec with random contents to slices.hrry. */
static const char *write_file(void) {
  const char *path = tf_path("slices.hrry");
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  for (size_t i = 0; i < NSPECS; i++) {
    HurrayBufferHandle h;
    HurrayDescriptorFields f = spec_fields(&specs[i], &h);
    HurrayDescriptor *d = NULL;
    if (hurray_descriptor_from_fields(&f, 0, &d, &e) != HURRAY_OK)
      fail_msg("%s: %s", specs[i].name, e.message);
    uint8_t *b = malloc((size_t)h.byte_size);
    for (uint64_t k = 0; k < h.byte_size; k++) b[k] = (uint8_t)rnd();
    const void *bufs[1] = {b};
    assert_int_equal(hurray_file_writer_add_tensor(w, specs[i].name, strlen(specs[i].name), d,
                                                   bufs, NULL, &e),
                     HURRAY_OK);
    free(b);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  }
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  return path;
}

static uint64_t find(const HurrayFile *f, const char *name) {
  uint64_t i = 0;
  assert_int_equal(hurray_file_find(f, name, strlen(name), &i), HURRAY_OK);
  return i;
}

/* The selection through the file, and through the layout function on the
 * whole tensor (fetched from `ref`); both must agree. Returns the bytes the
 * file read with positioned reads for it. */
static uint64_t compare(HurrayFile *f, HurrayFile *ref, const char *name,
                        const HurraySliceRange *q) {
  uint64_t i = find(f, name);
  HurrayFileTensor *t = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_tensor(ref, i, &t, &e), HURRAY_OK);
  HurrayDescriptorFields fl;
  assert_int_equal(hurray_descriptor_fields(hurray_file_tensor_descriptor(t), &fl), HURRAY_OK);
  uint64_t bytes = 0;
  assert_int_equal(hurray_layout_slice_shape(&fl, q, NULL, &bytes, &e), HURRAY_OK);
  uint8_t *want = malloc((size_t)bytes + 1), *got = malloc((size_t)bytes + 1);
  const void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &data, &size), HURRAY_OK);
  HurrayStatus st = hurray_layout_slice_to_row_major(&fl, &data, &size, q, want, bytes, &e);
  if (st != HURRAY_OK) fail_msg("%s: %s", name, e.message);
  memset(got, 0x5A, (size_t)bytes + 1);
  uint64_t before = hurray__file_slice_bytes_read();
  st = hurray_file_read_slice(f, i, fl.rank, q, got, bytes, &e);
  uint64_t read = hurray__file_slice_bytes_read() - before;
  if (st != HURRAY_OK) fail_msg("%s: %s", name, e.message);
  assert_memory_equal(got, want, (size_t)bytes);
  assert_int_equal(got[bytes], 0x5A);
  free(want);
  free(got);
  hurray_file_tensor_release(&t);
  return read;
}

static HurraySliceRange random_range(uint64_t d) {
  HurraySliceRange q = {0, d, 1, 0};
  switch (rnd_below(4)) {
    case 0:
      break;
    case 1:
      q.start = rnd_below(d);
      q.stop = q.start + 1;
      break;
    default:
      q.start = rnd_below(d);
      q.stop = q.start + 1 + rnd_below(d - q.start);
      q.step = 1 + rnd_below(3);
      break;
  }
  if (rnd_below(4) == 0) q.flags = HURRAY_SLICE_REVERSE;
  return q;
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_every_mode_agrees(void **state) {
  (void)state;
  const char *path = write_file();
  HurrayFile *mapped = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  HurrayFile *reading = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  size_t len;
  uint8_t *image = tf_load(path, &len);
  HurrayFile *memory = NULL;
  HurrayError e;
  assert_int_equal(tf_open_image(image, len, &memory, &e), HURRAY_OK);
  free(image);
  HurrayFile *files[3] = {mapped, reading, memory};
  for (size_t s = 0; s < NSPECS; s++) {
    for (int trial = 0; trial < 40; trial++) {
      HurraySliceRange q[3];
      for (uint32_t k = 0; k < specs[s].rank; k++) q[k] = random_range(specs[s].shape[k]);
      for (int m = 0; m < 3; m++) {
        uint64_t read = compare(files[m], mapped, specs[s].name, q);
        if (m != 1) assert_int_equal(read, 0); /* mapped: no positioned read */
      }
    }
  }
  hurray_file_close(&mapped);
  hurray_file_close(&reading);
  hurray_file_close(&memory);
}

/* Pages of buffer 0 holding a selected element (forward ranges). */
static uint64_t pages_needed(const HurrayDescriptorFields *f, const HurraySliceRange *q) {
  uint64_t n[3], vol = 1, j[3] = {0}, x[3];
  assert_int_equal(hurray_layout_slice_shape(f, q, n, NULL, NULL), HURRAY_OK);
  for (uint32_t k = 0; k < f->rank; k++) vol *= n[k];
  uint64_t pages = f->buffers[0].byte_size / 4096 + 1;
  uint8_t *mark = calloc((size_t)pages, 1);
  uint32_t bits = hurray_dtype_info(f->type_tag)->bit_width;
  for (uint64_t o = 0; o < vol; o++) {
    for (uint32_t k = 0; k < f->rank; k++) x[k] = q[k].start + j[k] * q[k].step;
    int64_t off = 0;
    assert_int_equal(hurray_layout_element_offset(f, x, &off, NULL), HURRAY_OK);
    uint64_t byte = f->byte_offset + (bits >= 8 ? (uint64_t)off * (bits / 8)
                                                : (uint64_t)off / (8 / bits));
    mark[byte / 4096] = 1;
    for (uint32_t k = f->rank; k-- > 0;) {
      if (++j[k] < n[k]) break;
      j[k] = 0;
    }
  }
  uint64_t c = 0;
  for (uint64_t p = 0; p < pages; p++) c += mark[p];
  free(mark);
  return c;
}

static void test_reads_only_what_it_needs(void **state) {
  (void)state;
  const char *path = write_file();
  HurrayFile *mapped = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  /* Rows 16..23 of "w" [64, 4096] float32: exactly their 128 KiB, one read. */
  HurraySliceRange rows[2] = {{16, 24, 1, 0}, {0, 4096, 1, 0}};
  assert_int_equal(compare(f, mapped, "w", rows), 8 * 4096 * 4);
  /* Columns 1000..1999 of every row: 4000 bytes per row, read directly. */
  HurraySliceRange cols[2] = {{0, 64, 1, 0}, {1000, 2000, 1, 0}};
  assert_int_equal(compare(f, mapped, "w", cols), 64 * 1000 * 4);
  /* Columns 0..63: 256 bytes per row, through the pages that hold them, one
   * page per row (rows are 16 KiB). */
  HurraySliceRange narrow[2] = {{0, 64, 1, 0}, {0, 64, 1, 0}};
  assert_int_equal(compare(f, mapped, "w", narrow), 64 * 4096);
  /* Rows 0..31 of the Morton int4 [256, 256] tensor (32 KiB, 8 pages):
   * element by element, through exactly the pages holding them (4). */
  HurraySliceRange m[2] = {{0, 32, 1, 0}, {0, 256, 1, 0}};
  HurrayFileTensor *t = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_tensor(mapped, find(mapped, "m"), &t, &e), HURRAY_OK);
  HurrayDescriptorFields fl;
  assert_int_equal(hurray_descriptor_fields(hurray_file_tensor_descriptor(t), &fl), HURRAY_OK);
  uint64_t need = pages_needed(&fl, m);
  assert_int_equal(need, 4);
  assert_int_equal(compare(f, mapped, "m", m), need * 4096);
  /* Random selections of every tensor never read more than the pages holding
   * their elements plus the elements' own bytes. */
  for (size_t s = 0; s < NSPECS; s++) {
    HurrayFileTensor *ts = NULL;
    assert_int_equal(hurray_file_tensor(mapped, find(mapped, specs[s].name), &ts, &e), HURRAY_OK);
    HurrayDescriptorFields fs;
    assert_int_equal(hurray_descriptor_fields(hurray_file_tensor_descriptor(ts), &fs), HURRAY_OK);
    for (int trial = 0; trial < 30; trial++) {
      HurraySliceRange q[3];
      for (uint32_t k = 0; k < fs.rank; k++) {
        q[k] = random_range(fs.shape[k]);
        q[k].flags = 0;
      }
      uint64_t bytes = 0;
      assert_int_equal(hurray_layout_slice_shape(&fs, q, NULL, &bytes, NULL), HURRAY_OK);
      uint64_t read = compare(f, mapped, specs[s].name, q);
      uint64_t bound = pages_needed(&fs, q) * 4096 + bytes * 2 + 8;
      if (read > bound || read > fs.buffers[0].byte_size + bytes * 2 + 8)
        fail_msg("%s: read %llu bytes, bound %llu", specs[s].name, (unsigned long long)read,
                 (unsigned long long)bound);
    }
    hurray_file_tensor_release(&ts);
  }
  hurray_file_tensor_release(&t);
  hurray_file_close(&mapped);
  hurray_file_close(&f);
}

static void test_errors(void **state) {
  (void)state;
  const char *path = write_file();
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  uint8_t out[64];
  HurraySliceRange q[2] = {{0, 1, 1, 0}, {0, 4, 1, 0}};
  HurrayError e;
  assert_int_equal(hurray_file_read_slice(NULL, 0, 2, q, out, sizeof out, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_read_slice(f, 99, 2, q, out, sizeof out, &e),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  uint64_t w = find(f, "w");
  assert_int_equal(hurray_file_read_slice(f, w, 3, q, out, sizeof out, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "rank");
  assert_non_null(strstr(e.message, "tensor \"w\""));
  q[1].stop = 4097;
  assert_int_equal(hurray_file_read_slice(f, w, 2, q, out, sizeof out, &e),
                   HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
  assert_string_equal(e.field, "ranges[1].stop");
  assert_non_null(strstr(e.message, "tensor \"w\""));
  assert_non_null(strstr(e.message, "stop 4097 is outside dimension 1 of size 4096"));
  q[1].stop = 4;
  assert_int_equal(hurray_file_read_slice(f, w, 2, q, out, 15, &e), HURRAY_ERR_BUFFER_TOO_SMALL);
  assert_int_equal(hurray_file_read_slice(f, w, 2, q, out, 16, &e), HURRAY_OK);
  /* The file shrinks under a reader: the positioned read fails, nothing more. */
  size_t len;
  uint8_t *image = tf_load(path, &len);
  HurrayFileEntry entry;
  assert_int_equal(hurray_file_entry(f, w, &entry), HURRAY_OK);
  assert_int_equal(truncate(path, (off_t)entry.data_offset + 1000), 0);
  q[1] = (HurraySliceRange){0, 4096, 1, 0};
  uint8_t *big = malloc(4096 * 4);
  assert_int_equal(hurray_file_read_slice(f, w, 2, q, big, 4096 * 4, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "tensor \"w\""));
  free(big);
  tf_store(path, image, len);
  free(image);
  hurray_file_close(&f);
}

/* Every allocation the page path makes can fail: the error is
 * HURRAY_ERR_OUT_OF_MEMORY and nothing leaks. */
static void test_allocation_failures(void **state) {
  (void)state;
  const char *path = write_file();
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  uint64_t m = find(f, "m");
  HurraySliceRange q[2] = {{0, 32, 1, 0}, {0, 256, 1, 0}};
  uint8_t *out = malloc(32 * 256 / 2);
  tu_alloc_install();
  for (long n = 0;; n++) {
    tu_fail_alloc_after(n);
    long live = tu_alloc_live();
    HurrayError e;
    HurrayStatus st = hurray_file_read_slice(f, m, 2, q, out, 32 * 256 / 2, &e);
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), live);
    if (st == HURRAY_OK) break;
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
    assert_true(n < 20);
  }
  hurray_set_allocator(NULL);
  free(out);
  hurray_file_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_every_mode_agrees, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reads_only_what_it_needs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_failures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
