#!/usr/bin/env bash
# Builds the documentation site (MkDocs + Material, mkdocs.yml) into site/,
# which git ignores, in strict mode: a broken link or anchor, a page missing
# from the navigation or a warning of the API reference fails the build.
#
#   scripts/build_docs.sh [mkdocs build options]     (SITE_DIR=... to build elsewhere)
#
# Needs the docs packages (mkdocs-material, mkdocstrings[python]; scripts/setup.sh
# installs them) and the hurray package importable: the Python API reference is
# generated from its stubs and from the docstrings of the built extension
# (scripts/python_tests.sh --install-only installs it from this tree).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c "import mkdocs, material, mkdocstrings_handlers.python" 2>/dev/null; then
  echo "build_docs: mkdocs-material and mkdocstrings[python] are not installed (scripts/setup.sh installs them)" >&2
  exit 2
fi
if ! "$PY" -c "import hurray._hurray" 2>/dev/null; then
  echo "build_docs: the hurray package is not importable (scripts/python_tests.sh --install-only)" >&2
  exit 2
fi
export NO_MKDOCS_2_WARNING=1  # Material's banner about MkDocs 2, printed on every build
exec "$PY" -m mkdocs build --strict --site-dir "${SITE_DIR:-site}" "$@"
