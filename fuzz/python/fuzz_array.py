#!/usr/bin/env python3
"""Fuzz target: forged array-interface objects and buffer exports handed to
hurray.asarray and hurray.from_numpy.

An object's __array_interface__ dict comes from the input: the shape, the
type string (valid, padded, byte-swapped, structured, nonsense), the strides,
the offset, the version, and data as a bytes or bytearray object of a size the
input picks (NumPy checks that a buffer object is large enough; a raw address
is never forged, since nothing could check it). The array NumPy makes of it
(any strides, offsets, orders, zero extents) goes through every copy mode,
and what hurray accepts is read back in full and compared.

Run with atheris: scripts/fuzz.sh python-array MINUTES. The corpus in
fuzz/corpus/python-array/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import hurray  # noqa: E402

from fuzz_input import Input  # noqa: E402

TYPESTRS = ["<f4", "<f8", "<f2", "|u1", "|i1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8",
            "|b1", "<c8", "<c16", ">f4", ">i8", "<V4", "<M8[s]", "|S3", "<f16",
            "<x4", "bogus", "<f3", "<i0"]


class Forged:
    def __init__(self, interface):
        self.__array_interface__ = interface


# ("|O" and "<U..." are left out: NumPy would read pointers, or take code
# points it never checks, out of the forged bytes.)


def interface(inp):
    ndim = inp.pick([0, 1, 1, 2, 2, 3, 4, 33])
    shape = tuple(inp.small(0, 6) if inp.chance(7, 8) else inp.pick([2**31, 2**40, -1])
                  for _ in range(ndim))
    typestr = inp.pick(TYPESTRS)
    size = inp.pick([0, 1, 7, 16, 64, 255, 1024, 4096])
    data = inp.pick([bytes, bytearray])(inp.take(size).ljust(size, b"\x01"))
    d = {"shape": shape, "typestr": typestr, "data": data, "version": inp.pick([3, 3, 3, 2])}
    if inp.chance(1, 2):
        d["strides"] = tuple(inp.small(-64, 64) if inp.chance(7, 8) else
                             inp.pick([2**62, -(2**62), 0]) for _ in range(ndim))
    if inp.chance(1, 4):
        d["offset"] = inp.pick([0, 1, 4, 8, 63, 4095, 2**40])
    if inp.chance(1, 16):
        d["descr"] = [("", typestr)]
    return d


def inside(d):
    """Whether every byte the dict claims lies inside its data buffer. NumPy does
    not check an offset against the buffer: an array past its end is NumPy's
    own broken object (printing it crashes NumPy), so such forgeries are not
    handed on."""
    try:
        item = np.dtype(d["typestr"]).itemsize
    except Exception:  # noqa: BLE001 - NumPy refuses the type: nothing to check
        return True
    shape = d["shape"]
    if any(n < 0 for n in shape):
        return True
    if any(n == 0 for n in shape):
        return True
    strides = d.get("strides")
    if strides is None:
        strides, acc = [], item
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    lo = hi = d.get("offset", 0)
    for n, st in zip(shape, strides):
        reach = st * (n - 1)
        lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
    return lo >= 0 and hi + item <= len(d["data"])


def one_input(data):
    inp = Input(data)
    d = interface(inp)
    if not inside(d):
        return
    obj = Forged(d)
    try:
        arr = np.asarray(obj)
    except Exception:  # noqa: BLE001 - NumPy refused the forgery: nothing to hand on
        return
    if inp.bit():
        arr = arr[tuple(slice(None, None, inp.pick([1, 2, -1])) for _ in range(arr.ndim))]
    if arr.size * arr.itemsize > 16 << 20:
        return  # broadcast strides over little memory: a copy is memory, not a finding
    for copy in (None, True, False):
        for f in (hurray.from_numpy, hurray.asarray):
            try:
                t = f(arr, copy=copy)
            except (ValueError, TypeError, NotImplementedError, BufferError, MemoryError,
                    OverflowError, hurray.InvalidDescriptorError, hurray.UnsupportedError):
                continue
            try:
                back = np.asarray(t)
            except (hurray.UnsupportedError, ValueError, TypeError, MemoryError):
                continue
            if back.dtype == arr.dtype and back.shape == arr.shape and arr.size <= 1 << 20:
                if arr.dtype == np.bool_:  # forged bytes other than 0 and 1 are True
                    same = np.array_equal(back.astype(np.uint8) != 0, arr.astype(np.uint8) != 0)
                else:
                    same = np.array_equal(back, arr, equal_nan=back.dtype.kind in "fc")
                if not same:
                    raise AssertionError(f"values changed through {f.__name__}(copy={copy}): "
                                         f"{arr!r} (strides {arr.strides}) became {back!r}")


def main():
    import atheris
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
