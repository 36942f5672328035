/*
 * Filling a buffer with one element (include/hurray/convert.h, "ranges"):
 * n copies of a value, and one diagonal of a matrix (on zeroed memory, an
 * identity-like matrix), for the Python package's hurray.ones / full (and their *_like
 * forms) and hurray.eye, and for any C caller. Elements are packed, bool
 * LSB-first with the padding bits of its last byte zero.
 */
#include "hurray/convert.h"

#include <string.h>

#include "hurray/dtype.h"
#include "internal/common.h"

/* The element size of `tag` in bytes (bool: 0, bit-packed), or a status. */
static HurrayStatus size_of(uint8_t tag, unsigned *size, HurrayError *err) {
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  if (info == NULL)
    return hurray__fail(err, HURRAY_ERR_INVALID_TYPE, HURRAY_NO_OFFSET, "type_tag",
                        "0x%02x names no element type", tag);
  if (tag == HURRAY_DTYPE_BOOL) {
    *size = 0;
    return HURRAY_OK;
  }
  if (info->bit_width < 8 || info->bit_width % 8 != 0 || 16 % (info->bit_width / 8) != 0)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, HURRAY_NO_OFFSET, "type_tag",
                        "%s elements are not whole bytes dividing 16: fill with "
                        "hurray_value_set_code",
                        info->name);
  *size = info->bit_width / 8u;
  return HURRAY_OK;
}

/* dst has room for n elements (bool: bits). */
static HurrayStatus room(const void *value, void *dst, uint64_t dst_size, uint64_t n,
                         unsigned size, HurrayError *err) {
  if (value == NULL || (n > 0 && dst == NULL))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                        value == NULL ? "value" : "dst", "is NULL");
  uint64_t need = size == 0 ? n / 8u + (n % 8u != 0) : n;
  if ((size > 0 && n > dst_size / size) || (size == 0 && need > dst_size))
    return hurray__fail(err, HURRAY_ERR_BUFFER_TOO_SMALL, HURRAY_NO_OFFSET, "dst_size",
                        "%llu bytes hold fewer than %llu elements",
                        (unsigned long long)dst_size, (unsigned long long)n);
  return HURRAY_OK;
}

/* nbytes at dst from the 16-byte pattern pat, 16 bytes at a time from
 * registers: the buffer is only written, never read back (a doubling memcpy
 * reads as much as it writes). One byte repeated is a memset. */
static void store_pattern(uint8_t *dst, uint64_t nbytes, const uint8_t *pat) {
  bool uniform = true;
  for (unsigned i = 1; i < 16; i++) uniform = uniform && pat[i] == pat[0];
  if (uniform) {
    memset(dst, pat[0], (size_t)nbytes);
    return;
  }
  uint64_t w0, w1;
  memcpy(&w0, pat, 8);
  memcpy(&w1, pat + 8, 8);
  uint64_t n16 = nbytes / 16u;
  uint8_t *p = dst;
  for (uint64_t i = 0; i < n16; i++, p += 16) {
    memcpy(p, &w0, 8);
    memcpy(p + 8, &w1, 8);
  }
  memcpy(p, pat, (size_t)(nbytes - 16u * n16));
}

HurrayStatus hurray_fill_value(uint8_t type_tag, uint64_t n, const void *value, void *dst,
                               uint64_t dst_size, HurrayError *err) {
  unsigned size = 0; /* set by size_of on success; GCC 14 -O3 cannot tell */
  HURRAY_TRY(size_of(type_tag, &size, err));
  HURRAY_TRY(room(value, dst, dst_size, n, size, err));
  if (n == 0) return HURRAY_OK;
  const uint8_t *v = value;
  uint8_t pat[16], *out = dst;
  if (size == 0) { /* bool: whole bytes, then the last one's padding bits zero */
    memset(pat, v[0] != 0 ? 0xFF : 0x00, sizeof pat);
    uint64_t nbytes = n / 8u + (n % 8u != 0);
    store_pattern(out, nbytes, pat);
    if (n % 8u != 0) out[nbytes - 1] = (uint8_t)(out[nbytes - 1] & ((1u << (n % 8u)) - 1u));
    return HURRAY_OK;
  }
  for (unsigned i = 0; i < 16; i++) pat[i] = v[i % size];
  store_pattern(out, n * size, pat);
  return HURRAY_OK;
}

HurrayStatus hurray_fill_eye(uint8_t type_tag, uint64_t rows, uint64_t cols, int64_t k,
                             const void *value, void *dst, uint64_t dst_size,
                             HurrayError *err) {
  unsigned size = 0;
  HURRAY_TRY(size_of(type_tag, &size, err));
  if (cols != 0 && rows > UINT64_MAX / cols)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "rows",
                        "%llu x %llu elements overflow 64 bits", (unsigned long long)rows,
                        (unsigned long long)cols);
  uint64_t n = rows * cols;
  HURRAY_TRY(room(value, dst, dst_size, n, size, err));
  if (n == 0) return HURRAY_OK;
  uint8_t *out = dst;
  /* diagonal k starts at (0, k) when k >= 0, at (-k, 0) below; one beyond
   * the matrix has no element */
  bool upper = k >= 0;
  uint64_t off = upper ? (uint64_t)k : (uint64_t)0 - (uint64_t)k;
  uint64_t i0 = 0, i1 = 0;
  if (upper && off < cols) {
    i1 = rows < cols - off ? rows : cols - off;
  } else if (!upper && off < rows) {
    i0 = off;
    i1 = rows - off < cols ? rows : cols + off;
  }
  const uint8_t *v = value;
  for (uint64_t i = i0; i < i1; i++) {
    uint64_t idx = i * cols + (upper ? i + off : i - off);
    if (size == 0) {
      uint8_t bit = (uint8_t)(1u << (idx % 8u));
      out[idx / 8u] = (uint8_t)(v[0] != 0 ? out[idx / 8u] | bit : out[idx / 8u] & ~bit);
    } else {
      memcpy(out + idx * size, v, size);
    }
  }
  return HURRAY_OK;
}
