"""Tensors that share memory, stored once (docs/reference/file-format.md, "Shared tensors").

`save` hands this module the objects it was given (hurray tensors, NumPy
arrays, torch tensors) before converting any of them. Objects whose bytes
overlap in memory form a group; one member that spans the whole group's
memory contiguously (C or Fortran order) is stored as an ordinary tensor, the
*base*, and every other member is recorded as a *view* of it in the KV entry
``hurray.views``: base name, element type, shape, byte offset from the base's
first element, byte strides. Nothing else is written for a view. Members that
overlap without such a base cannot be stored exactly: they are refused,
naming two of them. The same object under two names is a view too, whatever
its layout.

The record is written and read by libhurray (src/file/views.c): the writer
checks each view against its base, the reader checks the whole record once,
and gives back each view as a strided tensor over its base's bytes; hurray.torch
and hurray.numpy rebuild framework views sharing the base's storage from the
records it checked.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _hurray

# The reserved KV keys are spelled once, in the C library's public header
# (include/hurray/file.h, HURRAY_FILE_KV_*), and exported by the extension.
VIEWS_KEY: str = _hurray._KV_VIEWS
#: the GGUF value types of a file converted from GGUF (hurray convert; docs/reference/cli.md)
GGUF_KEY: str = _hurray._KV_GGUF
#: The data checksums the writer records (save(checksums=True); docs/reference/file-format.md,
#: "Data checksums"): KV bytes, two CRC-32C per index entry.
CHECKSUMS_KEY: str = _hurray._KV_DATA_CRC32C
RESERVED_PREFIX: str = _hurray._KV_RESERVED_PREFIX
#: KV keys this package writes for itself; load_kv, File.kv and metadata()
#: leave them out, so load_kv stays the inverse of save(kv=).
PACKAGE_KEYS = frozenset({VIEWS_KEY, GGUF_KEY, CHECKSUMS_KEY})


class Memory(NamedTuple):
    """Where one object's elements lie (host or device addresses)."""

    device: tuple[str, int]
    origin: int          # address of element [0, ..., 0]
    lo: int              # first byte any element occupies
    hi: int              # one past the last
    itemsize: int
    shape: tuple[int, ...]
    byte_strides: tuple[int, ...]
    dtype: str           # hurray type name
    order: str | None    # "C" or "F" when contiguous (dense, increasing), else None


class View(NamedTuple):
    base: str
    dtype: str | None          # None: the same object as the base
    shape: tuple[int, ...]
    byte_offset: int
    byte_strides: tuple[int, ...]

    @property
    def same(self) -> bool:
        return self.dtype is None


def _order(shape: tuple[int, ...], byte_strides: tuple[int, ...], itemsize: int) -> str | None:
    def packed(dims: list[int]) -> bool:
        step = itemsize
        for k in dims:
            if shape[k] != 1 and byte_strides[k] != step:
                return False
            step *= shape[k]
        return True

    idx = list(range(len(shape)))
    if packed(idx[::-1]):
        return "C"
    if packed(idx):
        return "F"
    return None


def memory_of(origin: int, shape, byte_strides, itemsize: int, device, dtype: str) -> Memory | None:
    shape = tuple(int(n) for n in shape)
    byte_strides = tuple(int(s) for s in byte_strides)
    if origin == 0 or any(n == 0 for n in shape):
        return None  # no memory: nothing to share
    lo = hi = origin
    for n, s in zip(shape, byte_strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return Memory(device, origin, lo, hi + itemsize, itemsize, shape, byte_strides, dtype,
                  _order(shape, byte_strides, itemsize))


def plan(names: list[str], objects: list[Any], memories: list[Memory | None]):
    """Splits the named objects into those to store and the views to record.

    Returns (stored_indices, {view_name: View}); raises ValueError when
    objects overlap and no one of them spans all the memory of the group.
    """
    views: dict[str, View] = {}
    skip: set[int] = set()
    # The same object under several names: a view of its first name.
    first_of: dict[int, int] = {}
    for i, obj in enumerate(objects):
        j = first_of.setdefault(id(obj), i)
        if j != i:
            views[names[i]] = View(names[j], None, (), 0, ())
            skip.add(i)
    spans = sorted(((m.device, m.lo, m.hi, i) for i, m in enumerate(memories)
                    if m is not None and i not in skip), key=lambda s: (s[0], s[1], s[3]))
    groups: list[list[int]] = []
    end = None
    for dev, lo, hi, i in spans:
        if groups and end is not None and dev == end[0] and lo < end[1]:
            groups[-1].append(i)
            end = (dev, max(end[1], hi))
        else:
            groups.append([i])
            end = (dev, hi)
    known: dict[int, Memory] = {i: m for i, m in enumerate(memories) if m is not None}
    for group in groups:
        if len(group) < 2:
            continue
        group.sort()  # the order the caller gave
        mems = [known[i] for i in group]
        lo = min(m.lo for m in mems)
        hi = max(m.hi for m in mems)
        base = next((i for i in group if known[i].order is not None
                     and known[i].lo == lo and known[i].hi == hi), None)
        if base is None:
            a, b = _overlapping_pair(group, known)
            ma, mb = known[a], known[b]
            shared = min(ma.hi, mb.hi) - max(ma.lo, mb.lo)
            raise ValueError(
                f"tensors {names[a]!r} and {names[b]!r} overlap in memory ({shared} bytes "
                f"in common) and no tensor saved with them spans all the memory they use "
                f"({hi - lo} bytes) contiguously, so they cannot be stored once and rebuilt "
                f"exactly. Save a copy of one of them (tensor.clone() or array.copy()), or "
                f"also save the tensor they are both views of")
        bm = known[base]
        for i in group:
            if i == base:
                continue
            m = known[i]
            if any(s % m.itemsize for s in m.byte_strides) or (m.origin - bm.origin) % m.itemsize:
                raise ValueError(
                    f"tensor {names[i]!r} is a view of {names[base]!r} whose offset or strides "
                    f"are not whole multiples of its element size ({m.itemsize} bytes); "
                    f"save a copy of it")
            views[names[i]] = View(names[base], m.dtype, m.shape, m.origin - bm.origin,
                                   m.byte_strides)
            skip.add(i)
    stored = [i for i in range(len(objects)) if i not in skip]
    pos = {n: i for i, n in enumerate(names)}
    return stored, dict(sorted(views.items(), key=lambda kv: pos[kv[0]]))


def _overlapping_pair(group: list[int], memories: dict[int, Memory]) -> tuple[int, int]:
    for x in group:
        for y in group:
            if x < y and memories[x].lo < memories[y].hi and memories[y].lo < memories[x].hi:
                return x, y
    return group[0], group[1]
