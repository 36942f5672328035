"""The DLPack C structures in ctypes, to inspect capsules from Python and to
play a legacy-only producer or consumer in the tests."""

import ctypes

pyapi = ctypes.pythonapi
pyapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
pyapi.PyCapsule_GetName.restype = ctypes.c_char_p
pyapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
pyapi.PyCapsule_SetName.restype = ctypes.c_int
pyapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
pyapi.PyCapsule_IsValid.restype = ctypes.c_int
pyapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

READ_ONLY = 1
IS_COPIED = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]


def capsule_name(cap):
    return pyapi.PyCapsule_GetName(cap).decode()


def read(cap):
    """(managed struct, DLTensor info dict) of an unconsumed capsule."""
    name = capsule_name(cap)
    ptr = pyapi.PyCapsule_GetPointer(cap, name.encode())
    if name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(ptr)
        version, flags = (m.version.major, m.version.minor), m.flags
    elif name == "dltensor":
        m = DLManagedTensor.from_address(ptr)
        version, flags = None, None
    else:
        raise ValueError(name)
    t = m.dl_tensor
    info = {
        "name": name,
        "version": version,
        "flags": flags,
        "data": t.data,
        "device": (t.device.device_type, t.device.device_id),
        "ndim": t.ndim,
        "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        "shape": tuple(t.shape[i] for i in range(t.ndim)),
        "strides": None if not t.strides else tuple(t.strides[i] for i in range(t.ndim)),
        "byte_offset": t.byte_offset,
    }
    return m, info


# PyCapsule_SetName keeps the pointer it is given: the names must outlive the capsules.
_USED_NAMES = {"dltensor": b"used_dltensor", "dltensor_versioned": b"used_dltensor_versioned"}


def consume(cap):
    """Play a consumer: rename the capsule, then call its deleter (ownership taken)."""
    name = capsule_name(cap)
    ptr = pyapi.PyCapsule_GetPointer(cap, name.encode())
    assert pyapi.PyCapsule_SetName(cap, _USED_NAMES[name]) == 0
    cls = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    m = cls.from_address(ptr)
    m.deleter(ctypes.cast(ptr, ctypes.POINTER(cls)))


class LegacyProducer:
    """An object that speaks only the pre-1.0 protocol: __dlpack__(stream=None)
    with no keywords, returning a legacy 'dltensor' capsule (from `source`)."""

    def __init__(self, source):
        self.source = source
        self.calls = []

    def __dlpack__(self, stream=None):
        self.calls.append(stream)
        return self.source.__dlpack__()

    def __dlpack_device__(self):
        return self.source.__dlpack_device__()


def legacy_consume_to_numpy(obj):
    """A legacy-only consumer: calls obj.__dlpack__() with no arguments, reads the
    'dltensor' capsule through ctypes, copies the data out and releases it."""
    import numpy as np

    cap = obj.__dlpack__()
    m, info = read(cap)
    assert info["name"] == "dltensor"
    code, bits, _ = info["dtype"]
    kind = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}[code]
    dt = np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(bool)
    n = int(np.prod(info["shape"], dtype=np.int64))
    strides_b = tuple(s * dt.itemsize for s in info["strides"])
    buf = (ctypes.c_char * max(1, n * dt.itemsize)).from_address(info["data"]) if n else b""
    flat = np.frombuffer(buf, dtype=dt, count=n) if n else np.empty(0, dt)
    arr = np.lib.stride_tricks.as_strided(flat, info["shape"], strides_b).copy()
    consume(cap)
    return arr, info


pyapi.PyCapsule_New.restype = ctypes.py_object
pyapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# What a forged capsule points at lives here until the process ends: a consumer
# may keep the data (zero-copy) long after the capsule is gone.
_FORGED = []


@ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
def _noop_deleter_versioned(_m):
    pass


@ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
def _noop_deleter_legacy(_m):
    pass


def forge(data, shape, strides=None, dtype=(2, 32, 1), device=(1, 0), byte_offset=0,
          ndim=None, versioned=True, flags=0, version=(1, 0), shape_null=False, keep=None):
    """A DLPack capsule carrying exactly these fields, whatever they say (the
    hostile producer of the hardening tests). `data` is an address (0: NULL) or
    an object with .ctypes.data. The deleter frees nothing: what the capsule
    points at is appended to `keep` (a list the caller holds while anything
    made from the capsule lives), or kept until the process ends."""
    keep_here = [data]
    addr = data if isinstance(data, int) else data.ctypes.data
    n = len(shape) if ndim is None else ndim
    shp = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    strd = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
    keep_here += [shp, strd]
    t = DLTensor()
    t.data = addr or None
    t.device = DLDevice(*device)
    t.ndim = n
    t.dtype = DLDataType(*dtype)
    t.shape = ctypes.cast(None if shape_null else shp, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strd, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = byte_offset
    if versioned:
        m = DLManagedTensorVersioned()
        m.version = DLPackVersion(*version)
        m.flags = flags
        m.deleter = _noop_deleter_versioned
        name = b"dltensor_versioned"
    else:
        m = DLManagedTensor()
        m.deleter = _noop_deleter_legacy
        name = b"dltensor"
    m.dl_tensor = t
    keep_here.append(m)
    (_FORGED if keep is None else keep).append(keep_here)
    return pyapi.PyCapsule_New(ctypes.addressof(m), name, None)
