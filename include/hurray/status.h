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
 * none), the field path ("buffers[1].alignment"), the reason alone ("48 is not
 * a power of two") and a one-line message combining the three. On success it
 * is left untouched.
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
 * The one status table. Columns: name (the enumerator without its HURRAY_
 * prefix), value (pinned forever), default message (hurray_status_message).
 */
#define HURRAY_STATUS_TABLE(X)                                                                \
  X(OK,                         0, "success")                                                 \
  X(ERR_INVALID_MAGIC,         -1, "descriptor magic is not \"HRRY\"")                        \
  X(ERR_VERSION_MISMATCH,      -2, "unsupported format major version")                        \
  X(ERR_INVALID_LAYOUT,        -3, "malformed descriptor or layout")                          \
  X(ERR_INVALID_TYPE,          -4, "invalid element type, device tag or memory class")        \
  X(ERR_BUFFER_TOO_SMALL,      -5, "output buffer too small")                                 \
  X(ERR_NULL_POINTER,          -6, "required pointer argument is NULL")                       \
  X(ERR_INTERNAL_PANIC,        -7, "internal failure; the handle must not be reused")         \
  X(ERR_INVALID_SYNC_MODE,     -8, "invalid sync mode")                                       \
  X(ERR_SYNC_MODE_MISMATCH,    -9, "handoff payload does not match the declared sync mode")   \
  X(ERR_INTERNAL,             -10, "internal error or use of a destroyed handle")             \
  X(ERR_INDEX_OUT_OF_BOUNDS,  -11, "index out of bounds")                                     \
  X(ERR_INVALID_QUANTIZATION, -12, "invalid quantization section")                            \
  X(ERR_INVALID_BUFFER_TABLE, -13, "buffer table does not match the layout")                  \
  X(ERR_BUFFER_SIZE,          -14, "buffer smaller than its layout requires")                 \
  X(ERR_MISALIGNED,           -15, "buffer address does not meet its declared alignment")     \
  X(ERR_INVALID_COMPOSITE,    -16, "invalid composite")                                       \
  X(ERR_INVALID_INDEX_DATA,   -17, "sparse or paged index buffer violates its invariants")    \
  X(ERR_UNSUPPORTED,          -18, "unsupported by this implementation")                      \
  X(ERR_OUT_OF_MEMORY,        -19, "out of memory")                                           \
  X(ERR_IO,                   -20, "I/O error")                                               \
  X(ERR_INVALID_FILE,         -21, "malformed .hrry file")                                    \
  X(ERR_CRC_MISMATCH,         -22, "index CRC-32C mismatch")                                  \
  X(ERR_INVALID_KV,           -23, "malformed key-value metadata")                            \
  X(ERR_NOT_FOUND,            -24, "no such tensor or key")                                   \
  X(ERR_DUPLICATE_NAME,       -25, "duplicate name")                                          \
  X(ERR_STREAM,               -26, "malformed or truncated stream")                           \
  X(ERR_STREAM_LIMIT,         -27, "stream limit exceeded")                                   \
  X(ERR_CROSS_MACHINE,        -28, "buffer is not producer-synced on a cross-machine stream") \
  X(ERR_INVALID_ARGUMENT,     -29, "invalid argument")                                        \
  X(ERR_INVALID_STATE,        -30, "operation not valid in the object's current state")       \
  X(ERR_INVALID_STATISTICS,   -31, "invalid statistics section")                              \
  X(ERR_INVALID_SHARD,        -32, "invalid shard section")                                   \
  X(ERR_PROTOCOL,             -33, "network protocol violation")

/* The status values as enumerators: HURRAY_OK, HURRAY_ERR_INVALID_MAGIC, ... */
enum HurrayStatusCode {
#define HURRAY_X_ENUM_(name, value, msg) HURRAY_##name = (value),
  HURRAY_STATUS_TABLE(HURRAY_X_ENUM_)
#undef HURRAY_X_ENUM_
  HURRAY_STATUS_MIN_ = -33
};

/* Offset value meaning "no byte offset applies". */
#define HURRAY_NO_OFFSET UINT64_MAX

/* Detail of a failure. Plain data, no ownership: allocate it anywhere. */
typedef struct HurrayError {
  HurrayStatus status; /* the status the failing call returned */
  uint64_t offset;     /* byte offset in the input, or HURRAY_NO_OFFSET */
  char field[96];      /* field path, e.g. "layout.tiled[1].tile_shape[0]" ("" if none) */
  char message[320];   /* "<field> at byte <offset>: <reason>" */
  char reason[192];    /* the reason alone, e.g. "48 is not a power of two": no field,
                          no offset, no context ("" if none) */
} HurrayError;

/* Sets *err (borrowed) to "no error": status OK, offset HURRAY_NO_OFFSET,
 * empty strings. NULL-safe. */
HURRAY_API void hurray_error_clear(HurrayError *err);

/* The operating system's error code behind a failed system call that *err
 * (borrowed, NULL allowed) describes: errno on POSIX (ENOENT for a missing
 * file, EACCES for a permission), the GetLastError code on Windows; 0 when
 * the detail holds none (not an I/O failure, or no detail). Lets a binding
 * raise its language's own "file not found" or "permission denied". */
HURRAY_API int hurray_error_os_code(const HurrayError *err);

/* The enumerator name without the HURRAY_ prefix ("ERR_INVALID_MAGIC"), or
 * "UNKNOWN_STATUS". Returns a static string (borrowed, never free). */
HURRAY_API const char *hurray_status_name(HurrayStatus status);

/* A one-line description of a status. Static string (borrowed, never free). */
HURRAY_API const char *hurray_status_message(HurrayStatus status);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_STATUS_H */
