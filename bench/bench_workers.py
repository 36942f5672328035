"""Worker functions of bench/processes.py (importable by spawn and Dask workers)."""

import numpy as np

import hurray


def make(kind, nbytes, seed):
    raw = np.empty(nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    a = raw[start:start + nbytes].view(np.float32)
    a[:] = seed
    return hurray.from_numpy(a) if kind == "hurray" else a


def nbytes(x):
    return x.buffer_handles[0].byte_size if isinstance(x, hurray.Tensor) else x.nbytes


def echo(x):
    return x


def nbytes_after_copy(x):
    """nbytes, after copying x once into aligned memory of its own: what a receiver
    that needs the 64-byte floor pays for a misaligned frame."""
    return hurray.from_numpy(x, copy=True).buffer_handles[0].byte_size


def receiver_stats():
    """What this process's Dask deserializer did with hurray buffers (hurray/_dask.py)."""
    from hurray import _dask
    return dict(_dask.stats)
