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

/* The views records of `seq` (a PySequence_Fast) into c->views (in `arena`). */
int hrpy_views_from_py(HrpyArena *arena, PyObject *seq, const char *op, HurrayFileContents *c);

/* The node that writes `obj` (a hurray.Tensor, or a hurray.Composite whose
 * members the C writer names "{name}.{i}") under `name` (borrowed: keep its
 * str alive; NULL for a stream, hurray_stream_writer_write_tree), its arrays
 * in `arena`; -1 with UnsupportedError for device memory this process cannot
 * read ("op: tensor 'name'"). */
int hrpy_save_node(HrpyState *st, HrpyArena *a, PyObject *obj, const char *name, size_t len,
                   const char *op, HurrayFileCompositeNode *node);

/* Raises a failed hurray_file_save / hurray_file_writer_add_contents of `c`,
 * naming the tensor, view or KV key (a view breaking a rule: ValueError), or
 * for opening and finishing the file image (path NULL) or the file at
 * `path` (hurray.FileError; `c` is read only at the tensor, view and KV
 * stages, NULL allowed otherwise). Returns NULL. */
PyObject *hrpy_raise_save(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                          const HurrayFileContents *c, const HurrayFileSaveFailure *fail,
                          const char *op, const char *path);

/* Creates hurray.File and adds it and the file functions to module m. */
int hrpy_file_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_IO_FILE_H */
