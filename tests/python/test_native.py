"""The native interchange protocol: Tensor.__hurray__ and hurray.from_hurray
(docs/impl/python-bindings.md § Native Interchange Protocol and
docs/cookbook/multi-buffer-tensors.md of the specification; docs/internals/decisions.md
§ DLPack for the stream argument, § Native protocol ABI version)."""

import ctypes
import gc
import struct
import subprocess
import sys
import textwrap
import threading
import weakref

import pytest

import hurray

np = pytest.importorskip("numpy")

import capi  # noqa: E402
import samples  # noqa: E402
from conftest import collect  # noqa: E402

SAMPLES = samples.sample_tensors()

needs_lib = pytest.mark.skipif(capi.usable() is not None, reason=str(capi.usable()))


def capsule_name(cap):
    return capi.pyapi.PyCapsule_GetName(cap).decode()


# ---- discovery and shape of the capsule ---------------------------------------------

def test_discovery_is_hasattr():
    t = SAMPLES["f32_row"]
    assert hasattr(t, "__hurray__")
    assert not hasattr(t, "__hurray_sparse_buffer__")
    assert not hasattr(SAMPLES["coo"], "__hurray_sparse_buffer__")
    assert not hasattr(samples.sample_composites()["overlay"], "__hurray__")
    # no capability flag on the namespace: probing the object is the discovery
    assert not [n for n in dir(hurray) if "native" in n.lower() or n.startswith("HAS_")]


def test_capsule_is_named_hurray_tensor_and_renamed_when_consumed():
    cap = SAMPLES["f32_row"].__hurray__()
    assert type(cap).__name__ == "PyCapsule" and capsule_name(cap) == "hurray_tensor"
    out = hurray.from_hurray(cap)
    assert capsule_name(cap) == "used_hurray_tensor"
    samples.assert_same_tensor(SAMPLES["f32_row"], out)


@pytest.mark.parametrize("stream", [None, -1, 0, 1, 7, 2**40])
def test_stream_argument(stream):
    t = SAMPLES["f32_row"]
    samples.assert_same_tensor(t, hurray.from_hurray(t.__hurray__(stream)))
    samples.assert_same_tensor(t, hurray.from_hurray(t.__hurray__(stream=stream)))


@pytest.mark.parametrize("bad", ["0", 1.0, True, object()])
def test_stream_argument_type(bad):
    with pytest.raises(TypeError, match="stream"):
        SAMPLES["f32_row"].__hurray__(stream=bad)


# ---- multi-buffer round trips -------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_layout_and_scheme_round_trips(name):
    t = SAMPLES[name]
    out = hurray.from_hurray(t)
    samples.assert_same_tensor(t, out)
    assert out.buffer_count == t.buffer_count
    assert out.layout == t.layout and out.quantization == t.quantization
    assert out.statistics == t.statistics and out.shard == t.shard
    # zero-copy: the consumer sees the producer's memory
    for i in range(t.buffer_count):
        if t.buffer_handles[i].byte_size:
            a, b = np.asarray(t.buffer(i)), np.asarray(out.buffer(i))
            assert a.ctypes.data == b.ctypes.data


def test_quantized_per_channel_scales_are_buffer_one():
    t = SAMPLES["q_channel"]
    out = hurray.from_hurray(t)
    q = out.quantization
    assert (q.scale_buffer_index, q.zero_point_buffer_index) == (1, 2)
    assert np.asarray(out.buffer(1)).view(np.float32).tolist() == [0.5, 0.25]


def test_writability_follows_the_source():
    t = hurray.from_numpy(samples.buf(16).view(np.float32))
    out = hurray.from_hurray(t)
    assert not out.readonly
    np.asarray(out)[0] = 42.0
    assert np.asarray(t)[0] == 42.0  # the same memory
    frozen = samples.buf(16)
    frozen.flags.writeable = False
    ro = hurray.Tensor(frozen, "float32", (4,))
    assert ro.readonly and hurray.from_hurray(ro).readonly
    # a capsule handed over directly: nothing proves the memory writable
    assert hurray.from_hurray(t.__hurray__()).readonly


def test_relayed_private_layout():
    t = hurray.Tensor([samples.buf(8), samples.buf(3)], "uint8", (8,),
                      layout=hurray.PrivateExtensionLayout(0xF3, 9, b"opaque"))
    out = hurray.from_hurray(t)
    assert out.layout == t.layout
    assert samples.buffer_bytes(out) == samples.buffer_bytes(t)


def _event_synced_tensor():
    """A CUDA declaration whose buffer is in event sync mode (no constructor
    accepts a sync mode: it comes in through a decoded descriptor)."""
    dev = hurray.Tensor(samples.buf(16), "float32", (4,), device=hurray.Device("cuda"))
    wire = bytearray(dev.descriptor.encode())
    h = dev.buffer_handles[0]
    pat = struct.pack("<QIBBBB", 16, h.alignment, 0x01, 0x00, 0x00, 0)
    at = bytes(wire).index(pat)
    wire[at + 13] = 0x01  # sync_mode = event
    d = hurray.Descriptor.decode(bytes(wire))
    return hurray._hurray._tensor_from_descriptor(d, [samples.buf(16)])


@pytest.mark.parametrize("stream", [None, -1, 5])
def test_event_synced_buffers_relay_unchanged(stream):
    t = _event_synced_tensor()
    assert t.sync_mode == "event"
    out = hurray.from_hurray(t.__hurray__(stream=stream))
    assert out.sync_mode == "event" and out.device == t.device
    assert out.buffer_handles[0].sync_mode == "event"
    with pytest.raises(hurray.UnsupportedError, match="event"):
        out.buffer(0)  # relayed, never read


# ---- consumer errors ----------------------------------------------------------------------

class Holder:
    def __init__(self, cap):
        self.cap = cap

    def __hurray__(self, stream=None):
        return self.cap


def test_consumed_capsule_is_a_buffer_error():
    cap = SAMPLES["f32_row"].__hurray__()
    hurray.from_hurray(Holder(cap))
    with pytest.raises(hurray.BufferError, match="already consumed"):
        hurray.from_hurray(Holder(cap))
    with pytest.raises(hurray.BufferError, match="already consumed"):
        hurray.from_hurray(cap)


def test_invalid_capsules_are_buffer_errors():
    other = SAMPLES["f32_row"].__dlpack__()
    with pytest.raises(hurray.BufferError, match="'dltensor'"):
        hurray.from_hurray(other)
    with pytest.raises(hurray.BufferError, match="not a PyCapsule"):
        hurray.from_hurray(Holder(b"not a capsule"))
    with pytest.raises(hurray.BufferError, match="not a PyCapsule"):
        hurray.from_hurray(Holder(None))


def test_objects_without_the_protocol():
    with pytest.raises(TypeError, match="__hurray__"):
        hurray.from_hurray(42)
    with pytest.raises(TypeError, match="__hurray__"):
        hurray.from_hurray(samples.sample_composites()["group"])


def test_producer_errors_propagate():
    class Broken:
        def __hurray__(self, stream=None):
            raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        hurray.from_hurray(Broken())


# ---- lifetime ----------------------------------------------------------------------------

def test_unconsumed_capsule_keeps_the_tensor_until_it_dies():
    t = hurray.Tensor(samples.buf(64), "float32", (16,))
    w = weakref.ref(t)
    cap = t.__hurray__()
    del t
    collect()
    assert w() is not None
    del cap
    collect()
    assert w() is None


def test_consumed_tensor_keeps_the_source_alive():
    t = hurray.Tensor(samples.buf(64), "float32", (16,))
    expect = samples.buffer_bytes(t)
    w = weakref.ref(t)
    out = hurray.from_hurray(t.__hurray__())
    del t
    collect()
    assert w() is not None
    arr = np.asarray(out)
    del out
    collect()
    assert w() is not None  # the array holds the consumer's tensor
    assert arr.tobytes() == expect[0]
    del arr
    collect()
    assert w() is None


def test_many_capsules_do_not_leak_references():
    t = SAMPLES["csr"]
    before = sys.getrefcount(t)
    for _ in range(200):
        cap = t.__hurray__()
        if _ % 2:
            hurray.from_hurray(cap)
        del cap
    collect()
    assert sys.getrefcount(t) == before


# ---- a consumer and a producer in C (ctypes over libhurray.so) -----------------------------

@needs_lib
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_c_consumer_reads_every_buffer(name):
    t = SAMPLES[name]
    r = capi.consume(t.__hurray__())
    assert r.abi == hurray.C_ABI_VERSION == 4
    assert r.descriptor == t.descriptor.encode()
    assert r.dtype_tag == t.dtype.tag and r.layout_tag == t.layout.tag
    assert r.shape == t.shape
    assert [h[0] for h in r.handles] == [h.byte_size for h in t.buffer_handles]
    assert [h[1] for h in r.handles] == [h.alignment for h in t.buffer_handles]
    assert list(r.buffers) == samples.buffer_bytes(t)


@needs_lib
def test_c_consumer_destroying_list_and_context_releases_the_tensor():
    t = hurray.Tensor(samples.buf(64, 3), "float32", (16,))
    w = weakref.ref(t)
    cap = t.__hurray__()
    del t
    r, lst = capi.consume(cap, keep_list=True)  # context destroyed, list kept
    collect()
    assert w() is not None  # the buffers hold the tensor
    L = capi.lib()
    # a C consumer may keep one buffer past the list: it keeps the memory alive
    b = capi.c_void_p()
    capi.check(L.hurray_buffer_list_get(lst, 0, ctypes.byref(b)))
    capi.check(L.hurray_buffer_retain(b))
    capi.check(L.hurray_buffer_list_destroy(ctypes.byref(lst)))
    del cap
    collect()
    assert w() is not None
    p = capi.c_void_p()
    capi.check(L.hurray_buffer_data_ptr(b, ctypes.byref(p)))
    assert ctypes.string_at(p, 64) == r.buffers[0]
    # dropped from another thread (ctypes releases the GIL around the call):
    # the release callback takes the GIL itself
    th = threading.Thread(target=lambda: capi.check(L.hurray_buffer_destroy(b)))
    th.start()
    th.join()
    collect()
    assert w() is None


@needs_lib
def test_c_consumer_borrowed_handle_cannot_be_destroyed():
    cap = SAMPLES["csr"].__hurray__()
    r, lst = capi.consume(cap, keep_list=True)
    L = capi.lib()
    b = capi.c_void_p()
    capi.check(L.hurray_buffer_list_get(lst, 1, ctypes.byref(b)))
    assert L.hurray_buffer_destroy(b) != 0  # borrowed: refused, nothing freed
    capi.check(L.hurray_buffer_list_destroy(ctypes.byref(lst)))
    capi.check(L.hurray_buffer_list_destroy(ctypes.byref(lst)))  # nulled: a no-op


@needs_lib
def test_from_hurray_consumes_a_capsule_made_in_c():
    src = SAMPLES["q_channel"]
    payloads = samples.buffer_bytes(src)
    prod = capi.Producer()
    cap, lst, ctx = prod.capsule(src.descriptor.encode(), payloads)
    out = hurray.from_hurray(cap)
    assert capsule_name(cap) == "used_hurray_tensor"
    samples.assert_same_tensor(src, out)
    assert out.readonly  # foreign memory: not provably writable
    assert prod.owner_released == 1  # the context was destroyed at once
    assert prod.released == []  # the list lives inside the tensor
    arr = np.asarray(out.buffer(1))
    del out
    collect()
    assert prod.released == []  # the array holds it
    del arr
    collect()
    assert sorted(prod.released) == [1, 2, 3]  # each buffer released once


@needs_lib
def test_abi_version_is_checked_before_the_list_is_touched():
    prod = capi.Producer()
    # a pointer that must never be dereferenced: the version check comes first
    cap, _, ctx = prod.capsule(SAMPLES["f32_row"].descriptor.encode(), [], abi=3,
                               list_pointer=0x10)
    with pytest.raises(hurray.UnsupportedError, match="ABI version 3"):
        hurray.from_hurray(cap)
    assert capsule_name(cap) == "hurray_tensor"  # not consumed
    capi.check(capi.lib().hurray_tensor_context_destroy(ctypes.byref(ctx)))
    assert prod.owner_released == 1


@needs_lib
def test_capsule_without_context_is_a_buffer_error():
    prod = capi.Producer()
    cap, lst, _ = prod.capsule(b"", [b"x" * 16], context=False)
    with pytest.raises(hurray.BufferError, match="HurrayTensorContext"):
        hurray.from_hurray(cap)
    capi.check(capi.lib().hurray_buffer_list_destroy(ctypes.byref(lst)))
    assert prod.released == [1]


@needs_lib
@pytest.mark.parametrize("count", [0, 1, 3])
def test_list_length_must_match_the_descriptor(count):
    src = SAMPLES["q_channel"]  # three buffers
    payloads = samples.buffer_bytes(src)
    prod = capi.Producer()
    cap, lst, ctx = prod.capsule(src.descriptor.encode(), payloads[:count])
    if count == 3:
        hurray.from_hurray(cap)
        return
    with pytest.raises(hurray.InvalidDescriptorError, match="carries %d buffers" % count) as e:
        hurray.from_hurray(cap)
    assert e.value.status == "ERR_INVALID_BUFFER_TABLE"
    collect()
    assert sorted(prod.released) == list(range(1, count + 1))  # destroyed exactly once
    assert prod.owner_released == 1


@needs_lib
def test_buffer_declarations_must_match_the_descriptor():
    src = SAMPLES["f32_row"]
    prod = capi.Producer()
    lst = prod.list(samples.buffer_bytes(src), memory_class=0x01)  # host_pinned
    cap = capi.pyapi.PyCapsule_New(lst, capi.NAME, None)
    capi.pyapi.PyCapsule_SetContext(cap, prod.context(src.descriptor.encode()))
    with pytest.raises(hurray.BufferError, match="memory class"):
        hurray.from_hurray(cap)
    collect()
    assert prod.released == [1]


@needs_lib
def test_undecodable_descriptor():
    prod = capi.Producer()
    cap, _, _ = prod.capsule(b"XXXX" + bytes(40), [b"y" * 16])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.from_hurray(cap)
    collect()
    assert prod.released == [1] and prod.owner_released == 1


# ---- interpreter shutdown -------------------------------------------------------------------

@pytest.mark.slow  # a child interpreter
def test_capsules_alive_at_interpreter_exit(tmp_path):
    """Capsules, consumed tensors and C-held buffers alive when the interpreter
    exits: no crash, no hang (references are dropped or leaked deliberately)."""
    script = textwrap.dedent("""
        import sys, threading
        sys.path.insert(0, %r)
        import hurray, samples, capi, ctypes
        keep = []
        for name, t in samples.sample_tensors().items():
            keep.append(t.__hurray__())                # never consumed
            keep.append(hurray.from_hurray(t))         # consumed, list alive
        c = samples.sample_tensors()["csr"].__hurray__()
        keep.append([c, c])                            # a cycle-free extra ref
        cyc = []; cyc.append(cyc); cyc.append(samples.sample_tensors()["coo"].__hurray__())
        L = capi.lib()
        if L is not None:
            r, lst = capi.consume(samples.sample_tensors()["q_nf4"].__hurray__(), keep_list=True)
            keep.append(lst)                           # a list only C knows about
            # a thread still dropping buffers while the interpreter goes away
            def drop():
                for _ in range(1000):
                    cap = samples.sample_tensors()["f32_row"].__hurray__()
                    del cap
            threading.Thread(target=drop, daemon=True).start()
        print("ready", flush=True)
    """) % str(samples.__file__.rsplit("/", 1)[0])
    for _ in range(3):
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == "ready"
        assert "Fatal" not in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("payload", [bytes([0xF3, 0x01, 0x00, 0x00, 0xAA, 0xBB]),
                                     bytes([0x30, 0x01, 0x00, 0x00])])
def test_opaque_quantization_relays(payload):
    t = hurray.Tensor(samples.buf(8), "int8", (8,),
                      quantization=hurray.OpaqueQuantization(payload))
    out = hurray.from_hurray(t)
    samples.assert_same_tensor(t, out)
    assert out.quantization.encode() == payload
