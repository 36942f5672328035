/*
 * types/block_paged.c - the methods hurray.BlockPagedLayout adds to what
 * every layout class has (types/layout_types.c): checking a paged KV cache's
 * index arrays, and whether a quantization scheme composes with the paging.
 */
#include "types/block_paged.h"

#include "core/device.h"
#include "core/tensor.h"
#include "types/layout.h"
#include "types/quant.h"
#include "types/state.h"
#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"

#include <string.h>

#define BP(s) ((*hrpy_layout_value(s)).u.block_paged)

/* One index array for validate_index_buffers: a typed buffer whose items are
 * `width` bytes (exact length), raw bytes (itemsize 1, longer is fine), or a
 * host hurray.Tensor (its bytes). */
typedef struct {
  Py_buffer view;
  const void *data;
  uint64_t size;
  bool typed;
} IndexArg;

static int index_arg(HrpyState *st, PyObject *o, uint32_t width, const char *what,
                     IndexArg *out) {
  memset(out, 0, sizeof *out);
  if (hrpy_tensor_check(st, o)) {
    HrpyTensorView t_view = hrpy_tensor_view(o);
  const HrpyTensorView *t = &t_view;
    if (hrpy_device_tag(t->device) != HURRAY_DEVICE_CPU || t->nbuf == 0) {
      PyErr_Format(PyExc_TypeError, "validate_index_buffers: %s must be host memory", what);
      return -1;
    }
    if (hrpy_tensor_check_readable(st, t->self, "validate_index_buffers") < 0) return -1;
    if (t->f->layout.tag != HURRAY_LAYOUT_ROW_MAJOR) {
      PyErr_Format(PyExc_TypeError, "validate_index_buffers: %s must be a row-major tensor",
                   what);
      return -1;
    }
    uint64_t count = 0, bytes = 0;
    if (!hurray_shape_element_count(t->f->rank, t->f->shape, &count) ||
        hurray_buffer_size_bytes(t->f->type_tag, count, &bytes) != HURRAY_OK) {
      PyErr_Format(PyExc_TypeError, "validate_index_buffers: %s has no fixed size", what);
      return -1;
    }
    const HurrayDtypeInfo *info = hurray_dtype_info(t->f->type_tag);
    out->data = t->bufs[0].data + t->f->byte_offset;
    out->size = bytes;
    out->typed = info != NULL && info->bit_width > 8;
    if (out->typed && info->bit_width != width * 8u) {
      PyErr_Format(PyExc_ValueError,
                   "validate_index_buffers: %s holds %s entries; this layout's index type is "
                   "uint%u",
                   what, info->name, (unsigned)(width * 8u));
      return -1;
    }
    return 0;
  }
  if (PyObject_GetBuffer(o, &out->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError,
                   "validate_index_buffers: %s must be a buffer (bytes, numpy.ndarray, ...) or "
                   "a hurray.Tensor, not %.100s",
                   what, Py_TYPE(o)->tp_name);
    }
    return -1;
  }
  out->data = out->view.buf;
  out->size = (uint64_t)out->view.len;
  if (out->view.itemsize != 1) {
    /* integers of the index type's width, in this machine's byte order */
    bool swapped = false;
    uint8_t tag = hurray_dtype_from_buffer_format(out->view.format,
                                                  (uint64_t)out->view.itemsize, &swapped);
    if (swapped || !hurray_dtype_is_integer(tag) || (uint32_t)out->view.itemsize != width) {
      PyErr_Format(PyExc_ValueError,
                   "validate_index_buffers: %s has items of format '%s' and %zd bytes; this "
                   "layout's index type is uint%u",
                   what, out->view.format != NULL ? out->view.format : "B", out->view.itemsize,
                   (unsigned)(width * 8u));
      PyBuffer_Release(&out->view);
      return -1;
    }
    out->typed = true;
  }
  return 0;
}

static PyObject *paged_validate_index_buffers(PyObject *s, PyObject *const *args,
                                              Py_ssize_t nargs, PyObject *kwnames) {
  HrpyState *st = hrpy_state_of(s);
  static const char *const names[] = {"seq_ptr", "block_table", NULL};
  PyObject *a[2];
  if (hrpy_parse_args("validate_index_buffers", args, nargs, kwnames, names, 2, 2, a) < 0)
    return NULL;
  uint32_t width = hurray_block_index_width(BP(s).block_table_index_type);
  IndexArg sp, bt;
  if (index_arg(st, a[0], width, "seq_ptr", &sp) < 0) return NULL;
  if (index_arg(st, a[1], width, "block_table", &bt) < 0) {
    if (sp.view.obj != NULL) PyBuffer_Release(&sp.view);
    return NULL;
  }
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc = hurray_block_paged_validate_index_buffers(
      BP(s).block_table_index_type, BP(s).num_seqs, BP(s).num_pages, sp.data, sp.size, bt.data,
      bt.size, sp.typed && bt.typed ? HURRAY_INDEX_EXACT_LENGTHS : 0u, &err);
  if (sp.view.obj != NULL) PyBuffer_Release(&sp.view);
  if (bt.view.obj != NULL) PyBuffer_Release(&bt.view);
  if (rc == HURRAY_ERR_BUFFER_SIZE) {
    /* a short index array is an index-data violation here: there is no
     * descriptor whose declared sizes could be at fault */
    return hrpy_raise(st->InvalidDescriptorError, "validate_index_buffers: %s", err.message);
  }
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, "validate_index_buffers");
  Py_RETURN_NONE;
}

static PyObject *paged_validate_quantization(PyObject *s, PyObject *q) {
  HrpyState *st = hrpy_state_of(s);
  const char *ctx = "validate_quantization_compatibility";
  if (!hrpy_quant_check_type(st, q))
    return PyErr_Format(PyExc_TypeError,
                        "%s: expected a quantization object (PerTensorAffine, PerChannelAffine, "
                        "PerBlockAffine, NF4 or MXFP), not %.100s",
                        ctx, Py_TYPE(q)->tp_name);
  HurrayError err;
  hurray_error_clear(&err);
  HurrayStatus rc =
      hurray_block_paged_check_quantization(hrpy_layout_value(s), hrpy_quant_value(q), &err);
  if (rc != HURRAY_OK) return hrpy_raise_status(st, rc, &err, ctx);
  Py_RETURN_NONE;
}

static PyMethodDef paged_methods[] = {
    {"validate_index_buffers", (PyCFunction)(void (*)(void))paged_validate_index_buffers,
     METH_FASTCALL | METH_KEYWORDS,
     "validate_index_buffers(self, seq_ptr, block_table)\n--\n\nCheck the storage invariants "
     "of block-paged.md: seq_ptr[0] == 0, non-decreasing, seq_ptr[num_seqs] == "
     "len(block_table), every page id < num_pages (two sequences naming one page is "
     "allowed). Each argument is a typed array of the layout's index type (exact length; "
     "another item size is a ValueError), raw bytes (longer is fine), or a host "
     "hurray.Tensor (such as `t.buffer(2)`). InvalidDescriptorError on a violation."},
    {"validate_quantization_compatibility", paged_validate_quantization, METH_O,
     "validate_quantization_compatibility(self, quantization, /)\n--\n\nRaise "
     "InvalidDescriptorError unless the scheme composes with this paging (per-tensor freely; "
     "per-channel on axis 1 or 2; per-block on axis 0 with block_size == page_size; parameter "
     "buffers from index 3). `quantization` is a scheme object (TypeError for anything else, "
     "a scheme tag included)."},
    {NULL, NULL, 0, NULL},
};

PyMethodDef *hrpy_block_paged_methods(void) { return paged_methods; }
