"""The formats `hurray convert`, `ls` and `diff` read and write (docs/reference/cli.md).

A *source* lists its tensors as `Entry`s from its header alone (names, types,
shapes, layouts, quantization, sizes); an entry's data is read when asked
for, one tensor at a time, into memory of its own that the caller drops once
written: converting holds one tensor at a time, whatever the checkpoint's
size. A *sink* plans the whole output from the entries first (so a tensor the
target cannot hold is refused before anything is written), then writes each
tensor as it comes, to a temporary file renamed over the target at the end.

Formats: .hrry (hurray.open / hurray.FileWriter), .safetensors (a single file,
or a Hugging Face model directory with model.safetensors.index.json; the
header is read and written here, the data with positioned reads), .gguf (the
header, KV and tensor infos read by _bounds.read_gguf, the data with positioned
reads; written with the gguf package's GGUFWriter; _gguf.py maps the types), PyTorch
checkpoints (.pt, .pth, .bin; torch.load(weights_only=True) only, mapped where
the checkpoint allows), .npy and .npz (NumPy's own format functions).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import _hurray
from .._hurray import Composite, Tensor
from ._bounds import ST_BITS, read_st_header  # noqa: F401 - ST_BITS: the dtype table
from ._errors import CliError, Refused
from ._urls import is_url, open_binary, open_hrry, url_path
from ._values import (FLOAT_TARGETS, NUMPY_NATIVE, aligned_empty, cast_float, data_bytes,
                      float_tensor, pack_codes, tensor_from_bytes, to_numpy, unpack_codes)

FORMATS = ("hrry", "safetensors", "gguf", "torch", "npy", "npz")
EXTENSIONS = {".hrry": "hrry", ".safetensors": "safetensors", ".gguf": "gguf", ".pt": "torch",
              ".pth": "torch", ".bin": "torch", ".npy": "npy", ".npz": "npz"}
INDEX_NAME = "model.safetensors.index.json"
DENSE_LAYOUTS = ("row_major", "col_major", "strided", "tiled", "morton", "hilbert")

# safetensors 0.8 dtype codes <-> hurray type names. bool is one byte per element in
# safetensors and one bit in hurray (repacked both ways); the sub-byte floats are
# the same bytes (two F4 per byte, element 0 in the low nibble, as
# torch.float4_e2m1fn_x2; four F6 in three bytes, LSB-first, as Hurray packs them).
ST_TO_HURRAY = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
    "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64",
    "F8_E4M3": "float8_e4m3", "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0",
    "F6_E2M3": "float6_e2m3", "F6_E3M2": "float6_e3m2", "F4": "float4_e2m1",
}
HURRAY_TO_ST = {v: k for k, v in ST_TO_HURRAY.items()}
# safetensors types hurray has no type for, and how to read their values (ml_dtypes)
ST_FOREIGN = {"F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz"}
GGUF_FLOAT = {"float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64"}


# ---- entries -----------------------------------------------------------------------

@dataclass
class Entry:
    """One tensor of a source, known from its header."""

    name: str
    dtype: str                    # hurray type name, or the source's own when foreign
    shape: tuple[int, ...]
    layout: str = "row_major"
    scheme: Any = None            # the hurray quantization scheme, or None
    nbytes: int = 0               # bytes of data in the source
    byte_offset: int = 0
    foreign: str | None = None    # "GGUF Q4_K": a type hurray cannot hold exactly
    composite: bool = False
    members: int = 0              # index entries of a composite (head included)
    view: Any = None              # (base name, hurray._shared.View) for a stored view
    load: Callable[[], Any] = field(default=lambda: None, repr=False)         # exact
    row_major: Callable[[], Any] | None = field(default=None, repr=False)
    values: Callable[[], Any] | None = field(default=None, repr=False)        # float32 (foreign)
    release: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def count(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def quantization(self) -> str | None:
        if self.foreign:
            return self.foreign
        if self.scheme is None:
            return None
        from ._gguf import describe_scheme
        return describe_scheme(self.scheme)

    def exact(self) -> Any:
        if self.foreign:
            raise Refused(f"{self.foreign} has no exact Hurray equivalent")
        return self.load()

    def dense(self) -> Tensor:
        """The tensor row-major, unquantized, byte_offset 0."""
        if self.foreign:
            raise Refused(f"{self.foreign} has no exact Hurray equivalent")
        if self.composite:
            raise Refused("a composite tensor (its members are separate tensors)")
        if self.layout not in DENSE_LAYOUTS:
            raise Refused(f"a {self.layout} tensor (sparse layouts have no dense equivalent "
                          f"in the target)")
        if self.scheme is not None:
            raise Refused(f"quantized as {self.quantization}")
        if self.layout == "row_major" and self.byte_offset == 0:
            return self.load()
        if self.row_major is not None:
            return self.row_major()
        t = self.load()
        arr = np.ascontiguousarray(np.asarray(t))
        return tensor_from_bytes(arr.reshape(-1).view(np.uint8), self.dtype, self.shape)

    def float_values(self, target: str) -> Tensor:
        """The tensor's values as the float type `target` (--dequantize)."""
        if self.foreign:
            if self.values is None:
                raise Refused(f"{self.foreign} cannot be dequantized here")
            return float_tensor(self.values(), target)
        if self.composite or self.layout not in DENSE_LAYOUTS:
            raise Refused(f"a {self.layout} tensor cannot be dequantized into a dense one")
        if self.scheme is None:
            return float_tensor(to_numpy(self.dense()), target)
        out = self.load().dequantize(target)  # hurray's own dequantizer, every scheme
        if out.layout.name != "row_major":
            out = tensor_from_bytes(np.ascontiguousarray(np.asarray(out)).reshape(-1)
                                    .view(np.uint8), target, self.shape)
        return out


def _shape(seq: Any) -> tuple[int, ...]:
    return tuple(int(n) for n in seq)


def _tensor_bytes(t: Any) -> int:
    """The bytes of the buffers of a tensor or descriptor (a composite: its members')."""
    if isinstance(t, Composite):
        return sum(_tensor_bytes(m) for m in t.members)
    return sum(h.byte_size for h in t.buffer_handles)


# ---- detection ---------------------------------------------------------------------

def detect(path: str, writing: bool = False) -> str:
    """The format of `path`, from its extension (or a directory of safetensors
    shards), else from its first bytes."""
    if os.path.isdir(path):
        if writing:
            raise CliError(f"{path}: is a directory; name the output file (model.hrry, "
                           f"model.safetensors, ...)")
        if os.path.exists(os.path.join(path, INDEX_NAME)) or any(
                n.endswith(".safetensors") for n in os.listdir(path)):
            return "safetensors"
        raise CliError(f"{path}: a directory without {INDEX_NAME} or .safetensors files")
    ext = os.path.splitext(path)[1].lower()
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if writing:
        raise CliError(f"{path}: unknown output format {ext or '(no extension)'!r}; use one of "
                       f"{', '.join(sorted(EXTENSIONS))}")
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as e:
        raise CliError(f"{path}: {e.strerror}") from None
    if head.startswith(b"HRRYFILE"):
        return "hrry"
    if head.startswith(b"GGUF"):
        return "gguf"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK"):
        import zipfile
        from ._bounds import ZIP_ERRORS
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except ZIP_ERRORS as e:
            raise CliError(f"{path}: a damaged zip file ({e})") from None
        return "npz" if names and all(n.endswith(".npy") for n in names) else "torch"
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    raise CliError(f"{path}: not a format hurray reads ({', '.join(FORMATS)})")


def open_source(path: str, *, data: bool = True) -> Any:
    if is_url(path):
        return _open_url_source(path, data)
    fmt = detect(path)
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    cls = {"hrry": HrrySource, "safetensors": SafetensorsSource, "gguf": GgufSource,
           "torch": TorchSource, "npy": NpySource, "npz": NpzSource}[fmt]
    return cls(path, data=data)


def _open_url_source(url: str, data: bool) -> Any:
    """A URL source: a .hrry file (read lazily by hurray.open), a .safetensors file
    or a sharded model's model.safetensors.index.json (its header, then one range per
    tensor as it is converted). Without one of those names, its first bytes say.
    A hurray:// URL is a server (hurray serve): its catalog lists the tensors."""
    if url[:9].lower() == "hurray://":
        return NetSource(url, data=data)
    name = url_path(url).rstrip("/")
    ext = os.path.splitext(name)[1].lower()
    if name.endswith(INDEX_NAME) or ext == ".safetensors":
        return SafetensorsSource(url, data=data)
    if ext == ".hrry":
        return HrrySource(url, data=data)
    if ext in EXTENSIONS:
        raise CliError(f"{url}: a {EXTENSIONS[ext]} file is read from local disk only; "
                       f"download it first (a URL source may be .hrry or .safetensors)")
    with open_binary(url) as fh:
        head = fh.read(16)
    if head.startswith(b"HRRYFILE"):
        return HrrySource(url, data=data)
    if len(head) >= 9 and head[8:9] == b"{":
        return SafetensorsSource(url, data=data)
    raise CliError(f"{url}: neither a .hrry nor a safetensors file (the formats read "
                   f"from a URL)")


class Source:
    format = ""

    def __init__(self, path: str, data: bool = True) -> None:
        self.path = path
        self.entries: list[Entry] = []
        self.kv: dict[str, Any] = {}
        self.gguf_types: dict[str, str] = {}
        self.gguf_version = 3
        self.kv_problems: list[str] = []

    def close(self) -> None:
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _pread_into(fh: Any, offset: int, nbytes: int) -> Any:
    buf = aligned_empty(nbytes)
    fh.seek(offset)
    view = memoryview(buf)
    got = 0
    while got < nbytes:
        n = fh.readinto(view[got:])
        if not n:
            raise CliError(f"{fh.name}: truncated (wanted {nbytes} bytes at {offset})")
        got += n
    return buf


# ---- .hrry ------------------------------------------------------------------------

class HrrySource(Source):
    format = "hrry"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        from .. import _files, _shared
        from . import _gguf
        from .. import _remote
        url = _remote.is_url(path)
        try:
            self.meta = open_hrry(path, mmap="r")
            # data: each tensor read into memory of its own (no mapping grows with
            # the file); meta: the descriptors, through a mapping nobody writes.
            # A URL is read lazily either way (the AWS_* variables for s3://)
            self.f = _files.open(path, mmap=False) if data and not url else self.meta
        except (OSError, ValueError) as e:
            raise CliError(f"{path}: {e}") from None
        # the user's KV (File.kv leaves out hurray's own records, and the converter
        # writes those it knows afresh)
        self.kv = {k: v for k, v in self.meta.kv.items() if not k.startswith(_hurray._KV_RESERVED_PREFIX)}
        record = (self.meta._kv_value(_gguf.RECORD_KEY) if url
                  else _hurray.load_kv(path).get(_gguf.RECORD_KEY))
        if record is not None:
            self.gguf_types = _gguf.read_record(record)
        views = _files._views_of(self.meta._views())
        skip: set[str] = set()
        # names, types, shapes and sizes from the descriptors alone (File.descriptor):
        # listing a file, local or at a URL, reads no tensor data
        for name in self.meta.keys():
            if name in skip:
                continue
            d = self.meta.descriptor(name)
            if d.layout.name == "composite":
                members, nbytes = self._members(name, d)
                skip.update(members)
                self.entries.append(Entry(
                    name, d.dtype.name, _shape(d.shape), "composite", composite=True,
                    nbytes=nbytes, members=len(members) + 1, load=self._loader(name)))
                continue
            v = views.get(name)
            layout = d.layout.name
            if v is not None and not v.same and _row_major_strides(v):
                layout = "row_major"  # a view that is a contiguous part of its base
            self.entries.append(Entry(
                name, d.dtype.name, _shape(s if s is not None else 0 for s in d.shape), layout,
                d.quantization, _tensor_bytes(d) if v is None else 0, d.byte_offset,
                view=(v.base, v) if v is not None else None, load=self._loader(name),
                row_major=self._row_major(name)))

    def _members(self, head: str, d: Any) -> tuple[list[str], int]:
        """The names of a composite's members, nested ones included (stored as
        "{head}.{i}"), and the bytes of their buffers, from their descriptors."""
        names: list[str] = []
        nbytes = 0
        for i in range(d.layout.member_count):
            n = f"{head}.{i}"
            m = self.meta.descriptor(n)
            names.append(n)
            if m.layout.name == "composite":
                sub, b = self._members(n, m)
                names += sub
                nbytes += b
            else:
                nbytes += _tensor_bytes(m)
        return names, nbytes

    def _loader(self, name: str) -> Callable[[], Any]:
        return lambda: self.f[name]

    def _row_major(self, name: str) -> Callable[[], Any]:
        return lambda: self.f.get_slice(name)[...]

    def close(self) -> None:
        self.f.close()
        self.meta.close()


# ---- hurray:// (a server) ------------------------------------------------------------

class NetSource(Source):
    """The tensors a hurray server serves: names, types and shapes from its catalog
    (one request), each tensor fetched when it is loaded."""
    format = "hurray server"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        from .. import _net
        try:
            self.c = _net.connect(path)
            descs = self.c.descriptors()
        except (OSError, ValueError) as e:
            if getattr(self, "c", None) is not None:
                self.c.close()
            raise CliError(f"{path}: {e}") from None
        for name, d in descs.items():
            self.entries.append(Entry(
                name, d.dtype.name, _shape(s if s is not None else 0 for s in d.shape),
                d.layout.name, d.quantization,
                sum(h.byte_size for h in d.buffer_handles), d.byte_offset,
                load=self._loader(name)))

    def _loader(self, name: str) -> Callable[[], Any]:
        return lambda: self.c[name]

    def close(self) -> None:
        self.c.close()


def _row_major_strides(v: Any) -> bool:
    item = _hurray.Dtype.from_name(v.dtype).itemsize or 0
    step = item
    for n, st in zip(reversed(v.shape), reversed(v.byte_strides)):
        if n != 1 and st != step:
            return False
        step *= n
    return True


class HrrySink:
    """Writes a .hrry file through hurray.FileWriter, one tensor at a time."""

    def __init__(self, path: str, src: Source, dequantize: str | None, drop_kv: bool) -> None:
        from . import _gguf
        self.plan: list[tuple[Entry, str]] = []
        written = set()
        views = {}
        for e in src.entries:
            if e.view is not None and e.view[0] in written:
                views[e.name] = e.view[1]
                continue
            mode = "exact"
            if e.foreign:
                if dequantize is None:
                    raise Refused(f"tensor {e.name!r}: {e.foreign} has no exact Hurray "
                                  f"equivalent; --dequantize float32 (or float16, bfloat16, "
                                  f"float64) converts it")
                mode = "float"
            self.plan.append((e, mode))
            written.add(e.name)
        if src.kv_problems and not drop_kv:
            raise Refused(src.kv_problems[0] + "; --drop-kv leaves such entries out")
        self.dequantize = dequantize
        self.path = path
        self.kv = src.kv
        self.views = views
        self.gguf = _gguf.record(src.gguf_types, src.gguf_version) if src.gguf_types else None
        self.w: Any = None

    def start(self) -> None:
        from .._writer import FileWriter
        from . import _gguf
        with writing(self.path):
            self.w = FileWriter(self.path, kv=self.kv)
        if self.views:
            self.w._add_views(self.views)
        if self.gguf is not None:
            self.w._add_raw_kv(_gguf.RECORD_KEY, self.gguf)

    def write(self, e: Entry, mode: str) -> None:
        t = e.exact() if mode == "exact" else e.float_values(self.dequantize or "float32")
        with writing(self.path):
            self.w.write(e.name, t)

    def finish(self) -> None:
        with writing(self.path):
            self.w.finish()

    def abort(self) -> None:
        if self.w is not None:
            self.w.abort()


# ---- atomic files for the other targets ------------------------------------------

TEMP_DIGITS = "abcdefghijklmnopqrstuvwxyz234567"
TEMP_MARK = ".tmp-"


def temporary_name(path: str) -> str:
    """A fresh temporary name for `path`: `.<name>.tmp-XXXXXX` in its folder, six
    letters of a-z2-7 (the name the .hrry writer gives its own named
    temporaries, and the one hurray.remove_stale_temporaries recognises)."""
    import secrets
    d = os.path.dirname(os.path.abspath(path))
    suffix = "".join(secrets.choice(TEMP_DIGITS) for _ in range(6))
    return os.path.join(d, f".{os.path.basename(path)}{TEMP_MARK}{suffix}")


class AtomicFile:
    """The file a non-.hrry target is written to: a temporary `.<name>.tmp-XXXXXX`
    beside `path` (temporary_name), created exclusively and held open (POSIX:
    with an flock, as the .hrry writer holds its own) until commit() renames it
    over `path` (after an fsync of the file, then of the folder) or abort()
    removes it. A process killed meanwhile leaves the temporary, unlocked,
    which hurray.remove_stale_temporaries removes; the target is always the
    old file or the complete new one. Every failure is a CliError naming
    `path`, and leaves no temporary behind."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.done = False
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | \
            getattr(os, "O_BINARY", 0)
        for _ in range(64):
            self.tmp = temporary_name(path)
            try:
                self.fd = os.open(self.tmp, flags, 0o666)
                break
            except FileExistsError:
                continue
            except OSError as e:
                raise write_error(path, e, "creating its temporary file") from None
        else:
            raise CliError(f"{path}: no free temporary name beside it")
        try:
            import fcntl
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (ImportError, OSError):
            pass  # a hint only (as the .hrry writer's): the age still protects it

    def commit(self) -> None:
        """Renames the complete temporary over the target; on failure removes it
        and raises CliError."""
        try:
            os.fsync(self.fd)
            if os.name == "nt":
                self._close()  # Windows renames no file a handle holds open
            os.replace(self.tmp, self.path)
        except OSError as e:
            self.abort()
            raise write_error(self.path, e) from None
        self.done = True
        self._close()
        if hasattr(os, "O_DIRECTORY"):
            try:
                fd = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_DIRECTORY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError:
                pass  # renamed: as durable as the file system makes a rename

    def _close(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1

    def abort(self) -> None:
        """Removes the temporary (never raises; the target is untouched)."""
        self._close()
        if not self.done:
            self.done = True
            try:
                os.unlink(self.tmp)
            except OSError:
                pass


def write_error(path: str, e: BaseException | str, doing: str = "writing",
                tmp: str | None = None) -> CliError:
    """The one-line error of a failed write to `path`: 'PATH: writing: File too
    large'. A writer that reports a short write without an errno (NumPy's
    tofile, torch's zip writer) gets the reason the system would have given,
    when the file being written (`tmp`) has reached the file size limit or its
    disk is full, followed by the writer's own words."""
    why = e if isinstance(e, str) else \
        getattr(e, "strerror", None) or str(e) or type(e).__name__
    if isinstance(e, str) or getattr(e, "errno", None) in (None, 0):
        errno_ = _full(tmp)
        if errno_:
            why = f"{os.strerror(errno_)} ({why})"
    return CliError(f"{path}: {doing}: {why}")


def _full(tmp: str | None) -> int:
    """EFBIG when `tmp` has reached RLIMIT_FSIZE, ENOSPC when its disk has no
    block left, else 0."""
    import errno
    if tmp is None:
        return 0
    try:
        size = os.stat(tmp).st_size
        import resource
        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY and size >= soft - (64 << 10):
            return errno.EFBIG
        st = os.statvfs(tmp)
        if st.f_bavail * st.f_frsize < (1 << 20):
            return errno.ENOSPC
    except (ImportError, OSError, AttributeError):
        pass
    return 0


@contextlib.contextmanager
def writing(path: str, file: AtomicFile | None = None) -> Any:
    """Turns a failed write to `path` (a full disk, RLIMIT_FSIZE, a lost mount)
    into the one-line CliError naming it (`file`: its temporary, see
    write_error)."""
    try:
        yield
    except OSError as e:
        raise write_error(path, e, tmp=file.tmp if file is not None else None) from None


def _torch_write_error(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return msg[-1][:200] if msg else "torch.save failed"


def close_quietly(fh: Any) -> None:
    """Closes a writer's file on the way out of a failure (a close that flushes
    into a full disk raises again, which must not stop the cleanup)."""
    try:
        fh.close()
    except Exception:
        pass


def _string_kv(kv: dict[str, Any], target: str, drop_kv: bool, src: Source) -> dict[str, str]:
    if src.kv_problems and not drop_kv:
        raise Refused(src.kv_problems[0] + "; --drop-kv leaves such entries out")
    out = {}
    for k, v in kv.items():
        if isinstance(v, str):
            out[k] = v
        elif not drop_kv:
            raise Refused(f"kv[{k!r}] is of type {type(v).__name__}; {target} metadata holds strings "
                          f"only (--drop-kv leaves such entries out)")
    return out


def _no_kv(kv: dict[str, Any], target: str, drop_kv: bool, src: Source) -> None:
    if kv and not drop_kv:
        k = next(iter(kv))
        raise Refused(f"kv[{k!r}]: {target} files hold no metadata ({len(kv)} KV entries; "
                      f"--drop-kv leaves them out)")


def _plan_dense(e: Entry, allowed: Any, target: str, dequantize: str | None,
                extra: str = "") -> str:
    """'exact' or 'float' for a tensor of a dense target with the types `allowed`."""
    reason = None
    if e.composite:
        reason = "a composite tensor (its members are separate tensors)"
    elif e.layout not in DENSE_LAYOUTS:
        reason = f"a {e.layout} tensor: {target} has no sparse layouts"
    elif e.foreign:
        reason = f"{e.foreign} has no {target} equivalent"
    elif e.scheme is not None:
        reason = f"quantized as {e.quantization}: {target} has no quantized tensors"
    elif e.dtype not in allowed:
        reason = f"{target} has no {e.dtype} type{extra}"
    if reason is None:
        return "exact"
    if dequantize is None or e.composite or e.layout not in DENSE_LAYOUTS:
        hint = "" if e.composite or e.layout not in DENSE_LAYOUTS else \
            "; --dequantize float32 (or float16, bfloat16, float64) converts it"
        raise Refused(f"tensor {e.name!r}: {reason}{hint}")
    if dequantize not in allowed:
        raise Refused(f"tensor {e.name!r}: {target} has no {dequantize} type")
    return "float"


# ---- .safetensors ---------------------------------------------------------------

def _index_files(idx: str) -> list[str]:
    """The shard file names of a model.safetensors.index.json, in order: its
    weight_map maps tensor names to file names in the same folder."""
    from ._bounds import ST_MAX_HEADER, load_json
    try:
        with open_binary(idx) as fh:
            raw = fh.read(ST_MAX_HEADER + 1)
    except OSError as e:
        raise CliError(f"{idx}: {e.strerror or e}") from None
    if len(raw) > ST_MAX_HEADER:
        raise CliError(f"{idx}: larger than {ST_MAX_HEADER:,} bytes: not a safetensors index")
    doc = load_json(idx, raw, "the index")
    wm = doc.get("weight_map") if isinstance(doc, dict) else None
    if not isinstance(wm, dict):
        raise CliError(f"{idx}: not a safetensors index (no weight_map object)")
    for name, f in wm.items():
        if not isinstance(f, str) or not f or f != os.path.basename(f) or f in (".", "..") \
                or "\\" in f or "/" in f:
            raise CliError(f"{idx}: weight_map[{name!r}] is {f!r}, not a file name in the "
                           f"model's folder")
    return list(dict.fromkeys(wm.values()))


class SafetensorsSource(Source):
    format = "safetensors"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        if os.path.isdir(path):
            idx = os.path.join(path, INDEX_NAME)
            if os.path.exists(idx):
                files = _index_files(idx)
            else:
                files = sorted(n for n in os.listdir(path) if n.endswith(".safetensors"))
            paths = [os.path.join(path, f) for f in files]
        elif is_url(path) and url_path(path).endswith(INDEX_NAME):
            base = path.split("?", 1)[0].rsplit("/", 1)[0]
            paths = [f"{base}/{f}" for f in _index_files(path)]
        else:
            paths = [path]
        self._handles: dict[str, Any] = {}
        seen: dict[str, str] = {}
        for p in paths:
            hdr, meta, start = read_st_header(p)
            for k, v in meta.items():
                if k in self.kv and self.kv[k] != v:
                    raise CliError(f"{p}: __metadata__[{k!r}] is {v!r}, another shard says "
                                   f"{self.kv[k]!r}")
                self.kv[k] = v
            for name, info in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"][0]):
                if name in seen:
                    raise CliError(f"{p}: tensor {name!r} is also in {seen[name]}")
                seen[name] = p
                dt = info["dtype"]
                shape = _shape(info["shape"])
                off = start + int(info["data_offsets"][0])
                nbytes = int(info["data_offsets"][1]) - int(info["data_offsets"][0])
                hname = ST_TO_HURRAY.get(dt)
                self.entries.append(Entry(
                    name, hname or dt, shape, nbytes=nbytes,
                    foreign=None if hname else f"safetensors {dt}",
                    load=self._loader(p, off, nbytes, dt, shape, name),
                    values=self._values(p, off, nbytes, dt, shape)))

    def _fh(self, p: str) -> Any:
        fh = self._handles.get(p)
        if fh is None:
            try:
                fh = self._handles[p] = open_binary(p)
            except OSError as e:
                raise CliError(f"{p}: {e.strerror or e}") from None
        return fh

    def _loader(self, p: str, off: int, nbytes: int, dt: str, shape: tuple[int, ...],
                name: str) -> Callable[[], Any]:
        def load() -> Any:
            buf = _pread_into(self._fh(p), off, nbytes)
            if dt == "BOOL":
                if buf.size and buf.max() > 1:
                    raise Refused(f"tensor {name!r}: a BOOL byte is {int(buf.max())}, not 0 or 1")
                return tensor_from_bytes(pack_codes(buf, 1), "bool", shape)
            if dt == "F8_E8M0":
                _check_e8m0(buf)
            return tensor_from_bytes(buf, ST_TO_HURRAY[dt], shape)
        return load

    def _values(self, p: str, off: int, nbytes: int, dt: str,
                shape: tuple[int, ...]) -> Callable[[], Any] | None:
        if dt not in ST_FOREIGN:
            return None

        def values() -> Any:
            import ml_dtypes
            buf = _pread_into(self._fh(p), off, nbytes)
            return buf.view(getattr(ml_dtypes, ST_FOREIGN[dt])).astype(np.float32).reshape(shape)
        return values

    def close(self) -> None:
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()


def _check_e8m0(raw: Any) -> None:
    """Hurray's float8_e8m0 reserves the bytes 0x00 and 0xFF (the specification's
    element-types.md: a reader treats a tensor holding them as invalid)."""
    bad = np.flatnonzero((raw == 0) | (raw == 255))
    if bad.size:
        i = int(bad[0])
        raise Refused(f"element {i} is the byte 0x{int(raw[i]):02x}, which Hurray's float8_e8m0 "
                      f"reserves (0x00 and 0xFF; {bad.size} such elements)")


class SafetensorsSink:
    """Writes one .safetensors file: the header from the plan, then each
    tensor's bytes in order."""

    def __init__(self, path: str, src: Source, dequantize: str | None, drop_kv: bool) -> None:
        self.dequantize = dequantize
        meta = _string_kv(src.kv, "safetensors", drop_kv, src)
        self.plan: list[tuple[Entry, str]] = []
        header: dict[str, Any] = {}
        if meta:
            header["__metadata__"] = meta
        offset = 0
        for e in src.entries:
            mode = _plan_dense(e, HURRAY_TO_ST, "safetensors", dequantize,
                               " (it has " + ", ".join(HURRAY_TO_ST) + ")")
            dt = e.dtype if mode == "exact" else dequantize or ""
            bits = _hurray.Dtype.from_name(dt).bit_width or 0
            n = e.count * (8 if dt == "bool" else bits)
            if n % 8:
                raise Refused(f"tensor {e.name!r}: {e.count} {dt} elements are not a whole "
                              f"number of bytes, which safetensors requires")
            header[e.name] = {"dtype": HURRAY_TO_ST[dt], "shape": list(e.shape),
                              "data_offsets": [offset, offset + n // 8]}
            offset += n // 8
            self.plan.append((e, mode))
        text = json.dumps(header, separators=(",", ":")).encode()
        self.text = text + b" " * (-len(text) % 8)
        self.path = path
        self.file: AtomicFile | None = None
        self.fh: Any = None

    def start(self) -> None:
        self.file = AtomicFile(self.path)
        with writing(self.path, self.file):
            self.fh = open(self.file.tmp, "wb")
            self.fh.write(struct.pack("<Q", len(self.text)) + self.text)

    def write(self, e: Entry, mode: str) -> None:
        t = e.dense() if mode == "exact" else e.float_values(self.dequantize or "float32")
        raw = data_bytes(t)
        if t.dtype.name == "bool":
            raw = unpack_codes(raw, "bool", e.count)
        with writing(self.path, self.file):
            self.fh.write(np.ascontiguousarray(raw).data)

    def finish(self) -> None:
        assert self.file is not None
        with writing(self.path, self.file):
            self.fh.close()
        self.file.commit()

    def abort(self) -> None:
        if self.fh is not None:
            close_quietly(self.fh)
        if self.file is not None:
            self.file.abort()


# ---- .gguf ------------------------------------------------------------------------

class GgufSource(Source):
    format = "gguf"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        from . import _gguf
        from ._bounds import read_gguf
        # the header, KV and tensor infos read by our own bounded reader (_bounds.py:
        # gguf.GGUFReader's cost grows with each array element); the tensors with pread
        h = read_gguf(path)
        self.kv, self.gguf_types, self.kv_problems = h.kv, h.types, h.problems
        self.gguf_version = h.version
        for t in h.tensors:
            qtype = t.qtype
            shape = tuple(reversed(t.dims))
            dtype = _gguf.DENSE.get(qtype) or _gguf.BLOCK_TYPES.get(qtype) or qtype
            exact = qtype in _gguf.DENSE or qtype in _gguf.BLOCK_TYPES
            self.entries.append(Entry(
                t.name, dtype, shape,
                scheme=_gguf.scheme_for(qtype, len(shape)) if qtype in _gguf.BLOCK_TYPES else None,
                nbytes=t.n_bytes, foreign=None if exact else f"GGUF {qtype}",
                load=self._loader(qtype, t.data_offset, t.n_bytes, shape, t.name),
                values=self._values(qtype, t.data_offset, t.n_bytes, shape)))
        self._fh: Any = None

    def _read(self, off: int, nbytes: int) -> Any:
        if self._fh is None:
            self._fh = open(self.path, "rb")
        return _pread_into(self._fh, off, nbytes)

    def _loader(self, qtype: str, off: int, nbytes: int, shape: tuple[int, ...],
                name: str) -> Callable[[], Any]:
        from . import _gguf

        def load() -> Any:
            try:
                return _gguf.to_hurray(qtype, self._read(off, nbytes), shape, name)
            except Refused as e:
                raise Refused(f"tensor {name!r}: {e}; --dequantize float32 converts it") from None
        return load

    def _values(self, qtype: str, off: int, nbytes: int,
                shape: tuple[int, ...]) -> Callable[[], Any]:
        from . import _gguf
        return lambda: _gguf.dequantize(qtype, self._read(off, nbytes), shape)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


class GgufSink:
    """Writes a .gguf file with gguf's GGUFWriter: tensor infos from the plan,
    then each tensor's bytes as it comes (GGUFWriter.write_tensor_data)."""

    def __init__(self, path: str, src: Source, dequantize: str | None, drop_kv: bool) -> None:
        import gguf
        from . import _gguf
        if src.kv_problems and not drop_kv:
            raise Refused(src.kv_problems[0] + "; --drop-kv leaves such entries out")
        self.dequantize = dequantize
        self.plan: list[tuple[Entry, str]] = []
        self.types: dict[str, str] = {}
        infos = []
        for e in src.entries:
            mode = "exact"
            try:
                if e.foreign:
                    raise Refused(f"{e.foreign} has no exact Hurray equivalent")
                if e.composite:
                    raise Refused("a composite tensor (its members are separate tensors)")
                if e.layout not in DENSE_LAYOUTS:
                    raise Refused(f"a {e.layout} tensor: GGUF has no sparse layouts")
                layout = "row_major" if e.scheme is None else e.layout
                qtype = _gguf.exact_type(e.dtype, layout, e.scheme, e.shape, e.byte_offset)
            except Refused as r:
                if dequantize is None or e.composite or e.layout not in DENSE_LAYOUTS:
                    raise Refused(f"tensor {e.name!r}: {r}" + (
                        "; --dequantize float32 (or float16, bfloat16, float64) converts it"
                        if not e.composite else "")) from None
                mode = "float"
                qtype = GGUF_FLOAT[dequantize]
            self.types[e.name] = qtype
            self.plan.append((e, mode))
            infos.append((e, qtype))
        arch = src.kv.get("general.architecture")
        self.path = path
        self.file: AtomicFile | None = None
        # the whole header planned in memory (no file yet: a refusal writes nothing)
        self.w = gguf.GGUFWriter(None, arch if isinstance(arch, str) else "")
        try:
            _gguf.write_kv(self.w, src.kv, src.gguf_types)
        except Refused:
            if not drop_kv:
                raise
            kv = {}
            for k, v in src.kv.items():
                try:
                    _gguf.gguf_value(k, v, src.gguf_types.get(k))
                    kv[k] = v
                except Refused:
                    pass
            _gguf.write_kv(self.w, kv, src.gguf_types)
        align = src.kv.get("general.alignment")
        if isinstance(align, int) and align > 0:
            self.w.data_alignment = align
        for e, qtype in infos:
            qt = gguf.GGMLQuantizationType[qtype]
            if qtype in _gguf.BLOCK_TYPES:
                shape = _gguf.raw_shape_for(qtype, e.shape)
                self.w.add_tensor_info(e.name, shape, np.dtype(np.uint8),
                                       _gguf_nbytes(qtype, e.count), raw_dtype=qt)
            else:
                self.w.add_tensor_info(e.name, e.shape, np.dtype(np.float32),
                                       _gguf_nbytes(qtype, e.count), raw_dtype=qt)

    def start(self) -> None:
        from pathlib import Path
        self.file = AtomicFile(self.path)
        with writing(self.path, self.file):
            self.w.write_header_to_file(Path(self.file.tmp))
            self.w.write_kv_data_to_file()
            self.w.write_ti_data_to_file()

    def write(self, e: Entry, mode: str) -> None:
        from . import _gguf
        qtype = self.types[e.name]
        if mode == "exact":
            t = e.dense() if e.scheme is None else e.exact()
            raw = _gguf.to_gguf(t, qtype)
        else:
            raw = data_bytes(e.float_values(self.dequantize or "float32"))
        with writing(self.path, self.file):
            self.w.write_tensor_data(np.ascontiguousarray(raw))

    def finish(self) -> None:
        assert self.file is not None
        with writing(self.path, self.file):
            self.w.close()
        self.file.commit()

    def abort(self) -> None:
        for fh in self.w.fout or []:
            close_quietly(fh)
        self.w.fout = None
        if self.file is not None:
            self.file.abort()


def _gguf_nbytes(qtype: str, count: int) -> int:
    import gguf
    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[qtype]]
    return count // block * size


# ---- PyTorch checkpoints --------------------------------------------------------

def _release_pages(x: Any) -> None:
    """Drops the pages of a mapped torch tensor's storage from this process
    (Linux: madvise MADV_DONTNEED on a clean private file mapping, which the
    kernel re-reads from the file if touched again): keeps the resident set of
    a streamed conversion at one tensor."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import mmap as _mmap
        st = x.untyped_storage()
        addr, n = st.data_ptr(), st.nbytes()
        page = _mmap.PAGESIZE
        lo = (addr + page - 1) // page * page
        hi = (addr + n) // page * page
        if hi > lo:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), 4)  # MADV_DONTNEED
    except Exception:
        pass


class TorchSource(Source):
    format = "torch"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        import torch
        from .. import _files, _shared
        self.mapped = True
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as e:
            if "mmap" not in str(e):
                raise CliError(f"{path}: {e}") from None
            self.mapped = False  # a legacy (non-zip) checkpoint cannot be mapped
            try:
                obj = torch.load(path, map_location="cpu", weights_only=True)
            except Exception as e2:
                raise CliError(f"{path}: torch.load(weights_only=True) refused it: "
                               f"{e2}") from None
        except Exception as e:  # weights_only refuses anything but tensors and containers
            raise CliError(f"{path}: torch.load(weights_only=True) refused it: {e}") from None
        flat: dict[str, Any] = {}
        problems: list[str] = []
        _flatten(obj, "", flat, problems)
        if problems:
            raise CliError(f"{path}: {problems[0]}; hurray convert takes state dicts (names to "
                           f"tensors, nested dicts joined with '.')")
        names = list(flat)
        objects = [flat[n] for n in names]
        mems = [_files.memory(x) if x.dtype != getattr(torch, "float4_e2m1fn_x2", None)
                else None for x in objects]
        try:
            stored, views = _shared.plan(names, objects, mems)
        except ValueError as e:
            raise Refused(str(e)) from None
        self._tensors = flat
        for n in names:
            x = flat[n]
            dt, shape = _torch_dtype(x)
            layout = "row_major" if x.is_contiguous() else "strided"
            v = views.get(n)
            self.entries.append(Entry(
                n, dt, shape, layout, nbytes=0 if v is not None else x.numel() * x.element_size(),
                foreign=None if _hurray_has(dt) else f"torch {x.dtype}",
                view=(v.base, v) if v is not None else None,
                load=self._loader(n), row_major=self._row_major(n),
                values=_float_of(x) if not _hurray_has(dt) else None,
                release=_releaser(x) if self.mapped else None))

    def _loader(self, name: str) -> Callable[[], Any]:
        from .. import _files

        def load() -> Any:
            x = self._tensors[name]
            if str(x.dtype) == "torch.float4_e2m1fn_x2":
                raw = x.contiguous().view(__import__("torch").uint8).numpy().reshape(-1)
                return tensor_from_bytes(raw, "float4_e2m1", _torch_dtype(x)[1])
            if str(x.dtype) == "torch.float8_e8m0fnu":
                _check_e8m0(x.contiguous().view(__import__("torch").uint8).numpy().reshape(-1))
            return _files.to_tensor(x, name, "convert")
        return load

    def _row_major(self, name: str) -> Callable[[], Any]:
        from .. import _files
        return lambda: _files.to_tensor(self._tensors[name].contiguous(), name, "convert")

    def close(self) -> None:
        self._tensors = {}


def _float_of(x: Any) -> Callable[[], Any]:
    return lambda: x.float().numpy()


def _releaser(x: Any) -> Callable[[], None]:
    return lambda: _release_pages(x)


def _flatten(obj: Any, prefix: str, out: dict[str, Any], problems: list[str]) -> None:
    import torch
    from collections.abc import Mapping
    if isinstance(obj, torch.Tensor):
        out[prefix] = obj
        return
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            _flatten(v, key, out, problems)
        return
    problems.append(f"{prefix or 'the checkpoint'!r} is a {type(obj).__name__}, not a tensor")


def _torch_dtype(x: Any) -> tuple[str, tuple[int, ...]]:
    shape = _shape(x.shape)
    if str(x.dtype) == "torch.float4_e2m1fn_x2":
        return "float4_e2m1", (*shape[:-1], shape[-1] * 2) if shape else (2,)
    try:
        return _hurray.Dtype.of(x.dtype).name, shape
    except Exception:
        return str(x.dtype).replace("torch.", ""), shape


def _hurray_has(name: str) -> bool:
    try:
        _hurray.Dtype.from_name(name)
        return True
    except Exception:
        return False


class TorchSink:
    """torch.save of a state dict (the whole dict is in memory when saved:
    torch.save takes a dict). Views of shared tensors share their base's storage."""

    def __init__(self, path: str, src: Source, dequantize: str | None, drop_kv: bool) -> None:
        import torch
        _no_kv(src.kv, "PyTorch checkpoint", drop_kv, src)
        self.dequantize = dequantize
        allowed = {"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
                   "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                   "complex128", "float8_e4m3", "float8_e5m2", "float8_e8m0"}
        if hasattr(torch, "float4_e2m1fn_x2"):
            allowed.add("float4_e2m1")
        self.plan = [(e, _plan_dense(e, allowed, "PyTorch", dequantize)) for e in src.entries]
        for e, mode in self.plan:
            if mode == "exact" and e.dtype == "float4_e2m1" and (not e.shape or e.shape[-1] % 2):
                raise Refused(f"tensor {e.name!r}: torch.float4_e2m1fn_x2 holds pairs; the last "
                              f"dimension {e.shape[-1] if e.shape else 0} is odd")
        self.out: dict[str, Any] = {}
        self.path = path

    def write(self, e: Entry, mode: str) -> None:
        import torch
        if e.view is not None and mode == "exact" and e.view[0] in self.out:
            base, v = e.view
            b = self.out[base]
            if v.same:
                self.out[e.name] = b
                return
            item = b.element_size()
            if v.dtype == e.dtype and all(s % item == 0 for s in v.byte_strides) \
                    and v.byte_offset % item == 0 and all(s >= 0 for s in v.byte_strides):
                self.out[e.name] = torch.as_strided(
                    b, v.shape, [s // item for s in v.byte_strides],
                    b.storage_offset() + v.byte_offset // item)
                return
        t = e.dense() if mode == "exact" else e.float_values(self.dequantize or "float32")
        name = t.dtype.name
        if name == "float4_e2m1":
            raw = torch.from_numpy(np.array(data_bytes(t)))
            self.out[e.name] = raw.view(torch.float4_e2m1fn_x2).reshape(
                *e.shape[:-1], e.shape[-1] // 2)
        elif name in NUMPY_NATIVE:
            self.out[e.name] = torch.from_numpy(np.array(to_numpy(t)))
        else:
            raw = torch.from_numpy(np.array(data_bytes(t)))
            tdt: Any = {"bfloat16": torch.bfloat16, "float8_e4m3": torch.float8_e4m3fn,
                        "float8_e5m2": torch.float8_e5m2,
                        "float8_e8m0": getattr(torch, "float8_e8m0fnu", None)}[name]
            self.out[e.name] = raw.view(tdt).reshape(e.shape)

    def start(self) -> None:
        pass

    def finish(self) -> None:
        import torch
        f = AtomicFile(self.path)
        try:
            with writing(self.path):
                try:
                    torch.save(self.out, f.tmp)
                except RuntimeError as e:  # how torch's zip writer reports a failed write
                    raise write_error(self.path, _torch_write_error(e), tmp=f.tmp) from None
            f.commit()
        finally:
            f.abort()

    def abort(self) -> None:
        self.out = {}


# ---- NumPy ------------------------------------------------------------------------

NUMPY_OK = set(NUMPY_NATIVE)


def _np_entry(name: str, arr: Any, load: Callable[[], Any]) -> Entry:
    try:
        dt = _hurray.Dtype.of(arr.dtype).name
        foreign = None if dt in NUMPY_OK else f"NumPy {arr.dtype}"
    except Exception:
        dt, foreign = str(arr.dtype), f"NumPy {arr.dtype}"
    layout = "row_major" if arr.flags.c_contiguous or arr.ndim < 2 else \
        "col_major" if arr.flags.f_contiguous else "strided"
    return Entry(name, dt, _shape(arr.shape), layout, nbytes=int(arr.nbytes), foreign=foreign,
                 load=load, values=None)


class NpySource(Source):
    format = "npy"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        from ._bounds import NPY_MAX_HEADER, npy_header
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                npy_header(path, fh.read(12 + NPY_MAX_HEADER), size)  # before NumPy parses it
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
        except (ValueError, OSError) as e:
            raise CliError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
        name = os.path.splitext(os.path.basename(path))[0]
        self._arr = arr
        self.entries.append(_np_entry(name, arr, lambda: _hurray.from_numpy(
            np.array(self._arr, order="K"))))


class NpzSource(Source):
    format = "npz"

    def __init__(self, path: str, data: bool = True) -> None:
        super().__init__(path)
        import zipfile
        from ._bounds import NPY_MAX_HEADER, ZIP_ERRORS, check_npz, npy_header
        try:
            zf = zipfile.ZipFile(path)
        except ZIP_ERRORS as e:
            raise CliError(f"{path}: not a zip file ({getattr(e, 'strerror', None) or e})") \
                from None
        try:
            check_npz(path, zf)  # before NumPy or zipfile reads a member
            for info in zf.infolist():
                # the header only: shape and dtype without reading the array
                with zf.open(info) as fh:
                    head = fh.read(12 + NPY_MAX_HEADER)
                name = info.filename[:-4]
                shape, fortran, dtype, _ = npy_header(path, head, info.file_size,
                                                      f": member {info.filename!r}")
                probe = np.empty((0,), dtype=dtype)
                ent = _np_entry(name, probe, self._loader(name))
                ent.shape = _shape(shape)
                ent.nbytes = _count(shape) * dtype.itemsize
                ent.layout = "col_major" if fortran and len(shape) > 1 else "row_major"
                self.entries.append(ent)
            self.z = np.load(path, allow_pickle=False)
        except ZIP_ERRORS as e:
            raise CliError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
        finally:
            zf.close()

    def _loader(self, name: str) -> Callable[[], Any]:
        from ._bounds import ZIP_ERRORS

        def load() -> Any:
            try:
                arr = self.z[name]
            except ZIP_ERRORS as e:
                raise CliError(f"{self.path}: member {name + '.npy'!r}: "
                               f"{getattr(e, 'strerror', None) or e}") from None
            return _hurray.from_numpy(arr)
        return load

    def close(self) -> None:
        self.z.close()


def _count(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _np_array(e: Entry, mode: str, dequantize: str | None) -> Any:
    if mode == "float":
        return to_numpy(e.float_values(dequantize or "float32"))
    if e.layout == "col_major" and e.dtype != "bool" and e.scheme is None:
        return np.asarray(e.load())  # F order, kept as NumPy keeps it
    return to_numpy(e.dense())


class NpySink:
    def __init__(self, path: str, src: Source, dequantize: str | None, drop_kv: bool) -> None:
        _no_kv(src.kv, ".npy", drop_kv, src)
        if len(src.entries) != 1:
            raise Refused(f"a .npy file holds one array; {src.path} has {len(src.entries)} "
                          f"tensors (write a .npz)")
        self.dequantize = dequantize
        self.plan = [(e, _plan_dense(e, NUMPY_OK, "NumPy", dequantize)) for e in src.entries]
        self.path = path
        self.file: AtomicFile | None = None

    def start(self) -> None:
        self.file = AtomicFile(self.path)

    def write(self, e: Entry, mode: str) -> None:
        assert self.file is not None
        arr = _np_array(e, mode, self.dequantize)
        with writing(self.path, self.file):
            fh = open(self.file.tmp, "wb")
            try:
                np.lib.format.write_array(fh, arr, allow_pickle=False)
            except BaseException:
                close_quietly(fh)
                raise
            fh.close()

    def finish(self) -> None:
        assert self.file is not None
        self.file.commit()

    def abort(self) -> None:
        if self.file is not None:
            self.file.abort()


class NpzSink:
    """np.savez's layout (one NAME.npy member per array, stored), written one
    array at a time."""

    def __init__(self, path: str, src: Source, dequantize: str | None, drop_kv: bool) -> None:
        import zipfile
        _no_kv(src.kv, ".npz", drop_kv, src)
        self.dequantize = dequantize
        self.plan = [(e, _plan_dense(e, NUMPY_OK, "NumPy", dequantize)) for e in src.entries]
        self.path = path
        self.file: AtomicFile | None = None
        self.z: Any = None

    def start(self) -> None:
        import zipfile
        self.file = AtomicFile(self.path)
        with writing(self.path):
            self.z = zipfile.ZipFile(self.file.tmp, "w", compression=zipfile.ZIP_STORED,
                                     allowZip64=True)

    def write(self, e: Entry, mode: str) -> None:
        arr = _np_array(e, mode, self.dequantize)
        with writing(self.path, self.file):
            with self.z.open(e.name + ".npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)

    def finish(self) -> None:
        assert self.file is not None
        with writing(self.path, self.file):
            self.z.close()
        self.file.commit()

    def abort(self) -> None:
        if self.z is not None:
            close_quietly(self.z)
            close_quietly(self.z.fp)  # a close that failed leaves ZipFile's file open
        if self.file is not None:
            self.file.abort()


SINKS: dict[str, Any] = {"hrry": HrrySink, "safetensors": SafetensorsSink, "gguf": GgufSink,
         "torch": TorchSink, "npy": NpySink, "npz": NpzSink}


def check_dequantize(dtype: str | None) -> None:
    if dtype is not None and dtype not in FLOAT_TARGETS:
        raise CliError(f"--dequantize takes one of {', '.join(FLOAT_TARGETS)}, not {dtype!r}")
    if dtype is not None:
        cast_float(np.zeros(1, np.float32), dtype)
