/*
 * io/file.h - .hrry files from Python (layer 3): hurray.save, hurray.load,
 * hurray.load_kv, hurray.open and hurray.File.
 */
#ifndef HURRAY_PY_IO_FILE_H
#define HURRAY_PY_IO_FILE_H

#include "util/state.h"

/* Creates hurray.File and adds it and the file functions to module m. */
int hrpy_file_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_IO_FILE_H */
