#!/usr/bin/env python3
"""Data checksums (docs/reference/file-format.md "Data checksums"): what ``checksums=True`` costs
``hurray.save``, and how fast ``File.verify()`` and ``load(verify=True)`` read them back.

A benchmark, not a test (never part of the test command). It saves the same float32
tensors (``--mib`` in ``--tensors`` tensors, 1 GiB in 64 by default) into ``--dir``
with ``checksums=True`` and ``checksums=False``, in interleaved rounds, both ways
``durable=True`` (the default: fsyncs) and ``durable=False`` (into the page cache
only), and prints the best of each and the ratio with / without (the default is
``checksums=True`` because the durable ratio is within 1.10). Then, with the file warm
in the page cache: ``File.verify()`` (mmap) in GB/s, a plain mapped ``load`` against
``load(verify=True)``, and ``mmap=False`` verify.

    python bench/checksums.py [--mib 1024] [--tensors 64] [--rounds 5] [--dir /tmp]
"""
import argparse
import os
import tempfile
import time

import numpy as np

import hurray


def best(fn, rounds):
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--tensors", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    each = a.mib * (1 << 20) // a.tensors // 4
    tensors = {f"layer{i}.weight": rng.standard_normal(each, dtype=np.float32)
               for i in range(a.tensors)}
    total = sum(v.nbytes for v in tensors.values())
    d = a.dir or tempfile.gettempdir()
    path = os.path.join(d, "bench_checksums.hrry")
    print(f"bench/checksums.py: {total / 2**20:.0f} MiB in {a.tensors} tensors, best of "
          f"{a.rounds}, {d}")
    for durable in (True, False):
        with_t, without_t = [], []
        hurray.save(path, tensors, durable=durable)  # warm
        for _ in range(a.rounds):
            without_t.append(best(lambda: hurray.save(path, tensors, durable=durable,
                                                      checksums=False), 1))
            with_t.append(best(lambda: hurray.save(path, tensors, durable=durable), 1))
        w, wo = min(with_t), min(without_t)
        print(f"save durable={durable!s:5}  without {wo:7.3f} s  with {w:7.3f} s  "
              f"ratio {w / wo:5.3f}  (target <= 1.10)")
    hurray.save(path, tensors)

    def verify(mmap):
        with hurray.open(path, mmap=mmap) as f:
            return f.verify()

    r = verify(True)
    t = best(lambda: verify(True), a.rounds)
    print(f"File.verify() mmap       {t:7.3f} s  {r.checked_bytes / t / 1e9:6.2f} GB/s  "
          f"(target >= 5)")
    t = best(lambda: verify(False), a.rounds)
    print(f"File.verify() mmap=False {t:7.3f} s  {r.checked_bytes / t / 1e9:6.2f} GB/s")
    plain = best(lambda: hurray.load(path), a.rounds)
    checked = best(lambda: hurray.load(path, verify=True), a.rounds)
    print(f"load mapped {plain * 1e3:8.2f} ms, load(verify=True) {checked * 1e3:8.2f} ms")
    hurray.save(path, tensors, checksums=False)
    unchecked = best(lambda: hurray.load(path), a.rounds)
    print(f"load mapped of the same file without checksums {unchecked * 1e3:8.2f} ms "
          f"(a load without verify does not read them)")
    os.unlink(path)


if __name__ == "__main__":
    main()
