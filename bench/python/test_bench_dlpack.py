"""DLPack: capsule creation, consumption, and from_dlpack with NumPy and PyTorch.

Every case is O(1) in the tensor size (a 1 MiB float32 tensor here; the size
sweep is test_bench_interop.py). Peers are the same operation done by NumPy or
PyTorch on the same memory:

- capsule create: ``t.__dlpack__()`` (dropped unconsumed) vs ``a.__dlpack__()``,
  legacy and versioned (max_version=(1, 1)) capsules;
- create + consume: ``hurray.from_dlpack(a)`` vs ``numpy.from_dlpack(a)``, and
  ``hurray.from_dlpack(torch_tensor)`` vs ``torch.from_dlpack(torch_tensor)``;
- hurray as the producer: ``numpy.from_dlpack(t)`` vs ``numpy.from_dlpack(a)``.
"""

import pytest

from conftest import MiB, aligned, measure


@pytest.fixture(scope="module")
def pair(np, hurray):
    a = aligned(np, MiB, "float32")
    return a, hurray.from_numpy(a, copy=False)


@pytest.mark.parametrize("max_version", [None, (1, 1)], ids=["legacy", "versioned"])
def test_capsule_create_hurray(benchmark, pair, max_version):
    _, t = pair
    benchmark.group = f"dlpack capsule create ({'legacy' if max_version is None else 'v1.1'})"
    f = t.__dlpack__
    if max_version is None:
        measure(benchmark, f, role="hurray")
    else:
        measure(benchmark, lambda: f(max_version=max_version), role="hurray")


@pytest.mark.parametrize("max_version", [None, (1, 1)], ids=["legacy", "versioned"])
def test_capsule_create_numpy(benchmark, pair, max_version):
    a, _ = pair
    benchmark.group = f"dlpack capsule create ({'legacy' if max_version is None else 'v1.1'})"
    f = a.__dlpack__
    if max_version is None:
        measure(benchmark, f, role="peer")
    else:
        measure(benchmark, lambda: f(max_version=max_version), role="peer")


def test_from_dlpack_numpy_hurray(benchmark, pair, hurray):
    a, _ = pair
    benchmark.group = "dlpack from_dlpack(numpy array)"
    f = hurray.from_dlpack
    measure(benchmark, lambda: f(a), role="hurray")


def test_from_dlpack_numpy_peer(benchmark, pair, np):
    a, _ = pair
    benchmark.group = "dlpack from_dlpack(numpy array)"
    f = np.from_dlpack
    measure(benchmark, lambda: f(a), role="peer")


def test_from_dlpack_capsule_hurray(benchmark, pair, hurray):
    """Consuming a capsule handed over directly (create + consume)."""
    a, _ = pair
    benchmark.group = "dlpack from_dlpack(numpy array)"
    f, make = hurray.from_dlpack, a.__dlpack__
    measure(benchmark, lambda: f(make()), role="hurray")


def test_numpy_consumes_hurray(benchmark, pair, np):
    _, t = pair
    benchmark.group = "dlpack numpy.from_dlpack(producer)"
    f = np.from_dlpack
    measure(benchmark, lambda: f(t), role="hurray")


def test_numpy_consumes_numpy(benchmark, pair, np):
    a, _ = pair
    benchmark.group = "dlpack numpy.from_dlpack(producer)"
    f = np.from_dlpack
    measure(benchmark, lambda: f(a), role="peer")


@pytest.fixture(scope="module")
def torch_tensor(torch):
    return torch.ones(MiB // 4, dtype=torch.float32)


def test_from_dlpack_torch_hurray(benchmark, torch_tensor, hurray):
    benchmark.group = "dlpack from_dlpack(torch tensor)"
    f = hurray.from_dlpack
    measure(benchmark, lambda: f(torch_tensor), role="hurray")


def test_from_dlpack_torch_peer(benchmark, torch_tensor, torch):
    benchmark.group = "dlpack from_dlpack(torch tensor)"
    f = torch.from_dlpack
    measure(benchmark, lambda: f(torch_tensor), role="peer")


def test_torch_consumes_hurray(benchmark, pair, torch):
    _, t = pair
    benchmark.group = "dlpack torch.from_dlpack(producer)"
    f = torch.from_dlpack
    measure(benchmark, lambda: f(t), role="hurray")


def test_torch_consumes_numpy(benchmark, pair, torch):
    a, _ = pair
    benchmark.group = "dlpack torch.from_dlpack(producer)"
    f = torch.from_dlpack
    measure(benchmark, lambda: f(a), role="peer")
