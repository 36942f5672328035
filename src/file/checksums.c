/*
 * Data checksums (docs/reference/file-format.md § Data checksums): the writer records a
 * CRC-32C of every tensor's descriptor and data region in the KV entry
 * HURRAY_FILE_KV_DATA_CRC32C (KV bytes, 8 per index entry, in index order);
 * hurray_file_verify_data checks the file's bytes against it.
 *
 * No wire structure is added: a reader that knows nothing of the entry sees
 * one more KV value and loads the file as any other. The record is found
 * and checked when a verification asks for it, never at open, so a reader
 * that does not verify pays nothing.
 *
 * Mapped files (and caller memory) are checksummed through the mapping, 4 MiB
 * at a time, each piece's pages mapped first in one call (MADV_POPULATE_READ)
 * rather than by a fault every few pages; files
 * opened with HURRAY_FILE_ACCESS_READ with positioned reads through one
 * 1 MiB block.
 */
#include <stdio.h>

#include "internal/file.h"

#define MAP_PIECE ((uint64_t)4 << 20)
#define READ_BLOCK ((size_t)1 << 20)

typedef struct Checker {
  const HurrayFile *f;
  const uint8_t *record; /* 8 bytes per index entry */
  uint8_t *block;        /* read mode: READ_BLOCK bytes, allocated on first need */
  HurrayFileDataReport report;
} Checker;

/* The record, checked: KV bytes of 8 per index entry. */
static HurrayStatus find_record(Checker *c, HurrayError *err) {
  const HurrayFile *f = c->f;
  const HurrayKvValue *v = NULL;
  if (hurray_file_kv_find(f, HURRAY_FILE_KV_DATA_CRC32C, HURRAY_FILE_KV_DATA_CRC32C_LEN, &v) !=
          HURRAY_OK ||
      v == NULL)
    return hurray__fail(err, HURRAY_ERR_NOT_FOUND, HURRAY_NO_OFFSET,
                        "kv[\"" HURRAY_FILE_KV_DATA_CRC32C "\"]",
                        "the file carries no data checksums (it was written without them)");
  /* Where the value lies in the file, for messages: the KV bytes are the
   * mapping (or caller memory), or the block read at open. */
  uint64_t off = HURRAY_NO_OFFSET;
  if (v->tag == HURRAY_KV_BYTES && v->v.bytes.data != NULL) {
    const uint8_t *kv = f->source != NULL ? f->source->base + f->info.kv_offset : f->owned_kv;
    if (kv != NULL && v->v.bytes.data >= kv && v->v.bytes.data < kv + f->info.kv_length)
      off = f->info.kv_offset + (uint64_t)(v->v.bytes.data - kv);
  }
  if (v->tag != HURRAY_KV_BYTES)
    return hurray__fail(err, HURRAY_ERR_INVALID_KV, off, "kv[\"" HURRAY_FILE_KV_DATA_CRC32C "\"]",
                        "has tag 0x%02X; the data checksums are KV bytes (0x06)", v->tag);
  if ((uint64_t)v->v.bytes.len != (uint64_t)f->count * HURRAY__DATA_CRC_ENTRY)
    return hurray__fail(err, HURRAY_ERR_INVALID_KV, off, "kv[\"" HURRAY_FILE_KV_DATA_CRC32C "\"]",
                        "holds %u bytes, expected %llu (8 for each of %u tensor%s)",
                        v->v.bytes.len, (unsigned long long)f->count * HURRAY__DATA_CRC_ENTRY,
                        f->count, HURRAY__S(f->count));
  c->record = v->v.bytes.data;
  return HURRAY_OK;
}

/* CRC-32C of the file's bytes [off, off + len). */
static HurrayStatus crc_of(Checker *c, uint64_t off, uint64_t len, uint32_t *out,
                           HurrayError *err) {
  const HurrayFile *f = c->f;
  uint32_t crc = 0;
  if (f->source != NULL) {
    const uint8_t *p = f->source->base + off;
    while (len > 0) {
      uint64_t n = len < MAP_PIECE ? len : MAP_PIECE;
      hurray__os_prefault_read(p, (size_t)n);
      crc = hurray_crc32c(crc, p, (size_t)n);
      p += n;
      len -= n;
    }
  } else {
    if (len > 0 && c->block == NULL) {
      c->block = hurray__malloc(READ_BLOCK);
      if (c->block == NULL)
        return hurray__fail(err, HURRAY_ERR_OUT_OF_MEMORY, off, "verify", "out of memory");
    }
    while (len > 0) {
      size_t n = len < READ_BLOCK ? (size_t)len : READ_BLOCK;
      HURRAY_TRY(hurray__bytes_read(&f->bytes, c->block, n, off,
                                    "reading a tensor to verify it", err));
      crc = hurray_crc32c(crc, c->block, n);
      off += n;
      len -= n;
    }
  }
  *out = crc;
  return HURRAY_OK;
}

static HurrayStatus mismatch(const HurrayFile *f, uint32_t i, bool data, uint64_t off,
                             uint64_t len, uint32_t got, uint32_t want, HurrayError *err) {
  size_t nlen = 0;
  const uint8_t *name = hurray__file_entry_name(f, i, &nlen);
  char field[64];
  hurray__path(field, sizeof field, "index[%u].%s", i, data ? "data" : "descriptor");
  return hurray__fail(err, HURRAY_ERR_CRC_MISMATCH, off, field,
                      "tensor \"%.*s\" is damaged: its %s [%llu, +%llu) has CRC-32C 0x%08X, "
                      "the file recorded 0x%08X",
                      (int)(nlen > 64 ? 64 : nlen), (const char *)name,
                      data ? "data" : "descriptor", (unsigned long long)off,
                      (unsigned long long)len, got, want);
}

static HurrayStatus check_one(Checker *c, uint32_t i, HurrayError *err) {
  HurrayFileIndexEntry e;
  hurray__file_entry_at(c->f, i, &e);
  const uint8_t *r = c->record + (size_t)i * HURRAY__DATA_CRC_ENTRY;
  uint32_t got = 0;
  HURRAY_TRY(crc_of(c, e.desc_off, e.desc_len, &got, err));
  if (got != hurray__ld32(r))
    return mismatch(c->f, i, false, e.desc_off, e.desc_len, got, hurray__ld32(r), err);
  HURRAY_TRY(crc_of(c, e.data_off, e.data_len, &got, err));
  if (got != hurray__ld32(r + 4))
    return mismatch(c->f, i, true, e.data_off, e.data_len, got, hurray__ld32(r + 4), err);
  c->report.tensors++;
  c->report.bytes += e.desc_len + e.data_len;
  return HURRAY_OK;
}

HurrayStatus hurray_file_verify_data(const HurrayFile *f, HurrayFileDataReport *report,
                                     HurrayError *err) {
  if (report != NULL) memset(report, 0, sizeof *report);
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  Checker c;
  memset(&c, 0, sizeof c);
  c.f = f;
  HurrayStatus st = find_record(&c, err);
  for (uint32_t i = 0; st == HURRAY_OK && i < f->count; i++) st = check_one(&c, i, err);
  hurray__free(c.block);
  if (report != NULL) *report = c.report;
  return st;
}

HurrayStatus hurray_file_verify_tensor_data(const HurrayFile *f, uint64_t index,
                                            HurrayError *err) {
  if (f == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "file", "is NULL");
  if (index >= f->count)
    return hurray__fail(err, HURRAY_ERR_INDEX_OUT_OF_BOUNDS, HURRAY_NO_OFFSET, "index",
                        "%llu is not below the tensor count %u", (unsigned long long)index,
                        f->count);
  Checker c;
  memset(&c, 0, sizeof c);
  c.f = f;
  HurrayStatus st = find_record(&c, err);
  if (st == HURRAY_OK) st = check_one(&c, (uint32_t)index, err);
  hurray__free(c.block);
  return st;
}
