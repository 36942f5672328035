"""`hurray convert` leaves the old target or the complete new one, and nothing
else (docs/reference/cli.md, "Atomic"), for every target format: a write that fails
(a full disk, here RLIMIT_FSIZE) removes its temporary and says so in one line
naming the target; a conversion killed with SIGKILL leaves at most a temporary
named `.<name>.tmp-XXXXXX`, which hurray.remove_stale_temporaries removes.
Each case runs in a subprocess of its own, so a crash is a failure."""

import os
import re
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE and SIGKILL: POSIX")

TEMP = re.compile(r"^\.(?P<base>.+)\.tmp-[a-z2-7]{6}$")  # the one temporary name we create
TARGETS = ["hrry", "safetensors", "gguf", "pt", "npy", "npz"]
NEEDS = {"safetensors": None, "gguf": "gguf", "pt": "torch"}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _source(tmp_path, ext):
    """A .hrry source: two float32 tensors of 256 KiB (one of 512 KiB for a .npy
    target)."""
    src = tmp_path / "src.hrry"
    rng = np.random.default_rng(0)
    ts = {"a": rng.standard_normal(1 << (17 if ext == "npy" else 16)).astype(np.float32)}
    if ext != "npy":
        ts["b"] = rng.standard_normal(1 << 16).astype(np.float32)
    hurray.save(src, {k: hurray.from_numpy(v) for k, v in ts.items()})
    return src


def _need(ext):
    if NEEDS.get(ext):
        pytest.importorskip(NEEDS[ext])


@pytest.mark.slow  # a child interpreter
@pytest.mark.parametrize("ext", TARGETS)
def test_a_full_disk_leaves_the_old_file_and_one_line(tmp_path, ext):
    _need(ext)
    if ext == "pt" and os.environ.get("HURRAY_EXPECT_ASAN"):
        # torch reports the full disk with a C++ exception, which the ASan preload of
        # python_tests.sh --asan turns into an abort (as in test_framework.py)
        pytest.skip("torch's C++ exceptions abort under the ASan preload")
    src = _source(tmp_path, ext)
    dst = tmp_path / f"out.{ext}"
    dst.write_bytes(b"the old file")
    limit = 300 << 10  # the output needs 512 KiB: the disk fills mid-way

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run([sys.executable, "-m", "hurray", "convert", str(src), str(dst), "-q"],
                       capture_output=True, text=True, env=_env(), preexec_fn=small_disk,
                       timeout=120)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith(f"hurray convert: {dst}: "), p.stderr
    assert "too large" in lines[0].lower(), p.stderr
    assert dst.read_bytes() == b"the old file"
    assert sorted(os.listdir(tmp_path)) == sorted(["src.hrry", f"out.{ext}"])


KILLER = """
import os, signal, sys
sys.path[:0] = {path!r}
import hurray._cli._formats as F
sink = F.SINKS[F.detect({dst!r}, writing=True)]
written = []
def kill_after_first(self, e, mode, _write=sink.write):
    _write(self, e, mode)
    written.append(e.name)
    if len(written) == {after}:
        os.kill(os.getpid(), signal.SIGKILL)  # mid-conversion: one tensor on disk
sink.write = kill_after_first
if {at_commit}:
    def kill_at_commit(self, _commit=F.AtomicFile.commit):
        os.kill(os.getpid(), signal.SIGKILL)  # complete, not yet renamed
    F.AtomicFile.commit = kill_at_commit
from hurray._cli import main
main(["convert", {src!r}, {dst!r}, "-q"])
"""


@pytest.mark.slow  # a child interpreter
@pytest.mark.parametrize("ext", TARGETS)
def test_a_killed_conversion_leaves_only_what_cleanup_removes(tmp_path, ext):
    _need(ext)
    src = _source(tmp_path, ext)
    dst = tmp_path / f"out.{ext}"
    dst.write_bytes(b"the old file")
    # torch.save and a .npy write the whole file at once: killed before the rename
    at_commit = ext in ("pt", "npy")
    code = KILLER.format(path=sys.path, src=str(src), dst=str(dst), after=-1 if at_commit else 1,
                         at_commit=at_commit)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert dst.read_bytes() == b"the old file"
    strays = [n for n in os.listdir(tmp_path) if n not in ("src.hrry", f"out.{ext}")]
    if ext == "hrry":
        # the .hrry writer's file has no name until it is complete (Linux, O_TMPFILE);
        # a file system without unnamed files gets the same named temporary
        assert len(strays) <= 1, strays
    else:
        assert len(strays) == 1, strays
    for n in strays:
        m = TEMP.match(n)
        assert m and m.group("base") == f"out.{ext}", n
    # a target's own temporaries, then the folder's: every name we create is known
    assert hurray.remove_stale_temporaries(dst, min_age=0) == len(strays)
    assert hurray.remove_stale_temporaries(tmp_path, min_age=0) == 0
    assert sorted(os.listdir(tmp_path)) == sorted(["src.hrry", f"out.{ext}"])


def test_a_live_conversion_keeps_its_temporary(tmp_path):
    # the temporary of a conversion still running is locked: the cleanup leaves it
    from hurray._cli._formats import AtomicFile
    f = AtomicFile(str(tmp_path / "x.safetensors"))
    try:
        name = os.path.basename(f.tmp)
        assert TEMP.match(name) and name.startswith(".x.safetensors.tmp-")
        assert hurray.remove_stale_temporaries(tmp_path, min_age=0) == 0
        assert os.path.exists(f.tmp)
    finally:
        f.abort()
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # a child interpreter
@pytest.mark.parametrize("ext", ["safetensors", "npz", "hrry"])
def test_a_missing_folder_is_one_line(tmp_path, ext):
    src = _source(tmp_path, ext)
    dst = tmp_path / "no" / f"x.{ext}"
    p = subprocess.run([sys.executable, "-m", "hurray", "convert", str(src), str(dst), "-q"],
                       capture_output=True, text=True, env=_env(), timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith(f"hurray convert: {dst}: ") and "Traceback" not in p.stderr, \
        p.stderr
    assert os.listdir(tmp_path) == ["src.hrry"]
