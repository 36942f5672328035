"""hurray.FileWriter: a .hrry file written one tensor at a time.

hurray.save takes every tensor at once; FileWriter writes each one when it is
given (its bytes are in the file when write() returns, and the caller may
drop it at once), so a checkpoint larger than memory can be converted tensor
by tensor (`hurray convert` does). The semantics of save hold: the target is
untouched until finish() renames the complete file over it (atomic), the
file is synced first unless durable=False, and a writer that is aborted, or
dropped, or left by an exception in a `with` block, removes its temporary
file. Values are converted as save converts them (NumPy arrays, torch
tensors, __dlpack__ / __hurray__ objects); tensors are written as given, so
memory shared between two values is written twice (save stores it once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import _files, _hurray, _shared

if TYPE_CHECKING:
    from types import TracebackType

    from ._hurray import StrPath


class FileWriter:
    """FileWriter(path, *, kv=None, durable=True, checksums=True)

    `hurray.save` takes every tensor at once. `hurray.FileWriter` writes a `.hrry` file one
    tensor at a time, each when it is given, so a checkpoint larger than memory can be written
    (or converted: the [`hurray` command](cli.md) writes `.hrry` files through it) holding one
    tensor at a time.

    - `checksums=True` (as `save`): a CRC-32C of every tensor, computed while it is written,
      recorded at `finish()`; `File.verify()`, `load(verify=True)` and `hurray verify` check it.
    - `write(name, value)`: the value as `save` takes it (a `hurray.Tensor` or `Composite`, a
      NumPy array, a torch tensor, anything with `__dlpack__` or `__hurray__`), converted the
      same way, written before the call returns; the writer keeps nothing of it. A name
      already written is `hurray.FileError` (`ERR_DUPLICATE_NAME`) and leaves the writer
      usable.
    - `finish()` writes the KV section, the index and the trailer and renames the file over
      `path`; `abort()` abandons it. As a context manager it finishes on a clean exit and
      aborts when the block raises. `finished`, `closed` (finished or aborted),
      `tensor_count` (index entries so far, composite members included).
    - The semantics of `save`: the file is written under a temporary name (unnamed on Linux)
      and renamed over `path` only by `finish()`, so `path` holds the old file or the complete
      new one; `durable=True` flushes it to the disk first; an aborted writer, one dropped
      unfinished, or a failed `finish()` removes its temporary file. `kv=` is `save`'s
      (`hurray.`-prefixed keys refused). The writes run without the GIL.
    - Unlike `save`, values that share memory are written once each (the writer sees one
      value at a time, so it cannot know that two share their bytes): use `save` for tied
      weights, or write each shared tensor once.
    - A file written tensor by tensor is byte for byte the file `save` writes from the same
      tensors in the same order (`tests/python/test_cli.py`).

    An example is in the guide, [Converting § Writing one tensor at a
    time](../guide/converting.md#writing-one-tensor-at-a-time).
    """

    __slots__ = ("_w", "_kv", "_raw_kv", "_views", "_names")

    def __init__(self, path: StrPath, *, kv: Mapping[str, Any] | None = None,
                 durable: bool = True, checksums: bool = True) -> None:
        self._kv = _files.check_user_kv(kv, "FileWriter")
        self._raw_kv: dict[str, Any] = {}
        self._views: dict[str, _shared.View] = {}
        self._names: set[str] = set()
        self._w = _hurray._FileWriter(path, durable=durable, checksums=checksums)

    def write(self, name: str, value: Any) -> None:
        """Writes `value` (a hurray.Tensor or Composite, a NumPy array, a torch
        tensor, any object save accepts) under `name`, before returning."""
        if not isinstance(name, str):
            raise TypeError(f"FileWriter.write: the name must be a str, not {type(name).__name__}")
        t = _files.to_tensor(value, name, "FileWriter.write")
        self._w.write(name, t)
        self._names.add(name)

    def _add_raw_kv(self, key: str, value: Any) -> None:
        # for hurray's own records ('hurray.views', 'hurray.gguf'): the
        # converters write them; users cannot (check_user_kv refuses them)
        self._raw_kv[key] = value

    def _add_views(self, views: dict[str, _shared.View]) -> None:
        # views of tensors already written or still to come, handed to the C
        # writer at finish, which checks each against its base and records
        # them as save does (docs/reference/file-format.md, "Shared tensors")
        self._views.update(views)

    def finish(self) -> None:
        """Writes the KV section, the index and the trailer, syncs the file
        (unless durable=False) and renames it onto the target."""
        if not self._w.closed:
            kv = dict(self._kv)
            kv.update(self._raw_kv)
            try:
                if self._views:
                    self._w.add_views(_files.view_records(self._views))
                if kv:
                    self._w.add_kv(kv)
            except BaseException:
                self._w.abort()
                raise
        self._w.finish()

    def abort(self) -> None:
        """Abandons the file: the temporary file is removed, the target untouched."""
        self._w.abort()

    @property
    def finished(self) -> bool:
        return self._w.finished

    @property
    def closed(self) -> bool:
        """True once finished or aborted."""
        return self._w.closed

    @property
    def tensor_count(self) -> int:
        """Index entries written so far (composite members included)."""
        return self._w.tensor_count

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.abort()
        elif not self.closed:
            self.finish()

    def __repr__(self) -> str:
        return repr(self._w).replace("hurray._FileWriter", "hurray.FileWriter", 1)

    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle a hurray.FileWriter")
