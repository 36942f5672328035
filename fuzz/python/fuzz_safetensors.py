#!/usr/bin/env python3
"""Fuzz target: .safetensors files as `hurray convert` reads them (the header
checks of hurray/_cli/_bounds.py, then every tensor read with positioned reads).

A seed file made by safetensors itself (safetensors.numpy.save: several
dtypes, empty tensors, metadata) is mutated: its JSON header as text (tokens of
the format swapped in: offsets, dtypes, shapes, strings for numbers, nesting),
its bytes (the length prefix, the header, the data), with the length prefix
then kept consistent or not; or the input itself becomes the header. The rule
(convert_input.py): the file converts or raises our clean error, nothing else.

Run with atheris: scripts/fuzz.sh python-safetensors MINUTES. The corpus in
fuzz/corpus/python-safetensors/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from convert_input import mutate, mutate_text, one_file, run  # noqa: E402
from fuzz_input import Input  # noqa: E402

SEEDS = None


def _seeds():
    from safetensors.numpy import save
    out = [save({"a": np.arange(4, dtype=np.float32), "b": np.arange(2, dtype=np.int64)}),
           save({"m": np.array([True, False, True]), "u": np.arange(6, dtype=np.uint8)
                 .reshape(2, 3), "h": np.ones((2, 2), np.float16), "e": np.zeros((0, 3),
                                                                                  np.int32)},
                metadata={"format": "pt", "k": "v"}),
           save({"c": np.array([1 + 2j], np.complex64), "d": np.arange(3, dtype=np.float64),
                 "i": np.array([-1], np.int8)})]
    split = []
    for raw in out:
        (n,) = struct.unpack("<Q", raw[:8])
        split.append((raw[8:8 + n], raw[8 + n:]))
    return split


def one_input(data):
    global SEEDS
    if SEEDS is None:
        SEEDS = _seeds()
    inp = Input(data)
    header, body = inp.pick(SEEDS)
    mode = inp.u8() % 8
    if mode < 4:      # the header as text, the length kept right
        text = mutate_text(inp, header)
        raw = struct.pack("<Q", len(text)) + text + body
    elif mode < 6:    # bytes anywhere (the prefix, the header, the data)
        raw = mutate(inp, struct.pack("<Q", len(header)) + header + body)
    elif mode == 6:   # a header edited as JSON: an entry's field replaced
        try:
            doc = json.loads(header)
        except ValueError:
            doc = {}
        names = sorted(k for k in doc if k != "__metadata__")
        if names:
            ent = doc[inp.pick(names)]
            key = inp.pick(["dtype", "shape", "data_offsets"])
            ent[key] = inp.pick([[0, 0], [0, 1 << 62], ["0", "8"], [8, 0], [0.0, 8], [-1],
                                 [1 << 64], "F32", "U8", None, [2, 2], [], {"x": 1}, True,
                                 [0, 8, 16]])
        text = json.dumps(doc).encode()
        raw = struct.pack("<Q", len(text)) + text + body
    else:             # the input is the header
        text = inp.rest()
        raw = struct.pack("<Q", len(text)) + text + body
    one_file(raw, ".safetensors")


if __name__ == "__main__":
    run(one_input, warm=lambda: one_input(b""))
