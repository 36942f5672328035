/*
 * io/writer.h - writing a .hrry file one tensor at a time (layer 3):
 * hurray._hurray._FileWriter, the incremental writer under hurray.FileWriter.
 */
#ifndef HURRAY_PY_IO_WRITER_H
#define HURRAY_PY_IO_WRITER_H

#include "util/state.h"

/* Creates the type _FileWriter and adds it to module m. */
int hrpy_writer_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_IO_WRITER_H */
