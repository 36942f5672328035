"""What a new user hit in the first minutes (issue 25, item 4): `hurray --version`, counts
that agree with their number ("1 tensor", "1 entry"), one unit system for sizes (the
progress counter, the convert summary and `ls`), `diff` saying what differs and nothing
false, command help that names the guide's page rather than a repository path, and an
error for a torch dtype with no Hurray type that names the torch dtype."""

import io
import platform
import re
import sys
import warnings

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402
from hurray._cli import _parser, main  # noqa: E402
from hurray._cli._progress import Progress, count  # noqa: E402


def run(*args):
    return main([str(a) for a in args])


def test_version_names_the_package_the_library_and_python(capsys):
    with pytest.raises(SystemExit) as ei:
        run("--version")
    assert ei.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == (f"hurray {hurray.__version__} (libhurray {hurray._hurray.library_version}, "
                   f"{platform.python_implementation()} {platform.python_version()})")


def test_help_names_the_guide_page_not_a_repository_path():
    text = _parser().format_help()
    assert "The hurray command" in text
    assert not re.search(r"docs/|\.md\b", text)


@pytest.mark.parametrize("n, noun, want", [(0, "tensor", "0 tensors"), (1, "tensor", "1 tensor"),
                                           (2, "entry", "2 entries"), (1, "entry", "1 entry"),
                                           (1234, "view", "1,234 views")])
def test_count(n, noun, want):
    assert count(n, noun) == want


def test_ls_and_verify_count_in_the_singular(tmp_path, capsys):
    p = tmp_path / "one.hrry"
    hurray.save(p, {"a": np.zeros(3, np.float32)}, kv={"k": "v"})
    assert run("ls", p) == 0
    out = capsys.readouterr().out
    assert f"{p}: hrry, 1 tensor\n" in out
    assert "total: 1 tensor, 3 parameters" in out
    assert "kv: 1 entry\n" in out
    assert "1 tensors" not in out and "1 entries" not in out
    assert run("verify", p) == 0
    assert ": OK, 1 tensor, structure" in capsys.readouterr().out
    with hurray.open(p) as f:
        assert "1 tensor," in repr(f) and "1 tensors" not in repr(f)


def test_convert_summary_says_the_size_as_ls_does(tmp_path, capsys):
    st = pytest.importorskip("safetensors.numpy")
    src = tmp_path / "m.safetensors"
    st.save_file({"a": np.ones((1000, 1000), np.float32),
                  "b": np.ones((7, 3), np.float16)}, str(src))
    dst = tmp_path / "m.hrry"
    assert run("convert", src, dst) == 0
    summary = capsys.readouterr().err
    assert run("ls", dst) == 0
    ls_total = re.search(r"total: .*?, ([\d,]+ bytes \([^)]*\))", capsys.readouterr().out)[1]
    assert f"2 tensors, {ls_total} in " in summary  # the same bytes, the same unit


@pytest.mark.parametrize("tqdm", ["installed", "absent"])
def test_progress_counter_uses_binary_units(tqdm, monkeypatch):
    if tqdm == "absent":
        monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    else:
        pytest.importorskip("tqdm")

    class Tty(io.StringIO):
        def isatty(self):
            return True

    stream = Tty()
    bar = Progress(3 << 20, "x", stream=stream)
    bar.update(3 << 20)
    if bar.bar is not None:  # tqdm installed: its line must not say "MB" either
        bar.bar.refresh()
    bar.close()
    text = stream.getvalue()
    assert "3.0 MiB of 3.0 MiB" in text
    assert not re.search(r"\d(k|M|G)B\b", text)


def test_diff_of_equal_numbers_never_says_the_difference_is_zero(tmp_path, capsys):
    a, b, c = (tmp_path / f"{x}.hrry" for x in "abc")
    hurray.save(a, {"w": np.zeros(3, np.float32)})
    hurray.save(b, {"w": -np.zeros(3, np.float32)})  # the same numbers, other bits
    hurray.save(c, {"w": np.zeros(3, np.float64)})   # the same numbers, another type
    assert run("diff", a, b) == 1
    out = capsys.readouterr().out
    assert "~ w: values equal as numbers, but their bits differ" in out
    assert "= 0\n" not in out and "max |a - b|" not in out
    assert run("diff", a, c) == 1
    out = capsys.readouterr().out
    assert "dtype float32 != float64" in out and "values equal as numbers" in out
    assert "max |a - b|" not in out
    assert run("diff", a, a) == 0


def test_a_torch_dtype_without_a_hurray_type_is_named(tmp_path):
    torch = pytest.importorskip("torch")
    import hurray.torch as ht
    with warnings.catch_warnings():  # torch: "ComplexHalf support is experimental"
        warnings.simplefilter("ignore")
        x = torch.zeros(2, dtype=torch.complex32)
    for save in (lambda: hurray.save(tmp_path / "x.hrry", {"a": x}),
                 lambda: ht.save_file({"a": x}, tmp_path / "x.hrry")):
        with pytest.raises(hurray.UnsupportedError) as ei:
            save()
        msg = str(ei.value)
        assert "torch.complex32" in msg and "x.to(torch.complex64)" in msg
        assert "DLPack" not in msg and "code 5" not in msg
    with pytest.raises(hurray.UnsupportedError, match=r"torch\.bits8.*x\.view\(torch\.uint8\)"):
        hurray.save(tmp_path / "x.hrry", {"a": torch.zeros(2, dtype=torch.bits8)})
    assert not (tmp_path / "x.hrry").exists()



def test_stream_writer_takes_what_save_takes_and_names_what_it_cannot():
    torch = pytest.importorskip("torch")
    w = hurray.StreamWriter()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    w.write(a)                                       # a NumPy array, as save takes it
    w.write(torch.arange(4, dtype=torch.int16))      # a torch tensor
    w.write(hurray.from_numpy(a.T))                  # a hurray tensor, as before
    with pytest.raises(TypeError, match=r"StreamWriter.write: .* not list"):
        w.write([1, 2, 3])
    with pytest.raises(hurray.UnsupportedError, match=r"torch\.complex32"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w.write(torch.zeros(2, dtype=torch.complex32))
    w.finish()
    got = list(hurray.StreamReader(w.getvalue()))
    assert len(got) == 3
    np.testing.assert_array_equal(np.asarray(got[0]), a)
    np.testing.assert_array_equal(np.asarray(got[1]), np.arange(4, dtype=np.int16))
    np.testing.assert_array_equal(np.asarray(got[2]), a.T)


def test_from_torch_names_a_torch_dtype_without_a_hurray_type():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = torch.zeros(2, dtype=torch.complex32)
    with pytest.raises(hurray.UnsupportedError,
                       match=r"from_torch: a torch tensor of dtype torch\.complex32 has no Hurray "
                             r"type; convert it first \(x\.to\(torch\.complex64\)\)") as ei:
        hurray.from_torch(x)
    assert "DLPack" not in str(ei.value) and "code" not in str(ei.value)
    with pytest.raises(hurray.UnsupportedError, match=r"torch\.bits8.*torch\.uint8"):
        hurray.from_torch(torch.zeros(2, dtype=torch.bits8))
    assert hurray.from_torch(torch.zeros(2, dtype=torch.complex64)).dtype.name == "complex64"
