"""Valid descriptors: every layout, element type, quantization scheme and
optional section, each accepted by a strict reader. Every vector is
(name, description, (document, section), descriptor dict)."""

from hrry_encoder import (
    DYN, L_COL, L_COMPOSITE, L_COO, L_CSC, L_CSF, L_CSR, L_HILBERT, L_MORTON, L_PAGED, L_ROW,
    L_STRIDED, L_TILED, T, TYPES, buf, ceil_div, descriptor, f32, f64, prod, type_bytes)

ML = "docs/spec/memory-layout.md"
MD = "docs/spec/metadata.md"
ET = "docs/spec/element-types.md"
BP = "docs/spec/buffer-protocol.md"
DM = "docs/spec/data-model.md"
QZ = "docs/spec/quantization.md"
CP = "docs/impl/compliance.md"


def lay(name):
    return "docs/spec/layouts/%s.md" % name


def qz(name):
    return "docs/spec/quantization/%s.md" % name


def dense(type_tag, shape, layout=None, extra=0, **kw):
    """A dense tensor whose single buffer is exactly as large as it must be."""
    layout = layout or {"tag": L_ROW}
    size = type_bytes(type_tag, prod(shape), kw.get("ext")) + kw.get("byte_offset", 0) + extra
    return descriptor(type_tag, shape, layout, [buf(size)], **kw)


def tiled_level(tile, outer=L_ROW, inner=L_ROW, outer_strides=None, inner_strides=None):
    return {"tile_shape": list(tile), "outer_layout": outer, "inner_layout": inner,
            "outer_strides": outer_strides, "inner_strides": inner_strides}


def tiled_elems(shape, tile):
    return prod(ceil_div(s, t) for s, t in zip(shape, tile)) * prod(tile)


def csr(type_tag, shape, nnz, tag=L_CSR, bufs_kw=None, **kw):
    bufs_kw = bufs_kw or {}
    major = shape[0] if tag == L_CSR else shape[1]
    return descriptor(type_tag, shape, {"tag": tag, "nnz": nnz},
                      [buf(type_bytes(type_tag, nnz), **bufs_kw), buf(nnz * 8, **bufs_kw),
                       buf((major + 1) * 8, **bufs_kw)], **kw)


def coo(type_tag, shape, nnz, is_sorted=1, **kw):
    return descriptor(type_tag, shape, {"tag": L_COO, "nnz": nnz, "is_sorted": is_sorted},
                      [buf(type_bytes(type_tag, nnz)), buf(nnz * len(shape) * 8)], **kw)


def csf_example(**kw):
    """csf.md § Example: f32 [2, 3, 4], identity mode order, 4 non-zeros."""
    return descriptor(T["float32"], [2, 3, 4], {"tag": L_CSF, "nnz": 4, "mode_order": [0, 1, 2]},
                      [buf(16), buf(16), buf(16), buf(24), buf(24), buf(32), buf(32)], **kw)


def paged(type_tag=0x01, index_type=0, kv_role=0, layer_index=3, **kw):
    """block-paged.md § Example: 2 sequences, page_size 4, 5 pages, 2 heads, head_dim 8."""
    w = 4 if index_type == 0 else 8
    pool = type_bytes(type_tag, 5 * 4 * 2 * 8)
    lay_ = {"tag": L_PAGED, "page_size": 4, "num_pages": 5, "paged_axis": 0, "num_seqs": 2,
            "kv_role": kv_role, "layer_index": layer_index, "index_type": index_type}
    return descriptor(type_tag, [9, 2, 8], lay_, [buf(pool), buf(3 * w), buf(3 * w)], **kw)


def head(rule, combine, count, shape=(8, 8), type_tag=0x03, **kw):
    return descriptor(type_tag, list(shape), {"tag": L_COMPOSITE, "rule": rule,
                                              "combine_op": combine, "member_count": count},
                      [], **kw)


def stats(**kw):
    return dict(kw)


def layouts():
    v = []
    add = lambda n, desc, rule, d: v.append((n, desc, rule, d))
    f32_ = T["float32"]
    add("row_major_f32_3x4", "row-major float32 [3, 4], 48-byte buffer",
        (lay("row-major"), "Implicit Strides"), dense(f32_, [3, 4]))
    add("row_major_f32_3x4_byte_offset", "row-major float32 [3, 4] starting 16 bytes into buffer 0",
        (MD, "byte_offset"), dense(f32_, [3, 4], byte_offset=16))
    add("row_major_f32_byte_offset_eq_size", "empty row-major tensor whose byte_offset equals "
        "the size of buffer 0 (the largest value allowed)", (MD, "byte_offset"),
        descriptor(f32_, [0], {"tag": L_ROW}, [buf(32)], byte_offset=32))
    add("col_major_f64_3x4", "column-major float64 [3, 4]",
        (lay("column-major"), "Implicit Strides"), dense(T["float64"], [3, 4], {"tag": L_COL}))
    add("strided_f32_3x4", "strided float32 [3, 4], strides [4, 1]",
        (lay("strided"), "Element Address"),
        dense(f32_, [3, 4], {"tag": L_STRIDED, "strides": [4, 1]}))
    add("strided_f32_3x4_negative", "strided float32 [3, 4], strides [-4, 1]: rows reversed, "
        "byte_offset 32 points at logical [0, 0], buffer covers offsets -8..3 (strided.md "
        "example)", (lay("strided"), "Stride Semantics"),
        descriptor(f32_, [3, 4], {"tag": L_STRIDED, "strides": [-4, 1]}, [buf(48)],
                   byte_offset=32))
    add("strided_f32_3x4_broadcast", "strided float32 [3, 4], strides [0, 1]: dimension 0 "
        "broadcast over one 4-element row", (lay("strided"), "Stride Semantics"),
        descriptor(f32_, [3, 4], {"tag": L_STRIDED, "strides": [0, 1]}, [buf(16)]))
    add("strided_i16_2x3x4_mixed", "strided int16 [2, 3, 4], strides [12, -4, 1]: offsets "
        "-8..15, byte_offset 16, buffer 48 bytes", (lay("strided"), "Buffer Size"),
        descriptor(T["int16"], [2, 3, 4], {"tag": L_STRIDED, "strides": [12, -4, 1]},
                   [buf(48)], byte_offset=16))
    add("tiled_f32_6x8", "tiled float32 [6, 8], tile [2, 4], outer and inner row-major "
        "(tiled.md example)", (lay("tiled"), "Example"),
        dense(f32_, [6, 8], {"tag": L_TILED, "levels": [tiled_level([2, 4])]}))
    add("tiled_f32_5x7_padded", "tiled float32 [5, 7], tile [2, 4], outer and inner "
        "column-major: partial tiles padded, buffer holds 6 full tiles (192 bytes)",
        (lay("tiled"), "Boundary Padding"),
        descriptor(f32_, [5, 7], {"tag": L_TILED,
                                  "levels": [tiled_level([2, 4], L_COL, L_COL)]},
                   [buf(tiled_elems([5, 7], [2, 4]) * 4)]))
    add("tiled_u8_outer_strided", "tiled uint8 [6, 8], tile [2, 4], outer strided [1, 3] "
        "(tiles in column-major grid order), inner row-major",
        (lay("tiled"), "Additional Descriptor Fields"),
        dense(T["uint8"], [6, 8], {"tag": L_TILED, "levels": [
            tiled_level([2, 4], 0x03, L_ROW, outer_strides=[1, 3])]}))
    add("tiled_u8_inner_strided", "tiled uint8 [6, 8], tile [2, 4], outer row-major, inner "
        "strided [1, 2] (column-major inside a tile)", (lay("tiled"), "Additional Descriptor Fields"),
        dense(T["uint8"], [6, 8], {"tag": L_TILED, "levels": [
            tiled_level([2, 4], L_ROW, 0x03, inner_strides=[1, 2])]}))
    add("tiled_u8_both_strided", "tiled uint8 [6, 8], tile [2, 4], outer strided [1, 3] and "
        "inner strided [1, 2]", (lay("tiled"), "Additional Descriptor Fields"),
        dense(T["uint8"], [6, 8], {"tag": L_TILED, "levels": [
            tiled_level([2, 4], 0x03, 0x03, outer_strides=[1, 3], inner_strides=[1, 2])]}))
    add("tiled_f32_nested_2", "tiled float32 [8, 8], tile [4, 4] whose tiles are tiled again "
        "by [2, 2] (two levels)", (lay("tiled"), "Recursive Tiling"),
        dense(f32_, [8, 8], {"tag": L_TILED, "levels": [
            tiled_level([4, 4], L_ROW, 0x04), tiled_level([2, 2], L_COL, L_ROW)]}))
    levels8 = [tiled_level([128 >> i], L_ROW, 0x04) for i in range(7)]
    levels8.append(tiled_level([1], L_ROW, L_ROW))
    add("tiled_u8_nested_depth_8", "tiled uint8 [256] nested 8 levels deep (tiles 128, 64, "
        "..., 1): the deepest nesting a reader must accept", (MD, "Tiled / Blocked (0x04)"),
        dense(T["uint8"], [256], {"tag": L_TILED, "levels": levels8}))
    add("morton_f32_4x4", "morton float32 [4, 4], bits [2, 2], 16-element buffer",
        (lay("morton"), "Example"), dense(f32_, [4, 4], {"tag": L_MORTON, "bits": [2, 2]}))
    add("morton_u8_3x5", "morton uint8 [3, 5], bits [2, 3]: buffer of 2^5 elements",
        (lay("morton"), "Buffer Size"),
        descriptor(T["uint8"], [3, 5], {"tag": L_MORTON, "bits": [2, 3]}, [buf(32)]))
    add("hilbert_f32_4x4", "hilbert float32 [4, 4], order 2, rank 2",
        (lay("hilbert"), "Validity Constraints"),
        dense(f32_, [4, 4], {"tag": L_HILBERT, "order": 2, "hrank": 2}))
    add("hilbert_u8_2x2x2", "hilbert uint8 [2, 2, 2], order 1, rank 3",
        (lay("hilbert"), "Buffer Size"),
        dense(T["uint8"], [2, 2, 2], {"tag": L_HILBERT, "order": 1, "hrank": 3}))
    add("coo_f32_4x4_sorted", "COO float32 [4, 4], nnz 3, sorted (coo.md example)",
        (lay("coo"), "Example"), coo(f32_, [4, 4], 3, 1))
    add("coo_i32_3d_unsorted", "COO int32 [2, 3, 4], nnz 2, unsorted",
        (lay("coo"), "Storage Order"), coo(T["int32"], [2, 3, 4], 2, 0))
    add("coo_bool_1d", "COO bool [100], nnz 9: values buffer of 2 packed bytes",
        (lay("coo"), "Buffer Size"), coo(T["bool"], [100], 9, 1))
    add("csr_f32_4x5", "CSR float32 [4, 5], nnz 5 (csr.md example)", (lay("csr"), "Example"),
        csr(f32_, [4, 5], 5))
    add("csc_f32_3x5", "CSC float32 [3, 5], nnz 5: col_ptr sized by shape[1]",
        (lay("csc"), "Buffer Size"), csr(f32_, [3, 5], 5, L_CSC))
    add("csf_f32_2x3x4", "CSF float32 [2, 3, 4], identity mode_order, nnz 4 (csf.md example)",
        (lay("csf"), "Example"), csf_example())
    add("csf_f64_rank4", "CSF float64 [2, 2, 2, 2], mode_order [2, 0, 3, 1], nnz 2, 9 buffers",
        (lay("csf"), "Mode Ordering"),
        descriptor(T["float64"], [2, 2, 2, 2], {"tag": L_CSF, "nnz": 2, "mode_order": [2, 0, 3, 1]},
                   [buf(16), buf(16), buf(16), buf(24), buf(16), buf(24), buf(16), buf(24),
                    buf(16)]))
    add("block_paged_f16_u32", "block-paged float16 [9, 2, 8], page_size 4, 5 pages, "
        "2 sequences, key role, layer 3, uint32 index (block-paged.md example)",
        (lay("block-paged"), "Example"), paged())
    add("block_paged_bf16_u64", "block-paged bfloat16, uint64 block table and seq_ptr, fused "
        "role, not layer-scoped", (lay("block-paged"), "Additional Descriptor Fields"),
        paged(T["bfloat16"], index_type=1, kv_role=2, layer_index=0xFFFFFFFF))
    add("block_paged_value_role", "block-paged float16, value role, layer 0",
        (lay("block-paged"), "Additional Descriptor Fields"), paged(kv_role=1, layer_index=0))
    add("composite_partition", "composite head: partition of float32 [8, 8] into 2 members",
        (lay("composite"), "Head Layout-Specific Fields"), head(0x01, 0x00, 2))
    add("composite_overlay_replace", "composite head: sealed overlay, combine replace, "
        "2 members", (lay("composite"), "Overlay (0x02, v1.0: sealed only)"),
        head(0x02, 0x01, 2, (16, 16), T["float16"]))
    add("composite_overlay_add", "composite head: sealed overlay, combine add, 3 members",
        (lay("composite"), "Overlay (0x02, v1.0: sealed only)"),
        head(0x02, 0x02, 3, (16, 16), T["float16"]))
    add("composite_group", "composite head: group of 3 members (shape and type advisory)",
        (lay("composite"), "Group (0x03)"), head(0x03, 0x00, 3, (3,), T["float32"]))
    add("composite_group_zero_members", "composite head: group with member_count 0 (a "
        "definite count of zero)", (lay("composite"), "Head Layout-Specific Fields"),
        head(0x03, 0x00, 0))
    add("composite_nested_head_with_shard", "composite partition head that is itself a "
        "member of an enclosing partition: carries a shard section",
        (lay("composite"), "Head Descriptor"),
        head(0x01, 0x00, 2, (8, 4), shard={"parent_shape": [8, 8], "offset": [0, 4]}))
    return v


def element_types():
    v = []
    for tag in sorted(TYPES):
        name, bits = TYPES[tag]
        n = 10 if bits < 8 else 5
        d = dense(tag, [n])
        v.append(("type_%s" % name, "row-major %s [%d], buffer %d bytes" %
                  (name, n, d["buffers"][0]["byte_size"]), (ET, "Buffer Size Calculation"), d))
    v.append(("type_float6_e3m2_one_group", "float6_e3m2 [4]: exactly one 3-byte group",
              (ET, "Buffer Size Calculation"), dense(T["float6_e3m2"], [4])))
    v.append(("type_bool_9", "bool [9]: 2 bytes, bits 1-7 of the second are padding",
              (ET, "Boolean Type"), dense(T["bool"], [9])))
    return v


def shapes():
    v = []
    add = lambda n, desc, rule, d: v.append((n, desc, rule, d))
    add("scalar_f32", "scalar (rank 0) float32, row-major, 4-byte buffer",
        (DM, "Scalar Tensors"), dense(T["float32"], []))
    add("scalar_bool", "scalar (rank 0) bool, 1-byte buffer", (DM, "Scalar Tensors"),
        dense(T["bool"], []))
    add("scalar_int4_quantized", "scalar uint4 with per-tensor quantization",
        (DM, "Scalar Tensors"),
        dense(T["uint4"], [], quant={"scheme": 0x01, "scale_bits": f32(0.5), "zero_point": 8}))
    add("rank_64", "rank 64 (the cap), every dimension 1, uint8", (DM, "Rank"),
        dense(T["uint8"], [1] * 64))
    add("dynamic_dim_f32", "float32 [dynamic, 4]: buffer sizes are not computed",
        (DM, "Dynamic Dimensions"),
        descriptor(T["float32"], [DYN, 4], {"tag": L_ROW}, [buf(1024)]))
    add("dynamic_all_dims_u8", "uint8 [dynamic, dynamic, 3] column-major",
        (DM, "Dynamic Dimensions"),
        descriptor(T["uint8"], [DYN, DYN, 3], {"tag": L_COL}, [buf(4096)]))
    add("empty_f32_0", "empty vector float32 [0] (compliance.md empty-tensor vector 1)",
        (CP, "Empty Tensor Round-Trip Vectors"), descriptor(T["float32"], [0], {"tag": L_ROW},
                                                             [buf(0)]))
    add("empty_f32_3x0x5", "empty float32 [3, 0, 5] (compliance.md empty-tensor vector 2)",
        (CP, "Empty Tensor Round-Trip Vectors"),
        descriptor(T["float32"], [3, 0, 5], {"tag": L_ROW}, [buf(0)]))
    add("empty_csr_4x5_nnz0", "CSR float32 [4, 5] with nnz 0: values and col_indices empty, "
        "row_ptr 40 bytes (compliance.md empty-tensor vector 3)",
        (CP, "Empty Tensor Round-Trip Vectors"), csr(T["float32"], [4, 5], 0))
    add("empty_buffer_alignment_1", "empty float32 [0, 7] whose empty buffer declares "
        "alignment 1", (BP, "Empty Buffers"),
        descriptor(T["float32"], [0, 7], {"tag": L_ROW}, [buf(0, align=1)]))
    add("empty_coo_alignment_2", "COO float32 [3, 3] nnz 0, both empty buffers alignment 2",
        (BP, "Empty Buffers"),
        descriptor(T["float32"], [3, 3], {"tag": L_COO, "nnz": 0, "is_sorted": 1},
                   [buf(0, align=2), buf(0, align=2)]))
    add("buffer_alignment_2_31", "buffer alignment 2^31 (largest power of two in a u32)",
        (BP, "Alignment"), descriptor(T["float32"], [4], {"tag": L_ROW},
                                      [buf(16, align=0x80000000)]))
    add("buffer_larger_than_needed", "row-major float32 [2, 2] in a 4096-byte buffer "
        "(larger than implied is fine)", (ML, "Buffer Table"),
        descriptor(T["float32"], [2, 2], {"tag": L_ROW}, [buf(4096, align=4096)]))
    return v


def devices():
    v = []
    add = lambda n, desc, rule, d: v.append((n, desc, rule, d))
    pairs = [
        (0x00, 0x01, "cpu_host_pinned"), (0x00, 0x02, "cpu_unified"),
        (0x01, 0x00, "cuda_standard"), (0x01, 0x01, "cuda_host_pinned"),
        (0x01, 0x02, "cuda_unified"), (0x01, 0x03, "cuda_peer"),
        (0x02, 0x03, "rocm_peer"), (0x03, 0x01, "metal_host_pinned"),
        (0x03, 0x02, "metal_unified"), (0x04, 0x03, "vulkan_peer"),
        (0x05, 0x00, "webgpu_standard"), (0x06, 0x02, "hexagon_unified"),
        (0x07, 0x03, "level_zero_peer"), (0x08, 0x02, "opencl_unified"),
        (0xF0, 0x00, "private_device_standard"), (0xF7, 0xF3, "private_device_private_class"),
    ]
    for dev, mc, name in pairs:
        add("device_%s" % name, "float32 [16] on device 0x%02X, memory class 0x%02X" % (dev, mc),
            (BP, "Per-Device Validity"),
            descriptor(T["float32"], [16], {"tag": L_ROW},
                       [buf(64, align=4096, dev=dev, mclass=mc)]))
    add("device_cuda_event_sync", "CUDA buffer in event sync mode", (BP, "sync_mode Values"),
        descriptor(T["float16"], [32], {"tag": L_ROW}, [buf(64, 4096, dev=0x01, sync=0x01)]))
    add("device_rocm_consumer_stream_sync", "ROCm buffer in consumer-stream sync mode",
        (BP, "sync_mode Values"),
        descriptor(T["float16"], [32], {"tag": L_ROW}, [buf(64, 4096, dev=0x02, sync=0x02)]))
    add("device_cuda_csr_unified", "CSR on CUDA unified memory: the three buffers share device "
        "and class, with different sync modes", (BP, "Device Colocation"),
        descriptor(T["float32"], [4, 5], {"tag": L_CSR, "nnz": 5},
                   [buf(20, 4096, 0x01, 0x01, 0x02), buf(40, 4096, 0x01, 0x02, 0x02),
                    buf(40, 4096, 0x01, 0x00, 0x02)]))
    return v


# Storage types each scheme accepts (quantization/*.md § Valid Storage Types).
AFFINE_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int4", "uint4", "int2",
                "uint2")
STORAGE = {
    0x01: AFFINE_TYPES,
    0x02: AFFINE_TYPES,
    0x03: ("int8", "uint8", "int4", "uint4", "int2", "uint2"),
    0x04: ("uint4",),
    0x05: ("float8_e4m3", "float8_e5m2", "float4_e2m1", "float6_e2m3", "float6_e3m2", "int8",
           "int4"),
}
SCHEME_DOC = {0x01: "per-tensor-affine", 0x02: "per-channel-affine", 0x03: "per-block-affine",
              0x04: "nf4", 0x05: "mxfp"}
SCHEME_NAME = {0x01: "per_tensor", 0x02: "per_channel", 0x03: "per_block", 0x04: "nf4",
               0x05: "mxfp"}


def scheme_storage(scheme, type_tag):
    """A valid descriptor of `scheme` over storage `type_tag`, apart from the
    storage rule itself."""
    if scheme == 0x01:
        return dense(type_tag, [4], quant={"scheme": 0x01, "scale_bits": f32(0.5),
                                           "zero_point": 0})
    if scheme == 0x02:
        return descriptor(type_tag, [4, 8], {"tag": L_ROW},
                          [buf(type_bytes(type_tag, 32)), buf(16)],
                          quant={"scheme": 0x02, "flags": 1, "axis": 0, "scale_index": 1,
                                 "zp_index": 0xFFFFFFFF})
    if scheme == 0x03:
        return descriptor(type_tag, [4, 64], {"tag": L_ROW},
                          [buf(type_bytes(type_tag, 256)), buf(16)],
                          quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 32,
                                 "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x01})
    if scheme == 0x04:
        return descriptor(type_tag, [2, 128], {"tag": L_ROW},
                          [buf(type_bytes(type_tag, 256)), buf(16)],
                          quant={"scheme": 0x04, "axis": 1, "block_size": 64, "scale_index": 1})
    return descriptor(type_tag, [2, 64], {"tag": L_ROW},
                      [buf(type_bytes(type_tag, 128)), buf(4)],
                      quant={"scheme": 0x05, "axis": 1, "block_size": 32, "scale_index": 1})


def quant_storage():
    v = []
    for scheme in sorted(STORAGE):
        for tname in STORAGE[scheme]:
            v.append(("quant_storage_%s_%s" % (SCHEME_NAME[scheme], tname),
                      "%s quantization of %s storage (allowed)" % (SCHEME_NAME[scheme], tname),
                      (qz(SCHEME_DOC[scheme]), "Valid Storage Types"),
                      scheme_storage(scheme, T[tname])))
    return v


def quantization():
    v = []
    add = lambda n, desc, rule, d: v.append((n, desc, rule, d))

    def pt(scale, zp, **kw):
        q = {"scheme": 0x01, "scale_bits": scale, "zero_point": zp}
        q.update(kw)
        return q

    add("quant_per_tensor_i8", "int8 [4, 4], per-tensor affine scale 0.05, zero_point -3",
        (qz("per-tensor-affine"), "Binary Encoding"),
        dense(T["int8"], [4, 4], quant=pt(f32(0.05), -3)))
    add("quant_per_tensor_u4_zp_max", "uint4 [7], per-tensor, zero_point 15 (top of range)",
        (qz("per-tensor-affine"), "Validity Constraints"),
        dense(T["uint4"], [7], quant=pt(f32(1.0), 15)))
    add("quant_per_tensor_i2_zp_min", "int2 [9], per-tensor, zero_point -2 (bottom of range)",
        (qz("per-tensor-affine"), "Validity Constraints"),
        dense(T["int2"], [9], quant=pt(f32(0.25), -2)))
    add("quant_per_tensor_u16_negative_scale", "uint16 [3], per-tensor, negative scale -2.5",
        (qz("per-tensor-affine"), "Validity Constraints"),
        dense(T["uint16"], [3], quant=pt(f32(-2.5), 65535)))
    add("quant_per_tensor_i32_subnormal_scale", "int32 [2], per-tensor, smallest subnormal "
        "scale (finite and non-zero)", (qz("per-tensor-affine"), "Validity Constraints"),
        dense(T["int32"], [2], quant=pt(0x00000001, -2147483648)))
    add("quant_per_tensor_writer_padding", "uint8 [8], per-tensor payload followed by 8 bytes "
        "of writer padding (quantization_length 24)", (QZ, "Descriptor Header"),
        dense(T["uint8"], [8], quant=pt(f32(0.1), 128, padding=b"\x00" * 8)))
    add("quant_per_channel_sym_i8", "int8 [4, 8], per-channel symmetric on axis 0: scale "
        "buffer 1 (16 bytes), no zero-point buffer", (qz("per-channel-affine"), "Flags bits"),
        descriptor(T["int8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(16)],
                   quant={"scheme": 0x02, "flags": 1, "axis": 0, "scale_index": 1,
                          "zp_index": 0xFFFFFFFF}))
    add("quant_per_channel_asym_u8", "uint8 [4, 8], per-channel asymmetric on axis 1: scales "
        "in buffer 1, zero points in buffer 2", (qz("per-channel-affine"), "Referenced Buffers"),
        descriptor(T["uint8"], [4, 8], {"tag": L_ROW}, [buf(32), buf(32), buf(32)],
                   quant={"scheme": 0x02, "axis": 1, "scale_index": 1, "zp_index": 2}))
    add("quant_per_channel_shared_buffer", "int8 [3, 2], per-channel asymmetric on axis 0 with "
        "scales and zero points sharing buffer 1 ([scales | zero_points], 24 bytes)",
        (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [3, 2], {"tag": L_ROW}, [buf(6), buf(24)],
                   quant={"scheme": 0x02, "axis": 0, "scale_index": 1, "zp_index": 1}))
    add("quant_per_channel_swapped_indices", "int16 [2, 3], per-channel asymmetric with the "
        "zero points in buffer 1 and the scales in buffer 2",
        (qz("per-channel-affine"), "Referenced Buffers"),
        descriptor(T["int16"], [2, 3], {"tag": L_COL}, [buf(12), buf(12), buf(12)],
                   quant={"scheme": 0x02, "axis": 1, "scale_index": 2, "zp_index": 1}))
    add("quant_per_channel_dynamic_other_dim", "int8 [dynamic, 8], per-channel symmetric on "
        "axis 1: only shape[axis] must be static", (DM, "Dynamic Dimensions"),
        descriptor(T["int8"], [DYN, 8], {"tag": L_ROW}, [buf(4096), buf(32)],
                   quant={"scheme": 0x02, "flags": 1, "axis": 1, "scale_index": 1,
                          "zp_index": 0xFFFFFFFF}))
    add("quant_per_block_f16_i4", "int4 [4, 64], per-block symmetric on axis 1, block 32, "
        "float16 scales (8 blocks, 16 bytes)", (qz("per-block-affine"), "Binary Encoding"),
        descriptor(T["int4"], [4, 64], {"tag": L_ROW}, [buf(128), buf(16)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 32,
                          "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x01}))
    add("quant_per_block_bf16_u8_asym", "uint8 [2, 16], per-block asymmetric on axis 1, "
        "block 8, bfloat16 scales (4 blocks) and int32 zero points",
        (qz("per-block-affine"), "Referenced Buffers"),
        descriptor(T["uint8"], [2, 16], {"tag": L_ROW}, [buf(32), buf(8), buf(16)],
                   quant={"scheme": 0x03, "axis": 1, "block_size": 8, "scale_index": 1,
                          "zp_index": 2, "scale_type": 0x02}))
    add("quant_per_block_f32_partial_block", "int8 [4, 10], per-block symmetric on axis 1, "
        "block 4: the last block of each row is partial (3 blocks per row, 12 blocks, float32 "
        "scales 48 bytes); data buffer padded to full blocks (48 bytes)",
        (qz("per-block-affine"), "Padding"),
        descriptor(T["int8"], [4, 10], {"tag": L_ROW}, [buf(48), buf(48)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 4,
                          "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x03}))
    add("quant_per_block_axis0_block_eq_shape", "uint4 [8, 3], per-block on axis 0 with "
        "block_size == shape[axis] (one block per column)", (qz("per-block-affine"),
                                                             "Validity Constraints"),
        descriptor(T["uint4"], [8, 3], {"tag": L_ROW}, [buf(12), buf(12), buf(12)],
                   quant={"scheme": 0x03, "axis": 0, "block_size": 8, "scale_index": 1,
                          "zp_index": 2, "scale_type": 0x03}))
    add("quant_per_block_empty_axis", "int8 [0, 16], per-block on axis 0 with block 64 > "
        "shape[axis] = 0: upper bound waived, empty scale buffer",
        (qz("per-block-affine"), "Validity Constraints"),
        descriptor(T["int8"], [0, 16], {"tag": L_ROW}, [buf(0), buf(0)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 0, "block_size": 64,
                          "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x01}))
    add("quant_nf4_u4", "uint4 [2, 128], NF4 on axis 1, block 64 (4 blocks, 16-byte absmax "
        "buffer)", (qz("nf4"), "Binary Encoding"),
        descriptor(T["uint4"], [2, 128], {"tag": L_ROW}, [buf(128), buf(16)],
                   quant={"scheme": 0x04, "axis": 1, "block_size": 64, "scale_index": 1}))
    add("quant_nf4_block_8", "uint4 [16], NF4 block 8 (the smallest allowed)",
        (qz("nf4"), "Validity Constraints"),
        descriptor(T["uint4"], [16], {"tag": L_ROW}, [buf(8), buf(8)],
                   quant={"scheme": 0x04, "axis": 0, "block_size": 8, "scale_index": 1}))
    add("quant_mxfp_e4m3", "float8_e4m3 [2, 64], MXFP on axis 1, block 32 (4 e8m0 scales)",
        (qz("mxfp"), "Binary Encoding"),
        descriptor(T["float8_e4m3"], [2, 64], {"tag": L_ROW}, [buf(128), buf(4)],
                   quant={"scheme": 0x05, "axis": 1, "block_size": 32, "scale_index": 1}))
    add("quant_mxfp_fp4_axis0", "float4_e2m1 [32, 2], MXFP on axis 0, block 16",
        (qz("mxfp"), "Referenced Buffer"),
        descriptor(T["float4_e2m1"], [32, 2], {"tag": L_ROW}, [buf(32), buf(4)],
                   quant={"scheme": 0x05, "axis": 0, "block_size": 16, "scale_index": 1}))
    add("quant_mxfp_fp6", "float6_e2m3 [1, 64], MXFP on axis 1, block 32",
        (qz("mxfp"), "Valid Storage Types"),
        descriptor(T["float6_e2m3"], [1, 64], {"tag": L_ROW}, [buf(48), buf(2)],
                   quant={"scheme": 0x05, "axis": 1, "block_size": 32, "scale_index": 1}))
    add("quant_mxfp_int8_block_2048", "int8 [2048], MXFP block 2048 (the largest allowed)",
        (qz("mxfp"), "Validity Constraints"),
        descriptor(T["int8"], [2048], {"tag": L_ROW}, [buf(2048), buf(1)],
                   quant={"scheme": 0x05, "axis": 0, "block_size": 2048, "scale_index": 1}))
    add("quant_private_scheme_f0", "private quantization scheme 0xF0, version 7, flags 0xABCD, "
        "6 opaque payload bytes", (QZ, "Extension Schemes (0xF0 – 0xFE)"),
        dense(T["uint8"], [4], quant={"scheme": 0xF0, "version": 7, "flags": 0xABCD,
                                      "body": b"\x10\x20\x30\x40\x50\x60"}))
    add("quant_per_channel_csr", "CSR int8 [4, 5] nnz 5, per-channel symmetric on axis 0: "
        "scale buffer at index 3", (QZ, "Buffer Table Placement Rules"),
        descriptor(T["int8"], [4, 5], {"tag": L_CSR, "nnz": 5},
                   [buf(5), buf(40), buf(40), buf(16)],
                   quant={"scheme": 0x02, "flags": 1, "axis": 0, "scale_index": 3,
                          "zp_index": 0xFFFFFFFF}))
    add("quant_per_tensor_coo", "COO uint8 [8, 8] nnz 4 with per-tensor quantization",
        (QZ, "Buffer Table Placement Rules"),
        coo(T["uint8"], [8, 8], 4, quant=pt(f32(0.5), 3)))
    add("quant_per_tensor_csf", "CSF int8 [2, 3, 4] with per-tensor quantization (7 buffers)",
        (lay("csf"), "Quantization Compatibility"),
        descriptor(T["int8"], [2, 3, 4], {"tag": L_CSF, "nnz": 4, "mode_order": [0, 1, 2]},
                   [buf(4), buf(16), buf(16), buf(24), buf(24), buf(32), buf(32)],
                   quant=pt(f32(2.0), 0)))
    add("quant_per_channel_csf", "CSF int8 [2, 3, 4], per-channel symmetric on axis 2: scale "
        "buffer at index 2r+1 = 7", (lay("csf"), "Quantization Compatibility"),
        descriptor(T["int8"], [2, 3, 4], {"tag": L_CSF, "nnz": 4, "mode_order": [0, 1, 2]},
                   [buf(4), buf(16), buf(16), buf(24), buf(24), buf(32), buf(32), buf(16)],
                   quant={"scheme": 0x02, "flags": 1, "axis": 2, "scale_index": 7,
                          "zp_index": 0xFFFFFFFF}))
    pool8 = 5 * 4 * 2 * 8
    paged_lay = {"tag": L_PAGED, "page_size": 4, "num_pages": 5, "paged_axis": 0, "num_seqs": 2,
                 "kv_role": 0, "layer_index": 3, "index_type": 0}
    add("quant_block_paged_per_block", "block-paged int8 [9, 2, 8], per-block symmetric on "
        "axis 0 with block_size == page_size: float16 scales per page slot (5 * 4 entries)",
        (lay("block-paged"), "Per-page-slot parameters"),
        descriptor(T["int8"], [9, 2, 8], paged_lay,
                   [buf(pool8), buf(12), buf(12), buf(40)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 0, "block_size": 4,
                          "scale_index": 3, "zp_index": 0xFFFFFFFF, "scale_type": 0x01}))
    add("quant_block_paged_per_block_asym", "block-paged uint8, per-block asymmetric axis 0: "
        "float32 scales and int32 zero points per page slot (buffers 3 and 4)",
        (lay("block-paged"), "Buffer Table"),
        descriptor(T["uint8"], [9, 2, 8], paged_lay,
                   [buf(pool8), buf(12), buf(12), buf(80), buf(80)],
                   quant={"scheme": 0x03, "axis": 0, "block_size": 4, "scale_index": 3,
                          "zp_index": 4, "scale_type": 0x03}))
    add("quant_block_paged_per_channel", "block-paged int8, per-channel asymmetric on axis 2 "
        "(head_dim)", (lay("block-paged"), "Per-scheme composition"),
        descriptor(T["int8"], [9, 2, 8], paged_lay,
                   [buf(pool8), buf(12), buf(12), buf(32), buf(32)],
                   quant={"scheme": 0x02, "axis": 2, "scale_index": 3, "zp_index": 4}))
    add("quant_block_paged_per_tensor", "block-paged int8 with per-tensor quantization",
        (lay("block-paged"), "Per-scheme composition"),
        descriptor(T["int8"], [9, 2, 8], paged_lay, [buf(pool8), buf(12), buf(12)],
                   quant=pt(f32(0.125), 0)))
    return v


def sections():
    v = []
    add = lambda n, desc, rule, d: v.append((n, desc, rule, d))
    f32_ = T["float32"]
    add("shard_f32_8x4", "float32 [8, 4] shard at offset [0, 4] of parent [8, 8]",
        (MD, "Shard Section"),
        dense(f32_, [8, 4], shard={"parent_shape": [8, 8], "offset": [0, 4]}))
    add("shard_exact_end", "shard of [3, 5] at [7, 0] of parent [10, 5] (offset + shape == "
        "parent)", (MD, "Shard Section"),
        dense(T["int16"], [3, 5], shard={"parent_shape": [10, 5], "offset": [7, 0]}))
    add("shard_empty", "empty shard [0] at offset 4 of parent [4]", (MD, "Shard Section"),
        descriptor(f32_, [0], {"tag": L_ROW}, [buf(0)],
                   shard={"parent_shape": [4], "offset": [4]}))
    add("shard_coo", "COO shard: sparse layouts may be sharded", (ML, "Splittability and Sharding"),
        coo(f32_, [4, 4], 2, shard={"parent_shape": [8, 4], "offset": [4, 0]}))
    full = stats(mask=0x3F, nnz=10, sparsity_ratio=f64(0.375), value_min=f64(-3.5),
                 value_max=f64(7.25), value_abs_max=f64(7.25), value_mean=f64(1.0),
                 value_stddev=f64(2.5), nm_n=2, nm_m=4, has_nan=1, has_inf=0)
    add("stats_all_bits", "statistics with every computed_mask bit set", (MD, "Statistics Section"),
        dense(f32_, [4, 4], stats=full))
    add("stats_nan_payloads_unset", "statistics with computed_mask 0: every field carries a "
        "value that would be invalid if its bit were set (NaN payloads, sparsity 2.0, "
        "stddev -1, nm 5:3) and must be ignored and kept bit for bit",
        (MD, "computed_mask"),
        dense(f32_, [4], stats=stats(mask=0, nnz=99, sparsity_ratio=f64(2.0),
                                     value_min=0x7FF0000000000001, value_max=0xFFF8000000000123,
                                     value_abs_max=0x7FF4000000000000,
                                     value_mean=0xFFFFFFFFFFFFFFFF, value_stddev=f64(-1.0),
                                     nm_n=5, nm_m=3, has_nan=7, has_inf=9)))
    add("stats_value_range_nan", "statistics VALUE_RANGE_VALID with NaN payloads and "
        "infinity (no rule constrains them; bit patterns preserved)", (MD, "Field Encoding"),
        dense(T["float64"], [3], stats=stats(mask=0x04, value_min=0x7FF0000000000001,
                                             value_max=f64(float("inf")),
                                             value_abs_max=0xFFF8000000000123)))
    add("stats_boundaries", "statistics boundaries: sparsity 1.0, stddev -0.0 (>= 0.0 in IEEE "
        "754), nm_n == nm_m", (MD, "Field Encoding"),
        dense(f32_, [8], stats=stats(mask=0x1A, sparsity_ratio=f64(1.0),
                                     value_mean=f64(0.0), value_stddev=0x8000000000000000,
                                     nm_n=4, nm_m=4)))
    add("stats_sparsity_zero", "statistics sparsity 0.0 with nnz matching the COO layout",
        (lay("coo"), "Interaction with Statistics Section"),
        coo(f32_, [2, 2], 4, stats=stats(mask=0x03, nnz=4, sparsity_ratio=f64(0.0))))
    add("stats_csr_nnz_agrees", "CSR nnz 5 with statistics nnz 5", (lay("csr"),
                                                                  "Interaction with Statistics Section"),
        csr(f32_, [4, 5], 5, stats=stats(mask=0x01, nnz=5)))
    add("stats_coo_nnz_unset_mismatch", "COO nnz 3 with statistics nnz 7 but NNZ_VALID clear "
        "(the field is unknown, so no disagreement)", (MD, "computed_mask"),
        coo(f32_, [4, 4], 3, stats=stats(mask=0x00, nnz=7)))
    add("stats_dense_nnz", "dense tensor with statistics nnz (no layout nnz to agree with)",
        (MD, "Field Encoding"), dense(f32_, [10], stats=stats(mask=0x03, nnz=3,
                                                              sparsity_ratio=f64(0.7))))
    ext16 = {"bit_width": 16, "packing_factor": 1, "is_float": 1, "is_signed": 0,
             "sign_bits": 1, "exponent_bits": 5, "mantissa_bits": 10, "exponent_bias": 15,
             "has_nan": 1, "has_inf": 1}
    add("ext_private_f0_float16_like", "private element type 0xF0 described as a 16-bit float "
        "(1-5-10, bias 15)", (MD, "Extension Type Section"),
        dense(0xF0, [4], ext=ext16))
    ext4 = {"bit_width": 4, "packing_factor": 2, "is_float": 0, "is_signed": 1}
    add("ext_private_fe_int4_like", "private element type 0xFE, signed 4-bit integer, 2 per "
        "byte: [5] needs 3 bytes", (MD, "Extension Type Section"), dense(0xFE, [5], ext=ext4))
    add("ext_private_f5_bool_like", "private element type 0xF5, 1-bit, 8 per byte",
        (MD, "Extension Type Section"),
        dense(0xF5, [17], ext={"bit_width": 1, "packing_factor": 8}))
    add("ext_private_f1_2bit", "private element type 0xF1, unsigned 2-bit, 4 per byte",
        (MD, "Extension Type Section"),
        dense(0xF1, [6], ext={"bit_width": 2, "packing_factor": 4}))
    add("ext_private_f2_24bit", "private element type 0xF2, 24-bit unsigned integer",
        (MD, "Extension Type Section"),
        dense(0xF2, [3], ext={"bit_width": 24, "packing_factor": 1}))
    add("ext_private_coo", "COO tensor of a private 8-bit element type",
        (MD, "Extension Type Section"),
        descriptor(0xF3, [4, 4], {"tag": L_COO, "nnz": 2, "is_sorted": 1},
                   [buf(2), buf(32)], ext={"bit_width": 8, "packing_factor": 1,
                                           "is_float": 1, "sign_bits": 1, "exponent_bits": 4,
                                           "mantissa_bits": 3, "exponent_bias": 7,
                                           "has_nan": 1}))
    add("member_overlay_base", "overlay member: row-major float16 [4, 4] base spanning the "
        "whole head (shard offset [0, 0]), member_role 1",
        (MD, "Composite Member Section"),
        dense(T["float16"], [4, 4], shard={"parent_shape": [4, 4], "offset": [0, 0]},
              member={"role": 0x01}))
    add("member_overlay_correction", "overlay member: COO float16 correction, member_role 0",
        (lay("composite"), "Composite Member Section"),
        coo(T["float16"], [2, 2], 1, shard={"parent_shape": [4, 4], "offset": [2, 2]},
            member={"role": 0x00}))
    add("member_overlay_quantized_base", "overlay base member stored as int4 with per-block "
        "quantization, statistics and a member section (every optional section but "
        "extension type)", (lay("composite"), "Example"),
        descriptor(T["int4"], [4, 64], {"tag": L_ROW}, [buf(128), buf(16)],
                   quant={"scheme": 0x03, "flags": 1, "axis": 1, "block_size": 32,
                          "scale_index": 1, "zp_index": 0xFFFFFFFF, "scale_type": 0x01},
                   shard={"parent_shape": [4, 64], "offset": [0, 0]},
                   stats=stats(mask=0x04, value_min=f64(-1.0), value_max=f64(1.0),
                               value_abs_max=f64(1.0)),
                   member={"role": 0x01}))
    add("all_sections_private_type", "every optional section at once: private type 0xF8 "
        "(extension section), private quantization scheme, shard, statistics, member "
        "section", (MD, "Overall Descriptor Structure"),
        descriptor(0xF8, [2, 4], {"tag": L_ROW}, [buf(8)],
                   quant={"scheme": 0xFE, "version": 1, "flags": 0, "body": b"\xAA\xBB"},
                   shard={"parent_shape": [2, 8], "offset": [0, 4]},
                   stats=stats(mask=0x20, has_nan=0, has_inf=1),
                   ext={"bit_width": 8, "packing_factor": 1},
                   member={"role": 0x00}))
    return v


def versions():
    v = []
    add = lambda n, desc, rule, d: v.append((n, desc, rule, d))
    add("minor_1_trailing_bytes", "version 1.1 descriptor with 7 trailing bytes after the last "
        "known section: accepted, trailing bytes kept and written back",
        (MD, "Version Compatibility"),
        dense(T["float32"], [3, 4], minor=1, trailing=b"\x01\x02\x03\x04\x05\x06\x07"))
    add("minor_255_no_trailing", "version 1.255 descriptor without trailing bytes",
        (MD, "Version Compatibility"), dense(T["uint8"], [2], minor=255))
    add("minor_1_trailing_after_sections", "version 1.1 with statistics then 3 trailing bytes",
        ("docs/spec/versioning.md", "Compatibility Matrix"),
        dense(T["float32"], [2], minor=1, stats=stats(mask=0x01, nnz=2),
              trailing=b"\xEE\xEE\xEE"))
    add("bytes_after_descriptor", "descriptor followed by 5 unrelated bytes outside "
        "descriptor_length (a stream's next data): decoded from its own length",
        (MD, "Fixed Header"),
        dense(T["float32"], [3, 4], append=b"\xDE\xAD\xBE\xEF\x00"))
    return v


def all_valid():
    return (layouts() + element_types() + shapes() + devices() + quantization()
            + quant_storage() + sections() + versions())

