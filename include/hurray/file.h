/*
 * hurray/file.h - the .hrry container (spec: docs/spec/file-format.md;
 * docs/internals/decisions.md § File format, § Limits).
 *
 * A .hrry file holds named tensors and file-level key-value metadata:
 *
 *   header (64) | tensors (descriptor, padding, buffers) | [KV] | index | trailer (40)
 *
 * Writing (HurrayFileWriter) is single-pass: each tensor's descriptor and
 * buffers go to disk when they are handed over, so the writer holds one
 * encoded descriptor plus the index, never the model. Every buffer, the last
 * included, is padded to the data alignment; the index carries a CRC-32C. The
 * bytes go to a temporary file in the target's directory, which
 * hurray_file_writer_finish() syncs and renames into place: a crash never
 * leaves a half-written file under the target name. On Linux that file has
 * no name until finish (O_TMPFILE), so a killed save leaves nothing behind
 * (but for a kill between finish naming the complete file and renaming it);
 * elsewhere it is ".<name>.tmp-XXXXXX", which a killed save leaves behind
 * and hurray_file_remove_stale_temporaries() removes.
 *
 * Reading (HurrayFile) maps the file (zero-copy: read-only and shared, or
 * private and copy-on-write, so that tensors can be written in place without
 * the writes ever reaching the file) or, for file systems where mapping is
 * slow, reads each tensor into owned aligned memory.
 * Opening parses only the header, the trailer, the index and the KV section;
 * fetching a tensor decodes that one descriptor. Every length read from the
 * file is checked against the file size and the caps of HurrayFileOpenOptions
 * before anything is allocated for it.
 *
 * Names and keys are byte strings with an explicit length: UTF-8, 1 to 65535
 * bytes, compared byte for byte. Names returned by the reader point into the
 * file and are NOT NUL-terminated (print them with "%.*s").
 *
 * Paths are NUL-terminated strings passed to the system as they are: bytes on
 * POSIX systems; UTF-8 on Windows (converted to UTF-16 for the wide-character
 * file API, so any file name can be reached).
 *
 * Thread safety: a HurrayFile may be used from several threads at once for
 * everything except hurray_file_close(). A HurrayFileTensor is immutable
 * (its bytes too, unless hurray_file_tensor_is_writable: then ordering
 * writes against other users of the same bytes is the caller's business);
 * retain and release are atomic. A HurrayFileWriter is used by one thread at
 * a time.
 */
#ifndef HURRAY_FILE_H
#define HURRAY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hurray/descriptor.h"
#include "hurray/export.h"
#include "hurray/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants of the container ------------------------------------------- */

#define HURRAY_FILE_MAGIC "HRRYFILE"
#define HURRAY_FILE_TRAILER_MAGIC "HRRY"
#define HURRAY_FILE_VERSION_MAJOR 1u
#define HURRAY_FILE_VERSION_MINOR 0u
#define HURRAY_FILE_HEADER_LEN 64u
#define HURRAY_FILE_TRAILER_LEN 40u

/* Header file_flags. */
#define HURRAY_FILE_FLAG_HAS_KV_METADATA 0x1u
#define HURRAY_FILE_FLAG_SORTED_INDEX 0x2u
#define HURRAY_FILE_FLAG_HAS_INDEX_CRC32C 0x4u
#define HURRAY_FILE_FLAGS_KNOWN 0x7u

/* data_buffer_alignment: a power of two in [4096, 2 MiB]. */
#define HURRAY_FILE_MIN_ALIGNMENT 4096u
#define HURRAY_FILE_MAX_ALIGNMENT 2097152u
#define HURRAY_FILE_DEFAULT_ALIGNMENT 4096u

/* Longest tensor name or KV key, in bytes. */
#define HURRAY_FILE_MAX_NAME_LEN 65535u

/* Deepest composite nesting read or written (docs/internals/decisions.md § Limits). */
#define HURRAY_FILE_MAX_COMPOSITE_DEPTH HURRAY_MAX_COMPOSITE_DEPTH

/* ---- CRC-32C ---------------------------------------------------------------- */

/*
 * CRC-32C (Castagnoli) of data[0..len), continuing from `crc` (0 to start):
 * hurray_crc32c(hurray_crc32c(0, a, n), b, m) is the CRC of a followed by b.
 * hurray_crc32c(0, "123456789", 9) == 0xE3069283. Uses AVX-512 VPCLMULQDQ
 * folding from 2 KiB on where the CPU has it, else the SSE4.2 crc32
 * instruction where the CPU has it, else a table. `data` borrowed; may be
 * NULL when len is 0.
 */
HURRAY_API uint32_t hurray_crc32c(uint32_t crc, const void *data, size_t len);

/* ---- what a file is --------------------------------------------------------- */

/* What the first bytes of a file say it is (hurray_file_sniff). */
typedef enum HurrayFileKind {
  HURRAY_FILE_KIND_UNKNOWN = 0,
  HURRAY_FILE_KIND_EMPTY = 1,           /* no bytes at all */
  HURRAY_FILE_KIND_HRRY = 2,            /* "HRRYFILE": a .hrry file */
  HURRAY_FILE_KIND_HRRY_STREAM = 3,     /* "HRRY" then not "FILE": a descriptor or a stream */
  HURRAY_FILE_KIND_SAFETENSORS = 4,     /* u64 LE header length, then '{' */
  HURRAY_FILE_KIND_GGUF = 5,            /* "GGUF" */
  HURRAY_FILE_KIND_NPZ = 6,             /* a zip whose first member is a .npy (np.savez) */
  HURRAY_FILE_KIND_TORCH_ZIP = 7,       /* a zip whose first member is DIR/data.pkl (torch.save) */
  HURRAY_FILE_KIND_ZIP = 8,             /* another zip ("PK\x03\x04") */
  HURRAY_FILE_KIND_PICKLE = 9,          /* 0x80 and a protocol 2-5 (pickle, legacy torch.save) */
  HURRAY_FILE_KIND_NPY = 10             /* "\x93NUMPY" (np.save) */
} HurrayFileKind;

/*
 * What the first `len` bytes of a file (`head`, borrowed; NULL allowed when
 * len is 0) say it is. 64 bytes are enough for every kind (a zip's first
 * member name is read from its local header); fewer still tell every kind
 * but NPZ and TORCH_ZIP (then ZIP). `file_size` is the whole file's size
 * (a safetensors header length must fit in it; 0 when unknown). The reader
 * calls it when a file is not a .hrry file, to say what it is instead.
 */
HURRAY_API HurrayFileKind hurray_file_sniff(const void *head, size_t len, uint64_t file_size);

/* A short description of a kind ("a safetensors file"). Static string
 * (borrowed, never free); "an unknown kind of file" for values out of range. */
HURRAY_API const char *hurray_file_kind_name(HurrayFileKind kind);

/* ---- KV metadata values ----------------------------------------------------- */

/* Wire tags of KV values. 0x08-0xEF reserved, 0xF0-0xFE private, 0xFF invalid:
 * none of those can be written, and the reader rejects them. */
typedef enum HurrayKvTag {
  HURRAY_KV_STRING = 0x01,  /* UTF-8 string (u32 length) */
  HURRAY_KV_INT64 = 0x02,
  HURRAY_KV_UINT64 = 0x03,
  HURRAY_KV_FLOAT64 = 0x04,
  HURRAY_KV_BOOL = 0x05,
  HURRAY_KV_BYTES = 0x06,   /* opaque bytes (u32 length) */
  HURRAY_KV_ARRAY = 0x07    /* homogeneous array of one of the six tags above */
} HurrayKvTag;

/* A string: `len` bytes of UTF-8, not NUL-terminated. */
typedef struct HurrayKvString {
  const char *data; /* may be NULL when len is 0 */
  uint32_t len;
} HurrayKvString;

/* A byte sequence. */
typedef struct HurrayKvBytes {
  const uint8_t *data; /* may be NULL when len is 0 */
  uint32_t len;
} HurrayKvBytes;

/*
 * A KV value: a tag and its payload. Every pointer is borrowed: from the
 * caller while a writer copies the value, from the HurrayFile (valid until
 * hurray_file_close) when read. For HURRAY_KV_ARRAY, `elem_tag` names the
 * element type (STRING..BYTES), `count` the number of elements, and the
 * matching *_array member points at `count` elements (may be NULL when count
 * is 0). Arrays of arrays do not exist.
 */
typedef struct HurrayKvValue {
  uint8_t tag;      /* HurrayKvTag */
  uint8_t elem_tag; /* HURRAY_KV_ARRAY only: tag of the elements */
  uint32_t count;   /* HURRAY_KV_ARRAY only: number of elements */
  union {
    HurrayKvString str; /* STRING */
    int64_t i64;        /* INT64 */
    uint64_t u64;       /* UINT64 */
    double f64;         /* FLOAT64 */
    bool b;             /* BOOL */
    HurrayKvBytes bytes; /* BYTES */
    const HurrayKvString *str_array;
    const int64_t *i64_array;
    const uint64_t *u64_array;
    const double *f64_array;
    const bool *bool_array;
    const HurrayKvBytes *bytes_array;
  } v;
} HurrayKvValue;

/* Value constructors (the other union bytes are left unset). */
#define HURRAY_KV_CTOR_(fname, ctype, TAG, member)      \
  static inline HurrayKvValue fname(ctype x) {          \
    HurrayKvValue r;                                    \
    r.tag = (uint8_t)(TAG);                             \
    r.elem_tag = 0;                                     \
    r.count = 0;                                        \
    r.v.member = x;                                     \
    return r;                                           \
  }
HURRAY_KV_CTOR_(hurray_kv_int64, int64_t, HURRAY_KV_INT64, i64)
HURRAY_KV_CTOR_(hurray_kv_uint64, uint64_t, HURRAY_KV_UINT64, u64)
HURRAY_KV_CTOR_(hurray_kv_float64, double, HURRAY_KV_FLOAT64, f64)
HURRAY_KV_CTOR_(hurray_kv_bool, bool, HURRAY_KV_BOOL, b)
#undef HURRAY_KV_CTOR_

/* A string value; `s` borrowed: `len` bytes of UTF-8. */
static inline HurrayKvValue hurray_kv_string(const char *s, uint32_t len) {
  HurrayKvValue r;
  r.tag = (uint8_t)HURRAY_KV_STRING;
  r.elem_tag = 0;
  r.count = 0;
  r.v.str.data = s;
  r.v.str.len = len;
  return r;
}

/* A byte-sequence value; `p` borrowed. */
static inline HurrayKvValue hurray_kv_bytes(const uint8_t *p, uint32_t len) {
  HurrayKvValue r;
  r.tag = (uint8_t)HURRAY_KV_BYTES;
  r.elem_tag = 0;
  r.count = 0;
  r.v.bytes.data = p;
  r.v.bytes.len = len;
  return r;
}

/* An array value of `count` elements of type `elem_tag` at `elems` (borrowed;
 * an array of the element's C type: HurrayKvString, int64_t, uint64_t,
 * double, bool or HurrayKvBytes). */
static inline HurrayKvValue hurray_kv_array(uint8_t elem_tag, const void *elems,
                                            uint32_t count) {
  HurrayKvValue r;
  r.tag = (uint8_t)HURRAY_KV_ARRAY;
  r.elem_tag = elem_tag;
  r.count = count;
  r.v.i64_array = (const int64_t *)elems;
  return r;
}

/* ---- writing ------------------------------------------------------------------ */

typedef struct HurrayFileWriter HurrayFileWriter;

/* Writer options. A zeroed struct (or NULL) means every default. */
typedef struct HurrayFileWriterOptions {
  /* data_buffer_alignment: 0 = 4096; else a power of two in [4096, 2 MiB]. */
  uint32_t data_alignment;
  /* Sort the index by name (sets SORTED_INDEX; readers then binary-search). */
  bool sorted_index;
  /* Skip fsync of the file and its directory in finish (faster, not
   * crash-safe: only for scratch files and benchmarks). */
  bool skip_fsync;
  /* Record a CRC-32C of every tensor's descriptor and data, computed while
   * they are written, in the KV entry HURRAY_FILE_KV_DATA_CRC32C (added at
   * finish; hurray_file_writer_add_kv then refuses that key). No wire structure is
   * added: any reader loads the file. Appended in the padding after
   * skip_fsync: sizeof(HurrayFileWriterOptions) is unchanged. */
  bool data_checksums;
} HurrayFileWriterOptions;

/*
 * The KV key of the data checksums (HurrayFileWriterOptions.data_checksums,
 * hurray_file_verify_data). Its value is KV bytes, 8 per index entry in index
 * order: the CRC-32C (as hurray_crc32c) of the entry's descriptor bytes
 * [descriptor_offset, +descriptor_length), then of its data region
 * [data_offset, +data_length), each a u32 little-endian
 * (docs/reference/file-format.md § Data checksums).
 */
#define HURRAY_FILE_KV_DATA_CRC32C "hurray.data_crc32c"
#define HURRAY_FILE_KV_DATA_CRC32C_LEN 18u

/*
 * The other KV keys hurray records for itself (docs/reference/file-format.md). Every key
 * starting with HURRAY_FILE_KV_RESERVED_PREFIX is reserved for them: the
 * Python package refuses such keys from users.
 *  - HURRAY_FILE_KV_VIEWS: the shared-tensor views record (a KV string of
 *    JSON: each name stored as a view of another entry's memory);
 *  - HURRAY_FILE_KV_GGUF: the GGUF value types of a file `hurray convert`
 *    made from GGUF (docs/reference/cli.md), so that converting back restores them.
 */
#define HURRAY_FILE_KV_RESERVED_PREFIX "hurray."
#define HURRAY_FILE_KV_RESERVED_PREFIX_LEN 7u
#define HURRAY_FILE_KV_VIEWS "hurray.views"
#define HURRAY_FILE_KV_VIEWS_LEN 12u
#define HURRAY_FILE_KV_GGUF "hurray.gguf"
#define HURRAY_FILE_KV_GGUF_LEN 11u

/* Whether `key` (key_len bytes, borrowed; NULL: false) is one of the records
 * hurray writes for itself: HURRAY_FILE_KV_VIEWS, HURRAY_FILE_KV_GGUF or
 * HURRAY_FILE_KV_DATA_CRC32C. A reader showing a file's metadata as the user
 * gave it leaves these out; other keys, under the reserved prefix or not,
 * are the user's. */
HURRAY_API bool hurray_file_kv_is_own(const char *key, size_t key_len);

/*
 * Starts writing a file that will appear at `path` (borrowed) when
 * hurray_file_writer_finish() succeeds. The bytes go to a new file in the same
 * directory, created with mode 0666 less the umask (the mode of an existing
 * target is not carried over): on Linux a file without a name (O_TMPFILE),
 * which finish names ".<name>.tmp-XXXXXX" once it is complete and synced and
 * at once renames over the target, so that a process killed before finish
 * leaves nothing behind (one killed between those two calls leaves that
 * complete temporary); where the system or the file system has no such
 * files (other systems, Linux file systems without O_TMPFILE, no /proc), a
 * temporary file ".<name>.tmp-XXXXXX" from the start, which a killed process
 * leaves behind (see hurray_file_remove_stale_temporaries). On POSIX systems
 * the writer holds an flock on it while it lives.
 * `options` borrowed, NULL for the defaults. On success *out is owned:
 * free with hurray_file_writer_destroy. On failure *out is NULL.
 * Errors: HURRAY_ERR_INVALID_ARGUMENT (bad alignment, empty path, path is a
 * directory), HURRAY_ERR_IO (cannot create the temporary file).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_open(
    const char *path, const HurrayFileWriterOptions *options, HurrayFileWriter **out,
    HurrayError *err);

/*
 * Starts writing a file image into memory instead of a file: the same bytes
 * hurray_file_writer_open would put in the file (the same options; skip_fsync
 * has no effect), with no file system involved. `size_hint` (0 for none) is
 * the expected size of the image: the first allocation, grown by doubling
 * when the image outgrows it. Finish with hurray_file_writer_finish_memory
 * (hurray_file_writer_finish refuses a memory writer); abort and destroy free
 * the image. On success *out is owned (hurray_file_writer_destroy).
 * Errors: HURRAY_ERR_INVALID_ARGUMENT (bad alignment), HURRAY_ERR_OUT_OF_MEMORY.
 * A write that finds no memory for the image fails with
 * HURRAY_ERR_OUT_OF_MEMORY and leaves the writer failed (only abort/destroy
 * remain), as HURRAY_ERR_IO does a file writer.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_open_memory(
    const HurrayFileWriterOptions *options, uint64_t size_hint, HurrayFileWriter **out,
    HurrayError *err);

/*
 * Writes one tensor: its descriptor, then each buffer at the next multiple of
 * the data alignment, padded to the alignment after every buffer.
 * `name` (borrowed) is name_len bytes of UTF-8, 1..65535, unique in the file.
 * `descriptor` borrowed; a composite head is refused here (use
 * hurray_file_writer_add_composite). `buffers` (borrowed) has one pointer per
 * buffer of the descriptor (NULL allowed for an empty buffer; the array may be
 * NULL when there are no buffers); `sizes` (borrowed, or NULL) repeats each
 * buffer's byte size as a check against the descriptor. The bytes are written
 * before the call returns; nothing is retained.
 *
 * Errors that leave the writer usable (nothing was written):
 * HURRAY_ERR_INVALID_ARGUMENT (name, sizes, composite head, buffer whose
 * declared alignment exceeds the data alignment), HURRAY_ERR_DUPLICATE_NAME,
 * HURRAY_ERR_NULL_POINTER. HURRAY_ERR_IO leaves the writer failed: only
 * abort/destroy remain (HURRAY_ERR_INVALID_STATE otherwise).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_add_tensor(
    HurrayFileWriter *w, const char *name, size_t name_len, const HurrayDescriptor *descriptor,
    const void *const *buffers, const uint64_t *sizes, HurrayError *err);

/*
 * One node of a composite tree to write. A head node has a composite
 * descriptor (layout 0x0B) and `member_count` children in `members`; a leaf
 * node has `buffers`/`sizes` as in hurray_file_writer_add_tensor. Every node
 * needs its own unique name. A member given no name (`name` NULL and
 * `name_len` 0) is named "{head}.{i}": its head's name, a dot and its
 * position among the head's members in decimal ("w.0", and "w.1.0" for the
 * first member of a nested composite "w.1"), the names the Python package
 * saves members under. All pointers borrowed.
 */
typedef struct HurrayFileCompositeNode {
  const char *name;
  size_t name_len;
  const HurrayDescriptor *descriptor;
  const void *const *buffers;                    /* leaf only */
  const uint64_t *sizes;                         /* leaf only, NULL allowed */
  const struct HurrayFileCompositeNode *members; /* head only */
  uint32_t member_count;                         /* head only; = the head's member_count */
} HurrayFileCompositeNode;

/*
 * Writes a composite: the head, then its members in pre-order, each with its
 * own index entry; no alignment padding follows a head. The whole tree is
 * validated first (names, member counts, nesting depth <= 8, the composition
 * rules), so a validation error writes nothing. `root` borrowed.
 * Errors: as hurray_file_writer_add_tensor, plus HURRAY_ERR_INVALID_COMPOSITE.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_add_composite(
    HurrayFileWriter *w, const HurrayFileCompositeNode *root, HurrayError *err);

/*
 * Adds a file-level KV entry (written at finish, in insertion order). `key`
 * (borrowed) is key_len bytes of UTF-8, 1..65535, unique. `value` borrowed and
 * copied. Errors leave the writer usable: HURRAY_ERR_INVALID_ARGUMENT (key,
 * tag, invalid UTF-8 string, section over 4 GiB), HURRAY_ERR_DUPLICATE_NAME,
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_add_kv(
    HurrayFileWriter *w, const char *key, size_t key_len, const HurrayKvValue *value,
    HurrayError *err);

/* Number of tensors written so far. */
HURRAY_API uint64_t hurray_file_writer_tensor_count(const HurrayFileWriter *w);

/*
 * Writes the KV section, the index (CRC-32C), the trailer and the header;
 * fsyncs the file, renames it onto the target path and fsyncs the directory.
 * After any outcome the writer only accepts destroy. When a step up to the
 * rename fails, the target path is untouched and the temporary file is
 * removed; when only the final directory fsync fails, HURRAY_ERR_IO is
 * returned with the file already in place (the message says so).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_finish(
    HurrayFileWriter *w, HurrayError *err);

/*
 * A shared tensor: a name whose elements are those of a stored tensor, its
 * *base* (tied weights, a transpose or slice of another tensor). Views add no
 * wire structure: the writer records them in the KV entry
 * HURRAY_FILE_KV_VIEWS (JSON, docs/reference/file-format.md "Shared tensors"), and a
 * reader that knows the record gives the view back over the base's bytes.
 *  - same: the view is the base itself under another name (no type or
 *    geometry of its own; the other fields are ignored);
 *  - otherwise: its element type (a whole-byte type), shape, the byte offset
 *    of element [0, ..., 0] from the base's first element, and one byte
 *    stride per dimension (may be negative or 0), every byte it reaches
 *    inside the base's own bytes.
 * Strings are borrowed, not NUL-terminated. base_index is the index entry of
 * the base (set by the reader; ignored by the writer).
 */
typedef struct HurrayFileView {
  const char *name;
  size_t name_len;
  const char *base;
  size_t base_len;
  bool same;
  uint8_t dtype;                /* HurrayDtype tag */
  uint32_t rank;                /* <= HURRAY_MAX_RANK */
  const uint64_t *shape;        /* rank entries */
  int64_t byte_offset;          /* of element [0, ..., 0], from the base's first element */
  const int64_t *byte_strides;  /* rank entries */
  uint64_t base_index;
} HurrayFileView;

/*
 * Records a view of a tensor already written (`view->base`). The view's
 * rules are checked against the base now (its base is a plain row- or
 * column-major tensor of whole-byte elements, unquantized; the view's type
 * is a whole-byte type; offset, strides and where the base starts in its
 * buffer are multiples of the view's element size; at most HURRAY_MAX_RANK
 * dimensions whose nonzero ones times the element size stay below 2**63;
 * every reachable byte inside the base's bytes), and its name must be used
 * by no tensor and no other view of the file. Views are written, in the
 * order they were added, as the KV entry HURRAY_FILE_KV_VIEWS by finish,
 * which refuses a file that was also given that key by
 * hurray_file_writer_add_kv. `view` borrowed.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_STATE,
 * HURRAY_ERR_INVALID_ARGUMENT (a name's syntax, a base not written yet, a
 * rule broken: the message names the rule), HURRAY_ERR_DUPLICATE_NAME,
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_add_view(
    HurrayFileWriter *w, const HurrayFileView *view, HurrayError *err);

/*
 * Finishes a memory writer (hurray_file_writer_open_memory): writes the KV
 * section, the index, the trailer and the header into the image and hands it
 * over: *data (owned: free with hurray_free; aligned to the data alignment,
 * so hurray_file_open_memory gives aligned views of it) holds *size bytes, a
 * complete .hrry file. After any outcome the writer only accepts destroy; on
 * failure *data is NULL and *size 0.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT (a file
 * writer), HURRAY_ERR_INVALID_STATE, HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_finish_memory(
    HurrayFileWriter *w, void **data, uint64_t *size, HurrayError *err);

/* Abandons the file: removes the temporary file; the target is untouched.
 * NULL-safe; no effect after finish. */
HURRAY_API void hurray_file_writer_abort(HurrayFileWriter *w);

/* Aborts if not finished, frees the writer and sets *w to NULL. NULL-safe. */
HURRAY_API void hurray_file_writer_destroy(HurrayFileWriter **w);

/*
 * Removes the temporary files that killed saves left behind (where the
 * writer's file has a name while it is written: see hurray_file_writer_open).
 * `dir_or_target` (borrowed): a directory, for the temporaries of every
 * target in it, or a target path (existing or not), for that target's only.
 * A file is removed only when all of these hold: its name is one the writer
 * makes (".<name>.tmp-" and 6 letters of a-z2-7, <name> not empty); it is a
 * regular file, not a link or a directory; it is owned by this process's
 * (effective) user; it was last modified at least `min_age_seconds` ago; and
 * no live writer holds it (POSIX: the writer's flock is free; Windows: no
 * other handle is open on it, checked by opening it without sharing and
 * deleting through that handle). Anything else, the target itself included,
 * is never touched. The age keeps files that a save in progress is still
 * writing safe where the lock cannot tell (a writer of an older version, a
 * file system without locks); 0 removes every unlocked match, including one
 * a writer created a moment ago and has not locked yet: pass 0 only when no
 * save into that directory can be running. Subdirectories are not searched.
 * `removed` (optional) receives the number of files removed, also on failure.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT (empty path, a
 * path ending in "/", "." or ".." that is no directory), HURRAY_ERR_IO (the
 * directory cannot be read; or a file could not be removed: the others still
 * were, and the message names the first that failed).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_remove_stale_temporaries(const char *dir_or_target,
                                                             uint32_t min_age_seconds,
                                                             uint32_t *removed,
                                                             HurrayError *err);

/* ---- reading -------------------------------------------------------------------- */

typedef struct HurrayFile HurrayFile;
typedef struct HurrayFileTensor HurrayFileTensor;

/*
 * How tensors are read.
 *
 * HURRAY_FILE_ACCESS_MMAP maps the file shared and read-only: buffers are
 * read-only views of the system's cache of the file (a write through one
 * kills the process: SIGSEGV, or an access violation on Windows).
 *
 * HURRAY_FILE_ACCESS_MMAP_COPY maps it private and copy-on-write (POSIX
 * MAP_PRIVATE with PROT_READ | PROT_WRITE; Windows PAGE_WRITECOPY and
 * FILE_MAP_COPY): buffers are writable views. Until a page is written it is
 * the cached page of the file, as with MMAP; its first write copies that one
 * page into memory of this process, and the write never reaches the file,
 * another process, or another HurrayFile of the same file. Every tensor
 * fetched from one HurrayFile shares its mapping, so a tensor fetched twice
 * sees the writes made through the other fetch. On Linux the mapping is
 * MAP_NORESERVE (only written pages are charged to memory, as anonymous
 * memory: unless vm.overcommit_memory is 2, where the whole mapping is
 * charged against the commit limit); Windows charges the whole view against
 * the commit limit when it is mapped.
 *
 * Either way, another process that truncates the file while it is mapped
 * makes a touch of a page past the new end raise SIGBUS (POSIX): the writer
 * here never truncates a file, it renames a new one over it (the mapping
 * keeps the old one). HURRAY_FILE_ACCESS_READ is the choice for files that
 * others rewrite in place.
 */
typedef enum HurrayFileAccess {
  HURRAY_FILE_ACCESS_MMAP = 0,     /* shared read-only mapping; read-only views (default) */
  HURRAY_FILE_ACCESS_READ = 1,     /* pread each tensor into owned aligned memory */
  HURRAY_FILE_ACCESS_MMAP_COPY = 2 /* private copy-on-write mapping; writable views */
} HurrayFileAccess;

/* Reader options. A zeroed struct (or NULL) means every default. */
typedef struct HurrayFileOpenOptions {
  HurrayFileAccess access;
  uint32_t decode_options;       /* HURRAY_DECODE_* for descriptors (strict by default) */
  uint64_t max_index_bytes;      /* 0 = 1 GiB */
  uint64_t max_kv_bytes;         /* 0 = 64 MiB */
  uint64_t max_descriptor_bytes; /* 0 = 16 MiB */
  uint32_t max_composite_depth;  /* 0 = 8; at most 8 (larger values count as 8) */
  /* Threads that read large ranges in parallel (hurray_file_prefetch, and the
   * reads of HURRAY_FILE_ACCESS_READ): 0 = automatic (the environment variable
   * HURRAY_WORKERS when it holds a number in [1, HURRAY_FILE_MAX_WORKERS],
   * else HURRAY_FILE_DEFAULT_WORKERS); 1 = one read at a time, as before
   * there was a choice; larger values count as HURRAY_FILE_MAX_WORKERS. It sits
   * in what was the struct's tail padding: the struct did not grow. */
  uint32_t workers;
} HurrayFileOpenOptions;

/* The automatic number of workers (measured: docs/reference/benchmarks.md
 * § Cold loads) and the most a file uses. */
#define HURRAY_FILE_DEFAULT_WORKERS 4u
#define HURRAY_FILE_MAX_WORKERS 64u

/*
 * Opens `path` (borrowed) for reading only (the file is never written, also
 * with HURRAY_FILE_ACCESS_MMAP_COPY): reads and validates the header, the
 * trailer, the index (CRC-32C, names valid UTF-8, every descriptor and data
 * range inside the tensor region, and disjoint from the others when the
 * index lists the tensors in file order) and the KV section. No descriptor
 * is read; names are not compared with each other (a lookup that succeeds
 * proves its name unique: hurray_file_find), and tensors the index lists out
 * of file order are checked for overlaps when file order is first needed
 * (hurray_file_position; the first hurray_file_tensor with MMAP_COPY);
 * hurray_file_verify checks both. `options`
 * borrowed, NULL for defaults. On success *out is owned: free with
 * hurray_file_close. On failure NULL.
 * Errors: HURRAY_ERR_INVALID_ARGUMENT (options->access is no HurrayFileAccess),
 * HURRAY_ERR_IO (also a mapping the system refuses: "mapping the file
 * copy-on-write" in the message for MMAP_COPY), HURRAY_ERR_INVALID_FILE,
 * HURRAY_ERR_VERSION_MISMATCH, HURRAY_ERR_CRC_MISMATCH, HURRAY_ERR_INVALID_KV,
 * HURRAY_ERR_DUPLICATE_NAME (KV keys), HURRAY_ERR_UNSUPPORTED (a file larger than the address space,
 * an index of 4 GiB or more, a section above its limit),
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_open(const char *path,
                                                          const HurrayFileOpenOptions *options,
                                                          HurrayFile **out, HurrayError *err);

/* Called once no HurrayFile or HurrayFileTensor uses memory given to
 * hurray_file_open_memory. */
typedef void (*HurrayFileReleaseFn)(void *ctx, const void *data, uint64_t size);

/*
 * Opens a file image held in memory, with the same validation as
 * hurray_file_open. With options->access MMAP (the default) or MMAP_COPY,
 * buffers are read-only views of `data` (hurray_file_tensor_is_mapped is
 * true; MMAP_COPY gives no writable views here: it counts as MMAP); with
 * HURRAY_FILE_ACCESS_READ each tensor fetched is copied into memory of its
 * own, aligned as its buffers declare, whatever the alignment of `data`.
 * On success `data` is moved: release(ctx, data, size) is called once no
 * file or tensor uses it (release NULL: the caller keeps `data` alive that
 * long). On failure release is not called. For views to meet their
 * declared alignment, align `data` to the file's data alignment.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_open_memory(
    const void *data, uint64_t size, HurrayFileReleaseFn release, void *ctx,
    const HurrayFileOpenOptions *options, HurrayFile **out, HurrayError *err);

/*
 * A caller's source of a file's bytes (an object store, HTTP ranges, a file
 * the caller reads its own way): read_at fills buf with exactly len bytes of
 * the file at `offset` and returns 0, or returns non-zero when it cannot
 * (after writing what went wrong, NUL-terminated, into why[why_len], or
 * leaving it empty). The reader checks offset + len <= size before every
 * call, and never asks for more than max_read bytes at once (0: no limit;
 * larger reads are split). read_at may be called from several threads at
 * once (fetches from one HurrayFile may run in parallel), each with its own
 * buf. close(ctx) (NULL allowed) is called once the HurrayFile no longer
 * needs the source: tensors fetched from it own their bytes.
 */
typedef struct HurrayFileReader {
  int (*read_at)(void *ctx, uint64_t offset, void *buf, uint64_t len, char *why,
                 size_t why_len);
  void (*close)(void *ctx);
  void *ctx;
  uint64_t size;     /* the file's size in bytes */
  uint64_t max_read; /* the largest single read_at, 0 = any */
} HurrayFileReader;

/*
 * Opens the file `reader` (borrowed; copied) gives the bytes of, with the
 * same validation as hurray_file_open and HURRAY_FILE_ACCESS_READ semantics
 * (options->access must be READ or MMAP, the default, which counts as READ):
 * the header, trailer, index and KV section are read at open; each tensor
 * fetched is read into memory of its own; hurray_file_read_slice reads only
 * the pages a slice needs. A failed read_at fails the call with
 * HURRAY_ERR_IO ("<what was read>: <why>" at the offset asked for). On
 * success the source is moved into the file (close is called by
 * hurray_file_close); on failure close is not called.
 * Errors: as hurray_file_open; HURRAY_ERR_NULL_POINTER (reader or read_at
 * NULL); HURRAY_ERR_INVALID_ARGUMENT (access MMAP_COPY: no mapping here).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_open_reader(
    const HurrayFileReader *reader, const HurrayFileOpenOptions *options, HurrayFile **out,
    HurrayError *err);

/*
 * The views the file records (HURRAY_FILE_KV_VIEWS; 0 when it has none). The
 * first call reads the record and checks it whole, once for the file's life:
 * its syntax, each view's names (a view's name is no stored tensor's, its
 * base is one), and each view against its base by the rules
 * hurray_file_writer_add_view enforces (the base's descriptor is decoded for
 * it). Every later call gives the same answer; the views functions below
 * fail with the same error until then. Safe from several threads.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_KV (the record: field
 * "kv['hurray.views']", offset of its value in the file, and the reason
 * naming the view and the rule), a base's decode error,
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_view_count(const HurrayFile *f,
                                                                uint64_t *count,
                                                                HurrayError *err);

/*
 * View `i` (< the count), in the order it was recorded. The strings and
 * arrays of *out are borrowed from the file (valid until it is closed);
 * base_index is the base's index entry.
 * Errors: those of hurray_file_view_count, HURRAY_ERR_INDEX_OUT_OF_BOUNDS.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_view(const HurrayFile *f, uint64_t i,
                                                          HurrayFileView *out, HurrayError *err);

/*
 * Looks a view up by name: HURRAY_OK and *out_view (its number for
 * hurray_file_view), HURRAY_ERR_NOT_FOUND when no view has that name (a
 * stored tensor's name is not a view: hurray_file_find finds it), or the
 * errors of hurray_file_view_count.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_find_view(const HurrayFile *f,
                                                               const char *name, size_t name_len,
                                                               uint64_t *out_view,
                                                               HurrayError *err);

/*
 * View `i` as a tensor over its base's bytes, without copying: a same-kind
 * view gives the base's tensor under the view's name; any other a tensor of
 * the view's type and shape whose descriptor is strided (row-major when
 * rank 0) with byte_offset the base's plus the view's, over the base's
 * buffer 0 (same handle: size, alignment, device). `base` (borrowed, may be
 * NULL) is the base's tensor when the caller already fetched it: the view
 * then shares its bytes (with HURRAY_FILE_ACCESS_READ each fetch reads a
 * copy of its own); NULL fetches the base. The tensor keeps the base's
 * bytes alive (release it as any tensor); hurray_file_tensor_index gives the
 * base's index entry.
 * Errors: those of hurray_file_view and hurray_file_tensor;
 * HURRAY_ERR_INVALID_ARGUMENT (`base` is another tensor than the view's base).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_view_tensor(const HurrayFile *f, uint64_t i,
                                                                 HurrayFileTensor *base,
                                                                 HurrayFileTensor **out,
                                                                 HurrayError *err);

/*
 * Looks `name` (name_len bytes, borrowed) up among every name the file gives
 * back, from the index and the views record alone (nothing is decoded): a
 * stored tensor (hurray_file_find: *index its index entry, *is_view false),
 * or else a view of a shared tensor (the record checked whole first, then
 * hurray_file_find_view: *index the view's number, *is_view true).
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_NOT_FOUND (neither),
 * HURRAY_ERR_DUPLICATE_NAME (two index entries share it: the file is
 * invalid), those of hurray_file_view_count (a record the reader refuses:
 * HURRAY_ERR_INVALID_KV).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_find_name(const HurrayFile *f,
                                                               const char *name, size_t name_len,
                                                               uint64_t *index, bool *is_view,
                                                               HurrayError *err);

/*
 * The tensor called `name` (name_len bytes, borrowed), whatever it is: a
 * stored tensor (hurray_file_find, then hurray_file_tensor) or a view of a
 * shared tensor (hurray_file_find_view, then hurray_file_view_tensor over
 * its base, the record checked whole first). One lookup for every name a
 * writer gave, as the Python package's f[name] and load give them back.
 * *out is the caller's (hurray_file_tensor_release); NULL on failure.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_NOT_FOUND (neither a tensor
 * nor a view), HURRAY_ERR_DUPLICATE_NAME, and those of hurray_file_tensor
 * and hurray_file_view_tensor (a record the reader refuses:
 * HURRAY_ERR_INVALID_KV, naming the view and the rule).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_get(const HurrayFile *f, const char *name,
                                                         size_t name_len, HurrayFileTensor **out,
                                                         HurrayError *err);

/*
 * The descriptor of view `i` (below hurray_file_view_count) without touching
 * its base's data: the base's own descriptor for a view of the same-tensor
 * kind, else the view's element type, shape and geometry (a strided tensor,
 * row-major for a 0-d view) over the base's buffer 0, as
 * hurray_file_view_tensor gives it. Checks the record first, as
 * hurray_file_view. *out is the caller's (hurray_descriptor_destroy).
 * Errors: HURRAY_ERR_NULL_POINTER, those of hurray_file_view and of
 * hurray_file_descriptor (the base's), HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_view_descriptor(const HurrayFile *f,
                                                                     uint64_t i,
                                                                     HurrayDescriptor **out,
                                                                     HurrayError *err);

/* Closes the file and sets *f to NULL. Tensors fetched from it stay valid
 * (they hold the mapping). NULL-safe. */
HURRAY_API void hurray_file_close(HurrayFile **f);

/* Container-level facts, as read from the header and trailer. */
typedef struct HurrayFileInfo {
  uint8_t version_major;
  uint8_t version_minor;
  uint32_t flags;                   /* HURRAY_FILE_FLAG_* */
  uint32_t data_alignment;
  uint64_t first_descriptor_offset;
  uint64_t tensor_count_hint;       /* UINT64_MAX = unknown */
  uint64_t file_size;
  uint64_t index_offset;
  uint64_t index_length;
  uint64_t kv_offset;               /* 0 = no KV section */
  uint32_t kv_length;
  uint32_t index_crc32c;
  bool mapped;                      /* buffers are views of a mapping or of caller memory */
  /* Appended in the padding after `mapped`: sizeof(HurrayFileInfo) and every
   * field before it are unchanged. The HurrayFileAccess the file was opened
   * with (HURRAY_FILE_ACCESS_MMAP for hurray_file_open_memory, whose buffers
   * are read-only views of the caller's memory). */
  uint8_t access;
} HurrayFileInfo;

/* Fills *out. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_info(const HurrayFile *f, HurrayFileInfo *out);

/* Number of tensors (index entries). 0 for NULL. */
HURRAY_API uint64_t hurray_file_tensor_count(const HurrayFile *f);

/* One index entry, read without touching the descriptor. */
typedef struct HurrayFileEntry {
  const char *name;   /* borrowed until close; NOT NUL-terminated */
  size_t name_len;
  uint64_t descriptor_offset;
  uint32_t descriptor_length;
  uint64_t data_offset;
  uint64_t data_length;
} HurrayFileEntry;

/* Entry `index` (index order: write order, or name order with SORTED_INDEX).
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_entry(const HurrayFile *f, uint64_t index,
                                                           HurrayFileEntry *out);

/* The index of the `position`-th tensor in file (write) order, which differs
 * from index order when the index is sorted. When it differs, the first call
 * sorts the entries by offset (once; thread-safe) and checks that no two
 * tensors overlap: HURRAY_ERR_INVALID_FILE if two do (hurray_file_verify
 * names them), HURRAY_ERR_OUT_OF_MEMORY. Also HURRAY_ERR_INDEX_OUT_OF_BOUNDS. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_position(const HurrayFile *f,
                                                              uint64_t position,
                                                              uint64_t *out_index);

/*
 * Looks a tensor up by name (name_len bytes, borrowed) and sets *out_index.
 * Succeeds only when exactly one entry has this name. The first 8 lookups
 * on a file scan its index (about 1 ns per entry); the next one builds, once,
 * a structure over all the names (a hash table, or binary search over a
 * SORTED_INDEX index whose order it has checked), so later lookups take
 * constant (or logarithmic) time. Thread-safe like the other queries.
 * Errors: HURRAY_ERR_NOT_FOUND, HURRAY_ERR_DUPLICATE_NAME (the file is
 * invalid: several entries have this name), HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_find(const HurrayFile *f, const char *name,
                                                          size_t name_len, uint64_t *out_index);

/*
 * Checks what open leaves to later calls, so that the whole file is proven
 * valid: that no two tensors overlap when the index does not list them in
 * file order (HURRAY_ERR_INVALID_FILE), then that every name is unique
 * (HURRAY_ERR_DUPLICATE_NAME) and, under SORTED_INDEX, that the names ascend
 * strictly (HURRAY_ERR_INVALID_FILE; lookups still answer correctly: they
 * use a hash table then). The first violation is named in *err (NULL
 * allowed) with its field and byte offset. Builds what hurray_file_find and
 * hurray_file_position build on first need (linear time, O(n log n) if the
 * names were chosen to collide). Also HURRAY_ERR_NULL_POINTER,
 * HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_verify(const HurrayFile *f, HurrayError *err);

/*
 * Reads bytes [offset, offset + length) of a file opened from a path ahead of
 * their use, with `workers` threads in parallel (0: the file's own setting,
 * HurrayFileOpenOptions.workers; 1: nothing is done, the bytes are read when
 * first touched, as without this call). A range that ends past the file is
 * clipped to it.
 *
 * Mapped files (MMAP, MMAP_COPY): first asks the system whether the range
 * is in memory (mincore, one page of every MiB, at most 4096, and the
 * last); when it is, returns at once (a warm file pays about a microsecond
 * per MiB). Otherwise the range is cut in one slice per worker (at least
 * 16 MiB each) that the workers read in and map at once (Linux
 * MADV_POPULATE_READ: large reads, several in flight; elsewhere a read-ahead
 * hint).
 *
 * READ access (a path opened with HURRAY_FILE_ACCESS_READ): a range of 32
 * MiB or more is read into the system's cache the same way, through a
 * mapping made for the purpose and dropped, so that the tensor reads that
 * follow copy from memory (they are parallel on their own from 32 MiB on);
 * a page that cannot be read is left to those reads, which report it
 * ("unexpected end of file"). Files opened from memory or a reader: nothing
 * to do.
 *
 * Errors: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_IO when a page of a mapping
 * cannot be read (the file was truncated while it is mapped, or the storage
 * failed),
 * naming the offset of the piece: a touch of that page would raise SIGBUS.
 * Creating a thread that fails is not an error (the work is done by those
 * that started, at least the calling thread).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_prefetch(const HurrayFile *f,
                                                              uint64_t offset, uint64_t length,
                                                              uint32_t workers, HurrayError *err);

/*
 * Checks tensor `index` as hurray_file_tensor would, without reading or
 * mapping its data: decodes its descriptor (its own length against the
 * index), checks the buffers' placement (data_offset alignment, each buffer
 * at the next multiple of the data alignment, the span equal to data_length,
 * declared alignments) and, for a composite head, reads its members'
 * descriptors and checks the composite as hurray_file_composite does.
 * Errors: those of hurray_file_tensor and hurray_file_composite (the message
 * names the tensor and the byte offset), HURRAY_ERR_NULL_POINTER,
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_verify_tensor(const HurrayFile *f,
                                                                   uint64_t index,
                                                                   HurrayError *err);

/* What hurray_file_verify_data checked. */
typedef struct HurrayFileDataReport {
  uint64_t tensors; /* index entries whose descriptor and data matched their CRC */
  uint64_t bytes;   /* bytes checksummed (descriptors and data regions) */
} HurrayFileDataReport;

/*
 * Checks every tensor's descriptor and data region against the CRC-32C the
 * file records under HURRAY_FILE_KV_DATA_CRC32C, in index order, and stops
 * at the first that differs: HURRAY_ERR_CRC_MISMATCH, the message naming the
 * tensor (name and index), whether its descriptor or its data differs, the
 * CRC found and the one recorded; *err's offset is the descriptor_offset or
 * data_offset of the damaged part. Mapped files are read through the
 * mapping; HURRAY_FILE_ACCESS_READ files with positioned reads through a
 * 1 MiB block (freed before return). `report` (borrowed, NULL allowed)
 * receives what was checked, also on failure (the tensors before the damaged
 * one). Thread-safe like the other reads.
 * Errors: HURRAY_ERR_NOT_FOUND (the file carries no checksums: the message
 * says so), HURRAY_ERR_INVALID_KV (the entry is not KV bytes of 8 per index
 * entry), HURRAY_ERR_CRC_MISMATCH, HURRAY_ERR_IO, HURRAY_ERR_OUT_OF_MEMORY,
 * HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_verify_data(const HurrayFile *f,
                                                                 HurrayFileDataReport *report,
                                                                 HurrayError *err);

/* hurray_file_verify_data for tensor `index` alone (a composite head: its
 * descriptor only). Same errors, plus HURRAY_ERR_INDEX_OUT_OF_BOUNDS. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_verify_tensor_data(const HurrayFile *f,
                                                                        uint64_t index,
                                                                        HurrayError *err);

/*
 * Decodes the descriptor of tensor `index` only (no data is read). Checks the
 * descriptor's own length against the index. *out owned: free with
 * hurray_descriptor_destroy; NULL on failure.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_descriptor(const HurrayFile *f, uint64_t index,
                                                                HurrayDescriptor **out,
                                                                HurrayError *err);

/*
 * Fetches tensor `index`: decodes its descriptor, checks it against the index
 * entry (descriptor_length, data_offset alignment, data_length equal to the
 * buffers' extent) and locates each buffer. With HURRAY_FILE_ACCESS_MMAP the
 * buffers are read-only views of the mapping; with
 * HURRAY_FILE_ACCESS_MMAP_COPY writable views of the private mapping (the
 * first fetch proves, once, that no two tensors of the file overlap, as
 * hurray_file_position does, so that a write through one tensor's buffers
 * never changes another tensor's bytes or any descriptor); with
 * HURRAY_FILE_ACCESS_READ they are read into one owned block aligned to the
 * largest buffer alignment. *out owned: release with
 * hurray_file_tensor_release; it stays valid after hurray_file_close. NULL
 * on failure.
 * Errors: descriptor decode errors, HURRAY_ERR_INVALID_FILE (also two
 * overlapping tensors, with MMAP_COPY), HURRAY_ERR_MISALIGNED (a buffer declares an alignment above the file's data
 * alignment, or caller memory is not aligned), HURRAY_ERR_UNSUPPORTED (a
 * permissively decoded layout whose buffers cannot be located), HURRAY_ERR_IO.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_tensor(const HurrayFile *f, uint64_t index,
                                                            HurrayFileTensor **out,
                                                            HurrayError *err);

/* Adds a reference (atomic), owned by the caller: drop it with
 * hurray_file_tensor_release. Returns t (NULL for NULL). */
HURRAY_API HurrayFileTensor *hurray_file_tensor_retain(HurrayFileTensor *t);

/* Drops a reference (freeing the tensor, and the mapping when it was the last
 * user) and sets *t to NULL. NULL-safe. */
HURRAY_API void hurray_file_tensor_release(HurrayFileTensor **t);

/* The decoded descriptor (borrowed, valid while t lives). */
HURRAY_API const HurrayDescriptor *hurray_file_tensor_descriptor(const HurrayFileTensor *t);

/* The tensor's name (borrowed, NUL-terminated copy); *len receives its
 * length when len is not NULL. */
HURRAY_API const char *hurray_file_tensor_name(const HurrayFileTensor *t, size_t *len);

/* Index of the tensor in the file it came from. */
HURRAY_API uint64_t hurray_file_tensor_index(const HurrayFileTensor *t);

/* Number of buffers (the descriptor's buffer_count). */
HURRAY_API uint32_t hurray_file_tensor_buffer_count(const HurrayFileTensor *t);

/* Buffer `i`: *data (borrowed, valid while t lives; NULL for an empty
 * buffer; read-only unless hurray_file_tensor_is_writable, when a holder may
 * cast away the const and write up to *size bytes) and *size.
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_tensor_buffer(
    const HurrayFileTensor *t, uint32_t i, const void **data, uint64_t *size);

/* True when the buffers are views of a mapping (read-only or copy-on-write)
 * or of memory given to hurray_file_open_memory. False when they were read
 * into a block that belongs to this tensor alone (HURRAY_FILE_ACCESS_READ).
 * False for NULL. Whether they may be written: hurray_file_tensor_is_writable. */
HURRAY_API bool hurray_file_tensor_is_mapped(const HurrayFileTensor *t);

/* True when the holders of t may write through its buffer pointers (cast
 * away const), e.g. to hand out writable arrays: buffers read into a block of
 * this tensor's own (HURRAY_FILE_ACCESS_READ), and views of a copy-on-write
 * mapping (HURRAY_FILE_ACCESS_MMAP_COPY: the writes stay in this process and
 * are seen by every tensor of the same HurrayFile over those bytes). False
 * for views of a read-only mapping (HURRAY_FILE_ACCESS_MMAP), where a write
 * kills the process, for views of memory given to hurray_file_open_memory,
 * and for NULL. */
HURRAY_API bool hurray_file_tensor_is_writable(const HurrayFileTensor *t);

/* ---- partial reads ------------------------------------------------------------------ */

/*
 * Copies a selection of dense tensor `index` into `dst` (borrowed, dst_size
 * bytes), packed row-major as hurray_layout_slice_to_row_major does, without
 * reading the rest of the tensor. `ranges` (borrowed) has `rank` entries,
 * which must be the tensor's rank (HurraySliceRange, hurray/layout.h; size
 * the destination with hurray_file_descriptor, hurray_descriptor_fields and
 * hurray_layout_slice_shape). Decodes the descriptor and checks the tensor's
 * buffer placement as hurray_file_tensor does. A mapped file (and memory
 * given to hurray_file_open_memory) is read through the mapping, touching
 * only the pages of the selected elements; each piece of 4 KiB or more is
 * announced to the system first, 1 MiB at a time while the previous MiB is
 * copied (madvise MADV_WILLNEED where there is one), so its pages are read
 * at once and the copy's page faults read nothing past it. A file opened with
 * HURRAY_FILE_ACCESS_READ is read with positioned reads of those bytes alone:
 * each piece of at least 512 bytes straight into `dst`; smaller pieces (single
 * elements of Morton, Hilbert or tiled layouts, short rows) through the
 * 4 KiB pages that hold them, each page read once, into a scratch block the
 * size of those pages (freed before the call returns). Thread-safe like the
 * other reads of a HurrayFile.
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INDEX_OUT_OF_BOUNDS (index),
 * HURRAY_ERR_INVALID_ARGUMENT (`rank` differs from the tensor's), those of
 * hurray_file_descriptor and hurray_layout_slice_to_row_major (a composite
 * head, a sparse or block-paged tensor: HURRAY_ERR_UNSUPPORTED),
 * HURRAY_ERR_INVALID_FILE and HURRAY_ERR_MISALIGNED (buffer placement, as
 * hurray_file_tensor), HURRAY_ERR_IO, HURRAY_ERR_OUT_OF_MEMORY (the page
 * scratch). Messages name the tensor.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_read_slice(
    const HurrayFile *f, uint64_t index, uint32_t rank, const HurraySliceRange *ranges,
    void *dst, uint64_t dst_size, HurrayError *err);

/*
 * hurray_file_read_slice of view `view` (below hurray_file_view_count): the
 * selection `ranges` (the view's rank entries) of the view, as
 * hurray_file_view_descriptor describes it, read from its base's bytes alone
 * (through the mapping, or with positioned reads of the selected bytes).
 * Errors: those of hurray_file_view and of hurray_file_read_slice; messages
 * name the view.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_read_view_slice(
    const HurrayFile *f, uint64_t view, uint32_t rank, const HurraySliceRange *ranges,
    void *dst, uint64_t dst_size, HurrayError *err);

/* ---- composites ------------------------------------------------------------------- */

/* A composite read back as a tree. */
typedef struct HurrayFileNode {
  HurrayFileTensor *tensor;        /* owned by the tree: the head (no buffers) or a leaf */
  bool is_composite;               /* the tensor is a composite head */
  uint32_t member_count;           /* number of members (0 for a leaf) */
  struct HurrayFileNode *members;  /* member_count nodes, in write order */
} HurrayFileNode;

/*
 * Reads the composite whose head is tensor `head_index`: its members are the
 * next member_count tensors in file order (ascending descriptor_offset,
 * whatever the index order), recursively for nested heads, up to the depth
 * limit. Each level is checked by the composite validator. *out owned: free
 * with hurray_file_node_destroy. Errors: HURRAY_ERR_INVALID_ARGUMENT (not a
 * composite head), HURRAY_ERR_INVALID_COMPOSITE (torn, too deep, rules),
 * plus those of hurray_file_tensor and hurray_file_position (file order).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_composite(const HurrayFile *f,
                                                               uint64_t head_index,
                                                               HurrayFileNode **out,
                                                               HurrayError *err);

/* Frees a tree (releasing every tensor) and sets *node to NULL. NULL-safe. */
HURRAY_API void hurray_file_node_destroy(HurrayFileNode **node);

/* ---- KV metadata -------------------------------------------------------------------- */

/* Number of KV entries. */
HURRAY_API uint32_t hurray_file_kv_count(const HurrayFile *f);

/* Entry `i` in file order: *key (not NUL-terminated) and *key_len, *value.
 * All borrowed until close. HURRAY_ERR_INDEX_OUT_OF_BOUNDS. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_kv_get(const HurrayFile *f, uint32_t i,
                                                            const char **key, size_t *key_len,
                                                            const HurrayKvValue **value);

/* Looks a key up (key_len bytes, borrowed). *value borrowed until close.
 * HURRAY_ERR_NOT_FOUND. */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_kv_find(const HurrayFile *f, const char *key,
                                                             size_t key_len,
                                                             const HurrayKvValue **value);

/* ---- loading many names at once ------------------------------------------------------ */

/*
 * Every structural check of the reader, then the data checksums: what a
 * user's "verify this file" means. hurray_file_verify, hurray_file_verify_tensor
 * of every index entry, then hurray_file_verify_data when the file carries
 * checksums (*has_sums true; a file without them is checked for its
 * structure alone). `report` and `has_sums` (NULL allowed) are filled on
 * every outcome. Errors: the first of those functions' (their message names
 * the tensor, the field and the byte offset), never HURRAY_ERR_NOT_FOUND.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_check(const HurrayFile *f,
                                                           HurrayFileDataReport *report,
                                                           bool *has_sums, HurrayError *err);

/* One item of hurray_file_load. */
typedef struct HurrayFileLoadItem {
  const char *name;         /* borrowed (the file's, or the caller's); NOT NUL-terminated */
  size_t name_len;
  uint64_t index;           /* the index entry read: the tensor's, or a view's base's */
  int64_t view;             /* a view with a type and geometry of its own: its number; else -1 */
  uint64_t same_as;         /* an earlier item that is this same tensor, or UINT64_MAX */
  HurrayFileTensor *tensor; /* owned by the load: a tensor; NULL for a composite and same_as */
  HurrayFileNode *node;     /* owned by the load: a composite (its whole tree), else NULL */
} HurrayFileLoadItem;

/* What hurray_file_load read: `count` items. Free with hurray_file_load_destroy. */
typedef struct HurrayFileLoad {
  uint64_t count;
  HurrayFileLoadItem *items;
} HurrayFileLoad;

#define HURRAY_FILE_LOAD_VERIFY 0x1u /* hurray_file_check first */
#define HURRAY_FILE_LOAD_STORED 0x2u /* a whole load: the stored items only, no views */

/* Where hurray_file_load failed: the file as a whole (at unused: the index,
 * a prefetch, verification), its views record (at unused), name `at` of the
 * caller's (not found, duplicate), or a read of index entry `at`. */
#define HURRAY_FILE_LOAD_AT_FILE 0u
#define HURRAY_FILE_LOAD_AT_VIEWS 1u
#define HURRAY_FILE_LOAD_AT_NAME 2u
#define HURRAY_FILE_LOAD_AT_TENSOR 3u
typedef struct HurrayFileLoadFailure {
  uint32_t stage; /* HURRAY_FILE_LOAD_AT_* */
  uint64_t at;
} HurrayFileLoadFailure;

/*
 * Reads many names of `f` at once. names NULL: every name, as a whole-file
 * load gives them: the tensor region is read ahead with the file's workers
 * (hurray_file_prefetch), the whole index is proven (hurray_file_verify),
 * then every top-level item is read in file order (a composite head as its
 * tree: its members are not items of their own), then every view of the
 * views record in record order (none with HURRAY_FILE_LOAD_STORED): a view
 * with a geometry of its own over its base's bytes (hurray_file_view_tensor,
 * sharing the base's item when it is one), a same-kind view as `same_as` its
 * base's item (or its base read when that is a composite's member). names
 * given (`name_count` names of name_lens[i] bytes, borrowed while the load
 * lives): item i is names[i], resolved as a stored tensor, else a view (the
 * record checked whole first; a same-kind view reads its base), all before
 * anything is read; each index entry is read once (later items with the same
 * entry are `same_as` the first, each item's data read ahead on its own),
 * and views after the stored items, over a base read among them.
 * HURRAY_FILE_LOAD_VERIFY: the tensor region read ahead and hurray_file_check
 * before anything is read. *out owned (hurray_file_load_destroy); NULL on
 * failure, when `failure` (NULL allowed) says where.
 * Errors: HURRAY_ERR_NULL_POINTER; HURRAY_ERR_NOT_FOUND and
 * HURRAY_ERR_DUPLICATE_NAME (a name, *err left as it was), those of
 * hurray_file_view_count, hurray_file_prefetch, hurray_file_verify,
 * hurray_file_check, hurray_file_tensor, hurray_file_composite and
 * hurray_file_view_tensor; HURRAY_ERR_OUT_OF_MEMORY.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_load(
    const HurrayFile *f, const char *const *names, const size_t *name_lens, uint64_t name_count,
    uint32_t flags, HurrayFileLoad **out, HurrayFileLoadFailure *failure, HurrayError *err);

/* Frees a load (releasing every tensor and tree) and sets *load to NULL. NULL-safe. */
HURRAY_API void hurray_file_load_destroy(HurrayFileLoad **load);

/* ---- saving many names at once ------------------------------------------------------- */

/* What a file holds, to write at once; every pointer borrowed. */
typedef struct HurrayFileContents {
  const HurrayFileCompositeNode *items; /* a tensor: a leaf node; a composite: its head node */
  uint64_t item_count;
  const HurrayFileView *views;          /* views of the items, checked against their bases */
  uint64_t view_count;
  const char *const *kv_keys;           /* KV entry i: kv_keys[i] (kv_key_lens[i] bytes) */
  const size_t *kv_key_lens;
  const HurrayKvValue *kv_values;
  uint64_t kv_count;
} HurrayFileContents;

/* Where a save failed: opening, item `at`, view `at`, KV entry `at`, or finishing. */
#define HURRAY_FILE_SAVE_AT_OPEN 0u
#define HURRAY_FILE_SAVE_AT_TENSOR 1u
#define HURRAY_FILE_SAVE_AT_VIEW 2u
#define HURRAY_FILE_SAVE_AT_KV 3u
#define HURRAY_FILE_SAVE_AT_FINISH 4u
typedef struct HurrayFileSaveFailure {
  uint32_t stage; /* HURRAY_FILE_SAVE_AT_* */
  uint64_t at;
} HurrayFileSaveFailure;

/*
 * Adds `c` to an open writer: each item (hurray_file_writer_add_composite for
 * a composite head, else hurray_file_writer_add_tensor), then each view
 * (hurray_file_writer_add_view), then each KV entry
 * (hurray_file_writer_add_kv), stopping at the first failure, which
 * `failure` (NULL allowed) locates. Errors: HURRAY_ERR_NULL_POINTER, and
 * those of the four functions (each leaves the writer as it says).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_writer_add_contents(
    HurrayFileWriter *w, const HurrayFileContents *c, HurrayFileSaveFailure *failure,
    HurrayError *err);

/*
 * Writes the file `c` describes, atomically, at once: path given, with
 * hurray_file_writer_open and hurray_file_writer_finish (the target untouched
 * on any failure before the rename); path NULL, into memory
 * (hurray_file_writer_open_memory sized for the items' bytes, then
 * hurray_file_writer_finish_memory: *image owned, free with hurray_free, of
 * *image_size bytes; NULL and 0 on failure). `options` borrowed, NULL for the
 * defaults. `failure` (NULL allowed) locates a failure.
 * Errors: HURRAY_ERR_NULL_POINTER, those of the writer's functions.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_save(
    const char *path, const HurrayFileWriterOptions *options, const HurrayFileContents *c,
    void **image, uint64_t *image_size, HurrayFileSaveFailure *failure, HurrayError *err);

/*
 * The environment variable HURRAY_WORKERS, which HurrayFileOpenOptions.workers
 * 0 stands for: *out its value (1 to HURRAY_FILE_MAX_WORKERS), or 0 when it
 * is unset or empty. Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT
 * (anything else: the message quotes it and says what it may be; the reader
 * itself takes such a value as unset).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_workers_env(uint32_t *out, HurrayError *err);

/*
 * An array value of `count` scalar values `elems` (borrowed), each of tag
 * `elem_tag` (STRING..BYTES): their payloads laid out in `storage` (the
 * caller's, at least count * sizeof(HurrayKvValue) bytes, aligned as a
 * HurrayKvValue; borrowed by *out, as the strings and bytes the elements
 * point at) as the element's C type, *out the array (count 0: an empty one).
 * Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_INVALID_ARGUMENT (a tag that is
 * no scalar KV type; an element of another tag, named).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_kv_array_pack(uint8_t elem_tag,
                                                              const HurrayKvValue *elems,
                                                              uint32_t count, void *storage,
                                                              HurrayKvValue *out,
                                                              HurrayError *err);

/*
 * The descriptor of the tensor called `name` (name_len bytes, borrowed),
 * decoded alone (no data read): a stored tensor (hurray_file_find, then
 * hurray_file_descriptor; *index its index entry) or else a view of a shared
 * tensor (the record checked whole, then hurray_file_view_descriptor; *index
 * the view's number, *is_view true). *out owned (hurray_descriptor_destroy),
 * NULL on failure. Errors: HURRAY_ERR_NULL_POINTER, HURRAY_ERR_NOT_FOUND
 * (neither), HURRAY_ERR_DUPLICATE_NAME (*err untouched), and those of
 * hurray_file_view_count and the two descriptor functions.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_find_descriptor(
    const HurrayFile *f, const char *name, size_t name_len, uint64_t *index, bool *is_view,
    HurrayDescriptor **out, HurrayError *err);

/*
 * Whether hurray_file_read_slice can read a selection of a tensor described
 * by `f` (borrowed): HURRAY_OK, or HURRAY_ERR_UNSUPPORTED with the reason in
 * *err, worded to follow the tensor's name: a composite head ("is a
 * composite: ..."), a layout that is not dense (sparse, block-paged,
 * private), a quantization scheme other than per-tensor affine (its scales
 * follow channels or blocks). Also HURRAY_ERR_NULL_POINTER.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_slice_check(
    const struct HurrayDescriptorFields *f, HurrayError *err);

/*
 * What a partial read of a tensor takes and gives, decided before anything
 * is allocated or read. `f` (borrowed) describes the tensor: a stored
 * tensor's descriptor, or a view's (hurray_file_find_descriptor; `is_view`
 * set). `items` (borrowed, `count` entries; NULL when 0) is a NumPy basic
 * index of it. Fills `ranges` (caller storage, f->rank entries; NULL allowed
 * for a scalar) as hurray_layout_basic_index does, *bytes with the bytes the
 * selection packs into (the dst_size of hurray_file_read_slice and
 * hurray_file_read_view_slice), and *result (owned: free with
 * hurray_descriptor_destroy; NULL on failure) with the descriptor of what
 * the read gives: row-major, the index's result shape (an integer item drops
 * its dimension, a new axis adds one of 1), f's element type, one buffer of
 * *bytes bytes (alignment 64, producer-synced) on buffer 0's device kind and
 * memory class; a per-tensor quantization and a private type's extension
 * section are kept (they hold for every element), a shard or statistics
 * section is left out (it describes the whole tensor).
 * Checks, in order: what hurray_file_slice_check refuses, the index, the
 * ranges (hurray_layout_slice_shape), and, for a view, that the selection is
 * no larger than the base it reads: only a zero stride (elements repeated)
 * makes it larger, and a forged record can then describe exabytes over a
 * few bytes (HURRAY_ERR_UNSUPPORTED, "the view repeats elements of its
 * base"; the view itself, read whole, is zero-copy).
 * Errors: HURRAY_ERR_NULL_POINTER, those of hurray_file_slice_check,
 * hurray_layout_basic_index, hurray_layout_slice_shape and
 * hurray_descriptor_from_fields, HURRAY_ERR_UNSUPPORTED as said.
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_slice_plan(
    const struct HurrayDescriptorFields *f, bool is_view, const HurrayIndexItem *items,
    uint32_t count, HurraySliceRange *ranges, uint64_t *bytes, HurrayDescriptor **result,
    HurrayError *err);

/*
 * Every name the file gives back, as a reader's keys() lists them: the stored
 * tensors in file order (composite members included), then the views of
 * shared tensors in record order. hurray_file_name_count: how many (the views
 * record checked whole first: its errors). hurray_file_name: name `i` (below
 * the count; borrowed until close, NOT NUL-terminated). Errors:
 * HURRAY_ERR_NULL_POINTER, those of hurray_file_view_count, hurray_file_view
 * and hurray_file_position (HURRAY_ERR_INDEX_OUT_OF_BOUNDS past the end).
 */
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_name_count(const HurrayFile *f,
                                                                uint64_t *count,
                                                                HurrayError *err);
HURRAY_API HURRAY_NODISCARD HurrayStatus hurray_file_name(const HurrayFile *f, uint64_t i,
                                                          const char **name, size_t *len,
                                                          HurrayError *err);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_FILE_H */
