"""Checks what a built wheel or sdist of `hurray` contains (tests/packaging/test_wheel.sh).

    python tests/packaging/check_dist.py wheel DIST.whl [--manylinux]
    python tests/packaging/check_dist.py sdist DIST.tar.gz [--source-root DIR]

wheel: the package's Python files (the `hurray` command's subpackage included), type
stubs, py.typed and exactly one compiled extension, the license files in the .dist-info,
the `hurray` console script and the dask.sizeof hook in its entry points, the
hurray-inspect program in the
.data/scripts folder (pip puts it on PATH), nothing else outside those folders (no
headers, static libraries, CMake files or tests) and no vendored shared libraries
(libhurray is linked statically, so auditwheel must have had nothing to graft). With
--manylinux, the platform tag must be a manylinux tag.

sdist: everything the CMake build needs (the top CMakeLists.txt, cmake/, include/, every
source of src/ and python/src/, python/hurray/), the metadata and licenses, the Python
test suite; none of the build folders, VCS data, CI files, fuzz corpora or C test
vectors. With --source-root, every C source and header that git tracks under src/,
include/ and python/ must be in the archive (catches an exclude pattern that is too wide).

Prints one line per failed rule and exits 1 if any failed.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tarfile
import zipfile

failures = []


def rule(cond, what):
    if not cond:
        failures.append(what)


def check_wheel(path, manylinux):
    name = pathlib.Path(path).name
    m = re.fullmatch(r"hurray-([^-]+)-(cp3\d+)-(cp3\d+t?)-(.+)\.whl", name)
    rule(m is not None, f"{name}: not a CPython-specific hurray wheel name")
    if m and manylinux:
        tags = m.group(4).split(".")
        rule(all(re.fullmatch(r"(manylinux_\d+_\d+|manylinux\d+)_(x86_64|aarch64)", t)
                 for t in tags),
             f"{name}: platform tags {tags} are not all manylinux tags")
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    dist_info = [n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")]
    data = [n.split("/")[0] for n in names if n.split("/")[0].endswith(".data")]
    top = {n.split("/")[0] for n in names}
    rule(top == {"hurray", *dist_info, *data} and len(set(dist_info)) == 1
         and len(set(data)) == 1, f"{name}: unexpected top-level entries {sorted(top)}")
    for f in ("__init__.py", "__init__.pyi", "_hurray.pyi", "py.typed", "dtype.py",
              "device.py", "__main__.py", "_writer.py", "_cli/__init__.py",
              "_cli/_formats.py", "_cli/_gguf.py", "_view/server.py", "_view/page.html"):
        rule(f"hurray/{f}" in names, f"{name}: hurray/{f} missing")
    scripts = sorted(n for n in names if data and n.startswith(data[0] + "/")
                     and not n.endswith("/"))
    rule(scripts in ([f"{data[0]}/scripts/hurray-inspect"],
                     [f"{data[0]}/scripts/hurray-inspect.exe"]),
         f"{name}: expected hurray-inspect alone in .data/scripts, found {scripts}")
    if dist_info:
        with zipfile.ZipFile(path) as z:
            try:
                eps = z.read(f"{dist_info[0]}/entry_points.txt").decode()
            except KeyError:
                eps = ""
            if scripts and scripts[0].endswith("hurray-inspect"):
                mode = (z.getinfo(scripts[0]).external_attr >> 16) & 0o111
                rule(mode != 0, f"{name}: {scripts[0]} is not executable")
        rule(re.search(r"^\[console_scripts\]\s*\nhurray\s*=\s*hurray\._cli:main\s*$", eps,
                       re.M) is not None,
             f"{name}: the entry points lack console script hurray = hurray._cli:main")
        rule(re.search(r"^\[dask\.sizeof\]\s*\nhurray\s*=\s*hurray\._pickling:"
                       r"register_dask_sizeof\s*$", eps, re.M) is not None,
             f"{name}: the entry points lack dask.sizeof hurray = "
             f"hurray._pickling:register_dask_sizeof")
    ext = [n for n in names if re.fullmatch(r"hurray/_hurray\..+\.(so|pyd)", n)]
    rule(len(ext) == 1, f"{name}: expected one compiled extension, found {ext}")
    libs = [n for n in names if re.search(r"\.libs/|\.dylibs/|\.dll$|\.so(\.\d+)*$", n)
            and n not in ext]
    rule(not libs, f"{name}: vendored shared libraries {libs} (libhurray should be static)")
    for lic in ("LICENSE", "LICENSE-MIT", "LICENSE-APACHE"):
        rule(any(n.startswith(dist_info[0] + "/") and n.endswith("/" + lic) for n in names)
             if dist_info else False, f"{name}: {lic} missing from the .dist-info")
    stray = [n for n in names if re.search(r"\.(h|c|a|lib|cmake|o|obj)$", n)]
    rule(not stray, f"{name}: build files shipped {stray}")


SDIST_REQUIRED = [
    "pyproject.toml", "PKG-INFO", "CMakeLists.txt", "README.md", "COMPAT-MATRIX.md",
    "LICENSE", "LICENSE-MIT", "LICENSE-APACHE", "cmake/hurray.pc.in",
    "cmake/hurrayConfig.cmake.in", "include/hurray/hurray.h", "src/internal/common.h",
    "src/descriptor/build.c", "python/src/CMakeLists.txt", "python/hurray/__init__.py",
    "cli/CMakeLists.txt", "cli/main.c", "python/hurray/_cli/__init__.py",
    "python/hurray/py.typed", "tests/python/conftest.py", "tests/packaging/smoke.py",
    "tests/vectors/manifest.json",
]
SDIST_FORBIDDEN = [
    r"build[^/]*/", r"dist/", r"\.git/", r"\.git$", r"\.ci/", r"\.github/", r"fuzz/",
    r"bench/", r"tests/c/", r"tests/cxx/", r"_skbuild/", r"\.venv",
    r".*__pycache__/", r".*\.pyc$", r".*\.so$", r"\.pytest_cache/", r"\.hypothesis/",
]


def check_sdist(path, source_root):
    name = pathlib.Path(path).name
    m = re.fullmatch(r"hurray-([^-]+)\.tar\.gz", name)
    rule(m is not None, f"{name}: not a hurray sdist name")
    with tarfile.open(path) as t:
        members = [x.name for x in t.getmembers() if x.isfile()]
    prefix = f"hurray-{m.group(1)}/" if m else ""
    rule(all(n.startswith(prefix) for n in members), f"{name}: files outside {prefix}")
    rel = {n[len(prefix):] for n in members}
    for f in SDIST_REQUIRED:
        rule(f in rel, f"{name}: {f} missing")
    for pat in SDIST_FORBIDDEN:
        bad = sorted(r for r in rel if re.match(pat, r))
        rule(not bad, f"{name}: should not contain {pat} ({len(bad)} files, e.g. {bad[:3]})")
    if source_root is not None:
        tracked = subprocess.run(
            ["git", "-C", str(source_root), "ls-files", "--", "src", "include", "python",
             "cli", "cmake", "CMakeLists.txt"],
            check=True, capture_output=True, text=True).stdout.split()
        if not tracked:
            failures.append(f"git ls-files found nothing under {source_root}")
        missing = sorted(f for f in tracked if f not in rel)
        rule(not missing, f"{name}: tracked build inputs missing from the sdist: {missing}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["wheel", "sdist"])
    ap.add_argument("path")
    ap.add_argument("--manylinux", action="store_true")
    ap.add_argument("--source-root", type=pathlib.Path)
    a = ap.parse_args()
    if a.kind == "wheel":
        check_wheel(a.path, a.manylinux)
    else:
        check_sdist(a.path, a.source_root)
    for f in failures:
        print(f"check_dist: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
