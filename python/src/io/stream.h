/*
 * io/stream.h - the streaming format from Python (layer 3):
 * hurray.StreamReader and hurray.StreamWriter.
 */
#ifndef HURRAY_PY_IO_STREAM_H
#define HURRAY_PY_IO_STREAM_H

#include "util/state.h"

/* Creates the two classes and adds them to module m. */
int hrpy_stream_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_IO_STREAM_H */
