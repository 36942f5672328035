/* Items handed out by the stream reader (include/hurray/stream.h). */
#include "stream/stream_internal.h"

HurrayStatus hurray__stream_item_new(HurrayStreamItemKind kind, HurrayDescriptor *desc,
                                     uint64_t offset, HurrayStreamItem **out) {
  *out = NULL;
  HurrayStreamItem *it = hurray__calloc(1, sizeof *it);
  if (it == NULL) {
    hurray__descriptor_drop(desc);
    return HURRAY_ERR_OUT_OF_MEMORY;
  }
  it->kind = kind;
  it->desc = desc;
  it->offset = offset;
  *out = it;
  return HURRAY_OK;
}

HurrayStatus hurray__stream_item_add_member(HurrayStreamItem *parent, HurrayStreamItem *member) {
  if (parent->member_count == parent->member_cap) {
    /* Grows with what actually arrived, never with the head's claim. */
    uint32_t cap = parent->member_cap == 0 ? 4u : parent->member_cap * 2u;
    if (cap < parent->member_cap) { /* overflow: cannot happen below 2^31 members */
      hurray_stream_item_destroy(&member);
      return HURRAY_ERR_OUT_OF_MEMORY;
    }
    HurrayStreamItem **m = hurray__calloc(cap, sizeof *m);
    if (m == NULL) {
      hurray_stream_item_destroy(&member);
      return HURRAY_ERR_OUT_OF_MEMORY;
    }
    if (parent->member_count > 0)
      memcpy(m, parent->members, parent->member_count * sizeof *m);
    hurray__free(parent->members);
    parent->members = m;
    parent->member_cap = cap;
  }
  parent->members[parent->member_count++] = member;
  return HURRAY_OK;
}

HurrayStreamItemKind hurray_stream_item_kind(const HurrayStreamItem *item) {
  return item == NULL ? (HurrayStreamItemKind)0 : item->kind;
}

const HurrayDescriptor *hurray_stream_item_descriptor(const HurrayStreamItem *item) {
  return item == NULL ? NULL : item->desc;
}

uint64_t hurray_stream_item_offset(const HurrayStreamItem *item) {
  return item == NULL ? 0 : item->offset;
}

uint32_t hurray_stream_item_buffer_count(const HurrayStreamItem *item) {
  return item == NULL ? 0 : item->buffer_count;
}

HurrayStatus hurray_stream_item_buffer(const HurrayStreamItem *item, uint32_t index,
                                       const uint8_t **out_data, uint64_t *out_size) {
  if (out_data != NULL) *out_data = NULL;
  if (out_size != NULL) *out_size = 0;
  if (item == NULL) return HURRAY_ERR_NULL_POINTER;
  if (index >= item->buffer_count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  const HurrayStreamBuf *b = &item->buffers[index];
  if (b->taken) return HURRAY_ERR_INVALID_STATE;
  if (out_data != NULL) *out_data = b->data;
  if (out_size != NULL) *out_size = b->size;
  return HURRAY_OK;
}

bool hurray_stream_item_buffer_is_view(const HurrayStreamItem *item, uint32_t index) {
  if (item == NULL || index >= item->buffer_count) return false;
  return item->buffers[index].view;
}

HurrayStatus hurray_stream_item_take_buffer(HurrayStreamItem *item, uint32_t index,
                                            uint8_t **out_data, uint64_t *out_size) {
  if (out_data != NULL) *out_data = NULL;
  if (out_size != NULL) *out_size = 0;
  if (item == NULL || out_data == NULL) return HURRAY_ERR_NULL_POINTER;
  if (index >= item->buffer_count) return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  HurrayStreamBuf *b = &item->buffers[index];
  if (b->taken || b->view) return HURRAY_ERR_INVALID_STATE;
  *out_data = b->data;
  if (out_size != NULL) *out_size = b->size;
  b->data = NULL;
  b->taken = true;
  return HURRAY_OK;
}

uint32_t hurray_stream_item_member_count(const HurrayStreamItem *item) {
  return item == NULL ? 0 : item->member_count;
}

const HurrayStreamItem *hurray_stream_item_member(const HurrayStreamItem *item, uint32_t index) {
  if (item == NULL || index >= item->member_count) return NULL;
  return item->members[index];
}

void hurray_stream_item_destroy(HurrayStreamItem **item) {
  if (item == NULL || *item == NULL) return;
  HurrayStreamItem *it = *item;
  *item = NULL;
  for (uint32_t i = 0; i < it->buffer_count; i++)
    if (!it->buffers[i].view) hurray_free(it->buffers[i].data);
  hurray__free(it->buffers);
  /* Nesting is bounded by HURRAY_STREAM_MAX_COMPOSITE_DEPTH, so recursion is shallow. */
  for (uint32_t i = 0; i < it->member_count; i++) hurray_stream_item_destroy(&it->members[i]);
  hurray__free(it->members);
  hurray__descriptor_drop(it->desc);
  hurray__free(it);
}
