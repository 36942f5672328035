"""hurray.torch and hurray.numpy: safetensors' framework API over .hrry files.

Checked against safetensors itself: the same signatures, the same tensors
from the same inputs, and transformers models (tied and untied) through
save_model / load_model with identical logits."""
import inspect
import os

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

import hurray  # noqa: E402
import hurray.numpy as hnp  # noqa: E402
import hurray.torch as ht  # noqa: E402

st_torch = pytest.importorskip("safetensors.torch")
st_numpy = pytest.importorskip("safetensors.numpy")


def _positional(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


@pytest.mark.parametrize("name", ["save_file", "load_file", "save", "load", "save_model",
                                  "load_model"])
def test_torch_signatures_match_safetensors(name):
    ours, theirs = getattr(ht, name), getattr(st_torch, name)
    assert _positional(ours) == _positional(theirs)


@pytest.mark.parametrize("name", ["save_file", "load_file", "save", "load"])
def test_numpy_signatures_match_safetensors(name):
    ours, theirs = getattr(hnp, name), getattr(st_numpy, name)
    assert _positional(ours) == _positional(theirs)


def _state(seed=0):
    g = torch.Generator().manual_seed(seed)
    return {
        "f32": torch.randn(16, 8, generator=g), "f16": torch.randn(5, 3, generator=g).half(),
        "bf16": torch.randn(7, generator=g).bfloat16(), "f64": torch.randn(2, 2, 2, generator=g).double(),
        "i8": torch.randint(-128, 127, (9,), dtype=torch.int8, generator=g),
        "u8": torch.randint(0, 255, (4, 4), dtype=torch.uint8, generator=g),
        "i64": torch.arange(12).reshape(3, 4), "b": torch.tensor([True, False, True]),
        "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 4),
        "f8": torch.randn(6, generator=g).to(torch.float8_e4m3fn),
    }


def test_save_file_load_file_round_trip_and_agree_with_safetensors(tmp_path):
    sd = _state()
    ht.save_file(sd, tmp_path / "a.hrry", metadata={"format": "pt"})
    st_torch.save_file(sd, tmp_path / "a.safetensors", metadata={"format": "pt"})
    ours = ht.load_file(tmp_path / "a.hrry")
    theirs = st_torch.load_file(tmp_path / "a.safetensors")
    assert set(ours) == set(theirs) == set(sd)
    for k in sd:
        assert ours[k].dtype == theirs[k].dtype == sd[k].dtype, k
        assert ours[k].shape == theirs[k].shape, k
        assert torch.equal(ours[k].view(torch.uint8) if ours[k].dtype == torch.float8_e4m3fn else ours[k],
                           theirs[k].view(torch.uint8) if theirs[k].dtype == torch.float8_e4m3fn else theirs[k]), k
    assert hurray.load_kv(tmp_path / "a.hrry") == {"format": "pt"}


def test_save_and_load_bytes():
    sd = _state(1)
    data = ht.save(sd, metadata={"k": "v"})
    assert isinstance(data, bytes) and data[:4] == b"HRRY"
    got = ht.load(data)
    for k in sd:
        assert torch.equal(got[k].float() if got[k].is_floating_point() else got[k],
                           sd[k].float() if sd[k].is_floating_point() else sd[k]), k
    got["f32"].add_(1)  # owned, writable
    with pytest.raises(TypeError, match="bytes"):
        ht.load("not bytes")


def test_parameters_requiring_grad_subclasses_and_non_contiguous(tmp_path):
    p = torch.nn.Parameter(torch.randn(4, 6))
    base = torch.randn(6, 4)
    sd = {"param": p, "grad": torch.ones(3, requires_grad=True) * 2, "cm": base.t(),
          "strided": torch.randn(8, 8)[::2, 1::3]}
    ht.save_file(sd, tmp_path / "p.hrry")
    for mmap in (True, False):
        _check_kept(ht.load_file(tmp_path / "p.hrry", mmap=mmap, contiguous=False), sd, p)
        got = ht.load_file(tmp_path / "p.hrry", mmap=mmap)  # contiguous, as safetensors'
        for k, v in sd.items():
            assert got[k].is_contiguous() and torch.equal(got[k], v.detach()), k
        assert got["cm"].view(-1).shape == (24,)


def _check_kept(got, sd, p):
    assert torch.equal(got["param"], p.detach()) and not got["param"].requires_grad
    assert torch.equal(got["grad"], sd["grad"].detach())
    assert got["cm"].stride() == sd["cm"].stride() == (1, 4)
    assert torch.equal(got["cm"], sd["cm"])
    assert torch.equal(got["strided"], sd["strided"])
    assert got["strided"].stride() == sd["strided"].stride() == (16, 3)


def test_load_file_is_zero_copy_and_writable_without_touching_the_file(tmp_path):
    w = torch.arange(4096, dtype=torch.float32).reshape(64, 64)
    ht.save_file({"w": w, "tied": w}, tmp_path / "z.hrry")
    before = (tmp_path / "z.hrry").read_bytes()
    with hurray.open(tmp_path / "z.hrry") as f:
        mapped = f["w"]
        assert f.mmap_mode == "c"
    got = ht.load_file(tmp_path / "z.hrry")
    got["w"].add_(1)          # in place: a private copy of the pages written
    assert got["tied"][0, 0] == 1.0
    assert (tmp_path / "z.hrry").read_bytes() == before
    again = ht.load_file(tmp_path / "z.hrry")
    assert again["w"][0, 0] == 0.0
    # the torch tensor is the mapping itself (no copy at load)
    t = ht.load_file(tmp_path / "z.hrry")["w"]
    with hurray.open(tmp_path / "z.hrry") as f:
        assert f["w"].data_ptr() != 0 and mapped.data_ptr() != 0
    maps = open("/proc/self/maps").read() if os.path.exists("/proc/self/maps") else ""
    if maps:
        addr = t.data_ptr()
        inside = [ln for ln in maps.splitlines()
                  if int(ln.split()[0].split("-")[0], 16) <= addr < int(ln.split()[0].split("-")[1], 16)]
        assert inside and inside[0].endswith("z.hrry"), inside
    ro = ht.load_file(tmp_path / "z.hrry", mmap="r")["w"]
    ro.add_(1)  # a read-only map: torch gets a copy, never the mapping
    assert ht.load_file(tmp_path / "z.hrry")["w"][0, 0] == 0.0


def test_save_file_refuses_what_safetensors_refuses(tmp_path):
    with pytest.raises(ValueError, match="expected a dict"):
        ht.save_file([torch.ones(1)], tmp_path / "x.hrry")
    with pytest.raises(ValueError, match="key 'a' is invalid: expected torch.Tensor"):
        ht.save_file({"a": 1}, tmp_path / "x.hrry")
    with pytest.raises(hurray.UnsupportedError, match="sparse|layout"):
        ht.save_file({"s": torch.eye(3).to_sparse()}, tmp_path / "x.hrry")
    with pytest.raises(hurray.UnsupportedError, match="meta"):
        ht.save_file({"m": torch.empty(3, device="meta")}, tmp_path / "x.hrry")
    assert not (tmp_path / "x.hrry").exists()


def test_shared_storage_stored_once_and_shared_on_load(tmp_path):
    w = torch.randn(32, 16)
    sd = {"emb": w, "head": w, "half": w[:16], "wt": w.t()}
    ht.save_file(sd, tmp_path / "s.hrry")
    st_file = tmp_path / "s.safetensors"
    if not os.environ.get("HURRAY_EXPECT_ASAN"):
        # safetensors refuses shared tensors here (its check raises a torch error
        # through C++, which the ASan preload turns into an abort: not run there)
        with pytest.raises(RuntimeError):
            st_torch.save_file(sd, st_file)
    got = ht.load_file(tmp_path / "s.hrry")  # contiguous: "wt" is a copy
    assert got["wt"].is_contiguous() and torch.equal(got["wt"], w.t())
    assert got["wt"].untyped_storage().data_ptr() != got["emb"].untyped_storage().data_ptr()
    got = ht.load_file(tmp_path / "s.hrry", contiguous=False)
    ptr = got["emb"].untyped_storage().data_ptr()
    for k, v in sd.items():
        assert torch.equal(got[k], v), k
        assert got[k].untyped_storage().data_ptr() == ptr, k
    got["emb"][0, 0] = 123.0  # one storage: every view sees the write
    assert got["head"][0, 0] == 123.0 and got["half"][0, 0] == 123.0 and got["wt"][0, 0] == 123.0
    from test_shared_tensors import index_names
    assert index_names(tmp_path / "s.hrry") == ["emb"]  # the views are in the record only
    with pytest.raises(ValueError, match="'a' and 'b' overlap"):
        ht.save_file({"a": w[:20], "b": w[10:]}, tmp_path / "bad.hrry")


def test_numpy_api(tmp_path):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    d = {"a": a, "f": np.asfortranarray(a), "i": np.arange(5, dtype=np.int16),
         "b": np.array([True, False]), "tied": a, "col": a[:, 2]}
    hnp.save_file(d, tmp_path / "n.hrry", metadata={"m": "1"})
    st_numpy.save_file({k: np.ascontiguousarray(v) for k, v in d.items()},
                       tmp_path / "n.safetensors")
    ours = hnp.load_file(tmp_path / "n.hrry", contiguous=False)
    assert all(x.flags.c_contiguous for x in hnp.load_file(tmp_path / "n.hrry").values())
    theirs = st_numpy.load_file(tmp_path / "n.safetensors")
    for k in d:
        assert ours[k].dtype == theirs[k].dtype == d[k].dtype
        np.testing.assert_array_equal(ours[k], theirs[k])
    assert ours["f"].flags.f_contiguous
    assert np.shares_memory(ours["tied"], ours["a"]) and np.shares_memory(ours["col"], ours["a"])
    got = hnp.load(hnp.save(d))
    for k in d:
        np.testing.assert_array_equal(got[k], d[k])
    with pytest.raises(ValueError, match="expected np.ndarray"):
        hnp.save_file({"a": [1, 2]}, tmp_path / "x.hrry")


def test_device_argument(tmp_path):
    ht.save_file({"a": torch.ones(2)}, tmp_path / "d.hrry")
    assert ht.load_file(tmp_path / "d.hrry", device="cpu")["a"].device.type == "cpu"
    assert ht.load_file(tmp_path / "d.hrry", device=torch.device("cpu"))["a"].device.type == "cpu"
    if not torch.cuda.is_available() and not os.environ.get("HURRAY_EXPECT_ASAN"):
        # (torch raises through C++, which the ASan preload turns into an abort)
        with pytest.raises((RuntimeError, AssertionError)):
            ht.load_file(tmp_path / "d.hrry", device="cuda:0")


def test_composites_and_quantized_are_refused_by_name(tmp_path):
    m = hurray.from_numpy(np.ones((2, 2), np.float32))
    hurray.save(tmp_path / "c.hrry", {"g": hurray.Composite("group", (2, 2), "float32", [m, m]),
                                      "q": hurray.zeros([4, 4], dtype="int4")})
    with pytest.raises(hurray.UnsupportedError, match="'g' is a composite"):
        ht.load_file(tmp_path / "c.hrry")
    with pytest.raises(hurray.UnsupportedError, match="'g' is a composite"):
        hnp.load_file(tmp_path / "c.hrry")


# ---- transformers --------------------------------------------------------------------

def _llama(tied):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, tie_word_embeddings=tied)
    torch.manual_seed(1)
    return transformers.LlamaForCausalLM(cfg).eval(), cfg


@pytest.mark.slow  # imports transformers and builds a model: seconds
@pytest.mark.parametrize("tied", [True, False])
def test_transformers_model_round_trip(tmp_path, tied):
    transformers = pytest.importorskip("transformers")
    model, cfg = _llama(tied)
    ht.save_model(model, tmp_path / "m.hrry")
    torch.manual_seed(2)
    other = transformers.LlamaForCausalLM(cfg).eval()
    assert ht.load_model(other, tmp_path / "m.hrry") == (set(), [])
    ids = torch.randint(0, 256, (2, 12))
    with torch.no_grad():
        assert torch.equal(model(ids).logits, other(ids).logits)
    if tied:
        assert other.lm_head.weight.data_ptr() == other.model.embed_tokens.weight.data_ptr()
        sd = ht.load_file(tmp_path / "m.hrry")
        assert sd["lm_head.weight"].untyped_storage().data_ptr() == \
            sd["model.embed_tokens.weight"].untyped_storage().data_ptr()
        # the tied file is smaller than the untied one by one copy of the weight
        untied, _ = _llama(False)
        untied.load_state_dict(model.state_dict())
        ht.save_model(untied, tmp_path / "u.hrry")
        head = model.lm_head.weight.numel() * model.lm_head.weight.element_size()
        assert os.path.getsize(tmp_path / "m.hrry") <= os.path.getsize(tmp_path / "u.hrry") - head
        # and a reader that does not know the record sees the embedding once
        from test_shared_tensors import index_names
        assert "lm_head.weight" not in index_names(tmp_path / "m.hrry")


@pytest.mark.slow  # imports transformers and builds a model: seconds
def test_load_model_strict_reports_missing_and_unexpected(tmp_path):
    model, cfg = _llama(False)
    sd = model.state_dict()
    sd.pop("lm_head.weight")
    sd["extra.weight"] = torch.ones(1)
    ht.save_file(sd, tmp_path / "x.hrry")
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "lm_head.weight"'
                                           r'[\s\S]*Unexpected key\(s\) in state_dict: "extra.weight"'):
        ht.load_model(model, tmp_path / "x.hrry")
    missing, unexpected = ht.load_model(model, tmp_path / "x.hrry", strict=False)
    assert missing == {"lm_head.weight"} and unexpected == ["extra.weight"]


@pytest.mark.slow  # imports transformers and builds a model: seconds
def test_transformers_checkpoint_from_safetensors_converts(tmp_path):
    """A checkpoint transformers wrote (safetensors) loads with safetensors'
    reader, goes through hurray.torch, and gives the same logits."""
    transformers = pytest.importorskip("transformers")
    model, cfg = _llama(True)
    model.save_pretrained(tmp_path / "hf")
    sd = st_torch.load_file(tmp_path / "hf" / "model.safetensors")
    ht.save_file(sd, tmp_path / "c.hrry")
    back = ht.load_file(tmp_path / "c.hrry")
    assert back.keys() == sd.keys()
    other = transformers.LlamaForCausalLM(cfg).eval()
    missing, unexpected = other.load_state_dict(back, strict=False)
    assert not unexpected
    ids = torch.randint(0, 256, (1, 8))
    with torch.no_grad():
        assert torch.equal(model(ids).logits, other(ids).logits)


# ---- safe_open -------------------------------------------------------------------------

def test_safe_open_like_safetensors(tmp_path):
    sd = {"b.w": torch.randn(4, 4), "a.w": torch.arange(6).reshape(2, 3)}
    ht.save_file(sd, tmp_path / "o.hrry", metadata={"format": "pt"})
    st_torch.save_file(sd, tmp_path / "o.safetensors", metadata={"format": "pt"})
    with hurray.safe_open(tmp_path / "o.hrry", framework="pt") as f, \
            __import__("safetensors").safe_open(tmp_path / "o.safetensors", framework="pt") as g:
        assert f.keys() == g.keys() == ["a.w", "b.w"]
        assert f.metadata() == g.metadata() == {"format": "pt"}
        for k in f.keys():
            assert torch.equal(f.get_tensor(k), g.get_tensor(k))
    with hurray.safe_open(tmp_path / "o.hrry", framework="np") as f:
        assert isinstance(f.get_tensor("a.w"), np.ndarray)
        assert f.offset_keys() == ["b.w", "a.w"]
    with hurray.safe_open(tmp_path / "o.hrry", framework="hurray") as f:
        assert isinstance(f.get_tensor("a.w"), hurray.Tensor)
    with pytest.raises(ValueError, match="framework must be one of"):
        hurray.safe_open(tmp_path / "o.hrry", framework="tf")
    ht.save_file(sd, tmp_path / "nometa.hrry")
    with hurray.safe_open(tmp_path / "nometa.hrry", framework="pt") as f:
        assert f.metadata() is None


def test_safe_open_get_slice_matches_safetensors(tmp_path):
    w = torch.arange(64 * 48, dtype=torch.float32).reshape(64, 48)
    ht.save_file({"w": w, "wt": w.t()}, tmp_path / "g.hrry")
    st_torch.save_file({"w": w}, tmp_path / "g.safetensors")
    with hurray.safe_open(tmp_path / "g.hrry", framework="pt") as f, \
            __import__("safetensors").safe_open(tmp_path / "g.safetensors", framework="pt") as g:
        ours, theirs = f.get_slice("w"), g.get_slice("w")
        assert ours.get_shape() == theirs.get_shape() == [64, 48]
        for idx in [(slice(0, 8), slice(None)), (slice(None), slice(6, 12)),
                    (slice(1, 60, 7), slice(None, None, 5)), 3]:
            assert torch.equal(ours[idx], theirs[idx]), idx
        shards = [f.get_slice("w")[:, k * 6:(k + 1) * 6] for k in range(8)]
        assert torch.equal(torch.cat(shards, dim=1), w)
        # the view of a shared tensor slices through its base
        v = f.get_slice("wt")
        assert v.get_shape() == [48, 64]
        assert torch.equal(v[2:5, 10:20], w.t()[2:5, 10:20])
