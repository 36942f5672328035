#!/usr/bin/env python3
"""`hurray convert`: time against a raw copy, and peak memory (docs/reference/cli.md).

A benchmark, not a test (never part of the test command).

(a) time. A safetensors file of `--gib` GiB (float32 tensors of 16 MiB) is
    converted to .hrry and back (`python -m hurray convert`, each in a fresh
    process, interpreter start and imports included), and the same bytes are
    copied with a plain read/write loop + fsync (what any conversion has to do at
    least: read everything, write everything, make it durable), and with
    shutil.copyfile + fsync (the kernel copies, no byte through user space). Both
    conversions are durable too (the .hrry writer and the safetensors writer
    fsync the file and its folder). The source is read once first, so every
    step finds it in the page cache. Ratio = copy time / conversion time (1.0:
    as fast as the copy). Best of `--rounds`.

(b) peak memory. A checkpoint of `--peak-gib` GiB whose largest tensor is
    `--largest-mib` MiB (the other tensors 1/4 of it) is converted
    safetensors -> hrry -> safetensors, and hrry -> gguf -> hrry, each in a
    fresh process that reports its own peak resident set (ru_maxrss) and the
    resident set it had before converting (interpreter, NumPy, gguf imported).

    python bench/convert.py [--gib 1] [--peak-gib 2] [--largest-mib 64] [--rounds 3] [--dir DIR]
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import resource, sys, time
import numpy, gguf, hurray, hurray._cli._commands, hurray._cli._formats
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from hurray._cli import main
t = time.perf_counter()
rc = main(["convert", "-q"] + sys.argv[1:])
dt = time.perf_counter() - t
print(rc, base * 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, dt)
"""


def write_st(path, sizes):
    header, off = {}, 0
    for i, n in enumerate(sizes):
        header[f"layer{i:03d}.weight"] = {"dtype": "F32", "shape": [n // 4],
                                          "data_offsets": [off, off + n]}
        off += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text)
        for n in sizes:
            for _ in range(n >> 20):
                fh.write(chunk)


def read_all(path):
    with open(path, "rb") as fh:
        while fh.read(16 << 20):
            pass


def raw_copy(src, dst):
    t = time.perf_counter()
    with open(src, "rb") as a, open(dst, "wb") as b:
        while True:
            buf = a.read(16 << 20)
            if not buf:
                break
            b.write(buf)
        b.flush()
        os.fsync(b.fileno())
    fd = os.open(os.path.dirname(os.path.abspath(dst)), os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - t


def fast_copy(src, dst):
    """shutil.copyfile (copy_file_range / sendfile: no bytes through user space) + fsync."""
    t = time.perf_counter()
    shutil.copyfile(src, dst)
    fd = os.open(dst, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    fd = os.open(os.path.dirname(os.path.abspath(dst)), os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - t


def convert(src, dst, script):
    t = time.perf_counter()
    out = subprocess.run([sys.executable, script, src, dst], check=True, capture_output=True,
                         text=True).stdout.split()
    wall = time.perf_counter() - t
    rc, base, peak, inside = int(out[0]), int(out[1]), int(out[2]), float(out[3])
    assert rc == 0
    return wall, inside, base, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--peak-gib", type=float, default=2.0)
    ap.add_argument("--largest-mib", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="hurray-convert-", dir=args.dir)
    script = os.path.join(d, "child.py")
    with open(script, "w") as fh:
        fh.write(CHILD)
    try:
        mib = 1 << 20
        n = int(args.gib * 1024) // 16
        src = os.path.join(d, "model.safetensors")
        write_st(src, [16 * mib] * n)
        read_all(src)
        size = os.path.getsize(src)
        rows = {"copy": [], "copyfile": [], "st->hrry": [], "hrry->st": []}
        for _ in range(args.rounds):
            rows["copy"].append((raw_copy(src, os.path.join(d, "copy.bin")), 0))
            os.unlink(os.path.join(d, "copy.bin"))
            rows["copyfile"].append((fast_copy(src, os.path.join(d, "copy.bin")), 0))
            os.unlink(os.path.join(d, "copy.bin"))
            w, i, _, _ = convert(src, os.path.join(d, "model.hrry"), script)
            rows["st->hrry"].append((w, i))
            w, i, _, _ = convert(os.path.join(d, "model.hrry"), os.path.join(d, "back.safetensors"),
                                 script)
            rows["hrry->st"].append((w, i))
            os.unlink(os.path.join(d, "back.safetensors"))
        best = {k: min(v) for k, v in rows.items()}
        c = best["copy"][0]
        print(f"(a) {size / 2**30:.2f} GiB, {n} tensors of 16 MiB, page cache, durable; best "
              f"of {args.rounds}")
        print(f"    raw copy + fsync           {c:6.2f} s  {size / c / 2**30:5.2f} GiB/s "
              f"(read/write loop, 16 MiB chunks)")
        cf = best["copyfile"][0]
        print(f"    shutil.copyfile + fsync    {cf:6.2f} s  {size / cf / 2**30:5.2f} GiB/s "
              f"(in the kernel)")
        for k in ("st->hrry", "hrry->st"):
            w, i = best[k]
            print(f"    convert {k:9s}          {w:6.2f} s  {size / w / 2**30:5.2f} GiB/s "
                  f"(conversion alone {i:5.2f} s)  ratio copy/convert {c / w:4.2f} "
                  f"({c / i:4.2f} without the interpreter start; against copyfile "
                  f"{cf / w:4.2f})")
        for f in ("model.safetensors", "model.hrry"):
            os.unlink(os.path.join(d, f))

        largest = args.largest_mib * mib
        small = largest // 4
        total = int(args.peak_gib * 2**30)
        sizes = [largest]
        while sum(sizes) + small <= total:
            sizes.append(small)
        src = os.path.join(d, "big.safetensors")
        write_st(src, sizes)
        print(f"(b) {sum(sizes) / 2**30:.2f} GiB checkpoint, {len(sizes)} tensors, the largest "
              f"{args.largest_mib} MiB")
        steps = [(src, "big.hrry"), ("big.hrry", "back.safetensors"), ("big.hrry", "big.gguf"),
                 ("big.gguf", "again.hrry")]
        for a, b in steps:
            a = a if os.path.isabs(a) else os.path.join(d, a)
            _, _, base, peak = convert(a, os.path.join(d, b), script)
            print(f"    {os.path.basename(a):17s} -> {b:17s} peak RSS {peak / mib:6.1f} MiB "
                  f"(before converting {base / mib:5.1f} MiB, grew {(peak - base) / mib:5.1f} "
                  f"MiB)")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
