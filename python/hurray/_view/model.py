"""What `hurray view` shows, as plain data (JSON-ready dicts and lists).

The structure of a file (`FileModel`) comes from the C reader through
`hurray.open`: `File.info()` (header and trailer), `File.entries()` (where
each tensor's descriptor and data lie) and `File.descriptor()` (one
descriptor decoded alone), so no tensor's data is read for the summary or the
table, and the page of a file of any size, local or at a URL, costs one read
per descriptor (a URL's descriptors are fetched several at once). A file the
reader refuses shows the reader's error; a tensor whose descriptor it refuses
shows its own error beside the others.

Values are read when one tensor is asked for (`tensor_stats`, `compare`), in
bounded memory: dense tensors through `File.get_slice`, at most
`SAMPLE_ELEMENTS` elements (evenly spread blocks of rows when the tensor is
larger, and the result says so); quantized tensors are dequantized whole up
to `MAX_DEQUANTIZE` elements; sparse tensors summarise their stored values
and draw where they lie. Elements of the types NumPy lacks are decoded by
the C library (`_hurray._decode_values`).
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .. import _hurray, _remote, _shared

SAMPLE_ELEMENTS = 1 << 20      # elements of a dense tensor summarised at most
CHUNKS = 32                    # blocks the sample is spread over
MAX_DEQUANTIZE = 1 << 24       # elements of a quantized tensor dequantized at most
MAX_SPARSE = 1 << 22           # stored elements of a sparse tensor read at most
BINS = 48
GRID = 64                      # cells per side of the sparsity picture
SPARSE_LAYOUTS = ("coo", "csr", "csc", "csf", "block_paged")
PACKAGE_KEYS = _shared.PACKAGE_KEYS  # spelled once, in include/hurray/file.h


# ---- the structure ----------------------------------------------------------------------

def describe_scheme(q: Any) -> str | None:
    """A short name for a quantization scheme ("per_block int4/32 float16")."""
    if q is None:
        return None
    kind = type(q).__name__
    if kind == "PerTensorAffine":
        return f"per_tensor scale={q.scale:g}" + (f" zp={q.zero_point}" if q.zero_point else "")
    if kind == "PerChannelAffine":
        return f"per_channel axis={q.axis}" + (" asym" if q.zero_point_buffer_index else "")
    if kind == "PerBlockAffine":
        return (f"per_block axis={q.axis} block={q.block_size} {q.scale_type.name}"
                + (" asym" if q.zero_point_buffer_index else ""))
    if kind == "NF4":
        return f"nf4 axis={q.axis} block={q.block_size}"
    if kind == "MXFP":
        return f"mxfp axis={q.axis} block={q.block_size}"
    if kind == "OpaqueQuantization":
        return f"opaque ({len(q.payload)} bytes)"
    return kind


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d or 0)
    return n


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


class FileModel:
    """One file's structure: `summary()` and `rows()` read no tensor data.

    `path` is a local path or a URL (`options`: the URL's keywords,
    storage_options= / workers= / part_size=), or only names an open
    hurray.File given as `file` (which close() leaves open). Opening never
    raises for a damaged file: `errors` lists what went wrong, and what could
    be read is shown."""

    def __init__(self, path: str, options: dict | None = None, file: Any = None) -> None:
        self.path = str(path)
        self.options = dict(options or {})
        self.url = _remote.is_url(self.path)
        self.errors: list[str] = []
        self.file: Any = None          # hurray.File, or None when it cannot be opened
        self.header: dict[str, Any] = {}
        self.entries: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []
        self.kv: dict[str, Any] = {}
        self.checksums = False
        self.size = 0
        self._lock = threading.Lock()
        self._rows: list[dict[str, Any]] | None = None
        self._by_name: dict[str, dict[str, Any]] = {}
        self._order: list[dict[str, Any]] = []
        self._owned = file is None      # a File given (a notebook's) stays open
        if file is not None:
            self.file = file
            self._read_structure()
            return
        try:
            # permissive: descriptors with unknown or private tags are shown, not refused
            if self.url:
                self.file = _remote.open_file(self.path, permissive=True, **self.options)
            else:
                from .._files import open as hopen
                self.file = hopen(self.path, mmap="r", permissive=True)
        except Exception as e:  # noqa: BLE001 - the reader's error is what the page shows
            self.errors.append(_error_text(e))
            if not self.url:
                try:
                    self.size = os.path.getsize(self.path)
                except OSError:
                    pass
            return
        self._read_structure()

    def close(self) -> None:
        if self.file is not None and self._owned:
            self.file.close()

    # -- the structure, from the C reader --

    def _read_structure(self) -> None:
        f = self.file
        info = f.info()
        self.size = info["file_size"]
        self.header = {"version": info["version"], "flags": info["flags"],
                       "alignment": info["data_alignment"],
                       "first_descriptor_offset": info["first_descriptor_offset"],
                       "tensor_count_hint": info["tensor_count_hint"]}
        self.entries = [{"name": n, "index": i, "descriptor_offset": do,
                         "descriptor_length": dl, "data_offset": dao, "data_length": dal}
                        for i, (n, do, dl, dao, dal) in enumerate(f.entries())]

        def one(e: dict[str, Any]) -> None:
            try:
                e["desc"] = f.descriptor(e["index"])
            except Exception as x:  # noqa: BLE001 - one damaged entry, shown with its error
                e["error"] = _error_text(x)

        if self.url and len(self.entries) > 1:   # one range read each: several at once
            workers = int(self.options.get("workers") or 4)
            with ThreadPoolExecutor(max(1, min(16, 2 * workers, len(self.entries)))) as pool:
                list(pool.map(one, self.entries))
        else:
            for e in self.entries:
                one(e)
        # composites: a head's members are the next tensors in file order
        self._order = sorted(self.entries, key=lambda e: e["descriptor_offset"])
        for pos, e in enumerate(self._order):
            e["order"] = pos
        try:
            self.kv = dict(f.kv)
            for k in sorted(PACKAGE_KEYS):
                v = f._kv_value(k)
                if v is not None:
                    self.kv[k] = v
        except Exception as e:  # noqa: BLE001
            self._note(f"the KV section: {_error_text(e)}")
        self.checksums = _shared.CHECKSUMS_KEY in self.kv
        try:
            self.views = [{"name": n, "base": base, "dtype": dt,
                           "shape": list(shape) if dt is not None else None,
                           "byte_offset": off,
                           "byte_strides": list(st) if dt is not None else None}
                          for n, base, dt, shape, off, st in f._views()]
        except Exception as e:  # noqa: BLE001 - a views record the reader refuses
            self._note(f"the views record: {_error_text(e)}")

    def _note(self, msg: str) -> None:
        if msg not in self.errors:
            self.errors.append(msg)

    # -- the table --

    def rows(self) -> list[dict[str, Any]]:
        """One row per name (stored tensors in file order, then views): name,
        shape, dtype, layout, scheme, bytes, parameters, and for composite
        members their head."""
        with self._lock:
            if self._rows is None:
                self._rows = self._make_rows()
                self._by_name = {r["name"]: r for r in self._rows}
            return self._rows

    def _make_rows(self) -> list[dict[str, Any]]:
        rows = []
        # members of composites: the next member_count tensors in file order, recursively
        parent: dict[int, str] = {}
        order = self._order

        def claim(pos: int, head: str) -> int:
            """Marks the members of the head at `pos`; returns the position after them."""
            d = order[pos].get("desc")
            n = d.layout.member_count if d is not None and d.layout.name == "composite" else 0
            nxt = pos + 1
            for _ in range(n):
                if nxt >= len(order):
                    break
                parent[id(order[nxt])] = head
                nxt = claim(nxt, order[nxt]["name"])
            return nxt

        pos = 0
        while pos < len(order):
            pos = claim(pos, order[pos]["name"]) if id(order[pos]) not in parent else pos + 1
        for e in order:
            rows.append(self._row(e, parent.get(id(e))))
        stored = {r["name"]: r for r in rows}
        for v in self.views:
            base = stored.get(v["base"])
            same = v["dtype"] is None   # the same tensor as its base, under another name
            shape = (base or {}).get("shape", []) if same or v["shape"] is None else v["shape"]
            dtype = (base or {}).get("dtype") if same else v["dtype"]
            rows.append({"name": v["name"], "shape": shape, "dtype": dtype,
                         "layout": "view", "scheme": (base or {}).get("scheme") if v["dtype"] is None else None,
                         "bytes": 0, "disk_bytes": 0, "params": _count(shape or []),
                         "kind": "view",
                         "view_of": v["base"], "member_of": None, "error": None,
                         "byte_offset": v["byte_offset"], "byte_strides": v["byte_strides"]})
        return rows

    def _row(self, e: dict[str, Any], member_of: str | None) -> dict[str, Any]:
        d = e.get("desc")
        row: dict[str, Any] = {"name": e["name"], "bytes": e["data_length"],
                               "disk_bytes": e["data_length"],
                               "member_of": member_of, "view_of": None,
                               "error": e.get("error"), "shape": [], "dtype": None,
                               "layout": None, "scheme": None, "params": 0, "kind": "damaged"}
        if d is None:
            return row
        shape = [int(s) if s is not None else None for s in d.shape]
        layout = d.layout.name
        q = d.quantization
        row.update(shape=shape, dtype=d.dtype.name, layout=layout, scheme=describe_scheme(q),
                   params=_count(shape) if layout != "composite" else 0,
                   bytes=sum(h.byte_size for h in d.buffer_handles))
        if layout == "composite":
            row["kind"] = "composite"
            row["members"] = d.layout.member_count
            row["rule"] = d.layout.composition_rule
        elif q is not None:
            row["kind"] = "quantized"
        elif layout in SPARSE_LAYOUTS:
            row["kind"] = "sparse"
            nnz = getattr(d.layout, "nnz", None)
            if nnz is not None:
                row["nnz"] = int(nnz)
        else:
            row["kind"] = "dense"
        if d.shard is not None:
            row["shard"] = {"parent_shape": list(d.shard.parent_shape),
                            "offset": list(d.shard.shard_offset)}
        return row

    def row(self, name: str) -> dict[str, Any]:
        self.rows()
        return self._by_name[name]

    # -- the summary --

    def summary(self) -> dict[str, Any]:
        rows = self.rows()
        by_dtype: dict[str, dict[str, int]] = {}
        by_layout: dict[str, dict[str, int]] = {}
        q = {"quantized": {"tensors": 0, "params": 0, "bytes": 0},
             "dense": {"tensors": 0, "params": 0, "bytes": 0}}
        data = 0
        for r in rows:
            data += r["bytes"]
            if r.get("error") and r["kind"] == "damaged":
                data -= r["bytes"]
            if r["kind"] in ("view", "composite", "damaged"):
                continue
            for table, key in ((by_dtype, r["dtype"]), (by_layout, r["layout"])):
                t = table.setdefault(key, {"tensors": 0, "params": 0, "bytes": 0})
                t["tensors"] += 1
                t["params"] += r["params"]
                t["bytes"] += r["bytes"]
            t = q["quantized" if r["kind"] == "quantized" else "dense"]
            t["tensors"] += 1
            t["params"] += r["params"]
            t["bytes"] += r["bytes"]
        kv_user = {k: _kv_json(v) for k, v in self.kv.items() if k not in PACKAGE_KEYS}
        return {
            "path": self.path, "name": os.path.basename(self.path.rstrip("/")) or self.path,
            "url": self.url, "size": self.size, "header": self.header,
            "opened": self.file is not None,
            "tensors": sum(1 for r in rows if r["kind"] != "view"),
            "stored": sum(1 for r in rows if r["kind"] not in ("view", "composite")),
            "views": sum(1 for r in rows if r["kind"] == "view"),
            "composites": sum(1 for r in rows if r["kind"] == "composite"),
            "sparse": sum(1 for r in rows if r["kind"] == "sparse"),
            "params": sum(t["params"] for t in by_dtype.values()),
            "data_bytes": data, "overhead": max(0, self.size - data),
            "by_dtype": dict(sorted(by_dtype.items(), key=lambda kv: -kv[1]["bytes"])),
            "by_layout": dict(sorted(by_layout.items(), key=lambda kv: -kv[1]["bytes"])),
            "quantization": q,
            "kv": kv_user,
            "checksums": ("recorded (not checked: verify reads every byte)" if self.checksums
                          else "none recorded"),
            "has_checksums": self.checksums,
            "errors": list(self.errors) + [f"{r['name']}: {r['error']}" for r in rows
                                           if r.get("error")],
        }

    def summary_brief(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "tensors": len(self.rows()),
                "errors": list(self.errors)}

    def verify(self) -> dict[str, Any]:
        if self.file is None:
            return {"ok": False, "error": "; ".join(self.errors) or "the file is not open"}
        try:
            r = self.file.verify()
        except (OSError, ValueError) as e:
            return {"ok": False, "error": _error_text(e)}
        return {"ok": True, "tensors": r.tensors, "checksums": r.checksums,
                "checked_bytes": r.checked_bytes}

    # -- values --

    def tensor(self, name: str) -> Any:
        if self.file is None:
            raise OSError("; ".join(self.errors) or "the file could not be opened")
        return self.file[name]


def _kv_json(v: Any) -> Any:
    if isinstance(v, bytes):
        return {"bytes": len(v), "hex": v[:32].hex()}
    if isinstance(v, list):
        return [_kv_json(x) for x in v[:64]] + ([f"... ({len(v)} items)"] if len(v) > 64 else [])
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, str) and len(v) > 4000:
        return v[:4000] + f"... ({len(v)} characters)"
    return v


# ---- values, on demand ------------------------------------------------------------------

def _np():
    import numpy as np
    return np


# hurray type name -> NumPy dtype, for the types NumPy holds as hurray stores them
NATIVE = {"int8": "i1", "uint8": "u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
          "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4",
          "float64": "<f8", "complex64": "<c8", "complex128": "<c16"}


def decode(np, raw: Any, name: str, count: int) -> Any:
    """`count` elements of hurray type `name` packed at the start of the bytes
    `raw`, as NumPy numbers: the types NumPy has as themselves (a view); bool and
    the sub-byte integers one byte each (bool, int8, uint8); bfloat16, the small
    float types and float128 as float64. The last two are decoded by the C
    library (hurray_elements_unpack, hurray_elements_to_double)."""
    raw = np.ascontiguousarray(np.asarray(raw).view(np.uint8).reshape(-1))
    if name in NATIVE:
        dt = np.dtype(NATIVE[name])
        return raw[:count * dt.itemsize].view(dt)
    d = _hurray.Dtype.from_name(name)
    codes = (d.is_integer or name == "bool") and (d.bit_width or 8) < 8
    return np.asarray(_hurray._decode_values(raw, name, count, codes=codes))


def _as_numbers(t: Any) -> Any:
    """A row-major, unquantized tensor's values as a NumPy array (complex as
    magnitudes)."""
    np = _np()
    from .._cli._values import data_bytes
    shape = tuple(int(n or 0) for n in t.shape)
    a = decode(np, data_bytes(t), t.dtype.name, _count(shape)).reshape(shape)
    if a.dtype.kind == "c":
        a = np.abs(a)
    return a


def sample_plan(shape: list[int], budget: int | None = None) -> tuple[list[tuple], bool]:
    """Basic indexes selecting at most `budget` (default SAMPLE_ELEMENTS) elements
    of `shape`, spread over CHUNKS evenly placed blocks; (indexes, sampled)."""
    budget = SAMPLE_ELEMENTS if budget is None else budget
    total = _count(shape)
    if total <= budget or not shape:
        return [(Ellipsis,)], False

    def plan(dims: list[int], prefix: tuple, budget: int) -> list[tuple]:
        n0 = dims[0]
        inner = _count(dims[1:])
        if n0 * inner <= budget:
            return [prefix + (Ellipsis,)]
        chunks = max(1, min(CHUNKS, n0))
        if inner * chunks <= budget:
            rows = max(1, budget // (chunks * max(inner, 1)))
            starts = sorted({round(k * (n0 - rows) / max(chunks - 1, 1)) for k in range(chunks)})
            return [prefix + (slice(s, s + rows),) for s in starts]
        if len(dims) == 1:
            return [prefix + (slice(0, budget),)]
        picks = sorted({round(k * (n0 - 1) / max(chunks - 1, 1)) for k in range(chunks)})
        out = []
        for i in picks:
            out += plan(dims[1:], prefix + (i,), max(1, budget // len(picks)))
        return out

    return plan([int(d) for d in shape], (), budget), True


def _histogram(np, x: Any) -> dict[str, Any] | None:
    x = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    if x.size == 0:
        return None
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        return {"edges": [lo, hi], "counts": [int(x.size)]}
    counts, edges = np.histogram(x.astype(np.float64, copy=False), bins=BINS, range=(lo, hi))
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}


def value_stats(np, x: Any) -> dict[str, Any]:
    """min/max/mean/std, NaN/Inf/zero counts and a histogram of the values in x."""
    x = np.asarray(x).reshape(-1)
    out: dict[str, Any] = {"count": int(x.size)}
    if x.dtype.kind == "b":
        x = x.astype(np.uint8)
    if x.dtype.kind == "f":
        nan = np.isnan(x)
        inf = np.isinf(x)
        out["nan"], out["inf"] = int(nan.sum()), int(inf.sum())
        fin = x[~(nan | inf)]
    else:
        out["nan"] = out["inf"] = 0
        fin = x
    out["zeros"] = int(np.count_nonzero(x == 0))
    if fin.size:
        f64 = fin.astype(np.float64)
        out.update(min=float(f64.min()), max=float(f64.max()), mean=float(f64.mean()),
                   std=float(f64.std()))
    else:
        out.update(min=None, max=None, mean=None, std=None)
    out["histogram"] = _histogram(np, fin)
    return out


def _scales(np, t: Any) -> Any:
    """A quantized tensor's scales as float64 values."""
    q = t.quantization
    kind = type(q).__name__
    if kind == "PerTensorAffine":
        return np.array([q.scale])
    if kind == "OpaqueQuantization":
        return None
    raw = np.asarray(t.buffer(q.scale_buffer_index)).view(np.uint8).reshape(-1)
    st = (q.scale_type.name if hasattr(q, "scale_type") else
          "float8_e8m0" if kind == "MXFP" else "float32")
    bits = _hurray.Dtype.from_name(st).bit_width or 8
    return decode(np, raw, st, raw.size * 8 // bits).astype(np.float64)


def float_partner(model: FileModel, name: str) -> str | None:
    """The unquantized float tensor of the same shape that `name` (quantized)
    was made from, when the file holds one under a related name: one name
    extends the other by a `.` or `_` part (`w` and `w.q`, `w` and `w_nf4`), or
    both are one stem with different last parts (`w.orig` and `w.qweight`,
    `w_fp32` and `w_int4`). The longest such name wins."""
    row = model.row(name)

    def stem(n: str) -> str:
        cut = max(n.rfind("."), n.rfind("_"))
        return n[:cut] if cut > 0 else n

    best = None
    for r in model.rows():
        c = r["name"]
        if (c == name or r["kind"] not in ("dense", "view") or r["shape"] != row["shape"]
                or not (r["dtype"] or "").startswith(("float", "bfloat"))):
            continue
        related = (name.startswith((c + ".", c + "_")) or c.startswith((name + ".", name + "_"))
                   or stem(c) == stem(name))
        if related and (best is None or len(c) > len(best)):
            best = c
    return best


def read_values(model: FileModel, name: str, budget: int | None = None
                ) -> tuple[Any, bool, int]:
    """(values as a flat NumPy array, sampled?, element count) of a dense tensor,
    at most `budget` (default SAMPLE_ELEMENTS) elements read."""
    np = _np()
    budget = SAMPLE_ELEMENTS if budget is None else budget
    f = model.file
    sl = f.get_slice(name)
    shape = [int(s) for s in sl.shape]
    plan, sampled = sample_plan(shape, budget)
    parts = [_as_numbers(sl[idx]).reshape(-1) for idx in plan]
    x = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return x, sampled, _count(shape)


def tensor_stats(model: FileModel, name: str) -> dict[str, Any]:
    """What the page shows of one tensor, its values read now (bounded)."""
    np = _np()
    row = dict(model.row(name))
    out: dict[str, Any] = {"name": name, "row": row}
    if model.file is None:
        out["error"] = "; ".join(model.errors) or "the file could not be opened"
        return out
    kind = row["kind"]
    try:
        if kind == "composite":
            out["placement"] = placement(model.tensor(name))
            return out
        if kind in ("dense", "view"):
            x, sampled, n = read_values(model, name)
            out["values"] = value_stats(np, x)
            out["sampled"] = sampled
            out["elements"] = n
            return out
        t = model.tensor(name)
        if kind == "quantized":
            s = _scales(np, t)
            if s is not None:
                out["scales"] = value_stats(np, s)
            n = _count(row["shape"])
            out["elements"] = n
            if n > MAX_DEQUANTIZE:
                out["values_note"] = (f"values not dequantized: {n:,} elements, above the "
                                      f"bound of {MAX_DEQUANTIZE:,}")
                return out
            v = _as_numbers(t.dequantize("float32"))
            out["values"] = value_stats(np, v)
            out["sampled"] = False
            partner = float_partner(model, name)
            if partner is not None:
                ref, sampled, _ = read_values(model, partner, MAX_DEQUANTIZE)
                if ref.size == v.size and not sampled:
                    out["error_vs"] = error_against(np, v.reshape(-1), ref, partner)
            return out
        if kind == "sparse":
            out.update(sparse_stats(np, t, row))
            return out
    except Exception as e:  # noqa: BLE001 - any failure of one tensor is shown, not fatal
        out["error"] = _error_text(e)
        return out
    out["error"] = row.get("error") or "nothing can be read from this entry"
    return out


def error_against(np, v: Any, ref: Any, partner: str) -> dict[str, Any]:
    ref = ref.astype(np.float64)
    d = v.astype(np.float64) - ref
    rms_ref = float(np.sqrt(np.mean(ref * ref))) if ref.size else 0.0
    rms = float(np.sqrt(np.mean(d * d))) if d.size else 0.0
    return {"against": partner, "max_abs": float(np.max(np.abs(d))) if d.size else 0.0,
            "rms": rms, "relative_rms": rms / rms_ref if rms_ref else None,
            "histogram": _histogram(np, d)}


def sparse_stats(np, t: Any, row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    layout = row["layout"]
    vals = np.asarray(t.buffer(0)).view(np.uint8)
    nnz = int(row.get("nnz") or 0)
    bits = _hurray.Dtype.from_name(row["dtype"]).bit_width or 0
    if bits:   # the stored values (block_paged: every page)
        room = vals.size * 8 // bits
        n = min(nnz if nnz and layout != "block_paged" else room, room)
        sampled = n > MAX_SPARSE
        x = _sampled_values(np, vals, row["dtype"], bits, n, math.ceil(n / MAX_SPARSE))
        if x.dtype.kind == "c":
            x = np.abs(x)
        out["values"] = value_stats(np, x)
        out["sampled"] = sampled
    shape = [int(s or 0) for s in row["shape"]]
    out["elements"] = _count(shape)
    out["density"] = nnz / out["elements"] if out["elements"] and nnz else None
    try:
        out["pattern"] = sparsity_grid(np, t, layout, shape)
    except Exception as e:  # noqa: BLE001
        out["pattern_note"] = f"no picture of the pattern: {_error_text(e)}"
    return out


def _sampled_values(np, vals: Any, dtype: str, bits: int, n: int, step: int) -> Any:
    """Every `step`-th of the first `n` packed values, decoded; memory bounded by
    the sample (whole bytes: the sampled elements' bytes gathered first; sub-byte:
    decoded a block at a time)."""
    if bits % 8 == 0:
        item = bits // 8
        raw = np.ascontiguousarray(vals[:n * item].reshape(n, item)[::step])
        return decode(np, raw.reshape(-1), dtype, raw.shape[0])
    block = (1 << 20) * step            # a multiple of 8 elements: whole bytes
    parts = [decode(np, vals[a * bits // 8:], dtype, min(block, n - a))[::step]
             for a in range(0, n, block)]
    return np.concatenate(parts) if parts else decode(np, vals, dtype, 0)


def _rows_of(np, ptr: Any, positions: Any) -> Any:
    """The row (column) of each stored position, from a compressed pointer."""
    return np.searchsorted(ptr, positions, side="right") - 1


def _grid(np, r: Any, c: Any, nr: int, nc: int, weights: Any = None) -> dict[str, Any]:
    gr, gc = max(1, min(GRID, nr)), max(1, min(GRID, nc))
    cells = np.zeros((gr, gc), np.int64)
    if r.size:
        ri = np.minimum((r.astype(np.int64) * gr) // max(nr, 1), gr - 1)
        ci = np.minimum((c.astype(np.int64) * gc) // max(nc, 1), gc - 1)
        np.add.at(cells, (ri, ci), 1 if weights is None else weights)
    return {"rows": nr, "cols": nc, "grid": cells.tolist(),
            "cell_capacity": math.ceil(nr / gr) * math.ceil(nc / gc)}


def _csf_grid(np, t: Any, shape: list[int]) -> dict[str, Any]:
    """A CSF tensor's non-zeros per cell over its first two levels (the
    dimensions mode_order[0] and [1]): each level-1 fibre weighs the leaves
    below it, found by descending the pos arrays (buffers 1 + 2L: pos of level
    L, 2 + 2L: its coordinates); at most MAX_SPARSE fibres, spread evenly."""
    rank = len(shape)
    order = list(t.layout.mode_order)
    pos = [np.asarray(t.buffer(1 + 2 * lv)).view("<u8") for lv in range(rank)]
    crd = [np.asarray(t.buffer(2 + 2 * lv)).view("<u8") for lv in range(rank)]
    n1 = int(pos[1][-1]) if pos[1].size else 0
    step = max(1, math.ceil(n1 / MAX_SPARSE))
    fib = np.arange(0, n1, step, dtype=np.int64)
    lo, hi = fib, fib + 1                  # the fibres' own range at level 1
    for lv in range(2, rank):              # down to the leaves
        lo, hi = pos[lv][lo].astype(np.int64), pos[lv][hi].astype(np.int64)
    parent = np.searchsorted(pos[1], fib, side="right") - 1
    out = _grid(np, crd[0][parent], crd[1][fib], int(shape[order[0]] or 1),
                int(shape[order[1]] or 1), hi - lo)
    out["axes"] = order[:2]
    return out


def sparsity_grid(np, t: Any, layout: str, shape: list[int]) -> dict[str, Any]:
    """Non-zeros per cell of a GRID x GRID grid over the first two dimensions
    (rows, columns; a 1-D tensor is one row), from at most MAX_SPARSE stored
    positions, spread evenly (the index arrays are read as they are: nothing of
    the size of the tensor is made)."""
    if layout == "coo":
        idx = np.asarray(t.indices).reshape(-1, max(len(shape), 1))
        step = max(1, math.ceil(idx.shape[0] / MAX_SPARSE))
        idx = idx[::step]
        r = idx[:, 0] if len(shape) >= 2 else np.zeros(idx.shape[0], np.int64)
        c = idx[:, 1] if len(shape) >= 2 else idx[:, 0]
    elif layout in ("csr", "csc"):
        ptr = np.asarray(t.row_ptr if layout == "csr" else t.col_ptr)
        inner = np.asarray(t.col_indices if layout == "csr" else t.row_indices)
        step = max(1, math.ceil(inner.size / MAX_SPARSE))
        pos = np.arange(0, inner.size, step)
        outer, inner = _rows_of(np, ptr, pos), inner[::step]
        r, c = (outer, inner) if layout == "csr" else (inner, outer)
    elif layout == "csf":
        return _csf_grid(np, t, shape)
    else:
        raise ValueError(f"drawn for sparse layouts, not {layout}")
    nr = shape[0] if len(shape) >= 2 else 1
    nc = shape[1] if len(shape) >= 2 else (shape[0] if shape else 1)
    return _grid(np, r, c, nr, nc)


def placement(c: Any, origin: tuple[int, ...] | None = None) -> dict[str, Any]:
    """A composite's members: where each lies in the head (shard offset and
    shape), nested composites recursively."""
    origin = origin or tuple(0 for _ in c.shape)
    members = []
    roles = getattr(c, "member_roles", None) or [None] * c.member_count
    for i, m in enumerate(c.members):
        sh = m.shard
        off = tuple(int(o) for o in sh.shard_offset) if sh is not None else None
        at = tuple(a + b for a, b in zip(origin, off)) if off is not None else None
        entry: dict[str, Any] = {"index": i, "shape": [int(s or 0) for s in m.shape],
                                 "dtype": m.dtype.name, "offset": list(off) if off else None,
                                 "at": list(at) if at else None,
                                 "role": roles[i] if i < len(roles) else None}
        if isinstance(m, _hurray.Composite):
            entry["composite"] = placement(m, at)
            entry["layout"] = "composite"
        else:
            entry["layout"] = m.layout.name
            entry["scheme"] = describe_scheme(m.quantization)
        members.append(entry)
    return {"rule": c.composition_rule, "combine_op": c.combine_op,
            "shape": [int(s) for s in c.shape], "members": members}


# ---- two files --------------------------------------------------------------------------

def diff_rows(a: FileModel, b: FileModel) -> dict[str, Any]:
    """The two files' names compared from their structure alone: only in A,
    only in B, shape/dtype/layout/scheme changes."""
    ra = {r["name"]: r for r in a.rows()}
    rb = {r["name"]: r for r in b.rows()}
    out = []
    for n in list(ra) + [n for n in rb if n not in ra]:
        x, y = ra.get(n), rb.get(n)
        if x is None or y is None:
            out.append({"name": n, "status": "only_a" if y is None else "only_b",
                        "a": _brief(x), "b": _brief(y), "changes": []})
            continue
        changes = [f"{k} {_fmt(x[k])} -> {_fmt(y[k])}" for k in ("shape", "dtype", "layout",
                                                                 "scheme") if x[k] != y[k]]
        out.append({"name": n, "status": "changed" if changes else "same_meta",
                    "a": _brief(x), "b": _brief(y), "changes": changes,
                    "comparable": x["kind"] != "composite" and y["kind"] != "composite"
                    and x["shape"] == y["shape"]})
    rank = {"only_a": 0, "only_b": 1, "changed": 2, "same_meta": 3}
    out.sort(key=lambda r: rank[r["status"]])   # differences first, file order within
    counts: dict[str, int] = {}
    for r in out:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    ka = {k: v for k, v in a.kv.items() if k not in PACKAGE_KEYS}
    kb = {k: v for k, v in b.kv.items() if k not in PACKAGE_KEYS}
    kv = [{"key": k, "a": _kv_json(ka.get(k)), "b": _kv_json(kb.get(k))}
          for k in list(ka) + [k for k in kb if k not in ka]
          if k not in ka or k not in kb or ka[k] != kb[k]]
    return {"a": a.summary_brief(), "b": b.summary_brief(), "rows": out, "counts": counts,
            "kv": kv}


def _brief(r: dict[str, Any] | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {k: r[k] for k in ("shape", "dtype", "layout", "scheme", "bytes", "kind")}


def _fmt(v: Any) -> str:
    return "[" + ", ".join(map(str, v)) + "]" if isinstance(v, list) else str(v)


def _values_for_compare(model: FileModel, name: str) -> Any:
    """All of a tensor's values (float64 or its own type), for an exact compare;
    None when it is over the bound."""
    row = model.row(name)
    n = _count(row["shape"])
    if n > MAX_DEQUANTIZE:
        return None
    if row["kind"] in ("dense", "view"):
        x, _, _ = read_values(model, name, MAX_DEQUANTIZE)
        return x
    t = model.tensor(name)
    if row["kind"] == "quantized":
        return _as_numbers(t.dequantize("float32")).reshape(-1)
    if row["kind"] == "sparse":
        try:
            sp = t.to_scipy()
            return _np().asarray(sp.todense()).reshape(-1)
        except Exception:  # noqa: BLE001
            return None
    return None


def compare(a: FileModel, b: FileModel, name: str) -> dict[str, Any]:
    """max |a - b| of tensor `name` in both files (values read now; dense
    tensors compared in blocks of rows, so memory stays bounded)."""
    np = _np()
    try:
        ra, rb = a.row(name), b.row(name)
        if ra["shape"] != rb["shape"]:
            return {"name": name, "error": "the shapes differ"}
        if ra["kind"] in ("dense", "view") and rb["kind"] in ("dense", "view"):
            sa, sb = a.file.get_slice(name), b.file.get_slice(name)
            shape = [int(s) for s in sa.shape]
            worst, equal, nan_mismatch = 0.0, True, 0
            for idx in _blocks(shape):
                xa, xb = _as_numbers(sa[idx]), _as_numbers(sb[idx])
                d, nm = _absdiff(np, xa, xb)
                nan_mismatch += nm
                if d.size:
                    worst = max(worst, float(np.max(d)))
                    equal = equal and worst == 0
            return {"name": name, "max_abs": worst, "equal": equal and nan_mismatch == 0,
                    "nan_mismatch": nan_mismatch}
        xa, xb = _values_for_compare(a, name), _values_for_compare(b, name)
        if xa is None or xb is None:
            return {"name": name, "error": "not compared (a composite, a layout without a "
                                           "dense form, or above the bound)"}
        d, nm = _absdiff(np, xa, xb)
        worst = float(np.max(d)) if d.size else 0.0
        return {"name": name, "max_abs": worst, "equal": worst == 0 and nm == 0,
                "nan_mismatch": nm}
    except Exception as e:  # noqa: BLE001
        return {"name": name, "error": _error_text(e)}


def _absdiff(np, xa: Any, xb: Any) -> tuple[Any, int]:
    fa = xa.astype(np.float64).reshape(-1)
    fb = xb.astype(np.float64).reshape(-1)
    with np.errstate(invalid="ignore"):
        d = np.abs(fa - fb)
    both = np.isnan(fa) & np.isnan(fb)
    one = np.isnan(fa) ^ np.isnan(fb)
    d = d[~(both | one)]
    return d, int(one.sum())


def _blocks(shape: list[int], budget: int | None = None) -> list[tuple]:
    """Indexes covering every element of `shape` in blocks of rows of at most
    about `budget` (default SAMPLE_ELEMENTS) elements (a row larger than that is
    one block)."""
    budget = SAMPLE_ELEMENTS if budget is None else budget
    if not shape or _count(shape) <= budget:
        return [(Ellipsis,)]
    inner = max(1, _count(shape[1:]))
    rows = max(1, budget // inner)
    return [(slice(s, min(s + rows, shape[0])),) for s in range(0, shape[0], rows)]
