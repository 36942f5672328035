"""Memory lifecycle: allocation and release, GiB-scale zero-copy.

- allocate + release: ``hurray.empty`` created and dropped against ``numpy.empty``
  (64 MiB and 1 GiB);
- allocate + fill + release at 1 GiB: ``hurray.ones`` against ``numpy.ones`` (GiB/s);
- copy in at 1 GiB: ``hurray.from_numpy(a, copy=True)`` against ``a.copy()`` (GiB/s);
- zero-copy at 1 GiB: ``numpy.asarray(hurray.from_numpy(a))`` against
  ``numpy.from_dlpack(a)``, and ``hurray.from_numpy(a).to_torch()`` against
  ``torch.from_dlpack(a)``: microseconds for a gibibyte, as for a kibibyte
  (test_bench_interop.py has the sweep).
"""

import pytest

from conftest import GiB, MiB, aligned, measure


@pytest.mark.parametrize("n", [pytest.param(64 * MiB, id="64MiB"),
                               pytest.param(GiB, id="1GiB")])
def test_alloc_release_hurray(benchmark, hurray, fresh, n):
    benchmark.group = f"lifecycle empty+release {n:>10} B"
    f = hurray.empty
    measure(benchmark, lambda: (f((n // 4,), dtype=hurray.float32), None)[1], role="hurray")


@pytest.mark.parametrize("n", [pytest.param(64 * MiB, id="64MiB"),
                               pytest.param(GiB, id="1GiB")])
def test_alloc_release_peer(benchmark, np, fresh, n):
    benchmark.group = f"lifecycle empty+release {n:>10} B"
    f = np.empty
    measure(benchmark, lambda: (f((n // 4,), dtype=np.float32), None)[1], role="peer")


def test_fill_release_hurray(benchmark, hurray, fresh):
    benchmark.group = "lifecycle ones+release 1GiB"
    f = hurray.ones
    measure(benchmark, lambda: (f((GiB // 4,), dtype=hurray.float32), None)[1], role="hurray",
            bytes_=GiB, rounds=3)


def test_fill_release_peer(benchmark, np, fresh):
    benchmark.group = "lifecycle ones+release 1GiB"
    f = np.ones
    measure(benchmark, lambda: (f((GiB // 4,), dtype=np.float32), None)[1], role="peer",
            bytes_=GiB, rounds=3)


@pytest.fixture(scope="module")
def big(np):
    a = aligned(np, GiB, "float32")
    yield a
    del a


def test_copy_in_hurray(benchmark, hurray, big, fresh):
    benchmark.group = "lifecycle copy in 1GiB"
    f = hurray.from_numpy
    measure(benchmark, lambda: (f(big, copy=True), None)[1], role="hurray", bytes_=GiB, rounds=3)


def test_copy_in_peer(benchmark, big, fresh):
    benchmark.group = "lifecycle copy in 1GiB"
    f = big.copy
    measure(benchmark, lambda: (f(), None)[1], role="peer", bytes_=GiB, rounds=3)


def test_zero_copy_numpy_hurray(benchmark, np, hurray, big):
    benchmark.group = "lifecycle zero-copy numpy 1GiB"
    from_numpy, asarray = hurray.from_numpy, np.asarray
    measure(benchmark, lambda: asarray(from_numpy(big, copy=False)), role="hurray")


def test_zero_copy_numpy_peer(benchmark, np, big):
    benchmark.group = "lifecycle zero-copy numpy 1GiB"
    f = np.from_dlpack
    measure(benchmark, lambda: f(big), role="peer")


def test_zero_copy_torch_hurray(benchmark, torch, hurray, big):
    benchmark.group = "lifecycle zero-copy torch 1GiB"
    from_numpy = hurray.from_numpy
    measure(benchmark, lambda: from_numpy(big, copy=False).to_torch(), role="hurray")


def test_zero_copy_torch_peer(benchmark, torch, big):
    benchmark.group = "lifecycle zero-copy torch 1GiB"
    f = torch.from_dlpack
    measure(benchmark, lambda: f(big), role="peer")
