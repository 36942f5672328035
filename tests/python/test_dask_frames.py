"""The Dask serializers of hurray/_dask.py without a cluster: the frames a tensor
becomes (zero-copy on the sender, the largest buffer first with its slack frame),
the in-place realignment on the receiver through Dask's real TCP comm, frames
deserialized twice or passed on after a move, damaged frames refused by name,
and registration whichever of hurray and distributed is imported first."""

import asyncio
import pathlib
import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")

import hurray  # noqa: E402
import mp_workers as w  # noqa: E402
from hurray import _dask  # noqa: E402
from distributed.protocol import deserialize, serialize, to_serialize  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
BIG = 1 << 20  # float32 elements: a 4 MiB buffer, over SLACK_MIN


def addr(b):
    return _dask._hurray._buffer_address(b)[0]


def big(seed=0, n=BIG):
    return hurray.from_numpy(np.arange(n, dtype=np.float32) * 3 + seed)


def test_the_serializers_are_registered_here():
    from distributed.protocol.serialize import dask_deserialize, dask_serialize
    for cls in (hurray.Tensor, hurray.Composite):
        assert dask_serialize.dispatch(cls) is _dask.dumps
        assert dask_deserialize.dispatch(cls) is _dask.loads


def test_sender_frames_are_views_of_the_tensor():
    t = big()
    header, frames = serialize(t)
    assert header["serializer"] == "dask"
    sub = header["sub-header"]
    n = t.buffer_handles[0].byte_size
    assert sub["slack"] == _dask.SLACK and sub["order"] == [0]
    pik, data, slack = frames
    assert len(pik) < 1024  # the descriptor and the rebuild call, not the data
    assert addr(data) == t.data_ptr() and memoryview(data).nbytes == n
    assert addr(slack) == t.data_ptr() + n - _dask.SLACK  # its own last bytes: no copy
    assert memoryview(slack).obj is memoryview(data).obj  # Dask reads them into one block


def test_the_largest_buffer_goes_first_and_small_ones_get_no_slack():
    values = np.arange(BIG, dtype=np.float32)
    indptr = np.array([0, BIG], np.uint64)
    csr = hurray.Tensor([values, np.arange(BIG, dtype=np.uint64), indptr], "float32",
                        (1, BIG), layout=hurray.CsrLayout(nnz=BIG))
    header, frames = serialize(csr)
    sub = header["sub-header"]
    assert sub["order"] == [1, 0, 2]  # 8 MiB of indices, 4 MiB of values, 16 bytes
    assert [memoryview(f).nbytes for f in frames[1:]] == [8 * BIG, _dask.SLACK, 4 * BIG, 16]
    assert w.fingerprint(deserialize(header, frames)) == w.fingerprint(csr)
    small = w.dense(1000)
    h2, f2 = serialize(small)
    assert h2["sub-header"]["slack"] == 0 and len(f2) == 2


@pytest.mark.parametrize("kind", sorted(w.kinds(3)))
def test_every_kind_round_trips(kind):
    t = w.kinds(3)[kind]
    header, frames = serialize(t)
    assert header["serializer"] == "dask"
    assert w.fingerprint(deserialize(header, frames)) == w.fingerprint(t)


def block_frames(t, offset, readonly=False):
    """The frames of `t` as Dask's TCP comm leaves them: buffer and slack end to end
    in one numpy block, the buffer `offset` bytes past a 64-byte boundary."""
    header, frames = serialize(t)
    pik, data, slack = frames
    n = memoryview(data).nbytes
    raw = np.empty(n + 2 * 64 + _dask.SLACK + offset, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    blk = raw[start:start + n + _dask.SLACK]
    blk[:n] = np.frombuffer(data, np.uint8)
    blk[n:] = np.frombuffer(slack, np.uint8)
    if readonly:
        blk.flags.writeable = False
    mv = memoryview(blk)
    return header, [pik, mv[:n], mv[n:]], blk


@pytest.mark.parametrize("offset", [0, 8, 16, 48, 63])
def test_the_receiver_moves_the_buffer_to_a_boundary_in_its_block(offset):
    t = big(offset)
    header, frames, blk = block_frames(t, offset)
    before = dict(_dask.stats)
    got = deserialize(header, frames)
    assert np.array_equal(np.asarray(got), np.asarray(t))
    assert got.data_ptr() % 64 == 0
    lo = blk.ctypes.data
    assert lo <= got.data_ptr() < lo + 64  # inside the received block: no second block
    assert _dask.stats["moved"] - before["moved"] == (1 if offset else 0)
    assert _dask.stats["copied"] == before["copied"]
    assert not got.readonly


@pytest.mark.parametrize("offset", [0, 16, 40])
def test_frames_deserialized_twice_or_passed_on_after_a_move(offset):
    t = big(7)
    header, frames, blk = block_frames(t, offset)
    first = deserialize(header, frames)
    again = deserialize(header, frames)  # the same frames: the record says where the data is
    assert np.array_equal(np.asarray(again), np.asarray(t))
    assert again.data_ptr() == first.data_ptr()
    # passed on to another process: the same bytes, now in a block at another offset ...
    n = memoryview(frames[1]).nbytes
    for other in (0, 24, 56):
        raw = np.empty(n + _dask.SLACK + 128, np.uint8)
        s = (-raw.ctypes.data) % 64 + other
        moved = raw[s:s + n + _dask.SLACK]
        moved[:n] = np.frombuffer(frames[1], np.uint8)
        moved[n:] = np.frombuffer(frames[2], np.uint8)
        mv = memoryview(moved)
        there = deserialize(header, [frames[0], mv[:n], mv[n:]])
        assert np.array_equal(np.asarray(there), np.asarray(t)), other
    # ... or as separate objects, as another comm may hand them over
    apart = deserialize(header, [bytes(frames[0]), bytes(frames[1]), bytes(frames[2])])
    assert np.array_equal(np.asarray(apart), np.asarray(t))


def test_frames_not_end_to_end_are_copied_once_correctly():
    t = big(2)
    header, frames = serialize(t)
    pik, data, slack = frames
    before = dict(_dask.stats)
    got = deserialize(header, [pik, bytearray(data), bytearray(slack)])
    assert np.array_equal(np.asarray(got), np.asarray(t)) and got.data_ptr() % 64 == 0
    assert _dask.stats["moved"] == before["moved"]
    ro = hurray.from_numpy(np.arange(BIG, dtype=np.float32))
    h, f, blk = block_frames(ro, 16, readonly=True)  # a read-only block is never written
    snapshot = blk.copy()
    back = deserialize(h, f)
    assert np.array_equal(np.asarray(back), np.asarray(ro))
    assert np.array_equal(blk, snapshot)


def test_a_read_only_tensor_arrives_read_only(tmp_path):
    p = tmp_path / "r.hrry"
    hurray.save(p, {"w": np.arange(BIG, dtype=np.float32)})
    with hurray.open(p, mmap="r") as f:
        t = f["w"]
        assert t.readonly
        header, frames, _ = block_frames(t, 16)
        got = deserialize(header, frames)
        assert got.readonly and np.array_equal(np.asarray(got), np.asarray(t))


def test_damaged_frames_are_refused_by_name():
    t = big(1)
    header, frames, blk = block_frames(t, 16)
    n = memoryview(frames[1]).nbytes
    blk[n + 5] ^= 1  # one bit of the slack
    with pytest.raises(_dask.FramesError, match="slack frame .* neither the sender's bytes"):
        _dask.loads(header["sub-header"], frames)
    header, frames, _ = block_frames(t, 0)
    sub = header["sub-header"]
    cases = [
        ({**sub, "hurray": 99}, frames, "version 99"),
        ({**sub, "order": [1]}, frames, "'order' is not a permutation"),
        ({**sub, "order": [True]}, frames, "'order' is not a permutation"),
        ({**sub, "writeable": [1]}, frames, "'writeable' is not 1 booleans"),
        ({**sub, "slack": 64}, frames, "'slack' is 64"),
        ({**sub, "digest": b"x"}, frames, "'digest' is not 16 bytes"),
        (sub, frames[:2], "2 frames where the sub-header describes 3"),
        (sub, [frames[0], frames[1], bytes(64)], "slack frame holds 64 bytes"),
        ("nonsense", frames, "sub-header version 'nonsense'"),
    ]
    for s, f, msg in cases:
        with pytest.raises(_dask.FramesError, match=msg):
            _dask.loads(s, f)


def test_the_move_helper_checks_its_ranges():
    b = bytearray(range(100))
    _dask._hurray._move_within(b, 1, 0, 99)
    assert b[1:] == bytearray(range(99))
    for args in ((b, 2, 0, 99), (b, 0, 2, 99), (b, 0, 0, 101), (b, -1, 0, 1)):
        with pytest.raises(ValueError):
            _dask._hurray._move_within(*args)
    with pytest.raises(BufferError):
        _dask._hurray._move_within(b"read only", 0, 1, 2)


@pytest.mark.parametrize("to,frm", [(48, 0), (0, 48), (1, 0), (0, 4095), (4095, 0),
                                    (0, 4096), (100000, 3)])
def test_large_moves_split_in_two_threads_move_every_byte(to, frm):
    n = (16 << 20) + 4096 + 13  # over the two-thread threshold, an odd length
    raw = np.random.default_rng(to + frm).integers(0, 256, n + 200000, np.uint8)
    want = raw.copy()
    want[to:to + n] = raw[frm:frm + n]
    _dask._hurray._move_within(raw, to, frm, n)
    assert np.array_equal(raw, want)


def tcp_roundtrip(obj, compression=None):
    """obj sent through Dask's TCP comm on this machine and read back (deserialized);
    `compression` as two workers agree on it in their handshake."""
    from distributed.comm import connect, listen

    async def go():
        got = asyncio.get_running_loop().create_future()

        async def handle(comm):
            got.set_result(await comm.read())
            await comm.close()

        listener = await listen("tcp://127.0.0.1:0", handle)
        async with listener:
            comm = await connect(listener.contact_address)
            if compression is not None:
                comm.handshake_options = {**comm.handshake_options, "compression": compression}
            await comm.write({"op": "data", "x": to_serialize(obj)})
            msg = await asyncio.wait_for(got, 60)
            await comm.close()
        return msg["x"]

    return asyncio.run(go())


@pytest.mark.parametrize("n", [BIG, 5 << 20, 17 << 20])  # 4, 20 and 68 MiB (sharded)
def test_through_the_tcp_comm_the_receiver_copies_nothing(n):
    t = big(5, n)
    before = dict(_dask.stats)
    got = tcp_roundtrip(t)
    assert np.array_equal(np.asarray(got), np.asarray(t))
    assert got.data_ptr() % 64 == 0 and got.data_ptr() != t.data_ptr()
    assert _dask.stats["copied"] == before["copied"]
    assert _dask.stats["wrapped"] == before["wrapped"] + 1


def test_through_the_tcp_comm_every_kind():
    for kind, t in w.kinds(4).items():
        assert w.fingerprint(tcp_roundtrip(t)) == w.fingerprint(t), kind


@pytest.mark.slow  # a child interpreter
@pytest.mark.parametrize("first", ["hurray", "distributed"])
def test_registered_whichever_is_imported_first(first):
    second = "distributed" if first == "hurray" else "hurray"
    code = (f"import {first}, {second}, hurray._dask as d\n"
            "from distributed.protocol.serialize import dask_serialize, dask_deserialize\n"
            "import hurray\n"
            "assert dask_serialize.dispatch(hurray.Tensor) is d.dumps\n"
            "assert dask_deserialize.dispatch(hurray.Composite) is d.loads\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


@pytest.mark.slow  # a child interpreter
def test_importing_hurray_imports_no_dask():
    code = "import sys, hurray; print('distributed' in sys.modules, 'dask' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["False", "False"], r.stderr


def test_the_watch_registers_after_the_module_runs_whatever_its_loader(monkeypatch):
    import importlib.machinery
    import types

    ran, registered = [], []

    class Plain:  # a loader with a __dict__: its exec_module is wrapped for this module
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            ran.append(module.__name__)

    class Slotted:  # one without (as zipimport's): the spec gets a delegating loader
        __slots__ = ()

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            ran.append(module.__name__)

    class Finder:
        def __init__(self, loader):
            self.loader = loader

        def find_spec(self, name, path=None, target=None):
            if name != _dask.SERIALIZE_MODULE:
                return None
            return importlib.machinery.ModuleSpec(name, self.loader)

    monkeypatch.setattr(_dask, "register", registered.append)
    for loader in (Plain(), Slotted()):
        watch = _dask._Watch()
        monkeypatch.setattr(sys, "meta_path", [watch, Finder(loader)])
        assert watch.find_spec("some.other.module") is None and sys.meta_path[0] is watch
        spec = watch.find_spec(_dask.SERIALIZE_MODULE)
        assert watch not in sys.meta_path  # one shot
        module = types.ModuleType(_dask.SERIALIZE_MODULE)
        spec.loader.exec_module(module)
        assert ran[-1] == _dask.SERIALIZE_MODULE and registered[-1] is module
        if isinstance(loader, Plain):
            assert spec.loader is loader and "exec_module" not in vars(loader)  # restored
        else:
            assert isinstance(spec.loader, _dask._After)


def test_through_the_tcp_comm_with_compression_the_values_still_arrive():
    # Dask compresses frames that compress well when a compressor is configured; the
    # frames then arrive decompressed, apart: the receiver copies, correctly
    t = hurray.from_numpy(np.zeros(BIG, np.float32) + 1.5)  # compresses very well
    before = dict(_dask.stats)
    got = tcp_roundtrip(t, compression="zlib")
    assert np.array_equal(np.asarray(got), np.asarray(t)) and got.data_ptr() % 64 == 0
    assert _dask.stats["moved"] == before["moved"]  # apart: nothing to move in place
