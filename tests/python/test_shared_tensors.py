"""Tensors that share memory are stored once and come back sharing it
(hurray.save / load / open; docs/reference/file-format.md "Shared tensors")."""
import json
import os
from pathlib import Path

import pytest

import hurray
from hurray import _hurray

np = pytest.importorskip("numpy")


@pytest.fixture
def path(tmp_path):
    return tmp_path / "shared.hrry"


def index_names(path):
    """The names of the file's index, read from its bytes as a reader that does
    not know the views record would (docs/reference/file-format.md: trailer, then index
    entries name_length u16 | name | u64 | u32 | u64 | u64 | u32)."""
    import struct
    raw = Path(path).read_bytes()
    offset, length = struct.unpack_from("<QQ", raw, len(raw) - 40)
    index = raw[offset:offset + length]
    (count,) = struct.unpack_from("<Q", index, 0)
    names, at = [], 8
    for _ in range(count):
        (n,) = struct.unpack_from("<H", index, at)
        names.append(index[at + 2:at + 2 + n].decode())
        at += 2 + n + 8 + 4 + 8 + 8 + 4
    assert at == length
    return names


def raw_names(path):
    # what a reader that does not know the record sees: the file's index
    return index_names(path)


def test_views_of_one_array_are_stored_once(path):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    src = {"a": a, "cols": a[:, 1:3], "t": a.T, "again": a, "rev": a[::-1, ::2],
           "other": np.ones(3, np.float32)}
    hurray.save(path, src)
    assert raw_names(path) == ["a", "other"]
    got = hurray.load(path)
    assert list(got) == ["a", "other", "cols", "t", "again", "rev"]
    for k, v in src.items():
        np.testing.assert_array_equal(np.asarray(got[k]), v)
    assert got["again"] is got["a"]
    base = np.asarray(got["a"])
    for k in ("cols", "t", "rev"):
        assert np.shares_memory(np.asarray(got[k]), base), k
    # no byte is written twice: the file is the size of one copy
    hurray.save(path.with_name("one.hrry"), {"a": a, "other": np.ones(3, np.float32)})
    assert abs(os.path.getsize(path) - os.path.getsize(path.with_name("one.hrry"))) < 1024


def test_the_record_is_in_kv_and_hidden_from_load_kv(path):
    a = np.zeros((2, 3), np.float32)
    hurray.save(path, {"a": a, "b": a}, kv={"user": "x"})
    assert hurray.load_kv(path) == {"user": "x"}
    raw = hurray.load_kv(path, raw=True)
    rec = json.loads(raw["hurray.views"])
    assert rec == {"format": 1, "views": {"b": {"base": "a"}}}
    with hurray.open(path) as f:
        assert f.kv == {"user": "x"} and f.metadata() == {"user": "x"}
        assert f.views == {"b": "a"} and f.keys() == ["a", "b"] and len(f) == 2
        assert "b" in f and "c" not in f and list(f) == ["a", "b"]
        assert "1 view" in repr(f) and "1 views" not in repr(f)
        np.testing.assert_array_equal(np.asarray(f["b"]), a)


def test_reserved_kv_keys_are_refused(path):
    with pytest.raises(ValueError, match="'hurray.views'.*reserved"):
        hurray.save(path, {"a": np.zeros(2)}, kv={"hurray.views": "{}"})
    with pytest.raises(ValueError, match="reserved"):
        hurray.save(path, {"a": np.zeros(2)}, kv={"hurray.anything": 1})
    assert not path.exists()


def test_partial_overlap_without_a_covering_tensor_is_refused_naming_both(path):
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(ValueError, match=r"'p' and 'q' overlap in memory \(8 bytes"):
        hurray.save(path, {"p": x[0:6], "q": x[4:10]})
    assert not path.exists()
    # disjoint parts of one array share no byte: each stored on its own
    hurray.save(path, {"p": x[0:5], "q": x[5:10]})
    assert raw_names(path) == ["p", "q"]
    # with the whole array saved too, both are views of it
    hurray.save(path, {"p": x[0:6], "q": x[4:10], "x": x})
    assert raw_names(path) == ["x"]
    got = hurray.load(path)
    np.testing.assert_array_equal(np.asarray(got["q"]), x[4:10])


def test_views_with_another_dtype(path):
    a = np.arange(8, dtype=np.int32)
    hurray.save(path, {"a": a, "bytes": a.view(np.uint8), "pairs": a.view(np.int64)})
    got = hurray.load(path)
    assert got["bytes"].dtype is hurray.uint8 and got["pairs"].dtype is hurray.int64
    np.testing.assert_array_equal(np.asarray(got["pairs"]), a.view(np.int64))


def test_a_view_with_misaligned_strides_is_refused(path):
    raw = np.zeros(40, np.uint8)
    a = raw[:32]
    odd = np.lib.stride_tricks.as_strided(raw[1:], shape=(4,), strides=(8,)).view(np.uint8)
    f32 = raw[1:33].view(np.float32)  # offset 1 from the base: not a multiple of 4
    with pytest.raises(ValueError, match="'f32' is a view of 'a'.*multiples"):
        hurray.save(path, {"a": raw, "f32": f32})
    hurray.save(path, {"a": a, "odd": odd})  # uint8: any offset is whole
    np.testing.assert_array_equal(np.asarray(hurray.load(path)["odd"]), odd)


def test_names_and_open_reach_views(path):
    a = np.arange(6, dtype=np.float64)
    hurray.save(path, {"a": a, "tail": a[3:]})
    got = hurray.load(path, names=["tail"])
    assert list(got) == ["tail"]
    np.testing.assert_array_equal(np.asarray(got["tail"]), a[3:])
    with pytest.raises(KeyError):
        hurray.load(path, names=["nope"])
    with hurray.open(path, mmap=False) as f:
        np.testing.assert_array_equal(np.asarray(f.get_tensor("tail")), a[3:])


def test_the_same_hurray_tensor_twice_and_non_dense_layouts(path):
    csr = hurray.Tensor([np.arange(3, dtype=np.float32), np.array([0, 2, 1], np.uint64),
                         np.array([0, 2, 3], np.uint64)], "float32", (2, 3),
                        layout=hurray.CsrLayout(nnz=3))
    q = hurray.zeros([4, 4], dtype="int4")
    hurray.save(path, {"s": csr, "s2": csr, "q": q, "q2": q})
    assert raw_names(path) == ["s", "q"]
    got = hurray.load(path)
    assert got["s2"] is got["s"] and got["q2"] is got["q"]


def test_a_malformed_record_is_an_error_naming_the_field(path):
    a = np.zeros(4, np.float32)
    bad = [
        ("not json", "not JSON"),
        (json.dumps({"format": 2, "views": {}}), "format must be 1"),
        (json.dumps({"format": 1, "views": {"v": {"base": "zz"}}}), "'zz' is not a tensor"),
        (json.dumps({"format": 1, "views": {"a": {"base": "a"}}}), "also stores"),
        (json.dumps({"format": 1, "views": {"v": {"base": "a", "dtype": "float32",
                                                  "shape": [8], "byte_offset": 0,
                                                  "byte_strides": [4]}}}), "reach bytes"),
        (json.dumps({"format": 1, "views": {"v": {"base": "a", "dtype": "float32",
                                                  "shape": [-1], "byte_offset": 0,
                                                  "byte_strides": [4]}}}), "shape"),
    ]
    for text, match in bad:
        _hurray.save(path, {"a": hurray.from_numpy(a)}, kv={"hurray.views": text})
        with pytest.raises(ValueError, match=match):
            for _ in hurray.load(path).values():
                pass
            with hurray.open(path) as f:
                f["v"]


def test_torch_tensors_sharing_storage(path):
    torch = pytest.importorskip("torch")
    w = torch.nn.Parameter(torch.randn(8, 4))
    sd = {"w": w, "w_t": w.detach().t(), "row": w.detach()[2], "grad": torch.ones(3, requires_grad=True)}
    hurray.save(path, sd)
    assert raw_names(path) == ["w", "grad"]
    got = hurray.load(path)
    for k, v in sd.items():
        np.testing.assert_array_equal(np.asarray(got[k]), v.detach().numpy())


def test_save_takes_framework_objects_zero_copy(path):
    a = np.arange(16, dtype=np.float32)
    hurray.save(path, {"np": a, "list_like": np.asarray([1, 2, 3])})
    np.testing.assert_array_equal(np.asarray(hurray.load(path)["np"]), a)

    class Producer:  # anything with __dlpack__
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    hurray.save(path, {"d": Producer(a)})
    np.testing.assert_array_equal(np.asarray(hurray.load(path)["d"]), a)
    t = hurray.from_numpy(a)
    hurray.save(path, {"h": _Native(t)})
    np.testing.assert_array_equal(np.asarray(hurray.load(path)["h"]), a)


class _Native:
    def __init__(self, t):
        self.t = t

    def __hurray__(self, **kw):
        return self.t.__hurray__(**kw)


@pytest.mark.parametrize("mmap", [True, "r", False])
def test_one_file_type_gives_views_by_name_and_slices_them_from_the_base(path, mmap):
    # hurray.File is the extension's type: the C reader resolves views by name,
    # and get_slice of a view reads only the base's bytes it selects
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    hurray.save(path, {"a": a, "t": a.T, "again": a, "rev": a[::-1, ::2]})
    with hurray.open(path, mmap=mmap) as f:
        assert type(f) is hurray.File is _hurray.File
        assert not hasattr(f, "__dict__")
        assert f.keys() == ["a", "t", "again", "rev"] and len(f) == 4
        assert "rev" in f and "nope" not in f
        assert f.views == {"t": "a", "again": "a", "rev": "a"}
        assert "3 views" in repr(f)
        for name, want in (("t", a.T), ("again", a), ("rev", a[::-1, ::2])):
            s = f.get_slice(name)
            assert s.shape == want.shape and s.get_dtype() == "float32"
            for key in ((slice(None), slice(None)), (slice(1, 3), slice(None, None, -1)),
                        (2,), (Ellipsis, 1), (slice(None, None, 2), None, slice(1, 2))):
                assert np.array_equal(np.asarray(s[key]), want[key]), (name, key)
        with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 6"):
            f.get_slice("t")[7]  # the view's shape, not its base's
        assert f.verify() == (1, True, f.verify().checked_bytes)


def test_a_forged_record_is_refused_by_every_file_method(path):
    a = np.arange(6, dtype=np.float32)
    hurray.save(path, {"a": a, "r": a[::-1]}, checksums=False)
    raw = bytearray(path.read_bytes())
    at = raw.index(b'"byte_offset":20')
    raw[at:at + 16] = b'"byte_offset":24'  # reaches one element past the base
    path.write_bytes(bytes(raw))
    with hurray.open(path) as f:
        assert f["a"].shape == (6,)  # the stored tensors still read
        for call in (lambda: f["r"], lambda: f.get_slice("r"), f.keys, lambda: len(f),
                     lambda: "r" in f, lambda: f.views, lambda: list(f)):
            with pytest.raises(ValueError, match="'r'.*reach bytes"):
                call()
        assert "views" not in repr(f)
