"""Ranks of the distributed-checkpoint tests (test_checkpoint.py): an importable
module, so that the spawned ranks of torch.multiprocessing can import what they
run. Each rank joins a gloo process group on the CPU."""

import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

from hurray.torch.checkpoint import HurrayStorageReader, HurrayStorageWriter

ROWS, COLS = 12, 6


def full_w():
    return torch.arange(ROWS * COLS, dtype=torch.float32).reshape(ROWS, COLS)


def full_b():
    return torch.linspace(-1, 1, 5, dtype=torch.bfloat16)


def full_e():  # an embedding sharded on its second dimension
    return (torch.arange(4 * 8, dtype=torch.int64) * 3).reshape(4, 8)


def rank_main(rank, world, port, job, args):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            init_method=f"tcp://127.0.0.1:{port}")
    try:
        JOBS[job](rank, world, *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()


def state(world, w=None, b=None, e=None):
    mesh = init_device_mesh("cpu", (world,))
    return {
        "model": {"w": distribute_tensor(full_w() if w is None else w, mesh, [Shard(0)]),
                  "e": distribute_tensor(full_e() if e is None else e, mesh, [Shard(1)]),
                  "b": distribute_tensor(full_b() if b is None else b, mesh, [Replicate()]),
                  "plain": torch.ones(3) * 2},
        "step": 7,
        "opt": {"lr": 0.125, "betas": (0.9, 0.99)},
    }


def empty_state(world):
    return state(world, w=torch.zeros(ROWS, COLS), b=torch.zeros(5, dtype=torch.bfloat16),
                 e=torch.zeros(4, 8, dtype=torch.int64))


def save(rank, world, path, fs_path):
    """The same state twice: through HurrayStorageWriter, and through DCP's own
    FileSystemWriter (the reference the tests compare with)."""
    dcp.save(state(world), storage_writer=HurrayStorageWriter(path))
    dcp.save(state(world), storage_writer=dcp.FileSystemWriter(fs_path))


def load_and_check(rank, world, path):
    reader = HurrayStorageReader(path)
    sd = empty_state(world)
    sd["model"]["plain"] = torch.zeros(3)
    sd["step"], sd["opt"] = 0, {"lr": 0.0, "betas": (0.0, 0.0)}
    dcp.load(sd, storage_reader=reader)
    m = sd["model"]
    assert torch.equal(m["w"].full_tensor(), full_w()), f"rank {rank}: w"
    assert torch.equal(m["e"].full_tensor(), full_e()), f"rank {rank}: e"
    assert torch.equal(m["b"].full_tensor(), full_b()), f"rank {rank}: b"
    assert m["w"].to_local().shape[0] == ROWS // world  # this rank's shard, resharded
    assert torch.equal(m["plain"], torch.ones(3) * 2)
    assert sd["step"] == 7 and sd["opt"] == {"lr": 0.125, "betas": (0.9, 0.99)}, sd


JOBS = {"save": save, "load_and_check": load_and_check}
