/*
 * Fetching one tensor: decode its descriptor (the only one touched), check it
 * against its index entry, and locate its buffers in the mapping or read them
 * into owned memory.
 *
 * Buffer placement (both this writer's and the reference's): buffer 0 at
 * data_offset (a multiple of the data alignment A), buffer k at the next
 * multiple of A after buffer k-1 ends; data_length is the span from
 * data_offset to the end of the last buffer. The span must equal
 * data_length exactly, which also proves that the buffers stay inside the
 * region that open checked against every other tensor.
 */
#include <stdio.h>

#include "internal/file.h"

typedef struct FileBuffer {
  const uint8_t *data;
  uint64_t size;
} FileBuffer;

struct HurrayFileTensor {
  atomic_size_t refs;
  HurrayFileSource *source; /* retained; NULL in read mode */
  void *owned;              /* read mode: the data block (hurray_free) */
  HurrayFileTensor *parent; /* a view's base (retained): it holds the bytes */
  HurrayDescriptor *descriptor;
  uint64_t index;
  uint32_t buffer_count;
  size_t name_len;
  FileBuffer *buffers; /* inline, after the struct */
  char *name;          /* inline, NUL-terminated */
};

static atomic_uint_fast64_t g_decodes;

uint64_t hurray__file_descriptor_decodes(void) { return (uint64_t)atomic_load(&g_decodes); }

/* Rewrites a decode error so that it names the tensor and a file offset. */
static HurrayStatus in_file(const HurrayFile *f, uint32_t i, HurrayStatus st,
                            HurrayError *err) {
  if (err == NULL || st == HURRAY_OK) return st;
  HurrayFileIndexEntry entry;
  hurray__file_entry_at(f, i, &entry);
  const HurrayFileIndexEntry *e = &entry;
  char prefix[128];
  int n = snprintf(prefix, sizeof prefix, "tensor \"%.*s\" (index[%u], descriptor at byte %llu): ",
                   (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name, i,
                   (unsigned long long)e->desc_off);
  size_t plen = n < 0 ? 0 : (size_t)n < sizeof prefix ? (size_t)n : sizeof prefix - 1;
  size_t cap = sizeof err->message;
  size_t mlen = strnlen(err->message, cap - 1);
  if (plen + mlen >= cap) mlen = cap - 1 - plen;
  memmove(err->message + plen, err->message, mlen);
  memcpy(err->message, prefix, plen);
  err->message[plen + mlen] = '\0';
  if (err->offset != HURRAY_NO_OFFSET && err->offset < e->desc_len) err->offset += e->desc_off;
  return st;
}

static HurrayStatus decode(const HurrayFile *f, uint32_t i, HurrayDescriptor **out,
                           HurrayError *err) {
  HurrayFileIndexEntry entry;
  hurray__file_entry_at(f, i, &entry);
  const HurrayFileIndexEntry *e = &entry;
  char field[48];
  hurray__path(field, sizeof field, "index[%u].descriptor_length", i);
  if (e->desc_len > f->opts.max_descriptor_bytes)
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, e->desc_off, field,
                        "%u bytes exceeds the limit max_descriptor_bytes = %llu", e->desc_len,
                        (unsigned long long)f->opts.max_descriptor_bytes);
  const uint8_t *bytes;
  uint8_t *owned = NULL;
  if (f->source != NULL) {
    bytes = f->source->base + e->desc_off;
  } else {
    owned = hurray__malloc(e->desc_len);
    if (owned == NULL)
      return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, e->desc_off, field, "out of memory");
    HurrayStatus st =
        hurray__bytes_read(&f->bytes, owned, e->desc_len, e->desc_off, "reading a descriptor",
                           err);
    if (st != HURRAY_OK) {
      hurray__free(owned);
      return st;
    }
    bytes = owned;
  }
  uint32_t own_len = 0;
  HurrayStatus st = hurray_descriptor_peek_length(bytes, e->desc_len, &own_len, err);
  if (st == HURRAY_OK && own_len != e->desc_len)
    st = hurray__fail(err, HURRAY_ERR_INVALID_FILE, e->desc_off + 6, field,
                      "the index says %u bytes but the descriptor says %u", e->desc_len,
                      own_len);
  else if (st == HURRAY_OK) {
    atomic_fetch_add_explicit(&g_decodes, 1, memory_order_relaxed);
    st = hurray_descriptor_decode_ex(bytes, e->desc_len, f->opts.decode_options, out, err);
  }
  hurray__free(owned);
  return in_file(f, i, st, err);
}

HurrayStatus hurray_file_descriptor(const HurrayFile *f, uint64_t index, HurrayDescriptor **out,
                                    HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  if (index >= f->count)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET, "index",
                        "%llu is not below the tensor count %u", (unsigned long long)index,
                        f->count);
  return decode(f, (uint32_t)index, out, err);
}

/* Whether the buffer table of d could be located (a permissive decode of an
 * unknown layout keeps the rest of the descriptor opaque). */
static bool buffers_known(const HurrayDescriptor *d) {
  uint8_t tag = 0;
  if (hurray_descriptor_layout_tag(d, &tag) != HURRAY_OK) return false;
  HurrayTagKind k = hurray_layout_tag_kind(tag);
  return k == HURRAY_TAG_NAMED || k == HURRAY_TAG_PRIVATE;
}

/* Checks the placement of tensor i's buffers (descriptor d): a known layout,
 * data_offset A-aligned, buffer k at the next multiple of A after buffer
 * k-1, declared alignments at most A, the span equal to data_length. Sets
 * *out_nb and *max_align (the largest alignment of a non-empty buffer, at
 * least 64). */
HurrayStatus hurray__file_check_placement(const HurrayFile *f, uint32_t i,
                                          const HurrayDescriptor *d, uint32_t *out_nb,
                                          uint64_t *max_align, HurrayError *err) {
  HurrayFileIndexEntry entry;
  hurray__file_entry_at(f, i, &entry);
  const HurrayFileIndexEntry *e = &entry;
  const uint64_t A = f->info.data_alignment;
  char field[48];
  uint32_t nb = 0;
  HURRAY_TRY(hurray_descriptor_buffer_count(d, &nb));
  if (!buffers_known(d))
    return hurray__fail(err, HURRAY_ERR_UNSUPPORTED, e->desc_off, "layout",
                        "tensor \"%.*s\": the buffers of an unknown layout cannot be located",
                        (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name);
  if (nb > 0 && (e->data_off & (A - 1)) != 0)
    return hurray__fail(err, HURRAY_ERR_INVALID_FILE, e->data_off,
                        hurray__path(field, sizeof field, "index[%u].data_offset", i),
                        "%llu is not a multiple of the data alignment %llu",
                        (unsigned long long)e->data_off, (unsigned long long)A);
  /* Walk the buffers: positions, alignment, and their total span. */
  uint64_t pos = e->data_off, end = e->data_off, align = 64;
  for (uint32_t k = 0; k < nb; k++) {
    const HurrayBufferHandle *h = NULL;
    HURRAY_TRY(hurray_descriptor_buffer(d, k, &h));
    if (k > 0 && hurray__align_up_u64(end, A, &pos)) goto span;
    if (hurray__add_overflow_u64(pos, h->byte_size, &end)) goto span;
    if (end > e->data_off + e->data_len) goto span;
    if (h->byte_size > 0 && h->alignment > A)
      return hurray__fail(err, HURRAY_ERR_MISALIGNED, e->desc_off,
                          hurray__path(field, sizeof field, "buffers[%u].alignment", k),
                          "tensor \"%.*s\": %u exceeds the file's data alignment %llu",
                          (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name,
                          h->alignment, (unsigned long long)A);
    if (h->byte_size > 0 && h->alignment > align) align = h->alignment;
  }
  if (end - e->data_off != e->data_len) goto span;
  *out_nb = nb;
  *max_align = align;
  return HURRAY_OK;
span:
  return hurray__fail(err, HURRAY_ERR_INVALID_FILE, e->data_off,
                      hurray__path(field, sizeof field, "index[%u].data_length", i),
                      "tensor \"%.*s\": data_length %llu does not match its %u buffers laid out "
                      "from data_offset %llu",
                      (int)(e->name_len > 48 ? 48 : e->name_len), (const char *)e->name,
                      (unsigned long long)e->data_len, nb, (unsigned long long)e->data_off);
}

HurrayStatus hurray_file_tensor(const HurrayFile *f, uint64_t index, HurrayFileTensor **out,
                                HurrayError *err) {
  if (out == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "out", "is NULL");
  *out = NULL;
  if (f != NULL && f->source != NULL && f->source->writable && index < f->count) {
    /* Writable views: prove (once) that no two tensors overlap, so that a
     * write through this one never reaches another's bytes or descriptor. */
    const HurrayFileOrder *o;
    HURRAY_TRY(hurray__file_order_get(f, &o, err));
  }
  HurrayDescriptor *d = NULL;
  HURRAY_TRY(hurray_file_descriptor(f, index, &d, err));
  const uint32_t i = (uint32_t)index;
  HurrayFileIndexEntry entry;
  hurray__file_entry_at(f, i, &entry);
  const HurrayFileIndexEntry *e = &entry;
  const uint64_t A = f->info.data_alignment;
  char field[48];
  HurrayFileTensor *t = NULL;
  uint32_t nb = 0;
  uint64_t max_align = 64, pos, end = e->data_off;
  HurrayStatus st = hurray__file_check_placement(f, i, d, &nb, &max_align, err);
  if (st != HURRAY_OK) goto fail;

  size_t name_len = e->name_len;
  size_t bytes = sizeof *t + (size_t)nb * sizeof(FileBuffer) + name_len + 1;
  t = hurray__calloc(1, bytes);
  if (t == NULL) {
    st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, HURRAY_NO_OFFSET, "tensor", "out of memory");
    goto fail;
  }
  atomic_init(&t->refs, 1);
  t->descriptor = d;
  t->index = index;
  t->buffer_count = nb;
  t->buffers = (FileBuffer *)(void *)(t + 1);
  t->name = (char *)(t->buffers + nb);
  t->name_len = name_len;
  memcpy(t->name, e->name, name_len);
  t->name[name_len] = '\0';

  if (f->source == NULL && e->data_len > 0) {
    if (e->data_len > SIZE_MAX) {
      st = hurray__fail(err, HURRAY_ERR_UNSUPPORTED, e->data_off, "tensor", "too large");
      goto fail;
    }
    t->owned = hurray_alloc((size_t)e->data_len, (size_t)max_align);
    if (t->owned == NULL) {
      st = hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, e->data_off, "tensor",
                        "out of memory for %llu bytes", (unsigned long long)e->data_len);
      goto fail;
    }
  }
  const uint8_t *base = f->source != NULL ? f->source->base + e->data_off : t->owned;
  pos = e->data_off;
  for (uint32_t k = 0; k < nb; k++) {
    const HurrayBufferHandle *h = NULL;
    st = hurray_descriptor_buffer(d, k, &h);
    if (st != HURRAY_OK) goto fail;
    if (k > 0) (void)hurray__align_up_u64(end, A, &pos);
    end = pos + h->byte_size;
    t->buffers[k].size = h->byte_size;
    if (h->byte_size == 0) continue; /* data stays NULL */
    const uint8_t *p = base + (pos - e->data_off);
    if (f->source == NULL) {
      st = hurray__bytes_read(&f->bytes, (void *)(uintptr_t)p, h->byte_size, pos,
                              "reading a buffer", err);
      if (st != HURRAY_OK) goto fail;
    } else if (((uintptr_t)p & (h->alignment - 1u)) != 0) {
      st = hurray__fail(err, HURRAY_ERR_MISALIGNED, pos,
                        hurray__path(field, sizeof field, "buffers[%u]", k),
                        "tensor \"%.*s\": address %p does not meet alignment %u (align the "
                        "memory given to hurray_file_open_memory)",
                        (int)(name_len > 48 ? 48 : name_len), t->name, (const void *)p,
                        h->alignment);
      goto fail;
    }
    t->buffers[k].data = p;
  }
  t->source = hurray__source_retain(f->source);
  *out = t;
  return HURRAY_OK;
fail:
  if (t != NULL) {
    hurray_free(t->owned);
    hurray__free(t);
  }
  hurray__descriptor_drop(d);
  return st;
}

HurrayFileTensor *hurray_file_tensor_retain(HurrayFileTensor *t) {
  if (t != NULL) atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  return t;
}

void hurray_file_tensor_release(HurrayFileTensor **pt) {
  if (pt == NULL || *pt == NULL) return;
  HurrayFileTensor *t = *pt;
  *pt = NULL;
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
  hurray__descriptor_drop(t->descriptor);
  hurray_free(t->owned);
  hurray__source_release(t->source);
  hurray_file_tensor_release(&t->parent);
  hurray__free(t);
}

HurrayStatus hurray__file_tensor_derive(HurrayFileTensor *base, const char *name,
                                        size_t name_len, HurrayDescriptor *d,
                                        HurrayFileTensor **out) {
  *out = NULL;
  uint32_t nb = 0;
  if (hurray_descriptor_buffer_count(d, &nb) != HURRAY_OK || nb > base->buffer_count) {
    hurray__descriptor_drop(d);
    return HURRAY_ERR_INTERNAL; /* more buffers than the base has */
  }
  HurrayFileTensor *t =
      hurray__calloc(1, sizeof *t + (size_t)nb * sizeof(FileBuffer) + name_len + 1);
  if (t == NULL) {
    hurray__descriptor_drop(d);
    return HURRAY_ERR_OUT_OF_MEMORY;
  }
  atomic_init(&t->refs, 1);
  t->descriptor = d;
  t->index = base->index;
  t->buffer_count = nb;
  t->buffers = (FileBuffer *)(void *)(t + 1);
  t->name = (char *)(t->buffers + nb);
  t->name_len = name_len;
  memcpy(t->name, name, name_len);
  t->name[name_len] = '\0';
  for (uint32_t k = 0; k < nb; k++) t->buffers[k] = base->buffers[k]; /* its first nb */
  /* the same bytes, so the same mapping (is_mapped, is_writable answer alike) */
  t->source = hurray__source_retain(base->source);
  t->parent = hurray_file_tensor_retain(base);
  *out = t;
  return HURRAY_OK;
}

const HurrayDescriptor *hurray_file_tensor_descriptor(const HurrayFileTensor *t) {
  return t != NULL ? t->descriptor : NULL;
}

const char *hurray_file_tensor_name(const HurrayFileTensor *t, size_t *len) {
  if (t == NULL) {
    if (len != NULL) *len = 0;
    return NULL;
  }
  if (len != NULL) *len = t->name_len;
  return t->name;
}

uint64_t hurray_file_tensor_index(const HurrayFileTensor *t) { return t != NULL ? t->index : 0; }

uint32_t hurray_file_tensor_buffer_count(const HurrayFileTensor *t) {
  return t != NULL ? t->buffer_count : 0;
}

HurrayStatus hurray_file_tensor_buffer(const HurrayFileTensor *t, uint32_t i, const void **data,
                                       uint64_t *size) {
  if (t == NULL) return HURRAY_ERR_NULL_POINTER;
  if (i >= t->buffer_count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  if (data != NULL) *data = t->buffers[i].data;
  if (size != NULL) *size = t->buffers[i].size;
  return HURRAY_OK;
}

bool hurray_file_tensor_is_mapped(const HurrayFileTensor *t) {
  return t != NULL && t->source != NULL;
}

bool hurray_file_tensor_is_writable(const HurrayFileTensor *t) {
  return t != NULL && (t->source == NULL || t->source->writable);
}
