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

/* ---- converters: one family for every integer, enumeration and array ------
 *
 * Integers: an int or an object with __index__, never a bool; anything else
 * is a TypeError "<ctx>: <what> must be an int, not <type>". A value outside
 * [lo, hi] raises `range_exc` "<ctx>: <what> must be in [lo, hi], got <v>":
 * the plain forms raise hurray.InvalidDescriptorError (a descriptor field),
 * the _as forms the class the caller names (ValueError for a plain argument,
 * OverflowError for a C int). Return 0, or -1 with the exception set.
 */
int hrpy_arg_int_as(PyObject *range_exc, PyObject *o, const char *ctx, const char *what,
                    int64_t lo, int64_t hi, int64_t *out);
int hrpy_arg_uint_as(PyObject *range_exc, PyObject *o, const char *ctx, const char *what,
                     uint64_t hi, uint64_t *out);
int hrpy_arg_i64(HrpyState *st, PyObject *o, const char *ctx, const char *what, int64_t lo,
                 int64_t hi, int64_t *out);
int hrpy_arg_u64(HrpyState *st, PyObject *o, const char *ctx, const char *what, uint64_t hi,
                 uint64_t *out);
int hrpy_arg_u32(HrpyState *st, PyObject *o, const char *ctx, const char *what, uint32_t *out);
/* An exact int (what PyNumber_Index gives) as sign and magnitude, what
 * hurray_scalar_from_int takes: 1, or 0 when the magnitude needs more than
 * 64 bits (*negative still set); -1 with an exception on error. */
int hrpy_int_parts(PyObject *v, bool *negative, uint64_t *magnitude);
/* A float (int accepted, bool refused): TypeError otherwise. */
int hrpy_arg_float(PyObject *o, const char *ctx, const char *what, double *out);
/* Exactly True or False: TypeError otherwise. */
int hrpy_arg_bool(PyObject *o, const char *ctx, const char *what, bool *out);
/* A flag keyword by truth value; `dflt` when not given (o NULL). */
int hrpy_arg_flag(PyObject *o, bool dflt, bool *out);

/* A sequence of at most HURRAY_MAX_RANK ints into `out` (an array of the
 * kind's type); *n gets its length. Entries are named "<what>[i]". */
typedef enum { HRPY_ARR_I64, HRPY_ARR_U64, HRPY_ARR_U32 } HrpyArrKind;
int hrpy_arg_int_array(HrpyState *st, PyObject *seq, const char *ctx, const char *what,
                       HrpyArrKind kind, void *out, uint32_t *n);

/* A closed enumeration spelled as lowercase strings: names[i] <-> values[i]. */
typedef struct HrpyEnum {
  const char *const *names;
  const uint8_t *values;
  int count;
} HrpyEnum;
/* A str naming one value: TypeError for a non-str, ValueError listing the
 * choices for another string. */
int hrpy_arg_enum(PyObject *o, const HrpyEnum *e, const char *ctx, const char *what,
                  uint8_t *out);

/* ---- results ---------------------------------------------------------------- */

/* Tuples of ints from C arrays (new references). */
PyObject *hrpy_tuple_i64(const int64_t *a, uint32_t n);
PyObject *hrpy_tuple_u64(const uint64_t *a, uint32_t n);
PyObject *hrpy_tuple_u32(const uint32_t *a, uint32_t n);

#endif /* HURRAY_PY_UTIL_ARGS_H */
