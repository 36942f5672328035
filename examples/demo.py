#!/usr/bin/env python3
"""The hurray demo: the project's main job, run by scripts/demo.sh.

It makes real tensors (a small model: float32 weights and biases, a bfloat16
matrix, an int4 per-block-quantized matrix with its scales, a CSR sparse mask,
and a composite split into two tensor-parallel shards), then

  1. saves them to a .hrry file with key-value metadata,
  2. shows the file with the hurray-inspect CLI (when --inspect names it),
  3. streams them through a pipe to a child process that reads them back and
     checks every byte against its own copy,
  4. reloads the file (memory-mapped, zero-copy) and checks every byte,

and prints a short report. The exit status is 0 only when every check passed.

    python3 examples/demo.py [--inspect build/cli/hurray-inspect] [--out DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import hurray

SEED = 2024


# ---- the tensors ------------------------------------------------------------------------

def to_bfloat16_bits(x):
    """float32 -> bfloat16 bit patterns (round to nearest even), as uint16."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = u + 0x7FFF + ((u >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def quantize_int4_blocks(w, block):
    """Symmetric int4 quantization of each row in blocks of `block` values:
    returns (packed bytes, float32 scales [rows, blocks], dequantized)."""
    rows, cols = w.shape
    blocks = w.reshape(rows, cols // block, block)
    scales = np.abs(blocks).max(axis=2) / 7.0
    scales[scales == 0] = 1.0
    q = np.clip(np.rint(blocks / scales[:, :, None]), -8, 7).astype(np.int8).reshape(rows, cols)
    nibbles = (q & 0x0F).astype(np.uint8)
    packed = nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)  # two per byte, LSB first
    deq = (q.reshape(rows, cols // block, block) * scales[:, :, None]).reshape(rows, cols)
    return np.ascontiguousarray(packed), np.ascontiguousarray(scales, np.float32), deq


def csr_mask(rng, n, density):
    """A CSR sparse tensor: through SciPy when it is installed, else by hand."""
    try:
        import scipy.sparse as sp
        m = sp.random(n, n, density=density, format="csr", dtype=np.float32, random_state=SEED)
        return hurray.from_scipy(m), "scipy.sparse"
    except ImportError:
        dense = (rng.random((n, n)) < density) * rng.standard_normal((n, n))
        rows, cols = np.nonzero(dense)
        values = dense[rows, cols].astype(np.float32)
        row_ptr = np.zeros(n + 1, np.uint64)
        np.add.at(row_ptr, rows + 1, 1)
        row_ptr = np.cumsum(row_ptr).astype(np.uint64)
        t = hurray.Tensor([values, cols.astype(np.uint64), row_ptr], "float32", (n, n),
                          layout=hurray.CsrLayout(len(values)))
        return t, "numpy"


def make_tensors(originals=None):
    """name -> hurray.Tensor or hurray.Composite, the same on every call;
    `originals` (a dict) receives the float32 matrix the int4 one quantizes."""
    rng = np.random.default_rng(SEED)
    vocab, dim, hidden = 256, 64, 128

    def f32(*shape, scale=0.02):
        return hurray.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))

    t = {}
    t["embed.weight"] = f32(vocab, dim)
    t["layers.0.attn.qkv.weight"] = f32(3 * dim, dim)
    t["layers.0.attn.qkv.bias"] = f32(3 * dim, scale=0.0)
    t["layers.0.norm.weight"] = hurray.ones((dim,), dtype="float32")
    up = (rng.standard_normal((hidden, dim)) * 0.02).astype(np.float32)
    t["layers.0.mlp.up.weight"] = hurray.Tensor(to_bfloat16_bits(up), "bfloat16", (hidden, dim))
    down = (rng.standard_normal((dim, hidden)) * 0.02).astype(np.float32)
    packed, scales, deq = quantize_int4_blocks(down, 32)
    if originals is not None:
        originals["down"], originals["down_dequantized"] = down, deq
    t["layers.0.mlp.down.weight"] = hurray.Tensor(
        [packed, scales], "int4", (dim, hidden),
        quantization=hurray.PerBlockAffine(axis=1, block_size=32, scale_buffer_index=1,
                                           scale_type="float32"))
    t["layers.0.attn.mask"], _ = csr_mask(rng, 64, 0.05)
    # the output projection, split in two tensor-parallel shards
    head = (rng.standard_normal((vocab, dim)) * 0.02).astype(np.float32)
    shards = [hurray.Tensor(np.ascontiguousarray(head[i * 128:(i + 1) * 128]), "float32",
                            (128, dim), shard=hurray.Shard((vocab, dim), (i * 128, 0)))
              for i in range(2)]
    t["lm_head.weight"] = hurray.Composite("partition", (vocab, dim), "float32", shards)
    return t


def make_kv(tensors):
    return {
        "model": "hurray-demo-tiny",
        "producer": f"hurray {hurray.__version__}",
        "vocab_size": 256, "hidden_size": 64, "num_layers": 1,
        "rope_theta": 10000.0, "tie_word_embeddings": False,
        "tensor_names": list(tensors),
        "tokenizer_digest": bytes(range(16)),
    }


# ---- checks ---------------------------------------------------------------------------------

def buffers_of(t):
    return [np.asarray(t.buffer(i)).tobytes() for i in range(t.buffer_count)]


def same(a, b):
    """True when b carries what a carries: for tensors the declaration (all but the
    measured alignment) and every buffer's bytes; composites compare by value."""
    if isinstance(a, hurray.Composite):
        return isinstance(b, hurray.Composite) and a == b
    return (isinstance(b, hurray.Tensor) and
            (a.dtype, a.shape, a.layout, a.quantization, a.statistics, a.shard, a.byte_offset,
             a.buffer_count) ==
            (b.dtype, b.shape, b.layout, b.quantization, b.statistics, b.shard, b.byte_offset,
             b.buffer_count) and
            [h.byte_size for h in a.buffer_handles] == [h.byte_size for h in b.buffer_handles]
            and buffers_of(a) == buffers_of(b))


def nbytes(obj):
    if isinstance(obj, hurray.Composite):
        return sum(nbytes(m) for m in obj.members)
    return sum(h.byte_size for h in obj.buffer_handles)


def kib(n):
    return f"{n / 1024:.1f} KiB"


def describe(name, obj):
    if isinstance(obj, hurray.Composite):
        what = f"composite {obj.composition_rule} of {obj.member_count}"
        bufs = sum(m.buffer_count for m in obj.members)
    else:
        what = obj.layout.name
        if obj.quantization is not None:
            what += f" + {type(obj.quantization).__name__}"
        bufs = obj.buffer_count
    shape = "[" + ", ".join(str(d) for d in obj.shape) + "]"
    return (f"  {name:26s} {obj.dtype.name:9s} {shape:10s} {what:28s} "
            f"{bufs} buffer{'s' if bufs != 1 else ' '} {kib(nbytes(obj)):>10s}")


# ---- the child process: reads the stream from stdin -----------------------------------------

def child():
    expected = make_tensors()
    names = list(expected)
    got = 0
    with hurray.StreamReader(sys.stdin.buffer) as reader:
        for i, item in enumerate(reader):
            if i >= len(names) or not same(expected[names[i]], item):
                print(f"child: item {i} differs from {names[i] if i < len(names) else '?'}")
                return 1
            got += 1
    if got != len(names):
        print(f"child: {got} items, expected {len(names)}")
        return 1
    print(f"child: {got}/{len(names)} items verified (descriptors and every byte)")
    return 0


# ---- the main job ----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inspect", help="path of the hurray-inspect CLI (run when it exists)")
    ap.add_argument("--out", help="directory for demo.hrry (default: a temporary one)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child()

    failures = []

    def check(ok, what):
        print(f"  [{'ok' if ok else 'FAILED'}] {what}")
        if not ok:
            failures.append(what)

    print(f"hurray demo: hurray {hurray.__version__}, C ABI {hurray.C_ABI_VERSION}")
    originals = {}
    tensors = make_tensors(originals)
    kv = make_kv(tensors)
    _, sparse_src = csr_mask(np.random.default_rng(0), 2, 0.5)
    print(f"\nmade {len(tensors)} tensors ({kib(sum(nbytes(t) for t in tensors.values()))}; "
          f"the sparse mask through {sparse_src}):")
    for name, t in tensors.items():
        print(describe(name, t))
    q = tensors["layers.0.mlp.down.weight"].quantization
    err = np.abs(originals["down_dequantized"] - originals["down"]).max()
    print(f"  int4 blocks of {q.block_size} along axis {q.axis}, scales in buffer "
          f"{q.scale_buffer_index}: max |dequantized - float32| = {err:.5f}")

    outdir = args.out or tempfile.mkdtemp(prefix="hurray-demo-")
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "demo.hrry")

    # 1. save
    t0 = time.perf_counter()
    hurray.save(path, tensors, kv=kv)
    dt = time.perf_counter() - t0
    with hurray.open(path) as f:
        entries = len(f)
    print(f"\n1. saved {path}: {kib(os.path.getsize(path))}, {entries} index entries "
          f"(composite members under 'name.i'), {len(kv)} KV keys, in {dt * 1e3:.1f} ms")
    check(not [n for n in os.listdir(outdir) if n.startswith(".demo.hrry.tmp")],
          "written atomically (temporary file renamed into place)")

    # 2. inspect
    if args.inspect and os.path.exists(args.inspect):
        print(f"\n2. {args.inspect} --brief {path}")
        p = subprocess.run([args.inspect, "--brief", path], capture_output=True, text=True)
        lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
        # the container (header, trailer, index, KV); then one line per tensor's summary
        cut = next((i for i, ln in enumerate(lines) if ln.startswith("tensor ")), len(lines))
        for line in lines[:cut]:
            print("   " + line)
        for line in lines[cut:]:
            if line.lstrip().startswith("=>") or line.startswith("end of"):
                print("   " + line)
        check(p.returncode == 0, "hurray-inspect reads the file")
    else:
        print("\n2. hurray-inspect not given or not built: skipped")

    # 3. stream to a child process through a pipe
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=False)
    t0 = time.perf_counter()
    with hurray.StreamWriter(proc.stdin) as w:
        for obj in tensors.values():
            w.write(obj)
        sent = w.offset
    proc.stdin.close()  # the writer had its own copy of the descriptor; this ends the stream
    out = proc.stdout.read().decode().strip()
    rc = proc.wait()
    dt = time.perf_counter() - t0
    print(f"\n3. streamed {len(tensors)} items ({kib(sent)}) through a pipe to child "
          f"process {proc.pid} in {dt * 1e3:.1f} ms (the child's start-up included)")
    print(f"   {out}")
    check(rc == 0, "the child read every item back, bytes identical")

    # 4. reload, memory-mapped
    t0 = time.perf_counter()
    loaded = hurray.load(path)
    dt = time.perf_counter() - t0
    print(f"\n4. reloaded {len(loaded)} items (mmap, zero-copy) in {dt * 1e3:.2f} ms")
    check(list(loaded) == list(tensors), "the same names, composite under its head's name")
    check(all(same(tensors[n], loaded[n]) for n in tensors), "every descriptor and every byte")
    check(hurray.load_kv(path) == kv, "KV metadata round trip exact")
    emb = loaded["embed.weight"]
    view = np.asarray(emb)
    first = float(view.flat[0])
    view.flat[0] = first + 1.0  # copies one page into this process; the file keeps its bytes
    again = np.asarray(hurray.load(path, names=["embed.weight"])["embed.weight"])
    check(not emb.readonly and view.flags.writeable and float(again.flat[0]) == first,
          "mapped tensors are writable copy-on-write views: a write never reaches the file")
    view.flat[0] = first
    ro = hurray.load(path, names=["embed.weight"], mmap="r")["embed.weight"]
    check(ro.readonly and not np.asarray(ro).flags.writeable,
          "mmap='r' maps the file read-only: read-only views")
    with hurray.open(path) as f:
        shard = f["lm_head.weight.1"]
    check(same(tensors["lm_head.weight"].members[1], shard),
          "hurray.open reads one composite member by name")
    native = hurray.from_hurray(emb)
    check(np.asarray(native).ctypes.data == np.asarray(emb).ctypes.data,
          "the native protocol hands the mapped bytes over without a copy")

    print(f"\n{'OK' if not failures else 'FAILED: ' + '; '.join(failures)}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
