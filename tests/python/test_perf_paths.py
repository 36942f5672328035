"""The fast paths of the performance work give exactly what the general paths give.

- Lazily described tensors (from_numpy, zeros/ones/full/empty): the tensor
  carries its fields and builds its descriptor on first need. Their fields equal
  those of the descriptor built from them (``_lazy_fields``), and that descriptor
  encodes to the same bytes as the one hurray.Tensor builds (and validates) for the
  same memory, for every Tier 1 type, rank 0, empty shapes and both orders.
- from_numpy of an exact ndarray reads its header (proven at first use) or its
  __array_struct__; both give what the buffer-protocol path gives.
- Everything that needs the descriptor itself (save, streams, the native
  protocol, composites, .descriptor) works on a tensor that has none yet.
- __array_struct__ hands NumPy a dtype object for every type it exports.
- sparse_coo(is_sorted=None) finds the order with one scan in C
  (``_coo_lexsorted``), which agrees with a plain reading of the rule.
"""

import gc
import struct

import pytest

import hurray
from conftest import aligned_array, collect, data_ptr

H = hurray._hurray
np = pytest.importorskip("numpy")

NUMPY_TYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
               "uint32", "int64", "uint64", "complex64", "complex128", "bool"]
SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 0, 3), (1, 1), (2, 3, 4, 5)]
ALL_DTYPES = list(H._dtype_table())


@pytest.fixture(params=["header", "struct"])
def path(request):
    """Runs a test under each way from_numpy reads an ndarray, then restores."""
    H._ndarray_path(request.param)
    yield request.param
    H._ndarray_path("auto")


def make(shape, name, **kw):
    """A 64-byte aligned array (an empty one wherever NumPy puts it)."""
    if 0 in shape:
        return np.zeros(shape, dtype=name)
    return aligned_array(shape, name, **kw)


def reference(a, dtype, layout=None, copy=None):
    """What hurray.Tensor (the validating constructor) builds over the same memory
    (copy=True: over a copy it owns, declared 64-byte aligned, as a copying
    from_numpy declares its own)."""
    if layout is not None:  # a Fortran-ordered array: its transpose is C-ordered
        return hurray.Tensor(a.T, dtype, a.shape, layout=layout, copy=copy)
    return hurray.Tensor(a.reshape(-1).view(np.uint8), dtype, a.shape, copy=copy)


def assert_described_like(t, ref):
    lazy, same = H._lazy_fields(t)
    assert lazy, "the tensor had built its descriptor already"
    assert same, "the fields the tensor carried differ from its built descriptor"
    assert t.descriptor == ref.descriptor
    assert t.descriptor.encode() == ref.descriptor.encode()
    assert H._lazy_fields(t) == (False, True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", [n for n in NUMPY_TYPES if n != "bool"])
def test_from_numpy_lazy_equals_validated(path, name, shape):
    a = make(shape, name)
    t = hurray.from_numpy(a)
    assert t.shape == tuple(shape) and t.dtype == hurray.Dtype.from_name(name)
    assert_described_like(t, reference(a, hurray.Dtype.from_name(name)))
    if a.size:
        assert data_ptr(t) == a.ctypes.data  # shared, not copied


@pytest.mark.parametrize("name", [n for n in NUMPY_TYPES if n != "bool"])
def test_from_numpy_fortran_order(path, name):
    a = aligned_array((5, 3), name, fill=1).T  # Fortran order, aligned
    assert a.flags.f_contiguous and not a.flags.c_contiguous
    t = hurray.from_numpy(a, copy=False)
    assert isinstance(t.layout, hurray.ColMajorLayout)
    assert_described_like(t, reference(a, hurray.Dtype.from_name(name), hurray.ColMajorLayout()))
    assert np.shares_memory(np.asarray(t), a)


@pytest.mark.parametrize("shape", [(), (0,), (9,), (2, 3)], ids=str)
def test_from_numpy_bool_general_path(shape):
    a = np.ones(shape, dtype=bool)
    t = hurray.from_numpy(a)  # packed: a copy, described lazily all the same
    packed = np.packbits(a.reshape(-1), bitorder="little").tobytes()
    # the reference over its own 64-byte aligned copy, as from_numpy declares its copy
    assert_described_like(t, hurray.Tensor(packed or b"", hurray.bool, shape, copy=True))


def test_from_numpy_buffer_protocol_path_is_lazy_too():
    a = aligned_array((4, 6), "int32", fill=3)
    t = hurray.from_numpy(memoryview(a))  # not an ndarray: the general path
    assert_described_like(t, reference(a, hurray.int32))


@pytest.mark.parametrize("name", NUMPY_TYPES)
def test_paths_agree(name):
    arrays = [aligned_array((5, 3), name, fill=1), aligned_array((), name, fill=1),
              aligned_array((8,), name, offset=8, fill=1),  # misaligned: copied
              np.frombuffer(bytes(64), dtype=name)[:4],  # read-only
              aligned_array((6, 6), name, fill=1)[::2, 1:],  # strided
              aligned_array((5, 4), name, fill=1).T]
    for a in arrays:
        got = {}
        for p in ("header", "struct"):
            H._ndarray_path(p)
            try:
                t = hurray.from_numpy(a)
            finally:
                H._ndarray_path("auto")
            got[p] = (t.descriptor.encode(), t.readonly, bytes(np.asarray(t).tobytes()),
                      data_ptr(t) == data_ptr(a) if a.size and name != "bool" else None)
        general = hurray.from_numpy(memoryview(a)) if a.flags.c_contiguous else None
        assert got["header"] == got["struct"]
        if general is not None:
            assert got["header"][0] == general.descriptor.encode()
            assert got["header"][1] == general.readonly


def test_from_numpy_copy_policy_on_the_fast_path(path):
    a = aligned_array((16,), "float32", offset=4, fill=2)
    with pytest.raises(hurray.BufferError):
        hurray.from_numpy(a, copy=False)
    t = hurray.from_numpy(a)  # None: copied to fix the alignment
    assert data_ptr(t) != a.ctypes.data and np.asarray(t).tolist() == [2.0] * 16
    b = aligned_array((16,), "float32", fill=3)
    t = hurray.from_numpy(b, copy=True)
    assert data_ptr(t) != b.ctypes.data and not t.readonly
    assert_described_like(t, reference(np.asarray(t), hurray.float32, copy=True))


def test_from_numpy_keeps_the_array_alive(path):
    a = aligned_array((1000,), "float64", fill=7)
    t = hurray.from_numpy(a)
    addr = a.ctypes.data
    del a
    collect()
    assert data_ptr(t) == addr
    assert np.asarray(t).sum() == 7000.0


def test_from_numpy_readonly_array(path):
    a = np.frombuffer(bytes(range(64)) * 2, dtype=np.uint8)
    if a.ctypes.data % 64:
        a = aligned_array((128,), "uint8", fill=1)
        a.flags.writeable = False
    t = hurray.from_numpy(a)
    assert t.readonly
    assert not np.asarray(t).flags.writeable


@pytest.mark.parametrize("name", ["float32", "int16"])
def test_from_numpy_non_native_order_and_subclass_fall_back(path, name):
    a = aligned_array((4,), np.dtype(name).newbyteorder(), fill=1)
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_numpy(a)

    class Sub(np.ndarray):
        pass

    s = aligned_array((4,), name, fill=1).view(Sub)
    t = hurray.from_numpy(s)
    assert t.shape == (4,) and H._lazy_fields(t) == (True, True)


def test_ndarray_header_is_proven():
    assert H._ndarray_path("auto") == "unproven"
    hurray.from_numpy(np.zeros(3))
    assert H._ndarray_path(None) == "header"  # this NumPy's layout is the declared one


@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3)], ids=str)
@pytest.mark.parametrize("name", ALL_DTYPES)
@pytest.mark.parametrize("kind", ["zeros", "ones", "full", "empty"])
def test_creation_lazy_equals_validated(kind, name, shape):
    dt = hurray.Dtype.from_name(name)
    try:
        if kind == "full":
            t = hurray.full(shape, 1, dtype=dt)
        else:
            t = getattr(hurray, kind)(shape, dtype=dt)
    except hurray.UnsupportedError:
        return  # a value this type cannot hold (checked by test_tensor.py)
    n = hurray.buffer_size_bytes(dt, t.size)
    assert_described_like(t, hurray.Tensor(bytes(n), dt, shape, copy=True))
    if kind == "zeros" and n:
        assert np.asarray(t.buffer(0)).tobytes() == bytes(n)


def test_lazy_tensor_feeds_every_consumer(tmp_path):
    a = aligned_array((3, 4), "float32", fill=1.5)

    def fresh():
        t = hurray.from_numpy(a)
        return t

    path = tmp_path / "lazy.hrry"
    hurray.save(path, {"t": fresh(), "z": hurray.zeros((2, 2), dtype=hurray.int8)})
    back = hurray.load(path)
    assert back["t"].descriptor.shape == (3, 4)
    assert np.asarray(back["t"]).tolist() == a.tolist()
    w = hurray.StreamWriter()
    w.write(fresh())
    w.finish()
    (item,) = list(hurray.StreamReader(w.getvalue()))
    assert np.asarray(item).tolist() == a.tolist()
    assert np.asarray(hurray.from_hurray(fresh())).tolist() == a.tolist()
    d = fresh().descriptor
    assert d.layout == hurray.RowMajorLayout() and d.shape == (3, 4)
    assert np.asarray(fresh().T).tolist() == a.T.tolist()
    del back, item
    collect()


def test_lazy_tensor_as_composite_member(tmp_path):
    a = hurray.from_numpy(aligned_array((4,), "float32", fill=1))
    b = hurray.zeros((2, 2), dtype=hurray.int8)
    g = hurray.Composite("group", [], hurray.float32, [a, b])
    assert H._lazy_fields(a) == (False, True)  # the composite built the descriptors
    assert H._lazy_fields(b) == (False, True)
    assert g.members[0].descriptor == a.descriptor
    hurray.save(tmp_path / "g.hrry", {"g": g})
    assert hurray.load(tmp_path / "g.hrry")["g"] == g


def test_array_struct_passes_a_dtype():
    for name in [n for n in NUMPY_TYPES if n != "bool"]:
        a = aligned_array((3,), name, fill=1)
        out = np.asarray(hurray.from_numpy(a))
        assert out.dtype == np.dtype(name) and out.dtype.isnative
        assert np.shares_memory(out, a)


def test_lazy_tensor_lifetime_under_gc():
    refs = [hurray.from_numpy(aligned_array((8,), "int64", fill=i)) for i in range(50)]
    arrays = [np.asarray(t) for t in refs]
    del refs
    gc.collect()
    assert [int(x[0]) for x in arrays] == list(range(50))
    assert struct.pack("q", 3) == arrays[3][:1].tobytes()


def lexsorted_reference(rows):
    """Strictly increasing lexicographic order, read off the rule itself."""
    return all(tuple(a) < tuple(b) for a, b in zip(rows, rows[1:]))


def test_coo_lexsorted_agrees_with_the_rule():
    rng = np.random.default_rng(3)
    cases = [np.zeros((0, 2), np.uint64), np.zeros((1, 3), np.uint64),
             np.zeros((0, 0), np.uint64), np.zeros((1, 0), np.uint64),
             np.zeros((2, 0), np.uint64),  # two empty coordinates: a duplicate
             np.array([[0, 1], [0, 1]], np.uint64), np.array([[0, 1], [0, 2]], np.uint64),
             np.array([[1, 0], [0, 5]], np.uint64), np.array([[2**64 - 1], [0]], np.uint64),
             np.array([[0], [2**64 - 1]], np.uint64)]
    for _ in range(300):
        rank = int(rng.integers(1, 5))
        nnz = int(rng.integers(0, 12))
        m = rng.integers(0, 3, size=(nnz, rank)).astype(np.uint64)
        if rng.random() < 0.5:  # sorted, with or without duplicates
            m = m[np.lexsort(m.T[::-1])] if nnz else m
            if rng.random() < 0.5 and nnz:
                m = np.unique(m, axis=0)
        cases.append(np.ascontiguousarray(m))
    for m in cases:
        rows = m.tolist()
        want = len(rows) < 2 or (m.shape[1] > 0 and lexsorted_reference(rows))
        assert H._coo_lexsorted(m, m.shape[0], m.shape[1]) is want, m
        odd = memoryview(bytearray(b"\0" + m.tobytes()))[1:]  # not 8-byte aligned
        assert H._coo_lexsorted(odd, m.shape[0], m.shape[1]) is want, m
        distinct = len({tuple(r) for r in rows}) == len(rows)
        if m.shape[1] > 0 and m.shape[0] > 0 and m.max() < 3 and distinct:
            t = hurray.sparse_coo(np.ones(len(rows), np.float32), m, [3] * m.shape[1])
            assert t.layout.is_sorted == want  # what is_sorted=None finds


def test_coo_lexsorted_large_and_bad_arguments():
    n = 1 << 17  # above the size that releases the GIL
    rows = np.stack([np.arange(n, dtype=np.uint64) // 7, np.arange(n, dtype=np.uint64) % 7], 1)
    assert H._coo_lexsorted(rows, n, 2)
    rows[n - 1] = rows[n - 2]
    assert not H._coo_lexsorted(rows, n, 2)
    with pytest.raises(ValueError):
        H._coo_lexsorted(np.zeros(3, np.uint64), 2, 2)  # fewer bytes than 2 rows
    with pytest.raises(ValueError):
        H._coo_lexsorted(np.zeros(4, np.uint64), 2, -1)
    with pytest.raises(TypeError):
        H._coo_lexsorted(3, 1, 1)


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int8", "uint16", "int32",
                                  "uint64", "complex64", "complex128", "bool"])
def test_full_pattern_every_length(name):
    """full/ones store a 16-byte pattern and finish with a tail: every length up to
    a few patterns, against NumPy's."""
    value = {"bool": True, "complex64": 1.5 - 2j, "complex128": -0.25 + 3j}.get(name, 3)
    for n in range(0, 41):
        t = hurray.full((n,), value, dtype=hurray.Dtype.from_name(name))
        assert np.array_equal(np.asarray(t), np.full((n,), value, dtype=name)), n
        o = hurray.ones((n,), dtype=hurray.Dtype.from_name(name))
        assert np.array_equal(np.asarray(o), np.ones((n,), dtype=name)), n


def test_large_buffers_are_zeroed_and_filled():
    """Blocks of 4 MiB and more come from the kernel (zero pages) and are filled
    without the GIL; what reads back is what was asked for."""
    n = (16 << 20) // 4 + 3  # 64 MiB and a bit: a partial last page
    for _ in range(2):  # the second reuses the address space the first released
        z = hurray.zeros((n,), dtype=hurray.float32)
        a = np.asarray(z)
        assert not a.any()
        a[::4096] = 1  # dirty it before it is released
        del a, z
    o = np.asarray(hurray.ones((n,), dtype=hurray.int32))
    assert o.min() == 1 and o.max() == 1
    f = np.asarray(hurray.full((n // 2,), 1 + 2j, dtype=hurray.Dtype.from_name("complex128")))
    assert (f == 1 + 2j).all()
    e = hurray.empty((n,), dtype=hurray.uint8)
    np.asarray(e)[...] = 7  # writable whole
    assert int(np.asarray(e)[-1]) == 7
