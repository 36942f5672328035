"""PyTorch interop (1 MiB tensors).

- torch -> hurray -> torch: ``hurray.from_torch(x).to_torch()`` against PyTorch's own
  DLPack round trip ``torch.from_dlpack(x)``, for float32, float16, bfloat16, int64
  and uint8 (bool copies: Hurray packs it; reported in GiB/s);
- import: ``hurray.from_torch(x)`` against ``numpy.from_dlpack(x)`` (another library
  importing the same torch tensor);
- export: ``t.to_torch()`` against ``torch.from_dlpack(a)`` of the NumPy array the
  hurray tensor shares.
"""

import pytest

from conftest import MiB, aligned, measure

TYPES = ["float32", "float16", "bfloat16", "int64", "uint8", "bool"]


def torch_tensor(torch, name):
    dt = getattr(torch, name)
    n = MiB // torch.empty((), dtype=dt).element_size()
    return torch.ones(n, dtype=dt)


@pytest.mark.parametrize("name", TYPES)
def test_torch_round_trip_hurray(benchmark, torch, hurray, name):
    x = torch_tensor(torch, name)
    benchmark.group = f"torch round trip {name:>8} 1MiB"
    from_torch = hurray.from_torch
    back = from_torch(x).to_torch()
    assert back.dtype == x.dtype and back.shape == x.shape
    measure(benchmark, lambda: from_torch(x).to_torch(), role="hurray",
            bytes_=x.numel() if name == "bool" else None)


@pytest.mark.parametrize("name", TYPES)
def test_torch_round_trip_peer(benchmark, torch, name):
    x = torch_tensor(torch, name)
    benchmark.group = f"torch round trip {name:>8} 1MiB"
    f = torch.from_dlpack
    measure(benchmark, lambda: f(x), role="peer")


def test_torch_import_hurray(benchmark, torch, hurray):
    x = torch_tensor(torch, "float32")
    benchmark.group = "torch import float32 1MiB"
    f = hurray.from_torch
    measure(benchmark, lambda: f(x), role="hurray")


def test_torch_import_peer(benchmark, torch, np):
    x = torch_tensor(torch, "float32")
    benchmark.group = "torch import float32 1MiB"
    f = np.from_dlpack
    measure(benchmark, lambda: f(x), role="peer")


def test_torch_export_hurray(benchmark, torch, np, hurray):
    t = hurray.from_numpy(aligned(np, MiB, "float32"), copy=False)
    benchmark.group = "torch export float32 1MiB"
    f = t.to_torch
    measure(benchmark, f, role="hurray")


def test_torch_export_peer(benchmark, torch, np):
    a = aligned(np, MiB, "float32")
    benchmark.group = "torch export float32 1MiB"
    f = torch.from_dlpack
    measure(benchmark, lambda: f(a), role="peer")
