"""Many threads sharing hurray objects: no crash, no wrong result.

On a free-threaded interpreter (3.13t and newer) the extension runs without the
GIL (it declares Py_MOD_GIL_NOT_USED), so these threads really run at once; on
other interpreters the same code checks the GIL-released windows (file reads,
stream reads and writes). scripts/cpython_chroot.sh runs this file on 3.13t.
"""
import sys
import sysconfig
import threading

import numpy as np
import pytest

import hurray

THREADS = 8


def run_threads(target, n=THREADS, timeout=60):
    """Runs target(i, barrier) in n threads; re-raises the first failure."""
    barrier = threading.Barrier(n)
    errors = []

    def wrap(i):
        try:
            target(i, barrier)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@pytest.mark.skipif(not FREE_THREADED, reason="a default (GIL) build of CPython")
def test_the_module_keeps_the_gil_disabled():
    assert not sys._is_gil_enabled(), "importing hurray re-enabled the GIL"


@pytest.fixture
def model(tmp_path):
    rng = np.random.default_rng(7)
    arrays = {f"w{i}": rng.standard_normal((64, 32)).astype(np.float32) for i in range(40)}
    p = tmp_path / "m.hrry"
    hurray.save(p, {k: hurray.from_numpy(v) for k, v in arrays.items()}, kv={"n": 40})
    return p, arrays


def test_threads_share_one_file(model):
    p, arrays = model
    names = sorted(arrays)
    with hurray.open(p) as f:
        def read(i, barrier):
            barrier.wait()
            for k in range(200):
                name = names[(i * 7 + k) % len(names)]
                t = f[name]
                np.testing.assert_array_equal(np.asarray(t), arrays[name])
                assert name in f and len(f) == len(names)
                if k % 50 == 0:
                    assert sorted(f.keys()) == names and f.kv == {"n": 40}
        run_threads(read)


def test_closing_a_file_while_others_read_it(model):
    p, arrays = model
    names = sorted(arrays)
    for _round in range(5):
        f = hurray.open(p)
        got = []

        def read(i, barrier):
            barrier.wait()
            if i == 0:
                f.close()
                return
            for k in range(100):
                name = names[(i + k) % len(names)]
                try:
                    t = f[name]
                except ValueError as e:  # closed: the one allowed failure
                    assert "closed" in str(e)
                    return
                got.append((name, t))

        run_threads(read)
        assert f.closed
        # tensors handed out before the close keep the mapping alive and correct
        for name, t in got:
            np.testing.assert_array_equal(np.asarray(t), arrays[name])
        with pytest.raises(ValueError):
            f["w0"]


def test_threads_share_one_stream_reader():
    frames = [hurray.from_numpy(np.full(1000, i, dtype=np.int32)) for i in range(300)]
    w = hurray.StreamWriter()
    for t in frames:
        w.write(t)
    w.finish()
    reader = hurray.StreamReader(w.getvalue())
    seen = []
    lock = threading.Lock()

    def read(i, barrier):
        barrier.wait()
        while True:
            try:
                t = next(reader)
            except StopIteration:
                return
            except RuntimeError as e:  # another thread holds the reader: try again
                assert "another thread" in str(e)
                continue
            a = np.asarray(t)
            assert (a == a[0]).all() and a.shape == (1000,)
            with lock:
                seen.append(int(a[0]))

    run_threads(read)
    assert sorted(seen) == list(range(300))  # every frame once, none torn


def test_closing_a_stream_reader_while_others_read():
    frames = [hurray.from_numpy(np.full(256, i, dtype=np.int16)) for i in range(200)]
    w = hurray.StreamWriter()
    for t in frames:
        w.write(t)
    data = w.getvalue()
    for _round in range(5):
        reader = hurray.StreamReader(data)

        def read(i, barrier):
            barrier.wait()
            if i == 0:
                reader.close()
                return
            for _ in range(100):
                try:
                    t = next(reader)
                except StopIteration:  # closed: exhausted
                    return
                except hurray.StreamError as e:  # closed while this thread was reading
                    assert "closed by another thread" in str(e)
                    return
                except RuntimeError:
                    continue
                a = np.asarray(t)
                assert (a == a[0]).all()

        run_threads(read)
        assert reader.closed
        assert list(reader) == []


def test_threads_share_one_stream_writer():
    w = hurray.StreamWriter()
    t = hurray.from_numpy(np.arange(500, dtype=np.float64))
    written = []
    lock = threading.Lock()

    def write(i, barrier):
        barrier.wait()
        for _ in range(50):
            try:
                w.write(t)
            except RuntimeError as e:
                assert "another thread" in str(e)
                continue
            with lock:
                written.append(1)

    run_threads(write)
    w.finish()
    back = list(hurray.StreamReader(w.getvalue()))
    assert len(back) == len(written)
    for b in back:
        np.testing.assert_array_equal(np.asarray(b), np.arange(500, dtype=np.float64))


def test_lazily_built_caches_under_contention():
    """A lazily described tensor's descriptor and handle tuple, private dtypes and
    NumPy dtypes are built once whoever asks first; every thread sees one value."""
    for _round in range(20):
        t = hurray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
        results = [None] * THREADS

        def use(i, barrier):
            barrier.wait()
            d = t.descriptor
            h = t.buffer_handles
            s = np.asarray(t).sum()
            priv = hurray.Dtype.from_tag(0xF0 + (_round % 15))
            results[i] = (d.encode(), h, s, priv)

        run_threads(use)
        first = results[0]
        for r in results[1:]:
            assert r[0] == first[0] and r[1] is first[1] and r[2] == first[2] and r[3] is first[3]


def test_building_tensors_and_composites_concurrently(tmp_path):
    def build(i, barrier):
        barrier.wait()
        for k in range(100):
            a = np.full((4, 4), i * 1000 + k, dtype=np.float32)
            x = hurray.from_numpy(a)
            y = hurray.Tensor(a.tobytes(), "float32", (4, 4), layout=hurray.ColMajorLayout())
            z = hurray.zeros((2, 3), dtype="int8")
            c = hurray.Composite("group", (4, 4), "float32", [x, y])
            assert c.members[0] is x and np.asarray(x)[0, 0] == i * 1000 + k
            assert hurray.Descriptor.decode(y.descriptor.encode()) == y.descriptor
            if k % 25 == 0:
                p = tmp_path / f"t{i}-{k}.hrry"
                hurray.save(p, {"x": x, "c": c, "z": z})
                back = hurray.load(p)
                np.testing.assert_array_equal(np.asarray(back["x"]), a)
            w = hurray.StreamWriter()
            w.write(c)
            (got,) = list(hurray.StreamReader(w.getvalue()))
            assert got == c

    run_threads(build)


def test_dlpack_capsule_consumed_once_under_contention():
    """Two threads handed one capsule: exactly one consumes it."""
    for _round in range(50):
        t = hurray.from_numpy(np.arange(64, dtype=np.float32))
        cap = t.__dlpack__(max_version=(1, 0))
        wins = []
        lock = threading.Lock()

        def take(i, barrier):
            barrier.wait()
            try:
                u = hurray.from_dlpack(cap)
            except BufferError:
                return
            with lock:
                wins.append(u)

        run_threads(take, n=4)
        assert len(wins) == 1
        np.testing.assert_array_equal(np.asarray(wins[0]), np.arange(64, dtype=np.float32))


def test_native_capsule_consumed_once_under_contention():
    for _round in range(50):
        t = hurray.from_numpy(np.arange(64, dtype=np.int64))
        cap = t.__hurray__()
        wins = []
        lock = threading.Lock()

        def take(i, barrier):
            barrier.wait()
            try:
                u = hurray.from_hurray(cap)
            except hurray.BufferError:
                return
            with lock:
                wins.append(u)

        run_threads(take, n=4)
        assert len(wins) == 1
        np.testing.assert_array_equal(np.asarray(wins[0]), np.arange(64, dtype=np.int64))
