/* The byte sources of the .hrry reader and writer: a file image written into
 * memory (hurray_file_writer_open_memory), opened from memory with views or
 * copies (hurray_file_open_memory), and read through a caller's read-at
 * function (hurray_file_open_reader), each giving what the file path gives. */
#include <signal.h>
#if !defined(_WIN32)
#include <sys/resource.h>
#endif

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

/* ---- a file with a bit of everything, written to a file or to memory ---------- */

enum { N_A = 3 * 5, N_B = 70000 };

static float g_a[N_A];
static uint8_t g_b[N_B];

static void fill(void) {
  for (int i = 0; i < N_A; i++) g_a[i] = (float)i * 0.5f;
  for (int i = 0; i < N_B; i++) g_b[i] = (uint8_t)(i * 7 + 3);
}

static void add(HurrayFileWriter *w, const char *name, const HurrayDescriptor *d,
                const void *data) {
  HurrayError e;
  const void *bufs[1] = {data};
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_data_bytes(d, &n), HURRAY_OK);
  if (hurray_file_writer_add_tensor(w, name, strlen(name), d, bufs, &n, &e) != HURRAY_OK)
    fail_msg("add %s: %s", name, e.message);
}

static void add_all(HurrayFileWriter *w) {
  fill();
  HurrayDescriptor *a = tf_desc_f32(3, 5), *b = tf_desc_u8(N_B), *z = tf_desc_u8(0);
  add(w, "b.bytes", b, g_b);
  add(w, "a.weight", a, g_a);
  add(w, "empty", z, NULL);
  HurrayKvValue v = hurray_kv_string("memory", 6);
  HurrayError e;
  assert_int_equal(hurray_file_writer_add_kv(w, "origin", 6, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(a), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(b), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(z), HURRAY_OK);
}

static HurrayFileWriterOptions opts(bool sorted, bool checksums) {
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  o.sorted_index = sorted;
  o.skip_fsync = true;
  o.data_checksums = checksums;
  return o;
}

/* The image a memory writer makes (owned: hurray_free). */
static uint8_t *memory_image(const HurrayFileWriterOptions *o, uint64_t hint, uint64_t *size) {
  HurrayFileWriter *w = NULL;
  HurrayError e;
  if (hurray_file_writer_open_memory(o, hint, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  add_all(w);
  void *data = NULL;
  if (hurray_file_writer_finish_memory(w, &data, size, &e) != HURRAY_OK)
    fail_msg("finish_memory: %s", e.message);
  hurray_file_writer_destroy(&w);
  assert_non_null(data);
  return data;
}

static void test_memory_image_is_the_file(void **state) {
  (void)state;
  for (int k = 0; k < 4; k++) {
    HurrayFileWriterOptions o = opts(k & 1, k & 2);
    HurrayFileWriter *w = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_writer_open(tf_path("f.hrry"), &o, &w, &e), HURRAY_OK);
    add_all(w);
    assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
    hurray_file_writer_destroy(&w);
    size_t flen = 0;
    uint8_t *file = tf_load(tf_path("f.hrry"), &flen);
    /* no hint, a hint too small, an exact hint, a generous one: one image */
    const uint64_t hints[] = {0, 100, flen, 1u << 20};
    for (size_t h = 0; h < sizeof hints / sizeof hints[0]; h++) {
      uint64_t size = 0;
      uint8_t *img = memory_image(&o, hints[h], &size);
      assert_int_equal(size, flen);
      assert_memory_equal(img, file, flen);
      /* aligned to the data alignment: views of it meet every declared alignment */
      assert_int_equal((uintptr_t)img % HURRAY_FILE_DEFAULT_ALIGNMENT, 0);
      hurray_free(img);
    }
    free(file);
  }
}

static void test_memory_writer_finish_rules(void **state) {
  (void)state;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  HurrayFileWriterOptions o = opts(false, false);
  assert_int_equal(hurray_file_writer_open_memory(&o, 0, &w, &e), HURRAY_OK);
  /* a memory writer is finished into memory, a file writer into its file */
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "hurray_file_writer_finish_memory"));
  void *data = (void *)&e;
  uint64_t size = 7;
  assert_int_equal(hurray_file_writer_finish_memory(w, &data, NULL, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_null(data);
  assert_int_equal(hurray_file_writer_finish_memory(w, &data, &size, &e), HURRAY_OK);
  assert_int_equal(size, HURRAY_FILE_HEADER_LEN + 8 + HURRAY_FILE_TRAILER_LEN);
  hurray_free(data);
  assert_int_equal(hurray_file_writer_finish_memory(w, &data, &size, &e),
                   HURRAY_ERR_INVALID_STATE);
  assert_null(data);
  assert_int_equal(size, 0);
  hurray_file_writer_destroy(&w);

  assert_int_equal(hurray_file_writer_open(tf_path("x.hrry"), &o, &w, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish_memory(w, &data, &size, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  hurray_file_writer_destroy(&w);
  assert_int_equal(tf_dir_entries(), 0);

  HurrayFileWriterOptions bad = o;
  bad.data_alignment = 1000;
  assert_int_equal(hurray_file_writer_open_memory(&bad, 0, &w, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_null(w);
  assert_int_equal(hurray_file_writer_open_memory(&o, 0, NULL, &e), HURRAY_ERR_NULL_POINTER);
}

/* Abandoned, destroyed unfinished, or failing on memory: nothing leaks. */
static void test_memory_writer_allocation_failures(void **state) {
  (void)state;
  fill();
  HurrayDescriptor *b = tf_desc_u8(N_B); /* the test's, made before the counting starts */
  tu_alloc_install();
  for (long n = 0;; n++) {
    tu_fail_alloc_after(n);
    HurrayFileWriter *w = NULL;
    HurrayError e;
    HurrayFileWriterOptions o = opts(true, true);
    HurrayStatus st = hurray_file_writer_open_memory(&o, 0, &w, &e);
    void *data = NULL;
    uint64_t size = 0;
    if (st == HURRAY_OK) {
      const void *bufs[1] = {g_b};
      uint64_t nb = N_B;
      st = hurray_file_writer_add_tensor(w, "b", 1, b, bufs, &nb, &e);
      if (st == HURRAY_OK) {
        st = hurray_file_writer_finish_memory(w, &data, &size, &e);
        /* finishing ends the writer, whatever its outcome */
        void *again = NULL;
        uint64_t again_size = 0;
        assert_int_equal(hurray_file_writer_finish_memory(w, &again, &again_size, &e),
                         HURRAY_ERR_INVALID_STATE);
      }
      hurray_file_writer_destroy(&w);
    }
    bool done = st == HURRAY_OK;
    if (!done) {
      assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
      assert_null(data);
    }
    hurray_free(data);
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), 0);
    if (done) break;
    assert_true(n < 200);
  }
  hurray_set_allocator(NULL);
  assert_int_equal(hurray_descriptor_destroy(b), HURRAY_OK);
}

#if !defined(_WIN32)
/* The file-size limit at 0: a file writer fails (EFBIG), a memory writer
 * never touches the file system, and its image opens. */
static void test_memory_writer_needs_no_file_system(void **state) {
  (void)state;
  struct rlimit old;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit zero = {0, old.rlim_max};
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &zero), 0);

  HurrayFileWriterOptions o = opts(false, true);
  HurrayFileWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(tf_path("limited.hrry"), &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *b = tf_desc_u8(N_B);
  const void *bufs[1] = {g_b};
  uint64_t nb = N_B;
  HurrayStatus file_st = hurray_file_writer_add_tensor(w, "b", 1, b, bufs, &nb, &e);
  if (file_st == HURRAY_OK) file_st = hurray_file_writer_finish(w, &e);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(b), HURRAY_OK);

  uint64_t size = 0;
  uint8_t *img = memory_image(&o, 0, &size);

  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, prev);
  assert_int_equal(file_st, HURRAY_ERR_IO);
  assert_int_equal(tf_dir_entries(), 0); /* the failed save left nothing */

  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open_memory(img, size, NULL, NULL, NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_tensor_count(f), 3);
  HurrayFileDataReport rep;
  assert_int_equal(hurray_file_verify_data(f, &rep, &e), HURRAY_OK);
  hurray_file_close(&f);
  hurray_free(img);
}
#endif

/* ---- reading: the same tensors from every source --------------------------------- */

/* What a fetch of every tensor gives: names, bytes, mapped or not. */
static void check_tensors(HurrayFile *f, bool mapped) {
  assert_int_equal(hurray_file_tensor_count(f), 3);
  const char *names[3] = {"b.bytes", "a.weight", "empty"};
  const void *data[3] = {g_b, g_a, NULL};
  const uint64_t sizes[3] = {N_B, sizeof g_a, 0};
  for (int i = 0; i < 3; i++) {
    uint64_t ix = 0;
    assert_int_equal(hurray_file_find(f, names[i], strlen(names[i]), &ix), HURRAY_OK);
    HurrayFileTensor *t = NULL;
    HurrayError e;
    if (hurray_file_tensor(f, ix, &t, &e) != HURRAY_OK) fail_msg("%s: %s", names[i], e.message);
    assert_int_equal(hurray_file_tensor_is_mapped(t), mapped);
    const void *bd = NULL;
    uint64_t bsize = 0;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &bd, &bsize), HURRAY_OK);
    assert_int_equal(bsize, sizes[i]);
    if (sizes[i] > 0) {
      assert_memory_equal(bd, data[i], (size_t)sizes[i]);
      assert_int_equal((uintptr_t)bd % 64, 0);
    }
    hurray_file_tensor_release(&t);
  }
  const HurrayKvValue *v = NULL;
  assert_int_equal(hurray_file_kv_find(f, "origin", 6, &v), HURRAY_OK);
  assert_int_equal(v->tag, HURRAY_KV_STRING);
  HurrayFileDataReport rep;
  HurrayError e;
  assert_int_equal(hurray_file_verify_data(f, &rep, &e), HURRAY_OK);
  assert_int_equal(rep.tensors, 3);
  assert_int_equal(hurray_file_verify(f, &e), HURRAY_OK);
}

static int g_released;
static void count_release(void *ctx, const void *data, uint64_t size) {
  (void)data;
  (void)size;
  g_released++;
  tu_aligned_free(ctx);
}

static void test_memory_read_copies(void **state) {
  (void)state;
  HurrayFileWriterOptions o = opts(false, true);
  uint64_t size = 0;
  uint8_t *img = memory_image(&o, 0, &size);
  /* a misaligned copy: views could not meet their alignment, copies do */
  uint8_t *raw = tu_aligned_alloc(4096, (size_t)size + 8);
  memcpy(raw + 8, img, (size_t)size);
  hurray_free(img);
  HurrayFileOpenOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.access = HURRAY_FILE_ACCESS_READ;
  HurrayFile *f = NULL;
  HurrayError e;
  g_released = 0;
  assert_int_equal(hurray_file_open_memory(raw + 8, size, count_release, raw, &ro, &f, &e),
                   HURRAY_OK);
  HurrayFileInfo info;
  assert_int_equal(hurray_file_info(f, &info), HURRAY_OK);
  assert_false(info.mapped);
  assert_int_equal(info.access, HURRAY_FILE_ACCESS_READ);
  check_tensors(f, false);
  /* a tensor outlives the file without the memory: it owns its bytes */
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_OK);
  hurray_file_close(&f);
  assert_int_equal(g_released, 1);
  const void *bd = NULL;
  uint64_t bsize = 0;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &bd, &bsize), HURRAY_OK);
  assert_memory_equal(bd, g_a, sizeof g_a);
  hurray_file_tensor_release(&t);

  /* the same misaligned memory as views: refused, naming the alignment */
  raw = tu_aligned_alloc(4096, (size_t)size + 8);
  img = memory_image(&o, 0, &size);
  memcpy(raw + 8, img, (size_t)size);
  hurray_free(img);
  assert_int_equal(hurray_file_open_memory(raw + 8, size, NULL, NULL, NULL, &f, &e), HURRAY_OK);
  uint64_t ix = 0;
  assert_int_equal(hurray_file_find(f, "b.bytes", 7, &ix), HURRAY_OK);
  assert_int_equal(hurray_file_tensor(f, ix, &t, &e), HURRAY_ERR_MISALIGNED);
  hurray_file_close(&f);
  tu_aligned_free(raw);

  ro.access = (HurrayFileAccess)7;
  assert_int_equal(hurray_file_open_memory(raw, size, NULL, NULL, &ro, &f, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
}

/* A caller's reader over an image, counting what it is asked for. */
typedef struct Img {
  const uint8_t *p;
  uint64_t size;
  uint64_t largest; /* the longest read asked for */
  uint64_t bytes;   /* every byte asked for */
  int closed;
  uint64_t fail_at; /* a read covering this offset fails (UINT64_MAX: none) */
} Img;

static int img_read(void *ctx, uint64_t off, void *buf, uint64_t len, char *why, size_t n) {
  Img *m = ctx;
  if (off > m->size || len > m->size - off) fail_msg("read past the end: %llu+%llu",
                                                     (unsigned long long)off,
                                                     (unsigned long long)len);
  if (m->fail_at >= off && m->fail_at < off + len) {
    snprintf(why, n, "the object store said 503 at %llu", (unsigned long long)m->fail_at);
    return 5;
  }
  if (len > m->largest) m->largest = len;
  m->bytes += len;
  memcpy(buf, m->p + off, (size_t)len);
  return 0;
}

static void img_close(void *ctx) { ((Img *)ctx)->closed++; }

static HurrayFileReader reader_of(Img *m, uint64_t max_read) {
  HurrayFileReader r;
  memset(&r, 0, sizeof r);
  r.read_at = img_read;
  r.close = img_close;
  r.ctx = m;
  r.size = m->size;
  r.max_read = max_read;
  return r;
}

static void test_reader_callback(void **state) {
  (void)state;
  HurrayFileWriterOptions o = opts(true, true);
  uint64_t size = 0;
  uint8_t *img = memory_image(&o, 0, &size);
  Img m = {img, size, 0, 0, 0, UINT64_MAX};
  for (int k = 0; k < 2; k++) {
    m.largest = m.bytes = 0;
    m.closed = 0;
    uint64_t max_read = k ? 4096 : 0;
    HurrayFileReader r = reader_of(&m, max_read);
    HurrayFile *f = NULL;
    HurrayError e;
    if (hurray_file_open_reader(&r, NULL, &f, &e) != HURRAY_OK) fail_msg("%s", e.message);
    /* the open reads the header, the trailer, the index and the KV: not the data */
    assert_true(m.bytes < 4096);
    HurrayFileInfo info;
    assert_int_equal(hurray_file_info(f, &info), HURRAY_OK);
    assert_false(info.mapped);
    assert_int_equal(info.access, HURRAY_FILE_ACCESS_READ);
    check_tensors(f, false);
    if (max_read) assert_true(m.largest <= max_read);
    else assert_true(m.largest >= N_B);

    /* a slice reads the pages it needs, through the reader */
    uint64_t ix = 0;
    assert_int_equal(hurray_file_find(f, "b.bytes", 7, &ix), HURRAY_OK);
    HurraySliceRange rg = {N_B - 10, N_B, 1, 0};
    uint8_t out[10];
    uint64_t before = m.bytes;
    assert_int_equal(hurray_file_read_slice(f, ix, 1, &rg, out, sizeof out, &e), HURRAY_OK);
    assert_memory_equal(out, g_b + N_B - 10, 10);
    assert_true(m.bytes - before <= 2 * 4096);
    assert_int_equal(m.closed, 0);
    hurray_file_close(&f);
    assert_int_equal(m.closed, 1);
  }

  /* a read that fails: HURRAY_ERR_IO with the reader's reason, at the offset */
  HurrayFileReader r = reader_of(&m, 0);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open_reader(&r, NULL, &f, &e), HURRAY_OK);
  uint64_t ix = 0;
  assert_int_equal(hurray_file_find(f, "b.bytes", 7, &ix), HURRAY_OK);
  HurrayFileEntry en;
  assert_int_equal(hurray_file_entry(f, ix, &en), HURRAY_OK);
  m.fail_at = en.data_offset + 100;
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, ix, &t, &e), HURRAY_ERR_IO);
  assert_null(t);
  assert_non_null(strstr(e.message, "the object store said 503"));
  assert_non_null(strstr(e.message, "reading a buffer"));
  hurray_file_close(&f);
  m.closed = 0;
  /* failing at open: the source is the caller's again (close not called) */
  m.fail_at = size - 1;
  assert_int_equal(hurray_file_open_reader(&r, NULL, &f, &e), HURRAY_ERR_IO);
  assert_non_null(strstr(e.message, "reading the trailer"));
  assert_int_equal(m.closed, 0);
  assert_null(f);
  m.fail_at = UINT64_MAX;

  /* what the file path refuses, the reader refuses alike */
  m.size = size - 1; /* truncated: the trailer is not there */
  r = reader_of(&m, 0);
  assert_int_equal(hurray_file_open_reader(&r, NULL, &f, &e), HURRAY_ERR_INVALID_FILE);
  assert_non_null(strstr(e.message, "truncated"));
  m.size = 50;
  r = reader_of(&m, 0);
  assert_int_equal(hurray_file_open_reader(&r, NULL, &f, &e), HURRAY_ERR_INVALID_FILE);
  m.size = size;
  r = reader_of(&m, 0);
  HurrayFileOpenOptions cow;
  memset(&cow, 0, sizeof cow);
  cow.access = HURRAY_FILE_ACCESS_MMAP_COPY;
  assert_int_equal(hurray_file_open_reader(&r, &cow, &f, &e), HURRAY_ERR_INVALID_ARGUMENT);
  r.read_at = NULL;
  assert_int_equal(hurray_file_open_reader(&r, NULL, &f, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_open_reader(NULL, NULL, &f, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(m.closed, 0);
  hurray_free(img);
}

/* A damaged image gives the same status whichever source reads it. */
static void test_sources_agree_on_damage(void **state) {
  (void)state;
  HurrayFileWriterOptions o = opts(false, true);
  uint64_t size = 0;
  uint8_t *img = memory_image(&o, 0, &size);
  uint8_t *copy = malloc((size_t)size);
  for (uint64_t at = 0; at < size; at += 37) {
    memcpy(copy, img, (size_t)size);
    copy[at] ^= 0x5A;
    HurrayStatus got[4];
    for (int src = 0; src < 4; src++) {
      HurrayFile *f = NULL;
      HurrayError e;
      HurrayStatus st;
      Img m = {copy, size, 0, 0, 0, UINT64_MAX}; /* the reader's source: lives as long as f */
      if (src == 0) {
        st = tf_open_bytes(copy, (size_t)size, HURRAY_FILE_ACCESS_READ, &f, &e);
      } else if (src == 1) {
        st = tf_open_bytes(copy, (size_t)size, HURRAY_FILE_ACCESS_MMAP, &f, &e);
      } else if (src == 2) {
        HurrayFileOpenOptions ro;
        memset(&ro, 0, sizeof ro);
        ro.access = HURRAY_FILE_ACCESS_READ;
        st = hurray_file_open_memory(copy, size, NULL, NULL, &ro, &f, &e);
      } else {
        HurrayFileReader r = reader_of(&m, 0);
        st = hurray_file_open_reader(&r, NULL, &f, &e);
      }
      /* then the whole file: every descriptor and the data checksums */
      if (st == HURRAY_OK) st = hurray_file_verify(f, &e);
      for (uint64_t i = 0; st == HURRAY_OK && i < hurray_file_tensor_count(f); i++) {
        HurrayFileTensor *t = NULL;
        st = hurray_file_tensor(f, i, &t, &e);
        hurray_file_tensor_release(&t);
      }
      HurrayFileDataReport rep;
      if (st == HURRAY_OK) st = hurray_file_verify_data(f, &rep, &e);
      hurray_file_close(&f);
      got[src] = st;
    }
    for (int src = 1; src < 4; src++)
      if (got[src] != got[0])
        fail_msg("byte %llu: source %d gives %s, pread gives %s", (unsigned long long)at, src,
                 hurray_status_name(got[src]), hurray_status_name(got[0]));
  }
  free(copy);
  hurray_free(img);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_memory_image_is_the_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_writer_finish_rules, setup, teardown),
      cmocka_unit_test(test_memory_writer_allocation_failures),
#if !defined(_WIN32)
      cmocka_unit_test_setup_teardown(test_memory_writer_needs_no_file_system, setup, teardown),
#endif
      cmocka_unit_test(test_memory_read_copies),
      cmocka_unit_test(test_reader_callback),
      cmocka_unit_test_setup_teardown(test_sources_agree_on_damage, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
