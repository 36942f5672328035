#!/usr/bin/env python3
"""Checks the layering of the Python extension (python/src).

The extension is built in layers, each depending only on the ones below it
(docs/python-internals.md):

    0  util/     argument and shape conversion, errors, byte helpers, module state
    1  core/     the core Tensor (buffers, build, from descriptor) and its value
                 classes (Dtype, Device, BufferHandle)
    2  types/    the Python types (Layout classes, quantization, sections,
                 Descriptor, Composite, creation functions)
    3  interop/  DLPack, NumPy, the native protocol, sparse views and SciPy
       io/       files, KV metadata, streams
    4  (top)     tensor.c (the Tensor class, assembled from the layers below)
                 and module.c

Rules, each a failure:
  1. Calls: from the object files' symbols (nm), a file uses only functions
     defined in its own layer or below.
  2. No cycle: no two files call each other, directly or through others.
  3. Includes: a file includes only headers of its own layer or below, and a
     header named *_internal.h only from its own folder; quoted and angle-bracket
     includes alike (python/src is on the include path, so <io/file.h> reaches it).

  scripts/check_layers.py BUILD_DIR     check the objects under BUILD_DIR
  scripts/check_layers.py --self-test   prove each rule fails on a bad graph
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "python" / "src"
LAYERS = {"util": 0, "core": 1, "types": 2, "interop": 3, "io": 3, "": 4}
# quoted and angle-bracket includes alike: python/src is on the include path, so
# `#include <io/file.h>` reaches a header of the extension as surely as "io/file.h"
INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)', re.M)


def layer_of(rel):
    """Layer of a path relative to python/src ('core/tensor.c' -> 1)."""
    parts = pathlib.PurePosixPath(rel).parts
    folder = parts[0] if len(parts) > 1 else ""
    if folder not in LAYERS:
        raise SystemExit(f"check_layers: {rel}: folder '{folder}' is not a known layer "
                         f"({', '.join(k or '(top)' for k in LAYERS)})")
    return LAYERS[folder]


def symbols(obj):
    """(defined global functions/data, undefined symbols) of an object file."""
    def run(*args):
        out = subprocess.run(["nm", *args, str(obj)], capture_output=True, text=True, check=True)
        return out.stdout.splitlines()
    defined = set()
    for line in run("--defined-only", "-g"):
        parts = line.split()
        if len(parts) == 3:
            defined.add(parts[2])
    undefined = {line.split()[-1] for line in run("-u") if line.strip()}
    return defined, undefined


def call_graph(objects):
    """{file: {callee_file: [symbols]}} from {file: (defined, undefined)}."""
    owner = {}
    for f, (defined, _) in objects.items():
        for s in defined:
            owner[s] = f
    graph = {f: collections.defaultdict(list) for f in objects}
    for f, (_, undefined) in objects.items():
        for s in sorted(undefined):
            g = owner.get(s)
            if g is not None and g != f:
                graph[f][g].append(s)
    return graph


def cycles(graph):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_graph(graph):
    problems = []
    for f in sorted(graph):
        for g, syms in sorted(graph[f].items()):
            if layer_of(g) > layer_of(f):
                problems.append(f"{f} (layer {layer_of(f)}) calls {g} (layer {layer_of(g)}), a "
                                f"layer above it: {', '.join(syms[:4])}")
    for comp in cycles(graph):
        problems.append("cycle between " + ", ".join(comp) + ": " + "; ".join(
            f"{f} -> {g} ({', '.join(graph[f][g][:2])})"
            for f in comp for g in sorted(graph[f]) if g in comp))
    return problems


def check_includes(sources):
    """sources: {rel path: text}. Include rules 3."""
    problems = []
    for rel, text in sorted(sources.items()):
        here = pathlib.PurePosixPath(rel)
        for quoted, angled in INCLUDE.findall(text):
            inc = quoted or angled
            target = pathlib.PurePosixPath(inc)
            if not (SRC / inc).exists() and inc not in sources:
                continue  # a library or system header
            if layer_of(inc) > layer_of(rel):
                problems.append(f"{rel} (layer {layer_of(rel)}) includes {inc} "
                                f"(layer {layer_of(inc)})")
            if target.name.endswith("_internal.h") and target.parent != here.parent:
                problems.append(f"{rel} includes {inc}, private to {target.parent}/")
    return problems


def load_objects(build):
    objdir = None
    for cand in build.rglob("_hurray.dir"):
        if cand.is_dir():
            objdir = cand
            break
    if objdir is None:
        raise SystemExit(f"check_layers: no _hurray.dir object folder under {build} "
                         f"(build the extension first)")
    objects = {}
    for obj in sorted(objdir.rglob("*.c.o")):
        rel = obj.relative_to(objdir).as_posix()[:-2]  # 'core/tensor.c'
        if not (SRC / rel).exists():
            continue  # a stale object of a removed source
        objects[rel] = symbols(obj)
    if len(objects) < 2:
        raise SystemExit(f"check_layers: only {len(objects)} objects in {objdir}")
    return objects


def self_test():
    def graph(edges):
        g = {}
        for a, b in edges:
            g.setdefault(a, collections.defaultdict(list))[b].append("f")
            g.setdefault(b, collections.defaultdict(list))
        return g
    ok = check_graph(graph([("tensor.c", "core/tensor.c"), ("core/tensor.c", "util/args.c")]))
    assert ok == [], ok
    up = check_graph(graph([("util/args.c", "core/tensor.c")]))
    assert len(up) == 1 and "layer above" in up[0], up
    cyc = check_graph(graph([("types/a.c", "types/b.c"), ("types/b.c", "types/a.c")]))
    assert len(cyc) == 1 and cyc[0].startswith("cycle"), cyc
    long = check_graph(graph([("io/a.c", "io/b.c"), ("io/b.c", "io/c.c"), ("io/c.c", "io/a.c")]))
    assert len(long) == 1 and "io/a.c" in long[0] and "io/c.c" in long[0], long
    inc = check_includes({"core/x.c": '#include "core/tensor.h"\n#include "interop/numpy.h"\n',
                          "types/y.c": '#include "core/tensor_internal.h"\n',
                          "util/bytes.c": "#include <string.h>\n#include <io/file.h>\n"})
    assert len(inc) == 3 and any("util/bytes.c" in p and "io/file.h" in p for p in inc), inc
    print("check_layers self-test: ok (an upward call, two cycles and three bad includes "
          "caught, one of them through angle brackets)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build", nargs="?", help="build folder of the extension (e.g. build/python)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.build:
        ap.error("give the build folder, or --self-test")
    objects = load_objects(pathlib.Path(args.build))
    sources = {p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8")
               for p in sorted(SRC.rglob("*.[ch]"))}
    problems = check_graph(call_graph(objects)) + check_includes(sources)
    if problems:
        print("python/src layering: FAILED")
        for p in problems:
            print("  " + p)
        return 1
    edges = sum(len(v) for v in call_graph(objects).values())
    print(f"python/src layering: ok ({len(objects)} files, {edges} cross-file call edges, "
          f"no upward call, no cycle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
