#!/usr/bin/env python3
"""Prints the status table of docs/reference/c-api/index.md from include/hurray/status.h.

The one status table of libhurray is the HURRAY_STATUS_TABLE X-macro; this
script reads its rows (name, value, message) and prints them as a markdown
table. docs/reference/c-api/index.md holds the printed table between the lines
<!-- status-table:begin --> and <!-- status-table:end -->.

  scripts/gen_status_table.py            print the table
  scripts/gen_status_table.py --check    fail (exit 1) if docs/reference/c-api/index.md differs
  scripts/gen_status_table.py --write    rewrite the table in docs/reference/c-api/index.md
"""
import argparse
import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
STATUS_H = ROOT / "include" / "hurray" / "status.h"
DOC = ROOT / "docs" / "reference" / "c-api" / "index.md"
BEGIN = "<!-- status-table:begin -->"
END = "<!-- status-table:end -->"

ROW = re.compile(r"X\(\s*([A-Z0-9_]+)\s*,\s*(-?\d+)\s*,\s*(\"(?:[^\"\\]|\\.)*\")\s*\)")


def table_rows(header_text):
    """Returns [(name, value, message)] in table order."""
    start = header_text.find("#define HURRAY_STATUS_TABLE(X)")
    if start < 0:
        raise SystemExit(f"{STATUS_H}: HURRAY_STATUS_TABLE not found")
    # The macro ends at the first line that does not continue with a backslash.
    body = []
    for line in header_text[start:].splitlines():
        body.append(line.rstrip("\\").strip())
        if not line.rstrip().endswith("\\"):
            break
    joined = " ".join(body)
    rows = []
    for name, value, msg in ROW.findall(joined):
        rows.append((name, int(value), ast.literal_eval(msg)))
    if not rows or rows[0][:2] != ("OK", 0):
        raise SystemExit(f"{STATUS_H}: could not parse HURRAY_STATUS_TABLE")
    # Every row has exactly the three columns: a row of another shape is an error.
    if len(re.findall(r"\bX\(", joined)) != len(rows):
        raise SystemExit(f"{STATUS_H}: a HURRAY_STATUS_TABLE row is not X(name, value, message)")
    values = [r[1] for r in rows]
    if len(set(values)) != len(values):
        raise SystemExit(f"{STATUS_H}: duplicate status values")
    return rows


def render(rows):
    out = [
        "| Status | Value | Message (`hurray_status_message`) |",
        "|---|---:|---|",
    ]
    for name, value, msg in rows:
        text = msg.replace("|", "\\|")
        out.append(f"| `HURRAY_{name}` | {value} | {text} |")
    return "\n".join(out) + "\n"


def doc_block(doc_text):
    """Returns (before, table, after) of docs/reference/c-api/index.md around the markers."""
    b = doc_text.find(BEGIN)
    e = doc_text.find(END)
    if b < 0 or e < 0 or e < b:
        raise SystemExit(f"{DOC}: markers {BEGIN} / {END} not found")
    head = doc_text[: b + len(BEGIN)] + "\n"
    return head, doc_text[b + len(BEGIN) : e].strip("\n") + "\n", doc_text[e:]


def check(expected):
    """0 when docs/reference/c-api/index.md holds `expected`, else prints a diff hint and returns 1."""
    _, current, _ = doc_block(DOC.read_text(encoding="utf-8"))
    if current == expected:
        return 0
    import difflib

    sys.stderr.write(
        "docs/reference/c-api/index.md: the status table is out of date with include/hurray/status.h;\n"
        "run scripts/gen_status_table.py --write\n"
    )
    sys.stderr.writelines(
        difflib.unified_diff(
            current.splitlines(True), expected.splitlines(True), "docs/reference/c-api/index.md", "status.h"
        )
    )
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="fail if docs/reference/c-api/index.md is out of date")
    g.add_argument("--write", action="store_true", help="rewrite the table in docs/reference/c-api/index.md")
    args = ap.parse_args()
    table = render(table_rows(STATUS_H.read_text(encoding="utf-8")))
    if args.check:
        rc = check(table)
        if rc == 0:
            print("docs/reference/c-api/index.md: status table up to date")
        return rc
    if args.write:
        head, _, tail = doc_block(DOC.read_text(encoding="utf-8"))
        DOC.write_text(head + table + tail, encoding="utf-8")
        return 0
    sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
