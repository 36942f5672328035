"""Shared helpers of the Python suite, the `slow` marker and the hooks that keep it true."""

import gc
import multiprocessing.process
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The `slow` marker (docs/internals/python-internals.md § Contributing: the inner loop):
# scripts/quick.sh runs `pytest -m "not slow"`, scripts/test.sh runs everything.
SLOW = ("slow: starts another interpreter (a Python subprocess, the hurray command, "
        "multiprocessing), a Ray or Dask cluster or workers, or takes over about a second; "
        "`-m 'not slow'` (scripts/quick.sh) leaves it out, scripts/test.sh runs it")


def pytest_configure(config):
    config.addinivalue_line("markers", SLOW)


# The sanitizer pass (scripts/python_tests.sh --asan) checks our C code; tests whose
# cost is a real server (SeaweedFS, nginx, the fault server of test_remote.py) or another
# library's machinery (transformers) add no C path of ours that the rest of the pass
# leaves out (the byte-source callback runs under the sanitizers in test_remote.py's
# test_file_from_a_source_object_reads_only_what_is_asked), so the plain pass alone
# runs them: that keeps scripts/test.sh inside its budget. Likewise a few tests whose
# seconds go to PyTorch's DataLoader workers or to measuring a process's peak memory
# (meaningless under ASan's allocator): the pickling and conversion paths they cross run
# under the sanitizers in test_pickle.py and test_convert.py's other tests.
_SERVERS = {"served", "faults", "nginx", "s3"}
_PLAIN_PASS_ONLY_FILES = {"test_transformers.py"}
_PLAIN_PASS_ONLY_TESTS = {"test_the_dataloader_recipe_of_the_docs_runs",
                          "test_dataloader_with_workers_returns_hurray_batches",
                          "test_peak_memory_is_one_tensor_not_the_checkpoint"}


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("HURRAY_EXPECT_ASAN"):
        return
    skip = pytest.mark.skip(reason="a real server, another library's machinery or a peak-memory "
                                   "measure: the plain pass runs it (tests/python/conftest.py)")
    for item in items:
        if _SERVERS & set(getattr(item, "fixturenames", ())) or \
                item.path.name in _PLAIN_PASS_ONLY_FILES or \
                getattr(item, "originalname", item.name) in _PLAIN_PASS_ONLY_TESTS:
            item.add_marker(skip)


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


# A test that starts an interpreter must be marked slow, or the fast suite stops
# being fast without anyone noticing: while a test runs (setup, call and
# teardown, so module fixtures count for the first test that uses them), a
# Python subprocess or a multiprocessing child started by a test without the
# mark raises, and the test fails even where its own code catches the error.
_running = {"item": None, "refused": None}


def _interpreter(args):
    """Whether a Popen argument list starts Python (this one, any python*, or
    the hurray command, a Python script)."""
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    if not argv:
        return False
    first = os.fsdecode(argv[0])
    name = os.path.basename(first)
    found = shutil.which(first) or first
    return (name.startswith("python") or name == "hurray"
            or os.path.realpath(found) == os.path.realpath(sys.executable))


def _refuse(what):
    item = _running["item"]
    if item is None or item.get_closest_marker("slow") is not None:
        return
    _running["refused"] = (f"{item.nodeid} starts {what} without @pytest.mark.slow "
                           "(tests/python/conftest.py: mark it slow)")
    raise RuntimeError(_running["refused"])


_popen_init = subprocess.Popen.__init__
_process_start = multiprocessing.process.BaseProcess.start


def _guarded_popen_init(self, args, *a, **k):
    if _interpreter(args):
        _refuse(f"a Python subprocess ({args!r:.80})")
    _popen_init(self, args, *a, **k)


def _guarded_process_start(self):
    _refuse(f"a multiprocessing child ({self!r:.80})")
    _process_start(self)


subprocess.Popen.__init__ = _guarded_popen_init
multiprocessing.process.BaseProcess.start = _guarded_process_start


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _running["item"], _running["refused"] = item, None
    try:
        return (yield)
    finally:
        _running["item"] = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    if _running["refused"]:
        pytest.fail(_running["refused"], pytrace=False)
    return result


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
