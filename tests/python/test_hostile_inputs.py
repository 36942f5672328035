"""The public API on hostile files and streams: valid .hrry files and streams
with bytes changed, inserted and cut, read through every door a user has
(load, load_kv, open and its accessors, StreamReader) and everything made of
what comes back used (NumPy, SciPy, repr, streaming it again). Every outcome
is a value or one of the package's exceptions: never a crash, a hang or
another kind of error. Deterministic (derandomized), so each run replays the
same cases; the C decoders underneath have their own libFuzzer targets
(fuzz/fuzz_file.c, fuzz/fuzz_stream.c)."""
import pytest

np = pytest.importorskip("numpy")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import hurray  # noqa: E402

EXPECTED = (hurray.InvalidDescriptorError, hurray.BufferError, hurray.UnsupportedError,
            hurray.FileError, hurray.StreamError, KeyError, ValueError, MemoryError)


def _tensors():
    f = np.arange(24, dtype=np.float32)
    csr = hurray.Tensor([np.arange(3, dtype=np.float32), np.array([0, 2, 1], np.uint64),
                         np.array([0, 2, 3], np.uint64)], "float32", (2, 3),
                        layout=hurray.CsrLayout(nnz=3))
    part = hurray.Composite("group", (2, 2), "float32",
                            [hurray.from_numpy(f[:4].reshape(2, 2)),
                             hurray.from_numpy(f[4:8].reshape(2, 2))])
    return {"w": hurray.from_numpy(f.reshape(4, 6)), "s": hurray.from_numpy(f[::3]),
            "b": hurray.from_numpy(np.array([True, False, True])), "csr": csr, "g": part,
            "q": hurray.zeros([4, 4], dtype="int4")}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    p = tmp_path_factory.mktemp("hostile") / "clean.hrry"
    hurray.save(p, _tensors(), kv={"name": "m", "n": [1, 2, 3], "blob": b"\x00\x01"})
    w = hurray.StreamWriter()
    for t in _tensors().values():
        w.write(t)
    return p.read_bytes(), w.getvalue()


def mutations():
    op = st.one_of(
        st.tuples(st.just("set"), st.integers(0, 1 << 20), st.integers(0, 255)),
        st.tuples(st.just("insert"), st.integers(0, 1 << 20), st.binary(min_size=1, max_size=16)),
        st.tuples(st.just("cut"), st.integers(0, 1 << 20), st.integers(1, 64)),
        st.tuples(st.just("truncate"), st.integers(0, 1 << 20), st.just(0)),
        st.tuples(st.just("word"), st.integers(0, 1 << 20),
                  st.sampled_from([0, 1, 0xFF, 0xFFFFFFFF, 1 << 31, (1 << 63), (1 << 64) - 1])),
    )
    return st.lists(op, min_size=1, max_size=6)


def apply(data, ops):
    b = bytearray(data)
    for kind, pos, arg in ops:
        pos %= len(b) + 1
        if kind == "set" and pos < len(b):
            b[pos] = arg
        elif kind == "insert":
            b[pos:pos] = arg
        elif kind == "cut":
            del b[pos:pos + arg]
        elif kind == "truncate":
            del b[pos:]
        elif kind == "word" and pos + 8 <= len(b):
            b[pos:pos + 8] = arg.to_bytes(8, "little")
    return bytes(b)


def use(obj):
    """Everything a user does with what a reader returned."""
    if isinstance(obj, hurray.Composite):
        _ = repr(obj), obj.shape
        for m in obj.members:
            use(m)
        return
    _ = repr(obj), str(obj), obj.shape, obj.layout, obj.buffer_handles
    try:
        np.asarray(obj)
    except (hurray.UnsupportedError, TypeError, ValueError, MemoryError):
        pass
    if not obj.readonly:  # a copy-on-write mapping (or memory of its own): writes stay in
        for i in range(len(obj.buffer_handles)):  # each buffer, first and last byte
            try:
                b = np.asarray(obj.buffer(i)).view(np.uint8).reshape(-1)
            except (hurray.UnsupportedError, TypeError, ValueError):
                continue
            if b.size:
                b[0] ^= 0xFF
                b[-1] ^= 0xFF
    if obj.layout.name in ("csr", "csc", "coo"):
        try:
            obj.to_scipy()
        except (ImportError, hurray.UnsupportedError, AttributeError, ValueError):
            pass
    w = hurray.StreamWriter()
    try:
        w.write(obj)
    except (hurray.UnsupportedError, hurray.StreamError):
        pass


SETTINGS = settings(max_examples=500, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@pytest.mark.slow  # 500 hypothesis examples, seconds
@SETTINGS
@given(ops=mutations(), mmap=st.sampled_from([True, "r", False]))
def test_hostile_files_through_load_open_and_load_kv(clean, tmp_path_factory, ops, mmap):
    data = apply(clean[0], ops)
    p = tmp_path_factory.mktemp("h") / "m.hrry"
    p.write_bytes(data)
    try:
        for t in hurray.load(p, mmap=mmap).values():
            use(t)
    except EXPECTED:
        pass
    try:
        hurray.load_kv(p)
    except EXPECTED:
        pass
    try:
        with hurray.open(p, mmap=mmap) as f:
            names = f.keys()
            _ = len(f), f.kv, repr(f)
            for n in names:
                try:
                    use(f[n])
                except EXPECTED:
                    pass
    except EXPECTED:
        pass


@pytest.mark.slow  # 500 hypothesis examples, seconds
@SETTINGS
@given(ops=mutations(), permissive=st.booleans(),
       limit=st.sampled_from([None, 64, 1 << 20]))
def test_hostile_streams_through_the_reader(clean, tmp_path_factory, ops, permissive, limit):
    data = apply(clean[1], ops)
    path = tmp_path_factory.mktemp("s") / "m.hrrs"
    path.write_bytes(data)
    for source in (data, path):
        try:
            for item in hurray.StreamReader(source, permissive=permissive,
                                            max_buffer_bytes=limit):
                use(item)
        except EXPECTED:
            pass
