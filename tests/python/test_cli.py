"""The `hurray` command (docs/reference/cli.md) and hurray.FileWriter: subcommands,
exit statuses, output, atomic writes, progress; the console script and
`python -m hurray`; hurray-inspect reached through `hurray inspect`."""

import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402
from conftest import inspector_path  # noqa: E402
from hurray._cli import main  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*args):
    return main([str(a) for a in args])


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.hrry"
    hurray.save(path, {"w": np.arange(12, dtype=np.float32).reshape(3, 4),
                       "b": np.zeros(4, np.int64), "mask": np.array([True, False])},
                kv={"config": json.dumps({"hidden": 4, "layers": [1, 2]}),
                    "ids": list(range(100)), "name": "tiny"})
    return path


# ---- the command itself ---------------------------------------------------------

@pytest.mark.slow  # a child interpreter
def test_python_dash_m_and_exit_statuses(tmp_path, model):
    r = subprocess.run([sys.executable, "-m", "hurray", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "convert" in r.stdout and "exit status" in r.stdout
    r = subprocess.run([sys.executable, "-m", "hurray"], capture_output=True, text=True)
    assert r.returncode == 2
    r = subprocess.run([sys.executable, "-m", "hurray", "convert"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
    r = subprocess.run([sys.executable, "-m", "hurray", "ls", str(tmp_path / "nope.hrry")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "nope.hrry" in r.stderr
    hurray.save(tmp_path / "q.hrry", {"w": hurray.zeros([4], dtype="int4")})
    r = subprocess.run([sys.executable, "-m", "hurray", "convert", str(tmp_path / "q.hrry"),
                        str(tmp_path / "q.safetensors")], capture_output=True, text=True)
    assert r.returncode == 1 and "refused" in r.stderr and "'w'" in r.stderr


@pytest.mark.slow  # a child interpreter
def test_console_script_installed():
    exe = pathlib.Path(sysconfig.get_path("scripts")) / "hurray"
    if not exe.exists():
        pytest.skip("the package is not installed with its scripts here (ASan staging)")
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "diff" in r.stdout


@pytest.mark.slow  # a child interpreter
def test_cli_imports_only_the_standard_library():
    code = ("import sys; import hurray; before = set(sys.modules); import hurray._cli; "
            "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
            "bad = sorted(m for m in new if m not in sys.stdlib_module_names and m != 'hurray'); "
            "print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


@pytest.mark.slow  # a child interpreter
def test_a_closed_pipe_stops_quietly(tmp_path):
    # `hurray ls --json big.hrry | head -1`: more output than a pipe holds, the
    # reader leaves after one line; the command stops without a traceback or an
    # error message, with 141 (128 + SIGPIPE) as a shell would report
    big = tmp_path / "big.hrry"
    hurray.save(big, {f"layer.{i:04d}.weight": np.zeros(2, np.float32) for i in range(3000)})
    p = subprocess.Popen([sys.executable, "-m", "hurray", "ls", "--json", str(big)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"{"
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141
    assert err == ""


def test_unknown_formats_and_same_paths(tmp_path, model, capsys):
    assert run("convert", model, tmp_path / "x.txt") == 2
    assert "unknown output format" in capsys.readouterr().err
    assert run("convert", model, model) == 2
    (tmp_path / "junk").write_bytes(b"hello world, not a tensor file")
    assert run("ls", tmp_path / "junk") == 2
    assert run("convert", model, tmp_path / "o.hrry", "--dequantize", "int8") == 2


# ---- ls ----------------------------------------------------------------------

def test_ls_text(model, capsys):
    assert run("ls", model) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].endswith("hrry, 3 tensors")
    assert lines[1].split() == ["name", "dtype", "shape", "layout", "quantization", "bytes"]
    assert lines[2].split() == ["w", "float32", "[3,", "4]", "row_major", "-", "48"]
    assert "total: 3 tensors, 18 parameters" in out
    assert "  float32: 48 bytes" in out
    assert '"hidden": 4' in out  # JSON strings pretty-printed
    body = out.split("\n", 1)[1]  # the first line names the file (its path may hold "97")
    assert "... (100 items)" in body and "97" not in body  # long arrays elided


def test_ls_json_every_format(tmp_path, model, capsys):
    assert run("ls", "--json", model) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "hrry" and doc["totals"]["tensors"] == 3
    assert doc["tensors"][0] == {"name": "w", "dtype": "float32", "shape": [3, 4],
                                 "layout": "row_major", "quantization": None, "bytes": 48,
                                 "view_of": None}
    assert doc["kv"]["ids"] == list(range(100)) and doc["totals"]["parameters"] == 18
    for ext in ("safetensors", "npz", "gguf", "pt"):
        if ext == "gguf":
            pytest.importorskip("gguf")
        if ext == "pt":
            pytest.importorskip("torch")
        dst = tmp_path / f"m.{ext}"
        args = ["convert", "-q", "--drop-kv", model, dst]
        if ext == "gguf":
            args += ["--dequantize", "float32"]  # GGUF has no bool or uint types
        assert run(*args) == 0, capsys.readouterr().err
        assert run("ls", "--json", dst) == 0
        d = json.loads(capsys.readouterr().out)
        assert d["format"] == ("torch" if ext == "pt" else ext)
        assert [t["name"] for t in d["tensors"]] == ["w", "b", "mask"]


def test_ls_of_a_url_reads_no_tensor_data(monkeypatch, capsys):
    """ls takes names, types, shapes and sizes from the descriptors (File.descriptor):
    every range it reads through a memory:// URL lies outside every tensor's data
    (composites, views and quantized tensors included), while the sizes it lists
    are the data's."""
    fsspec = pytest.importorskip("fsspec")
    import uuid

    import samples
    from hurray import _remote
    w = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    tensors = {f"layer.{i}.w": w + i for i in range(6)}
    tensors["tied"] = tensors["layer.0.w"]                      # a view
    tensors["q"] = hurray.quantize(w, "int4", block_size=32)
    tensors["c"] = samples.sample_composites()["nested"]
    url = f"memory://hurray-cli-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as out:
        out.write(hurray.save_bytes(tensors))
    with hurray.open(url) as f:
        data = [(do, dn) for _n, _o, _l, do, dn in f.entries() if dn]
        comp = sum(h.byte_size for n in f.keys() if n.startswith("c.")
                   for h in f.descriptor(n).buffer_handles)
    reads = []
    real = _remote.FsspecSource._range

    def counting(self, offset, mv):
        reads.append((offset, len(mv)))
        return real(self, offset, mv)

    monkeypatch.setattr(_remote.FsspecSource, "_range", counting)
    assert run("ls", "--json", url) == 0
    doc = json.loads(capsys.readouterr().out)
    assert reads and len(data) >= 10
    touched = [(o, n) for o, n in reads for d, dn in data if o < d + dn and d < o + n]
    assert not touched, f"ls read tensor data: {touched}"
    rows = {t["name"]: t for t in doc["tensors"]}
    assert rows["tied"]["view_of"] == "layer.0.w" and rows["layer.1.w"]["bytes"] == w.nbytes
    assert rows["q"]["quantization"] and rows["c"]["bytes"] == comp > 0
    # and reading a tensor does read its data (the check sees reads)
    before = len(reads)
    with hurray.open(url) as f:
        f["layer.3.w"]
    assert [(o, n) for o, n in reads[before:] for d, dn in data if o < d + dn and d < o + n]


# ---- diff --------------------------------------------------------------------

def test_diff(tmp_path, model, capsys):
    assert run("convert", "-q", model, tmp_path / "m.safetensors", "--drop-kv") == 0
    hurray.save(tmp_path / "same.hrry", hurray.load(model), kv={"config": hurray.load_kv(model)
                                                                  ["config"]})
    assert run("diff", model, model) == 0
    assert "the same" in capsys.readouterr().out
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    w[1, 2] += 0.5
    hurray.save(tmp_path / "other.hrry", {"w": w, "b": np.zeros(4, np.int32),
                                          "extra": np.ones(1)}, kv={"name": "tiny"})
    assert run("diff", model, tmp_path / "other.hrry") == 1
    out = capsys.readouterr().out
    assert "~ w: values differ: max |a - b| = 0.5" in out
    assert "~ b: dtype int64 != int32" in out
    assert "- mask: only in" in out and "+ extra: only in" in out
    assert "- kv['ids']: only in" in out
    assert run("diff", "-q", model, tmp_path / "other.hrry") == 1
    assert capsys.readouterr().out == ""
    # across formats: the tensors are the same, the KV is what safetensors kept
    assert run("diff", model, tmp_path / "m.safetensors") == 1
    out = capsys.readouterr().out
    assert "- kv['ids']: only in" in out and "~ w" not in out and "kv['config']" not in out


# ---- convert: atomic, progress, quiet ---------------------------------------

def test_convert_is_atomic(tmp_path, capsys):
    import struct
    good = np.ones(4, np.float32).tobytes()
    header = {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
              "b": {"dtype": "BOOL", "shape": [2], "data_offsets": [16, 18]}}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    src = tmp_path / "bad.safetensors"
    src.write_bytes(struct.pack("<Q", len(text)) + text + good + bytes([1, 2]))
    dst = tmp_path / "out.hrry"
    hurray.save(dst, {"old": np.zeros(1)})
    before = dst.read_bytes()
    assert run("convert", src, dst) == 1
    assert "'b'" in capsys.readouterr().err  # found while writing: the second tensor
    assert dst.read_bytes() == before  # the previous file is untouched
    for target in ("out.safetensors", "out.npz", "out2.hrry"):
        assert run("convert", src, tmp_path / target) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.safetensors", "out.hrry"]


def test_summary_line_and_quiet(tmp_path, model, capsys):
    assert run("convert", model, tmp_path / "a.safetensors", "--drop-kv") == 0
    err = capsys.readouterr().err
    assert "a.safetensors: 3 tensors" in err and "\r" not in err  # not a terminal: no bar
    assert run("convert", "--quiet", model, tmp_path / "b.safetensors", "--drop-kv") == 0
    assert capsys.readouterr().err == ""


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal(monkeypatch):
    from hurray._cli._progress import Progress
    pytest.importorskip("tqdm")
    s = _Tty()
    p = Progress(1000, "x", stream=s)
    assert p.bar is not None
    p.update(500, "w")
    p.update(500, "b")
    p.close()
    assert "x" in s.getvalue()
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the optional dependency missing
    s = _Tty()
    p = Progress(1000, "x", stream=s)
    assert p.bar is None and p.plain
    p.update(1000)
    p.close()
    assert "100.0%" in s.getvalue()
    s = io.StringIO()  # not a terminal: nothing at all
    p = Progress(10, "x", stream=s)
    p.update(10)
    p.close()
    assert s.getvalue() == ""
    s = _Tty()
    p = Progress(10, "x", quiet=True, stream=s)
    p.update(10)
    p.close()
    assert s.getvalue() == ""


# ---- inspect -----------------------------------------------------------------

@pytest.mark.slow  # a child interpreter
def test_inspect(model, capsys, monkeypatch):
    exe = inspector_path()
    if exe is None:
        pytest.skip("hurray-inspect is not built here (the wheel and the C build ship it)")
    monkeypatch.setenv("HURRAY_INSPECT", exe)
    r = subprocess.run([sys.executable, "-m", "hurray", "inspect", str(model), "--brief"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert ".hrry container" in r.stdout
    monkeypatch.setenv("HURRAY_INSPECT", "/nonexistent/hurray-inspect")
    assert run("inspect", model) == 2
    assert "/nonexistent/hurray-inspect" in capsys.readouterr().err


def test_inspect_without_the_binary(model, capsys, monkeypatch):
    import hurray._cli._commands as c
    monkeypatch.setattr(c, "find_inspector", lambda: None)
    assert run("inspect", model) == 2
    assert "hurray-inspect is not installed" in capsys.readouterr().err


# ---- hurray.FileWriter ---------------------------------------------------------

def _partition():
    def tile(row, fill):
        return hurray.Tensor(np.full((2, 4), fill, np.float32), hurray.float32, [2, 4],
                             shard=hurray.Shard([4, 4], [row, 0]))
    return hurray.Composite("partition", shape=[4, 4], dtype=hurray.float32,
                            members=[tile(0, 0.0), tile(2, 1.0)])


def test_file_writer_streams_tensors(tmp_path):
    path = tmp_path / "w.hrry"
    with hurray.FileWriter(path, kv={"k": 1}) as w:
        assert not path.exists()
        w.write("a", np.arange(10, dtype=np.int16))
        w.write("b", hurray.ones([2, 3], dtype="bfloat16"))
        w.write("c", _partition())
        assert w.tensor_count == 5 and not w.closed  # the head and its two members
        assert not path.exists()  # nothing under the target name before finish
    assert w.finished and w.closed
    back = hurray.load(path)
    assert np.array_equal(np.asarray(back["a"]), np.arange(10, dtype=np.int16))
    assert back["b"].dtype.name == "bfloat16"
    assert isinstance(back["c"], hurray.Composite) and back["c"].member_count == 2
    assert np.asarray(back["c"].members[1]).tolist() == [[1.0] * 4] * 2
    assert hurray.load_kv(path) == {"k": 1}
    with pytest.raises(ValueError, match="finished"):
        w.write("d", np.ones(1))
    with pytest.raises(ValueError, match="finished"):
        w.finish()
    w.abort()  # no effect once finished
    assert path.exists()


def test_file_writer_torch_values(tmp_path):
    torch = pytest.importorskip("torch")
    with hurray.FileWriter(tmp_path / "t.hrry", durable=False) as w:
        w.write("p", torch.nn.Parameter(torch.ones(3)))
        w.write("t", torch.arange(6).reshape(2, 3).T)  # strided: kept strided
    back = hurray.load(tmp_path / "t.hrry")
    assert back["t"].layout.name in ("col_major", "strided")
    assert np.array_equal(np.asarray(back["t"]), np.arange(6).reshape(2, 3).T)


def test_file_writer_abort_and_errors(tmp_path):
    path = tmp_path / "x.hrry"
    hurray.save(path, {"old": np.zeros(1)})
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="boom"):
        with hurray.FileWriter(path) as w:
            w.write("a", np.ones(1 << 16))
            raise RuntimeError("boom")
    assert w.closed and not w.finished
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.hrry"]
    w = hurray.FileWriter(path)
    w.write("a", np.ones(2))
    with pytest.raises(hurray.FileError):
        w.write("a", np.ones(2))  # a duplicate name: refused, the writer still usable
    w.write("b", np.ones(2))
    with pytest.raises(TypeError):
        w.write(3, np.ones(2))
    with pytest.raises(TypeError):
        w.write("c", object())
    w.abort()
    assert path.read_bytes() == before
    with pytest.raises(ValueError, match="reserved"):
        hurray.FileWriter(path, kv={"hurray.views": "x"})
    with pytest.raises(hurray.FileError):
        hurray.FileWriter(tmp_path / "no" / "such" / "dir.hrry")
    with pytest.raises(TypeError):
        hurray.FileWriter(path, durable=1)
    w = hurray.FileWriter(path)
    del w  # dropped unfinished: its temporary file goes, the target stays
    assert path.read_bytes() == before
    assert "FileWriter" in repr(hurray.FileWriter(tmp_path / "r.hrry"))


def test_file_writer_is_the_save_format(tmp_path):
    """A file written tensor by tensor equals the one save writes from the dict."""
    ts = {"x": np.arange(100, dtype=np.float64), "y": np.ones((3, 3), np.uint8)}
    hurray.save(tmp_path / "s.hrry", ts, kv={"a": "b"})
    with hurray.FileWriter(tmp_path / "w.hrry", kv={"a": "b"}) as w:
        for k, v in ts.items():
            w.write(k, v)
    assert (tmp_path / "s.hrry").read_bytes() == (tmp_path / "w.hrry").read_bytes()
