"""An independent encoder of Hurray tensor descriptors, written from the spec text.

Standard library only. Everything on the wire is little-endian (metadata.md
§ Overall Descriptor Structure). The encoder is deliberately dumb: it writes
exactly the field values it is given, so that a caller can build invalid
descriptors as easily as valid ones, and it records the byte offset of every
field it writes (``Encoded.fields``) so that invalid vectors can name the
offset of the offending field.

A descriptor is described by a plain dict (see ``descriptor()``); the wire
order is (docs/spec/metadata.md; docs/internals/decisions.md § Descriptor encoding):

  fixed header (20) | shape u64[rank] | byte_offset u64 | layout payload |
  buffer table | [quantization] | [shard] | [statistics] | [extension type] |
  [composite member] | [trailing bytes]
"""

import math
import struct

DYN = 0xFFFFFFFFFFFFFFFF  # dynamic dimension sentinel (data-model.md § Dynamic Dimensions)
U32_MAX = 0xFFFFFFFF

# Descriptor flags (metadata.md § Flags).
F_QUANT = 0x01
F_SHARD = 0x02
F_EXT = 0x04
F_STATS = 0x08
F_MEMBER = 0x10

# Layout tags (memory-layout.md § Named Layout Tags).
L_ROW, L_COL, L_STRIDED, L_TILED, L_MORTON = 0x01, 0x02, 0x03, 0x04, 0x05
L_COO, L_CSR, L_CSC, L_CSF, L_PAGED, L_COMPOSITE = 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B
L_HILBERT = 0x40

# Element types (element-types.md): tag -> (name, bit width).
TYPES = {
    0x01: ("float16", 16), 0x02: ("bfloat16", 16), 0x03: ("float32", 32),
    0x04: ("float64", 64), 0x10: ("int8", 8), 0x11: ("uint8", 8),
    0x12: ("int16", 16), 0x13: ("uint16", 16), 0x14: ("int32", 32),
    0x15: ("uint32", 32), 0x16: ("int64", 64), 0x17: ("uint64", 64),
    0x20: ("bool", 1), 0x40: ("float8_e4m3", 8), 0x41: ("float8_e5m2", 8),
    0x42: ("float8_e8m0", 8), 0x43: ("float4_e2m1", 4), 0x44: ("float6_e2m3", 6),
    0x45: ("float6_e3m2", 6), 0x46: ("float128", 128), 0x48: ("int4", 4),
    0x49: ("uint4", 4), 0x4A: ("int2", 2), 0x4B: ("uint2", 2),
    0x50: ("complex64", 64), 0x51: ("complex128", 128),
}
T = {name: tag for tag, (name, _bits) in TYPES.items()}


def type_bytes(type_tag, count, ext=None):
    """Bytes needed for `count` contiguous elements (element-types.md § Buffer
    Size Calculation; metadata.md § Extension Type Section for private tags)."""
    if ext is not None:
        bw, pf = ext["bit_width"], ext["packing_factor"]
        if bw >= 8:
            return count * (bw // 8)
        return -(-count // pf)
    bits = TYPES[type_tag][1]
    if bits == 6:
        # Four 6-bit elements share one 3-byte group; the last group is whole.
        return -(-count // 4) * 3
    if bits < 8:
        return -(-count * bits // 8)
    return count * (bits // 8)


def f32(x):
    """Bit pattern of x rounded to binary32."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64(x):
    """Bit pattern of x as binary64."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f16(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def buf(size, align=64, dev=0x00, sync=0x00, mclass=0x00, reserved=0x00):
    """One buffer handle (buffer-protocol.md § Buffer Handle)."""
    return {"byte_size": size, "alignment": align, "device": dev, "sync": sync,
            "memory_class": mclass, "reserved": reserved}


def descriptor(type_tag, shape, layout, buffers, **kw):
    """A descriptor dict. Keys beyond the positional ones (all optional):
    magic, major, minor, flags (replaces the derived flags), flags_extra (OR-ed
    into them), rank (overrides len(shape)), byte_offset, buffer_count,
    quant, shard, stats, ext, member, trailing (bytes), length (overrides
    descriptor_length), truncate (cut the output to that many bytes), append
    (bytes after the descriptor, outside descriptor_length)."""
    d = {"type": type_tag, "shape": list(shape), "layout": layout, "buffers": list(buffers)}
    d.update(kw)
    return d


class Encoded:
    """Bytes of one encoded descriptor plus the offset of every field."""

    def __init__(self, data, fields, length):
        self.data = data
        self.fields = fields
        self.length = length


class _W:
    def __init__(self):
        self.b = bytearray()
        self.f = {}

    def mark(self, name):
        self.f.setdefault(name, len(self.b))

    def put(self, name, fmt, v):
        self.mark(name)
        self.b += struct.pack("<" + fmt, v)

    def u8(self, name, v):
        self.put(name, "B", v)

    def u16(self, name, v):
        self.put(name, "H", v)

    def u32(self, name, v):
        self.put(name, "I", v)

    def i32(self, name, v):
        self.put(name, "i", v)

    def u64(self, name, v):
        self.put(name, "Q", v)

    def i64(self, name, v):
        self.put(name, "q", v)

    def raw(self, name, data):
        self.mark(name)
        self.b += bytes(data)

    def u8s(self, name, values):
        self.mark(name)
        for i, v in enumerate(values):
            self.u8("%s[%d]" % (name, i), v)


def _tiled(w, levels, rank):
    for li, lv in enumerate(levels):
        p = "layout.tiled[%d]" % li
        w.mark(p)
        for k, t in enumerate(lv["tile_shape"]):
            w.u64("%s.tile_shape[%d]" % (p, k), t)
        w.u8(p + ".outer_layout", lv["outer_layout"])
        w.u8(p + ".inner_layout", lv["inner_layout"])
        w.u8s(p + ".reserved", lv.get("reserved", [0, 0]))
        if lv.get("outer_strides") is not None:
            for k, s in enumerate(lv["outer_strides"]):
                w.i64("%s.outer_strides[%d]" % (p, k), s)
        if lv.get("inner_strides") is not None:
            for k, s in enumerate(lv["inner_strides"]):
                w.i64("%s.inner_strides[%d]" % (p, k), s)


def _layout(w, lay, rank):
    tag = lay["tag"]
    if "raw" in lay:  # arbitrary payload bytes (reserved tags, hand-made payloads)
        w.raw("layout.raw", lay["raw"])
    elif tag in (L_ROW, L_COL):
        pass
    elif tag == L_STRIDED:
        for k, s in enumerate(lay["strides"]):
            w.i64("layout.strides[%d]" % k, s)
    elif tag == L_TILED:
        _tiled(w, lay["levels"], rank)
    elif tag == L_MORTON:
        for k, b in enumerate(lay["bits"]):
            w.u32("layout.morton_bits[%d]" % k, b)
    elif tag == L_COO:
        w.u64("layout.nnz", lay["nnz"])
        w.u8("layout.is_sorted", lay["is_sorted"])
        w.u8s("layout.reserved", lay.get("reserved", [0] * 7))
    elif tag in (L_CSR, L_CSC):
        w.u64("layout.nnz", lay["nnz"])
        w.u8s("layout.reserved", lay.get("reserved", [0] * 8))
    elif tag == L_CSF:
        w.u64("layout.nnz", lay["nnz"])
        for k, m in enumerate(lay["mode_order"]):
            w.u32("layout.mode_order[%d]" % k, m)
        w.u8s("layout.reserved", lay.get("reserved", [0] * 8))
    elif tag == L_PAGED:
        w.u32("layout.page_size", lay["page_size"])
        w.u64("layout.num_pages", lay["num_pages"])
        w.u32("layout.paged_axis", lay.get("paged_axis", 0))
        w.u32("layout.num_seqs", lay["num_seqs"])
        w.u8("layout.kv_role", lay["kv_role"])
        w.u32("layout.layer_index", lay["layer_index"])
        w.u8("layout.block_table_index_type", lay["index_type"])
        w.u8s("layout.reserved", lay.get("reserved", [0] * 6))
    elif tag == L_COMPOSITE:
        w.u8("layout.composition_rule", lay["rule"])
        w.u8("layout.combine_op", lay["combine_op"])
        w.u8s("layout.reserved", lay.get("reserved", [0, 0]))
        w.u32("layout.member_count", lay["member_count"])
    elif tag == L_HILBERT:
        w.u32("layout.hilbert_order", lay["order"])
        w.u32("layout.hilbert_rank", lay["hrank"])
    elif 0xF0 <= tag <= 0xFE:
        data = bytes(lay["data"])
        w.u64("layout.extension_layout_id", lay["layout_id"])
        w.u32("layout.extension_data_length", lay.get("data_length", len(data)))
        w.raw("layout.extension_data", data)
    else:
        raise ValueError("no payload rule for layout tag 0x%02X; give 'raw'" % tag)


def _quant(w, q):
    """Quantization section: u32 length, then the payload (quantization.md)."""
    w.mark("quantization")
    w.u32("quantization_length", 0)
    start = len(w.b)
    w.mark("quant")
    if "raw" in q:
        w.raw("quant.raw", q["raw"])
    else:
        s = q["scheme"]
        w.u8("quant.scheme_tag", s)
        w.u8("quant.scheme_version", q.get("version", 1))
        w.u16("quant.flags", q.get("flags", 0))
        if s == 0x01:
            w.u32("quant.scale", q["scale_bits"])
            w.i32("quant.zero_point", q["zero_point"])
            w.u8s("quant.reserved", q.get("reserved", [0] * 4))
        elif s == 0x02:
            w.u32("quant.axis", q["axis"])
            w.u32("quant.scale_buffer_index", q["scale_index"])
            w.u32("quant.zero_point_buffer_index", q["zp_index"])
            w.u8("quant.scale_type_tag", q.get("scale_type", 0x03))
            w.u8s("quant.reserved", q.get("reserved", [0] * 3))
        elif s == 0x03:
            w.u32("quant.axis", q["axis"])
            w.u32("quant.block_size", q["block_size"])
            w.u32("quant.scale_buffer_index", q["scale_index"])
            w.u32("quant.zero_point_buffer_index", q["zp_index"])
            w.u8("quant.scale_type_tag", q["scale_type"])
            w.u8s("quant.reserved", q.get("reserved", [0] * 3))
        elif s in (0x04, 0x05):
            w.u32("quant.axis", q["axis"])
            w.u32("quant.block_size", q["block_size"])
            w.u32("quant.scale_buffer_index", q["scale_index"])
        w.raw("quant.body", q.get("body", b""))  # opaque bytes of other schemes
        w.raw("quant.padding", q.get("padding", b""))
    n = len(w.b) - start
    length = q.get("length", n)
    struct.pack_into("<I", w.b, start - 4, length)
    if q.get("cut") is not None:  # keep only the first `cut` payload bytes
        del w.b[start + q["cut"]:]


def _stats(w, s):
    w.mark("statistics")
    w.u32("stats.computed_mask", s.get("mask", 0))
    w.u8s("stats.reserved", struct.pack("<I", s.get("reserved", 0)))  # u32, byte by byte
    w.u64("stats.nnz", s.get("nnz", 0))
    for name in ("sparsity_ratio", "value_min", "value_max", "value_abs_max",
                 "value_mean", "value_stddev"):
        w.u64("stats." + name, s.get(name, 0))
    w.u8("stats.nm_n", s.get("nm_n", 0))
    w.u8("stats.nm_m", s.get("nm_m", 0))
    w.u8("stats.has_nan", s.get("has_nan", 0))
    w.u8("stats.has_inf", s.get("has_inf", 0))
    w.u8s("stats.reserved2", s.get("reserved2", [0] * 4))


def _ext(w, e):
    w.mark("extension_type")
    w.u32("ext.bit_width", e["bit_width"])
    w.u8("ext.packing_factor", e["packing_factor"])
    w.u8("ext.is_float", e.get("is_float", 0))
    w.u8("ext.is_signed", e.get("is_signed", 0))
    w.u8("ext.sign_bits", e.get("sign_bits", 0))
    w.u8("ext.exponent_bits", e.get("exponent_bits", 0))
    w.u8("ext.mantissa_bits", e.get("mantissa_bits", 0))
    w.u8s("ext.reserved", e.get("reserved", [0, 0]))
    w.u32("ext.exponent_bias", e.get("exponent_bias", 0))
    w.u8("ext.has_nan", e.get("has_nan", 0))
    w.u8("ext.has_inf", e.get("has_inf", 0))
    w.u8s("ext.reserved2", e.get("reserved2", [0, 0]))


def derived_flags(d):
    f = 0
    if d.get("quant") is not None:
        f |= F_QUANT
    if d.get("shard") is not None:
        f |= F_SHARD
    if d.get("ext") is not None:
        f |= F_EXT
    if d.get("stats") is not None:
        f |= F_STATS
    if d.get("member") is not None:
        f |= F_MEMBER
    return f


def flags_of(d):
    if "flags" in d:
        return d["flags"]
    return derived_flags(d) | d.get("flags_extra", 0)


def encode(d):
    """Encodes a descriptor dict; returns an Encoded."""
    w = _W()
    shape = d["shape"]
    rank = d.get("rank", len(shape))
    w.raw("magic", d.get("magic", b"HRRY"))
    w.u8("version_major", d.get("major", 1))
    w.u8("version_minor", d.get("minor", 0))
    w.u32("descriptor_length", 0)
    w.u32("flags", flags_of(d))
    w.u8("type_tag", d["type"])
    w.u8("layout_tag", d["layout"]["tag"])
    w.u32("rank", rank)
    w.mark("shape")
    for k, s in enumerate(shape):
        w.u64("shape[%d]" % k, s)
    w.u64("byte_offset", d.get("byte_offset", 0))
    w.mark("layout")
    _layout(w, d["layout"], rank)
    w.mark("buffer_table")
    bufs = d["buffers"]
    w.u8("buffer_count", d.get("buffer_count", len(bufs)))
    for i, b in enumerate(bufs):
        p = "buffers[%d]" % i
        w.mark(p)
        w.u64(p + ".byte_size", b["byte_size"])
        w.u32(p + ".alignment", b["alignment"])
        w.u8(p + ".device_tag", b["device"])
        w.u8(p + ".sync_mode", b["sync"])
        w.u8(p + ".memory_class", b["memory_class"])
        w.u8(p + ".reserved", b["reserved"])
    if d.get("quant") is not None:
        _quant(w, d["quant"])
    if d.get("shard") is not None:
        sh = d["shard"]
        w.mark("shard")
        for k, v in enumerate(sh["parent_shape"]):
            w.u64("shard.parent_shape[%d]" % k, v)
        for k, v in enumerate(sh["offset"]):
            w.u64("shard.offset[%d]" % k, v)
    if d.get("stats") is not None:
        _stats(w, d["stats"])
    if d.get("ext") is not None:
        _ext(w, d["ext"])
    if d.get("member") is not None:
        m = d["member"]
        w.mark("composite_member")
        w.u8("member.role", m["role"])
        w.u8s("member.reserved", m.get("reserved", [0] * 15))
    w.mark("trailing")
    w.raw("trailing_bytes", d.get("trailing", b""))
    length = d.get("length", len(w.b))
    struct.pack_into("<I", w.b, 6, length & U32_MAX)
    data = bytes(w.b)
    if d.get("truncate") is not None:
        data = data[:d["truncate"]]
    data += d.get("append", b"")
    return Encoded(data, dict(w.f), length)


# ---- expected decoded values, as the manifest records them ---------------------------

def _layout_expect(lay):
    tag = lay["tag"]
    e = {"tag": tag}
    if tag == L_STRIDED:
        e["strides"] = list(lay["strides"])
    elif tag == L_TILED:
        e["levels"] = [{
            "tile_shape": list(lv["tile_shape"]),
            "outer_layout": lv["outer_layout"],
            "inner_layout": lv["inner_layout"],
            "outer_strides": None if lv.get("outer_strides") is None else list(lv["outer_strides"]),
            "inner_strides": None if lv.get("inner_strides") is None else list(lv["inner_strides"]),
        } for lv in lay["levels"]]
    elif tag == L_MORTON:
        e["bits"] = list(lay["bits"])
    elif tag == L_COO:
        e["nnz"] = lay["nnz"]
        e["is_sorted"] = lay["is_sorted"]
    elif tag in (L_CSR, L_CSC):
        e["nnz"] = lay["nnz"]
    elif tag == L_CSF:
        e["nnz"] = lay["nnz"]
        e["mode_order"] = list(lay["mode_order"])
    elif tag == L_PAGED:
        for k in ("page_size", "num_pages", "num_seqs", "kv_role", "layer_index"):
            e[k] = lay[k]
        e["paged_axis"] = lay.get("paged_axis", 0)
        e["block_table_index_type"] = lay["index_type"]
    elif tag == L_COMPOSITE:
        e["rule"] = lay["rule"]
        e["combine_op"] = lay["combine_op"]
        e["member_count"] = lay["member_count"]
    elif tag == L_HILBERT:
        e["order"] = lay["order"]
        e["rank"] = lay["hrank"]
    elif 0xF0 <= tag <= 0xFE:
        e["layout_id"] = lay["layout_id"]
        e["data_hex"] = bytes(lay["data"]).hex()
    return e


def _quant_expect(q, enc):
    start = enc.fields["quant"]
    length = struct.unpack_from("<I", enc.data, enc.fields["quantization_length"])[0]
    raw = enc.data[start:start + length]
    e = {"scheme": q["scheme"], "version": q.get("version", 1), "flags": q.get("flags", 0),
         "length": length, "raw_hex": raw.hex()}
    s = q["scheme"]
    if s == 0x01:
        e["scale_bits"] = q["scale_bits"]
        e["zero_point"] = q["zero_point"]
    elif s == 0x02:
        e.update(axis=q["axis"], scale_buffer_index=q["scale_index"],
                 zero_point_buffer_index=q["zp_index"], scale_type=q.get("scale_type", 0x03))
    elif s == 0x03:
        e.update(axis=q["axis"], block_size=q["block_size"], scale_buffer_index=q["scale_index"],
                 zero_point_buffer_index=q["zp_index"], scale_type=q["scale_type"])
    elif s in (0x04, 0x05):
        e.update(axis=q["axis"], block_size=q["block_size"], scale_buffer_index=q["scale_index"])
    return e


def expect(d, enc):
    """The decoded field values a reader must report for a valid descriptor."""
    e = {
        "descriptor_length": enc.length,
        "version_major": d.get("major", 1),
        "version_minor": d.get("minor", 0),
        "flags": flags_of(d),
        "type_tag": d["type"],
        "type_name": TYPES[d["type"]][0] if d["type"] in TYPES else None,
        "rank": len(d["shape"]),
        "shape": list(d["shape"]),
        "byte_offset": d.get("byte_offset", 0),
        "layout": _layout_expect(d["layout"]),
        "buffers": [{"byte_size": b["byte_size"], "alignment": b["alignment"],
                     "device": b["device"], "sync": b["sync"],
                     "memory_class": b["memory_class"]} for b in d["buffers"]],
        "quantization": None,
        "shard": None,
        "statistics": None,
        "extension_type": None,
        "composite_member": None,
        "trailing_hex": bytes(d.get("trailing", b"")).hex(),
    }
    if d.get("quant") is not None:
        e["quantization"] = _quant_expect(d["quant"], enc)
    if d.get("shard") is not None:
        e["shard"] = {"parent_shape": list(d["shard"]["parent_shape"]),
                      "offset": list(d["shard"]["offset"])}
    if d.get("stats") is not None:
        s = d["stats"]
        e["statistics"] = {
            "computed_mask": s.get("mask", 0), "nnz": s.get("nnz", 0),
            "sparsity_ratio_bits": s.get("sparsity_ratio", 0),
            "value_min_bits": s.get("value_min", 0), "value_max_bits": s.get("value_max", 0),
            "value_abs_max_bits": s.get("value_abs_max", 0),
            "value_mean_bits": s.get("value_mean", 0),
            "value_stddev_bits": s.get("value_stddev", 0),
            "nm_n": s.get("nm_n", 0), "nm_m": s.get("nm_m", 0),
            "has_nan": s.get("has_nan", 0), "has_inf": s.get("has_inf", 0),
        }
    if d.get("ext") is not None:
        x = d["ext"]
        e["extension_type"] = {k: x.get(k, 0) for k in (
            "bit_width", "packing_factor", "is_float", "is_signed", "sign_bits",
            "exponent_bits", "mantissa_bits", "exponent_bias", "has_nan", "has_inf")}
    if d.get("member") is not None:
        e["composite_member"] = {"role": d["member"]["role"]}
    return e


def ceil_div(a, b):
    return -(-a // b)


def is_pow2(x):
    return x > 0 and (x & (x - 1)) == 0


def log2(x):
    return int(math.log2(x))
