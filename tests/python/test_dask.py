"""hurray tensors on a real local Dask cluster (distributed.LocalCluster with
two worker processes): client.scatter, client.submit, results moving between
workers, for dense, int4 per-block quantized, CSR and composite tensors; a large
tensor arrives on the other worker without a copy (hurray/_dask.py realigns it in
the block Dask read it into; test_dask_frames.py has the details); the dask.sizeof
entry point makes Dask count a tensor by its buffers (docs/guide/processes.md,
docs/internals/decisions.md)."""

import os
import pathlib
import sys

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")

import hurray  # noqa: E402
import mp_workers as w  # noqa: E402
from distributed.protocol import deserialize, serialize  # noqa: E402

HERE = str(pathlib.Path(__file__).resolve().parent)
KINDS = w.kinds(5)
TIMEOUT = 120


ROOT = pathlib.Path(HERE).parents[1]


def dask_sizeof_entry_point():
    """The dask.sizeof entry point pyproject.toml declares, as 'name = module:function'."""
    import re
    text = (ROOT / "pyproject.toml").read_text()  # (no tomllib before Python 3.11)
    m = re.search(r'^\[project\.entry-points\."dask\.sizeof"\]\n(\w+) = "([\w.]+:\w+)"$',
                  text, re.M)
    assert m, "pyproject.toml declares no dask.sizeof entry point"
    return f"{m[1]} = {m[2]}"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # the workers see the dask.sizeof entry point an installed hurray declares: a
    # dist-info folder on their path carrying pyproject.toml's line
    eps = tmp_path_factory.mktemp("entry_points")
    info = eps / "hurray_test_entry_points-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hurray-test-entry-points\n"
                                   "Version: 0\n")
    (info / "entry_points.txt").write_text(f"[dask.sizeof]\n{dask_sizeof_entry_point()}\n")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([HERE, str(eps)] + ([old] if old else []))
    sys.path.append(str(eps))  # a spawned worker starts with this process's sys.path
    try:
        with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                      dashboard_address=None) as cluster:
            with distributed.Client(cluster, timeout=TIMEOUT) as c:
                yield c
    finally:
        sys.path.remove(str(eps))
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def fp(x):
    return w.fingerprint(x)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_dask_serializes_to_zero_copy_frames(kind):
    t = KINDS[kind]
    header, frames = serialize(t)
    assert header["serializer"] == "dask"  # hurray/_dask.py
    assert sum(len(memoryview(f).cast("B")) for f in frames) < 4096 + sum(
        h.byte_size for m in (t.members if isinstance(t, hurray.Composite) else [t])
        for h in m.buffer_handles)
    if kind == "dense":
        big = [f for f in frames if memoryview(f).nbytes == 4000]
        assert len(big) == 1 and np.frombuffer(big[0], np.uint8).ctypes.data == t.data_ptr()
    assert fp(deserialize(header, frames)) == fp(t)


@pytest.mark.slow  # a Dask LocalCluster (worker processes)
def test_scatter_and_submit_every_kind(client):
    futures = {k: client.scatter(t) for k, t in KINDS.items()}
    got = {k: client.submit(w.fingerprint, f).result(TIMEOUT) for k, f in futures.items()}
    assert got == {k: fp(t) for k, t in KINDS.items()}
    back = {k: f.result(TIMEOUT) for k, f in futures.items()}
    assert {k: fp(t) for k, t in back.items()} == got


@pytest.mark.slow  # a Dask LocalCluster (worker processes)
def test_results_move_between_workers(client):
    a, b = sorted(client.scheduler_info()["workers"])
    made = client.submit(w.kinds, 5, workers=[a], allow_other_workers=False)
    for kind, t in KINDS.items():
        part = client.submit(w.pick, made, kind, workers=[a], allow_other_workers=False)
        used = client.submit(w.fingerprint, part, workers=[b], allow_other_workers=False)
        assert used.result(TIMEOUT) == fp(t)
        assert fp(part.result(TIMEOUT)) == fp(t)
    assert client.submit(w.worker_address, workers=[b], pure=False).result(TIMEOUT) == b


def receiver_stats():
    from hurray import _dask
    return dict(_dask.stats)


@pytest.mark.slow  # a Dask LocalCluster (worker processes)
def test_a_large_tensor_moves_between_workers_without_a_copy(client):
    a, b = sorted(client.scheduler_info()["workers"])
    before = client.submit(receiver_stats, workers=[b], pure=False).result(TIMEOUT)
    made = client.submit(w.dense, 3 << 20, 1, workers=[a], allow_other_workers=False,
                         pure=False)  # 12 MiB
    total = client.submit(w.checksum, made, workers=[b], allow_other_workers=False, pure=False)
    want = float(np.sum(np.arange(3 << 20, dtype=np.float64) + 1))
    assert total.result(TIMEOUT) == want
    after = client.submit(receiver_stats, workers=[b], pure=False).result(TIMEOUT)
    assert after["wrapped"] > before["wrapped"], (before, after)
    assert after["copied"] == before["copied"], (before, after)


def test_dask_counts_a_tensor_by_its_buffers():
    from dask.sizeof import sizeof
    from dask.utils import Dispatch
    fresh = Dispatch("sizeof")  # what dask.sizeof hands each entry point
    fresh.register(object, lambda x: 0)
    module, function = dask_sizeof_entry_point().split("=")[1].strip().split(":")
    getattr(__import__(module, fromlist=[function]), function)(fresh)
    for kind, t in KINDS.items():
        members = t.members if isinstance(t, hurray.Composite) else [t]
        data = sum(h.byte_size for m in members for h in m.buffer_handles)
        assert data <= fresh(t) <= data + 4096, kind
    assert sizeof(KINDS["dense"]) > 0  # dask's own table still answers


@pytest.mark.slow  # a Dask LocalCluster (worker processes)
def test_the_workers_count_tensors_by_their_buffers(client):
    # on the workers the entry point is found (the fixture's dist-info), so the
    # scheduler learns a tensor's real size, as it learns a NumPy array's
    big = client.submit(w.dense, 1 << 20, 0, pure=False)  # 4 MiB
    arr = client.submit(np.zeros, 1 << 20, np.float32, pure=False)
    big.result(TIMEOUT), arr.result(TIMEOUT)
    sizes = client.nbytes([big.key, arr.key], summary=False)
    assert sizes[big.key] >= 4 << 20 and sizes[arr.key] >= 4 << 20, sizes


@pytest.mark.slow  # a Dask LocalCluster (worker processes)
def test_an_error_in_a_task_reaches_the_client(client):
    with pytest.raises(ValueError, match="boom in a worker"):
        client.submit(w.fail, KINDS["dense"]).result(TIMEOUT)
