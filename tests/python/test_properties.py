"""Property tests (hypothesis): random valid layouts, quantizations, sections
and composites survive construct -> descriptor encode -> decode -> rebuild
with equality; random corruptions of encoded descriptors raise the
documented exceptions and never crash."""

import math

import pytest

import hurray

np = pytest.importorskip("numpy")
hyp = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")
from hypothesis import HealthCheck, given, settings  # noqa: E402

# Random buffers may hold exactly one byte per sub-byte element: legal, and what
# the unpacked-buffer warning is about (tests/python/test_quantize.py tests it).
pytestmark = pytest.mark.filterwarnings("ignore:Tensor. buffer 0 holds:UserWarning")

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DENSE_TYPES = ["float32", "float64", "int8", "uint8", "int16", "float16", "bfloat16", "int4",
               "uint2", "float8_e4m3", "float6_e2m3", "float4_e2m1", "bool", "complex64"]


def nbytes(dtype, count):
    return hurray.buffer_size_bytes(dtype, count)


def buf(n, seed=0):
    """n bytes of deterministic content in 64-byte-aligned memory."""
    a = np.empty(n + 64, dtype=np.uint8)
    start = (-a.ctypes.data) % 64
    out = a[start:start + n]
    out[:] = (np.arange(n) * 31 + seed) % 251
    return out


# ---- one random valid tensor ----------------------------------------------------------

@st.composite
def dense_case(draw):
    kind = draw(st.sampled_from(["row", "col", "strided", "tiled", "morton", "hilbert"]))
    dtype = draw(st.sampled_from(DENSE_TYPES))
    byte_offset = 0
    if kind == "row":
        shape = draw(st.lists(st.integers(0, 5), max_size=3))
        layout, count = hurray.RowMajorLayout(), math.prod(shape)
    elif kind == "col":
        shape = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3))
        layout, count = hurray.ColMajorLayout(), math.prod(shape)
    elif kind == "strided":
        shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
        strides = draw(st.lists(st.integers(-5, 5), min_size=len(shape), max_size=len(shape)))
        if hurray.Dtype.from_name(dtype).itemsize is None:
            dtype = "int16"  # sub-byte strided elements need byte-aligned offsets
        lo = sum(min(0, s * (d - 1)) for s, d in zip(strides, shape))
        hi = sum(max(0, s * (d - 1)) for s, d in zip(strides, shape))
        layout, count = hurray.StridedLayout(strides), hi - lo + 1
        byte_offset = -lo * hurray.Dtype.from_name(dtype).itemsize
    elif kind == "tiled":
        rank = draw(st.integers(1, 3))
        tile = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
        shape = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
        outer = draw(st.sampled_from(["row_major", "col_major"]))
        inner = draw(st.sampled_from(["row_major", "col_major"]))
        layout = hurray.TiledLayout(tile, outer_layout=outer, inner_layout=inner)
        count = math.prod(-(-d // t) * t for d, t in zip(shape, tile))
    elif kind == "morton":
        bits = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
        shape = [draw(st.integers(1, 2 ** b)) for b in bits]
        layout, count = hurray.MortonLayout(bits), 2 ** sum(bits)
    else:
        order, rank = draw(st.integers(1, 2)), draw(st.integers(2, 3))
        shape = [2 ** order] * rank
        layout, count = hurray.HilbertLayout(order, rank), 2 ** (order * rank)
    data = buf(nbytes(dtype, count) + byte_offset + draw(st.integers(0, 8)), draw(st.integers(0, 9)))
    return dict(buffers=[data], dtype=dtype, shape=shape, layout=layout, byte_offset=byte_offset)


def unique_coords(draw, shape, nnz_max=6):
    cells = math.prod(shape)
    picks = draw(st.lists(st.integers(0, cells - 1), unique=True, max_size=min(nnz_max, cells)))
    return [list(np.unravel_index(p, shape)) for p in picks]


@st.composite
def sparse_case(draw):
    kind = draw(st.sampled_from(["coo", "csr", "csc", "csf"]))
    dtype = draw(st.sampled_from(["float32", "float64", "int8", "int4", "bool"]))
    if kind == "coo":
        shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
        coords = unique_coords(draw, shape)
        if draw(st.booleans()):
            coords.sort()
            layout = hurray.CooLayout(len(coords), is_sorted=True)
        else:
            layout = hurray.CooLayout(len(coords))
        idx = np.array(coords, dtype=np.uint64).reshape(len(coords), len(shape))
        aux = [buf(idx.nbytes) if False else np.ascontiguousarray(idx)]
        nnz = len(coords)
    elif kind in ("csr", "csc"):
        shape = draw(st.lists(st.integers(1, 4), min_size=2, max_size=2))
        coords = unique_coords(draw, shape)
        major = 0 if kind == "csr" else 1
        coords.sort(key=lambda c: (c[major], c[1 - major]))
        nnz = len(coords)
        minor = np.array([c[1 - major] for c in coords], dtype=np.uint64)
        ptr = np.zeros(shape[major] + 1, dtype=np.uint64)
        for c in coords:
            ptr[c[major] + 1] += 1
        ptr = np.cumsum(ptr).astype(np.uint64)
        aux = [minor, ptr]
        layout = hurray.CsrLayout(nnz) if kind == "csr" else hurray.CscLayout(nnz)
    else:
        shape = draw(st.lists(st.integers(1, 3), min_size=3, max_size=4))
        order = draw(st.permutations(range(len(shape))))
        coords = unique_coords(draw, shape)
        perm = sorted(tuple(c[m] for m in order) for c in coords)  # coordinates in mode order
        nnz = len(perm)
        aux = []
        prefixes = [()]  # nodes of the previous level
        for level in range(len(shape)):
            pos, crd, nodes = [0], [], []
            for p in prefixes:
                kids = sorted({c[level] for c in perm if c[:level] == p})
                crd.extend(kids)
                nodes.extend(p + (k,) for k in kids)
                pos.append(len(crd))
            if level == 0 and not perm:
                pos = [0, 0]
            aux += [np.array(pos, dtype=np.uint64), np.array(crd, dtype=np.uint64)]
            prefixes = nodes
        layout = hurray.CsfLayout(nnz, list(order))
    values = buf(nbytes(dtype, nnz), draw(st.integers(0, 9)))
    return dict(buffers=[values] + aux, dtype=dtype, shape=shape, layout=layout, byte_offset=0)


@st.composite
def paged_case(draw):
    page, pages, seqs = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(0, 3))
    heads, dim = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    wide = draw(st.booleans())
    it = np.uint64 if wide else np.uint32
    lengths = [draw(st.integers(0, 3)) for _ in range(seqs)]
    seq_ptr = np.array([0] + list(np.cumsum(lengths)), dtype=it)
    table = np.array([draw(st.integers(0, pages - 1)) for _ in range(sum(lengths))], dtype=it)
    layout = hurray.BlockPagedLayout(page, pages, 0, seqs, kv_role=draw(st.sampled_from(
        ["key", "value", "fused"])), layer_index=draw(st.none() | st.integers(0, 40)),
        block_table_index_type="uint64" if wide else "uint32")
    pool = buf(4 * pages * page * heads * dim)
    return dict(buffers=[pool, table, seq_ptr], dtype="float32",
                shape=[draw(st.integers(0, 8)), heads, dim], layout=layout, byte_offset=0)


@st.composite
def quantized_case(draw):
    scheme = draw(st.sampled_from(["tensor", "channel", "block", "nf4", "mxfp"]))
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 1))
    aux = []
    if scheme == "tensor":
        dtype = draw(st.sampled_from(["int8", "uint8", "int4", "int32"]))
        q = hurray.PerTensorAffine(draw(st.floats(0.001, 100)), draw(st.integers(0, 1)))
        count = math.prod(shape)
    elif scheme == "channel":
        dtype = draw(st.sampled_from(["int8", "uint4"]))
        sym = draw(st.booleans())
        q = hurray.PerChannelAffine(axis, 1, None if sym else 2)
        aux = [buf(4 * shape[axis])] + ([] if sym else [buf(4 * shape[axis])])
        count = math.prod(shape)
    elif scheme == "block":
        dtype = draw(st.sampled_from(["int8", "int4", "uint2"]))
        k = draw(st.sampled_from([2, 4]))
        shape[axis] = max(shape[axis], k)
        st_name = draw(st.sampled_from(["float16", "bfloat16", "float32"]))
        q = hurray.PerBlockAffine(axis, k, 1, scale_type=st_name)
        blocks = -(-shape[axis] // k) * math.prod(shape) // shape[axis]
        aux = [buf(blocks * hurray.Dtype.from_name(st_name).itemsize)]
        count = math.prod(shape) // shape[axis] * (-(-shape[axis] // k) * k)
    elif scheme == "nf4":
        dtype, k = "uint4", 8
        shape[axis] = draw(st.integers(8, 20))
        q = hurray.NF4(axis, k, 1)
        blocks = -(-shape[axis] // k) * math.prod(shape) // shape[axis]
        aux = [buf(4 * blocks)]
        count = math.prod(shape) // shape[axis] * (-(-shape[axis] // k) * k)
    else:
        dtype, k = draw(st.sampled_from(["float8_e4m3", "float4_e2m1", "int8"])), 16
        shape[axis] = 16 * draw(st.integers(1, 2))
        q = hurray.MXFP(axis, k, 1)
        aux = [buf(math.prod(shape) // k)]
        count = math.prod(shape)
    data = buf(nbytes(dtype, count))
    return dict(buffers=[data] + aux, dtype=dtype, shape=shape, layout=hurray.RowMajorLayout(),
                byte_offset=0, quantization=q)


@st.composite
def sections(draw, shape):
    out = {}
    if draw(st.booleans()):
        kw = {}
        finite = st.floats(-1e6, 1e6, allow_nan=False)
        if draw(st.booleans()):
            kw["sparsity_ratio"] = draw(st.floats(0, 1))
        if draw(st.booleans()):
            lo, hi = sorted([draw(finite), draw(finite)])
            kw.update(value_min=lo, value_max=hi, value_abs_max=max(abs(lo), abs(hi)))
        if draw(st.booleans()):
            kw.update(value_mean=draw(finite), value_stddev=draw(st.floats(0, 1e6)))
        if draw(st.booleans()):
            m = draw(st.integers(1, 8))
            kw.update(nm_n=draw(st.integers(0, m)), nm_m=m)
        if draw(st.booleans()):
            kw.update(has_nan=draw(st.booleans()), has_inf=draw(st.booleans()))
        out["statistics"] = hurray.Statistics(**kw)
    if shape and draw(st.booleans()):
        extra = [draw(st.integers(0, 3)) for _ in shape]
        offset = [draw(st.integers(0, e)) for e in extra]
        out["shard"] = hurray.Shard([d + e for d, e in zip(shape, extra)], offset)
    return out


def build(case, **extra):
    kw = dict(aux_buffers=case["buffers"][1:], layout=case["layout"],
              byte_offset=case["byte_offset"], quantization=case.get("quantization"))
    kw.update(extra)
    return hurray.Tensor(case["buffers"][0], case["dtype"], case["shape"], **kw)


def check_round_trip(t, buffers):
    d = t.descriptor
    wire = d.encode()
    assert len(wire) == d.encoded_len
    back = hurray.Descriptor.decode(wire + b"\x00trailing")
    assert back == d and back.encode() == wire
    assert back.layout == t.layout and type(back.layout) is type(t.layout)
    assert back.quantization == t.quantization
    assert back.statistics == t.statistics and back.shard == t.shard
    rebuilt = hurray.Tensor(buffers[0], back.dtype, back.shape, aux_buffers=buffers[1:],
                            layout=back.layout, quantization=back.quantization,
                            statistics=back.statistics, shard=back.shard,
                            byte_offset=back.byte_offset)
    assert rebuilt.descriptor == d
    # the tensor's own getters rebuild it too
    again = hurray.Tensor(buffers[0], t.dtype, t.shape, aux_buffers=buffers[1:], layout=t.layout,
                          quantization=t.quantization, statistics=t.statistics, shard=t.shard,
                          byte_offset=t.byte_offset)
    assert again.descriptor == d
    return wire


@SETTINGS
@given(st.one_of(dense_case(), sparse_case(), paged_case(), quantized_case()), st.data())
def test_valid_tensors_round_trip(case, data):
    extra = data.draw(sections(case["shape"]))
    if case["layout"].name in ("csf", "block_paged"):
        extra.pop("shard", None)  # shards are forbidden there
    if case["layout"].name in ("coo", "csr", "csc", "csf") and "statistics" in extra:
        s = extra["statistics"]
        if s.nnz is not None and s.nnz != case["layout"].nnz:
            extra.pop("statistics")
    t = build(case, **extra)
    check_round_trip(t, case["buffers"])


@SETTINGS
@given(st.one_of(dense_case(), sparse_case(), paged_case()))
def test_layout_round_trips_through_validate_against_shape(case):
    case["layout"].validate_against_shape(case["shape"])
    dyn = list(case["shape"])
    if dyn:
        dyn[0] = None
        case["layout"].validate_against_shape(dyn)


@SETTINGS
@given(st.binary(min_size=4, max_size=40), st.data())
def test_private_layouts_relay(data_bytes, data):
    tag = data.draw(st.integers(0xF0, 0xFE))
    layout = hurray.PrivateExtensionLayout(tag, data.draw(st.integers(0, 2**64 - 1)), data_bytes)
    n = data.draw(st.integers(1, 4))
    buffers = [buf(data.draw(st.integers(0, 40))) for _ in range(n)]
    t = hurray.Tensor(buffers[0], "float32", [data.draw(st.integers(0, 9))], aux_buffers=buffers[1:],
                      layout=layout)
    back = hurray.Descriptor.decode(t.descriptor.encode(), permissive=True)
    assert back == t.descriptor and back.layout == layout


# ---- quantization sections on their own ---------------------------------------------------

schemes = st.one_of(
    st.builds(hurray.PerTensorAffine, st.floats(1e-30, 1e30) | st.floats(-1e30, -1e-30),
              st.integers(-2**31, 2**31 - 1)),
    st.builds(hurray.PerChannelAffine, st.integers(0, 63), st.integers(1, 254),
              st.none() | st.integers(1, 254)),
    st.builds(hurray.PerBlockAffine, st.integers(0, 63), st.sampled_from([2 ** i for i in range(1, 31)]),
              st.integers(1, 254), st.none() | st.integers(1, 254),
              st.sampled_from(["float16", "bfloat16", "float32"])),
    st.builds(hurray.NF4, st.integers(0, 63), st.sampled_from([2 ** i for i in range(3, 31)]),
              st.integers(1, 254)),
    st.builds(hurray.MXFP, st.integers(0, 63), st.sampled_from([2 ** i for i in range(4, 12)]),
              st.integers(1, 254)),
)


@SETTINGS
@given(schemes)
def test_schemes_round_trip_standalone(q):
    data = q.encode()
    back = hurray.decode_quantization(data)
    assert type(back) is type(q) and back == q and back.encode() == data


@SETTINGS
@given(schemes, st.binary(max_size=4), st.integers(0, 30), st.integers(0, 255))
def test_corrupt_quantization_sections_are_refused_cleanly(q, tail, pos, value):
    data = bytearray(q.encode())
    data[pos % len(data)] = value
    blob = bytes(data[: pos % (len(data) + 1)]) if value % 3 == 0 else bytes(data) + tail
    try:
        got = hurray.decode_quantization(blob)
    except hurray.InvalidDescriptorError:
        return
    assert got.encode() == blob


# ---- corrupted descriptors ---------------------------------------------------------------

@SETTINGS
@given(st.one_of(dense_case(), sparse_case(), paged_case(), quantized_case()), st.data())
def test_corrupted_descriptors_raise_the_documented_exceptions(case, data):
    t = build(case, **data.draw(sections(case["shape"])) if case["layout"].name not in
              ("csf", "block_paged", "coo", "csr", "csc") else {})
    wire = bytearray(t.descriptor.encode())
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "set", "truncate", "insert", "delete"]))
        if not wire:
            break
        i = data.draw(st.integers(0, len(wire) - 1))
        if action == "flip":
            wire[i] ^= 1 << data.draw(st.integers(0, 7))
        elif action == "set":
            wire[i] = data.draw(st.integers(0, 255))
        elif action == "truncate":
            del wire[i:]
        elif action == "insert":
            wire[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        else:
            del wire[i]
    for permissive in (False, True):
        try:
            d = hurray.Descriptor.decode(bytes(wire), permissive=permissive)
        except (hurray.InvalidDescriptorError, hurray.BufferError) as e:
            assert e.status is not None and e.status.startswith("ERR_")
            continue
        # whatever decodes must be fully readable and re-encode to its own bytes
        enc = d.encode()
        assert bytes(wire[:len(enc)]) == enc or permissive
        for attr in ("layout", "quantization", "statistics", "shard", "buffer_handles", "shape",
                     "dtype", "device", "size"):
            getattr(d, attr)
        repr(d.layout)
        assert hurray.Descriptor.decode(enc, permissive=permissive) == d


# ---- composites --------------------------------------------------------------------------

@st.composite
def composite_case(draw, depth=0):
    rule = draw(st.sampled_from(["partition", "overlay", "group"]))
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    head = [rows, cols]

    def member(shape, offset, fill):
        data = buf(4 * shape[0] * shape[1], fill)
        return hurray.Tensor(data, hurray.float32, shape, shard=hurray.Shard(head, offset)), data

    members = []
    if rule == "partition":
        cuts = sorted(draw(st.lists(st.integers(1, rows - 1), unique=True, max_size=3))) if rows > 1 else []
        edges = [0] + cuts + [rows]
        for a, b in zip(edges, edges[1:]):
            members.append(member([b - a, cols], [a, 0], a)[0])
        op = None
    elif rule == "overlay":
        members.append(member(head, [0, 0], 1)[0])
        for k in range(draw(st.integers(0, 3))):
            r0 = draw(st.integers(0, rows - 1))
            c0 = draw(st.integers(0, cols - 1))
            members.append(member([draw(st.integers(1, rows - r0)), draw(st.integers(1, cols - c0))],
                                  [r0, c0], k + 2)[0])
        op = draw(st.sampled_from(["replace", "add"]))
    else:
        for k in range(draw(st.integers(0, 3))):
            if depth < 2 and draw(st.booleans()):
                members.append(draw(composite_case(depth + 1)))
            else:
                members.append(hurray.Tensor(buf(4 * k), hurray.float32, [k]))
        op = None
        head = draw(st.lists(st.integers(0, 3), max_size=2))
    return hurray.Composite(rule, head, hurray.float32, members, combine_op=op)


def relay(c):
    """Rebuild a composite from what a reader has: heads, presented descriptors, bytes."""
    members = []
    for m, d in zip(c.members, c.member_descriptors):
        if isinstance(m, hurray.Composite):
            members.append(relay(m))
        else:
            members.append(hurray._hurray._tensor_from_descriptor(
                d, [np.asarray(m.buffer(i)).copy() for i in range(m.buffer_count)]))
    head = hurray.Descriptor.decode(c.descriptor.encode())
    return hurray.Composite(head.layout.composition_rule, head.shape, head.dtype, members,
                            combine_op=head.layout.combine_op)


@SETTINGS
@given(composite_case())
def test_composites_round_trip(c):
    assert c == c
    back = relay(c)
    assert back == c
    assert back.member_roles == c.member_roles
    assert hurray.Descriptor.decode(c.descriptor.encode()) == c.descriptor
    for d in c.member_descriptors:
        assert hurray.Descriptor.decode(d.encode()) == d
    repr(c)


@SETTINGS
@given(composite_case(), st.data())
def test_corrupted_composite_descriptors_are_refused_cleanly(c, data):
    blobs = [c.descriptor.encode()] + [d.encode() for d in c.member_descriptors]
    wire = bytearray(data.draw(st.sampled_from(blobs)))
    i = data.draw(st.integers(0, len(wire) - 1))
    wire[i] = data.draw(st.integers(0, 255))
    try:
        d = hurray.Descriptor.decode(bytes(wire))
    except (hurray.InvalidDescriptorError, hurray.BufferError):
        return
    assert d.encode() == bytes(wire[:d.encoded_len])
    d.layout, d.shard, d.quantization, d.statistics
