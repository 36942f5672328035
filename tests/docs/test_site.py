"""The documentation site: it builds strictly, its API reference is generated
from the package (every public name, the C docstrings, the stubs' types), the
strict build really fails on a broken link and on a page left out of the
navigation, and a real browser renders a page with its navigation, a code
block and a table (the one screenshot test)."""
import html
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import yaml

import hurray

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "scripts" / "build_docs.sh"


def build(site_dir, config=None):
    env = dict(os.environ, SITE_DIR=str(site_dir), PYTHON=sys.executable)
    cmd = [str(BUILD)] + (["--config-file", str(config)] if config else [])
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site: $HURRAY_SITE_DIR when scripts/test.sh has just built it,
    else a fresh strict build (which must succeed)."""
    given = os.environ.get("HURRAY_SITE_DIR")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("site")
    proc = build(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def text_of(page):
    body = page.read_text()
    body = body[body.find("<article"):body.find("</article>")]
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def test_every_guide_and_reference_page_is_built(site):
    for md in (ROOT / "docs").rglob("*.md"):
        rel = md.relative_to(ROOT / "docs").with_suffix("")
        out = site / ("index.html" if rel.name == "index" and rel.parent == Path(".") else
                      rel.parent / rel.name / "index.html" if rel.name != "index" else
                      rel.parent / "index.html")
        assert out.is_file(), f"{md} was not built ({out})"
    # files outside docs/ that pages link to are published too
    assert (site / "COMPAT-MATRIX" / "index.html").is_file()
    assert (site / "source" / "examples" / "c" / "read_stream.c" / "index.html").is_file()


def test_the_api_reference_documents_every_public_name(site):
    page = (site / "reference" / "api" / "index.html").read_text()
    ids = set(re.findall(r'id="(hurray\.[\w.]+)"', page))
    missing = [n for n in hurray.__all__ if f"hurray.{n}" not in ids]
    assert not missing, f"not in the API reference: {missing}"
    for name in ["save_file", "load_file", "save", "load", "save_model", "load_model"]:
        assert f"hurray.torch.{name}" in ids


def test_the_api_reference_has_the_c_docstrings_and_the_stub_types(site):
    text = text_of(site / "reference" / "api" / "index.html")
    at = text.index("dequantize(dtype: DtypeLike | None = None) -> Tensor")  # the stub's types
    # the C extension's docstring, without its signature line repeated
    assert "partial blocks included" in text[at:at + 800]
    assert "dequantize(dtype=None)" not in text
    # a Python function of the package: its docstring and the stub's signature
    assert "durable: bool = True" in text and "atomically" in text
    # constants do not show int's docstring
    assert "Convert a number or string to an integer" not in text


def test_the_generated_reference_carries_the_class_rules(site):
    """The rules once written by hand (python-classes.md) come from the docstrings:
    each C class shows its constructor (the stub's __new__, merged into the class
    heading), its own rules and its table-driven field docs; object's generic text
    ("Create and return a new object") shows nowhere."""
    text = text_of(site / "reference" / "api" / "index.html")
    assert "Create and return a new object" not in text
    assert "Return hash(self)" not in text
    at = text.index("BlockPagedLayout(page_size: int")  # the constructor, in the heading
    assert "tag 0x0A" in text[at:at + 600]
    assert "cannot be given as a number" in text  # layer_index, from src/layout/info.c
    assert "1 to 254: 0 is the data" in text  # scale_buffer_index, from src/quant/info.c
    for rule in ["a fresh one per access", "64-byte-aligned, row-major buffer in host memory",
                 "hashed by value, that is by its encoding", "a NaN equals itself",
                 "forbidden on CSF and block-paged tensors", "re-encodes to exactly the bytes"]:
        assert rule in text, rule


def test_strict_mode_fails_on_a_broken_link_and_a_page_not_in_the_nav(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "guide" / "quickstart.md").write_text(
        (docs / "guide" / "quickstart.md").read_text() + "\n[gone](no-such-page.md)\n")
    (docs / "orphan.md").write_text("# Not in the nav\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["docs_dir"] = str(docs)
    config["hooks"] = [str(ROOT / h) for h in config["hooks"]]
    for plugin in config["plugins"]:  # paths in the configuration are relative to its folder
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            options = plugin["mkdocstrings"]["handlers"]["python"]["options"]
            options["extensions"] = [str(ROOT / e) for e in options["extensions"]]
    cfg = tmp_path / "mkdocs.yml"
    cfg.write_text(yaml.safe_dump(config, sort_keys=False))
    proc = build(tmp_path / "site", cfg)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "no-such-page.md" in out
    assert "orphan.md" in out
    assert "Aborted with 2 warnings in strict mode" in out


# ---- a real browser ---------------------------------------------------------------------

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_pixels(data):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def test_a_browser_renders_the_navigation_a_code_block_and_a_table(site, tmp_path):
    exe = chromium()
    if exe is None:
        print("chromium is not installed (scripts/setup.sh installs it with HURRAY_SETUP_DOCS=1)")
        pytest.skip("chromium is not installed: HURRAY_SETUP_DOCS=1 scripts/setup.sh")
    page = (site / "guide" / "quantization" / "index.html").as_uri()
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,2400",
              "--virtual-time-budget=3000"]
    dom = subprocess.run(common + ["--dump-dom", page], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    tree = dom.stdout
    # the navigation: the Guide section with its pages, rendered by Material's templates
    nav = tree[tree.index('class="md-nav md-nav--primary"'):]
    assert "Quickstart" in nav and "Comparison" in nav and "Python API (generated)" in nav
    # a highlighted code block and a table, in the article
    code = re.search(r'<div class="highlight"><pre id="__code_\d+">(.*?)</pre>', tree, re.S)
    assert code, "no highlighted code block"
    assert '<span class="kn">import</span>' in code.group(1)     # highlighted tokens
    # Material's copy button: added by its JavaScript in the browser (not in the HTML file)
    assert 'class="md-code__button" title="Copy to clipboard"' in code.group(1)
    assert re.search(r"<table>.*?<th[^>]*>scheme</th>.*?<td[^>]*>int8, per tensor</td>",
                     tree, re.S)

    shot = tmp_path / "page.png"
    run = subprocess.run(common + [f"--screenshot={shot}", page], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    width, height, rows, bpp = png_pixels(shot.read_bytes())
    assert (width, height) == (1280, 2400)
    # not blank: many colours, and a good share of the page differs from the background
    pixels = [row[i:i + 3] for row in rows[::8] for i in range(0, len(row), bpp * 8)]
    background = max(set(pixels), key=pixels.count)
    colours = len(set(pixels))
    inked = sum(p != background for p in pixels) / len(pixels)
    print(f"screenshot {width}x{height}: {colours} colours, {inked:.1%} not background")
    assert colours > 50 and inked > 0.05
    # Material's header bar (its primary colour, indigo by default) across the top
    top = rows[10][640 * bpp:640 * bpp + 3]
    assert top != background and top[2] > top[0], top
