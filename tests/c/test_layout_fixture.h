/* Descriptor-fields builder shared by the layout and composite tests. */
#ifndef HURRAY_TEST_LAYOUT_FIXTURE_H
#define HURRAY_TEST_LAYOUT_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "internal/validate.h"

typedef struct Fx {
  HurrayDescriptorFields f;
  uint64_t shape[16];
  HurrayBufferHandle bufs[32];
  HurrayOffsets o;
  HurrayError e;
} Fx;

/* rank/shape, n buffers of the given sizes (NULL: all 0). */
static inline void fx_init(Fx *x, uint8_t type, uint8_t layout, uint32_t rank,
                           const uint64_t *shape, uint32_t nbuf, const uint64_t *sizes) {
  memset(x, 0, sizeof *x);
  x->f.type_tag = type;
  x->f.layout.tag = layout;
  x->f.rank = rank;
  for (uint32_t k = 0; k < rank; k++) x->shape[k] = shape[k];
  x->f.shape = x->shape;
  x->f.buffer_count = nbuf;
  for (uint32_t i = 0; i < nbuf; i++) {
    x->bufs[i].byte_size = sizes ? sizes[i] : 0;
    x->bufs[i].alignment = 64;
  }
  x->f.buffers = x->bufs;
  hurray_error_clear(&x->e);
}

/* Kept out of line: once inlined, gcc -O3 follows the union into layouts
 * whose payload is not tiled and reports a bogus -Warray-bounds. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static uint64_t fx_tiled_len(const HurrayTiledLevel *lv, uint32_t depth, uint64_t r) {
  uint64_t n = 0;
  for (uint32_t L = 0; L < depth; L++)
    n += 8 * r + 4 + (lv[L].outer_layout == 3 ? 8 * r : 0) + (lv[L].inner_layout == 3 ? 8 * r : 0);
  return n;
}

/* Encoded length of a layout payload (metadata.md / layouts/\*.md). */
static inline uint64_t fx_payload_len(const HurrayDescriptorFields *f) {
  uint64_t r = f->rank;
  switch (f->layout.tag) {
    case HURRAY_LAYOUT_STRIDED: return 8 * r;
    case HURRAY_LAYOUT_TILED:
      return fx_tiled_len(f->layout.u.tiled.levels, f->layout.u.tiled.depth, r);
    case HURRAY_LAYOUT_MORTON: return 4 * r;
    case HURRAY_LAYOUT_COO:
    case HURRAY_LAYOUT_CSR:
    case HURRAY_LAYOUT_CSC: return 16;
    case HURRAY_LAYOUT_CSF: return 16 + 4 * r;
    case HURRAY_LAYOUT_BLOCK_PAGED: return 32;
    case HURRAY_LAYOUT_COMPOSITE:
    case HURRAY_LAYOUT_HILBERT: return 8;
    default: return 0;
  }
}

/* Test-local stand-in for hurray__descriptor_offsets (written by the codec). */
static inline void fx_offsets(const HurrayDescriptorFields *f, HurrayOffsets *o) {
  o->shape = 20;
  o->byte_offset = 20 + 8ull * f->rank;
  o->layout = o->byte_offset + 8;
  o->buffer_table = o->layout + fx_payload_len(f);
  o->quantization = o->buffer_table + 1 + 16ull * f->buffer_count;
  o->shard = o->quantization + (f->quantization ? 4 + 4 : 0);
  o->statistics = o->shard + (f->shard ? 16ull * f->rank : 0);
  o->extension_type = o->statistics + (f->statistics ? 72 : 0);
  o->composite_member = o->extension_type + (f->extension_type ? 20 : 0);
  o->trailing = o->composite_member + (f->composite_member ? 16 : 0);
  o->end = o->trailing;
}

static inline HurrayStatus fx_validate(Fx *x, uint32_t options) {
  fx_offsets(&x->f, &x->o);
  hurray_error_clear(&x->e);
  return hurray__layout_validate(&x->f, &x->o, options, &x->e);
}

/* Asserts status, field path and (unless ~0) byte offset of a failure. */
#define FX_REJECT(x, opts, st, fieldstr, off)                                \
  do {                                                                       \
    HurrayStatus fx_st_ = fx_validate((x), (opts));                          \
    if (fx_st_ != (st)) print_error("got %d: %s\n", fx_st_, (x)->e.message); \
    assert_int_equal(fx_st_, (st));                                          \
    assert_int_equal((x)->e.status, (st));                                   \
    assert_string_equal((x)->e.field, (fieldstr));                           \
    if ((uint64_t)(off) != ~0ull) assert_int_equal((x)->e.offset, (off));    \
  } while (0)

#define FX_ACCEPT(x, opts)                                                   \
  do {                                                                       \
    HurrayStatus fx_st_ = fx_validate((x), (opts));                          \
    if (fx_st_ != HURRAY_OK) print_error("rejected: %s\n", (x)->e.message);  \
    assert_int_equal(fx_st_, HURRAY_OK);                                     \
  } while (0)

/* Little-endian u64 array writer for index buffers. */
static inline void fx_put64(uint8_t *dst, const uint64_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (int b = 0; b < 8; b++) dst[8 * i + (size_t)b] = (uint8_t)(v[i] >> (8 * b));
}
static inline void fx_put32(uint8_t *dst, const uint32_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (int b = 0; b < 4; b++) dst[4 * i + (size_t)b] = (uint8_t)(v[i] >> (8 * b));
}

#endif
