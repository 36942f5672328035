"""JAX through DLPack, both directions (JAX speaks the legacy capsule)."""

import os

import pytest

import hurray
from conftest import aligned_array, data_ptr


def _jax():
    if os.environ.get("HURRAY_EXPECT_ASAN"):
        # jaxlib itself aborts when libasan is preloaded (without hurray loaded)
        pytest.skip("jaxlib cannot run under the ASan preload of python_tests.sh --asan")
    return pytest.importorskip("jax")


def test_jax_to_hurray_zero_copy():
    jax = _jax()
    np = pytest.importorskip("numpy")
    x = jax.numpy.arange(12, dtype=jax.numpy.float32).reshape(3, 4)
    t = hurray.from_dlpack(x)
    assert t.shape == (3, 4) and t.dtype is hurray.float32
    assert data_ptr(np.asarray(t)) == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(t), np.arange(12, dtype=np.float32).reshape(3, 4))
    del x
    assert float(np.asarray(t).sum()) == 66.0


def test_hurray_to_jax_zero_copy():
    jax = _jax()
    np = pytest.importorskip("numpy")
    a = aligned_array((2, 5), "i4", fill=np.arange(10).reshape(2, 5))
    t = hurray.from_numpy(a)
    y = jax.dlpack.from_dlpack(t)
    assert y.shape == (2, 5)
    assert y.unsafe_buffer_pointer() == a.ctypes.data
    assert y.tolist() == a.tolist()


@pytest.mark.filterwarnings("ignore::UserWarning")  # float64 is float32 without x64
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "int8",
                                  "uint8", "int16", "uint16", "int32", "uint32",
                                  "complex64"])
def test_jax_round_trip(name):
    jax = _jax()
    jnp = jax.numpy
    x = (jnp.arange(8) % 5).astype(getattr(jnp, name))
    t = hurray.from_dlpack(x)
    assert t.dtype.name == str(x.dtype)  # float64 is float32 unless jax_enable_x64
    y = jax.dlpack.from_dlpack(t)
    assert y.dtype == x.dtype
    assert bool((y == x).all())
