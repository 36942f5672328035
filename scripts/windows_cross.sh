#!/usr/bin/env bash
# Cross-builds libhurray and its C test suite for Windows x86_64 with MinGW-w64 GCC and
# runs the suite under Wine (ctest, with Wine as CMAKE_CROSSCOMPILING_EMULATOR).
#
#   scripts/windows_cross.sh [--no-tests] [ctest arguments...]
#
# Not part of scripts/test.sh: it needs MinGW-w64 and Wine, and takes a few minutes.
# Debian/Ubuntu:
#   apt-get install gcc-mingw-w64-x86-64-posix cmake ninja-build
#   apt-get install g++-mingw-w64-x86-64-posix   # optional: adds the C++ header check
#   apt-get install --no-install-recommends wine64
# cmocka has no MinGW package: the script builds it from Debian's source package (see
# "cmocka for MinGW" below for where the source comes from, and the variables that
# override it).
#
# Everything goes to build-win/ (the library, tests, cmocka, and a Wine prefix in
# build-win/wineprefix unless $WINEPREFIX is set). ctest runs every test but
# cli_expected_output (a bash script that runs hurray-inspect directly); the script then
# runs that check itself, through Wine (see the end of this file).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build-win
JOBS=${JOBS:-2}
RUN_TESTS=1
if [ "${1:-}" = "--no-tests" ]; then
  RUN_TESTS=0
  shift
fi

CC_MINGW=$(command -v x86_64-w64-mingw32-gcc-posix || command -v x86_64-w64-mingw32-gcc || true)
if [ -z "$CC_MINGW" ]; then
  echo "windows_cross: x86_64-w64-mingw32-gcc not found (apt-get install gcc-mingw-w64-x86-64-posix)" >&2
  exit 2
fi
WINE=${WINE:-$(command -v wine64 || command -v wine || ls /usr/lib/wine/wine64 2>/dev/null || true)}
if [ "$RUN_TESTS" = 1 ] && [ -z "$WINE" ]; then
  echo "windows_cross: Wine not found (apt-get install --no-install-recommends wine64)," \
       "or run with --no-tests to build only" >&2
  exit 2
fi

# ---- cmocka for MinGW ------------------------------------------------------------------
# cmocka has no MinGW package, so it is built here from source with the same toolchain, as a
# static library (build-win/deps/cmocka/{include/cmocka.h,lib/libcmocka.a}). The source
# comes from Debian, not from upstream's git (git.cryptomilk.org): the Debian source package
# is on every Debian mirror, and any cmocka 1.1.x works. In this order:
#   1. $CMOCKA_MINGW_PREFIX: a prefix with an already built MinGW cmocka (nothing is built);
#   2. $CMOCKA_SRC, else build-win/deps/cmocka-src: a cmocka source tree;
#   3. `apt-get source --download-only cmocka` (needs a deb-src entry in the APT sources,
#      e.g. /etc/apt/sources.list.d/debian-src.sources with "Types: deb-src" and the same
#      URIs/Suites/Components as the deb entry, then apt-get update); APT checks the files
#      against the signed Sources index; the upstream tarball (*.orig.tar.*) is unpacked;
#   4. otherwise the upstream tarball of Debian 12's source package is fetched from the
#      Debian pool ($CMOCKA_DEB_POOL) and checked against its SHA-256 (from the signed
#      cmocka_1.1.5-2.1.dsc).
CMOCKA_DEB_POOL=${CMOCKA_DEB_POOL:-http://deb.debian.org/debian/pool/main/c/cmocka}
CMOCKA_ORIG=cmocka_1.1.5.orig.tar.xz
CMOCKA_ORIG_SHA256=f0ccd8242d55e2fd74b16ba518359151f6f8383ff8aef4976e48393f77bba8b6

fetch_cmocka_source() { # $1: where the source tree goes
  local dl=$OUT/deps/cmocka-download tarball=""
  rm -rf "$dl"
  mkdir -p "$dl"
  if command -v apt-get >/dev/null &&
     (cd "$dl" && apt-get source --download-only cmocka) >"$dl/apt.log" 2>&1; then
    tarball=$(ls "$dl"/cmocka_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | head -n 1 || true)
    [ -n "$tarball" ] && echo "windows_cross: cmocka source from apt-get source: $(basename "$tarball")" >&2
  fi
  if [ -z "$tarball" ]; then
    echo "windows_cross: apt-get source cmocka unavailable (see $dl/apt.log);" \
         "fetching $CMOCKA_DEB_POOL/$CMOCKA_ORIG" >&2
    tarball=$dl/$CMOCKA_ORIG
    if command -v curl >/dev/null; then
      curl -fsSL -o "$tarball" "$CMOCKA_DEB_POOL/$CMOCKA_ORIG" || tarball=""
    else
      wget -q -O "$tarball" "$CMOCKA_DEB_POOL/$CMOCKA_ORIG" || tarball=""
    fi
    [ -n "$tarball" ] || {
      echo "windows_cross: cannot get the cmocka source: set CMOCKA_SRC to a cmocka 1.1.x" \
           "source tree" >&2
      exit 2
    }
    echo "$CMOCKA_ORIG_SHA256  $tarball" | sha256sum -c --quiet - || {
      echo "windows_cross: $CMOCKA_ORIG does not match its SHA-256" >&2
      exit 2
    }
  fi
  tar -xf "$tarball" -C "$dl"
  local tree
  tree=$(find "$dl" -mindepth 2 -maxdepth 2 -name CMakeLists.txt -printf '%h\n' | head -n 1)
  [ -n "$tree" ] || { echo "windows_cross: no source tree in $tarball" >&2; exit 2; }
  rm -rf "$1"
  mkdir -p "$(dirname "$1")"
  mv "$tree" "$1"
}

CMOCKA_PREFIX=${CMOCKA_MINGW_PREFIX:-$OUT/deps/cmocka}
if [ ! -f "$CMOCKA_PREFIX/lib/libcmocka.a" ]; then
  SRC=${CMOCKA_SRC:-$OUT/deps/cmocka-src}
  [ -f "$SRC/CMakeLists.txt" ] || fetch_cmocka_source "$SRC"
  # 1.1.5 builds a DLL and, with WITH_STATIC_LIB, libcmocka-static.a; 1.1.7 builds one
  # library, static with BUILD_SHARED_LIBS=OFF. The static archive is what is kept.
  cmake -S "$SRC" -B "$OUT/deps/cmocka-build" -G Ninja \
        -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-mingw64.cmake" \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DWITH_STATIC_LIB=ON \
        -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF >/dev/null
  cmake --build "$OUT/deps/cmocka-build" -j "$JOBS" >/dev/null
  lib=$(find "$OUT/deps/cmocka-build" \( -name libcmocka-static.a -o -name libcmocka.a \) | head -n 1)
  [ -n "$lib" ] || { echo "windows_cross: the cmocka build made no static library" >&2; exit 2; }
  mkdir -p "$CMOCKA_PREFIX/include" "$CMOCKA_PREFIX/lib"
  cp "$SRC/include/cmocka.h" "$CMOCKA_PREFIX/include/"
  cp "$lib" "$CMOCKA_PREFIX/lib/libcmocka.a"
fi

# ---- libhurray, the CLI, the C tests -----------------------------------------------------
cmake -S . -B "$OUT" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-mingw64.cmake" \
      -DCMAKE_BUILD_TYPE=Debug -DHURRAY_MINGW_SYSROOT_EXTRA="$CMOCKA_PREFIX" \
      ${WINE:+-DCMAKE_CROSSCOMPILING_EMULATOR="$WINE"} >/dev/null
cmake --build "$OUT" -j "$JOBS"
echo "windows_cross: built $(ls "$OUT"/libhurray.dll "$OUT"/libhurray.a | tr '\n' ' ')"
[ "$RUN_TESTS" = 1 ] || exit 0

# ---- run under Wine ---------------------------------------------------------------------
export WINEPREFIX=${WINEPREFIX:-$OUT/wineprefix}
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=} # no Mono/Gecko prompts
if [ ! -d "$WINEPREFIX" ]; then
  echo "windows_cross: creating the Wine prefix $WINEPREFIX (once)" >&2
  "$WINE" wineboot --init >/dev/null 2>&1 || true
fi
# One Wine session for the whole run: without a persistent wineserver, every test program
# starts and tears down a session of its own (wineboot, services), seconds each.
WINESERVER=${WINESERVER:-$(command -v wineserver64 || command -v wineserver ||
  ls "$(dirname "$WINE")"/wineserver64 /usr/lib/wine/wineserver64 /usr/lib/wine/wineserver \
     2>/dev/null | head -n 1 || true)}
if [ -n "$WINESERVER" ]; then
  # -p fails while a server runs (the one that just created the prefix): wait for it to end.
  if ! "$WINESERVER" -p 2>/dev/null; then
    timeout 60 "$WINESERVER" -w || true
    "$WINESERVER" -p 2>/dev/null ||
      echo "windows_cross: a wineserver already runs for $WINEPREFIX; no persistent one" >&2
  fi
  trap '"$WINESERVER" -k >/dev/null 2>&1 || true' EXIT
fi
# Start the session (wineboot, services) before the tests: test programs launched in parallel
# while Wine 8 is still starting it have hung or crashed now and then.
"$WINE" cmd /c ver >/dev/null 2>&1 || true
cd "$OUT"
LOG=$OUT/windows_ctest.log
rc=0
ctest -V -j "$JOBS" -E '^cli_expected_output$' "$@" >"$LOG" 2>&1 || rc=$?
# Tests that cannot run on Windows say so: tu_skip prints the reason, then cmocka
# "[  SKIPPED ] test_name" (ctest -V prefixes each line with the test's number).
awk 'match($0, /^[0-9]+: /) { n = substr($0, 1, RLENGTH) }
     /\[  SKIPPED \] on this platform: / { sub(/.*on this platform: /, ""); why[n] = $0; next }
     (n in why) && /\[  SKIPPED \] test_/ { sub(/.*\[  SKIPPED \] /, "");
       print "windows_cross: skipped " $0 ": " why[n]; delete why[n] }' "$LOG" | sort -u
grep -E '^[0-9]+/[0-9]+ Test +#' "$LOG" | grep -v ' Passed ' || true
grep -E '% tests passed' "$LOG" || true
echo "windows_cross: full output in $LOG"

# ---- hurray-inspect's expected outputs (tests/cli/check.sh) ------------------------------
# ctest's cli_expected_output runs the program directly, which a Windows program cannot be:
# here a wrapper runs it under Wine and drops the CRs that the C runtime's text-mode
# stdout and stderr add before each LF, the one intended difference from the expected text.
INSPECT=$OUT/hurray-inspect-wine.sh
cat >"$INSPECT" <<EOF
#!/usr/bin/env bash
"$WINE" "$OUT/cli/hurray-inspect.exe" "\$@" 2>&1 | tr -d '\r'
exit "\${PIPESTATUS[0]}"
EOF
chmod +x "$INSPECT"
CLI_LOG=$OUT/windows_cli.log
if bash "$ROOT/tests/cli/check.sh" "$INSPECT" "$ROOT" "$ROOT/../shared/golden" >"$CLI_LOG" 2>&1; then
  echo "windows_cross: cli_expected_output: $(tail -n 1 "$CLI_LOG")"
else
  rc=1
  echo "windows_cross: cli_expected_output FAILED: $(tail -n 1 "$CLI_LOG") (see $CLI_LOG)"
fi
exit "$rc"
