#!/usr/bin/env python3
"""Loading a .hrry file over HTTP (hurray/_remote.py, docs/guide/remote.md): a whole
`hurray.load(url)` with 1 worker and with `--workers`, against the local load of the same
file (`mmap=False`, the peer: same bytes, no network), and what one lazy tensor costs.

A benchmark, not a test. It starts nginx (tests/python/remote_servers.py) serving a
temporary folder on 127.0.0.1 (a loopback has no latency, so it measures the client's
own cost), saves `--mib` MiB in 16 tensors, and prints the best of `--rounds` of each and
the ratios. Then the fault server of the tests, with what a real store has and a loopback
has not (`--delay` per request, at most `--rate` MB/s per connection), shows what
concurrent ranges buy, and counts what open and one lazy tensor cost.

    python bench/remote_load.py [--mib 256] [--workers 8] [--rounds 3] [--delay 0.02] [--rate 50]
"""
import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np

import hurray

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))
import remote_servers as rs  # noqa: E402


def best(fn, rounds):
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--delay", type=float, default=0.02)
    ap.add_argument("--rate", type=float, default=50.0)
    a = ap.parse_args()
    n = a.mib * (1 << 20) // 16 // 4
    rng = np.random.default_rng(0)
    tensors = {f"t{i}": rng.standard_normal(n).astype(np.float32) for i in range(16)}
    img = hurray.save_bytes(tensors)
    mib = len(img) / (1 << 20)
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        (d / "www").mkdir()
        (d / "ng").mkdir()
        (d / "www" / "m.hrry").write_bytes(img)
        local = d / "www" / "m.hrry"
        srv = rs.Nginx(d / "www", d / "ng")
        url = f"{srv.url}/m.hrry"
        try:
            t_local = best(lambda: hurray.load(local, mmap=False), a.rounds)
            t_1 = best(lambda: hurray.load(url, workers=1), a.rounds)
            t_w = best(lambda: hurray.load(url, workers=a.workers), a.rounds)
        finally:
            srv.close()
    print(f"{mib:.0f} MiB, nginx on 127.0.0.1")
    print(f"  local load(mmap=False)      {t_local:.3f} s  {mib / t_local:7.0f} MiB/s")
    print(f"  load(url, workers=1)        {t_1:.3f} s  {mib / t_1:7.0f} MiB/s  "
          f"x{t_1 / t_local:.2f} of local")
    print(f"  load(url, workers={a.workers})        {t_w:.3f} s  {mib / t_w:7.0f} MiB/s  "
          f"x{t_w / t_local:.2f} of local")

    srv = rs.FaultServer()
    try:
        srv.put("m.hrry", img)
        url = f"{srv.url}/m.hrry"
        srv.faults["delay"] = a.delay
        srv.faults["rate"] = a.rate * 1e6
        t_1 = best(lambda: hurray.load(url, workers=1, part_size=4 << 20), 1)
        t_w = best(lambda: hurray.load(url, workers=a.workers, part_size=4 << 20), 1)
        srv.reset()
        f = hurray.open(url)
        opened, sent_open = srv.requests, srv.sent
        srv.reset()
        one = np.asarray(f["t3"])
        print(f"fault server, {a.delay * 1000:.0f} ms per request, {a.rate:g} MB/s per "
              f"connection, 4 MiB parts")
        print(f"  load(url, workers=1) {t_1:.3f} s, workers={a.workers} {t_w:.3f} s: "
              f"x{t_1 / t_w:.1f} faster")
        print(f"  open: {opened} requests, {sent_open} bytes; one tensor of {one.nbytes} bytes: "
              f"{srv.requests} requests, {srv.sent} bytes sent")
    finally:
        srv.close()


if __name__ == "__main__":
    main()
