"""hurray.Descriptor: from Tensor.descriptor or decode, encode, trailing
bytes, equality, and the golden corpus."""

import json

import pytest

import hurray
from conftest import golden_dir


def test_tensor_descriptor_agrees_with_tensor():
    t = hurray.zeros([3, 4], dtype=hurray.float32)
    d = t.descriptor
    assert isinstance(d, hurray.Descriptor)
    for attr in ("shape", "ndim", "size", "buffer_count", "byte_offset"):
        assert getattr(d, attr) == getattr(t, attr)
    assert d.dtype is t.dtype
    assert d.device is t.device
    assert d.buffer_handles == t.buffer_handles
    assert d.buffer_handles[0].device is d.device
    assert d.layout.name == t.layout.name == "row_major"
    assert d.version == (1, 0)
    assert d.quantization is None and d.shard is None and d.statistics is None


def test_encode_decode_round_trip():
    for t in (hurray.zeros([3, 4], dtype=hurray.float32),
              hurray.Tensor(b"", hurray.int8, [None, 3]),
              hurray.zeros([7], dtype=hurray.dtype.int4),
              hurray.zeros([2, 2], dtype=hurray.float32).T):
        enc = t.descriptor.encode()
        assert isinstance(enc, bytes)
        assert t.descriptor.encoded_len == len(enc)
        d = hurray.Descriptor.decode(enc)
        assert d == t.descriptor
        assert d.encode() == enc
        assert d.shape == t.shape
        assert isinstance(d, hurray.Descriptor) and not isinstance(d, hurray.Tensor)


def test_decode_accepts_trailing_bytes_and_buffers():
    enc = hurray.zeros([2], dtype=hurray.float32).descriptor.encode()
    d = hurray.Descriptor.decode(enc + b"payload bytes follow")
    assert d.encode() == enc
    assert hurray.Descriptor.decode(bytearray(enc)) == d
    assert hurray.Descriptor.decode(memoryview(enc)) == d


def test_decode_rejects():
    enc = hurray.zeros([2], dtype=hurray.float32).descriptor.encode()
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Descriptor.decode(enc[:10])
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Descriptor.decode(b"")
    with pytest.raises(TypeError):
        hurray.Descriptor.decode("HRRY")


def test_not_constructible_and_hashable_by_value():
    with pytest.raises(TypeError):
        hurray.Descriptor()
    a = hurray.zeros([2], dtype=hurray.float32).descriptor
    b = hurray.zeros([2], dtype=hurray.float32).descriptor
    c = hurray.zeros([3], dtype=hurray.float32).descriptor
    assert a == b and hash(a) == hash(b) and a != c
    assert "float32" in repr(a)
    with pytest.raises(AttributeError):
        a.shape = (3,)


def _golden():
    d = golden_dir()
    if d is None:
        pytest.skip("golden corpus ../shared/golden is absent")
    return d, json.loads((d / "manifest.json").read_text())


def test_golden_descriptors_decode_and_reencode():
    root, manifest = _golden()
    cases = manifest["descriptors"]
    assert cases
    for case in cases:
        raw = (root / case["file"]).read_bytes()
        exp = case["expect"]
        d = hurray.Descriptor.decode(raw)
        what = case["file"]
        assert d.dtype.name == exp["element_type"], what
        assert d.dtype.tag == exp["element_type_tag"], what
        assert list(d.shape) == exp["shape"], what
        assert d.byte_offset == exp["byte_offset"], what
        assert d.layout.tag == exp["layout_tag"], what
        assert d.version == (exp["version_major"], exp["version_minor"]), what
        assert [h.byte_size for h in d.buffer_handles] == exp["buffer_byte_sizes"], what
        assert d.buffer_count == len(exp["buffer_byte_sizes"]), what
        assert (d.quantization is not None) == exp["has_quantization"], what
        assert (d.shard is not None) == exp["has_shard"], what
        enc = d.encode()
        assert enc == raw, what  # byte for byte
        assert d.encoded_len == len(enc), what
        # the same bytes followed by data still decode to the same descriptor
        assert hurray.Descriptor.decode(raw + b"\0" * 32) == d, what


def test_golden_sections_are_the_authoring_classes():
    """Every golden descriptor's sections come back as the classes Tensor takes, and each
    section survives on its own (encode/decode, equality with a rebuilt tensor's)."""
    root, manifest = _golden()
    seen = set()
    for case in manifest["descriptors"]:
        d = hurray.Descriptor.decode((root / case["file"]).read_bytes())
        layout = d.layout
        assert isinstance(layout, hurray.Layout) and type(layout) is not hurray.Layout
        assert layout.tag == d.layout.tag and layout == d.layout and hash(layout) == hash(d.layout)
        seen.add(type(layout).__name__)
        assert layout.name in repr(d)
        if layout.is_virtual:
            continue
        layout.validate_against_shape(d.shape)
        q = d.quantization
        if q is not None:
            assert hurray.decode_quantization(q.encode()) == q
            seen.add(type(q).__name__)
        if d.shard is not None:
            assert hurray.Shard(d.shard.parent_shape, d.shard.shard_offset) == d.shard
        if d.statistics is not None:
            seen.add("Statistics")
    assert {"RowMajorLayout", "CsrLayout", "CompositeLayout", "PerBlockAffine"} <= seen


def test_relayed_unknown_element_type():
    wire = bytearray(hurray.zeros((3,), dtype="float32").descriptor.encode())
    assert wire[14] == 0x03  # type_tag
    wire[14] = 0x07  # unassigned
    with pytest.raises(hurray.InvalidDescriptorError, match="0x07"):
        hurray.Descriptor.decode(bytes(wire))
    d = hurray.Descriptor.decode(bytes(wire), permissive=True)
    dt = d.dtype
    assert (dt.name, dt.tag, dt.bit_width, dt.itemsize, dt.is_extension) == ("unknown", 7, None,
                                                                              None, False)
    assert repr(dt) == "hurray.Dtype('unknown', tag=0x07)" and d.dtype is dt
    assert d.encode() == bytes(wire)  # relayed verbatim
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_tag(0x07)  # still names no type
    with pytest.raises(hurray.InvalidDescriptorError, match="relayed"):
        hurray.Tensor(bytes(12), dt, (3,))
