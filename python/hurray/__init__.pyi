"""Type stubs of the hurray package."""

import builtins
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Literal

from . import device as device
from . import dtype as dtype
from ._safe_open import safe_open as safe_open
from ._writer import FileWriter as FileWriter
from ._files import File as File, load as load, load_kv as load_kv, open as open, save as save
from ._files import load_bytes as load_bytes, save_bytes as save_bytes
from ._files import VerifyReport as VerifyReport
from ._net import Client as Client, Server as Server, connect as connect, serve as serve
from ._hurray import (
    C_ABI_VERSION as C_ABI_VERSION,
    MXFP as MXFP,
    NF4 as NF4,
    BlockPagedLayout as BlockPagedLayout,
    ColMajorLayout as ColMajorLayout,
    Composite as Composite,
    CompositeLayout as CompositeLayout,
    CooLayout as CooLayout,
    CscLayout as CscLayout,
    CsfLayout as CsfLayout,
    CsrLayout as CsrLayout,
    HilbertLayout as HilbertLayout,
    Layout as Layout,
    MortonLayout as MortonLayout,
    OpaqueQuantization as OpaqueQuantization,
    PerBlockAffine as PerBlockAffine,
    PerChannelAffine as PerChannelAffine,
    PerTensorAffine as PerTensorAffine,
    PrivateExtensionLayout as PrivateExtensionLayout,
    RowMajorLayout as RowMajorLayout,
    Shard as Shard,
    Statistics as Statistics,
    StridedLayout as StridedLayout,
    TiledLayout as TiledLayout,
    UnknownLayout as UnknownLayout,
    decode_quantization as decode_quantization,
    MAX_RANK as MAX_RANK,
    MIN_BUFFER_ALIGNMENT as MIN_BUFFER_ALIGNMENT,
    PAGE_ALIGNMENT as PAGE_ALIGNMENT,
    BufferError as BufferError,
    BufferHandle as BufferHandle,
    CopyRequiredError as CopyRequiredError,
    Descriptor as Descriptor,
    Device as Device,
    TensorSlice as TensorSlice,
    Dtype as Dtype,
    FileError as FileError,
    InternalError as InternalError,
    InvalidDescriptorError as InvalidDescriptorError,
    StreamError as StreamError,
    StreamReader as StreamReader,
    StreamWriter as StreamWriter,
    Tensor as Tensor,
    UnsupportedError as UnsupportedError,
    __version__ as __version__,
    arange as arange,
    buffer_size_bytes as buffer_size_bytes,
    empty as empty,
    empty_like as empty_like,
    eye as eye,
    from_dlpack as from_dlpack,
    from_hurray as from_hurray,
    from_numpy as from_numpy,
    from_torch as from_torch,
    full as full,
    full_like as full_like,
    layout_tag_kind as layout_tag_kind,
    linspace as linspace,
    remove_stale_temporaries as remove_stale_temporaries,
    ones as ones,
    ones_like as ones_like,
    zeros as zeros,
    zeros_like as zeros_like,
)

float16: Dtype
bfloat16: Dtype
float32: Dtype
float64: Dtype
int8: Dtype
uint8: Dtype
int16: Dtype
uint16: Dtype
int32: Dtype
uint32: Dtype
int64: Dtype
uint64: Dtype
bool: Dtype

def asarray(
    obj: Any, /, *, dtype: Dtype | str | None = None, device: Device | None = None,
    copy: builtins.bool | None = None,
) -> Tensor: ...

QuantScheme = Literal[
    "per_tensor", "per_tensor_affine", "per_channel", "per_channel_affine", "per_block",
    "per_block_affine", "nf4", "mxfp",
]

def quantize(
    x: Any, dtype: Dtype | str, *, axis: int | None = None, block_size: int | None = None,
    symmetric: builtins.bool = True, scale_dtype: Dtype | str | None = None,
    scheme: QuantScheme | None = None,
) -> Tensor: ...

def sparse_coo(
    values: Any, indices: Any, shape: Sequence[int], *, is_sorted: builtins.bool | None = None,
    copy: builtins.bool | None = None,
) -> Tensor: ...
def from_scipy(matrix: Any, /, *, copy: builtins.bool | None = None) -> Tensor: ...

class aligned_allocator:
    def __init__(self) -> None: ...
    def __enter__(self) -> aligned_allocator: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> builtins.bool: ...

SparseDisplay = Literal["metadata", "content"]

def set_print_options(*, sparse_display: SparseDisplay | None = None) -> None: ...
def get_print_options() -> dict[str, str]: ...

class PrintOptionsCtx:
    def __init__(self, *, sparse_display: SparseDisplay | None = None) -> None: ...
    def __enter__(self) -> None: ...
    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> builtins.bool: ...

def print_options(*, sparse_display: SparseDisplay | None = None) -> PrintOptionsCtx: ...

def collate(batch: Iterable[Any]) -> Any: ...
