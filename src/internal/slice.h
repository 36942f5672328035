/*
 * The engine of partial reads (src/layout/slice.c), shared by
 * hurray_layout_slice_to_row_major (memory) and hurray_file_read_slice
 * (src/file/slice.c: a mapping, or positioned reads of the file). Never
 * installed.
 */
#ifndef HURRAY_INTERNAL_SLICE_H
#define HURRAY_INTERNAL_SLICE_H

#include "hurray/descriptor.h"
#include "hurray/layout.h"
#include "internal/common.h"

/*
 * Where the engine reads the bytes of buffer 0: `size` bytes, either in
 * memory (`base`, borrowed) or through `read`, which copies bytes
 * [pos, pos + len) of buffer 0 (positions include byte_offset) to `dst`. The
 * engine checks each piece against `size` before it asks, and asks for the
 * same pieces in the same order every time it runs on the same arguments (the
 * file reader relies on it: a first run plans, a second one copies).
 */
typedef struct HurraySliceSource {
  const uint8_t *base; /* NULL: use read */
  uint64_t size;
  HurrayStatus (*read)(void *ctx, uint64_t pos, uint64_t len, uint8_t *dst, HurrayError *err);
  void *ctx;
  /* Memory sources that are a file mapping (or NULL): called on each piece of
   * HURRAY__SLICE_HINT_BYTES or more before it is copied (a larger piece:
   * chunk by chunk, the next announced while the last is copied), so that
   * its pages are read in at once and the faults of the copy read nothing
   * more (the kernel's read-ahead around a fault reads well past the piece,
   * and so does one hint for a whole large piece). */
  void (*will_read)(const void *p, size_t n);
} HurraySliceSource;

#define HURRAY__SLICE_HINT_BYTES 4096u
#define HURRAY__SLICE_HINT_CHUNK ((uint64_t)1 << 20)

/*
 * The checks and the copy of hurray_layout_slice_to_row_major with buffer 0
 * given by `src` (the caller checked f->buffer_count >= 1 and made src from
 * buffer 0). Same errors.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__slice_gather(
    const HurrayDescriptorFields *f, const HurraySliceRange *ranges,
    const HurraySliceSource *src, void *dst, uint64_t dst_size, HurrayError *err);

/* Bytes the file reader has read with positioned reads for slices, since the
 * process started (test hook: proves that a slice reads only what it needs). */
HURRAY_INTERNAL uint64_t hurray__file_slice_bytes_read(void);

#endif /* HURRAY_INTERNAL_SLICE_H */
