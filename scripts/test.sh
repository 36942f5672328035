#!/usr/bin/env bash
# The one command that sets everything up and runs every test:
#   the C suite (ctest), the sanitizer suite (ASan + UBSan), the exported
#   symbol, API-docs, doc-reference and src/ call-cycle checks, the Python
#   suite, the docs site (built strictly, every guide example run, a browser
#   screenshot) and the packaging test (wheel, sdist, clean-venv install); the golden corpus (the
#   reference implementation's conformance vectors) runs in both languages
#   whenever ../shared/golden is present. Every test runs, those marked or
#   labelled slow included: scripts/quick.sh (the inner loop) leaves them out,
#   this script is the whole truth.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

scripts/setup.sh

banner() { printf '\n==== %s ====\n' "$*"; }

if [ -d ../shared/golden ]; then
  echo "golden corpus: $(cd ../shared/golden && pwd)"
else
  echo "golden corpus: ../shared/golden is ABSENT here; its tests will report that and skip"
fi

banner "C suite (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"
(cd build && ctest --output-on-failure -j "$JOBS")

banner "exported symbols"
python3 scripts/check_doc_refs.py --self-test; python3 scripts/check_doc_refs.py  # docs and comments resolve inside the checkout (docs/internals/decisions.md)
scripts/check_symbols.sh build/libhurray.so
python3 scripts/check_api_docs.py --lib build/libhurray.so  # every public function documented (docs/reference/c-api/)
python3 scripts/check_src_cycles.py --self-test; python3 scripts/check_src_cycles.py  # no circle among the files of src/ (docs/internals/extending.md)

banner "sanitizer suite (build-asan/, ASan + UBSan)"
scripts/sanitize.sh

if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1 && [ -f python/src/CMakeLists.txt ]; then
  banner "Python suite"
  scripts/python_tests.sh

  banner "stubs against the runtime (mypy.stubtest)"
  python3 -m mypy.stubtest hurray --mypy-config-file tests/stubtest/mypy.ini \
    --allowlist tests/stubtest/allowlist.txt

  banner "layers of the extension (no upward call, no cycle)"
  python3 scripts/check_layers.py --self-test
  python3 scripts/check_layers.py build/python
fi

if [ -f mkdocs.yml ] && [ -d tests/docs ]; then
  # After the Python suite: the API reference is generated from the installed
  # package, the guide's code runs against it and its C examples against build/.
  banner "docs site (scripts/build_docs.sh, tests/docs)"
  HURRAY_SETUP_DOCS=1 HURRAY_SETUP_PYTHON=0 scripts/setup.sh
  scripts/build_docs.sh --quiet
  HURRAY_SITE_DIR="$ROOT/site" HURRAY_DOCS_REQUIRE_C=1 HURRAY_BUILD_DIR="$ROOT/build" \
    python3 -m pytest tests/docs -q -p no:cacheprovider
fi

if [ -x tests/packaging/test_wheel.sh ]; then
  banner "packaging (wheel + manylinux repair, sdist, clean-venv install)"
  tests/packaging/test_wheel.sh
fi

banner "all tests passed"
