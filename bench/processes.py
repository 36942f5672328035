#!/usr/bin/env python3
"""Across processes and machines: what pickling a hurray tensor costs, beside a NumPy
array of the same bytes measured in the same run (docs/guide/processes.md).

A benchmark, not a test (never part of the test command). The figures:

(a) ``pickle.dumps(t, protocol=5, buffer_callback=...)`` and ``pickle.loads(data,
    buffers=...)``: time and in-band size from 1 KiB to 1 GiB. Both must stay flat: the
    buffers travel out of band and nothing is copied either way.
(b) Ray: ``ray.get(ray.put(x))`` of a 1 GiB tensor against a 1 GiB NumPy array
    (``ray.init(num_cpus=2)``; the object store holds a copy, and ``get`` maps it).
(c) Dask: a 256 MiB tensor made on one worker of a ``LocalCluster(processes=True,
    n_workers=2)`` and used by a task on the other (a worker-to-worker transfer), with
    what the receiving worker did with the buffers (hurray/_dask.py: wrapped in the
    block Dask read them into, moved there first, or copied).
(d) multiprocessing: a round trip of 256 MiB to a spawn ``Pool`` worker and back
    (``pool.apply(echo, (x,))``; multiprocessing pickles with protocol 4, so the bytes
    are copied in band, for NumPy too).
(e) a 256 MiB tensor of a file opened with ``mmap="r"``: pickled by reference
    (``hurray.open(..., pickle="reference")``) and by value, size and time.

The ratio is NumPy's time / hurray's time: >= 1 means hurray is as fast or faster
(>= 0.9 is the goal). Each figure is the median of ``--rounds`` rounds, hurray and NumPy
interleaved.

    python bench/processes.py [--rounds 5] [--only pickle,ray,dask,mp,reference]
                              [--json out.json]
"""
import argparse
import json
import multiprocessing
import os
import pickle
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hurray  # noqa: E402

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def array(nbytes, seed=0):
    """nbytes of float32 data in 64-byte-aligned memory (so hurray borrows it)."""
    raw = np.empty(nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    a = raw[start:start + nbytes].view(np.float32)
    a[:] = seed
    return a


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fmt_size(n):
    return f"{n // GiB} GiB" if n >= GiB else f"{n // MiB} MiB" if n >= MiB else f"{n // KiB} KiB"


# ---- (a) pickle protocol 5 ------------------------------------------------------------

def bench_pickle(rounds):
    rows = []
    for n in (KiB, 16 * KiB, 256 * KiB, 4 * MiB, 64 * MiB, GiB):
        a = array(n, 1)
        t = hurray.from_numpy(a)
        assert t.data_ptr() == a.ctypes.data
        out = {"size": n}
        for who, x in (("hurray", t), ("numpy", a)):
            bufs = []
            data = pickle.dumps(x, protocol=5, buffer_callback=bufs.append)
            out[f"{who}_inband"] = len(data)

            def dumps():
                pickle.dumps(x, protocol=5, buffer_callback=[].append)

            def loads():
                pickle.loads(data, buffers=bufs)
            out[f"{who}_dumps_us"] = median_time(dumps, max(rounds, 20)) * 1e6
            out[f"{who}_loads_us"] = median_time(loads, max(rounds, 20)) * 1e6
        bufs = []
        back = pickle.loads(pickle.dumps(t, protocol=5, buffer_callback=bufs.append), buffers=bufs)
        out["zero_copy"] = back.data_ptr() == t.data_ptr()
        rows.append(out)
        del a, t, back, bufs
    print("\n(a) pickle.dumps(protocol=5, buffer_callback=...) / pickle.loads(buffers=...)")
    print(f"{'size':>8} {'in-band B':>10} {'dumps us':>9} {'loads us':>9} "
          f"{'numpy in-band':>13} {'numpy dumps':>11} {'numpy loads':>11} zero-copy")
    for r in rows:
        print(f"{fmt_size(r['size']):>8} {r['hurray_inband']:>10} {r['hurray_dumps_us']:>9.1f} "
              f"{r['hurray_loads_us']:>9.1f} {r['numpy_inband']:>13} {r['numpy_dumps_us']:>11.1f} "
              f"{r['numpy_loads_us']:>11.1f} {r['zero_copy']}")
    return rows


# ---- (b) Ray --------------------------------------------------------------------------

def bench_ray(rounds, size=GiB):
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=3 * size + 256 * MiB)
    try:
        a = array(size, 2)
        t = hurray.from_numpy(a)

        def rt(x):
            ref = ray.put(x)
            y = ray.get(ref)
            del y, ref  # the store frees the object once no reference is left

        rt(t), rt(a)  # warm
        ht, nt = [], []
        for _ in range(rounds):
            ht.append(median_time(lambda: rt(t), 1))
            nt.append(median_time(lambda: rt(a), 1))
        got = ray.get(ray.put(t))
        res = {"size": size, "hurray_s": statistics.median(ht), "numpy_s": statistics.median(nt),
               "fetched_readonly": got.readonly}
        res["ratio"] = res["numpy_s"] / res["hurray_s"]
    finally:
        ray.shutdown()
    print(f"\n(b) Ray put+get of {fmt_size(size)}: hurray {res['hurray_s'] * 1e3:.0f} ms, "
          f"NumPy {res['numpy_s'] * 1e3:.0f} ms, ratio {res['ratio']:.2f} "
          f"(fetched tensor read-only: {res['fetched_readonly']})")
    return res


# ---- (c) Dask -------------------------------------------------------------------------

def bench_dask(rounds, size=256 * MiB):
    import bench_workers as bw
    from distributed import Client, LocalCluster
    os.environ["PYTHONPATH"] = HERE + os.pathsep + os.environ.get("PYTHONPATH", "")
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                      dashboard_address=None, memory_limit=0) as cl, Client(cl) as c:
        a, b = sorted(c.scheduler_info()["workers"])

        def transfer(kind, k):
            use = bw.nbytes_after_copy if kind == "numpy+copy" else bw.nbytes
            made = c.submit(bw.make, kind.split("+")[0], size, k, workers=[a],
                            allow_other_workers=False, pure=False)
            made.result()
            t0 = time.perf_counter()
            n = c.submit(use, made, workers=[b], allow_other_workers=False,
                         pure=False).result()
            dt = time.perf_counter() - t0
            assert n == size
            del made
            return dt

        transfer("hurray", -1), transfer("numpy", -1), transfer("numpy+copy", -1)  # warm
        before = c.submit(bw.receiver_stats, workers=[b], pure=False).result()
        ht, nt, ct = [], [], []
        for k in range(rounds):
            ht.append(transfer("hurray", k))
            nt.append(transfer("numpy", k))
            ct.append(transfer("numpy+copy", k))
        after = c.submit(bw.receiver_stats, workers=[b], pure=False).result()
    res = {"size": size, "hurray_s": statistics.median(ht), "numpy_s": statistics.median(nt),
           "numpy_copy_s": statistics.median(ct),
           "receiver": {k: after[k] - before[k] for k in after}}
    res["ratio"] = res["numpy_s"] / res["hurray_s"]
    res["ratio_to_numpy_copy"] = res["numpy_copy_s"] / res["hurray_s"]
    print(f"\n(c) Dask worker-to-worker transfer of {fmt_size(size)}: hurray "
          f"{res['hurray_s'] * 1e3:.0f} ms, NumPy {res['numpy_s'] * 1e3:.0f} ms, ratio "
          f"{res['ratio']:.2f}; NumPy + one copy on the receiver "
          f"{res['numpy_copy_s'] * 1e3:.0f} ms, ratio {res['ratio_to_numpy_copy']:.2f}; the "
          f"receiver, over {rounds} tensors: {res['receiver']}")
    return res


# ---- (d) multiprocessing --------------------------------------------------------------

def bench_mp(rounds, size=256 * MiB):
    import bench_workers as bw
    a = array(size, 3)
    t = hurray.from_numpy(a)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        pool.apply(bw.echo, (None,))  # started
        pool.apply(bw.echo, (t,)), pool.apply(bw.echo, (a,))  # warm
        ht, nt = [], []
        for _ in range(rounds):
            ht.append(median_time(lambda: pool.apply(bw.echo, (t,)), 1))
            nt.append(median_time(lambda: pool.apply(bw.echo, (a,)), 1))
    res = {"size": size, "hurray_s": statistics.median(ht), "numpy_s": statistics.median(nt)}
    res["ratio"] = res["numpy_s"] / res["hurray_s"]
    print(f"\n(d) multiprocessing spawn round trip of {fmt_size(size)}: hurray "
          f"{res['hurray_s'] * 1e3:.0f} ms, NumPy {res['numpy_s'] * 1e3:.0f} ms, ratio "
          f"{res['ratio']:.2f}")
    return res


# ---- (e) a tensor of a mapped file: by reference or by value ----------------------------

def bench_reference(rounds, size=256 * MiB):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "w.hrry")
        hurray.save(path, {"w": array(size, 4)}, durable=False)
        res = {"size": size}
        with hurray.open(path, mmap="r", pickle="reference") as ref, \
                hurray.open(path, mmap="r") as val:
            for who, t in (("reference", ref["w"]), ("value", val["w"])):
                data = pickle.dumps(t, protocol=4)
                res[f"{who}_bytes"] = len(data)
                res[f"{who}_dumps_ms"] = median_time(lambda: pickle.dumps(t, protocol=4),
                                                     rounds) * 1e3
                res[f"{who}_loads_ms"] = median_time(lambda: pickle.loads(data), rounds) * 1e3
    print(f"\n(e) a {fmt_size(size)} tensor of a file opened with mmap='r', pickled with "
          f"protocol 4 (what multiprocessing uses)")
    for who in ("reference", "value"):
        print(f"  {who:>9}: {res[f'{who}_bytes']:>10} bytes, dumps "
              f"{res[f'{who}_dumps_ms']:8.3f} ms, loads {res[f'{who}_loads_ms']:8.3f} ms")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="pickle,ray,dask,mp,reference")
    ap.add_argument("--json")
    args = ap.parse_args()
    only = set(args.only.split(","))
    results = {}
    if "pickle" in only:
        results["pickle"] = bench_pickle(args.rounds)
    if "ray" in only:
        results["ray"] = bench_ray(args.rounds)
    if "dask" in only:
        results["dask"] = bench_dask(args.rounds)
    if "mp" in only:
        results["mp"] = bench_mp(args.rounds)
    if "reference" in only:
        results["reference"] = bench_reference(args.rounds)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
