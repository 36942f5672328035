/* HurrayBufferList (include/hurray/buffer.h; upstream docs/impl/c-ffi.md
 * § Buffer Lists). */
#include "ffi/buffer_internal.h"

struct HurrayBufferList {
  uint64_t magic; /* HURRAY__MAGIC_LIST while live; first field */
  HurrayBuffer **items; /* len used slots of cap; each owns one reference */
  size_t len;
  size_t cap;
};

/* Magic of a list whose destroy is under way: its accessors still answer
 * (a slot already dropped reads as absent); push and destroy refuse it. */
#define MAGIC_LIST_DYING UINT64_C(0x485252594C535444) /* "HRRYLSTD" */

static HurrayStatus list_check_readable(const HurrayBufferList *l) {
  HurrayStatus st = hurray__handle_check(l, HURRAY__MAGIC_LIST);
  if (st != HURRAY_OK && hurray__handle_check(l, MAGIC_LIST_DYING) == HURRAY_OK) st = HURRAY_OK;
  return st;
}

/* A capacity hint never reserves more than one descriptor can reference. */
#define LIST_HINT_CAP ((size_t)HURRAY_MAX_BUFFERS + 1u)

static HurrayStatus list_reserve(HurrayBufferList *l, size_t want) {
  if (want <= l->cap) return HURRAY_OK;
  size_t cap = l->cap < 4 ? 4 : l->cap;
  while (cap < want) {
    if (cap > SIZE_MAX / 2 / sizeof *l->items) return HURRAY_ERR_OUT_OF_MEMORY;
    cap *= 2;
  }
  HurrayBuffer **items = hurray__malloc(cap * sizeof *items);
  if (items == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  if (l->len != 0) memcpy(items, l->items, l->len * sizeof *items);
  hurray__free(l->items);
  l->items = items;
  l->cap = cap;
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_list_new(uint64_t capacity, HurrayBufferList **out_list) {
  if (out_list == NULL) return HURRAY_ERR_NULL_POINTER;
  *out_list = NULL;
  HurrayBufferList *l = hurray__malloc(sizeof *l);
  if (l == NULL) return HURRAY_ERR_OUT_OF_MEMORY;
  l->magic = HURRAY__MAGIC_LIST;
  l->items = NULL;
  l->len = 0;
  l->cap = 0;
  size_t hint = capacity < LIST_HINT_CAP ? (size_t)capacity : LIST_HINT_CAP;
  if (hint != 0) {
    l->items = hurray__malloc(hint * sizeof *l->items);
    if (l->items == NULL) {
      hurray__free(l);
      return HURRAY_ERR_OUT_OF_MEMORY;
    }
    l->cap = hint;
  }
  hurray__handle_born(l);
  *out_list = l;
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_list_push(HurrayBufferList *list, HurrayBuffer *buffer) {
  if (list == NULL || buffer == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(hurray__handle_check(list, HURRAY__MAGIC_LIST));
  HURRAY_TRY(hurray__handle_check(buffer, HURRAY__MAGIC_BUFFER));
  if (list->len == SIZE_MAX) return HURRAY_ERR_OUT_OF_MEMORY;
  /* Grow first: once the reference has moved, nothing may fail. */
  HURRAY_TRY(list_reserve(list, list->len + 1));
  HURRAY_TRY(hurray__buffer_list_acquire(buffer));
  list->items[list->len++] = buffer;
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_list_len(const HurrayBufferList *list, uint64_t *out_len) {
  if (list == NULL || out_len == NULL) return HURRAY_ERR_NULL_POINTER;
  HURRAY_TRY(list_check_readable(list));
  *out_len = (uint64_t)list->len;
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_list_get(const HurrayBufferList *list, uint64_t index,
                                    HurrayBuffer **out_buffer) {
  if (list == NULL || out_buffer == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayStatus st = list_check_readable(list);
  if (st != HURRAY_OK) {
    *out_buffer = NULL;
    return st;
  }
  /* A NULL slot only exists while the list is being destroyed. */
  if (index >= (uint64_t)list->len || list->items[index] == NULL) {
    *out_buffer = NULL;
    return HURRAY_ERR_INDEX_OUT_OF_BOUNDS;
  }
  *out_buffer = list->items[index];
  return HURRAY_OK;
}

HurrayStatus hurray_buffer_list_destroy(HurrayBufferList **list) {
  if (list == NULL) return HURRAY_ERR_NULL_POINTER;
  HurrayBufferList *l = *list;
  if (l == NULL) return HURRAY_OK;
  HURRAY_TRY(hurray__handle_check(l, HURRAY__MAGIC_LIST));
  /* The caller's variable dies first, and the list is marked as dying, so a
   * release callback that re-enters (which the contract forbids) cannot
   * start a second destroy. Each slot is nulled before its reference is
   * dropped: a callback that reads the list sees that buffer gone, never a
   * handle it could drop twice. */
  *list = NULL;
  l->magic = MAGIC_LIST_DYING;
  for (size_t i = 0; i < l->len; i++) {
    HurrayBuffer *b = l->items[i];
    l->items[i] = NULL;
    if (b != NULL) hurray__buffer_list_release(b);
  }
  hurray__free(l->items);
  hurray__handle_bury(l, &l->magic);
  hurray__free(l);
  return HURRAY_OK;
}
