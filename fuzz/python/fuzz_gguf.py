#!/usr/bin/env python3
"""Fuzz target: .gguf files as `hurray convert` reads them (the bounded reader
of the header, KV section and tensor infos in hurray/_cli/_bounds.py, then every
tensor read with positioned reads, mapped exactly or dequantized by gguf).

A seed file made by gguf's own GGUFWriter (KV of every value type, strings,
arrays, an array of arrays; dense, Q8_0, Q4_0 and Q4_K tensors) is mutated:
bytes and 4/8-byte words in its header region (counts, lengths, types, dims,
offsets) or anywhere, a KV entry of the input's making inserted first (deep
arrays, huge counts and lengths), the counts patched. The rule
(convert_input.py): the file converts or raises our clean error, nothing else.

Run with atheris: scripts/fuzz.sh python-gguf MINUTES. The corpus in
fuzz/corpus/python-gguf/ is replayed by tests/python/test_fuzz_corpus.py.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from convert_input import WORDS, mutate, one_file, run, scratch  # noqa: E402
from fuzz_input import Input  # noqa: E402

SEEDS = None


def _write(fill):
    import gguf
    path = scratch(".seed.gguf")
    w = gguf.GGUFWriter(path, "llama")
    fill(w, gguf)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(path, "rb") as fh:
        data = fh.read()
    os.unlink(path)
    return data


def _kv_every_type(w, gguf):
    V = gguf.GGUFValueType
    w.add_uint32("llama.context_length", 64)
    w.add_float32("llama.rope.freq_base", 10000.0)
    w.add_bool("t.bool", True)
    w.add_int64("t.i64", -5)
    w.add_uint64("t.u64", (1 << 64) - 1)
    w.add_string("general.name", "seed")
    w.add_array("tokenizer.ggml.tokens", ["a", "b", "<s>"])
    w.add_array("tokenizer.ggml.scores", [0.5, -1.0, 2.0])
    w.add_key_value("t.nested", [[1, 2], [3]], V.ARRAY, V.ARRAY)
    w.add_tensor("f32", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.add_tensor("f16", np.ones(8, np.float16))


def _quantized(w, gguf):
    Q = gguf.GGMLQuantizationType
    w.add_uint32("general.alignment", 32)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    for name, qt in (("q8", Q.Q8_0), ("q4", Q.Q4_0)):
        w.add_tensor(name, gguf.quants.quantize(x, qt), raw_dtype=qt)
    # a type without an exact Hurray equivalent (dequantized by gguf; gguf cannot
    # quantize it): one Q4_K block of 144 bytes, 256 elements
    w.add_tensor("qk", rng.integers(0, 256, (1, 144), dtype=np.uint8), raw_dtype=Q.Q4_K)
    w.add_tensor("i32", np.arange(4, dtype=np.int32))


def _seeds():
    out = []
    for fill in (_kv_every_type, _quantized):
        data = _write(fill)
        out.append((data, _header_end(data)))
    return out


def _header_end(data):
    """Roughly where the tensor data starts (the header region to mutate)."""
    try:
        from hurray._cli._bounds import read_gguf
        path = scratch(".probe.gguf")
        with open(path, "wb") as fh:
            fh.write(data)
        return read_gguf(path).data_offset
    except Exception:
        return len(data)


def _inserted_kv(inp):
    """A KV entry of the input's making: a key, a type, a value whose lengths
    and counts may lie, arrays nested as deep as the input says."""
    key = inp.take(inp.small(0, 12)) or b"k"
    kv = struct.pack("<Q", len(key) if inp.chance(7, 8) else inp.uint(8)) + key
    t = inp.small(0, 13)
    kv += struct.pack("<I", t)
    depth = inp.small(0, 12) if t == 9 else 0
    for _ in range(depth):
        kv += struct.pack("<IQ", 9, inp.pick([0, 1, 1, 1, 2, 1 << 62]))
    if t == 9:
        sub = inp.small(0, 12)
        kv += struct.pack("<IQ", sub, inp.pick([0, 1, 3, 255, 1 << 20, 1 << 62]))
    elif t == 8:
        kv += struct.pack("<Q", inp.pick([0, 1, 4, 1 << 62, (1 << 64) - 1]))
    return kv + inp.take(inp.small(0, 16))


def one_input(data):
    global SEEDS
    if SEEDS is None:
        SEEDS = _seeds()
    inp = Input(data)
    raw, header_end = inp.pick(SEEDS)
    mode = inp.u8() % 8
    if mode < 4:      # the header region: counts, lengths, types, dims, offsets
        raw = mutate(inp, raw, region=header_end)
    elif mode < 6:    # anywhere
        raw = mutate(inp, raw)
    elif mode == 6:   # one more KV entry, first
        b = bytearray(raw)
        n = struct.unpack_from("<Q", b, 16)[0]
        b[16:24] = struct.pack("<Q", n + 1)
        b[24:24] = _inserted_kv(inp)
        raw = bytes(b)
    else:             # a count or the version patched
        b = bytearray(raw)
        at = inp.pick([4, 8, 16])
        w = inp.pick(WORDS)
        b[at:at + (4 if at == 4 else 8)] = (w * 2)[:4 if at == 4 else 8]
        raw = bytes(b)
    one_file(raw, ".gguf")


if __name__ == "__main__":
    run(one_input, warm=lambda: one_input(b""))
