/*
 * core/device.c - hurray.Device: a device kind, a memory class and a runtime
 * device id.
 *
 * kind and memory_class each accept a name or the wire byte. The private
 * range 0xF0-0xFE is reachable only by byte and reports "private" (with the
 * tag in the repr); reserved and invalid bytes are refused, since a later
 * version of the format may assign them. device_id is runtime metadata for
 * DLPack: it is not on the wire.
 */
#include "core/device.h"

#include "util/args.h"
#include "util/bytes.h"
#include "util/errors.h"
#include "util/runtime.h"
#include "core/state.h"

typedef struct {
  PyObject_HEAD
  uint8_t tag;          /* device tag (buffer handle byte 12) */
  uint8_t memory_class; /* memory class (byte 14) */
  int32_t device_id;    /* runtime metadata, not on the wire */
} HrpyDevice;

#define DEV(o) ((HrpyDevice *)(o))

uint8_t hrpy_device_tag(PyObject *dev) { return DEV(dev)->tag; }
uint8_t hrpy_device_memory_class(PyObject *dev) { return DEV(dev)->memory_class; }
int32_t hrpy_device_id(PyObject *dev) { return DEV(dev)->device_id; }

/* Parses a name or byte for one of the two tag spaces. */
static int parse_tag(HrpyState *st, PyObject *obj, bool is_class, uint8_t *out) {
  const char *what = is_class ? "memory_class" : "kind";
  /* the private range of the tag space (the same bytes for both today) */
  unsigned first = is_class ? HURRAY_MEMORY_PRIVATE_FIRST : HURRAY_DEVICE_PRIVATE_FIRST;
  unsigned last = is_class ? HURRAY_MEMORY_PRIVATE_LAST : HURRAY_DEVICE_PRIVATE_LAST;
  if (PyUnicode_Check(obj)) {
    const char *name = PyUnicode_AsUTF8(obj);
    if (name == NULL) return -1;
    HurrayStatus s = is_class ? hurray_memory_class_from_name(name, out)
                              : hurray_device_from_name(name, out);
    if (s != HURRAY_OK) {
      if (strcmp(name, "private") == 0) {
        hrpy_raise(st->InvalidDescriptorError,
                   "%s 'private' needs its wire byte: pass an int in 0x%s-0x%s", what,
                   hrpy_hex((uint8_t)first).s, hrpy_hex((uint8_t)last).s);
      } else { /* the names the library knows, in tag order */
        char names[160] = "";
        for (unsigned b = 0; b < first; b++) {
          const char *n = is_class ? hurray_memory_class_name((uint8_t)b)
                                   : hurray_device_name((uint8_t)b);
          size_t used = strlen(names);
          if (n != NULL) PyOS_snprintf(names + used, sizeof names - used, "%s, ", n);
        }
        hrpy_raise(st->InvalidDescriptorError,
                   "unknown %s '%s'; accepted: %sor a private byte 0x%s-0x%s",
                   is_class ? "memory_class" : "device kind", name, names,
                   hrpy_hex((uint8_t)first).s, hrpy_hex((uint8_t)last).s);
      }
      return -1;
    }
    return 0;
  }
  if (PyLong_Check(obj) && !PyBool_Check(obj)) {
    uint64_t v;
    if (hrpy_arg_u64(st, obj, "Device", what, 255, &v) < 0) return -1;
    uint8_t b = (uint8_t)v;
    HurrayTagKind k = is_class ? hurray_memory_class_kind(b) : hurray_device_tag_kind(b);
    if (k != HURRAY_TAG_NAMED && k != HURRAY_TAG_PRIVATE) {
      hrpy_raise(st->InvalidDescriptorError,
                "%s byte 0x%02x is %s: a later version of the format may assign it, so it "
                "cannot be used as a private value",
                what, (unsigned)b, hurray_tag_kind_name(k));
      return -1;
    }
    *out = b;
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "%s must be a str or an int, not %.100s", what,
               Py_TYPE(obj)->tp_name);
  return -1;
}

static PyObject *device_alloc(HrpyState *st, uint8_t tag, uint8_t mc, int32_t id) {
  HrpyDevice *d = PyObject_New(HrpyDevice, st->core->DeviceType);
  if (d == NULL) return NULL;
  d->tag = tag;
  d->memory_class = mc;
  d->device_id = id;
  return (PyObject *)d;
}

PyObject *hrpy_device_new(HrpyState *st, uint8_t tag, uint8_t mc, int32_t id) {
  if (tag == HURRAY_DEVICE_CPU && mc == HURRAY_MEMORY_STANDARD && id == 0 && st->core->cpu != NULL) {
    return Py_NewRef(st->core->cpu);
  }
  return device_alloc(st, tag, mc, id);
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  HrpyState *st = hrpy_state_of_type(type);
  static const char *const kwlist[] = {"kind", "device_id", "memory_class", NULL};
  PyObject *kind = NULL, *idobj = NULL, *mcobj = NULL;
  PyObject *argv_[3];
  if (hrpy_parse_tuple("Device", args, kwargs, kwlist, 3, 1, argv_) < 0) return NULL;
  kind = argv_[0];
  if (argv_[1] != NULL) idobj = argv_[1];
  if (argv_[2] != NULL) mcobj = argv_[2];
  uint8_t tag, mc = HURRAY_MEMORY_STANDARD;
  if (parse_tag(st, kind, false, &tag) < 0) return NULL;
  if (mcobj != NULL && mcobj != Py_None && parse_tag(st, mcobj, true, &mc) < 0) return NULL;
  int64_t id = 0;
  if (idobj != NULL && idobj != Py_None) {
    if (hrpy_arg_i64(st, idobj, "Device", "device_id", 0, INT32_MAX, &id) < 0) return NULL;
  }
  if (!hurray_device_memory_class_valid(tag, mc)) {
    return hrpy_raise(st->InvalidDescriptorError,
                     "memory class 0x%02x is not valid on device 0x%02x (buffer-protocol.md, "
                     "device/memory-class validity table)",
                     (unsigned)mc, (unsigned)tag);
  }
  return hrpy_device_new(st, tag, mc, (int32_t)id);
}

/* ---- getters --------------------------------------------------------------- */

static PyObject *dv_kind(PyObject *self, void *c) {
  (void)c;
  const char *n = hurray_device_name(DEV(self)->tag);
  return PyUnicode_FromString(n != NULL ? n : "private");
}
static PyObject *dv_memory_class(PyObject *self, void *c) {
  (void)c;
  const char *n = hurray_memory_class_name(DEV(self)->memory_class);
  return PyUnicode_FromString(n != NULL ? n : "private");
}
static PyObject *dv_tag(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(DEV(self)->tag);
}
static PyObject *dv_mc_tag(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(DEV(self)->memory_class);
}
static PyObject *dv_is_private(PyObject *self, void *c) {
  (void)c;
  return PyBool_FromLong(hurray_device_tag_kind(DEV(self)->tag) == HURRAY_TAG_PRIVATE);
}
static PyObject *dv_device_id(PyObject *self, void *c) {
  (void)c;
  return PyLong_FromLong(DEV(self)->device_id);
}

static PyGetSetDef device_getset[] = {
    {"kind", dv_kind, NULL, "Device kind name ('cpu', 'cuda', ...; 'private' for 0xF0-0xFE).", NULL},
    {"memory_class", dv_memory_class, NULL,
     "Memory class name ('standard', 'host_pinned', 'unified', 'peer'; 'private').", NULL},
    {"tag", dv_tag, NULL, "The device tag wire byte (int).", NULL},
    {"memory_class_tag", dv_mc_tag, NULL, "The memory class wire byte (int).", NULL},
    {"is_private", dv_is_private, NULL, "True when the device tag is in the private range.", NULL},
    {"device_id", dv_device_id, NULL,
     "Device ordinal (runtime metadata for DLPack; not stored on the wire).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- dunders --------------------------------------------------------------- */

static PyObject *device_repr(PyObject *self) {
  HrpyDevice *d = DEV(self);
  const char *dn = hurray_device_name(d->tag), *mn = hurray_memory_class_name(d->memory_class);
  PyObject *kind = dn != NULL ? PyUnicode_FromFormat("kind='%s'", dn)
                              : PyUnicode_FromFormat("kind='private', tag=0x%02x",
                                                     (unsigned)d->tag);
  if (kind == NULL) return NULL;
  PyObject *r = mn != NULL
                    ? PyUnicode_FromFormat("hurray.Device(%U, device_id=%d, memory_class='%s')",
                                           kind, (int)d->device_id, mn)
                    : PyUnicode_FromFormat(
                          "hurray.Device(%U, device_id=%d, memory_class='private', "
                          "memory_class_tag=0x%02x)",
                          kind, (int)d->device_id, (unsigned)d->memory_class);
  Py_DECREF(kind);
  return r;
}

static Py_hash_t device_hash(PyObject *self) {
  HrpyDevice *d = DEV(self);
  const uint64_t parts[3] = {d->tag, d->memory_class, (uint32_t)d->device_id};
  return hrpy_hash_fold(hrpy_hash_words(HRPY_HASH_SEED, parts, 3));
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
  if (!Py_IS_TYPE(b, Py_TYPE(a)) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  HrpyDevice *x = DEV(a), *y = DEV(b);
  bool eq = x->tag == y->tag && x->memory_class == y->memory_class &&
            x->device_id == y->device_id;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *device_reduce(PyObject *self, PyObject *unused) {
  (void)unused;
  HrpyDevice *d = DEV(self);
  return Py_BuildValue("O(iii)", (PyObject *)Py_TYPE(self), (int)d->tag, (int)d->device_id,
                       (int)d->memory_class);
}

static PyMethodDef device_methods[] = {
    {"__reduce__", device_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot device_slots[] = {
    {Py_tp_doc,
     "Device(kind, device_id=0, memory_class='standard')\n--\n\n"
     "Where a tensor's buffers live: a device kind and a memory class, plus the runtime "
     "`device_id` that DLPack reports.\n"
     "\n"
     "- `kind` and `memory_class` each take a name (`\"cpu\"`, `\"cuda\"`, `\"rocm\"`, "
     "`\"metal\"`,\n"
     "  `\"vulkan\"`, `\"webgpu\"`, `\"hexagon\"`, `\"level_zero\"`, `\"opencl\"`; "
     "`\"standard\"`,\n"
     "  `\"host_pinned\"`, `\"unified\"`, `\"peer\"`) or the wire byte.\n"
     "- The private range `0xF0`–`0xFE` is reached by byte only. `kind` / `memory_class` then\n"
     "  report `\"private\"`, and the repr includes the tag: `hurray.Device(kind='private',\n"
     "  tag=0xf3, device_id=0, memory_class='standard')`. `tag`, `memory_class_tag` and\n"
     "  `is_private` expose the bytes.\n"
     "- A reserved or invalid byte is refused with `InvalidDescriptorError` (a later version of\n"
     "  the format may assign it), and so is a pair outside the device / memory-class validity\n"
     "  table (CPU has no peer memory; WebGPU only standard memory; a private class needs a\n"
     "  private device).\n"
     "- `device_id` is runtime metadata for DLPack: it is not stored on the wire (a decoded\n"
     "  descriptor reports device id 0).\n"
     "- `hurray.device.cpu`, `hurray.device.cuda`, … are the named devices with standard\n"
     "  memory and id 0. `hurray.device.cpu` is the default device of every tensor, and\n"
     "  `hurray.Device(\"cpu\") is hurray.device.cpu`.\n"
     "- Immutable, hashable, compared by value.\n"
     "\n"
     "The DLPack device type of each (device, memory class) pair, and the pairs DLPack cannot "
     "carry, are in the protocols reference (Python protocols, DLPack device types)."},
    {Py_tp_new, device_new},
    {Py_tp_repr, device_repr},
    {Py_tp_hash, device_hash},
    {Py_tp_richcompare, device_richcompare},
    {Py_tp_getset, device_getset},
    {Py_tp_methods, device_methods},
    {Py_tp_dealloc, hrpy_plain_dealloc},
    {0, NULL},
};

static PyType_Spec device_spec = {
    .name = "hurray.Device",
    .basicsize = sizeof(HrpyDevice),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = device_slots,
};

static PyObject *device_table(PyObject *m, PyObject *unused) {
  (void)unused;
  HrpyState *st = hrpy_state_of_module(m);
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
#define HRPY_X_(t, NAME, name)                                                   \
  {                                                                             \
    PyObject *o = hrpy_device_new(st, (t), HURRAY_MEMORY_STANDARD, 0);           \
    if (o == NULL || PyDict_SetItemString(d, name, o) < 0) {                    \
      Py_XDECREF(o);                                                            \
      Py_DECREF(d);                                                             \
      return NULL;                                                              \
    }                                                                           \
    Py_DECREF(o);                                                               \
  }
  HURRAY_DEVICE_TABLE(HRPY_X_)
#undef HRPY_X_
  return d;
}

static PyMethodDef device_table_def = {
    "_device_table", device_table, METH_NOARGS,
    "_device_table()\n--\n\nDict of the named devices (standard memory, device 0)."};

int hrpy_device_init(PyObject *m, HrpyState *st) {
  st->core->DeviceType = (PyTypeObject *)PyType_FromModuleAndSpec(m, &device_spec, NULL);
  if (st->core->DeviceType == NULL) return -1;
  if (PyModule_AddType(m, st->core->DeviceType) < 0) return -1;
  st->core->cpu = device_alloc(st, HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 0);
  if (st->core->cpu == NULL) return -1;
  PyObject *fn = PyCFunction_NewEx(&device_table_def, m, NULL);
  if (fn == NULL) return -1;
  int rc = PyModule_AddObjectRef(m, "_device_table", fn);
  Py_DECREF(fn);
  return rc;
}
