#!/usr/bin/env bash
# Runs the whole C suite under valgrind memcheck (build-valgrind/); any leak or
# memory error fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
scripts/setup.sh
cmake -S . -B build-valgrind -G Ninja -DCMAKE_BUILD_TYPE=Debug -DHURRAY_BUILD_SHARED=OFF >/dev/null
cmake --build build-valgrind -j "$JOBS"
cd build-valgrind
ctest --output-on-failure -j "$JOBS" \
  --overwrite MemoryCheckCommand=$(command -v valgrind) \
  --overwrite "MemoryCheckCommandOptions=--error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes" \
  -T memcheck -E '^fuzz_' 
# ctest -T memcheck does not fail on findings by itself; the logs do.
if grep -l -E 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]|possibly lost: [1-9]' \
     Testing/Temporary/MemoryChecker.*.log >/dev/null 2>&1; then
  echo "valgrind found problems:"
  grep -l -E 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]|possibly lost: [1-9]' Testing/Temporary/MemoryChecker.*.log
  exit 1
fi
echo "valgrind: clean"
