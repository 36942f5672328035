/*
 * The index walk (src/file/index.c) and the lookups built on it
 * (src/file/lookup.c), differentially: the fast loop with the CRC in bursts,
 * the fast loop with the CRC computed first, and the rule-by-rule walk alone
 * must accept the same files, record the same entries and reject the others
 * with the same status, field, offset and message. Synthetic indexes: names
 * of every length (1..80 bytes, some non-ASCII), tensors in file order or
 * not, empty tensors, and thousands of random corruptions.
 */
#include <pthread.h>

#include "test_file_util.h"

#define A 4096u

typedef struct Rng {
  uint64_t s;
} Rng;

static uint32_t rnd(Rng *r) {
  r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(r->s >> 33);
}

/* A file image (header, zero-filled tensor region, index, trailer) whose
 * index lists n tensors; no descriptor bytes (open reads none). Names are
 * unique; `unordered` lists the entries in a shuffled order. */
typedef struct Synth {
  uint8_t *p;
  size_t len;
  size_t ix;     /* index offset */
  size_t ix_len; /* index length */
} Synth;

static void put_name(Rng *r, uint32_t k, char *out, size_t *len) {
  /* a unique stem, then padding up to a random length of 1..80 bytes */
  size_t target = 1 + rnd(r) % 80;
  size_t n = (size_t)snprintf(out, 16, "%x", k);
  out[n++] = '.';
  while (n < target) {
    if (rnd(r) % 9 == 0 && n + 2 <= 80) { /* "é" */
      out[n++] = (char)0xC3;
      out[n++] = (char)0xA9;
    } else {
      out[n++] = (char)('a' + rnd(r) % 26);
    }
  }
  *len = n;
}

static Synth synth_ex(uint32_t n, uint64_t seed, bool unordered, bool crowded) {
  Rng r = {seed};
  uint64_t *desc = malloc((n ? n : 1) * sizeof *desc), *data = malloc((n ? n : 1) * sizeof *data);
  uint32_t *dlen = malloc((n ? n : 1) * sizeof *dlen);
  uint64_t *alen = malloc((n ? n : 1) * sizeof *alen);
  uint64_t cur = 64;
  for (uint32_t k = 0; k < n; k++) {
    desc[k] = cur;
    dlen[k] = 20 + 8 * (rnd(&r) % 20);
    uint64_t end = cur + dlen[k];
    if (crowded && k + 1 == n) { /* the last one far away: the others crowd few buckets */
      data[k] = (end + (32u << 20)) / A * A;
      alen[k] = 1;
    } else if (crowded || rnd(&r) % 3 == 0) { /* empty: data right after the descriptor */
      data[k] = end;
      alen[k] = 0;
    } else {
      data[k] = (end + A - 1) / A * A;
      alen[k] = 1 + rnd(&r) % 3000;
    }
    cur = (data[k] + alen[k] + 7) & ~7ull;
  }
  uint32_t *order = malloc((n ? n : 1) * sizeof *order);
  for (uint32_t k = 0; k < n; k++) order[k] = k;
  if (unordered)
    for (uint32_t k = n; k > 1; k--) {
      uint32_t j = rnd(&r) % k, t = order[k - 1];
      order[k - 1] = order[j];
      order[j] = t;
    }
  Synth s;
  s.ix = (size_t)cur;
  size_t cap = s.ix + 8 + (size_t)n * (34 + 80) + 40;
  s.p = calloc(1, cap);
  uint8_t *q = s.p + s.ix;
  hurray__st64(q, n);
  q += 8;
  for (uint32_t e = 0; e < n; e++) {
    uint32_t k = order[e];
    char name[96];
    size_t nl;
    put_name(&r, k, name, &nl);
    hurray__st16(q, (uint16_t)nl);
    memcpy(q + 2, name, nl);
    q += 2 + nl;
    hurray__st64(q, desc[k]);
    hurray__st32(q + 8, dlen[k]);
    hurray__st64(q + 12, data[k]);
    hurray__st64(q + 20, alen[k]);
    hurray__st32(q + 28, 0);
    q += 32;
  }
  s.ix_len = (size_t)(q - (s.p + s.ix));
  uint8_t *t = q;
  hurray__st64(t, s.ix);
  hurray__st64(t + 8, s.ix_len);
  hurray__st32(t + 28, hurray_crc32c(0, s.p + s.ix, s.ix_len));
  memcpy(t + 36, "HRRY", 4);
  s.len = (size_t)(t + 40 - s.p);
  memcpy(s.p, "HRRYFILE", 8);
  s.p[8] = 1;
  hurray__st32(s.p + 12, HURRAY_FILE_FLAG_HAS_INDEX_CRC32C);
  hurray__st32(s.p + 16, A);
  hurray__st64(s.p + 20, 64);
  hurray__st64(s.p + 28, UINT64_MAX);
  free(desc);
  free(data);
  free(dlen);
  free(alen);
  free(order);
  return s;
}

static Synth synth(uint32_t n, uint64_t seed, bool unordered) {
  return synth_ex(n, seed, unordered, false);
}

/* ---- the three ways of walking ------------------------------------------------ */

enum { FUSED, CRC_FIRST, SLOW, WAYS };
static const char *const way_name[WAYS] = {"fused", "crc first", "rule by rule"};

static HurrayStatus open_way(int way, const uint8_t *p, size_t len, HurrayFile **f,
                             HurrayError *e) {
  hurray__file_index_test_no_fused_crc(way != FUSED);
  hurray__file_index_test_slow_walk(way == SLOW);
  hurray_error_clear(e);
  HurrayStatus st = hurray_file_open_memory(p, len, NULL, NULL, NULL, f, e);
  hurray__file_index_test_no_fused_crc(false);
  hurray__file_index_test_slow_walk(false);
  return st;
}

/* Opens the image the three ways: same verdict, same error, same entries.
 * Returns the status. */
static HurrayStatus open_all_ways(const uint8_t *p, size_t len) {
  HurrayFile *f[WAYS] = {NULL};
  HurrayError e[WAYS];
  HurrayStatus st[WAYS];
  for (int w = 0; w < WAYS; w++) st[w] = open_way(w, p, len, &f[w], &e[w]);
  for (int w = 1; w < WAYS; w++) {
    if (st[w] != st[0] || e[w].offset != e[0].offset || strcmp(e[w].field, e[0].field) != 0 ||
        strcmp(e[w].message, e[0].message) != 0)
      fail_msg("%s: %s \"%s\" / %s: %s \"%s\"", way_name[0], hurray_status_name(st[0]),
               e[0].message, way_name[w], hurray_status_name(st[w]), e[w].message);
  }
  if (st[0] == HURRAY_OK) {
    uint64_t n = hurray_file_tensor_count(f[0]);
    for (int w = 1; w < WAYS; w++) {
      assert_int_equal(hurray_file_tensor_count(f[w]), n);
      for (uint64_t i = 0; i < n; i++) {
        HurrayFileEntry a, b;
        uint64_t pa, pb;
        assert_int_equal(hurray_file_entry(f[0], i, &a), HURRAY_OK);
        assert_int_equal(hurray_file_entry(f[w], i, &b), HURRAY_OK);
        assert_true(a.name == b.name && a.name_len == b.name_len);
        assert_true(a.descriptor_offset == b.descriptor_offset &&
                    a.descriptor_length == b.descriptor_length &&
                    a.data_offset == b.data_offset && a.data_length == b.data_length);
        assert_int_equal(f[0]->hashes[i], f[w]->hashes[i]);
        HurrayStatus sa = hurray_file_position(f[0], i, &pa);
        assert_int_equal(hurray_file_position(f[w], i, &pb), sa);
        if (sa == HURRAY_OK) assert_int_equal(pa, pb);
        else assert_int_equal(sa, HURRAY_ERR_INVALID_FILE); /* overlap out of file order */
      }
      HurrayError va, vb;
      HurrayStatus sa = hurray_file_verify(f[0], &va);
      assert_int_equal(hurray_file_verify(f[w], &vb), sa);
      if (sa != HURRAY_OK) assert_string_equal(va.message, vb.message);
    }
  } else {
    for (int w = 0; w < WAYS; w++) assert_null(f[w]);
  }
  for (int w = 0; w < WAYS; w++) hurray_file_close(&f[w]);
  return st[0];
}

/* Every name found at its own entry, while scanning and with the table;
 * the query hash (caller memory) matches the walk's. */
static void find_every_name(const uint8_t *p, size_t len) {
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open_memory(p, len, NULL, NULL, NULL, &f, &e), HURRAY_OK);
  uint64_t n = hurray_file_tensor_count(f);
  for (int pass = 0; pass < 2; pass++) {
    for (uint64_t i = 0; i < n; i++) {
      HurrayFileEntry en;
      assert_int_equal(hurray_file_entry(f, i, &en), HURRAY_OK);
      char *copy = malloc(en.name_len); /* exactly the name: a sanitizer sees any overread */
      memcpy(copy, en.name, en.name_len);
      assert_int_equal(hurray__file_name_hash((const uint8_t *)copy, (uint32_t)en.name_len),
                       f->hashes[i]);
      uint64_t idx = UINT64_MAX;
      HurrayStatus st = hurray_file_find(f, copy, en.name_len, &idx);
      free(copy);
      if (st != HURRAY_OK || idx != i)
        fail_msg("pass %d, index[%llu]: %s, %llu", pass, (unsigned long long)i,
                 hurray_status_name(st), (unsigned long long)idx);
    }
  }
  if (n > HURRAY__FILE_SCAN_FINDS) assert_int_not_equal(hurray__file_lookup_kind(f), -1);
  /* File order: a permutation, by strictly ascending descriptor offset. */
  uint8_t *seen = calloc(n ? n : 1, 1);
  uint64_t prev = 0;
  for (uint64_t pos = 0; pos < n; pos++) {
    uint64_t idx;
    HurrayFileEntry en;
    assert_int_equal(hurray_file_position(f, pos, &idx), HURRAY_OK);
    assert_true(idx < n && !seen[idx]);
    seen[idx] = 1;
    assert_int_equal(hurray_file_entry(f, idx, &en), HURRAY_OK);
    assert_true(pos == 0 || en.descriptor_offset > prev);
    prev = en.descriptor_offset;
  }
  free(seen);
  assert_int_equal(hurray_file_verify(f, &e), HURRAY_OK);
  hurray_file_close(&f);
}

static void test_walks_agree_on_valid_indexes(void **state) {
  (void)state;
  static const uint32_t counts[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 100, 1000, 4000};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    for (int unordered = 0; unordered < 2; unordered++) {
      Synth s = synth(counts[c], 1000 + c, unordered != 0);
      if (open_all_ways(s.p, s.len) != HURRAY_OK) fail_msg("n = %u", counts[c]);
      find_every_name(s.p, s.len);
      free(s.p);
    }
  }
}

/* File order when the starts crowd a few buckets of the sort (order.c): the
 * merge sort of a crowded bucket. */
static void test_file_order_crowded(void **state) {
  (void)state;
  Synth s = synth_ex(5000, 8080, true, true);
  assert_int_equal(open_all_ways(s.p, s.len), HURRAY_OK);
  find_every_name(s.p, s.len); /* checks file order too */
  /* One made to overlap the next one in the file (its descriptor 64 bytes
   * longer, its empty data after that): found, whichever way. */
  uint32_t k = 1234;
  while (hurray__ld64(tf_index_entry(s.p, s.len, k) + 20) != 0) k++; /* not the far one */
  uint8_t *e = tf_index_entry(s.p, s.len, k);
  hurray__st32(e + 8, hurray__ld32(e + 8) + 64);
  hurray__st64(e + 12, hurray__ld64(e + 12) + 64);
  tf_fix_crc(s.p, s.len);
  assert_int_equal(open_all_ways(s.p, s.len), HURRAY_OK);
  HurrayFile *f = NULL;
  HurrayError err;
  assert_int_equal(hurray_file_open_memory(s.p, s.len, NULL, NULL, NULL, &f, &err), HURRAY_OK);
  uint64_t idx;
  assert_int_equal(hurray_file_position(f, 0, &idx), HURRAY_ERR_INVALID_FILE);
  assert_int_equal(hurray_file_verify(f, &err), HURRAY_ERR_INVALID_FILE);
  char want[32];
  snprintf(want, sizeof want, "index[%u]", k);
  assert_non_null(strstr(err.message, want));
  hurray_file_close(&f);
  free(s.p);
}

static void test_walks_agree_on_corrupt_indexes(void **state) {
  (void)state;
  Rng r = {77};
  int rejected = 0, total = 0;
  for (int img = 0; img < 12; img++) {
    Synth s = synth(20 + 40 * (uint32_t)img, 5000 + (uint64_t)img, img % 3 == 2);
    uint8_t *m = malloc(s.len);
    for (int k = 0; k < 250; k++) {
      memcpy(m, s.p, s.len);
      /* one to three bytes of the index, set, bumped or cleared */
      int edits = 1 + (int)(rnd(&r) % 3);
      for (int d = 0; d < edits; d++) {
        size_t at = s.ix + rnd(&r) % s.ix_len;
        switch (rnd(&r) % 4) {
          case 0: m[at] = (uint8_t)rnd(&r); break;
          case 1: m[at]++; break;
          case 2: m[at]--; break;
          default: m[at] = 0; break;
        }
      }
      if (rnd(&r) % 8 != 0) tf_fix_crc(m, s.len); /* mostly behind the CRC */
      HurrayStatus st = open_all_ways(m, s.len);
      total++;
      rejected += st != HURRAY_OK;
    }
    free(m);
    free(s.p);
  }
  print_message("%d corrupt images, %d rejected, all three walks agreeing\n", total, rejected);
  assert_true(rejected > total / 2);
}

/* Entries accepted by the fast loop in file order are compared with the end
 * of the tensor region only once the loop stops; an earlier entry past it
 * must still be the one reported, before a later entry's broken rule. */
static void test_first_error_wins(void **state) {
  (void)state;
  Synth s = synth(10, 42, false);
  uint8_t *m = malloc(s.len);
  for (int later = 0; later < 2; later++) {
    memcpy(m, s.p, s.len);
    uint8_t *e3 = tf_index_entry(m, s.len, 3), *e6 = tf_index_entry(m, s.len, 6);
    hurray__st64(e3 + 20, hurray__ld64(e3 + 20) + (uint64_t)s.ix); /* data past the region */
    if (later) hurray__st32(e6 + 28, 1);                              /* flags */
    tf_fix_crc(m, s.len);
    for (int w = 0; w < WAYS; w++) {
      HurrayFile *f = NULL;
      HurrayError e;
      assert_int_equal(open_way(w, m, s.len, &f, &e), HURRAY_ERR_INVALID_FILE);
      assert_string_equal(e.field, "index[3].data_offset");
    }
  }
  /* The last entry past the region, nothing after it. */
  memcpy(m, s.p, s.len);
  uint8_t *e9 = tf_index_entry(m, s.len, 9);
  hurray__st64(e9 + 20, hurray__ld64(e9 + 20) + 8);
  tf_fix_crc(m, s.len);
  assert_int_equal(open_all_ways(m, s.len), HURRAY_ERR_INVALID_FILE);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open_memory(m, s.len, NULL, NULL, NULL, &f, &e),
                   HURRAY_ERR_INVALID_FILE);
  assert_string_equal(e.field, "index[9].data_offset");
  free(m);
  free(s.p);
}

/* A CRC mismatch is reported rather than any rule the damaged bytes break,
 * whichever way the walk goes. */
static void test_crc_wins(void **state) {
  (void)state;
  Synth s = synth(50, 9, false);
  uint8_t *m = malloc(s.len);
  for (size_t at = s.ix; at < s.ix + s.ix_len; at += 7) {
    memcpy(m, s.p, s.len);
    m[at] ^= 0x40;
    for (int w = 0; w < WAYS; w++) {
      HurrayFile *f = NULL;
      HurrayError e;
      assert_int_equal(open_way(w, m, s.len, &f, &e), HURRAY_ERR_CRC_MISMATCH);
      assert_string_equal(e.field, "index");
    }
  }
  free(m);
  free(s.p);
}

/* Start (name_length field) of index entry k of a synthetic image. */
static uint8_t *entry_at(uint8_t *m, size_t ix, uint32_t k) {
  uint8_t *q = m + ix + 8;
  for (uint32_t i = 0; i < k; i++) q += 34u + hurray__ld16(q);
  return q;
}

/* Duplicates among thousands of names of every length: found by the scans,
 * by the table, and by hurray_file_verify, with the same answer every time. */
static void test_duplicates_of_every_length(void **state) {
  (void)state;
  Synth s = synth(3000, 321, true);
  /* Entry 2500 takes the name of the first entry with the same length. */
  uint8_t *q = entry_at(s.p, s.ix, 2500);
  uint16_t nl = hurray__ld16(q);
  uint32_t a = 0;
  while (hurray__ld16(entry_at(s.p, s.ix, a)) != nl) a++;
  assert_true(a < 2500);
  memcpy(q + 2, entry_at(s.p, s.ix, a) + 2, nl);
  tf_fix_crc(s.p, s.len);
  assert_int_equal(open_all_ways(s.p, s.len), HURRAY_OK);
  HurrayFile *f = NULL;
  HurrayError e;
  assert_int_equal(hurray_file_open_memory(s.p, s.len, NULL, NULL, NULL, &f, &e), HURRAY_OK);
  HurrayFileEntry en, other;
  assert_int_equal(hurray_file_entry(f, a, &en), HURRAY_OK);
  assert_int_equal(hurray_file_entry(f, 2501, &other), HURRAY_OK);
  for (int k = 0; k < 2 * (int)HURRAY__FILE_SCAN_FINDS; k++) { /* scans, then the table */
    uint64_t idx;
    assert_int_equal(hurray_file_find(f, en.name, en.name_len, &idx), HURRAY_ERR_DUPLICATE_NAME);
    assert_int_equal(hurray_file_find(f, other.name, other.name_len, &idx), HURRAY_OK);
    assert_int_equal(idx, 2501);
  }
  assert_int_equal(hurray__file_lookup_kind(f), HURRAY__LOOKUP_HASH);
  assert_int_equal(hurray_file_verify(f, &e), HURRAY_ERR_DUPLICATE_NAME);
  assert_string_equal(e.field, "index[2500].name");
  assert_int_equal(e.offset, s.ix + (size_t)(q - (s.p + s.ix)));
  hurray_file_close(&f);
  free(s.p);
}

/* Out of memory while the lookup structure is built: lookups keep scanning
 * (and stay right), hurray_file_verify reports it, nothing leaks; with enough
 * memory the structure is built. Also through the hash flooding fallback. */
static void test_lookup_allocation_failures(void **state) {
  (void)state;
  Synth s = synth(300, 55, true);
  for (int flood = 0; flood < 2; flood++) {
    for (long n = 0;; n++) {
      tu_alloc_install();
      HurrayFile *f = NULL;
      HurrayError e;
      assert_int_equal(hurray_file_open_memory(s.p, s.len, NULL, NULL, NULL, &f, &e), HURRAY_OK);
      hurray__name_hash_test_constant(flood != 0);
      tu_fail_alloc_after(n);
      for (uint64_t k = 0; k < 3 * HURRAY__FILE_SCAN_FINDS; k++) {
        uint64_t want = (k * 37) % 300, idx;
        HurrayFileEntry en;
        assert_int_equal(hurray_file_entry(f, want, &en), HURRAY_OK);
        assert_int_equal(hurray_file_find(f, en.name, en.name_len, &idx), HURRAY_OK);
        assert_int_equal(idx, want);
      }
      HurrayStatus v = hurray_file_verify(f, &e);
      int kind = hurray__file_lookup_kind(f);
      tu_alloc_reset();
      hurray_file_close(&f);
      hurray__name_hash_test_constant(false);
      assert_int_equal(tu_alloc_live(), 0);
      if (v == HURRAY_OK) {
        assert_int_equal(kind, flood ? HURRAY__LOOKUP_PERM : HURRAY__LOOKUP_HASH);
        break;
      }
      assert_int_equal(v, HURRAY_ERR_OUT_OF_MEMORY); /* file order, or the lookups */
      assert_true(n < 30);
    }
  }
  hurray_set_allocator(NULL);
  free(s.p);
}

/* Threads racing to build the lookup structure and file order of one file
 * (run under ThreadSanitizer too): every answer right. */
typedef struct Racer {
  const HurrayFile *f;
  int failures;
} Racer;

static void *racer(void *arg) {
  Racer *r = arg;
  uint64_t n = hurray_file_tensor_count(r->f), prev = 0;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t i = (k * 7919) % n, idx, at;
    HurrayFileEntry en, pe;
    if (hurray_file_entry(r->f, i, &en) != HURRAY_OK ||
        hurray_file_find(r->f, en.name, en.name_len, &idx) != HURRAY_OK || idx != i ||
        hurray_file_position(r->f, k, &at) != HURRAY_OK ||
        hurray_file_entry(r->f, at, &pe) != HURRAY_OK || (k > 0 && pe.descriptor_offset <= prev))
      r->failures++;
    prev = pe.descriptor_offset;
  }
  return NULL;
}

static void test_concurrent_first_needs(void **state) {
  (void)state;
  Synth s = synth(2000, 99, true);
  for (int round = 0; round < 5; round++) {
    HurrayFile *f = NULL;
    HurrayError e;
    assert_int_equal(hurray_file_open_memory(s.p, s.len, NULL, NULL, NULL, &f, &e), HURRAY_OK);
    enum { T = 4 };
    pthread_t th[T];
    Racer r[T];
    for (int k = 0; k < T; k++) {
      r[k].f = f;
      r[k].failures = 0;
      assert_int_equal(pthread_create(&th[k], NULL, racer, &r[k]), 0);
    }
    for (int k = 0; k < T; k++) {
      pthread_join(th[k], NULL);
      assert_int_equal(r[k].failures, 0);
    }
    assert_int_equal(hurray_file_verify(f, &e), HURRAY_OK);
    hurray_file_close(&f);
  }
  free(s.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_walks_agree_on_valid_indexes),
      cmocka_unit_test(test_file_order_crowded),
      cmocka_unit_test(test_walks_agree_on_corrupt_indexes),
      cmocka_unit_test(test_first_error_wins),
      cmocka_unit_test(test_crc_wins),
      cmocka_unit_test(test_duplicates_of_every_length),
      cmocka_unit_test(test_lookup_allocation_failures),
      cmocka_unit_test(test_concurrent_first_needs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
