"""Cold loads read ahead in parallel (workers=, HURRAY_WORKERS; src/file/prefetch.c).

What a user can observe: the knob is validated, a lazy open reads the tensor asked for and
not the rest of the file, every setting gives the same tensors, and a file truncated under
parallel reads is the reader's clear error. (A truncation under a mapping cuts the index the
lookups read, so that one is tested in C: tests/c/test_file_prefetch.c.) No timings here (bench/cold_load.py has them).
"""
import ctypes
import mmap
import os

import numpy as np
import pytest

import hurray
import hurray.numpy as hnp

MIB = 1 << 20
BIG = 16 * MIB  # bytes of each tensor of the cold file


def _evict(path) -> bool:
    """Drops the file's pages from the cache (no root needed); False where the file system
    keeps them (tmpfs: nothing to observe)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return _resident(path, 0, os.path.getsize(path)) < os.path.getsize(path) // 4


def _resident(path, off, length) -> int:
    """Bytes of [off, off + length) of the file in the page cache (mincore on a mapping of
    our own)."""
    libc = ctypes.CDLL(None, use_errno=True)
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        m = mmap.mmap(fh.fileno(), size, prot=mmap.PROT_READ)
    try:
        arr = np.frombuffer(m, dtype=np.uint8)
        pages = (size + 4095) // 4096
        vec = (ctypes.c_ubyte * pages)()
        rc = libc.mincore(ctypes.c_void_p(arr.ctypes.data), ctypes.c_size_t(size), vec)
        assert rc == 0, os.strerror(ctypes.get_errno())
        del arr
    finally:
        m.close()
    first, last = off // 4096, (off + length + 4095) // 4096
    return sum(v & 1 for v in vec[first:last]) * 4096


@pytest.fixture
def cold_file(tmp_path):
    rng = np.random.default_rng(7)
    tensors = {f"t{i}": rng.standard_normal(BIG // 4, dtype=np.float32) for i in range(5)}
    path = tmp_path / "cold.hrry"
    hurray.save(path, tensors)
    return path, tensors


@pytest.fixture
def small_file(tmp_path):
    tensors = {"a": np.arange(10, dtype=np.float32), "b": np.ones((3, 4), dtype=np.int16)}
    path = tmp_path / "small.hrry"
    hurray.save(path, tensors)
    return path, tensors


# ---- the knob ---------------------------------------------------------------------------

BAD = [0, -1, 65, 10**30, "4", 2.0, True, False]


@pytest.mark.parametrize("bad", BAD)
def test_workers_validated(small_file, bad):
    path, _ = small_file
    for call in (lambda: hurray.load(path, workers=bad), lambda: hurray.open(path, workers=bad),
                 lambda: hnp.load_file(path, workers=bad)):
        with pytest.raises(ValueError, match="workers"):
            call()


@pytest.mark.parametrize("bad", ["0", "abc", "-3", "65", "4 ", "1e3"])
def test_environment_variable_validated(small_file, monkeypatch, bad):
    path, tensors = small_file
    monkeypatch.setenv("HURRAY_WORKERS", bad)
    with pytest.raises(ValueError, match="HURRAY_WORKERS"):
        hurray.load(path)
    with pytest.raises(ValueError, match="HURRAY_WORKERS"):
        hurray.open(path)
    # the keyword wins over the variable: the variable is not even read
    got = hurray.load(path, workers=2)
    np.testing.assert_array_equal(np.asarray(got["a"]), tensors["a"])


def test_environment_variable_used(cold_file, monkeypatch):
    path, tensors = cold_file
    monkeypatch.setenv("HURRAY_WORKERS", "3")
    got = hurray.load(path)
    np.testing.assert_array_equal(np.asarray(got["t4"]), tensors["t4"])
    monkeypatch.setenv("HURRAY_WORKERS", "")  # empty: as if unset
    assert set(hurray.load(path)) == set(tensors)


# ---- what is read ------------------------------------------------------------------------

def _offsets(path, tensors):
    """Data offset of each tensor: where its first bytes sit in the file."""
    raw = open(path, "rb").read()
    return {n: raw.find(t.tobytes()[:4096]) for n, t in tensors.items()}


def test_lazy_open_reads_the_tensor_and_no_more(cold_file):
    path, tensors = cold_file
    at = _offsets(path, tensors)
    if not _evict(path):
        pytest.skip("this file system keeps the file's pages in memory (tmpfs)")
    with hurray.open(path, workers=4) as f:
        t1 = f["t1"]  # not touched by this test: the prefetch read it
        assert _resident(path, at["t1"], BIG) == BIG
        # far from it, the file stays on disk (the kernel's read-around may take a window of
        # read_ahead_kb beside the range: none of t3 and t4 here, 8 MiB windows)
        assert _resident(path, at["t3"], BIG) + _resident(path, at["t4"], BIG) < BIG // 2
        np.testing.assert_array_equal(np.asarray(t1), tensors["t1"])
        del t1


def test_workers_1_reads_as_it_is_touched(cold_file):
    path, tensors = cold_file
    at = _offsets(path, tensors)
    if not _evict(path):
        pytest.skip("this file system keeps the file's pages in memory (tmpfs)")
    with hurray.open(path, workers=1) as f:
        t1 = f["t1"]
        assert _resident(path, at["t1"], BIG) < BIG // 2
        del t1


def test_whole_load_reads_ahead(cold_file):
    path, tensors = cold_file
    at = _offsets(path, tensors)
    if not _evict(path):
        pytest.skip("this file system keeps the file's pages in memory (tmpfs)")
    got = hurray.load(path, workers=4)
    for name in tensors:
        assert _resident(path, at[name], BIG) == BIG, name
    del got


def test_load_names_reads_those(cold_file):
    path, tensors = cold_file
    at = _offsets(path, tensors)
    if not _evict(path):
        pytest.skip("this file system keeps the file's pages in memory (tmpfs)")
    got = hurray.load(path, names=["t0"], workers=4)
    assert _resident(path, at["t0"], BIG) == BIG
    assert _resident(path, at["t3"], BIG) + _resident(path, at["t4"], BIG) < BIG // 2
    del got


# ---- the same tensors whatever the setting ------------------------------------------------

@pytest.mark.parametrize("mmap_mode", [True, "r", False])
def test_same_tensors_with_1_and_8_workers(cold_file, mmap_mode):
    path, tensors = cold_file
    results = []
    for w in (1, 8):
        _evict(path)
        got = hurray.load(path, mmap=mmap_mode, workers=w)
        results.append({k: np.array(v) for k, v in got.items()})
        del got
        _evict(path)
        with hurray.open(path, mmap=mmap_mode, workers=w) as f:
            assert np.array_equal(np.asarray(f["t2"]), tensors["t2"])
    for name, want in tensors.items():
        np.testing.assert_array_equal(results[0][name], want)
        np.testing.assert_array_equal(results[1][name], want)


def test_mmap_false_large_tensor_cut_over_workers(tmp_path):
    # 40 MiB: read in slices by the workers (32 MiB and more), the file read ahead first
    rng = np.random.default_rng(3)
    big = rng.integers(0, 255, 40 * MIB, dtype=np.uint8)
    path = tmp_path / "big.hrry"
    hurray.save(path, {"big": big, "small": big[:5].copy()})
    got = []
    for w in (1, 8):
        _evict(path)
        got.append(np.array(hurray.load(path, mmap=False, workers=w)["big"]))
        _evict(path)
        with hurray.open(path, mmap=False, workers=w) as f:
            np.testing.assert_array_equal(np.asarray(f["big"]), big)
    np.testing.assert_array_equal(got[0], big)
    np.testing.assert_array_equal(got[1], big)


def test_torch_load_file_same_with_1_and_8_workers(cold_file):
    torch = pytest.importorskip("torch")
    import hurray.torch as ht
    path, tensors = cold_file
    a = ht.load_file(path, workers=1)
    _evict(path)
    b = ht.load_file(path, workers=8)
    for name, want in tensors.items():
        assert torch.equal(a[name], b[name])
        assert torch.equal(b[name], torch.from_numpy(want))
    with pytest.raises(ValueError, match="workers"):
        ht.load_file(path, workers=0)


# ---- errors -------------------------------------------------------------------------------

def test_truncated_under_parallel_reads_is_an_error(cold_file):
    path, tensors = cold_file
    at = _offsets(path, tensors)
    with hurray.open(path, mmap=False, workers=8) as f:
        os.truncate(path, at["t3"] + MIB)
        with pytest.raises(hurray.FileError, match="unexpected end of file"):
            f["t3"]
