/*
 * interop/native.c - the native interchange protocol (spec:
 * docs/adr/ADR-023-hurray-python-native-buffer-protocol.md,
 * docs/adr/ADR-030-multi-buffer-native-buffer-protocol.md,
 * docs/adr/ADR-034-c-readable-capsule-context.md):
 * Tensor.__hurray__ and hurray.from_hurray.
 *
 * A capsule named "hurray_tensor" carries:
 *   - as its pointer, a HurrayBufferList holding one HurrayBuffer per entry of
 *     the descriptor's buffer table, in table order. Each buffer wraps the
 *     tensor's memory and holds its own strong reference to the tensor,
 *     dropped by the buffer's release callback, so a C consumer that retains
 *     a buffer past the list keeps the memory alive;
 *   - as its context, a HurrayTensorContext (C library) with the encoded
 *     descriptor and HURRAY_C_ABI_VERSION; its opaque owner is one more strong
 *     reference to the tensor, dropped by owner_release.
 * Both callbacks may run on any thread and at interpreter shutdown: they take
 * the GIL themselves, and leak the reference when the interpreter is going
 * away (see hrpy_release_object).
 *
 * A consumer reads the ABI version first, renames the capsule to
 * "used_hurray_tensor", and then owns the list and the context: it destroys
 * each exactly once. An unconsumed capsule destroys both in its destructor.
 * from_hurray keeps the list alive inside the tensor it builds (the list is
 * destroyed when that tensor dies), so it works with capsules from any
 * producer, in any language.
 */
#include "interop/native.h"

#include "core/buffer.h"
#include "core/tensor.h"
#include "types/descriptor.h"
#include "util/args.h"
#include "util/atomic.h"
#include "util/errors.h"
#include "util/runtime.h"

#include <string.h>

static const char CAPSULE_NAME[] = "hurray_tensor";
static const char CAPSULE_USED[] = "used_hurray_tensor";
static const char KEEPER_NAME[] = "hurray._buffer_list";

/* ---- references dropped from C callbacks --------------------------------------- */

static void release_buffer(void *data, void *context) {
  (void)data;
  hrpy_release_object(context);
}

/* ---- producer ---------------------------------------------------------------------- */

static void capsule_destructor(PyObject *cap) {
  /* Only an unconsumed capsule still owns its list and context. */
  if (!PyCapsule_IsValid(cap, CAPSULE_NAME)) return;
  HrpySavedError saved;
  hrpy_dtor_begin(&saved);
  HurrayBufferList *list = PyCapsule_GetPointer(cap, CAPSULE_NAME);
  HurrayTensorContext *ctx = PyCapsule_GetContext(cap);
  HRPY_CANNOT_FAIL(hurray_buffer_list_destroy(&list));
  HRPY_CANNOT_FAIL(hurray_tensor_context_destroy(&ctx));
  hrpy_dtor_end(&saved, cap); /* what the release callbacks raised */
}

PyObject *hrpy_tensor_hurray(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  static const char *const names[] = {"stream", NULL};
  static const char ctxname[] = "__hurray__";
  PyObject *a[1];
  if (hrpy_parse_args(ctxname, args, nargs, kwnames, names, 1, 0, a) < 0) return NULL;
  /* The stream argument means what it means for __dlpack__; a buffer in
   * event or consumer_stream mode is a declaration and travels unchanged
   * whatever it is (relaying a declaration reads no byte). */
  if (a[0] != NULL && a[0] != Py_None && (PyBool_Check(a[0]) || !PyLong_Check(a[0])))
    return PyErr_Format(PyExc_TypeError, "__hurray__: stream must be None or an int, not %.100s",
                        Py_TYPE(a[0])->tp_name);
  HrpyState *st = hrpy_state_of(self);
  HrpyTensorView t_view = hrpy_tensor_view(self);
  const HrpyTensorView *t = &t_view;
  PyObject *bytes = NULL;
  HurrayBufferList *list = NULL;
  HurrayTensorContext *ctx = NULL;
  HurrayStatus rc;
  HurrayError err;
  hurray_error_clear(&err);
  if (t->nbuf != t->f->buffer_count) {
    /* a producer never emits a list whose length differs from the table */
    return hrpy_raise_rule(st, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", ctxname,
                          "the tensor holds %u buffers, its descriptor declares %u",
                          (unsigned)t->nbuf, (unsigned)t->f->buffer_count);
  }
  const HurrayDescriptor *desc = hrpy_tensor_desc(st, self);
  if (desc == NULL || (bytes = hrpy_descriptor_bytes(st, desc, NULL, ctxname)) == NULL)
    return NULL;
  rc = hurray_buffer_list_new(t->nbuf, &list);
  if (rc != HURRAY_OK) goto status_fail;
  for (uint32_t i = 0; i < t->nbuf; i++) {
    const HurrayBufferHandle *h = &t->f->buffers[i];
    HurrayBuffer *b = NULL;
    Py_INCREF(self); /* moved to the buffer on success: its release drops it */
    rc = hurray_buffer_from_ptr_ex(h->byte_size > 0 ? t->bufs[i].data : NULL, h->byte_size,
                                   h->alignment, h->device_tag, h->sync_mode, h->memory_class,
                                   release_buffer, self, &b, &err);
    if (rc != HURRAY_OK) {
      Py_DECREF(self);
      goto status_fail;
    }
    rc = hurray_buffer_list_push(list, b);
    if (rc != HURRAY_OK) {
      HRPY_CANNOT_FAIL(hurray_buffer_destroy(b)); /* runs release_buffer: drops the reference */
      goto status_fail;
    }
  }
  Py_INCREF(self); /* moved to the context on success: owner_release drops it */
  rc = hurray_tensor_context_new(HURRAY_C_ABI_VERSION, (const uint8_t *)PyBytes_AS_STRING(bytes),
                                 (uint64_t)PyBytes_GET_SIZE(bytes), self, hrpy_release_object,
                                 &ctx);
  if (rc != HURRAY_OK) {
    Py_DECREF(self);
    goto status_fail;
  }
  Py_CLEAR(bytes);
  PyObject *cap = PyCapsule_New(list, CAPSULE_NAME, capsule_destructor);
  if (cap == NULL) goto fail;
  list = NULL; /* the capsule's now */
  if (PyCapsule_SetContext(cap, ctx) < 0) {
    HRPY_CANNOT_FAIL(hurray_tensor_context_destroy(&ctx));
    Py_DECREF(cap); /* destroys the list */
    return NULL;
  }
  return cap;

status_fail:
  hrpy_raise_status(st, rc, err.status == rc ? &err : NULL, ctxname);
fail:
  Py_XDECREF(bytes);
  HRPY_CANNOT_FAIL(hurray_buffer_list_destroy(&list));
  HRPY_CANNOT_FAIL(hurray_tensor_context_destroy(&ctx));
  return NULL;
}

/* ---- consumer ---------------------------------------------------------------------- */

/* The object owning a consumed list inside the tensors built from it. */
static void keeper_destructor(PyObject *cap) {
  HrpySavedError saved;
  hrpy_dtor_begin(&saved);
  HurrayBufferList *list = PyCapsule_GetPointer(cap, KEEPER_NAME);
  HRPY_CANNOT_FAIL(hurray_buffer_list_destroy(&list));
  hrpy_dtor_end(&saved, cap);
}

/* The capsule to consume: `obj` itself, or what obj.__hurray__() returns. */
static PyObject *get_capsule(PyObject *obj) {
  if (PyCapsule_CheckExact(obj)) return Py_NewRef(obj);
  PyObject *meth = PyObject_GetAttrString(obj, "__hurray__");
  if (meth == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
    PyErr_Clear();
    return PyErr_Format(PyExc_TypeError,
                        "from_hurray: %.100s does not implement the native protocol "
                        "(__hurray__); check with hasattr(obj, '__hurray__')",
                        Py_TYPE(obj)->tp_name);
  }
  PyObject *cap = PyObject_CallNoArgs(meth);
  Py_DECREF(meth);
  return cap;
}

PyObject *hrpy_from_hurray(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames) {
  static const char *const names[] = {"obj", "permissive", NULL};
  static const char ctxname[] = "from_hurray";
  PyObject *a[2];
  if (hrpy_parse_args(ctxname, args, nargs, kwnames, names, 1, 1, a) < 0) return NULL;
  bool permissive;
  if (hrpy_arg_flag(a[1], false, &permissive) < 0) return NULL;
  HrpyState *st = hrpy_state_of_module(m);
  PyObject *cap = get_capsule(a[0]);
  if (cap == NULL) return NULL;
  PyObject *result = NULL, *keeper = NULL;
  bool claimed = false, owned = false;
  HurrayBufferList *list = NULL;
  HurrayTensorContext *ctx = NULL;
  HurrayDescriptor *desc = NULL;
  HrpyBuffer *bufs = NULL;
  uint32_t nbuf = 0, options = HURRAY_DECODE_STRICT;

  if (!PyCapsule_CheckExact(cap)) {
    hrpy_raise(st->BufferError, "%s: __hurray__ returned %.100s, not a PyCapsule", ctxname,
              Py_TYPE(cap)->tp_name);
    goto done;
  }
  /* Claim: check the name and rename the capsule in one critical section, so
   * two threads handed the same capsule cannot both consume it. Until the
   * list and context are ours (`owned`), a failure restores the name. */
  const char *name = NULL;
  Py_BEGIN_CRITICAL_SECTION(cap);
  name = PyCapsule_GetName(cap);
  if (name != NULL && strcmp(name, CAPSULE_NAME) == 0)
    claimed = PyCapsule_SetName(cap, CAPSULE_USED) == 0;
  Py_END_CRITICAL_SECTION();
  if (!claimed && PyErr_Occurred()) PyErr_Clear();
  if (!claimed) {
    if (name != NULL && strcmp(name, CAPSULE_USED) == 0)
      hrpy_raise(st->BufferError,
                "%s: the capsule was already consumed ('%s'); call __hurray__() again for a "
                "fresh one",
                ctxname, CAPSULE_USED);
    else
      hrpy_raise(st->BufferError, "%s: expected a '%s' capsule, got %s%s%s", ctxname,
                CAPSULE_NAME, name != NULL ? "'" : "", name != NULL ? name : "an unnamed one",
                name != NULL ? "'" : "");
    goto done;
  }
  ctx = PyCapsule_GetContext(cap);
  if (ctx == NULL) {
    PyErr_Clear();
    hrpy_raise(st->BufferError, "%s: the capsule has no HurrayTensorContext", ctxname);
    goto done;
  }
  /* The ABI version comes first: before any other accessor, before the
   * buffer list is touched (its shape may differ in another version). */
  uint32_t abi = 0;
  if (hurray_tensor_context_abi_version(ctx, &abi) != HURRAY_OK) {
    ctx = NULL;
    hrpy_raise(st->BufferError, "%s: the capsule's context is not a live HurrayTensorContext",
              ctxname);
    goto done;
  }
  if (abi != HURRAY_C_ABI_VERSION) {
    ctx = NULL;
    hrpy_raise(st->UnsupportedError,
              "%s: the capsule was produced with C ABI version %u; this build reads version %d "
              "(producer and consumer must agree)",
              ctxname, (unsigned)abi, HURRAY_C_ABI_VERSION);
    goto done;
  }
  list = PyCapsule_GetPointer(cap, CAPSULE_USED);
  if (list == NULL) {
    ctx = NULL;
    goto done;
  }
  /* Consumed: from here the list and the context are ours to destroy. */
  owned = true;
  const uint8_t *dbytes = NULL;
  uint64_t dlen = 0;
  if (hurray_tensor_context_descriptor(ctx, &dbytes, &dlen) != HURRAY_OK || dbytes == NULL) {
    hrpy_raise(st->BufferError, "%s: the capsule's context carries no descriptor", ctxname);
    goto done;
  }
  if (hrpy_decode_descriptor(st, dbytes, dlen, permissive != 0, &desc, &options, ctxname) < 0)
    goto done;
  /* Releases the producer's owner reference: the buffers hold their own. */
  HRPY_CANNOT_FAIL(hurray_tensor_context_destroy(&ctx));
  HurrayDescriptorFields f;
  HRPY_CANNOT_FAIL(hurray_descriptor_fields(desc, &f));
  uint64_t n = 0;
  if (hurray_buffer_list_len(list, &n) != HURRAY_OK) {
    hrpy_raise(st->BufferError, "%s: the capsule's pointer is not a live HurrayBufferList",
              ctxname);
    goto done;
  }
  if (n != f.buffer_count) {
    hrpy_raise_rule(st, HURRAY_ERR_INVALID_BUFFER_TABLE, "buffer_count", ctxname,
                   "the capsule carries %llu buffers, its descriptor declares %u",
                   (unsigned long long)n, (unsigned)f.buffer_count);
    goto done;
  }
  nbuf = (uint32_t)n;
  keeper = PyCapsule_New(list, KEEPER_NAME, keeper_destructor);
  if (keeper == NULL) goto done;
  list = NULL; /* the keeper's now: destroyed once, with the last tensor using it */
  HurrayBufferList *kl = PyCapsule_GetPointer(keeper, KEEPER_NAME);
  bufs = PyMem_Calloc(nbuf > 0 ? nbuf : 1u, sizeof(HrpyBuffer));
  if (bufs == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  /* Writable only when provably so: the object we called is one of our
   * tensors and the list hands out its memory. */
  PyObject *src = hrpy_tensor_check(st, a[0]) ? a[0] : NULL;
  if (src != NULL && hrpy_tensor_nbuf(src) != nbuf) src = NULL;
  for (uint32_t i = 0; i < nbuf; i++) {
    HurrayBuffer *b = NULL;
    void *data = NULL;
    uint64_t size = 0;
    uint8_t dev = 0, sync = 0, mc = 0;
    if (hurray_buffer_list_get(kl, i, &b) != HURRAY_OK ||
        hurray_buffer_data_ptr(b, &data) != HURRAY_OK ||
        hurray_buffer_byte_size(b, &size) != HURRAY_OK ||
        hurray_buffer_device_tag(b, &dev) != HURRAY_OK ||
        hurray_buffer_sync_mode(b, &sync) != HURRAY_OK ||
        hurray_buffer_memory_class(b, &mc) != HURRAY_OK) {
      hrpy_raise(st->BufferError, "%s: buffer %u of the capsule cannot be read", ctxname,
                (unsigned)i);
      goto release;
    }
    const HurrayBufferHandle *h = &f.buffers[i];
    if (dev != h->device_tag || mc != h->memory_class || sync != h->sync_mode) {
      hrpy_raise(st->BufferError,
                "%s: buffer %u of the capsule declares device 0x%s / memory class 0x%s / sync "
                "mode 0x%s, its descriptor 0x%s / 0x%s / 0x%s",
                ctxname, (unsigned)i, hrpy_hex(dev).s, hrpy_hex(mc).s, hrpy_hex(sync).s,
                hrpy_hex(h->device_tag).s, hrpy_hex(h->memory_class).s, hrpy_hex(h->sync_mode).s);
      goto release;
    }
    bufs[i].data = data;
    bufs[i].size = size;
    bufs[i].owner = Py_NewRef(keeper);
    const HrpyBuffer *sb = src != NULL ? hrpy_tensor_buffer(src, i) : NULL;
    bool ours = sb != NULL && sb->data == data;
    bufs[i].readonly = !(ours && !sb->readonly);
    bufs[i].host = ours && hrpy_tensor_buffer_is_host(src, i);
  }
  result = hrpy_tensor_from_descriptor(st, desc, bufs, nbuf, options, ctxname);
  nbuf = 0; /* moved */
release:;
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  for (uint32_t i = 0; i < nbuf; i++) hrpy_buffer_release(&bufs[i]);
  PyErr_Restore(et, ev, etb);
done:;
  /* Destroying runs the producer's callbacks, which may be Python code:
   * keep a pending exception out of their way. */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyMem_Free(bufs);
  Py_XDECREF(keeper);
  HRPY_CANNOT_FAIL(hurray_buffer_list_destroy(&list));
  HRPY_CANNOT_FAIL(hurray_tensor_context_destroy(&ctx));
  HRPY_CANNOT_FAIL(hurray_descriptor_destroy(desc));
  if (claimed && !owned) {
    /* not consumed after all: the capsule keeps its list and context */
    Py_BEGIN_CRITICAL_SECTION(cap);
    (void)PyCapsule_SetName(cap, CAPSULE_NAME);
    Py_END_CRITICAL_SECTION();
    PyErr_Clear();
  }
  Py_DECREF(cap);
  PyErr_Restore(type, value, tb);
  return result;
}
