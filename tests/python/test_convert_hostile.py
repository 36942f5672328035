"""Hostile inputs to `hurray convert` (docs/reference/cli.md, "Hostile inputs"): each file
is made by the format's own library (safetensors.numpy.save, gguf.GGUFWriter,
np.save / np.savez) and then corrupted byte by byte. Every one must end in the
one-line `hurray convert: PATH: ...` message, exit status 2, no traceback, in
well under a second and without a large allocation; the safetensors refusals
must agree with safetensors' own reader (safe_open) on the same file. All cases
run in one subprocess with an address-space limit, so a crash, a MemoryError or
a hang is a failure (the case that was running is named)."""

import io
import json
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import zipfile

import pytest

np = pytest.importorskip("numpy")

CASES = {}  # name -> (builder(dir) -> path, expected words in the message)
REFUSED = {}  # name -> extra arguments: cases refused (exit 1) rather than errors (exit 2)


def case(name, *words, refused_with=None):
    def register(fn):
        CASES[name] = (fn, words)
        if refused_with is not None:
            REFUSED[name] = refused_with
        return fn
    return register


# ---- safetensors ------------------------------------------------------------------

def _st_parts():
    from safetensors.numpy import save
    raw = save({"a": np.arange(4, dtype=np.float32), "b": np.arange(2, dtype=np.int64)})
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def _st_file(d, name, header, data=None, text=None):
    """The library's file with its header replaced by `header` (a dict, dumped)
    or by the raw `text`; the data section as the library wrote it, or `data`."""
    hdr, lib_data = _st_parts()
    body = text if text is not None else json.dumps(header).encode()
    body += b" " * (-len(body) % 8)
    p = d / f"{name}.safetensors"
    p.write_bytes(struct.pack("<Q", len(body)) + body + (lib_data if data is None else data))
    return p


def _st_edit(edit):
    def build(d, name):
        hdr, _ = _st_parts()
        edit(hdr)
        return _st_file(d, name, hdr)
    return build


ST_CASES = {
    # name: (builder, words the message must hold)
    "st-offsets-as-strings": (_st_edit(lambda h: h["a"].update(data_offsets=["16", "32"])),
                              ("'a'", "data_offsets")),
    "st-offsets-as-floats": (_st_edit(lambda h: h["a"].update(data_offsets=[16.0, 32])),
                             ("'a'", "data_offsets")),
    "st-shape-bool": (_st_edit(lambda h: h["b"].update(shape=[True, 2])), ("'b'", "shape")),
    "st-shape-negative": (_st_edit(lambda h: h["b"].update(shape=[-2])), ("'b'", "shape")),
    "st-overlap": (_st_edit(lambda h: h["a"].update(data_offsets=[8, 24])),
                   ("data_offsets", "overlaps")),
    "st-hole": (_st_edit(lambda h: h["b"].update(data_offsets=[4, 20])),
                ("'b'", "data_offsets")),
    "st-outside": (_st_edit(lambda h: (h["a"].update(data_offsets=[16, 48]),
                                       h["a"].update(shape=[8]))), ("past the data",)),
    "st-begin-after-end": (_st_edit(lambda h: h["a"].update(data_offsets=[32, 16])),
                           ("'a'", "before the begin")),
    "st-size-not-dtype-times-shape": (_st_edit(lambda h: h["a"].update(shape=[3])),
                                      ("'a'", "shape [3] of F32")),
    "st-unknown-dtype": (_st_edit(lambda h: h["a"].update(dtype="F33")), ("'a'", "dtype")),
    "st-shape-overflows": (_st_edit(lambda h: h["a"].update(shape=[1 << 40] * 3)),
                           ("'a'", "overflows")),
    "st-offset-2-64": (_st_edit(lambda h: h["a"].update(data_offsets=[16, 1 << 64])),
                       ("'a'", "data_offsets")),
    "st-missing-field": (_st_edit(lambda h: h["a"].pop("shape")), ("'a'", "shape")),
    "st-entry-not-object": (_st_edit(lambda h: h.update(a=[1, 2])), ("'a'",)),
    "st-metadata-not-strings": (_st_edit(lambda h: h.update(__metadata__={"k": 1})),
                                ("__metadata__",)),
}


def _st_raw(text=None, data=None, prefix=None):
    """A builder of the library's file with the header text `text` (bytes, or a
    function of the library's header text), the data `data` (a function of the
    library's data) and the first 8 bytes `prefix`."""
    def build(d, name):
        hdr, lib_data = _st_parts()
        t = text(json.dumps(hdr)) if callable(text) else text
        p = _st_file(d, name, None, data=data(lib_data) if data else None,
                     text=t if t is not None else json.dumps(hdr).encode())
        if prefix is not None:
            b = bytearray(p.read_bytes())
            b[:8] = prefix
            p.write_bytes(bytes(b))
        return p
    return build


ST_CASES.update({
    "st-json-nested-100000": (_st_raw(text=b'{"a":' + b"[" * 100000 + b"]" * 100000 + b"}"),
                              ("nests 100001 deep",)),
    "st-json-nested-128": (_st_raw(text=b'{"x":' + b"[" * 127 + b"]" * 127 + b"}"),
                           ("nests 128 deep",)),
    "st-duplicate-name": (_st_raw(text=(
        '{"b":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},'
        '"a":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},'
        '"a":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}}').encode()),
        ("'a'", "twice")),
    "st-trailing-bytes": (_st_raw(data=lambda d: d + b"\0" * 8), ("after the last",)),
    "st-header-past-the-file": (_st_raw(prefix=struct.pack("<Q", 1 << 20)), ("runs past",)),
    "st-header-over-100-MB": (_st_raw(prefix=struct.pack("<Q", 200_000_000)), ("100,000,000",)),
    "st-header-2-62": (_st_raw(prefix=struct.pack("<Q", 1 << 62)), ("header length",)),
    "st-not-utf8": (_st_raw(text=b'{"\xff":{}}'), ("UTF-8",)),
    "st-not-an-object": (_st_raw(text=b"[1, 2, 3]"), ("not a JSON object",)),
    "st-nan": (_st_raw(text=lambda h: h[:-1].encode() + b',"__metadata__":{"k":NaN}}'),
               ("NaN",)),
    "st-lone-surrogate": (_st_raw(text=lambda h: h.replace('"a"', '"\\ud800"').encode()),
                          ("surrogate",)),
})
for _n, (_b, _w) in ST_CASES.items():
    case(_n, *_w)(_b)


# ---- GGUF -------------------------------------------------------------------------

def _gguf_base(d, name, tensors=(("a", np.arange(32, dtype=np.float32)),), kv=()):
    gguf = pytest.importorskip("gguf")
    p = d / f"{name}.gguf"
    w = gguf.GGUFWriter(str(p), "llama")
    w.add_string("general.name", "hostile")
    for k, v in kv:
        w.add_uint32(k, v)
    for n, a in tensors:
        w.add_tensor(n, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return p


def _gguf_insert_kv(raw_kv, pad_to=32):
    """The library's file with one more KV entry first (the counts patched);
    the entry is padded (its key lengthened) so the data stays aligned."""
    def build(d, name):
        b = bytearray(_gguf_base(d, name).read_bytes())
        entry = raw_kv
        b[16:24] = struct.pack("<Q", struct.unpack_from("<Q", b, 16)[0] + 1)
        if pad_to:
            extra = -len(entry) % pad_to
            key_len = struct.unpack_from("<Q", entry, 0)[0]
            entry = struct.pack("<Q", key_len + extra) + entry[8:8 + key_len] + \
                b"k" * extra + entry[8 + key_len:]
        b[24:24] = entry
        (d / f"{name}.gguf").write_bytes(bytes(b))
        return d / f"{name}.gguf"
    return build


def _key(k):
    return struct.pack("<Q", len(k)) + k


def _gguf_patch(edit):
    def build(d, name):
        p = _gguf_base(d, name, tensors=(("a", np.arange(32, dtype=np.float32)),
                                         ("b", np.arange(64, dtype=np.float32))))
        b = bytearray(p.read_bytes())
        edit(b)
        p.write_bytes(bytes(b))
        return p
    return build


def _find(b, needle, after=0):
    i = bytes(b).find(needle, after)
    assert i >= 0, needle
    return i


def _ti(b, name):
    """The byte where tensor info `name` (a 1-byte name) starts its n_dims."""
    return _find(b, struct.pack("<Q", 1) + name, 24) + 9


def _nested(depth):
    # ARRAY of ARRAY of ... (each: elem type ARRAY, count 1), innermost: UINT8[0]
    body = b""
    for _ in range(depth - 1):
        body += struct.pack("<IQ", 9, 1)
    body += struct.pack("<IQ", 0, 0)
    return _key(b"x.nested") + struct.pack("<I", 9) + body


GGUF_CASES = {
    "gguf-array-nested-5000": (_gguf_insert_kv(_nested(5000)), ("nested more than 8",)),
    "gguf-string-2-62": (_gguf_insert_kv(_key(b"x.s") + struct.pack("<IQ", 8, 1 << 62) + b"x",
                                         pad_to=0), ("4611686018427387904",)),
    "gguf-key-2-62": (_gguf_insert_kv(struct.pack("<Q", 1 << 62) + b"k", pad_to=0),
                      ("the key", "4611686018427387904")),
    "gguf-array-count-2-62": (_gguf_insert_kv(_key(b"x.a") + struct.pack("<IIQ", 9, 0, 1 << 62),
                                              pad_to=0), ("elements", "cannot fit")),
    "gguf-string-array-2-62": (_gguf_insert_kv(
        _key(b"x.a") + struct.pack("<IIQ", 9, 8, 1 << 62), pad_to=0), ("cannot fit",)),
    "gguf-unknown-value-type": (_gguf_insert_kv(_key(b"x.t") + struct.pack("<IB", 99, 0),
                                                pad_to=0), ("unknown value type 99",)),
    "gguf-duplicate-key": (_gguf_insert_kv(_key(b"general.name") + struct.pack("<IQ", 8, 1) +
                                           b"x", pad_to=0), ("'general.name'", "twice")),
    "gguf-key-not-utf8": (_gguf_insert_kv(_key(b"\xff\xfe") + struct.pack("<IB", 0, 1),
                                          pad_to=0), ("UTF-8",)),
    "gguf-kv-count-2-62": (_gguf_patch(lambda b: b.__setitem__(slice(16, 24),
                                                               struct.pack("<Q", 1 << 62))),
                           ("kv_count 4611686018427387904",)),
    "gguf-tensor-count-2-62": (_gguf_patch(lambda b: b.__setitem__(slice(8, 16),
                                                                   struct.pack("<Q", 1 << 62))),
                               ("tensor_count 4611686018427387904",)),
    "gguf-version-1": (_gguf_patch(lambda b: b.__setitem__(slice(4, 8), struct.pack("<I", 1))),
                       ("version 1",)),
    "gguf-big-endian": (_gguf_patch(lambda b: b.__setitem__(slice(4, 8), struct.pack(">I", 3))),
                        ("big-endian",)),
    "gguf-duplicate-tensor": (_gguf_patch(lambda b: b.__setitem__(
        slice(_ti(b, b"b") - 1, _ti(b, b"b")), b"a")), ("'a'", "twice")),
    "gguf-tensor-type-999": (_gguf_patch(lambda b: b.__setitem__(
        slice(_ti(b, b"a") + 12, _ti(b, b"a") + 16), struct.pack("<I", 999))),
        ("'a'", "unknown tensor type 999")),
    "gguf-n-dims-2-31": (_gguf_patch(lambda b: b.__setitem__(
        slice(_ti(b, b"a"), _ti(b, b"a") + 4), struct.pack("<I", 1 << 31))),
        ("'a'", "2147483648 dimensions")),
    "gguf-dims-overflow": (_gguf_patch(lambda b: b.__setitem__(
        slice(_ti(b, b"a") + 4, _ti(b, b"a") + 12), struct.pack("<Q", 1 << 63))),
        ("'a'", "overflow")),
    "gguf-data-past-the-end": (_gguf_patch(lambda b: b.__setitem__(
        slice(_ti(b, b"b") + 16, _ti(b, b"b") + 24), struct.pack("<Q", 1 << 40))),
        ("'b'", "past the end")),
    "gguf-truncated": (_gguf_patch(lambda b: b.__delitem__(slice(80, None))),
                       ("needs 12 bytes",)),
    "gguf-alignment-0": (lambda d, n: _gguf_base(d, n, kv=(("general.alignment", 0),)),
                         ("general.alignment 0",)),
}
for _n, (_b, _w) in GGUF_CASES.items():
    case(_n, *_w)(_b)


# ---- .npy / .npz ------------------------------------------------------------------

def _npy(arr, old=None, new=None, version=None):
    """np.save's bytes of `arr`, the header text `old` replaced by `new` (the
    padding adjusted, so the header keeps its length)."""
    f = io.BytesIO()
    if version is None:
        np.save(f, arr)
    else:
        np.lib.format.write_array(f, arr, version=version)
    raw = f.getvalue()
    if old is None:
        return raw
    start = 10 if raw[6] == 1 else 12
    (hlen,) = struct.unpack_from("<H" if raw[6] == 1 else "<I", raw, 8)
    text = raw[start:start + hlen].decode("latin1")
    assert old in text, text
    text = text.replace(old, new).rstrip("\n ")
    n = max(hlen, -(-(start + len(text) + 1) // 64) * 64 - start)  # padded as NumPy pads
    text = text.ljust(n - 1) + "\n"
    size = struct.pack("<H" if raw[6] == 1 else "<I", n)
    return raw[:8] + size + text.encode("latin1") + raw[start + hlen:]


def _npz(members, compression=zipfile.ZIP_STORED):
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w", compression=compression) as z:
        for n, raw in members:
            z.writestr(n, raw)
    return f.getvalue()


def _file(ext, data):
    def build(d, name):
        p = d / f"{name}.{ext}"
        p.write_bytes(data() if callable(data) else data)
        return p
    return build


def _npz_flag_encrypted():
    raw = bytearray(_npz([("a.npy", _npy(np.arange(2.0)))]))
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        i = _find(raw, sig)
        at = i + (6 if sig == b"PK\x03\x04" else 8)
        raw[at] |= 1
    return bytes(raw)


def _npz_overlapping():
    """Two central-directory entries for one member's data (a zip bomb's trick)."""
    raw = bytearray(_npz([("a.npy", _npy(np.arange(2.0)))]))
    c = _find(raw, b"PK\x01\x02")
    e = _find(raw, b"PK\x05\x06")
    entry = bytearray(raw[c:e])
    j = _find(entry, b"a.npy")
    entry[j:j + 5] = b"b.npy"
    eocd = bytearray(raw[e:])
    n = struct.unpack_from("<H", eocd, 8)[0] + 1
    struct.pack_into("<HHI", eocd, 8, n, n, struct.unpack_from("<I", eocd, 12)[0] + len(entry))
    return bytes(raw[:e] + entry + eocd)


def _npz_deflate_ratio():
    raw = bytearray(_npz([("a.npy", _npy(np.zeros(4096)))], zipfile.ZIP_DEFLATED))
    c = _find(raw, b"PK\x01\x02")
    struct.pack_into("<I", raw, c + 24, 1 << 32 - 1)  # the declared uncompressed size
    return bytes(raw)


def _npz_bad_crc():
    raw = bytearray(_npz([("a.npy", _npy(np.arange(64.0)))]))
    raw[_find(raw, b"PK\x01\x02") - 8] ^= 0xFF  # a data byte: the CRC no longer matches
    return bytes(raw)


NP_CASES = {
    "npz-64-GiB-over-16-bytes": (_file("npz", lambda: _npz([("a.npy", _npy(
        np.arange(2.0), "(2,)", "(8589934592,)"))])), ("'a.npy'", "68,719,476,736 bytes")),
    "npy-64-GiB-over-16-bytes": (_file("npy", lambda: _npy(np.arange(2.0), "(2,)",
                                                           "(8589934592,)")),
                                 ("68,719,476,736 bytes",)),
    "npy-negative-dimension": (_file("npy", lambda: _npy(np.arange(2.0), "(2,)", "(-2,)")),
                               ("negative",)),
    # NumPy's own header check lets True through as a dimension (bool is an int)
    "npy-shape-holding-true": (_file("npy", lambda: _npy(np.arange(2.0), "(2,)", "(True,)")),
                               ("not a tuple of integers",)),
    "npz-shape-holding-false": (_file("npz", lambda: _npz([("a.npy", _npy(
        np.arange(6.0).reshape(2, 3), "(2, 3)", "(2, False)"))])), ("not a tuple of integers",)),
    "npy-object-array": (_file("npy", lambda: _npy(np.arange(2.0), "'<f8'", "'|O'")),
                         ("objects",)),
    "npy-header-20000": (_file("npy", lambda: b"\x93NUMPY\x02\x00" + struct.pack("<I", 20000) +
                               b"{" + b" " * 19998 + b"\n"), ("20000 bytes",)),
    "npy-header-nested": (_file("npy", lambda: _npy(
        np.arange(2.0), "'<f8'", "[('x', " * 40 + "'<f8'" + ")]" * 40, version=(2, 0))),
        ("nests",)),
    "npy-header-past-the-end": (_file("npy", lambda: _npy(np.arange(2.0))[:40]),
                                ("runs past",)),
    "npy-version-9": (_file("npy", lambda: b"\x93NUMPY\x09\x00" + _npy(np.arange(2.0))[8:]),
                      ("version 9.0",)),
    "npz-64-GiB-in-a-deflated-member": (_file("npz", lambda: _npz([("a.npy", _npy(
        np.arange(2.0), "(2,)", "(8589934592,)"))], zipfile.ZIP_DEFLATED)),
        ("68,719,476,736 bytes",)),
    "npz-encrypted": (_file("npz", _npz_flag_encrypted), ("encrypted",)),
    "npz-not-npy-member": (_file("npz", lambda: _npz([("a.npy", _npy(np.arange(2.0))),
                                                      ("notes.txt", b"hello")])),
                           ("'notes.txt'",)),
    "npz-bzip2": (_file("npz", lambda: _npz([("a.npy", _npy(np.arange(2.0)))],
                                            zipfile.ZIP_BZIP2)), ("compression method 12",)),
    "npz-overlapping-members": (_file("npz", _npz_overlapping), ("overlapping",)),
    "npz-deflate-ratio": (_file("npz", _npz_deflate_ratio), ("deflate",)),
    "npz-bad-crc": (_file("npz", _npz_bad_crc), ("'a.npy'",)),
    "npz-truncated": (_file("npz", lambda: _npz([("a.npy", _npy(np.arange(64.0)))])[:300]),
                      ("zip",)),
}
for _n, (_b, _w) in NP_CASES.items():
    case(_n, *_w)(_b)


def _gguf_q8_1(d, name):
    gguf = pytest.importorskip("gguf")
    p = d / f"{name}.gguf"
    w = gguf.GGUFWriter(str(p), "llama")
    w.add_tensor("q", np.zeros(40, np.uint8), raw_dtype=gguf.GGMLQuantizationType.Q8_1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return p


# a type gguf has no dequantizer for (a NotImplementedError inside gguf.quants)
case("gguf-q8_1-dequantize", "tensor 'q'", "cannot dequantize Q8_1",
     refused_with=["--dequantize", "float32"])(_gguf_q8_1)


# ---- safetensors model folders ----------------------------------------------------

def _index(weight_map):
    def build(d, name):
        m = d / name
        m.mkdir()
        _st_file(m, "model", _st_parts()[0])
        (m / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
        return m
    return build


case("index-path-outside", "weight_map['a']")(_index({"a": "../x.safetensors"}))
case("index-weight-map-list", "weight_map")(_index(["model.safetensors"]))


# ---- running them ------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import io, json, os, resource, sys, time, traceback
    sys.path[:0] = {path!r}
    if not os.environ.get("HURRAY_EXPECT_ASAN"):  # ASan's shadow needs the address space
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # no 4 GiB detours
    from hurray._cli import main
    safetensors = None
    try:
        from safetensors import safe_open
    except ImportError:
        safe_open = None
    out = {{}}
    for name, src, dst, extra in json.load(open({cases!r})):
        open({progress!r}, "w").write(name)
        err = io.StringIO()
        old, sys.stderr = sys.stderr, err
        t0 = time.monotonic()
        try:
            rc = main(["convert", src, dst, "-q", *extra])
        except BaseException:
            rc = "uncaught"
            err.write(traceback.format_exc())
        finally:
            sys.stderr = old
        r = {{"rc": rc, "err": err.getvalue(), "s": time.monotonic() - t0,
              "left": os.path.exists(dst)}}
        if src.endswith(".safetensors") and safe_open is not None:
            try:
                with safe_open(src, "np") as f:
                    list(f.keys())
                r["safe_open"] = "accepted"
            except Exception as e:
                r["safe_open"] = type(e).__name__ + ": " + str(e)
        out[name] = r
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    pytest.importorskip("safetensors")
    pytest.importorskip("gguf")
    d = tmp_path_factory.mktemp("hostile")
    todo = []
    for name, (build, _) in CASES.items():
        src = build(d, name)
        todo.append((name, str(src), str(d / f"{name}.out.hrry"), REFUSED.get(name, [])))
    (d / "cases.json").write_text(json.dumps(todo))
    progress = d / "progress"
    code = CHILD.format(path=sys.path, cases=str(d / "cases.json"), progress=str(progress))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    last = progress.read_text() if progress.exists() else "(none)"
    assert p.returncode == 0, f"the child died (status {p.returncode}) in {last}: {p.stderr}"
    return json.loads(p.stdout.strip().splitlines()[-1]), todo


@pytest.mark.slow  # the outcomes fixture: a child interpreter
@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line(outcomes, name):
    results, todo = outcomes
    r = results[name]
    src = next(s for n, s, _, _ in todo if n == name)
    lines = r["err"].strip().splitlines()
    assert r["rc"] == (1 if name in REFUSED else 2), r["err"]
    assert len(lines) == 1 and "Traceback" not in r["err"], r["err"]
    start = "hurray convert: refused: " if name in REFUSED else f"hurray convert: {src}"
    assert lines[0].startswith(start), r["err"]
    for w in CASES[name][1]:
        assert w in lines[0], (w, lines[0])
    assert not r["left"]
    assert r["s"] < 1.5, f"{name} took {r['s']:.2f} s"


@pytest.mark.slow  # the outcomes fixture: a child interpreter
@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("st-")])
def test_safetensors_refuses_what_we_refuse(outcomes, name):
    # the refusals agree with safetensors' own reader, except duplicate names,
    # which safetensors takes silently (the last entry wins) and we refuse
    r = outcomes[0][name]
    if name == "st-duplicate-name":
        assert r["safe_open"] == "accepted"
    else:
        assert r["safe_open"] != "accepted", r


def test_what_safetensors_accepts_at_the_limits_converts(tmp_path):
    # the other side of the agreement: nesting 127 deep (in a field safetensors
    # ignores), empty tensors sharing an offset, leading spaces, a null __metadata__
    pytest.importorskip("safetensors")
    from safetensors import safe_open
    from hurray._cli import main
    hdr, data = _st_parts()
    variants = {
        "deep127": json.dumps({**hdr, "a": {**hdr["a"], "x": json.loads("[" * 125 + "]" * 125)}}),
        "empty": json.dumps({**hdr, "e1": {"dtype": "F32", "shape": [0, 4], "data_offsets":
                             [0, 0]}, "e2": {"dtype": "I8", "shape": [0], "data_offsets":
                             [0, 0]}}),
        "spaces": "  " + json.dumps(hdr),
        "nullmeta": json.dumps({**hdr, "__metadata__": None}),
    }
    for name, text in variants.items():
        p = _st_file(tmp_path, name, None, text=text.encode())
        with safe_open(str(p), "np") as f:
            want = {k: f.get_tensor(k) for k in f.keys()}
        assert main(["convert", str(p), str(tmp_path / f"{name}.hrry"), "-q"]) == 0, name
        import hurray
        got = hurray.load(tmp_path / f"{name}.hrry")
        assert sorted(got) == sorted(want)
        for k in want:
            assert np.array_equal(np.asarray(got[k]), want[k])


def test_a_large_gguf_kv_array_is_read_in_linear_time(tmp_path):
    # gguf.GGUFReader takes about 20 us and 0.7 KB per array element (2M: 40 s
    # and 1.4 GB); our reader reads them as one NumPy view
    pytest.importorskip("gguf")
    n = 1 << 21
    kv = _key(b"x.scores") + struct.pack("<IIQ", 9, 6, n) + \
        np.arange(n, dtype="<f4").tobytes()
    p = _gguf_insert_kv(kv)(tmp_path, "big")
    import time

    from hurray._cli._bounds import read_gguf
    t0 = time.monotonic()
    h = read_gguf(str(p))
    assert time.monotonic() - t0 < 1.0
    assert len(h.kv["x.scores"]) == n and h.kv["x.scores"][-1] == float(n - 1)
    assert h.types["x.scores"] == "ARRAY[FLOAT32]"
    assert [t.name for t in h.tensors] == ["a"]


def _reference_kv(path):
    """The KV entries and types as gguf.GGUFReader reads them (the reference our
    reader must agree with)."""
    import gguf
    r = gguf.GGUFReader(str(path))
    kv, types, problems = {}, {}, []
    V = gguf.GGUFValueType

    def scalar(t, part):
        if t == V.STRING:
            b = bytes(part)
            try:
                return b.decode()
            except UnicodeDecodeError:
                return b
        v = part.tolist()[0]
        if t == V.BOOL:
            return bool(v)
        if t in (V.FLOAT32, V.FLOAT64):
            return float(v)
        return str(int(v)) if int(v) >= 1 << 63 else int(v)

    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        t = V(int(f.parts[2][0]))
        if t == V.ARRAY:
            sub = V(int(f.parts[3][0]))
            if sub == V.ARRAY:
                problems.append(key)
                continue
            vals = [scalar(sub, f.parts[i]) for i in f.data] if len(f.types) > 1 else []
            if any(isinstance(v, bytes) for v in vals):
                vals = [v if isinstance(v, bytes) else v.encode() for v in vals]
            kv[key], types[key] = vals, f"ARRAY[{sub.name}]"
        else:
            kv[key], types[key] = scalar(t, f.parts[-1]), t.name
    tensors = [(t.name, t.tensor_type.name, tuple(int(n) for n in t.shape), int(t.data_offset),
                int(t.n_bytes)) for t in r.tensors]
    return kv, types, problems, tensors, int(r.fields["GGUF.version"].parts[0][0])


def test_our_gguf_reader_agrees_with_gguf_reader(tmp_path):
    gguf = pytest.importorskip("gguf")
    from hurray._cli._bounds import read_gguf
    V = gguf.GGUFValueType
    p = tmp_path / "every.gguf"
    w = gguf.GGUFWriter(str(p), "llama")
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4_000_000_000)
    w.add_int32("t.i32", -2_000_000_000)
    w.add_float32("t.f32", 0.1)
    w.add_uint64("t.u64", (1 << 64) - 1)
    w.add_int64("t.i64", -(1 << 62))
    w.add_float64("t.f64", 1e300)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "héllo")
    w.add_key_value("t.bytes", b"\xff\xfe", V.STRING)
    w.add_array("t.strs", ["a", "bc", ""])
    w.add_key_value("t.mixed", ["ok", b"\xff"], V.ARRAY, V.STRING)
    for sub, vals in ((V.UINT8, [1, 255]), (V.INT16, [-5, 5]), (V.FLOAT64, [0.5, -2.0]),
                      (V.BOOL, [True, False]), (V.UINT64, [1, (1 << 64) - 1]),
                      (V.FLOAT32, [1.5])):
        w.add_key_value(f"t.arr.{sub.name}", vals, V.ARRAY, sub)
    w.add_key_value("t.nested", [[1, 2], [3]], V.ARRAY, V.ARRAY)
    w.add_tensor("dense", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.add_tensor("q8", np.zeros(34 * 2, np.uint8), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    kv, types, problems, tensors, version = _reference_kv(p)
    h = read_gguf(str(p))
    assert h.kv == kv and list(h.kv) == list(kv)
    assert h.types == types
    assert [q.split("'")[1] for q in h.problems] == problems == ["t.nested"]
    assert [(t.name, t.qtype, t.dims, t.data_offset, t.n_bytes) for t in h.tensors] == tensors
    assert h.version == version


def test_an_empty_block_tensor_dequantizes_to_an_empty_one(tmp_path):
    # found by fuzz_gguf (fuzz/corpus/python-gguf/regression-empty-block-tensor-dequantized):
    # a Q4_K tensor of no elements reached gguf's dequantizer as a row of no bytes
    gguf = pytest.importorskip("gguf")
    import hurray
    from hurray._cli import main
    p = tmp_path / "empty.gguf"
    w = gguf.GGUFWriter(str(p), "llama")
    # one Q4_K block (144 bytes, 256 elements; gguf dequantizes Q4_K but cannot quantize it)
    w.add_tensor("k", np.zeros((1, 144), np.uint8), raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    b = bytearray(p.read_bytes())
    at = _ti(b, b"k")  # n_dims 2, then the dimensions 256 and 1: make the second 0
    assert struct.unpack_from("<IQQ", b, at) == (2, 256, 1)
    struct.pack_into("<Q", b, at + 12, 0)
    p.write_bytes(bytes(b))
    assert main(["convert", str(p), str(tmp_path / "e.hrry"), "--dequantize", "float32",
                 "-q"]) == 0
    t = hurray.load(tmp_path / "e.hrry")["k"]
    assert t.shape == (0, 256) and t.dtype.name == "float32"
