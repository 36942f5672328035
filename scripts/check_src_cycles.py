#!/usr/bin/env python3
"""Checks that no circle runs among the C files of the library (src/).

The files of src/ form layers (docs/internals/extending.md, "Layers of src/"): a file
calls functions of the files below it, never of one that (directly or through
others) calls it back. This script builds the file-level call graph from the
sources and fails on every cycle, i.e. every strongly connected component of
more than one file.

The graph, read from the sources with a small C-aware tokenizer (comments,
string and character literals stripped):
  - a node per src/**/*.c;
  - the functions a file defines without `static` (hurray_*, hurray__*) are its
    own; a name defined by several files (platform_posix.c and
    platform_win32.c) belongs to each of them;
  - a file uses a function of another file when the name appears in one of its
    function bodies, in a file-scope initializer (a function pointer in a
    table counts as much as a call) or in a macro it defines; a prototype
    alone is no use, and a static function of the file hides a name of
    another;
  - a static inline function or a macro of a header (src/**/*.h,
    include/**/*.h) stands for what it uses: a file expanding
    hurray__crc32c_zeros uses hurray__crc32c_shift.

  scripts/check_src_cycles.py               check src/ (exit 1 on a cycle)
  scripts/check_src_cycles.py --order       also print the files, lowest layer first
  scripts/check_src_cycles.py --self-test   prove a cycle is caught on a tiny tree
"""
import argparse
import collections
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from graph_cycles import cycles  # noqa: E402 - the scripts' shared helper


ROOT = pathlib.Path(__file__).resolve().parent.parent

TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<string>(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*")
  | (?P<char>(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<punct>.)
""", re.S | re.X)

# words before a `(` at file scope that do not name the function being defined
NOT_A_NAME = {"__attribute__", "__declspec", "_Alignas", "alignas", "__typeof__", "typeof",
              "sizeof", "_Static_assert", "static_assert", "__asm__", "asm"}


class Unit:
    """What one source file defines and uses."""

    def __init__(self):
        self.functions = set()      # non-static function definitions
        self.statics = set()        # static function definitions
        self.uses = {}              # name -> first line it is used on
        self.expands = {}           # (headers) inline/macro name -> names it uses


def tokens(text, path):
    """[(kind, text, line)] with comments, literals and whitespace dropped;
    a preprocessor directive is one ('pp', [(kind, text, line)], line) token."""
    out, line, i, n = [], 1, 0, len(text)
    at_line_start = True
    directive = None  # tokens of the current preprocessor line
    while i < n:
        m = TOKEN.match(text, i)
        if m is None:  # an unterminated comment or literal
            raise SystemExit(f"check_src_cycles: {path}:{line}: cannot tokenize")
        kind, val = m.lastgroup, m.group()
        i = m.end()
        if kind == "nl":
            line += 1
            if directive is not None and not (directive[1] and directive[1][-1][1] == "\\"):
                out.append(("pp", directive[1], directive[0]))
                directive = None
            elif directive is not None:
                directive[1].pop()  # the line continuation
            at_line_start = directive is None
            continue
        if kind in ("ws",):
            continue
        if kind in ("lcomment", "bcomment"):
            line += val.count("\n")
            continue
        if kind in ("string", "char"):
            val = '""'
        tok = (kind, val, line)
        if directive is not None:
            directive[1].append(tok)
        elif at_line_start and val == "#":
            directive = (line, [])
        else:
            out.append(tok)
        at_line_start = False
    if directive is not None:
        out.append(("pp", directive[1], directive[0]))
    return out


def parse(text, path):
    """The Unit of one file (a .c or a header)."""
    unit = Unit()

    def use(name, line, into):
        into.setdefault(name, line)

    def directive(toks):
        # #define NAME body / #define NAME(args) body: the body's names
        if len(toks) >= 2 and toks[0][1] == "define" and toks[1][0] == "ident":
            name, body = toks[1][1], toks[2:]
            if body and body[0][1] == "(" and body[0][2] == toks[1][2]:
                depth = 0
                for k, t in enumerate(body):  # skip the parameter list
                    depth += {"(": 1, ")": -1}.get(t[1], 0)
                    if depth == 0:
                        body = body[k + 1:]
                        break
            names = {t[1]: t[2] for t in body if t[0] == "ident"}
            unit.expands.setdefault(name, {}).update(names)
            for nm, ln in names.items():
                use(nm, ln, unit.uses)

    depth = 0
    decl = []            # tokens of the current file-scope declaration
    assigned = False     # an `=` at file scope in the current declaration
    body_of = None       # (name, static, inline) of the function whose body is open
    body_uses = None
    for tok in tokens(text, path):
        kind, val, line = tok
        if kind == "pp":
            directive(val)
            continue
        if depth == 0:
            if val == "{":
                fn = function_head(decl) if not assigned else None
                if fn is not None:
                    body_of, body_uses = fn, {}
                depth = 1
                continue
            if val == ";":
                decl, assigned = [], False
                continue
            if val == "=":
                assigned = True
            elif kind == "ident" and assigned:
                use(val, line, unit.uses)
            decl.append(tok)
            continue
        if val == "{":
            depth += 1
        elif val == "}":
            depth -= 1
            if depth == 0:
                if body_of is not None:
                    name, static, inline = body_of
                    (unit.statics if static else unit.functions).add(name)
                    if inline:
                        unit.expands.setdefault(name, {}).update(body_uses)
                    for nm, ln in body_uses.items():
                        use(nm, ln, unit.uses)
                    # a function definition ends its declaration; a struct,
                    # union or enum body goes on to its declarators
                    decl, assigned = [], False
                body_of = body_uses = None
        elif kind == "ident":
            use(val, line, body_uses if body_of is not None else unit.uses)
    if depth != 0:
        raise SystemExit(f"check_src_cycles: {path}: unbalanced braces (depth {depth} at the "
                         f"end; a `{{` inside an #if branch?)")
    # a function is no use of itself (recursion), nor is a static one of another file
    for name in unit.functions | unit.statics:
        unit.uses.pop(name, None)
    return unit


def function_head(decl):
    """(name, static, inline) when the file-scope tokens before a `{` are the
    head of a function definition, else None (struct, enum, initializer)."""
    if not decl or decl[-1][1] != ")":
        return None
    words = {t[1] for t in decl if t[0] == "ident"}
    paren = 0
    for k, (kind, val, _) in enumerate(decl):
        if val == "(":
            if paren == 0 and k > 0 and decl[k - 1][0] == "ident" \
                    and decl[k - 1][1] not in NOT_A_NAME \
                    and not decl[k - 1][1].isupper():  # HURRAY_PRINTF(2, 3) and the like
                return decl[k - 1][1], "static" in words, "inline" in words or "__inline" in words
            paren += 1
        elif val == ")":
            paren -= 1
    return None


def load(src, headers):
    """({rel .c: Unit}, {name: names it expands to}) of a tree."""
    units = {p.relative_to(src.parent).as_posix(): parse(p.read_text(encoding="utf-8"), p)
             for p in sorted(src.rglob("*.c"))}
    expands = {}
    for folder in headers:
        for h in sorted(folder.rglob("*.h")):
            for name, names in parse(h.read_text(encoding="utf-8"), h).expands.items():
                expands.setdefault(name, {}).update(names)
    return units, expands


def call_graph(units, expands):
    """{file: {callee file: (function, line)}}: one function per edge, the first
    in name order."""
    owner = collections.defaultdict(set)
    for f, u in units.items():
        for name in u.functions:
            owner[name].add(f)
    graph = {f: {} for f in units}
    for f, u in sorted(units.items()):
        seen = set()
        todo = [(name, line, name) for name, line in sorted(u.uses.items())]
        while todo:
            name, line, via = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in u.statics or name in u.functions:
                continue  # the file's own
            for g in sorted(owner.get(name, ())):
                label = name if via == name else f"{name} (through {via})"
                prev = graph[f].get(g)
                if prev is None or (label, line) < prev:
                    graph[f][g] = (label, line)
            for inner in sorted(expands.get(name, {})):
                todo.append((inner, line, via))
    return graph


def problems_of(graph):
    out = []
    for comp in cycles(graph):
        edges = [f"    {f} -> {g}: {graph[f][g][0]} ({f}:{graph[f][g][1]})"
                 for f in comp for g in sorted(graph[f]) if g in comp]
        out.append(f"cycle among {len(comp)} files: " + ", ".join(comp) + "\n" + "\n".join(edges))
    return out


def order(graph):
    """Files, each after every file it calls (the graph must be acyclic)."""
    done, out = set(), []

    def visit(v):
        if v in done:
            return
        done.add(v)
        for w in sorted(graph[v]):
            visit(w)
        out.append(v)

    for v in sorted(graph):
        visit(v)
    return out


def check(root, show_order=False, quiet=False):
    src = root / "src"
    if not src.is_dir():
        raise SystemExit(f"check_src_cycles: no {src}")
    units, expands = load(src, [d for d in (src, root / "include") if d.is_dir()])
    graph = call_graph(units, expands)
    problems = problems_of(graph)
    if problems:
        if not quiet:
            print("src/ call graph: FAILED (files call each other in a circle; move the shared "
                  "code down a layer, docs/internals/extending.md)")
            for p in problems:
                print("  " + p)
        return 1
    if not quiet:
        edges = sum(len(v) for v in graph.values())
        print(f"src/ call graph: ok ({len(units)} files, {edges} cross-file edges, no cycle)")
        if show_order:
            for f in order(graph):
                print(f"  {f}" + (" -> " + ", ".join(sorted(graph[f])) if graph[f] else ""))
    return 0


def self_test():
    def tree(files):
        d = tempfile.TemporaryDirectory(prefix="hurray-cycles-")
        for rel, text in files.items():
            p = pathlib.Path(d.name) / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        return d

    header = ("#define CALL_LOW(x) hurray__low(x)\n"
              "static inline int hurray__via(int x) { return hurray__low(x) + 1; }\n")
    base = {
        "src/internal/h.h": header,
        "src/a/low.c": ("static int hurray__top(int x) { return x; }\n"  # hides top.c's
                        "int hurray__low(int x) { return hurray__top(x); }\n"),
        "src/a/mid.c": ("#include \"internal/h.h\"\n"
                        "/* hurray__top() in a comment is no use */\n"
                        "static const char *s = \"hurray__top()\";\n"
                        "int hurray__mid(int x) { return CALL_LOW(x) + hurray__via(x); }\n"),
        "src/b/top.c": ("typedef int (*fn)(int);\n"
                        "static int hurray__helper(int x) { return x; }\n"
                        "static const fn table[] = { hurray__mid, hurray__helper };\n"
                        "int hurray__top(int x) {\n  return table[0](x);\n}\n"),
    }
    # acyclic: low <- mid <- top; the comment, the string and a static name of
    # another file make no edge
    with tree(base) as d:
        units, expands = load(pathlib.Path(d) / "src", [pathlib.Path(d) / "src"])
        graph = call_graph(units, expands)
        assert set(graph["src/a/mid.c"]) == {"src/a/low.c"}, graph
        assert set(graph["src/b/top.c"]) == {"src/a/mid.c"}, graph  # through the table
        assert graph["src/a/low.c"] == {}, graph
        assert check(pathlib.Path(d), quiet=True) == 0
    # a cycle through a macro and a table: low calls top back
    cyclic = dict(base)
    cyclic["src/a/low.c"] = ("int hurray__top(int x);\n"      # a prototype alone is no use
                             "int hurray__low(int x) { return x; }\n"
                             "int hurray__back(int x) { return x ? hurray__top(x - 1) : 0; }\n")
    with tree(cyclic) as d:
        units, expands = load(pathlib.Path(d) / "src", [pathlib.Path(d) / "src"])
        problems = problems_of(call_graph(units, expands))
        assert len(problems) == 1 and all(f in problems[0] for f in
                                          ("src/a/low.c", "src/a/mid.c", "src/b/top.c")), problems
        assert "src/a/low.c -> src/b/top.c: hurray__top" in problems[0], problems
        assert "src/a/mid.c -> src/a/low.c: hurray__low" in problems[0], problems
        assert check(pathlib.Path(d), quiet=True) == 1
    # a prototype alone makes no edge
    proto = dict(base)
    proto["src/a/low.c"] = "int hurray__top(int x);\nint hurray__low(int x) { return x; }\n"
    with tree(proto) as d:
        assert check(pathlib.Path(d), quiet=True) == 0
    # a direct cycle of two files, the use being a function pointer only
    pair = {"src/x.c": "int hurray__y(void);\nint hurray__x(void) { return hurray__y(); }\n",
            "src/y.c": ("int hurray__x(void);\nstatic int (*p)(void) = hurray__x;\n"
                        "int hurray__y(void) { return 0; }\n")}
    with tree(pair) as d:
        units, expands = load(pathlib.Path(d) / "src", [])
        problems = problems_of(call_graph(units, expands))
        assert len(problems) == 1 and "src/y.c -> src/x.c: hurray__x" in problems[0], problems
    print("check_src_cycles self-test: ok (a three-file cycle through a header macro, an "
          "inline function and a table caught; a two-file cycle through a function pointer "
          "caught; comments, strings, prototypes and static names make no edge)")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--order", action="store_true", help="print the files, lowest layer first")
    ap.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    return check(pathlib.Path(args.root), show_order=args.order)


if __name__ == "__main__":
    sys.exit(main())
