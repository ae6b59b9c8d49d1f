#!/usr/bin/env bash
# Installs what tandem needs (Debian/Ubuntu packages; the CUDA Toolkit is used from /usr/local/cuda
# when present) and builds what the quick start needs into ./build. Usage: tools/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages="cmake ninja-build g++ libtbb-dev libeigen3-dev doctest-dev libbenchmark-dev libopenmpi-dev openmpi-bin
  python3-dev python3-numpy python3-pytest python3-hypothesis pybind11-dev libdlpack-dev"
missing=""
for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing$missing"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

cmake --preset release "$@"   # CMakePresets.json: Ninja, Release, ./build
# First what the quick start needs: the library, the CLI and the Python module, and the CUDA backend's module
# where the NVIDIA driver sees a GPU. The rest (the CUDA module on a machine without a GPU, the tests, the
# benchmarks) is built by the test command (ctest's first test, build_all) or `cmake --build build`.
targets="tandem_quickstart"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  targets="$targets tandem_gpu_modules"
fi
cmake --build --preset release --target $targets
echo "setup: built the library, the CLI (./build/tools/tandem) and the Python module" \
  "(PYTHONPATH=build/python /usr/bin/python3 -c 'import tandem') into ./build; the tests and benchmarks are built by" \
  "'ctest --test-dir build' or 'cmake --build build'"
