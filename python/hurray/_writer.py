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

    Writes the .hrry file `path` one tensor at a time: write(name, value) per
    tensor, then finish(). A context manager: finish() on a clean exit,
    abort() when the block raises. kv= is the file's key-value metadata (as
    save(kv=); keys starting with 'hurray.' are reserved). checksums=True (as
    save) records a CRC-32C of every tensor while it is written, which
    File.verify() and load(verify=True) check.
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
