/*
 * util/args.h - converting arguments and results (layer 0): the one keyword
 * parser, the copy= policy, paths, and shapes in both directions.
 */
#ifndef HURRAY_PY_UTIL_ARGS_H
#define HURRAY_PY_UTIL_ARGS_H

#include "util/state.h"

/*
 * A small parser for METH_FASTCALL | METH_KEYWORDS. `names` lists every
 * parameter (NULL-terminated): the first `npos` may be passed positionally,
 * the rest are keyword-only; the first `nreq` are required. `out` receives
 * borrowed references (NULL when not given). Raises TypeError like CPython.
 */
int hrpy_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames, const char *const *names, int npos, int nreq,
                    PyObject **out);

/* The same parser for a tuple and a dict (tp_new, tp_init): one argument
 * system for every function and constructor of the module. */
int hrpy_parse_tuple(const char *fname, PyObject *args, PyObject *kwargs,
                     const char *const *names, int npos, int nreq, PyObject **out);

/* `copy` keyword: None -> -1, False -> 0, True -> 1; other objects: TypeError. */
int hrpy_parse_copy(PyObject *obj, int *out);

/* A path argument (str, bytes or os.PathLike) as file-system bytes (new
 * reference to a bytes object); TypeError for anything else. */
PyObject *hrpy_fs_path(PyObject *obj);

/* Shape parsing: an int, or a sequence of int >= 0 or None (dynamic). Fills
 * out[rank] (HURRAY_DYNAMIC_DIM for None; `out` has HURRAY_MAX_RANK entries).
 * InvalidDescriptorError / TypeError naming `context`. */
int hrpy_parse_shape(HrpyState *st, PyObject *obj, uint64_t *out, uint32_t *rank,
                     const char *context);

/* Shape tuple (None for a dynamic dimension); new reference. */
PyObject *hrpy_shape_tuple(uint32_t rank, const uint64_t *shape);
/* Element count, or Py_None if any dimension is dynamic; new reference. */
PyObject *hrpy_size_object(uint32_t rank, const uint64_t *shape);

#endif /* HURRAY_PY_UTIL_ARGS_H */
