"""A fixed set of tensors covering every layout, every quantization scheme and
the optional sections, plus composites, shared by the native-protocol, file
and stream tests; and the helpers that compare a tensor with its round trip
(descriptor bytes but for the measured alignment, and every buffer's bytes)."""

import numpy as np

import hurray


def buf(n, seed=0):
    """n bytes of deterministic content in 64-byte-aligned memory."""
    a = np.empty(n + 64, dtype=np.uint8)
    start = (-a.ctypes.data) % 64
    out = a[start:start + n]
    out[:] = (np.arange(n) * 31 + seed) % 251
    return out


def u64(values):
    return np.ascontiguousarray(np.array(values, dtype=np.uint64))


def f32(values):
    return np.ascontiguousarray(np.array(values, dtype=np.float32))


def size(dtype, count):
    return hurray.buffer_size_bytes(dtype, count)


def T(buffers, dtype, shape, **kw):
    return hurray.Tensor(list(buffers), dtype, shape, **kw)


def sample_tensors():
    """name -> hurray.Tensor: one of each layout, scheme and section."""
    s = {}
    # dense layouts
    s["f32_row"] = T([buf(48, 1)], "float32", (3, 4))
    s["f64_col"] = T([buf(48, 2)], "float64", (3, 2), layout=hurray.ColMajorLayout())
    s["i16_strided"] = T([buf(12, 3)], "int16", (2, 3), layout=hurray.StridedLayout([-3, 1]),
                         byte_offset=6)
    s["u8_tiled"] = T([buf(16, 4)], "uint8", (3, 3), layout=hurray.TiledLayout([2, 2]))
    s["f32_morton"] = T([buf(64, 5)], "float32", (3, 4), layout=hurray.MortonLayout([2, 2]))
    s["f32_hilbert"] = T([buf(64, 6)], "float32", (4, 4), layout=hurray.HilbertLayout(2, 2))
    # element types
    s["bf16"] = T([buf(12, 7)], "bfloat16", (2, 3))
    s["int4"] = T([buf(size("int4", 15), 8)], "int4", (3, 5))
    s["bool"] = T([buf(2, 9)], "bool", (10,))
    s["c64"] = T([buf(16, 10)], "complex64", (2,))
    s["f8"] = T([buf(4, 11)], "float8_e4m3", (4,))
    s["empty"] = T([buf(0)], "float32", (0, 3))
    s["scalar"] = T([buf(8, 12)], "float64", ())
    s["sections"] = T([buf(16, 13)], "float32", (2, 2),
                      statistics=hurray.Statistics(value_min=-1.0, value_max=2.0,
                                                   value_abs_max=2.0, has_nan=False,
                                                   has_inf=False),
                      shard=hurray.Shard((4, 2), (2, 0)))
    # sparse and indirect layouts
    s["coo"] = hurray.sparse_coo(f32([5.0, 7.0]), u64([[0, 0], [1, 1]]), [2, 2])
    s["csr"] = T([buf(12, 14), u64([1, 0, 2]), u64([0, 1, 1, 3])], "float32", (3, 3),
                 layout=hurray.CsrLayout(3))
    s["csc"] = T([buf(12, 15), u64([0, 2, 1]), u64([0, 2, 3, 3])], "float32", (3, 3),
                 layout=hurray.CscLayout(3))
    s["csf"] = T([buf(8, 16), u64([0, 2]), u64([0, 1]), u64([0, 1, 2]), u64([0, 1]),
                  u64([0, 1, 2]), u64([1, 0])], "float32", (2, 2, 2),
                 layout=hurray.CsfLayout(2, [0, 1, 2]))
    s["paged"] = T([buf(48, 17), u64([0, 2]), u64([0, 1, 2])], "float32", (3, 1, 2),
                   layout=hurray.BlockPagedLayout(2, 3, 0, 2, block_table_index_type="uint64"))
    # quantization schemes
    s["q_tensor"] = T([buf(8, 18)], "int8", (2, 4), quantization=hurray.PerTensorAffine(0.5, 3))
    s["q_channel"] = T([buf(8, 19), f32([0.5, 0.25]), f32([1.0, 2.0])], "int8", (2, 4),
                       quantization=hurray.PerChannelAffine(0, 1, 2))
    s["q_channel_sym"] = T([buf(8, 20), f32([1, 2, 3, 4])], "int8", (2, 4),
                           quantization=hurray.PerChannelAffine(1, 1))
    s["q_block"] = T([buf(16, 21), buf(16, 22)], "int4", (4, 8),
                     quantization=hurray.PerBlockAffine(1, 4, 1, scale_type="float16"))
    s["q_nf4"] = T([buf(16, 23), buf(16, 24)], "uint4", (2, 16), quantization=hurray.NF4(1, 8, 1))
    s["q_mxfp"] = T([buf(64, 25), buf(4, 26)], "float8_e4m3", (2, 32),
                    quantization=hurray.MXFP(1, 16, 1))
    return s


def sample_composites():
    """name -> hurray.Composite: each rule, and a nested tree."""
    def member(shape, parent, offset, seed):
        n = int(np.prod(shape)) * 4
        return T([buf(n, seed)], "float32", shape, shard=hurray.Shard(parent, offset))

    c = {}
    c["partition"] = hurray.Composite("partition", (4, 4), "float32", [
        member((2, 4), (4, 4), (0, 0), 30), member((2, 4), (4, 4), (2, 0), 31)])
    c["overlay"] = hurray.Composite("overlay", (4, 4), "float32", [
        member((4, 4), (4, 4), (0, 0), 32), member((1, 4), (4, 4), (1, 0), 33)],
        combine_op="add")
    inner = hurray.Composite("overlay", (2, 4), "float32", [
        member((2, 4), (2, 4), (0, 0), 34), member((1, 4), (2, 4), (1, 0), 35)],
        combine_op="replace", shard=hurray.Shard((4, 4), (2, 0)))
    c["nested"] = hurray.Composite("partition", (4, 4), "float32", [
        member((2, 4), (4, 4), (0, 0), 36), inner])
    t = sample_tensors()
    c["group"] = hurray.Composite("group", (2,), "float32", [t["q_channel"], t["csr"], t["coo"]])
    return c


# ---- comparison ---------------------------------------------------------------------

def buffer_bytes(t):
    """Every buffer of a host tensor, as bytes, in buffer-table order."""
    return [np.asarray(t.buffer(i)).tobytes() for i in range(t.buffer_count)]


def normalized(t, descriptor=None):
    """The tensor's encoded descriptor (or `descriptor`, presented with t's
    buffers) with every buffer's alignment set to what owned memory declares:
    alignment is measured where the bytes are, the one field a round trip may
    change."""
    copy = hurray._hurray._tensor_from_descriptor(descriptor or t.descriptor, buffer_bytes(t),
                                                  permissive=True, copy=True)
    return copy.descriptor.encode()


def assert_same_member(composite, index, t):
    """t is member `index` of `composite` read back on its own: it carries the
    descriptor the member presents to its composite (an overlay role included)."""
    m = composite.members[index]
    assert normalized(m, composite.member_descriptors[index]) == normalized(t)
    assert buffer_bytes(m) == buffer_bytes(t)


def assert_same_tensor(a, b):
    assert isinstance(b, hurray.Tensor)
    assert normalized(a) == normalized(b)
    assert buffer_bytes(a) == buffer_bytes(b)


def assert_same(a, b):
    """a and b are equal tensors or equal composites (composite equality ignores
    the measured alignment and compares bytes)."""
    if isinstance(a, hurray.Composite):
        assert isinstance(b, hurray.Composite)
        assert a == b  # heads, and the descriptors members present (roles included)
        assert a.member_roles == b.member_roles
        for x, y in zip(a.members, b.members):
            if isinstance(x, hurray.Composite):
                assert_same(x, y)
            else:
                assert buffer_bytes(x) == buffer_bytes(y)
    else:
        assert_same_tensor(a, b)
