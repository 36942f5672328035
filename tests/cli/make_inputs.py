#!/usr/bin/env python3
"""Writes the hand-built inputs of the hurray-inspect expected-output tests
(tests/cli/inputs/). The bytes are spelled out field by field from the wire
format, independently of libhurray, so that malformed inputs can be made too.
Run it again only when an input has to change; its output is committed."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inputs")

F32, I8, U4, F16 = 0x03, 0x10, 0x49, 0x01
ROW_MAJOR, COMPOSITE = 0x01, 0x0B
PARTITION, OVERLAY, GROUP = 1, 2, 3
HAS_SHARD, HAS_MEMBER = 0x02, 0x10


def handle(size, align=64, device=0, sync=0, mclass=0, reserved=0):
    return struct.pack("<QIBBBB", size, align, device, sync, mclass, reserved)


def descriptor(dtype, shape, layout=ROW_MAJOR, payload=b"", buffers=(), flags=0,
               byte_offset=0, shard=None, role=None, rank=None):
    body = b"".join(struct.pack("<Q", d) for d in shape)
    body += struct.pack("<Q", byte_offset) + payload
    body += bytes([len(buffers)]) + b"".join(buffers)
    if shard is not None:
        parent, offset = shard
        flags |= HAS_SHARD
        body += b"".join(struct.pack("<Q", d) for d in parent)
        body += b"".join(struct.pack("<Q", d) for d in offset)
    if role is not None:
        flags |= HAS_MEMBER
        body += bytes([role]) + bytes(15)
    n = 20 + len(body)
    r = len(shape) if rank is None else rank
    return b"HRRY" + bytes([1, 0]) + struct.pack("<IIBBI", n, flags, dtype, layout, r) + body


def head(shape, rule, members, op=0, shard=None):
    payload = struct.pack("<BBxxI", rule, op, members)
    return descriptor(F32, shape, COMPOSITE, payload, (), shard=shard)


def data(n, seed=0):
    return bytes((i * 37 + seed * 11) & 0xFF for i in range(n))


def f32s(values):
    return b"".join(struct.pack("<f", v) for v in values)


def tensor_f32(values, shape=None, **kw):
    raw = f32s(values)
    shape = [len(values)] if shape is None else shape
    return descriptor(F32, shape, buffers=(handle(len(raw)),), **kw) + raw


def write(name, blob):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)


def main():
    os.makedirs(OUT, exist_ok=True)
    # --- valid streams ---------------------------------------------------------------
    int8 = descriptor(I8, [5], buffers=(handle(5),)) + bytes([1, 0xFF, 2, 0x80, 127])
    write("stream_two_tensors.hrrs", tensor_f32([1.0, -2.5, 3.25]) + int8)
    empty = descriptor(F32, [0, 4], buffers=(handle(0),))
    write("stream_empty_tensor.hrrs", empty + tensor_f32([0.5, 1.5]))
    part = head([4, 4], PARTITION, 2)
    part += tensor_f32([float(i) for i in range(8)], [4, 2], shard=([4, 4], [0, 0]))
    part += tensor_f32([float(-i) for i in range(8)], [4, 2], shard=([4, 4], [0, 2]))
    write("stream_partition.hrrs", part + tensor_f32([9.0]))
    inner = head([2, 2], GROUP, 2) + tensor_f32([1.0]) + tensor_f32([2.0, 3.0])
    write("stream_nested_group.hrrs", head([1, 1], GROUP, 2) + inner + tensor_f32([4.0]))
    q4 = descriptor(U4, [6], buffers=(handle(3),)) + bytes([0x21, 0x43, 0xF5])
    write("stream_uint4.hrrs", q4)
    write("stream_empty.hrrs", b"")
    # --- invalid inputs ---------------------------------------------------------------
    two = tensor_f32([1.0, 2.0, 3.0, 4.0])
    write("bad_truncated_buffer.hrrs", two[:-3])
    d = descriptor(F32, [4], buffers=(handle(16),))
    write("bad_truncated_descriptor.bin", d[:30])
    write("bad_short_prefix.bin", b"HRRY\x01")
    write("bad_magic.bin", b"BAAD" + d[4:])
    write("bad_version.bin", d[:4] + bytes([9]) + d[5:])
    write("bad_rank.bin", descriptor(F32, [1], buffers=(handle(4),), rank=65))
    write("bad_alignment.bin", descriptor(F32, [4], buffers=(handle(16, align=3),)))
    write("bad_reserved_handle_byte.bin",
          descriptor(F32, [4], buffers=(handle(16, reserved=1),)))
    write("bad_cpu_event_sync.bin", descriptor(F32, [4], buffers=(handle(16, sync=1),)))
    write("bad_flags.bin", descriptor(F32, [4], buffers=(handle(16),), flags=0x80))
    write("bad_second_frame.hrrs", two + b"HRRZ" + bytes(16))
    torn = head([4, 4], PARTITION, 2)
    torn += tensor_f32([float(i) for i in range(8)], [4, 2], shard=([4, 4], [0, 0]))
    write("bad_torn_composite.hrrs", torn)
    gap = head([4, 4], PARTITION, 2)
    gap += tensor_f32([float(i) for i in range(8)], [4, 2], shard=([4, 4], [0, 0]))
    gap += tensor_f32([float(i) for i in range(4)], [4, 1], shard=([4, 4], [0, 2]))
    write("bad_partition_gap.hrrs", gap)
    deep = b"".join(head([1, 1], GROUP, 1) for _ in range(9)) + tensor_f32([1.0])
    write("bad_composite_too_deep.hrrs", deep)
    # --- invalid containers, derived from a valid one (file_composite_partition.hrry,
    # a copy of fuzz/corpus/file/composite_partition.hrry written by libhurray) ---
    with open(os.path.join(OUT, "file_composite_partition.hrry"), "rb") as f:
        good = f.read()
    index_offset = struct.unpack_from("<Q", good, len(good) - 40)[0]
    crc = bytearray(good)
    crc[index_offset + 10] ^= 0x01  # first byte of the first name: the CRC no longer matches
    write("file_bad_crc.hrry", bytes(crc))
    write("file_bad_truncated.hrry", good[: len(good) // 2])
    magic = bytearray(good)
    magic[len(good) - 4] = ord("X")  # trailer magic
    write("file_bad_trailer_magic.hrry", bytes(magic))
    # --- a views record the library refuses, derived from file_views.hrry (written by
    # hurray.save of a NumPy array and four views of it, checksums=False): the view
    # 'cols' made to reach past its base's 96 bytes (offset 8, shape [5, 2]); the
    # record keeps its length, so nothing else in the file moves ---
    with open(os.path.join(OUT, "file_views.hrry"), "rb") as f:
        views = bytearray(f.read())
    for old, new in ((b'"shape":[4,2],"byte_offset":4', b'"shape":[5,2],"byte_offset":8'),):
        at = views.find(old)
        assert at > 0 and len(old) == len(new)
        views[at:at + len(old)] = new
    write("file_bad_views.hrry", bytes(views))


if __name__ == "__main__":
    main()
