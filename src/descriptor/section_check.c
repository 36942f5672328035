/*
 * The rules a statistics or shard section states about itself
 * (hurray_statistics_check, hurray_shard_check; include/hurray/descriptor.h),
 * run as a descriptor carrying the section is checked: on a zero-extent
 * row-major float32 tensor, so only the section's own rules can fail. The
 * rules that need the tensor (nnz against a sparse layout, offset + shape
 * within the parent) run when the section is attached to one.
 */
#include "descriptor_impl.h"

#include <string.h>

static HurrayStatus probe(uint32_t rank, const HurrayStatistics *s, const HurrayShard *sh,
                          HurrayError *err) {
  if (rank > HURRAY_MAX_RANK)
    return hurray__fail(err, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_NO_OFFSET, "rank",
                        "%u exceeds the maximum rank %u", rank, HURRAY_MAX_RANK);
  uint64_t shape[HURRAY_MAX_RANK] = {0};
  HurrayBufferHandle h;
  memset(&h, 0, sizeof h);
  h.alignment = 1;
  HurrayDescriptorFields f;
  memset(&f, 0, sizeof f);
  f.type_tag = HURRAY_DTYPE_FLOAT32;
  f.rank = rank;
  f.shape = shape;
  f.layout.tag = HURRAY_LAYOUT_ROW_MAJOR;
  f.buffer_count = 1;
  f.buffers = &h;
  f.statistics = s;
  f.shard = sh;
  HurrayError e;
  hurray_error_clear(&e);
  HurrayStatus rc = hurray_descriptor_validate(&f, HURRAY_DECODE_STRICT, &e);
  if (rc == HURRAY_OK) return HURRAY_OK;
  e.offset = HURRAY_NO_OFFSET; /* it would point into the probe */
  hurray__error_compose(&e);
  if (err != NULL) *err = e;
  return rc;
}

HurrayStatus hurray_statistics_check(const HurrayStatistics *stats, HurrayError *err) {
  if (stats == NULL)
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "statistics", "is NULL");
  return probe(1, stats, NULL, err);
}

HurrayStatus hurray_shard_check(uint32_t rank, const HurrayShard *shard, HurrayError *err) {
  if (shard == NULL || (rank > 0 && (shard->parent_shape == NULL || shard->offset == NULL)))
    return hurray__fail(err, HURRAY_ERR_NULL_POINTER, HURRAY_NO_OFFSET, "shard", "is NULL");
  return probe(rank, NULL, shard, err);
}
