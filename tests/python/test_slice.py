"""File.get_slice: partial reads of one tensor, as safetensors' get_slice.

Every dense layout is built here from a logical NumPy array by placing each
element at the offset its layout's formula gives (computed in Python, apart
from the C library), for whole-byte and sub-byte types; each selection is
compared with NumPy's slicing of the logical array, on mapped and read-mode
files. Then the safetensors-style sharded loading recipe (checked against
safetensors itself), what is read from the disk, and the errors.
"""

import ctypes
import mmap as mmap_module
import os
import threading

import pytest

import hurray

np = pytest.importorskip("numpy")


# ---- layouts, computed in Python ---------------------------------------------------------

def offsets_row(shape):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)


def offsets_col(shape):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape[::-1]).T


def offsets_strided(shape, strides):
    idx = np.indices(shape, dtype=np.int64)
    return sum(idx[k] * strides[k] for k in range(len(shape)))


def offsets_tiled(shape, tile):
    idx = np.indices(shape, dtype=np.int64)
    grid = [-(-d // t) for d, t in zip(shape, tile)]
    tnum = np.zeros(shape, np.int64)
    inner = np.zeros(shape, np.int64)
    for k in range(len(shape)):
        tnum = tnum * grid[k] + idx[k] // tile[k]
        inner = inner * tile[k] + idx[k] % tile[k]
    return tnum * int(np.prod(tile)) + inner


def offsets_morton(shape, bits):
    idx = np.indices(shape, dtype=np.int64)
    code = np.zeros(shape, np.int64)
    r = len(shape)
    for d in range(r):
        for b in range(bits[d]):
            code |= ((idx[d] >> b) & 1) << (b * r + d)
    return code


def hilbert_index(coords, order):
    """Skilling's CoordsToHilbert (hilbert.md), for one point."""
    x = list(coords)
    n = len(x)
    m = 1 << (order - 1)
    q = m
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = m
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    x = [v ^ t for v in x]
    h = 0
    for b in range(order):
        for d in range(n):
            h |= ((x[d] >> b) & 1) << (b * n + (n - 1 - d))
    return h


def offsets_hilbert(shape, order):
    out = np.zeros(shape, np.int64)
    for ix in np.ndindex(*shape):
        out[ix] = hilbert_index(ix, order)
    return out


# (name, shape, hurray layout, offsets, element count the buffer must hold)
def layout_cases():
    s2, s3 = (12, 20), (3, 8, 10)
    tiled = offsets_tiled(s2, (4, 8))
    return [
        ("row_major", s2, hurray.RowMajorLayout(), offsets_row(s2), 240),
        ("col_major", s3, hurray.ColMajorLayout(), offsets_col(s3), 240),
        ("strided", s2, hurray.StridedLayout([-21, 1]), offsets_strided(s2, [-21, 1]), None),
        ("strided3", s3, hurray.StridedLayout([1, 30, 3]), offsets_strided(s3, [1, 30, 3]), None),
        ("tiled", s2, hurray.TiledLayout([4, 8]), tiled, 3 * 3 * 32),
        ("morton", (12, 12), hurray.MortonLayout([4, 4]), offsets_morton((12, 12), [4, 4]), 256),
        ("hilbert", (16, 16), hurray.HilbertLayout(4, 2), offsets_hilbert((16, 16), 4), 256),
    ]


# ---- element types and packing --------------------------------------------------------

# (dtype name, bits): whole-byte types as unsigned bit patterns, sub-byte packed.
TYPES = [("float32", 32), ("bfloat16", 16), ("uint8", 8), ("float64", 64), ("int4", 4),
         ("uint2", 2), ("bool", 1), ("float6_e2m3", 6)]


def pack(values, bits):
    """Packs unsigned values of `bits` bits as the format stores them."""
    values = np.asarray(values, dtype=np.uint64)
    if bits >= 8:
        return values.astype(np.dtype(f"<u{bits // 8}")).tobytes()
    if bits == 6:
        n = -(-len(values) // 4) * 4
        v = np.zeros(n, np.uint32)
        v[:len(values)] = values
        g = v[0::4] | (v[1::4] << 6) | (v[2::4] << 12) | (v[3::4] << 18)
        out = np.stack([g & 0xFF, (g >> 8) & 0xFF, (g >> 16) & 0xFF], axis=1)
        return out.astype(np.uint8).tobytes()
    per = 8 // bits
    n = -(-len(values) // per) * per
    v = np.zeros(n, np.uint8)
    v[:len(values)] = values
    v = v.reshape(-1, per)
    out = np.zeros(len(v), np.uint8)
    for j in range(per):
        out |= (v[:, j] << (j * bits)).astype(np.uint8)
    return out.tobytes()


def unpack(data, bits, n):
    """The first n values of a packed buffer."""
    b = np.frombuffer(bytes(data), np.uint8)
    if bits >= 8:
        return np.frombuffer(bytes(data), np.dtype(f"<u{bits // 8}"))[:n].astype(np.uint64)
    if bits == 6:
        g = b.reshape(-1, 3).astype(np.uint32)
        g = g[:, 0] | (g[:, 1] << 8) | (g[:, 2] << 16)
        v = np.stack([(g >> (6 * j)) & 0x3F for j in range(4)], axis=1).reshape(-1)
        return v[:n].astype(np.uint64)
    per = 8 // bits
    v = np.stack([(b >> (j * bits)) & ((1 << bits) - 1) for j in range(per)], axis=1)
    return v.reshape(-1)[:n].astype(np.uint64)


def random_values(shape, bits, rng):
    hi = 1 << min(bits, 63)
    return rng.integers(0, hi, size=shape, dtype=np.uint64)


def make_tensor(dtype, bits, shape, layout, offs, count, values):
    """A tensor of `layout` whose element at each index is `values[index]`."""
    lo = int(offs.min())
    base = -lo if lo < 0 else 0  # elements before element [0, ...]
    n = int(offs.max()) + base + 1
    if count is not None:
        n = max(n, count)
    phys = np.zeros(n, np.uint64)
    phys[(offs + base).reshape(-1)] = values.reshape(-1)
    data = pack(phys, bits)
    if bits < 8 and base:
        pytest.skip("a negative stride over a sub-byte type is not built here")
    byte_offset = base * bits // 8
    return hurray.Tensor(data, dtype, shape, layout=layout, byte_offset=byte_offset)


def result_values(t, bits):
    """The values of a row-major result tensor, shaped."""
    assert t.layout == hurray.RowMajorLayout()
    n = int(np.prod(t.shape, dtype=np.int64))
    return unpack(np.asarray(t.buffer(0)).tobytes(), bits, n).reshape(t.shape)


KEYS = [
    (),
    (slice(None),),
    (3,),
    (-1,),
    (slice(2, 9),),
    (slice(1, None, 3),),
    (slice(None, None, -1),),
    (slice(10, 1, -3),),
    (Ellipsis, 5),
    (Ellipsis, slice(None, None, -2)),
    (None, 2, None),
    (slice(3, 3),),
    (slice(5, 2),),
    (slice(-4, None), slice(None, 3)),
    (1, slice(2, 7, 2)),
    (slice(None), -2),
    (Ellipsis,),
    (0, Ellipsis, None),
]


def keys_for(rank):
    out = []
    for k in KEYS:
        consuming = sum(1 for x in k if x is not None and x is not Ellipsis)
        if consuming <= rank:
            out.append(k)
    if rank == 3:
        out += [(1, slice(None, None, -2), slice(1, 9, 4)), (slice(None), 7, slice(None, None, -1))]
    return out


@pytest.fixture(scope="module")
def layout_file(tmp_path_factory):
    """Every layout case with every type, and the logical values of each."""
    rng = np.random.default_rng(7)
    path = tmp_path_factory.mktemp("slices") / "layouts.hrry"
    tensors, logical = {}, {}
    for lname, shape, layout, offs, count in layout_cases():
        for dtype, bits in TYPES:
            if lname == "strided" and bits < 8:
                continue  # negative strides: whole bytes only (byte_offset in bytes)
            values = random_values(shape, bits, rng)
            name = f"{lname}/{dtype}"
            tensors[name] = make_tensor(dtype, bits, shape, layout, offs, count, values)
            logical[name] = (values, bits, lname)
    hurray.save(path, tensors, durable=False)
    return path, logical


@pytest.mark.parametrize("mmap", [True, False])
def test_every_layout_and_type_matches_numpy(layout_file, mmap):
    path, logical = layout_file
    with hurray.open(path, mmap=mmap) as f:
        for name, (values, bits, lname) in logical.items():
            s = f.get_slice(name)
            assert s.shape == values.shape
            assert s.layout.name == lname.rstrip("3")
            for key in keys_for(values.ndim):
                try:
                    want = values[key]
                except IndexError:  # out of range for this shape: refused alike
                    with pytest.raises(IndexError, match="out of bounds"):
                        s[key]
                    continue
                got = s[key]
                assert got.shape == want.shape, (name, key)
                assert got.dtype == s.dtype
                np.testing.assert_array_equal(result_values(got, bits), want, err_msg=f"{name} {key}")
                assert not got.readonly


def test_whole_byte_types_through_numpy_and_torch(tmp_path):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    c = np.asfortranarray(rng.integers(-9, 9, (10, 7, 5)).astype(np.int16))
    path = tmp_path / "np.hrry"
    tensors = {"a": hurray.from_numpy(a), "c": hurray.from_numpy(c)}
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None:
        b = torch.randn(40, 24).to(torch.bfloat16)
        tensors["b"] = hurray.from_torch(b)
    hurray.save(path, tensors)
    for mmap in (True, False):
        with hurray.open(path, mmap=mmap) as f:
            assert f.get_slice("c").layout == hurray.ColMajorLayout()
            for key in [(slice(3, 17), slice(None, None, 5)), (-3,), (slice(None, None, -7), 2),
                        (Ellipsis, slice(40, 2, -3))]:
                np.testing.assert_array_equal(np.asarray(f.get_slice("a")[key]), a[key])
            for key in [(2, slice(1, 6), slice(None, None, -1)), (Ellipsis, 3), (slice(8, 0, -3),)]:
                np.testing.assert_array_equal(np.asarray(f.get_slice("c")[key]), c[key])
            if torch is not None:
                s = f.get_slice("b")
                assert s.get_dtype() == "bfloat16"
                for key in [(slice(5, 20), slice(None, None, 3)), (7,), (Ellipsis, slice(2, 9))]:
                    got = s[key].to_torch()
                    assert got.dtype == torch.bfloat16
                    assert torch.equal(got, b[key])


def test_result_is_owned_row_major_and_writable(tmp_path):
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    path = tmp_path / "own.hrry"
    hurray.save(path, {"w": hurray.from_numpy(a)})
    with hurray.open(path, mmap="r") as f:
        t = f.get_slice("w")[1:3, ::-1]
        assert f["w"].readonly
    # the slice outlives the file, owns its bytes, and can be written
    arr = np.asarray(t)
    arr[0, 0] = -1.0
    assert np.asarray(t)[0, 0] == -1.0
    assert t.layout == hurray.RowMajorLayout()
    assert t.buffer_handles[0].alignment >= 64


def test_per_tensor_quantization_travels(tmp_path):
    q = hurray.PerTensorAffine(0.25, 3)
    t = hurray.Tensor(np.arange(24, dtype=np.int8), "int8", (4, 6), quantization=q)
    path = tmp_path / "q.hrry"
    hurray.save(path, {"t": t})
    with hurray.open(path, mmap=False) as f:
        r = f.get_slice("t")[1:3, ::2]
        assert r.quantization == q
        np.testing.assert_array_equal(np.asarray(r.buffer(0)).view(np.int8),
                                      np.arange(24, dtype=np.int8).reshape(4, 6)[1:3, ::2].reshape(-1))


def test_scalar_and_one_dimension(tmp_path):
    path = tmp_path / "small.hrry"
    hurray.save(path, {"s": hurray.from_numpy(np.array(3.5, np.float64)),
                       "v": hurray.from_numpy(np.arange(10, dtype=np.int32))})
    with hurray.open(path) as f:
        s = f.get_slice("s")
        assert s.shape == () and s.get_shape() == [] and s.ndim == 0
        with pytest.raises(TypeError):
            len(s)
        assert np.asarray(s[()]) == 3.5
        assert np.asarray(s[...]) == 3.5
        assert s[None].shape == (1,)
        with pytest.raises(IndexError, match="too many indices"):
            s[0]
        v = f.get_slice("v")
        assert len(v) == 10
        np.testing.assert_array_equal(np.asarray(v[::-3]), np.arange(10)[::-3])
        assert v[4].shape == ()
        assert int(np.asarray(v[np.int64(4)])) == 4  # anything with __index__


# ---- the safetensors recipe -------------------------------------------------------------

def test_tensor_parallel_shards_match_safetensors(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((1024, 768)).astype(np.float32)
    path = tmp_path / "tp.hrry"
    hurray.save(path, {"w": hurray.from_numpy(w)})
    st = None
    try:
        from safetensors import safe_open
        from safetensors.numpy import save_file
        st = tmp_path / "tp.safetensors"
        save_file({"w": w}, str(st))
    except ImportError:
        pass
    world = 8
    for mmap in (True, False):
        with hurray.open(path, mmap=mmap) as f:
            s = f.get_slice("w")
            rows, cols = s.get_shape()
            assert s.get_dtype() == "float32"
            row_shards = [np.asarray(s[r * rows // world:(r + 1) * rows // world]) for r in range(world)]
            col_shards = [np.asarray(s[:, r * cols // world:(r + 1) * cols // world])
                          for r in range(world)]
            np.testing.assert_array_equal(np.concatenate(row_shards, axis=0), w)
            np.testing.assert_array_equal(np.concatenate(col_shards, axis=1), w)
            if st is not None:
                with safe_open(str(st), framework="np") as g:
                    t = g.get_slice("w")
                    assert t.get_shape() == s.get_shape()
                    assert t.get_dtype() == "F32"
                    for r in range(world):
                        np.testing.assert_array_equal(
                            row_shards[r], t[r * rows // world:(r + 1) * rows // world])
                        np.testing.assert_array_equal(
                            col_shards[r], t[:, r * cols // world:(r + 1) * cols // world])
                    for key in [(slice(5, 300, 7), 3), (Ellipsis, slice(1, 2))]:
                        np.testing.assert_array_equal(np.asarray(s[key]), t[key])


# ---- what is read ---------------------------------------------------------------------------

def rchar():
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise AssertionError("no rchar")


needs_proc_io = pytest.mark.skipif(not os.path.exists("/proc/self/io"),
                                   reason="needs /proc/self/io (Linux)")


@needs_proc_io
def test_read_mode_reads_only_the_selection(tmp_path):
    rows, cols = 4096, 1024  # 16 MiB of float32
    w = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    path = tmp_path / "big.hrry"
    hurray.save(path, {"w": hurray.from_numpy(w)}, durable=False)
    before = rchar()
    with hurray.open(path, mmap=False) as f:
        s = f.get_slice("w")
        assert s.shape == (rows, cols) and s.dtype == hurray.float32
        assert s.layout == hurray.RowMajorLayout() and len(s) == rows
        repr(s)
        meta = rchar() - before
        assert meta < 64 * 1024, meta  # the header, the index and one descriptor
        before = rchar()
        top = s[: rows // 8]
        got = rchar() - before
        assert rows // 8 * cols * 4 <= got <= rows // 8 * cols * 4 + 4096, got
        np.testing.assert_array_equal(np.asarray(top), w[: rows // 8])
        before = rchar()
        band = s[:, 128:256]  # 512 bytes of each row
        got = rchar() - before
        # the band, and the descriptor again (each read decodes it: under 4 KiB)
        assert rows * 128 * 4 <= got <= rows * 128 * 4 + 4096, got
        np.testing.assert_array_equal(np.asarray(band), w[:, 128:256])
        before = rchar()
        s[7:7]  # empty: nothing read (rchar counts reading /proc/self/io itself)
        assert rchar() - before < 1024


@needs_proc_io
def test_read_mode_addressed_layout_reads_pages_not_everything(tmp_path):
    side = 1024  # Morton float32 [1024, 1024]: 4 MiB
    values = np.arange(side * side, dtype=np.uint64).reshape(side, side)
    offs = offsets_morton((side, side), [10, 10])
    t = make_tensor("uint32", 32, (side, side), hurray.MortonLayout([10, 10]), offs, None,
                    values % (1 << 32))
    path = tmp_path / "morton.hrry"
    hurray.save(path, {"m": t}, durable=False)
    with hurray.open(path, mmap=False) as f:
        s = f.get_slice("m")
        before = rchar()
        r = s[: side // 8]
        got = rchar() - before
        # rows 0..127 of a Morton curve: 1/8 of its pages, each read once
        assert got <= side * side * 4 // 8 + 4096, got
        np.testing.assert_array_equal(result_values(r, 32), (values % (1 << 32))[: side // 8])


def resident_pages(path):
    """(pages of the file in the page cache, pages of the file): mincore over a
    fresh read-only mapping of it, which itself touches nothing."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.path.getsize(path)
    pages = (size + mmap_module.PAGESIZE - 1) // mmap_module.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap_module.PROT_READ, mmap_module.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            pytest.skip(f"mmap: errno {ctypes.get_errno()}")
        try:
            vec = (ctypes.c_ubyte * pages)()
            if libc.mincore(addr, size, vec) != 0:
                pytest.skip(f"mincore: errno {ctypes.get_errno()}")
            return sum(v & 1 for v in vec), pages
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def drop_cache(path):
    with open(path, "rb") as fh:
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="needs posix_fadvise")
@pytest.mark.parametrize("shape, key, shard_pages", [
    # the last eighth of the rows (no read-ahead room after it: the file ends)
    ((2048, 2048), np.s_[7 * 256:], 256 * 2048 * 4 // 4096),
    # an eighth of the columns: one page of each 32 KiB row
    ((1024, 8192), np.s_[:, 3 * 1024:4 * 1024], 1024),
])
def test_mapped_slice_touches_only_its_pages(tmp_path, shape, key, shard_pages):
    w = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape)
    path = tmp_path / "pages.hrry"
    hurray.save(path, {"w": hurray.from_numpy(w)})  # durable: the pages are clean
    drop_cache(path)
    resident, total = resident_pages(path)
    if resident > total // 16:
        pytest.skip("this file system keeps the file's pages resident")
    with hurray.open(path) as f:
        s = f.get_slice("w")
        after_meta, _ = resident_pages(path)
        part = s[key]
    resident, total = resident_pages(path)
    np.testing.assert_array_equal(np.asarray(part), w[key])
    assert after_meta < 16, after_meta  # header, descriptor, index
    # the shard's pages and the metadata's; reading the whole tensor, or the
    # kernel's read-ahead around every fault, fails this
    assert shard_pages <= resident <= shard_pages + 16, (resident, shard_pages, total)


# ---- errors ------------------------------------------------------------------------------

@pytest.fixture
def small_file(tmp_path):
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    left = hurray.from_numpy(a[:3].copy())
    right = hurray.from_numpy(a[3:].copy())
    comp = hurray.Composite("partition", (6, 10), "float32", [
        hurray.Tensor(np.asarray(left), "float32", (3, 10),
                      shard=hurray.Shard([6, 10], [0, 0])),
        hurray.Tensor(np.asarray(right), "float32", (3, 10),
                      shard=hurray.Shard([6, 10], [3, 0])),
    ])
    csr = hurray.Tensor([np.array([1.0, 2.0], np.float32), np.array([0, 2], np.uint64),
                         np.array([0, 1, 2], np.uint64)], "float32", (2, 3),
                        layout=hurray.CsrLayout(2))
    blocks = hurray.Tensor([np.zeros(8 * 64, np.int8), np.ones(16, np.float32)], "int8", (8, 64),
                           quantization=hurray.PerBlockAffine.symmetric(1, 32, 1, "float32"))
    path = tmp_path / "errors.hrry"
    hurray.save(path, {"w": hurray.from_numpy(a), "comp": comp, "csr": csr, "blocks": blocks})
    return path, a


def test_lookup_errors(small_file):
    path, _ = small_file
    with hurray.open(path) as f:
        with pytest.raises(KeyError):
            f.get_slice("nope")
        with pytest.raises(TypeError):
            f.get_slice(3)
        with pytest.raises(hurray.UnsupportedError, match="'comp' is a composite"):
            f.get_slice("comp")
        m = f.get_slice("comp.1")  # a member is a tensor of its own
        np.testing.assert_array_equal(np.asarray(m[1:, 2]), np.arange(30, 60, dtype=np.float32)
                                      .reshape(3, 10)[1:, 2])
        with pytest.raises(hurray.UnsupportedError, match="csr layout"):
            f.get_slice("csr")
        with pytest.raises(hurray.UnsupportedError, match="per_block_affine"):
            f.get_slice("blocks")
    with pytest.raises(ValueError, match="closed"):
        f.get_slice("w")


def test_index_errors_name_the_index_and_axis(small_file):
    path, a = small_file
    with hurray.open(path) as f:
        s = f.get_slice("w")
        with pytest.raises(IndexError, match=r"index 6 is out of bounds for axis 0 with size 6"):
            s[6]
        with pytest.raises(IndexError, match=r"index -11 is out of bounds for axis 1 with size 10"):
            s[0, -11]
        with pytest.raises(IndexError, match=r"index 2\*\*70|out of bounds for axis 1"):
            s[:, 2**70]
        with pytest.raises(IndexError, match="tensor 'w'"):
            s[9]
        with pytest.raises(IndexError, match="too many indices: the tensor is 2-dimensional, but 3"):
            s[0, 0, 0]
        with pytest.raises(IndexError, match="single ellipsis"):
            s[..., 0, ...]
        for bad in ([0, 1], np.array([1]), True, 1.5, "x", {0: 1}):
            with pytest.raises(IndexError, match="item 0 of the index: only integers"):
                s[bad]
        with pytest.raises(IndexError, match="item 1 of the index"):
            s[0, [1]]
        with pytest.raises(ValueError):
            s[::0]
        with pytest.raises(IndexError, match="more than 64 dimensions"):
            s[(None,) * 65]
        # NumPy agrees on what is out of range and what is not
        for key in [(-6,), (5, -10), (slice(-100, 100),), (slice(100, None),)]:
            np.testing.assert_array_equal(np.asarray(s[key]), a[key])


def test_slice_needs_its_file_open(small_file):
    path, a = small_file
    f = hurray.open(path, mmap=False)
    s = f.get_slice("w")
    first = s[0]
    f.close()
    assert s.shape == (6, 10) and s.get_dtype() == "float32"  # the descriptor stays
    with pytest.raises(ValueError, match="closed"):
        s[1]
    np.testing.assert_array_equal(np.asarray(first), a[0])
    assert "TensorSlice 'w'" in repr(s) and "float32" in repr(s) and "row_major" in repr(s)
    with pytest.raises(TypeError):
        hurray.TensorSlice()
    import pickle
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(s)


def test_threads_share_a_slice(tmp_path):
    w = np.arange(256 * 64, dtype=np.float32).reshape(256, 64)
    path = tmp_path / "th.hrry"
    hurray.save(path, {"w": hurray.from_numpy(w)})
    for mmap in (True, False):
        with hurray.open(path, mmap=mmap) as f:
            s = f.get_slice("w")
            errors = []

            def work(i):
                try:
                    for j in range(50):
                        r = (i * 7 + j) % 256
                        np.testing.assert_array_equal(np.asarray(s[r:r + 3, ::-2]), w[r:r + 3, ::-2])
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
