"""hurray: the Hurray zero-copy tensor interchange format.

A codec and a zero-copy bridge, not a compute library: build and inspect
Hurray tensors and descriptors, hand their buffers to NumPy, PyTorch and JAX
(DLPack, the NumPy array interface) and to other Hurray-aware code (the native
protocol, ``__hurray__``) without copying, and move them through ``.hrry``
files (``save``, ``load``, ``open``) and streams (``StreamWriter``,
``StreamReader``). The core is the C extension ``hurray._hurray``; this
package re-exports it.

Errors. Each status of the C library (its status table, `HURRAY_STATUS_TABLE` in
`include/hurray/status.h`) raises one exception class, chosen in one place
(`python/src/util/errors.c`):

| C status | exception |
|---|---|
| `ERR_INVALID_MAGIC`, `ERR_VERSION_MISMATCH`, `ERR_INVALID_LAYOUT`, `ERR_INVALID_TYPE`, `ERR_INVALID_SYNC_MODE`, `ERR_INVALID_QUANTIZATION`, `ERR_INVALID_BUFFER_TABLE`, `ERR_INVALID_COMPOSITE`, `ERR_INVALID_INDEX_DATA`, `ERR_INVALID_STATISTICS`, `ERR_INVALID_SHARD` | `InvalidDescriptorError` (a `ValueError`) |
| `ERR_BUFFER_TOO_SMALL`, `ERR_SYNC_MODE_MISMATCH`, `ERR_BUFFER_SIZE`, `ERR_MISALIGNED` | `hurray.BufferError` (a `ValueError`) |
| `ERR_UNSUPPORTED` | `UnsupportedError` (a `NotImplementedError`) |
| `ERR_IO`, `ERR_INVALID_FILE`, `ERR_CRC_MISMATCH`, `ERR_INVALID_KV`, `ERR_DUPLICATE_NAME` | `FileError` (an `OSError`) |
| `ERR_STREAM`, `ERR_STREAM_LIMIT`, `ERR_CROSS_MACHINE`, `ERR_PROTOCOL` | `StreamError` (an `OSError`) |
| `ERR_INDEX_OUT_OF_BOUNDS` | `IndexError` |
| `ERR_NOT_FOUND` | `KeyError` |
| `ERR_INVALID_ARGUMENT`, `ERR_INVALID_STATE` | `ValueError` |
| `ERR_OUT_OF_MEMORY` | `MemoryError` |
| any other (`ERR_INTERNAL`, ...) | `InternalError` (a `RuntimeError`) |

A stream whose transport fails (a closed peer) raises `StreamError` with status `ERR_IO`.
"""

from . import _hurray
from ._hurray import (
    C_ABI_VERSION,
    MXFP,
    NF4,
    BlockPagedLayout,
    ColMajorLayout,
    Composite,
    CompositeLayout,
    CooLayout,
    CscLayout,
    CsfLayout,
    CsrLayout,
    HilbertLayout,
    Layout,
    MortonLayout,
    OpaqueQuantization,
    PerBlockAffine,
    PerChannelAffine,
    PerTensorAffine,
    PrivateExtensionLayout,
    RowMajorLayout,
    Shard,
    Statistics,
    StridedLayout,
    TiledLayout,
    UnknownLayout,
    decode_quantization,
    MAX_RANK,
    MIN_BUFFER_ALIGNMENT,
    PAGE_ALIGNMENT,
    BufferError,
    BufferHandle,
    CopyRequiredError,
    Descriptor,
    Device,
    TensorSlice,
    Dtype,
    FileError,
    InternalError,
    InvalidDescriptorError,
    StreamError,
    StreamReader,
    StreamWriter,
    Tensor,
    UnsupportedError,
    __version__,
    arange,
    buffer_size_bytes,
    empty,
    empty_like,
    eye,
    from_dlpack,
    from_hurray,
    from_numpy,
    from_torch,
    full,
    full_like,
    layout_tag_kind,
    linspace,
    remove_stale_temporaries,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from . import device, dtype
from ._files import File, load, load_kv, open, save  # noqa: A004 - hurray.open, like gzip.open
from ._files import load_bytes, save_bytes
from ._files import VerifyReport
from ._safe_open import safe_open
from ._writer import FileWriter  # one tensor at a time (hurray convert)
from ._display import PrintOptionsCtx, get_print_options, print_options, set_print_options
from ._interop import aligned_allocator, asarray
from ._quantize import quantize
from ._collate import collate
from ._sparse import from_scipy, sparse_coo
from ._net import Client, Server, connect, serve
from . import _dask
from . import _display, _sparse

# What the package lends the extension: the extension imports no module of the
# package (docs/internals/python-internals.md), it calls these once they are registered.
_hurray._register_hooks(tensor_repr=_display.tensor_repr, tensor_str=_display.tensor_str,
                        composite_repr=_display.composite_repr, to_scipy=_sparse.to_scipy,
                        as_tensor=_files.stream_item, file_html=_display.file_html,
                        tensor_html=_display.tensor_html)
_dask.arm()  # Dask serializers, once distributed is imported too (hurray/_dask.py)

# Tier 1 element types are also module attributes: hurray.float32 is
# hurray.dtype.float32. Tier 2 types live on hurray.dtype only.
float16 = dtype.float16
bfloat16 = dtype.bfloat16
float32 = dtype.float32
float64 = dtype.float64
int8 = dtype.int8
uint8 = dtype.uint8
int16 = dtype.int16
uint16 = dtype.uint16
int32 = dtype.int32
uint32 = dtype.uint32
int64 = dtype.int64
uint64 = dtype.uint64
bool = dtype.bool  # noqa: A001 - the spec's name for the type

__all__ = [
    "aligned_allocator",
    "arange",
    "asarray",
    "bfloat16",
    "BlockPagedLayout",
    "bool",
    "buffer_size_bytes",
    "collate",
    "BufferError",
    "BufferHandle",
    "C_ABI_VERSION",
    "Client",
    "connect",
    "ColMajorLayout",
    "Composite",
    "CompositeLayout",
    "CooLayout",
    "CopyRequiredError",
    "CscLayout",
    "CsfLayout",
    "CsrLayout",
    "decode_quantization",
    "Descriptor",
    "Device",
    "device",
    "Dtype",
    "dtype",
    "empty",
    "empty_like",
    "eye",
    "File",
    "FileWriter",
    "FileError",
    "VerifyReport",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_hurray",
    "from_numpy",
    "from_scipy",
    "from_torch",
    "full",
    "full_like",
    "get_print_options",
    "HilbertLayout",
    "int16",
    "int32",
    "int64",
    "int8",
    "InternalError",
    "InvalidDescriptorError",
    "Layout",
    "layout_tag_kind",
    "linspace",
    "load",
    "load_bytes",
    "load_kv",
    "remove_stale_temporaries",
    "MAX_RANK",
    "MIN_BUFFER_ALIGNMENT",
    "MortonLayout",
    "MXFP",
    "NF4",
    "ones",
    "ones_like",
    "open",
    "OpaqueQuantization",
    "PAGE_ALIGNMENT",
    "PerBlockAffine",
    "PerChannelAffine",
    "PerTensorAffine",
    "print_options",
    "PrintOptionsCtx",
    "PrivateExtensionLayout",
    "quantize",
    "RowMajorLayout",
    "safe_open",
    "save",
    "save_bytes",
    "set_print_options",
    "Shard",
    "sparse_coo",
    "Statistics",
    "StreamError",
    "StreamReader",
    "StreamWriter",
    "StridedLayout",
    "Tensor",
    "TensorSlice",
    "TiledLayout",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "UnknownLayout",
    "UnsupportedError",
    "zeros",
    "zeros_like",
    "serve",
    "Server",
]
