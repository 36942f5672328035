"""Sparse: COO, CSR and CSC build, SciPy round trip, file round trip.

A 65,536 x 65,536 float32 matrix with 2**20 stored elements (random positions),
index arrays int64/uint64 and 64-byte aligned so hurray can share them.

- build: a hurray tensor over existing arrays (``hurray.sparse_coo``, ``hurray.Tensor``
  with ``CsrLayout`` / ``CscLayout``; hurray validates every index: bounds,
  monotone pointers, sortedness) against SciPy building the same matrix over the
  same arrays with the validation SciPy has: ``coo_array`` (checks bounds) and
  ``csr_array`` / ``csc_array`` followed by ``check_format(full_check=True)``
  (bounds and monotone pointers; SciPy's plain constructor checks neither and
  takes microseconds). ``sparse_coo`` is measured twice: ``is_sorted=None`` (the
  order is found by looking, in NumPy) and ``is_sorted=True`` (checked in C).
  GiB/s counts the bytes of the values and index buffers;
- SciPy round trip: ``hurray.from_scipy(m).to_scipy()`` against SciPy wrapping
  the same arrays again;
- file round trip (needs hurray.save/load): against ``scipy.sparse.save_npz``
  (uncompressed) and ``load_npz``.
"""

import pytest

from conftest import aligned, measure, needs

SHAPE = (65536, 65536)
NNZ = 1 << 20


@pytest.fixture(scope="module")
def mats(np):
    sp = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(7)
    flat = np.unique(rng.integers(0, SHAPE[0] * SHAPE[1], size=NNZ + NNZ // 8))[:NNZ]
    rng.shuffle(flat)
    flat = np.sort(flat[: NNZ])
    rows, cols = (flat // SHAPE[1]).astype(np.int64), (flat % SHAPE[1]).astype(np.int64)
    vals = np.arange(1, len(flat) + 1, dtype=np.float32)

    def al(x, dtype):
        out = aligned(np, x.size * np.dtype(dtype).itemsize, dtype, fill=None)
        out[...] = x
        return out

    csr = sp.csr_array((vals, (rows, cols)), shape=SHAPE)
    csc = csr.tocsc()
    out = {"sp": sp, "nnz": len(flat), "rows": al(rows, "int64"), "cols": al(cols, "int64"),
           "vals": al(vals, "float32")}
    out["coo_idx"] = al(np.stack([rows, cols], axis=1).ravel(), "uint64").reshape(-1, 2)
    for name, m in (("csr", csr), ("csc", csc)):
        out[name] = (al(m.data, "float32"), al(m.indices.astype(np.int64), "int64"),
                     al(m.indptr.astype(np.int64), "int64"))
    return out


def nbytes(*arrays):
    return sum(a.nbytes for a in arrays)


def test_build_coo_hurray(benchmark, hurray, mats):
    benchmark.group = "sparse build coo"
    v, idx = mats["vals"], mats["coo_idx"]
    f = hurray.sparse_coo
    assert f(v, idx, SHAPE).nnz == mats["nnz"]
    measure(benchmark, lambda: f(v, idx, SHAPE), role="hurray", bytes_=nbytes(v, idx))


def test_build_coo_sorted_hurray(benchmark, hurray, mats):
    benchmark.group = "sparse build coo"
    v, idx = mats["vals"], mats["coo_idx"]
    f = hurray.sparse_coo
    measure(benchmark, lambda: f(v, idx, SHAPE, is_sorted=True), role="hurray",
            bytes_=nbytes(v, idx))


def test_build_coo_peer(benchmark, mats):
    benchmark.group = "sparse build coo"
    v, r, c = mats["vals"], mats["rows"], mats["cols"]
    f = mats["sp"].coo_array
    measure(benchmark, lambda: f((v, (r, c)), shape=SHAPE), role="peer",
            bytes_=nbytes(v, r, c))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_build_compressed_hurray(benchmark, hurray, mats, fmt):
    benchmark.group = f"sparse build {fmt}"
    v, idx, ptr = mats[fmt]
    layout = (hurray.CsrLayout if fmt == "csr" else hurray.CscLayout)(mats["nnz"])
    idx, ptr = idx.view("uint64"), ptr.view("uint64")
    T, f32 = hurray.Tensor, hurray.float32
    assert T([v, idx, ptr], f32, SHAPE, layout=layout).nnz == mats["nnz"]
    measure(benchmark, lambda: T([v, idx, ptr], f32, SHAPE, layout=layout), role="hurray",
            bytes_=nbytes(v, idx, ptr))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_build_compressed_peer(benchmark, mats, fmt):
    benchmark.group = f"sparse build {fmt}"
    v, idx, ptr = mats[fmt]
    f = mats["sp"].csr_array if fmt == "csr" else mats["sp"].csc_array

    def build():
        m = f((v, idx, ptr), shape=SHAPE)
        m.check_format(full_check=True)
        return m

    measure(benchmark, build, role="peer", bytes_=nbytes(v, idx, ptr))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_scipy_round_trip_hurray(benchmark, hurray, mats, fmt):
    benchmark.group = f"sparse scipy round trip {fmt}"
    v, idx, ptr = mats[fmt]
    cls = mats["sp"].csr_array if fmt == "csr" else mats["sp"].csc_array
    m = cls((v, idx, ptr), shape=SHAPE)
    from_scipy = hurray.from_scipy
    back = from_scipy(m).to_scipy()
    assert back.nnz == m.nnz and back.format == fmt
    measure(benchmark, lambda: from_scipy(m).to_scipy(), role="hurray",
            bytes_=nbytes(m.data, m.indices, m.indptr))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_scipy_round_trip_peer(benchmark, mats, fmt):
    benchmark.group = f"sparse scipy round trip {fmt}"
    v, idx, ptr = mats[fmt]
    cls = mats["sp"].csr_array if fmt == "csr" else mats["sp"].csc_array
    m = cls((v, idx, ptr), shape=SHAPE)
    measure(benchmark, lambda: cls((m.data, m.indices, m.indptr), shape=m.shape), role="peer",
            bytes_=nbytes(m.data, m.indices, m.indptr))


def test_file_round_trip_hurray(benchmark, hurray, mats, tmp_path):
    needs(hurray, "save", "load")
    benchmark.group = "sparse file round trip csr"
    v, idx, ptr = mats["csr"]
    t = hurray.Tensor([v, idx.view("uint64"), ptr.view("uint64")], hurray.float32, SHAPE,
                      layout=hurray.CsrLayout(mats["nnz"]))
    path = str(tmp_path / "m.hrry")
    save, load = hurray.save, hurray.load

    def run():
        save(path, {"m": t})
        back = load(path)["m"]
        return back.to_scipy().data.sum()

    measure(benchmark, run, role="hurray", bytes_=nbytes(v, idx, ptr))


def test_file_round_trip_peer(benchmark, mats, tmp_path):
    benchmark.group = "sparse file round trip csr"
    sp = mats["sp"]
    v, idx, ptr = mats["csr"]
    m = sp.csr_array((v, idx, ptr), shape=SHAPE)
    path = str(tmp_path / "m.npz")

    def run():
        sp.save_npz(path, m, compressed=False)
        return sp.load_npz(path).data.sum()

    measure(benchmark, run, role="peer", bytes_=nbytes(v, idx, ptr))
