"""Construction: zeros, ones, full and empty against NumPy's, float32.

Sizes 1 KiB (call overhead), 1 MiB and 64 MiB (memory-bound: GiB/s). Both sides
allocate and drop the result in each call, so release is included.

Note on zeros: NumPy's ``zeros`` gets large blocks from ``calloc``, whose pages
the kernel maps zeroed on first touch; neither side's timing includes touching
the result, so at 64 MiB the figure compares what each returns ready to use.
"""

import pytest

from conftest import KiB, MiB, measure

SIZES = [pytest.param(KiB, id="1KiB"), pytest.param(MiB, id="1MiB"),
         pytest.param(64 * MiB, id="64MiB")]
KINDS = ["zeros", "ones", "full", "empty"]


def call(mod, kind, shape, dtype):
    if kind == "full":
        return lambda: mod.full(shape, 1.5, dtype=dtype)
    f = getattr(mod, kind)
    return lambda: f(shape, dtype=dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_construct_hurray(benchmark, hurray, kind, n):
    benchmark.group = f"construct {kind:>5} {n:>9} B"
    f = call(hurray, kind, (n // 4,), hurray.float32)
    measure(benchmark, f, role="hurray", bytes_=n if n >= MiB else None)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_construct_peer(benchmark, np, kind, n):
    benchmark.group = f"construct {kind:>5} {n:>9} B"
    f = call(np, kind, (n // 4,), np.float32)
    measure(benchmark, f, role="peer", bytes_=n if n >= MiB else None)
