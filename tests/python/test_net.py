"""The network transport over real sockets: hurray.serve / hurray.connect round
trips of every layout and dtype kind, layouts asked for and transcoded (every dense
stored layout as row-major and column-major, the limit, what cannot be transcoded), a
raw-socket conformance test written from
the specification's tables (docs/spec/interchange.md upstream, § Network Transport
Protocol: the header, message types, HELLO, TENSOR_REQUEST, TENSOR_DESCRIPTOR /
TENSOR_DATA / TENSOR_DATA_END, ERROR codes), many clients at once, clients and
servers that die mid-transfer, a server that sends truncated or corrupted frames,
and two hosts in two network namespaces. Every test runs under a timeout."""

import faulthandler
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import hurray
from samples import T, assert_same, assert_same_tensor, buf, sample_composites, sample_tensors

TIMEOUT = 20  # seconds per test; a hang dumps every thread and ends the run


@pytest.fixture(autouse=True)
def _timeout():
    faulthandler.dump_traceback_later(TIMEOUT, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def big(nbytes, seed=0):
    """nbytes of varied content (a 4099-byte pattern: no frame boundary repeats it)."""
    pattern = ((np.arange(4099, dtype=np.uint32) * 2654435761 + seed) >> 13).astype(np.uint8)
    a = np.resize(pattern, nbytes)
    return hurray.from_numpy(a.view(np.float32))


# ---- round trips -------------------------------------------------------------------------

SAMPLES = sample_tensors()


def test_every_layout_and_dtype_round_trips():
    with hurray.serve(SAMPLES) as s, hurray.connect(s.url, timeout=5) as c:
        assert sorted(c.keys()) == sorted(SAMPLES)
        for name, t in SAMPLES.items():
            assert_same_tensor(t, c[name])
        # the catalog describes without fetching
        d = c.descriptors()
        assert d["q_channel"].quantization is not None and d["csr"].layout.name == "csr"


def test_every_sample_pushed_and_fetched_back():
    with hurray.serve({}, writable=True) as s, hurray.connect(s.url, timeout=5) as c:
        for name, t in SAMPLES.items():
            c.put(name, t)
        assert sorted(s.keys()) == sorted(SAMPLES)
        for name, t in SAMPLES.items():
            assert_same_tensor(t, c.get_tensor(name))


def test_files_served_by_name(tmp_path):
    a = {"w": hurray.from_numpy(np.arange(1000, dtype=np.float32))}
    b = {"v": hurray.from_numpy(np.arange(10, dtype=np.int64))}
    hurray.save(tmp_path / "a.hrry", a)
    hurray.save(tmp_path / "b.hrry", b)
    with hurray.serve([tmp_path / "a.hrry", tmp_path / "b.hrry"]) as s:
        assert s.url == f"hurray://127.0.0.1:{s.port}" and s.port > 0
        got = hurray.load(s.url)
        assert sorted(got) == ["v", "w"]
        np.testing.assert_array_equal(np.asarray(got["w"]), np.arange(1000, dtype=np.float32))
        with hurray.open(s.url) as f:  # a hurray:// URL opens as a client
            sl = f.get_slice("w")
            assert sl.shape == (1000,) and sl.get_dtype() == "float32"
            np.testing.assert_array_equal(np.asarray(sl[10:20]), np.arange(10, 20))
    hurray.save(tmp_path / "c.hrry", a)
    with pytest.raises(ValueError, match="'w' is in both"):
        hurray.serve([tmp_path / "a.hrry", tmp_path / "c.hrry"])


@pytest.mark.slow
def test_torch_load_file_from_a_server():
    torch = pytest.importorskip("torch")
    import hurray.torch as ht
    t = {"x": hurray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))}
    with hurray.serve(t) as s:
        got = ht.load_file(s.url)
    assert torch.equal(got["x"], torch.arange(6, dtype=torch.float32).reshape(2, 3))


def test_composites_round_trip(tmp_path):
    """A composite is served in pre-order (head, then members, a nested head before
    its members) on one stream and assembled by the client into a hurray.Composite;
    the connection goes on serving afterwards."""
    comps = sample_composites()
    with hurray.serve({**comps, "t": SAMPLES["f32_row"]}) as s, \
            hurray.connect(s.url, timeout=5) as c:
        for name, comp in comps.items():
            got = c[name]
            assert isinstance(got, hurray.Composite), name
            assert_same(comp, got)
        assert_same_tensor(SAMPLES["f32_row"], c["t"])
        assert c.descriptors()["nested"].layout.name == "composite"
    # from a file too
    hurray.save(tmp_path / "c.hrry", comps)
    with hurray.serve(tmp_path / "c.hrry") as s:
        got = hurray.load(s.url)
    for name, comp in comps.items():
        assert_same(comp, got[name])


def test_parallel_shards_over_several_connections():
    """A server advertises PARALLEL_STREAMS; a tensor above the threshold comes in
    shards over `parallel` connections into one aligned buffer, byte for byte; one
    below it, a composite, or a layout that cannot be split in rows comes whole."""
    rows = np.arange(1001 * 7, dtype=np.int32).reshape(1001, 7)  # 1001 rows: uneven shards
    t = hurray.from_numpy(rows)
    small = hurray.from_numpy(np.arange(10, dtype=np.float32))
    with hurray.serve({"r": t, "s": small, "q": SAMPLES["q_channel"]}, log=[].append) as s:
        with hurray.connect(s.url, timeout=5, parallel=3, parallel_threshold=1000) as c:
            assert c.parallel == 3
            got = c["r"]
            np.testing.assert_array_equal(np.asarray(got), rows)
            assert got.buffer(0).__array_interface__["data"][0] % 64 == 0
            assert len(c._extra) == 2  # two more connections were opened
            assert_same_tensor(small, c["s"])
            assert_same_tensor(SAMPLES["q_channel"], c["q"])
            # a shard asked for by name, as the extra connections do
            d = hurray.Descriptor.decode(c._c.get_into("r#shard=1/3", bytearray(334 * 28)))
            assert d.shape == (334, 7) and d.shard.shard_offset == (334, 0)
            assert d.shard.parent_shape == (1001, 7)
        with hurray.connect(s.url, timeout=5, parallel=1) as c:
            assert c.parallel == 1
            np.testing.assert_array_equal(np.asarray(c["r"]), rows)
            # without PARALLEL_OK in its requests, a shard is refused
            with pytest.raises(hurray.StreamError, match="did not allow parallel shards"):
                c._c.get_into("r#shard=0/2", bytearray(501 * 28))


@pytest.mark.parametrize("case", ["gap", "overlap", "misplaced", "other_parent", "none"])
def test_shards_leaving_a_gap_or_overlapping_are_refused(case):
    whole = hurray.from_numpy(np.zeros((10, 3), np.float32)).descriptor
    plan = hurray._net.shard_plan(10, 3)  # rows 0-3, 4-6, 7-9
    assert plan == [(0, 4), (4, 3), (7, 3)]

    def shard(start, count, parent=(10, 3)):
        kw = {} if parent is None else {"shard": hurray.Shard(parent, (start, 0))}
        return T([buf(count * 12)], "float32", (count, 3), **kw).descriptor

    good = [shard(0, 4), shard(4, 3), shard(7, 3)]
    hurray._net.check_shards(whole, good, plan)
    bad = {
        "gap": [shard(0, 4), shard(5, 2), shard(7, 3)],
        "overlap": [shard(0, 4), shard(3, 4), shard(7, 3)],
        "misplaced": [shard(4, 3), shard(0, 4), shard(7, 3)],
        "other_parent": [shard(0, 4), shard(4, 3), shard(7, 3, parent=(11, 3))],
        "none": [shard(0, 4), shard(4, 3, parent=None), shard(7, 3)],
    }[case]
    match = {"gap": "gap|uncovered", "overlap": "overlaps", "misplaced": "asked for",
             "other_parent": "parent shape", "none": "no shard section"}[case]
    with pytest.raises(hurray.StreamError, match=match):
        hurray._net.check_shards(whole, bad, plan)


def test_missing_name_ping_and_put_limits():
    with hurray.serve({"a": SAMPLES["f32_row"]}, writable=True, max_put_bytes=100) as s:
        with hurray.connect(s.url, timeout=5) as c:
            with pytest.raises(KeyError):
                c["nope"]
            assert "a" in c and len(c) == 1 and c.ping() < 1.0
            c.put("small", np.zeros(10, np.float32))  # 40 bytes
            with pytest.raises(hurray.StreamError, match="MESSAGE_TOO_LARGE"):
                c.put("large", np.zeros(100, np.float32))  # 400 bytes
            c.put("small", np.ones(20, np.float32))  # replaces: 80 bytes in all
            np.testing.assert_array_equal(np.asarray(c["small"]), np.ones(20, np.float32))
            with pytest.raises(hurray.StreamError):
                c.put("__hurray_catalog__", np.zeros(1, np.float32))
            c["a"]  # the connection is still usable after refused pushes
    with hurray.serve({"a": SAMPLES["f32_row"]}) as s, hurray.connect(s.url) as c:
        with pytest.raises(hurray.StreamError):
            c.put("b", np.zeros(1, np.float32))  # not writable


def test_bad_urls_and_closed_clients():
    with pytest.raises(ValueError):
        hurray.connect("http://127.0.0.1:1")
    with pytest.raises(ValueError):
        hurray.connect("hurray://127.0.0.1:1/path")
    with pytest.raises(hurray.StreamError):
        hurray.connect("hurray://127.0.0.1:1", timeout=2)  # nothing listens on port 1
    with hurray.serve({"a": SAMPLES["f32_row"]}) as s:
        c = hurray.connect(s.url)
        c.close()
        with pytest.raises(ValueError, match="closed"):
            c["a"]


# ---- layouts: what the client prefers, what the server transcodes ---------------------------

DENSE = ["f32_row", "f64_col", "i16_strided", "u8_tiled", "f32_morton", "f32_hilbert", "bf16",
         "bool", "c64", "empty", "scalar", "sections"]


def codes(t, order):
    """The element codes of a row- or column-major tensor's one buffer, in logical
    row-major order (whole-byte elements as rows of bytes, 4-bit ones as nibbles,
    LSB first): read with NumPy alone, not through the library."""
    raw = np.frombuffer(np.asarray(t.buffer(0)).tobytes(), np.uint8)
    shape = tuple(t.shape)
    n = int(np.prod(shape))
    if t.dtype.bit_width == 4:
        flat = np.stack([raw & 0xF, raw >> 4], axis=1).reshape(-1)[:n]
    else:
        flat = raw[:n * t.dtype.itemsize].reshape(n, t.dtype.itemsize)
    if order == "col_major":
        return flat.reshape(tuple(reversed(shape)) + flat.shape[1:]).transpose(
            tuple(reversed(range(len(shape)))) + tuple(range(len(shape), flat.ndim)))
    return flat.reshape(shape + flat.shape[1:])


def test_every_dense_layout_fetched_row_and_column_major():
    """§ On-the-Fly Transcoding: every dense stored layout (row-major, column-major,
    strided, tiled, Morton, Hilbert) and element kind comes in the layout asked for, with
    the stored tensor's values at every index (NumPy compares them)."""
    tensors = {n: SAMPLES[n] for n in DENSE + ["int4"]}
    with hurray.serve(tensors) as s, hurray.connect(s.url, timeout=5) as c:
        for name, t in tensors.items():
            for target in ("row_major", "col_major"):
                got = c.get_tensor(name, layout=target)
                want = target if (t.ndim > 0 or target == "row_major") else "row_major"
                assert got.layout.name == want, (name, target)  # a scalar has no col_major
                assert got.shape == t.shape and got.dtype == t.dtype, name
                assert got.buffer_count == 1 and got.byte_offset == 0, name
                if name == "int4":  # no NumPy dtype: the codes, read from the bytes
                    np.testing.assert_array_equal(codes(got, want), codes(t, "row_major"))
                    continue
                np.testing.assert_array_equal(np.asarray(got), np.asarray(t), err_msg=name)
                if want == "col_major" and name != "bool":
                    assert np.asarray(got).flags.f_contiguous or t.ndim < 2, name
            # stored metadata travels with the values
            got = c.get_tensor(name, layout=["col_major", "row_major"])
            assert got.shard == t.shard and got.statistics == t.statistics, name


def test_preferences_quantized_sparse_and_composites():
    """A quantized or sparse tensor cannot be transcoded: it comes as stored, whatever the
    preferences; a composite's members are each negotiated; a preference the tensor is
    stored in wins over a transcodable one listed after it."""
    comps = sample_composites()
    with hurray.serve({**SAMPLES, **comps}) as s, hurray.connect(s.url, timeout=5) as c:
        for name in ("q_channel", "q_block", "coo", "csr", "paged"):
            assert_same_tensor(SAMPLES[name], c.get_tensor(name, layout="col_major"))
        assert c.get_tensor("f64_col", layout=["col_major", "row_major"]).layout.name == \
            "col_major"
        assert c.get_tensor("f64_col", layout=["csr", "row_major"]).layout.name == "row_major"
        assert c.get_tensor("f32_row", layout=[]).layout.name == "row_major"
        part = c.get_tensor("partition", layout="col_major")
        assert [m.layout.name for m in part.members] == ["col_major", "col_major"]
        for got, want in zip(part.members, comps["partition"].members):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
            assert got.shard == want.shard
        group = c.get_tensor("group", layout="col_major")
        for got, want in zip(group.members, comps["group"].members):
            assert_same_tensor(want, got)  # quantized, CSR, COO: as stored
        with pytest.raises(ValueError, match="not a layout name"):
            c.get_tensor("f32_row", layout="diagonal")
        with pytest.raises(TypeError, match="named by a str"):
            c.get_tensor("f32_row", layout=[1])
        assert_same_tensor(SAMPLES["f32_row"], c["f32_row"])  # the connection goes on


def test_transcode_limit_falls_through_and_zero_turns_it_off():
    t = hurray.from_numpy(np.arange(48, dtype=np.float32).reshape(6, 8))  # 192 bytes
    small = hurray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))  # 24 bytes
    lines = []
    with hurray.serve({"t": t, "s": small}, transcode_limit=100, log=lines.append) as s, \
            hurray.connect(s.url, timeout=5) as c:
        assert s.transcode_limit == 100
        assert c.get_tensor("t", layout="col_major").layout.name == "row_major"  # over
        got = c.get_tensor("s", layout="col_major")
        assert got.layout.name == "col_major"
        np.testing.assert_array_equal(np.asarray(got), np.arange(6).reshape(2, 3))
    assert any("GET 's' 24 bytes as col_major (transcoded from row_major)" in x for x in lines)
    assert any(x.endswith("GET 't' 192 bytes") for x in lines), lines
    with hurray.serve({"s": small}, transcode_limit=0) as s, hurray.connect(s.url) as c:
        assert c._c.peer_capabilities & 0x1 == 0
        assert c.get_tensor("s", layout="col_major").layout.name == "row_major"
    with pytest.raises(ValueError, match="transcode_limit"):
        hurray.serve({}, transcode_limit=-1)


def test_layout_argument_is_checked():
    """layout= takes a name or a sequence of names; anything else is refused by name before
    a request is sent, and the connection stays usable."""
    t = hurray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    with hurray.serve({"t": t}) as s, hurray.connect(s.url, timeout=5) as c:
        for bad in (5, b"col_major", 1.5):
            with pytest.raises(TypeError, match="layout= takes a layout name"):
                c.get_tensor("t", layout=bad)
        with pytest.raises(TypeError, match="named by a str"):
            c.get_tensor("t", layout=[2])
        with pytest.raises(ValueError, match="is not a layout name"):
            c.get_tensor("t", layout="nope")
        with pytest.raises(ValueError, match="at most 64"):
            c.get_tensor("t", layout=["col_major"] * 65)
        got = c.get_tensor("t", layout=("col_major", "row_major"))
        assert got.layout.name == "col_major"
        assert c.get_tensor("t", layout=[]).layout.name == "row_major"


# ---- conformance: raw sockets, from the specification's tables ------------------------------

CLIENT_HELLO, SERVER_HELLO, TENSOR_REQUEST, TENSOR_DESCRIPTOR = 1, 2, 3, 4
TENSOR_DATA, TENSOR_DATA_END, TENSOR_PUT, TENSOR_PUT_ACK, ERROR, PING, PONG = 5, 6, 7, 8, 9, 10, 11
E_VERSION, E_UNKNOWN_TENSOR, E_INVALID_MESSAGE, E_TOO_LARGE = 1, 2, 6, 7


def frame(mtype, stream, payload=b""):
    return struct.pack("<III", mtype, stream, len(payload)) + payload


def hello(version=1, max_size=1 << 20, caps=0, devices=(0,)):
    return (struct.pack("<IIQ", version, max_size, caps) + struct.pack("<H", 0)
            + struct.pack("<H", len(devices)) + bytes(devices))


def request(key, device=0, align=64, flags=0):
    k = key.encode()
    return struct.pack("<I", len(k)) + k + struct.pack("<H", 0) + struct.pack("<BII", device,
                                                                                 align, flags)


def recv_exact(sock, n):
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise EOFError(f"closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


def recv_msg(sock):
    mtype, stream, n = struct.unpack("<III", recv_exact(sock, 12))
    return mtype, stream, recv_exact(sock, n)


def error_of(payload):
    code, n = struct.unpack_from("<II", payload)
    return code, payload[8:8 + n].decode()


def raw(url_port, timeout=5):
    s = socket.create_connection(("127.0.0.1", url_port), timeout=timeout)
    return s


def said_hello(port):
    s = raw(port)
    s.sendall(frame(CLIENT_HELLO, 1, hello()))
    mtype, stream, p = recv_msg(s)
    assert mtype == SERVER_HELLO and stream != 0
    return s, p


def refused(sock):
    """What the peer answers a message it must refuse: an ERROR, then (or only) the
    connection closed; nothing else. The ERROR's code, or None when it only closed."""
    got = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    if not got:
        return None
    assert struct.unpack_from("<I", got)[0] == ERROR
    return error_of(got[12:])[0]


def closed_soon(sock):
    """The peer closes the connection (what is left to read is discarded)."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


def test_conformance_hello_and_a_tensor():
    t = hurray.from_numpy(np.arange(300000, dtype=np.float32))  # 1.2 MB: several frames
    with hurray.serve({"t": t}) as srv:
        s, p = said_hello(srv.port)
        version, max_size, caps = struct.unpack_from("<IIQ", p)
        assert version == 1  # <= the client's
        assert max_size >= 4096
        assert caps & ~0x7 == 0  # bits 3-63 reserved
        assert caps & 0x4 == 0  # no RDMA data plane
        at = 16
        (nlayouts,) = struct.unpack_from("<H", p, at)
        at += 2
        for _ in range(nlayouts):
            tag = p[at]
            at += 1
            if 0xF0 <= tag <= 0xFE:
                (m,) = struct.unpack_from("<H", p, at)
                at += 2 + m
        (ndev,) = struct.unpack_from("<H", p, at)
        assert 0x00 in p[at + 2:at + 2 + ndev]  # CPU
        # TENSOR_REQUEST -> TENSOR_DESCRIPTOR, TENSOR_DATA frames, TENSOR_DATA_END
        s.sendall(frame(TENSOR_REQUEST, 7, request("t")))
        mtype, stream, p = recv_msg(s)
        assert (mtype, stream) == (TENSOR_DESCRIPTOR, 7)
        total, shard_index, total_shards = struct.unpack_from("<QII", p, len(p) - 16)
        assert (total, shard_index, total_shards) == (1200000, 0, 1)
        desc = hurray.Descriptor.decode(p[:-16])
        assert desc.shape == (300000,) and desc.dtype.name == "float32"
        data = bytearray()
        frames = 0
        while True:
            mtype, stream, p = recv_msg(s)
            assert stream == 7
            if mtype == TENSOR_DATA_END:
                assert p == b""
                break
            assert mtype == TENSOR_DATA and len(p) <= max_size
            (off,) = struct.unpack_from("<Q", p)
            assert off == len(data)  # ascending, no gap, no overlap
            data += p[8:]
            frames += 1
        assert frames > 1 and len(data) == total
        assert bytes(data) == np.arange(300000, dtype=np.float32).tobytes()
        # PING -> PONG with the payload
        s.sendall(frame(PING, 9, b"12345678"))
        assert recv_msg(s) == (PONG, 9, b"12345678")
        # an unknown key: ERROR UNKNOWN_TENSOR; the connection stays open
        s.sendall(frame(TENSOR_REQUEST, 11, request("nope")))
        mtype, stream, p = recv_msg(s)
        assert (mtype, stream, error_of(p)[0]) == (ERROR, 11, E_UNKNOWN_TENSOR)
        s.sendall(frame(PING, 13, b"x"))
        assert recv_msg(s)[0] == PONG
        s.close()


def test_conformance_layout_selection_without_transcoding():
    """§ Server Layout Selection: a server without TRANSCODING (transcode_limit=0) serves the stored layout
    whatever the preferences (rule 1a picks it if listed, rule 2 otherwise), even with
    ALLOW_TRANSCODE; the descriptor says which layout came."""
    t = hurray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))  # row-major, 0x01
    with hurray.serve({"t": t}, transcode_limit=0) as srv:
        s, p = said_hello(srv.port)
        assert struct.unpack_from("<Q", p, 8)[0] & 0x1 == 0  # no TRANSCODING advertised
        for prefs in ([0x02], [0x02, 0x01], [0xF3]):
            k = b"t"
            layouts = struct.pack("<H", len(prefs)) + b"".join(
                bytes([tag]) + (struct.pack("<H", 0) if tag >= 0xF0 else b"") for tag in prefs)
            req = struct.pack("<I", 1) + k + layouts + struct.pack("<BII", 0, 64, 0x1)
            s.sendall(frame(TENSOR_REQUEST, 21, req))
            mtype, _, p = recv_msg(s)
            assert mtype == TENSOR_DESCRIPTOR
            assert hurray.Descriptor.decode(p[:-16]).layout.name == "row_major"
            while recv_msg(s)[0] != TENSOR_DATA_END:
                pass
        s.close()


def request_with(key, prefs, flags):
    """TENSOR_REQUEST payload: tensor_key, preferred_layouts (a private tag 0xF0-0xFE
    with a u16 metadata length and its bytes), preferred_device, min_alignment, flags."""
    k = key.encode()
    layouts = struct.pack("<H", len(prefs)) + b"".join(
        bytes([tag]) + (struct.pack("<H", 2) + b"\xAB\xCD" if tag >= 0xF0 else b"")
        for tag in prefs)
    return struct.pack("<I", len(k)) + k + layouts + struct.pack("<BII", 0, 64, flags)


def fetch_raw(sock, stream, payload):
    """Sends a TENSOR_REQUEST; (layout tag name, data bytes) of the response."""
    sock.sendall(frame(TENSOR_REQUEST, stream, payload))
    mtype, got_stream, p = recv_msg(sock)
    assert (mtype, got_stream) == (TENSOR_DESCRIPTOR, stream)
    desc = hurray.Descriptor.decode(p[:-16])
    total = struct.unpack_from("<Q", p, len(p) - 16)[0]
    data = bytearray()
    while True:
        mtype, _, p = recv_msg(sock)
        if mtype == TENSOR_DATA_END:
            break
        data += p[8:]
    assert len(data) == total
    return desc.layout.name, bytes(data)


def test_conformance_layout_selection_with_transcoding():
    """§ Server Layout Selection, § On-the-Fly Transcoding, from the tables: a server with
    TRANSCODING advertises it and the layouts it produces; the stored layout without
    ALLOW_TRANSCODE, the preference with it (values preserved), the first satisfiable
    preference, and over the transcoding memory limit the next one or the stored layout."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)  # 48 bytes, row-major (0x01)
    b = np.arange(40, dtype=np.float32).reshape(4, 10)  # 160 bytes
    with hurray.serve({"a": hurray.from_numpy(a), "b": hurray.from_numpy(b)},
                      transcode_limit=100) as srv:
        s, p = said_hello(srv.port)
        assert struct.unpack_from("<Q", p, 8)[0] & 0x1 == 0x1  # TRANSCODING
        (n,) = struct.unpack_from("<H", p, 16)
        assert {0x01, 0x02} <= set(p[18:18 + n])  # supported_layouts: row- and column-major
        ALLOW = 0x1
        cases = [  # key, preferred_layouts, request_flags -> layout
            ("a", [0x02], 0, "row_major"),  # no ALLOW_TRANSCODE: rule 2
            ("a", [0x02], ALLOW, "col_major"),  # rule 1b
            ("a", [0xF3, 0x05, 0x02, 0x01], ALLOW, "col_major"),  # first satisfiable
            ("a", [0x01, 0x02], ALLOW, "row_major"),  # stored first: 1a
            ("a", [0x03], ALLOW, "row_major"),  # strided: not produced, rule 2
            ("a", [], ALLOW, "row_major"),  # no preference
            ("b", [0x02], ALLOW, "row_major"),  # 160 > 100 bytes: falls through
            ("b", [0x02, 0x01], ALLOW, "row_major"),
        ]
        for stream, (key, prefs, flags, want) in enumerate(cases, start=1):
            layout, data = fetch_raw(s, 2 * stream + 1, request_with(key, prefs, flags))
            assert layout == want, (key, prefs, flags)
            values = {"a": a, "b": b}[key]
            order = "F" if want == "col_major" else "C"
            assert data == values.tobytes(order=order), (key, prefs)
        s.close()


def test_conformance_unknown_type_oversized_and_reserved_stream():
    with hurray.serve({"t": SAMPLES["f32_row"]}) as srv:
        # an unrecognised message type: ERROR, and the stream is closed
        s, p = said_hello(srv.port)
        s.sendall(frame(0x42, 5, b"abc"))
        mtype, stream, p = recv_msg(s)
        assert mtype == ERROR and stream == 5
        assert error_of(p)[0] == E_INVALID_MESSAGE
        s.close()
        # a payload above the receiver's maximum: ERROR MESSAGE_TOO_LARGE
        s, p = said_hello(srv.port)
        (max_size,) = struct.unpack_from("<I", p, 4)
        s.sendall(struct.pack("<III", TENSOR_REQUEST, 3, max_size + 1))
        mtype, stream, p = recv_msg(s)
        assert mtype == ERROR and error_of(p)[0] == E_TOO_LARGE
        s.close()
        # stream id 0 is reserved
        s, _ = said_hello(srv.port)
        s.sendall(frame(TENSOR_REQUEST, 0, request("t")))
        assert refused(s) in (None, E_INVALID_MESSAGE)  # no stream to answer on: closed
        s.close()


def test_conformance_request_before_hello_and_version():
    with hurray.serve({"t": SAMPLES["f32_row"]}) as srv:
        # the client MUST send CLIENT_HELLO first: anything else is refused and the
        # connection closed, nothing served
        s = raw(srv.port)
        s.sendall(frame(TENSOR_REQUEST, 1, request("t")))
        assert refused(s) in (None, E_INVALID_MESSAGE)
        s.close()
        # a protocol version the server cannot speak: ERROR PROTOCOL_VERSION_MISMATCH, closed
        s = raw(srv.port)
        s.sendall(frame(CLIENT_HELLO, 1, hello(version=0)))
        mtype, _, p = recv_msg(s)
        assert mtype == ERROR and error_of(p)[0] == E_VERSION
        assert closed_soon(s)
        s.close()
        # the server still serves
        with hurray.connect(srv.url) as c:
            assert_same_tensor(SAMPLES["f32_row"], c["t"])


# ---- many clients, clients and servers that die --------------------------------------------

def test_32_concurrent_clients():
    tensors = {f"t{i}": big(256 * 1024, i) for i in range(4)}
    want = {k: np.asarray(v).tobytes() for k, v in tensors.items()}
    errors = []

    def work(i):
        try:
            with hurray.connect(s.url, timeout=10) as c:
                for k in range(3):
                    name = f"t{(i + k) % 4}"
                    if np.asarray(c[name]).tobytes() != want[name]:
                        errors.append(f"client {i}: {name} differs")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"client {i}: {e!r}")

    with hurray.serve(tensors, max_clients=32) as s:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(32)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(15)
    assert not errors and not any(th.is_alive() for th in threads)


def test_a_client_that_stops_reading_is_timed_out():
    """A client that asks for a tensor and never reads it: the server's send waits at most
    its timeout (it once blocked in sendmsg for ever), then drops the connection."""
    lines = []
    with hurray.serve({"b": big(64 << 20)}, timeout=1, log=lines.append) as s:
        sock, _ = said_hello(s.port)
        sock.sendall(frame(TENSOR_REQUEST, 3, request("b")))
        deadline = time.monotonic() + 10
        while not any("timed out" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any("timed out" in line for line in lines), lines
        sock.close()


def test_a_client_killed_mid_transfer_leaves_the_others_served():
    t = big(32 << 20)
    want = np.asarray(t).tobytes()
    with hurray.serve({"t": t}) as srv:
        # a client that asks for 32 MiB, reads a little and vanishes (RST)
        s, _ = said_hello(srv.port)
        s.sendall(frame(TENSOR_REQUEST, 1, request("t")))
        recv_msg(s)
        recv_exact(s, 4096)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        with hurray.connect(srv.url, timeout=10) as c:
            assert np.asarray(c["t"]).tobytes() == want
            assert np.asarray(c["t"]).tobytes() == want


def _serve_process(tmp_path, tensors, *extra):
    path = tmp_path / "served.hrry"
    hurray.save(path, tensors)
    p = subprocess.Popen([sys.executable, "-m", "hurray", "serve", str(path), "--port", "0",
                          *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert "hurray://" in line, (line, p.stderr.read() if p.poll() is not None else "")
    return p, line.split()[-1]


@pytest.mark.slow
def test_the_server_killed_mid_transfer_is_a_stream_error(tmp_path):
    p, url = _serve_process(tmp_path, {"big": big(128 << 20)})
    try:
        c = hurray.connect(url, timeout=10)
        result = {}

        def fetch():
            try:
                result["t"] = c["big"]
            except Exception as e:  # noqa: BLE001 - checked below
                result["e"] = e

        th = threading.Thread(target=fetch)
        th.start()
        # the request's log line: the transfer has begun (a LIST may come first; a
        # tensor this large is fetched in shards, logged as GET 'big#shard=K/N')
        lines = [p.stderr.readline()]
        while "GET 'big" not in lines[-1] and lines[-1] and len(lines) < 8:
            lines.append(p.stderr.readline())
        assert "GET 'big" in lines[-1], lines
        p.send_signal(signal.SIGKILL)
        th.join(10)
        assert not th.is_alive()
        assert isinstance(result.get("e"), hurray.StreamError), result
        with pytest.raises(hurray.StreamError):
            c.ping()  # unusable afterwards, said plainly
        c.close()
    finally:
        p.kill()
        p.wait()


@pytest.mark.slow
def test_hurray_serve_command(tmp_path):
    p, url = _serve_process(tmp_path, {"w": SAMPLES["f32_row"]}, "--transcode-limit", "48")
    try:
        with hurray.connect(url) as c:
            assert_same_tensor(SAMPLES["f32_row"], c["w"])
            got = c.get_tensor("w", layout="col_major")  # 48 bytes: within the limit
            assert got.layout.name == "col_major"
            np.testing.assert_array_equal(np.asarray(got), np.asarray(SAMPLES["f32_row"]))
        out = subprocess.run([sys.executable, "-m", "hurray", "ls", url], capture_output=True,
                             text=True, timeout=15)
        assert out.returncode == 0 and "w  " in out.stdout and "float32" in out.stdout
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0
        err = p.stderr.read()
        assert "GET 'w' 48 bytes" in err and "LIST" in err and "stopping" in err
        assert "GET 'w' 48 bytes as col_major (transcoded from row_major)" in err
    finally:
        p.kill()
        p.wait()
    # a name twice is an error at start; off loopback, a warning
    path = tmp_path / "served.hrry"
    r = subprocess.run([sys.executable, "-m", "hurray", "serve", str(path), str(path)],
                       capture_output=True, text=True, timeout=15)
    assert r.returncode == 2 and "is in both" in r.stderr
    r = subprocess.run([sys.executable, "-m", "hurray", "serve", str(path), "--transcode-limit",
                        "-1"], capture_output=True, text=True, timeout=15)
    assert r.returncode == 2 and "transcode_limit" in r.stderr
    p = subprocess.Popen([sys.executable, "-m", "hurray", "serve", str(path), "--host",
                          "0.0.0.0", "--port", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert "warning" in p.stderr.readline()
        p.send_signal(signal.SIGINT)
        assert p.wait(10) == 0
    finally:
        p.kill()
        p.wait()


# ---- a server that misbehaves ----------------------------------------------------------------

class FakeServer:
    """Answers CLIENT_HELLO properly, then replies to a request with `reply(sock)`."""

    def __init__(self, reply):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.reply = reply
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        conn, _ = self.listener.accept()
        with conn:
            recv_msg(conn)
            conn.sendall(frame(SERVER_HELLO, 1, hello()))
            mtype, stream, _ = recv_msg(conn)
            self.reply(conn, stream)
            time.sleep(0.3)

    def close(self):
        self.listener.close()
        self.thread.join(5)


def _descriptor_message(stream, t, total=None, extra=b""):
    d = t.descriptor.encode()
    n = sum(h.byte_size for h in t.buffer_handles) if total is None else total
    return frame(TENSOR_DESCRIPTOR, stream, d + extra + struct.pack("<QII", n, 0, 1))


T12 = hurray.from_numpy(np.arange(12, dtype=np.float32))


@pytest.mark.parametrize("case", [
    "truncated_frame", "truncated_header", "bad_offset", "too_many_bytes", "garbage_descriptor",
    "trailing_bytes", "oversized_frame", "data_before_descriptor", "unknown_type", "silence",
])
def test_truncated_and_corrupted_frames_are_stream_errors(case):
    data = np.arange(12, dtype=np.float32).tobytes()

    def reply(conn, stream):
        if case == "silence":
            return  # the client's timeout ends the wait
        if case == "data_before_descriptor":
            conn.sendall(frame(TENSOR_DATA, stream, struct.pack("<Q", 0) + data))
            return
        if case == "unknown_type":
            conn.sendall(frame(0x42, stream, b"zz"))
            return
        if case == "garbage_descriptor":
            conn.sendall(frame(TENSOR_DESCRIPTOR, stream, b"\x00" * 40 + struct.pack(
                "<QII", 48, 0, 1)))
            return
        if case == "trailing_bytes":
            conn.sendall(_descriptor_message(stream, T12, extra=b"\x01\x02"))
            return
        conn.sendall(_descriptor_message(stream, T12))
        if case == "truncated_frame":
            conn.sendall(frame(TENSOR_DATA, stream, struct.pack("<Q", 0) + data)[:30])
        elif case == "truncated_header":
            conn.sendall(frame(TENSOR_DATA, stream, b"")[:7])
        elif case == "bad_offset":
            conn.sendall(frame(TENSOR_DATA, stream, struct.pack("<Q", 4) + data[:44]))
        elif case == "too_many_bytes":
            conn.sendall(frame(TENSOR_DATA, stream, struct.pack("<Q", 0) + data + b"more"))
        elif case == "oversized_frame":
            conn.sendall(struct.pack("<III", TENSOR_DATA, stream, 0x7FFFFFFF))

    fake = FakeServer(reply)
    try:
        c = hurray.connect(f"hurray://127.0.0.1:{fake.port}", timeout=1)
        with pytest.raises((hurray.StreamError, hurray.InvalidDescriptorError)):
            c["x"]
        c.close()
    finally:
        fake.close()


def test_a_server_cut_inside_a_composite_breaks_the_client():
    """A composite response cut after its head: StreamError, and the client is unusable
    after it (a half-received response is never taken for the next one)."""
    head = sample_composites()["partition"]

    def reply(conn, stream):
        conn.sendall(frame(TENSOR_DESCRIPTOR, stream,
                           head.descriptor.encode() + struct.pack("<QII", 0, 0, 1)))
        conn.sendall(frame(TENSOR_DATA_END, stream))

    fake = FakeServer(reply)
    try:
        with hurray.connect(f"hurray://127.0.0.1:{fake.port}", timeout=1) as c:
            with pytest.raises(hurray.StreamError):
                c["p"]
            with pytest.raises(hurray.StreamError, match="connect again"):
                c.ping()
    finally:
        fake.close()


# ---- two hosts ------------------------------------------------------------------------------

def _run(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=10)


@pytest.mark.slow
def test_two_hosts_in_two_network_namespaces(tmp_path):
    ip = shutil.which("ip")
    if ip is None or os.geteuid() != 0:
        pytest.skip("two network namespaces need the ip command and root: not here")
    tag = f"hr{os.getpid() % 100000}"
    a, b = f"{tag}a", f"{tag}b"
    if _run(ip, "netns", "add", a).returncode != 0:
        pytest.skip("this machine does not allow network namespaces (ip netns add failed)")
    try:
        if _run(ip, "netns", "add", b).returncode != 0:
            pytest.skip("this machine does not allow a second network namespace")
        steps = [
            (ip, "link", "add", f"{tag}x", "type", "veth", "peer", "name", f"{tag}y"),
            (ip, "link", "set", f"{tag}x", "netns", a),
            (ip, "link", "set", f"{tag}y", "netns", b),
            (ip, "-n", a, "addr", "add", "10.77.0.1/24", "dev", f"{tag}x"),
            (ip, "-n", b, "addr", "add", "10.77.0.2/24", "dev", f"{tag}y"),
            (ip, "-n", a, "link", "set", f"{tag}x", "up"),
            (ip, "-n", b, "link", "set", f"{tag}y", "up"),
            (ip, "-n", a, "link", "set", "lo", "up"),
        ]
        for step in steps:
            r = _run(*step)
            if r.returncode != 0:
                pytest.skip(f"this machine does not allow a veth pair between namespaces "
                            f"({' '.join(step[1:])}: {r.stderr.strip()})")
        path = tmp_path / "w.hrry"
        hurray.save(path, {"w": big(4 << 20)})
        server = subprocess.Popen([ip, "netns", "exec", a, sys.executable, "-m", "hurray",
                                   "serve", str(path), "--host", "10.77.0.1", "--port", "0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline()
            assert "hurray://10.77.0.1:" in line, server.stderr.read()
            url = line.split()[-1]
            code = ("import hurray, numpy, sys; t = hurray.connect(sys.argv[1])['w']; "
                    "print(numpy.asarray(t).view(numpy.uint8).sum())")
            r = subprocess.run([ip, "netns", "exec", b, sys.executable, "-c", code, url],
                               capture_output=True, text=True, timeout=15)
            assert r.returncode == 0, r.stderr
            want = np.asarray(big(4 << 20)).view(np.uint8).sum()
            assert int(r.stdout) == int(want)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(10)
    finally:
        _run(ip, "netns", "del", a)
        _run(ip, "netns", "del", b)


def test_transcode_limit_is_one_budget_for_every_connection():
    """The transcoding limit bounds the copies held by all connections together (server
    memory does not grow with the clients): while one connection's transcoded copy is being
    sent, another's request falls through to the stored layout; once that response has
    been sent (its client idle, still connected), the budget is whole again."""
    n = 8 << 20  # float32 elements: 32 MiB, far more than the sockets' buffers
    t = hurray.from_numpy(np.arange(n, dtype=np.float32).reshape(2048, 4096))
    with hurray.serve({"t": t}, transcode_limit=32 << 20) as srv, \
            hurray.connect(srv.url, timeout=10, parallel=1) as b:
        a, _ = said_hello(srv.port)
        a.settimeout(10)
        a.sendall(frame(TENSOR_REQUEST, 3, request_with("t", [0x02], 0x1)))
        mtype, _, p = recv_msg(a)  # the copy is made and holds the whole budget
        assert mtype == TENSOR_DESCRIPTOR
        assert hurray.Descriptor.decode(p[:-16]).layout.name == "col_major"
        got = b.get_tensor("t", layout="col_major")  # nothing left: as stored
        assert got.layout.name == "row_major"
        assert np.asarray(got)[2047, 4095] == n - 1
        while recv_msg(a)[0] != TENSOR_DATA_END:  # a's response is sent; a stays open
            pass
        deadline = time.monotonic() + 5
        while True:
            got = b.get_tensor("t", layout="col_major")
            if got.layout.name == "col_major" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert got.layout.name == "col_major"
        np.testing.assert_array_equal(np.asarray(got), np.asarray(t))
        a.close()
