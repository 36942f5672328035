#!/usr/bin/env bash
# Fails if the shared library exports any symbol that does not start with hurray_.
set -euo pipefail
lib=${1:-build/libhurray.so}
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVW]$/ {print $3}' | grep -v -E '^hurray_' | grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' || true)
count=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDRBVW]$/ {print $3}' | grep -c -E '^hurray_' || true)
if [ -n "$bad" ]; then
  echo "exported symbols without the hurray_ prefix:"
  echo "$bad"
  exit 1
fi
echo "symbols: $count exported, all start with hurray_"
