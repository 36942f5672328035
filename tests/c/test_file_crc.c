/* CRC-32C: check values, chaining, and the hardware and table paths agreeing. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "internal/file.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_values),
      cmocka_unit_test(test_paths_agree),
      cmocka_unit_test(test_chaining),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
