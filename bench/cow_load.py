#!/usr/bin/env python3
"""Copy-on-write loads: time and memory of ``hurray.load`` (the default ``mmap=True``,
a private copy-on-write mapping) + ``to_torch()`` against ``safetensors.torch.load_file``.

A benchmark, not a test (never part of the test command). For each size (256 MiB and
1 GiB by default) it writes one file of each format holding the same 64 float32 tensors
(in ``--dir``, a temporary folder by default), reads both files once so that every
measurement finds them in the page cache (the figures are CPU and memory costs, not the
disk's), then measures in one run:

(a) time, ``--rounds`` interleaved rounds, median and best: load + ``to_torch()`` of
    every tensor (safetensors' load gives torch tensors already) + a touch of every
    tensor, two ways: ``sum`` (``x.sum()``: every byte) and ``page`` (one value per
    4 KiB page); then the ratio hurray time / safetensors time. The same for
    ``mmap="r"``, where ``to_torch()`` must copy (PyTorch cannot be handed read-only
    memory), to show what the copy-on-write default saves.

(b) memory, each in a fresh process: VmRSS, RssAnon (memory of the process's own:
    copied pages) and RssFile (pages of the file's cache mapped into it) growth after
    the load without a touch, after reading 1/8 of the tensors (``sum``), and after
    writing the same 1/8 in place (``add_(1)``); the file is then checked unchanged.
    With copy-on-write, a load costs nothing, a read maps cached pages (RssFile) and
    only a write takes memory of its own (RssAnon), one page per page written.

PyTorch runs on one thread (``--threads``): its reductions on two threads spin against
each other and against anything else on a small machine, which swamps the difference.

    python bench/cow_load.py [--sizes 256,1024] [--rounds 5] [--dir /tmp] [--threads 1]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import hurray

try:
    import safetensors.torch as st
except ImportError:  # pragma: no cover - reported below
    st = None

MiB = 1 << 20
TENSORS = 64
PAGE = 4096


def names():
    return [f"layer{i:02d}.weight" for i in range(TENSORS)]


def write_files(folder, size_mib):
    per = size_mib * MiB // TENSORS // 4  # float32 elements per tensor
    rows = 1024
    arrays = {n: np.full((rows, per // rows), i + 0.5, np.float32) for i, n in enumerate(names())}
    hp = os.path.join(folder, f"cow_{size_mib}.hrry")
    sp = os.path.join(folder, f"cow_{size_mib}.safetensors")
    hurray.save(hp, {n: hurray.from_numpy(a) for n, a in arrays.items()}, durable=False)
    st.save_file({n: torch.from_numpy(a) for n, a in arrays.items()}, sp)
    del arrays
    return hp, sp


def warm(path):
    """Reads the file once: later measurements find it in the page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(16 * MiB):
            pass


def touch(x, how):
    if how == "sum":
        return float(x.sum())
    return float(x.reshape(-1)[:: PAGE // x.element_size()].sum())  # one value per page


def run_hurray(path, how, mmap=True):
    d = hurray.load(path, mmap=mmap)
    xs = [d[n].to_torch() for n in names()]
    return sum(touch(x, how) for x in xs)


def run_safetensors(path, how):
    d = st.load_file(path)
    return sum(touch(d[n], how) for n in names())


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fmt_ms(s):
    return f"{s * 1e3:8.1f} ms"


def bench_time(hp, sp, rounds):
    rows = []
    for how in ("sum", "page"):
        cases = {
            "hurray.load (mmap=True, copy-on-write) + to_torch": lambda: run_hurray(hp, how),
            'hurray.load (mmap="r") + to_torch (copies)': lambda: run_hurray(hp, how, "r"),
            "safetensors.torch.load_file": lambda: run_safetensors(sp, how),
        }
        for fn in cases.values():  # one round not timed (imports, first faults)
            fn()
        got = {k: [] for k in cases}
        for _ in range(rounds):
            for k, fn in cases.items():
                got[k].append(timed(fn))
        base = statistics.median(got["safetensors.torch.load_file"])
        for k, ts in got.items():
            rows.append((how, k, statistics.median(ts), min(ts), statistics.median(ts) / base))
    return rows


# ---- memory, in a child process --------------------------------------------------------

def status_mib():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                out[key] = int(rest.split()[0]) / 1024
    return out


def child(lib, path, mmap):
    ns = names()
    eighth = ns[: TENSORS // 8]
    base = status_mib()
    steps = []
    if lib == "hurray":
        d = hurray.load(path, mmap={"c": True, "r": "r"}[mmap])
        xs = {n: d[n].to_torch() for n in ns}
    else:
        xs = st.load_file(path)
    steps.append(("after load, no touch", status_mib()))
    for n in eighth:
        touch(xs[n], "sum")
    steps.append(("after reading 1/8 of the tensors", status_mib()))
    for n in eighth:
        xs[n].add_(1)
    steps.append(("after writing the same 1/8 in place", status_mib()))
    first = float(np.asarray(hurray.load(path, mmap="r")[ns[0]]).reshape(-1)[0]) \
        if lib == "hurray" else float(st.load_file(path)[ns[0]].reshape(-1)[0])
    result = {"steps": [(what, {k: v - base[k] for k, v in s.items()}) for what, s in steps],
              "file_unchanged": first == 0.5}
    print(json.dumps(result))


def bench_memory(hp, sp):
    rows = []
    for label, lib, path, mmap in (("hurray mmap=True (copy-on-write)", "hurray", hp, "c"),
                                   ('hurray mmap="r" + to_torch', "hurray", hp, "r"),
                                   ("safetensors.torch.load_file", "safetensors", sp, "-")):
        p = subprocess.run([sys.executable, __file__, "--child", lib, path, mmap],
                           capture_output=True, text=True, check=True)
        rows.append((label, json.loads(p.stdout.strip().splitlines()[-1])))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,1024", help="file sizes in MiB (comma-separated)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary folder)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--child", nargs=3, metavar=("LIB", "PATH", "MMAP"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.child:
        child(*args.child)
        return 0
    if st is None:
        print("cow_load: safetensors is not installed (pip install safetensors)", file=sys.stderr)
        return 2
    print(f"hurray {hurray.__version__}, torch {torch.__version__}, "
          f"safetensors {__import__('safetensors').__version__}, numpy {np.__version__}, "
          f"{TENSORS} float32 tensors per file, torch threads {torch.get_num_threads()}")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="hurray-cow-") as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            hp, sp = write_files(folder, size)
            warm(hp)
            warm(sp)
            print(f"\n== {size} MiB (files warm in the page cache) ==")
            print(f"(a) load + to_torch + touch, {args.rounds} rounds"
                  f" (ratio: median / safetensors' median)")
            print(f"    {'touch':5} {'case':52} {'median':>11} {'best':>11} {'ratio':>6}")
            for how, case, med, best, ratio in bench_time(hp, sp, args.rounds):
                print(f"    {how:5} {case:52} {fmt_ms(med)} {fmt_ms(best)} {ratio:6.2f}")
            print("(b) memory growth over the process before the load, MiB"
                  " (VmRSS / RssAnon / RssFile)")
            for label, r in bench_memory(hp, sp):
                print(f"    {label} (file unchanged after the writes: {r['file_unchanged']})")
                for what, s in r["steps"]:
                    print(f"      {what:38} {s['VmRSS']:8.1f} {s['RssAnon']:8.1f}"
                          f" {s['RssFile']:8.1f}")
            os.unlink(hp)
            os.unlink(sp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
