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

from . import _hurray, _pickling, _remote, _shared
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


# torch dtypes without a Hurray type, and what to convert them to
_TORCH_INSTEAD = {"torch.complex32": "x.to(torch.complex64)",
                  "torch.quint8": "x.dequantize() or x.int_repr()",
                  "torch.qint8": "x.dequantize() or x.int_repr()",
                  "torch.qint32": "x.dequantize() or x.int_repr()",
                  "torch.quint4x2": "x.dequantize()", "torch.quint2x4": "x.dequantize()",
                  **{f"torch.bits{n}": f"x.view(torch.uint{n})" for n in ("8", "16")}}


def _torch_dtype_known(dtype: Any) -> bool:
    """Whether a torch dtype may have a Hurray type (DLPack then says)."""
    return str(dtype) not in _TORCH_INSTEAD and not str(dtype).startswith("torch.bits")



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
        if not _torch_dtype_known(x.dtype):
            # refused before DLPack is asked: it would name the type by codes (or, for
            # the bits types, torch raises through C++); the user wrote a torch dtype
            raise UnsupportedError(
                f"{what}: tensors[{name!r}] is a torch tensor of dtype {x.dtype}, which has no "
                f"Hurray type; convert it first ({_TORCH_INSTEAD.get(str(x.dtype), 'x.to(...)')})")
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


def stream_item(obj: Any) -> Tensor | Composite:
    """What StreamWriter.write converts an object that is not a hurray tensor with
    (the extension's as_tensor hook): save's conversion."""
    return to_tensor(obj, "", "StreamWriter.write")


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

    Writes `tensors` and the key-value metadata `kv` to the `.hrry` file `path`, atomically and
    (by default) durably.

    The format is described in [the file format](file-format.md); everything goes through the C
    reader and writer, with the GIL released around every call into them.

    - `path`: `str`, `bytes` or `os.PathLike`. `tensors`: a dict (or anything with
      `items()`) of `str` names to `hurray.Tensor` or `hurray.Composite`, or to anything
      else that holds an array: a NumPy array, a torch tensor (one that requires grad is
      saved detached; `nn.Parameter` and other plain-storage subclasses are fine; a CUDA
      tensor is copied to the host; a sparse or meta tensor is `hurray.UnsupportedError`), or
      any object with `__hurray__` or `__dlpack__` (JAX arrays, CuPy arrays on the host).
      They are converted without copying wherever the memory allows (an address below the
      64-byte floor is copied; a torch CPU tensor rarely is), keeping their layout:
      column-major and strided values are written as such. Every buffer of every tensor is
      written in buffer-table order. Names are UTF-8, 1 to 65535 bytes.
    - **Values that share memory are written once** (tied weights, `w` and `w.T`, a slice and
      its array, one object under two names) and come back sharing it from `load`, `open`,
      `hurray.torch` and `hurray.numpy`: [the file format § Shared
      tensors](file-format.md#shared-tensors)
      says what is stored and what a reader that does not know it sees. Values that overlap
      partially, with no value spanning all their bytes, are refused with a `ValueError`
      naming two of them; nothing is written.
    - A composite is written as its head, then its members, each under its own index entry
      named `"{head}.{index}"` (a nested composite's members `"{head}.{index}.{index}"`). A
      member name that collides with another name is `hurray.FileError`
      (`ERR_DUPLICATE_NAME`); nothing is written.
    - **Atomic**: the bytes go to a temporary file in the target's directory, which is renamed
      over `path` once complete. A process killed mid-save leaves the previous file intact; a
      failed save removes its temporary file. Readers never see a partial file at `path`. This
      holds whatever `durable` is. On Linux the temporary file has no name until it is
      complete (`O_TMPFILE`) and is renamed over `path` right after it gets one, so a killed
      save leaves nothing behind, except when the kill lands in the instant between those two
      calls: then a complete `.<name>.tmp-XXXXXX` remains. Elsewhere (or on a file
      system without unnamed files) it is `.<name>.tmp-XXXXXX`, which a kill can leave:
      `hurray.remove_stale_temporaries` removes those.
    - **Durable** (`durable=True`, the default): the temporary file is flushed to the disk
      (`fsync`) before the rename, and the folder after it, so once `save` returns, the new
      file survives a power loss or an operating-system crash: nothing a user saved is lost or
      half-written. While it writes, `save` already sends each 8 MiB it has written to the
      disk (on Linux), so the final flush waits for the last few megabytes, not the whole file.
    - `durable=False` skips both flushes, and with them the wait for the disk (on a large file,
      most of `save`'s time; [benchmarks](benchmarks.md)). It gives up exactly this: after a
      power
      loss or an OS crash that comes before the kernel has written the data back (on Linux,
      typically within 30 seconds of `save` returning), the file at `path` may be the previous
      version, missing, or, on a file system that can commit the rename before the data,
      truncated or filled with zeros. A killed or crashed *process*, an exception, a full disk
      or a failed save never leave a partial file in either mode. Use it for files that can be
      made again (caches, checkpoints overwritten every few minutes, benchmarks); `durable`
      takes
      `True` or `False` only (anything else is a `TypeError`).
    - **Checksums** (`checksums=True`, the default): a CRC-32C of every tensor's descriptor
      and data, computed while it is written (no second pass), recorded in the KV entry
      `hurray.data_crc32c` ([the file format § Data checksums](file-format.md#data-checksums)).
      No wire
      structure is added: any reader loads the file, and `load_kv` leaves the entry out. On a
      durable save (the default) they cost nothing measurable (the disk's flush dominates); a
      `durable=False` save into the page cache pays 7-27% (`bench/checksums.py`);
      `checksums=False` writes none.
      `load(path, verify=True)` and `File.verify()` check them.
    - Only memory this process can read is written: a tensor declared on another device over
      host bytes (what this package builds) is written as a declaration; a device tensor whose
      buffers are device addresses (imported through DLPack or a foreign capsule) raises
      `hurray.UnsupportedError`. The same rule holds for `StreamWriter.write`.
    - Errors: a value that holds no array, a name that is not a `str`: `TypeError`; an
      invalid name, a KV key starting with `hurray.` (reserved for what the package records
      itself), overlapping values: `ValueError`; the file cannot be created or written
      (missing directory, permission, a directory as `path`, disk full): `hurray.FileError`;
      a missing directory is also a `FileNotFoundError`, a permission refused also a
      `PermissionError` (below).

    KV metadata (`kv=`, the file's key-value section):

    | Python | On disk | Read back |
    |---|---|---|
    | `bool` (tested before `int`) | bool | `bool` |
    | `int` in [-2**63, 2**63) | int64 | `int` |
    | `int` outside it | — `OverflowError` (a Python int is never written as uint64) | |
    | — (written by another producer) | uint64 | `int` |
    | `float` | float64 | `float` |
    | `str` | UTF-8 string | `str` |
    | `bytes`, `bytearray` | bytes | `bytes` |
    | `list` or `tuple` of one of the kinds above, all the same kind | array | `list` |
    | empty `list` / `tuple` | empty int64 array | `[]` |

    Anything else (`None`, a dict, mixed or nested lists) is a `TypeError` naming the key; a
    key that is not a `str` is a `TypeError`, an empty key a `ValueError`. A value round-trips
    to an equal value (tuples come back as lists). A KV tag this build does not know is
    refused (`hurray.FileError`, `ERR_INVALID_KV`), never dropped.
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


def load(path, *, names=None, mmap=True, permissive=False, verify=False,
         storage_options=None, workers=None, part_size=None) -> dict:
    """load(path, *, names=None, mmap=True, permissive=False, verify=False, storage_options=None, workers=None, part_size=None)

    Reads a `.hrry` file into a dict of name to `hurray.Tensor`, in file order.

    - `path` may be a URL (`s3://bucket/key`, `http(s)://...`, any fsspec URL):
      [Loading from object storage and HTTP](../guide/remote.md). The object is fetched in
      parts of `part_size` bytes (8 MiB), `workers` (8, or `$HURRAY_WORKERS`) at once, into
      one aligned buffer the tensors are writable views of (`mmap` does not apply); with
      `names=` only those tensors' ranges are read. `storage_options` (a dict) goes to the
      URL's reader.

    - a composite comes back under its head's name as a `hurray.Composite`, and its members
      are not also top-level entries; `names=["head.1", ...]` reads only those entries, and a
      member named explicitly is returned on its own (it keeps its overlay role). A name the
      file does not have is a `KeyError`.
    - **Sharing within one load or one `File`**: the tensors of one `load` call, and every
      tensor fetched from one `File`, are views of that call's (that `File`'s) one mapping, as
      two NumPy views of one `np.memmap(mode="c")` are: `f["w"]` fetched twice gives two
      tensors over the same memory, and a write through one is seen through the other.
      Another `load` or `open` of the same file maps it afresh and sees the file's bytes.
    - **Truncated files and SIGBUS**: a mapping (`"c"` and `"r"` alike) shows the file as it
      is on disk. If another process truncates a file while it is mapped, touching a page past
      the new end raises `SIGBUS`, which kills the process (no Python exception can be
      raised). `hurray.save` never truncates or rewrites a file in place: it writes a new file
      and renames it over the old one, and a mapping keeps the old file, whole, until its last
      tensor is gone (tensors loaded before a `save` over the same path keep their bytes). To
      avoid `SIGBUS`, do not truncate or rewrite a `.hrry` file in place while it may be
      mapped (replace it by a rename, as `save` does), and load files that other programs
      rewrite in place with `mmap=False`.
    - `permissive=True` reads descriptors in relay mode: private layouts and unknown tags are
      kept (strict by default: [decisions § Strictness](../internals/decisions.md#strictness)).
      A layout whose buffer table cannot be located
      at all (a reserved tag) is `hurray.UnsupportedError`.
    - `verify=True` first runs every check of `File.verify()`: the whole file's
      structure, then the data checksums when the file has them. A damaged file raises
      `hurray.FileError` (`status` `ERR_CRC_MISMATCH`, `field` `index[i].data` or
      `index[i].descriptor`, `offset` the byte offset of that part, the tensor named in the
      message) and nothing is returned. Without `verify`, a load never looks at the
      checksums: a mapped load costs the same with or without them.
    - Errors: file not found, permission denied, a corrupt container (header, trailer, index,
      CRC-32C, KV section), a truncated file: `hurray.FileError` (an `OSError`; `status` says
      which, e.g. `ERR_IO`, `ERR_INVALID_FILE`, `ERR_CRC_MISMATCH`). The messages say what to
      do:
        - a **missing file** (or folder) raises a class that is both `hurray.FileError` and
          `FileNotFoundError`, a **permission refused** one that is both `hurray.FileError`
          and `PermissionError` (`hurray._hurray.FileNotFoundError`,
          `hurray._hurray.PermissionError`), with `errno`, `strerror` and `filename` set as
          `open()` sets them; `status` stays `ERR_IO`. `save`, `load`, `load_kv` and `open`
          all raise them;
        - a file of **another format** is named, with the command that converts it:
          ``header.magic at byte 0: is not "HRRYFILE": this is a safetensors file, not a .hrry
          file; convert it with `hurray convert SRC DST` ``; the same for GGUF, NumPy `.npz`
          (`np.savez`) and `.npy` (`np.save`), PyTorch checkpoints (`torch.save`, zip) and
          pickles (`torch.save`'s legacy format). A Hurray stream is sent to `StreamReader`; an
          empty file is called empty ([the file format § When a file is not a .hrry
          file](file-format.md#when-a-file-is-not-a-hrry-file));
        - a **truncated** file says where it ends and how much is missing:
          `trailer.trailer_magic
          at byte N: is missing: the file is truncated, it ends at byte 5000000 inside the data
          of tensor 3 (bytes 4190208..8384512): at least 3384512 bytes are missing, then the
          index and the trailer`. A descriptor inside the
      file that breaks a format rule is `hurray.InvalidDescriptorError` naming the tensor, the
      field and the byte offset, as in the reference package; a tensor whose buffers do not
      match its descriptor is refused by the C reader.
    - Loading every tensor relies on the whole index, so `load` (without `names=`) first
      proves it: every name unique, no two tensors overlapping (`hurray_file_verify`). A file
      with two entries of one name is `hurray.FileError` (`ERR_DUPLICATE_NAME`), never a dict
      where one silently replaced the other.

    **`mmap=`** says how the tensors are read ([decisions § Copy-on-write
    loads](../internals/decisions.md#copy-on-write-loads)):

    | `mmap=` | mapping | tensors | a write |
    |---|---|---|---|
    | `True` (default), `"c"` | private, copy-on-write | **writable zero-copy views** | copies the one page it lands on into this process; never reaches the file, another process or another `load`/`open` of it |
    | `"r"` | shared, read-only | **read-only zero-copy views** | refused: NumPy raises, DLPack (`copy=None`) and `to_torch()` hand out copies |
    | `False` | none | memory of each tensor's own (writable) | stays in that tensor |

    A mapped tensor is page-aligned as in the file (`alignment` 4096), and the mapping stays
    alive while any tensor or array made from one uses it (closing or deleting everything
    else is fine). With `"c"`, pages that are only read are the system's cached pages of the
    file, as with `"r"`: loading and reading cost no memory of their own, and memory grows
    by one page per page written (on Linux only written pages are charged against the
    memory limit, except under `vm.overcommit_memory = 2`, which charges the whole mapping;
    Windows charges the whole mapping when it is made: load a file larger than that
    allowance with `"r"`). `np.asarray(t)`, `t.buffer(i)`, `np.from_dlpack(t)`,
    `t.__dlpack__()` (no `READ_ONLY` flag, no copy) and `t.to_torch()` all share the
    mapping's memory and may be written. `mmap=False` is for file systems where mapping is
    slow and for files that others rewrite in place (see the SIGBUS item above). Any other value
    (`1`, `None`,
    `"w"`, ...) is a `ValueError` naming `mmap` and the valid values.

    **`workers=`** (threads reading a cold file; [Cold loads](../guide/pytorch.md#cold-loads)):
    a file whose pages are not in memory yet is read ahead by that many threads at once, one
    large slice each (several large reads in flight), then mapped; a file already in memory
    is not read again (one `mincore` call tells). `None` (default): the environment variable
    `HURRAY_WORKERS`, else 4. `1`: no
    read-ahead, pages are read as they are touched. With `mmap=False` the file is read into
    the system's cache the same way first, and a tensor of 32 MiB or more is copied out by
    that many threads. Anything but a whole number from 1 to 64 (or a bad
    `HURRAY_WORKERS`) is a `ValueError`.
    """
    if _remote.is_url(path):
        return _remote.load(path, names=names, storage_options=storage_options, workers=workers,
                            part_size=part_size, permissive=permissive, verify=verify)
    # the C reader gives every name back, the views of shared tensors built
    # over their bases' bytes after the record was checked whole
    return _hurray.load(path, names=names, mmap=mmap, permissive=permissive, verify=verify,
                        workers=workers)


def load_stored(path, *, mmap=True, permissive=False, verify=False, storage_options=None,
                workers=None, part_size=None):
    """(the tensors the file stores, {view name: View}) from one open: what the
    framework layers rebuild their own views from (the records checked by the
    C reader). A URL is read as `load` reads one."""
    if _remote.is_url(path):
        tensors, records = _remote.load(path, storage_options=storage_options, workers=workers,
                                        part_size=part_size, permissive=permissive,
                                        verify=verify, with_views=True)
        return tensors, _views_of(records)
    tensors, records = _hurray._load_with_views(path, mmap=mmap, permissive=permissive,
                                                verify=verify, workers=workers)
    return tensors, _views_of(records)


def save_bytes(tensors, *, kv=None, checksums=True) -> bytes:
    """save_bytes(tensors, *, kv=None, checksums=True) -> bytes

    The `.hrry` file image `save` would write, byte for byte, made in memory by the C writer
    (`hurray_file_writer_open_memory`): no file system is involved, so it works under a
    file-size limit of 0 or on a read-only system (`tests/python/test_memory_io.py` runs it
    under `RLIMIT_FSIZE` 0).

    `hurray.torch.save`/`load` and `hurray.numpy.save`/`load` go through `save_bytes` and
    `load_bytes`.
    """
    converted, out_kv, views = prepare(tensors, kv)
    return _hurray.save_bytes(converted, kv=out_kv or None, checksums=checksums, views=views)


def load_bytes(data, *, names=None, permissive=False, verify=False, copy=True) -> dict:
    """load_bytes(data, *, names=None, permissive=False, verify=False, copy=True) -> dict

    Reads a `.hrry` file image (what `save_bytes` returns) from any contiguous buffer (`bytes`,
    `bytearray`,
    `memoryview`, a NumPy `uint8` array) with every check `load` makes (a damaged image gets
    the same `hurray.FileError` as the same bytes in a file), views rebuilt sharing their base.
    Each tensor is copied into memory of its own at its declared alignment, so nothing
    returned refers to `data` (a `bytearray` can be changed or resized afterwards). A `str` is
    refused with a `TypeError` that points at `load` (a path is not an image).

    `hurray.torch.save`/`load` and `hurray.numpy.save`/`load` go through `save_bytes` and
    `load_bytes`.

    `copy=False` copies nothing: the tensors are views of `data`, which stays exported
    (a `bytearray` cannot be resized, an `mmap` cannot be closed) while any of them lives;
    writable views when `data` is writable, read-only otherwise. `data` must be aligned to the
    file's data alignment (page-aligned memory such as `mmap.mmap(-1, size)` is; this is how a
    URL is loaded: `load`); a tensor it leaves misaligned is `hurray.BufferError`.
    """
    return _hurray.load_bytes(data, names=names, permissive=permissive, verify=verify,
                              copy=copy)


def load_bytes_stored(data, *, permissive=False, verify=False):
    """load_stored() of a file image held in memory (load_bytes)."""
    tensors, records = _hurray._load_bytes_with_views(data, permissive=permissive,
                                                      verify=verify)
    return tensors, _views_of(records)


def load_kv(path, *, max_kv_memory=_DEFAULT_KV_MEMORY, raw=False, storage_options=None) -> dict:
    """load_kv(path, *, max_kv_memory=268435456, raw=False, storage_options=None)

    The file's KV section as `save(kv=)` was given it (an empty dict when there is none),
    reading only the header,
    trailer, index and KV section; the package's own `hurray.*` entries are left out unless
    `raw=True`. It
    is a separate call from `load`. A KV section can decode to many times its size (a list of
    a million booleans is 1 MB in the file and 8 MB as Python objects): its size as Python
    objects is estimated first, and a section over `max_kv_memory` bytes raises
    `hurray.FileError` before anything is built (`None`: no bound).

    The KV types and how each comes back are in `hurray.save`. A URL is opened as `open`
    opens one (two reads) with `storage_options`.
    """
    if _remote.is_url(path):
        return _remote.load_kv(path, storage_options=storage_options,
                               max_kv_memory=max_kv_memory, raw=raw)
    kv = _hurray.load_kv(path, max_kv_memory=max_kv_memory)
    if raw:
        return kv
    return {k: v for k, v in kv.items() if k not in _shared.PACKAGE_KEYS}


def open(path, *, mmap=True, permissive=False,  # noqa: A001 - hurray.open, like gzip.open
         max_kv_memory=_DEFAULT_KV_MEMORY, pickle="bytes", storage_options=None, workers=None,
         part_size=None) -> "File":
    """open(path, *, mmap=True, permissive=False, max_kv_memory=268435456, pickle="bytes", storage_options=None, workers=None, part_size=None)

    Opens a `.hrry` file lazily and returns a `hurray.File`, the lazy
    reader (the shape of safetensors' `safe_open`). `mmap=` takes the values of `load`, with the
    same meaning (`True`, `"c"`, `"r"`, `False`). Opening reads the header, trailer, index
    and KV section and decodes no descriptor; each access reads one entry (what a `File` offers
    is in `hurray.File`). `max_kv_memory` is `load_kv`'s; `pickle=` is in `hurray.File`.
    `workers=` is `load`'s: a tensor fetched (`f[name]`, `get_tensor`) has its own bytes read
    ahead by that many threads when they are not in memory; nothing else of the file is read.

    A URL (`s3://`, `http(s)://`, any fsspec URL; [Loading from object storage and
    HTTP](../guide/remote.md)) is opened with two reads (the head, and one tail read for the
    trailer, KV and index); each tensor fetched reads its own range (a large one in parts of
    `part_size`, `workers` at once), a `get_slice` only the bytes of its rows. `mmap` does not
    apply; pickling the `File` opens the URL again in the receiver.
    """
    if _remote.is_url(path):
        return _remote.open_file(path, storage_options=storage_options, workers=workers,
                                 part_size=part_size, permissive=permissive,
                                 max_kv_memory=max_kv_memory, pickle=pickle)
    # -- pickling (hurray._pickling): the identity of the file being mapped --
    if pickle not in _pickling.MODES:
        raise ValueError(f"open: pickle must be 'bytes' or 'reference', not {pickle!r}")
    if pickle == "reference" and mmap != "r":
        raise ValueError("open: pickle='reference' needs mmap='r' (a read-only mapping: a "
                         "reference then always names what the tensor holds)")
    before = _pickling.identity(path) if pickle == "reference" else None
    f = _hurray.open(path, mmap=mmap, permissive=permissive, max_kv_memory=max_kv_memory,
                     workers=workers)
    reopen = (os.path.abspath(os.fspath(path)),
              dict(mmap=f.mmap_mode or False, permissive=permissive,
                   max_kv_memory=max_kv_memory, pickle=pickle, workers=workers))
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
