#!/usr/bin/env bash
# Installs what tandem needs (Debian/Ubuntu packages; the CUDA Toolkit is used from /usr/local/cuda
# when present) and builds it into ./build. Usage: tools/setup.sh [extra cmake arguments]
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
cmake --build --preset release
echo "setup: built ./build (tandem CLI: ./build/tools/tandem; Python: PYTHONPATH=build/python /usr/bin/python3 -c 'import tandem')"
