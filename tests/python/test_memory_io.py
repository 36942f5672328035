"""Saving to and loading from memory, with no file system: hurray.save_bytes and
hurray.load_bytes, and through them hurray.torch.save/load and
hurray.numpy.save/load (safetensors' bytes API).

The C library writes the file image into memory (hurray_file_writer_open_memory)
and reads one from memory (hurray_file_open_memory with READ access), so the
image is the file save() writes, byte for byte, and load_bytes checks what
load() checks. The file-size limit of 0 proves no file is written."""
import os
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy")

import hurray  # noqa: E402


def _same(x, y):
    """Equal descriptors and equal bytes in every buffer."""
    return x.descriptor == y.descriptor and all(
        bytes(np.asarray(x.buffer(i))) == bytes(np.asarray(y.buffer(i)))
        for i in range(x.buffer_count))


def _tensors():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    return {
        "a": a,
        "row": a[1],                       # a view of a: stored once
        "t": a.T,                          # column-major view
        "b": np.array([1, -2, 3], dtype=np.int8),
        "empty": np.zeros((0, 3), dtype=np.float64),
        "h": np.ones((2, 2), dtype=np.float16),
        "q": hurray.quantize(np.linspace(-1, 1, 64, dtype=np.float32), "int4", block_size=32),
    }


@pytest.mark.parametrize("checksums", [True, False])
def test_the_image_is_the_file_save_writes(tmp_path, checksums):
    t = _tensors()
    kv = {"origin": "memory", "n": 3, "xs": [1.5, 2.5]}
    image = hurray.save_bytes(t, kv=kv, checksums=checksums)
    hurray.save(tmp_path / "m.hrry", t, kv=kv, checksums=checksums)
    assert isinstance(image, bytes)
    assert image == (tmp_path / "m.hrry").read_bytes()
    # and it reads back as the file does, views sharing their base
    got = hurray.load_bytes(image, verify=checksums)
    ref = hurray.load(tmp_path / "m.hrry")
    assert got.keys() == ref.keys() == t.keys()
    for k in t:
        assert _same(got[k], ref[k]), k
    assert np.shares_memory(np.asarray(got["a"]), np.asarray(got["row"]))
    assert hurray.load_kv(tmp_path / "m.hrry") == kv


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "ndarray", "mmap-like"])
def test_any_contiguous_buffer_is_read_and_nothing_refers_to_it(kind):
    t = {"w": np.arange(1000, dtype=np.float64), "v": np.arange(10, dtype=np.int16)}
    image = hurray.save_bytes(t)
    data = {"bytes": lambda: image, "bytearray": lambda: bytearray(image),
            "memoryview": lambda: memoryview(bytearray(image)),
            "ndarray": lambda: np.frombuffer(bytearray(image), dtype=np.uint8),
            "mmap-like": lambda: memoryview(image)[0:len(image)]}[kind]()
    got = hurray.load_bytes(data)
    assert np.array_equal(np.asarray(got["w"]), t["w"])
    # the tensors own their bytes: the source may change or go away
    if kind == "bytearray":
        data[:] = b"\0" * len(data)
        data.extend(b"x" * 100)  # resizable again: load_bytes released its buffer
    del data
    assert np.array_equal(np.asarray(got["w"]), t["w"])
    arr = np.asarray(got["w"])
    assert arr.flags.writeable
    assert arr.ctypes.data % 64 == 0  # the declared alignment, whatever the source's


def test_what_is_not_an_image_is_refused_by_type():
    with pytest.raises(TypeError, match="not str"):
        hurray.load_bytes("model.hrry")
    with pytest.raises(TypeError, match="bytes-like"):
        hurray.load_bytes(12)
    strided = memoryview(bytearray(hurray.save_bytes({"x": np.ones(3)})))[::2]
    with pytest.raises(TypeError, match="contiguous"):
        hurray.load_bytes(strided)
    with pytest.raises(TypeError, match="names"):
        hurray.load_bytes(hurray.save_bytes({"x": np.ones(3)}), names="x")


def test_names_read_views_and_composite_members():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    comp = hurray.sparse_coo(np.array([1.0, 2.0]), np.array([[0, 1], [1, 0]]), (2, 2))
    image = hurray.save_bytes({"a": a, "v": a[:, 1], "s": comp, "b": np.ones(2)})
    got = hurray.load_bytes(image, names=["v", "b"])
    assert list(got) == ["v", "b"]
    assert np.array_equal(np.asarray(got["v"]), a[:, 1])
    members = [n for n in hurray.load_bytes(image) if n.startswith("s")]
    assert members == ["s"]
    with pytest.raises(KeyError):
        hurray.load_bytes(image, names=["missing"])
    # without a views record only the names asked for are read
    plain = hurray.save_bytes({"x": np.ones(3), "y": np.zeros(2)})
    assert list(hurray.load_bytes(plain, names=["y"])) == ["y"]
    with pytest.raises(KeyError):
        hurray.load_bytes(plain, names=["nope"])


def _outcome(fn):
    try:
        got = fn()
    except (hurray.FileError, ValueError, hurray.UnsupportedError) as e:
        # the message past the operation's own context: what the reader found
        return type(e).__name__, getattr(e, "status", None), getattr(e, "offset", None)
    return "ok", sorted(got)


def test_damaged_images_get_the_answer_a_damaged_file_gets(tmp_path):
    t = {"a": np.arange(300, dtype=np.float32), "b": np.arange(7, dtype=np.int64),
         "v": np.arange(300, dtype=np.float32)}
    t["w"] = t["a"][10:20]
    image = hurray.save_bytes(t, kv={"k": "v"})
    rng = np.random.default_rng(7)
    spots = sorted(set(rng.integers(0, len(image), 120).tolist()) | {0, 5, len(image) - 1,
                                                                      len(image) - 30})
    p = tmp_path / "d.hrry"
    checked = 0
    for at in spots:
        bad = bytearray(image)
        bad[at] ^= 0x41
        p.write_bytes(bad)
        for verify in (False, True):
            mem = _outcome(lambda: hurray.load_bytes(bytes(bad), verify=verify))
            disk = _outcome(lambda: hurray.load(p, mmap=False, verify=verify))
            assert mem == disk, (at, verify)
            checked += 1
    for cut in (0, 1, 63, 64, len(image) // 2, len(image) - 40, len(image) - 1):
        p.write_bytes(image[:cut])
        assert _outcome(lambda: hurray.load_bytes(image[:cut])) == \
            _outcome(lambda: hurray.load(p, mmap=False)), cut
    assert checked > 200


def test_a_damaged_tensor_fails_verify_naming_it():
    image = bytearray(hurray.save_bytes({"a": np.arange(100, dtype=np.int32)}))
    at = image.find(np.arange(100, dtype=np.int32).tobytes())
    image[at + 17] ^= 1
    hurray.load_bytes(image)  # no checksum asked for: the bytes are what they are
    with pytest.raises(hurray.FileError, match='tensor "a" is damaged'):
        hurray.load_bytes(image, verify=True)


def test_reserved_keys_and_bad_values_are_refused_as_save_refuses_them():
    with pytest.raises(ValueError, match="hurray."):
        hurray.save_bytes({"x": np.ones(2)}, kv={"hurray.views": "{}"})
    with pytest.raises(TypeError):
        hurray.save_bytes([np.ones(2)])
    with pytest.raises(TypeError):
        hurray.save_bytes({1: np.ones(2)})


# ---- no file system: a file-size limit of 0 --------------------------------------------

_CHILD = textwrap.dedent("""
    import os, resource, signal, sys
    import numpy as np
    import hurray, hurray.numpy as hnp
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    a = np.arange(50000, dtype=np.float32).reshape(500, 100)
    t = {"a": a, "row": a[3], "i": np.arange(9, dtype=np.int64)}
    before = hurray.save_bytes(t, kv={"m": "x"})
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    # the limit is in force: a real file cannot be written
    try:
        hurray.save(sys.argv[1], t)
    except hurray.FileError as e:
        assert "File too large" in str(e), e
    else:
        raise SystemExit("a file was written under RLIMIT_FSIZE=0")
    image = hurray.save_bytes(t, kv={"m": "x"})
    assert image == before
    got = hurray.load_bytes(image, verify=True)
    assert np.array_equal(np.asarray(got["row"]), a[3])
    n = hnp.load(hnp.save({"a": a, "row": a[3]}, metadata={"k": "v"}))
    assert np.array_equal(n["row"], a[3]) and np.shares_memory(n["a"], n["row"])
    try:
        import torch
        import hurray.torch as ht
    except ImportError:
        torch = None
    if torch is not None:
        x = torch.arange(12.0).reshape(3, 4)
        g = ht.load(ht.save({"x": x, "col": x[:, 2], "y": torch.ones(2, dtype=torch.bfloat16)}),
                    contiguous=False)
        assert torch.equal(g["col"], x[:, 2]) and g["y"].dtype == torch.bfloat16
        assert g["col"].untyped_storage().data_ptr() == g["x"].untyped_storage().data_ptr()
    os.write(1, b"child ok torch=%d" % (torch is not None))
""")


@pytest.mark.slow  # a child interpreter
def test_bytes_round_trips_need_no_file_system(tmp_path):
    # TMPDIR pointed at a folder that must stay empty: no scratch file either
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    r = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path / "refused.hrry")],
                       capture_output=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert r.stdout.startswith(b"child ok"), r.stdout
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "refused.hrry").exists()
