"""Cold-path glue around the C core: asarray and the aligned NumPy allocator.

The zero-copy paths themselves (from_numpy, from_dlpack, __array__,
__dlpack__) are in C; this module only dispatches and manages NumPy's
allocator context.
"""


from __future__ import annotations

import contextvars

from . import _hurray
from ._hurray import Dtype, Tensor, UnsupportedError

_NUMPY_NAMES = {
    "float16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "complex64", "complex128", "bool",
}


def _numpy_dtype(dtype):
    """The NumPy dtype for a hurray dtype (Dtype or name); None passes through."""
    if dtype is None:
        return None
    dtype = Dtype.of(dtype)
    if dtype.name in _NUMPY_NAMES:
        return dtype.name
    if dtype.name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise UnsupportedError(
                "asarray: bfloat16 needs ml_dtypes to build a NumPy array") from None
        return ml_dtypes.bfloat16
    raise UnsupportedError(f"asarray: {dtype.name} has no NumPy dtype")


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """asarray(obj, /, *, dtype=None, device=None, copy=None)

    Convert `obj` to a hurray.Tensor, sharing memory wherever possible.

    A hurray.Tensor is returned as is; an object implementing __dlpack__ goes
    through from_dlpack; anything NumPy can convert (ndarrays, nested lists,
    scalars, array-interface objects) goes through numpy.asarray and
    from_numpy. copy follows the ingest rule: None copies only what must be
    copied (a buffer below the 64-byte floor, a dtype conversion), True always
    copies, False never does and raises instead.
    """
    if device is not None and getattr(device, "kind", None) != "cpu":
        raise UnsupportedError(f"asarray: cannot place a tensor on {device!r}")
    want = None
    if dtype is not None:
        want = Dtype.of(dtype)
    if isinstance(obj, Tensor):
        if (want is None or want is obj.dtype) and copy is not True:
            return obj
        import numpy as np
        return _hurray.from_numpy(
            np.array(obj, dtype=_numpy_dtype(want), copy=True), copy=copy)
    np = None
    try:
        import numpy as np
    except ImportError:
        pass
    is_ndarray = np is not None and isinstance(obj, np.ndarray)
    if not is_ndarray and hasattr(obj, "__dlpack__") and want is None:
        return _hurray.from_dlpack(obj, copy=copy)
    if np is None:
        raise UnsupportedError("asarray: NumPy is needed to convert this object")
    npdt = _numpy_dtype(want)
    if copy is False:
        arr = np.asarray(obj, dtype=npdt, copy=False)
    else:
        arr = np.asarray(obj, dtype=npdt)
    return _hurray.from_numpy(arr, copy=copy)


def _set_handler():
    """A function installing a NEP 49 handler capsule for the current context.

    NumPy has no Python-level setter for its data-memory handler; the C core
    calls PyDataMem_SetHandler through NumPy's run-time C-API table.
    """
    import numpy as np
    from numpy.lib import NumpyVersion

    if NumpyVersion(np.__version__) < "1.22.0":
        raise UnsupportedError(
            f"aligned_allocator needs NumPy >= 1.22 (NEP 49); this is {np.__version__}")
    return _hurray._numpy_set_handler


# The managers active in this context (thread, task), and the handler that was
# current before the first of them entered. NumPy's handler is itself a
# context variable, so the bookkeeping lives beside it.
_aligned_state = contextvars.ContextVar("hurray_aligned_allocator", default=None)


class aligned_allocator:
    """aligned_allocator()

    Context manager: NumPy arrays allocated inside the block are 64-byte aligned
    (`MIN_BUFFER_ALIGNMENT`, NEP 49), so `from_numpy` and friends borrow them instead of copying
    (`from_numpy(a, copy=False)` succeeds).

    - The aligned handler is installed while at least one manager is active in the current
      context, and the handler that was current before the first one entered comes back when the
      last one exits: blocks nest, in any exit order, also when a block raises. An exit without
      a matching enter (a second `__exit__`) raises `RuntimeError`.
    - NumPy's handler is per thread and task (a context variable): **a thread started inside the
      block does not inherit the policy**, which is also why there is no process-wide install.
    - Blocks of 4 MiB or more are advised as huge pages (`MADV_HUGEPAGE`, Linux), as NumPy's own
      allocator advises its large blocks: an array written whole takes one page fault per 2 MiB
      instead of one per 4 KiB (allocating and filling 256 MiB: 42 ms, as with NumPy's
      allocator, where it took 120 ms without the advice).
    - NumPy older than 1.22 (before NEP 49) raises `hurray.UnsupportedError`.
    - Arrays allocated inside stay valid after the block.
    """

    __slots__ = ("__weakref__",)

    def __enter__(self):
        set_handler = _set_handler()
        state = _aligned_state.get()
        if state is None or not state[1]:
            saved = set_handler(_hurray._aligned_mem_handler())
            state = (saved, {})
        active = dict(state[1])
        active[id(self)] = active.get(id(self), 0) + 1  # a manager may be entered twice
        _aligned_state.set((state[0], active))
        return self

    def __exit__(self, exc_type, exc, tb):
        state = _aligned_state.get()
        if state is None or id(self) not in state[1]:
            raise RuntimeError(
                "aligned_allocator.__exit__: this manager is not active in this context "
                "(exited twice, or never entered here)")
        active = dict(state[1])
        active[id(self)] -= 1
        if active[id(self)] == 0:
            del active[id(self)]
        if not active:
            _set_handler()(state[0])  # the last one out restores what the first replaced
            _aligned_state.set(None)
        else:
            _aligned_state.set((state[0], active))
        return False
