"""arange, linspace, eye and the *_like creation functions: the reference
package's signatures and defaults, values bit for bit as NumPy computes them
(fixed edge cases and random ones with hypothesis), and the errors a bad
argument gets (never an unbounded allocation)."""

import inspect
import math

import pytest

import hurray

np = pytest.importorskip("numpy")
pytest.importorskip("hypothesis")
import hypothesis.strategies as st  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
RANGE_TYPES = INTS + FLOATS + COMPLEX  # NumPy has all of them; bfloat16 is tested apart
TIER2 = ["int4", "uint4", "int2", "uint2", "float8_e4m3", "float8_e5m2", "float8_e8m0",
         "float4_e2m1", "float6_e2m3", "float6_e3m2"]


def same(t, want):
    """t (a hurray.Tensor) holds exactly NumPy's array: dtype, shape and bytes."""
    got = np.asarray(t)
    assert isinstance(t, hurray.Tensor)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), (got, want)
    assert t.layout.name == "row_major"
    assert t.buffer_handles[0].alignment >= 64 or t.size == 0
    assert t.device == hurray.device.cpu


def kw(dtype):
    return {} if dtype is None else {"dtype": dtype}


# ---- signatures, as the reference package has them -----------------------------------------

@pytest.mark.parametrize("fn,sig", [
    ("arange", "(start, stop=None, step=None, *, dtype=None, device=None)"),
    ("linspace", "(start, stop, num=50, endpoint=True, *, dtype=None, device=None)"),
    ("eye", "(n_rows, n_cols=None, k=0, *, dtype=None, device=None)"),
    ("zeros_like", "(x, *, dtype=None, device=None)"),
    ("ones_like", "(x, *, dtype=None, device=None)"),
    ("empty_like", "(x, *, dtype=None, device=None)"),
    ("full_like", "(x, fill_value, *, dtype=None, device=None)"),
])
def test_signatures(fn, sig):
    f = getattr(hurray, fn)
    assert f is getattr(hurray._hurray, fn)
    assert str(inspect.signature(f)) == sig
    assert fn in hurray.__all__


def test_keywords_are_the_references():
    same(hurray.arange(start=1, stop=7, step=2), np.arange(1, 7, 2))
    same(hurray.arange(5, None), np.arange(5))
    same(hurray.linspace(start=0, stop=1, num=3), np.linspace(0, 1, 3))
    same(hurray.eye(n_rows=2, n_cols=3, k=1), np.eye(2, 3, 1))
    src = hurray.ones([2], dtype=hurray.int8)
    same(hurray.full_like(x=src, fill_value=3), np.full(2, 3, np.int8))
    with pytest.raises(TypeError):
        hurray.arange(0, 5, 1, "int32")  # dtype is keyword-only
    with pytest.raises(TypeError):
        hurray.eye(3, 3, 0, "int32")
    with pytest.raises(TypeError):
        hurray.zeros_like(src, "int32")
    with pytest.raises(TypeError):
        hurray.linspace(0, 1, bogus=1)
    with pytest.raises(TypeError):
        hurray.arange()


# ---- the reference cookbook's examples -------------------------------------------------------

def test_cookbook_examples():
    t = hurray.arange(5)
    assert t.dtype is hurray.int64 and list(np.asarray(t)) == [0, 1, 2, 3, 4]
    assert list(np.asarray(hurray.arange(0, 10, 2))) == [0, 2, 4, 6, 8]
    t3 = hurray.arange(0.0, 1.0, 0.25)
    assert t3.dtype is hurray.float64 and t3.shape == (4,)
    assert list(np.asarray(t3)) == [0.0, 0.25, 0.5, 0.75]
    assert list(np.asarray(hurray.linspace(0.0, 1.0, 5))) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert list(np.asarray(hurray.linspace(0.0, 1.0, 4, endpoint=False))) == [0.0, 0.25, 0.5,
                                                                             0.75]
    assert hurray.linspace(0.0, 1.0, 5).dtype is hurray.float64
    same(hurray.eye(3), np.eye(3))
    same(hurray.eye(2, 4), np.eye(2, 4))
    same(hurray.eye(3, k=1, dtype=hurray.int32), np.eye(3, k=1, dtype=np.int32))
    same(hurray.eye(4, k=-1), np.eye(4, k=-1))
    src = hurray.ones([3, 3], dtype=hurray.float32)
    for f in (hurray.zeros_like, hurray.ones_like, hurray.empty_like):
        t = f(src)
        assert t.shape == (3, 3) and t.dtype is hurray.float32
    assert hurray.full_like(src, -1.0).dtype is hurray.float32
    assert hurray.zeros_like(src, dtype=hurray.float64).dtype is hurray.float64


# ---- arange ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    (5,), (0,), (-3,), (3, 3), (5, 3), (3, 5), (10, 0, -3), (0, 10, -1), (0, 10, 3),
    (-7, 7, 2), (1, 2, 10), (0.0, 1.0, 0.25), (0.5,), (-2.5,), (10.5, 0, -3.25), (0, 1, 0.1),
    (1e-320, 1e-319, 1e300), (1, 0, 1e300), (-0.0, 3), (-0.0, 3.0), (0, 5, 0.5), (-3.5, 3),
    (2 ** 70, 2 ** 70 + 3), (3, 2 ** 70, 2 ** 69), (0, 3e6), (0.1, 3e5, 0.7), (True,),
])
@pytest.mark.parametrize("dtype", [None] + RANGE_TYPES)
def test_arange_matches_numpy(args, dtype):
    try:
        with np.errstate(all="ignore"):
            want = np.arange(*args, **kw(dtype))
    except OverflowError:  # NumPy: start or start + step beyond the type
        with pytest.raises(OverflowError):
            hurray.arange(*args, **kw(dtype))
        return
    if want.dtype == object:  # NumPy's default for ints beyond int64; ours stays int64
        with pytest.raises(OverflowError, match="out of range for int64"):
            hurray.arange(*args, **kw(dtype))
        return
    if dtype in INTS and len(want) and not fits_exactly(args, want, dtype):
        with pytest.raises(OverflowError, match="out of range"):
            hurray.arange(*args, **kw(dtype))
        return
    same(hurray.arange(*args, **kw(dtype)), want)


def fits_exactly(args, want, dtype):
    """Whether NumPy's integer arange did not wrap (its last element is the exact one)."""
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    if all(isinstance(a, int) for a in (start, stop, step)):
        last = start + (len(want) - 1) * step
    else:  # NumPy truncates elements 0 and 1 and steps by their difference
        e0, e1 = int(start), int(start + step)
        last = e0 + (len(want) - 1) * (e1 - e0)
    info = np.iinfo(dtype)
    return info.min <= int(start) <= info.max and info.min <= last <= info.max


def test_arange_default_dtype():
    assert hurray.arange(3).dtype is hurray.int64
    assert hurray.arange(0, 3, 1).dtype is hurray.int64
    assert hurray.arange(np.int8(3)).dtype is hurray.int64  # anything with __index__
    assert hurray.arange(3.0).dtype is hurray.float64
    assert hurray.arange(0, 3, 0.5).dtype is hurray.float64
    assert hurray.arange(np.float32(3)).dtype is hurray.float64
    assert hurray.arange(3, dtype="float32").dtype is hurray.float32  # names are accepted


def test_arange_integer_extremes():
    i64 = np.iinfo(np.int64)
    same(hurray.arange(i64.max - 4, i64.max), np.arange(i64.max - 4, i64.max))
    same(hurray.arange(i64.min, i64.min + 4), np.arange(i64.min, i64.min + 4))
    same(hurray.arange(2 ** 64 - 3, 2 ** 64, dtype="uint64"),
         np.arange(2 ** 64 - 3, 2 ** 64, dtype=np.uint64))
    same(hurray.arange(0, 2 ** 64 - 1, 2 ** 63, dtype="uint64"),
         np.arange(0, 2 ** 64 - 1, 2 ** 63, dtype=np.uint64))
    same(hurray.arange(i64.max, i64.min, -(2 ** 62)),
         np.arange(i64.max, i64.min, -(2 ** 62)))


def test_arange_large_float32_index():
    """float32 elements step in float32 arithmetic (i rounded to float32 past 2**24)."""
    same(hurray.arange(0, 3e7, dtype="float32"), np.arange(0, 3e7, dtype=np.float32))


def test_arange_integer_overflow_raises_where_numpy_wraps():
    with pytest.raises(OverflowError, match=r"start=300 is out of range for int8"):
        hurray.arange(300, 310, dtype="int8")
    with pytest.raises(OverflowError, match=r"last element, 299, is out of range for int8"):
        hurray.arange(0, 300, dtype="int8")
    with pytest.raises(OverflowError, match="uint8"):
        hurray.arange(-1, 3, dtype="uint8")
    with pytest.raises(OverflowError):
        hurray.arange(1e30, 2e30, 1e29, dtype="int64")
    same(hurray.arange(300, 300, dtype="int8"), np.arange(300, 300, dtype=np.int8))  # empty
    same(hurray.arange(0, 128, dtype="int8"), np.arange(0, 128, dtype=np.int8))


def test_arange_bfloat16():
    ml = pytest.importorskip("ml_dtypes")
    for args in [(5,), (0, 10, 0.3), (-3.7, 40.1, 1.1), (0, 1000, 7), (10, -10, -0.45)]:
        same(hurray.arange(*args, dtype="bfloat16"), np.arange(*args, dtype=ml.bfloat16))


@pytest.mark.parametrize("args,match", [
    ((0, 10, 0), "step must not be zero"),
    ((0, 0, 0), "step must not be zero"),
    ((0.0, 1.0, 0.0), "step must not be zero"),
    ((float("inf"),), "stop must be finite"),
    ((0, float("nan")), "stop must be finite"),
    ((float("-inf"), 0), "start must be finite"),
    ((0, 10, float("inf")), "step must be finite"),
    ((0.0, 1e300, 1e-300), "does not fit 63 bits"),
    ((-1e308, 1e308, 1.0), "does not fit 63 bits"),
    ((0, 2 ** 62), r"elements of int64 take more than the 2\^63 - 1 bytes"),
    ((0, 2 ** 63), "does not fit 63 bits"),
])
def test_arange_bad_arguments(args, match):
    with pytest.raises(hurray.InvalidDescriptorError, match=match) as ei:
        hurray.arange(*args)
    assert isinstance(ei.value, ValueError)


def test_arange_bad_types_and_dtypes():
    with pytest.raises(TypeError, match="stop must be a real number, not complex"):
        hurray.arange(1j)
    with pytest.raises(TypeError, match="step must be a real number, not str"):
        hurray.arange(0, 1, "x")
    with pytest.raises(TypeError, match="start must be a real number"):
        hurray.arange(None, 3)
    with pytest.raises(OverflowError, match="start=.* too large for a float64"):
        hurray.arange(10 ** 400, 1.5)
    with pytest.raises(hurray.UnsupportedError, match="dtype=bool"):
        hurray.arange(2, dtype=hurray.bool)
    for name in TIER2:
        with pytest.raises(hurray.UnsupportedError, match=name):
            hurray.arange(2, dtype=name)
    with pytest.raises(hurray.InvalidDescriptorError, match="unknown element type name"):
        hurray.arange(2, dtype="int3")
    with pytest.raises(TypeError, match="device must be a hurray.Device"):
        hurray.arange(2, device="cpu")
    with pytest.raises(hurray.UnsupportedError, match="host memory only"):
        hurray.arange(2, device=hurray.Device("cuda", 0))


def test_no_unbounded_allocation():
    """A length that cannot be allocated is a MemoryError, before anything is written."""
    with pytest.raises(MemoryError):
        hurray.arange(2 ** 59)  # 4 EiB of int64
    with pytest.raises(MemoryError):
        hurray.linspace(0, 1, 2 ** 60, dtype="int8")
    with pytest.raises(MemoryError):
        hurray.eye(2 ** 29, 2 ** 30, dtype="uint8")
    with pytest.raises(hurray.InvalidDescriptorError, match="linspace: shape: 4611686018427387904 "
                       "elements of float64 take more"):
        hurray.linspace(0, 1, 2 ** 62)
    with pytest.raises(hurray.InvalidDescriptorError, match="overflows 64 bits"):
        hurray.eye(2 ** 32)
    with pytest.raises(hurray.InvalidDescriptorError, match="n_rows=.* does not fit 64 bits"):
        hurray.eye(2 ** 64)


LIMIT = 2 ** 63 - 1  # HURRAY_MAX_ADDRESSABLE: the most elements and bytes one buffer addresses


def empty_coo(n):
    """A sparse tensor of shape (n,) with no entries: a *_like source of any size."""
    return hurray.Tensor(b"", hurray.uint8, [n], aux_buffers=[b""], layout=hurray.CooLayout(nnz=0))


@pytest.mark.parametrize("make,byte,pair", [
    (lambda n, dt: hurray.zeros([n], dtype=dt), "uint8", "int16"),
    (lambda n, dt: hurray.empty([1, n], dtype=dt), "uint8", "int16"),
    (lambda n, dt: hurray.ones([n, 1], dtype=dt), "uint8", "int16"),
    (lambda n, dt: hurray.full([n], 3, dtype=dt), "uint8", "int16"),
    (lambda n, dt: hurray.zeros_like(empty_coo(n), dtype=dt), "uint8", "int16"),
    (lambda n, dt: hurray.full_like(empty_coo(n), 1, dtype=dt), "uint8", "int16"),
    # arange's length is a float64 quotient, as NumPy's (2**63 - 1 and 2**62 - 1 are
    # not one: 2**62 - 512 is), and its integer elements must fit their type: float16
    (lambda n, dt: hurray.arange(n - 511 if n % 2 else n, dtype=dt), None, "float16"),
    (lambda n, dt: hurray.linspace(0, 1, n, dtype=dt), "uint8", "int16"),
    (lambda n, dt: hurray.eye(1, n, dtype=dt), "uint8", "int16"),
])
def test_one_limit_for_every_creation_function(make, byte, pair):
    """libhurray's one limit (hurray_dense_buffer_size): a size up to 2**63 - 1 bytes is
    asked of the allocator (MemoryError when it refuses, as NumPy), one byte more is
    InvalidDescriptorError (a ValueError, as NumPy's "array is too big") naming the shape;
    the same for every creation function."""
    if byte is not None:
        with pytest.raises(MemoryError):
            make(LIMIT, byte)  # at the limit: asked, and refused by the allocator
    with pytest.raises(MemoryError):
        make(2 ** 62 - 1, pair)  # 2**63 - 2 bytes
    with pytest.raises(hurray.InvalidDescriptorError, match="one buffer can address") as ei:
        make(2 ** 62, pair)  # 2**63 bytes: one over
    assert isinstance(ei.value, ValueError) and ei.value.field == "shape"


def test_the_limit_on_extents_and_element_counts():
    """Each extent and the element count are held to the same 2**63 - 1 (a sub-byte type
    reaches the element limit first); an empty tensor is made whatever its other extents."""
    assert hurray.zeros([0, LIMIT]).shape == (0, LIMIT)
    with pytest.raises(hurray.InvalidDescriptorError, match=r"shape\[1\]: 9223372036854775808, "
                       "beyond the 2\\^63 - 1 elements"):
        hurray.zeros([0, LIMIT + 1])
    with pytest.raises(MemoryError):
        hurray.zeros([2 ** 31, 2 ** 32 - 1], dtype="bool")  # 2**63 - 2**31 elements, 2**60 bytes
    with pytest.raises(hurray.InvalidDescriptorError, match="9223372036854775808 elements, "):
        hurray.zeros([2 ** 31, 2 ** 32], dtype="bool")  # 2**63 elements
    with pytest.raises(hurray.InvalidDescriptorError, match=r"linspace: shape\[0\]: "):
        hurray.linspace(0, 1, 2 ** 64 - 1)


# ---- linspace -------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    (0, 1, 0), (0, 1, 1), (0, 1, 2), (0, 1, 5), (1, 0, 5), (-0.0, 1, 1), (-0.0, 1, 3),
    (3, 3, 4), (0, 1e-320, 5), (5e-324, 1e-323, 7), (2 ** 53, 2 ** 53 + 10, 11),
    (-1, 0, 3), (-5.5, 7.25, 9), (0.1, 0.7, 1000), (-1e300, 1e300, 5), (7, 2, 50),
])
@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("dtype", [None] + RANGE_TYPES)
def test_linspace_matches_numpy(args, endpoint, dtype):
    with np.errstate(all="ignore"):
        want = np.linspace(*args, endpoint=endpoint, **kw(dtype))
        floor = np.floor(np.linspace(*args, endpoint=endpoint))
    if dtype in INTS and len(want):
        info = np.iinfo(dtype)
        if not (floor.min() >= info.min and floor.max() < info.max + 1):
            with pytest.raises(OverflowError, match=f"out of range for {dtype}"):
                hurray.linspace(*args, endpoint=endpoint, **kw(dtype))
            return
    same(hurray.linspace(*args, endpoint=endpoint, **kw(dtype)), want)


def test_linspace_defaults():
    t = hurray.linspace(0, 1)
    same(t, np.linspace(0, 1))
    assert t.shape == (50,) and t.dtype is hurray.float64
    same(hurray.linspace(0, 1, 4, False), np.linspace(0, 1, 4, False))  # endpoint positional
    same(hurray.linspace(2, 3, True), np.linspace(2, 3, True))  # num=1 (an int)
    lin = np.asarray(hurray.linspace(-0.3, 0.7, 11))
    assert lin[0] == -0.3 and lin[-1] == 0.7  # exact endpoints


def test_linspace_bfloat16_rounds_as_full():
    """bfloat16 elements are the float64 ones rounded through float32, as full() does."""
    ml = pytest.importorskip("ml_dtypes")
    for args in [(0, 1, 5), (42.71002764249124, -48.32557033342775, 22), (-3, 1e4, 101)]:
        want = np.linspace(*args).astype(np.float32).astype(ml.bfloat16)
        t = hurray.linspace(*args, dtype="bfloat16")
        same(t, want)
        for i in (0, len(want) // 2, len(want) - 1):
            one = hurray.full([1], float(np.linspace(*args)[i]), dtype="bfloat16")
            assert np.asarray(one).tobytes() == np.asarray(t)[i:i + 1].tobytes()


def test_linspace_bad_arguments():
    with pytest.raises(hurray.InvalidDescriptorError, match="num must be non-negative, got -1"):
        hurray.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="num must be an int, not float"):
        hurray.linspace(0, 1, 5.0)
    with pytest.raises(hurray.InvalidDescriptorError, match="start must be finite"):
        hurray.linspace(float("nan"), 1)
    with pytest.raises(hurray.InvalidDescriptorError, match="stop must be finite"):
        hurray.linspace(0, float("inf"))
    with pytest.raises(hurray.InvalidDescriptorError, match="stop - start overflows"):
        hurray.linspace(1e308, -1e308, 3)
    with pytest.raises(TypeError, match="start must be a real number, not complex"):
        hurray.linspace(1j, 2)
    with pytest.raises(OverflowError, match="out of range for int8"):
        hurray.linspace(0, 1000, 5, dtype="int8")
    with pytest.raises(OverflowError, match="out of range for uint64"):
        hurray.linspace(0, 2 ** 64, 5, dtype="uint64")
    with pytest.raises(hurray.UnsupportedError, match="dtype=bool"):
        hurray.linspace(0, 1, 3, dtype="bool")
    for name in TIER2:
        with pytest.raises(hurray.UnsupportedError, match=name):
            hurray.linspace(0, 1, 3, dtype=name)


# ---- eye ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [None, "bool"] + RANGE_TYPES)
def test_eye_matches_numpy(dtype):
    for n in range(0, 5):
        for m in (None, 0, 1, 2, 3, 6):
            for k in range(-7, 8):
                same(hurray.eye(n, m, k, **kw(dtype)), np.eye(n, m, k, **kw(dtype)))


def test_eye_bool_is_bit_packed_with_zero_padding():
    t = hurray.eye(3, 5, k=2, dtype=hurray.bool)  # elements 2, 8 and 14 of 15
    assert np.asarray(t.buffer(0)).tobytes() == bytes([0x04, 0x41])
    assert np.asarray(hurray.eye(3, dtype="bool").buffer(0)).tobytes() == bytes([0x11, 0x01])


def test_eye_k_beyond_the_matrix_and_beyond_64_bits():
    for k in (3, -3, 100, -100, 10 ** 30, -(10 ** 30)):
        same(hurray.eye(3, k=k), np.zeros((3, 3)))
    same(hurray.eye(2, 5, k=np.int64(4)), np.eye(2, 5, 4))


def test_eye_bad_arguments():
    with pytest.raises(hurray.InvalidDescriptorError, match="n_rows must be non-negative"):
        hurray.eye(-1)
    with pytest.raises(hurray.InvalidDescriptorError, match="n_cols must be non-negative"):
        hurray.eye(2, -3)
    with pytest.raises(TypeError, match="n_rows must be an int, not float"):
        hurray.eye(3.0)
    with pytest.raises(TypeError):
        hurray.eye(3, k=1.5)
    for name in TIER2:
        with pytest.raises(hurray.UnsupportedError, match=name):
            hurray.eye(2, dtype=name)


# ---- *_like ---------------------------------------------------------------------------------

LIKE = [("zeros_like", np.zeros_like), ("ones_like", np.ones_like)]


@pytest.mark.parametrize("name,npf", LIKE)
@pytest.mark.parametrize("dtype", ["bool"] + RANGE_TYPES)
def test_like_matches_numpy(name, npf, dtype):
    for shape in [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 2, 3, 2)]:
        src = hurray.from_numpy(np.zeros(shape, dtype))
        same(getattr(hurray, name)(src), npf(np.zeros(shape, dtype)))
        same(getattr(hurray, name)(src, dtype="float32"), npf(np.zeros(shape, dtype), np.float32))
        e = hurray.empty_like(src)
        assert e.shape == shape and e.dtype is src.dtype


@pytest.mark.parametrize("dtype,value", [
    ("int32", 7), ("int32", 2.7), ("int8", -128), ("uint16", 65535), ("float32", 1e-3),
    ("float16", 0.1), ("float64", -2), ("complex64", 1 - 2j), ("complex128", 3), ("bool", 0),
    ("bool", 5),
])
def test_full_like_takes_the_sources_dtype(dtype, value):
    a = np.zeros((2, 3), dtype)
    same(hurray.full_like(hurray.from_numpy(a), value), np.full_like(a, value))
    if isinstance(value, complex):
        with pytest.raises(TypeError):
            hurray.full_like(hurray.from_numpy(a), value, dtype="float64")
    else:
        same(hurray.full_like(hurray.from_numpy(a), value, dtype="float64"),
             np.full_like(a, value, dtype=np.float64))


def test_like_keeps_shape_not_layout():
    a = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    src = hurray.from_numpy(a)
    assert src.layout.name == "col_major"
    for t in (hurray.zeros_like(src), hurray.ones_like(src), hurray.empty_like(src),
              hurray.full_like(src, 2)):
        assert t.shape == (2, 3) and t.dtype is hurray.float32 and t.layout.name == "row_major"
    csr = hurray.Tensor(np.array([5, 7], np.float32).tobytes(), hurray.float32, [2, 2],
                        aux_buffers=[np.array([0, 1], np.uint64).tobytes(),
                                     np.array([0, 1, 2], np.uint64).tobytes()],
                        layout=hurray.CsrLayout(nnz=2))
    same(hurray.zeros_like(csr), np.zeros((2, 2), np.float32))  # dense, of the sparse's shape


def test_like_element_types_follow_zeros_and_ones():
    """zeros_like/empty_like take every type zeros/empty take; ones_like and
    full_like those ones and full take (Tier 1 and complex)."""
    src = hurray.zeros([5], dtype=hurray.dtype.int4)
    assert hurray.zeros_like(src).dtype is hurray.dtype.int4
    assert hurray.empty_like(src).dtype is hurray.dtype.int4
    with pytest.raises(hurray.UnsupportedError, match="int4"):
        hurray.ones_like(src)
    with pytest.raises(hurray.UnsupportedError, match="int4"):
        hurray.full_like(src, 1)
    same(hurray.ones_like(src, dtype="int8"), np.ones(5, np.int8))
    bf = hurray.ones_like(hurray.zeros([3], dtype="bfloat16"))
    assert bf.dtype is hurray.bfloat16 and np.asarray(bf.buffer(0)).tobytes() == b"\x80\x3f" * 3
    with pytest.raises(hurray.UnsupportedError, match="float8_e8m0 has no zero"):
        hurray.zeros_like(src, dtype="float8_e8m0")


def test_like_bad_arguments():
    for f in (hurray.zeros_like, hurray.ones_like, hurray.empty_like):
        with pytest.raises(TypeError, match="x must be a hurray.Tensor, not numpy.ndarray"):
            f(np.zeros(3))
        with pytest.raises(TypeError, match="x must be a hurray.Tensor, not list"):
            f([1, 2])
    with pytest.raises(TypeError, match="x must be a hurray.Tensor"):
        hurray.full_like(np.zeros(3), 1)
    dyn = hurray.Tensor(bytes(16), hurray.float32, [None, 2])
    with pytest.raises(hurray.InvalidDescriptorError, match=r"zeros_like: shape\[0\]: is dynamic"):
        hurray.zeros_like(dyn)
    src = hurray.zeros([2])
    with pytest.raises(OverflowError, match="out of range for int8"):
        hurray.full_like(src, 300, dtype="int8")
    with pytest.raises(TypeError, match="device must be a hurray.Device"):
        hurray.ones_like(src, device="cuda")
    with pytest.raises(hurray.UnsupportedError, match="host memory only"):
        hurray.zeros_like(src, device=hurray.Device("cuda", 0))
    with pytest.raises(hurray.InvalidDescriptorError, match="unknown element type name"):
        hurray.zeros_like(src, dtype="nope")


def test_like_keeps_the_device_object():
    d = hurray.Device("cpu", 3)
    src = hurray.zeros([2], device=d)
    assert hurray.zeros_like(src).device == d
    assert hurray.ones_like(src, device=hurray.device.cpu).device == hurray.device.cpu


# ---- descriptors of the results are valid ----------------------------------------------------

def test_results_describe_themselves():
    for t in (hurray.arange(7, dtype="int16"), hurray.linspace(0, 1, 9, dtype="float16"),
              hurray.eye(3, 4, dtype="bool"), hurray.arange(0), hurray.linspace(0, 1, 0),
              hurray.eye(0), hurray.zeros_like(hurray.arange(3))):
        d = t.descriptor
        again = hurray.Descriptor.decode(d.encode())
        assert again == d and again.shape == t.shape and again.dtype is t.dtype


# ---- random cases against NumPy (hypothesis) -------------------------------------------------

@SETTINGS
@given(start=st.integers(-10 ** 6, 10 ** 6), n=st.integers(0, 300),
       step=st.integers(-1000, 1000).filter(bool), jitter=st.integers(-5, 5),
       dtype=st.sampled_from([None] + RANGE_TYPES), single=st.booleans())
def test_arange_random_integers(start, n, step, jitter, dtype, single):
    stop = start + n * step + jitter
    args = (stop,) if single else (start, stop, step)
    try:
        with np.errstate(all="ignore"):
            want = np.arange(*args, **kw(dtype))
    except OverflowError:
        with pytest.raises(OverflowError):
            hurray.arange(*args, **kw(dtype))
        return
    if dtype in INTS and len(want) and not fits_exactly(args, want, dtype):
        with pytest.raises(OverflowError):
            hurray.arange(*args, **kw(dtype))
        return
    same(hurray.arange(*args, **kw(dtype)), want)


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@SETTINGS
@given(start=finite, step=st.floats(1e-3, 1e3), sign=st.sampled_from([1, -1]),
       span=st.floats(-3, 400), dtype=st.sampled_from([None] + RANGE_TYPES),
       int_start=st.booleans())
def test_arange_random_floats(start, step, sign, span, dtype, int_start):
    if int_start:
        start = int(start)
    step *= sign
    stop = start + span * step
    try:
        with np.errstate(all="ignore"):
            want = np.arange(start, stop, step, **kw(dtype))
    except (OverflowError, ValueError):
        with pytest.raises((OverflowError, ValueError)):
            hurray.arange(start, stop, step, **kw(dtype))
        return
    if dtype in INTS and len(want) and not fits_exactly((start, stop, step), want, dtype):
        with pytest.raises(OverflowError):
            hurray.arange(start, stop, step, **kw(dtype))
        return
    same(hurray.arange(start, stop, step, **kw(dtype)), want)


@SETTINGS
@given(start=st.floats(-1e12, 1e12), stop=st.floats(-1e12, 1e12), num=st.integers(0, 400),
       endpoint=st.booleans(), dtype=st.sampled_from([None] + RANGE_TYPES),
       as_ints=st.booleans())
def test_linspace_random(start, stop, num, endpoint, dtype, as_ints):
    if as_ints:
        start, stop = int(start), int(stop)
    with np.errstate(all="ignore"):
        want = np.linspace(start, stop, num, endpoint=endpoint, **kw(dtype))
        floor = np.floor(np.linspace(start, stop, num, endpoint=endpoint))
    if dtype in INTS and num:
        info = np.iinfo(dtype)
        if not (floor.min() >= info.min and floor.max() < info.max + 1):
            with pytest.raises(OverflowError):
                hurray.linspace(start, stop, num, endpoint=endpoint, **kw(dtype))
            return
    same(hurray.linspace(start, stop, num, endpoint=endpoint, **kw(dtype)), want)


@SETTINGS
@given(n=st.integers(0, 40), m=st.one_of(st.none(), st.integers(0, 40)),
       k=st.integers(-50, 50), dtype=st.sampled_from([None, "bool"] + RANGE_TYPES))
def test_eye_random(n, m, k, dtype):
    same(hurray.eye(n, m, k, **kw(dtype)), np.eye(n, m, k, **kw(dtype)))


@SETTINGS
@given(shape=st.lists(st.integers(0, 5), max_size=4), src=st.sampled_from(["bool"] + RANGE_TYPES),
       dtype=st.sampled_from([None, "bool"] + RANGE_TYPES),
       value=st.one_of(st.integers(0, 100), st.floats(0, 100), st.booleans()))
def test_like_random(shape, src, dtype, value):
    a = np.zeros(shape, src)
    x = hurray.from_numpy(a)
    npdt = None if dtype is None else np.dtype(dtype)
    same(hurray.zeros_like(x, **kw(dtype)), np.zeros_like(a, dtype=npdt))
    same(hurray.ones_like(x, **kw(dtype)), np.ones_like(a, dtype=npdt))
    target = np.dtype(dtype or src)
    assume(not (target.kind in "iu" and isinstance(value, float) and math.isnan(value)))
    with np.errstate(all="ignore"):
        want = np.full_like(a, value, dtype=npdt)
    same(hurray.full_like(x, value, **kw(dtype)), want)
    e = hurray.empty_like(x, **kw(dtype))
    assert e.shape == tuple(shape) and np.asarray(e).dtype == target


def test_full_and_ones_take_float8_as_ml_dtypes_rounds():
    # the codec's rounding (hurray_value_code_from_double): to nearest even, e5m2
    # overflows to an infinity and e4m3 to NaN (OCP non-saturating, ml_dtypes' rule)
    m = pytest.importorskip("ml_dtypes")
    values = [0.0, -0.0, 1.0, 0.1, -3.3, 448.0, 449.0, 464.0, 1000.0, 57344.0, 61440.0, 1e9,
              float("inf"), float("-inf"), float("nan"), 2.0**-9, 2.0**-17, 1e-30]
    for name, md in (("float8_e4m3", m.float8_e4m3fn), ("float8_e5m2", m.float8_e5m2)):
        for v in values:
            got = np.asarray(hurray.full([3], v, dtype=name).buffer(0)).tobytes()
            want = np.full(3, v, np.float64).astype(md).view(np.uint8).tobytes()
            assert got == want, (name, v)
        assert np.asarray(hurray.ones([2], dtype=name).buffer(0)).tobytes() == \
            np.ones(2, np.float32).astype(md).view(np.uint8).tobytes()
    e8 = hurray.full([2], 0.25, dtype="float8_e8m0")
    assert np.asarray(e8.buffer(0)).tobytes() == \
        np.full(2, 0.25, np.float32).astype(m.float8_e8m0fnu).view(np.uint8).tobytes()
    with pytest.raises(ValueError, match=r"3.0 cannot be stored as float8_e8m0"):
        hurray.full([2], 3.0, dtype="float8_e8m0")
    with pytest.raises(hurray.UnsupportedError, match="float6_e2m3 values cannot be encoded"):
        hurray.full([2], 1.0, dtype="float6_e2m3")  # sub-byte floats: not yet
