"""Tensor.__array_struct__: the C-struct form of the NumPy array interface.

NumPy reads __array_struct__ before __array_interface__ (it spares NumPy the
parsing of the dict, most of numpy.asarray's time). Both must describe the same
memory: same data pointer, shape, strides, type and writability, and the same
tensors must refuse them (AttributeError for the ones __array__ handles).
"""

import gc
import weakref

import pytest

import hurray
from conftest import aligned_array, collect, data_ptr

np = pytest.importorskip("numpy")

TYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
         "uint32", "int64", "uint64", "complex64", "complex128"]


def via_struct(t):
    """numpy.asarray(t) taking the struct path only (the dict hidden)."""

    class OnlyStruct:
        __array_struct__ = t.__array_struct__

    return np.asarray(OnlyStruct())


def via_interface(t):
    class OnlyInterface:
        __array_interface__ = t.__array_interface__

    return np.asarray(OnlyInterface())


def same_view(a, b):
    return (data_ptr(a) == data_ptr(b) and a.shape == b.shape and a.strides == b.strides
            and a.dtype == b.dtype and a.flags.writeable == b.flags.writeable)


@pytest.mark.parametrize("name", TYPES)
def test_struct_and_interface_describe_the_same_view(name):
    src = aligned_array((3, 5), name, fill=7)
    t = hurray.from_numpy(src)
    s, i = via_struct(t), via_interface(t)
    assert same_view(s, i)
    assert data_ptr(s) == src.ctypes.data and s.dtype == src.dtype
    assert s.tobytes() == src.tobytes()


def test_column_major_strided_and_offset_views():
    a = aligned_array((4, 6), "f4", fill=0)
    a[...] = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = hurray.from_numpy(a)
    for v in (t.T, hurray.from_numpy(np.asfortranarray(a))):
        assert same_view(via_struct(v), via_interface(v))
        assert via_struct(v).flags.f_contiguous
    # a strided tensor with a negative stride: byte_offset locates element [0, 0]
    big = aligned_array((8, 6), "f4", fill=0)
    big[...] = np.arange(48, dtype=np.float32).reshape(8, 6)
    r = hurray.from_numpy(big[::-2, 1:5], copy=None)
    assert r.layout.name == "strided" or r.layout.name == "row_major"
    got = via_struct(r)
    assert same_view(got, via_interface(r))
    np.testing.assert_array_equal(got, big[::-2, 1:5])


def test_rank0_and_empty():
    for shape in ((), (0,), (3, 0)):
        t = hurray.zeros(shape, dtype=hurray.float32)
        got, ref = via_struct(t), via_interface(t)
        assert got.shape == ref.shape == shape and got.dtype == ref.dtype == np.float32
        if got.size:  # an empty array's strides and pointer are NumPy's choice
            assert same_view(got, ref)


def test_read_only_tensor_gives_read_only_array():
    src = aligned_array((4,), "f4", fill=1)
    src.flags.writeable = False
    t = hurray.from_numpy(src)
    assert t.readonly
    got = np.asarray(t)
    assert not got.flags.writeable
    with pytest.raises(ValueError):
        got[0] = 1
    w = hurray.zeros([4], dtype=hurray.float32)
    arr = np.asarray(w)
    arr[1] = 5
    assert np.asarray(w)[1] == 5  # writable and shared


def test_refused_where_the_interface_is_refused():
    b = hurray.from_numpy(np.array([True, False]))
    with pytest.raises(AttributeError):
        b.__array_struct__  # bit-packed: NumPy falls back to __array__
    assert np.asarray(b).tolist() == [True, False]
    tiled = hurray.Tensor(np.arange(16, dtype=np.float32), hurray.float32, [4, 4],
                          layout=hurray.TiledLayout([2, 2]))
    with pytest.raises(AttributeError):
        tiled.__array_struct__
    import mmap
    dev = hurray.Tensor(mmap.mmap(-1, 16), hurray.float32, [4], hurray.Device("cuda"))
    with pytest.raises(hurray.UnsupportedError):
        dev.__array_struct__
    dyn = hurray.Tensor(bytes(16), hurray.float32, [None])
    with pytest.raises(hurray.UnsupportedError):
        dyn.__array_struct__


def test_capsule_keeps_the_tensor_alive():
    t = hurray.from_numpy(aligned_array((6,), "f8", fill=np.arange(6)))
    ref = weakref.ref(t)
    cap = t.__array_struct__
    del t
    collect()
    assert ref() is not None
    del cap
    collect()
    assert ref() is None


def test_array_keeps_the_tensor_alive():
    t = hurray.from_numpy(aligned_array((6,), "f8", fill=np.arange(6)))
    ref = weakref.ref(t)
    arr = np.asarray(t)
    del t
    gc.collect()
    assert ref() is not None
    assert arr.tolist() == [0, 1, 2, 3, 4, 5]
    del arr
    collect()
    assert ref() is None
