#!/usr/bin/env python3
"""Fuzz target: forged DLPack capsules handed to hurray.from_dlpack.

Every field of DLManagedTensor(Versioned) comes from the input: the version,
the flags, the rank, each extent and stride, the element type, the device, the
byte offset, and whether the data pointer is NULL. The data the capsule points
at is sized exactly to what its fields claim (computed here with Python's
unbounded integers), so a sanitizer (ASan) reports any read hurray makes
outside it. A capsule whose fields overflow 64 bits (no memory can back it)
points at 64 bytes: hurray must refuse it before reading, and a read would be
reported. Claims too large to back (over 1 MiB but representable) are skipped:
DLPack carries no buffer size, so hurray must trust them.

Run with atheris: scripts/fuzz.sh python-dlpack MINUTES. The corpus in
fuzz/corpus/python-dlpack/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "python"))

import numpy as np  # noqa: E402

import dlpack_ctypes as dl  # noqa: E402
import hurray  # noqa: E402

from fuzz_input import Input  # noqa: E402

TWO63 = 1 << 63
BACKABLE = 1 << 20

# (code, bits, lanes): valid DLPack types first, then nonsense
DTYPES = [(2, 32, 1), (2, 64, 1), (2, 16, 1), (0, 8, 1), (1, 8, 1), (0, 64, 1), (1, 16, 1),
          (4, 16, 1), (5, 64, 1), (6, 8, 1), (0, 4, 1), (1, 4, 1), (2, 32, 4), (9, 8, 1),
          (2, 7, 1), (0, 0, 1), (10, 8, 1), (17, 4, 1), (2, 32, 0)]
EXTREMES = [0, 1, 2, 3, 5, 7, 64, 1 << 31, (1 << 32) + 1, 1 << 40, 1 << 61, 1 << 62,
            (1 << 62) + 16, TWO63 - 1, -1, -2, -(1 << 62), -TWO63]


def _extent(v, ints):
    return ints[v % len(ints)]


def fields(inp):
    """The capsule's fields, decoded from the input."""
    f = {}
    f["versioned"] = inp.bit()
    f["version"] = (inp.pick([1, 1, 1, 0, 2]), inp.pick([0, 1, 3]))
    f["flags"] = inp.pick([0, 0, 1, 2, 4, 7, 1 << 63])
    f["ndim"] = inp.pick([0, 1, 1, 2, 2, 3, 4, 8, 65, -1])
    n = max(0, min(f["ndim"], 65))
    f["shape"] = [inp.small(0, 5) if inp.chance(7, 8) else _extent(inp.u8(), EXTREMES)
                  for _ in range(n)]
    f["strides"] = (None if inp.chance(1, 4) else
                    [inp.small(-6, 6) if inp.chance(6, 8) else _extent(inp.u8(), EXTREMES)
                     for _ in range(n)])
    f["dtype"] = inp.pick(DTYPES)
    f["device"] = (inp.pick([1, 1, 1, 2, 4, 13]), inp.pick([0, 0, 1, -1]))
    f["byte_offset"] = inp.pick([0, 0, 4, 16, 64, (1 << 64) - 8, 1 << 63])
    f["null"] = inp.chance(1, 8)
    f["copy"] = inp.pick([None, True, False])
    f["shape_null"] = n > 0 and inp.chance(1, 32)
    return f


def claim(f):
    """(kind, bytes below the first element, bytes from there up) of what the
    fields claim: kind is "ok", "overflow" (no memory can back it) or "huge"."""
    shape, strides = f["shape"], f["strides"]
    code, bits, lanes = f["dtype"]
    if f["ndim"] < 0 or f["ndim"] > 64 or any(s < 0 for s in shape):
        return "overflow", 0, 0
    count = 1
    for s in shape:
        count *= s
    if count == 0:
        return "ok", 0, 0
    esize_bits = bits * max(lanes, 1)
    if esize_bits == 0:
        return "overflow", 0, 0
    if esize_bits % 8:
        total = (count * esize_bits + 7) // 8
        return ("ok" if total <= BACKABLE else "huge" if total < TWO63 else "overflow"), 0, total
    esize = esize_bits // 8
    if count * esize >= TWO63:
        return "overflow", 0, 0
    if count * esize > 16 * BACKABLE:
        # broadcast strides can claim many elements over little memory: legal, but
        # a copy would allocate all of them, which is memory, not a finding
        return "huge", 0, 0
    if strides is None:
        lo, hi = 0, count - 1
    else:
        lo = hi = 0
        for s, st in zip(shape, strides):
            reach = st * (s - 1)
            if abs(reach) >= TWO63 or (s > 1 and abs(st * esize) >= TWO63):
                return "overflow", 0, 0
            if reach > 0:
                hi += reach
            else:
                lo -= reach
    below, above = lo * esize, (hi + 1) * esize
    if below + above >= TWO63:
        return "overflow", 0, 0
    if below + above > BACKABLE:
        return "huge", below, above
    return "ok", below, above


def one_input(data):
    inp = Input(data)
    f = fields(inp)
    kind, below, above = claim(f)
    if kind == "huge":
        return
    boff = f["byte_offset"]
    if kind == "ok" and boff + below + above >= TWO63:
        kind = "overflow"  # no Hurray buffer reaches past 2**63 bytes from its start
    elif kind == "ok" and boff >= BACKABLE:
        return  # representable, but too far to back with memory
    if kind == "overflow":
        backing = np.zeros(64, dtype=np.uint8)
        addr = 0 if f["null"] else backing.ctypes.data
        kind = "overflow"
    else:
        # the lowest byte reached is data + byte_offset - below: back exactly that
        backing = np.zeros(below + above + 64, dtype=np.uint8)
        base = backing.ctypes.data + 64  # below any misalignment the choice makes
        addr = 0 if f["null"] else base + below - boff
        if addr <= 0:
            addr = 0
    keep = []  # the capsule's memory, alive until this input is done
    cap = dl.forge(addr, f["shape"], f["strides"], dtype=f["dtype"], device=f["device"],
                   byte_offset=boff, ndim=f["ndim"], versioned=f["versioned"], flags=f["flags"],
                   version=f["version"], shape_null=f["shape_null"], keep=keep)
    try:
        t = hurray.from_dlpack(cap, copy=f["copy"])
    except (ValueError, TypeError, NotImplementedError, BufferError, MemoryError,
            OverflowError, hurray.InvalidDescriptorError, hurray.UnsupportedError) as e:
        _ = str(e)  # the message is built (a crash there counts too)
        return
    if kind == "overflow" and not f["null"] and t.size:
        raise AssertionError(f"accepted a capsule no memory can back: {f}")
    # read every byte of what was accepted (ASan checks the bounds)
    if t.device.kind == "cpu" and t.size:
        w = hurray.StreamWriter()
        w.write(t)  # every byte of the buffers
        w.getvalue()
        if t.size <= BACKABLE:  # broadcast strides (0) may claim far more elements
            try:
                np.asarray(t).tobytes()
            except (hurray.UnsupportedError, ValueError, TypeError, MemoryError):
                pass
    del t, cap  # before `keep` and `backing`: nothing may outlive them


def main():
    import atheris
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
