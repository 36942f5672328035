"""Sparse tensors are Tensors (the specification's
docs/adr/ADR-031-unified-python-tensor-class.md): component views,
AttributeError for what a layout lacks, index buffers checked before anyone
reads them, sparse_coo, SciPy round trips that share memory, block-paged checks."""

import gc
import struct
import weakref

import pytest

import hurray

from conftest import aligned_array, data_ptr

np_ = pytest.importorskip("numpy")
sp = pytest.importorskip("scipy.sparse")


def f32(*v):
    return struct.pack(f"{len(v)}f", *v)


def u64(*v):
    return struct.pack(f"{len(v)}Q", *v)


def coo():
    values = aligned_array((2,), "f4", fill=[5.0, 7.0])
    indices = aligned_array((2, 2), "u8", fill=[[0, 0], [1, 1]])
    return hurray.sparse_coo(values, indices, [2, 2])


def csr():
    return hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(0, 1), u64(0, 1, 2)],
                         layout=hurray.CsrLayout(nnz=2))


def csc():
    return hurray.Tensor(f32(5, 7), hurray.float32, [2, 3], aux_buffers=[u64(1, 0), u64(0, 1, 1, 2)],
                         layout=hurray.CscLayout(nnz=2))


CSF_BUFFERS = [u64(0, 2), u64(0, 1), u64(0, 2, 3), u64(0, 2, 1), u64(0, 1, 2, 4), u64(1, 3, 0, 2)]


def csf():
    return hurray.Tensor(f32(1, 2, 3, 4), hurray.float32, [2, 3, 4], aux_buffers=CSF_BUFFERS,
                         layout=hurray.CsfLayout(nnz=4, mode_order=[0, 1, 2]))


ACCESSORS = ("nnz", "values", "indices", "col_indices", "row_ptr", "row_indices", "col_ptr")


# ---- one class, accessors that exist only where they apply --------------------------------

def test_there_is_no_separate_sparse_class():
    assert not hasattr(hurray, "SparseTensor")
    for t in (coo(), csr(), csc(), csf()):
        assert type(t) is hurray.Tensor


@pytest.mark.parametrize("make,present", [
    (lambda: hurray.Tensor(bytes(16), hurray.float32, [4]), set()),
    (coo, {"nnz", "values", "indices"}),
    (csr, {"nnz", "values", "col_indices", "row_ptr"}),
    (csc, {"nnz", "values", "row_indices", "col_ptr"}),
    (csf, {"nnz", "values"}),
])
def test_hasattr_tells_the_truth(make, present):
    t = make()
    for attr in ACCESSORS:
        assert hasattr(t, attr) == (attr in present), attr
        if attr not in present:
            with pytest.raises(AttributeError, match=t.layout.name):
                getattr(t, attr)


def test_component_views():
    c = coo()
    assert c.nnz == 2
    assert c.values.shape == (2,) and c.values.dtype is hurray.float32
    assert c.indices.shape == (2, 2) and c.indices.dtype is hurray.uint64
    assert np_.asarray(c.indices).tolist() == [[0, 0], [1, 1]]
    r = csr()
    assert np_.asarray(r.values).tolist() == [5, 7]
    assert np_.asarray(r.col_indices).tolist() == [0, 1]
    assert np_.asarray(r.row_ptr).tolist() == [0, 1, 2]
    k = csc()
    assert np_.asarray(k.row_indices).tolist() == [1, 0]
    assert np_.asarray(k.col_ptr).tolist() == [0, 1, 1, 2]
    f = csf()
    assert f.nnz == 4 and np_.asarray(f.values).tolist() == [1, 2, 3, 4]
    assert f.buffer_count == 7 and f.buffer(6).shape == (32,)


def test_component_views_share_memory_and_keep_the_tensor_alive():
    values = aligned_array((2,), "f4", fill=[5.0, 7.0])
    indices = aligned_array((2, 2), "u8", fill=[[0, 0], [1, 1]])
    t = hurray.sparse_coo(values, indices, [2, 2])
    v, i = t.values, t.indices
    assert data_ptr(np_.asarray(v)) == values.ctypes.data
    assert data_ptr(np_.asarray(i)) == indices.ctypes.data
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is not None  # the views hold it
    del v, i
    gc.collect()
    assert ref() is None


def test_dense_only_protocols_reject_sparse_layouts_naming_them():
    for t in (coo(), csr(), csc(), csf()):
        name = t.layout.name
        with pytest.raises(BufferError, match=name):
            t.__dlpack__()
        with pytest.raises(hurray.UnsupportedError, match=name):
            np_.asarray(t)
        with pytest.raises(hurray.UnsupportedError, match=name):
            t.__array__()
        with pytest.raises(hurray.UnsupportedError, match=name):
            t.__array_interface__
        try:
            import torch  # noqa: F401
        except ImportError:
            continue
        with pytest.raises((BufferError, hurray.UnsupportedError), match=name):
            t.to_torch()


def test_sparse_repr_is_metadata():
    r = repr(coo())
    assert r.startswith("hurray.Tensor(") and "layout='coo'" in r and "nnz=2" in r


# ---- index buffers are checked at construction ------------------------------------------

@pytest.mark.parametrize("aux,layout,shape", [
    ([u64(0, 2, 1, 1)], hurray.CooLayout(2), [2, 2]),                      # out of bounds
    ([u64(1, 1, 1, 1)], hurray.CooLayout(2), [2, 2]),                      # duplicate
    ([u64(1, 1, 0, 0)], hurray.CooLayout(2, is_sorted=True), [2, 2]),      # claims sorted
    ([u64(0, 2), u64(0, 1, 2)], hurray.CsrLayout(2), [2, 2]),              # column out of bounds
    ([u64(1, 0), u64(0, 2, 2)], hurray.CsrLayout(2), [2, 2]),              # unsorted row
    ([u64(0, 1), u64(1, 1, 2)], hurray.CsrLayout(2), [2, 2]),              # row_ptr[0] != 0
    ([u64(0, 1), u64(0, 2, 1)], hurray.CsrLayout(2), [2, 2]),              # decreasing
    ([u64(0, 1), u64(0, 1, 1)], hurray.CsrLayout(2), [2, 2]),              # row_ptr[n] != nnz
    ([u64(0, 3), u64(0, 1, 2)], hurray.CscLayout(2), [3, 2]),              # row out of bounds
    ([u64(0, 1), u64(1, 1, 2)], hurray.CscLayout(2), [2, 2]),
])
def test_bad_index_data_is_refused(aux, layout, shape):
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Tensor(f32(1, 2), hurray.float32, shape, aux_buffers=aux, layout=layout)
    assert ei.value.status == "ERR_INVALID_INDEX_DATA"
    assert ei.value.field.startswith("buffers[")


def test_bad_csf_index_data_is_refused():
    bad = list(CSF_BUFFERS)
    bad[5] = u64(1, 4, 0, 2)  # crd_2 beyond shape[2] = 4
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(f32(1, 2, 3, 4), hurray.float32, [2, 3, 4], aux_buffers=bad,
                      layout=hurray.CsfLayout(nnz=4, mode_order=[0, 1, 2]))


def test_host_index_buffers_of_a_device_tensor_are_checked():
    """A Python buffer is host memory whatever device the tensor declares, so its
    index buffers are read and checked like a CPU tensor's."""
    cuda = hurray.Device("cuda")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(aligned_array((2,), "f4"), hurray.float32, [2, 2],
                      aux_buffers=[aligned_array((4,), "u8", fill=99)],
                      layout=hurray.CooLayout(2), device=cuda)
    ok = hurray.Tensor(aligned_array((2,), "f4"), hurray.float32, [2, 2],
                       aux_buffers=[np_.array([0, 0, 1, 1], dtype=np_.uint64)],
                       layout=hurray.CooLayout(2), device=cuda)
    assert ok.nnz == 2



# ---- sparse_coo -----------------------------------------------------------------------------

def test_sparse_coo_derives_nnz_and_sortedness():
    t = coo()
    assert t.layout == hurray.CooLayout(nnz=2, is_sorted=True)
    u = hurray.sparse_coo(np_.array([1.0, 2.0]), np_.array([[1, 1], [0, 0]]), (2, 2))
    assert u.layout == hurray.CooLayout(nnz=2, is_sorted=False)
    assert u.dtype is hurray.float64
    with pytest.raises(hurray.InvalidDescriptorError):  # a false claim is checked
        hurray.sparse_coo(np_.array([1.0, 2.0]), np_.array([[1, 1], [0, 0]]), (2, 2),
                          is_sorted=True)
    three = hurray.sparse_coo(np_.ones(3, "f4"), np_.array([[0, 0, 0], [0, 1, 2], [1, 2, 3]]),
                              [2, 3, 4])
    assert three.indices.shape == (3, 3) and three.layout.is_sorted


def test_sparse_coo_index_dtypes_and_copies():
    vals = aligned_array((2,), "f4", fill=1)
    i64 = aligned_array((2, 2), "i8", fill=[[0, 0], [1, 1]])
    t = hurray.sparse_coo(vals, i64, [2, 2], copy=False)  # int64 shares its bits as uint64
    assert data_ptr(np_.asarray(t.indices)) == i64.ctypes.data
    i32 = np_.array([[0, 0], [1, 1]], dtype=np_.int32)
    t = hurray.sparse_coo(vals, i32, [2, 2])  # widened
    assert np_.asarray(t.indices).tolist() == [[0, 0], [1, 1]]
    with pytest.raises(hurray.BufferError, match="copy=False"):
        hurray.sparse_coo(vals, i32, [2, 2], copy=False)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.sparse_coo(vals, np_.array([[0, -1], [1, 1]], dtype=np_.int32), [2, 2])
    with pytest.raises(hurray.InvalidDescriptorError):  # negative int64: >= 2**63 as uint64
        hurray.sparse_coo(vals, np_.array([[0, -1], [1, 1]], dtype=np_.int64), [2, 2])
    with pytest.raises(TypeError):
        hurray.sparse_coo(vals, np_.array([[0.0, 0.0], [1.0, 1.0]]), [2, 2])


def test_sparse_coo_refusals():
    vals = np_.ones(2, "f4")
    idx = np_.array([[0, 0], [1, 1]], dtype=np_.uint64)
    with pytest.raises(hurray.InvalidDescriptorError, match=r"sparse_coo: shape\[1\] is dynamic"):
        hurray.sparse_coo(vals, idx, [2, None])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.sparse_coo(np_.ones(3, "f4"), idx, [2, 2])      # 3 values, 2 coordinates
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.sparse_coo(vals, idx, [2, 2, 2])                # rank 3, 2 columns
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.sparse_coo(np_.ones((2, 1), "f4"), idx, [2, 2])
    with pytest.raises(hurray.UnsupportedError):
        hurray.sparse_coo(np_.array(["a", "b"]), idx, [2, 2])


def test_sparse_coo_bool_values_are_packed():
    t = hurray.sparse_coo(np_.array([True, False, True]), np_.array([[0], [1], [2]]), [3])
    assert t.dtype is hurray.bool
    assert np_.asarray(t.values).tolist() == [True, False, True]
    with pytest.raises(hurray.BufferError):
        hurray.sparse_coo(np_.array([True]), np_.array([[0]], dtype=np_.uint64), [3], copy=False)


# ---- SciPy -------------------------------------------------------------------------------------

def scipy_matrix(fmt, dtype):
    dense = np_.array([[1, 0, 0, 2], [0, 3, 0, 0], [0, 0, 0, 0], [5, 0, 6, 0]], dtype=dtype)
    with hurray.aligned_allocator():
        m = getattr(sp, f"{fmt}_matrix")(dense)
        if fmt != "coo":
            m.indices = m.indices.astype(np_.int64)
            m.indptr = m.indptr.astype(np_.int64)
    return m, dense


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scipy_round_trip_shares_memory(fmt, dtype):
    m, dense = scipy_matrix(fmt, dtype)
    t = hurray.from_scipy(m)
    assert t.layout.name == fmt and t.nnz == m.nnz and t.shape == m.shape
    assert t.dtype is hurray.Dtype.from_name(dtype)
    assert data_ptr(np_.asarray(t.values)) == m.data.ctypes.data  # the values are shared
    if fmt == "csr":
        assert data_ptr(np_.asarray(t.col_indices)) == m.indices.ctypes.data
        assert data_ptr(np_.asarray(t.row_ptr)) == m.indptr.ctypes.data
    elif fmt == "csc":
        assert data_ptr(np_.asarray(t.row_indices)) == m.indices.ctypes.data
        assert data_ptr(np_.asarray(t.col_ptr)) == m.indptr.ctypes.data
    back = t.to_scipy()
    assert back.format == fmt and type(back) is type(m)
    assert (back.toarray() == dense).all()
    # to_scipy shares the tensor's buffers
    assert back.data.ctypes.data == data_ptr(np_.asarray(t.values))
    if fmt == "coo":
        assert back.row.ctypes.data == data_ptr(np_.asarray(t.indices))
        assert back.col.ctypes.data == data_ptr(np_.asarray(t.indices)) + 8
    else:
        assert back.indices.ctypes.data == data_ptr(np_.asarray(t.buffer(1)))
        assert back.indptr.ctypes.data == data_ptr(np_.asarray(t.buffer(2)))
    # and the SciPy result computes
    assert np_.allclose(back @ np_.ones(4), dense @ np_.ones(4))


def test_scipy_int32_indices_are_widened_values_shared():
    dense = np_.eye(3, dtype=np_.float32)
    with hurray.aligned_allocator():
        m = sp.csr_matrix(dense)
    assert m.indices.dtype == np_.int32
    t = hurray.from_scipy(m)
    assert data_ptr(np_.asarray(t.values)) == m.data.ctypes.data
    assert np_.asarray(t.col_indices).dtype == np_.uint64
    assert np_.asarray(t.col_indices).tolist() == [0, 1, 2]
    with pytest.raises(hurray.BufferError, match="copy=False"):
        hurray.from_scipy(m, copy=False)
    m.indices, m.indptr = m.indices.astype(np_.int64), m.indptr.astype(np_.int64)


def test_scipy_copy_policy_is_per_buffer():
    m, _ = scipy_matrix("csr", "float32")
    t = hurray.from_scipy(m, copy=True)
    assert data_ptr(np_.asarray(t.values)) != m.data.ctypes.data
    hurray.from_scipy(m, copy=False)  # everything aligned and int64: no copy needed
    coo_m, _ = scipy_matrix("coo", "float32")
    with pytest.raises(hurray.BufferError, match="interleave"):
        hurray.from_scipy(coo_m, copy=False)


def test_scipy_noncanonical_input_is_refused_not_fixed():
    m = sp.csr_matrix((np_.array([1.0, 2.0]), np_.array([1, 0]), np_.array([0, 2, 2])), shape=(2, 2))
    with pytest.raises(hurray.InvalidDescriptorError, match="sort_indices"):
        hurray.from_scipy(m)
    dup = sp.coo_matrix((np_.array([1.0, 2.0]), (np_.array([0, 0]), np_.array([1, 1]))), shape=(2, 2))
    with pytest.raises(hurray.InvalidDescriptorError, match="sum_duplicates"):
        hurray.from_scipy(dup)
    dup.sum_duplicates()
    assert hurray.from_scipy(dup).nnz == 1


def test_scipy_unsupported_formats_and_layouts():
    with pytest.raises(hurray.UnsupportedError):
        hurray.from_scipy(sp.lil_matrix(np_.eye(2)))
    with pytest.raises(hurray.UnsupportedError, match="row_major"):
        hurray.Tensor(bytes(16), hurray.float32, [4]).to_scipy()
    with pytest.raises(hurray.UnsupportedError, match="csf"):
        csf().to_scipy()


def test_scipy_coo_array_of_rank_three():
    a = sp.coo_array((np_.array([1.0, 2.0], "f4"),
                      (np_.array([0, 1]), np_.array([1, 2]), np_.array([3, 0]))), shape=(2, 3, 4))
    t = hurray.from_scipy(a)
    assert t.shape == (2, 3, 4) and t.nnz == 2
    back = t.to_scipy()
    assert back.shape == (2, 3, 4)
    assert (back.toarray() == a.toarray()).all()


# ---- block-paged ---------------------------------------------------------------------------

def paged_layout(**kw):
    return hurray.BlockPagedLayout(page_size=2, num_pages=3, paged_axis=0, num_seqs=2, **kw)


def test_block_paged_tensor_checks_its_index_buffers():
    pool = aligned_array((12,), "f4")
    bt, seq = np_.array([2, 0, 1], np_.uint32), np_.array([0, 1, 3], np_.uint32)
    t = hurray.Tensor(pool, hurray.float32, [4, 1, 2], aux_buffers=[bt, seq], layout=paged_layout())
    assert t.buffer_count == 3 and t.layout.num_seqs == 2
    with pytest.raises(hurray.InvalidDescriptorError, match="num_pages"):
        hurray.Tensor(pool, hurray.float32, [4, 1, 2], aux_buffers=[np_.array([2, 0, 3], np_.uint32), seq],
                      layout=paged_layout())


def test_validate_index_buffers():
    layout = paged_layout()
    seq, bt = np_.array([0, 1, 3], np_.uint32), np_.array([2, 0, 1], np_.uint32)
    assert layout.validate_index_buffers(seq, bt) is None
    layout.validate_index_buffers(seq, np_.array([1, 1, 1], np_.uint32))  # aliasing is allowed
    layout.validate_index_buffers(seq.tobytes(), bt.tobytes() + bytes(8))  # raw bytes: longer ok
    layout.validate_index_buffers(seq_ptr=seq, block_table=bt)
    t = hurray.Tensor(aligned_array((12,), "f4"), hurray.float32, [4, 1, 2], aux_buffers=[bt, seq],
                      layout=layout)
    layout.validate_index_buffers(t.buffer(2), t.buffer(1))  # tensors are read too
    bad = [
        (np_.array([1, 1, 3], np_.uint32), bt),                  # seq_ptr[0] != 0
        (np_.array([0, 2, 1], np_.uint32), bt),                  # decreasing
        (np_.array([0, 1, 2], np_.uint32), bt),                  # seq_ptr[num_seqs] != len
        (seq, np_.array([2, 0, 3], np_.uint32)),                 # page id >= num_pages
        (np_.array([0, 1], np_.uint32), bt),                     # seq_ptr too short
        (seq, np_.array([2, 0], np_.uint32)),                    # block table too short
    ]
    for s, b in bad:
        with pytest.raises(hurray.InvalidDescriptorError):
            layout.validate_index_buffers(s, b)
    with pytest.raises(ValueError):  # uint64 entries for a uint32 layout
        layout.validate_index_buffers(seq.astype(np_.uint64), bt)
    with pytest.raises(TypeError):
        layout.validate_index_buffers([0, 1, 3], bt)
    wide = paged_layout(block_table_index_type="uint64")
    wide.validate_index_buffers(seq.astype(np_.uint64), bt.astype(np_.uint64))
    with pytest.raises(hurray.InvalidDescriptorError):
        wide.validate_index_buffers(seq.astype(np_.uint64), np_.array([2, 0, 9], np_.uint64))


def test_validate_quantization_compatibility():
    layout = paged_layout()
    ok = [
        hurray.PerTensorAffine(0.5, 3),
        hurray.PerChannelAffine.symmetric(1, 3),
        hurray.PerChannelAffine.asymmetric(2, 3, 4),
        hurray.PerBlockAffine.symmetric(0, 2, 3, hurray.float16),
    ]
    for q in ok:
        assert layout.validate_quantization_compatibility(q) is None, q
    bad = [
        hurray.PerChannelAffine.symmetric(0, 3),                  # the paged axis
        hurray.PerBlockAffine.symmetric(0, 4, 3, hurray.float32),  # block != page
        hurray.PerBlockAffine.symmetric(1, 2, 3, hurray.float32),  # axis != 0
        hurray.PerChannelAffine.symmetric(1, 1),                   # index inside the layout
        hurray.PerChannelAffine.symmetric(1, 5),                   # index past the table
    ]
    for q in bad:
        with pytest.raises(hurray.InvalidDescriptorError) as ei:
            layout.validate_quantization_compatibility(q)
        assert ei.value.offset is None and "at byte" not in str(ei.value)
    with pytest.raises(TypeError):
        layout.validate_quantization_compatibility(0x02)
    with pytest.raises(TypeError):
        layout.validate_quantization_compatibility("per_channel_affine")


def test_component_views_refuse_buffers_that_are_not_producer_synced():
    cuda = hurray.Device("cuda")
    t = hurray.Tensor(aligned_array((2,), "f4"), hurray.float32, [2, 2],
                      aux_buffers=[aligned_array((4,), "u8", fill=[0, 0, 1, 1])],
                      layout=hurray.CooLayout(2), device=cuda)
    wire = bytearray(t.descriptor.encode())
    table = 20 + 8 * 2 + 8 + 16  # header, shape, byte_offset, COO payload
    assert wire[table] == 2
    for i in range(2):
        wire[table + 1 + 16 * i + 13] = 1  # sync_mode: event
    d = hurray.Descriptor.decode(bytes(wire))
    assert d.buffer_handles[0].sync_mode == "event"
    ev = hurray._hurray._tensor_from_descriptor(d, [aligned_array((2,), "f4"),
                                                    aligned_array((4,), "u8")])
    assert ev.sync_mode == "event" and ev.nnz == 2
    for attr in ("values", "indices"):
        with pytest.raises(hurray.UnsupportedError, match="event"):
            getattr(ev, attr)
    with pytest.raises(hurray.UnsupportedError, match="event"):
        ev.buffer(0)
