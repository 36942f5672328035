"""hurray for PyTorch users: safetensors.torch's API over .hrry files.

Changing ``from safetensors.torch import save_file, load_file`` to
``from hurray.torch import save_file, load_file`` is the whole migration:
the functions have the same names and positional signatures (save_file,
load_file, save, load, save_model, load_model). Options of our own are
keyword-only. What differs from safetensors is listed in docs/guide/pytorch.md
("The safetensors API: hurray.torch and hurray.numpy").

Loads are zero-copy: a loaded tensor is a view of the file's mapping, and
tensors that were saved sharing memory (tied weights) come back sharing one
storage.
"""

from __future__ import annotations

from typing import Any, cast

import torch

from .. import _files, _framework, _shared
from .._hurray import Tensor, UnsupportedError

__all__ = ["save_file", "load_file", "save", "load", "save_model", "load_model", "safe_open",
           "serialize", "serialize_file", "deserialize", "storage_ptr", "storage_size"]

_TORCH_NAMES = {
    "float8_e4m3": "float8_e4m3fn", "float8_e8m0": "float8_e8m0fnu",
}


def _torch_dtype(name: str, what: str) -> torch.dtype:
    dt = getattr(torch, _TORCH_NAMES.get(name, name), None)
    if not isinstance(dt, torch.dtype):
        raise UnsupportedError(f"{what}: PyTorch has no element type for hurray's {name}")
    return dt


def _device(device) -> torch.device:
    if isinstance(device, int):
        return torch.device("cuda", device)
    return torch.device(device)


def _is_tensor(v) -> bool:
    return isinstance(v, torch.Tensor)


# ---- saving ------------------------------------------------------------------------

def save_file(tensors: dict[str, torch.Tensor], filename, metadata: dict[str, Any] | None = None,
              *, durable: bool = True, checksums: bool = True) -> None:
    """Saves a dict of torch tensors to the .hrry file `filename`.

    Same call as safetensors.torch.save_file. `metadata` becomes the file's KV
    section (str to str as in safetensors, or any KV value: int, float, bool,
    bytes, lists). Tensors that require grad are saved detached; nn.Parameter
    is accepted; non-contiguous tensors keep their layout (column-major,
    strided); tensors sharing memory (tied weights, views) are stored once.
    The write is atomic (the old file or the new one, never a part);
    durable=False skips the fsyncs. checksums=True (the default) records a
    CRC-32C of every tensor, which load_file(verify=True) checks.
    """
    _framework.check_tensors(tensors, "save_file", "torch.Tensor", _is_tensor)
    _files.save(filename, tensors, kv=_framework.check_metadata(metadata, "save_file"),
                durable=durable, checksums=checksums)


def save(tensors: dict[str, torch.Tensor], metadata: dict[str, Any] | None = None) -> bytes:
    """The .hrry file image of `tensors`, as bytes (safetensors.torch.save)."""
    _framework.check_tensors(tensors, "save", "torch.Tensor", _is_tensor)
    return _framework.save_bytes(tensors, _framework.check_metadata(metadata, "save"))


def _storage_users(state_dict) -> dict:
    users: dict = {}
    for v in state_dict.values():
        if v.device.type != "meta":
            key = (v.device, v.untyped_storage().data_ptr())
            users[key] = users.get(key, 0) + 1
    return users


def save_model(model: torch.nn.Module, filename, metadata: dict[str, Any] | None = None,
               force_contiguous: bool = True, *, durable: bool = True,
               checksums: bool = True) -> None:
    """Saves `model.state_dict()` (safetensors.torch.save_model).

    Tied parameters are stored once and come back tied from load_model;
    unlike safetensors, no name is dropped from the file. With
    force_contiguous=True a non-contiguous tensor that shares its storage
    with no other is stored contiguous (as safetensors does); tensors sharing
    storage are stored as they are, so their sharing survives.
    """
    state_dict = model.state_dict()
    if force_contiguous:
        users = _storage_users(state_dict)
        state_dict = {
            k: (v.contiguous() if not v.is_contiguous() and v.device.type != "meta"
                and users.get((v.device, v.untyped_storage().data_ptr()), 0) < 2 else v)
            for k, v in state_dict.items()}
    save_file(state_dict, filename, metadata, durable=durable, checksums=checksums)


# ---- loading -----------------------------------------------------------------------

def _to_torch(name: str, t: Tensor) -> torch.Tensor:
    t = _framework.plain(name, t, "load_file")
    if t.quantization is not None:
        raise UnsupportedError(
            f"load_file: {name!r} is quantized ({t.quantization!r}); PyTorch has no such "
            f"element type: dequantize it (hurray.load(path)[{name!r}].dequantize()) or read "
            f"it with hurray.load")
    if t.dtype.name in _VIA_BYTES:
        # PyTorch takes DLPack 1.0, which has no float8 codes: the bytes, then a
        # reinterpreting view (no copy)
        import numpy as np
        raw = Tensor(cast(Any, np.asarray(t.buffer(0))), "uint8", t.shape, layout=t.layout,
                     byte_offset=t.byte_offset, copy=False)
        return raw.to_torch().view(_torch_dtype(t.dtype.name, "load_file"))
    try:
        return t.to_torch()
    except BufferError as e:  # a type DLPack cannot carry (int4, the sub-byte floats)
        raise UnsupportedError(f"load_file: {name!r} has no PyTorch form ({e}); read it with "
                               f"hurray.load") from None


_VIA_BYTES = frozenset({"float8_e4m3", "float8_e5m2", "float8_e8m0"})


def _torch_view(name: str, v: _shared.View, base: torch.Tensor) -> torch.Tensor:
    if v.dtype is None:  # the same tensor under another name
        return base
    dt = _torch_dtype(v.dtype, "load_file")
    item = torch.empty((), dtype=dt).element_size()
    offset = base.storage_offset() * base.element_size() + v.byte_offset
    out = torch.empty(0, dtype=dt, device=base.device)
    out.set_(base.untyped_storage(), offset // item, v.shape, [s // item for s in v.byte_strides])
    return out


def _assemble(stored: dict, views: dict, device, contiguous: bool = True) -> dict[str, torch.Tensor]:
    out = {name: _to_torch(name, t) for name, t in stored.items()}
    dev = _device(device)
    if dev.type != "cpu":
        out = {k: v.to(dev) for k, v in out.items()}
    for name, v in views.items():
        if any(st < 0 for st in v.byte_strides):
            # torch has no negative strides (a NumPy view saved as such): a copy,
            # never larger than the base's bytes (the export refuses one that
            # repeats elements: a forged record could ask for exabytes)
            try:
                out[name] = _files.view_tensor(name, v, stored[v.base]).to_torch().to(dev)
            except BufferError as e:
                raise UnsupportedError(
                    f"load_file: view {name!r} has negative strides, which PyTorch cannot "
                    f"represent, and repeats elements of {v.base!r}: its copy would be larger "
                    f"than the base ({e}); read it with hurray.load or hurray.numpy") from None
        else:
            out[name] = _torch_view(name, v, out[v.base])
    if not contiguous:
        return out
    # what load_file returns is contiguous, as safetensors' results are (a user calls
    # .view(-1) on them): a tensor saved strided is copied row-major here, once
    for name, v in views.items():
        t = out[name]
        if not t.is_contiguous():
            b = out[v.base]
            _framework.check_copy(name, t.numel() * t.element_size(),
                                  b.numel() * b.element_size(), "load_file")
    return {k: t if t.is_contiguous() else t.contiguous() for k, t in out.items()}


def load_file(filename, device="cpu", *, backend: str = "mmap", mmap: bool = True,
              verify: bool = False, contiguous: bool = True, storage_options: dict | None = None,
              workers: int | None = None, part_size: int | None = None
              ) -> dict[str, torch.Tensor]:
    """Loads a .hrry file into a dict of torch tensors (safetensors.torch.load_file).

    With mmap=True (the default) the tensors are zero-copy views of the file's
    mapping; device= moves them ("cpu", "cuda", "cuda:1", an int for a CUDA
    index). Every tensor returned is contiguous, as safetensors' are: one saved
    strided (a transposed weight) is copied row-major; contiguous=False gives it
    with its strides instead, a view of the mapping. Tensors saved sharing memory
    share one storage again (with contiguous=False also the strided ones). A view
    that repeats elements (a zero stride) is copied only up to its base's size or
    64 MiB; a larger one raises UnsupportedError (contiguous=False: a view).
    verify=True first checks the whole file and its data checksums
    (hurray.File.verify). workers= threads read a cold file ahead (hurray.load's;
    None: HURRAY_WORKERS, else 4). A URL (s3://, http(s)://, fsspec) is fetched as
    hurray.load fetches it (storage_options=, workers=, part_size=): writable
    tensors over one buffer. backend= is safetensors' ("mmap"; "pread" is mmap=False).
    """
    mmap = _framework.mmap_of(backend, mmap, "load_file")
    stored, views = _files.load_stored(filename, mmap=mmap, verify=verify,
                                       storage_options=storage_options, workers=workers,
                                       part_size=part_size)
    return _assemble(stored, views, device, contiguous)


def load(data: bytes, *, contiguous: bool = True) -> dict[str, torch.Tensor]:
    """Loads a .hrry file image given as bytes (safetensors.torch.load); the
    tensors own their memory, contiguous as load_file's (contiguous=False: with
    their strides, views sharing their base)."""
    stored, views = _framework.load_bytes(data)
    return _assemble(stored, views, "cpu", contiguous)


def _shared_groups(state_dict: dict[str, torch.Tensor]) -> list[set[str]]:
    """Names of the model's tensors that share one storage (tied weights), in groups
    of two or more."""
    groups: dict[tuple, set[str]] = {}
    for k, v in state_dict.items():
        if v.device.type != "meta" and v.numel():
            groups.setdefault((v.device, v.untyped_storage().data_ptr(),
                               v.untyped_storage().nbytes()), set()).add(k)
    return [g for g in groups.values() if len(g) > 1]


def load_model(model: torch.nn.Module, filename, strict: bool = True, device="cpu", *,
               backend: str = "mmap", mmap: bool = True, verify: bool = False,
               storage_options: dict | None = None,
               workers: int | None = None,
               part_size: int | None = None) -> tuple[set[str], list[str]]:
    """Loads a file saved by save_model (or save_file) into `model`
    (safetensors.torch.load_model). Returns (missing, unexpected): the set of the
    model's names the file did not fill and the list of the file's names the model
    does not have, as safetensors returns them; with strict=True either being
    non-empty raises RuntimeError, naming them. A name tied to another (two names
    for one tensor of the model, as an output layer sharing the embedding) counts as
    loaded when the file holds any name of its group, as safetensors counts it, so
    a file saved without the tied copy (as transformers' save_pretrained writes it)
    loads strictly.
    """
    state_dict = load_file(filename, device=device, backend=backend, mmap=mmap, verify=verify,
                           storage_options=storage_options, workers=workers,
                           part_size=part_size)
    groups = _shared_groups(model.state_dict())
    result = model.load_state_dict(state_dict, strict=False)
    missing, unexpected = set(result.missing_keys), list(result.unexpected_keys)
    for group in groups:
        if group & state_dict.keys():  # the tie fills the others
            missing -= group
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(
                f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(
                f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


# The rest of safetensors.torch's names: safe_open (safetensors.torch re-exports
# safetensors.safe_open), the raw-bytes functions and the storage helpers.
from .._safe_open import safe_open  # noqa: E402
from .._st_compat import (  # noqa: E402
    deserialize,
    serialize,
    serialize_file,
    storage_ptr,
    storage_size,
)
