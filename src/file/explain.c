/*
 * Errors that say what to do (docs/reference/file-format.md § When a file is not a
 * .hrry file): when the header or the trailer check fails, the reader looks
 * a little further to say what the file is instead, or how much of it is
 * missing. Only ever on the failure path: a good file costs nothing.
 *
 *  - Not a .hrry file: its first bytes are sniffed (hurray_file_sniff); a
 *    safetensors, GGUF, zip (np.savez, torch.save), pickle or .npy file is
 *    named, with the command that converts it; a Hurray stream is sent to the
 *    stream reader; an empty file is called empty.
 *  - A header but no trailer: the file ended early. The tensors are walked
 *    from first_descriptor_offset as the writers lay them out (each
 *    descriptor, its buffers at the next multiples of the data alignment,
 *    the next descriptor after them), so the error can say where the file
 *    ends: inside which tensor, and at least how many bytes are missing.
 */
#include <stdio.h>

#include "internal/file.h"

#define CONVERT_HINT "convert it with `hurray convert SRC DST`"

HurrayStatus hurray__file_not_hrry(const uint8_t *head, size_t n, uint64_t size,
                                   HurrayError *err) {
  HurrayFileKind kind = hurray_file_sniff(head, n, size);
  switch (kind) {
    case HURRAY_FILE_KIND_HRRY:
      return HURRAY_OK;
    case HURRAY_FILE_KIND_EMPTY:
      return hurray__fail(err, HURRAY_ERR_INVALID_FILE, 0, "file",
                          "is empty (0 bytes): a .hrry file has at least 104 bytes");
    case HURRAY_FILE_KIND_HRRY_STREAM:
      return hurray__fail(err, HURRAY_ERR_INVALID_FILE, 0, "header.magic",
                          "is not \"HRRYFILE\": this is a Hurray stream (or a descriptor), not "
                          "a .hrry file container; read it with a stream reader "
                          "(hurray.StreamReader, hurray_stream_reader_*)");
    case HURRAY_FILE_KIND_UNKNOWN:
      return HURRAY_OK; /* the caller's own message */
    default:
      return hurray__fail(err, HURRAY_ERR_INVALID_FILE, 0, "header.magic",
                          "is not \"HRRYFILE\": this is %s, not a .hrry file; " CONVERT_HINT,
                          hurray_file_kind_name(kind));
  }
}

/* The file's bytes, mapped or caller memory (mem) or read through b. */
typedef struct Src {
  const uint8_t *mem;
  const HurrayFileBytes *b;
  uint64_t size;
} Src;

static bool src_read(const Src *s, uint64_t off, void *buf, size_t n) {
  if (off > s->size || n > s->size - off) return false;
  if (s->mem != NULL) {
    memcpy(buf, s->mem + off, n);
    return true;
  }
  return s->b != NULL && hurray__bytes_read(s->b, buf, n, off, "reading", NULL) == HURRAY_OK;
}

static bool is_descriptor_at(const Src *s, uint64_t off) {
  uint8_t m[4];
  return src_read(s, off, m, 4) && memcmp(m, HURRAY_DESCRIPTOR_MAGIC, 4) == 0;
}

#define MAX_WALK 10000000u

/* Where the walk stopped. */
typedef struct Walk {
  uint32_t complete;  /* tensors found whole */
  uint64_t end;       /* end of the last whole tensor's bytes */
  bool cut;           /* the file ends inside tensor #complete */
  bool cut_in_desc;   /* ... inside its descriptor */
  uint64_t cut_start; /* its descriptor offset */
  uint64_t cut_end;   /* where its bytes end (descriptor or data) */
} Walk;

static void walk_tensors(const Src *s, uint64_t first, uint64_t A, uint64_t max_desc,
                         Walk *w) {
  memset(w, 0, sizeof *w);
  uint64_t pos = first;
  w->end = first;
  while (w->complete < MAX_WALK) {
    uint8_t head[10];
    if (pos >= s->size) return; /* nothing after the last whole tensor */
    if (s->size - pos < sizeof head) {
      if (!is_descriptor_at(s, pos) && s->size - pos >= 4) return;
      w->cut = w->cut_in_desc = true;
      w->cut_start = pos;
      w->cut_end = pos + HURRAY__FILE_MIN_DESCRIPTOR;
      return;
    }
    uint32_t dlen = 0;
    if (!src_read(s, pos, head, sizeof head) ||
        hurray_descriptor_peek_length(head, sizeof head, &dlen, NULL) != HURRAY_OK)
      return; /* not a descriptor: the KV section or the index follows */
    if (dlen > s->size - pos) {
      w->cut = w->cut_in_desc = true;
      w->cut_start = pos;
      w->cut_end = pos + dlen;
      return;
    }
    if (dlen > max_desc) return;
    uint8_t *bytes = hurray__malloc(dlen);
    if (bytes == NULL) return;
    HurrayDescriptor *d = NULL;
    bool ok = src_read(s, pos, bytes, dlen) &&
              hurray_descriptor_decode_ex(bytes, dlen, HURRAY_DECODE_PERMISSIVE, &d, NULL) ==
                  HURRAY_OK;
    hurray__free(bytes);
    if (!ok) return;
    uint32_t nb = 0;
    uint64_t end = pos + dlen, at = end;
    bool sized = hurray_descriptor_buffer_count(d, &nb) == HURRAY_OK;
    for (uint32_t k = 0; sized && k < nb; k++) {
      const HurrayBufferHandle *h = NULL;
      if (hurray_descriptor_buffer(d, k, &h) != HURRAY_OK || hurray__align_up_u64(at, A, &at) ||
          hurray__add_overflow_u64(at, h->byte_size, &end))
        sized = false;
      at = end;
    }
    hurray__descriptor_drop(d);
    if (!sized) return;
    if (end > s->size) {
      w->cut = true;
      w->cut_start = pos;
      w->cut_end = end;
      return;
    }
    w->complete++;
    w->end = end;
    /* the next descriptor: after the padding to A (this writer) or at the
     * next multiple of 8 (the reference's) */
    uint64_t a8 = 0, aA = 0;
    if (hurray__align_up_u64(end, 8, &a8) || hurray__align_up_u64(end, A, &aA)) return;
    if (nb > 0 && is_descriptor_at(s, aA)) pos = aA;
    else if (is_descriptor_at(s, a8)) pos = a8;
    else if (nb > 0 && s->size > a8 && s->size <= aA) pos = aA; /* cut in the padding */
    else pos = a8;
  }
}

HurrayStatus hurray__file_explain_trailer(const uint8_t *mem, const HurrayFileBytes *b,
                                          uint64_t size,
                                          uint64_t first, uint32_t align, uint64_t max_desc,
                                          const uint8_t *trailer, HurrayError *err) {
  const uint64_t toff = size - HURRAY_FILE_TRAILER_LEN + 36; /* the magic's offset */
  static const uint8_t zeros[HURRAY_FILE_TRAILER_LEN];
  /* The rest of the trailer in place (the index ends where it starts): only
   * the magic is damaged, nothing is missing. */
  uint64_t ix = hurray__ld64(trailer), ixlen = hurray__ld64(trailer + 8);
  if (ix >= first && ixlen >= 8 && ixlen <= size && ix == size - HURRAY_FILE_TRAILER_LEN - ixlen)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, toff, "trailer.trailer_magic",
                        "is not \"HRRY\"");
  const char *field = "trailer.trailer_magic";
  if (memcmp(trailer, zeros, sizeof zeros) == 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, toff, field,
                        "is missing: the file's last 40 bytes are zeros, so it is incomplete "
                        "(an unfinished download or copy?)");
  Src s = {mem, b, size};
  Walk w;
  walk_tensors(&s, first, align, max_desc, &w);
  if (w.cut)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, toff, field,
                        "is missing: the file is truncated, it ends at byte %llu inside the %s "
                        "of tensor %u (bytes %llu..%llu): at least %llu bytes are missing, then "
                        "the index and the trailer",
                        (unsigned long long)size, w.cut_in_desc ? "descriptor" : "data",
                        w.complete, (unsigned long long)w.cut_start,
                        (unsigned long long)w.cut_end,
                        (unsigned long long)(w.cut_end - size));
  if (w.complete > 0 && w.end >= size)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, toff, field,
                        "is missing: the file is truncated after its %u tensor%s (at byte %llu): "
                        "the KV section, the index and the trailer are missing",
                        w.complete, HURRAY__S(w.complete), (unsigned long long)size);
  if (w.complete > 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, toff, field,
                        "is missing: the file looks truncated; its %u tensor%s end%s at byte %llu "
                        "and it stops at byte %llu, inside its KV section or index",
                        w.complete, HURRAY__S(w.complete), w.complete == 1 ? "s" : "", (unsigned long long)w.end, (unsigned long long)size);
  return hurray__fail(err, HURRAY_ERR_INVALID_FILE, toff, field,
                      "is not \"HRRY\": the file has a .hrry header but no trailer (truncated, "
                      "or bytes appended after it)");
}
