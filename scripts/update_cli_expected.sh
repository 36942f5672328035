#!/usr/bin/env bash
# Regenerates tests/cli/expected/ from the current hurray-inspect (build/).
# Review the diff before committing: every change in it is a change in what
# users see.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" --target hurray-inspect -j "${JOBS:-2}"
bash tests/cli/check.sh "$BUILD/cli/hurray-inspect" "$PWD" "$PWD/../shared/golden" --update
git status --short tests/cli/expected | head -n 40
