""".hrry files from Python: save, load, load_kv, open, KV metadata, composites and
errors (hurray.save, hurray.load in docs/reference/api.md; docs/internals/decisions.md § File format)."""

import json
import math
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import hurray

np = pytest.importorskip("numpy")

import samples  # noqa: E402
from conftest import collect, golden_dir  # noqa: E402

SAMPLES = samples.sample_tensors()
COMPOSITES = samples.sample_composites()


@pytest.fixture
def path(tmp_path):
    return tmp_path / "model.hrry"


# ---- round trips ------------------------------------------------------------------------

MMAP_MODES = [True, "c", "r", False]


@pytest.mark.parametrize("mmap", MMAP_MODES)
def test_every_layout_and_scheme_round_trips(path, mmap):
    hurray.save(path, SAMPLES)
    got = hurray.load(path, mmap=mmap)
    assert list(got) == list(SAMPLES)
    for name, t in SAMPLES.items():
        samples.assert_same_tensor(t, got[name])
        assert got[name].readonly is (mmap == "r")  # only the read-only mapping


@pytest.mark.parametrize("mmap", MMAP_MODES)
def test_composites_round_trip_under_the_head_name(path, mmap):
    hurray.save(path, {"w": SAMPLES["f32_row"], **COMPOSITES})
    got = hurray.load(path, mmap=mmap)
    # members are not also top-level
    assert list(got) == ["w"] + list(COMPOSITES)
    for name, c in COMPOSITES.items():
        assert isinstance(got[name], hurray.Composite)
        samples.assert_same(c, got[name])
        for m in got[name].members:
            if isinstance(m, hurray.Tensor):
                assert m.readonly is (mmap == "r")
    with hurray.open(path, mmap=mmap) as f:
        # every index entry is addressable: members under "{head}.{index}"
        assert f.keys() == ["w", "partition", "partition.0", "partition.1", "overlay",
                            "overlay.0", "overlay.1", "nested", "nested.0", "nested.1",
                            "nested.1.0", "nested.1.1", "group", "group.0", "group.1",
                            "group.2"]
        assert isinstance(f["nested.1"], hurray.Composite)
        samples.assert_same(COMPOSITES["nested"].members[1], f["nested.1"])
        samples.assert_same_member(COMPOSITES["overlay"], 1, f["overlay.1"])
        samples.assert_same_member(COMPOSITES["group"], 0, f["group.0"])


def test_a_member_named_explicitly_is_returned(path):
    hurray.save(path, COMPOSITES)
    got = hurray.load(path, names=["overlay.1", "nested.1.0", "group"])
    assert list(got) == ["overlay.1", "nested.1.0", "group"]
    samples.assert_same_member(COMPOSITES["overlay"], 1, got["overlay.1"])
    samples.assert_same_member(COMPOSITES["nested"].members[1], 0, got["nested.1.0"])
    samples.assert_same(COMPOSITES["group"], got["group"])
    # members read one by one rebuild their composite (each keeps its role)
    base = hurray.load(path, names=["overlay.0"])["overlay.0"]
    again = hurray.Composite("overlay", (4, 4), "float32", [base, got["overlay.1"]],
                             combine_op="add")
    assert again == COMPOSITES["overlay"] and again.member_roles == ("base", "correction")


def test_load_names_errors(path):
    hurray.save(path, {"a": SAMPLES["f32_row"]})
    with pytest.raises(KeyError, match="'b'"):
        hurray.load(path, names=["a", "b"])
    with pytest.raises(TypeError):
        hurray.load(path, names="a")
    with pytest.raises(TypeError):
        hurray.load(path, names=[1])
    assert list(hurray.load(path, names=[])) == []


def test_path_types(tmp_path):
    t = {"x": SAMPLES["bf16"]}
    for p in (tmp_path / "a.hrry", str(tmp_path / "b.hrry"), os.fsencode(tmp_path / "c.hrry")):
        hurray.save(p, t)
        samples.assert_same_tensor(t["x"], hurray.load(p)["x"])
        with hurray.open(p) as f:
            assert "x" in f
    with pytest.raises(TypeError):
        hurray.save(3.5, t)


def test_empty_file(path):
    hurray.save(path, {})
    assert hurray.load(path) == {}
    assert hurray.load_kv(path) == {}
    with hurray.open(path) as f:
        assert len(f) == 0 and f.keys() == [] and f.kv == {}


# ---- zero-copy loads -------------------------------------------------------------------------

def test_read_only_mmap_loads_are_read_only_views_that_keep_the_mapping(path):
    big = np.arange(1 << 16, dtype=np.float32)
    hurray.save(path, {"big": hurray.from_numpy(big), "small": SAMPLES["f32_row"]})
    got = hurray.load(path, mmap="r")
    assert got["big"].readonly
    arr = np.asarray(got["big"])
    assert not arr.flags.writeable
    with pytest.raises(ValueError):
        arr[0] = 1
    # the declared alignment is kept, and the mapping meets it (data sits on pages)
    assert got["big"].buffer_handles[0].alignment == hurray.MIN_BUFFER_ALIGNMENT
    assert got["big"].data_ptr() % hurray.PAGE_ALIGNMENT == 0
    del got
    collect()
    assert np.array_equal(arr, big)  # the array keeps the mapping alive
    with hurray.open(path, mmap="r") as f:
        a, b = np.asarray(f["big"]), np.asarray(f["big"])
    assert a.ctypes.data == b.ctypes.data  # both views of the one mapping
    assert np.array_equal(a, big)


@pytest.mark.parametrize("mmap", [None, True, "c"])
def test_default_loads_are_copy_on_write_views(path, mmap):
    """The default (mmap=True, "c"): writable zero-copy views of a private mapping. A
    write never reaches the file, nor another load or open of it; the tensors of one
    File share its mapping, so a tensor fetched twice sees the other fetch's writes."""
    big = np.arange(1 << 16, dtype=np.float32)
    hurray.save(path, {"big": hurray.from_numpy(big), "small": SAMPLES["f32_row"]})
    before = path.read_bytes()
    kw = {} if mmap is None else {"mmap": mmap}
    got = hurray.load(path, **kw)
    t = got["big"]
    assert not t.readonly and t.buffer_handles[0].alignment == hurray.MIN_BUFFER_ALIGNMENT
    arr = np.asarray(t)
    assert arr.flags.writeable
    arr[0] = -1.0
    arr[-1] = -2.0
    assert np.asarray(t)[0] == -1.0 and np.asarray(t.buffer(0)).view(np.float32)[-1] == -2.0
    other = hurray.load(path, **kw)["big"]
    assert np.array_equal(np.asarray(other), big)  # a mapping of its own
    assert path.read_bytes() == before
    del got, t
    collect()
    assert arr[0] == -1.0 and np.array_equal(arr[1:-1], big[1:-1])  # the array keeps it
    with hurray.open(path, **kw) as f:
        assert f.mapped and f.mmap_mode == "c" and "mmap='c'" in repr(f)
        a, b = np.asarray(f["big"]), np.asarray(f["big"])
        assert a.ctypes.data == b.ctypes.data  # both views of the File's one mapping
        a[5] = 99.0
        assert b[5] == 99.0  # ... and so of each other's writes
        with hurray.open(path, **kw) as g:
            assert np.asarray(g["big"])[5] == 5.0  # another File: its own mapping
    assert path.read_bytes() == before
    assert np.array_equal(np.asarray(hurray.load(path, mmap=False)["big"]), big)


def test_mmap_modes_and_their_names(path):
    hurray.save(path, {"w": SAMPLES["f32_row"]})
    for mmap, mode, mapped, readonly in ((True, "c", True, False), ("c", "c", True, False),
                                         ("r", "r", True, True), (False, None, False, False)):
        with hurray.open(path, mmap=mmap) as f:
            assert f.mmap_mode == mode and f.mapped is mapped, mmap
            assert f["w"].readonly is readonly
            assert repr(f).endswith(f"mmap={mode!r}>" if mode else "mmap=False>"), repr(f)
    with hurray.open(path) as f:
        assert f.mmap_mode == "c"  # the default
    with pytest.raises(AttributeError):
        f.mmap_mode = "r"
    for bad in (1, 0, None, "w", "C", "rc", "", b"c", 1.0, np.True_):
        for call in (lambda: hurray.load(path, mmap=bad), lambda: hurray.open(path, mmap=bad)):
            with pytest.raises(ValueError, match=r"mmap .*True or 'c'.*'r'.*False") as e:
                call()
            assert repr(bad) in str(e.value)


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads Linux's smaps")
def test_copy_on_write_copies_only_the_pages_written(path):
    """No page is copied at load or by reading; each page written, exactly once."""
    hurray.save(path, {"w": hurray.from_numpy(np.arange(1 << 18, dtype=np.float32))})
    t = hurray.load(path)["w"]
    arr = np.asarray(t)

    def anonymous_kb():
        lines = pathlib.Path("/proc/self/smaps").read_text().splitlines()
        inside = False
        for line in lines:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= arr.ctypes.data < hi
            elif inside and head == "Anonymous:":
                return int(line.split()[1])
        raise AssertionError("the mapping is not in smaps")

    assert float(arr.sum()) == float(np.arange(1 << 18, dtype=np.float64).sum())
    assert anonymous_kb() == 0
    page = os.sysconf("SC_PAGE_SIZE")
    arr[0] = 1.0
    arr[1] = 2.0  # the same page
    arr[(10 * page) // 4] = 3.0
    assert anonymous_kb() == 2 * page // 1024


def test_saving_over_a_loaded_file_keeps_the_loaded_bytes(path):
    """save renames a new file over the old one: tensors mapped from the old file keep
    its bytes (no SIGBUS), written or not; a new load reads the new file."""
    old = np.arange(1 << 16, dtype=np.float32)
    hurray.save(path, {"w": hurray.from_numpy(old)})
    c = hurray.load(path)["w"]
    r = hurray.load(path, mmap="r")["w"]
    np.asarray(c)[0] = 42.0
    hurray.save(path, {"w": hurray.from_numpy(np.zeros(4, np.float32))})  # much shorter
    assert np.array_equal(np.asarray(r), old)
    assert np.asarray(c)[0] == 42.0 and np.array_equal(np.asarray(c)[1:], old[1:])
    assert np.asarray(hurray.load(path)["w"]).tolist() == [0.0] * 4


def test_plain_reads_are_writable_copies(path):
    hurray.save(path, {"w": SAMPLES["f32_row"]})
    got = hurray.load(path, mmap=False)["w"]
    assert not got.readonly
    arr = np.asarray(got)
    arr[0, 0] = 99.0
    assert np.asarray(hurray.load(path)["w"])[0, 0] != 99.0
    with hurray.open(path, mmap=False) as f:
        assert not f.mapped and f.mmap_mode is None and not f["w"].readonly


def test_scipy_round_trip(path):
    sp = pytest.importorskip("scipy.sparse")
    m = sp.random(20, 30, density=0.1, format="csr", dtype=np.float64, random_state=3)
    hurray.save(path, {"m": hurray.from_scipy(m)})
    back = hurray.load(path)["m"].to_scipy()
    assert (back != m).nnz == 0


# ---- the lazy reader -----------------------------------------------------------------------

def test_open_reads_only_what_is_asked(path):
    hurray.save(path, {"a": SAMPLES["f32_row"], "b": SAMPLES["csr"], "c": SAMPLES["q_nf4"]},
                kv={"k": 1})
    # corrupt b's descriptor magic: opening, listing and reading a and c never look at it
    raw = bytearray(path.read_bytes())
    offs = [m for m in range(len(raw) - 4) if raw[m:m + 4] == b"HRRY"]
    desc_offsets = offs[1:4]  # [header magic "HRRYFILE" first] then the three descriptors
    raw[desc_offsets[1]] = ord("X")
    path.write_bytes(bytes(raw))
    with hurray.open(path) as f:
        assert f.keys() == ["a", "b", "c"] and len(f) == 3 and list(f) == ["a", "b", "c"]
        assert "b" in f and "z" not in f and 3 not in f
        assert f.kv == {"k": 1} and f.metadata() == {"k": 1}
        samples.assert_same_tensor(SAMPLES["f32_row"], f["a"])
        samples.assert_same_tensor(SAMPLES["q_nf4"], f.get_tensor("c"))
        with pytest.raises(hurray.InvalidDescriptorError, match="tensor 'b'") as e:
            f["b"]
        assert e.value.status == "ERR_INVALID_MAGIC" and e.value.offset is not None
        with pytest.raises(KeyError, match="'z'"):
            f["z"]
        with pytest.raises(TypeError):
            f[0]
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.load(path)


def test_closed_file(path):
    hurray.save(path, {"a": SAMPLES["f32_row"]})
    f = hurray.open(path)
    t = f["a"]
    assert not f.closed and "1 tensor," in repr(f)
    f.close()
    f.close()  # idempotent
    assert f.closed and "closed" in repr(f)
    for op in (lambda: f["a"], lambda: f.keys(), lambda: len(f), lambda: "a" in f,
               lambda: f.kv, lambda: list(f), lambda: f.get_tensor("a")):
        with pytest.raises(ValueError, match="closed"):
            op()
    with pytest.raises(ValueError):
        with f:
            pass
    samples.assert_same_tensor(SAMPLES["f32_row"], t)  # still valid
    with pytest.raises(TypeError):
        hurray.File()


def test_file_used_from_threads(path):
    import threading
    hurray.save(path, SAMPLES)
    f = hurray.open(path, mmap=False)
    errors = []

    def work():
        try:
            for _ in range(20):
                for name in ("csr", "q_block", "f32_hilbert"):
                    samples.assert_same_tensor(SAMPLES[name], f[name])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    f.close()  # waits for the calls in flight; later ones see a closed file
    for th in threads:
        th.join()
    assert all(isinstance(e, ValueError) for e in errors)


# ---- KV metadata ---------------------------------------------------------------------------

KV = {
    "str": "llama ✓", "empty_str": "", "int": 7, "neg": -3, "big": 2**63 - 1,
    "small": -2**63, "float": 2.5, "nan_free": -0.0, "true": True, "false": False,
    "bytes": b"\x00\xff", "ints": [1, 2, 3], "floats": [0.5, 1e300], "strs": ["a", "bé"],
    "bools": [True, False], "blobs": [b"", b"x"], "nothing": [],
}


def test_kv_is_the_exact_inverse(path):
    hurray.save(path, {}, kv=KV)
    back = hurray.load_kv(path)
    assert back == KV and list(back) == list(KV)
    for k in KV:
        assert type(back[k]) is type(KV[k]), k  # bool stays bool, int stays int
        if isinstance(KV[k], list):
            assert [type(x) for x in back[k]] == [type(x) for x in KV[k]]
    with hurray.open(path) as f:
        assert f.kv == KV
        f.kv["str"] = "changed"  # a copy
        assert f.kv == KV


def test_kv_accepted_forms(path):
    hurray.save(path, {}, kv={"t": (1, 2), "ba": bytearray(b"ab"), "i": np.int64(4).item()})
    assert hurray.load_kv(path) == {"t": [1, 2], "ba": b"ab", "i": 4}


@pytest.mark.parametrize("kv, exc, match", [
    ({"x": 2**63}, OverflowError, "int64"),
    ({"x": -2**63 - 1}, OverflowError, "int64"),
    ({"x": [1, 2**64]}, OverflowError, "int64"),
    ({"x": None}, TypeError, "NoneType"),
    ({"x": {"a": 1}}, TypeError, "dict"),
    ({"x": [1, "a"]}, TypeError, "one type"),
    ({"x": [True, 1]}, TypeError, "one type"),
    ({"x": [1, True]}, TypeError, "one type"),
    ({"x": [[1]]}, TypeError, "arrays of arrays"),
    ({"x": [None]}, TypeError, "NoneType"),
    ({1: 1}, TypeError, "keys must be str"),
    ({"": 1}, ValueError, "key"),
    ("notadict", TypeError, "dict"),
])
def test_kv_refusals(path, kv, exc, match):
    with pytest.raises(exc, match=match):
        hurray.save(path, {"a": SAMPLES["f32_row"]}, kv=kv)
    assert not path.exists()  # nothing written


def _patch_kv_tag(path, key, new_tag):
    raw = bytearray(path.read_bytes())
    entry = len(key).to_bytes(2, "little") + key
    at = bytes(raw).index(entry) + len(entry)
    raw[at] = new_tag
    path.write_bytes(bytes(raw))


def test_uint64_from_another_producer_reads_back_as_int(path):
    hurray.save(path, {}, kv={"u": -1, "arr": [-1, 5]})
    _patch_kv_tag(path, b"u", 0x03)  # int64 -> uint64, same 8 bytes
    raw = bytearray(path.read_bytes())
    at = bytes(raw).index(b"\x03\x00arr\x07") + 6
    assert raw[at] == 0x02
    raw[at] = 0x03  # array element tag int64 -> uint64
    path.write_bytes(bytes(raw))
    kv = hurray.load_kv(path)
    assert kv == {"u": 2**64 - 1, "arr": [2**64 - 1, 5]}
    assert type(kv["u"]) is int


@pytest.mark.parametrize("tag", [0x08, 0x42, 0xF0, 0xFF])
def test_unknown_kv_tags_raise(path, tag):
    hurray.save(path, {}, kv={"a": 1, "zz": 2})
    _patch_kv_tag(path, b"zz", tag)
    with pytest.raises(hurray.FileError, match="kv|KV") as e:
        hurray.load_kv(path)
    assert e.value.status == "ERR_INVALID_KV"
    with pytest.raises(hurray.FileError):
        hurray.load(path)


# ---- the reference corpus ----------------------------------------------------------------

def test_golden_basic_file():
    g = golden_dir()
    if g is None:
        pytest.skip("../shared/golden is absent: the reference corpus file cannot be checked")
    manifest = json.loads((g / "manifest.json").read_text())
    entry = next(e for e in manifest["files"] if e["file"] == "files/basic.hrry")
    p = g / entry["file"]
    for mmap in MMAP_MODES:
        got = hurray.load(p, mmap=mmap)
        assert list(got) == [t["name"] for t in entry["tensors"]]
        for t in entry["tensors"]:
            x = got[t["name"]]
            assert x.dtype.name == t["element_type"] and x.dtype.tag == t["element_type_tag"]
            assert x.shape == tuple(t["shape"])
            assert x.buffer_handles[0].byte_size == t["data_bytes"]
            assert len(samples.buffer_bytes(x)[0]) == t["data_bytes"]
    kv = hurray.load_kv(p)
    want = {e["key"]: e["value_string"] if e["kind"] == "string" else e["value_int"]
            for e in entry["kv"]}
    assert kv == want
    with hurray.open(p) as f:
        assert f.keys() == [t["name"] for t in entry["tensors"]] and f.kv == want


# ---- errors -------------------------------------------------------------------------------

def test_missing_file(tmp_path):
    for fn in (hurray.load, hurray.load_kv, hurray.open):
        with pytest.raises(hurray.FileError, match="No such file") as e:
            fn(tmp_path / "missing.hrry")
        assert isinstance(e.value, OSError) and e.value.status == "ERR_IO"


def test_unwritable_destination(tmp_path):
    with pytest.raises(hurray.FileError):
        hurray.save(tmp_path / "no" / "such" / "dir.hrry", {"a": SAMPLES["f32_row"]})
    with pytest.raises(hurray.FileError, match="directory"):
        hurray.save(tmp_path, {"a": SAMPLES["f32_row"]})


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root ignores file permissions")
def test_permission_denied(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    hurray.save(d / "a.hrry", {"a": SAMPLES["f32_row"]})
    (d / "a.hrry").chmod(0)
    d.chmod(0o500)
    try:
        with pytest.raises(hurray.FileError):
            hurray.load(d / "a.hrry")
        with pytest.raises(hurray.FileError):
            hurray.save(d / "b.hrry", {"a": SAMPLES["f32_row"]})
    finally:
        d.chmod(0o700)


def test_corrupt_files(path):
    hurray.save(path, {"a": SAMPLES["f32_row"]}, kv={"k": "v"})
    good = path.read_bytes()
    cases = {
        "garbage": b"not a hurray file at all" * 10,
        "empty": b"",
        "truncated": good[:len(good) // 2],
        "trailer": good[:-4] + b"XXXX",
        "index crc": None,
    }
    raw = bytearray(good)
    idx = bytes(raw).rindex(b"\x01\x00a")  # the index entry of "a"
    raw[idx + 2] = ord("b")  # rename it behind the checksum's back
    cases["index crc"] = bytes(raw)
    for what, data in cases.items():
        path.write_bytes(data)
        for fn in (hurray.load, hurray.load_kv, hurray.open):
            with pytest.raises(hurray.FileError) as e:
                fn(path)
            assert e.value.status in ("ERR_INVALID_FILE", "ERR_CRC_MISMATCH", "ERR_IO",
                                      "ERR_INVALID_KV"), what


def test_save_refusals(path):
    with pytest.raises(TypeError, match="dict"):
        hurray.save(path, [SAMPLES["f32_row"]])
    with pytest.raises(TypeError, match="names must be str"):
        hurray.save(path, {1: SAMPLES["f32_row"]})
    with pytest.raises(TypeError, match=r"tensors\['a'\] must be a hurray.Tensor, a hurray.Composite, a NumPy"):
        hurray.save(path, {"a": object()})
    with pytest.raises(TypeError, match="must be a hurray.Tensor"):
        hurray.save(path, {"a": "not a tensor"})
    with pytest.raises(ValueError):
        hurray.save(path, {"": SAMPLES["f32_row"]})
    # a member name colliding with a top-level name
    with pytest.raises(hurray.FileError, match="overlay.0") as e:
        hurray.save(path, {"overlay.0": SAMPLES["f32_row"], "overlay": COMPOSITES["overlay"]})
    assert e.value.status == "ERR_DUPLICATE_NAME"
    assert not path.exists()
    assert os.listdir(path.parent) == []  # no temporary file left behind


def test_device_declarations_relay_but_device_memory_is_refused(path):
    # a CUDA declaration over host bytes (what this package builds) is written as is
    decl = hurray.Tensor(samples.buf(16, 5), "float32", (4,), device=hurray.Device("cuda"))
    hurray.save(path, {"d": decl, "g": hurray.Composite("group", (1,), "float32", [decl])})
    got = hurray.load(path)
    assert got["d"].device == hurray.Device("cuda") and got["g"].members[0].device == decl.device
    assert got["d"].shape == (4,) and got["d"].buffer_handles[0].byte_size == 16
    import capi
    if capi.usable() is not None:
        pytest.skip(capi.usable())
    # device memory handed over by a foreign producer is never read
    prod = capi.Producer()
    cap, _, _ = prod.capsule(decl.descriptor.encode(), [b"\1" * 16], device=0x01)
    foreign = hurray.from_hurray(cap)
    assert foreign.device == hurray.Device("cuda")
    with pytest.raises(hurray.UnsupportedError, match="device memory"):
        hurray.save(path, {"d": foreign})
    with pytest.raises(hurray.UnsupportedError, match="device memory"):
        hurray.save(path, {"g": hurray.Composite("group", (1,), "float32", [foreign])})
    with pytest.raises(hurray.UnsupportedError, match="device memory"):
        hurray.StreamWriter().write(foreign)


def test_private_layouts_relay_with_permissive(path):
    t = hurray.Tensor([samples.buf(8), samples.buf(3)], "uint8", (8,),
                      layout=hurray.PrivateExtensionLayout(0xF3, 9, b"opaque"))
    hurray.save(path, {"p": t, "w": SAMPLES["f32_row"]})
    with pytest.raises(hurray.InvalidDescriptorError, match="0xF3"):
        hurray.load(path)  # strict by default (docs/internals/decisions.md § Strictness)
    for mmap in MMAP_MODES:
        got = hurray.load(path, permissive=True, mmap=mmap)
        assert got["p"].layout == t.layout
        assert samples.buffer_bytes(got["p"]) == samples.buffer_bytes(t)
        with hurray.open(path, permissive=True, mmap=mmap) as f:
            assert f["p"].layout == t.layout
    unknown = hurray.Tensor(None, "float32", (4,), layout=hurray.UnknownLayout(0x0C, bytes(8)))
    hurray.save(path, {"u": unknown})
    with pytest.raises(hurray.UnsupportedError, match="cannot be located"):
        hurray.load(path, permissive=True)  # its buffer table is inside bytes nobody can parse


# ---- atomic writes --------------------------------------------------------------------------

def test_save_replaces_atomically(path):
    hurray.save(path, {"v": hurray.from_numpy(np.full(4, 1, np.int32))})
    hurray.save(path, {"v": hurray.from_numpy(np.full(4, 2, np.int32))})
    assert np.asarray(hurray.load(path)["v"]).tolist() == [2, 2, 2, 2]
    assert os.listdir(path.parent) == ["model.hrry"]


def test_save_durable_flag(tmp_path):
    """durable= changes only whether the file and its folder are flushed to the
    disk: both modes write the same bytes through a temporary file renamed into
    place, and leave nothing else behind."""
    t = {"w": hurray.from_numpy(np.arange(3000, dtype=np.float32).reshape(30, 100)),
         "z": hurray.zeros((5,), dtype=hurray.int16)}
    paths = {}
    for durable in (True, False):
        p = tmp_path / f"d{int(durable)}.hrry"
        hurray.save(p, {"old": hurray.zeros((2,))})  # replaced atomically
        hurray.save(p, t, kv={"k": [1, 2]}, durable=durable)
        got = hurray.load(p)
        assert list(got) == ["w", "z"] and hurray.load_kv(p) == {"k": [1, 2]}
        assert np.array_equal(np.asarray(got["w"]), np.asarray(t["w"]))
        paths[durable] = p
    assert paths[True].read_bytes() == paths[False].read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["d0.hrry", "d1.hrry"]  # no temporary file left
    hurray.save(tmp_path / "default.hrry", t, kv={"k": [1, 2]})  # durable=True by default
    assert (tmp_path / "default.hrry").read_bytes() == paths[True].read_bytes()
    for bad in (None, 1, 0, "no", np.bool_(False)):
        with pytest.raises(TypeError, match="durable must be True or False"):
            hurray.save(tmp_path / "bad.hrry", t, durable=bad)
    assert not (tmp_path / "bad.hrry").exists()
    with pytest.raises(hurray.FileError):  # a failed non-durable save removes its temporary
        hurray.save(tmp_path / "missing" / "x.hrry", t, durable=False)
    assert sorted(os.listdir(tmp_path)) == ["d0.hrry", "d1.hrry", "default.hrry"]


@pytest.mark.slow  # child interpreters, killed
@pytest.mark.parametrize("durable", [True, False], ids=["durable", "not-durable"])
def test_a_killed_save_leaves_the_previous_file_intact(tmp_path, durable):
    """SIGKILL a process while it saves over an existing file, many times at
    different moments: the file always loads, as the old or the new version,
    whether or not the save flushes to the disk (durable=False gives up only
    what an OS crash or a power loss would take)."""
    path = tmp_path / "m.hrry"
    old = np.full(1 << 20, 7, np.float32)
    hurray.save(path, {"w": hurray.from_numpy(old)}, kv={"version": 1})
    child = textwrap.dedent(f"""
        import sys, numpy as np, hurray
        new = np.full(1 << 22, 9, np.float32)   # 16 MiB: the write takes a while
        t = {{"w": hurray.from_numpy(new), "x": hurray.from_numpy(new[:1000])}}
        print("go", flush=True)
        while True:
            hurray.save({str(path)!r}, t, kv={{"version": 2}}, durable={durable!r})
    """)
    seen = set()
    for i in range(8):
        p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == b"go"
        time.sleep(0.004 * i * i)
        p.send_signal(signal.SIGKILL)
        p.wait()
        kv = hurray.load_kv(path)
        got = hurray.load(path)
        w = np.asarray(got["w"])
        if kv["version"] == 1:
            assert list(got) == ["w"] and np.array_equal(w, old)
        else:
            assert list(got) == ["w", "x"] and w.size == 1 << 22 and (w == 9).all()
        seen.add(kv["version"])
    assert 1 in seen or 2 in seen
    # stray temporary files may remain (the process could not clean up); never the target
    for name in os.listdir(tmp_path):
        assert name == "m.hrry" or name.startswith(".m.hrry.tmp-")


def _crc32c(data):
    """CRC-32C (Castagnoli), bitwise: small inputs only."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _rename_entry(raw, old, new):
    """Renames an index entry in place and refreshes the index CRC-32C."""
    import struct
    trailer = len(raw) - 40
    index_offset, index_length = struct.unpack_from("<QQ", raw, trailer)
    index = bytes(raw[index_offset:index_offset + index_length])
    at = index.index(struct.pack("<H", len(old)) + old)
    raw[index_offset + at + 2:index_offset + at + 2 + len(new)] = new
    crc = _crc32c(raw[index_offset:index_offset + index_length])
    struct.pack_into("<I", raw, trailer + 28, crc)


def test_duplicate_names_refused_where_relied_on(path):
    a = hurray.from_numpy(np.arange(4, dtype=np.float32))
    b = hurray.from_numpy(np.arange(3, dtype=np.int8))
    c = hurray.from_numpy(np.ones(2, dtype=np.float64))
    hurray.save(path, {"aa": a, "ab": b, "zz": c})
    raw = bytearray(path.read_bytes())
    _rename_entry(raw, b"ab", b"aa")  # two entries now say "aa", the CRC agrees
    path.write_bytes(bytes(raw))
    # Loading everything relies on unique names: refused, never a silent overwrite.
    with pytest.raises(hurray.FileError) as e:
        hurray.load(path)
    assert e.value.status == "ERR_DUPLICATE_NAME"
    # The lazy reader opens; the ambiguous name is refused, the others load.
    with hurray.open(path) as f:
        assert "aa" in f
        with pytest.raises(hurray.FileError) as e:
            f["aa"]
        assert e.value.status == "ERR_DUPLICATE_NAME"
        np.testing.assert_array_equal(np.asarray(f["zz"]), np.ones(2))
        with pytest.raises(KeyError):
            f["ab"]
    with pytest.raises(hurray.FileError):
        hurray.load(path, names=["aa"])
    np.testing.assert_array_equal(np.asarray(hurray.load(path, names=["zz"])["zz"]), np.ones(2))
