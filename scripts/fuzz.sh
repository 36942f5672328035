#!/usr/bin/env bash
# Time-boxed fuzzing of one libFuzzer target:
#   scripts/fuzz.sh <target> <minutes>        e.g. scripts/fuzz.sh descriptor 10
# Builds the target with clang (ASan + UBSan + libFuzzer coverage over the whole
# library) in build-fuzz/, runs it for <minutes> on a scratch corpus seeded
# from fuzz/corpus/<target>/, then merges the inputs that add coverage back
# into fuzz/corpus/<target>/ (commit them). Crashes are written to
# build-fuzz/crash-* and the script fails. Installs clang with apt if missing.
set -euo pipefail
target=${1:?usage: scripts/fuzz.sh <target> <minutes>}
minutes=${2:-10}
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}

if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: installing clang"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang >/dev/null
fi

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHURRAY_BUILD_FUZZ=ON -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_SHARED=OFF \
  -DHURRAY_BUILD_CLI=OFF -DHURRAY_INSTALL=OFF -DCMAKE_C_FLAGS="$flags" >/dev/null
cmake --build build-fuzz -j "$JOBS" --target "fuzz_$target"

seeds=fuzz/corpus/$target
# Longest input: 4096 bytes, except .hrry images (data sits at 4096-aligned
# offsets, so real files start around 8-16 KiB). MAX_LEN overrides.
default_len=4096
[ "$target" = file ] && default_len=32768
mkdir -p "$seeds"
work=$(mktemp -d "$PWD/build-fuzz/corpus-$target-XXXXXX")
cp "$seeds"/* "$work"/ 2>/dev/null || true
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "fuzz: $target for $minutes minute(s), corpus $seeds ($(ls "$seeds" | wc -l) seeds)"
status=0
"build-fuzz/fuzz/fuzz_$target" -max_total_time=$((minutes * 60)) -timeout=10 \
  -rss_limit_mb=2048 -max_len=${MAX_LEN:-$default_len} -print_final_stats=1 \
  -artifact_prefix="$PWD/build-fuzz/" "$work" || status=$?
before=$(ls "$seeds" | wc -l)
"build-fuzz/fuzz/fuzz_$target" -merge=1 "$seeds" "$work" >/dev/null 2>&1 || true
echo "fuzz: corpus $seeds: $before -> $(ls "$seeds" | wc -l) inputs"
if [ "$status" -ne 0 ]; then
  echo "fuzz: $target FAILED (exit $status); reproducer in build-fuzz/crash-* / leak-* / timeout-*"
fi
exit "$status"
