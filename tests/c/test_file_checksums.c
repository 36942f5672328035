/* Data checksums (docs/reference/file-format.md § Data checksums): the writer records a
 * CRC-32C of every tensor's descriptor and data in the KV entry
 * "hurray.data_crc32c"; hurray_file_verify_data finds a flipped bit and names
 * the tensor and the offset; files without the record say so; the KV still
 * round-trips; the file stays one any reader loads. Also
 * hurray_file_verify_tensor (structure without data). */
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

/* A CSR float32 [3, 3] with 2 non-zeros: three buffers, so the data region
 * has gaps between them. Owned: hurray_descriptor_destroy. */
static HurrayDescriptor *csr_desc(void) {
  HurrayBufferHandle h[3];
  memset(h, 0, sizeof h);
  const uint64_t sizes[3] = {8, 16, 32}; /* values f32[2], indices int64[2], indptr int64[4] */
  for (int k = 0; k < 3; k++) {
    h[k].byte_size = sizes[k];
    h[k].alignment = 64;
    h[k].device_tag = HURRAY_DEVICE_CPU;
    h[k].sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  }
  const uint64_t dims[2] = {3, 3};
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = 2;
  f.shape = dims;
  f.layout.tag = HURRAY_LAYOUT_CSR;
  f.layout.u.csr.nnz = 2;
  f.buffer_count = 3;
  f.buffers = h;
  HurrayDescriptor *d = NULL;
  HurrayError e;
  if (hurray_descriptor_from_fields(&f, 0, &d, &e) != HURRAY_OK) fail_msg("csr: %s", e.message);
  return d;
}

static uint8_t g_a[10000], g_b[48], g_csr[3][32];

/* Writes "a" (10000 bytes), "empty" (0 bytes), "b" (f32 [3, 4]), "m" (CSR)
 * and a user KV entry, with or without checksums. */
static void write_sample(const char *path, bool checksums, bool sorted) {
  for (size_t i = 0; i < sizeof g_a; i++) g_a[i] = (uint8_t)(i * 7 + 1);
  for (size_t i = 0; i < sizeof g_b; i++) g_b[i] = (uint8_t)(255 - i);
  for (int k = 0; k < 3; k++) memset(g_csr[k], 0x30 + k, sizeof g_csr[k]);
  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  o.skip_fsync = true;
  o.sorted_index = sorted;
  o.data_checksums = checksums;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  HurrayDescriptor *da = tf_desc_u8(sizeof g_a), *de = tf_desc_u8(0), *db = tf_desc_f32(3, 4);
  HurrayDescriptor *dm = csr_desc();
  const void *ba[1] = {g_a}, *bb[1] = {g_b}, *bm[3] = {g_csr[0], g_csr[1], g_csr[2]};
  assert_int_equal(hurray_file_writer_add_tensor(w, "a", 1, da, ba, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "empty", 5, de, NULL, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "b", 1, db, bb, NULL, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_tensor(w, "m", 1, dm, bm, NULL, &e), HURRAY_OK);
  HurrayKvValue v = hurray_kv_string("me", 2);
  assert_int_equal(hurray_file_writer_add_kv(w, "producer", 8, &v, &e), HURRAY_OK);
  if (hurray_file_writer_finish(w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(da), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(de), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(db), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(dm), HURRAY_OK);
}

static const HurrayFileAccess k_access[3] = {HURRAY_FILE_ACCESS_MMAP, HURRAY_FILE_ACCESS_READ,
                                             HURRAY_FILE_ACCESS_MMAP_COPY};

/* The record holds, for each index entry, the CRC-32C of its descriptor and
 * data bytes, computed here from the file image as another reader would. */
static void test_record_matches_the_bytes(void **state) {
  (void)state;
  for (int sorted = 0; sorted < 2; sorted++) {
    const char *path = tf_path("sum.hrry");
    write_sample(path, true, sorted != 0);
    size_t len = 0;
    uint8_t *img = tf_load(path, &len);
    HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
    const HurrayKvValue *v = NULL;
    assert_int_equal(hurray_file_kv_find(f, "hurray.data_crc32c", 18, &v), HURRAY_OK);
    assert_int_equal(v->tag, HURRAY_KV_BYTES);
    assert_int_equal(v->v.bytes.len, 8 * 4);
    for (uint64_t i = 0; i < 4; i++) {
      HurrayFileEntry en;
      assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
      uint32_t dc = hurray_crc32c(0, img + en.descriptor_offset, en.descriptor_length);
      uint32_t xc = hurray_crc32c(0, img + en.data_offset, (size_t)en.data_length);
      assert_int_equal(hurray__ld32(v->v.bytes.data + 8 * i), dc);
      assert_int_equal(hurray__ld32(v->v.bytes.data + 8 * i + 4), xc);
    }
    /* The CSR's region spans its three buffers and the zero gaps between. */
    uint64_t m = 0;
    assert_int_equal(hurray_file_find(f, "m", 1, &m), HURRAY_OK);
    HurrayFileEntry em;
    assert_int_equal(hurray_file_entry(f, m, &em), HURRAY_OK);
    assert_true(em.data_length > 2 * 4096);
    HurrayFileDataReport r;
    HurrayError e;
    assert_int_equal(hurray_file_verify_data(f, &r, &e), HURRAY_OK);
    assert_int_equal(r.tensors, 4);
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < 4; i++) {
      HurrayFileEntry en;
      assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
      bytes += en.descriptor_length + en.data_length;
      assert_int_equal(hurray_file_verify_tensor_data(f, i, &e), HURRAY_OK);
      assert_int_equal(hurray_file_verify_tensor(f, i, &e), HURRAY_OK);
    }
    assert_int_equal(r.bytes, bytes);
    hurray_file_close(&f);
    free(img);
  }
}

/* Tensors of 4 MiB and more are checksummed on a second thread while the
 * writer copies them (src/file/writer.c, CRC_THREAD_MIN): the record must be
 * the CRC of the bytes in the file, durable or not, for sizes around the
 * threshold and across the 2 MiB piece boundaries. */
static void test_large_tensors_threaded_checksum(void **state) {
  (void)state;
  const size_t sizes[3] = {((size_t)4 << 20) - 1, (size_t)4 << 20, ((size_t)9 << 20) + 13};
  uint8_t *big = malloc(sizes[2]);
  assert_non_null(big);
  for (size_t i = 0; i < sizes[2]; i++) big[i] = (uint8_t)((i * 2654435761u) >> 13);
  for (int durable = 0; durable < 2; durable++) {
    const char *path = tf_path("big.hrry");
    HurrayFileWriterOptions o;
    memset(&o, 0, sizeof o);
    o.skip_fsync = durable == 0;
    o.data_checksums = true;
    HurrayFileWriter *w = NULL;
    HurrayError e;
    if (hurray_file_writer_open(path, &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
    for (int k = 0; k < 3; k++) {
      HurrayDescriptor *d = tf_desc_u8(sizes[k]);
      const void *b[1] = {big};
      char name[2] = {(char)('x' + k), 0};
      assert_int_equal(hurray_file_writer_add_tensor(w, name, 1, d, b, NULL, &e), HURRAY_OK);
      assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
    }
    if (hurray_file_writer_finish(w, &e) != HURRAY_OK) fail_msg("%s", e.message);
    hurray_file_writer_destroy(&w);
    size_t len = 0;
    uint8_t *img = tf_load(path, &len);
    HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
    const HurrayKvValue *v = NULL;
    assert_int_equal(hurray_file_kv_find(f, "hurray.data_crc32c", 18, &v), HURRAY_OK);
    for (uint64_t i = 0; i < 3; i++) {
      HurrayFileEntry en;
      assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
      assert_true(en.data_length >= sizes[i]);
      assert_memory_equal(img + en.data_offset, big, sizes[i]);
      uint32_t xc = hurray_crc32c(0, img + en.data_offset, (size_t)en.data_length);
      assert_int_equal(hurray__ld32(v->v.bytes.data + 8 * i + 4), xc);
    }
    HurrayFileDataReport r;
    assert_int_equal(hurray_file_verify_data(f, &r, &e), HURRAY_OK);
    assert_int_equal(r.tensors, 3);
    hurray_file_close(&f);
    /* a flipped bit in the last piece of the largest tensor is found */
    HurrayFileEntry ez;
    f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
    assert_int_equal(hurray_file_entry(f, 2, &ez), HURRAY_OK);
    hurray_file_close(&f);
    img[ez.data_offset + sizes[2] - 5] ^= 0x10;
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(img, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
    assert_int_equal(hurray_file_verify_data(f, &r, &e), HURRAY_ERR_CRC_MISMATCH);
    assert_string_equal(e.field, "index[2].data");
    hurray_file_close(&f);
    free(img);
  }
  free(big);
}

/* One flipped bit in a tensor's data: verify names the tensor and the data
 * offset, in every access mode; the tensors before it were checked. The file
 * still opens and fetches (open reads no data). */
static void test_flipped_bit_in_data(void **state) {
  (void)state;
  const char *path = tf_path("flip.hrry");
  write_sample(path, true, false);
  size_t len = 0;
  uint8_t *img = tf_load(path, &len);
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  uint64_t b = 0;
  assert_int_equal(hurray_file_find(f, "b", 1, &b), HURRAY_OK);
  HurrayFileEntry eb;
  assert_int_equal(hurray_file_entry(f, b, &eb), HURRAY_OK);
  hurray_file_close(&f);
  img[eb.data_offset + 5] ^= 0x10;
  tf_store(path, img, len);
  for (int a = 0; a < 3; a++) {
    f = tf_open_as(path, k_access[a]);
    HurrayFileTensor *t = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_tensor(f, b, &t, &e), HURRAY_OK);
    hurray_file_tensor_release(&t);
    HurrayFileDataReport r;
    assert_int_equal(hurray_file_verify_data(f, &r, &e), HURRAY_ERR_CRC_MISMATCH);
    assert_int_equal(e.status, HURRAY_ERR_CRC_MISMATCH);
    assert_int_equal(e.offset, eb.data_offset);
    assert_non_null(strstr(e.message, "tensor \"b\""));
    assert_non_null(strstr(e.message, "data"));
    assert_string_equal(e.field, "index[2].data");
    assert_int_equal(r.tensors, 2); /* "a" and "empty" were fine */
    assert_int_equal(hurray_file_verify_tensor_data(f, 0, &e), HURRAY_OK);
    assert_int_equal(hurray_file_verify_tensor_data(f, b, &e), HURRAY_ERR_CRC_MISMATCH);
    assert_int_equal(e.offset, eb.data_offset);
    assert_int_equal(hurray_file_verify_tensor_data(f, 3, &e), HURRAY_OK);
    assert_int_equal(hurray_file_verify_tensor_data(f, 4, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    /* structure is still fine: only the bytes differ */
    assert_int_equal(hurray_file_verify(f, &e), HURRAY_OK);
    assert_int_equal(hurray_file_verify_tensor(f, b, &e), HURRAY_OK);
    hurray_file_close(&f);
  }
  free(img);
}

/* A bit flipped in a descriptor (a shape byte: it still decodes) is reported
 * against the descriptor, at its offset. So is a byte in a gap between two
 * buffers of the CSR (the region covers the gaps). */
static void test_flipped_descriptor_and_gap(void **state) {
  (void)state;
  const char *path = tf_path("desc.hrry");
  write_sample(path, true, false);
  size_t len = 0;
  uint8_t *img = tf_load(path, &len);
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  HurrayFileEntry ea, em;
  assert_int_equal(hurray_file_entry(f, 0, &ea), HURRAY_OK);
  assert_int_equal(hurray_file_entry(f, 3, &em), HURRAY_OK);
  hurray_file_close(&f);
  uint8_t *copy = malloc(len);
  memcpy(copy, img, len);
  copy[ea.descriptor_offset + ea.descriptor_length - 1] ^= 0x01;
  tf_store(path, copy, len);
  f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  HurrayError e;
  assert_int_equal(hurray_file_verify_data(f, NULL, &e), HURRAY_ERR_CRC_MISMATCH);
  assert_int_equal(e.offset, ea.descriptor_offset);
  assert_string_equal(e.field, "index[0].descriptor");
  assert_non_null(strstr(e.message, "tensor \"a\" is damaged: its descriptor"));
  hurray_file_close(&f);

  memcpy(copy, img, len);
  copy[em.data_offset + 100] = 0xEE; /* after the values (8 bytes), before the indices */
  tf_store(path, copy, len);
  f = tf_open_as(path, HURRAY_FILE_ACCESS_MMAP);
  assert_int_equal(hurray_file_verify_data(f, NULL, &e), HURRAY_ERR_CRC_MISMATCH);
  assert_int_equal(e.offset, em.data_offset);
  assert_non_null(strstr(e.message, "tensor \"m\""));
  hurray_file_close(&f);
  free(copy);
  free(img);
}

/* Without checksums verify says so (NOT_FOUND), and nothing else differs:
 * the tensor region is byte for byte the same, the index too; only the KV
 * section (one more entry) and what follows it move. */
static void test_without_checksums(void **state) {
  (void)state;
  const char *with = tf_path("with.hrry"), *without = tf_path("without.hrry");
  write_sample(with, true, false);
  write_sample(without, false, false);
  HurrayFile *f = tf_open_as(without, HURRAY_FILE_ACCESS_MMAP);
  HurrayError e;
  HurrayFileDataReport r;
  r.tensors = 99;
  assert_int_equal(hurray_file_verify_data(f, &r, &e), HURRAY_ERR_NOT_FOUND);
  assert_non_null(strstr(e.message, "no data checksums"));
  assert_int_equal(r.tensors, 0);
  assert_int_equal(hurray_file_verify_tensor_data(f, 0, &e), HURRAY_ERR_NOT_FOUND);
  HurrayFileInfo iw, io;
  assert_int_equal(hurray_file_info(f, &io), HURRAY_OK);
  hurray_file_close(&f);
  size_t lw = 0, lo = 0;
  uint8_t *pw = tf_load(with, &lw), *po = tf_load(without, &lo);
  f = tf_open_as(with, HURRAY_FILE_ACCESS_MMAP);
  assert_int_equal(hurray_file_info(f, &iw), HURRAY_OK);
  hurray_file_close(&f);
  assert_int_equal(iw.kv_offset, io.kv_offset);
  assert_int_equal(iw.flags, io.flags);
  assert_memory_equal(pw, po, (size_t)io.kv_offset); /* header and every tensor */
  assert_int_equal(iw.index_length, io.index_length);
  assert_memory_equal(pw + iw.index_offset, po + io.index_offset, (size_t)io.index_length);
  assert_int_equal(iw.kv_length, io.kv_length + 2 + 18 + 1 + 4 + 32);
  free(pw);
  free(po);
}

/* The user's KV comes back as given, the record after it; the writer refuses
 * the record's key while it writes the record itself, and a writer without
 * checksums takes it (then verify checks its shape). */
static void test_kv_round_trip_and_the_reserved_key(void **state) {
  (void)state;
  const char *path = tf_path("kv.hrry");
  write_sample(path, true, false);
  HurrayFile *f = tf_open_as(path, HURRAY_FILE_ACCESS_READ);
  assert_int_equal(hurray_file_kv_count(f), 2);
  const char *k;
  size_t kl;
  const HurrayKvValue *v;
  assert_int_equal(hurray_file_kv_get(f, 0, &k, &kl, &v), HURRAY_OK);
  assert_int_equal(kl, 8);
  assert_memory_equal(k, "producer", 8);
  assert_int_equal(v->tag, HURRAY_KV_STRING);
  assert_memory_equal(v->v.str.data, "me", 2);
  assert_int_equal(hurray_file_kv_get(f, 1, &k, &kl, &v), HURRAY_OK);
  assert_int_equal(kl, 18);
  assert_memory_equal(k, HURRAY_FILE_KV_DATA_CRC32C, 18);
  hurray_file_close(&f);

  HurrayFileWriterOptions o;
  memset(&o, 0, sizeof o);
  o.skip_fsync = true;
  o.data_checksums = true;
  HurrayFileWriter *w = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_writer_open(tf_path("r.hrry"), &o, &w, &e), HURRAY_OK);
  uint8_t bad[8] = {0};
  HurrayKvValue bv = hurray_kv_bytes(bad, 8);
  assert_int_equal(hurray_file_writer_add_kv(w, "hurray.data_crc32c", 18, &bv, &e),
                   HURRAY_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(e.message, "written by the writer itself"));
  /* the writer is still usable: an empty file with an empty record */
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  f = tf_open_as(tf_path("r.hrry"), HURRAY_FILE_ACCESS_MMAP);
  HurrayFileDataReport r;
  assert_int_equal(hurray_file_verify_data(f, &r, &e), HURRAY_OK);
  assert_int_equal(r.tensors, 0);
  hurray_file_close(&f);

  /* A record of the wrong size (written by hand, without the option). */
  o.data_checksums = false;
  assert_int_equal(hurray_file_writer_open(tf_path("bad.hrry"), &o, &w, &e), HURRAY_OK);
  HurrayDescriptor *d = tf_desc_u8(4);
  const void *bufs[1] = {g_a};
  assert_int_equal(hurray_file_writer_add_tensor(w, "t", 1, d, bufs, NULL, &e), HURRAY_OK);
  HurrayKvValue shortv = hurray_kv_bytes(bad, 4);
  assert_int_equal(hurray_file_writer_add_kv(w, "hurray.data_crc32c", 18, &shortv, &e),
                   HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  for (int a = 0; a < 2; a++) {
    f = tf_open_as(tf_path("bad.hrry"), k_access[a]);
    HurrayFileInfo in;
    assert_int_equal(hurray_file_info(f, &in), HURRAY_OK);
    assert_int_equal(hurray_file_verify_data(f, NULL, &e), HURRAY_ERR_INVALID_KV);
    assert_non_null(strstr(e.message, "holds 4 bytes, expected 8 (8 for each of 1 tensor)"));
    /* the offset of the value's bytes: after the count, key length, key, tag, u32 length */
    assert_int_equal(e.offset, in.kv_offset + 4 + 2 + 18 + 1 + 4);
    hurray_file_close(&f);
  }
}

/* hurray_file_verify_tensor proves what a fetch would, without the data:
 * a data_length one byte short is reported at the tensor, while open (which
 * checks ranges only) accepted the file. */
static void test_verify_tensor_structure(void **state) {
  (void)state;
  const char *path = tf_path("st.hrry");
  write_sample(path, false, false);
  size_t len = 0;
  uint8_t *img = tf_load(path, &len);
  uint8_t *q = tf_index_entry(img, len, 3); /* "m": descriptor_offset field */
  hurray__st64(q + 20, hurray__ld64(q + 20) - 1);
  tf_fix_crc(img, len);
  tf_store(path, img, len);
  for (int a = 0; a < 3; a++) {
    HurrayFile *f = tf_open_as(path, k_access[a]);
    HurrayError e;
    assert_int_equal(hurray_file_verify_tensor(f, 0, &e), HURRAY_OK);
    assert_int_equal(hurray_file_verify_tensor(f, 3, &e), HURRAY_ERR_INVALID_FILE);
    assert_string_equal(e.field, "index[3].data_length");
    assert_int_equal(hurray_file_verify_tensor(f, 4, &e), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    assert_int_equal(hurray_file_verify_tensor(NULL, 0, &e), HURRAY_ERR_NULL_POINTER);
    assert_int_equal(hurray_file_verify_data(NULL, NULL, &e), HURRAY_ERR_NULL_POINTER);
    assert_int_equal(hurray_file_verify_tensor_data(NULL, 0, &e), HURRAY_ERR_NULL_POINTER);
    hurray_file_close(&f);
  }
  free(img);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_record_matches_the_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_large_tensors_threaded_checksum, setup, teardown),
      cmocka_unit_test_setup_teardown(test_flipped_bit_in_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_flipped_descriptor_and_gap, setup, teardown),
      cmocka_unit_test_setup_teardown(test_without_checksums, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kv_round_trip_and_the_reserved_key, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verify_tensor_structure, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
