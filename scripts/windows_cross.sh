#!/usr/bin/env bash
# Cross-builds libhurray and its C test suite for Windows x86_64 with MinGW-w64 GCC and
# runs the suite under Wine (ctest, with Wine as CMAKE_CROSSCOMPILING_EMULATOR).
#
#   scripts/windows_cross.sh [--no-tests] [ctest arguments...]
#
# Not part of scripts/test.sh: it needs MinGW-w64 and Wine, and takes a few minutes.
# Debian/Ubuntu:
#   apt-get install gcc-mingw-w64-x86-64-posix cmake ninja-build
#   apt-get install --no-install-recommends wine64
# cmocka has no MinGW package: the script builds it from a source tree, found in this
# order: $CMOCKA_SRC; build-win/deps/cmocka-src; a clone of https://git.cryptomilk.org/
# projects/cmocka.git (tag cmocka-1.1.7) when the network allows. A prefix with an
# already built MinGW cmocka (include/cmocka.h, lib/libcmocka.a) can be given as
# $CMOCKA_MINGW_PREFIX instead.
#
# Everything goes to build-win/ (the library, tests, cmocka, and a Wine prefix in
# build-win/wineprefix unless $WINEPREFIX is set). The test hurray-inspect expected
# output (cli_expected_output) is left out: it is a bash script that runs the program
# directly and compares text, which a Windows program under Wine (CRLF line ends)
# cannot match; the CLI itself is built.
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
CMOCKA_PREFIX=${CMOCKA_MINGW_PREFIX:-$OUT/deps/cmocka}
if [ ! -f "$CMOCKA_PREFIX/lib/libcmocka.a" ]; then
  SRC=${CMOCKA_SRC:-$OUT/deps/cmocka-src}
  if [ ! -f "$SRC/CMakeLists.txt" ]; then
    echo "windows_cross: no cmocka source in $SRC; cloning cmocka-1.1.7" >&2
    git clone --depth 1 --branch cmocka-1.1.7 https://git.cryptomilk.org/projects/cmocka.git "$SRC" || {
      echo "windows_cross: cannot get cmocka: set CMOCKA_SRC to a cmocka 1.1.x source tree" >&2
      exit 2
    }
  fi
  cmake -S "$SRC" -B "$OUT/deps/cmocka-build" -G Ninja \
        -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-mingw64.cmake" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$CMOCKA_PREFIX" \
        -DBUILD_SHARED_LIBS=OFF -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF \
        >/dev/null
  cmake --build "$OUT/deps/cmocka-build" -j "$JOBS" >/dev/null
  cmake --install "$OUT/deps/cmocka-build" >/dev/null
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
cd "$OUT"
LOG=$OUT/windows_ctest.log
rc=0
ctest -V -j "$JOBS" -E '^cli_expected_output$' "$@" >"$LOG" 2>&1 || rc=$?
# Tests that cannot run on Windows say so: cmocka prints "[  SKIPPED ]" with the reason.
awk '/\[  SKIPPED \] on this platform: / { sub(/.*on this platform: /, ""); why = $0; next }
     why != "" && /\[  SKIPPED \] test_/ { sub(/.*\[  SKIPPED \] /, "");
       print "windows_cross: skipped " $0 ": " why; why = "" }' "$LOG" | sort -u
grep -E '^[0-9]+/[0-9]+ Test +#' "$LOG" | grep -v ' Passed ' || true
grep -E '% tests passed' "$LOG" || true
echo "windows_cross: full output in $LOG"
exit "$rc"
