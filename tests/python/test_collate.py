"""hurray.collate: dense tensors of one shape and dtype stack into a batch tensor;
quantized, sparse, composite and mismatched ones stay lists; containers are
collated field by field (docs/guide/processes.md, the DataLoader recipe)."""

import collections

import numpy as np
import pytest

import hurray
import samples


def f32(i, shape=(2, 3)):
    return hurray.from_numpy(np.full(shape, i, dtype=np.float32))


def test_dense_tensors_stack_into_one_row_major_batch():
    batch = [f32(i) for i in range(4)]
    out = hurray.collate(batch)
    assert isinstance(out, hurray.Tensor) and out.shape == (4, 2, 3)
    assert out.dtype is hurray.float32 and out.layout.name == "row_major"
    np.testing.assert_array_equal(np.asarray(out), np.stack([np.asarray(t) for t in batch]))
    assert all(out.data_ptr() != t.data_ptr() for t in batch)


def test_column_major_and_strided_samples_stack_by_value():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    col = hurray.from_numpy(np.asfortranarray(a))
    strided = samples.sample_tensors()["i16_strided"]
    out = hurray.collate([col, hurray.from_numpy(a)])
    np.testing.assert_array_equal(np.asarray(out), np.stack([a, a]))
    out = hurray.collate([strided, strided])
    np.testing.assert_array_equal(np.asarray(out)[1], np.asarray(strided))


@pytest.mark.parametrize("dtype,shape", [("int4", (3, 4)), ("bool", (16,)), ("uint2", (8,))])
def test_packed_sub_byte_samples_stack_on_byte_boundaries(dtype, shape):
    n = hurray.buffer_size_bytes(dtype, int(np.prod(shape)))
    batch = [hurray.Tensor(samples.buf(n, seed), dtype, shape) for seed in range(3)]
    out = hurray.collate(batch)
    assert isinstance(out, hurray.Tensor) and out.shape == (3,) + shape
    assert samples.buffer_bytes(out) == [b"".join(samples.buffer_bytes(t)[0] for t in batch)]


def test_what_one_descriptor_cannot_describe_stays_a_list():
    s = samples.sample_tensors()
    odd_int4 = hurray.Tensor(samples.buf(2), "int4", (3,))  # 12 bits: not a byte boundary
    cases = [[s["q_block"], s["q_block"]], [s["csr"], s["csr"]], [f32(0), f32(1, (3, 2))],
             [f32(0), hurray.from_numpy(np.zeros((2, 3), np.float64))], [odd_int4, odd_int4],
             list(samples.sample_composites().values())[:2]]
    for batch in cases:
        out = hurray.collate(batch)
        assert isinstance(out, list) and all(a is b for a, b in zip(out, batch))


def test_containers_are_collated_field_by_field():
    Pair = collections.namedtuple("Pair", "x label")
    out = hurray.collate([Pair(f32(i), i) for i in range(3)])
    assert isinstance(out, Pair) and out.x.shape == (3, 2, 3)
    out = hurray.collate([{"x": f32(i), "q": samples.sample_tensors()["q_nf4"]} for i in range(2)])
    assert out["x"].shape == (2, 2, 3) and isinstance(out["q"], list)
    out = hurray.collate([(f32(i), [f32(i)]) for i in range(2)])
    assert out[0].shape == (2, 2, 3) and out[1][0].shape == (2, 2, 3)
    with pytest.raises(ValueError, match="same number of fields"):
        hurray.collate([(f32(0),), (f32(0), 1)])
    assert hurray.collate([]) == []


def test_other_values_go_to_torch_default_collate():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    out = hurray.collate([(f32(i), i, np.float32(i)) for i in range(3)])
    assert isinstance(out[1], torch.Tensor) and out[1].tolist() == [0, 1, 2]
    assert isinstance(out[2], torch.Tensor)
