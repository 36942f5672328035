"""Distributed checkpoints in `.hrry` files: a storage writer and reader for
`torch.distributed.checkpoint` (DCP), published as `hurray.torch.checkpoint`.

DCP plans a checkpoint (which rank writes which tensor or shard, how a load
reshards) and leaves the bytes to a storage layer; torch ships
`FileSystemWriter`/`FileSystemReader` (its own files) and a safetensors one.
Here each rank writes one `.hrry` file of its own (written to a temporary name,
then renamed: never half-written; with data checksums by default), readable by
`hurray.open` like any other: a whole tensor under its name, a shard of one
under `name@[offsets]` (`model.w@[6,0]`: the rows from 6), a non-tensor value (`BytesIO` items: a step counter,
an optimizer's hyper-parameters) as a uint8 tensor under its name. The
checkpoint's metadata is what DCP needs to plan a load: the `Metadata` object
it builds, pickled into `.metadata` as `FileSystemWriter` stores it (DCP reads
it with `pickle`, so load checkpoints you trust, as with DCP's own). Loading
reshards as DCP plans it (saved on 2 ranks, loaded on 1 or 4): a read item is
a slice of a stored tensor, taken from the file's mapping without copying, and
copied once into the tensor DCP asks to fill.
"""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.distributed._shard._utils import narrow_tensor_by_index
from torch.distributed.checkpoint.metadata import Metadata, MetadataIndex, StorageMeta
from torch.distributed.checkpoint.planner import (
    LoadItemType,
    LoadPlan,
    LoadPlanner,
    SavePlan,
    SavePlanner,
    WriteItemType,
)
from torch.distributed.checkpoint.storage import StorageReader, StorageWriter, WriteResult
from torch.futures import Future

from .. import _files
from .._atomic import write_bytes_atomic
from .._hurray import Tensor

__all__ = ["HurrayStorageWriter", "HurrayStorageReader", "HurrayStorageInfo"]

METADATA = ".metadata"  # DCP's name for the checkpoint's metadata (FileSystemWriter's too)
SUFFIX = ".hrry"


@dataclasses.dataclass(frozen=True)
class HurrayStorageInfo:
    """Where one item of a checkpoint lies: the rank's file (relative to the
    checkpoint folder) and the entry's name in it."""

    relative_path: str
    name: str
    nbytes: int


def _entry_name(index: MetadataIndex, kind: WriteItemType) -> str:
    """A plain tensor under its fully qualified name; a shard (of a DTensor or
    a ShardedTensor, whatever its offsets) under name@[offsets], so that the
    shards of one tensor have names of their own."""
    offset = tuple(index.offset) if index.offset is not None else ()
    if kind == WriteItemType.SHARD or any(offset):
        return f"{index.fqn}@[{','.join(map(str, offset))}]"
    return index.fqn


def _as_stored(data: Any, fqn: str) -> torch.Tensor:
    if isinstance(data, io.BytesIO):
        return torch.frombuffer(bytearray(data.getbuffer()), dtype=torch.uint8) \
            if data.getbuffer().nbytes else torch.empty(0, dtype=torch.uint8)
    if not isinstance(data, torch.Tensor):
        raise TypeError(f"HurrayStorageWriter: item {fqn!r} resolved to "
                        f"{type(data).__module__}.{type(data).__qualname__}, not a tensor "
                        f"or BytesIO")
    t = data.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    # a shard is a view of its tensor: stored contiguous, as DCP's own writer does
    return t.contiguous()


class HurrayStorageWriter(StorageWriter):
    """HurrayStorageWriter(path, *, checksums=True, durable=True)

    A `torch.distributed.checkpoint` storage writer: `dcp.save(state_dict,
    storage_writer=HurrayStorageWriter(path))`. Each rank writes
    `path/__<rank>_0.hrry` (atomically: a temporary file renamed into place,
    fsynced when `durable`), with data checksums when `checksums`; the
    coordinator writes `path/.metadata` last, so a checkpoint without it was
    never finished.
    """

    def __init__(self, path: str | os.PathLike, *, checksums: bool = True,
                 durable: bool = True) -> None:
        super().__init__()
        self.path = Path(path)
        self.checksums = bool(checksums)
        self.durable = bool(durable)
        self.save_id = uuid.uuid4().hex
        self.is_coordinator = False
        self.rank: int | None = None
        self.use_collectives = True

    # -- the StorageWriter protocol, in the order DCP calls it --

    def reset(self, checkpoint_id: str | os.PathLike | None = None) -> None:
        if checkpoint_id:
            self.path = Path(checkpoint_id)
        self.save_id = uuid.uuid4().hex

    def set_up_storage_writer(self, is_coordinator: bool, *args: Any, **kwargs: Any) -> None:
        self.is_coordinator = is_coordinator
        self.rank = kwargs.get("rank")
        self.use_collectives = kwargs.get("use_collectives", True)

    def prepare_local_plan(self, plan: SavePlan) -> SavePlan:
        self.path.mkdir(parents=True, exist_ok=True)
        return plan

    def prepare_global_plan(self, plans: list[SavePlan]) -> list[SavePlan]:
        # rank i writes __i_0.hrry (the name FileSystemWriter gives its first file)
        return [dataclasses.replace(p, storage_data=f"__{i}_") for i, p in enumerate(plans)]

    def write_data(self, plan: SavePlan, planner: SavePlanner) -> Future[list[WriteResult]]:
        prefix = plan.storage_data if isinstance(plan.storage_data, str) else \
            f"__{self.rank or 0}_"
        relative = f"{prefix}0{SUFFIX}"
        tensors: dict[str, torch.Tensor] = {}
        results = []
        for item in plan.items:
            name = _entry_name(item.index, item.type)
            if name in tensors:
                raise ValueError(f"HurrayStorageWriter: two items of the plan are stored as "
                                 f"{name!r} in {relative}")
            t = _as_stored(planner.resolve_data(item), item.index.fqn)
            tensors[name] = t
            nbytes = t.numel() * t.element_size()
            results.append(WriteResult(index=item.index, size_in_bytes=nbytes,
                                       storage_data=HurrayStorageInfo(relative, name, nbytes)))
        from . import save_file  # the torch layer converts (float8, bool, ...)
        save_file(tensors, self.path / relative, durable=self.durable,
                  checksums=self.checksums)
        fut: Future[list[WriteResult]] = Future()
        fut.set_result(results)
        return fut

    def finish(self, metadata: Metadata, results: list[list[WriteResult]]) -> None:
        metadata.storage_data = {wr.index: wr.storage_data for rs in results for wr in rs}
        metadata.storage_meta = self.storage_meta()
        name = METADATA if self.use_collectives or self.rank is None else \
            f"__{self.rank}{METADATA}"
        write_bytes_atomic(self.path / name, pickle.dumps(metadata), self.durable)

    def storage_meta(self) -> StorageMeta | None:
        return StorageMeta(checkpoint_id=str(self.path), save_id=self.save_id)

    @property
    def checkpoint_id(self) -> str | os.PathLike:
        return self.path

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike)) and "://" not in str(checkpoint_id)


class HurrayStorageReader(StorageReader):
    """HurrayStorageReader(path, *, verify=False)

    The reader of checkpoints `HurrayStorageWriter` wrote:
    `dcp.load(state_dict, storage_reader=HurrayStorageReader(path))`, on any
    number of ranks (DCP plans the resharding). `verify=True` checks each
    file's data checksums before reading from it.
    """

    def __init__(self, path: str | os.PathLike, *, verify: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.verify = bool(verify)
        self.storage_data: dict[MetadataIndex, HurrayStorageInfo] = {}
        self.load_id = uuid.uuid4().hex

    def reset(self, checkpoint_id: str | os.PathLike | None = None) -> None:
        self.storage_data = {}
        if checkpoint_id:
            self.path = Path(checkpoint_id)
        self.load_id = uuid.uuid4().hex

    def read_metadata(self, *args: Any, **kwargs: Any) -> Metadata:
        rank = kwargs.get("rank")
        name = METADATA if rank is None else f"__{rank}{METADATA}"
        path = self.path / name
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"HurrayStorageReader: {path} does not exist: {self.path} holds no finished "
                f"checkpoint (the writer writes it last)") from None
        metadata = pickle.loads(raw)  # noqa: S301 - DCP's own format (FileSystemReader)
        if not isinstance(metadata, Metadata):
            raise ValueError(f"HurrayStorageReader: {path} holds a "
                             f"{type(metadata).__qualname__}, not DCP Metadata")
        meta = getattr(metadata, "storage_meta", None) or StorageMeta()
        meta.load_id = self.load_id
        metadata.storage_meta = meta
        return metadata

    def set_up_storage_reader(self, metadata: Metadata, is_coordinator: bool, *args: Any,
                              **kwargs: Any) -> None:
        data = metadata.storage_data
        if not isinstance(data, dict) or not all(isinstance(v, HurrayStorageInfo)
                                                 for v in data.values()):
            raise ValueError(f"HurrayStorageReader: the metadata of {self.path} was not written "
                             f"by HurrayStorageWriter (read it with the reader of its writer)")
        self.storage_data = data

    def prepare_local_plan(self, plan: LoadPlan) -> LoadPlan:
        return plan

    def prepare_global_plan(self, plans: list[LoadPlan]) -> list[LoadPlan]:
        return plans

    def read_data(self, plan: LoadPlan, planner: LoadPlanner) -> Future[None]:
        per_file: dict[str, list[Any]] = {}
        for item in plan.items:
            per_file.setdefault(self.storage_data[item.storage_index].relative_path,
                                []).append(item)
        for relative, items in per_file.items():
            path = self.path / relative
            if Path(relative).is_absolute() or ".." in Path(relative).parts:
                raise ValueError(f"HurrayStorageReader: the metadata names {relative!r}, "
                                 f"outside the checkpoint folder {self.path}")
            with _files.open(path, mmap="r") as f:
                if self.verify:
                    f.verify()
                for item in items:
                    info = self.storage_data[item.storage_index]
                    stored = f[info.name]
                    if not isinstance(stored, Tensor):
                        raise ValueError(f"HurrayStorageReader: {info.name!r} of {path} is a "
                                         f"composite tensor; the writer stores tensors")
                    if item.type == LoadItemType.BYTE_IO:
                        planner.load_bytes(item, io.BytesIO(np.asarray(stored).tobytes()))
                        continue
                    t = narrow_tensor_by_index(stored.to_torch(), item.storage_offsets,
                                               item.lengths)
                    target = planner.resolve_tensor(item).detach()
                    if target.size() != t.size():
                        raise ValueError(
                            f"HurrayStorageReader: {info.name!r} of {path} gives "
                            f"{tuple(t.size())} for {item.dest_index.fqn!r}, which needs "
                            f"{tuple(target.size())}")
                    target.copy_(t)
                    planner.commit_tensor(item, target)
        fut: Future[None] = Future()
        fut.set_result(None)
        return fut

    @property
    def checkpoint_id(self) -> str | os.PathLike:
        return self.path

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike)) and "://" not in str(checkpoint_id)
