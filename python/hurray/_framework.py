"""What hurray.torch and hurray.numpy share: bytes in and out, checks of the
arguments safetensors' API takes, and the conversions of loaded tensors."""

from __future__ import annotations

from . import _files
from ._hurray import Composite, Tensor, UnsupportedError


def check_tensors(tensors, what: str, kind: str, is_kind) -> None:
    if not isinstance(tensors, dict):
        raise ValueError(f"{what}: expected a dict of [str, {kind}], received "
                         f"{type(tensors).__name__}")
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise TypeError(f"{what}: tensor names must be str, not {type(k).__name__}")
        if not is_kind(v):
            raise ValueError(f"{what}: key {k!r} is invalid: expected {kind}, received "
                             f"{type(v).__name__}")


def check_metadata(metadata, what: str):
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise ValueError(f"{what}: metadata must be a dict, not {type(metadata).__name__}")
    return metadata


def mmap_of(backend, mmap, what: str):
    """safetensors' backend= ("mmap", the default, or "pread": read into memory) as
    hurray's mmap=."""
    if backend is None or backend == "mmap":
        return mmap
    if backend == "pread":
        return False
    raise ValueError(f"{what}: backend must be 'mmap' or 'pread' (safetensors' values), not "
                     f"{backend!r}")


def save_bytes(tensors, kv) -> bytes:
    """A whole .hrry file image, as bytes, made in memory (no file system)."""
    return _files.save_bytes(tensors, kv=kv)


def load_bytes(data):
    """(stored tensors, views) of a file image given as bytes, each tensor in
    memory of its own (nothing refers to `data` afterwards; no file system)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load: data must be bytes, not {type(data).__name__}")
    return _files.load_bytes_stored(data)


def plain(name: str, t, what: str) -> Tensor:
    """A loaded item a framework can hold: a plain tensor, not a composite."""
    if isinstance(t, Composite):
        raise UnsupportedError(
            f"{what}: {name!r} is a composite tensor ({t.composition_rule}, {t.member_count} members), "
            f"which has no single framework tensor; read it with hurray.load or hurray.open")
    return t


# An implicit copy made for the caller (a view that repeats elements, made contiguous)
# takes at most its base's bytes or this, the larger: the bound of the extension's
# implicit DLPack copies (HRPY_IMPLICIT_COPY_FLOOR, python/src/interop/dlpack.c). A forged
# record of a few bytes can describe a zero-stride view of exabytes.
IMPLICIT_COPY_FLOOR = 64 << 20


def check_copy(name: str, nbytes: int, base_nbytes: int, what: str) -> None:
    """Refuses a contiguous copy of a view larger than its base's bytes or 64 MiB."""
    if nbytes > max(base_nbytes, IMPLICIT_COPY_FLOOR):
        raise UnsupportedError(
            f"{what}: view {name!r} repeats elements of its base (a zero or overlapping "
            f"stride): made contiguous it would take {nbytes:,} bytes, more than its base "
            f"({base_nbytes:,}) and 64 MiB; pass contiguous=False to get it as a view")

