"""Shared helpers of the Python suite."""

import gc
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def golden_dir():
    """The reference corpus directory, or None when it is absent."""
    d = os.environ.get("HURRAY_GOLDEN_DIR")
    p = pathlib.Path(d) if d else ROOT.parent / "shared" / "golden"
    return p if (p / "manifest.json").is_file() else None


def aligned_array(shape, dtype, align=64, offset=0, fill=None):
    """A NumPy array whose data starts `offset` bytes past an `align` boundary."""
    import numpy as np

    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.zeros(n + 2 * align + offset + 64, dtype=np.uint8)
    start = (-raw.ctypes.data) % align + offset
    arr = raw[start:start + n].view(dtype).reshape(shape)
    if fill is not None:
        arr[...] = fill
    assert arr.ctypes.data % align == offset % align
    return arr


def data_ptr(obj):
    """Address of element [0, ...] of anything exposing __array_interface__."""
    return obj.__array_interface__["data"][0]


def collect():
    for _ in range(3):
        gc.collect()


@pytest.fixture
def np():
    return pytest.importorskip("numpy")
