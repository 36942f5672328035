"""Small files written whole or not at all (an index, DCP's metadata): the bytes go
to a temporary file beside the target, which is renamed over it; with `durable`
the file and then its folder are fsynced, so the name points at the whole file
after a crash. The tensors' own files are written by the C writer, which does the
same (hurray.save)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_bytes_atomic(path: str | os.PathLike, data: bytes, durable: bool = True) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable and hasattr(os, "O_DIRECTORY"):  # POSIX: the rename itself
        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
