#!/usr/bin/env python3
"""Checks that every public function of include/hurray/*.h is documented.

For each header it collects the HURRAY_API functions and the static inline
helpers (hurray_kv_string, ...), then fails when:

  1. a name appears nowhere in docs/ (as a whole word);
  2. a HURRAY_API function has no declaration in a ```c block of the C API
     reference (docs/reference/c-api/index.md, docs/reference/c-api/*.md) identical to the header's,
     once whitespace is normalised; a signature changed in a header without
     the reference following fails here;
  3. an inline helper is not shown as `name(` in the C API reference;
  4. a public header is not named in docs/reference/c-api/index.md;
  5. the status table of docs/reference/c-api/index.md differs from include/hurray/status.h
     (scripts/gen_status_table.py), or HURRAY_STATUS_MIN_ is not the lowest code;
  6. an excerpt marked <!-- quote: examples/c/x.c --> in the reference or in
     the C library guide (docs/guide/c-library.md) is not a contiguous run of
     lines of that file;
  7. a relative link of the reference (file, or #anchor of a markdown page)
     leads nowhere;
  8. with --lib LIB: the names differ from the symbols LIB exports (nm -D);
  9. a HURRAY_API function returning HurrayStatus is not declared HURRAY_NODISCARD
     (include/hurray/export.h), or one returning anything else is.

  scripts/check_api_docs.py [--lib build/libhurray.so] [--list]
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include" / "hurray"
DOCS = ROOT / "docs"
C_API = DOCS / "reference" / "c-api"
REFERENCE = sorted(C_API.glob("*.md"))  # index.md: conventions, status codes, headers
QUOTING = REFERENCE + [DOCS / "guide" / "c-library.md"]  # pages that quote examples/c/

sys.path.insert(0, str(ROOT / "scripts"))
import gen_status_table  # noqa: E402


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def normalise(decl):
    """One canonical spelling of a declaration: single spaces, none around
    punctuation, no HURRAY_API or HURRAY_NODISCARD, no trailing semicolon."""
    decl = decl.replace("HURRAY_API", " ").replace("HURRAY_NODISCARD", " ")
    decl = re.sub(r"\s+", " ", decl).strip().rstrip(";").strip()
    decl = re.sub(r"\s*([*(),\[\]])\s*", r"\1", decl)
    return decl


def header_api(path):
    """Returns ({name: normalised declaration} of HURRAY_API functions,
    [names of static inline helpers])."""
    text = strip_comments(path.read_text(encoding="utf-8"))
    # Continuation lines belong to their directive: drop whole directives.
    lines, skipping = [], False
    for line in text.splitlines():
        if skipping or line.lstrip().startswith("#"):
            skipping = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    body = "\n".join(lines)
    api = {}
    for m in re.finditer(r"HURRAY_API\s+([^;{}]*?\b(hurray_[a-z0-9_]+)\s*\([^;{}]*\))\s*;", body):
        api[m.group(2)] = normalise(m.group(1))
    inline = re.findall(r"static\s+inline\s+[^;{}()]*?\b(hurray_[a-z0-9_]+)\s*\(", body)
    # Helpers stamped out by a macro: NAME_(hurray_xxx, ...) at top level.
    inline += re.findall(r"^\s*[A-Z][A-Z0-9_]*\(\s*(hurray_[a-z0-9_]+)\s*,", body, flags=re.M)
    return api, inline


def nodiscard_problems(path):
    """Every HURRAY_API function returning HurrayStatus, and no other, is HURRAY_NODISCARD."""
    text = strip_comments(path.read_text(encoding="utf-8"))
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    problems = []
    for m in re.finditer(r"HURRAY_API\s+([^;{}()]*?)\b(hurray_[a-z0-9_]+)\s*\(", text):
        words = m.group(1).split()
        returns_status = [w for w in words if w != "HURRAY_NODISCARD"] == ["HurrayStatus"]
        if returns_status and "HURRAY_NODISCARD" not in words:
            problems.append(f"{path.name}: {m.group(2)} returns HurrayStatus but is not "
                            "declared HURRAY_NODISCARD")
        if not returns_status and "HURRAY_NODISCARD" in words:
            problems.append(f"{path.name}: {m.group(2)} is HURRAY_NODISCARD but does not "
                            "return HurrayStatus")
    return problems


def c_blocks(text):
    return re.findall(r"^```c\s*\n(.*?)^```", text, flags=re.S | re.M)


def documented_declarations():
    """Normalised statements of every ```c block of the reference pages."""
    decls = set()
    for page in REFERENCE:
        if not page.exists():
            continue
        for block in c_blocks(page.read_text(encoding="utf-8")):
            block = strip_comments(block)
            block = "\n".join(l for l in block.splitlines() if not l.lstrip().startswith("#"))
            for stmt in block.split(";"):
                decls.add(normalise(stmt))
    return decls


def quote_problems():
    """Excerpts quoted from example programs must still be in them, verbatim."""
    problems = []
    pat = re.compile(r"<!--\s*quote:\s*(\S+)\s*-->\s*\n```c\s*\n(.*?)^```", re.S | re.M)
    for page in QUOTING:
        if not page.exists():
            continue
        text = page.read_text(encoding="utf-8")
        for m in pat.finditer(text):
            src = ROOT / m.group(1)
            rel = page.relative_to(ROOT)
            if not src.exists():
                problems.append(f"{rel}: quotes {m.group(1)}, which does not exist")
                continue
            want = [l.rstrip() for l in m.group(2).rstrip("\n").splitlines()]
            have = [l.rstrip() for l in src.read_text(encoding="utf-8").splitlines()]
            if not any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1)):
                problems.append(f"{rel}: the excerpt of {m.group(1)} starting "
                                f"{want[0].strip()!r} no longer matches the file")
        if text.count("<!-- quote:") != len(pat.findall(text)):
            problems.append(f"{page.relative_to(ROOT)}: a quote marker is not followed by a "
                            "```c block")
    return problems


def slug(heading):
    """GitHub's anchor of a markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(page):
    seen, out = {}, set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def link_problems():
    problems = []
    for page in REFERENCE:
        if not page.exists():
            continue
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            rel = page.relative_to(ROOT)
            if not dest.exists():
                problems.append(f"{rel}: link to {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{rel}: link to {target}: no such heading")
    return problems


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRBVW" and parts[2].startswith("hurray_"):
            names.add(parts[2])
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", help="shared library whose exports must match HURRAY_API")
    ap.add_argument("--list", action="store_true", help="print every public name and its header")
    args = ap.parse_args()

    headers = sorted(INCLUDE.glob("*.h"))
    api, inline, owner = {}, [], {}
    for h in headers:
        a, i = header_api(h)
        for name in list(a) + i:
            owner[name] = h.name
        api.update(a)
        inline += i
    if args.list:
        for name in sorted(owner):
            print(f"{owner[name]:14} {name}{'' if name in api else '  (inline)'}")

    docs_text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))
    ref_text = "\n".join(p.read_text(encoding="utf-8") for p in REFERENCE if p.exists())
    decls = documented_declarations()
    problems = []

    for name in sorted(owner):
        if not re.search(rf"\b{name}\b", docs_text):
            problems.append(f"{owner[name]}: {name} appears nowhere in docs/")
    for name, decl in sorted(api.items()):
        if decl not in decls:
            problems.append(f"{owner[name]}: no ```c declaration of {name} in the C API "
                            f"reference matches the header:\n    {decl};")
    for name in sorted(set(inline)):
        if not re.search(rf"\b{name}\(", ref_text):
            problems.append(f"{owner[name]}: inline helper {name}( is not shown in the C API "
                            "reference")
    c_api_path = C_API / "index.md"
    c_api = c_api_path.read_text(encoding="utf-8") if c_api_path.exists() else ""
    for h in headers:
        if f"hurray/{h.name}" not in c_api:
            problems.append(f"docs/reference/c-api/index.md does not name the header hurray/{h.name}")

    status_rc = gen_status_table.check(
        gen_status_table.render(gen_status_table.table_rows(
            gen_status_table.STATUS_H.read_text(encoding="utf-8"))))
    if status_rc != 0:
        problems.append("docs/reference/c-api/index.md: status table out of date (scripts/gen_status_table.py --write)")
    status_text = gen_status_table.STATUS_H.read_text(encoding="utf-8")
    lowest = min(r[1] for r in gen_status_table.table_rows(status_text))
    m = re.search(r"HURRAY_STATUS_MIN_\s*=\s*(-?\d+)", status_text)
    if m is None or int(m.group(1)) != lowest:
        problems.append(f"status.h: HURRAY_STATUS_MIN_ must equal the lowest code ({lowest})")
    problems += quote_problems()
    problems += link_problems()
    for h in headers:
        problems += nodiscard_problems(h)

    if args.lib:
        exp = exported(args.lib)
        for name in sorted(set(api) - exp):
            problems.append(f"{owner[name]}: {name} is declared HURRAY_API but {args.lib} "
                            "does not export it")
        for name in sorted(exp - set(api)):
            problems.append(f"{args.lib} exports {name}, which no public header declares")

    if problems:
        print("C API documentation check failed:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"C API docs: {len(api)} functions and {len(set(inline))} inline helpers in "
          f"{len(headers)} headers, all documented; status table up to date; "
          "every status is HURRAY_NODISCARD"
          + (f"; exports of {args.lib} match" if args.lib else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
