/*
 * io/file.h - .hrry files from Python (layer 3): hurray.save, hurray.load,
 * hurray.load_kv, hurray.open and hurray.File.
 */
#ifndef HURRAY_PY_IO_FILE_H
#define HURRAY_PY_IO_FILE_H

#include "util/state.h"

#include "util/bytes.h"

/* One views record (name, base, dtype name or None, shape, byte_offset,
 * byte_strides) as a HurrayFileView, its arrays in `arena` and its strings
 * borrowed from the record's str objects (keep the record alive); -1 with
 * TypeError/ValueError. For save(views=) and FileWriter.add_views. */
int hrpy_view_from_py(HrpyArena *arena, PyObject *rec, const char *op, HurrayFileView *v);

/* Creates hurray.File and adds it and the file functions to module m. */
int hrpy_file_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_IO_FILE_H */
