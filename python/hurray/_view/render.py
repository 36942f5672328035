"""HTML and inline SVG for what a .hrry file holds, shared by the `hurray view`
page (the server sends these fragments in its JSON) and by notebooks:

- `file_html(f)`: a `hurray.File` as its summary and its table of tensors;
- `tensor_html(t)`: a `hurray.Tensor` as its metadata and, for a dense numeric
  tensor in host memory, a histogram of its values (sampled when large);
- `summary_html`, `histogram_svg`, `pattern_svg`, `placement_svg`: the parts.

Every text that comes from a file is escaped; the fragments are well-formed
(every element closed) and carry their style inline under `.hrv` classes, so
they render the same in a notebook and on the page. No script, no asset.
"""

from __future__ import annotations

import html
import math
from typing import Any

from . import model as _model

MAX_TABLE_ROWS = 200

STYLE = """<style>
.hrv{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;color:#1f2328;line-height:1.4}
.hrv table{border-collapse:collapse;margin:4px 0}
.hrv td,.hrv th{padding:2px 10px 2px 0;text-align:left;vertical-align:top;border-bottom:1px solid #eaeef2}
.hrv th{font-weight:600;color:#57606a}
.hrv td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.hrv .hrv-title{font-weight:600;font-size:14px;margin:2px 0 6px}
.hrv .hrv-muted{color:#6e7781}
.hrv .hrv-err{color:#b42318;white-space:pre-wrap}
.hrv .hrv-tag{display:inline-block;padding:0 6px;border-radius:8px;background:#eef2ff;color:#3538cd;font-size:11px}
.hrv .hrv-cards{display:flex;flex-wrap:wrap;gap:8px;margin:4px 0 8px}
.hrv .hrv-card{border:1px solid #d0d7de;border-radius:6px;padding:4px 10px;min-width:90px}
.hrv .hrv-card b{display:block;font-size:15px}
.hrv svg text{font-family:inherit;font-size:10px;fill:#57606a}
</style>"""


def esc(v: Any) -> str:
    return html.escape(str(v), quote=True)


def human_bytes(n: int | float | None) -> str:
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def human_count(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, k in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= k:
            return f"{n / k:.2f}{unit}"
    return str(n)


def num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.6g}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def shape_text(shape: Any) -> str:
    return "[" + ", ".join("?" if s is None else str(s) for s in (shape or [])) + "]"


# ---- SVG ----------------------------------------------------------------------------------

def histogram_svg(hist: dict[str, Any] | None, *, width: int = 320, height: int = 90,
                  color: str = "#4f6bed", label: str = "histogram") -> str:
    """Bars of `hist` ({"edges", "counts"}) with the range under them."""
    if not hist or not hist.get("counts"):
        return ""
    counts, edges = hist["counts"], hist["edges"]
    top = max(counts) or 1
    plot_h = height - 16
    bw = width / len(counts)
    bars = []
    for i, c in enumerate(counts):
        h = 0 if c == 0 else max(1.0, plot_h * c / top)
        bars.append(f'<rect x="{i * bw:.2f}" y="{plot_h - h:.2f}" width="{max(bw - 1, 0.5):.2f}" '
                    f'height="{h:.2f}" fill="{color}"><title>{esc(num(edges[i]))} .. '
                    f'{esc(num(edges[min(i + 1, len(edges) - 1)]))}: {c:,}</title></rect>')
    return (f'<svg class="hrv-hist" role="img" aria-label="{esc(label)}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" '
            f'xmlns="http://www.w3.org/2000/svg">'
            f'<line x1="0" y1="{plot_h}" x2="{width}" y2="{plot_h}" stroke="#d0d7de"/>'
            + "".join(bars) +
            f'<text x="0" y="{height - 3}">{esc(num(edges[0]))}</text>'
            f'<text x="{width}" y="{height - 3}" text-anchor="end">{esc(num(edges[-1]))}</text>'
            '</svg>')


def pattern_svg(pattern: dict[str, Any] | None, *, size: int = 240) -> str:
    """The non-zeros per cell of a sparse tensor (darker: fuller)."""
    if not pattern or not pattern.get("grid"):
        return ""
    grid = pattern["grid"]
    gr, gc = len(grid), len(grid[0])
    cap = max(1, pattern.get("cell_capacity") or 1)
    w = size if gc >= gr else max(24, size * gc // gr)
    h = size if gr >= gc else max(24, size * gr // gc)
    cw, ch = w / gc, h / gr
    cells = []
    for i, row in enumerate(grid):
        for j, n in enumerate(row):
            if n:
                a = 0.15 + 0.85 * min(1.0, n / cap) ** 0.5
                cells.append(f'<rect x="{j * cw:.2f}" y="{i * ch:.2f}" width="{cw:.2f}" '
                             f'height="{ch:.2f}" fill="#1a7f37" fill-opacity="{a:.3f}">'
                             f'<title>{n:,} non-zeros</title></rect>')
    return (f'<svg class="hrv-pattern" role="img" aria-label="non-zero pattern" width="{w}" '
            f'height="{h}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg">'
            f'<rect x="0" y="0" width="{w}" height="{h}" fill="#f6f8fa" stroke="#d0d7de"/>'
            + "".join(cells) + "</svg>")


_PALETTE = ("#4f6bed", "#1a7f37", "#bf8700", "#cf222e", "#8250df", "#0969da", "#bc4c00")


def placement_svg(p: dict[str, Any] | None, *, size: int = 240) -> str:
    """A composite's members as boxes over its last two dimensions (or its one)."""
    if not p:
        return ""
    shape = p["shape"] or [1]
    rows, cols = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
    rows, cols = max(rows, 1), max(cols, 1)
    w = size if cols >= rows else max(40, size * cols // rows)
    h = size if rows >= cols else max(24, size * rows // cols)
    sx, sy = w / cols, h / rows
    boxes: list[str] = []

    def add(members: list[dict[str, Any]], depth: int, prefix: str) -> None:
        for m in members:
            at = m.get("at")
            ms = m["shape"] or [1]
            if at is None:
                continue
            r0, c0 = (at[-2], at[-1]) if len(at) >= 2 else (0, at[-1] if at else 0)
            mr, mc = (ms[-2], ms[-1]) if len(ms) >= 2 else (1, ms[-1] if ms else 1)
            color = _PALETTE[(len(boxes) + depth) % len(_PALETTE)]
            label = f"{prefix}{m['index']}"
            inset = 1.5 * depth
            boxes.append(
                f'<rect x="{c0 * sx + inset:.2f}" y="{r0 * sy + inset:.2f}" '
                f'width="{max(mc * sx - 2 * inset, 1):.2f}" '
                f'height="{max(mr * sy - 2 * inset, 1):.2f}" fill="{color}" '
                f'fill-opacity="0.25" stroke="{color}" stroke-width="1.5">'
                f'<title>member {esc(label)}{" (" + esc(m["role"]) + ")" if m.get("role") else ""}: '
                f'{esc(shape_text(ms))} at {esc(shape_text(at))}</title></rect>'
                f'<text x="{c0 * sx + inset + 3:.2f}" y="{r0 * sy + inset + 11:.2f}">'
                f'{esc(label)}</text>')
            if m.get("composite"):
                add(m["composite"]["members"], depth + 1, label + ".")

    add(p["members"], 0, "")
    return (f'<svg class="hrv-placement" role="img" aria-label="members placement" width="{w}" '
            f'height="{h}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg">'
            f'<rect x="0" y="0" width="{w}" height="{h}" fill="#fff" stroke="#8c959f"/>'
            + "".join(boxes) + "</svg>")


def bars_html(table: dict[str, dict[str, int]], total: int, key: str = "bytes") -> str:
    """One row per key of `table` with a bar for its share of `total`."""
    out = ['<table><tr><th></th><th>tensors</th><th>parameters</th><th>bytes</th><th></th></tr>']
    for k, t in table.items():
        share = t[key] / total if total else 0
        out.append(f'<tr><td>{esc(k)}</td><td class="n">{t["tensors"]:,}</td>'
                   f'<td class="n">{esc(human_count(t["params"]))}</td>'
                   f'<td class="n">{esc(human_bytes(t["bytes"]))}</td>'
                   f'<td><svg width="120" height="10"><rect width="{120 * share:.1f}" '
                   f'height="10" fill="#4f6bed"/></svg></td></tr>')
    out.append("</table>")
    return "".join(out)


# ---- the summary ----------------------------------------------------------------------------

def summary_html(s: dict[str, Any]) -> str:
    """The summary of FileModel.summary(): counts, sizes, dtypes, layouts,
    quantization, checksums, KV, errors."""
    q = s["quantization"]
    cards = [("tensors", f'{s["tensors"]:,}'), ("parameters", human_count(s["params"])),
             ("data", human_bytes(s["data_bytes"])), ("file", human_bytes(s["size"])),
             ("overhead", human_bytes(s["overhead"])), ("views", f'{s["views"]:,}'),
             ("composites", f'{s["composites"]:,}'), ("sparse", f'{s["sparse"]:,}'),
             ("quantized", f'{q["quantized"]["tensors"]:,}')]
    out = ['<div class="hrv hrv-summary">',
           f'<div class="hrv-title">{esc(s["name"])}'
           + (f' <span class="hrv-muted">{esc(s["path"])}</span>' if s["path"] != s["name"]
              else "") + '</div>',
           '<div class="hrv-cards">']
    for k, v in cards:
        out.append(f'<div class="hrv-card"><span class="hrv-muted">{esc(k)}</span>'
                   f'<b>{esc(v)}</b></div>')
    out.append("</div>")
    for msg in s["errors"][:20]:
        out.append(f'<div class="hrv-err">{esc(msg)}</div>')
    if len(s["errors"]) > 20:
        out.append(f'<div class="hrv-err">... {len(s["errors"]) - 20} more</div>')
    total = sum(t["bytes"] for t in s["by_dtype"].values())
    if s["by_dtype"]:
        out.append('<div class="hrv-title">by dtype</div>' + bars_html(s["by_dtype"], total))
        out.append('<div class="hrv-title">by layout</div>' + bars_html(s["by_layout"], total))
        qd = {"quantized": q["quantized"], "dense": q["dense"]}
        out.append('<div class="hrv-title">quantized / not</div>' + bars_html(qd, total))
    h = s.get("header") or {}
    out.append('<table>')
    out.append(f'<tr><th>checksums</th><td>{esc(s["checksums"])}</td></tr>')
    if h:
        out.append(f'<tr><th>format</th><td>.hrry {esc(h.get("version"))}, data aligned to '
                   f'{esc(h.get("alignment"))} bytes</td></tr>')
    out.append("</table>")
    if s["kv"]:
        out.append('<div class="hrv-title">KV metadata</div><table>')
        for k, v in list(s["kv"].items())[:100]:
            text = str(v)
            if len(text) > 300:
                text = text[:300] + f"... ({len(text)} characters)"
            out.append(f'<tr><th>{esc(k)}</th><td>{esc(text)}</td></tr>')
        out.append("</table>")
    out.append("</div>")
    return "".join(out)


def table_html(rows: list[dict[str, Any]], limit: int = MAX_TABLE_ROWS) -> str:
    out = ['<table class="hrv-table"><tr><th>name</th><th>shape</th><th>dtype</th>'
           '<th>layout</th><th>scheme</th><th>bytes</th></tr>']
    for r in rows[:limit]:
        layout = (f'view of {esc(r["view_of"])}' if r.get("view_of") else esc(r["layout"] or "?"))
        name = esc(r["name"])
        if r.get("member_of"):
            name = f'<span class="hrv-muted">{name}</span>'
        err = f' <span class="hrv-err">{esc(r["error"])}</span>' if r.get("error") else ""
        out.append(f'<tr><td>{name}{err}</td><td>{esc(shape_text(r["shape"]))}</td>'
                   f'<td>{esc(r["dtype"] or "?")}</td><td>{layout}</td>'
                   f'<td>{esc(r["scheme"] or "")}</td>'
                   f'<td class="n">{esc(human_bytes(r["bytes"]))}</td></tr>')
    if len(rows) > limit:
        out.append(f'<tr><td colspan="6" class="hrv-muted">... {len(rows) - limit:,} more '
                   f'(hurray view shows them all)</td></tr>')
    out.append("</table>")
    return "".join(out)


# ---- notebooks ----------------------------------------------------------------------------

def file_html(f: Any) -> str:
    """A hurray.File as HTML: the summary and the table of its tensors (the
    first MAX_TABLE_ROWS), from its descriptors: no tensor data is read."""
    try:
        _fn, args = f.__reduce__()      # the path or URL it was opened from
        path = str(args[0])
    except Exception:  # noqa: BLE001 - closed, or opened from memory or a source
        path = "hurray.File"
    try:
        m = _model.FileModel(path, file=f)
    except Exception as e:  # noqa: BLE001 - a closed file
        return (f'{STYLE}<div class="hrv"><div class="hrv-err">{esc(_model._error_text(e))}'
                f'</div></div>')
    return (STYLE + summary_html(m.summary()) + '<div class="hrv">'
            + table_html(m.rows()) + "</div>")


def _tensor_rows(t: Any) -> list[tuple[str, str]]:
    rows = [("shape", shape_text(t.shape)), ("dtype", t.dtype.name)]
    if isinstance(t, _model._hurray.Composite):
        rows += [("rule", t.composition_rule), ("members", str(t.member_count))]
        if t.combine_op:
            rows.append(("combine", t.combine_op))
        return rows
    layout = t.layout
    rows.append(("layout", layout.name))
    q = t.quantization
    if q is not None:
        rows.append(("quantization", _model.describe_scheme(q) or ""))
    try:
        if layout.name in _model.SPARSE_LAYOUTS and hasattr(layout, "nnz"):
            rows.append(("nnz", f"{layout.nnz:,}"))
    except Exception:  # noqa: BLE001
        pass
    dev = t.device
    rows.append(("device", f"{dev.kind}:{dev.device_id}"))
    sizes = [h.byte_size for h in t.buffer_handles]
    rows.append(("buffers", f"{len(sizes)}: " + ", ".join(human_bytes(s) for s in sizes)))
    if t.byte_offset:
        rows.append(("byte offset", str(t.byte_offset)))
    if t.shard is not None:
        rows.append(("shard", f"{shape_text(t.shard.shard_offset)} of "
                              f"{shape_text(t.shard.parent_shape)}"))
    st = t.statistics
    if st is not None:
        rows.append(("statistics", repr(st)))
    return rows


def _host_sample(t: Any) -> tuple[Any, bool] | None:
    """A dense host tensor's values, sampled to SAMPLE_ELEMENTS (None: not shown)."""
    if isinstance(t, _model._hurray.Composite) or t.quantization is not None:
        return None
    if t.layout.name not in ("row_major", "col_major", "strided") or t.device.kind != "cpu":
        return None
    if t.dtype.is_extension or t.size is None:
        return None
    np = _model._np()
    try:
        if t.layout.name == "row_major":
            arr = _model._as_numbers(t)
        else:
            arr = np.asarray(t)
            if arr.dtype.kind == "c":
                arr = np.abs(arr)
    except Exception:  # noqa: BLE001 - a type NumPy cannot hold: no histogram
        return None
    plan, sampled = _model.sample_plan(list(arr.shape))
    parts = [np.asarray(arr[idx]).reshape(-1) for idx in plan]
    x = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if x.dtype.kind not in "biuf":
        x = x.astype(np.float64)
    return x, sampled


def stats_html(v: dict[str, Any], sampled: bool = False, total: int | None = None,
               label: str = "values") -> str:
    out = ['<table>']
    for k in ("min", "max", "mean", "std"):
        out.append(f'<tr><th>{k}</th><td class="n">{esc(num(v.get(k)))}</td></tr>')
    out.append(f'<tr><th>NaN / Inf</th><td class="n">{v.get("nan", 0):,} / {v.get("inf", 0):,}'
               f'</td></tr><tr><th>zeros</th><td class="n">{v.get("zeros", 0):,}</td></tr>')
    out.append("</table>")
    note = (f'sampled: {v["count"]:,} of {total:,} elements' if sampled and total else
            f'{v["count"]:,} elements')
    return ("".join(out) + histogram_svg(v.get("histogram"), label=f"{label} histogram")
            + f'<div class="hrv-muted hrv-note">{esc(note)}</div>')


def tensor_html(t: Any) -> str:
    """A hurray.Tensor (or Composite) as HTML: its metadata and, when it is a
    dense numeric tensor in host memory, a histogram of its values."""
    out = [STYLE, '<div class="hrv hrv-tensor"><div class="hrv-title">hurray.',
           "Composite" if isinstance(t, _model._hurray.Composite) else "Tensor",
           "</div><table>"]
    try:
        for k, v in _tensor_rows(t):
            out.append(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>")
    except Exception as e:  # noqa: BLE001
        out.append(f'<tr><td class="hrv-err">{esc(_model._error_text(e))}</td></tr>')
    out.append("</table>")
    if isinstance(t, _model._hurray.Composite):
        try:
            out.append(placement_svg(_model.placement(t)))
        except Exception as e:  # noqa: BLE001
            out.append(f'<div class="hrv-err">{esc(_model._error_text(e))}</div>')
    else:
        got = None
        try:
            got = _host_sample(t)
        except Exception as e:  # noqa: BLE001
            out.append(f'<div class="hrv-err">{esc(_model._error_text(e))}</div>')
        if got is not None:
            x, sampled = got
            np = _model._np()
            out.append(stats_html(_model.value_stats(np, x), sampled, t.size))
    out.append("</div>")
    return "".join(out)


# ---- the page's fragments ---------------------------------------------------------------------

def tensor_detail_html(st: dict[str, Any]) -> str:
    """The detail panel of the page for tensor_stats()'s result."""
    row = st["row"]
    out = ['<div class="hrv hrv-detail">', f'<div class="hrv-title">{esc(st["name"])}</div>',
           "<table>"]
    meta = [("shape", shape_text(row["shape"])), ("dtype", row["dtype"]),
            ("layout", f'view of {row["view_of"]}' if row.get("view_of") else row["layout"]),
            ("scheme", row.get("scheme")), ("bytes", f'{row["bytes"]:,}'),
            ("parameters", f'{row["params"]:,}'), ("member of", row.get("member_of")),
            ("nnz", row.get("nnz")), ("rule", row.get("rule"))]
    if row.get("shard"):
        meta.append(("shard", f'{shape_text(row["shard"]["offset"])} of '
                              f'{shape_text(row["shard"]["parent_shape"])}'))
    if row.get("byte_strides") is not None:
        meta.append(("byte offset / strides",
                     f'{row.get("byte_offset")} / {shape_text(row["byte_strides"])}'))
    for k, v in meta:
        if v is not None:
            out.append(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>")
    out.append("</table>")
    if st.get("error"):
        out.append(f'<div class="hrv-err">{esc(st["error"])}</div>')
    if st.get("values"):
        out.append('<div class="hrv-title">values</div>')
        out.append(stats_html(st["values"], st.get("sampled", False), st.get("elements")))
    if st.get("values_note"):
        out.append(f'<div class="hrv-muted">{esc(st["values_note"])}</div>')
    if st.get("scales"):
        out.append('<div class="hrv-title">scales</div>')
        out.append(stats_html(st["scales"], label="scales"))
    e = st.get("error_vs")
    if e:
        rel = "-" if e["relative_rms"] is None else f'{100 * e["relative_rms"]:.3g}%'
        out.append(f'<div class="hrv-title">dequantization error against '
                   f'{esc(e["against"])}</div><table>'
                   f'<tr><th>max |error|</th><td class="n">{esc(num(e["max_abs"]))}</td></tr>'
                   f'<tr><th>rms error</th><td class="n">{esc(num(e["rms"]))} ({esc(rel)} of '
                   f'the values\' rms)</td></tr></table>'
                   + histogram_svg(e.get("histogram"), color="#cf222e",
                                   label="error histogram"))
    if st.get("density") is not None:
        out.append(f'<div>density: {100 * st["density"]:.4g}%</div>')
    if st.get("pattern"):
        p = st["pattern"]
        out.append(f'<div class="hrv-title">non-zero pattern ({p["rows"]:,} x {p["cols"]:,})'
                   f'</div>' + pattern_svg(p))
    if st.get("pattern_note"):
        out.append(f'<div class="hrv-muted">{esc(st["pattern_note"])}</div>')
    if st.get("placement"):
        p = st["placement"]
        out.append(f'<div class="hrv-title">members ({esc(p["rule"])}'
                   f'{", " + esc(p["combine_op"]) if p.get("combine_op") else ""})</div>'
                   + placement_svg(p) + "<table>")
        out.append("<tr><th>#</th><th>shape</th><th>at</th><th>layout</th><th>role</th></tr>")

        def rows(members, prefix):
            for m in members:
                out.append(f'<tr><td>{esc(prefix + str(m["index"]))}</td>'
                           f'<td>{esc(shape_text(m["shape"]))}</td>'
                           f'<td>{esc(shape_text(m["at"]) if m.get("at") else "-")}</td>'
                           f'<td>{esc(m["layout"])}</td><td>{esc(m.get("role") or "")}</td></tr>')
                if m.get("composite"):
                    rows(m["composite"]["members"], prefix + str(m["index"]) + ".")
        rows(p["members"], "")
        out.append("</table>")
    out.append("</div>")
    return "".join(out)
