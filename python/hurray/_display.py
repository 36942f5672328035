"""repr and str of hurray.Tensor (cold paths, called from the C type).

Data is rendered only for a host tensor whose every dimension is known: a
dynamic dimension reaches NumPy as -1 ("infer"), which would print an
unresolved tensor as an empty one.
"""


def _meta(t):
    return f"hurray.Tensor(shape={t.shape!r}, dtype={t.dtype}, device={t.device!r})"


def _data(t, prefix):
    if t.size is None or t.device.kind != "cpu" or t.layout.name not in (
            "row_major", "col_major", "strided"):
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
