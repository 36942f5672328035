#!/usr/bin/env bash
# Runs the Python suite (tests/python) on newer CPythons than the host has: CPython 3.13
# and its free-threaded build 3.13t in a Debian trixie chroot, CPython 3.14 and 3.14t in
# a Debian forky (testing) chroot, all native amd64, no emulation (docs/internals/packaging.md,
# "CPython 3.13, 3.14 and the free-threaded builds"). Not part of scripts/test.sh.
#
#   sudo scripts/cpython_chroot.sh [--python LIST] [--allow-gil] [--gil-off]
#                                  [--no-ctest] [--no-werror] [--keep] [--quick]
#                                  [--shell[=SUITE]] [--clean] [-- PYTEST_ARGS...]
#
# Needs: root (debootstrap, chroot, mounts); a Debian or Ubuntu host (apt-get installs
# debootstrap when missing); a Debian mirror and PyPI on the first run (numpy, scipy,
# ml_dtypes, pytest, hypothesis, scikit-build-core: binary wheels only); about 4.5 GB of
# disk for the two chroots (trixie 2.6 GB with 3.13t built, forky 1.7 GB).
#
# Interpreters (--python, comma-separated; default: all four, each where available):
#   3.13    Debian's python3.13 (trixie);
#   3.13t   free-threaded 3.13: Debian has no package of it (no python3.13-nogil in
#           trixie, forky, sid or experimental), so it is built here with
#           `configure --disable-gil` from the upstream tarball of Debian's python3.13
#           source package (`apt-get source`, the same CPython release as 3.13), into
#           /opt/cpython-3.13t in the trixie chroot;
#   3.14    Debian's python3.14 from the forky chroot (skipped, saying so, if that suite
#           has no python3.14);
#   3.14t   free-threaded 3.14, built the same way from Debian's python3.14 source
#           (reported N/A when the mirror serves no such source package, as the one
#           here does not; HURRAY_CPY_TARBALL_3_14=/path/Python-3.14.N.tar.xz, an
#           upstream source tarball on the host, is then built instead; likewise
#           HURRAY_CPY_TARBALL_3_13).
#
# Steps, each timed:
#   1. the chroots: debootstrap (variant buildd) with GCC, CMake, Ninja, cmocka, git and
#      what a CPython build needs; then apt-cache says which python3.X packages the
#      suite has, and those are installed; created once and reused;
#   2. the free-threaded interpreters, built once and reused;
#   3. the tree: the files git lists (tracked and untracked-not-ignored) copied to
#      /src/hurray in the chroot, ../shared/golden to /src/shared/golden, fresh each run
#      (the host tree is never written to);
#   4. the C library and CLI (/build/c; GCC of the suite, the project's -Werror set),
#      and ctest unless --no-ctest: libhurray.so is what the C-consumer tests of
#      tests/python load (HURRAY_LIBRARY), hurray-inspect what test_demo.py runs;
#   5. per interpreter: a venv /opt/venv-TAG with the PyPI packages, wheels only (a
#      compiled package without a wheel for that interpreter is left out, saying so:
#      its tests skip; a pure one falls back to its last release pip can install), then
#      `pip install --no-build-isolation --no-deps .` (build dir /build/hurray-TAG);
#      on a free-threaded interpreter, the GIL check: `import hurray` with PYTHON_GIL
#      unset must leave sys._is_gil_enabled() False; then
#      `python -m pytest tests/python -q -p no:cacheprovider` as an unprivileged user.
#
# --allow-gil: when the GIL check fails (the extension re-enables the GIL), say so and
#   run the suite anyway; without it that interpreter fails and its suite is not run.
# --gil-off: run the free-threaded suites with PYTHON_GIL=0 (the GIL kept off even if
#   the extension does not declare Py_MOD_GIL_NOT_USED: how it will run once it does).
#   The GIL check itself always runs with PYTHON_GIL unset.
# --no-ctest: build the C library, do not run ctest.
# --no-werror: build the C library and the extension with HURRAY_WERROR=OFF (for a
#   newer GCC than the project's warning set was written against: the warnings then
#   stay warnings, in the build logs).
# --keep: use the chroots, interpreters and venvs exactly as they are: no debootstrap,
#   no apt-get, no interpreter build, no PyPI (works offline once set up); an
#   interpreter not fully set up is reported and skipped. Without --keep the script
#   still reuses what is there and only installs what is missing.
# --quick: the inner loop once everything is built: --keep and --no-ctest, and pytest
#   runs only the tests that touch threads, pickling, buffers and allocation
#   ($QUICK_TESTS below: under 2 minutes per interpreter). Run it before resolving
#   an issue that changes the extension.
# --shell[=SUITE]: a shell in the chroot (trixie unless SUITE), the tree copied and
#   the mounts in place, instead of running the steps.
# --clean: unmount whatever is left mounted under the chroots and delete them; exit.
# Arguments after -- go to pytest.
#
# Time on a 2-core x86-64 host (nice 10, -j2): the first run about 7.5 minutes (trixie
# chroot 1.5, building 3.13t 3, forky chroot 1, each interpreter's venv, build and
# pytest 0.5 to 0.7); a later run with nothing to set up about 1.5 minutes.
#
# Environment: HURRAY_CPY_ROOT (the folder of the chroots, default
# /var/tmp/hurray-cpython), HURRAY_CPY_SUITE_313 (trixie), HURRAY_CPY_SUITE_314 (forky;
# sid works too), HURRAY_CPY_MIRROR (http://deb.debian.org/debian), PYTEST_TIMEOUT
# (seconds per interpreter's pytest run, 1800), JOBS (2), NICE (10).
# Logs (the CPython builds, each pytest run) are kept in the chroot under
# /var/log/hurray; the summary at the end names them.
# Exit status 0 only if every interpreter that was asked for and is available passed
# (an unavailable one, e.g. no python3.14 in the suite, is reported and not a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
JOBS=${JOBS:-2}
ME=cpython_chroot.sh

ALL_TAGS=(3.13 3.13t 3.14 3.14t)
PY_PACKAGES=(pytest hypothesis "scikit-build-core>=0.10")
PY_COMPILED=(numpy scipy ml_dtypes) # binary wheels only; one missing is left out
TEST_USER=hurray
LOGS=/var/log/hurray
SRC=/src/hurray
# what --quick runs: threads, pickling (and its bounded corruption tests), processes,
# buffers, DLPack and NumPy boundaries, views and the hardening cases
QUICK_TESTS=(tests/python/test_threads.py tests/python/test_pickle.py
  tests/python/test_shared_tensors.py tests/python/test_hardening.py
  tests/python/test_hardening_views.py tests/python/test_tensor.py tests/python/test_dlpack.py
  tests/python/test_array_struct.py tests/python/test_streams.py tests/python/test_fuzz_corpus.py)

stage_start=$SECONDS
stage() {
  printf '\n==== [%s] %s (%ds so far) ====\n' "${STAGE_WHERE:-host}" "$*" "$SECONDS"
  stage_start=$SECONDS
}
stage_done() { echo "---- done in $((SECONDS - stage_start))s"; }
die() {
  echo "$ME: $*" >&2
  exit 1
}
pyver() { echo "${1%t}"; }                # 3.13t -> 3.13
is_ft() { [ "${1%t}" != "$1" ]; }         # free-threaded tag?
venv_of() { echo "/opt/venv-$1"; }
base_python() { # the interpreter a tag's venv is made from
  if is_ft "$1"; then echo "/opt/cpython-$1/bin/python$1"; else echo "/usr/bin/python$1"; fi
}

# ---------------------------------------------------------------------------------
# Inside a chroot (the script runs itself there with --inside, and each step in a
# child process of its own, so that one failing step is reported and the next runs).
# ---------------------------------------------------------------------------------

# Builds free-threaded CPython VER (3.13) into /opt/cpython-VERt from the upstream
# tarball of Debian's pythonVER source package.
step_ft_build() {
  local ver=$1 tag=$1t prefix=/opt/cpython-$1t
  local py=$prefix/bin/python$tag log=$LOGS/cpython-$tag-build.log
  mkdir -p "$LOGS"
  if [ -x "$py" ] && "$py" -c 'import sys, sysconfig, ssl, ctypes, zlib, lzma, bz2, venv
sys.exit(0 if sysconfig.get_config_var("Py_GIL_DISABLED") else 1)' 2>/dev/null; then
    echo "$tag: reusing $py ($("$py" -VV | head -n 1))"
    return 0
  fi
  [ "$KEEP" = 1 ] && { echo "$tag: $py not built and --keep given"; return 3; }
  local work=/build/cpython-$tag orig given origs
  rm -rf "$work" "$prefix"
  mkdir -p "$work/tree"
  cd "$work"
  given=(/build/cpython-src-"$ver".tar.*)
  if [ -f "${given[0]}" ]; then
    orig=${given[0]}
    echo "$tag: building from $orig (given with HURRAY_CPY_TARBALL_${ver/./_})" | tee "$log"
  else
    # apt verifies the files against the suite's signed Sources index.
    if ! apt-get source -q --download-only "python$ver" >"$log" 2>&1; then
      grep -E '^(E|Err):' "$log" | head -n 3
      echo "$tag: no source of python$ver from the mirror (log $log)"
      return 4
    fi
    origs=("python${ver}_"*.orig.tar.*)
    orig=${origs[0]}
    echo "$tag: building from $orig (upstream CPython, Debian's patches not applied)"
  fi
  tar -xf "$orig" -C tree --strip-components=1
  cd tree
  {
    ./configure --prefix="$prefix" --disable-gil --with-ensurepip=install &&
      make -j "$JOBS" && make altinstall
  } >>"$log" 2>&1 || { tail -n 30 "$log"; echo "$tag: build failed, log $log"; return 1; }
  "$py" -VV
  "$py" -c 'import sys, sysconfig, ssl, ctypes, zlib, lzma, bz2
assert sysconfig.get_config_var("Py_GIL_DISABLED"), "not a free-threaded build"
assert not sys._is_gil_enabled(), "GIL enabled at start"' ||
    { echo "$tag: the built interpreter lacks a module or is not free-threaded"; return 1; }
  rm -rf "$work" # keep the installed interpreter only
}

# The C library, the CLI and (unless --no-ctest) the C suite, in /build/c.
step_c() {
  local ctest=$1 werror=$2
  echo "compiler: $(cc --version | head -n 1); cmake: $(cmake --version | head -n 1)"
  mkdir -p "$LOGS"
  { cmake -S "$SRC" -B /build/c -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHURRAY_WERROR="$werror" &&
    cmake --build /build/c -j "$JOBS"; } >"$LOGS/c-build.log" 2>&1 ||
    { tail -n 40 "$LOGS/c-build.log"; echo "C build failed (log $LOGS/c-build.log)"; return 1; }
  echo "built: /build/c/libhurray.so, /build/c/cli/hurray-inspect (log $LOGS/c-build.log)"
  if [ "$ctest" = 1 ]; then
    (cd /build/c && ctest --output-on-failure -j "$JOBS") >"$LOGS/ctest.log" 2>&1 ||
      { tail -n 60 "$LOGS/ctest.log"; echo "ctest failed (log $LOGS/ctest.log)"; return 1; }
    grep -E 'tests passed|tests failed' "$LOGS/ctest.log"
  fi
}

# One interpreter: venv, packages, hurray, GIL check, pytest. Writes one result line
# (status<TAB>detail) to $LOGS/result-TAG whatever happens.
step_interp() {
  local tag=$1 allow_gil=$2 gil_off=$3
  shift 3
  # res and phase are global: the EXIT trap reads them after this function returned.
  res=$LOGS/result-$tag phase="setup"
  local venv py base t0=$SECONDS times="" gil_note="" missing=() rc

  venv=$(venv_of "$tag")
  py=$venv/bin/python
  base=$(base_python "$tag")
  mkdir -p "$LOGS"
  rm -f "$res"
  record() { printf '%s\t%s\n' "$1" "$2" >"$res"; }
  # shellcheck disable=SC2064
  trap 'rc=$?; [ -s "$res" ] || record FAIL "$phase failed (exit $rc)"' EXIT

  [ -x "$base" ] || { record SKIP "no interpreter $base"; return 0; }
  stage "$tag: venv $venv ($("$base" -VV | head -n 1))"
  if ! "$py" -c 'import pytest, hypothesis, scikit_build_core' 2>/dev/null; then
    [ "$KEEP" = 1 ] && { record SKIP "venv $venv not set up and --keep given"; return 0; }
    rm -rf "$venv"
    "$base" -m venv "$venv"
    # Wheels only, never an sdist build (hypothesis after 6.155 has compiled wheels
    # and none for cp313t: pip then takes the last release it can install as is).
    "$py" -m pip install -q --only-binary=:all: "${PY_PACKAGES[@]}"
  fi
  local pkg mod
  for pkg in "${PY_COMPILED[@]}"; do
    mod=$pkg
    "$py" -c "import $mod" 2>/dev/null && continue
    if [ "$KEEP" = 1 ] ||
      ! "$py" -m pip install -q --only-binary=:all: "$pkg" >"$LOGS/pip-$tag-$pkg.log" 2>&1; then
      missing+=("$pkg")
      echo "$tag: no $pkg wheel installed (log $LOGS/pip-$tag-$pkg.log); its tests skip"
    fi
  done
  "$py" -m pip list 2>/dev/null |
    grep -Ei '^(numpy|scipy|ml.dtypes|pytest|hypothesis|scikit.build.core) ' | tr -s ' ' |
    paste -sd, - | sed 's/,/, /g'
  times+="venv+PyPI $((SECONDS - t0))s"
  stage_done

  phase="build"
  local t1=$SECONDS
  stage "$tag: pip install --no-build-isolation --no-deps . (build dir /build/hurray-$tag)"
  (cd "$SRC" && CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$py" -m pip install -q \
    --no-build-isolation --no-deps --force-reinstall \
    --config-settings=build-dir="/build/hurray-$tag" \
    --config-settings=cmake.define.HURRAY_WERROR="$WERROR" .) >"$LOGS/build-$tag.log" 2>&1 ||
    { tail -n 40 "$LOGS/build-$tag.log"; record FAIL "hurray build failed (log $LOGS/build-$tag.log)"; return 1; }
  (cd / && "$py" -c 'import hurray, sys; print("installed:", hurray.__file__, "ABI", sys.abiflags or "-")')
  times+=", build $((SECONDS - t1))s"
  stage_done

  local run_env=()
  if is_ft "$tag"; then
    phase="GIL check"
    stage "$tag: GIL check (import hurray with PYTHON_GIL unset)"
    local out
    out=$(cd / && env -u PYTHON_GIL "$py" -W default -c '
import sys
before = sys._is_gil_enabled()
import hurray
after = sys._is_gil_enabled()
print("GIL before import:", "enabled" if before else "disabled")
print("GIL after import hurray:", "enabled" if after else "disabled")
sys.exit(2 if after else (1 if before else 0))' 2>&1) && rc=0 || rc=$?
    echo "$out"
    case $rc in
      0) gil_note="GIL stays disabled"; echo "$tag: $gil_note" ;;
      2)
        gil_note="GIL re-enabled by hurray._hurray"
        echo "$tag: $gil_note (the module does not declare Py_mod_gil = Py_MOD_GIL_NOT_USED)"
        if [ "$allow_gil" = 0 ] && [ "$gil_off" = 0 ]; then
          stage_done
          record FAIL "$gil_note; suite not run (--allow-gil or --gil-off runs it)"
          return 1
        fi
        ;;
      *) record FAIL "GIL check could not run: $out"; return 1 ;;
    esac
    if [ "$gil_off" = 1 ]; then
      run_env=(PYTHON_GIL=0)
      (cd / && PYTHON_GIL=0 "$py" -c 'import sys, hurray
print("with PYTHON_GIL=0, GIL after import hurray:",
      "enabled" if sys._is_gil_enabled() else "disabled")
sys.exit(1 if sys._is_gil_enabled() else 0)') ||
        { record FAIL "the GIL is on after import hurray even with PYTHON_GIL=0"; return 1; }
      gil_note+="; suite run with PYTHON_GIL=0"
    else
      gil_note+="; suite run with PYTHON_GIL unset"
    fi
    stage_done
  fi

  phase="pytest"
  local t2=$SECONDS log=$LOGS/pytest-$tag.log lib="" targets=(tests/python)
  [ "${QUICK:-0}" = 1 ] && targets=("${QUICK_TESTS[@]}")
  stage "$tag: pytest ${targets[*]} (as user $TEST_USER${run_env[*]:+, ${run_env[*]}})"
  id "$TEST_USER" >/dev/null 2>&1 || useradd -m "$TEST_USER"
  [ -f /build/c/libhurray.so ] && lib=/build/c/libhurray.so ||
    echo "$tag: /build/c/libhurray.so absent: the C-consumer tests skip"
  set +e
  (cd "$SRC" && timeout "${PYTEST_TIMEOUT:-1800}" runuser -u "$TEST_USER" -- env \
    HOME="/home/$TEST_USER" HYPOTHESIS_STORAGE_DIRECTORY="/home/$TEST_USER/.hypothesis-$tag" \
    ${lib:+HURRAY_LIBRARY="$lib"} "${run_env[@]}" \
    "$py" -B -m pytest "${targets[@]}" -q -p no:cacheprovider -rfEs "$@") 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  times+=", pytest $((SECONDS - t2))s"
  local summary
  summary=$(grep -E '^=* ?[0-9]+ (passed|failed|skipped|errors?|deselected)|no tests ran' "$log" |
    tail -n 1 | sed -E 's/^=+ //; s/ =+$//')
  [ "$rc" = 124 ] && summary="timed out after ${PYTEST_TIMEOUT:-1800}s; $summary"
  local gil_warn
  gil_warn=$(grep -c "The global interpreter lock (GIL) has been enabled" "$log" || true)
  [ "$gil_warn" != 0 ] && gil_note+="; $gil_warn GIL RuntimeWarning line(s) in the log"
  local detail
  detail=$("$py" -c 'import platform; print(platform.python_version())')
  detail+=" | ${summary:-no pytest summary} | ${gil_note:--}"
  detail+=" | ${missing[*]:+no wheel: ${missing[*]}; }$times | $log"
  stage_done
  if [ "$rc" = 0 ]; then record PASS "$detail"; else record FAIL "$detail"; fi
  [ "$rc" = 0 ]
}

inside() {
  local suite=$1 tags=$2 allow_gil=$3 gil_off=$4 ctest=$5
  shift 5
  STAGE_WHERE=$suite
  export STAGE_WHERE
  cd "$SRC"
  [ -f ../shared/golden/manifest.json ] && echo "golden corpus: /src/shared/golden" ||
    echo "golden corpus: absent; its tests skip"
  local tag ok=1 rc ok_na
  for tag in $tags; do
    is_ft "$tag" || continue
    ok_na=0
    stage "$tag: free-threaded CPython $(pyver "$tag") (/opt/cpython-$tag)"
    mkdir -p "$LOGS"
    bash "$0" --step ft "$(pyver "$tag")" && rc=0 || rc=$?
    if [ "$rc" = 3 ]; then
      printf 'SKIP\t/opt/cpython-%s not built and --keep given\n' "$tag" >"$LOGS/result-$tag"
    elif [ "$rc" = 4 ]; then
      printf 'N/A\tDebian has no free-threaded python%s package, and the mirror gave no python%s source package to build it from (HURRAY_CPY_TARBALL_%s=Python-%s.x.tar.xz builds it from an upstream tarball)\n' \
        "$(pyver "$tag")" "$(pyver "$tag")" "$(pyver "$tag" | tr . _)" "$(pyver "$tag")" >"$LOGS/result-$tag"
      rc=0 ok_na=1
    elif [ "$rc" != 0 ]; then
      printf 'FAIL\tfree-threaded CPython build failed (log %s)\n' \
        "$LOGS/cpython-$tag-build.log" >"$LOGS/result-$tag"
    fi
    if [ "$rc" != 0 ]; then ok=0; fi
    if [ "$rc" != 0 ] || [ "$ok_na" = 1 ]; then tags=${tags//$tag/}; fi
    stage_done
  done
  stage "C library, CLI$([ "$ctest" = 1 ] && echo ", ctest") (/build/c)"
  if ! bash "$0" --step c "$ctest"; then
    echo "C build or ctest failed: the C-consumer tests of tests/python may skip"
    echo "FAIL" >"$LOGS/c-status"
    ok=0
  else
    echo "PASS" >"$LOGS/c-status"
  fi
  stage_done
  for tag in $tags; do
    bash "$0" --step interp "$tag" "$allow_gil" "$gil_off" "$@" || ok=0
  done
  [ "$ok" = 1 ]
}

case "${1:-}" in
  --inside)
    shift
    inside "$@"
    exit $?
    ;;
  --step)
    # shellcheck disable=SC1091
    STAGE_WHERE=$(. /etc/os-release && echo "${VERSION_CODENAME:-chroot}")
    KEEP=${KEEP:-0} WERROR=${WERROR:-ON}
    case "$2" in
      ft) step_ft_build "$3" ;;
      c) step_c "$3" "$WERROR" ;;
      interp) shift 2; step_interp "$@" ;;
    esac
    exit $?
    ;;
esac

# ---------------------------------------------------------------------------------
# On the host.
# ---------------------------------------------------------------------------------
tags_arg="" allow_gil=0 gil_off=0 ctest=1 keep=0 shell="" clean=0 werror=ON quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --python) tags_arg=${2:?--python needs a list}; shift ;;
    --python=*) tags_arg=${1#*=} ;;
    --allow-gil) allow_gil=1 ;;
    --gil-off) gil_off=1 ;;
    --no-ctest) ctest=0 ;;
    --no-werror) werror=OFF ;;
    --keep) keep=1 ;;
    --quick) keep=1 ctest=0 quick=1 ;;
    --shell) shell=${HURRAY_CPY_SUITE_313:-trixie} ;;
    --shell=*) shell=${1#*=} ;;
    --clean) clean=1 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
pytest_args=("$@")

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
BASE=${HURRAY_CPY_ROOT:-/var/tmp/hurray-cpython}
SUITE_313=${HURRAY_CPY_SUITE_313:-trixie}
SUITE_314=${HURRAY_CPY_SUITE_314:-forky}
MIRROR=${HURRAY_CPY_MIRROR:-http://deb.debian.org/debian}
case "$BASE/" in "$REPO"/*) die "HURRAY_CPY_ROOT must be outside the repository" ;; esac
mkdir -p "$BASE"
exec 9>"$BASE/.lock"
flock -n 9 || die "another run holds $BASE/.lock"

suite_of() { case "$1" in 3.13*) echo "$SUITE_313" ;; 3.14*) echo "$SUITE_314" ;; esac; }

unmount_under() { # every mount at or below $1, deepest first
  local m
  findmnt -rn -o TARGET | awk -v r="$1" '$0 == r || index($0, r "/") == 1' | sort -r |
    while read -r m; do umount -l "$m" || echo "could not unmount $m" >&2; done
}

if [ "$clean" = 1 ]; then
  stage "clean: $BASE"
  for root in "$BASE"/*/; do
    [ -d "$root" ] || continue
    root=${root%/}
    unmount_under "$root"
    [ -z "$(findmnt -rn -o TARGET | awk -v r="$root" 'index($0, r "/") == 1')" ] ||
      die "still mounted under $root; not deleting"
    rm -rf --one-file-system "$root"
    echo "removed $root"
  done
  stage_done
  exit 0
fi

if [ -n "$tags_arg" ]; then
  read -r -a tags <<<"${tags_arg//,/ }"
  for t in "${tags[@]}"; do
    [[ " ${ALL_TAGS[*]} " == *" $t "* ]] || die "unknown interpreter $t (${ALL_TAGS[*]})"
  done
else
  tags=("${ALL_TAGS[@]}")
fi
if [ -n "$shell" ]; then
  suites=("$shell")
else
  suites=()
  for t in "${tags[@]}"; do
    s=$(suite_of "$t")
    [[ " ${suites[*]} " == *" $s "* ]] || suites+=("$s")
  done
fi
echo "chroots: $BASE/{$(IFS=,; echo "${suites[*]}")}; interpreters: ${tags[*]}"
echo "options: allow-gil=$allow_gil gil-off=$gil_off ctest=$ctest keep=$keep werror=$werror"

# Packages every chroot gets, and what a CPython build from source needs.
DEBS=build-essential,cmake,ninja-build,libcmocka-dev,git,ca-certificates,xz-utils,pkgconf
DEBS=$DEBS,libssl-dev,zlib1g-dev,libffi-dev,libbz2-dev,liblzma-dev,libsqlite3-dev,uuid-dev

mounted=()
# shellcheck disable=SC2329 # run by the EXIT trap
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R -l "${mounted[$i]}" || echo "could not unmount ${mounted[$i]}" >&2
  done
}
trap cleanup EXIT

stage "host tools: debootstrap"
if [ "$keep" = 0 ] && ! command -v debootstrap >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
fi
command -v debootstrap >/dev/null && debootstrap --version || echo "no debootstrap (--keep)"
stage_done

chroot_env() { # chroot_env ROOT CMD...: a clean environment in the chroot
  local root=$1
  shift
  nice -n "${NICE:-10}" chroot "$root" /usr/bin/env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 TERM="${TERM:-dumb}" JOBS="$JOBS" KEEP="$keep" WERROR="$werror" QUICK="$quick" \
    DEBIAN_FRONTEND=noninteractive PIP_CERT=/etc/ssl/certs/hurray-host-ca.crt \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 \
    ${PYTEST_TIMEOUT:+PYTEST_TIMEOUT="$PYTEST_TIMEOUT"} "$@"
}
apt_update() { # apt-get update; a mirror serving an expired Release (a frozen
  # snapshot of testing/unstable) is accepted, saying so
  local root=$1 out
  if ! out=$(chroot_env "$root" apt-get update -q 2>&1) || grep -q 'is expired' <<<"$out"; then
    if grep -q 'is expired' <<<"$out"; then
      echo "the mirror's Release file for this suite has expired: accepting it" \
        "(Acquire::Check-Valid-Until false in /etc/apt/apt.conf.d/99hurray-valid-until)"
      echo 'Acquire::Check-Valid-Until "false";' \
        >"$root/etc/apt/apt.conf.d/99hurray-valid-until"
      chroot_env "$root" apt-get update -q >/dev/null
    else
      echo "$out" >&2
      return 1
    fi
  fi
}
bind() { # bind ROOT SRC DEST
  local dest=$1$3
  if mountpoint -q "$dest"; then
    mounted+=("$dest") # left by a killed run (the lock says no other run is on)
    return 0
  fi
  mkdir -p "$dest"
  if [ "$2" = proc ]; then mount -t proc proc "$dest"; else
    mount --rbind "$2" "$dest"
    mount --make-rslave "$dest"
  fi
  mounted+=("$dest")
}

# Sets up the chroot of SUITE; prints the interpreters of TAGS it can run to fd 3.
setup_chroot() {
  local suite=$1 root=$BASE/$1 wanted
  stage "chroot $root ($suite, amd64)"
  if [ "$keep" = 1 ]; then
    [ -e "$root/etc/hurray-debs" ] || { echo "$root: not set up, and --keep given"; stage_done; return 1; }
  else
    if [ ! -e "$root/etc/debian_version" ] || [ -e "$root/debootstrap" ]; then
      if [ -e "$root" ] && [ -n "$(ls -A "$root" 2>/dev/null)" ]; then
        die "$root exists but is not a finished chroot; run $ME --clean"
      fi
      local script=/usr/share/debootstrap/scripts/$suite
      [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid # testing is sid-like
      echo "debootstrap $suite ($(basename "$script") script) from $MIRROR"
      debootstrap --variant=buildd --include="$DEBS" "$suite" "$root" "$MIRROR" "$script" \
        >"$BASE/debootstrap-$suite.log" 2>&1 ||
        { tail -n 20 "$BASE/debootstrap-$suite.log"; die "debootstrap $suite failed"; }
    fi
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # deb-src of the same suite, for `apt-get source` (the free-threaded builds).
    grep -qs '^deb-src' "$root/etc/apt/sources.list.d/hurray-src.list" ||
      echo "deb-src $MIRROR $suite main" >"$root/etc/apt/sources.list.d/hurray-src.list"
    # Which CPythons does the suite have?
    wanted=$DEBS
    local v
    for v in 3.13 3.14; do
      [ "$(suite_of "$v")" = "$suite" ] || continue
      if [ "$(cat "$root/etc/hurray-debs" 2>/dev/null)" = "" ] ||
        ! grep -q "python$v-dev" "$root/etc/hurray-debs"; then
        apt_update "$root"
      fi
      local cand
      cand=$(chroot_env "$root" apt-cache policy "python$v" | awk '/Candidate:/ {print $2}')
      if [ -n "$cand" ] && [ "$cand" != "(none)" ]; then
        echo "Debian $suite has python$v $cand"
        wanted=$wanted,python$v,python$v-dev,python$v-venv
      else
        echo "Debian $suite has no python$v package: $v and ${v}t are skipped" \
          "(HURRAY_CPY_SUITE_314=sid to try unstable)"
      fi
      for p in "python$v-nogil" "python${v}t"; do
        chroot_env "$root" apt-cache show "$p" >/dev/null 2>&1 &&
          echo "note: Debian $suite has a package $p now; this script still builds ${v}t"
      done
    done
    if [ "$(cat "$root/etc/hurray-debs" 2>/dev/null)" != "$wanted" ]; then
      apt_update "$root"
      chroot_env "$root" apt-get install -y -q ${wanted//,/ } >"$BASE/apt-$suite.log" 2>&1 ||
        { tail -n 20 "$BASE/apt-$suite.log"; die "apt-get install in $suite failed"; }
      printf '%s' "$wanted" >"$root/etc/hurray-debs"
    fi
    # The host's CA bundle (it may hold a proxy's CA the chroot's bundle lacks), for pip.
    local host_ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
    [ -f "$host_ca" ] || host_ca=$root/etc/ssl/certs/ca-certificates.crt
    cp "$host_ca" "$root/etc/ssl/certs/hurray-host-ca.crt"
  fi
  # shellcheck disable=SC1091
  echo "$(. "$root/etc/os-release" && echo "$PRETTY_NAME"), glibc" \
    "$(chroot_env "$root" ldd --version | head -n 1 | awk '{print $NF}')"
  stage_done

  stage "tree -> $root$SRC, golden corpus -> $root/src/shared/golden"
  rm -rf "$root$SRC" "$root/src/shared"
  mkdir -p "$root$SRC" "$root/src/shared"
  (cd "$REPO" && git ls-files -z -co --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xmf - -C "$root$SRC") # -m: fresh mtimes, so a kept build dir rebuilds what changed
  ln -s /build/c "$root$SRC/build" # test_demo.py looks for build/cli/hurray-inspect
  local v var tb
  for v in 3.13 3.14; do
    var=HURRAY_CPY_TARBALL_${v/./_}
    tb=${!var:-}
    rm -f "$root/build/cpython-src-$v".tar.*
    [ -n "$tb" ] || continue
    [ -f "$tb" ] && [[ "$tb" == *.tar.* ]] || die "$var=$tb: not a .tar.* file"
    mkdir -p "$root/build"
    cp "$tb" "$root/build/cpython-src-$v.tar.${tb##*.tar.}"
    echo "$var: $tb (used if /opt/cpython-${v}t is not built yet)"
  done
  local golden=$REPO/../shared/golden
  if [ -f "$golden/manifest.json" ]; then
    cp -a "$golden" "$root/src/shared/golden"
    echo "golden corpus: $(find "$root/src/shared/golden" -type f | wc -l) files"
  else
    echo "golden corpus: $golden absent; its tests skip"
  fi
  echo "tree: $(find "$root$SRC" -type f | wc -l) files ($(cd "$REPO" && git describe --always --dirty))"
  stage_done
  bind "$root" proc /proc
  bind "$root" /dev /dev
}

overall=0
for suite in "${suites[@]}"; do
  root=$BASE/$suite
  if ! setup_chroot "$suite"; then
    overall=1
    continue
  fi
  if [ -n "$shell" ]; then
    chroot_env "$root" /bin/bash -c "cd $SRC && exec bash -i"
    exit 0
  fi
  run=()
  for t in "${tags[@]}"; do
    [ "$(suite_of "$t")" = "$suite" ] || continue
    rm -f "$root$LOGS/result-$t"
    if [ -x "$root/usr/bin/python$(pyver "$t")" ]; then run+=("$t"); else
      mkdir -p "$root$LOGS"
      printf 'N/A\tDebian %s has no python%s\n' "$suite" "$(pyver "$t")" >"$root$LOGS/result-$t"
    fi
  done
  [ ${#run[@]} -gt 0 ] || continue
  chroot_env "$root" /bin/bash "$SRC/scripts/$ME" --inside "$suite" "${run[*]}" \
    "$allow_gil" "$gil_off" "$ctest" "${pytest_args[@]}" || overall=1
done

printf '\n==== summary (%ds) ====\n' "$SECONDS"
for suite in "${suites[@]}"; do
  c=$(cat "$BASE/$suite$LOGS/c-status" 2>/dev/null || echo "not run")
  echo "$suite: C build$([ "$ctest" = 1 ] && echo " + ctest"): $c"
done
for t in "${tags[@]}"; do
  r=$BASE/$(suite_of "$t")$LOGS/result-$t
  if [ -s "$r" ]; then
    IFS=$'\t' read -r st detail <"$r"
    printf '%-6s %-5s %s\n' "$t" "$st" "$detail"
    [ "$st" = PASS ] || [ "$st" = N/A ] || overall=1
  else
    printf '%-6s %-5s %s\n' "$t" "-" "not run"
    overall=1
  fi
done
echo "(paths of logs are inside the chroot: prefix $BASE/SUITE)"
exit $overall
