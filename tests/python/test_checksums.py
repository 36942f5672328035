"""Data checksums (docs/reference/file-format.md "Data checksums"): save records a
CRC-32C of every tensor by default; load(verify=True), File.verify() and the
framework loaders find a flipped bit and name the tensor and the byte offset;
load_kv stays the inverse of save(kv=)."""
import os

import pytest

import hurray
from hurray import _hurray

np = pytest.importorskip("numpy")

KEY = "hurray.data_crc32c"


def sample():
    return {
        "a": np.arange(3000, dtype=np.float32).reshape(30, 100),
        "marker": np.frombuffer(b"\x11\x22\x33\x44\x55\x66\x77\x88" * 512, np.uint8).copy(),
        "c": np.ones((5, 7), np.int16),
    }


def flip(path, pattern, bit=0x04, at=100):
    """Flips one bit inside the first occurrence of `pattern`; returns its offset."""
    data = bytearray(open(path, "rb").read())
    pos = data.find(pattern)
    assert pos > 0
    data[pos + at] ^= bit
    with open(path, "wb") as f:
        f.write(data)
    return pos


def test_saved_by_default_and_hidden_from_load_kv(tmp_path):
    p = tmp_path / "m.hrry"
    hurray.save(p, sample(), kv={"producer": "me"})
    assert hurray.load_kv(p) == {"producer": "me"}
    raw = hurray.load_kv(p, raw=True)
    assert list(raw) == ["producer", KEY]
    assert isinstance(raw[KEY], bytes) and len(raw[KEY]) == 8 * 3
    with hurray.open(p) as f:
        assert f.kv == {"producer": "me"}
        assert f.metadata() == {"producer": "me"}
        report = f.verify()
    # a named tuple (os.stat_result's kind): fields by name and by position
    assert isinstance(report, hurray.VerifyReport) and isinstance(report, tuple)
    assert report == (3, True, report.checked_bytes)
    assert (report.tensors, report.checksums) == (3, True)
    assert report.checked_bytes > sum(v.nbytes for v in sample().values())
    # a user key of the package's prefix is still refused
    with pytest.raises(ValueError, match="reserved"):
        hurray.save(p, sample(), kv={KEY: b""})


def test_without_checksums(tmp_path):
    p = tmp_path / "plain.hrry"
    hurray.save(p, sample(), checksums=False)
    assert KEY not in hurray.load_kv(p, raw=True)
    with hurray.open(p) as f:
        r = f.verify()
    assert (r.tensors, r.checksums, r.checked_bytes) == (3, False, 0)
    got = hurray.load(p, verify=True)  # the structure is checked; nothing to compare
    np.testing.assert_array_equal(np.asarray(got["a"]), sample()["a"])
    # the same tensors with checksums: the file grows by the record alone
    hurray.save(tmp_path / "sum.hrry", sample())
    grown = os.path.getsize(tmp_path / "sum.hrry") - os.path.getsize(p)
    assert 0 < grown <= 2 + len(KEY) + 1 + 4 + 24 + 8 + 8


@pytest.mark.parametrize("mmap", [True, "r", False])
def test_flipped_bit_is_named(tmp_path, mmap):
    p = tmp_path / "flip.hrry"
    hurray.save(p, sample())
    pos = flip(p, b"\x11\x22\x33\x44\x55\x66\x77\x88")
    # loading without verify does not look at the checksums
    got = hurray.load(p, mmap=mmap)
    assert np.asarray(got["marker"])[100] != 0x55
    for call in (lambda: hurray.load(p, mmap=mmap, verify=True),
                 lambda: hurray.load(p, names=["c"], mmap=mmap, verify=True),
                 lambda: hurray.open(p, mmap=mmap).verify()):
        with pytest.raises(hurray.FileError) as ei:
            call()
        e = ei.value
        assert e.status == "ERR_CRC_MISMATCH"
        assert e.field == "index[1].data"
        assert e.offset == pos  # the data of "marker" starts with the pattern
        assert "tensor \"marker\" is damaged" in str(e)


def test_flipped_descriptor_byte(tmp_path):
    # a change that still decodes (the buffer's declared alignment, to 128) passes
    # every structural check: only the descriptor's CRC sees it
    p = tmp_path / "desc.hrry"
    hurray.save(p, {"x": np.zeros(4, np.float32)})
    data = bytearray(open(p, "rb").read())
    # buffer 0: byte_size 16 (u64), then its declared alignment (u32, a power of two)
    pos = data.find(bytes([16, 0, 0, 0, 0, 0, 0, 0]), 64 + 20) + 8
    assert 64 < pos < 64 + 53
    align = int.from_bytes(data[pos:pos + 4], "little")
    assert align & (align - 1) == 0
    data[pos:pos + 4] = (128 if align != 128 else 256).to_bytes(4, "little")
    with open(p, "wb") as f:
        f.write(data)
    np.testing.assert_array_equal(np.asarray(hurray.load(p)["x"]), np.zeros(4, np.float32))
    with pytest.raises(hurray.FileError) as ei:
        hurray.load(p, verify=True)
    e = ei.value
    assert (e.status, e.field, e.offset) == ("ERR_CRC_MISMATCH", "index[0].descriptor", 64)
    assert "tensor \"x\" is damaged: its descriptor" in str(e)


def test_frameworks_pass_it_on(tmp_path):
    import hurray.numpy as hnp
    p = tmp_path / "np.hrry"
    hnp.save_file(sample(), p, checksums=False)
    assert KEY not in hurray.load_kv(p, raw=True)
    hnp.save_file(sample(), p)
    assert KEY in hurray.load_kv(p, raw=True)
    assert list(hnp.load_file(p, verify=True)) == ["a", "marker", "c"]
    flip(p, b"\x11\x22\x33\x44\x55\x66\x77\x88")
    hnp.load_file(p)  # no verify: loads
    with pytest.raises(hurray.FileError, match="marker"):
        hnp.load_file(p, verify=True)

    torch = pytest.importorskip("torch")
    import hurray.torch as ht
    tp = tmp_path / "t.hrry"
    ht.save_file({"w": torch.arange(4096, dtype=torch.int32)}, tp, checksums=False)
    assert KEY not in hurray.load_kv(tp, raw=True)
    ht.save_file({"w": torch.arange(4096, dtype=torch.int32)}, tp)
    assert ht.load_file(tp, verify=True)["w"].sum().item() == sum(range(4096))
    data = bytearray(open(tp, "rb").read())
    pos = data.find((1000).to_bytes(4, "little") + (1001).to_bytes(4, "little"))
    data[pos] ^= 1
    open(tp, "wb").write(data)
    with pytest.raises(hurray.FileError, match="\"w\""):
        ht.load_file(tp, verify=True)
    model = torch.nn.Linear(3, 2)
    ht.save_model(model, tp, checksums=False)
    assert KEY not in hurray.load_kv(tp, raw=True)
    ht.save_model(model, tp)
    assert ht.load_model(torch.nn.Linear(3, 2), tp, verify=True) == (set(), [])


def test_a_bad_record_is_only_seen_by_verify(tmp_path):
    # the record is looked for only when verifying: a load without verify never reads it
    p = tmp_path / "bad.hrry"
    x = hurray.from_numpy(np.ones(3, np.float32))
    _hurray.save(p, {"x": x}, kv={KEY: b"12345"}, checksums=False)  # by hand, malformed
    np.testing.assert_array_equal(np.asarray(hurray.load(p)["x"]), np.ones(3, np.float32))
    with pytest.raises(hurray.FileError) as ei:
        hurray.load(p, verify=True)
    assert ei.value.status == "ERR_INVALID_KV"
    assert "holds 5 bytes, expected 8 (8 for each of 1 tensor)" in str(ei.value)
    # while the writer records them, the key is the writer's alone
    with pytest.raises(ValueError, match="written by the writer itself"):
        _hurray.save(p, {"x": x}, kv={KEY: b""})


def test_checksum_flag_types(tmp_path):
    p = tmp_path / "f.hrry"
    hurray.save(p, sample(), checksums=0)
    assert KEY not in hurray.load_kv(p, raw=True)
    _hurray.save(p, {"x": hurray.from_numpy(np.ones(3, np.float32))})
    assert KEY in hurray.load_kv(p, raw=True)
