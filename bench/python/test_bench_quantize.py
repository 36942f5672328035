"""Quantization throughput on a 64 MiB float32 tensor ([4096, 4096], GiB/s of float32).

- ``quantize int4 per-block``: ``hurray.quantize(x, "int4", block_size=32,
  scale_dtype="float16")`` (symmetric, the Q4-style layout) against the same job
  done with NumPy (block max, float16 scale, rounding, clipping, nibble packing);
- ``dequantize int4 per-block``: ``Tensor.dequantize()`` of that tensor against
  NumPy unpacking the nibbles and multiplying by the widened scales;
- ``quantize int8 Q8_0``: ``hurray.quantize(x, "int8", block_size=32,
  scale_dtype="float16")``, bit for bit ggml's Q8_0, against the gguf package's
  own quantizer (skipped without gguf).

The C kernels run on one thread without the GIL (docs/reference/c-api/quant.md); the
figure that matters is GiB/s, the ratio says how far ahead of a vectorized
NumPy pipeline they are.
"""

import pytest

from conftest import MiB, measure

ROWS, COLS = 4096, 4096
BYTES = ROWS * COLS * 4
assert BYTES == 64 * MiB


@pytest.fixture(scope="module")
def x(np):
    return np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)


def numpy_q4(np, x):
    b = x.reshape(-1, 32)
    d = np.abs(b).max(axis=1, keepdims=True) / np.float32(7)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    q = np.clip(np.rint(b * inv), -7, 7).astype(np.int8)
    packed = (q[:, 0::2] & 15).astype(np.uint8) | (q[:, 1::2] << 4).astype(np.uint8)
    return packed, d.astype(np.float16)


def numpy_dq4(np, packed, d):
    lo = (packed & 15).astype(np.int8)
    hi = (packed >> 4).astype(np.int8)
    q = np.empty((packed.shape[0], 32), np.int8)
    q[:, 0::2], q[:, 1::2] = lo, hi
    q = np.where(q >= 8, q - 16, q)
    return (q.astype(np.float32) * d.astype(np.float32)).reshape(ROWS, COLS)


def test_quantize_int4_hurray(benchmark, np, hurray, x, fresh):
    benchmark.group = "quantize int4 per-block 64MiB"
    t = hurray.quantize(x, "int4", block_size=32, scale_dtype="float16")
    assert t.shape == (ROWS, COLS) and t.buffer_handles[0].byte_size == BYTES // 8
    measure(benchmark, lambda: hurray.quantize(x, "int4", block_size=32, scale_dtype="float16"),
            role="hurray", bytes_=BYTES, rounds=7)


def test_quantize_int4_peer(benchmark, np, x, fresh):
    benchmark.group = "quantize int4 per-block 64MiB"
    measure(benchmark, lambda: numpy_q4(np, x), role="peer", bytes_=BYTES, rounds=3)


def test_dequantize_int4_hurray(benchmark, np, hurray, x, fresh):
    benchmark.group = "dequantize int4 per-block 64MiB"
    t = hurray.quantize(x, "int4", block_size=32, scale_dtype="float16")
    back = np.asarray(t.dequantize())
    assert back.shape == (ROWS, COLS) and float(np.abs(back - x).max()) < 1.0
    measure(benchmark, t.dequantize, role="hurray", bytes_=BYTES, rounds=7)


def test_dequantize_int4_peer(benchmark, np, x, fresh):
    benchmark.group = "dequantize int4 per-block 64MiB"
    packed, d = numpy_q4(np, x)
    measure(benchmark, lambda: numpy_dq4(np, packed, d), role="peer", bytes_=BYTES, rounds=3)


def test_quantize_q8_0_hurray(benchmark, np, hurray, x, fresh):
    pytest.importorskip("gguf")
    benchmark.group = "quantize int8 Q8_0 64MiB"
    measure(benchmark, lambda: hurray.quantize(x, "int8", block_size=32, scale_dtype="float16"),
            role="hurray", bytes_=BYTES, rounds=7)


def test_quantize_q8_0_peer(benchmark, np, x, fresh):
    gguf = pytest.importorskip("gguf")
    benchmark.group = "quantize int8 Q8_0 64MiB"
    q8 = gguf.GGMLQuantizationType.Q8_0
    measure(benchmark, lambda: gguf.quants.quantize(x, q8), role="peer", bytes_=BYTES, rounds=3)
