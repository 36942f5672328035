"""Pickling (docs/guide/processes.md): every tensor kind, composite, descriptor and value
class round-trips through every protocol; protocol 5 sends the buffers out of band
without copying them and wraps what it is given without copying when aligned;
device memory is refused; hurray.File pickles by path; the tensors of a file
opened with pickle="reference" pickle as a reference to it."""

import copy
import os
import pickle

import numpy as np
import pytest

import hurray
import samples
from conftest import aligned_array

SAMPLES = samples.sample_tensors()
COMPOSITES = samples.sample_composites()
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def address(buffer):
    return np.frombuffer(memoryview(buffer).cast("B"), np.uint8).ctypes.data if \
        memoryview(buffer).nbytes else 0


def buffer_addresses(t):
    return [np.asarray(t.buffer(i)).ctypes.data for i in range(t.buffer_count)
            if t.buffer_handles[i].byte_size]


def extra_tensors():
    s = {}
    s["private"] = hurray.Tensor([samples.buf(8), samples.buf(3)], "uint8", (8,),
                                 layout=hurray.PrivateExtensionLayout(0xF3, 9, b"opaque"))
    s["unknown"] = hurray.Tensor(None, "float32", (4,),
                                 layout=hurray.UnknownLayout(0x0C, bytes(8)))
    s["on_cuda_3"] = hurray.Tensor(samples.buf(16), "float32", (4,),
                                   device=hurray.Device("cuda", 3))
    s["pinned"] = hurray.Tensor(samples.buf(16), "float32", (4,),
                                device=hurray.Device("cuda", 1, "host_pinned"))
    s["quantized_int4"] = hurray.quantize(np.linspace(-1, 1, 64, dtype=np.float32), "int4",
                                          block_size=32)
    s["opaque_quant"] = hurray.Tensor(samples.buf(8), "int8", (8,),
                                      quantization=hurray.OpaqueQuantization(
                                          bytes([0xF3, 0x01, 0x00, 0x00, 0xAA, 0xBB])))
    return s


EXTRA = extra_tensors()


def event_tensor(sync=0x01):
    """A tensor declared on a CUDA device over host bytes whose buffer is in
    'event' sync mode (0x01; 0x02: 'consumer_stream'), as test_device_tagged.py
    builds it."""
    import struct
    t = hurray.Tensor(bytearray(16), "float32", (4,), device=hurray.Device("cuda"))
    wire = bytearray(t.descriptor.encode())
    h = t.buffer_handles[0]
    at = bytes(wire).index(struct.pack("<QIBBBB", 16, h.alignment, t.device.tag, 0, 0, 0))
    wire[at + 13] = sync
    return hurray._hurray._tensor_from_descriptor(hurray.Descriptor.decode(bytes(wire)),
                                                  [bytearray(range(16))])


def host_bytes(t):
    """The bytes of a one-buffer tensor declared on a device (NumPy refuses it),
    read the way a stream writer reads them."""
    w = hurray.StreamWriter()
    w.write(t)
    return w.getvalue()[-t.buffer_handles[0].byte_size:]


def check_same(a, b):
    if isinstance(a, hurray.Tensor) and a.device.kind != "cpu":
        def norm(t):
            return hurray._hurray._tensor_from_descriptor(
                t.descriptor, [host_bytes(t)], permissive=True, copy=True).descriptor.encode()
        assert norm(a) == norm(b) and host_bytes(a) == host_bytes(b)
    else:
        samples.assert_same(a, b)
    if isinstance(a, hurray.Tensor):
        assert b.device == a.device and b.sync_mode == a.sync_mode


# ---- every kind, every protocol ---------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", sorted(SAMPLES) + sorted(EXTRA))
def test_every_tensor_round_trips_through_every_protocol(name, protocol):
    t = SAMPLES.get(name) or EXTRA[name]
    back = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert back is not t
    check_same(t, back)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_every_composite_round_trips(name, protocol):
    c = COMPOSITES[name]
    back = pickle.loads(pickle.dumps(c, protocol=protocol))
    assert back == c
    check_same(c, back)


@pytest.mark.parametrize("protocol", [2, 5])
@pytest.mark.parametrize("sync, mode", [(0x01, "event"), (0x02, "consumer_stream")])
def test_sync_modes_and_device_ids_travel(protocol, sync, mode):
    t = event_tensor(sync)
    assert t.sync_mode == mode
    back = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert back.sync_mode == mode and back.device == hurray.Device("cuda")
    assert back.buffer_handles == tuple(
        pickle.loads(pickle.dumps(h)) for h in t.buffer_handles)
    assert back.descriptor == t.descriptor  # same alignment here: both owned


def test_deepcopy_and_copy_copy_the_bytes():
    t = SAMPLES["f32_row"]
    for fn in (copy.deepcopy, copy.copy):
        c = fn(t)
        check_same(t, c)
        assert c.data_ptr() != t.data_ptr()
    c = copy.deepcopy(COMPOSITES["nested"])
    assert c == COMPOSITES["nested"]


def test_value_classes_pickle_to_equal_values():
    values = [t.layout for t in list(SAMPLES.values()) + list(EXTRA.values())]
    values += [hurray.TiledLayout([2, 2], outer_layout="strided", outer_strides=[1, 2],
                                  inner_layout="tiled", inner_tiled=hurray.TiledLayout([1, 1])),
               hurray.BlockPagedLayout(16, 64, 0, 2, kv_role="fused", layer_index=3),
               hurray.CompositeLayout("overlay", 2, "add"), hurray.CooLayout(4, is_sorted=True),
               hurray.PrivateExtensionLayout(0xF0, 7, b""), hurray.UnknownLayout(0x0C)]
    values += [t.quantization for t in list(SAMPLES.values()) + list(EXTRA.values())
               if t.quantization is not None]
    values += [SAMPLES["sections"].statistics, SAMPLES["sections"].shard,
               hurray.Statistics(nnz=3, sparsity_ratio=0.5, nm_n=2, nm_m=4),
               hurray.Statistics(value_mean=float("nan"), value_stddev=1.0)]
    values += [h for t in SAMPLES.values() for h in t.buffer_handles]
    values += [t.descriptor for t in SAMPLES.values()] + [EXTRA["private"].descriptor]
    values += [c.descriptor for c in COMPOSITES.values()]
    kinds = {type(v).__name__ for v in values}
    assert {"OpaqueQuantization", "NF4", "MXFP", "PerBlockAffine", "PerChannelAffine",
            "PerTensorAffine", "CsrLayout", "BlockPagedLayout", "Statistics", "Shard",
            "BufferHandle", "Descriptor"} <= kinds, kinds
    for v in values:
        for protocol in PROTOCOLS:
            back = pickle.loads(pickle.dumps(v, protocol=protocol))
            assert type(back) is type(v) and back == v, (v, protocol)


def test_descriptors_keep_their_device_and_relay_mode():
    d = EXTRA["on_cuda_3"].descriptor
    assert pickle.loads(pickle.dumps(d)).device == hurray.Device("cuda", 3)
    p = pickle.loads(pickle.dumps(EXTRA["private"].descriptor))
    assert p.layout == EXTRA["private"].layout  # decoded permissively, as it was built


def test_dtypes_and_the_cpu_device_stay_singletons():
    for name in ("float32", "int4", "bool", "bfloat16", "float8_e4m3"):
        d = hurray.Dtype.from_name(name)
        assert pickle.loads(pickle.dumps(d)) is d
    assert pickle.loads(pickle.dumps(hurray.device.cpu)) is hurray.device.cpu
    t = pickle.loads(pickle.dumps(SAMPLES["f32_row"]))
    assert t.dtype is hurray.float32 and t.device is hurray.device.cpu


def test_device_memory_is_refused_naming_the_device():
    import capi
    if capi.usable() is not None:
        pytest.skip(capi.usable())
    decl = hurray.Tensor(samples.buf(16, 5), "float32", (4,), device=hurray.Device("cuda"))
    prod = capi.Producer()  # device memory handed over by a foreign producer
    cap, _, _ = prod.capsule(decl.descriptor.encode(), [b"\1" * 16], device=0x01)
    foreign = hurray.from_hurray(cap)
    assert foreign.device == hurray.Device("cuda")
    for protocol in (2, 5):
        with pytest.raises(hurray.UnsupportedError, match="device memory"):
            pickle.dumps(foreign, protocol=protocol)
    with pytest.raises(hurray.UnsupportedError, match="device memory"):
        pickle.dumps(hurray.Composite("group", (1,), "float32", [foreign]))


# ---- protocol 5: out of band, zero copy -------------------------------------------------

@pytest.mark.parametrize("name", ["f32_row", "csr", "q_block", "int4", "bool", "paged"])
def test_protocol_5_sends_every_buffer_out_of_band_without_copying(name):
    t = SAMPLES[name]
    bufs = []
    data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    assert len(bufs) == t.buffer_count
    assert all(isinstance(b, pickle.PickleBuffer) for b in bufs)
    sizes = [h.byte_size for h in t.buffer_handles]
    assert [b.raw().nbytes for b in bufs] == sizes
    # the exported memory is the tensor's own
    assert [address(b) for b in bufs if b.raw().nbytes] == buffer_addresses(t)
    assert not any(bytes(b.raw()) in data for b in bufs if b.raw().nbytes >= 8)
    back = pickle.loads(data, buffers=bufs)
    assert buffer_addresses(back) == buffer_addresses(t)  # wrapped, not copied
    check_same(t, back)


def test_the_in_band_payload_does_not_grow_with_the_data():
    sizes = []
    for n in (1 << 10, 1 << 16, 1 << 24):
        t = hurray.from_numpy(aligned_array((n // 4,), "f4", fill=1))
        bufs = []
        sizes.append(len(pickle.dumps(t, protocol=5, buffer_callback=bufs.append)))
        assert sum(b.raw().nbytes for b in bufs) == n
    assert max(sizes) < 400 and max(sizes) - min(sizes) <= 8, sizes


def test_read_only_tensors_export_read_only_buffers(tmp_path):
    path = tmp_path / "r.hrry"
    hurray.save(path, {"w": np.arange(32, dtype=np.float32)})
    ro = hurray.load(path, mmap="r")["w"]
    rw = hurray.from_numpy(aligned_array((32,), "f4", fill=2))
    for t, readonly in ((ro, True), (rw, False)):
        bufs = []
        data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
        assert bufs[0].raw().readonly is readonly
        back = pickle.loads(data, buffers=bufs)
        assert back.readonly is readonly and back.data_ptr() == t.data_ptr()
        # in band, a read-only buffer travels as bytes, a writable one as a bytearray
        assert pickle.loads(pickle.dumps(t, protocol=5)).readonly in (readonly, False)


def test_misaligned_buffers_are_copied_into_aligned_memory_and_aligned_ones_wrapped():
    t = hurray.from_numpy(aligned_array((64,), "f4", fill=3))
    bufs = []
    data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    raw = bytes(bufs[0].raw())
    aligned = aligned_array((len(raw),), "u1", fill=np.frombuffer(raw, np.uint8))
    misaligned = aligned_array((len(raw),), "u1", offset=8, fill=np.frombuffer(raw, np.uint8))
    a = pickle.loads(data, buffers=[aligned])
    m = pickle.loads(data, buffers=[misaligned])
    assert a.data_ptr() == aligned.ctypes.data
    assert m.data_ptr() != misaligned.ctypes.data and m.data_ptr() % 64 == 0
    for back in (a, m):
        check_same(t, back)


@pytest.mark.parametrize("protocol", [0, 2, 3, 4])
def test_protocols_below_5_copy_into_writable_memory(protocol):
    t = SAMPLES["f32_row"]
    data = pickle.dumps(t, protocol=protocol)
    if protocol >= 3:
        assert bytes(np.asarray(t.buffer(0))) in data  # in band, as bytes
    back = pickle.loads(data)
    assert not back.readonly and back.data_ptr() % 64 == 0 and back.data_ptr() != t.data_ptr()


def large_tensors():
    """Tensors with buffers of 64 KiB and more: these travel in band with slack."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(1 << 18).astype(np.float32)  # 1 MiB
    n = 1 << 16
    csr = hurray.Tensor([np.arange(n, dtype=np.float32), np.arange(n, dtype=np.uint64) % 512,
                         np.arange(0, n + 1, 512, dtype=np.uint64)], "float32", (n // 512, 512),
                        layout=hurray.CsrLayout(nnz=n))
    return {"dense": hurray.from_numpy(x), "int4": hurray.quantize(x, "int4", block_size=32),
            "csr": csr}


@pytest.mark.parametrize("protocol", [0, 2, 3, 4])
@pytest.mark.parametrize("name", ["dense", "int4", "csr"])
def test_protocols_below_5_keep_large_buffers_in_the_unpicklers_bytes(protocol, name):
    # a buffer of 64 KiB or more travels with 64 bytes of slack; the receiver
    # aligns it inside the bytes object the unpickler made and keeps that as the
    # tensor's memory: writable, aligned, equal, independent of the sender's
    t = large_tensors()[name]
    data = pickle.dumps(t, protocol=protocol)
    if protocol >= 3:
        raw = sum(h.byte_size for h in t.buffer_handles)
        assert len(data) <= raw + 64 * t.buffer_count + 1024  # one copy of the data in band
    back = pickle.loads(data)
    check_same(t, back)
    assert not back.readonly
    assert all(a % 64 == 0 for a in buffer_addresses(back))
    v = np.asarray(back.buffer(0))
    before = bytes(np.asarray(t.buffer(0))[:8])
    v[:8] = 0xAB
    assert bytes(np.asarray(back.buffer(0))[:8]) == b"\xab" * 8
    assert bytes(np.asarray(t.buffer(0))[:8]) == before


@pytest.mark.parametrize("at", list(range(0, 65)))
def test_padded_buffers_are_moved_to_a_64_byte_boundary_wherever_they_arrive(at):
    # where the sender's data lands depends on the receiver's allocator: every
    # position in the slack must give the same tensor
    t = large_tensors()["dense"]
    payload = bytes(np.asarray(t.buffer(0)))
    blob = b"\0" * at + payload + b"\0" * (64 - at)
    back = hurray._hurray._rebuild_tensor(t.descriptor.encode(), (blob,), None, False, True, (at,))
    assert buffer_addresses(back)[0] % 64 == 0 and not back.readonly
    assert bytes(np.asarray(back.buffer(0))) == payload


def test_crafted_pads_raise():
    t = large_tensors()["dense"]
    d = t.descriptor.encode()
    payload = bytes(np.asarray(t.buffer(0)))
    good = b"\0" * 16 + payload + b"\0" * 48
    rebuild = hurray._hurray._rebuild_tensor
    cases = [
        ((good,), [16], TypeError, "pads must be a tuple"),
        ((good,), (16, 16), hurray.InvalidDescriptorError, "1 buffers and 2 pads"),
        ((bytearray(good),), (16,), TypeError, "must be bytes"),
        ((good[:-1],), (16,), hurray.BufferError, "slack"),
        ((good + b"x",), (16,), hurray.BufferError, "slack"),
        ((good,), (65,), hurray.BufferError, "data at byte 65"),
        ((good,), (-2,), ValueError, "pads\\[0\\]"),
        ((good,), ("16",), ValueError, "pads\\[0\\]"),
        ((good,), (2 ** 80,), ValueError, "pads\\[0\\]"),
    ]
    for bufs, pads, error, match in cases:
        with pytest.raises(error, match=match):
            crafted_loads(rebuild, d, bufs, None, False, True, pads)
    # -1 is an ordinary buffer, under the copy policy
    back = crafted_loads(rebuild, d, (payload,), None, False, True, (-1,))
    assert bytes(np.asarray(back.buffer(0))) == payload


def test_a_short_buffer_is_refused_on_unpickling():
    t = SAMPLES["csr"]
    bufs = []
    data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
    bufs[1] = bytes(bufs[1].raw())[:-8]
    with pytest.raises(hurray.BufferError, match="buffer 1"):
        pickle.loads(data, buffers=bufs)


# ---- files --------------------------------------------------------------------------------

def saved(tmp_path, **tensors):
    path = tmp_path / "f.hrry"
    hurray.save(path, tensors or {"w": np.arange(256, dtype=np.float32),
                                  "q": SAMPLES["q_block"], "s": SAMPLES["csr"]})
    return path


@pytest.mark.parametrize("mmap", [True, "c", "r", False])
def test_a_file_pickles_as_its_path_and_mode(tmp_path, mmap):
    path = saved(tmp_path)
    with hurray.open(path, mmap=mmap) as f:
        g = pickle.loads(pickle.dumps(f))
        try:
            assert g.keys() == f.keys() and g.mmap_mode == f.mmap_mode
            assert samples.buffer_bytes(g["w"]) == samples.buffer_bytes(f["w"])
        finally:
            g.close()
    with pytest.raises(TypeError, match="closed"):
        pickle.dumps(f)


@pytest.mark.parametrize("mmap", [True, "c", "r", False])
def test_tensors_a_file_hands_out_pickle_what_they_hold(tmp_path, mmap):
    path = saved(tmp_path)
    with hurray.open(path, mmap=mmap) as f:
        w, q, s = f["w"], f["q"], f["s"]
        if not w.readonly:  # copy-on-write ("c", the default) or in memory (False)
            np.asarray(w)[:4] = -1  # a private change: the pickle carries it, the file not
        for t in (w, q, s):
            for protocol in (2, 5):
                back = pickle.loads(pickle.dumps(t, protocol=protocol))
                check_same(t, back)
        if mmap != "r":
            assert np.asarray(w)[0] == -1
            assert np.asarray(pickle.loads(pickle.dumps(w)))[0] == -1
        g = pickle.loads(pickle.dumps(f))  # the File wrapper, reopened by path
        try:
            assert g.mmap_mode == {True: "c", False: None}.get(mmap, mmap)
            assert np.asarray(g["w"])[0] == 0  # the file is unchanged
            check_same(g["q"], q)
        finally:
            g.close()


def test_tensors_of_a_file_pickle_by_value_unless_the_file_says_reference(tmp_path):
    path = saved(tmp_path)
    for t in (hurray.load(path)["w"], hurray.load(path, mmap="r")["w"],
              hurray.open(path, mmap="r")["w"]):
        assert len(pickle.dumps(t, protocol=4)) > 1024  # the bytes travel


def test_reference_pickles_name_the_file_and_map_it_again(tmp_path):
    path = saved(tmp_path)
    with hurray.open(path, mmap="r", pickle="reference") as f:
        for name in ("w", "q", "s"):
            t = f[name]
            for protocol in (2, 4, 5):
                bufs = []
                data = pickle.dumps(t, protocol=protocol, buffer_callback=bufs.append
                                    if protocol == 5 else None)
                assert len(data) < 400 and not bufs and os.fsencode(str(path)) in data
                back = pickle.loads(data)
                check_same(t, back)
                assert back.readonly  # mapped read-only, as the sender's
        # the receiver's copy is a reference too
        again = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(f["w"]))))
        check_same(f["w"], again)


def test_a_file_changed_after_pickling_a_reference_raises_file_error(tmp_path):
    path = saved(tmp_path)
    with hurray.open(path, mmap="r", pickle="reference") as f:
        data = pickle.dumps(f["w"])
    hurray.save(path, {"w": np.zeros(256, dtype=np.float32)})  # replaced
    with pytest.raises(hurray.FileError, match="f.hrry.*changed"):
        pickle.loads(data)


def test_a_file_changed_before_pickling_sends_the_bytes(tmp_path):
    path = saved(tmp_path)
    with hurray.open(path, mmap="r", pickle="reference") as f:
        t = f["w"]
        os.utime(path, ns=(1, 1))  # no longer the file that was mapped
        data = pickle.dumps(t, protocol=4)
    assert len(data) > 1024
    check_same(t, pickle.loads(data))


def test_reference_mode_needs_a_read_only_mapping(tmp_path):
    path = saved(tmp_path)
    for mmap in (True, "c", False):
        with pytest.raises(ValueError, match="mmap='r'"):
            hurray.open(path, mmap=mmap, pickle="reference")
    with pytest.raises(ValueError, match="'bytes' or 'reference'"):
        hurray.open(path, pickle="path")


# ---- hostile pickles: a clear exception, never a crash ------------------------------------
# A pickle is a program: these payloads name hurray's rebuild functions with
# arguments no reducer writes. Each must raise an exception naming what is wrong;
# a crash would take the test process down with it.

class Crafted:
    """Pickles as a call of fn(*args): a payload hurray did not write."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def crafted_loads(fn, *args, protocol=5):
    return pickle.loads(pickle.dumps(Crafted(fn, *args), protocol=protocol))


CSR = SAMPLES["csr"]
CSR_BYTES = [bytes(np.asarray(CSR.buffer(i))) for i in range(CSR.buffer_count)]


@pytest.mark.parametrize("buffers, error, match", [
    (CSR_BYTES[:-1], hurray.InvalidDescriptorError, "declares 3 buffers, 2 were given"),
    (CSR_BYTES + [b"x" * 8], hurray.InvalidDescriptorError, "declares 3 buffers, 4 were given"),
    ([], hurray.InvalidDescriptorError, "declares 3 buffers, 0 were given"),
    ([b""] * 100000, hurray.InvalidDescriptorError, "too many buffers"),
    (CSR_BYTES[:2] + [CSR_BYTES[2][:-1]], hurray.BufferError, "buffer 2 holds 31 bytes"),
    ([CSR_BYTES[0], bytes(8) * 2 + (99).to_bytes(8, "little"), CSR_BYTES[2]],
     hurray.InvalidDescriptorError, "col_indices.*outside"),
    ([1, 2, 3], TypeError, "buffer 0 must support the buffer protocol"),
    ([None] * 3, TypeError, "buffer 0 must support the buffer protocol"),
    (["abc"] * 3, TypeError, "buffer 0 must support the buffer protocol"),
    (5, TypeError, "buffers must be a sequence"),
    (None, TypeError, "buffers must be a sequence"),
])
def test_wrong_buffers_in_a_crafted_pickle_raise(buffers, error, match):
    with pytest.raises(error, match=match):
        crafted_loads(hurray._hurray._rebuild_tensor, CSR.descriptor.encode(), buffers)


@pytest.mark.parametrize("args, error, match", [
    ((5, CSR_BYTES), TypeError, "bytes-like"),
    (("abc", CSR_BYTES), TypeError, "bytes-like"),
    ((b"", CSR_BYTES), hurray.InvalidDescriptorError, "truncated"),
    ((CSR.descriptor.encode()[:10], CSR_BYTES), hurray.InvalidDescriptorError, "declares"),
    ((b"\xff" * 64, CSR_BYTES), hurray.InvalidDescriptorError, "magic"),
    ((CSR.descriptor.encode(), CSR_BYTES, "cpu"), TypeError, "device must be a hurray.Device"),
    ((CSR.descriptor.encode(), CSR_BYTES, hurray.Device("cuda", 2)),
     hurray.InvalidDescriptorError, "device given is tag 0x01"),
    ((CSR.descriptor.encode(), CSR_BYTES, None, False, "yes"), TypeError, "copy must be"),
    ((CSR.descriptor.encode(), CSR_BYTES, None, False, None, 7), TypeError,
     "pads must be a tuple"),
    ((CSR.descriptor.encode(), CSR_BYTES, None, False, None, None, 7), TypeError, "at most 6"),
    ((), TypeError, "missing required argument 'descriptor'"),
])
def test_wrong_types_in_a_crafted_tensor_pickle_raise(args, error, match):
    with pytest.raises(error, match=match):
        crafted_loads(hurray._hurray._rebuild_tensor, *args)


def test_a_crafted_tensor_pickle_with_the_right_parts_loads():
    # the control for the two tests above: the same call with what a reducer writes
    back = crafted_loads(hurray._hurray._rebuild_tensor, CSR.descriptor.encode(), CSR_BYTES,
                         hurray.device.cpu, False, None)
    check_same(CSR, back)


def test_every_truncation_and_bit_flip_of_the_descriptor_raises_or_loads():
    d = CSR.descriptor.encode()
    rebuild = hurray._hurray._rebuild_tensor
    hurray_errors = (hurray.InvalidDescriptorError, hurray.BufferError,
                     hurray.UnsupportedError)
    raised = 0
    for cut in range(len(d)):
        with pytest.raises(hurray.InvalidDescriptorError):
            rebuild(d[:cut], CSR_BYTES)
    for i in range(len(d)):
        for bit in range(8):
            x = bytearray(d)
            x[i] ^= 1 << bit
            for permissive in (False, True):
                try:
                    t = rebuild(bytes(x), CSR_BYTES, None, permissive)
                except hurray_errors:
                    raised += 1
                else:
                    assert isinstance(t, hurray.Tensor)
                    pickle.loads(pickle.dumps(t))  # what loaded pickles again
    assert raised > len(d) * 8  # most flips break the descriptor


def interpreter_fault(data):
    """Why CPython's own unpickler, not hurray, would mishandle `data`, or None.

    A memo index is a 4-byte field (LONG_BINPUT, LONG_BINGET) that CPython
    sizes its memo table by, so one corrupted byte can ask for gigabytes before
    any of our code runs: refused with MemoryError under glibc's allocator,
    granted and filled under mimalloc (the free-threaded builds). A corrupted
    length byte shifts the parse, so such an opcode can appear anywhere: the
    opcodes are walked as the unpickler would read them (pickletools), up to
    the first one that does not parse."""
    import pickletools
    try:
        for op, arg, pos in pickletools.genops(data):
            if op.name in ("LONG_BINPUT", "LONG_BINGET") and isinstance(arg, int) and \
                    arg >= 1 << 20:
                return f"{op.name} of memo index {arg} at byte {pos}"
    except Exception:  # noqa: BLE001 - the rest does not parse: nothing more to look at
        pass
    return None


@pytest.mark.slow  # a child interpreter
@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_every_corrupted_byte_of_a_tensor_pickle_raises_or_loads(protocol):
    # In a child whose address space is bounded (RLIMIT_AS: what it uses now plus
    # 2 GiB), so an input that makes anything allocate without bound ends in
    # MemoryError there, never in the machine's memory. Inputs whose fault is
    # the interpreter's own (interpreter_fault) are skipped and counted, saying
    # why. (Protocol 5 out of band: an in-band bytearray whose length byte is
    # corrupted makes CPython 3.11's own unpickler print a SystemError, nothing
    # of hurray's.)
    from isolation import isolated
    out = isolated(f"""
        import pickle, resource
        import numpy as np, hurray, samples
        from test_pickle import interpreter_fault
        CSR = samples.sample_tensors()["csr"]
        def vm_bytes():
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmSize:"):
                        return int(line.split()[1]) * 1024
        try:
            limit = vm_bytes() + (2 << 30)
        except OSError:  # no /proc (not Linux): RLIMIT_AS from what Python reports
            limit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 + (4 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        protocol = {protocol}
        bufs = []
        data = pickle.dumps(CSR, protocol=protocol,
                            buffer_callback=bufs.append if protocol == 5 else None)
        skipped = []
        for i in range(len(data)):
            x = bytearray(data)
            x[i] ^= 0x5A
            why = interpreter_fault(bytes(x))
            if why:
                skipped.append((i, why))
                continue
            try:
                pickle.loads(bytes(x), buffers=bufs)
            except Exception as e:  # any exception is the pass; a crash is not
                assert type(e).__module__ in ("hurray", "builtins", "_pickle", "pickle",
                                              "copyreg"), e
        assert isinstance(pickle.loads(data, buffers=bufs), hurray.Tensor)
        assert len(skipped) < len(data) // 10, skipped
        for i, why in skipped:
            print(f"skipped byte {{i}}: the interpreter's fault: {{why}}")
    """, timeout=300)
    print(out)


def test_the_interpreter_fault_filter_finds_the_memo_index_case():
    # the 15-byte pickle that takes gigabytes from CPython's unpickler alone
    bad = b"\x80\x04K\x00r" + (2490982770).to_bytes(4, "little") + b"."
    assert "LONG_BINPUT of memo index 2490982770" in interpreter_fault(bad)
    assert interpreter_fault(pickle.dumps(CSR, protocol=4)) is None


def test_out_of_band_buffers_missing_or_of_the_wrong_type_raise():
    bufs = []
    data = pickle.dumps(CSR, protocol=5, buffer_callback=bufs.append)
    for given in ([], bufs[:1]):
        with pytest.raises(pickle.UnpicklingError, match="out-of-band"):
            pickle.loads(data, buffers=given)
    with pytest.raises(TypeError, match="buffer 0 must support the buffer protocol"):
        pickle.loads(data, buffers=[1, 2, 3])
    with pytest.raises(hurray.BufferError, match="buffer 0 holds"):
        pickle.loads(data, buffers=[b"", b"", b""])


@pytest.mark.parametrize("fn, args, error, match", [
    ("_rebuild_composite", ("head", [], False), hurray.InvalidDescriptorError, "magic"),
    ("_rebuild_composite", ("members", [], False), hurray.InvalidDescriptorError,
     "declares 3 members, 0 were given"),
    ("_rebuild_composite", ("members", "more", False), hurray.InvalidDescriptorError,
     "declares 3 members, 4 were given"),
    ("_rebuild_composite", ("members", [1], False), TypeError, "members\\[0\\] is a int"),
    ("_rebuild_composite", ("members", 3, False), TypeError, "not iterable"),
    ("_rebuild_composite", ("tensor", [], False), hurray.InvalidDescriptorError,
     "not a composite"),
    ("_rebuild_descriptor", (b"\xff" * 64, False, None), hurray.InvalidDescriptorError, "magic"),
    ("_rebuild_descriptor", ("tensor", False, 3), TypeError, "device must be"),
    ("_rebuild_descriptor", (None, False, None), TypeError, "bytes-like"),
    ("_rebuild_buffer_handle", (-1, 16, 64, hurray.device.cpu, 0, 0),
     hurray.InvalidDescriptorError, "index must be in"),
    ("_rebuild_buffer_handle", (0, 2 ** 70, 64, hurray.device.cpu, 0, 0),
     hurray.InvalidDescriptorError, "byte_size"),
    ("_rebuild_buffer_handle", (0, 16, 64, "cpu", 0, 0), TypeError, "device must be"),
    ("_rebuild_buffer_handle", (0, 16, 64, hurray.device.cpu, 300, 0),
     hurray.InvalidDescriptorError, "sync_mode"),
])
def test_crafted_composite_descriptor_and_handle_pickles_raise(fn, args, error, match):
    group = COMPOSITES["group"]
    stand_in = {"head": b"\0" * 40, "members": group.descriptor.encode(),
                "tensor": CSR.descriptor.encode(), "more": list(group.members) + [CSR]}
    args = tuple(stand_in.get(a, a) if isinstance(a, str) else a for a in args)
    with pytest.raises(error, match=match):
        crafted_loads(getattr(hurray._hurray, fn), *args)
