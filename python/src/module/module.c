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

/* _register_hooks(*, tensor_repr, tensor_str, composite_repr, to_scipy): what
 * the package lends the extension (util/state.h), called once by
 * hurray/__init__.py. The first registration stays (another thread may be
 * calling a hook: a slot is never replaced). */
static PyObject *m_register_hooks(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  static const char *const names[] = {"tensor_repr", "tensor_str", "composite_repr",
                                      "to_scipy", NULL};
  PyObject *a[4];
  if (hrpy_parse_args("_register_hooks", args, nargs, kwnames, names, 0, 4, a) < 0)
    return NULL;
  for (int i = 0; i < 4; i++)
    if (a[i] == NULL || !PyCallable_Check(a[i]))
      return PyErr_Format(PyExc_TypeError, "_register_hooks: %s must be callable", names[i]);
  HrpyState *st = hrpy_state_of_module(m);
  PyObject **slots[4] = {&st->hook_tensor_repr, &st->hook_tensor_str, &st->hook_composite_repr,
                         &st->hook_to_scipy};
  for (int i = 0; i < 4; i++) (void)hrpy_publish(slots[i], Py_NewRef(a[i]));
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
     "_register_hooks(*, tensor_repr, tensor_str, composite_repr, to_scipy)\n--\n\nWhat the "
     "package lends the extension (repr and str of tensors and composites, the SciPy "
     "conversion); called once by hurray/__init__.py."},
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
     "zeros(shape, *, dtype=None, device=None)\n--\n\nA new tensor of zeros (dtype defaults to float64)."},
    {"ones", FASTKW(hrpy_ones),
     "ones(shape, *, dtype=None, device=None)\n--\n\nA new tensor of ones (dtype defaults to float64)."},
    {"empty", FASTKW(hrpy_empty),
     "empty(shape, *, dtype=None, device=None)\n--\n\nA new tensor with unspecified "
     "contents (dtype defaults to float64)."},
    {"full", FASTKW(hrpy_full),
     "full(shape, fill_value, *, dtype=None, device=None)\n--\n\nA new tensor filled "
     "with `fill_value` (dtype defaults from the value's Python type, as NumPy)."},
    {"zeros_like", FASTKW(hrpy_zeros_like),
     "zeros_like(x, *, dtype=None, device=None)\n--\n\nA new tensor of zeros with the shape "
     "of the hurray.Tensor `x`, and its dtype and device unless given."},
    {"ones_like", FASTKW(hrpy_ones_like),
     "ones_like(x, *, dtype=None, device=None)\n--\n\nA new tensor of ones with the shape "
     "of the hurray.Tensor `x`, and its dtype and device unless given."},
    {"empty_like", FASTKW(hrpy_empty_like),
     "empty_like(x, *, dtype=None, device=None)\n--\n\nA new tensor with unspecified "
     "contents with the shape of the hurray.Tensor `x`, and its dtype and device unless "
     "given."},
    {"full_like", FASTKW(hrpy_full_like),
     "full_like(x, fill_value, *, dtype=None, device=None)\n--\n\nA new tensor filled "
     "with `fill_value` with the shape of the hurray.Tensor `x`, and its dtype (not the "
     "value's) and device unless given."},
    {"arange", FASTKW(hrpy_arange),
     "arange(start, stop=None, step=None, *, dtype=None, device=None)\n--\n\nEvenly "
     "spaced values in [start, stop) (arange(stop): from 0), computed as NumPy does; dtype "
     "defaults to int64 when every argument is an integer, else float64."},
    {"linspace", FASTKW(hrpy_linspace),
     "linspace(start, stop, num=50, endpoint=True, *, dtype=None, device=None)\n--\n\n"
     "`num` evenly spaced values from start to stop (stop included unless endpoint is "
     "false), computed as NumPy does; dtype defaults to float64."},
    {"eye", FASTKW(hrpy_eye),
     "eye(n_rows, n_cols=None, k=0, *, dtype=None, device=None)\n--\n\nA 2-D tensor with "
     "ones on diagonal k (0 the main one, > 0 above, < 0 below) and zeros elsewhere; "
     "n_cols defaults to n_rows, dtype to float64."},
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

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  HrpyState *st = hrpy_state_of_module(m);
  if (st == NULL) return 0;
  Py_VISIT(st->InvalidDescriptorError);
  Py_VISIT(st->BufferError);
  Py_VISIT(st->UnsupportedError);
  Py_VISIT(st->InternalError);
  Py_VISIT(st->FileError);
  Py_VISIT(st->StreamError);
  Py_VISIT(st->FileNotFoundError);
  Py_VISIT(st->PermissionError);
  Py_VISIT(st->CopyRequiredError);
  Py_VISIT(st->numpy);
  Py_VISIT(st->hook_tensor_repr);
  Py_VISIT(st->hook_tensor_str);
  Py_VISIT(st->hook_to_scipy);
  Py_VISIT(st->hook_composite_repr);
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
  Py_CLEAR(st->InvalidDescriptorError);
  Py_CLEAR(st->BufferError);
  Py_CLEAR(st->UnsupportedError);
  Py_CLEAR(st->InternalError);
  Py_CLEAR(st->FileError);
  Py_CLEAR(st->StreamError);
  Py_CLEAR(st->FileNotFoundError);
  Py_CLEAR(st->PermissionError);
  Py_CLEAR(st->CopyRequiredError);
  Py_CLEAR(st->numpy);
  Py_CLEAR(st->hook_tensor_repr);
  Py_CLEAR(st->hook_tensor_str);
  Py_CLEAR(st->hook_to_scipy);
  Py_CLEAR(st->hook_composite_repr);
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
