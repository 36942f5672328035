"""hurray.torch and hurray.numpy as drop-ins for safetensors.torch and
safetensors.numpy: one set of user scripts runs against both libraries (the import
changed, nothing else), and every result and every exception is compared. Results
must be equal (tensors: dtype, shape, bits, and contiguous wherever safetensors' are;
dicts, lists, sets, tuples and strings as they are). Where safetensors raises, hurray raises the class the
errors table of docs/reference/python.md gives for that failure (the test reads the
table, so the table and the behaviour cannot drift apart); where the table says
hurray accepts what safetensors refuses, the script must succeed."""

import os
import pathlib
import re

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
safetensors = pytest.importorskip("safetensors")
import safetensors.numpy  # noqa: E402
import safetensors.torch  # noqa: E402

import hurray  # noqa: E402
import hurray.numpy  # noqa: E402
import hurray.torch  # noqa: E402

# safetensors raises its errors from Rust, which the sanitizer pass's preloaded libasan
# turns into an abort (as torch's C++ errors): the plain pass runs these comparisons
pytestmark = pytest.mark.skipif(bool(os.environ.get("HURRAY_EXPECT_ASAN")),
                                reason="safetensors' own errors abort under a preloaded "
                                       "sanitizer runtime; the plain pass runs this file")
ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reference" / "python.md"

LIBS = {"safetensors": (safetensors.torch, safetensors.numpy),
        "hurray": (hurray.torch, hurray.numpy)}


def errors_table():
    """{script name: hurray's exception class name, or "accepted"} from the errors table."""
    text = DOC.read_text()
    start = text.index("<!-- errors-table -->")
    rows = {}
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = re.fullmatch(r"`(\w+)`", cells[0])
        if m is None:
            continue
        hurray_cell = cells[3]
        got = "accepted" if hurray_cell.lower().startswith("accepted") else \
            re.match(r"`(?:hurray\.)?(\w+)`", hurray_cell)[1]
        rows[m[1]] = got
    return rows


# ---- the user scripts: (torch or numpy module, tmp path) -> result ----------------------

class Tiny(torch.nn.Module):
    def __init__(self, tied=True):
        super().__init__()
        self.emb = torch.nn.Embedding(7, 4)
        self.head = torch.nn.Linear(4, 7, bias=False)
        if tied:
            self.head.weight = self.emb.weight
        self.norm = torch.nn.LayerNorm(4)


def tensors():
    g = torch.Generator().manual_seed(0)
    return {"f32": torch.randn(3, 4, generator=g), "f16": torch.randn(5, generator=g).half(),
            "bf16": torch.randn(2, 2, generator=g).bfloat16(),
            "i64": torch.arange(6).reshape(2, 3), "u8": torch.arange(4, dtype=torch.uint8),
            "bool": torch.tensor([True, False, True]),
            "f8": torch.randn(4, generator=g).to(torch.float8_e4m3fn),
            "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3)}


def s_roundtrip(m, p):
    m[0].save_file(tensors(), p / "a")
    return m[0].load_file(p / "a")


def s_metadata(m, p):
    m[0].save_file({"a": torch.ones(2)}, p / "a", metadata={"format": "pt", "k": "v"})
    with m[0].safe_open(p / "a", framework="pt") as f:
        return f.metadata(), f.keys()


def s_no_metadata(m, p):
    m[0].save_file({"a": torch.ones(2)}, p / "a")
    with m[0].safe_open(p / "a", framework="pt") as f:
        return f.metadata()


def s_safe_open_reads(m, p):
    m[0].save_file(tensors(), p / "a")
    with m[0].safe_open(p / "a", framework="pt", device="cpu") as f:
        out = {k: f.get_tensor(k) for k in f.keys()}
        sl = f.get_slice("f32")
        return out, sl[1:, :2], sl.get_shape(), sl.get_dtype(), \
            f.get_slice("i64")[0], f.get_slice("bf16").get_dtype()


def s_slice_dtypes(m, p):
    m[0].save_file(tensors(), p / "a")
    with m[0].safe_open(p / "a", framework="pt") as f:
        return {k: f.get_slice(k).get_dtype() for k in f.keys()}


def s_bytes(m, p):
    data = m[0].save(tensors(), metadata={"a": "b"})
    assert isinstance(data, bytes)
    return m[0].load(data)


def s_deserialize(m, p):
    """safetensors.deserialize of what save wrote: (name, shape, dtype, raw bytes)."""
    t = {k: v for k, v in tensors().items() if k != "f8"}
    return dict(m[0].deserialize(m[0].save(t)))


def s_serialize_then_load(m, p):
    specs = {"a": {"dtype": "float32", "shape": [2, 2], "data": np.arange(4, dtype=np.float32)
                   .tobytes()},
             "b": {"dtype": "bfloat16", "shape": [3], "data": bytes(range(6))},
             "c": {"dtype": "float8_e4m3fn", "shape": [2], "data": b"\x38\x40"}}
    if m[0] is safetensors.torch:  # 0.8 takes TensorSpec; hurray takes the dict form
        keep = {k: np.frombuffer(v["data"], np.uint8).copy() for k, v in specs.items()}
        specs = {k: safetensors.TensorSpec(dtype=v["dtype"], shape=v["shape"],
                                           data_ptr=keep[k].ctypes.data,
                                           data_len=len(v["data"])) for k, v in specs.items()}
    m[0].serialize_file(specs, p / "a", metadata={"x": "y"})
    with m[0].safe_open(p / "a", framework="pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, f.metadata(), m[0].load(m[0].serialize(
            specs))


def s_numpy(m, p):
    arrs = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, 2], np.int8),
            "c": np.zeros((0,), np.float64), "d": np.array(True)}
    m[1].save_file(arrs, p / "a", metadata={"x": "y"})
    back = m[1].load_file(p / "a")
    return back, m[1].load(m[1].save(arrs))


def s_numpy_safe_open(m, p):
    m[1].save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3)}, p / "a")
    with m[1].safe_open(p / "a", framework="np") as f:
        return f.get_tensor("a"), f.get_slice("a")[:, 1], f.keys()


def s_save_model_tied(m, p):
    torch.manual_seed(0)
    model = Tiny()
    m[0].save_model(model, p / "a")
    fresh = Tiny()
    result = m[0].load_model(fresh, p / "a")
    return result, fresh.state_dict(), fresh.head.weight.data_ptr() == fresh.emb.weight.data_ptr()


def s_load_model_tied_missing(m, p):
    """A file without the tied copy (as transformers' save_pretrained writes it):
    strict load_model succeeds and reports nothing."""
    torch.manual_seed(0)
    model = Tiny()
    sd = {k: v.clone() for k, v in model.state_dict().items() if k != "head.weight"}
    m[0].save_file(sd, p / "a")
    return m[0].load_model(Tiny(), p / "a")


def s_load_model_strict_missing(m, p):
    torch.manual_seed(0)
    sd = {k: v.clone() for k, v in Tiny(tied=False).state_dict().items() if k != "norm.bias"}
    m[0].save_file(sd, p / "a")
    return m[0].load_model(Tiny(tied=False), p / "a")


def s_load_model_not_strict(m, p):
    torch.manual_seed(0)
    sd = {k: v.clone() for k, v in Tiny(tied=False).state_dict().items() if k != "norm.bias"}
    sd["extra"] = torch.ones(1)
    m[0].save_file(sd, p / "a")
    missing, unexpected = m[0].load_model(Tiny(tied=False), p / "a", strict=False)
    return sorted(missing), sorted(unexpected), type(missing).__name__, type(unexpected).__name__


def s_contiguous_results(m, p):
    """What load_file returns is contiguous (a user calls .view(-1) on it)."""
    w = torch.arange(12.0).reshape(3, 4)
    m[0].save_model(torch.nn.ParameterDict({"w": torch.nn.Parameter(w.t())}), p / "a")
    out = m[0].load_file(p / "a")
    return out, {k: v.view(-1) for k, v in out.items()}


def s_noncontiguous_save(m, p):
    m[0].save_file({"a": torch.arange(12.0).reshape(3, 4).t()}, p / "a")
    out = m[0].load_file(p / "a")
    return out["a"].view(-1)


def s_shared_save(m, p):
    x = torch.zeros(4)
    m[0].save_file({"a": x, "b": x}, p / "a")
    return m[0].load_file(p / "a")


def s_key_not_str(m, p):
    m[0].save_file({1: torch.zeros(1)}, p / "a")


def s_value_not_tensor(m, p):
    m[0].save_file({"a": [1, 2]}, p / "a")


def s_metadata_not_str(m, p):
    m[0].save_file({"a": torch.zeros(1)}, p / "a", metadata={"k": 1})


def s_missing_file(m, p):
    m[0].load_file(p / "nope")


def s_garbage_file(m, p):
    (p / "a").write_bytes(b"\x00" * 100)
    m[0].load_file(p / "a")


def s_garbage_bytes(m, p):
    m[0].load(b"garbage")


def s_missing_tensor(m, p):
    m[0].save_file({"a": torch.zeros(1)}, p / "a")
    with m[0].safe_open(p / "a", framework="pt") as f:
        f.get_tensor("zz")


def s_bad_framework(m, p):
    m[0].save_file({"a": torch.zeros(1)}, p / "a")
    m[0].safe_open(p / "a", framework="tf2")


def s_slice_out_of_range(m, p):
    m[0].save_file({"a": torch.zeros(2, 3)}, p / "a")
    with m[0].safe_open(p / "a", framework="pt") as f:
        return f.get_slice("a")[5]


def s_missing_folder(m, p):
    m[0].save_file({"a": torch.zeros(1)}, p / "nodir" / "a")


SCRIPTS = {name[2:]: f for name, f in sorted(globals().items()) if name.startswith("s_")}


def compare(a, b, where="result"):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), f"{where}: {type(b).__name__}, not a tensor"
        # contiguous where safetensors' is (a strided slice of safetensors' may be
        # contiguous here: hurray copies only the part read)
        assert (a.dtype, a.shape) == (b.dtype, b.shape) and b.is_contiguous() >= \
            a.is_contiguous(), f"{where}: {b.dtype} {tuple(b.shape)} contiguous=" \
            f"{b.is_contiguous()}, not {a.dtype} {tuple(a.shape)} contiguous={a.is_contiguous()}"
        assert torch.equal(a.contiguous().reshape(-1).view(torch.uint8),
                           b.contiguous().reshape(-1).view(torch.uint8)), \
            f"{where}: other values"
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        assert a.tobytes() == b.tobytes() and b.flags.c_contiguous >= a.flags.c_contiguous, where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b) or sorted(a) == sorted(b), \
            f"{where}: keys {list(b)}, not {list(a)}"
        for k in a:
            compare(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), \
            f"{where}: {type(b).__name__} of {len(b)}, not {type(a).__name__} of {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b) and a == b, f"{where}: {b!r}, not {a!r}"


def run(script, lib, tmp_path):
    p = tmp_path / lib
    p.mkdir()
    try:
        return "ok", SCRIPTS[script](LIBS[lib], p)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "raised", e


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_same_results_and_errors(script, tmp_path):
    st_how, st = run(script, "safetensors", tmp_path)
    hr_how, hr = run(script, "hurray", tmp_path)
    if st_how == "ok":
        assert hr_how == "ok", f"{script}: safetensors succeeds, hurray raised {hr!r}"
        compare(st, hr)
        return
    table = errors_table()
    assert script in table, \
        f"{script}: safetensors raises {type(st).__name__}: {st}; the errors table of " \
        f"docs/reference/python.md has no row for it"
    want = table[script]
    if want == "accepted":
        assert hr_how == "ok", f"{script}: the table says hurray accepts it; it raised {hr!r}"
        return
    assert hr_how == "raised", f"{script}: safetensors raises {st!r}; hurray returned {hr!r}"
    names = {c.__name__ for c in type(hr).__mro__}
    assert want in names, f"{script}: hurray raised {type(hr).__name__} ({hr}); the table says {want}"


def test_every_table_row_is_a_script():
    assert set(errors_table()) <= set(SCRIPTS)


@pytest.mark.parametrize("module", ["torch", "numpy"])
def test_the_names_safetensors_exports_exist(module):
    st = getattr(safetensors, module)
    ours = getattr(hurray, module)
    public = {n for n in dir(st) if not n.startswith("_") and callable(getattr(st, n))
              and getattr(getattr(st, n), "__module__", "").startswith("safetensors")}
    public |= {"safe_open"}
    missing = sorted(n for n in public if not hasattr(ours, n))
    assert not missing, f"hurray.{module} lacks {missing}"


@pytest.mark.parametrize("module, name", [("torch", "load_file"), ("torch", "load_model"),
                                          ("torch", "save_file"), ("torch", "save_model"),
                                          ("torch", "save"), ("torch", "load"),
                                          ("numpy", "load_file"), ("numpy", "save_file"),
                                          ("numpy", "save"), ("numpy", "load")])
def test_every_parameter_of_safetensors_is_taken_with_its_default(module, name):
    """Every parameter safetensors' function has, ours has too, of the same kind and
    default (our own are keyword-only extras)."""
    import inspect
    theirs = inspect.signature(getattr(getattr(safetensors, module), name)).parameters
    ours = inspect.signature(getattr(getattr(hurray, module), name)).parameters
    for pname, p in theirs.items():
        assert pname in ours, f"{module}.{name} lacks {pname}"
        q = ours[pname]
        assert (q.kind, q.default) == (p.kind, p.default), (module, name, pname)
    extra = [n for n in ours if n not in theirs]
    assert all(ours[n].kind == inspect.Parameter.KEYWORD_ONLY for n in extra), extra


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_backend_is_taken(tmp_path, backend):
    hurray.torch.save_file({"a": torch.arange(3.0)}, tmp_path / "a")
    got = hurray.torch.load_file(tmp_path / "a", backend=backend)
    assert torch.equal(got["a"], torch.arange(3.0))
    with pytest.raises(ValueError, match="backend must be 'mmap' or 'pread'"):
        hurray.torch.load_file(tmp_path / "a", backend="fast")

