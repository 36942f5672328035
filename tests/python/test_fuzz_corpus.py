"""Replays the corpora of the Python fuzz targets (fuzz/python/fuzz_*.py, run
with atheris by scripts/fuzz.sh python-NAME MINUTES): every saved input goes
through the same harness again. Under scripts/python_tests.sh --asan (the
sanitizer suite) the replay runs under ASan and UBSan, as the C fuzzers'
corpora replay under ctest."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "fuzz" / "python"
CORPUS = ROOT / "fuzz" / "corpus"
TARGETS = ["dlpack", "native", "array", "views", "checksums", "safetensors", "gguf", "npy"]
# what a target's seeds are made with (the converter targets make theirs with
# the format's own library)
NEEDS = {"safetensors": "safetensors", "gguf": "gguf"}

pytestmark = pytest.mark.skipif(
    not FUZZ.is_dir(), reason="fuzz/ is not part of this tree (an sdist or wheel test)")


def harness(name):
    sys.path.insert(0, str(FUZZ))
    try:
        return __import__(f"fuzz_{name}")
    finally:
        sys.path.remove(str(FUZZ))


def inputs(name):
    d = CORPUS / f"python-{name}"
    return sorted(d.iterdir()) if d.is_dir() else []


# the views corpus takes seconds (each input goes through every strided consumer)
@pytest.mark.parametrize("name", [pytest.param(t, marks=pytest.mark.slow) if t == "views" else t
                                  for t in TARGETS])
def test_corpus_replays(name):
    pytest.importorskip("numpy")
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    files = inputs(name)
    assert files, f"fuzz/corpus/python-{name} is empty: run scripts/fuzz.sh python-{name} 1"
    h = harness(name)
    if name == "native":
        import capi
        why = capi.usable()
        if why:
            pytest.skip(why)
    for f in files:
        h.one_input(f.read_bytes())


def test_seeds_of_known_findings_are_kept():
    # inputs that once found a bug (fixed) stay in the corpus, so the fix stays tested
    kept = {p.name for p in (CORPUS / "python-dlpack").iterdir()} if (
        CORPUS / "python-dlpack").is_dir() else set()
    assert "regression-byte-offset-2-63" in kept


def test_regression_inputs_decode_as_recorded():
    sys.path.insert(0, str(FUZZ))
    try:
        import fuzz_dlpack
        from fuzz_input import Input
    finally:
        sys.path.remove(str(FUZZ))
    data = (CORPUS / "python-dlpack" / "regression-byte-offset-2-63").read_bytes()
    f = fuzz_dlpack.fields(Input(data))
    assert f["byte_offset"] == 1 << 63 and f["copy"] is True and f["shape"] == [5]
    fuzz_dlpack.one_input(data)  # refused before a byte is read (a segfault before the fix)


if os.environ.get("HURRAY_FUZZ_REPLAY_ONLY"):  # pragma: no cover - a manual switch
    TARGETS[:] = [t for t in TARGETS if t == os.environ["HURRAY_FUZZ_REPLAY_ONLY"]]
