"""Layouts are objects (the specification's
docs/adr/ADR-032-python-layout-descriptor-hierarchy.md): the class hierarchy,
value semantics, the three authoring tiers of hurray.Tensor(layout=...),
validate_against_shape, the round-trip obligation, and NumPy access to
non-row-major dense tensors."""

import struct

import pytest

import hurray

from conftest import aligned_array, data_ptr

ALL = [
    hurray.RowMajorLayout(),
    hurray.ColMajorLayout(),
    hurray.StridedLayout([4, 1]),
    hurray.TiledLayout([4, 4]),
    hurray.MortonLayout([3, 3]),
    hurray.HilbertLayout(3, 2),
    hurray.CooLayout(nnz=2),
    hurray.CsrLayout(nnz=2),
    hurray.CscLayout(nnz=2),
    hurray.CsfLayout(nnz=2, mode_order=[0, 1, 2]),
    hurray.BlockPagedLayout(16, 64, 0, 2),
    hurray.CompositeLayout("group", 2),
    hurray.PrivateExtensionLayout(0xF0, 7, b""),
    hurray.UnknownLayout(0x0C),
]

CLASSES = [type(x) for x in ALL]


def f32(*values):
    return struct.pack(f"{len(values)}f", *values)


def u64(*values):
    return struct.pack(f"{len(values)}Q", *values)


def csr_tensor():
    return hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(0, 1), u64(0, 1, 2)],
                         layout=hurray.CsrLayout(nnz=2))


# ---- the hierarchy ----------------------------------------------------------------------

def test_every_class_derives_from_the_base_and_is_distinct():
    assert len(set(CLASSES)) == 14
    for layout in ALL:
        assert isinstance(layout, hurray.Layout)
        assert type(layout) is not hurray.Layout
    assert issubclass(hurray.UnknownLayout, hurray.Layout)
    assert not issubclass(hurray.UnknownLayout, hurray.PrivateExtensionLayout)


def test_the_base_is_not_constructible_and_subclasses_are_final():
    with pytest.raises(TypeError):
        hurray.Layout()
    for cls in CLASSES:
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})
    # a Python subclass of the base cannot be instantiated either
    sub = type("Sub", (hurray.Layout,), {})
    with pytest.raises(TypeError):
        sub()


@pytest.mark.parametrize(
    "layout,name,tag",
    [
        (hurray.RowMajorLayout(), "row_major", 0x01),
        (hurray.ColMajorLayout(), "col_major", 0x02),
        (hurray.StridedLayout([1]), "strided", 0x03),
        (hurray.TiledLayout([2]), "tiled", 0x04),
        (hurray.MortonLayout([2]), "morton", 0x05),
        (hurray.CooLayout(1), "coo", 0x06),
        (hurray.CsrLayout(1), "csr", 0x07),
        (hurray.CscLayout(1), "csc", 0x08),
        (hurray.CsfLayout(1, [0, 1, 2]), "csf", 0x09),
        (hurray.BlockPagedLayout(16, 4, 0, 1), "block_paged", 0x0A),
        (hurray.CompositeLayout("partition", 1), "composite", 0x0B),
        (hurray.HilbertLayout(2, 2), "hilbert", 0x40),
        (hurray.PrivateExtensionLayout(0xF3, 1), "extension", 0xF3),
        (hurray.UnknownLayout(0x30), "extension", 0x30),
    ],
)
def test_names_and_tags(layout, name, tag):
    assert layout.name == name
    assert layout.tag == tag


def test_buffer_count_is_zero_for_a_head_and_none_when_unknowable():
    counts = {
        hurray.RowMajorLayout(): 1, hurray.TiledLayout([2, 2]): 1, hurray.HilbertLayout(1, 2): 1,
        hurray.CooLayout(1): 2, hurray.CsrLayout(1): 3, hurray.CscLayout(1): 3,
        hurray.CsfLayout(1, [0, 1, 2]): 7, hurray.CsfLayout(1, [3, 2, 1, 0]): 9,
        hurray.BlockPagedLayout(16, 4, 0, 1): 3, hurray.CompositeLayout("group", 2): 0,
    }
    for layout, n in counts.items():
        assert layout.buffer_count == n, layout
    assert hurray.PrivateExtensionLayout(0xF0, 1).buffer_count is None
    assert hurray.UnknownLayout(0x0C).buffer_count is None


def test_is_dense_and_is_virtual():
    dense = {"row_major", "col_major", "strided", "tiled", "morton", "hilbert"}
    for layout in ALL:
        assert layout.is_dense == (layout.name in dense), layout
        assert layout.is_virtual == (layout.name == "composite"), layout


def test_bare_layout_for_a_bound_but_unknown_variant():
    bare = hurray._hurray._layout_fallback(0x0B)
    assert type(bare) is hurray.Layout
    assert not isinstance(bare, hurray.UnknownLayout)
    assert bare.tag == 0x0B and bare.name == "composite"
    assert repr(bare) == "Layout(tag=0x0B, name='composite')"


# ---- value semantics ----------------------------------------------------------------------

def test_equality_and_hash_by_value():
    assert hurray.CsrLayout(nnz=4) == hurray.CsrLayout(nnz=4)
    assert hurray.CsrLayout(nnz=4) != hurray.CsrLayout(nnz=5)
    assert hurray.CsrLayout(nnz=4) != hurray.CscLayout(nnz=4)
    assert hurray.StridedLayout([4, 1]) != hurray.StridedLayout([4, 1, 1])
    assert hurray.CooLayout(2, is_sorted=True) != hurray.CooLayout(2)
    assert len({hurray.CsrLayout(nnz=4), hurray.CsrLayout(nnz=4)}) == 1
    for a in ALL:
        for b in ALL:
            assert (a == b) == (a is b), (a, b)
    rebuilt = [hurray.StridedLayout([4, 1]), hurray.TiledLayout([4, 4]), hurray.MortonLayout([3, 3]),
               hurray.HilbertLayout(3, 2), hurray.UnknownLayout(0x0C),
               hurray.PrivateExtensionLayout(0xF0, 7, b"")]
    for x in rebuilt:
        twin = next(y for y in ALL if type(y) is type(x))
        assert x == twin and hash(x) == hash(twin)


def test_never_equal_to_a_string():
    for layout in ALL:
        assert layout != layout.name
        assert layout.name != layout
    assert (hurray.RowMajorLayout() == "row_major") is False


def test_layout_getter_is_fresh_equal_and_read_only():
    t = hurray.Tensor(bytes(16), hurray.float32, [4])
    assert t.layout is not t.layout
    assert t.layout == t.layout == hurray.RowMajorLayout()
    with pytest.raises(AttributeError):
        t.layout = hurray.ColMajorLayout()
    with pytest.raises(AttributeError):
        hurray.CsrLayout(4).nnz = 5
    with pytest.raises(AttributeError):
        hurray.CsrLayout(4).__setattr__("extra", 1)


def test_layouts_hold_no_reference_to_their_tensor():
    import gc
    import weakref

    t = csr_tensor()
    ref = weakref.ref(t)
    layout = t.layout
    del t
    gc.collect()
    assert ref() is None
    assert layout == hurray.CsrLayout(2)


# ---- parameters, enumerations, repr -------------------------------------------------------

def test_parameters():
    assert hurray.StridedLayout([0, -1]).strides == (0, -1)
    assert hurray.MortonLayout([3, 2]).morton_bits == (3, 2)
    h = hurray.HilbertLayout(3, 2)
    assert (h.hilbert_order, h.hilbert_rank) == (3, 2)
    assert hurray.CooLayout(nnz=7, is_sorted=True).is_sorted is True
    assert hurray.CooLayout(nnz=7).is_sorted is False
    csf = hurray.CsfLayout(nnz=5, mode_order=[2, 0, 1])
    assert (csf.nnz, csf.mode_order) == (5, (2, 0, 1))
    p = hurray.BlockPagedLayout(page_size=16, num_pages=64, paged_axis=0, num_seqs=2,
                                kv_role="fused", layer_index=3, block_table_index_type="uint64")
    assert (p.page_size, p.num_pages, p.paged_axis, p.num_seqs) == (16, 64, 0, 2)
    assert (p.kv_role, p.layer_index, p.block_table_index_type) == ("fused", 3, "uint64")
    d = hurray.BlockPagedLayout(16, 64, 0, 2)
    assert (d.kv_role, d.layer_index, d.block_table_index_type) == ("key", None, "uint32")
    priv = hurray.PrivateExtensionLayout(0xF0, extension_layout_id=7, extension_data=b"\x01")
    assert (priv.extension_layout_id, priv.extension_data) == (7, b"\x01")
    assert hurray.UnknownLayout(0x0C, b"\x00\x01").raw_bytes == b"\x00\x01"


def test_tiled_parameters_and_nesting():
    flat = hurray.TiledLayout([4, 4], inner_layout="col_major")
    assert flat.tile_shape == (4, 4)
    assert (flat.outer_layout, flat.inner_layout) == ("row_major", "col_major")
    assert flat.outer_strides is None and flat.inner_strides is None and flat.inner_tiled is None
    s = hurray.TiledLayout([2, 2], outer_layout="strided", outer_strides=[1, 4],
                           inner_layout="strided", inner_strides=[2, 1])
    assert (s.outer_strides, s.inner_strides) == ((1, 4), (2, 1))
    nested = hurray.TiledLayout([64, 64], inner_layout="tiled",
                                inner_tiled=hurray.TiledLayout([8, 8]))
    assert nested.inner_tiled == hurray.TiledLayout([8, 8])
    assert "inner_tiled=TiledLayout(tile_shape=(8, 8)" in repr(nested)
    deep = hurray.TiledLayout([2])
    for _ in range(7):
        deep = hurray.TiledLayout([2], inner_layout="tiled", inner_tiled=deep)
    # 9 levels: the shape tier's rule (hurray_layout_validate_shape), not the binding's
    with pytest.raises(hurray.InvalidDescriptorError, match="tiled depth must be 1..8, got 9"):
        hurray.TiledLayout([2], inner_layout="tiled", inner_tiled=deep)


def test_composite_layout_rule_and_combine_are_separate():
    overlay = hurray.CompositeLayout("overlay", member_count=3, combine_op="add")
    assert (overlay.composition_rule, overlay.combine_op, overlay.member_count) == ("overlay", "add", 3)
    assert hurray.CompositeLayout("partition", 2).combine_op is None
    assert hurray.CompositeLayout("group", 2).combine_op is None
    with pytest.raises(ValueError):
        hurray.CompositeLayout("group", 2, combine_op="add")
    with pytest.raises(ValueError):
        hurray.CompositeLayout("overlay", 2)
    with pytest.raises(ValueError):
        hurray.CompositeLayout("overlay", 2, combine_op="max")
    with pytest.raises(ValueError):
        hurray.CompositeLayout("stack", 2)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.CompositeLayout("overlay", 0, combine_op="add")  # an overlay needs a base
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.CompositeLayout("group", 0xFFFFFFFF)  # the reserved "open" count


def test_conditional_fields_are_given_exactly_when_their_condition_holds():
    """libhurray's table says when a field is present (hurray/schema.h, CONDITIONAL);
    the one constructor checks it the same way for every layout."""
    idx = hurray.InvalidDescriptorError
    with pytest.raises(idx, match="outer_strides is given only when outer_layout is 'strided'"):
        hurray.TiledLayout([4], outer_strides=[1])
    with pytest.raises(idx, match="inner_layout 'tiled' needs inner_tiled="):
        hurray.TiledLayout([4], inner_layout="tiled")
    with pytest.raises(idx, match="outer_layout 'strided' needs outer_strides="):
        hurray.TiledLayout([4], outer_layout="strided")
    with pytest.raises(idx, match="combine_op is given only when composition_rule is 'overlay'"):
        hurray.CompositeLayout("group", 2, combine_op="add")
    with pytest.raises(idx, match="composition_rule 'overlay' needs combine_op="):
        hurray.CompositeLayout("overlay", 2)
    # None spells "not given" for a conditional or nullable field
    assert hurray.TiledLayout([4], outer_strides=None) == hurray.TiledLayout([4])
    assert hurray.CompositeLayout("group", 2, None) == hurray.CompositeLayout("group", 2)
    assert hurray.BlockPagedLayout(16, 4, 0, 1, layer_index=None).layer_index is None


LAYOUT_CLASSES = ["RowMajorLayout", "ColMajorLayout", "StridedLayout", "TiledLayout",
                  "MortonLayout", "HilbertLayout", "CooLayout", "CsrLayout", "CscLayout",
                  "CsfLayout", "BlockPagedLayout", "CompositeLayout", "PrivateExtensionLayout",
                  "UnknownLayout"]


@pytest.mark.parametrize("name", LAYOUT_CLASSES)
def test_every_parameter_is_a_documented_read_only_property(name):
    import inspect

    cls = getattr(hurray, name)
    for p in inspect.signature(cls).parameters:
        prop = getattr(cls, p)
        assert isinstance(prop, property) or type(prop).__name__ == "getset_descriptor", p
        assert prop.__doc__, p


def test_enumerations_are_closed_lowercase_strings():
    with pytest.raises(ValueError):
        hurray.TiledLayout([4], outer_layout="tiled")
    with pytest.raises(ValueError):
        hurray.TiledLayout([4], inner_layout="ROW_MAJOR")
    with pytest.raises(ValueError):
        hurray.BlockPagedLayout(16, 4, 0, 1, kv_role="query")
    with pytest.raises(ValueError):
        hurray.BlockPagedLayout(16, 4, 0, 1, block_table_index_type="int32")
    with pytest.raises(TypeError):
        hurray.BlockPagedLayout(16, 4, 0, 1, kv_role=0)


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        (hurray.RowMajorLayout(), "RowMajorLayout()"),
        (hurray.ColMajorLayout(), "ColMajorLayout()"),
        (hurray.CsrLayout(nnz=4), "CsrLayout(nnz=4)"),
        (hurray.CscLayout(nnz=4), "CscLayout(nnz=4)"),
        (hurray.CooLayout(nnz=2), "CooLayout(nnz=2, is_sorted=False)"),
        (hurray.StridedLayout([4, 1]), "StridedLayout(strides=(4, 1))"),
        (hurray.MortonLayout([3, 3]), "MortonLayout(morton_bits=(3, 3))"),
        (hurray.HilbertLayout(3, 2), "HilbertLayout(hilbert_order=3, hilbert_rank=2)"),
        (hurray.CsfLayout(nnz=5, mode_order=[0, 1, 2]), "CsfLayout(nnz=5, mode_order=(0, 1, 2))"),
        (hurray.CompositeLayout("group", 2), "CompositeLayout(composition_rule='group', member_count=2)"),
        (hurray.CompositeLayout("overlay", 2, "replace"),
         "CompositeLayout(composition_rule='overlay', member_count=2, combine_op='replace')"),
        (hurray.TiledLayout([4, 4]),
         "TiledLayout(tile_shape=(4, 4), outer_layout='row_major', inner_layout='row_major')"),
        (hurray.BlockPagedLayout(16, 64, 0, 2),
         "BlockPagedLayout(page_size=16, num_pages=64, paged_axis=0, num_seqs=2, kv_role='key', "
         "layer_index=None, block_table_index_type='uint32')"),
        (hurray.PrivateExtensionLayout(0xF0, 7, b"ab"),
         "PrivateExtensionLayout(tag=0xF0, extension_layout_id=7, extension_data=2 bytes)"),
        (hurray.UnknownLayout(0x0C), "UnknownLayout(tag=0x0C, raw_bytes=0 bytes)"),
    ],
)
def test_repr(layout, expected):
    assert repr(layout) == expected


# ---- constructors check what a layout states about itself ----------------------------------

def test_constructor_rejections():
    idx = hurray.InvalidDescriptorError
    for bad in (
        lambda: hurray.StridedLayout([]),                 # strided needs rank >= 1
        lambda: hurray.StridedLayout([2**63]),            # int64 range
        lambda: hurray.TiledLayout([0, 4]),               # tiles are non-empty
        lambda: hurray.TiledLayout([4], outer_layout="strided"),  # strides missing
        lambda: hurray.TiledLayout([4], outer_strides=[1]),       # strides without 'strided'
        lambda: hurray.TiledLayout([4, 4], outer_layout="strided", outer_strides=[1]),
        lambda: hurray.TiledLayout([4, 4], inner_layout="tiled"),  # nested level missing
        lambda: hurray.TiledLayout([4, 4], inner_layout="tiled", inner_tiled=hurray.TiledLayout([2])),
        lambda: hurray.MortonLayout([0, 3]),              # bits > 0
        lambda: hurray.HilbertLayout(0, 2),               # order >= 1
        lambda: hurray.HilbertLayout(2, 1),               # rank >= 2
        lambda: hurray.HilbertLayout(2, 65),
        lambda: hurray.CsfLayout(1, [0, 1]),              # rank >= 3
        lambda: hurray.CsfLayout(1, [0, 0, 1]),           # a permutation
        lambda: hurray.BlockPagedLayout(0, 4, 0, 1),      # page_size >= 1
        lambda: hurray.BlockPagedLayout(16, 4, 1, 1),     # paged_axis == 0
        lambda: hurray.BlockPagedLayout(16, 4, 0, 1, layer_index=0xFFFFFFFF),
        lambda: hurray.CooLayout(-1),
        lambda: hurray.CsrLayout(2**64),
        lambda: hurray.PrivateExtensionLayout(0x0C, 1),   # not a private tag
        lambda: hurray.UnknownLayout(0x00),
        lambda: hurray.UnknownLayout(0xFF),
    ):
        with pytest.raises(idx):
            bad()
    with pytest.raises(TypeError):
        hurray.StridedLayout("41")
    with pytest.raises(TypeError):
        hurray.CooLayout(2, is_sorted=1)
    with pytest.raises(TypeError):
        hurray.CsrLayout(True)
    with pytest.raises(TypeError):
        hurray.PrivateExtensionLayout(0xF0, 1, extension_data=[1, 2])


def test_unknown_layout_refuses_named_and_private_tags():
    for tag in (0x01, 0x07, 0x0B, 0x40):
        with pytest.raises(ValueError) as ei:
            hurray.UnknownLayout(tag)
        assert type(ei.value) is ValueError
    with pytest.raises(ValueError, match="CsrLayout"):
        hurray.UnknownLayout(0x07)
    with pytest.raises(ValueError, match="PrivateExtensionLayout"):
        hurray.UnknownLayout(0xF0)
    for tag in range(256):
        kind = hurray.layout_tag_kind(tag)
        if kind == "reserved":
            assert hurray.UnknownLayout(tag).tag == tag


# ---- validate_against_shape agrees with the constructor ------------------------------------

SHAPE_CASES = [
    (hurray.CsrLayout(2), [2, 2], True),
    (hurray.CsrLayout(2), [2, 2, 2], False),
    (hurray.CsrLayout(2), [None, 4], True),
    (hurray.CscLayout(2), [3], False),
    (hurray.CooLayout(2), [], False),
    (hurray.CooLayout(0), [5], True),
    (hurray.StridedLayout([1]), [2, 2], False),
    (hurray.StridedLayout([2, 1]), [2, 2], True),
    (hurray.MortonLayout([2, 2]), [4, 4], True),
    (hurray.MortonLayout([2, 2]), [5, 4], False),
    (hurray.MortonLayout([2, 2]), [None, 4], True),
    (hurray.HilbertLayout(2, 2), [4, 4], True),
    (hurray.HilbertLayout(2, 2), [4, 3], False),
    (hurray.HilbertLayout(2, 2), [4, 4, 4], False),
    (hurray.HilbertLayout(2, 2), [None, 4], True),
    (hurray.CsfLayout(2, [0, 1, 2]), [2, 3, 4], True),
    (hurray.CsfLayout(2, [0, 1, 2]), [2, 3], False),
    (hurray.BlockPagedLayout(4, 2, 0, 1), [8, 2, 3], True),
    (hurray.BlockPagedLayout(4, 2, 0, 1), [8, 2], False),
    (hurray.RowMajorLayout(), [], True),
    (hurray.ColMajorLayout(), [None, 3], True),
    (hurray.TiledLayout([2, 2]), [5, 5], True),
    (hurray.TiledLayout([2, 2]), [5], False),
]


@pytest.mark.parametrize("layout,shape,ok", SHAPE_CASES)
def test_validate_against_shape(layout, shape, ok):
    if ok:
        assert layout.validate_against_shape(shape) is None
    else:
        with pytest.raises(hurray.InvalidDescriptorError):
            layout.validate_against_shape(shape)


@pytest.mark.parametrize("layout,shape,ok", [c for c in SHAPE_CASES if None not in c[1]])
def test_validate_against_shape_agrees_with_tensor(layout, shape, ok):
    """The same rule by two doors: the constructor fails the shape tier exactly when
    validate_against_shape does (given ample buffers, the later tiers cannot mask it)."""
    big = [bytes(4096)] * 8
    try:
        hurray.Tensor(big[0], hurray.uint8, shape, aux_buffers=big[1:layout.buffer_count],
                      layout=layout)
        shape_ok = True
    except hurray.InvalidDescriptorError as e:
        shape_ok = e.status != "ERR_INVALID_LAYOUT"
    except hurray.BufferError:
        shape_ok = True
    assert shape_ok == ok


# ---- authoring: the three tiers ----------------------------------------------------------

def test_layout_keyword_and_defaults():
    csr = csr_tensor()
    assert csr.layout == hurray.CsrLayout(nnz=2)
    assert csr.nnz == 2 and csr.buffer_count == 3
    assert hurray.Tensor(bytes(16), hurray.float32, [4]).layout == hurray.RowMajorLayout()


def test_a_layout_string_or_object_is_a_type_error():
    with pytest.raises(TypeError, match="hurray.Layout"):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout="csr")
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout=object())
    with pytest.raises(TypeError):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout=hurray.RowMajorLayout)


def test_shape_tier_is_invalid_descriptor():
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Tensor(bytes(16), hurray.float32, [2, 2, 2], aux_buffers=[bytes(16), bytes(24)],
                      layout=hurray.CsrLayout(nnz=2))
    assert ei.value.status == "ERR_INVALID_LAYOUT"
    with pytest.raises(hurray.InvalidDescriptorError, match="rank 2"):
        hurray.Tensor(bytes(16), hurray.float32, [2, 2], layout=hurray.StridedLayout([1]))


def test_shape_tier_runs_before_the_count_and_size_tiers():
    # wrong rank, too few buffers, too small: the shape tier answers
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Tensor(b"", hurray.float32, [2, 2, 2], layout=hurray.CsrLayout(nnz=100))
    assert ei.value.status == "ERR_INVALID_LAYOUT"
    # right rank, too few and too small buffers: the count tier answers
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Tensor(b"", hurray.float32, [2, 2], layout=hurray.CsrLayout(nnz=100))
    assert ei.value.status == "ERR_INVALID_BUFFER_TABLE"


def test_buffer_count_tier_is_invalid_descriptor():
    with pytest.raises(hurray.InvalidDescriptorError) as ei:
        hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(0, 1)],
                      layout=hurray.CsrLayout(nnz=2))
    assert "3 buffer" in str(ei.value)
    with pytest.raises(hurray.InvalidDescriptorError):  # too many is refused too (strict)
        hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(0, 1), u64(0, 1, 2), b""],
                      layout=hurray.CsrLayout(nnz=2))


def test_quantization_may_not_claim_a_layout_buffer():
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Tensor(struct.pack("2b", 1, 2), hurray.int8, [2, 2],
                      aux_buffers=[u64(0, 1), u64(0, 1, 2)], layout=hurray.CsrLayout(nnz=2),
                      quantization=hurray.PerChannelAffine.symmetric(axis=0, scale_buffer_index=2))


def test_buffer_size_tier_is_hurray_buffer_error_naming_the_buffer():
    with pytest.raises(hurray.BufferError) as ei:
        hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(*range(8))],
                      layout=hurray.CooLayout(nnz=4))
    assert "values" in str(ei.value)
    assert ei.value.status == "ERR_BUFFER_SIZE"
    with pytest.raises(hurray.BufferError, match="row_ptr"):
        hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(0, 1), u64(0, 1)],
                      layout=hurray.CsrLayout(nnz=2))
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(bytes(4), hurray.float32, [4])


def test_nnz_is_never_inferred_nor_corrected():
    with pytest.raises(hurray.BufferError):
        hurray.Tensor(f32(5, 7), hurray.float32, [2, 2], aux_buffers=[u64(0, 0, 1, 1, 0, 1, 1, 0)],
                      layout=hurray.CooLayout(nnz=4))
    t = hurray.Tensor(f32(*range(8)), hurray.float32, [2, 2],
                      aux_buffers=[u64(*range(8)), u64(0, 1, 2, 0, 0, 0, 0, 0)],
                      layout=hurray.CsrLayout(nnz=2))
    assert t.nnz == 2  # over-sized buffers are fine, and declared at their size
    assert t.buffer_handles[0].byte_size == 32


def test_composite_layout_is_unsupported_by_tensor():
    with pytest.raises(hurray.UnsupportedError, match="owns no buffers"):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout=hurray.CompositeLayout("group", 2))


def test_strided_with_byte_offset():
    data = f32(0, 1, 2, 3)
    t = hurray.Tensor(data, hurray.float32, [4], layout=hurray.StridedLayout([-1]), byte_offset=12)
    assert t.byte_offset == 12
    import numpy as np

    assert np.asarray(t).tolist() == [3, 2, 1, 0]
    with pytest.raises(hurray.InvalidDescriptorError) as ei:  # element 1 would precede the buffer
        hurray.Tensor(data, hurray.float32, [4], layout=hurray.StridedLayout([-1]))
    assert ei.value.field == "byte_offset"


# ---- private and unknown layouts --------------------------------------------------------

def test_private_layout_tensor_skips_the_count_and_size_tiers():
    layout = hurray.PrivateExtensionLayout(0xF1, 9, b"\x07")
    t = hurray.Tensor(b"\x01", hurray.float32, [100], aux_buffers=[b"", b"\x02"], layout=layout)
    assert t.layout == layout and t.buffer_count == 3
    d = hurray.Descriptor.decode(t.descriptor.encode(), permissive=True)
    assert d.layout == layout
    with pytest.raises(hurray.InvalidDescriptorError):  # a strict reader refuses it
        hurray.Descriptor.decode(t.descriptor.encode())


def test_unknown_layout_relays_through_a_tensor():
    layout = hurray.UnknownLayout(0x0C, b"\x01\x02")
    t = hurray.Tensor(None, hurray.float32, [4], layout=layout)
    assert t.layout == layout and t.layout.raw_bytes == b"\x01\x02"
    assert t.buffer_count == 0
    again = hurray.Tensor(b"", t.dtype, t.shape, layout=t.layout)
    assert again.descriptor == t.descriptor
    d = hurray.Descriptor.decode(t.descriptor.encode(), permissive=True)
    assert d.layout == layout and isinstance(d.layout, hurray.UnknownLayout)
    with pytest.raises(hurray.InvalidDescriptorError, match="raw bytes"):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout=layout)


def test_unknown_layout_decoded_from_the_wire_keeps_everything_after_byte_offset():
    wire = bytearray(hurray.Tensor(bytes(16), hurray.float32, [4]).descriptor.encode())
    wire[15] = 0x20  # a reserved layout tag
    d = hurray.Descriptor.decode(bytes(wire), permissive=True)
    assert isinstance(d.layout, hurray.UnknownLayout)
    assert d.layout.raw_bytes == bytes(wire[20 + 8 + 8:])
    rebuilt = hurray.Tensor(None, d.dtype, d.shape, layout=d.layout)
    assert rebuilt.descriptor.encode() == bytes(wire)


# ---- the round-trip obligation -------------------------------------------------------------

def test_rebuilding_gives_an_equal_descriptor_for_dense_layouts(np):
    cases = [
        (hurray.RowMajorLayout(), [4, 4], 0),
        (hurray.ColMajorLayout(), [4, 4], 0),
        (hurray.StridedLayout([1, 4]), [4, 4], 0),
        (hurray.StridedLayout([-4, 1]), [4, 4], 48),
        (hurray.TiledLayout([2, 2], inner_layout="col_major"), [4, 4], 0),
        (hurray.MortonLayout([2, 2]), [4, 4], 0),
        (hurray.HilbertLayout(2, 2), [4, 4], 0),
    ]
    data = aligned_array((16,), "f4", fill=np.arange(16))
    for layout, shape, off in cases:
        t = hurray.Tensor(data, hurray.float32, shape, layout=layout, byte_offset=off)
        again = hurray.Tensor(np.asarray(t.buffer(0)), t.dtype, t.shape, layout=t.layout,
                              quantization=t.quantization, statistics=t.statistics,
                              shard=t.shard, byte_offset=t.byte_offset)
        assert again.descriptor == t.descriptor, layout


# ---- NumPy access to non-row-major dense tensors -----------------------------------------

def test_col_major_and_strided_are_views(np):
    a = aligned_array((3, 4), "f4", fill=np.arange(12).reshape(3, 4))
    cm = hurray.Tensor(a, hurray.float32, [4, 3], layout=hurray.ColMajorLayout())
    v = np.asarray(cm)
    assert data_ptr(v) == a.ctypes.data
    assert (v == a.T).all()
    st = hurray.Tensor(a, hurray.float32, [2, 2], layout=hurray.StridedLayout([8, 1]))
    w = np.asarray(st)
    assert data_ptr(w) == a.ctypes.data
    assert w.tolist() == [[0, 1], [8, 9]]


def _reference_gather(np, buf, layout_offsets, shape):
    flat = np.frombuffer(buf, dtype=np.float32)
    out = np.empty(shape, dtype=np.float32)
    for idx in np.ndindex(*shape):
        out[idx] = flat[layout_offsets(idx)]
    return out


def test_tiled_morton_hilbert_copy_through_the_addressing(np):
    base = np.arange(64, dtype=np.float32)
    buf = aligned_array((64,), "f4", fill=base)
    # tiled 2x2 tiles over [4, 6]: tiles row-major, elements row-major within a tile
    t = hurray.Tensor(buf, hurray.float32, [4, 6], layout=hurray.TiledLayout([2, 2]))
    got = np.asarray(t)
    assert got.flags.c_contiguous and not np.shares_memory(got, buf)

    def tiled(idx):
        i, j = idx
        return ((i // 2) * 3 + j // 2) * 4 + (i % 2) * 2 + j % 2

    assert (got == _reference_gather(np, buf.tobytes(), tiled, (4, 6))).all()

    def morton(idx):
        i, j = idx
        code = 0
        for b in range(2):
            code |= ((i >> b) & 1) << (2 * b) | ((j >> b) & 1) << (2 * b + 1)
        return code

    m = hurray.Tensor(buf, hurray.float32, [4, 4], layout=hurray.MortonLayout([2, 2]))
    assert (np.asarray(m) == _reference_gather(np, buf.tobytes(), morton, (4, 4))).all()
    h = hurray.Tensor(buf, hurray.float32, [2, 2], layout=hurray.HilbertLayout(1, 2))
    # order-1 Hilbert curve over 2x2 (Skilling): (0,0)=0 (0,1)=1 (1,1)=2 (1,0)=3
    assert np.asarray(h).tolist() == [[0, 1], [3, 2]]
    with pytest.raises(hurray.CopyRequiredError):
        t.__array__(copy=False)
    with pytest.raises(AttributeError):
        t.__array_interface__
    assert t.__array__(dtype=np.float64).dtype == np.float64


def test_tiled_bool_and_int_copies(np):
    bits = np.packbits(np.array([1, 0, 0, 1] * 4, dtype=bool), bitorder="little")
    t = hurray.Tensor(bytes(bits), hurray.bool, [4, 4], layout=hurray.TiledLayout([2, 2]))
    got = np.asarray(t)
    assert got.dtype == np.bool_
    # each tile holds [1, 0, 0, 1] row-major: the identity pattern per 2x2 tile
    assert got.tolist() == [[True, False, True, False], [False, True, False, True]] * 2


def test_dlpack_refuses_non_viewable_dense_layouts():
    t = hurray.Tensor(bytes(64), hurray.float32, [4, 4], layout=hurray.TiledLayout([2, 2]))
    with pytest.raises(BufferError, match="tiled"):
        t.__dlpack__()


# ---- descriptors report the same classes ------------------------------------------------

def test_descriptor_layout_getter_returns_classes():
    csr = csr_tensor()
    d = csr.descriptor
    assert d.layout == csr.layout == hurray.CsrLayout(2)
    back = hurray.Descriptor.decode(d.encode())
    assert type(back.layout) is hurray.CsrLayout


def test_layout_tag_kind_partitions_the_byte_space():
    kinds = [hurray.layout_tag_kind(t) for t in range(256)]
    assert kinds[0x00] == kinds[0xFF] == "invalid"
    assert kinds[0x40] == "named" and kinds[0x0C] == "reserved" and kinds[0xF0] == "private"
    assert kinds.count("named") == 12
    assert set(kinds) == {"named", "reserved", "private", "invalid"}


def test_buffers_as_one_sequence(np):
    # borrowed buffers, so the rebuilt tensor measures the same alignments
    parts = [aligned_array((2,), "f4", fill=[5, 7]), aligned_array((2,), "u8", fill=[0, 1]),
             aligned_array((3,), "u8", fill=[0, 1, 2])]
    t = hurray.Tensor(parts, hurray.float32, [2, 2], layout=hurray.CsrLayout(2))
    u = hurray.Tensor(tuple(parts), hurray.float32, [2, 2], layout=hurray.CsrLayout(2))
    assert t.buffer_count == u.buffer_count == 3 and t.nnz == 2
    views = [np.asarray(t.buffer(i)) for i in range(t.buffer_count)]
    again = hurray.Tensor(views, t.dtype, t.shape, layout=t.layout)
    assert again.descriptor == t.descriptor
    with pytest.raises(TypeError, match="not both"):
        hurray.Tensor(parts, hurray.float32, [2, 2], aux_buffers=[], layout=hurray.CsrLayout(2))
    with pytest.raises(TypeError):
        hurray.Tensor([], hurray.float32, [2])
    with pytest.raises(TypeError):
        hurray.Tensor(None, hurray.float32, [2])
    with pytest.raises(TypeError):
        hurray.Tensor([b"", 3], hurray.float32, [0])


def test_part2_signatures_are_introspectable():
    import inspect

    for f in (*CLASSES, hurray.Layout.validate_against_shape,
              hurray.BlockPagedLayout.validate_index_buffers,
              hurray.BlockPagedLayout.validate_quantization_compatibility,
              hurray.PerTensorAffine, hurray.PerChannelAffine, hurray.PerChannelAffine.symmetric,
              hurray.PerChannelAffine.asymmetric, hurray.PerBlockAffine,
              hurray.PerBlockAffine.symmetric, hurray.NF4, hurray.MXFP, hurray.NF4.encode,
              hurray.OpaqueQuantization, hurray.decode_quantization, hurray.Statistics,
              hurray.Shard, hurray.Composite, hurray.sparse_coo, hurray.from_scipy,
              hurray.Tensor.to_scipy):
        inspect.signature(f)
    assert "byte_offset=0" in str(inspect.signature(hurray.Tensor))
