/*
 * hurray/descriptor.h - the tensor descriptor (spec: docs/spec/metadata.md;
 * docs/internals/decisions.md § Descriptor encoding, § Strictness).
 *
 * Wire order: fixed header (20) | shape u64[rank] | byte_offset u64 | layout
 * payload | buffer table | [quantization] | [shard] | [statistics] |
 * [extension type] | [composite member] | [trailing bytes of a newer minor].
 *
 * A HurrayDescriptor is immutable. Obtain one by decoding bytes
 * (hurray_descriptor_decode*) or by validating a HurrayDescriptorFields that
 * you filled in field by field (hurray_descriptor_from_fields). Read it with
 * the getters or as a whole with hurray_descriptor_fields(). Encoding is
 * deterministic: decode then encode gives back the same bytes.
 */
#ifndef HURRAY_DESCRIPTOR_H
#define HURRAY_DESCRIPTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/device.h"
#include "hurray/dtype.h"
#include "hurray/export.h"
#include "hurray/layout.h"
#include "hurray/quant.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HURRAY_DESCRIPTOR_MAGIC "HRRY"
#define HURRAY_DESCRIPTOR_VERSION_MAJOR 1u
#define HURRAY_DESCRIPTOR_VERSION_MINOR 0u
#define HURRAY_DESCRIPTOR_HEADER_LEN 20u
#define HURRAY_BUFFER_HANDLE_LEN 16u
#define HURRAY_MAX_BUFFERS 255u

/* Descriptor flags (header bytes 10-13). */
#define HURRAY_FLAG_HAS_QUANTIZATION 0x01u
#define HURRAY_FLAG_HAS_SHARD 0x02u
#define HURRAY_FLAG_HAS_EXTENSION_TYPE 0x04u
#define HURRAY_FLAG_HAS_STATISTICS 0x08u
#define HURRAY_FLAG_HAS_COMPOSITE_MEMBER 0x10u
#define HURRAY_FLAGS_KNOWN 0x1Fu

/* Statistics computed_mask bits. */
#define HURRAY_STAT_NNZ_VALID 0x01u
#define HURRAY_STAT_SPARSITY_VALID 0x02u
#define HURRAY_STAT_VALUE_RANGE_VALID 0x04u
#define HURRAY_STAT_VALUE_STATS_VALID 0x08u
#define HURRAY_STAT_NM_SPARSITY_VALID 0x10u
#define HURRAY_STAT_NAN_INF_VALID 0x20u
#define HURRAY_STAT_KNOWN 0x3Fu

/* Composite member roles. */
#define HURRAY_MEMBER_ROLE_CORRECTION 0x00u
#define HURRAY_MEMBER_ROLE_BASE 0x01u

/* Decode / validation options (bit set). */
#define HURRAY_DECODE_STRICT 0x0u
/* Relay mode: unknown and reserved tags (type, layout, scheme, device, memory
 * class) and reserved flag bits are kept; bytes that cannot be interpreted are
 * carried verbatim so that encode reproduces the input exactly. Semantic
 * checks that need the unknown meaning are skipped. */
#define HURRAY_DECODE_PERMISSIVE 0x1u

/* One buffer handle of the buffer table (16 bytes on the wire). */
typedef struct HurrayBufferHandle {
  uint64_t byte_size;   /* 0 = empty buffer */
  uint32_t alignment;   /* power of two; >= 64 unless byte_size is 0 */
  uint8_t device_tag;   /* HURRAY_DEVICE_* or private */
  uint8_t sync_mode;    /* HURRAY_SYNC_*; CPU buffers are producer-synced */
  uint8_t memory_class; /* HURRAY_MEMORY_* or private */
  uint8_t reserved;     /* must be 0 */
} HurrayBufferHandle;

/* Shard section: both arrays have `rank` entries. */
typedef struct HurrayShard {
  const uint64_t *parent_shape;
  const uint64_t *offset;
} HurrayShard;

/* Statistics section (72 bytes). Fields are meaningful only when their
 * computed_mask bit is set. Floating-point fields keep their exact bits. */
typedef struct HurrayStatistics {
  uint32_t computed_mask;
  uint64_t nnz;
  double sparsity_ratio;
  double value_min;
  double value_max;
  double value_abs_max;
  double value_mean;
  double value_stddev;
  uint8_t nm_n;
  uint8_t nm_m;
  uint8_t has_nan;
  uint8_t has_inf;
} HurrayStatistics;

/* Extension type section (20 bytes), required iff the type tag is private. */
typedef struct HurrayExtensionType {
  uint32_t bit_width;
  uint8_t packing_factor;
  uint8_t is_float;
  uint8_t is_signed;
  uint8_t sign_bits;
  uint8_t exponent_bits;
  uint8_t mantissa_bits;
  uint32_t exponent_bias;
  uint8_t has_nan;
  uint8_t has_inf;
} HurrayExtensionType;

/* Composite member section (16 bytes): overlay members only. */
typedef struct HurrayCompositeMember {
  uint8_t role; /* HURRAY_MEMBER_ROLE_* */
} HurrayCompositeMember;

/*
 * Every field of a descriptor. All pointers are borrowed. A NULL section
 * pointer means the section is absent.
 *
 * When building: the HAS_* flag bits are derived from which section pointers
 * are set (the HAS_* bits of `flags` are ignored); `flags` may only add
 * reserved bits in permissive mode. version_major 0 means "current" (1.0;
 * version_minor is kept). Array pointers may be NULL when their length is 0.
 *
 * Opaque layouts (permissive only): for a layout tag this library cannot
 * parse (reserved range), `layout.u.opaque` holds every byte after
 * byte_offset, so buffer_count must be 0, every section pointer NULL,
 * trailing_len 0, and `flags` is kept verbatim (the sections it announces are
 * inside the opaque bytes).
 */
typedef struct HurrayDescriptorFields {
  uint8_t version_major;
  uint8_t version_minor;
  uint32_t flags;
  uint8_t type_tag;
  uint32_t rank;
  const uint64_t *shape; /* rank entries; HURRAY_DYNAMIC_DIM for a dynamic dimension */
  uint64_t byte_offset;
  HurrayLayout layout;
  uint32_t buffer_count;               /* 0..255 */
  const HurrayBufferHandle *buffers;   /* buffer_count entries */
  const HurrayQuantization *quantization;
  const HurrayShard *shard;
  const HurrayStatistics *statistics;
  const HurrayExtensionType *extension_type;
  const HurrayCompositeMember *composite_member;
  const uint8_t *trailing; /* bytes after the last known section (newer minor */
  uint32_t trailing_len;   /* versions, permissive relays); written back verbatim */
} HurrayDescriptorFields;

typedef struct HurrayDescriptor HurrayDescriptor;

/* ---- decode ---------------------------------------------------------------- */

/*
 * Strict decode (the reference C ABI signature). `bytes` (borrowed) must hold
 * at least descriptor_length bytes; bytes after the descriptor are ignored.
 * On success *out is owned: free with hurray_descriptor_destroy. On failure
 * *out is NULL. One allocation, bounded by descriptor_length plus a constant;
 * HURRAY_ERR_OUT_OF_MEMORY when it fails.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_decode(
    const uint8_t *bytes, uintptr_t len, HurrayDescriptor **out);

/* Decode with options (HURRAY_DECODE_*) and an optional error detail (err
 * is written only on failure). Unknown option bits: HURRAY_ERR_INVALID_ARGUMENT. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_decode_ex(
    const uint8_t *bytes, uintptr_t len, uint32_t options, HurrayDescriptor **out,
    HurrayError *err);

/*
 * Reads descriptor_length from the first 10 bytes after checking the magic
 * and the major version; the way a stream reader learns how much to read.
 * `bytes` borrowed; *out_length written on success only.
 * HURRAY_ERR_INVALID_LAYOUT if len < 10 or the length is < 20;
 * HURRAY_ERR_INVALID_MAGIC, HURRAY_ERR_VERSION_MISMATCH, HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_peek_length(
    const uint8_t *bytes, uintptr_t len, uint32_t *out_length, HurrayError *err);

/* Validates `f` (strict unless HURRAY_DECODE_PERMISSIVE) and copies it into a
 * new descriptor. `f` and every array it points to are borrowed for the call.
 * *out owned (hurray_descriptor_destroy), NULL on failure. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_from_fields(
    const HurrayDescriptorFields *f, uint32_t options, HurrayDescriptor **out, HurrayError *err);

/*
 * The fields of a one-buffer dense tensor, for callers that build many (a
 * binding wrapping arrays): `type_tag` a named element type, `rank` <= 64
 * dimensions `shape` (borrowed, rank entries; kept as out->shape, so it must
 * outlive *out; NULL allowed for rank 0), row-major (`layout_tag` 0x01, any
 * rank) or column-major (0x02, rank >= 1), one CPU buffer of `buffer_bytes`
 * bytes aligned to `alignment`, at byte_offset 0.
 * Fills *handle (caller storage): byte_size = buffer_bytes, the alignment,
 * CPU, producer_synced, standard memory, reserved 0; and *out (caller
 * storage): version 1.0, no flags, no section, no trailing bytes, the
 * layout's payload zeroed, buffer_count 1, buffers = handle (borrowed: *out
 * points at *handle). Then checks them exactly as
 * hurray_descriptor_from_fields(out, HURRAY_DECODE_STRICT, ...) would (rank
 * cap, named type, element count and byte size overflow and below 2^63,
 * alignment a power of two and >= 64 unless the buffer is empty, buffer at
 * least the data's bytes, a scalar row-major; a dynamic dimension is
 * accepted, with no size check, as from_fields accepts it) and gives the
 * same verdict:
 * HURRAY_OK exactly when from_fields would accept *out, which then equals
 * hurray_descriptor_fields of the descriptor it builds; otherwise from_fields's
 * status and err (field and reason), without a byte offset. Allocates nothing.
 * *handle and *out are written also on a rule failure (do not use them then).
 * Errors: those of from_fields for these fields; HURRAY_ERR_INVALID_ARGUMENT
 * (nothing written) for another layout tag; HURRAY_ERR_NULL_POINTER for
 * handle or out.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_fields_dense(
    uint8_t type_tag, uint32_t rank, const uint64_t *shape, uint8_t layout_tag,
    uint64_t buffer_bytes, uint32_t alignment, HurrayBufferHandle *handle,
    HurrayDescriptorFields *out, HurrayError *err);

/*
 * The descriptor of `d` (borrowed) transcoded to `target_tag` by
 * hurray_layout_transcode: d's fields with the layout replaced by the
 * target's (row- and column-major carry no payload), byte_offset 0, and one
 * buffer of hurray_layout_transcode_size bytes with d's first buffer's
 * device, sync mode, memory class and alignment; version, type, shape,
 * flags, statistics, shard, extension type, composite member and trailing
 * bytes kept. Built strictly when d passes the strict rules, else as
 * permissively as d needs. *out owned (hurray_descriptor_destroy), NULL on
 * failure. Errors: those of hurray_layout_transcode_size (the same
 * refusals), HURRAY_ERR_NULL_POINTER (d, out), HURRAY_ERR_INTERNAL (a
 * destroyed handle), HURRAY_ERR_OUT_OF_MEMORY, or the status building it
 * fails with.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_transcoded(
    const HurrayDescriptor *d, uint8_t target_tag, HurrayDescriptor **out, HurrayError *err);

/* Checks `f` (borrowed) as hurray_descriptor_from_fields does, without
 * building anything. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_validate(
    const HurrayDescriptorFields *f, uint32_t options, HurrayError *err);

/* Deep copy of `d` (borrowed). *out owned (hurray_descriptor_destroy), NULL on
 * failure (HURRAY_ERR_OUT_OF_MEMORY, HURRAY_ERR_NULL_POINTER). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_clone(
    const HurrayDescriptor *d, HurrayDescriptor **out);

/* Frees a descriptor (`d` is moved). NULL is a no-op that returns HURRAY_OK. A handle that
 * was already destroyed is detected on a best-effort basis (while its memory
 * has not been reused): HURRAY_ERR_INTERNAL; every getter does the same. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_destroy(HurrayDescriptor *d);

/* ---- encode ---------------------------------------------------------------- */

/* Exact encoded length in bytes. `d` borrowed; *out_len caller storage. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_encoded_len(
    const HurrayDescriptor *d, uint64_t *out_len);

/*
 * Writes the descriptor (borrowed) into out[0..capacity) (caller memory).
 * *out_len receives the length (also when the capacity is short: then
 * HURRAY_ERR_BUFFER_TOO_SMALL is returned and nothing is written). `out` may
 * be NULL when capacity is 0.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_encode(
    const HurrayDescriptor *d, uint8_t *out, uint64_t capacity, uint64_t *out_len);

/* ---- read ------------------------------------------------------------------ */

/* Fills *out (caller storage) with borrowed views of every field: its
 * pointers point into d, valid while d lives, never to be freed. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_fields(
    const HurrayDescriptor *d, HurrayDescriptorFields *out);

/* Getters of the reference C ABI. In every getter `d` is borrowed and the out
 * pointers are caller storage, written on success only; NULL arguments give
 * HURRAY_ERR_NULL_POINTER, a destroyed handle HURRAY_ERR_INTERNAL. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_element_type_tag(
    const HurrayDescriptor *d, uint8_t *out);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_layout_tag(
    const HurrayDescriptor *d, uint8_t *out);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_rank(const HurrayDescriptor *d,
                                                                uint32_t *out);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_byte_offset(
    const HurrayDescriptor *d, uint64_t *out);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_buffer_count(
    const HurrayDescriptor *d, uint32_t *out);
/*
 * Shape query. *inout_rank: in, the capacity of out_dims (0 when out_dims is
 * NULL); out, the true rank. HURRAY_ERR_BUFFER_TOO_SMALL when out_dims is
 * NULL or too small (rank still written), else fills out_dims.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_shape(
    const HurrayDescriptor *d, uint64_t *out_dims, uintptr_t *inout_rank);

/* Additional getters. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_version(
    const HurrayDescriptor *d, uint8_t *major, uint8_t *minor);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_flags(
    const HurrayDescriptor *d, uint32_t *out);
/* Borrowed pointer to buffer handle `index` (HURRAY_ERR_INDEX_OUT_OF_BOUNDS). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_buffer(
    const HurrayDescriptor *d, uint32_t index, const HurrayBufferHandle **out);
/* Element count (product of shape; 1 for a scalar). HURRAY_ERR_INVALID_ARGUMENT
 * if a dimension is dynamic or the product overflows. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_element_count(
    const HurrayDescriptor *d, uint64_t *out);
/* Sum of the buffers' byte sizes. HURRAY_ERR_INVALID_ARGUMENT if it overflows. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_data_bytes(
    const HurrayDescriptor *d, uint64_t *out);

/*
 * What buffer `index` of a descriptor with these fields holds, for messages:
 * "quantization scales", "quantization zero points" (or both), then by layout
 * "element data" (buffer 0 of a dense layout), "values", "indices" (COO),
 * "col_indices" / "row_ptr" (CSR), "row_indices" / "col_ptr" (CSC),
 * "pos_<L>" / "crd_<L>" (CSF level L), "page_pool" / "block_table" /
 * "seq_ptr" (block-paged). The name is a static string, or written into `buf`
 * (`buf_len` bytes; 16 suffice) for a CSF level. NULL when the fields do not
 * say (a private or unknown layout, an index past the layout's buffers, a NULL
 * argument). `f` borrowed.
 */
HURRAY_API const char *hurray_descriptor_buffer_role(const HurrayDescriptorFields *f,
                                                     uint32_t index, char *buf, size_t buf_len);

/* Value equality of two descriptors (same encoding); both borrowed. False when
 * either is NULL or destroyed. */
HURRAY_API bool hurray_descriptor_equal(const HurrayDescriptor *a, const HurrayDescriptor *b);

/* ---- field-by-field walk (used by hurray-inspect) --------------------------- */

typedef enum HurrayFieldKind {
  HURRAY_FIELD_UINT = 0,  /* value in .u */
  HURRAY_FIELD_INT = 1,   /* value in .i */
  HURRAY_FIELD_FLOAT = 2, /* value in .f (f32 widened to f64) */
  HURRAY_FIELD_BYTES = 3, /* raw bytes only */
  HURRAY_FIELD_SECTION = 4 /* start of a section; size covers the whole section */
} HurrayFieldKind;

typedef struct HurrayFieldEvent {
  uint64_t offset;       /* byte offset from the start of the descriptor */
  uint64_t size;         /* bytes covered */
  const char *path;      /* e.g. "buffers[0].alignment" (borrowed, valid during the call) */
  HurrayFieldKind kind;
  uint64_t u;
  int64_t i;
  double f;
  const uint8_t *bytes;  /* the field's raw bytes (borrowed from the input) */
  const char *meaning;   /* decoded meaning ("float32", "row_major") or NULL
                            (borrowed, valid during the call) */
} HurrayFieldEvent;

typedef void (*HurrayFieldVisitor)(const HurrayFieldEvent *event, void *ctx);

/* Decodes like hurray_descriptor_decode_ex, calling `visitor` for every field
 * in wire order before validation. `bytes` borrowed; `ctx` borrowed and passed
 * back untouched. Returns the decode status (err explains a failure; events
 * up to the failing field have been delivered). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_walk(const uint8_t *bytes, uintptr_t len,
                                                                uint32_t options,
                                                                HurrayFieldVisitor visitor,
                                                                void *ctx, HurrayError *err);

/* hurray_descriptor_equal but for the buffers' alignment, which is measured
 * from wherever the bytes sit (two placements of one tensor are one value):
 * each buffer's alignment counts as what any placement satisfies (1 when
 * empty, else HURRAY_MIN_BUFFER_ALIGNMENT). Both borrowed; false when either
 * is NULL or destroyed. */
HURRAY_API bool hurray_descriptor_equal_except_alignment(const HurrayDescriptor *a,
                                                         const HurrayDescriptor *b);

/* The rules a statistics section (`stats`) or a shard section of `rank`
 * dimensions states about itself (both borrowed), checked as a descriptor
 * carrying it would be: sparsity_ratio in [0, 1], value_stddev >= 0,
 * nm_n <= nm_m, unknown computed_mask bits; extents and offsets of a shard
 * (no dynamic dimension). The rules that need the tensor (nnz against a
 * sparse layout, the shard's box inside its parent) run when the section is
 * attached to one. The status and detail are the descriptor rule's
 * (HURRAY_ERR_INVALID_STATISTICS; HURRAY_ERR_INVALID_SHARD, or
 * HURRAY_ERR_INVALID_LAYOUT for an offset past the parent), without a byte
 * offset; HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT (rank above
 * HURRAY_MAX_RANK). */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_statistics_check(const HurrayStatistics *stats,
                                                                 HurrayError *err);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_shard_check(uint32_t rank,
                                                            const HurrayShard *shard,
                                                            HurrayError *err);

/* ---- relay semantics for a reader ------------------------------------------
 *
 * hurray_layout_decode_options: HURRAY_DECODE_STRICT for a named layout tag,
 * else HURRAY_DECODE_PERMISSIVE (a private or unknown layout's rules are
 * agreed out of band). hurray_descriptor_relay_options: the options a
 * descriptor with these fields (borrowed) needs to be decoded again: the
 * layout's, permissive too for a reserved or unassigned quantization scheme.
 *
 * hurray_descriptor_decode_relay: hurray_descriptor_decode_ex, strict unless
 * `permissive`; a descriptor that fails strictly but carries what a writer
 * builds with relay semantics (hurray_descriptor_relay_options is
 * permissive) is accepted permissively. *out owned (hurray_descriptor_destroy)
 * and *options the mode used, on success; the strict decode's status and
 * detail otherwise; HURRAY_ERR_NULL_POINTER for a NULL out or options.
 *
 * hurray_descriptor_looks_unpacked: true when buffer 0 of a row- or
 * column-major tensor of a sub-byte type (bool, the 2-, 4- and 6-bit types)
 * holds exactly one byte per element past byte_offset while the packed
 * elements need fewer bytes: legal (a larger buffer is), but almost always
 * an unpacked array handed over by mistake. *count then gets the element
 * count (the storage count of a quantized tensor) and *packed the bytes they
 * pack into (either may be NULL). False otherwise, also for NULL `f`.
 */
HURRAY_API uint32_t hurray_layout_decode_options(uint8_t layout_tag);
HURRAY_API uint32_t hurray_descriptor_relay_options(const HurrayDescriptorFields *f);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_descriptor_decode_relay(
    const uint8_t *bytes, uintptr_t len, bool permissive, HurrayDescriptor **out,
    uint32_t *options, HurrayError *err);
HURRAY_API bool hurray_descriptor_looks_unpacked(const HurrayDescriptorFields *f,
                                                 uint64_t *count, uint64_t *packed);

/* Two statistics sections (borrowed) are equal when they encode alike: the
 * same computed_mask and, for each field a set bit claims, the same bits (a
 * NaN equals itself, as in a descriptor); the unclaimed fields are ignored.
 * True for two NULLs, false for one. */
HURRAY_API bool hurray_statistics_equal(const HurrayStatistics *a, const HurrayStatistics *b);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_DESCRIPTOR_H */
