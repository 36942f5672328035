"""Every recipe of docs/recipes.md runs as written: the Python blocks of each
section are executed in order, in one namespace, in a scratch folder."""
import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "recipes.md"


def sections():
    text = DOC.read_text()
    out = []
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        title = part.splitlines()[0].strip()
        blocks = re.findall(r"```python\n(.*?)```", part, flags=re.S)
        if blocks:
            out.append((title, blocks))
    return out


NEEDS = {"A transformers model with tied weights": ["torch", "transformers"],
         "A PyTorch checkpoint": ["torch"],
         "Moving from safetensors": ["torch", "safetensors"],
         "Writable maps": ["numpy"],
         "Partial reads for sharded loading": ["torch"],
         "Quantize, save, load, dequantize": ["numpy"]}


@pytest.mark.parametrize("title,blocks", sections(), ids=[t for t, _ in sections()])
def test_recipe_runs(title, blocks, tmp_path, monkeypatch):
    for mod in NEEDS.get(title, ["numpy"]):
        pytest.importorskip(mod)
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "recipe"}
    if title == "Moving from safetensors":
        import safetensors.torch
        import torch
        safetensors.torch.save_file({"x": torch.arange(6.0)}, "model.safetensors")
    for code in blocks:
        exec(compile(code, f"{DOC.name}: {title}", "exec"), ns)
    assert os.listdir(tmp_path)


def test_every_section_is_known():
    assert {t for t, _ in sections()} <= set(NEEDS) | {"Quantize, save, load, dequantize",
                                                       "Partial reads for sharded loading"}
