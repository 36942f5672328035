#!/usr/bin/env python3
"""Fuzz target: .npy and .npz files as `hurray convert` reads them (the header
and member checks of hurray/_cli/_bounds.py, then NumPy's reader, then every
array read).

Seed arrays saved by NumPy itself (np.save; np.savez and np.savez_compressed
for .npz: several dtypes, Fortran order, 0-d, empty, structured) are mutated:
the .npy header as text (shapes, dtypes, fortran_order, nesting) with its
length kept right or not, the bytes anywhere; an .npz rebuilt around a mutated
member (a valid zip, so the member's own header is what is tested) or its zip
bytes mutated directly. The rule (convert_input.py): the file converts or
raises our clean error, nothing else.

Run with atheris: scripts/fuzz.sh python-npy MINUTES. The corpus in
fuzz/corpus/python-npy/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import io
import os
import struct
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from convert_input import mutate, mutate_text, one_file, run  # noqa: E402
from fuzz_input import Input  # noqa: E402

ARRAYS = None


def _arrays():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = [a, np.asfortranarray(a), np.array(True), np.zeros((0, 4), np.int16),
           np.array([1, 2, 3], np.uint64), np.ones(3, np.complex64),
           np.zeros(2, dtype=[("x", "<i4"), ("y", "<f8")]), np.array([1.5], ">f8")]
    raws = []
    for arr in out:
        f = io.BytesIO()
        np.save(f, arr)
        raws.append(f.getvalue())
    return raws


def _split(raw):
    major = raw[6]
    start = 10 if major == 1 else 12
    (hlen,) = struct.unpack_from("<H" if major == 1 else "<I", raw, 8)
    return raw[:8], raw[start:start + hlen], raw[start + hlen:]


def _npy(inp, raw):
    mode = inp.u8() % 4
    if mode < 2:   # the header text, its length kept right
        magic, text, body = _split(raw)
        text = mutate_text(inp, text)
        if magic[6] == 1 and len(text) < 1 << 16:
            return magic + struct.pack("<H", len(text)) + text + body
        return magic[:6] + b"\x02\x00" + struct.pack("<I", len(text)) + text + body
    if mode == 2:  # bytes in the header region
        return mutate(inp, raw, region=128)
    return mutate(inp, raw)


def _npz(inp):
    members = []
    for i in range(inp.small(1, 3)):
        raw = inp.pick(ARRAYS)
        if inp.chance(1, 2):
            raw = _npy(inp, raw)
        members.append((f"m{i}.npy" if inp.chance(15, 16) else f"m{i}.txt", raw))
    f = io.BytesIO()
    method = inp.pick([zipfile.ZIP_STORED, zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
    with zipfile.ZipFile(f, "w", compression=method) as z:
        for name, raw in members:
            z.writestr(name, raw)
    data = f.getvalue()
    if inp.chance(1, 3):  # the zip's own bytes: local headers, central directory
        data = mutate(inp, data)
    return data


def one_input(data):
    global ARRAYS
    if ARRAYS is None:
        ARRAYS = _arrays()
    inp = Input(data)
    if inp.chance(1, 2):
        one_file(_npy(inp, inp.pick(ARRAYS)), ".npy")
    else:
        one_file(_npz(inp), ".npz")


if __name__ == "__main__":
    run(one_input, warm=lambda: one_input(b""))
