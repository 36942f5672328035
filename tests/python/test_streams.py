"""Streams from Python: hurray.StreamWriter and hurray.StreamReader
(docs/impl/python-bindings.md § Streaming, § Error Handling of the specification;
docs/internals/decisions.md § Streaming format, § Limits, § Stream transports, § Composites in
streams)."""

import errno
import gc
import io
import os
import socket
import sys
import struct
import threading
import time

import pytest

import hurray

np = pytest.importorskip("numpy")

import samples  # noqa: E402
from conftest import collect  # noqa: E402

SAMPLES = samples.sample_tensors()
COMPOSITES = samples.sample_composites()
ITEMS = list(SAMPLES.items()) + list(COMPOSITES.items())


def stream_of(*objs, **kw):
    w = hurray.StreamWriter(**kw)
    for o in objs:
        w.write(o)
    w.finish()
    return w.getvalue()


def run_threads(*targets, timeout=60):
    """Runs each target in its own thread; re-raises the first failure. A
    thread still running after `timeout` means a deadlock (a blocking call
    that kept the GIL)."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # reported in the main thread
                errors.append(e)
        return run
    threads = [threading.Thread(target=wrap(t), daemon=True) for t in targets]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout)
        assert not th.is_alive(), "deadlock: a stream call kept the GIL"
    if errors:
        raise errors[0]


# ---- round trips ---------------------------------------------------------------------------

def test_every_layout_scheme_and_composite_round_trips_in_memory():
    data = stream_of(*[o for _, o in ITEMS])
    got = list(hurray.StreamReader(data))
    assert len(got) == len(ITEMS)
    for (name, want), have in zip(ITEMS, got):
        samples.assert_same(want, have)
        assert type(have) is type(want), name


def test_composites_are_one_item():
    data = stream_of(COMPOSITES["nested"], SAMPLES["f32_row"])
    got = list(hurray.StreamReader(data))
    assert [type(g) for g in got] == [hurray.Composite, hurray.Tensor]
    nested = got[0]
    assert isinstance(nested.members[1], hurray.Composite)
    assert nested.members[1].member_roles == ("base", "correction")
    samples.assert_same(COMPOSITES["nested"], nested)


def test_frames_are_descriptor_then_buffers():
    t = SAMPLES["q_channel"]
    data = stream_of(t)
    d = t.descriptor.encode()
    assert data == d + b"".join(samples.buffer_bytes(t))


def test_paths_and_descriptors(tmp_path):
    p = tmp_path / "s.hrrs"
    with hurray.StreamWriter(p) as w:
        for _, o in ITEMS:
            w.write(o)
    assert p.read_bytes() == stream_of(*[o for _, o in ITEMS])
    for src in (p, str(p)):
        got = list(hurray.StreamReader(src))
        assert len(got) == len(ITEMS)
    fd = os.open(p, os.O_RDONLY)
    try:
        with hurray.StreamReader(fd) as r:
            samples.assert_same(ITEMS[0][1], next(r))
        os.fstat(fd)  # the caller's descriptor is still open
    finally:
        os.close(fd)
    with pytest.raises(hurray.FileError) as e:
        hurray.StreamReader(tmp_path / "missing.hrrs")
    assert isinstance(e.value, OSError) and e.value.errno == errno.ENOENT
    assert e.value.filename == tmp_path / "missing.hrrs"


def test_file_objects(tmp_path):
    p = tmp_path / "f.hrrs"
    with open(p, "wb") as f:
        f.write(b"JUNK!")  # buffered by Python: flushed before the stream's bytes
        with hurray.StreamWriter(f) as w:
            w.write(SAMPLES["csr"])
        f.write(b"tail")
    raw = p.read_bytes()
    assert raw.startswith(b"JUNK!") and raw.endswith(b"tail")
    with open(p, "rb") as f:
        assert f.read(5) == b"JUNK!"  # Python read ahead; the reader starts at position 5
        r = hurray.StreamReader(f)
        samples.assert_same(SAMPLES["csr"], next(r))
        with pytest.raises(hurray.StreamError):
            next(r)  # "tail" is a truncated descriptor


def test_bytes_like_sources():
    data = stream_of(SAMPLES["f32_row"], SAMPLES["coo"])
    for src in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        got = list(hurray.StreamReader(src))
        samples.assert_same(SAMPLES["coo"], got[1])


def test_memory_source_zero_copy_where_aligned():
    t = hurray.zeros((64,), dtype="float32")  # owned: declares alignment 64
    np.asarray(t)[:] = np.arange(64)
    data = stream_of(t)
    dlen = len(t.descriptor.encode())
    room = np.zeros(len(data) + 128, np.uint8)
    start = (-(room.ctypes.data + dlen)) % 64  # buffer 0 lands on a 64-byte boundary
    room[start:start + len(data)] = np.frombuffer(data, np.uint8)
    src = room[start:start + len(data)]
    got = next(iter(hurray.StreamReader(src)))
    addr = np.asarray(got).ctypes.data
    assert room.ctypes.data <= addr < room.ctypes.data + room.size  # a view, not a copy
    del room, src
    collect()
    assert np.asarray(got).tolist() == list(range(64))  # the view keeps the bytes alive
    ro = next(iter(hurray.StreamReader(data)))  # bytes: read-only views or copies
    assert np.asarray(ro).tolist() == list(range(64))


def test_transport_errors():
    with pytest.raises(TypeError, match="getvalue"):
        hurray.StreamReader(io.BytesIO(b""))
    with pytest.raises(TypeError, match="getvalue"):
        hurray.StreamWriter(io.BytesIO())
    with pytest.raises(TypeError):
        hurray.StreamReader(3.5)
    with pytest.raises(ValueError):
        hurray.StreamReader(-1)
    with pytest.raises(hurray.StreamError):
        hurray.StreamWriter(987654)  # not an open descriptor


def test_empty_stream():
    assert list(hurray.StreamReader(b"")) == []
    assert stream_of() == b""


# ---- the writer -----------------------------------------------------------------------------

def test_writer_lifecycle():
    w = hurray.StreamWriter()
    w.write(SAMPLES["f32_row"])
    first = w.getvalue()
    assert first == w.getvalue()  # repeatable
    assert w.offset == len(first) and not w.finished
    w.finish()
    w.finish()  # idempotent
    assert w.finished and w.getvalue() == first
    with pytest.raises(hurray.StreamError, match="finished"):
        w.write(SAMPLES["f32_row"])
    w.close()
    assert w.getvalue() == first
    with hurray.StreamWriter() as w2:
        w2.write(SAMPLES["bool"])
    assert w2.finished
    w2.finish()
    with pytest.raises(TypeError, match="not str"):
        hurray.StreamWriter().write("not a tensor")  # arrays are taken, as save takes them


def test_getvalue_refused_with_a_destination(tmp_path):
    with hurray.StreamWriter(tmp_path / "x") as w:
        with pytest.raises(hurray.StreamError, match="destination"):
            w.getvalue()


def test_the_callers_descriptor_stays_open():
    r, wfd = os.pipe()
    try:
        with hurray.StreamWriter(wfd) as w:
            w.write(SAMPLES["f32_row"])
        os.write(wfd, b"")  # still open
        os.close(wfd)
        got = list(hurray.StreamReader(r))
        assert len(got) == 1
    finally:
        os.close(r)


def test_writing_to_a_closed_pipe_is_a_stream_error():
    r, wfd = os.pipe()
    os.close(r)
    try:
        w = hurray.StreamWriter(wfd)
        with pytest.raises(hurray.StreamError) as e:
            w.write(SAMPLES["f32_row"])  # EPIPE, not SIGPIPE
        assert e.value.status == "ERR_IO"
        with pytest.raises(hurray.StreamError):
            w.write(SAMPLES["f32_row"])  # a torn frame fails the writer
    finally:
        os.close(wfd)


# ---- pipes and sockets, across threads ---------------------------------------------------------

def test_pipe_between_threads_releases_the_gil():
    """1 MiB tensors through a 64 KiB pipe: the writer blocks in C while the
    reader, another Python thread, drains the pipe. If either kept the GIL the
    two would deadlock."""
    big = [hurray.from_numpy(np.full(1 << 18, i, np.float32)) for i in range(12)]
    r, wfd = os.pipe()
    got = []

    def write():
        with hurray.StreamWriter(wfd) as w:
            for t in big:
                w.write(t)
            w.write(COMPOSITES["nested"])
        os.close(wfd)

    def read():
        for item in hurray.StreamReader(r):
            got.append(item)
        os.close(r)
    run_threads(write, read)
    assert len(got) == 13
    for i, t in enumerate(got[:12]):
        assert (np.asarray(t) == i).all()
    samples.assert_same(COMPOSITES["nested"], got[12])


def test_socketpair_between_threads():
    a, b = socket.socketpair()
    got = []

    def write():
        with hurray.StreamWriter(a, cross_machine=True) as w:
            for _, o in ITEMS:
                w.write(o)
        a.shutdown(socket.SHUT_WR)  # the caller's socket is still usable

    def read():
        with hurray.StreamReader(b, cross_machine=True) as rd:
            got.extend(rd)
    try:
        run_threads(write, read)
    finally:
        a.close()
        b.close()
    assert len(got) == len(ITEMS)
    for (_, want), have in zip(ITEMS, got):
        samples.assert_same(want, have)


def test_an_item_is_yielded_as_soon_as_it_has_arrived():
    a, b = socket.socketpair()
    first_seen = threading.Event()
    order = []

    def write():
        with hurray.StreamWriter(a) as w:
            w.write(SAMPLES["f32_row"])
            order.append("wrote 1")
            assert first_seen.wait(20), "the reader never yielded the first tensor"
            w.write(SAMPLES["csr"])
            order.append("wrote 2")
        a.shutdown(socket.SHUT_WR)

    def read():
        for i, item in enumerate(hurray.StreamReader(b)):
            order.append(f"read {i + 1}")
            first_seen.set()
    try:
        run_threads(write, read)
    finally:
        a.close()
        b.close()
    # the first tensor was read before the second was written (the writer waited;
    # "wrote 1" and "read 1" may be recorded in either order)
    assert sorted(order[:2]) == ["read 1", "wrote 1"]
    assert sorted(order[2:]) == ["read 2", "wrote 2"]


def test_partial_reads():
    data = stream_of(*[o for _, o in ITEMS[:8]], COMPOSITES["overlay"])
    a, b = socket.socketpair()

    def dribble():
        for i in range(0, len(data), 7):
            a.sendall(data[i:i + 7])
            if i % 700 == 0:
                time.sleep(0.001)
        a.shutdown(socket.SHUT_WR)
    got = []
    try:
        run_threads(dribble, lambda: got.extend(hurray.StreamReader(b)))
    finally:
        a.close()
        b.close()
    assert len(got) == 9
    samples.assert_same(COMPOSITES["overlay"], got[-1])


def test_a_reader_waiting_on_its_transport_releases_the_gil():
    r, wfd = os.pipe()
    reader = hurray.StreamReader(r)
    got, errors, ticks = [], [], [0]

    def read():
        try:
            got.extend(reader)
        except hurray.StreamError as e:
            errors.append(e)
    th = threading.Thread(target=read, daemon=True)
    th.start()
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:  # Python runs while the reader waits
        ticks[0] += 1
    assert ticks[0] > 1000
    # a second caller is refused while the first waits
    with pytest.raises(RuntimeError, match="another thread"):
        next(reader)
    # close() wakes the waiting reader: it ends with StreamError, never hangs
    reader.close()
    th.join(20)
    assert not th.is_alive()
    assert got == [] and len(errors) == 1 and "closed by another thread" in str(errors[0])
    assert reader.closed and list(reader) == []
    os.close(wfd)
    os.close(r)


def _blocked_mid_frame(make_pair, cut):
    """A reader thread blocked inside a frame (the first `cut` bytes sent), then
    closed from this thread: it must wake and raise StreamError."""
    data = stream_of(SAMPLES["f32_row"], SAMPLES["csr"])
    rd, wr, send, close_both = make_pair()
    reader = hurray.StreamReader(rd)
    outcome = []

    def read():
        try:
            for item in reader:
                outcome.append(item)
        except hurray.StreamError as e:
            outcome.append(e)
    th = threading.Thread(target=read, daemon=True)
    th.start()
    send(data[:cut])
    time.sleep(0.2)  # the reader has consumed what there is and waits for the rest
    t0 = time.monotonic()
    reader.close()
    th.join(10)
    woke = time.monotonic() - t0
    close_both()
    assert not th.is_alive(), "close() did not wake the blocked reader"
    assert woke < 5
    assert isinstance(outcome[-1], hurray.StreamError)
    assert "closed by another thread" in str(outcome[-1])


def _pipe_pair():
    r, w = os.pipe()
    return r, w, lambda b: os.write(w, b), lambda: (os.close(r), os.close(w))


def _socket_pair():
    a, b = socket.socketpair()
    return b, a, a.sendall, lambda: (a.close(), b.close())


@pytest.mark.skipif(sys.platform == "win32", reason="a blocked read is not woken on Windows")
@pytest.mark.parametrize("pair", [_pipe_pair, _socket_pair], ids=["pipe", "socket"])
@pytest.mark.parametrize("cut", [10, 60, 200])  # inside the header, the descriptor, the data
def test_close_wakes_a_reader_blocked_mid_frame(pair, cut):
    _blocked_mid_frame(pair, cut)


# ---- limits ---------------------------------------------------------------------------------

def test_limits():
    t = SAMPLES["q_channel"]
    data = stream_of(t)
    dlen = len(t.descriptor.encode())
    assert len(list(hurray.StreamReader(data, max_descriptor_bytes=dlen))) == 1
    with pytest.raises(hurray.StreamError, match="max_descriptor_bytes") as e:
        list(hurray.StreamReader(data, max_descriptor_bytes=dlen - 1))
    assert e.value.status == "ERR_STREAM_LIMIT"
    biggest = max(h.byte_size for h in t.buffer_handles)
    assert len(list(hurray.StreamReader(data, max_buffer_bytes=biggest))) == 1
    with pytest.raises(hurray.StreamError, match="max_buffer_bytes"):
        list(hurray.StreamReader(data, max_buffer_bytes=biggest - 1))
    assert len(list(hurray.StreamReader(data, max_descriptor_bytes=None,
                                        max_buffer_bytes=None))) == 1


def test_composite_depth_limit():
    nested = stream_of(COMPOSITES["nested"])  # two heads deep
    flat = stream_of(COMPOSITES["overlay"])
    assert len(list(hurray.StreamReader(nested, max_composite_depth=2))) == 1
    with pytest.raises(hurray.StreamError, match="depth"):
        list(hurray.StreamReader(nested, max_composite_depth=1))
    with pytest.raises(hurray.StreamError):
        list(hurray.StreamReader(flat, max_composite_depth=0))
    assert len(list(hurray.StreamReader(stream_of(SAMPLES["csr"]), max_composite_depth=0))) == 1


@pytest.mark.parametrize("kw, exc", [
    ({"max_composite_depth": 9}, ValueError), ({"max_descriptor_bytes": -1}, ValueError),
    ({"max_buffer_bytes": "1"}, TypeError), ({"max_buffer_bytes": True}, TypeError),
])
def test_bad_limits(kw, exc):
    with pytest.raises(exc):
        hurray.StreamReader(b"", **kw)
    with pytest.raises(TypeError):
        hurray.StreamReader(b"", 100)  # keyword-only


def test_a_claimed_buffer_is_bounded_before_anything_is_allocated():
    t = SAMPLES["f32_row"]
    wire = bytearray(t.descriptor.encode())
    h = t.buffer_handles[0]
    at = bytes(wire).index(struct.pack("<QI", h.byte_size, h.alignment))
    wire[at:at + 8] = struct.pack("<Q", 1 << 40)  # claims a 1 TiB buffer
    r, wfd = os.pipe()
    os.write(wfd, bytes(wire))  # and never sends it
    try:
        with pytest.raises(hurray.StreamError, match="max_buffer_bytes"):
            next(hurray.StreamReader(r, max_buffer_bytes=1 << 30))
        with pytest.raises(hurray.StreamError):
            next(hurray.StreamReader(bytes(wire)))  # memory: more than the bytes left
    finally:
        os.close(r)
        os.close(wfd)


# ---- truncation -----------------------------------------------------------------------------

def test_truncation_at_every_byte():
    objs = [SAMPLES["f32_row"], COMPOSITES["overlay"], SAMPLES["csr"]]
    data = stream_of(*objs)
    boundaries, n = {0: 0}, 0
    for i, o in enumerate(objs):
        n += len(stream_of(o))
        boundaries[n] = i + 1
    assert n == len(data)
    for k in range(len(data) + 1):
        r = hurray.StreamReader(data[:k])
        if k in boundaries:  # on a frame boundary: a clean, shorter stream
            assert len(list(r)) == boundaries[k], k
        else:
            with pytest.raises(hurray.StreamError):
                list(r)
            with pytest.raises(hurray.StreamError):
                next(r)  # the error is final


def test_truncation_over_a_pipe():
    data = stream_of(SAMPLES["q_block"], SAMPLES["coo"])
    for cut in (1, 10, len(data) - 1):
        r, wfd = os.pipe()
        os.write(wfd, data[:cut])
        os.close(wfd)
        with pytest.raises(hurray.StreamError, match="stream ends|truncat"):
            list(hurray.StreamReader(r))
        os.close(r)


# ---- cross-machine and relays ---------------------------------------------------------------

def _event_synced_tensor():
    dev = hurray.Tensor(samples.buf(16), "float32", (4,), device=hurray.Device("cuda"))
    wire = bytearray(dev.descriptor.encode())
    h = dev.buffer_handles[0]
    at = bytes(wire).index(struct.pack("<QIBBBB", 16, h.alignment, 0x01, 0x00, 0x00, 0))
    wire[at + 13] = 0x01  # sync_mode = event
    return hurray._hurray._tensor_from_descriptor(hurray.Descriptor.decode(bytes(wire)),
                                                  [samples.buf(16)])


def test_non_producer_synced_buffers_relay_unless_cross_machine():
    t = _event_synced_tensor()
    data = stream_of(t)  # relayed unchanged
    got = next(iter(hurray.StreamReader(data)))
    assert got.sync_mode == "event" and got.device == hurray.Device("cuda")
    with pytest.raises(hurray.StreamError) as e:
        hurray.StreamWriter(cross_machine=True).write(t)
    assert e.value.status == "ERR_CROSS_MACHINE"
    with pytest.raises(hurray.StreamError) as e:
        list(hurray.StreamReader(data, cross_machine=True))
    assert e.value.status == "ERR_CROSS_MACHINE"
    g = hurray.Composite("group", (1,), "float32", [t])
    with pytest.raises(hurray.StreamError):
        hurray.StreamWriter(cross_machine=True).write(g)


def test_private_layouts_relay_with_permissive():
    t = hurray.Tensor([samples.buf(8), samples.buf(3)], "uint8", (8,),
                      layout=hurray.PrivateExtensionLayout(0xF3, 9, b"opaque"))
    data = stream_of(t)
    got = next(iter(hurray.StreamReader(data, permissive=True)))
    assert got.layout == t.layout and samples.buffer_bytes(got) == samples.buffer_bytes(t)


def test_reader_close_and_context_manager():
    data = stream_of(SAMPLES["f32_row"], SAMPLES["bf16"])
    r = hurray.StreamReader(data)
    assert iter(r) is r
    next(r)
    r.close()
    r.close()
    assert r.closed and list(r) == [] and next(r, "end") == "end"
    with hurray.StreamReader(data) as r2:
        next(r2)
    assert r2.closed and list(r2) == []
    gc.collect()


@pytest.mark.parametrize("payload, strict_ok", [
    (bytes([0xF3, 0x01, 0x00, 0x00, 0xAA, 0xBB]), True),  # a private scheme
    (bytes([0x30, 0x01, 0x00, 0x00]), False),  # an unassigned one: relay mode only
])
def test_opaque_quantization_relays(payload, strict_ok, tmp_path):
    t = hurray.Tensor(samples.buf(8), "int8", (8,),
                      quantization=hurray.OpaqueQuantization(payload))
    data = stream_of(t)
    path = tmp_path / "q.hrry"
    hurray.save(path, {"q": t})
    readers = [lambda p: next(iter(hurray.StreamReader(data, permissive=p))),
               lambda p: hurray.load(path, permissive=p)["q"]]
    for read in readers:
        samples.assert_same_tensor(t, read(True))
        if strict_ok:
            samples.assert_same_tensor(t, read(False))
        else:
            with pytest.raises(hurray.InvalidDescriptorError, match="scheme"):
                read(False)
