"""NumPy interoperability: from_numpy, __array__, __array_interface__,
asarray, aligned_allocator; zero-copy proven by pointers, lifetime by
weakref + gc."""

import os
import pathlib
import sys
import threading
import weakref

import pytest

import hurray
from conftest import aligned_array, collect, data_ptr

np = pytest.importorskip("numpy")

TIER1_NUMPY = ["float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
               "uint32", "int64", "uint64", "bool", "complex64", "complex128"]


def owner(arr):
    """The object an array views: NumPy 2 makes an __array_struct__ view's base the
    tuple (exporter, capsule), older NumPy the exporter itself."""
    b = arr.base
    return b[0] if isinstance(b, tuple) else b

def random_bits(dtype, shape, seed=0):
    """An array of `dtype` whose bytes are random (NaN payloads, denormals, ...)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    n = int(np.prod(shape)) * dt.itemsize
    return np.frombuffer(rng.bytes(n), dtype=np.uint8).view(dt).reshape(shape).copy()


@pytest.mark.parametrize("name", TIER1_NUMPY)
def test_every_tier1_dtype_round_trips_bit_exactly(name):
    src = random_bits(name, (3, 5), seed=len(name))
    with hurray.aligned_allocator():
        src = src.copy()
    t = hurray.from_numpy(src)
    assert t.dtype is hurray.Dtype.from_name(name)
    assert t.shape == (3, 5)
    back = np.asarray(t)
    assert back.dtype == src.dtype and back.shape == src.shape
    assert back.tobytes() == src.tobytes()
    if name != "bool":
        assert data_ptr(back) == src.ctypes.data  # zero-copy both ways
        assert owner(back) is t


def test_bfloat16_round_trip():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    src = aligned_array((4, 3), "u2", fill=(np.arange(12, dtype=np.uint16) * 1000 + 7).reshape(4, 3))
    src = src.view(ml_dtypes.bfloat16)
    t = hurray.from_numpy(src)
    assert t.dtype is hurray.bfloat16
    back = np.asarray(t)
    assert back.dtype == ml_dtypes.bfloat16
    assert back.tobytes() == src.tobytes()
    assert data_ptr(back) == src.ctypes.data


def test_array_interface():
    a = aligned_array((2, 3), "f4", fill=np.arange(6).reshape(2, 3))
    t = hurray.from_numpy(a)
    ai = t.__array_interface__
    assert ai["version"] == 3
    assert ai["shape"] == (2, 3)
    assert ai["typestr"] == "<f4"
    assert ai["data"] == (a.ctypes.data, False)
    assert ai["strides"] is None


def test_read_only_sources_stay_read_only():
    a = aligned_array((4,), "i4", fill=1)
    a.flags.writeable = False
    t = hurray.from_numpy(a)
    assert t.readonly
    v = np.asarray(t)
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 3


def test_writes_show_through_a_writable_view():
    a = aligned_array((4,), "i4", fill=1)
    t = hurray.from_numpy(a)
    np.asarray(t)[2] = 42
    assert a[2] == 42


def test_array_copy_and_dtype():
    a = aligned_array((4,), "f4", fill=2)
    t = hurray.from_numpy(a)
    c = t.__array__(copy=True)
    assert data_ptr(c) != a.ctypes.data and c.tolist() == [2.0] * 4
    v = t.__array__(copy=False)
    assert data_ptr(v) == a.ctypes.data
    d = t.__array__(dtype=np.float64)
    assert d.dtype == np.float64
    with pytest.raises(ValueError):
        t.__array__(dtype=np.float64, copy=False)
    with pytest.raises(hurray.CopyRequiredError):
        t.__array__(np.float64, False)
    assert np.array(t, copy=True).base is None or data_ptr(np.array(t, copy=True)) != a.ctypes.data


def test_bool_needs_a_copy():
    src = np.array([True, False, True, True, False, False, True, False, True, True])
    with pytest.raises(hurray.BufferError):
        hurray.from_numpy(src, copy=False)
    t = hurray.from_numpy(src)
    assert t.buffer_handles[0].byte_size == 2
    assert np.asarray(t.buffer(0)).tolist() == [0b01001101, 0b11]  # LSB-first, zero padding
    assert not hasattr(t, "__array_interface__")  # NumPy falls back to __array__
    np.testing.assert_array_equal(np.asarray(t), src)
    with pytest.raises(ValueError):
        t.__array__(copy=False)


def test_fortran_order_aligned():
    with hurray.aligned_allocator():
        a = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    t = hurray.from_numpy(a, copy=False)
    assert t.layout.name == "col_major"
    back = np.asarray(t)
    assert data_ptr(back) == a.ctypes.data
    assert back.strides == a.strides
    np.testing.assert_array_equal(back, a)


def test_strided_arrays_stay_zero_copy():
    with hurray.aligned_allocator():
        base = np.arange(40, dtype=np.int32).reshape(5, 8)
    # views whose lowest byte is the (aligned) first byte of `base`
    views = [base[::2, ::3], base[::-1], base[:, 6::-2], base.T[::2], base[::-2, ::-1],
             np.broadcast_to(base[0], (3, 8))]
    for view in views:
        t = hurray.from_numpy(view, copy=False)
        assert t.layout.name == "strided"
        got = np.asarray(t)
        assert data_ptr(got) == data_ptr(view)  # element [0, ...] is the same byte
        assert got.strides == view.strides
        np.testing.assert_array_equal(got, view)
        # the buffer starts at the lowest byte touched: element [0, ...] is byte_offset in
        assert t.byte_offset == data_ptr(view) - base.ctypes.data
        assert t.buffer_handles[0].alignment >= 64
        c = hurray.from_numpy(view, copy=True)  # a copy is compact
        assert c.layout.name == "row_major"
        np.testing.assert_array_equal(np.asarray(c), view)


def test_strided_view_starting_off_the_floor():
    with hurray.aligned_allocator():
        base = np.arange(40, dtype=np.int32).reshape(5, 8)
    view = base[1:4, 2:5]  # lowest byte 40 bytes into the allocation
    with pytest.raises(hurray.BufferError):
        hurray.from_numpy(view, copy=False)
    t = hurray.from_numpy(view)
    assert t.layout.name == "strided"  # the span is copied, the layout kept
    np.testing.assert_array_equal(np.asarray(t), view)


def test_strided_misaligned_span_is_copied():
    base = aligned_array((6, 8), "i4", offset=4, fill=np.arange(48).reshape(6, 8))
    view = base[::2, ::3]
    with pytest.raises(hurray.BufferError):
        hurray.from_numpy(view, copy=False)
    t = hurray.from_numpy(view)
    np.testing.assert_array_equal(np.asarray(t), view)
    assert data_ptr(np.asarray(t)) != data_ptr(view)


def test_strides_that_are_not_whole_elements_are_gathered():
    rec = np.zeros(6, dtype=[("a", "<i4"), ("b", "u1")])
    rec["a"] = np.arange(6)
    field = rec["a"]  # stride 5 bytes
    t = hurray.from_numpy(field)
    assert t.layout.name == "row_major"
    np.testing.assert_array_equal(np.asarray(t), np.arange(6))
    with pytest.raises(hurray.BufferError):
        hurray.from_numpy(field, copy=False)


def test_misaligned_copy_policy():
    a = aligned_array((8,), "f4", offset=4, fill=5)
    with pytest.raises(hurray.BufferError) as ei:
        hurray.from_numpy(a, copy=False)
    assert "buffer 0" in str(ei.value) and "aligned to 4 bytes" in str(ei.value)
    t = hurray.from_numpy(a)
    assert data_ptr(np.asarray(t)) % 64 == 0
    np.testing.assert_array_equal(np.asarray(t), a)
    t2 = hurray.from_numpy(aligned_array((8,), "f4"), copy=True)
    assert t2.buffer_handles[0].alignment == 64


def test_unsupported_dtypes():
    for arr in (np.array(["a"]), np.array([object()]), np.array([1], dtype="datetime64[s]"),
                np.zeros(2, dtype=np.longdouble), np.zeros(2, dtype=">i4")):
        with pytest.raises((hurray.UnsupportedError, TypeError)):
            hurray.from_numpy(arr)
    with pytest.raises(TypeError):
        hurray.from_numpy(3)


def test_tier2_and_other_refusals():
    i4 = hurray.Tensor(bytes(2), hurray.dtype.int4, [4])
    with pytest.raises(hurray.UnsupportedError):
        np.asarray(i4)
    with pytest.raises(hurray.UnsupportedError):
        i4.__array__()
    with pytest.raises(hurray.UnsupportedError):
        i4.__array_interface__
    dyn = hurray.Tensor(bytes(8), hurray.float32, [None])
    with pytest.raises(hurray.UnsupportedError):
        dyn.__array__()
    import mmap
    dev = hurray.Tensor(mmap.mmap(-1, 16), hurray.float32, [4], hurray.Device("cuda"))
    with pytest.raises(hurray.UnsupportedError):
        dev.__array__()


def test_lifetime_array_keeps_tensor_alive():
    t = hurray.from_numpy(aligned_array((6,), "f8", fill=np.arange(6)))
    ref = weakref.ref(t)
    arr = np.asarray(t)
    assert owner(arr) is t
    del t
    collect()
    assert ref() is not None
    assert arr.tolist() == [0, 1, 2, 3, 4, 5]
    del arr
    collect()
    assert ref() is None


def test_lifetime_tensor_keeps_source_alive():
    src = aligned_array((6,), "f8", fill=np.arange(6))
    owner = src.base
    ref = weakref.ref(owner)
    t = hurray.from_numpy(src)
    del src, owner
    collect()
    assert ref() is not None
    assert np.asarray(t).tolist() == [0, 1, 2, 3, 4, 5]
    del t
    collect()
    assert ref() is None


def test_asarray():
    t = hurray.asarray([1.0, 2.0, 3.0])
    assert t.dtype is hurray.float64 and t.shape == (3,)
    t2 = hurray.asarray([[1, 2], [3, 4]], dtype=hurray.int32)
    assert t2.dtype is hurray.int32 and np.asarray(t2).tolist() == [[1, 2], [3, 4]]
    a = aligned_array((3,), "f4", fill=1)
    t3 = hurray.asarray(a)
    assert data_ptr(np.asarray(t3)) == a.ctypes.data
    assert hurray.asarray(t3) is t3
    t4 = hurray.asarray(t3, copy=True)
    assert t4 is not t3 and data_ptr(np.asarray(t4)) != a.ctypes.data
    with pytest.raises(ValueError):
        hurray.asarray(a, dtype=hurray.float64, copy=False)
    with pytest.raises(hurray.UnsupportedError):
        hurray.asarray([1], device=hurray.Device("cuda"))
    b = hurray.asarray([True, False])
    assert b.dtype is hurray.bool


def test_asarray_copy_false_reports_misalignment():
    a = aligned_array((8,), "f4", offset=8)
    with pytest.raises(hurray.BufferError):
        hurray.asarray(a, copy=False)


def _handler_name():
    from hurray._interop import _set_handler  # noqa: F401
    try:
        from numpy._core.multiarray import get_handler_name
    except ImportError:  # NumPy 1.x
        from numpy.core.multiarray import get_handler_name
    return get_handler_name()


def test_aligned_allocator_aligns_every_allocation():
    before = _handler_name()
    with hurray.aligned_allocator():
        assert _handler_name() == "hurray_aligned_64"
        arrays = [np.empty(n, dtype=np.uint8) for n in (1, 3, 17, 100, 1000, 4097)]
        arrays += [np.zeros((n, 3)) for n in (1, 5, 33)]
        grown = np.zeros(2)
        grown.resize(10000, refcheck=False)
    assert _handler_name() == before
    for a in arrays + [grown]:
        assert a.ctypes.data % 64 == 0
        hurray.from_numpy(a, copy=False)  # borrowed: no copy needed
    assert grown[:2].tolist() == [0.0, 0.0]


def _vm_flags(address):
    """The VmFlags of the mapping holding `address` (Linux), or None."""
    try:
        with open("/proc/self/smaps") as f:
            inside = False
            for line in f:
                head = line.split()[0]
                if "-" in head and not head.endswith(":"):
                    lo, hi = (int(x, 16) for x in head.split("-"))
                    inside = lo <= address < hi
                elif inside and head == "VmFlags:":
                    return line.split()[1:]
    except OSError:
        return None
    return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="huge pages are Linux advice")
def test_aligned_allocator_advises_large_blocks_as_huge_pages():
    # as NumPy's own allocator does from 4 MiB: one page fault per 2 MiB when a block
    # is written whole (a 256 MiB receive buffer filled 3x faster), not per 4 KiB
    thp = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not thp.exists() or "[never]" in thp.read_text():
        pytest.skip("no transparent huge pages on this machine")
    if os.environ.get("HURRAY_EXPECT_ASAN"):
        # the memory is hurray_alloc's, which leaves every block to the sanitizer's
        # malloc under ASan (src/core/alloc.c): no mapping of its own to advise
        pytest.skip("under ASan, hurray_alloc maps nothing itself")
    with hurray.aligned_allocator():
        big = np.empty(16 << 20, dtype=np.uint8)
    flags = _vm_flags(big.ctypes.data + (8 << 20))
    if flags is None:
        pytest.skip("no /proc/self/smaps here")
    assert "hg" in flags, flags  # MADV_HUGEPAGE


def test_aligned_allocator_nests_and_restores_on_error():
    before = _handler_name()
    with pytest.raises(RuntimeError):
        with hurray.aligned_allocator():
            with hurray.aligned_allocator():
                assert _handler_name() == "hurray_aligned_64"
            assert _handler_name() == "hurray_aligned_64"
            raise RuntimeError("boom")
    assert _handler_name() == before


def test_aligned_allocator_is_not_inherited_by_threads():
    seen = []
    with hurray.aligned_allocator():
        th = threading.Thread(target=lambda: seen.append(_handler_name()))
        th.start()
        th.join()
    assert seen and seen[0] != "hurray_aligned_64"


def test_aligned_allocator_refuses_old_numpy(monkeypatch):
    monkeypatch.setattr(np, "__version__", "1.21.6")
    with pytest.raises(hurray.UnsupportedError):
        with hurray.aligned_allocator():
            pass


def test_arrays_outlive_the_block():
    with hurray.aligned_allocator():
        a = np.arange(1000, dtype=np.int64)
    collect()
    assert a.sum() == 999 * 1000 // 2
    del a
    collect()
