"""Invalid descriptors: one per MUST-reject rule, each with the status a strict
reader must return and, where one field is at fault, that field's name (the
generator turns it into a byte offset).

Each vector is a dict: name, description, rule (document, section), d (the
descriptor dict), status, field (or None), field_start (the first byte of a
multi-byte reserved field, when `field` names one byte of it), permissive
("roundtrip": a permissive decode must succeed and re-encode to the same bytes;
"reject": permissive decode fails with the same status; None: not checked).

Each vector breaks exactly one rule of an otherwise valid descriptor, so the
expected status does not depend on the order in which a reader checks.
"""

import copy

from hrry_encoder import (
    DYN, F_EXT, F_SHARD, L_COL, L_COO, L_CSC, L_CSF, L_CSR, L_HILBERT,
    L_MORTON, L_PAGED, L_ROW, L_STRIDED, L_TILED, T, TYPES, buf, descriptor, f32, f64)
from vectors_valid import (BP, DM, ET, MD, ML, QZ, SCHEME_DOC, SCHEME_NAME, STORAGE, coo,
                           csf_example, csr, dense, head, lay, paged, qz, scheme_storage,
                           tiled_level)

MAGIC = "ERR_INVALID_MAGIC"
VER = "ERR_VERSION_MISMATCH"
LAYOUT = "ERR_INVALID_LAYOUT"
TYPE = "ERR_INVALID_TYPE"
SYNC = "ERR_INVALID_SYNC_MODE"
BT = "ERR_INVALID_BUFFER_TABLE"
SIZE = "ERR_BUFFER_SIZE"
QUANT = "ERR_INVALID_QUANTIZATION"
COMP = "ERR_INVALID_COMPOSITE"
SHARD = "ERR_INVALID_SHARD"
STATS = "ERR_INVALID_STATISTICS"

VS = "docs/spec/versioning.md"


class _Collector:
    def __init__(self):
        self.v = []

    def __call__(self, name, description, rule, d, status, field=None, field_start=None,
                 permissive=None):
        self.v.append({"name": name, "description": description, "rule": rule, "d": d,
                       "status": status, "field": field, "field_start": field_start,
                       "permissive": permissive})


def rm():
    """The spec's worked example, with the 48-byte buffer its shape needs."""
    return dense(T["float32"], [3, 4])


def mutated(d, **kw):
    d = copy.deepcopy(d)
    d.update(kw)
    return d


def with_layout(d, **kw):
    d = copy.deepcopy(d)
    d["layout"].update(kw)
    return d


def with_buffer(d, i, **kw):
    d = copy.deepcopy(d)
    d["buffers"][i].update(kw)
    return d


def with_quant(d, **kw):
    d = copy.deepcopy(d)
    d["quant"].update(kw)
    return d


def with_section(d, key, **kw):
    d = copy.deepcopy(d)
    d[key].update(kw)
    return d


def header(add):
    add("magic_bad", "magic 'HRRZ'", (MD, "Fixed Header"), mutated(rm(), magic=b"HRRZ"),
        MAGIC, "magic", permissive="reject")
    add("magic_lowercase", "magic 'hrry'", (MD, "Fixed Header"), mutated(rm(), magic=b"hrry"),
        MAGIC, "magic")
    add("magic_zero", "magic all zero", (MD, "Fixed Header"),
        mutated(rm(), magic=b"\x00\x00\x00\x00"), MAGIC, "magic")
    add("major_2", "version_major 2 (newer than this reader)", (MD, "Version Compatibility"),
        mutated(rm(), major=2), VER, "version_major", permissive="reject")
    add("major_255", "version_major 255", (MD, "Version Compatibility"),
        mutated(rm(), major=255), VER, "version_major")
    add("length_19", "descriptor_length 19 (< 20)", (MD, "Fixed Header"),
        mutated(rm(), length=19), LAYOUT, "descriptor_length")
    add("length_0", "descriptor_length 0", (MD, "Fixed Header"), mutated(rm(), length=0),
        LAYOUT, "descriptor_length")
    add("length_beyond_input", "descriptor_length 62 but only 61 bytes available",
        (MD, "Fixed Header"), mutated(rm(), length=62), LAYOUT, "descriptor_length")
    add("length_u32_max", "descriptor_length 0xFFFFFFFF with 61 bytes available",
        (MD, "Fixed Header"), mutated(rm(), length=0xFFFFFFFF), LAYOUT, "descriptor_length")
    add("length_one_short", "descriptor_length 60: the buffer handle's last byte lies past it",
        (MD, "Fixed Header"), mutated(rm(), length=60), LAYOUT)
    add("truncated_9_bytes", "input of 9 bytes: descriptor_length cannot be read",
        (MD, "Fixed Header"), mutated(rm(), truncate=9), LAYOUT)
    add("truncated_header_12", "input of 12 bytes, declared length 61", (MD, "Fixed Header"),
        mutated(rm(), truncate=12), LAYOUT)
    base = rm()
    cuts = [("shape", 28, "inside shape[1]"), ("byte_offset", 40, "inside byte_offset"),
            ("buffer_count", 44, "before buffer_count"), ("buffer_handle", 50,
                                                          "inside the buffer handle")]
    for what, n, where in cuts:
        add("truncated_%s" % what, "descriptor_length = input length = %d: ends %s" % (n, where),
            (MD, "Fixed Header"), mutated(base, length=n, truncate=n), LAYOUT)
    st = dense(T["float32"], [3, 4], {"tag": L_STRIDED, "strides": [4, 1]})
    add("truncated_strides", "strided payload cut after strides[0]",
        (MD, "Strided (0x03)"), mutated(st, length=52, truncate=52), LAYOUT)
    add("truncated_buffer_count_too_high", "buffer_count 2 but the descriptor ends after one "
        "handle", (MD, "Buffer Table"), mutated(rm(), buffer_count=2), LAYOUT)
    nested = dense(T["float32"], [8, 8], {"tag": L_TILED, "levels": [
        tiled_level([4, 4], L_ROW, 0x04), tiled_level([2, 2])]})
    n = 44 + 20 + 10
    add("truncated_tiled_nested", "inner_layout 0x04 announces a nested level that is cut "
        "short", (MD, "Tiled / Blocked (0x04)"), mutated(nested, length=n, truncate=n), LAYOUT)
    csf = csf_example()
    add("truncated_csf_mode_order", "CSF payload cut inside mode_order",
        (lay("csf"), "Additional Descriptor Fields"), mutated(csf, length=66, truncate=66),
        LAYOUT)
    priv = descriptor(T["float32"], [4, 4], {"tag": 0xF0, "layout_id": 1, "data": b"\x01",
                                             "data_length": 1000}, [buf(64)])
    add("private_layout_data_length_beyond", "extension_data_length 1000 runs past the "
        "descriptor", (MD, "Extension Layouts (0xF0–0xFE)"), priv, LAYOUT)
    pt = dense(T["int8"], [4, 4], quant={"scheme": 0x01, "scale_bits": f32(0.5), "zero_point": 0})
    add("truncated_quant_length", "descriptor ends inside quantization_length",
        (MD, "Quantization Section"), mutated(pt, length=63, truncate=63), LAYOUT)
    add("quant_length_beyond_descriptor", "quantization_length 100 but 16 payload bytes remain",
        (MD, "Quantization Section"), with_quant(pt, length=100), LAYOUT)
    sh = dense(T["float32"], [8, 4], shard={"parent_shape": [8, 8], "offset": [0, 4]})
    add("truncated_shard", "descriptor ends inside the shard section", (MD, "Shard Section"),
        mutated(sh, length=70, truncate=70), LAYOUT)
    add("flag_shard_without_section", "HAS_SHARD set but the descriptor ends after the buffer "
        "table", (MD, "Shard Section"), mutated(rm(), flags_extra=F_SHARD), LAYOUT)
    stt = dense(T["float32"], [4], stats={"mask": 1, "nnz": 4})
    add("truncated_statistics", "descriptor ends inside the 72-byte statistics section",
        (MD, "Statistics Section"), mutated(stt, length=60, truncate=60), LAYOUT)
    ext = dense(0xF0, [4], ext={"bit_width": 16, "packing_factor": 1})
    add("truncated_extension_type", "descriptor ends inside the 20-byte extension section",
        (MD, "Extension Type Section"), mutated(ext, length=60, truncate=60), LAYOUT)
    mem = dense(T["float16"], [4, 4], shard={"parent_shape": [4, 4], "offset": [0, 0]},
                member={"role": 1})
    add("truncated_composite_member", "descriptor ends inside the composite member section",
        (MD, "Composite Member Section"), mutated(mem, length=100, truncate=100), LAYOUT)
    add("minor0_trailing_bytes", "version 1.0 descriptor with 3 bytes after its last section",
        (VS, "Compatibility Matrix"), mutated(rm(), trailing=b"\x00\x00\x00"), LAYOUT,
        "trailing_bytes")
    add("minor0_trailing_one_byte", "version 1.0 descriptor with 1 byte after its last section",
        (VS, "Compatibility Matrix"), mutated(rm(), trailing=b"\x07"), LAYOUT, "trailing_bytes")
    for bit in range(5, 32):
        add("flag_reserved_bit_%d" % bit, "reserved flag bit %d set" % bit, (MD, "Flags"),
            mutated(rm(), flags_extra=1 << bit), LAYOUT, "flags", permissive="roundtrip")


def tags(add):
    for tag, kind in [(0x00, "invalid"), (0xFF, "invalid"), (0x47, "reserved"),
                      (0x80, "reserved"), (0xEF, "reserved"), (0x05, "unassigned Tier 1"),
                      (0x30, "unassigned Tier 1"), (0x3F, "unassigned Tier 1"),
                      (0x52, "unassigned Tier 2"), (0x7F, "unassigned Tier 2")]:
        add("type_tag_0x%02X" % tag, "type tag 0x%02X (%s)" % (tag, kind),
            (ET, "Type Identifier Encoding"), mutated(rm(), type=tag), TYPE, "type_tag",
            permissive="reject" if kind == "invalid" else "roundtrip")
    for tag, kind in [(0x00, "invalid"), (0xFF, "invalid"), (0x0C, "reserved"),
                      (0x3F, "reserved"), (0x41, "reserved"), (0x7F, "reserved"),
                      (0x80, "reserved"), (0xEF, "reserved")]:
        d = rm()
        d["layout"] = {"tag": tag, "raw": b""}
        add("layout_tag_0x%02X" % tag, "layout tag 0x%02X (%s)" % (tag, kind),
            (ML, "Layout Taxonomy"), d, LAYOUT, "layout_tag",
            permissive="reject" if kind == "invalid" else "roundtrip")
    # metadata.md § Extension Layouts: a reader that does not recognise
    # extension_layout_id must reject unless permissive; this library knows none.
    add("private_layout_f0", "private extension layout 0xF0, id 0x1122334455667788, 5 bytes "
        "of opaque data: unknown to this reader", (MD, "Extension Layouts (0xF0–0xFE)"),
        descriptor(T["float32"], [4, 4], {"tag": 0xF0, "layout_id": 0x1122334455667788,
                                          "data": b"\x01\x02\x03\x04\x05"}, [buf(64)]),
        LAYOUT, permissive="roundtrip")
    add("private_layout_fe_empty_data", "private extension layout 0xFE with no opaque data: "
        "unknown to this reader", (MD, "Extension Layouts (0xF0–0xFE)"),
        descriptor(T["float32"], [2], {"tag": 0xFE, "layout_id": 7, "data": b""}, [buf(8)]),
        LAYOUT, permissive="roundtrip")
    add("rank_65", "rank 65 (cap is 64)", (DM, "Rank"), dense(T["uint8"], [1] * 65), LAYOUT,
        "rank")
    add("rank_u32_max", "rank 0xFFFFFFFF (no shape bytes follow)", (DM, "Rank"),
        mutated(dense(T["uint8"], []), rank=0xFFFFFFFF), LAYOUT, "rank")
    scal = [
        ("col_major", {"tag": L_COL}),
        ("strided", {"tag": L_STRIDED, "strides": []}),
        ("tiled", {"tag": L_TILED, "levels": [tiled_level([])]}),
        ("morton", {"tag": L_MORTON, "bits": []}),
        ("hilbert", {"tag": L_HILBERT, "order": 1, "hrank": 0}),
    ]
    for name, layout in scal:
        add("scalar_%s" % name, "rank-0 tensor with layout %s (scalars are row-major only)" % name,
            (DM, "Scalar Tensors"), dense(T["float32"], [], layout), LAYOUT)
    add("scalar_coo", "rank-0 COO tensor (scalars are row-major only)", (DM, "Scalar Tensors"),
        descriptor(T["float32"], [], {"tag": L_COO, "nnz": 1, "is_sorted": 1},
                   [buf(4), buf(0)]), LAYOUT)


def payloads(add):
    tl = dense(T["float32"], [6, 8], {"tag": L_TILED, "levels": [tiled_level([2, 4])]})

    def tiled(**kw):
        d = copy.deepcopy(tl)
        d["layout"]["levels"][0].update(kw)
        return d

    add("tiled_tile_shape_zero", "tiled tile_shape[1] = 0", (lay("tiled"), "Additional "
        "Descriptor Fields"), tiled(tile_shape=[2, 0]), LAYOUT, "layout.tiled[0].tile_shape[1]")
    for v in (0x00, 0x04, 0xFF):
        add("tiled_outer_0x%02X" % v, "tiled outer_layout 0x%02X (must be 1, 2 or 3)" % v,
            (lay("tiled"), "Additional Descriptor Fields"), tiled(outer_layout=v), LAYOUT,
            "layout.tiled[0].outer_layout")
    for v in (0x00, 0x05, 0xFF):
        add("tiled_inner_0x%02X" % v, "tiled inner_layout 0x%02X (must be 1 to 4)" % v,
            (lay("tiled"), "Additional Descriptor Fields"), tiled(inner_layout=v), LAYOUT,
            "layout.tiled[0].inner_layout")
    for k in range(2):
        r = [0, 0]
        r[k] = 1
        add("tiled_reserved_%d" % k, "tiled _reserved[%d] = 1" % k,
            (lay("tiled"), "Additional Descriptor Fields"), tiled(reserved=r), LAYOUT,
            "layout.tiled[0].reserved[%d]" % k, "layout.tiled[0].reserved[0]")
    nest = dense(T["float32"], [8, 8], {"tag": L_TILED, "levels": [
        tiled_level([4, 4], L_ROW, 0x04), tiled_level([2, 2])]})

    def nested(**kw):
        d = copy.deepcopy(nest)
        d["layout"]["levels"][1].update(kw)
        return d

    add("tiled_nested_reserved", "second tiled level with _reserved[1] = 0x80",
        (MD, "Tiled / Blocked (0x04)"), nested(reserved=[0, 0x80]), LAYOUT,
        "layout.tiled[1].reserved[1]", "layout.tiled[1].reserved[0]")
    add("tiled_nested_tile_zero", "second tiled level with tile_shape[0] = 0",
        (MD, "Tiled / Blocked (0x04)"), nested(tile_shape=[0, 2]), LAYOUT,
        "layout.tiled[1].tile_shape[0]")
    add("tiled_nested_outer_bad", "second tiled level with outer_layout 0x04",
        (MD, "Tiled / Blocked (0x04)"), nested(outer_layout=0x04), LAYOUT,
        "layout.tiled[1].outer_layout")
    levels9 = [tiled_level([256 >> i], L_ROW, 0x04) for i in range(8)]
    levels9.append(tiled_level([1]))
    add("tiled_depth_9", "tiled uint8 [512] nested 9 levels deep (limit 8)",
        (MD, "Tiled / Blocked (0x04)"),
        dense(T["uint8"], [512], {"tag": L_TILED, "levels": levels9}), LAYOUT)
    add("morton_bits_zero", "morton_bits[1] = 0", (lay("morton"), "Additional Descriptor Fields"),
        descriptor(T["float32"], [4, 1], {"tag": L_MORTON, "bits": [2, 0]}, [buf(64)]), LAYOUT,
        "layout.morton_bits[1]")
    add("morton_shape_exceeds_bits", "morton [5, 4] with bits [2, 2]: 5 > 2^2",
        (lay("morton"), "Dimension Size Constraints"),
        descriptor(T["float32"], [5, 4], {"tag": L_MORTON, "bits": [2, 2]}, [buf(64)]), LAYOUT)
    add("hilbert_order_zero", "hilbert order 0 on [1, 1]", (lay("hilbert"), "Validity Constraints"),
        dense(T["float32"], [1, 1], {"tag": L_HILBERT, "order": 0, "hrank": 2}), LAYOUT,
        "layout.hilbert_order")
    add("hilbert_rank_mismatch", "hilbert_rank 3 on a rank-2 tensor",
        (lay("hilbert"), "Validity Constraints"),
        dense(T["float32"], [4, 4], {"tag": L_HILBERT, "order": 2, "hrank": 3}), LAYOUT,
        "layout.hilbert_rank")
    add("hilbert_rank_1", "hilbert on a rank-1 tensor (hilbert_rank 1 < 2)",
        (lay("hilbert"), "Validity Constraints"),
        dense(T["float32"], [4], {"tag": L_HILBERT, "order": 2, "hrank": 1}), LAYOUT)
    add("hilbert_shape_not_power", "hilbert order 2 on [4, 2]",
        (lay("hilbert"), "Validity Constraints"),
        descriptor(T["float32"], [4, 2], {"tag": L_HILBERT, "order": 2, "hrank": 2}, [buf(64)]),
        LAYOUT)
    add("hilbert_shape_other_order", "hilbert order 2 on [8, 8] (shape must be 2^order)",
        (lay("hilbert"), "Validity Constraints"),
        descriptor(T["float32"], [8, 8], {"tag": L_HILBERT, "order": 2, "hrank": 2}, [buf(256)]),
        LAYOUT)
    c = coo(T["float32"], [4, 4], 3)
    for v in (0x02, 0xFF):
        add("coo_is_sorted_0x%02X" % v, "COO is_sorted 0x%02X" % v,
            (lay("coo"), "Additional Descriptor Fields"), with_layout(c, is_sorted=v), LAYOUT,
            "layout.is_sorted")
    for name, base, nres in (("coo", c, 7), ("csr", csr(T["float32"], [4, 5], 5), 8),
                             ("csc", csr(T["float32"], [3, 5], 5, L_CSC), 8),
                             ("csf", csf_example(), 8)):
        for k in range(nres):
            r = [0] * nres
            r[k] = 0x01 if k % 2 == 0 else 0x80
            add("%s_reserved_%d" % (name, k), "%s _reserved[%d] = 0x%02X" % (name.upper(), k, r[k]),
                (lay(name), "Additional Descriptor Fields"), with_layout(base, reserved=r),
                LAYOUT, "layout.reserved[%d]" % k, "layout.reserved[0]")
    add("csr_rank_3", "CSR on a rank-3 tensor", (lay("csr"), "Description"),
        descriptor(T["float32"], [2, 3, 4], {"tag": L_CSR, "nnz": 2},
                   [buf(8), buf(16), buf(24)]), LAYOUT, "rank")
    add("csr_rank_1", "CSR on a rank-1 tensor", (lay("csr"), "Description"),
        descriptor(T["float32"], [4], {"tag": L_CSR, "nnz": 2}, [buf(8), buf(16), buf(40)]),
        LAYOUT, "rank")
    add("csc_rank_3", "CSC on a rank-3 tensor", (lay("csc"), "Description"),
        descriptor(T["float32"], [2, 3, 4], {"tag": L_CSC, "nnz": 2},
                   [buf(8), buf(16), buf(40)]), LAYOUT, "rank")
    add("csf_rank_2", "CSF on a rank-2 tensor (5 buffers)", (lay("csf"), "Description"),
        descriptor(T["float32"], [3, 4], {"tag": L_CSF, "nnz": 2, "mode_order": [0, 1]},
                   [buf(8), buf(16), buf(16), buf(24), buf(16)]), LAYOUT, "rank")
    add("csf_rank_1", "CSF on a rank-1 tensor (3 buffers)", (lay("csf"), "Description"),
        descriptor(T["float32"], [4], {"tag": L_CSF, "nnz": 2, "mode_order": [0]},
                   [buf(8), buf(16), buf(16)]), LAYOUT, "rank")
    add("csf_mode_order_duplicate", "CSF mode_order [0, 1, 1]", (lay("csf"), "Mode Ordering"),
        with_layout(csf_example(), mode_order=[0, 1, 1]), LAYOUT)
    add("csf_mode_order_out_of_range", "CSF mode_order [0, 1, 3]", (lay("csf"), "Mode Ordering"),
        with_layout(csf_example(), mode_order=[0, 1, 3]), LAYOUT, "layout.mode_order[2]")
    add("csf_mode_order_u32_max", "CSF mode_order [0xFFFFFFFF, 1, 2]",
        (lay("csf"), "Mode Ordering"),
        with_layout(csf_example(), mode_order=[0xFFFFFFFF, 1, 2]), LAYOUT,
        "layout.mode_order[0]")
    p = paged()
    add("block_paged_rank_2", "block-paged on a rank-2 tensor", (lay("block-paged"), "Description"),
        mutated(p, shape=[9, 16]), LAYOUT, "rank")
    add("block_paged_rank_4", "block-paged on a rank-4 tensor", (lay("block-paged"), "Description"),
        mutated(p, shape=[9, 2, 4, 2]), LAYOUT, "rank")
    add("block_paged_page_size_0", "block-paged page_size 0",
        (lay("block-paged"), "Additional Descriptor Fields"), with_layout(p, page_size=0), LAYOUT,
        "layout.page_size")
    for v in (1, 2):
        add("block_paged_paged_axis_%d" % v, "block-paged paged_axis %d" % v,
            (lay("block-paged"), "Storage Invariants"), with_layout(p, paged_axis=v), LAYOUT,
            "layout.paged_axis")
    for v in (0x03, 0xFF):
        add("block_paged_kv_role_0x%02X" % v, "block-paged kv_role 0x%02X" % v,
            (lay("block-paged"), "Additional Descriptor Fields"), with_layout(p, kv_role=v),
            LAYOUT, "layout.kv_role")
    for v in (0x02, 0xFF):
        add("block_paged_index_type_0x%02X" % v, "block-paged block_table_index_type 0x%02X" % v,
            (lay("block-paged"), "Additional Descriptor Fields"), with_layout(p, index_type=v),
            LAYOUT, "layout.block_table_index_type")
    for k in range(6):
        r = [0] * 6
        r[k] = 0x01
        add("block_paged_reserved_%d" % k, "block-paged _reserved[%d] = 1" % k,
            (lay("block-paged"), "Additional Descriptor Fields"), with_layout(p, reserved=r),
            LAYOUT, "layout.reserved[%d]" % k, "layout.reserved[0]")


def composite(add):
    h = head(0x01, 0x00, 2)
    add("composite_with_buffer", "composite head with buffer_count 1",
        (lay("composite"), "Head Descriptor"), mutated(h, buffers=[buf(256)]), COMP,
        "buffer_count")
    add("composite_byte_offset", "composite head with byte_offset 8",
        (lay("composite"), "Head Descriptor"), mutated(h, byte_offset=8), COMP, "byte_offset")
    for v, kind in ((0x00, "reserved"), (0x04, "reserved"), (0xEF, "reserved"),
                    (0xFF, "invalid"), (0xF0, "private, unknown to this reader")):
        add("composite_rule_0x%02X" % v, "composition_rule 0x%02X (%s)" % (v, kind),
            (lay("composite"), "Head Layout-Specific Fields"), with_layout(h, rule=v), COMP,
            "layout.composition_rule")
    for name, rule, op in (("partition_combine_1", 0x01, 0x01), ("group_combine_2", 0x03, 0x02),
                           ("overlay_combine_0", 0x02, 0x00), ("overlay_combine_3", 0x02, 0x03),
                           ("overlay_combine_0xFF", 0x02, 0xFF)):
        add("composite_%s" % name, "composite rule 0x%02X with combine_op 0x%02X" % (rule, op),
            (lay("composite"), "Head Layout-Specific Fields"),
            with_layout(h, rule=rule, combine_op=op), COMP, "layout.combine_op")
    for k in range(2):
        r = [0, 0]
        r[k] = 1
        add("composite_reserved_%d" % k, "composite head _reserved[%d] = 1" % k,
            (lay("composite"), "Head Layout-Specific Fields"), with_layout(h, reserved=r), LAYOUT,
            "layout.reserved[%d]" % k, "layout.reserved[0]")
    add("composite_member_count_open", "member_count 0xFFFFFFFF (open composite, reserved)",
        (lay("composite"), "Head Layout-Specific Fields"),
        with_layout(h, member_count=0xFFFFFFFF), COMP, "layout.member_count")
    add("composite_overlay_zero_members", "overlay head with member_count 0",
        (lay("composite"), "Validation"), head(0x02, 0x01, 0), COMP, "layout.member_count")
    add("composite_quantized_head", "int8 composite head carrying a (valid) per-tensor "
        "quantization section", (lay("composite"), "Head Descriptor"),
        head(0x01, 0x00, 2, (8, 8), T["int8"],
             quant={"scheme": 0x01, "scale_bits": f32(0.5), "zero_point": 0}), COMP)
    add("composite_head_member_section", "composite head with HAS_COMPOSITE_MEMBER",
        (lay("composite"), "Head Descriptor"),
        head(0x03, 0x00, 2, member={"role": 1}), COMP)
    mem = dense(T["float16"], [4, 4], shard={"parent_shape": [4, 4], "offset": [0, 0]},
                member={"role": 1})
    for v in (0x02, 0xFF):
        add("member_role_0x%02X" % v, "composite member_role 0x%02X" % v,
            (MD, "Composite Member Section"), with_section(mem, "member", role=v), COMP,
            "member.role")
    for k in range(15):
        r = [0] * 15
        r[k] = 0x01
        add("member_reserved_%d" % k, "composite member _reserved[%d] = 1" % k,
            (MD, "Composite Member Section"), with_section(mem, "member", reserved=r), LAYOUT,
            "member.reserved[%d]" % k, "member.reserved[0]")
    add("member_section_without_shard", "member section on a descriptor without a shard: "
        "only overlay members carry the section, and every overlay member carries a shard",
        (lay("composite"), "Members"), dense(T["float16"], [4, 4], member={"role": 0}), COMP)
    add("member_base_not_spanning", "base member (role 1) whose shard does not span its "
        "parent (offset [0, 2], shape [4, 2], parent [4, 4])",
        (lay("composite"), "Per-member checks (immediate)"),
        dense(T["float16"], [4, 2], shard={"parent_shape": [4, 4], "offset": [0, 2]},
              member={"role": 1}), COMP)


def handles(add):
    for v in (0, 3, 48, 96, 32, 1):
        why = "not a power of two" if v & (v - 1) or v == 0 else "below 64 for a non-empty buffer"
        add("alignment_%d" % v, "buffer alignment %d (%s)" % (v, why), (BP, "Buffer Handle"),
            with_buffer(rm(), 0, alignment=v), LAYOUT, "buffers[0].alignment")
    empty = descriptor(T["float32"], [0], {"tag": L_ROW}, [buf(0)])
    for v in (0, 3):
        add("alignment_empty_%d" % v, "empty buffer alignment %d (not a power of two)" % v,
            (BP, "Empty Buffers"), with_buffer(empty, 0, alignment=v), LAYOUT,
            "buffers[0].alignment")
    for v in (0x01, 0x80):
        add("handle_reserved_0x%02X" % v, "buffer handle _reserved = 0x%02X" % v,
            (BP, "Buffer Handle"), with_buffer(rm(), 0, reserved=v), LAYOUT, "buffers[0].reserved")
    for v, kind in ((0x09, "reserved"), (0xEF, "reserved"), (0xFF, "invalid")):
        add("device_tag_0x%02X" % v, "device tag 0x%02X (%s)" % (v, kind), (BP, "Device Tags"),
            with_buffer(rm(), 0, device=v), TYPE, "buffers[0].device_tag",
            permissive="reject" if kind == "invalid" else "roundtrip")
    for v, kind in ((0x04, "reserved"), (0xEF, "reserved"), (0xFF, "invalid")):
        add("memory_class_0x%02X" % v, "memory class 0x%02X (%s)" % (v, kind),
            (BP, "Memory Class Values"), with_buffer(rm(), 0, memory_class=v), TYPE,
            "buffers[0].memory_class",
            permissive="reject" if kind == "invalid" else "roundtrip")
    cuda = descriptor(T["float32"], [16], {"tag": L_ROW}, [buf(64, 4096, dev=0x01)])
    for v in (0x03, 0xFE, 0xFF):
        add("sync_mode_0x%02X" % v, "CUDA buffer with sync_mode 0x%02X" % v,
            (BP, "sync_mode Values"), with_buffer(cuda, 0, sync=v), SYNC, "buffers[0].sync_mode")
    for v in (0x01, 0x02):
        add("cpu_sync_mode_%d" % v, "CPU buffer with sync_mode %d (CPU must be "
            "producer-synced)" % v, (BP, "Producer Requirement"), with_buffer(rm(), 0, sync=v),
            SYNC, "buffers[0].sync_mode")
    pairs = [(0x00, 0x03, "cpu_peer"), (0x03, 0x03, "metal_peer"), (0x06, 0x03, "hexagon_peer"),
             (0x08, 0x03, "opencl_peer"), (0x05, 0x01, "webgpu_host_pinned"),
             (0x05, 0x02, "webgpu_unified"), (0x05, 0x03, "webgpu_peer"),
             (0x01, 0xF0, "cuda_private_class"), (0x00, 0xFE, "cpu_private_class"),
             (0xF0, 0x01, "private_device_host_pinned"), (0xF3, 0x03, "private_device_peer")]
    for dev, mc, name in pairs:
        add("device_pair_%s" % name, "(device 0x%02X, memory class 0x%02X) is not in the "
            "validity table" % (dev, mc), (BP, "Per-Device Validity"),
            descriptor(T["float32"], [16], {"tag": L_ROW}, [buf(64, 4096, dev=dev, mclass=mc)]),
            TYPE)
    add("mixed_devices", "CSR buffers on CUDA, CUDA and ROCm", (BP, "Device Colocation"),
        descriptor(T["float32"], [4, 5], {"tag": L_CSR, "nnz": 5},
                   [buf(20, 4096, 0x01), buf(40, 4096, 0x01), buf(40, 4096, 0x02)]), BT,
        "buffers[2].device_tag")
    add("mixed_devices_quant_param", "per-channel scale buffer on CUDA, data on CPU",
        (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(16, 4096, dev=0x01)],
                   quant={"scheme": 0x02, "flags": 1, "axis": 0, "scale_index": 1,
                          "zp_index": 0xFFFFFFFF}), BT, "buffers[1].device_tag")
    add("mixed_memory_classes", "CSR buffers on CUDA in standard, unified and standard memory",
        (BP, "Device Colocation"),
        descriptor(T["float32"], [4, 5], {"tag": L_CSR, "nnz": 5},
                   [buf(20, 4096, 0x01), buf(40, 4096, 0x01, mclass=0x02),
                    buf(40, 4096, 0x01)]), BT, "buffers[1].memory_class")


def counts(add):
    r = rm()
    add("count_dense_2", "row-major with 2 buffers", (ML, "Buffer Table"),
        mutated(r, buffers=[buf(48), buf(48)]), BT, "buffer_count")
    add("count_dense_0", "row-major with 0 buffers", (MD, "Buffer Table"),
        mutated(r, buffers=[]), LAYOUT, "buffer_count")
    c = coo(T["float32"], [4, 4], 3)
    add("count_coo_1", "COO with 1 buffer", (lay("coo"), "Buffer Table"),
        mutated(c, buffers=c["buffers"][:1]), BT, "buffer_count")
    add("count_coo_3", "COO with 3 buffers", (lay("coo"), "Buffer Table"),
        mutated(c, buffers=c["buffers"] + [buf(8)]), BT, "buffer_count")
    s = csr(T["float32"], [4, 5], 5)
    add("count_csr_2", "CSR with 2 buffers", (lay("csr"), "Buffer Table"),
        mutated(s, buffers=s["buffers"][:2]), BT, "buffer_count")
    add("count_csr_4", "CSR with 4 buffers (no quantization)", (lay("csr"), "Buffer Table"),
        mutated(s, buffers=s["buffers"] + [buf(8)]), BT, "buffer_count")
    sc = csr(T["float32"], [3, 5], 5, L_CSC)
    add("count_csc_2", "CSC with 2 buffers", (lay("csc"), "Buffer Table"),
        mutated(sc, buffers=sc["buffers"][:2]), BT, "buffer_count")
    f = csf_example()
    add("count_csf_2r", "CSF rank 3 with 6 buffers (2r instead of 2r+1)",
        (lay("csf"), "Buffer Table"), mutated(f, buffers=f["buffers"][:6]), BT, "buffer_count")
    add("count_csf_2r_plus_2", "CSF rank 3 with 8 buffers (no quantization)",
        (lay("csf"), "Buffer Table"), mutated(f, buffers=f["buffers"] + [buf(8)]), BT,
        "buffer_count")
    p = paged()
    add("count_block_paged_2", "block-paged with 2 buffers", (lay("block-paged"), "Buffer Table"),
        mutated(p, buffers=p["buffers"][:2]), BT, "buffer_count")
    add("count_block_paged_4", "block-paged with 4 buffers and no quantization",
        (lay("block-paged"), "Buffer Table"), mutated(p, buffers=p["buffers"] + [buf(40)]), BT,
        "buffer_count")
    pt = {"scheme": 0x01, "scale_bits": f32(0.5), "zero_point": 0}
    add("count_quant_per_tensor_2", "per-tensor quantized int8 with 2 buffers (scheme adds "
        "none)", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [4], {"tag": L_ROW}, [buf(4), buf(4)], quant=pt), BT,
        "buffer_count")
    sym = {"scheme": 0x02, "flags": 1, "axis": 0, "scale_index": 1, "zp_index": 0xFFFFFFFF}
    add("count_quant_per_channel_sym_3", "per-channel symmetric with 3 buffers (expects 2)",
        (qz("per-channel-affine"), "Description"),
        descriptor(T["int8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(16), buf(16)], quant=sym),
        BT, "buffer_count")
    add("count_quant_per_channel_asym_4", "per-channel asymmetric with 4 buffers (expects 3)",
        (qz("per-channel-affine"), "Description"),
        descriptor(T["int8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(16), buf(16), buf(16)],
                   quant={"scheme": 0x02, "axis": 0, "scale_index": 1, "zp_index": 2}),
        BT, "buffer_count")
    add("count_quant_shared_3", "per-channel with scales and zero points sharing buffer 1 but "
        "3 buffers declared (expects 2)", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [3, 2], {"tag": L_ROW}, [buf(6), buf(24), buf(24)],
                   quant={"scheme": 0x02, "axis": 0, "scale_index": 1, "zp_index": 1}),
        BT, "buffer_count")
    add("count_quant_per_block_3", "per-block symmetric with 3 buffers (expects 2)",
        (qz("per-block-affine"), "Referenced Buffers"),
        descriptor(T["int4"], [4, 64], {"tag": L_ROW}, [buf(128), buf(16), buf(16)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 32,
                          "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x01}),
        BT, "buffer_count")
    add("count_quant_nf4_3", "NF4 with 3 buffers (expects 2)", (qz("nf4"), "Referenced Buffer"),
        descriptor(T["uint4"], [2, 128], {"tag": L_ROW}, [buf(128), buf(16), buf(16)],
                   quant={"scheme": 0x04, "axis": 1, "block_size": 64, "scale_index": 1}),
        BT, "buffer_count")
    add("count_quant_mxfp_3", "MXFP with 3 buffers (expects 2)", (qz("mxfp"), "Referenced Buffer"),
        descriptor(T["float8_e4m3"], [2, 64], {"tag": L_ROW}, [buf(128), buf(4), buf(4)],
                   quant={"scheme": 0x05, "axis": 1, "block_size": 32, "scale_index": 1}),
        BT, "buffer_count")
    add("count_quant_csr_5", "CSR with per-channel symmetric quantization and 5 buffers "
        "(expects 4)", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [4, 5], {"tag": L_CSR, "nnz": 5},
                   [buf(5), buf(40), buf(40), buf(16), buf(16)], quant=sym), BT, "buffer_count")
    # byte_offset rules
    add("byte_offset_beyond_buffer0", "byte_offset 65 > size of buffer 0 (64); a dynamic "
        "dimension keeps the buffer-size rule out of play", (MD, "byte_offset"),
        descriptor(T["float32"], [DYN, 4], {"tag": L_ROW}, [buf(64)], byte_offset=65), SIZE,
        "byte_offset")
    for name, base in (("coo", coo(T["float32"], [4, 4], 3)),
                       ("csr", csr(T["float32"], [4, 5], 5)),
                       ("csc", csr(T["float32"], [3, 5], 5, L_CSC)),
                       ("csf", csf_example()), ("block_paged", paged())):
        add("byte_offset_%s" % name, "%s with byte_offset 8 (must be 0)" % name,
            (ML, "byte_offset"), mutated(base, byte_offset=8), LAYOUT, "byte_offset")


def sizes(add):
    def small(name, desc, rule, d, i, size):
        add("size_%s" % name, desc, rule, with_buffer(d, i, byte_size=size), SIZE,
            "buffers[%d].byte_size" % i)

    small("row_major", "row-major float32 [3, 4] in 47 bytes (needs 48)",
          (lay("row-major"), "Buffer Size"), rm(), 0, 47)
    small("col_major", "column-major float64 [3, 4] in 95 bytes",
          (lay("column-major"), "Buffer Size"), dense(T["float64"], [3, 4], {"tag": L_COL}), 0, 95)
    small("row_major_byte_offset", "row-major float32 [3, 4] at byte_offset 16 in 63 bytes "
          "(needs 64)", (MD, "byte_offset"), dense(T["float32"], [3, 4], byte_offset=16), 0, 63)
    neg = descriptor(T["float32"], [3, 4], {"tag": L_STRIDED, "strides": [-4, 1]}, [buf(48)],
                     byte_offset=32)
    small("strided_negative", "strided [-4, 1] float32 [3, 4] at byte_offset 32 in 47 bytes",
          (lay("strided"), "Buffer Size"), neg, 0, 47)
    small("strided_gap", "strided [8, 1] float32 [3, 4] in 79 bytes (needs 20 elements)",
          (lay("strided"), "Buffer Size"),
          descriptor(T["float32"], [3, 4], {"tag": L_STRIDED, "strides": [8, 1]}, [buf(80)]),
          0, 79)
    small("tiled_unpadded", "tiled [5, 7] tile [2, 4] in 140 bytes (needs 6 full tiles, 192)",
          (lay("tiled"), "Boundary Padding"),
          descriptor(T["float32"], [5, 7], {"tag": L_TILED, "levels": [tiled_level([2, 4])]},
                     [buf(192)]), 0, 140)
    small("morton", "morton [4, 4] bits [2, 2] float32 in 63 bytes",
          (lay("morton"), "Buffer Size"),
          dense(T["float32"], [4, 4], {"tag": L_MORTON, "bits": [2, 2]}), 0, 63)
    small("morton_padding", "morton [3, 3] bits [2, 2] float32 in 36 bytes (needs 2^4 "
          "elements)", (lay("morton"), "Buffer Size"),
          descriptor(T["float32"], [3, 3], {"tag": L_MORTON, "bits": [2, 2]}, [buf(64)]), 0, 36)
    small("hilbert", "hilbert [4, 4] float32 in 63 bytes", (lay("hilbert"), "Buffer Size"),
          dense(T["float32"], [4, 4], {"tag": L_HILBERT, "order": 2, "hrank": 2}), 0, 63)
    small("bool", "bool [10] in 1 byte", (ET, "Boolean Type"), dense(T["bool"], [10]), 0, 1)
    small("int4", "int4 [5] in 2 bytes", (ET, "Buffer Size Calculation"),
          dense(T["int4"], [5]), 0, 2)
    small("int2", "int2 [9] in 2 bytes", (ET, "Buffer Size Calculation"),
          dense(T["int2"], [9]), 0, 2)
    small("float6_3_bytes", "float6_e2m3 [5] in 3 bytes", (ET, "Buffer Size Calculation"),
          dense(T["float6_e2m3"], [5]), 0, 3)
    small("float6_partial_group", "float6_e3m2 [5] in 4 bytes: the second group of 3 bytes "
          "is incomplete (ceil(5/4)*3 = 6)", (ET, "Buffer Size Calculation"),
          dense(T["float6_e3m2"], [5]), 0, 4)
    small("float128", "float128 [2] in 31 bytes", (ET, "Buffer Size Calculation"),
          dense(T["float128"], [2]), 0, 31)
    small("complex64", "complex64 [3] in 23 bytes", (ET, "Buffer Size Calculation"),
          dense(T["complex64"], [3]), 0, 23)
    small("scalar_empty_buffer", "scalar float32 with an empty buffer", (DM, "Scalar Tensors"),
          dense(T["float32"], []), 0, 0)
    c = coo(T["float32"], [4, 4], 3)
    small("coo_values", "COO nnz 3 float32 values in 11 bytes", (lay("coo"), "Buffer Size"),
          c, 0, 11)
    small("coo_indices", "COO nnz 3 rank 2 indices in 47 bytes", (lay("coo"), "Buffer Size"),
          c, 1, 47)
    small("coo_bool_values", "COO bool nnz 9 values in 1 byte", (lay("coo"), "Buffer Size"),
          coo(T["bool"], [100], 9), 0, 1)
    s = csr(T["float32"], [4, 5], 5)
    for i, what, n in ((0, "values", 19), (1, "col_indices", 39), (2, "row_ptr", 39)):
        small("csr_%s" % what, "CSR [4, 5] nnz 5 %s in %d bytes" % (what, n),
              (lay("csr"), "Buffer Size"), s, i, n)
    small("csc_col_ptr", "CSC [3, 5] col_ptr in 32 bytes (sized by shape[0] instead of "
          "shape[1])", (lay("csc"), "Buffer Size"), csr(T["float32"], [3, 5], 5, L_CSC), 2, 32)
    f = csf_example()
    small("csf_values", "CSF nnz 4 float32 values in 15 bytes", (lay("csf"), "Buffer Size"),
          f, 0, 15)
    small("csf_pos0", "CSF pos_0 in 15 bytes (always 16)", (lay("csf"), "Buffer Size"), f, 1, 15)
    small("csf_leaf_crd", "CSF leaf crd in 31 bytes (nnz 4 needs 32)",
          (lay("csf"), "Buffer Size"), f, 6, 31)
    small("block_paged_pool", "block-paged page_pool in 639 bytes (needs 640)",
          (lay("block-paged"), "Storage Invariants"), paged(), 0, 639)
    small("block_paged_seq_ptr_u64", "block-paged uint64 index: seq_ptr in 12 bytes "
          "(needs (num_seqs + 1) * 8 = 24)", (lay("block-paged"), "Buffer Table"),
          paged(T["bfloat16"], index_type=1), 2, 12)
    small("extension_type", "private 4-bit type [5] in 2 bytes (needs 3)",
          (MD, "Extension Type Section"),
          dense(0xFE, [5], ext={"bit_width": 4, "packing_factor": 2, "is_signed": 1}), 0, 2)
    small("extension_type_24bit", "private 24-bit type [3] in 8 bytes (needs 9)",
          (MD, "Extension Type Section"),
          dense(0xF2, [3], ext={"bit_width": 24, "packing_factor": 1}), 0, 8)


def shards(add):
    base = dense(T["float32"], [8, 4], shard={"parent_shape": [8, 8], "offset": [0, 4]})
    add("shard_exceeds_parent", "shard offset [0, 5] + shape [8, 4] > parent [8, 8]",
        (MD, "Shard Section"), with_section(base, "shard", offset=[0, 5]), LAYOUT)
    add("shard_exceeds_dim0", "shard offset [1, 0] + shape [8, 4] > parent [8, 4]",
        (MD, "Shard Section"), with_section(base, "shard", parent_shape=[8, 4], offset=[1, 0]),
        LAYOUT)
    add("shard_offset_overflow", "shard offset 2^64-3 + shape 4 overflows 64 bits "
        "(parent 2^64-2)", (MD, "Shard Section"),
        dense(T["float32"], [4], shard={"parent_shape": [DYN - 1], "offset": [DYN - 2]}), LAYOUT)
    add("shard_parent_dynamic", "shard parent_shape[0] is the dynamic sentinel",
        (DM, "Dynamic Dimensions"), with_section(base, "shard", parent_shape=[DYN, 8]), SHARD,
        "shard.parent_shape[0]")
    add("shard_offset_dynamic", "shard offset[0] is the dynamic sentinel",
        (DM, "Dynamic Dimensions"), with_section(base, "shard", offset=[DYN, 4]), LAYOUT,
        "shard.offset[0]")
    add("shard_shape_dynamic", "sharded tensor whose own shape[0] is dynamic",
        (DM, "Dynamic Dimensions"),
        descriptor(T["float32"], [DYN, 4], {"tag": L_ROW}, [buf(1024)],
                   shard={"parent_shape": [8, 8], "offset": [0, 0]}), LAYOUT)
    add("shard_on_csf", "CSF tensor with a shard section", (lay("csf"), "Sharding"),
        mutated(csf_example(), shard={"parent_shape": [4, 3, 4], "offset": [2, 0, 0]}), LAYOUT)
    add("shard_on_block_paged", "block-paged tensor with a shard section",
        (lay("block-paged"), "Sharding"),
        mutated(paged(), shard={"parent_shape": [18, 2, 8], "offset": [9, 0, 0]}), LAYOUT)


def statistics(add):
    base = dense(T["float32"], [4, 4], stats={"mask": 0x3F, "nnz": 10,
                                              "sparsity_ratio": f64(0.375),
                                              "value_min": f64(-1.0), "value_max": f64(1.0),
                                              "value_abs_max": f64(1.0), "value_mean": f64(0.0),
                                              "value_stddev": f64(0.5), "nm_n": 2, "nm_m": 4})

    def st(**kw):
        return with_section(base, "stats", **kw)

    for bit in (6, 7, 31):
        add("stats_mask_bit_%d" % bit, "statistics computed_mask reserved bit %d" % bit,
            (MD, "computed_mask"), st(mask=0x3F | (1 << bit)), LAYOUT, "stats.computed_mask")
    for v, k in ((0x00000001, 0), (0x80000000, 3)):
        add("stats_reserved_0x%08X" % v, "statistics _reserved (u32) = 0x%08X" % v,
            (MD, "Field Encoding"), st(reserved=v), LAYOUT, "stats.reserved[%d]" % k,
            "stats.reserved[0]")
    for k in range(4):
        r = [0] * 4
        r[k] = 0x01
        add("stats_reserved2_%d" % k, "statistics _reserved2[%d] = 1" % k,
            (MD, "Field Encoding"), st(reserved2=r), LAYOUT, "stats.reserved2[%d]" % k,
            "stats.reserved2[0]")
    add("stats_nm_n_gt_m", "N:M sparsity 3:2 (n > m)", (MD, "Field Encoding"),
        st(nm_n=3, nm_m=2), STATS)
    for name, bits in (("negative", f64(-0.5)), ("neg_inf", f64(float("-inf"))),
                       ("nan", 0x7FF8000000000000)):
        add("stats_stddev_%s" % name, "statistics value_stddev %s (must be >= 0.0)" % name,
            (MD, "Field Encoding"), st(value_stddev=bits), STATS, "stats.value_stddev")
    for name, bits in (("negative", f64(-0.25)), ("above_1", f64(1.5)),
                       ("nan", 0x7FF8000000000000), ("inf", f64(float("inf")))):
        add("stats_sparsity_%s" % name, "statistics sparsity_ratio %s (must be in [0, 1])" % name,
            (MD, "Field Encoding"), st(sparsity_ratio=bits), STATS, "stats.sparsity_ratio")
    one = {"mask": 0x01, "nnz": 4}
    for name, d, rule in (("coo", coo(T["float32"], [4, 4], 3, stats=one), lay("coo")),
                          ("csr", csr(T["float32"], [4, 5], 5, stats=one), lay("csr")),
                          ("csc", csr(T["float32"], [3, 5], 5, L_CSC, stats=one), lay("csc")),
                          ("csf", mutated(csf_example(), stats={"mask": 0x01, "nnz": 3}),
                           lay("csf"))):
        add("stats_nnz_mismatch_%s" % name, "%s layout nnz differs from statistics nnz "
            "(NNZ_VALID set)" % name.upper(), (rule, "Interaction with Statistics Section"), d,
            STATS, "stats.nnz")


def extension(add):
    e16 = {"bit_width": 16, "packing_factor": 1, "is_float": 1, "sign_bits": 1,
           "exponent_bits": 5, "mantissa_bits": 10, "exponent_bias": 15, "has_nan": 1,
           "has_inf": 1}
    base = dense(0xF0, [4], ext=e16)

    def ex(**kw):
        return with_section(base, "ext", **kw)

    add("ext_flag_on_named_type", "HAS_EXTENSION_TYPE with its section on a float32 tensor",
        (MD, "Flags"), dense(T["float32"], [4], ext=e16), LAYOUT)
    add("ext_private_type_without_flag", "private type 0xF0 without the extension section",
        (MD, "Extension Type Section"), descriptor(0xF0, [4], {"tag": L_ROW}, [buf(8)]), LAYOUT)
    add("ext_private_type_0xFE_without_flag", "private type 0xFE without the extension section",
        (MD, "Extension Type Section"), descriptor(0xFE, [4], {"tag": L_ROW}, [buf(8)]), LAYOUT)
    add("ext_flag_without_section", "private type 0xF0 with HAS_EXTENSION_TYPE but the "
        "descriptor ends before the section", (MD, "Extension Type Section"),
        descriptor(0xF0, [4], {"tag": L_ROW}, [buf(8)], flags_extra=F_EXT), LAYOUT)
    for bw, pf in ((0, 1), (6, 1), (3, 2), (7, 1), (5, 1)):
        add("ext_bit_width_%d" % bw, "extension bit_width %d (packing_factor %d)" % (bw, pf),
            (MD, "Extension Type Section"),
            ex(bit_width=bw, packing_factor=pf, is_float=0, sign_bits=0, exponent_bits=0,
               mantissa_bits=0, exponent_bias=0, has_nan=0, has_inf=0),
            LAYOUT, "ext.bit_width")
    for bw, pf in ((4, 4), (16, 2), (8, 0), (1, 1), (2, 8)):
        add("ext_packing_bw%d_pf%d" % (bw, pf), "extension bit_width %d with packing_factor %d"
            % (bw, pf), (MD, "Extension Type Section"),
            ex(bit_width=bw, packing_factor=pf, is_float=0, sign_bits=0, exponent_bits=0,
               mantissa_bits=0, exponent_bias=0, has_nan=0, has_inf=0),
            LAYOUT, "ext.packing_factor")
    for k in range(2):
        r = [0, 0]
        r[k] = 1
        add("ext_reserved_%d" % k, "extension _reserved[%d] = 1" % k,
            (MD, "Extension Type Section"), ex(reserved=r), LAYOUT, "ext.reserved[%d]" % k,
            "ext.reserved[0]")
        add("ext_reserved2_%d" % k, "extension _reserved2[%d] = 1" % k,
            (MD, "Extension Type Section"), ex(reserved2=r), LAYOUT, "ext.reserved2[%d]" % k,
            "ext.reserved2[0]")
    add("ext_float_signed", "extension float type with is_signed 1",
        (MD, "Extension Type Section"), ex(is_signed=1), TYPE, "ext.is_signed")
    add("ext_sign_bits_2", "extension float type with sign_bits 2",
        (MD, "Extension Type Section"), ex(sign_bits=2), TYPE, "ext.sign_bits")
    i16 = {"bit_width": 16, "packing_factor": 1, "is_float": 0, "is_signed": 1}
    ibase = dense(0xF0, [4], ext=i16)
    for field, v in (("sign_bits", 1), ("exponent_bits", 5), ("mantissa_bits", 10),
                     ("exponent_bias", 15)):
        add("ext_int_%s" % field, "extension integer type with %s %d (must be 0)" % (field, v),
            (MD, "Extension Type Section"), with_section(ibase, "ext", **{field: v}), TYPE,
            "ext.%s" % field)


def quantization(add):
    def pt_desc(type_tag=T["int8"], n=4, **q):
        qq = {"scheme": 0x01, "scale_bits": f32(0.5), "zero_point": 0}
        qq.update(q)
        return dense(type_tag, [n], quant=qq)

    for v, kind, perm in ((0x00, "invalid", "reject"), (0xFF, "invalid", "reject"),
                          (0x06, "unassigned Tier 1", "roundtrip"),
                          (0x3F, "unassigned Tier 1", "roundtrip"),
                          (0x40, "unassigned Tier 2", "roundtrip"),
                          (0x5F, "unassigned Tier 2", "roundtrip"),
                          (0x60, "reserved nested", "roundtrip"),
                          (0x7F, "reserved nested", "roundtrip"),
                          (0x80, "reserved", "roundtrip"), (0xEF, "reserved", "roundtrip")):
        d = dense(T["uint8"], [4], quant={"scheme": v, "version": 1, "flags": 0,
                                          "body": b"\x00\x00\x00\x3f" + b"\x00" * 8})
        add("quant_scheme_0x%02X" % v, "quantization scheme tag 0x%02X (%s)" % (v, kind),
            (QZ, "Scheme Tag Space"), d, QUANT, "quant.scheme_tag", permissive=perm)
    add("quant_version_2", "per-tensor scheme_version 2", (QZ, "Version Compatibility"),
        pt_desc(version=2), QUANT, "quant.scheme_version")
    add("quant_version_255", "per-tensor scheme_version 255", (QZ, "Version Compatibility"),
        pt_desc(version=255), QUANT, "quant.scheme_version")
    for n in (12, 4, 3, 0):
        add("quant_per_tensor_length_%d" % n, "per-tensor payload of %d bytes (needs 16)" % n,
            (qz("per-tensor-affine"), "Binary Encoding"),
            mutated(pt_desc(), quant={"scheme": 0x01, "scale_bits": f32(0.5), "zero_point": 0,
                                      "length": n, "cut": n}), QUANT)
    sym_pc = {"scheme": 0x02, "flags": 1, "axis": 0, "scale_index": 1, "zp_index": 0xFFFFFFFF}
    pc = descriptor(T["int8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(16)], quant=sym_pc)
    pca = descriptor(T["uint8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(16), buf(16)],
                     quant={"scheme": 0x02, "axis": 0, "scale_index": 1, "zp_index": 2})
    pb = descriptor(T["int4"], [4, 64], {"tag": L_ROW}, [buf(128), buf(16)],
                    quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 32,
                           "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x01})
    pba = descriptor(T["uint8"], [2, 16], {"tag": L_ROW}, [buf(32), buf(8), buf(16)],
                     quant={"scheme": 0x03, "axis": 1, "block_size": 8, "scale_index": 1,
                            "zp_index": 2, "scale_type": 0x02})
    nf = descriptor(T["uint4"], [2, 128], {"tag": L_ROW}, [buf(128), buf(16)],
                    quant={"scheme": 0x04, "axis": 1, "block_size": 64, "scale_index": 1})
    mx = descriptor(T["float8_e4m3"], [2, 64], {"tag": L_ROW}, [buf(128), buf(4)],
                    quant={"scheme": 0x05, "axis": 1, "block_size": 32, "scale_index": 1})
    for name, base, need in (("per_channel", pc, 20), ("per_block", pb, 24), ("nf4", nf, 16),
                             ("mxfp", mx, 16)):
        add("quant_%s_length_%d" % (name, need - 4), "%s payload of %d bytes (needs %d)" %
            (name, need - 4, need), (QZ, "Descriptor Header"),
            with_quant(base, length=need - 4, cut=need - 4), QUANT)
    for name, base, v in (("per_tensor", pt_desc(), 0x0001), ("per_tensor", pt_desc(), 0x8000),
                          ("per_channel", pc, 0x0003), ("per_block", pb, 0x8001),
                          ("nf4", nf, 0x0001), ("mxfp", mx, 0x0002)):
        add("quant_%s_flags_0x%04X" % (name, v), "%s flags 0x%04X (reserved bits)" % (name, v),
            (QZ, "Descriptor Header"), with_quant(base, flags=v), QUANT, "quant.flags")
    for name, base, n in (("per_tensor", pt_desc(), 4), ("per_channel", pc, 3),
                          ("per_block", pb, 3)):
        for k in range(n):
            r = [0] * n
            r[k] = 0x01
            add("quant_%s_reserved_%d" % (name, k), "%s _reserved[%d] = 1" % (name, k),
                (qz(name.replace("_", "-") + "-affine"), "Binary Encoding"),
                with_quant(base, reserved=r), QUANT, "quant.reserved[%d]" % k,
                "quant.reserved[0]")
    # storage types not allowed by the scheme: every named type outside its list
    for scheme in sorted(STORAGE):
        for tag in sorted(TYPES):
            tname = TYPES[tag][0]
            if tname in STORAGE[scheme]:
                continue
            add("quant_storage_%s_%s" % (SCHEME_NAME[scheme], tname),
                "%s quantization of %s storage (not allowed)" % (SCHEME_NAME[scheme], tname),
                (qz(SCHEME_DOC[scheme]), "Valid Storage Types"), scheme_storage(scheme, tag),
                QUANT)
    # per-tensor values
    for name, bits in (("zero", 0x00000000), ("negative_zero", 0x80000000),
                       ("inf", 0x7F800000), ("negative_inf", 0xFF800000),
                       ("qnan", 0x7FC00000), ("snan_payload", 0x7F800001)):
        add("quant_per_tensor_scale_%s" % name, "per-tensor scale %s" % name,
            (qz("per-tensor-affine"), "Validity Constraints"), pt_desc(scale_bits=bits), QUANT,
            "quant.scale")
    for tname, zp in (("uint8", 256), ("uint8", -1), ("int8", 128), ("int8", -129),
                      ("uint4", 16), ("int4", 8), ("int4", -9), ("uint2", 4), ("int2", 2),
                      ("int2", -3), ("int16", 32768), ("uint16", 65536), ("uint16", -1),
                      ("uint32", -1)):
        add("quant_per_tensor_zp_%s_%s" % (tname, str(zp).replace("-", "minus_")),
            "per-tensor zero_point %d outside the %s range" % (zp, tname),
            (qz("per-tensor-affine"), "Validity Constraints"), pt_desc(T[tname], zero_point=zp),
            QUANT, "quant.zero_point")
    # axis
    for name, base, axis, doc in (("per_channel", pc, 2, "per-channel-affine"),
                                  ("per_channel", pc, 0xFFFFFFFF, "per-channel-affine"),
                                  ("per_block", pb, 2, "per-block-affine"),
                                  ("nf4", nf, 2, "nf4"), ("mxfp", mx, 5, "mxfp")):
        add("quant_%s_axis_%d" % (name, axis), "%s axis %d on a rank-2 tensor" % (name, axis),
            (qz(doc), "Validity Constraints"), with_quant(base, axis=axis), QUANT, "quant.axis")
    add("quant_per_channel_scalar", "per-channel quantization of a scalar (axis 0 >= rank 0)",
        (qz("per-channel-affine"), "Validity Constraints"),
        descriptor(T["int8"], [], {"tag": L_ROW}, [buf(1), buf(4)], quant=sym_pc), QUANT,
        "quant.axis")
    # block sizes
    for v in (3, 1, 0, 6):
        add("quant_per_block_block_%d" % v, "per-block block_size %d" % v,
            (qz("per-block-affine"), "Validity Constraints"), with_quant(pb, block_size=v),
            QUANT, "quant.block_size")
    add("quant_per_block_block_gt_shape", "per-block block_size 128 > shape[axis] 64",
        (qz("per-block-affine"), "Validity Constraints"), with_quant(pb, block_size=128), QUANT)
    for v in (4, 12, 0):
        add("quant_nf4_block_%d" % v, "NF4 block_size %d" % v, (qz("nf4"), "Validity Constraints"),
            with_quant(nf, block_size=v), QUANT, "quant.block_size")
    add("quant_nf4_block_gt_shape", "NF4 block_size 256 > shape[axis] 128",
        (qz("nf4"), "Validity Constraints"), with_quant(nf, block_size=256), QUANT)
    for v in (8, 4096, 48, 0):
        add("quant_mxfp_block_%d" % v, "MXFP block_size %d" % v,
            (qz("mxfp"), "Validity Constraints"), with_quant(mx, block_size=v), QUANT,
            "quant.block_size")
    add("quant_mxfp_partial_block", "MXFP on shape[axis] 48 with block 32 (no partial blocks)",
        (qz("mxfp"), "Validity Constraints"),
        mutated(mx, shape=[2, 48], buffers=[buf(96), buf(4)]), QUANT)
    add("quant_mxfp_empty_axis", "MXFP on shape[axis] 0 (must be a positive multiple)",
        (qz("mxfp"), "Validity Constraints"),
        mutated(mx, shape=[2, 0], buffers=[buf(0), buf(0)]), QUANT)
    # scale types
    for v in (0x01, 0x00, 0xFF):
        add("quant_per_channel_scale_type_0x%02X" % v, "per-channel scale_type_tag 0x%02X "
            "(must be float32)" % v, (qz("per-channel-affine"), "Validity Constraints"),
            with_quant(pc, scale_type=v), QUANT, "quant.scale_type_tag")
    for v in (0x00, 0x04, 0x10):
        add("quant_per_block_scale_type_0x%02X" % v, "per-block scale_type_tag 0x%02X" % v,
            (qz("per-block-affine"), "Validity Constraints"), with_quant(pb, scale_type=v),
            QUANT, "quant.scale_type_tag")
    # symmetric flag vs zero-point index
    add("quant_per_channel_sym_with_zp", "per-channel SYMMETRIC with zero_point_buffer_index 1",
        (qz("per-channel-affine"), "Flags bits"), with_quant(pc, zp_index=1), QUANT,
        "quant.zero_point_buffer_index")
    add("quant_per_channel_asym_without_zp", "per-channel asymmetric with "
        "zero_point_buffer_index 0xFFFFFFFF", (qz("per-channel-affine"), "Referenced Buffers"),
        with_quant(pc, flags=0), QUANT, "quant.zero_point_buffer_index")
    add("quant_per_block_sym_with_zp", "per-block SYMMETRIC with zero_point_buffer_index 1",
        (qz("per-block-affine"), "Flags bits"), with_quant(pb, zp_index=1), QUANT,
        "quant.zero_point_buffer_index")
    add("quant_per_block_asym_without_zp", "per-block asymmetric with zero_point_buffer_index "
        "0xFFFFFFFF", (qz("per-block-affine"), "Referenced Buffers"), with_quant(pb, flags=0),
        QUANT, "quant.zero_point_buffer_index")
    # buffer indices
    add("quant_per_channel_scale_index_oob", "per-channel scale_buffer_index 2 with 2 buffers",
        (qz("per-channel-affine"), "Referenced Buffers"), with_quant(pc, scale_index=2), BT,
        "quant.scale_buffer_index")
    add("quant_per_channel_zp_index_oob", "per-channel zero_point_buffer_index 3 with 3 buffers",
        (qz("per-channel-affine"), "Referenced Buffers"), with_quant(pca, zp_index=3), BT,
        "quant.zero_point_buffer_index")
    add("quant_per_block_scale_index_oob", "per-block scale_buffer_index 7 with 2 buffers",
        (qz("per-block-affine"), "Referenced Buffers"), with_quant(pb, scale_index=7), BT,
        "quant.scale_buffer_index")
    add("quant_nf4_scale_index_oob", "NF4 scale_buffer_index 5 with 2 buffers",
        (qz("nf4"), "Validity Constraints"), with_quant(nf, scale_index=5), BT,
        "quant.scale_buffer_index")
    add("quant_mxfp_scale_index_oob", "MXFP scale_buffer_index 2 with 2 buffers",
        (qz("mxfp"), "Validity Constraints"), with_quant(mx, scale_index=2), BT,
        "quant.scale_buffer_index")
    add("quant_per_channel_scale_is_data", "per-channel scale_buffer_index 0 (the data buffer)",
        (QZ, "Buffer Table Placement Rules"), with_quant(pc, scale_index=0), BT,
        "quant.scale_buffer_index")
    add("quant_per_channel_zp_is_data", "per-channel zero_point_buffer_index 0 (the data "
        "buffer)", (QZ, "Buffer Table Placement Rules"), with_quant(pca, zp_index=0), BT,
        "quant.zero_point_buffer_index")
    add("quant_nf4_scale_is_data", "NF4 scale_buffer_index 0", (qz("nf4"), "Validity Constraints"),
        with_quant(nf, scale_index=0), BT, "quant.scale_buffer_index")
    add("quant_mxfp_scale_is_data", "MXFP scale_buffer_index 0",
        (qz("mxfp"), "Validity Constraints"), with_quant(mx, scale_index=0), BT,
        "quant.scale_buffer_index")
    add("quant_csr_scale_is_row_ptr", "CSR per-channel scale_buffer_index 2 (row_ptr, a layout "
        "buffer)", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [4, 5], {"tag": L_CSR, "nnz": 5},
                   [buf(5), buf(40), buf(40), buf(16)], quant=dict(sym_pc, scale_index=2)),
        BT, "quant.scale_buffer_index")
    add("quant_csf_scale_in_layout_range", "CSF per-channel scale_buffer_index 5 "
        "(crd_2, a layout buffer)", (lay("csf"), "Quantization Compatibility"),
        descriptor(T["int8"], [2, 3, 4], {"tag": L_CSF, "nnz": 4, "mode_order": [0, 1, 2]},
                   [buf(4), buf(16), buf(16), buf(24), buf(24), buf(32), buf(32), buf(16)],
                   quant=dict(sym_pc, scale_index=5)), BT, "quant.scale_buffer_index")
    pl = {"tag": L_PAGED, "page_size": 4, "num_pages": 5, "paged_axis": 0, "num_seqs": 2,
          "kv_role": 0, "layer_index": 3, "index_type": 0}
    add("quant_block_paged_scale_is_block_table", "block-paged per-channel scale_buffer_index 1 "
        "(block_table)", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [9, 2, 8], pl, [buf(320), buf(12), buf(12), buf(8)],
                   quant=dict(sym_pc, axis=1, scale_index=1)), BT, "quant.scale_buffer_index")
    # parameter buffer sizes
    add("quant_per_channel_scale_short", "per-channel scale buffer 15 bytes (needs 16)",
        (qz("per-channel-affine"), "Referenced Buffers"), with_buffer(pc, 1, byte_size=15), SIZE,
        "buffers[1].byte_size")
    add("quant_per_channel_zp_short", "per-channel zero-point buffer 12 bytes (needs 16)",
        (qz("per-channel-affine"), "Referenced Buffers"), with_buffer(pca, 2, byte_size=12),
        SIZE, "buffers[2].byte_size")
    add("quant_per_block_scale_short", "per-block float16 scales 15 bytes (8 blocks need 16)",
        (qz("per-block-affine"), "Referenced Buffers"), with_buffer(pb, 1, byte_size=15), SIZE,
        "buffers[1].byte_size")
    add("quant_per_block_zp_short", "per-block zero points 12 bytes (4 blocks need 16)",
        (qz("per-block-affine"), "Referenced Buffers"), with_buffer(pba, 2, byte_size=12), SIZE,
        "buffers[2].byte_size")
    add("quant_per_block_partial_scale_short", "per-block [4, 10] block 4: 40-byte float32 "
        "scale buffer counts no partial blocks (needs 12 blocks, 48 bytes)",
        (qz("per-block-affine"), "Padding"),
        descriptor(T["int8"], [4, 10], {"tag": L_ROW}, [buf(48), buf(40)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 4,
                          "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x03}),
        SIZE, "buffers[1].byte_size")
    add("quant_nf4_scale_short", "NF4 absmax buffer 12 bytes (4 blocks need 16)",
        (qz("nf4"), "Referenced Buffer"), with_buffer(nf, 1, byte_size=12), SIZE,
        "buffers[1].byte_size")
    add("quant_mxfp_scale_short", "MXFP scale buffer 3 bytes (4 blocks need 4)",
        (qz("mxfp"), "Referenced Buffer"), with_buffer(mx, 1, byte_size=3), SIZE,
        "buffers[1].byte_size")
    add("quant_shared_buffer_short", "scales and zero points sharing buffer 1 of 12 bytes "
        "(needs 24: [scales | zero_points])", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [3, 2], {"tag": L_ROW}, [buf(6), buf(12)],
                   quant={"scheme": 0x02, "axis": 0, "scale_index": 1, "zp_index": 1}),
        SIZE, "buffers[1].byte_size")
    # dynamic quantization axis
    for name, base in (("per_channel", pc), ("per_block", pb), ("nf4", nf), ("mxfp", mx)):
        ax = base["quant"]["axis"]
        shape = list(base["shape"])
        shape[ax] = DYN
        add("quant_%s_dynamic_axis" % name, "%s with shape[axis] dynamic" % name,
            (DM, "Dynamic Dimensions"), mutated(base, shape=shape), QUANT)
    # block-paged composition
    add("quant_block_paged_per_channel_axis0", "block-paged per-channel on the paged axis 0",
        (lay("block-paged"), "Per-scheme composition"),
        descriptor(T["int8"], [9, 2, 8], pl, [buf(320), buf(12), buf(12), buf(36)],
                   quant=dict(sym_pc, axis=0, scale_index=3)), QUANT, "quant.axis")
    pbp = {"scheme": 0x03, "flags": 1, "axis": 0, "block_size": 4, "scale_index": 3,
           "zp_index": 0xFFFFFFFF, "scale_type": 0x01}
    add("quant_block_paged_per_block_axis1", "block-paged [9, 4, 8] per-block on axis 1 "
        "(block_size 4 == page_size; scale buffer large enough for either formula)",
        (lay("block-paged"), "Per-scheme composition"),
        descriptor(T["int8"], [9, 4, 8], pl, [buf(640), buf(12), buf(12), buf(144)],
                   quant=dict(pbp, axis=1)), QUANT, "quant.axis")
    add("quant_block_paged_per_block_size_ne_page", "block-paged per-block with block_size 2 "
        "!= page_size 4", (lay("block-paged"), "Per-scheme composition"),
        descriptor(T["int8"], [9, 2, 8], pl, [buf(320), buf(12), buf(12), buf(40)],
                   quant=dict(pbp, block_size=2)), QUANT, "quant.block_size")
    add("quant_block_paged_scale_per_block_formula", "block-paged [4, 1, 1] per-block scale "
        "buffer sized by the per-block formula (1 entry) instead of num_pages * page_size (20)",
        (lay("block-paged"), "Scale-buffer size"),
        descriptor(T["int8"], [4, 1, 1], pl, [buf(20), buf(12), buf(12), buf(2)], quant=pbp),
        SIZE, "buffers[3].byte_size")


def all_invalid():
    add = _Collector()
    for part in (header, tags, payloads, composite, handles, counts, sizes, shards, statistics,
                 extension, quantization):
        part(add)
    return add.v

