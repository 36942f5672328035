"""`hurray convert`: every mapping checked against the other formats' own
libraries, on files those libraries made (docs/reference/cli.md, docs/internals/decisions.md "GGUF
mapping"): safetensors (its serializer and deserializer), gguf (GGUFWriter,
GGUFReader, gguf.quants), torch.save / torch.load, np.save / np.savez; a
transformers model through hrry and back; the peak memory of a conversion."""

import json
import os
import pathlib
import struct
import subprocess
import sys
import textwrap

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402
from hurray._cli import main  # noqa: E402


def run(*args):
    return main([str(a) for a in args])


def refused(capsys, *args):
    rc = run(*args)
    err = capsys.readouterr().err
    assert rc == 1, err
    return err


# ---- safetensors --------------------------------------------------------------

ST = pytest.importorskip("safetensors")
from safetensors import deserialize  # noqa: E402

# every safetensors dtype hurray has, with the bits of one element
ST_TYPES = {"BOOL": 8, "U8": 8, "I8": 8, "I16": 16, "U16": 16, "I32": 32, "U32": 32,
            "I64": 64, "U64": 64, "F16": 16, "BF16": 16, "F32": 32, "F64": 64, "C64": 64,
            "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "F6_E2M3": 6, "F6_E3M2": 6, "F4": 4}
HURRAY_NAME = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
               "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64",
               "F16": "float16", "BF16": "bfloat16", "F32": "float32", "F64": "float64",
               "C64": "complex64", "F8_E4M3": "float8_e4m3", "F8_E5M2": "float8_e5m2",
               "F8_E8M0": "float8_e8m0", "F6_E2M3": "float6_e2m3", "F6_E3M2": "float6_e3m2",
               "F4": "float4_e2m1"}


def write_st(path, tensors, metadata=None):
    """A safetensors file from (name, dtype code, shape, raw bytes), checked by
    safetensors' own deserializer (which knows every dtype, F6 and F4 included:
    its Python serializer takes only the types NumPy and torch have)."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, code, shape, raw in tensors:
        header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    data = struct.pack("<Q", len(text)) + text + b"".join(blobs)
    deserialize(data)  # the library accepts it
    pathlib.Path(path).write_bytes(data)


def st_tensors(path):
    return {n: (d["dtype"], d["shape"], bytes(d["data"]))
            for n, d in deserialize(pathlib.Path(path).read_bytes())}


def st_metadata(path):
    from safetensors import safe_open
    with safe_open(str(path), "np") as f:
        return f.metadata()


def _raw_for(code, shape, rng):
    n = int(np.prod(shape)) if shape else 1
    nbytes = n * ST_TYPES[code] // 8
    if code == "BOOL":
        return rng.integers(0, 2, n, dtype=np.uint8).tobytes()
    if code == "F8_E8M0":  # 0x00 and 0xFF are reserved in Hurray's float8_e8m0
        return rng.integers(1, 255, n, dtype=np.uint8).tobytes()
    if code in ("F4", "F6_E2M3", "F6_E3M2"):
        return rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    if code in ("F16", "BF16", "F32", "F64", "C64"):  # finite values, NaN payloads aside
        f = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "C64": np.complex64,
             "BF16": np.float32}[code]
        vals = rng.standard_normal(n * (2 if code == "C64" else 1)).astype(np.float64)
        if code == "BF16":
            return (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
        if code == "C64":
            return vals.astype(np.float32).tobytes()
        return vals.astype(f).tobytes()
    return rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()


def test_safetensors_every_dtype_both_ways(tmp_path):
    rng = np.random.default_rng(1)
    shapes = {"F4": (3, 4), "F6_E2M3": (2, 8), "F6_E3M2": (4,)}
    items = [(f"t_{c.lower()}", c, shapes.get(c, (3, 5)), None) for c in ST_TYPES]
    items = [(n, c, s, _raw_for(c, s, rng)) for n, c, s, _ in items]
    items.append(("scalar", "F32", (), np.float32(2.5).tobytes()))
    items.append(("empty", "I32", (0, 3), b""))
    src = tmp_path / "all.safetensors"
    write_st(src, items, metadata={"format": "pt", "note": "every dtype"})
    assert run("convert", "-q", src, tmp_path / "all.hrry") == 0
    back = hurray.load(tmp_path / "all.hrry")
    assert hurray.load_kv(tmp_path / "all.hrry") == {"format": "pt", "note": "every dtype"}
    for name, code, shape, raw in items:
        t = back[name]
        assert t.dtype.name == HURRAY_NAME[code], name
        assert t.shape == tuple(shape)
        stored = np.asarray(t.buffer(0)).tobytes()[:len(raw) if code != "BOOL" else None]
        if code == "BOOL":  # one byte per element there, one bit here (LSB-first)
            bits = np.unpackbits(np.frombuffer(stored, np.uint8), bitorder="little")
            assert bits[:len(raw)].tobytes() == raw
        else:
            assert stored == raw, name  # the same bytes, sub-byte types included
    assert run("convert", "-q", tmp_path / "all.hrry", tmp_path / "back.safetensors") == 0
    assert st_tensors(tmp_path / "back.safetensors") == st_tensors(src)
    assert st_metadata(tmp_path / "back.safetensors") == {"format": "pt", "note": "every dtype"}
    assert run("diff", "-q", src, tmp_path / "all.hrry") == 0


def test_safetensors_values_match_the_library_readers(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file
    src = tmp_path / "t.safetensors"
    g = torch.Generator().manual_seed(0)
    ts = {"f32": torch.randn(4, 6, generator=g), "bf16": torch.randn(8, generator=g).bfloat16(),
          "f16": torch.randn(3, 3, generator=g).half(), "i64": torch.arange(-5, 5),
          "u8": torch.arange(250, 256, dtype=torch.uint8), "b": torch.tensor([True, False, True]),
          "f8": torch.randn(16, generator=g).to(torch.float8_e4m3fn),
          "f8e5": torch.randn(16, generator=g).to(torch.float8_e5m2),
          "e8m0": torch.full((4,), 0.25).to(torch.float8_e8m0fnu),
          "f4": torch.tensor([[0x21, 0x43, 0x65]], dtype=torch.uint8).view(torch.float4_e2m1fn_x2),
          "c64": torch.randn(2, 2, dtype=torch.complex64, generator=g)}
    save_file(ts, str(src), metadata={"format": "pt"})
    assert run("convert", "-q", src, tmp_path / "t.hrry") == 0
    assert run("convert", "-q", tmp_path / "t.hrry", tmp_path / "u.safetensors") == 0
    a, b = load_file(str(src)), load_file(str(tmp_path / "u.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert torch.equal(a[k].view(torch.uint8), b[k].view(torch.uint8)), k
    f = hurray.load(tmp_path / "t.hrry")
    assert np.array_equal(np.asarray(f["f32"]), ts["f32"].numpy())
    assert np.array_equal(np.asarray(f["b"]), ts["b"].numpy())
    assert f["f4"].shape == (1, 6)  # torch's float4_e2m1fn_x2 counts pairs


def test_safetensors_types_hurray_lacks_are_refused(tmp_path, capsys):
    src = tmp_path / "fnuz.safetensors"
    write_st(src, [("ok", "F32", (2,), np.zeros(2, np.float32).tobytes()),
                   ("w", "F8_E4M3FNUZ", (4,), bytes([0x38, 0x40, 0xb8, 0x00]))])
    err = refused(capsys, "convert", src, tmp_path / "o.hrry")
    assert "'w'" in err and "F8_E4M3FNUZ" in err and "--dequantize" in err
    assert not (tmp_path / "o.hrry").exists()
    assert run("convert", "-q", "--dequantize", "float32", src, tmp_path / "o.hrry") == 0
    ml = pytest.importorskip("ml_dtypes")
    want = np.frombuffer(bytes([0x38, 0x40, 0xb8, 0x00]), ml.float8_e4m3fnuz).astype(np.float32)
    assert np.array_equal(np.asarray(hurray.load(tmp_path / "o.hrry")["w"]), want)
    # float8_e8m0's bytes 0x00 and 0xFF are reserved in Hurray
    write_st(tmp_path / "e8.safetensors", [("s", "F8_E8M0", (3,), bytes([127, 0xFF, 1]))])
    err = refused(capsys, "convert", tmp_path / "e8.safetensors", tmp_path / "e8.hrry")
    assert "'s'" in err and "element 1" in err and "0xff" in err
    assert not (tmp_path / "e8.hrry").exists()


@pytest.mark.parametrize("dtype", ["int4", "uint4", "int2", "uint2", "float128", "complex128"])
def test_hurray_types_safetensors_lacks_are_refused(tmp_path, capsys, dtype):
    t = hurray.zeros([4, 8], dtype=dtype)
    hurray.save(tmp_path / "x.hrry", {"ok": np.ones(3, np.float32), "bad": t})
    err = refused(capsys, "convert", tmp_path / "x.hrry", tmp_path / "x.safetensors")
    assert "'bad'" in err and dtype in err
    assert not (tmp_path / "x.safetensors").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["x.hrry"]  # no temporary file left


def test_safetensors_non_string_metadata_needs_drop_kv(tmp_path, capsys):
    hurray.save(tmp_path / "k.hrry", {"w": np.ones(2, np.float32)}, kv={"n": 3, "s": "x"})
    err = refused(capsys, "convert", tmp_path / "k.hrry", tmp_path / "k.safetensors")
    assert "kv['n']" in err and "--drop-kv" in err
    assert run("convert", "-q", "--drop-kv", tmp_path / "k.hrry", tmp_path / "k.safetensors") == 0
    assert st_metadata(tmp_path / "k.safetensors") == {"s": "x"}


@pytest.mark.slow  # builds and saves a transformers model, seconds
def test_sharded_transformers_model_round_trip(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from safetensors import safe_open
    cfg = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=97, n_positions=16,
                                  tie_word_embeddings=True)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    src = tmp_path / "model"
    model.save_pretrained(src, max_shard_size="20KB")
    shards = sorted(p.name for p in src.glob("*.safetensors"))
    assert len(shards) > 2 and (src / "model.safetensors.index.json").exists()
    assert run("convert", "-q", src, tmp_path / "model.hrry") == 0
    out = tmp_path / "out"
    out.mkdir()
    assert run("convert", "-q", tmp_path / "model.hrry", out / "model.safetensors") == 0
    (out / "config.json").write_text((src / "config.json").read_text())
    # bit-identical tensors, shard by shard
    with safe_open(str(out / "model.safetensors"), "pt") as g:
        names = set(g.keys())
        for shard in shards:
            with safe_open(str(src / shard), "pt") as f:
                for k in f.keys():
                    a, b = f.get_tensor(k), g.get_tensor(k)
                    assert a.dtype == b.dtype and torch.equal(a, b), k
                    names.discard(k)
        assert not names
    again = transformers.GPT2LMHeadModel.from_pretrained(out).eval()
    ids = torch.tensor([[1, 5, 7, 11, 3]])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, again(ids).logits)
    assert again.lm_head.weight.data_ptr() == again.transformer.wte.weight.data_ptr()
    assert run("diff", "-q", src, tmp_path / "model.hrry") == 0


# ---- GGUF ------------------------------------------------------------------------

gguf = pytest.importorskip("gguf")
Q = gguf.GGMLQuantizationType


def make_gguf(path, quants=("Q8_0", "Q4_0", "MXFP4"), seed=0, blocks=None):
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("llama.context_length", 4096)
    w.add_int32("t.i32", -2**31)
    w.add_float32("llama.rope.freq_base", 10000.123)
    w.add_uint64("t.u64", 2**64 - 1)
    w.add_int64("t.i64", -2**63)
    w.add_float64("t.f64", 1 / 3)
    w.add_bool("t.bool", True)
    w.add_string("general.name", "tiny ünïcode")
    w.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "héllo", " world"])
    w.add_array("tokenizer.ggml.scores", [0.0, -1.5, 2.25, 1e-8])
    w.add_key_value("tokenizer.ggml.token_type", [1, 3, 1, 1], gguf.GGUFValueType.ARRAY,
                    gguf.GGUFValueType.INT32)
    w.add_custom_alignment(64)
    for name, dt in (("f32", np.float32), ("f16", np.float16), ("f64", np.float64)):
        w.add_tensor(name, rng.standard_normal((3, 40)).astype(dt))
    for name, dt in (("i8", np.int8), ("i16", np.int16), ("i32", np.int32), ("i64", np.int64)):
        w.add_tensor(name, rng.integers(-100, 100, (2, 3, 5)).astype(dt))
    w.add_tensor("bf16", gguf.quants.quantize(rng.standard_normal((4, 8)).astype(np.float32),
                                              Q.BF16), raw_dtype=Q.BF16)
    for qt in quants:
        x = rng.standard_normal((3, 4, 128)).astype(np.float32) * 4
        if blocks is not None:
            blocks(qt, x)
        w.add_tensor(qt.lower(), gguf.quants.quantize(x, Q[qt]), raw_dtype=Q[qt])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def dequantize_hurray(t):
    """A quantized hurray tensor's values, by the formulas of docs/reference/quantization.md
    (per-block affine: s * (q - z); MXFP: 2^(e - 127) * value(q)), in NumPy."""
    q = t.quantization
    n = t.size
    raw = np.asarray(t.buffer(0)).reshape(-1)
    if t.dtype.name == "int8":
        codes = raw[:n].view(np.int8).astype(np.float32)
    else:
        nib = np.stack([raw & 15, raw >> 4], axis=1).reshape(-1)[:n]
        codes = (nib.astype(np.int8) - 16 * (nib >= 8)).astype(np.float32) \
            if t.dtype.name == "int4" else E2M1[nib]
    blocks = n // q.block_size
    assert q.axis == t.ndim - 1  # blocks run along the contiguous axis: b = i // 32
    if isinstance(q, hurray.PerBlockAffine):
        assert q.zero_point_buffer_index is None  # symmetric: z = 0
        s = np.asarray(t.buffer(q.scale_buffer_index)).reshape(-1)[:2 * blocks].view(np.float16)
        s = s.astype(np.float32)
    else:
        e = np.asarray(t.buffer(q.scale_buffer_index)).reshape(-1)[:blocks].astype(np.int32)
        s = np.ldexp(np.float32(1), e - 127).astype(np.float32)
    return (codes.reshape(blocks, q.block_size) * s[:, None]).reshape(t.shape)


def test_gguf_every_mapping_value_by_value(tmp_path):
    src = tmp_path / "m.gguf"
    make_gguf(src)
    assert run("convert", "-q", src, tmp_path / "m.hrry") == 0
    reader = gguf.GGUFReader(str(src))
    back = hurray.load(tmp_path / "m.hrry")
    expect = {"F32": "float32", "F16": "float16", "F64": "float64", "I8": "int8",
              "I16": "int16", "I32": "int32", "I64": "int64", "BF16": "bfloat16",
              "Q8_0": "int8", "Q4_0": "int4", "MXFP4": "float4_e2m1"}
    assert len(reader.tensors) == len(back) == 11
    for rt in reader.tensors:
        t = back[rt.name]
        qt = rt.tensor_type.name
        assert t.dtype.name == expect[qt], rt.name
        assert t.shape == tuple(reversed([int(d) for d in rt.shape]))
        if qt in ("Q8_0", "Q4_0", "MXFP4", "BF16"):
            ref = gguf.quants.dequantize(rt.data, rt.tensor_type)
        if qt in ("Q8_0", "Q4_0", "MXFP4"):
            got = dequantize_hurray(t)
            assert got.dtype == np.float32 and np.array_equal(got, ref), rt.name
            assert t.quantization.block_size == 32
        elif qt == "BF16":
            got = np.asarray(t).astype(np.float32)
            assert np.array_equal(got, ref)
        else:
            assert np.array_equal(np.asarray(t), rt.data), rt.name
    # converted back: the very bytes GGUFWriter wrote
    assert run("convert", "-q", tmp_path / "m.hrry", tmp_path / "back.gguf") == 0
    assert (tmp_path / "back.gguf").read_bytes() == src.read_bytes()
    assert run("diff", "-q", src, tmp_path / "m.hrry") == 0


def test_gguf_metadata_is_kv_with_its_types(tmp_path):
    src = tmp_path / "m.gguf"
    make_gguf(src, quants=())
    assert run("convert", "-q", src, tmp_path / "m.hrry") == 0
    kv = hurray.load_kv(tmp_path / "m.hrry")
    assert kv["t.u8"] == 200 and kv["t.i8"] == -100 and kv["t.i32"] == -2**31
    assert kv["t.u64"] == str(2**64 - 1)  # KV int64 cannot hold it: a decimal string
    assert kv["t.i64"] == -2**63 and kv["t.f64"] == 1 / 3 and kv["t.bool"] is True
    assert kv["llama.rope.freq_base"] == float(np.float32(10000.123))  # widened exactly
    assert kv["general.name"] == "tiny ünïcode" and kv["general.alignment"] == 64
    assert kv["tokenizer.ggml.tokens"] == ["<s>", "</s>", "héllo", " world"]
    assert kv["tokenizer.ggml.token_type"] == [1, 3, 1, 1]
    raw = hurray.load_kv(tmp_path / "m.hrry", raw=True)
    types = json.loads(raw["hurray.gguf"])["types"]
    assert types["t.u8"] == "UINT8" and types["tokenizer.ggml.scores"] == "ARRAY[FLOAT32]"
    assert list(kv) == [k for k in gguf.GGUFReader(str(src)).fields if not k.startswith("GGUF.")]
    assert run("convert", "-q", tmp_path / "m.hrry", tmp_path / "b.gguf") == 0
    r = gguf.GGUFReader(str(tmp_path / "b.gguf"))
    o = gguf.GGUFReader(str(src))
    for k, f in o.fields.items():
        assert r.fields[k].types == f.types and r.fields[k].contents() == f.contents(), k


def test_gguf_types_without_exact_mapping_need_dequantize(tmp_path, capsys):
    src = tmp_path / "q.gguf"
    make_gguf(src, quants=("Q8_0", "Q4_1", "Q5_0"))
    err = refused(capsys, "convert", src, tmp_path / "q.hrry")
    assert "'q4_1'" in err and "Q4_1" in err and "--dequantize" in err
    assert not (tmp_path / "q.hrry").exists()
    assert run("convert", "-q", "--dequantize", "float32", src, tmp_path / "q.hrry") == 0
    back = hurray.load(tmp_path / "q.hrry")
    for rt in gguf.GGUFReader(str(src)).tensors:
        if rt.name in ("q4_1", "q5_0"):
            assert back[rt.name].dtype.name == "float32"
            assert np.array_equal(np.asarray(back[rt.name]),
                                  gguf.quants.dequantize(rt.data, rt.tensor_type))
    assert back["q8_0"].quantization is not None  # only what needs it is dequantized
    assert run("convert", "-q", "--dequantize", "bfloat16", src, tmp_path / "h.hrry") == 0
    assert hurray.load(tmp_path / "h.hrry")["q5_0"].dtype.name == "bfloat16"


def test_gguf_zero_scales_and_reserved_exponents_are_refused(tmp_path, capsys):
    def zero_block(qt, x):
        x[1, 2, 32:64] = 0  # gguf quantizes an all-zero block with d = 0 (MXFP4: e = 0)
    src = tmp_path / "z.gguf"
    for qt in ("Q8_0", "Q4_0", "MXFP4"):
        make_gguf(src, quants=(qt,), blocks=zero_block)
        err = refused(capsys, "convert", src, tmp_path / "z.hrry")
        assert f"'{qt.lower()}'" in err and "block 25" in err, err
        assert ("0x00" in err) if qt == "MXFP4" else ("non-zero" in err)
        assert not (tmp_path / "z.hrry").exists()


def test_hurray_quantizations_without_gguf_type_are_refused(tmp_path, capsys):
    codes = np.zeros((4, 64), np.int8)
    scales = np.ones(4 * 2, np.float16)  # blocks of 32 along axis 1
    ok = hurray.Tensor([codes, scales], "int8", (4, 64),
                       quantization=hurray.PerBlockAffine.symmetric(1, 32, 1, "float16"))
    axis0 = hurray.Tensor([codes, np.ones(2 * 64, np.float16)], "int8", (4, 64),
                          quantization=hurray.PerBlockAffine.symmetric(0, 2, 1, "float16"))
    hurray.save(tmp_path / "a.hrry", {"ok": ok, "axis0": axis0})
    err = refused(capsys, "convert", tmp_path / "a.hrry", tmp_path / "a.gguf")
    assert "'axis0'" in err and "Q8_0" in err
    hurray.save(tmp_path / "b.hrry", {"ok": ok, "u8": np.zeros(4, np.uint8)})
    err = refused(capsys, "convert", tmp_path / "b.hrry", tmp_path / "b.gguf")
    assert "'u8'" in err and "uint8" in err
    assert run("convert", "-q", tmp_path / "b.hrry", tmp_path / "b.gguf", "--dequantize",
               "float32") == 0
    r = {t.name: t for t in gguf.GGUFReader(str(tmp_path / "b.gguf")).tensors}
    assert r["ok"].tensor_type == Q.Q8_0 and r["u8"].tensor_type == Q.F32


def test_quantized_hurray_to_safetensors_refused_or_dequantized(tmp_path, capsys):
    src = tmp_path / "m.gguf"
    make_gguf(src)
    assert run("convert", "-q", src, tmp_path / "m.hrry") == 0
    err = refused(capsys, "convert", "--drop-kv", tmp_path / "m.hrry", tmp_path / "m.safetensors")
    assert "'q8_0'" in err and "quantized" in err
    assert run("convert", "-q", "--drop-kv", "--dequantize", "float32", tmp_path / "m.hrry",
               tmp_path / "m.safetensors") == 0
    got = {n: d for n, d in deserialize((tmp_path / "m.safetensors").read_bytes())}
    for rt in gguf.GGUFReader(str(src)).tensors:
        if rt.name in ("q8_0", "q4_0", "mxfp4"):
            ref = gguf.quants.dequantize(rt.data, rt.tensor_type)
            assert got[rt.name]["dtype"] == "F32"
            assert np.frombuffer(got[rt.name]["data"], np.float32).tobytes() == ref.tobytes()


# ---- torch.save ------------------------------------------------------------------

def test_torch_state_dict_with_shared_storage(tmp_path):
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    emb = torch.randn(10, 4, generator=g)
    sd = {"embed.weight": emb, "lm_head.weight": emb, "first": emb[:3], "col": emb[:, 1],
          "bf16": torch.randn(5, generator=g).bfloat16(), "mask": torch.tensor([True, False]),
          "f8": torch.randn(8, generator=g).to(torch.float8_e5m2), "i": torch.arange(7),
          "block": {"w": torch.randn(2, 2, generator=g)}}
    torch.save(sd, tmp_path / "sd.pt")
    assert run("convert", "-q", tmp_path / "sd.pt", tmp_path / "sd.hrry") == 0
    with hurray.open(tmp_path / "sd.hrry") as f:
        assert f.views == {"lm_head.weight": "embed.weight", "first": "embed.weight",
                           "col": "embed.weight"}
        assert len(f.keys()) == 9 and "block.w" in f
    assert run("convert", "-q", tmp_path / "sd.hrry", tmp_path / "back.pt") == 0
    back = torch.load(tmp_path / "back.pt", weights_only=True)
    flat = dict(sd)
    flat["block.w"] = flat.pop("block")["w"]
    assert back.keys() == flat.keys()
    for k, v in flat.items():
        assert back[k].dtype == v.dtype and torch.equal(back[k].view(torch.uint8) if v.dtype
                                                        == torch.float8_e5m2 else back[k],
                                                        v.view(torch.uint8) if v.dtype ==
                                                        torch.float8_e5m2 else v), k
    ptr = back["embed.weight"].untyped_storage().data_ptr()
    for k in ("lm_head.weight", "first", "col"):
        assert back[k].untyped_storage().data_ptr() == ptr, k  # still one storage
    assert run("diff", "-q", tmp_path / "sd.pt", tmp_path / "sd.hrry") == 0


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_torch_checkpoints_are_read_with_weights_only(tmp_path, capsys, monkeypatch):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(2), "evil": _Boom()}, tmp_path / "evil.pt")
    monkeypatch.chdir(tmp_path)
    assert run("convert", tmp_path / "evil.pt", tmp_path / "e.hrry") == 2
    err = capsys.readouterr().err
    assert "weights_only" in err
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "e.hrry").exists()
    torch.save({"w": torch.ones(2), "epoch": 3}, tmp_path / "ckpt.pt")
    assert run("convert", tmp_path / "ckpt.pt", tmp_path / "c.hrry") == 2
    assert "'epoch' is a int" in capsys.readouterr().err


# ---- NumPy -------------------------------------------------------------------

def test_numpy_npy_and_npz(tmp_path, capsys):
    arrays = {"b": np.array([True, False, True]), "i8": np.arange(-3, 3, dtype=np.int8),
              "u64": np.array([2**64 - 1], np.uint64), "f16": np.linspace(0, 1, 7, dtype=np.float16),
              "f64": np.asfortranarray(np.arange(12.).reshape(3, 4)),
              "c128": np.array([1 + 2j, -3j]), "s": np.float32(7)}
    np.savez(tmp_path / "a.npz", **arrays)
    assert run("convert", "-q", tmp_path / "a.npz", tmp_path / "a.hrry") == 0
    h = hurray.load(tmp_path / "a.hrry")
    assert h["f64"].layout.name == "col_major"
    for k, v in arrays.items():
        assert np.array_equal(np.asarray(h[k]), v) and np.asarray(h[k]).dtype == np.asarray(v).dtype
    assert run("convert", "-q", tmp_path / "a.hrry", tmp_path / "b.npz") == 0
    with np.load(tmp_path / "b.npz") as z:
        assert sorted(z.files) == sorted(arrays)
        for k, v in arrays.items():
            assert np.array_equal(z[k], v) and z[k].dtype == np.asarray(v).dtype
        assert z["f64"].flags.f_contiguous
    np.save(tmp_path / "x.npy", arrays["f64"])
    assert run("convert", "-q", tmp_path / "x.npy", tmp_path / "x.hrry") == 0
    assert run("convert", "-q", tmp_path / "x.hrry", tmp_path / "y.npy") == 0
    assert (tmp_path / "y.npy").read_bytes() == (tmp_path / "x.npy").read_bytes()
    # what NumPy's formats cannot hold is refused by name
    hurray.save(tmp_path / "q.hrry", {"w": hurray.zeros([4], dtype="int4")})
    err = refused(capsys, "convert", tmp_path / "q.hrry", tmp_path / "q.npy")
    assert "'w'" in err and "int4" in err
    hurray.save(tmp_path / "bf.hrry", {"w": hurray.zeros([4], dtype="bfloat16")})
    err = refused(capsys, "convert", tmp_path / "bf.hrry", tmp_path / "bf.npz")
    assert "bfloat16" in err
    assert run("convert", "-q", "--dequantize", "float32", tmp_path / "bf.hrry",
               tmp_path / "bf.npz") == 0
    hurray.save(tmp_path / "two.hrry", {"a": np.ones(1), "b": np.ones(1)})
    assert "one array" in refused(capsys, "convert", tmp_path / "two.hrry", tmp_path / "t.npy")


# ---- peak memory ----------------------------------------------------------------

PEAK = textwrap.dedent("""
    import resource, sys
    import numpy, hurray, hurray._cli._commands, hurray._cli._formats  # imports first
    import gguf, safetensors
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    from hurray._cli import main
    rc = main(["convert", "-q", sys.argv[1], sys.argv[2]])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(rc, base * 1024, peak * 1024)
""")


@pytest.mark.slow  # a child interpreter
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB: Linux")
def test_peak_memory_is_one_tensor_not_the_checkpoint(tmp_path):
    largest, count = 8 << 20, 24  # a 192 MiB checkpoint of 8 MiB tensors
    items = [(f"layer{i}.weight", "F32", (1024, 2048),
              np.full(1024 * 2048, i, np.float32).tobytes()) for i in range(count)]
    header, off = {}, 0
    for name, code, shape, raw in items:
        header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    src = tmp_path / "big.safetensors"
    with open(src, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text)
        for *_, raw in items:
            fh.write(raw)
    del items
    script = tmp_path / "peak.py"
    script.write_text(PEAK)
    steps = [(src, tmp_path / "big.hrry"), (tmp_path / "big.hrry", tmp_path / "back.safetensors"),
             (tmp_path / "big.hrry", tmp_path / "big.gguf"), (tmp_path / "big.gguf",
                                                             tmp_path / "again.hrry")]
    for a, b in steps:
        out = subprocess.run([sys.executable, str(script), str(a), str(b)], check=True,
                             capture_output=True, text=True).stdout.split()
        rc, base, peak = map(int, out)
        assert rc == 0
        grew = peak - base
        assert grew < 3 * largest + (32 << 20), (a.name, b.name, grew >> 20)
        assert grew < (count * largest) // 3
    assert run("diff", "-q", src, tmp_path / "back.safetensors") == 0
    assert run("diff", "-q", src, tmp_path / "again.hrry") == 0


def test_any_hurray_scheme_dequantizes_on_request(tmp_path, capsys):
    """--dequantize goes through hurray's own dequantizer, so every scheme converts."""
    w = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    qs = {"nf4": hurray.quantize(w, "nf4"),
          "asym": hurray.quantize(w, "uint4", block_size=32, symmetric=False),
          "chan": hurray.quantize(w, "int8", axis=0)}
    hurray.save(tmp_path / "q.hrry", qs)
    err = refused(capsys, "convert", tmp_path / "q.hrry", tmp_path / "q.safetensors")
    assert "--dequantize" in err
    assert run("convert", "-q", "--dequantize", "float32", tmp_path / "q.hrry",
               tmp_path / "q.safetensors") == 0
    got = {n: d for n, d in deserialize((tmp_path / "q.safetensors").read_bytes())}
    for name, t in qs.items():
        ref = np.asarray(t.dequantize("float32"))
        assert got[name]["dtype"] == "F32" and got[name]["shape"] == [8, 64]
        assert np.frombuffer(got[name]["data"], np.float32).tobytes() == ref.tobytes()
