"""repr and str of hurray.Tensor and hurray.Composite (cold paths, called from C).

Data is rendered only for a host tensor whose every dimension is known: a
dynamic dimension reaches NumPy as -1 ("infer"), which would print an
unresolved tensor as an empty one. Sparse and other non-dense tensors show
their metadata (layout, nnz); their buffers are reached with the component
accessors or Tensor.buffer(i).
"""

_DENSE = ("row_major", "col_major", "strided", "tiled", "morton", "hilbert")


def _meta(t):
    layout = t.layout
    extra = ""
    if layout.name != "row_major":
        extra = f", layout='{layout.name}'"
        nnz = getattr(t, "nnz", None)
        if nnz is not None:
            extra += f", nnz={nnz}"
    return f"hurray.Tensor(shape={t.shape!r}, dtype={t.dtype}{extra}, device={t.device!r})"


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
        return _meta(t)
    extra = "" if t.device.kind == "cpu" and t.device.device_id == 0 else f", device={t.device!r}"
    return f"{prefix}{data}, dtype={t.dtype}{extra})"


def tensor_str(t):
    data = _data(t, "")
    return data if data is not None else _meta(t)


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
