#!/usr/bin/env bash
# Builds the library and the file, stream and network tests with ThreadSanitizer in build-tsan/ and
# runs them (ctest: test_file_*, test_stream_* and test_net_*). Fails on any data race TSan reports.
#
#   scripts/tsan.sh [ctest arguments...]
#
# Static library only (TSan wants every threaded object instrumented). Kernels with a large
# mmap randomisation (vm.mmap_rnd_bits > 28, the default of recent Linux) break the TSan
# runtime of GCC 12 ("unexpected memory mapping"): the tests then run under `setarch -R`
# (no address randomisation for that process), as TSan's own documentation suggests.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
CC=${CC:-cc}
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER="$CC" \
      -DCMAKE_C_FLAGS="-fsanitize=thread -O1 -g -fno-omit-frame-pointer" \
      -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
      -DHURRAY_BUILD_SHARED=OFF -DHURRAY_BUILD_CLI=OFF >/dev/null
targets=()
for f in tests/c/test_file_*.c tests/c/test_stream_*.c tests/c/test_net_*.c; do
  targets+=("$(basename "$f" .c)")
done
cmake --build build-tsan -j "$JOBS" --target "${targets[@]}"
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:exitcode=66}
WRAP=()
if ! build-tsan/tests/c/test_stream_basic >/dev/null 2>&1; then
  if command -v setarch >/dev/null && setarch "$(uname -m)" -R build-tsan/tests/c/test_stream_basic >/dev/null 2>&1; then
    WRAP=(setarch "$(uname -m)" -R)
    echo "tsan: running under setarch -R (address randomisation off for the tests)"
  fi
fi
if [ ${#WRAP[@]} -gt 0 ]; then
  # ctest runs each test through the wrapper.
  (cd build-tsan && "${WRAP[@]}" ctest --output-on-failure -j "$JOBS" -R '^test_(file|stream|net)_' "$@")
else
  (cd build-tsan && ctest --output-on-failure -j "$JOBS" -R '^test_(file|stream|net)_' "$@")
fi
