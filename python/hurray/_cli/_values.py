"""Element values for the converters: bytes of row-major tensors, NumPy views of
them (sub-byte types unpacked), casts to a float type.

NumPy (and ml_dtypes for bfloat16, float8, float6 and float4 values) is
imported when a function here runs; the `hurray` command imports this module
only for the subcommands that read data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _hurray
from .._hurray import Tensor
from ._errors import Refused

# hurray type name -> NumPy dtype, for the types NumPy has natively
NUMPY_NATIVE = {
    "bool": "bool", "int8": "int8", "uint8": "uint8", "int16": "<i2", "uint16": "<u2",
    "int32": "<i4", "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2",
    "float32": "<f4", "float64": "<f8", "complex64": "<c8", "complex128": "<c16",
}
# hurray type name -> ml_dtypes type name (one byte or more per element in memory)
ML_DTYPES = {
    "bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
    "float8_e8m0": "float8_e8m0fnu", "float4_e2m1": "float4_e2m1fn",
    "float6_e2m3": "float6_e2m3fn", "float6_e3m2": "float6_e3m2fn",
    "int4": "int4", "uint4": "uint4", "int2": "int2", "uint2": "uint2",
}
FLOAT_TARGETS = ("float16", "bfloat16", "float32", "float64")


def np_dtype(name: str) -> Any:
    """The NumPy dtype holding one element of hurray type `name` per item
    (ml_dtypes' for the types NumPy lacks), or None."""
    if name in NUMPY_NATIVE:
        return np.dtype(NUMPY_NATIVE[name])
    if name in ML_DTYPES:
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(getattr(ml_dtypes, ML_DTYPES[name]))
    return None


def packed_size(name: str, count: int) -> int:
    return _hurray.buffer_size_bytes(name, count)


def data_bytes(t: Tensor) -> Any:
    """The packed bytes of a row-major tensor's elements (a uint8 NumPy view)."""
    raw = np.asarray(t.buffer(0))
    off = t.byte_offset
    return raw[off:off + packed_size(t.dtype.name, t.size or 0)]


def unpack_codes(raw: Any, name: str, count: int) -> Any:
    """`count` elements of bool or a type of fewer than 8 bits packed in `raw`,
    one byte each (NumPy), unpacked by the C library (hurray_elements_unpack):
    bool 0 or 1, signed integers sign-extended (int8), the rest their codes."""
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    return np.asarray(_hurray._decode_values(raw, name, count, codes=True))


def pack_codes(codes: Any, bits: int) -> Any:
    """`codes` (one per byte) packed LSB-first, `bits` bits each (6: four in three
    bytes), padding bits zero: the layout unpack_codes reads."""
    codes = np.ascontiguousarray(codes, dtype=np.uint8).reshape(-1)
    n = codes.size
    if bits == 6:
        groups = (n + 3) // 4
        c = np.zeros(groups * 4, dtype=np.uint32)
        c[:n] = codes & 63
        c = c.reshape(groups, 4)
        v = c[:, 0] | (c[:, 1] << 6) | (c[:, 2] << 12) | (c[:, 3] << 18)
        out = np.stack([v & 255, (v >> 8) & 255, (v >> 16) & 255], axis=1).astype(np.uint8)
        return out.reshape(-1)
    per = 8 // bits
    c = np.zeros(((n + per - 1) // per) * per, dtype=np.uint8)
    c[:n] = codes & ((1 << bits) - 1)
    c = c.reshape(-1, per)
    out = np.zeros(c.shape[0], dtype=np.uint8)
    for j in range(per):
        out |= c[:, j] << np.uint8(j * bits)
    return out


def to_numpy(t: Tensor) -> Any:
    """A row-major, unquantized tensor as a NumPy array of its values (bool and
    sub-byte types unpacked, one element per item; ml_dtypes types for the
    types NumPy lacks). A copy for bool and sub-byte types, a view otherwise."""
    name = t.dtype.name
    shape = tuple(int(n or 0) for n in t.shape)
    count = t.size or 0
    dt = np_dtype(name)
    if dt is None:
        raise Refused(f"{name} has no NumPy representation (install ml_dtypes?)")
    raw = data_bytes(t)
    bits = t.dtype.bit_width or 0
    if name == "bool" or bits < 8:   # one element per byte (ml_dtypes' int4 sign-extended)
        return unpack_codes(raw, name, count).view(dt).reshape(shape)
    return raw.view(dt).reshape(shape)


def from_numpy_codes(arr: Any, name: str) -> Tensor:
    """A hurray tensor of type `name` from a NumPy array of one element per item
    (bool, or the ml_dtypes sub-byte types): packs it LSB-first."""
    bits = _hurray.Dtype.from_name(name).bit_width or 0
    codes = np.ascontiguousarray(arr).view(np.uint8) if arr.dtype != bool else arr.astype(np.uint8)
    packed = pack_codes(codes.reshape(-1), bits)
    return Tensor(aligned_copy(packed), name, tuple(arr.shape))


def aligned_empty(nbytes: int) -> Any:
    """`nbytes` of uninitialised 64-byte aligned memory as a uint8 NumPy array
    (hurray tensors over it are built without a copy)."""
    t = _hurray.empty([max(int(nbytes), 1)], dtype="uint8")
    return np.asarray(t)[:nbytes]


def aligned_copy(arr: Any) -> Any:
    a = np.ascontiguousarray(arr)
    out = aligned_empty(a.nbytes)
    out[...] = a.reshape(-1).view(np.uint8)
    return out


def tensor_from_bytes(raw: Any, name: str, shape: tuple[int, ...]) -> Tensor:
    """A row-major hurray tensor over `raw` (uint8, packed as hurray packs)."""
    return Tensor(raw, name, shape, copy=False) if raw.ctypes.data % 64 == 0 \
        else Tensor(aligned_copy(raw), name, shape, copy=False)


def cast_float(values: Any, target: str) -> Any:
    """`values` (a NumPy array of real numbers) as the float type `target`,
    rounded to nearest even."""
    if target not in FLOAT_TARGETS:
        raise ValueError(f"--dequantize takes one of {', '.join(FLOAT_TARGETS)}, not {target!r}")
    if np.iscomplexobj(values):
        raise Refused("complex values have no float equivalent")
    v = np.asarray(values)
    if target == "bfloat16":
        import ml_dtypes
        return v.astype(ml_dtypes.bfloat16)
    return v.astype(np.dtype(NUMPY_NATIVE[target]))


def float_tensor(values: Any, target: str) -> Tensor:
    arr = np.ascontiguousarray(cast_float(values, target))
    return tensor_from_bytes(arr.reshape(-1).view(np.uint8), target, tuple(arr.shape))
