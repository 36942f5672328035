#!/usr/bin/env bash
# Time-boxed fuzzing of one libFuzzer target:
#   scripts/fuzz.sh <target> <minutes>        e.g. scripts/fuzz.sh descriptor 10
# <target>: descriptor, file, stream, net_client, net_server (the C decoders; net_*: a peer's frames
# through the client's or the server's session and connection), or python-dlpack,
# python-native, python-array (the Python extension's import boundaries, with
# atheris: fuzz/python/fuzz_<name>.py), python-views, python-checksums (the records
# of shared tensors and data checksums through every loader), python-safetensors,
# python-gguf, python-npy (the input parsers of `hurray convert`, .npy and .npz in one).
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

case "$target" in
python-*)
  # The import boundaries of the Python extension (fuzz/python/fuzz_<name>.py), with
  # atheris: the extension and libhurray built with clang under ASan + UBSan and
  # libFuzzer coverage (build-fuzz-py/), run with atheris' ASan runtime preloaded.
  name=${target#python-}
  harness=fuzz/python/fuzz_$name.py
  [ -f "$harness" ] || { echo "fuzz: no $harness"; exit 2; }
  PY=${PYTHON:-python3}
  "$PY" -c "import atheris" 2>/dev/null || "$PY" -m pip install -q atheris
  B=build-fuzz-py
  CC=clang cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHURRAY_BUILD_PYTHON=ON -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_CLI=OFF \
    -DHURRAY_INSTALL=OFF -DHURRAY_WERROR=OFF -DCMAKE_C_FLAGS="$flags" \
    -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
  cmake --build "$B" -j "$JOBS" --target _hurray hurray_shared
  stage=$B/stage
  rm -rf "$stage"
  mkdir -p "$stage/hurray"
  cp python/hurray/*.py python/hurray/*.pyi python/hurray/py.typed "$stage/hurray/"
  cp -R python/hurray/_cli python/hurray/torch "$stage/hurray/"  # subpackages too (the hurray command, hurray.torch)
  cp "$B"/python/src/_hurray*.so "$stage/hurray/"
  seeds=fuzz/corpus/$target
  mkdir -p "$seeds"
  work=$(mktemp -d "$PWD/$B/corpus-$name-XXXXXX")
  cp "$seeds"/* "$work"/ 2>/dev/null || true
  runtime=$("$PY" -c 'import atheris; print(atheris.path())')/asan_with_fuzzer.so
  [ -f "$runtime" ] || runtime=$(dirname "$("$PY" -c 'import atheris; print(atheris.__file__)')")/../asan_with_fuzzer.so
  echo "fuzz: $target for $minutes minute(s), corpus $seeds ($(ls "$seeds" | wc -l) seeds)"
  status=0
  env LD_PRELOAD="$runtime" PYTHONPATH="$PWD/$stage" HURRAY_LIBRARY="$PWD/$B/libhurray.so" \
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$PY" "$harness" -max_total_time=$((minutes * 60)) -timeout=20 -rss_limit_mb=4096 \
    -max_len=${MAX_LEN:-512} -print_final_stats=1 -artifact_prefix="$PWD/$B/" "$work" || status=$?
  before=$(ls "$seeds" | wc -l)
  env LD_PRELOAD="$runtime" PYTHONPATH="$PWD/$stage" HURRAY_LIBRARY="$PWD/$B/libhurray.so" \
    ASAN_OPTIONS=detect_leaks=0 "$PY" "$harness" -merge=1 "$seeds" "$work" >/dev/null 2>&1 || true
  echo "fuzz: corpus $seeds: $before -> $(ls "$seeds" | wc -l) inputs"
  [ "$status" -eq 0 ] || echo "fuzz: $target FAILED (exit $status); reproducer in $B/crash-*"
  exit "$status"
  ;;
esac
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
