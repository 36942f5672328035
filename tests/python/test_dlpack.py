"""DLPack (docs/internals/decisions.md § DLPack): the producer (__dlpack__, __dlpack_device__), the consumer
(from_dlpack), both capsule kinds, negotiation, copy, dl_device, stream,
READ_ONLY, strides, and the capsule lifetime."""

import subprocess
import sys
import weakref

import pytest

import dlpack_ctypes as dl
import hurray
from conftest import aligned_array, collect, data_ptr

np = pytest.importorskip("numpy")


def tensor(shape=(2, 3), dtype="f4", fill=None, **kw):
    a = aligned_array(shape, dtype, fill=np.arange(int(np.prod(shape))).reshape(shape)
                      if fill is None else fill)
    return hurray.from_numpy(a, **kw), a


# ---- producer ------------------------------------------------------------------

@pytest.mark.parametrize("mv,name,version", [
    (None, "dltensor", None), ((0, 8), "dltensor", None), ((1, 0), "dltensor_versioned", (1, 0)),
    ((1, 1), "dltensor_versioned", (1, 1)), ((1, 7), "dltensor_versioned", (1, 1)),
    ((2, 0), "dltensor_versioned", (1, 1)),
])
def test_capsule_kind_follows_max_version(mv, name, version):
    t, a = tensor()
    cap = t.__dlpack__(max_version=mv) if mv is not None else t.__dlpack__()
    _, info = dl.read(cap)
    assert info["name"] == name
    assert info["version"] == version
    assert info["data"] == a.ctypes.data  # no copy
    assert info["device"] == (1, 0)
    assert info["shape"] == (2, 3)
    assert info["strides"] == (3, 1)  # always filled
    assert info["byte_offset"] == 0
    if version is not None:
        assert info["flags"] == 0


DLPACK_TYPES = [
    ("float16", (2, 16)), ("bfloat16", (4, 16)), ("float32", (2, 32)), ("float64", (2, 64)),
    ("int8", (0, 8)), ("uint8", (1, 8)), ("int16", (0, 16)), ("uint16", (1, 16)),
    ("int32", (0, 32)), ("uint32", (1, 32)), ("int64", (0, 64)), ("uint64", (1, 64)),
    ("complex64", (5, 64)), ("complex128", (5, 128)),
]


@pytest.mark.parametrize("name,codebits", DLPACK_TYPES)
def test_dtype_codes(name, codebits):
    d = hurray.Dtype.from_name(name)
    t = hurray.zeros([4], dtype=d)
    _, info = dl.read(t.__dlpack__(max_version=(1, 0)))
    assert info["dtype"] == codebits + (1,)


@pytest.mark.parametrize("name,code,bits", [
    ("float8_e4m3", 10, 8), ("float8_e5m2", 12, 8), ("float8_e8m0", 14, 8),
    ("float6_e2m3", 15, 6), ("float6_e3m2", 16, 6), ("float4_e2m1", 17, 4),
])
def test_float8_family_needs_dlpack_1_1(name, code, bits):
    d = hurray.Dtype.from_name(name)
    t = hurray.Tensor(bytes(hurray.buffer_size_bytes(d, 8)), d, [8])
    for mv in (None, (1, 0)):
        with pytest.raises(BufferError):
            t.__dlpack__(max_version=mv)
    _, info = dl.read(t.__dlpack__(max_version=(1, 1)))
    assert info["dtype"] == (code, bits, 1)
    assert info["version"] == (1, 1)


@pytest.mark.parametrize("name", ["int4", "uint4", "int2", "uint2", "float128"])
def test_types_outside_dlpack_raise_builtin_buffer_error(name):
    d = hurray.Dtype.from_name(name)
    t = hurray.Tensor(bytes(16), d, [1])
    with pytest.raises(BufferError) as ei:
        t.__dlpack__(max_version=(1, 1))
    assert not isinstance(ei.value, hurray.BufferError)
    assert name in str(ei.value)


def test_bool_needs_copy():
    src = np.array([True, False, True, True, False])
    t = hurray.from_numpy(src)
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 1))
    cap = t.__dlpack__(max_version=(1, 1), copy=True)
    _, info = dl.read(cap)
    assert info["dtype"] == (6, 8, 1)
    assert info["flags"] & dl.IS_COPIED
    import ctypes
    got = list((ctypes.c_uint8 * 5).from_address(info["data"]))
    assert got == [1, 0, 1, 1, 0]
    np.testing.assert_array_equal(np.from_dlpack(_Capsule(cap)), src)


class _Capsule:
    """Hands an existing capsule to a consumer that wants an object."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def test_copy_true_copies_and_flags():
    t, a = tensor()
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    _, info = dl.read(cap)
    assert info["data"] != a.ctypes.data
    assert info["flags"] == dl.IS_COPIED
    back = np.from_dlpack(_Capsule(cap))
    np.testing.assert_array_equal(back, a)
    # copy=False never copies
    _, info2 = dl.read(t.__dlpack__(max_version=(1, 0), copy=False))
    assert info2["data"] == a.ctypes.data


def test_read_only_buffers_are_copied_unless_copy_false():
    """copy=None copies a read-only buffer (PyTorch ignores DLPack's READ_ONLY flag,
    and a write through it into a read-only mapping would kill the process);
    copy=False hands the memory out as is, flagged READ_ONLY."""
    a = aligned_array((4,), "f4", fill=1)
    a.flags.writeable = False
    t = hurray.from_numpy(a)
    _, info = dl.read(t.__dlpack__(max_version=(1, 0), copy=False))
    assert info["flags"] & dl.READ_ONLY and not info["flags"] & dl.IS_COPIED
    assert info["data"] == a.ctypes.data
    _, info = dl.read(t.__dlpack__(max_version=(1, 0)))
    assert info["flags"] & dl.IS_COPIED and not info["flags"] & dl.READ_ONLY
    assert info["data"] != a.ctypes.data
    # the legacy capsule cannot say read-only: copy=False is refused, None copies
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)
    _, info = dl.read(t.__dlpack__())
    assert info["name"] == "dltensor" and info["data"] != a.ctypes.data
    v = np.from_dlpack(t)  # a writable copy
    v[0] = 7
    assert a[0] == 1
    w = np.asarray(t)  # the NumPy protocols keep the zero-copy read-only view
    assert not w.flags.writeable and data_ptr(w) == a.ctypes.data


def test_negative_strides_are_copied_unless_copy_false():
    a = np.arange(6, dtype=np.float32)
    t = hurray.from_numpy(a[::-1])
    _, info = dl.read(t.__dlpack__(max_version=(1, 0)))
    assert info["flags"] & dl.IS_COPIED and info["strides"] == (1,)
    np.testing.assert_array_equal(np.from_dlpack(t), a[::-1])
    _, info = dl.read(t.__dlpack__(max_version=(1, 0), copy=False))
    assert info["strides"] == (-1,) and not info["flags"] & dl.IS_COPIED


def test_strides_of_column_major_and_transposed():
    t, a = tensor((2, 3))
    _, info = dl.read(t.T.__dlpack__(max_version=(1, 0)))
    assert info["shape"] == (3, 2) and info["strides"] == (1, 3)
    assert info["data"] == a.ctypes.data
    np.testing.assert_array_equal(np.from_dlpack(t.T), a.T)


def test_dl_device_and_stream():
    t, _ = tensor()
    t.__dlpack__(max_version=(1, 0), dl_device=(1, 0))
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 0), dl_device=(1, 1))
    for s in (None, -1, 1, 5):
        t.__dlpack__(stream=s, max_version=(1, 0))
    with pytest.raises(TypeError):
        t.__dlpack__(stream="default")
    with pytest.raises(TypeError):
        t.__dlpack__(3)  # keyword-only
    with pytest.raises(TypeError):
        t.__dlpack__(max_version=1)
    assert t.__dlpack_device__() == (1, 0)


def test_dynamic_dims_cannot_be_exported():
    t = hurray.Tensor(bytes(8), hurray.float32, [None])
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 0))


def test_numpy_consumes_zero_copy():
    t, a = tensor()
    v = np.from_dlpack(t)
    assert data_ptr(v) == a.ctypes.data
    np.testing.assert_array_equal(v, a)


def test_legacy_only_consumer():
    t, a = tensor((3, 2))
    arr, info = dl.legacy_consume_to_numpy(t)
    assert info["name"] == "dltensor" and info["strides"] == (2, 1)
    assert info["data"] == a.ctypes.data
    np.testing.assert_array_equal(arr, a)
    arr, info = dl.legacy_consume_to_numpy(t.T)
    np.testing.assert_array_equal(arr, a.T)


# ---- capsule lifetime ------------------------------------------------------------

def test_refcount_incremented_and_released_on_delete():
    t, _ = tensor()
    base = sys.getrefcount(t)
    cap = t.__dlpack__(max_version=(1, 0))
    assert sys.getrefcount(t) == base + 1
    del cap
    assert sys.getrefcount(t) == base


def test_refcount_released_on_consume():
    for mv in (None, (1, 1)):
        t, _ = tensor()
        base = sys.getrefcount(t)
        cap = t.__dlpack__(max_version=mv)
        assert sys.getrefcount(t) == base + 1
        dl.consume(cap)
        assert sys.getrefcount(t) == base
        assert dl.capsule_name(cap).startswith("used_")
        del cap  # a consumed capsule's destructor does nothing
        assert sys.getrefcount(t) == base


def test_capsule_keeps_tensor_alive():
    t, a = tensor()
    ref = weakref.ref(t)
    cap = t.__dlpack__(max_version=(1, 0))
    del t
    collect()
    assert ref() is not None
    v = np.from_dlpack(_Capsule(cap))
    del cap
    collect()
    assert ref() is not None  # the NumPy array now holds it
    np.testing.assert_array_equal(v, a)
    del v
    collect()
    assert ref() is None


@pytest.mark.slow  # a child interpreter
def test_capsules_safe_at_interpreter_shutdown(tmp_path):
    script = tmp_path / "shutdown.py"
    script.write_text(
        "import numpy as np, hurray, threading\n"
        "t = hurray.from_numpy(np.arange(10.0))\n"
        "keep = [t.__dlpack__(max_version=(1, 1)), t.__dlpack__()]\n"
        "imported = hurray.from_dlpack(np.arange(5))\n"
        "view = np.from_dlpack(hurray.zeros([3]))\n"
        "class Cycle: pass\n"
        "c = Cycle(); c.self = c; c.cap = t.__dlpack__(max_version=(1, 0))\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


# ---- consumer --------------------------------------------------------------------

def test_from_dlpack_numpy_zero_copy_and_lifetime():
    a = aligned_array((4, 5), "i8", fill=np.arange(20).reshape(4, 5))
    owner = a.base
    ref = weakref.ref(owner)
    t = hurray.from_dlpack(a)
    assert t.shape == (4, 5) and t.dtype is hurray.int64
    assert data_ptr(np.asarray(t)) == a.ctypes.data
    del a, owner
    collect()
    assert ref() is not None
    assert np.asarray(t).sum() == 190
    del t
    collect()
    assert ref() is None


def test_from_dlpack_hurray_round_trip():
    t, a = tensor()
    u = hurray.from_dlpack(t)
    assert u is not t and u.descriptor == t.descriptor
    assert data_ptr(np.asarray(u)) == a.ctypes.data


def test_legacy_only_producer_is_retried_without_keywords():
    a = aligned_array((3,), "f8", fill=[1.0, 2.0, 3.0])
    p = dl.LegacyProducer(a)
    t = hurray.from_dlpack(p)
    assert p.calls == [None]  # keywords refused (TypeError), then called bare
    assert data_ptr(np.asarray(t)) == a.ctypes.data
    ht, b = tensor()
    t2 = hurray.from_dlpack(dl.LegacyProducer(ht))
    assert data_ptr(np.asarray(t2)) == b.ctypes.data


def test_from_capsule_and_consumed_capsule():
    t, a = tensor()
    for mv in (None, (1, 0)):
        cap = t.__dlpack__(max_version=mv)
        u = hurray.from_dlpack(cap)
        assert data_ptr(np.asarray(u)) == a.ctypes.data
        assert dl.capsule_name(cap).startswith("used_")
        with pytest.raises(BufferError):
            hurray.from_dlpack(cap)


def test_from_dlpack_copy_policy():
    a = aligned_array((8,), "f4", offset=8, fill=2)
    with pytest.raises(hurray.BufferError) as ei:
        hurray.from_dlpack(a, copy=False)
    assert "buffer 0" in str(ei.value)
    t = hurray.from_dlpack(a)
    assert data_ptr(np.asarray(t)) != a.ctypes.data
    assert data_ptr(np.asarray(t)) % 64 == 0
    b = aligned_array((8,), "f4")
    t2 = hurray.from_dlpack(b, copy=True)
    assert data_ptr(np.asarray(t2)) != b.ctypes.data


def test_from_dlpack_strides():
    with hurray.aligned_allocator():
        base = np.arange(30, dtype=np.int32).reshape(5, 6)
        f = np.asfortranarray(base)
    for view in (base[::-1], base[:, ::2], base[::2, ::-1]):
        t = hurray.from_dlpack(view, copy=False)
        assert t.layout.name == "strided"
        got = np.asarray(t)
        assert data_ptr(got) == data_ptr(view)
        np.testing.assert_array_equal(got, view)
        c = hurray.from_dlpack(view, copy=True)
        assert c.layout.name == "row_major"
        np.testing.assert_array_equal(np.asarray(c), view)
        # and back out: DLPack carries the strides (copy=False: a negative stride
        # is otherwise copied out compact, since PyTorch aborts on one)
        _, info = dl.read(t.__dlpack__(max_version=(1, 0), copy=False))
        assert info["strides"] == tuple(s // 4 for s in view.strides)
        assert info["data"] == data_ptr(view)
        np.testing.assert_array_equal(np.from_dlpack(t), view)
    t = hurray.from_dlpack(f, copy=False)
    assert t.layout.name == "col_major"
    assert data_ptr(np.asarray(t)) == f.ctypes.data


def test_strided_export_with_copy_is_compact():
    with hurray.aligned_allocator():
        base = np.arange(30, dtype=np.int64).reshape(5, 6)
    t = hurray.from_numpy(base[::-2, 1::2])
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    _, info = dl.read(cap)
    assert info["strides"] == (3, 1)
    np.testing.assert_array_equal(np.from_dlpack(_Capsule(cap)), base[::-2, 1::2])


def test_from_dlpack_bool_packs():
    src = np.array([[True, False, True], [False, False, True]])
    t = hurray.from_dlpack(src)
    assert t.dtype is hurray.bool and t.buffer_handles[0].byte_size == 1
    np.testing.assert_array_equal(np.asarray(t), src)
    with pytest.raises(hurray.BufferError):
        hurray.from_dlpack(src, copy=False)


def test_from_dlpack_errors():
    with pytest.raises(TypeError):
        hurray.from_dlpack(42)
    with pytest.raises(TypeError):
        hurray.from_dlpack(np.zeros(2), device="cpu")
    with pytest.raises(BufferError):
        hurray.from_dlpack(np.zeros(2), device=hurray.Device("cuda"))
    assert hurray.from_dlpack(np.zeros(2), device=hurray.device.cpu).shape == (2,)


def test_unconsumed_capsule_dies_during_an_exception_without_losing_it():
    """Capsule destructors set a pending exception aside and put it back; what
    their own work raises goes to sys.unraisablehook, never silently away."""
    import gc
    import sys
    import weakref

    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        t = hurray.from_numpy(np.arange(4, dtype=np.float32))
        ref = weakref.ref(t)

        def fail_with_capsule_alive():
            cap = t.__dlpack__(max_version=(1, 0))  # noqa: F841 - dies in the unwinding
            raise KeyError("kept")

        with pytest.raises(KeyError, match="kept"):
            fail_with_capsule_alive()
        del t
        gc.collect()
        assert ref() is None  # the capsule's destructor released the tensor
        assert seen == []
    finally:
        sys.unraisablehook = old
