#!/usr/bin/env python3
"""Fuzz target: forged `hurray.data_crc32c` records (the data checksums,
docs/reference/file-format.md "Data checksums") and damaged data under them.

From the input come a small file's tensors (dtypes, shapes, an empty one, a
composite), then the record: the true one the writer computes, the true one
with bytes flipped, cut or extended, or bytes made up; and, sometimes, one
byte of the file's tensor region flipped under a true record. The file is
written with checksums=False and the record as a plain KV entry (what a
damaged or hostile file holds), then checked by File.verify(),
load(verify=True), hurray.numpy and hurray.torch loaders with verify=True,
and read without verifying.

The rules: every call either succeeds or raises hurray.FileError (nothing
else, no crash; ASan reports a read outside the file); the true record over
undamaged bytes verifies; a true record over a flipped tensor byte never
verifies (and the error names a CRC mismatch); a record of the wrong length
never verifies.

Run with atheris: scripts/fuzz.sh python-checksums MINUTES. The corpus in
fuzz/corpus/python-checksums/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

import numpy as np  # noqa: E402

import hurray  # noqa: E402
import hurray.numpy as _hn  # noqa: E402
from hurray import _hurray  # noqa: E402

from fuzz_input import Input, instrument_hurray  # noqa: E402

try:
    import torch  # noqa: F401
    import hurray.torch as _ht
except Exception:  # noqa: BLE001 - not installed, or not importable here (pragma: no cover)
    _ht = None

KEY = "hurray.data_crc32c"
SCRATCH = tempfile.mkdtemp(prefix="hurray-fuzz-crc-")
TRUE = os.path.join(SCRATCH, "true.hrry")
PATH = os.path.join(SCRATCH, "f.hrry")


def _tensors(inp):
    out = {}
    for k in range(inp.small(1, 3)):
        dt = inp.pick([np.float32, np.int8, np.float64, np.uint16])
        shape = tuple(inp.small(0, 6) for _ in range(inp.small(0, 3)))
        n = int(np.prod(shape, dtype=np.int64))
        out[f"t{k}"] = (np.arange(n) * 13 + k).astype(dt).reshape(shape)
    if inp.chance(1, 5):
        m = [hurray.from_numpy(np.full((2, 4), r, np.float32)) for r in (1, 2)]
        m = [hurray.Tensor(np.asarray(x), "float32", (2, 4), shard=hurray.Shard([4, 4], [2 * r, 0]))
             for r, x in enumerate(m)]
        out["c"] = hurray.Composite("partition", [4, 4], hurray.float32, m)
    return out


def _forge(inp, true):
    how = inp.u8() % 6
    rec = bytearray(true)
    if how == 0:
        return bytes(rec), "true"
    if how == 1 and rec:
        for _ in range(inp.small(1, 3)):
            rec[inp.uint(2) % len(rec)] ^= 1 << (inp.u8() % 8)
        return bytes(rec), "flipped" if bytes(rec) != true else "true"
    if how == 2:
        cut = inp.uint(2) % (len(rec) + 1)
        return bytes(rec[:cut]), "true" if cut == len(rec) else "wrong length"
    if how == 3:
        extra = inp.take(inp.small(1, 9))
        return bytes(rec) + extra, "wrong length" if extra else "true"
    if how == 4:
        return b"", "wrong length" if true else "true"
    made = inp.take(inp.small(0, 40))
    kind = "true" if made == true else ("wrong length" if len(made) != len(true) else "forged")
    return made, kind


def _calls():
    out = {
        "verify": lambda: hurray.open(PATH).verify(),
        "load verify": lambda: hurray.load(PATH, verify=True),
        "numpy verify": lambda: _hn.load_file(PATH, verify=True),
        "load": lambda: hurray.load(PATH),
    }
    if _ht is not None:
        out["torch verify"] = lambda: _ht.load_file(PATH, verify=True)
    return out


CALLS = _calls()


def one_input(data):
    inp = Input(data)
    tensors = _tensors(inp)
    hurray.save(TRUE, tensors, durable=False, checksums=True)
    true = hurray.load_kv(TRUE, raw=True)[KEY]
    rec, kind = _forge(inp, true)
    _hurray.save(PATH, {k: hurray.asarray(v) if isinstance(v, np.ndarray) else v
                        for k, v in tensors.items()}, kv={KEY: rec}, durable=False,
                 checksums=False)
    flipped_data = False
    if kind == "true" and inp.chance(1, 3):
        # a byte inside one tensor's data (found by its bytes, where they are unique)
        image = open(PATH, "rb").read()
        spans = []
        for v in tensors.values():
            raw = np.ascontiguousarray(v).tobytes() if isinstance(v, np.ndarray) else b""
            if len(raw) >= 8 and image.count(raw) == 1:
                spans.append((image.index(raw), len(raw)))
        if spans:
            off, n = spans[inp.u8() % len(spans)]
            pos = off + inp.uint(2) % n
            with open(PATH, "r+b") as fh:
                fh.seek(pos)
                fh.write(bytes([image[pos] ^ (1 << (inp.u8() % 8))]))
            flipped_data = True
    for name, call in CALLS.items():
        try:
            call()
            ok = True
        except hurray.FileError as e:
            ok = False
            if flipped_data and name != "load":
                assert "CRC" in str(e) or "crc" in str(e), (name, e)
        except hurray.UnsupportedError:
            continue  # a composite has no NumPy or torch form
        if name == "load":
            continue
        if kind == "true" and not flipped_data:
            assert ok, f"{name}: the true record over undamaged bytes did not verify"
        if kind in ("wrong length", "flipped") or flipped_data:
            assert not ok, f"{name}: verified a {kind} record (data flipped: {flipped_data})"


def main():
    import atheris
    one_input(b"")  # imports what the loaders reach, then instrument it
    instrument_hurray(atheris)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
