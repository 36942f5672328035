/*
 * Identity checks shared by the handles of the library (buffer, buffer list,
 * tensor context, descriptor). Never installed.
 *
 * Every handle struct starts with a uint64_t `magic` naming its kind. Two
 * checks guard each entry point:
 *
 *  - The graveyard (only when HURRAY_HANDLE_CHECKS is 1, the default without
 *    NDEBUG): a fixed table of the addresses of recently destroyed handles,
 *    filled *before* a handle is freed and cleared when an allocation lands on
 *    a remembered address again. A pointer found there is reported as
 *    HURRAY_ERR_INTERNAL without reading the memory it points to, so the
 *    check itself never touches freed memory (ASan and valgrind stay quiet).
 *    It is 4-way set-associative (1024 sets): a handle is forgotten when four
 *    later destroyed handles land in its set, or when its address is reused
 *    by a new handle (then the stale pointer and the live handle cannot be
 *    told apart).
 *
 *  - The magic field (always): a live handle of the expected kind. This
 *    catches a handle of another kind, or an object that is not a handle,
 *    passed by mistake. Before a handle is freed its magic is overwritten.
 */
#ifndef HURRAY_FFI_HANDLES_H
#define HURRAY_FFI_HANDLES_H

#include "internal/common.h"

#ifndef HURRAY_HANDLE_CHECKS
#ifdef NDEBUG
#define HURRAY_HANDLE_CHECKS 0
#else
#define HURRAY_HANDLE_CHECKS 1
#endif
#endif

#define HURRAY__MAGIC_BUFFER UINT64_C(0x4852525942554631)  /* "HRRYBUF1" */
#define HURRAY__MAGIC_LIST UINT64_C(0x485252594C535431)    /* "HRRYLST1" */
#define HURRAY__MAGIC_CONTEXT UINT64_C(0x4852525943545831) /* "HRRYCTX1" */
#define HURRAY__MAGIC_DESCRIPTOR UINT64_C(0x4852525944455331) /* "HRRYDES1" */
#define HURRAY__MAGIC_DEAD UINT64_C(0x44454144DEADDEAD)

/*
 * HURRAY_OK when `h` (non-NULL) is a live handle whose first field holds
 * `magic`; HURRAY_ERR_INTERNAL when it was destroyed (graveyard) or its magic
 * is wrong.
 */
HURRAY_INTERNAL HURRAY_NODISCARD HurrayStatus hurray__handle_check(const void *h, uint64_t magic);

/* A new handle was just allocated at `h`: forget any graveyard entry there. */
HURRAY_INTERNAL void hurray__handle_born(const void *h);

/* `h` is about to be freed: poison its magic (the uint64_t at *magic_field)
 * and remember the address in the graveyard. Call before freeing. */
HURRAY_INTERNAL void hurray__handle_bury(const void *h, uint64_t *magic_field);

#endif /* HURRAY_FFI_HANDLES_H */
