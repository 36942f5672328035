"""Tensors declared on a device but built from host buffers, and tensors whose
buffers are not producer-synced (docs/internals/decisions.md, "Device-tagged tensors built
from host buffers"; hurray.Tensor's `device` in docs/reference/api.md).

A Python buffer (bytes, bytearray, memoryview, ndarray) is host memory whatever
device the descriptor declares: with copy=None a misaligned one is copied into an
aligned owned buffer, as for a CPU tensor. Only copy=False refuses, and no message
names an argument the caller did not pass.
"""
import struct

import numpy as np
import pytest

import hurray

CUDA = hurray.Device("cuda", 0)


def misaligned(nbytes, fill=7):
    """A bytearray-backed memoryview whose address is not 64-byte aligned."""
    raw = bytearray(nbytes + 128)
    base = np.frombuffer(raw, dtype=np.uint8).ctypes.data
    start = (64 - base % 64) % 64 + 1  # aligned + 1: below the floor
    view = memoryview(raw)[start:start + nbytes]
    view[:] = bytes([fill]) * nbytes
    return raw, view


def host_bytes(t):
    """The bytes of a one-buffer tensor's buffer, read the way a stream writer
    reads them (NumPy refuses a tensor declared on another device)."""
    w = hurray.StreamWriter()
    w.write(t)
    return w.getvalue()[-t.buffer_handles[0].byte_size:]


def test_misaligned_host_buffer_on_a_device_is_copied_when_copy_is_none():
    raw, view = misaligned(16)
    t = hurray.Tensor(view, "float32", (4,), device=CUDA)
    assert t.device == CUDA
    assert t.buffer_handles[0].alignment >= 64  # an owned, aligned copy
    raw[:] = bytes(len(raw))  # the copy does not see later writes
    assert host_bytes(t) == bytes([7]) * 16


@pytest.mark.parametrize("source", ["bytes", "bytearray", "ndarray"])
def test_every_host_source_behaves_as_on_the_cpu(source):
    raw, view = misaligned(16, fill=3)
    obj = {"bytes": lambda: bytes(view), "bytearray": lambda: bytearray(view),
           "ndarray": lambda: np.frombuffer(view, dtype=np.uint8)}[source]()
    cpu = hurray.Tensor(obj, "uint8", (16,))
    dev = hurray.Tensor(obj, "uint8", (16,), device=CUDA)
    assert host_bytes(dev) == host_bytes(cpu) == bytes([3]) * 16
    # the same policy: borrowed when aligned, copied when not, on both
    assert (dev.buffer_handles[0].alignment >= 64) == (cpu.buffer_handles[0].alignment >= 64)


def test_copy_true_copies_a_device_tagged_host_buffer():
    src = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = hurray.Tensor(src, "float32", (4,), device=CUDA, copy=True)
    src[:] = bytes(16)
    assert np.frombuffer(host_bytes(t), np.float32).tolist() == [0, 1, 2, 3]


def test_copy_false_still_refuses_and_names_copy_false():
    _, view = misaligned(16)
    with pytest.raises(hurray.BufferError, match="copy=False"):
        hurray.Tensor(view, "float32", (4,), device=CUDA, copy=False)


def test_no_message_names_copy_false_unless_passed():
    # An undersized buffer on a device: the error is about the size, not about copying.
    _, view = misaligned(8)
    with pytest.raises(hurray.BufferError) as e:
        hurray.Tensor(view, "float32", (4,), device=CUDA)
    assert "copy=False" not in str(e.value)


def test_device_tagged_host_tensor_saves_and_streams(tmp_path):
    _, view = misaligned(16, fill=9)
    t = hurray.Tensor(view, "float32", (4,), device=CUDA)
    p = tmp_path / "d.hrry"
    hurray.save(p, {"d": t})
    back = hurray.load(p)["d"]
    assert back.device.kind == "cuda" and host_bytes(back) == bytes([9]) * 16


def test_from_descriptor_follows_the_same_policy():
    desc = hurray.Tensor(bytes(16), "float32", (4,), device=CUDA).descriptor
    _, view = misaligned(16, fill=5)
    t = hurray._hurray._tensor_from_descriptor(desc, [view])
    assert t.device.kind == "cuda" and host_bytes(t) == bytes([5]) * 16
    with pytest.raises(hurray.BufferError, match="copy=False"):
        hurray._hurray._tensor_from_descriptor(desc, [view], copy=False)


# ---- buffers that are not producer-synced ----------------------------------------------

def _event_tensor(device):
    t = hurray.Tensor(bytearray(16), "float32", (4,), device=device)
    wire = bytearray(t.descriptor.encode())
    h = t.buffer_handles[0]
    tag = device.tag
    at = bytes(wire).index(struct.pack("<QIBBBB", 16, h.alignment, tag, 0x00, 0x00, 0))
    wire[at + 13] = 0x01  # sync_mode = event
    return hurray._hurray._tensor_from_descriptor(hurray.Descriptor.decode(bytes(wire)),
                                                  [bytearray(16)])


# A CPU buffer is always producer_synced (the format refuses anything else), so
# these are device tensors: the sync mode must still be what the error names.
@pytest.mark.parametrize("device", [CUDA, hurray.Device("rocm", 1)], ids=["cuda", "rocm"])
@pytest.mark.parametrize("how", ["buffer", "array", "array_interface", "array_struct"])
def test_unsynced_buffers_are_refused_naming_the_mode_on_any_device(device, how):
    t = _event_tensor(device)
    assert t.sync_mode == "event"
    with pytest.raises(hurray.UnsupportedError, match="'event'"):
        if how == "buffer":
            t.buffer(0)
        elif how == "array":
            np.asarray(t)
        elif how == "array_interface":
            t.__array_interface__
        else:
            t.__array_struct__


@pytest.mark.parametrize("device", [CUDA, hurray.Device("rocm", 1)], ids=["cuda", "rocm"])
def test_unsynced_sparse_components_are_refused_naming_the_mode(device):
    values = np.arange(3, dtype=np.float32)
    cols = np.array([0, 2, 1], dtype=np.uint64)
    ptr = np.array([0, 2, 3], dtype=np.uint64)
    t = hurray.Tensor([values, cols, ptr], "float32", (2, 3), device=device,
                      layout=hurray.CsrLayout(nnz=3))
    wire = bytearray(t.descriptor.encode())
    for h in t.buffer_handles:  # every buffer in event mode
        tag = device.tag
        at = bytes(wire).index(struct.pack("<QIBBBB", h.byte_size, h.alignment, tag, 0, 0, 0))
        wire[at + 13] = 0x01
    ev = hurray._hurray._tensor_from_descriptor(hurray.Descriptor.decode(bytes(wire)),
                                                [values, cols, ptr])
    for attr in ("values", "col_indices", "row_ptr"):
        with pytest.raises(hurray.UnsupportedError, match="'event'"):
            getattr(ev, attr)
