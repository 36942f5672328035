"""The rest of safetensors' Python surface, for hurray.torch and hurray.numpy to be
drop-ins: `serialize` / `serialize_file` / `deserialize` (raw bytes in and out, no
framework), `storage_ptr` / `storage_size` (torch helpers transformers imports from
`safetensors.torch`), and safetensors' names of element types ("F32", "BF16"), which
`safe_open(...).get_slice(name).get_dtype()` gives as safetensors does.
"""

from __future__ import annotations

import math
import os
from typing import Any

from . import _files
from ._hurray import Dtype, Tensor, UnsupportedError, buffer_size_bytes

# hurray's element type -> safetensors' name, for the types safetensors has
ST_NAMES = {
    "float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
    "uint64": "U64", "uint32": "U32", "uint16": "U16", "uint8": "U8", "bool": "BOOL",
    "float8_e4m3": "F8_E4M3", "float8_e5m2": "F8_E5M2", "float8_e8m0": "F8_E8M0",
    "complex64": "C64", "float4_e2m1": "F4", "float6_e2m3": "F6_E2M3", "float6_e3m2": "F6_E3M2",
}
FROM_ST = {v: k for k, v in ST_NAMES.items()}
# the names safetensors.serialize takes where they are not hurray's (PyTorch's spelling)
FROM_ST.update({"float8_e4m3fn": "float8_e4m3", "float8_e8m0fnu": "float8_e8m0"})


def st_dtype_name(hurray_name: str) -> str:
    """safetensors' name of an element type ("F32"); hurray's own for the types
    safetensors does not have ("int4", "complex128")."""
    return ST_NAMES.get(hurray_name, hurray_name)


def _hurray_dtype(name: Any, where: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{where}: dtype must be a str (\"F32\", \"bfloat16\", ...), not "
                        f"{type(name).__name__}")
    try:
        return Dtype.from_name(FROM_ST.get(name, name)).name
    except (ValueError, KeyError):
        raise ValueError(f"{where}: dtype {name!r} is neither a safetensors type name "
                         f"({', '.join(sorted(FROM_ST))}) nor a hurray one") from None


def _spec(name: str, spec: Any) -> Tensor:
    where = f"serialize: tensor_dict[{name!r}]"
    if isinstance(spec, dict):
        get = spec.get
    else:
        def get(key: str, default: Any = None) -> Any:
            return getattr(spec, key, default)
    raw = get("data")
    if raw is None:
        raise TypeError(f"{where}: give its bytes as 'data' (a dict with 'dtype', 'shape' and "
                        f"'data'); a data pointer (TensorSpec.data_ptr) is not taken: "
                        f"reading memory at an address cannot be checked")
    dtype = _hurray_dtype(get("dtype"), where)
    shape: Any = get("shape")
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{where}: shape must be a sequence of ints, not "
                        f"{type(shape).__name__}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{where}: shape {list(shape)} has a negative dimension")
    data = memoryview(raw).cast("B")
    if dtype == "bool":  # safetensors' bools are a byte each; hurray packs them 8 a byte
        import numpy as np
        n = math.prod(shape)
        if data.nbytes != n:
            raise ValueError(f"{where}: data holds {data.nbytes} bytes; bool {list(shape)} is "
                             f"{n} bytes (one a value, as safetensors stores them)")
        values: Any = np.frombuffer(data, np.uint8).astype(bool).reshape(shape)
        return Tensor(values, "bool", shape)
    want = buffer_size_bytes(dtype, math.prod(shape))
    if data.nbytes != want:
        raise ValueError(f"{where}: data holds {data.nbytes} bytes; {dtype} {list(shape)} is "
                         f"{want} bytes")
    return Tensor(data, dtype, shape)


def serialize(tensor_dict: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
    """serialize(tensor_dict, metadata=None) -> bytes

    The `.hrry` file image of raw tensors (safetensors.serialize): `tensor_dict` maps
    names to `{"dtype": "float32", "shape": [2, 3], "data": b"..."}` (the type by
    hurray's name, safetensors' ("F32") or the one safetensors.serialize takes
    ("float8_e4m3fn"); any object with those attributes too). `metadata` becomes the KV
    section."""
    from ._framework import check_metadata, save_bytes
    return save_bytes(_specs(tensor_dict), check_metadata(metadata, "serialize"))


def serialize_file(tensor_dict: dict[str, Any], filename: str | os.PathLike,
                   metadata: dict[str, str] | None = None) -> None:
    """serialize_file(tensor_dict, filename, metadata=None)

    `serialize` into a `.hrry` file, written atomically (safetensors.serialize_file)."""
    from ._framework import check_metadata
    _files.save(filename, _specs(tensor_dict), kv=check_metadata(metadata, "serialize_file"))


def _specs(tensor_dict: Any) -> dict[str, Tensor]:
    if not isinstance(tensor_dict, dict):
        raise TypeError(f"serialize: tensor_dict must be a dict, not {type(tensor_dict).__name__}")
    out = {}
    for k, v in tensor_dict.items():
        if not isinstance(k, str):
            raise TypeError(f"serialize: tensor names must be str, not {type(k).__name__}")
        out[k] = _spec(k, v)
    return out


def deserialize(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """deserialize(data) -> list of (name, {"shape", "dtype", "data"})

    The tensors of a `.hrry` file image as raw bytes (safetensors.deserialize):
    in file order, each with its shape (a list), its type (safetensors' name where it
    has one) and its elements as row-major bytes (a bytearray, as safetensors gives)."""
    from ._framework import load_bytes, plain
    stored, views = load_bytes(data)
    out = []
    tensors = dict(stored)
    for name, v in views.items():
        tensors[name] = _files.view_tensor(name, v, stored[v.base])
    for name, t in tensors.items():
        t = plain(name, t, "deserialize")
        if t.quantization is not None:
            raise UnsupportedError(f"deserialize: {name!r} is quantized ({t.quantization!r}); "
                                   f"raw bytes would lose its scales: read it with "
                                   f"hurray.load_bytes")
        out.append((name, {"shape": list(t.shape), "dtype": st_dtype_name(t.dtype.name),
                           "data": _row_major_bytes(name, t)}))
    return out


def _row_major_bytes(name: str, t: Tensor) -> bytearray:
    n = buffer_size_bytes(t.dtype.name, t.size or 0)
    if t.dtype.name == "bool":  # a byte a value, as safetensors stores bools
        import numpy as np
        return bytearray(np.ascontiguousarray(np.asarray(t)).view(np.uint8).tobytes())
    if t.layout.name == "row_major":
        import numpy as np
        raw = np.asarray(t.buffer(0))  # the buffer as uint8
        return bytearray(raw[t.byte_offset:t.byte_offset + n])
    import numpy as np
    try:
        return bytearray(np.ascontiguousarray(np.asarray(t)).tobytes())
    except (TypeError, ValueError, BufferError) as e:
        raise UnsupportedError(f"deserialize: {name!r} ({t.dtype.name}, {t.layout.name} layout) "
                               f"has no row-major bytes here ({e}); read it with "
                               f"hurray.load_bytes") from None


def storage_ptr(tensor: Any) -> int:
    """The address of the storage under a torch tensor (0 for a meta tensor), as
    safetensors.torch.storage_ptr: two tensors with the same one share memory."""
    try:
        return tensor.untyped_storage().data_ptr()
    except NotImplementedError:
        return 0


def storage_size(tensor: Any) -> int:
    """The size in bytes of the storage under a torch tensor (its own size for a meta
    tensor), as safetensors.torch.storage_size."""
    try:
        return tensor.untyped_storage().nbytes()
    except NotImplementedError:
        return tensor.nelement() * tensor.element_size()
