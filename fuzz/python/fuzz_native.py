#!/usr/bin/env python3
"""Fuzz target: forged native-protocol capsules ('hurray_tensor') handed to
hurray.from_hurray.

A capsule is built the way a C producer builds one, against libhurray's C ABI
(libhurray.so through tests/python/capi.py): a buffer list and a tensor
context. From the input come a seed tensor (dense, strided, sparse, quantized,
block-paged), mutations of its encoded descriptor (bytes replaced, inserted,
cut), and each buffer's size, device and sync mode, so the descriptor and the
buffers it is handed can disagree in every way. Every buffer is real memory of
the size its handle declares; an accepted tensor is read in full (streamed),
so ASan reports a read outside what the producer handed over.

Run with atheris: scripts/fuzz.sh python-native MINUTES (needs the shared
libhurray, which the script builds). The corpus in fuzz/corpus/python-native/
is replayed by tests/python/test_fuzz_corpus.py.
"""
import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "python"))

import numpy as np  # noqa: E402

import capi  # noqa: E402
import hurray  # noqa: E402

from fuzz_input import Input  # noqa: E402


def _seeds():
    f32 = np.arange(24, dtype=np.float32)
    out = [hurray.from_numpy(f32.reshape(4, 6)),
           hurray.from_numpy(f32.reshape(4, 6)[:, ::2]),
           hurray.from_numpy(f32.reshape(4, 6).T.copy().T),
           hurray.zeros([3, 5], dtype="int4"),
           hurray.Tensor([np.arange(3, dtype=np.float32), np.array([0, 2, 1], np.uint64),
                          np.array([0, 2, 3], np.uint64)], "float32", (2, 3),
                         layout=hurray.CsrLayout(nnz=3)),
           hurray.Tensor([np.arange(2, dtype=np.float32), np.array([0, 0, 1, 1], np.uint64)],
                         "float32", (2, 2), layout=hurray.CooLayout(nnz=2)),
           hurray.Tensor([np.zeros(16, np.uint8), np.ones(2, np.float16)], "int8", (2, 8),
                         quantization=hurray.PerBlockAffine.symmetric(1, 8, 1, "float16"))]
    return [(t.descriptor.encode(), [bytes(np.asarray(t.buffer(i)))
                                     for i in range(t.buffer_count)]) for t in out]


SEEDS = None
INTERESTING = [0x00, 0x01, 0x02, 0x03, 0x07, 0x0A, 0x0B, 0x40, 0x7F, 0x80, 0xF0, 0xFE, 0xFF]


def mutate(inp, wire):
    b = bytearray(wire)
    for _ in range(inp.small(0, 6)):
        op = inp.u8() % 5
        pos = inp.uint(2) % (len(b) + 1)
        if op == 0 and pos < len(b):
            b[pos] = inp.u8()
        elif op == 1 and pos < len(b):
            b[pos] = inp.pick(INTERESTING)
        elif op == 2:
            b[pos:pos] = inp.take(inp.small(1, 8))
        elif op == 3:
            del b[pos:pos + inp.small(1, 16)]
        elif op == 4 and pos + 8 <= len(b):
            b[pos:pos + 8] = inp.pick([b"\xff" * 8, b"\x00" * 8, b"\x00" * 7 + b"\x80",
                                       (1 << 40).to_bytes(8, "little")])
    return bytes(b)


def one_input(data):
    global SEEDS
    L = capi.lib()
    if L is None:
        return
    if SEEDS is None:
        SEEDS = _seeds()
    inp = Input(data)
    wire, payloads = inp.pick(SEEDS)
    wire = mutate(inp, wire)
    sizes = []
    for p in payloads:
        choice = inp.u8() % 6
        sizes.append(len(p) if choice < 3 else [0, max(len(p) - 1, 0), len(p) + 64][choice - 3])
    if inp.chance(1, 6):
        sizes.append(inp.small(0, 64))  # one buffer too many
    if inp.chance(1, 6) and sizes:
        sizes.pop()                     # one too few
    device = inp.pick([0, 0, 0, 1])
    sync = inp.pick([0, 0, 0, 1, 2]) if device else 0
    prod = capi.Producer()
    lst = c_ctx = None
    try:
        lst = ctypes.c_void_p()
        capi.check(L.hurray_buffer_list_new(len(sizes), ctypes.byref(lst)))
        for i, n in enumerate(sizes):
            payload = (payloads[i] if i < len(payloads) else b"")[:n].ljust(n, b"\x00")
            ptr = prod.memory(payload) if n else None
            b = ctypes.c_void_p()
            rc = L.hurray_buffer_from_ptr(ptr, n, 64 if n else 1, device, sync, 0,
                                          prod.on_release, i + 1, ctypes.byref(b))
            if rc != 0:
                return
            capi.check(L.hurray_buffer_list_push(lst, b))
        c_ctx = prod.context(wire)
        cap = capi.pyapi.PyCapsule_New(lst, capi.NAME, None)
        assert capi.pyapi.PyCapsule_SetContext(cap, c_ctx) == 0
        try:
            t = hurray.from_hurray(cap, permissive=inp.bit())
        except (ValueError, TypeError, NotImplementedError, BufferError, MemoryError,
                OverflowError, KeyError, IndexError, hurray.InvalidDescriptorError,
                hurray.UnsupportedError, hurray.InternalError) as e:
            _ = str(e)
            t = None
        if capi.pyapi.PyCapsule_GetName(cap) == capi.NAME:
            # not consumed: the producer still owns the list and the context
            capi.check(L.hurray_buffer_list_destroy(ctypes.byref(lst)))
            capi.check(L.hurray_tensor_context_destroy(ctypes.byref(c_ctx)))
        lst = c_ctx = None
        if isinstance(t, hurray.Tensor):
            try:
                w = hurray.StreamWriter()
                w.write(t)  # every byte of every buffer
                w.getvalue()
                np.asarray(t)
            except (hurray.UnsupportedError, hurray.StreamError, ValueError, TypeError,
                    MemoryError):
                pass
            _ = repr(t)
        del t
    finally:
        if lst is not None and lst.value:
            L.hurray_buffer_list_destroy(ctypes.byref(lst))
        if c_ctx is not None and c_ctx.value:
            L.hurray_tensor_context_destroy(ctypes.byref(c_ctx))
        del prod


def main():
    import atheris
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
