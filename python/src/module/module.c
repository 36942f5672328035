/*
 * module/module.c - the hurray._hurray extension module: multi-phase init, module
 * state, constants and the module-level functions.
 */
#include "util/state.h"

#include "core/state.h"
#include "interop/state.h"
#include "io/state.h"
#include "types/state.h"

#include "core/buffer_handle.h"
#include "core/device.h"
#include "core/dtype.h"
#include "interop/allocator.h"
#include "interop/dlpack.h"
#include "interop/native.h"
#include "interop/ndarray.h"
#include "interop/numpy.h"
#include "interop/pickle.h"
#include "interop/sparse.h"
#include "io/file.h"
#include "io/net.h"
#include "io/slice.h"
#include "io/stream.h"
#include "io/writer.h"
#include "module/tensor_class.h"
#include "types/composite.h"
#include "types/creation.h"
#include "types/descriptor.h"
#include "types/layout.h"
#include "types/quant.h"
#include "types/quantize.h"
#include "types/sections.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"

#include <stdlib.h>
#include <string.h>

/* ---- module functions ------------------------------------------------------ */

static PyObject *m_buffer_size_bytes(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"dtype", "count", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("buffer_size_bytes", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  uint8_t tag;
  if (hrpy_dtype_converter(st, a[0], &tag) < 0) return NULL;
  if (hurray_dtype_info(tag) == NULL) {
    return hrpy_raise(st->UnsupportedError,
                     "buffer_size_bytes: a private type (tag 0x%02x) is sized by its "
                     "descriptor's extension type section, not by its tag",
                     (unsigned)tag);
  }
  uint64_t count;
  if (hrpy_arg_uint_as(PyExc_ValueError, a[1], "buffer_size_bytes", "count", UINT64_MAX, &count) <
      0)
    return NULL;
  uint64_t out = 0;
  HurrayStatus rc = hurray_buffer_size_bytes(tag, (uint64_t)count, &out);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, NULL, "buffer_size_bytes");
  return PyLong_FromUnsignedLongLong(out);
}

/* _decode_values(data, dtype, count, *, codes=False): `count` packed elements
 * of `dtype` at the start of `data` (a contiguous buffer) decoded by the C
 * library (hurray_elements_to_double, hurray_elements_unpack), as a memoryview
 * NumPy takes as it is: float64 values ('d'), or with codes=True one byte per
 * element of a type of at most 8 bits ('b' for the signed integers, '?' for
 * bool, 'B' for the rest: float codes as ml_dtypes holds them). */
static PyObject *m_decode_values(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  HrpyState *st = hrpy_state_of_module(m);
  static const char *const names[] = {"data", "dtype", "count", "codes", NULL};
  PyObject *a[4];
  if (hrpy_parse_args("_decode_values", args, nargs, kwnames, names, 3, 3, a) < 0) return NULL;
  uint8_t tag;
  uint64_t count;
  bool codes;
  if (hrpy_dtype_converter(st, a[1], &tag) < 0 ||
      hrpy_arg_uint_as(PyExc_ValueError, a[2], "_decode_values", "count",
                       (uint64_t)PY_SSIZE_T_MAX / 8u, &count) < 0 ||
      hrpy_arg_flag(a[3], false, &codes) < 0)
    return NULL;
  Py_buffer in;
  if (PyObject_GetBuffer(a[0], &in, PyBUF_SIMPLE) < 0) return NULL;
  const HurrayDtypeInfo *info = hurray_dtype_info(tag);
  const char *format = "d";
  if (codes)
    format = tag == HURRAY_DTYPE_BOOL ? "?"
             : info != NULL && (info->flags & HURRAY_DTF_INT) && (info->flags & HURRAY_DTF_SIGNED)
                 ? "b"
                 : "B";
  PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(count * (codes ? 1u : 8u)));
  if (out == NULL) {
    PyBuffer_Release(&in);
    return NULL;
  }
  void *dst = PyByteArray_AS_STRING(out);
  HurrayStatus rc;
  uint64_t reserved = 0;
  Py_BEGIN_ALLOW_THREADS
  rc = codes ? hurray_elements_unpack(tag, in.buf, (uint64_t)in.len, count, dst)
             : hurray_elements_to_double(tag, in.buf, (uint64_t)in.len, count, dst, &reserved);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&in);
  if (rc != HURRAY_OK) {
    Py_DECREF(out);
    return hrpy_raise_status(st, rc, NULL, "_decode_values");
  }
  PyObject *mv = PyMemoryView_FromObject(out);
  Py_DECREF(out);
  if (mv == NULL) return NULL;
  PyObject *r = PyObject_CallMethod(mv, "cast", "s", format);
  Py_DECREF(mv);
  return r;
}

/* _exception_for(status, /): the class a C status code raises (tests check
 * the binding's table against the documented one). */
static PyObject *m_exception_for(PyObject *m, PyObject *arg) {
  int64_t code;
  if (hrpy_arg_int_as(PyExc_ValueError, arg, "_exception_for", "status", INT32_MIN, INT32_MAX,
                      &code) < 0)
    return NULL;
  return Py_NewRef(hrpy_exception_for(hrpy_state_of_module(m), (HurrayStatus)code));
}

#ifdef HRPY_SANITIZER_PROBE
/* _sanitizer_probe(kind, /): commits one deliberate fault, compiled only into
 * sanitizer builds (HURRAY_SANITIZE), so the sanitizer suite can prove the
 * extension it runs is instrumented and that a fault aborts the process:
 * "undefined" overflows a signed int, "address" reads one byte past a heap
 * block. A test runs it in a child process and expects the report. */
static PyObject *m_sanitizer_probe(PyObject *m, PyObject *arg) {
  (void)m;
  const char *kind = PyUnicode_AsUTF8(arg);
  if (kind == NULL) return NULL;
  if (strcmp(kind, "undefined") == 0) {
    volatile int32_t a = INT32_MAX;
    volatile int32_t b = 1;
    int32_t sum = a + b;
    return PyLong_FromLong(sum);
  }
  if (strcmp(kind, "address") == 0) {
    volatile size_t n = 8;
    char *block = malloc(n);
    if (block == NULL) return PyErr_NoMemory();
    memset(block, 0, n);
    char past = ((volatile char *)block)[n];
    free(block);
    return PyLong_FromLong(past);
  }
  return PyErr_Format(PyExc_ValueError, "_sanitizer_probe: kind must be 'undefined' or "
                      "'address', not %R", arg);
}
#endif

static PyObject *m_layout_tag_kind(PyObject *m, PyObject *arg) {
  (void)m;
  uint64_t v;
  if (hrpy_arg_uint_as(PyExc_ValueError, arg, "layout_tag_kind", "tag", 255, &v) < 0) return NULL;
  switch (hurray_layout_tag_kind((uint8_t)v)) {
    case HURRAY_TAG_NAMED:
      return PyUnicode_FromString("named");
    case HURRAY_TAG_PRIVATE:
      return PyUnicode_FromString("private");
    case HURRAY_TAG_RESERVED:
    case HURRAY_TAG_UNASSIGNED:
      return PyUnicode_FromString("reserved");
    default:
      return PyUnicode_FromString("invalid");
  }
}

#define FASTKW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

/* _register_hooks(*, tensor_repr, tensor_str, composite_repr, to_scipy, as_tensor,
 * file_html, tensor_html): what
 * the package lends the extension (util/state.h), called once by
 * hurray/__init__.py. The first registration stays (another thread may be
 * calling a hook: a slot is never replaced). */
static PyObject *m_register_hooks(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  static const char *const names[] = {"tensor_repr", "tensor_str", "composite_repr",
                                      "to_scipy",    "as_tensor",  "file_html",
                                      "tensor_html", NULL};
  PyObject *a[7];
  if (hrpy_parse_args("_register_hooks", args, nargs, kwnames, names, 0, 7, a) < 0)
    return NULL;
  for (int i = 0; i < 7; i++)
    if (a[i] == NULL || !PyCallable_Check(a[i]))
      return PyErr_Format(PyExc_TypeError, "_register_hooks: %s must be callable", names[i]);
  HrpyState *st = hrpy_state_of_module(m);
  PyObject **slots[7] = {&st->hook_tensor_repr, &st->hook_tensor_str, &st->hook_composite_repr,
                         &st->hook_to_scipy,    &st->hook_as_tensor, &st->hook_file_html,
                         &st->hook_tensor_html};
  for (int i = 0; i < 7; i++) (void)hrpy_publish(slots[i], Py_NewRef(a[i]));
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"buffer_size_bytes", FASTKW(m_buffer_size_bytes),
     "buffer_size_bytes(dtype, count)\n--\n\n"
     "Bytes needed to store `count` packed elements of `dtype` (any spelling `hurray.Dtype` "
     "lists).\n"
     "\n"
     "Sub-byte types pack LSB-first (`bool` 8 per byte, `int4` 2 per byte, ...); 6-bit types pack "
     "4 elements in 3 bytes, so `count * bit_width // 8` is wrong for every sub-byte type. A "
     "private type raises `UnsupportedError` (its size comes from the descriptor's extension type "
     "section); an overflow of 64 bits raises `ValueError`."},
    {"_register_hooks", FASTKW(m_register_hooks),
     "_register_hooks(*, tensor_repr, tensor_str, composite_repr, to_scipy, as_tensor, "
     "file_html, tensor_html)\n--\n\n"
     "What the package lends the extension (repr and str of tensors and composites, the SciPy "
     "conversion, the conversion of what save takes to a tensor, the notebook HTML of files "
     "and tensors); called once by hurray/__init__.py."},
    {"_decode_values", FASTKW(m_decode_values),
     "_decode_values(data, dtype, count, *, codes=False)\n--\n\n"
     "`count` packed elements of `dtype` at the start of `data` (a contiguous buffer), decoded "
     "by the C library: a memoryview of float64 values, or with codes=True one byte per "
     "element of a type of at most 8 bits (format 'b' for the signed integers, sign-extended; "
     "'?' for bool; 'B' for the rest, float codes as ml_dtypes holds them). The reserved "
     "float8_e8m0 codes give NaN. For the viewer and the `hurray` command."},
    {"_exception_for", m_exception_for, METH_O,
     "_exception_for(status, /)\n--\n\nThe exception class a C status code raises (tests)."},
#ifdef HRPY_SANITIZER_PROBE
    {"_sanitizer_probe", m_sanitizer_probe, METH_O,
     "_sanitizer_probe(kind, /)\n--\n\nCommits a deliberate fault (sanitizer builds only)."},
#endif
    {"layout_tag_kind", m_layout_tag_kind, METH_O,
     "layout_tag_kind(tag, /)\n--\n\n"
     "The kind of a layout tag byte: `\"named\"`, `\"reserved\"`, `\"private\"` or `\"invalid\"`; "
     "the four partition the byte space (an unassigned tag is `\"reserved\"`)."},
    {"zeros", FASTKW(hrpy_zeros),
     "zeros(shape, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "A new tensor of zeros (`dtype` defaults to float64), of any named type but "
     "`float8_e8m0` (which has no zero: `UnsupportedError`).\n"
     "\n"
     "What every creation function (`zeros`, `ones`, `empty`, `full`, their `*_like` forms, "
     "`arange`, `linspace`, `eye`) shares:\n"
     "\n"
     "- The result is one 64-byte-aligned, row-major buffer in host memory: `device=` may "
     "name a CPU device only (another device is `UnsupportedError`).\n"
     "- A dynamic dimension is refused with `InvalidDescriptorError` naming the call and "
     "the index (`zeros: shape[1]: is dynamic ...`).\n"
     "- Bad arguments raise before anything is allocated, with a message naming the "
     "argument. The size is libhurray's (`hurray_dense_buffer_size`): an extent, element "
     "count or byte size above 2**63 - 1, what one buffer can address, is "
     "`InvalidDescriptorError` (a `ValueError`, as NumPy's \"array is too big\"); a size "
     "within it that the allocator cannot provide is `MemoryError` (`arange(2**59)` asks "
     "for 4 EiB and gets `MemoryError`, not a crash).\n"
     "- Sub-byte padding bits are always zero.\n"
     "- Large buffers cost what NumPy's do. A buffer of 4 MiB or more is advised as huge "
     "pages (`MADV_HUGEPAGE`), as NumPy advises its own, so filling one takes one page "
     "fault per 2 MiB. The GIL is released while a buffer of 1 MiB or more is filled (by "
     "`ones`, `full`, their `*_like` forms, `arange` and `linspace`).\n"
     "\n"
     "`zeros` takes zeroed memory from the allocator (`hurray_alloc_zeroed`): a buffer of 4 "
     "MiB or more is mapped from the kernel, whose pages read as zero until written, so "
     "`zeros` returns without writing it (as NumPy's `calloc` does; the first write of each "
     "page then pays for it)."},
    {"ones", FASTKW(hrpy_ones),
     "ones(shape, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "A new tensor of ones (`dtype` defaults to float64); the types and the encoding are "
     "`full`'s. The value is stored 16 bytes at a time and the buffer never read back. "
     "Allocation as [`zeros`][hurray.zeros]."},
    {"empty", FASTKW(hrpy_empty),
     "empty(shape, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "A new tensor with unspecified contents (`dtype` defaults to float64), of any named "
     "type. Allocation as [`zeros`][hurray.zeros]."},
    {"full", FASTKW(hrpy_full),
     "full(shape, fill_value, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "A new tensor filled with `fill_value`. Allocation as [`zeros`][hurray.zeros].\n"
     "\n"
     "Without `dtype` the type follows NumPy: `bool` gives `bool`, `int` `int64`, `complex` "
     "`complex128`, anything else `float64`. Values are encoded like NumPy's: float16 "
     "rounds to nearest even, bfloat16 through float32, and an out-of-range integer raises "
     "`OverflowError`. The Tier 1 types, complex and the float8 types are accepted: "
     "`float8_e4m3` and `float8_e5m2` round to nearest even as ml_dtypes does (beyond the "
     "largest finite value e5m2 gives an infinity, e4m3 NaN), `float8_e8m0` takes powers of "
     "two only (`ValueError` otherwise); the sub-byte floats are refused. The value is "
     "stored 16 bytes at a time and the buffer never read back."},
    {"zeros_like", FASTKW(hrpy_zeros_like),
     "zeros_like(x, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "`zeros` with the shape of `x`.\n"
     "\n"
     "What every `*_like` function shares: `x` is a `hurray.Tensor` (anything else is a "
     "`TypeError`); the result takes its shape, and its element type and device unless "
     "`dtype=` / `device=` say otherwise. The result is always a dense row-major tensor (a "
     "column-major or sparse `x` gives a row-major tensor of the same shape). Each accepts "
     "the element types of the function it is named after."},
    {"ones_like", FASTKW(hrpy_ones_like),
     "ones_like(x, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "`ones` with the shape of `x`, as [`zeros_like`][hurray.zeros_like]."},
    {"empty_like", FASTKW(hrpy_empty_like),
     "empty_like(x, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "`empty` with the shape of `x`, as [`zeros_like`][hurray.zeros_like]."},
    {"full_like", FASTKW(hrpy_full_like),
     "full_like(x, fill_value, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "`full` with the shape of `x`, as [`zeros_like`][hurray.zeros_like]. `fill_value` is encoded as `x`'s type "
     "(or `dtype`), not the value's: `full_like(int32_tensor, 2.7)` holds `2`."},
    {"arange", FASTKW(hrpy_arange),
     "arange(start, stop=None, step=None, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "Evenly spaced values in `[start, stop)`, computed as NumPy does, so the same call "
     "gives the same bits (the test suite compares them with NumPy's for every type). "
     "Allocation as [`zeros`][hurray.zeros].\n"
     "\n"
     "- `arange(stop)` counts from 0; `arange(start, stop, step)` has `ceil((stop - start) "
     "/ step)` elements (none when that is not positive; exact for integers of any size).\n"
     "- The type is `int64` when every argument is an integer (an `int` or anything with "
     "`__index__`), `float64` otherwise.\n"
     "- Element 0 is `start`, element 1 `start + step`, element `i` is `e0 + i * (e1 - e0)` "
     "in the element type's arithmetic: float32 in float32, float16 and bfloat16 in float32 "
     "then rounded. With an integer type and float arguments elements 0 and 1 are truncated "
     "first, as NumPy does (`arange(0, 5, 0.5, dtype=int64)` is ten zeros).\n"
     "- Types: the integer types of 8 bits or more, float16, bfloat16, float32, float64, "
     "complex64 and complex128 (complex elements have a zero imaginary part); `bool` and "
     "the Tier 2 types (`int4`, `float8_e4m3`, ...) raise `UnsupportedError`.\n"
     "- Errors: `step` 0, or a `start`, `stop` or `step` that is infinite or NaN, raise "
     "`InvalidDescriptorError` (a `ValueError`); a complex or non-numeric argument is a "
     "`TypeError`. An integer element that does not fit the type (`arange(0, 300, "
     "dtype=int8)`, whose last element is 299) raises `OverflowError` where NumPy would "
     "wrap around silently."},
    {"linspace", FASTKW(hrpy_linspace),
     "linspace(start, stop, num=50, endpoint=True, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "`num` evenly spaced values from `start` to `stop` (`stop` excluded when `endpoint` is "
     "false), computed as NumPy does. Allocation as [`zeros`][hurray.zeros]; the types [`arange`][hurray.arange] takes.\n"
     "\n"
     "Element `i` is `i * step + start` in float64 with `step = (stop - start) / (num - 1)` "
     "(`/ num` without the endpoint), the last element exactly `stop`, then converted to "
     "`dtype` (float64 by default): float32 rounds to nearest, float16 directly from "
     "float64, bfloat16 through float32 as `full` does, integer types take the floor first. "
     "A negative `num`, or a `start` or `stop` that is infinite or NaN, raises "
     "`InvalidDescriptorError`; a complex or non-numeric argument is a `TypeError`; an "
     "integer element that does not fit the type `OverflowError`."},
    {"eye", FASTKW(hrpy_eye),
     "eye(n_rows, n_cols=None, k=0, *, dtype=None, device=None)\n"
     "--\n"
     "\n"
     "A 2-D `n_rows` x `n_cols` tensor (`n_cols` defaults to `n_rows`, `dtype` to float64) "
     "with ones on diagonal `k` (0 the main one, positive above, negative below) and zeros "
     "elsewhere; a `k` beyond the matrix gives all zeros. Allocation as [`zeros`][hurray.zeros]; "
     "the Tier 1 types (`bool` included, bit-packed) and complex, not the Tier 2 ones "
     "(`UnsupportedError`). A negative `n_rows` or `n_cols` raises `InvalidDescriptorError`, "
     "a non-integer a `TypeError`."},
    {"from_numpy", FASTKW(hrpy_from_numpy),
     "from_numpy(array, /, *, copy=None)\n--\n\nWrap a numpy.ndarray (or any object "
     "exporting a buffer) as a hurray.Tensor, sharing its memory when the address meets "
     "the 64-byte floor."},
    {"from_dlpack", FASTKW(hrpy_from_dlpack),
     "from_dlpack(x, /, *, device=None, copy=None)\n--\n\nWrap any object implementing "
     "__dlpack__ (or a DLPack capsule) as a hurray.Tensor without copying."},
    {"from_torch", FASTKW(hrpy_from_torch),
     "from_torch(tensor, /, *, copy=None)\n--\n\nWrap a torch.Tensor as a hurray.Tensor "
     "through DLPack, without copying."},
    {"from_hurray", FASTKW(hrpy_from_hurray),
     "from_hurray(obj, /, *, permissive=False)\n--\n\nA hurray.Tensor from any object "
     "implementing the native protocol (__hurray__), or from a 'hurray_tensor' capsule itself. "
     "The C ABI version is checked first (UnsupportedError on a mismatch); the capsule is "
     "renamed 'used_hurray_tensor' and the tensor keeps the transferred buffers alive. "
     "Buffers are writable only when obj is a writable hurray.Tensor."},
    {"_quantize", FASTKW(hrpy_quantize),
     "_quantize(x, dtype, *, axis=None, block_size=None, symmetric=True, scale_dtype=None, "
     "scheme=None)\n--\n\nhurray.quantize over a hurray.Tensor of float16, bfloat16, float32 "
     "or float64 values (types/quantize.c)."},
    {"_aligned_mem_handler", hrpy_aligned_mem_handler, METH_NOARGS,
     "_aligned_mem_handler()\n--\n\nThe NEP 49 'mem_handler' capsule of the 64-byte aligned "
     "NumPy allocator (used by hurray.aligned_allocator)."},
    {"_coo_lexsorted", (PyCFunction)(void (*)(void))hrpy_coo_lexsorted, METH_FASTCALL,
     "_coo_lexsorted(indices, nnz, rank, /)\n--\n\nWhether the [nnz, rank] uint64 coordinates "
     "in `indices` (a C-contiguous buffer) strictly increase in lexicographic order (no "
     "duplicate): one scan, stopping at the first row out of order."},
    {"_ndarray_path", hrpy_ndarray_path, METH_O,
     "_ndarray_path(mode, /)\n--\n\nHow from_numpy reads an exact numpy.ndarray (tests): "
     "'header' proves and reads the object header, 'struct' uses __array_struct__, 'auto' "
     "proves the header again on next use, None only reports. Returns the way in use "
     "('header', 'struct' or 'unproven')."},
    {"_numpy_set_handler", hrpy_numpy_set_handler, METH_O,
     "_numpy_set_handler(handler, /)\n--\n\nInstall a NEP 49 'mem_handler' capsule for the "
     "current context through NumPy's C-API table; returns the previous handler."},
    {NULL, NULL, 0, NULL},
};

/* ---- init ------------------------------------------------------------------ */

static int intern(PyObject **slot, const char *s) {
  *slot = PyUnicode_InternFromString(s);
  return *slot == NULL ? -1 : 0;
}

/* The one block CPython allocates (zeroed) for the module state: the shared
 * part every layer reaches (util/state.h) and each layer's own part. */
typedef struct HrpyStateBlock {
  HrpyState st;
  HrpyCoreState core;
  HrpyTypesState types;
  HrpyInteropState interop;
  HrpyIoState io;
} HrpyStateBlock;

static int module_exec(PyObject *m) {
  HrpyState *st = hrpy_state_of_module(m);
  HrpyStateBlock *block = (HrpyStateBlock *)(void *)st; /* st is its first member */
  st->core = &block->core;
  st->types = &block->types;
  st->interop = &block->interop;
  st->io = &block->io;
  if (hrpy_errors_init(m, st) < 0) return -1;
  if (hrpy_dtype_init(m, st) < 0) return -1;
  if (hrpy_device_init(m, st) < 0) return -1;
  if (hrpy_buffer_handle_init(m, st) < 0) return -1;
  if (hrpy_descriptor_init(m, st) < 0) return -1;
  if (hrpy_tensor_init(m, st) < 0) return -1;
  if (hrpy_layout_init(m, st) < 0) return -1;
  if (hrpy_layout_types_init(m, st) < 0) return -1;
  if (hrpy_quant_init(m, st) < 0) return -1;
  if (hrpy_sections_init(m, st) < 0) return -1;
  if (hrpy_composite_init(m, st) < 0) return -1;
  if (hrpy_file_init(m, st) < 0) return -1;
  if (hrpy_slice_init(m, st) < 0) return -1;
  if (hrpy_stream_init(m, st) < 0) return -1;
  if (hrpy_pickle_init(m, st) < 0) return -1;
  if (hrpy_writer_init(m, st) < 0) return -1; /* hurray._FileWriter (io/writer.c) */
  if (hrpy_net_init(m, st) < 0) return -1;    /* hurray._NetServer, _NetClient (io/net.c) */
  HrpyInteropState *io = st->interop;
  if (intern(&io->s_dlpack, "__dlpack__") < 0 || intern(&io->s_max_version, "max_version") < 0 ||
      intern(&io->s_copy, "copy") < 0 || intern(&io->s_dl_device, "dl_device") < 0 ||
      intern(&io->s_array_struct, "__array_struct__") < 0)
    return -1;
  if (PyModule_AddIntConstant(m, "MIN_BUFFER_ALIGNMENT", HURRAY_MIN_BUFFER_ALIGNMENT) < 0 ||
      PyModule_AddIntConstant(m, "PAGE_ALIGNMENT", HURRAY_PAGE_ALIGNMENT) < 0 ||
      PyModule_AddIntConstant(m, "MAX_RANK", HURRAY_MAX_RANK) < 0 ||
      PyModule_AddIntConstant(m, "C_ABI_VERSION", HURRAY_C_ABI_VERSION) < 0 ||
      PyModule_AddStringConstant(m, "__version__", HURRAY_VERSION_STRING) < 0 ||
      PyModule_AddStringConstant(m, "library_version", hurray_version_string()) < 0 ||
      /* debug builds of the C library track destroyed handles per copy of
       * the library (tests sharing handles with another copy check this) */
      PyModule_AddIntConstant(m, "_HANDLE_CHECKS", hurray_handle_checks_enabled() ? 1 : 0) < 0)
    return -1;
  return 0;
}

/* The references of the shared part (util/state.h), visited and cleared alike. */
#define HRPY_SHARED_SLOTS(st)                                                               \
  {&(st)->InvalidDescriptorError, &(st)->BufferError, &(st)->UnsupportedError,            \
   &(st)->InternalError, &(st)->FileError, &(st)->StreamError, &(st)->FileNotFoundError,  \
   &(st)->PermissionError, &(st)->CopyRequiredError, &(st)->numpy, &(st)->hook_tensor_repr, \
   &(st)->hook_tensor_str, &(st)->hook_to_scipy, &(st)->hook_as_tensor,                   \
   &(st)->hook_composite_repr, &(st)->hook_file_html, &(st)->hook_tensor_html}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  HrpyState *st = hrpy_state_of_module(m);
  if (st == NULL) return 0;
  PyObject **shared[] = HRPY_SHARED_SLOTS(st);
  for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) Py_VISIT(*shared[i]);
  int r;
  if ((r = hrpy_core_state_traverse(st->core, visit, arg)) != 0 ||
      (r = hrpy_types_state_traverse(st->types, visit, arg)) != 0 ||
      (r = hrpy_interop_state_traverse(st->interop, visit, arg)) != 0 ||
      (r = hrpy_io_state_traverse(st->io, visit, arg)) != 0)
    return r;
  return 0;
}

static int module_clear(PyObject *m) {
  HrpyState *st = hrpy_state_of_module(m);
  if (st == NULL) return 0;
  hrpy_io_state_clear(st->io);
  hrpy_interop_state_clear(st->interop);
  hrpy_types_state_clear(st->types);
  hrpy_core_state_clear(st->core);
  PyObject **shared[] = HRPY_SHARED_SLOTS(st);
  for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) Py_CLEAR(*shared[i]);
  return 0;
}

static void module_free(void *m) { (void)module_clear((PyObject *)m); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* DLPack deleters re-enter Python through the PyGILState API, which does
     * not support subinterpreters. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_mod_gil
    /* Safe without the GIL (util/atomic.h says how): on a free-threaded
     * interpreter importing hurray keeps the GIL disabled. */
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef hurray_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hurray._hurray",
    .m_doc = "C core of the hurray package (the Hurray tensor interchange format).",
    .m_size = sizeof(HrpyStateBlock),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__hurray(void);
PyMODINIT_FUNC PyInit__hurray(void) { return PyModuleDef_Init(&hurray_module); }
