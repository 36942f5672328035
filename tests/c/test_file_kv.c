/* KV metadata: every value tag round-trips; the writer and the parser reject
 * what the spec forbids; hostile lengths allocate nothing. */
#include <math.h>

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

static HurrayFileWriter *open_writer(const char *name) {
  HurrayFileWriter *w = NULL;
  HurrayFileWriterOptions o = {0, false, true, false};
  HurrayError e;
  if (hurray_file_writer_open(tf_path(name), &o, &w, &e) != HURRAY_OK) fail_msg("%s", e.message);
  return w;
}

static void add_kv(HurrayFileWriter *w, const char *key, HurrayKvValue v) {
  HurrayError e;
  HurrayStatus st = hurray_file_writer_add_kv(w, key, strlen(key), &v, &e);
  if (st != HURRAY_OK) fail_msg("add_kv %s: %s", key, e.message);
}

static const HurrayKvValue *get(const HurrayFile *f, const char *key) {
  const HurrayKvValue *v = NULL;
  assert_int_equal(hurray_file_kv_find(f, key, strlen(key), &v), HURRAY_OK);
  return v;
}

static void test_round_trip_every_tag(void **state) {
  (void)state;
  HurrayFileWriter *w = open_writer("kv.hrry");
  add_kv(w, "s", hurray_kv_string("h\xC3\xA9llo", 6));
  add_kv(w, "s_empty", hurray_kv_string(NULL, 0));
  add_kv(w, "i_min", hurray_kv_int64(INT64_MIN));
  add_kv(w, "i_max", hurray_kv_int64(INT64_MAX));
  add_kv(w, "u_max", hurray_kv_uint64(UINT64_MAX));
  add_kv(w, "f_pi", hurray_kv_float64(3.141592653589793));
  add_kv(w, "f_negzero", hurray_kv_float64(-0.0));
  add_kv(w, "f_inf", hurray_kv_float64(-INFINITY));
  add_kv(w, "f_nan", hurray_kv_float64(hurray__f64_from_bits(0x7FF8000000000123ull)));
  add_kv(w, "b_true", hurray_kv_bool(true));
  add_kv(w, "b_false", hurray_kv_bool(false));
  static const uint8_t raw[] = {0, 1, 0xFF, 0, 'x'};
  add_kv(w, "bytes", hurray_kv_bytes(raw, sizeof raw));
  add_kv(w, "bytes_empty", hurray_kv_bytes(NULL, 0));
  HurrayKvString strs[3] = {{"a", 1}, {"", 0}, {"\xE2\x82\xAC", 3}};
  add_kv(w, "arr_s", hurray_kv_array(HURRAY_KV_STRING, strs, 3));
  int64_t ints[3] = {-1, 0, INT64_MAX};
  add_kv(w, "arr_i", hurray_kv_array(HURRAY_KV_INT64, ints, 3));
  uint64_t uints[2] = {UINT64_MAX, 7};
  add_kv(w, "arr_u", hurray_kv_array(HURRAY_KV_UINT64, uints, 2));
  double dbl[2] = {1.5, -2.25};
  add_kv(w, "arr_f", hurray_kv_array(HURRAY_KV_FLOAT64, dbl, 2));
  bool bools[3] = {true, false, true};
  add_kv(w, "arr_b", hurray_kv_array(HURRAY_KV_BOOL, bools, 3));
  HurrayKvBytes bl[2] = {{raw, 5}, {NULL, 0}};
  add_kv(w, "arr_bytes", hurray_kv_array(HURRAY_KV_BYTES, bl, 2));
  add_kv(w, "arr_empty", hurray_kv_array(HURRAY_KV_INT64, NULL, 0));
  add_kv(w, "\xE6\x97\xA5\xE6\x9C\xAC", hurray_kv_uint64(42)); /* a UTF-8 key */
  HurrayError e;
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);

  for (int mode = 0; mode < 2; mode++) {
    HurrayFileOpenOptions o;
    memset(&o, 0, sizeof o);
    o.access = mode ? HURRAY_FILE_ACCESS_READ : HURRAY_FILE_ACCESS_MMAP;
    HurrayFile *f = NULL;
    assert_int_equal(hurray_file_open(tf_path("kv.hrry"), &o, &f, &e), HURRAY_OK);
    HurrayFileInfo info;
    assert_int_equal(hurray_file_info(f, &info), HURRAY_OK);
    assert_true(info.flags & HURRAY_FILE_FLAG_HAS_KV_METADATA);
    assert_int_equal(hurray_file_kv_count(f), 21);
    /* Insertion order is file order. */
    const char *key;
    size_t klen;
    const HurrayKvValue *v;
    assert_int_equal(hurray_file_kv_get(f, 0, &key, &klen, &v), HURRAY_OK);
    assert_int_equal(klen, 1);
    assert_memory_equal(key, "s", 1);
    assert_int_equal(hurray_file_kv_get(f, 21, &key, &klen, &v), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);

    v = get(f, "s");
    assert_int_equal(v->tag, HURRAY_KV_STRING);
    assert_int_equal(v->v.str.len, 6);
    assert_memory_equal(v->v.str.data, "h\xC3\xA9llo", 6);
    assert_int_equal(get(f, "s_empty")->v.str.len, 0);
    assert_true(get(f, "i_min")->v.i64 == INT64_MIN);
    assert_int_equal(get(f, "i_min")->tag, HURRAY_KV_INT64);
    assert_true(get(f, "i_max")->v.i64 == INT64_MAX);
    assert_true(get(f, "u_max")->v.u64 == UINT64_MAX);
    assert_int_equal(get(f, "u_max")->tag, HURRAY_KV_UINT64);
    assert_true(get(f, "f_pi")->v.f64 == 3.141592653589793);
    assert_int_equal(get(f, "f_pi")->tag, HURRAY_KV_FLOAT64);
    assert_true(hurray__f64_bits(get(f, "f_negzero")->v.f64) == 0x8000000000000000ull);
    assert_true(isinf(get(f, "f_inf")->v.f64) && get(f, "f_inf")->v.f64 < 0);
    assert_true(hurray__f64_bits(get(f, "f_nan")->v.f64) == 0x7FF8000000000123ull);
    assert_int_equal(get(f, "b_true")->tag, HURRAY_KV_BOOL);
    assert_true(get(f, "b_true")->v.b);
    assert_false(get(f, "b_false")->v.b);
    v = get(f, "bytes");
    assert_int_equal(v->tag, HURRAY_KV_BYTES);
    assert_int_equal(v->v.bytes.len, 5);
    assert_memory_equal(v->v.bytes.data, raw, 5);
    assert_int_equal(get(f, "bytes_empty")->v.bytes.len, 0);
    v = get(f, "arr_s");
    assert_int_equal(v->tag, HURRAY_KV_ARRAY);
    assert_int_equal(v->elem_tag, HURRAY_KV_STRING);
    assert_int_equal(v->count, 3);
    assert_int_equal(v->v.str_array[0].len, 1);
    assert_memory_equal(v->v.str_array[0].data, "a", 1);
    assert_int_equal(v->v.str_array[1].len, 0);
    assert_memory_equal(v->v.str_array[2].data, "\xE2\x82\xAC", 3);
    v = get(f, "arr_i");
    assert_int_equal(v->elem_tag, HURRAY_KV_INT64);
    assert_int_equal(v->count, 3);
    assert_true(v->v.i64_array[0] == -1 && v->v.i64_array[1] == 0 &&
                v->v.i64_array[2] == INT64_MAX);
    v = get(f, "arr_u");
    assert_true(v->count == 2 && v->v.u64_array[0] == UINT64_MAX && v->v.u64_array[1] == 7);
    v = get(f, "arr_f");
    assert_true(v->count == 2 && v->v.f64_array[0] == 1.5 && v->v.f64_array[1] == -2.25);
    v = get(f, "arr_b");
    assert_true(v->count == 3 && v->v.bool_array[0] && !v->v.bool_array[1] &&
                v->v.bool_array[2]);
    v = get(f, "arr_bytes");
    assert_int_equal(v->elem_tag, HURRAY_KV_BYTES);
    assert_true(v->count == 2 && v->v.bytes_array[0].len == 5 && v->v.bytes_array[1].len == 0);
    assert_memory_equal(v->v.bytes_array[0].data, raw, 5);
    v = get(f, "arr_empty");
    assert_true(v->tag == HURRAY_KV_ARRAY && v->elem_tag == HURRAY_KV_INT64 && v->count == 0);
    assert_true(get(f, "\xE6\x97\xA5\xE6\x9C\xAC")->v.u64 == 42);
    /* Misses. */
    assert_int_equal(hurray_file_kv_find(f, "nope", 4, &v), HURRAY_ERR_NOT_FOUND);
    assert_int_equal(hurray_file_kv_find(f, "", 0, &v), HURRAY_ERR_NOT_FOUND);
    assert_int_equal(hurray_file_kv_find(f, "s", 0, &v), HURRAY_ERR_NOT_FOUND);
    hurray_file_close(&f);
    assert_null(f);
  }
}

static void test_writer_rejects(void **state) {
  (void)state;
  HurrayFileWriter *w = open_writer("bad.hrry");
  HurrayError e;
  HurrayKvValue v = hurray_kv_int64(1);
  /* Keys. */
  assert_int_equal(hurray_file_writer_add_kv(w, "", 0, &v, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_kv(w, NULL, 3, &v, &e), HURRAY_ERR_NULL_POINTER);
  assert_int_equal(hurray_file_writer_add_kv(w, "\xFF", 1, &v, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_kv(w, "\xC0\x80", 2, &v, &e),
                   HURRAY_ERR_INVALID_ARGUMENT); /* overlong NUL */
  assert_int_equal(hurray_file_writer_add_kv(w, "\xED\xA0\x80", 3, &v, &e),
                   HURRAY_ERR_INVALID_ARGUMENT); /* surrogate */
  char *big = malloc(65537);
  memset(big, 'k', 65537);
  assert_int_equal(hurray_file_writer_add_kv(w, big, 65536, &v, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_int_equal(hurray_file_writer_add_kv(w, big, 65535, &v, &e), HURRAY_OK); /* the max */
  free(big);
  assert_int_equal(hurray_file_writer_add_kv(w, "k", 1, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_add_kv(w, "k", 1, &v, &e), HURRAY_ERR_DUPLICATE_NAME);
  assert_int_equal(hurray_file_writer_add_kv(w, "k", 1, NULL, &e), HURRAY_ERR_NULL_POINTER);
  /* Tags. */
  static const uint8_t bad_tags[] = {0x00, 0x08, 0x42, 0xEF, 0xF0, 0xFE, 0xFF};
  for (size_t i = 0; i < sizeof bad_tags; i++) {
    HurrayKvValue b = hurray_kv_int64(0);
    b.tag = bad_tags[i];
    assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &b, &e), HURRAY_ERR_INVALID_ARGUMENT);
  }
  int64_t one = 1;
  static const uint8_t bad_elems[] = {0x00, 0x07, 0x08, 0xF0, 0xFF};
  for (size_t i = 0; i < sizeof bad_elems; i++) {
    HurrayKvValue b = hurray_kv_array(bad_elems[i], &one, 1);
    assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &b, &e), HURRAY_ERR_INVALID_ARGUMENT);
    assert_string_equal(e.field, "value.elem_tag");
  }
  /* Strings must be UTF-8; NULL data only for empty payloads. */
  v = hurray_kv_string("\xE2\x82", 2);
  assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &v, &e), HURRAY_ERR_INVALID_ARGUMENT);
  HurrayKvString bad_s[2] = {{"ok", 2}, {"\x80", 1}};
  v = hurray_kv_array(HURRAY_KV_STRING, bad_s, 2);
  assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &v, &e), HURRAY_ERR_INVALID_ARGUMENT);
  assert_string_equal(e.field, "value[1]");
  v = hurray_kv_string(NULL, 3);
  assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &v, &e), HURRAY_ERR_NULL_POINTER);
  v = hurray_kv_bytes(NULL, 3);
  assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &v, &e), HURRAY_ERR_NULL_POINTER);
  v = hurray_kv_array(HURRAY_KV_INT64, NULL, 2);
  assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &v, &e), HURRAY_ERR_NULL_POINTER);
  /* After all those refusals the writer still works and "t" is free. */
  v = hurray_kv_bool(true);
  assert_int_equal(hurray_file_writer_add_kv(w, "t", 1, &v, &e), HURRAY_OK);
  assert_int_equal(hurray_file_writer_finish(w, &e), HURRAY_OK);
  hurray_file_writer_destroy(&w);
  HurrayFile *f = NULL;
  assert_int_equal(hurray_file_open(tf_path("bad.hrry"), NULL, &f, &e), HURRAY_OK);
  assert_int_equal(hurray_file_kv_count(f), 3);
  hurray_file_close(&f);
}

/* ---- the parser, on hand-made sections ---------------------------------------------- */

typedef struct Sec {
  uint8_t b[512];
  size_t n;
} Sec;

static void s8(Sec *s, uint8_t v) { s->b[s->n++] = v; }
static void s16(Sec *s, uint16_t v) {
  hurray__st16(s->b + s->n, v);
  s->n += 2;
}
static void s32(Sec *s, uint32_t v) {
  hurray__st32(s->b + s->n, v);
  s->n += 4;
}
static void s64(Sec *s, uint64_t v) {
  hurray__st64(s->b + s->n, v);
  s->n += 8;
}
static void sbytes(Sec *s, const void *p, size_t n) {
  memcpy(s->b + s->n, p, n);
  s->n += n;
}
static void skey(Sec *s, const char *k) {
  s16(s, (uint16_t)strlen(k));
  sbytes(s, k, strlen(k));
}

static HurrayStatus parse(const Sec *s, HurrayError *e) {
  HurrayKvTable t;
  /* An exact-size heap copy, so ASan sees any read past the end. */
  uint8_t *copy = malloc(s->n ? s->n : 1);
  memcpy(copy, s->b, s->n);
  HurrayStatus st = hurray__kv_parse(copy, s->n, 1000, &t, e);
  if (st == HURRAY_OK) hurray__kv_table_free(&t);
  free(copy);
  return st;
}

/* A section with one entry of each kind. */
static Sec good_section(void) {
  Sec s = {{0}, 0};
  s32(&s, 7);
  skey(&s, "s");
  s8(&s, 1);
  s32(&s, 3);
  sbytes(&s, "abc", 3);
  skey(&s, "i");
  s8(&s, 2);
  s64(&s, (uint64_t)-5);
  skey(&s, "u");
  s8(&s, 3);
  s64(&s, 9);
  skey(&s, "f");
  s8(&s, 4);
  s64(&s, hurray__f64_bits(0.5));
  skey(&s, "b");
  s8(&s, 5);
  s8(&s, 1);
  skey(&s, "y");
  s8(&s, 6);
  s32(&s, 2);
  sbytes(&s, "\0\1", 2);
  skey(&s, "a");
  s8(&s, 7);
  s8(&s, 1);
  s32(&s, 2);
  s32(&s, 1);
  sbytes(&s, "x", 1);
  s32(&s, 0);
  return s;
}

static void test_parser_accepts_and_truncations_fail(void **state) {
  (void)state;
  Sec s = good_section();
  HurrayError e;
  assert_int_equal(parse(&s, &e), HURRAY_OK);
  /* Every shorter prefix is rejected cleanly. */
  for (size_t n = 0; n < s.n; n++) {
    Sec t = s;
    t.n = n;
    assert_int_equal(parse(&t, &e), HURRAY_ERR_INVALID_KV);
    assert_true(e.offset >= 1000 && e.offset <= 1000 + n);
  }
  /* A trailing byte too. */
  Sec t = s;
  s8(&t, 0);
  assert_int_equal(parse(&t, &e), HURRAY_ERR_INVALID_KV);
  assert_non_null(strstr(e.message, "trailing"));
  /* An empty section (count 0) is fine. */
  Sec z = {{0}, 0};
  s32(&z, 0);
  assert_int_equal(parse(&z, &e), HURRAY_OK);
}

/* One entry "k" with tag `tag` followed by `payload`. */
static Sec one(uint8_t tag, const void *payload, size_t n) {
  Sec s = {{0}, 0};
  s32(&s, 1);
  skey(&s, "k");
  s8(&s, tag);
  sbytes(&s, payload, n);
  return s;
}

static void test_parser_rejects(void **state) {
  (void)state;
  HurrayError e;
  static const uint8_t eight[8] = {0};
  /* Reserved, private and invalid tags. */
  static const uint8_t tags[] = {0x00, 0x08, 0x10, 0xEF, 0xF0, 0xFE, 0xFF};
  for (size_t i = 0; i < sizeof tags; i++) {
    Sec s = one(tags[i], eight, 8);
    assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
    assert_string_equal(e.field, "kv[0].value");
    assert_int_equal(e.offset, 1000 + 4 + 3);
  }
  Sec s = one(0xF3, eight, 8);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  assert_non_null(strstr(e.message, "private"));
  /* Bool bytes other than 0/1 (also inside arrays). */
  uint8_t two = 2;
  s = one(5, &two, 1);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  static const uint8_t barr[] = {5, 2, 0, 0, 0, 1, 2};
  s = one(7, barr, sizeof barr);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  /* Array element tags outside 0x01-0x06, nested arrays included. */
  static const uint8_t et[] = {0, 7, 8, 0xFF};
  for (size_t i = 0; i < sizeof et; i++) {
    uint8_t hdr[5] = {et[i], 0, 0, 0, 0};
    s = one(7, hdr, 5);
    assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  }
  /* Invalid UTF-8 in a string and in a key. */
  static const uint8_t bad_str[] = {2, 0, 0, 0, 0xC3, 0x28};
  s = one(1, bad_str, sizeof bad_str);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  static const uint8_t bad_arr_str[] = {1, 1, 0, 0, 0, 1, 0, 0, 0, 0xFF};
  s = one(7, bad_arr_str, sizeof bad_arr_str);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  Sec k = {{0}, 0};
  s32(&k, 1);
  s16(&k, 1);
  s8(&k, 0xFE);
  s8(&k, 5);
  s8(&k, 0);
  assert_int_equal(parse(&k, &e), HURRAY_ERR_INVALID_KV);
  assert_string_equal(e.field, "kv[0].key");
  /* Empty key. */
  Sec z = {{0}, 0};
  s32(&z, 1);
  s16(&z, 0);
  s8(&z, 5);
  s8(&z, 0);
  assert_int_equal(parse(&z, &e), HURRAY_ERR_INVALID_KV);
  /* Duplicate keys (byte-exact). */
  Sec d = {{0}, 0};
  s32(&d, 3);
  skey(&d, "k");
  s8(&d, 5);
  s8(&d, 0);
  skey(&d, "K");
  s8(&d, 5);
  s8(&d, 0);
  skey(&d, "k");
  s8(&d, 5);
  s8(&d, 1);
  assert_int_equal(parse(&d, &e), HURRAY_ERR_DUPLICATE_NAME);
  assert_string_equal(e.field, "kv[2].key");
  /* Keys differing only in case are distinct. */
  d.n = 0;
  s32(&d, 2);
  skey(&d, "k");
  s8(&d, 5);
  s8(&d, 0);
  skey(&d, "K");
  s8(&d, 5);
  s8(&d, 0);
  assert_int_equal(parse(&d, &e), HURRAY_OK);
}

/* ---- hostile lengths: rejected before anything is sized from them ------------- */

static size_t g_max_alloc;
static void *big_alloc(void *ctx, size_t size, size_t alignment) {
  (void)ctx;
  if (size > g_max_alloc) g_max_alloc = size;
  return tu_aligned_alloc(alignment, size);
}
static void big_free(void *ctx, void *p) {
  (void)ctx;
  tu_aligned_free(p);
}

static void test_hostile_lengths(void **state) {
  (void)state;
  HurrayAllocator a = {big_alloc, big_free, NULL};
  hurray_set_allocator(&a);
  g_max_alloc = 0;
  HurrayError e;
  Sec s = {{0}, 0};
  s32(&s, UINT32_MAX); /* kv_count */
  skey(&s, "k");
  s8(&s, 5);
  s8(&s, 0);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  static const uint8_t big_str[] = {0xFF, 0xFF, 0xFF, 0xFF, 'a'};
  s = one(1, big_str, sizeof big_str);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  s = one(6, big_str, sizeof big_str);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  static const uint8_t big_arr[] = {2, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8};
  s = one(7, big_arr, sizeof big_arr);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  static const uint8_t big_barr[] = {5, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0};
  s = one(7, big_barr, sizeof big_barr);
  assert_int_equal(parse(&s, &e), HURRAY_ERR_INVALID_KV);
  /* Nothing bigger than the section itself was ever requested. */
  assert_true(g_max_alloc <= 64);
  /* An array of 40 empty strings: 160 wire bytes, a bounded arena. */
  Sec m = {{0}, 0};
  s32(&m, 1);
  skey(&m, "k");
  s8(&m, 7);
  s8(&m, 1);
  s32(&m, 40);
  for (int i = 0; i < 40; i++) s32(&m, 0);
  g_max_alloc = 0;
  assert_int_equal(parse(&m, &e), HURRAY_OK);
  assert_true(g_max_alloc <= 40 * sizeof(HurrayKvString) + 64);
  hurray_set_allocator(NULL);
}

static void test_parser_allocation_failures(void **state) {
  (void)state;
  tu_alloc_install();
  Sec s = good_section();
  HurrayError e;
  for (long n = 0;; n++) {
    tu_fail_alloc_after(n);
    HurrayStatus st = parse(&s, &e);
    tu_alloc_reset();
    assert_int_equal(tu_alloc_live(), 0);
    if (st == HURRAY_OK) break;
    assert_int_equal(st, HURRAY_ERR_OUT_OF_MEMORY);
    assert_true(n < 50);
  }
  hurray_set_allocator(NULL);
}

/* The records hurray writes for itself, and nothing else (a reader leaves them
 * out of the user's metadata). */
static void test_own_keys(void **state) {
  (void)state;
  assert_true(hurray_file_kv_is_own(HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_VIEWS_LEN));
  assert_true(hurray_file_kv_is_own(HURRAY_FILE_KV_GGUF, HURRAY_FILE_KV_GGUF_LEN));
  assert_true(hurray_file_kv_is_own(HURRAY_FILE_KV_DATA_CRC32C, HURRAY_FILE_KV_DATA_CRC32C_LEN));
  assert_true(hurray_file_kv_is_own("hurray.views", 12));
  assert_false(hurray_file_kv_is_own("hurray.views", 11)); /* a prefix of it */
  assert_false(hurray_file_kv_is_own("hurray.viewsx", 13));
  assert_false(hurray_file_kv_is_own("hurray.other", 12)); /* reserved, not a record */
  assert_false(hurray_file_kv_is_own("producer", 8));
  assert_false(hurray_file_kv_is_own("", 0));
  assert_false(hurray_file_kv_is_own(NULL, 12));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip_every_tag, setup, teardown),
      cmocka_unit_test_setup_teardown(test_writer_rejects, setup, teardown),
      cmocka_unit_test(test_parser_accepts_and_truncations_fail),
      cmocka_unit_test(test_parser_rejects),
      cmocka_unit_test(test_hostile_lengths),
      cmocka_unit_test(test_parser_allocation_failures),
      cmocka_unit_test(test_own_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
