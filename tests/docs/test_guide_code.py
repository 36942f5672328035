"""Every code block of every guide page runs as written (tests/python/mdcode.py):
each page's ```python, ```sh and ```c blocks in page order, in a fresh scratch
folder, one Python namespace per page. A failure names the page and the line."""
import os
import re
from pathlib import Path

import pytest

import mdcode

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
PAGES = sorted(GUIDE.glob("*.md")) + [ROOT / "docs" / "index.md"]

# Pages of prose and tables only, with the reason (any other page must have a block that runs).
NO_CODE = {}


def _lib():
    lib = mdcode.c_library()
    if lib is None and os.environ.get("HURRAY_DOCS_REQUIRE_C") == "1":
        pytest.fail("build/libhurray.a is missing (build the C library first: cmake --build build)")
    return lib


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_runs(page, tmp_path):
    unit = mdcode.page_unit(page)
    missing = mdcode.missing_modules(unit)
    if missing:
        pytest.skip(f"{unit.page} needs {', '.join(missing)}")
    lib = None
    if any(b.lang == "c" and "skip" not in b.marks for b in unit.blocks):
        lib = _lib()
        if lib is None:
            pytest.skip(f"{unit.page} has C examples and build/libhurray.a is not built")
    ran = mdcode.run_unit(unit, tmp_path, lib)
    if page.name not in NO_CODE:
        assert ran > 0, f"{unit.page}: no block ran"


def test_every_guide_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        rel = page.relative_to(ROOT / "docs").as_posix()
        assert re.search(rf":\s*{re.escape(rel)}\s*$", nav, re.M), f"{rel} is not in mkdocs.yml's nav"


def test_skips_are_rare():
    skipped = [(u.page, b.line) for u in map(mdcode.page_unit, PAGES) for b in u.blocks
               if "skip" in b.marks]
    runnable = sum(len(mdcode.page_unit(p).blocks) for p in PAGES)
    assert len(skipped) * 10 <= runnable, f"too many skipped blocks: {skipped}"
