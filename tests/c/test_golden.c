/*
 * The reference implementation's conformance corpus (../shared/golden): every
 * descriptor listed in manifest.json decodes to the manifest's values and
 * re-encodes byte for byte. Skips, saying so, when the corpus is absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vjson.h"
#include "testutil.h"

static VjValue *load_manifest(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  size_t len = 0;
  uint8_t *text = tu_read_file(path, &len);
  assert_non_null(text);
  char why[160];
  VjValue *m = vj_parse((const char *)text, len, why, sizeof why);
  if (m == NULL) fail_msg("manifest.json: %s", why);
  free(text);
  return m;
}

static uint64_t need_u64(const VjValue *obj, const char *key) {
  uint64_t v = 0;
  if (!vj_u64(vj_get(obj, key), &v)) fail_msg("manifest: %s is missing or not an integer", key);
  return v;
}

static bool need_bool(const VjValue *obj, const char *key) {
  bool v = false;
  if (!vj_bool(vj_get(obj, key), &v)) fail_msg("manifest: %s is missing or not a boolean", key);
  return v;
}

static void check_one(const char *dir, const VjValue *entry) {
  const char *file = vj_str(vj_get(entry, "file"));
  const VjValue *ex = vj_get(entry, "expect");
  assert_non_null(file);
  assert_non_null(ex);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  size_t len = 0;
  uint8_t *bytes = tu_read_file(path, &len);
  if (bytes == NULL) fail_msg("%s: cannot read", path);

  HurrayDescriptor *d = NULL;
  HurrayError err;
  HurrayStatus st = hurray_descriptor_decode_ex(bytes, len, HURRAY_DECODE_STRICT, &d, &err);
  if (st != HURRAY_OK) fail_msg("%s: decode failed (%d): %s", file, st, err.message);
  /* The reference C ABI entry point agrees. */
  HurrayDescriptor *d2 = NULL;
  assert_int_equal(hurray_descriptor_decode(bytes, len, &d2), HURRAY_OK);
  assert_true(hurray_descriptor_equal(d, d2));
  assert_int_equal(hurray_descriptor_destroy(d2), HURRAY_OK);

  uint8_t major = 0, minor = 0;
  assert_int_equal(hurray_descriptor_version(d, &major, &minor), HURRAY_OK);
  assert_int_equal(major, need_u64(ex, "version_major"));
  assert_int_equal(minor, need_u64(ex, "version_minor"));

  uint8_t tag = 0;
  assert_int_equal(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
  assert_int_equal(tag, need_u64(ex, "element_type_tag"));
  const char *type_name = vj_str(vj_get(ex, "element_type"));
  assert_non_null(type_name);
  if (strcmp(type_name, "extension") == 0) {
    assert_true(tag >= 0xF0 && tag <= 0xFE);
  } else {
    assert_non_null(hurray_dtype_name(tag));
    assert_string_equal(hurray_dtype_name(tag), type_name);
  }

  const VjValue *shape = vj_get(ex, "shape");
  uint32_t rank = 0;
  assert_int_equal(hurray_descriptor_rank(d, &rank), HURRAY_OK);
  assert_int_equal(rank, vj_len(shape));
  uint64_t dims[64];
  uintptr_t cap = 64;
  assert_int_equal(hurray_descriptor_shape(d, dims, &cap), HURRAY_OK);
  assert_int_equal(cap, rank);
  for (uint32_t k = 0; k < rank; k++) {
    uint64_t want = 0;
    assert_true(vj_u64(vj_at(shape, k), &want));
    assert_int_equal(dims[k], want);
  }

  uint64_t off = 0;
  assert_int_equal(hurray_descriptor_byte_offset(d, &off), HURRAY_OK);
  assert_int_equal(off, need_u64(ex, "byte_offset"));
  uint8_t ltag = 0;
  assert_int_equal(hurray_descriptor_layout_tag(d, &ltag), HURRAY_OK);
  assert_int_equal(ltag, need_u64(ex, "layout_tag"));

  const VjValue *sizes = vj_get(ex, "buffer_byte_sizes");
  uint32_t nbuf = 0;
  assert_int_equal(hurray_descriptor_buffer_count(d, &nbuf), HURRAY_OK);
  assert_int_equal(nbuf, vj_len(sizes));
  for (uint32_t i = 0; i < nbuf; i++) {
    const HurrayBufferHandle *h = NULL;
    uint64_t want = 0;
    assert_int_equal(hurray_descriptor_buffer(d, i, &h), HURRAY_OK);
    assert_true(vj_u64(vj_at(sizes, i), &want));
    assert_int_equal(h->byte_size, want);
  }

  HurrayDescriptorFields f;
  assert_int_equal(hurray_descriptor_fields(d, &f), HURRAY_OK);
  assert_int_equal(f.quantization != NULL, need_bool(ex, "has_quantization"));
  assert_int_equal(f.shard != NULL, need_bool(ex, "has_shard"));
  uint32_t flags = 0;
  assert_int_equal(hurray_descriptor_flags(d, &flags), HURRAY_OK);
  assert_int_equal((flags & HURRAY_FLAG_HAS_QUANTIZATION) != 0, f.quantization != NULL);
  assert_int_equal((flags & HURRAY_FLAG_HAS_SHARD) != 0, f.shard != NULL);

  /* Byte-for-byte re-encoding, through the codec and through from_fields. */
  uint64_t n = 0;
  assert_int_equal(hurray_descriptor_encoded_len(d, &n), HURRAY_OK);
  assert_int_equal(n, len);
  uint8_t *out = malloc(len);
  assert_int_equal(hurray_descriptor_encode(d, out, len, &n), HURRAY_OK);
  if (memcmp(out, bytes, len) != 0) fail_msg("%s: re-encoding differs:\n%s", file, tu_hex(out, len));
  HurrayDescriptor *rebuilt = NULL;
  st = hurray_descriptor_from_fields(&f, HURRAY_DECODE_STRICT, &rebuilt, &err);
  if (st != HURRAY_OK) fail_msg("%s: from_fields failed (%d): %s", file, st, err.message);
  memset(out, 0, len);
  assert_int_equal(hurray_descriptor_encode(rebuilt, out, len, &n), HURRAY_OK);
  assert_memory_equal(out, bytes, len);
  assert_true(hurray_descriptor_equal(d, rebuilt));

  printf("golden: %-45s ok (%zu bytes)\n", file, len);
  free(out);
  assert_int_equal(hurray_descriptor_destroy(rebuilt), HURRAY_OK);
  assert_int_equal(hurray_descriptor_destroy(d), HURRAY_OK);
  free(bytes);
}

static void test_golden_descriptors(void **state) {
  (void)state;
  const char *dir = tu_env_dir("HURRAY_GOLDEN_DIR");
  if (dir == NULL) {
    printf("golden corpus absent: skipped (set HURRAY_GOLDEN_DIR or provide ../shared/golden)\n");
    skip();
  }
  VjValue *m = load_manifest(dir);
  const VjValue *list = vj_get(m, "descriptors");
  assert_true(vj_len(list) > 0);
  for (size_t i = 0; i < vj_len(list); i++) check_one(dir, vj_at(list, i));
  vj_free(m);
}

static void test_json_reader(void **state) {
  (void)state;
  const char *doc = "{\"a\": [1, -2, 18446744073709551615, 1.5e3], \"s\": \"x\\u00e9\\n\", "
                    "\"t\": true, \"n\": null, \"o\": {}}";
  VjValue *v = vj_parse(doc, strlen(doc), NULL, 0);
  assert_non_null(v);
  uint64_t u = 0;
  int64_t i = 0;
  assert_true(vj_u64(vj_at(vj_get(v, "a"), 0), &u));
  assert_int_equal(u, 1);
  assert_false(vj_u64(vj_at(vj_get(v, "a"), 1), &u));
  assert_true(vj_i64(vj_at(vj_get(v, "a"), 1), &i));
  assert_int_equal(i, -2);
  assert_true(vj_u64(vj_at(vj_get(v, "a"), 2), &u));
  assert_true(u == UINT64_MAX);
  assert_false(vj_u64(vj_at(vj_get(v, "a"), 3), &u));
  assert_string_equal(vj_str(vj_get(v, "s")), "x\xc3\xa9\n");
  bool b = false;
  assert_true(vj_bool(vj_get(v, "t"), &b));
  assert_true(b);
  assert_int_equal(vj_get(v, "n")->kind, VJ_NULL);
  assert_int_equal(vj_len(vj_get(v, "o")), 0);
  assert_null(vj_get(v, "missing"));
  vj_free(v);
  char why[160];
  assert_null(vj_parse("{\"a\": [1,]}", 11, why, sizeof why));
  assert_null(vj_parse("[1] x", 5, why, sizeof why));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_reader),
      cmocka_unit_test(test_golden_descriptors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
