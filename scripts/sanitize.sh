#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UBSan in build-asan/ and runs the C suite.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHURRAY_SANITIZE=ON \
      -DHURRAY_BUILD_SHARED=OFF >/dev/null
cmake --build build-asan -j "$JOBS"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-asan && ctest --output-on-failure -j "$JOBS")

# The Python extension under the same sanitizers (scripts/python_tests.sh --asan).
if [ -f python/src/CMakeLists.txt ] && [ -d tests/python ] && [ "${HURRAY_SANITIZE_PYTHON:-1}" = 1 ]; then
  scripts/python_tests.sh --asan -q
fi
