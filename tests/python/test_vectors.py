"""The project's own conformance vectors (tests/vectors) through the Python
classes: every field a valid vector declares reads back through the layout,
quantization, statistics and shard objects, and each section object survives
on its own; every invalid vector raises its status's exception."""

import json
import pathlib
import struct

import pytest

import hurray

ROOT = pathlib.Path(__file__).resolve().parents[1] / "vectors"
MANIFEST = json.loads((ROOT / "manifest.json").read_text())

ORDER = {1: "row_major", 2: "col_major", 3: "strided", 4: "tiled"}
ROLE = ["key", "value", "fused"]
RULE = {1: "partition", 2: "overlay", 3: "group"}
COMBINE = {0: None, 1: "replace", 2: "add"}


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def check_layout(layout, exp, rank):
    tag = exp["tag"]
    assert layout.tag == tag
    if tag == 3:
        assert layout.strides == tuple(exp["strides"])
    elif tag == 4:
        level, lv = layout, exp["levels"]
        for i, e in enumerate(lv):
            assert level.tile_shape == tuple(e["tile_shape"])
            assert level.outer_layout == ORDER[e["outer_layout"]]
            assert level.inner_layout == (ORDER.get(e["inner_layout"]) or "tiled")
            assert level.outer_strides == (tuple(e["outer_strides"]) if e["outer_strides"] else None)
            assert level.inner_strides == (tuple(e["inner_strides"]) if e["inner_strides"] else None)
            level = level.inner_tiled
        assert level is None
    elif tag == 5:
        assert layout.morton_bits == tuple(exp["bits"])
    elif tag == 0x40:
        assert (layout.hilbert_order, layout.hilbert_rank) == (exp["order"], exp["rank"])
    elif tag == 6:
        assert (layout.nnz, layout.is_sorted) == (exp["nnz"], bool(exp["is_sorted"]))
    elif tag in (7, 8):
        assert layout.nnz == exp["nnz"]
    elif tag == 9:
        assert (layout.nnz, layout.mode_order) == (exp["nnz"], tuple(exp["mode_order"]))
        assert layout.buffer_count == 2 * rank + 1
    elif tag == 10:
        assert layout.page_size == exp["page_size"] and layout.num_pages == exp["num_pages"]
        assert layout.num_seqs == exp["num_seqs"] and layout.paged_axis == exp["paged_axis"]
        assert layout.kv_role == ROLE[exp["kv_role"]]
        assert layout.layer_index == (None if exp["layer_index"] == 0xFFFFFFFF else exp["layer_index"])
        assert layout.block_table_index_type == ["uint32", "uint64"][exp["block_table_index_type"]]
    elif tag == 11:
        assert layout.composition_rule == RULE.get(exp["rule"], "private")
        assert layout.combine_op == COMBINE[exp["combine_op"]]
        assert layout.member_count == exp["member_count"]


def check_quantization(q, exp):
    assert q.scheme_tag == exp["scheme"]
    assert q.encode().hex() == exp["raw_hex"]
    if exp["scheme"] == 1:
        assert struct.pack("<f", q.scale) == struct.pack("<I", exp["scale_bits"])
        assert q.zero_point == exp["zero_point"]
    elif exp["scheme"] in (2, 3, 4, 5):
        assert q.axis == exp["axis"] and q.scale_buffer_index == exp["scale_buffer_index"]
        if "block_size" in exp:
            assert q.block_size == exp["block_size"]
        if "zero_point_buffer_index" in exp:
            zp = exp["zero_point_buffer_index"]
            assert q.zero_point_buffer_index == (None if zp == 0xFFFFFFFF else zp)
    else:
        assert type(q) is hurray.OpaqueQuantization
    assert hurray.decode_quantization(q.encode(), permissive=True) == q


def check_statistics(s, exp):
    assert s.computed_mask == exp["computed_mask"]
    m = exp["computed_mask"]
    assert s.nnz == (exp["nnz"] if m & 1 else None)
    if m & 2:
        assert bits(s.sparsity_ratio) == exp["sparsity_ratio_bits"]
    if m & 4:
        assert bits(s.value_min) == exp["value_min_bits"]  # a NaN keeps its bits
        assert bits(s.value_max) == exp["value_max_bits"]
        assert bits(s.value_abs_max) == exp["value_abs_max_bits"]
    if m & 8:
        assert bits(s.value_mean) == exp["value_mean_bits"]
        assert bits(s.value_stddev) == exp["value_stddev_bits"]
    if m & 0x10:
        assert (s.nm_n, s.nm_m) == (exp["nm_n"], exp["nm_m"])
    if m & 0x20:
        assert (s.has_nan, s.has_inf) == (bool(exp["has_nan"]), bool(exp["has_inf"]))


@pytest.mark.parametrize("case", MANIFEST["valid"], ids=lambda c: c["name"])
def test_valid_vector_sections(case):
    raw = (ROOT / case["file"]).read_bytes()
    exp = case["expect"]
    d = hurray.Descriptor.decode(raw, permissive=True)
    tag = exp["layout"]["tag"]
    if hurray.layout_tag_kind(tag) == "named":
        check_layout(d.layout, exp["layout"], exp["rank"])
    if exp["quantization"] is not None:
        check_quantization(d.quantization, exp["quantization"])
    else:
        assert d.quantization is None
    if exp["statistics"] is not None:
        check_statistics(d.statistics, exp["statistics"])
    if exp["shard"] is not None:
        assert d.shard == hurray.Shard(exp["shard"]["parent_shape"], exp["shard"]["offset"])
    assert raw[:d.encoded_len] == d.encode()


@pytest.mark.parametrize("case", MANIFEST["invalid"], ids=lambda c: c["name"])
def test_invalid_vector_raises_its_status(case):
    raw = (ROOT / case["file"]).read_bytes()
    with pytest.raises((hurray.InvalidDescriptorError, hurray.BufferError)) as ei:
        hurray.Descriptor.decode(raw)
    assert ei.value.status == case["status"]
    if case.get("permissive") == "reject":
        with pytest.raises((hurray.InvalidDescriptorError, hurray.BufferError)):
            hurray.Descriptor.decode(raw, permissive=True)
    elif case.get("permissive") == "roundtrip":
        d = hurray.Descriptor.decode(raw, permissive=True)
        assert d.encode() == raw
        d.layout, d.quantization, d.statistics, d.shard
