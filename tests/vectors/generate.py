#!/usr/bin/env python3
"""Generates the project's own conformance corpus (tests/vectors/).

    python3 tests/vectors/generate.py           # (re)write valid/, invalid/, manifest.json
    python3 tests/vectors/generate.py --check   # exit 1 if the committed files differ

Python 3 standard library only. The encoder (hrry_encoder.py) is written from
the spec text, independently of the C library, so that the C decoder is tested
against a second reading of the spec. Output is deterministic. See README.md
for the manifest format and the status choices.
"""

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from hrry_encoder import encode, expect  # noqa: E402
from vectors_invalid import all_invalid  # noqa: E402
from vectors_valid import all_valid  # noqa: E402

STATUSES = ("ERR_INVALID_MAGIC", "ERR_VERSION_MISMATCH", "ERR_INVALID_LAYOUT",
            "ERR_INVALID_TYPE", "ERR_INVALID_SYNC_MODE", "ERR_INVALID_BUFFER_TABLE",
            "ERR_BUFFER_SIZE", "ERR_INVALID_QUANTIZATION", "ERR_INVALID_COMPOSITE",
            "ERR_INVALID_SHARD", "ERR_INVALID_STATISTICS")


def _rule(rule):
    return {"document": rule[0], "section": rule[1]}


def build():
    """Returns ({relative path: bytes}, manifest dict)."""
    files = {}
    names = set()
    valid = []
    for name, description, rule, d in all_valid():
        if name in names:
            raise SystemExit("duplicate vector name %s" % name)
        names.add(name)
        enc = encode(d)
        if d.get("append") is None and len(enc.data) != enc.length:
            raise SystemExit("%s: descriptor_length %d != %d bytes" %
                             (name, enc.length, len(enc.data)))
        path = "valid/%s.bin" % name
        files[path] = enc.data
        valid.append({"file": path, "name": name, "description": description,
                      "rule": _rule(rule), "expect": expect(d, enc)})
    invalid = []
    for v in all_invalid():
        name = v["name"]
        if name in names:
            raise SystemExit("duplicate vector name %s" % name)
        names.add(name)
        if v["status"] not in STATUSES:
            raise SystemExit("%s: unknown status %s" % (name, v["status"]))
        enc = encode(v["d"])
        offset = None
        field_offset = None
        if v["field"] is not None:
            if v["field"] not in enc.fields:
                raise SystemExit("%s: no field %r in the encoding" % (name, v["field"]))
            offset = enc.fields[v["field"]]
        if v["field_start"] is not None:
            field_offset = enc.fields[v["field_start"]]
        path = "invalid/%s.bin" % name
        files[path] = enc.data
        entry = {"file": path, "name": name, "description": v["description"],
                 "rule": _rule(v["rule"]), "status": v["status"], "field": v["field"],
                 "offset": offset}
        if field_offset is not None:
            entry["field_offset"] = field_offset
        entry["permissive"] = v["permissive"]
        invalid.append(entry)
    manifest = {
        "format_version": "1.0",
        "generator": "tests/vectors/generate.py",
        "valid": valid,
        "invalid": invalid,
    }
    text = json.dumps(manifest, indent=1, ensure_ascii=True) + "\n"
    files["manifest.json"] = text.encode("ascii")
    return files, manifest


def _existing(root):
    out = {}
    for sub in ("valid", "invalid"):
        d = os.path.join(root, sub)
        if os.path.isdir(d):
            for fn in sorted(os.listdir(d)):
                out["%s/%s" % (sub, fn)] = os.path.join(d, fn)
    m = os.path.join(root, "manifest.json")
    if os.path.exists(m):
        out["manifest.json"] = m
    return out


def check(root, files):
    have = _existing(root)
    problems = []
    for rel, data in sorted(files.items()):
        if rel not in have:
            problems.append("missing: %s" % rel)
            continue
        with open(have[rel], "rb") as f:
            if f.read() != data:
                problems.append("differs: %s" % rel)
    for rel in sorted(set(have) - set(files)):
        problems.append("not generated: %s" % rel)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print("tests/vectors is out of date: run python3 tests/vectors/generate.py",
              file=sys.stderr)
        return 1
    print("tests/vectors: %d files up to date" % len(files))
    return 0


def write(root, files):
    have = _existing(root)
    for rel in sorted(set(have) - set(files)):
        os.remove(have[rel])
    for sub in ("valid", "invalid"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    for rel, data in sorted(files.items()):
        path = os.path.join(root, rel)
        old = None
        if os.path.exists(path):
            with open(path, "rb") as f:
                old = f.read()
        if old != data:
            with open(path, "wb") as f:
                f.write(data)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the files on disk instead of writing them")
    ap.add_argument("--root", default=HERE, help="output folder (default: this script's)")
    args = ap.parse_args(argv)
    files, manifest = build()
    if args.check:
        return check(args.root, files)
    write(args.root, files)
    print("wrote %d valid and %d invalid vectors to %s" %
          (len(manifest["valid"]), len(manifest["invalid"]), args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
