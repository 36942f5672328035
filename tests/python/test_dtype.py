"""hurray.Dtype (docs/internals/decisions.md § Python tensor surface): singletons, lookups,
predicates, private types."""

import pickle

import pytest

import hurray

TIER1 = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "uint16",
         "int32", "uint32", "int64", "uint64", "bool"]
TIER2 = ["float8_e4m3", "float8_e5m2", "float8_e8m0", "float4_e2m1", "float6_e2m3",
         "float6_e3m2", "float128", "int4", "uint4", "int2", "uint2", "complex64",
         "complex128"]


@pytest.mark.parametrize("name", TIER1)
def test_tier1_singletons(name):
    d = getattr(hurray, name)
    assert d is getattr(hurray.dtype, name)
    assert d is hurray.Dtype.from_name(name)
    assert d is hurray.Dtype.from_tag(d.tag)
    assert d.name == name and str(d) == name
    assert d.tier == 1 and d.is_array_api
    assert repr(d) == f"hurray.Dtype('{name}')"


@pytest.mark.parametrize("name", TIER2)
def test_tier2_on_namespace_only(name):
    d = getattr(hurray.dtype, name)
    assert not hasattr(hurray, name)
    assert d.tier == 2 and not d.is_array_api
    assert d is hurray.Dtype.from_tag(d.tag) is hurray.Dtype.from_name(name)


def test_from_hurray_dtype_import():
    from hurray.dtype import int4
    assert int4 is hurray.dtype.int4


@pytest.mark.parametrize("name,tag,bits,itemsize,f,i,s,sub,cx", [
    ("float32", 0x03, 32, 4, True, False, True, False, False),
    ("bfloat16", 0x02, 16, 2, True, False, True, False, False),
    ("uint16", 0x13, 16, 2, False, True, False, False, False),
    ("int64", 0x16, 64, 8, False, True, True, False, False),
    ("bool", 0x20, 1, None, False, False, False, True, False),
    ("int4", 0x48, 4, None, False, True, True, True, False),
    ("uint2", 0x4B, 2, None, False, True, False, True, False),
    ("float8_e8m0", 0x42, 8, 1, True, False, False, False, False),
    ("float6_e3m2", 0x45, 6, None, True, False, True, True, False),
    ("complex64", 0x50, 64, 8, True, False, True, False, True),
    ("complex128", 0x51, 128, 16, True, False, True, False, True),
    ("float128", 0x46, 128, 16, True, False, True, False, False),
])
def test_properties(name, tag, bits, itemsize, f, i, s, sub, cx):
    d = hurray.Dtype.from_name(name)
    assert (d.tag, d.bit_width, d.itemsize) == (tag, bits, itemsize)
    assert (d.is_float, d.is_integer, d.is_signed, d.is_sub_byte, d.is_complex) == (f, i, s, sub, cx)
    assert not d.is_extension


def test_private_types_are_singletons_with_tag_in_repr():
    a = hurray.Dtype.from_tag(0xF3)
    assert a is hurray.Dtype.from_tag(0xF3)
    b = hurray.Dtype.from_tag(0xF4)
    assert a.name == b.name == "extension"
    assert a != b and repr(a) != repr(b)
    assert "0xf3" in repr(a) and "0xf4" in repr(b)
    assert a.is_extension and a.tag == 0xF3
    assert a.bit_width is None and a.itemsize is None and a.tier is None
    assert not (a.is_float or a.is_integer or a.is_signed or a.is_sub_byte)
    assert hurray.Dtype.from_tag(0xF0).tag == 0xF0
    assert hurray.Dtype.from_tag(0xFE).tag == 0xFE


@pytest.mark.parametrize("tag", [0x00, 0xFF, 0x47, 0x80, 0xEF, 0x05, 0x21, 0x3F, 0x52])
def test_from_tag_refuses_tags_that_name_nothing(tag):
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_tag(tag)


def test_from_tag_and_name_errors():
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_tag(256)
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_tag(-1)
    with pytest.raises(TypeError):
        hurray.Dtype.from_tag("float32")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_name("not_a_type")
    with pytest.raises(hurray.InvalidDescriptorError):
        hurray.Dtype.from_name("extension")
    with pytest.raises(TypeError):
        hurray.Dtype.from_name(3)


def test_not_constructible_and_immutable():
    with pytest.raises(TypeError):
        hurray.Dtype()
    with pytest.raises(AttributeError):
        hurray.float32.name = "x"
    with pytest.raises(TypeError):
        hurray.float32.__class__.foo = 1


def test_hash_eq_and_ordering():
    d = {hurray.float32: "fp32", hurray.dtype.int4: "i4"}
    assert d[hurray.Dtype.from_name("float32")] == "fp32"
    assert hurray.float32 == hurray.float32 and hurray.float32 != hurray.float64
    assert hurray.float32 != "float32"
    with pytest.raises(TypeError):
        hurray.float32 < hurray.float64


def test_pickle_returns_the_singleton():
    for d in (hurray.float32, hurray.dtype.int4, hurray.Dtype.from_tag(0xF7)):
        assert pickle.loads(pickle.dumps(d)) is d
