#!/usr/bin/env python3
"""Distributed checkpoints: `torch.distributed.checkpoint` save and load through
hurray's storage (``hurray.torch.checkpoint.HurrayStorageWriter``/``Reader``) against
DCP's own ``FileSystemWriter``/``FileSystemReader``, in one run, on the same state.

A benchmark, not a test. The state is ``--tensors`` float32 tensors of ``--mib`` MiB in
all (a model's state dict), saved and loaded in one process (``no_dist=True``: DCP
plans as it does for one rank). Both writers make their files durable (fsync: DCP's
``sync_files=True`` default, hurray's ``durable=True``), so both pay the disk. Rounds
alternate the two storages; each round saves into a fresh folder, then loads into
preallocated tensors (what a training job does on restart) and checks the values.
Reported: median and best seconds per operation, and the ratio FileSystem time / hurray
time (above 1: hurray faster). The issue's target: hurray >= 0.9x DCP's own.

    python bench/dcp.py [--mib 1024] [--tensors 64] [--rounds 5] [--dir /tmp]
"""
import argparse
import json
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import torch
import torch.distributed.checkpoint as dcp

from hurray.torch.checkpoint import HurrayStorageReader, HurrayStorageWriter


def state(n, total_bytes, fill):
    per = total_bytes // n // 4
    return {f"layers.{i}.weight": (torch.full((per,), float(i)) if fill else torch.empty(per))
            for i in range(n)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    warnings.filterwarnings("ignore", message="torch.distributed is disabled")
    src = state(a.tensors, a.mib << 20, fill=True)
    dst = state(a.tensors, a.mib << 20, fill=False)
    kinds = {"hurray": (HurrayStorageWriter, HurrayStorageReader),
             "fs": (dcp.FileSystemWriter, dcp.FileSystemReader)}
    times = {(k, op): [] for k in kinds for op in ("save", "load")}
    root = Path(tempfile.mkdtemp(prefix="bench-dcp-", dir=a.dir))
    try:
        for r in range(a.rounds):
            for k in (list(kinds) if r % 2 == 0 else list(kinds)[::-1]):
                writer, reader = kinds[k]
                path = root / f"{k}-{r}"
                t0 = time.perf_counter()
                dcp.save(src, storage_writer=writer(path), no_dist=True)
                t1 = time.perf_counter()
                for v in dst.values():
                    v.zero_()
                t2 = time.perf_counter()
                dcp.load(dst, storage_reader=reader(path), no_dist=True)
                t3 = time.perf_counter()
                assert all(torch.equal(dst[n], src[n]) for n in src), k
                times[(k, "save")].append(t1 - t0)
                times[(k, "load")].append(t3 - t2)
                shutil.rmtree(path)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = {}
    for op in ("save", "load"):
        h, f = times[("hurray", op)], times[("fs", op)]
        out[op] = {"hurray_median_s": statistics.median(h), "hurray_best_s": min(h),
                   "fs_median_s": statistics.median(f), "fs_best_s": min(f),
                   "ratio_median": statistics.median(f) / statistics.median(h)}
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"DCP, {a.tensors} float32 tensors, {a.mib} MiB, {a.rounds} rounds, one process")
    for op, d in out.items():
        print(f"  {op}: hurray {d['hurray_median_s'] * 1e3:8.1f} ms (best "
              f"{d['hurray_best_s'] * 1e3:.1f}), FileSystem{'Writer' if op == 'save' else 'Reader'}"
              f" {d['fs_median_s'] * 1e3:8.1f} ms (best {d['fs_best_s'] * 1e3:.1f}): "
              f"{d['ratio_median']:.2f}x")


if __name__ == "__main__":
    main()
