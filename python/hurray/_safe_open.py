"""hurray.safe_open: safetensors' lazy reader over .hrry files.

``with hurray.safe_open("model.hrry", framework="pt") as f:`` gives what
``safetensors.safe_open`` gives: ``keys()``, ``get_tensor(name)`` as a tensor
of the framework asked for, ``get_slice(name)`` (a partial read), and
``metadata()``. Tensors are zero-copy views of the file's mapping (copy-on-write:
writable, a write never reaches the file).
"""

from __future__ import annotations

from typing import Any

from . import _files, _framework
from ._hurray import UnsupportedError
from ._st_compat import st_dtype_name

_FRAMEWORKS = {"pt": "torch", "torch": "torch", "pytorch": "torch", "np": "numpy",
               "numpy": "numpy", "hurray": "hurray", "jax": "jax", "flax": "jax"}


def _converter(framework: str, device):
    kind = _FRAMEWORKS.get(framework) if isinstance(framework, str) else None
    if kind is None:
        raise ValueError(f"safe_open: framework must be one of {sorted(_FRAMEWORKS)}, not "
                         f"{framework!r}")
    if kind == "torch":
        from . import torch as ht
        dev = ht._device(device)

        def to_torch(name, t):
            x = ht._to_torch(name, t)
            return x if dev.type == "cpu" else x.to(dev)
        return to_torch
    if device not in ("cpu", None):
        raise UnsupportedError(f"safe_open: device={device!r} needs framework='pt'")
    if kind == "numpy":
        from . import numpy as hnp
        return hnp._to_numpy
    if kind == "jax":
        def to_jax(name, t):
            import jax.numpy as jnp
            from . import numpy as hnp
            return jnp.asarray(hnp._to_numpy(name, t))
        return to_jax
    return lambda name, t: t


class safe_open:  # noqa: N801 - safetensors' name
    """safe_open(filename, framework, device="cpu", *, mmap=True)

    A lazy reader with safetensors.safe_open's surface: keys(), get_tensor(),
    get_slice(), metadata(), offset_keys(), usable as a context manager.
    framework: "pt" (torch), "np" (NumPy), "jax" / "flax", or "hurray"
    (hurray.Tensor).
    """

    def __init__(self, filename, framework, device="cpu", *, mmap=True, storage_options=None,
                 workers=None, part_size=None):
        self._convert = _converter(framework, device)
        self._f = _files.open(filename, mmap=mmap, storage_options=storage_options,
                              workers=workers, part_size=part_size)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self._f.close()
        return False

    def close(self) -> None:
        self._f.close()

    def keys(self) -> list[str]:
        """Every tensor name (sorted, as safetensors gives them)."""
        return sorted(self._f.keys())

    def offset_keys(self) -> list[str]:
        """Every tensor name in file order."""
        return self._f.keys()

    def metadata(self) -> dict[str, Any] | None:
        """The KV section (None when the file has none, as safetensors)."""
        kv = self._f.kv
        return kv or None

    def get_tensor(self, name: str):
        """The tensor `name`, in the framework asked for."""
        t = self._f.get_tensor(name)
        return self._convert(name, _framework.plain(name, t, "get_tensor"))

    def get_slice(self, name: str):
        """A partial reader for `name`: index it (sl[0:128, :]) to read only
        that part; get_shape() and get_dtype() read no data."""
        raw = self._f.get_slice(name)
        return _Slice(name, raw, self._convert)


class _Slice:
    __slots__ = ("_name", "_raw", "_convert")

    def __init__(self, name, raw, convert):
        self._name, self._raw, self._convert = name, raw, convert

    def get_shape(self) -> list[int]:
        return list(self._raw.shape)

    def get_dtype(self) -> str:
        """safetensors' name of the element type ("F32", "BF16"; hurray's for the types
        safetensors has not: "int4")."""
        return st_dtype_name(self._raw.get_dtype())

    @property
    def shape(self):
        return self._raw.shape

    @property
    def dtype(self):
        return self._raw.dtype

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, index):
        return self._convert(self._name, self._raw[index])

    def __repr__(self) -> str:
        return repr(self._raw)
