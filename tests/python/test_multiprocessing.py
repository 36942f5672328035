"""hurray tensors across processes: multiprocessing.Pool with fork, spawn and
forkserver, ProcessPoolExecutor, multiprocessing.Queue and torch's DataLoader
with workers. An error in a worker reaches the parent as an exception; every
wait has a timeout, so nothing here can hang (docs/guide/processes.md)."""

import concurrent.futures
import multiprocessing
import pickle

import numpy as np
import pytest

import hurray
import mp_workers as w

TIMEOUT = 120
# JAX (imported by earlier tests of the suite) warns on every fork; the children
# here never touch JAX, and every wait below has a timeout.
pytestmark = [pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning"),
              pytest.mark.slow]  # worker processes
METHODS = [m for m in ("fork", "spawn", "forkserver")
           if m in multiprocessing.get_all_start_methods()]


@pytest.fixture(scope="module", params=METHODS)
def pool(request):
    ctx = multiprocessing.get_context(request.param)
    with ctx.Pool(2) as p:
        yield p


def test_pool_map_sends_and_returns_tensors(pool):
    sent = [w.dense(1000, k) for k in range(4)]
    got = pool.map_async(w.double, sent).get(TIMEOUT)
    for t, g in zip(sent, got):
        assert isinstance(g, hurray.Tensor)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(t) * 2)


def test_pool_moves_every_kind_both_ways(pool):
    kinds = w.kinds(3)
    got = pool.map_async(w.echo, list(kinds.values())).get(TIMEOUT)
    assert [w.fingerprint(g) for g in got] == [w.fingerprint(t) for t in kinds.values()]
    made = pool.apply_async(w.kinds, (3,)).get(TIMEOUT)  # built in the child
    assert {k: w.fingerprint(v) for k, v in made.items()} == \
        {k: w.fingerprint(v) for k, v in kinds.items()}


def test_an_error_in_a_pool_worker_is_raised_in_the_parent(pool):
    with pytest.raises(ValueError, match="boom in a worker"):
        pool.map_async(w.fail, [w.dense(8)]).get(TIMEOUT)


def test_a_result_that_cannot_be_pickled_is_raised_in_the_parent(pool, tmp_path):
    path = tmp_path / "f.hrry"
    hurray.save(path, {"w": w.dense(8)})
    with pytest.raises(Exception, match="closed hurray.File"):
        pool.apply_async(w.closed_file, (str(path),)).get(TIMEOUT)


@pytest.mark.parametrize("method", ["spawn"])
def test_process_pool_executor(method):
    ctx = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        t = w.dense(5000, 1)
        assert ex.submit(w.checksum, t).result(TIMEOUT) == pytest.approx(w.checksum(t))
        q = w.kinds(1)["int4"]
        assert w.fingerprint(ex.submit(w.echo, q).result(TIMEOUT)) == w.fingerprint(q)
        with pytest.raises(ValueError, match="boom in a worker"):
            ex.submit(w.fail, t).result(TIMEOUT)


@pytest.mark.parametrize("method", METHODS)
def test_queue_between_processes(method):
    ctx = multiprocessing.get_context(method)
    q = ctx.Queue()
    p = ctx.Process(target=w.put_tensors, args=(q, 3))
    p.start()
    try:
        got = [q.get(timeout=TIMEOUT) for _ in range(4)]
    finally:
        p.join(TIMEOUT)
    assert got[-1] is None
    for k, t in enumerate(got[:-1]):
        np.testing.assert_array_equal(np.asarray(t), np.arange(1000, dtype=np.float32) + k)


def test_multiprocessing_pickles_with_its_default_protocol():
    # what a Pool or Queue does to a tensor (ForkingPickler, protocol 4 or 5)
    from multiprocessing.reduction import ForkingPickler
    t = w.kinds()["composite"]
    assert w.fingerprint(pickle.loads(ForkingPickler.dumps(t))) == w.fingerprint(t)


# ---- torch DataLoader ----------------------------------------------------------------

torch = pytest.importorskip("torch", reason="torch is not installed")
import dl_datasets as ds  # noqa: E402 - needs torch


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_with_workers_returns_hurray_batches(context):
    loader = torch.utils.data.DataLoader(ds.Samples(16), batch_size=4, num_workers=2,
                                         collate_fn=hurray.collate, timeout=TIMEOUT,
                                         multiprocessing_context=context)
    seen = []
    for dense, quantized, idx in loader:
        assert isinstance(dense, hurray.Tensor) and dense.shape == (4, 64)
        assert isinstance(quantized, list) and all(q.quantization for q in quantized)
        assert isinstance(idx, torch.Tensor)
        np.testing.assert_array_equal(np.asarray(dense)[:, 0], idx.numpy())
        seen += idx.tolist()
    assert sorted(seen) == list(range(16))


def test_dataloader_without_batching_passes_tensors_through():
    loader = torch.utils.data.DataLoader(ds.Samples(6), batch_size=None, num_workers=2,
                                         timeout=TIMEOUT)
    got = [(float(np.asarray(d)[0]), i) for d, _, i in loader]
    assert sorted(got) == [(float(i), i) for i in range(6)]


def test_an_error_in_a_dataloader_worker_is_raised_in_the_parent():
    loader = torch.utils.data.DataLoader(ds.Failing(16), batch_size=2, num_workers=2,
                                         collate_fn=hurray.collate, timeout=TIMEOUT)
    with pytest.raises(ValueError, match="boom in a DataLoader worker"):
        for _ in loader:
            pass


def test_a_batch_that_cannot_be_pickled_is_raised_in_the_parent_not_dropped():
    # without the check in hurray.collate the result queue's feeder thread would
    # print the error and drop the batch, and the parent would wait for it
    import capi
    if capi.usable() is not None:
        pytest.skip(capi.usable())
    loader = torch.utils.data.DataLoader(ds.DeviceMemory(4), batch_size=2, num_workers=2,
                                         collate_fn=hurray.collate, timeout=TIMEOUT,
                                         multiprocessing_context="fork")
    with pytest.raises(hurray.UnsupportedError, match="device memory"):
        next(iter(loader))


def test_the_dataloader_recipe_of_the_docs_runs(tmp_path):
    # docs/guide/processes.md § multiprocessing and torch's DataLoader, run as written (it
    # writes its file of 32 samples), with a timeout added
    import pathlib
    import re
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide" / "processes.md").read_text()
    recipe = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "class Shards" in b)
    path = tmp_path / "data.hrry"
    code = recipe.replace('"data.hrry"', repr(str(path))).replace(
        "collate_fn=hurray.collate)", f"collate_fn=hurray.collate, timeout={TIMEOUT})")
    assert code != recipe
    ns = {"__name__": "recipe"}
    exec(compile(code, "docs/guide/processes.md", "exec"), ns)  # noqa: S102 - our own docs
    x, idx = ns["x"], ns["idx"]  # the last batch
    assert isinstance(x, hurray.Tensor) and x.shape == (8, 16)
    np.testing.assert_array_equal(np.asarray(x)[:, 0], idx.numpy().astype(np.float32))
