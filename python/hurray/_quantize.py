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

    Quantize the float values of `x` (a NumPy array, a torch tensor, a
    hurray.Tensor, anything numpy.asarray or DLPack takes; float16, bfloat16
    and float64 are converted to float32 first) into a new quantized
    hurray.Tensor of storage type `dtype`, row-major, with the scale (and
    zero-point) buffers the scheme needs.

    The scheme follows from the arguments unless `scheme` names it
    ('per_tensor', 'per_channel', 'per_block', 'nf4', 'mxfp'):
    dtype 'nf4' is NF4 (uint4 codes, block_size 64 by default); a float8,
    float6 or float4 dtype is MXFP (float8_e8m0 block scales, block_size 32
    by default); block_size= is per-block affine; axis= alone is
    per-channel affine; neither is per-tensor affine. Blocks run along
    `axis`, the last axis by default; a negative axis counts from the end.
    symmetric=False adds zero points (affine schemes). scale_dtype: float16,
    bfloat16 or float32 for per-block scales (float32 by default; the other
    schemes' scale types are fixed).

    Scales: symmetric max|x| / qmax, asymmetric (max - min) / (qmax - qmin)
    over a range that holds 0; codes round half away from zero (symmetric
    int8 in blocks of 32 with float16 scales is ggml's Q8_0, bit for bit);
    MXFP elements round to nearest even and saturate. NaN and infinities are
    refused (ValueError naming the element). docs/reference/python.md has the details.
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
