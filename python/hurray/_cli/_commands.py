"""The subcommands of `hurray` (docs/reference/cli.md): convert, ls, diff, verify, inspect."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from ._errors import CliError, Refused
from ._progress import Progress, count, size
from ._urls import REMOTE, open_hrry

if TYPE_CHECKING:
    from ._formats import Entry

# NumPy and the format modules are imported by the subcommands that read tensors
# (`hurray inspect` and `--help` need neither).


# ---- convert ----------------------------------------------------------------------

def convert(src_path: str, dst_path: str, *, dequantize: str | None = None, quiet: bool = False,
            drop_kv: bool = False, summary: bool = True) -> int:
    from ._formats import SINKS, check_dequantize, detect, open_source
    check_dequantize(dequantize)
    if os.path.isdir(src_path) and not os.path.splitext(dst_path.rstrip("/\\"))[1]:
        return convert_model_dir(src_path, dst_path, dequantize=dequantize, quiet=quiet,
                                 drop_kv=drop_kv)
    fmt = detect(dst_path, writing=True)
    if os.path.abspath(src_path) == os.path.abspath(dst_path):
        raise CliError(f"{dst_path}: the output is the input")
    t0 = time.monotonic()
    with open_source(src_path) as src:
        sink = SINKS[fmt](dst_path, src, dequantize, drop_kv)  # plans; refuses before writing
        total = sum(e.nbytes for e, _ in sink.plan)
        bar = Progress(total, f"{os.path.basename(dst_path)}", quiet)
        try:
            sink.start()  # the temporary file: from here on, abort() removes it
            for e, mode in sink.plan:
                try:
                    sink.write(e, mode)
                except Refused as r:
                    msg = str(r)
                    raise Refused(msg if msg.startswith("tensor ") else
                                  f"tensor {e.name!r}: {msg}") from None
                if e.release is not None:
                    e.release()
                bar.update(e.nbytes, e.name)
            sink.finish()
        except BaseException:
            sink.abort()
            raise
        finally:
            bar.close()
        if not quiet and summary:
            n = sum(1 for e, _ in sink.plan)
            deq = sum(1 for _, m in sink.plan if m == "float")
            dt = time.monotonic() - t0
            extra = f", {deq} dequantized to {dequantize}" if deq else ""
            print(f"hurray convert: {dst_path}: {count(n, 'tensor')}, {total:,} bytes ({size(total)}) "
                  f"in {dt:.2f} s"
                  f"{extra}", file=sys.stderr)
    return 0


ST_INDEX = "model.safetensors.index.json"


def convert_model_dir(src_dir: str, dst_dir: str, *, dequantize: str | None = None,
                      quiet: bool = False, drop_kv: bool = False) -> int:
    """A model directory (Hugging Face layout: config, tokenizer files, weights as
    `.safetensors`, sharded with an index or not) to DST_DIR: each weights file
    converted to `.hrry` under the same name (`model.safetensors` -> `model.hrry`,
    shards keeping their numbers, the index rewritten as `model.hrry.index.json`),
    every other file and folder copied as it is. DST_DIR is made whole in a
    temporary folder beside it, then renamed: it never holds half a model."""
    import tempfile
    t0 = time.monotonic()
    src, dst = os.path.abspath(src_dir), os.path.abspath(dst_dir.rstrip("/\\"))
    if dst == src or dst.startswith(src + os.sep):
        raise CliError(f"{dst_dir}: the output directory is (inside) the input {src_dir}")
    if os.path.lexists(dst) and not (os.path.isdir(dst) and not os.listdir(dst)):
        raise CliError(f"{dst_dir}: exists and is not an empty directory (the model "
                       f"directory is written whole; remove it or name another)")
    weights, index = _model_weights(src_dir)
    parent = os.path.dirname(dst) or "."
    if not os.path.isdir(parent):
        raise CliError(f"{dst_dir}: its folder {parent} does not exist")
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(dst)}.", suffix=".tmp", dir=parent)
    try:
        renamed = {}
        for name in weights:
            out = name[: -len(".safetensors")] + ".hrry"
            renamed[name] = out
            convert(os.path.join(src, name), os.path.join(tmp, out), dequantize=dequantize,
                    quiet=quiet, drop_kv=drop_kv, summary=False)
        if index is not None:
            index["weight_map"] = {k: renamed[v] for k, v in index["weight_map"].items()}
            with open(os.path.join(tmp, "model.hrry.index.json"), "w") as fh:
                json.dump(index, fh, indent=2)
                fh.write("\n")
        skip = set(weights) | ({ST_INDEX} if index is not None else set())
        others = 0
        for entry in sorted(os.listdir(src)):
            if entry in skip:
                continue
            here, there = os.path.join(src, entry), os.path.join(tmp, entry)
            if os.path.isdir(here):
                shutil.copytree(here, there, symlinks=True)
            else:
                shutil.copy2(here, there, follow_symlinks=False)
            others += 1
        if os.path.isdir(dst):
            os.rmdir(dst)  # empty (checked above)
        os.rename(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if not quiet:
        from ._formats import open_source
        total = n = 0
        for name in renamed.values():
            with open_source(os.path.join(dst, name)) as s:
                n += len(s.entries)
                total += sum(e.nbytes for e in s.entries)
        print(f"hurray convert: {dst_dir}: {count(n, 'tensor')} in "
              f"{count(len(renamed), 'weights file')}, {total:,} bytes ({size(total)}), "
              f"{count(others, 'other file')} copied, in {time.monotonic() - t0:.2f} s",
              file=sys.stderr)
    return 0


def _model_weights(src_dir: str) -> tuple[list[str], dict[str, Any] | None]:
    """The .safetensors weights files of a model directory, in order, and its index."""
    idx = os.path.join(src_dir, ST_INDEX)
    if os.path.isfile(idx):
        try:
            with open(idx, "rb") as fh:
                index = json.load(fh)
            files = list(dict.fromkeys(index["weight_map"].values()))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise CliError(f"{idx}: not a safetensors index (a JSON object with a "
                           f"'weight_map' of tensor name to file): {e}") from None
        for f in files:
            if not isinstance(f, str) or os.path.basename(f) != f or not f.endswith(
                    ".safetensors") or not os.path.isfile(os.path.join(src_dir, f)):
                raise CliError(f"{idx}: weight_map names {f!r}, which is no .safetensors file "
                               f"of {src_dir}")
        return files, index
    files = sorted(f for f in os.listdir(src_dir) if f.endswith(".safetensors")
                   and os.path.isfile(os.path.join(src_dir, f)))
    if not files:
        raise CliError(f"{src_dir}: a directory without .safetensors weights (a model "
                       f"directory holds model.safetensors, or shards and {ST_INDEX})")
    return files, None


# ---- ls ---------------------------------------------------------------------------

ELIDE_ITEMS = 8
ELIDE_CHARS = 200


def _kv_text(v: Any) -> str:
    if isinstance(v, str):
        s = v.strip()
        if s[:1] in "{[":
            try:
                doc = json.loads(s)
                return "\n" + _indent(json.dumps(doc, indent=2, ensure_ascii=False)[:4000])
            except ValueError:
                pass
        return repr(v if len(v) <= ELIDE_CHARS else v[:ELIDE_CHARS] + "...") + \
            (f" ({len(v)} characters)" if len(v) > ELIDE_CHARS else "")
    if isinstance(v, bytes):
        shown = v[:32].hex(" ")
        return f"bytes[{len(v)}] {shown}{' ...' if len(v) > 32 else ''}"
    if isinstance(v, list):
        head = ", ".join(_kv_text(x) if not isinstance(x, str) else repr(x[:40])
                         for x in v[:ELIDE_ITEMS])
        more = f", ... ({len(v)} items)" if len(v) > ELIDE_ITEMS else ""
        return f"[{head}{more}]"
    return repr(v)


def _indent(s: str) -> str:
    return "\n".join("      " + line for line in s.splitlines())


def _json_value(v: Any) -> Any:
    if isinstance(v, bytes):
        return {"bytes_hex": v.hex()}
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v


def ls(path: str, *, as_json: bool = False, out: Any = None) -> int:
    from ._formats import open_source
    out = out if out is not None else sys.stdout
    with open_source(path, data=False) as src:
        rows = [_row(e) for e in src.entries]
        per_dtype: dict[str, int] = {}
        params = 0
        for e in src.entries:
            if e.view is not None:
                continue
            per_dtype[e.dtype] = per_dtype.get(e.dtype, 0) + e.nbytes
            params += e.count
        totals: dict[str, Any] = {"tensors": len(src.entries),
                  "views": sum(1 for e in src.entries if e.view is not None),
                  "parameters": params, "bytes": sum(per_dtype.values()),
                  "bytes_per_dtype": dict(sorted(per_dtype.items()))}
        kv = dict(src.kv)
        if as_json:
            doc = {"path": path, "format": src.format, "tensors": rows, "totals": totals,
                   "kv": {k: _json_value(v) for k, v in kv.items()}}
            if src.gguf_types:
                doc["gguf_types"] = src.gguf_types
            json.dump(doc, out, indent=2, ensure_ascii=False)
            out.write("\n")
            return 0
        out.write(f"{path}: {src.format}, {count(totals['tensors'], 'tensor')}\n")
        cols = ["name", "dtype", "shape", "layout", "quantization", "bytes"]
        table = [[r["name"], r["dtype"], "[" + ", ".join(map(str, r["shape"])) + "]",
                  r["layout"] if r["view_of"] is None else f"view of {r['view_of']}",
                  r["quantization"] or "-", str(r["bytes"])] for r in rows]
        widths = [max([len(c)] + [len(row[i]) for row in table]) for i, c in enumerate(cols)]
        widths[0] = min(widths[0], 60)
        fmt_row = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {:>" + str(widths[-1]) + "}"
        out.write(fmt_row.format(*cols) + "\n")
        for row in table:
            out.write(fmt_row.format(*row).rstrip() + "\n")
        out.write(f"total: {count(totals['tensors'], 'tensor')}"
                  + (f" ({count(totals['views'], 'view')} of others)" if totals["views"] else "")
                  + f", {params:,} parameters, {totals['bytes']:,} bytes "
                  f"({size(totals['bytes'])})\n")
        for dt, n in totals["bytes_per_dtype"].items():
            out.write(f"  {dt}: {n:,} bytes\n")
        if kv:
            out.write(f"kv: {count(len(kv), 'entry')}\n")
            for k, v in kv.items():
                t = src.gguf_types.get(k)
                out.write(f"  {k}{f' ({t})' if t else ''} = {_kv_text(v)}\n")
    return 0


def _row(e: Entry) -> dict[str, Any]:
    return {"name": e.name, "dtype": e.dtype, "shape": list(e.shape),
            "layout": e.layout, "quantization": e.quantization, "bytes": e.nbytes,
            "view_of": e.view[0] if e.view is not None else None}


# ---- diff -------------------------------------------------------------------------

def diff(a_path: str, b_path: str, *, quiet: bool = False, out: Any = None) -> int:
    from ._formats import open_source
    out = out if out is not None else sys.stdout
    differ = False

    def say(line: str) -> None:
        nonlocal differ
        differ = True
        if not quiet:
            out.write(line + "\n")

    with open_source(a_path) as a, open_source(b_path) as b:
        ea = {e.name: e for e in a.entries}
        eb = {e.name: e for e in b.entries}
        for n in ea:
            if n not in eb:
                say(f"- {n}: only in {a_path}")
        for n in eb:
            if n not in ea:
                say(f"+ {n}: only in {b_path}")
        for n, x in ea.items():
            y = eb.get(n)
            if y is None:
                continue
            problems = _compare(x, y)
            if problems:
                say(f"~ {n}: " + "; ".join(problems))
        ka, kb = a.kv, b.kv
        for k in ka:
            if k not in kb:
                say(f"- kv[{k!r}]: only in {a_path}")
            elif not _kv_equal(ka[k], kb[k]):
                say(f"~ kv[{k!r}]: {_kv_text(ka[k])} != {_kv_text(kb[k])}")
        for k in kb:
            if k not in ka:
                say(f"+ kv[{k!r}]: only in {b_path}")
    if not differ and not quiet:
        out.write(f"{a_path} and {b_path}: the same tensors and KV\n")
    return 1 if differ else 0


def _kv_equal(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    return bool(type(x) is type(y) and x == y) or (isinstance(x, (int, float)) and
                                                    isinstance(y, (int, float)) and
                                                    not isinstance(x, bool) and
                                                    not isinstance(y, bool) and x == y)


def _compare(x: Entry, y: Entry) -> list[str]:
    out = []
    if x.dtype != y.dtype:
        out.append(f"dtype {x.dtype} != {y.dtype}")
    if x.shape != y.shape:
        out.append(f"shape {list(x.shape)} != {list(y.shape)}")
        return out
    if x.layout != y.layout:
        out.append(f"layout {x.layout} != {y.layout}")
    if (x.quantization or "") != (y.quantization or ""):
        out.append(f"quantization {x.quantization or 'none'} != {y.quantization or 'none'}")
    try:
        same, delta = _values_differ(x, y)
    except Refused as r:
        out.append(f"values not compared ({r})")
        return out
    if same:
        return out
    if delta == 0:
        # equal as numbers: the bytes differ only where numbers do not show it
        out.append("values equal as numbers" if x.dtype != y.dtype else
                   "values equal as numbers, but their bits differ (a zero's sign or a NaN's "
                   "payload)")
    else:
        out.append("values differ" + (f": max |a - b| = {delta:.6g}" if delta is not None else ""))
    return out


def _buffers(t: Any) -> list[bytes]:
    import numpy as np
    return [np.asarray(t.buffer(i)).tobytes() for i in range(t.buffer_count)]


def _values_differ(x: Entry, y: Entry) -> tuple[bool, float | None]:
    """(identical?, max |a-b| when the values can be compared as numbers)."""
    import numpy as np
    from ._values import to_numpy
    quantized = x.scheme is not None or y.scheme is not None or x.foreign or y.foreign
    if not quantized and not x.composite and not y.composite:
        ta, tb = x.dense(), y.dense()
        if x.dtype == y.dtype:
            from ._values import data_bytes
            if np.array_equal(data_bytes(ta), data_bytes(tb)):
                return True, None
        try:
            va, vb = to_numpy(ta), to_numpy(tb)
        except Refused:
            return False, None
        return False, _max_abs(va, vb)
    if x.composite or y.composite:
        return (_buffers_of(x.exact()) == _buffers_of(y.exact())), None
    if not x.foreign and not y.foreign and x.quantization == y.quantization:
        if _buffers(x.exact()) == _buffers(y.exact()):
            return True, None
    try:
        va = to_numpy(x.float_values("float64"))
        vb = to_numpy(y.float_values("float64"))
    except Refused:
        return False, None
    return False, _max_abs(va, vb)


def _buffers_of(t: Any) -> list[bytes]:
    from .._hurray import Composite
    if isinstance(t, Composite):
        return [b for m in t.members for b in _buffers_of(m)]
    return _buffers(t)


def _max_abs(a: Any, b: Any) -> float | None:
    """max |a - b| over the elements (positions where both are NaN count as
    equal; a NaN against a number makes it NaN)."""
    import numpy as np
    try:
        kind = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
        fa, fb = np.asarray(a).astype(kind), np.asarray(b).astype(kind)
    except (TypeError, ValueError):
        return None
    if fa.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        d = np.abs(fa - fb)
    same_nan = np.isnan(fa) & np.isnan(fb)
    d = np.where(same_nan, 0.0, d)
    return float(np.max(d))


# ---- verify -----------------------------------------------------------------------

HRRY_MAGIC = b"HRRYFILE"


def verify(paths: list[str], *, as_json: bool = False, require_checksums: bool = False,
           quiet: bool = False, out: Any = None) -> int:
    """Checks each .hrry file as File.verify() does: every structural rule, then
    the data checksums when the file records them. Exit status 0 when every
    file is sound, 1 when one is damaged (or, with require_checksums, records no
    checksums), 2 when one cannot be checked at all (missing, unreadable, not a
    .hrry file); the worst status wins."""
    out = out if out is not None else sys.stdout
    worst = 0
    docs = []
    for path in paths:
        doc: dict[str, Any] = {"path": path, "ok": False, "tensors": None, "checksums": None,
                               "checked_bytes": None, "error": None, "status": None,
                               "field": None, "offset": None}
        status = 0
        try:
            with open_hrry(path, mmap="r") as f:
                r = f.verify()
            doc.update(tensors=r.tensors, checksums=r.checksums, checked_bytes=r.checked_bytes)
            if r.checksums or not require_checksums:
                doc["ok"] = True
                line = (f"{path}: OK, {count(r.tensors, 'tensor')}, structure and data checksums "
                        f"({r.checked_bytes:,} bytes)" if r.checksums else
                        f"{path}: OK, {count(r.tensors, 'tensor')}, structure only: the file records "
                        "no data checksums (rewrite it with hurray convert FILE NEW.hrry, or "
                        "save with checksums=True)")
            else:
                status = 1
                doc["error"] = "the file records no data checksums"
                line = (f"{path}: NO CHECKSUMS, {count(r.tensors, 'tensor')}, structure sound; the file "
                        "records no data checksums (--require-checksums; rewrite it with "
                        "hurray convert FILE NEW.hrry)")
        except Exception as e:  # noqa: BLE001 - hurray.FileError (an OSError), ValidationError
            # a file that starts as a .hrry file and fails a check is damaged;
            # anything else (missing, unreadable, a directory, another format,
            # which the message names) cannot be checked
            status = 1 if _starts_as_hrry(path, e) else 2
            doc["error"] = f"{type(e).__name__}: {e}"
            for key in ("status", "field", "offset"):  # hurray errors say where
                value = getattr(e, key, None)
                doc[key] = value if isinstance(value, (str, int)) else None
            line = (f"{path}: DAMAGED: {doc['error']}" if status == 1 else
                    f"{path}: cannot be checked: {doc['error']}")
        worst = max(worst, status)
        docs.append(doc)
        if not as_json and not (quiet and status == 0):
            (out if status == 0 else sys.stderr).write(line + "\n")
    if as_json:
        json.dump(docs if len(docs) != 1 else docs[0], out, indent=2, ensure_ascii=False)
        out.write("\n")
    return worst


def _starts_as_hrry(path: str, e: Exception) -> bool:
    from .. import _remote
    if _remote.is_url(path):  # read: damaged; unreadable (ERR_IO: HTTP, network): unchecked
        return getattr(e, "status", "ERR_IO") != "ERR_IO"
    try:
        with open(path, "rb") as fh:
            return fh.read(len(HRRY_MAGIC)) == HRRY_MAGIC
    except OSError:
        return False


# ---- inspect ----------------------------------------------------------------------

def find_inspector() -> str | None:
    """hurray-inspect: $HURRAY_INSPECT, else beside this Python's scripts (where
    the wheel installs it), else on PATH."""
    env = os.environ.get("HURRAY_INSPECT")
    if env:
        return env
    import sysconfig
    exe = "hurray-inspect" + (".exe" if os.name == "nt" else "")
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        p = os.path.join(d, exe) if d else ""
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return shutil.which("hurray-inspect")


def inspect(path: str, args: list[str]) -> int:
    from .. import _remote
    exe = find_inspector()
    if exe is None:
        raise CliError("hurray-inspect is not installed (the hurray wheel ships it; from a "
                       "source tree build it with cmake, cli/, or set HURRAY_INSPECT)")
    if not os.path.isfile(exe):
        raise CliError(f"hurray-inspect: {exe} (from HURRAY_INSPECT) is not a file")
    if _remote.is_url(path):
        return _inspect_url(exe, path, args)
    return subprocess.call([exe, *args, path])


def _inspect_url(exe: str, url: str, args: list[str]) -> int:
    """hurray-inspect reads a file or its standard input: a URL's object is sent
    to it through a pipe, one part at a time (the inspector reads the whole
    file, as it does a local one)."""
    from .. import _remote
    try:
        src = _remote.open_source(url, **REMOTE)
    except (OSError, ValueError) as e:
        raise CliError(f"{url}: {e}") from None
    buf = bytearray(max(1, min(src.part_size, src.size)))
    proc = subprocess.Popen([exe, *args, "-"], stdin=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        for off in range(0, src.size, len(buf)):
            part = memoryview(buf)[:min(len(buf), src.size - off)]
            src.fetch(off, part)
            proc.stdin.write(part)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the inspector stopped reading (it had seen enough to refuse the bytes)
    except OSError as e:
        proc.kill()
        proc.wait()
        raise CliError(f"{url}: {e}") from None
    finally:
        src.close()
    return proc.wait()
