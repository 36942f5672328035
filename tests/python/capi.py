"""The C ABI of libhurray (buffer.h, context.h, descriptor.h) through ctypes:
a consumer and a producer of the native protocol written against the C
library alone, with no Python type involved. The shared library comes from
the C build (build/libhurray.so, or $HURRAY_LIBRARY)."""

import ctypes
import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]

c_void_p, c_uint8, c_uint32, c_uint64, c_int32 = (ctypes.c_void_p, ctypes.c_uint8,
                                                   ctypes.c_uint32, ctypes.c_uint64,
                                                   ctypes.c_int32)
P = ctypes.POINTER

RELEASE = ctypes.CFUNCTYPE(None, c_void_p, c_void_p)
OWNER_RELEASE = ctypes.CFUNCTYPE(None, c_void_p)

# Capsule names must outlive the capsules that point at them.
NAME = b"hurray_tensor"
USED = b"used_hurray_tensor"

pyapi = ctypes.pythonapi
pyapi.PyCapsule_GetPointer.restype = c_void_p
pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
pyapi.PyCapsule_GetContext.restype = c_void_p
pyapi.PyCapsule_GetContext.argtypes = [ctypes.py_object]
pyapi.PyCapsule_SetContext.restype = ctypes.c_int
pyapi.PyCapsule_SetContext.argtypes = [ctypes.py_object, c_void_p]
pyapi.PyCapsule_GetName.restype = ctypes.c_char_p
pyapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
pyapi.PyCapsule_SetName.restype = ctypes.c_int
pyapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
pyapi.PyCapsule_New.restype = ctypes.py_object
pyapi.PyCapsule_New.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]


class BufferHandle(ctypes.Structure):
    _fields_ = [("byte_size", c_uint64), ("alignment", c_uint32), ("device_tag", c_uint8),
                ("sync_mode", c_uint8), ("memory_class", c_uint8), ("reserved", c_uint8)]


def library_path():
    env = os.environ.get("HURRAY_LIBRARY")
    cands = [pathlib.Path(env)] if env else []
    cands += [ROOT / "build" / "libhurray.so", ROOT / "build-asan" / "libhurray.so",
              ROOT / "build-py" / "libhurray.so"]
    for p in cands:
        if p.is_file():
            return p
    return None


_lib = None


def lib():
    """The C library with the prototypes used here, or None when not built."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if path is None:
        return None
    L = ctypes.CDLL(str(path))
    sigs = {
        "hurray_c_abi_version": (c_uint32, []),
        "hurray_handle_checks_enabled": (ctypes.c_bool, []),
        "hurray_tensor_context_new": (c_int32, [c_uint32, c_void_p, c_uint64, c_void_p,
                                                OWNER_RELEASE, P(c_void_p)]),
        "hurray_tensor_context_abi_version": (c_int32, [c_void_p, P(c_uint32)]),
        "hurray_tensor_context_descriptor": (c_int32, [c_void_p, P(c_void_p), P(c_uint64)]),
        "hurray_tensor_context_destroy": (c_int32, [P(c_void_p)]),
        "hurray_buffer_list_new": (c_int32, [c_uint64, P(c_void_p)]),
        "hurray_buffer_list_push": (c_int32, [c_void_p, c_void_p]),
        "hurray_buffer_list_len": (c_int32, [c_void_p, P(c_uint64)]),
        "hurray_buffer_list_get": (c_int32, [c_void_p, c_uint64, P(c_void_p)]),
        "hurray_buffer_list_destroy": (c_int32, [P(c_void_p)]),
        "hurray_buffer_from_ptr": (c_int32, [c_void_p, c_uint64, c_uint32, c_uint8, c_uint8,
                                             c_uint8, RELEASE, c_void_p, P(c_void_p)]),
        "hurray_buffer_retain": (c_int32, [c_void_p]),
        "hurray_buffer_destroy": (c_int32, [c_void_p]),
        "hurray_buffer_data_ptr": (c_int32, [c_void_p, P(c_void_p)]),
        "hurray_buffer_byte_size": (c_int32, [c_void_p, P(c_uint64)]),
        "hurray_buffer_alignment": (c_int32, [c_void_p, P(c_uint32)]),
        "hurray_buffer_device_tag": (c_int32, [c_void_p, P(c_uint8)]),
        "hurray_buffer_sync_mode": (c_int32, [c_void_p, P(c_uint8)]),
        "hurray_buffer_memory_class": (c_int32, [c_void_p, P(c_uint8)]),
        "hurray_descriptor_decode": (c_int32, [c_void_p, ctypes.c_size_t, P(c_void_p)]),
        "hurray_descriptor_destroy": (c_int32, [c_void_p]),
        "hurray_descriptor_element_type_tag": (c_int32, [c_void_p, P(c_uint8)]),
        "hurray_descriptor_layout_tag": (c_int32, [c_void_p, P(c_uint8)]),
        "hurray_descriptor_buffer_count": (c_int32, [c_void_p, P(c_uint32)]),
        "hurray_descriptor_shape": (c_int32, [c_void_p, P(c_uint64), P(ctypes.c_size_t)]),
        "hurray_descriptor_buffer": (c_int32, [c_void_p, c_uint32, P(P(BufferHandle))]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    _lib = L
    return L


def usable():
    """None when the C consumer tests can run, else why not."""
    import hurray
    L = lib()
    if L is None:
        return ("libhurray.so not built (cmake -B build, or set HURRAY_LIBRARY): the C "
                "consumer tests need the C library")
    if L.hurray_handle_checks_enabled() or hurray._hurray._HANDLE_CHECKS:
        return ("a debug build of libhurray tracks destroyed handles per copy of the library, "
                "so handles shared between the extension's copy and libhurray.so can be "
                "misreported; these tests need release builds (scripts/test.sh builds them)")
    return None


def check(rc):
    assert rc == 0, f"libhurray status {rc}"


# ---- a consumer written against the C ABI alone --------------------------------------

class Received:
    """What a C consumer learns from a 'hurray_tensor' capsule."""
    abi = None
    descriptor = b""
    dtype_tag = layout_tag = None
    shape = ()
    handles = ()
    buffers = ()


def consume(capsule, keep_list=False):
    """Consumes `capsule` as a C program would: the ABI version first, then
    rename, then decode the descriptor (C decoder) and read every buffer. The
    list and the context are destroyed exactly once (the list kept instead
    when keep_list, returned to the caller)."""
    L = lib()
    r = Received()
    ctx = c_void_p(pyapi.PyCapsule_GetContext(capsule))
    abi = c_uint32()
    check(L.hurray_tensor_context_abi_version(ctx, ctypes.byref(abi)))
    r.abi = abi.value
    assert r.abi == L.hurray_c_abi_version()
    lst = c_void_p(pyapi.PyCapsule_GetPointer(capsule, NAME))
    assert pyapi.PyCapsule_SetName(capsule, USED) == 0
    data, n = c_void_p(), c_uint64()
    check(L.hurray_tensor_context_descriptor(ctx, ctypes.byref(data), ctypes.byref(n)))
    r.descriptor = ctypes.string_at(data, n.value)
    d = c_void_p()
    check(L.hurray_descriptor_decode(ctypes.c_char_p(r.descriptor), len(r.descriptor),
                                     ctypes.byref(d)))
    tag, lay, cnt = c_uint8(), c_uint8(), c_uint32()
    check(L.hurray_descriptor_element_type_tag(d, ctypes.byref(tag)))
    check(L.hurray_descriptor_layout_tag(d, ctypes.byref(lay)))
    check(L.hurray_descriptor_buffer_count(d, ctypes.byref(cnt)))
    dims, rank = (c_uint64 * 64)(), ctypes.c_size_t(64)
    check(L.hurray_descriptor_shape(d, dims, ctypes.byref(rank)))
    r.dtype_tag, r.layout_tag = tag.value, lay.value
    r.shape = tuple(dims[i] for i in range(rank.value))
    hs = []
    for i in range(cnt.value):
        h = P(BufferHandle)()
        check(L.hurray_descriptor_buffer(d, i, ctypes.byref(h)))
        hs.append((h[0].byte_size, h[0].alignment, h[0].device_tag, h[0].sync_mode,
                   h[0].memory_class))
    r.handles = tuple(hs)
    check(L.hurray_descriptor_destroy(d))
    length = c_uint64()
    check(L.hurray_buffer_list_len(lst, ctypes.byref(length)))
    assert length.value == cnt.value
    bufs = []
    for i in range(length.value):
        b = c_void_p()
        check(L.hurray_buffer_list_get(lst, i, ctypes.byref(b)))  # borrowed
        p, size, dev, sync = c_void_p(), c_uint64(), c_uint8(), c_uint8()
        check(L.hurray_buffer_data_ptr(b, ctypes.byref(p)))
        check(L.hurray_buffer_byte_size(b, ctypes.byref(size)))
        check(L.hurray_buffer_device_tag(b, ctypes.byref(dev)))
        check(L.hurray_buffer_sync_mode(b, ctypes.byref(sync)))
        assert (size.value, dev.value, sync.value) == (hs[i][0], hs[i][2], hs[i][3])
        bufs.append(ctypes.string_at(p, size.value) if size.value else b"")
    r.buffers = tuple(bufs)
    check(L.hurray_tensor_context_destroy(ctypes.byref(ctx)))
    if keep_list:
        return r, lst
    check(L.hurray_buffer_list_destroy(ctypes.byref(lst)))
    assert lst.value is None
    return r


# ---- a producer written against the C ABI alone --------------------------------------

class Producer:
    """Builds 'hurray_tensor' capsules from ctypes memory, as a C library
    would, counting the release callbacks it receives."""

    def __init__(self):
        self.released = []
        self.owner_released = 0
        self._keep = []
        self.on_release = RELEASE(lambda data, ctx: self.released.append(ctx))
        self.on_owner = OWNER_RELEASE(self._owner)

    def _owner(self, owner):
        self.owner_released += 1

    def memory(self, payload, align=64):
        raw = ctypes.create_string_buffer(len(payload) + align)
        addr = ctypes.addressof(raw)
        start = (-addr) % align
        ctypes.memmove(addr + start, payload, len(payload))
        self._keep.append(raw)
        return addr + start

    def list(self, payloads, device=0, sync=0, memory_class=0):
        L = lib()
        lst = c_void_p()
        check(L.hurray_buffer_list_new(len(payloads), ctypes.byref(lst)))
        for i, payload in enumerate(payloads):
            ptr = self.memory(payload) if payload else None
            b = c_void_p()
            check(L.hurray_buffer_from_ptr(ptr, len(payload), 64 if payload else 1, device, sync,
                                           memory_class, self.on_release, i + 1,
                                           ctypes.byref(b)))
            check(L.hurray_buffer_list_push(lst, b))
        return lst

    def context(self, descriptor, abi=None):
        L = lib()
        ctx = c_void_p()
        check(L.hurray_tensor_context_new(L.hurray_c_abi_version() if abi is None else abi,
                                          ctypes.c_char_p(descriptor), len(descriptor), None,
                                          self.on_owner, ctypes.byref(ctx)))
        return ctx

    def capsule(self, descriptor, payloads, abi=None, list_pointer=None, context=True,
                device=0):
        """A capsule without a destructor (the test plays the consumer or cleans up)."""
        lst = self.list(payloads, device) if list_pointer is None else c_void_p(list_pointer)
        cap = pyapi.PyCapsule_New(lst, NAME, None)
        ctx = self.context(descriptor, abi) if context else None
        if ctx is not None:
            assert pyapi.PyCapsule_SetContext(cap, ctx) == 0
        return cap, lst, ctx
