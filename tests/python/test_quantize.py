"""hurray.quantize and Tensor.dequantize: the C kernels through the binding,
against the references users compare with (the gguf package's Q8_0, ml_dtypes'
small floats, the published NF4 levels), plus the display of quantized
tensors and the warning for unpacked sub-byte buffers."""

import struct
import warnings

import pytest

import hurray

np = pytest.importorskip("numpy")


def codes_u8(t):
    """The bytes of buffer 0 (the codes)."""
    return np.asarray(t.buffer(0)).copy()


def scales(t, dtype):
    return np.asarray(t.buffer(1)).view(dtype).copy()


def zero_points(t):
    return np.asarray(t.buffer(2)).view("<i4").copy()


def unpack4(b, n, signed):
    c = np.empty(b.size * 2, np.uint8)
    c[0::2], c[1::2] = b & 15, b >> 4
    c = c[:n]
    return c.astype(np.int8) - (c >= 8) * 16 if signed else c


def unpack6(b, n):
    g = b.reshape(-1, 3).astype(np.uint32)
    w = g[:, 0] | (g[:, 1] << 8) | (g[:, 2] << 16)
    return np.stack([(w >> (6 * j)) & 63 for j in range(4)], axis=1).reshape(-1)[:n].astype(np.uint8)


def rng(seed=0):
    return np.random.default_rng(seed)


# ---- ggml Q8_0, bit for bit ----------------------------------------------------------------

def q8_0_reference(x):
    gguf = pytest.importorskip("gguf")
    from gguf import GGMLQuantizationType as T
    blocks = gguf.quants.quantize(x, T.Q8_0).reshape(-1, 34)
    return blocks[:, :2].copy().view("<u2").reshape(-1), blocks[:, 2:].copy().view(np.int8).reshape(-1)


def q8_0_ours(x):
    t = hurray.quantize(x, "int8", block_size=32, scale_dtype="float16")
    assert isinstance(t.quantization, hurray.PerBlockAffine)
    assert t.quantization.zero_point_buffer_index is None
    return scales(t, "<u2"), codes_u8(t).view(np.int8), t


@pytest.mark.parametrize("seed", range(4))
def test_q8_0_codes_and_scales_equal_gguf(seed):
    g = rng(seed)
    x = (g.standard_normal((16, 256)) * g.choice([1e-3, 0.1, 1, 30, 2000], (16, 1))).astype(np.float32)
    d_ref, q_ref = q8_0_reference(x)
    d, q, t = q8_0_ours(x)
    np.testing.assert_array_equal(q, q_ref)
    np.testing.assert_array_equal(d, d_ref)
    # and gguf's own dequantizer agrees with ours
    gguf = pytest.importorskip("gguf")
    back = gguf.quants.dequantize(gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q8_0),
                                  gguf.GGMLQuantizationType.Q8_0)
    np.testing.assert_array_equal(np.asarray(t.dequantize()), back)


def test_q8_0_edge_data():
    x = np.zeros((6, 64), np.float32)
    x[0, :32] = 0.0                                    # an all-zero block
    x[0, 32:] = np.arange(32) - 16.0
    x[1, :] = np.tile([2.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 1.5], 8) / 3 * 2   # ties at k + 0.5
    x[2, :32] = np.linspace(-1, 1, 32)
    x[2, 32:] = -0.0
    x[3, :] = np.float32(1e-3) * np.sin(np.arange(64))      # float16 subnormal scales
    x[4, :] = 60000.0 * np.cos(np.arange(64))               # scales near float16's top
    x[5, :] = np.where(np.arange(64) % 2, 127.5, -127.5)    # 1/d exactly 1
    d_ref, q_ref = q8_0_reference(x)
    d, q, _ = q8_0_ours(x)
    np.testing.assert_array_equal(q, q_ref)
    zero_blocks = [0, 5]  # row 0 first half, row 2 second half (-0.0): every value zero
    for b in range(len(d)):
        if b in zero_blocks:
            # the format forbids a zero scale: 1.0 instead of gguf's 0, codes 0 either way
            assert d_ref[b] == 0 and d[b] == 0x3C00
        else:
            assert d[b] == d_ref[b], b
    assert (x[1] * (127 / 2)).tolist().count(63.5) > 0  # the ties are really there


def test_q8_0_below_float16_resolution_dequantizes_as_gguf():
    gguf = pytest.importorskip("gguf")
    x = (rng(3).standard_normal((2, 32)) * 1e-7).astype(np.float32)  # max|x| / 127 < 2**-25
    _, _, t = q8_0_ours(x)
    T = gguf.GGMLQuantizationType.Q8_0
    np.testing.assert_array_equal(np.asarray(t.dequantize()),
                                  gguf.quants.dequantize(gguf.quants.quantize(x, T), T))
    assert (codes_u8(t) == 0).all() and (scales(t, "<u2") == 0x3C00).all()


# ---- every element within half a step -------------------------------------------------------

AFFINE = ["int8", "uint8", "int4", "uint4", "int2", "uint2"]


def affine_params(t, x):
    """Per element: the scale and zero point that apply, from the buffers."""
    q = t.quantization
    if isinstance(q, hurray.PerTensorAffine):
        return np.full(x.shape, q.scale), np.full(x.shape, q.zero_point)
    if isinstance(q, hurray.PerChannelAffine):
        s = scales(t, "<f4")
        z = zero_points(t) if q.zero_point_buffer_index is not None else np.zeros_like(s, np.int32)
        shape = [1] * x.ndim
        shape[q.axis] = -1
        return np.broadcast_to(s.reshape(shape), x.shape), np.broadcast_to(z.reshape(shape), x.shape)
    stype = {"float16": "<f2", "bfloat16": None, "float32": "<f4"}[q.scale_type.name]
    raw = np.asarray(t.buffer(1))
    s = raw.view("<f4") if stype == "<f4" else raw.view("<f2").astype(np.float32) if stype else \
        (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
    z = zero_points(t) if q.zero_point_buffer_index is not None else np.zeros(s.size, np.int32)
    # block index of each element: moveaxis so the quantized axis is last
    xm = np.moveaxis(x, q.axis, -1)
    nb = -(-xm.shape[-1] // q.block_size)
    idx = (np.arange(int(np.prod(xm.shape[:-1]))).reshape(xm.shape[:-1])[..., None] * nb
           + np.arange(xm.shape[-1]) // q.block_size)
    return (np.moveaxis(s.astype(np.float64)[idx], -1, q.axis),
            np.moveaxis(z[idx], -1, q.axis))


@pytest.mark.parametrize("dtype", AFFINE)
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("kind", ["tensor", "channel0", "channel1", "block1", "block0", "block1-f16",
                                  "block1-bf16"])
def test_round_trip_within_half_a_step(dtype, symmetric, kind):
    x = rng(7).uniform(-3, 2, (6, 70)).astype(np.float32)
    if symmetric and dtype.startswith("u"):
        x = np.abs(x)
    kw = {}
    eps = 0.0
    if kind.startswith("channel"):
        kw["axis"] = int(kind[-1])
    elif kind.startswith("block"):
        kw.update(axis=int(kind[5]), block_size=4 if kind[5] == "0" else 32)
        if "-" in kind:
            kw["scale_dtype"] = {"f16": "float16", "bf16": "bfloat16"}[kind.split("-")[1]]
            eps = {"f16": 2.0**-11, "bf16": 2.0**-8}[kind.split("-")[1]]
    t = hurray.quantize(x, dtype, symmetric=symmetric, **kw)
    back = np.asarray(t.dequantize()).astype(np.float64)
    s, z = affine_params(t, x)
    # half a step of the float32 scale the codes were computed with, plus that
    # scale's rounding to its type times |q - z|
    levels = 2 ** hurray.dtype.__dict__[dtype].bit_width
    bound = s * (0.5 * (1 + eps) + 1e-5) + levels * s * eps + np.abs(x) * 1e-6
    err = np.abs(x - back)
    assert (err <= bound).all(), (err - bound).max()
    assert back.shape == x.shape


def test_partial_blocks_and_padding():
    x = rng(1).uniform(1, 5, (3, 70)).astype(np.float32)
    t = hurray.quantize(x, "uint4", block_size=32, symmetric=False)
    assert t.buffer_handles[0].byte_size == 3 * 96 // 2  # rows padded to 3 blocks
    b = codes_u8(t).reshape(3, 48)
    assert (b[:, 35:] == 0).all() and (b[:, :35] != 0).any()  # codes 70 .. 95: zero bytes
    assert scales(t, "<f4").size == 9 and zero_points(t).size == 9
    back = np.asarray(t.dequantize())
    assert back.shape == (3, 70)
    s, _ = affine_params(t, x)
    assert (np.abs(back - x) <= s * 0.50001).all()
    # along axis 0, partial last block of rows
    t0 = hurray.quantize(x.T.copy(), "int8", axis=0, block_size=32, scale_dtype="bfloat16")
    assert t0.buffer_handles[0].byte_size == 96 * 3
    np.testing.assert_allclose(np.asarray(t0.dequantize()), x.T, atol=0.03)


def test_exact_small_vectors():
    t = hurray.quantize(np.array([-1, 0, 1, 3], np.float32), "uint8", symmetric=False)
    q = t.quantization
    assert q.scale == np.float32(4 / 255) and q.zero_point == 64
    assert codes_u8(t).tolist() == [0, 64, 128, 255]
    t = hurray.quantize(np.array([7, -7, 3.5, 0, 1], np.float32).reshape(1, 5), "int4",
                        block_size=4)
    assert codes_u8(t).tolist() == [0x97, 0x04, 0x07, 0x00]  # 3.5 rounds away from zero


# ---- NF4 -----------------------------------------------------------------------------------

# The 16 NormalFloat4 levels published with QLoRA (Dettmers et al. 2023,
# Appendix E; bitsandbytes' NF4 table), as float32.
NF4_LEVELS = [
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
]


def test_nf4_table_is_the_published_one():
    levels = np.array(NF4_LEVELS, np.float32).reshape(1, 16)
    t = hurray.quantize(levels, "nf4", block_size=16)
    assert isinstance(t.quantization, hurray.NF4)
    assert unpack4(codes_u8(t), 16, False).tolist() == list(range(16))
    np.testing.assert_array_equal(np.asarray(t.dequantize()), levels)
    assert scales(t, "<f4").tolist() == [1.0]


def test_nf4_nearest_level_and_blocks():
    x = rng(2).standard_normal((4, 200)).astype(np.float32)
    x[3] = 0.0
    t = hurray.quantize(x, "nf4")  # block_size 64 by default: 4 blocks per row, the last partial
    q = t.quantization
    assert (q.axis, q.block_size, t.dtype) == (1, 64, hurray.dtype.uint4)
    s = scales(t, "<f4").reshape(4, 4)
    absmax = np.array([[np.abs(x[r, b * 64:(b + 1) * 64]).max() for b in range(4)] for r in range(4)])
    np.testing.assert_array_equal(s, absmax.astype(np.float32))
    codes = unpack4(codes_u8(t), 4 * 256, False).reshape(4, 256)[:, :200]
    table = np.array(NF4_LEVELS, np.float32)
    sb = np.repeat(s, 64, axis=1)[:, :200]
    v = np.divide(x, sb, out=np.zeros_like(x), where=sb > 0)
    nearest = np.abs(v[..., None] - table).argmin(-1)
    np.testing.assert_array_equal(codes, np.where(sb > 0, nearest, 7))
    np.testing.assert_array_equal(np.asarray(t.dequantize()), (sb * table[codes]).astype(np.float32))


# ---- MXFP against ml_dtypes ---------------------------------------------------------------------

MX = [("float8_e4m3", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2"),
      ("float6_e2m3", "float6_e2m3fn"), ("float6_e3m2", "float6_e3m2fn"),
      ("float4_e2m1", "float4_e2m1fn")]


@pytest.mark.parametrize("ours,theirs", MX)
def test_mxfp_elements_and_scales_agree_with_ml_dtypes(ours, theirs):
    ml = pytest.importorskip("ml_dtypes")
    mt = getattr(ml, theirs)
    x = (rng(5).standard_normal((4, 128)) * rng(6).choice([1e-30, 1e-3, 1, 700], (4, 1))).astype(np.float32)
    x[0, :32] = 0.0
    x[1, 5] = -0.0
    t = hurray.quantize(x, ours)
    q = t.quantization
    assert isinstance(q, hurray.MXFP) and (q.axis, q.block_size) == (1, 32)
    e8 = np.asarray(t.buffer(1)).copy()
    # the shared exponent: floor(log2(amax)) - emax, emax from ml_dtypes' own finfo
    fmax = float(ml.finfo(mt).max)
    emax = int(np.floor(np.log2(fmax)))
    amax = np.abs(x.reshape(-1, 32)).max(1)
    with np.errstate(divide="ignore"):
        want = np.where(amax > 0, np.floor(np.log2(amax.astype(np.float64))) - emax + 127, 127)
    np.testing.assert_array_equal(e8, np.clip(want, 1, 254))
    scale = e8.view(ml.float8_e8m0fnu).astype(np.float64)  # 2^(e - 127) by ml_dtypes
    np.testing.assert_array_equal(scale, 2.0 ** (e8.astype(np.float64) - 127))
    v = np.clip(x.reshape(-1, 32).astype(np.float64) / scale[:, None], -fmax, fmax)
    ref = v.astype(np.float32).astype(mt)  # float32 first: exact (a power-of-two scaling)
    bits = hurray.dtype.__dict__[ours].bit_width
    n = x.size
    b = codes_u8(t)
    got = b if bits == 8 else unpack4(b, n, False) if bits == 4 else unpack6(b, n)
    np.testing.assert_array_equal(got, ref.view(np.uint8).reshape(-1) & ((1 << bits) - 1))
    back = np.asarray(t.dequantize())
    np.testing.assert_array_equal(back.reshape(-1, 32),
                                  (ref.astype(np.float32) * scale[:, None].astype(np.float32)))


def test_mxfp_int_and_explicit_scheme():
    x = rng(9).uniform(-1, 1, (2, 64)).astype(np.float32)
    t = hurray.quantize(x, "int8", scheme="mxfp")
    e = np.asarray(t.buffer(1)).astype(int)
    amax = np.abs(x.reshape(-1, 32)).max(1)
    np.testing.assert_array_equal(e, np.floor(np.log2(amax)) - 6 + 127)
    s = 2.0 ** (e - 127)
    q = np.clip(np.round(x.reshape(-1, 32) / s[:, None]), -128, 127)  # ties to even
    np.testing.assert_array_equal(codes_u8(t).view(np.int8).reshape(-1, 32), q)
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.quantize(np.zeros((2, 40), np.float32), "float4_e2m1")  # no partial MX blocks
    assert ei.value.field == "block_size"


# ---- inputs ------------------------------------------------------------------------------------

def test_inputs_of_every_kind_give_the_same_tensor():
    x = rng(4).standard_normal((8, 64)).astype(np.float32)
    ref = codes_u8(hurray.quantize(x, "int4", block_size=32))
    for other in (x.astype(np.float64), hurray.from_numpy(x), x.tolist(), np.asfortranarray(x),
                  np.repeat(x, 2, axis=1)[:, ::2]):
        np.testing.assert_array_equal(codes_u8(hurray.quantize(other, "int4", block_size=32)), ref)
    h = x.astype(np.float16)
    np.testing.assert_array_equal(codes_u8(hurray.quantize(h, "int4", block_size=32)),
                                  codes_u8(hurray.quantize(h.astype(np.float32), "int4", block_size=32)))
    # an unaligned float32 buffer is read in place; big-endian goes through NumPy
    raw = np.zeros(x.size + 1, np.float32)
    un = raw[1:].reshape(x.shape)
    un[...] = x
    assert un.ctypes.data % 64 != 0
    np.testing.assert_array_equal(codes_u8(hurray.quantize(un, "int4", block_size=32)), ref)
    np.testing.assert_array_equal(codes_u8(hurray.quantize(x.astype(">f4"), "int4", block_size=32)),
                                  ref)


def test_bfloat16_inputs():
    ml = pytest.importorskip("ml_dtypes")
    x = rng(11).standard_normal((4, 64)).astype(ml.bfloat16)
    want = codes_u8(hurray.quantize(x.astype(np.float32), "int8", block_size=32))
    np.testing.assert_array_equal(codes_u8(hurray.quantize(x, "int8", block_size=32)), want)
    t = hurray.from_numpy(x)
    assert t.dtype is hurray.bfloat16
    np.testing.assert_array_equal(codes_u8(hurray.quantize(t, "int8", block_size=32)), want)


def test_torch_input():
    torch = pytest.importorskip("torch")
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(0))
    ref = codes_u8(hurray.quantize(x.numpy(), "int8", block_size=32, scale_dtype="float16"))
    np.testing.assert_array_equal(
        codes_u8(hurray.quantize(x, "int8", block_size=32, scale_dtype="float16")), ref)
    w = x.clone().requires_grad_(True)
    np.testing.assert_array_equal(
        codes_u8(hurray.quantize(w, "int8", block_size=32, scale_dtype="float16")), ref)
    for dt in (torch.bfloat16, torch.float16, torch.float64):
        xt = x.to(dt)
        got = codes_u8(hurray.quantize(xt, "int8", block_size=32, scale_dtype="float16"))
        want = codes_u8(hurray.quantize(xt.to(torch.float32).numpy(), "int8", block_size=32,
                                        scale_dtype="float16"))
        np.testing.assert_array_equal(got, want)
    back = hurray.quantize(x, "int8", axis=0).dequantize().to_torch()
    assert back.dtype == torch.float32 and back.shape == (8, 64)
    assert torch.allclose(back, x, atol=0.02)


# ---- dequantize ---------------------------------------------------------------------------------

@pytest.mark.parametrize("out", ["float32", "float64", "float16", "bfloat16"])
def test_dequantize_output_types(out):
    x = rng(8).standard_normal((5, 96)).astype(np.float32) * 100
    t = hurray.quantize(x, "int4", block_size=32, symmetric=False)
    f32 = np.asarray(t.dequantize())
    d = t.dequantize(out)
    assert d.dtype is hurray.dtype.__dict__[out] and d.shape == (5, 96) and d.quantization is None
    if out == "float32":
        np.testing.assert_array_equal(np.asarray(d), f32)
    elif out == "float64":
        np.testing.assert_array_equal(np.asarray(d), f32.astype(np.float64))
    elif out == "float16":
        np.testing.assert_array_equal(np.asarray(d), f32.astype(np.float16))
    else:
        ml = pytest.importorskip("ml_dtypes")
        np.testing.assert_array_equal(np.asarray(d).view(np.uint16),
                                      f32.astype(ml.bfloat16).view(np.uint16))
    assert t.dequantize(hurray.float32).dtype is hurray.float32


def test_dequantize_sizes_its_result_as_the_creation_functions_do():
    """The result's size and its limit are libhurray's (hurray_dense_buffer_size): a
    dynamic dimension is a ValueError naming it, before anything is allocated."""
    q = hurray.quantize(np.ones((4, 4), np.float32), "int8")
    t = hurray.Tensor(np.asarray(q.buffer(0)).tobytes(), q.dtype, [None, 4],
                      quantization=q.quantization)
    with pytest.raises(ValueError, match=r"dequantize: shape\[0\]: is dynamic") as ei:
        t.dequantize()
    assert ei.value.field == "shape[0]"


def test_dequantize_every_scheme_of_caller_buffers():
    # a tensor built from caller buffers (column-major, per-channel asymmetric)
    codes = np.array([[0, 10], [20, 30], [40, 250]], np.uint8)
    t = hurray.Tensor(np.asfortranarray(codes).T.copy(), "uint8", (3, 2),
                      aux_buffers=[np.array([0.5, 2.0], "<f4"), np.array([10, 0], "<i4")],
                      layout=hurray.ColMajorLayout(),
                      quantization=hurray.PerChannelAffine.asymmetric(1, 1, 2))
    np.testing.assert_array_equal(np.asarray(t.dequantize()),
                                  (codes.astype(np.float32) - [10, 0]) * [0.5, 2.0])
    with pytest.raises(ValueError) as ei:
        hurray.ones([2, 2], dtype=hurray.float32).dequantize()
    assert ei.value.field == "quantization"
    with pytest.raises(ValueError) as ei:
        t.dequantize("int8")
    assert ei.value.field == "dtype"


def test_save_load_dequantize(tmp_path):
    x = rng(10).standard_normal((16, 64)).astype(np.float32)
    t = hurray.quantize(x, "int4", block_size=32, scale_dtype="float16")
    path = tmp_path / "q.hrry"
    hurray.save(path, {"w": t})
    back = hurray.load(path)["w"]
    assert back.quantization == t.quantization and back.dtype is hurray.dtype.int4
    np.testing.assert_array_equal(np.asarray(back.dequantize()), np.asarray(t.dequantize()))
    with hurray.open(path) as f:
        np.testing.assert_array_equal(np.asarray(f["w"].dequantize()), np.asarray(t.dequantize()))


# ---- errors name the argument -------------------------------------------------------------------

@pytest.mark.parametrize("kw,exc,field", [
    (dict(dtype="int8", block_size=3), hurray.InvalidDescriptorError, "block_size"),
    (dict(dtype="int8", block_size=128), hurray.InvalidDescriptorError, "block_size"),
    (dict(dtype="int8", axis=2), ValueError, None),
    (dict(dtype="float32"), hurray.InvalidDescriptorError, "dtype"),
    (dict(dtype="nf4", scheme="per_block"), ValueError, "dtype"),
    (dict(dtype="int4", scheme="nf4"), hurray.InvalidDescriptorError, "dtype"),
    (dict(dtype="int8", axis=0, scale_dtype="float16"), ValueError, "scale_dtype"),
    (dict(dtype="int8", block_size=32, scale_dtype="int8"), ValueError, "scale_dtype"),
    (dict(dtype="nf4", symmetric=False), ValueError, "symmetric"),
    (dict(dtype="int8", axis=0, block_size=32, scheme="per_channel"), ValueError, "block_size"),
    (dict(dtype="int8", scheme="per_channel"), ValueError, "axis"),
    (dict(dtype="int8", axis=1, scheme="per_tensor"), ValueError, "axis"),
])
def test_errors_name_the_argument(kw, exc, field):
    x = np.ones((4, 64), np.float32)
    with pytest.raises(exc) as ei:
        hurray.quantize(x, **kw)
    name = field or "axis"
    assert name in str(ei.value)
    if field is not None:
        assert ei.value.field == field


def test_refused_values_name_the_element():
    x = np.ones((4, 64), np.float32)
    for bad in (np.nan, np.inf, -np.inf):
        x[2, 9] = bad
        for kw in (dict(dtype="int8"), dict(dtype="int4", block_size=32), dict(dtype="nf4"),
                   dict(dtype="float8_e5m2"), dict(dtype="int8", axis=0, block_size=2)):
            with pytest.raises(ValueError) as ei:
                hurray.quantize(x, **kw)
            assert ei.value.field == "x[2, 9]", kw
    x[2, 9] = -0.5
    with pytest.raises(ValueError, match="negative") as ei:
        hurray.quantize(x, "uint8", block_size=32)
    assert ei.value.field == "x[2, 9]"
    hurray.quantize(x, "uint8", block_size=32, symmetric=False)
    with pytest.raises(ValueError) as ei:  # float16 scale beyond 65504
        hurray.quantize(np.full((1, 32), 1e7, np.float32), "int8", block_size=32,
                        scale_dtype="float16")
    assert "float16" in str(ei.value)
    with pytest.raises(TypeError, match="int64"):
        hurray.quantize([1, 2, 3], "int8")
    with pytest.raises(ValueError, match="scheme"):
        hurray.quantize(x, "int8", scheme="per_row")
    with pytest.raises(TypeError):
        hurray.quantize(x, "int8", symmetric=1)


def test_scalar_and_empty():
    t = hurray.quantize(np.float32(-2.5), "int4")
    assert t.shape == () and t.quantization.scale == np.float32(2.5 / 7)
    assert float(np.asarray(t.dequantize())) == -2.5
    e = hurray.quantize(np.zeros((0, 3), np.float32), "int8", axis=1)
    assert e.shape == (0, 3) and scales(e, "<f4").tolist() == [1.0, 1.0, 1.0]
    assert np.asarray(e.dequantize()).shape == (0, 3)


# ---- display ------------------------------------------------------------------------------------

CPU = "device=hurray.Device(kind='cpu', device_id=0, memory_class='standard')"


def test_repr_shows_the_scheme():
    x = np.ones((4, 64), np.float32)
    cases = [
        (hurray.quantize(x, "int4", block_size=32, scale_dtype="float16"),
         "quant=per_block(int4, axis=1, block=32, scale=float16)"),
        (hurray.quantize(x, "uint4", block_size=32, symmetric=False),
         "quant=per_block(uint4, axis=1, block=32, scale=float32, asymmetric)"),
        (hurray.quantize(x, "int8", axis=0), "quant=per_channel(int8, axis=0)"),
        (hurray.quantize(x * 0.1, "int8"), "quant=per_tensor(int8, scale=0.0007874016, zero_point=0)"),
        (hurray.quantize(x, "nf4"), "quant=nf4(uint4, axis=1, block=64)"),
        (hurray.quantize(x, "float4_e2m1"), "quant=mxfp(float4_e2m1, axis=1, block=32)"),
    ]
    for t, text in cases:
        r = repr(t)
        assert r == f"hurray.Tensor(shape=(4, 64), dtype={t.dtype}, {text}, {CPU})", r
        assert str(t) == r
    # the per-tensor scale is the shortest text of its float32
    q = cases[3][0].quantization
    assert struct.unpack("f", struct.pack("f", 0.0007874016))[0] == q.scale


def test_repr_shows_layout_and_sync_mode():
    t = hurray.from_numpy(np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert repr(t).endswith(", dtype=float32, layout='col_major')")
    assert "layout" not in str(t)  # str is the bare array text
    cuda = hurray.Device("cuda", 0)
    e = hurray.Tensor(bytearray(16), "float32", (4,), device=cuda)
    wire = bytearray(e.descriptor.encode())
    h = e.buffer_handles[0]
    at = bytes(wire).index(struct.pack("<QIBBBB", 16, h.alignment, cuda.tag, 0, 0, 0))
    wire[at + 13] = 0x01  # sync_mode = event
    ev = hurray._hurray._tensor_from_descriptor(hurray.Descriptor.decode(bytes(wire)),
                                                [bytearray(16)])
    assert "sync_mode='event'" in repr(ev) and "sync_mode='event'" in str(ev)
    assert "sync_mode" not in repr(e)


# ---- the unpacked-buffer warning ----------------------------------------------------------------

@pytest.mark.parametrize("dtype,n,packed", [("int4", 64, 32), ("uint4", 63, 32), ("int2", 16, 4),
                                            ("uint2", 12, 3), ("float4_e2m1", 10, 5)])
def test_unpacked_sub_byte_buffer_warns(dtype, n, packed):
    with pytest.warns(UserWarning, match=f"buffer 0 holds {n} bytes.*pack into {packed} bytes"):
        t = hurray.Tensor(np.zeros(n, np.uint8), dtype, (n,))
    assert t.buffer_handles[0].byte_size == n  # legal: used as given
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hurray.Tensor(np.zeros(packed, np.uint8), dtype, (n,))    # packed: no warning
        hurray.Tensor(np.zeros(n + 1, np.uint8), dtype, (n,))     # not exactly one per element
        hurray.Tensor(np.zeros(1, np.uint8), dtype, (1,))         # packed size is not smaller
        hurray.quantize(np.ones((2, 64), np.float32), "int4", block_size=32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            hurray.Tensor(np.zeros(n, np.uint8), dtype, (n,))


def test_unpacked_quantized_buffer_warns_with_padded_count():
    # per-block int4 [2, 40] with blocks of 32 stores 2 x 64 codes: 64 bytes packed
    q = hurray.PerBlockAffine.symmetric(1, 32, 1, "float32")
    with pytest.warns(UserWarning, match="128 bytes.*pack into 64 bytes"):
        hurray.Tensor(np.zeros(128, np.uint8), "int4", (2, 40), aux_buffers=[np.ones(4, "<f4")],
                      quantization=q)
