"""Every recipe of docs/guide/recipes.md runs as written: the blocks of each section
are executed in order, in one namespace, in a scratch folder (tests/python/mdcode.py,
the runner the guide pages use too: tests/docs/test_guide_code.py)."""
from pathlib import Path

import pytest

import mdcode

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "recipes.md"
UNITS = mdcode.section_units(DOC)


# a recipe that needs transformers imports it and builds a model: seconds, slow
@pytest.mark.parametrize("unit", [pytest.param(u, marks=pytest.mark.slow)
                                  if "transformers" in u.needs else u for u in UNITS],
                         ids=[u.title for u in UNITS])
def test_recipe_runs(unit, tmp_path):
    missing = mdcode.missing_modules(unit)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    assert mdcode.run_unit(unit, tmp_path) == len(unit.blocks)
    assert [p for p in tmp_path.iterdir() if p.name != ".bin"]  # each recipe writes a file


def test_every_recipe_is_collected():
    # one unit per section of the page, each with at least one block and its needs
    assert [u.title for u in UNITS] == [
        "A PyTorch checkpoint", "A transformers model with tied weights",
        "Moving from safetensors", "Writable maps", "Partial reads for sharded loading",
        "Quantize, save, load, dequantize"]
    assert all(u.needs for u in UNITS)
