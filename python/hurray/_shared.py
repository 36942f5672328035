"""Tensors that share memory, stored once (docs/file-format.md, "Shared tensors").

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

Readers rebuild each view from its base without copying (`resolve_views` for
hurray tensors; hurray.torch and hurray.numpy rebuild framework views sharing
the base's storage).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, TypeGuard

from . import _hurray

# The reserved KV keys are spelled once, in the C library's public header
# (include/hurray/file.h, HURRAY_FILE_KV_*), and exported by the extension.
VIEWS_KEY: str = _hurray._KV_VIEWS
#: the GGUF value types of a file converted from GGUF (hurray convert; docs/cli.md)
GGUF_KEY: str = _hurray._KV_GGUF
#: The data checksums the writer records (save(checksums=True); docs/file-format.md,
#: "Data checksums"): KV bytes, two CRC-32C per index entry.
CHECKSUMS_KEY: str = _hurray._KV_DATA_CRC32C
RESERVED_PREFIX: str = _hurray._KV_RESERVED_PREFIX
#: KV keys this package writes for itself; load_kv, File.kv and metadata()
#: leave them out, so load_kv stays the inverse of save(kv=).
PACKAGE_KEYS = frozenset({VIEWS_KEY, GGUF_KEY, CHECKSUMS_KEY})
VIEWS_FORMAT = 1


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


def encode(views: dict[str, View]) -> str:
    out: dict[str, dict[str, Any]] = {}
    for name, v in views.items():
        if v.same:
            out[name] = {"base": v.base}
        else:
            out[name] = {"base": v.base, "dtype": v.dtype, "shape": list(v.shape),
                         "byte_offset": v.byte_offset, "byte_strides": list(v.byte_strides)}
    return json.dumps({"format": VIEWS_FORMAT, "views": out}, separators=(",", ":"))


def decode(text: Any, stored_names) -> dict[str, View]:
    """Reads the record, checking every field; a malformed one raises
    ValueError naming the key and the field (a file is never half-read)."""
    def bad(what: str) -> ValueError:
        return ValueError(f"kv[{VIEWS_KEY!r}]: {what}; the file's shared-tensor record is "
                          f"malformed (written by another tool?); load it with "
                          f"hurray.load_kv(path, raw=True) to inspect it")

    if not isinstance(text, str):
        raise bad(f"expected a JSON string, found {type(text).__name__}")
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise bad(f"not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != VIEWS_FORMAT:
        raise bad(f"format must be {VIEWS_FORMAT}")
    raw = doc.get("views")
    if not isinstance(raw, dict):
        raise bad("'views' must be an object")
    stored = set(stored_names)
    views: dict[str, View] = {}
    for name, rec in raw.items():
        if not isinstance(rec, dict) or not isinstance(rec.get("base"), str):
            raise bad(f"views[{name!r}].base must be a tensor name")
        if name in stored:
            raise bad(f"views[{name!r}] names a tensor the file also stores")
        if rec["base"] not in stored:
            raise bad(f"views[{name!r}].base {rec['base']!r} is not a tensor of the file")
        if set(rec) == {"base"}:
            views[name] = View(rec["base"], None, (), 0, ())
            continue
        shape, strides, off, dt = (rec.get("shape"), rec.get("byte_strides"),
                                   rec.get("byte_offset"), rec.get("dtype"))
        if not isinstance(dt, str):
            raise bad(f"views[{name!r}].dtype must be a type name")
        if not _ints(shape) or any(x < 0 for x in shape):
            raise bad(f"views[{name!r}].shape must be a list of non-negative ints")
        if not _ints(strides) or len(strides) != len(shape):
            raise bad(f"views[{name!r}].byte_strides must be {len(shape)} ints")
        if type(off) is not int:
            raise bad(f"views[{name!r}].byte_offset must be an int")
        views[name] = View(rec["base"], dt, tuple(shape), off, tuple(strides))
    return views


def _ints(v: Any) -> TypeGuard[list[int]]:
    return isinstance(v, list) and all(type(x) is int for x in v)


#: the most dimensions a view may have (HURRAY_MAX_RANK, as every tensor)
MAX_RANK = 64
_INT64_MAX = (1 << 63) - 1


def validate(name: str, v: View, base: Any) -> int:
    """The one check of a view record against the tensor it names as its base,
    made by every reader (hurray.load, open()[name], get_slice, safe_open,
    hurray.torch and hurray.numpy, from files and from bytes) before anything
    is built from it, so every reader accepts and refuses the same records and
    rebuilds the same elements. Returns the view's element size in bytes.

    Rules (docs/file-format.md, "Shared tensors"): the base is a dense tensor
    of whole-byte elements, unquantized, stored row- or column-major (the
    contiguous form the writer stores a base in); the view's type is known and
    whole-byte; its byte offset and byte strides are multiples of that size, and
    so is where its base starts in its buffer;
    it has at most 64 dimensions whose nonzero ones multiply (in bytes) to at
    most 2**63 - 1, and strides that fit in 64 bits; every byte it can reach lies inside the base's own bytes
    (so a base without bytes has only zero-element views, at offset 0). A
    record breaking one raises ValueError naming the view and the field.
    """
    def bad(what: str) -> ValueError:
        return ValueError(f"kv[{VIEWS_KEY!r}]: view {name!r}: {what}; the record does not "
                          f"match the file's tensors (written by another tool?); load it with "
                          f"hurray.load_kv(path, raw=True) to inspect it")

    from ._hurray import Dtype, Tensor
    if v.same or v.dtype is None:
        return 0
    base_bits = base.dtype.bit_width if isinstance(base, Tensor) else None
    base_count = base.size if isinstance(base, Tensor) else None
    if base_bits is None or base_bits % 8 or base_count is None or \
            base.quantization is not None or base.layout.name not in ("row_major", "col_major"):
        raise bad(f"its base {v.base!r} is not a dense row- or column-major tensor of "
                  f"whole-byte elements")
    try:
        dt = Dtype.from_name(v.dtype)
    except (ValueError, TypeError):
        raise bad(f"dtype {v.dtype!r} is not a hurray type name") from None
    bits = dt.bit_width
    if bits is None or bits % 8 or bits == 0:
        raise bad(f"dtype {dt.name} is not a whole-byte type")
    item = bits // 8
    if len(v.shape) > MAX_RANK:
        raise bad(f"shape has {len(v.shape)} dimensions, more than {MAX_RANK}")
    if v.byte_offset % item:
        raise bad(f"byte_offset {v.byte_offset} is not a multiple of {dt.name}'s size ({item})")
    if base.byte_offset % item:
        raise bad(f"its base {v.base!r} starts {base.byte_offset} bytes into its buffer, not a "
                  f"multiple of {dt.name}'s size ({item})")
    if any(not -_INT64_MAX <= s <= _INT64_MAX for s in v.byte_strides):
        raise bad(f"byte_strides {list(v.byte_strides)} do not fit in 64 bits")
    if any(s % item for s in v.byte_strides):
        raise bad(f"byte_strides {list(v.byte_strides)} are not multiples of {dt.name}'s "
                  f"size ({item})")
    prod = item
    for n in v.shape:
        if n:
            prod *= n
            if prod > _INT64_MAX:
                raise bad(f"shape {list(v.shape)} multiplies past 2**63 - 1 bytes")
    size = base_count * (base_bits // 8)
    lo = hi = v.byte_offset
    empty = 0 in v.shape
    if not empty:
        for n, s in zip(v.shape, v.byte_strides):
            if s < 0:
                lo += (n - 1) * s
            else:
                hi += (n - 1) * s
        hi += item
    if lo < 0 or hi > size or (empty and v.byte_offset > size):
        raise bad(f"byte_offset {v.byte_offset} and byte_strides {list(v.byte_strides)} reach "
                  f"bytes {lo}..{hi} of its base {v.base!r}, which holds {size}")
    return item
