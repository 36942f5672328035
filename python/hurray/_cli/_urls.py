"""The keywords of every URL the command reads: `hurray --storage-options JSON
--workers N --part-size BYTES COMMAND ...` (storage_options=, workers=,
part_size= of hurray.open). Kept apart from the format modules, which import
NumPy: `hurray inspect URL` needs neither."""

from __future__ import annotations

from typing import Any

REMOTE: dict[str, Any] = {}


def open_hrry(path: str, **kw: Any) -> Any:
    """hurray.open of a path, or of a URL with the command's URL keywords."""
    from .. import _files, _remote
    return _files.open(path, **kw, **(REMOTE if _remote.is_url(path) else {}))
