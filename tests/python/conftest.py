"""Shared helpers of the Python suite."""

import gc
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


_frozen_for = {"module": None}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the first test of each module, what is alive (NumPy, PyTorch, JAX
    and what the earlier modules imported or kept, pytest's own items: some
    300,000 objects) is frozen (gc.freeze): each gc.collect() of the lifetime
    tests (collect()) then walks only what this module made, instead of 0.2-1 s
    of walking the rest each time. Garbage is collected first, and what a module
    creates is collected as before."""
    if item.module is not _frozen_for["module"]:
        _frozen_for["module"] = item.module
        gc.collect()
        gc.freeze()


def golden_dir():
    """The reference corpus directory, or None when it is absent."""
    d = os.environ.get("HURRAY_GOLDEN_DIR")
    p = pathlib.Path(d) if d else ROOT.parent / "shared" / "golden"
    return p if (p / "manifest.json").is_file() else None


def inspector_path():
    """The hurray-inspect under test: $HURRAY_INSPECT, else the one this checkout
    built (build/, which the test command builds first), else the installed one
    (an older install on PATH must not stand in for the program under test);
    None when there is none."""
    exe = os.environ.get("HURRAY_INSPECT")
    here = pathlib.Path(__file__).resolve().parents[2] / "build" / "cli" / "hurray-inspect"
    if not exe and here.exists():
        exe = str(here)
    if not exe:
        from hurray._cli._commands import find_inspector
        exe = find_inspector()
    return exe or None


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
