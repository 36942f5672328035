/*
 * Bit-exact element access (memory-layout.md § Element Address Computation,
 * element-types.md § Sub-Byte Packing) and buffer views shared by the copy,
 * lookup and index-check code.
 */
#include "layout/layout_internal.h"

bool hurray__elem_locate(const HurrayElemFormat *fmt, uint64_t size, uint64_t byte_offset,
                         int64_t off, uint64_t *start) {
  int64_t first, last;
  if (!hurray__elem_span(fmt, off, &first, &last)) return false;
  if (first < 0) {
    uint64_t back = (uint64_t)(-(first + 1)) + 1;
    if (back > byte_offset) return false;
    *start = byte_offset - back;
  } else if (hurray__add_overflow_u64(byte_offset, (uint64_t)first, start)) {
    return false;
  }
  uint64_t len = (uint64_t)(last - first) + 1;
  return *start < size && size - *start >= len;
}

bool hurray__elem_read(const HurrayElemFormat *fmt, const uint8_t *buf, uint64_t size,
                       uint64_t byte_offset, int64_t off, uint8_t *out) {
  uint64_t start;
  if (fmt->bits >= 8 || !hurray__elem_locate(fmt, size, byte_offset, off, &start)) return false;
  const uint8_t *p = buf + start;
  if (fmt->bits == 6) {
    uint32_t g = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    int64_t j = off - hurray__floor_div_i64(off, 4) * 4;
    out[0] = (uint8_t)((g >> (6 * j)) & 0x3Fu);
  } else {
    int64_t per = 8 / (int64_t)fmt->bits;
    int64_t j = off - hurray__floor_div_i64(off, per) * per;
    out[0] = (uint8_t)((p[0] >> (j * (int64_t)fmt->bits)) & ((1u << fmt->bits) - 1u));
  }
  return true;
}

void hurray__elem_write(const HurrayElemFormat *fmt, uint8_t *dst, uint64_t e,
                        const uint8_t *val) {
  if (fmt->bits == 6) {
    uint8_t *p = dst + (e / 4) * 3;
    unsigned shift = (unsigned)(e % 4) * 6;
    uint32_t g = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    g = (g & ~(0x3Fu << shift)) | ((uint32_t)(val[0] & 0x3Fu) << shift);
    p[0] = (uint8_t)g;
    p[1] = (uint8_t)(g >> 8);
    p[2] = (uint8_t)(g >> 16);
  } else {
    uint64_t per = 8 / fmt->bits;
    unsigned shift = (unsigned)(e % per) * fmt->bits;
    unsigned mask = ((1u << fmt->bits) - 1u) << shift;
    uint8_t *p = dst + e / per;
    *p = (uint8_t)((*p & ~mask) | (((unsigned)val[0] << shift) & mask));
  }
}

HurrayStatus hurray__buf_views(const HurrayDescriptorFields *f, const void *const *buffers,
                               const uint64_t *sizes, HurrayBufView *views, HurrayError *err) {
  char path[24];
  if (f->buffer_count > HURRAY_MAX_BUFFERS)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "buffer_count",
                        "%u exceeds %u", f->buffer_count, HURRAY_MAX_BUFFERS);
  if (f->buffer_count > 0 && buffers == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "buffers", "NULL");
  if (sizes == NULL && f->buffer_count > 0 && f->buffers == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "sizes",
                        "NULL sizes need the descriptor's buffer handles");
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    views[i].p = (const uint8_t *)buffers[i];
    views[i].size = sizes != NULL ? sizes[i] : f->buffers[i].byte_size;
    if (views[i].p == NULL && views[i].size != 0)
      return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET,
                          hurray__path(path, sizeof path, "buffers[%u]", i),
                          "NULL pointer for a buffer of %llu bytes",
                          (unsigned long long)views[i].size);
  }
  return HURRAY_OK;
}

HurrayStatus hurray__idx_read(const HurrayBufView *v, uint32_t which, uint64_t k, uint32_t width,
                              const char *name, uint64_t *out, HurrayError *err) {
  const HurrayBufView *b = &v[which];
  char path[24];
  if (k >= b->size / width)
    return hurray__fail(err, HURRAY_ERR_BUFFER_SIZE, HURRAY_NO_OFFSET,
                        hurray__path(path, sizeof path, "buffers[%u]", which),
                        "%s[%llu] is past the end of buffer %u (%llu bytes)", name,
                        (unsigned long long)k, which, (unsigned long long)b->size);
  const uint8_t *p = b->p + k * width;
  *out = width == 8 ? hurray__ld64(p) : hurray__ld32(p);
  return HURRAY_OK;
}
