"""The sanitizer suite (scripts/python_tests.sh --asan, HURRAY_EXPECT_ASAN=1)
proves what it runs is instrumented: a deliberate fault in the extension
(hurray._hurray._sanitizer_probe, compiled only into HURRAY_SANITIZE builds)
must abort the process with the sanitizer's report. Without this, a build
that silently lost -fsanitize would pass the suite and prove nothing. In an
ordinary build the probe must not exist."""
import os
import subprocess
import sys

import pytest

import hurray
from hurray import _hurray

ASAN = bool(os.environ.get("HURRAY_EXPECT_ASAN"))


def _child(kind):
    code = f"import hurray._hurray as h; h._sanitizer_probe({kind!r}); print('survived')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=os.environ.copy())


@pytest.mark.skipif(ASAN, reason="sanitizer build: the probe exists there")
def test_ordinary_build_has_no_probe():
    assert not hasattr(_hurray, "_sanitizer_probe")
    assert hurray.__version__


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not ASAN, reason="only the sanitizer suite (HURRAY_EXPECT_ASAN=1)")
def test_undefined_behaviour_in_the_extension_aborts():
    r = _child("undefined")
    assert r.returncode != 0, r.stdout
    assert "survived" not in r.stdout
    assert "runtime error" in r.stderr and "signed integer overflow" in r.stderr, r.stderr[-2000:]
    assert "module.c" in r.stderr


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not ASAN, reason="only the sanitizer suite (HURRAY_EXPECT_ASAN=1)")
def test_memory_error_in_the_extension_aborts():
    r = _child("address")
    assert r.returncode != 0, r.stdout
    assert "survived" not in r.stdout
    assert "heap-buffer-overflow" in r.stderr, r.stderr[-2000:]


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not ASAN, reason="only the sanitizer suite (HURRAY_EXPECT_ASAN=1)")
def test_probe_refuses_unknown_kinds():
    with pytest.raises(ValueError, match="_sanitizer_probe"):
        _hurray._sanitizer_probe("nothing")
