#!/usr/bin/env bash
# Python benchmarks (never part of scripts/test.sh).
#
#   scripts/bench.sh [pytest args]
#       builds the extension in Release (build-bench-py/), stages it beside the
#       package's Python files and runs the pytest-benchmark suite bench/python/
#       against that build (the installed package, if any, is not used).
#       Results are saved under .benchmarks/ (pytest-benchmark --benchmark-autosave)
#       and compared with bench/baseline.json: a benchmark more than 10% slower
#       than its baseline is reported as a warning, never a failure.
#   scripts/bench.sh --compare [compare.py args]
#       the comparison runner (bench/compare.py): hurray beside safetensors,
#       numpy.save/load, torch.save/load and raw I/O; prints a table of ratios and
#       writes docs/reference/benchmarks.md.
#   scripts/bench.sh --update-baseline [pytest args]
#       runs the suite and stores its figures as bench/baseline.json.
#   scripts/bench.sh --installed ...
#       uses the hurray package already installed instead of building one.
#
# Every figure the suite reports is also given as a ratio against a peer
# measured in the same run; nothing asserts an absolute time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
JOBS=${JOBS:-2}

installed=0
if [ "${1:-}" = "--installed" ]; then
  installed=1
  shift
fi
mode=suite
case "${1:-}" in
  --compare) mode=compare; shift ;;
  --update-baseline) mode=baseline; shift ;;
esac

if [ "$installed" = 0 ]; then
  B=build-bench-py
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHURRAY_BUILD_PYTHON=ON -DHURRAY_BUILD_TESTS=OFF -DHURRAY_BUILD_CLI=OFF \
    -DHURRAY_BUILD_SHARED=OFF -DHURRAY_INSTALL=OFF \
    -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
  cmake --build "$B" -j "$JOBS" --target _hurray >/dev/null
  stage=$B/stage
  rm -rf "$stage"
  mkdir -p "$stage/hurray"
  cp python/hurray/*.py python/hurray/*.pyi python/hurray/py.typed "$stage/hurray/"
  cp "$B"/python/src/_hurray*.so "$stage/hurray/"
  export PYTHONPATH="$PWD/$stage${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -c 'import hurray, sys; print("bench: hurray from", hurray.__file__, file=sys.stderr)'

case "$mode" in
  compare)
    # the peers (torch comes from scripts/setup.sh); each missing one is reported
    for pkg in safetensors ml_dtypes; do
      "$PY" -c "import $pkg" >/dev/null 2>&1 || "$PY" -m pip install -q "$pkg" ||
        echo "bench: $pkg unavailable; its rows will say so" >&2
    done
    exec "$PY" bench/compare.py "$@"
    ;;
  baseline)
    json=$(mktemp)
    trap 'rm -f "$json"' EXIT
    "$PY" -m pytest bench/python -p no:cacheprovider --benchmark-only \
      --benchmark-json="$json" "$@"
    "$PY" bench/python/baseline.py store "$json" bench/baseline.json
    ;;
  suite)
    json=$(mktemp)
    trap 'rm -f "$json"' EXIT
    "$PY" -m pytest bench/python -p no:cacheprovider --benchmark-only \
      --benchmark-json="$json" "$@"
    "$PY" bench/python/baseline.py check "$json" bench/baseline.json
    ;;
esac
