/*
 * io/kv.h - file-level key-value metadata between Python and the C writer
 * and reader (layer 3).
 */
#ifndef HURRAY_PY_IO_KV_H
#define HURRAY_PY_IO_KV_H

#include "util/bytes.h"

/* A Python dict converted for hurray_file_writer_add_kv: entry i is
 * keys[i] (key_lens[i] bytes, not NUL-terminated) -> values[i]. Every pointer
 * is borrowed from objects `items` keeps alive, or from the arena. */
typedef struct HrpyKvList {
  size_t count;
  const char **keys;
  size_t *key_lens;
  HurrayKvValue *values;
  HrpyArena arena;
  PyObject *items; /* list of the objects the pointers borrow from */
} HrpyKvList;
/* Converts `kv` (a mapping of str to KV values, or None/NULL for none) into
 * *l; TypeError / OverflowError / ValueError naming the key. Call
 * hrpy_kv_list_free after either outcome. */
int hrpy_kv_from_mapping(HrpyState *st, PyObject *kv, HrpyKvList *l);
void hrpy_kv_list_free(HrpyKvList *l);
/* One KV value as a Python object (`key` names it in errors). */
PyObject *hrpy_kv_value_to_py(HrpyState *st, PyObject *key, const HurrayKvValue *v);
/* Default bound on what a KV section may take as Python objects. */
#define HRPY_KV_MAX_MEMORY_DEFAULT ((uint64_t)256 << 20)
/* The KV section of an open file as a new dict, in file order; `own`: with
 * the records hurray writes for itself (hurray_file_kv_is_own). Refused with
 * hurray.FileError, before anything is built, when the section's estimated
 * size as Python objects exceeds `max_memory` bytes (UINT64_MAX: no bound). */
PyObject *hrpy_kv_to_dict(HrpyState *st, const HurrayFile *f, uint64_t max_memory, bool own);
/* The max_kv_memory= argument: NULL for the default, None for no bound, else
 * a byte count. */
int hrpy_kv_max_memory_arg(PyObject *o, uint64_t *out);

#endif /* HURRAY_PY_IO_KV_H */
