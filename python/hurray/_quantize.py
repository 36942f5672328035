"""hurray.quantize: float values to a quantized hurray.Tensor.

The work is the C library's (hurray_quant_quantize_f32, through
hurray._hurray._quantize); this module only brings the input to what the C
half reads: a float buffer (NumPy arrays, read in place) or a hurray.Tensor
(hurray.asarray for the rest: anything with __dlpack__ such as torch tensors,
nested lists). The inverse is Tensor.dequantize.
"""

from . import _hurray
from ._interop import asarray


def _float_buffer(x):
    """Whether x exports float16 / float32 / float64 items through the buffer
    protocol (a NumPy float array, any strides): read in place, whatever its
    alignment, instead of through a hurray.Tensor (whose buffers need the
    64-byte floor, so an unaligned array would be copied first)."""
    try:
        with memoryview(x) as m:
            return m.format.lstrip("@=<") in ("e", "f", "d")
    except (TypeError, ValueError, BufferError):
        return False


def quantize(x, dtype, *, axis=None, block_size=None, symmetric=True, scale_dtype=None,
             scheme=None):
    """quantize(x, dtype, *, axis=None, block_size=None, symmetric=True, scale_dtype=None, scheme=None)

    Quantizes the float values of `x` into a new quantized `hurray.Tensor`.

    `quantize` turns float values into a new quantized `hurray.Tensor` (row-major, its codes in
    buffer 0, scales in buffer 1, zero points in buffer 2); `dequantize` turns any quantized
    row- or column-major tensor (built here, from caller buffers, loaded, streamed) back into a
    new dense row-major tensor of `float32` (the default), `float16`, `bfloat16` or `float64`.
    Both are the C library's kernels (`hurray_quant_quantize_f32`, `hurray_quant_dequantize`,
    [C API](c-api/quant.md#hurray_quant_quantize_f32)) run without the GIL; a 64 MiB float32
    tensor quantizes to int4 blocks at about 2 GB/s on one core of this project's machine
    (`bench/python/test_bench_quantize.py`).

    `x` is anything `numpy.asarray` or DLPack takes: a NumPy array (read in place, any
    strides, any alignment), a torch tensor (detached; CPU only), a `hurray.Tensor`, nested
    lists. float16, bfloat16 and float64 values are converted to float32 first (float64 rounds
    to nearest even); integer inputs are a `TypeError`.

    **Which scheme.** `scheme=` names it (`"per_tensor"`, `"per_channel"`, `"per_block"`,
    `"nf4"`, `"mxfp"`; the `*_affine` spellings too); otherwise the arguments decide:

    | arguments | scheme | storage | parameters |
    |---|---|---|---|
    | `dtype="nf4"` | NF4 | uint4 | float32 absmax per block, `block_size` 64 by default |
    | `dtype` a float8, float6 or float4 type | MXFP | that type | float8_e8m0 exponent per block, `block_size` 32 by default |
    | `block_size=` | per-block affine | int8, uint8, int4, uint4, int2, uint2 | `scale_dtype` float32 (default), float16 or bfloat16 |
    | `axis=` alone | per-channel affine | any integer type up to 32 bits | float32 scale per index of `axis` |
    | neither | per-tensor affine | any integer type up to 32 bits | one float32 scale, inline |

    `scheme="mxfp"` with `int8` / `int4` gives MXINT8 / MXINT4. Blocks run along `axis`, the
    last axis when it is not given; a negative axis counts from the end. `symmetric=False`
    adds zero points to the affine schemes (`ValueError` for NF4 and MXFP, which have none).
    The format's own limits apply and are reported naming the argument: a block size is a power
    of two (at least 2, NF4 8, MXFP 16 to 2048) and at most the axis' extent; MXFP needs the
    axis to be a multiple of the block size; per-tensor and per-channel scales are float32.

    **How scales are chosen, how values round** (in float32; the full statement is the C
    reference's):

    - symmetric affine: `s = max|x| / qmax` (127 for int8, 7 for int4, 1 for int2, 255 for
      uint8, ...), codes in `[-qmax, qmax]`. A symmetric unsigned scheme has zero point 0, so
      it holds only values >= 0: a negative value is refused;
    - asymmetric affine: the range `[min(x, 0), max(x, 0)]` (0 is always exact),
      `s = (hi - lo) / (qmax - qmin)`, `z = qmin - round(lo / s)`, clamped;
    - codes: `clamp(round(x * (1/s)) + z)`, round half away from zero, with the float32 inverse
      of the float32 scale, which is then stored rounded to nearest even in `scale_dtype`. That
      is ggml's rule: `quantize(x, "int8", block_size=32, scale_dtype="float16")` has the codes
      and scales of `gguf.quants.quantize(x, GGMLQuantizationType.Q8_0)`, bit for bit, except
      that an all-zero block gets scale 1.0 where ggml writes 0 (the format forbids a zero
      scale; the codes are 0 either way, and so are the values);
    - a block whose scale underflows its type (float16 below 2^-24) is stored as zeros (scale
      1.0), as its values would dequantize with ggml; a scale beyond its type (float16 above
      65504) is refused (`ValueError` naming `quantization.scale[b]`; use bfloat16 or float32);
    - NF4: the block's `max|x|` is the scale, each value takes the nearest of the 16 NF4 levels
      of `x / s` (QLoRA's table, `docs/spec/quantization/nf4.md`), ties to the lower one;
    - MXFP (OCP MX v1.0): shared exponent `floor(log2(max|x|)) - emax` of the element type
      (8 for e4m3, 15 for e5m2, 2 for e2m1 and e2m3, 4 for e3m2), elements `x / 2^e` rounded to
      nearest even and saturated to the largest finite value (448, 57344, 6, 7.5, 28): the codes
      are `ml_dtypes`' for the clipped values;
    - every affine value comes back within half a step (plus the scale type's rounding times the
      code's distance to the zero point for float16 / bfloat16 scales).

    **NaN and infinities** are refused by every scheme with `ValueError` naming the element
    (`e.field == "x[2, 9]"`): no scale represents them, and an MXFP block holding one has no
    shared exponent (float8_e5m2 elements could hold an infinity; their block scale could not).

    Partial last blocks (per-block, NF4) are padded with zero bytes in storage and skipped on
    dequantization; `Tensor.dequantize` also reads tensors whose padding holds anything.

    A recipe (quantize, save, load, dequantize): the guide,
    [Quantization](../guide/quantization.md).
    """
    if not isinstance(x, _hurray.Tensor) and not _float_buffer(x):
        detach = getattr(x, "detach", None)
        if detach is not None and type(x).__module__.partition(".")[0] == "torch":
            x = detach()  # DLPack refuses a tensor that requires grad
        dt = getattr(x, "dtype", None)
        if getattr(dt, "byteorder", "=") == ">" and hasattr(dt, "newbyteorder"):
            x = x.astype(dt.newbyteorder("="))  # a big-endian NumPy array
        x = asarray(x)
    return _hurray._quantize(x, dtype, axis=axis, block_size=block_size, symmetric=symmetric,
                             scale_dtype=scale_dtype, scheme=scheme)
