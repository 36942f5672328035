"""NumPy interop for every Tier 1 element type (1 MiB arrays).

For each type: ``numpy.asarray(hurray.from_numpy(a))`` (NumPy -> hurray -> NumPy)
against NumPy's own DLPack round trip ``numpy.from_dlpack(a)`` of the same array.
Both share memory for every type but two:

- ``bool``: Hurray packs bool 8 per byte, so both directions copy (pack, then
  unpack); the case is memory-bound and reports GiB/s;
- ``bfloat16``: NumPy has no such type; the array is an ``ml_dtypes.bfloat16``
  array (skipped without ml_dtypes) and the peer round-trips the same bytes viewed
  as uint16 (NumPy cannot export ml_dtypes arrays through DLPack).
"""

import pytest

from conftest import MiB, aligned, measure

TIER1 = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "uint16",
         "int32", "uint32", "int64", "uint64", "bool"]
N = MiB


def make(np, name):
    if name == "bfloat16":
        ml = pytest.importorskip("ml_dtypes")
        a = aligned(np, N, "uint16", fill=0x3F80)
        return a.view(ml.bfloat16), a
    fill = True if name == "bool" else 1
    a = aligned(np, N, name, fill=fill)
    return a, a


@pytest.mark.parametrize("name", TIER1)
def test_numpy_dtype_hurray(benchmark, np, hurray, name):
    a, _ = make(np, name)
    benchmark.group = f"numpy round trip {name:>8} 1MiB"
    from_numpy, asarray = hurray.from_numpy, np.asarray
    back = asarray(from_numpy(a))
    assert back.dtype == a.dtype and back.shape == a.shape
    copies = name == "bool"
    measure(benchmark, lambda: asarray(from_numpy(a)), role="hurray",
            bytes_=a.nbytes if copies else None)


@pytest.mark.parametrize("name", TIER1)
def test_numpy_dtype_peer(benchmark, np, name):
    _, raw = make(np, name)
    benchmark.group = f"numpy round trip {name:>8} 1MiB"
    f = np.from_dlpack
    measure(benchmark, lambda: f(raw), role="peer")
