#!/usr/bin/env python3
"""Checks that every public function of include/hurray/*.h is documented.

For each header it collects the HURRAY_API functions and the static inline
helpers (hurray_kv_string, ...), then fails when:

  1. a name appears nowhere in docs/ (as a whole word);
  2. a HURRAY_API function has no declaration in a ```c block of the C API
     reference (docs/c-api.md, docs/c-api/*.md) identical to the header's,
     once whitespace is normalised; a signature changed in a header without
     the reference following fails here;
  3. an inline helper is not shown as `name(` in the C API reference;
  4. a public header is not named in docs/c-api.md;
  5. the status table of docs/c-api.md differs from include/hurray/status.h
     (scripts/gen_status_table.py);
  6. with --lib LIB: the names differ from the symbols LIB exports (nm -D).

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
REFERENCE = [DOCS / "c-api.md"] + sorted((DOCS / "c-api").glob("*.md"))

sys.path.insert(0, str(ROOT / "scripts"))
import gen_status_table  # noqa: E402


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def normalise(decl):
    """One canonical spelling of a declaration: single spaces, none around
    punctuation, no HURRAY_API, no trailing semicolon."""
    decl = decl.replace("HURRAY_API", " ")
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
    c_api_path = DOCS / "c-api.md"
    c_api = c_api_path.read_text(encoding="utf-8") if c_api_path.exists() else ""
    for h in headers:
        if f"hurray/{h.name}" not in c_api:
            problems.append(f"docs/c-api.md does not name the header hurray/{h.name}")

    status_rc = gen_status_table.check(
        gen_status_table.render(gen_status_table.table_rows(
            gen_status_table.STATUS_H.read_text(encoding="utf-8"))))
    if status_rc != 0:
        problems.append("docs/c-api.md: status table out of date (scripts/gen_status_table.py --write)")

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
          f"{len(headers)} headers, all documented; status table up to date"
          + (f"; exports of {args.lib} match" if args.lib else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
