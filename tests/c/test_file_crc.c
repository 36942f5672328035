/* CRC-32C: check values, chaining, and the hardware and table paths agreeing. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "internal/file.h"

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1ul << 7) /* the Linux arm64 ABI bit */
#endif
#endif

/* Bit-at-a-time reference, straight from the definition. */
static uint32_t crc_ref(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

static void test_check_values(void **state) {
  (void)state;
  /* The catalogue check value and the iSCSI (RFC 3720 B.4) vectors. */
  assert_int_equal(hurray_crc32c(0, "123456789", 9), 0xE3069283u);
  assert_int_equal(hurray__crc32c_sw(0, "123456789", 9), 0xE3069283u);
  uint8_t b[32];
  memset(b, 0, sizeof b);
  assert_int_equal(hurray_crc32c(0, b, 32), 0x8A9136AAu);
  memset(b, 0xFF, sizeof b);
  assert_int_equal(hurray_crc32c(0, b, 32), 0x62A8AB43u);
  for (int i = 0; i < 32; i++) b[i] = (uint8_t)i;
  assert_int_equal(hurray_crc32c(0, b, 32), 0x46DD794Eu);
  for (int i = 0; i < 32; i++) b[i] = (uint8_t)(31 - i);
  assert_int_equal(hurray_crc32c(0, b, 32), 0x113FDB5Cu);
  /* Empty input leaves the running value alone; NULL with length 0 is fine. */
  assert_int_equal(hurray_crc32c(0, NULL, 0), 0u);
  assert_int_equal(hurray_crc32c(0x12345678u, b, 0), 0x12345678u);
}

/* Whether the CPU running the test has CRC-32C instructions, asked
 * independently of the library; -1 where this test does not know how. */
static int cpu_has_crc32c(void) {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") ? 1 : 0;
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0 ? 1 : 0;
#else
  return -1;
#endif
}

/* Where the compiler can reach them (GCC or Clang on x86-64, and on aarch64
 * Linux whatever -march says), the library uses the CPU's CRC-32C
 * instructions exactly when the CPU has them, so test_paths_agree compares
 * the hardware path with the table path wherever there is one. */
static void test_hw_used_when_cpu_has_it(void **state) {
  (void)state;
  int has = cpu_has_crc32c();
  print_message("CPU CRC-32C instructions: %s; library hardware path: %s\n",
                has < 0 ? "unknown" : has ? "yes" : "no",
                hurray__crc32c_hw_available() ? "yes" : "no");
  if (has < 0) skip();
  assert_int_equal(hurray__crc32c_hw_available(), has == 1);
}

static void test_paths_agree(void **state) {
  (void)state;
  /* Lengths across every path of the hardware code: unaligned heads, the
   * 8-byte loop, the three-stream blocks (3 x 4096) and their tails. */
  size_t max = 3 * 4096 * 3 + 100;
  uint8_t *buf = malloc(max + 16);
  srand(1234);
  for (size_t i = 0; i < max + 16; i++) buf[i] = (uint8_t)rand();
  bool hw = hurray__crc32c_hw_available();
  print_message("hardware CRC-32C: %s\n", hw ? "yes" : "no (table path only)");
  static const size_t lens[] = {0, 1, 7, 8, 9, 63, 64, 65, 4095, 4096, 12287, 12288, 12289,
                                12295, 24576, 24577, 3 * 4096 * 3, 3 * 4096 * 3 + 99};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    for (size_t off = 0; off < 9; off++) {
      size_t n = lens[li];
      uint32_t want = crc_ref(buf + off, n);
      assert_int_equal(hurray__crc32c_sw(0, buf + off, n), want);
      assert_int_equal(hurray_crc32c(0, buf + off, n), want);
      if (hw) assert_int_equal(hurray__crc32c_hw(0, buf + off, n), want);
    }
  }
  /* Random lengths and offsets. */
  for (int r = 0; r < 300; r++) {
    size_t off = (size_t)rand() % 16, n = (size_t)rand() % max;
    uint32_t sw = hurray__crc32c_sw(0, buf + off, n);
    if (hw) assert_int_equal(hurray__crc32c_hw(0, buf + off, n), sw);
    assert_int_equal(hurray_crc32c(0, buf + off, n), sw);
  }
  free(buf);
}

static void test_chaining(void **state) {
  (void)state;
  size_t n = 50000;
  uint8_t *buf = malloc(n);
  for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(i * 131 + 7);
  uint32_t whole = hurray_crc32c(0, buf, n);
  assert_int_equal(whole, crc_ref(buf, n));
  static const size_t cuts[] = {1, 5, 4096, 12288, 12289, 30000, 49999};
  for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
    size_t k = cuts[c];
    assert_int_equal(hurray_crc32c(hurray_crc32c(0, buf, k), buf + k, n - k), whole);
    assert_int_equal(hurray__crc32c_sw(hurray__crc32c_sw(0, buf, k), buf + k, n - k), whole);
    if (hurray__crc32c_hw_available())
      assert_int_equal(hurray__crc32c_hw(hurray__crc32c_hw(0, buf, k), buf + k, n - k), whole);
  }
  /* One flipped bit changes the value. */
  buf[777] ^= 0x10;
  assert_int_not_equal(hurray_crc32c(0, buf, n), whole);
  free(buf);
}

/* The raw register (no inversions), bit by bit. */
static uint32_t raw_ref(uint32_t c, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return c;
}

static void test_shift(void **state) {
  (void)state;
  /* shift(reg, n) is the register after n zero bytes... */
  static const size_t lens[] = {0, 1, 2, 7, 8, 63, 64, 65, 1000, 4096, 12345, 70000};
  uint8_t *zeros = calloc(70000, 1);
  srand(99);
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    for (int r = 0; r < 4; r++) {
      uint32_t reg = r == 0 ? 0xFFFFFFFFu : r == 1 ? 1u : (uint32_t)rand() * 2654435761u;
      assert_int_equal(hurray__crc32c_shift(reg, lens[li]), raw_ref(reg, zeros, lens[li]));
    }
  }
  free(zeros);
  /* ...so two registers merge: raw(A|B) = shift(raw(A), |B|) ^ raw0(B). */
  uint8_t buf[3000];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)rand();
  for (size_t cut = 0; cut <= sizeof buf; cut += 137) {
    uint32_t a = raw_ref(0xFFFFFFFFu, buf, cut), b = raw_ref(0, buf + cut, sizeof buf - cut);
    assert_int_equal(hurray__crc32c_shift(a, sizeof buf - cut) ^ b,
                     raw_ref(0xFFFFFFFFu, buf, sizeof buf));
  }
  /* Large counts (square and multiply over all 64 bits of n). */
  assert_int_equal(hurray__crc32c_shift(0, UINT64_MAX), 0u);
  uint32_t x = hurray__crc32c_shift(0x12345678u, (uint64_t)1 << 40);
  assert_int_equal(hurray__crc32c_shift(hurray__crc32c_shift(0x12345678u, (uint64_t)1 << 39),
                                        (uint64_t)1 << 39),
                   x);
}

/* Every engine this CPU has (and NONE), every length up to 700 and random
 * ones up to 200 KB, at every alignment, with bursts called any number of
 * times: the same CRC as the table code. This also checks the folding
 * constants of CLMUL512 (each distance shows for some length). */
static void test_bursts_every_engine(void **state) {
  (void)state;
  const size_t max = 200000;
  uint8_t *buf = malloc(max + 64);
  srand(4321);
  for (size_t i = 0; i < max + 64; i++) buf[i] = (uint8_t)rand();
  static const int kinds[] = {HURRAY__CRC_BURSTS_NONE, HURRAY__CRC_BURSTS_STREAMS3,
                              HURRAY__CRC_BURSTS_CLMUL512};
  static const char *const names[] = {"none", "streams3", "clmul512"};
  print_message("CRC-32C bursts: best engine here is %s\n", names[hurray__crc32c_bursts_best()]);
  for (size_t k = 0; k < 3; k++) {
    if (kinds[k] != HURRAY__CRC_BURSTS_NONE && !hurray__crc32c_bursts_available(kinds[k])) {
      print_message("  %s: not on this CPU, skipped\n", names[k]);
      continue;
    }
    for (int r = 0; r < 1400 + 60; r++) {
      size_t n = r < 1400 ? (size_t)r / 2 : (size_t)rand() % max;
      size_t off = (size_t)rand() % 64;
      uint32_t want = hurray__crc32c_sw(0, buf + off, n);
      HurrayCrcBursts c;
      hurray__crc32c_bursts_init(&c, kinds[k], buf + off, n);
      int calls = rand() % (int)(n / 64 + 3);
      for (int i = 0; i < calls; i++) c.burst(&c);
      uint32_t got = hurray__crc32c_bursts_finish(&c);
      if (got != want)
        fail_msg("%s: length %zu at +%zu after %d bursts: 0x%08X, want 0x%08X", names[k], n, off,
                 calls, got, want);
    }
  }
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_values),
      cmocka_unit_test(test_hw_used_when_cpu_has_it),
      cmocka_unit_test(test_paths_agree),
      cmocka_unit_test(test_chaining),
      cmocka_unit_test(test_shift),
      cmocka_unit_test(test_bursts_every_engine),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
