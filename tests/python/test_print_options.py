"""Print options (set_print_options, get_print_options, print_options,
PrintOptionsCtx): the reference package's one option, sparse_display, its
validation, its effect on repr and str, and its scope (a ContextVar: restored
on exit and on exceptions, nested, isolated between threads and tasks)."""

import asyncio
import contextvars
import inspect
import struct
import sys
import threading

import pytest

import hurray

from conftest import aligned_array

np = pytest.importorskip("numpy")

DEFAULT = {"sparse_display": "metadata"}


@pytest.fixture(autouse=True)
def default_options():
    """Every test starts and ends with the defaults (a test that fails midway
    must not leak "content" into the rest of the suite)."""
    hurray.set_print_options(sparse_display="metadata")
    yield
    hurray.set_print_options(sparse_display="metadata")


def u64(*v):
    return struct.pack(f"{len(v)}Q", *v)


def f32(*v):
    return struct.pack(f"{len(v)}f", *v)


def csr():
    return hurray.Tensor(f32(5, 7, 9), hurray.float32, [2, 3], aux_buffers=[u64(0, 2, 1),
                         u64(0, 2, 3)], layout=hurray.CsrLayout(nnz=3))


def csc():
    return hurray.Tensor(f32(5, 7), hurray.float32, [2, 3], aux_buffers=[u64(1, 0),
                         u64(0, 1, 1, 2)], layout=hurray.CscLayout(nnz=2))


def coo():
    values = np.array([1.5, -2.0], np.float64)
    indices = np.array([[0, 1], [1, 0]], np.uint64)
    return hurray.sparse_coo(values, indices, [2, 2])


def csf():
    bufs = [u64(0, 2), u64(0, 1), u64(0, 2, 3), u64(0, 2, 1), u64(0, 1, 2, 4), u64(1, 3, 0, 2)]
    return hurray.Tensor(f32(1, 2, 3, 4), hurray.float32, [2, 3, 4], aux_buffers=bufs,
                         layout=hurray.CsfLayout(nnz=4, mode_order=[0, 1, 2]))


def metadata(t):
    with hurray.print_options(sparse_display="metadata"):
        return repr(t)


# ---- the API ---------------------------------------------------------------------------------

def test_surface_and_signatures():
    for name in ("set_print_options", "get_print_options", "print_options", "PrintOptionsCtx"):
        assert name in hurray.__all__
    assert str(inspect.signature(hurray.set_print_options)) == "(*, sparse_display=None)"
    assert str(inspect.signature(hurray.get_print_options)) == "()"
    assert str(inspect.signature(hurray.print_options)) == "(*, sparse_display=None)"
    assert str(inspect.signature(hurray.PrintOptionsCtx)) == "(*, sparse_display=None)"
    assert isinstance(hurray.print_options(), hurray.PrintOptionsCtx)


def test_defaults_and_get_returns_a_copy():
    assert hurray.get_print_options() == DEFAULT
    got = hurray.get_print_options()
    got["sparse_display"] = "content"
    got["other"] = 1
    assert hurray.get_print_options() == DEFAULT


def test_set_and_get():
    assert hurray.set_print_options(sparse_display="content") is None
    assert hurray.get_print_options() == {"sparse_display": "content"}
    hurray.set_print_options()  # nothing given: nothing changes
    hurray.set_print_options(sparse_display=None)
    assert hurray.get_print_options() == {"sparse_display": "content"}
    hurray.set_print_options(sparse_display="metadata")
    assert hurray.get_print_options() == DEFAULT


@pytest.mark.parametrize("call", [hurray.set_print_options, hurray.print_options,
                                  hurray.PrintOptionsCtx])
def test_validation(call):
    with pytest.raises(ValueError, match="invalid sparse_display value 'dense'"):
        call(sparse_display="dense")
    with pytest.raises(ValueError):
        call(sparse_display="Content")
    with pytest.raises(TypeError, match="must be a str"):
        call(sparse_display=1)
    with pytest.raises(TypeError):
        call(threshold=10)  # not an option of the reference package
    with pytest.raises(TypeError):
        call("content")  # keyword-only
    assert hurray.get_print_options() == DEFAULT  # nothing half-applied


def test_context_manager_validates_when_made():
    with pytest.raises(ValueError):
        with hurray.print_options(sparse_display="bad"):
            pytest.fail("the block must not run")


# ---- what the option changes -----------------------------------------------------------------

def test_metadata_is_the_default_form():
    t = csr()
    text = repr(t)
    assert text == ("hurray.Tensor(shape=(2, 3), dtype=float32, layout='csr', nnz=3, "
                    f"device={t.device!r})")
    assert str(t) == text
    assert "values" not in text


@pytest.mark.parametrize("make,parts", [
    (csr, ["values=[5., 7., 9.]", "col_indices=[0, 2, 1]", "row_ptr=[0, 2, 3]"]),
    (csc, ["values=[5., 7.]", "row_indices=[1, 0]", "col_ptr=[0, 1, 1, 2]"]),
    (coo, ["indices=[[0, 1],\n           [1, 0]]", "values=[ 1.5, -2. ]"]),
])
def test_content_shows_the_component_arrays(make, parts):
    t = make()
    with hurray.print_options(sparse_display="content"):
        text = repr(t)
        assert str(t) == text
    meta = metadata(t)
    assert text.startswith(meta[:-1] + ",\n")
    body = text[len(meta[:-1]) + 2:]
    assert body == ",\n".join("  " + p for p in parts) + ")"
    assert repr(t) == meta  # the block ended: metadata again


def test_content_follows_numpy_print_options():
    values = np.arange(2000, dtype=np.int64)
    indices = np.stack([np.arange(2000, dtype=np.uint64), np.zeros(2000, np.uint64)], 1)
    t = hurray.sparse_coo(values, indices, [2000, 1])
    with hurray.print_options(sparse_display="content"):
        assert "..." in repr(t)  # NumPy's threshold truncates
        with np.printoptions(threshold=10 ** 6):
            assert "..." not in repr(t) and "1999]" in repr(t)


def test_content_does_not_change_other_tensors():
    dense = hurray.arange(4)
    block = hurray.full([2, 2], 7.0, dtype=hurray.float32)
    t4 = hurray.Tensor(bytes(2), hurray.dtype.int4, [4])
    before = [repr(x) for x in (dense, block, t4, csf())] + [str(dense), str(csf())]
    with hurray.print_options(sparse_display="content"):
        after = [repr(x) for x in (dense, block, t4, csf())] + [str(dense), str(csf())]
    assert after == before
    assert "layout='csf'" in before[3]  # CSF has no component accessors: metadata only


def test_content_falls_back_to_metadata_without_numpy(monkeypatch):
    t = csr()
    meta = metadata(t)
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy raises ImportError
    with hurray.print_options(sparse_display="content"):
        assert repr(t) == meta


def test_content_falls_back_to_metadata_for_a_device_tensor():
    t = hurray.Tensor(aligned_array((2,), "f4", fill=[5, 7]), hurray.float32, [2, 2],
                      aux_buffers=[aligned_array((2,), "u8", fill=[0, 1]),
                                   aligned_array((3,), "u8", fill=[0, 1, 2])],
                      layout=hurray.CsrLayout(nnz=2), device=hurray.Device("cuda", 0))
    with hurray.print_options(sparse_display="content"):
        text = repr(t)
    assert text == metadata(t) and "values" not in text


# ---- scope -----------------------------------------------------------------------------------

def test_restored_on_exit_and_on_exception():
    with hurray.print_options(sparse_display="content") as entered:
        assert entered is None  # as the reference's
        assert hurray.get_print_options()["sparse_display"] == "content"
    assert hurray.get_print_options() == DEFAULT
    with pytest.raises(KeyError):
        with hurray.print_options(sparse_display="content"):
            raise KeyError("boom")
    assert hurray.get_print_options() == DEFAULT


def test_restores_the_exact_previous_value():
    hurray.set_print_options(sparse_display="content")
    with hurray.print_options(sparse_display="metadata"):
        assert hurray.get_print_options()["sparse_display"] == "metadata"
    assert hurray.get_print_options()["sparse_display"] == "content"
    with hurray.print_options():  # no option given: a no-op that still restores
        hurray.set_print_options(sparse_display="metadata")
    assert hurray.get_print_options()["sparse_display"] == "content"


def test_nesting_and_reentry():
    ctx = hurray.print_options(sparse_display="content")
    with hurray.print_options(sparse_display="content"):
        with hurray.print_options(sparse_display="metadata"):
            assert hurray.get_print_options()["sparse_display"] == "metadata"
            with ctx:
                with ctx:  # the same object entered twice
                    assert hurray.get_print_options()["sparse_display"] == "content"
                assert hurray.get_print_options()["sparse_display"] == "content"
            assert hurray.get_print_options()["sparse_display"] == "metadata"
        assert hurray.get_print_options()["sparse_display"] == "content"
    assert hurray.get_print_options() == DEFAULT
    with ctx:  # reusable after exit
        assert hurray.get_print_options()["sparse_display"] == "content"
    assert hurray.get_print_options() == DEFAULT


def test_isolated_between_threads():
    seen = {}
    ready, go = threading.Event(), threading.Event()

    def worker():
        hurray.set_print_options(sparse_display="content")
        seen["worker"] = repr(csr())
        ready.set()
        go.wait(5)
        seen["worker_after"] = hurray.get_print_options()["sparse_display"]

    th = threading.Thread(target=worker)
    th.start()
    assert ready.wait(5)
    assert hurray.get_print_options() == DEFAULT  # the worker's setting stays in the worker
    assert "values=" not in repr(csr())
    hurray.set_print_options(sparse_display="metadata")
    go.set()
    th.join(5)
    assert "values=" in seen["worker"]
    assert seen["worker_after"] == "content"  # nor does the main thread's reach the worker


def test_isolated_between_contexts_and_tasks():
    ctx = contextvars.copy_context()
    ctx.run(hurray.set_print_options, sparse_display="content")
    assert hurray.get_print_options() == DEFAULT
    assert ctx.run(hurray.get_print_options) == {"sparse_display": "content"}

    async def task(mode, out):
        hurray.set_print_options(sparse_display=mode)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        out[mode] = "values=" in repr(csr())

    async def main():
        out = {}
        await asyncio.gather(task("content", out), task("metadata", out))
        return out

    assert asyncio.run(main()) == {"content": True, "metadata": False}
    assert hurray.get_print_options() == DEFAULT
