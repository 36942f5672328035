"""Our own bounds on the converters' inputs, checked before a third-party
parser (json, NumPy's format reader, zipfile) sees the bytes (docs/reference/cli.md,
"Hostile inputs"). Each check costs time linear in the bytes it looks at, and
every length and count the file declares is checked against the bytes it
actually has before anything of that size is built.

- GGUF: the header, the KV section and the tensor infos are read here, in
  full (read_gguf): gguf.GGUFReader builds a NumPy view per array element
  (about 20 us and 0.7 KB each) and recurses into nested arrays, so a small
  file could cost minutes and gigabytes inside it. The tensors' data is read
  by the converter with positioned reads.
- safetensors: the header length against the file and safetensors' own
  100,000,000-byte cap, UTF-8, the JSON nesting depth before json.loads
  (serde_json refuses 128 levels), no NaN or Infinity (not JSON), duplicate
  names (which safetensors takes silently, the last one winning), then what
  safetensors' Metadata::validate refuses (check_st_entries).
- .npy / .npz: the header length and nesting depth before NumPy parses it,
  then the declared shape x itemsize against the bytes present; an .npz's
  members (stored or deflated, not encrypted, no more data than the file has).

Every refusal is a CliError naming the file and the field.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from typing import Any

from ._errors import CliError

# ---- the limits (docs/reference/cli.md, "Hostile inputs") -------------------------------------

GGUF_MAX_KEY = 65535          # bytes in a KV key: the GGUF specification's limit
GGUF_MAX_DEPTH = 8            # arrays nested in arrays (a KV array is depth 1)
GGUF_MAX_ITEMS = 1 << 24      # KV array elements in the whole file (16,777,216)
GGUF_MAX_KV = 1 << 20         # KV entries (1,048,576)
GGUF_MAX_TENSORS = 1 << 20    # tensor infos (1,048,576)
GGUF_MAX_DIMS = 64            # dimensions of a tensor (HURRAY_MAX_RANK)
ST_MAX_HEADER = 100_000_000   # bytes of a safetensors header (safetensors' own cap)
JSON_MAX_DEPTH = 127          # nesting of a JSON document (safetensors' serde_json: 128 fails)
NPY_MAX_HEADER = 10_000       # bytes of an .npy header (np.load's max_header_size)
NPY_MAX_DEPTH = 32            # bracket nesting in an .npy header (structured dtypes)
ZIP_MAX_RATIO = 1032          # uncompressed / compressed bytes of a deflated member
INT64_MAX = (1 << 63) - 1


def _zip_errors() -> tuple[type[BaseException], ...]:
    import zipfile
    import zlib
    # how zipfile and its decompressors fail on a damaged or unusual file: a bad
    # header or CRC, a truncated stream, a version or method it lacks (NotImplemented),
    # an encrypted member (RuntimeError)
    return (OSError, zipfile.BadZipFile, ValueError, EOFError, NotImplementedError,
            RuntimeError, zlib.error, struct.error)


ZIP_ERRORS = _zip_errors()


def dims_overflow(dims: Any) -> bool:
    """Whether the product of the non-zero dimensions of a shape is over
    2**63 - 1 (a shape with a zero dimension holds nothing, but NumPy, torch
    and hurray still multiply its dimensions in 64 bits)."""
    n = 1
    for d in dims:
        if d:
            n *= int(d)
            if n > INT64_MAX:
                return True
    return False


# ---- JSON --------------------------------------------------------------------------

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of [ and { in the JSON text `raw` (strings skipped),
    in time linear in its length and without recursion."""
    import numpy as np
    br = _JSON_STRING.sub(b'""', raw).translate(None, _NOT_BRACKET)
    if not br:
        return 0
    a = np.frombuffer(br, np.uint8)
    steps = np.where((a == ord("[")) | (a == ord("{")), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max())


def load_json(path: str, raw: bytes, what: str, *, max_depth: int = JSON_MAX_DEPTH,
              unique: bool = True) -> Any:
    """json.loads of `raw` (UTF-8) after the depth check; objects with a key
    twice are refused (unique=True), naming the key."""
    import json
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"{path}: {what} is not UTF-8 (byte {e.start})") from None
    depth = json_depth(raw)
    if depth > max_depth:
        raise CliError(f"{path}: {what} nests {depth} deep (at most {max_depth})")

    def constant(name: str) -> Any:
        raise CliError(f"{path}: {what}: {name} is not JSON")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in items:
            if k in d:
                raise CliError(f"{path}: {what}: the name {k!r} appears twice")
            d[k] = v
        return d

    try:
        return json.loads(text, object_pairs_hook=pairs if unique else None,
                          parse_constant=constant)
    except (ValueError, RecursionError) as e:
        raise CliError(f"{path}: {what} is not JSON ({e})") from None


# ---- safetensors -------------------------------------------------------------------

ST_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
           "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
           "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
           "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}


def _usize(v: Any) -> bool:
    return type(v) is int and 0 <= v < 1 << 64


def _utf8(path: str, what: str, *texts: str) -> None:
    """JSON's \\ud800 escapes give strings with lone surrogates, which no UTF-8
    file can hold (safetensors refuses them)."""
    for t in texts:
        try:
            t.encode("utf-8")
        except UnicodeEncodeError:
            raise CliError(f"{path}: {what}: a string with a lone surrogate (a \\ud800 "
                           f"escape) is not UTF-8") from None


def read_st_header(path: str) -> tuple[dict[str, Any], dict[str, str], int]:
    """(tensor entries, __metadata__, byte where the data starts) of the
    safetensors file `path`, refused as safetensors' own reader refuses it:
    each entry {"dtype", "shape", "data_offsets"} checked (check_st_entries)."""
    from ._urls import open_binary
    try:
        with open_binary(path) as fh:   # a local file or a URL's object
            raw = fh.read(8)
            if len(raw) < 8:
                raise CliError(f"{path}: not a safetensors file (shorter than 8 bytes)")
            (n,) = struct.unpack("<Q", raw)
            size = fh.seek(0, os.SEEK_END)
            fh.seek(8)
            if n > ST_MAX_HEADER:
                raise CliError(f"{path}: the safetensors header length {n} is over "
                               f"{ST_MAX_HEADER:,} bytes (safetensors' own limit)")
            if n > size - 8:
                raise CliError(f"{path}: the safetensors header length {n} runs past the end "
                               f"of the file ({size} bytes)")
            text = fh.read(n)
    except OSError as e:
        raise CliError(f"{path}: {e.strerror or e}") from None
    hdr = load_json(path, text, "the safetensors header")
    if not isinstance(hdr, dict):
        raise CliError(f"{path}: the safetensors header is not a JSON object")
    meta = hdr.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise CliError(f"{path}: __metadata__ must map strings to strings")
    for k, v in meta.items():
        _utf8(path, f"__metadata__[{k!r}]", k, v)
    check_st_entries(path, hdr, size - 8 - n)
    return hdr, meta, 8 + n


def check_st_entries(path: str, hdr: dict[str, Any], data_size: int) -> None:
    """What safetensors' Metadata::validate refuses, naming the tensor and the
    field: a missing or mistyped field (offsets and dimensions are unsigned
    64-bit integers, not strings, floats or booleans), an unknown dtype, a
    shape whose element count overflows, a size that is not dtype x shape, and
    offsets that leave a hole, overlap, run backwards or leave bytes over in the
    data section (`data_size` bytes): in offset order, each tensor starts where
    the one before ended, the first at 0, the last ending at the data's end."""
    for name, info in hdr.items():
        where = f"{path}: tensor {name!r}"
        _utf8(path, f"tensor {name!r}", name)
        if not isinstance(info, dict):
            raise CliError(f"{where}: the entry is a {type(info).__name__}, not an object")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in info:
                raise CliError(f"{where}: no {key!r}")
        dt, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dt, str) or dt not in ST_BITS:
            raise CliError(f"{where}: dtype {dt!r} is not a safetensors dtype")
        if not isinstance(shape, list) or not all(_usize(d) for d in shape):
            raise CliError(f"{where}: shape {shape!r} is not a list of unsigned integers")
        if not isinstance(offs, list) or len(offs) != 2 or not all(_usize(o) for o in offs):
            raise CliError(f"{where}: data_offsets {offs!r} is not two unsigned integers")
        count = 1
        for d in shape:
            count *= d
        if count * ST_BITS[dt] >= 1 << 64 or dims_overflow(shape):
            raise CliError(f"{where}: shape {shape} of {dt} overflows 64 bits")
        if offs[1] < offs[0]:
            raise CliError(f"{where}: data_offsets {offs}: the end is before the begin")
        if (count * ST_BITS[dt]) % 8:
            raise CliError(f"{where}: {count} {dt} elements are not a whole number of bytes")
        if offs[1] - offs[0] != count * ST_BITS[dt] // 8:
            raise CliError(f"{where}: data_offsets {offs} hold {offs[1] - offs[0]} bytes; "
                           f"shape {shape} of {dt} is {count * ST_BITS[dt] // 8}")
    end = 0
    for name, info in sorted(hdr.items(), key=lambda kv: tuple(kv[1]["data_offsets"])):
        a, b = info["data_offsets"]
        if a != end:
            what = "leaves a hole before it" if a > end else "overlaps the tensor before it"
            raise CliError(f"{path}: tensor {name!r}: data_offsets {[a, b]} {what} (the data "
                           f"before ends at {end})")
        end = b
    if end != data_size:
        if end > data_size:
            raise CliError(f"{path}: the tensors' data_offsets end at {end}, past the data "
                           f"section's {data_size} bytes")
        raise CliError(f"{path}: the data section has {data_size - end} bytes after the last "
                       f"tensor's (which ends at {end})")


# ---- GGUF --------------------------------------------------------------------------

GGUF_MAGIC = b"GGUF"
GGUF_VERSIONS = (2, 3)
V_NAMES = ["UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL", "STRING",
           "ARRAY", "UINT64", "INT64", "FLOAT64"]
_STRING, _ARRAY, _BOOL = 8, 9, 7
_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
           12: "d"}
_NP = {0: "u1", 1: "i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "u1", 10: "<u8",
       11: "<i8", 12: "<f8"}


def _min_size(t: int) -> int:
    """The fewest bytes a value of GGUF type `t` takes."""
    if t == _STRING:
        return 8
    if t == _ARRAY:
        return 12
    return struct.calcsize("<" + _SCALAR[t])


@dataclass
class GgufTensorInfo:
    name: str
    qtype: str                # the GGMLQuantizationType name
    dims: tuple[int, ...]     # GGUF order: the contiguous dimension first
    data_offset: int          # absolute, in the file
    n_bytes: int


@dataclass
class GgufHeader:
    version: int
    kv: dict[str, Any] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)   # key -> "UINT32", "ARRAY[FLOAT32]"
    problems: list[str] = field(default_factory=list)     # KV entries KV cannot hold
    tensors: list[GgufTensorInfo] = field(default_factory=list)
    alignment: int = 32
    data_offset: int = 0


class _Reader:
    def __init__(self, path: str, buf: Any) -> None:
        self.path = path
        self.b = buf
        self.size = len(buf)
        self.pos = 0
        self.items = 0

    def fail(self, what: str) -> CliError:
        return CliError(f"{self.path}: GGUF {what}")

    def need(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise self.fail(f"{what} at byte {self.pos}: needs {n} bytes, the file has "
                            f"{self.size - self.pos} left")

    def unpack(self, fmt: str, what: str) -> Any:
        n = struct.calcsize("<" + fmt)
        self.need(n, what)
        v = struct.unpack_from("<" + fmt, self.b, self.pos)[0]
        self.pos += n
        return v

    def raw_string(self, what: str, limit: int | None = None) -> bytes:
        n = self.unpack("Q", f"{what}: the length")
        if limit is not None and n > limit:
            raise self.fail(f"{what} at byte {self.pos - 8}: {n} bytes long (at most {limit})")
        self.need(n, f"{what} ({n} bytes)")
        s = bytes(self.b[self.pos:self.pos + n])
        self.pos += n
        return s

    def name(self, what: str, limit: int | None = None) -> str:
        at = self.pos
        raw = self.raw_string(what, limit)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} at byte {at} is not UTF-8") from None

    def count(self, t: int, what: str) -> int:
        n = self.unpack("Q", f"{what}: the element count")
        fit = (self.size - self.pos) // _min_size(t)
        if n > fit:
            raise self.fail(f"{what} at byte {self.pos - 8}: {n} elements of "
                            f"{V_NAMES[t]} cannot fit in the {self.size - self.pos} bytes left")
        self.items += n
        if self.items > GGUF_MAX_ITEMS:
            raise self.fail(f"{what}: more than {GGUF_MAX_ITEMS:,} KV array elements in the "
                            f"file (hurray convert's limit)")
        return n

    def vtype(self, what: str) -> int:
        t = self.unpack("I", f"{what}: the type")
        if t >= len(V_NAMES):
            raise self.fail(f"{what} at byte {self.pos - 4}: unknown value type {t}")
        return t

    def scalar(self, t: int, what: str) -> Any:
        v = self.unpack(_SCALAR[t], what)
        if t == _BOOL:
            return bool(v)
        if t in (6, 12):
            return float(v)
        return str(v) if v > INT64_MAX else int(v)

    def string_value(self, what: str) -> Any:
        raw = self.raw_string(what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw

    def array(self, what: str, depth: int) -> tuple[int, list[Any] | None]:
        """(element type, the values; None for an array of arrays, walked over)."""
        if depth > GGUF_MAX_DEPTH:
            raise self.fail(f"{what}: arrays nested more than {GGUF_MAX_DEPTH} deep")
        sub = self.vtype(f"{what}: the element")
        n = self.count(sub, what)
        if sub == _ARRAY:
            for i in range(n):
                self.array(f"{what}[{i}]", depth + 1)
            return sub, None
        if sub == _STRING:
            vals = [self.string_value(f"{what}[{i}]") for i in range(n)]
            if any(isinstance(v, bytes) for v in vals):
                vals = [v if isinstance(v, bytes) else v.encode() for v in vals]
            return sub, vals
        import numpy as np
        width = _min_size(sub)
        a = np.frombuffer(self.b, dtype=np.dtype(_NP[sub]), count=n, offset=self.pos)
        self.pos += n * width
        if sub == _BOOL:
            return sub, [bool(x) for x in a.tolist()]
        if sub in (6, 12):
            return sub, [float(x) for x in a.tolist()]
        vals = a.tolist()
        if sub == 10:
            vals = [str(v) if v > INT64_MAX else v for v in vals]
        return sub, vals


def read_gguf(path: str) -> GgufHeader:
    """The header, KV entries and tensor infos of the GGUF file `path` (v2 or
    v3, little-endian), read within the limits above; each tensor's data is
    checked to lie inside the file. Values as _gguf.py maps them: strings (bytes
    when not UTF-8), integers (UINT64 above 2**63 - 1 as its decimal string),
    floats, bools, lists; an array of arrays is recorded as a problem."""
    import gguf
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < 24:
                raise CliError(f"{path}: not a GGUF file ({size} bytes, shorter than its "
                               f"header)")
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise CliError(f"{path}: {e.strerror or e}") from None
    try:
        return _read_gguf(path, memoryview(buf), gguf)
    finally:
        try:
            buf.close()
        except BufferError:
            pass  # a view still holds it: freed with the view


def _read_gguf(path: str, buf: Any, gguf: Any) -> GgufHeader:
    r = _Reader(path, buf)
    if bytes(buf[:4]) != GGUF_MAGIC:
        raise r.fail("magic: not a GGUF file")
    r.pos = 4
    version = r.unpack("I", "version")
    if version & 0xFFFF == 0 and version != 0:
        raise r.fail("file is big-endian (hurray convert reads little-endian GGUF files)")
    if version not in GGUF_VERSIONS:
        raise r.fail(f"version {version} (hurray convert reads versions 2 and 3)")
    h = GgufHeader(version)
    n_tensors = r.unpack("Q", "tensor_count")
    n_kv = r.unpack("Q", "kv_count")
    left = r.size - r.pos
    if n_kv > GGUF_MAX_KV or n_kv > left // 13:
        raise r.fail(f"kv_count {n_kv}: more entries than " + (
            f"hurray convert reads ({GGUF_MAX_KV:,})" if n_kv <= left // 13 else
            f"the {left} bytes left can hold"))
    if n_tensors > GGUF_MAX_TENSORS or n_tensors > left // 24:
        raise r.fail(f"tensor_count {n_tensors}: more tensors than " + (
            f"hurray convert reads ({GGUF_MAX_TENSORS:,})" if n_tensors <= left // 24 else
            f"the {left} bytes left can hold"))
    keys: set[str] = set()
    for i in range(n_kv):
        at = r.pos
        key = r.name(f"kv[{i}]: the key", GGUF_MAX_KEY)
        if key in keys:
            raise r.fail(f"kv[{i}] at byte {at}: the key {key!r} appears twice")
        keys.add(key)
        what = f"kv[{i}] {key!r}"
        t = r.vtype(what)
        if t == _ARRAY:
            sub, vals = r.array(what, 1)
            if vals is None:
                h.problems.append(f"GGUF key {key!r}: an array of arrays has no KV equivalent")
                continue
            h.kv[key] = vals
            h.types[key] = f"ARRAY[{V_NAMES[sub]}]"
        elif t == _STRING:
            h.kv[key] = r.string_value(what)
            h.types[key] = "STRING"
        else:
            h.kv[key] = r.scalar(t, what)
            h.types[key] = V_NAMES[t]
    names: set[str] = set()
    infos = []
    for i in range(n_tensors):
        at = r.pos
        name = r.name(f"tensor info [{i}]: the name")
        what = f"tensor {name!r} (tensor info [{i}] at byte {at})"
        if name in names:
            raise r.fail(f"{what}: the name appears twice")
        names.add(name)
        n_dims = r.unpack("I", f"{what}: n_dims")
        if n_dims > GGUF_MAX_DIMS:
            raise r.fail(f"{what}: {n_dims} dimensions (at most {GGUF_MAX_DIMS})")
        r.need(8 * n_dims, f"{what}: the dimensions")
        dims = struct.unpack_from(f"<{n_dims}Q", buf, r.pos)
        r.pos += 8 * n_dims
        raw_type = r.unpack("I", f"{what}: the type")
        offset = r.unpack("Q", f"{what}: the offset")
        try:
            qt = gguf.GGMLQuantizationType(raw_type)
            block, tsize = gguf.GGML_QUANT_SIZES[qt]
        except (ValueError, KeyError):
            raise r.fail(f"{what}: unknown tensor type {raw_type}") from None
        count = 1
        for d in dims:
            count *= d
        if dims_overflow(dims):
            raise r.fail(f"{what}: the dimensions {list(dims)} overflow 64 bits")
        if block > 1 and (not dims or dims[0] % block):
            raise r.fail(f"{what}: {qt.name} packs blocks of {block}; the first dimension "
                         f"{dims[0] if dims else 0} is not a multiple")
        infos.append((name, qt.name, tuple(dims), offset, count * tsize // block, what))
    align = 32
    if "general.alignment" in keys:
        align = h.kv.get("general.alignment", 0)
        if h.types.get("general.alignment") != "UINT32" or not isinstance(align, int) or \
                align <= 0 or align & (align - 1):
            raise r.fail(f"general.alignment {align!r} is not a UINT32 power of two")
    h.alignment = align
    h.data_offset = -(-r.pos // align) * align
    for name, qname, dims, offset, n_bytes, what in infos:
        start = h.data_offset + offset
        if offset > r.size or n_bytes > r.size - start:
            raise r.fail(f"{what}: its data [{offset}, +{n_bytes}) after byte {h.data_offset} "
                         f"runs past the end of the file ({r.size} bytes)")
        h.tensors.append(GgufTensorInfo(name, qname, dims, start, n_bytes))
    return h


# ---- .npy / .npz -------------------------------------------------------------------

NPY_MAGIC = b"\x93NUMPY"
_PY_STRING = re.compile(rb"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", re.S)
_NOT_PY_BRACKET = bytes(b for b in range(256) if b not in b"[](){}")


def npy_header(path: str, head: bytes, present: int, what: str = "") -> tuple[Any, bool, Any, int]:
    """(shape, fortran_order, dtype, header length) of the .npy bytes starting
    with `head` (at least the whole header), whose total length is `present`:
    the version, the header length (NPY_MAX_HEADER), its nesting (NPY_MAX_DEPTH)
    checked before NumPy parses it; then the declared shape x itemsize against
    the bytes present after the header, and no object arrays."""
    import io

    import numpy as np
    where = f"{path}{what}"
    if not head.startswith(NPY_MAGIC) or len(head) < 10:
        raise CliError(f"{where}: not an .npy array (no \\x93NUMPY magic)")
    major, minor = head[6], head[7]
    if (major, minor) not in ((1, 0), (2, 0), (3, 0)):
        raise CliError(f"{where}: .npy version {major}.{minor} (NumPy writes 1.0, 2.0, 3.0)")
    if major == 1:
        (hlen,) = struct.unpack_from("<H", head, 8)
        start = 10
    else:
        if len(head) < 12:
            raise CliError(f"{where}: truncated .npy header")
        (hlen,) = struct.unpack_from("<I", head, 8)
        start = 12
    if hlen > NPY_MAX_HEADER:
        raise CliError(f"{where}: the .npy header is {hlen} bytes (at most {NPY_MAX_HEADER:,}, "
                       f"as np.load)")
    if start + hlen > min(present, len(head)):
        raise CliError(f"{where}: the .npy header ({hlen} bytes) runs past the end of the data")
    text = head[start:start + hlen]
    br = _PY_STRING.sub(b"''", text).translate(None, _NOT_PY_BRACKET)
    depth = best = 0
    for c in br:
        depth += 1 if c in b"[({" else -1
        best = max(best, depth)
    if best > NPY_MAX_DEPTH:
        raise CliError(f"{where}: the .npy header nests {best} deep (at most {NPY_MAX_DEPTH})")
    fh = io.BytesIO(head[:start + hlen])
    try:
        np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if major == 1 else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(fh, max_header_size=NPY_MAX_HEADER)
    except Exception as e:  # noqa: BLE001 - NumPy's parser, on a header within our bounds
        # (ValueError mostly; also tokenize.TokenError, SyntaxError, TypeError)
        raise CliError(f"{where}: the .npy header is not one NumPy reads ({e})") from None
    if dtype.hasobject:
        raise CliError(f"{where}: an array of Python objects (a pickle; not read)")
    # NumPy's header check takes any int, True and False included (bool is an
    # int in Python); a shape is a tuple of plain integers
    if not isinstance(shape, tuple) or not all(type(d) is int for d in shape):
        raise CliError(f"{where}: the .npy header's shape {shape!r} is not a tuple of integers")
    if any(d < 0 for d in shape):
        raise CliError(f"{where}: shape {tuple(shape)} has a negative dimension")
    if dims_overflow(shape):
        raise CliError(f"{where}: shape {tuple(shape)} overflows 64 bits")
    count = 1
    for d in shape:
        count *= d
    nbytes = count * dtype.itemsize
    have = present - start - hlen
    if nbytes > have:
        raise CliError(f"{where}: shape {tuple(shape)} of {dtype} is {nbytes:,} bytes; "
                       f"the file has {have:,} after its header")
    return shape, fortran, dtype, start + hlen


def check_npz(path: str, z: Any) -> None:
    """The members of the .npz file `path` (an open zipfile.ZipFile `z`),
    before NumPy reads one: each a NAME.npy, once; stored or deflated (what
    np.savez and np.savez_compressed write), not encrypted; its data inside
    the file, no more than ZIP_MAX_RATIO times its compressed size, and the
    members' data adding up to no more than the file (no overlapping members)."""
    import zipfile
    size = os.path.getsize(path)
    seen: set[str] = set()
    total = 0
    for info in z.infolist():
        where = f"{path}: member {info.filename!r}"
        if not info.filename.endswith(".npy"):
            raise CliError(f"{where} is not an .npy array (np.savez writes NAME.npy members)")
        if info.filename in seen:
            raise CliError(f"{where} appears twice")
        seen.add(info.filename)
        if info.flag_bits & 1:
            raise CliError(f"{where} is encrypted")
        if info.compress_type == zipfile.ZIP_STORED:
            if info.file_size != info.compress_size:
                raise CliError(f"{where}: stored, but {info.file_size} bytes declared over "
                               f"{info.compress_size}")
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            if info.file_size > ZIP_MAX_RATIO * info.compress_size + 64:
                raise CliError(f"{where}: {info.file_size:,} bytes declared over "
                               f"{info.compress_size:,} deflated (more than deflate's "
                               f"{ZIP_MAX_RATIO}:1)")
        else:
            raise CliError(f"{where}: compression method {info.compress_type} (np.savez "
                           f"stores, np.savez_compressed deflates)")
        if info.header_offset + info.compress_size > size:
            raise CliError(f"{where}: its data runs past the end of the file")
        total += info.compress_size
    if total > size:
        raise CliError(f"{path}: the members' data add up to {total:,} bytes, more than the "
                       f"file's {size:,} (overlapping members)")
