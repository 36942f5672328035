"""GGUF <-> Hurray, exactly (docs/internals/decisions.md, "GGUF mapping").

Tensors. Dense F32/F16/BF16/F64/I8/I16/I32/I64 are the hurray types of the
same name, row-major, in NumPy's dimension order (GGUF lists `ne[0]`, the
contiguous dimension, first; the shape here is reversed). Three block types
map exactly, blocks along the last (contiguous) axis, 32 elements each:

- Q8_0 (per block: float16 `d`, 32 int8 `q`; value `d * q`) is int8 with
  PerBlockAffine.symmetric(axis=-1, block_size=32, scale_type=float16): the
  codes and the scales are the same numbers, split into two buffers.
- Q4_0 (per block: float16 `d`, 16 bytes; value `d * (n - 8)` for the
  unsigned nibble `n`; elements 0..15 in the low nibbles, 16..31 in the high
  ones) is int4 with the same scheme: code `n - 8`, so the zero point is 0 and
  the scheme symmetric (GGUF's "+8" is the storage offset of an unsigned
  nibble, not a zero point), packed LSB-first (element 2k in the low nibble of
  byte k) as Hurray packs int4.
- MXFP4 (per block: one E8M0 byte `e`, 16 bytes of E2M1 nibbles in Q4_0's
  order; ggml's value `kvalues[n] * 2^(e-128)` with kvalues the doubled E2M1
  values, that is `e2m1(n) * 2^(e-127)`) is float4_e2m1 with MXFP(axis=-1,
  block_size=32): the nibbles are E2M1 codes, `e` the float8_e8m0 scale.

What Hurray forbids is refused, naming the tensor and the block: a Q8_0/Q4_0
scale that is zero, infinite or NaN (the per-block scheme requires finite,
non-zero scales), an MXFP4 exponent byte 0x00 or 0xFF (reserved in
float8_e8m0). Every other GGML type is refused unless the user asks for
--dequantize (gguf.quants.dequantize).

Metadata. Every key becomes a KV entry of the same name: strings (or bytes
when not UTF-8), integers as int64 (uint64 above 2**63-1 as a decimal string),
FLOAT32/FLOAT64 as float64 (float32 widens exactly), BOOL as bool, arrays as
KV arrays. The GGUF type of each key is recorded in the KV entry
`hurray.gguf` (JSON: {"format": 1, "version": 3, "types": {key: "UINT32",
key2: "ARRAY[FLOAT32]"}}) so that converting back writes every value with its
own type: a file written by GGUFWriter comes back byte for byte. Arrays of
arrays are refused (gguf's reader flattens them).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .. import _hurray
from .._hurray import MXFP, PerBlockAffine, Tensor
from ._errors import Refused
from ._values import aligned_copy, data_bytes, tensor_from_bytes

RECORD_KEY = _hurray._KV_GGUF  # include/hurray/file.h, HURRAY_FILE_KV_GGUF
RECORD_FORMAT = 1

DENSE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64",
         "I8": "int8", "I16": "int16", "I32": "int32", "I64": "int64"}
DENSE_BACK = {v: k for k, v in DENSE.items()}
BLOCK_TYPES = {"Q8_0": "int8", "Q4_0": "int4", "MXFP4": "float4_e2m1"}
BLOCK = 32


def scheme_for(qtype: str, rank: int) -> Any:
    if qtype == "MXFP4":
        return MXFP(rank - 1, BLOCK, 1)
    return PerBlockAffine.symmetric(rank - 1, BLOCK, 1, "float16")


def describe_scheme(q: Any) -> str:
    if q is None:
        return ""
    name = type(q).__name__
    parts = []
    for attr in ("axis", "block_size", "scale_type", "scale", "zero_point"):
        if hasattr(q, attr):
            v = getattr(q, attr)
            parts.append(f"{attr}={getattr(v, 'name', v)}")
    if hasattr(q, "zero_point_buffer_index"):
        parts.append("symmetric" if q.zero_point_buffer_index is None else "asymmetric")
    return f"{name}({', '.join(parts)})"


# ---- tensors ------------------------------------------------------------------------

def _check_scales(name: str, d: Any) -> None:
    f = d.astype(np.float32).reshape(-1)
    bad = np.flatnonzero((f == 0) | ~np.isfinite(f))
    if bad.size:
        b = int(bad[0])
        raise Refused(
            f"block {b} has the scale {float(f[b])!r}; Hurray's per-block scheme requires "
            f"finite, non-zero scales ({bad.size} such blocks)")


def to_hurray(qtype: str, raw: Any, shape: tuple[int, ...], name: str) -> Tensor:
    """The hurray tensor holding GGUF data `raw` (uint8, `n_bytes` long) of type
    `qtype`, shape in NumPy order."""
    if qtype in DENSE:
        return tensor_from_bytes(raw, DENSE[qtype], shape)
    if qtype not in BLOCK_TYPES:
        raise Refused(f"GGUF type {qtype} has no exact Hurray equivalent")
    if not shape or shape[-1] % BLOCK:
        raise Refused(f"{qtype}: the last dimension {shape[-1] if shape else 0} is not a "
                      f"multiple of {BLOCK}")
    per = {"Q8_0": 34, "Q4_0": 18, "MXFP4": 17}[qtype]
    blocks = np.ascontiguousarray(raw).reshape(-1, per)
    if qtype == "Q8_0":
        d = blocks[:, :2].copy().view(np.float16)
        _check_scales(name, d)
        codes = aligned_copy(blocks[:, 2:])
        scales = aligned_copy(d.view(np.uint8))
        dtype = "int8"
    else:
        head = 2 if qtype == "Q4_0" else 1
        qs = blocks[:, head:]
        elems = np.concatenate([qs & np.uint8(0x0F), qs >> np.uint8(4)], axis=1)  # (nb, 32)
        if qtype == "Q4_0":
            d = blocks[:, :2].copy().view(np.float16)
            _check_scales(name, d)
            elems = elems ^ np.uint8(8)  # n - 8 as a 4-bit two's complement code
            scales = aligned_copy(d.view(np.uint8))
            dtype = "int4"
        else:
            e = blocks[:, 0]
            bad = np.flatnonzero((e == 0) | (e == 255))
            if bad.size:
                b = int(bad[0])
                raise Refused(
                    f"block {b} has the exponent byte 0x{int(e[b]):02x}, which Hurray's "
                    f"float8_e8m0 reserves (0x00 and 0xFF; {bad.size} such blocks)")
            scales = aligned_copy(e)
            dtype = "float4_e2m1"
        codes = aligned_copy(elems[:, 0::2] | (elems[:, 1::2] << np.uint8(4)))
    return Tensor([codes, scales], dtype, shape, quantization=scheme_for(qtype, len(shape)),
                  copy=False)


def exact_type(dtype: str, layout: str, scheme: Any, shape: tuple[int, ...],
               byte_offset: int = 0) -> str:
    """The GGML type holding a hurray tensor exactly; Refused saying why not."""
    if layout != "row_major":
        raise Refused(f"layout {layout}: GGUF tensors are row-major")
    if scheme is None:
        if dtype in DENSE_BACK:
            return DENSE_BACK[dtype]
        raise Refused(f"GGUF has no {dtype} type (it has {', '.join(sorted(DENSE_BACK))} and "
                      f"block types)")
    want = {"int8": "Q8_0", "int4": "Q4_0", "float4_e2m1": "MXFP4"}.get(dtype)
    axis_ok = len(shape) >= 1 and getattr(scheme, "axis", None) == len(shape) - 1
    if want is None or not axis_ok or getattr(scheme, "block_size", None) != BLOCK \
            or not shape or shape[-1] % BLOCK or byte_offset:
        raise Refused(f"{dtype} quantized as {describe_scheme(scheme)} has no GGUF type "
                      f"(Q8_0, Q4_0 and MXFP4 are int8, int4 and float4_e2m1 in blocks of 32 "
                      f"along the last axis)")
    if want == "MXFP4":
        if not isinstance(scheme, MXFP):
            raise Refused(f"{dtype} quantized as {describe_scheme(scheme)}: MXFP4 is MXFP")
    elif not (isinstance(scheme, PerBlockAffine) and scheme.zero_point_buffer_index is None
              and scheme.scale_type.name == "float16"):
        raise Refused(f"{dtype} quantized as {describe_scheme(scheme)}: {want} is the symmetric "
                      f"per-block scheme with float16 scales")
    return want


def to_gguf(t: Tensor, qtype: str) -> Any:
    """The GGUF bytes (uint8 NumPy array) of hurray tensor `t` as `qtype` (from
    exact_type)."""
    if qtype in DENSE:
        return np.ascontiguousarray(data_bytes(t))
    n = t.size or 0
    nb = n // BLOCK
    codes = np.asarray(t.buffer(0)).reshape(-1)[:n * (8 if qtype == "Q8_0" else 4) // 8]
    if qtype == "Q8_0":
        d = np.asarray(t.buffer(1)).reshape(-1)[:nb * 2].reshape(nb, 2)
        return np.concatenate([d, codes.reshape(nb, BLOCK)], axis=1).reshape(-1)
    p = codes.reshape(nb, BLOCK // 2)
    elems = np.empty((nb, BLOCK), dtype=np.uint8)
    elems[:, 0::2] = p & np.uint8(0x0F)
    elems[:, 1::2] = p >> np.uint8(4)
    if qtype == "Q4_0":
        elems ^= np.uint8(8)
        head = np.asarray(t.buffer(1)).reshape(-1)[:nb * 2].reshape(nb, 2)
    else:
        head = np.asarray(t.buffer(1)).reshape(-1)[:nb].reshape(nb, 1)
    qs = elems[:, :16] | (elems[:, 16:] << np.uint8(4))
    return np.concatenate([head, qs], axis=1).reshape(-1)


def dequantize(qtype: str, raw: Any, shape: tuple[int, ...]) -> Any:
    """gguf's own dequantizer: float32 values in NumPy order."""
    import gguf
    qt = gguf.GGMLQuantizationType[qtype]
    if qtype in DENSE:
        if qtype == "BF16":
            return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
        return raw.view(np.dtype(_hurray.Dtype.from_name(DENSE[qtype]).name)).reshape(shape)
    block, size = gguf.GGML_QUANT_SIZES[qt]
    if 0 in shape:  # no blocks at all (a row of no bytes cannot be reshaped)
        return np.zeros(shape, np.float32)
    rows = raw.reshape(-1, shape[-1] // block * size) if shape else raw
    try:
        values = gguf.quants.dequantize(rows, qt)
    except NotImplementedError:  # Q8_1, Q8_K, Q1_0 in gguf 0.19
        raise Refused(f"the gguf package cannot dequantize {qtype}") from None
    return np.asarray(values, dtype=np.float32).reshape(shape)


def raw_shape_for(qtype: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The byte shape GGUFWriter.add_tensor_info takes for a block type."""
    import gguf
    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[qtype]]
    return (*shape[:-1], shape[-1] // block * size)


# ---- metadata ---------------------------------------------------------------------

def record(types: dict[str, str], version: int) -> str:
    return json.dumps({"format": RECORD_FORMAT, "version": version, "types": types},
                      separators=(",", ":"))


def read_record(text: Any) -> dict[str, str]:
    if text is None:
        return {}
    try:
        rec = json.loads(text)
        if rec.get("format") != RECORD_FORMAT or not isinstance(rec.get("types"), dict):
            raise ValueError
        return {str(k): str(v) for k, v in rec["types"].items()}
    except (ValueError, TypeError, AttributeError):
        raise Refused(f"kv[{RECORD_KEY!r}] is not a record this version reads") from None


def _infer(v: Any) -> str:
    if isinstance(v, bool):
        return "BOOL"
    if isinstance(v, int):
        return "INT64" if v < 2**63 else "UINT64"
    if isinstance(v, float):
        return "FLOAT64"
    if isinstance(v, (str, bytes)):
        return "STRING"
    raise Refused(f"a {type(v).__name__} has no GGUF type")


def gguf_value(key: str, value: Any, tname: str | None) -> tuple[Any, Any, Any]:
    """(value, GGUFValueType, sub type) to write KV entry `key` with."""
    from gguf import GGUFValueType as V
    if isinstance(value, list):
        if not value:
            raise Refused(f"kv[{key!r}]: an empty array (GGUFWriter cannot write one)")
        sub = tname[6:-1] if tname and tname.startswith("ARRAY[") else None
        if sub is None:
            if isinstance(value[0], bytes) and tname is None:
                sub = "STRING"
            else:
                subs = {_infer(x) for x in value}
                sub = subs.pop() if len(subs) == 1 else "FLOAT64"
        return [_back(x, sub) for x in value], V.ARRAY, V[sub]
    if isinstance(value, bytes) and tname is None:
        # hurray KV bytes: GGUF has no bytes type; an array of UINT8 holds them
        return list(value), V.ARRAY, V.UINT8
    t = tname or _infer(value)
    return _back(value, t), V[t], None


def _back(v: Any, t: str) -> Any:
    if t in ("UINT64",) and isinstance(v, str):
        return int(v)
    if t == "STRING":
        return v
    if t == "BOOL":
        return bool(v)
    if t in ("FLOAT32", "FLOAT64"):
        return float(v)
    return int(v)


def write_kv(writer: Any, kv: dict[str, Any], types: dict[str, str]) -> None:
    """Replaces the writer's KV entries with `kv`, in order, each with its
    recorded GGUF type (inferred where none is recorded)."""
    writer.kv_data = [{}]
    for key, value in kv.items():
        try:
            val, vtype, sub = gguf_value(key, value, types.get(key))
        except Refused as e:
            raise Refused(f"kv[{key!r}]: {e}") from None
        writer.add_key_value(key, val, vtype, sub)
