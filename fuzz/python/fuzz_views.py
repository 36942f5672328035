#!/usr/bin/env python3
"""Fuzz target: forged `hurray.views` records (the shared-tensor record,
docs/reference/file-format.md "Shared tensors") through every loader.

From the input come the stored tensors of a small file (dtype, shape, order,
an empty one, a quantized one) and a record: either the record `hurray.save`
writes for real views of them, mutated field by field, or one made up from
the input (base, type, shape, byte offset, byte strides at interesting
values), sometimes with its JSON cut or its fields given the wrong types. The
file is written with the record as it is, then read by hurray.load,
open()[name], get_slice, safe_open, hurray.numpy (file and bytes) and
hurray.torch when it is importable.

The rules: a loader either returns or raises ValueError or UnsupportedError
(nothing else, no crash: ASan reports a read outside the file); all loaders
accept or refuse the same record (one validation, libhurray's src/file/views.c); and an
accepted view holds exactly the elements NumPy reads at those offsets from a
copy of its base's bytes.

Run with atheris: scripts/fuzz.sh python-views MINUTES. The corpus in
fuzz/corpus/python-views/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

import numpy as np  # noqa: E402

import hurray  # noqa: E402
from hurray import _hurray  # noqa: E402

from fuzz_input import Input, instrument_hurray  # noqa: E402

try:  # optional: the torch loader, when torch is installed
    import torch  # noqa: F401
    import hurray.torch as _ht
except Exception:  # noqa: BLE001 - not installed, or not importable here (pragma: no cover)
    _ht = None

import hurray.numpy as _hn  # noqa: E402

DTYPES = ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "int64",
          "float16", "complex64", "bool", "int4", "float33", "bfloat16"]
NP = {"float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
      "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "int64": np.int64,
      "float16": np.float16, "complex64": np.complex64}
INTERESTING = [0, 1, -1, 2, 3, 4, 7, 8, -8, 16, 63, 64, 4096, 2**31, 2**32, 2**62, 2**63 - 1,
               -(2**63), 2**64, 2**70]
SCRATCH = tempfile.mkdtemp(prefix="hurray-fuzz-views-")
PATH = os.path.join(SCRATCH, "f.hrry")


def _stored(inp):
    out = {}
    for k in range(inp.small(1, 3)):
        dt = inp.pick(["float32", "float64", "int8", "int16", "uint8"])
        shape = tuple(inp.small(0, 5) for _ in range(inp.small(0, 3)))
        n = int(np.prod(shape, dtype=np.int64))
        a = (np.arange(n) * 7 + k).astype(NP[dt]).reshape(shape)
        if inp.chance(1, 4) and a.ndim >= 2:
            a = np.asfortranarray(a)
        out[f"s{k}"] = hurray.from_numpy(a)
    if inp.chance(1, 6):
        out["q"] = hurray.zeros([2, 8], dtype="int4")
    return out


def _num(inp):
    return inp.pick(INTERESTING) if inp.chance(1, 3) else inp.small(0, 64) - 16


def _made_up(inp, names):
    rank = inp.pick([0, 1, 2, 3, 65]) if inp.chance(1, 8) else inp.small(0, 3)
    shape = [inp.pick(INTERESTING) if inp.chance(1, 8) else inp.small(0, 5) for _ in range(rank)]
    rec = {"base": inp.pick(names + ["missing"]), "dtype": inp.pick(DTYPES), "shape": shape,
           "byte_offset": _num(inp), "byte_strides": [_num(inp) for _ in range(rank)]}
    if inp.chance(1, 8):
        rec["byte_strides"] = rec["byte_strides"][:-1]
    return rec


def _real(inp, stored):
    base = stored["s0"]
    a = np.asarray(base)
    views = {"s0": a}
    if a.ndim and a.size:
        views["v0"] = a[tuple(slice(None, None, inp.pick([1, 2, -1])) for _ in range(a.ndim))]
        views["v1"] = a.reshape(-1)[inp.small(0, a.size - 1):]
        views["v2"] = a.reshape(-1)[0, ...] if a.ndim == 1 else a[(0,) * a.ndim]
    try:
        hurray.save(PATH, views)
        raw = hurray.load_kv(PATH, raw=True).get("hurray.views")
    except (ValueError, hurray.UnsupportedError):
        return {}
    return json.loads(raw)["views"] if raw else {}


def _mutate(inp, rec):
    for _ in range(inp.small(0, 3)):
        field = inp.pick(["base", "dtype", "shape", "byte_offset", "byte_strides", "extra"])
        how = inp.u8() % 5
        if how == 0:
            rec.pop(field, None)
        elif how == 1:
            rec[field] = inp.pick(["float32", 3, None, [1], {"a": 1}, "s0", -1, 2**64])
        elif how == 2 and isinstance(rec.get(field), list) and rec[field]:
            rec[field][inp.u8() % len(rec[field])] = _num(inp)
        elif how == 3 and isinstance(rec.get(field), int):
            rec[field] += _num(inp)
        else:
            rec[field] = _num(inp)
    return rec


def record(inp, stored):
    names = list(stored)
    views = {}
    if inp.bit():
        for name, rec in _real(inp, stored).items():
            views[name] = _mutate(inp, dict(rec, base="s0") if "base" in rec else rec)
    for k in range(inp.small(0 if views else 1, 2)):
        views[f"m{k}"] = _mutate(inp, _made_up(inp, names))
    doc = {"format": 1 if inp.chance(7, 8) else inp.pick([0, 2, "1", None]), "views": views}
    text = json.dumps(doc)
    if inp.chance(1, 16):
        text = text[:inp.u8() % (len(text) + 1)]
    return text


def _loaders():
    out = {
        "load": lambda p, n: hurray.load(p)[n],
        "open": lambda p, n: hurray.open(p)[n],
        "get_slice": lambda p, n: hurray.open(p).get_slice(n)[...],
        "safe_open np": lambda p, n: hurray.safe_open(p, "np").get_tensor(n),
        "numpy.load_file": lambda p, n: _hn.load_file(p)[n],
        "numpy.load": lambda p, n: _hn.load(open(p, "rb").read())[n],
    }
    if _ht is not None:
        out["torch.load_file"] = lambda p, n: _ht.load_file(p)[n]
        out["safe_open pt"] = lambda p, n: hurray.safe_open(p, "pt").get_tensor(n)
    return out


LOADERS = _loaders()
# What a framework may lack a type for (refused with UnsupportedError, or a
# NumPy/torch TypeError for a type it has no name for), not a record error.
NOT_A_RECORD_ERROR = (hurray.UnsupportedError,)


#: Views larger than this (a zero stride repeats elements: a forged record can
#: describe exabytes over a few bytes, all zero-copy) are compared on a sample.
MAX_COMPARED_BYTES = 1 << 20


def _sample(shape):
    """Index tuples of a large view: its corners and a spread of others."""
    n = 1
    for d in shape:
        n *= d
    out = []
    for k in range(64):
        flat = (k * 0x9E3779B97F4A7C15) % n if k > 1 else (0 if k == 0 else n - 1)
        idx = []
        for d in reversed(shape):
            idx.append(flat % d)
            flat //= d
        out.append(tuple(reversed(idx)))
    return out


def _elements(x):
    """(shape, the elements' bytes in row-major order): what every loader must agree on."""
    if hasattr(x, "detach"):  # torch (bfloat16 has no NumPy form: compare bytes)
        import torch
        x = x.detach().cpu()
        if x.numel() * x.element_size() > MAX_COMPARED_BYTES:
            return tuple(x.shape), b"".join(
                x[i].reshape(1).view(torch.uint8).numpy().tobytes() for i in _sample(x.shape))
        flat = torch.empty(x.numel(), dtype=x.dtype)  # fresh, stride 1 even for 1 element
        flat.copy_(x.reshape(-1))
        return tuple(x.shape), flat.view(torch.uint8).numpy().tobytes()
    a = np.asarray(x)
    if a.nbytes > MAX_COMPARED_BYTES:
        return a.shape, b"".join(a[i].tobytes() for i in _sample(a.shape))
    return a.shape, a.tobytes()  # tobytes is row-major whatever the strides


def one_input(data):
    inp = Input(data)
    stored = _stored(inp)
    text = record(inp, stored)
    try:
        _hurray.save(PATH, stored, kv={"hurray.views": text})
    except (ValueError, hurray.UnsupportedError):
        return
    try:
        doc = json.loads(text)
        names = [n for n in doc.get("views", {})][:3] if isinstance(doc, dict) and \
            isinstance(doc.get("views"), dict) else []
    except ValueError:
        names = []
    names = names or ["m0"]
    for name in names:
        outcome = {}
        for lname, load in LOADERS.items():
            try:
                outcome[lname] = ("ok", _elements(load(PATH, name)))
            except KeyError:
                outcome[lname] = ("missing", None)
            except ValueError as e:
                outcome[lname] = ("refused", str(e).split(";")[0])
            except NOT_A_RECORD_ERROR:
                outcome[lname] = ("no type", None)
        kinds = {k for k, _ in outcome.values()} - {"no type"}
        if len(kinds) > 1:
            raise AssertionError(f"loaders disagree on view {name!r} of {text}: {outcome}")
        got = {v for k, v in outcome.values() if k == "ok"}
        if len(got) > 1:
            raise AssertionError(f"loaders read different elements for {name!r} of {text}: "
                                 f"{outcome}")


def main():
    import atheris
    one_input(b"")  # imports what the loaders reach, then instrument it
    instrument_hurray(atheris)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
