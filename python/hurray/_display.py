"""repr and str of hurray.Tensor and hurray.Composite (cold paths, called from C),
and the print options that steer them.

What is not the default is named: the quantization scheme (quant=...), the
layout, the sync mode. Data is rendered only for a host tensor whose every
dimension is known: a
dynamic dimension reaches NumPy as -1 ("infer"), which would print an
unresolved tensor as an empty one. Sparse and other non-dense tensors show
their metadata (layout, nnz); with ``sparse_display="content"`` a COO, CSR or
CSC tensor also shows its component arrays. Their buffers are reached with the
component accessors or Tensor.buffer(i).

The print options live in one ContextVar holding an immutable mapping, so each
thread and asyncio task sees its own: a new thread starts from the defaults (or
a copy of its creator's context where threads inherit contexts), a task from a
copy of its creator's context.
"""

import contextvars
import types

_DEFAULTS = types.MappingProxyType({"sparse_display": "metadata"})
_SPARSE_DISPLAY = ("metadata", "content")
_OPTIONS = contextvars.ContextVar("hurray.print_options", default=_DEFAULTS)


def _check_sparse_display(value):
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(
            f"sparse_display must be a str ('metadata' or 'content'), not {type(value).__name__}"
        )
    if value not in _SPARSE_DISPLAY:
        raise ValueError(
            f"invalid sparse_display value {value!r}; expected 'metadata' or 'content'"
        )


def _merged(sparse_display):
    current = _OPTIONS.get()
    if sparse_display is None or sparse_display == current["sparse_display"]:
        return current
    return types.MappingProxyType({**current, "sparse_display": sparse_display})


def set_print_options(*, sparse_display=None):
    """set_print_options(*, sparse_display=None)

    Set print options for the current context (thread or asyncio task). An
    option left as None is unchanged. ``sparse_display``: ``"metadata"`` (the
    default) shows a COO, CSR or CSC tensor's layout, shape, nnz and dtype;
    ``"content"`` also shows its component arrays. ValueError for any other
    string, TypeError for a value that is not a str.
    """
    _check_sparse_display(sparse_display)
    _OPTIONS.set(_merged(sparse_display))


def get_print_options():
    """get_print_options()

    The print options of the current context, as a new dict.
    """
    return dict(_OPTIONS.get())


class PrintOptionsCtx:
    """PrintOptionsCtx(*, sparse_display=None)

    Context manager that sets print options on entry and restores the exact
    previous ones on exit, exception or not (what ``hurray.print_options``
    returns). The options are checked when it is made. Nesting works, and so
    does entering the same object again.
    """

    __slots__ = ("_sparse_display", "_tokens")

    def __init__(self, *, sparse_display=None):
        _check_sparse_display(sparse_display)
        self._sparse_display = sparse_display
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_OPTIONS.set(_merged(self._sparse_display)))
        return None

    def __exit__(self, exc_type, exc, tb):
        _OPTIONS.reset(self._tokens.pop())
        return False

    def __repr__(self):
        return f"hurray.PrintOptionsCtx(sparse_display={self._sparse_display!r})"


def print_options(*, sparse_display=None):
    """print_options(*, sparse_display=None)

    A context manager (PrintOptionsCtx) applying these print options inside a
    ``with`` block and restoring the previous ones when it ends.
    """
    return PrintOptionsCtx(sparse_display=sparse_display)


_DENSE = ("row_major", "col_major", "strided", "tiled", "morton", "hilbert")


def _f32_text(v):
    """The shortest decimal that reads back as the same float32."""
    import struct

    for p in range(1, 10):
        text = f"{v:.{p}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == v:
            break
    if not any(c in text for c in ".einn"):
        text += ".0"
    return text


def _quant(t):
    """The quantization scheme in one phrase: quant=per_block(int4, axis=1,
    block=32, scale=float16), ``asymmetric`` when the scheme has zero points;
    None for a tensor that is not quantized."""
    q = t.quantization
    if q is None:
        return None
    name = q.scheme
    if name == "per_tensor_affine":
        return f"per_tensor({t.dtype}, scale={_f32_text(q.scale)}, zero_point={q.zero_point})"
    if name == "per_channel_affine":
        parts = [f"axis={q.axis}"]
    elif name in ("per_block_affine", "nf4", "mxfp"):
        parts = [f"axis={q.axis}", f"block={q.block_size}"]
        if name == "per_block_affine":
            parts.append(f"scale={q.scale_type}")
    else:
        return f"opaque(scheme_tag=0x{q.scheme_tag:02X})"
    if getattr(q, "zero_point_buffer_index", None) is not None:
        parts.append("asymmetric")
    short = {"per_channel_affine": "per_channel", "per_block_affine": "per_block"}.get(name, name)
    return f"{short}({t.dtype}, {', '.join(parts)})"


def _non_defaults(t, with_nnz):
    """', quant=..., layout=..., nnz=..., sync_mode=...' for what is not the default."""
    extra = ""
    quant = _quant(t)
    if quant is not None:
        extra += f", quant={quant}"
    layout = t.layout
    if layout.name != "row_major":
        extra += f", layout='{layout.name}'"
        nnz = getattr(t, "nnz", None) if with_nnz else None
        if nnz is not None:
            extra += f", nnz={nnz}"
    if t.sync_mode != "producer_synced":
        extra += f", sync_mode='{t.sync_mode}'"
    return extra


def _meta(t):
    extra = _non_defaults(t, True)
    return f"hurray.Tensor(shape={t.shape!r}, dtype={t.dtype}{extra}, device={t.device!r})"


# The component arrays "content" shows, in buffer-table order.
_COMPONENTS = {
    "coo": ("indices", "values"),
    "csr": ("values", "col_indices", "row_ptr"),
    "csc": ("values", "row_indices", "col_ptr"),
}


def _sparse(t):
    """The metadata, and with sparse_display="content" the component arrays of
    a COO, CSR or CSC tensor, one per line; the metadata alone when an array
    cannot be rendered (no NumPy, a device buffer, no NumPy dtype)."""
    meta = _meta(t)
    names = _COMPONENTS.get(t.layout.name)
    if names is None or _OPTIONS.get()["sparse_display"] != "content":
        return meta
    if t.size is None or t.device.kind != "cpu":
        return meta
    try:
        import numpy as np

        parts = []
        for name in names:
            prefix = f"  {name}="
            arr = np.asarray(getattr(t, name))
            parts.append(prefix + np.array2string(arr, separator=", ", prefix=prefix))
    except Exception:  # no NumPy, no NumPy dtype, unreadable buffers: metadata only
        return meta
    return meta[:-1] + ",\n" + ",\n".join(parts) + ")"


def _data(t, prefix):
    if t.size is None or t.device.kind != "cpu" or t.layout.name not in _DENSE:
        return None
    try:
        import numpy as np

        arr = np.asarray(t)
        return np.array2string(arr, separator=", ", prefix=prefix)
    except Exception:  # no NumPy, no NumPy dtype, unreadable buffers: metadata only
        return None


def tensor_repr(t):
    prefix = "hurray.Tensor("
    data = _data(t, prefix)
    if data is None:
        return _sparse(t)
    extra = _non_defaults(t, False)
    if not (t.device.kind == "cpu" and t.device.device_id == 0):
        extra += f", device={t.device!r}"
    return f"{prefix}{data}, dtype={t.dtype}{extra})"


def tensor_str(t):
    data = _data(t, "")
    return data if data is not None else _sparse(t)


def _member_line(m):
    """One line for a member tensor: metadata only (a composite can be large)."""
    text = f"hurray.Tensor(shape={m.shape!r}, dtype={m.dtype}, layout='{m.layout.name}'"
    if m.shard is not None:
        text += f", shard_offset={m.shard.shard_offset!r}"
    return text + ")"


def composite_repr(c, depth=0):
    """Depth-aware repr: one member per line, nested composites indented."""
    pad = "  " * (depth + 1)
    head = f"hurray.Composite('{c.composition_rule}', shape={c.shape!r}, dtype={c.dtype}"
    if c.combine_op is not None:
        head += f", combine_op='{c.combine_op}'"
    if not c.members:
        return head + ", members=[])"
    lines = [head + ", members=["]
    for member, role in zip(c.members, c.member_roles):
        label = f"{role}: " if role is not None else ""
        if hasattr(member, "member_roles"):
            body = composite_repr(member, depth + 1)
        else:
            body = _member_line(member)
        lines.append(f"{pad}{label}{body},")
    lines.append("  " * depth + "])")
    return "\n".join(lines)


# ---- notebooks: _repr_html_ of hurray.File and hurray.Tensor (called from C) ----

def file_html(f):
    """File._repr_html_: the viewer's summary and table of the file
    (hurray/_view/render.py, imported on first use: `import hurray` does not
    import the viewer)."""
    from ._view import render
    return render.file_html(f)


def tensor_html(t):
    """Tensor._repr_html_: the viewer's metadata table and, for a dense host
    tensor, statistics and a histogram of its values."""
    from ._view import render
    return render.tensor_html(t)
