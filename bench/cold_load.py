"""Cold and warm loads of a 1 GiB checkpoint (64 float32 tensors): hurray against its peers.

    python3 bench/cold_load.py [--dir DIR] [--rounds N] [--workers 1,2,4,8]

One checkpoint, the same bytes written as .hrry, .safetensors and a torch .pt. Before each
cold round the page cache is dropped (`echo 3 > /proc/sys/vm/drop_caches`: run as root; else
each file's pages are evicted with posix_fadvise(DONTNEED)). Every page of every tensor is
touched. Reports GB/s (median of the rounds, min-max beside) and the ratios the targets name:
hurray.torch.load_file against runai-model-streamer's SafetensorsStreamer, fastsafetensors
(CPU), torch.load(mmap=True), safetensors.torch.load_file and a parallel raw pread of the
file; then a warm round (hurray vs safetensors). Peers that are not installed are reported
as such (pip install -r bench/requirements.txt).
"""
import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

import hurray
import hurray.torch as ht

N_TENSORS = 64
GIB = 1 << 30


def drop(paths):
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return
    except OSError:
        pass
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def touch(tensors):
    s = 0
    for t in tensors:
        a = t.detach().reshape(-1).view(torch.uint8) if isinstance(t, torch.Tensor) else t
        s += int(a[::4096].sum())
    return s


def write(d):
    rng = np.random.default_rng(0)
    per = GIB // N_TENSORS // 4
    sd = {f"layer{i}.weight": torch.from_numpy(rng.standard_normal(per, dtype=np.float32))
          for i in range(N_TENSORS)}
    paths = {k: os.path.join(d, f"ckpt.{k}") for k in ("hrry", "safetensors", "pt")}
    if not all(os.path.exists(p) for p in paths.values()):
        ht.save_file(sd, paths["hrry"])
        import safetensors.torch as st
        st.save_file(sd, paths["safetensors"])
        torch.save(sd, paths["pt"])
    return paths


def raw_pread(path, workers=4, chunk=64 << 20):
    """The disk's speed: `workers` threads pread one slice each, in 64 MiB reads into a
    buffer of their own that is reused (no page faults on fresh memory, nothing kept)."""
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    piece = -(-size // workers)

    def one(k):
        buf = np.empty(chunk, dtype=np.uint8)
        mv = memoryview(buf)
        mv[::4096] = b"\0" * len(mv[::4096])  # its pages mapped before the clock matters
        off = k * piece
        end = min(size, off + piece)
        while off < end:
            off += os.preadv(fd, [mv[:min(chunk, end - off)]], off)
        return buf[:1]
    with ThreadPoolExecutor(workers) as ex:
        out = list(ex.map(one, range(workers)))
    os.close(fd)
    return out


def runai(path):
    from runai_model_streamer import SafetensorsStreamer
    out = []
    with SafetensorsStreamer() as s:
        s.stream_file(path)
        for name, t in s.get_tensors():
            out.append(t.clone())  # the streamer reuses its buffer
    return out


def fastst(path):
    from fastsafetensors import SafeTensorsFileLoader, SingleGroup
    loader = SafeTensorsFileLoader(SingleGroup(), "cpu", nogds=True)
    loader.add_filenames({0: [path]})
    fb = loader.copy_files_to_device()
    out = [fb.get_tensor(k).clone() for k in fb.key_to_rank_lidx.keys()]
    fb.close()
    loader.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/hurray-cold-bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", default="1,2,4,8", help="hurray worker counts to sweep")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    paths = write(a.dir)
    size = os.path.getsize(paths["hrry"])
    import safetensors.torch as st

    cases = {f"hurray.torch.load_file workers={w}": (lambda w=w: list(ht.load_file(paths["hrry"], workers=w).values()))
             for w in map(int, a.workers.split(","))}
    cases["hurray.torch.load_file (default)"] = lambda: list(ht.load_file(paths["hrry"]).values())
    cases["hurray mmap=False workers=1"] = lambda: list(ht.load_file(paths["hrry"], mmap=False, workers=1).values())
    cases["hurray mmap=False (default)"] = lambda: list(ht.load_file(paths["hrry"], mmap=False).values())
    cases["runai SafetensorsStreamer"] = lambda: runai(paths["safetensors"])
    cases["fastsafetensors (CPU)"] = lambda: fastst(paths["safetensors"])
    cases["torch.load(mmap=True)"] = lambda: list(torch.load(paths["pt"], mmap=True, weights_only=True).values())
    cases["safetensors.torch.load_file"] = lambda: list(st.load_file(paths["safetensors"]).values())
    cases["raw pread, 4 threads"] = lambda: raw_pread(paths["hrry"], 4)
    cases["raw pread, 8 threads"] = lambda: raw_pread(paths["hrry"], 8)

    res = {k: [] for k in cases}
    missing = {}
    for r in range(a.rounds):
        for name, fn in cases.items():
            if name in missing:
                continue
            drop(paths.values())
            t = time.perf_counter()
            try:
                ts = fn()
            except ImportError as e:
                missing[name] = str(e)
                continue
            touch(ts)
            res[name].append(size / (time.perf_counter() - t) / 1e9)
            del ts
    print(f"cold, {size / GIB:.2f} GiB, {N_TENSORS} tensors, {a.rounds} rounds, every page touched")
    med = {}
    for name, v in res.items():
        if name in missing:
            print(f"  {name:38s} not installed ({missing[name][:60]})")
            continue
        med[name] = statistics.median(v)
        print(f"  {name:38s} {med[name]:5.2f} GB/s  (min {min(v):.2f}, max {max(v):.2f})")
    h = med["hurray.torch.load_file (default)"]
    for peer in ("runai SafetensorsStreamer", "fastsafetensors (CPU)", "torch.load(mmap=True)",
                 "safetensors.torch.load_file", "raw pread, 4 threads", "raw pread, 8 threads"):
        if peer in med:
            print(f"  ratio hurray (default) / {peer}: {h / med[peer]:.2f}x")

    # warm: everything in memory; load then touch every page
    warm = {"hurray.torch.load_file": lambda: list(ht.load_file(paths["hrry"]).values()),
            "safetensors.torch.load_file": lambda: list(st.load_file(paths["safetensors"]).values())}
    wres = {k: [] for k in warm}
    for fn in warm.values():
        touch(fn())
    for r in range(max(5, a.rounds)):
        for name, fn in warm.items():
            t = time.perf_counter()
            ts = fn()
            lt = time.perf_counter() - t
            touch(ts)
            wres[name].append((lt, time.perf_counter() - t))
            del ts
    print("warm (load only / load + touch every page), median")
    for name, v in wres.items():
        print(f"  {name:38s} {statistics.median(x[0] for x in v) * 1e3:7.1f} ms / "
              f"{statistics.median(x[1] for x in v) * 1e3:7.1f} ms")
    hw = statistics.median(x[1] for x in wres["hurray.torch.load_file"])
    sw = statistics.median(x[1] for x in wres["safetensors.torch.load_file"])
    print(f"  ratio warm (load + touch) safetensors / hurray: {sw / hw:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
