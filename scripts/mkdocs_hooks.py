"""MkDocs hooks for the documentation site (mkdocs.yml: hooks).

The pages in docs/ link to files of the repository outside docs/ (a header, an
example program, COMPAT-MATRIX.md at the root). Those links are right in the
checkout (scripts/check_doc_refs.py checks them) but would point nowhere on the
site, and strict mode rejects them. This hook publishes what they point at:

- COMPAT-MATRIX.md becomes the site page COMPAT-MATRIX.md, its links rewritten
  from the root of the repository to the docs folder;
- any other file a page links to becomes a page under source/ showing the file;
  a folder becomes a page listing its files;
- every such link is rewritten to the published page.

A link to something the checkout does not hold is left alone, so the strict
build still fails on it.
"""

import os
import posixpath
import re

from mkdocs.structure.files import File

LINK = re.compile(r"(\]\()([^)\s]+)(\))")
ROOT_PAGES = {"COMPAT-MATRIX.md": "COMPAT-MATRIX.md"}
LANG = {".c": "c", ".h": "c", ".py": "python", ".sh": "sh", ".toml": "toml", ".txt": "text",
        ".json": "json", ".cpp": "cpp"}

_published = {}  # repository path -> site page (docs-relative)


def _root(config):
    """The repository: this file is its scripts/mkdocs_hooks.py (a test builds the site
    from a copy of docs/ with a configuration file elsewhere)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _outside_target(src_uri, link):
    """The repository path a docs-relative link points at, when it leaves docs/."""
    if "://" in link or link.startswith(("#", "mailto:", "/")):
        return None
    path = link.split("#", 1)[0]
    if not path:
        return None
    inside = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), path))
    if not inside.startswith("../"):
        return None
    return posixpath.normpath(posixpath.join("docs", inside))


def _root_page_markdown(text):
    """A root-level page's links, made relative to the docs folder."""
    def fix(m):
        link = m.group(2)
        if "://" in link or link.startswith(("#", "mailto:")):
            return m.group(0)
        if link.startswith("docs/"):
            return m.group(1) + link[len("docs/"):] + m.group(3)
        return m.group(1) + "../" + link + m.group(3)
    return LINK.sub(fix, text)


def _source_page(root, repo_path):
    full = os.path.join(root, repo_path)
    if os.path.isdir(full):
        names = sorted(n for n in os.listdir(full) if os.path.isfile(os.path.join(full, n)))
        lines = [f"# `{repo_path.rstrip('/')}/`", ""]
        lines += [f"- [`{n}`]({n}.md)" for n in names]
        return "\n".join(lines) + "\n", [posixpath.join(repo_path, n) for n in names]
    with open(full, encoding="utf-8") as f:
        body = f.read()
    lang = LANG.get(os.path.splitext(repo_path)[1], "text")
    fence = "`" * max(4, max((len(r) for r in re.findall(r"`+", body)), default=0) + 1)
    text = (f"# `{repo_path}`\n\nThe file `{repo_path}` of the repository.\n\n"
            f"{fence}{lang}\n{body}{'' if body.endswith(chr(10)) else chr(10)}{fence}\n")
    return text, []


def _publish(root, repo_path, files, config):
    if repo_path in _published:
        return _published[repo_path]
    if repo_path in ROOT_PAGES:
        with open(os.path.join(root, repo_path), encoding="utf-8") as f:
            text = _root_page_markdown(f.read())
        uri = ROOT_PAGES[repo_path]
        _published[repo_path] = uri
        files.append(File.generated(config, uri, content=text))
        return uri
    if not os.path.exists(os.path.join(root, repo_path)):
        return None
    is_dir = os.path.isdir(os.path.join(root, repo_path))
    uri = f"source/{repo_path.rstrip('/')}/index.md" if is_dir else f"source/{repo_path}.md"
    _published[repo_path] = uri
    text, children = _source_page(root, repo_path)
    files.append(File.generated(config, uri, content=text))
    for child in children:
        _publish(root, child, files, config)
    return uri


def on_files(files, config):
    _published.clear()
    root = _root(config)
    for repo_path in ROOT_PAGES:
        _publish(root, repo_path, files, config)
    for f in list(files):
        if not f.src_uri.endswith(".md") or f.generated_by:
            continue
        with open(f.abs_src_path, encoding="utf-8") as fh:
            text = fh.read()
        for m in LINK.finditer(text):
            target = _outside_target(f.src_uri, m.group(2))
            if target:
                _publish(root, target, files, config)
    return files


def on_page_markdown(markdown, page, config, files):
    src = page.file.src_uri

    def fix(m):
        link = m.group(2)
        target = _outside_target(src, link)
        if not target or target not in _published:
            return m.group(0)
        anchor = "#" + link.split("#", 1)[1] if "#" in link else ""
        rel = posixpath.relpath(_published[target], posixpath.dirname(src) or ".")
        return m.group(1) + rel + anchor + m.group(3)
    return LINK.sub(fix, markdown)
