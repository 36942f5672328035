/*
 * io/slice.h - hurray.TensorSlice (layer 3): partial reads of one tensor of
 * an open file, File.get_slice(name)[...], as safetensors' get_slice.
 */
#ifndef HURRAY_PY_IO_SLICE_H
#define HURRAY_PY_IO_SLICE_H

#include "util/state.h"

/*
 * Raises what a failure of libhurray's views functions means in Python: a
 * record the C reader refuses (HURRAY_ERR_INVALID_KV) is a ValueError naming
 * the record, the view and the rule; anything else the status's exception.
 * Returns NULL. (Here, below io/file.c, so both readers share it.)
 */
PyObject *hrpy_raise_views(HrpyState *st, HurrayStatus rc, const HurrayError *err,
                           const char *op);

/* Creates hurray.TensorSlice into st->io->TensorSliceType and adds it to m. */
int hrpy_slice_init(PyObject *m, HrpyState *st);

/*
 * How a TensorSlice reaches the C handle of the file it came from (io/file.c
 * lends it, so this file never calls into file.c): `acquire` returns the
 * handle with one call counted in flight, or NULL with ValueError once the
 * file is closed; `release` ends that call. Static storage.
 */
typedef struct HrpySliceLease {
  const HurrayFile *(*acquire)(PyObject *file);
  void (*release)(PyObject *file);
} HrpySliceLease;

/*
 * file.get_slice(name): looks `name` up (KeyError when absent), decodes its
 * descriptor only (no data is read), refuses what cannot be sliced
 * (composite heads, sparse and block-paged layouts, quantization schemes
 * other than per-tensor: hurray.UnsupportedError naming them) and returns a
 * new hurray.TensorSlice holding a reference to `file`.
 */
PyObject *hrpy_slice_open(HrpyState *st, PyObject *file, const HrpySliceLease *lease,
                          PyObject *name);

#endif /* HURRAY_PY_IO_SLICE_H */
