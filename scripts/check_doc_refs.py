#!/usr/bin/env python3
"""Checks that comments and docs resolve inside the checkout.

A reader of this repository has the checkout and the public specification
(pgillet/hurray), nothing else. This check fails (exit status 1, one
"path:line: rule: text" line per problem) when a tracked file under docs/,
include/, src/, cli/, python/, tests/, fuzz/, scripts/, examples/, bench/,
.github/, or README.md / COMPAT-MATRIX.md:

  decision-number   cites a decision by number ("D5", "DECISIONS D2, D4"):
                    point at a heading of docs/internals/decisions.md instead
                    ("docs/internals/decisions.md § Limits"). A number is the letter D
                    and one or two digits as a whole word: not inside an
                    identifier, a path or a number ("3D", "0xD5", "CRC_D2"),
                    and not a byte of a hex dump ("0A D6 47 3F");
  decisions-file    names the DECISIONS file (the word in capitals);
  spec-map          cites the SPEC-MAP digest: cite the specification's file
                    and section instead (docs/spec/<file>.md § <Section>);
  outside-checkout  names a path beside the checkout (../shared/...,
                    /work/shared) other than ../shared/golden, the golden
                    corpus the tests read when it is present;
  requirement-file  names a requirement text that is not in the checkout
                    (requirements/, python-bindings.txt, multi-buffer-tensors
                    other than the specification's cookbook page
                    docs/cookbook/multi-buffer-tensors.md,
                    integrating-a-python-library);
  doc-path          names a page docs/<path>.md that the checkout does not hold
                    (a page moved or removed and a comment left behind), other
                    than the specification's docs/spec/, docs/impl/, docs/adr/
                    and docs/cookbook/.

It also fails when a relative Markdown link of docs/**/*.md, README.md or
COMPAT-MATRIX.md leads nowhere:

  link              the target is not a tracked file or folder of the
                    checkout, or its #anchor is not a heading (GitHub's
                    anchor of it) or <a name/id> of that .md page.

This file is exempt from the pattern rules (it has to spell them).

  scripts/check_doc_refs.py [--exclude PATH]... [--root DIR]
  scripts/check_doc_refs.py --self-test
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
SELF = "scripts/check_doc_refs.py"

SCANNED_DIRS = ("docs", "include", "src", "cli", "python", "tests", "fuzz", "scripts",
                "examples", "bench", ".github")
SCANNED_FILES = ("README.md", "COMPAT-MATRIX.md")

# A D-number as a whole word: not preceded by a word character or a character
# that continues a path, an identifier or a number, not followed by one.
DECISION_NUMBER = re.compile(r"(?<![\w./\\#$%+-])D[1-9][0-9]?(?![\w])")
HEX_BYTE = re.compile(r"[0-9A-Fa-f]{2}")

PATTERNS = [
    ("decisions-file", re.compile(r"\bDECISIONS\b")),
    ("spec-map", re.compile(r"\bSPEC[-_ ]MAP\b")),
    ("outside-checkout", re.compile(r"\.\./shared\b(?!/golden\b)|/work/shared\b")),
    ("requirement-file",
     re.compile(r"(?<![\w./-])requirements/|python-bindings\.txt|"
                r"multi-buffer-tensors(?!\.md)|integrating-a-python-library")),
]


# A page of this checkout's docs/ named in text; the specification's folders are not ours.
DOC_PATH = re.compile(r"(?<![\w./-])docs/(?!(?:spec|impl|adr|cookbook)/)[\w./-]*?\.md(?![\w-])")


def doc_path_problems(rel, text, tracked):
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in DOC_PATH.finditer(line):
            if m.group(0) not in tracked["files"]:
                problems.append((rel, n, "doc-path", f"{m.group(0)}: no such page in the checkout"))
    return problems


def decision_numbers(line):
    """The D-numbers of one line that are not bytes of a hex dump."""
    hits = []
    for m in DECISION_NUMBER.finditer(line):
        token = m.group(0)
        if len(token) == 2:  # D0..D9 is also a hex byte: look at its neighbours
            before = line[:m.start()].split()
            after = line[m.end():].split()
            near = before[-1:] + after[:1]
            if (line[m.start() - 1:m.start()] in ("", " ", "\t")
                    and any(HEX_BYTE.fullmatch(t) for t in near)):
                continue
        hits.append(token)
    return hits


def pattern_problems(rel, text):
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        for token in decision_numbers(line):
            problems.append((rel, n, "decision-number",
                             f"{token!r}: name a heading of docs/internals/decisions.md instead"))
        for rule, pat in PATTERNS:
            for m in pat.finditer(line):
                problems.append((rel, n, rule, repr(m.group(0))))
    return problems


# ---- links ----------------------------------------------------------------------------

FENCE = re.compile(r"^ {0,3}(```|~~~)")


# An inline code span: it may go on over a line break, not over a blank line.
CODE_SPAN = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.S)


def blank_code(text):
    """The text with fenced blocks and inline code spans blanked (same line count)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(line)
    return CODE_SPAN.sub(lambda c: re.sub(r"[^\n]", " ", c.group(0)), "\n".join(out))


def slug(heading):
    """GitHub's anchor of a heading's text."""
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    s = re.sub(r"<[^>]+>", "", s)                             # inline HTML
    s = s.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    seen, out = {}, set()
    fence = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        h = re.match(r" {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            base = slug(h.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.add(base if k == 0 else f"{base}-{k}")
        for a in re.finditer(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"", line):
            out.add(a.group(1))
        # a mkdocstrings block ("::: hurray.load") renders the object under the anchor of
        # its path, and each of its members under its own (hurray.File.verify)
        d = re.match(r"::: ([\w.]+)\s*$", line)
        if d:
            out.add(d.group(1))
            out.add(d.group(1) + ".*")
    return out


def has_anchor(found, anchor):
    return anchor in found or any(
        a.endswith(".*") and anchor.startswith(a[:-1]) for a in found)


INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")


def link_targets(text):
    """(line number, target) of every link of a Markdown text, code excluded."""
    for n, line in enumerate(blank_code(text).split("\n"), 1):
        for m in INLINE_LINK.finditer(line):
            yield n, m.group(1).strip("<>")
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(1).strip("<>")


def link_problems(root, rel, text, tracked, read):
    problems = []
    for n, target in link_targets(text):
        if not target or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|//", target):
            continue  # http:, https:, mailto:, protocol-relative
        path, _, anchor = target.partition("#")
        path = urllib.parse.unquote(path)
        here = pathlib.PurePosixPath(rel).parent
        if path:
            dest = os.path.normpath(str(here / path)).replace(os.sep, "/")
        else:
            dest = rel
        if dest == ".." or dest.startswith("../") or os.path.isabs(path):
            problems.append((rel, n, "link", f"{target}: outside the checkout"))
            continue
        if dest != "." and dest not in tracked["files"] and dest not in tracked["dirs"]:
            problems.append((rel, n, "link", f"{target}: no such file in the checkout"))
            continue
        if anchor and dest.endswith(".md") and dest in tracked["files"]:
            if not has_anchor(anchors(read(dest)), urllib.parse.unquote(anchor)):
                problems.append((rel, n, "link", f"{target}: no heading #{anchor} in {dest}"))
    return problems


# ---- the tree -------------------------------------------------------------------------

def tracked_files(root):
    """Tracked files (git), or every file when root is not a git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        files = [f for f in out.decode("utf-8", "surrogateescape").split("\0") if f]
        if files:
            return sorted(f for f in files if (root / f).is_file())
    except (OSError, subprocess.CalledProcessError):
        pass
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and ".git" not in p.relative_to(root).parts)


def scanned(rel):
    return rel in SCANNED_FILES or rel.split("/", 1)[0] in SCANNED_DIRS


def markdown_checked(rel):
    return rel in SCANNED_FILES or (rel.startswith("docs/") and rel.endswith(".md"))


def excluded(rel, excludes):
    return any(rel == e or rel.startswith(e.rstrip("/") + "/") for e in excludes)


def check(root, excludes=()):
    root = pathlib.Path(root)
    files = tracked_files(root)
    dirs = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    tracked = {"files": set(files), "dirs": dirs}
    cache = {}

    def read(rel):
        if rel not in cache:
            data = (root / rel).read_bytes()
            cache[rel] = None if b"\0" in data[:8192] else data.decode("utf-8", "replace")
        return cache[rel]

    problems = []
    for rel in files:
        if not scanned(rel) or excluded(rel, excludes):
            continue
        text = read(rel)
        if text is None:
            continue  # binary: vectors, fuzz corpus
        if rel != SELF:
            problems += pattern_problems(rel, text)
            problems += doc_path_problems(rel, text, tracked)
        if markdown_checked(rel):
            problems += link_problems(root, rel, text, tracked, read)
    return problems


# ---- self-test ------------------------------------------------------------------------

def self_test():
    """Runs the check on a synthetic tree with one instance of every problem (and
    every look-alike that must pass), and asserts what it reports."""
    bad = {
        "docs/a.md": [
            "# Title: `x.y`",                                   # 1
            "strict by default (DECISIONS D3)",                 # 2  decision-number, decisions-file
            "as decided (D5) and per D2's reading",             # 3  2 x decision-number
            "see ../shared/DECISIONS.md",                       # 4  outside-checkout, decisions-file
            "the table of SPEC-MAP 7.2",                        # 5  spec-map
            "[x](missing.md) [y](b.md#nope) [z](b.md#sec-two)", # 6  2 x link
            "[up](../../elsewhere.md)",                         # 7  link (outside)
            "requirements/python-bindings.txt and multi-buffer-tensors.txt",  # 8: 3 hits
            "[self](#title-xy) [bad self](#title)",             # 9  link (bad self)
            "a code span that starts `here and",                 # 10
            "ends` [gone](missing.md) `x`, then docs/old.md",    # 11 link, doc-path
            "[api](b.md#pkg.Other) [api2](b.md#pkg.Thingy)",    # 12 2 x link (no such block)
        ],
        "src/x.c": [
            "/* DECISIONS D2, D4, D7,",                         # 1: decisions-file + 3
            " * D8): and integrating-a-python-library */",      # 2: decision + requirement
            "/* /work/shared/golden is a machine path */",      # 3: outside-checkout
            "/* docs/a.md, docs/guide/moved.md */",             # 4: doc-path (moved.md)
        ],
    }
    good = {
        "docs/b.md": [
            "# B",
            "## Sec: two",
            "[ok](a.md) [ok2](a.md#title-xy) [dir](../src/) [w](https://x.y/D5)",
            "```",
            "[in code](nowhere.md)",
            "```",
            "`[inline](nowhere.md)` a 3D view, 0xD5, CRC_D2, v1.D3, docs/D4/x",
            "golden corpus: ../shared/golden/files/basic.hrry, $ROOT/../shared/golden",
            "spec: docs/impl/python-bindings.md, docs/cookbook/multi-buffer-tensors.md,",
            "docs/adr/ADR-035-python-streaming-api.md, [s](b.md#sec-two) <a name=\"n1\"></a>",
            "[anchor](#n1)",
            "see docs/a.md and the spec's docs/spec/data-model.md",
            "::: pkg.Thing",
            "[api](b.md#pkg.Thing) [member](b.md#pkg.Thing.method)",
        ],
        "tests/cli/expected/dump.txt": [
            "     16457  0A D6 47 3F                 index_crc32c",
            "  D6 47",
        ],
    }
    want = sorted([
        ("docs/a.md", 2, "decision-number"), ("docs/a.md", 2, "decisions-file"),
        ("docs/a.md", 3, "decision-number"), ("docs/a.md", 3, "decision-number"),
        ("docs/a.md", 4, "decisions-file"), ("docs/a.md", 4, "outside-checkout"),
        ("docs/a.md", 5, "spec-map"),
        ("docs/a.md", 6, "link"), ("docs/a.md", 6, "link"),
        ("docs/a.md", 7, "link"),
        ("docs/a.md", 8, "requirement-file"), ("docs/a.md", 8, "requirement-file"),
        ("docs/a.md", 8, "requirement-file"),
        ("docs/a.md", 9, "link"),
        ("docs/a.md", 11, "link"), ("docs/a.md", 11, "doc-path"),
        ("docs/a.md", 12, "link"), ("docs/a.md", 12, "link"),
        ("src/x.c", 1, "decision-number"), ("src/x.c", 1, "decision-number"),
        ("src/x.c", 1, "decision-number"), ("src/x.c", 1, "decisions-file"),
        ("src/x.c", 2, "decision-number"), ("src/x.c", 2, "requirement-file"),
        ("src/x.c", 3, "outside-checkout"), ("src/x.c", 4, "doc-path"),
    ])
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, lines in {**bad, **good}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        (root / "src" / "blob.bin").write_bytes(b"\0DECISIONS D5\0")  # binary: skipped
        got = sorted((f, n, r) for f, n, r, _ in check(root))
        assert got == want, "self-test: got\n  %s\nwanted\n  %s" % (
            "\n  ".join(map(str, got)), "\n  ".join(map(str, want)))
        # The exit status: 1 with the bad files, 0 once they are excluded.
        cmd = [sys.executable, __file__, "--root", tmp]
        bad_run = subprocess.run(cmd, capture_output=True, text=True)
        assert bad_run.returncode == 1, bad_run
        assert "docs/a.md:5: spec-map:" in bad_run.stdout, bad_run.stdout
        ok_run = subprocess.run(cmd + ["--exclude", "docs/a.md", "--exclude", "src"],
                                capture_output=True, text=True)
        assert ok_run.returncode == 0, ok_run
    print("check_doc_refs self-test: OK (%d problems found as expected)" % len(want))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exclude", action="append", default=[],
                    help="a tracked path (file or folder) not to check; repeatable")
    ap.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker on synthetic bad input")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return 0
    problems = check(args.root, args.exclude)
    for rel, n, rule, what in problems:
        print(f"{rel}:{n}: {rule}: {what}")
    if problems:
        print(f"check_doc_refs: {len(problems)} problem(s); docs/internals/decisions.md holds the "
              "decisions, the specification is pgillet/hurray (docs/spec, docs/impl, "
              "docs/adr)", file=sys.stderr)
        return 1
    print("check_doc_refs: every reference resolves inside the checkout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
