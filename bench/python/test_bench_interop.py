"""Zero-copy interop across tensor sizes (issue 5).

Two comparisons, each at 1 KiB, 64 KiB, 4 MiB and 256 MiB of float32:

- NumPy: ``numpy.asarray(hurray.from_numpy(a))`` against NumPy's own DLPack round
  trip ``numpy.from_dlpack(a)`` on the same array. Target: within 2x.
- PyTorch: ``torch.from_dlpack(t)`` of a hurray tensor against
  ``torch.from_dlpack(a)`` of the NumPy array it shares memory with. Target: within
  1.5x.

Both paths are zero-copy, so neither time may grow with the tensor size: the
sweep shows it (the ratio and the absolute medians stay flat from 1 KiB to
256 MiB). The arrays come from hurray.aligned_allocator(), so hurray borrows them.
"""

import pytest

from conftest import SWEEP, aligned, measure

SIZES = [pytest.param(n, id=label) for label, n in SWEEP]


@pytest.fixture(scope="module")
def arrays(np, hurray):
    cache = {}

    def get(n):
        if n not in cache:
            cache.clear()  # one size alive at a time
            a = aligned(np, n, "float32")
            cache[n] = (a, hurray.from_numpy(a, copy=False))
        return cache[n]

    yield get
    cache.clear()


@pytest.mark.parametrize("n", SIZES)
def test_numpy_roundtrip_hurray(benchmark, np, hurray, arrays, n):
    """from_numpy then numpy.asarray: a NumPy view of the same memory."""
    a, _ = arrays(n)
    benchmark.group = f"interop numpy round trip {n:>10} B"
    from_numpy, asarray = hurray.from_numpy, np.asarray
    out = asarray(from_numpy(a))
    assert out.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    measure(benchmark, lambda: asarray(from_numpy(a)), role="hurray", target=2.0)


@pytest.mark.parametrize("n", SIZES)
def test_numpy_roundtrip_hurray_dlpack(benchmark, np, hurray, arrays, n):
    """from_numpy then numpy.from_dlpack (the DLPack way back; no target)."""
    a, _ = arrays(n)
    benchmark.group = f"interop numpy round trip {n:>10} B"
    from_numpy, from_dlpack = hurray.from_numpy, np.from_dlpack
    measure(benchmark, lambda: from_dlpack(from_numpy(a)), role="hurray")


@pytest.mark.parametrize("n", SIZES)
def test_numpy_roundtrip_peer(benchmark, np, arrays, n):
    """NumPy's own DLPack round trip of the same array."""
    a, _ = arrays(n)
    benchmark.group = f"interop numpy round trip {n:>10} B"
    from_dlpack = np.from_dlpack
    measure(benchmark, lambda: from_dlpack(a), role="peer")


@pytest.mark.parametrize("n", SIZES)
def test_torch_from_dlpack_hurray(benchmark, torch, arrays, n):
    """torch.from_dlpack of a hurray tensor."""
    a, t = arrays(n)
    benchmark.group = f"interop torch.from_dlpack {n:>10} B"
    from_dlpack = torch.from_dlpack
    assert from_dlpack(t).data_ptr() == a.__array_interface__["data"][0]
    measure(benchmark, lambda: from_dlpack(t), role="hurray", target=1.5)


@pytest.mark.parametrize("n", SIZES)
def test_torch_from_dlpack_peer(benchmark, torch, arrays, n):
    """torch.from_dlpack of the NumPy array the hurray tensor shares."""
    a, _ = arrays(n)
    benchmark.group = f"interop torch.from_dlpack {n:>10} B"
    from_dlpack = torch.from_dlpack
    measure(benchmark, lambda: from_dlpack(a), role="peer")
