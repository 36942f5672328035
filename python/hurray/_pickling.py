"""Pickling the tensors of a mapped file by reference (hurray.open(..., pickle="reference")).

By default a tensor pickles by value: its descriptor and its buffers (out of
band with protocol 5; docs/guide/processes.md). A tensor fetched from a file opened
with ``pickle="reference"`` (which needs ``mmap="r"``: a read-only mapping, so
what the tensor holds is what the file holds) pickles instead as a reference
to the file: its path, the file's identity (st_dev, st_ino, size, mtime_ns),
the tensor's name and its encoded descriptor. The receiver maps the same file
read-only (the same pages of the page cache) and fetches the tensor by name.

- At pickling time, a file that is no longer the one mapped (replaced or
  modified since it was opened) makes the tensor pickle by value instead: the
  bytes are still here, so the result is always correct.
- At unpickling time, a file that changed since the pickle was made raises
  hurray.FileError naming the path: only the reference travelled, the bytes
  did not, so there is nothing else to give.

The C reducer (Tensor.__reduce_ex__) asks `_hook` first once a reference file
has been opened in the process; `_hook` answers None for every other tensor.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import OrderedDict

from . import _hurray

MODES = ("bytes", "reference")

# id(tensor) -> (weak reference to it, FileRef, name). Entries leave with their tensor.
_registry: dict = {}
# What unpickling opened: (path, identity, permissive, max_kv_memory) -> hurray.File, the
# most recently used last; a few are kept open so that many references to one file map it once.
_opened: OrderedDict = OrderedDict()
_OPENED_MAX = 16
_lock = threading.Lock()


def identity(path) -> tuple | None:
    """(st_dev, st_ino, st_size, st_mtime_ns) of `path`, or None when it cannot be read."""
    try:
        s = os.stat(path)
    except OSError:
        return None
    return (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns)


class FileRef:
    """What a reference names: the file (absolute path and identity when it was
    opened) and how it was opened."""

    __slots__ = ("path", "identity", "permissive", "max_kv_memory")

    def __init__(self, path, ident, permissive, max_kv_memory):
        self.path, self.identity = path, ident
        self.permissive, self.max_kv_memory = permissive, max_kv_memory

    def register(self, tensor, name: str) -> None:
        """Called by hurray.File for each tensor it gives out (pickle="reference")."""
        register(tensor, self, name)


def register(tensor, ref: FileRef, name: str) -> None:
    """From now on `tensor` (of the file `ref`, called `name` there) pickles by reference."""
    key = id(tensor)

    def drop(_w, key=key):
        _registry.pop(key, None)

    _registry[key] = (weakref.ref(tensor, drop), ref, name)
    if _hurray.__dict__.get("_pickle_reference_hook") is not _hook:
        setattr(_hurray, "_pickle_reference_hook", _hook)  # read by Tensor.__reduce_ex__


def _hook(tensor, protocol):
    entry = _registry.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    _, ref, name = entry
    if identity(ref.path) != ref.identity:
        return None  # not the file mapped any more: by value, from the mapping we hold
    return (_rebuild_reference, (ref.path, ref.identity, ref.permissive, ref.max_kv_memory, name,
                                 tensor.descriptor.encode()))


def _open(path, ident, permissive, max_kv_memory):
    from ._files import open as open_file

    key = (path, ident, permissive, max_kv_memory)
    with _lock:
        f = _opened.get(key)
        if f is not None and not f.closed:
            _opened.move_to_end(key)
            return f
    f = open_file(path, mmap="r", permissive=permissive, max_kv_memory=max_kv_memory,
                  pickle="reference")
    if f._ref is None or f._ref.identity != ident:
        f.close()
        raise _changed(path, None)
    with _lock:
        old = _opened.get(key)
        if old is not None and not old.closed:
            f.close()
            return old
        _opened[key] = f
        while len(_opened) > _OPENED_MAX:
            _opened.popitem(last=False)[1].close()  # its tensors keep their mapping
    return f


def _changed(path, name):
    what = f"tensor {name!r} of " if name is not None else ""
    return _hurray.FileError(
        f"unpickle: {what}{path!r} was pickled by reference (hurray.open(..., "
        f"pickle='reference')) but the file changed since (device, inode, size or "
        f"modification time differ), and the bytes did not travel; pickle from a file that "
        f"stays unchanged, or pickle by value (the default)")


def nbytes(x) -> int:
    """The bytes a tensor's buffers hold (a composite: its members'), what Dask counts."""
    if isinstance(x, _hurray.Composite):
        return sum(nbytes(m) for m in x.members)
    return sum(h.byte_size for h in x.buffer_handles)


def register_dask_sizeof(sizeof) -> None:
    """The ``dask.sizeof`` entry point (pyproject.toml): Dask's memory accounting
    (limits, spilling, how many keys one transfer gathers) counts a tensor by its
    buffers, as it counts a NumPy array by ``nbytes``, instead of the ~240 bytes
    of the Python object."""

    def size(x):
        return nbytes(x) + sys.getsizeof(x)

    sizeof.register(_hurray.Tensor, size)
    sizeof.register(_hurray.Composite, size)


def _rebuild_reference(path, ident, permissive, max_kv_memory, name, descriptor):
    """The tensor a reference names, mapped read-only from the same file."""
    if identity(path) != ident:
        raise _changed(path, name)
    t = _open(path, ident, permissive, max_kv_memory)[name]
    if t.descriptor.encode() != descriptor:
        raise _hurray.FileError(
            f"unpickle: tensor {name!r} of {path!r} is not the one pickled by reference "
            f"(its descriptor differs)")
    return t
