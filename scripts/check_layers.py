#!/usr/bin/env python3
"""Checks the layering of the Python extension (python/src).

The extension is built in layers, each depending only on the ones below it
(docs/internals/python-internals.md):

    0  util/     argument and shape conversion, errors, byte helpers, module state
    1  core/     the core Tensor (buffers, build, from descriptor) and its value
                 classes (Dtype, Device, BufferHandle)
    2  types/    the Python types (Layout classes, quantization, sections,
                 Descriptor, Composite, creation functions)
    3  interop/  DLPack, NumPy, the native protocol, sparse views and SciPy
       io/       files, KV metadata, streams
    4  module/   tensor_class.c (the Tensor class, assembled from the layers
                 below) and module.c

The build enforces the includes (python/src/CMakeLists.txt): each folder is
compiled with only the headers of its own layer and those below on its include
path, so an upward include, quoted or angle-bracket, does not compile. This
script checks that this is so, and what a compiler cannot see:
  1. The build: every object of the extension is compiled with exactly its
     layer's staged include folder and never python/src itself
     (compile_commands.json); a probe with an upward include, angle-bracket
     and quoted, fails to compile with each layer's own command, and a probe
     including a header of that layer compiles.
  2. Calls: from the object files' symbols (nm), a file uses only functions
     defined in its own layer or below (a declaration written by hand
     instead of included would compile).
  3. No cycle: no two files call each other, directly or through others.
  4. Includes the include path cannot refuse: a header named *_internal.h only
     from its own folder, and no include that climbs out of its folder with
     "..": a quoted include is looked up beside the including file first.
  5. The extension imports no module of the Python package (hurray.*): the
     package lends what the extension needs at import (_register_hooks).

  scripts/check_layers.py BUILD_DIR     check the build and objects under BUILD_DIR
  scripts/check_layers.py --self-test   prove each rule of 2-4 fails on a bad graph
                                        (rule 1 proves itself with real compiles)
"""
import argparse
import collections
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from graph_cycles import cycles  # noqa: E402 - the scripts' shared helper


ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "python" / "src"
LAYERS = {"util": 0, "core": 1, "types": 2, "interop": 3, "io": 3, "module": 4}
# quoted and angle-bracket includes alike: python/src is on the include path, so
# `#include <io/file.h>` reaches a header of the extension as surely as "io/file.h"
INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)', re.M)


def layer_of(rel):
    """Layer of a path relative to python/src ('core/tensor.c' -> 1)."""
    parts = pathlib.PurePosixPath(rel).parts
    folder = parts[0] if len(parts) > 1 else ""
    if folder not in LAYERS:
        raise SystemExit(f"check_layers: {rel}: folder '{folder or '(python/src itself)'}' is "
                         f"not a layer ({', '.join(LAYERS)})")
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
    """sources: {rel path: text}. Rule 4: what the include path cannot refuse."""
    problems = []
    for rel, text in sorted(sources.items()):
        here = pathlib.PurePosixPath(rel)
        for quoted, angled in INCLUDE.findall(text):
            inc = quoted or angled
            target = pathlib.PurePosixPath(inc)
            if ".." in target.parts:
                problems.append(f"{rel} includes {inc}: an include climbs out of no folder "
                                f"(name it from python/src, as \"core/tensor.h\")")
                continue
            if quoted and (SRC / here.parent / inc).exists() and here.parent.parts:
                problems.append(f"{rel} includes \"{inc}\", found beside it: name it from "
                                f"python/src (\"{here.parent / inc}\")")
            if target.name.endswith("_internal.h") and target.parent != here.parent:
                problems.append(f"{rel} includes {inc}, private to {target.parent}/")
    return problems


# an import call whose module argument is a string naming hurray or a module of it
PACKAGE_IMPORT = re.compile(
    r'\b(PyImport_ImportModule\w*|PyImport_Import|hrpy_lazy_attr)\s*\([^;]*?"(hurray(?:\.\w+)*)"',
    re.S)


def check_imports(sources):
    """sources: {rel path: text}. Rule 5."""
    return [f"{rel} imports {m.group(2)} ({m.group(1)}): the package registers what the "
            f"extension needs instead (_register_hooks, module/module.c)"
            for rel, text in sorted(sources.items()) for m in PACKAGE_IMPORT.finditer(text)]


def compile_commands(build):
    """{rel source: (arguments, directory)} of the extension's objects."""
    path = build / "compile_commands.json"
    if not path.exists():
        raise SystemExit(f"check_layers: no {path} (python/src/CMakeLists.txt exports it; "
                         f"build the extension first)")
    out = {}
    for entry in json.loads(path.read_text()):
        src = pathlib.Path(entry["file"]).resolve()
        try:
            rel = src.relative_to(SRC).as_posix()
        except ValueError:
            continue  # libhurray's own sources
        args = entry.get("arguments") or shlex.split(entry["command"])
        out[rel] = (args, entry["directory"])
    return out


def include_dirs(args):
    dirs, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-I", "-isystem", "-iquote"):
            dirs.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-I"):
            dirs.append(a[2:])
        i += 1
    return dirs


def probe(args, directory, folder, text):
    """Compiles `text` as a file of `folder` with that folder's own command
    (syntax only): (ok, compiler output)."""
    with tempfile.TemporaryDirectory(prefix="hrpy-probe-") as d:
        # beside the folder's files, as a source of that folder would be
        src = pathlib.Path(d) / folder / "probe.c"
        src.parent.mkdir()
        src.write_text(text)
        cmd, skip = [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-o", "-MF", "-MT", "-MQ", "-c"):
                skip = a != "-c"
                continue
            if a.endswith(".c") and not a.startswith("-"):
                continue
            if a in ("-MD", "-MMD"):
                continue
            cmd.append(a)
        r = subprocess.run(cmd + ["-fsyntax-only", str(src)], cwd=directory,
                           capture_output=True, text=True)
        return r.returncode == 0, r.stdout + r.stderr


def check_build(build):
    """Rule 1: (problems, probes run)."""
    cmds = compile_commands(build)
    problems, probes = [], 0
    headers = {}
    for h in sorted(SRC.rglob("*.h")):
        rel = h.relative_to(SRC).as_posix()
        headers.setdefault(layer_of(rel), []).append(rel)
    for rel in sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.c")):
        if rel not in cmds:
            problems.append(f"{rel}: not in {build}/compile_commands.json (is it built?)")
            continue
        args, _ = cmds[rel]
        rank = layer_of(rel)
        dirs = [pathlib.Path(d).resolve() for d in include_dirs(args)]
        if SRC.resolve() in dirs or any(SRC.resolve() in d.parents for d in dirs):
            problems.append(f"{rel}: compiled with python/src on its include path")
        staged = [d for d in dirs if d.parent.name == "layers"]
        if [d.name for d in staged] != [str(rank)]:
            problems.append(f"{rel} (layer {rank}): staged include folders "
                            f"{[str(d) for d in staged]}, expected exactly layers/{rank}")
    # the probes: once per folder, with the command of its first file
    for folder, rank in LAYERS.items():
        first = next((r for r in sorted(cmds) if r.startswith(folder + "/")), None)
        if first is None:
            continue
        args, directory = cmds[first]
        own = headers.get(rank, [])
        own = [h for h in own if h.startswith(folder + "/") and not h.endswith("_internal.h")]
        if own:
            ok, out = probe(args, directory, folder, f'#include "{own[0]}"\n')
            probes += 1
            if not ok:
                problems.append(f"{folder}/: a probe including its own {own[0]} does not "
                                f"compile:\n{out[-600:]}")
        above = [h for r, hs in headers.items() if r > rank for h in hs
                 if not h.endswith("_internal.h")]
        if above:
            for form in (f"#include <{above[0]}>", f'#include "{above[-1]}"'):
                ok, out = probe(args, directory, folder, form + "\n")
                probes += 1
                if ok:
                    problems.append(f"{folder}/ (layer {rank}): `{form}` compiles: the build "
                                    f"lets an upward include through")
    return problems, probes


def load_objects(build):
    """{rel source: symbols} of the objects of every layer's OBJECT library
    (hrpy_<folder>.dir, python/src/CMakeLists.txt)."""
    objdirs = [d for d in build.rglob("hrpy_*.dir") if d.is_dir()]
    if not objdirs:
        raise SystemExit(f"check_layers: no hrpy_<layer>.dir object folder under {build} "
                         f"(build the extension first)")
    objects = {}
    for objdir in objdirs:
        for obj in sorted(objdir.rglob("*.c.o")):
            rel = obj.relative_to(objdir).as_posix()[:-2]  # 'core/tensor.c'
            if not (SRC / rel).exists():
                continue  # a stale object of a removed source
            objects[rel] = symbols(obj)
    if len(objects) < 2:
        raise SystemExit(f"check_layers: only {len(objects)} objects under {build}")
    return objects


def self_test():
    def graph(edges):
        g = {}
        for a, b in edges:
            g.setdefault(a, collections.defaultdict(list))[b].append("f")
            g.setdefault(b, collections.defaultdict(list))
        return g
    ok = check_graph(graph([("module/tensor_class.c", "core/tensor.c"),
                            ("core/tensor.c", "util/args.c")]))
    assert ok == [], ok
    up = check_graph(graph([("util/args.c", "core/tensor.c")]))
    assert len(up) == 1 and "layer above" in up[0], up
    cyc = check_graph(graph([("types/a.c", "types/b.c"), ("types/b.c", "types/a.c")]))
    assert len(cyc) == 1 and cyc[0].startswith("cycle"), cyc
    long = check_graph(graph([("io/a.c", "io/b.c"), ("io/b.c", "io/c.c"), ("io/c.c", "io/a.c")]))
    assert len(long) == 1 and "io/a.c" in long[0] and "io/c.c" in long[0], long
    inc = check_includes({"core/x.c": '#include "core/tensor.h"\n#include "../io/file.h"\n',
                          "types/y.c": '#include "core/tensor_internal.h"\n',
                          "util/bytes.c": "#include <string.h>\n#include <../io/file.h>\n"})
    assert len(inc) == 3 and any("util/bytes.c" in p and "io/file.h" in p for p in inc), inc
    imp = check_imports({"types/c.c": 'f = hrpy_lazy_attr(&st->x, "hurray._display", "r");\n',
                         "io/d.c": 'm = PyImport_ImportModule("hurray");\n',
                         "interop/e.c": 'm = PyImport_ImportModule("numpy");\n'})
    assert len(imp) == 2 and any("hurray._display" in p for p in imp), imp
    print("check_layers self-test: ok (an upward call, two cycles and three bad includes "
          "caught, one of them through angle brackets; two imports of the package caught; the build's own refusal of upward "
          "includes is proved by compiling probes when a build folder is checked)")
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
    build = pathlib.Path(args.build)
    objects = load_objects(build)
    sources = {p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8")
               for p in sorted(SRC.rglob("*.[ch]"))}
    for rel in sources:
        layer_of(rel)  # a file in no layer fails here
    built, probes = check_build(build)
    problems = (built + check_graph(call_graph(objects)) + check_includes(sources)
                + check_imports(sources))
    if problems:
        print("python/src layering: FAILED")
        for p in problems:
            print("  " + p)
        return 1
    edges = sum(len(v) for v in call_graph(objects).values())
    print(f"python/src layering: ok ({len(objects)} files, {edges} cross-file call edges, "
          f"no upward call, no cycle, no import of the package; the build refuses upward includes: {probes} probes "
          f"compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
