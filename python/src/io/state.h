/*
 * io/state.h - what the io layer keeps in the module state: the classes of
 * files, partial reads and streams.
 *
 * Layer 3 (io/). Reached as st->io (util/state.h); allocated, traversed and
 * cleared by module/module.c through the functions below.
 */
#ifndef HURRAY_PY_IO_STATE_H
#define HURRAY_PY_IO_STATE_H

#include "util/state.h"

struct HrpyIoState {
  PyTypeObject *FileType;         /* io/file.c: hurray.File */
  PyTypeObject *VerifyReportType; /* io/file.c: hurray.VerifyReport (File.verify) */
  PyTypeObject *TensorSliceType;  /* io/slice.c: hurray.TensorSlice (File.get_slice) */
  PyTypeObject *StreamReaderType; /* io/stream.c */
  PyTypeObject *StreamWriterType; /* io/stream.c */
};

static inline int hrpy_io_state_traverse(HrpyIoState *s, visitproc visit, void *arg) {
  if (s == NULL) return 0;
  Py_VISIT(s->FileType);
  Py_VISIT(s->VerifyReportType);
  Py_VISIT(s->TensorSliceType);
  Py_VISIT(s->StreamReaderType);
  Py_VISIT(s->StreamWriterType);
  return 0;
}

static inline void hrpy_io_state_clear(HrpyIoState *s) {
  if (s == NULL) return;
  Py_CLEAR(s->FileType);
  Py_CLEAR(s->VerifyReportType);
  Py_CLEAR(s->TensorSliceType);
  Py_CLEAR(s->StreamReaderType);
  Py_CLEAR(s->StreamWriterType);
}

#endif /* HURRAY_PY_IO_STATE_H */
