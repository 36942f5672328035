"""hurray.Device: names or wire bytes, private range, refused reserved bytes,
device_id as runtime metadata, the DLPack device mapping table."""

import mmap
import pickle

import pytest

import hurray

NAMES = ["cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon", "level_zero", "opencl"]
CLASSES = ["standard", "host_pinned", "unified", "peer"]


def test_defaults_and_constants():
    cpu = hurray.device.cpu
    assert (cpu.kind, cpu.device_id, cpu.memory_class) == ("cpu", 0, "standard")
    assert (cpu.tag, cpu.memory_class_tag, cpu.is_private) == (0, 0, False)
    assert hurray.Device("cpu") is hurray.device.cpu
    for i, n in enumerate(NAMES):
        d = getattr(hurray.device, n)
        assert d.kind == n and d.tag == i
        assert hurray.Device(n) == d == hurray.Device(i)


def test_names_and_bytes_are_equivalent():
    assert hurray.Device("cuda", 1, "unified") == hurray.Device(0x01, 1, 0x02)
    d = hurray.Device("cuda", memory_class=1)
    assert d.memory_class == "host_pinned" and d.memory_class_tag == 1


def test_private_range():
    d = hurray.Device(0xF3, 2, 0xF1)
    assert d.kind == "private" and d.memory_class == "private"
    assert d.is_private and d.tag == 0xF3 and d.memory_class_tag == 0xF1
    assert "0xf3" in repr(d) and "0xf1" in repr(d)
    e = hurray.Device(0xF4, 2, 0xF1)
    assert d != e and repr(d) != repr(e)
    assert hurray.Device(0xF0, 0, "standard").memory_class == "standard"
    assert hurray.Device(0xFE).is_private


@pytest.mark.parametrize("kind", [0x09, 0x10, 0x80, 0xEF, 0xFF, 256, -1])
def test_reserved_and_invalid_device_bytes_are_refused(kind):
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device(kind)


@pytest.mark.parametrize("mc", [0x04, 0x40, 0xEF, 0xFF])
def test_reserved_and_invalid_class_bytes_are_refused(mc):
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device(0xF2, 0, mc)


def test_name_errors():
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("tpu")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("private")  # a private value needs its byte
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("cuda", memory_class="fast")
    with pytest.raises(TypeError):
        hurray.Device(1.0)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("cuda", -1)
    with pytest.raises(TypeError):
        hurray.Device("cuda", "0")


def test_validity_table():
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("cpu", memory_class="peer")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("webgpu", memory_class="host_pinned")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Device("cuda", memory_class=0xF1)  # private class needs a private device
    assert hurray.Device("cuda", memory_class="peer").memory_class == "peer"


def test_hash_eq_immutability_pickle():
    m = {hurray.device.cpu: "cpu0"}
    assert m[hurray.Device("cpu")] == "cpu0"
    assert hurray.Device("cuda", 0) != hurray.Device("cuda", 1)
    assert hash(hurray.Device("cuda", 3)) == hash(hurray.Device(1, 3))
    with pytest.raises(AttributeError):
        hurray.device.cpu.device_id = 3
    d = hurray.Device(0xF5, 7, 0xF2)
    assert pickle.loads(pickle.dumps(d)) == d


MAPPING = [
    ("cpu", "standard", 1), ("cpu", "host_pinned", 1), ("cpu", "unified", 1),
    ("cuda", "standard", 2), ("cuda", "host_pinned", 3), ("cuda", "unified", 13),
    ("cuda", "peer", None), ("rocm", "standard", 10), ("rocm", "host_pinned", 11),
    ("rocm", "unified", None), ("rocm", "peer", None), ("metal", "standard", 8),
    ("metal", "host_pinned", 8), ("metal", "unified", 8), ("vulkan", "standard", 7),
    ("vulkan", "host_pinned", 7), ("vulkan", "unified", 7), ("vulkan", "peer", None),
    ("webgpu", "standard", 15), ("hexagon", "standard", 16), ("hexagon", "host_pinned", 16),
    ("hexagon", "unified", 16), ("level_zero", "standard", 14),
    ("level_zero", "host_pinned", 14), ("level_zero", "unified", 14),
    ("level_zero", "peer", None), ("opencl", "standard", 4), ("opencl", "host_pinned", 4),
    ("opencl", "unified", 4),
]


@pytest.mark.parametrize("kind,mc,dl", MAPPING)
def test_dlpack_device_mapping(kind, mc, dl):
    dev = hurray.Device(kind, 3, mc)
    t = hurray.Tensor(mmap.mmap(-1, 64), hurray.uint8, [64], dev)
    assert t.device is dev
    if dl is None:
        with pytest.raises(hurray.UnsupportedError):
            t.__dlpack_device__()
        with pytest.raises(hurray.UnsupportedError):
            t.__dlpack__(max_version=(1, 1))
    else:
        assert t.__dlpack_device__() == (dl, 3)


def test_private_device_has_no_dlpack_mapping():
    t = hurray.Tensor(mmap.mmap(-1, 8), hurray.uint8, [8], hurray.Device(0xF1))
    with pytest.raises(hurray.UnsupportedError):
        t.__dlpack_device__()


def test_device_id_is_runtime_metadata():
    dev = hurray.Device("cuda", 5)
    t = hurray.Tensor(mmap.mmap(-1, 16), hurray.float32, [4], dev)
    assert t.__dlpack_device__() == (2, 5)
    # not on the wire: the decoded descriptor reports device 0
    d = hurray.Descriptor.decode(t.descriptor.encode())
    assert d.device == hurray.Device("cuda", 0)
    assert t.descriptor.device is dev
