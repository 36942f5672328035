"""Native protocol round trip (needs part 3: Tensor.__hurray__ and hurray.from_hurray;
each case skips with "not available in this build" otherwise).

hurray -> hurray through the native capsule ("hurray_tensor", a HurrayBufferList)
against the same hand-off through DLPack:

- capsule create: ``t.__hurray__()`` against ``t.__dlpack__()``;
- round trip: ``hurray.from_hurray(t)`` against ``hurray.from_dlpack(t)``, for a
  dense float32 tensor and for a three-buffer tensor (CSR; DLPack cannot carry it,
  so its peer is the dense tensor's DLPack hand-off: the figure shows what the extra
  buffers cost).
"""

import pytest

from conftest import MiB, aligned, measure, needs


@pytest.fixture(scope="module")
def dense(np, hurray):
    return hurray.from_numpy(aligned(np, MiB, "float32"), copy=False)


def test_capsule_create_hurray(benchmark, hurray, dense):
    needs(hurray, "Tensor.__hurray__")
    benchmark.group = "native capsule create"
    f = dense.__hurray__
    measure(benchmark, f, role="hurray")


def test_capsule_create_peer(benchmark, dense):
    benchmark.group = "native capsule create"
    f = dense.__dlpack__
    measure(benchmark, f, role="peer")


def test_round_trip_hurray(benchmark, hurray, dense):
    needs(hurray, "from_hurray")
    benchmark.group = "native round trip dense"
    f = hurray.from_hurray
    back = f(dense)
    assert back.shape == dense.shape
    measure(benchmark, lambda: f(dense), role="hurray")


def test_round_trip_peer(benchmark, hurray, dense):
    benchmark.group = "native round trip dense"
    f = hurray.from_dlpack
    measure(benchmark, lambda: f(dense), role="peer")


def test_round_trip_csr_hurray(benchmark, np, hurray, dense):
    needs(hurray, "from_hurray")
    benchmark.group = "native round trip csr (3 buffers)"
    nnz, rows = MiB // 4, 1024
    vals = aligned(np, nnz * 4, "float32")
    idx = aligned(np, nnz * 8, "uint64", fill=None)
    idx[...] = np.tile(np.arange(nnz // rows, dtype=np.uint64), rows)
    ptr = aligned(np, (rows + 1) * 8, "uint64", fill=None)
    ptr[...] = np.arange(rows + 1, dtype=np.uint64) * (nnz // rows)
    t = hurray.Tensor([vals, idx, ptr], hurray.float32, (rows, nnz // rows),
                      layout=hurray.CsrLayout(nnz))
    f = hurray.from_hurray
    assert f(t).nnz == nnz
    measure(benchmark, lambda: f(t), role="hurray")


def test_round_trip_csr_peer(benchmark, hurray, dense):
    benchmark.group = "native round trip csr (3 buffers)"
    f = hurray.from_dlpack
    measure(benchmark, lambda: f(dense), role="peer")
