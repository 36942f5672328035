"""Runs the code blocks of a Markdown page, so that the docs cannot rot.

Used by tests/python/test_recipes.py (docs/guide/recipes.md, one section at a time)
and tests/docs/test_guide_code.py (every guide page, one page at a time).

What runs, in page order, in one scratch folder (the current directory):

- ```python blocks, all in one namespace; a block that starts with a `>>>` prompt
  is an interactive session, run as a doctest: what it shows must be what it gives;
- ```sh blocks, each with `bash -e -o pipefail` (exit status 0 expected);
- ```c blocks: a block with `main` is compiled against the C library of the
  build (build/libhurray.a) and run; a block preceded by
  `<!-- guide: python-extension NAME -->` is compiled into the extension
  module NAME in the scratch folder, which later Python blocks can import.

Snippet lines (`--8<-- "path"`, MkDocs' pymdownx.snippets, paths from the
root of the repository) are expanded first, so a page that shows a file of the
repository runs that file.

Markers (HTML comments, invisible on the site):

- `<!-- guide: needs MOD[, MOD...] -->`: the unit (page or section) it is in is
  skipped, saying which module is missing, when one cannot be imported;
- `<!-- guide: servers KIND[, KIND...] -->` (`s3`, `http`): the unit reads from
  servers its runner starts before it and stops after it (tests/docs/test_guide_code.py:
  a SeaweedFS S3 endpoint and an nginx, each holding `models/tiny.hrry`; the page
  finds them as a deployment would, through `AWS_ENDPOINT_URL` and the other AWS
  variables, and `MODELS_URL` for HTTP);
- `<!-- guide: skip REASON -->`, on the line before a block: the block is shown
  but not run (a REASON is required: skipping is rare and says why);
- `<!-- guide: exit N -->`, on the line before a ```sh block: the status the
  commands must end with (a command that refuses, on purpose);
- `<!-- guide: python-extension NAME -->`, before a ```c block, as above;
- `<!-- quote: examples/c/NAME.c -->`, before a ```c block: the block is an
  excerpt of that example program, which the C suite builds and runs (ctest
  `example_NAME`). It is not run here; it must be a run of consecutive lines of
  the file, verbatim (scripts/check_api_docs.py checks the same).

A failure names the page and the line: `docs/guide/quickstart.md:42: ...`.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,})(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ ]*$",
                   re.M | re.S)
MARK = re.compile(r"<!--\s*guide:\s*(?P<kind>[\w-]+)\s*(?P<arg>.*?)\s*-->")
QUOTE = re.compile(r"<!--\s*quote:\s*(?P<arg>\S+)\s*-->")
SNIPPET = re.compile(r'^(?P<indent>[ ]*)--8<--\s+"(?P<path>[^"]+)"\s*$', re.M)
RUNNABLE = {"python", "sh", "c"}
KNOWN_MARKS = {"needs", "servers", "skip", "exit", "python-extension"}
UNIT_MARKS = {"needs", "servers"}   # of the unit, not of the block after them


class PageError(AssertionError):
    """A block of a page failed: the message starts with page:line."""


@dataclass
class Block:
    lang: str
    code: str
    line: int                      # line of the block's first code line, 1-based
    marks: dict = field(default_factory=dict)


@dataclass
class Unit:
    page: str                      # the page, from the repository root
    title: str
    blocks: list
    needs: list
    servers: list = field(default_factory=list)


def expand_snippets(text, root=ROOT):
    """pymdownx.snippets' block form, with paths from the repository root."""
    def include(m):
        path = root / m.group("path")
        if not path.is_file():
            raise PageError(f"snippet {m.group('path')!r} not found")
        body = path.read_text()
        return "\n".join(m.group("indent") + line for line in body.rstrip("\n").split("\n"))
    return SNIPPET.sub(include, text)


def _marks_before(text, start):
    """The markers on the lines right above offset `start` (blank lines allowed)."""
    marks = {}
    lines = text[:start].rstrip("\n").split("\n")
    while lines:
        line = lines.pop().strip()
        if not line:
            continue
        q = QUOTE.fullmatch(line)
        if q:
            marks["quote"] = q.group("arg")
            continue
        m = MARK.fullmatch(line)
        if not m or m.group("kind") in UNIT_MARKS:
            break
        marks[m.group("kind")] = m.group("arg")
    return marks


def check_quote(block, where):
    """A quoted excerpt is a run of consecutive lines of its file, verbatim."""
    src = ROOT / block.marks["quote"]
    if not src.is_file():
        raise PageError(f"{where}: quotes {block.marks['quote']}, which does not exist")
    want = [ln.rstrip() for ln in block.code.rstrip("\n").split("\n")]
    have = [ln.rstrip() for ln in src.read_text().split("\n")]
    if not any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1)):
        raise PageError(f"{where}: the excerpt of {block.marks['quote']} no longer matches "
                        "the file")


def blocks(text, where="page"):
    """Every fenced block of a runnable language in `text` (snippets expanded)."""
    out = []
    for m in FENCE.finditer(text):
        lang = m.group("lang")
        if lang not in RUNNABLE:
            continue
        line = text.count("\n", 0, m.start("body")) + 1
        marks = _marks_before(text, m.start())
        body = m.group("body")
        indent = m.group("indent")
        if indent:
            body = "\n".join(ln[len(indent):] if ln.startswith(indent) else ln
                             for ln in body.split("\n"))
        for kind, arg in marks.items():
            if kind == "skip" and not arg:
                raise PageError(f"{where}:{line}: 'guide: skip' needs a reason")
        out.append(Block(lang, body, line, marks))
    for m in MARK.finditer(text):
        if m.group("kind") not in KNOWN_MARKS:
            line = text.count("\n", 0, m.start()) + 1
            raise PageError(f"{where}:{line}: unknown marker 'guide: {m.group('kind')}'")
    return out


def _needs(text, kind="needs"):
    out = []
    for m in MARK.finditer(text):
        if m.group("kind") == kind:
            out += [n for n in re.split(r"[,\s]+", m.group("arg")) if n]
    return out


def page_unit(path, root=ROOT):
    """The whole page as one unit: its blocks run in order in one namespace."""
    text = expand_snippets(Path(path).read_text(), root)
    rel = _rel(path, root)
    return Unit(rel, rel, blocks(text, rel), _needs(text), _needs(text, "servers"))


def section_units(path, root=ROOT):
    """One unit per `## ` section; line numbers stay the page's."""
    text = expand_snippets(Path(path).read_text(), root)
    rel = _rel(path, root)
    heads = [m.start() for m in re.finditer(r"^## ", text, flags=re.M)] + [len(text)]
    units = []
    for a, b in zip(heads, heads[1:]):
        part = "\n" * text.count("\n", 0, a) + text[a:b]   # keep the page's line numbers
        title = text[a + 3:text.index("\n", a)].strip()
        found = blocks(part, rel)
        if found:
            units.append(Unit(rel, title, found, _needs(part), _needs(part, "servers")))
    return units


def _rel(path, root):
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)


def missing_modules(unit):
    import importlib.util
    return [m for m in unit.needs if importlib.util.find_spec(m) is None]


# ---- running ---------------------------------------------------------------------------

def c_library(build=None):
    """The static C library the C blocks link against, or None when not built."""
    build = Path(build or os.environ.get("HURRAY_BUILD_DIR", ROOT / "build"))
    lib = build / "libhurray.a"
    return lib if lib.is_file() else None


def _cc():
    return os.environ.get("CC", "cc")


def _compile_error(where, proc):
    return PageError(f"{where}: the C example does not compile:\n{proc.stderr[-4000:]}")


def run_c(block, where, workdir, lib):
    src = Path(workdir) / f"example_{block.line}.c"
    src.write_text(block.code)
    common = ["-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}"]
    name = block.marks.get("python-extension")
    if name:  # (not -Wpedantic: CPython's slot tables store functions as void *)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        out = Path(workdir) / f"{name}{suffix}"
        cmd = [_cc(), "-shared", "-fPIC", *common, f"-I{sysconfig.get_paths()['include']}",
               str(src), str(lib), "-o", str(out), "-lm", "-lpthread"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise _compile_error(where, proc)
        return
    if not re.search(r"\bint\s+main\s*\(", block.code):
        raise PageError(f"{where}: a C block must be a whole program (with main) or be marked "
                        "'guide: python-extension NAME'")
    exe = Path(workdir) / f"example_{block.line}"
    cmd = [_cc(), *common, "-Wpedantic", str(src), str(lib), "-o", str(exe), "-lm", "-lpthread"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise _compile_error(where, proc)
    run = subprocess.run([str(exe)], capture_output=True, text=True, cwd=workdir, timeout=120)
    if run.returncode:
        raise PageError(f"{where}: the C example exited with status {run.returncode}:\n"
                        f"{run.stdout[-2000:]}{run.stderr[-2000:]}")


def run_sh(block, where, workdir, env):
    want = int(block.marks.get("exit", "0") or 0)
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=workdir,
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != want:
        raise PageError(f"{where}: the commands exited with status {proc.returncode}, not {want}:\n"
                        f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def run_doctest(block, where_page, ns):
    """A block written as an interactive session (`>>>` prompts): each statement
    runs in the page's namespace and what it prints or shows must match the text
    after it (doctest, with ELLIPSIS and NORMALIZE_WHITESPACE)."""
    import doctest
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    test = doctest.DocTestParser().get_doctest(block.code, ns, where_page, where_page,
                                               block.line - 1)
    out = []
    runner = doctest.DocTestRunner(optionflags=flags)
    runner.run(test, out=out.append, clear_globs=False)
    ns.update(test.globs)  # (a DocTest runs in a copy): later blocks see its names
    if runner.failures:
        raise PageError(f"{where_page}:{block.line}: the session does not give what the page "
                        f"shows:\n{''.join(out)[-4000:]}")


def run_python(block, where_page, ns):
    if block.code.lstrip().startswith(">>>"):
        return run_doctest(block, where_page, ns)
    code = "\n" * (block.line - 1) + block.code
    try:
        exec(compile(code, where_page, "exec"), ns)
    except Exception as exc:
        lines = [fr.lineno for fr in traceback.extract_tb(exc.__traceback__)
                 if fr.filename == where_page]
        line = lines[-1] if lines else block.line
        raise PageError(f"{where_page}:{line}: {type(exc).__name__}: {exc}") from exc


def command_env(workdir):
    """The environment of the sh blocks: the scratch folder's `bin/` first on PATH,
    holding a `hurray` that runs `python -m hurray` with this interpreter when
    the installed command is not on PATH (a checkout run from a staging folder)."""
    env = dict(os.environ)
    if shutil.which("hurray") is None:
        bindir = Path(workdir) / ".bin"
        bindir.mkdir(exist_ok=True)
        shim = bindir / "hurray"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hurray "$@"\n')
        shim.chmod(0o755)
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_unit(unit, workdir, lib=None):
    """Runs every block of `unit` in order with `workdir` as the current folder.
    Returns how many blocks ran."""
    workdir = Path(workdir)
    ns = {"__name__": "__guide__"}
    env = command_env(workdir)
    old_cwd = os.getcwd()
    sys.path.insert(0, str(workdir))
    ran = 0
    try:
        os.chdir(workdir)
        for block in unit.blocks:
            where = f"{unit.page}:{block.line}"
            if "skip" in block.marks:
                continue
            if "quote" in block.marks:  # the C suite runs the whole program
                check_quote(block, where)
                continue
            if block.lang == "python":
                run_python(block, unit.page, ns)
            elif block.lang == "sh":
                run_sh(block, where, workdir, env)
            elif block.lang == "c":
                if lib is None:
                    raise PageError(f"{where}: a C block, and no C library to build it against")
                run_c(block, where, workdir, lib)
            ran += 1
    finally:
        os.chdir(old_cwd)
        sys.path.remove(str(workdir))
    return ran
