#!/usr/bin/env python3
"""What File.get_slice reads: 1/8 of a 1 GiB tensor, by rows and by columns.

    python bench/slice_pages.py [--dir DIR] [--mib 1024] [--keep]

Writes one float32 tensor of --mib MiB (square, row-major) to DIR/slice_pages.hrry
(durably, so its pages are clean), then for each shard:

- mmap=True: drops the file from the page cache (posix_fadvise DONTNEED), opens
  it, takes the shard, and counts the file's resident pages with mincore() on a
  fresh mapping of the file: inside the shard's own byte range, and outside it
  (what the kernel read ahead of the faults, plus the header, descriptor and
  index pages).
- mmap=False: the bytes the process read for the shard (/proc/self/io rchar),
  against the shard's size.

Row shards are contiguous: the figure is the shard's pages and nothing else but
read-ahead. A column shard of a row-major tensor is 1/8 of every row: read mode
reads exactly those bytes; mapped, the kernel's read-ahead around each fault
decides how much more comes in (read_ahead_kb of the disk). Linux only.
"""
import argparse
import ctypes
import mmap as mmap_module
import os
import sys
import tempfile
import time

import numpy as np

import hurray

PAGE = mmap_module.PAGESIZE
DATA_OFFSET = 4096  # one tensor: header + descriptor, then its data at the alignment


def libc():
    lib = ctypes.CDLL(None, use_errno=True)
    lib.mmap.restype = ctypes.c_void_p
    lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                         ctypes.c_int, ctypes.c_long]
    lib.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return lib


def residency(path):
    """One byte per page of the file: 1 when the page is in the page cache."""
    lib = libc()
    size = os.path.getsize(path)
    pages = (size + PAGE - 1) // PAGE
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = lib.mmap(None, size, mmap_module.PROT_READ, mmap_module.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        try:
            vec = (ctypes.c_ubyte * pages)()
            if lib.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
            return np.frombuffer(bytes(vec), np.uint8) & 1
        finally:
            lib.munmap(addr, size)
    finally:
        os.close(fd)


def drop(path):
    with open(path, "rb") as fh:
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def rchar():
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise OSError("no rchar in /proc/self/io")


def read_ahead_kb(path):
    """The read-ahead of the disk holding `path` (the partition's parent's)."""
    dev = os.stat(path).st_dev
    base = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
    for q in (f"{base}/queue/read_ahead_kb", f"{base}/../queue/read_ahead_kb"):
        try:
            with open(q) as fh:
                return fh.read().strip()
        except OSError:
            pass
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=None, help="where to write the file (default: a temp dir)")
    ap.add_argument("--mib", type=int, default=1024, help="tensor size in MiB (default 1024)")
    ap.add_argument("--keep", action="store_true", help="keep the file")
    args = ap.parse_args()
    side = int((args.mib * 2**20 // 4) ** 0.5)
    side -= side % 8
    nbytes = side * side * 4
    row_bytes = side * 4
    d = args.dir or tempfile.mkdtemp(prefix="hurray-slice-")
    path = os.path.join(d, "slice_pages.hrry")
    w = np.empty((side, side), np.float32)
    w[:] = np.arange(1, side + 1, dtype=np.float32)[:, None]  # row r holds r + 1
    t0 = time.perf_counter()
    hurray.save(path, {"w": hurray.from_numpy(w)})
    print(f"wrote {path}: float32 [{side}, {side}] = {nbytes / 2**20:.0f} MiB "
          f"in {time.perf_counter() - t0:.1f} s")
    with open(path, "rb") as fh:  # the data starts at DATA_OFFSET: row 0 holds 1.0, row 1 2.0
        fh.seek(DATA_OFFSET)
        assert np.frombuffer(fh.read(4), np.float32)[0] == 1.0
        fh.seek(DATA_OFFSET + row_bytes)
        assert np.frombuffer(fh.read(4), np.float32)[0] == 2.0
    total_pages = nbytes // PAGE
    eighth = side // 8
    k = 3  # the fourth shard: read-ahead has room on both sides
    shards = {
        "rows": (np.s_[k * eighth:(k + 1) * eighth], w[k * eighth:(k + 1) * eighth]),
        "cols": (np.s_[:, k * eighth:(k + 1) * eighth], w[:, k * eighth:(k + 1) * eighth]),
    }
    page_of = lambda b: (DATA_OFFSET + b) // PAGE  # noqa: E731
    first_data_page = page_of(0)
    print(f"read_ahead_kb of the disk: {read_ahead_kb(path)}")
    print(f"{'shard':<6} {'mode':<11} {'selected':>10} {'read':>12} {'read/tensor':>12} "
          f"{'outside shard':>14} {'time':>8}")
    for sname, (key, want) in shards.items():
        # which pages of the file hold the shard
        mask = np.zeros(first_data_page + total_pages + 1, bool)
        if sname == "rows":
            a, b = page_of(k * eighth * row_bytes), page_of((k + 1) * eighth * row_bytes - 1)
            mask[a:b + 1] = True
        else:
            for r in range(side):
                lo = r * row_bytes + k * eighth * 4
                mask[page_of(lo):page_of(lo + eighth * 4 - 1) + 1] = True
        shard_bytes = want.nbytes
        # mapped
        drop(path)
        base = residency(path)
        if base.sum() > total_pages // 100:
            print(f"{sname}: the page cache keeps this file ({base.sum()} pages resident after "
                  "DONTNEED): no mapped figure")
        else:
            t0 = time.perf_counter()
            with hurray.open(path) as f:
                part = f.get_slice("w")[key]
            dt = time.perf_counter() - t0
            res = residency(path)
            m = mask[: len(res)]
            inside, outside = int(res[m].sum()), int(res[~m].sum())
            assert np.array_equal(np.asarray(part), want)
            print(f"{sname:<6} {'mmap=True':<11} {int(m.sum()):>7} pg {inside + outside:>9} pg "
                  f"{(inside + outside) / total_pages:>12.4f} {outside:>11} pg {dt:>7.3f}s"
                  f"   (shard pages resident: {inside}/{int(m.sum())})")
            del part
        # read mode
        drop(path)
        with hurray.open(path, mmap=False) as f:
            s = f.get_slice("w")
            before = rchar()
            t0 = time.perf_counter()
            part = s[key]
            dt = time.perf_counter() - t0
            got = rchar() - before
        assert np.array_equal(np.asarray(part), want)
        print(f"{sname:<6} {'mmap=False':<11} {shard_bytes / 2**20:>7.1f} MiB {got / 2**20:>8.2f} MiB "
              f"{got / nbytes:>12.4f} {got - shard_bytes:>11} B  {dt:>7.3f}s")
        del part
    if not args.keep:
        os.unlink(path)
        if args.dir is None:
            os.rmdir(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
