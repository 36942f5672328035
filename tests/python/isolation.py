"""Running a test's code where a crash cannot take the suite down: `isolated`
runs a piece of code in a fresh interpreter; `has` says whether a module imports
(importing it: call it where the cost of importing torch or JAX is wanted)."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def isolated(code, timeout=120, env=None):
    """Runs `code` in a fresh interpreter (this one's sys.path, this directory on
    it); fails unless it exits 0 having printed OK."""
    prelude = "import sys\nsys.path[:0] = %r\n" % ([HERE] + sys.path,)
    full = prelude + textwrap.dedent(code) + "\nprint('OK')\n"
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True,
                       timeout=timeout, env=e)
    if p.returncode < 0:
        pytest.fail(f"the child died of signal {signal.Signals(-p.returncode).name}:\n"
                    f"{p.stdout}\n{p.stderr[-4000:]}")
    assert p.returncode == 0 and p.stdout.strip().endswith("OK"), p.stdout + p.stderr[-4000:]
    return p.stdout


def has(module):
    try:
        __import__(module)
        return True
    except Exception:  # noqa: BLE001 - any failure to import means "not here"
        return False
