"""hurray.Tensor: construction from buffers, the copy policy, measured
alignment, the inspection surface (docs/internals/decisions.md § Python tensor surface),
buffer(i), buffer_handles, T, sync_mode, repr/str, and the creation functions."""

import array
import gc
import mmap
import struct
import sys
import weakref

import pytest

import hurray
from conftest import aligned_array, collect, data_ptr


def f32(*vals):
    return struct.pack(f"{len(vals)}f", *vals)


# ---- construction -------------------------------------------------------------

def test_construct_from_bytes():
    t = hurray.Tensor(f32(1, 2, 3, 4, 5, 6), hurray.float32, [2, 3])
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6
    assert t.dtype is hurray.float32
    assert t.device is hurray.device.cpu
    assert t.buffer_count == 1
    assert t.layout.name == "row_major"
    assert t.quantization is None and t.shard is None and t.statistics is None
    assert t.byte_offset == 0


@pytest.mark.parametrize("make", [
    lambda n: bytes(n), lambda n: bytearray(n), lambda n: memoryview(bytearray(n)),
    lambda n: array.array("B", bytes(n)), lambda n: mmap.mmap(-1, n),
])
def test_any_buffer_protocol_object(make):
    t = hurray.Tensor(make(16), hurray.int32, (4,))
    assert t.shape == (4,)


def test_dtype_by_name():
    assert hurray.Tensor(bytes(8), "float64", [1]).dtype is hurray.float64


def test_buffer_too_small():
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(f32(1, 2), hurray.float32, [2, 3])
    # packed sub-byte sizing: 4 int4 elements need 2 bytes, 5 need 3
    hurray.Tensor(bytes(2), hurray.dtype.int4, [4])
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(bytes(2), hurray.dtype.int4, [5])
    # larger buffers are fine, and the declared size is the buffer's
    t = hurray.Tensor(bytes(100), hurray.float32, [2])
    assert t.buffer_handles[0].byte_size == 100


def test_shape_errors():
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(bytes(8), hurray.float32, [-1])
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.float32, ["2"])
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.float32, [True])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(bytes(8), hurray.float32, [1] * 65)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(bytes(8), hurray.float32, [2**64 - 1])  # the wire sentinel
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(bytes(8), hurray.float32, [2**64])
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.float32, [2], device="cpu")
    with pytest.raises(TypeError):
        hurray.Tensor(12, hurray.float32, [3])


def test_scalar_and_empty_tensors():
    s = hurray.Tensor(f32(7), hurray.float32, [])
    assert s.shape == () and s.size == 1 and s.ndim == 0
    e = hurray.Tensor(b"", hurray.float32, [0, 4])
    assert e.size == 0
    h = e.buffer_handles[0]
    assert h.byte_size == 0 and h.alignment == 1  # an empty buffer declares 1


def test_dynamic_dimensions():
    t = hurray.Tensor(b"", hurray.float32, [None, 4])
    assert t.shape == (None, 4) and t.size is None and t.ndim == 2
    again = hurray.Tensor(b"", hurray.float32, t.shape)  # a shape read back is accepted
    assert again.descriptor == t.descriptor
    assert not hasattr(hurray, "DYNAMIC")
    r, s = repr(t), str(t)
    assert "None" in r and "[]" not in r and "[]" not in s


def test_layout_keyword_takes_a_layout_object():
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.float32, [2], layout=object())
    with pytest.raises(TypeError, match="hurray.Layout"):
        hurray.Tensor(bytes(8), hurray.float32, [2], layout="row_major")


# ---- the copy policy and measured alignment ---------------------------------------

def test_alignment_is_the_floor_whatever_the_address_and_borrowed(np):
    """A buffer declares what the binding guarantees (docs/internals/decisions.md, "What a
    buffer declares"): the 64-byte floor, not what its address happens to meet,
    so the same data from two allocations gives the same descriptor."""
    descriptors = set()
    for align in (64, 128, 256, 4096):
        a = aligned_array((16,), "f4", align=align, fill=np.arange(16))
        t = hurray.Tensor(a, hurray.float32, [16])
        h = t.buffer_handles[0]
        assert h.alignment == hurray.MIN_BUFFER_ALIGNMENT
        assert data_ptr(np.asarray(t)) == a.ctypes.data  # borrowed
        assert data_ptr(np.asarray(t)) % h.alignment == 0
        descriptors.add(t.descriptor.encode())
    assert len(descriptors) == 1


def test_a_page_aligned_buffer_declares_the_floor_too():
    t = hurray.Tensor(mmap.mmap(-1, 8192), hurray.uint8, [8192])
    assert t.buffer_handles[0].alignment == hurray.MIN_BUFFER_ALIGNMENT


def test_misaligned_is_copied_by_default(np):
    a = aligned_array((16,), "f4", align=64, offset=16, fill=np.arange(16))
    t = hurray.Tensor(a, hurray.float32, [16])
    got = np.asarray(t)
    assert data_ptr(got) != a.ctypes.data
    assert data_ptr(got) % 64 == 0
    assert t.buffer_handles[0].alignment == 64  # what was allocated
    np.testing.assert_array_equal(got, a)


def test_copy_false_refuses_misaligned(np):
    a = aligned_array((16,), "f4", align=64, offset=16)
    with pytest.raises(hurray.BufferError) as ei:
        hurray.Tensor(a, hurray.float32, [16], copy=False)
    msg = str(ei.value)
    assert "buffer 0" in msg and "16" in msg and "64" in msg


def test_copy_true_always_copies(np):
    a = aligned_array((16,), "f4", align=64, fill=3)
    t = hurray.Tensor(a, hurray.float32, [16], copy=True)
    assert data_ptr(np.asarray(t)) != a.ctypes.data
    a[0] = 99
    assert np.asarray(t)[0] == 3


def test_copy_false_borrows_aligned(np):
    a = aligned_array((4,), "f4", align=64)
    t = hurray.Tensor(a, hurray.float32, [4], copy=False)
    assert data_ptr(np.asarray(t)) == a.ctypes.data


def test_copy_decided_per_buffer(np):
    good = aligned_array((4,), "f4", align=64)
    bad = aligned_array((8,), "u1", align=64, offset=8)
    # Row-major takes one buffer; the codec's buffer-count rule may reject the
    # extra one, but the copy decision happens first and per buffer.
    with pytest.raises(hurray.BufferError) as ei:
        hurray.Tensor(good, hurray.float32, [4], aux_buffers=[bad], copy=False)
    assert "buffer 1" in str(ei.value)


def test_copy_argument_type():
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(4), hurray.float32, [1], copy="yes")


def test_non_contiguous_buffer_rejected(np):
    a = np.zeros((4, 4), np.float32)[:, ::2]
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(a, hurray.float32, [8])


# ---- buffers and handles ------------------------------------------------------

def test_buffer_view(np):
    a = aligned_array((6,), "f4", fill=np.arange(6))
    t = hurray.Tensor(a, hurray.float32, [2, 3])
    b = t.buffer(0)
    assert isinstance(b, hurray.Tensor)
    assert b.dtype is hurray.uint8 and b.shape == (24,)
    assert data_ptr(np.asarray(b)) == a.ctypes.data
    with pytest.raises(IndexError):
        t.buffer(1)
    with pytest.raises(IndexError):
        t.buffer(-1)


def test_buffer_view_keeps_tensor_alive(np):
    a = aligned_array((4,), "f4", fill=7)
    t = hurray.Tensor(a, hurray.float32, [4])
    ref = weakref.ref(t)
    b = t.buffer(0)
    del t
    collect()
    assert ref() is not None
    del b
    collect()
    assert ref() is None


def test_buffer_handles():
    t = hurray.Tensor(mmap.mmap(-1, 64), hurray.float32, [16])
    hs = t.buffer_handles
    assert isinstance(hs, tuple) and len(hs) == t.buffer_count == 1
    h = hs[0]
    assert (h.index, h.byte_size, h.alignment, h.sync_mode) == (0, 64, 64, "producer_synced")
    assert h.device is t.device
    with pytest.raises(AttributeError):
        h.byte_size = 3
    with pytest.raises(TypeError):
        hurray.BufferHandle()
    with pytest.raises(TypeError):
        type(h)()
    # value semantics
    t2 = hurray.Tensor(mmap.mmap(-1, 64), hurray.float32, [16])
    assert t2.buffer_handles[0] == h and hash(t2.buffer_handles[0]) == hash(h)
    t3 = hurray.Tensor(mmap.mmap(-1, 128), hurray.float32, [16])
    assert t3.buffer_handles[0] != h
    assert "byte_size=64" in repr(h)


def test_buffer_handles_pin_nothing(np):
    a = aligned_array((4,), "f4")
    t = hurray.Tensor(a, hurray.float32, [4])
    ref = weakref.ref(t)
    hs = t.buffer_handles
    assert gc.get_referents(hs[0]) == [hs[0].device] or hs[0].device in gc.get_referents(hs[0])
    del t
    collect()
    assert ref() is None
    assert hs[0].byte_size == 16
    dev = hurray.Device("cuda", 2)
    td = hurray.Tensor(mmap.mmap(-1, 64), hurray.float32, [16], dev)
    assert td.buffer_handles[0].device is td.device is dev


def test_sync_mode_is_read_only():
    t = hurray.Tensor(bytes(8), hurray.float32, [2])
    assert t.sync_mode == "producer_synced"
    with pytest.raises(AttributeError):
        t.sync_mode = "event"
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(8), hurray.float32, [2], sync_mode="event")


def test_tensor_is_unhashable_and_pickles_by_value():
    t = hurray.Tensor(bytes(8), hurray.float32, [2])
    with pytest.raises(TypeError):
        hash(t)
    import pickle
    back = pickle.loads(pickle.dumps(t))  # test_pickle.py covers every kind
    assert back is not t and back.shape == t.shape and back.dtype is t.dtype


def test_source_lifetime(np):
    a = aligned_array((8,), "f8", fill=np.arange(8))
    base = a.base
    ref = weakref.ref(base)
    t = hurray.Tensor(a, hurray.float64, [8])
    del a, base
    collect()
    assert ref() is not None  # the tensor keeps its source alive
    np.testing.assert_array_equal(np.asarray(t), np.arange(8))
    del t
    collect()
    assert ref() is None


def test_bytearray_is_locked_while_borrowed(np):
    raw = np.zeros(256, np.uint8)
    off = (-raw.ctypes.data) % 64
    mv = memoryview(raw)[off:off + 64]
    ba_t = hurray.Tensor(mv, hurray.uint8, [64])
    assert data_ptr(np.asarray(ba_t)) == raw.ctypes.data + off


# ---- transposition -------------------------------------------------------------

def test_T(np):
    a = aligned_array((2, 3), "f4", fill=np.arange(6).reshape(2, 3))
    t = hurray.from_numpy(a)
    tt = t.T
    assert tt.shape == (3, 2)
    assert tt.layout.name == "col_major"
    got = np.asarray(tt)
    np.testing.assert_array_equal(got, a.T)
    assert data_ptr(got) == a.ctypes.data  # a view, no copy
    assert tt.T.layout.name == "row_major"
    with pytest.raises(ValueError):
        hurray.Tensor(bytes(8), hurray.float32, [2]).T
    with pytest.raises(ValueError):
        hurray.Tensor(bytes(8), hurray.float32, [1, 1, 2]).T


# ---- repr / str ----------------------------------------------------------------

def test_repr_shows_data(np):
    t = hurray.ones([2, 3], dtype=hurray.float32)
    r = repr(t)
    assert r.startswith("hurray.Tensor(") and "dtype=float32" in r and "1." in r
    assert str(t).startswith("[[")


def test_repr_never_renders_dynamic_data():
    t = hurray.Tensor(bytes(16), hurray.float32, [None, 2])
    for text in (repr(t), str(t)):
        assert "shape=(None, 2)" in text
        assert "[]" not in text


def test_repr_tier2_is_metadata():
    t = hurray.Tensor(bytes(2), hurray.dtype.int4, [4])
    assert repr(t) == ("hurray.Tensor(shape=(4,), dtype=int4, device="
                       "hurray.Device(kind='cpu', device_id=0, memory_class='standard'))")


# ---- creation functions ----------------------------------------------------------

def test_zeros_ones_empty_full(np):
    z = hurray.zeros([3, 4])
    assert z.dtype is hurray.float64 and z.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(z), np.zeros((3, 4)))
    o = hurray.ones((2, 3), dtype=hurray.int16)
    np.testing.assert_array_equal(np.asarray(o), np.ones((2, 3), np.int16))
    e = hurray.empty(5, dtype="uint8")
    assert e.shape == (5,)
    f = hurray.full([4], 7.5, dtype=hurray.float32)
    np.testing.assert_array_equal(np.asarray(f), np.full(4, 7.5, np.float32))
    assert hurray.full([2], 3).dtype is hurray.int64
    assert hurray.full([2], True).dtype is hurray.bool
    assert hurray.full([2], 1j).dtype is hurray.dtype.complex128
    for t in (z, o, e, f):
        assert t.buffer_handles[0].alignment >= 64


@pytest.mark.parametrize("dt,val", [
    ("float16", 0.1), ("float16", 65504.0), ("float16", 1e-7), ("float16", -2.5),
    ("float32", 0.1), ("float64", -1e300), ("int8", -128), ("uint8", 255),
    ("int16", -32768), ("uint16", 65535), ("int32", -(2**31)), ("uint32", 2**32 - 1),
    ("int64", -(2**63)), ("uint64", 2**64 - 1), ("complex64", 1.5 - 2j),
    ("complex128", 1e-3 + 1e3j),
])
def test_full_values_match_numpy(np, dt, val):
    t = hurray.full([3], val, dtype=dt)
    want = np.full(3, val, dtype=dt)
    assert np.asarray(t).tobytes() == want.tobytes()


def test_full_bfloat16_bits():
    t = hurray.full([2], 1.0, dtype=hurray.bfloat16)
    assert bytes(memoryview(__import__("numpy").asarray(t.buffer(0)))) == b"\x80\x3f" * 2


def test_full_bool_packing(np):
    t = hurray.full([10], True)
    raw = np.asarray(t.buffer(0))
    assert raw.tolist() == [0xFF, 0x03]  # padding bits of the last byte are zero
    assert np.asarray(t).tolist() == [True] * 10


def test_full_out_of_range():
    with pytest.raises(OverflowError):
        hurray.full([2], 256, dtype=hurray.uint8)
    with pytest.raises(OverflowError):
        hurray.full([2], -1, dtype=hurray.uint64)


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
def test_creation_refuses_dynamic_dims(fn):
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        getattr(hurray, fn)([2, None])
    assert fn in str(ei.value) and "shape[1]" in str(ei.value)
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.full([None], 1.0)
    assert "full" in str(ei.value) and "shape[0]" in str(ei.value)


def test_creation_tier2():
    z = hurray.zeros([5], dtype=hurray.dtype.int4)
    assert z.buffer_handles[0].byte_size == 3
    with pytest.raises(hurray.UnsupportedError):
        hurray.ones([4], dtype=hurray.dtype.int4)
    with pytest.raises(hurray.UnsupportedError):
        hurray.zeros([4], dtype=hurray.dtype.float8_e8m0)  # e8m0 has no zero
    with pytest.raises(hurray.UnsupportedError):
        hurray.zeros([2], device=hurray.Device("cuda"))


def test_creation_signature_errors():
    with pytest.raises(TypeError):
        hurray.zeros()
    with pytest.raises(TypeError):
        hurray.zeros([2], hurray.float32)  # dtype is keyword-only
    with pytest.raises(TypeError):
        hurray.zeros([2], bogus=1)
    with pytest.raises(TypeError):
        hurray.full([2])


def test_buffer_count_is_checked_by_the_library():
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Tensor(mmap.mmap(-1, 16), hurray.float32, [4], aux_buffers=[mmap.mmap(-1, 8)])
    assert ei.value.status == "ERR_INVALID_BUFFER_TABLE"
    assert ei.value.field == "buffer_count"
