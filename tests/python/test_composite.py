"""hurray.Composite (the specification's docs/adr/ADR-036-python-composite-class.md):
construction and its rules (delegated to the C composite validator), derived
overlay roles, value equality, repr, and the surface a composite must not have."""

import struct

import pytest

import hurray


def tile(offset, shape=(2, 4), parent=(4, 4), fill=0):
    n = shape[0] * shape[1]
    return hurray.Tensor(struct.pack(f"{n}f", *([fill] * n)), hurray.float32, list(shape),
                         shard=hurray.Shard(parent, offset))


def partition():
    return hurray.Composite("partition", shape=[4, 4], dtype=hurray.float32,
                            members=[tile([0, 0]), tile([2, 0])])


def overlay(op="add"):
    base = tile([0, 0], shape=(4, 4))
    corr = tile([1, 0], shape=(1, 4), fill=1)
    return hurray.Composite("overlay", [4, 4], hurray.float32, [base, corr], combine_op=op)


# ---- construction -----------------------------------------------------------------------

def test_a_partition():
    c = partition()
    assert (c.composition_rule, c.combine_op, c.shape, c.ndim) == ("partition", None, (4, 4), 2)
    assert c.shard is None
    assert c.dtype is hurray.float32 and c.member_count == 2 and len(c.members) == 2
    assert all(type(m) is hurray.Tensor for m in c.members)
    assert c.member_roles == (None, None)
    assert c.layout == hurray.CompositeLayout("partition", 2)
    d = c.descriptor
    assert type(d) is hurray.Descriptor and d.buffer_count == 0 and d.layout.is_virtual
    assert d.device is None and d.shape == (4, 4)
    assert hurray.Descriptor.decode(d.encode()) == d


def test_a_composite_is_not_a_tensor():
    c = partition()
    assert not isinstance(c, hurray.Tensor)
    for attr in ("values", "buffer", "buffer_count", "buffer_handles", "__array__", "__dlpack__",
                 "__hurray__", "__array_interface__", "to_torch"):
        assert not hasattr(c, attr), attr
    with pytest.raises(TypeError):
        hash(c)
    import pickle
    assert pickle.loads(pickle.dumps(c)) == c  # test_pickle.py covers every kind


def test_shape_and_dtype_are_stated_not_derived():
    with pytest.raises(TypeError):
        hurray.Composite("partition", members=[tile([0, 0]), tile([2, 0])])
    with pytest.raises(hurray.InvalidDescriptorError):  # members do not cover a [4, 8] head
        hurray.Composite("partition", [4, 8], hurray.float32,
                         [tile([0, 0], parent=(4, 8)), tile([2, 0], parent=(4, 8))])
    with pytest.raises(hurray.InvalidDescriptorError):  # dtype disagrees with the members
        hurray.Composite("partition", [4, 4], hurray.float64, [tile([0, 0]), tile([2, 0])])
    with pytest.raises(hurray.InvalidDescriptorError, match=r"Composite: shape\[1\] is dynamic"):
        hurray.Composite("group", [4, None], hurray.float32, [tile([0, 0])])


def test_members_must_be_tensors_or_composites():
    for bad in (3, b"bytes", hurray.CsrLayout(1), None):
        with pytest.raises(TypeError, match=r"members\[1\]"):
            hurray.Composite("group", [], hurray.float32, [tile([0, 0]), bad])
    with pytest.raises(TypeError):
        hurray.Composite("group", [], hurray.float32, "ab")
    with pytest.raises(TypeError):
        hurray.Composite("group", [], hurray.float32, 5)


def test_combine_op_rules():
    assert overlay("add").combine_op == "add"
    assert overlay("replace").combine_op == "replace"
    with pytest.raises(ValueError):
        overlay(None)
    with pytest.raises(ValueError):
        overlay("max")
    with pytest.raises(ValueError):
        hurray.Composite("partition", [4, 4], hurray.float32, [tile([0, 0]), tile([2, 0])],
                         combine_op="add")
    with pytest.raises(ValueError):
        hurray.Composite("stack", [4, 4], hurray.float32, [tile([0, 0])])


def test_partition_rules_come_from_the_validator():
    with pytest.raises(hurray.InvalidDescriptorError, match="overlap"):
        hurray.Composite("partition", [4, 4], hurray.float32, [tile([0, 0]), tile([1, 0])])
    with pytest.raises(hurray.InvalidDescriptorError, match="cover"):
        hurray.Composite("partition", [4, 4], hurray.float32, [tile([0, 0])])
    with pytest.raises(hurray.InvalidDescriptorError):  # a member without a shard
        hurray.Composite("partition", [4, 4], hurray.float32,
                         [tile([0, 0]), hurray.Tensor(bytes(32), hurray.float32, [2, 4])])
    with pytest.raises(hurray.InvalidDescriptorError) as ei:  # a parent shape that is not the head
        hurray.Composite("partition", [4, 4], hurray.float32,
                         [tile([0, 0]), tile([2, 0], parent=(8, 4))])
    assert ei.value.status == "ERR_INVALID_COMPOSITE"


def test_overlay_roles_are_derived_by_position():
    o = overlay()
    assert o.member_roles == ("base", "correction")
    # the role lives on the composite: the member tensor's own descriptor has none
    base = o.members[0]
    assert o.member_descriptors[0] != base.descriptor
    assert not hasattr(base, "member_role") and not hasattr(base, "role")
    with pytest.raises(hurray.InvalidDescriptorError):  # the base must come first
        hurray.Composite("overlay", [4, 4], hurray.float32,
                         [tile([1, 0], shape=(1, 4)), tile([0, 0], shape=(4, 4))], combine_op="add")


def test_a_decoded_member_keeps_its_role():
    o = overlay()
    d0, d1 = o.member_descriptors
    m0 = hurray._hurray._tensor_from_descriptor(d0, [bytes(64)])
    m1 = hurray._hurray._tensor_from_descriptor(d1, [struct.pack("4f", 1, 1, 1, 1)])
    again = hurray.Composite("overlay", [4, 4], hurray.float32, [m0, m1], combine_op="add")
    assert again.member_roles == ("base", "correction")
    assert again == o  # equal to its own round trip
    with pytest.raises(hurray.InvalidDescriptorError):  # a kept role that contradicts position
        hurray.Composite("overlay", [4, 4], hurray.float32, [m1, m0], combine_op="add")
    with pytest.raises(hurray.InvalidDescriptorError):  # a role outside an overlay
        hurray.Composite("group", [], hurray.float32, [m0])


def test_nesting_and_depth():
    g = hurray.Composite("group", [], hurray.float32, [partition(), overlay(), tile([0, 0])])
    assert type(g.members[0]) is hurray.Composite and g.member_roles == (None, None, None)
    deep = tile([0, 0])
    for _ in range(8):  # eight nested heads: depths 0..7, the maximum
        deep = hurray.Composite("group", [], hurray.float32, [deep])
    with pytest.raises(hurray.InvalidDescriptorError):  # nine levels of heads
        hurray.Composite("group", [], hurray.float32, [deep])
    with pytest.raises(hurray.InvalidDescriptorError):  # a head cannot be an overlay member
        hurray.Composite("overlay", [4, 4], hurray.float32, [tile([0, 0], shape=(4, 4)), partition()],
                         combine_op="add")
    inner = hurray.Composite("partition", [4, 4], hurray.float32, [tile([0, 0]), tile([2, 0])])
    with pytest.raises(hurray.InvalidDescriptorError, match="shard"):  # where does it go?
        hurray.Composite("partition", [4, 4], hurray.float32, [inner])
    placed = hurray.Composite("partition", [4, 4], hurray.float32, [tile([0, 0]), tile([2, 0])],
                              shard=hurray.Shard([4, 8], [0, 4]))
    assert placed.shard == hurray.Shard([4, 8], [0, 4]) and inner.shard is None
    p = hurray.Composite("partition", [4, 8], hurray.float32,
                         [tile([0, 0], shape=(4, 4), parent=(4, 8)), placed])
    assert p.member_count == 2 and p.member_descriptors[1] == placed.descriptor
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Composite("group", [4, 4], hurray.float32, [], shard=hurray.Shard([4], [0]))


def test_value_equality():
    assert partition() == partition()
    assert overlay() == overlay() and overlay("add") != overlay("replace")
    other_bytes = hurray.Composite("partition", [4, 4], hurray.float32,
                                   [tile([0, 0]), tile([2, 0], fill=3)])
    assert partition() != other_bytes
    g1 = hurray.Composite("group", [], hurray.float32, [partition()])
    g2 = hurray.Composite("group", [], hurray.float32, [partition()])
    assert g1 == g2
    assert g1 != hurray.Composite("group", [], hurray.float32, [tile([0, 0])])
    assert (partition() == "composite") is False


def test_equality_ignores_where_the_bytes_sit(np):
    """A buffer declares the binding's floor whatever its address, so a borrowed
    page-aligned buffer and a copy describe the same tensor."""
    from conftest import aligned_array

    page = aligned_array((8,), "f4", align=4096, fill=2)

    def make(copy):
        members = [hurray.Tensor(page, hurray.float32, [2, 4], shard=hurray.Shard([4, 4], [r, 0]),
                                 copy=copy) for r in (0, 2)]
        return hurray.Composite("partition", [4, 4], hurray.float32, members)

    borrowed, copied = make(False), make(True)
    assert borrowed.members[0].buffer_handles[0].alignment == 64
    assert copied.members[0].buffer_handles[0].alignment == 64
    assert borrowed.members[0].descriptor == copied.members[0].descriptor
    assert borrowed == copied


def test_repr_is_depth_aware():
    g = hurray.Composite("group", [], hurray.float32, [overlay(), tile([0, 0])])
    text = repr(g)
    lines = text.splitlines()
    assert lines[0].startswith("hurray.Composite('group'")
    assert lines[1].startswith("  hurray.Composite('overlay'") and "combine_op='add'" in lines[1]
    assert lines[2].startswith("    base: hurray.Tensor(")
    assert lines[3].startswith("    correction: hurray.Tensor(")
    assert lines[-1] == "])"
    assert repr(hurray.Composite("group", [], hurray.float32, [])) == \
        "hurray.Composite('group', shape=(), dtype=float32, members=[])"
