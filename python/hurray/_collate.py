"""hurray.collate: a collate function for batches holding hurray tensors.

For torch's DataLoader (``DataLoader(ds, batch_size=8, collate_fn=hurray.collate)``)
or any batching loop. Dense host tensors of one shape and dtype stack into one
batch tensor (a new row-major tensor with a leading batch dimension, in aligned
memory of its own: one copy, as torch's default_collate makes); quantized,
sparse, block-paged and composite tensors, tensors of different shapes or dtypes,
and tensors on another device stay a list (a quantized tensor's scales, or a
sparse tensor's nnz, differ between samples, so no one descriptor describes a
stack of them). Tuples, lists, named tuples and mappings are collated element
by element; anything else goes to torch's default_collate when torch is
installed, else stays a list. docs/guide/processes.md has the DataLoader recipe.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from . import _hurray
from ._hurray import Composite, Tensor

_DENSE = ("row_major", "col_major", "strided")


def collate(batch):
    """collate(batch)

    One batch from a list of samples: hurray tensors stacked where one
    descriptor can describe the stack (dense host tensors of equal shape and
    dtype), else kept as a list; containers collated element by element; the
    rest through torch's default_collate (when torch is installed).
    """
    batch = list(batch)
    if not batch:
        return batch
    if _in_torch_worker():
        _check_picklable(batch)
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch) if _stackable(batch) else batch
    if isinstance(elem, Composite):
        return batch
    if isinstance(elem, Mapping):
        return {k: collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(s) != len(elem) for s in batch):
            raise ValueError("collate: every sample of a batch must have the same number of "
                             "fields")
        return [collate(list(s)) for s in zip(*batch)]
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return batch
    return torch.utils.data.default_collate(batch)


def _in_torch_worker() -> bool:
    data = getattr(sys.modules.get("torch.utils.data"), "get_worker_info", None)
    return data is not None and data() is not None


def _check_picklable(batch) -> None:
    # In a DataLoader worker the batch is pickled by the result queue's feeder
    # thread, where an error is printed and the batch dropped (the parent then
    # waits for it forever). Refusing here, in the worker's own thread, sends
    # the error to the parent instead.
    for x in batch:
        if isinstance(x, Tensor):
            x.__reduce_ex__(5)  # raises what pickling would (device memory)
        elif isinstance(x, Composite):
            _check_picklable(x.members)


def _stackable(batch) -> bool:
    first = batch[0]
    if (first.quantization is not None or first.layout.name not in _DENSE
            or first.device.kind != "cpu" or first.size is None or first.sync_mode != "producer_synced"):
        return False
    if first.dtype.bit_width % 8 and first.layout.name != "row_major":
        return False
    for t in batch:
        if not isinstance(t, Tensor) or t.dtype is not first.dtype or t.shape != first.shape:
            return False
        if t.quantization is not None or t.layout.name not in _DENSE or t.device != first.device:
            return False
        if t.dtype.bit_width % 8 and (t.layout.name != "row_major" or
                                      (t.size * t.dtype.bit_width) % 8):
            return False  # packed sub-byte samples stack only on byte boundaries
    return True


def stack(tensors) -> Tensor:
    """The dense tensors `tensors` (one shape and dtype) stacked along a new
    leading dimension, in a new row-major tensor (one copy)."""
    import numpy as np

    first = tensors[0]
    out = _hurray.empty((len(tensors),) + tuple(first.shape), dtype=first.dtype)
    if first.dtype.bit_width % 8 == 0:
        dst = np.asarray(out)
        for i, t in enumerate(tensors):
            dst[i] = np.asarray(t)
        return out
    nbytes = _hurray.buffer_size_bytes(first.dtype, first.size)
    dst = np.asarray(out.buffer(0))
    for i, t in enumerate(tensors):
        src = np.asarray(t.buffer(0))
        dst[i * nbytes:(i + 1) * nbytes] = src[t.byte_offset:t.byte_offset + nbytes]
    return out
