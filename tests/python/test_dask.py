"""hurray tensors on a real local Dask cluster (distributed.LocalCluster with
two worker processes): client.scatter, client.submit, results moving between
workers, for dense, int4 per-block quantized, CSR and composite tensors. Dask's
pickle serializer (protocol 5) already gives zero-copy frames, so hurray
registers no Dask serializer (docs/processes.md)."""

import os
import pathlib

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


@pytest.fixture(scope="module")
def client():
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = HERE + (os.pathsep + old if old else "")
    try:
        with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                      dashboard_address=None) as cluster:
            with distributed.Client(cluster, timeout=TIMEOUT) as c:
                yield c
    finally:
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
    assert header["serializer"] == "pickle"
    assert sum(len(memoryview(f).cast("B")) for f in frames) < 4096 + sum(
        h.byte_size for m in (t.members if isinstance(t, hurray.Composite) else [t])
        for h in m.buffer_handles)
    if kind == "dense":
        big = [f for f in frames if memoryview(f).nbytes == 4000]
        assert len(big) == 1 and np.frombuffer(big[0], np.uint8).ctypes.data == t.data_ptr()
    assert fp(deserialize(header, frames)) == fp(t)


def test_scatter_and_submit_every_kind(client):
    futures = {k: client.scatter(t) for k, t in KINDS.items()}
    got = {k: client.submit(w.fingerprint, f).result(TIMEOUT) for k, f in futures.items()}
    assert got == {k: fp(t) for k, t in KINDS.items()}
    back = {k: f.result(TIMEOUT) for k, f in futures.items()}
    assert {k: fp(t) for k, t in back.items()} == got


def test_results_move_between_workers(client):
    a, b = sorted(client.scheduler_info()["workers"])
    made = client.submit(w.kinds, 5, workers=[a], allow_other_workers=False)
    for kind, t in KINDS.items():
        part = client.submit(w.pick, made, kind, workers=[a], allow_other_workers=False)
        used = client.submit(w.fingerprint, part, workers=[b], allow_other_workers=False)
        assert used.result(TIMEOUT) == fp(t)
        assert fp(part.result(TIMEOUT)) == fp(t)
    assert client.submit(w.worker_address, workers=[b], pure=False).result(TIMEOUT) == b


def test_an_error_in_a_task_reaches_the_client(client):
    with pytest.raises(ValueError, match="boom in a worker"):
        client.submit(w.fail, KINDS["dense"]).result(TIMEOUT)
