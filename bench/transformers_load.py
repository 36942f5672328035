#!/usr/bin/env python3
"""Hugging Face models: `hurray.transformers.from_pretrained` of a `.hrry` model
directory against `transformers.AutoModelForCausalLM.from_pretrained` of the same
weights as safetensors, in one run.

A benchmark, not a test. A Llama model is built from a config (``--hidden``,
``--layers``, ``--vocab``; the default is about 0.7 GB of float32), saved once by
transformers (safetensors) and once by `hurray.transformers.save_pretrained`. Each
round loads each directory in a fresh process (the two taking turns; the files are in
the page cache: read once before), timing `from_pretrained` alone (not the imports) and
reading the process's peak resident memory (VmHWM) after it; the logits of one input
are compared with the reference's. Reported: median and best seconds, median peak
memory, and the ratio transformers time / hurray time (above 1: hurray faster).
Each process first loads a one-layer model of the same class the same way, untimed:
transformers imports a model's code on its first load. The issue's target: at least
1.0, and peak memory no higher.

    python bench/transformers_load.py [--hidden 1024] [--layers 8] [--vocab 32000]
        [--rounds 5] [--dtype float32] [--dir /tmp]
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time, torch, transformers
import hurray.transformers as ht
kind, path, tiny, dtype = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
dt = getattr(torch, dtype)
load = ((lambda p: ht.from_pretrained(p, dtype=dt)) if kind == "hurray" else
        (lambda p: transformers.AutoModelForCausalLM.from_pretrained(p, dtype=dt)))
load(tiny)  # transformers imports the model's code lazily, on the first load: not timed
t0 = time.perf_counter()
m = load(path)
t1 = time.perf_counter()
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
with torch.no_grad():
    out = m(torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])).logits
print(json.dumps({"s": t1 - t0, "hwm_kib": int(hwm), "logits": out.flatten()[:64].tolist()}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    import torch
    import transformers

    import hurray.transformers as ht
    root = Path(tempfile.mkdtemp(prefix="bench-hf-", dir=a.dir))
    try:
        cfg = transformers.LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden,
                                       intermediate_size=a.hidden * 3, num_hidden_layers=a.layers,
                                       num_attention_heads=a.hidden // 64,
                                       num_key_value_heads=a.hidden // 128,
                                       tie_word_embeddings=False)
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(cfg).to(getattr(torch, a.dtype))
        nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
        model.save_pretrained(root / "st", max_shard_size="100GB")
        ht.save_pretrained(model, root / "hrry", max_shard_size="100GB")
        del model
        tiny = transformers.LlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=64, hidden_size=64, intermediate_size=64, num_hidden_layers=1,
            num_attention_heads=1, num_key_value_heads=1)).to(getattr(torch, a.dtype))
        tiny.save_pretrained(root / "tiny-st")
        ht.save_pretrained(tiny, root / "tiny-hrry")
        for d in ("st", "hrry"):  # into the page cache
            for f in (root / d).iterdir():
                f.read_bytes()
        res = {"hurray": [], "transformers": []}
        ref = None
        for r in range(a.rounds):
            order = ["hurray", "transformers"] if r % 2 == 0 else ["transformers", "hurray"]
            for kind in order:
                d = "hrry" if kind == "hurray" else "st"
                out = subprocess.run([sys.executable, "-c", CHILD, kind, str(root / d),
                                      str(root / f"tiny-{d}"), a.dtype],
                                     capture_output=True, text=True, check=True)
                got = json.loads(out.stdout.strip().splitlines()[-1])
                ref = ref or got["logits"]
                assert got["logits"] == ref, f"{kind}: other logits"
                res[kind].append(got)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    h = [x["s"] for x in res["hurray"]]
    t = [x["s"] for x in res["transformers"]]
    hm = statistics.median(x["hwm_kib"] for x in res["hurray"]) / 1024
    tm = statistics.median(x["hwm_kib"] for x in res["transformers"]) / 1024
    print(f"from_pretrained, Llama {a.layers} layers x {a.hidden}, {nbytes / 2**20:.0f} MiB of "
          f"{a.dtype}, warm cache, {a.rounds} rounds (fresh process each)")
    print(f"  hurray.transformers      {statistics.median(h) * 1e3:8.1f} ms (best "
          f"{min(h) * 1e3:.1f}), peak RSS {hm:.0f} MiB")
    print(f"  AutoModelForCausalLM     {statistics.median(t) * 1e3:8.1f} ms (best "
          f"{min(t) * 1e3:.1f}), peak RSS {tm:.0f} MiB")
    print(f"  ratio transformers / hurray (median): {statistics.median(t) / statistics.median(h):.2f}x;"
          f" peak memory hurray / transformers: {hm / tm:.2f}")


if __name__ == "__main__":
    main()
