"""The main job (examples/demo.py, run by scripts/demo.sh) succeeds end to end."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

DEMO = ROOT / "examples" / "demo.py"


@pytest.mark.slow  # runs examples/demo.py in a child interpreter
@pytest.mark.skipif(not DEMO.is_file(), reason="examples/demo.py is not in this tree (sdist)")
def test_demo_runs(tmp_path):
    pytest.importorskip("numpy")
    inspect = ROOT / "build" / "cli" / "hurray-inspect"
    cmd = [sys.executable, str(DEMO), "--out", str(tmp_path)]
    if inspect.exists():
        cmd += ["--inspect", str(inspect)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=os.environ.copy())
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.rstrip().endswith("OK")
    assert "child: 8/8 items verified" in p.stdout
    assert (tmp_path / "demo.hrry").is_file()
