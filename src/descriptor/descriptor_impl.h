/*
 * Internals of the descriptor codec (src/descriptor). Never installed.
 *
 * A HurrayDescriptor is one allocation: this header struct followed by an
 * arena holding every variable-length array (shape, layout arrays, buffer
 * handles, quantization bytes, shard arrays, trailing bytes). The public
 * HurrayDescriptorFields view `f` points into that arena and at the embedded
 * section structs, so reading a descriptor never allocates.
 */
#ifndef HURRAY_DESCRIPTOR_IMPL_H
#define HURRAY_DESCRIPTOR_IMPL_H

#include "internal/validate.h"
#include "internal/handles.h"


/* Sizes of the fixed-size optional sections on the wire. */
#define HURRAY__STATISTICS_LEN 72u
#define HURRAY__EXTENSION_TYPE_LEN 20u
#define HURRAY__COMPOSITE_MEMBER_LEN 16u

struct HurrayDescriptor {
  uint64_t magic;        /* HURRAY__MAGIC_DESCRIPTOR while the handle is valid
                          * (first field: internal/handles.h checks it) */
  uint64_t encoded_len;  /* exact wire length (== descriptor_length) */
  HurrayDescriptorFields f;
  HurrayQuantization quant;
  HurrayShard shard;
  HurrayStatistics stats;
  HurrayExtensionType ext;
  HurrayCompositeMember member;
  uint64_t arena[];      /* variable-length arrays, 8-byte aligned each */
};

/* Bump allocator over the arena of one descriptor. */
typedef struct HurrayArena {
  uint8_t *base;
  size_t used;
  size_t cap;
} HurrayArena;

/* Takes n bytes aligned to 8; NULL if the arena is exhausted (a bug: arenas
 * are sized before they are filled). n == 0 returns NULL too. */
static inline void *hurray__arena_take(HurrayArena *a, size_t n) {
  size_t at = (a->used + 7u) & ~(size_t)7u;
  if (n == 0 || at > a->cap || n > a->cap - at) return NULL;
  a->used = at + n;
  return a->base + at;
}

/* Bytes an array of n bytes may need in an arena (data + worst-case padding). */
static inline bool hurray__arena_add(size_t *total, uint64_t n) {
  if (n == 0) return true;
  if (n > SIZE_MAX - 8u || *total > SIZE_MAX - 8u - (size_t)n) return false;
  *total += (size_t)n + 8u;
  return true;
}

static inline bool hurray__desc_live(const HurrayDescriptor *d) {
  /* Debug builds also consult the graveyard of destroyed handles, which
   * never reads freed memory (internal/handles.h). */
  return d != NULL && hurray__handle_check(d, HURRAY__MAGIC_DESCRIPTOR) == HURRAY_OK;
}

/* True for a layout tag whose payload this library cannot parse, kept as
 * opaque bytes in permissive mode (reserved / unassigned tags). */
static inline bool hurray__layout_is_opaque(uint8_t tag) {
  /* == (hurray_layout_tag_kind(tag) == HURRAY_TAG_RESERVED), inlined: hot. */
  return tag >= 0x0C && tag <= 0xEF && tag != HURRAY_LAYOUT_HILBERT;
}

/* Length of the layout payload of `l` on the wire. Robust against
 * unvalidated input (depth clamped, NULL-safe). */
HURRAY_INTERNAL uint64_t hurray__layout_payload_len(const HurrayLayout *l, uint32_t rank);

/* Writes the encoding of f (offsets from hurray__descriptor_offsets) into
 * out[0 .. o->end). f must have passed hurray__descriptor_check. */
HURRAY_INTERNAL void hurray__descriptor_write(const HurrayDescriptorFields *f,
                                              const HurrayOffsets *o, uint8_t *out);

/*
 * The codec's share of validation (see internal/validate.h), then the layout
 * and quantization rules. Shared by decode and from_fields. `f->flags` must
 * be the final flags; `f->quantization`, when set, must have been produced by
 * hurray__quant_parse. Fills *o (may be NULL) with the offsets.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__descriptor_check(
    const HurrayDescriptorFields *f, uint32_t options, HurrayOffsets *o, HurrayError *err);

/* The header rules the parser applies before reading further (as the
 * reference does): reserved flag bits (strict) and the type tag domain. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__check_flags_and_type(
    uint32_t flags, uint8_t type_tag, uint32_t options, HurrayError *err);

/* Internal option bit for hurray__descriptor_check: the parser already
 * applied hurray__check_flags_and_type. Never passed on to other modules. */
#define HURRAY__HEADER_CHECKED 0x80000000u

/* Copies already-validated fields into one new allocation. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__descriptor_materialize(
    const HurrayDescriptorFields *f, uint64_t encoded_len, HurrayDescriptor **out,
    HurrayError *err);

/* The parser behind decode, decode_ex and walk. `visit` may be NULL. */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__descriptor_parse(
    const uint8_t *bytes, uintptr_t len, uint32_t options, HurrayFieldVisitor visit, void *ctx,
    HurrayDescriptor **out, HurrayError *err);

/* Value equality of two field views that passed hurray__descriptor_check
 * (equal iff their encodings are equal). */
HURRAY_INTERNAL bool hurray__fields_equal(const HurrayDescriptorFields *a,
                                          const HurrayDescriptorFields *b);

/* Short names used by the walker and error messages. */
HURRAY_INTERNAL const char *hurray__tag_kind_word(HurrayTagKind k);

#endif /* HURRAY_DESCRIPTOR_IMPL_H */
