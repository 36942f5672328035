#!/usr/bin/env python3
"""hurray.torch against safetensors.torch: load_file and save_file, in one run.

A benchmark, not a test (never part of the test command). For each size (256 MiB and
1 GiB by default) it builds a state dict of 64 float32 tensors and measures, in
``--rounds`` interleaved rounds (median and best reported; ratio = hurray / safetensors
of the medians, and of the bests, which other work on a shared machine disturbs less;
lower is better for hurray):

* ``load``: ``load_file`` + touching every byte (``x.sum()`` of every tensor), both
  files warm in the page cache (each read once before timing), so the figure is the
  CPU cost, not the disk's. hurray maps the file copy-on-write (no byte copied at
  load); safetensors maps it too.
* ``save``: ``save_file`` of the same state dict at equal durability, each save
  starting from a clean page cache (``os.sync()`` before it, not timed), hurray and
  safetensors taking turns to go first. safetensors
  writes without fsync, so it is compared with ``durable=False`` (hurray still writes a
  temporary file and renames it: atomic); and safetensors + ``os.fsync`` of the file
  with hurray's default ``durable=True`` (fsync of the file and the folder).
* RSS growth (VmRSS, in a fresh process) after ``load_file`` without a touch: a
  zero-copy load costs only the pages touched.

    python bench/framework_torch.py [--sizes 256,1024] [--rounds 5] [--dir DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import hurray.torch as ht

try:
    import safetensors.torch as st
except ImportError:  # pragma: no cover
    sys.exit("framework_torch: pip install safetensors")

MiB = 1 << 20
TENSORS = 64


def state(size_mib):
    per = size_mib * MiB // TENSORS // 4
    g = torch.Generator().manual_seed(0)
    return {f"layer{i:02d}.weight": torch.randn(per // 1024, 1024, generator=g)
            for i in range(TENSORS)}


def touch(d):
    total = 0.0
    for v in d.values():
        total += float(v.sum())
    return total


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def st_save_fsync(sd, path):
    st.save_file(sd, path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def rss_after_load(kind, path):
    code = f"""
import sys
def rss():
    for ln in open('/proc/self/status'):
        if ln.startswith('VmRSS:'):
            return int(ln.split()[1]) / 1024
import torch
import {'hurray.torch as m' if kind == 'hurray' else 'safetensors.torch as m'}
before = rss()
d = m.load_file({path!r})
print(rss() - before)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def report(name, ours, theirs):
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"  {name:<28} hurray {mo * 1e3:8.1f} ms (best {min(ours) * 1e3:7.1f})   "
          f"safetensors {mt * 1e3:8.1f} ms (best {min(theirs) * 1e3:7.1f})   "
          f"ratio {mo / mt:5.2f} (best/best {min(ours) / min(theirs):5.2f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,1024")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    folder = a.dir or tempfile.mkdtemp(prefix="hurray-bench-")
    for size in (int(s) for s in a.sizes.split(",")):
        sd = state(size)
        hp, sp = os.path.join(folder, "m.hrry"), os.path.join(folder, "m.safetensors")
        ht.save_file(sd, hp, durable=False)
        st.save_file(sd, sp)
        touch(ht.load_file(hp))
        touch(st.load_file(sp))
        print(f"{size} MiB, {TENSORS} float32 tensors, {a.rounds} rounds, torch threads "
              f"{a.threads}")
        lo, lt, so, stt, sfo, sft = [], [], [], [], [], []
        for r in range(a.rounds):
            # who goes first alternates, and every save starts from a clean page
            # cache (os.sync, not timed): the write-back of the step before would
            # otherwise land on whichever save comes next
            pairs = [
                (lo, lambda: touch(ht.load_file(hp)), False),
                (lt, lambda: touch(st.load_file(sp)), False),
                (so, lambda: ht.save_file(sd, hp, durable=False), True),
                (stt, lambda: st.save_file(sd, sp), True),
                (sfo, lambda: ht.save_file(sd, hp), True),
                (sft, lambda: st_save_fsync(sd, sp), True),
            ]
            for k in range(0, len(pairs), 2):
                first, second = (pairs[k], pairs[k + 1]) if r % 2 == 0 else (pairs[k + 1], pairs[k])
                for out, fn, is_save in (first, second):
                    if is_save:
                        os.sync()
                    out.append(timed(fn))
        report("load_file + touch", lo, lt)
        report("save_file (no fsync)", so, stt)
        report("save_file (fsync)", sfo, sft)
        print(f"  RSS growth after load_file, no touch: hurray {rss_after_load('hurray', hp):.1f} "
              f"MiB, safetensors {rss_after_load('st', sp):.1f} MiB")
        os.remove(hp)
        os.remove(sp)


if __name__ == "__main__":
    main()
