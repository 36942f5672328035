"""The keywords of every URL the command reads: `hurray --storage-options JSON
--workers N --part-size BYTES COMMAND ...` (storage_options=, workers=,
part_size= of hurray.open). Kept apart from the format modules, which import
NumPy: `hurray inspect URL` needs neither."""

from __future__ import annotations

import io
from typing import Any

REMOTE: dict[str, Any] = {}


def open_hrry(path: str, **kw: Any) -> Any:
    """hurray.open of a path, or of a URL with the command's URL keywords."""
    from .. import _files, _remote
    return _files.open(path, **kw, **(REMOTE if _remote.is_url(path) else {}))


def is_url(path: str) -> bool:
    from .. import _remote
    return bool(_remote.is_url(path))


def url_path(url: str) -> str:
    """The path part of a URL, without its query or fragment (for its extension)."""
    return url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]


def open_binary(path: str) -> Any:
    """A binary file read with seek/read/readinto: a local file, or a URL's object
    through the command's URL keywords (each read one range, in parts by the
    source's workers: a tensor's bytes are fetched when it is converted)."""
    if not is_url(path):
        return open(path, "rb")
    from .. import _remote
    return RemoteFile(_remote.open_source(path, **REMOTE))


class RemoteFile(io.RawIOBase):
    """A remote object as a read-only binary file (hurray._remote's byte source:
    retries, identity checked on every range)."""

    def __init__(self, src: Any) -> None:
        super().__init__()
        self.src, self.name, self.pos = src, str(src), 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = (0, self.pos, self.src.size)[whence]
        if base + offset < 0:
            raise ValueError(f"{self.name}: seek to {base + offset}, before the start")
        self.pos = base + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, b: Any) -> int:
        mv = memoryview(b).cast("B")
        n = max(0, min(len(mv), self.src.size - self.pos))
        if n:
            self.src.fetch(self.pos, mv[:n])
            self.pos += n
        return n

    def close(self) -> None:
        if not self.closed:
            self.src.close()
        super().close()
