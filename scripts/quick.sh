#!/usr/bin/env bash
# A contributor's inner loop (docs/internals/python-internals.md § Contributing: the inner loop):
# rebuilds what changed and runs the fast tests, in under a minute once built.
#
#   scripts/quick.sh [--slow] [pytest args]
#
#   1. builds the C library, its tests, hurray-inspect and the extension
#      incrementally in build-quick/ (configured once, RelWithDebInfo,
#      -DHURRAY_BUILD_PYTHON=ON; ninja recompiles only what changed and
#      reconfigures by itself when a CMakeLists.txt changes);
#   2. stages the package without installing it: build-quick/stage/hurray/ links
#      every file of python/hurray and the built _hurray*.so, and goes first on
#      PYTHONPATH (an edit to a .py file needs no rebuild; nothing is pip-installed);
#   3. the Python tests but those marked slow: pytest -m "not slow" -x -q, with
#      the pytest args given here appended (scripts/quick.sh -k views; a -m given
#      here replaces "not slow", pytest keeping the last); args naming test files
#      or folders replace tests/python (scripts/quick.sh tests/python/test_slice.py
#      imports only what that file needs);
#   4. beside them, in the background: the cheap checks, doc references
#      (scripts/check_doc_refs.py) and the layers of the extension
#      (scripts/check_layers.py build-quick), then the C tests but those labelled
#      slow (ctest -LE slow); their output is shown after pytest's.
#
#   --slow   runs the slow tests too (ctest and pytest whole, still in build-quick/).
#
# scripts/test.sh stays the whole truth (every test, sanitizers, docs site,
# packaging): run it before pushing. Environment: PYTHON (python3), JOBS (nproc),
# HURRAY_QUICK_BUILD (build-quick; another interpreter in PYTHON needs a build
# folder of its own, the extension being built for the one configured first).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
B=${HURRAY_QUICK_BUILD:-build-quick}

slow=0
if [ "${1:-}" = "--slow" ]; then
  slow=1
  shift
fi

t0=$SECONDS
step() { printf '\n== %s   [%ss so far]\n' "$*" "$((SECONDS - t0))"; }

step "build ($B/)"
if [ ! -f "$B/build.ninja" ]; then
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHURRAY_BUILD_PYTHON=ON \
    -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
fi
# ninja's "no work to do" and per-file lines are noise here; a failure prints in full
if ! log=$(cmake --build "$B" -j "$JOBS" 2>&1); then
  printf '%s\n' "$log"
  exit 1
fi
printf '%s\n' "$log" | grep -E 'warning|Linking' | tail -n 20 || true

# The package, staged: a link per entry of python/hurray (so new files appear and
# deleted ones vanish on the next run) and one to the extension just built.
stage=$B/stage
mkdir -p "$stage/hurray" "$stage/bin"
find "$stage/hurray" -maxdepth 1 -type l ! -exec test -e {} \; -delete
rm -f "$stage"/hurray/_hurray*.so
for f in python/hurray/*; do
  [ "${f##*/}" = __pycache__ ] && continue
  ln -sfn "$ROOT/$f" "$stage/hurray/${f##*/}"
done
so=$(ls -t "$B"/python/src/_hurray*.so | head -n 1)
ln -sfn "$ROOT/$so" "$stage/hurray/${so##*/}"
# the `hurray` command, as the installed package's console script runs it
printf '#!/bin/sh\nexec "%s" -m hurray "$@"\n' "$(command -v "$PY")" >"$stage/bin/hurray"
chmod +x "$stage/bin/hurray"
export PYTHONPATH="$ROOT/$stage${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$ROOT/$stage/bin:$ROOT/$B/cli:$PATH"
export HURRAY_INSPECT="$ROOT/$B/cli/hurray-inspect"   # tests/python/conftest.py
export HURRAY_LIBRARY="$ROOT/$B/libhurray.so"          # tests/python/capi.py
"$PY" - "$ROOT/$stage" <<'EOF'
import sys, hurray
here = sys.argv[1] + "/hurray/"
assert hurray.__file__.startswith(here) and hurray._hurray.__file__.startswith(here), \
    f"hurray comes from {hurray.__file__}, not from the stage {here}"
EOF

# The cheap checks and the C tests run in the background, beside pytest (which
# spends its first seconds importing NumPy, PyTorch and JAX on one core); their
# output is kept in $B/quick-c.log and shown after pytest's.
label=(-LE slow)
[ "$slow" = 1 ] && label=()
c_side() {
  "$PY" scripts/check_doc_refs.py
  "$PY" scripts/check_layers.py "$B"
  echo "ctest ${label[*]}:"
  ctest --test-dir "$B" -j "$JOBS" --output-on-failure "${label[@]}"
}
c_side >"$B/quick-c.log" 2>&1 &
c_pid=$!

marker=(-m "not slow" -x)
shown="-m 'not slow' -x"
if [ "$slow" = 1 ]; then
  marker=()
  shown="(slow included)"
fi
# tests/python, unless the args name test files or folders themselves
where=(tests/python)
for a in "$@"; do
  case $a in -*) ;; *) [ -e "${a%%::*}" ] && where=() ;; esac
done
step "Python tests (pytest ${where[*]:-} $shown -q $*), beside the C side"
py_rc=0
"$PY" -m pytest "${where[@]}" "${marker[@]}" -q "$@" || py_rc=$?

step "doc references, layers of the extension, C tests (ctest ${label[*]})"
c_rc=0
wait "$c_pid" || c_rc=$?
if [ "$c_rc" = 0 ]; then
  grep -E '^check_doc_refs|layering|tests passed|Total Test time' "$B/quick-c.log"
else
  cat "$B/quick-c.log"
fi
if [ "$py_rc" != 0 ] || [ "$c_rc" != 0 ]; then
  printf '\nquick.sh: FAILED (pytest exit %s, C side exit %s) after %ss\n' \
    "$py_rc" "$c_rc" "$((SECONDS - t0))"
  exit 1
fi
printf '\nquick.sh: all passed in %ss\n' "$((SECONDS - t0))"
