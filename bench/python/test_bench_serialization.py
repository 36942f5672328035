"""Serialization: save/load and streams, in GiB/s (needs part 3: hurray.save,
hurray.load, hurray.StreamWriter, hurray.StreamReader; each case skips with "not
available in this build" otherwise).

A 64 MiB float32 tensor and a set of 16 tensors of 4 MiB, in a temporary folder
(the page cache: these are CPU and memory costs, not the disk's).

- save: ``hurray.save(path, {...})`` against ``numpy.save`` / ``numpy.savez`` of the
  same arrays, twice: with ``durable=False`` (neither side flushes to the disk: the
  like-for-like comparison) and with the default ``durable=True`` (hurray fsyncs the
  file and its folder, NumPy does not: the difference is the disk's wait). Every
  round saves over the previous round's file: hurray renames its temporary file over
  it, which ext4 answers by starting the new file's writeback before the rename
  (auto_da_alloc, its guard for renames without fsync), while numpy.save truncates
  the file in place; bench/compare.py removes the file before each save instead;
- load, touching every byte (a reduction over the data): ``hurray.load`` (mapped,
  the default, and ``mmap=False``) against ``numpy.load`` (and ``numpy.load`` of the
  ``.npz`` for the set);
- stream in memory: ``StreamWriter().write(t)`` + ``getvalue()`` against copying the
  same bytes into an ``io.BytesIO``; ``StreamReader(data)`` against
  ``numpy.frombuffer(data).copy()``.

bench/compare.py runs the cross-library comparison (safetensors, torch.save, raw
I/O, streams over a pipe).
"""

import io

import pytest

from conftest import MiB, aligned, measure, needs

BIG = 64 * MiB
SET = 16


def touch(np, arr):
    """Reads every byte: a reduction over the data seen as uint64."""
    return int(np.bitwise_xor.reduce(np.asarray(arr).reshape(-1).view(np.uint64)))


@pytest.fixture(scope="module")
def data(np, hurray):
    big = aligned(np, BIG, "float32")
    big[...] = np.arange(big.size, dtype=np.float32)
    parts = {f"layer{i}.weight": aligned(np, 4 * MiB, "float32", fill=i) for i in range(SET)}
    return big, parts


@pytest.fixture
def folder(tmp_path):
    yield tmp_path
    for p in tmp_path.iterdir():
        p.unlink()


DURABLE = [pytest.param(False, id="not-durable"), pytest.param(True, id="durable")]


@pytest.mark.parametrize("durable", DURABLE)
def test_save_one_hurray(benchmark, hurray, data, folder, durable):
    needs(hurray, "save")
    benchmark.group = "save 1 x 64MiB"
    t = hurray.from_numpy(data[0])
    path, save = str(folder / "a.hrry"), hurray.save
    measure(benchmark, lambda: save(path, {"t": t}, durable=durable), role="hurray",
            bytes_=BIG)


def test_save_one_peer(benchmark, np, data, folder):
    benchmark.group = "save 1 x 64MiB"
    path, a = str(folder / "a.npy"), data[0]
    measure(benchmark, lambda: np.save(path, a), role="peer", bytes_=BIG)


@pytest.mark.parametrize("durable", DURABLE)
def test_save_set_hurray(benchmark, hurray, data, folder, durable):
    needs(hurray, "save")
    benchmark.group = "save 16 x 4MiB"
    ts = {k: hurray.from_numpy(v) for k, v in data[1].items()}
    path, save = str(folder / "s.hrry"), hurray.save
    measure(benchmark, lambda: save(path, ts, durable=durable), role="hurray",
            bytes_=SET * 4 * MiB)


def test_save_set_peer(benchmark, np, data, folder):
    benchmark.group = "save 16 x 4MiB"
    path, parts = str(folder / "s.npz"), data[1]
    measure(benchmark, lambda: np.savez(path, **parts), role="peer", bytes_=SET * 4 * MiB)


@pytest.mark.parametrize("mmap", [True, False], ids=["mmap", "read"])
def test_load_one_hurray(benchmark, np, hurray, data, folder, mmap):
    needs(hurray, "save", "load")
    benchmark.group = "load+touch 1 x 64MiB"
    path = str(folder / "a.hrry")
    hurray.save(path, {"t": hurray.from_numpy(data[0])})
    load = hurray.load
    assert touch(np, load(path)["t"]) == touch(np, data[0])
    measure(benchmark, lambda: touch(np, load(path, mmap=mmap)["t"]), role="hurray",
            bytes_=BIG)


def test_load_one_peer(benchmark, np, data, folder):
    benchmark.group = "load+touch 1 x 64MiB"
    path = str(folder / "a.npy")
    np.save(path, data[0])
    measure(benchmark, lambda: touch(np, np.load(path)), role="peer", bytes_=BIG)


def test_load_set_hurray(benchmark, np, hurray, data, folder):
    needs(hurray, "save", "load")
    benchmark.group = "load+touch 16 x 4MiB"
    path = str(folder / "s.hrry")
    hurray.save(path, {k: hurray.from_numpy(v) for k, v in data[1].items()})
    load = hurray.load

    def run():
        return sum(touch(np, t) for t in load(path).values())

    measure(benchmark, run, role="hurray", bytes_=SET * 4 * MiB)


def test_load_set_peer(benchmark, np, data, folder):
    benchmark.group = "load+touch 16 x 4MiB"
    path = str(folder / "s.npz")
    np.savez(path, **data[1])

    def run():
        with np.load(path) as z:
            return sum(touch(np, z[k]) for k in z.files)

    measure(benchmark, run, role="peer", bytes_=SET * 4 * MiB)


def test_stream_write_hurray(benchmark, hurray, data):
    needs(hurray, "StreamWriter")
    benchmark.group = "stream write in memory 64MiB"
    t = hurray.from_numpy(data[0])
    W = hurray.StreamWriter

    def run():
        w = W()
        w.write(t)
        w.finish()
        return len(w.getvalue())

    measure(benchmark, run, role="hurray", bytes_=BIG)


def test_stream_write_peer(benchmark, data):
    benchmark.group = "stream write in memory 64MiB"
    view = memoryview(data[0]).cast("B")

    def run():
        b = io.BytesIO()
        b.write(view)
        return len(b.getvalue())

    measure(benchmark, run, role="peer", bytes_=BIG)


def test_stream_read_hurray(benchmark, np, hurray, data):
    needs(hurray, "StreamWriter", "StreamReader")
    benchmark.group = "stream read in memory 64MiB"
    w = hurray.StreamWriter()
    w.write(hurray.from_numpy(data[0]))
    w.finish()
    blob, R = w.getvalue(), hurray.StreamReader

    def run():
        return sum(touch(np, t) for t in R(blob))

    measure(benchmark, run, role="hurray", bytes_=BIG)


def test_stream_read_peer(benchmark, np, data):
    benchmark.group = "stream read in memory 64MiB"
    blob = data[0].tobytes()
    measure(benchmark, lambda: touch(np, np.frombuffer(blob, np.float32).copy()), role="peer",
            bytes_=BIG)
