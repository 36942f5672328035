/* The reader: every rule open and fetch check, each with its accept side;
 * truncation at every byte; hostile lengths; lifetimes; the golden file. */
#include <pthread.h>

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

/*
 * The base file: "t0" uint8[5] = 1..5, "t1" float32[2,2], "t2" uint8[0];
 * KV "k" = int64 7. Layout (alignment 4096): t0 desc 64, data 4096;
 * t1 desc 8192, data 12288; t2 desc 16384, data 20480 (empty);
 * KV 20480 (16 bytes); index 20496 (116 bytes); trailer.
 */
static uint8_t *base_file(size_t *len) {
  const char *path = tf_path("base.hrry");
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *d0 = tf_desc_u8(5), *d1 = tf_desc_f32(2, 2), *d2 = tf_desc_u8(0);
  uint8_t b0[5] = {1, 2, 3, 4, 5};
  float b1[4] = {1.f, 2.f, 3.f, 4.f};
  const void *p0[1] = {b0}, *p1[1] = {b1}, *p2[1] = {NULL};
  assert_int_equal(hurray_file_writer_add_tensor(w, "t0", 2, d0, p0, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t1", 2, d1, p1, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "t2", 2, d2, p2, NULL, &e), HURRAY_OK);
  HurrayKvValue v = hurray_kv_int64(7);
  assert_int_equal(hurray_file_writer_add_kv(w, "k", 1, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(d0), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d1), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d2), HURRAY_OK);
  uint8_t *p = tf_load(path, len);
  assert_int_equal(*len, 20496 + 8 + 36 * 3 + 40);
  assert_int_equal(hurray__ld64(p + *len - 40), 20496);
  return p;
}

#define T_OFF(len) ((len) - 40)

/* Opens the image in all four ways (caller memory; then mapped, read and
 * mapped copy-on-write: access = mode - 1); each must give `want` and a field
 * starting with `field` (NULL: not checked). Returns the memory-mode file on
 * success (caller closes), else NULL. */
static HurrayFile *expect(const uint8_t *p, size_t len, HurrayStatus want, const char *field) {
  HurrayFile *keep = NULL;
  for (int mode = 0; mode < 4; mode++) {
    HurrayFile *f = NULL;
    HurrayError e;
    hurray_error_clear(&e);
    HurrayStatus st = mode == 0 ? tf_open_image(p, len, &f, &e)
                                : tf_open_bytes(p, len, (HurrayFileAccess)(mode - 1), &f, &e);
    if (st != want)
      fail_msg("mode %d: got %s (%s), want %s", mode, hurray_status_name(st), e.message,
               hurray_status_name(want));
    if (st != HURRAY_OK) {
      assert_null(f);
      assert_int_equal(e.status, want);
      if (field != NULL && strncmp(e.field, field, strlen(field)) != 0)
        fail_msg("mode %d: field \"%s\", want \"%s\" (%s)", mode, e.field, field, e.message);
    } else if (mode == 0) {
      keep = f;
    } else {
      hurray_file_close(&f);
    }
  }
  return keep;
}

/* Copy of the base image with one edit applied by the caller. */
typedef struct Img {
  uint8_t *p;
  size_t len;
} Img;

static Img copy_of(const uint8_t *p, size_t len) {
  Img m = {malloc(len), len};
  memcpy(m.p, p, len);
  return m;
}

static void test_base_file_reads(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  for (int mode = 0; mode < 4; mode++) {
    HurrayFile *f = NULL;
    HurrayError e;
    HurrayStatus st = mode == 0 ? tf_open_image(p, len, &f, &e)
                                : tf_open_bytes(p, len, (HurrayFileAccess)(mode - 1), &f, &e);
    assert_int_equal(st, HURRAY_OK);
    HurrayFileInfo in;
    assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
    assert_int_equal(in.version_major, 1);
    assert_int_equal(in.data_alignment, 4096);
    assert_int_equal(in.file_size, len);
    assert_int_equal(in.kv_offset, 20480);
    assert_int_equal(in.tensor_count_hint, 3);
    assert_int_equal(in.mapped, mode != 2);
    assert_int_equal(in.access, mode == 0 ? HURRAY_FILE_ACCESS_MMAP : mode - 1);
    assert_int_equal(hurray_file_tensor_count(f), 3);
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, "t1", 2, &idx), HURRAY_OK);
    assert_int_equal(idx, 1);
    assert_int_equal(hurray_file_find(f, "t", 1, &idx), HURRAY_ERR_NOT_FOUND);
    assert_int_equal(hurray_file_find(f, "t10", 3, &idx), HURRAY_ERR_NOT_FOUND);
    assert_int_equal(hurray_file_find(f, NULL, 0, &idx), HURRAY_ERR_NOT_FOUND);
    HurrayFileEntry en;
    assert_int_equal(hurray_file_entry(f, 1, &en), HURRAY_OK);
    assert_int_equal(en.descriptor_offset, 8192);
    assert_int_equal(en.data_offset, 12288);
    assert_int_equal(en.data_length, 16);
    assert_int_equal(hurray_file_entry(f, 3, &en), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    HurrayFileTensor *t = NULL;
    assert_int_equal(hurray_file_tensor(f, 3, &t, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_null(t);
    assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_OK);
    assert_int_equal(hurray_file_tensor_index(t), 1);
    assert_int_equal(hurray_file_tensor_buffer_count(t), 1);
    assert_int_equal(hurray_file_tensor_is_mapped(t), mode != 2);
    assert_int_equal(hurray_file_tensor_is_writable(t), mode >= 2);
    const void *q;
    uint64_t n;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, &n), HURRAY_OK);
    assert_int_equal(n, 16);
    assert_int_equal(((uintptr_t)q) % 64, 0);
    float want[4] = {1.f, 2.f, 3.f, 4.f};
    assert_memory_equal(q, want, 16);
    assert_int_equal(hurray_file_tensor_buffer(t, 1, &q, &n), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    uint32_t rank = 0;
    assert_int_equal(hurray_descriptor_rank(hurray_file_tensor_descriptor(t), &rank), HURRAY_OK);
    assert_int_equal(rank, 2);
    hurray_file_tensor_release(&t);
    assert_null(t);
    HurrayDescriptor *d = NULL;
    assert_int_equal(hurray_file_descriptor(f, 0, &d, &e), HURRAY_OK);
    uint64_t bytes;
    assert_int_equal(hurray_descriptor_data_bytes(d, &bytes), HURRAY_OK);
    assert_int_equal(bytes, 5);
    assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    const HurrayKvValue *v;
    assert_int_equal(hurray_file_kv_find(f, "k", 1, &v), HURRAY_OK);
    assert_true(v->tag == HURRAY_KV_INT64 && v->v.i64 == 7);
    hurray_file_close(&f);
  }
  free(p);
}

static void test_header_rules(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  Img m;
#define CASE(edit, status, field)                \
  do {                                           \
    m = copy_of(p, len);                         \
    edit;                                        \
    HurrayFile *f_ = expect(m.p, len, status, field); \
    hurray_file_close(&f_);                      \
    free(m.p);                                   \
  } while (0)
  CASE(m.p[0] = 'X', HURRAY_ERR_INVALID_FILE, "header.magic");
  CASE(m.p[7] = 'e', HURRAY_ERR_INVALID_FILE, "header.magic");
  CASE(m.p[8] = 2, HURRAY_ERR_VERSION_MISMATCH, "header.container_version_major");
  CASE(m.p[8] = 0, HURRAY_ERR_VERSION_MISMATCH, "header.container_version_major");
  CASE(m.p[9] = 7, HURRAY_OK, NULL); /* a newer minor is readable */
  CASE(m.p[10] = 1, HURRAY_ERR_INVALID_FILE, "header._reserved");
  CASE(m.p[11] = 1, HURRAY_ERR_INVALID_FILE, "header._reserved");
  CASE(m.p[12] |= 0x08, HURRAY_ERR_INVALID_FILE, "header.file_flags");
  CASE(m.p[15] |= 0x80, HURRAY_ERR_INVALID_FILE, "header.file_flags");
  static const uint32_t bad_align[] = {0, 1, 2048, 4095, 4097, 12288, 4u << 20};
  for (size_t i = 0; i < sizeof bad_align / sizeof bad_align[0]; i++)
    CASE(hurray__st32(m.p + 16, bad_align[i]), HURRAY_ERR_INVALID_FILE,
         "header.data_buffer_alignment");
  /* A valid alignment the data offsets do not meet. */
  CASE(hurray__st32(m.p + 16, 8192), HURRAY_ERR_INVALID_FILE, "index[0].data_offset");
  CASE(hurray__st64(m.p + 20, 60), HURRAY_ERR_INVALID_FILE, "header.first_descriptor_offset");
  CASE(hurray__st64(m.p + 20, 68), HURRAY_ERR_INVALID_FILE, "header.first_descriptor_offset");
  CASE(hurray__st64(m.p + 20, 72), HURRAY_ERR_INVALID_FILE, "index[0].descriptor_offset");
  CASE(hurray__st64(m.p + 20, 1ull << 40), HURRAY_ERR_INVALID_FILE, "trailer.index_offset");
  CASE(hurray__st64(m.p + 28, 5), HURRAY_ERR_INVALID_FILE, "header.tensor_count_hint");
  CASE(hurray__st64(m.p + 28, 0), HURRAY_ERR_INVALID_FILE, "header.tensor_count_hint");
  CASE(hurray__st64(m.p + 28, UINT64_MAX), HURRAY_OK, NULL);
  CASE(m.p[36] = 1, HURRAY_ERR_INVALID_FILE, "header._reserved_header");
  CASE(m.p[63] = 1, HURRAY_ERR_INVALID_FILE, "header._reserved_header");
  free(p);
}

static void test_trailer_rules(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  const size_t t = T_OFF(len);
  Img m;
  CASE(m.p[len - 1] = 'Z', HURRAY_ERR_INVALID_FILE, "trailer.trailer_magic");
  CASE(m.p[t + 32] = 1, HURRAY_ERR_INVALID_FILE, "trailer._reserved");
  CASE(m.p[t + 35] = 1, HURRAY_ERR_INVALID_FILE, "trailer._reserved");
  /* Index bounds. */
  CASE(hurray__st64(m.p + t + 8, 117), HURRAY_ERR_INVALID_FILE, "trailer.index_offset");
  CASE(hurray__st64(m.p + t, UINT64_MAX - 8), HURRAY_ERR_INVALID_FILE, "trailer.index_offset");
  CASE(hurray__st64(m.p + t, 20500), HURRAY_ERR_INVALID_FILE, "trailer.index_offset");
  CASE(hurray__st64(m.p + t, 56), HURRAY_ERR_INVALID_FILE, "trailer.index_offset");
  CASE((hurray__st64(m.p + t, 20496 + 8), hurray__st64(m.p + t + 8, 7)), HURRAY_ERR_INVALID_FILE,
       "trailer.index_length");
  /* CRC. */
  CASE(m.p[20496 + 10] ^= 1, HURRAY_ERR_CRC_MISMATCH, "index");
  CASE(m.p[t + 28] ^= 1, HURRAY_ERR_CRC_MISMATCH, "index");
  /* Flag clear: the field must be 0, and then nothing is verified. */
  CASE(m.p[12] &= (uint8_t)~HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, HURRAY_ERR_INVALID_FILE,
       "trailer.index_crc32c");
  CASE((m.p[12] &= (uint8_t)~HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, hurray__st32(m.p + t + 28, 0),
        m.p[20496 + 10] = 'x'),
       HURRAY_OK, NULL);
  /* KV fields against the flag. */
  CASE((hurray__st64(m.p + t + 16, 0), hurray__st32(m.p + t + 24, 0)), HURRAY_ERR_INVALID_FILE,
       "trailer.kv_offset"); /* flag set, no KV */
  {
    /* Flag clear with a KV section: the reference writer's files. */
    m = copy_of(p, len);
    m.p[12] &= (uint8_t)~HURRAY_FILE_FLAG_HAS_KV_METADATA;
    HurrayFile *f = expect(m.p, len, HURRAY_OK, NULL);
    const HurrayKvValue *v;
    assert_int_equal(hurray_file_kv_find(f, "k", 1, &v), HURRAY_OK);
    assert_true(v->v.i64 == 7);
    hurray_file_close(&f);
    free(m.p);
  }
  CASE((m.p[12] &= (uint8_t)~HURRAY_FILE_FLAG_HAS_KV_METADATA, hurray__st64(m.p + t + 16, 0),
        hurray__st32(m.p + t + 24, 0)),
       HURRAY_OK, NULL); /* no KV at all */
  CASE(hurray__st32(m.p + t + 24, 0), HURRAY_ERR_INVALID_FILE, "trailer.kv_offset");
  CASE((m.p[12] &= (uint8_t)~HURRAY_FILE_FLAG_HAS_KV_METADATA, hurray__st64(m.p + t + 16, 0)),
       HURRAY_ERR_INVALID_FILE, "trailer.kv_offset");
  CASE(hurray__st32(m.p + t + 24, 3), HURRAY_ERR_INVALID_FILE, "trailer.kv_length");
  CASE(hurray__st32(m.p + t + 24, 17), HURRAY_ERR_INVALID_FILE, "trailer.kv_offset");
  CASE(hurray__st64(m.p + t + 16, 20484), HURRAY_ERR_INVALID_FILE, "trailer.kv_offset");
  CASE(hurray__st64(m.p + t + 16, 32), HURRAY_ERR_INVALID_FILE, "trailer.kv_offset");
  CASE(hurray__st32(m.p + t + 24, 15), HURRAY_ERR_INVALID_KV, "kv"); /* shorter than it is */
  free(p);
}

/* Applies `edit` to a copy, recomputes the CRC, and expects `status`. */
#define ICASE(edit, status, field)               \
  do {                                           \
    m = copy_of(p, len);                         \
    edit;                                        \
    tf_fix_crc(m.p, len);                        \
    HurrayFile *f_ = expect(m.p, len, status, field); \
    hurray_file_close(&f_);                      \
    free(m.p);                                   \
  } while (0)

/*
 * Every entry looked up by name: found at its own index when no other entry
 * has its name, HURRAY_ERR_DUPLICATE_NAME otherwise (counted here by brute
 * force); a name nobody has is not found.
 */
static void check_finds(const HurrayFile *f) {
  uint64_t n = hurray_file_tensor_count(f);
  for (uint64_t i = 0; i < n; i++) {
    HurrayFileEntry a, b;
    assert_int_equal(hurray_file_entry(f, i, &a), HURRAY_OK);
    int same = 0;
    for (uint64_t j = 0; j < n; j++) {
      assert_int_equal(hurray_file_entry(f, j, &b), HURRAY_OK);
      same += a.name_len == b.name_len && memcmp(a.name, b.name, a.name_len) == 0;
    }
    uint64_t idx = UINT64_MAX;
    HurrayStatus st = hurray_file_find(f, a.name, a.name_len, &idx);
    if (same == 1) {
      assert_int_equal(st, HURRAY_OK);
      assert_int_equal(idx, i);
    } else {
      assert_int_equal(st, HURRAY_ERR_DUPLICATE_NAME);
      assert_int_equal(idx, UINT64_MAX); /* untouched */
    }
  }
  uint64_t idx;
  assert_int_equal(hurray_file_find(f, "no such name", 12, &idx), HURRAY_ERR_NOT_FOUND);
}

/*
 * Name rules, which open leaves to the lookups: the image opens in every
 * mode; lookups answer as check_finds says, both while they scan and once
 * the lookup structure is built; hurray_file_verify gives `status`
 * naming `field`.
 */
static void expect_names(const uint8_t *p, size_t len, HurrayStatus status, const char *field) {
  HurrayFile *f = expect(p, len, HURRAY_OK, NULL);
  assert_int_equal(hurray__file_lookup_kind(f), -1);
  check_finds(f); /* scanning */
  for (unsigned k = 0; k < HURRAY__FILE_SCAN_FINDS; k++) {
    uint64_t idx;
    /* Only the number of finds matters here: "t0" may be missing or repeated. */
    HurrayStatus st = hurray_file_find(f, "t0", 2, &idx);
    assert_true(st == HURRAY_OK || st == HURRAY_ERR_NOT_FOUND || st == HURRAY_ERR_DUPLICATE_NAME);
  }
  assert_int_not_equal(hurray__file_lookup_kind(f), -1);
  check_finds(f); /* with the lookup structure */
  HurrayError e;
  hurray_error_clear(&e);
  assert_int_equal(hurray_file_verify(f, &e), status);
  if (status != HURRAY_OK) {
    assert_int_equal(e.status, status);
    if (strncmp(e.field, field, strlen(field)) != 0)
      fail_msg("field \"%s\", want \"%s\" (%s)", e.field, field, e.message);
  }
  hurray_file_close(&f);
  /* hurray_file_verify before any lookup builds the structure itself. */
  assert_int_equal(tf_open_image(p, len, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_verify(f, NULL), status);
  check_finds(f);
  hurray_file_close(&f);
}

/*
 * Overlapping tensors that the index lists out of file order: open accepts
 * the image in every mode (each entry is fine on its own); file order, and
 * so hurray_file_position, composites and hurray_file_verify, give
 * HURRAY_ERR_INVALID_FILE naming `field`, every time they are asked.
 */
static void expect_overlap(const uint8_t *p, size_t len, const char *field) {
  HurrayFile *f = expect(p, len, HURRAY_OK, NULL);
  for (int k = 0; k < 2; k++) {
    uint64_t idx = 77;
    assert_int_equal(hurray_file_position(f, 0, &idx), HURRAY_ERR_INVALID_FILE);
    assert_int_equal(idx, 77);
    HurrayError e;
    hurray_error_clear(&e);
    assert_int_equal(hurray_file_verify(f, &e), HURRAY_ERR_INVALID_FILE);
    if (strncmp(e.field, field, strlen(field)) != 0)
      fail_msg("field \"%s\", want \"%s\" (%s)", e.field, field, e.message);
    assert_non_null(strstr(e.message, "overlaps"));
    HurrayFileNode *tree = NULL;
    assert_int_equal(hurray_file_composite(f, 0, &tree, &e), HURRAY_ERR_INVALID_FILE);
    assert_null(tree);
  }
  hurray_file_close(&f);
  /* Writable views need the proof: with MMAP_COPY no tensor is handed out
   * (a write through one would change another's bytes or descriptor), with
   * MMAP each tensor that is fine on its own still is. */
  for (int access = 0; access < 3; access += 2) {
    HurrayError e;
    assert_int_equal(tf_open_bytes(p, len, (HurrayFileAccess)access, &f, &e), HURRAY_OK);
    int fetched = 0;
    for (uint64_t i = 0; i < hurray_file_tensor_count(f); i++) {
      HurrayFileTensor *t = NULL;
      HurrayStatus st = hurray_file_tensor(f, i, &t, &e);
      if (st == HURRAY_OK) fetched++;
      if (access == HURRAY_FILE_ACCESS_MMAP_COPY) {
        assert_int_equal(st, HURRAY_ERR_INVALID_FILE);
        assert_non_null(strstr(e.message, "overlaps"));
        assert_null(t);
      }
      hurray_file_tensor_release(&t);
    }
    assert_true(access == HURRAY_FILE_ACCESS_MMAP_COPY ? fetched == 0 : fetched > 0);
    hurray_file_close(&f);
  }
}

/* Like ICASE, for expect_overlap. */
#define OCASE(edit, field)               \
  do {                                   \
    m = copy_of(p, len);                 \
    edit;                                \
    tf_fix_crc(m.p, len);                \
    expect_overlap(m.p, len, field);     \
    free(m.p);                           \
  } while (0)

/* Like ICASE, for the name rules (expect_names). */
#define NCASE(edit, status, field)       \
  do {                                   \
    m = copy_of(p, len);                 \
    edit;                                \
    tf_fix_crc(m.p, len);                \
    expect_names(m.p, len, status, field); \
    free(m.p);                           \
  } while (0)

static void test_index_rules(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  const size_t ix = 20496;
  Img m;
#define E(k) tf_index_entry(m.p, len, k)
  ICASE(hurray__st64(m.p + ix, 1ull << 60), HURRAY_ERR_INVALID_FILE, "index.index_entry_count");
  /* With the count hint out of the way (unknown), the index's own checks. */
  ICASE((hurray__st64(m.p + ix, 4), hurray__st64(m.p + 28, UINT64_MAX)), HURRAY_ERR_INVALID_FILE,
        "index");
  ICASE((hurray__st64(m.p + ix, 2), hurray__st64(m.p + 28, UINT64_MAX)), HURRAY_ERR_INVALID_FILE,
        "index");
  ICASE(hurray__st64(m.p + ix, 2), HURRAY_ERR_INVALID_FILE, "header.tensor_count_hint");
  ICASE(hurray__st16(m.p + ix + 8, 0), HURRAY_ERR_INVALID_FILE, "index[0].name_length");
  ICASE(hurray__st16(m.p + ix + 8, 300), HURRAY_ERR_INVALID_FILE, "index");
  ICASE(m.p[ix + 10] = 0xFF, HURRAY_ERR_INVALID_FILE, "index[0].name");
  ICASE(m.p[ix + 11] = 0xC3, HURRAY_ERR_INVALID_FILE, "index[0].name"); /* cut sequence */
  /* Duplicate names; then the same under SORTED_INDEX; unsorted under it
   * (open accepts them all: see expect_names). */
  NCASE((void)0, HURRAY_OK, NULL);
  NCASE(m.p[ix + 8 + 36 + 36 + 3] = '0', HURRAY_ERR_DUPLICATE_NAME, "index[2].name");
  NCASE(m.p[ix + 8 + 36 + 3] = '0', HURRAY_ERR_DUPLICATE_NAME, "index[1].name");
  NCASE((m.p[ix + 8 + 36 + 3] = '0', m.p[ix + 8 + 36 + 36 + 3] = '0'),
        HURRAY_ERR_DUPLICATE_NAME, "index[1].name"); /* three alike */
  NCASE((m.p[ix + 8 + 36 + 36 + 3] = '1', m.p[12] |= HURRAY_FILE_FLAG_SORTED_INDEX),
        HURRAY_ERR_DUPLICATE_NAME, "index[2].name");
  NCASE(m.p[12] |= HURRAY_FILE_FLAG_SORTED_INDEX, HURRAY_OK, NULL); /* t0 < t1 < t2 */
  NCASE((m.p[ix + 11] = '9', m.p[12] |= HURRAY_FILE_FLAG_SORTED_INDEX), HURRAY_ERR_INVALID_FILE,
        "index[1].name");
  NCASE(m.p[ix + 11] = '9', HURRAY_OK, NULL); /* unsorted is fine without the flag */
  ICASE(hurray__st32(E(1) + 28, 1), HURRAY_ERR_INVALID_FILE, "index[1].flags");
  /* Descriptor placement. */
  ICASE(hurray__st64(E(0), 68), HURRAY_ERR_INVALID_FILE, "index[0].descriptor_offset");
  ICASE(hurray__st64(E(0), 56), HURRAY_ERR_INVALID_FILE, "index[0].descriptor_offset");
  ICASE(hurray__st32(E(0) + 8, 19), HURRAY_ERR_INVALID_FILE, "index[0].descriptor_length");
  ICASE(hurray__st64(E(2), 20480), HURRAY_ERR_INVALID_FILE, "index[2].descriptor_offset");
  ICASE(hurray__st32(E(2) + 8, 0xFFFFFFFFu), HURRAY_ERR_INVALID_FILE,
        "index[2].descriptor_offset");
  /* Data placement. */
  ICASE(hurray__st64(E(0) + 12, 64), HURRAY_ERR_INVALID_FILE, "index[0].data_offset");
  ICASE(hurray__st64(E(0) + 12, 4104), HURRAY_ERR_INVALID_FILE, "index[0].data_offset");
  ICASE(hurray__st64(E(1) + 20, 1ull << 62), HURRAY_ERR_INVALID_FILE, "index[1].data_offset");
  ICASE(hurray__st64(E(1) + 20, UINT64_MAX), HURRAY_ERR_INVALID_FILE, "index[1].data_offset");
  ICASE(hurray__st64(E(2) + 20, 1), HURRAY_ERR_INVALID_FILE, "index[2].data_offset"); /* into KV */
  /* Overlaps: a descriptor inside the previous data; data over the next
   * descriptor; two tensors at one offset: found at open while the index is
   * in file order. */
  ICASE(hurray__st64(E(1), 4096), HURRAY_ERR_INVALID_FILE, "index[1].descriptor_offset");
  ICASE(hurray__st64(E(1) + 20, 16384 - 12288 + 8), HURRAY_ERR_INVALID_FILE,
        "index[2].descriptor_offset");
  ICASE(hurray__st64(E(1) + 20, 16384 - 12288), HURRAY_OK, NULL); /* touching is fine */
  ICASE((hurray__st64(E(0), 8192), hurray__st64(E(0) + 12, 12288)), HURRAY_ERR_INVALID_FILE,
        "index[");
  /* Entry 2 moved before entry 0 in the file, over entry 1: out of file
   * order, so the overlap is found when file order is needed. */
  OCASE((hurray__st64(E(2), 64), hurray__st64(E(2) + 12, 8192)), "index[");
  OCASE((hurray__st64(E(2), 4104), hurray__st64(E(2) + 12, 12288)),
        "index[1].descriptor_offset");
  ICASE((hurray__st64(E(2), 4104), hurray__st64(E(2) + 12, 8192)), HURRAY_OK, NULL); /* touching */
  free(p);
}

static void test_out_of_order_index(void **state) {
  (void)state;
  /* Entries listed in reverse file order: file order sorts them by offset,
   * and finds overlaps. */
  HurrayDescriptor *d = tf_desc_u8(10);
  TfImage im = {NULL, 0};
  TfEntry e[3];
  e[2] = tf_place(&im, "first", d, 64, 4096, 1);
  e[1] = tf_place(&im, "second", d, 4112, 8192, 2);
  e[0] = tf_place(&im, "third", d, 8208, 12288, 3);
  tf_finish(&im, e, 3, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  HurrayFile *f = expect(im.p, im.len, HURRAY_OK, NULL);
  for (uint64_t pos = 0; pos < 3; pos++) {
    uint64_t idx;
    assert_int_equal(hurray_file_position(f, pos, &idx), HURRAY_OK);
    assert_int_equal(idx, 2 - pos);
    HurrayFileTensor *t = NULL;
    HurrayError err;
    assert_int_equal(hurray_file_tensor(f, idx, &t, &err), HURRAY_OK);
    const void *q;
    assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, NULL), HURRAY_OK);
    assert_int_equal(((const uint8_t *)q)[9], pos + 1);
    hurray_file_tensor_release(&t);
  }
  hurray_file_close(&f);
  free(im.p);
  /* Same, with the middle tensor's data running over the last descriptor. */
  im.p = NULL;
  im.len = 0;
  e[2] = tf_place(&im, "first", d, 64, 4096, 1);
  e[1] = tf_place(&im, "second", d, 4112, 8192, 2);
  e[0] = tf_place(&im, "third", d, 8200, 12288, 3);
  tf_finish(&im, e, 3, NULL, 0, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C, 4096);
  expect_overlap(im.p, im.len, "index[0].descriptor_offset");
  free(im.p);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

static void test_fetch_rules(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  Img m;
  struct {
    int edit;
    uint64_t tensor;
    HurrayStatus want;
    const char *field;
  } cases[] = {
      {0, 0, HURRAY_ERR_INVALID_FILE, "index[0].descriptor_length"},
      {1, 0, HURRAY_ERR_INVALID_FILE, "index[0].data_length"},
      {2, 0, HURRAY_ERR_INVALID_FILE, "index[0].data_length"},
      {3, 0, HURRAY_ERR_INVALID_MAGIC, NULL},
      {4, 2, HURRAY_ERR_INVALID_FILE, "index[2].data_offset"},
      {5, 1, HURRAY_ERR_INVALID_FILE, "index[1].descriptor_length"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    m = copy_of(p, len);
    switch (cases[c].edit) {
      case 0: hurray__st32(tf_index_entry(m.p, len, 0) + 8, 61 + 8); break; /* longer */
      case 1: hurray__st64(tf_index_entry(m.p, len, 0) + 20, 6); break;
      case 2: hurray__st64(tf_index_entry(m.p, len, 0) + 20, 4); break;
      case 3: m.p[64] = 'X'; break;
      case 4: /* the empty tensor's data, right after its descriptor (unaligned) */
        hurray__st64(tf_index_entry(m.p, len, 2) + 12,
                     16384 + hurray__ld32(tf_index_entry(m.p, len, 2) + 8) + 3);
        break;
      default: m.p[8192 + 6] ^= 0x40; break; /* the descriptor's own length */
    }
    tf_fix_crc(m.p, len);
    for (int mode = 0; mode < 4; mode++) {
      HurrayFile *f = NULL;
      HurrayError e;
      HurrayStatus st = mode == 0 ? tf_open_image(m.p, len, &f, &e)
                                  : tf_open_bytes(m.p, len, (HurrayFileAccess)(mode - 1), &f, &e);
      if (st != HURRAY_OK) fail_msg("case %zu mode %d: open: %s", c, mode, e.message);
      HurrayFileTensor *t = NULL;
      st = hurray_file_tensor(f, cases[c].tensor, &t, &e);
      if (st != cases[c].want)
        fail_msg("case %zu mode %d: %s (%s)", c, mode, hurray_status_name(st), e.message);
      assert_null(t);
      if (cases[c].field) assert_string_equal(e.field, cases[c].field);
      if (cases[c].edit == 3) {
        /* A descriptor error names the tensor and a file offset. */
        assert_non_null(strstr(e.message, "\"t0\""));
        assert_int_equal(e.offset, 64);
        /* ... in the message; the reason is the decoder's alone. */
        assert_string_equal(e.field, "magic");
        assert_true(e.reason[0] != '\0');
        assert_null(strstr(e.reason, "t0"));
        assert_null(strstr(e.reason, "at byte"));
        assert_string_equal(e.message + strlen(e.message) - strlen(e.reason), e.reason);
      }
      /* The other tensors are unaffected. */
      for (uint64_t i = 0; i < 3; i++) {
        if (i == cases[c].tensor) continue;
        assert_int_equal(hurray_file_tensor(f, i, &t, &e), HURRAY_OK);
        hurray_file_tensor_release(&t);
      }
      hurray_file_close(&f);
    }
    free(m.p);
  }
  /* The descriptor cap. */
  HurrayFileOpenOptions o;
  memset(&o, 0, sizeof o);
  o.max_descriptor_bytes = 60;
  HurrayFile *f = NULL;
  HurrayError e;
  tf_store(tf_path("cap.hrry"), p, len);
  assert_int_equal(hurray_file_open(tf_path("cap.hrry"), &o, &f, &e), HURRAY_OK);
  HurrayFileTensor *t = NULL;
  assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_ERR_UNSUPPORTED); /* 61 bytes */
  assert_int_equal(hurray_file_tensor(f, 0, &t, &e), HURRAY_OK);             /* 53 bytes */
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  free(p);
}

static void test_caps(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  tf_store(tf_path("caps.hrry"), p, len);
  for (int mode = 0; mode < 3; mode++) { /* MMAP, READ, MMAP_COPY */
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    HurrayFile *f = NULL;
    HurrayError e;
    o.max_index_bytes = 115;
    assert_int_equal(hurray_file_open(tf_path("caps.hrry"), &o, &f, &e), HURRAY_ERR_UNSUPPORTED);
    assert_string_equal(e.field, "trailer.index_length");
    o.max_index_bytes = 116;
    o.max_kv_bytes = 15;
    assert_int_equal(hurray_file_open(tf_path("caps.hrry"), &o, &f, &e), HURRAY_ERR_UNSUPPORTED);
    assert_string_equal(e.field, "trailer.kv_length");
    o.max_kv_bytes = 16;
    assert_int_equal(hurray_file_open(tf_path("caps.hrry"), &o, &f, &e), HURRAY_OK);
    hurray_file_close(&f);
  }
  free(p);
}

static void test_truncation_at_every_byte(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  const char *path = tf_path("trunc.hrry");
  tf_store(path, p, len);
  HurrayError e;
  for (size_t n = len; n-- > 0;) {
    assert_int_equal(truncate(path, (off_t)n), 0);
    HurrayFile *f = NULL;
    if (hurray_file_open_memory(p, n, NULL, NULL, NULL, &f, &e) != HURRAY_ERR_INVALID_FILE)
      fail_msg("memory, %zu bytes: %s", n, e.message);
    for (int mode = 0; mode < 3; mode++) {
      HurrayFileOpenOptions o;
      memset(&o, 0, sizeof o);
      o.access = (HurrayFileAccess)mode;
      HurrayStatus st = hurray_file_open(path, &o, &f, &e);
      if (st != HURRAY_ERR_INVALID_FILE) fail_msg("mode %d, %zu bytes: %s", mode, n, e.message);
      assert_null(f);
    }
  }
  free(p);
}

/* ---- hostile lengths never size an allocation ---------------------------------- */

static size_t g_max_alloc;
static void *track_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (size > g_max_alloc) g_max_alloc = size;
  return tu_aligned_alloc(alignment, size);
}
static void track_free(void *ctx, void *q) {
  (void)ctx;
  tu_aligned_free(q);
}

static void test_hostile_lengths_allocate_nothing_big(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  const size_t t = T_OFF(len), ix = 20496;
  HurrayAllocator a = {track_alloc, track_free, NULL};
  hurray_set_allocator(&a);
  Img m;
  struct {
    size_t off;
    int width;
    uint64_t v;
  } edits[] = {
      {t + 8, 8, 1ull << 40},          /* index_length */
      {t + 8, 8, UINT64_MAX},          /* index_length */
      {t + 24, 4, UINT32_MAX},         /* kv_length */
      {ix, 8, UINT64_MAX},             /* entry count */
      {ix, 8, 1u << 31},               /* entry count */
      {20480, 4, UINT32_MAX},          /* kv_count */
      {20480 + 4 + 3 + 1, 8, 0},       /* harmless: the int64 value */
  };
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    for (int mode = 0; mode < 4; mode++) {
      m = copy_of(p, len);
      if (edits[i].width == 8) hurray__st64(m.p + edits[i].off, edits[i].v);
      else hurray__st32(m.p + edits[i].off, (uint32_t)edits[i].v);
      tf_fix_crc(m.p, len);
      g_max_alloc = 0;
      HurrayFile *f = NULL;
      HurrayError e;
      HurrayStatus st = mode == 0 ? hurray_file_open_memory(m.p, len, NULL, NULL, NULL, &f, &e)
                                  : tf_open_bytes(m.p, len, (HurrayFileAccess)(mode - 1), &f, &e);
      if (i + 1 < sizeof edits / sizeof edits[0]) assert_int_not_equal(st, HURRAY_OK);
      else assert_int_equal(st, HURRAY_OK);
      hurray_file_close(&f);
      /* Never more than the real file's sections (the index is 116 bytes). */
      if (g_max_alloc > 4096) fail_msg("edit %zu mode %d allocated %zu bytes", i, mode, g_max_alloc);
      free(m.p);
    }
  }
  hurray_set_allocator(NULL);
  free(p);
}

static void test_open_allocation_failures(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  tf_store(tf_path("oom.hrry"), p, len);
  void *aligned = tu_aligned_alloc(4096, len);
  assert_non_null(aligned);
  memcpy(aligned, p, len);
  tu_alloc_install();
  for (int mode = 0; mode < 4; mode++) {
    for (long n = 0;; n++) {
      tu_fail_alloc_after(n);
      HurrayFile *f = NULL;
      HurrayError e;
      HurrayStatus st;
      if (mode == 2) {
        st = hurray_file_open_memory(aligned, len, NULL, NULL, NULL, &f, &e);
      } else {
        HurrayFileOpenOptions o;
        memset(&o, 0, sizeof o);
        o.access = mode == 3 ? HURRAY_FILE_ACCESS_MMAP_COPY : (HurrayFileAccess)mode;
        st = hurray_file_open(tf_path("oom.hrry"), &o, &f, &e);
      }
      HurrayFileTensor *t = NULL;
      HurrayStatus st2 = HURRAY_OK;
      if (st == HURRAY_OK) {
        st2 = hurray_file_tensor(f, 1, &t, &e);
        hurray_file_tensor_release(&t);
        hurray_file_close(&f);
      }
      tu_alloc_reset();
      assert_int_equal(tu_alloc_live(), 0);
      if (st == HURRAY_OK && st2 == HURRAY_OK) break;
      assert_int_equal(st == HURRAY_OK ? st2 : st, HURRAY_ERR_OUT_OF_MEMORY);
      assert_true(n < 100);
    }
  }
  hurray_set_allocator(NULL);
  tu_aligned_free(aligned);
  free(p);
}

/* ---- lifetimes ----------------------------------------------------------------------- */

static int g_released;
static void count_release(void *ctx, const void *data, uint64_t size) {
  (void)data;
  (void)size;
  g_released++;
  tu_aligned_free(ctx);
}

static void test_tensors_outlive_the_file(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  /* Caller memory: released once, after the last user. */
  void *mem = tu_aligned_alloc(4096, len);
  assert_non_null(mem);
  memcpy(mem, p, len);
  g_released = 0;
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open_memory(mem, len, count_release, mem, NULL, &f, &e), HURRAY_OK);
  HurrayFileTensor *t = NULL, *u = NULL;
  assert_int_equal(hurray_file_tensor(f, 0, &t, &e), HURRAY_OK);
  u = hurray_file_tensor_retain(t);
  assert_ptr_equal(u, t);
  hurray_file_close(&f);
  assert_null(f);
  assert_int_equal(g_released, 0);
  const void *q;
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, NULL), HURRAY_OK);
  assert_int_equal(((const uint8_t *)q)[4], 5);
  hurray_file_tensor_release(&t);
  assert_int_equal(g_released, 0);
  assert_int_equal(hurray_file_tensor_buffer(u, 0, &q, NULL), HURRAY_OK);
  assert_int_equal(((const uint8_t *)q)[0], 1);
  size_t nl;
  assert_string_equal(hurray_file_tensor_name(u, &nl), "t0");
  assert_int_equal(nl, 2);
  hurray_file_tensor_release(&u);
  assert_int_equal(g_released, 1);
  hurray_file_tensor_release(&u); /* NULL-safe */
  hurray_file_tensor_release(NULL);
  hurray_file_close(NULL);

  /* Failure: release is not called and the caller keeps the memory. */
  uint8_t junk[200] = {0};
  assert_int_equal(hurray_file_open_memory(junk, sizeof junk, count_release, NULL, NULL, &f, &e),
                   HURRAY_ERR_INVALID_FILE);
  assert_int_equal(g_released, 1);

  /* A mapping: the tensor reads fine after close (ASan/valgrind would flag a
   * use of unmapped memory as a crash). */
  tf_store(tf_path("m.hrry"), p, len);
  assert_int_equal(hurray_file_open(tf_path("m.hrry"), NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_tensor(f, 1, &t, &e), HURRAY_OK);
  hurray_file_close(&f);
  unlink(tf_path("m.hrry"));
  assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, NULL), HURRAY_OK);
  assert_true(((const float *)q)[3] == 4.f);
  hurray_file_tensor_release(&t);

  /* Misaligned caller memory: the buffer cannot meet its alignment. */
  uint8_t *odd = malloc(len + 1);
  memcpy(odd + 1, p, len);
  assert_int_equal(hurray_file_open_memory(odd + 1, len, NULL, NULL, NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_tensor(f, 0, &t, &e), HURRAY_ERR_MISALIGNED);
  assert_int_equal(hurray_file_tensor(f, 2, &t, &e), HURRAY_OK); /* empty: nothing to align */
  hurray_file_tensor_release(&t);
  hurray_file_close(&f);
  free(odd);
  free(p);
}

static void test_null_arguments(void **state) {
  (void)state;
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open(NULL, NULL, &f, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_open("x", NULL, NULL, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_open(tf_path("missing"), NULL, &f, &e), HURRAY_ERR_IO);
  assert_int_equal(hurray_file_open(tf_dir, NULL, &f, &e), HURRAY_ERR_IO);
  assert_int_equal(hurray_file_open_memory(NULL, 200, NULL, NULL, NULL, &f, &e),
                   HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_tensor_count(NULL), 0);
  assert_int_equal(hurray_file_kv_count(NULL), 0);
  assert_null(hurray_file_tensor_descriptor(NULL));
  assert_int_equal(hurray_file_tensor_buffer_count(NULL), 0);
  assert_false(hurray_file_tensor_is_mapped(NULL));
  assert_false(hurray_file_tensor_is_writable(NULL));
}


/* ---- several threads on one file --------------------------------------------- */

typedef struct Worker {
  const HurrayFile *f;
  int failures;
} Worker;

static void *worker(void *arg) {
  Worker *w = arg;
  for (int round = 0; round < 200; round++) {
    for (uint64_t i = 0; i < hurray_file_tensor_count(w->f); i++) {
      HurrayFileEntry en;
      uint64_t idx;
      HurrayFileTensor *t = NULL;
      HurrayError e;
      if (hurray_file_entry(w->f, i, &en) != HURRAY_OK ||
          hurray_file_find(w->f, en.name, en.name_len, &idx) != HURRAY_OK || idx != i ||
          hurray_file_tensor(w->f, i, &t, &e) != HURRAY_OK) {
        w->failures++;
        continue;
      }
      HurrayFileTensor *u = hurray_file_tensor_retain(t);
      const void *q;
      uint64_t n;
      if (hurray_file_tensor_buffer(u, 0, &q, &n) != HURRAY_OK || (i == 0 && ((const uint8_t *)q)[4] != 5))
        w->failures++;
      hurray_file_tensor_release(&t);
      hurray_file_tensor_release(&u);
    }
    const HurrayKvValue *v;
    if (hurray_file_kv_find(w->f, "k", 1, &v) != HURRAY_OK || v->v.i64 != 7) w->failures++;
  }
  return NULL;
}

static void test_concurrent_readers(void **state) {
  (void)state;
  size_t len;
  uint8_t *p = base_file(&len);
  tf_store(tf_path("mt.hrry"), p, len);
  for (int mode = 0; mode < 3; mode++) { /* MMAP, READ, MMAP_COPY */
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    HurrayFile *f = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_open(tf_path("mt.hrry"), &o, &f, &e), HURRAY_OK);
    enum { T = 4 };
    pthread_t th[T];
    Worker w[T];
    for (int k = 0; k < T; k++) {
      w[k].f = f;
      w[k].failures = 0;
      assert_int_equal(pthread_create(&th[k], NULL, worker, &w[k]), 0);
    }
    for (int k = 0; k < T; k++) {
      pthread_join(th[k], NULL);
      assert_int_equal(w[k].failures, 0);
    }
    hurray_file_close(&f);
  }
  free(p);
}

/* ---- hash flooding ---------------------------------------------------------------- */

static void test_hash_flooding_falls_back(void **state) {
  (void)state;
  /* Every name hashing alike would make a hash table quadratic; the reader
   * notices and sorts instead. */
  const char *path = tf_path("flood.hrry");
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(path, &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *d = tf_desc_u8(0);
  enum { N = 3000 };
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%04d", (i * 7919) % N);
    assert_int_equal(hurray_file_writer_add_tensor(w, name, strlen(name), d, NULL, NULL, &e),
                     HURRAY_OK);
  }
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  hurray__name_hash_test_constant(true);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(path, NULL, &f, &e), HURRAY_OK);
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%04d", i);
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, name, strlen(name), &idx), HURRAY_OK);
    HurrayFileEntry en;
    assert_int_equal(hurray_file_entry(f, idx, &en), HURRAY_OK);
    assert_memory_equal(en.name, name, en.name_len);
  }
  assert_int_equal(hurray__file_lookup_kind(f), HURRAY__LOOKUP_PERM);
  uint64_t idx;
  assert_int_equal(hurray_file_find(f, "n3000", 5, &idx), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_find(f, "n00", 3, &idx), HURRAY_ERR_NOT_FOUND);
  assert_int_equal(hurray_file_verify(f, &e), HURRAY_OK);
  hurray_file_close(&f);
  /* A duplicate is still found: make entry 1's name equal entry 0's. */
  size_t len;
  uint8_t *p = tf_load(path, &len);
  uint8_t *name0 = tf_index_entry(p, len, 0) - 5, *name1 = tf_index_entry(p, len, 1) - 5;
  assert_memory_equal(name0, "n0000", 5);
  memcpy(name1, name0, 5);
  tf_fix_crc(p, len);
  HurrayFile *g = NULL;
  assert_int_equal(tf_open_image(p, len, &g, &e), HURRAY_OK);
  for (int k = 0; k < 20; k++) { /* past the scans: the sorted permutation */
    assert_int_equal(hurray_file_find(g, "n0000", 5, &idx), HURRAY_ERR_DUPLICATE_NAME);
    assert_int_equal(hurray_file_find(g, "n0002", 5, &idx), HURRAY_OK);
  }
  assert_int_equal(hurray__file_lookup_kind(g), HURRAY__LOOKUP_PERM);
  assert_int_equal(hurray_file_verify(g, &e), HURRAY_ERR_DUPLICATE_NAME);
  assert_string_equal(e.field, "index[1].name");
  hurray_file_close(&g);
  free(p);
  hurray__name_hash_test_constant(false);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
}

/* ---- the reference implementation's file ------------------------------------------ */

static void test_golden_basic(void **state) {
  (void)state;
  const char *dir = tu_env_dir("HURRAY_GOLDEN_DIR");
  if (dir == NULL) {
    print_message("SKIPPED: golden corpus (../shared/golden) is absent\n");
    skip();
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/files/basic.hrry", dir);
  for (int mode = 0; mode < 3; mode++) { /* MMAP, READ, MMAP_COPY */
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = (HurrayFileAccess)mode;
    HurrayFile *f = NULL;
    HurrayError e;
    HurrayStatus st = hurray_file_open(path, &o, &f, &e);
    if (st != HURRAY_OK) fail_msg("%s", e.message);
    HurrayFileInfo in;
    assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
    assert_int_equal(in.flags, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C); /* KV flag clear */
    assert_int_equal(in.index_crc32c, 0x51349F72u);
    assert_int_equal(hurray_file_tensor_count(f), 2);
    static const struct {
      const char *name;
      uint8_t type;
      uint32_t rank;
      uint64_t shape[2];
      uint64_t bytes;
    } want[] = {{"weights", HURRAY_DTYPE_FLOAT32, 2, {2, 2}, 16},
                {"bias", HURRAY_DTYPE_INT8, 1, {3, 0}, 3}};
    for (int i = 0; i < 2; i++) {
      uint64_t idx;
      assert_int_equal(hurray_file_find(f, want[i].name, strlen(want[i].name), &idx), HURRAY_OK);
      assert_int_equal(idx, i);
      HurrayFileTensor *t = NULL;
      st = hurray_file_tensor(f, idx, &t, &e);
      if (st != HURRAY_OK) fail_msg("%s", e.message);
      const HurrayDescriptor *d = hurray_file_tensor_descriptor(t);
      uint8_t type;
      assert_int_equal(hurray_descriptor_element_type_tag(d, &type), HURRAY_OK);
      assert_int_equal(type, want[i].type);
      uint64_t dims[2];
      uintptr_t rank = 2;
      assert_int_equal(hurray_descriptor_shape(d, dims, &rank), HURRAY_OK);
      assert_int_equal(rank, want[i].rank);
      for (uint32_t k = 0; k < want[i].rank; k++) assert_int_equal(dims[k], want[i].shape[k]);
      const void *q;
      uint64_t n;
      assert_int_equal(hurray_file_tensor_buffer(t, 0, &q, &n), HURRAY_OK);
      assert_int_equal(n, want[i].bytes);
      hurray_file_tensor_release(&t);
    }
    assert_int_equal(hurray_file_kv_count(f), 2);
    const HurrayKvValue *v;
    assert_int_equal(hurray_file_kv_find(f, "producer", 8, &v), HURRAY_OK);
    assert_int_equal(v->tag, HURRAY_KV_STRING);
    assert_int_equal(v->v.str.len, strlen("hurray-conformance"));
    assert_memory_equal(v->v.str.data, "hurray-conformance", v->v.str.len);
    assert_int_equal(hurray_file_kv_find(f, "tensor_count", 12, &v), HURRAY_OK);
    assert_true(v->tag == HURRAY_KV_INT64 && v->v.i64 == 2);
    hurray_file_close(&f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_base_file_reads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_header_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_trailer_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_index_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_out_of_order_index, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fetch_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncation_at_every_byte, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hostile_lengths_allocate_nothing_big, setup, teardown),
      cmocka_unit_test_setup_teardown(test_open_allocation_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tensors_outlive_the_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_null_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_readers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hash_flooding_falls_back, setup, teardown),
      cmocka_unit_test(test_golden_basic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
