"""`hurray view` in a real browser: the command serves a file (and two files side
by side), headless Chromium renders the page, its DOM is checked (the tree of
tensors, a histogram drawn, the diff view) and screenshots are kept as test
artefacts ($HURRAY_ARTEFACTS, else build-artefacts/view/); with
HURRAY_UPDATE_SCREENSHOTS=1 they also replace the guide's
(docs/guide/img/view-*.png, docs/guide/view.md). The JSON endpoints behind the
page are tested in tests/python/test_view.py."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
QUANTIZED = "model.layers.1.mlp.up_proj.weight.q"


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def demo_model(path, tuned=False):
    """A small model: embeddings tied to the head, layers of float and quantized
    weights (with the float weight a quantized one was made from), a sparse mask,
    a composite split in shards. `tuned`: the same, some weights changed, one
    tensor gone, one added, one of another type (the diff's second file)."""
    rng = np.random.default_rng(0)
    t = {}
    embed = rng.standard_normal((1000, 64)).astype(np.float32)
    t["model.embed_tokens.weight"] = embed
    for i in range(4):
        p = f"model.layers.{i}."
        for k in ("q", "k", "v", "o"):
            t[p + f"self_attn.{k}_proj.weight"] = (rng.standard_normal((64, 64)) * 0.05
                                                   ).astype(np.float32)
        up = (rng.standard_normal((256, 64)) * 0.05).astype(np.float32)
        t[p + "mlp.up_proj.weight"] = up
        t[p + "mlp.up_proj.weight.q"] = hurray.quantize(up, "int4", block_size=32,
                                                        scale_dtype="float16")
        t[p + "mlp.down_proj.weight"] = hurray.quantize(
            (rng.standard_normal((64, 256)) * 0.05).astype(np.float32), "nf4")
        t[p + "input_layernorm.weight"] = np.ones(64, np.float32)
    t["model.norm.weight"] = np.ones(64, np.float32)
    t["lm_head.weight"] = embed                            # tied: stored once, a view
    rows, cols = np.nonzero(np.abs(np.subtract.outer(np.arange(128), np.arange(128))) < 6)
    keep = rng.random(rows.size) < 0.7
    idx = np.stack([rows[keep], cols[keep]], axis=1).astype(np.uint64)
    t["model.attention_mask"] = hurray.sparse_coo(
        rng.standard_normal(idx.shape[0]).astype(np.float32), idx, [128, 128])
    shards = [hurray.Tensor(np.ascontiguousarray(embed[k * 250:(k + 1) * 250, :32]), "float32",
                            (250, 32), shard=hurray.Shard((1000, 32), (k * 250, 0)))
              for k in range(4)]
    t["model.experts"] = hurray.Composite("partition", (1000, 32), "float32", shards)
    if tuned:
        for k in ("q", "v"):
            name = f"model.layers.2.self_attn.{k}_proj.weight"
            t[name] = t[name] + np.float32(0.01)
        t["model.norm.weight"] = t["model.norm.weight"].astype(np.float16)
        del t["model.layers.3.input_layernorm.weight"]
        t["model.layers.3.post_attention_layernorm.weight"] = np.ones(64, np.float32)
    hurray.save(path, t, kv={"model": "demo", "layers": 4, "tuned": tuned})


def serve(*files):
    """`hurray view FILES --no-browser --port 0`, run in the files' folder (the page
    shows the names as given); (process, URL it prints)."""
    proc = subprocess.Popen([sys.executable, "-m", "hurray", "view", *(f.name for f in files),
                             "--no-browser", "--port", "0"], cwd=files[0].parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
    if not m:
        proc.kill()
        raise AssertionError(f"no URL printed: {line!r} {proc.stderr.read()}")
    return proc, m.group(1)


def artefacts():
    d = Path(os.environ.get("HURRAY_ARTEFACTS") or ROOT / "build-artefacts") / "view"
    d.mkdir(parents=True, exist_ok=True)
    return d


def browse(exe, url, tmp_path, shot=None, size="1600,900"):
    common = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={size}",
              "--virtual-time-budget=8000"]
    what = [f"--screenshot={shot}"] if shot else ["--dump-dom"]
    r = subprocess.run(common + what + [url], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.fixture(scope="module")
def exe():
    path = chromium()
    if path is None:
        print("chromium is not installed (scripts/setup.sh installs it with HURRAY_SETUP_DOCS=1)")
        pytest.skip("chromium is not installed: HURRAY_SETUP_DOCS=1 scripts/setup.sh")
    return path


def keep(shot, name):
    """The screenshot as an artefact, and as the guide's with HURRAY_UPDATE_SCREENSHOTS=1."""
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.copy(shot, artefacts() / name)
    print(f"screenshot: {artefacts() / name}")
    if os.environ.get("HURRAY_UPDATE_SCREENSHOTS") == "1":
        (ROOT / "docs" / "guide" / "img").mkdir(exist_ok=True)
        shutil.copy(shot, ROOT / "docs" / "guide" / "img" / name)


def test_the_page_of_a_file(exe, tmp_path):
    demo_model(tmp_path / "model.hrry")
    proc, url = serve(tmp_path / "model.hrry")
    try:
        t0 = time.monotonic()
        dom = browse(exe, url + "#tensor=" + QUANTIZED, tmp_path)
        print(f"page loaded and dumped in {time.monotonic() - t0:.2f} s")
        assert 'data-ready="1"' in dom, dom[-3000:]
        # the summary: cards, dtypes, KV
        assert re.search(r'<span class="hrv-muted">tensors</span><b>\d+</b>', dom)
        assert "by dtype" in dom and "nf4" in dom and ">model<" in dom
        # the tree: groups by prefix, the selected tensor's path opened, the tied head a view
        assert '<table class="grid" id="tree">' in dom
        assert 'data-group="model.layers"' in dom or 'data-group="model.layers.1"' in dom
        assert f'data-name="{QUANTIZED}"' in dom
        assert "view of model.embed_tokens.weight" in dom
        # the detail: its values and scales drawn as histograms, the error against
        # the float weight it was made from
        detail = dom[dom.index('id="detail"'):]
        assert f'<div class="hrv-title">{QUANTIZED}</div>' in detail
        hists = re.findall(r'<svg class="hrv-hist".*?</svg>', detail, re.S)
        assert len(hists) == 3, len(hists)             # values, scales, error
        assert all(h.count("<rect") > 5 for h in hists)
        assert "dequantization error against model.layers.1.mlp.up_proj.weight" in detail
        shot = tmp_path / "view-file.png"
        browse(exe, url + "#tensor=" + QUANTIZED, tmp_path, shot)
        keep(shot, "view-file.png")
        # a sparse tensor's pattern and a composite's members, by their links
        dom = browse(exe, url + "#tensor=model.attention_mask", tmp_path)
        assert re.search(r'<svg class="hrv-pattern".*?<rect.*?</svg>', dom, re.S)
        dom = browse(exe, url + "#tensor=model.experts", tmp_path)
        assert dom.count('<rect x=') >= 5 and "hrv-placement" in dom
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_page_of_two_files(exe, tmp_path):
    demo_model(tmp_path / "model.hrry")
    demo_model(tmp_path / "tuned.hrry", tuned=True)
    proc, url = serve(tmp_path / "model.hrry", tmp_path / "tuned.hrry")
    try:
        dom = browse(exe, url + "#compare=all", tmp_path)
        assert 'data-ready="1"' in dom and '<table class="grid" id="diff">' in dom
        assert re.search(r'<tr class="only_a" data-name="model.layers.3.input_layernorm.weight">',
                         dom)
        assert 'class="only_b" data-name="model.layers.3.post_attention_layernorm.weight"' in dom
        assert re.search(r'class="changed" data-name="model.norm.weight">.*?dtype float32 -&gt; '
                         r'float16', dom, re.S)
        # every value compared: the changed weights differ by 0.01, the rest equal
        row = re.search(r'class="differ" data-name="model.layers.2.self_attn.q_proj.weight">'
                        r'.*?max \|a − b\| = ([0-9.e-]+)', dom, re.S)
        assert row and abs(float(row.group(1)) - 0.01) < 1e-4, dom[-2000:]
        assert 'class="same" data-name="model.embed_tokens.weight"' in dom
        assert "values compared" in dom
        shot = tmp_path / "view-diff.png"
        browse(exe, url + "#compare=all", tmp_path, shot)
        keep(shot, "view-diff.png")
    finally:
        proc.terminate()
        proc.wait(10)
