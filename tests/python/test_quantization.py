"""Quantization, statistics and shard sections: the classes, their value
semantics, standalone encode/decode, and authoring tensors with them
(Tier 2 storage types included)."""

import math
import pickle
import struct

import pytest

import hurray

SCHEMES = [
    hurray.PerTensorAffine(0.02, 128),
    hurray.PerChannelAffine.symmetric(axis=0, scale_buffer_index=1),
    hurray.PerChannelAffine.asymmetric(axis=1, scale_buffer_index=1, zero_point_buffer_index=2),
    hurray.PerBlockAffine.symmetric(1, 32, 1, hurray.float32),
    hurray.PerBlockAffine.asymmetric(0, 64, 2, 1, "bfloat16"),
    hurray.NF4(axis=1, block_size=64, scale_buffer_index=1),
    hurray.MXFP(axis=1, block_size=32, scale_buffer_index=1),
]


def f32(*v):
    return struct.pack(f"{len(v)}f", *v)


# ---- the classes ------------------------------------------------------------------------

def test_fields():
    q = hurray.PerTensorAffine(0.02, 128)
    assert q.scale == pytest.approx(0.02) and q.zero_point == 128
    assert q.scale == struct.unpack("f", struct.pack("f", 0.02))[0]  # stored as float32
    assert hurray.PerTensorAffine(0.5).zero_point == 0
    pc = hurray.PerChannelAffine.symmetric(0, 1)
    assert (pc.axis, pc.scale_buffer_index, pc.zero_point_buffer_index) == (0, 1, None)
    assert pc.scale_type is hurray.float32
    pa = hurray.PerChannelAffine.asymmetric(axis=0, scale_buffer_index=1, zero_point_buffer_index=2)
    assert pa.zero_point_buffer_index == 2
    assert hurray.PerChannelAffine(0, 1, 2) == pa and hurray.PerChannelAffine(0, 1) == pc
    pb = hurray.PerBlockAffine.symmetric(1, 32, 1, hurray.float32)
    assert (pb.axis, pb.block_size, pb.scale_type) == (1, 32, hurray.float32)
    assert hurray.PerBlockAffine(1, 32, 1) == pb  # float32 scales by default
    assert hurray.PerBlockAffine.asymmetric(1, 32, 1, 2, "float16").scale_type is hurray.float16
    n = hurray.NF4(1, 64, 1)
    assert (n.axis, n.block_size, n.scale_buffer_index) == (1, 64, 1)
    m = hurray.MXFP(1, 32, 1)
    assert (m.axis, m.block_size, m.scale_buffer_index) == (1, 32, 1)
    assert [q.scheme for q in SCHEMES] == [
        "per_tensor_affine", "per_channel_affine", "per_channel_affine", "per_block_affine",
        "per_block_affine", "nf4", "mxfp"]
    assert [q.scheme_tag for q in SCHEMES] == [1, 2, 2, 3, 3, 4, 5]


@pytest.mark.parametrize("q,text", [
    (hurray.PerTensorAffine(0.02, 128), "PerTensorAffine(scale=0.02, zero_point=128)"),
    (hurray.PerTensorAffine(2, -1), "PerTensorAffine(scale=2.0, zero_point=-1)"),
    (hurray.PerChannelAffine.symmetric(0, 1), "PerChannelAffine.symmetric(axis=0, scale_buffer_index=1)"),
    (hurray.PerChannelAffine.asymmetric(0, 1, 2),
     "PerChannelAffine.asymmetric(axis=0, scale_buffer_index=1, zero_point_buffer_index=2)"),
    (hurray.NF4(1, 64, 1), "NF4(axis=1, block_size=64, scale_buffer_index=1)"),
    (hurray.MXFP(1, 32, 1), "MXFP(axis=1, block_size=32, scale_buffer_index=1)"),
])
def test_repr(q, text):
    assert repr(q) == text


@pytest.mark.parametrize("name", ["PerTensorAffine", "PerChannelAffine", "PerBlockAffine", "NF4",
                                  "MXFP", "OpaqueQuantization"])
def test_every_parameter_is_a_documented_property(name):
    """The classes are built from libhurray's scheme table: one getter per field."""
    import inspect

    cls = getattr(hurray, name)
    for p in inspect.signature(cls).parameters:
        assert getattr(cls, p).__doc__, p


def test_symmetric_forms_and_scale_types():
    assert (hurray.PerBlockAffine.symmetric(1, 32, 1, "float16")
            == hurray.PerBlockAffine(1, 32, 1, None, "float16"))
    with pytest.raises(TypeError):  # every parameter of a form is required
        hurray.PerBlockAffine.symmetric(1, 32, 1)
    with pytest.raises(TypeError):  # the symmetric form has no zero points
        hurray.PerChannelAffine.symmetric(0, 1, zero_point_buffer_index=2)
    with pytest.raises(hurray.InvalidDescriptorError,
                       match="scale_type must be float16, bfloat16 or float32, not int8"):
        hurray.PerBlockAffine(0, 32, 1, scale_type="int8")
    with pytest.raises(TypeError):  # fixed by the format: not a parameter
        hurray.PerChannelAffine(0, 1, None, "float32")
    opaque = hurray.OpaqueQuantization(bytes([0xF0, 1, 0, 0, 7]))
    assert repr(opaque) == "OpaqueQuantization(scheme_tag=0xF0, payload=5 bytes)"
    assert opaque.payload == bytes([0xF0, 1, 0, 0, 7])


def test_scheme_rules_without_a_tensor():
    bad = [
        lambda: hurray.PerTensorAffine(0.0, 0),
        lambda: hurray.PerTensorAffine(math.inf, 0),
        lambda: hurray.PerTensorAffine(math.nan, 0),
        lambda: hurray.PerTensorAffine(1e40, 0),       # overflows float32
        lambda: hurray.PerTensorAffine(1.0, 2**31),
        lambda: hurray.PerChannelAffine.symmetric(64, 1),
        lambda: hurray.PerChannelAffine.symmetric(0, 0),   # buffer 0 is the data
        lambda: hurray.PerChannelAffine.symmetric(0, 255),
        lambda: hurray.PerChannelAffine.symmetric(0, -1),
        lambda: hurray.PerBlockAffine.symmetric(0, 3, 1, hurray.float32),
        lambda: hurray.PerBlockAffine.symmetric(0, 0, 1, hurray.float32),
        lambda: hurray.PerBlockAffine.symmetric(0, 32, 1, hurray.int8),
        lambda: hurray.NF4(0, 4, 1),
        lambda: hurray.MXFP(0, 8, 1),
        lambda: hurray.MXFP(0, 4096, 1),
    ]
    for make in bad:
        with pytest.raises(hurray.InvalidDescriptorError):
            make()
    with pytest.raises(TypeError):
        hurray.PerChannelAffine.asymmetric(0, 1, None)
    with pytest.raises(TypeError):
        hurray.PerTensorAffine("0.5")
    with pytest.raises(TypeError):
        hurray.NF4(0, 64.0, 1)


def test_value_equality_and_hashing():
    for a in SCHEMES:
        for b in SCHEMES:
            assert (a == b) == (a is b)
    assert hurray.NF4(1, 64, 1) == hurray.NF4(1, 64, 1)
    assert hurray.NF4(1, 64, 1) != hurray.MXFP(1, 64, 1)
    assert hash(hurray.NF4(1, 64, 1)) == hash(hurray.NF4(1, 64, 1))
    assert len({hurray.MXFP(1, 32, 1), hurray.MXFP(1, 32, 1), hurray.MXFP(0, 32, 1)}) == 2
    with pytest.raises(TypeError):  # a float field: unhashable by design
        hash(hurray.PerTensorAffine(0.5, 0))
    assert hurray.PerTensorAffine.__hash__ is None
    assert hurray.PerTensorAffine(0.5, 1) == hurray.PerTensorAffine(0.5, 1)


def test_encode_and_decode_quantization():
    for q in SCHEMES:
        data = q.encode()
        assert isinstance(data, bytes) and data[0] == q.scheme_tag and data[1] == 1
        back = hurray.decode_quantization(data)
        assert type(back) is type(q) and back == q
        assert hurray.decode_quantization(bytearray(data)) == q
        assert pickle.loads(pickle.dumps(q)) == q
    # the per-channel-affine.md worked example
    example = bytes([0x02, 0x01, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])
    assert hurray.decode_quantization(example) == hurray.PerChannelAffine.asymmetric(0, 1, 2)
    assert hurray.PerChannelAffine.asymmetric(0, 1, 2).encode() == example


def test_decode_quantization_refusals():
    good = hurray.NF4(1, 64, 1).encode()
    cases = [
        b"",
        good[:15],                                  # truncated
        bytes([0x00]) + good[1:],                   # invalid scheme tag
        bytes([0x30]) + good[1:],                   # unassigned scheme tag
        good[:1] + bytes([2]) + good[2:],           # scheme_version 2
        good[:2] + bytes([1, 0]) + good[4:],        # reserved flag bit
        good[:8] + struct.pack("<I", 3) + good[12:],  # block size rule
    ]
    for data in cases:
        with pytest.raises(hurray.InvalidDescriptorError):
            hurray.decode_quantization(data)
    with pytest.raises(TypeError):
        hurray.decode_quantization("nf4")


def test_opaque_schemes_are_relayed():
    priv = bytes([0xF3, 0x01, 0x00, 0x00, 0xAA, 0xBB])
    q = hurray.decode_quantization(priv)
    assert type(q) is hurray.OpaqueQuantization
    assert (q.scheme, q.scheme_tag, q.payload, q.encode()) == ("private", 0xF3, priv, priv)
    unknown = bytes([0x30, 0x01, 0x00, 0x00])
    u = hurray.decode_quantization(unknown, permissive=True)
    assert type(u) is hurray.OpaqueQuantization and u.scheme == "unknown"
    assert hurray.OpaqueQuantization(priv) == q
    assert pickle.loads(pickle.dumps(q)) == q
    with pytest.raises(ValueError):
        hurray.OpaqueQuantization(hurray.NF4(1, 64, 1).encode())


# ---- attached to a tensor -----------------------------------------------------------------

def test_per_tensor_affine_stays_single_buffer():
    t = hurray.Tensor(bytes(8), hurray.int8, [2, 4], quantization=hurray.PerTensorAffine(0.02, 0))
    assert t.buffer_count == 1
    assert type(t.quantization) is hurray.PerTensorAffine


def test_parameter_buffers_are_required_and_placed():
    q = hurray.PerChannelAffine.symmetric(0, 1)
    t = hurray.Tensor(bytes(8), hurray.int8, [2, 4], aux_buffers=[f32(0.5, 0.25)], quantization=q)
    assert t.buffer_count == 2 and t.quantization == q
    with pytest.raises(hurray.InvalidDescriptorError):  # dangling index
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], quantization=q)
    with pytest.raises(hurray.BufferError, match="quantization scales"):  # one scale short
        hurray.Tensor(bytes(8), hurray.int8, [2, 4], aux_buffers=[f32(0.5)], quantization=q)
    with pytest.raises(hurray.InvalidDescriptorError):  # storage type the scheme refuses
        hurray.Tensor(bytes(32), hurray.float32, [2, 4], aux_buffers=[f32(0.5, 0.25)], quantization=q)
    with pytest.raises(hurray.InvalidDescriptorError):  # axis beyond the rank
        hurray.Tensor(bytes(8), hurray.int8, [8], aux_buffers=[f32(0.5, 0.25)],
                      quantization=hurray.PerChannelAffine.symmetric(1, 1))
    with pytest.raises(hurray.InvalidDescriptorError):  # zero point outside int8
        hurray.Tensor(bytes(8), hurray.int8, [8], quantization=hurray.PerTensorAffine(1.0, 200))


def test_a_non_scheme_object_is_a_type_error():
    for bad in ("per_channel", 2, object(), hurray.CsrLayout(1)):
        with pytest.raises(TypeError):
            hurray.Tensor(bytes(8), hurray.int8, [2, 4], quantization=bad)


def test_the_getter_returns_the_class_the_constructor_takes():
    for q, dtype, shape, aux in [
        (hurray.PerChannelAffine.asymmetric(0, 1, 2), hurray.int8, [2, 4], [f32(1, 2), bytes(8)]),
        (hurray.PerChannelAffine.asymmetric(0, 1, 1), hurray.uint8, [2, 4], [f32(1, 2) + bytes(8)]),
        (hurray.PerBlockAffine.symmetric(1, 2, 1, hurray.float16), hurray.dtype.int4, [2, 4],
         [bytes(8)]),
        (hurray.NF4(1, 8, 1), hurray.dtype.uint4, [2, 16], [f32(1, 1, 1, 1)]),
        (hurray.MXFP(1, 32, 1), hurray.dtype.float8_e4m3, [2, 32], [b"\x7f\x7f"]),
        (hurray.MXFP(0, 16, 1), hurray.dtype.float4_e2m1, [16, 3], [b"\x7f\x7f\x7f"]),
    ]:
        data = bytes(hurray.buffer_size_bytes(dtype, math.prod(shape)))
        t = hurray.Tensor(data, dtype, shape, aux_buffers=aux, quantization=q)
        got = t.quantization
        assert type(got) is type(q) and got == q
        assert t.descriptor.quantization == q
        assert hurray.Descriptor.decode(t.descriptor.encode()).quantization == q
        # the same buffers (alignment is measured where the bytes sit)
        again = hurray.Tensor(data, t.dtype, t.shape, aux_buffers=aux, layout=t.layout,
                              quantization=got, statistics=t.statistics, shard=t.shard)
        assert again.descriptor == t.descriptor


def test_per_block_padding_is_counted():
    q = hurray.PerBlockAffine.symmetric(1, 4, 1, hurray.float32)
    # shape [1, 6] with blocks of 4: two blocks, storage padded to 8 int8 elements
    hurray.Tensor(bytes(8), hurray.int8, [1, 6], aux_buffers=[f32(1, 1)], quantization=q)
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(bytes(6), hurray.int8, [1, 6], aux_buffers=[f32(1, 1)], quantization=q)


def test_quantized_tensors_are_not_numpy_or_dlpack_arrays():
    t = hurray.Tensor(bytes(8), hurray.int8, [8], quantization=hurray.PerTensorAffine(0.5))
    with pytest.raises(hurray.UnsupportedError, match="quantized"):
        t.__array__()
    with pytest.raises(BufferError, match="quantized"):
        t.__dlpack__()


def test_tier2_dtypes_author_and_read_back():
    for name in ("int4", "uint4", "int2", "uint2", "float8_e4m3", "float8_e5m2", "float6_e2m3",
                 "float6_e3m2", "float4_e2m1", "float8_e8m0"):
        dt = hurray.Dtype.from_name(name)
        n = hurray.buffer_size_bytes(dt, 10)
        t = hurray.Tensor(bytes(n), dt, [10])
        assert t.dtype is dt and t.buffer_handles[0].byte_size == n
        d = hurray.Descriptor.decode(t.descriptor.encode())
        assert d.dtype is dt
        with pytest.raises(hurray.BufferError):
            hurray.Tensor(bytes(n - 1), dt, [10])
        with pytest.raises(hurray.UnsupportedError):
            t.__array__()


# ---- statistics ---------------------------------------------------------------------------

def test_statistics_mask_follows_what_is_given():
    s = hurray.Statistics(nnz=1024)
    assert (s.nnz, s.computed_mask, s.sparsity_ratio, s.value_min) == (1024, 1, None, None)
    assert hurray.Statistics().computed_mask == 0
    full = hurray.Statistics(nnz=6, sparsity_ratio=0.25, value_min=-1.0, value_max=2.0,
                             value_abs_max=2.0, value_mean=0.5, value_stddev=1.0, nm_n=2, nm_m=4,
                             has_nan=False, has_inf=True)
    assert full.computed_mask == 0x3F
    assert (full.nm_n, full.nm_m, full.has_nan, full.has_inf) == (2, 4, False, True)
    assert (full.value_mean, full.value_stddev) == (0.5, 1.0)
    assert repr(hurray.Statistics(nnz=3, has_nan=True, has_inf=False)) == \
        "Statistics(nnz=3, has_nan=True, has_inf=False)"


def test_statistics_groups_share_a_bit():
    for kw in ({"value_min": -1.0}, {"value_min": 0.0, "value_max": 1.0}, {"value_mean": 0.0},
               {"nm_n": 2}, {"has_nan": True}, {"value_stddev": 1.0}, {"nm_m": 4}):
        with pytest.raises(hurray.InvalidDescriptorError):
            hurray.Statistics(**kw)
    with pytest.raises(TypeError):
        hurray.Statistics(6)  # keyword-only
    with pytest.raises(TypeError):
        hurray.Statistics(has_nan=1, has_inf=0)


def test_statistics_rules_of_the_format():
    for kw in ({"sparsity_ratio": 1.5}, {"sparsity_ratio": -0.1},
               {"value_mean": 0.0, "value_stddev": -1.0}, {"nm_n": 5, "nm_m": 4},
               {"nm_n": 256, "nm_m": 256}):
        with pytest.raises(hurray.InvalidDescriptorError) as ei:
            hurray.Statistics(**kw)
        assert ei.value.offset is None


def test_statistics_value_semantics_and_tensors():
    a = hurray.Statistics(value_min=math.nan, value_max=1.0, value_abs_max=1.0)
    assert a == hurray.Statistics(value_min=math.nan, value_max=1.0, value_abs_max=1.0)
    assert a != hurray.Statistics(value_min=0.0, value_max=1.0, value_abs_max=1.0)
    with pytest.raises(TypeError):
        hash(a)
    t = hurray.Tensor(bytes(24), hurray.float32, [2, 3], statistics=a)
    assert t.statistics == a and t.descriptor.statistics == a
    assert hurray.Descriptor.decode(t.descriptor.encode()).statistics == a
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(24), hurray.float32, [2, 3], statistics={"nnz": 1})
    with pytest.raises(hurray.InvalidDescriptorError):  # nnz disagrees with the sparse layout
        hurray.Tensor(bytes(4), hurray.float32, [3], aux_buffers=[bytes(8)],
                      layout=hurray.CooLayout(1), statistics=hurray.Statistics(nnz=2))
    ok = hurray.Tensor(bytes(4), hurray.float32, [3], aux_buffers=[bytes(8)],
                       layout=hurray.CooLayout(1), statistics=hurray.Statistics(nnz=1))
    assert ok.statistics.nnz == 1


# ---- shard ---------------------------------------------------------------------------------

def test_shard():
    s = hurray.Shard(parent_shape=[1024, 512], shard_offset=[512, 0])
    assert (s.parent_shape, s.shard_offset) == ((1024, 512), (512, 0))
    assert s == hurray.Shard([1024, 512], [512, 0]) and hash(s) == hash(hurray.Shard([1024, 512], [512, 0]))
    assert s != hurray.Shard([1024, 512], [0, 0])
    assert repr(s) == "Shard(parent_shape=(1024, 512), shard_offset=(512, 0))"
    for bad in (([8, 8], [0]), ([8, None], [0, 0]), ([8, 8], [9, 0]), ([8], [-1])):
        with pytest.raises(hurray.InvalidDescriptorError):
            hurray.Shard(*bad)


def test_shard_on_a_tensor():
    s = hurray.Shard([4, 3], [2, 0])
    t = hurray.Tensor(bytes(24), hurray.float32, [2, 3], shard=s)
    assert t.shard == s and t.descriptor.shard == s
    with pytest.raises(hurray.InvalidDescriptorError):  # the box leaves the parent
        hurray.Tensor(bytes(36), hurray.float32, [3, 3], shard=s)
    with pytest.raises(hurray.InvalidDescriptorError) as ei:  # rank mismatch
        hurray.Tensor(bytes(24), hurray.float32, [6], shard=s)
    assert ei.value.status == "ERR_INVALID_SHARD"
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(24), hurray.float32, [2, 3], shard=([4, 3], [2, 0]))


def test_descriptor_sections_are_none_when_absent():
    t = hurray.Tensor(bytes(16), hurray.float32, [4])
    d = t.descriptor
    assert t.quantization is t.statistics is t.shard is None
    assert d.quantization is d.statistics is d.shard is None
