"""bool packing (8 elements per byte, LSB first) on every path that packs or
unpacks: from_numpy / numpy.asarray, DLPack export with copy=True, torch.

The packer works eight elements at a time with a tail; these lengths cover
whole words, every tail length, and any nonzero byte counting as True.
"""

import pytest

import hurray

np = pytest.importorskip("numpy")

LENGTHS = list(range(0, 27)) + [63, 64, 65, 1000, 4099]


@pytest.mark.parametrize("n", LENGTHS)
def test_pack_and_unpack_match_numpy(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 2, n).astype(bool)
    t = hurray.from_numpy(a)
    packed = np.asarray(t.buffer(0)).tobytes()
    assert packed == np.packbits(a, bitorder="little").tobytes()
    back = np.asarray(t)
    assert back.dtype == np.bool_ and back.tolist() == a.tolist()


def test_every_pattern_of_a_byte():
    a = np.unpackbits(np.arange(256, dtype=np.uint8), bitorder="little").astype(bool)
    t = hurray.from_numpy(a)
    assert np.asarray(t.buffer(0)).tolist() == list(range(256))
    assert np.asarray(t).tolist() == a.tolist()


def test_any_nonzero_byte_is_true():
    raw = np.array([0, 2, 0, 255, 1, 0, 0, 128, 3, 0, 64], np.uint8)
    t = hurray.from_numpy(raw.view(bool))
    assert np.asarray(t).tolist() == [bool(x) for x in raw]
    assert np.asarray(t.buffer(0)).tolist() == [0b10011010, 0b101]


def test_dlpack_copy_unpacks():
    a = np.array([True, False, True] * 7)
    out = np.from_dlpack(_Copying(hurray.from_numpy(a)))
    assert out.dtype == np.bool_ and out.tolist() == a.tolist()


class _Copying:
    """A DLPack producer forwarding to a hurray tensor with copy=True."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        kw["copy"] = True
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_torch_bool_round_trip():
    torch = pytest.importorskip("torch")
    x = torch.tensor([True, False, False, True, True, False, True, True, False, True])
    t = hurray.from_torch(x)
    assert np.asarray(t.buffer(0)).tolist() == [0b11011001, 0b10]
    assert t.to_torch().tolist() == x.tolist()
