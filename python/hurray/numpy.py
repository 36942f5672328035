"""hurray for NumPy users: safetensors.numpy's API over .hrry files.

``from hurray.numpy import save_file, load_file`` replaces
``from safetensors.numpy import save_file, load_file``: same names and
positional signatures (save_file, load_file, save, load); options of our own
are keyword-only. Loaded arrays are zero-copy views of the file's mapping;
arrays saved sharing memory come back as views of one array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _files, _framework, _shared
from ._hurray import Tensor, UnsupportedError
from ._interop import _numpy_dtype

__all__ = ["save_file", "load_file", "save", "load", "safe_open", "serialize", "serialize_file", "deserialize"]


def _is_array(v) -> bool:
    return isinstance(v, np.ndarray)


def save_file(tensor_dict: dict[str, np.ndarray], filename,
              metadata: dict[str, Any] | None = None, *, durable: bool = True,
              checksums: bool = True) -> None:
    """Saves a dict of NumPy arrays to the .hrry file `filename`
    (safetensors.numpy.save_file). Non-contiguous arrays keep their layout;
    arrays sharing memory are stored once. Atomic; durable=False skips the
    fsyncs; checksums=True (the default) records a CRC-32C of every tensor."""
    _framework.check_tensors(tensor_dict, "save_file", "np.ndarray", _is_array)
    _files.save(filename, tensor_dict, kv=_framework.check_metadata(metadata, "save_file"),
                durable=durable, checksums=checksums)


def save(tensor_dict: dict[str, np.ndarray], metadata: dict[str, Any] | None = None) -> bytes:
    """The .hrry file image of `tensor_dict`, as bytes (safetensors.numpy.save)."""
    _framework.check_tensors(tensor_dict, "save", "np.ndarray", _is_array)
    return _framework.save_bytes(tensor_dict, _framework.check_metadata(metadata, "save"))


def _to_numpy(name: str, t: Tensor) -> np.ndarray:
    t = _framework.plain(name, t, "load_file")
    if t.quantization is not None:
        raise UnsupportedError(
            f"load_file: {name!r} is quantized; NumPy has no such element type: dequantize "
            f"it (hurray.load(path)[{name!r}].dequantize()) or read it with hurray.load")
    return np.asarray(t)


def _bytes_of(base: np.ndarray) -> np.ndarray:
    # the base's memory as uint8, without copying (bases are C or F contiguous)
    c = base if base.flags.c_contiguous else base.T
    return c.reshape(-1).view(np.uint8)


def _numpy_view(name: str, v: _shared.View, base: np.ndarray) -> np.ndarray:
    if v.same:
        return base
    dt = np.dtype(_numpy_dtype(v.dtype))
    view = np.ndarray(v.shape, dtype=dt, buffer=_bytes_of(base), offset=v.byte_offset,
                      strides=v.byte_strides)
    if not base.flags.writeable:
        view.flags.writeable = False
    return view


def _assemble(stored: dict, views: dict, contiguous: bool = True) -> dict[str, np.ndarray]:
    out = {name: _to_numpy(name, t) for name, t in stored.items()}
    for name, v in views.items():
        base = out[v.base]
        if v.same or base.flags.c_contiguous or base.flags.f_contiguous:
            out[name] = _numpy_view(name, v, base)
        else:  # the base came back in another form: rebuild from the hurray view
            out[name] = np.asarray(_files.view_tensor(name, v, stored[v.base]))
    if not contiguous:
        return out
    # C-contiguous, as safetensors' arrays are: one saved strided is copied once
    for name, v in views.items():
        if not out[name].flags.c_contiguous:
            _framework.check_copy(name, out[name].nbytes, out[v.base].nbytes, "load_file")
    return {k: a if a.flags.c_contiguous else np.ascontiguousarray(a) for k, a in out.items()}


def load_file(filename, *, backend: str = "mmap", mmap: bool = True, verify: bool = False,
              contiguous: bool = True, storage_options: dict | None = None,
              workers: int | None = None, part_size: int | None = None) -> dict[str, np.ndarray]:
    """Loads a .hrry file into a dict of NumPy arrays (safetensors.numpy.load_file);
    with mmap=True (the default) the arrays are zero-copy views of the file's
    mapping. Every array is C-contiguous, as safetensors' are (one saved strided or
    Fortran-ordered is copied); contiguous=False gives it with its strides, a view.
    A view that repeats elements (a zero stride) is copied only up to its base's size or
    64 MiB; a larger one raises UnsupportedError (contiguous=False gives it as a view).
    verify=True first checks the whole file and its data checksums.
    workers= threads read a cold file ahead (hurray.load's; None: HURRAY_WORKERS, else 4).
    A URL (s3://, http(s)://, fsspec) is fetched as hurray.load fetches it.
    backend= is safetensors' ("mmap"; "pread" is mmap=False)."""
    mmap = _framework.mmap_of(backend, mmap, "load_file")
    stored, views = _files.load_stored(filename, mmap=mmap, verify=verify,
                                       storage_options=storage_options, workers=workers,
                                       part_size=part_size)
    return _assemble(stored, views, contiguous)


def load(data: bytes, *, contiguous: bool = True) -> dict[str, np.ndarray]:
    """Loads a .hrry file image given as bytes (safetensors.numpy.load); C-contiguous
    arrays as load_file's (contiguous=False: with their strides)."""
    stored, views = _framework.load_bytes(data)
    return _assemble(stored, views, contiguous)


# The rest of safetensors.numpy's names: safe_open and the raw-bytes functions.
from ._safe_open import safe_open  # noqa: E402
from ._st_compat import deserialize, serialize, serialize_file  # noqa: E402
