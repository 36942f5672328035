"""Distributed checkpoints (hurray.torch.checkpoint): torch.distributed.checkpoint
saves and loads through HurrayStorageWriter/HurrayStorageReader with real gloo
process groups on the CPU (torch.multiprocessing, spawned ranks): DTensor shards
(on rows and on columns), replicated and plain tensors and non-tensor values;
saved on 2 ranks, loaded on 1 (no process group) and on 4 (resharded); each
rank's file is an ordinary .hrry file; a checkpoint never finished or damaged
is refused clearly; the same state saved by DCP's FileSystemWriter loads the
same values."""

import os
import pathlib
import socket
import sys

import pytest

torch = pytest.importorskip("torch")
dcp = pytest.importorskip("torch.distributed.checkpoint")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

import hurray  # noqa: E402
# DCP reports a rank's failure as a CheckpointException (a BaseException) holding it
from torch.distributed.checkpoint.api import CheckpointException  # noqa: E402
from hurray.torch.checkpoint import HurrayStorageReader, HurrayStorageWriter  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dcp_workers as w  # noqa: E402

TIMEOUT = 240
pytestmark = [
    pytest.mark.slow,  # spawned ranks, each importing torch (each job under TIMEOUT)
    # the sanitizer pass would preload libasan into every rank and gloo: slow, and it
    # tests torch's code; the checkpoint module is pure Python over hurray.save/open
    pytest.mark.skipif(bool(os.environ.get("HURRAY_EXPECT_ASAN")),
                       reason="process groups are not run under a preloaded sanitizer runtime; "
                              "the plain pass runs these tests")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ranks(world, job, *args):
    """Runs job on `world` spawned ranks of one gloo group; a rank that fails fails
    the test with its traceback."""
    import torch.multiprocessing as mp
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(HERE) + (os.pathsep + old if old else "")
    try:
        ctx = mp.start_processes(w.rank_main, args=(world, free_port(), job, args),
                                 nprocs=world, join=False, start_method="spawn")
        import time
        deadline = time.monotonic() + TIMEOUT - 30
        while not ctx.join(timeout=5):
            if time.monotonic() > deadline:
                for p in ctx.processes:
                    p.kill()
                pytest.fail(f"{job} on {world} ranks did not finish in time")
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One checkpoint saved on 2 ranks by HurrayStorageWriter, and the same state by
    DCP's FileSystemWriter."""
    root = tmp_path_factory.mktemp("dcp")
    ranks(2, "save", str(root / "hurray"), str(root / "fs"))
    return root


def test_each_rank_writes_one_ordinary_hrry_file(saved):
    files = sorted(p.name for p in (saved / "hurray").iterdir())
    assert files == [".metadata", "__0_0.hrry", "__1_0.hrry"]
    seen = {}
    for name in ("__0_0.hrry", "__1_0.hrry"):
        with hurray.open(saved / "hurray" / name) as f:
            assert f.verify().checksums  # written with data checksums
            seen.update({k: hurray.torch.load_file(saved / "hurray" / name)[k] for k in f.keys()})
    # a shard of a DTensor is named by its offsets: rank 0 holds rows 0..5 of w,
    # rank 1 rows 6..11; e is split on its columns; a plain tensor keeps its name
    assert torch.equal(seen["model.w@[0,0]"], w.full_w()[:6])
    assert torch.equal(seen["model.w@[6,0]"], w.full_w()[6:])
    assert torch.equal(seen["model.e@[0,0]"], w.full_e()[:, :4])
    assert torch.equal(seen["model.e@[0,4]"], w.full_e()[:, 4:])
    assert torch.equal(seen["model.b@[0]"], w.full_b())  # replicated: written once
    assert seen["model.b@[0]"].dtype == torch.bfloat16
    assert torch.equal(seen["model.plain"], torch.ones(3) * 2)
    assert {"step", "opt.lr", "opt.betas"} <= set(seen)  # non-tensor values, as bytes
    assert not list((saved / "hurray").glob("*.tmp")) and not list((saved / "hurray").glob(".*tmp"))


def empty():
    return {"model": {"w": torch.zeros(w.ROWS, w.COLS), "e": torch.zeros(4, 8, dtype=torch.int64),
                    "b": torch.zeros(5, dtype=torch.bfloat16), "plain": torch.zeros(3)},
          "step": 0, "opt": {"lr": 0.0, "betas": (0.0, 0.0)}}


@pytest.mark.parametrize("reader", ["hurray", "fs"])
def test_load_on_one_process_without_a_group(saved, reader):
    # "fs": DCP's own FileSystemWriter/Reader on the same state, the reference
    sd = empty()
    dcp.load(sd, storage_reader=HurrayStorageReader(saved / "hurray") if reader == "hurray"
             else dcp.FileSystemReader(saved / "fs"), no_dist=True)
    assert torch.equal(sd["model"]["w"], w.full_w())
    assert torch.equal(sd["model"]["e"], w.full_e())
    assert torch.equal(sd["model"]["b"], w.full_b())
    assert torch.equal(sd["model"]["plain"], torch.ones(3) * 2)
    assert sd["step"] == 7 and sd["opt"] == {"lr": 0.125, "betas": (0.9, 0.99)}


def test_load_on_four_ranks_reshards(saved):
    ranks(4, "load_and_check", str(saved / "hurray"))


def test_a_checkpoint_never_finished_is_refused(saved, tmp_path):
    import shutil
    half = tmp_path / "half"
    shutil.copytree(saved / "hurray", half)
    (half / ".metadata").unlink()  # the writer writes it last
    with pytest.raises(CheckpointException, match="holds no finished checkpoint"):
        dcp.load({"step": 0}, storage_reader=HurrayStorageReader(half), no_dist=True)


def test_a_damaged_rank_file_is_refused_with_verify(saved, tmp_path):
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(saved / "hurray", bad)
    p = bad / "__1_0.hrry"
    raw = bytearray(p.read_bytes())
    where = raw.find(w.full_w()[6:].numpy().tobytes())  # rank 1's rows of w
    assert where > 0
    raw[where + 5] ^= 0xFF
    p.write_bytes(bytes(raw))
    sd = empty()
    with pytest.raises(CheckpointException, match="is damaged: its data .* has CRC-32C"):
        dcp.load(sd, storage_reader=HurrayStorageReader(bad, verify=True), no_dist=True)


def test_metadata_of_another_writer_is_refused(saved):
    with pytest.raises(CheckpointException, match="metadata of .* was not written by Hurray"):
        dcp.load({"model": {"plain": torch.zeros(3)}},
                 storage_reader=HurrayStorageReader(saved / "fs"), no_dist=True)


def test_save_without_a_group_then_load(tmp_path):
    sd = {"a": torch.arange(10.0), "n": {"k": torch.ones(2, 2, dtype=torch.float16)}, "s": "x"}
    dcp.save(sd, storage_writer=HurrayStorageWriter(tmp_path / "c"), no_dist=True)
    back = {"a": torch.zeros(10), "n": {"k": torch.zeros(2, 2, dtype=torch.float16)}, "s": ""}
    dcp.load(back, storage_reader=HurrayStorageReader(tmp_path / "c"), no_dist=True)
    assert torch.equal(back["a"], sd["a"]) and torch.equal(back["n"]["k"], sd["n"]["k"])
    assert back["s"] == "x"
    assert hurray.load(tmp_path / "c" / "__0_0.hrry")["a"].shape == (10,)
