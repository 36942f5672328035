#!/usr/bin/env bash
# The main job: set up, build, and run the demo.
#   1. builds libhurray and hurray-inspect;
#   2. when the Python package is present: installs it and runs examples/demo.py, which
#      makes real tensors itself, saves them to a .hrry file, inspects the file,
#      streams the tensors through a pipe to a second process and reloads them;
#   3. decodes and prints, field by field, the project's own conformance vectors and
#      (when ../shared/golden is present) the golden corpus, the reference
#      implementation's conformance vectors.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

HURRAY_SETUP_TORCH=0 HURRAY_SETUP_JAX=0 scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS" >/dev/null
INSPECT=build/cli/hurray-inspect

if [ -f python/src/CMakeLists.txt ] && [ -f examples/demo.py ]; then
  scripts/python_tests.sh --install-only
  python3 examples/demo.py --inspect "$INSPECT"
fi

if [ -x "$INSPECT" ]; then
  # A few of the project's own vectors in full, then a one-line verdict for each.
  for f in tests/vectors/valid/row_major_f32_3x4.bin tests/vectors/valid/csr_f32_3x3.bin \
           tests/vectors/valid/quant_per_block_int4_f16.bin; do
    [ -e "$f" ] || continue
    printf '\n### %s\n' "$f"
    "$INSPECT" --preview=8 "$f" || true
  done
  printf '\n### every vector of tests/vectors (brief)\n'
  for f in tests/vectors/valid/*.bin; do
    printf '%-60s ' "$f"
    "$INSPECT" --brief "$f" | head -n 1
  done
  if [ -d ../shared/golden ]; then
    for f in ../shared/golden/descriptors/*.bin ../shared/golden/files/*.hrry; do
      printf '\n### %s\n' "$f"
      "$INSPECT" "$f"
    done
  else
    echo "(../shared/golden absent: reference corpus not shown)"
  fi
fi
