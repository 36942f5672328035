"""`hurray view` (python/hurray/_view): the server's JSON endpoints against files
hurray writes (every layout and quantization scheme, views, sparse, composites,
damaged files), the never-reads-data rule of the summary, the notebook HTML
(file_html, tensor_html) parsed as HTML, and the command's parser. The page in
a real browser: tests/docs/test_view_page.py."""

import html.parser
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

np = pytest.importorskip("numpy")
import hurray  # noqa: E402
import samples  # noqa: E402
from hurray._view import model as vmodel  # noqa: E402
from hurray._view import render  # noqa: E402
from hurray._view.server import Server, Viewer  # noqa: E402

RNG = np.random.default_rng(7)


def floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def quantized_set():
    """A float weight and one quantized copy of it per scheme (named after it)."""
    w = floats(16, 64)
    return w, {
        "per_tensor": hurray.quantize(w, "int8"),
        "per_channel": hurray.quantize(w, "int8", axis=0),
        "per_block": hurray.quantize(w, "int4", block_size=32, scale_dtype="float16"),
        "per_block_asym": hurray.quantize(w, "int4", block_size=32, symmetric=False),
        "nf4": hurray.quantize(w, "nf4"),
        "mxfp": hurray.quantize(w, "float8_e4m3"),
    }


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory):
    """Every layout, scheme and section (samples.py, whose bytes are arbitrary),
    real quantized tensors of every scheme beside the float weight they were
    made from, composites, sparse tensors from SciPy-like parts, and views."""
    path = tmp_path_factory.mktemp("view") / "every.hrry"
    t = dict(samples.sample_tensors())
    t.update(samples.sample_composites())
    w, qs = quantized_set()
    t["real.w"] = w
    for k, q in qs.items():
        t[f"real.w_{k}"] = q
    base = floats(8, 6)
    t["shared.base"] = base
    t["shared.same"] = base          # the same object: a view of the first name
    t["shared.T"] = base.T           # a strided view
    t["shared.rows"] = base[2:5]     # a contiguous part
    values = np.array([1.0, -2.0, 3.0, 4.0], np.float32)
    t["sp.coo"] = hurray.sparse_coo(values, np.array([[0, 0], [1, 5], [7, 2], [9, 9]],
                                                     np.uint64), [10, 10])
    hurray.save(path, t, kv={"arch": "test", "layers": 2})
    return path


def start(paths, options=None):
    srv = Server(Viewer([str(p) for p in paths], options), 0)
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    th.start()
    return srv


def stop(srv):
    srv.shutdown()
    srv.server_close()
    srv.viewer.close()


@pytest.fixture(scope="module")
def server(every_kind):
    srv = start([every_kind])
    yield srv
    stop(srv)


def get(srv, path, **params):
    q = ("?" + urllib.parse.urlencode(params)) if params else ""
    with urllib.request.urlopen(srv.url.rstrip("/") + path + q, timeout=30) as r:
        assert r.status == 200
        body = r.read()
    return json.loads(body) if path.startswith("/api/") else body.decode()


def rows_of(doc):
    return [dict(zip(doc["columns"], r)) for r in doc["rows"]]


# ---- HTML well-formedness -----------------------------------------------------------------

VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source",
        "track", "wbr"}


class Checker(html.parser.HTMLParser):
    """Every element closed, in order (void elements aside)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def well_formed(fragment):
    c = Checker()
    c.feed(fragment)
    c.close()
    assert not c.stack, f"left open: {c.stack}"
    return c.tags


# ---- the summary and the table ------------------------------------------------------------

def test_the_page_and_info(server):
    page = get(server, "/")
    assert "<script>" in page and "hurray view" in page and ".hrv{" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing fetched
    assert get(server, "/api/info") == {"mode": "file", "files": [server.viewer.paths[0]]}


def test_summary_counts_every_kind(server, every_kind):
    doc = get(server, "/api/summary")
    s, rows = doc["summary"], rows_of(doc)
    with hurray.open(every_kind) as f:
        names = f.keys()
        views = f.views
    assert [r["name"] for r in rows] == names            # file order, then the views
    assert {r["name"]: r["view_of"] for r in rows if r["view_of"]} == views
    assert set(views) == {"shared.same", "shared.T", "shared.rows"}
    assert s["views"] == 3 and s["composites"] == 5 and not s["errors"]
    assert s["kv"] == {"arch": "test", "layers": 2} and s["has_checksums"]
    kinds = {r["name"]: r["kind"] for r in rows}
    assert kinds["csr"] == kinds["coo"] == kinds["csf"] == "sparse"
    assert kinds["q_block"] == kinds["real.w_nf4"] == "quantized"
    assert kinds["nested"] == kinds["nested.1"] == "composite"
    members = {r["name"]: r["member_of"] for r in rows if r["member_of"]}
    assert members["nested.1.0"] == "nested.1" and members["nested.1"] == "nested"
    assert members["group.2"] == "group" and "real.w" not in members
    layouts = {r["layout"] for r in rows}
    assert {"row_major", "col_major", "strided", "tiled", "morton", "hilbert", "coo", "csr",
            "csc", "csf", "block_paged", "composite", "view"} <= layouts
    # bytes by dtype: the buffers of every stored leaf tensor, each counted once
    leaves = [r for r in rows if r["kind"] not in ("view", "composite")]
    assert sum(t["bytes"] for t in s["by_dtype"].values()) == sum(r["bytes"] for r in leaves)
    assert sum(t["params"] for t in s["by_layout"].values()) == s["params"]
    assert s["quantization"]["quantized"]["tensors"] == 6 + 6 + 1   # samples, real, group.0
    assert s["size"] == every_kind.stat().st_size and s["overhead"] > 0
    well_formed(doc["html"])


def test_every_tensor_answers(server):
    """Every name answers with JSON and well-formed HTML: its values, or the reason
    they cannot be read (samples.py's quantized tensors hold arbitrary scales)."""
    rows = rows_of(get(server, "/api/summary"))
    for r in rows:
        d = get(server, "/api/tensor", name=r["name"])
        st = d["stats"]
        well_formed(d["html"])
        assert st["row"]["name"] == r["name"]
        if r["kind"] == "composite":
            assert st["placement"]["members"], r["name"]
            assert "hrv-placement" in d["html"]
        elif r["kind"] in ("dense", "view"):
            assert st["values"]["count"] == vmodel._count(r["shape"]) and not st["sampled"]
        else:
            assert "values" in st or "error" in st or "pattern" in st, (r["name"], st)


def test_dense_values_and_histogram(server, every_kind):
    st = get(server, "/api/tensor", name="real.w")["stats"]
    with hurray.open(every_kind) as f:
        x = np.asarray(f["real.w"])
    v = st["values"]
    assert v["count"] == x.size and v["nan"] == v["inf"] == 0
    assert v["min"] == pytest.approx(float(x.min())) and v["max"] == pytest.approx(float(x.max()))
    assert v["mean"] == pytest.approx(float(x.mean()), abs=1e-6)
    assert v["std"] == pytest.approx(float(x.std()), rel=1e-5)
    assert sum(v["histogram"]["counts"]) == x.size
    # a view reads its base's bytes: the transpose has the base's values
    t = get(server, "/api/tensor", name="shared.T")["stats"]["values"]
    b = get(server, "/api/tensor", name="shared.base")["stats"]["values"]
    assert t["min"] == b["min"] and t["max"] == b["max"] and t["count"] == b["count"]


def test_quantized_scales_and_the_error_against_the_float_weight(server, every_kind):
    with hurray.open(every_kind) as f:
        w = np.asarray(f["real.w"])
    for k in ("per_tensor", "per_channel", "per_block", "per_block_asym", "nf4", "mxfp"):
        st = get(server, "/api/tensor", name=f"real.w_{k}")["stats"]
        assert "error" not in st, st.get("error")
        assert st["scales"]["count"] >= 1 and st["scales"]["min"] > 0
        e = st["error_vs"]
        assert e["against"] == "real.w"
        with hurray.open(every_kind) as f:
            deq = np.asarray(f[f"real.w_{k}"].dequantize())
        assert e["max_abs"] == pytest.approx(float(np.abs(deq - w).max()), rel=1e-6)
        assert 0 < e["relative_rms"] < 0.5
    per_channel = get(server, "/api/tensor", name="real.w_per_channel")["stats"]
    assert per_channel["scales"]["count"] == 16          # one per row


def test_sparse_values_and_pattern(server):
    d = get(server, "/api/tensor", name="sp.coo")
    st = d["stats"]
    assert st["values"]["count"] == 4 and st["values"]["min"] == -2.0
    p = st["pattern"]
    assert (p["rows"], p["cols"]) == (10, 10) and sum(map(sum, p["grid"])) == 4
    assert p["grid"][9][9] == 1 and p["grid"][1][5] == 1
    assert st["density"] == pytest.approx(0.04)
    assert d["html"].count("<rect") >= 5                  # the frame and one cell per non-zero
    csr = get(server, "/api/tensor", name="csr")["stats"]
    assert sum(map(sum, csr["pattern"]["grid"])) == 3


def test_composite_placement(server):
    p = get(server, "/api/tensor", name="nested")["stats"]["placement"]
    assert p["rule"] == "partition" and p["shape"] == [4, 4]
    inner = p["members"][1]
    assert inner["at"] == [2, 0] and inner["composite"]["rule"] == "overlay"
    assert [m["at"] for m in inner["composite"]["members"]] == [[2, 0], [3, 0]]


def test_large_tensors_are_sampled_in_bounded_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(vmodel, "SAMPLE_ELEMENTS", 1000)
    x = np.arange(200 * 300, dtype=np.float32).reshape(200, 300)
    hurray.save(tmp_path / "big.hrry", {"x": x, "v": np.arange(50000, dtype=np.float64),
                                        "wide": np.ones((2, 5000), np.int16)})
    m = vmodel.FileModel(str(tmp_path / "big.hrry"))
    try:
        for name, n in (("x", x.size), ("v", 50000), ("wide", 10000)):
            st = vmodel.tensor_stats(m, name)
            assert st["sampled"] and st["elements"] == n, name
            assert 0 < st["values"]["count"] <= 1000, (name, st["values"]["count"])
        st = vmodel.tensor_stats(m, "x")
        assert st["values"]["min"] < 3000 and st["values"]["max"] > x.max() - 3000  # spread
        assert "sampled: " in render.tensor_detail_html(st)
    finally:
        m.close()


def test_sample_plan_bounds():
    for shape in ([10], [10**7], [3, 10**6], [5000, 7, 3], [1, 1, 10**6], [0, 4]):
        plan, sampled = vmodel.sample_plan(shape, 4096)
        count = 0
        for idx in plan:
            count += np.empty(shape, np.uint8)[idx].size if vmodel._count(shape) < 10**6 \
                else _size_of(shape, idx)
        assert count <= 4096 or not sampled, (shape, count)
        assert sampled == (vmodel._count(shape) > 4096)


def _size_of(shape, idx):
    n, dims = 1, list(shape)
    for k in idx:
        if k is Ellipsis:
            break
        d = dims.pop(0)
        n *= len(range(*k.indices(d))) if isinstance(k, slice) else 1
    for d in dims:
        n *= d
    return n


# ---- views, damaged files ---------------------------------------------------------------

def test_views_file(tmp_path):
    tied = floats(6, 4)
    hurray.save(tmp_path / "tied.hrry", {"embed": tied, "lm_head": tied, "half": tied[:3]})
    srv = start([tmp_path / "tied.hrry"])
    try:
        rows = {r["name"]: r for r in rows_of(get(srv, "/api/summary"))}
        assert rows["lm_head"]["view_of"] == "embed" and rows["lm_head"]["shape"] == [6, 4]
        assert rows["half"]["view_of"] == "embed" and rows["half"]["shape"] == [3, 4]
        assert rows["lm_head"]["bytes"] == 0 and rows["embed"]["bytes"] == tied.nbytes
        st = get(srv, "/api/tensor", name="half")["stats"]
        assert st["values"]["count"] == 12
        assert st["values"]["max"] == pytest.approx(float(tied[:3].max()))
        html = get(srv, "/api/summary")["html"]
        assert "views" in html
    finally:
        stop(srv)


def damaged_copies(src, tmp_path):
    data = bytearray(src.read_bytes())
    m = vmodel.FileModel(str(src))
    entries = m.entries
    m.close()
    out = {}
    # 1. cut short: the trailer is gone
    (tmp_path / "cut.hrry").write_bytes(data[:len(data) // 2])
    out["cut"] = tmp_path / "cut.hrry"
    # 2. one descriptor overwritten: the index is intact, that entry is not
    bad = bytearray(data)
    e = entries[1]
    bad[e["descriptor_offset"]:e["descriptor_offset"] + 8] = b"\xff" * 8
    (tmp_path / "desc.hrry").write_bytes(bad)
    out["desc"] = tmp_path / "desc.hrry"
    # 3. a flipped byte in a tensor's data: opens, verify names it
    flip = bytearray(data)
    flip[entries[0]["data_offset"]] ^= 0xFF
    (tmp_path / "flip.hrry").write_bytes(flip)
    out["flip"] = tmp_path / "flip.hrry"
    # 4. not a .hrry file at all
    (tmp_path / "text.hrry").write_bytes(b"hello, world\n" * 10)
    out["text"] = tmp_path / "text.hrry"
    return out, entries


def test_damaged_files_show_what_they_can(tmp_path):
    src = tmp_path / "good.hrry"
    hurray.save(src, {"a": floats(64, 64), "b": floats(32), "c": np.arange(10)})
    files, entries = damaged_copies(src, tmp_path)
    srv = start(list(files.values()))
    try:
        # cut short: nothing past the header; the error says why, nothing crashes
        s = get(srv, "/api/summary", f=0)
        assert s["summary"]["errors"] and not s["rows"]
        assert "trailer" in " ".join(s["summary"]["errors"])
        well_formed(s["html"])
        # a bad descriptor: the other tensors are listed, the bad one says what is wrong
        s = get(srv, "/api/summary", f=1)
        rows = {r["name"]: r for r in rows_of(s)}
        assert set(rows) == {"a", "b", "c"}
        assert rows["b"]["error"] and rows["b"]["kind"] == "damaged"
        assert rows["a"]["kind"] == rows["c"]["kind"] == "dense"
        assert any(m.startswith("b: ") for m in s["summary"]["errors"])
        assert get(srv, "/api/tensor", f=1, name="a")["stats"]["values"]["count"] == 64 * 64
        st = get(srv, "/api/tensor", f=1, name="b")
        assert st["stats"]["error"]
        well_formed(st["html"])
        # a flipped data byte: the page opens; verify names the damage
        assert rows_of(get(srv, "/api/summary", f=2))
        v = get(srv, "/api/verify", f=2)
        assert not v["ok"] and "CRC" in v["error"].upper()
        assert get(srv, "/api/verify", f=1)["ok"] is False
        # not a .hrry file
        s = get(srv, "/api/summary", f=3)
        assert "HRRYFILE" in " ".join(s["summary"]["errors"]) and not s["rows"]
    finally:
        stop(srv)


def test_verify_a_sound_file(server):
    v = get(server, "/api/verify")
    assert v["ok"] and v["checksums"] and v["checked_bytes"] > 0


def test_errors_and_foreign_hosts(server):
    with pytest.raises(urllib.error.HTTPError) as e:
        get(server, "/api/tensor", name="no such tensor")
    assert e.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as e:
        get(server, "/api/summary", f=3)
    assert e.value.code == 400
    req = urllib.request.Request(server.url + "api/info", headers={"Host": "evil.example:80"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 403


# ---- two files ----------------------------------------------------------------------------

def test_diff(tmp_path):
    a = {"same": np.arange(6, dtype=np.float32), "moved": floats(4, 4),
         "retyped": np.zeros(3, np.float32), "gone": np.ones(2, np.int8)}
    b = {"same": np.arange(6, dtype=np.float32), "moved": a["moved"] + 0.5,
         "retyped": np.zeros(3, np.float64), "new": np.ones(5, np.int8)}
    hurray.save(tmp_path / "a.hrry", a, kv={"v": 1})
    hurray.save(tmp_path / "b.hrry", b, kv={"v": 2})
    srv = start([tmp_path / "a.hrry", tmp_path / "b.hrry"])
    try:
        assert get(srv, "/api/info")["mode"] == "diff"
        d = get(srv, "/api/diff")
        st = {r["name"]: r for r in d["rows"]}
        assert st["gone"]["status"] == "only_a" and st["new"]["status"] == "only_b"
        assert st["retyped"]["status"] == "changed"
        assert st["retyped"]["changes"] == ["dtype float32 -> float64"]
        assert st["moved"]["status"] == st["same"]["status"] == "same_meta"
        assert d["kv"] == [{"key": "v", "a": 1, "b": 2}]
        c = get(srv, "/api/compare", name="moved")
        assert c["max_abs"] == pytest.approx(0.5) and not c["equal"]
        assert get(srv, "/api/compare", name="same")["equal"]
        assert get(srv, "/api/compare", name="retyped")["equal"]   # equal as numbers
    finally:
        stop(srv)


def test_diff_compares_large_tensors_in_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(vmodel, "SAMPLE_ELEMENTS", 100)
    x = floats(50, 30)
    y = x.copy()
    y[49, 29] += 3.0      # in the last block
    hurray.save(tmp_path / "a.hrry", {"x": x})
    hurray.save(tmp_path / "b.hrry", {"x": y})
    a, b = vmodel.FileModel(str(tmp_path / "a.hrry")), vmodel.FileModel(str(tmp_path / "b.hrry"))
    try:
        assert len(vmodel._blocks([50, 30], 100)) == 17
        assert vmodel.compare(a, b, "x")["max_abs"] == pytest.approx(3.0)
    finally:
        a.close()
        b.close()


# ---- no data read for the summary ---------------------------------------------------------

def test_the_summary_reads_no_tensor_data(monkeypatch):
    """Every byte range read while the page's summary and table are made, through
    the URL's byte source that both the C reader and the viewer use, lies outside
    every tensor's data; asking for one tensor reads its range (the check sees reads)."""
    fsspec = pytest.importorskip("fsspec")
    from hurray import _remote
    tensors = {f"layer.{i}.w": np.full((64, 64), i, np.float32) for i in range(12)}
    tensors["q"] = hurray.quantize(floats(64, 64), "int4", block_size=32)
    tensors["c"] = samples.sample_composites()["partition"]
    url = f"memory://hurray-view-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as out:
        out.write(hurray.save_bytes(tensors))
    reads = []
    real = _remote.FsspecSource._range

    def counting(self, offset, mv):
        reads.append((offset, len(mv)))
        return real(self, offset, mv)

    monkeypatch.setattr(_remote.FsspecSource, "_range", counting)
    srv = start([url], {"workers": 2})
    try:
        doc = get(srv, "/api/summary")
        assert len(doc["rows"]) == len(tensors) + 2 and not doc["summary"]["errors"]
        entries = srv.viewer.models[0].entries
        data = [(e["data_offset"], e["data_length"]) for e in entries if e["data_length"]]
        assert len(data) == 15 and reads

        def touches(ranges):
            return [(o, n) for o, n in ranges for d, dn in data if o < d + dn and d < o + n]
        assert not touches(reads), "the summary read tensor data"
        before = len(reads)
        get(srv, "/api/tensor", name="layer.3.w")
        assert touches(reads[before:]), "reading a tensor must read its data"
        assert get(srv, "/api/tensor", name="q")["stats"]["scales"]["count"] == 128
    finally:
        stop(srv)


def test_a_10000_tensor_summary_is_fast(tmp_path):
    tensors = {f"model.layers.{i // 20}.block{i % 20}.weight": np.full((2, 2), i, np.float32)
               for i in range(10000)}
    hurray.save(tmp_path / "many.hrry", tensors, durable=False, checksums=False)
    srv = start([tmp_path / "many.hrry"])
    try:
        best = 1e9
        for _ in range(2):
            srv.viewer.models[0]._rows = None       # the table made again each time
            t0 = time.perf_counter()
            doc = get(srv, "/api/summary")
            best = min(best, time.perf_counter() - t0)
        assert len(doc["rows"]) == 10000
        print(f"10,000 tensors: summary and table in {best:.3f} s (page: under a second)")
        assert best < 0.8
    finally:
        stop(srv)


# ---- notebook HTML ------------------------------------------------------------------------

def test_file_html_is_well_formed(every_kind):
    with hurray.open(every_kind) as f:
        out = render.file_html(f)
    tags = well_formed(out)
    assert tags.count("tr") > 40 and "style" in tags
    assert "real.w_nf4" in out and "view of shared.base" in out and "KV metadata" in out
    assert "<script" not in out


def test_file_html_of_a_url_and_of_a_closed_file(every_kind):
    fsspec = pytest.importorskip("fsspec")
    url = f"memory://hurray-view-tests/{uuid.uuid4().hex}.hrry"
    with fsspec.open(url, "wb") as out:
        out.write(every_kind.read_bytes())
    with hurray.open(url) as f:
        out = render.file_html(f)
    well_formed(out)
    assert "real.w_nf4" in out
    f = hurray.open(every_kind)
    f.close()
    well_formed(render.file_html(f))


def test_file_html_escapes_names_and_kv(tmp_path):
    hurray.save(tmp_path / "x.hrry", {"<b>&": np.zeros(2, np.float32)},
                kv={"<script>": "</td><i>"})
    with hurray.open(tmp_path / "x.hrry") as f:
        out = render.file_html(f)
    well_formed(out)
    assert "&lt;b&gt;&amp;" in out and "&lt;script&gt;" in out and "<script>" not in out


def test_tensor_html_is_well_formed_with_a_histogram_for_dense_tensors(every_kind):
    with hurray.open(every_kind) as f:
        for name in f.keys():
            t = f[name]
            out = render.tensor_html(t)
            tags = well_formed(out)
            dense = (isinstance(t, hurray.Tensor) and t.quantization is None and
                     t.layout.name in ("row_major", "col_major", "strided") and (t.size or 0) > 0)
            assert ("svg" in tags) == (dense or isinstance(t, hurray.Composite)), name
            if dense:
                assert "hrv-hist" in out and tags.count("rect") >= 1, name
    out = render.tensor_html(hurray.from_numpy(floats(300, 4000)))   # sampled
    assert "sampled: " in out and "of 1,200,000 elements" in out
    well_formed(out)
    well_formed(render.tensor_html(hurray.zeros([0])))


def test_repr_html_of_files_and_tensors(every_kind, tmp_path):
    """File._repr_html_ and Tensor._repr_html_ (the C methods calling the hooks the
    package registers) give well-formed HTML; repr is unchanged."""
    from hurray import _display
    with hurray.open(every_kind) as f:
        out = f._repr_html_()
        assert repr(f).startswith("<hurray.File ")
        tensors = [(n, f[n]) for n in ("real.w", "real.w_nf4", "csr", "shared.T", "bf16",
                                       "sp.coo") if n in f]
    tags = well_formed(out)
    assert tags.count("tr") > 40 and "real.w_nf4" in out and "KV metadata" in out
    assert len(tensors) >= 5
    for name, t in tensors:
        h = t._repr_html_()
        well_formed(h)
        assert "hurray.Tensor" in h and t.dtype.name in h, name
        assert repr(t) == _display.tensor_repr(t)
    assert "hrv-hist" in dict(tensors)["real.w"]._repr_html_()
    # a file image opened from memory has no path: still the summary and table
    f = hurray._hurray.open(bytearray(every_kind.read_bytes()))
    try:
        well_formed(f._repr_html_())
    finally:
        f.close()
    well_formed(f._repr_html_())     # closed: the error, as HTML


def test_svg_helpers_are_well_formed():
    for frag in (render.histogram_svg(None), render.histogram_svg({"edges": [0, 1], "counts": [3]}),
                 render.pattern_svg({"rows": 3, "cols": 1, "grid": [[1], [0], [2]],
                                     "cell_capacity": 1}),
                 render.placement_svg({"rule": "group", "shape": [5], "members": [
                     {"index": 0, "shape": [5], "at": None}]})):
        well_formed(frag)


# ---- the command --------------------------------------------------------------------------

def test_the_view_command_parses():
    from hurray._cli import _parser
    a = _parser().parse_args(["view", "a.hrry", "b.hrry", "--port", "0", "--no-browser"])
    assert (a.command, a.file, a.other, a.port, a.no_browser) == ("view", "a.hrry", "b.hrry",
                                                                 0, True)
    a = _parser().parse_args(["view", "s3://bucket/m.hrry"])
    assert a.other is None and a.port == 0 and not a.no_browser


@pytest.mark.slow  # a child interpreter
def test_import_hurray_does_not_import_the_viewer():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", "import sys, hurray, hurray._cli; "
                        "print(sorted(m for m in sys.modules if m.startswith('hurray._view') "
                        "or m == 'http.server'))"],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout


@pytest.mark.slow  # ml_dtypes' import takes seconds
def test_the_small_types_decode_as_ml_dtypes_does():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from hurray._cli._values import to_numpy
    rng = np.random.default_rng(3)
    for name in ("bfloat16", "float8_e4m3", "float8_e5m2", "float8_e8m0", "float6_e2m3",
                 "float6_e3m2", "float4_e2m1", "int4", "uint4", "int2", "uint2", "bool"):
        count = 64
        nbytes = hurray.buffer_size_bytes(name, count)
        raw = rng.integers(0, 256, nbytes, dtype=np.uint8)
        if name == "float8_e8m0":
            raw[:2] = (0x00, 0xFF)       # the reserved codes
        t = hurray.Tensor(raw, name, (count,))
        ours = vmodel._as_numbers(t).astype(np.float64)      # the C library's decoder
        theirs = to_numpy(t).astype(np.float64)     # ml_dtypes' types
        if name == "float8_e8m0":   # 0x00 is reserved to hurray, 2**-127 to ml_dtypes
            assert np.isnan(ours[:2]).all() and theirs[0] == 2.0 ** -127
            theirs[0] = np.nan
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    assert ml_dtypes


def test_large_sparse_tensors_are_sampled_without_expanding_them(tmp_path, monkeypatch):
    # values and positions read at most MAX_SPARSE at a time, spread over the tensor:
    # nothing of the size of the non-zeros is built (a CSR's row of every position was)
    sp = pytest.importorskip("scipy.sparse")
    monkeypatch.setattr(vmodel, "MAX_SPARSE", 100)
    rng = np.random.default_rng(3)
    m = sp.random(2000, 1500, density=0.05, format="csr", random_state=rng, dtype=np.float32)
    m.data[:] = np.arange(m.nnz, dtype=np.float32)
    t = {"csr": hurray.from_scipy(m), "csc": hurray.from_scipy(m.tocsc()),
         "coo": hurray.from_scipy(m.tocoo())}
    hurray.save(tmp_path / "sp.hrry", t)
    model = vmodel.FileModel(str(tmp_path / "sp.hrry"))
    try:
        import tracemalloc
        for name in t:
            tracemalloc.start()
            try:
                st = vmodel.tensor_stats(model, name)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert peak < 1 << 20, (name, peak)   # the non-zeros as float64: 1.2 MB
            assert st["sampled"] and 0 < st["values"]["count"] <= 100, name
            assert st["values"]["max"] > m.nnz * 0.9, name        # spread to the end
            cells = st["pattern"]["grid"]
            assert 0 < sum(map(sum, cells)) <= 100, name
            # the sampled positions are where the matrix has them
            rows_with = {i for i, row in enumerate(cells) if sum(row)}
            assert max(rows_with) >= 60 and min(rows_with) <= 3, name
    finally:
        model.close()


def test_csf_pattern_over_its_first_two_levels():
    # (d0, d1, d2) = (1, 0, 0), (0, 1, 4), (2, 3, 4), stored with mode_order (2, 0, 1):
    # level 0 holds dim 2, level 1 dim 0, the leaves dim 1
    t = samples.T([samples.f32([10.0, 20.0, 30.0]), samples.u64([0, 2]), samples.u64([0, 4]),
                   samples.u64([0, 1, 3]), samples.u64([1, 0, 2]), samples.u64([0, 1, 2, 3]),
                   samples.u64([0, 1, 3])], "float32", (3, 4, 5),
                  layout=hurray.CsfLayout(3, [2, 0, 1]))
    g = vmodel.sparsity_grid(np, t, "csf", [3, 4, 5])
    assert (g["rows"], g["cols"], g["axes"]) == (5, 3, [2, 0])
    assert g["grid"][0][1] == 1 and g["grid"][4][0] == 1 and g["grid"][4][2] == 1
    assert sum(map(sum, g["grid"])) == 3
    # a fibre with two leaves weighs two
    t2 = samples.T([samples.f32([1.0, 2.0]), samples.u64([0, 1]), samples.u64([1]),
                    samples.u64([0, 1]), samples.u64([1]), samples.u64([0, 2]),
                    samples.u64([0, 1])], "float32", (2, 2, 2),
                   layout=hurray.CsfLayout(2, [0, 1, 2]))
    assert vmodel.sparsity_grid(np, t2, "csf", [2, 2, 2])["grid"][1][1] == 2


def test_csf_pattern_in_the_page(server):
    st = get(server, "/api/tensor", name="csf")["stats"]
    assert "pattern_note" not in st and sum(map(sum, st["pattern"]["grid"])) == 2
