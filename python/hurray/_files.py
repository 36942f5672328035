"""save, load, load_kv and open: the .hrry file API around the C reader and writer.

The C extension reads and writes the format; this layer adds what a user of
NumPy or PyTorch expects from `save`: any array-like value (NumPy arrays,
torch tensors, anything with ``__dlpack__`` or ``__hurray__``), converted
without copying where its memory allows, and tensors that share memory stored
once (hurray._shared). Readers give every saved name back, views included.
"""

from __future__ import annotations

import os
from typing import Any

from . import _hurray, _pickling, _shared
from ._hurray import Composite, Dtype, Tensor, UnsupportedError

_DEFAULT_KV_MEMORY = 268435456


# ---- what save accepts ---------------------------------------------------------------

def _is_torch(obj: Any) -> bool:
    t = type(obj)
    return t.__module__.startswith("torch") and hasattr(obj, "untyped_storage")


def _is_numpy(obj: Any) -> bool:
    np = _numpy_if_loaded()
    return np is not None and isinstance(obj, np.ndarray)


def _numpy_if_loaded():
    import sys
    return sys.modules.get("numpy")


def _torch_device(x) -> tuple[str, int]:
    d = x.device
    return (d.type, d.index if d.index is not None else 0)


def _whole_byte_name(dtype) -> str | None:
    # hurray's name for a framework dtype whose elements are whole bytes in
    # hurray too (bool is bit-packed in hurray: never shared), else None
    try:
        d = Dtype.of(dtype)
    except Exception:
        return None
    return d.name if d.bit_width % 8 == 0 else None


def memory(obj: Any) -> _shared.Memory | None:
    """Where `obj`'s elements lie, for the objects save can tell about."""
    if isinstance(obj, Tensor):
        layout = obj.layout.name
        if (obj.quantization is not None or layout not in ("row_major", "col_major", "strided")
                or obj.dtype.bit_width % 8 or obj.size is None):
            return None
        item = obj.dtype.itemsize
        shape = obj.shape
        if layout == "strided":
            strides = [s * item for s in obj.layout.strides]
        else:
            strides, step = [0] * len(shape), item
            dims = range(len(shape) - 1, -1, -1) if layout == "row_major" else range(len(shape))
            for k in dims:
                strides[k] = step
                step *= shape[k]
        dev = obj.device
        return _shared.memory_of(obj.data_ptr(), shape, strides, item,
                                 (dev.kind, dev.device_id), obj.dtype.name)
    if _is_torch(obj):
        import torch
        if obj.device.type == "meta" or obj.layout is not torch.strided:
            return None
        item = obj.element_size()
        name = _whole_byte_name(obj.dtype)
        if name is None:
            return None
        return _shared.memory_of(obj.data_ptr(), obj.shape, [s * item for s in obj.stride()],
                                 item, _torch_device(obj), name)
    if _is_numpy(obj):
        name = _whole_byte_name(obj.dtype)
        if name is None:
            return None
        return _shared.memory_of(obj.__array_interface__["data"][0], obj.shape, obj.strides,
                                 obj.itemsize, ("cpu", 0), name)
    return None


def to_tensor(obj: Any, name: str, what: str = "save") -> Tensor | Composite:
    """`obj` as a hurray.Tensor, sharing its memory where possible."""
    if isinstance(obj, (Tensor, Composite)):
        return obj
    if _is_torch(obj):
        import torch
        x = obj.detach()
        if x.layout != torch.strided:
            raise UnsupportedError(
                f"{what}: tensors[{name!r}] is a torch tensor with layout {x.layout}; save "
                f"x.to_dense(), or build a hurray sparse tensor (hurray.sparse_coo, "
                f"hurray.from_scipy)")
        if x.device.type == "meta":
            raise UnsupportedError(f"{what}: tensors[{name!r}] is a meta tensor: it has no data")
        if x.device.type != "cpu":
            x = x.cpu()
        if type(x) is not torch.Tensor:  # nn.Parameter and other plain-storage subclasses
            x = x.as_subclass(torch.Tensor)
        x = x.resolve_conj().resolve_neg()
        return _hurray.from_dlpack(x)
    if _is_numpy(obj):
        return _hurray.from_numpy(obj)
    if hasattr(obj, "__hurray__"):
        return _hurray.from_hurray(obj)
    if hasattr(obj, "__dlpack__"):
        return _hurray.from_dlpack(obj)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        from ._interop import asarray
        return asarray(obj)
    raise TypeError(
        f"{what}: tensors[{name!r}] must be a hurray.Tensor, a hurray.Composite, a NumPy "
        f"array, a torch tensor or an object with __dlpack__ or __hurray__, not "
        f"{type(obj).__name__}")


def check_user_kv(kv, what: str = "save") -> dict:
    if kv is None:
        return {}
    if not hasattr(kv, "items"):
        raise TypeError(f"{what}: kv must be a dict of str to values, not {type(kv).__name__}")
    out = dict(kv.items())
    for k in out:
        if isinstance(k, str) and k.startswith(_shared.RESERVED_PREFIX):
            raise ValueError(
                f"{what}: kv key {k!r}: keys starting with {_shared.RESERVED_PREFIX!r} are "
                f"reserved for what hurray itself records (docs/reference/file-format.md); rename it")
    return out


def prepare(tensors, kv, what: str = "save"):
    """The tensors to write and the KV to write with them."""
    if not hasattr(tensors, "items"):
        raise TypeError(
            f"{what}: tensors must be a dict of name to tensor, not {type(tensors).__name__}")
    items = list(tensors.items())
    for k, _ in items:
        if not isinstance(k, str):
            raise TypeError(f"{what}: tensor names must be str, not {type(k).__name__}")
    out_kv = check_user_kv(kv, what)
    names = [k for k, _ in items]
    objects = [v for _, v in items]
    mems = [memory(v) for v in objects]
    stored, views = _shared.plan(names, objects, mems)
    converted = {}
    for i in stored:
        t = to_tensor(objects[i], names[i], what)
        m = mems[i]
        if names[i] in {v.base for v in views.values()} and m is not None:
            _check_base_kept_order(t, m, names[i])
        converted[names[i]] = t
    return converted, out_kv, view_records(views)


def view_records(views: dict[str, _shared.View]) -> list:
    """The views as the C writer takes them (save(views=), FileWriter.add_views):
    (name, base, dtype name or None, shape, byte_offset, byte_strides). The
    writer checks each against its base and writes the record."""
    return [(n, v.base, v.dtype, v.shape, v.byte_offset, v.byte_strides)
            for n, v in views.items()]


def _check_base_kept_order(t: Tensor, m: _shared.Memory, name: str) -> None:
    # Views are recorded against the base's memory order; the stored base must
    # keep it (conversions keep C order row-major and F order column-major).
    ok = {"C": ("row_major",), "F": ("col_major",)}[m.order]
    if len(m.shape) <= 1 or sum(n != 1 for n in m.shape) <= 1:
        return
    if t.layout.name not in ok:
        raise _hurray.InternalError(
            f"save: the base tensor {name!r} was converted to layout {t.layout.name}, not "
            f"{ok[0]}; its views cannot be recorded")


# ---- the public functions ------------------------------------------------------------

def save(path, tensors, *, kv=None, durable=True, checksums=True) -> None:
    """save(path, tensors, *, kv=None, durable=True, checksums=True)

    Writes `tensors` (a dict of name to hurray.Tensor, hurray.Composite, NumPy
    array, torch tensor, or any object with __dlpack__ or __hurray__) and the
    key-value metadata `kv` to the .hrry file `path`, atomically: a reader
    sees the old file or the complete new one, never a part. Values are
    converted without copying wherever their memory allows. Tensors sharing
    memory (tied weights, views of one array) are stored once and come back
    sharing it. Keys starting with 'hurray.' are reserved. checksums=True (the
    default) records a CRC-32C of every tensor, computed while it is written,
    which load(verify=True) and File.verify() check.
    """
    converted, out_kv, views = prepare(tensors, kv)
    _hurray.save(path, converted, kv=out_kv or None, durable=durable, checksums=checksums,
                 views=views)


def _views_of(records) -> dict[str, _shared.View]:
    """The checked records the C reader gives (load's, File._views()) as View
    values by name, in record order."""
    return {name: _shared.View(base, dtype, tuple(shape), off, tuple(strides))
            for name, base, dtype, shape, off, strides in records}


def view_tensor(name: str, v: _shared.View, base: Tensor) -> Tensor:
    """The view `v` of `base` (a record the C reader checked against this base)
    as a hurray tensor sharing its buffer: for the framework loaders, whose
    base came back in another form than the one they rebuild views on."""
    if v.same:
        return base
    import numpy as np  # the buffer object the view shares
    item = _hurray.Dtype.from_name(v.dtype).bit_width // 8
    raw = np.asarray(base.buffer(0))
    # a 0-d view has no strides to state: row-major (one element) says it all
    layout = _hurray.StridedLayout(tuple(s // item for s in v.byte_strides)) if v.shape else None
    return Tensor(raw, v.dtype, v.shape, layout=layout,
                  byte_offset=base.byte_offset + v.byte_offset, copy=False)


def load(path, *, names=None, mmap=True, permissive=False, verify=False) -> dict:
    """load(path, *, names=None, mmap=True, permissive=False, verify=False)

    Reads a .hrry file into a dict of name to hurray.Tensor (a composite under
    its head's name, as a hurray.Composite). names= reads only those (a
    composite member too, when named). mmap=True maps the file: tensors are
    zero-copy views that keep the mapping alive; mmap=False reads each tensor
    into memory of its own. permissive=True reads descriptors in relay mode.
    Tensors saved sharing memory come back sharing it. verify=True first runs
    every check of File.verify() (the whole file's structure, and the data
    checksums when the file has them): a damaged file raises FileError naming
    the tensor and the byte offset, and nothing is returned.
    """
    # the C reader gives every name back, the views of shared tensors built
    # over their bases' bytes after the record was checked whole
    return _hurray.load(path, names=names, mmap=mmap, permissive=permissive, verify=verify)


def load_stored(path, *, mmap=True, permissive=False, verify=False):
    """(the tensors the file stores, {view name: View}) from one open: what the
    framework layers rebuild their own views from (the records checked by the
    C reader)."""
    tensors, records = _hurray._load_with_views(path, mmap=mmap, permissive=permissive,
                                                verify=verify)
    return tensors, _views_of(records)


def save_bytes(tensors, *, kv=None, checksums=True) -> bytes:
    """save_bytes(tensors, *, kv=None, checksums=True) -> bytes

    The .hrry file image that save(path, tensors, kv=kv) would write, as bytes,
    made in memory: no file system is involved (it works under a file-size
    limit of 0 or on a read-only system). `tensors` and `kv` as for save;
    tensors sharing memory are stored once. The same tensors give the same
    bytes as save() puts in a file.
    """
    converted, out_kv, views = prepare(tensors, kv)
    return _hurray.save_bytes(converted, kv=out_kv or None, checksums=checksums, views=views)


def load_bytes(data, *, names=None, permissive=False, verify=False) -> dict:
    """load_bytes(data, *, names=None, permissive=False, verify=False) -> dict

    Reads a .hrry file image held in memory (bytes, bytearray, memoryview or
    any contiguous buffer) into a dict of name to hurray.Tensor, as load()
    reads a file: every check of the reader, views rebuilt sharing their base.
    Each tensor is copied into memory of its own, so nothing returned refers
    to `data`. No file system is involved. names=, permissive= and verify= as
    for load.
    """
    return _hurray.load_bytes(data, names=names, permissive=permissive, verify=verify)


def load_bytes_stored(data, *, permissive=False, verify=False):
    """load_stored() of a file image held in memory (load_bytes)."""
    tensors, records = _hurray._load_bytes_with_views(data, permissive=permissive,
                                                      verify=verify)
    return tensors, _views_of(records)


def load_kv(path, *, max_kv_memory=_DEFAULT_KV_MEMORY, raw=False) -> dict:
    """load_kv(path, *, max_kv_memory=268435456, raw=False)

    The key-value metadata of a .hrry file, as save(kv=) was given it. raw=True
    adds the entries hurray records for itself ('hurray.*' keys).
    """
    kv = _hurray.load_kv(path, max_kv_memory=max_kv_memory)
    if raw:
        return kv
    return {k: v for k, v in kv.items() if k not in _shared.PACKAGE_KEYS}


def open(path, *, mmap=True, permissive=False,  # noqa: A001 - hurray.open, like gzip.open
         max_kv_memory=_DEFAULT_KV_MEMORY, pickle="bytes") -> "File":
    """open(path, *, mmap=True, permissive=False, max_kv_memory=268435456, pickle="bytes")

    Opens a .hrry file lazily (hurray.File): keys(), f[name] / get_tensor(name),
    kv / metadata(), usable as a context manager. Nothing but the header,
    index and KV is read until a tensor is asked for. pickle="reference"
    (with mmap="r") makes the tensors fetched from it pickle as a reference
    to the file instead of their bytes (docs/guide/processes.md).
    """
    # -- pickling (hurray._pickling): the identity of the file being mapped --
    if pickle not in _pickling.MODES:
        raise ValueError(f"open: pickle must be 'bytes' or 'reference', not {pickle!r}")
    if pickle == "reference" and mmap != "r":
        raise ValueError("open: pickle='reference' needs mmap='r' (a read-only mapping: a "
                         "reference then always names what the tensor holds)")
    before = _pickling.identity(path) if pickle == "reference" else None
    f = _hurray.open(path, mmap=mmap, permissive=permissive, max_kv_memory=max_kv_memory)
    reopen = (os.path.abspath(os.fspath(path)),
              dict(mmap=f.mmap_mode or False, permissive=permissive,
                   max_kv_memory=max_kv_memory, pickle=pickle))
    ref = None
    if before is not None and before == _pickling.identity(path):
        ref = _pickling.FileRef(reopen[0], before, permissive, max_kv_memory)
    f._set_pickling((_reopen, reopen), ref)
    return f


def _reopen(path, kwargs):
    """What a pickled hurray.File is rebuilt with: the same file, opened the same way."""
    return open(path, **kwargs)


#: What File.verify() returns (a named tuple made by the extension).
VerifyReport = _hurray.VerifyReport

#: An open .hrry file (hurray.open): the extension's type, where it is implemented.
File = _hurray.File
