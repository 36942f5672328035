#!/usr/bin/env python3
"""hurray beside safetensors, NumPy, PyTorch and raw I/O: one command, same tensors,
same run.

    python bench/compare.py                 # full run, writes docs/reference/benchmarks.md
    python bench/compare.py --quick         # small sizes, a smoke run (no file written)
    python bench/compare.py --repeat 7 --out -      # print only

(scripts/bench.sh --compare builds the extension in Release and runs this.)

Workloads, each timed `--repeat` times (best and median kept):

1. model: a ~1 GiB model-shaped file of ~300 tensors (33 transformer blocks of
   q/k/v/o, gate/up/down and two norms, plus embedding, final norm and head), once in
   float32, once in bfloat16 and once in int4 with per-block float16 scales (block
   32). Save, then load touching every byte, for hurray (mapped and read),
   safetensors (NumPy and PyTorch APIs), numpy.save / numpy.load(mmap_mode="r")
   (one .npy per tensor), torch.save / torch.load(mmap=True), and the raw I/O
   baselines (one write, one read, mmap-and-touch, memcpy of the same byte count).
   Formats without int4 store it as packed uint8 plus a float16 scales tensor: the
   same bytes.
2. small: 10,000 tensors of 1 KiB: save, load + touch, and open + get one tensor.
3. lazy: open the 1 GiB float32 model file and read one tensor (the middle
   block's up projection, 4 MiB), touching it.
4. interop (issue 5): numpy.asarray(hurray.from_numpy(a)) against numpy.from_dlpack(a),
   torch.from_dlpack(t) against torch.from_dlpack(a), from 1 KiB to 256 MiB.
5. handoff: in-process hand-off latency of a 1 KiB and a 64 MiB tensor
   (hurray native capsule and DLPack, torch.from_dlpack, numpy.from_dlpack,
   safetensors serialize + parse in memory, pickle).
6. stream: 256 MiB (64 tensors of 4 MiB) through a pipe, writer thread to reader:
   hurray.StreamWriter -> hurray.StreamReader, safetensors bytes, raw write/read.

Files go to a temporary folder (`--dir`, default the system's): the page cache,
warm. These are CPU and memory costs, not the disk's. Every figure is relative to
hurray's in the same run; the targets of issue 7 are checked at the end. Parts that
need hurray's part 3 (save/load/open, streams, the native protocol) say "not
available in this build" when the build lacks them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
NA = "not available in this build"

try:
    import hurray
except ImportError:  # pragma: no cover
    sys.exit("compare.py: the hurray package is not importable (run scripts/bench.sh --compare)")


def _opt(name):
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        return None


torch = _opt("torch")
st_numpy = _opt("safetensors.numpy")
st_torch = _opt("safetensors.torch") if torch is not None else None
safetensors = _opt("safetensors")
ml_dtypes = _opt("ml_dtypes")


def has(*names):
    return all(hasattr(hurray, n) for n in names)


HAVE_SAVE = has("save", "load")


def _has_durable():
    import inspect
    try:
        return HAVE_SAVE and "durable" in str(inspect.signature(hurray.save))
    except (TypeError, ValueError):
        return False


HAVE_DURABLE = _has_durable()
HAVE_OPEN = has("open")
HAVE_STREAM = has("StreamWriter", "StreamReader")
HAVE_NATIVE = has("from_hurray") and hasattr(hurray.Tensor, "__hurray__")


# ---- timing ------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    times: list = field(default_factory=list)
    nbytes: int | None = None
    note: str = ""

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None

    @property
    def best(self):
        return min(self.times) if self.times else None

    def gib_s(self):
        if not self.nbytes or not self.times:
            return None
        return self.nbytes / self.median / GiB


def timed(fn, repeat, setup=None, number=1):
    """`repeat` timings of `number` calls of fn (seconds per call)."""
    out = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        out.append((time.perf_counter() - t0) / number)
    return out


def autonumber(fn, budget=0.05):
    """Calls per timing so that one timing lasts about `budget` seconds. The first
    calls (one-time initialization in the consumer, cold caches) are not timed, and
    the cost of one call is taken from a batch of at least 5 ms, as timeit's
    autorange does: a single cold call would set a small count and a noisy row."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= 0.005 or n >= 100000:
            break
        n *= 10
    one = max(elapsed / n, 1e-8)
    return max(1, min(100000, int(budget / one)))


class Table:
    def __init__(self, title, reference="hurray", note=""):
        self.title, self.reference, self.note = title, reference, note
        self.rows: list[Row] = []

    def add(self, case, fn=None, *, repeat, nbytes=None, setup=None, micro=False,
            available=True, note=""):
        row = Row(case, nbytes=nbytes, note=note)
        self.rows.append(row)
        if not available:
            # hurray's own rows lack part of the package; a peer's, its package
            row.note = NA if case.startswith("hurray") else "its package is not installed"
            print(f"  {case:<44} {row.note}", flush=True)
            return row
        try:
            number = autonumber(fn) if micro else 1
            row.times = timed(fn, repeat, setup=setup, number=number)
        except Exception as e:  # a competitor's failure is a result, not a crash
            row.note = f"failed: {type(e).__name__}: {e}"[:160]
            print(f"  {case:<44} {row.note}", flush=True)
            return row
        gib = row.gib_s()
        print(f"  {case:<44} median {fmt_time(row.median):>9}  best {fmt_time(row.best):>9}"
              + (f"  {gib:6.2f} GiB/s" if gib else ""), flush=True)
        return row

    def add_interleaved(self, cases, *, repeat, available=True, micro=True):
        """Rows measured in turns: one timing of each case, then the next round, so
        that the cases compared share whatever load the machine has at each moment
        (measuring one row whole and then the next lets a busy spell land on one of
        them only). cases: [(name, fn) or (name, fn, options), ...], options a dict
        with setup, nbytes and available (per case). micro: calls per timing sized
        by autonumber; otherwise one call per timing."""
        entries = []
        for c in cases:
            name, fn, opt = c[0], c[1], (c[2] if len(c) > 2 else {})
            row = Row(name, nbytes=opt.get("nbytes"))
            self.rows.append(row)
            if not (available and opt.get("available", True)):
                row.note = NA if name.startswith("hurray") else "its package is not installed"
                print(f"  {name:<44} {row.note}", flush=True)
                continue
            entries.append([row, fn, opt.get("setup"), 1])
        for e in entries:
            try:
                e[3] = autonumber(e[1]) if micro else 1
            except Exception as ex:  # a competitor's failure is a result, not a crash
                e[0].note = f"failed: {type(ex).__name__}: {ex}"[:160]
        entries = [e for e in entries if not e[0].note]
        for _ in range(repeat):
            for e in entries:
                if e[0].note:
                    continue
                try:
                    e[0].times += timed(e[1], 1, setup=e[2], number=e[3])
                except Exception as ex:
                    e[0].times = []
                    e[0].note = f"failed: {type(ex).__name__}: {ex}"[:160]
        for row in self.rows[-len(cases):]:
            if row.times:
                gib = row.gib_s()
                print(f"  {row.case:<44} median {fmt_time(row.median):>9}  "
                      f"best {fmt_time(row.best):>9}" + (f"  {gib:6.2f} GiB/s" if gib else ""),
                      flush=True)
            elif row.note.startswith("failed"):
                print(f"  {row.case:<44} {row.note}", flush=True)
        return self.rows[-len(cases):]

    def to_json(self):
        return {"title": self.title, "reference": self.reference, "note": self.note,
                "rows": [{"case": r.case, "times": r.times, "nbytes": r.nbytes, "note": r.note}
                         for r in self.rows]}

    @classmethod
    def from_json(cls, d):
        tab = cls(d["title"], d["reference"], d["note"])
        tab.rows = [Row(r["case"], r["times"], r["nbytes"], r["note"]) for r in d["rows"]]
        return tab

    def ref_row(self):
        for r in self.rows:
            if r.case.startswith(self.reference) and r.times:
                return r
        return None

    def markdown(self):
        ref = self.ref_row()
        out = [f"### {self.title}", ""]
        if self.note:
            out += [self.note, ""]
        out += ["| case | median | best | GiB/s | time relative to hurray |",
                "|---|---:|---:|---:|---:|"]
        for r in self.rows:
            if not r.times:
                out.append(f"| {r.case} | {r.note} | | | |")
                continue
            rel = f"{r.median / ref.median:.2f}" if ref is not None else "–"
            gib = f"{r.gib_s():.2f}" if r.gib_s() else ""
            case = r.case + (f" ({r.note})" if r.note else "")
            out.append(f"| {case} | {fmt_time(r.median)} | {fmt_time(r.best)} | {gib} | {rel} |")
        out.append("")
        return "\n".join(out)


def fmt_time(s):
    if s is None:
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


# ---- data --------------------------------------------------------------------------


def aligned_empty(nbytes, dtype=np.uint8):
    with hurray.aligned_allocator():
        return np.empty(nbytes // np.dtype(dtype).itemsize, dtype)


def touch(arr):
    """Reads every byte (an xor reduction); returns a number so nothing is elided."""
    a = np.asarray(arr).reshape(-1)
    if a.dtype.itemsize not in (1, 2, 4, 8):
        a = a.view(np.uint8)
    a = a.view(np.uint8)
    if a.size % 8 == 0 and a.ctypes.data % 8 == 0:
        return int(np.bitwise_xor.reduce(a.view(np.uint64))) if a.size else 0
    return int(a.sum(dtype=np.uint64))


def touch_hurray(t):
    """Every byte of every buffer of a hurray tensor (quantized ones too)."""
    return sum(touch(np.asarray(t.buffer(i))) for i in range(t.buffer_count))


def touch_torch(t):
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return touch(t.numpy())


def model_shapes(budget, itemsize_num, itemsize_den=1, layers=33, vocab=32000):
    """~300 (name, shape) pairs of a decoder-only model whose elements take
    `budget` bytes at itemsize_num/itemsize_den bytes per element."""
    def total(d):
        ffn = 4 * d
        per = 4 * d * d + 3 * d * ffn + 2 * d
        return layers * per + 2 * vocab * d + d

    d = 64
    while total(d + 64) * itemsize_num // itemsize_den <= budget:
        d += 64
    ffn = 4 * d
    shapes = [("model.embed_tokens.weight", (vocab, d))]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [(p + "self_attn.q_proj.weight", (d, d)), (p + "self_attn.k_proj.weight", (d, d)),
                   (p + "self_attn.v_proj.weight", (d, d)), (p + "self_attn.o_proj.weight", (d, d)),
                   (p + "mlp.gate_proj.weight", (ffn, d)), (p + "mlp.up_proj.weight", (ffn, d)),
                   (p + "mlp.down_proj.weight", (d, ffn)),
                   (p + "input_layernorm.weight", (d,)),
                   (p + "post_attention_layernorm.weight", (d,))]
    shapes += [("model.norm.weight", (d,)), ("lm_head.weight", (vocab, d))]
    return shapes


BLOCK = 32


class Model:
    """One model's tensors in every form the competitors take (sharing memory)."""

    def __init__(self, kind, budget):
        self.kind = kind
        if kind == "float32":
            shapes = model_shapes(budget, 4)
        elif kind == "bfloat16":
            shapes = model_shapes(budget, 2)
        else:  # int4 + float16 scales per block of 32: 0.5 + 2/32 bytes per element
            shapes = model_shapes(budget, 9, 16)
        self.shapes = shapes
        self.np = {}       # name -> ndarray (what numpy/safetensors-numpy write)
        self.hr = {}       # name -> hurray.Tensor
        self.th = {}       # name -> torch.Tensor
        self.nbytes = 0
        for i, (name, shape) in enumerate(shapes):
            n = int(np.prod(shape))
            if kind == "float32":
                a = aligned_empty(n * 4, np.float32).reshape(shape)
                a.view(np.uint32)[...] = np.uint32(0x3F800000 + i)
                self.np[name] = a
                self.hr[name] = hurray.from_numpy(a, copy=False)
                if torch is not None:
                    self.th[name] = torch.from_numpy(a)
            elif kind == "bfloat16":
                a = aligned_empty(n * 2, np.uint16).reshape(shape)
                a[...] = np.uint16(0x3F80 + i)
                self.np[name] = a.view(ml_dtypes.bfloat16) if ml_dtypes is not None else a
                self.hr[name] = hurray.Tensor(a, hurray.bfloat16, shape, copy=False)
                if torch is not None:
                    self.th[name] = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
            else:
                if len(shape) == 1:  # norms stay float16
                    a = aligned_empty(n * 2, np.float16).reshape(shape)
                    a[...] = 1
                    self.np[name] = a
                    self.hr[name] = hurray.from_numpy(a, copy=False)
                    if torch is not None:
                        self.th[name] = torch.from_numpy(a)
                else:
                    rows, cols = shape
                    packed = aligned_empty(rows * cols // 2).reshape(rows, cols // 2)
                    packed[...] = np.uint8(i & 0xFF)
                    scales = aligned_empty(rows * (cols // BLOCK) * 2, np.float16)
                    scales = scales.reshape(rows, cols // BLOCK)
                    scales[...] = 0.01
                    q = hurray.PerBlockAffine.symmetric(1, BLOCK, 1, "float16")
                    self.hr[name] = hurray.Tensor([packed, scales], hurray.dtype.int4, shape,
                                                  quantization=q, copy=False)
                    self.np[name] = packed
                    self.np[name + ".scales"] = scales
                    if torch is not None:
                        self.th[name] = torch.from_numpy(packed)
                        self.th[name + ".scales"] = torch.from_numpy(scales)
        self.nbytes = sum(a.nbytes for a in self.np.values())
        self.count = len(self.hr)

    def npy_arrays(self):
        """What numpy.save writes: bfloat16 as its uint16 bits (NumPy has no bfloat16)."""
        for k, a in self.np.items():
            yield k, (a.view(np.uint16) if a.dtype.name == "bfloat16" else a)


def small_set(count, nbytes):
    arrs, hts = {}, {}
    for i in range(count):
        a = aligned_empty(nbytes, np.float32)
        a[...] = i
        name = f"blocks.{i // 100}.t{i % 100}"
        arrs[name] = a
        hts[name] = hurray.from_numpy(a, copy=False)
    return arrs, hts


# ---- competitors: save / load --------------------------------------------------------


def clear(path):
    """Removes a previous output, then flushes every dirty page of the system
    (untimed): each save starts without write-back left over from the case before
    it, which would otherwise throttle whichever case comes next."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.unlink(path)
    if hasattr(os, "sync"):
        os.sync()


def save_npy_dir(path, arrays):
    os.makedirs(path, exist_ok=True)
    for i, (_, a) in enumerate(arrays):
        np.save(os.path.join(path, f"{i}.npy"), a)


def load_npy_dir(path, count):
    return sum(touch(np.load(os.path.join(path, f"{i}.npy"), mmap_mode="r"))
               for i in range(count))


def raw_write(path, buf):
    with open(path, "wb", buffering=0) as f:
        f.write(buf)


def fsync_path(path):
    """fsync a file and its folder: what hurray.save (durable=True, the default) does
    before returning (it writes a temporary file, fsyncs it, renames it into place and
    fsyncs the folder)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def raw_read(path, into):
    with open(path, "rb", buffering=0) as f:
        n = f.readinto(into)
    return n


def raw_mmap_touch(path):
    import mmap
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            return touch(np.frombuffer(m, np.uint8))
        finally:
            m.close()


def save_load_table(title, model_np, model_hr, model_th, npy_arrays, nbytes, d, repeat,
                    note=""):
    """Save and load+touch for every competitor over the same tensors."""
    tab_s = Table(f"{title}: save", note=note)
    tab_l = Table(f"{title}: load, touching every byte", note=note)
    p = {k: os.path.join(d, "m." + k) for k in ("hrry", "st", "stt", "npy", "pt", "raw")}
    count = len(npy_arrays)
    print(f"{title}: {len(model_hr)} tensors, {nbytes / MiB:.0f} MiB")

    flat = aligned_empty(nbytes)
    flat[...] = 1

    def o(key, available=True):
        return {"setup": lambda: clear(p[key]), "nbytes": nbytes, "available": available}

    tab_s.add_interleaved([
        ("hurray.save (durable, the default)", lambda: hurray.save(p["hrry"], model_hr),
         o("hrry", HAVE_SAVE)),
        ("hurray.save(durable=False)", lambda: hurray.save(p["hrry"], model_hr, durable=False),
         o("hrry", HAVE_DURABLE)),
        ("safetensors.numpy.save_file", lambda: st_numpy.save_file(model_np, p["st"]),
         o("st", st_numpy is not None)),
        ("safetensors.numpy.save_file + fsync (durable, as hurray.save's default)",
         lambda: (st_numpy.save_file(model_np, p["st"]), fsync_path(p["st"])),
         o("st", st_numpy is not None)),
        ("safetensors.torch.save_file", lambda: st_torch.save_file(model_th, p["stt"]),
         o("stt", st_torch is not None)),
        ("numpy.save (one .npy per tensor)", lambda: save_npy_dir(p["npy"], npy_arrays),
         o("npy")),
        ("torch.save", lambda: torch.save(model_th, p["pt"]), o("pt", torch is not None)),
        ("raw: one write of the same bytes", lambda: raw_write(p["raw"], flat), o("raw")),
        ("raw: one write + fsync", lambda: (raw_write(p["raw"], flat), fsync_path(p["raw"])),
         o("raw")),
    ], repeat=repeat, micro=False)

    def hurray_load(mmap):
        return lambda: sum(touch_hurray(t) for t in hurray.load(p["hrry"], mmap=mmap).values())

    tab_l.add("hurray.load (mapped)", hurray_load(True), repeat=repeat, nbytes=nbytes,
              available=HAVE_SAVE)
    tab_l.add("hurray.load (mmap=False)", hurray_load(False), repeat=repeat, nbytes=nbytes,
              available=HAVE_SAVE)
    tab_l.add("safetensors.numpy.load_file",
              lambda: sum(touch(a) for a in st_numpy.load_file(p["st"]).values()),
              repeat=repeat, nbytes=nbytes, available=st_numpy is not None)
    tab_l.add("safetensors.torch.load_file",
              lambda: sum(touch_torch(a) for a in st_torch.load_file(p["stt"]).values()),
              repeat=repeat, nbytes=nbytes, available=st_torch is not None)
    tab_l.add('numpy.load(mmap_mode="r") (one .npy per tensor)',
              lambda: load_npy_dir(p["npy"], count), repeat=repeat, nbytes=nbytes)
    tab_l.add("torch.load(mmap=True)",
              lambda: sum(touch_torch(a) for a in torch.load(p["pt"], mmap=True).values()),
              repeat=repeat, nbytes=nbytes, available=torch is not None)
    into = aligned_empty(nbytes)
    tab_l.add("raw: one read into a buffer", lambda: raw_read(p["raw"], into), repeat=repeat,
              nbytes=nbytes)
    tab_l.add("raw: mmap and touch", lambda: raw_mmap_touch(p["raw"]), repeat=repeat,
              nbytes=nbytes)
    tab_l.add("raw: memcpy (no I/O)", lambda: np.copyto(into, flat), repeat=repeat,
              nbytes=nbytes)
    del flat, into
    return tab_s, tab_l, p


# ---- workloads ---------------------------------------------------------------------


def w_model(d, budget, repeat, results, lazy, kinds=("float32", "bfloat16", "int4")):
    """The model files; the lazy-access workload runs on the float32 one."""
    for kind in kinds:
        if kind == "bfloat16" and ml_dtypes is None:
            print("model bfloat16: needs ml_dtypes (skipped)")
            continue
        m = Model(kind, budget)
        note = (f"{m.count} tensors ({len(m.np)} arrays for formats without int4), "
                f"{m.nbytes / MiB:.0f} MiB")
        s, l, paths = save_load_table(f"Model file, {kind}", m.np, m.hr, m.th,
                                      list(m.npy_arrays()), m.nbytes, d, repeat, note=note)
        results += [s, l]
        if kind == "float32" and lazy:
            w_lazy((m, paths), repeat, results)
        for p in paths.values():
            clear(p)
        del m
        gc.collect()


def w_lazy(keep, repeat, results):
    m, p = keep
    names = [n for n, _ in m.shapes]
    name = "model.layers.16.mlp.up_proj.weight" if "model.layers.16.mlp.up_proj.weight" in m.hr \
        else names[len(names) // 2]
    idx = names.index(name)
    nb = m.np[name].nbytes
    tab = Table("Lazy access: open the float32 model file, read one tensor (touching it)",
                note=f"`{name}`, {nb / MiB:.0f} MiB, out of {m.nbytes / MiB:.0f} MiB")
    print("lazy:")

    def hr_open():
        with hurray.open(p["hrry"]) as f:
            return touch_hurray(f[name])

    def st_open(fw):
        def run():
            with safetensors.safe_open(p["st"] if fw == "np" else p["stt"], framework=fw) as f:
                t = f.get_tensor(name)
                return touch(t) if fw == "np" else touch_torch(t)
        return run

    tab.add("hurray.open(path)[name]", hr_open, repeat=repeat * 3, nbytes=nb,
            available=HAVE_OPEN and os.path.exists(p["hrry"]))
    tab.add('safetensors safe_open(framework="np").get_tensor', st_open("np"),
            repeat=repeat * 3, nbytes=nb, available=safetensors is not None)
    tab.add('safetensors safe_open(framework="pt").get_tensor', st_open("pt"),
            repeat=repeat * 3, nbytes=nb, available=st_torch is not None)
    tab.add('numpy.load(one .npy, mmap_mode="r")',
            lambda: touch(np.load(os.path.join(p["npy"], f"{idx}.npy"), mmap_mode="r")),
            repeat=repeat * 3, nbytes=nb)
    tab.add("torch.load(mmap=True)[name]",
            lambda: touch_torch(torch.load(p["pt"], mmap=True)[name]), repeat=repeat * 3,
            nbytes=nb, available=torch is not None)
    results.append(tab)


def w_small(d, count, repeat, results):
    arrs, hts = small_set(count, KiB)
    th = {k: torch.from_numpy(v) for k, v in arrs.items()} if torch is not None else {}
    nbytes = count * KiB
    note = f"{count} float32 tensors of 1 KiB"
    s, l, p = save_load_table(f"{count} small tensors", arrs, hts, th, list(arrs.items()),
                              nbytes, d, repeat, note=note)
    results += [s, l]
    names = list(arrs)
    name = names[len(names) // 2]
    idx = names.index(name)
    tab = Table(f"Open a {count}-tensor file and read one tensor",
                note=f"`{name}` (1 KiB): the cost is finding it")
    print("small lazy:")

    def hr():
        with hurray.open(p["hrry"]) as f:
            return touch_hurray(f[name])

    def st(fw):
        def run():
            with safetensors.safe_open(p["st"] if fw == "np" else p["stt"], framework=fw) as f:
                t = f.get_tensor(name)
                return touch(t) if fw == "np" else touch_torch(t)
        return run

    tab.add("hurray.open(path)[name]", hr, repeat=repeat * 4, micro=True, available=HAVE_OPEN)
    tab.add('safetensors safe_open(framework="np").get_tensor', st("np"), repeat=repeat * 4,
            micro=True, available=safetensors is not None)
    tab.add('safetensors safe_open(framework="pt").get_tensor', st("pt"), repeat=repeat * 4,
            micro=True, available=st_torch is not None)
    tab.add('numpy.load(one .npy, mmap_mode="r")',
            lambda: touch(np.load(os.path.join(p["npy"], f"{idx}.npy"), mmap_mode="r")),
            repeat=repeat * 4, micro=True)
    tab.add("torch.load(mmap=True)[name]",
            lambda: touch_torch(torch.load(p["pt"], mmap=True)[name]), repeat=repeat,
            available=torch is not None)
    results.append(tab)
    for q in p.values():
        clear(q)


def w_handoff(repeat, results):
    for nbytes, label in ((KiB, "1 KiB"), (64 * MiB, "64 MiB")):
        a = aligned_empty(nbytes, np.float32)
        a[...] = 1
        t = hurray.from_numpy(a, copy=False)
        tab = Table(f"In-process hand-off, {label} float32",
                    note="producer to consumer in one process; zero-copy paths are O(1), "
                         "serializing ones copy")
        print(f"handoff {label}:")
        tab.add("hurray.from_hurray(t) (native capsule)", lambda: hurray.from_hurray(t),
                repeat=repeat * 3, micro=True, available=HAVE_NATIVE)
        tab.add("hurray.from_dlpack(t)", lambda: hurray.from_dlpack(t), repeat=repeat * 3,
                micro=True)
        tab.add("numpy.asarray(t)", lambda: np.asarray(t), repeat=repeat * 3, micro=True)
        tab.add("torch.from_dlpack(t)", lambda: torch.from_dlpack(t), repeat=repeat * 3,
                micro=True, available=torch is not None)
        tab.add("numpy.from_dlpack(ndarray)", lambda: np.from_dlpack(a), repeat=repeat * 3,
                micro=True)
        tab.add("torch.from_dlpack(ndarray)", lambda: torch.from_dlpack(a), repeat=repeat * 3,
                micro=True, available=torch is not None)
        tab.add("safetensors.numpy save + load (bytes)",
                lambda: st_numpy.load(st_numpy.save({"t": a})), repeat=repeat * 3,
                micro=nbytes < MiB, nbytes=nbytes, available=st_numpy is not None)
        tab.add("pickle dumps + loads (protocol 5)",
                lambda: pickle.loads(pickle.dumps(a, protocol=5)), repeat=repeat * 3,
                micro=nbytes < MiB, nbytes=nbytes)
        if HAVE_STREAM:
            def stream_rt():
                w = hurray.StreamWriter()
                w.write(t)
                w.finish()
                return [touch_hurray(x) for x in hurray.StreamReader(w.getvalue())]
        else:
            stream_rt = None
        tab.add("hurray.StreamWriter + StreamReader in memory", stream_rt, repeat=repeat * 3,
                micro=nbytes < MiB, nbytes=nbytes, available=HAVE_STREAM)
        tab.add("raw: memcpy", lambda: a.copy(), repeat=repeat * 3, micro=nbytes < MiB,
                nbytes=nbytes)
        tab.reference = "hurray.from_dlpack"
        results.append(tab)


def w_interop(repeat, results):
    """Issue 5: the zero-copy round trips across tensor sizes (none may grow)."""
    for nbytes, label in ((KiB, "1 KiB"), (64 * KiB, "64 KiB"), (4 * MiB, "4 MiB"),
                          (256 * MiB, "256 MiB")):
        a = aligned_empty(nbytes, np.float32)
        a[...] = 1
        t = hurray.from_numpy(a, copy=False)
        print(f"interop {label}:")
        tab = Table(f"Interop, NumPy round trip, {label} float32",
                    note="zero-copy: the times must not grow with the size")
        tab.add_interleaved([
            ("hurray: numpy.asarray(hurray.from_numpy(a))",
             lambda: np.asarray(hurray.from_numpy(a))),
            ("hurray: numpy.from_dlpack(hurray.from_numpy(a))",
             lambda: np.from_dlpack(hurray.from_numpy(a))),
            ("numpy.from_dlpack(a)", lambda: np.from_dlpack(a)),
        ], repeat=repeat * 3)
        results.append(tab)
        tab = Table(f"Interop, torch.from_dlpack, {label} float32",
                    note="t is a hurray tensor over the NumPy array a")
        tab.add_interleaved([
            ("hurray: torch.from_dlpack(t)", lambda: torch.from_dlpack(t)),
            ("torch.from_dlpack(a)", lambda: torch.from_dlpack(a)),
        ], repeat=repeat * 3, available=torch is not None)
        results.append(tab)
        del a, t


def pipe_run(writer, reader):
    """Runs writer(wfd) in a thread and reader(rfd) here; returns reader's result."""
    r, w = os.pipe()
    try:
        import fcntl
        fcntl.fcntl(w, 1031, MiB)  # F_SETPIPE_SZ: 1 MiB for every competitor alike
    except (ImportError, OSError):
        pass
    err = []

    def run():
        try:
            writer(w)
        except BaseException as e:  # noqa: BLE001 - reported after the join
            err.append(e)
        finally:
            os.close(w)

    th = threading.Thread(target=run)
    th.start()
    try:
        out = reader(r)
    finally:
        th.join()
        os.close(r)
    if err:
        raise err[0]
    return out


def read_exact(fd, into):
    view = memoryview(into).cast("B")
    got = 0
    while got < len(view):
        n = os.readv(fd, [view[got:]])
        if n == 0:
            break
        got += n
    return got


def w_stream(repeat, results, total=256 * MiB, each=4 * MiB):
    count = total // each
    arrs = []
    for i in range(count):
        a = aligned_empty(each, np.float32)
        a[...] = i
        arrs.append(a)
    hts = [hurray.from_numpy(a, copy=False) for a in arrs]
    tab = Table(f"Stream over a pipe, {count} tensors of {each // MiB} MiB",
                note="writer thread to reader, 1 MiB pipe buffer; the reader touches every byte")
    print("stream:")

    def hr():
        def writer(fd):
            with hurray.StreamWriter(fd) as s:
                for t in hts:
                    s.write(t)

        def reader(fd):
            return sum(touch_hurray(t) for t in hurray.StreamReader(fd))

        return pipe_run(writer, reader)

    def st():
        def writer(fd):
            for i, a in enumerate(arrs):
                blob = st_numpy.save({f"t{i}": a})
                os.write(fd, len(blob).to_bytes(8, "little"))
                mv = memoryview(blob)
                while mv:
                    mv = mv[os.write(fd, mv):]

        def reader(fd):
            s = 0
            while True:
                hdr = bytearray(8)
                if read_exact(fd, hdr) < 8:
                    return s
                blob = bytearray(int.from_bytes(hdr, "little"))
                read_exact(fd, blob)
                s += sum(touch(v) for v in st_numpy.load(bytes(blob)).values())

        return pipe_run(writer, reader)

    into = aligned_empty(each)

    def raw():
        def writer(fd):
            for a in arrs:
                mv = memoryview(a).cast("B")
                while mv:
                    mv = mv[os.write(fd, mv):]

        def reader(fd):
            s = 0
            for _ in range(count):
                read_exact(fd, into)
                s += touch(into)
            return s

        return pipe_run(writer, reader)

    tab.add("hurray.StreamWriter -> StreamReader", hr, repeat=repeat, nbytes=total,
            available=HAVE_STREAM)
    tab.add("safetensors.numpy bytes, length-prefixed", st, repeat=repeat, nbytes=total,
            available=st_numpy is not None)
    tab.add("raw: write / read of the same bytes", raw, repeat=repeat, nbytes=total)
    results.append(tab)


# ---- targets and report ------------------------------------------------------------


def find(results, title_part, case_part):
    """The row of the first table whose title contains title_part: the case named
    exactly case_part, else the first that starts with it."""
    for tab in results:
        if title_part in tab.title:
            rows = [r for r in tab.rows if r.times]
            for r in rows:
                if r.case == case_part:
                    return r
            for r in rows:
                if r.case.startswith(case_part):
                    return r
    return None


def targets(results, small_count):
    """Issue 7's targets: (statement, ratio hurray/peer, limit, verdict)."""
    save_d, save_nd = "hurray.save (durable, the default)", "hurray.save(durable=False)"
    st_plain, st_sync = "safetensors.numpy.save_file", "safetensors.numpy.save_file + fsync"
    checks = [
        ("issue 7, equal durability (neither flushes to the disk): "
         "`hurray.save(durable=False)` at least as fast as `safetensors.numpy.save_file` "
         "(1 GiB, float32)", "Model file, float32: save", save_nd, st_plain, 1.0),
        ("issue 7, equal durability (both flush the file and its folder): `hurray.save` "
         "(durable, the default) at least as fast as `safetensors.numpy.save_file` + fsync "
         "(1 GiB, float32)", "Model file, float32: save", save_d, st_sync, 1.0),
        ("`hurray.load` touching every byte at least as fast as "
         "`safetensors.numpy.load_file` (1 GiB, float32)",
         "Model file, float32: load", "hurray.load (mapped)", "safetensors.numpy.load_file",
         1.0),
        (f"`hurray.open(...)[name]` on a {small_count}-tensor file at least 5x faster than "
         "`safe_open(...).get_tensor(name)`",
         f"Open a {small_count}-tensor file", "hurray.open", "safetensors safe_open(framework=\"np\")",
         0.2),
    ]
    for label in ("1 KiB", "64 KiB", "4 MiB", "256 MiB"):
        checks.append((f"issue 5: `numpy.asarray(hurray.from_numpy(a))` within 2x of "
                       f"`numpy.from_dlpack(a)`, {label}", f"Interop, NumPy round trip, {label} ",
                       "hurray: numpy.asarray", "numpy.from_dlpack(a)", 2.0))
        checks.append((f"issue 5: `torch.from_dlpack(t)` within 1.5x of `torch.from_dlpack(a)`, "
                       f"{label}", f"Interop, torch.from_dlpack, {label} ", "hurray: torch",
                       "torch.from_dlpack(a)", 1.5))
    # unequal durability: shown for what it is, no verdict
    checks.append(("(unequal durability, for reference) `hurray.save` (durable, the default) "
                   "vs `safetensors.numpy.save_file` (not flushed)",
                   "Model file, float32: save", save_d, st_plain, None))
    out = []
    for text, title, mine, peer, limit in checks:
        a, b = find(results, title, mine), find(results, title, peer)
        if a is None or b is None:
            ran = any(title in tab.title for tab in results)
            why = "not run" if not ran else NA if a is None else "peer unavailable"
            out.append((text, None, None, limit, why))
            continue
        ratio, best = a.median / b.median, a.best / b.best
        verdict = "not comparable" if limit is None else "met" if best <= limit else "MISSED"
        out.append((text, ratio, best, limit, verdict))
    # every model kind too (reported, the issue states float32)
    for kind in ("bfloat16", "int4"):
        for what, mine, peer in (("save", save_nd, st_plain), ("save", save_d, st_sync),
                                 ("load", "hurray.load (mapped)", "safetensors.numpy.load_file")):
            a = find(results, f"Model file, {kind}: {what}", mine)
            b = find(results, f"Model file, {kind}: {what}", peer)
            if a is not None and b is not None:
                ratio, best = a.median / b.median, a.best / b.best
                out.append((f"(also) `{mine}` vs `{peer}`, {kind}", ratio, best,
                            1.0, "met" if best <= 1.0 else "MISSED"))
    return out


def machine():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        info["cpu"] = platform.processor() or platform.machine()
    info["cores"] = os.cpu_count()
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        info["memory"] = f"{kb / (1 << 20):.1f} GiB"
    except (OSError, ValueError, IndexError):
        info["memory"] = "?"
    info["kernel"] = f"{platform.system()} {platform.release()}"
    info["python"] = platform.python_version()
    info["numpy"] = np.__version__
    info["torch"] = torch.__version__ if torch is not None else "absent"
    info["safetensors"] = getattr(safetensors, "__version__", "absent")
    info["ml_dtypes"] = getattr(ml_dtypes, "__version__", "absent")
    info["hurray"] = f"{hurray.__version__}, Release build of this checkout"
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        info["commit"] = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        info["commit"] = "?"
    return info


NOTES = """\
## What the figures show

Where the time goes, as profiled (perf, strace) when this runner was written; the
figures above are the evidence, these are the reasons.

- **Save.** `hurray.save` is atomic in both modes: it writes a temporary file and
  renames it over the target. By default it is also durable: it fsyncs the file
  before the rename and the folder after it, so a saved file survives a power
  loss (`hurray.save`, docs/reference/api.md). `safetensors`, `numpy.save` and `torch.save` return while
  the bytes are still in the page cache, so their time excludes the disk. The
  targets therefore compare equal durability: the default `hurray.save` with
  `safetensors.numpy.save_file` followed by an fsync of the file and its folder
  (`+ fsync` row), and `hurray.save(durable=False)` (no flush, the atomic rename
  kept) with plain `save_file`. Non-durable saves write straight from the
  tensors' memory with one `pwrite` per descriptor and per buffer (padding is
  left as holes): their time is the page cache's, as safetensors' is, and both
  sit on `raw: one write` (profiled side by side, the two saves spend their time
  in the same kernel functions: copying into the page cache and ext4's block
  allocation; at parity, a run's noise decides which side of 1 the ratio falls).
  Durable saves wait for the disk, but hurray's starts sending each 8 MiB to it
  as soon as it is written (write-behind), so its closing fsync waits for the
  last window; `save_file` + fsync, like `raw: one write + fsync`, fills the
  page cache first and then waits for the disk to take all of it. Every save
  row starts with no dirty pages left from the row before (`os.sync()`,
  untimed); on this shared machine the disk's other work still moves the
  durable rows by up to a third from run to run. Small tensors cost hurray more disk: the format starts
  every buffer on a 4096-byte boundary (docs/reference/file-format.md), so 10,000
  tensors of 1 KiB fill about 80 MB of blocks where safetensors packs 10 MB,
  and a flush writes them all.
- **Load.** `hurray.load` maps the file: every tensor is a read-only view of the
  mapping, and touching the bytes costs page-cache faults only (the
  `raw: mmap and touch` floor). `safetensors.numpy.load_file` copies every byte
  into new arrays. `hurray.load(mmap=False)` copies too and lands beside it.
- **Open one tensor of 10,000.** `hurray.open` reads the binary footer index and
  looks the name up; `safe_open` parses the JSON header of all 10,000 entries on
  every open.
- **Issue 5, NumPy round trip.** `numpy.asarray(hurray.from_numpy(a))` is two
  conversions against NumPy's one capsule round trip, and its time does not grow
  with the size. `from_numpy` of an exact ndarray reads the array's header (its
  layout proven once against `__array_interface__`) instead of asking for a
  buffer export, whose format string NumPy builds and compares on every call,
  and the tensor builds its descriptor only when something needs it (save, a
  stream, `.descriptor`): what is left is allocating the tensor (about 0.1 µs).
  `numpy.asarray(t)` reads `Tensor.__array_struct__`, which hands NumPy a cached
  `numpy.dtype` in `descr`, so NumPy parses no type string; the rest is NumPy's
  own array creation (about 0.3 µs), the same work `numpy.from_dlpack` does.
- **Issue 5, PyTorch.** `torch.from_dlpack` of a hurray tensor and of a NumPy
  array cost the same within noise: the capsule is filled from fields the tensor
  already holds.
- **Hand-off.** The zero-copy paths (native capsule, DLPack, NumPy) stay about a
  microsecond from 1 KiB to 64 MiB; serializing ones (safetensors bytes, pickle,
  an in-memory stream) copy and scale with the size. The in-memory stream copies
  more than once: the writer grows its buffer, `getvalue()` copies it into a
  bytes object, and the reader copies each buffer whose address in those bytes
  is below its declared alignment (a large bytes object's data is not 64-byte
  aligned), so it costs several memcpys.
- **Stream over a pipe.** hurray's writer and reader run close to the raw
  write/read baseline through the same pipe; safetensors has no stream and
  serializes each tensor to bytes first.

## Measured by other scripts

These figures come from their own scripts, not from this runner; rerun them by hand.

### `hurray.torch` against safetensors

Measured with `python bench/framework_torch.py --sizes 256,1024 --rounds 7 --dir /tmp`
(a benchmark: 64 float32 tensors, each save from a clean page cache, the two
libraries taking turns; ratio hurray / safetensors of the median times, lower is better;
two runs on the 2-core development VM):

| | 256 MiB | 1 GiB |
|---|---|---|
| `load_file` + touching every byte (`x.sum()` of each tensor) | 1.02, 0.98 | 0.92, 0.98 |
| `save_file(..., durable=False)` against `save_file` | 0.99, 1.04 | 0.57, 1.37 (best of 7 against best: 0.87, 0.95) |
| `save_file` (durable, the default) against `save_file` + `os.fsync` | 0.79, 0.77 | 0.59, 0.67 |
| resident memory after `load_file`, no touch | 4.3 against 7.0 MiB | 4.2 against 7.0 MiB |

Loading is as fast as safetensors (both map the file; the touch costs page faults alone), a
save into the page cache costs the same (the 1 GiB medians swing with the VM disk's
write-back; the best rounds are level), and at equal durability hurray saves in 0.6-0.8 of
the time, because it sends each 8 MiB to the disk while it copies the next. A load copies
nothing: the resident set grows by the pages touched, not by the file.

### Partial reads: `File.get_slice`

`bench/slice_pages.py` measures both on 1/8 of a 1 GiB float32 tensor ([16384, 16384],
row-major; the file dropped from the page cache first). On the development machine (a VM
disk with `read_ahead_kb` 8192):

| shard | mode | read | of the tensor | beyond the shard | time |
|---|---|---|---|---|---|
| rows 6144..8191 | `mmap=True` | 32 773 pages resident (mincore) | 0.1250 | 5 pages (header, descriptor, index) | 0.13 s |
| rows 6144..8191 | `mmap=False` | 128.00 MiB (`rchar`) | 0.1250 | 190 bytes (the descriptor) | 0.08 s |
| columns 6144..8191 | `mmap=True` | 32 773 pages resident | 0.1250 | 5 pages | 1.0–1.3 s |
| columns 6144..8191 | `mmap=False` | 128.00 MiB | 0.1250 | 192 bytes | 1.0–1.5 s |

(`python bench/slice_pages.py [--dir DIR] [--mib N]`; a column shard is 16384 reads of
8 KiB, one per row.)
"""


def report(results, info, checks, load_before, load_after, args, elapsed):
    lines = ["# Benchmarks: hurray beside safetensors, NumPy, PyTorch and raw I/O", "",
             "Generated by `bench/compare.py` (`scripts/bench.sh --compare`); every figure "
             "comes from one run on one machine, and every comparison is between cases "
             "measured in that run. Times are per operation: the median of the repeats "
             "and the best one; \"time relative to hurray\" divides a row's median by "
             "hurray's in the same table (above 1: slower than hurray).", "",
             "## Targets (issues 5 and 7)", "",
             "The verdict reads the ratio of the best times (the repeat least disturbed by "
             "other load on a shared machine); the ratio of medians is beside it.",
             "",
             "| target | hurray / peer (best) | (median) | limit | verdict |",
             "|---|---:|---:|---:|---|"]
    for text, ratio, best, limit, verdict in checks:
        r = f"{ratio:.2f}" if ratio is not None else "–"
        b = f"{best:.2f}" if best is not None else "–"
        lim = f"≤ {limit:g}" if limit is not None else "–"
        lines.append(f"| {text} | {b} | {r} | {lim} | {verdict} |")
    lines += ["", "## Machine", "", "| | |", "|---|---|"]
    for k in ("cpu", "cores", "memory", "kernel", "python", "numpy", "torch", "safetensors",
              "ml_dtypes", "hurray", "commit"):
        lines.append(f"| {k} | {info.get(k)} |")
    lines.append(f"| load average (1, 5, 15 min) before / after | "
                 f"{', '.join(f'{x:.2f}' for x in load_before)} / "
                 f"{', '.join(f'{x:.2f}' for x in load_after)} |")
    lines.append(f"| repeats | {args.repeat} (best and median kept); run took {elapsed:.0f} s |")
    lines += ["", "## How to reproduce", "", "```sh",
              "pip install numpy torch safetensors ml_dtypes   # the peers",
              "scripts/bench.sh --compare                    # Release build, then this runner",
              "# or, with hurray installed: python bench/compare.py [--repeat N] [--dir DIR]",
              "```", "",
              "Files are written to a temporary folder and read back while in the page cache "
              "(warm): the figures are CPU and memory costs, not the disk's, except in the "
              "rows that fsync (`hurray.save` with its default `durable=True`, and the "
              "`+ fsync` rows). On a shared machine, run when "
              "the load average is low; the figures above record it.", "",
              "## Results", ""]
    for tab in results:
        lines.append(tab.markdown())
    lines.append(NOTES)
    return "\n".join(lines).rstrip() + "\n"


UNITS = ["model:float32", "model:bfloat16", "model:int4", "small", "interop", "handoff",
         "stream"]


def worker(args):
    """Runs one workload (UNITS) and writes its tables to args.result as JSON."""
    budget = 64 * MiB if args.quick else GiB
    small_count = 1000 if args.quick else 10000
    results: list[Table] = []
    unit = args.worker
    d = tempfile.mkdtemp(prefix="w-", dir=args.dir)
    try:
        if unit.startswith("model:"):
            w_model(d, budget, args.repeat, results, lazy=not args.no_lazy,
                    kinds=(unit.split(":", 1)[1],))
        elif unit == "small":
            w_small(d, small_count, args.repeat, results)
        elif unit == "interop":
            w_interop(args.repeat, results)
        elif unit == "handoff":
            w_handoff(args.repeat, results)
        elif unit == "stream":
            w_stream(args.repeat, results, total=(16 if args.quick else 256) * MiB)
        else:
            raise SystemExit(f"unknown workload {unit}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    with open(args.result, "w") as f:
        json.dump([t.to_json() for t in results], f)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes; writes no report")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=None, help="folder for the files (default: a temp dir)")
    ap.add_argument("--out", default=None,
                    help="report path (default docs/reference/benchmarks.md; '-' prints only)")
    ap.add_argument("--only", default="model,lazy,small,interop,handoff,stream",
                    help="comma-separated workloads")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--result", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--no-lazy", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = args.out or ("-" if args.quick else os.path.join(root, "docs", "reference", "benchmarks.md"))
    budget = 64 * MiB if args.quick else GiB
    small_count = 1000 if args.quick else 10000
    only = set(args.only.split(","))
    for what, ok in (("save/load", HAVE_SAVE), ("open", HAVE_OPEN), ("streams", HAVE_STREAM),
                     ("native protocol", HAVE_NATIVE)):
        if not ok:
            print(f"hurray {what}: {NA}")
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    results: list[Table] = []
    units = [u for u in UNITS if u.split(":")[0] in only]
    d = tempfile.mkdtemp(prefix="hurray-compare-", dir=args.dir)
    try:
        for unit in units:
            # one process per workload: fresh memory, and a crash is a result
            res = os.path.join(d, "result.json")
            cmd = [sys.executable, "-X", "faulthandler", os.path.abspath(__file__),
                   "--worker", unit, "--repeat", str(args.repeat), "--dir", d,
                   "--result", res] + (["--quick"] if args.quick else []) \
                + (["--no-lazy"] if "lazy" not in only else [])
            rc = subprocess.run(cmd).returncode
            if rc != 0:
                why = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
                print(f"{unit}: the worker failed ({why})")
                tab = Table(f"Workload {unit}", note=f"the worker process failed ({why}); "
                            "its output above says where")
                results.append(tab)
                continue
            with open(res) as f:
                results += [Table.from_json(t) for t in json.load(f)]
            os.unlink(res)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    elapsed = time.perf_counter() - t0
    load_after = os.getloadavg()
    checks = targets(results, small_count)
    print("\nTargets (issues 5 and 7):")
    for text, ratio, best, limit, verdict in checks:
        r = f"{ratio:.2f}" if ratio is not None else "–"
        b = f"{best:.2f}" if best is not None else "–"
        lim = f"{limit:g}" if limit is not None else "–"
        print(f"  {verdict:<8} hurray/peer best {b:>5} (median {r:>5}, limit {lim}): {text}")
    text = report(results, machine(), checks, load_before, load_after, args, elapsed)
    if out != "-":
        with open(out, "w") as f:
            f.write(text)
        print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
