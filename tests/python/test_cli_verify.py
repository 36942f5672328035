"""`hurray verify` (docs/reference/cli.md): structure and data checksums of .hrry files,
the exit statuses (0 sound, 1 damaged, 2 cannot be checked), text and JSON
output, and hurray.FileWriter(checksums=)."""

import json

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402
from hurray._cli import main  # noqa: E402


def run(*args):
    return main([str(a) for a in args])


def tensors():
    marker = np.zeros(4096, np.uint8)
    marker[100:108] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
    return {"w": np.arange(24, dtype=np.float32).reshape(4, 6), "marker": marker}


def flip_marker(path):
    data = bytearray(path.read_bytes())
    pos = data.index(bytes([0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]))
    data[pos + 4] ^= 0x01
    path.write_bytes(data)
    return pos


def test_sound_file(tmp_path, capsys):
    p = tmp_path / "m.hrry"
    hurray.save(p, tensors())
    assert run("verify", p) == 0
    out = capsys.readouterr().out
    assert f"{p}: OK, 2 tensors, structure and data checksums" in out
    assert run("verify", "--quiet", p) == 0
    assert capsys.readouterr().out == ""


def test_flipped_bit_is_damage(tmp_path, capsys):
    p = tmp_path / "m.hrry"
    hurray.save(p, tensors())
    pos = flip_marker(p)
    # loading does not look at the checksums; verify does
    assert np.asarray(hurray.load(p)["marker"])[104] == 0x54
    assert run("verify", p) == 1
    err = capsys.readouterr().err
    assert "DAMAGED" in err and 'tensor "marker" is damaged' in err and "index[1].data" in err
    assert run("verify", "--json", p) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["path"] == str(p) and "is damaged" in doc["error"]
    assert (doc["status"], doc["field"], doc["offset"]) == ("ERR_CRC_MISMATCH", "index[1].data",
                                                            pos - 100)


def test_without_checksums(tmp_path, capsys):
    p = tmp_path / "plain.hrry"
    hurray.save(p, tensors(), checksums=False)
    assert run("verify", p) == 0
    assert "structure only" in capsys.readouterr().out
    # the same damage goes unseen without a record ...
    flip_marker(p)
    assert run("verify", p) == 0
    capsys.readouterr()
    # ... which --require-checksums refuses
    assert run("verify", "--require-checksums", p) == 1
    assert "NO CHECKSUMS" in capsys.readouterr().err
    # rewriting through hurray convert records them
    q = tmp_path / "new.hrry"
    assert run("convert", "--quiet", p, q) == 0
    assert run("verify", "--require-checksums", q) == 0


def test_structural_damage(tmp_path, capsys):
    p = tmp_path / "m.hrry"
    hurray.save(p, tensors())
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 10])  # the trailer is cut off
    assert run("verify", p) == 1
    assert "DAMAGED" in capsys.readouterr().err


def test_cannot_be_checked(tmp_path, capsys):
    assert run("verify", tmp_path / "nope.hrry") == 2
    assert "nope.hrry: cannot be checked" in capsys.readouterr().err
    st = tmp_path / "m.safetensors"
    safetensors = pytest.importorskip("safetensors.numpy")
    safetensors.save_file({"x": np.zeros(3, np.float32)}, str(st))
    assert run("verify", st) == 2
    assert "safetensors" in capsys.readouterr().err


def test_several_files_worst_status_wins(tmp_path, capsys):
    good, bad = tmp_path / "good.hrry", tmp_path / "bad.hrry"
    hurray.save(good, tensors())
    hurray.save(bad, tensors())
    flip_marker(bad)
    assert run("verify", good, bad) == 1
    assert run("verify", good, bad, tmp_path / "missing.hrry") == 2
    capsys.readouterr()
    assert run("verify", "--json", good, bad) == 1
    docs = json.loads(capsys.readouterr().out)
    assert [d["ok"] for d in docs] == [True, False]
    assert docs[0]["checksums"] is True and docs[0]["tensors"] == 2
    assert docs[0]["checked_bytes"] > 4096


def test_file_writer_checksums(tmp_path):
    on, off = tmp_path / "on.hrry", tmp_path / "off.hrry"
    for path, flag in ((on, None), (off, False)):
        kw = {} if flag is None else {"checksums": flag}
        with hurray.FileWriter(path, **kw) as w:
            for name, value in tensors().items():
                w.write(name, value)
    with hurray.open(on) as f:
        assert f.verify().checksums is True
    with hurray.open(off) as f:
        assert f.verify().checksums is False
    with pytest.raises(TypeError, match="checksums must be True or False"):
        hurray.FileWriter(tmp_path / "x.hrry", checksums=1)
