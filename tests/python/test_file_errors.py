"""Errors that say what to do (hurray.load and hurray.FileError, docs/reference/api.md): a file of another
format is named, with the command that converts it; a truncated file says by
how much; a missing or forbidden file is also FileNotFoundError /
PermissionError; a .hrry file given to StreamReader, and an empty file given
to hurray-inspect, say what they are. The files are made by the libraries
themselves."""
import errno
import os
import pickle
import subprocess
import zipfile

import pytest

import hurray
from conftest import inspector_path

np = pytest.importorskip("numpy")

CONVERT = "convert it with `hurray convert SRC DST`"


def _safetensors(path):
    st = pytest.importorskip("safetensors.numpy")
    st.save_file({"w": np.ones((2, 3), np.float32)}, str(path))


def _gguf(path):
    gguf = pytest.importorskip("gguf")
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tensor("w", np.ones((2, 3), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _npz(path):
    with open(path, "wb") as f:
        np.savez(f, w=np.ones(3, np.float32))


def _npy(path):
    with open(path, "wb") as f:
        np.save(f, np.ones(3, np.float32))


def _torch_zip(path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(3)}, str(path))


def _torch_legacy(path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(3)}, str(path), _use_new_zipfile_serialization=False)


def _pickle(path):
    with open(path, "wb") as f:
        pickle.dump({"w": [1.0, 2.0]}, f, protocol=4)


KINDS = [
    (_safetensors, "a safetensors file"),
    (_gguf, "a GGUF file"),
    (_npz, "a NumPy .npz archive (np.savez)"),
    (_npy, "a NumPy .npy file (np.save)"),
    (_torch_zip, "a PyTorch checkpoint (torch.save)"),
    (_torch_legacy, "a Python pickle (torch.save, legacy format?)"),
    (_pickle, "a Python pickle (torch.save, legacy format?)"),
]


@pytest.mark.parametrize("make,kind", KINDS, ids=[k[0].__name__.strip("_") for k in KINDS])
@pytest.mark.parametrize("how", ["load", "open", "load_kv", "mmap_false"])
def test_other_formats_are_named(tmp_path, make, kind, how):
    p = tmp_path / "model.bin"
    make(p)
    call = {"load": lambda: hurray.load(p), "open": lambda: hurray.open(p),
            "load_kv": lambda: hurray.load_kv(p),
            "mmap_false": lambda: hurray.load(p, mmap=False)}[how]
    with pytest.raises(hurray.FileError) as ei:
        call()
    msg = str(ei.value)
    assert f"this is {kind}, not a .hrry file; {CONVERT}" in msg, msg
    assert ei.value.status == "ERR_INVALID_FILE"
    assert ei.value.field == "header.magic"


def test_zip_of_something_else(tmp_path):
    p = tmp_path / "x.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("readme.txt", "hello " * 40)
    with pytest.raises(hurray.FileError, match="a zip archive"):
        hurray.load(p)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.hrry"
    p.write_bytes(b"")
    with pytest.raises(hurray.FileError, match=r"is empty \(0 bytes\)"):
        hurray.open(p)


def test_truncated_file_says_by_how_much(tmp_path):
    p = tmp_path / "t.hrry"
    hurray.save(p, {"a": np.ones(10000, np.float32), "b": np.arange(20000, dtype=np.int32)})
    data = p.read_bytes()
    with hurray.open(p) as f:
        entries = list(f.keys())
    assert entries == ["a", "b"]
    cut = len(data) // 2  # inside "b"'s data (the tensors fill most of the file)
    (tmp_path / "cut.hrry").write_bytes(data[:cut])
    with pytest.raises(hurray.FileError) as ei:
        hurray.load(tmp_path / "cut.hrry")
    msg = str(ei.value)
    assert f"the file is truncated, it ends at byte {cut} inside the data of tensor 1" in msg
    assert "bytes are missing" in msg
    missing = int(msg.split("at least ")[1].split(" bytes")[0])
    end = int(msg.split("(bytes ")[1].split(")")[0].split("..")[1])
    assert missing == end - cut > 0
    # the header alone
    (tmp_path / "head.hrry").write_bytes(data[:64])
    with pytest.raises(hurray.FileError, match="a .hrry header, then the file ends: it is truncated"):
        hurray.load(tmp_path / "head.hrry")


def test_missing_file_is_file_not_found(tmp_path):
    p = tmp_path / "nope.hrry"
    for call in (lambda: hurray.load(p), lambda: hurray.open(p), lambda: hurray.load_kv(p),
                 lambda: hurray.load(p, mmap=False)):
        with pytest.raises(FileNotFoundError) as ei:
            call()
        e = ei.value
        assert isinstance(e, hurray.FileError) and isinstance(e, OSError)
        assert e.errno == errno.ENOENT
        assert e.filename == str(p)
        assert e.strerror == os.strerror(errno.ENOENT)
        assert e.status == "ERR_IO"
        assert "opening the file" in str(e)
    # saving into a folder that does not exist
    with pytest.raises(FileNotFoundError) as ei:
        hurray.save(tmp_path / "no" / "such" / "x.hrry", {"x": np.ones(2)})
    assert isinstance(ei.value, hurray.FileError) and ei.value.errno == errno.ENOENT
    # other failures stay plain FileErrors
    bad = tmp_path / "bad.hrry"
    bad.write_bytes(b"x" * 200)
    with pytest.raises(hurray.FileError) as ei:
        hurray.load(bad)
    assert not isinstance(ei.value, FileNotFoundError) and ei.value.errno is None


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root reads every file: no permission error to see")
def test_unreadable_file_is_permission_error(tmp_path):
    p = tmp_path / "locked.hrry"
    hurray.save(p, {"x": np.ones(2)})
    os.chmod(p, 0)
    try:
        with pytest.raises(PermissionError) as ei:
            hurray.load(p)
        assert isinstance(ei.value, hurray.FileError) and ei.value.errno == errno.EACCES
    finally:
        os.chmod(p, 0o644)


@pytest.mark.skipif(os.name != "posix", reason="directory permissions")
def test_permission_error_class(tmp_path):
    # root is not refused by permissions; a read-only file system would be: test the class
    cls = hurray._hurray.PermissionError
    assert issubclass(cls, hurray.FileError) and issubclass(cls, PermissionError)
    assert issubclass(hurray._hurray.FileNotFoundError, FileNotFoundError)
    e = pickle.loads(pickle.dumps(cls("m")))
    assert type(e) is cls and str(e) == "m"


def test_stream_reader_given_a_file(tmp_path):
    p = tmp_path / "f.hrry"
    hurray.save(p, {"x": np.ones(3, np.float32)})
    with open(p, "rb") as fh:
        with pytest.raises(hurray.StreamError,
                           match="this is a .hrry file container, not a stream; open it with"):
            list(hurray.StreamReader(fh))


def test_stream_reader_given_safetensors(tmp_path):
    p = tmp_path / "f.safetensors"
    _safetensors(p)
    with open(p, "rb") as fh:
        with pytest.raises(hurray.StreamError, match="this is a safetensors file, not a Hurray"):
            list(hurray.StreamReader(fh))


def _inspect():
    exe = inspector_path()
    if exe is None:
        pytest.skip("hurray-inspect not built")
    return exe


def test_inspect_empty_and_other_formats(tmp_path):
    exe = _inspect()
    p = tmp_path / "empty.hrry"
    p.write_bytes(b"")
    r = subprocess.run([exe, str(p)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "is empty (0 bytes)" in r.stdout + r.stderr
    s = tmp_path / "m.safetensors"
    _safetensors(s)
    r = subprocess.run([exe, str(s)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "this is a safetensors file, not a .hrry file; " + CONVERT in r.stdout + r.stderr
