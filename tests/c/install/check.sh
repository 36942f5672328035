#!/usr/bin/env bash
# Installs the build tree BUILD into a scratch prefix, then builds and runs a
# consumer against it three ways: find_package(hurray) with hurray::hurray
# (shared) and hurray::hurray_static, and pkg-config (relocated with
# --define-prefix; the program runs without LD_LIBRARY_PATH: the .pc's rpath). Run by ctest (install_consumer).
#
#   tests/c/install/check.sh CMAKE BUILD SOURCE_DIR CC
set -euo pipefail
cmake=$1 build=$2 here=$3 cc=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hurray-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
"$cmake" -S "$here" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_COMPILER="$cc" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
"$cmake" --build "$tmp/consumer" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
libdir=$(dirname "$(find "$tmp/prefix" -name 'libhurray.so*' -o -name 'libhurray.dylib' | head -n1)")
LD_LIBRARY_PATH="$libdir" DYLD_LIBRARY_PATH="$libdir" "$tmp/consumer/consumer_shared"
"$tmp/consumer/consumer_static"
if ldd "$tmp/consumer/consumer_static" 2>/dev/null | grep -q libhurray; then
  echo "consumer_static links libhurray dynamically" >&2
  exit 1
fi
if command -v pkg-config > /dev/null; then
  pc=$(dirname "$(find "$tmp/prefix" -name hurray.pc | head -n1)")
  flags=$(PKG_CONFIG_PATH="$pc" pkg-config --define-prefix --cflags --libs hurray)
  # shellcheck disable=SC2086
  "$cc" "$here/consumer.c" $flags -o "$tmp/consumer_pc"
  # no LD_LIBRARY_PATH: the .pc's rpath finds the library under the custom prefix
  env -u LD_LIBRARY_PATH "$tmp/consumer_pc"
else
  echo "pkg-config not found: the pkg-config consumer is not built"
fi
echo "install_consumer: find_package (shared, static) and pkg-config consumers passed"
