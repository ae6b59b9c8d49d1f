#!/usr/bin/env bash
# clang-format over every hand-written C++/CUDA file git tracks (the checked-in .clang-format).
#   tools/format.sh          rewrites the files in place
#   tools/format.sh --check  changes nothing; lists the files that differ and exits 1 if any does (CI)
# Generated files are left as their generator writes them: backends/cuda/matmul/wgmma_ops.cuh
# (tools/gen_wgmma_ops.py).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format: clang-format not found (apt-get install clang-format)"; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -v -x -e 'backends/cuda/matmul/wgmma_ops.cuh')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --style=file "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} of ${#files[@]} files differ from clang-format ($(clang-format --version | head -1)):"
    printf '  %s\n' "${bad[@]}"
    echo "format: run tools/format.sh and commit the result"
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  clang-format --style=file -i "${files[@]}"
fi
