#!/usr/bin/env bash
# Builds the hurray Python package and runs the Python suite (tests/python).
#
#   scripts/python_tests.sh [pytest args]
#       pip-installs the package from this tree (scikit-build-core, the same
#       build `pip install .` does) with a persistent build directory
#       (build/python), so a rebuild only recompiles what changed.
#   scripts/python_tests.sh --install-only
#       only builds and installs the package (used by scripts/demo.sh).
#   scripts/python_tests.sh --asan [pytest args]
#       builds the extension with AddressSanitizer + UBSan in build-asan-py/,
#       stages it beside the package's Python files and runs the suite from
#       there with libasan preloaded (leak detection off: CPython itself
#       keeps memory until exit).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

mode=install
if [ "${1:-}" = "--asan" ]; then
  mode=asan
  shift
elif [ "${1:-}" = "--install-only" ]; then
  mode=install-only
  shift
fi

if [ "$mode" != asan ]; then
  CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$PY" -m pip install --no-build-isolation --no-deps -q \
    --config-settings=build-dir=build/python .
  [ "$mode" = install-only ] && exit 0
  exec "$PY" -m pytest tests/python "$@"
fi

B=build-asan-py
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHURRAY_SANITIZE=ON \
  -DHURRAY_BUILD_PYTHON=ON -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_CLI=OFF \
  -DHURRAY_BUILD_SHARED=OFF -DHURRAY_INSTALL=OFF \
  -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
cmake --build "$B" -j "$JOBS" --target _hurray
stage=$B/stage
rm -rf "$stage"
mkdir -p "$stage/hurray"
cp python/hurray/*.py python/hurray/*.pyi python/hurray/py.typed "$stage/hurray/"
for d in python/hurray/*/; do  # every subpackage too (the hurray command, hurray.torch, the viewer)
  [ -f "$d/__init__.py" ] && cp -R "${d%/}" "$stage/hurray/"
done
cp "$B"/python/src/_hurray*.so "$stage/hurray/"
libasan=$(${CC:-cc} -print-file-name=libasan.so)
export LD_PRELOAD="$libasan${LD_PRELOAD:+:$LD_PRELOAD}"
export ASAN_OPTIONS=${ASAN_OPTIONS_PY:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export PYTHONPATH="$PWD/$stage${PYTHONPATH:+:$PYTHONPATH}"
export HURRAY_EXPECT_ASAN=1
exec "$PY" -m pytest tests/python -p no:cacheprovider "$@"
