"""PyTorch interop through DLPack: from_torch and Tensor.to_torch, zero-copy
both ways (pointer equality), bit-exact round trips of every Tier 1 type,
lifetime."""

import weakref

import pytest

import hurray
from conftest import aligned_array, collect, data_ptr


def _torch():
    return pytest.importorskip("torch")


def _types(torch):
    return {
        "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
        "float64": torch.float64, "int8": torch.int8, "uint8": torch.uint8,
        "int16": torch.int16, "uint16": torch.uint16, "int32": torch.int32,
        "uint32": torch.uint32, "int64": torch.int64, "uint64": torch.uint64,
        "bool": torch.bool, "complex64": torch.complex64, "complex128": torch.complex128,
    }


def _random(torch, dt, shape):
    g = torch.Generator().manual_seed(7)
    if dt is torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    n = 1
    for s in shape:
        n *= s
    nbytes = n * torch.empty((), dtype=dt).element_size()
    raw = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=g)
    return raw.view(dt).reshape(shape).clone()


@pytest.mark.parametrize("name", [
    "float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "uint16",
    "int32", "uint32", "int64", "uint64", "bool", "complex64", "complex128"])
def test_round_trip_bit_exact(name):
    torch = _torch()
    dt = _types(torch)[name]
    src = _random(torch, dt, (4, 6))
    t = hurray.from_torch(src)
    assert t.dtype is hurray.Dtype.from_name(name)
    assert t.shape == (4, 6)
    back = t.to_torch()
    assert back.dtype == dt and tuple(back.shape) == (4, 6)
    if name == "bool":
        assert torch.equal(back, src)
    else:
        assert back.view(torch.uint8).flatten().tolist() == src.view(torch.uint8).flatten().tolist()
        # zero-copy both ways
        assert src.data_ptr() % 64 == 0
        assert back.data_ptr() == src.data_ptr()


def test_from_torch_zero_copy_and_lifetime():
    torch = _torch()
    np = pytest.importorskip("numpy")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    ptr = x.data_ptr()
    t = hurray.from_torch(x)
    assert data_ptr(np.asarray(t)) == ptr
    x[0, 0] = 42.0
    assert np.asarray(t)[0, 0] == 42.0  # shared memory
    del x
    collect()
    assert np.asarray(t).flatten().tolist()[1:] == list(map(float, range(1, 12)))


def test_to_torch_keeps_tensor_alive():
    torch = _torch()
    np = pytest.importorskip("numpy")
    a = aligned_array((5,), "f4", fill=np.arange(5))
    t = hurray.from_numpy(a)
    ref = weakref.ref(t)
    y = t.to_torch()
    assert y.data_ptr() == a.ctypes.data
    del t
    collect()
    assert ref() is not None
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del y
    collect()
    assert ref() is None


def test_torch_from_dlpack_of_a_hurray_tensor():
    torch = _torch()
    t = hurray.ones([2, 3], dtype=hurray.float32)
    y = torch.from_dlpack(t)
    assert y.shape == (2, 3) and y.sum().item() == 6.0
    z = torch.from_dlpack(t.T)
    assert z.shape == (3, 2) and z.stride() == (1, 3)


def test_strided_torch_tensor_stays_zero_copy():
    torch = _torch()
    np = pytest.importorskip("numpy")
    x = torch.arange(20, dtype=torch.int64).reshape(4, 5)[:, ::2]
    t = hurray.from_torch(x, copy=False)
    assert t.layout.name == "strided"
    got = np.asarray(t)
    assert data_ptr(got) == x.data_ptr()
    np.testing.assert_array_equal(got, x.numpy())
    y = t.to_torch()
    assert y.data_ptr() == x.data_ptr() and y.stride() == x.stride()
    assert torch.equal(y, x)
    c = hurray.from_torch(x, copy=True)
    assert c.layout.name == "row_major"


def test_from_torch_type_check():
    _torch()
    with pytest.raises(TypeError):
        hurray.from_torch([1, 2])


def test_to_torch_refuses_types_outside_dlpack():
    _torch()
    t = hurray.Tensor(bytes(2), hurray.dtype.int4, [4])
    with pytest.raises(BufferError):
        t.to_torch()
