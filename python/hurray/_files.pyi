from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from typing_extensions import Buffer

from ._hurray import Composite, KvScalar, KvValue, MmapMode, StrPath, Tensor
from ._hurray import File as _RawFile
from ._hurray import _ViewRecord
from ._shared import View

from ._shared import Memory

_TensorLike = Tensor | Composite | Any  # also NumPy arrays, torch tensors, __dlpack__ / __hurray__ objects

def save(
    path: StrPath, tensors: Mapping[str, _TensorLike], *,
    kv: Mapping[str, KvValue | tuple[KvScalar, ...]] | None = None,
    durable: bool = True, checksums: bool = True,
) -> None: ...
def load(
    path: StrPath, *, names: Sequence[str] | None = None, mmap: MmapMode = True,
    permissive: bool = False, verify: bool = False,
    storage_options: Mapping[str, Any] | None = None, workers: int | None = None,
    part_size: int | None = None,
) -> dict[str, Tensor | Composite]: ...
def save_bytes(
    tensors: Mapping[str, _TensorLike], *,
    kv: Mapping[str, KvValue | tuple[KvScalar, ...]] | None = None, checksums: bool = True,
) -> bytes: ...
def load_bytes(
    data: Buffer, *, names: Sequence[str] | None = None, permissive: bool = False,
    verify: bool = False, copy: bool = True,
) -> dict[str, Tensor | Composite]: ...
def load_bytes_stored(
    data: Buffer, *, permissive: bool = False, verify: bool = False,
) -> tuple[dict[str, Tensor | Composite], dict[str, View]]: ...
def load_kv(
    path: StrPath, *, max_kv_memory: int | None = 268435456, raw: bool = False,
    storage_options: Mapping[str, Any] | None = None,
) -> dict[str, KvValue]: ...
def open(
    path: StrPath, *, mmap: MmapMode = True, permissive: bool = False,
    max_kv_memory: int | None = 268435456, pickle: Literal["bytes", "reference"] = "bytes",
    storage_options: Mapping[str, Any] | None = None, workers: int | None = None,
    part_size: int | None = None,
) -> File: ...

def memory(obj: Any) -> Memory | None: ...
def to_tensor(obj: Any, name: str, what: str = "save") -> Tensor | Composite: ...
def stream_item(obj: Any) -> Tensor | Composite: ...
def check_user_kv(kv: Any, what: str = "save") -> dict[str, Any]: ...
def prepare(
    tensors: Mapping[str, _TensorLike], kv: Any, what: str = "save",
) -> tuple[dict[str, Tensor | Composite], dict[str, Any], list[_ViewRecord]]: ...
def view_records(views: dict[str, View]) -> list[_ViewRecord]: ...
def load_stored(
    path: StrPath, *, mmap: MmapMode = True, permissive: bool = False, verify: bool = False,
    storage_options: Mapping[str, Any] | None = None, workers: int | None = None,
    part_size: int | None = None,
) -> tuple[dict[str, Tensor | Composite], dict[str, View]]: ...
def view_tensor(name: str, v: View, base: Tensor | Composite) -> Tensor: ...

from ._hurray import VerifyReport as VerifyReport
File = _RawFile

def _views_of(records: Any) -> dict[str, View]: ...
def _reopen(path: str, kwargs: dict[str, Any]) -> File: ...

