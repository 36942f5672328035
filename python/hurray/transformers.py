"""Hugging Face transformers models in `.hrry` files.

`save_pretrained(model, directory)` writes what transformers' own `save_pretrained`
writes (`config.json`, `generation_config.json` for a model that generates), with the
weights as `.hrry`: `model.hrry`, or shards `model-00001-of-00003.hrry` and their index
`model.hrry.index.json` (the layout and the JSON of `model.safetensors.index.json`)
when they pass `max_shard_size`. Tied weights (an output layer sharing the embedding)
are stored once: every name stays in the file, the others as views of the first.

`from_pretrained(directory)` returns the model: its class resolved from the config as
the Auto classes do (`architectures`, or `model_class=`), the files' tensors (copy-on-
write maps of the files) handed to that class's own `from_pretrained` as its
`state_dict`, so the model is built without initialising its weights, takes the maps
without copying where the dtype agrees, and `dtype=`, `device_map=` and the rest mean
what they mean in transformers. A directory converted with `hurray convert MODEL_DIR
OUT_DIR` (weights converted, every other file copied) loads the same way.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import torch

from ._atomic import write_bytes_atomic

__all__ = ["save_pretrained", "from_pretrained", "WEIGHTS_NAME", "WEIGHTS_INDEX_NAME"]

WEIGHTS_NAME = "model.hrry"
WEIGHTS_INDEX_NAME = "model.hrry.index.json"
_SHARD = re.compile(r"^model-\d{5}-of-\d{5}\.hrry$")


def _size_limit(max_shard_size: int | str) -> int:
    """transformers' spelling of sizes: an int of bytes, or "5GB" (10**9), "5GiB"
    (2**30), "100MB", "100KiB" ..."""
    if isinstance(max_shard_size, int) and not isinstance(max_shard_size, bool):
        if max_shard_size <= 0:
            raise ValueError(f"save_pretrained: max_shard_size must be positive, not "
                             f"{max_shard_size}")
        return max_shard_size
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)B\s*", str(max_shard_size),
                     re.IGNORECASE)
    if m is None:
        raise ValueError(f"save_pretrained: max_shard_size {max_shard_size!r} is no size "
                         f"(an int of bytes, or '5GB', '500MiB', ...)")
    power = "KMGT".find(m[2].upper()) + 1 if m[2] else 0
    n = int(float(m[1]) * (1024 if m[3] else 1000) ** power)
    if n <= 0:
        raise ValueError(f"save_pretrained: max_shard_size must be positive, not "
                         f"{max_shard_size!r}")
    return n


def _groups(state: dict[str, torch.Tensor]) -> list[list[str]]:
    """The names, grouped by the storage they share (a tied weight and the one it
    ties to go in one group: a shard holds a view with its base), in order."""
    groups: dict[Any, list[str]] = {}
    for name, t in state.items():
        key = (t.device, t.untyped_storage().data_ptr()) if t.numel() else ("empty", name)
        groups.setdefault(key, []).append(name)
    return list(groups.values())


def _nbytes(state: dict[str, torch.Tensor], names: list[str]) -> int:
    return max((state[n].untyped_storage().nbytes() for n in names), default=0)


def save_pretrained(model: Any, directory: str | os.PathLike, max_shard_size: int | str = "5GB",
                    *, durable: bool = True, checksums: bool = True) -> None:
    """save_pretrained(model, directory, max_shard_size="5GB", *, durable=True, checksums=True)

    Writes `model` (a transformers `PreTrainedModel`) to `directory`: its config (with
    `architectures` set, as transformers does), its generation config when it generates,
    and its weights as `.hrry` (one file, or shards of at most `max_shard_size` with an
    index). Each file is written atomically (`durable`: fsynced; `checksums`: CRC-32C
    of every tensor); weight files of an earlier save in `directory` that this save
    does not write are removed once the new ones are in place.
    """
    limit = _size_limit(max_shard_size)
    if not hasattr(model, "state_dict") or not hasattr(model, "config"):
        raise TypeError(f"save_pretrained: expected a transformers model, not "
                        f"{type(model).__module__}.{type(model).__qualname__}")
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"save_pretrained: {out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach() for k, v in model.state_dict().items()}

    shards: list[list[str]] = [[]]
    size = 0
    for group in _groups(state):
        n = _nbytes(state, group)
        if shards[-1] and size + n > limit:
            shards.append([])
            size = 0
        shards[-1].extend(group)
        size += n
    from .torch import save_file  # hurray.torch: contiguity, sharing, dtypes
    written = []
    if len(shards) == 1:
        save_file(state, out / WEIGHTS_NAME, {"format": "pt"}, durable=durable,
                  checksums=checksums)
        written.append(WEIGHTS_NAME)
    else:
        weight_map = {}
        for i, names in enumerate(shards, 1):
            fname = f"model-{i:05d}-of-{len(shards):05d}.hrry"
            save_file({n: state[n] for n in names}, out / fname, {"format": "pt"},
                      durable=durable, checksums=checksums)
            weight_map.update({n: fname for n in names})
            written.append(fname)
        total = sum(_nbytes(state, g) for g in _groups(state))
        index = {"metadata": {"total_size": total,
                              "total_parameters": sum(p.numel() for p in model.parameters())},
                 "weight_map": dict(sorted(weight_map.items()))}
        write_bytes_atomic(out / WEIGHTS_INDEX_NAME,
                                  (json.dumps(index, indent=2) + "\n").encode(), durable)
        written.append(WEIGHTS_INDEX_NAME)
    for old in out.iterdir():  # what an earlier save left that this one replaced
        if old.name not in written and (old.name in (WEIGHTS_NAME, WEIGHTS_INDEX_NAME)
                                        or _SHARD.match(old.name)):
            old.unlink()

    config = model.config
    config.architectures = [type(model).__name__]
    config.save_pretrained(out)
    gen = getattr(model, "generation_config", None)
    if gen is not None and getattr(model, "can_generate", lambda: False)():
        gen.save_pretrained(out)


def weight_files(directory: str | os.PathLike) -> list[Path]:
    """The `.hrry` weight files of a model directory: `model.hrry`, or the shards its
    index names (each once, in the index's order)."""
    d = Path(directory)
    index = d / WEIGHTS_INDEX_NAME
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text())["weight_map"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{index}: not a weights index (a JSON object with a "
                             f"'weight_map' of tensor name to file): {e}") from None
        if not isinstance(weight_map, dict):
            raise ValueError(f"{index}: 'weight_map' is not an object")
        files = []
        for fname in dict.fromkeys(weight_map.values()):
            if not isinstance(fname, str) or Path(fname).name != fname:
                raise ValueError(f"{index}: weight_map names {fname!r}, which is not a file "
                                 f"of {d}")
            files.append(d / fname)
        return files
    if (d / WEIGHTS_NAME).is_file():
        return [d / WEIGHTS_NAME]
    raise FileNotFoundError(f"from_pretrained: {d} holds neither {WEIGHTS_NAME} nor "
                            f"{WEIGHTS_INDEX_NAME} (convert a transformers model directory with "
                            f"`hurray convert MODEL_DIR OUT_DIR`, or save with "
                            f"hurray.transformers.save_pretrained)")


def _resolve_class(config: Any, model_class: Any) -> Any:
    import transformers
    if model_class is not None:
        # an Auto class resolves through its mapping, as AutoX.from_pretrained does
        mapping = getattr(model_class, "_model_mapping", None)
        if mapping is not None:
            try:
                return mapping[type(config)]
            except KeyError:
                raise ValueError(f"from_pretrained: {model_class.__name__} has no model for "
                                 f"{type(config).__name__}") from None
        return model_class
    for arch in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, arch, None)
        if cls is not None:
            return cls
    try:
        return transformers.AutoModelForCausalLM._model_mapping[type(config)]
    except KeyError:
        raise ValueError(f"from_pretrained: the config names no architecture transformers "
                         f"has ({getattr(config, 'architectures', None)}); pass model_class=") \
            from None


def _is_cpu(device_map: Any) -> bool:
    cpu = ("cpu", torch.device("cpu"))
    if isinstance(device_map, dict):
        return bool(device_map) and all(v in cpu for v in device_map.values())
    return device_map in cpu


def from_pretrained(directory: str | os.PathLike, *, model_class: Any = None,
                    config: Any = None, mmap: bool = True, verify: bool = False,
                    **kwargs: Any) -> Any:
    """from_pretrained(directory, *, model_class=None, config=None, mmap=True, verify=False, **kwargs)

    Loads a model directory holding `.hrry` weights (saved by `save_pretrained` or
    converted by `hurray convert`). The model class: `model_class` (a model class, or an
    Auto class such as `AutoModelForCausalLM`, resolved through its mapping as
    `AutoModelForCausalLM.from_pretrained` resolves it), else the config's
    `architectures`. The weights are read as copy-on-write maps of the files (`mmap`;
    `verify=True` checks each file and its data checksums first) and handed to the
    class's own `from_pretrained` as its `state_dict`: the model is built without
    initialising its weights and takes the maps without copying where the dtype agrees,
    and every keyword of transformers' `from_pretrained` means what it means there
    (`dtype="auto"` (`torch_dtype`, its old name), `device_map` (`"cpu"` needs nothing
    more; another device, accelerate as in transformers), `output_loading_info`,
    `attn_implementation`, config attributes...), checkpoint conversions (fused experts of
    a mixture of experts), tied weights and the initialisation of weights the files do not
    hold included. The generation config is the directory's.
    """
    import transformers
    d = Path(directory)
    if not d.is_dir():
        raise NotADirectoryError(f"from_pretrained: {d} is not a model directory")
    files = weight_files(d)
    for key in ("dtype", "torch_dtype"):
        v = kwargs.get(key)
        if isinstance(v, str) and v != "auto" and not isinstance(getattr(torch, v, None),
                                                                 torch.dtype):
            raise ValueError(f"from_pretrained: {key}={v!r} is neither 'auto' nor the name of a "
                             f"torch dtype ('bfloat16', 'float16', 'float32', ...)")
    if config is None:
        config, kwargs = transformers.AutoConfig.from_pretrained(d, return_unused_kwargs=True,
                                                                 **kwargs)
    from .torch import load_file
    state: dict[str, torch.Tensor] = {}
    for f in files:
        for k, v in load_file(f, mmap=mmap, verify=verify).items():
            if k in state:
                raise ValueError(f"from_pretrained: tensor {k!r} is in two weight files of {d}")
            state[k] = v
    cls = _resolve_class(config, model_class)
    if _is_cpu(kwargs.get("device_map")):
        # the maps are on the CPU already; transformers wants accelerate for any device_map
        kwargs.pop("device_map")
    got = cls.from_pretrained(None, config=config, state_dict=state, **kwargs)
    model = got[0] if isinstance(got, tuple) else got
    if getattr(model, "can_generate", lambda: False)() and (d / "generation_config.json").is_file():
        model.generation_config = transformers.GenerationConfig.from_pretrained(d)
    return got
