"""dtype= accepts what NumPy and PyTorch users write: NumPy dtypes and scalar
types (ml_dtypes' too), torch dtypes, their string names, safetensors' dtype
codes and the Python types; a foreign type hurray has no equivalent for is
refused by name, and an unknown name lists the valid ones, closest first."""
import pytest

import hurray

np = pytest.importorskip("numpy")

NUMPY = [
    (np.float32, "float32"), (np.dtype("float64"), "float64"), (np.float16, "float16"),
    (np.int8, "int8"), (np.uint16, "uint16"), (np.int64, "int64"), (np.bool_, "bool"),
    (np.complex64, "complex64"), (np.dtype("complex128"), "complex128"),
    ("f4", "float32"), ("<i8", "int64"), ("float", "float64"), ("half", "float16"),
    (float, "float64"), (int, "int64"), (bool, "bool"), (complex, "complex128"),
]
SAFETENSORS = [
    ("F64", "float64"), ("F32", "float32"), ("F16", "float16"), ("BF16", "bfloat16"),
    ("I64", "int64"), ("I32", "int32"), ("I16", "int16"), ("I8", "int8"), ("U64", "uint64"),
    ("U32", "uint32"), ("U16", "uint16"), ("U8", "uint8"), ("BOOL", "bool"),
    ("C64", "complex64"), ("F8_E4M3", "float8_e4m3"), ("F8_E5M2", "float8_e5m2"),
    ("F8_E8M0", "float8_e8m0"), ("F6_E2M3", "float6_e2m3"), ("F6_E3M2", "float6_e3m2"),
    ("F4", "float4_e2m1"),
]


@pytest.mark.parametrize("given,name", NUMPY + SAFETENSORS)
def test_numpy_python_and_safetensors_spellings(given, name):
    assert hurray.empty([3], dtype=given).dtype is getattr(hurray.dtype, name)


def test_every_hurray_name_and_dtype_object():
    for name, d in hurray._hurray._dtype_table().items():
        assert hurray.empty([2], dtype=name).dtype is d
        assert hurray.empty([2], dtype=d).dtype is d


def test_ml_dtypes_types():
    ml = pytest.importorskip("ml_dtypes")
    pairs = [(ml.bfloat16, "bfloat16"), (ml.float8_e4m3fn, "float8_e4m3"),
             (ml.float8_e5m2, "float8_e5m2"), (ml.int4, "int4"), (ml.uint4, "uint4")]
    for attr, name in [("float8_e8m0fnu", "float8_e8m0"), ("float6_e2m3fn", "float6_e2m3"),
                       ("float6_e3m2fn", "float6_e3m2"), ("float4_e2m1fn", "float4_e2m1"),
                       ("int2", "int2"), ("uint2", "uint2")]:
        if hasattr(ml, attr):
            pairs.append((getattr(ml, attr), name))
    for t, name in pairs:
        assert hurray.empty([2], dtype=t).dtype.name == name
        assert hurray.empty([2], dtype=np.dtype(t)).dtype.name == name


def test_torch_dtypes_and_their_names():
    torch = pytest.importorskip("torch")
    pairs = [(torch.float32, "float32"), (torch.float, "float32"), (torch.half, "float16"),
             (torch.bfloat16, "bfloat16"), (torch.float64, "float64"), (torch.int8, "int8"),
             (torch.uint8, "uint8"), (torch.int16, "int16"), (torch.int32, "int32"),
             (torch.int64, "int64"), (torch.bool, "bool"), (torch.complex64, "complex64"),
             (torch.complex128, "complex128"), (torch.float8_e4m3fn, "float8_e4m3"),
             (torch.float8_e5m2, "float8_e5m2")]
    for attr, name in [("uint16", "uint16"), ("uint32", "uint32"), ("uint64", "uint64"),
                       ("float8_e8m0fnu", "float8_e8m0"), ("int4", "int4"), ("uint4", "uint4")]:
        if hasattr(torch, attr):
            pairs.append((getattr(torch, attr), name))
    for t, name in pairs:
        assert hurray.empty([2], dtype=t).dtype.name == name
        assert hurray.empty([2], dtype=str(t)).dtype.name == name  # "torch.float32"


def test_torch_types_without_an_equivalent_say_why():
    torch = pytest.importorskip("torch")
    with pytest.raises(hurray.UnsupportedError, match="float8_e4m3fnuz.*float8_e4m3fn"):
        hurray.zeros([2], dtype=torch.float8_e4m3fnuz)
    with pytest.raises(hurray.UnsupportedError, match="qint8 has no hurray element type"):
        hurray.zeros([2], dtype=torch.qint8)
    with pytest.raises(hurray.UnsupportedError, match="complex64 and complex128"):
        hurray.zeros([2], dtype="torch.complex32")


def test_numpy_types_without_an_equivalent():
    with pytest.raises(hurray.UnsupportedError, match="native byte order"):
        hurray.zeros([2], dtype=np.dtype(">f4"))
    with pytest.raises(hurray.UnsupportedError, match="no hurray element type"):
        hurray.zeros([2], dtype=np.dtype("U3"))
    with pytest.raises(hurray.UnsupportedError, match="no hurray element type"):
        hurray.zeros([2], dtype=np.datetime64)
    if np.finfo(np.longdouble).nmant != 112:  # x87 extended precision, not binary128
        with pytest.raises(hurray.UnsupportedError, match="long double"):
            hurray.zeros([2], dtype=np.longdouble)


def test_unknown_names_list_the_valid_ones_closest_first():
    with pytest.raises(hurray.InvalidDescriptorError,
                       match=r"'flaot32'; did you mean 'float32'\? Valid names: .*bfloat16"):
        hurray.zeros([2], dtype="flaot32")
    with pytest.raises(hurray.InvalidDescriptorError, match="did you mean 'bfloat16'"):
        hurray.zeros([2], dtype="bfloat61")
    with pytest.raises(hurray.InvalidDescriptorError, match="did you mean 'float8_e4m3'"):
        hurray.zeros([2], dtype="float8_e4m3f")
    with pytest.raises(hurray.InvalidDescriptorError) as e:
        hurray.zeros([2], dtype="zzzzzz")
    assert "did you mean" not in str(e.value) and "Valid names: " in str(e.value)
    for name in hurray._hurray._dtype_table():
        assert name in str(e.value)


def test_other_objects_are_a_type_error():
    with pytest.raises(TypeError, match="NumPy or PyTorch dtype, not object"):
        hurray.zeros([2], dtype=object())
    with pytest.raises(TypeError):
        hurray.zeros([2], dtype=3)


def test_the_same_rules_everywhere_dtype_is_taken():
    a = np.arange(6, dtype=np.float32)
    t = hurray.Tensor(a.tobytes(), np.float32, (6,))
    assert t.dtype is hurray.float32
    assert hurray.full([2], 1.5, dtype=np.float16).dtype is hurray.float16
    assert hurray.arange(4, dtype=np.int32).dtype is hurray.int32
    assert hurray.asarray(a, dtype=np.float32).dtype is hurray.float32
