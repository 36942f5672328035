/*
 * hurray/status.h - status codes and the error detail channel.
 *
 * Every fallible function of libhurray returns a HurrayStatus: HURRAY_OK (0) on
 * success, a negative code on failure. Positive values are reserved. The values
 * are pinned forever: codes -1 .. -11 are the reference C ABI's, the others were
 * added by this implementation and never change meaning.
 *
 * Functions that can explain a failure take an optional `HurrayError *err`
 * (NULL allowed; borrowed, caller storage). On failure it receives the status,
 * the byte offset where the problem was found (HURRAY_NO_OFFSET when there is
 * none), the field path ("buffers[1].alignment") and a one-line message naming
 * both. On success it is left untouched.
 */
#ifndef HURRAY_STATUS_H
#define HURRAY_STATUS_H

#include <stdint.h>
#include <stddef.h>

#include "hurray/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t HurrayStatus;

/*
 * The one status table. Columns: name, value, default message, the Python
 * exception the extension module raises for it (see python/src/errors.c).
 */
#define HURRAY_STATUS_TABLE(X)                                                              \
  X(OK,                      0, "success", None)                                              \
  X(ERR_INVALID_MAGIC,      -1, "descriptor magic is not \"HRRY\"", InvalidDescriptorError)   \
  X(ERR_VERSION_MISMATCH,   -2, "unsupported format major version", InvalidDescriptorError)   \
  X(ERR_INVALID_LAYOUT,     -3, "malformed descriptor or layout", InvalidDescriptorError)     \
  X(ERR_INVALID_TYPE,       -4, "invalid element type, device tag or memory class",           \
    InvalidDescriptorError)                                                                   \
  X(ERR_BUFFER_TOO_SMALL,   -5, "output buffer too small", BufferError)                       \
  X(ERR_NULL_POINTER,       -6, "required pointer argument is NULL", InternalError)           \
  X(ERR_INTERNAL_PANIC,     -7, "internal failure; the handle must not be reused",            \
    InternalError)                                                                            \
  X(ERR_INVALID_SYNC_MODE,  -8, "invalid sync mode", InvalidDescriptorError)                  \
  X(ERR_SYNC_MODE_MISMATCH, -9, "handoff payload does not match the declared sync mode",      \
    BufferError)                                                                              \
  X(ERR_INTERNAL,          -10, "internal error or use of a destroyed handle", InternalError) \
  X(ERR_INDEX_OUT_OF_BOUNDS,-11, "index out of bounds", IndexError)                           \
  X(ERR_INVALID_QUANTIZATION, -12, "invalid quantization section", InvalidDescriptorError)    \
  X(ERR_INVALID_BUFFER_TABLE, -13, "buffer table does not match the layout",                  \
    InvalidDescriptorError)                                                                   \
  X(ERR_BUFFER_SIZE,       -14, "buffer smaller than its layout requires", BufferError)       \
  X(ERR_MISALIGNED,        -15, "buffer address does not meet its declared alignment",        \
    BufferError)                                                                              \
  X(ERR_INVALID_COMPOSITE, -16, "invalid composite", InvalidDescriptorError)                  \
  X(ERR_INVALID_INDEX_DATA,-17, "sparse or paged index buffer violates its invariants",       \
    InvalidDescriptorError)                                                                   \
  X(ERR_UNSUPPORTED,       -18, "unsupported by this implementation", UnsupportedError)       \
  X(ERR_OUT_OF_MEMORY,     -19, "out of memory", MemoryError)                                 \
  X(ERR_IO,                -20, "I/O error", FileError)                                       \
  X(ERR_INVALID_FILE,      -21, "malformed .hrry file", FileError)                            \
  X(ERR_CRC_MISMATCH,      -22, "index CRC-32C mismatch", FileError)                          \
  X(ERR_INVALID_KV,        -23, "malformed key-value metadata", FileError)                    \
  X(ERR_NOT_FOUND,         -24, "no such tensor or key", KeyError)                                   \
  X(ERR_DUPLICATE_NAME,    -25, "duplicate name", FileError)                                  \
  X(ERR_STREAM,            -26, "malformed or truncated stream", StreamError)                 \
  X(ERR_STREAM_LIMIT,      -27, "stream limit exceeded", StreamError)                         \
  X(ERR_CROSS_MACHINE,     -28, "buffer is not producer-synced on a cross-machine stream",    \
    StreamError)                                                                              \
  X(ERR_INVALID_ARGUMENT,  -29, "invalid argument", ValueError)                               \
  X(ERR_INVALID_STATE,     -30, "operation not valid in the object's current state",          \
    ValueError)                                                                               \
  X(ERR_INVALID_STATISTICS,-31, "invalid statistics section", InvalidDescriptorError)         \
  X(ERR_INVALID_SHARD,     -32, "invalid shard section", InvalidDescriptorError)

/* The status values as enumerators: HURRAY_OK, HURRAY_ERR_INVALID_MAGIC, ... */
enum HurrayStatusCode {
#define HURRAY_X_ENUM_(name, value, msg, pyexc) HURRAY_##name = (value),
  HURRAY_STATUS_TABLE(HURRAY_X_ENUM_)
#undef HURRAY_X_ENUM_
  HURRAY_STATUS_MIN_ = -32
};

/* Offset value meaning "no byte offset applies". */
#define HURRAY_NO_OFFSET UINT64_MAX

/* Detail of a failure. Plain data, no ownership: allocate it anywhere. */
typedef struct HurrayError {
  HurrayStatus status; /* the status the failing call returned */
  uint64_t offset;     /* byte offset in the input, or HURRAY_NO_OFFSET */
  char field[96];      /* field path, e.g. "layout.tiled[1].tile_shape[0]" ("" if none) */
  char message[320];   /* "<field> at byte <offset>: <reason>" */
} HurrayError;

/* Sets *err (borrowed) to "no error": status OK, offset HURRAY_NO_OFFSET,
 * empty strings. NULL-safe. */
HURRAY_API void hurray_error_clear(HurrayError *err);

/* The enumerator name without the HURRAY_ prefix ("ERR_INVALID_MAGIC"), or
 * "UNKNOWN_STATUS". Returns a static string (borrowed, never free). */
HURRAY_API const char *hurray_status_name(HurrayStatus status);

/* A one-line description of a status. Static string (borrowed, never free). */
HURRAY_API const char *hurray_status_message(HurrayStatus status);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_STATUS_H */
